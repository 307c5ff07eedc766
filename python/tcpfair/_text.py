"""Error text on one line, whatever the user gave.

A value a user typed (an option, a key of ``--set``, a path, an axis) is echoed into the
error about it. A value with a newline in it (``--x $'a\\nb'``) made that one error two lines,
and an escape sequence in it reached the terminal as it is. ``one_line`` writes every line
break and control character as its escape (``\\n``, ``\\x1b``), as ``repr`` would: applied
where a message is printed (``commands.friendly_errors``, the CLI's usage errors) and to
each problem of a multi-problem error (``SpecError``, ``SweepError``), whose own line breaks
separate the problems.
"""

from __future__ import annotations

import unicodedata


def one_line(text: str) -> str:
    """``text`` with every character that breaks a line (what ``str.splitlines`` splits on)
    or is a control character written as its escape; a tab stays."""
    if text.isprintable():
        return text
    return "".join(
        ch if ch == "\t" or unicodedata.category(ch) not in ("Cc", "Zl", "Zp") else repr(ch)[1:-1]
        for ch in text
    )


def count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1: "1 repeat", "2 repeats", "0 runs"."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"
