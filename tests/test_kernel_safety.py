"""What the kernel backend executes as root, how it watches and stops its children, and
what a run graded invalid does to the exit status — without building namespaces.

Issue 8: a planted ``./target/release/tcpfair-linkem`` or an ``ip`` early in ``$PATH``
must never run; a dead child must be named with how it died; impatient Ctrl-C presses must
not cut the tear-down short; ``doctor --cleanup`` finds work folders of dead runs only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tcpfair.kernel import cleanup as CL
from tcpfair.kernel import tools as T
from tcpfair.kernel.procs import Spawned, proc_start_time
from tcpfair.kernel.runner import (
    ChildDied,
    Interrupts,
    KernelOptions,
    check_children,
    exit_text,
    setup_commands,
)
from tcpfair.kernel.topology import build
from tcpfair.spec import from_dict

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="ownership checks apply to root only")


def _script(path: Path, marker: Path, mode: int = 0o755) -> Path:
    """An executable that would leave ``marker`` behind if anything ran it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch {marker}\n")
    path.chmod(mode)
    return path


# ------------------------------------------------------------------------- system tools
def test_tools_come_from_the_system_folders_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    planted = tmp_path / "bin"
    for name in T.TOOLS:
        _script(planted / name, marker)
        _script(tmp_path / name, marker)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    assert T.find_tool("ip", (str(planted), *T.SYSTEM_DIRS)) == str(planted / "ip")  # control
    for name in T.TOOLS:
        path = T.find_tool(name)
        assert path is None or os.path.dirname(path) in T.SYSTEM_DIRS, (name, path)
    T.tool_paths.cache_clear()
    try:
        assert all(p is None or not p.startswith(str(tmp_path)) for p in T.tool_paths().values())
    finally:
        T.tool_paths.cache_clear()
    assert not marker.exists()


def test_every_program_in_a_command_gets_an_absolute_path() -> None:
    linkem = "/opt/x/tcpfair-linkem"
    argv = ["ip", "netns", "exec", "tf-0a1b2c-s0", linkem, "exec", "iperf3", "-c", "ip"]
    out = T.absolute(argv)
    assert out == [
        T.tool("ip"),
        "netns",
        "exec",
        "tf-0a1b2c-s0",
        linkem,
        "exec",
        T.tool("iperf3"),
        "-c",
        "ip",  # an argument, not a program: left as it is
    ]
    assert T.absolute(["ip", "netns", "exec", "ns", "sysctl", "-w", "a=1"])[4] == T.tool("sysctl")
    # a bare name that is not one of the tools is refused, never looked up in $PATH
    with pytest.raises(T.ToolError, match="refusing to run 'python3'"):
        T.absolute(["python3", "-c", "1"])
    with pytest.raises(T.ToolError, match="refusing to run 'sh'"):
        T.absolute(["ip", "netns", "exec", "ns", "sh"])
    # every command that builds a topology resolves
    sc = from_dict(
        {
            "name": "t",
            "duration": "5s",
            "bottleneck": {"rate": "10Mbit", "buffer": "20pkt"},
            "flows": [{"cca": "reno", "rtt": "20ms", "rmem": "1MB"}],
        }
    )
    topo = build(sc.resolved(), "0a1b2c", {"reno": "reno"})
    for cmd in setup_commands(topo, sc, KernelOptions()):
        resolved = T.absolute(cmd)
        assert os.path.dirname(resolved[0]) in T.SYSTEM_DIRS
        if resolved[1:3] == ["netns", "exec"]:
            assert os.path.dirname(resolved[4]) in T.SYSTEM_DIRS


# ------------------------------------------------------------------------------ linkem
def test_a_planted_emulator_in_the_current_folder_is_never_chosen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    planted = _script(tmp_path / "target" / "release" / T.LINKEM, marker)
    _script(tmp_path / "bin" / T.LINKEM, marker)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.delenv("TCPFAIR_LINKEM", raising=False)
    found = T.find_linkem()
    assert found.path is None or not found.path.startswith(str(tmp_path)), found
    assert found.source in ("package", "build folder", "none")
    assert [str(p) for p, _, _ in T.linkem_candidates(None)] == [
        str(T.PACKAGE_DIR.parents[1] / "target" / "release" / T.LINKEM),
        str(T.PACKAGE_DIR / "_bin" / T.LINKEM),
    ]
    assert str(planted) not in [str(p) for p, _, _ in T.linkem_candidates(None)]
    assert not marker.exists()


def test_an_explicit_emulator_path_that_does_not_work_is_an_error(tmp_path: Path) -> None:
    from tcpfair.backends import BackendError
    from tcpfair.backends.kernel import KernelBackend

    missing = tmp_path / "nope" / T.LINKEM
    assert T.find_linkem(str(missing)).problem == f"TCPFAIR_LINKEM='{missing}': no such file"
    # the same path as an option of the backend, for Python callers
    be = KernelBackend(KernelOptions(linkem=str(missing)))
    with pytest.raises(BackendError, match="no such file"):
        be.check(
            from_dict(
                {
                    "name": "t",
                    "duration": "5s",
                    "bottleneck": {"rate": "10Mbit", "buffer": "20pkt"},
                    "flows": [{"cca": "reno", "rtt": "20ms"}],
                }
            )
        )
    assert "must be an absolute path" in (T.find_linkem("target/release/x").problem or "")
    plain = tmp_path / "plain"
    plain.write_text("x")
    plain.chmod(0o644)
    assert "not an executable file" in (T.find_linkem(str(plain)).problem or "")


@ROOT_ONLY
@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ("world-writable", "is writable by group or others (mode 0757)"),
        ("group-writable", "is writable by group or others (mode 0775)"),
        ("not-root", "is owned by uid 65534, not root"),
        ("folder-writable", "its folder"),
        ("folder-not-root", "is owned by uid 65534, not root"),
    ],
)
def test_as_root_an_emulator_others_could_replace_is_refused(
    tmp_path: Path, setup: str, reason: str
) -> None:
    folder = tmp_path / "bin"
    binary = _script(folder / T.LINKEM, tmp_path / "ran")
    folder.chmod(0o755)
    if setup == "world-writable":
        binary.chmod(0o757)
    elif setup == "group-writable":
        binary.chmod(0o775)
    elif setup == "not-root":
        os.chown(binary, 65534, 65534)
    elif setup == "folder-writable":
        folder.chmod(0o777)
    elif setup == "folder-not-root":
        os.chown(folder, 65534, 65534)
    found = T.find_linkem(str(binary), euid=0)
    assert found.path is None
    assert found.problem is not None and reason in found.problem, found.problem
    assert "nobody but root can change" in found.problem
    assert T.find_linkem(str(binary), euid=1000).path == str(binary)  # not root: no check


@ROOT_ONLY
def test_a_root_owned_emulator_in_a_sticky_folder_is_accepted(tmp_path: Path) -> None:
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    binary = _script(sticky / "d" / T.LINKEM, tmp_path / "ran")
    sticky.chmod(0o1777)  # like /tmp: others cannot rename what they do not own
    (sticky / "d").chmod(0o755)
    assert T.find_linkem(str(binary), euid=0) == T.Linkem(str(binary), "TCPFAIR_LINKEM")
    # a symbolic link is judged by what it points to
    link = tmp_path / "link"
    link.symlink_to(binary)
    binary.chmod(0o777)
    assert "writable by group or others" in (T.find_linkem(str(link), euid=0).problem or "")


# ----------------------------------------------------------------------------- children
def _spawn(name: str, code: str, tmp: Path) -> Spawned:
    """A child that ran ``code`` to its end, its stderr where the runner keeps it."""
    with open(tmp / f"{name}.err", "wb") as err:
        p = subprocess.Popen([sys.executable, "-c", code], stderr=err)
    p.wait(10)
    return Spawned(name, p, None, None)


def _alive(name: str) -> Spawned:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    return Spawned(name, p, None, None)


def test_a_dead_child_is_named_with_how_it_died(tmp_path: Path) -> None:
    relay = _alive("linkem")
    try:
        done = _spawn("client0", "pass", tmp_path)  # a client whose test is over: fine
        check_children(relay, {}, {0: done}, tmp_path)
        killed = _spawn("client1", "import os; os.kill(os.getpid(), 9)", tmp_path)
        failed = _spawn(
            "server1",
            "import sys; print('iperf3: error - the client has terminated', file=sys.stderr);"
            " sys.exit(1)",
            tmp_path,
        )
        with pytest.raises(ChildDied) as e:
            check_children(relay, {1: failed}, {0: done, 1: killed}, tmp_path)
        msg = str(e.value)
        # the killed one first: it is the cause, the server failed because of it
        assert msg.index("the iperf3 client of flows.1") < msg.index("the iperf3 server of flows.1")
        assert f"(pid {killed.popen.pid}) was killed by signal 9 (SIGKILL)" in msg
        assert "exited with status 1 (iperf3: error - the client has terminated)" in msg
    finally:
        relay.popen.kill()
        relay.popen.wait()
    # the emulator may not end at all, whatever its status
    with pytest.raises(
        ChildDied, match=r"the emulator tcpfair-linkem \(pid \d+\) exited with status 0"
    ):
        check_children(_spawn("linkem", "pass", tmp_path), {}, {}, tmp_path)
    assert exit_text(-15) == "was killed by signal 15 (SIGTERM)"


# --------------------------------------------------------------------------- interrupts
def test_the_first_signal_interrupts_and_later_ones_are_only_counted() -> None:
    intr = Interrupts()
    old = {s: signal.getsignal(s) for s in Interrupts.SIGNALS}
    intr.install()
    try:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            os.kill(os.getpid(), s)  # tear-down and exit go on undisturbed
        intr.raise_pending()  # already raised once: nothing more
        assert intr.received == [2, 2, 15, 2, 1]
        assert signal.getsignal(signal.SIGINT) == intr._handler
        # interrupted: ignored until the process exits (the interpreter resets Python
        # handlers to the default while it shuts down; SIG_IGN it leaves alone)
        intr.restore()
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in Interrupts.SIGNALS)
    finally:  # the handlers this process had (SIG_DFL left SIGHUP unignored under nohup)
        for s, h in old.items():
            signal.signal(s, h)
    assert {s: signal.getsignal(s) for s in Interrupts.SIGNALS} == old


def test_a_signal_during_tear_down_is_raised_after_it() -> None:
    intr = Interrupts()
    old = {s: signal.getsignal(s) for s in Interrupts.SIGNALS}
    intr.install()
    try:
        with intr.hold():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt, match=r"signal 15 \(held\)"):
            intr.raise_pending()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    quiet = Interrupts()
    quiet.install()
    quiet.restore()  # not interrupted: the previous handlers come back
    assert {s: signal.getsignal(s) for s in Interrupts.SIGNALS} == old


# ------------------------------------------------------------------------ work folders
def test_doctor_finds_work_folders_of_dead_runs_only(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()

    def folder(name: str, owner: dict[str, object] | None) -> Path:
        d = tmp_path / name
        d.mkdir()
        if owner is not None:
            (d / CL.WORKDIR_OWNER).write_text(json.dumps(owner))
        return d

    me = {"owner_pid": os.getpid(), "owner_start": proc_start_time(os.getpid())}
    folder("tcpfair-aaaaaa-x1y2", {"run_id": "aaaaaa", "owner_pid": dead.pid})
    folder("tcpfair-bbbbbb-x1y2", {"run_id": "bbbbbb", **me})
    folder("tcpfair-cccccc-x1y2", {"run_id": "cccccc", **me, "kept": True})
    folder("tcpfair-dddddd-x1y2", None)
    folder("not-ours-eeeeee", None)
    (tmp_path / "tcpfair-ffffff-link").symlink_to(tmp_path / "not-ours-eeeeee")
    found = dict(CL.work_folders(tmp_path))
    assert sorted(found) == ["aaaaaa", "bbbbbb", "dddddd"]
    assert CL._workdir_owner(found["aaaaaa"]) == (dead.pid, False)
    assert CL._workdir_owner(found["bbbbbb"]) == (os.getpid(), True)
    assert CL._workdir_owner(found["dddddd"]) == (None, False)


# ------------------------------------------------------------------ invalid runs, the CLI
class _GradedBackend:
    """The simulator's result with the kernel backend's lateness checks attached, so the
    CLI's handling of each grade is tested without namespaces."""

    name = "kernel"

    def __init__(self, max_stall_ms: float):
        from tcpfair.backends.sim import SimBackend

        self.sim = SimBackend()
        self.max_stall_ms = max_stall_ms

    def check(self, scenario: object) -> None:
        self.sim.check(scenario)  # type: ignore[arg-type]

    def run(self, scenario: object, progress: bool = False) -> object:
        from tcpfair.kernel import validate as V

        r = self.sim.run(scenario, progress=False)  # type: ignore[arg-type]
        late = {"n": 10_000, "mean_ns": 20e3, "max_ns": self.max_stall_ms * 1e6, "over_1ms": 3}
        checks = V.lateness_checks({"late": late, "send_errors": 0}, 0.005, 0.020)
        r.meta.update(checks=checks, grade=V.overall(checks))
        r.meta["valid"] = r.meta["grade"] != "invalid"
        return r


def _run_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stall_ms: float, *extra: str):
    from click.testing import CliRunner

    import tcpfair.backends
    from tcpfair.cli import cli

    monkeypatch.setattr(tcpfair.backends, "get_backend", lambda name: _GradedBackend(stall_ms))
    sc = tmp_path / "s.toml"
    sc.write_text(
        'name = "t"\nduration = "4s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
        '[[flows]]\ncca = "reno"\nrtt = "20ms"\n'
    )
    out = tmp_path / f"out-{stall_ms}-{len(extra)}"
    return CliRunner().invoke(cli, ["run", str(sc), "-b", "kernel", "-o", str(out), *extra]), out


def test_an_invalid_run_exits_3_is_saved_and_its_figure_is_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import matplotlib.pyplot as plt

    from tcpfair.result import RunResult

    # a 7 ms stall behind a buffer that drains in 5 ms: invalid
    bad, bad_dir = _run_cli(tmp_path, monkeypatch, 7.0)
    assert bad.exit_code == 3, bad.output
    lines = [ln for ln in bad.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: run INVALID"), bad.stderr
    assert "emulator.lateness_max" in lines[0] and "--accept-invalid" in lines[0]
    assert RunResult.load(bad_dir).meta["grade"] == "invalid"  # nothing lost
    # a 3 ms stall: a warning, exit 0; the same simulated run, so the same figure but for
    # the watermark, which is red
    warn, warn_dir = _run_cli(tmp_path, monkeypatch, 3.0)
    assert warn.exit_code == 0 and warn.stderr == "", warn.stderr
    assert "run valid, with warnings: emulator.lateness_max" in warn.stdout
    a = plt.imread(warn_dir / "throughput.png")[..., :3]
    b = plt.imread(bad_dir / "throughput.png")[..., :3]
    changed = abs(a - b).sum(axis=2) > 0.05
    assert 0.02 < changed.mean() < 0.3
    red = b[changed]
    assert (red[:, 0] > red[:, 1] + 0.2).mean() > 0.9
    # the run panel too ("INVALID" drawn across it)
    pa = plt.imread(warn_dir / "run.png")[..., :3]
    pb = plt.imread(bad_dir / "run.png")[..., :3]
    stamped = abs(pa - pb).sum(axis=2) > 0.05
    assert 0.01 < stamped.mean() < 0.3
    assert (pb[stamped][:, 0] > pb[stamped][:, 1] + 0.2).mean() > 0.9
    # accepted: exit 0, still marked
    ok, ok_dir = _run_cli(tmp_path, monkeypatch, 7.0, "--accept-invalid")
    assert ok.exit_code == 0 and ok.stderr == "", ok.stderr
    assert (plt.imread(ok_dir / "throughput.png")[..., :3] == b).all()
    js, _ = _run_cli(tmp_path, monkeypatch, 7.0, "--format", "json", "--no-plot")
    assert js.exit_code == 3
    assert json.loads(js.stdout)["grade"] == "invalid"


@ROOT_ONLY
@pytest.mark.parametrize("owner", [0, 65534])
def test_an_installed_packages_emulator_is_used_only_when_root_owns_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, owner: int
) -> None:
    """A wheel installed by root (files and folders root's, 0755) carries a usable emulator;
    one installed into a user's venv and then run as root is refused, naming the file."""
    site = tmp_path / "venv" / "lib" / "site-packages"
    package = site / "tcpfair"
    binary = _script(package / "_bin" / T.LINKEM, tmp_path / "ran")
    for p in (package, package / "_bin", binary):
        os.chown(p, owner, owner)
    monkeypatch.setattr(T, "PACKAGE_DIR", package)
    monkeypatch.setattr(T, "PACKAGE_BIN", package / "_bin")
    monkeypatch.delenv("TCPFAIR_LINKEM", raising=False)
    found = T.find_linkem(euid=0)
    if owner == 0:
        assert found == T.Linkem(str(binary), "package")
    else:
        assert found.path is None and found.source == "package"
        assert found.problem == (
            f"{binary} (the package): the file {binary} is owned by uid 65534, not root; as "
            "root tcpfair runs only an emulator that nobody but root can change "
            "(chown root, chmod go-w)"
        )
    assert not (tmp_path / "ran").exists()
