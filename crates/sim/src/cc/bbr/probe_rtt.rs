//! The min-RTT filter and PROBE_RTT (draft §4.1.2, §4.3.5): if the min RTT was not
//! refreshed for 10 s, cut inflight to 4 packets for max(200 ms, one round trip) so the
//! queue drains and the propagation delay can be measured again.

use super::{Bbr, Mode, CWND_MIN_TARGET};
use crate::cc::{jiffies, RateSample, TcpCc, HZ};

/// Min-RTT filter window (s).
const MIN_RTT_WIN_SEC: u64 = 10;
/// Time spent at 4 packets in PROBE_RTT (ms).
const PROBE_RTT_MODE_MS: u64 = 200;

impl Bbr {
    pub(crate) fn update_min_rtt(&mut self, tcp: &mut TcpCc, rs: &RateSample) {
        let now = jiffies(tcp.now);
        let filter_expired = now > self.min_rtt_stamp + MIN_RTT_WIN_SEC * HZ;
        if let Some(rtt) = rs.rtt {
            let rtt_us = u32::try_from(rtt.as_micros()).unwrap_or(u32::MAX);
            // A delayed ACK's RTT is inflated: it may not refresh an expired minimum.
            if rtt_us < self.min_rtt_us || (filter_expired && !rs.is_ack_delayed) {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = now;
            }
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tcp);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at 4 packets in flight say nothing about the bandwidth.
            tcp.app_limited = (tcp.delivered + u64::from(tcp.packets_in_flight)).max(1);
            if self.probe_rtt_done_stamp.is_none() && tcp.packets_in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE_MS * HZ / 1000);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tcp.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tcp);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Leave PROBE_RTT after its 200 ms and round: restore cwnd and return to STARTUP or
    /// PROBE_BW; the fresh min RTT is good for another 10 s.
    pub(crate) fn check_probe_rtt_done(&mut self, tcp: &mut TcpCc) {
        let now = jiffies(tcp.now);
        if !matches!(self.probe_rtt_done_stamp, Some(done) if now > done) {
            return;
        }
        self.min_rtt_stamp = now;
        tcp.cwnd = tcp.cwnd.max(self.prior_cwnd);
        self.reset_mode(tcp);
    }
}
