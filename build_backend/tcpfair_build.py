"""tcpfair's PEP 517 build backend: maturin's, plus the programs a wheel carries.

maturin builds the native module only. Every wheel of tcpfair also carries the cargo
binaries named in ``pyproject.toml``'s ``[tool.tcpfair] binaries`` (the kernel backend's
emulator ``tcpfair-linkem``) in ``tcpfair/_bin/``, and the sdist carries their crates, so
``pip install .``, ``pip install tcpfair-X.tar.gz`` and ``./dev wheel`` all give a package
with the emulator. docs/packaging.md.

Also a command for ``./dev wheel``, which calls maturin itself (for its progress lines and
the portable manylinux tag): ``python build_backend/tcpfair_build.py stage | unstage | sdist
DIR``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
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


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _staged():
        return str(maturin.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Editable installs run from the checkout, which finds target/release's binaries."""
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
    else:
        raise SystemExit("usage: tcpfair_build.py stage | unstage | sdist DIR")


if __name__ == "__main__":
    os.chdir(ROOT)
    main(sys.argv[1:])
