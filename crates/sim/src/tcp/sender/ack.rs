//! ACK processing, loss detection and recovery of the sender (Linux `tcp_ack`,
//! `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`, `tcp_fastretrans_alert`,
//! `tcp_cwnd_reduction`, `tcp_retransmit_timer`). See the parent module for the rules.

#[cfg(test)]
use super::tests;
use super::*;

/// What the segments a cumulative ACK acknowledged give the RTT estimators: the send times
/// of the oldest and newest that were neither SACKed before nor ever retransmitted, and
/// whether any was retransmitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cleaned {
    oldest: Option<SimTime>,
    newest: Option<SimTime>,
    retrans: bool,
}

impl Sender {
    // ------------------------------------------------------------------ ACK processing
    /// Mark SACKed segments (Linux `tcp_sacktag_write_queue`). Returns whether anything new
    /// was SACKed, and the oldest/newest send times of newly SACKed never-retransmitted
    /// segments.
    #[inline]
    fn process_sacks(
        &mut self,
        now: SimTime,
        ack: &Ack,
        acc: &mut RateAcc,
    ) -> (bool, Option<SimTime>, Option<SimTime>) {
        if ack.nsack == 0 && !self.sacks_known {
            return (false, None, None); // nothing reported, nothing to forget
        }
        self.process_sack_blocks(now, ack, acc)
    }

    /// `process_sacks` for an ACK with SACK blocks, or the first one without after some.
    /// Out of line: most ACKs carry none.
    #[inline(never)]
    fn process_sack_blocks(
        &mut self,
        now: SimTime,
        ack: &Ack,
        acc: &mut RateAcc,
    ) -> (bool, Option<SimTime>, Option<SimTime>) {
        let mut any = false;
        let (mut oldest, mut newest): (Option<SimTime>, Option<SimTime>) = (None, None);
        let floor = self.snd_una.max(ack.cum);
        for &(bs, be) in ack.blocks() {
            let mut s = bs.max(floor);
            let mut e = be.min(self.snd_nxt);
            // Skip the parts of the block the previous ACK already reported.
            for _ in 0..2 {
                for &(ks, ke) in &self.known_sacks {
                    if ks <= s && s < ke {
                        s = ke;
                    }
                    if ks < e && e <= ke {
                        e = ks;
                    }
                }
            }
            for i in s..e.max(s) {
                let seg = self.board.get_mut(i);
                if seg.flags & SACKED != 0 {
                    continue;
                }
                seg.flags |= SACKED | RATE_DONE;
                let f = seg.flags;
                let tx = seg.tx_time;
                seg.flags &= !(LOST | RETRANS);
                self.sacked_out += 1;
                self.tcp.delivered += 1;
                if f & LOST != 0 {
                    self.lost_out -= 1;
                }
                if f & RETRANS != 0 {
                    self.retrans_out -= 1;
                }
                if self.samples_rate() {
                    let snap = self.board.snap(i);
                    if let Some(t) = acc.delivered(i, tx, snap, f & EVER_RETRANS != 0) {
                        self.first_tx = t;
                    }
                }
                self.rack_advance(now, i, tx, f & EVER_RETRANS != 0);
                if f & EVER_RETRANS == 0 {
                    oldest = Some(oldest.map_or(tx, |o| o.min(tx)));
                    newest = Some(newest.map_or(tx, |o| o.max(tx)));
                }
                self.highest_sacked = self.highest_sacked.max(i + 1);
                any = true;
            }
        }
        self.known_sacks = [(0, 0); 3];
        for (k, b) in ack.blocks().iter().enumerate() {
            self.known_sacks[k] = *b;
        }
        self.sacks_known = self.known_sacks[0] != (0, 0);
        (any, oldest, newest)
    }

    /// Mark the first unacknowledged segment lost (non-SACK recovery).
    fn mark_head_lost(&mut self) {
        if self.packets_out() == 0 {
            return;
        }
        let una = self.snd_una;
        let s = self.seg_mut(una);
        if s.flags & LOST == 0 {
            s.flags |= LOST;
            self.lost_out += 1;
            self.tcp.lost += 1;
            self.retx_hint = self.retx_hint.min(una);
        }
    }

    /// `tcp_add_reno_sack` (with `tcp_limit_reno_sacked`): a dupACK counts as one SACKed
    /// segment. Returns whether delivered grew.
    fn add_reno_sack(&mut self) {
        let prior = self.sacked_out;
        let holes = self.lost_out.max(1).min(self.packets_out());
        self.sacked_out = (self.sacked_out + 1).min(self.packets_out() - holes);
        if self.sacked_out > prior {
            self.tcp.delivered += 1;
        }
    }

    /// Linux `tcp_clean_rtx_queue`: segments `snd_una..cum` are acknowledged.
    ///
    /// A plain segment (sent once, never SACKed or marked lost) is only counted; of a run
    /// of them the newest alone goes to RACK and the rate sample, when the run ends: they
    /// were sent in sequence order, and both keep the most recently sent of what they are
    /// given (RACK also the RTT of the last one), so the others would change nothing.
    #[inline]
    fn clean_acked(&mut self, now: SimTime, cum: u64, acc: &mut RateAcc) -> Cleaned {
        #[cfg(test)]
        let expected = self.clean_reference(now, cum, *acc);
        let c = self.clean_runs(now, cum, acc);
        #[cfg(test)]
        {
            let got = (self.rack.marks(), *acc, self.first_tx, c);
            assert_eq!(
                got, expected,
                "runs of plain segments differ from the segment loop"
            );
            let plain = (self.snd_una..cum)
                .filter(|&i| self.board.get(i).flags == 0)
                .count() as u64;
            let mixed = u64::from(plain > 0 && plain < cum - self.snd_una);
            tests::CLEANS.with(|n| n.set((n.get().0 + 1, n.get().1 + mixed)));
        }
        let acked = cum - self.snd_una;
        self.snd_una = cum;
        if !self.p.sack {
            // tcp_remove_reno_sacks: one ACK filled a hole, the rest ate dupACKs.
            self.tcp.delivered += acked.saturating_sub(self.sacked_out).max(1);
            self.sacked_out = self.sacked_out.saturating_sub(acked - 1);
        }
        self.rto_count = 0;
        c
    }

    /// `clean_acked`'s walk over the acknowledged segments.
    #[inline]
    fn clean_runs(&mut self, now: SimTime, cum: u64, acc: &mut RateAcc) -> Cleaned {
        let mut c = Cleaned::default();
        // The common case, a run of plain segments from snd_una, by their flags alone; the
        // segments after its end, if any, one by one.
        let una = self.snd_una;
        let mut end = una;
        while end < cum && self.board.get(end).flags == 0 {
            end += 1;
        }
        let (mut run, mut plain) = (None, end - una);
        if end > una {
            c.oldest = Some(self.board.get(una).tx_time);
            c.newest = Some(self.board.get(end - 1).tx_time);
            run = Some(end - 1);
        }
        for i in end..cum {
            let s = self.board.get(i);
            if s.flags == 0 {
                c.oldest.get_or_insert(s.tx_time);
                c.newest = Some(s.tx_time);
                run = Some(i);
                plain += 1;
            } else {
                c = self.clean_flagged(now, run.take(), i, acc, c);
            }
        }
        if let Some(p) = run {
            self.plain_delivered(now, p, acc);
        }
        if self.p.sack {
            self.tcp.delivered += plain;
        }
        c
    }

    /// `clean_runs` for a segment that is not plain (SACKed, lost or retransmitted), after
    /// the run of plain segments before it (the newest of which is `run`). Out of line: the
    /// loop over plain segments stays small. `c` goes in and out by value, so that the loop
    /// keeps it in registers (a reference would keep it in memory, stored on every segment).
    #[inline(never)]
    fn clean_flagged(
        &mut self,
        now: SimTime,
        run: Option<u64>,
        i: u64,
        acc: &mut RateAcc,
        mut c: Cleaned,
    ) -> Cleaned {
        if let Some(p) = run {
            self.plain_delivered(now, p, acc);
        }
        let seg = *self.board.get(i);
        let (flags, tx) = (seg.flags, seg.tx_time);
        if flags & SACKED != 0 {
            self.sacked_out -= 1;
        } else {
            if self.p.sack {
                self.tcp.delivered += 1;
            }
            self.seg_delivered(now, i, &seg, acc);
        }
        if flags & LOST != 0 {
            self.lost_out -= 1;
        }
        if flags & RETRANS != 0 {
            self.retrans_out -= 1;
        }
        if flags & EVER_RETRANS != 0 {
            c.retrans = true;
        } else if flags & SACKED == 0 {
            c.oldest.get_or_insert(tx);
            c.newest = Some(tx);
        }
        c
    }

    /// What `clean_runs` must leave in RACK, the rate sample and `first_tx`, and return:
    /// every acknowledged segment passed on one by one, as Linux does.
    #[cfg(test)]
    fn clean_reference(
        &self,
        now: SimTime,
        cum: u64,
        mut acc: RateAcc,
    ) -> (
        (SimTime, u64, SimTime, bool, bool),
        RateAcc,
        SimTime,
        Cleaned,
    ) {
        let (mut rack, mut first_tx, mut c) =
            (self.rack.clone(), self.first_tx, Cleaned::default());
        for i in self.snd_una..cum {
            let seg = *self.board.get(i);
            let ever = seg.flags & EVER_RETRANS != 0;
            if seg.flags & SACKED == 0 {
                if self.p.sack {
                    rack.advance(self.tcp.min_rtt, now, i, seg.tx_time, ever);
                }
                if self.samples_rate() && seg.flags & RATE_DONE == 0 {
                    if let Some(t) = acc.delivered(i, seg.tx_time, self.board.snap(i), ever) {
                        first_tx = t;
                    }
                }
            }
            if ever {
                c.retrans = true;
            } else if seg.flags & SACKED == 0 {
                c.oldest.get_or_insert(seg.tx_time);
                c.newest = Some(seg.tx_time);
            }
        }
        (rack.marks(), acc, first_tx, c)
    }

    /// The newest of a run of plain segments was delivered (`clean_acked`).
    #[inline]
    fn plain_delivered(&mut self, now: SimTime, i: u64, acc: &mut RateAcc) {
        let seg = *self.board.get(i);
        self.seg_delivered(now, i, &seg, acc);
    }

    /// Segment `i`, not SACKed before, was cumulatively acknowledged: RACK (with SACK) and
    /// the rate sample (when read) learn of it.
    #[inline]
    fn seg_delivered(&mut self, now: SimTime, i: u64, seg: &Seg, acc: &mut RateAcc) {
        let ever_retrans = seg.flags & EVER_RETRANS != 0;
        if self.p.sack {
            self.rack_advance(now, i, seg.tx_time, ever_retrans);
        }
        if self.samples_rate() && seg.flags & RATE_DONE == 0 {
            if let Some(t) = acc.delivered(i, seg.tx_time, self.board.snap(i), ever_retrans) {
                self.first_tx = t;
            }
        }
    }

    pub fn on_ack(&mut self, now: SimTime, ack: &Ack, io: &mut Io) {
        if !self.active {
            return;
        }
        // Read by the rate sample alone (BBR's `cong_control`).
        let prior_in_flight = if self.samples_rate() {
            self.in_flight() as u32
        } else {
            0
        };
        let prior_una = self.snd_una;
        let prior_delivered = self.tcp.delivered;
        let prior_lost = self.tcp.lost;
        let mut acc = RateAcc::default();

        let (new_sack, sack_old, sack_new) = if self.p.sack {
            self.process_sacks(now, ack, &mut acc)
        } else {
            (false, None, None)
        };

        // Cumulative ACK (tcp_clean_rtx_queue).
        let cum = ack.cum.min(self.snd_nxt);
        let mut cleaned = Cleaned::default();
        if cum > self.snd_una {
            cleaned = self.clean_acked(now, cum, &mut acc);
        } else if !self.p.sack && cum == self.snd_una && self.packets_out() > 0 {
            self.add_reno_sack();
        }
        let Cleaned {
            oldest: mut cum_old,
            newest: mut cum_new,
            retrans: retrans_acked,
        } = cleaned;
        let una_adv = self.snd_una > prior_una;

        // RTT (Linux tcp_clean_rtx_queue + tcp_ack_update_rtt): the RTO estimator's sample
        // from the oldest newly acked segment, the congestion control's from the newest;
        // none from the cumulative ACK if it covers retransmitted data (Karn, RFC 6298 §3),
        // then SACK samples, then the echoed timestamp (RFC 7323 §4) if data was acked.
        if retrans_acked {
            (cum_old, cum_new) = (None, None);
        }
        let mut rto_sample = cum_old.or(sack_old).map(|t| now - t);
        let mut ca_rtt = cum_new.or(sack_new).map(|t| now - t);
        if rto_sample.is_none() && cum > prior_una && ack.tsecr > SimTime::ZERO {
            rto_sample = Some(now - ack.tsecr);
            ca_rtt = rto_sample;
        }
        if let Some(r) = rto_sample {
            self.rtt_sample(r);
        }
        if let Some(r) = ca_rtt {
            if self.tcp.min_rtt == SimTime::ZERO || r < self.tcp.min_rtt {
                self.tcp.min_rtt = r;
            }
        }

        self.process_tlp_ack(now, cum, una_adv, new_sack);
        if self.p.sack {
            self.rack_mark_lost(now, io);
        }
        self.fast_retrans_alert(now, una_adv);

        // Delivery-rate sample (tcp_rate_gen).
        let newly = self.tcp.delivered - prior_delivered;
        let newly_lost = self.tcp.lost - prior_lost;
        if self.tcp.app_limited != 0 && self.tcp.delivered > self.tcp.app_limited {
            self.tcp.app_limited = 0;
        }
        if newly > 0 {
            self.tcp.delivered_time = now;
        }
        // Only an algorithm with its own control path (BBR) reads the sample
        // (`hooks::on_ack` passes it to `cong_control` alone).
        let rs = self.samples_rate().then(|| {
            let mut rs = RateSample {
                losses: newly_lost as u32,
                acked_sacked: newly as u32,
                prior_in_flight,
                rtt: ca_rtt,
                is_ack_delayed: ack.delayed,
                ..RateSample::default()
            };
            acc.finish(now, self.tcp.delivered, self.tcp.min_rtt, &mut rs);
            rs
        });

        // Congestion control (tcp_cong_control).
        self.sync(now);
        let ev = AckEvent {
            acked: newly as u32,
            rtt: ca_rtt,
            ack_seq: self.bytes_at(self.snd_una),
        };
        if self.cc.on_ack(&mut self.tcp, &ev, rs.as_ref(), una_adv) == AfterAck::Reduce {
            self.prr(newly, newly_lost, una_adv);
        }

        if self.packets_out() == 0 {
            self.rto_timer.cancel();
        } else if una_adv {
            self.rto_timer
                .arm(io.q, now + self.rtt.rto(), self.p.id, TimerKind::Rto);
        }
        if let Some(size) = self.p.size_bytes {
            if self.stats.completion.is_none() && self.bytes_at(self.snd_una) >= size {
                self.stats.completion = Some(now);
            }
        }
        // The probe timer, from the state the send loop left, whether or not new data went
        // out (`try_send` schedules it only when some did).
        self.send_allowed(now, io);
        self.schedule_tlp(now, io);
    }

    /// Linux `tcp_fastretrans_alert`, reduced to what the simulator needs: leave Recovery or
    /// Loss once `high_seq` is acknowledged, mark losses, enter Recovery.
    #[inline]
    fn fast_retrans_alert(&mut self, now: SimTime, una_adv: bool) {
        let st = self.tcp.ca_state;
        if matches!(st, CaState::Recovery | CaState::Loss) && self.snd_una >= self.high_seq {
            self.leave_recovery(now, st);
        }
        let st = self.tcp.ca_state;
        if !self.p.sack {
            // tcp_newreno_mark_lost
            let open = matches!(st, CaState::Open | CaState::Disorder);
            if (open && self.sacked_out >= DUPTHRESH) || (st == CaState::Recovery && una_adv) {
                self.mark_head_lost();
            }
        }
        if matches!(st, CaState::Open | CaState::Disorder) {
            if self.lost_out > 0 {
                self.enter_recovery(now);
            } else if self.sacked_out > 0 {
                self.set_state(now, CaState::Disorder);
            } else {
                self.set_state(now, CaState::Open);
            }
        }
    }

    /// `fast_retrans_alert` once `high_seq` is acknowledged in Recovery or Loss (`st`): back
    /// to Open. Out of line: once per episode.
    #[inline(never)]
    fn leave_recovery(&mut self, now: SimTime, st: CaState) {
        // Non-SACK: hold the state until something above high_seq is acked
        // (tcp_try_undo_recovery), so a dupACK of the retransmission cannot re-trigger.
        if !(self.p.sack || self.snd_una > self.high_seq) && self.packets_out() > 0 {
            return; // hold
        }
        if st == CaState::Recovery {
            if !self.p.sack {
                self.sacked_out = 0;
            }
            self.end_cwnd_reduction(now);
        }
        self.set_state(now, CaState::Open);
    }

    /// `tcp_init_cwnd_reduction`.
    pub(super) fn init_cwnd_reduction(&mut self, now: SimTime) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.prr_delivered = 0;
        self.prr_base = self.data_segs_out;
        self.sync(now);
        hooks::start_reduction(&mut self.cc, &mut self.tcp);
    }

    /// `tcp_enter_recovery`.
    pub(super) fn enter_recovery(&mut self, now: SimTime) {
        if self.tcp.ca_state != CaState::Cwr {
            self.init_cwnd_reduction(now);
        }
        self.set_state(now, CaState::Recovery);
    }

    /// `tcp_end_cwnd_reduction`.
    pub(super) fn end_cwnd_reduction(&mut self, now: SimTime) {
        self.sync(now);
        hooks::end_reduction(&mut self.cc, &mut self.tcp);
    }

    /// RFC 6937 PRR as in Linux `tcp_cwnd_reduction`: proportional while pipe > ssthresh,
    /// then slow-start reduction bound (one extra segment per ACK that advanced snd_una
    /// without new losses), never below one segment on the first ACK of recovery.
    #[inline(never)]
    pub(super) fn prr(&mut self, newly: u64, newly_lost: u64, una_adv: bool) {
        if newly == 0 || self.tcp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly;
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.tcp.ssthresh as i64;
        let delta = ssthresh - in_flight;
        let prr_delivered = self.prr_delivered as i64;
        let prr_out = self.prr_out() as i64;
        let mut sndcnt = if delta < 0 {
            let prior = self.tcp.prior_cwnd as i64;
            (prr_delivered * ssthresh + prior - 1) / prior - prr_out
        } else {
            let mut s = (prr_delivered - prr_out).max(newly as i64);
            if una_adv && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if prr_out > 0 { 0 } else { 1 });
        self.tcp
            .set_cwnd((in_flight + sndcnt).clamp(1, u32::MAX as i64) as u32);
    }

    // ------------------------------------------------------------------ timers
    /// Retransmission timeout (Linux `tcp_retransmit_timer` → `tcp_enter_loss`).
    pub fn on_rto(&mut self, now: SimTime, io: &mut Io) {
        if self.packets_out() == 0 {
            return;
        }
        // Linux has one timer for both: a due loss probe goes first and re-arms the RTO.
        if self.tlp_timer.deadline().is_some_and(|d| d <= now) {
            self.tlp_timer.cancel();
            self.on_tlp(now, io);
            return;
        }
        self.stats.timeouts += 1;
        let high_seq_acked = self.high_seq <= self.snd_una;
        if hooks::timeout_takes_ssthresh(&self.tcp, high_seq_acked, self.rto_count == 0) {
            self.sync(now);
            hooks::on_timeout(&mut self.cc, &mut self.tcp);
        }
        // tcp_timeout_mark_lost: everything not SACKed is lost; retransmissions forgotten.
        for i in self.snd_una..self.snd_nxt {
            let s = self.board.get_mut(i);
            if s.flags & SACKED == 0 {
                if s.flags & LOST == 0 {
                    s.flags |= LOST;
                    self.lost_out += 1;
                    self.tcp.lost += 1;
                }
                s.flags &= !RETRANS;
            }
        }
        self.retrans_out = 0;
        if !self.p.sack {
            self.sacked_out = 0;
        }
        self.tlp_high_seq = None;
        self.reo_timer.cancel();
        self.tlp_timer.cancel();
        self.retx_hint = self.snd_una;
        let in_flight = self.in_flight() as u32;
        hooks::timeout_window(&mut self.tcp, in_flight);
        self.set_state(now, CaState::Loss);
        self.high_seq = self.snd_nxt;
        self.rto_count += 1;
        self.rtt.backoff += 1;
        self.rto_timer
            .arm(io.q, now + self.rtt.rto(), self.p.id, TimerKind::Rto);
        self.try_send(now, io);
    }
}
