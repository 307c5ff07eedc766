//! The TCP receiver, modelled on Linux (`tcp_data_queue`, `__tcp_ack_snd_check`):
//!
//! - in-order data advances `rcv_nxt` and is delivered to the application at once;
//!   out-of-order data is held in ranges and reported in SACK blocks kept as Linux keeps
//!   them (`selective_acks`, `tcp_sack_new_ofo_skb`): at most 4, most recently changed
//!   first, the first 3 sent (RFC 2018 §4; timestamps leave room for 3);
//! - delayed ACKs (RFC 5681 §4.2, RFC 1122): an ACK for at least every second full-sized
//!   segment, otherwise after the delayed-ACK timeout (Linux's minimum ATO, 40 ms);
//! - an immediate ACK when a segment fills a hole (RFC 5681 §4.2) and for duplicate
//!   segments (Linux: DSACK + quickack);
//! - out-of-order segments: the first three dupACKs for a given `rcv_nxt` go at once,
//!   later ones are compressed (Linux ≥ 4.19 `tcp_comp_sack_*`): one SACK after
//!   min(RTT/20, 1 ms) or after 44 held back;
//! - quickack at connection start: Linux ACKs the first segments one by one
//!   (`tcp_incr_quickack`: up to TCP_MAX_QUICKACKS = 16).
//!
//! Not modelled: DSACK blocks, receive-buffer autotuning (see `rwnd_from_rmem` in
//! `sim.rs`).

use crate::packet::{Ack, Packet, MAX_SACK_BLOCKS};
use crate::units::SimTime;
use std::collections::VecDeque;
use std::num::NonZeroU64;

/// Linux TCP_DELACK_MIN (HZ/25).
pub const DELACK_TIMEOUT: SimTime = SimTime::from_millis(40);
/// Linux TCP_MAX_QUICKACKS.
pub const MAX_QUICKACKS: u32 = 16;
/// Linux TCP_NUM_SACKS: SACK blocks the receiver remembers.
const NUM_SACKS: usize = 4;
/// Linux `tcp_comp_sack_nr` and `tcp_comp_sack_delay_ns` defaults; dupACKs sent before
/// compressing (TCP_FASTRETRANS_THRESH).
pub const COMP_SACK_NR: u32 = 44;
pub const COMP_SACK_DELAY: SimTime = SimTime::from_millis(1);
const FASTRETRANS_THRESH: u32 = 3;

/// Field order (`repr(C)`): what an in-order segment and its ACK touch first, together
/// (issue 13: with 10,000 connections each of those fields is otherwise a cache miss of its
/// own), the out-of-order and compression state after it, the flushed ACK last. Whether
/// there are out-of-order ranges or SACK blocks is asked of a flag and a count beside the
/// hot fields (`has_ooo`, `nsacks`), not of the containers: an in-order segment and its
/// ACK then skip them (session 12: −0.16 % instructions at two flows; at 10,000 flows
/// the containers' line is still read, the compiler loading their headers early — moving
/// them to the struct's end cost more misses than it saved).
#[derive(Debug)]
#[repr(C)]
pub struct Receiver {
    /// Next segment expected.
    pub rcv_nxt: u64,
    /// RFC 7323 §4.3: TS.Recent and Last.ACK.sent (as a segment number).
    ts_recent: SimTime,
    last_ack_sent: u64,
    /// Payload bytes delivered in order to the application.
    pub delivered_bytes: u64,
    /// Short final segment, once seen: its number + 1 (a niche for the `None`: with
    /// `short_len` 12 bytes instead of 16, so the fields up to `short_len` take 64 bytes
    /// and `ooo` starts in the Flow's second cache line, not the third: −0.8 % first-level
    /// misses at 10,000 flows, session 12) and its payload length.
    short_end: Option<NonZeroU64>,
    mss: u32,
    /// Full-sized segments received since the last ACK.
    unacked: u32,
    quickacks: u32,
    // SACK compression (Linux compressed_ack, compressed_ack_rcv_nxt, dup_ack_counter).
    compressed: u32,
    /// SACK was negotiated (Linux compresses only SACK dupACKs).
    sack: bool,
    /// `flush` holds an ACK. Asked after every segment: a byte here, in a line a segment
    /// reads anyway, instead of `flush`'s own tag, 170 bytes further on (issue 13: a cache
    /// line of its own at every delivery with 10,000 connections).
    has_flush: bool,
    /// `ooo` is not empty.
    has_ooo: bool,
    /// `sacks.len()`.
    nsacks: u8,
    short_len: u32,
    /// Out-of-order ranges above `rcv_nxt`, sorted, disjoint, not adjacent: found by
    /// binary search; the lowest leaves from the front in O(1).
    ooo: VecDeque<(u64, u64)>,
    /// SACK blocks in recency order (Linux `selective_acks`), at most NUM_SACKS.
    sacks: Vec<(u64, u64)>,
    comp_rcv_nxt: u64,
    dup_ack_counter: u32,
    last_ooo: u64,
    /// The path's RTT as the receiver estimates it, for the compression delay.
    rtt: SimTime,
    /// Duplicate segments received (already delivered or already held).
    pub dup_segments: u64,
    /// An ACK to send before the current one (a compressed ACK flushed because its SACK
    /// information was about to be forgotten).
    flush: Option<Ack>,
}

/// What the receiver wants done after a segment arrived. An explicit tag (`repr(u8)`):
/// with the niche of `Ack`'s flags as its tag, matching the decision per segment took a
/// dozen instructions (session 11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum AckDecision {
    Now(Ack),
    /// Arm the delayed-ACK timer (if not armed).
    Delay,
    /// Arm the SACK-compression timer for this delay (if not armed).
    Compress(SimTime),
}

impl Receiver {
    /// A receiver on a path with round-trip time `rtt` (Linux measures it with timestamps;
    /// the simulator gives the base RTT).
    pub fn with_rtt(mss: u32, rtt: SimTime, sack: bool) -> Receiver {
        Receiver {
            rtt,
            sack,
            ..Receiver::new(mss)
        }
    }

    pub fn new(mss: u32) -> Receiver {
        Receiver {
            mss,
            rcv_nxt: 0,
            ooo: VecDeque::with_capacity(8),
            short_end: None,
            short_len: 0,
            delivered_bytes: 0,
            unacked: 0,
            quickacks: MAX_QUICKACKS,
            dup_segments: 0,
            ts_recent: SimTime::ZERO,
            last_ack_sent: 0,
            compressed: 0,
            comp_rcv_nxt: u64::MAX,
            dup_ack_counter: 0,
            last_ooo: 0,
            sacks: Vec::with_capacity(NUM_SACKS),
            has_flush: false,
            has_ooo: false,
            nsacks: 0,
            flush: None,
            rtt: SimTime::from_millis(100),
            sack: true,
        }
    }

    fn bytes_of(&self, from: u64, to: u64) -> u64 {
        let mut b = (to - from) * self.mss as u64;
        if let Some(e) = self.short_end {
            let s = e.get() - 1;
            if s >= from && s < to {
                b -= (self.mss - self.short_len) as u64;
            }
        }
        b
    }

    /// A data segment arrived. Returns the ACK decision and the payload bytes newly
    /// delivered in order.
    #[inline(always)]
    pub fn on_segment(&mut self, pkt: &Packet) -> (AckDecision, u64) {
        let s = pkt.seg;
        // RFC 7323 §4.3 (2): TS.Recent follows segments at or left of the last ACK sent, so
        // an ACK echoes the earliest unacknowledged in-order segment, and the one that
        // fills a hole (a retransmission) — not the out-of-order ones.
        if s <= self.last_ack_sent {
            self.ts_recent = pkt.ts;
        }
        if pkt.len < self.mss {
            self.short_end = NonZeroU64::new(s + 1);
            self.short_len = pkt.len;
        }
        // The held ranges all lie above rcv_nxt, so the next expected segment needs no look.
        if s < self.rcv_nxt || (s > self.rcv_nxt && self.holds(s)) {
            self.dup_segments += 1;
            self.unacked = 0;
            return (AckDecision::Now(self.ack(s, false)), 0);
        }
        if s == self.rcv_nxt {
            let had_ooo = self.has_ooo;
            let mut end = s + 1;
            if had_ooo {
                if let Some(&(a, b)) = self.ooo.front() {
                    if a == end {
                        end = b;
                        self.ooo.pop_front();
                        self.has_ooo = !self.ooo.is_empty();
                    }
                }
            }
            let bytes = self.bytes_of(self.rcv_nxt, end);
            self.rcv_nxt = end;
            // tcp_sack_remove: blocks now below rcv_nxt are gone.
            let nxt = self.rcv_nxt;
            if self.nsacks > 0 {
                self.sacks.retain(|&(_, b)| b > nxt);
                self.nsacks = self.sacks.len() as u8;
            }
            self.delivered_bytes += bytes;
            if pkt.len >= self.mss {
                self.unacked += 1;
            }
            // Immediate ACK: out-of-order data was held (hole filled or still open), quickack
            // mode, or a second full segment since the last ACK.
            if had_ooo || self.quickacks > 0 || self.unacked >= 2 {
                self.quickacks = self.quickacks.saturating_sub(1);
                self.unacked = 0;
                return (AckDecision::Now(self.ack(s, false)), bytes);
            }
            return (AckDecision::Delay, bytes);
        }
        // Out of order: insert into the ranges, merging neighbours.
        let i = self.ooo.partition_point(|&(_, b)| b < s);
        let merges_left = i < self.ooo.len() && self.ooo[i].1 == s;
        let merges_right_idx = if merges_left { i + 1 } else { i };
        let merges_right =
            merges_right_idx < self.ooo.len() && self.ooo[merges_right_idx].0 == s + 1;
        match (merges_left, merges_right) {
            (true, true) => {
                self.ooo[i].1 = self.ooo[i + 1].1;
                self.ooo.remove(i + 1);
            }
            (true, false) => self.ooo[i].1 = s + 1,
            (false, true) => self.ooo[i].0 = s,
            (false, false) => self.ooo.insert(i, (s, s + 1)),
        }
        self.has_ooo = true;
        self.last_ooo = s;
        self.unacked = 0;
        self.sack_new_ofo(s);
        // Linux __tcp_ack_snd_check with out-of-order data queued.
        if !self.sack || self.compressed >= COMP_SACK_NR {
            return (AckDecision::Now(self.ack(s, false)), 0);
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return (AckDecision::Now(self.ack(s, false)), 0);
        }
        self.compressed += 1;
        (
            AckDecision::Compress(COMP_SACK_DELAY.min(SimTime(self.rtt.0 / 20))),
            0,
        )
    }

    /// Linux `tcp_sack_new_ofo_skb`: extend the block `s` touches (and move it to the front,
    /// merging blocks it now reaches), or start a new one at the front, forgetting the
    /// oldest when 4 are held — after flushing a compressed ACK that still reports it.
    fn sack_new_ofo(&mut self, s: u64) {
        if let Some(i) = self.sacks.iter().position(|&(a, b)| s + 1 >= a && s <= b) {
            let (a, b) = self.sacks.remove(i);
            let (mut a, mut b) = (a.min(s), b.max(s + 1));
            self.sacks.retain(|&(x, y)| {
                let touches = x <= b && a <= y;
                if touches {
                    a = a.min(x);
                    b = b.max(y);
                }
                !touches
            });
            self.sacks.insert(0, (a, b));
            self.nsacks = self.sacks.len() as u8;
            return;
        }
        if self.sacks.len() >= NUM_SACKS {
            if self.sack && self.compressed > FASTRETRANS_THRESH {
                let trigger = self.last_ooo;
                self.flush = Some(self.ack(trigger, false));
                self.has_flush = true;
            }
            self.sacks.pop();
        }
        self.sacks.insert(0, (s, s + 1));
        self.nsacks = self.sacks.len() as u8;
    }

    /// A compressed ACK that must leave before the one this segment causes.
    #[inline(always)]
    pub fn take_flush(&mut self) -> Option<Ack> {
        // Asked after every segment and mostly empty: look before taking (a `take` reads
        // and rewrites the whole 72-byte slot, session 11), at the flag (`has_flush`).
        if !self.has_flush {
            return None;
        }
        self.has_flush = false;
        self.flush.take()
    }

    /// The SACK-compression timer fired: the ACK to send, if any was held back.
    pub fn on_comp_timeout(&mut self) -> Option<Ack> {
        (self.compressed > 0).then(|| self.ack(self.last_ooo, false))
    }

    /// The ACK the receiver would send now; `trigger` is the segment that caused it.
    pub fn ack(&mut self, trigger: u64, delayed: bool) -> Ack {
        self.last_ack_sent = self.rcv_nxt;
        self.compressed = 0;
        let mut a = Ack {
            cum: self.rcv_nxt,
            delayed,
            tsecr: self.ts_recent,
            ..Ack::default()
        };
        let _ = trigger; // the most recently changed block is first in `sacks`
        debug_assert_eq!(self.nsacks as usize, self.sacks.len());
        if self.nsacks > 0 {
            for &r in self.sacks.iter().take(MAX_SACK_BLOCKS) {
                a.sack[a.nsack as usize] = r;
                a.nsack += 1;
            }
        }
        a
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack_timeout(&mut self) -> Ack {
        self.unacked = 0;
        self.ack(u64::MAX, true)
    }

    pub fn has_pending_ack(&self) -> bool {
        self.unacked > 0
    }

    pub fn ooo_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ooo.iter().copied()
    }

    /// Is segment `s` (above `rcv_nxt`) held out of order?
    fn holds(&self, s: u64) -> bool {
        debug_assert_eq!(self.has_ooo, !self.ooo.is_empty());
        if !self.has_ooo {
            return false;
        }
        let k = self.ooo.partition_point(|&(_, b)| b <= s);
        k < self.ooo.len() && self.ooo[k].0 <= s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(s: u64) -> Packet {
        Packet {
            flow: 0,
            seg: s,
            len: 1000,
            wire: 1052,
            ts: SimTime(s),
            agg: 1,
        }
    }

    /// The out-of-order store against a plain set: segments arriving in a scrambled order
    /// (a multiplicative permutation, with repeats) leave exactly the maximal runs of the
    /// set above `rcv_nxt`, and repeats count as duplicates.
    #[test]
    fn ooo_store_matches_a_set_of_segments() {
        let mut r = Receiver::with_rtt(1000, SimTime::from_millis(10), true);
        let mut held = std::collections::BTreeSet::new();
        let mut dups = 0;
        for k in 0..3000u64 {
            let s = 1 + (k * 7919) % 2000; // segment 0 never arrives: everything stays held
            if !held.insert(s) {
                dups += 1;
            }
            r.on_segment(&seg(s));
            let mut runs: Vec<(u64, u64)> = Vec::new();
            for &x in &held {
                match runs.last_mut() {
                    Some(last) if last.1 == x => last.1 = x + 1,
                    _ => runs.push((x, x + 1)),
                }
            }
            assert_eq!(
                r.ooo_ranges().collect::<Vec<_>>(),
                runs,
                "after segment {s}"
            );
        }
        assert_eq!(r.dup_segments, dups);
        assert_eq!(r.rcv_nxt, 0);
        r.on_segment(&seg(0));
        assert_eq!(r.rcv_nxt, 2001);
        assert_eq!(r.ooo_ranges().count(), 0);
    }

    fn rx_after_quickacks() -> Receiver {
        let mut r = Receiver::new(1000);
        r.quickacks = 0;
        r
    }

    #[test]
    fn quickack_acks_each_of_the_first_segments() {
        let mut r = Receiver::new(1000);
        for s in 0..MAX_QUICKACKS as u64 {
            assert!(matches!(r.on_segment(&seg(s)).0, AckDecision::Now(_)));
        }
        assert_eq!(r.on_segment(&seg(16)).0, AckDecision::Delay);
    }

    #[test]
    fn every_second_full_segment_is_acked() {
        let mut r = rx_after_quickacks();
        assert_eq!(r.on_segment(&seg(0)), (AckDecision::Delay, 1000));
        let (d, b) = r.on_segment(&seg(1));
        assert_eq!(b, 1000);
        assert!(matches!(
            d,
            AckDecision::Now(Ack {
                cum: 2,
                nsack: 0,
                ..
            })
        ));
        assert_eq!(r.on_segment(&seg(2)).0, AckDecision::Delay);
        assert!(r.has_pending_ack());
        let a = r.on_delack_timeout();
        assert_eq!((a.cum, a.delayed), (3, true));
    }

    #[test]
    fn out_of_order_gets_immediate_ack_with_sack_blocks_newest_first() {
        let mut r = rx_after_quickacks();
        r.on_segment(&seg(0));
        let AckDecision::Now(a) = r.on_segment(&seg(2)).0 else {
            panic!()
        };
        assert_eq!((a.cum, a.blocks()), (1, &[(2, 3)][..]));
        r.on_segment(&seg(5));
        let AckDecision::Now(a) = r.on_segment(&seg(3)).0 else {
            panic!()
        };
        assert_eq!(a.blocks(), &[(2, 4), (5, 6)][..]);
        // Filling the first hole delivers 1..4 and ACKs at once.
        let (d, b) = r.on_segment(&seg(1));
        assert_eq!(b, 3000);
        let AckDecision::Now(a) = d else { panic!() };
        assert_eq!((a.cum, a.blocks()), (4, &[(5, 6)][..]));
        let (d, b) = r.on_segment(&seg(4));
        assert_eq!(b, 2000);
        assert!(matches!(
            d,
            AckDecision::Now(Ack {
                cum: 6,
                nsack: 0,
                ..
            })
        ));
        assert_eq!(r.delivered_bytes, 6000);
    }

    #[test]
    fn duplicates_are_counted_not_delivered_twice() {
        let mut r = rx_after_quickacks();
        r.on_segment(&seg(0));
        r.on_segment(&seg(2));
        let (d, b) = r.on_segment(&seg(0));
        assert_eq!(b, 0);
        assert!(matches!(d, AckDecision::Now(_)));
        let (_, b) = r.on_segment(&seg(2));
        assert_eq!(b, 0);
        assert_eq!(r.dup_segments, 2);
        assert_eq!(r.delivered_bytes, 1000);
    }

    #[test]
    fn short_final_segment_counts_its_own_length() {
        let mut r = rx_after_quickacks();
        r.on_segment(&Packet {
            flow: 0,
            seg: 1,
            len: 300,
            wire: 352,
            ts: SimTime::ZERO,
            agg: 1,
        });
        let (_, b) = r.on_segment(&seg(0));
        assert_eq!(b, 1300);
    }

    #[test]
    fn at_most_three_sack_blocks() {
        let mut r = rx_after_quickacks();
        for s in [2, 4, 6, 8, 10] {
            r.on_segment(&seg(s));
        }
        // Linux keeps the 4 most recently changed blocks and sends the first 3.
        let a = r.ack(4, false);
        assert_eq!(a.blocks(), &[(10, 11), (8, 9), (6, 7)][..]);
        // A segment extending an older block brings it to the front.
        r.on_segment(&seg(7));
        let a = r.ack(7, false);
        assert_eq!(a.blocks(), &[(6, 9), (10, 11), (4, 5)][..]);
    }

    #[test]
    fn dupacks_after_the_third_are_compressed() {
        let mut r = Receiver::with_rtt(1000, SimTime::from_millis(10), true);
        r.quickacks = 0;
        r.on_segment(&seg(0));
        for s in 2..5 {
            assert!(
                matches!(r.on_segment(&seg(s)).0, AckDecision::Now(_)),
                "dupACK {s}"
            );
        }
        // 4th and later: held back for min(RTT/20, 1 ms) = 0.5 ms.
        assert_eq!(
            r.on_segment(&seg(5)).0,
            AckDecision::Compress(SimTime::from_micros(500))
        );
        assert_eq!(
            r.on_segment(&seg(6)).0,
            AckDecision::Compress(SimTime::from_micros(500))
        );
        let a = r.on_comp_timeout().unwrap();
        assert_eq!((a.cum, a.blocks()[0]), (1, (2, 7)));
        assert_eq!(r.on_comp_timeout(), None);
        // 44 held back: the 45th goes at once.
        for s in 7..51 {
            assert!(matches!(r.on_segment(&seg(s)).0, AckDecision::Compress(_)));
        }
        assert!(matches!(r.on_segment(&seg(51)).0, AckDecision::Now(_)));
        // The hole is filled: rcv_nxt moves, an immediate ACK.
        let (d, b) = r.on_segment(&seg(1));
        assert!(matches!(d, AckDecision::Now(Ack { cum: 52, .. })));
        assert_eq!(b, 51_000);
        // Without SACK every dupACK goes at once (Linux: `!tcp_is_sack(tp)` → send now).
        let mut r = Receiver::with_rtt(1000, SimTime::from_millis(10), false);
        r.quickacks = 0;
        r.on_segment(&seg(0));
        for s in 2..60 {
            assert!(matches!(r.on_segment(&seg(s)).0, AckDecision::Now(_)));
        }
    }

    #[test]
    fn compressed_ack_is_flushed_before_its_sack_blocks_are_forgotten() {
        let mut r = Receiver::with_rtt(1000, SimTime::from_millis(10), true);
        r.quickacks = 0;
        r.on_segment(&seg(0));
        // Every other segment lost: each arrival starts a new block.
        for s in [2, 4, 6] {
            assert!(matches!(r.on_segment(&seg(s)).0, AckDecision::Now(_)));
        }
        for s in [8, 10, 12, 14] {
            assert!(matches!(r.on_segment(&seg(s)).0, AckDecision::Compress(_)));
            assert_eq!(r.take_flush(), None);
        }
        // A fifth new block would push out (8, 9), which no ACK has reported yet; Linux
        // sends the held ACK first (compressed_ack > 3).
        r.on_segment(&seg(16));
        let f = r.take_flush().expect("flushed");
        assert_eq!(f.blocks(), &[(14, 15), (12, 13), (10, 11)][..]);
    }

    #[test]
    fn timestamp_echo_follows_rfc7323() {
        let mut r = rx_after_quickacks();
        r.on_segment(&seg(0)); // delayed
        let AckDecision::Now(a) = r.on_segment(&seg(1)).0 else {
            panic!()
        };
        assert_eq!(a.tsecr, SimTime(0)); // the earlier of the two acked segments
        let AckDecision::Now(a) = r.on_segment(&seg(3)).0 else {
            panic!()
        };
        assert_eq!(a.tsecr, SimTime(0)); // out of order: TS.Recent unchanged
        let mut fill = seg(2);
        fill.ts = SimTime(99);
        let AckDecision::Now(a) = r.on_segment(&fill).0 else {
            panic!()
        };
        assert_eq!((a.cum, a.tsecr), (4, SimTime(99))); // the hole filler is echoed
    }
}
