"""Which kernel run goes to which machine: the bookkeeping of a kernel sweep on Dask.

Kernel runs need a machine of their own, so a Dask kernel sweep does not hand every run to
the scheduler at once: the client gives each checked worker (one per machine, holding the
``kernel`` resource) one run at a time, the first pending run that worker can run. That
way a worker that can run only some of the sweep's scenarios (a slower machine that holds
20 Mbit/s but not 400 Mbit/s) still gets those, a worker that joins mid-sweep gets runs
as soon as it has passed its check, and the run of a worker that is lost goes back to the
front of the queue for another one. This module is that bookkeeping, without Dask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Dispatch"]


@dataclass
class Dispatch:
    """Pending runs (task indices, in sweep order), the workers that may run them and
    what each is running.

    ``kinds[i]`` is the scenario of task ``i`` as the workers' checks name it (an index into
    the list of distinct scenarios they checked); ``able[w]`` the kinds worker ``w`` can
    run. A worker runs one task at a time."""

    kinds: Sequence[int]
    pending: list[int] = field(default_factory=list)
    able: dict[str, frozenset[int]] = field(default_factory=dict)
    busy: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.pending:
            self.pending = list(range(len(self.kinds)))

    def add_worker(self, worker: str, able: set[int] | frozenset[int]) -> None:
        """A worker that passed its check for the kinds in ``able`` (in order of joining:
        the first added is offered work first)."""
        self.able[worker] = frozenset(able)

    def assign(self) -> list[tuple[int, str]]:
        """Give every idle worker the first pending task it can run: ``(task, worker)``."""
        out = []
        for w, kinds in self.able.items():
            if w in self.busy:
                continue
            for pos, task in enumerate(self.pending):
                if self.kinds[task] in kinds:
                    del self.pending[pos]
                    self.busy[w] = task
                    out.append((task, w))
                    break
        return out

    def finished(self, worker: str) -> None:
        """The worker's task ended (whatever its outcome): the worker is idle again."""
        self.busy.pop(worker, None)

    def lost(self, worker: str) -> int | None:
        """The worker is gone: it gets no more tasks; the task it was running is returned
        and not run again (it fails: a run that took its machine down is not handed to the
        next one — ``--retry-failed`` does that on purpose)."""
        self.able.pop(worker, None)
        return self.busy.pop(worker, None)

    def stranded(self) -> list[int]:
        """Pending tasks no remaining worker can run."""
        can = frozenset().union(*self.able.values()) if self.able else frozenset()
        return [t for t in self.pending if self.kinds[t] not in can]

    def drop(self, tasks: Sequence[int]) -> None:
        """Take ``tasks`` out of the queue (they failed without running)."""
        gone = set(tasks)
        self.pending = [t for t in self.pending if t not in gone]

    @property
    def done(self) -> bool:
        return not self.pending and not self.busy
