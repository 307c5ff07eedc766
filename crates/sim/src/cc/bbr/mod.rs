//! BBR v1 as in Linux `net/ipv4/tcp_bbr.c` (Cardwell et al., "BBR: Congestion-Based
//! Congestion Control", ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00,
//! the BBR v1 draft, whose section numbers the comments cite as "draft §").
//!
//! On every ACK (`cong_control`) BBR updates its model of the path — the bottleneck
//! bandwidth as the windowed max of delivery-rate samples over 10 round trips, the
//! round-trip propagation time as the min RTT over 10 s — and sets
//! pacing rate = pacing_gain · bw and cwnd = cwnd_gain · bw · min_rtt (+ allowances).
//! The state machine (one file each): `startup` (STARTUP and DRAIN), `probe_bw` (gain
//! cycling), `probe_rtt`; `lt_bw` detects token-bucket policers.
//!
//! Units are Linux's: bandwidth in packets per µs scaled by 2^24 (`BW_UNIT`), gains
//! scaled by 256 (`BBR_UNIT`), the min RTT in µs, min-RTT stamps in jiffies. Delivery
//! intervals arrive in ns, so bandwidth samples are a little more precise than Linux's.
//!
//! Send quantum allowance (`bbr_quantization_budget`): Linux adds 3 × `bbr_tso_segs_goal`
//! to the cwnd target — about 1 ms of data at the pacing rate (`sk_pacing_rate >> 10`),
//! at most 64 KB − 321 B, at least 2 segments (1 below 1.2 Mbit/s) — whatever the NIC's
//! GSO setting, because BBR computes the goal from the pacing rate itself. We do the same,
//! with `MAX_TCP_HEADER` = 320 B (x86-64), although the simulator sends MSS-sized
//! packets: the allowance is part of the window Linux uses, e.g. +24 segments at
//! 100 Mbit/s, +132 at 10 Gbit/s.

mod lt_bw;
mod minmax;
mod probe_bw;
mod probe_rtt;
mod startup;
#[cfg(test)]
mod tests;

use super::{
    AckEvent, CaState, CongestionControl, CwndEvent, RateSample, TcpCc, INFINITE_SSTHRESH,
};
use crate::units::SimTime;
use minmax::WindowedMax;
use probe_bw::Rng;

/// Bandwidth scale: packets per µs << 24 (Linux `BW_SCALE`).
pub(crate) const BW_SCALE: u32 = 24;
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains are fractions scaled by 256 (Linux `BBR_SCALE`).
pub(crate) const BBR_SCALE: u32 = 8;
pub(crate) const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// STARTUP gain 2/ln 2 = 2.885 (draft §4.3.2.1: the smallest gain that doubles the sending
/// rate every round trip): 256·2885/1000 + 1 = 739.
pub(crate) const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// DRAIN gain ln 2/2, the inverse of the STARTUP gain (draft §4.3.3): 88.
pub(crate) const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// Steady-state cwnd gain: 2 (tolerates delayed and stretched ACKs; draft §4.2.3.2).
pub(crate) const CWND_GAIN: u32 = BBR_UNIT * 2;
/// Packets BBR tries to keep in flight at least (draft §4.2.3.3: 4 packets).
pub(crate) const CWND_MIN_TARGET: u32 = 4;
/// Linux `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;
/// Pacing rate margin below the estimated bandwidth, in percent.
const PACING_MARGIN_PERCENT: u64 = 1;
/// Below this pacing rate (bit/s) the send quantum is 1 segment, else at least 2.
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// `GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER`: the largest send quantum in bytes.
pub(crate) const MAX_TSO_BYTES: u64 = 65_536 - 1 - 320;
/// `sk_pacing_shift`: the send quantum is about 2^-10 s of data.
const PACING_SHIFT: u32 = 10;
/// Window of the ACK-aggregation max filter, in round trips.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Extra-ACKed gain (1.0) and the time that bounds the aggregation allowance (100 ms).
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;

/// BBR's modes (draft §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Clone, Debug)]
pub struct Bbr {
    pub(crate) mode: Mode,
    /// Min RTT in µs over the last 10 s (u32::MAX: no sample yet).
    pub(crate) min_rtt_us: u32,
    /// Jiffy the min RTT was taken (or PROBE_RTT last ended).
    pub(crate) min_rtt_stamp: u64,
    /// Jiffy PROBE_RTT may end, once its low inflight was reached.
    pub(crate) probe_rtt_done_stamp: Option<u64>,
    /// Max delivery rate over the last 10 round trips.
    pub(crate) bw: WindowedMax,
    /// Packet-timed round trips so far.
    pub(crate) rtt_cnt: u64,
    /// `delivered` at which the current round trip ends.
    pub(crate) next_rtt_delivered: u64,
    /// Start of the current PROBE_BW gain phase (a delivery time).
    pub(crate) cycle_mstamp: SimTime,
    pub(crate) prev_ca_state: CaState,
    pub(crate) packet_conservation: bool,
    /// This ACK started a new round trip.
    pub(crate) round_start: bool,
    pub(crate) idle_restart: bool,
    pub(crate) probe_rtt_round_done: bool,
    // Long-term ("policer") bandwidth sampling.
    pub(crate) lt_is_sampling: bool,
    pub(crate) lt_rtt_cnt: u32,
    pub(crate) lt_use_bw: bool,
    pub(crate) lt_bw: u64,
    pub(crate) lt_last_delivered: u64,
    /// Interval start, in ms of delivery time.
    pub(crate) lt_last_stamp: u64,
    pub(crate) lt_last_lost: u64,
    pub(crate) pacing_gain: u32,
    pub(crate) cwnd_gain: u32,
    pub(crate) full_bw_reached: bool,
    pub(crate) full_bw_cnt: u32,
    pub(crate) cycle_idx: usize,
    pub(crate) has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT, restored afterwards.
    pub(crate) prior_cwnd: u32,
    /// Bandwidth at the last ≥25 % growth in STARTUP.
    pub(crate) full_bw: u64,
    // ACK aggregation.
    ack_epoch_mstamp: SimTime,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Randomness for the PROBE_BW start phase, from the flow's seed.
    pub(crate) rng: Rng,
}

impl Bbr {
    /// A BBR flow whose PROBE_BW start phase is drawn from `seed`.
    pub fn new(seed: u64) -> Self {
        Bbr {
            mode: Mode::Startup,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            bw: WindowedMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: SimTime::ZERO,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: SimTime::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            rng: Rng::new(seed),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Windowed max bandwidth, packets/µs << 24.
    pub(crate) fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The bandwidth estimate in use: the policed rate if one was detected.
    pub(crate) fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Bytes per second for `rate` (packets/µs << 24) times `gain`, 1 % below
    /// (draft §4.2.1: pace slightly below the estimate to drain queues).
    pub(crate) fn rate_bytes_per_sec(tcp: &TcpCc, rate: u64, gain: u32) -> u64 {
        let r = (u128::from(rate) * u128::from(tcp.mss) * u128::from(gain)) >> BBR_SCALE;
        let r = r * u128::from(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT));
        u64::try_from(r >> BW_SCALE).unwrap_or(u64::MAX)
    }

    /// Initial pacing rate: high_gain · cwnd / RTT, with a nominal 1 ms RTT before any
    /// sample (draft §4.2.1).
    fn init_pacing_rate_from_rtt(&mut self, tcp: &mut TcpCc) {
        let rtt_us = if tcp.srtt > SimTime::ZERO {
            self.has_seen_rtt = true;
            tcp.srtt.as_micros().max(1)
        } else {
            1_000
        };
        let bw = u64::from(tcp.cwnd) * BW_UNIT / rtt_us;
        tcp.pacing_rate = Self::rate_bytes_per_sec(tcp, bw, HIGH_GAIN);
    }

    /// Pace at gain × bw; before the pipe is full, never lower the rate (draft §4.2.1).
    fn set_pacing_rate(&mut self, tcp: &mut TcpCc, bw: u64, gain: u32) {
        let rate = Self::rate_bytes_per_sec(tcp, bw, gain);
        if !self.has_seen_rtt && tcp.srtt > SimTime::ZERO {
            self.init_pacing_rate_from_rtt(tcp);
        }
        if self.full_bw_reached || rate > tcp.pacing_rate {
            tcp.pacing_rate = rate;
        }
    }

    /// Segments per send quantum (`bbr_tso_segs_goal`): ~1 ms of data at the pacing rate.
    pub(crate) fn tso_segs_goal(tcp: &TcpCc) -> u32 {
        let bytes = (tcp.pacing_rate >> PACING_SHIFT).min(MAX_TSO_BYTES);
        let min_segs = if tcp.pacing_rate < MIN_TSO_RATE_BPS / 8 {
            1
        } else {
            2
        };
        let segs = (bytes / u64::from(tcp.mss.max(1))).max(min_segs);
        segs.min(0x7f) as u32
    }

    /// cwnd and inflight targets: ⌈gain · bw · min_rtt⌉ (draft §4.2.3.2), or the initial
    /// window before any RTT sample.
    pub(crate) fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u128::from(bw) * u128::from(self.min_rtt_us);
        // Round up, to avoid a negative feedback loop.
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        u32::try_from(bdp).unwrap_or(u32::MAX)
    }

    /// Room for the end hosts' send quanta: 3 quanta, rounded up to even (fewer delayed
    /// ACKs), and 2 more in the probing phase so small BDPs still probe above 1·BDP.
    pub(crate) fn quantization_budget(&self, tcp: &TcpCc, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * Self::tso_segs_goal(tcp));
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// In-flight target for `gain`: BDP plus the quantization budget.
    pub(crate) fn inflight(&self, tcp: &TcpCc, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tcp, bdp)
    }

    /// Packets still in the network when the next paced packet departs: in flight now,
    /// less what the bottleneck delivers until then (plus that packet when probing up).
    pub(crate) fn packets_in_net_at_edt(&self, tcp: &TcpCc, inflight_now: u32) -> u32 {
        let edt = tcp.wstamp.max(tcp.now);
        let interval_us = (edt - tcp.now).as_micros();
        let interval_delivered =
            ((u128::from(self.bw()) * u128::from(interval_us)) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += Self::tso_segs_goal(tcp);
        }
        if interval_delivered >= u64::from(inflight_at_edt) {
            return 0;
        }
        inflight_at_edt - interval_delivered as u32
    }

    /// Extra cwnd for ACK aggregation: the recent max of data ACKed beyond bw × time,
    /// at most 100 ms worth of bw; only once the pipe was found full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr = u64::from(EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// Remember the last good cwnd before loss recovery or PROBE_RTT cut it.
    pub(crate) fn save_cwnd(&mut self, tcp: &TcpCc) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tcp.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tcp.cwnd);
        }
    }

    /// Loss recovery (draft §4.2.3.4): deduct lost packets; in the first round of
    /// Recovery send one packet per packet delivered (packet conservation); on leaving
    /// recovery restore the cwnd saved when it began. Returns (conserving, cwnd).
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        tcp: &TcpCc,
        rs: &RateSample,
        acked: u32,
    ) -> (bool, u32) {
        let prev = self.prev_ca_state;
        let state = tcp.ca_state;
        let mut cwnd = tcp.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = tcp.delivered; // start a round now
            cwnd = tcp.packets_in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(tcp.packets_in_flight + acked));
        }
        (false, cwnd)
    }

    /// cwnd: grow by the packets acked toward the target (slow-start-like), cut to the
    /// target once the pipe was full (draft §4.2.3); PROBE_RTT caps it at 4 packets.
    fn set_cwnd(&mut self, tcp: &mut TcpCc, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tcp.cwnd;
        if acked > 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tcp, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.bdp(bw, gain) + self.ack_aggregation_cwnd();
                let target = self.quantization_budget(tcp, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tcp.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tcp.cwnd = cwnd.min(tcp.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tcp.cwnd = tcp.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// Bandwidth model (draft §4.1.1): count packet-timed rounds from the `delivered`
    /// count at the newest acked packet's send time, and feed the max filter.
    fn update_bw(&mut self, tcp: &TcpCc, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval == SimTime::ZERO {
            return; // not a valid sample
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tcp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tcp, rs);
        let bw = (rs.delivered as u128 * u128::from(BW_UNIT) * 1_000
            / u128::from(rs.interval.as_nanos())) as u64;
        // App-limited samples underestimate the path; use them only if they raise the max.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(10, self.rtt_cnt, bw);
        }
    }

    /// Track how much more was ACKed in an epoch than bw × its length (ACK aggregation).
    fn update_ack_aggregation(&mut self, tcp: &TcpCc, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0
            || rs.acked_sacked == 0
            || rs.delivered < 0
            || rs.interval == SimTime::ZERO
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = tcp
            .delivered_time
            .saturating_sub(self.ack_epoch_mstamp)
            .as_micros();
        let mut expected =
            (u128::from(self.bw()) * u128::from(epoch_us) / u128::from(BW_UNIT)) as u64;
        if u64::from(self.ack_epoch_acked) <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = tcp.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (u64::from(self.ack_epoch_acked) - expected).min(u64::from(tcp.cwnd)) as u32;
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// Gains of the current mode (draft §4.3).
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => {
                let g = if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    probe_bw::PACING_GAIN[self.cycle_idx]
                };
                (g, CWND_GAIN)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    fn update_model(&mut self, tcp: &mut TcpCc, rs: &RateSample) {
        self.update_bw(tcp, rs);
        self.update_ack_aggregation(tcp, rs);
        self.update_cycle_phase(tcp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tcp);
        self.update_min_rtt(tcp, rs);
        self.update_gains();
    }

    /// STARTUP when the pipe is not known to be full, else PROBE_BW.
    pub(crate) fn reset_mode(&mut self, tcp: &TcpCc) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(tcp);
        }
    }
}

impl CongestionControl for Bbr {
    fn init(&mut self, tcp: &mut TcpCc) {
        let seed_rng = self.rng.clone();
        *self = Bbr::new(0);
        self.rng = seed_rng;
        tcp.ssthresh = INFINITE_SSTHRESH;
        self.next_rtt_delivered = tcp.delivered;
        self.min_rtt_us = if tcp.min_rtt > SimTime::ZERO {
            u32::try_from(tcp.min_rtt.as_micros()).unwrap_or(u32::MAX)
        } else {
            u32::MAX
        };
        self.min_rtt_stamp = super::jiffies(tcp.now);
        self.bw.reset(self.rtt_cnt, 0);
        self.init_pacing_rate_from_rtt(tcp);
        self.reset_lt_bw_sampling(tcp);
        self.ack_epoch_mstamp = tcp.now;
        tcp.pacing = true; // sk_pacing_status = SK_PACING_NEEDED
    }

    /// Entering loss recovery: remember cwnd; ssthresh is not BBR's business (unchanged).
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        self.save_cwnd(tcp);
        tcp.ssthresh
    }

    fn pkts_acked(&mut self, _tcp: &mut TcpCc, _ev: &AckEvent) {}

    fn set_state(&mut self, tcp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            // An RTO ends a round and counts as a loss for policer detection.
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            let rs = RateSample {
                losses: 1,
                ..RateSample::default()
            };
            self.lt_bw_sampling(tcp, &rs);
        }
    }

    fn cwnd_event(&mut self, tcp: &mut TcpCc, ev: CwndEvent) {
        if ev == CwndEvent::TxStart && tcp.app_limited != 0 {
            // Restarting from idle while app-limited: no need to go faster than bw.
            self.idle_restart = true;
            self.ack_epoch_mstamp = tcp.now;
            self.ack_epoch_acked = 0;
            match self.mode {
                Mode::ProbeBw => {
                    let bw = self.bw();
                    self.set_pacing_rate(tcp, bw, BBR_UNIT);
                }
                Mode::ProbeRtt => self.check_probe_rtt_done(tcp),
                _ => {}
            }
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tcp: &mut TcpCc, rs: &RateSample) {
        self.update_model(tcp, rs);
        let bw = self.bw();
        let (pacing_gain, cwnd_gain) = (self.pacing_gain, self.cwnd_gain);
        self.set_pacing_rate(tcp, bw, pacing_gain);
        self.set_cwnd(tcp, rs, rs.acked_sacked, bw, cwnd_gain);
    }
}
