//! PROBE_BW (draft §4.3.4): cycle the pacing gain over 8 phases of one min-RTT each —
//! 5/4 to probe for more bandwidth, 3/4 to drain what the probe queued, then 6 × 1 —
//! starting at a random phase (never the draining one) so that flows desynchronise.

use super::{Bbr, Mode, BBR_UNIT};
use crate::cc::{RateSample, TcpCc};

pub(crate) const CYCLE_LEN: usize = 8;
pub(crate) const PACING_GAIN: [u32; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4, // probe for more bandwidth
    BBR_UNIT * 3 / 4, // drain the queue and/or yield to other flows
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The start phase is drawn from the last 7 (Linux `bbr_cycle_rand`).
const CYCLE_RAND: u32 = 7;

/// A small deterministic generator (SplitMix64) seeded per flow: no OS randomness.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (`get_random_u32_below`).
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }
}

impl Bbr {
    /// Enter PROBE_BW at a random phase other than the 3/4 one: the index is drawn from
    /// 1..=7 and immediately advanced, giving phases 2..7 or 0.
    pub(crate) fn reset_probe_bw_mode(&mut self, tcp: &TcpCc) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase(tcp);
    }

    fn advance_cycle_phase(&mut self, tcp: &TcpCc) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = tcp.delivered_time;
    }

    pub(crate) fn update_cycle_phase(&mut self, tcp: &TcpCc, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tcp, rs) {
            self.advance_cycle_phase(tcp);
        }
    }

    /// A phase lasts one min RTT; the probing phase also until inflight reaches
    /// 5/4·BDP (or a loss shows it will not fit); the draining phase ends early once
    /// inflight is down to 1·BDP.
    fn is_next_cycle_phase(&self, tcp: &TcpCc, rs: &RateSample) -> bool {
        let elapsed_us = tcp
            .delivered_time
            .saturating_sub(self.cycle_mstamp)
            .as_micros();
        let is_full_length = elapsed_us > u64::from(self.min_rtt_us);
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tcp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tcp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tcp, bw, BBR_UNIT)
    }
}
