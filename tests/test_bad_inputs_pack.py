"""Bad-input corpus (issue 14): built-in scenario names and ``tcpfair scenarios``.

Each case: exit 2, one stderr line naming the argument and where the allowed names are
listed, no traceback, and the working folder (where a run would write results/) unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from badinput import fails_cleanly

LIST = "`tcpfair scenarios` lists them"

CASES: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "run-unknown-name": (["run", "no-such-lab"], ("'no-such-lab'", "no such file", LIST)),
    "run-misspelt-name": (
        ["run", "lab10-reno-vs-bb"],
        ("'lab10-reno-vs-bb'", "did you mean lab10-reno-vs-bbr", LIST),
    ),
    "run-name-with-toml": (["run", "lab12.toml"], ("'lab12.toml'", "no such file", LIST)),
    "run-sweep-name": (
        ["run", "sweeps/cubic-fig8"],
        ("'sweeps/cubic-fig8'", "not the name of a built-in scenario", LIST),
    ),
    "sweep-unknown-name": (
        ["sweep", "sweeps/cubic-fig10", "--dry-run"],
        ("'sweeps/cubic-fig10'", "did you mean sweeps/cubic-fig9, sweeps/cubic-fig8", LIST),
    ),
    "sweep-scenario-name": (
        ["sweep", "lab10-reno-vs-bbr", "--dry-run"],
        ("'lab10-reno-vs-bbr'", "not the name of a built-in sweep", LIST),
    ),
    "show-unknown": (["scenarios", "show", "nope"], ("'nope'", "is not a built-in", LIST)),
    "show-misspelt": (
        ["scenarios", "show", "validation/mathys"],
        ("'validation/mathys'", "did you mean validation/mathis", LIST),
    ),
    "show-a-path": (
        ["scenarios", "show", "scenarios/lab11-loss.toml"],
        ("'scenarios/lab11-loss.toml'", "is not a built-in", LIST),
    ),
    "show-missing-name": (["scenarios", "show"], ("tcpfair scenarios show", "NAME")),
    "scenarios-unknown-subcommand": (["scenarios", "list"], ("tcpfair scenarios", "list")),
}


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_bad_input_fails_cleanly(name: str, tmp_path: Path) -> None:
    args, mentions = CASES[name]
    work = tmp_path / "work"
    work.mkdir()
    fails_cleanly(args, mentions=mentions, unchanged=[work], cwd=work)
