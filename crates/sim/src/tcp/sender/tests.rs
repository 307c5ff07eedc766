//! The sender's rules, pinned through a small harness: send, ACK (with SACK blocks),
//! advance time, fire the RTO — without the event loop.

use super::*;
use crate::cc::Reno;

const MSS: u32 = 1000;
const RTT: SimTime = SimTime::from_millis(100);

struct H {
    q: EventQueue,
    fwd: DelayLine<Packet>,
    s: Sender,
    now: SimTime,
}

impl H {
    fn new(sack: bool) -> H {
        H::with_size(sack, None)
    }

    fn with_size(sack: bool, size_bytes: Option<u64>) -> H {
        H::build(sack, size_bytes, false)
    }

    fn build(sack: bool, size_bytes: Option<u64>, gso: bool) -> H {
        H::with_cc(sack, size_bytes, gso, AnyCc::Reno(Reno))
    }

    fn with_cc(sack: bool, size_bytes: Option<u64>, gso: bool, cc: AnyCc) -> H {
        let p = SenderParams {
            id: 0,
            mss: MSS,
            sack,
            rwnd_bytes: 10_000_000,
            sndbuf_bytes: 10_000_000,
            size_bytes,
            app_rate_bps: None,
            cwnd_clamp: u32::MAX,
            gso,
        };
        let mut h = H {
            q: EventQueue::new(),
            fwd: DelayLine::new(),
            s: Sender::new(p, cc),
            now: SimTime::ZERO,
        };
        let mut io = Io {
            q: &mut h.q,
            fwd: &mut h.fwd,
            fwd_delay: SimTime::ZERO,
            line: 0,
        };
        h.s.start(SimTime::ZERO, RTT, &mut io);
        h
    }

    /// Segment numbers sent since the last call.
    fn sent(&mut self) -> Vec<u64> {
        self.fwd.drain().into_iter().map(|p| p.seg).collect()
    }

    fn advance(&mut self, d: SimTime) {
        self.now += d;
    }

    fn ack(&mut self, cum: u64, sacks: &[(u64, u64)]) {
        let mut a = Ack {
            cum,
            tsecr: SimTime(1),
            ..Ack::default()
        };
        for (i, &b) in sacks.iter().enumerate() {
            a.sack[i] = b;
        }
        a.nsack = sacks.len() as u8;
        let mut io = Io {
            q: &mut self.q,
            fwd: &mut self.fwd,
            fwd_delay: SimTime::ZERO,
            line: 0,
        };
        self.s.on_ack(self.now, &a, &mut io);
    }

    fn tlp(&mut self) {
        let mut io = Io {
            q: &mut self.q,
            fwd: &mut self.fwd,
            fwd_delay: SimTime::ZERO,
            line: 0,
        };
        self.s.on_tlp(self.now, &mut io);
    }

    fn reo(&mut self) {
        let mut io = Io {
            q: &mut self.q,
            fwd: &mut self.fwd,
            fwd_delay: SimTime::ZERO,
            line: 0,
        };
        self.s.on_reo_timeout(self.now, &mut io);
    }

    fn rto(&mut self) {
        let mut io = Io {
            q: &mut self.q,
            fwd: &mut self.fwd,
            fwd_delay: SimTime::ZERO,
            line: 0,
        };
        self.s.on_rto(self.now, &mut io);
    }
}

#[test]
fn initial_window_is_ten_segments() {
    let mut h = H::new(true);
    assert_eq!(h.sent(), (0..10).collect::<Vec<_>>());
    assert_eq!(h.s.in_flight(), 10);
}

#[test]
fn slow_start_sends_two_per_acked_segment() {
    let mut h = H::new(true);
    h.sent();
    h.advance(RTT);
    h.ack(2, &[]);
    // cwnd 10 → 12, in flight 8: four new segments.
    assert_eq!(h.s.tcp.cwnd, 12);
    assert_eq!(h.sent(), vec![10, 11, 12, 13]);
}

#[test]
fn three_sacked_segments_above_a_hole_start_sack_recovery() {
    let mut h = H::new(true);
    h.sent();
    h.advance(RTT);
    // Segment 0 lost; 1 and 2 SACKed: not yet (DupThresh = 3).
    h.ack(0, &[(1, 3)]);
    assert_eq!(h.s.tcp.ca_state, CaState::Disorder);
    // Two segments left the network: pipe 8 < cwnd 10, two new segments (RFC 3042 limited
    // transmit falls out of the pipe rule).
    assert_eq!(h.sent(), vec![10, 11]);
    h.ack(0, &[(1, 4)]);
    assert_eq!(h.s.tcp.ca_state, CaState::Recovery);
    assert_eq!(h.s.tcp.ssthresh, 5); // Reno: cwnd 10 / 2
                                     // PRR (RFC 6937): pipe = 12 − 3 SACKed − 1 lost = 8 > ssthresh, so
                                     // sndcnt = ceil(prr_delivered·ssthresh/prior_cwnd) − prr_out = ceil(1·5/10) − 0 = 1:
                                     // cwnd = 9 and the one segment sent is the retransmission.
    assert_eq!(h.s.tcp.cwnd, 9);
    assert_eq!(h.sent(), vec![0]);
    assert_eq!(h.s.stats().retransmits, 1);
}

#[test]
fn recovery_ends_with_cwnd_at_ssthresh() {
    let mut h = H::new(true);
    h.sent();
    h.advance(RTT);
    h.ack(0, &[(1, 4)]);
    let resent = h.sent();
    assert_eq!(resent[0], 0);
    h.advance(RTT);
    // Everything up to high_seq (10) is acknowledged: back to Open with cwnd = ssthresh = 5
    // (tcp_end_cwnd_reduction); the same ACK then reaches cong_avoid in Open, as in Linux:
    // 7 newly delivered segments (10 − 3 already SACKed) ≥ cwnd → +1.
    h.ack(10, &[]);
    assert_eq!(h.s.tcp.ca_state, CaState::Open);
    assert_eq!(h.s.tcp.cwnd, 6);
}

#[test]
fn newreno_retransmits_on_three_dupacks_and_on_each_partial_ack() {
    let mut h = H::new(false);
    h.sent();
    h.advance(RTT);
    // Segments 0 and 5 lost: 1, 2, 3 arrive → three dupACKs.
    h.ack(0, &[]);
    h.ack(0, &[]);
    assert_eq!(h.s.tcp.ca_state, CaState::Disorder);
    assert_eq!(h.sent(), vec![10, 11]); // each dupACK lets one new segment out
    h.ack(0, &[]);
    assert_eq!(h.s.tcp.ca_state, CaState::Recovery);
    assert_eq!(h.sent(), vec![0]);
    h.advance(RTT);
    // Partial ACK up to the second hole: RFC 6582 — retransmit it at once.
    h.ack(5, &[]);
    assert_eq!(h.s.tcp.ca_state, CaState::Recovery);
    assert_eq!(h.sent().first(), Some(&5));
    assert_eq!(h.s.stats().retransmits, 2);
}

#[test]
fn cubic_beta_from_the_registry_sets_ssthresh_and_cwnd_after_recovery() {
    // The real sender with CUBIC built from scenario parameters: slow start to cwnd 40
    // (HyStart off), three dupACKs (NewReno), recovery. RFC 9438 §4.6: ssthresh =
    // β·cwnd, β stored ×1024: default 717 → ⌊40·717/1024⌋ = 28; beta = 0.8 (the 2008
    // paper's "β = 0.2" decrease) → 819 → ⌊40·819/1024⌋ = 31. PRR brings cwnd down
    // during recovery; leaving it sets cwnd = ssthresh (tcp_end_cwnd_reduction) before
    // the ACK's own growth (at most one segment here).
    for (beta, ssthresh) in [(None, 28), (Some(0.8), 31)] {
        let mut params = std::collections::BTreeMap::from([("hystart".to_string(), 0.0)]);
        if let Some(b) = beta {
            params.insert("beta".to_string(), b);
        }
        let cc = AnyCc::from_name("cubic", &params, 1).unwrap();
        let mut h = H::with_cc(false, None, false, cc);
        h.advance(RTT);
        for cum in 1..=30 {
            h.ack(cum, &[]);
        }
        assert_eq!(h.s.tcp.cwnd, 40);
        for _ in 0..3 {
            h.ack(30, &[]);
        }
        assert_eq!(h.s.tcp.ca_state, CaState::Recovery);
        assert_eq!(h.s.tcp.ssthresh, ssthresh, "beta {beta:?}");
        h.advance(RTT);
        let all = h.s.snd_nxt();
        h.ack(all, &[]);
        assert_eq!(h.s.tcp.ca_state, CaState::Open);
        assert!(
            (ssthresh..=ssthresh + 1).contains(&h.s.tcp.cwnd),
            "beta {beta:?}: cwnd {}",
            h.s.tcp.cwnd
        );
    }
}

#[test]
fn rto_marks_everything_lost_sets_cwnd_one_and_backs_off() {
    let mut h = H::new(true);
    h.sent();
    // Nothing comes back. First the loss probe (2·SRTT + 2 ms): one new segment.
    h.advance(SimTime::from_millis(202));
    assert_eq!(h.s.tlp_timer.deadline(), Some(h.now));
    h.tlp();
    assert_eq!(h.sent(), vec![10]);
    h.advance(SimTime::from_secs(1));
    let rto0 = h.s.rto();
    h.rto();
    assert_eq!(h.s.tcp.ca_state, CaState::Loss);
    assert_eq!(h.s.tcp.cwnd, 1);
    assert_eq!(h.s.tcp.ssthresh, 5);
    assert_eq!(h.sent(), vec![0]); // go back: the head only
    assert_eq!(h.s.rto(), SimTime(rto0.0 * 2));
    // A second RTO without progress keeps ssthresh (Linux: icsk_retransmits > 0).
    h.rto();
    assert_eq!(h.s.tcp.ssthresh, 5);
    assert_eq!(h.s.stats().timeouts, 2);
    // The ACK of the retransmission: slow start from 1, the next lost segments follow.
    h.sent();
    h.advance(RTT);
    h.ack(1, &[]);
    assert_eq!(h.s.tcp.cwnd, 2);
    assert_eq!(h.sent(), vec![1, 2]);
}

#[test]
fn lost_retransmission_is_detected_by_later_sacks() {
    let mut h = H::new(true);
    h.sent();
    h.advance(RTT);
    h.ack(0, &[(1, 4)]); // recovery: retransmit 0, send 10
    assert_eq!(h.sent(), vec![0, 10]);
    h.advance(RTT);
    // The retransmission of 0 is lost again, but 10 (sent after it) arrives.
    h.ack(0, &[(1, 10), (10, 11)]);
    assert!(h.sent().contains(&0), "0 must be retransmitted again");
    assert_eq!(h.s.stats().retransmits, 2);
}

#[test]
fn tail_loss_probe_retransmits_the_last_segment_before_the_rto() {
    // A 10-segment transfer whose last segment is lost.
    let mut h = H::with_size(true, Some(10 * MSS as u64));
    assert_eq!(h.sent().len(), 10);
    h.advance(RTT);
    h.ack(8, &[]);
    // Two segments out: PTO = 2·SRTT + 2 ms, well before the RTO (SRTT + 200 ms).
    let srtt = h.s.srtt();
    assert_eq!(
        h.s.tlp_timer.deadline(),
        Some(h.now + SimTime(2 * srtt.0) + SimTime::from_millis(2))
    );
    h.ack(9, &[]);
    // One segment out: 2·SRTT + 200 ms (room for a delayed ACK), but never after the RTO.
    assert_eq!(h.s.tlp_timer.deadline(), h.s.rto_timer.deadline());
    h.advance(h.s.rto());
    // Both are due; as in Linux (one timer), the probe goes first and re-arms the RTO.
    h.rto();
    assert_eq!(h.s.stats().timeouts, 0);
    assert_eq!(h.sent(), vec![9]);
    assert_eq!(h.s.stats().retransmits, 1);
    h.advance(RTT);
    h.ack(10, &[]);
    assert_eq!(h.s.stats().completion, Some(h.now));
    assert_eq!(h.s.stats().timeouts, 0);
}

#[test]
fn rack_reordering_timer_recovers_a_loss_with_one_dupack() {
    let mut h = H::with_size(true, Some(3 * MSS as u64));
    h.sent(); // only 3 segments: at most 2 dupACKs, never DupThresh
    h.advance(RTT);
    h.ack(0, &[(1, 2)]);
    assert_eq!(h.s.tcp.ca_state, CaState::Disorder);
    // reo_wnd = min_rtt/4 = 25 ms; the timer adds Linux's 2 ms.
    assert_eq!(
        h.s.reo_timer.deadline(),
        Some(h.now + SimTime::from_millis(27))
    );
    h.advance(SimTime::from_millis(27));
    h.reo();
    assert_eq!(h.s.tcp.ca_state, CaState::Recovery);
    assert_eq!(h.sent(), vec![0]);
}

#[test]
fn pacing_spaces_segments_after_the_first_ten() {
    // As Linux's internal pacing: no pacing for the first 10 data segments, then one
    // segment per len/pacing_rate (here 1000 B at 1 MB/s = 1 ms), with a pacing timer.
    let mut h = H::new(true);
    h.s.tcp.pacing = true;
    h.s.tcp.pacing_rate = 1_000_000;
    let mut io = Io {
        q: &mut h.q,
        fwd: &mut h.fwd,
        fwd_delay: SimTime::ZERO,
        line: 0,
    };
    h.s.try_send(SimTime::ZERO, &mut io); // nothing new: the IW went out at start, unpaced
    assert_eq!(h.sent().len(), 10);
    h.advance(RTT);
    h.ack(2, &[]); // cwnd 12, in flight 8: room for 4, but paced
    assert_eq!(h.sent(), vec![10]);
    // Linux's departure stamp had to jump from 0 (the IW) to now: up to half a gap of
    // credit, so the next segment may leave after 0.5 ms.
    assert_eq!(
        h.s.pacing_timer.deadline(),
        Some(RTT + SimTime::from_micros(500))
    );
    h.advance(SimTime::from_micros(500));
    let mut io = Io {
        q: &mut h.q,
        fwd: &mut h.fwd,
        fwd_delay: SimTime::ZERO,
        line: 0,
    };
    h.s.try_send(h.now, &mut io);
    assert_eq!(h.sent(), vec![11]);
    // On time: a full 1 ms gap.
    assert_eq!(
        h.s.pacing_timer.deadline(),
        Some(h.now + SimTime::from_millis(1))
    );
}

/// (segment, aggregate mark) of the packets sent since the last call.
fn sent_aggs(h: &mut H) -> Vec<(u64, u32)> {
    h.fwd.drain().into_iter().map(|p| (p.seg, p.agg)).collect()
}

#[test]
fn gso_sender_sends_aggregates_of_tso_autosize_cut_by_cwnd() {
    // Without GSO every segment is its own aggregate.
    let mut h = H::new(true);
    assert!(sent_aggs(&mut h).iter().all(|&(_, a)| a == 1));
    // With GSO, at start: srtt 100 ms, cwnd 10 in slow start → sk_pacing_rate = 200 % ×
    // 10 × 1000 B / 0.1 s = 200 kB/s; 1 ms of it is 195 B < 1 MSS, so tcp_tso_autosize's
    // floor of 2 segments: the initial window leaves as 5 aggregates of 2.
    let mut h = H::build(true, None, true);
    let expect: Vec<(u64, u32)> = (0..10)
        .map(|i| (i, if i % 2 == 0 { 2 } else { 0 }))
        .collect();
    assert_eq!(sent_aggs(&mut h), expect);
    // At 12.5 MB/s (100 Mbit/s) an aggregate would be 12 207 B = 12 segments, but after
    // ACKing 2 segments cwnd is 12 with 8 in flight: the cwnd cuts it to 4.
    h.s.tcp.pacing_rate = 12_500_000;
    h.advance(RTT);
    h.ack(2, &[]);
    assert_eq!(sent_aggs(&mut h), vec![(10, 4), (11, 0), (12, 0), (13, 0)]);
}

#[test]
fn gso_sender_defers_a_small_aggregate_until_a_third_of_cwnd_is_free() {
    // tcp_tso_should_defer: a window-limited GSO sender waits for room for a full
    // aggregate (here 12 segments) or a third of cwnd, while the ACK of its oldest
    // outstanding segment is due (sent ≥ srtt/2 ago) and it sent within the last 1 ms.
    let mut h = H::build(true, None, true);
    sent_aggs(&mut h);
    h.s.tcp.pacing_rate = 12_500_000;
    h.advance(RTT);
    h.ack(2, &[]); // 100 ms since the last send: no deferral; cwnd 12, 8 in flight
    assert_eq!(sent_aggs(&mut h).len(), 4);
    h.advance(SimTime::from_micros(100));
    h.ack(3, &[]); // cwnd 13, 11 in flight: room for 2 < 12 and < 13 / 3: deferred
    assert_eq!(sent_aggs(&mut h), vec![]);
    h.advance(SimTime::from_micros(100));
    h.ack(6, &[]); // cwnd 16, 8 in flight: room for 8 ≥ 16 / 3: one aggregate of 8
    let expect: Vec<(u64, u32)> = (14..22).map(|i| (i, if i == 14 { 8 } else { 0 })).collect();
    assert_eq!(sent_aggs(&mut h), expect);
}

thread_local! {
    /// RACK detections checked against the window walk (`rack_detect_reference`).
    pub(super) static RACK_CHECKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// First transmissions a detection found within their reordering window (moved to
    /// RACK's `held` queue).
    pub(super) static HELD: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Cumulative ACKs checked against the segment loop (`clean_reference`), and those of
    /// them that acknowledged plain segments and others (SACKed, lost or retransmitted).
    pub(super) static CLEANS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// A two-flow SACK dumbbell of Reno flows as JSON (the Python side's `sim_json`).
fn sack_dumbbell(rate_bps: u64, rtt_ms: u64, buffer_bytes: u64, loss: f64, secs: u64) -> String {
    sack_dumbbell_of("reno", rate_bps, rtt_ms, buffer_bytes, loss, secs)
}

/// `sack_dumbbell` with congestion control `cca`.
fn sack_dumbbell_of(
    cca: &str,
    rate_bps: u64,
    rtt_ms: u64,
    buffer_bytes: u64,
    loss: f64,
    secs: u64,
) -> String {
    let flow = |id: u32| {
        format!(
            r#"{{"app_rate_bps":null,"cca":"{cca}","cca_params":{{}},"cwnd_clamp":null,"group":0,
            "id":{id},"jitter_ns":120000,"rmem_bytes":250000000,"rtt_ns":{},"sack":true,
            "size_bytes":null,"start_ns":{},"stop_ns":null,"wmem_bytes":250000000}}"#,
            rtt_ms * 1_000_000,
            id as u64 * 300_000_000
        )
    };
    format!(
        r#"{{"bottleneck":{{"aqm":{{"kind":"droptail"}},"buffer_bytes":{buffer_bytes},
        "buffer_pkts":null,"loss":{loss},"mtu_bytes":1500,"rate_bps":{rate_bps}}},
        "duration_ns":{},"flows":[{},{}],"measure":{{"from_ns":0,"interval_ns":1000000000,
        "to_ns":{}}},"name":"rack","seed":3}}"#,
        secs * 1_000_000_000,
        flow(0),
        flow(1),
        secs * 1_000_000_000
    )
}

/// Every RACK detection in runs with start-up overshoot losses (1 Gbit/s × 100 ms, thousands
/// lost), drop-tail losses and random loss with jittered paths marks exactly the
/// segments, and waits exactly as long, as the full window walk would; first
/// transmissions waiting out their reordering window (RACK's `held` queue) among them.
#[test]
fn rack_queue_marks_what_the_window_walk_marks() {
    for (rate, rtt, buf, loss, secs) in [
        (1_000_000_000, 100, 12_500_000, 0.0, 4),
        (100_000_000, 100, 1_250_000, 0.001, 20),
        (1_000_000_000, 20, 500_000, 0.0, 5),
    ] {
        let cfg = crate::Config::from_json(&sack_dumbbell(rate, rtt, buf, loss, secs)).unwrap();
        RACK_CHECKS.with(|c| c.set(0));
        HELD.with(|c| c.set(0));
        let out = crate::run(&cfg).unwrap();
        let lost = out.link_totals.drops + out.link_totals.random_losses;
        assert!(lost > 100, "{rate} bit/s: only {lost} losses");
        let checks = RACK_CHECKS.with(|c| c.get());
        assert!(
            checks > lost,
            "{rate} bit/s: {checks} detections for {lost} losses"
        );
        let held = HELD.with(|c| c.get());
        assert!(held > 10, "{rate} bit/s: {held} first transmissions held");
    }
}

/// Cumulative ACKs that cover runs of plain segments, alone or among SACKed, lost and
/// retransmitted ones (losses in recovery, at the start-up overshoot, random loss), leave
/// RACK, the rate sample (BBR's; the other algorithms read none) and the RTT samples
/// exactly as passing every segment on would (`clean_acked` checks each against
/// `clean_reference`).
#[test]
fn runs_of_plain_segments_change_nothing() {
    for (cca, rate, rtt, buf, loss, secs) in [
        ("reno", 1_000_000_000, 100, 12_500_000, 0.0, 4),
        ("reno", 100_000_000, 100, 1_250_000, 0.001, 20),
        ("bbr", 100_000_000, 100, 1_250_000, 0.001, 20),
    ] {
        let json = sack_dumbbell_of(cca, rate, rtt, buf, loss, secs);
        let cfg = crate::Config::from_json(&json).unwrap();
        CLEANS.with(|c| c.set((0, 0)));
        crate::run(&cfg).unwrap();
        let (all, mixed) = CLEANS.with(|c| c.get());
        assert!(all > 10_000, "{rate} bit/s: only {all} cumulative ACKs");
        assert!(
            mixed > 10,
            "{rate} bit/s: only {mixed} mixed cumulative ACKs"
        );
    }
}

/// A cumulative ACK of a run of plain segments and then the probe that retransmitted the
/// last one: RACK keeps the probe's RTT (the run is passed on before the segment after it).
#[test]
fn a_run_of_plain_segments_goes_before_the_retransmission_after_it() {
    let mut h = H::with_size(true, Some(10 * MSS as u64));
    assert_eq!(h.sent(), (0..10).collect::<Vec<_>>());
    h.advance(SimTime(2 * RTT.0));
    h.tlp();
    assert_eq!(h.sent(), vec![9], "the probe retransmits the last segment");
    h.advance(RTT + SimTime::from_millis(5));
    h.ack(10, &[]);
    let (mstamp, end_seq, rtt, _, _) = h.s.rack.marks();
    assert_eq!((mstamp, end_seq), (SimTime::from_millis(200), 10));
    assert_eq!(rtt, SimTime::from_millis(105));
}

/// Issue 13: with many connections each line of `Sender` an ACK reads is a likely cache
/// miss. What a common ACK of a Reno sender reads (everything up to the algorithm's tag;
/// Reno keeps no state of its own) fits in the first eight lines.
#[test]
fn common_ack_fields_fit_in_eight_cache_lines() {
    use std::mem::{align_of, offset_of};
    assert_eq!(align_of::<Sender>(), 64);
    assert!(
        offset_of!(Sender, cc) < 8 * 64,
        "{}",
        offset_of!(Sender, cc)
    );
}
