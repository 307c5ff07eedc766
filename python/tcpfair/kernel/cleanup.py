"""Finding and removing what crashed runs left behind (``tcpfair doctor --cleanup``).

Only three kinds of evidence are trusted: the state files runs write before creating
anything (``procs.STATE_DIR``), namespace names with the ``tf-<run id>-`` prefix, and work
folders ``<temp folder>/tcpfair-<run id>-*`` that are real folders owned by us, with the
owner record the run wrote into them (``runner.WORKDIR_OWNER``).
Processes are stopped by their recorded PID (checked against the recorded start time);
a namespace is deleted only if its name carries our prefix. A run whose owner process is
still alive is left alone unless ``force`` is given.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .._text import count
from .procs import STATE_DIR, alive, kill_recorded, list_namespaces, remove_namespace
from .topology import PREFIX

_NS_RE = re.compile(rf"^{re.escape(PREFIX)}([0-9a-f]{{6}})-[A-Za-z0-9_.-]+$")
_RUN_ID_RE = re.compile(r"[0-9a-f]{6}")  # topology.new_run_id
_WORKDIR_RE = re.compile(r"^tcpfair-([0-9a-f]{6})-[A-Za-z0-9_]+$")
#: the file naming a work folder's owner (kept equal to ``runner.WORKDIR_OWNER``)
WORKDIR_OWNER = "owner.json"


@dataclass
class Leftover:
    run_id: str
    namespaces: list[str] = field(default_factory=list)
    procs: list[dict[str, object]] = field(default_factory=list)
    owner_pid: int | None = None
    owner_alive: bool = False
    state_file: bool = False
    workdirs: list[Path] = field(default_factory=list)

    def describe(self) -> str:
        live = [
            p for p in self.procs if alive(int(str(p["pid"])), _int_or_none(p.get("start_time")))
        ]
        owner = (
            f"owner pid {self.owner_pid} {'running' if self.owner_alive else 'gone'}"
            if self.owner_pid
            else "no owner record"
        )
        return (
            f"run {self.run_id}: {count(len(self.namespaces), 'namespace')}, "
            f"{count(len(live), 'live process', 'live processes')}, "
            f"{count(len(self.workdirs), 'work folder')}, {owner}"
        )


def _int_or_none(x: object) -> int | None:
    return int(str(x)) if x is not None else None


def find_leftovers() -> list[Leftover]:
    runs: dict[str, Leftover] = {}
    if STATE_DIR.is_dir():
        for f in sorted(STATE_DIR.glob("*.json")):
            # only our state files (``<run id>.json``, a table naming that run): with
            # TCPFAIR_STATE_DIR on a folder of other JSON files, a list in one was an
            # internal error in `tcpfair doctor`, and --cleanup deleted the others
            if not _RUN_ID_RE.fullmatch(f.stem):
                continue
            try:
                d = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
            if not isinstance(d, dict) or str(d.get("run_id", f.stem)) != f.stem:
                continue
            procs, owner = d.get("procs", []), d.get("owner_pid")
            if not (
                isinstance(procs, list)
                and all(isinstance(p, dict) and isinstance(p.get("pid"), int) for p in procs)
                and (owner is None or isinstance(owner, int))
            ):
                continue  # not as procs.StateFile writes it: not ours to act on
            rid = f.stem
            lo = runs.setdefault(rid, Leftover(rid))
            lo.state_file = True
            lo.procs = procs
            lo.owner_pid = owner
            if lo.owner_pid:
                lo.owner_alive = alive(int(lo.owner_pid), d.get("owner_start"))
    existing = list_namespaces()
    for ns in existing:
        m = _NS_RE.match(ns)
        if m:
            runs.setdefault(m.group(1), Leftover(m.group(1))).namespaces.append(ns)
    for rid, d in work_folders():
        lo = runs.setdefault(rid, Leftover(rid))
        lo.workdirs.append(d)
        if lo.owner_pid is None:
            lo.owner_pid, lo.owner_alive = _workdir_owner(d)
    return sorted(runs.values(), key=lambda r: r.run_id)


def work_folders(tmp: Path | None = None) -> list[tuple[str, Path]]:
    """(run id, folder) of every kernel-run work folder in the temp folder: a real folder
    (not a symbolic link) named ``tcpfair-<run id>-…``, owned by this user and not kept on
    purpose."""
    root = Path(tempfile.gettempdir()) if tmp is None else tmp
    out: list[tuple[str, Path]] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return out
    for d in entries:
        m = _WORKDIR_RE.match(d.name)
        if not m:
            continue
        try:
            st = d.lstat()
        except OSError:
            continue
        if d.is_dir() and not d.is_symlink() and st.st_uid == os.geteuid() and not _kept(d):
            out.append((m.group(1), d))
    return out


def _kept(d: Path) -> bool:
    """Kept on purpose (``TCPFAIR_KERNEL_KEEP``): the user's, not a leftover."""
    try:
        return bool(json.loads((d / WORKDIR_OWNER).read_text()).get("kept"))
    except (OSError, ValueError, AttributeError):
        return False


def _workdir_owner(d: Path) -> tuple[int | None, bool]:
    """(owner PID, alive) from a work folder's owner record; (None, False) without one."""
    try:
        rec = json.loads((d / WORKDIR_OWNER).read_text())
        pid = int(rec["owner_pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, False
    start = rec.get("owner_start")
    return pid, alive(pid, int(start) if isinstance(start, int) else None)


def clean(lo: Leftover) -> list[str]:
    """Stop the run's recorded processes and delete its namespaces; returns problems."""
    for p in lo.procs:
        kill_recorded(int(str(p["pid"])), _int_or_none(p.get("start_time")))
    problems: list[str] = []
    for ns in lo.namespaces:
        problems += remove_namespace(ns)
    if not problems:
        (STATE_DIR / f"{lo.run_id}.json").unlink(missing_ok=True)
        # the crashed run's work folders (found by work_folders: ours, real folders)
        for d in lo.workdirs:
            shutil.rmtree(d, ignore_errors=True)
            if d.exists():
                problems.append(f"could not remove the work folder {d}")
    return problems
