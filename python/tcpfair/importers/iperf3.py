"""Read ``iperf3 -J`` reports into the ``RunResult`` tables.

Two entry points:

``parse_iperf3(obj_or_text, label="iperf3", group=0, flow_offset=0, time_offset_s=0.0, source=None)``
    Pure parser (no file access), also used by the kernel backend. ``obj_or_text`` is one
    report already decoded (a ``dict``) or the raw text of an ``iperf3 -J`` output (``str`` or
    ``bytes``). Returns an ``Iperf3Tables`` with ``.flows`` and ``.samples`` DataFrames in the
    ``RunResult`` column layout (``tcpfair.result.FLOW_COLUMNS`` / ``SAMPLE_COLUMNS``; flows
    carry one extra column, ``sent_bytes``) and ``.info`` (version, role, congestion control,
    timestamp, notes). It unpacks as a pair: ``flows, samples = parse_iperf3(text)``.

    * every parallel stream (``-P N``) is one flow; streams are keyed by their ``socket``
      and numbered in the order of ``start.connected``; flow ids are ``flow_offset + k``
      (k = 0 … N−1), all in flow group ``group``; labels are ``label`` for a single stream
      and ``label[k+1]`` for parallel streams;
    * ``t_s`` is the end of each reporting interval plus ``time_offset_s`` (use it to place
      flows that started later on a common clock);
    * intervals with ``"omitted": true`` (``-O``) are skipped;
    * raises ``Iperf3Error`` (a ``ValueError``) with one line naming ``source`` and the
      reason for an ``"error"`` member, truncated or non-JSON text, an empty report, UDP or
      ``--bidir`` tests.

``load_iperf3(paths, labels=None, align=True)``
    Reads files; each file is one flow group, labelled by its file name or ``labels[i]``;
    returns a ``RunResult`` (``meta["backend"] == "iperf3"``).

Figures taken from a report (iperf3 3.1 – 3.17, client or server side, with or without ``-R``):

* samples (the local side's interval reports): ``bytes``, ``bits_per_second`` →
  ``throughput_bps``, ``seconds`` → ``dt_s``; on the sending side also ``retransmits``,
  ``snd_cwnd`` → ``cwnd_bytes`` and ``rtt`` (µs) → ``srtt_s``. The receiving side
  (a server, or a client with ``-R``) has no TCP_INFO figures: those columns are NaN.
* flows: ``bytes`` = bytes delivered (``end.streams[].receiver.bytes``; the sender's count
  when the receiver's is missing or zero, the sum of the intervals when ``end`` is missing);
  ``sent_bytes`` = ``end.streams[].sender.bytes`` (NaN when unknown); ``retransmits`` from
  the sender summary (NaN when unknown); ``mean_rtt_s`` = ``sender.mean_rtt`` (NaN when 0 or
  absent, as on the receiving side); ``cca`` = ``end.sender_tcp_congestion`` (``"unknown"``
  in reports older than iperf3 3.2 that lack it).

Quirks of real versions that are handled:

* several JSON objects in one file (iperf3 3.16/3.17 can print its report twice, and shell
  ``>>`` appends runs): the **last complete object** is used and a note says so; an
  incomplete object after it (an interrupted run) is ignored with a note;
* duplicate keys (e.g. ``sock_bufsize`` with ``-P -R`` in 3.12, two ``"error"`` members in
  newer versions): the **first** occurrence is kept, with a note;
* ``--json-stream`` output (3.17+, one ``{"event": …, "data": …}`` object per line) is
  assembled into the ``-J`` layout;
* missing fields on the receiver side and in old versions (``sender`` flags, ``rttvar``,
  ``pmtu``, ``snd_wnd``, ``*_tcp_congestion``): treated as unknown, never as zero.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._files import TooLargeError, read_bytes_limited
from ..result import FLOW_COLUMNS, SAMPLE_COLUMNS, RunResult

__all__ = ["Iperf3Error", "Iperf3Tables", "parse_iperf3", "decode_iperf3_text", "load_iperf3"]

#: flows columns produced by this importer: the RunResult layout plus the sender's byte count
IPERF3_FLOW_COLUMNS = [*FLOW_COLUMNS, "sent_bytes"]


class Iperf3Error(ValueError):
    """An iperf3 report that cannot be used; the message names the file and the reason."""


@dataclass
class Iperf3Tables:
    """What ``parse_iperf3`` returns: ``flows`` and ``samples`` tables plus ``info``."""

    flows: pd.DataFrame
    samples: pd.DataFrame
    info: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        yield self.flows
        yield self.samples


# ---------------------------------------------------------------------------- decoding
def decode_iperf3_text(
    text: str | bytes, source: str = "<iperf3 output>"
) -> tuple[dict[str, Any], list[str]]:
    """Decode iperf3 -J text into one report object and a list of notes.

    Several concatenated objects → the last complete one; duplicate keys → first wins.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Iperf3Error(
                f"{source}: not a text file (byte {e.start} is not UTF-8); expected iperf3 -J output"
            ) from None
    stripped = text.strip()
    if not stripped:
        raise Iperf3Error(f"{source}: the file is empty; expected the JSON report of iperf3 -J")
    if not stripped.startswith("{"):
        first = stripped.splitlines()[0][:60]
        raise Iperf3Error(
            f"{source}: not iperf3 JSON output (starts with {first!r}); run iperf3 with -J"
        )

    duplicates: list[str] = []

    def first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                if out[k] != v:  # identical repeats (3.12 with -P) are harmless; say nothing
                    duplicates.append(k)
                continue
            out[k] = v
        return out

    decoder = json.JSONDecoder(object_pairs_hook=first_wins)
    objects: list[Any] = []
    notes: list[str] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except RecursionError:
            raise Iperf3Error(
                f"{source}: JSON nested too deeply to be an iperf3 -J report"
            ) from None
        except json.JSONDecodeError as e:
            truncated = e.pos >= len(text.rstrip()) - 1 or "Unterminated" in e.msg
            if objects:
                notes.append(
                    f"ignored {'an incomplete' if truncated else 'an unreadable'} JSON object after "
                    f"the {_ordinal(len(objects))} one (line {e.lineno})"
                )
                break
            if truncated:
                raise Iperf3Error(
                    f"{source}: truncated JSON (the report ends at line {e.lineno} before it is complete; "
                    "was iperf3 interrupted?)"
                ) from None
            raise Iperf3Error(
                f"{source}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}"
            ) from None
        objects.append(obj)
    if all(isinstance(o, dict) and "event" in o for o in objects):
        return _from_json_stream(objects, notes), notes
    if len(objects) > 1:
        notes.append(f"holds {len(objects)} concatenated JSON reports; used the last complete one")
    if duplicates:
        names = ", ".join(sorted(set(duplicates)))
        notes.append(f"duplicate JSON keys with different values ({names}); kept the first of each")
    obj = objects[-1]
    if not isinstance(obj, dict):
        raise Iperf3Error(
            f"{source}: not an iperf3 report (the JSON is a {type(obj).__name__}, not an object)"
        )
    return obj, notes


def _from_json_stream(events: list[dict[str, Any]], notes: list[str]) -> dict[str, Any]:
    """Assemble the events of ``iperf3 --json-stream`` (3.17+; esnet/iperf#1098) into the
    layout of a ``-J`` report: one ``{"event": "start"|"interval"|"end"|"error", "data": …}``
    object per line. A stream cut short has no "end" event; then the intervals are used."""
    report: dict[str, Any] = {"intervals": []}
    for ev in events:
        kind, data = ev.get("event"), ev.get("data")
        if kind == "start" and "start" not in report:
            report["start"] = data
        elif kind == "interval":
            report["intervals"].append(data)
        elif kind == "end":
            report["end"] = data
        elif kind == "error" and "error" not in report:
            report["error"] = data
    notes.append(f"iperf3 --json-stream output ({len(events)} events)")
    return report


def _ordinal(k: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(k, f"{k}th")


# ---------------------------------------------------------------------------- parsing
def parse_iperf3(
    obj_or_text: dict[str, Any] | str | bytes,
    label: str = "iperf3",
    group: int = 0,
    flow_offset: int = 0,
    time_offset_s: float = 0.0,
    source: str | None = None,
) -> Iperf3Tables:
    """Turn one iperf3 -J report into ``flows``/``samples`` tables (see the module docstring)."""
    src = source or label
    if isinstance(obj_or_text, dict):
        obj, notes = obj_or_text, list[str]()
    else:
        obj, notes = decode_iperf3_text(obj_or_text, src)
    return _parse_report(obj, notes, label, group, flow_offset, float(time_offset_s), src)


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _num(x: Any) -> float:
    """A JSON number as float; anything else (missing, null, string) as NaN."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return math.nan
    return float(x)


#: Largest count (bytes, retransmits, cwnd) taken from a report: 1 EB, far above any real
#: test and below what the int64 columns hold.
MAX_COUNT = 1e18
#: Largest time (seconds) or RTT (µs) taken from a report: about 31 years.
MAX_TIME = 1e9
#: Largest report file read (a 300 s test with -P 128 at 0.1 s intervals is ~150 MB).
MAX_REPORT_BYTES = 1 << 29
#: Largest start timestamp (Unix seconds) taken from a report.
MAX_UNIX_S = 1e11


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


class _Fields:
    """Strict readers of the report's fields: a value of the wrong type or out of range is
    an ``Iperf3Error`` naming the file and the field's JSON path
    (``intervals[3].streams[0].bytes``);
    a missing or null optional field is unknown (NaN), never zero."""

    def __init__(self, src: str):
        self.src = src

    def fail(self, path: str, v: Any, expected: str) -> Iperf3Error:
        return Iperf3Error(f"{self.src}: {path} is {_short(v)}; expected {expected}")

    def number(
        self, d: dict[str, Any], key: str, path: str, hi: float = MAX_COUNT, required: bool = False
    ) -> float:
        v = d.get(key)
        if v is None:
            if required:
                raise Iperf3Error(f"{self.src}: {path}.{key} is missing; every report has it")
            return math.nan
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= hi:
            raise self.fail(f"{path}.{key}", v, f"a number from 0 to {hi:.0e}".replace("+", ""))
        return float(v)

    def obj(self, v: Any, path: str) -> dict[str, Any]:
        """An object, or {} when absent/null."""
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise self.fail(path, v, "an object")
        return v

    def array(self, v: Any, path: str) -> list[Any]:
        """A list, or [] when absent/null."""
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.fail(path, v, "a list")
        return v

    def socket(self, d: dict[str, Any], path: str) -> int:
        v = d.get("socket")
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(f"{path}.socket", v, "an integer socket number")
        return v


def _parse_report(
    obj: dict[str, Any],
    notes: list[str],
    label: str,
    group: int,
    flow_offset: int,
    t0: float,
    src: str,
) -> Iperf3Tables:
    if "error" in obj:
        raise Iperf3Error(f"{src}: iperf3 reported an error: {obj['error']}")
    start = obj.get("start")
    intervals = obj.get("intervals")
    if not isinstance(start, dict) or not isinstance(intervals, list):
        raise Iperf3Error(f"{src}: not an iperf3 -J report (no 'start' object or 'intervals' list)")
    test = _dict(start.get("test_start"))
    protocol = str(test.get("protocol", "TCP")).upper()
    if protocol == "TCP" and any(
        isinstance(s, dict) and ("jitter_ms" in s or "packets" in s)
        for iv in intervals
        if isinstance(iv, dict)
        # a "streams" that is not a list is refused below, naming its path
        for s in (iv["streams"] if isinstance(iv.get("streams"), list) else [])
    ):
        protocol = "UDP"
    if protocol != "TCP":
        raise Iperf3Error(
            f"{src}: a {protocol} test; fairness needs a TCP test (iperf3 without -u/--sctp)"
        )
    if test.get("bidir"):
        raise Iperf3Error(
            f"{src}: a bidirectional test (--bidir) is not supported; capture one direction per file"
        )
    if not intervals:
        raise Iperf3Error(f"{src}: the report has no measurement intervals (the test did not run)")

    is_server = "accepted_connection" in start or "connecting_to" not in start
    reverse = bool(test.get("reverse", 0))
    # The client sends unless -R; the server sends only with -R (iperf3 3.2+ also says so
    # per stream with "sender", which takes precedence below).
    local_sender_default = is_server == reverse

    # socket → stream index, in the order of start.connected
    fields = _Fields(src)
    order: dict[int, int] = {}
    for i, c in enumerate(fields.array(start.get("connected"), "start.connected")):
        sock = fields.socket(fields.obj(c, f"start.connected[{i}]"), f"start.connected[{i}]")
        order.setdefault(sock, len(order))

    rows: list[dict[str, Any]] = []
    n_omitted = 0
    local_sender = local_sender_default
    for i, iv in enumerate(intervals):
        iv_streams = fields.obj(iv, f"intervals[{i}]").get("streams")
        for j, s in enumerate(fields.array(iv_streams, f"intervals[{i}].streams")):
            path = f"intervals[{i}].streams[{j}]"
            s = fields.obj(s, path)
            sock = fields.socket(s, path)
            if s.get("omitted") is True:
                n_omitted += 1
                continue
            if sock not in order:
                order[sock] = len(order)
                notes.append(
                    f"stream with socket {sock} is not in start.connected; numbered after the others"
                )
            sender = s.get("sender")
            is_sender = local_sender_default if not isinstance(sender, bool) else sender
            local_sender = is_sender
            row = _interval_row(fields, s, path, is_sender)
            if row is None:
                continue
            row["flow"] = flow_offset + order[sock]
            row["t_s"] += t0
            rows.append(row)
    if n_omitted:
        notes.append(f"skipped {n_omitted} omitted interval reports (-O)")
    if not rows and n_omitted:
        raise Iperf3Error(f"{src}: every interval is marked omitted (-O covers the whole test)")
    if not order:
        raise Iperf3Error(f"{src}: the report names no TCP streams (empty 'intervals')")

    samples = pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
    samples = samples.astype({"flow": np.int64, "bytes": np.float64}).sort_values(
        ["flow", "t_s"], kind="stable"
    )
    if len(samples) and np.isnan(samples["bytes"].to_numpy()).any():
        raise Iperf3Error(f"{src}: an interval report has no 'bytes' figure")
    samples["bytes"] = samples["bytes"].astype(np.int64)
    samples = samples.reset_index(drop=True)

    end_obj = fields.obj(obj.get("end"), "end")
    end_streams: dict[int, dict[str, Any]] = {}
    for i, es in enumerate(fields.array(end_obj.get("streams"), "end.streams")):
        es = fields.obj(es, f"end.streams[{i}]")
        for side in ("sender", "receiver"):
            path = f"end.streams[{i}].{side}"
            part = fields.obj(es.get(side), path)
            if part:
                for key in ("bytes", "retransmits"):
                    fields.number(part, key, path)
                fields.number(part, "mean_rtt", path, hi=MAX_TIME)
                end_streams.setdefault(fields.socket(part, path), {})[side] = part
    if not end_streams:
        notes.append("no 'end' summary (interrupted run?); totals are the sums of the intervals")

    cca = end_obj.get("sender_tcp_congestion")
    cca = str(cca) if isinstance(cca, str) and cca else "unknown"
    n = len(order)
    flows_rows = []
    for sock, k in sorted(order.items(), key=lambda kv: kv[1]):
        fid = flow_offset + k
        mine = samples[samples["flow"] == fid]
        es = end_streams.get(sock, {})
        snd, rcv = _dict(es.get("sender")), _dict(es.get("receiver"))
        sent = _num(snd.get("bytes"))
        recv = _num(rcv.get("bytes"))
        if recv > 0:
            delivered = recv
        elif sent > 0:
            delivered = sent
        else:
            delivered = float(mine["bytes"].sum())
        retr = _num(snd.get("retransmits"))
        if math.isnan(retr) and mine["retransmits"].notna().any():
            retr = float(np.nansum(mine["retransmits"].to_numpy()))
        mean_rtt_us = _num(snd.get("mean_rtt"))
        if mean_rtt_us > 0:
            mean_rtt = mean_rtt_us / 1e6
        elif mine["srtt_s"].notna().any():
            mean_rtt = float(mine["srtt_s"].mean())
        else:
            mean_rtt = math.nan
        flows_rows.append(
            {
                "flow": fid,
                "group": group,
                "label": label if n == 1 else f"{label}[{k + 1}]",
                "cca": cca,
                "rtt_s": math.nan,
                "start_s": t0,
                "bytes": int(delivered),
                "retransmits": retr,
                "mean_rtt_s": mean_rtt,
                "sent_bytes": sent if sent > 0 else math.nan,
            }
        )
    flows = pd.DataFrame(flows_rows, columns=IPERF3_FLOW_COLUMNS).astype(
        {"flow": np.int64, "group": np.int64, "bytes": np.int64, "retransmits": np.float64}
    )
    ts = fields.obj(start.get("timestamp"), "start.timestamp")
    # Unix time; at most 1e11 s (the year 5138): a wild stamp would shift a file's samples
    # out of any window when files are aligned
    millis = fields.number(ts, "timemillisecs", "start.timestamp", hi=MAX_UNIX_S * 1e3)
    secs = fields.number(ts, "timesecs", "start.timestamp", hi=MAX_UNIX_S)
    if not math.isnan(millis):
        stamp, resolution = millis / 1e3, 1e-3
    elif not math.isnan(secs):
        stamp, resolution = secs, 1.0
    else:
        stamp, resolution = math.nan, math.nan
    version = str(start.get("version", ""))
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", version)
    info = {
        "source": src,
        "label": label,
        "group": group,
        "iperf3_version": m.group(1) if m else "unknown",
        "role": "server" if is_server else "client",
        "reverse": reverse,
        "local_side": "sender" if local_sender else "receiver",
        "num_streams": n,
        "cca": cca,
        "receiver_cca": str(end_obj.get("receiver_tcp_congestion", "unknown")),
        "duration_s": _num(test.get("duration")),
        "omit_s": _num(test.get("omit")),
        "timestamp_s": stamp,
        "timestamp_resolution_s": resolution,
        "time_offset_s": t0,
        "notes": notes,
    }
    return Iperf3Tables(flows=flows, samples=samples, info=info)


def _interval_row(
    fields: _Fields, s: dict[str, Any], path: str, is_sender: bool
) -> dict[str, Any] | None:
    """One interval report of one stream as a samples row (without ``flow``); None for a
    zero-length interval (iperf3 can close a test with one)."""
    end = fields.number(s, "end", path, hi=MAX_TIME, required=True)
    dt = fields.number(s, "seconds", path, hi=MAX_TIME)
    if math.isnan(dt):
        dt = end - fields.number(s, "start", path, hi=MAX_TIME, required=True)
        if dt < 0:
            raise fields.fail(f"{path}.start", s.get("start"), f"a time before its end ({end:g})")
    if dt == 0:
        return None
    nbytes = fields.number(s, "bytes", path, required=True)
    bps = fields.number(s, "bits_per_second", path)
    if math.isnan(bps):
        bps = nbytes * 8 / dt
    nan = math.nan
    rtt_us = fields.number(s, "rtt", path, hi=MAX_TIME) if is_sender else nan
    return {
        "t_s": end,
        "dt_s": dt,
        "bytes": nbytes,
        "throughput_bps": bps,
        "cwnd_bytes": fields.number(s, "snd_cwnd", path) if is_sender else nan,
        "srtt_s": rtt_us / 1e6 if rtt_us > 0 else nan,
        "retransmits": fields.number(s, "retransmits", path) if is_sender else nan,
    }


# ---------------------------------------------------------------------------- files
def read_text(path: str | Path) -> str:
    p = Path(path)
    try:
        data = read_bytes_limited(p, MAX_REPORT_BYTES)
    except TooLargeError as e:
        raise Iperf3Error(f"{p}: {e}, too large for an iperf3 -J report") from None
    except FileNotFoundError:
        raise Iperf3Error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise Iperf3Error(f"{p}: is a directory, expected an iperf3 -J output file") from None
    except OSError as e:
        raise Iperf3Error(f"{p}: cannot read ({e.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Iperf3Error(
            f"{p}: not a text file (byte {e.start} is not UTF-8); expected iperf3 -J output"
        ) from None


def load_iperf3(
    paths: str | Path | Sequence[str | Path],
    labels: Sequence[str] | None = None,
    align: bool = True,
) -> RunResult:
    """Read one or more iperf3 -J files into a ``RunResult``.

    Each file is one flow group (its parallel streams are its flows), labelled by the file
    name or by ``labels[i]``. With ``align`` (default) files whose reports started at
    different times are placed on one clock by their ``start.timestamp``: the earliest is
    t = 0. When a timestamp has whole seconds only (``timesecs``; newer versions also write
    ``timemillisecs``), start differences under 2 s are below its resolution and not
    shifted; a note says so.
    """
    from .. import __version__

    plist = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not plist:
        raise Iperf3Error("no iperf3 files given")
    if labels is not None and len(labels) != len(plist):
        raise Iperf3Error(f"{len(labels)} labels for {len(plist)} files; give one label per file")
    names = [p.name for p in plist]
    if labels is None:
        labels = [str(p) if names.count(p.name) > 1 else p.name for p in plist]
    decoded = []
    for p in plist:
        decoded.append(decode_iperf3_text(read_text(p), str(p)))

    parts: list[Iperf3Tables] = []
    offset = 0
    for i, (p, (obj, notes)) in enumerate(zip(plist, decoded, strict=True)):
        t = _parse_report(obj, list(notes), str(labels[i]), i, offset, 0.0, str(p))
        offset += len(t.flows)
        parts.append(t)
    general_notes: list[str] = []
    if align and len(parts) > 1:
        stamps = [t.info["timestamp_s"] for t in parts]
        if all(not math.isnan(s) for s in stamps):
            coarse = any(t.info["timestamp_resolution_s"] >= 1 for t in parts)
            t_min = min(stamps)
            for t, s in zip(parts, stamps, strict=True):
                off = s - t_min
                if coarse and off < 2.0:
                    if off > 0:
                        general_notes.append(
                            f"{t.info['source']}: started {off:g} s after the first by iperf3's whole-second "
                            "timestamp; below its resolution, not shifted"
                        )
                    continue
                if off > 0:
                    t.samples["t_s"] += off
                    t.flows["start_s"] += off
                    t.info["time_offset_s"] = off
                    general_notes.append(
                        f"{t.info['source']}: started {off:g} s after the first; times shifted"
                    )
        else:
            general_notes.append("some files have no start timestamp; not aligned in time")

    flows = pd.concat([t.flows for t in parts], ignore_index=True)
    samples = pd.concat([t.samples for t in parts], ignore_index=True)
    t_end = float(samples["t_s"].max()) if len(samples) else 0.0
    versions = sorted({t.info["iperf3_version"] for t in parts})
    files = [{k: v for k, v in t.info.items()} for t in parts]
    notes = [f"{t.info['source']}: {n}" for t in parts for n in t.info["notes"]] + general_notes
    meta = {
        "backend": "iperf3",
        "window": [0.0, t_end],
        "capacity_bps": None,
        "versions": {
            "tcpfair": __version__,
            "iperf3": versions[0] if len(versions) == 1 else versions,
        },
        "files": files,
        "notes": notes,
        "group_labels": {str(t.info["group"]): t.info["label"] for t in parts},
    }
    return RunResult(flows=flows, samples=samples, meta=meta)
