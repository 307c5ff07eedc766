//! Congestion control: one trait shaped like Linux's `struct tcp_congestion_ops`, one file
//! per algorithm, dispatched through the `AnyCc` enum (no boxing on the per-ACK path).
//!
//! The TCP sender (`crate::tcp`) owns loss detection and recovery (SACK/RFC 6675, PRR/RFC
//! 6937, NewReno/RFC 6582, RTO/RFC 6298). It calls the hooks exactly where Linux calls
//! them:
//!
//! - on every ACK: `pkts_acked` (RTT sample) then, if `has_cong_control()`, `cong_control`
//!   with a delivery-rate sample (BBR); otherwise `cong_avoid` when the connection is in the
//!   Open/Disorder state and cwnd-limited, while PRR sets cwnd during recovery;
//! - on entering fast recovery or on RTO: `ssthresh` (the new slow-start threshold);
//! - on every change of `CaState`: `set_state`;
//! - on the events of `CwndEvent`: `cwnd_event`.
//!
//! Linux also calls `undo_cwnd` when a recovery proves spurious (DSACK, Eifel, F-RTO); the
//! simulator detects no spurious recovery, so it has no such hook.
//!
//! Algorithms never read a clock: `TcpCc::now` is passed in.

use crate::units::SimTime;

/// Linux's TCP_INFINITE_SSTHRESH.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Congestion-avoidance state machine of the sender (Linux `tcp_ca_state`). Ordered as in
/// Linux (Open < Disorder < CWR < Recovery < Loss); BBR compares states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// Events of Linux's `tcp_ca_event` that algorithms react to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndEvent {
    /// First transmission when no packet is in flight (restart after idle).
    TxStart,
    /// cwnd restart after an idle period longer than the RTO.
    CwndRestart,
    /// End of a CWR episode.
    CompleteCwr,
    /// Retransmission timeout fired.
    Loss,
}

/// The part of the TCP sender a congestion control may read and write
/// (Linux: the fields of `tcp_sock` that `tcp_*.c` algorithms touch).
#[derive(Clone, Debug)]
pub struct TcpCc {
    pub now: SimTime,
    /// Sender maximum segment size (payload bytes).
    pub mss: u32,
    /// Congestion window in segments (`snd_cwnd`).
    pub cwnd: u32,
    /// Linear-increase counter (`snd_cwnd_cnt`).
    pub cwnd_cnt: u32,
    /// Slow-start threshold in segments (`snd_ssthresh`).
    pub ssthresh: u32,
    /// Upper bound on cwnd (`snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// cwnd saved on entering recovery / loss (PRR's RecoverFS).
    pub prior_cwnd: u32,
    pub ca_state: CaState,
    /// Segments in flight (`tcp_packets_in_flight`: sent − sacked − lost + retransmitted).
    pub packets_in_flight: u32,
    /// Whether the last flight was limited by cwnd rather than by the application or rwnd.
    pub is_cwnd_limited: bool,
    /// Smoothed RTT (zero before the first sample).
    pub srtt: SimTime,
    /// Minimum RTT seen over the connection's life (zero before the first sample).
    pub min_rtt: SimTime,
    /// Next byte sequence number to send, and oldest unacknowledged byte.
    pub snd_nxt: u64,
    pub snd_una: u64,
    /// Segments delivered (cumulatively or selectively acknowledged) so far (`tp->delivered`).
    pub delivered: u64,
    /// Time of the latest delivery (`tp->delivered_mstamp`).
    pub delivered_time: SimTime,
    /// Segments marked lost so far (`tp->lost`).
    pub lost: u64,
    /// Non-zero while the sender is application-limited (`tp->app_limited`).
    pub app_limited: u64,
    /// Pacing rate in bytes per second, used only when `pacing` is true. CUBIC's HyStart
    /// reads it when non-zero (else it computes Linux's default `sk_pacing_rate`).
    pub pacing_rate: u64,
    /// Set by algorithms that need pacing (Linux `sk_pacing_status`); BBR sets it in `init`.
    pub pacing: bool,
    /// Time of the last data transmission (`tp->lsndtime`); CUBIC shifts its epoch by the
    /// idle time on `CwndEvent::TxStart`, which the engine fires *before* updating this.
    pub lsndtime: SimTime,
    /// Earliest departure time of the next packet under pacing (`tp->tcp_wstamp_ns`);
    /// BBR estimates the packets still "in the network" at that time. Zero/past: now.
    pub wstamp: SimTime,
}

impl TcpCc {
    /// A fresh connection's view: initial window 10 segments (RFC 6928, Linux default).
    pub fn new(mss: u32, cwnd_clamp: u32) -> Self {
        TcpCc {
            now: SimTime::ZERO,
            mss,
            cwnd: 10,
            cwnd_cnt: 0,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_clamp,
            prior_cwnd: 0,
            ca_state: CaState::Open,
            packets_in_flight: 0,
            is_cwnd_limited: true,
            srtt: SimTime::ZERO,
            min_rtt: SimTime::ZERO,
            snd_nxt: 0,
            snd_una: 0,
            delivered: 0,
            delivered_time: SimTime::ZERO,
            lost: 0,
            app_limited: 0,
            pacing_rate: 0,
            pacing: false,
            lsndtime: SimTime::ZERO,
            wstamp: SimTime::ZERO,
        }
    }

    /// Linux's `sk_pacing_rate` in bytes per second: the algorithm's own rate when it set
    /// one, else `tcp_update_pacing_rate`'s default for every flow, paced or not:
    /// mss·max(cwnd, in flight)/srtt × 200 % in slow start (below ssthresh/2), × 120 %
    /// otherwise. 0 before the first RTT sample (Linux: a huge rate).
    pub fn sk_pacing_rate(&self) -> u64 {
        if self.pacing_rate > 0 {
            return self.pacing_rate;
        }
        let srtt_us = self.srtt.as_micros();
        if srtt_us == 0 {
            return 0;
        }
        let ratio = if self.cwnd < self.ssthresh / 2 {
            200
        } else {
            120
        };
        let w = u64::from(self.cwnd.max(self.packets_in_flight));
        u64::from(self.mss) * ratio * w * 10_000 / srtt_us
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = cwnd.clamp(1, self.cwnd_clamp.max(1));
    }
}

/// What one ACK did (Linux: `ack_sample` plus the `acked` argument of `cong_avoid`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckEvent {
    /// Segments newly delivered by this ACK (cumulatively or selectively).
    pub acked: u32,
    /// RTT sample from this ACK, if it acknowledged a never-retransmitted segment (Karn).
    pub rtt: Option<SimTime>,
    /// Cumulative acknowledgement number (bytes) after this ACK.
    pub ack_seq: u64,
}

/// A delivery-rate sample (Linux `struct rate_sample`, draft-cheng-iccrg-delivery-rate-estimation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// `delivered` count at the time the newest acknowledged packet was sent.
    pub prior_delivered: u64,
    /// Segments delivered over the sampling interval (negative: no valid sample).
    pub delivered: i64,
    /// Length of the sampling interval (max of send and ACK phases); zero: invalid.
    pub interval: SimTime,
    /// RTT of the newest acknowledged packet, if any.
    pub rtt: Option<SimTime>,
    /// Segments newly marked lost by this ACK.
    pub losses: u32,
    /// Segments newly delivered by this ACK (cumulative + SACKed).
    pub acked_sacked: u32,
    /// Segments in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sample was taken while the sender was application-limited.
    pub is_app_limited: bool,
    /// The newest acknowledged packet was a retransmission.
    pub is_retrans: bool,
    /// The ACK was delayed by the receiver (delayed-ACK timer).
    pub is_ack_delayed: bool,
}

impl RateSample {
    /// No sample (`Default`, as a constant).
    pub const EMPTY: RateSample = RateSample {
        prior_delivered: 0,
        delivered: 0,
        interval: SimTime::ZERO,
        rtt: None,
        losses: 0,
        acked_sacked: 0,
        prior_in_flight: 0,
        is_app_limited: false,
        is_retrans: false,
        is_ack_delayed: false,
    };

    /// Delivery rate in bytes per second, if the sample is valid.
    pub fn rate_bytes_per_sec(&self, mss: u32) -> Option<u64> {
        if self.delivered <= 0 || self.interval.0 == 0 {
            return None;
        }
        Some(
            (self.delivered as u128 * mss as u128 * 1_000_000_000 / self.interval.0 as u128) as u64,
        )
    }
}

/// The hooks of a congestion control. Every hook but `ssthresh` has a default, so a simple
/// algorithm is a few lines.
pub trait CongestionControl {
    /// Called once when the connection starts.
    fn init(&mut self, _tcp: &mut TcpCc) {}
    /// New slow-start threshold after a loss (fast recovery or RTO), in segments.
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32;
    /// Window growth on an ACK in the Open/Disorder state (RFC 5681 §3.1 for Reno).
    fn cong_avoid(&mut self, _tcp: &mut TcpCc, _ev: &AckEvent) {}
    /// Every ACK that delivered data, before `cong_avoid`/`cong_control`.
    fn pkts_acked(&mut self, _tcp: &mut TcpCc, _ev: &AckEvent) {}
    fn set_state(&mut self, _tcp: &mut TcpCc, _new_state: CaState) {}
    fn cwnd_event(&mut self, _tcp: &mut TcpCc, _ev: CwndEvent) {}
    /// True for rate-based algorithms that set cwnd and pacing rate themselves on every ACK.
    fn has_cong_control(&self) -> bool {
        false
    }
    /// The full control path (Linux `cong_control`), replacing `cong_avoid` and PRR.
    fn cong_control(&mut self, _tcp: &mut TcpCc, _rs: &RateSample) {}
}

mod bbr;
mod bic;
mod compound;
mod cubic;
mod highspeed;
pub mod hooks;
mod params;
pub mod registry;
mod reno;
mod vegas;
pub use bbr::Bbr;
pub(crate) use bbr::MAX_TSO_BYTES;
pub use bic::Bic;
pub use compound::Compound;
pub use cubic::Cubic;
pub use highspeed::HighSpeed;
pub use params::{ParamError, ParamKind, ParamSpec, Params};
pub use reno::Reno;
pub use vegas::Vegas;

#[cfg(test)]
mod harness;
#[cfg(test)]
mod param_tests;

/// Linux's `HZ` for the algorithms that keep time in jiffies (CUBIC's epoch, BBR's min-RTT
/// stamps). Ubuntu and Fedora kernels use `CONFIG_HZ=1000`.
pub const HZ: u64 = 1000;

/// `tcp_jiffies32` at `t` (jiffies since the start of the simulation).
pub fn jiffies(t: SimTime) -> u64 {
    t.as_nanos() / (1_000_000_000 / HZ)
}

/// RFC 5681 §3.1 slow start: grow cwnd by the segments acked, not beyond ssthresh.
/// Returns the acked segments left over once cwnd reached ssthresh.
pub fn slow_start(tcp: &mut TcpCc, acked: u32) -> u32 {
    let cwnd = (tcp.cwnd + acked).min(tcp.ssthresh);
    let left = acked - (cwnd - tcp.cwnd);
    tcp.cwnd = cwnd.min(tcp.cwnd_clamp);
    left
}

/// The common start of a loss-based `cong_avoid`: no growth unless the flight was
/// cwnd-limited (RFC 5681 §3.1; RFC 9438 §5.8 for CUBIC), then slow start up to ssthresh.
/// Returns the acked segments left for congestion avoidance, or None when none are left.
pub fn slow_start_prologue(tcp: &mut TcpCc, acked: u32) -> Option<u32> {
    if !tcp.is_cwnd_limited {
        return None;
    }
    let left = if tcp.in_slow_start() {
        slow_start(tcp, acked)
    } else {
        acked
    };
    (left > 0).then_some(left)
}

/// Additive increase: one segment per `w` segments acked (`w` = cwnd gives RFC 5681's
/// one MSS per RTT), counted in `cwnd_cnt` so that several ACKs add up exactly.
pub fn cong_avoid_ai(tcp: &mut TcpCc, w: u32, acked: u32) {
    let w = w.max(1);
    if tcp.cwnd_cnt >= w {
        tcp.cwnd_cnt = 0;
        tcp.cwnd += 1;
    }
    tcp.cwnd_cnt += acked;
    if tcp.cwnd_cnt >= w {
        let delta = tcp.cwnd_cnt / w;
        tcp.cwnd_cnt -= delta * w;
        tcp.cwnd += delta;
    }
    tcp.cwnd = tcp.cwnd.min(tcp.cwnd_clamp);
}

/// The algorithms, by name. Adding one: a file, a variant, an entry in `registry::REGISTRY`,
/// a line in `build` and `dispatch!`.
///
/// `repr(u8)`: the variant is a tag byte of its own. Without it the compiler hides the
/// variant in a spare value of a field of the largest algorithm, and every dispatch (the
/// per-ACK hooks, `has_cong_control` on every ACK and sent segment) first decodes it.
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum AnyCc {
    Reno(Reno),
    Cubic(Cubic),
    Bbr(Bbr),
    Vegas(Vegas),
    Bic(Bic),
    HighSpeed(HighSpeed),
    Compound(Compound),
}

impl AnyCc {
    /// Build an algorithm (Linux stack) from its scenario name and parameters
    /// (`cca_params`), checked against its declarations in `registry`.
    ///
    /// `seed` is the flow's own random seed (the engine derives it from the scenario seed
    /// and the flow id); only algorithms with randomness use it (BBR's PROBE_BW start phase).
    pub fn from_name(
        name: &str,
        params: &std::collections::BTreeMap<String, f64>,
        seed: u64,
    ) -> Result<AnyCc, ParamError> {
        let specs = registry::params_of(name, crate::config::Stack::Linux)?;
        Self::build(name, &Params::new(name, specs, params)?, seed)
    }

    /// Build from checked parameters (`Params` of `name`'s declarations).
    pub fn build(name: &str, p: &Params, seed: u64) -> Result<AnyCc, ParamError> {
        Ok(match name {
            // Linux "reno" is RFC 5681 AIMD; NewReno is the loss recovery, chosen per flow (sack=false).
            "reno" | "newreno" => AnyCc::Reno(Reno),
            "cubic" => AnyCc::Cubic(Cubic::from_params(p)?),
            "bbr" => AnyCc::Bbr(Bbr::new(seed)),
            "vegas" => AnyCc::Vegas(Vegas::from_params(p)?),
            "bic" => AnyCc::Bic(Bic::from_params(p)?),
            "highspeed" => AnyCc::HighSpeed(HighSpeed::from_params(p)?),
            "compound" => AnyCc::Compound(Compound::from_params(p)?),
            other => unreachable!("registry lists {other:?} under linux but AnyCc lacks it"),
        })
    }
}

macro_rules! dispatch {
    ($self:ident, $cc:ident => $e:expr) => {
        match $self {
            AnyCc::Reno($cc) => $e,
            AnyCc::Cubic($cc) => $e,
            AnyCc::Bbr($cc) => $e,
            AnyCc::Vegas($cc) => $e,
            AnyCc::Bic($cc) => $e,
            AnyCc::HighSpeed($cc) => $e,
            AnyCc::Compound($cc) => $e,
        }
    };
}

impl AnyCc {
    /// `hooks::on_ack` for the algorithm inside: one dispatch per ACK, the hooks (and
    /// whether it has `cong_control`) resolved within it, instead of a dispatch per hook.
    #[inline]
    pub fn on_ack(
        &mut self,
        tcp: &mut TcpCc,
        ev: &AckEvent,
        rs: Option<&RateSample>,
        una_advanced: bool,
    ) -> hooks::AfterAck {
        // The sample only for its reader (`has_cong_control`): the others get no sample
        // built (and pass an empty one their `hooks::on_ack` never reads).
        dispatch!(self, c => hooks::on_ack(c, tcp, ev, rs.unwrap_or(&RateSample::EMPTY), una_advanced))
    }
}

impl CongestionControl for AnyCc {
    fn init(&mut self, tcp: &mut TcpCc) {
        dispatch!(self, c => c.init(tcp))
    }
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        dispatch!(self, c => c.ssthresh(tcp))
    }
    #[inline]
    fn cong_avoid(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        dispatch!(self, c => c.cong_avoid(tcp, ev))
    }
    #[inline]
    fn pkts_acked(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        dispatch!(self, c => c.pkts_acked(tcp, ev))
    }
    fn set_state(&mut self, tcp: &mut TcpCc, new_state: CaState) {
        dispatch!(self, c => c.set_state(tcp, new_state))
    }
    fn cwnd_event(&mut self, tcp: &mut TcpCc, ev: CwndEvent) {
        dispatch!(self, c => c.cwnd_event(tcp, ev))
    }
    #[inline]
    fn has_cong_control(&self) -> bool {
        dispatch!(self, c => c.has_cong_control())
    }
    fn cong_control(&mut self, tcp: &mut TcpCc, rs: &RateSample) {
        dispatch!(self, c => c.cong_control(tcp, rs))
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn empty_rate_sample_is_the_default() {
        assert_eq!(RateSample::EMPTY, RateSample::default());
    }

    #[test]
    fn only_bbr_is_rate_based() {
        for name in registry::names_in(crate::config::Stack::Linux) {
            let cc = AnyCc::from_name(name, &BTreeMap::new(), 1).unwrap();
            assert_eq!(cc.has_cong_control(), name == "bbr", "{name}");
        }
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let err = AnyCc::from_name("westwood", &BTreeMap::new(), 1).unwrap_err();
        assert_eq!(
            err.message,
            "unknown congestion control \"westwood\"; allowed: reno, newreno, \
             cubic, bic, highspeed, compound, vegas, bbr"
        );
    }

    #[test]
    fn parameters_of_one_algorithm_are_refused_by_another() {
        let mut p = BTreeMap::new();
        p.insert("alpha".to_string(), 1.0);
        let err = AnyCc::from_name("cubic", &p, 1).unwrap_err();
        assert_eq!(err.param, "alpha");
        assert_eq!(
            err.message,
            "cubic has no parameter \"alpha\"; allowed: beta, c, fast_convergence, \
             tcp_friendliness, hystart, hystart_detect, hystart_low_window, \
             hystart_ack_delta_us, initial_ssthresh, gso_max_size"
        );
        assert!(AnyCc::from_name("vegas", &p, 1).is_ok());
    }
}
