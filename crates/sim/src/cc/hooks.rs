//! The order in which a TCP sender calls the congestion-control hooks, written once: the
//! sender (`crate::tcp::Sender`) and the CC test harness (`cc::harness`) both call these,
//! so what the tests exercise is the sequence the simulator runs.

use super::INFINITE_SSTHRESH;
use super::{AckEvent, CaState, CongestionControl, CwndEvent, RateSample, TcpCc};

/// What the caller must still do after `on_ack`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum AfterAck {
    /// Nothing: the algorithm has set cwnd (or left it alone).
    Done,
    /// The connection is in a cwnd reduction (Recovery or CWR): the sender's PRR
    /// (RFC 6937, Linux `tcp_cwnd_reduction`) sets cwnd.
    Reduce,
}

/// Linux `tcp_ack` → `tcp_cong_control`, after loss detection: `pkts_acked` when the ACK
/// delivered data or gave an RTT sample; then `cong_control` for rate-based algorithms;
/// else PRR during a reduction; else `cong_avoid` when snd_una advanced (`tcp_may_raise_cwnd`
/// in the Open, Disorder and Loss states).
pub fn on_ack<C: CongestionControl>(
    cc: &mut C,
    tcp: &mut TcpCc,
    ev: &AckEvent,
    rs: &RateSample,
    una_advanced: bool,
) -> AfterAck {
    if ev.acked > 0 || ev.rtt.is_some() {
        cc.pkts_acked(tcp, ev);
    }
    if cc.has_cong_control() {
        cc.cong_control(tcp, rs);
    } else if matches!(tcp.ca_state, CaState::Recovery | CaState::Cwr) {
        return AfterAck::Reduce;
    } else if una_advanced {
        cc.cong_avoid(tcp, ev);
    }
    AfterAck::Done
}

/// A state change (Linux `tcp_set_ca_state`): the hook sees the old state in `tcp`.
pub fn set_state<C: CongestionControl>(cc: &mut C, tcp: &mut TcpCc, state: CaState) {
    if tcp.ca_state == state {
        return;
    }
    cc.set_state(tcp, state);
    tcp.ca_state = state;
}

/// Start of a cwnd reduction (Linux `tcp_init_cwnd_reduction`): remember cwnd, reset the
/// linear counter, ask the algorithm for ssthresh.
pub fn start_reduction<C: CongestionControl>(cc: &mut C, tcp: &mut TcpCc) {
    tcp.cwnd_cnt = 0;
    tcp.prior_cwnd = tcp.cwnd;
    tcp.ssthresh = cc.ssthresh(tcp);
}

/// End of a cwnd reduction (Linux `tcp_end_cwnd_reduction`): cwnd = ssthresh, then
/// `CwndEvent::CompleteCwr` (rate-based algorithms keep their own cwnd).
pub fn end_reduction<C: CongestionControl>(cc: &mut C, tcp: &mut TcpCc) {
    if cc.has_cong_control() {
        return;
    }
    if tcp.ssthresh < INFINITE_SSTHRESH {
        tcp.set_cwnd(tcp.ssthresh);
    }
    cc.cwnd_event(tcp, CwndEvent::CompleteCwr);
}

/// A retransmission timeout (Linux `tcp_enter_loss`): does it take a new ssthresh? Yes,
/// unless it continues an episode whose ssthresh was already taken (Recovery or Loss with
/// `high_seq` not yet acknowledged, after the first timeout).
pub fn timeout_takes_ssthresh(tcp: &TcpCc, high_seq_acked: bool, first_timeout: bool) -> bool {
    let st = tcp.ca_state;
    matches!(st, CaState::Open | CaState::Disorder)
        || high_seq_acked
        || (st == CaState::Loss && first_timeout)
}

/// A retransmission timeout that takes a new ssthresh: remember cwnd, ssthresh from the
/// algorithm, then `CwndEvent::Loss`.
pub fn on_timeout<C: CongestionControl>(cc: &mut C, tcp: &mut TcpCc) {
    tcp.prior_cwnd = tcp.cwnd;
    tcp.ssthresh = cc.ssthresh(tcp);
    cc.cwnd_event(tcp, CwndEvent::Loss);
}

/// A retransmission timeout, second part (once the queue is marked lost): cwnd = in
/// flight + 1, linear counter reset; the caller then enters `CaState::Loss`.
pub fn timeout_window(tcp: &mut TcpCc, in_flight: u32) {
    tcp.set_cwnd(in_flight + 1);
    tcp.cwnd_cnt = 0;
}
