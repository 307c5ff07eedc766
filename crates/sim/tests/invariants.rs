//! Invariants every run must satisfy, checked on varied scenarios: conservation of bytes,
//! capacity, queue limits, determinism.

mod common;
use common::*;
use tcpfair_sim::config::AqmConfig;
use tcpfair_sim::output::Output;
use tcpfair_sim::{run, Config};

fn mixed() -> Config {
    let mut flows = vec![
        flow(0, "reno", 20 * MS),
        flow(1, "reno", 60 * MS),
        flow(2, "reno", 40 * MS),
    ];
    flows[1].sack = false;
    flows[2].start_ns = 2 * S;
    let mut c = dumbbell(20_000_000, bdp_bytes(20_000_000, 40 * MS), flows, 20 * S);
    c.bottleneck.loss = 0.001;
    c
}

fn check(cfg: &Config, out: &Output) {
    let dur = cfg.duration_ns;
    for (f, fl) in out.flows.iter().zip(&cfg.flows) {
        // No byte is delivered twice: in-order delivery can never exceed the distinct bytes
        // ever sent (first transmissions).
        assert!(
            f.bytes_delivered <= f.bytes_sent,
            "flow {}: {} > {}",
            f.id,
            f.bytes_delivered,
            f.bytes_sent
        );
        assert!(f.bytes_delivered_window <= f.bytes_delivered);
        // The samples add up to the total (sampling covers the whole run here).
        let sum: u64 = out
            .samples
            .flow
            .iter()
            .zip(&out.samples.delivered_bytes)
            .filter(|(&i, _)| i == f.id)
            .map(|(_, &b)| b)
            .sum();
        assert_eq!(sum, f.bytes_delivered, "flow {}", f.id);
        let retx: u64 = out
            .samples
            .flow
            .iter()
            .zip(&out.samples.retransmits)
            .filter(|(&i, _)| i == f.id)
            .map(|(_, &b)| b)
            .sum();
        assert_eq!(retx, f.retransmits);
        // Samples only after the flow started.
        for (&i, &t) in out.samples.flow.iter().zip(&out.samples.t_ns) {
            if i == f.id {
                assert!(t > fl.start_ns);
            }
        }
    }
    // Capacity: bytes serialized per interval ≤ rate·interval (+ the packet that straddles).
    let per_interval =
        cfg.bottleneck.rate_bps as u128 * cfg.measure.interval_ns as u128 / 8 / 1_000_000_000;
    for &b in &out.link.tx_bytes {
        assert!(
            b as u128 <= per_interval + cfg.bottleneck.mtu_bytes as u128,
            "{b} > {per_interval}"
        );
    }
    let t = &out.link_totals;
    assert!(t.busy_ns <= dur + 1_000_000);
    assert_eq!(out.link.tx_bytes.iter().sum::<u64>(), t.tx_bytes);
    // Payload delivered ≤ wire bytes through the bottleneck.
    let delivered: u64 = out.flows.iter().map(|f| f.bytes_delivered).sum();
    assert!(delivered <= t.tx_bytes);
    // The queue never exceeds its limit.
    if let Some(b) = cfg.bottleneck.buffer_bytes {
        assert!(t.max_queue_bytes <= b, "{} > {b}", t.max_queue_bytes);
    }
    if let Some(p) = cfg.bottleneck.buffer_pkts {
        assert!(t.max_queue_pkts <= p);
    }
    for (&qb, &qp) in out.link.queue_bytes.iter().zip(&out.link.queue_pkts) {
        assert!(qb <= t.max_queue_bytes && qp <= t.max_queue_pkts);
    }
    // Sample times increase.
    assert!(out.link.t_ns.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(out.link.t_ns.len() as u64, dur / cfg.measure.interval_ns);
}

#[test]
fn invariants_hold_with_sack_newreno_loss_and_late_start() {
    let cfg = mixed();
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    assert!(out.link_totals.random_losses > 0);
    assert!(out.flows.iter().all(|f| f.bytes_delivered > 1_000_000));
}

#[test]
fn invariants_hold_with_packet_limit_and_red() {
    let mut cfg = mixed();
    cfg.bottleneck.buffer_bytes = None;
    cfg.bottleneck.buffer_pkts = Some(60);
    cfg.bottleneck.aqm = AqmConfig::Red {
        min_th: 5.0,
        max_th: 15.0,
        max_p: 0.1,
        wq: 0.002,
        bytes: false,
        gentle: false,
    };
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    // RED keeps the average queue near its thresholds (5..15 packets); drop-tail on the same
    // scenario lets it fill towards the 60-packet limit. Compare the sampled queues after
    // the start-up (t ≥ 5 s).
    let mut dt = cfg.clone();
    dt.bottleneck.aqm = AqmConfig::Droptail;
    let out_dt = run(&dt).unwrap();
    check(&dt, &out_dt);
    let mean = |o: &Output| {
        o.link.queue_pkts[5..].iter().sum::<u64>() as f64 / (o.link.queue_pkts.len() - 5) as f64
    };
    let (red, droptail) = (mean(&out), mean(&out_dt));
    assert!(
        red < 15.0 && red < droptail / 2.0,
        "RED {red} vs drop-tail {droptail}"
    );
}

#[test]
fn invariants_hold_with_a_tiny_buffer() {
    let mut cfg = mixed();
    cfg.bottleneck.buffer_bytes = Some(3000);
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
}

#[test]
fn same_seed_same_output_different_seed_different_output() {
    let cfg = mixed();
    let a = run(&cfg).unwrap();
    let b = run(&cfg).unwrap();
    assert_eq!(a, b);
    let mut other = cfg.clone();
    other.seed = 2;
    let c = run(&other).unwrap();
    assert_ne!(a.samples, c.samples);
}

#[test]
fn without_randomness_the_seed_does_not_matter() {
    let mut cfg = mixed();
    cfg.bottleneck.loss = 0.0;
    let a = run(&cfg).unwrap();
    cfg.seed = 99;
    assert_eq!(a, run(&cfg).unwrap());
}

#[test]
fn finite_flow_delivers_exactly_its_size_and_completes() {
    let mut f = flow(0, "reno", 30 * MS);
    f.size_bytes = Some(1_000_001); // not a multiple of the MSS: a short last segment
    let mut g = flow(1, "reno", 30 * MS);
    g.size_bytes = Some(5_000_000);
    g.sack = false;
    let mut cfg = dumbbell(10_000_000, 20_000, vec![f, g], 15 * S);
    cfg.bottleneck.loss = 0.002;
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    assert_eq!(out.flows[0].bytes_delivered, 1_000_001);
    assert_eq!(out.flows[0].bytes_sent, 1_000_001);
    assert_eq!(out.flows[1].bytes_delivered, 5_000_000);
    // 6 MB at 10 Mbit/s takes ≥ 4.8 s; both finish well inside 15 s.
    let c1 = out.flows[1].completion_ns.unwrap();
    assert!(c1 > 4_800 * MS && c1 < 15 * S, "{c1}");
    assert!(out.flows[0].completion_ns.unwrap() < c1);
}

#[test]
fn app_limited_flow_sends_at_its_rate() {
    let mut f = flow(0, "reno", 20 * MS);
    f.app_rate_bps = Some(2_000_000);
    let cfg = dumbbell(10_000_000, 50_000, vec![f], 10 * S);
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    // 2 Mbit/s for 10 s minus the handshake (20 ms) and what is still in flight: ≈ 2.495 MB
    // of payload; the writer only releases whole segments.
    let d = out.flows[0].bytes_delivered as f64;
    assert!((d - 2.495e6).abs() < 0.01 * 2.495e6, "{d}");
    assert_eq!(out.flows[0].retransmits, 0);
}

#[test]
fn stopped_flow_stops() {
    let mut f = flow(0, "reno", 20 * MS);
    f.stop_ns = Some(3 * S);
    let cfg = dumbbell(10_000_000, 50_000, vec![f], 8 * S);
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    // After the stop only the send queue drains (Linux's autotuned send buffer holds about
    // two congestion windows): at 10 Mbit/s that takes well under a second.
    assert!(out.samples.delivered_bytes[2] > 0);
    let last: u64 = out.samples.delivered_bytes[4..].iter().sum();
    assert_eq!(last, 0, "nothing delivered after the send queue drained");
}

#[test]
fn flow_stopped_before_its_handshake_ends_sends_nothing() {
    let mut f = flow(0, "reno", 100 * MS);
    f.start_ns = S;
    f.stop_ns = Some(S + 50 * MS); // before start + RTT, when data would begin
    let cfg = dumbbell(10_000_000, 50_000, vec![f, flow(1, "reno", 20 * MS)], 3 * S);
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    assert_eq!(
        (out.flows[0].bytes_sent, out.flows[0].bytes_delivered),
        (0, 0)
    );
    assert!(out.flows[1].bytes_delivered > 0);
}

#[test]
fn rwnd_limits_throughput_to_window_over_rtt() {
    // rmem 100 kB → 50 kB advertised (tcp_adv_win_scale = 1) → 34 segments of 1448 B per
    // 100 ms RTT ≈ 3.94 Mbit/s on a 100 Mbit/s link, no losses.
    let mut f = flow(0, "reno", 100 * MS);
    f.rmem_bytes = 100_000;
    let cfg = dumbbell(100_000_000, 1_000_000, vec![f], 10 * S);
    let out = run(&cfg).unwrap();
    let bytes: u64 = out.samples.delivered_bytes[2..].iter().sum();
    let rate = bytes as f64 * 8.0 / 8.0;
    let expect = 34.0 * 1448.0 * 8.0 / 0.100_12;
    assert!((rate - expect).abs() < 0.02 * expect, "{rate} vs {expect}");
    assert_eq!(out.flows[0].retransmits, 0);
}

#[test]
fn cwnd_clamp_caps_the_window() {
    let mut f = flow(0, "reno", 100 * MS);
    f.cwnd_clamp = Some(20);
    let cfg = dumbbell(100_000_000, 1_000_000, vec![f], 5 * S);
    let out = run(&cfg).unwrap();
    assert!(out.samples.cwnd_bytes.iter().all(|&c| c <= 20 * 1448));
    let bytes: u64 = out.samples.delivered_bytes[2..].iter().sum();
    let expect = 20.0 * 1448.0 / 0.100_12 * 3.0;
    assert!(
        (bytes as f64 - expect).abs() < 0.02 * expect,
        "{bytes} vs {expect}"
    );
}

#[test]
fn unknown_cca_is_an_error_naming_the_flow() {
    let mut cfg = mixed();
    cfg.flows[1].cca = "tahoe".into();
    let e = run(&cfg).unwrap_err();
    assert!(e.to_string().starts_with("flows.1.cca:"), "{e}");
}

/// Random small scenarios (every feature, extreme values): no panic (debug builds check
/// arithmetic overflow), and every invariant holds.
#[test]
fn random_scenarios_keep_the_invariants() {
    use tcpfair_sim::rng::Rng;
    let mut r = Rng::new(2024);
    let mut pick = |lo: u64, hi: u64| lo + r.next_u64() % (hi - lo + 1);
    for case in 0..200 {
        let rate = pick(1, 100) * 1_000_000;
        let n = pick(1, 4) as u32;
        let mut flows = Vec::new();
        for i in 0..n {
            let mut f = flow(
                i,
                if pick(0, 1) == 0 { "reno" } else { "newreno" },
                pick(1, 200) * MS,
            );
            f.sack = pick(0, 2) > 0;
            f.start_ns = pick(0, 1000) * MS;
            if pick(0, 3) == 0 {
                f.size_bytes = Some(pick(1, 3_000_000));
            }
            if pick(0, 3) == 0 {
                f.app_rate_bps = Some(pick(100_000, 50_000_000));
            }
            if pick(0, 4) == 0 {
                f.stop_ns = Some(f.start_ns + pick(1, 3000) * MS);
            }
            if pick(0, 4) == 0 {
                f.cwnd_clamp = Some(pick(2, 50) as u32);
            }
            if pick(0, 4) == 0 {
                f.rmem_bytes = pick(6000, 200_000);
                f.wmem_bytes = pick(3000, 200_000);
            }
            flows.push(f);
        }
        let mut cfg = dumbbell(rate, 0, flows, pick(2, 4) * S);
        cfg.seed = case;
        cfg.bottleneck.mtu_bytes = [576, 1500, 9000][pick(0, 2) as usize];
        if pick(0, 1) == 0 {
            cfg.bottleneck.buffer_bytes = Some(pick(0, 400_000));
        } else {
            cfg.bottleneck.buffer_bytes = None;
            cfg.bottleneck.buffer_pkts = Some(pick(0, 300));
        }
        cfg.bottleneck.loss = [0.0, 0.0, 1e-3, 0.02, 0.2][pick(0, 4) as usize];
        if pick(0, 3) == 0 {
            let min_th = pick(0, 20) as f64;
            cfg.bottleneck.aqm = AqmConfig::Red {
                min_th,
                max_th: min_th + pick(1, 40) as f64,
                max_p: 0.1,
                wq: 0.002,
                bytes: false,
                gentle: pick(0, 1) == 0,
            };
        }
        cfg.measure.interval_ns = [100 * MS, 500 * MS, S][pick(0, 2) as usize];
        let out = match run(&cfg) {
            Ok(o) => o,
            Err(e) => {
                // Only the documented configuration errors (e.g. rmem below 2 segments).
                assert!(e.to_string().starts_with("flows."), "case {case}: {e}");
                continue;
            }
        };
        check(&cfg, &out);
        for (f, fc) in out.flows.iter().zip(&cfg.flows) {
            if let Some(size) = fc.size_bytes {
                assert!(f.bytes_delivered <= size, "case {case}");
                if f.completion_ns.is_some() {
                    assert_eq!(f.bytes_delivered, size, "case {case}");
                }
            }
        }
    }
}

#[test]
fn red_in_byte_mode_recovers_from_a_slow_start_overflow() {
    // Three flows overflow the 100-packet buffer in slow start before RED's slow average
    // (w_q = 0.002) reacts, leaving the average far above max_th. It must decay over the
    // idle time that follows, also across arrivals RED drops (Floyd & Jacobson: the idle
    // period lasts until a packet is queued); otherwise every retransmission is dropped
    // and the flows back off into starvation.
    let mut cfg = dumbbell(
        10_000_000,
        0,
        vec![
            flow(0, "reno", 40 * MS),
            flow(1, "reno", 40 * MS),
            flow(2, "reno", 40 * MS),
        ],
        30 * S,
    );
    cfg.bottleneck.buffer_bytes = None;
    cfg.bottleneck.buffer_pkts = Some(100);
    cfg.bottleneck.aqm = AqmConfig::Red {
        min_th: 15_000.0,
        max_th: 45_000.0,
        max_p: 0.1,
        wq: 0.002,
        bytes: true,
        gentle: false,
    };
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    let tx: u64 = out.link.tx_bytes[10..].iter().sum();
    let util = tx as f64 * 8.0 / (10e6 * 20.0);
    assert!(util > 0.8, "utilization {util}");
    assert!(
        out.flows.iter().all(|f| f.bytes_delivered > 5_000_000),
        "{:?}",
        out.flows
    );
}

/// `mixed()` with every sender's GSO/TSO on.
fn mixed_gso() -> Config {
    let mut c = mixed();
    for f in &mut c.flows {
        f.gso = true;
    }
    c
}

#[test]
fn invariants_hold_with_gso_senders() {
    let cfg = mixed_gso();
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    assert!(out.link_totals.random_losses > 0 && out.link_totals.drops > 0);
    assert!(out.flows.iter().all(|f| f.bytes_delivered > 1_000_000));
    // A tiny buffer: 3 000 B holds two frames; aggregates larger than that are dropped
    // whole unless the link is idle, but the flows still get through.
    let mut tiny = mixed_gso();
    tiny.bottleneck.buffer_bytes = Some(3000);
    let out = run(&tiny).unwrap();
    check(&tiny, &out);
    assert!(out.flows.iter().all(|f| f.bytes_delivered > 0));
}

#[test]
fn gso_changes_the_run_and_conserves_bytes() {
    let cfg = mixed();
    let plain = run(&cfg).unwrap();
    let gso = run(&mixed_gso()).unwrap();
    assert_ne!(plain.samples, gso.samples);
    // Finite GSO flows deliver exactly their size, through losses and drops.
    let mut f = flow(0, "cubic", 30 * MS);
    f.size_bytes = Some(3_000_001);
    f.gso = true;
    let mut g = flow(1, "reno", 30 * MS);
    g.size_bytes = Some(5_000_000);
    g.sack = false;
    g.gso = true;
    let mut cfg = dumbbell(10_000_000, 20_000, vec![f, g], 20 * S);
    cfg.bottleneck.loss = 0.002;
    let out = run(&cfg).unwrap();
    check(&cfg, &out);
    assert_eq!(out.flows[0].bytes_delivered, 3_000_001);
    assert_eq!(out.flows[0].bytes_sent, 3_000_001);
    assert_eq!(out.flows[1].bytes_delivered, 5_000_000);
    assert!(out.flows.iter().all(|f| f.completion_ns.is_some()));
}
