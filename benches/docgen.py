"""Docs generated, not typed: regenerate the tables of numbers in docs/ from the commands
named next to them.

    .venv/bin/python benches/docgen.py               # everything (~45 min on 2 cores)
    .venv/bin/python benches/docgen.py --only ID,... # some of them
    .venv/bin/python benches/docgen.py --list        # the tables, their pages and commands

A generated table stands between two marker lines in its page, the first naming the
command that produces it:

    <!-- generated: ID by `COMMAND`; do not edit by hand -->
    | … |
    <!-- end generated: ID -->

This script runs that command's work (in-process where the command is this script's own
generator) and replaces what is between the markers. docs/reproductions.md is generated
whole by ``tcpfair repro all --quick --markdown docs/reproductions.md`` (``--only
reproductions``), docs/reproductions-seed001.md by the full seed 001 study (``--only
reproductions-seed001``, ~25 min). Kernel-backend columns are recorded data (root, a
quiet machine): the blocks say at which commit and date they were measured.
tests/test_docs_in_sync.py regenerates a quick subset of the simulator numbers and fails
when a page disagrees.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SC = ROOT / "scenarios"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import validation  # noqa: E402  (benches/validation.py)

BEGIN = re.compile(
    r"^<!-- generated: (?P<id>[\w.-]+) by `(?P<cmd>[^`]+)`; do not edit by hand -->$"
)


def end_marker(block_id: str) -> str:
    return f"<!-- end generated: {block_id} -->"


@dataclass(frozen=True)
class Block:
    page: str
    command: str
    make: Callable[[], list[str]]


# --------------------------------------------------------------------------- pages
def blocks_in(text: str) -> dict[str, tuple[str, list[str]]]:
    """id → (command, lines) of every generated block of a page."""
    out: dict[str, tuple[str, list[str]]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if m:
            end = lines.index(end_marker(m["id"]), i)
            out[m["id"]] = (m["cmd"], lines[i + 1 : end])
            i = end
        i += 1
    return out


def replace_block(text: str, block_id: str, command: str, body: list[str]) -> str:
    """The page with block ``block_id``'s lines replaced (its begin line names ``command``)."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = BEGIN.match(ln)
        if m and m["id"] == block_id:
            end = lines.index(end_marker(block_id), i)
            begin = f"<!-- generated: {block_id} by `{command}`; do not edit by hand -->"
            lines[i : end + 1] = [begin, *body, end_marker(block_id)]
            return "\n".join(lines) + "\n"
    raise KeyError(f"no generated block {block_id!r}")


def table_rows(lines: list[str]) -> dict[str, str]:
    """A markdown table's rows by their first one or two cells ("key" or "key | backend")."""
    out: dict[str, str] = {}
    for ln in lines:
        if not ln.startswith("| ") or ln.startswith("|---"):
            continue
        cells = [c.strip() for c in ln.strip("|").split("|")]
        out[cells[0]] = ln
        if len(cells) > 1:
            out[f"{cells[0]} | {cells[1]}"] = ln
    return out


# --------------------------------------------------------------------------- helpers
def git_commit() -> str:
    p = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return p.stdout.strip() or "unknown"


def stamp() -> str:
    """Where and when the simulator numbers were made."""
    return f"commit `{git_commit()}`, {time.strftime('%Y-%m-%d', time.gmtime())}"


def run_sim(path: str, overrides: list[str]) -> Any:
    import tcpfair

    return tcpfair.run(SC / path, backend="sim", overrides=overrides)


def whole_run(r: Any) -> tuple[list[float], list[int]]:
    """Per group: throughput over the whole run (bytes × 8 / duration, as iperf3's summary)
    and retransmitted segments."""
    dur = r.scenario["duration_ns"] / 1e9
    g = r.flows.groupby("group")
    return [float(b) * 8 / dur for b in g["bytes"].sum()], [int(x) for x in g["retransmits"].sum()]


def jain(xs: list[float]) -> float:
    from tcpfair.metrics import jain as j

    return float(j(xs))


# --------------------------------------------------------------------------- validation §1
def validation_s1(keys: list[str] | None = None, fresh: bool = True) -> list[str]:
    """§1's table: the simulator rows measured again (seeds 1-3), the kernel rows as
    recorded in benches/validation-results.jsonl, with when and where they were measured."""
    out = validation.DEFAULT_OUT
    if fresh:
        args = argparse.Namespace(
            backend="sim", repeats=3, only=",".join(keys or []), out=out, fresh=True
        )
        validation.cmd_run(args)
    recs = validation.load(out)
    lines = validation.render(recs, keys)
    kern = [d for d in recs if d["backend"] == "kernel" and (keys is None or d["key"] in keys)]
    if kern:
        commits = sorted({d["commit"] for d in kern})
        days = sorted({d["utc"][:10] for d in kern})
        lines += [
            "",
            f"Kernel rows: recorded data (root, this 2-core VM), measured at commit"
            f"{'s' if len(commits) > 1 else ''} {', '.join(f'`{c}`' for c in commits)} on "
            f"{' to '.join(dict.fromkeys([days[0], days[-1]]))}; simulator rows: {stamp()}.",
        ]
    return lines


# --------------------------------------------------------------------------- validation §2
#: (row, scenario, overrides, the lab's number as the lab prints it)
TEN_G = [
    ("lab10-rr-10g", "lab10-reno-vs-reno-10g.toml", [], "JFI 0.996"),
    ("lab10-rb-10g", "lab10-reno-vs-bbr-10g.toml", [], "JFI 0.860"),
    *(
        (f"lab11-{f}-{cca}-10g", f"lab11-{f}-10g.toml", [f"flows.0.cca={cca}"], lab)
        for f, cca, lab in (
            ("100mtu", "cubic", "86.4 Mbit/s, 994 retx"),
            ("100mtu", "reno", "78.7 Mbit/s, 1 129 retx"),
            ("100mtu", "bbr", "3.48 Gbit/s, 75 818 retx"),
            ("1bdp", "cubic", "4.57 Gbit/s, 0 retx"),
            ("1bdp", "reno", "2.74 Gbit/s, 1 982 retx"),
            ("1bdp", "bbr", "5.64 Gbit/s, 16 110 retx"),
            ("loss", "cubic", "1.02 Gbit/s, 3 088 retx"),
            ("loss", "reno", "726 Mbit/s, 19 496 retx"),
            ("loss", "bbr", "8.72 Gbit/s, 25 740 retx"),
        )
    ),
]


def ten_g_row(row: str, path: str, over: list[str], lab: str) -> str:
    thr, rtx = whole_run(run_sim(path, over))
    gb = " / ".join(f"{x / 1e9:.2f}" for x in thr)
    return f"| {row} | {lab} | {gb}, JFI {jain(thr):.3f} | {' / '.join(map(str, rtx))} |"


def validation_10g(rows: list[str] | None = None) -> list[str]:
    out = [
        "| scenario | lab (one run; Lab 11: h1's throughput and retransmissions) | simulator, "
        "whole run: h1 / h3 Gbit/s, JFI | h1 / h3 retransmissions |",
        "|---|---|---|---|",
    ]
    for row, path, over, lab in TEN_G:
        if rows is None or row in rows:
            out.append(ten_g_row(row, path, over, lab))
    return [*out, "", f"Simulator: seed 1, {stamp()}."]


# --------------------------------------------------------------------------- validation: Vegas
VEGAS_X2 = (110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 5, 1)


def _paper(study: str, ref_id: str) -> float:
    """A number the source prints, from its transcription (scenarios/repro/<study>)."""
    from tcpfair import repro

    st = repro.load_study(study, SC / "repro")
    return next(r.value for r in st.references if r.id == ref_id)


def vegas_t3_row(x2: int) -> str:
    """Seed 003 Table 3 with Linux's Vegas (``stack = "linux"``), one run, 10-60 s."""
    r = run_sim("validation/vegas-table3.toml", [f"flows.1.rtt={2 * (x2 + 2) + 1.664:g}ms"])
    thr = [float(x) for x in r.group_throughputs().to_numpy()]
    rtx = int(r.flows["retransmits"].sum())
    drops = int(r.meta["link_totals"]["drops"])
    ratio = _paper("vegas", f"t3-x{x2}-ratio")
    jfi = _paper("vegas", f"t3-x{x2}-jfi")
    return (
        f"| {x2} | {thr[0] / 1e3:.0f} | {thr[1] / 1e3:.0f} | {thr[0] / thr[1]:.2f} | {ratio:.2f} "
        f"| {jain(thr):.3f} | {jfi:.3f} | {rtx} | {drops} |"
    )


def validation_vegas_t3(x2s: tuple[int, ...] = VEGAS_X2) -> list[str]:
    out = [
        "| x2 (ms) | conn. 1 kbit/s | conn. 2 kbit/s | ratio 1/2 sim | ratio 1/2 paper | "
        "JFI sim | JFI paper | retransmits | drops |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    out += [vegas_t3_row(x2) for x2 in x2s]
    return [*out, "", f"Simulator: {stamp()}; the paper's columns from scenarios/repro/vegas."]


EXACT = ["flows.0.exact_base_rtt=true", "flows.1.exact_base_rtt=true"]
# ns-2's windowInit_ before 2001-05-26, the start-up seed 003's runs match
WINIT1 = ["flows.0.params.window_init=1", "flows.1.params.window_init=1"]
# what the simulator does not serialize on seed 003's paths: a 1000-byte packet on two
# 10 Mbit/s access links and the 40-byte ACK back over the three links (ms)
NS2_EXTRA_MS = 1.877
# the paper's 10 Mbit/s S-R1 links, which space a sender's back-to-back packets
ACCESS = ["flows.0.access_rate=10Mbit", "flows.1.access_rate=10Mbit"]


def _vegas_ns2(table: int, x2: int, over: list[str]) -> list[float]:
    """Payload bit/s per connection over 10-60 s of seed 003's set-up on ns-2's agents."""
    path = f"validation/vegas-table{table}-ns2.toml"
    r = run_sim(path, [f"flows.1.rtt={2 * (x2 + 2) + NS2_EXTRA_MS:g}ms", *ACCESS, *over])
    return [float(x) for x in r.group_throughputs().to_numpy()]


def vegas_ns2_t3_row(x2: int) -> str:
    cells = [str(x2), f"{_paper('vegas', f't3-x{x2}-ratio'):.2f}"]
    cells.append(f"{_paper('vegas', f't3-x{x2}-jfi'):.3f}")
    for over in ([], WINIT1, EXACT):
        thr = _vegas_ns2(3, x2, over)
        cells += [
            f"{thr[0] / 1e3:.0f} / {thr[1] / 1e3:.0f}",
            f"{thr[0] / thr[1]:.2f}",
            f"{jain(thr):.3f}",
        ]
    return "| " + " | ".join(cells) + " |"


def validation_vegas_ns2_t3(x2s: tuple[int, ...] = VEGAS_X2) -> list[str]:
    out = [
        "| x2 (ms) | paper ratio 1/2 | paper JFI | ns2 conn. 1 / 2 kbit/s | ratio | JFI "
        "| window_init 1: kbit/s | ratio | JFI | exact base: kbit/s | ratio | JFI |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    out += [vegas_ns2_t3_row(x2) for x2 in x2s]
    return [*out, "", f"Simulator: {stamp()}; the paper's columns from scenarios/repro/vegas."]


def vegas_ns2_t4_row(x2: int) -> str:
    cells = [str(x2)]
    for delta in (1, 2, 3):
        cells.append(f"{_paper('vegas', f't4-x{x2}-vegas{delta}'):.3f}")
        d = [f"flows.0.delta={delta}", f"flows.1.delta={delta}"]
        ab = [f"flows.{n}.{k}={delta}" for n in (0, 1) for k in ("alpha", "beta")]
        # ns-2's own Vegas with alpha = beta = δ runs on the Table 3 scenario (no delta)
        runs = ((4, d), (3, [*ab, *WINIT1]), (4, [*d, *EXACT]))
        cells += [f"{jain(_vegas_ns2(t, x2, over)):.3f}" for t, over in runs]
    cells.append(f"{_paper('vegas', f't4-x{x2}-vegas1-3'):.3f}")
    cells += [f"{jain(_vegas_ns2(3, x2, ex)):.3f}" for ex in ([], WINIT1, EXACT)]
    return "| " + " | ".join(cells) + " |"


def validation_vegas_ns2_t4(x2s: tuple[int, ...] = VEGAS_X2) -> list[str]:
    head = " | ".join(
        f"{v} paper | ns2 δ | α=β, wi 1 | exact" for v in ("Vegas-1", "Vegas-2", "Vegas-3")
    )
    out = [
        f"| x2 (ms) | {head} | Vegas1_3 paper | ns2 | wi 1 | exact |",
        "|---|" + "---|" * 16,
    ]
    out += [vegas_ns2_t4_row(x2) for x2 in x2s]
    return [*out, "", f"Simulator: {stamp()}; the paper's columns from scenarios/repro/vegas."]


# --------------------------------------------------------------------------- performance
BENCH = ("A1", "A1-sack", "N2", "N100", "N1000")


def bench_rows(names: tuple[str, ...] = BENCH, repeat: int = 3) -> list[dict[str, Any]]:
    """``tcpfair bench --repeat N --only … --format json``: the fastest of N per scenario."""
    from tcpfair.bench import as_dict, run_one, scenarios

    sc = scenarios()
    return [
        as_dict(min((run_one(n, sc[n]) for _ in range(repeat)), key=lambda r: r.wall_s))
        for n in names
    ]


def bench_row(d: dict[str, Any]) -> str:
    bpf = "–" if d["flows"] <= 2 else f"{d['bytes_per_flow']:,.0f}"
    return (
        f"| {d['name']} | {d['flows']} | {d['simulated_s']:g} | {d['wall_s']:.3f} | "
        f"{d['bottleneck_packets']:,} | {d['pkts_per_s'] / 1e6:.2f} M | "
        f"{d['events_per_s'] / 1e6:.2f} M | {d['utilization']:.3f} | {d['rss_peak_mb']:.1f} | "
        f"{d['rss_growth_mb']:.2f} | {bpf} |"
    )


def performance_bench() -> list[str]:
    rows = bench_rows()
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    return [
        "| scenario | flows | simulated s | wall s | bottleneck packets | packets/s | events/s "
        "| utilization | peak RSS MB | RSS growth MB | bytes/flow |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(bench_row(d) for d in rows),
        "",
        f"Measured at {stamp()}, load average {load} on 2 cores (wall times and rates vary "
        "with the load; packets, events and utilization do not).",
    ]


#: (row, scenario, what) of the larger runs through `tcpfair run`
LARGE = [
    (
        "`scenarios/lab10-reno-vs-reno-10g.toml` (2 × Reno, 10 Gbit/s, 20 ms, 120 s)",
        "lab10-reno-vs-reno-10g.toml",
    ),
    ("`scenarios/lab10-reno-vs-bbr-10g.toml` (Reno vs BBR, paced)", "lab10-reno-vs-bbr-10g.toml"),
]


def large_row(label: str, path: str) -> str:
    r = run_sim(path, [])
    st = r.meta["stats"]
    wall = float(r.meta["wall_time_s"])
    pk = int(st["bottleneck_packets"])
    return (
        f"| {label} | {st['simulated_ns'] / 1e9:g} s | {pk / 1e6:.1f} M | {wall:.1f} s | "
        f"{pk / wall / 1e6:.1f} M |"
    )


def performance_large() -> list[str]:
    return [
        "| scenario | simulated | bottleneck packets | wall | packets/s |",
        "|---|---|---|---|---|",
        *(large_row(label, path) for label, path in LARGE),
        "",
        f"Measured at {stamp()} (`tcpfair run SCENARIO`; wall times vary with the load).",
    ]


# --------------------------------------------------------------------------- registry
def repro_page(args: list[str], page: str) -> None:
    """Not a block: the whole page is ``tcpfair repro ARGS --markdown docs/PAGE``'s output,
    made into a fresh store (never runs of an older build)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(Path(sys.executable).with_name("tcpfair")), "repro", *args, "--no-progress"]
        cmd += ["-o", str(Path(tmp) / "store"), "--markdown", str(DOCS / page)]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


BLOCKS: dict[str, Block] = {
    "validation-s1": Block(
        "validation.md",
        "benches/docgen.py --only validation-s1 (benches/validation.py run --backend sim "
        "--repeats 3 --fresh; benches/validation.py table)",
        validation_s1,
    ),
    "validation-10g": Block(
        "validation.md",
        "benches/docgen.py --only validation-10g (tcpfair run scenarios/<row>.toml "
        "[--set flows.0.cca=X], whole run)",
        validation_10g,
    ),
    "validation-vegas-t3": Block(
        "validation.md",
        "benches/docgen.py --only validation-vegas-t3 (tcpfair run "
        "scenarios/validation/vegas-table3.toml --set flows.1.rtt=<2·(x2+2)+1.664>ms)",
        validation_vegas_t3,
    ),
    "validation-vegas-ns2-t3": Block(
        "validation.md",
        "benches/docgen.py --only validation-vegas-ns2-t3 (tcpfair run "
        "scenarios/validation/vegas-table3-ns2.toml --set flows.1.rtt=<2·(x2+2)+1.877>ms "
        "--set flows.N.access_rate=10Mbit "
        "[--set flows.N.params.window_init=1 | --set flows.N.exact_base_rtt=true])",
        validation_vegas_ns2_t3,
    ),
    "validation-vegas-ns2-t4": Block(
        "validation.md",
        "benches/docgen.py --only validation-vegas-ns2-t4 (tcpfair run "
        "scenarios/validation/vegas-table4-ns2.toml --set flows.1.rtt=… "
        "--set flows.N.access_rate=10Mbit --set "
        "flows.N.delta=δ [--set flows.N.exact_base_rtt=true]; α=β, wi 1: vegas-table3-ns2.toml "
        "--set flows.N.alpha=δ --set flows.N.beta=δ --set flows.N.params.window_init=1; "
        "Vegas1_3: vegas-table3-ns2.toml)",
        validation_vegas_ns2_t4,
    ),
    "performance-bench": Block(
        "performance.md",
        "benches/docgen.py --only performance-bench (tcpfair bench --repeat 3 --only A1 "
        "--only A1-sack --only N2 --only N100 --only N1000)",
        performance_bench,
    ),
    "performance-large": Block(
        "performance.md",
        "benches/docgen.py --only performance-large (tcpfair run SCENARIO)",
        performance_large,
    ),
}
#: id → (page, ``tcpfair repro`` arguments): pages that are a command's whole output
WHOLE_PAGES = {
    "reproductions": ("reproductions.md", ["all", "--quick"]),
    # seed 001 as published: 1,600 runs, ~25 min on 2 cores
    "reproductions-seed001": ("reproductions-seed001.md", ["ns2-testbed"]),
}


def regenerate(ids: list[str]) -> None:
    for block_id in ids:
        if block_id in WHOLE_PAGES:
            page, args = WHOLE_PAGES[block_id]
            print(f"{block_id}: docs/{page} …", flush=True)
            repro_page(args, page)
            continue
        b = BLOCKS[block_id]
        print(f"{block_id}: docs/{b.page} …", flush=True)
        t0 = time.time()
        body = b.make()
        page = DOCS / b.page
        page.write_text(replace_block(page.read_text(), block_id, b.command, body))
        print(f"  {len(body)} lines in {time.time() - t0:.0f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated block ids (--list)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    known = [*BLOCKS, *WHOLE_PAGES]
    if a.list:
        for k, b in BLOCKS.items():
            print(f"{k:22s} docs/{b.page:16s} {b.command}")
        for k, (page, args) in WHOLE_PAGES.items():
            print(f"{k:22s} docs/{page:16s} tcpfair repro {' '.join(args)} --markdown docs/{page}")
        return
    ids = [s for s in a.only.split(",") if s] or known
    bad = [i for i in ids if i not in known]
    if bad:
        print(
            f"--only: unknown table(s) {', '.join(bad)}; allowed: {', '.join(known)}",
            file=sys.stderr,
        )
        sys.exit(2)
    regenerate(ids)


if __name__ == "__main__":
    main()

__all__ = ["BLOCKS", "blocks_in", "replace_block", "table_rows"]
