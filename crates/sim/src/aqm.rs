//! Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993), with the "gentle" variant (Floyd 2000).
//!
//! Per arriving packet (§4 and Fig. 2 of the paper):
//! - average queue: `avg ← (1−w_q)·avg + w_q·q` when the queue is non-empty; after an idle
//!   period of `m` typical transmission times, `avg ← (1−w_q)^m·avg`;
//! - `min_th ≤ avg < max_th`: `count += 1`, `p_b = max_p·(avg−min_th)/(max_th−min_th)`,
//!   `p_a = p_b/(1 − count·p_b)` (uniform spacing of drops), drop with `p_a`, reset `count`
//!   (count is incremented before use, as in ns-2's `red.cc`);
//! - `avg ≥ max_th`: drop (gentle: `p_b` ramps from `max_p` to 1 over `[max_th, 2·max_th)`);
//! - `avg < min_th`: no drop, `count = −1`.
//!
//! In byte mode the queue and thresholds are bytes and `p_b` is scaled by
//! `packet size / MTU` (§4, "byte mode"), so small packets are less likely to be dropped.

use crate::rng::Rng;
use crate::units::SimTime;

#[derive(Clone, Debug)]
pub struct Red {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub wq: f64,
    pub bytes: bool,
    pub gentle: bool,
    /// Transmission time of a full-sized packet (the "s" of the idle-time rule), ns.
    pub typical_tx_ns: f64,
    pub mtu: u32,
    avg: f64,
    count: i64,
    idle_since: Option<SimTime>,
}

impl Red {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        min_th: f64,
        max_th: f64,
        max_p: f64,
        wq: f64,
        bytes: bool,
        gentle: bool,
        typical_tx: SimTime,
        mtu: u32,
    ) -> Red {
        Red {
            min_th,
            max_th,
            max_p,
            wq,
            bytes,
            gentle,
            typical_tx_ns: typical_tx.0.max(1) as f64,
            mtu,
            avg: 0.0,
            count: -1,
            idle_since: Some(SimTime::ZERO),
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The queue became empty (and the link idle) at `now`.
    pub fn on_idle(&mut self, now: SimTime) {
        self.idle_since = Some(now);
    }

    /// A packet was accepted: the idle period (if any) is over. A dropped arrival does not
    /// end it (Floyd & Jacobson's q_time is the start of the queue's idle time).
    pub fn on_busy(&mut self) {
        self.idle_since = None;
    }

    /// Decide for an arriving packet of `pkt_bytes`, given the current queue (packets or
    /// bytes, matching the threshold unit). Returns true to drop.
    pub fn should_drop(&mut self, now: SimTime, queue: f64, pkt_bytes: u32, rng: &mut Rng) -> bool {
        match self.idle_since {
            Some(t) if queue == 0.0 => {
                // Idle: decay for the m packets that could have been sent; continue from
                // now, since (1−wq)^m1·(1−wq)^m2 = (1−wq)^(m1+m2).
                let m = (now.0.saturating_sub(t.0)) as f64 / self.typical_tx_ns;
                self.avg *= (1.0 - self.wq).powf(m);
                self.idle_since = Some(now);
            }
            _ => self.avg = (1.0 - self.wq) * self.avg + self.wq * queue,
        }
        let avg = self.avg;
        let pb = if avg < self.min_th {
            self.count = -1;
            return false;
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            self.count = 0;
            return true;
        };
        let pb = if self.bytes {
            pb * pkt_bytes as f64 / self.mtu as f64
        } else {
            pb
        };
        self.count += 1;
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 {
            1.0
        } else {
            (pb / denom).min(1.0)
        };
        if rng.uniform() < pa {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red() -> Red {
        Red::new(5.0, 15.0, 0.1, 1.0, false, false, SimTime(1000), 1500)
    }

    #[test]
    fn below_min_th_never_drops_and_above_max_th_always_drops() {
        let mut r = red(); // wq = 1: avg follows the instantaneous queue
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            assert!(!r.should_drop(SimTime(0), 4.0, 1500, &mut rng));
        }
        for _ in 0..100 {
            assert!(r.should_drop(SimTime(0), 15.0, 1500, &mut rng));
        }
    }

    #[test]
    fn count_spacing_gives_one_drop_per_one_over_pb_arrivals() {
        // At avg = 10 (midway) p_b = 0.05. With count incremented before p_a = p_b/(1−count·p_b)
        // (ns-2's red.cc convention), P(gap > n) = (1−(n+1)p_b)/(1−p_b): the gap is uniform on
        // {1..1/p_b − 1}, mean 1/(2·p_b) = 10 arrivals (Floyd & Jacobson §7 count from 0 and
        // get {1..1/p_b}). sd of the mean over ~21000 gaps ≈ 0.04, so ±0.2 is 5 sd.
        let mut r = red();
        let mut rng = Rng::new(2);
        let n = 210_000;
        let drops = (0..n)
            .filter(|_| r.should_drop(SimTime(0), 10.0, 1500, &mut rng))
            .count();
        let gap = n as f64 / drops as f64;
        assert!((gap - 10.0).abs() < 0.2, "mean gap {gap}");
    }

    #[test]
    fn gentle_ramps_between_max_th_and_twice_max_th() {
        let mut r = red();
        r.gentle = true;
        let mut rng = Rng::new(3);
        // avg = 22.5: p_b = 0.1 + 0.9·7.5/15 = 0.55 — some packets pass, some are dropped.
        let drops = (0..10_000)
            .filter(|_| r.should_drop(SimTime(0), 22.5, 1500, &mut rng))
            .count();
        assert!(drops > 5000 && drops < 10_000, "{drops}");
        assert!(r.should_drop(SimTime(0), 30.0, 1500, &mut rng));
    }

    #[test]
    fn a_dropped_arrival_does_not_end_the_idle_period() {
        let mut r = Red::new(5.0, 15.0, 0.1, 0.5, false, false, SimTime(1000), 1500);
        let mut rng = Rng::new(5);
        r.avg = 64.0; // far above max_th: arrivals are dropped
        r.on_idle(SimTime(0));
        assert!(r.should_drop(SimTime(1000), 0.0, 1500, &mut rng)); // m = 1: avg 32
        assert!(r.should_drop(SimTime(2000), 0.0, 1500, &mut rng)); // m = 1 more: avg 16
                                                                    // 2 more packet times of idleness: avg 4, below min_th (a single EWMA step per
                                                                    // arrival would still be at 8).
        assert!(!r.should_drop(SimTime(4000), 0.0, 1500, &mut rng));
        assert!((r.avg() - 4.0).abs() < 1e-9, "{}", r.avg());
    }

    #[test]
    fn average_decays_over_idle_time() {
        let mut r = Red::new(5.0, 15.0, 0.1, 0.5, false, false, SimTime(1000), 1500);
        let mut rng = Rng::new(4);
        r.should_drop(SimTime(0), 8.0, 1500, &mut rng); // avg: 0 → 4 (idle-start rule skipped: q>0)
        assert!((r.avg() - 4.0).abs() < 1e-12);
        r.on_idle(SimTime(0));
        r.should_drop(SimTime(2000), 0.0, 1500, &mut rng); // idle for m = 2 packet times
        assert!((r.avg() - 1.0).abs() < 1e-12, "{}", r.avg());
    }
}
