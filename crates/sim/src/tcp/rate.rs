//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `net/ipv4/tcp_rate.c`).
//!
//! Each transmission snapshots the connection's delivery state (`delivered`, the time of
//! the latest delivery, the start of the current send phase); when a segment is delivered
//! the newest such snapshot becomes the sample's baseline (§3.2), and the rate is
//! `delivered since baseline / max(send phase, ACK phase)` (§3.3). Samples shorter than the
//! minimum RTT are invalid (Linux drops them: they come from ACK compression).

use crate::cc::RateSample;
use crate::units::SimTime;

/// The delivery-state snapshot stored with each transmitted segment (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TxSnapshot {
    /// Start of the send phase this segment belongs to (`first_tx_mstamp`).
    pub first_tx: SimTime,
    /// `delivered_mstamp` when sent.
    pub delivered_time: SimTime,
    /// `delivered` when sent.
    pub delivered: u64,
    pub app_limited: bool,
}

/// The sample being assembled while one ACK is processed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateAcc {
    /// Baseline: (prior_delivered, prior_mstamp), from the most recently sent delivered segment.
    prior: Option<(u64, SimTime)>,
    last_tx: SimTime,
    last_seg: u64,
    send_phase: SimTime,
    pub is_app_limited: bool,
    pub is_retrans: bool,
}

impl RateAcc {
    /// `tcp_rate_skb_delivered`: segment `seg`, last sent at `tx_time` with `snap`, was just
    /// delivered. Returns the new `first_tx_mstamp` of the connection if this segment
    /// becomes the baseline.
    pub fn delivered(
        &mut self,
        seg: u64,
        tx_time: SimTime,
        snap: &TxSnapshot,
        retrans: bool,
    ) -> Option<SimTime> {
        let newer = match self.prior {
            None => true,
            Some(_) => tx_time > self.last_tx || (tx_time == self.last_tx && seg > self.last_seg),
        };
        if !newer {
            return None;
        }
        self.prior = Some((snap.delivered, snap.delivered_time));
        self.is_app_limited = snap.app_limited;
        self.is_retrans = retrans;
        self.last_tx = tx_time;
        self.last_seg = seg;
        self.send_phase = tx_time.saturating_sub(snap.first_tx);
        Some(tx_time)
    }

    /// `tcp_rate_gen`: finish the sample after the ACK was processed.
    pub fn finish(
        &self,
        now: SimTime,
        delivered_total: u64,
        min_rtt: SimTime,
        rs: &mut RateSample,
    ) {
        rs.is_app_limited = self.is_app_limited;
        rs.is_retrans = self.is_retrans;
        let Some((prior_delivered, prior_time)) = self.prior else {
            rs.delivered = -1;
            rs.interval = SimTime::ZERO;
            return;
        };
        rs.prior_delivered = prior_delivered;
        rs.delivered = (delivered_total - prior_delivered) as i64;
        let ack_phase = now.saturating_sub(prior_time);
        let interval = self.send_phase.max(ack_phase);
        // Linux: an interval below min_rtt means ACK compression or a stretch ACK: no sample.
        rs.interval = if interval < min_rtt {
            SimTime::ZERO
        } else {
            interval
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_uses_the_longer_of_send_and_ack_phases() {
        // 10 segments delivered since the baseline; sent over 8 ms, acked over 10 ms.
        let snap = TxSnapshot {
            first_tx: SimTime::from_millis(100),
            delivered_time: SimTime::from_millis(95),
            delivered: 40,
            app_limited: false,
        };
        let mut acc = RateAcc::default();
        acc.delivered(60, SimTime::from_millis(108), &snap, false);
        let mut rs = RateSample::default();
        acc.finish(
            SimTime::from_millis(105),
            50,
            SimTime::from_millis(1),
            &mut rs,
        );
        // ack phase = 105 − 95 = 10 ms > send phase 8 ms.
        assert_eq!((rs.delivered, rs.interval), (10, SimTime::from_millis(10)));
        assert_eq!(rs.rate_bytes_per_sec(1000), Some(1_000_000));
    }

    #[test]
    fn newest_sent_segment_is_the_baseline_and_short_intervals_are_invalid() {
        let old = TxSnapshot {
            first_tx: SimTime(0),
            delivered_time: SimTime(0),
            delivered: 1,
            app_limited: true,
        };
        let new = TxSnapshot {
            first_tx: SimTime(0),
            delivered_time: SimTime(50),
            delivered: 5,
            app_limited: false,
        };
        let mut acc = RateAcc::default();
        assert!(acc.delivered(3, SimTime(200), &new, false).is_some());
        assert!(acc.delivered(2, SimTime(100), &old, true).is_none());
        let mut rs = RateSample::default();
        acc.finish(SimTime(300), 9, SimTime(1000), &mut rs);
        assert_eq!(rs.delivered, 4);
        assert!(!rs.is_app_limited);
        assert_eq!(rs.interval, SimTime::ZERO); // 250 ns < min_rtt 1000 ns
    }

    #[test]
    fn no_delivery_no_sample() {
        let mut rs = RateSample::default();
        RateAcc::default().finish(SimTime(5), 3, SimTime(1), &mut rs);
        assert_eq!(rs.delivered, -1);
    }
}
