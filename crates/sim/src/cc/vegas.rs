//! TCP Vegas (Brakmo & Peterson, IEEE JSAC 13(8), 1995) as Linux implements it
//! (`net/ipv4/tcp_vegas.c`).
//!
//! Once per RTT, Vegas compares the expected rate cwnd/BaseRTT with the actual rate
//! cwnd/RTT and expresses the difference as the number of the flow's packets queued in
//! the network: diff = cwnd·(RTT − BaseRTT)/BaseRTT (integer, Linux). In congestion
//! avoidance: diff < α → cwnd + 1; diff > β → cwnd − 1; otherwise unchanged (paper §3.2;
//! seed 003 "Vegas1_3" uses α = 1, β = 3; Enhanced Vegas α = β = δ). In slow start,
//! diff > γ ends slow start with cwnd = the actual rate × BaseRTT + 1 (paper §3.3).
//! BaseRTT is the minimum RTT ever seen, RTT the minimum over the last RTT (to filter
//! delayed ACKs); both are µs + 1 as in Linux. Losses are handled as Reno.

use super::{
    slow_start, AckEvent, CaState, CongestionControl, CwndEvent, ParamError, ParamSpec, Params,
    Reno, TcpCc,
};

/// Largest α, β, γ accepted (packets).
pub const MAX_THRESHOLD: u32 = 1_000_000;

/// Vegas's thresholds (Linux module parameters `alpha`, `beta`, `gamma`; defaults 2, 4, 1).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "alpha",
        2,
        0,
        MAX_THRESHOLD,
        "packets",
        "below alpha packets queued (diff) cwnd grows by one per RTT; alpha <= beta",
    ),
    ParamSpec::int(
        "beta",
        4,
        0,
        MAX_THRESHOLD,
        "packets",
        "above beta packets queued (diff) cwnd shrinks by one per RTT",
    ),
    ParamSpec::int(
        "gamma",
        1,
        0,
        MAX_THRESHOLD,
        "packets",
        "slow start ends once more than gamma packets are queued",
    ),
];

#[derive(Clone, Debug)]
pub struct Vegas {
    alpha: u32,
    beta: u32,
    gamma: u32,
    /// Minimum RTT ever (µs + 1).
    pub(crate) base_rtt: u32,
    /// Minimum RTT in the current round (µs + 1).
    pub(crate) min_rtt: u32,
    /// RTT samples in the current round.
    pub(crate) cnt_rtt: u32,
    pub(crate) doing_vegas_now: bool,
    /// snd_nxt at the start of the current round: the round ends when it is acked.
    beg_snd_nxt: u64,
}

const NONE: u32 = 0x7fff_ffff;

impl Vegas {
    /// α, β, γ in packets (Linux module parameters; defaults 2, 4, 1).
    pub fn new(alpha: u32, beta: u32, gamma: u32) -> Self {
        Vegas {
            alpha,
            beta,
            gamma,
            base_rtt: NONE,
            min_rtt: NONE,
            cnt_rtt: 0,
            doing_vegas_now: false,
            beg_snd_nxt: 0,
        }
    }

    /// Build from the flow's parameters (`PARAMS`); α must not exceed β.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let (alpha, beta) = (p.int("alpha"), p.int("beta"));
        if alpha > beta {
            return Err(ParamError::new(
                if p.given("beta") { "beta" } else { "alpha" },
                format!("vegas needs alpha <= beta, got alpha = {alpha} and beta = {beta}"),
            ));
        }
        Ok(Self::new(alpha, beta, p.int("gamma")))
    }

    /// Start taking samples for the round that begins with the next transmission.
    fn enable(&mut self, tcp: &TcpCc) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tcp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = NONE;
    }

    /// Linux `tcp_current_ssthresh`: during CWR/Recovery ssthresh, else
    /// max(ssthresh, ¾·cwnd).
    fn current_ssthresh(tcp: &TcpCc) -> u32 {
        if matches!(tcp.ca_state, CaState::Cwr | CaState::Recovery) {
            tcp.ssthresh
        } else {
            tcp.ssthresh.max((tcp.cwnd >> 1) + (tcp.cwnd >> 2))
        }
    }
}

impl Default for Vegas {
    fn default() -> Self {
        Self::new(2, 4, 1)
    }
}

impl CongestionControl for Vegas {
    fn init(&mut self, tcp: &mut TcpCc) {
        self.base_rtt = NONE;
        self.enable(tcp);
    }

    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        Reno.ssthresh(tcp)
    }

    fn pkts_acked(&mut self, _tcp: &mut TcpCc, ev: &AckEvent) {
        let Some(rtt) = ev.rtt else { return };
        let vrtt = u32::try_from(rtt.as_micros()).unwrap_or(NONE - 1) + 1; // never zero
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// Samples are taken only in the Open state; recovery and timeouts restart them.
    fn set_state(&mut self, tcp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tcp);
        } else {
            self.doing_vegas_now = false;
        }
    }

    /// After idle, wait for a fresh flight of samples (BaseRTT is forgotten too, Linux).
    fn cwnd_event(&mut self, tcp: &mut TcpCc, ev: CwndEvent) {
        if matches!(ev, CwndEvent::CwndRestart | CwndEvent::TxStart) {
            self.init(tcp);
        }
    }

    fn cong_avoid(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        if !self.doing_vegas_now {
            Reno.cong_avoid(tcp, ev);
            return;
        }
        if ev.ack_seq <= self.beg_snd_nxt {
            if tcp.in_slow_start() {
                slow_start(tcp, ev.acked);
            }
            return;
        }
        // A round ended: the once-per-RTT adjustment.
        self.beg_snd_nxt = tcp.snd_nxt;
        if self.cnt_rtt <= 2 {
            // One or two samples per RTT are probably delayed ACKs: behave as Reno.
            Reno.cong_avoid(tcp, ev);
        } else {
            let rtt = u64::from(self.min_rtt);
            let base = u64::from(self.base_rtt);
            let cwnd = u64::from(tcp.cwnd);
            let target = cwnd * base / rtt;
            let diff = cwnd * (rtt - base) / base;
            if diff > u64::from(self.gamma) && tcp.in_slow_start() {
                // Going too fast: leave slow start at the actual rate (+1 for truncation).
                tcp.cwnd = tcp.cwnd.min(target as u32 + 1);
                tcp.ssthresh = tcp.ssthresh.min(tcp.cwnd);
            } else if tcp.in_slow_start() {
                slow_start(tcp, ev.acked);
            } else if diff > u64::from(self.beta) {
                tcp.cwnd -= 1;
                tcp.ssthresh = tcp.ssthresh.min(tcp.cwnd);
            } else if diff < u64::from(self.alpha) {
                tcp.cwnd += 1;
            }
            tcp.cwnd = tcp.cwnd.clamp(2, tcp.cwnd_clamp.max(2));
            tcp.ssthresh = Self::current_ssthresh(tcp);
        }
        self.cnt_rtt = 0;
        self.min_rtt = NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::{Path, TestSender};
    use crate::units::SimTime;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    /// One Vegas round: ACKs with the given RTT sample until the once-per-RTT
    /// adjustment runs (the ACK of the first segment sent after the round began).
    /// Returns cwnd just before that adjustment.
    fn round(s: &mut TestSender<Vegas>, rtt: SimTime) -> u32 {
        loop {
            let before = s.cwnd();
            s.advance(SimTime(rtt.as_nanos() / u64::from(s.cwnd())));
            s.ack_with_rtt(1, Some(rtt));
            if s.cc.cnt_rtt == 0 {
                return before;
            }
        }
    }

    fn in_ca(cwnd: u32) -> TestSender<Vegas> {
        let mut s = TestSender::new(Vegas::new(1, 3, 1));
        s.tcp.cwnd = cwnd;
        s.tcp.ssthresh = cwnd;
        s.fill();
        round(&mut s, ms(100)); // BaseRTT 100 ms; too few samples: a Reno round
        s
    }

    #[test]
    fn congestion_avoidance_adds_removes_or_holds_one_segment_per_rtt_by_queued_packets() {
        // cwnd 20, BaseRTT 100 ms (100 001 µs in Linux's +1 units):
        // RTT 104 ms: diff = 20·4000/100001 = 0 < α = 1 → +1 per round.
        let mut s = in_ca(20);
        round(&mut s, ms(104));
        round(&mut s, ms(104));
        assert_eq!(s.cwnd(), 22);
        // RTT 110 ms at cwnd 22: diff = 22·10000/100001 = 2 ∈ [1, 3] → hold.
        round(&mut s, ms(110));
        round(&mut s, ms(110));
        assert_eq!(s.cwnd(), 22);
        // RTT 120 ms: diff = 22·20000/100001 = 4 > β = 3 → −1 per round.
        round(&mut s, ms(120));
        round(&mut s, ms(120));
        assert_eq!(s.cwnd(), 20);
    }

    #[test]
    fn enhanced_vegas_with_alpha_equal_beta_has_a_single_equilibrium_diff() {
        let mut p = std::collections::BTreeMap::new();
        p.insert("alpha".to_string(), 2.0);
        p.insert("beta".to_string(), 2.0);
        let mut s = TestSender::new(
            Vegas::from_params(&Params::new("vegas", PARAMS, &p).unwrap()).unwrap(),
        );
        s.tcp.cwnd = 20;
        s.tcp.ssthresh = 20;
        s.fill();
        round(&mut s, ms(100));
        // diff = 20·10000/100001 = 1 < 2 → +1; at 21 and 110 ms: 2 → hold.
        round(&mut s, ms(110));
        round(&mut s, ms(110));
        assert_eq!(s.cwnd(), 21);
        round(&mut s, ms(110));
        assert_eq!(s.cwnd(), 21);
    }

    #[test]
    fn slow_start_ends_at_the_actual_rate_when_diff_exceeds_gamma() {
        let mut s = TestSender::new(Vegas::default());
        round(&mut s, ms(100)); // BaseRTT 100 ms
        round(&mut s, ms(100)); // diff 0: slow start continues
        assert!(s.tcp.in_slow_start());
        // A round at 125 ms: at its end, with cwnd w, diff = ⌊w·25000/100001⌋ > γ = 1,
        // so cwnd = min(w, ⌊w·100001/125001⌋ + 1) and ssthresh = cwnd.
        let w = round(&mut s, ms(125));
        let expected = (u64::from(w) * 100_001 / 125_001) as u32 + 1;
        assert!(w >= 8, "w {w}");
        assert_eq!(s.cwnd(), expected);
        assert_eq!(s.tcp.ssthresh, expected);
        assert!(!s.tcp.in_slow_start());
    }

    #[test]
    fn loss_halves_like_reno_and_pauses_vegas_until_open() {
        let mut s = in_ca(40);
        s.enter_recovery();
        assert_eq!(s.tcp.ssthresh, 20);
        assert!(!s.cc.doing_vegas_now);
        s.tcp.cwnd = 20;
        s.exit_recovery();
        assert!(s.cc.doing_vegas_now);
        assert_eq!(s.cc.cnt_rtt, 0);
        // BaseRTT survives a loss.
        assert_eq!(s.cc.base_rtt, 100_001);
    }

    #[test]
    fn single_flow_keeps_alpha_to_beta_packets_queued_at_the_bottleneck() {
        // Path: 1 packet/ms, min RTT 40 ms, BDP 40. With cwnd W > 40 the queue holds
        // W − 40 packets and RTT = W ms, so diff = ⌊W·(W−40)/40⌋: 41 → 1, 42 → 2,
        // 43 → 3, 44 → 4, 45 → 5. With Linux's α = 2, β = 4, W settles in 42..=44:
        // 2 to 4 packets queued.
        let mut s = TestSender::new(Vegas::default());
        let mut p = Path::new(ms(1), ms(39));
        let mut ws = Vec::new();
        // Slow start overshoots (the round's minimum RTT lags the growing queue) to 155
        // and congestion avoidance then removes one segment per RTT: ~12 s to settle.
        p.run_until(&mut s, SimTime::from_secs(20), |s| ws.push(s.tcp.cwnd));
        assert!(ws.iter().any(|&w| w > 100));
        let tail = &ws[ws.len() - 3000..];
        assert!(
            tail.iter().all(|w| (42..=44).contains(w)),
            "{:?}",
            &tail[..20]
        );
        assert_eq!(s.cc.base_rtt, 40_001);
    }

    #[test]
    fn parameters_are_validated() {
        let mut p = std::collections::BTreeMap::new();
        p.insert("alpha".to_string(), 3.0);
        p.insert("beta".to_string(), 1.0);
        let err = crate::cc::AnyCc::from_name("vegas", &p, 0).unwrap_err();
        assert_eq!(err.param, "beta");
        assert_eq!(
            err.message,
            "vegas needs alpha <= beta, got alpha = 3 and beta = 1"
        );
        p.insert("beta".to_string(), 1.5);
        let err = crate::cc::AnyCc::from_name("vegas", &p, 0).unwrap_err();
        assert_eq!(err.param, "beta");
        assert_eq!(
            err.message,
            "1.5 is not allowed; allowed: a whole number from 0 to 1000000"
        );
    }
}
