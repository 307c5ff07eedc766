//! The resolved scenario, as the simulator receives it.
//!
//! Python (`tcpfair.spec`) parses and validates the user's TOML, expands parallel streams
//! into connections and converts every quantity to integer SI units; this struct is the
//! JSON form of that resolved scenario (`Scenario.to_sim_config()` on the Python side).
//! Field names carry their unit. Unknown fields are rejected so the two sides cannot drift.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub name: String,
    /// Simulated time; the run stops here.
    pub duration_ns: u64,
    pub seed: u64,
    pub bottleneck: BottleneckConfig,
    /// One entry per TCP connection (parallel streams are already expanded).
    pub flows: Vec<FlowConfig>,
    pub measure: MeasureConfig,
    /// Short flows: one entry per `[[flows]]` entry with an arrival process (absent: none).
    #[serde(default)]
    pub short_flows: Vec<ShortFlowsConfig>,
}

/// The short flows of one `[[flows]]` entry with `arrivals` (issue 10 §3): the TCP
/// settings once, and the schedule the Python side drew from the scenario's seed
/// (`tcpfair.arrivals`) as three arrays, one element per short flow, in arrival order.
/// Each short flow opens a connection at its start (handshake), transfers its size and
/// is done; its connection slot is reused by a later arrival (crates/sim/src/sim/short.rs).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShortFlowsConfig {
    /// Index of the `[[flows]]` entry.
    pub group: u32,
    pub cca: String,
    #[serde(default)]
    pub cca_params: BTreeMap<String, f64>,
    pub sack: bool,
    pub rmem_bytes: u64,
    pub wmem_bytes: u64,
    pub cwnd_clamp: Option<u32>,
    pub jitter_ns: u64,
    #[serde(default)]
    pub ack_jitter_ns: u64,
    /// Must be Linux (ns-2's agents have no finite transfers).
    #[serde(default)]
    pub stack: Stack,
    #[serde(default)]
    pub gso: bool,
    /// Which bottleneck each short flow's data crosses (its ACKs cross the other one).
    #[serde(default)]
    pub direction: Direction,
    /// When each short flow sends its SYN (non-decreasing).
    pub start_ns: Vec<u64>,
    /// Payload bytes each transfers.
    pub size_bytes: Vec<u64>,
    /// Base RTT of each.
    pub rtt_ns: Vec<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BottleneckConfig {
    pub rate_bps: u64,
    /// Queue limit in bytes (IP packet bytes, as tbf/bfifo count them), when sized in bytes.
    pub buffer_bytes: Option<u64>,
    /// Queue limit in packets, when sized in packets. Exactly one of the two is set.
    pub buffer_pkts: Option<u64>,
    pub aqm: AqmConfig,
    /// Bernoulli loss probability per data packet at the bottleneck, in [0, 1).
    pub loss: f64,
    /// IP MTU; a full-sized segment is `mtu_bytes` on the wire (IP + TCP + options + payload).
    pub mtu_bytes: u32,
    /// The reverse bottleneck (receiver side → sender side; same MTU). With it — or with
    /// any reverse flow, which brings a copy of this link — every connection's ACKs cross
    /// the opposite direction's bottleneck; without, ACKs return without queue or loss.
    #[serde(default)]
    pub reverse: Option<LinkConfig>,
    /// tbf's token bucket (`tc … tbf burst B`), in bytes: with it the link is a token-bucket
    /// shaper in front of an infinitely fast wire (a Mininet veth) instead of a wire that
    /// serializes at `rate`. Absent: a FIFO server at `rate` (every earlier scenario).
    #[serde(default)]
    pub burst_bytes: Option<u64>,
    /// `netem delay` at the root with the tbf (`burst_bytes`) as its child, as in the labs:
    /// packets reaching the link at one instant all enter the tbf's backlog before it sends
    /// any (link.rs). Needs `burst_bytes`. False: each packet meets the backlog as it
    /// stands when it arrives (every earlier scenario).
    #[serde(default)]
    pub netem_root: bool,
    /// With `netem_root`: how long after a packet is due netem's watchdog runs; every packet
    /// due by then enters the tbf with it. 0: at the due time (the kernel asks for no slack).
    #[serde(default)]
    pub netem_latency_ns: u64,
}

/// One direction's link parameters (`BottleneckConfig` less the shared MTU).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub rate_bps: u64,
    pub buffer_bytes: Option<u64>,
    pub buffer_pkts: Option<u64>,
    pub aqm: AqmConfig,
    /// Bernoulli loss probability per packet (data or ACK) entering the link.
    pub loss: f64,
}

impl BottleneckConfig {
    /// The reverse bottleneck as a whole config, if the run has one: the `reverse` table,
    /// or (`any_reverse_flow`) a copy of the forward link.
    pub fn reverse_config(&self, any_reverse_flow: bool) -> Option<BottleneckConfig> {
        let r = match &self.reverse {
            Some(r) => r.clone(),
            None if any_reverse_flow => LinkConfig {
                rate_bps: self.rate_bps,
                buffer_bytes: self.buffer_bytes,
                buffer_pkts: self.buffer_pkts,
                aqm: self.aqm.clone(),
                loss: self.loss,
            },
            None => return None,
        };
        Some(BottleneckConfig {
            rate_bps: r.rate_bps,
            buffer_bytes: r.buffer_bytes,
            buffer_pkts: r.buffer_pkts,
            aqm: r.aqm,
            loss: r.loss,
            mtu_bytes: self.mtu_bytes,
            reverse: None,
            burst_bytes: None,
            netem_root: false,
            netem_latency_ns: 0,
        })
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum AqmConfig {
    Droptail,
    /// Floyd & Jacobson RED. Thresholds are in packets when `bytes` is false, else in bytes.
    Red {
        min_th: f64,
        max_th: f64,
        max_p: f64,
        /// EWMA weight of the average queue (RED's w_q).
        wq: f64,
        bytes: bool,
        /// Gentle RED: drop probability ramps from max_p to 1 between max_th and 2·max_th.
        gentle: bool,
    },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Connection id, 0..n in order.
    pub id: u32,
    /// Index of the `[[flows]]` entry this connection came from.
    pub group: u32,
    /// Congestion control name: reno, newreno, cubic, bic, highspeed, compound, vegas, bbr.
    pub cca: String,
    /// Algorithm parameters (e.g. vegas alpha/beta/gamma), by name.
    #[serde(default)]
    pub cca_params: BTreeMap<String, f64>,
    /// Base (propagation) round-trip time of this connection.
    pub rtt_ns: u64,
    pub start_ns: u64,
    /// The application stops sending here (None: at the end of the run).
    pub stop_ns: Option<u64>,
    /// Finite transfer of this many bytes (None: bulk, always backlogged).
    pub size_bytes: Option<u64>,
    /// Application-limited sender: it writes at most this rate (None: unlimited).
    pub app_rate_bps: Option<u64>,
    /// SACK negotiated (Linux default true); false falls back to NewReno recovery.
    pub sack: bool,
    /// Receiver's maximum receive buffer (tcp_rmem max); bounds the advertised window.
    pub rmem_bytes: u64,
    /// Sender's maximum send buffer (tcp_wmem max); bounds data in flight + unsent.
    pub wmem_bytes: u64,
    /// Upper bound on cwnd in segments (e.g. the Vegas study's window cap of 30), if any.
    pub cwnd_clamp: Option<u32>,
    /// Random host delay: each packet the sender puts on its access link is held a further
    /// uniform [0, jitter] (FIFO kept), to break drop-tail phase effects (Floyd & Jacobson
    /// 1992). 0 disables it.
    pub jitter_ns: u64,
    /// Random host delay on the ACK path: each ACK the receiver sends is held a further
    /// uniform [0, ack_jitter] (FIFO kept), so ACKs sometimes reach the sender bunched, as
    /// interrupt and softirq batching of real hosts (or an emulator's late releases)
    /// deliver them. 0 (the default) keeps the ACK clock smooth.
    #[serde(default)]
    pub ack_jitter_ns: u64,
    /// Whose TCP this connection runs: Linux's (the default) or ns-2's one-way agents.
    #[serde(default)]
    pub stack: Stack,
    /// `stack = ns2` only: the receiver is `Agent/TCPSink/DelAck` (delayed ACKs) rather
    /// than `Agent/TCPSink` (an ACK per packet).
    #[serde(default)]
    pub delack: bool,
    /// The sending host has GSO/TSO on: segments leave in aggregates sized by Linux's
    /// `tcp_tso_autosize`, which the bottleneck accepts or drops whole (`stack = linux`).
    #[serde(default)]
    pub gso: bool,
    /// Which bottleneck the data crosses; its ACKs cross the other one.
    #[serde(default)]
    pub direction: Direction,
    /// `stack = "ns2"` only: the sender's access-link rate (bit/s). Back-to-back packets
    /// leave the host spaced by their serialization at it (ns-2's sender-to-router link);
    /// a lone packet's serialization stays part of `rtt_ns`. None: a burst leaves at once.
    #[serde(default)]
    pub access_rate_bps: Option<u64>,
}

/// Which way a connection's data goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Sender side → receiver side, across the forward bottleneck.
    #[default]
    Forward,
    /// Receiver side → sender side, across the reverse bottleneck.
    Reverse,
}

impl Direction {
    /// Index of the link the data crosses (0 forward, 1 reverse).
    pub fn link(self) -> usize {
        match self {
            Direction::Forward => 0,
            Direction::Reverse => 1,
        }
    }
}

/// The TCP implementation a connection models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// Linux 6.x (`crate::tcp`).
    #[default]
    Linux,
    /// ns-2's `Agent/TCP/*` one-way senders and `Agent/TCPSink` (`crate::ns2`).
    Ns2,
}

impl Stack {
    /// The name a scenario writes (`stack = "ns2"`).
    pub fn name(self) -> &'static str {
        match self {
            Stack::Linux => "linux",
            Stack::Ns2 => "ns2",
        }
    }

    /// The stack a scenario names, if any.
    pub fn from_name(name: &str) -> Option<Stack> {
        [Stack::Linux, Stack::Ns2]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureConfig {
    /// Sampling interval for the time series.
    pub interval_ns: u64,
    /// Steady-state window for the summary metrics.
    pub from_ns: u64,
    pub to_ns: u64,
}

impl Config {
    /// Parse the resolved-scenario JSON produced by the Python side.
    pub fn from_json(text: &str) -> Result<Config, crate::SimError> {
        serde_json::from_str(text).map_err(|e| crate::SimError::Config {
            key: String::new(),
            message: e.to_string(),
        })
    }
}
