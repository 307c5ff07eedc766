//! ns-2's coarse-grained RTT/RTO estimator (`TcpAgent::rtt_update`, `rtt_timeout`,
//! `rtt_backoff` with the ns-2.35 defaults): RTT samples are counted in ticks of
//! `tcpTick_` (10 ms), SRTT is kept ×8 and RTTVAR ×4 in integers (Jacobson's fixed point),
//! RTO = (SRTT + 4·RTTVAR) ticks, at least `minrto_` (200 ms, applied before the backoff,
//! RFC 2988 style) and two ticks, at most `maxrto_` (60 s). Timestamps are off
//! (`timestamps_ false`): one timed segment per RTT (`rtt_active_`, `rtt_seq_`).

/// `tcpTick_`, seconds.
pub const TCP_TICK: f64 = 0.01;
/// `minrto_`, seconds.
pub const MIN_RTO: f64 = 0.2;
/// `maxrto_`, seconds.
pub const MAX_RTO: f64 = 60.0;
/// `rtxcur_init_`: the RTO before the first sample, seconds.
const RTXCUR_INIT: f64 = 3.0;
/// `rttvar_init_`, seconds.
const RTTVAR_INIT: f64 = 12.0;
const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
/// `rttvar_exp_`: RTO = SRTT + 2^rttvar_exp · RTTVAR.
const RTTVAR_EXP: u32 = 2;

#[derive(Clone, Debug)]
pub struct TickRtt {
    /// Last sample, in ticks.
    pub t_rtt: i64,
    /// 8 × SRTT in ticks.
    pub t_srtt: i64,
    /// 4 × RTTVAR in ticks.
    pub t_rttvar: i64,
    /// The un-backed-off RTO, seconds.
    pub t_rtxcur: f64,
    /// Backoff multiplier (1, 2, 4, ...).
    pub t_backoff: i64,
    /// `boot_time_`: the phase of this host's tick clock, uniform in [0, tick).
    boot_time: f64,
}

impl TickRtt {
    /// `rtt_init` with `srtt_init_ = 0`, `rttvar_init_ = 12`, `rtxcur_init_ = 3`.
    pub fn new(boot_time: f64) -> TickRtt {
        TickRtt {
            t_rtt: 0,
            t_srtt: ((0.0 / TCP_TICK) as i64) << SRTT_BITS,
            t_rttvar: ((RTTVAR_INIT / TCP_TICK) as i64) << RTTVAR_BITS,
            t_rtxcur: RTXCUR_INIT,
            t_backoff: 1,
            boot_time,
        }
    }

    /// A sample of `tao` seconds ending at `now`: counted in whole ticks of the sender's
    /// clock (the ticks the interval spans, at least one).
    pub fn update(&mut self, now: f64, tao: f64) {
        let sendtime = now - tao + self.boot_time;
        let tickoff = sendtime % TCP_TICK;
        self.t_rtt = (((tao + tickoff) / TCP_TICK) as i64).max(1);
        if self.t_srtt != 0 {
            let mut delta = self.t_rtt - (self.t_srtt >> SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> RTTVAR_BITS);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = self.t_rtt << SRTT_BITS;
            self.t_rttvar = self.t_rtt << (RTTVAR_BITS - 1);
        }
        let scaled = (self.t_rttvar << (RTTVAR_EXP + SRTT_BITS - RTTVAR_BITS)) + self.t_srtt;
        self.t_rtxcur = (scaled >> SRTT_BITS) as f64 * TCP_TICK;
    }

    /// The timeout to arm now, seconds (`rtt_timeout`, `rfc2988_ = true`).
    pub fn timeout(&self) -> f64 {
        let mut t = if self.t_rtxcur < MIN_RTO {
            MIN_RTO * self.t_backoff as f64
        } else {
            self.t_rtxcur * self.t_backoff as f64
        };
        t = t.min(MAX_RTO);
        t.max(2.0 * TCP_TICK)
    }

    /// `rtt_backoff`: double the multiplier while the RTO is below `maxrto_`; after more
    /// than three backoffs SRTT is folded into RTTVAR and forgotten.
    pub fn backoff(&mut self) {
        if self.t_backoff < 64 || self.timeout() < MAX_RTO {
            self.t_backoff <<= 1;
        }
        if self.t_backoff > 8 {
            self.t_rttvar += self.t_srtt >> SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    /// SRTT in seconds.
    pub fn srtt(&self) -> f64 {
        (self.t_srtt >> SRTT_BITS) as f64 * TCP_TICK
    }
}
