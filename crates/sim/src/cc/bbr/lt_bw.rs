//! Long-term ("policer") bandwidth (Linux `bbr_lt_bw_sampling`): token-bucket policers
//! drop everything above their rate. Two consecutive loss-ended intervals of 4–16 round
//! trips with ≥ 20 % loss and the same delivery rate (within 1/8 or 4 kbit/s) mean we are
//! policed: use their average rate, gain 1, for 48 round trips.

use super::{Bbr, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::cc::{RateSample, TcpCc};

/// Minimum round trips in a sampling interval (the maximum is 4×).
const LT_INTVL_MIN_RTTS: u32 = 4;
/// Lost/delivered above 50/256 ≈ 20 %: a lossy interval.
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals are "consistent" within 1/8 of the rate...
const LT_BW_RATIO: u64 = (BBR_UNIT / 8) as u64;
/// ...or within 4 kbit/s (in bytes per second).
const LT_BW_DIFF: u64 = 4000 / 8;
/// Round trips to use the policed rate before probing again.
const LT_BW_MAX_RTTS: u32 = 48;

impl Bbr {
    fn reset_lt_bw_sampling_interval(&mut self, tcp: &TcpCc) {
        self.lt_last_stamp = tcp.delivered_time.as_nanos() / 1_000_000;
        self.lt_last_delivered = tcp.delivered;
        self.lt_last_lost = tcp.lost;
        self.lt_rtt_cnt = 0;
    }

    pub(crate) fn reset_lt_bw_sampling(&mut self, tcp: &TcpCc) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tcp);
    }

    fn lt_bw_interval_done(&mut self, tcp: &TcpCc, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * u64::from(BBR_UNIT) <= LT_BW_RATIO * self.lt_bw
                || Self::rate_bytes_per_sec(tcp, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) / 2;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tcp);
    }

    pub(crate) fn lt_bw_sampling(&mut self, tcp: &TcpCc, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tcp);
                    self.reset_probe_bw_mode(tcp);
                }
            }
            return;
        }
        // Start at the first loss, once the policer's bucket is empty.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tcp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        // End the interval at a loss (the bucket is exhausted again).
        if rs.losses == 0 {
            return;
        }
        let lost = tcp.lost - self.lt_last_lost;
        let delivered = tcp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let now_ms = tcp.delivered_time.as_nanos() / 1_000_000;
        let t_ms = now_ms.saturating_sub(self.lt_last_stamp);
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms * 1000);
        self.lt_bw_interval_done(tcp, bw);
    }
}
