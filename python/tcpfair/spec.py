"""The experiment spec: TOML → validated ``Scenario`` → resolved, hashable form.

A scenario file describes a dumbbell bottleneck and the flows that share it (see
``docs/scenario.md``). Validation is strict: an unknown key, a bad unit or an impossible
value raises ``SpecError`` naming the dotted key (``flows.1.rtt``; flows count from 0),
the value, and what is allowed. ``Scenario.resolved()`` converts every quantity to integer
SI units and expands parallel streams into connections; its hash identifies the run.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from . import registry, units
from ._files import TooLargeError, read_bytes_limited
from .arrivals import MAX_ARRIVALS, Arrivals, Schedule, parse_arrivals, schedule
from .distributions import Varied, parse_varied, rng_for
from .outputs import name_problem
from .registry import STACKS

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = [
    "SpecError",
    "Scenario",
    "load_scenario",
    "apply_overrides",
    "STACKS",
    "DIRECTIONS",
    "PARAM_SHORTHANDS",
    "LINUX_RMEM",
    "LINUX_WMEM",
]

#: Per-flow keys kept as shorthands of ``params`` entries (``alpha = 2`` is
#: ``params = { alpha = 2 }``); which algorithms take them is the registry's business.
PARAM_SHORTHANDS: tuple[str, ...] = ("alpha", "beta", "gamma", "delta", "exact_base_rtt")

#: Largest ``cwnd_clamp`` (ns-2's ``window_``) under ``stack = "ns2"``: Vegas keeps a slot
#: per packet of the window (crates/sim/src/ns2/mod.rs ``MAX_WINDOW``).
NS2_MAX_WINDOW = 1 << 20

#: Which way a flow's data goes: from the sender side to the receiver side across the
#: forward bottleneck (the default), or back across the reverse one (docs/scenario.md).
DIRECTIONS: tuple[str, ...] = ("forward", "reverse")

#: Linux defaults for the maximum of net.ipv4.tcp_rmem / tcp_wmem (bytes).
LINUX_RMEM = 6291456
LINUX_WMEM = 4194304

#: Default per-packet random host delay at the sender (simulator only), in ns: each data
#: packet waits a further uniform [0, jitter] before its access link, FIFO kept. It breaks
#: the drop-tail phase effects of a deterministic simulator (Floyd & Jacobson 1992; see
#: docs/simulator.md and docs/validation.md D3-D4 for how the value was chosen).
DEFAULT_JITTER_NS = 120_000
#: Upper bound of ``jitter`` (a host delay, not a path property).
MAX_JITTER_NS = 1_000_000_000

# Bounds of every quantity (docs/scenario.md, "Bounds"). They keep each value inside what
# the simulator's integer types and the kernel's tc/sysctl take, and far from overflow in
# derived values (BDP, bytes delivered); each error names the key, the value and the range.
MIN_RATE_BPS, MAX_RATE_BPS = 1_000, 10**12  # 1 kbit/s – 1 Tbit/s
MAX_DURATION_NS = 86_400 * 10**9  # one day: every time in a scenario is at most this
MAX_RTT_NS = 60 * 10**9
MAX_SIZE_BYTES = 10**15  # a finite transfer (1 PB)
MIN_SOCKBUF_BYTES, MAX_SOCKBUF_BYTES = 4096, 2**31 - 1  # Linux: tcp_wmem min, INT_MAX
MAX_BUFFER_BYTES, MAX_BUFFER_PKTS, MAX_BUFFER_BDP = 10**12, 10**9, 1000
MAX_CWND_CLAMP = 2**32 - 1  # segments (the simulator's u32)
MAX_BURST_BYTES = 10**9  # tbf's token bucket (bottleneck.burst); tc takes a u32
MAX_NETEM_LATENCY_NS = 10**9  # bottleneck.netem_latency: a timer a second late is a stall
#: The most rows a run may record (connections × intervals + link samples): ~0.5 GB of
#: tables. ``measure.interval = "1ns"`` would otherwise fill the memory.
MAX_SAMPLE_ROWS = 10_000_000
#: Largest scenario or sweep file read: 16 MiB of TOML is far beyond any real one.
MAX_TOML_BYTES = 16 << 20


class SpecError(ValueError):
    """Invalid scenario. ``problems`` is a list of (key, value, message)."""

    def __init__(self, problems: list[tuple[str, Any, str]], source: str | None = None):
        self.problems = problems
        self.source = source
        from ._text import one_line

        lines = [  # each problem one line, whatever the key or message echoes
            one_line(
                f"{k}: {m}" + ("" if v is _MISSING or _echoed(v, m) else f" (got {_shown(v)})")
            )
            for k, v, m in problems
        ]
        head = f"invalid scenario {source}" if source else "invalid scenario"
        super().__init__(
            head + ":\n  " + "\n  ".join(lines) if len(lines) > 1 else f"{head}: {lines[0]}"
        )


_MISSING = object()


def _echoed(value: Any, message: str) -> bool:
    """The message shows the value already (``… got True``, ``cannot read {'a': 1}``)."""
    return message.endswith(f"got {value!r}") or (
        isinstance(value, dict | list) and repr(value) in message
    )


def _shown(value: Any, limit: int = 80) -> str:
    """A value as the error shows it: its repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 12]}... ({len(text)} chars)"


def _unit(
    parser: Any, lo: tuple[int, str] | None = None, hi: tuple[int, str] | None = None, **kw: Any
) -> BeforeValidator:
    """A quantity read by ``parser`` and checked against ``lo``/``hi`` = (value, as written)."""
    return BeforeValidator(_checker(parser, lo, hi, **kw))


def _checker(
    parser: Any, lo: tuple[int, str] | None = None, hi: tuple[int, str] | None = None, **kw: Any
) -> Any:
    def check(v: Any) -> int:
        try:
            n = int(parser(v, **kw))
        except units.UnitError as e:
            raise ValueError(str(e)) from None
        if (lo is not None and n < lo[0]) or (hi is not None and n > hi[0]):
            raise ValueError(f"out of range; allowed: {_range_text(lo, hi)}")
        return n

    return check


def _varied(parser: Any, floor: int, hi: tuple[int, str], fmt: Any, **kw: Any) -> BeforeValidator:
    """One value (checked as ``_unit`` does), a list, or a distribution (distributions.py);
    a distribution's min/max default to the quantity's bounds (``floor``, ``hi``)."""
    check = _checker(parser, None, hi, **kw)
    return BeforeValidator(lambda v: parse_varied(v, check, floor, hi[0], fmt))


def _range_text(lo: tuple[int, str] | None, hi: tuple[int, str] | None) -> str:
    if lo is not None and hi is not None:
        return f"{lo[1]} to {hi[1]}"
    return f"at least {lo[1]}" if lo is not None else f"at most {hi[1]}" if hi else "any"


_RATE_RANGE = {"lo": (MIN_RATE_BPS, "1kbit"), "hi": (MAX_RATE_BPS, "1Tbit")}
_TIME_MAX = (MAX_DURATION_NS, "86400s (one day)")
Rate = Annotated[int, _unit(units.parse_rate, **_RATE_RANGE)]
Time = Annotated[int, _unit(units.parse_time, hi=_TIME_MAX)]
PositiveTime = Annotated[int, _unit(units.parse_time, hi=_TIME_MAX, allow_zero=False)]
RttTime = Annotated[int, _unit(units.parse_time, hi=(MAX_RTT_NS, "60s"), allow_zero=False)]
Size = Annotated[int, _unit(units.parse_size)]
#: ``rtt``, ``start`` and ``size`` of a flow entry: a value, a list or a distribution.
VariedRtt = Annotated[
    int | Varied,
    _varied(units.parse_time, 1, (MAX_RTT_NS, "60s"), units.format_time, allow_zero=False),
]
VariedStart = Annotated[int | Varied, _varied(units.parse_time, 0, _TIME_MAX, units.format_time)]
VariedSize = Annotated[
    int | Varied,
    _varied(units.parse_size, 1, (MAX_SIZE_BYTES, "1e15B (1 PB)"), units.format_size),
]
TransferSize = Annotated[int, _unit(units.parse_size, hi=(MAX_SIZE_BYTES, "1e15B (1 PB)"))]
SockBuf = Annotated[
    int,
    _unit(
        units.parse_size,
        lo=(MIN_SOCKBUF_BYTES, "4096B"),
        hi=(MAX_SOCKBUF_BYTES, "2147483647B (2 GiB - 1)"),
    ),
]


_BUFFER_MAX = {
    "bytes": (MAX_BUFFER_BYTES, "1e12B (1 TB)"),
    "pkt": (MAX_BUFFER_PKTS, "1e9pkt"),
    "bdp": (MAX_BUFFER_BDP, "1000bdp"),
}


def _buffer(v: Any) -> units.Buffer:
    if isinstance(v, units.Buffer):
        return v
    try:
        b = units.parse_buffer(v)
    except units.UnitError as e:
        raise ValueError(str(e)) from None
    top, text = _BUFFER_MAX[b.kind]
    if b.value > top:
        raise ValueError(f"out of range; allowed: at most {text}")
    return b


MAX_LABEL_CHARS = 100


def label_problem(label: str) -> str | None:
    """Why ``label`` cannot name a flow in tables and figures, or None. Labels are drawn as
    plain text (``$`` is a dollar sign), one line each."""
    if not label.strip():
        return "a label must not be empty"
    if len(label) > MAX_LABEL_CHARS:
        return f"a label has at most {MAX_LABEL_CHARS} characters, this one {len(label)}"
    bad = next((c for c in label if not c.isprintable()), None)
    if bad is not None:
        return f"a label must be printable text on one line (it has {bad!r})"
    return None


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, arbitrary_types_allowed=True, strict=True
    )


class Red(_Strict):
    """Random Early Detection (Floyd & Jacobson 1993)."""

    kind: Literal["red"]
    min_th: Annotated[units.Buffer, BeforeValidator(_buffer)]
    max_th: Annotated[units.Buffer, BeforeValidator(_buffer)]
    max_p: float = Field(0.1, gt=0, le=1)
    wq: float = Field(0.002, gt=0, le=1)
    gentle: bool = False

    @model_validator(mode="after")
    def _thresholds(self) -> Red:
        if self.min_th.kind == "bdp" or self.max_th.kind == "bdp":
            raise ValueError("RED thresholds are given in packets ('15pkt') or bytes ('22KB')")
        if (self.min_th.kind == "pkt") != (self.max_th.kind == "pkt"):
            raise ValueError(
                "min_th and max_th must use the same unit (both packets or both bytes)"
            )
        if not 0 <= self.min_th.value < self.max_th.value:
            raise ValueError(
                f"need 0 <= min_th < max_th, got {self.min_th.value} and {self.max_th.value}"
            )
        return self


class DropTail(_Strict):
    kind: Literal["droptail"]


def _aqm(v: Any) -> Any:
    if isinstance(v, str):
        if v == "droptail":
            return {"kind": "droptail"}
        if v == "red":
            raise ValueError(
                '\'red\' needs thresholds: aqm = { kind = "red", min_th = "15pkt", max_th = "45pkt", max_p = 0.1 }'
            )
        raise ValueError("expected 'droptail' or a table { kind = \"red\", min_th, max_th, max_p }")
    if isinstance(v, dict) and v.get("kind") not in ("droptail", "red"):
        # pydantic's own words ("Unable to extract tag using discriminator") say neither
        # the key nor what is allowed, and show a kind with a newline raw
        got = f"unknown kind {v['kind']!r}" if "kind" in v else "the table has no kind"
        raise ValueError(
            f'{got}; allowed: kind = "droptail", or kind = "red" with min_th and max_th'
        )
    return v


AqmSpec = Annotated[DropTail | Red, BeforeValidator(_aqm), Field(discriminator="kind")]
BufferSpec = Annotated[units.Buffer, BeforeValidator(_buffer)]


class ReverseBottleneck(_Strict):
    """``[bottleneck.reverse]``: the bottleneck from the receiver side back to the sender
    side. Every key left out takes the forward bottleneck's value (a symmetric tbf on both
    router ports); the MTU is the forward one's."""

    rate: Rate | None = None
    buffer: BufferSpec | None = None
    #: the discriminator on the optional union itself: inside ``AqmSpec | None`` it was lost,
    #: and one bad RED key gave five lines saying kind should be 'droptail'
    aqm: Annotated[DropTail | Red | None, BeforeValidator(_aqm), Field(discriminator="kind")] = None
    loss: float | None = Field(None, ge=0, lt=1)


class Bottleneck(_Strict):
    rate: Rate
    buffer: BufferSpec = units.Buffer("bdp", 1.0)
    aqm: AqmSpec = DropTail(kind="droptail")
    loss: float = Field(0.0, ge=0, lt=1)
    mtu: Size = 1500
    reverse: ReverseBottleneck | None = None
    #: tbf's token bucket (``tc … tbf burst``): the link becomes a token-bucket shaper in
    #: front of an infinitely fast wire (a Mininet veth); None = a wire serializing at rate
    burst: Size | None = None
    #: the labs' tree: ``netem delay`` at the root, the tbf (``burst``) its child, so the
    #: packets netem releases at one instant all enter the tbf's backlog before it sends any
    netem_root: bool = False
    #: with netem_root: how late netem's watchdog runs after a packet is due; every packet
    #: due by then enters the tbf with it (0: at the due time, the slack the kernel asks for)
    netem_latency: Time = 0

    @field_validator("mtu")
    @classmethod
    def _mtu(cls, v: int) -> int:
        if not 576 <= v <= 65536:
            raise ValueError(f"mtu must be between 576B and 65536B, got {v}B")
        return v

    @field_validator("burst")
    @classmethod
    def _burst(cls, v: int | None, info: ValidationInfo) -> int | None:
        mtu = info.data.get("mtu", 1500)
        if v is not None and not mtu <= v <= MAX_BURST_BYTES:
            raise ValueError(
                f"{v}B is outside what tbf can pass; allowed: from the mtu ({mtu}B, one "
                f"full packet) to {MAX_BURST_BYTES}B (1 GB)"
            )
        return v

    @field_validator("netem_root")
    @classmethod
    def _netem_root(cls, v: bool, info: ValidationInfo) -> bool:
        # a burst that was refused is absent here: no second error for it
        if v and "burst" in info.data and info.data["burst"] is None:
            raise ValueError(
                "true needs bottleneck.burst: netem's child in the labs' tree is a tbf "
                '(set burst, e.g. burst = "5000000B" as the labs do), or drop netem_root'
            )
        return v

    @field_validator("netem_latency")
    @classmethod
    def _netem_latency(cls, v: int, info: ValidationInfo) -> int:
        # no second error when netem_root itself was refused (it is then absent here)
        if v and info.data.get("netem_root", True) is False:
            raise ValueError("needs netem_root = true (it is the latency of netem's watchdog)")
        if v > MAX_NETEM_LATENCY_NS:
            raise ValueError(
                f"{v / 1e6:g} ms is longer than netem's watchdog could run late; allowed: "
                f"0 to {MAX_NETEM_LATENCY_NS / 1e6:g} ms"
            )
        return v

    @model_validator(mode="after")
    def _netem_forward_only(self) -> Bottleneck:
        if self.netem_root and self.reverse is not None:
            raise ValueError(
                "bottleneck.netem_root is for the forward link only: drop bottleneck.reverse "
                "or netem_root"
            )
        return self


def _param_value(v: Any) -> Any:
    """A parameter shorthand (``alpha = 2``) is a number or true/false; its type for the
    algorithm is the registry's to check. A string was three lines, one per union branch
    ("alpha.bool: Input should be a valid boolean", ".int", ".float")."""
    if v is None or isinstance(v, bool | int | float):
        return v
    raise ValueError("expected a number or true/false (a parameter's value, e.g. alpha = 2)")


#: the value of a parameter shorthand (``alpha``, ``beta``, …)
ParamValue = Annotated[bool | int | float | None, BeforeValidator(_param_value)]


class Flow(_Strict):
    cca: str
    rtt: VariedRtt
    start: VariedStart = 0
    stop: Time | None = None
    streams: int = Field(1, ge=1, le=1024)
    size: VariedSize | None = None
    app_rate: Rate | None = None
    sack: bool = True
    rmem: SockBuf = LINUX_RMEM
    wmem: SockBuf = LINUX_WMEM
    cwnd_clamp: int | None = Field(None, ge=2, le=MAX_CWND_CLAMP)
    jitter: Time = DEFAULT_JITTER_NS
    ack_jitter: Time = 0
    label: str | None = None
    alpha: ParamValue = None
    beta: ParamValue = None
    gamma: ParamValue = None
    stack: str = "linux"
    delta: ParamValue = None
    exact_base_rtt: ParamValue = None
    #: the algorithm's parameters (crates/sim/src/cc/registry.rs; docs/scenario.md)
    params: dict[str, Any] = Field(default_factory=dict)
    delack: bool = False
    gso: bool = False
    direction: str = "forward"
    #: stack = "ns2": the sender's access-link rate (burst spacing); None: a burst at once
    access_rate: Rate | None = None
    #: short flows: an arrival process (arrivals.py); None: ``streams`` long-lived connections
    arrivals: Annotated[Arrivals | None, BeforeValidator(parse_arrivals)] = None

    @field_validator("cca")
    @classmethod
    def _cca(cls, v: str) -> str:
        if v not in registry.registry():
            # the stack is not known here (it may come later in the table): the default
            # stack's names, then those that exist only under ns-2's
            linux = registry.names("linux")
            ns2_only = [n for n in registry.names("ns2") if n not in linux]
            only = f'; under stack = "ns2" also {", ".join(ns2_only)}' if ns2_only else ""
            raise ValueError(f"unknown congestion control; allowed: {', '.join(linux)}{only}")
        return v

    @field_validator("stack")
    @classmethod
    def _stack(cls, v: str, info: ValidationInfo) -> str:
        if v not in STACKS:
            raise ValueError(f"unknown stack; allowed: {', '.join(STACKS)}")
        cca = info.data.get("cca")
        if cca is not None and registry.params_of(cca, v) is None:
            raise ValueError(
                f'congestion control {cca!r} does not exist under stack "{v}"; '
                f"allowed: {', '.join(registry.names(v))}"
            )
        if v != "ns2":
            return v
        clamp = info.data.get("cwnd_clamp")
        if clamp is not None and clamp > NS2_MAX_WINDOW:
            raise ValueError(
                f"cwnd_clamp (ns-2's window_) must be at most {NS2_MAX_WINDOW} packets under "
                f'stack = "ns2", got {clamp}'
            )
        for key in ("size", "app_rate"):
            if info.data.get(key) is not None:
                raise ValueError(
                    f'{key} is not supported under stack "ns2" (its FTP source is greedy); '
                    f'remove {key} or use stack = "linux"'
                )
        return v

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, v: Any) -> Any:
        if not isinstance(v, str) or v not in DIRECTIONS:
            raise ValueError(f"unknown direction; allowed: {', '.join(DIRECTIONS)}")
        return v

    @field_validator("delack")
    @classmethod
    def _delack(cls, v: bool, info: ValidationInfo) -> bool:
        # no second error when the stack itself was refused (it is then absent here)
        if v and info.data.get("stack", "ns2") != "ns2":
            raise ValueError(
                'delack (Agent/TCPSink/DelAck) applies under stack = "ns2" only; '
                "Linux receivers always delay ACKs"
            )
        return v

    @field_validator("access_rate")
    @classmethod
    def _access_rate(cls, v: int | None, info: ValidationInfo) -> int | None:
        # no second error when the stack itself was refused
        if v is not None and info.data.get("stack", "ns2") != "ns2":
            raise ValueError(
                'access_rate (the sender\'s access link, as in ns-2) applies under stack = "ns2" '
                "only; remove it for linux flows"
            )
        return v

    @field_validator("gso")
    @classmethod
    def _gso(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("stack") == "ns2":
            raise ValueError(
                'gso (GSO/TSO aggregates) applies under stack = "linux" only; '
                "ns-2's agents send one packet at a time"
            )
        return v

    @field_validator("label")
    @classmethod
    def _label(cls, v: str | None) -> str | None:
        problem = label_problem(v) if v is not None else None
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("jitter", "ack_jitter")
    @classmethod
    def _jitter(cls, v: int) -> int:
        if v > MAX_JITTER_NS:
            raise ValueError(
                f"must be at most 1s (a per-packet host delay), got {units.format_time(v)}"
            )
        return v

    @model_validator(mode="after")
    def _params(self) -> Flow:
        _check_params(self)
        if self.stop is not None and isinstance(self.start, int) and self.stop <= self.start:
            raise ValueError("stop must be after start")
        if self.arrivals is not None:
            self._short_flows()
        return self

    def _short_flows(self) -> None:
        """What an entry with ``arrivals`` needs (docs/scenario.md, "Short flows")."""
        if self.size is None:
            raise ValueError(
                "arrivals needs size (each short flow's transfer: one value, a list or a "
                'distribution, e.g. size = { dist = "pareto", mean = "100KB", shape = 1.2 })'
            )
        if self.streams != 1:
            raise ValueError(
                f"streams = {self.streams} with arrivals: each arrival opens one connection "
                "(set the rate instead); allowed: streams = 1 (the default)"
            )
        if not isinstance(self.start, int):
            raise ValueError(
                "start with arrivals is when the arrivals begin: one value, not a list or a "
                "distribution"
            )
        if self.app_rate is not None:
            raise ValueError(
                "app_rate is not supported with arrivals (a short flow sends its size as fast "
                "as TCP allows); allowed: no app_rate"
            )

    def written_params(self) -> dict[str, tuple[str, Any]]:
        """The algorithm's parameters as written: name → (key under the flow, value), from
        ``params`` and the shorthands (``alpha = 2``); ``exact_base_rtt = false`` is unset."""
        out = {name: (f"params.{name}", v) for name, v in self.params.items()}
        for name in PARAM_SHORTHANDS:
            v = getattr(self, name)
            if v is not None and not (name == "exact_base_rtt" and v is False):
                out.setdefault(name, (name, v))
        return out

    def cca_params(self) -> dict[str, float]:
        """The parameters as the simulator takes them (``cca_params``: floats, true = 1)."""
        return {name: float(v) for name, (_, v) in sorted(self.written_params().items())}


class ParamProblem(ValueError):
    """A bad entry of a flow's parameters: the key under the flow, the value as written
    (``_MISSING``: the message shows it) and what is wrong."""

    def __init__(self, key: str, value: Any, message: str):
        super().__init__(message)
        self.key, self.value, self.message = key, value, message


def _check_params(f: Flow) -> None:
    """Check ``f``'s parameters against the registry: declared for its algorithm under its
    stack, of the declared type, then ranges and the algorithm's rules (the simulator's)."""
    if registry.params_of(f.cca, f.stack) is None:
        # the stack validator catches this only when `stack` is written; with the default
        # it would reach the simulator's check and be blamed on `params`
        where = ", ".join(f'stack = "{s}"' for s in registry.registry()[f.cca].stacks)
        raise ParamProblem(
            "cca",
            f.cca,
            f'congestion control {f.cca!r} does not exist under stack "{f.stack}" (only '
            f"under {where}); allowed: {', '.join(registry.names(f.stack))}",
        )
    written = f.written_params()
    for name in PARAM_SHORTHANDS:
        if name in f.params and getattr(f, name) is not None:
            raise ParamProblem(
                name, getattr(f, name), f"set either {name} or params.{name}, not both"
            )
    declared = {p.name: p for p in registry.params_of(f.cca, f.stack) or ()}
    for name, (key, value) in written.items():
        p = declared.get(name)
        if p is None:
            raise ParamProblem(key, value, _unknown_param(f.cca, f.stack, name, declared))
        problem = registry.value_problem(p, value)
        if problem:
            raise ParamProblem(key, value, f"{f.cca} parameter {name}: {problem}")
    verdict = registry.check(f.cca, f.stack, f.cca_params())
    if verdict is not None:
        # the simulator's messages show the values themselves
        name, message = verdict
        key = written[name][0] if name in written else "params"
        raise ParamProblem(key, _MISSING, f"{f.cca} parameter {name}: {message}")


def _unknown_param(cca: str, stack: str, name: str, declared: dict[str, Any]) -> str:
    """The message for ``name``, not a parameter of ``cca`` under ``stack``: the allowed
    names, and where ``name`` does exist."""
    allowed = ", ".join(declared) or "none"
    msg = f'{cca} has no parameter {name!r} under stack = "{stack}"; allowed: {allowed}'
    other = [
        s for s, ps in registry.registry()[cca].stacks.items() if any(p.name == name for p in ps)
    ]
    if other:
        return msg + f' ({name} is a parameter of {cca} under stack = "{other[0]}")'
    owners = [
        c.name
        for c in registry.registry().values()
        if any(p.name == name for p in c.stacks.get(stack, ()))
    ]
    return msg + (f" ({name} is a parameter of {', '.join(owners)})" if owners else "")


def _labels(v: Any) -> Any:
    if v is None:
        return v
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
        raise ValueError(
            'expected a list of one or more [[flows]] labels, e.g. flows = ["high-speed"]'
        )
    return v


class Measure(_Strict):
    interval: PositiveTime = 1_000_000_000
    from_: Time = Field(0, alias="from")
    to: Time | None = None
    #: labels of the [[flows]] entries the headline metrics cover (None: every connection)
    flows: Annotated[list[str] | None, BeforeValidator(_labels)] = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)


def _resolved_aqm(aqm: DropTail | Red) -> dict[str, Any]:
    if isinstance(aqm, Red):
        return {
            "kind": "red",
            "min_th": float(aqm.min_th.value),
            "max_th": float(aqm.max_th.value),
            "max_p": aqm.max_p,
            "wq": aqm.wq,
            "bytes": aqm.min_th.kind == "bytes",
            "gentle": aqm.gentle,
        }
    return {"kind": "droptail"}


@dataclass(frozen=True)
class LinkParams:
    """One bottleneck in resolved units: exactly one of ``buffer_bytes``/``buffer_pkts`` is
    set. ``Scenario.reverse_link()`` gives the reverse one."""

    rate_bps: int
    buffer_bytes: int | None
    buffer_pkts: int | None
    aqm: DropTail | Red
    loss: float
    mtu_bytes: int

    def resolved(self) -> dict[str, Any]:
        """The ``bottleneck.reverse`` table of the resolved form (the MTU is the forward
        one's, so it is not repeated)."""
        return {
            "rate_bps": self.rate_bps,
            "buffer_bytes": self.buffer_bytes,
            "buffer_pkts": self.buffer_pkts,
            "aqm": _resolved_aqm(self.aqm),
            "loss": self.loss,
        }


class Scenario(_Strict):
    name: str = "scenario"
    duration: PositiveTime
    seed: int = Field(1, ge=0, lt=2**63)
    bottleneck: Bottleneck
    flows: list[Flow] = Field(min_length=1)
    measure: Measure = Measure.model_validate({})  # (mypy: Measure() lacks the "from" alias)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        problem = name_problem(v)  # the name becomes a folder: results/<name>-<hash>-<backend>
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _window(self) -> Scenario:
        to = self.window_end
        fmt = units.format_time
        if to > self.duration:
            raise ValueError(
                f"measure.to {fmt(to)} is after the end of the run ({fmt(self.duration)}); "
                "allowed: at most the duration"
            )
        if self.measure.from_ >= to and self.measure.to is None:
            # the window ends with the run: either key may be the one to change
            raise ValueError(
                f"measure.from {fmt(self.measure.from_)} is not before the end of the run "
                f"(duration = {fmt(self.duration)}), so nothing would be measured; allowed: "
                "a measure.from below the duration (or a longer duration)"
            )
        if self.measure.from_ >= to:
            raise ValueError(
                f"measure.from {fmt(self.measure.from_)} must be before measure.to ({fmt(to)}); "
                "allowed: a start before the end of the window"
            )
        for i, f in enumerate(self.flows):
            starts = self.entry_values(i)["start"]
            if max(starts) >= self.duration:
                drawn = "" if isinstance(f.start, int) else " (drawn for one of its connections)"
                raise ValueError(
                    f"flows.{i}.start {units.format_time(max(starts))}{drawn} is not before "
                    f"the end of the run ({units.format_time(self.duration)}); allowed: starts "
                    "before the end (a distribution's max bounds its draws)"
                )
            if f.stop is not None and f.stop <= max(starts):
                raise ValueError(
                    f"flows.{i}.stop {units.format_time(f.stop)} must be after start "
                    f"({units.format_time(max(starts))}, the latest of its connections)"
                )
        return self

    def measured_label_problem(self) -> str | None:
        """Why ``measure.flows`` does not name existing entries' labels, or None."""
        if self.measure.flows is None:
            return None
        short = set(self.short_flow_entries())
        labels = [self.group_label(g) for g in range(len(self.flows)) if g not in short]
        unknown = [x for x in self.measure.flows if x not in labels]
        only_short = [x for x in unknown if x in {self.group_label(g) for g in short}]
        if only_short:
            return (
                f"{', '.join(map(repr, only_short))} labels only short flows (arrivals), which "
                "are reported in the short-flows table, never in the headline metrics; "
                f"allowed: labels of long-lived entries ({', '.join(map(repr, labels))})"
            )
        if not unknown:
            return None
        return (
            f"no [[flows]] entry is labelled {', '.join(map(repr, unknown))}; allowed: labels "
            f"of the entries ({', '.join(map(repr, dict.fromkeys(labels)))})"
        )

    def entry_values(self, g: int) -> dict[str, list[Any]]:
        """The per-connection ``rtt``, ``start`` and ``size`` of entry ``g`` (ns, ns,
        bytes or None): a plain value repeated, a list cycled, or draws (distributions.py)."""
        f = self.flows[g]
        out: dict[str, list[Any]] = {}
        for key in ("rtt", "start", "size"):
            v = getattr(f, key)
            if isinstance(v, Varied):
                out[key] = v.draw(f.streams, rng_for(self.seed, g, key))
            else:
                out[key] = [v] * f.streams
        return out

    def distributions(self) -> dict[str, dict[str, Any]]:
        """``{"<entry>": {"rtt": <distribution>, ...}}`` for the entries with a list or a
        distribution (their resolved form, which the content hash covers)."""
        out: dict[str, dict[str, Any]] = {}
        for g, f in enumerate(self.flows):
            if f.arrivals is not None:  # in resolved()["arrivals"]
                continue
            d = {
                k: getattr(f, k).canonical()
                for k in ("rtt", "start", "size")
                if isinstance(getattr(f, k), Varied)
            }
            if d:
                out[str(g)] = d
        return out

    # ----------------------------------------------------------------- derived values
    @property
    def window_end(self) -> int:
        return self.measure.to if self.measure.to is not None else self.duration

    @property
    def mean_rtt_ns(self) -> float:
        """Mean base RTT of the flows (the reference for ``bdp`` buffers, as in Lab 11); an
        entry with a list or a distribution counts with the mean of its connections' RTTs.
        Entries with ``arrivals`` (short flows) count only when there is no other, with
        their distribution's mean."""
        short = set(self.short_flow_entries())
        if len(short) == len(self.flows):
            return sum(f.rtt if isinstance(f.rtt, int) else f.rtt.mean() for f in self.flows) / len(
                self.flows
            )
        import numpy as np

        per_entry = [
            f.rtt if isinstance(f.rtt, int) else float(np.mean(self.entry_values(g)["rtt"]))
            for g, f in enumerate(self.flows)
            if g not in short
        ]
        return sum(per_entry) / len(per_entry)

    @property
    def bdp_bytes(self) -> int:
        return round(self.bottleneck.rate / 8 * self.mean_rtt_ns / 1e9)

    def buffer_limits(self) -> tuple[int | None, int | None]:
        b = self.bottleneck
        return b.buffer.resolve(b.rate, self.mean_rtt_ns, b.mtu)

    @property
    def has_reverse(self) -> bool:
        """Whether the run has a reverse bottleneck: some flow is reverse or
        ``[bottleneck.reverse]`` is given. Without one, ACKs return without queue or loss."""
        return self.bottleneck.reverse is not None or any(
            f.direction == "reverse" for f in self.flows
        )

    def reverse_bottleneck(self) -> Bottleneck | None:
        """The reverse bottleneck in effect (each key of ``[bottleneck.reverse]`` left out
        takes the forward value; same MTU), or None when the run has none."""
        if not self.has_reverse:
            return None
        b = self.bottleneck
        r = b.reverse or ReverseBottleneck.model_validate({})
        given = {k: getattr(r, k) for k in ("rate", "buffer", "aqm", "loss")}
        return b.model_copy(
            update={k: v for k, v in given.items() if v is not None} | {"reverse": None}
        )

    def reverse_link(self) -> LinkParams | None:
        """The reverse bottleneck in resolved units (a ``bdp`` buffer: its rate × the same
        mean RTT as the forward one), or None when the run has none. The kernel backend
        builds its reverse port from this, the simulator from the resolved form."""
        rb = self.reverse_bottleneck()
        if rb is None:
            return None
        buf_bytes, buf_pkts = rb.buffer.resolve(rb.rate, self.mean_rtt_ns, rb.mtu)
        return LinkParams(rb.rate, buf_bytes, buf_pkts, rb.aqm, rb.loss, rb.mtu)

    def connections(self) -> list[dict[str, Any]]:
        """One entry per TCP connection (streams expanded), in the simulator's units."""
        out: list[dict[str, Any]] = []
        for g, f in enumerate(self.flows):
            if f.arrivals is not None:  # short flows: in resolved()["arrivals"]
                continue
            vals = self.entry_values(g)
            for k in range(f.streams):
                out.append(
                    {
                        "id": len(out),
                        "group": g,
                        "rtt_ns": vals["rtt"][k],
                        "start_ns": vals["start"][k],
                        "stop_ns": f.stop,
                        "size_bytes": vals["size"][k],
                        "app_rate_bps": f.app_rate,
                        **_tcp_params(f),
                    }
                )
        return out

    def arrival_window(self, g: int) -> tuple[int, int]:
        """[start, stop) of entry ``g``'s arrivals, ns (stop defaults to, and is capped at,
        the end of the run)."""
        f = self.flows[g]
        assert isinstance(f.start, int)
        return f.start, min(f.stop, self.duration) if f.stop is not None else self.duration

    def short_flow_schedule(self, g: int) -> Schedule:
        """The short flows of entry ``g`` (which has ``arrivals``): start, size and RTT of
        each, from the scenario's seed (arrivals.py) — what the simulator and the kernel
        backend's traffic generator run. ``.pairs()`` gives (start ns, size bytes)."""
        f = self.flows[g]
        if f.arrivals is None or f.size is None:
            raise ValueError(f"flows.{g} has no arrivals")
        lo, hi = self.arrival_window(g)
        return schedule(f.arrivals, lo, hi, f.size, f.rtt, self.seed, g)

    def short_flow_entries(self) -> list[int]:
        """Indices of the entries with ``arrivals``."""
        return [g for g, f in enumerate(self.flows) if f.arrivals is not None]

    def _arrivals_resolved(self) -> list[dict[str, Any]]:
        """The resolved form of each arrivals entry: the process and the distributions (what
        the content hash covers), not the draws."""
        out = []
        for g in self.short_flow_entries():
            f = self.flows[g]
            assert f.arrivals is not None
            lo, hi = self.arrival_window(g)
            out.append(
                {
                    "group": g,
                    **f.arrivals.canonical(),
                    "start_ns": lo,
                    "stop_ns": hi,
                    "rtt": f.rtt.canonical() if isinstance(f.rtt, Varied) else f.rtt,
                    "size": f.size.canonical() if isinstance(f.size, Varied) else f.size,
                    **_tcp_params(f),
                }
            )
        return out

    def group_label(self, g: int) -> str:
        f = self.flows[g]
        return f.label or f"{g}:{f.cca}"

    def resolved(self) -> dict[str, Any]:
        """Canonical resolved scenario: integer SI units, streams expanded. JSON-serialisable."""
        b = self.bottleneck
        buf_bytes, buf_pkts = self.buffer_limits()
        out: dict[str, Any] = {
            "name": self.name,
            "duration_ns": self.duration,
            "seed": self.seed,
            "bottleneck": {
                "rate_bps": b.rate,
                "buffer_bytes": buf_bytes,
                "buffer_pkts": buf_pkts,
                "aqm": _resolved_aqm(b.aqm),
                "loss": b.loss,
                "mtu_bytes": b.mtu,
                # present only when used (earlier scenarios keep their hash)
                **({"burst_bytes": b.burst} if b.burst is not None else {}),
                **({"netem_root": True} if b.netem_root else {}),
                **({"netem_latency_ns": b.netem_latency} if b.netem_latency else {}),
            },
            "flows": self.connections(),
            "measure": {
                "interval_ns": self.measure.interval,
                "from_ns": self.measure.from_,
                "to_ns": self.window_end,
            },
        }
        rev = self.reverse_link()
        if rev is not None:  # present only when used (earlier scenarios keep their hash)
            out["bottleneck"]["reverse"] = rev.resolved()
        # added in session 3, present only when used (earlier scenarios keep their hash)
        dists = self.distributions()
        if dists:
            out["distributions"] = dists
        if self.measure.flows is not None:
            out["measure"]["flows"] = list(self.measure.flows)
        if self.short_flow_entries():  # added in session 4, present only when used
            out["arrivals"] = self._arrivals_resolved()
        return out

    def to_json(self) -> str:
        return json.dumps(self.resolved(), sort_keys=True, separators=(",", ":"))

    def sim_json(self) -> str:
        """The simulator's config: the resolved form without the keys it does not read
        (the distributions behind the drawn values, the measured labels)."""
        r = self.resolved()
        r.pop("distributions", None)
        r["measure"].pop("flows", None)
        if r.pop("arrivals", None) is not None:
            r["short_flows"] = [self._short_flows_config(g) for g in self.short_flow_entries()]
        return json.dumps(r, sort_keys=True, separators=(",", ":"))

    def _short_flows_config(self, g: int) -> dict[str, Any]:
        """An arrivals entry as the simulator takes it: the TCP settings once, and the
        schedule as three arrays (crates/sim/src/config.rs ``ShortFlowsConfig``)."""
        sch = self.short_flow_schedule(g)
        return {
            "group": g,
            **_tcp_params(self.flows[g]),
            "start_ns": sch.start_ns.tolist(),
            "size_bytes": sch.size_bytes.tolist(),
            "rtt_ns": sch.rtt_ns.tolist(),
        }

    def hash(self) -> str:
        """Content hash of the resolved scenario (name excluded: it does not change the run).
        For an entry with a list or a distribution the hash covers the distribution (in
        ``distributions``), not the values drawn from it."""
        r = self.resolved()
        r.pop("name")
        for g, keys in r.get("distributions", {}).items():
            for c in r["flows"]:
                if c["group"] == int(g):
                    for k in keys:
                        c[{"rtt": "rtt_ns", "start": "start_ns", "size": "size_bytes"}[k]] = None
        text = json.dumps(r, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The scenario as the user would write it (unit strings), for saving and re-loading."""
        return _as_written(self)

    def with_seed(self, seed: int) -> Scenario:
        return self.model_copy(update={"seed": seed})


def _tcp_params(f: Flow) -> dict[str, Any]:
    """The TCP settings of each connection of an entry, in the simulator's units. The keys
    added since session 2 appear only when not at their default (earlier content hashes
    and stored sweep results stay valid)."""
    out: dict[str, Any] = {
        "cca": f.cca,
        "cca_params": f.cca_params(),
        "sack": f.sack,
        "rmem_bytes": f.rmem,
        "wmem_bytes": f.wmem,
        "cwnd_clamp": f.cwnd_clamp,
        "jitter_ns": f.jitter,
    }
    if f.ack_jitter:
        out["ack_jitter_ns"] = f.ack_jitter
    if f.stack != "linux":
        out["stack"] = f.stack
    if f.delack:
        out["delack"] = True
    if f.gso:
        out["gso"] = True
    if f.direction != "forward":
        out["direction"] = f.direction
    if f.access_rate is not None:
        out["access_rate_bps"] = f.access_rate
    return out


def _as_written(s: Scenario) -> dict[str, Any]:
    def buf(b: units.Buffer) -> str:
        return {"bytes": f"{int(b.value)}B", "pkt": f"{int(b.value)}pkt", "bdp": f"{b.value:g}bdp"}[
            b.kind
        ]

    def aqm(a: DropTail | Red) -> Any:
        if not isinstance(a, Red):
            return "droptail"
        return {
            "kind": "red",
            "min_th": buf(a.min_th),
            "max_th": buf(a.max_th),
            "max_p": a.max_p,
            "wq": a.wq,
            "gentle": a.gentle,
        }

    b = s.bottleneck
    flows = []
    for f in s.flows:
        d: dict[str, Any] = {
            "cca": f.cca,
            "rtt": f.rtt.written("ns") if isinstance(f.rtt, Varied) else f"{f.rtt}ns",
            "start": f.start.written("ns") if isinstance(f.start, Varied) else f"{f.start}ns",
            "streams": f.streams,
            "sack": f.sack,
            "rmem": f"{f.rmem}B",
            "wmem": f"{f.wmem}B",
            "jitter": f"{f.jitter}ns",
        }
        if f.ack_jitter:
            d["ack_jitter"] = f"{f.ack_jitter}ns"
        if f.stack != "linux":
            d["stack"] = f.stack
        if f.params:
            d["params"] = dict(f.params)
        if f.delack:
            d["delack"] = True
        if f.gso:
            d["gso"] = True
        if f.direction != "forward":
            d["direction"] = f.direction
        if f.access_rate is not None:
            d["access_rate"] = f"{f.access_rate}bit"
        if f.arrivals is not None:
            d["arrivals"] = f.arrivals.written()
        for k in ("stop",):
            if getattr(f, k) is not None:
                d[k] = f"{getattr(f, k)}ns"
        if f.size is not None:
            d["size"] = f.size.written("B") if isinstance(f.size, Varied) else f"{f.size}B"
        if f.app_rate is not None:
            d["app_rate"] = f"{f.app_rate}bit"
        for k in ("cwnd_clamp", "label", *PARAM_SHORTHANDS):
            if getattr(f, k) is not None:
                d[k] = getattr(f, k)
        flows.append(d)
    bottleneck: dict[str, Any] = {
        "rate": f"{b.rate}bit",
        "buffer": buf(b.buffer),
        "aqm": aqm(b.aqm),
        "loss": b.loss,
        "mtu": f"{b.mtu}B",
    }
    if b.burst is not None:
        bottleneck["burst"] = f"{b.burst}B"
    if b.netem_root:
        bottleneck["netem_root"] = True
    if b.netem_latency:
        bottleneck["netem_latency"] = f"{b.netem_latency}ns"
    if b.reverse is not None:
        r = b.reverse
        bottleneck["reverse"] = {
            k: v
            for k, v in (
                ("rate", None if r.rate is None else f"{r.rate}bit"),
                ("buffer", None if r.buffer is None else buf(r.buffer)),
                ("aqm", None if r.aqm is None else aqm(r.aqm)),
                ("loss", r.loss),
            )
            if v is not None
        }
    return {
        "name": s.name,
        "duration": f"{s.duration}ns",
        "seed": s.seed,
        "bottleneck": bottleneck,
        "flows": flows,
        "measure": {
            "interval": f"{s.measure.interval}ns",
            "from": f"{s.measure.from_}ns",
            "to": f"{s.window_end}ns",
            **({"flows": list(s.measure.flows)} if s.measure.flows is not None else {}),
        },
    }


# --------------------------------------------------------------------------- loading
def _loc_to_key(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, str) and (
            p in ("DropTail", "Red", "droptail", "red") or p.startswith("function-")
        ):
            continue  # union-branch tags pydantic adds to locations
        parts.append("from" if p == "from_" else str(p))
    return ".".join(parts)


def _lookup(data: Any, loc: tuple[Any, ...]) -> Any:
    cur = data
    for p in loc:
        p = "from" if p == "from_" else p
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and isinstance(p, int) and p < len(cur):
            cur = cur[p]
        else:
            continue
    return cur


def _message(err: ErrorDetails) -> str:
    t = err["type"]
    if t == "extra_forbidden":
        return "unknown key"
    if t == "missing":
        return "required key is missing"
    if t in ("model_type", "model_attributes_type", "dict_type"):
        loc = tuple(err["loc"])
        if loc and loc[-1] == "aqm":  # a union: its keys depend on kind
            return 'not a table; allowed: a table with kind = "droptail" or kind = "red"'
        keys = _table_keys(loc)
        return "not a table; allowed: a table of keys" + (f" ({', '.join(keys)})" if keys else "")
    plain = _plain_message(err)
    if plain is not None:
        return plain
    msg = str(err["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    return msg


#: pydantic's plain type and range errors (a leaf's value of the wrong kind or out of its
#: bounds): what is wrong in the project's words; "; allowed: …" follows from the field
_PLAIN_TYPES = {
    "int_type": "not a whole number",
    "int_parsing": "not a whole number",
    "int_parsing_size": "not a whole number of a usable size",
    "int_from_float": "not a whole number",
    "float_type": "not a number",
    "float_parsing": "not a number",
    "finite_number": "not a finite number",
    "bool_type": "not true or false",
    "bool_parsing": "not true or false",
    "string_type": "not a string",
    "list_type": "not a list",
    "greater_than": "out of range",
    "greater_than_equal": "out of range",
    "less_than": "out of range",
    "less_than_equal": "out of range",
}


def _plain_message(err: ErrorDetails) -> str | None:
    """pydantic's own wording ("Input should be a valid integer", "… less than or equal to
    1") as the hand-written messages read: what is wrong; allowed: what the key takes (its
    kind and bounds, read from the field). None for the other errors."""
    t = err["type"]
    ctx = err.get("ctx", {})
    if t in ("too_short", "too_long"):
        n = ctx.get("min_length" if t == "too_short" else "max_length")
        entries = "entry" if n == 1 else "entries"
        bound = "at least" if t == "too_short" else "at most"
        have = ctx.get("actual_length")
        return f"{have} entries; allowed: {bound} {n} {entries}"
    if t == "literal_error":
        return f"not allowed; allowed: {ctx.get('expected', '?')}"
    what = _PLAIN_TYPES.get(t)
    if what is None:
        return None
    value = err.get("input")
    if isinstance(value, float) and not math.isfinite(value):
        what = "not a finite number"  # pydantic calls nan "out of range"
    return f"{what}; allowed: {_allowed_for(tuple(err['loc']), t)}"


def _allowed_for(loc: tuple[Any, ...], err_type: str) -> str:
    """What the field at ``loc`` takes: its kind, and its bounds (the Field's ge/gt/le/lt)."""
    field = _field_at(loc)
    annotation = field.annotation if field is not None else None
    kinds = set()
    import typing

    for a in (annotation, *typing.get_args(annotation)):
        if a in (int, float, bool, str):
            kinds.add(a)
    if bool in kinds or err_type.startswith("bool"):
        return "true or false"
    if str in kinds or err_type == "string_type":
        return "a string in quotes"
    if err_type == "list_type":
        entries = _model_in(annotation) if annotation is not None else None
        name = next((p for p in reversed(loc) if isinstance(p, str)), "")
        return f"a list of tables ([[{name}]] entries)" if entries is not None else "a list"
    whole = int in kinds or (not kinds and err_type.startswith("int"))
    noun = "a whole number" if whole else "a number"
    lo = hi = ""
    for m in field.metadata if field is not None else ():
        for attr, text in (("ge", "at least"), ("gt", "above"), ("le", "at most"), ("lt", "below")):
            bound = getattr(m, attr, None)
            if bound is None:
                continue
            if whole and attr == "lt":
                attr, text, bound = "le", "at most", bound - 1
            if whole and attr == "gt":
                attr, text, bound = "ge", "at least", bound + 1
            if attr in ("ge", "gt"):
                lo = f"{text} {bound:g}" if isinstance(bound, float) else f"{text} {bound}"
            else:
                hi = f"{text} {bound:g}" if isinstance(bound, float) else f"{text} {bound}"
    if whole and lo.startswith("at least") and hi.startswith("at most"):
        return f"{noun} from {lo[len('at least ') :]} to {hi[len('at most ') :]}"
    return " ".join(x for x in (noun, lo, "and" if lo and hi else "", hi) if x)


def _field_at(loc: tuple[Any, ...]) -> Any:
    """The pydantic FieldInfo of the scenario key at ``loc``, or None."""
    model: Any = Scenario
    field: Any = None
    for p in loc:
        if isinstance(p, int) or (isinstance(p, str) and p.startswith("function-")):
            continue
        tagged = {"red": Red, "Red": Red, "droptail": DropTail, "DropTail": DropTail}.get(p)
        if tagged is not None:
            model = tagged
            continue
        if model is None:
            return None
        fields = model.model_fields
        field = fields.get(p) or next((f for f in fields.values() if f.alias == p), None)
        if field is None:
            return None
        model = _model_in(field.annotation)
    return field


def _table_keys(loc: tuple[Any, ...]) -> list[str] | None:
    """The keys allowed in the table at ``loc`` (a pydantic location without the key), or
    None when it is not one of the scenario's tables."""
    model: Any = Scenario
    for p in loc:
        if isinstance(p, int) or (isinstance(p, str) and p.startswith("function-")):
            continue
        tagged = {"red": Red, "Red": Red, "droptail": DropTail, "DropTail": DropTail}.get(p)
        if tagged is not None:  # the union branch pydantic names in the location
            model = tagged
            continue
        fields = model.model_fields
        field = fields.get(p) or next((f for f in fields.values() if f.alias == p), None)
        model = None if field is None else _model_in(field.annotation)
        if model is None:
            return None
    return [f.alias or name for name, f in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The first model class in a field's annotation (``list[Flow]``, ``X | None``)."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _unknown_key_message(name: str, allowed: list[str] | None) -> str:
    """``unknown key``, the key it is likely a misspelling of, and the keys allowed there."""
    if not allowed:
        return "unknown key"
    import difflib

    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key{hint}; allowed: {', '.join(allowed)}"


def _without_misspelling_echoes(problems: list[tuple[str, Any, str]]) -> list[tuple[str, Any, str]]:
    """``problems`` without those a misspelled key causes in its table: ``rtts = "20ms"`` is
    one problem (an unknown key that is likely ``rtt``), not also "rtt: required key is
    missing" (or a neighbour's "needs burst") — so a typo is one line, not a puzzle."""
    echoes: set[int] = set()
    for key, _, msg in problems:
        meant = re.match(r"unknown key \(did you mean '([^']+)'\?\)", msg)
        if meant is None:
            continue
        table, _, _ = key.rpartition(".")
        prefix = f"{table}." if table else ""
        word = re.compile(rf"\b{re.escape(meant.group(1))}\b")
        for i, (k, _, m) in enumerate(problems):
            sibling = k.startswith(prefix) and "." not in k[len(prefix) :]
            if (
                sibling
                and not m.startswith("unknown key")
                and (k == prefix + meant.group(1) or word.search(m))
            ):
                echoes.add(i)
    return [p for i, p in enumerate(problems) if i not in echoes]


def from_dict(data: dict[str, Any], source: str | None = None) -> Scenario:
    """Validate a scenario given as a dict (the parsed TOML)."""
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = tuple(err["loc"])
            value = err.get("input", _MISSING) if err["type"] != "missing" else _MISSING
            if isinstance(value, dict) and err["type"] not in ("extra_forbidden", *_PLAIN_TYPES):
                # a table's own check gets the whole table (not the user's value); a table
                # given for a value (measure.flows = { a = 1 }) is shown
                field = _field_at(loc)
                if field is None or _model_in(field.annotation) is not None:
                    value = _MISSING
            key, msg = _loc_to_key(loc), _message(err)
            if err["type"] == "extra_forbidden":
                msg = _unknown_key_message(str(loc[-1]), _table_keys(loc[:-1]))
            problem = err.get("ctx", {}).get("error")
            if isinstance(problem, ParamProblem):
                key, value, msg = f"{key}.{problem.key}", problem.value, problem.message
            if not key:  # a check across keys (Scenario._window) names its key first
                named = re.match(
                    r"(flows\.\d+\.(?:start|stop)|measure\.(?:from|to)) (.*)", msg, re.S
                )
                key, msg = (named.group(1), named.group(2)) if named else ("(scenario)", msg)
            problems.append((key, value, msg))
        raise SpecError(_without_misspelling_echoes(problems), source) from None
    problems = _derived_limits(sc, data)
    if problems:
        raise SpecError(problems, source)
    return sc


def _written(data: Any, *keys: str | int) -> Any:
    """The value as the user wrote it at ``keys`` (for error messages), or _MISSING."""
    cur = data
    for k in keys:
        try:
            cur = cur[k]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return cur


def _derived_limits(sc: Scenario, data: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """Checks across keys: the resolved buffer, RED thresholds within it, the sampling grid."""
    problems: list[tuple[str, Any, str]] = []
    b = sc.bottleneck
    buf_bytes, buf_pkts = sc.buffer_limits()
    if buf_bytes is not None and buf_bytes > MAX_BUFFER_BYTES:
        problems.append(
            (
                "bottleneck.buffer",
                _written(data, "bottleneck", "buffer"),
                f"resolves to {buf_bytes}B (rate × mean RTT × factor); allowed: at most "
                f"{_BUFFER_MAX['bytes'][1]}",
            )
        )
    if b.burst is not None and (
        (buf_pkts is not None and buf_pkts < 1) or (buf_bytes is not None and buf_bytes < b.mtu)
    ):
        # the token-bucket shaper holds the packet waiting for tokens in the buffer: with
        # less than one packet of it every packet is dropped (a run of zeros, JFI nan)
        have = f"{buf_pkts}pkt" if buf_pkts is not None else f"{buf_bytes}B"
        problems.append(
            (
                "bottleneck.buffer",
                _written(data, "bottleneck", "buffer"),
                f"{have} is less than one packet, and with bottleneck.burst (tbf) the packet "
                "waiting for tokens counts in the buffer: every packet would be dropped; "
                f"allowed: at least 1pkt (the mtu, {b.mtu}B)",
            )
        )
    if isinstance(b.aqm, Red):
        problems += _red_within_buffer(b.aqm, buf_bytes, buf_pkts, b.mtu, data)
    problems += _reverse_limits(sc, data)
    problems += _labels_within_one_direction(sc, data)
    m = sc.measure
    if sc.window_end - m.from_ < m.interval:
        problems.append(
            (
                "measure.interval",
                _written(data, "measure", "interval"),
                f"longer than the measurement window ({units.format_time(m.from_)} to "
                f"{units.format_time(sc.window_end)}"
                + (", the end of the run: duration" if m.to is None else "")
                + "): no interval would lie in it; allowed: an interval no longer than "
                "measure.to - measure.from (or a longer window)",
            )
        )
    problems += _arrival_limits(sc, data)
    label_problem = sc.measured_label_problem()
    if label_problem:
        problems.append(("measure.flows", _written(data, "measure", "flows"), label_problem))
    elif not problems:
        problems += _idle_window(sc, data)
    n_int, n_conn, rows = sample_rows(sc)
    if rows > MAX_SAMPLE_ROWS:
        per = rows // n_int  # connections + links
        # ceil(duration / i) · per <= MAX  ⇔  i >= duration / floor(MAX / per)
        shortest = -(-sc.duration // (MAX_SAMPLE_ROWS // per))
        links = "the link" if per == n_conn + 1 else "the two links"
        problems.append(
            (
                "measure.interval",
                _written(data, "measure", "interval"),
                f"would record {rows:,} samples ({n_int:,} intervals × ({n_conn} connections "
                f"+ {links})); allowed: at most {MAX_SAMPLE_ROWS:,}, so an interval of at "
                f"least {units.format_time(shortest)} for this duration",
            )
        )
    return problems


def _idle_window(sc: Scenario, data: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """The headline metrics cover the measured entries (``measure.flows``, else every
    long-lived entry) over the window: when none of them sends in it — each stops by
    measure.from or starts at or after measure.to — every number would be 0 or nan."""
    lo, hi = sc.measure.from_, sc.window_end
    measured = [
        g
        for g, f in enumerate(sc.flows)
        if f.arrivals is None
        and (sc.measure.flows is None or sc.group_label(g) in sc.measure.flows)
    ]
    if not measured:
        return []
    for g in measured:
        f = sc.flows[g]
        if not ((f.stop is not None and f.stop <= lo) or min(sc.entry_values(g)["start"]) >= hi):
            return []  # this one sends in the window
    fmt = units.format_time
    g = measured[0]
    f = sc.flows[g]
    why = (
        f"stops at {fmt(f.stop)}"
        if f.stop is not None and f.stop <= lo
        else f"starts at {fmt(min(sc.entry_values(g)['start']))}"
    )
    which = "the measured flows (measure.flows) are" if sc.measure.flows else "every flow is"
    key = f"flows.{g}.stop" if why.startswith("stops") else f"flows.{g}.start"
    return [
        (
            key,
            _written(data, "flows", g, key.rsplit(".", 1)[1]),
            f"{which} outside the measurement window ({fmt(lo)} to {fmt(hi)}; this one "
            f"{why}): every metric would be 0 or nan; allowed: flows that send in the window "
            "(a later stop, an earlier start, or another window)",
        )
    ]


def _arrival_limits(sc: Scenario, data: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """Each arrivals entry expects at most MAX_ARRIVALS short flows (rate × window)."""
    problems = []
    for g in sc.short_flow_entries():
        a = sc.flows[g].arrivals
        assert a is not None
        lo, hi = sc.arrival_window(g)
        expected = a.rate * (hi - lo) / 1e9
        if expected > MAX_ARRIVALS:
            problems.append(
                (
                    f"flows.{g}.arrivals.rate",
                    _written(data, "flows", g, "arrivals", "rate"),
                    f"expects {expected:,.0f} short flows between {units.format_time(lo)} and "
                    f"{units.format_time(hi)}; allowed: at most {MAX_ARRIVALS:,} per entry "
                    "(a lower rate or a shorter window)",
                )
            )
    return problems


def _reverse_limits(sc: Scenario, data: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """The reverse bottleneck's resolved buffer and RED thresholds, checked as the forward
    ones are; an inherited value is named by the key it comes from."""
    rev = sc.reverse_link()
    if rev is None:
        return []
    given = sc.bottleneck.reverse or ReverseBottleneck.model_validate({})
    buf_key = ("bottleneck", "reverse", "buffer") if given.buffer else ("bottleneck", "buffer")
    problems: list[tuple[str, Any, str]] = []
    if rev.buffer_bytes is not None and rev.buffer_bytes > MAX_BUFFER_BYTES:
        problems.append(
            (
                ".".join(buf_key),
                _written(data, *buf_key),
                f"the reverse bottleneck's buffer resolves to {rev.buffer_bytes}B (its rate × "
                f"mean RTT × factor); allowed: at most {_BUFFER_MAX['bytes'][1]}",
            )
        )
    if isinstance(rev.aqm, Red):
        aqm_key = ("bottleneck", "reverse", "aqm") if given.aqm else ("bottleneck", "aqm")
        problems += _red_within_buffer(
            rev.aqm, rev.buffer_bytes, rev.buffer_pkts, rev.mtu_bytes, data, aqm_key, "reverse "
        )
    return problems


def _labels_within_one_direction(sc: Scenario, data: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """A label groups connections for the per-group results; a group across both
    directions would mix two links' traffic in one line (shares of different rates)."""
    first: dict[str, int] = {}
    for i, f in enumerate(sc.flows):
        label = sc.group_label(i)
        j = first.setdefault(label, i)
        if sc.flows[j].direction != f.direction:
            return [
                (
                    f"flows.{i}.label",
                    label,
                    f"also labels flows.{j}, whose direction is {sc.flows[j].direction!r} "
                    f"(this one: {f.direction!r}); allowed: one direction per label (groups "
                    "never mix the two directions)",
                )
            ]
    return []


def sample_rows(sc: Scenario) -> tuple[int, int, int]:
    """(intervals, connections, rows) a run records: ⌈duration / interval⌉ samples of each
    connection and of the link (of each link, with a reverse bottleneck)."""
    n_int = -(-sc.duration // sc.measure.interval)
    n_conn = sum(f.streams for f in sc.flows if f.arrivals is None)  # short flows: no samples
    return n_int, n_conn, n_int * (n_conn + 1 + int(sc.has_reverse))


def _red_within_buffer(
    red: Red,
    buf_bytes: int | None,
    buf_pkts: int | None,
    mtu: int,
    data: dict[str, Any],
    key: tuple[str, ...] = ("bottleneck", "aqm"),
    which: str = "",
) -> list[tuple[str, Any, str]]:
    """RED's max_th must lie within the queue limit: above it the queue overflows first and
    RED's drop curve is never reached (the thresholds would silently mean nothing)."""
    in_pkts = red.max_th.kind == "pkt"
    if buf_pkts is not None:
        limit = float(buf_pkts) if in_pkts else float(buf_pkts * mtu)
        limit_text = f"{buf_pkts}pkt" + ("" if in_pkts else f" = {buf_pkts * mtu}B at the MTU")
    elif buf_bytes is not None:
        limit = buf_bytes / mtu if in_pkts else float(buf_bytes)
        limit_text = f"{buf_bytes}B" + (f" = {limit:g}pkt at the MTU" if in_pkts else "")
    else:
        return []
    if red.max_th.value <= limit:
        return []
    return [
        (
            ".".join((*key, "max_th")),
            _written(data, *key, "max_th"),
            f"above the {which}buffer ({limit_text}); allowed: min_th < max_th <= "
            + ("the reverse bottleneck's buffer" if which else "bottleneck.buffer"),
        )
    ]


def read_toml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        raw = read_bytes_limited(p, MAX_TOML_BYTES)
    except TooLargeError as e:
        raise SpecError([("(file)", _MISSING, f"{e}, too large for a TOML file")], str(p)) from None
    except FileNotFoundError:
        raise SpecError([("(file)", str(p), "no such file")], str(p)) from None
    except IsADirectoryError:
        raise SpecError(
            [("(file)", _MISSING, "is a directory; expected a TOML file")], str(p)
        ) from None
    except OSError as e:
        raise SpecError([("(file)", str(p), f"cannot read: {e.strerror}")], str(p)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(
            [("(file)", _MISSING, f"not a text file (byte {e.start} is not UTF-8); expected TOML")],
            str(p),
        ) from None
    if not text.strip():
        raise SpecError([("(file)", _MISSING, "the file is empty; expected TOML")], str(p))
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError([("(toml)", _MISSING, f"not valid TOML: {e}")], str(p)) from None


def cdf_paths_from(data: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """``data`` with each relative ``{ cdf = "file" }`` path of a flow entry's rtt, start or
    size made relative to ``base_dir`` (the scenario file's folder) instead of the current
    one."""
    flows = data.get("flows")
    if not isinstance(flows, list):
        return data
    out = copy.deepcopy(data)
    for f in out["flows"]:
        for key in ("rtt", "start", "size"):
            v = f.get(key) if isinstance(f, dict) else None
            if isinstance(v, dict) and isinstance(v.get("cdf"), str):
                if not Path(v["cdf"]).is_absolute():
                    v["cdf"] = str(base_dir / v["cdf"])
    return out


def file_kind_problem(data: dict[str, Any], wanted: str) -> str | None:
    """Why ``data`` (a parsed TOML file) is another kind of tcpfair file than ``wanted``
    ("scenario" or "sweep"), or None: a sweep given to ``tcpfair run`` was a list of every
    sweep key as "unknown", and a scenario given to ``tcpfair sweep`` the same the other way."""
    scenario_keys = {"duration", "bottleneck", "flows"} & set(data)
    if {"study", "value"} & set(data) and not scenario_keys and "base" not in data:
        kind = "a reference file of tcpfair repro (it has [study] / [[value]])"
    elif {"base", "axes"} & set(data) and not scenario_keys:
        kind = "a sweep file (it has base/axes)"
    elif scenario_keys and not {"base", "axes"} & set(data):
        kind = "a scenario file (it has duration, [bottleneck], [[flows]])"
    else:
        return None
    if kind.startswith(f"a {wanted}"):
        return None
    use = {
        "a sweep": "run it with tcpfair sweep",
        "a scenario": "run it with tcpfair run, or name it as a sweep's base",
        "a reference": "tcpfair repro reads it",
    }
    how = next(v for k, v in use.items() if kind.startswith(k))
    return f"{kind}, not a {wanted}; {how}"


def load_scenario(path: str | Path, overrides: list[str] | None = None) -> Scenario:
    """Read a scenario TOML file, apply ``key=value`` overrides, validate. A CDF file
    named in the file is relative to the file's folder (one named in an override, to the
    current folder)."""
    raw = read_toml(path)
    wrong = file_kind_problem(raw, "scenario")
    if wrong:
        raise SpecError([("(file)", _MISSING, wrong)], str(path))
    data = cdf_paths_from(raw, Path(path).parent)
    if overrides:
        data = apply_overrides(data, overrides)
    return from_dict(data, str(path))


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _is_index(part: str) -> bool:
    """Whether a part of a dotted key is a list index: ASCII digits (``str.isdigit`` also
    takes '²', which ``int`` refuses, and '١', which it reads as 1)."""
    return part.isascii() and part.isdigit()


def set_key(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """Return a copy of ``data`` with dotted ``key`` set (``flows.1.cca``; list indices from 0)."""
    out = copy.deepcopy(data)
    parts = key.split(".")
    if not key or any(p == "" for p in parts):
        raise SpecError([(key, value, "not a dotted key like 'flows.1.cca'")])
    cur: Any = out
    for i, p in enumerate(parts[:-1]):
        where = ".".join(parts[: i + 1])
        if isinstance(cur, list):
            if not _is_index(p) or int(p) >= len(cur):
                raise SpecError(
                    [
                        (
                            key,
                            value,
                            f"'{where}' is not an existing entry; there are {len(cur)} (indices from 0)",
                        )
                    ]
                )
            cur = cur[int(p)]
        elif isinstance(cur, dict):
            if p not in cur:
                cur[p] = {}
            elif not isinstance(cur[p], (dict, list)):
                raise SpecError([(key, value, f"'{where}' is a value, not a table")])
            cur = cur[p]
        else:  # a list entry that is a value (flows = [1, 2]): nothing to set a key in
            above = ".".join(parts[:i])
            raise SpecError([(key, value, f"'{above}' is a value, not a table")])
    last = parts[-1]
    if not isinstance(cur, (dict, list)):
        above = ".".join(parts[:-1])
        raise SpecError([(key, value, f"'{above}' is a value, not a table")])
    if isinstance(cur, list):
        if not _is_index(last) or int(last) >= len(cur):
            raise SpecError(
                [(key, value, f"index out of range; there are {len(cur)} entries (indices from 0)")]
            )
        cur[int(last)] = value
    else:
        cur[last] = value
    return out


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``--set key=value`` strings; values are read as TOML where they parse, else as strings."""
    for o in overrides:
        if "=" not in o:
            raise SpecError([("--set", o, "expected key=value, e.g. flows.1.cca=cubic")])
        k, v = o.split("=", 1)
        data = set_key(data, k.strip(), _parse_value(v.strip()))
    return data


def is_finite_number(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)
