"""The checks every kernel-backend run must pass to be reported as valid.

Each check is a dict ``{"name", "ok", "value", "limit", "message"}`` stored in
``meta["checks"]``; ``meta["valid"]`` is true only when all pass. Limits (issue 4):
idle RTT within 0.5 ms of the configured one; emulator lateness mean < 50 µs and
max < 1 ms; goodput not above the bottleneck's goodput capacity; no CPU saturation.
"""

from __future__ import annotations

from typing import Any

RTT_TOLERANCE_S = 0.5e-3
LATENESS_MEAN_LIMIT_S = 50e-6
LATENESS_MAX_LIMIT_S = 1e-3
#: goodput over the window may exceed the capacity by this fraction without any shaping
#: error: it is measured from the receivers' application reads, which lag arrivals by up to
#: the receive-buffer backlog, in intervals offset between flows by up to ~1 RTT plus the
#: iperf3 set-up; a bottleneck that does not shape shows as tens of percent
GOODPUT_SLACK = 0.03
#: one core busy for this fraction of the run means the emulator may have fallen behind
CPU_SATURATION = 0.90

Check = dict[str, Any]


def check(name: str, ok: bool, value: Any, limit: Any, message: str) -> Check:
    return {"name": name, "ok": bool(ok), "value": value, "limit": limit, "message": message}


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


def lateness_checks(
    final: dict[str, Any] | None, queue_drain_s: float | None = None
) -> list[Check]:
    """Mean and max release lateness and send errors. ``queue_drain_s`` (the time a full
    bottleneck buffer takes to drain at the rate) puts a failed max in context: a stall
    longer than it lets the link run idle, which lowers utilization most at small buffers
    (docs/validation.md, D11)."""
    if not final:
        return [
            check(
                "emulator.lateness",
                False,
                None,
                None,
                "the emulator reported no statistics (did it crash?)",
            )
        ]
    late = final["late"]
    mean_s, max_s = late["mean_ns"] / 1e9, late["max_ns"] / 1e9
    drained = ""
    if queue_drain_s is not None and max_s > queue_drain_s:
        drained = (
            f"; the longest stall exceeds the {queue_drain_s * 1e3:.2g} ms a full buffer takes "
            "to drain, so the link may have idled (utilization reads low at small buffers)"
        )
    return [
        check(
            "emulator.lateness_mean",
            mean_s < LATENESS_MEAN_LIMIT_S,
            mean_s,
            LATENESS_MEAN_LIMIT_S,
            f"emulator lateness mean {mean_s * 1e6:.1f} µs (limit "
            f"{LATENESS_MEAN_LIMIT_S * 1e6:g} µs) over {late['n']} packets",
        ),
        check(
            "emulator.lateness_max",
            max_s < LATENESS_MAX_LIMIT_S,
            max_s,
            LATENESS_MAX_LIMIT_S,
            f"emulator lateness max {max_s * 1e3:.3f} ms (limit "
            f"{LATENESS_MAX_LIMIT_S * 1e3:g} ms), "
            f"{late['over_1ms']} packets over 1 ms, p99 ≤ {late['p99_us']} µs{drained}",
        ),
        check(
            "emulator.send_errors",
            final.get("send_errors", 0) == 0,
            final.get("send_errors", 0),
            0,
            f"emulator send errors: {final.get('send_errors', 0)}",
        ),
    ]


def goodput_check(sum_bps: float, capacity_bps: float) -> Check:
    ratio = sum_bps / capacity_bps if capacity_bps else float("nan")
    return check(
        "goodput.capacity",
        ratio <= 1 + GOODPUT_SLACK,
        sum_bps,
        capacity_bps,
        f"sum of goodput {sum_bps / 1e6:.2f} Mbit/s = {100 * ratio:.1f} % of the "
        "bottleneck's goodput "
        f"capacity {capacity_bps / 1e6:.2f} Mbit/s (above {100 * (1 + GOODPUT_SLACK):g} % "
        "means the "
        "bottleneck did not shape)",
    )


def cpu_checks(
    emulator_thread_frac: float | None, machine_busy_frac: float | None, n_cpus: int
) -> list[Check]:
    """``emulator_thread_frac``: CPU share of linkem's busiest thread (one per direction;
    it includes the downstream namespaces' softirq work done inside its send calls)."""
    out: list[Check] = []
    if emulator_thread_frac is not None:
        out.append(
            check(
                "cpu.emulator",
                emulator_thread_frac < CPU_SATURATION,
                emulator_thread_frac,
                CPU_SATURATION,
                f"busiest emulator thread used {100 * emulator_thread_frac:.1f} % of a core "
                f"(saturated above {100 * CPU_SATURATION:g} %)",
            )
        )
    if machine_busy_frac is not None:
        out.append(
            check(
                "cpu.machine",
                machine_busy_frac < CPU_SATURATION,
                machine_busy_frac,
                CPU_SATURATION,
                f"all {n_cpus} CPUs were {100 * machine_busy_frac:.1f} % busy during the run "
                f"(saturated above {100 * CPU_SATURATION:g} %; another load on the machine "
                "also counts)",
            )
        )
    return out


def loss_check(configured: float, lost: int, offered: int) -> Check:
    """Measured loss fraction within 4 binomial standard deviations of the configured one."""
    if offered == 0:
        return check(
            "loss.rate", configured == 0, 0.0, configured, "no data packets crossed the emulator"
        )
    frac = lost / offered
    sd = (configured * (1 - configured) / offered) ** 0.5
    ok = abs(frac - configured) <= 4 * sd + 1e-12
    return check(
        "loss.rate",
        ok,
        frac,
        configured,
        f"emulated loss {100 * frac:.4f} % of {offered} data packets vs configured "
        f"{100 * configured:.4f} % "
        f"(±4σ = {400 * sd:.4f} %)",
    )
