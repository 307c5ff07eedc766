"""Importers: other tools' output files into a ``RunResult``.

``load_files(paths, labels=None, align=True, include_all=False)`` picks the reader by each
file's content (and name): pcap/pcapng captures (``pcap``), Flent data files
(``flent``; ``.flent.gz``, ``.flent``) or iperf3 -J / --json-stream output (``iperf3``).
All files of one call must be of one kind. Errors are ``ImportFileError`` (a
``ValueError``) with one line naming the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..result import RunResult

__all__ = ["ImportFileError", "file_kind", "load_files"]

KINDS = ("iperf3", "capture", "flent")
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap")
FLENT_SUFFIXES = (".flent.gz", ".flent")


class ImportFileError(ValueError):
    """A file no importer can use; one line naming the file and the reason."""


def file_kind(path: Path) -> str:
    """``capture``, ``flent`` or ``iperf3``: by the name's suffix, else by the first bytes."""
    from .pcap import is_capture

    name = path.name.lower()
    if name.endswith(CAPTURE_SUFFIXES):
        return "capture"
    if name.endswith(FLENT_SUFFIXES):
        return "flent"
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError:
        return "iperf3"  # the iperf3 reader says why the file cannot be read
    if is_capture(head):
        return "capture"
    if head[:2] == b"\x1f\x8b":  # gzip: Flent writes its data files so
        return "flent"
    return "iperf3"


def run_clock(capture: Path) -> float | None:
    """The run's t = 0 (Unix seconds) when ``capture`` is the ``capture.pcap`` of a kernel
    run directory (``tcpfair run --capture``): from the ``summary.json`` beside it."""
    import json

    summary = capture.parent / "summary.json"
    try:
        meta = json.loads(summary.read_text())["meta"]
        cap = meta["capture"]
        if cap["file"] == capture.name:
            t0 = float(cap["t0_unix_s"])
            return t0 if t0 > 0 else None
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def load_files(
    paths: Sequence[str | Path],
    labels: Sequence[str] | None = None,
    align: bool = True,
    include_all: bool = False,
    interval_s: float | None = None,
) -> RunResult:
    """Read the files into one ``RunResult`` with the reader their kind needs.
    ``include_all`` and ``interval_s`` (default 1 s) apply to captures."""
    from .flent import FlentError, load_flent
    from .iperf3 import Iperf3Error, load_iperf3
    from .pcap import CaptureError, load_capture

    plist = [Path(p) for p in paths]
    kinds = [file_kind(p) for p in plist]
    if len(set(kinds)) > 1:
        listing = ", ".join(f"{p} ({k})" for p, k in zip(plist, kinds, strict=True))
        raise ImportFileError(
            f"files of different kinds: {listing}; give one kind per command "
            "(iperf3 JSON, captures or Flent files)"
        )
    lab = list(labels) if labels else None
    try:
        if kinds[0] == "capture":
            t_zero = run_clock(plist[0]) if align and len(plist) == 1 else None
            result = load_capture(
                plist,
                labels=lab,
                align=align,
                include_all=include_all,
                interval_s=1.0 if interval_s is None else interval_s,
                t_zero=t_zero,
            )
            if t_zero is not None:
                result.meta["notes"].append(
                    f"{plist[0]}: times are the kernel run's (t = 0 from the summary.json "
                    "beside it), so its measurement window applies"
                )
            return result
        if kinds[0] == "flent":
            return load_flent(plist, labels=lab, align=align)
        return load_iperf3(plist, labels=lab, align=align)
    except (CaptureError, FlentError, Iperf3Error) as e:
        raise ImportFileError(str(e)) from None
