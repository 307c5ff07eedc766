//! The per-packet random host delay at the sender (`jitter_ns`): seeded, FIFO per flow.

mod common;
use common::*;
use tcpfair_sim::{run, Config};

/// One Reno flow, 100 Mbit/s, 20 ms, with a buffer larger than anything the receive window
/// lets it put in flight: no packet can be dropped.
fn lossless(jitter_ns: u64) -> Config {
    let mut f = flow(0, "reno", 20 * MS);
    f.jitter_ns = jitter_ns;
    // rwnd = rmem / 2 = 1 MB < buffer (4 MB): the queue never overflows.
    f.rmem_bytes = 2_000_000;
    dumbbell(100_000_000, 4_000_000, vec![f], 5 * S)
}

#[test]
fn jitter_never_reorders_a_flows_packets() {
    // 1 ms of jitter is ~8 packet times at 100 Mbit/s, so raw draws would put consecutive
    // packets out of order constantly and trigger dupack/RACK recovery. Kept FIFO (the
    // delay line's times are clamped to be non-decreasing; see event.rs's unit test), a
    // lossless path has no reason to retransmit or time out, and it still fills the link.
    let out = run(&lossless(1_000_000)).unwrap();
    let f = &out.flows[0];
    assert_eq!(f.retransmits, 0, "{f:?}");
    assert_eq!(f.timeouts, 0);
    assert!(f.bytes_delivered > 50_000_000, "{f:?}");
}

#[test]
fn jitter_is_seeded_same_seed_same_output() {
    let mut cfg = lossless(100_000);
    cfg.flows.push({
        let mut f = flow(1, "cubic", 20 * MS);
        f.jitter_ns = 100_000;
        f
    });
    cfg.bottleneck.buffer_bytes = Some(bdp_bytes(100_000_000, 20 * MS));
    let a = run(&cfg).unwrap();
    let b = run(&cfg).unwrap();
    assert_eq!(a, b);
    // The jitter is the only randomness here (no loss, no BBR): another seed must change
    // the run, and zero jitter must give a different run from 100 µs.
    let mut other = cfg.clone();
    other.seed = 2;
    assert_ne!(run(&other).unwrap(), a);
    let mut none = cfg.clone();
    for f in &mut none.flows {
        f.jitter_ns = 0;
    }
    let n1 = run(&none).unwrap();
    none.seed = 2;
    assert_eq!(
        run(&none).unwrap(),
        n1,
        "without jitter the seed must not matter"
    );
    assert_ne!(n1, a);
}

#[test]
fn jitter_adds_its_mean_to_the_rtt() {
    // Uniform [0, 2 ms] at the sender adds at least its mean, 1 ms, to each packet's
    // one-way delay (FIFO clamping can only add) and at most 2 ms. With a window far below
    // the BDP there is no queue: 20 ms + 0.12 ms serialization + [1, 2] ms.
    let mut cfg = lossless(2_000_000);
    cfg.flows[0].cwnd_clamp = Some(20);
    let out = run(&cfg).unwrap();
    let srtt: Vec<f64> = out
        .samples
        .srtt_ns
        .iter()
        .skip(2)
        .map(|&x| x as f64 / 1e6)
        .collect();
    let mean = srtt.iter().sum::<f64>() / srtt.len() as f64;
    assert!((21.1..22.2).contains(&mean), "{mean} ms");
}

#[test]
fn jitter_above_one_second_is_rejected_naming_the_key() {
    let mut cfg = lossless(0);
    cfg.flows[0].jitter_ns = 2 * S;
    let e = run(&cfg).unwrap_err().to_string();
    assert!(e.contains("flows.0.jitter"), "{e}");
}

// ------------------------------------------------------------------ ACK-path jitter
/// Mean smoothed RTT (ms) over the run's samples of flow 0.
fn mean_srtt_ms(out: &tcpfair_sim::Output) -> f64 {
    let s = &out.samples;
    let v: Vec<f64> = (0..s.flow.len())
        .filter(|&i| s.flow[i] == 0 && s.srtt_ns[i] > 0)
        .map(|i| s.srtt_ns[i] as f64 / 1e6)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn ack_jitter_adds_half_its_bound_to_the_rtt() {
    // An application-limited flow (2 Mbit/s on a 100 Mbit/s link, no queue): its ACKs are
    // ~10 ms apart, far more than the 4 ms bound, so the FIFO clamp never binds and every
    // ACK is held a plain uniform [0, 4 ms]: RTT samples rise by its mean, 2 ms.
    let mk = |aj: u64| {
        let mut f = flow(0, "reno", 20 * MS);
        f.app_rate_bps = Some(2_000_000);
        f.ack_jitter_ns = aj;
        let mut c = dumbbell(100_000_000, 1_000_000, vec![f], 20 * S);
        c.measure.interval_ns = 100 * MS;
        c
    };
    let base = run(&mk(0)).unwrap();
    let jit = run(&mk(4 * MS)).unwrap();
    let d = mean_srtt_ms(&jit) - mean_srtt_ms(&base);
    // srtt is an EWMA (gain 1/8) of samples with sd 4/√12 = 1.15 ms: over ~200 samples the
    // mean is good to ~0.1 ms
    assert!((d - 2.0).abs() < 0.3, "srtt rose by {d:.3} ms");
    assert_eq!(jit.flows[0].retransmits, 0);
}

#[test]
fn bunched_acks_overflow_a_three_packet_buffer_but_not_a_bdp() {
    // One Reno flow, 100 Mbit/s, 20 ms, with the default 120 µs send jitter. With a
    // 3-packet buffer a smooth ACK clock keeps trains short (2–3 segments per ACK); ACKs
    // held up to one packet time (120 µs) more reach the sender bunched, release 4–5
    // segments at once and overflow the queue long before cwnd reaches BDP + buffer
    // (docs/validation.md D2: Linux on the kernel backend reaches 12 % here). With 1 BDP
    // of buffer the same bursts fit.
    let util = |buf: u64, aj: u64| {
        let mut f = flow(0, "reno", 20 * MS);
        f.jitter_ns = 120_000;
        f.rmem_bytes = 52_428_800;
        f.wmem_bytes = 52_428_800;
        f.ack_jitter_ns = aj;
        let out = run(&dumbbell(100_000_000, buf, vec![f], 30 * S)).unwrap();
        out.link_totals.busy_ns as f64 / (30 * S) as f64
    };
    let (smooth, bunched) = (util(3 * 1500, 0), util(3 * 1500, 120_000));
    assert!(
        bunched < 0.6 * smooth,
        "3 packets: {smooth:.3} → {bunched:.3}"
    );
    let bdp = bdp_bytes(100_000_000, 20 * MS);
    let (smooth, bunched) = (util(bdp, 0), util(bdp, 120_000));
    assert!(
        (smooth - bunched).abs() < 0.01,
        "1 BDP: {smooth:.3} → {bunched:.3}"
    );
}

#[test]
fn ack_jitter_is_seeded() {
    let mut cfg = lossless(100_000);
    cfg.flows[0].ack_jitter_ns = 50_000;
    assert_eq!(run(&cfg).unwrap(), run(&cfg).unwrap());
    // with no send jitter, the ACK path's draws alone make the seed matter
    cfg.flows[0].jitter_ns = 0;
    let mut other = cfg.clone();
    other.seed = 2;
    assert_ne!(run(&other).unwrap(), run(&cfg).unwrap());
}
