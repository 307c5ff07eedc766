"""Two builds of the example runner (or any program taking one argument) alternated on the
same inputs: the CPU time (user + system) of each process, medians and the ratio B/A.

    python3 benches/ab_binaries.py A_BINARY B_BINARY REPEATS INPUT...

e.g. ``python3 benches/ab_binaries.py /tmp/old/run_json target/release/examples/run_json 8
/tmp/N10000.json /tmp/N2.json`` (the JSON a resolved scenario writes,
``tcpfair.Scenario.to_json()``). The order alternates (A B, then B A) so that a drift of the
machine's speed falls on both; on this shared VM, compare only within one run.
(``ab_modules.py`` does the same for two builds of the Python module.)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys


def cpu_seconds(program: str, arg: str) -> float:
    """CPU time of one run of ``program arg``, its output discarded."""
    proc = subprocess.Popen([program, arg], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"{program} {arg}: exit status {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    a, b, repeats, inputs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    times: dict[str, dict[str, list[float]]] = {i: {a: [], b: []} for i in inputs}
    for r in range(repeats):
        for i in inputs:
            for prog in (a, b) if r % 2 == 0 else (b, a):
                times[i][prog].append(cpu_seconds(prog, i))
    for i in inputs:
        ta, tb = times[i][a], times[i][b]
        ma, mb = statistics.median(ta), statistics.median(tb)
        print(
            f"{i}: A {ma:.3f} s, B {mb:.3f} s, B/A {mb / ma:.3f} "
            f"(A {min(ta):.3f}-{max(ta):.3f}, B {min(tb):.3f}-{max(tb):.3f}, {repeats} each)"
        )


if __name__ == "__main__":
    main()
