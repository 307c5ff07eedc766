//! Compound TCP (Tan, Song, Zhang & Sridharan, "A Compound TCP Approach for High-speed
//! and Long Distance Networks", IEEE INFOCOM 2006; draft-sridharan-tcpm-ctcp-02), shaped
//! like the Linux port the testbed studies of the time ran (`tcp_compound.c` by Castellani,
//! Hemminger and Andrew, with γ auto-tuning; never merged into mainline Linux).
//!
//! The window is the sum of a loss-based part `cwnd` (Reno) and a delay-based part `dwnd`
//! (paper §3): win = cwnd + dwnd. Once per RTT, with a Vegas-style estimate of the
//! flow's packets queued, diff = win·(1 − BaseRTT/RTT) (in half packets, as the port):
//! - diff < γ: dwnd += max(⌊α·win^k⌋ − 1, 0), α = 1/8, k = 3/4 (paper eq. 6, binomial
//!   increase; zero for win ≤ 40, so small windows are pure Reno);
//! - diff ≥ γ: dwnd −= η·diff, not below 0 (η = 1; the delay part yields to queueing);
//! - on loss the whole window halves (β = 1/2). The paper splits the cut (cwnd/2 and
//!   dwnd = win/2 − cwnd/2); the port, whose behaviour we keep, hands the halved window
//!   to the loss part and zeroes dwnd whenever either part exceeds it (almost always).
//!
//! γ (30 packets) is tuned at each loss toward ¾ of the queue the loss-based part alone
//! would have built ("diff_reno"), averaged with weight ½ and clipped to [5, 30] (the
//! port's "gamma tuning", after the CTCP-TUBE paper).
//! The loss part grows by one segment per win segments acked (cwnd += 1/win, draft
//! §3.2), counted in segments as modern Linux does (the 2.6 port counted ACKs).

use super::{
    AckEvent, CaState, CongestionControl, CwndEvent, ParamError, ParamSpec, Params, TcpCc,
};

/// Compound's parameters (paper §3 and the Linux port's module parameters), with the
/// port's defaults.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::real(
        "alpha",
        0.125,
        0.0,
        16.0,
        "",
        "delay-window increase dwnd += alpha·win^k − 1 per RTT while diff < gamma (eq. 6)",
    ),
    ParamSpec::real(
        "k",
        0.75,
        0.0,
        2.0,
        "",
        "exponent k of the binomial increase alpha·win^k (HighSpeed-like aggressiveness)",
    ),
    ParamSpec::real(
        "beta",
        0.5,
        0.05,
        0.95,
        "",
        "multiplicative decrease: the whole window × beta after a loss (the paper's 1 − β)",
    ),
    ParamSpec::int(
        "eta",
        1,
        0,
        64,
        "",
        "delay-window decrease dwnd −= eta·diff per RTT once diff >= gamma",
    ),
    ParamSpec::int(
        "gamma",
        30,
        0,
        10_000,
        "packets",
        "initial gamma, the queue (diff) above which the delay window shrinks",
    ),
    ParamSpec::int(
        "gamma_low",
        5,
        0,
        10_000,
        "packets",
        "gamma tuning keeps gamma at or above this; gamma_low <= gamma_high",
    ),
    ParamSpec::int(
        "gamma_high",
        30,
        0,
        10_000,
        "packets",
        "gamma tuning keeps gamma at or below this",
    ),
];

const NONE: u32 = 0x7fff_ffff;
/// Fixed point of diff and diff_reno: half packets (`C_PARAM_SHIFT`).
const SHIFT: u32 = 1;

#[derive(Clone, Debug)]
pub struct Compound {
    alpha: f64,
    k: f64,
    /// Window kept after a loss, in 1/1024 (`beta`·1024; 512 for ½).
    keep: u32,
    eta: u32,
    gamma_low: u32,
    gamma_high: u32,
    lambda_shift: u32,
    /// Current γ in packets.
    pub(crate) gamma: u32,
    /// Loss-based window (segments).
    pub(crate) cwnd: u32,
    /// Delay-based window (segments).
    pub(crate) dwnd: u32,
    beg_snd_nxt: u64,
    beg_snd_una: u64,
    beg_cwnd: u32,
    pub(crate) base_rtt: u32,
    min_rtt: u32,
    pub(crate) cnt_rtt: u32,
    /// Queue the loss part alone would have built last RTT, in half packets.
    pub(crate) diff_reno: Option<u32>,
}

impl Compound {
    /// α·win^k − 1 increase, η·diff decrease, γ tuned in [gamma_low, gamma_high]; a loss
    /// keeps `beta` of the window.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        alpha: f64,
        k: f64,
        beta: f64,
        eta: u32,
        gamma: u32,
        gamma_low: u32,
        gamma_high: u32,
    ) -> Self {
        Compound {
            alpha,
            k,
            keep: (beta * 1024.0).round() as u32,
            eta,
            gamma_low,
            gamma_high,
            lambda_shift: 1,
            gamma,
            cwnd: 0,
            dwnd: 0,
            beg_snd_nxt: 0,
            beg_snd_una: 0,
            beg_cwnd: 0,
            base_rtt: NONE,
            min_rtt: NONE,
            cnt_rtt: 0,
            diff_reno: None,
        }
    }

    /// Build from the flow's parameters (`PARAMS`); gamma_low must not exceed gamma_high.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let (low, high) = (p.int("gamma_low"), p.int("gamma_high"));
        if low > high {
            return Err(ParamError::new(
                if p.given("gamma_low") {
                    "gamma_low"
                } else {
                    "gamma_high"
                },
                format!(
                    "compound needs gamma_low <= gamma_high, got gamma_low = {low} and \
                     gamma_high = {high}"
                ),
            ));
        }
        Ok(Self::new(
            p.real("alpha"),
            p.real("k"),
            p.real("beta"),
            p.int("eta"),
            p.int("gamma"),
            low,
            high,
        ))
    }

    /// ⌊α·win^k⌋: for k = ¾ through the exact integer root (the port's arithmetic).
    fn binomial(&self, win: u32) -> u64 {
        let w = u64::from(win);
        let root = if self.k == 0.75 {
            quartic_root(w.pow(3)) as f64
        } else {
            (w as f64).powf(self.k)
        };
        (self.alpha * root).floor() as u64
    }

    fn enable(&mut self, tcp: &TcpCc) {
        self.beg_snd_nxt = tcp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = NONE;
        self.diff_reno = None;
    }

    /// The per-RTT update of dwnd (paper §3.3).
    fn update_dwnd(&mut self, tcp: &TcpCc) {
        let old_wnd = ((self.beg_snd_nxt - self.beg_snd_una) / u64::from(tcp.mss.max(1))) as u32;
        let old_cwnd = self.beg_cwnd;
        self.beg_snd_una = self.beg_snd_nxt;
        self.beg_snd_nxt = tcp.snd_nxt;
        self.beg_cwnd = self.cwnd;
        if self.cnt_rtt > 2 {
            let rtt = u64::from(self.min_rtt);
            let base = u64::from(self.base_rtt);
            // diff = (Expected − Actual)·BaseRTT = win − win·BaseRTT/RTT, in half packets.
            let queued = |w: u32| -> u64 {
                let w2 = u64::from(w) << SHIFT;
                w2 - (w2 * base / rtt)
            };
            let diff = queued(old_wnd);
            self.diff_reno = Some(queued(old_cwnd) as u32);
            if diff < u64::from(self.gamma) << SHIFT {
                // α·win^k − 1 (k = ¾, α = ⅛: ⌊(win³)^¼⌋ >> 3, the port's arithmetic).
                let x = self.binomial(old_wnd);
                self.dwnd += (x as u32).saturating_sub(1);
            } else {
                let cut = diff * u64::from(self.eta);
                let d2 = u64::from(self.dwnd) << SHIFT;
                self.dwnd = if d2 < cut {
                    0
                } else {
                    ((d2 - cut) >> SHIFT) as u32
                };
            }
        }
        self.cnt_rtt = 0;
        self.min_rtt = NONE;
    }
}

impl Default for Compound {
    fn default() -> Self {
        Self::new(0.125, 0.75, 0.5, 1, 30, 5, 30)
    }
}

/// ⌊a^¼⌋.
fn quartic_root(a: u64) -> u64 {
    let mut x = (a as f64).sqrt().sqrt() as u64;
    while (x + 1).pow(4) <= a {
        x += 1;
    }
    while x > 0 && x.pow(4) > a {
        x -= 1;
    }
    x
}

impl CongestionControl for Compound {
    fn init(&mut self, tcp: &mut TcpCc) {
        self.base_rtt = NONE;
        self.enable(tcp);
        self.dwnd = 0;
        self.cwnd = tcp.cwnd;
    }

    /// Keep `beta` of the whole window (½: halve it, the paper's β = ½) and tune γ toward
    /// ¾ of diff_reno.
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        if let Some(d) = self.diff_reno.take() {
            let sample = ((u64::from(d) * 3) >> (SHIFT + 2)) as i64;
            let g = i64::from(self.gamma);
            let g = g + ((sample - g) >> self.lambda_shift);
            self.gamma = (g.max(0) as u32).clamp(self.gamma_low, self.gamma_high);
        }
        (((u64::from(tcp.cwnd) * u64::from(self.keep)) >> 10) as u32).max(2)
    }

    #[inline]
    fn pkts_acked(&mut self, _tcp: &mut TcpCc, ev: &AckEvent) {
        let Some(rtt) = ev.rtt else { return };
        let vrtt = u32::try_from(rtt.as_micros()).unwrap_or(NONE - 1) + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    fn set_state(&mut self, tcp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tcp);
        }
    }

    /// Restart after idle: fresh samples, but BaseRTT is kept (CTCP draft).
    fn cwnd_event(&mut self, tcp: &mut TcpCc, ev: CwndEvent) {
        if matches!(ev, CwndEvent::CwndRestart | CwndEvent::TxStart) {
            let base = self.base_rtt;
            self.init(tcp);
            self.base_rtt = base;
        }
    }

    #[inline]
    fn cong_avoid(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        // Reductions made by the stack (recovery, RTO) come out of cwnd first.
        if self.cwnd + self.dwnd > tcp.cwnd {
            if self.cwnd > tcp.cwnd || self.dwnd > tcp.cwnd {
                self.cwnd = tcp.cwnd;
                self.dwnd = 0;
            } else {
                self.cwnd = tcp.cwnd - self.dwnd;
            }
        }
        if !tcp.is_cwnd_limited {
            return;
        }
        // Loss-based part: slow start, then one segment per (cwnd + dwnd) acked.
        if self.cwnd <= tcp.ssthresh {
            self.cwnd += ev.acked;
        } else {
            tcp.cwnd_cnt += ev.acked;
            if tcp.cwnd_cnt >= tcp.cwnd {
                tcp.cwnd_cnt -= tcp.cwnd;
                self.cwnd += 1;
            }
        }
        if ev.ack_seq > self.beg_snd_nxt {
            self.update_dwnd(tcp);
        }
        tcp.cwnd = (self.cwnd + self.dwnd).clamp(1, tcp.cwnd_clamp.max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::TestSender;
    use crate::units::SimTime;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    /// ACKs with the given RTT until the once-per-RTT update has run.
    fn round(s: &mut TestSender<Compound>, rtt: SimTime) {
        loop {
            s.advance(SimTime(rtt.as_nanos() / u64::from(s.cwnd())));
            s.ack_with_rtt(1, Some(rtt));
            if s.cc.cnt_rtt == 0 {
                return;
            }
        }
    }

    /// Congestion avoidance at `w` (all loss-based), BaseRTT 100 ms, rounds aligned.
    fn in_ca(w: u32) -> TestSender<Compound> {
        let mut s = TestSender::new(Compound::default());
        s.tcp.cwnd = w;
        s.tcp.ssthresh = w;
        s.cc.cwnd = w;
        s.fill();
        round(&mut s, ms(100));
        round(&mut s, ms(100));
        s
    }

    #[test]
    fn quartic_root_is_exact() {
        assert_eq!(quartic_root(1000u64.pow(3)), 177); // 1000^0.75 = 177.8
        assert_eq!(quartic_root(16u64.pow(4)), 16);
        assert_eq!(quartic_root(16u64.pow(4) - 1), 15);
    }

    #[test]
    fn delay_window_grows_binomially_while_the_queue_is_below_gamma() {
        // No queueing (RTT = BaseRTT): each RTT dwnd += ⌊win^¾⌋/8 − 1 for the window
        // sent in the previous RTT; at win ≈ 1000: ⌊177.8⌋ >> 3 = 22, minus 1: +21.
        let mut s = in_ca(1000);
        let d0 = s.cc.dwnd;
        round(&mut s, ms(100));
        let win = s.cc.cwnd + d0; // roughly the window of the round just measured
        let step = s.cc.dwnd - d0;
        let expected = (quartic_root(u64::from(win).pow(3)) >> 3) as u32 - 1;
        assert!(
            step.abs_diff(expected) <= 1,
            "step {step}, expected {expected} at {win}"
        );
        assert!((20..=23).contains(&step));
        assert_eq!(s.cwnd(), s.cc.cwnd + s.cc.dwnd);
    }

    #[test]
    fn small_windows_are_pure_reno() {
        // win ≤ 40: (win³)^¼ < 16, so α·win^¾ − 1 ≤ 0: no delay window.
        let mut s = in_ca(30);
        for _ in 0..5 {
            round(&mut s, ms(100));
        }
        assert_eq!(s.cc.dwnd, 0);
        assert_eq!(s.cwnd(), s.cc.cwnd);
    }

    #[test]
    fn delay_window_shrinks_by_the_estimated_queue_above_gamma() {
        let mut s = in_ca(1000);
        s.cc.dwnd = 100;
        s.tcp.cwnd = 1100;
        s.fill();
        round(&mut s, ms(105)); // measure a window of 1100 at RTT 105 ms
        let d = s.cc.dwnd;
        round(&mut s, ms(105));
        // diff = 2·w − ⌊2·w·100001/105001⌋ half packets for the ~1100 sent: ≈ 105 (52.4
        // packets) ≥ γ = 30: dwnd −= 52.
        assert!(
            d - s.cc.dwnd >= 50 && d - s.cc.dwnd <= 54,
            "{d} → {}",
            s.cc.dwnd
        );
    }

    #[test]
    fn loss_halves_the_window_and_the_loss_part_takes_it() {
        // win 1100 = 1000 + 100 → 550: cwnd 1000 > 550, so cwnd = 550 and dwnd = 0.
        let mut s = in_ca(1000);
        s.cc.dwnd = 100;
        s.tcp.cwnd = 1100;
        s.lose();
        assert_eq!((s.tcp.ssthresh, s.cwnd()), (550, 550));
        s.ack(1);
        // The port's slow-start test is cwnd ≤ ssthresh: this ACK still adds one.
        assert_eq!((s.cc.cwnd, s.cc.dwnd), (551, 0));
    }

    #[test]
    fn gamma_is_tuned_toward_three_quarters_of_the_reno_queue_and_clipped() {
        let mut s = TestSender::new(Compound::default());
        s.tcp.cwnd = 100;
        // diff_reno = 16 packets (32 half packets): sample 12; γ = 30 + (12 − 30)/2 = 21.
        s.cc.diff_reno = Some(32);
        s.cc.ssthresh(&mut s.tcp);
        assert_eq!(s.cc.gamma, 21);
        // A second loss without a new measurement leaves γ alone.
        s.cc.ssthresh(&mut s.tcp);
        assert_eq!(s.cc.gamma, 21);
        // No queue at all: sample 0 → 21 − 10.5 → 10 (floor), then 5, then clipped at 5.
        for expected in [10, 5, 5] {
            s.cc.diff_reno = Some(0);
            s.cc.ssthresh(&mut s.tcp);
            assert_eq!(s.cc.gamma, expected);
        }
        // A big queue: clipped at 30.
        s.cc.diff_reno = Some(1000);
        s.cc.ssthresh(&mut s.tcp);
        s.cc.diff_reno = Some(1000);
        s.cc.ssthresh(&mut s.tcp);
        assert_eq!(s.cc.gamma, 30);
    }
}
