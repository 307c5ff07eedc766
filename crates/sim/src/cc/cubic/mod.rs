//! CUBIC (RFC 9438) as Linux implements it (`net/ipv4/tcp_cubic.c`, "BIC-TCP v2.3" with
//! HyStart), in Linux's own integer arithmetic so that windows match the kernel's:
//!
//! - time in the cubic function is counted in jiffies (`HZ` = 1000) and converted to units
//!   of 2⁻¹⁰ s (`BICTCP_HZ`); C = `bic_scale`·10/1024 = 0.4004 and β = 717/1024 = 0.7002;
//! - the window grows through Linux's `cnt` ("one segment per `cnt` segments acked",
//!   `tcp_cong_avoid_ai`), recomputed at most once per jiffy, not by setting cwnd directly;
//! - the cube root is exact (floor) where Linux uses a table plus one Newton step
//!   (≈0.2 % error): K may differ from the kernel's by a unit of 1/1024 s.
//!
//! Differences from RFC 9438 that Linux has, and so do we: the Reno-friendly estimate keeps
//! α = 3(1−β)/(1+β) even above W_max (§4.3 switches to α = 1 there); no HyStart++
//! (RFC 9406) but the original HyStart (Ha & Rhee 2008) with ACK-train and delay detection.

mod hystart;

use super::{
    cong_avoid_ai, jiffies, slow_start_prologue, AckEvent, CaState, CongestionControl, CwndEvent,
    ParamError, ParamSpec, Params, TcpCc, HZ,
};
use hystart::{HYSTART_ACK_TRAIN, HYSTART_DELAY};

/// CUBIC's parameters, named after Linux's module parameters (`tcp_cubic.c`); the defaults
/// are Linux 6.x's. β follows RFC 9438 and Linux: it multiplies cwnd at a loss (the 2008
/// CUBIC paper's "β = 0.2" is a decrease *by* 0.2, i.e. `beta = 0.8`).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::real(
        "beta",
        717.0 / 1024.0,
        0.05,
        0.95,
        "",
        "multiplicative decrease: cwnd × beta after a loss (RFC 9438 β_cubic; Linux beta/1024)",
    ),
    ParamSpec::real(
        "c",
        0.4,
        0.01,
        10.0,
        "segments/s³",
        "scaling constant C of W(t) = C·(t − K)³ + W_max (Linux bic_scale·10/1024)",
    ),
    ParamSpec::flag(
        "fast_convergence",
        true,
        "a loss below the previous W_max lowers W_max further, to (1 + beta)/2 of cwnd",
    ),
    ParamSpec::flag(
        "tcp_friendliness",
        true,
        "never grow slower than the Reno-friendly estimate W_est (RFC 9438 §4.3)",
    ),
    ParamSpec::flag(
        "hystart",
        true,
        "HyStart (Ha & Rhee 2008): leave slow start on ACK-train length or delay increase",
    ),
    ParamSpec::int(
        "hystart_detect",
        3,
        0,
        3,
        "",
        "HyStart's detectors: 1 ACK train, 2 delay increase, 3 both",
    ),
    ParamSpec::int(
        "hystart_low_window",
        16,
        2,
        1 << 20,
        "segments",
        "HyStart acts only from this cwnd on",
    ),
    ParamSpec::int(
        "hystart_ack_delta_us",
        2000,
        0,
        1_000_000,
        "µs",
        "HyStart: ACKs this close together belong to one ACK train",
    ),
    ParamSpec::int(
        "initial_ssthresh",
        0,
        0,
        1 << 30,
        "segments",
        "initial slow-start threshold (0: none, slow start until the first loss or HyStart)",
    ),
    ParamSpec::int(
        "gso_max_size",
        65_536,
        0,
        1 << 20,
        "bytes",
        "sk_gso_max_size HyStart allows for in its ACK-train test (0: a host with GSO off)",
    ),
];

/// Fixed-point scale of β (`BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// Time unit of the cubic function: 2^-10 s (`BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;

#[derive(Clone, Debug)]
pub struct Cubic {
    // Parameters (Linux module parameters).
    fast_convergence: bool,
    /// β in 1/1024 (Linux `beta` = 717).
    beta: u32,
    initial_ssthresh: u32,
    /// C in 1/1024 per 10 (Linux `bic_scale` = 41, C = 41·10/1024).
    bic_scale: u32,
    tcp_friendliness: bool,
    hystart: bool,
    hystart_detect: u32,
    hystart_low_window: u32,
    hystart_ack_delta_us: u32,
    /// `sk_gso_max_size` in bytes (64 KB with GSO, Linux's default; 0 without), for
    /// HyStart's allowance for TSO/GRO delays.
    gso_max_size: u32,
    // Derived constants (`cubictcp_register`).
    /// Acks per Reno-friendly cwnd increment, ×8/cwnd: 8·(1+β)/(3·(1−β)) (RFC 9438 §4.3:
    /// α_cubic = 3(1−β)/(1+β) segments per RTT).
    beta_scale: u32,
    /// C·1024 (`cube_rtt_scale`).
    cube_rtt_scale: u32,
    /// 2^40 / (C·1024): K = ∛(cube_factor · (W_max − cwnd)) in 2^-10 s (`cube_factor`).
    cube_factor: u64,
    // State (`struct bictcp`).
    /// Increase cwnd by one segment per `cnt` segments acked.
    pub(crate) cnt: u32,
    /// W_max: cwnd before the last reduction (after fast convergence).
    pub(crate) last_max_cwnd: u32,
    last_cwnd: u32,
    /// Jiffy of the last `cnt` update.
    last_time: u64,
    /// W_max of the current epoch's curve (cwnd at epoch start if above last_max_cwnd).
    pub(crate) origin_point: u32,
    /// K in 2^-10 s.
    pub(crate) k: u64,
    /// Minimum RTT in µs (0: none yet).
    pub(crate) delay_min: u32,
    /// Jiffy the current congestion-avoidance epoch began (None: no epoch).
    pub(crate) epoch_start: Option<u64>,
    /// Segments acked in this epoch, for the Reno-friendly estimate.
    ack_cnt: u32,
    /// W_est, the Reno-friendly window estimate (RFC 9438 §4.3).
    pub(crate) tcp_cwnd: u32,
    // HyStart.
    sample_cnt: u8,
    pub(crate) found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt: u32,
}

impl Default for Cubic {
    fn default() -> Self {
        Self::with(
            true,
            717,
            41,
            true,
            true,
            HYSTART_ACK_TRAIN | HYSTART_DELAY,
            16,
            2000,
            0,
            65_536,
        )
    }
}

impl Cubic {
    #[allow(clippy::too_many_arguments)]
    fn with(
        fast_convergence: bool,
        beta: u32,
        bic_scale: u32,
        tcp_friendliness: bool,
        hystart: bool,
        hystart_detect: u32,
        hystart_low_window: u32,
        hystart_ack_delta_us: u32,
        initial_ssthresh: u32,
        gso_max_size: u32,
    ) -> Self {
        let cube_rtt_scale = bic_scale * 10;
        Cubic {
            fast_convergence,
            beta,
            initial_ssthresh,
            bic_scale,
            tcp_friendliness,
            hystart,
            hystart_detect,
            hystart_low_window,
            hystart_ack_delta_us,
            gso_max_size,
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            cube_rtt_scale,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / u64::from(cube_rtt_scale),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt: u32::MAX,
        }
    }

    /// Build from the flow's parameters (`PARAMS`): `beta` and `c` as fractions, stored as
    /// Linux does (β·1024 and C·1024/10).
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(Self::with(
            p.flag("fast_convergence"),
            (p.real("beta") * f64::from(BETA_SCALE)).round() as u32,
            (p.real("c") * f64::from(BETA_SCALE) / 10.0)
                .round()
                .max(1.0) as u32,
            p.flag("tcp_friendliness"),
            p.flag("hystart"),
            p.int("hystart_detect"),
            p.int("hystart_low_window"),
            p.int("hystart_ack_delta_us"),
            p.int("initial_ssthresh"),
            p.int("gso_max_size"),
        ))
    }

    /// `bictcp_reset`: forget the epoch, W_max and the delay minimum.
    fn reset(&mut self) {
        let fresh = Self::with(
            self.fast_convergence,
            self.beta,
            self.bic_scale,
            self.tcp_friendliness,
            self.hystart,
            self.hystart_detect,
            self.hystart_low_window,
            self.hystart_ack_delta_us,
            self.initial_ssthresh,
            self.gso_max_size,
        );
        *self = fresh;
    }

    /// `bictcp_update`: recompute `cnt` (segments acked per +1 segment).
    fn update(&mut self, tcp: &TcpCc, cwnd: u32, acked: u32) {
        let now = jiffies(tcp.now);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        // Unchanged cwnd and updated less than HZ/32 ago: keep cnt.
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // The cubic part changes at most once per jiffy; every reduction ends the epoch.
        if !(self.epoch_start.is_some() && now == self.last_time) {
            self.cubic_cnt(now, cwnd, acked);
        }
        self.reno_friendly(cwnd);
        // At most one segment per two acked: cwnd grows at most 1.5× per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// The cubic window function, RFC 9438 §4.2, evaluated one RTT ahead.
    fn cubic_cnt(&mut self, now: u64, cwnd: u32, acked: u32) {
        self.last_cwnd = cwnd;
        self.last_time = now;
        let epoch_start = match self.epoch_start {
            Some(e) => e,
            None => {
                // A new epoch (§4.2): W_est starts at cwnd (§4.3); K from eq. 2 with the
                // current cwnd as cwnd_epoch, or K = 0 if we are above W_max (§4.2 last ¶).
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    self.k = cube_root(self.cube_factor * u64::from(self.last_max_cwnd - cwnd));
                    self.origin_point = self.last_max_cwnd;
                }
                now
            }
        };
        // §4.2: target = W_cubic(t + RTT), t since the epoch start, RTT = delay_min
        // (rounded up to jiffies as usecs_to_jiffies does); then in 2^-10 s.
        let rtt_j = u64::from(self.delay_min).div_ceil(1_000_000 / HZ);
        let t = ((now - epoch_start + rtt_j) << BICTCP_HZ) / HZ;
        let offs = t.abs_diff(self.k);
        // Eq. 1: C·(t−K)³, with C = cube_rtt_scale/1024 and t in 2^-10 s.
        let delta =
            (u128::from(self.cube_rtt_scale) * u128::from(offs).pow(3)) >> (10 + 3 * BICTCP_HZ);
        let delta = u32::try_from(delta).unwrap_or(u32::MAX);
        let target = if t < self.k {
            self.origin_point.saturating_sub(delta) // concave region, §4.4
        } else {
            self.origin_point.saturating_add(delta) // convex region, §4.5
        };
        // §4.4/§4.5: cwnd grows by (target − cwnd)/cwnd per acked segment.
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        // Linux: with no W_max yet (no loss so far), grow at least 5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// RFC 9438 §4.3: if Reno with α = 3(1−β)/(1+β) would have a larger window (W_est),
    /// grow at least as fast as it: one segment per cwnd/(W_est − cwnd) acked.
    fn reno_friendly(&mut self, cwnd: u32) {
        if !self.tcp_friendliness {
            return;
        }
        let per_segment = ((cwnd * self.beta_scale) >> 3).max(1);
        while self.ack_cnt > per_segment {
            self.ack_cnt -= per_segment;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
    }
}

/// ⌊∛a⌋.
fn cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while (x + 1).pow(3) <= a {
        x += 1;
    }
    while x.pow(3) > a {
        x -= 1;
    }
    x
}

impl CongestionControl for Cubic {
    fn init(&mut self, tcp: &mut TcpCc) {
        self.reset();
        if self.hystart {
            self.hystart_reset(tcp);
        }
        if !self.hystart && self.initial_ssthresh > 0 {
            tcp.ssthresh = self.initial_ssthresh;
        }
    }

    /// RFC 9438 §4.6 multiplicative decrease (ssthresh = β·cwnd, at least 2) and §4.7
    /// fast convergence (a flow that lost before regaining its previous W_max releases
    /// bandwidth: W_max = cwnd·(1+β)/2). Both use cwnd as Linux does, not flight size.
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if tcp.cwnd < self.last_max_cwnd && self.fast_convergence {
            (tcp.cwnd * (BETA_SCALE + self.beta)) / (2 * BETA_SCALE)
        } else {
            tcp.cwnd
        };
        ((tcp.cwnd * self.beta) / BETA_SCALE).max(2)
    }

    #[inline]
    fn cong_avoid(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        // RFC 9438 §5.8: no growth while application-limited; §4.10: standard slow start
        // (HyStart, in pkts_acked, ends it early).
        let Some(acked) = slow_start_prologue(tcp, ev.acked) else {
            return;
        };
        let cwnd = tcp.cwnd;
        self.update(tcp, cwnd, acked);
        let cnt = self.cnt;
        cong_avoid_ai(tcp, cnt, acked);
    }

    #[inline]
    fn pkts_acked(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        let Some(rtt) = ev.rtt else { return };
        // Discard delay samples during the first second after a reduction.
        if let Some(e) = self.epoch_start {
            if jiffies(tcp.now).saturating_sub(e) < HZ {
                return;
            }
        }
        let delay = u32::try_from(rtt.as_micros()).unwrap_or(u32::MAX).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && tcp.in_slow_start() && self.hystart {
            self.hystart_update(tcp, delay);
        }
    }

    /// RFC 9438 §4.8: after a timeout the curve starts afresh (W_max and K are forgotten).
    fn set_state(&mut self, tcp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tcp);
        }
    }

    /// RFC 9438 §5.8: idle time must not count in t, so shift the epoch by the idle period.
    fn cwnd_event(&mut self, tcp: &mut TcpCc, ev: CwndEvent) {
        if ev != CwndEvent::TxStart {
            return;
        }
        let now = jiffies(tcp.now);
        let idle = now.saturating_sub(jiffies(tcp.lsndtime));
        if let Some(e) = self.epoch_start.as_mut() {
            if idle > 0 {
                *e = (*e + idle).min(now);
            }
        }
    }
}

/// Exposed for the tests: K in seconds of the current epoch.
#[cfg(test)]
impl Cubic {
    fn k_secs(&self) -> f64 {
        self.k as f64 / 1024.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::{periodic_loss_average_window, TestSender};
    use crate::units::SimTime;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    /// A sender in congestion avoidance at `cwnd` with a 100 ms minimum RTT known.
    fn in_ca(cwnd: u32) -> TestSender<Cubic> {
        let mut s = TestSender::new(Cubic::default());
        s.tcp.cwnd = cwnd;
        s.tcp.ssthresh = cwnd;
        s
    }

    /// Acks one segment at a time, a window per RTT, for `dur`.
    fn run_acks(s: &mut TestSender<Cubic>, dur: SimTime) {
        let end = s.now() + dur;
        while s.now() < end {
            let w = s.cwnd();
            let step = SimTime(s.rtt.as_nanos() / u64::from(w));
            for _ in 0..w {
                if s.now() >= end {
                    break;
                }
                s.advance(step);
                s.ack(1);
            }
        }
    }

    #[test]
    fn ssthresh_is_beta_times_cwnd_and_records_wmax() {
        let mut s = in_ca(100);
        // RFC 9438 §4.6: ssthresh = β·cwnd = 100·717/1024 = 70.02 → 70.
        assert_eq!(s.cc.ssthresh(&mut s.tcp), 70);
        assert_eq!(s.cc.last_max_cwnd, 100);
        // Never below 2 segments.
        s.tcp.cwnd = 2;
        assert_eq!(s.cc.ssthresh(&mut s.tcp), 2);
    }

    #[test]
    fn fast_convergence_lowers_wmax_to_cwnd_times_one_plus_beta_over_two() {
        let mut s = in_ca(100);
        s.cc.ssthresh(&mut s.tcp);
        // A second loss at 80 < W_max = 100 (RFC 9438 §4.7):
        // W_max = 80·(1024+717)/2048 = 68.01 → 68; ssthresh = 80·717/1024 = 56.01 → 56.
        s.tcp.cwnd = 80;
        assert_eq!(s.cc.ssthresh(&mut s.tcp), 56);
        assert_eq!(s.cc.last_max_cwnd, 68);
        // Without fast convergence W_max is simply the cwnd at the loss.
        let mut p = std::collections::BTreeMap::new();
        p.insert("fast_convergence".to_string(), 0.0);
        let mut s = TestSender::new(
            Cubic::from_params(&Params::new("cubic", PARAMS, &p).unwrap()).unwrap(),
        );
        s.tcp.cwnd = 100;
        s.cc.ssthresh(&mut s.tcp);
        s.tcp.cwnd = 80;
        s.cc.ssthresh(&mut s.tcp);
        assert_eq!(s.cc.last_max_cwnd, 80);
    }

    #[test]
    fn epoch_start_computes_k_and_the_first_growth_rate() {
        let mut s = in_ca(100);
        s.ack(1); // delay_min = 100 ms
        s.lose(); // W_max = 100, cwnd = ssthresh = 70
        assert_eq!(s.cwnd(), 70);
        s.advance(ms(1));
        s.ack(1);
        // Eq. 2: K = ∛(W_max·(1−β)/C) = ∛(30/0.4004) s. In Linux units (2^-10 s):
        // ⌊∛(⌊2^40/410⌋·30)⌋ = ⌊∛80452070310⌋ = 4316 → 4.2148 s (RFC with C=0.4: 4.2172 s).
        assert_eq!(s.cc.k, 4316);
        assert!((s.cc.k_secs() - (30.0f64 / 0.4).cbrt()).abs() < 0.003);
        assert_eq!(s.cc.origin_point, 100);
        // Target one RTT ahead: t = 100 jiffies → 102 units; offs = 4214;
        // C·offs³ = 410·4214³ >> 40 = 27 → target 73; cnt = 70/(73−70) = 23.
        assert_eq!(s.cc.cnt, 23);
    }

    #[test]
    fn concave_growth_follows_w_cubic_and_returns_to_wmax_after_k() {
        let mut s = in_ca(100);
        s.ack(1);
        s.lose();
        let k = SimTime((30.0f64 / 0.4004).cbrt().mul_add(1e9, 0.0) as u64);
        // Halfway: W(K/2) = 100 − 0.4004·2.108³ = 96.25; the target is one RTT ahead and
        // Linux floors the distance below W_max: 100 − ⌊0.4004·2.008³⌋ = 100 − ⌊3.24⌋ = 97,
        // which cwnd reaches within that RTT.
        run_acks(&mut s, SimTime(k.as_nanos() / 2));
        assert_eq!(s.cwnd(), 97);
        // At K the curve is at W_max (and flat: W(K+RTT) = 100.0004).
        run_acks(&mut s, SimTime(k.as_nanos() - k.as_nanos() / 2));
        assert_eq!(s.cwnd(), 100);
    }

    #[test]
    fn convex_growth_beyond_wmax_probes_faster_and_faster() {
        let mut s = in_ca(100);
        s.ack(1);
        s.lose();
        // 3 s beyond K: W = 100 + 0.4004·3³ = 110.8, W(t + RTT) = 100 + 0.4004·3.1³ = 111.9.
        let k = (30.0f64 / 0.4004).cbrt();
        run_acks(&mut s, SimTime(((k + 3.0) * 1e9) as u64));
        assert!((110..=111).contains(&s.cwnd()), "cwnd {}", s.cwnd());
        // One more second: W(K+4) = 125.6.
        run_acks(&mut s, SimTime::from_secs(1));
        assert!((125..=127).contains(&s.cwnd()), "cwnd {}", s.cwnd());
    }

    #[test]
    fn reno_friendly_region_dominates_at_short_rtt_and_small_window() {
        // W_max = 20 at RTT 10 ms: K = ∛(6/0.4) = 2.47 s, so after 1 s W_cubic is still
        // below 19, while the Reno-friendly estimate (RFC 9438 §4.3) grew from 14 by
        // α ≈ 0.53 segment per RTT for 100 RTTs. Linux counts one segment per
        // ⌊15·cwnd/8⌋ + 1 acks (15 = ⌊8·(1+β)/(3·(1−β))⌋), i.e. α = 0.52 at cwnd ≈ 40,
        // and cwnd trails W_est by a segment: 14 + 52 = 66 ± 2.
        let mut s = in_ca(20);
        s.rtt = ms(10);
        s.ack(1);
        s.lose();
        assert_eq!(s.cwnd(), 14);
        run_acks(&mut s, SimTime::from_secs(1));
        assert!(
            s.cc.tcp_cwnd >= 64 && s.cc.tcp_cwnd <= 68,
            "W_est {}",
            s.cc.tcp_cwnd
        );
        assert!(
            s.cwnd() + 1 >= s.cc.tcp_cwnd && s.cwnd() <= s.cc.tcp_cwnd,
            "cwnd {}",
            s.cwnd()
        );
        // Without the Reno-friendly region the window is the cubic curve's.
        let mut p = std::collections::BTreeMap::new();
        p.insert("tcp_friendliness".to_string(), 0.0);
        let mut s = TestSender::new(
            Cubic::from_params(&Params::new("cubic", PARAMS, &p).unwrap()).unwrap(),
        );
        s.tcp.cwnd = 20;
        s.tcp.ssthresh = 20;
        s.rtt = ms(10);
        s.ack(1);
        s.lose();
        run_acks(&mut s, SimTime::from_secs(1));
        assert!(s.cwnd() <= 19, "cwnd {}", s.cwnd());
    }

    #[test]
    fn growth_is_at_most_one_segment_per_two_acked() {
        // Far above the curve's origin the target is huge; cnt is floored at 2.
        let mut s = in_ca(10);
        s.cc.last_max_cwnd = 10;
        s.ack(1);
        s.advance(SimTime::from_secs(30));
        s.ack(1);
        assert_eq!(s.cc.cnt, 2);
    }

    #[test]
    fn hystart_exits_slow_start_on_delay_increase() {
        let mut s = TestSender::new(Cubic::default());
        // Six ACKs at 100 ms RTT, 3 ms apart (no ACK train): cwnd 10 → 16, delay_min 100 ms.
        for _ in 0..6 {
            s.advance(ms(3));
            s.ack(1);
        }
        assert_eq!((s.cwnd(), s.cc.delay_min), (16, 100_000));
        // A new round begins; its RTTs are 112 ms: 12 ms < delay_min/8 = 12.5 ms. No exit.
        s.cc.end_seq = 0;
        for _ in 0..12 {
            s.advance(ms(3));
            s.ack_with_rtt(1, Some(ms(112)));
        }
        assert!(!s.cc.found && s.tcp.in_slow_start());
        // Next round at 113 ms: after the 8 samples that establish the round's minimum,
        // the 9th sees 113 > 100 + 12.5 and ends slow start at the current cwnd.
        s.cc.end_seq = 0;
        for i in 0..9 {
            s.advance(ms(3));
            s.ack_with_rtt(1, Some(ms(113)));
            assert_eq!(s.cc.found, i == 8, "ack {i}");
        }
        // pkts_acked (HyStart) runs before cong_avoid: the 9th ACK sets ssthresh = cwnd =
        // 16 + 12 + 8 and is then counted in congestion avoidance, not slow start.
        assert_eq!(s.tcp.ssthresh, 36);
        assert_eq!(s.cwnd(), 36);
    }

    #[test]
    fn hystart_delay_threshold_is_clamped_to_4_to_16_ms() {
        // delay_min 20 ms: 20/8 = 2.5 ms → 4 ms; 23.9 ms does not exit, 24.1 ms does.
        for (rtt_us, exits) in [(23_900, false), (24_100, true)] {
            let mut s = TestSender::new(Cubic::default());
            s.tcp.cwnd = 16;
            s.ack_with_rtt(1, Some(ms(20)));
            s.cc.end_seq = 0;
            for _ in 0..9 {
                s.advance(ms(3));
                s.ack_with_rtt(1, Some(SimTime::from_micros(rtt_us)));
            }
            assert_eq!(s.cc.found, exits, "rtt {rtt_us} µs");
        }
    }

    #[test]
    fn hystart_ack_train_exits_when_closely_spaced_acks_span_half_the_min_rtt() {
        let mut s = TestSender::new(Cubic::default());
        s.tcp.cwnd = 30;
        s.ack_with_rtt(1, Some(ms(40))); // delay_min 40 ms; round starts now
        s.cc.end_seq = u64::MAX; // one long round
                                 // ACKs every 1 ms (≤ hystart_ack_delta 2 ms) at the minimum RTT: the train is
                                 // "long" once it spans more than (delay_min + allowance)/2 = (40 + 1)/2 = 20.5 ms
                                 // (unpaced; the TSO/GRO allowance is 4·64 KB at 2·30·1448 B/40 ms = 2.2 MB/s, i.e.
                                 // 0.12 s, capped at 1 ms).
        for i in 1..=21 {
            s.advance(ms(1));
            s.ack_with_rtt(1, Some(ms(40)));
            assert_eq!(s.cc.found, i == 21, "ack {i}");
        }
        assert_eq!(s.tcp.ssthresh, s.cwnd());
    }

    #[test]
    fn hystart_ignores_small_windows() {
        let mut s = TestSender::new(Cubic::default());
        s.ack_with_rtt(1, Some(ms(20)));
        s.cc.end_seq = u64::MAX;
        for _ in 0..4 {
            s.advance(ms(1));
            s.ack_with_rtt(1, Some(ms(60)));
        }
        // cwnd 15 < hystart_low_window 16: no samples counted yet.
        assert_eq!((s.cwnd(), s.cc.sample_cnt, s.cc.found), (15, 0, false));
    }

    #[test]
    fn timeout_forgets_wmax_epoch_and_delay_min() {
        let mut s = in_ca(100);
        s.ack(1);
        s.lose();
        s.ack(1);
        s.rto();
        assert_eq!((s.cwnd(), s.tcp.ssthresh), (1, 49)); // 70·717/1024 = 49.01
        assert_eq!(
            (s.cc.last_max_cwnd, s.cc.epoch_start, s.cc.delay_min),
            (0, None, 0)
        );
    }

    #[test]
    fn idle_time_does_not_count_in_the_epoch() {
        let mut s = in_ca(100);
        s.ack(1);
        s.lose();
        s.ack(1);
        let e = s.cc.epoch_start.unwrap();
        s.tcp.lsndtime = s.now();
        s.advance(SimTime::from_secs(5));
        s.cc.cwnd_event(&mut s.tcp, CwndEvent::TxStart);
        assert_eq!(s.cc.epoch_start, Some(e + 5 * HZ));
    }

    #[test]
    fn no_growth_when_application_limited() {
        let mut s = in_ca(50);
        s.tcp.is_cwnd_limited = false;
        run_acks(&mut s, SimTime::from_secs(2));
        assert_eq!(s.cwnd(), 50);
    }

    fn avg_window(rtt_ms: u64, p: f64) -> f64 {
        let mut s = TestSender::new(Cubic::default());
        s.tcp.ssthresh = 10; // skip slow start
        periodic_loss_average_window(&mut s, ms(rtt_ms), (1.0 / p).round() as u64, 200, 10)
    }

    /// RFC 9438 §5.1 eq. 7: AVG_W_cubic = (C·(3+β)/(4·(1−β)))^¼ · (RTT/p)^¾.
    fn cubic_model(rtt: f64, p: f64) -> f64 {
        (0.4 * 3.7 / 1.2f64).powf(0.25) * (rtt / p).powf(0.75)
    }

    /// The Reno-friendly estimate is AIMD with α = 3(1−β)/(1+β), β = 0.7, whose average
    /// window under periodic loss is √(α(1+β)/(2(1−β)p)) = √(3/(2p)), Reno's.
    fn reno_friendly_model(p: f64) -> f64 {
        (1.5 / p).sqrt()
    }

    // Tolerance 4 %: the model is a fluid one (real-valued window, instantaneous
    // reduction), the implementation has integer windows, a recovery round trip, and at
    // the crossing of the two regions its window is the max of both curves at every
    // instant, a little above the max of their averages (RTT 10 ms, p = 1e-6: +2.6 %).
    //
    // Not tested: RTT 100 ms, p = 1e-4 (table: 187). Linux's integer target
    // (W_max − ⌊C·(K−t)³⌋) reaches W_max once C·(K−t)³ < 1, i.e. 1.4 s (14 RTTs) before
    // K; with a 47-RTT cycle the deterministic loss then always falls on that plateau, at
    // W_max, so fast convergence never triggers and the average is 212.

    #[test]
    fn response_function_follows_rfc9438_table_1_at_rtt_100ms() {
        // RFC 9438 §5.1 Table 1 (RTT 0.1 s, C = 0.4): p = 1e-5 → 1054, p = 1e-6 → 5926.
        for (p, table) in [(1e-5, 1054.0), (1e-6, 5926.0)] {
            let model = cubic_model(0.1, p);
            assert!((model / table - 1.0).abs() < 0.001);
            let w = avg_window(100, p);
            assert!(
                (w / model - 1.0).abs() < 0.04,
                "p {p}: {w:.1} vs model {model:.1}"
            );
        }
    }

    #[test]
    fn response_function_is_reno_friendly_at_rtt_10ms() {
        // RFC 9438 §5.1 Table 2 (RTT 0.01 s): for p ≥ 1e-6 CUBIC's average window is the
        // Reno-friendly one (table: 120, 379, 1200, from 1.2/√p; AIMD(α, β) gives
        // √(1.5/p) = 122, 387, 1225), where the cubic function alone gives 33, 187, 1054.
        for p in [1e-4, 1e-5, 1e-6] {
            let model = cubic_model(0.01, p).max(reno_friendly_model(p));
            let w = avg_window(10, p);
            assert!(
                (w / model - 1.0).abs() < 0.04,
                "p {p}: {w:.1} vs model {model:.1}"
            );
        }
    }

    #[test]
    fn hystart_ack_train_without_gso_allowance_exits_at_half_the_min_rtt() {
        let mut p = std::collections::BTreeMap::new();
        p.insert("gso_max_size".to_string(), 0.0);
        let mut s = TestSender::new(
            Cubic::from_params(&Params::new("cubic", PARAMS, &p).unwrap()).unwrap(),
        );
        s.tcp.cwnd = 30;
        s.ack_with_rtt(1, Some(ms(40)));
        s.cc.end_seq = u64::MAX;
        // Threshold 40/2 = 20 ms: the ACK at 21 ms exits (20 ms is not "more than").
        for i in 1..=21 {
            s.advance(ms(1));
            s.ack_with_rtt(1, Some(ms(40)));
            assert_eq!(s.cc.found, i == 21, "ack {i}");
        }
        // With the 1 ms allowance (default) the threshold is 20.5 ms: same ACK here, so
        // check the allowance itself.
        let s = TestSender::new(Cubic::default());
        let mut tcp = s.tcp.clone();
        tcp.srtt = ms(40);
        tcp.cwnd = 30;
        assert_eq!(s.cc.hystart_ack_delay_us(&tcp), 1_000);
        // At 10 Gbit/s-like rates it shrinks: cwnd 20000, srtt 20 ms: 2·20000·1448/0.02 s
        // = 2.9 GB/s → 4·65536/2.9e9 s = 90 µs.
        tcp.srtt = ms(20);
        tcp.cwnd = 20_000;
        assert_eq!(s.cc.hystart_ack_delay_us(&tcp), 90);
    }
}
