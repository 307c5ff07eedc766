"""The programs the kernel backend executes as root, and where they are found.

Never by ``$PATH`` and never from the current folder: a user who can write to a folder
early in root's ``$PATH`` (``~/.local/bin``, a pyenv shim folder) or to the folder where
root runs tcpfair would otherwise run code as root.

- System tools (``ip``, ``tc``, ``sysctl``, ``ethtool``, ``iperf3``, ``cat``) are looked up
  once, in ``SYSTEM_DIRS`` only, and run by absolute path (``absolute``); their paths and
  versions go into ``meta["kernel"]["tools"]`` and ``tcpfair doctor``.
- Our own programs, the emulator ``tcpfair-linkem`` and the short-flow generator
  ``tcpfair-traffic``, come from ``TCPFAIR_LINKEM`` / ``TCPFAIR_TRAFFIC``, from the build
  folder of the checkout the package was imported from (``python/tcpfair`` →
  ``../../target/release``: in a checkout a fresh ``cargo build`` is what a developer
  means) or from the installed package (``tcpfair/_bin/``, where the wheel carries them;
  docs/packaging.md); the same rules for both (``find_native``). As root, a binary that
  someone other than root could replace is refused.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SYSTEM_DIRS = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")
#: the only ``PATH`` the processes we start see
SYSTEM_PATH = ":".join(SYSTEM_DIRS)
#: every program the backend runs besides the emulator, and how to ask for its version
TOOLS: dict[str, list[str]] = {
    "ip": ["-V"],
    "tc": ["-V"],
    "sysctl": ["--version"],
    "ethtool": ["--version"],
    "iperf3": ["--version"],
    "cat": ["--version"],
}
LINKEM = "tcpfair-linkem"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # python/tcpfair (or site-packages/tcpfair)
#: where a wheel carries the project's own programs (pyproject.toml's [tool.tcpfair] binaries)
PACKAGE_BIN = PACKAGE_DIR / "_bin"


class ToolError(RuntimeError):
    """A program the backend would run is missing, unsafe, or named without a path."""


def find_tool(name: str, dirs: tuple[str, ...] = SYSTEM_DIRS) -> str | None:
    """First ``dir/name`` that is an executable file, in ``dirs`` order; None if none."""
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


@lru_cache(maxsize=1)
def tool_paths() -> dict[str, str | None]:
    """Every tool's absolute path (None when missing); looked up once per process."""
    return {name: find_tool(name) for name in TOOLS}


def tool(name: str) -> str:
    """Absolute path of a system tool, or ``ToolError`` saying where it was looked for."""
    if name not in TOOLS:
        raise ToolError(f"refusing to run {name!r}: not one of the tools tcpfair uses")
    path = tool_paths()[name]
    if path is None:
        raise ToolError(f"'{name}' not found in {', '.join(SYSTEM_DIRS)}")
    return path


def tool_version(path: str | None, name: str) -> str | None:
    """First line of ``<tool> --version`` (``-V`` for iproute2), None if it cannot tell."""
    if path is None:
        return None
    try:
        p = subprocess.run(
            [path, *TOOLS.get(name, ["--version"])],
            capture_output=True,
            text=True,
            timeout=10,
            env=child_env(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (p.stdout or p.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


def child_env() -> dict[str, str]:
    """The environment of every process the backend starts: ours, with ``PATH`` limited to
    the system folders (so nothing a tool starts by name comes from elsewhere either)."""
    return {**os.environ, "PATH": SYSTEM_PATH}


def _is_linkem(word: str) -> bool:
    return os.path.isabs(word) and os.path.basename(word) == LINKEM


def absolute(argv: list[str]) -> list[str]:
    """``argv`` with every program in it given by absolute path.

    Programs sit at the start, after ``ip netns exec NS`` and after ``tcpfair-linkem
    exec``; a bare tool name there becomes its system path, and any other bare name is
    refused (``ToolError``). Arguments are left as they are.
    """
    out = list(argv)
    pos = 0
    while pos < len(out):
        prog = out[pos]
        if not os.path.isabs(prog):
            out[pos] = prog = tool(prog)
        if os.path.basename(prog) == "ip" and out[pos + 1 : pos + 3] == ["netns", "exec"]:
            pos += 4  # ip netns exec NS PROG …
        elif _is_linkem(prog) and out[pos + 1 : pos + 2] == ["exec"]:
            pos += 2  # tcpfair-linkem exec PROG …
        else:
            break
    return out


# ------------------------------------------------------------------ our own native programs
TRAFFIC = "tcpfair-traffic"
#: each native program of ours: the variable naming it, and what it is (for messages)
NATIVE: dict[str, tuple[str, str]] = {
    LINKEM: ("TCPFAIR_LINKEM", "an emulator"),
    TRAFFIC: ("TCPFAIR_TRAFFIC", "a traffic generator"),
}
#: where a native program can come from, in words
LINKEM_SOURCES = {
    "TCPFAIR_LINKEM": "set by TCPFAIR_LINKEM",
    "TCPFAIR_TRAFFIC": "set by TCPFAIR_TRAFFIC",
    "package": "shipped inside the tcpfair package",
    "build folder": "the checkout's build folder",
    "none": "not found",
}


@dataclass(frozen=True)
class Native:
    """Where one of our programs was found (``path`` None: nowhere) and why it may not be
    used."""

    path: str | None
    source: str  # the variable's name, "package", "build folder" or "none"
    problem: str | None = None


#: the emulator's record (the name older code and tests use)
Linkem = Native


def native_candidates(name: str, explicit: str | None) -> list[tuple[Path, str, Path]]:
    """(binary, source, top folder of the ownership check), in the order tried."""
    if explicit:
        p = Path(explicit)
        return [(p, NATIVE[name][0], Path(p.anchor or "/"))]
    # a checkout's build folder first (rebuilt by cargo; a wheel's staged copy there would
    # be stale); an installed package has no build folder, so its ``_bin`` copy is used
    build = PACKAGE_DIR.parents[1] / "target"
    return [
        (build / "release" / name, "build folder", build),
        (PACKAGE_BIN / name, "package", PACKAGE_DIR),
    ]


def linkem_candidates(explicit: str | None) -> list[tuple[Path, str, Path]]:
    return native_candidates(LINKEM, explicit)


def find_native(name: str, explicit: str | None = None, euid: int | None = None) -> Native:
    """The program ``name`` (``tcpfair-linkem`` or ``tcpfair-traffic``) to run.
    ``explicit`` defaults to its variable (``$TCPFAIR_LINKEM`` / ``$TCPFAIR_TRAFFIC``); an
    explicit path that does not work is a problem (never a silent fall-back to another
    binary)."""
    var, what = NATIVE[name]
    if explicit is None:
        explicit = os.environ.get(var) or None
    uid = os.geteuid() if euid is None else euid
    if explicit is not None and not os.path.isabs(explicit):
        return Native(
            None,
            var,
            f"{var}={explicit!r}: must be an absolute path (a relative one would "
            "depend on the current folder)",
        )
    for path, source, top in native_candidates(name, explicit):
        where = f"{var}={str(path)!r}" if explicit else f"{path} (the {source})"
        if not path.exists():
            if explicit:
                return Native(None, source, f"{where}: no such file")
            continue
        if not path.is_file() or not os.access(path, os.X_OK):
            return Native(None, source, f"{where}: not an executable file")
        problem = unsafe_for_root(path, top) if uid == 0 else None
        if problem:
            return Native(
                None,
                source,
                f"{where}: {problem}; as root tcpfair runs only {what} that nobody but "
                "root can change (chown root, chmod go-w)",
            )
        return Native(str(path.resolve()), source)
    return Native(None, "none")


def find_linkem(explicit: str | None = None, euid: int | None = None) -> Native:
    """The emulator to run (``find_native`` for ``tcpfair-linkem``)."""
    return find_native(LINKEM, explicit, euid)


def find_traffic(explicit: str | None = None, euid: int | None = None) -> Native:
    """The short-flow traffic generator to run (``find_native`` for ``tcpfair-traffic``)."""
    return find_native(TRAFFIC, explicit, euid)


def unsafe_for_root(path: Path, top: Path) -> str | None:
    """Why someone other than root could replace ``path`` (after resolving symbolic links):
    the file or a folder from its own up to ``top`` is not owned by root, or is writable by
    group or others (a sticky folder such as /tmp is fine: others cannot rename what they do
    not own in it). None if it is safe."""
    real = path.resolve()
    top_real = top.resolve()
    chain = [real, *real.parents]
    if top_real in chain:
        chain = chain[: chain.index(top_real) + 1]
    for i, p in enumerate(chain):
        st = p.stat()
        kind = "the file" if i == 0 else "its folder"
        if st.st_uid != 0:
            return f"{kind} {p} is owned by uid {st.st_uid}, not root"
        writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and not (i > 0 and st.st_mode & stat.S_ISVTX):
            return (
                f"{kind} {p} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
            )
    return None
