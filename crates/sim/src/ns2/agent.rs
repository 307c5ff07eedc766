//! The shared part of ns-2's one-way sender (`TcpAgent` in tcp/tcp.cc) and the Reno and
//! NewReno agents (`RenoTcpAgent`, `NewRenoTcpAgent`), with the ns-2.35 defaults of
//! tcl/lib/ns-default.tcl. Sequence numbers are packets; `cwnd_` is a float in packets.
//! Vegas's receive path is in `vegas.rs`.

use super::rtt::TickRtt;
use super::sack1::Sack1;
use super::vegas::Vegas;
use crate::event::{Ev, Timer, TimerKind};
use crate::packet::Packet;
use crate::tcp::sender::SenderStats;
use crate::tcp::Io;
use crate::units::SimTime;

/// `numdupacks_`.
pub const NUMDUPACKS: i64 = 3;
/// `windowInit_` (with `windowInitOption_ = 1`): the window after the first ACK.
pub const WINDOW_INIT: f64 = 2.0;
/// `tcpip_base_hdr_size_`: IP + TCP header bytes added to `packetSize_` on the wire.
pub const HEADER_BYTES: u32 = 40;

/// Bytes on the wire of a data packet of `cca`'s agent with `packetSize_` = `size`.
/// `TcpAgent::output` adds `tcpip_base_hdr_size_` (`useHeaders_`); `Agent/TCP/Vegas` has
/// an `output` of its own (tcp-vegas.cc, `VegasTcpAgent::output`) that sends the packet
/// as `allocpkt` sized it, `packetSize_` bytes, and has no `syn_` case either: its packet
/// 0 is a full data packet, not a 40-byte connection-opening one.
pub fn wire_bytes(cca: &str, size: u32) -> u32 {
    if cca == "vegas" {
        size
    } else {
        size + HEADER_BYTES
    }
}

/// `last_cwnd_action_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    None,
    Dupack,
    Timeout,
    /// Left fast recovery (`CWND_ACTION_EXITED`).
    Exited,
}

/// What `slowdown` does (`CLOSE_*` flags of tcp.h, the ones the agents here use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Close {
    /// `CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF` (Reno fast retransmit).
    Half,
    /// `CLOSE_SSTHRESH_HALF | CLOSE_CWND_RESTART` (timeout).
    Restart,
    /// `CLOSE_CWND_ONE` (timeout with nothing outstanding).
    One,
}

pub enum Variant {
    Reno,
    NewReno {
        /// `firstpartial_`: only the first partial ACK re-arms the timer
        /// (`newreno_changes1_ = 1`).
        firstpartial: bool,
    },
    Vegas(Box<Vegas>),
    /// `Agent/TCP/Sack1` (sack1.rs).
    Sack1(Box<Sack1>),
}

/// One ns-2 sender. Field names follow ns-2's (without the trailing underscore).
pub struct Agent {
    pub id: u32,
    /// `packetSize_`: payload bytes per packet.
    pub size: u32,
    /// `window_` (`wnd_`): the receiver's window, a fixed cap in packets.
    pub wnd: f64,
    pub cwnd: f64,
    pub ssthresh: i64,
    pub dupacks: i64,
    /// Reno's window inflation during fast recovery.
    pub dupwnd: i64,
    /// Next packet to send.
    pub t_seqno: i64,
    /// Highest packet sent.
    pub maxseq: i64,
    pub last_ack: i64,
    pub highest_ack: i64,
    pub recover: i64,
    /// Packets the application has given (exclusive bound); `i64::MAX` for FTP.
    pub curseq: i64,
    pub last_cwnd_action: CwndAction,
    pub rtt: TickRtt,
    rtt_active: bool,
    rtt_seq: i64,
    rtt_ts: f64,
    /// When packet 0 left (`firstsent_`).
    pub firstsent: f64,
    pub rto_timer: Timer,
    pub variant: Variant,
    pub stats: SenderStats,
    pub active: bool,
    /// The sender's access-link rate, bit/s (`access_rate`): back-to-back packets leave
    /// spaced by their serialization at it. None: at once.
    pub access_bps: Option<f64>,
    /// When the access link is free for the next packet.
    access_free: f64,
}

/// ns-2 keeps time in seconds (a double); the event queue in integer nanoseconds.
fn at(t: f64) -> SimTime {
    SimTime((t * 1e9).round().max(0.0) as u64)
}

impl Agent {
    pub fn new(id: u32, size: u32, window: u32, variant: Variant, boot_time: f64) -> Agent {
        Agent {
            id,
            size,
            wnd: window as f64,
            // syn_ and delay_growth_: one packet (the connection-opening one) first.
            cwnd: 1.0,
            // reset(): ssthresh_ = int(wnd_)
            ssthresh: window as i64,
            dupacks: 0,
            dupwnd: 0,
            t_seqno: 0,
            maxseq: -1,
            last_ack: -1,
            highest_ack: -1,
            recover: 0,
            curseq: i64::MAX,
            last_cwnd_action: CwndAction::None,
            rtt: TickRtt::new(boot_time),
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: 0.0,
            firstsent: 0.0,
            rto_timer: Timer::default(),
            variant,
            stats: SenderStats::default(),
            active: false,
            access_bps: None,
            access_free: 0.0,
        }
    }

    fn is_reno(&self) -> bool {
        !matches!(self.variant, Variant::Vegas(_))
    }

    /// A data packet's bytes on the wire (`wire_bytes`).
    pub fn wire_bytes(&self) -> u32 {
        match self.variant {
            Variant::Vegas(_) => wire_bytes("vegas", self.size),
            _ => wire_bytes("", self.size),
        }
    }

    /// Whether packet 0 is a data packet the agent sends itself (`Agent/TCP/Vegas`), rather
    /// than `syn_`'s header-only connection-opening packet (the simulator's handshake).
    pub fn opens_with_data(&self) -> bool {
        matches!(self.variant, Variant::Vegas(_))
    }

    /// `window()`: Reno and NewReno add the inflation `dupwnd_`.
    pub fn window(&self) -> i64 {
        let w = if self.is_reno() {
            self.cwnd as i64 + self.dupwnd
        } else {
            self.cwnd.min(self.wnd) as i64
        };
        w.min(self.wnd as i64)
    }

    /// `windowd()`.
    fn windowd(&self) -> f64 {
        let w = if self.is_reno() {
            self.cwnd + self.dupwnd as f64
        } else {
            self.cwnd
        };
        w.min(self.wnd)
    }

    /// Packets sent and not yet acknowledged.
    pub fn in_flight(&self) -> u64 {
        (self.maxseq - self.highest_ack).max(0) as u64
    }

    // ------------------------------------------------------------------ sending
    /// `output(seqno)`: one packet leaves for the access link.
    pub fn output(&mut self, now: f64, seqno: i64, io: &mut Io) {
        let t = at(now);
        let force_timer = self.highest_ack == self.maxseq && self.is_reno();
        if let Variant::Vegas(v) = &mut self.variant {
            v.on_output(seqno, now - self.firstsent);
        }
        let pkt = Packet {
            flow: self.id,
            seg: seqno as u64,
            len: self.size,
            wire: self.wire_bytes(),
            ts: t,
            agg: 1,
        };
        let leave = self.access_leave(now, pkt.wire);
        io.fwd
            .push(io.q, at(leave) + io.fwd_delay, pkt, Ev::FwdArrive(io.line));
        self.stats.bytes_sent += self.size as u64;
        if seqno > self.maxseq {
            self.maxseq = seqno;
            if !self.rtt_active {
                self.rtt_active = true;
                if seqno > self.rtt_seq {
                    self.rtt_seq = seqno;
                    self.rtt_ts = now;
                }
            }
        } else {
            self.stats.retransmits += 1;
            self.stats.bytes_retransmitted += self.size as u64;
        }
        if !self.rto_timer.is_armed() || force_timer {
            self.set_rtx_timer(now, io);
        }
    }

    /// When a packet of `wire` bytes handed to the access link at `now` starts across it:
    /// after the packets before it (their serialization at `access_bps`). A lone packet
    /// leaves at once; its own serialization is part of the path's `rtt`.
    fn access_leave(&mut self, now: f64, wire: u32) -> f64 {
        let Some(rate) = self.access_bps else {
            return now;
        };
        let leave = now.max(self.access_free);
        self.access_free = leave + wire as f64 * 8.0 / rate;
        leave
    }

    /// `send_much`: send while the window allows (`maxburst_` packets at most, 0 = no
    /// limit; `overhead_ = 0`, so no delayed sends).
    pub fn send_much(&mut self, now: f64, maxburst: u32, io: &mut Io) {
        if matches!(self.variant, Variant::Sack1(_)) {
            return super::sack1::send_much(self, now, maxburst, io);
        }
        let mut n = 0;
        while self.t_seqno <= self.highest_ack + self.window() && self.t_seqno < self.curseq {
            self.output(now, self.t_seqno, io);
            self.t_seqno += 1;
            n += 1;
            if maxburst > 0 && n == maxburst {
                break;
            }
        }
    }

    /// `send_one` (`singledup_`): a new packet on each of the first two dupACKs if the
    /// window plus the dupACKs allows (limited transmit).
    pub(super) fn send_one(&mut self, now: f64, io: &mut Io) {
        if self.t_seqno as f64 <= self.highest_ack as f64 + self.wnd
            && self.t_seqno < self.curseq
            && self.t_seqno as f64 <= self.highest_ack as f64 + self.cwnd + self.dupacks as f64
        {
            self.output(now, self.t_seqno, io);
            self.t_seqno += 1;
        }
    }

    // ------------------------------------------------------------------ timer
    pub fn set_rtx_timer(&mut self, now: f64, io: &mut Io) {
        let t = at(now + self.rtt.timeout());
        self.rto_timer.arm(io.q, t, self.id, TimerKind::Rto);
    }

    /// `reset_rtx_timer(mild, backoff)`: re-arm; unless `mild`, go back to the first
    /// unacknowledged packet (go-back-N).
    pub fn reset_rtx_timer(&mut self, now: f64, mild: bool, backoff: bool, io: &mut Io) {
        if backoff {
            self.rtt.backoff();
        }
        self.set_rtx_timer(now, io);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    /// `newtimer`: re-arm while anything is (or is about to be) outstanding.
    pub(super) fn newtimer(&mut self, now: f64, seqno: i64, io: &mut Io) {
        if self.t_seqno > seqno || seqno < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now, io);
        } else {
            self.rto_timer.cancel();
        }
    }

    // ------------------------------------------------------------------ window
    /// `opencwnd` (`windowOption_ = 1`): +1 per ACK in slow start, +1/cwnd after.
    pub(super) fn opencwnd(&mut self) {
        if self.cwnd < self.ssthresh as f64 {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
    }

    /// `slowdown` with `decrease_num_ = 0.5` and `precisionReduce_ = true` (so the first
    /// decrease, a decrease in slow start and a later one all halve the same way).
    pub fn slowdown(&mut self, how: Close) {
        let halfwin = self.windowd() / 2.0;
        if how != Close::One {
            // CLOSE_SSTHRESH_HALF: halfwin and decrease_num_·win are the same at 0.5.
            self.ssthresh = halfwin as i64;
        }
        match how {
            Close::Half => self.cwnd = halfwin,
            // wnd_restart_ = 1
            Close::Restart | Close::One => self.cwnd = 1.0,
        }
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
    }

    // ------------------------------------------------------------------ ACKs
    /// `newack`: a new cumulative ACK; the timed packet gives an RTT sample.
    pub fn newack(&mut self, now: f64, seqno: i64, io: &mut Io) {
        self.dupacks = 0;
        self.last_ack = seqno;
        self.highest_ack = seqno;
        if self.t_seqno < seqno + 1 {
            self.t_seqno = seqno + 1;
        }
        if self.rtt_active && seqno >= self.rtt_seq {
            self.rtt.t_backoff = 1;
            self.rtt_active = false;
            self.rtt.update(now, now - self.rtt_ts);
        }
        // timerfix_: the timer is set after the RTT update.
        self.newtimer(now, seqno, io);
    }

    /// The connection starts: packet 0 (ns-2's header-only connection-opening packet,
    /// `syn_ = true`) was sent at `sent` and its ACK arrives now.
    pub fn start(&mut self, now: f64, sent: f64, io: &mut Io) {
        self.active = true;
        self.firstsent = sent;
        self.t_seqno = 1;
        self.maxseq = 0;
        self.rtt_active = true;
        self.rtt_seq = 0;
        self.rtt_ts = sent;
        debug_assert!(
            !self.opens_with_data(),
            "Vegas opens with data packet 0 (`open`)"
        );
        self.recv(now, 0, io);
    }

    /// The connection starts at `now` with packet 0 as data (`opens_with_data`):
    /// `send_much` notes `firstsent_` and sends it (cwnd_ is 1: `syn_` and `delay_growth_`).
    pub fn open(&mut self, now: f64, io: &mut Io) {
        self.active = true;
        self.firstsent = now;
        self.send_much(now, 0, io);
    }

    /// An ACK with ns-2 `seqno` arrives.
    pub fn recv(&mut self, now: f64, seqno: i64, io: &mut Io) {
        if !self.active {
            return;
        }
        match self.variant {
            Variant::Reno => self.recv_reno(now, seqno, io),
            Variant::NewReno { .. } => self.recv_newreno(now, seqno, io),
            Variant::Vegas(_) => super::vegas::recv(self, now, seqno, io),
            Variant::Sack1(_) => super::sack1::recv(self, now, seqno, &[], io),
        }
    }

    /// An ACK with ns-2 `seqno` and SACK blocks (half-open packet ranges) arrives; only
    /// Sack1 reads the blocks.
    pub fn recv_sacked(&mut self, now: f64, seqno: i64, blocks: &[(u64, u64)], io: &mut Io) {
        if self.active && matches!(self.variant, Variant::Sack1(_)) {
            super::sack1::recv(self, now, seqno, blocks, io);
        } else {
            self.recv(now, seqno, io);
        }
    }

    /// The first window grows from the opening packet's 1 to `windowInit_`
    /// (`delay_growth_`).
    pub(super) fn delay_growth(&mut self) {
        if self.last_ack == 0 {
            self.cwnd = WINDOW_INIT;
        }
    }

    fn recv_reno(&mut self, now: f64, seqno: i64, io: &mut Io) {
        if seqno > self.last_ack {
            if self.last_cwnd_action == CwndAction::Dupack {
                self.last_cwnd_action = CwndAction::Exited;
            }
            self.dupwnd = 0;
            self.newack(now, seqno, io);
            self.opencwnd();
            self.delay_growth();
        } else if seqno == self.last_ack {
            self.dup_ack(now, io);
        }
        if self.dupacks == 0 || self.dupacks > NUMDUPACKS - 1 {
            self.send_much(now, 0, io);
        }
    }

    /// A duplicate ACK, as Reno and NewReno take it: fast retransmit at the third, window
    /// inflation (`dupwnd_`) after it, limited transmit (`singledup_`) before it.
    fn dup_ack(&mut self, now: f64, io: &mut Io) {
        self.dupacks += 1;
        if self.dupacks == NUMDUPACKS {
            self.reno_dupack_action(now, io);
        } else if self.dupacks > NUMDUPACKS && self.last_cwnd_action == CwndAction::Dupack {
            self.dupwnd += 1;
        } else if self.dupacks < NUMDUPACKS {
            self.send_one(now, io);
        }
    }

    /// Reno's `dupack_action` (`bug_fix_ = true`): fast retransmit unless this window
    /// was already cut (`highest_ack_ <= recover_`).
    fn reno_dupack_action(&mut self, now: f64, io: &mut Io) {
        let recovered = self.highest_ack > self.recover;
        let allow =
            self.last_cwnd_action == CwndAction::Dupack && matches!(self.variant, Variant::Reno);
        if recovered || allow || self.highest_ack == 0 {
            self.recover = self.maxseq;
            self.last_cwnd_action = CwndAction::Dupack;
            self.slowdown(Close::Half);
            self.reset_rtx_timer(now, true, false, io);
            self.output(now, self.last_ack + 1, io);
            self.dupwnd = NUMDUPACKS;
        }
    }

    fn recv_newreno(&mut self, now: f64, seqno: i64, io: &mut Io) {
        if seqno > self.last_ack {
            if seqno >= self.recover || self.last_cwnd_action != CwndAction::Dupack {
                if self.dupwnd > 0 {
                    self.dupwnd = 0;
                    if self.last_cwnd_action == CwndAction::Dupack {
                        self.last_cwnd_action = CwndAction::Exited;
                    }
                }
                self.variant = Variant::NewReno {
                    firstpartial: false,
                };
                self.newack(now, seqno, io);
                self.opencwnd();
                self.delay_growth();
            } else {
                self.partial_ack(now, seqno, io);
            }
        } else if seqno == self.last_ack {
            self.dup_ack(now, io);
        }
        if self.dupacks == 0 {
            self.send_much(now, 0, io);
        } else if self.dupacks > NUMDUPACKS - 1 {
            self.send_much(now, 2, io);
        }
    }

    /// NewReno partial ACK (`partialnewack_helper` with `partial_window_deflation_ = 1`):
    /// deflate the window by what was acked (less one), stay in recovery, retransmit the
    /// next hole.
    fn partial_ack(&mut self, now: f64, seqno: i64, io: &mut Io) {
        if let Variant::NewReno { firstpartial } = &mut self.variant {
            if !*firstpartial {
                *firstpartial = true;
                self.newtimer(now, seqno, io);
            }
        }
        let deflate = seqno - self.last_ack;
        if self.dupwnd > deflate {
            self.dupwnd -= deflate - 1;
        } else {
            self.cwnd -= (deflate - self.dupwnd) as f64;
            self.dupwnd = 1;
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        self.last_ack = seqno;
        self.highest_ack = seqno;
        if self.t_seqno < seqno + 1 {
            self.t_seqno = seqno + 1;
        }
        if self.rtt_active && seqno >= self.rtt_seq {
            self.rtt_active = false;
            self.rtt.t_backoff = 1;
        }
        self.output(now, self.last_ack + 1, io);
    }

    /// The retransmission timer expired.
    pub fn timeout(&mut self, now: f64, io: &mut Io) {
        if !self.active {
            return;
        }
        if matches!(self.variant, Variant::Vegas(_)) {
            return super::vegas::timeout(self, now, io);
        }
        if matches!(self.variant, Variant::Sack1(_)) {
            super::sack1::on_timeout(self);
        }
        // RenoTcpAgent::timeout (Sack1TcpAgent::timeout), then TcpAgent::timeout (slow_start_restart_,
        // restart_bugfix_ true).
        self.dupwnd = 0;
        self.dupacks = 0;
        self.recover = self.maxseq;
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        let idle = self.highest_ack == self.maxseq;
        if idle {
            self.slowdown(Close::One);
        } else {
            self.stats.timeouts += 1;
            self.last_cwnd_action = CwndAction::Timeout;
            self.slowdown(Close::Restart);
        }
        self.reset_rtx_timer(now, false, !idle, io);
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(now, 0, io);
    }

    /// The application stops: nothing beyond what was already sent.
    pub fn stop(&mut self) {
        self.curseq = self.curseq.min(self.maxseq + 1).max(1);
    }
}
