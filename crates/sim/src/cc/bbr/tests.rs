//! BBR tests. Most run one flow over `harness::Path`: a bottleneck serving one packet per
//! ms (1000 packets/s = 11.6 Mbit/s of 1448-byte segments) and a 39 ms base RTT, so the
//! min RTT is 40 ms (39 ms + 1 ms of service) and the BDP is 40 packets.
//!
//! Hand-computed quantities used below (Linux units):
//! - bw: an ACK every 1 ms carries 1 packet, so samples are d packets over d ms:
//!   d·2^24·1000/(d·10^6) = 16777.216 → 16777 (packets/µs << 24);
//! - BDP: ⌈16777·40000/2^24⌉ = ⌈39.99995⌉ = 40 (gain 1); 80 (gain 2); 116 (gain 2.887);
//! - pacing at gain 1: 16777·1448·256/256 · 990000 / 2^24 = 1 433 501 B/s
//!   (= 1000 packets/s · 1448 B · 0.99, minus the 16777.216 → 16777 truncation);
//! - send quantum: 1 433 501 >> 10 = 1399 B < 1 MSS, so the 2-segment minimum
//!   (the rate is above 1.2 Mbit/s): the quantization budget is 3·2 = 6 segments.

use super::*;
use crate::cc::harness::{Path, TestSender};

fn ms(v: u64) -> SimTime {
    SimTime::from_millis(v)
}

fn path() -> Path {
    Path::new(ms(1), ms(39))
}

#[derive(Clone, Copy, Debug)]
struct Snap {
    t: SimTime,
    mode: Mode,
    pacing_gain: u32,
    cwnd: u32,
    in_flight: u32,
    rtt_cnt: u64,
    full_bw_cnt: u32,
    /// Packets in the network at the next paced departure (what DRAIN compares).
    in_net: u32,
}

/// Run a fresh BBR flow over the test path until `until`, recording every ACK.
fn run(seed: u64, until: SimTime) -> (TestSender<Bbr>, Vec<Snap>) {
    let mut s = TestSender::new(Bbr::new(seed));
    let mut p = path();
    let mut log = Vec::new();
    p.run_until(&mut s, until, |s| {
        log.push(Snap {
            t: s.now(),
            mode: s.cc.mode,
            pacing_gain: s.cc.pacing_gain,
            cwnd: s.tcp.cwnd,
            in_flight: s.tcp.packets_in_flight,
            rtt_cnt: s.cc.rtt_cnt,
            full_bw_cnt: s.cc.full_bw_cnt,
            in_net: {
                let edt = s.tcp.wstamp.max(s.now());
                let delivered = (16_777 * (edt - s.now()).as_micros()) >> 24;
                s.tcp.packets_in_flight - delivered as u32
            },
        })
    });
    (s, log)
}

#[test]
fn init_paces_at_high_gain_times_initial_window_over_nominal_rtt() {
    let s = TestSender::new(Bbr::new(1));
    assert!(s.tcp.pacing);
    assert_eq!(s.cc.mode, Mode::Startup);
    // 2/ln 2 = 2.885 → 256·2885/1000 + 1 = 739 (2.887).
    assert_eq!((s.cc.pacing_gain, s.cc.cwnd_gain), (739, 739));
    // No RTT yet: 10 packets per nominal 1 ms: bw = 10·2^24/1000 = 167772;
    // 167772·1448·739/256 · 990000/2^24 = 41 381 651 B/s.
    assert_eq!(s.tcp.pacing_rate, 41_381_651);
}

#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth() {
    let (s, log) = run(1, SimTime::from_secs(2));
    let drain_at = log.iter().position(|x| x.mode != Mode::Startup).unwrap();
    let before = log[drain_at - 1];
    let at = log[drain_at];
    assert_eq!(at.mode, Mode::Drain);
    // Entering DRAIN happens at a round start, the 3rd in a row without growth.
    assert_eq!((before.full_bw_cnt, at.full_bw_cnt), (2, 3));
    assert_eq!(at.rtt_cnt, before.rtt_cnt + 1);
    // The bandwidth filter holds the bottleneck rate exactly (see the module comment),
    // and the plateau was recorded when bw stopped growing.
    assert_eq!(s.cc.max_bw(), 16_777);
    assert!(s.cc.full_bw_reached);
    // In STARTUP cwnd grew by the packets acked (slow-start-like): each ACK adds one,
    // never exceeding high_gain·BDP + quanta = 116 + 6 = 122 once bw is known.
    let first = log.iter().position(|x| x.rtt_cnt >= 1).unwrap();
    assert_eq!(log[first].cwnd, 11);
    assert!(log[..drain_at].iter().all(|x| x.cwnd <= 122));
}

#[test]
fn drain_sets_ssthresh_to_bdp_and_exits_when_inflight_is_down_to_it() {
    let (s, log) = run(1, SimTime::from_secs(2));
    let d0 = log.iter().position(|x| x.mode == Mode::Drain).unwrap();
    let d1 = log.iter().position(|x| x.mode == Mode::ProbeBw).unwrap();
    // ssthresh = inflight(bw, 1) = BDP 40 + quanta 6 = 46.
    assert_eq!(s.tcp.ssthresh, 46);
    // DRAIN paces at 1/2.885 (88/256) and keeps cwnd_gain 2.885.
    assert!(log[d0..d1].iter().all(|x| x.pacing_gain == 88));
    // It lasts while what is in the network at the next departure time (in flight,
    // less ⌊bw · (departure − now)⌋) exceeds 46, and ends at the first ACK where not.
    assert!(
        log[d0..d1].iter().all(|x| x.in_net > 46),
        "{:?}",
        &log[d0..d1]
    );
    assert!(log[d1].in_net <= 46);
}

#[test]
fn probe_bw_cycles_five_quarters_three_quarters_then_six_unity_phases() {
    let (s, log) = run(7, SimTime::from_secs(4));
    // Probing beyond 1.25·BDP takes inflight to 58, but never beyond cwnd.
    assert_eq!(s.cc.min_rtt_us, 40_000);
    let start = log.iter().position(|x| x.mode == Mode::ProbeBw).unwrap();
    // Phase changes after entering PROBE_BW.
    let mut phases: Vec<(SimTime, u32)> = vec![(log[start].t, log[start].pacing_gain)];
    for x in &log[start..] {
        if x.mode == Mode::ProbeBw && x.pacing_gain != phases.last().unwrap().1 {
            phases.push((x.t, x.pacing_gain));
        }
    }
    let gains: Vec<u32> = phases.iter().map(|p| p.1).collect();
    let i = gains.iter().position(|&g| g == 320).unwrap();
    // The gain sequence from the first probe: 1.25, 0.75, 1 (phases of gain 1 merge).
    assert_eq!(&gains[i..i + 6], &[320, 192, 256, 320, 192, 256]);
    // Phases last one min RTT: each ends at the first ACK more than 40 ms after it
    // started; ACKs come every 1 ms, so the six unity phases take 6 × 41 = 246 ms.
    // The 5/4 phase lasts at least that long and until inflight reaches
    // 5/4·BDP + quanta + 2 = 50 + 6 + 2 = 58 (or a loss); the 3/4 phase ends as soon as
    // inflight is down to BDP + quanta = 46, within one min RTT.
    let mut cycles = 0;
    for j in (i..phases.len() - 3).step_by(3) {
        assert_eq!(&gains[j..j + 3], &[320, 192, 256]);
        assert!(phases[j + 1].0 - phases[j].0 >= ms(41));
        assert!(phases[j + 2].0 - phases[j + 1].0 <= ms(41));
        assert_eq!(phases[j + 3].0 - phases[j + 2].0, ms(246));
        cycles += 1;
    }
    assert!(cycles >= 8);
}

/// cwnd target in the current phase: gain·BDP + ACK-aggregation allowance + quanta.
fn target(s: &TestSender<Bbr>) -> u32 {
    let t = s.cc.bdp(s.cc.bw(), s.cc.cwnd_gain) + s.cc.ack_aggregation_cwnd();
    s.cc.quantization_budget(&s.tcp, t)
}

#[test]
fn cwnd_is_two_bdp_plus_allowances_in_probe_bw() {
    let (s, log) = run(3, SimTime::from_secs(3));
    assert_eq!(s.cc.mode, Mode::ProbeBw);
    // ACK aggregation: an epoch's first ACK counts 1 with 0 expected, and bw·1 ms =
    // 16777·1000/2^24 = 0.99998 floors to 0 packets, so with perfectly spaced ACKs the
    // "extra acked" is 2.
    assert_eq!(s.cc.extra_acked(), 2);
    // cwnd_gain 2: 2·40 + 2 + 6 = 88 (even), +2 in the 5/4 phase so that inflight can
    // exceed 1.25·BDP even when the BDP is small.
    let last = log.last().unwrap();
    let expected = if last.pacing_gain == 320 { 90 } else { 88 };
    assert_eq!(s.tcp.cwnd, expected);
    assert_eq!(target(&s), expected);
    // Never above the cap once the startup's ACK-aggregation samples (larger: bursts)
    // have left their 5–10 round window.
    let start = log.iter().position(|x| x.mode == Mode::ProbeBw).unwrap();
    let settled = start
        + log[start..]
            .iter()
            .position(|x| x.rtt_cnt >= log[start].rtt_cnt + 10)
            .unwrap();
    assert!(
        log[settled..].iter().all(|x| x.cwnd <= 90),
        "{:?}",
        log[settled..].iter().max_by_key(|x| x.cwnd)
    );
}

#[test]
fn pacing_rate_is_gain_times_bw_less_one_percent() {
    let (mut s, _) = run(3, SimTime::from_secs(3));
    // Recompute what the last ACK set, for each phase gain.
    for (gain, expected) in [(256u32, 1_433_501u64), (320, 1_791_876), (192, 1_075_126)] {
        assert_eq!(Bbr::rate_bytes_per_sec(&s.tcp, s.cc.bw(), gain), expected);
    }
    let g = s.cc.pacing_gain;
    assert_eq!(
        s.tcp.pacing_rate,
        Bbr::rate_bytes_per_sec(&s.tcp, 16_777, g)
    );
    // In steady state the flow gets the bottleneck: ~1000 packets/s.
    let mut p = path();
    let sent0 = s.tcp.delivered;
    let t0 = s.now();
    p.run_until(&mut s, t0 + SimTime::from_secs(2), |_| {});
    let pps = (s.tcp.delivered - sent0) as f64 / 2.0;
    assert!(pps > 950.0, "{pps} packets/s");
}

#[test]
fn probe_rtt_after_ten_seconds_without_a_lower_rtt() {
    let (s, log) = run(5, SimTime::from_secs(12));
    // The min RTT (40 ms, exactly, from the first packet) is never beaten, only
    // matched; it was stamped at jiffy 40 and expires after jiffy 40 + 10 000.
    let enter = log.iter().position(|x| x.mode == Mode::ProbeRtt).unwrap();
    assert!(
        log[enter - 1].t <= ms(10_041) && log[enter].t > ms(10_040),
        "{:?}",
        log[enter]
    );
    assert_eq!(log[enter].cwnd, 4);
    let exit = enter
        + log[enter..]
            .iter()
            .position(|x| x.mode != Mode::ProbeRtt)
            .unwrap();
    // cwnd 4 throughout, for at least 200 ms once inflight reached 4, plus a round trip.
    assert!(log[enter..exit].iter().all(|x| x.cwnd <= 4));
    let low = enter + log[enter..].iter().position(|x| x.in_flight <= 4).unwrap();
    assert!(log[exit].t - log[low].t > ms(200));
    // Back to PROBE_BW (the pipe was full before) with the cwnd saved on entry.
    assert_eq!(log[exit].mode, Mode::ProbeBw);
    assert!(log[exit].cwnd >= 88, "{:?}", log[exit]);
    // And the min RTT is good for another 10 s.
    assert!(log[exit..].iter().all(|x| x.mode != Mode::ProbeRtt));
    assert_eq!(s.cc.min_rtt_us, 40_000);
}

#[test]
fn probe_bw_start_phase_is_random_but_never_the_draining_one() {
    let tcp = TcpCc::new(1448, u32::MAX);
    let mut seen = [0u32; 8];
    for seed in 0..700 {
        let mut b = Bbr::new(seed);
        b.reset_probe_bw_mode(&tcp);
        seen[b.cycle_idx] += 1;
    }
    // Linux draws cycle_idx = 7 − rand(0..7) and advances it: phases 2..=7 or 0, ~1/7 each.
    assert_eq!(seen[1], 0);
    for i in [0, 2, 3, 4, 5, 6, 7] {
        assert!((70..=130).contains(&seen[i]), "phase {i}: {seen:?}");
    }
    // Deterministic per seed.
    let draw = |seed| {
        let mut b = Bbr::new(seed);
        (0..5)
            .map(|_| {
                b.reset_probe_bw_mode(&tcp);
                b.cycle_idx
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(42), draw(42));
}

/// A BBR sender in PROBE_BW with a known model: bw 16777 (1 packet/ms), min RTT 40 ms.
fn steady() -> TestSender<Bbr> {
    let (s, _) = run(3, SimTime::from_secs(3));
    assert_eq!(s.cc.mode, Mode::ProbeBw);
    s
}

fn rs(acked: u32, losses: u32, prior_delivered: u64, in_flight: u32) -> RateSample {
    RateSample {
        prior_delivered,
        delivered: 40,
        interval: ms(40),
        rtt: Some(ms(45)),
        losses,
        acked_sacked: acked,
        prior_in_flight: in_flight,
        ..RateSample::default()
    }
}

#[test]
fn packet_conservation_in_the_first_round_of_recovery_then_restore() {
    let mut s = steady();
    let before = s.tcp.cwnd;
    s.tcp.packets_in_flight = 60;
    s.enter_recovery();
    // ssthresh is not BBR's business; cwnd is saved for the end of recovery.
    assert_eq!(s.cc.prior_cwnd, before);
    // First ACK in Recovery (1 delivered, 1 newly lost): cwnd = in flight + acked = 61.
    let d = s.tcp.delivered;
    s.tcp.packets_in_flight = 60;
    s.rate_sample(rs(1, 1, d - 40, 61));
    assert!(s.cc.packet_conservation);
    assert_eq!(s.tcp.cwnd, 61);
    // Still in the first round: one packet sent per packet delivered.
    s.tcp.packets_in_flight = 58;
    s.rate_sample(rs(2, 0, d - 30, 60));
    assert_eq!(s.tcp.cwnd, 61); // max(61, 58 + 2)
                                // A packet sent after recovery began is acked: the round ends, conservation too;
                                // cwnd then grows by the packets acked (toward the 2·BDP target).
    let d = s.tcp.delivered;
    s.tcp.packets_in_flight = 50;
    s.rate_sample(rs(3, 0, d, 53));
    assert!(!s.cc.packet_conservation);
    assert_eq!(s.tcp.cwnd, 61 + 3);
    // Recovery ends: cwnd back to the saved one, then the usual rule (+acked, capped
    // at the target).
    s.tcp.ca_state = CaState::Open;
    s.rate_sample(rs(1, 0, d, 53));
    assert!(!s.cc.packet_conservation);
    assert_eq!(s.tcp.cwnd, (before + 1).min(target(&s)));
    assert!(s.tcp.cwnd >= before);
}

#[test]
fn timeout_ends_the_round_and_resets_full_bw_plateau() {
    let mut s = steady();
    s.rto();
    assert_eq!(s.cwnd(), 1);
    assert!(s.cc.round_start);
    assert_eq!(s.cc.full_bw, 0);
    // The pipe stays "full": BBR keeps its mode and model across an RTO.
    assert_eq!(s.cc.mode, Mode::ProbeBw);
    assert_eq!(s.cc.max_bw(), 16_777);
}

#[test]
fn app_limited_samples_cannot_lower_the_bandwidth_estimate() {
    let mut s = steady();
    let d = s.tcp.delivered;
    let mut low = rs(1, 0, d, 10);
    low.delivered = 5; // 5 packets in 40 ms: 1/8 of the path rate
    low.is_app_limited = true;
    for _ in 0..30 {
        let d = s.tcp.delivered;
        low.prior_delivered = d; // a new round every sample
        s.rate_sample(low);
    }
    assert_eq!(s.cc.max_bw(), 16_777);
    // Without the app-limited mark, 10+ rounds of low samples replace the max.
    for _ in 0..12 {
        let d = s.tcp.delivered;
        low.prior_delivered = d;
        low.is_app_limited = false;
        s.rate_sample(low);
    }
    assert_eq!(s.cc.max_bw(), 5 * BW_UNIT * 1000 / 40_000_000);
}

#[test]
fn policer_detection_uses_the_long_term_rate_after_two_consistent_lossy_intervals() {
    let mut s = steady();
    // A policer passing 500 packets/s: each round trip (40 ms) delivers 20 packets and
    // loses 10 (33 % > 20 %). Feed 4-round intervals, each ended by a loss.
    let round = |s: &mut TestSender<Bbr>, losses: u32| {
        let d = s.tcp.delivered;
        s.advance(ms(40));
        s.rate_sample(RateSample {
            prior_delivered: d,
            delivered: 20,
            interval: ms(40),
            rtt: Some(ms(40)),
            losses,
            acked_sacked: 20,
            prior_in_flight: 30,
            ..RateSample::default()
        });
    };
    round(&mut s, 10); // the first loss starts sampling
    for _ in 0..8 {
        round(&mut s, 10);
    }
    // Two 4-round intervals of 80 packets in 160 ms: 0.5 packet/ms = 8388 (<< 24 /µs).
    assert!(s.cc.lt_use_bw);
    assert_eq!(s.cc.lt_bw, 8_388);
    assert_eq!(s.cc.bw(), 8_388);
    assert_eq!(s.cc.pacing_gain, 256);
}

#[test]
fn bbr_takes_no_parameters() {
    let mut p = std::collections::BTreeMap::new();
    p.insert("gain".to_string(), 2.0);
    let err = crate::cc::AnyCc::from_name("bbr", &p, 1).unwrap_err();
    assert_eq!(
        (err.param.as_str(), err.message.as_str()),
        ("gain", "bbr has no parameter \"gain\"; allowed: none")
    );
}
