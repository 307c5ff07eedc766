//! `Agent/TCP/Vegas` (ns-2's tcp-vegas.cc, Brakmo & Peterson's algorithm as ported from
//! USC's NetBSD Vegas), re-written from its description and behaviour:
//!
//! - fine-grained RTT: every packet's send time (`v_sendtime_`) and transmission count
//!   (`v_transmits_`) in a ring of `window_` slots; an ACK for a packet sent once gives a
//!   sample, which updates `v_baseRTT_` (the minimum) and the fine-grained timeout
//!   `v_timeout_`, and is summed for the once-per-RTT average;
//! - once per RTT (the ACK of the first packet sent after the previous decision,
//!   `v_begseq_`): `rtt` = mean of the RTT samples since then, `actual` = packets sent in
//!   that RTT / rtt, `expected` = packets outstanding / `v_baseRTT_`, and
//!   `delta = round((expected − actual) · v_baseRTT_)` in packets. In slow start
//!   (cwnd < ssthresh) the window grows only every other RTT, by one packet per ACK, and
//!   if delta > γ slow start ends (ssthresh = 2, cwnd −= cwnd/8). In congestion avoidance:
//!   delta > β ⇒ cwnd −= 1 at once; delta < α ⇒ +1/cwnd per ACK over the next RTT;
//!   otherwise hold. Growth per ACK happens only while cwnd exceeds the packets
//!   outstanding by at most 2;
//! - Enhanced Vegas (Hasegawa et al., as seed 003 §2.2 states it): with `delta = δ` set,
//!   there is no hold region: diff·BaseRTT ≥ δ ⇒ −1, otherwise +1/cwnd per ACK (compared
//!   unrounded, as the paper writes it);
//! - fine-grained retransmit: on a dupACK (and on the first two new ACKs after a
//!   retransmission, `v_worried_`) the oldest unacknowledged packet is retransmitted at
//!   once if it was sent more than `v_timeout_` ago; on the third dupACK regardless. The
//!   window is cut (by 1/4, or 1/2 for a packet already retransmitted, to 2 below 4) only
//!   if it has not changed since that packet was sent, then inflated by the dupACKs, and
//!   deflated back on the next new ACK;
//! - timeout: ssthresh halves, cwnd = 2 (`v_slowstart_`), go-back-N.
//!
//! `exact_base_rtt` (not in ns-2): `v_baseRTT_` is the path's true minimum RTT from the
//! start and never re-measured. Seed 003 states its results are "free from the impact of
//! an incorrect min. RTT measurement"; from a simultaneous start ns-2's rule lets the
//! longer connection measure its base RTT behind the shorter one's standing queue.

use super::agent::{Agent, Close, CwndAction, Variant, NUMDUPACKS, WINDOW_INIT};
use crate::tcp::Io;

/// Vegas thresholds, in packets.
#[derive(Clone, Copy, Debug)]
pub struct VegasParams {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// Enhanced Vegas's δ (α = β = δ without a hold region), when set.
    pub delta: Option<f64>,
    /// A known base RTT (seconds) used instead of the measured one (`exact_base_rtt`):
    /// not ns-2's behaviour, the condition seed 003 states for its runs.
    pub base_rtt: Option<f64>,
    /// `windowInit_`: cwnd_ once packet 0 is acknowledged (`delay_growth_`).
    pub window_init: f64,
}

impl Default for VegasParams {
    /// ns-default.tcl: `v_alpha_ 1`, `v_beta_ 3`, `v_gamma_ 1`.
    fn default() -> Self {
        VegasParams {
            alpha: 1.0,
            beta: 3.0,
            gamma: 1.0,
            delta: None,
            base_rtt: None,
            window_init: WINDOW_INIT,
        }
    }
}

pub struct Vegas {
    pub p: VegasParams,
    /// Ring of `window_` slots: send time (seconds since packet 0 left, −1 = none) and
    /// transmissions of the packet in each slot.
    sendtime: Vec<f64>,
    transmits: Vec<u32>,
    pub base_rtt: f64,
    /// Last fine-grained RTT sample.
    pub rtt: f64,
    sa: f64,
    sd: f64,
    pub timeout: f64,
    worried: i64,
    begseq: i64,
    begtime: f64,
    cnt_rtt: u32,
    sum_rtt: f64,
    incr: f64,
    inc_flag: bool,
    newcwnd: f64,
    cwnd_changed: f64,
    firstrecv: bool,
}

impl Vegas {
    pub fn new(p: VegasParams, window: u32) -> Vegas {
        let n = window.max(1) as usize;
        Vegas {
            p,
            sendtime: vec![-1.0; n],
            transmits: vec![0; n],
            base_rtt: 1e9,
            rtt: 0.0,
            sa: 0.0,
            sd: 0.0,
            timeout: 1000.0,
            worried: 0,
            begseq: 0,
            begtime: 0.0,
            cnt_rtt: 0,
            sum_rtt: 0.0,
            incr: 0.0,
            inc_flag: true,
            newcwnd: 0.0,
            cwnd_changed: 0.0,
            firstrecv: false,
        }
    }

    fn slot(&self, seqno: i64) -> usize {
        (seqno as usize) % self.sendtime.len()
    }

    /// A packet is sent at `vt` (seconds since packet 0).
    pub fn on_output(&mut self, seqno: i64, vt: f64) {
        let i = self.slot(seqno);
        self.sendtime[i] = vt;
        self.transmits[i] += 1;
    }

    /// `vegas_expire`: the packet after `seqno`, if its fine-grained timeout passed.
    fn expired(&self, seqno: i64, vt: f64) -> Option<i64> {
        let elapsed = vt - self.sendtime[self.slot(seqno + 1)];
        (elapsed >= self.timeout).then_some(seqno + 1)
    }

    /// A fine-grained RTT sample.
    fn sample(&mut self, rtt: f64) {
        self.sum_rtt += rtt;
        self.cnt_rtt += 1;
        if rtt > 0.0 {
            self.rtt = rtt;
            if rtt < self.base_rtt && self.p.base_rtt.is_none() {
                self.base_rtt = rtt;
            }
            let mut n = rtt - self.sa / 8.0;
            self.sa += n;
            n = n.abs() - self.sd / 4.0;
            self.sd += n;
            self.timeout = (self.sa / 4.0 + self.sd) / 2.0;
            self.timeout += self.timeout / 16.0;
        }
    }
}

fn vegas(a: &mut Agent) -> &mut Vegas {
    match &mut a.variant {
        Variant::Vegas(v) => v,
        _ => unreachable!("vegas receive path on a non-Vegas agent"),
    }
}

/// The once-per-RTT decision: sets `v_incr_` and may cut cwnd at once.
fn decide(a: &mut Agent, now_vt: f64) {
    let (t_seqno, last_ack, cwnd, ssthresh) = (a.t_seqno, a.last_ack, a.cwnd, a.ssthresh);
    let v = vegas(a);
    let rtt = if v.cnt_rtt > 0 {
        v.sum_rtt / v.cnt_rtt as f64
    } else {
        now_vt - v.begtime
    };
    v.sum_rtt = 0.0;
    v.cnt_rtt = 0;
    let rtt_len = t_seqno - v.begseq;
    let mut new_cwnd = cwnd;
    let mut new_ssthresh = ssthresh;
    if rtt > 0.0 {
        if (rtt < v.base_rtt || rtt_len <= 1) && v.p.base_rtt.is_none() {
            v.base_rtt = rtt;
        }
        let actual = rtt_len as f64 / rtt;
        let expect = (t_seqno - last_ack) as f64 / v.base_rtt;
        let diff = (expect - actual) * v.base_rtt;
        let delta = (diff + 0.5) as i64 as f64;
        if cwnd < ssthresh as f64 {
            v.inc_flag = !v.inc_flag;
            if !v.inc_flag {
                v.incr = 0.0;
            } else if delta > v.p.gamma {
                new_ssthresh = 2;
                new_cwnd -= cwnd / 8.0;
                new_cwnd = new_cwnd.max(2.0);
                v.incr = 0.0;
            } else {
                v.incr = 1.0;
            }
        } else {
            let (dec, inc) = match v.p.delta {
                Some(d) => (diff >= d, diff < d),
                None => (delta > v.p.beta, delta < v.p.alpha),
            };
            if dec {
                new_cwnd = (new_cwnd - 1.0).max(2.0);
                v.incr = 0.0;
            } else if inc {
                v.incr = 1.0 / cwnd;
            } else {
                v.incr = 0.0;
            }
        }
    }
    v.begseq = t_seqno;
    v.begtime = now_vt;
    a.cwnd = new_cwnd;
    a.ssthresh = new_ssthresh;
}

pub fn recv(a: &mut Agent, now: f64, seqno: i64, io: &mut Io) {
    let vt = now - a.firstsent;
    {
        let v = vegas(a);
        if !v.firstrecv {
            v.firstrecv = true;
            v.base_rtt = v.p.base_rtt.unwrap_or(vt);
            v.rtt = vt;
            v.sa = vt * 8.0;
            v.sd = vt;
            v.timeout = (v.sa / 4.0 + v.sd) / 2.0;
        }
    }
    if seqno > a.last_ack {
        if a.last_ack == 0 {
            a.cwnd = vegas(a).p.window_init; // delay_growth_
        }
        let newcwnd = vegas(a).newcwnd;
        if a.dupacks > NUMDUPACKS && a.cwnd > newcwnd {
            // deflate the window inflated by fast retransmit
            a.cwnd = newcwnd;
            a.ssthresh = 2;
        }
        let oldack = a.last_ack;
        a.newack(now, seqno, io);
        if seqno >= vegas(a).begseq {
            decide(a, vt);
        }
        let (cwnd, ssthresh, outstanding) = (a.cwnd, a.ssthresh, a.t_seqno - a.last_ack);
        let v = vegas(a);
        if v.incr == 1.0 && cwnd >= ssthresh as f64 {
            v.incr = 0.0;
        }
        if v.incr > 0.0 && cwnd - outstanding as f64 <= 2.0 {
            a.cwnd = cwnd + v.incr;
        }
        // window_ bounds the window anyway (maxcwnd_ = 0: no separate cap).
        let v = vegas(a);
        let i = v.slot(seqno);
        let (send, transmits) = (v.sendtime[i], v.transmits[i]);
        // Clear the slots of the newly acked packets (as ns-2 does: the walk stops at
        // the ring's end, so an ACK that spans the wrap clears nothing).
        let n = v.sendtime.len() as i64;
        let mut k = (oldack + 1) % n;
        let mut range = seqno - oldack;
        while k <= seqno % n && range > 0 {
            v.sendtime[k as usize] = -1.0;
            v.transmits[k as usize] = 0;
            k = (k + 1) % n;
            range -= 1;
        }
        if send != 0.0 && transmits == 1 {
            v.sample(vt - send);
        }
        if v.worried > 0 {
            v.worried -= 1;
            let expired = v.expired(seqno, vt);
            if expired.is_none() {
                v.worried = 0;
            }
            if let Some(e) = expired {
                a.dupacks = NUMDUPACKS;
                a.output(now, e, io);
            }
        }
    } else if seqno == a.last_ack {
        a.dupacks += 1;
        let expired = vegas(a).expired(seqno, vt);
        if expired.is_some() || a.dupacks == NUMDUPACKS {
            fast_retransmit(a, now, vt, expired, io);
        } else if a.dupacks > NUMDUPACKS {
            a.cwnd += 1.0;
        }
    }
    if a.dupacks == 0 || a.dupacks > NUMDUPACKS - 1 {
        a.send_much(now, 0, io);
    }
}

/// Vegas's retransmission on a dupACK (the third, or any once the oldest packet's
/// fine-grained timeout passed).
fn fast_retransmit(a: &mut Agent, now: f64, vt: f64, expired: Option<i64>, io: &mut Io) {
    let (last_ack, win) = (a.last_ack, a.window());
    let v = vegas(a);
    let i = v.slot(last_ack + 1);
    let (send, transmits) = (v.sendtime[i], v.transmits[i]);
    // bug_fix_: no second fast retransmit right after a timeout's go-back-N.
    if !(a.highest_ack > a.recover || a.last_cwnd_action != CwndAction::Timeout) {
        return;
    }
    a.last_cwnd_action = CwndAction::Dupack;
    a.recover = a.maxseq;
    let (t_seqno, dupacks) = (a.t_seqno, a.dupacks);
    let v = vegas(a);
    v.worried = 2.min(t_seqno - last_ack);
    if transmits > 1 {
        v.timeout *= 2.0;
    } else {
        v.timeout += v.timeout / 8.0;
    }
    if v.cwnd_changed < send {
        let w = if win <= 3 {
            2
        } else if transmits > 1 {
            win >> 1
        } else {
            win - (win >> 2)
        };
        v.newcwnd = w as f64;
        v.cwnd_changed = vt;
        a.cwnd = w as f64 + dupacks as f64;
    }
    a.reset_rtx_timer(now, true, true, io);
    a.output(now, expired.unwrap_or(last_ack + 1), io);
    if transmits == 1 {
        a.dupacks = NUMDUPACKS;
    }
}

/// `VegasTcpAgent::timeout` for the retransmission timer.
pub fn timeout(a: &mut Agent, now: f64, io: &mut Io) {
    a.dupacks = 0;
    a.recover = a.maxseq;
    a.last_cwnd_action = CwndAction::Timeout;
    a.reset_rtx_timer(now, false, true, io);
    a.stats.timeouts += 1;
    a.slowdown(Close::Restart);
    a.cwnd = 2.0; // v_slowstart_
    let vt = now - a.firstsent;
    let v = vegas(a);
    v.newcwnd = 0.0;
    v.cwnd_changed = vt;
    a.send_much(now, 0, io);
}
