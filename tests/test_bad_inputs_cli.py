"""Bad-input corpus: command-line usage errors are one line too (issue 8), not click's
three-line usage block — the command, the option or argument, and where help is."""

from __future__ import annotations

from pathlib import Path

import pytest
from badinput import fails_cleanly, fails_cleanly_subprocess

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = str(ROOT / "scenarios" / "lab10-reno-vs-reno.toml")


@pytest.mark.parametrize(
    ("args", "mentions"),
    [
        (["sweep", "{tmp}", "-j", "1"], ["tcpfair sweep", "SWEEP.toml", "is a directory"]),
        (["sweep", "{tmp}/s.toml", "-j", "abc"], ["tcpfair sweep", "--jobs", "'abc'"]),
        (["run", "{tmp}"], ["{tmp}", "is a directory"]),
        (["run"], ["tcpfair run", "Missing argument 'SCENARIO'"]),
        (["run", SCENARIO, "--bogus"], ["tcpfair run", "No such option", "--bogus"]),
        (["run", SCENARIO, "--backend", "ns3"], ["tcpfair run", "--backend", "'ns3'", "sim"]),
        (["run", SCENARIO, "--format", "xml"], ["--format", "'xml'", "table"]),
        (["nosuch"], ["No such command 'nosuch'"]),
        (["fairness", "--from", "x", "a.json"], ["tcpfair fairness", "--from"]),
        (["compare", "{tmp}/a", "{tmp}/b"], ["tcpfair compare", "does not exist"]),
        (["report"], ["tcpfair report", "Missing argument 'RUN_DIR|STORE'"]),
        (["report", "{tmp}/nothing"], ["{tmp}/nothing", "not a folder"]),
        (["report", "{tmp}", "-o", "{tmp}/r.html"], ["{tmp}", "neither a run folder"]),
        (["report", "{tmp}", "--pdf", "-o", "{tmp}/r.html"], ["-o", "{tmp}/r.html", ".pdf"]),
    ],
    ids=[
        "sweep-file-is-a-directory",
        "jobs-not-a-number",
        "scenario-is-a-directory",
        "missing-scenario",
        "unknown-option",
        "unknown-backend",
        "unknown-format",
        "unknown-command",
        "fairness-from-not-a-number",
        "compare-missing-stores",
        "report-missing-path",
        "report-path-not-a-folder",
        "report-neither-run-nor-store",
        "report-pdf-with-html-name",
    ],
)
def test_usage_errors_are_one_line(args: list[str], mentions: list[str], tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text('name = "s"\n')
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    mentions = [m.replace("{tmp}", str(tmp_path)) for m in mentions]
    fails_cleanly(argv, mentions=mentions, unchanged=[tmp_path])


def test_usage_error_through_the_installed_command(tmp_path: Path) -> None:
    fails_cleanly_subprocess(
        ["sweep", str(tmp_path), "-j", "1"], mentions=["is a directory"], unchanged=[tmp_path]
    )


@pytest.mark.parametrize(
    "summary",
    ["[1, 2]", '{"format_version": 1, "meta": [], "scenario": {}}', '"text"'],
    ids=["a-list", "meta-a-list", "a-string"],
)
def test_report_on_a_run_folder_whose_summary_is_not_one(summary: str, tmp_path: Path) -> None:
    """A half-written or foreign run folder: the file and what it should hold, not a Python
    exception's name ('AttributeError: 'list' object has no attribute 'get'' before)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(summary)
    line = fails_cleanly(
        ["report", str(run), "-o", str(tmp_path / "r.html")],
        mentions=[str(run / "summary.json"), "not a tcpfair run summary", "format_version"],
        unchanged=[run],
    )
    assert "Error:" not in line and "AttributeError" not in line
