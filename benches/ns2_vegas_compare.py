"""Seed 003 Tables 3 and 4: the simulator's stack = "ns2" Vegas beside a real ns-2 run.

Runs benches/ns2/seed003.tcl with `ns` (Debian's ns2 2.35) and the same set-up in the
simulator (scenarios/validation/vegas-table{3,4}-ns2.toml), one row per x2, and prints a
Markdown table of connection 1 / connection 2 kbit/s (10-60 s), their ratio and the JFI,
for ns-2.35's defaults (windowInit_ 2) and the pre-2001 default windowInit_ 1.

    PYTHONPATH=python python benches/ns2_vegas_compare.py [t3|t4]

Needs `ns` on PATH (`apt-get install ns2`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import docgen  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TCL = ROOT / "benches" / "ns2" / "seed003.tcl"
X2 = docgen.VEGAS_X2
# connection 1's 13.211 ms minimum RTT: 6 ms propagation + 5.333 ms (1000 B at 1.5 Mbit/s,
# the simulator adds it) + 1.877 ms (two 10 Mbit/s access links for the packet, the 40 B
# ACK back over the three links)
EXTRA_MS = 1.877


def ns2_run(x2: int, alpha: int, beta: int, window_init: int) -> list[float]:
    """kbit/s of both connections in a real ns-2 run."""
    args = ["ns", str(TCL), str(x2), str(alpha), str(beta), str(window_init)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    return [float(out[0]), float(out[1])]


def sim_run(x2: int, alpha: int, beta: int, window_init: int) -> list[float]:
    """kbit/s of both connections in the simulator (stack = "ns2")."""
    over = [f"flows.0.rtt={6 + EXTRA_MS:g}ms", f"flows.1.rtt={2 * (x2 + 2) + EXTRA_MS:g}ms"]
    over += docgen.ACCESS
    for n in (0, 1):
        over += [
            f"flows.{n}.alpha={alpha}",
            f"flows.{n}.beta={beta}",
            f"flows.{n}.params.window_init={window_init}",
        ]
    r = docgen.run_sim("validation/vegas-table3-ns2.toml", over)
    return [float(x) / 1e3 for x in r.group_throughputs().to_numpy()]


def cell(t: list[float]) -> str:
    return f"{t[0]:.0f} / {t[1]:.0f} ({t[0] / t[1]:.2f})"


def table3() -> list[str]:
    out = [
        "| x2 (ms) | paper ratio | ns-2 | sim | ns-2, windowInit_ 1 | sim, window_init 1 |",
        "|---|---|---|---|---|---|",
    ]
    for x2 in X2:
        cells = [str(x2), f"{docgen._paper('vegas', f't3-x{x2}-ratio'):.2f}"]
        for wi in (2, 1):
            cells += [cell(ns2_run(x2, 1, 3, wi)), cell(sim_run(x2, 1, 3, wi))]
        out.append("| " + " | ".join(cells) + " |")
    return out


def table4() -> list[str]:
    head = "| x2 (ms) |" + "".join(
        f" Vegas-{d} paper | ns-2 | sim | ns-2 wi1 | sim wi1 |" for d in (1, 2, 3)
    )
    out = [head, "|---|" + "---|" * 15]
    for x2 in X2:
        cells = [str(x2)]
        for d in (1, 2, 3):
            cells.append(f"{docgen._paper('vegas', f't4-x{x2}-vegas{d}'):.3f}")
            for wi in (2, 1):
                cells += [
                    f"{docgen.jain(ns2_run(x2, d, d, wi)):.3f}",
                    f"{docgen.jain(sim_run(x2, d, d, wi)):.3f}",
                ]
        out.append("| " + " | ".join(cells) + " |")
    return out


def main() -> None:
    if shutil.which("ns") is None:
        sys.exit("ns (ns-2) is not on PATH: apt-get install ns2")
    which = sys.argv[1] if len(sys.argv) > 1 else "t3"
    print("\n".join(table3() if which == "t3" else table4()))


if __name__ == "__main__":
    main()
