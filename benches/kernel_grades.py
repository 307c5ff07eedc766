"""The measurements behind the kernel backend's grades (docs/kernel.md, "Grades").

Grades every recorded kernel run of ``benches/validation-results.jsonl`` with the rules of
``tcpfair.kernel.validate`` and sets it beside the simulator's mean for the same row
(utilization in points, JFI). Run from the repository root:

    .venv/bin/python benches/kernel_grades.py
"""

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import validation as VB  # noqa: E402

from tcpfair import load_scenario  # noqa: E402
from tcpfair.kernel import validate as V  # noqa: E402

recs = [json.loads(line) for line in VB.DEFAULT_OUT.read_text().splitlines() if line.strip()]
sim = {}
for d in recs:
    if d["backend"] == "sim":
        sim.setdefault(d["key"], []).append(d)
rows = []
for d in recs:
    if d["backend"] != "kernel":
        continue
    path, over = VB.ROWS[d["key"]]
    sc = load_scenario(VB.SC / path if not Path(path).is_absolute() else path, list(over))
    bb, bp = sc.buffer_limits()
    if bp is not None:
        bb = bp * (sc.bottleneck.mtu + 14)
    drain = bb * 8 / sc.bottleneck.rate
    rtt = min(f.rtt for f in sc.flows) / 1e9
    final = {
        "late": {
            "n": d["late_n"],
            "mean_ns": d["late_mean_us"] * 1e3,
            "max_ns": d["late_max_ms"] * 1e6,
            "over_1ms": d["late_over_1ms"],
            "p99_us": 0,
        },
        "send_errors": 0,
    }
    g = {c["name"].split(".")[1]: c["grade"] for c in V.lateness_checks(final, drain, rtt)}
    s = sim.get(d["key"], [])
    du = (
        100 * (d["util_goodput"] - statistics.mean(x["util_goodput"] for x in s))
        if s
        else float("nan")
    )
    dj = d["jfi"] - statistics.mean(x["jfi"] for x in s) if s else float("nan")
    rows.append(
        (
            d["key"],
            d["repeat"],
            drain * 1e3,
            rtt * 1e3,
            d["late_max_ms"],
            100 * d["late_over_1ms"] / d["late_n"],
            d["late_mean_us"],
            g,
            V.overall([{"grade": v} for v in g.values()]),
            du,
            dj,
        )
    )
print(f"{'key':22} r drain_ms rtt_ms max_ms share% mean_us  grade    max/share/mean  dutil dJFI")
for k, r, dr, rt, mx, sh, mn, g, o, du, dj in rows:
    each = "/".join(g[n][:4] for n in ("lateness_max", "late_share", "lateness_mean"))
    print(
        f"{k:22} {r} {dr:8.2f} {rt:6.0f} {mx:6.2f} {sh:6.3f} {mn:7.1f}  {o:8} {each}  "
        f"{du:+5.1f} {dj:+.3f}"
    )
print(Counter(o for *_, o, du, dj in rows))
