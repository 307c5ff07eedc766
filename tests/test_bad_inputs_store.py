"""Bad-input corpus (issue 8): results stores, sweep files and ``compare``.

Every case is a command with something wrong in it, run through the real CLI in-process
(``badinput.fails_cleanly``): a non-zero exit, one line on stderr naming the file or key
and what is allowed or what to do, no traceback, and the results store that was there
before is byte for byte the same. SQLite's own ``catalog.sqlite-wal``/``-shm`` files, which
a read-only reader may create beside a catalog it opens, are not stored results; every
other path under the store is compared (``stored``).

Before the fixes of issue 8, every catalog case below was a ``sqlite3.DatabaseError``
traceback (or, for a zero-byte catalog, a schema written into it), and a binary sweep file
a ``UnicodeDecodeError``.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from badinput import fails_cleanly, snapshot
from test_sweep_support import BASE, fake_run

from tcpfair.orchestrate import run_sweep
from tcpfair.sweep import sweep_from_dict

SWEEP_TOML = """
name = "corpus"
repeats = 2
seed = 3

[base]
duration = "20s"
seed = 7
[base.bottleneck]
rate = "100Mbit"
buffer = "1bdp"
[[base.flows]]
cca = "newreno"
rtt = "50ms"
[[base.flows]]
cca = "newreno"
rtt = "50ms"
start = "2s"
[base.measure]
interval = "1s"
from = "5s"
to = "20s"

[axes]
"flows.1.rtt" = ["25ms", "50ms"]
"bottleneck.buffer" = ["0.5bdp", "1bdp"]
"""


def _sweep_dict(**changes: object) -> dict[str, object]:
    axes = {"flows.1.rtt": ["25ms", "50ms"], "bottleneck.buffer": ["0.5bdp", "1bdp"]}
    return {"name": "corpus", "base": BASE, "repeats": 2, "seed": 3, "axes": axes, **changes}


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results store with one finished sweep (fake backend): 4 points × 2 repeats."""
    root = tmp_path_factory.mktemp("good") / "store"
    run_sweep(sweep_from_dict(_sweep_dict()), run_fn=fake_run, output=root, jobs=1).store.close()
    assert not (root / "catalog.sqlite-wal").exists()  # all in the catalog file itself
    return root


@pytest.fixture
def store(good: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(good, root, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return root


def stored(root: Path) -> list[Path]:
    """The paths whose content must not change: everything but SQLite's -wal/-shm files."""
    return [p for p in sorted(root.iterdir()) if not p.name.endswith(("-wal", "-shm"))]


def fails(args: list[str], mentions: list[str], *roots: Path, cwd: Path | None = None) -> str:
    paths = [p for r in roots for p in stored(r)]
    names = {r: {p.name for p in stored(r)} for r in roots}
    line = fails_cleanly(args, mentions=mentions, unchanged=paths, cwd=cwd)
    assert {r: {p.name for p in stored(r)} for r in roots} == names, "a file was added"
    return line


# --------------------------------------------------------------------------- catalogs
def _zero(db: Path) -> None:
    db.write_bytes(b"")


def _garbage(db: Path) -> None:
    db.write_bytes(bytes(range(256)) * 40)


def _text(db: Path) -> None:
    db.write_text("name,jfi\nx,0.5\n")


def _header_only(db: Path) -> None:
    db.write_bytes(db.read_bytes()[:100])


def _half(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _short_header(db: Path) -> None:
    db.write_bytes(db.read_bytes()[:40])


def _scribbled(db: Path) -> None:
    """Every page after the first overwritten: the header is intact, the tables are not."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = b"\xa5" * (len(data) - page)
    db.write_bytes(bytes(data))


def _foreign(db: Path) -> None:
    db.unlink()
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
        c.execute("INSERT INTO photos VALUES (1, 'cat.jpg')")
    c.close()


def _schema_99(db: Path) -> None:
    with sqlite3.connect(db) as c:
        c.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    c.close()


def _bad_json(db: Path) -> None:
    with sqlite3.connect(db) as c:
        c.execute("UPDATE members SET axes='{not json' WHERE point=1")
        c.execute("UPDATE sweeps SET axes='[oops'")
    c.close()


def _directory(db: Path) -> None:
    db.unlink()
    db.mkdir()
    (db / "x").write_text("x")


CATALOGS: dict[str, tuple[Callable[[Path], None], str]] = {
    "zero-byte": (_zero, "empty (0 bytes)"),
    "random-bytes": (_garbage, "not an SQLite database"),
    "a-csv-file": (_text, "not an SQLite database"),
    "header-only": (_header_only, "truncated"),
    "cut-in-half": (_half, "truncated"),
    "shorter-than-a-header": (_short_header, "truncated"),
    "pages-overwritten": (_scribbled, "damaged"),
    "another-programs-database": (_foreign, "not a tcpfair catalog"),
    "newer-schema": (_schema_99, "catalog schema '99'"),
    "a-directory": (_directory, "not a file"),
    "rows-with-broken-json": (_bad_json, "not JSON"),
}


def _command(kind: str, root: Path, good: Path, tmp: Path) -> list[str]:
    if kind == "results":
        return ["results", str(root)]
    if kind == "results-check":
        return ["results", str(root), "--check"]
    if kind == "compare":
        return ["compare", str(good), str(root)]
    f = tmp / "corpus.toml"
    f.write_text(SWEEP_TOML)
    return ["sweep", str(f), "-o", str(root), "-j", "1", "--no-progress", "--no-figures"]


COMMANDS = ["results", "results-check", "compare", "sweep-resume"]
#: rows with broken JSON: ``--check`` lists them (test below), a resume writes them anew
ROW_DAMAGE = {"rows-with-broken-json": ["results", "compare"]}


@pytest.mark.parametrize(
    ("damage", "command"),
    [(d, c) for d in CATALOGS for c in ROW_DAMAGE.get(d, COMMANDS)],
    ids=lambda v: v,
)
def test_damaged_catalog(
    damage: str, command: str, store: Path, good: Path, tmp_path: Path
) -> None:
    spoil, says = CATALOGS[damage]
    spoil(store / "catalog.sqlite")
    args = _command(command, store, good, tmp_path)
    fails(args, [str(store / "catalog.sqlite"), says], store, good)


def test_check_lists_rows_with_broken_json(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tcpfair.cli import main

    _bad_json(store / "catalog.sqlite")
    with pytest.raises(SystemExit) as e:
        main(["results", str(store), "--check"])
    out = capsys.readouterr().out
    assert e.value.code == 1 and f"{store}: 3 problems" in out
    assert "catalog: sweeps.axes of corpus is not JSON" in out
    assert out.count("catalog: members.axes of ") == 2  # point 1's two repeats


@pytest.mark.parametrize("command", ["results", "compare"])
def test_zero_byte_catalog_of_an_empty_store(command: str, tmp_path: Path, good: Path) -> None:
    """No run directories either: a reader says there is nothing, and writes no schema."""
    root = tmp_path / "new"
    root.mkdir()
    (root / "catalog.sqlite").write_bytes(b"")
    args = ["results", str(root)] if command == "results" else ["compare", str(good), str(root)]
    fails(args, [str(root / "catalog.sqlite"), "empty (0 bytes)", "run a sweep"], root, good)
    assert (root / "catalog.sqlite").stat().st_size == 0


# --------------------------------------------------------------------------- sweep files
SWEEP_CASES: dict[str, tuple[str, list[str]]] = {
    "unknown-key": ("repeat = 3\n", ["repeat: unknown key", "allowed: axes, backend"]),
    "repeats-a-string": ('repeats = "3"\n', ["repeats", "whole number from 1 to 10000"]),
    "repeats-zero": ("repeats = 0\n", ["repeats", "whole number from 1 to 10000"]),
    "repeats-huge": ("repeats = 100000\n", ["repeats", "whole number from 1 to 10000"]),
    "seed-negative": ("seed = -1\n", ["seed", "whole number >= 0"]),
    "seed-float": ("seed = 1.5\n", ["seed", "whole number >= 0"]),
    "start-jitter-no-unit": ("start_jitter = 5\n", ["start_jitter"]),
    "backend-unknown": ('backend = "ns3"\n', ["backend", "'sim' or 'kernel'"]),
    "zip-not-lists": ('zip = "flows.1.rtt"\n', ["zip", "list of axis-key lists"]),
    "zip-unknown-axis": (
        'zip = [["flows.1.rtt", "flows.0.rtt"]]\n',
        ["zip.0", "'flows.0.rtt' is not an axis"],
    ),
    "zip-unequal-lengths": (
        'zip = [["flows.1.rtt", "bottleneck.buffer"]]\n',
        [],
    ),
    "plots-unknown-kind": (
        '[[plots]]\nkind = "pie"\nmetric = "jfi"\nx = "flows.1.rtt"\n',
        ["plots.0.kind", "surface, line"],
    ),
    "plots-cdf-with-x": (
        '[[plots]]\nkind = "cdf"\nmetric = "throughput"\nx = "flows.1.rtt"\n',
        ["plots.0.x", "a cdf has the metric on its x axis", "by = AXIS"],
    ),
    "plots-cdf-unknown-metric": (
        '[[plots]]\nkind = "cdf"\nmetric = "jfi"\n',
        ["plots.0.metric", "throughput, fct", "'jfi'"],
    ),
    "plots-bars-not-throughput": (
        '[[plots]]\nkind = "bars"\nmetric = "jfi"\nx = "flows.1.rtt"\n',
        ["plots.0.metric", "'throughput'", "'jfi'"],
    ),
    "plots-bars-with-by": (
        '[[plots]]\nkind = "bars"\nmetric = "throughput"\nx = "flows.1.rtt"\n'
        'by = "bottleneck.buffer"\n',
        ["plots.0.by", "one bar per flow"],
    ),
    "plots-box-without-x": (
        '[[plots]]\nkind = "box"\nmetric = "jfi"\n',
        ["plots.0.x", "required"],
    ),
}


def _sweep_file(tmp: Path, head: str = "", axes: str | None = None) -> Path:
    """The corpus sweep with ``head`` (top-level keys) put first and [axes] replaced."""
    text = SWEEP_TOML
    if axes is not None:
        text = text[: text.index("[axes]")] + axes
    top, rest = (head, "") if not head.startswith("[[") else ("", head)
    for line in top.splitlines():  # a key given in ``head`` replaces the file's own
        key = line.split("=")[0].strip()
        text = "\n".join(t for t in text.splitlines() if t.split("=")[0].strip() != key)
    f = tmp / "bad.toml"
    f.write_text(top + text + rest)
    return f


AXES_CASES: dict[str, tuple[str, list[str]]] = {
    "axis-a-scalar": ('[axes]\n"flows.1.rtt" = "25ms"\n', ["axes.flows.1.rtt", "list of values"]),
    "axis-empty-list": ('[axes]\n"flows.1.rtt" = []\n', ["axes.flows.1.rtt", "empty"]),
    "range-mixed-units": (
        '[axes]\n"flows.1.rtt" = { from = "25ms", to = "1s", step = "25ms" }\n',
        ["axes.flows.1.rtt", "same unit"],
    ),
    "range-step-zero": (
        '[axes]\n"flows.1.rtt" = { from = "25ms", to = "50ms", step = "0ms" }\n',
        ["axes.flows.1.rtt", "step must be positive"],
    ),
    "range-backwards": (
        '[axes]\n"flows.1.rtt" = { from = "50ms", to = "25ms", step = "5ms" }\n',
        ["axes.flows.1.rtt", "below from"],
    ),
    "range-unknown-key": (
        '[axes]\n"flows.1.rtt" = { from = "5ms", to = "50ms", step = "5ms", by = 2 }\n',
        ["axes.flows.1.rtt", "allowed: from, to, step"],
    ),
    "range-huge": (
        '[axes]\n"flows.1.rtt" = { from = "1ns", to = "10000000ns", step = "1ns" }\n',
        ["axes.flows.1.rtt", "at most"],
    ),
    "grid-huge": (
        '[axes]\n"flows.1.rtt" = { from = "1ms", to = "400ms", step = "1ms" }\n'
        '"flows.0.rtt" = { from = "1ms", to = "400ms", step = "1ms" }\n',
        ["axes", "points", "more than"],
    ),
    "axes-not-a-table": ('axes = ["flows.1.rtt"]\n', ["axes", "table of dotted keys"]),
    "axis-unknown-scenario-key": (
        '[axes]\n"flows.1.colour" = ["red"]\n',
        ["flows.1.colour=red", "colour"],
    ),
    "axis-value-the-scenario-rejects": (
        '[axes]\n"flows.1.rtt" = ["fast"]\n',
        ["flows.1.rtt=fast", "rtt"],
    ),
}


@pytest.mark.parametrize("case", list(SWEEP_CASES))
def test_bad_sweep_file(case: str, store: Path, tmp_path: Path) -> None:
    head, mentions = SWEEP_CASES[case]
    if case == "zip-unequal-lengths":  # two axes of 2 and 3 values
        f = _sweep_file(
            tmp_path,
            head,
            '[axes]\n"flows.1.rtt" = ["25ms", "50ms"]\n'
            '"bottleneck.buffer" = ["0.5bdp", "1bdp", "2bdp"]\n',
        )
        mentions = ["zip.0", "equal lengths"]
    else:
        f = _sweep_file(tmp_path, head)
    fails(["sweep", str(f), "-o", str(store), "--no-progress"], [str(f), *mentions], store)


@pytest.mark.parametrize("case", list(AXES_CASES))
def test_bad_sweep_axes(case: str, store: Path, tmp_path: Path) -> None:
    axes, mentions = AXES_CASES[case]
    if axes.startswith("[axes]"):
        f = _sweep_file(tmp_path, axes=axes)
    else:  # a top-level key, before any table
        f = _sweep_file(tmp_path, head=axes, axes="")
    fails(["sweep", str(f), "-o", str(store), "--no-progress"], [str(f), *mentions], store)


@pytest.mark.parametrize("dry", [False, True], ids=["run", "dry-run"])
def test_binary_sweep_file(dry: bool, store: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_bytes(b'name = "x"\n\xff\xfe\x00\x81 = 1\n')
    args = ["sweep", str(f), "-o", str(store)] + (["--dry-run"] if dry else [])
    fails(args, [str(f), "not UTF-8", "TOML"], store)


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ('name = "x"\nbase = \n', ["bad.toml"]),
        ('name = "x"\n[axes]\n"flows.1.rtt" = ["25ms"]\n', ["base", "required"]),
        ('name = "x"\nbase = "missing.toml"\n', ["base", "missing.toml"]),
        ('name = "x"\nbase = 5\n', ["base", "a path or a table"]),
        ('name = "x"\nbase = "bin.toml"\n', ["base", "bin.toml", "not UTF-8"]),
    ],
    ids=["toml-syntax", "base-missing", "base-file-missing", "base-a-number", "base-binary"],
)
def test_bad_sweep_base(text: str, mentions: list[str], store: Path, tmp_path: Path) -> None:
    (tmp_path / "bin.toml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    f = tmp_path / "bad.toml"
    f.write_text(text)
    fails(["sweep", str(f), "-o", str(store)], mentions, store)


@pytest.mark.parametrize(
    ("options", "mentions"),
    [
        (["-j", "0"], ["-j", "at least 1"]),
        (["-j", "-3"], ["-j", "at least 1"]),
        (["-j", "100000"], ["-j", "workers on this machine", "got 100000"]),
        (["-j", "100000", "--executor", "dask"], ["-j", "got 100000"]),
        (["--axis", "flows.1.rtt=25ms"], ["--axis flows.1.rtt=25ms", "expected KEY="]),
        (["--axis", "flows.1.rtt=[]"], ["--axis flows.1.rtt=[]", "expected KEY="]),
        (
            ["--axis", 'flows.1.rtt={from="5ms", to="1ms", step="1ms"}'],
            ["--axis flows.1.rtt", "below from"],
        ),
        (["--format", "bmp"], ["--format", "png, svg, pdf"]),
        (["--scheduler", "tcp://x:1"], ["--scheduler", "only with --executor dask"]),
        (
            [
                "--axis",
                'flows.1.rtt={from="1ms", to="400ms", step="1ms"}',
                "--axis",
                'flows.0.rtt={from="1ms", to="400ms", step="1ms"}',
            ],
            ["--axis", "640000 runs", "limit of 50000"],
        ),
        (["--axis", 'flows.1.rtt=["1ms"]', "--dry-run", "-j", "0"], ["-j", "at least 1"]),
    ],
    ids=[
        "jobs-zero",
        "jobs-negative",
        "jobs-huge",
        "jobs-huge-dask-local-cluster",
        "axis-no-list",
        "axis-empty",
        "axis-range-backwards",
        "format-unknown",
        "scheduler-without-dask",
        "axis-grid-huge",
        "dry-run-jobs-zero",
    ],
)
def test_bad_sweep_options(
    options: list[str], mentions: list[str], store: Path, tmp_path: Path
) -> None:
    f = tmp_path / "corpus.toml"
    f.write_text(SWEEP_TOML)
    fails(["sweep", str(f), "-o", str(store), "--no-progress", *options], mentions, store)


# --------------------------------------------------------------------------- results, compare
@pytest.mark.parametrize(
    ("options", "mentions"),
    [
        (["--plot", "jfi"], ["--plot needs --x"]),
        (["--plot", "jfi", "--x", "flows.9.rtt"], ["'flows.9.rtt' is not an axis", "axes:"]),
        (["--plot", "colour", "--x", "flows.1.rtt"], ["unknown metric 'colour'", "metrics: jfi"]),
        (["--sweep", "nope"], ["no sweep matches --sweep 'nope'; allowed: corpus (sim)"]),
        (["--backend", "kernel", "--aggregate", "--export", "x.csv"], ["no sweep matches"]),
        (["--plot", "jfi", "--x", "flows.1.rtt", "--format", "gif"], ["--format", "png"]),
    ],
    ids=[
        "plot-without-x",
        "plot-unknown-axis",
        "plot-unknown-metric",
        "unknown-sweep",
        "aggregate-unknown-backend",
        "format-unknown",
    ],
)
def test_bad_results_options(
    options: list[str], mentions: list[str], store: Path, tmp_path: Path
) -> None:
    fails(["results", str(store), *options], mentions, store, cwd=tmp_path)
    assert not (tmp_path / "x.csv").exists()


@pytest.fixture
def other_axes(tmp_path: Path) -> Path:
    root = tmp_path / "other"
    sw = sweep_from_dict(_sweep_dict(axes={"flows.0.rtt": ["25ms", "50ms"]}))
    run_sweep(sw, run_fn=fake_run, output=root, jobs=1).store.close()
    return root


@pytest.mark.parametrize(
    ("options", "mentions"),
    [
        (["--metric", "colour"], ["metric 'colour'", "no such metric; allowed: jfi,"]),
        (["--x", "flows.9.rtt"], ["--x 'flows.9.rtt': not an axis A and B share", "allowed"]),
        (["--a-sweep", "nope"], ["no sweep matches --a-sweep 'nope'; allowed: corpus (sim)"]),
        (["--b-backend", "kernel"], ["no sweep matches --b-backend 'kernel'; allowed:"]),
        (["--format", "gif"], ["--format", "png"]),
    ],
    ids=["unknown-metric", "unknown-axis", "unknown-sweep", "unknown-backend", "format-unknown"],
)
def test_bad_compare_options(
    options: list[str], mentions: list[str], store: Path, good: Path
) -> None:
    fails(["compare", str(store), str(good), *options], mentions, store, good)


def test_compare_different_axes(store: Path, other_axes: Path) -> None:
    fails(
        ["compare", str(store), str(other_axes)],
        ["different axes", "flows.1.rtt", "flows.0.rtt"],
        store,
        other_axes,
    )


def test_compare_a_folder_without_catalog(store: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    fails(
        ["compare", str(store), str(tmp_path / "empty")],
        ["not a results directory", "no catalog.sqlite"],
        store,
        tmp_path / "empty",
    )


def test_snapshot_sees_a_changed_catalog(store: Path) -> None:
    """The corpus's "nothing changed" would notice: one byte of the catalog differs."""
    before = snapshot(*stored(store))
    db = store / "catalog.sqlite"
    data = bytearray(db.read_bytes())
    data[-1] ^= 1
    db.write_bytes(bytes(data))
    assert snapshot(*stored(store)) != before
