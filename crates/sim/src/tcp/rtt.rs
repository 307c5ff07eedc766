//! RTT estimation and the retransmission timeout (RFC 6298 §2, with Linux's choices).
//!
//! - First sample R: SRTT = R, RTTVAR = R/2 (§2.2). Later: RTTVAR = 3/4·RTTVAR + 1/4·|SRTT−R|,
//!   SRTT = 7/8·SRTT + 1/8·R (§2.3).
//! - Linux computes RTO = SRTT + max(4·RTTVAR, rto_min) with rto_min = 200 ms
//!   (`tcp_set_rto`: `rttvar_us` is floored at `tcp_rto_min_us`), rather than RFC 6298's
//!   max(SRTT + 4·RTTVAR, 1 s); so a 100 ms path gets an RTO of about 300 ms.
//!   Linux's per-window `mdev_max` smoothing of RTTVAR is not modelled.
//! - Initial RTO 1 s (§2.1); exponential backoff doubles it per timeout (§5.5), capped at
//!   120 s (TCP_RTO_MAX); the backoff is cleared by a valid RTT sample (Linux
//!   `tcp_ack_update_rtt`).

use crate::units::SimTime;

pub const RTO_MIN: SimTime = SimTime::from_millis(200);
pub const RTO_MAX: SimTime = SimTime::from_secs(120);
pub const RTO_INIT: SimTime = SimTime::from_secs(1);

/// `srtt` and `rttvar` change only through `sample`, which also keeps the RTO before
/// backoff (read on every ACK that re-arms the timer).
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: u64,
    pub rttvar: u64,
    pub backoff: u32,
    base_rto: SimTime,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            backoff: 0,
            base_rto: RTO_INIT,
        }
    }
}

impl RttEstimator {
    pub fn sample(&mut self, r: SimTime) {
        let r = r.0.max(1);
        if self.srtt == 0 {
            self.srtt = r;
            self.rttvar = r / 2;
        } else {
            let err = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
        self.backoff = 0;
        self.base_rto = SimTime(self.srtt + (4 * self.rttvar).max(RTO_MIN.0)).min(RTO_MAX);
    }

    pub fn srtt(&self) -> SimTime {
        SimTime(self.srtt)
    }

    /// RTO before backoff.
    pub fn base_rto(&self) -> SimTime {
        self.base_rto
    }

    /// RTO including exponential backoff.
    #[inline]
    pub fn rto(&self) -> SimTime {
        if self.backoff == 0 {
            return self.base_rto; // at most RTO_MAX already
        }
        let b = self.base_rto().0;
        SimTime(
            b.checked_shl(self.backoff)
                .filter(|v| v >> self.backoff == b)
                .unwrap_or(u64::MAX),
        )
        .min(RTO_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_gives_three_rtt_or_rtt_plus_min() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto(), RTO_INIT);
        e.sample(SimTime::from_millis(100));
        // SRTT 100 ms, RTTVAR 50 ms: 100 + max(200, 200) = 300 ms.
        assert_eq!(e.rto(), SimTime::from_millis(300));
        let mut f = RttEstimator::default();
        f.sample(SimTime::from_millis(10));
        // 10 + max(20, 200) = 210 ms: Linux's 200 ms floor on the variance term.
        assert_eq!(f.rto(), SimTime::from_millis(210));
    }

    #[test]
    fn rfc6298_smoothing() {
        let mut e = RttEstimator::default();
        e.sample(SimTime(800));
        e.sample(SimTime(1600));
        // RTTVAR = 3/4·400 + 1/4·800 = 500; SRTT = 7/8·800 + 1/8·1600 = 900.
        assert_eq!((e.srtt, e.rttvar), (900, 500));
        // Linux: SRTT + max(4·RTTVAR, 200 ms).
        assert_eq!(e.base_rto(), SimTime(900 + 200_000_000));
    }

    #[test]
    fn backoff_doubles_and_caps_and_a_sample_resets_it() {
        let mut e = RttEstimator::default();
        e.sample(SimTime::from_millis(100));
        e.backoff = 2;
        assert_eq!(e.rto(), SimTime::from_millis(1200));
        e.backoff = 20;
        assert_eq!(e.rto(), RTO_MAX);
        e.backoff = 64;
        assert_eq!(e.rto(), RTO_MAX);
        e.sample(SimTime::from_millis(100));
        assert_eq!(e.backoff, 0);
    }
}
