//! Scenario builders shared by the integration tests.
#![allow(dead_code)]

use tcpfair_sim::config::{AqmConfig, BottleneckConfig, Config, FlowConfig, MeasureConfig};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

pub fn flow(id: u32, cca: &str, rtt_ns: u64) -> FlowConfig {
    FlowConfig {
        id,
        group: id,
        cca: cca.to_string(),
        cca_params: Default::default(),
        rtt_ns,
        start_ns: 0,
        stop_ns: None,
        size_bytes: None,
        app_rate_bps: None,
        sack: true,
        rmem_bytes: 6_291_456,
        wmem_bytes: 4_194_304,
        cwnd_clamp: None,
        jitter_ns: 0,
        ack_jitter_ns: 0,
        stack: Default::default(),
        delack: false,
        gso: false,
        direction: Default::default(),
        access_rate_bps: None,
    }
}

/// A dumbbell at `rate_bps` with a drop-tail buffer of `buffer_bytes`, flows given.
pub fn dumbbell(
    rate_bps: u64,
    buffer_bytes: u64,
    flows: Vec<FlowConfig>,
    duration_ns: u64,
) -> Config {
    Config {
        name: "test".into(),
        duration_ns,
        seed: 1,
        bottleneck: BottleneckConfig {
            rate_bps,
            buffer_bytes: Some(buffer_bytes),
            buffer_pkts: None,
            aqm: AqmConfig::Droptail,
            loss: 0.0,
            mtu_bytes: 1500,
            reverse: None,
            burst_bytes: None,
            netem_root: false,
            netem_latency_ns: 0,
        },
        flows,
        measure: MeasureConfig {
            interval_ns: S,
            from_ns: 0,
            to_ns: duration_ns,
        },
        short_flows: vec![],
    }
}

/// Bytes in one bandwidth-delay product (IP bytes).
pub fn bdp_bytes(rate_bps: u64, rtt_ns: u64) -> u64 {
    (rate_bps as u128 * rtt_ns as u128 / 8 / 1_000_000_000) as u64
}
