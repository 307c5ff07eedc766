//! The dumbbell and its event loop.
//!
//! ```text
//!  sender i ──(rtt_i/2, access link, infinitely fast)──► bottleneck queue ──(rate)──► receiver i
//!  sender i ◄──────────────(rtt_i − rtt_i/2, uncongested)──────────────────────────── receiver i
//! ```
//!
//! Each connection's base RTT is split evenly: half on its forward access link (before the
//! bottleneck), half on the ACK return path, which has no queue and no loss. The bottleneck
//! itself adds serialization (and queueing) but no propagation delay, so a flow's minimum
//! RTT is `rtt + mtu/rate` for a full segment.
//!
//! With a reverse bottleneck (`bottleneck.reverse`, or any flow with `direction =
//! "reverse"`) the dumbbell is mirrored:
//!
//! ```text
//!  fwd sender ──(rtt/2)──► forward bottleneck ──────────────────► fwd receiver
//!  fwd sender ◄─(rtt − rtt/2)── reverse bottleneck ◄── ACKs ────── fwd receiver
//!  rev receiver ◄──────────── reverse bottleneck ◄──(rtt/2)────── rev sender
//!  rev receiver ── ACKs ──► forward bottleneck ──(rtt − rtt/2)──► rev sender
//! ```
//!
//! A reverse connection's data crosses the reverse bottleneck after its `rtt/2` access
//! delay, exactly as a forward one's crosses the forward bottleneck; every ACK leaves its
//! receiver straight into the bottleneck opposite to its data (queued behind that
//! direction's data, serialized at its rate, subject to its buffer, AQM and random loss)
//! and then takes the `rtt − rtt/2` return delay. An ACK is `HEADER_BYTES` (52) on the
//! wire plus its SACK option (`packet::linux_ack_bytes`), 40 bytes under ns-2's agents.
//! Without a reverse bottleneck ACKs skip the links: no queue, no loss (as above).
//!
//! A connection starts with a handshake at `start`: the SYN crosses the bottleneck behind
//! whatever is queued there (it takes no buffer space and is never dropped), the SYN-ACK
//! returns, and data flows from then on with the handshake RTT as the first RTT sample —
//! Linux initialises SRTT and min_rtt from it, so a connection opened into a standing
//! queue starts with that queue in its minimum RTT.

use crate::cc::AnyCc;
use crate::config::{BottleneckConfig, Config, Direction, Stack};
use crate::event::{DelayLine, Ev, EventQueue, Timer, TimerKind};
use crate::link::{Arrival, Bottleneck};
use crate::measure::{Recorder, Window};
use crate::ns2::Ns2Conn;
use crate::output::{FlowSummary, Output, RunStats};
use crate::packet::{linux_ack_bytes, Ack, Frame, Packet, HEADER_BYTES, SYN_BYTES};
use crate::rng::Rng;
use crate::tcp::receiver::{AckDecision, DELACK_TIMEOUT};
use crate::tcp::{Io, Receiver, Sender, SenderParams};
use crate::units::SimTime;
use crate::SimError;

mod short;

/// Field order (`repr(C)`, aligned to a cache line): what a data segment's delivery
/// touches comes first and together — the receiver's timers, the measured bytes and the
/// receiver, whose hot fields lead — then the rarely used fields, then the sender
/// (issue 13: with 10,000 connections every line a delivery touches is a cache miss).
#[repr(C, align(64))]
pub struct Flow {
    delack: Timer,
    comp_ack: Timer,
    pub delivered_window: u64,
    pub rx: Receiver,
    /// `stack = "ns2"`: ns-2's sender and sink, which then carry the connection.
    pub ns2: Option<Box<Ns2Conn>>,
    pub start: SimTime,
    start_timer: Timer,
    stop_timer: Timer,
    /// The Linux sender (idle, as is `rx`, when the connection runs ns-2's agents).
    pub sender: Sender,
}

/// A connection's ns-2 agents (`Flow::ns2`) when `ns2` — the caller's knowledge that it
/// has them — holds; otherwise none, without reading the box (issue 13: a cache line of
/// its own at 10,000 flows). Takes the field, so the rest of the `Flow` stays borrowable.
#[inline]
fn ns2_agents(slot: &mut Option<Box<Ns2Conn>>, ns2: bool) -> Option<&mut Ns2Conn> {
    if ns2 {
        slot.as_deref_mut()
    } else {
        None
    }
}

/// ACKs a reverse line keeps inline (an ACK takes twice a packet's space; at 10,000 flows 91 %
/// of the pushes find fewer than two on the line).
const REV_INLINE: usize = 2;

/// A connection's route: its forward and reverse delay lines, their delays and the link its
/// data crosses. Connection `i` has path `i` (its lines are `Ev::FwdArrive(i)` and
/// `Ev::RevArrive(i)`). Kept apart from the large `Flow` and contiguous per connection,
/// because it is what every packet event touches first: with 10,000 connections the cost
/// per packet is mostly cache misses on per-flow state (issue 13).
///
/// Field order (`repr(C)`, aligned to a cache line): the forward line's header and head
/// in the first line (a data arrival reads little else), then the flags, then the reverse
/// line's header and head (a delivery's ACK and an ACK's arrival). Each line's delay lives
/// in its header (`DelayLine::delay`), so the sender and the receiver find it in the line
/// they append to.
#[repr(C, align(64))]
struct Path {
    fwd: DelayLine<Packet>,
    /// The link its data crosses (0 forward, 1 reverse); its ACKs cross the other one.
    dir: usize,
    /// The connection runs ns-2's agents (`Flow::ns2` is set): a copy here, where the
    /// packet events look first, so that they read the large `Flow` only where they use it.
    ns2: bool,
    rev: DelayLine<Ack, REV_INLINE>,
}

impl Path {
    /// A path with base RTT `rtt_ns` (split evenly, as the module documentation says).
    fn new(
        rtt_ns: u64,
        dir: usize,
        fwd: DelayLine<Packet>,
        rev: DelayLine<Ack, REV_INLINE>,
    ) -> Path {
        let mut p = Path {
            fwd,
            rev,
            dir,
            ns2: false,
        };
        p.set_rtt(rtt_ns);
        p
    }

    fn set_rtt(&mut self, rtt_ns: u64) {
        self.fwd.set_delay(SimTime(rtt_ns / 2));
        self.rev.set_delay(SimTime(rtt_ns - rtt_ns / 2));
    }

    /// Where connection `line`'s sender puts its packets.
    fn io<'a>(&'a mut self, q: &'a mut EventQueue, line: u32) -> Io<'a> {
        Io {
            q,
            fwd_delay: self.fwd.delay(),
            fwd: &mut self.fwd,
            line,
        }
    }
}

pub struct Sim {
    q: EventQueue,
    /// Delay lines, one pair per connection. Lines could be shared by connections with
    /// equal delays (fewer heap entries), but then packets reaching the bottleneck at the
    /// same instant would queue one connection's whole burst before the other's, every
    /// time; with a line each they interleave, as from parallel access links. Shared lines
    /// measurably bias Vegas's base-RTT estimate between identical flows.
    paths: Vec<Path>,
    /// The forward bottleneck, then the reverse one if the dumbbell has it.
    links: Vec<Bottleneck<Frame>>,
    pub flows: Vec<Flow>,
    rng: Rng,
    rec: Recorder,
    end: SimTime,
    window: Window,
    /// Short flows (arrival processes): their slots follow the long-lived in `flows`.
    short: short::ShortFlows,
    seed: u64,
    mtu: u32,
    /// Some connection runs ns-2's agents. Without any, the packet and timer events do not
    /// read a connection's `ns2` flag at all (issue 13: at 10,000 flows the flag's cache
    /// line is a miss of its own when nothing else on it is needed).
    any_ns2: bool,
}

/// Linux `tcp_adv_win_scale = 1`: half of the receive buffer is advertised as window, the
/// other half is reserved for sk_buff overhead (`tcp_win_from_space`; kernels ≥ 6.6 start
/// from the same 50 % `scaling_ratio` and then measure it). Receive-buffer autotuning is
/// assumed to have reached `rmem` (tcp_rmem max), as it does quickly for bulk transfers.
pub fn rwnd_from_rmem(rmem: u64) -> u64 {
    rmem / 2
}

/// Linux sizes the send buffer in skb truesize; with TSO-sized skbs the overhead is a few
/// percent, so the whole of `wmem` (tcp_wmem max) bounds unacknowledged payload.
pub fn sndbuf_from_wmem(wmem: u64) -> u64 {
    wmem
}

impl Sim {
    pub fn new(cfg: &Config) -> Result<Sim, SimError> {
        validate(cfg)?;
        let b = &cfg.bottleneck;
        let linux_mss = b.mtu_bytes - HEADER_BYTES;
        let window = (SimTime(cfg.measure.from_ns), SimTime(cfg.measure.to_ns));
        let any_reverse = cfg.flows.iter().any(|f| f.direction == Direction::Reverse)
            || cfg
                .short_flows
                .iter()
                .any(|s| s.direction == Direction::Reverse);
        let link_cfgs: Vec<BottleneckConfig> = std::iter::once(b.clone())
            .chain(b.reverse_config(any_reverse))
            .collect();
        let mut q = EventQueue::new();
        let mut flows = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let key = |k: &str| format!("flows.{}.{k}", f.group);
            let (mss, ns2) = match f.stack {
                Stack::Linux => (linux_mss, None),
                Stack::Ns2 => {
                    let size = b.mtu_bytes - crate::ns2::agent::HEADER_BYTES;
                    let wire = crate::ns2::agent::wire_bytes(&f.cca, size);
                    let boot = Rng::new(crate::rng::flow_seed(cfg.seed, f.id)).uniform()
                        * crate::ns2::rtt::TCP_TICK;
                    // the path's true minimum RTT: propagation + one full packet's
                    // serialization at its bottleneck (for `exact_base_rtt`), + its ACK's
                    // at the opposite one when ACKs cross a link
                    let d = f.direction.link();
                    let mut min_rtt =
                        f.rtt_ns as f64 / 1e9 + wire as f64 * 8.0 / link_cfgs[d].rate_bps as f64;
                    if let Some(back) = link_cfgs.get(1 - d) {
                        let ack_bits = crate::ns2::agent::HEADER_BYTES as f64 * 8.0;
                        min_rtt += ack_bits / back.rate_bps as f64;
                    }
                    let mut conn = Ns2Conn::new(
                        i as u32,
                        &f.cca,
                        &f.cca_params,
                        size,
                        f.cwnd_clamp,
                        boot,
                        min_rtt,
                    )
                    .map_err(|message| SimError::Config {
                        key: key("cca"),
                        message,
                    })?;
                    conn.sink.delack = f.delack;
                    conn.agent.access_bps = f.access_rate_bps.map(|r| r as f64);
                    (size, Some(Box::new(conn)))
                }
            };
            let no_params = Default::default();
            let cc_params = if ns2.is_some() {
                &no_params
            } else {
                &f.cca_params
            };
            // an ns-2 flow's Linux sender is never driven; an ns-2-only agent (sack,
            // Agent/TCP/Sack1) has no Linux algorithm of its name, so it gets reno's
            let linux_cca = match ns2 {
                Some(_) if crate::cc::registry::params_of(&f.cca, Stack::Linux).is_err() => "reno",
                _ => f.cca.as_str(),
            };
            let cc = AnyCc::from_name(linux_cca, cc_params, crate::rng::flow_seed(cfg.seed, f.id))
                .map_err(|e| SimError::Config {
                    key: key(&if e.param.is_empty() {
                        "cca".to_string()
                    } else {
                        format!("params.{}", e.param)
                    }),
                    message: e.message,
                })?;
            let params = SenderParams {
                id: i as u32,
                mss,
                sack: f.sack,
                rwnd_bytes: rwnd_from_rmem(f.rmem_bytes),
                sndbuf_bytes: sndbuf_from_wmem(f.wmem_bytes),
                size_bytes: f.size_bytes,
                app_rate_bps: f.app_rate_bps,
                cwnd_clamp: f.cwnd_clamp.unwrap_or(u32::MAX),
                gso: f.gso,
            };
            let mut fl = Flow {
                sender: Sender::new(params, cc),
                rx: Receiver::with_rtt(mss, SimTime(f.rtt_ns), f.sack),
                ns2,
                delack: Timer::default(),
                comp_ack: Timer::default(),
                start_timer: Timer::default(),
                stop_timer: Timer::default(),
                start: SimTime(f.start_ns),
                delivered_window: 0,
            };
            fl.start_timer
                .arm(&mut q, SimTime(f.start_ns), i as u32, TimerKind::Start);
            if let Some(stop) = f.stop_ns {
                fl.stop_timer
                    .arm(&mut q, SimTime(stop), i as u32, TimerKind::Stop);
            }
            flows.push(fl);
        }
        let mut rec = Recorder::new(
            cfg.measure.interval_ns,
            cfg.duration_ns,
            cfg.flows.len(),
            link_cfgs.len(),
        );
        if let Some(t) = rec.next_sample() {
            q.push(t, Ev::Sample);
        }
        let short = short::ShortFlows::new(cfg)?;
        short.schedule_first(&mut q);
        let mut links: Vec<Bottleneck<Frame>> = link_cfgs
            .iter()
            .map(|c| Bottleneck::new(c, window))
            .collect();
        if cfg.short_flows.is_empty() {
            // Only short flows reuse connection slots (and ask the links whether they hold one).
            links.iter_mut().for_each(Bottleneck::forget_connections);
        }
        Ok(Sim {
            q,
            // Host delay (`jitter_ns`) goes on the data path at the sender, as in Floyd &
            // Jacobson ("On traffic phase effects in packet-switched gateways", 1992), who
            // removed phase effects by adding a random time, up to one bottleneck service
            // time, to each packet's processing at the source (ns-2's `overhead_` does the
            // same). What decides which flow a drop-tail overflow hits is when each data
            // packet reaches the queue, so randomizing the data departures acts on exactly
            // that. ACK-path noise (`ack_jitter_ns`, off by default) is a different effect:
            // bunched ACKs release segment trains (docs/validation.md D2, D6).
            paths: cfg
                .flows
                .iter()
                .map(|f| {
                    Path::new(
                        f.rtt_ns,
                        f.direction.link(),
                        DelayLine::with_jitter(
                            f.jitter_ns,
                            Rng::new(crate::rng::jitter_seed(cfg.seed, f.id)),
                        ),
                        DelayLine::with_jitter(
                            f.ack_jitter_ns,
                            Rng::new(crate::rng::ack_jitter_seed(cfg.seed, f.id)),
                        ),
                    )
                })
                .zip(&flows)
                .map(|(mut p, fl)| {
                    p.ns2 = fl.ns2.is_some();
                    p
                })
                .collect(),
            links,
            flows,
            rng: Rng::new(cfg.seed),
            rec,
            end: SimTime(cfg.duration_ns),
            window: Window::new(window),
            short,
            seed: cfg.seed,
            mtu: b.mtu_bytes,
            any_ns2: cfg.flows.iter().any(|f| f.stack == Stack::Ns2),
        })
    }

    /// Run to the end of the scenario and collect the output.
    pub fn run(mut self) -> Output {
        self.run_until(self.end);
        self.finish()
    }

    /// Process the events up to `t` (at most to the end of the run). Returns true when the
    /// run is complete. Lets a caller show progress between chunks.
    /// Packets waiting in the forward bottleneck's queue (tests trace it).
    #[cfg(test)]
    pub(crate) fn fwd_queue_pkts(&self) -> u64 {
        self.links[0].queue_pkts()
    }

    pub fn run_until(&mut self, t: SimTime) -> bool {
        let limit = t.min(self.end);
        while let Some((now, ev)) = self.q.pop_until(limit) {
            // At the very end only the last sample is taken: the run covers [0, end).
            if now < self.end || ev == Ev::Sample {
                self.dispatch(now, ev);
            }
        }
        limit >= self.end || self.q.is_empty()
    }

    /// Bytes waiting in the (forward) bottleneck queue now.
    pub fn link_queue_bytes(&self) -> u64 {
        self.links[0].queue_bytes()
    }

    /// Simulated time reached so far.
    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    /// End of the run.
    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Each sender's state in one line (for debugging).
    pub fn sender_states(&self) -> Vec<String> {
        self.flows.iter().map(|f| f.sender.debug_state()).collect()
    }

    /// One event. Always inlined into `run_until`: the event loop must stay one function
    /// (tests/test_sim_build.py; LLVM's own choice flips with unrelated changes).
    #[inline(always)]
    fn dispatch(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::FwdArrive(l) => {
                let path = &mut self.paths[l as usize];
                let pkt = path.fwd.pop(&mut self.q, ev);
                // one link: every path's data crosses it (no read of the path's `dir`)
                let d = if self.links.len() > 1 { path.dir } else { 0 };
                if pkt.len == 0 {
                    self.syn_arrives(now, pkt);
                    return;
                }
                let link = &mut self.links[d];
                if link.netem_holds() {
                    if let Some(at) = link.netem_hold(now, Frame::data(pkt)) {
                        self.q.push(at, Ev::NetemRelease(d as u8));
                    }
                    return;
                }
                enter_link(&mut self.q, link, d, now, Frame::data(pkt), &mut self.rng);
            }
            Ev::NetemRelease(d) => {
                // All of them enter the tbf before the first one's completion is handled.
                let link = &mut self.links[d as usize];
                for frame in link.netem_release() {
                    enter_link(&mut self.q, link, d as usize, now, frame, &mut self.rng);
                }
            }
            Ev::LinkDone(d) => {
                let (frame, next) = self.links[d as usize].done(now);
                if let Some(t) = next {
                    self.q.push(t, Ev::LinkDone(d));
                }
                match frame.ack {
                    None => self.deliver(now, frame.pkt),
                    Some(b) => {
                        // through the reverse path's bottleneck: now the return delay
                        let ack = *b;
                        let path = &mut self.paths[ack.flow as usize];
                        path.rev.push(
                            &mut self.q,
                            now + path.rev.delay(),
                            ack,
                            Ev::RevArrive(ack.flow),
                        );
                    }
                }
            }
            Ev::Arrival(e) => self.arrival(now, e),
            Ev::RevArrive(l) => {
                let path = &mut self.paths[l as usize];
                let ack = path.rev.pop(&mut self.q, ev);
                let fl = &mut self.flows[l as usize];
                let ns2 = self.any_ns2 && path.ns2;
                let mut io = path.io(&mut self.q, l);
                let agents = ns2_agents(&mut fl.ns2, ns2);
                if let Some(c) = agents {
                    if ack.syn {
                        c.start(now, &mut io);
                    } else {
                        c.on_ack(now, &ack, &mut io);
                    }
                } else if ack.syn {
                    // The SYN-ACK: established; its RTT is the first sample (Linux).
                    let rtt = now - fl.start;
                    fl.sender.start(now, rtt, &mut io);
                } else {
                    fl.sender.on_ack(now, &ack, &mut io);
                }
            }
            Ev::Timer(f, kind, gen) => self.timer(now, f, kind, gen),
            Ev::Sample => {
                let long = &self.flows[..self.short.base];
                self.rec.sample(now, long, &mut self.links);
                if let Some(t) = self.rec.next_sample() {
                    self.q.push(t, Ev::Sample);
                }
            }
        }
    }

    /// A SYN reaches the bottleneck. It is delayed by the queue in front of it (so a
    /// connection opened into a standing queue measures that queue in its first RTT, as in
    /// Linux) but takes no buffer space and is never dropped; the receiver answers at once.
    /// With a reverse bottleneck the SYN-ACK is likewise delayed by the opposite link's
    /// queue as it stands when the SYN arrives (same size as the SYN, never dropped).
    /// Cold and out of line: once per connection, and inline it cost the data arrivals'
    /// path registers (session 11).
    #[cold]
    #[inline(never)]
    fn syn_arrives(&mut self, now: SimTime, syn: Packet) {
        let path = &mut self.paths[syn.flow as usize];
        let mut at_receiver = now + self.links[path.dir].sojourn(now, syn.wire);
        if self.links.len() > 1 {
            at_receiver += self.links[1 - path.dir].sojourn(now, syn.wire);
        }
        let synack = Ack {
            flow: syn.flow,
            syn: true,
            tsecr: syn.ts,
            ..Ack::default()
        };
        path.rev.push(
            &mut self.q,
            at_receiver + path.rev.delay(),
            synack,
            Ev::RevArrive(syn.flow),
        );
    }

    fn deliver(&mut self, now: SimTime, pkt: Packet) {
        let f = pkt.flow;
        let ns2 = self.any_ns2 && self.paths[f as usize].ns2;
        let fl = &mut self.flows[f as usize];
        let agents = ns2_agents(&mut fl.ns2, ns2);
        if let Some(c) = agents {
            // Agent/TCPSink: an ACK for every packet, at once (DelAck: maybe held).
            let (decision, bytes) = c.deliver(&pkt, fl.delack.is_armed());
            if bytes > 0 && self.window.contains(now) {
                fl.delivered_window += bytes;
            }
            match decision {
                crate::ns2::SinkAck::Now(ack) => {
                    fl.delack.cancel();
                    send_ack(
                        &mut self.q,
                        &mut self.paths[f as usize],
                        &mut self.links,
                        &mut self.rng,
                        fl,
                        f,
                        now,
                        ack,
                    );
                }
                crate::ns2::SinkAck::Delay => fl.delack.arm(
                    &mut self.q,
                    now + crate::ns2::sink::DELACK_INTERVAL,
                    f,
                    TimerKind::DelAck,
                ),
            }
            return;
        }
        let (decision, bytes) = fl.rx.on_segment(&pkt);
        if bytes > 0 {
            if self.short.is_short(f) {
                self.short.delivered(f, fl.rx.delivered_bytes, now);
            }
            if self.window.contains(now) {
                fl.delivered_window += bytes;
            }
        }
        if let Some(mut ack) = fl.rx.take_flush() {
            ack.flow = f;
            send_ack(
                &mut self.q,
                &mut self.paths[f as usize],
                &mut self.links,
                &mut self.rng,
                fl,
                f,
                now,
                ack,
            );
        }
        match decision {
            AckDecision::Now(mut ack) => {
                fl.delack.cancel();
                fl.comp_ack.cancel();
                ack.flow = f;
                send_ack(
                    &mut self.q,
                    &mut self.paths[f as usize],
                    &mut self.links,
                    &mut self.rng,
                    fl,
                    f,
                    now,
                    ack,
                );
            }
            AckDecision::Delay => {
                if !fl.delack.is_armed() {
                    fl.delack
                        .arm(&mut self.q, now + DELACK_TIMEOUT, f, TimerKind::DelAck);
                }
            }
            AckDecision::Compress(d) => {
                if !fl.comp_ack.is_armed() {
                    fl.comp_ack.arm(&mut self.q, now + d, f, TimerKind::CompAck);
                }
            }
        }
    }

    fn timer(&mut self, now: SimTime, f: u32, kind: TimerKind, gen: u32) {
        let fl = &mut self.flows[f as usize];
        let q = &mut self.q;
        let ns2 = self.any_ns2;
        let t = match kind {
            TimerKind::Start => &mut fl.start_timer,
            TimerKind::Stop => &mut fl.stop_timer,
            TimerKind::Rto => match ns2_agents(&mut fl.ns2, ns2) {
                Some(c) => &mut c.agent.rto_timer,
                None => &mut fl.sender.rto_timer,
            },
            TimerKind::DelAck => &mut fl.delack,
            TimerKind::CompAck => &mut fl.comp_ack,
            TimerKind::Pacing => &mut fl.sender.pacing_timer,
            TimerKind::App => &mut fl.sender.app_timer,
            TimerKind::Reo => &mut fl.sender.reo_timer,
            TimerKind::Tlp => &mut fl.sender.tlp_timer,
        };
        if !t.on_pop(q, gen, now, f, kind) {
            return;
        }
        let agents = ns2_agents(&mut fl.ns2, ns2);
        if let (Some(c), TimerKind::DelAck) = (agents, kind) {
            if let Some(ack) = c.sink.on_delack_timeout() {
                send_ack(
                    q,
                    &mut self.paths[f as usize],
                    &mut self.links,
                    &mut self.rng,
                    fl,
                    f,
                    now,
                    ack,
                );
            }
            return;
        }
        if kind == TimerKind::DelAck || kind == TimerKind::CompAck {
            let ack = if kind == TimerKind::DelAck {
                fl.rx.has_pending_ack().then(|| fl.rx.on_delack_timeout())
            } else {
                fl.rx.on_comp_timeout()
            };
            if let Some(mut ack) = ack {
                fl.delack.cancel();
                fl.comp_ack.cancel();
                ack.flow = f;
                send_ack(
                    q,
                    &mut self.paths[f as usize],
                    &mut self.links,
                    &mut self.rng,
                    fl,
                    f,
                    now,
                    ack,
                );
            }
            return;
        }
        let mut io = self.paths[f as usize].io(q, f);
        if let Some(c) = ns2_agents(&mut fl.ns2, ns2) {
            match kind {
                TimerKind::Rto => return c.on_rto(now, &mut io),
                TimerKind::Stop => return c.agent.stop(),
                TimerKind::Start if c.opens_with_data() => return c.open(now, &mut io),
                TimerKind::Start => c.opening(now),
                _ => return,
            }
        }
        match kind {
            TimerKind::Start => {
                // The SYN (a zero-payload packet) leaves for the bottleneck; ns-2's
                // connection-opening packet is a bare 40-byte header.
                let wire = match fl.ns2 {
                    Some(_) => crate::ns2::agent::HEADER_BYTES,
                    None => SYN_BYTES,
                };
                let syn = Packet {
                    flow: f,
                    seg: 0,
                    len: 0,
                    wire,
                    ts: now,
                    agg: 1,
                };
                io.fwd
                    .push(io.q, now + io.fwd_delay, syn, Ev::FwdArrive(io.line));
            }
            TimerKind::Stop => fl.sender.stop(now, &mut io),
            TimerKind::Rto => fl.sender.on_rto(now, &mut io),
            TimerKind::Reo => fl.sender.on_reo_timeout(now, &mut io),
            TimerKind::Tlp => fl.sender.on_tlp(now, &mut io),
            TimerKind::Pacing | TimerKind::App => fl.sender.try_send(now, &mut io),
            TimerKind::DelAck | TimerKind::CompAck => unreachable!(),
        }
    }

    /// Collect the output (call after the run is complete).
    pub fn finish(self) -> Output {
        let flows = self.flows[..self.short.base]
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let (s, delivered) = match fl.ns2.as_ref() {
                    Some(c) => (c.agent.stats, c.sink.delivered_bytes),
                    None => (fl.sender.stats(), fl.rx.delivered_bytes),
                };
                FlowSummary {
                    id: i as u32,
                    bytes_sent: s.bytes_sent,
                    bytes_retransmitted: s.bytes_retransmitted,
                    bytes_delivered: delivered,
                    bytes_delivered_window: fl.delivered_window,
                    retransmits: s.retransmits,
                    timeouts: s.timeouts,
                    completion_ns: s.completion.map(|t| t.0),
                }
            })
            .collect();
        let stats = RunStats {
            events: self.q.popped,
            bottleneck_packets: self.links.iter().map(|l| l.accepted).sum(),
            simulated_ns: self.end.0,
        };
        let (samples, mut series) = self.rec.into_columns();
        let reverse_link = (series.len() > 1).then(|| series.remove(1));
        Output {
            flows,
            samples,
            link: series.remove(0),
            link_totals: self.links[0].totals.clone(),
            reverse_link,
            reverse_link_totals: self.links.get(1).map(|l| l.totals.clone()),
            stats,
            short_flows: self.short.into_table(&self.flows),
        }
    }
}

/// An ACK leaves the receiver of connection `fl` at `now`. Without a reverse bottleneck it
/// reaches the sender after the return delay (no queue, no loss: the ACK path as it always
/// was); with one it first enters the bottleneck opposite to the connection's data
/// (`Ev::LinkDone` then puts it on the return delay line), where it may queue or be lost.
/// Always inlined: a call of eight arguments per ACK otherwise (≈ 60 instructions each).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn send_ack(
    q: &mut EventQueue,
    path: &mut Path,
    links: &mut [Bottleneck<Frame>],
    rng: &mut Rng,
    fl: &Flow,
    f: u32,
    now: SimTime,
    ack: Ack,
) {
    if links.len() < 2 {
        path.rev
            .push(q, now + path.rev.delay(), ack, Ev::RevArrive(f));
        return;
    }
    let wire = match fl.ns2 {
        Some(_) => crate::ns2::agent::HEADER_BYTES,
        None => linux_ack_bytes(&ack),
    };
    let d = 1 - path.dir;
    enter_link(q, &mut links[d], d, now, Frame::ack(ack, wire), rng);
}

/// `frame` reaches bottleneck `d` at `now`; if the link was idle it starts serializing at
/// once, and its completion is scheduled.
#[inline]
fn enter_link(
    q: &mut EventQueue,
    link: &mut Bottleneck<Frame>,
    d: usize,
    now: SimTime,
    frame: Frame,
    rng: &mut Rng,
) {
    if let Arrival::Started(done) = link.arrive(now, frame, rng) {
        q.push(done, Ev::LinkDone(d as u8));
    }
}

fn err(key: &str, message: String) -> SimError {
    SimError::Config {
        key: key.to_string(),
        message,
    }
}

/// One bottleneck's rate, loss, buffer and RED parameters; errors name `prefix.<key>`.
fn validate_link(b: &BottleneckConfig, prefix: &str) -> Result<(), SimError> {
    let key = |k: &str| format!("{prefix}.{k}");
    if b.rate_bps == 0 {
        return Err(err(&key("rate"), "must be positive".into()));
    }
    if !(0.0..1.0).contains(&b.loss) {
        return Err(err(
            &key("loss"),
            format!("must be in [0, 1), got {}", b.loss),
        ));
    }
    if b.buffer_bytes.is_none() && b.buffer_pkts.is_none() {
        return Err(err(
            &key("buffer"),
            "one of buffer_bytes/buffer_pkts must be set".into(),
        ));
    }
    if let crate::config::AqmConfig::Red {
        min_th,
        max_th,
        max_p,
        wq,
        ..
    } = b.aqm
    {
        if !(0.0 <= min_th && min_th < max_th) {
            return Err(err(
                &key("aqm"),
                format!("need 0 <= min_th < max_th, got {min_th} and {max_th}"),
            ));
        }
        if !(max_p > 0.0 && max_p <= 1.0 && wq > 0.0 && wq <= 1.0) {
            return Err(err(
                &key("aqm"),
                format!("max_p and wq must be in (0, 1], got {max_p} and {wq}"),
            ));
        }
    }
    Ok(())
}

/// Checks the simulator needs beyond what `tcpfair.spec` validates (the config may also
/// come from elsewhere). Each error names the scenario key.
fn validate(cfg: &Config) -> Result<(), SimError> {
    let b = &cfg.bottleneck;
    if b.mtu_bytes < 576 || b.mtu_bytes > 65536 {
        return Err(err(
            "bottleneck.mtu",
            format!("must be between 576B and 65536B, got {}B", b.mtu_bytes),
        ));
    }
    validate_link(b, "bottleneck")?;
    if b.netem_latency_ns > 0 && !b.netem_root {
        return Err(err(
            "bottleneck.netem_latency",
            "needs bottleneck.netem_root = true (it is netem's watchdog latency)".into(),
        ));
    }
    if b.netem_root
        && (b.reverse.is_some()
            || cfg.flows.iter().any(|f| f.direction == Direction::Reverse)
            || cfg
                .short_flows
                .iter()
                .any(|f| f.direction == Direction::Reverse))
    {
        return Err(err(
            "bottleneck.netem_root",
            "is for the forward link only: not with a reverse bottleneck or reverse flows \
             (their ACKs would cross the forward tbf without netem)"
                .into(),
        ));
    }
    if b.netem_root && b.burst_bytes.is_none() {
        return Err(err(
            "bottleneck.netem_root",
            "true needs bottleneck.burst (netem's child is the tbf; without a bucket the \
             link is a serializing wire, which netem does not feed in clumps)"
                .into(),
        ));
    }
    if let Some(r) = b.reverse_config(false) {
        validate_link(&r, "bottleneck.reverse")?;
    }
    if cfg.measure.interval_ns == 0 {
        return Err(err("measure.interval", "must be positive".into()));
    }
    if cfg.flows.is_empty() && cfg.short_flows.is_empty() {
        return Err(err("flows", "at least one flow is needed".into()));
    }
    // Every long-lived flow and (at most) every short flow holds a connection, which a
    // timer's event-queue entry names in 27 bits.
    let conns = cfg.flows.len()
        + cfg
            .short_flows
            .iter()
            .map(|s| s.start_ns.len())
            .sum::<usize>();
    if conns > crate::event::MAX_CONNECTIONS {
        return Err(err(
            "flows",
            format!(
                "at most {} connections (long-lived and short flows together), got {conns}",
                crate::event::MAX_CONNECTIONS
            ),
        ));
    }
    let mss = (b.mtu_bytes - HEADER_BYTES) as u64;
    for f in &cfg.flows {
        let key = |k: &str| format!("flows.{}.{k}", f.group);
        if f.stack == Stack::Ns2 {
            if let Err(e) = crate::cc::registry::params_of(&f.cca, Stack::Ns2) {
                return Err(err(&key("cca"), e.message));
            }
            if f.size_bytes.is_some() {
                return Err(err(
                    &key("size"),
                    "not supported under stack \"ns2\" (its FTP source is greedy)".into(),
                ));
            }
            if f.app_rate_bps.is_some() {
                return Err(err(
                    &key("app_rate"),
                    "not supported under stack \"ns2\" (its FTP source is greedy)".into(),
                ));
            }
            if f.cwnd_clamp.is_some_and(|w| w > crate::ns2::MAX_WINDOW) {
                return Err(err(
                    &key("cwnd_clamp"),
                    format!(
                        "at most {} packets under stack \"ns2\" (window_), got {}",
                        crate::ns2::MAX_WINDOW,
                        f.cwnd_clamp.unwrap_or_default()
                    ),
                ));
            }
        }
        match f.access_rate_bps {
            Some(_) if f.stack != Stack::Ns2 => {
                return Err(err(
                    &key("access_rate"),
                    "applies under stack \"ns2\" only (ns-2's sender-to-router link)".into(),
                ))
            }
            Some(0) => return Err(err(&key("access_rate"), "must be positive".into())),
            _ => {}
        }
        if f.rtt_ns == 0 {
            return Err(err(&key("rtt"), "must be positive".into()));
        }
        if rwnd_from_rmem(f.rmem_bytes) < 2 * mss {
            return Err(err(
                &key("rmem"),
                format!(
                    "{}B leaves a window below 2 segments; need at least {}B",
                    f.rmem_bytes,
                    4 * mss
                ),
            ));
        }
        if sndbuf_from_wmem(f.wmem_bytes) < 2 * mss {
            return Err(err(
                &key("wmem"),
                format!(
                    "{}B is below 2 segments; need at least {}B",
                    f.wmem_bytes,
                    2 * mss
                ),
            ));
        }
        if f.cwnd_clamp == Some(0) || f.cwnd_clamp == Some(1) {
            return Err(err(&key("cwnd_clamp"), "must be at least 2".into()));
        }
        if f.app_rate_bps == Some(0) {
            return Err(err(&key("app_rate"), "must be positive".into()));
        }
        if f.jitter_ns > 1_000_000_000 {
            return Err(err(
                &key("jitter"),
                format!("must be at most 1s, got {}ns", f.jitter_ns),
            ));
        }
        if f.ack_jitter_ns > 1_000_000_000 {
            return Err(err(
                &key("ack_jitter"),
                format!("must be at most 1s, got {}ns", f.ack_jitter_ns),
            ));
        }
        if f.size_bytes == Some(0) {
            return Err(err(&key("size"), "must be positive".into()));
        }
    }
    Ok(())
}
