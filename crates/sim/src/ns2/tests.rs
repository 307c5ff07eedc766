//! Tests of the ns-2 agents: whole runs on a dumbbell (Vegas's equilibria and RTT
//! fairness) and hand-driven Reno/NewReno senders (per-ACK growth, fast recovery).

use super::agent::{Agent, CwndAction, Variant};
use crate::config::{AqmConfig, BottleneckConfig, Config, FlowConfig, MeasureConfig, Stack};
use crate::event::{DelayLine, EventQueue};
use crate::packet::Packet;
use crate::sim::Sim;
use crate::tcp::Io;
use crate::units::SimTime;
use std::collections::BTreeMap;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn ns2_flow(id: u32, cca: &str, rtt_ns: u64, params: &[(&str, f64)]) -> FlowConfig {
    FlowConfig {
        id,
        group: id,
        cca: cca.into(),
        cca_params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        rtt_ns,
        start_ns: 0,
        stop_ns: None,
        size_bytes: None,
        app_rate_bps: None,
        sack: false,
        rmem_bytes: 6_291_456,
        wmem_bytes: 4_194_304,
        cwnd_clamp: Some(30),
        jitter_ns: 0,
        ack_jitter_ns: 0,
        stack: Stack::Ns2,
    }
}

/// Seed 003's network: 1.5 Mbit/s, 100 packets of buffer, 1000-byte packets (+40).
fn vegas_net(flows: Vec<FlowConfig>, aqm: AqmConfig, duration_ns: u64) -> Config {
    Config {
        name: "ns2".into(),
        duration_ns,
        seed: 1,
        bottleneck: BottleneckConfig {
            rate_bps: 1_500_000,
            buffer_bytes: None,
            buffer_pkts: Some(100),
            aqm,
            loss: 0.0,
            mtu_bytes: 1040,
        },
        flows,
        measure: MeasureConfig {
            interval_ns: S,
            from_ns: 10 * S,
            to_ns: duration_ns,
        },
    }
}

/// Per flow: packets it has queued at the bottleneck (mean over the samples after 10 s,
/// from in-flight − rate × base RTT) and its throughput in the window (bit/s).
struct Run {
    rate_bps: Vec<f64>,
    queued: Vec<f64>,
}

fn run(cfg: &Config) -> Run {
    let mut sim = Sim::new(cfg).expect("valid config");
    let n = cfg.flows.len();
    let mut queued = vec![0.0; n];
    let mut samples = 0.0;
    let mut t = 10 * S;
    let pkt_ns = 1040.0 * 8.0 / cfg.bottleneck.rate_bps as f64 * 1e9;
    while t < cfg.duration_ns {
        sim.run_until(SimTime(t));
        for (i, fl) in sim.flows.iter().enumerate() {
            let c = fl.ns2.as_ref().expect("ns2 flow");
            // packets outstanding minus those on the wire and in flight on the paths:
            // the pipe holds (rtt + one serialization) / (time per packet of this flow)
            let base = cfg.flows[i].rtt_ns as f64 + pkt_ns;
            let share = c.agent.in_flight() as f64; // outstanding
            let v = match &c.agent.variant {
                Variant::Vegas(v) => v.base_rtt,
                _ => base / 1e9,
            };
            // Vegas's own view: diff = outstanding · (1 − BaseRTT/RTT) is what sits queued
            let _ = v;
            queued[i] += share;
        }
        samples += 1.0;
        t += S / 10;
    }
    let out = sim.finish();
    let secs = (cfg.measure.to_ns - cfg.measure.from_ns) as f64 / 1e9;
    Run {
        rate_bps: out
            .flows
            .iter()
            .map(|f| f.bytes_delivered_window as f64 * 8.0 / secs)
            .collect(),
        queued: queued.iter().map(|q| q / samples).collect(),
    }
}

#[test]
fn probe_table3() {
    let sets: Vec<Vec<(&str, f64)>> = vec![
        vec![("alpha", 1.0), ("beta", 3.0)],
        vec![("delta", 1.0)],
        vec![("delta", 2.0)],
        vec![("delta", 3.0)],
        vec![("alpha", 2.0), ("beta", 2.0)],
        vec![("alpha", 3.0), ("beta", 3.0)],
    ];
    for ps in sets {
        eprintln!("{ps:?}");
        for x2 in [1u64, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110] {
            let rtt2 = (2 * (x2 + 2)) * MS + 1_664_000;
            let flows = vec![
                ns2_flow(0, "vegas", 7_664_000, &ps),
                ns2_flow(1, "vegas", rtt2, &ps),
            ];
            let red = AqmConfig::Red {
                min_th: 15.0,
                max_th: 45.0,
                max_p: 0.1,
                wq: 0.002,
                bytes: false,
                gentle: false,
            };
            let r = run(&vegas_net(flows, red, 60 * S));
            eprintln!(
                "x2={x2} rates {:.0} {:.0} ratio {:.2} outstanding {:.1} {:.1}",
                r.rate_bps[0],
                r.rate_bps[1],
                r.rate_bps[0] / r.rate_bps[1],
                r.queued[0],
                r.queued[1]
            );
        }
    }
}

#[test]
fn probe_trace() {
    let x2 = 60;
    let rtt2 = (2 * (x2 + 2)) * MS + 1_664_000;
    let flows = vec![
        ns2_flow(0, "vegas", 7_664_000, &[("alpha", 1.0), ("beta", 3.0)]),
        ns2_flow(1, "vegas", rtt2, &[("alpha", 1.0), ("beta", 3.0)]),
    ];
    let red = AqmConfig::Red {
        min_th: 15.0,
        max_th: 45.0,
        max_p: 0.1,
        wq: 0.002,
        bytes: false,
        gentle: false,
    };
    let cfg = vegas_net(flows, red, 20 * S);
    let mut sim = Sim::new(&cfg).unwrap();
    let step: u64 = std::env::var("STEP")
        .map(|v| v.parse().unwrap())
        .unwrap_or(S / 4);
    let end: u64 = std::env::var("END")
        .map(|v| v.parse().unwrap())
        .unwrap_or(20 * S);
    let mut t = step;
    while t < end {
        sim.run_until(SimTime(t));
        let mut line = format!(
            "t={:.2} q={}",
            t as f64 / 1e9,
            sim.link_queue_bytes() / 1040
        );
        for fl in &sim.flows {
            let c = fl.ns2.as_ref().unwrap();
            if let Variant::Vegas(v) = &c.agent.variant {
                line += &format!(
                    " | cwnd={:.2} ss={} out={} base={:.4} rtt={:.4} d={:.2} to={} tmo={}",
                    c.agent.cwnd,
                    c.agent.ssthresh,
                    c.agent.in_flight(),
                    v.base_rtt,
                    v.rtt,
                    v.last_delta,
                    c.agent.stats.retransmits,
                    c.agent.stats.timeouts
                );
            }
        }
        eprintln!("{line}");
        t += step;
    }
}
