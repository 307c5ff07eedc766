//! RACK-TLP loss detection for SACK connections (RFC 8985), as Linux does it by default
//! (`net.ipv4.tcp_recovery = 1`, `tcp_early_retrans = 3`; `tcp_recovery.c`,
//! `tcp_send_loss_probe`):
//!
//! - RACK (§6): remember the send time of the most recently sent segment that was
//!   delivered (`rack.mstamp`) and its RTT. An outstanding segment sent before it is lost
//!   once `now ≥ its send time + rack.rtt + reo_wnd`; otherwise a reordering timer waits for
//!   the remaining time. Lost retransmissions are found the same way.
//! - reo_wnd (Linux `tcp_rack_reo_wnd`, no reordering ever seen in the simulator): 0 in
//!   Recovery/Loss or once DupThresh = 3 segments are SACKed; otherwise min_rtt/4 (at most
//!   SRTT), so one or two dupACKs still lead to recovery after a quarter RTT.
//! - TLP (§7): in the Open/CWR states, a probe timeout PTO = 2·SRTT (+ 200 ms when one
//!   segment is out — the delayed-ACK allowance — else + 2 ms), at most the RTO, sends one
//!   new segment, or retransmits the last one, to elicit the SACK that lets RACK repair a
//!   tail loss without an RTO. If the probe itself repaired a loss, cwnd is reduced
//!   through a CWR episode (`tcp_process_tlp_ack`).

#[cfg(test)]
use super::tests;
use super::*;

/// Linux TCP_TIMEOUT_MIN (2 jiffies at HZ=1000), added to the reordering and probe timers.
const TIMEOUT_MIN: SimTime = SimTime::from_millis(2);

#[derive(Clone, Debug, Default)]
pub(super) struct Rack {
    /// Send time and end (segment + 1) of the most recently sent delivered segment.
    mstamp: SimTime,
    end_seq: u64,
    rtt: SimTime,
    valid: bool,
    /// A delivery advanced the state since the last detection.
    advanced: bool,
    /// `RackQueues` holds entries: kept here, with the state every ACK reads, so that an
    /// ACK finding both queues empty does not read them (issue 13: a cache line less per
    /// ACK at 10,000 flows). Set wherever the queues change.
    queued: bool,
    /// Linux's `tsorted_sent_queue` holds every transmission (send time, segment), sorted by
    /// send time then segment. An entry stands for a detection candidate while its segment
    /// is outstanding, last sent at that time, not SACKed and not waiting for its
    /// retransmission; entries that no longer do are dropped when detection reaches them
    /// (each once), so detection costs amortised O(1) per ACK instead of a window walk.
    ///
    /// Here that queue is three sorted parts, whose union it is (detection's outcome does
    /// not depend on the order in which it meets the candidates):
    ///
    /// - first transmissions from segment `fresh` on, which need no entries: new data goes
    ///   out in sequence order, so segments `fresh..snd_nxt` sent once are sorted already,
    ///   each standing for (its send time, itself) until it is retransmitted;
    /// - `held`: first transmissions below `fresh` that a detection walked past while they
    ///   were still within their reordering window;
    /// - `resent`: retransmissions.
    ///
    /// (`held` and `resent` are `RackQueues`, a field of the sender of their own, apart
    /// from the hot state.)
    fresh: u64,
}

/// The two queued parts of RACK's time-ordered queue (see `Rack`): rarely non-empty, so
/// kept with the sender's cold fields; `Rack::queued` says whether they hold anything.
#[derive(Clone, Debug, Default)]
pub(super) struct RackQueues {
    held: VecDeque<(SimTime, u64)>,
    resent: VecDeque<(SimTime, u64)>,
}

impl RackQueues {
    fn any(&self) -> bool {
        !(self.held.is_empty() && self.resent.is_empty())
    }
}

impl Rack {
    /// `tcp_rack_advance` (see `Sender::rack_advance`), given the connection's min RTT.
    pub(super) fn advance(
        &mut self,
        min_rtt: SimTime,
        now: SimTime,
        seg: u64,
        tx: SimTime,
        ever_retrans: bool,
    ) {
        let rtt = now.saturating_sub(tx);
        // An ACK of a retransmitted segment faster than min_rtt acknowledges the original.
        if ever_retrans && rtt < min_rtt {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if !self.valid || sent_after(tx, seg + 1, self.mstamp, self.end_seq) {
            self.mstamp = tx;
            self.end_seq = seg + 1;
            self.valid = true;
        }
    }

    /// Everything but the queue, for tests to compare.
    #[cfg(test)]
    pub(super) fn marks(&self) -> (SimTime, u64, SimTime, bool, bool) {
        (
            self.mstamp,
            self.end_seq,
            self.rtt,
            self.valid,
            self.advanced,
        )
    }
}

/// `tcp_skb_sent_after`: was (t1, seq1) sent after (t2, seq2)?
fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Sender {
    /// Segment `seg` was retransmitted at `now`: queue it for RACK (SACK flows only; a
    /// first transmission needs no entry, see `Rack::fresh`).
    #[inline]
    pub(super) fn rack_resent(&mut self, now: SimTime, seg: u64) {
        if !self.p.sack {
            return;
        }
        let q = &self.rack_q.resent;
        let in_order = !matches!(q.back(), Some(&last) if last > (now, seg));
        if in_order && q.len() as u64 <= 2 * self.packets_out() + 64 {
            self.rack_q.resent.push_back((now, seg));
        } else {
            self.rack_resent_slow(now, seg);
        }
        self.rack.queued = true;
    }

    /// `rack_resent` when the queue outgrew the window (detection drops the stale head on
    /// nearly every ACK, but may not run for a while) or the entry goes before the tail.
    #[cold]
    fn rack_resent_slow(&mut self, now: SimTime, seg: u64) {
        while let Some(&(tx, i)) = self.rack_q.resent.front() {
            if self.rack_candidate(tx, i) {
                break;
            }
            self.rack_q.resent.pop_front();
        }
        // Sorted by (send time, segment), as `sent_after` orders them. Retransmissions come
        // in time order; only one sent at the same instant as a later segment's goes
        // further back.
        let q = &mut self.rack_q.resent;
        let e = (now, seg);
        let mut at = q.len();
        while at > 0 && q[at - 1] > e {
            at -= 1;
        }
        q.insert(at, e);
    }

    /// Does the queue entry (`tx`, `i`) stand for a segment RACK must still watch?
    fn rack_candidate(&self, tx: SimTime, i: u64) -> bool {
        if i < self.snd_una {
            return false; // cumulatively acknowledged
        }
        let s = self.seg(i);
        let f = s.flags;
        s.tx_time == tx && f & SACKED == 0 && (f & LOST == 0 || f & RETRANS != 0)
    }

    /// Does first transmission `i` (at least `snd_una`, below `snd_nxt`) stand for a
    /// candidate? Sent once (so its entry's send time is the segment's), not SACKed, not
    /// marked lost: `rack_candidate` for the entry it stands for.
    #[inline]
    fn rack_fresh_candidate(&self, i: u64) -> bool {
        self.seg(i).flags & (SACKED | LOST | EVER_RETRANS) == 0
    }

    /// `tcp_mark_skb_lost` for segment `i` (outstanding, not SACKED).
    fn rack_mark_seg_lost(&mut self, i: u64) {
        let s = self.seg_mut(i);
        let f = s.flags;
        s.flags = (f & !RETRANS) | LOST;
        if f & RETRANS != 0 {
            self.retrans_out -= 1;
        }
        if f & LOST == 0 {
            self.lost_out += 1;
        }
        self.tcp.lost += 1;
        self.retx_hint = self.retx_hint.min(i);
    }

    /// `tcp_rack_advance`: segment `seg`, last sent at `tx`, was just delivered.
    pub(super) fn rack_advance(&mut self, now: SimTime, seg: u64, tx: SimTime, ever_retrans: bool) {
        self.rack
            .advance(self.tcp.min_rtt, now, seg, tx, ever_retrans);
    }

    fn rack_reo_wnd(&self) -> SimTime {
        if self.tcp.ca_state >= CaState::Recovery || self.sacked_out >= DUPTHRESH {
            return SimTime::ZERO;
        }
        SimTime(self.tcp.min_rtt.0 / 4).min(self.rtt.srtt())
    }

    /// `tcp_rack_detect_loss`: mark what RACK deems lost; returns the longest remaining
    /// wait of the segments not yet deemed lost. Its common case (nothing sent before the
    /// RACK segment is still outstanding) is inline; tests always take the checked path.
    #[inline]
    fn rack_detect_loss(&mut self, now: SimTime) -> Option<SimTime> {
        if !self.rack.valid {
            return None;
        }
        #[cfg(not(test))]
        if self.rack_front_sent_after() {
            return None;
        }
        self.rack_detect_walk(now)
    }

    /// `rack_detect_loss` beyond its common case.
    #[inline(never)]
    fn rack_detect_walk(&mut self, now: SimTime) -> Option<SimTime> {
        let reo = self.rack_reo_wnd();
        #[cfg(test)]
        let expected = self.rack_detect_reference(now, reo);
        #[cfg(test)]
        let mut marked = Vec::new();
        let wait = if self.rack_front_sent_after() {
            0
        } else {
            // Each queue taken out of the sender while it is walked; `held` before the
            // first transmissions, which may add to it.
            let mut resent = std::mem::take(&mut self.rack_q.resent);
            let wait = self.rack_walk(
                &mut resent,
                now,
                reo,
                #[cfg(test)]
                &mut marked,
            );
            self.rack_q.resent = resent;
            let mut held = std::mem::take(&mut self.rack_q.held);
            let wait = wait.max(self.rack_walk(
                &mut held,
                now,
                reo,
                #[cfg(test)]
                &mut marked,
            ));
            self.rack_q.held = held;
            wait.max(self.rack_walk_fresh(
                now,
                reo,
                #[cfg(test)]
                &mut marked,
            ))
        };
        self.rack.queued = self.rack_q.any();
        #[cfg(test)]
        {
            marked.sort_unstable();
            assert_eq!(
                (marked, wait),
                expected,
                "RACK queue disagrees with the window walk"
            );
            tests::RACK_CHECKS.with(|c| c.set(c.get() + 1));
        }
        (wait > 0).then_some(SimTime(wait))
    }

    /// The start of every detection, which is all of it on most ACKs: drop the entries at
    /// the front of each part of the queue that are no longer candidates; true when no
    /// candidate is left or the oldest one of each part was sent after the RACK segment
    /// (so are all later ones: nothing is lost and nothing waits).
    #[inline]
    fn rack_front_sent_after(&mut self) -> bool {
        let (mstamp, end_seq) = (self.rack.mstamp, self.rack.end_seq);
        let mut i = self.rack.fresh.max(self.snd_una);
        while i < self.snd_nxt && !self.rack_fresh_candidate(i) {
            i += 1;
        }
        self.rack.fresh = i;
        if i < self.snd_nxt && !sent_after(self.seg(i).tx_time, i + 1, mstamp, end_seq) {
            return false;
        }
        !self.rack.queued || self.rack_queues_front_sent_after()
    }

    /// `rack_front_sent_after` for `held` and `resent`, when one is not empty.
    #[inline(never)]
    fn rack_queues_front_sent_after(&mut self) -> bool {
        let after =
            self.rack_queue_front_sent_after(true) && self.rack_queue_front_sent_after(false);
        self.rack.queued = self.rack_q.any();
        after
    }

    /// `rack_front_sent_after` for `held` (`true`) or `resent`.
    #[inline]
    fn rack_queue_front_sent_after(&mut self, held: bool) -> bool {
        let (mstamp, end_seq) = (self.rack.mstamp, self.rack.end_seq);
        loop {
            let q = if held {
                &self.rack_q.held
            } else {
                &self.rack_q.resent
            };
            let Some(&(tx, i)) = q.front() else {
                return true;
            };
            if self.rack_candidate(tx, i) {
                return sent_after(tx, i + 1, mstamp, end_seq);
            }
            if held {
                self.rack_q.held.pop_front();
            } else {
                self.rack_q.resent.pop_front();
            }
        }
    }

    /// The rest of the detection, for one sorted part of the queue (`held` or `resent`,
    /// taken out of the sender): walks it from its oldest entry up to the first candidate
    /// sent after the RACK segment (all later ones are later still). Entries that are no
    /// longer candidates, or are marked lost now, leave the queue; the others walked (still
    /// within their reordering window) are kept, in order. Returns the longest wait, in ns.
    fn rack_walk(
        &mut self,
        q: &mut VecDeque<(SimTime, u64)>,
        now: SimTime,
        reo: SimTime,
        #[cfg(test)] marked: &mut Vec<u64>,
    ) -> u64 {
        let (mstamp, end_seq, rtt) = (self.rack.mstamp, self.rack.end_seq, self.rack.rtt);
        let mut wait = 0u64;
        // [0, kept): entries walked and kept; [kept, r): entries to drop; r: next to look at.
        // While nothing is kept, dropped entries leave from the front at once.
        let (mut kept, mut r) = (0usize, 0usize);
        while r < q.len() {
            let (tx, i) = q[r];
            let keep = if !self.rack_candidate(tx, i) {
                false // delivered, resent since, or already waiting for its retransmission
            } else if sent_after(tx, i + 1, mstamp, end_seq) {
                break;
            } else {
                match self.rack_expire(
                    tx,
                    i,
                    rtt + reo,
                    now,
                    #[cfg(test)]
                    marked,
                ) {
                    Some(left) => {
                        wait = wait.max(left);
                        true
                    }
                    None => false,
                }
            };
            if keep {
                q[kept] = (tx, i);
                kept += 1;
                r += 1;
            } else if r == 0 {
                q.pop_front();
            } else {
                r += 1;
            }
        }
        if r > kept {
            q.drain(kept..r);
        }
        wait
    }

    /// A candidate, segment `i` sent at `tx`, whose reordering window (`window` after it was
    /// sent) has passed by `now` is marked lost (`None`); otherwise returns the ns it has
    /// left.
    #[inline(always)]
    fn rack_expire(
        &mut self,
        tx: SimTime,
        i: u64,
        window: SimTime,
        now: SimTime,
        #[cfg(test)] marked: &mut Vec<u64>,
    ) -> Option<u64> {
        let deadline = tx + window;
        if deadline <= now {
            self.rack_mark_seg_lost(i);
            #[cfg(test)]
            marked.push(i);
            return None;
        }
        Some((deadline - now).0)
    }

    /// `rack_walk` for the first transmissions from `fresh` on: those still within their
    /// reordering window move to `held` (in order: they follow every entry there), so that
    /// `fresh` passes each segment once.
    fn rack_walk_fresh(
        &mut self,
        now: SimTime,
        reo: SimTime,
        #[cfg(test)] marked: &mut Vec<u64>,
    ) -> u64 {
        let (mstamp, end_seq, rtt) = (self.rack.mstamp, self.rack.end_seq, self.rack.rtt);
        let mut wait = 0u64;
        let mut i = self.rack.fresh.max(self.snd_una);
        while i < self.snd_nxt {
            if self.rack_fresh_candidate(i) {
                let tx = self.seg(i).tx_time;
                if sent_after(tx, i + 1, mstamp, end_seq) {
                    break;
                }
                let left = self.rack_expire(
                    tx,
                    i,
                    rtt + reo,
                    now,
                    #[cfg(test)]
                    marked,
                );
                if let Some(left) = left {
                    wait = wait.max(left);
                    self.rack_q.held.push_back((tx, i));
                    #[cfg(test)]
                    tests::HELD.with(|c| c.set(c.get() + 1));
                }
            }
            i += 1;
        }
        self.rack.fresh = i;
        wait
    }

    /// The window walk the queue replaced (seq order from `snd_una`, every outstanding
    /// segment): which segments it would mark lost, and the longest wait. Tests check the
    /// queue against it on every detection.
    #[cfg(test)]
    fn rack_detect_reference(&self, now: SimTime, reo: SimTime) -> (Vec<u64>, u64) {
        let (mut lost, mut wait) = (Vec::new(), 0u64);
        for i in self.snd_una..self.snd_nxt {
            let s = self.seg(i);
            let f = s.flags;
            if f & SACKED != 0 || (f & LOST != 0 && f & RETRANS == 0) {
                continue;
            }
            if sent_after(s.tx_time, i + 1, self.rack.mstamp, self.rack.end_seq) {
                continue;
            }
            let deadline = s.tx_time + self.rack.rtt + reo;
            if deadline <= now {
                lost.push(i);
            } else {
                wait = wait.max((deadline - now).0);
            }
        }
        (lost, wait)
    }

    /// `tcp_rack_mark_lost`: detection after an ACK that delivered something.
    pub(super) fn rack_mark_lost(&mut self, now: SimTime, io: &mut Io) {
        if !self.rack.advanced {
            return;
        }
        self.rack.advanced = false;
        match self.rack_detect_loss(now) {
            Some(w) => self
                .reo_timer
                .arm(io.q, now + w + TIMEOUT_MIN, self.p.id, TimerKind::Reo),
            None => self.reo_timer.cancel(),
        }
    }

    /// The reordering timer fired (`tcp_rack_reo_timeout`).
    pub fn on_reo_timeout(&mut self, now: SimTime, io: &mut Io) {
        let prior_lost = self.lost_out;
        if let Some(w) = self.rack_detect_loss(now) {
            self.reo_timer
                .arm(io.q, now + w + TIMEOUT_MIN, self.p.id, TimerKind::Reo);
        }
        if self.lost_out > prior_lost {
            if matches!(
                self.tcp.ca_state,
                CaState::Open | CaState::Disorder | CaState::Cwr
            ) {
                self.enter_recovery(now);
                if !self.cc.has_cong_control() {
                    self.prr(1, self.lost_out - prior_lost, false);
                }
            }
            self.try_send(now, io);
        }
    }

    // ------------------------------------------------------------------ TLP
    /// `tcp_schedule_loss_probe`: arm (or disarm) the probe timer.
    #[inline(always)]
    pub(super) fn schedule_tlp(&mut self, now: SimTime, io: &mut Io) {
        let eligible = self.p.sack
            && self.packets_out() > 0
            && matches!(self.tcp.ca_state, CaState::Open | CaState::Cwr)
            && self.tlp_high_seq.is_none();
        if !eligible {
            self.tlp_timer.cancel();
            return;
        }
        let srtt = self.rtt.srtt();
        let mut pto = SimTime(2 * srtt.0)
            + if self.packets_out() == 1 {
                super::super::rtt::RTO_MIN
            } else {
                TIMEOUT_MIN
            };
        if let Some(rto_at) = self.rto_timer.deadline() {
            pto = pto.min(rto_at.saturating_sub(now));
        }
        self.tlp_timer
            .arm(io.q, now + pto, self.p.id, TimerKind::Tlp);
    }

    /// The probe timeout fired (`tcp_send_loss_probe`).
    pub fn on_tlp(&mut self, now: SimTime, io: &mut Io) {
        self.tlp_timer.cancel();
        if self.packets_out() == 0 || self.tlp_high_seq.is_some() {
            return;
        }
        if let NewData::Yes(len) = self.new_data(now) {
            self.send_new(now, len, io);
            self.tlp_retrans = false;
        } else {
            // Retransmit the last segment (not counted in retrans_out: Linux's
            // __tcp_retransmit_skb, not tcp_retransmit_skb).
            let i = self.snd_nxt - 1;
            let s = self.seg_mut(i);
            s.flags |= EVER_RETRANS;
            s.flags &= !RATE_DONE;
            s.tx_time = now;
            self.keep_snapshot(i, now);
            let len = self.seg_len(i);
            self.stats.retransmits += 1;
            self.stats.bytes_retransmitted += len as u64;
            self.rack_resent(now, i);
            self.transmit(now, i, len, io);
            self.tlp_retrans = true;
        }
        self.tlp_high_seq = Some(self.snd_nxt);
        self.rto_timer
            .arm(io.q, now + self.rtt.rto(), self.p.id, TimerKind::Rto);
    }

    /// `tcp_process_tlp_ack`: end the probe episode; if the retransmitted probe repaired a
    /// loss, reduce cwnd (a CWR episode ending at once).
    pub(super) fn process_tlp_ack(
        &mut self,
        now: SimTime,
        cum: u64,
        una_adv: bool,
        new_sack: bool,
    ) {
        let Some(h) = self.tlp_high_seq else { return };
        if cum < h {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high_seq = None;
        } else if cum > h {
            self.tlp_high_seq = None;
            self.init_cwnd_reduction(now);
            self.set_state(now, CaState::Cwr);
            self.end_cwnd_reduction(now);
            // tcp_try_keep_open
            let st = if self.sacked_out + self.lost_out > 0 || self.retrans_out > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            self.set_state(now, st);
            self.high_seq = self.snd_nxt;
        } else if !una_adv && !new_sack {
            self.tlp_high_seq = None; // a pure dupACK: the original and the probe both arrived
        }
    }
}
