"""Wall time of a sweep's figures on an existing store, drawn in parallel (the default: the
plots drawn from the aggregate go to forked processes, one per core) or in one process.

Runs ``tcpfair sweep SWEEP.toml -o STORE --no-progress`` on a store in which every run is
done, so the command only loads the store, aggregates and draws; prints its wall time.

Usage: ``python benches/figure_time.py SWEEP.toml STORE [--serial]``
(docs/performance.md, "The seed-001 study on the simulator")
"""

from __future__ import annotations

import sys
import time

from tcpfair.cli import cli
from tcpfair.commands import sweep as cmd


def main() -> None:
    args = sys.argv[1:]
    serial = "--serial" in args
    args = [a for a in args if a != "--serial"]
    if len(args) != 2:
        sys.exit(__doc__)
    if serial:
        cmd._figure_workers = lambda n: 1
    t0 = time.perf_counter()
    try:
        cli(["sweep", args[0], "-o", args[1], "--no-progress"])
    except SystemExit as e:
        if e.code:
            raise
    print(f"{'one process' if serial else 'parallel'}: {time.perf_counter() - t0:.2f} s wall")


if __name__ == "__main__":
    main()
