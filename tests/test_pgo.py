"""The profile-guided build of the native module (build_backend/tcpfair_build.py ``pgo``).

The training runs are generated from the scenarios users run (benches/pgo_training.py) and
must stay what that script writes; every one must load in the engine of this build (the
profiled build runs them all). Without ``llvm-profdata`` the build goes on unprofiled and
says so. Same results either way: the pinned digests of test_sim_determinism.py and
test_stack_ns2.py run against whichever build is installed (``./dev test``: the profiled one).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from build_backend_module import build_backend

import tcpfair._core

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ROOT / "crates" / "sim" / "pgo"


def test_training_runs_are_what_the_script_writes() -> None:
    script = ROOT / "benches" / "pgo_training.py"
    out = subprocess.run(
        [sys.executable, script, "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_training_run_loads_and_they_cover_both_stacks_and_every_cca() -> None:
    runs = sorted(TRAINING.glob("*.json"))
    assert len(runs) >= 20
    for run in runs:
        tcpfair._core.Simulation(run.read_text())  # a config the engine refuses: ValueError
    names = {p.stem for p in runs}
    for cca in tcpfair._core.congestion_controls():
        assert f"cca-linux-{cca}" in names, cca
    assert {"cca-ns2-vegas", "cca-ns2-reno", "seed001-bic", "bench-A1-sack-10g"} <= names


def test_without_llvm_profdata_the_build_says_so_and_keeps_the_callers_flags(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = build_backend()
    monkeypatch.setattr(backend, "_profdata_tool", lambda: None)
    monkeypatch.setenv("RUSTFLAGS", "-Ctarget-cpu=x86-64")
    assert backend.pgo_rustflags() == "-Ctarget-cpu=x86-64"
    err = capsys.readouterr().err
    assert "llvm-profdata not found" in err
    assert "building without profile-guided optimisation" in err


def test_tcpfair_pgo_off_require_and_a_bad_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = build_backend()
    monkeypatch.delenv("RUSTFLAGS", raising=False)
    monkeypatch.setenv("TCPFAIR_PGO", "off")
    monkeypatch.setattr(backend, "_profdata_tool", lambda: pytest.fail("off looked for tools"))
    assert backend.pgo_rustflags() == ""
    assert "TCPFAIR_PGO=off" in capsys.readouterr().err
    monkeypatch.setattr(backend, "_profdata_tool", lambda: None)
    monkeypatch.setenv("TCPFAIR_PGO", "require")
    with pytest.raises(SystemExit, match=r"^TCPFAIR_PGO=require: llvm-profdata not found"):
        backend.pgo_rustflags()
    monkeypatch.setenv("TCPFAIR_PGO", "yes")
    with pytest.raises(SystemExit, match=r"^TCPFAIR_PGO='yes': allowed: auto, off, require"):
        backend.pgo_rustflags()


def test_a_failed_step_builds_plain_in_auto_mode_and_fails_in_require_mode(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """E.g. a rustc without the profiler runtime: the instrumented build fails."""
    backend = build_backend()
    monkeypatch.setattr(backend, "ROOT", tmp_path)
    monkeypatch.setattr(backend, "_profdata_tool", lambda: Path("/usr/bin/true"))

    def fails(cmd: list[Any], **kwargs: Any) -> None:
        raise subprocess.CalledProcessError(1, cmd)

    monkeypatch.setattr(backend.subprocess, "run", fails)
    monkeypatch.setenv("RUSTFLAGS", "-Copt-level=3")
    monkeypatch.setenv("TCPFAIR_PGO", "auto")
    assert backend.pgo_rustflags() == "-Copt-level=3"
    err = capsys.readouterr().err
    assert "the instrumented build failed" in err
    assert "building without profile-guided optimisation" in err
    monkeypatch.setenv("TCPFAIR_PGO", "require")
    with pytest.raises(SystemExit, match="TCPFAIR_PGO=require: the instrumented build failed"):
        backend.pgo_rustflags()


def test_where_the_tools_are_the_checkout_is_built_profile_guided() -> None:
    """``./dev`` did not fall back to a plain build on a machine that can profile."""
    flags = ROOT / "target" / "pgo" / "rustflags"
    if not flags.is_file():
        pytest.skip("./dev setup has not built this checkout")
    if build_backend()._profdata_tool() is None:
        pytest.skip("no llvm-profdata here: the plain build is expected")
    assert "-Cprofile-use=" in flags.read_text(), "see target/pgo/pgo.log for why"


def test_the_profile_tool_is_rustcs_own_llvm(monkeypatch: pytest.MonkeyPatch) -> None:
    """rustup's llvm-tools of the active toolchain, else Debian's llvm-N of rustc's LLVM N
    (a profile written by another LLVM major version is not readable)."""
    backend = build_backend()
    seen: list[Path] = []
    monkeypatch.setattr(backend, "_rustc_facts", lambda: (Path("/sysroot"), "host-x", "22"))
    monkeypatch.setattr(backend.shutil, "which", lambda name: None)  # no rustup

    def is_file(p: Path) -> bool:
        seen.append(p)
        return p == Path("/usr/lib/llvm-22/bin/llvm-profdata")

    monkeypatch.setattr(backend.Path, "is_file", is_file)
    assert backend._profdata_tool() == Path("/usr/lib/llvm-22/bin/llvm-profdata")
    assert seen[0] == Path("/sysroot/lib/rustlib/host-x/bin/llvm-profdata")


def test_the_checkouts_module_is_the_build_dev_made() -> None:
    """``./dev setup`` writes the RUSTFLAGS it built with to target/pgo/rustflags; the
    module it installed says whether it was built with the profile (``tcpfair bench``
    prints it), so a plain build cannot pass for the profiled one."""
    flags = ROOT / "target" / "pgo" / "rustflags"
    if Path(tcpfair._core.__file__).parent != ROOT / "python" / "tcpfair":
        pytest.skip("the imported module is not the checkout's (an installed wheel)")
    if not flags.is_file():
        pytest.skip("./dev setup has not built this checkout")
    profiled = "-Cprofile-use=" in flags.read_text()
    assert tcpfair._core.PROFILE_GUIDED is profiled, (
        f"target/pgo/rustflags says profile-guided={profiled}, the module says "
        f"{tcpfair._core.PROFILE_GUIDED}: rebuild with ./dev setup"
    )
