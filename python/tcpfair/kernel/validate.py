"""The checks of every kernel-backend run, each graded ok / warning / invalid.

Each check is a dict ``{"name", "grade", "ok", "value", "limit", "message"}`` stored in
``meta["checks"]``; ``ok`` is false exactly when the grade is ``invalid``.
``meta["grade"]`` is the worst grade and ``meta["valid"]`` is false only for an invalid
run. A grade says what the imperfection can do to the result (docs/kernel.md, "Grades"):

- *invalid*: the numbers may be wrong — an RTT off by more than 0.5 ms, a bottleneck that
  did not shape, a measured loss rate unlike the configured one, a flow that did not
  finish, an emulator late by more than the RTT tolerance on average or by over 1 ms on
  ≥ 1 % of frames, or a stall longer than the bottleneck buffer takes to drain (the queue
  ran dry behind it and the link idled);
- *warning*: imperfect but, as measured, without effect beyond the run-to-run spread — a
  stall longer than half the drain time or the shortest RTT, 0.1–1 % of frames over 1 ms
  late, a mean lateness of 50–500 µs, a saturated CPU (its effect is the lateness, graded
  by itself), a few frames lost to failing sends;
- *ok*: everything else.
"""

from __future__ import annotations

from typing import Any

RTT_TOLERANCE_S = 0.5e-3
#: the emulator's design targets: within them a check is "ok"
LATENESS_MEAN_LIMIT_S = 50e-6
LATENESS_MAX_LIMIT_S = 1e-3
#: a mean lateness beyond the RTT tolerance shifts every round trip by more than the RTT
#: check allows: invalid
LATENESS_MEAN_INVALID_S = RTT_TOLERANCE_S
#: share of frames late by over 1 ms: ok below the first, invalid from the second
LATE_SHARE_OK = 0.001
LATE_SHARE_INVALID = 0.01
#: frames lost to failing sends: from this share on, invalid (below it, a warning)
SEND_ERROR_SHARE_INVALID = 1e-3
#: goodput over the window may exceed the capacity by this fraction without any shaping
#: error: it is measured from the receivers' application reads, which lag arrivals by up to
#: the receive-buffer backlog, in intervals offset between flows by up to ~1 RTT plus the
#: iperf3 set-up; a bottleneck that does not shape shows as tens of percent
GOODPUT_SLACK = 0.03
#: one core busy for this fraction of the run means the emulator may have fallen behind
CPU_SATURATION = 0.90

Check = dict[str, Any]
GRADES = ("ok", "warning", "invalid")  # in increasing severity


def check(name: str, ok: bool, value: Any, limit: Any, message: str) -> Check:
    """A pass/fail check: "ok" or "invalid"."""
    return graded(name, "ok" if ok else "invalid", value, limit, message)


def graded(name: str, grade: str, value: Any, limit: Any, message: str) -> Check:
    if grade not in GRADES:
        raise ValueError(f"grade must be one of {GRADES}, got {grade!r}")
    return {
        "name": name,
        "grade": grade,
        "ok": grade != "invalid",
        "value": value,
        "limit": limit,
        "message": message,
    }


def grade_of(c: Check) -> str:
    """A check's grade (results saved before grades existed: from ``ok``)."""
    g = c.get("grade")
    return g if g in GRADES else ("ok" if c.get("ok", True) else "invalid")


def overall(checks: list[Check]) -> str:
    """The run's grade: the worst of its checks ("ok" without checks)."""
    return max((grade_of(c) for c in checks), key=GRADES.index, default="ok")


def grade_stall(max_s: float, queue_drain_s: float | None, min_rtt_s: float | None) -> str:
    """The longest emulator stall, graded. Longer than the bottleneck buffer's drain time:
    invalid (the queue ran dry behind it and the link idled; measured: 1.4–44 points of
    utilization below the simulator). Longer than half the drain time or than the shortest
    RTT: warning (close to that, or a visible bump in a flow's round trip). Otherwise, or
    below the 1 ms design target: ok."""
    if max_s < LATENESS_MAX_LIMIT_S:
        return "ok"
    if queue_drain_s is not None and max_s > queue_drain_s:
        return "invalid"
    near = [x for x in (None if queue_drain_s is None else queue_drain_s / 2, min_rtt_s) if x]
    return "warning" if not near or max_s > min(near) else "ok"


def goodput_capacity_bps(rate_bps: float, mtu: int, mss: int | None = None) -> float:
    """Application bytes per second a rate-limited Ethernet link carries: each frame of
    mtu + 14 bytes carries one MSS (mtu − 20 IP − 20 TCP − 12 timestamp option)."""
    seg = mss if mss is not None else mtu - 52
    return rate_bps * seg / (mtu + 14)


def rtt_checks(configured_s: dict[int, float], measured: dict[int, dict[str, Any]]) -> list[Check]:
    out: list[Check] = []
    for g, want in configured_s.items():
        m = measured.get(g) or {}
        med = m.get("median_ns")
        if med is None:
            out.append(
                check(
                    f"rtt.flows.{g}",
                    False,
                    None,
                    RTT_TOLERANCE_S,
                    f"flows.{g}: no RTT probe answered "
                    f"({'; '.join(m.get('errors', [])) or 'no data'})",
                )
            )
            continue
        got = med / 1e9
        err = got - want
        out.append(
            check(
                f"rtt.flows.{g}",
                abs(err) <= RTT_TOLERANCE_S,
                got,
                want,
                f"flows.{g}: idle RTT {got * 1e3:.3f} ms vs configured {want * 1e3:.3f} ms "
                f"(error {err * 1e3:+.3f} ms, limit ±{RTT_TOLERANCE_S * 1e3:g} ms)",
            )
        )
    return out


def direction_final(final: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    """linkem's final statistics restricted to one direction (``a2b`` or ``b2a``): its own
    lateness and send errors, in the shape ``lateness_checks`` reads."""
    if not final:
        return None
    return {"late": final[f"late_{key}"], "send_errors": final[key].get("send_errors", 0)}


def lateness_checks(
    final: dict[str, Any] | None,
    queue_drain_s: float | None = None,
    min_rtt_s: float | None = None,
    prefix: str = "emulator",
    what: str = "emulator",
) -> list[Check]:
    """Mean lateness, share of frames over 1 ms late, the longest stall, and send errors,
    graded by what they can do (module docstring). ``queue_drain_s``: the time a full
    bottleneck buffer takes to drain at the rate; ``min_rtt_s``: the shortest base RTT.
    ``prefix``/``what``: the checks' names and how messages name the emulator (with a
    reverse bottleneck each direction is graded on its own: ``emulator.reverse.*``)."""
    if not final:
        return [
            check(
                f"{prefix}.lateness",
                False,
                None,
                None,
                "the emulator reported no statistics (did it crash?)",
            )
        ]
    late = final["late"]
    n = int(late["n"])
    mean_s, max_s = late["mean_ns"] / 1e9, late["max_ns"] / 1e9
    over = int(late["over_1ms"])
    share = over / n if n else 0.0
    mean_grade = (
        "ok"
        if mean_s < LATENESS_MEAN_LIMIT_S
        else "warning"
        if mean_s < LATENESS_MEAN_INVALID_S
        else "invalid"
    )
    share_grade = (
        "ok" if share < LATE_SHARE_OK else "warning" if share < LATE_SHARE_INVALID else "invalid"
    )
    max_grade = grade_stall(max_s, queue_drain_s, min_rtt_s)
    # What the grade means, in the order of the thresholds (`grade_stall`): with a drain
    # time, a stall past the 1 ms target stays ok up to the warning threshold — "ok below
    # 1 ms" alone read as if 1.1 ms should have been graded down.
    limits = f"ok below {LATENESS_MAX_LIMIT_S * 1e3:g} ms"
    if queue_drain_s is not None:
        warn = f"{queue_drain_s * 0.5e3:.3g} ms"
        if min_rtt_s is not None and min_rtt_s < queue_drain_s / 2:
            warn += f" or the {min_rtt_s * 1e3:.3g} ms RTT"
        limits = (
            f"design target {LATENESS_MAX_LIMIT_S * 1e3:g} ms; a warning above {warn}, "
            f"invalid above the {queue_drain_s * 1e3:.3g} ms a full buffer takes to drain"
        )
    errors = int(final.get("send_errors", 0))
    err_share = errors / n if n else 0.0
    err_grade = (
        "ok" if errors == 0 else "warning" if err_share < SEND_ERROR_SHARE_INVALID else "invalid"
    )
    return [
        graded(
            f"{prefix}.lateness_mean",
            mean_grade,
            mean_s,
            LATENESS_MEAN_LIMIT_S,
            f"{what} lateness mean {mean_s * 1e6:.1f} µs over {n} packets (ok below "
            f"{LATENESS_MEAN_LIMIT_S * 1e6:g} µs, invalid from "
            f"{LATENESS_MEAN_INVALID_S * 1e6:g} µs)",
        ),
        graded(
            f"{prefix}.late_share",
            share_grade,
            share,
            LATE_SHARE_INVALID,
            f"{over} of {n} packets ({100 * share:.3g} %) over 1 ms late (ok below "
            f"{100 * LATE_SHARE_OK:g} %, invalid from {100 * LATE_SHARE_INVALID:g} %), "
            f"p99 ≤ {late.get('p99_us', '?')} µs",
        ),
        graded(
            f"{prefix}.lateness_max",
            max_grade,
            max_s,
            queue_drain_s if queue_drain_s is not None else LATENESS_MAX_LIMIT_S,
            f"{what} lateness max {max_s * 1e3:.3f} ms ({limits})",
        ),
        graded(
            f"{prefix}.send_errors",
            err_grade,
            errors,
            0,
            f"{what} send errors: {errors}"
            + (f" ({100 * err_share:.3g} % of packets lost to them)" if errors else ""),
        ),
    ]


def goodput_check(
    sum_bps: float, capacity_bps: float, name: str = "goodput.capacity", which: str = ""
) -> Check:
    """The flows through a bottleneck got at most its goodput capacity (``which``:
    "reverse " for the reverse bottleneck's)."""
    ratio = sum_bps / capacity_bps if capacity_bps else float("nan")
    return check(
        name,
        ratio <= 1 + GOODPUT_SLACK,
        sum_bps,
        capacity_bps,
        f"sum of goodput {sum_bps / 1e6:.2f} Mbit/s = {100 * ratio:.1f} % of the "
        f"{which}bottleneck's goodput "
        f"capacity {capacity_bps / 1e6:.2f} Mbit/s (above {100 * (1 + GOODPUT_SLACK):g} % "
        "means the "
        "bottleneck did not shape)",
    )


#: the bottleneck's delivered rate while backlogged, as a share of the configured rate:
#: within ±RATE_OK "ok", within RATE_INVALID "warning", beyond it "invalid"
RATE_OK = 0.01
RATE_INVALID = 0.03
#: backlogged time needed for the rate check (shorter: no check)
RATE_MIN_BUSY_S = 1.0


def rate_check(
    t_s: list[float], queue_bytes: list[int], tx_bytes: list[int], rate_bps: float
) -> Check | None:
    """What the bottleneck put on the wire while its backlog alone could keep it busy,
    against its rate.

    Samples are the link table's (``tx_bytes`` sent since the previous sample). An interval
    counts when the queue at its start held at least an interval's worth of bytes at the
    rate: then the link cannot have idled inside it, whatever the senders did, and sending
    less than the rate is the shaper's own shortfall — tbf's dequeue timer firing late on a
    busy machine loses the tokens beyond its burst. (Counting every interval with a backlog
    at both ends is not enough: the simulator, whose rate is exact, reads 93 % that way with
    a 10-packet buffer, where the queue runs dry and refills between samples.) ``None`` when
    fewer than ``RATE_MIN_BUSY_S`` seconds qualify — with 100 ms samples, buffers under
    100 ms of the rate never do."""
    busy_s = sent = 0.0
    for i in range(1, len(t_s)):
        dt = t_s[i] - t_s[i - 1]
        if queue_bytes[i - 1] * 8 >= rate_bps * dt:
            busy_s += dt
            sent += tx_bytes[i]
    if busy_s < RATE_MIN_BUSY_S:
        return None
    got = sent * 8 / busy_s
    err = got / rate_bps - 1
    grade = "ok" if abs(err) <= RATE_OK else "warning" if abs(err) <= RATE_INVALID else "invalid"
    return graded(
        "rate.bottleneck",
        grade,
        got,
        rate_bps,
        f"the bottleneck sent {got / 1e6:.3f} Mbit/s while its backlog could keep it busy "
        f"({busy_s:.1f} s) = {100 * (1 + err):.1f} % of its rate {rate_bps / 1e6:g} Mbit/s "
        f"(ok within ±{100 * RATE_OK:g} %, invalid beyond ±{100 * RATE_INVALID:g} %: below "
        "it, the shaper lost time to a busy machine)",
    )


def cpu_checks(
    emulator_thread_frac: float | None, machine_busy_frac: float | None, n_cpus: int
) -> list[Check]:
    """``emulator_thread_frac``: CPU share of linkem's busiest thread (one per direction;
    it includes the downstream namespaces' softirq work done inside its send calls).
    Saturation is a warning: what it can do to the result is lateness, graded itself."""
    out: list[Check] = []
    if emulator_thread_frac is not None:
        out.append(
            graded(
                "cpu.emulator",
                "ok" if emulator_thread_frac < CPU_SATURATION else "warning",
                emulator_thread_frac,
                CPU_SATURATION,
                f"busiest emulator thread used {100 * emulator_thread_frac:.1f} % of a core "
                f"(saturated above {100 * CPU_SATURATION:g} %)",
            )
        )
    if machine_busy_frac is not None:
        out.append(
            graded(
                "cpu.machine",
                "ok" if machine_busy_frac < CPU_SATURATION else "warning",
                machine_busy_frac,
                CPU_SATURATION,
                f"all {n_cpus} CPUs were {100 * machine_busy_frac:.1f} % busy during the run "
                f"(saturated above {100 * CPU_SATURATION:g} %; another load on the machine "
                "also counts)",
            )
        )
    return out


def loss_check(configured: float, lost: int, offered: int, name: str = "loss.rate") -> Check:
    """Measured loss fraction within 4 binomial standard deviations of the configured one."""
    if offered == 0:
        return check(name, configured == 0, 0.0, configured, "no packets crossed the emulator")
    frac = lost / offered
    sd = (configured * (1 - configured) / offered) ** 0.5
    ok = abs(frac - configured) <= 4 * sd + 1e-12
    return check(
        name,
        ok,
        frac,
        configured,
        f"emulated loss {100 * frac:.4f} % of {offered} data packets vs configured "
        f"{100 * configured:.4f} % "
        f"(±4σ = {400 * sd:.4f} %)",
    )


#: the generator opening a short flow later than scheduled: from this p99 on, a warning
#: (the FCT runs from the real SYN, so only the arrival process is shifted)
START_LATE_WARN_S = 10e-3


def short_flow_checks(group: int, short: Any) -> list[Check]:
    """A short-flow entry's flows: every one completed without error (else invalid: the
    FCT table would miss them), and how late the generator opened them (a warning above
    ``START_LATE_WARN_S`` at the 99th percentile). ``short``: the entry's rows of the
    short-flows table (tcpfair.kernel.shortflows)."""
    n = len(short)
    bad = short[short["error"].notna()]
    first = f"; first: flow {int(bad['flow'].iloc[0])}: {bad['error'].iloc[0]}" if len(bad) else ""
    out = [
        check(
            f"short_flows.{group}",
            len(bad) == 0,
            int(len(bad)),
            0,
            f"flows.{group}: {n - len(bad)} of {n} short flows completed{first}",
        )
    ]
    late = short["start_late_s"].dropna()
    if len(late):
        p99 = float(late.quantile(0.99))
        out.append(
            graded(
                f"short_flows.{group}.start_late",
                "ok" if p99 < START_LATE_WARN_S else "warning",
                p99,
                START_LATE_WARN_S,
                f"flows.{group}: short flows opened {p99 * 1e3:.3g} ms after their scheduled "
                f"time at the 99th percentile (warning from {START_LATE_WARN_S * 1e3:g} ms)",
            )
        )
    return out
