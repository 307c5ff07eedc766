//! BIC-TCP (Xu, Harfoush & Rhee, "Binary Increase Congestion Control for Fast, Long
//! Distance Networks", INFOCOM 2004) as Linux implements it (`net/ipv4/tcp_bic.c`).
//!
//! After a loss at W_max the window does a binary search toward W_max (each RTT it moves
//! half-way — Linux: a quarter, `BICTCP_B` = 4 — but at most `max_increment` segments, at
//! least a "smooth" crawl near W_max), then probes beyond it symmetrically (max probing),
//! and falls back to additive increase of `max_increment` far from it (paper §3).
//! Multiplicative decrease β = 819/1024 ≈ 0.8; below `low_window` = 14 segments it is Reno.
//! Linux also scales the per-ACK step by the measured packets-per-ACK ratio (delayed ACKs).
//! That compensation dates from when `tcp_cong_avoid_ai` counted ACKs; it now counts
//! acknowledged segments, so Linux's BIC grows twice as fast as the paper's rules (ratio 2
//! with delayed ACKs; with one segment per ACK the ratio's EWMA sticks at 31/16, since
//! 31 + 1 − ⌊31/16⌋ = 31). We do what Linux does.

use super::{
    cong_avoid_ai, jiffies, slow_start_prologue, AckEvent, CaState, CongestionControl, ParamError,
    ParamSpec, Params, TcpCc, HZ,
};

/// BIC's parameters, Linux's module parameters (`tcp_bic.c`) with Linux's defaults. β
/// multiplies cwnd at a loss, as CUBIC's does.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::real(
        "beta",
        819.0 / 1024.0,
        0.05,
        0.95,
        "",
        "multiplicative decrease: cwnd × beta after a loss (Linux beta/1024 = 819/1024)",
    ),
    ParamSpec::flag(
        "fast_convergence",
        true,
        "a loss below the previous W_max lowers W_max further, to (1 + beta)/2 of cwnd",
    ),
    ParamSpec::int(
        "max_increment",
        16,
        1,
        1 << 20,
        "segments",
        "largest growth per RTT (binary search step and additive increase S_max)",
    ),
    ParamSpec::int(
        "low_window",
        14,
        2,
        1 << 20,
        "segments",
        "at or below this cwnd BIC is Reno (halves on loss, +1 per RTT)",
    ),
    ParamSpec::int(
        "smooth_part",
        20,
        1,
        1 << 20,
        "RTTs",
        "within 4 segments of W_max growth crawls: 4/smooth_part segments per RTT (S_min)",
    ),
    ParamSpec::int(
        "initial_ssthresh",
        0,
        0,
        1 << 30,
        "segments",
        "initial slow-start threshold (0: none)",
    ),
];

const BETA_SCALE: u32 = 1024;
/// Binary search divides the distance to W_max by B.
const BICTCP_B: u32 = 4;
/// Scale of the packets-per-ACK ratio.
const ACK_RATIO_SHIFT: u32 = 4;

#[derive(Clone, Debug)]
pub struct Bic {
    fast_convergence: bool,
    max_increment: u32,
    low_window: u32,
    /// β in 1/1024 (Linux 819).
    beta: u32,
    smooth_part: u32,
    initial_ssthresh: u32,
    /// Increase cwnd by one per `cnt` segments acked.
    pub(crate) cnt: u32,
    pub(crate) last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    epoch_start: Option<u64>,
    /// Packets per ACK, << 4 (EWMA, 1/16).
    pub(crate) delayed_ack: u32,
}

impl Default for Bic {
    fn default() -> Self {
        Self::with(true, 16, 14, 819, 20, 0)
    }
}

impl Bic {
    fn with(
        fast_convergence: bool,
        max_increment: u32,
        low_window: u32,
        beta: u32,
        smooth_part: u32,
        initial_ssthresh: u32,
    ) -> Self {
        Bic {
            fast_convergence,
            max_increment,
            low_window,
            beta,
            smooth_part,
            initial_ssthresh,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            epoch_start: None,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        }
    }

    /// Build from the flow's parameters (`PARAMS`); β stored ×1024 as Linux does.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(Self::with(
            p.flag("fast_convergence"),
            p.int("max_increment"),
            p.int("low_window"),
            (p.real("beta") * f64::from(BETA_SCALE)).round() as u32,
            p.int("smooth_part"),
            p.int("initial_ssthresh"),
        ))
    }

    fn reset(&mut self) {
        *self = Self::with(
            self.fast_convergence,
            self.max_increment,
            self.low_window,
            self.beta,
            self.smooth_part,
            self.initial_ssthresh,
        );
    }

    /// `bictcp_update`: segments acked per +1 segment, at most recomputed every HZ/32.
    fn update(&mut self, tcp: &TcpCc, cwnd: u32) {
        let now = jiffies(tcp.now);
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        self.epoch_start.get_or_insert(now);
        if cwnd <= self.low_window {
            self.cnt = cwnd; // Reno: one segment per RTT
            return;
        }
        let (max, inc, b) = (self.last_max_cwnd, self.max_increment, BICTCP_B);
        self.cnt = if cwnd < max {
            // Binary search increase (paper §3.1): target the midpoint (here 1/B of the
            // distance), additive increase by S_max if it is too far, a crawl at S_min
            // (smooth_part RTTs for the last B segments) when almost there.
            let dist = (max - cwnd) / b;
            if dist > inc {
                cwnd / inc
            } else if dist <= 1 {
                cwnd * self.smooth_part / b
            } else {
                cwnd / dist
            }
        } else if cwnd < max + b {
            cwnd * self.smooth_part / b // just above W_max: crawl
        } else if cwnd < max + inc * (b - 1) {
            cwnd * (b - 1) / (cwnd - max) // max probing: slow start mirrored (§3.2)
        } else {
            cwnd / inc // far above: additive increase by S_max
        };
        // No loss yet: grow at least 5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        self.cnt = ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1);
    }
}

impl CongestionControl for Bic {
    fn init(&mut self, tcp: &mut TcpCc) {
        self.reset();
        if self.initial_ssthresh > 0 {
            tcp.ssthresh = self.initial_ssthresh;
        }
    }

    /// β·cwnd (Reno's half below low_window), with fast convergence as in CUBIC.
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if tcp.cwnd < self.last_max_cwnd && self.fast_convergence {
            tcp.cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            tcp.cwnd
        };
        if tcp.cwnd <= self.low_window {
            (tcp.cwnd >> 1).max(2)
        } else {
            (tcp.cwnd * self.beta / BETA_SCALE).max(2)
        }
    }

    #[inline]
    fn cong_avoid(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        let Some(acked) = slow_start_prologue(tcp, ev.acked) else {
            return;
        };
        let cwnd = tcp.cwnd;
        self.update(tcp, cwnd);
        let cnt = self.cnt;
        cong_avoid_ai(tcp, cnt, acked);
    }

    /// Packets-per-ACK ratio, EWMA with weight 1/16, in the Open state.
    fn pkts_acked(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        if tcp.ca_state == CaState::Open {
            self.delayed_ack =
                (self.delayed_ack + ev.acked).saturating_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
    }

    fn set_state(&mut self, _tcp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::TestSender;
    use crate::units::SimTime;

    /// A sender right after a loss at `w`, with the packets-per-ACK ratio of a receiver
    /// that ACKs every segment: Linux's EWMA settles at 31/16 (see the module comment).
    fn after_loss_at(w: u32) -> TestSender<Bic> {
        let mut s = TestSender::new(Bic::default());
        s.tcp.cwnd = w;
        s.tcp.ssthresh = w;
        for _ in 0..100 {
            s.cc.pkts_acked(
                &mut s.tcp,
                &AckEvent {
                    acked: 1,
                    ..AckEvent::default()
                },
            );
        }
        assert_eq!(s.cc.delayed_ack, 31);
        s.lose();
        s
    }

    /// `cnt` computed on an ACK at window `cwnd`.
    fn cnt_at(s: &mut TestSender<Bic>, cwnd: u32) -> u32 {
        s.tcp.cwnd = cwnd;
        s.advance(SimTime::from_millis(1));
        s.ack(1);
        s.cc.cnt
    }

    #[test]
    fn decrease_is_beta_0_8_above_low_window_and_half_below() {
        let mut s = TestSender::new(Bic::default());
        s.tcp.cwnd = 100;
        assert_eq!(s.cc.ssthresh(&mut s.tcp), 79); // 100·819/1024 = 79.98
        s.tcp.cwnd = 14;
        assert_eq!(s.cc.ssthresh(&mut s.tcp), 7);
    }

    #[test]
    fn far_below_wmax_grows_by_max_increment_per_rtt() {
        // W_max 1000 → cwnd 799; dist = 201/4 = 50 > S_max = 16: additive increase,
        // cnt = 799/16 = 49 (16 per RTT), scaled by 16/31: ⌊784/31⌋ = 25.
        let mut s = after_loss_at(1000);
        assert_eq!(s.cwnd(), 799);
        assert_eq!(cnt_at(&mut s, 799), 25);
    }

    #[test]
    fn binary_search_steps_shrink_toward_wmax_then_crawl() {
        // W_max 100 → cwnd 79: dist = 21/4 = 5 → cnt = 79/5 = 15 (+5 per RTT, a quarter
        // of the way), scaled: ⌊240/31⌋ = 7.
        let mut s = after_loss_at(100);
        assert_eq!(s.cwnd(), 79);
        assert_eq!(cnt_at(&mut s, 79), 7);
        // Within B of W_max (dist ≤ 1): cnt = cwnd·smooth_part/B = 98·20/4 = 490 → ⌊7840/31⌋.
        assert_eq!(cnt_at(&mut s, 98), 7840 / 31);
        // Round by round the steps shrink and cwnd approaches, but does not pass, W_max.
        let mut s = after_loss_at(100);
        let mut w = vec![s.cwnd()];
        for _ in 0..8 {
            let n = s.cwnd();
            for _ in 0..n {
                s.advance(SimTime(s.rtt.as_nanos() / u64::from(n)));
                s.ack(1);
            }
            w.push(s.cwnd());
        }
        // 79 → 86 → 91 → 93: each step smaller, ~half the remaining distance per RTT
        // (twice the paper's quarter, see the module comment), then a crawl.
        let steps: Vec<u32> = w.windows(2).map(|p| p[1] - p[0]).collect();
        assert!(steps[0] > steps[1] && steps[1] > steps[2], "{w:?}");
        assert!(steps[3..].iter().all(|&d| d <= 1), "{w:?}");
        assert!(w.iter().all(|&x| x < 100), "{w:?}");
    }

    #[test]
    fn max_probing_beyond_wmax_accelerates_then_turns_linear() {
        let mut s = after_loss_at(100);
        // W_max + B ≤ cwnd < W_max + 3·S_max: cnt = cwnd·3/(cwnd − W_max), growing away
        // from W_max like slow start mirrored: 102 → 306 (crawl zone is < 104), 110 → 33,
        // 140 → 10; scaled by 16/31.
        assert_eq!(cnt_at(&mut s, 102), 102 * 20 / 4 * 16 / 31);
        assert_eq!(cnt_at(&mut s, 110), 33 * 16 / 31);
        assert_eq!(cnt_at(&mut s, 140), 10 * 16 / 31);
        // From W_max + 48 on: additive increase by S_max: 200/16 = 12 → ⌊192/31⌋ = 6.
        assert_eq!(cnt_at(&mut s, 200), 6);
    }

    #[test]
    fn small_windows_are_reno() {
        // At most low_window = 14: halve on loss, cnt = cwnd (not scaled by the ratio).
        let mut s = after_loss_at(12);
        assert_eq!(s.cwnd(), 6);
        assert_eq!(cnt_at(&mut s, 6), 6);
    }
}
