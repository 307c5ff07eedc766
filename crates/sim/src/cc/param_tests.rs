//! Each parameter the registry exposes changes behaviour as its formula says. Algorithms
//! are built the way a scenario builds them (`AnyCc::from_name` with `cca_params`), so
//! these also pin the path from a parameter's name to the algorithm's field.

use super::harness::TestSender;
use super::{AnyCc, CongestionControl, Cubic, INFINITE_SSTHRESH};
use crate::units::SimTime;
use std::collections::BTreeMap;

fn build(name: &str, params: &[(&str, f64)]) -> TestSender<AnyCc> {
    let p: BTreeMap<String, f64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    TestSender::new(AnyCc::from_name(name, &p, 1).unwrap())
}

/// In congestion avoidance at `w` segments (slow start over).
fn at(name: &str, params: &[(&str, f64)], w: u32) -> TestSender<AnyCc> {
    let mut s = build(name, params);
    s.tcp.cwnd = w;
    s.tcp.ssthresh = w;
    if let AnyCc::Compound(c) = &mut s.cc {
        c.cwnd = w;
    }
    s.fill();
    s
}

fn cubic(s: &TestSender<AnyCc>) -> &Cubic {
    match &s.cc {
        AnyCc::Cubic(c) => c,
        _ => unreachable!(),
    }
}

/// cwnd right after one loss repaired by fast recovery, from `w`.
fn after_loss(name: &str, params: &[(&str, f64)], w: u32) -> u32 {
    let mut s = at(name, params, w);
    s.lose();
    s.cwnd()
}

#[test]
fn cubic_beta_multiplies_cwnd_at_a_loss() {
    // RFC 9438 §4.6: cwnd = β_cubic·cwnd, β stored as Linux does (β·1024, rounded):
    // default 717/1024: ⌊1000·717/1024⌋ = 700; 0.8 (kernel 2.6.22, the 2008 paper's
    // "decrease by 0.2"): 819/1024 → 799; 0.5: 500.
    assert_eq!(after_loss("cubic", &[], 1000), 700);
    assert_eq!(after_loss("cubic", &[("beta", 0.8)], 1000), 799);
    assert_eq!(after_loss("cubic", &[("beta", 0.5)], 1000), 500);
}

#[test]
fn cubic_c_scales_the_time_to_reach_wmax() {
    // RFC 9438 §4.2: K = ∛(W_max·(1 − β)/C). W_max = 1000, cwnd 700 after the loss:
    // C = 0.4 → ∛750 = 9.086 s; C = 4 → ∛75 = 4.217 s. C is stored as Linux's bic_scale
    // = round(C·1024/10): 0.4 is 41 (C = 0.4004, K = 9.082 s), 4 is 410 (4.004, 4.216 s).
    let k_of = |bic_scale: f64| (300.0f64 / (bic_scale * 10.0 / 1024.0)).cbrt();
    for (c, k_expected) in [(0.4, k_of(41.0)), (4.0, k_of(410.0))] {
        let mut s = at("cubic", &[("c", c)], 1000);
        s.lose();
        s.advance(SimTime::from_millis(1));
        s.ack(1); // the first ACK of congestion avoidance starts the epoch
        let k = cubic(&s).k as f64 / 1024.0;
        assert!(
            (k - k_expected).abs() < 2.0 / 1024.0,
            "C {c}: K {k} vs {k_expected}"
        );
    }
}

#[test]
fn cubic_fast_convergence_lowers_wmax_only_when_on() {
    // A second loss below the last W_max (1000): W_max = cwnd·(1 + β)/2 with fast
    // convergence (900·1741/2048 = 765), else cwnd (900).
    for (fc, wmax) in [(1.0, 765), (0.0, 900)] {
        let mut s = at("cubic", &[("fast_convergence", fc)], 1000);
        s.lose();
        s.tcp.cwnd = 900;
        s.lose();
        assert_eq!(cubic(&s).last_max_cwnd, wmax, "fast_convergence = {fc}");
    }
}

#[test]
fn cubic_hystart_ends_slow_start_on_delay_only_when_on() {
    // Slow start from 32 segments with the RTT growing 1 ms per ACK from 40 ms: HyStart's
    // delay test (round minimum > delay_min + max(delay_min/8, 4 ms)) fires within two
    // rounds and sets ssthresh = cwnd; without HyStart slow start goes on (+1 per ACK).
    for (on, ends) in [(1.0, true), (0.0, false)] {
        let mut s = build("cubic", &[("hystart", on)]);
        s.tcp.cwnd = 32;
        s.fill();
        for i in 0..200u64 {
            s.advance(SimTime::from_micros(500));
            s.ack_with_rtt(1, Some(SimTime::from_millis(40 + i)));
        }
        assert_eq!(s.tcp.ssthresh < INFINITE_SSTHRESH, ends, "hystart = {on}");
        if !ends {
            assert_eq!(s.cwnd(), 32 + 200);
        }
    }
}

#[test]
fn bic_beta_and_low_window() {
    // tcp_bic.c: above low_window cwnd·β (819/1024 → ⌊1000·819/1024⌋ = 799; β = 0.5 →
    // 500); at or below low_window Reno's half (low_window 2000 ≥ 1000 → 500).
    assert_eq!(after_loss("bic", &[], 1000), 799);
    assert_eq!(after_loss("bic", &[("beta", 0.5)], 1000), 500);
    assert_eq!(after_loss("bic", &[("low_window", 2000.0)], 1000), 500);
}

#[test]
fn bic_max_increment_bounds_the_growth_per_rtt() {
    // Far below W_max (1000 → 799 after the loss: distance/B = 50 > S_max) BIC adds
    // S_max = max_increment per RTT of the paper's rules; Linux's ACK-ratio scaling
    // doubles it (one segment per ACK: ratio 31/16, module doc). Per RTT of ~800 ACKs:
    // ⌊16·31/16⌋ = 31 ± 1 for 16, and about half for 8.
    let mut growth = Vec::new();
    for inc in [16.0, 8.0] {
        let mut s = at("bic", &[("max_increment", inc)], 1000);
        s.lose();
        let w = s.cwnd();
        for _ in 0..w {
            s.ack(1);
        }
        growth.push(s.cwnd() - w);
    }
    assert!((30..=33).contains(&growth[0]), "{growth:?}");
    assert!(
        growth[1] * 2 >= growth[0] - 2 && growth[1] * 2 <= growth[0] + 2,
        "{growth:?}"
    );
}

#[test]
fn highspeed_high_decrease_sets_the_decrease_at_large_windows() {
    // RFC 3649 §5: b(w) = (High_Decrease − 0.5)·(ln w − ln 38)/(ln 83000 − ln 38) + 0.5.
    // At cwnd 1000 the table row is w_7 = 1058 (a = 8) for 0.1: b = 83/256; a cut of
    // ⌊1000·83/256⌋ = 324 → 676. With High_Decrease 0.5 b ≡ 0.5: Reno's half, 500.
    // Below Low_Window = 38 every choice is Reno. (One ACK first: it finds the row.)
    for (params, w, after) in [
        (vec![], 1000, 676),
        (vec![("high_decrease", 0.5)], 1000, 500),
        (vec![("high_decrease", 0.3)], 30, 15),
    ] {
        let mut s = at("highspeed", &params, w);
        s.ack(1);
        assert_eq!(s.cwnd(), w);
        s.lose();
        assert_eq!(s.cwnd(), after, "{params:?}");
    }
}

fn compound_round(s: &mut TestSender<AnyCc>, rtt: SimTime) {
    loop {
        s.advance(SimTime(rtt.as_nanos() / u64::from(s.cwnd())));
        s.ack_with_rtt(1, Some(rtt));
        let AnyCc::Compound(c) = &s.cc else {
            unreachable!()
        };
        if c.cnt_rtt == 0 {
            return;
        }
    }
}

fn compound_dwnd(s: &TestSender<AnyCc>) -> u32 {
    let AnyCc::Compound(c) = &s.cc else {
        unreachable!()
    };
    c.dwnd
}

#[test]
fn compound_alpha_and_k_set_the_binomial_increase() {
    // No queue (RTT = BaseRTT): dwnd += ⌊α·win^k⌋ − 1 per RTT (paper eq. 6). At win
    // ≈ 1000 (the window the round measured): α ⅛, k ¾: ⌊177.8/8⌋ − 1 = 21; α ¼: 43;
    // k ½: ⌊31.6/8⌋ − 1 = 2.
    for (params, step) in [
        (vec![], 21),
        (vec![("alpha", 0.25)], 43),
        (vec![("k", 0.5)], 2),
    ] {
        let mut s = at("compound", &params, 1000);
        compound_round(&mut s, SimTime::from_millis(100));
        compound_round(&mut s, SimTime::from_millis(100));
        let d0 = compound_dwnd(&s);
        compound_round(&mut s, SimTime::from_millis(100));
        let got = compound_dwnd(&s) - d0;
        assert!(
            got.abs_diff(step) <= 1,
            "{params:?}: step {got}, expected {step}"
        );
    }
}

#[test]
fn compound_beta_and_eta() {
    // A loss keeps beta of the whole window, stored in 1/1024: ½ → ⌊1000·512/1024⌋ = 500;
    // 0.7 → round(716.8) = 717 → ⌊1000·717/1024⌋ = 700.
    assert_eq!(after_loss("compound", &[], 1000), 500);
    assert_eq!(after_loss("compound", &[("beta", 0.7)], 1000), 700);
    // Above γ the delay window shrinks by η·diff per RTT: with a queue of ~52 packets
    // (RTT 105 ms over BaseRTT 100 ms at win 1100) η = 1 cuts ~52, η = 0 nothing.
    for (eta, lo, hi) in [(1.0, 50, 54), (0.0, 0, 0)] {
        let mut s = at("compound", &[("eta", eta)], 1000);
        compound_round(&mut s, SimTime::from_millis(100));
        compound_round(&mut s, SimTime::from_millis(100));
        if let AnyCc::Compound(c) = &mut s.cc {
            c.dwnd = 100;
        }
        s.tcp.cwnd = 1100;
        s.fill();
        compound_round(&mut s, SimTime::from_millis(105));
        let d = compound_dwnd(&s);
        compound_round(&mut s, SimTime::from_millis(105));
        let cut = d - compound_dwnd(&s);
        assert!((lo..=hi).contains(&cut), "eta {eta}: cut {cut}");
    }
}

#[test]
fn compound_gamma_tuning_stays_in_its_range() {
    // γ moves toward ¾ of the Reno-only queue at each loss, clipped to [gamma_low,
    // gamma_high]: no queue drives it to gamma_low (5 by default, 12 here).
    for (params, floor) in [(vec![], 5), (vec![("gamma_low", 12.0)], 12)] {
        let mut s = at("compound", &params, 100);
        for _ in 0..6 {
            if let AnyCc::Compound(c) = &mut s.cc {
                c.diff_reno = Some(0);
            }
            s.cc.ssthresh(&mut s.tcp);
        }
        let AnyCc::Compound(c) = &s.cc else {
            unreachable!()
        };
        assert_eq!(c.gamma, floor, "{params:?}");
    }
}

#[test]
fn vegas_thresholds_set_the_equilibrium() {
    // Linux Vegas: diff = ⌊cwnd·(RTT − BaseRTT)/BaseRTT⌋ once per RTT; below α +1, above β
    // −1. RTT 110 ms over 100 ms: at cwnd 20 diff = ⌊20·10000/100001⌋ = 1, at 21 it is 2.
    // Each round at 110 ms decides on its own samples. α = 2 grows to 21 and holds there
    // (diff 2); α = 1 holds 20 (1 ≤ diff ≤ 4); α = β = 0 shrinks by one in each of the four
    // rounds (diff ≥ 1 > 0 while cwnd ≥ 11): 16.
    for (params, after) in [
        (vec![], 21),
        (vec![("alpha", 1.0)], 20),
        (vec![("alpha", 0.0), ("beta", 0.0)], 16),
    ] {
        let mut s = at("vegas", &params, 20);
        for r in [100, 110, 110, 110, 110] {
            let r = SimTime::from_millis(r);
            loop {
                s.advance(SimTime(r.as_nanos() / u64::from(s.cwnd())));
                s.ack_with_rtt(1, Some(r));
                let AnyCc::Vegas(v) = &s.cc else {
                    unreachable!()
                };
                if v.cnt_rtt == 0 {
                    break;
                }
            }
        }
        assert_eq!(s.cwnd(), after, "{params:?}");
    }
}

#[test]
fn vegas_gamma_ends_slow_start() {
    // Slow start (ssthresh unset) from 20: a round at BaseRTT 100 ms, then rounds at
    // 110 ms, where diff = ⌊cwnd·10000/100001⌋ ≥ 2 once cwnd ≥ 20. γ = 1: diff > γ leaves
    // slow start (cwnd = the actual rate·BaseRTT + 1, ssthresh = cwnd); γ = 1000 keeps
    // slow start (+1 per ACK), ssthresh stays unset.
    for (gamma, leaves) in [(1.0, true), (1000.0, false)] {
        let mut s = build("vegas", &[("gamma", gamma)]);
        s.tcp.cwnd = 20;
        s.fill();
        for r in [100, 110, 110] {
            let r = SimTime::from_millis(r);
            loop {
                s.advance(SimTime(r.as_nanos() / u64::from(s.cwnd())));
                s.ack_with_rtt(1, Some(r));
                let AnyCc::Vegas(v) = &s.cc else {
                    unreachable!()
                };
                if v.cnt_rtt == 0 {
                    break;
                }
            }
        }
        assert_eq!(s.tcp.ssthresh < INFINITE_SSTHRESH, leaves, "gamma {gamma}");
        if !leaves {
            assert!(
                s.cwnd() > 80,
                "gamma {gamma}: still doubling, cwnd {}",
                s.cwnd()
            );
        }
    }
}

#[test]
fn bic_fast_convergence_and_smooth_part() {
    // A second loss below W_max = 1000: W_max = cwnd·(1024 + 819)/2048 with fast
    // convergence (⌊900·1843/2048⌋ = 809), else cwnd (900).
    for (fc, wmax) in [(1.0, 809), (0.0, 900)] {
        let mut s = at("bic", &[("fast_convergence", fc)], 1000);
        s.lose();
        s.tcp.cwnd = 900;
        s.lose();
        let AnyCc::Bic(b) = &s.cc else { unreachable!() };
        assert_eq!(b.last_max_cwnd, wmax, "fast_convergence = {fc}");
    }
    // Just above W_max (within B = 4 segments) BIC crawls: one segment per
    // cwnd·smooth_part/4 segments acked (before the ACK-ratio scaling, the same for both):
    // doubling smooth_part doubles cnt.
    let cnt = |smooth: f64| {
        let mut s = at("bic", &[("smooth_part", smooth)], 1000);
        s.lose();
        s.tcp.cwnd = 1001;
        s.tcp.ssthresh = 1001;
        s.fill();
        s.ack(1);
        let AnyCc::Bic(b) = &s.cc else { unreachable!() };
        b.cnt
    };
    let (c20, c40) = (cnt(20.0), cnt(40.0));
    assert!(c40.abs_diff(2 * c20) <= 1, "cnt {c20} vs {c40}");
    assert!(c20 > 1000, "a crawl: {c20}");
}
