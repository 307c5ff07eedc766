//! Congestion controls inside the whole simulator, against what each is designed to do:
//! Vegas holds α..β of its packets in the bottleneck queue, BBR keeps a deep buffer almost
//! empty while filling the link, CUBIC flows of equal RTT share fairly.

mod common;
use common::*;
use tcpfair_sim::run;

fn jfi(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn two_vegas_flows_keep_alpha_to_beta_packets_each_queued() {
    // 10 Mbit/s, 40 ms, a 200-packet buffer that never overflows in steady state.
    // Vegas (Linux α = 2, β = 4) stops growing once its own packets in the queue,
    // ⌊cwnd·(RTT − BaseRTT)/BaseRTT⌋, are within [α, β]: 2 flows → 4 to 8 packets, plus
    // up to one per flow from the integer truncation of diff.
    let rate = 10_000_000;
    let flows = vec![flow(0, "vegas", 40 * MS), flow(1, "vegas", 40 * MS)];
    let mut cfg = dumbbell(rate, 200 * 1500, flows, 60 * S);
    cfg.measure.from_ns = 30 * S;
    let out = run(&cfg).unwrap();
    let q = &out.link.queue_pkts[30..];
    eprintln!("vegas queue {q:?}");
    assert!(q.iter().all(|&p| (4..=10).contains(&p)), "queue {q:?}");
    assert_eq!(out.link_totals.drops, 0);
    let d: Vec<f64> = out
        .flows
        .iter()
        .map(|f| f.bytes_delivered_window as f64)
        .collect();
    assert!(jfi(&d) > 0.98, "{d:?}");
}

#[test]
fn bbr_fills_the_link_and_keeps_a_deep_buffer_nearly_empty() {
    // 20 Mbit/s, 40 ms (BDP 66.7 packets), buffer 10 BDP. Paced at the bottleneck rate
    // with cwnd ≤ 2·BDP + allowances, BBR's queue in PROBE_BW is what its 1.25 probe adds
    // (¼ BDP for one RTT) and it drains in the next phase; a loss-based flow would fill
    // all 667 packets. Utilization: PROBE_RTT costs ~200 ms per 10 s (2 %), the 0.75
    // phase may leave the link idle briefly.
    let rate = 20_000_000;
    let bdp_pkts = 20e6 * 0.04 / 8.0 / 1500.0;
    let cfg = dumbbell(
        rate,
        10 * bdp_bytes(rate, 40 * MS),
        vec![flow(0, "bbr", 40 * MS)],
        40 * S,
    );
    let out = run(&cfg).unwrap();
    let q = &out.link.queue_pkts[10..];
    let mut sorted = q.to_vec();
    sorted.sort_unstable();
    assert!(
        (sorted[sorted.len() / 2] as f64) < 0.25 * bdp_pkts,
        "queue {q:?}"
    );
    assert!(out.link_totals.drops == 0 && out.flows[0].retransmits == 0);
    let tx: u64 = out.link.tx_bytes[10..].iter().sum();
    let util = tx as f64 * 8.0 / (rate as f64 * 30.0);
    eprintln!("bbr util {util} queue {q:?}");
    assert!(util > 0.95, "utilization {util}");
}

#[test]
fn two_cubic_flows_with_equal_rtt_share_fairly() {
    // Second flow starts 5 s later into a 1-BDP buffer; fast convergence gives up
    // bandwidth at each loss until the windows meet.
    let rate = 20_000_000;
    let mut f1 = flow(1, "cubic", 40 * MS);
    f1.start_ns = 5 * S;
    let mut cfg = dumbbell(
        rate,
        bdp_bytes(rate, 40 * MS),
        vec![flow(0, "cubic", 40 * MS), f1],
        90 * S,
    );
    cfg.measure.from_ns = 30 * S;
    let out = run(&cfg).unwrap();
    let d: Vec<f64> = out
        .flows
        .iter()
        .map(|f| f.bytes_delivered_window as f64)
        .collect();
    eprintln!("cubic jfi {} {d:?}", jfi(&d));
    assert!(jfi(&d) > 0.95, "{d:?}");
}
