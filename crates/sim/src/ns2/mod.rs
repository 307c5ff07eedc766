//! ns-2's one-way TCP agents (`stack = "ns2"`): `Agent/TCP/Reno`, `Agent/TCP/Newreno` and
//! `Agent/TCP/Vegas` and `Agent/TCP/Sack1` senders with an `Agent/TCPSink` receiver, as the ns-2.35 source
//! (tcp/tcp.cc, tcp-reno.cc, tcp-newreno.cc, tcp-vegas.cc, tcp-sink.cc) and
//! tcl/lib/ns-default.tcl define them. Re-written here, not copied.
//!
//! Why a separate sender type rather than options of `tcp::Sender`: the two models
//! disagree at the root. Linux counts bytes and segments with a SACK scoreboard, RACK,
//! PRR, pacing, receive-window autotuning and a microsecond RTT estimator, and calls its
//! congestion control through hooks (`cc::CongestionControl`); ns-2's agents keep a float
//! `cwnd_` in packets, a fixed `window_`, a 10 ms-tick RTT estimator, Reno window
//! inflation (`dupwnd_`) and — for Vegas — a receive path of its own that changes the
//! window, the retransmission and the timers in one function. Expressing that through
//! Linux's hooks would need a flag in most of the sender, and every flag a risk to the
//! Linux model's exact behaviour (which the kernel backend validates). So a connection is
//! either a `tcp::Sender` + `tcp::Receiver` or an `Ns2Conn`; the event loop (`sim.rs`)
//! dispatches on which, and nothing of the Linux path changes.
//!
//! Wire format: a data packet is `packetSize_` payload + 40 bytes (`tcpip_base_hdr_size_`,
//! no timestamp option), so the scenario's `mtu` is `packetSize_ + 40`. The connection
//! opens with the simulator's handshake (ns-2's `syn_ = true` packet 0, 40 bytes): its RTT
//! is the first sample, data starts at packet 1, and the window starts at `windowInit_`
//! (2) after it (`delay_growth_`). `Agent/TCP/Vegas` differs in both (its own `output`):
//! its packets are `packetSize_` bytes on the wire, headers not added, and its packet 0
//! is a full data packet sent with a window of 1 (`agent::wire_bytes`).

pub mod agent;
pub mod rtt;
pub mod sack1;
pub mod sink;
#[cfg(test)]
mod tests;
pub mod vegas;

pub use agent::{Agent, Variant};
pub use sink::{Sink, SinkAck};
pub use vegas::{Vegas, VegasParams};

use crate::cc::{registry, ParamError, Params};
use crate::config::Stack;
use crate::packet::{Ack, Packet};
use crate::tcp::Io;
use crate::units::SimTime;
use std::collections::BTreeMap;

/// ns-2's default `window_` (packets), used when the scenario sets no `cwnd_clamp`.
pub const DEFAULT_WINDOW: u32 = 20;

/// Largest `window_` accepted: Vegas keeps a slot per packet of the window
/// (`v_sendtime_`, `v_transmits_`), 12 bytes each.
pub const MAX_WINDOW: u32 = 1 << 20;

/// One ns-2 connection: the sending agent and its sink.
pub struct Ns2Conn {
    pub agent: Agent,
    pub sink: Sink,
    /// When the connection-opening packet left.
    start: SimTime,
}

impl Ns2Conn {
    /// `cca` is reno, newreno, sack (`Agent/TCP/Sack1`, with a SACK-generating sink) or
    /// vegas; `params` may hold vegas's alpha, beta, gamma
    /// (packets), Enhanced Vegas's delta, or exact_base_rtt = 1 (use `min_rtt`, the path's
    /// true minimum RTT in seconds, as `v_baseRTT_`). `boot_time` is the phase of the
    /// sender's tick clock, in [0, tcpTick_).
    pub fn new(
        id: u32,
        cca: &str,
        params: &BTreeMap<String, f64>,
        size: u32,
        window: Option<u32>,
        boot_time: f64,
        min_rtt: f64,
    ) -> Result<Ns2Conn, String> {
        let window = window.unwrap_or(DEFAULT_WINDOW);
        if window > MAX_WINDOW {
            return Err(format!(
                "window_ (cwnd_clamp) of {window} packets is above the {MAX_WINDOW} \
                 stack \"ns2\" accepts"
            ));
        }
        let specs = registry::params_of(cca, Stack::Ns2).map_err(|e| e.message)?;
        let p = Params::new(cca, specs, params).map_err(|e| e.to_string())?;
        let variant = match cca {
            "reno" => Variant::Reno,
            "newreno" => Variant::NewReno {
                firstpartial: false,
            },
            "vegas" => {
                let vp = vegas_params(&p, min_rtt).map_err(|e| e.to_string())?;
                Variant::Vegas(Box::new(Vegas::new(vp, window)))
            }
            "sack" => Variant::Sack1(Box::default()),
            other => unreachable!("registry lists {other:?} under ns2 but the agents lack it"),
        };
        Ok(Ns2Conn {
            agent: Agent::new(id, size, window, variant, boot_time),
            sink: Sink::new(cca == "sack", cca == "vegas"),
            start: SimTime::ZERO,
        })
    }

    /// Whether the connection opens with data packet 0 (Vegas) instead of the handshake.
    pub fn opens_with_data(&self) -> bool {
        self.agent.opens_with_data()
    }

    /// The connection starts at `now` by sending data packet 0 (`opens_with_data`).
    pub fn open(&mut self, now: SimTime, io: &mut Io) {
        self.start = now;
        self.agent.open(now.as_secs_f64(), io);
    }

    /// The connection-opening packet leaves at `now`.
    pub fn opening(&mut self, now: SimTime) {
        self.start = now;
    }

    /// Its ACK is back: data starts.
    pub fn start(&mut self, now: SimTime, io: &mut Io) {
        self.agent
            .start(now.as_secs_f64(), self.start.as_secs_f64(), io);
    }

    pub fn on_ack(&mut self, now: SimTime, ack: &Ack, io: &mut Io) {
        self.agent
            .recv_sacked(now.as_secs_f64(), ack.cum as i64, ack.blocks(), io);
    }

    pub fn on_rto(&mut self, now: SimTime, io: &mut Io) {
        self.agent.timeout(now.as_secs_f64(), io);
    }

    /// A data packet reaches the sink: what to do about the ACK, and the bytes delivered.
    pub fn deliver(&mut self, pkt: &Packet, timer_pending: bool) -> (SinkAck, u64) {
        self.sink.on_packet(pkt, timer_pending)
    }

    /// Window in packets as the sender uses it (`window()`, with Reno's inflation).
    pub fn cwnd_pkts(&self) -> u64 {
        self.agent.window().max(0) as u64
    }

    pub fn srtt(&self) -> SimTime {
        SimTime((self.agent.rtt.srtt() * 1e9).round() as u64)
    }
}

/// `Agent/TCP/Vegas`'s thresholds from checked parameters (`cc::registry::NS2_VEGAS_PARAMS`):
/// `delta` (Enhanced Vegas) replaces alpha and beta; alpha must not exceed beta;
/// `exact_base_rtt` uses `min_rtt` (seconds) as `v_baseRTT_`.
pub fn vegas_params(p: &Params, min_rtt: f64) -> Result<VegasParams, ParamError> {
    let delta = p.get("delta");
    if delta.is_some() && (p.given("alpha") || p.given("beta")) {
        return Err(ParamError::new(
            "delta",
            "delta (Enhanced Vegas) replaces alpha and beta (alpha = beta = delta); set one \
             or the other",
        ));
    }
    let (alpha, beta) = (p.real("alpha"), p.real("beta"));
    if alpha > beta {
        return Err(ParamError::new(
            if p.given("beta") { "beta" } else { "alpha" },
            format!("vegas needs alpha <= beta, got alpha = {alpha} and beta = {beta}"),
        ));
    }
    Ok(VegasParams {
        alpha,
        beta,
        gamma: p.real("gamma"),
        delta,
        base_rtt: p.flag("exact_base_rtt").then_some(min_rtt),
        window_init: p.real("window_init"),
    })
}
