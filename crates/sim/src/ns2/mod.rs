//! ns-2's one-way TCP agents (`stack = "ns2"`): `Agent/TCP/Reno`, `Agent/TCP/Newreno` and
//! `Agent/TCP/Vegas` senders with an `Agent/TCPSink` receiver, as the ns-2.35 source
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
//! (2) after it (`delay_growth_`).

pub mod agent;
pub mod rtt;
pub mod sink;
#[cfg(test)]
mod tests;
pub mod vegas;

pub use agent::{Agent, Variant};
pub use sink::{Sink, SinkAck};
pub use vegas::{Vegas, VegasParams};

use crate::packet::{Ack, Packet};
use crate::tcp::Io;
use crate::units::SimTime;
use std::collections::BTreeMap;

/// ns-2's default `window_` (packets), used when the scenario sets no `cwnd_clamp`.
pub const DEFAULT_WINDOW: u32 = 20;

/// Largest `window_` accepted: Vegas keeps a slot per packet of the window
/// (`v_sendtime_`, `v_transmits_`), 12 bytes each.
pub const MAX_WINDOW: u32 = 1 << 20;

/// Congestion controls that exist under `stack = "ns2"`.
pub const CCAS: [&str; 3] = ["reno", "newreno", "vegas"];

/// One ns-2 connection: the sending agent and its sink.
pub struct Ns2Conn {
    pub agent: Agent,
    pub sink: Sink,
    /// When the connection-opening packet left.
    start: SimTime,
}

impl Ns2Conn {
    /// `cca` is reno, newreno or vegas; `params` may hold vegas's alpha, beta, gamma
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
        let variant = match cca {
            "reno" => Variant::Reno,
            "newreno" => Variant::NewReno {
                firstpartial: false,
            },
            "vegas" => Variant::Vegas(Box::new(Vegas::new(vegas_params(params, min_rtt)?, window))),
            other => {
                return Err(format!(
                    "{other:?} does not exist under stack \"ns2\"; allowed: {}",
                    CCAS.join(", ")
                ))
            }
        };
        if cca != "vegas" {
            if let Some(k) = params.keys().next() {
                return Err(format!("{k:?} is a parameter of vegas, not of {cca}"));
            }
        }
        Ok(Ns2Conn {
            agent: Agent::new(id, size, window, variant, boot_time),
            sink: Sink::default(),
            start: SimTime::ZERO,
        })
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
        self.agent.recv(now.as_secs_f64(), ack.cum as i64, io);
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

fn vegas_params(params: &BTreeMap<String, f64>, min_rtt: f64) -> Result<VegasParams, String> {
    let mut p = VegasParams::default();
    for (k, &v) in params {
        match k.as_str() {
            "alpha" => p.alpha = v,
            "beta" => p.beta = v,
            "gamma" => p.gamma = v,
            "delta" => p.delta = Some(v),
            "exact_base_rtt" => p.base_rtt = (v != 0.0).then_some(min_rtt),
            _ => {
                return Err(format!(
                    "{k:?} is not a parameter of ns-2 vegas; \
                     allowed: alpha, beta, gamma, delta, exact_base_rtt"
                ))
            }
        }
    }
    if p.delta.is_some() && (params.contains_key("alpha") || params.contains_key("beta")) {
        return Err("delta (Enhanced Vegas) replaces alpha and beta; set one or the other".into());
    }
    if p.alpha > p.beta {
        return Err(format!(
            "vegas needs alpha <= beta, got alpha={} beta={}",
            p.alpha, p.beta
        ));
    }
    Ok(p)
}
