//! Test harness for the congestion controls: a `TestSender` that calls the hooks through
//! `cc::hooks`, the sequence the simulator's sender (`tcp::Sender`) runs, so that tests
//! read like scenarios ("ack 10, lose, advance 1 s, ...") and exercise the real order.
//!
//! Two levels:
//! - `TestSender`: the sender's side only. The test decides what is acked, when, with which
//!   RTT sample, and when a loss or a timeout happens. The window is kept full (every ACK
//!   is followed by sending up to cwnd), as for a bulk flow.
//! - `Path`: a one-flow bottleneck (fixed packet service time, unlimited FIFO, fixed base
//!   RTT) that produces delivery-rate samples the way Linux's `tcp_rate.c` does, for the
//!   rate-based algorithms (BBR).
//!
//! Plus the deterministic periodic-loss loop behind the response-function tests.

use super::hooks::{self, AfterAck};
use super::{AckEvent, CaState, CongestionControl, RateSample, TcpCc};
use crate::units::SimTime;
use std::collections::VecDeque;

pub const MSS: u32 = 1448;

pub struct TestSender<C: CongestionControl> {
    pub tcp: TcpCc,
    pub cc: C,
    /// The RTT sample `ack` reports.
    pub rtt: SimTime,
    /// snd_nxt (bytes) when the last reduction or timeout began (Linux `high_seq`).
    high_seq: u64,
    /// Timeouts since data was last acknowledged.
    timeouts: u32,
}

impl<C: CongestionControl> TestSender<C> {
    /// A fresh connection (IW 10, no cwnd clamp) after `init`, with 100 ms RTT samples.
    pub fn new(cc: C) -> Self {
        let mut s = TestSender {
            tcp: TcpCc::new(MSS, u32::MAX),
            cc,
            rtt: SimTime::from_millis(100),
            high_seq: 0,
            timeouts: 0,
        };
        s.cc.init(&mut s.tcp);
        s.fill();
        s
    }

    pub fn cwnd(&self) -> u32 {
        self.tcp.cwnd
    }

    pub fn now(&self) -> SimTime {
        self.tcp.now
    }

    pub fn advance(&mut self, dt: SimTime) {
        self.tcp.now += dt;
    }

    /// Send up to cwnd (a bulk sender is always cwnd-limited).
    pub fn fill(&mut self) {
        self.tcp.packets_in_flight = self.tcp.cwnd;
        self.tcp.snd_nxt = self.tcp.snd_una + u64::from(self.tcp.cwnd) * u64::from(MSS);
        self.tcp.lsndtime = self.tcp.now;
    }

    /// `n` segments cumulatively acknowledged, with the default RTT sample.
    pub fn ack(&mut self, n: u32) {
        let rtt = self.rtt;
        self.ack_with_rtt(n, Some(rtt));
    }

    /// `n` segments acknowledged with the given RTT sample (None: Karn, no sample), then
    /// the hooks as the sender calls them (`hooks::on_ack`); during recovery PRR owns cwnd
    /// and the harness leaves it to the test.
    pub fn ack_with_rtt(&mut self, n: u32, rtt: Option<SimTime>) {
        let prior_in_flight = self.tcp.packets_in_flight;
        self.tcp.snd_una += u64::from(n) * u64::from(MSS);
        self.tcp.delivered += u64::from(n);
        self.tcp.delivered_time = self.tcp.now;
        self.tcp.packets_in_flight = prior_in_flight.saturating_sub(n);
        if n > 0 {
            self.timeouts = 0;
        }
        if let Some(r) = rtt {
            if self.tcp.min_rtt == SimTime::ZERO || r < self.tcp.min_rtt {
                self.tcp.min_rtt = r;
            }
            if self.tcp.srtt == SimTime::ZERO {
                self.tcp.srtt = r;
            }
        }
        let ev = AckEvent {
            acked: n,
            rtt,
            ack_seq: self.tcp.snd_una,
        };
        let rs = RateSample {
            acked_sacked: n,
            prior_in_flight,
            rtt,
            ..RateSample::default()
        };
        let _ = hooks::on_ack(&mut self.cc, &mut self.tcp, &ev, &rs, n > 0);
        if self.tcp.ca_state == CaState::Open {
            self.fill();
        }
    }

    /// Fast retransmit (Linux `tcp_enter_recovery` → `tcp_init_cwnd_reduction`):
    /// `hooks::start_reduction`, then the Recovery state.
    pub fn enter_recovery(&mut self) {
        self.high_seq = self.tcp.snd_nxt;
        hooks::start_reduction(&mut self.cc, &mut self.tcp);
        self.set_state(CaState::Recovery);
    }

    /// Recovery completes (`tcp_end_cwnd_reduction`): cwnd = ssthresh and the CompleteCwr
    /// event (`hooks::end_reduction`), then Open.
    pub fn exit_recovery(&mut self) {
        hooks::end_reduction(&mut self.cc, &mut self.tcp);
        self.set_state(CaState::Open);
        self.fill();
    }

    /// One loss repaired by fast recovery: enter and complete recovery.
    pub fn lose(&mut self) {
        self.enter_recovery();
        self.exit_recovery();
    }

    /// Retransmission timeout (Linux `tcp_enter_loss`, as the sender runs it): ssthresh
    /// from the algorithm and CA_EVENT_LOSS unless the episode already took one
    /// (`hooks::timeout_takes_ssthresh`), everything in flight lost, cwnd = 1, state Loss.
    pub fn rto(&mut self) {
        let high_seq_acked = self.tcp.snd_una >= self.high_seq;
        if hooks::timeout_takes_ssthresh(&self.tcp, high_seq_acked, self.timeouts == 0) {
            hooks::on_timeout(&mut self.cc, &mut self.tcp);
        }
        self.tcp.packets_in_flight = 0;
        hooks::timeout_window(&mut self.tcp, 0);
        self.set_state(CaState::Loss);
        self.high_seq = self.tcp.snd_nxt;
        self.timeouts += 1;
    }

    pub fn set_state(&mut self, state: CaState) {
        hooks::set_state(&mut self.cc, &mut self.tcp, state);
    }

    /// Feed one delivery-rate sample to `cong_control` (the delivery counters advance by
    /// `rs.acked_sacked` first, as `tcp_ack` does before calling the hook).
    pub fn rate_sample(&mut self, rs: RateSample) {
        self.tcp.delivered += u64::from(rs.acked_sacked);
        self.tcp.delivered_time = self.tcp.now;
        self.tcp.lost += u64::from(rs.losses);
        let ev = AckEvent {
            acked: rs.acked_sacked,
            rtt: rs.rtt,
            ack_seq: self.tcp.snd_una,
        };
        let _ = hooks::on_ack(&mut self.cc, &mut self.tcp, &ev, &rs, rs.acked_sacked > 0);
    }
}

/// Average window (segments per RTT) of a bulk flow with a constant `rtt` when exactly
/// every `loss_every`-th delivered packet is lost (the deterministic loss model of the
/// response-function analyses: Mathis et al. 1997 for Reno, RFC 9438 §5 for CUBIC).
///
/// One ACK per segment, spaced evenly over each round trip. A loss costs one round trip of
/// fast recovery (no window growth; the rest of the window is still delivered), after which
/// cwnd = ssthresh. Cycles are run until the window at the loss repeats (period 1 or 2,
/// within one segment; at most `max_warmup` cycles, else panic), then the average is taken
/// over the next `measured` cycles as delivered packets × RTT / elapsed time.
pub fn periodic_loss_average_window<C: CongestionControl>(
    s: &mut TestSender<C>,
    rtt: SimTime,
    loss_every: u64,
    max_warmup: u32,
    measured: u32,
) -> f64 {
    s.rtt = rtt;
    let mut since_loss = 0u64;
    let mut peaks: Vec<u32> = Vec::new();
    let mut start: Option<(SimTime, u64, usize)> = None;
    let mut in_recovery_left = 0u32;
    loop {
        let w = s.cwnd().max(1);
        let step = SimTime(rtt.as_nanos() / u64::from(w));
        for _ in 0..w {
            s.advance(step);
            s.ack(1);
            if in_recovery_left > 0 {
                in_recovery_left -= 1;
                if in_recovery_left == 0 {
                    s.exit_recovery();
                }
                continue;
            }
            since_loss += 1;
            if since_loss < loss_every {
                continue;
            }
            since_loss = 0;
            peaks.push(s.cwnd());
            let n = peaks.len();
            match start {
                None => {
                    let settled =
                        n >= 5 && (0..2).all(|i| peaks[n - 1 - i].abs_diff(peaks[n - 3 - i]) <= 1);
                    if settled {
                        start = Some((s.now(), s.tcp.delivered, n));
                    } else {
                        assert!(
                            n < max_warmup as usize,
                            "no steady state after {n} losses: {peaks:?}"
                        );
                    }
                }
                Some((t0, d0, n0)) if n - n0 == measured as usize => {
                    let elapsed = (s.now() - t0).as_secs_f64();
                    return (s.tcp.delivered - d0) as f64 * rtt.as_secs_f64() / elapsed;
                }
                Some(_) => {}
            }
            // The rest of this window is acked during recovery.
            in_recovery_left = s.cwnd();
            s.enter_recovery();
        }
    }
}

/// A single-flow bottleneck for rate-based algorithms: packets are served one at a time,
/// every `service` (so the bottleneck rate is 1/service packets per second) from an
/// unlimited FIFO, and each is acknowledged (one ACK per packet) `base_rtt` after it
/// leaves the bottleneck. The sender obeys cwnd and, when `tcp.pacing`, the pacing rate.
///
/// Delivery-rate samples follow Linux `tcp_rate.c` (draft-cheng-iccrg-delivery-rate-estimation):
/// each packet remembers `delivered`, `delivered_time` and `first_tx_time` when sent; its ACK
/// yields delivered-since and max(send phase, ACK phase) as the interval, and a sample whose
/// interval is shorter than the connection's min RTT is invalid.
pub struct Path {
    pub service: SimTime,
    pub base_rtt: SimTime,
    bottleneck_free: SimTime,
    next_send: SimTime,
    first_tx: SimTime,
    inflight: VecDeque<Sent>,
    /// Segments sent so far.
    pub sent: u64,
}

#[derive(Clone, Copy)]
struct Sent {
    ack_at: SimTime,
    sent_at: SimTime,
    delivered: u64,
    delivered_time: SimTime,
    first_tx: SimTime,
}

impl Path {
    pub fn new(service: SimTime, base_rtt: SimTime) -> Self {
        Path {
            service,
            base_rtt,
            bottleneck_free: SimTime::ZERO,
            next_send: SimTime::ZERO,
            first_tx: SimTime::ZERO,
            inflight: VecDeque::new(),
            sent: 0,
        }
    }

    /// Run the flow until `until`; `on_ack` is called after each ACK was processed.
    pub fn run_until<C: CongestionControl>(
        &mut self,
        s: &mut TestSender<C>,
        until: SimTime,
        mut on_ack: impl FnMut(&TestSender<C>),
    ) {
        if self.sent == 0 {
            // Forget the window TestSender::new pretended to send.
            s.tcp.snd_nxt = s.tcp.snd_una;
            s.tcp.packets_in_flight = 0;
        }
        loop {
            let can_send = (self.inflight.len() as u32) < s.tcp.cwnd;
            let send_at = if s.tcp.pacing {
                self.next_send.max(s.now())
            } else {
                s.now()
            };
            let ack_at = self.inflight.front().map(|p| p.ack_at);
            let next_is_send = can_send && !matches!(ack_at, Some(a) if a <= send_at);
            let t = if next_is_send {
                send_at
            } else {
                ack_at.unwrap_or(SimTime::MAX)
            };
            if t > until {
                s.tcp.now = until;
                return;
            }
            s.tcp.now = t;
            if next_is_send {
                self.send(s);
            } else {
                self.ack(s);
                on_ack(s);
            }
        }
    }

    fn send<C: CongestionControl>(&mut self, s: &mut TestSender<C>) {
        let now = s.now();
        if self.inflight.is_empty() {
            // tcp_rate_skb_sent: a new flight starts the sampling clocks.
            self.first_tx = now;
            s.tcp.delivered_time = now;
        }
        let depart = self.bottleneck_free.max(now) + self.service;
        self.bottleneck_free = depart;
        self.inflight.push_back(Sent {
            ack_at: depart + self.base_rtt,
            sent_at: now,
            delivered: s.tcp.delivered,
            delivered_time: s.tcp.delivered_time,
            first_tx: self.first_tx,
        });
        self.sent += 1;
        s.tcp.snd_nxt += u64::from(MSS);
        s.tcp.lsndtime = now;
        s.tcp.packets_in_flight = self.inflight.len() as u32;
        if s.tcp.pacing && s.tcp.pacing_rate > 0 {
            let gap = u64::from(MSS) * 1_000_000_000 / s.tcp.pacing_rate;
            self.next_send = now + SimTime(gap);
            s.tcp.wstamp = self.next_send;
        }
    }

    fn ack<C: CongestionControl>(&mut self, s: &mut TestSender<C>) {
        let now = s.now();
        let p = self
            .inflight
            .pop_front()
            .expect("an ACK needs a packet in flight");
        let prior_in_flight = self.inflight.len() as u32 + 1;
        let rtt = now - p.sent_at;
        if s.tcp.min_rtt == SimTime::ZERO || rtt < s.tcp.min_rtt {
            s.tcp.min_rtt = rtt;
        }
        s.tcp.srtt = if s.tcp.srtt == SimTime::ZERO {
            rtt
        } else {
            SimTime((s.tcp.srtt.as_nanos() * 7 + rtt.as_nanos()) / 8)
        };
        s.tcp.snd_una += u64::from(MSS);
        s.tcp.packets_in_flight = self.inflight.len() as u32;
        s.tcp.delivered += 1;
        s.tcp.delivered_time = now;
        // tcp_rate_gen: the sampling interval is the longer of the send and ACK phases.
        self.first_tx = p.sent_at;
        let send_elapsed = p.sent_at - p.first_tx;
        let ack_elapsed = now - p.delivered_time;
        let mut interval = send_elapsed.max(ack_elapsed);
        if interval < s.tcp.min_rtt {
            interval = SimTime::ZERO;
        }
        let rs = RateSample {
            prior_delivered: p.delivered,
            delivered: (s.tcp.delivered - p.delivered) as i64,
            interval,
            rtt: Some(rtt),
            losses: 0,
            acked_sacked: 1,
            prior_in_flight,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
        };
        let ev = AckEvent {
            acked: 1,
            rtt: Some(rtt),
            ack_seq: s.tcp.snd_una,
        };
        let after = hooks::on_ack(&mut s.cc, &mut s.tcp, &ev, &rs, true);
        assert_eq!(after, AfterAck::Done, "Path has no loss recovery");
    }
}
