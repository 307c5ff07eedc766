//! `Agent/TCP/Sack1` (cca `sack` under `stack = "ns2"`), as tcp/tcp-sack1.cc and the
//! reassembly-queue scoreboard of tcp/scoreboard-rq.cc in ns-2.35 behave with the defaults
//! of ns-default.tcl (`partial_ack_ = false`, `bug_fix_ = true`, `singledup_ = 1`,
//! `oldCode_ = false`, `LimTransmitFix_ = false`, no ECN). Re-written here, not copied.
//!
//! Sack1 is `Agent/TCP`'s window (no Reno inflation) plus a SACK scoreboard:
//! - outside recovery a duplicate ACK counts only if its SACK blocks changed the
//!   scoreboard; the third one fast-retransmits `last_ack_ + 1`, halves `cwnd_` and
//!   `ssthresh_`, sets `recover_ = maxseq_` and `pipe_ = maxseq_ − highest_ack_ − 3`;
//! - in recovery every ACK takes one off `pipe_` (a partial ACK two), and packets go while
//!   `pipe_ < cwnd_`: first the holes of the scoreboard (a hole is a packet not SACKed
//!   below a SACKed one), each retransmitted once, then new data within `window_`;
//! - an ACK at or above `recover_` ends recovery with `cwnd_` at the halved value;
//! - a retransmission that is lost again is not retransmitted a second time: only the
//!   retransmission timer recovers it; a timeout clears the scoreboard and goes back to
//!   `highest_ack_ + 1` with `cwnd_ = 1`, and dupACKs are ignored until new data is acked.

use super::agent::{Agent, Close, CwndAction, Variant, NUMDUPACKS};
use crate::tcp::Io;
use std::collections::BTreeSet;

/// ns-2's `ScoreBoardRQ`: the packets SACKed above the cumulative ACK and the
/// retransmission pointer `h_seqno_` (holes below it have been retransmitted).
#[derive(Debug, Default)]
pub struct Scoreboard {
    sacked: BTreeSet<i64>,
    /// First packet the scoreboard covers: `highest_ack_ + 1` at the last update.
    sack_min: i64,
    h_seqno: i64,
    /// The last update changed the scoreboard (`CheckUpdate()`).
    pub changed: bool,
}

impl Scoreboard {
    /// `UpdateScoreBoard`: forget what the cumulative ACK now covers, add the blocks
    /// (half-open packet ranges).
    pub fn update(&mut self, highest_ack: i64, blocks: &[(u64, u64)]) {
        let before = self.sacked.len();
        self.changed = false;
        if self.sack_min <= highest_ack {
            self.sack_min = highest_ack + 1;
            if !self.sacked.is_empty() {
                self.sacked = self.sacked.split_off(&self.sack_min);
                self.changed = true;
            }
        }
        for &(l, r) in blocks {
            self.sacked
                .extend((l as i64..r as i64).filter(|&s| s >= self.sack_min));
        }
        self.changed |= self.sacked.len() != before;
    }

    /// `GetNextRetran`: the first hole at or above the retransmission pointer with SACKed
    /// data above it.
    pub fn next_retran(&mut self) -> Option<i64> {
        self.h_seqno = self.h_seqno.max(self.sack_min);
        let mut hole = self.h_seqno;
        while self.sacked.contains(&hole) {
            hole += 1;
        }
        self.sacked.range(hole + 1..).next()?;
        self.h_seqno = hole;
        Some(hole)
    }

    /// `MarkRetran`: `seqno` was retransmitted.
    pub fn mark_retran(&mut self, seqno: i64) {
        if seqno >= self.h_seqno {
            self.h_seqno = seqno + 1;
        }
    }

    /// `ClearScoreBoard`.
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.h_seqno = 0;
    }

    pub fn is_sacked(&self, seqno: i64) -> bool {
        self.sacked.contains(&seqno)
    }
}

/// Sack1's state beside the common agent's.
#[derive(Debug, Default)]
pub struct Sack1 {
    pub scb: Scoreboard,
    /// `fastrecov_`.
    pub fastrecov: bool,
    /// `pipe_`: packets estimated in the network during recovery.
    pub pipe: i64,
    /// `timeout_`: a timeout happened and no new data has been acked since.
    pub timeout: bool,
}

fn st(a: &mut Agent) -> &mut Sack1 {
    match &mut a.variant {
        Variant::Sack1(s) => s,
        _ => unreachable!("sack1 functions run on Sack1 agents only"),
    }
}

/// An ACK with ns-2 `seqno` and the sink's SACK blocks arrives.
pub fn recv(a: &mut Agent, now: f64, seqno: i64, blocks: &[(u64, u64)], io: &mut Io) {
    let valid = seqno >= a.last_ack;
    if !st(a).fastrecov {
        if seqno > a.last_ack {
            a.newack(now, seqno, io);
            a.opencwnd();
            let s = st(a);
            s.timeout = false;
            s.scb.clear();
            a.delay_growth();
        } else if seqno == a.last_ack && !st(a).timeout {
            let highest = a.highest_ack;
            st(a).scb.update(highest, blocks);
            if st(a).scb.changed {
                a.dupacks += 1;
                if a.dupacks == NUMDUPACKS {
                    dupack_action(a, now, io);
                } else if a.dupacks < NUMDUPACKS {
                    a.send_one(now, io);
                }
            }
        }
        if valid && a.dupacks == 0 {
            send_much(a, now, 0, io);
        }
        return;
    }
    st(a).pipe -= 1;
    if seqno >= a.recover {
        // recovery is over; cwnd_ stays at the halved value
        a.recover = 0;
        st(a).fastrecov = false;
        a.newack(now, seqno, io);
        let s = st(a);
        s.timeout = false;
        s.scb.clear();
    } else if seqno > a.highest_ack {
        // partial ACK (partial_ack_ = false): highest_ack_ moves, last_ack_ does not
        a.highest_ack = seqno;
        let s = st(a);
        s.scb.update(seqno, blocks);
        s.pipe -= 1;
        a.newtimer(now, seqno, io);
        a.rtt.t_backoff = 1;
    } else if !st(a).timeout {
        let highest = a.highest_ack;
        st(a).scb.update(highest, blocks);
        if st(a).scb.changed && a.dupacks > 0 {
            a.dupacks += 1;
        }
    }
    if valid {
        send_much(a, now, 0, io);
    }
}

/// `dupack_action` (`bug_fix_`): fast retransmit and enter recovery unless this window
/// was already cut (`highest_ack_ <= recover_`; packet 1's loss excepted).
fn dupack_action(a: &mut Agent, now: f64, io: &mut Io) {
    if a.highest_ack <= a.recover && a.highest_ack != 0 {
        return;
    }
    a.recover = a.maxseq;
    let (maxseq, highest) = (a.maxseq, a.highest_ack);
    let s = st(a);
    s.pipe = maxseq - highest - NUMDUPACKS;
    s.fastrecov = true;
    s.scb.mark_retran(highest + 1);
    a.reset_rtx_timer(now, true, false, io);
    a.last_cwnd_action = CwndAction::Dupack;
    a.slowdown(Close::Half);
    a.output(now, a.last_ack + 1, io);
}

/// Sack1's `send_much`: by the window outside recovery, by `pipe_` inside it; scoreboard
/// holes before new data.
pub fn send_much(a: &mut Agent, now: f64, maxburst: u32, io: &mut Io) {
    let wnd = a.wnd as i64;
    let mut win = a.window();
    let mut n = 0;
    loop {
        let fastrecov = st(a).fastrecov;
        let open = if fastrecov {
            st(a).pipe < a.cwnd as i64
        } else {
            a.t_seqno <= a.last_ack + win
        };
        if !open || a.last_ack + 1 >= a.curseq {
            break;
        }
        let recover = a.recover;
        let highest = a.highest_ack;
        let xmit = match st(a).scb.next_retran() {
            None => {
                let limit = highest + if fastrecov { wnd } else { win };
                (a.t_seqno <= limit && a.t_seqno < a.curseq).then(|| {
                    a.t_seqno += 1;
                    a.t_seqno - 1
                })
            }
            Some(hole) if recover > 0 && hole <= highest + wnd => {
                st(a).scb.mark_retran(hole);
                win = a.window();
                Some(hole)
            }
            Some(_) => None,
        };
        let Some(seqno) = xmit else { break };
        a.output(now, seqno, io);
        if a.t_seqno <= seqno {
            a.t_seqno = seqno + 1;
        }
        n += 1;
        st(a).pipe += 1;
        if maxburst > 0 && n == maxburst {
            break;
        }
    }
}

/// Sack1's part of a retransmission timeout; `Agent::timeout` does the rest (`TcpAgent`'s).
pub fn on_timeout(a: &mut Agent) {
    a.dupacks = 0;
    if a.highest_ack > a.last_ack {
        a.last_ack = a.highest_ack;
    }
    a.recover = a.maxseq;
    let s = st(a);
    s.fastrecov = false;
    s.timeout = true;
    s.scb.clear();
}
