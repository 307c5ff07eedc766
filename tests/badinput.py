"""Shared checks for the bad-input corpus (``tests/test_bad_inputs_*.py``).

Every case of the corpus is a command a user could type with something wrong in it. The
promise it pins (issue 8): a non-zero exit, exactly one line on stderr that names the
file or key and what is allowed, no traceback, and nothing that was stored before changed.

``fails_cleanly`` runs the real CLI in-process (click's runner: no interpreter start-up per
case, so a corpus of hundreds stays fast); ``fails_cleanly_subprocess`` runs the installed
``tcpfair`` command for the cases that need a real process (signals, encodings of argv).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from click.testing import CliRunner

from tcpfair.cli import cli

TCPFAIR = Path(sys.executable).with_name("tcpfair")


def snapshot(*roots: Path) -> dict[str, tuple[str, int, str]]:
    """Every path under ``roots`` → (kind, mode, content hash); what "nothing changed" means."""
    out: dict[str, tuple[str, int, str]] = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            out[str(root)] = ("absent", 0, "")
            continue
        paths = [root, *sorted(root.rglob("*"))] if root.is_dir() else [root]
        for p in paths:
            st = p.lstat()
            if p.is_symlink():
                out[str(p)] = ("link", st.st_mode, os.readlink(p))
            elif p.is_dir():
                out[str(p)] = ("dir", st.st_mode, "")
            else:
                out[str(p)] = ("file", st.st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def _check(code: int, stderr: str, mentions: Iterable[str], what: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert code != 0, f"{what}: exit status 0 (stderr: {stderr!r})"
    assert "Traceback" not in stderr, f"{what}: traceback on stderr:\n{stderr}"
    assert len(lines) == 1, f"{what}: expected one line on stderr, got {len(lines)}:\n{stderr}"
    line = lines[0]
    assert "internal error" not in line, f"{what}: a bug reached the last guard: {line}"
    for m in mentions:
        assert m in line, f"{what}: {m!r} not in the error line {line!r}"
    return line


def fails_cleanly(
    args: Sequence[str],
    *,
    mentions: Iterable[str] = (),
    unchanged: Sequence[Path] = (),
    cwd: Path | None = None,
    code: int | None = 2,
    env: dict[str, str] | None = None,
) -> str:
    """Run ``tcpfair ARGS`` in-process; assert the failure promise; return the error line.

    ``code``: the exit status expected (2 = bad input, the CLI's convention), or None for
    "any non-zero". ``unchanged``: paths whose whole content must be the same afterwards.
    """
    before = snapshot(*unchanged)
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=True)
    finally:
        os.chdir(old)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(r.exception))
        raise AssertionError(f"tcpfair {' '.join(args)}: uncaught exception\n{tb}")
    line = _check(r.exit_code, r.stderr, mentions, f"tcpfair {' '.join(args)}")
    if code is not None:
        assert r.exit_code == code, f"exit status {r.exit_code}, expected {code}: {line}"
    assert snapshot(*unchanged) == before, f"tcpfair {' '.join(args)} changed stored files"
    return line


def fails_cleanly_subprocess(
    args: Sequence[str],
    *,
    mentions: Iterable[str] = (),
    unchanged: Sequence[Path] = (),
    cwd: Path | None = None,
    code: int | None = 2,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> str:
    """As ``fails_cleanly``, through the installed ``tcpfair`` command in a child process."""
    before = snapshot(*unchanged)
    p = subprocess.run(
        [str(TCPFAIR), *args],
        capture_output=True,
        text=True,
        errors="replace",
        cwd=cwd,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
    )
    line = _check(p.returncode, p.stderr, mentions, f"tcpfair {' '.join(args)}")
    if code is not None:
        assert p.returncode == code, f"exit status {p.returncode}, expected {code}: {line}"
    assert snapshot(*unchanged) == before, f"tcpfair {' '.join(args)} changed stored files"
    return line
