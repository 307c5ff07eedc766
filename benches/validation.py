"""Run the simulator-vs-Linux comparison of docs/validation.md §1 and print its table.

    .venv/bin/python benches/validation.py run  [--backend sim|kernel|both] [--repeats N]
                                                [--only KEY,...] [--fresh] [-o FILE]
    .venv/bin/python benches/validation.py table [-o FILE]

``run`` appends one JSON line per run to FILE (default benches/validation-results.jsonl)
and skips (row, backend, repeat) triples already there, so an interrupted campaign
resumes (``--fresh`` drops the selected rows' records of the selected backends first:
``benches/docgen.py`` re-measures the simulator rows so, keeping the kernel's). The
simulator's repeat r uses seed r; a kernel repeat is a fresh run (its seed
only changes linkem's loss draws). Kernel runs need root and a quiet machine: run nothing
else meanwhile. ``table`` renders the markdown table (mean ± sample std over repeats)
with the checks that flagged kernel runs.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SC = ROOT / "scenarios"
DEFAULT_OUT = ROOT / "benches" / "validation-results.jsonl"

#: key → (scenario file, overrides); the run keys of docs/validation.md §1
ROWS: dict[str, tuple[str, list[str]]] = {
    "lab10-rb": ("lab10-reno-vs-bbr.toml", []),
    "lab10-rr": ("lab10-reno-vs-reno.toml", ["duration=60s"]),
    **{
        f"lab11-{f}-{cca}": (f"lab11-{f}.toml", ["duration=40s", f"flows.0.cca={cca}"])
        for f in ("100mtu", "1bdp", "loss")
        for cca in ("cubic", "reno", "bbr")
    },
    **{
        f"buf-{b}": ("validation/single-reno-buffer.toml", [f"bottleneck.buffer={b}"])
        for b in ("1pkt", "3pkt", "0.25bdp", "0.5bdp", "1bdp")
    },
    **{
        f"mathis-{cca}-{p}": (
            "validation/mathis.toml",
            [f"flows.0.cca={cca}", f"bottleneck.loss={p}"],
        )
        for cca in ("reno", "cubic")
        for p in ("0.0001", "0.001")
    },
    **{
        f"rtt-{cca}": ("validation/rtt-20-80.toml", [f"flows.0.cca={cca}", f"flows.1.cca={cca}"])
        for cca in ("reno", "cubic")
    },
    **{
        f"bbrcubic-{b}": ("validation/bbr-vs-cubic.toml", [f"bottleneck.buffer={b}"])
        for b in ("0.5bdp", "1bdp", "4bdp")
    },
    "example-rb": (
        "lab10-reno-vs-bbr.toml",
        [
            "bottleneck.buffer=200000B",
            "flows.0.rtt=1ms",
            "flows.1.rtt=1ms",
            "duration=20s",
            "measure.from=2s",
        ],
    ),
}


def _git_commit() -> str:
    p = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return p.stdout.strip() or "unknown"


def measure(key: str, backend: str, repeat: int, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """One run of row ``key`` (seed ``repeat``), with ``extra`` overrides after the row's own."""
    path, over = ROWS[key]
    return measure_scenario(key, path, [*over, *extra], backend, repeat)


def measure_scenario(
    key: str, path: str, over: list[str], backend: str, repeat: int
) -> dict[str, Any]:
    """The record of one run of ``scenarios/PATH`` with ``over`` and ``seed=repeat``."""
    import tcpfair

    over = [*over, f"seed={repeat}"]
    t0 = time.time()
    r = tcpfair.run(SC / path, backend=backend, overrides=over)
    m = r.metrics()
    thr = [float(v) for v in r.group_throughputs().to_numpy()]
    rt = r.flows.groupby("group")["retransmits"].sum()
    # goodput capacity: the kernel backend's tbf also counts the 14-byte Ethernet header
    # (rate × MSS / (MTU + 14)); the simulator serialises IP packets (rate × MSS / MTU)
    mtu = r.scenario["bottleneck"]["mtu_bytes"] if r.scenario else 1500
    gcap = r.meta.get("goodput_capacity_bps") or r.meta["capacity_bps"] * (mtu - 52) / mtu
    rec: dict[str, Any] = {
        "key": key,
        "backend": backend,
        "repeat": repeat,
        "commit": _git_commit(),
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
        "wall_s": round(time.time() - t0, 1),
        "thr_bps": thr,
        "jfi": m["jfi"],
        "util_goodput": sum(thr) / gcap,
        "retransmits": [int(x) for x in rt.to_numpy()],
        "valid": bool(r.meta.get("valid", True)),
        "failed": [c["name"] for c in r.meta.get("checks", []) if not c["ok"]],
    }
    groups = sorted(r.flows["group"].unique())
    if backend == "sim":
        to = r.flows.assign(to=r.meta["sim_flows"]["timeouts"]).groupby("group")["to"].sum()
        rec["timeouts"] = [int(to[g]) for g in groups]
    else:
        tc = r.meta["kernel"].get("tcp_counters") or {}
        if tc:
            rec["timeouts"] = [
                int(tc[str(g)]["sender"].get("TcpExt.TCPTimeouts", 0)) for g in groups
            ]
            rec["loss_probes"] = [
                int(tc[str(g)]["sender"].get("TcpExt.TCPLossProbes", 0)) for g in groups
            ]
    if backend == "kernel":
        em = r.meta["kernel"].get("emulator") or {}
        late = em.get("late") or {}
        rec["late_max_ms"] = late.get("max_ns", 0) / 1e6
        rec["late_over_1ms"] = late.get("over_1ms")
        rec["late_mean_us"] = late.get("mean_ns", 0) / 1e3
        rec["late_n"] = late.get("n")
    return rec


def load(out: Path) -> list[dict[str, Any]]:
    if not out.exists():
        return []
    return [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()]


def cmd_run(a: argparse.Namespace) -> None:
    keys = list(ROWS) if not a.only else a.only.split(",")
    bad = [k for k in keys if k not in ROWS]
    if bad:
        sys.exit(f"--only: unknown row(s) {', '.join(bad)}; rows: {', '.join(ROWS)}")
    backends = ["sim", "kernel"] if a.backend == "both" else [a.backend]
    if a.fresh:  # measure again: drop these rows' records of these backends first
        keep = [d for d in load(a.out) if not (d["key"] in keys and d["backend"] in backends)]
        a.out.write_text("".join(json.dumps(d) + "\n" for d in keep))
    done = {(d["key"], d["backend"], d["repeat"]) for d in load(a.out)}
    todo = [
        (k, b, r)
        for r in range(1, a.repeats + 1)
        for b in backends
        for k in keys
        if (k, b, r) not in done
    ]
    for i, (k, b, r) in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {k} {b} repeat {r} …", flush=True)
        try:
            rec = measure(k, b, r)
        except Exception as e:  # one failed row must not lose the others
            print(f"  failed: {e}", flush=True)
            continue
        with a.out.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        thr = " / ".join(f"{x / 1e6:.1f}" for x in rec["thr_bps"])
        print(
            f"  {thr} Mbit/s  JFI {rec['jfi']:.3f}  util {100 * rec['util_goodput']:.1f} %  "
            f"rtx {rec['retransmits']}  "
            + ("valid" if rec["valid"] else "flagged: " + ", ".join(rec["failed"])),
            flush=True,
        )


def mean_sd(xs: list[float], fmt: str) -> str:
    n = len(xs)
    mean = sum(xs) / n
    if n == 1:
        return format(mean, fmt)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return f"{format(mean, fmt)} ± {format(sd, fmt)}"


def cmd_table(a: argparse.Namespace) -> None:
    for line in render(load(a.out)):
        print(line)


def render(recs: list[dict[str, Any]], keys: list[str] | None = None) -> list[str]:
    """The markdown table of ``recs`` (mean ± sample std over repeats), rows of ``keys``
    (default: all, in ROWS order)."""
    out = [
        "| run | backend | throughput Mbit/s (flow 0 / 1) | flow 0 share % | JFI | util. % of "
        "goodput cap. | retransmits (RTOs) (flow 0 / 1) | runs | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key in keys or list(ROWS):
        for b in ("sim", "kernel"):
            rs = [d for d in recs if d["key"] == key and d["backend"] == b]
            if rs:
                out.append(_row(key, b, rs))
    return out


def _row(key: str, b: str, rs: list[dict[str, Any]]) -> str:
    nf = len(rs[0]["thr_bps"])
    thr = " / ".join(mean_sd([d["thr_bps"][i] / 1e6 for d in rs], ".1f") for i in range(nf))
    share = mean_sd([100 * d["thr_bps"][0] / sum(d["thr_bps"]) for d in rs], ".1f")
    rtx = " / ".join(str(round(sum(d["retransmits"][i] for d in rs) / len(rs))) for i in range(nf))
    tos = [d for d in rs if "timeouts" in d]
    if tos:
        rtx += (
            " (RTOs "
            + " / ".join(
                str(round(sum(d["timeouts"][i] for d in tos) / len(tos))) for i in range(nf)
            )
            + ")"
        )
    notes = ""
    if b == "kernel":
        flagged = sorted({c for d in rs for c in d["failed"]})
        late = max(d.get("late_max_ms", 0) for d in rs)
        over = sum(d.get("late_over_1ms") or 0 for d in rs)
        notes = (
            "flagged: " + ", ".join(flagged) + "; " if flagged else "all checks pass; "
        ) + f"lateness max {late:.1f} ms ({over} frames > 1 ms)"
    return (
        f"| {key} | {b} | {thr} | {share} | {mean_sd([d['jfi'] for d in rs], '.3f')} | "
        f"{mean_sd([100 * d['util_goodput'] for d in rs], '.1f')} | {rtx} | {len(rs)} | {notes} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--backend", choices=["sim", "kernel", "both"], default="both")
    r.add_argument("--repeats", type=int, default=1)
    r.add_argument("--only", default="")
    r.add_argument(
        "--fresh", action="store_true", help="Measure again: drop these rows' old records first."
    )
    r.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    t = sub.add_parser("table")
    t.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args()
    {"run": cmd_run, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    main()
