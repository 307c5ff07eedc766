//! Behaviour against independent references: the Reno sawtooth's utilization against
//! buffer size, the Mathis et al. throughput under random loss, convergence to fairness.

mod common;
use common::*;
use tcpfair_sim::run;

/// Utilization of one Reno flow from the sawtooth model, for a pipe of `p` segments
/// (bandwidth × base RTT) and a buffer of `b` segments.
///
/// cwnd W climbs by one segment per RTT from W0 = (P+B)/2 (after halving) to Wm = P+B
/// (the buffer overflows). While W < P the link is partly idle: the RTT is the base RTT τ
/// and the flow sends W per τ, for (P−W0)·τ seconds, (P²−W0²)/2 segments. While W ≥ P the
/// link is busy, the RTT is W/C, so W grows by one per W/C: (Wm²−P²)/(2C) seconds at full
/// rate C = P/τ. Utilization = segments sent / (C · cycle time)
///   = ((Wm²−W0²)/2) / (P·(P−W0) + (Wm²−P²)/2)
/// which gives 3/4 for B = 0 and 1 for B ≥ P (e.g. Appenzeller et al., SIGCOMM 2004, §2).
fn sawtooth_utilization(p: f64, b: f64) -> f64 {
    let (w0, wm) = ((p + b) / 2.0, p + b);
    if w0 >= p {
        return 1.0;
    }
    ((wm * wm - w0 * w0) / 2.0) / (p * (p - w0) + (wm * wm - p * p) / 2.0)
}

/// Link utilization over [10 s, end) for one SACK Reno flow, 50 Mbit/s, 40 ms RTT.
fn reno_utilization(buffer_pkts: u64, sack: bool) -> (f64, f64) {
    let rate = 50_000_000;
    let rtt = 40 * MS;
    let dur = 130 * S;
    let mut f = flow(0, "reno", rtt);
    f.sack = sack;
    let mut cfg = dumbbell(rate, 0, vec![f], dur);
    cfg.bottleneck.buffer_bytes = None;
    cfg.bottleneck.buffer_pkts = Some(buffer_pkts);
    let out = run(&cfg).unwrap();
    let tx: u64 = out.link.tx_bytes[40..].iter().sum();
    let util = tx as f64 * 8.0 / (rate as f64 * 90.0);
    // Pipe in full-sized packets: 50 Mbit/s × 40 ms / 1500 B = 166.7 (the serialization of
    // one packet adds 0.24 ms to the RTT: 1 more packet).
    let p = rate as f64 * (rtt as f64 / 1e9 + 1500.0 * 8.0 / rate as f64) / 8.0 / 1500.0;
    (util, sawtooth_utilization(p, buffer_pkts as f64))
}

#[test]
fn sawtooth_model_values() {
    assert!((sawtooth_utilization(100.0, 0.0) - 0.75).abs() < 1e-12);
    assert!((sawtooth_utilization(100.0, 50.0) - 27.0 / 28.0).abs() < 1e-12);
    assert_eq!(sawtooth_utilization(100.0, 100.0), 1.0);
}

#[test]
fn reno_utilization_follows_the_sawtooth_model() {
    // The model is a fluid: it ignores the one-RTT delay in detecting the overflow (cwnd
    // overshoots Wm a little, raising W0), the recovery episode (PRR holds the pipe near
    // ssthresh for an RTT) and segment granularity. Each is worth well under 1 % here; we
    // accept ±0.02, in steady state ([40 s, 130 s): NewReno needs ~20 s to dig out of the
    // slow-start overshoot at 1 BDP). Measured at commit time (NewReno / SACK):
    // 2 pkt 0.754/0.555, 42 pkt 0.887/0.885, 83 pkt 0.960/0.959, 167 pkt 1.000/1.000
    // against 0.759, 0.893, 0.963, 1.000.
    for b in [2u64, 42, 83, 167] {
        let (u, model) = reno_utilization(b, false);
        eprintln!("buffer {b} pkts, NewReno: utilization {u:.4}, sawtooth model {model:.4}");
        assert!(
            (u - model).abs() < 0.02 && u <= 1.0,
            "NewReno, buffer {b}: {u} vs {model}"
        );
    }
    for b in [42u64, 83, 167] {
        let (u, model) = reno_utilization(b, true);
        eprintln!("buffer {b} pkts, SACK: utilization {u:.4}, sawtooth model {model:.4}");
        assert!(
            (u - model).abs() < 0.02 && u <= 1.0,
            "SACK, buffer {b}: {u} vs {model}"
        );
    }
}

#[test]
fn sack_compression_bursts_hurt_with_a_two_packet_buffer() {
    // A known deviation from the fluid model, kept on purpose because Linux does it: with
    // SACK the receiver compresses dupACKs (one per ms after the third), so in recovery
    // each ACK reports several segments and PRR releases bursts of 3–5 segments, which a
    // 2-packet buffer cannot absorb: extra losses in the same episode halve cwnd again.
    // NewReno's dupACKs are not compressed and match the model (test above).
    let (sack, model) = reno_utilization(2, true);
    let (newreno, _) = reno_utilization(2, false);
    eprintln!("buffer 2 pkts: SACK {sack:.4}, NewReno {newreno:.4}, model {model:.4}");
    assert!(
        sack < model - 0.1 && sack < newreno,
        "{sack} vs {newreno} vs {model}"
    );
}

/// Mathis et al., "The Macroscopic Behavior of the TCP Congestion Avoidance Algorithm",
/// CCR 1997: BW = (MSS/RTT)·C/√p. For periodic loss and an ACK per segment C = √(3/2) ≈ 1.22;
/// with delayed ACKs (window growth of 1/2 segment per RTT) C = √(3/4) ≈ 0.87. Linux's Reno
/// grows cwnd per segment acknowledged (`cwnd_cnt += acked`), so delayed ACKs do not slow
/// its growth and C ≈ 1.22 applies. Under Bernoulli loss the window varies more from cycle
/// to cycle; the paper's simulations put C a little higher (≈1.3), while occasional
/// timeouts and multiple losses per window (p·W not ≪ 1 at p = 1e-3) pull it down. We
/// accept C ∈ [1.0, 1.45]: the model is only that precise. (Measured at commit time:
/// 1.263, 1.269, 1.239 for p = 1e-4, 3e-4, 1e-3.)
fn mathis_c(p: f64, seed: u64) -> f64 {
    let rtt = 100 * MS;
    let dur = 300 * S;
    // A link ten times faster than the expected rate: the queue stays empty, RTT ≈ base.
    let mut cfg = dumbbell(100_000_000, 2_000_000, vec![flow(0, "reno", rtt)], dur);
    cfg.bottleneck.loss = p;
    cfg.seed = seed;
    let out = run(&cfg).unwrap();
    let bytes: u64 = out.samples.delivered_bytes[20..].iter().sum();
    let bw = bytes as f64 / 280.0; // bytes/s over [20 s, 300 s)
    let mss = 1448.0;
    bw * (rtt as f64 / 1e9) / mss * p.sqrt()
}

#[test]
fn reno_under_random_loss_follows_mathis() {
    for (p, seed) in [(1e-4, 1), (3e-4, 2), (1e-3, 3)] {
        let c = mathis_c(p, seed);
        eprintln!("p = {p}: C = {c:.3}");
        assert!((1.0..=1.45).contains(&c), "p = {p}: C = {c}");
    }
}

/// Jain's index of a set of rates.
fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

#[test]
fn two_reno_flows_same_rtt_converge_to_a_fair_share() {
    // The second flow starts 5 s late, at a disadvantage; AIMD converges (Chiu & Jain 1989).
    let mut flows = vec![flow(0, "reno", 40 * MS), flow(1, "reno", 40 * MS)];
    flows[1].start_ns = 5 * S;
    let rate = 20_000_000;
    let cfg = dumbbell(rate, bdp_bytes(rate, 40 * MS), flows, 200 * S);
    let out = run(&cfg).unwrap();
    let x: Vec<f64> = (0..2u32)
        .map(|f| {
            out.samples
                .flow
                .iter()
                .zip(&out.samples.t_ns)
                .zip(&out.samples.delivered_bytes)
                .filter(|((&i, &t), _)| i == f && t > 100 * S)
                .map(|(_, &b)| b as f64)
                .sum()
        })
        .collect();
    let j = jain(&x);
    eprintln!("JFI over [100 s, 200 s): {j:.4} ({x:?})");
    assert!(j > 0.95, "{j}");
    let util = (x[0] + x[1]) * 8.0 / (rate as f64 * 100.0);
    assert!(util > 0.9, "{util}");
}

#[test]
fn newreno_two_flows_also_share() {
    let mut flows = vec![flow(0, "reno", 40 * MS), flow(1, "reno", 40 * MS)];
    flows[0].sack = false;
    flows[1].sack = false;
    let rate = 20_000_000;
    let cfg = dumbbell(rate, bdp_bytes(rate, 40 * MS), flows, 150 * S);
    let out = run(&cfg).unwrap();
    let d: Vec<f64> = out.flows.iter().map(|f| f.bytes_delivered as f64).collect();
    assert!(jain(&d) > 0.95, "{d:?}");
    assert!(out.flows.iter().all(|f| f.retransmits > 0));
}

#[test]
fn sack_recovery_retransmits_exactly_the_dropped_segments() {
    // Without random loss and without timeouts, every retransmission should repair a drop:
    // RACK marks nothing that was delivered, the receiver's SACK blocks (compressed or
    // not, 3 per ACK) never hide a delivered segment for good, and the slow-start
    // overshoot (hundreds of drops in one window) is repaired once per hole.
    let mut flows = vec![
        flow(0, "reno", 40 * MS),
        flow(1, "reno", 40 * MS),
        flow(2, "reno", 90 * MS),
    ];
    flows[2].start_ns = 3 * S;
    let rate = 50_000_000;
    let cfg = dumbbell(rate, bdp_bytes(rate, 40 * MS), flows, 60 * S);
    let out = run(&cfg).unwrap();
    let retx: u64 = out.flows.iter().map(|f| f.retransmits).sum();
    let timeouts: u64 = out.flows.iter().map(|f| f.timeouts).sum();
    assert_eq!(timeouts, 0);
    assert!(out.link_totals.drops > 100);
    assert_eq!(retx, out.link_totals.drops);
}

#[test]
fn late_starter_measures_the_standing_queue_in_its_handshake() {
    // Flow 0 keeps a deep queue: 10 Mbit/s, 20 ms, buffer 10 BDP; after its first loss
    // cwnd halves to ~5.5 BDP, so at least ~4.5 BDP (90 ms) stays queued. Flow 1 opens at
    // 5 s: its SYN waits behind that queue, and Linux takes min_rtt and SRTT from the
    // handshake, so both start well above the 20 ms base RTT.
    let rate = 10_000_000;
    let mut f1 = flow(1, "reno", 20 * MS);
    f1.start_ns = 5 * S;
    let cfg = dumbbell(
        rate,
        10 * bdp_bytes(rate, 20 * MS),
        vec![flow(0, "reno", 20 * MS), f1],
        6 * S,
    );
    let mut sim = tcpfair_sim::sim::Sim::new(&cfg).unwrap();
    sim.run_until(tcpfair_sim::units::SimTime(5 * S + 10 * MS)); // the SYN is at the bottleneck
    let q_delay_ns = sim.link_queue_bytes() * 8 * 1_000_000_000 / rate;
    assert!(q_delay_ns > 50 * MS, "queue {q_delay_ns} ns");
    sim.run_until(tcpfair_sim::units::SimTime(5 * S + 300 * MS));
    let min_rtt = sim.flows[1].sender.tcp.min_rtt.0;
    // The handshake RTT: base + the queue ahead of the SYN (± what one packet time and
    // the queue's change over the SYN's wait add).
    assert!(
        min_rtt > 20 * MS + q_delay_ns / 2,
        "min_rtt {min_rtt}, queue {q_delay_ns}"
    );
    assert!(
        min_rtt < 20 * MS + 2 * q_delay_ns,
        "min_rtt {min_rtt}, queue {q_delay_ns}"
    );
}
