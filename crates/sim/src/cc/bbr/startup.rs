//! STARTUP and DRAIN (draft §4.3.2, §4.3.3): grow the sending rate by 2/ln 2 per round
//! until the bandwidth stops growing, then drain the queue that built up.

use super::{Bbr, Mode, BBR_SCALE, BBR_UNIT};
use crate::cc::{RateSample, TcpCc};

/// The bandwidth must grow by 25 % per round...
pub(crate) const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ...or after 3 rounds without such growth the pipe is full.
pub(crate) const FULL_BW_CNT: u32 = 3;

impl Bbr {
    /// Full-pipe detection (draft §4.3.2.2): at each round start of a non-app-limited
    /// sample, a max bandwidth ≥ 1.25 × the previous plateau resets the count; 3 rounds
    /// without it mean STARTUP filled the pipe.
    pub(crate) fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((u128::from(self.full_bw) * u128::from(FULL_BW_THRESH)) >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// STARTUP → DRAIN once the pipe is full (ssthresh = 1·BDP target, for the stack's
    /// benefit); DRAIN → PROBE_BW once what is in the network fits in 1·BDP (draft §4.3.3).
    pub(crate) fn check_drain(&mut self, tcp: &mut TcpCc) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tcp.ssthresh = self.inflight(tcp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tcp, tcp.packets_in_flight)
                <= self.inflight(tcp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tcp);
        }
    }
}
