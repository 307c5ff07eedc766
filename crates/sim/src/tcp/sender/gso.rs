//! GSO/TSO senders (`gso = true`): the sender hands its segments to the host's send path in
//! aggregates, as Linux with GSO/TSO on does (`tcp_write_xmit` builds one skb of several
//! MSS, the device or the GSO layer cuts it into MTU-sized frames only on the way out).
//!
//! The aggregate size is Linux 6.x's `tcp_tso_segs`: the algorithm's own goal when it has one
//! (BBR, `bbr_tso_segs_goal`), else `tcp_tso_autosize` — about 1 ms of the socket's pacing
//! rate (`sk_pacing_rate >> sk_pacing_shift`, shift 10), plus `gso_max_size >> (min_rtt_us >>
//! tcp_tso_rtt_log)` (log 9: a bonus for sub-16 ms paths, since 5.18), at most
//! `gso_max_size` (64 KB less headers), at least `tcp_min_tso_segs` = 2 segments. Unpaced
//! algorithms still have an `sk_pacing_rate` (`TcpCc::sk_pacing_rate`). The cwnd and the
//! other send limits cut an aggregate short, as `tcp_mss_split_point` does; an aggregate
//! holds consecutive segments of one kind (new data, or retransmissions of a run).
//!
//! Each segment still travels as its own `Packet` (MTU-sized frames on the wire); the first
//! carries the aggregate's size in `agg`, the rest carry 0, so the bottleneck can accept or
//! drop the aggregate whole (`link.rs`).
//!
//! TSO deferral (`tcp_tso_should_defer`): an ACK-clocked sender with a full window gets
//! room for a segment or two per ACK; Linux holds new data back until it can send a full
//! aggregate or a third of cwnd, unless the oldest outstanding segment left less than half
//! an srtt ago (its ACK is far off), the last send was more than 1 ms ago, or the
//! connection is in recovery. Without it the aggregates of a cwnd-limited flow would be 2
//! segments long. Not modelled: tail loss probes go as single segments.

use super::{Io, Sender};
use crate::cc::{AnyCc, Bbr, CaState, TcpCc, MAX_TSO_BYTES};
use crate::event::Ev;
use crate::packet::Packet;
use crate::units::SimTime;

/// `sk_pacing_shift`: an aggregate is about 2^-10 s of data at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `net.ipv4.tcp_tso_rtt_log`: the small-RTT bonus halves every 2^9 µs of min RTT.
const TSO_RTT_LOG: u32 = 9;
/// `net.ipv4.tcp_min_tso_segs`.
const MIN_TSO_SEGS: u32 = 2;

/// `tcp_tso_autosize`: segments per aggregate for a pacing rate in bytes/s (0: none yet,
/// Linux's initial rate is unbounded), the connection's min RTT (zero: no sample) and MSS.
pub fn tso_autosize(pacing_rate: u64, min_rtt: SimTime, mss: u32) -> u32 {
    let mut bytes = if pacing_rate == 0 {
        MAX_TSO_BYTES
    } else {
        pacing_rate >> PACING_SHIFT
    };
    if min_rtt > SimTime::ZERO {
        let r = min_rtt.as_micros() >> TSO_RTT_LOG;
        if r < 32 {
            bytes += MAX_TSO_BYTES >> r;
        }
    }
    let segs = bytes.min(MAX_TSO_BYTES) / u64::from(mss.max(1));
    (segs as u32).max(MIN_TSO_SEGS)
}

/// `tcp_tso_segs`: the algorithm's goal if it has one, else `tcp_tso_autosize`.
pub fn tso_segs(cc: &AnyCc, tcp: &TcpCc) -> u32 {
    match cc {
        AnyCc::Bbr(_) => Bbr::tso_segs_goal(tcp),
        _ => tso_autosize(tcp.sk_pacing_rate(), tcp.min_rtt, tcp.mss),
    }
}

/// `net.ipv4.tcp_tso_win_divisor`: a third of cwnd is worth sending without deferral.
const TSO_WIN_DIVISOR: u64 = 3;
/// Deferral never holds a sender that last sent this long ago.
const MAX_DEFER: SimTime = SimTime::from_millis(1);

impl Sender {
    /// `tcp_tso_should_defer` for the next aggregate of new data (rwnd is left to
    /// `new_data`; it bounds the window like cwnd in Linux's `limit`).
    pub(super) fn tso_should_defer(&self, now: SimTime) -> bool {
        if matches!(self.tcp.ca_state, CaState::Recovery | CaState::Loss) {
            return false;
        }
        if self
            .last_send()
            .is_none_or(|t| now.saturating_sub(t) > MAX_DEFER)
        {
            return false;
        }
        let cwnd = u64::from(self.tcp.cwnd);
        let quota = cwnd.saturating_sub(self.in_flight());
        if quota >= u64::from(tso_segs(&self.cc, &self.tcp)) || quota >= cwnd / TSO_WIN_DIVISOR {
            return false;
        }
        if self.packets_out() == 0 {
            return false;
        }
        // The oldest outstanding segment's ACK is still more than half an srtt away.
        let head_sent = self.seg(self.snd_una).tx_time;
        now.saturating_sub(head_sent) >= SimTime(self.rtt.srtt().0 / 2)
    }

    /// `transmit` under GSO: add `pkt` to the aggregate being built, closing the previous
    /// one first if `pkt` does not continue it; a full aggregate leaves at once.
    pub(super) fn gso_add(&mut self, now: SimTime, pkt: Packet, io: &mut Io) {
        if let Some(last) = self.agg.last() {
            if last.seg + 1 != pkt.seg {
                self.gso_flush(now, io);
            }
        }
        if self.agg.is_empty() {
            self.agg_goal = tso_segs(&self.cc, &self.tcp);
        }
        self.agg.push(pkt);
        if self.agg.len() as u32 >= self.agg_goal {
            self.gso_flush(now, io);
        }
    }

    /// Hand the aggregate being built to the host's send path, its first segment marked
    /// with its size in segments; the rest travel right behind it.
    pub(super) fn gso_flush(&mut self, now: SimTime, io: &mut Io) {
        let n = self.agg.len() as u32;
        for (k, mut pkt) in self.agg.drain(..).enumerate() {
            if k == 0 {
                pkt.agg = n;
                io.fwd
                    .push(io.q, now + io.fwd_delay, pkt, Ev::FwdArrive(io.line));
            } else {
                // The host's send jitter delays the aggregate, not each segment.
                pkt.agg = 0;
                io.fwd.push_behind(pkt);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS20: SimTime = SimTime::from_millis(20);

    /// Bytes per second of a rate in bit/s.
    fn bps(bits: u64) -> u64 {
        bits / 8
    }

    #[test]
    fn autosize_is_one_ms_of_the_pacing_rate_in_whole_segments() {
        // 100 Mbit/s: 12.5 MB/s >> 10 = 12 207 B = 8 segments of 1448 B (20 ms: no bonus,
        // 20 000 µs >> 9 = 39 ≥ 32).
        assert_eq!(tso_autosize(bps(100_000_000), MS20, 1448), 8);
        // 500 Mbit/s: 61 035 B → 42 segments.
        assert_eq!(tso_autosize(bps(500_000_000), MS20, 1448), 42);
    }

    #[test]
    fn autosize_is_at_most_64_kb_and_at_least_two_segments() {
        // 10 Gbit/s: 1.22 MB per ms, capped at 65 536 − 1 − 320 = 65 215 B → 45 × 1448 B.
        assert_eq!(tso_autosize(bps(10_000_000_000), MS20, 1448), 45);
        // No rate yet (Linux starts unbounded): the cap too.
        assert_eq!(tso_autosize(0, MS20, 1448), 45);
        // With a 1548-byte MSS (the labs' 1600-byte MTU): 42.
        assert_eq!(tso_autosize(bps(10_000_000_000), MS20, 1548), 42);
        // 10 Mbit/s: 1 220 B < 1 MSS → tcp_min_tso_segs = 2.
        assert_eq!(tso_autosize(bps(10_000_000), MS20, 1448), 2);
    }

    #[test]
    fn autosize_adds_the_small_rtt_bonus() {
        // min RTT 1 ms: 1000 µs >> 9 = 1, so + 65 215 >> 1 = 32 607 B on top of 100 Mbit/s's
        // 12 207 B: 44 814 B = 30 segments.
        assert_eq!(
            tso_autosize(bps(100_000_000), SimTime::from_millis(1), 1448),
            30
        );
        // min RTT 100 µs (shift 0): the whole 64 KB.
        assert_eq!(
            tso_autosize(bps(10_000_000), SimTime::from_micros(100), 1448),
            45
        );
    }
}
