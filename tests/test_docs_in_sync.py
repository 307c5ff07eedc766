"""Docs generated, not typed: the tables in docs/ are the output of the commands named next to
them (benches/docgen.py), and a quick subset of their simulator numbers, made again here,
must match the pages.

Tolerance: the printed precision. The simulator is deterministic for a given scenario and
seed, so a regenerated row either prints the same text or the page is stale — after a change
to the simulator, regenerate with ``.venv/bin/python benches/docgen.py`` (docs/reproductions.md:
``tcpfair repro all --quick --markdown docs/reproductions.md``). Wall-clock columns
(performance.md) are not compared; the packet counts and utilization beside them are.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

import docgen  # noqa: E402
import validation  # noqa: E402

from tcpfair import registry, spec  # noqa: E402

DOCS = ROOT / "docs"
STALE = "docs/{page} is stale: regenerate with `.venv/bin/python benches/docgen.py --only {id}`"


def _block(page: str, block_id: str) -> dict[str, str]:
    blocks = docgen.blocks_in((DOCS / page).read_text())
    assert block_id in blocks, f"docs/{page} has no generated block {block_id!r}"
    return docgen.table_rows(blocks[block_id][1])


def test_every_generated_block_is_known_and_names_its_command():
    """Each page's generated blocks are exactly the generator's, and the begin line names
    the generator's command (a block nobody regenerates would go stale unseen)."""
    pages: dict[str, set[str]] = {}
    for block_id, b in docgen.BLOCKS.items():
        pages.setdefault(b.page, set()).add(block_id)
    for page, ids in pages.items():
        found = docgen.blocks_in((DOCS / page).read_text())
        assert set(found) == ids, page
        for block_id, (cmd, lines) in found.items():
            assert cmd == docgen.BLOCKS[block_id].command, block_id
            assert any(ln.startswith("|---") for ln in lines), block_id  # holds a table


def test_replace_block_keeps_the_rest_of_the_page():
    text = (
        "intro\n<!-- generated: t by `cmd a`; do not edit by hand -->\n| a |\n|---|\n| 1 |\n"
        "<!-- end generated: t -->\noutro\n"
    )
    new = docgen.replace_block(text, "t", "cmd b", ["| a |", "|---|", "| 2 |"])
    assert new.startswith("intro\n<!-- generated: t by `cmd b`;") and new.endswith("outro\n")
    assert docgen.table_rows(docgen.blocks_in(new)["t"][1])["2"] == "| 2 |"


@pytest.mark.parametrize("key", ["buf-1bdp", "mathis-reno-0.001", "rtt-cubic"])
def test_validation_section1_simulator_rows(key):
    recs = [validation.measure(key, "sim", r) for r in (1, 2, 3)]
    ours = validation.render(recs, [key])[2]
    page = _block("validation.md", "validation-s1").get(f"{key} | sim")
    assert page == ours, STALE.format(page="validation.md", id="validation-s1")


def test_validation_10g_row():
    row, path, over, lab = next(r for r in docgen.TEN_G if r[0] == "lab11-loss-cubic-10g")
    page = _block("validation.md", "validation-10g").get(row)
    assert page == docgen.ten_g_row(row, path, over, lab), STALE.format(
        page="validation.md", id="validation-10g"
    )


@pytest.mark.parametrize("x2", [110, 10, 1])
def test_validation_vegas_table3_rows(x2):
    page = _block("validation.md", "validation-vegas-t3").get(str(x2))
    assert page == docgen.vegas_t3_row(x2), STALE.format(
        page="validation.md", id="validation-vegas-t3"
    )


@pytest.mark.parametrize("x2", [60, 1])
def test_validation_vegas_ns2_rows(x2):
    t3 = _block("validation.md", "validation-vegas-ns2-t3").get(str(x2))
    assert t3 == docgen.vegas_ns2_t3_row(x2), STALE.format(
        page="validation.md", id="validation-vegas-ns2-t3"
    )
    t4 = _block("validation.md", "validation-vegas-ns2-t4").get(str(x2))
    assert t4 == docgen.vegas_ns2_t4_row(x2), STALE.format(
        page="validation.md", id="validation-vegas-ns2-t4"
    )


def test_performance_packet_counts():
    """Bottleneck packets (column 5) and utilization (column 8) are deterministic; the
    wall-clock columns are not compared."""
    ours = docgen.bench_row(docgen.bench_rows(("A1-sack",), repeat=1)[0]).split(" | ")
    page = _block("performance.md", "performance-bench")["A1-sack"].split(" | ")
    assert (page[4], page[7]) == (ours[4], ours[7]), STALE.format(
        page="performance.md", id="performance-bench"
    )


def test_validation_mathis_rows():
    """Both Reno rows of the Mathis table (3 seeds each, ~0.2 s)."""
    page = _block("validation.md", "validation-mathis")
    for p, shown in (("0.0001", "1e-4"), ("0.001", "1e-3")):
        assert page.get(f"reno | {shown}") == docgen.mathis_row("reno", p), STALE.format(
            page="validation.md", id="validation-mathis"
        )


def test_mathis_model_by_hand():
    """Mathis et al. at MSS 1448 B, RTT 50 ms: 1448·8/0.05 · 1.22/√1e-4 = 28.26 Mbit/s, and
    C is what a measured rate implies."""
    assert docgen.mathis_bps(1e-4) == pytest.approx(1448 * 8 / 0.05 * 1.22 * 100)
    assert docgen.mathis_c(28.26496, 1e-4) == pytest.approx(1.22)


def test_validation_ack_jitter_row():
    """The 3-packet row (15 runs of 40 s, ~6 s): ACK jitter collapses a 3-packet buffer."""
    label, buffer, key = docgen.ACK_JITTER_BUFFERS[0]
    ours = docgen.ack_jitter_row(label, buffer, key, None)
    page = _block("validation.md", "validation-ack-jitter").get(label)
    assert page == ours, STALE.format(page="validation.md", id="validation-ack-jitter")


@pytest.mark.parametrize("row", ["D1", "D2", "D7", "D12"])
def test_validation_disagreement_rows(row):
    """The D rows made of cheap runs (single flows at 100 Mbit/s)."""
    ours = docgen.d_row(*next(r for r in docgen.D_ROWS if r[0] == row))
    page = _block("validation.md", "validation-disagreements").get(row)
    assert page == ours, STALE.format(page="validation.md", id="validation-disagreements")


def test_lab_gbit_reads_the_transcribed_lab_numbers():
    assert docgen.lab_gbit("lab11-100mtu-cubic-10g") == pytest.approx(0.0864)
    assert docgen.lab_gbit("lab11-loss-cubic-10g") == pytest.approx(1.02)


def _kernel_section_tables(page: str, heading: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of every table in section ``heading`` of ``page``."""
    lines = (DOCS / page).read_text().splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tables, i = [], start
    while i < end:
        if lines[i].startswith("|"):
            j = i
            while j < end and lines[j].startswith("|"):
                j += 1
            tables.append((i + 1, lines[j:end]))
            i = j
        i += 1
    return tables


def test_every_kernel_table_says_when_and_how_it_was_recorded():
    """Kernel-backend numbers are recorded data: each table of performance.md's § Kernel
    backend is followed by its *Recorded (kernel backend, …)* line (command, commit, date,
    load)."""
    for first, after in _kernel_section_tables("performance.md", "## Kernel backend"):
        nxt = next(ln for ln in after if ln.strip())
        assert nxt.startswith("*Recorded (kernel backend"), f"docs/performance.md:{first}"
        assert "commit `" in nxt and "load average" in nxt and "2026-" in nxt, nxt


def test_validation_200m_row():
    """Lab 11 §3 with CUBIC at 200 Mbit/s, the simulator's four columns (~3 s)."""
    ours = docgen.scaled_200m_row("100mtu", "§3 160 kB", "cubic")
    page = _block("validation.md", "validation-200m").get("§3 160 kB | cubic")
    assert page == ours, STALE.format(page="validation.md", id="validation-200m")


def test_validation_bbr_ack_jitter_row():
    """BBR against CUBIC with 2 ms of ACK jitter (3 runs of 40 s at 100 Mbit/s, ~2 s)."""
    page = _block("validation.md", "validation-bbr-ack-jitter").get("sim, J = 2ms")
    assert page == docgen.bbr_ack_jitter_row("2ms"), STALE.format(
        page="validation.md", id="validation-bbr-ack-jitter"
    )


def _keys_table(heading: str) -> dict[str, str]:
    """docs/scenario.md § Keys: the table after the line ``heading``, key → its row (a row
    naming several keys, `` `rmem`, `wmem` ``, gives each)."""
    lines = (DOCS / "scenario.md").read_text().splitlines()
    i = lines.index(heading)
    while not lines[i].startswith("| key |"):
        i += 1
    rows: dict[str, str] = {}
    for ln in lines[i + 2 :]:
        if not ln.startswith("|"):
            break
        for key in re.findall(r"`([a-z_]+)`", ln.split(" | ")[0]):
            rows[key] = ln
    return rows


def test_scenario_keys_tables_are_the_spec_keys():
    """Every key the spec accepts under [bottleneck] and [[flows]] has its row in
    docs/scenario.md, and every row is a key the spec accepts (a documented key that is
    refused, or an accepted one nobody can find, is drift)."""
    assert set(_keys_table("`[bottleneck]`")) == set(spec.Bottleneck.model_fields)
    assert set(_keys_table("`[[flows]]` (at least one)")) == set(spec.Flow.model_fields)
    text = (DOCS / "scenario.md").read_text()
    measure = text[text.index("`[measure]`: ") :].split("\n\n")[0]
    documented = set(re.findall(r"`([a-z_]+)` \(default", measure))
    assert documented == {f.alias or name for name, f in spec.Measure.model_fields.items()}


def test_scenario_cca_row_and_ns2_agents_name_the_registry():
    """The `cca` row lists every congestion control the registry has (it once lacked
    ns-2's `sack`), and the `stack` row's ns-2 agents are the registry's ns2 names."""
    rows = _keys_table("`[[flows]]` (at least one)")
    allowed = rows["cca"].split(" | ")[2]
    assert re.findall(r"`([a-z]+)`", allowed.split(" (the list")[0]) == list(registry.registry())
    ns2 = re.search(r"for `cca` = (.*?) \(no others\)", rows["stack"])
    assert ns2 is not None, rows["stack"]
    assert re.findall(r"`([a-z]+)`", ns2.group(1)) == list(registry.names("ns2"))


def _command_options() -> dict[str, set[str]]:
    """Each `tcpfair` command's options (a group's subcommands' included), from click."""
    import click

    from tcpfair.cli import COMMANDS, cli

    out: dict[str, set[str]] = {}
    for name in COMMANDS:
        cmd = cli.get_command(click.Context(cli), name)
        assert cmd is not None, name
        todo, opts = [cmd], set()
        while todo:
            c = todo.pop()
            opts |= {o for p in c.params for o in (*p.opts, *p.secondary_opts)}
            if isinstance(c, click.Group):
                todo += c.commands.values()
        out[name] = opts
    return out


def test_options_named_beside_a_command_exist():
    """Every `--option` written after `tcpfair CMD` on one line of README.md or docs/ (a
    command, a synopsis, a code span) is one of CMD's options: an option renamed or removed
    leaves the docs pointing at nothing."""
    options = _command_options()
    pattern = re.compile(rf"tcpfair ({'|'.join(options)})\b([^`\n|]*)")
    stale = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for n, line in enumerate(page.read_text().splitlines(), 1):
            for m in pattern.finditer(line):
                for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", m.group(2)):
                    if opt not in options[m.group(1)]:
                        stale.append(f"{page.name}:{n}: tcpfair {m.group(1)} {opt}")
    assert not stale, stale


def test_fairness_json_keys_are_documented():
    """docs/fairness.md's `--format json` item names every key the command writes (top
    level and per row), and no key it does not write (captures' `small_connections` aside)."""
    import json

    from click.testing import CliRunner

    from tcpfair.cli import cli

    args = ["fairness", str(ROOT / "examples/lab10-parallel-P4.json"), "--format", "json"]
    out = json.loads(CliRunner().invoke(cli, [*args, "--per-interval"]).output)
    text = (DOCS / "fairness.md").read_text()
    item = text[text.index("* `--format json`") :].split("\n* ")[0]
    rows = re.search(r"`rows` \(per flow or group:\s*`([^`]*)`", item)
    assert rows is not None, item
    assert {k.strip() for k in rows.group(1).split(",")} == set(out["rows"][0])
    named = set(re.findall(r"`([a-z_0-9]+)`", item)) - {"flow", "group", "null"}
    assert set(out) | {"small_connections"} <= named, set(out) - named
    assert named - set(out) <= {"small_connections", "t_s", "label", "value"}, named - set(out)


def test_repository_paths_named_in_docs_exist():
    """A file or folder of this repository named in README.md or docs/ (`scenarios/…`,
    `benches/…`, `tests/x.py::test_y`, …) exists, so a rename or removal cannot leave a page
    pointing at nothing. Globs and placeholders (`*`, `<study>`, `{a,b}`) are skipped;
    python/tcpfair/_bin exists only while a wheel is built."""
    path = re.compile(
        r"(?<![\w/.-])((?:scenarios|examples|benches|tests|crates|python/tcpfair|docs)/"
        r"[\w./{}*<>-]*[\w*}>])(?:::(\w+))?"
    )
    missing = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for n, line in enumerate(page.read_text().splitlines(), 1):
            for p, test in path.findall(line):
                if any(c in p for c in "*<>{}") or p == "python/tcpfair/_bin":
                    continue
                if not (ROOT / p).exists():
                    missing.append(f"{page.name}:{n}: {p}")
                elif test and f"def {test}(" not in (ROOT / p).read_text():
                    missing.append(f"{page.name}:{n}: {p}::{test}")
    assert not missing, missing


def test_scenario_md_two_way_example_prints_what_the_page_shows(tmp_path):
    """docs/scenario.md's reverse-direction example, run as the page says, prints the
    summary lines the page quotes (they once lacked the reverse line's retransmits and the
    line after it)."""
    from click.testing import CliRunner

    from tcpfair.cli import cli

    text = (DOCS / "scenario.md").read_text()
    toml = re.search(r'```toml\n(name = "two-way"\n.*?)```', text, re.S)
    shown = re.search(r"`tcpfair run two-way.toml` prints:\n\n```\n(.*?)```", text, re.S)
    assert toml is not None and shown is not None
    (tmp_path / "two-way.toml").write_text(toml.group(1))
    r = CliRunner().invoke(
        cli, ["run", str(tmp_path / "two-way.toml"), "--no-plot", "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 0, r.output
    out = [ln.rstrip() for ln in r.output.splitlines()]
    for line in shown.group(1).splitlines():
        assert line in out, (line, out)


def test_run_folder_files_in_sweeps_md_are_the_recognised_ones():
    """docs/sweeps.md's "A run folder is recognised strictly" names exactly the files
    ``outputs.RUN_FILES`` accepts (it once left out reverse_link.parquet,
    short_flows.parquet and capture.pcap, which --force accepts)."""
    from tcpfair.outputs import RUN_FILES

    text = (DOCS / "sweeps.md").read_text()
    item = text[text.index("- A **run folder** is recognised strictly") :].split("\n- ")[0]
    named = set()
    for name in re.findall(r"`([\w.|]+)`", item):
        stem, _, ext = name.rpartition(".")
        named |= {f"{stem}.{e}" for e in ext.split("|")} if "|" in ext else {name}
    assert named - {"format_version"} == set(RUN_FILES)


@pytest.mark.parametrize("x2", [110, 1])
def test_validation_ns2_comparison_sim_columns(x2):
    """docs/validation.md's simulator-beside-ns-2 table (benches/ns2_vegas_compare.py t3) is
    not a generated block (its ns-2 columns need Debian's `ns`), so its two simulator
    columns are checked here: windowInit_ 2 and 1, as the script prints them."""
    import ns2_vegas_compare as ns2c

    row = next(
        ln
        for ln in (DOCS / "validation.md").read_text().splitlines()
        if ln.startswith(f"| {x2} | ") and ln.count(" / ") == 4
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert [cells[3], cells[5]] == [ns2c.cell(ns2c.sim_run(x2, 1, 3, wi)) for wi in (2, 1)], row


def _kernel_option_table() -> dict[str, str]:
    """docs/kernel.md's table of environment options: variable → its row."""
    rows: dict[str, str] = {}
    for ln in (DOCS / "kernel.md").read_text().splitlines():
        m = re.match(r"\| `(TCPFAIR_[A-Z_]+)` \|", ln)
        if m:
            rows[m.group(1)] = ln
    return rows


def test_every_environment_variable_the_package_reads_is_documented():
    """Each ``TCPFAIR_*`` name the package's source mentions is documented (the kernel ones in
    docs/kernel.md, the rest in README or a docs page), and each variable of docs/kernel.md's
    option table is one the package reads — a renamed or new variable cannot drift unseen."""
    src = ROOT / "python" / "tcpfair"
    in_code = {
        name
        for f in src.rglob("*.py")
        for name in re.findall(r"\bTCPFAIR_[A-Z][A-Z_]*[A-Z]\b", f.read_text())
    }
    assert {"TCPFAIR_LINKEM", "TCPFAIR_KERNEL_GSO"} <= in_code  # the scan finds them at all
    docs = (ROOT / "README.md").read_text() + "".join(
        p.read_text() for p in sorted(DOCS.glob("*.md"))
    )
    kernel_page = (DOCS / "kernel.md").read_text()
    for name in sorted(in_code):
        where = (
            kernel_page
            if "KERNEL" in name or name in ("TCPFAIR_LINKEM", "TCPFAIR_TRAFFIC")
            else docs
        )
        assert f"`{name}" in where, f"{name} is read by the package but not documented"
    table = _kernel_option_table()
    assert len(table) >= 8, "docs/kernel.md's option table was not found"
    for name in table:
        assert name in in_code, f"docs/kernel.md documents {name}, which nothing reads"
