//! The TCP sender, modelled on Linux's `tcp_output.c`/`tcp_input.c` (6.x) behaviour:
//!
//! - sequence space in segments; a scoreboard entry per outstanding segment (a ring);
//! - `packets_in_flight = packets_out − sacked_out − lost_out + retrans_out` (RFC 6675
//!   "pipe", Linux `tcp_packets_in_flight`), sending while it is below cwnd;
//! - SACK (RFC 2018) scoreboard with RFC 6675's pipe; losses are detected by RACK-TLP
//!   (RFC 8985, Linux's default, `rack.rs`): a segment is lost once a segment sent after it
//!   was delivered and the reordering window passed; tail losses are probed (TLP);
//! - without SACK, duplicate ACKs count as SACKed segments (Linux `tcp_add_reno_sack`);
//!   3 dupACKs mark the head lost; a partial ACK in recovery marks the new head lost and
//!   retransmits it (RFC 6582 §3.2 step 3);
//! - fast recovery: `ssthresh` from the congestion control, cwnd set by PRR (RFC 6937,
//!   Linux `tcp_cwnd_reduction`, for SACK and non-SACK flows alike, as Linux does);
//!   leaving recovery sets cwnd = ssthresh (`tcp_end_cwnd_reduction`);
//! - RTO (RFC 6298, `rtt.rs`): everything not SACKed is marked lost, cwnd = 1, state Loss,
//!   slow start through the congestion control's `cong_avoid`;
//! - delivery-rate samples on every ACK (`rate.rs`), app-limited marking
//!   (`tcp_rate_check_app_limited`), pacing at `pacing_rate` when the algorithm asks for it
//!   (Linux internal pacing: starts after 10 data segments);
//! - slow start after idle (`tcp_cwnd_restart`) for algorithms without `cong_control`;
//! - with `gso` on, segments leave in GSO/TSO aggregates sized by `tcp_tso_autosize`, held
//!   back by TSO deferral (`gso.rs`).
//!
//! Not modelled: undo of spurious recoveries (no reordering and no DSACK here), F-RTO,
//! ECN.

use super::rate::{RateAcc, TxSnapshot};
use super::rtt::RttEstimator;
use crate::cc::{
    hooks, hooks::AfterAck, AckEvent, AnyCc, CaState, CongestionControl, CwndEvent, RateSample,
    TcpCc,
};
use crate::event::{DelayLine, Ev, EventQueue, Timer, TimerKind};
use crate::packet::{Ack, Packet, HEADER_BYTES};
use crate::units::SimTime;
use std::collections::VecDeque;

mod ack;
mod board;
pub mod gso;
mod rack;
#[cfg(test)]
mod tests;

/// RFC 5681 §3.2 / RFC 6675 DupThresh (Linux `tcp_reordering` default).
pub const DUPTHRESH: u64 = 3;
/// Linux internal pacing starts once this many data segments were sent.
const PACING_AFTER_SEGS: u64 = 10;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// Retransmitted and the retransmission is still outstanding (Linux TCPCB_SACKED_RETRANS).
const RETRANS: u8 = 4;
/// Retransmitted at least once (Karn: no RTT sample).
const EVER_RETRANS: u8 = 8;
/// Already counted by the rate estimator (SACKed before the cumulative ACK).
const RATE_DONE: u8 = 16;

/// A scoreboard entry: when the segment was last sent, and its state. (Its rate-sample
/// snapshot, for BBR only, is kept apart: `board`.)
#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    tx_time: SimTime,
    flags: u8,
}

/// Where a sender's packets go: the event queue and its forward path (delay line `line`).
pub struct Io<'a> {
    pub q: &'a mut EventQueue,
    pub fwd: &'a mut DelayLine<Packet>,
    pub fwd_delay: SimTime,
    pub line: u32,
}

#[derive(Clone, Debug)]
pub struct SenderParams {
    pub id: u32,
    pub mss: u32,
    pub sack: bool,
    /// Advertised receive window, in bytes.
    pub rwnd_bytes: u64,
    /// Send buffer: bound on unacknowledged payload bytes.
    pub sndbuf_bytes: u64,
    pub size_bytes: Option<u64>,
    pub app_rate_bps: Option<u64>,
    pub cwnd_clamp: u32,
    /// GSO/TSO on: segments leave in aggregates (`gso.rs`).
    pub gso: bool,
}

/// Per-connection counters for the output.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub bytes_sent: u64,
    pub bytes_retransmitted: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub completion: Option<SimTime>,
}

enum NewData {
    Yes(u32),
    NoData,
    Blocked,
}

/// Field order (`repr(C)`, aligned to a cache line) follows what an ACK touches (issue 13:
/// with 10,000 connections nearly every line an ACK reads is a cache miss, so the fields
/// of an ACK in the common case — nothing lost, no SACK blocks — are packed into as few
/// lines as they fit): the flags and the sequence counters, the RTT estimator and the send
/// state, the scoreboard's ring, the probe state and the three timers re-armed on ACKs, the
/// RACK state, the parameters, the congestion state and the algorithm (whose own fields
/// come first in its enum, so a small algorithm's state follows the shared state instead
/// of sitting in the middle of a larger variant's space); then what only loss recovery,
/// SACK blocks, BBR, pacing, an application rate, GSO or the output read.
#[repr(C, align(64))]
pub struct Sender {
    active: bool,
    cwnd_limited_flag: bool,
    /// The outstanding probe was a retransmission.
    tlp_retrans: bool,
    batching: bool,
    /// `known_sacks` holds blocks (the last ACK had some): an ACK without blocks after one
    /// without tests this byte alone.
    sacks_known: bool,
    /// `cc.has_cong_control()`, fixed at construction (`samples_rate`): asked on every
    /// ACK and sent segment, a byte here instead of a dispatch on the algorithm.
    rate_reader: bool,
    /// Consecutive RTOs without progress (Linux `icsk_retransmits`).
    rto_count: u32,
    snd_una: u64,
    snd_nxt: u64,
    sacked_out: u64,
    lost_out: u64,
    retrans_out: u64,
    /// Bytes the application will ever write, once known (finite flow, or stopped).
    /// `u64::MAX` while unknown: a plain bound, so that every use is one `min` or compare.
    data_end: u64,
    /// The most segments the receive window and the send buffer let be outstanding:
    /// ⌊min(rwnd, sndbuf) / mss⌋ (`out · mss > rwnd or sndbuf` is `out > max_out`).
    max_out: u64,
    rtt: RttEstimator,
    next_send: SimTime,
    /// Data segments sent (the last at `tcp.lsndtime`: `last_send`).
    data_segs_out: u64,
    // tcp_cwnd_validate
    max_packets_out: u64,
    cwnd_usage_seq: u64,
    /// The scoreboard: an entry per outstanding segment.
    board: board::Board,
    /// snd_nxt when the outstanding tail loss probe was sent (Linux `tlp_high_seq`).
    tlp_high_seq: Option<u64>,
    pub rto_timer: Timer,
    pub tlp_timer: Timer,
    pub reo_timer: Timer,
    rack: rack::Rack,
    p: SenderParams,
    pub tcp: TcpCc,
    pub cc: AnyCc,
    // Read on loss recovery, SACK blocks, or for BBR alone.
    /// One past the highest SACKed segment.
    highest_sacked: u64,
    /// No segment below this needs a retransmission.
    retx_hint: u64,
    /// Recovery point (RFC 6582 `recover`, Linux `high_seq`).
    high_seq: u64,
    prr_delivered: u64,
    /// `data_segs_out` when the cwnd reduction began: PRR's `prr_out` is what was sent
    /// since (`prr_out()`; every transmission from then on is one in the reduction, which
    /// only its own start ends and only `init_cwnd_reduction` starts), so a transmission
    /// need not test the state to count itself.
    prr_base: u64,
    known_sacks: [(u64, u64); 3],
    /// The counters for the output, but `bytes_sent` (which `stats()` derives): touched
    /// on retransmissions, timeouts and completion only, so in the cold part.
    stats: SenderStats,
    rack_q: rack::RackQueues,
    first_tx: SimTime,
    pub pacing_timer: Timer,
    pub app_timer: Timer,
    data_start: SimTime,
    /// GSO: the aggregate being built (segments not yet handed to the send path), its
    /// target size in segments, and whether `try_send` is building aggregates.
    agg: Vec<Packet>,
    agg_goal: u32,
}

impl Sender {
    pub fn new(p: SenderParams, cc: AnyCc) -> Sender {
        let tcp = TcpCc::new(p.mss, p.cwnd_clamp);
        let data_end = p.size_bytes.unwrap_or(u64::MAX);
        let rate_reader = cc.has_cong_control();
        let board = board::Board::new(64, rate_reader);
        let max_out = match u64::from(p.mss) {
            0 => u64::MAX,
            mss => p.rwnd_bytes.min(p.sndbuf_bytes) / mss,
        };
        Sender {
            tcp,
            cc,
            active: false,
            data_start: SimTime::ZERO,
            data_end,
            snd_una: 0,
            snd_nxt: 0,
            board,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            highest_sacked: 0,
            retx_hint: 0,
            high_seq: 0,
            prr_delivered: 0,
            prr_base: 0,
            rtt: RttEstimator::default(),
            rto_count: 0,
            rto_timer: Timer::default(),
            pacing_timer: Timer::default(),
            app_timer: Timer::default(),
            reo_timer: Timer::default(),
            tlp_timer: Timer::default(),
            rack: rack::Rack::default(),
            rack_q: rack::RackQueues::default(),
            tlp_high_seq: None,
            tlp_retrans: false,
            next_send: SimTime::ZERO,
            first_tx: SimTime::ZERO,
            data_segs_out: 0,
            cwnd_limited_flag: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            known_sacks: [(0, 0); 3],
            stats: SenderStats::default(),
            agg: Vec::new(),
            agg_goal: 0,
            batching: false,
            sacks_known: false,
            rate_reader,
            max_out,
            p,
        }
    }

    // ------------------------------------------------------------------ accessors
    pub fn packets_out(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Linux `tcp_packets_in_flight`.
    pub fn in_flight(&self) -> u64 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `in_flight` without the saturation (negative where it gives 0; without SACK,
    /// dupACKs counted as SACKed and a head marked lost can exceed what is out), so that
    /// one more segment out adds exactly one.
    fn in_flight_signed(&self) -> i64 {
        (self.packets_out() + self.retrans_out) as i64 - (self.sacked_out + self.lost_out) as i64
    }

    pub fn srtt(&self) -> SimTime {
        self.rtt.srtt()
    }

    pub fn rto(&self) -> SimTime {
        self.rtt.rto()
    }

    pub fn mss(&self) -> u32 {
        self.p.mss
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// The counters for the output. `bytes_sent` is not counted per transmission (it
    /// would keep the counters in the lines an ACK reads): it is `bytes_at(snd_nxt)`,
    /// since every new segment is a full one but the last written (`new_data_upto`:
    /// a short one only at `data_end`, after which nothing new is sent), and `data_end`
    /// never drops below what was sent (`stop`). Retransmissions and probes resend old
    /// segments and do not move `snd_nxt`.
    pub fn stats(&self) -> SenderStats {
        SenderStats {
            bytes_sent: self.bytes_at(self.snd_nxt),
            ..self.stats
        }
    }

    /// A one-line summary of the sender's state, for debugging.
    pub fn debug_state(&self) -> String {
        format!(
            "srtt={:?} rttvar={} rto={:?} una={} nxt={} out={} sacked={} lost={} retrans={} cwnd={} ssthresh={} state={:?} high_seq={} rto_armed={:?} retx_hint={} tlp={:?}",
            self.rtt.srtt(), self.rtt.rttvar, self.rtt.rto(), self.snd_una, self.snd_nxt, self.packets_out(), self.sacked_out, self.lost_out, self.retrans_out,
            self.tcp.cwnd, self.tcp.ssthresh, self.tcp.ca_state, self.high_seq, self.rto_timer.deadline(), self.retx_hint, self.tlp_high_seq
        )
    }

    /// Byte offset of segment `i`.
    fn bytes_at(&self, i: u64) -> u64 {
        let b = i * self.p.mss as u64;
        b.min(self.data_end)
    }

    fn seg_mut(&mut self, i: u64) -> &mut Seg {
        self.board.get_mut(i)
    }

    fn seg(&self, i: u64) -> &Seg {
        self.board.get(i)
    }

    /// Does the congestion control read delivery-rate samples? Only one with its own
    /// control path does (BBR: `hooks::on_ack` passes the sample to `cong_control` alone);
    /// for the others the sample and what only it reads (`RateAcc`, `first_tx`) are not
    /// assembled at all.
    #[inline]
    fn samples_rate(&self) -> bool {
        self.rate_reader
    }

    /// When the last data segment was sent, if any (one store per segment instead of two).
    fn last_send(&self) -> Option<SimTime> {
        (self.data_segs_out > 0).then_some(self.tcp.lsndtime)
    }

    /// Segments sent since the cwnd reduction began (RFC 6937 `prr_out`).
    fn prr_out(&self) -> u64 {
        self.data_segs_out - self.prr_base
    }

    /// Linux `tcp_is_cwnd_limited`.
    fn is_cwnd_limited(&self) -> bool {
        if self.cwnd_limited_flag {
            return true;
        }
        self.tcp.in_slow_start() && (self.tcp.cwnd as u64) < 2 * self.max_packets_out
    }

    fn sync(&mut self, now: SimTime) {
        self.tcp.now = now;
        self.tcp.packets_in_flight = self.in_flight() as u32;
        self.tcp.snd_nxt = self.bytes_at(self.snd_nxt);
        self.tcp.snd_una = self.bytes_at(self.snd_una);
        // (`tcp.srtt` is set with each RTT sample: `rtt_sample`.)
        self.tcp.is_cwnd_limited = self.is_cwnd_limited();
        self.tcp.wstamp = self.next_send;
    }

    /// An RTT sample for the RTO estimator; the congestion control's copy of the smoothed
    /// RTT follows it here (it changes nowhere else), not in every `sync`.
    fn rtt_sample(&mut self, r: SimTime) {
        self.rtt.sample(r);
        self.tcp.srtt = self.rtt.srtt();
    }

    fn set_state(&mut self, now: SimTime, s: CaState) {
        if self.tcp.ca_state == s {
            return;
        }
        self.sync(now);
        hooks::set_state(&mut self.cc, &mut self.tcp, s);
    }

    // ------------------------------------------------------------------ application
    /// The connection is established (after the handshake, `base_rtt` after its start):
    /// the SYN/SYN-ACK exchange gave the first RTT sample, as in Linux.
    pub fn start(&mut self, now: SimTime, base_rtt: SimTime, io: &mut Io) {
        self.active = true;
        self.data_start = now;
        self.rtt_sample(base_rtt);
        self.tcp.min_rtt = base_rtt;
        self.sync(now);
        self.cc.init(&mut self.tcp);
        self.try_send(now, io);
    }

    /// Bytes the application has written by `now` (`u64::MAX`: unlimited).
    fn written(&self, now: SimTime) -> u64 {
        let w = match self.p.app_rate_bps {
            Some(r) => {
                (now.saturating_sub(self.data_start).0 as u128 * r as u128 / 8_000_000_000) as u64
            }
            None => u64::MAX,
        };
        w.min(self.data_end)
    }

    /// The application stops writing at `now` (`stop`). What it already wrote into the
    /// send queue is still sent: Linux autotunes the send buffer to about two congestion
    /// windows (`tcp_sndbuf_expand`), bounded by wmem.
    pub fn stop(&mut self, now: SimTime, io: &mut Io) {
        if !self.active {
            // Stopped before the connection was established: nothing was written.
            self.data_end = 0;
            return;
        }
        let queue = (2 * self.tcp.cwnd as u64 * self.p.mss as u64).min(self.p.sndbuf_bytes);
        let queued = self.bytes_at(self.snd_una).saturating_add(queue);
        let end = self
            .written(now)
            .min(queued)
            .max(self.bytes_at(self.snd_nxt));
        self.data_end = self.data_end.min(end);
        self.app_timer.cancel();
        self.try_send(now, io);
    }

    fn new_data(&self, now: SimTime) -> NewData {
        self.new_data_upto(self.written(now))
    }

    /// `new_data` when the application has written `w` bytes (`written(now)`, which a
    /// send loop reads once).
    #[inline]
    fn new_data_upto(&self, w: u64) -> NewData {
        let start = self.snd_nxt * self.p.mss as u64;
        if start >= w {
            return NewData::NoData;
        }
        let len = (w - start).min(self.p.mss as u64) as u32;
        let last = start + len as u64 >= self.data_end;
        if len < self.p.mss && !last {
            return NewData::NoData; // Nagle: wait for a full segment
        }
        if self.packets_out() + 1 > self.max_out {
            return NewData::Blocked;
        }
        NewData::Yes(len)
    }

    /// Below which `snd_nxt` `new_data_upto(w)` is sure to give a full segment: all of it
    /// written (`snd_nxt < w / mss`), and room in the receive window and send buffer
    /// (`snd_nxt < snd_una + max_out`). Computed once per send loop (`snd_una` does not
    /// move in it), so each segment sent tests one bound instead of the four.
    #[inline]
    fn full_segments_until(&self, w: u64) -> u64 {
        let by_data = match u64::from(self.p.mss) {
            0 => 0,
            _ if w == u64::MAX => u64::MAX, // unlimited: no division
            mss => w / mss,
        };
        by_data.min(self.snd_una.saturating_add(self.max_out))
    }

    /// When an app-limited writer will have written the next full segment.
    fn schedule_app(&mut self, now: SimTime, io: &mut Io) {
        let Some(rate) = self.p.app_rate_bps else {
            return;
        };
        if self.snd_nxt * self.p.mss as u64 >= self.data_end {
            return;
        }
        let need = ((self.snd_nxt + 1) * self.p.mss as u64).min(self.data_end);
        let t = self.data_start.0 as u128 + (need as u128 * 8_000_000_000).div_ceil(rate as u128);
        let t = SimTime(t.min(u64::MAX as u128) as u64).max(now);
        self.app_timer.arm(io.q, t, self.p.id, TimerKind::App);
    }

    // ------------------------------------------------------------------ sending
    /// Send what cwnd, rwnd, the send buffer, the application and pacing allow
    /// (Linux `tcp_xmit_retransmit_queue` then `tcp_write_xmit`).
    #[inline(never)]
    pub fn try_send(&mut self, now: SimTime, io: &mut Io) {
        if self.send_allowed(now, io) {
            self.schedule_tlp(now, io);
        }
    }

    /// `try_send` but for the probe timer, which the caller schedules when new data went
    /// out (returns whether it did); `on_ack` schedules it in any case.
    /// Inline in its two callers: `try_send` and `on_ack` (a call per ACK).
    #[inline(always)]
    pub(super) fn send_allowed(&mut self, now: SimTime, io: &mut Io) -> bool {
        if !self.active {
            return false;
        }
        let mut sent_new = false;
        let mut cwnd_limited = false;
        self.batching = self.p.gso;
        let written = self.written(now);
        let full_until = self.full_segments_until(written);
        // Anything to retransmit (`next_retransmit`'s first test)? Only a retransmission
        // changes its answer, from yes to perhaps no: without one now, none in this loop.
        let retx = self.lost_out > self.retrans_out;
        // `in_flight()` before its saturation, kept here: a transmission adds one (a new
        // segment to packets_out, a retransmission to retrans_out) and nothing else in the
        // loop changes the four counters, so it is not recomputed from them per segment.
        // (What was sent is what it grew by.)
        let mut flight = self.in_flight_signed();
        let flight_before = flight;
        loop {
            // Under GSO an aggregate is paced as one: only its first segment waits.
            if self.tcp.pacing
                && self.tcp.pacing_rate > 0
                && now < self.next_send
                && self.agg.is_empty()
            {
                self.pacing_timer
                    .arm(io.q, self.next_send, self.p.id, TimerKind::Pacing);
                break;
            }
            if flight.max(0) >= i64::from(self.tcp.cwnd) {
                cwnd_limited = true;
                break;
            }
            if retx {
                if let Some(i) = self.next_retransmit() {
                    self.retransmit(now, i, io);
                    flight += 1;
                    continue;
                }
            }
            let next = if self.snd_nxt < full_until {
                NewData::Yes(self.p.mss)
            } else {
                self.new_data_upto(written)
            };
            match next {
                NewData::Yes(len) => {
                    if self.batching && self.agg.is_empty() && self.tso_should_defer(now) {
                        cwnd_limited = true;
                        break;
                    }
                    if self.packets_out() == 0 {
                        self.on_tx_start(now);
                        if flight.max(0) >= i64::from(self.tcp.cwnd) {
                            continue;
                        }
                    }
                    self.send_new(now, len, io);
                    flight += 1;
                    sent_new = true;
                }
                NewData::NoData => {
                    self.check_app_limited();
                    self.schedule_app(now, io);
                    break;
                }
                NewData::Blocked => break,
            }
        }
        if self.batching {
            self.gso_flush(now, io);
            self.batching = false;
        }
        // Linux tcp_cwnd_validate.
        if (flight > flight_before || cwnd_limited)
            && (self.snd_una >= self.cwnd_usage_seq || (cwnd_limited && !self.cwnd_limited_flag))
        {
            self.cwnd_limited_flag = cwnd_limited;
            self.max_packets_out = self.packets_out();
            self.cwnd_usage_seq = self.snd_nxt;
        }
        sent_new
    }

    /// First transmission with nothing in flight: slow start after idle
    /// (`tcp_slow_start_after_idle_check` → `tcp_cwnd_restart`) and `CA_EVENT_TX_START`.
    #[cold]
    fn on_tx_start(&mut self, now: SimTime) {
        self.sync(now);
        if let Some(last) = self.last_send() {
            let rto = self.rtt.rto();
            let mut idle = now.saturating_sub(last).0 as i64;
            if !self.cc.has_cong_control() && idle > rto.0 as i64 {
                self.cc.cwnd_event(&mut self.tcp, CwndEvent::CwndRestart);
                let cwnd = self.tcp.cwnd;
                // tcp_current_ssthresh
                if !matches!(self.tcp.ca_state, CaState::Cwr | CaState::Recovery) {
                    self.tcp.ssthresh = self.tcp.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
                }
                let restart = 10.min(cwnd);
                let mut c = cwnd;
                loop {
                    idle -= rto.0 as i64;
                    if idle <= 0 || c <= restart {
                        break;
                    }
                    c >>= 1;
                }
                self.tcp.set_cwnd(c.max(restart));
            }
        }
        self.cc.cwnd_event(&mut self.tcp, CwndEvent::TxStart);
    }

    /// `tcp_rate_check_app_limited`: the sender ran out of data with room in cwnd.
    fn check_app_limited(&mut self) {
        let inflight = self.in_flight();
        if inflight < self.tcp.cwnd as u64 && self.lost_out <= self.retrans_out {
            self.tcp.app_limited = (self.tcp.delivered + inflight).max(1);
        }
    }

    fn snapshot(&mut self, now: SimTime) -> TxSnapshot {
        // tcp_rate_skb_sent: a new send phase starts when nothing is outstanding.
        if self.packets_out() == 0 {
            self.first_tx = now;
            self.tcp.delivered_time = now;
        }
        TxSnapshot {
            first_tx: self.first_tx,
            delivered_time: self.tcp.delivered_time,
            delivered: self.tcp.delivered,
            app_limited: self.tcp.app_limited != 0,
        }
    }

    /// Keep segment `i`'s snapshot for the rate sample, if it is read (`samples_rate`).
    /// Taken only then: for a retransmission (segment `i` outstanding, so `snapshot`
    /// changes nothing) the others would read `first_tx`, in the cold part, for nobody
    /// (issue 13: a cache miss per retransmission at 10,000 connections).
    #[inline(always)]
    fn keep_snapshot(&mut self, i: u64, now: SimTime) {
        if self.samples_rate() {
            let snap = self.snapshot(now);
            self.board.set_snap(i, snap);
        }
    }

    #[inline(always)]
    fn send_new(&mut self, now: SimTime, len: u32, io: &mut Io) {
        let i = self.snd_nxt;
        self.board.push(
            self.snd_una,
            i,
            Seg {
                tx_time: now,
                flags: 0,
            },
        );
        // The snapshot only for its reader: without it, what `snapshot` keeps (`first_tx`,
        // `tcp.delivered_time`) is read by nobody either.
        if self.samples_rate() {
            let snap = self.snapshot(now);
            self.board.set_snap(i, snap);
        }
        self.snd_nxt += 1;
        if !self.rto_timer.is_armed() {
            self.rto_timer
                .arm(io.q, now + self.rtt.rto(), self.p.id, TimerKind::Rto);
        }
        self.transmit(now, i, len, io);
    }

    fn seg_len(&self, i: u64) -> u32 {
        let start = i * self.p.mss as u64;
        self.data_end.saturating_sub(start).min(self.p.mss as u64) as u32
    }

    fn next_retransmit(&mut self) -> Option<u64> {
        if self.lost_out <= self.retrans_out {
            return None;
        }
        let mut i = self.retx_hint.max(self.snd_una);
        while i < self.snd_nxt {
            let f = self.seg(i).flags;
            if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                self.retx_hint = i;
                return Some(i);
            }
            i += 1;
        }
        self.retx_hint = i;
        None
    }

    #[inline(never)]
    fn retransmit(&mut self, now: SimTime, i: u64, io: &mut Io) {
        let s = self.seg_mut(i);
        s.flags |= RETRANS | EVER_RETRANS;
        s.flags &= !RATE_DONE;
        s.tx_time = now;
        self.keep_snapshot(i, now);
        self.retrans_out += 1;
        let len = self.seg_len(i);
        self.stats.retransmits += 1;
        self.stats.bytes_retransmitted += len as u64;
        if i == self.snd_una {
            self.rto_timer
                .arm(io.q, now + self.rtt.rto(), self.p.id, TimerKind::Rto);
        }
        self.rack_resent(now, i);
        self.transmit(now, i, len, io);
    }

    #[inline(always)]
    fn transmit(&mut self, now: SimTime, seg: u64, len: u32, io: &mut Io) {
        let pkt = Packet {
            flow: self.p.id,
            seg,
            len,
            wire: len + HEADER_BYTES,
            ts: now,
            agg: 1,
        };
        if self.batching {
            self.gso_add(now, pkt, io);
        } else {
            io.fwd
                .push(io.q, now + io.fwd_delay, pkt, Ev::FwdArrive(io.line));
        }
        self.data_segs_out += 1;
        self.tcp.lsndtime = now;
        // Linux's departure stamp (tcp_wstamp_ns) follows every transmission; with pacing
        // (tcp_update_skb_after_send) it moves on by len/rate, less up to half of that when
        // the stamp had to jump forward to now (the sender was late or idle).
        let credit = now.saturating_sub(self.next_send).0;
        self.next_send = self.next_send.max(now);
        if self.tcp.pacing && self.tcp.pacing_rate > 0 && self.data_segs_out >= PACING_AFTER_SEGS {
            let gap = (len as u128 * 1_000_000_000 / self.tcp.pacing_rate as u128) as u64;
            self.next_send += SimTime(gap - (gap / 2).min(credit));
        }
    }
}
