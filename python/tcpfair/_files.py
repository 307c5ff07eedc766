"""Reading input files with a size limit: a scenario or report given as ``/dev/zero``, a
FIFO that never ends or a multi-gigabyte file must fail with one line, not fill the memory."""

from __future__ import annotations

from pathlib import Path


class TooLargeError(ValueError):
    """The file holds more than the limit; the message gives the limit."""


def read_bytes_limited(path: Path, limit: int) -> bytes:
    """The file's bytes, or ``TooLargeError`` after ``limit`` bytes; OSError as ``open`` raises
    it. Reads a stream (FIFO, process substitution) as far as the limit, never further."""
    with path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLargeError(f"larger than {_size(limit)}")
    return data


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n} B"
