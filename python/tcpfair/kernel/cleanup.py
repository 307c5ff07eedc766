"""Finding and removing what crashed runs left behind (``tcpfair doctor --cleanup``).

Only two kinds of evidence are trusted: the state files runs write before creating
anything (``procs.STATE_DIR``), and namespace names with the ``tf-<run id>-`` prefix.
Processes are stopped by their recorded PID (checked against the recorded start time);
a namespace is deleted only if its name carries our prefix. A run whose owner process is
still alive is left alone unless ``force`` is given.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .procs import STATE_DIR, alive, kill_recorded, list_namespaces, remove_namespace
from .topology import PREFIX

_NS_RE = re.compile(rf"^{re.escape(PREFIX)}([0-9a-f]{{6}})-[A-Za-z0-9_.-]+$")


@dataclass
class Leftover:
    run_id: str
    namespaces: list[str] = field(default_factory=list)
    procs: list[dict[str, object]] = field(default_factory=list)
    owner_pid: int | None = None
    owner_alive: bool = False
    state_file: bool = False

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
            f"run {self.run_id}: {len(self.namespaces)} namespaces, {len(live)} live "
            f"processes, {owner}"
        )


def _int_or_none(x: object) -> int | None:
    return int(str(x)) if x is not None else None


def find_leftovers() -> list[Leftover]:
    runs: dict[str, Leftover] = {}
    if STATE_DIR.is_dir():
        for f in sorted(STATE_DIR.glob("*.json")):
            try:
                d = json.loads(f.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            rid = str(d.get("run_id", f.stem))
            lo = runs.setdefault(rid, Leftover(rid))
            lo.state_file = True
            lo.procs = list(d.get("procs", []))
            lo.owner_pid = d.get("owner_pid")
            if lo.owner_pid:
                lo.owner_alive = alive(int(lo.owner_pid), d.get("owner_start"))
    existing = list_namespaces()
    for ns in existing:
        m = _NS_RE.match(ns)
        if m:
            runs.setdefault(m.group(1), Leftover(m.group(1))).namespaces.append(ns)
    return sorted(runs.values(), key=lambda r: r.run_id)


def clean(lo: Leftover) -> list[str]:
    """Stop the run's recorded processes and delete its namespaces; returns problems."""
    for p in lo.procs:
        kill_recorded(int(str(p["pid"])), _int_or_none(p.get("start_time")))
    problems: list[str] = []
    for ns in lo.namespaces:
        problems += remove_namespace(ns)
    if not problems:
        (STATE_DIR / f"{lo.run_id}.json").unlink(missing_ok=True)
        # the crashed run's work directory (tempfile.mkdtemp(prefix=f"tcpfair-{rid}-"))
        for d in Path(tempfile.gettempdir()).glob(f"tcpfair-{lo.run_id}-*"):
            if d.is_dir() and not d.is_symlink():
                shutil.rmtree(d, ignore_errors=True)
    return problems
