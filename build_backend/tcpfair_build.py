"""tcpfair's PEP 517 build backend: maturin's, plus the programs a wheel carries.

maturin builds the native module only. Every wheel of tcpfair also carries the cargo
binaries named in ``pyproject.toml``'s ``[tool.tcpfair] binaries`` (the kernel backend's
emulator ``tcpfair-linkem``) in ``tcpfair/_bin/``, and the sdist carries their crates, so
``pip install .``, ``pip install tcpfair-X.tar.gz`` and ``./dev wheel`` all give a package
with the emulator. docs/packaging.md.

The native module is built with profile-guided optimisation: it is first built instrumented
(``-Cprofile-generate``), runs the training configurations of
``crates/sim/pgo/`` (benches/pgo_training.py writes them), and the release build uses the
merged profile (``-Cprofile-use``): ``pgo_rustflags``. Without ``llvm-profdata`` (rustup's
``llvm-tools`` or Debian's ``llvm-N`` of rustc's LLVM), or when a step fails (a rustc built
without the profiler runtime), the build says so and goes on without it; the results are the
same either way, only the speed differs (docs/performance.md). ``TCPFAIR_PGO=off`` builds
plain, ``TCPFAIR_PGO=require`` fails instead.

Also a command for ``./dev``, which calls maturin itself (for its progress lines and the
portable manylinux tag): ``python build_backend/tcpfair_build.py stage | unstage | sdist DIR
| pgo FILE``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import maturin
from maturin import (  # noqa: F401  (the hooks maturin implements unchanged)
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parents[1]
STAGED = ROOT / "python" / "tcpfair" / "_bin"
#: the simulator's profile-guided-optimisation training runs (benches/pgo_training.py)
TRAINING = ROOT / "crates" / "sim" / "pgo"


def binaries() -> list[str]:
    """``[tool.tcpfair] binaries``: the cargo binaries a wheel carries."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["tcpfair"]["binaries"])


def _crate_dir(name: str) -> str:
    """``crates/<dir>`` of the workspace package ``name`` (its Cargo.toml says the name)."""
    for manifest in sorted((ROOT / "crates").glob("*/Cargo.toml")):
        if tomllib.loads(manifest.read_text())["package"]["name"] == name:
            return manifest.parent.relative_to(ROOT).as_posix()
    raise SystemExit(f"[tool.tcpfair] binaries: no crate under crates/ is named {name!r}")


def stage() -> None:
    """``cargo build --release`` the binaries and copy them into ``python/tcpfair/_bin``."""
    names = binaries()
    packages = [f"--package={n}" for n in names]
    subprocess.run(["cargo", "build", "--release", "--locked", *packages], cwd=ROOT, check=True)
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version=1", "--no-deps", "--locked"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    target = Path(json.loads(meta.stdout)["target_directory"])
    unstage()
    STAGED.mkdir(parents=True)
    for n in names:
        shutil.copy2(target / "release" / n, STAGED / n)
        (STAGED / n).chmod(0o755)


def unstage() -> None:
    """Remove the staged copies (in a checkout the backend runs target/release's)."""
    shutil.rmtree(STAGED, ignore_errors=True)


@contextmanager
def _staged() -> Iterator[None]:
    stage()
    try:
        yield
    finally:
        unstage()


def _say(message: str) -> None:
    print(f"tcpfair_build: {message}", file=sys.stderr, flush=True)


def _rustc_facts() -> tuple[Path, str, str]:
    """rustc's sysroot, host triple and LLVM major version."""
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], check=True, capture_output=True, text=True
    ).stdout.strip()
    facts = dict(
        line.split(": ", 1)
        for line in subprocess.run(
            ["rustc", "-vV"], check=True, capture_output=True, text=True
        ).stdout.splitlines()
        if ": " in line
    )
    return Path(sysroot), facts["host"], facts["LLVM version"].split(".")[0]


def _profdata_tool() -> Path | None:
    """``llvm-profdata`` of rustc's own LLVM: rustup's ``llvm-tools`` component (added when
    rustup is there), else Debian's ``llvm-N`` of the same major version."""
    sysroot, host, major = _rustc_facts()
    rustup_tool = sysroot / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not rustup_tool.is_file() and shutil.which("rustup"):
        _say("adding rustup's llvm-tools component (llvm-profdata, for the profiled build)")
        subprocess.run(["rustup", "component", "add", "llvm-tools"], capture_output=True)
    for tool in (rustup_tool, Path(f"/usr/lib/llvm-{major}/bin/llvm-profdata")):
        if tool.is_file():
            return tool
    return None


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


#: Runs each training configuration in the instrumented module (no numpy needed: the runs
#: are advanced to their end and not collected).
_TRAINER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("_core", sys.argv[1])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
for path in sys.argv[2:]:
    with open(path) as f:
        core.Simulation(f.read()).advance(2**63)
"""


#: ``TCPFAIR_PGO``: ``auto`` (the default: profile-guided when the tools are there, else a
#: note and a plain build), ``off`` (plain build, faster to build), ``require`` (fail instead
#: of building plain).
PGO_MODES = ("auto", "off", "require")


class _PgoFailed(Exception):
    pass


def _step(what: str, cmd: list[Any], **kwargs: Any) -> None:
    try:
        subprocess.run(cmd, check=True, **kwargs)
    except (OSError, subprocess.CalledProcessError) as e:
        raise _PgoFailed(f"{what} failed ({e}; its output is above)") from e


def pgo_profile() -> Path | None:
    """The simulator's merged profile (target/pgo/sim-<digest>.profdata), made if needed;
    None for a plain build (``TCPFAIR_PGO=off``, no ``llvm-profdata``, or a failed step in
    ``auto`` mode, each said on stderr)."""
    mode = os.environ.get("TCPFAIR_PGO", "auto")
    if mode not in PGO_MODES:
        raise SystemExit(f"TCPFAIR_PGO={mode!r}: allowed: {', '.join(PGO_MODES)} (auto: default)")
    if mode == "off":
        _say("TCPFAIR_PGO=off: building without profile-guided optimisation")
        return None
    tool = _profdata_tool()
    try:
        if tool is None:
            raise _PgoFailed(
                "llvm-profdata not found (rustup component add llvm-tools, or apt-get install "
                "llvm-N for rustc's LLVM N)"
            )
        return _make_profile(tool)
    except _PgoFailed as e:
        if mode == "require":
            raise SystemExit(f"TCPFAIR_PGO=require: {e}") from None
        _say(
            f"{e}: building without profile-guided optimisation (same results, slower "
            "simulator; docs/performance.md)"
        )
        return None


def _make_profile(tool: Path) -> Path:
    """Build the module instrumented (target/pgo/gen, with maturin as for the real build, so
    that every function has the same name in both builds: a profile of another binary, such
    as the `run_json` example, names tcpfair-sim's functions differently and is silently
    ignored), run every training configuration in it and merge the counts; a profile already
    made by the same module from the same configurations is reused."""
    work = ROOT / "target" / "pgo"
    raw, wheels = work / "raw", work / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    flags = os.environ.get("RUSTFLAGS", "")
    env = dict(os.environ, RUSTFLAGS=f"{flags} -Cprofile-generate={raw}".strip())
    _say("building the instrumented native module (target/pgo/gen)")
    _step(
        "the instrumented build",
        [
            sys.executable, "-m", "maturin", "build", "--release", "--locked",
            f"--interpreter={sys.executable}", f"--target-dir={work / 'gen'}",
            f"--out={wheels}",
        ],
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    (wheel,) = wheels.glob("*.whl")
    module = work / "_core.abi3.so"
    with zipfile.ZipFile(wheel) as z:
        module.write_bytes(z.read("tcpfair/_core.abi3.so"))
    runs = sorted(TRAINING.glob("*.json"))
    if not runs:
        raise SystemExit(f"no training runs in {TRAINING}: run python benches/pgo_training.py")
    key = _digest([module, *runs])
    stamp = work / "stamp.json"
    if stamp.is_file():
        made = json.loads(stamp.read_text())
        if made.get("key") == key and Path(made["profile"]).is_file():
            return Path(made["profile"])
    shutil.rmtree(raw, ignore_errors=True)  # also what the build scripts above wrote
    raw.mkdir(parents=True)
    _say(f"profiling the simulator: {len(runs)} training runs ({TRAINING.relative_to(ROOT)})")
    _step(
        "the training runs",
        [sys.executable, "-c", _TRAINER, module, *runs],
        cwd=work,
        env=dict(os.environ, LLVM_PROFILE_FILE=str(raw / "%m_%p.profraw")),
    )
    merged = work / "merged.profdata"
    _step("llvm-profdata merge", [tool, "merge", "-o", merged, *sorted(raw.glob("*.profraw"))])
    profile = work / f"sim-{_digest([merged])}.profdata"
    merged.replace(profile)
    stamp.write_text(json.dumps({"key": key, "profile": str(profile)}))
    return profile


def pgo_rustflags() -> str:
    """RUSTFLAGS for the profiled release build (the caller's own RUSTFLAGS kept)."""
    flags = os.environ.get("RUSTFLAGS", "")
    profile = pgo_profile()
    if profile is None:
        return flags
    return f"{flags} -Cprofile-use={profile} --cfg tcpfair_pgo".strip()


@contextmanager
def _profiled() -> Iterator[None]:
    """RUSTFLAGS set for the profiled build while maturin runs."""
    before = os.environ.get("RUSTFLAGS")
    os.environ["RUSTFLAGS"] = pgo_rustflags()
    try:
        yield
    finally:
        if before is None:
            del os.environ["RUSTFLAGS"]
        else:
            os.environ["RUSTFLAGS"] = before


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _staged(), _profiled():
        return str(maturin.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Editable installs run from the checkout, which finds target/release's binaries."""
    with _profiled():
        return str(maturin.build_editable(wheel_directory, config_settings, metadata_directory))


def build_sdist(sdist_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    """maturin's sdist, plus the binaries' crates as workspace members (maturin keeps only
    the crates the native module depends on)."""
    name = str(maturin.build_sdist(sdist_directory, config_settings))
    _add_crates(Path(sdist_directory) / name, [_crate_dir(n) for n in binaries()])
    return name


def _add_crates(sdist: Path, crates: list[str]) -> None:
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    with tarfile.open(sdist) as t:
        for m in t.getmembers():
            fileobj = t.extractfile(m) if m.isfile() else None
            members.append((m, fileobj.read() if fileobj is not None else None))
    top = members[0][0].name.split("/")[0]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        for m, data in members:
            if m.name == f"{top}/Cargo.toml" and data is not None:
                data = _with_members(data.decode(), crates).encode()
                m.size = len(data)
            t.addfile(m, io.BytesIO(data) if data is not None else None)
        for crate in crates:
            for rel in _tracked(crate):
                t.add(ROOT / rel, arcname=f"{top}/{rel}", recursive=False)
    sdist.write_bytes(out.getvalue())


def _with_members(cargo_toml: str, crates: list[str]) -> str:
    """The sdist's workspace manifest with ``crates`` added to ``members``."""
    lines = cargo_toml.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("members = ["):
            have = tomllib.loads(line)["members"]
            lines[i] = "members = [" + ", ".join(f'"{c}"' for c in [*have, *crates]) + "]\n"
            return "".join(lines)
    raise SystemExit("the sdist's Cargo.toml has no one-line workspace members list")


def _tracked(crate: str) -> list[str]:
    """The crate's files as git tracks them (an sdist made outside git: every file)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--", crate], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
    if out:
        return out
    return sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / crate).rglob("*")
        if p.is_file() and "target" not in p.parts
    )


def main(argv: list[str]) -> None:
    """``stage``, ``unstage`` or ``sdist DIR`` (for ./dev wheel; run from the checkout)."""
    if argv == ["stage"]:
        stage()
    elif argv == ["unstage"]:
        unstage()
    elif len(argv) == 2 and argv[0] == "sdist":
        print(Path(argv[1]) / build_sdist(argv[1]))
    elif len(argv) == 2 and argv[0] == "pgo":
        Path(argv[1]).write_text(pgo_rustflags() + "\n")
    else:
        raise SystemExit("usage: tcpfair_build.py stage | unstage | sdist DIR | pgo FILE")


if __name__ == "__main__":
    os.chdir(ROOT)
    main(sys.argv[1:])
