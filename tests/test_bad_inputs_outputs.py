"""Bad-input corpus: output paths and names (issue 8, items 1 and 3).

Each case is a command a user could type whose output path or name is wrong: ``-o`` onto
someone's folder, a file or a link, ``--export``/``--plot`` onto an existing file or into a
folder that does not exist, a name that walks out of ``results/``. Every one must fail with
one line naming the option or key, the path or value, and what is allowed — and leave every
file that was there as it was (on main before this fix, the first one deleted ``v/f``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from badinput import fails_cleanly
from outputs_support import make_store, write_scenario, write_sweep

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "reno-vs-bbr"
IPERF = [str(EXAMPLES / "reno.json"), str(EXAMPLES / "bbr.json")]


@dataclass(frozen=True)
class Case:
    """``setup(work, store)`` prepares the situation in ``work`` and returns the arguments
    and the paths that must not change; ``mentions`` must all be in the error line."""

    setup: Callable[[Path, Path], tuple[list[str], list[Path]]]
    mentions: tuple[str, ...]


def stored(store: Path) -> list[Path]:
    """What a store holds that these commands must not touch: its runs and figures. (Not the
    catalog's -wal/-shm files: SQLite creates and removes them as connections open and close.)"""
    return [store / "runs", store / "figures"]


def _folder_of_files(work: Path) -> Path:
    v = work / "v"
    (v / "sub").mkdir(parents=True)
    (v / "f").write_text("x")
    (v / "sub" / "g").write_text("y")
    return v


def _file(work: Path) -> Path:
    f = work / "f.txt"
    f.write_text("mine")
    return f


def _run_folder(work: Path) -> Path:
    r = work / "r"
    r.mkdir()
    (r / "summary.json").write_text('{"format_version": 1, "meta": {}}')
    (r / "flows.parquet").write_bytes(b"PAR1")
    return r


def _link(work: Path, to: str) -> Path:
    link = work / "link"
    link.symlink_to(to)
    return link


def run_o(target: Callable[[Path], Path], *extra: str) -> Callable[[Path, Path], Any]:
    def setup(work: Path, store: Path) -> tuple[list[str], list[Path]]:
        s = write_scenario(work)
        t = target(work)
        return ["run", str(s), "-o", str(t), *extra], [work]

    return setup


def run_set_name(value: str) -> Callable[[Path, Path], Any]:
    def setup(work: Path, store: Path) -> tuple[list[str], list[Path]]:
        inner = work / "a" / "b"
        inner.mkdir(parents=True)
        s = write_scenario(inner)
        return ["run", str(s), "--set", f"name={value}"], [work]

    return setup


def sweep_name(value: str) -> Callable[[Path, Path], Any]:
    def setup(work: Path, store: Path) -> tuple[list[str], list[Path]]:
        return ["sweep", str(write_sweep(work, name=value)), "--no-progress"], [work]

    return setup


def sweep_o(target: Callable[[Path], Path]) -> Callable[[Path, Path], Any]:
    def setup(work: Path, store: Path) -> tuple[list[str], list[Path]]:
        sw = write_sweep(work)
        return ["sweep", str(sw), "-o", str(target(work)), "--no-progress"], [work]

    return setup


def results_export(target: Callable[[Path], Path | str], *extra: str) -> Callable[..., Any]:
    def setup(work: Path, store: Path) -> tuple[list[str], list[Path]]:
        return ["results", str(store), "--export", str(target(work)), *extra], [
            work,
            *stored(store),
        ]

    return setup


def compare_args(*args: str, target: Callable[[Path], Path] | None = None) -> Callable[..., Any]:
    def setup(work: Path, store: Path) -> tuple[list[str], list[Path]]:
        more = [str(target(work))] if target else []
        return ["compare", str(store), str(store), *args, *more], [work, *stored(store)]

    return setup


def fairness_plot(target: Callable[[Path], Path | str]) -> Callable[..., Any]:
    def setup(work: Path, store: Path) -> tuple[list[str], list[Path]]:
        return ["fairness", *IPERF, "--plot", str(target(work))], [work]

    return setup


def _png(work: Path) -> Path:
    p = work / "fig.png"
    p.write_bytes(b"\x89PNG mine")
    return p


def _csv_dir(work: Path) -> Path:
    d = work / "x.csv"
    d.mkdir()
    (d / "inside").write_text("mine")
    return d


NAME_RULE = "letters, digits"
CASES: dict[str, Case] = {
    # run -o
    "run-o-folder-of-files": Case(run_o(_folder_of_files), ("-o", "not a tcpfair run folder")),
    "run-o-folder-of-files-force": Case(
        run_o(_folder_of_files, "--force"), ("-o", "not a tcpfair run folder")
    ),
    "run-o-a-file": Case(run_o(_file), ("-o", "f.txt", "a file")),
    "run-o-run-folder-without-force": Case(run_o(_run_folder), ("-o", "earlier", "--force")),
    "run-o-symlink-to-run-folder": Case(
        run_o(lambda w: (_run_folder(w), _link(w, "r"))[1], "--force"), ("-o", "symbolic link")
    ),
    "run-o-dangling-symlink": Case(
        run_o(lambda w: _link(w, "/nonexistent/target")), ("-o", "symbolic link")
    ),
    "run-o-symlink-to-etc": Case(run_o(lambda w: _link(w, "/etc"), "--force"), ("symbolic link",)),
    "run-o-proc-nope": Case(
        run_o(lambda w: Path("/proc/nope/x")), ("-o", "/proc/nope/x", "cannot create a folder")
    ),
    "run-o-under-a-file": Case(
        run_o(lambda w: _file(w) / "x"), ("-o", "f.txt/x", "Not a directory")
    ),
    "run-o-folder-with-newline-in-name": Case(
        run_o(lambda w: (_folder_of_files(w), (w / "v").rename(w / "a\nb"), w / "a\nb")[2]),
        ("-o", "a\\nb", "not a tcpfair run folder"),
    ),
    # names
    "run-name-dotdot-slash": Case(run_set_name('"../../x"'), ("name", "'../../x'", NAME_RULE)),
    "run-name-dotdot": Case(run_set_name('".."'), ("name", "'..'", NAME_RULE)),
    "run-name-dot": Case(run_set_name('"."'), ("name", "'.'", NAME_RULE)),
    "run-name-hidden": Case(run_set_name('".x"'), ("name", "'.x'", "not starting with '.'")),
    "run-name-absolute": Case(run_set_name('"/tmp/x"'), ("name", "'/tmp/x'", NAME_RULE)),
    "run-name-nul": Case(run_set_name('"a\\u0000b"'), ("name", "'a\\x00b'", NAME_RULE)),
    "run-name-newline": Case(run_set_name('"a\\nb"'), ("name", "'a\\nb'", NAME_RULE)),
    "run-name-empty": Case(run_set_name('""'), ("name", "''", "empty")),
    "run-name-too-long": Case(run_set_name("x" * 300), ("name", "too long", "at most 100")),
    "sweep-name-dotdot": Case(sweep_name(".."), ("name", "'..'", NAME_RULE)),
    "sweep-name-dot": Case(sweep_name("."), ("name", "'.'", NAME_RULE)),
    "sweep-name-hidden": Case(sweep_name(".x"), ("name", "'.x'", "not starting with")),
    # sweep -o
    "sweep-o-folder-of-files": Case(sweep_o(_folder_of_files), ("-o", "not a results store")),
    "sweep-o-a-file": Case(sweep_o(_file), ("-o", "a file", "results store")),
    "sweep-o-symlink": Case(sweep_o(lambda w: _link(w, ".")), ("-o", "symbolic link")),
    # results --export / --figures
    "export-existing-file": Case(
        results_export(lambda w: (w / "runs.csv", (w / "runs.csv").write_text("mine"))[0]),
        ("--export", "runs.csv", "exists", "--force"),
    ),
    "export-proc-nope": Case(
        results_export(lambda w: "/proc/nope/x.csv"), ("--export", "/proc/nope", "does not exist")
    ),
    "export-missing-folder": Case(
        results_export(lambda w: w / "missing" / "x.csv"), ("--export", "does not exist")
    ),
    "export-onto-a-folder": Case(
        results_export(_csv_dir, "--force"), ("--export", "x.csv", "a directory")
    ),
    "export-onto-a-symlink": Case(
        results_export(lambda w: (_file(w), w / "l.csv", (w / "l.csv").symlink_to("f.txt"))[1]),
        ("--export", "symbolic link"),
    ),
    "results-figures-folder-of-files": Case(
        lambda w, s: (
            ["results", str(s), "--plot", "jfi", "--x", "flows.1.rtt", "--figures"]
            + [str(_folder_of_files(w))],
            [w, *stored(s)],
        ),
        ("--figures", "not empty", "--force"),
    ),
    # compare
    "compare-o-folder-of-files": Case(
        compare_args("-o", target=_folder_of_files), ("-o", "not empty", "--force")
    ),
    "compare-o-a-file": Case(compare_args("-o", target=_file), ("-o", "a file")),
    "compare-export-existing": Case(
        compare_args("--export", target=lambda w: (_file(w).rename(w / "c.csv"), w / "c.csv")[1]),
        ("--export", "c.csv", "exists"),
    ),
    # fairness --plot
    "fairness-plot-existing": Case(fairness_plot(_png), ("--plot", "fig.png", "--force")),
    "fairness-plot-proc-nope": Case(
        fairness_plot(lambda w: "/proc/nope/x.png"), ("--plot", "/proc/nope", "does not exist")
    ),
    "fairness-plot-symlink": Case(
        fairness_plot(lambda w: (_png(w), w / "l.png", (w / "l.png").symlink_to("fig.png"))[1]),
        ("--plot", "symbolic link"),
    ),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("store"))


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_bad_output(case: Case, store: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    args, unchanged = case.setup(work, store)
    fails_cleanly(args, mentions=case.mentions, unchanged=unchanged, cwd=work)
    shutil.rmtree(work)
