//! HyStart (Ha & Rhee, "Hybrid Slow Start for High-Bandwidth and Long-Distance
//! Networks", PFLDnet 2008) as in Linux's CUBIC: leave slow start before the first loss
//! when the ACK train of a round grows long (the pipe is full) or the round's minimum RTT
//! rises (a queue builds).

use super::Cubic;
use crate::cc::TcpCc;

/// HyStart detection methods (`hystart_detect` bits).
pub(super) const HYSTART_ACK_TRAIN: u32 = 0x1;
pub(super) const HYSTART_DELAY: u32 = 0x2;
/// RTT samples per round before the delay-increase test (`HYSTART_MIN_SAMPLES`).
pub(super) const HYSTART_MIN_SAMPLES: u8 = 8;
/// Bounds of the delay-increase threshold, in µs (`HYSTART_DELAY_MIN/MAX`).
pub(super) const HYSTART_DELAY_MIN_US: u32 = 4_000;
pub(super) const HYSTART_DELAY_MAX_US: u32 = 16_000;

impl Cubic {
    /// `bictcp_hystart_reset`: start a new HyStart round at the next window's end.
    pub(super) fn hystart_reset(&mut self, tcp: &TcpCc) {
        let now = tcp.now.as_micros();
        self.round_start_us = now;
        self.last_ack_us = now;
        self.end_seq = tcp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// TSO/GRO allowance of the ACK-train test (`hystart_ack_delay`), in µs: four GSO
    /// packets at the socket's pacing rate (`TcpCc::sk_pacing_rate`), at most 1 ms. In
    /// practice the allowance is 1 ms below ~2 Gbit/s.
    pub(super) fn hystart_ack_delay_us(&self, tcp: &TcpCc) -> u64 {
        if self.gso_max_size == 0 {
            return 0;
        }
        // Linux: no srtt yet, the rate is huge and the allowance ~0.
        let rate = tcp.sk_pacing_rate();
        if rate == 0 {
            return 0;
        }
        (u64::from(self.gso_max_size) * 4 * 1_000_000 / rate).min(1_000)
    }

    /// HyStart (Ha & Rhee 2008): leave slow start (ssthresh = cwnd) when the ACKs of a
    /// round keep arriving closely spaced for longer than half the minimum RTT (the pipe
    /// is full), or when the round's minimum RTT grew by delay_min/8 (clamped to 4–16 ms).
    pub(super) fn hystart_update(&mut self, tcp: &mut TcpCc, delay: u32) {
        if tcp.snd_una > self.end_seq {
            self.hystart_reset(tcp);
        }
        if tcp.cwnd < self.hystart_low_window {
            return;
        }
        if self.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = tcp.now.as_micros();
            if now.saturating_sub(self.last_ack_us) <= u64::from(self.hystart_ack_delta_us) {
                self.last_ack_us = now;
                let mut threshold = u64::from(self.delay_min) + self.hystart_ack_delay_us(tcp);
                // Unpaced: the train reaches delay_min/2 (pacing may spread it over RTT/2).
                if !tcp.pacing {
                    threshold >>= 1;
                }
                if now.saturating_sub(self.round_start_us) > threshold {
                    self.found = true;
                    tcp.ssthresh = tcp.cwnd;
                }
            }
        }
        if self.hystart_detect & HYSTART_DELAY != 0 {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh =
                    (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                    tcp.ssthresh = tcp.cwnd;
                }
            }
        }
    }
}
