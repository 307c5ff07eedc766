//! The bottleneck: Bernoulli random loss, then the queue (drop-tail or RED, limited in bytes
//! or packets), then serialization at the link rate.
//!
//! The queue limit counts packets waiting in the buffer, not the one being serialized, as
//! Linux qdiscs (bfifo/pfifo/tbf `limit`) count their backlog: a zero-byte buffer still
//! lets one packet at a time onto the wire. Random loss is applied to data packets before
//! they reach the queue (like netem/linkem on ingress), so lost packets take no buffer space.
//!
//! GSO/TSO aggregates (`Packet::agg`): the fate of an aggregate is decided once, at its
//! first segment, and its other segments share it, as a qdisc sees one skb: one random-loss
//! draw (netem `loss` at the root above the rate limiter drops whole skbs), one RED
//! decision, and the queue accepts it only if all its bytes (or packets) fit — the part
//! that goes straight onto an idle link excepted, as for a single packet. The segments are
//! then queued and serialized one frame at a time. The buffer space of an accepted
//! aggregate's segments is reserved until they arrive (with send jitter they may come
//! later), so no other packet takes it: the aggregate is atomic, as an skb is.
//!
//! With `burst_bytes` (tbf's `burst`) the link is a token-bucket shaper in front of an
//! infinitely fast wire, as a tbf on a Mininet veth is: tokens accrue at `rate` up to the
//! bucket, the head of the queue leaves as soon as the bucket holds its bytes (at once
//! while tokens last), and the queue limit counts the backlog behind the bucket as before.
//! Segments of an aggregate take tokens one frame at a time (tbf takes a whole skb's at
//! once); with tokens to spare both leave together.
//!
//! With `netem_root` (the labs' tree: `netem delay` at the root, the tbf its child) the
//! packets that reach the link at one instant are all in the tbf's backlog before it sends
//! any: Linux's `netem_dequeue` moves every packet whose delay has expired into its child
//! qdisc before it dequeues from the child. So a packet that arrives at `now` is checked
//! against the limit with every packet that left the link at `now` still counted (they
//! arrived at `now`, or earlier and waited for tokens until `now`): a clump is cut at the
//! limit even when the bucket would have passed it all.

use crate::aqm::Red;
use crate::config::{AqmConfig, BottleneckConfig};
use crate::measure::Window;
use crate::packet::{Packet, Wire};
use crate::rng::Rng;
use crate::units::{Rate, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Bytes(u64),
    Pkts(u64),
}

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    RandomLoss,
    Dropped,
    Queued,
    /// The link was idle: the packet is being serialized, done at the given time.
    Started(SimTime),
}

/// Counters of one sampling interval.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntervalCounters {
    pub drops: u64,
    pub random_losses: u64,
    pub tx_bytes: u64,
    /// ACKs lost on this link (overflow, AQM or random loss); included in the above.
    pub ack_drops: u64,
}

/// tbf's token bucket, its tokens counted as transmission time at the rate (as tbf does).
#[derive(Clone, Copy, Debug)]
struct Bucket {
    /// The bucket's size: `burst` bytes at the rate.
    size: SimTime,
    tokens: SimTime,
    /// When `tokens` was last brought up to date.
    at: SimTime,
}

impl Bucket {
    fn new(rate: Rate, burst_bytes: u64) -> Bucket {
        let size = rate.tx_time(burst_bytes);
        Bucket {
            size,
            tokens: size,
            at: SimTime::ZERO,
        }
    }

    /// Take `need` worth of tokens for a packet at the head of the queue at `now`; returns
    /// how long it waits for them (zero while the bucket holds enough).
    fn take(&mut self, now: SimTime, need: SimTime) -> SimTime {
        let toks = (self.tokens + now.saturating_sub(self.at)).min(self.size);
        if toks >= need {
            self.tokens = toks - need;
            self.at = now;
            return SimTime::ZERO;
        }
        let wait = need - toks;
        self.tokens = SimTime::ZERO;
        self.at = now + wait;
        wait
    }
}

/// One direction of the bottleneck. `T` is what it queues: data packets, or (with a
/// reverse bottleneck) `Frame`s — one direction's data and the other direction's ACKs.
#[derive(Debug)]
pub struct Bottleneck<T: Wire = Packet> {
    rate: Rate,
    limit: Limit,
    /// tbf's token bucket (`burst_bytes`); without it packets serialize at `rate`.
    bucket: Option<Bucket>,
    red: Option<Red>,
    loss: f64,
    /// `loss > 0`, decided once (a flag is cheaper to test per packet than a float).
    lossy: bool,
    /// The packet in service (while `busy`) at the front, then those waiting. The one in
    /// service stays where it was queued until it is done (session 11: moving it out to a
    /// slot of its own copied every packet twice more).
    queue: VecDeque<T>,
    /// Bytes waiting (the packet in service not counted).
    q_bytes: u64,
    /// A packet is being serialized: the front of `queue`.
    busy: bool,
    /// When the packet in service finishes.
    busy_until: SimTime,
    window: Window,
    pub totals: crate::output::LinkTotals,
    pub interval: IntervalCounters,
    /// Packets that entered the queue or went straight onto the link.
    pub accepted: u64,
    /// Per flow: the fate of its current GSO aggregate, how many segments of it are still
    /// to arrive, and the wire size their space was reserved at.
    aggs: Vec<(Arrival, u32, u32)>,
    /// Buffer space reserved for accepted aggregates' segments still to arrive.
    reserved_bytes: u64,
    reserved_pkts: u64,
    /// `netem_root`: packets that left the link at `left.0` still count in the backlog
    /// for packets arriving at that same instant (bytes, packets).
    netem_root: bool,
    left: (SimTime, u64, u64),
    /// `netem_latency`: packets netem holds until its watchdog runs at `release_at`.
    netem_latency: SimTime,
    netem_held: Vec<T>,
    release_at: Option<SimTime>,
    /// Per connection: its packets in the queue or in service (grown on demand). A short
    /// flow's connection slot is reused only when none is left here (sim/short.rs).
    held: Vec<u32>,
    /// Whether `held` is kept (`holds` answers): on unless the engine turns it off for a
    /// run without short flows, where nothing asks (two counts per packet saved).
    count_held: bool,
    /// A token bucket or `netem_root`: packets that left the wire may still count in the
    /// backlog (`waiting_for_tokens`). Decided once here; without either, nothing does.
    shaped: bool,
    /// A full frame's bytes on the wire (the MTU) and its serialization time at `rate`,
    /// computed once: most frames are full, and `Rate::tx_time` divides.
    mtu_wire: u32,
    mtu_tx: SimTime,
}

impl<T: Wire> Bottleneck<T> {
    pub fn new(cfg: &BottleneckConfig, window: (SimTime, SimTime)) -> Bottleneck<T> {
        let rate = Rate(cfg.rate_bps);
        let limit = match (cfg.buffer_bytes, cfg.buffer_pkts) {
            (_, Some(p)) => Limit::Pkts(p),
            (Some(b), None) => Limit::Bytes(b),
            (None, None) => Limit::Pkts(u64::MAX),
        };
        let red = match cfg.aqm {
            AqmConfig::Droptail => None,
            AqmConfig::Red {
                min_th,
                max_th,
                max_p,
                wq,
                bytes,
                gentle,
            } => Some(Red::new(
                min_th,
                max_th,
                max_p,
                wq,
                bytes,
                gentle,
                rate.tx_time(cfg.mtu_bytes as u64),
                cfg.mtu_bytes,
            )),
        };
        Bottleneck {
            rate,
            limit,
            bucket: cfg.burst_bytes.map(|b| Bucket::new(rate, b)),
            red,
            loss: cfg.loss,
            lossy: cfg.loss > 0.0,
            queue: VecDeque::with_capacity(256),
            q_bytes: 0,
            busy: false,
            busy_until: SimTime::ZERO,
            window: Window::new(window),
            totals: Default::default(),
            interval: Default::default(),
            accepted: 0,
            aggs: Vec::new(),
            reserved_bytes: 0,
            reserved_pkts: 0,
            netem_root: cfg.netem_root,
            left: (SimTime::ZERO, 0, 0),
            netem_latency: SimTime(cfg.netem_latency_ns),
            netem_held: Vec::new(),
            release_at: None,
            held: Vec::new(),
            count_held: true,
            shaped: cfg.burst_bytes.is_some() || cfg.netem_root,
            mtu_wire: cfg.mtu_bytes,
            mtu_tx: rate.tx_time(cfg.mtu_bytes as u64),
        }
    }

    /// Stop counting each connection's packets on the link: nothing will call `holds`
    /// (a run without short flows, whose slots are never reused).
    pub fn forget_connections(&mut self) {
        self.count_held = false;
        self.held = Vec::new();
    }

    /// Does the link hold a packet of connection `flow` (queued or in service, or held by
    /// netem until its next release)?
    pub fn holds(&self, flow: u32) -> bool {
        debug_assert!(self.count_held, "holds() after forget_connections()");
        self.held.get(flow as usize).is_some_and(|&n| n > 0)
            || self.netem_held.iter().any(|p| p.flow() == flow)
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// How long a packet of `wire` bytes arriving now would take to get through: what is
    /// left of the packet in service, the queue, and its own serialization.
    pub fn sojourn(&self, now: SimTime, wire: u32) -> SimTime {
        let busy = self.busy_until.saturating_sub(now);
        busy + self.rate.tx_time(self.q_bytes + wire as u64)
    }

    pub fn queue_bytes(&self) -> u64 {
        self.q_bytes
    }

    pub fn queue_pkts(&self) -> u64 {
        self.waiting()
    }

    /// Packets waiting in the buffer (the one in service not counted).
    #[inline(always)]
    fn waiting(&self) -> u64 {
        self.queue.len() as u64 - u64::from(self.busy)
    }

    /// Whether `n` more packets of `pkt`'s size fit in the buffer at `now`.
    fn fits(&self, now: SimTime, pkt: &T, n: u64) -> bool {
        let (held_bytes, held_pkts) = if self.shaped {
            self.waiting_for_tokens(now)
        } else {
            (0, 0)
        };
        match self.limit {
            Limit::Bytes(b) => {
                self.q_bytes + held_bytes + self.reserved_bytes + n * pkt.wire() as u64 <= b
            }
            Limit::Pkts(p) => self.waiting() + held_pkts + self.reserved_pkts + n <= p,
        }
    }

    /// The packet at the head of a tbf that waits for tokens: still in the qdisc's backlog
    /// (tbf dequeues only what the bucket pays for), unlike one on a serializing wire.
    /// Under `netem_root` also what leaves at `now` and what already left at `now`: netem
    /// puts everything due at `now` into the tbf before the tbf sends any of it.
    fn waiting_for_tokens(&self, now: SimTime) -> (u64, u64) {
        let head = match (
            &self.bucket,
            self.busy.then(|| self.queue.front()).flatten(),
        ) {
            (Some(_), Some(p)) if self.busy_until > now || self.netem_root => (p.wire() as u64, 1),
            _ => (0, 0),
        };
        match self.left {
            (at, bytes, pkts) if self.netem_root && at == now => (head.0 + bytes, head.1 + pkts),
            _ => head,
        }
    }

    /// Remember the fate of `pkt`'s aggregate for the segments that follow it.
    #[inline]
    fn decide(&mut self, pkt: &T, fate: Arrival) -> Arrival {
        if pkt.agg() > 1 {
            self.decide_aggregate(pkt, fate);
        }
        fate
    }

    /// `decide` for the head of a GSO aggregate of more than one segment.
    #[cold]
    fn decide_aggregate(&mut self, pkt: &T, fate: Arrival) {
        let i = pkt.flow() as usize;
        if self.aggs.len() <= i {
            self.aggs.resize(i + 1, (Arrival::Queued, 0, 0));
        }
        debug_assert_eq!(self.aggs[i].1, 0, "aggregate started before the last ended");
        let (agg, wire) = (pkt.agg(), pkt.wire());
        self.aggs[i] = (fate, agg - 1, wire);
        if fate == Arrival::Queued {
            self.reserved_bytes += (agg - 1) as u64 * wire as u64;
            self.reserved_pkts += (agg - 1) as u64;
        }
    }

    /// A segment that follows the first of its GSO aggregate: it shares that one's fate.
    fn follow(&mut self, now: SimTime, pkt: T) -> Arrival {
        let slot = &mut self.aggs[pkt.flow() as usize];
        debug_assert!(slot.1 > 0, "GSO segment without its aggregate's head");
        slot.1 -= 1;
        let (fate, _, wire) = *slot;
        match fate {
            Arrival::RandomLoss => self.random_loss(&pkt),
            Arrival::Dropped => self.drop(&pkt),
            _ => {
                self.reserved_bytes -= wire as u64;
                self.reserved_pkts -= 1;
                if let Some(red) = self.red.as_mut() {
                    red.on_busy();
                }
                self.admit(now, pkt)
            }
        }
    }

    /// Put an accepted packet on the idle link or at the back of the queue.
    #[inline(always)]
    fn admit(&mut self, now: SimTime, pkt: T) -> Arrival {
        self.accepted += 1;
        if self.count_held {
            let i = pkt.flow() as usize;
            if self.held.len() <= i {
                self.held.resize(i + 1, 0);
            }
            self.held[i] += 1;
        }
        let wire = pkt.wire();
        self.queue.push_back(pkt);
        if !self.busy {
            debug_assert_eq!(self.queue.len(), 1);
            self.busy = true;
            return Arrival::Started(self.start(now, wire));
        }
        self.q_bytes += wire as u64;
        let waiting = self.waiting();
        let t = &mut self.totals;
        t.max_queue_bytes = t.max_queue_bytes.max(self.q_bytes);
        t.max_queue_pkts = t.max_queue_pkts.max(waiting);
        Arrival::Queued
    }

    fn drop(&mut self, pkt: &T) -> Arrival {
        self.totals.drops += 1;
        self.interval.drops += 1;
        self.count_ack_loss(pkt);
        Arrival::Dropped
    }

    fn random_loss(&mut self, pkt: &T) -> Arrival {
        self.totals.random_losses += 1;
        self.interval.random_losses += 1;
        self.count_ack_loss(pkt);
        Arrival::RandomLoss
    }

    fn count_ack_loss(&mut self, pkt: &T) {
        if pkt.is_ack() {
            self.totals.ack_drops += 1;
            self.interval.ack_drops += 1;
        }
    }

    /// Does netem hold arriving packets until its watchdog runs (`netem_latency` > 0)?
    pub fn netem_holds(&self) -> bool {
        self.netem_root && self.netem_latency > SimTime::ZERO
    }

    /// netem takes `pkt` at `now`. If no release is pending, the watchdog will run
    /// `netem_latency` from now: returns that time, for the caller to `netem_release` then.
    /// A packet due before the pending release goes with it.
    pub fn netem_hold(&mut self, now: SimTime, pkt: T) -> Option<SimTime> {
        self.netem_held.push(pkt);
        match self.release_at {
            Some(r) if r >= now => None,
            _ => {
                let r = now + self.netem_latency;
                self.release_at = Some(r);
                Some(r)
            }
        }
    }

    /// netem's watchdog runs: every packet it holds, in order, to be `arrive`d now.
    pub fn netem_release(&mut self) -> Vec<T> {
        self.release_at = None;
        std::mem::take(&mut self.netem_held)
    }

    /// A packet reaches the bottleneck at `now`. Always inlined (into the event loop and
    /// the netem release): a call per packet otherwise (docs/performance.md, Session 8).
    #[inline(always)]
    pub fn arrive(&mut self, now: SimTime, pkt: T, rng: &mut Rng) -> Arrival {
        if pkt.agg() == 0 {
            return self.follow(now, pkt);
        }
        if self.lossy && rng.bernoulli(self.loss) {
            let fate = self.random_loss(&pkt);
            return self.decide(&pkt, fate);
        }
        if let Some(red) = self.red.as_mut() {
            let q = if red.bytes {
                self.q_bytes as f64
            } else {
                // `waiting()`, written out: `red` holds `self` mutably here
                (self.queue.len() - usize::from(self.busy)) as f64
            };
            if red.should_drop(now, q, pkt.wire(), rng) {
                let fate = self.drop(&pkt);
                return self.decide(&pkt, fate);
            }
            red.on_busy();
        }
        // The packets of the aggregate that would wait in the buffer. A tbf enqueues every
        // skb into its backlog before the bucket lets it go, so the whole aggregate must fit.
        let straight_on = !self.busy && self.bucket.is_none();
        let waiting = pkt.agg() as u64 - u64::from(straight_on);
        if !self.fits(now, &pkt, waiting) {
            let fate = self.drop(&pkt);
            return self.decide(&pkt, fate);
        }
        self.decide(&pkt, Arrival::Queued);
        self.admit(now, pkt)
    }

    /// The front of the queue, of `wire` bytes, starts serializing at `now`: returns when
    /// it is done.
    #[inline(always)]
    fn start(&mut self, now: SimTime, wire: u32) -> SimTime {
        let tx = if wire == self.mtu_wire {
            self.mtu_tx
        } else {
            self.rate.tx_time(wire as u64)
        };
        self.totals.busy_ns += tx.0;
        let wait = match self.bucket.as_mut() {
            None => tx,
            Some(b) => b.take(now, tx),
        };
        self.busy_until = now + wait;
        now + wait
    }

    /// The packet in service finished serializing at `now`. Returns it, and the completion
    /// time of the next one if the queue was not empty.
    #[inline(always)]
    pub fn done(&mut self, now: SimTime) -> (T, Option<SimTime>) {
        debug_assert!(self.busy, "link completion while idle");
        let pkt = self
            .queue
            .pop_front()
            .expect("link completion without a packet");
        if self.count_held {
            self.held[pkt.flow() as usize] -= 1;
        }
        let wire = pkt.wire() as u64;
        if self.netem_root {
            if self.left.0 != now {
                self.left = (now, 0, 0);
            }
            self.left.1 += wire;
            self.left.2 += 1;
        }
        let t = &mut self.totals;
        t.tx_packets += 1;
        t.tx_bytes += wire;
        if self.window.contains(now) {
            t.tx_bytes_window += wire;
        }
        self.interval.tx_bytes += wire;
        if pkt.is_ack() {
            t.ack_tx_packets += 1;
            t.ack_tx_bytes += wire;
        }
        let next = match self.queue.front() {
            Some(n) => {
                let wire = n.wire();
                self.q_bytes -= wire as u64;
                Some(self.start(now, wire))
            }
            None => {
                self.busy = false;
                if let Some(red) = self.red.as_mut() {
                    red.on_idle(now);
                }
                None
            }
        };
        (pkt, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(bytes: Option<u64>, pkts: Option<u64>) -> BottleneckConfig {
        BottleneckConfig {
            rate_bps: 100_000_000,
            buffer_bytes: bytes,
            buffer_pkts: pkts,
            aqm: AqmConfig::Droptail,
            loss: 0.0,
            mtu_bytes: 1500,
            reverse: None,
            burst_bytes: None,
            netem_root: false,
            netem_latency_ns: 0,
        }
    }

    fn tbf(burst: u64, bytes: Option<u64>, pkts: Option<u64>) -> Bottleneck {
        let c = BottleneckConfig {
            burst_bytes: Some(burst),
            ..cfg(bytes, pkts)
        };
        Bottleneck::new(&c, (SimTime(0), SimTime::MAX))
    }

    /// Departure times of packets arriving together at `at` (each `done` as it completes).
    fn departures(l: &mut Bottleneck, at: SimTime, first: u64, n: u64) -> Vec<u64> {
        let mut rng = Rng::new(1);
        let mut next = None;
        for i in first..first + n {
            if let Arrival::Started(t) = l.arrive(at, pkt(i), &mut rng) {
                next = Some(t);
            }
        }
        let mut out = Vec::new();
        while let Some(t) = next {
            out.push(t.0);
            next = l.done(t).1;
        }
        out
    }

    fn pkt(i: u64) -> Packet {
        Packet {
            flow: 0,
            seg: i,
            len: 1448,
            wire: 1500,
            ts: SimTime::ZERO,
            agg: 1,
        }
    }

    #[test]
    fn packet_limit_counts_waiting_packets_only() {
        let mut l = Bottleneck::new(&cfg(None, Some(2)), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        assert_eq!(
            l.arrive(SimTime(0), pkt(0), &mut rng),
            Arrival::Started(SimTime(120_000))
        );
        assert_eq!(l.arrive(SimTime(0), pkt(1), &mut rng), Arrival::Queued);
        assert_eq!(l.arrive(SimTime(0), pkt(2), &mut rng), Arrival::Queued);
        assert_eq!(l.arrive(SimTime(0), pkt(3), &mut rng), Arrival::Dropped);
        assert_eq!(l.queue_pkts(), 2);
        let (p, next) = l.done(SimTime(120_000));
        assert_eq!((p.seg, next), (0, Some(SimTime(240_000))));
        assert_eq!(l.totals.drops, 1);
    }

    #[test]
    fn holds_a_connection_while_its_packets_are_queued_or_in_service() {
        let mut l = Bottleneck::new(&cfg(None, Some(1)), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        let of = |flow: u32, seg: u64| Packet { flow, ..pkt(seg) };
        assert!(!l.holds(3));
        l.arrive(SimTime(0), of(3, 0), &mut rng); // in service
        l.arrive(SimTime(0), of(5, 0), &mut rng); // queued
        assert_eq!(l.arrive(SimTime(0), of(3, 1), &mut rng), Arrival::Dropped);
        assert!(l.holds(3) && l.holds(5) && !l.holds(4));
        l.done(SimTime(120_000));
        assert!(!l.holds(3) && l.holds(5)); // the dropped packet is not held
        l.done(SimTime(240_000));
        assert!(!l.holds(5));
    }

    #[test]
    fn byte_limit_rejects_a_packet_that_would_overflow() {
        let mut l = Bottleneck::new(&cfg(Some(2999), None), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        l.arrive(SimTime(0), pkt(0), &mut rng);
        assert_eq!(l.arrive(SimTime(0), pkt(1), &mut rng), Arrival::Queued);
        assert_eq!(l.arrive(SimTime(0), pkt(2), &mut rng), Arrival::Dropped); // 3000 > 2999
        assert_eq!(l.queue_bytes(), 1500);
    }

    #[test]
    fn frames_shorter_than_the_mtu_serialize_in_their_own_time() {
        // 100 Mbit/s: 1,500 bytes take 120 µs, 600 bytes 48 µs, 61 bytes 4,880 ns.
        let mut l = Bottleneck::new(&cfg(None, None), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        let sized = |seg: u64, wire: u32| Packet { wire, ..pkt(seg) };
        assert_eq!(
            l.arrive(SimTime(0), sized(0, 600), &mut rng),
            Arrival::Started(SimTime(48_000))
        );
        l.arrive(SimTime(0), sized(1, 1500), &mut rng);
        l.arrive(SimTime(0), sized(2, 61), &mut rng);
        assert_eq!(l.done(SimTime(48_000)).1, Some(SimTime(168_000)));
        assert_eq!(l.done(SimTime(168_000)).1, Some(SimTime(172_880)));
        assert_eq!(l.totals.busy_ns, 172_880);
    }

    #[test]
    fn a_link_that_forgets_connections_carries_the_same_packets() {
        let run = |forget: bool| {
            let mut l = Bottleneck::new(&cfg(None, Some(3)), (SimTime(0), SimTime::MAX));
            if forget {
                l.forget_connections();
            }
            let mut rng = Rng::new(1);
            let mut fates = Vec::new();
            for i in 0..6 {
                let p = Packet {
                    flow: (i % 3) as u32,
                    ..pkt(i)
                };
                fates.push(l.arrive(SimTime(i * 10_000), p, &mut rng));
            }
            let mut t = SimTime(120_000);
            while let (p, Some(next)) = l.done(t) {
                fates.push(Arrival::Started(SimTime(p.seg)));
                t = next;
            }
            (fates, l.totals.drops, l.totals.tx_packets)
        };
        let kept = run(false);
        assert_eq!(kept.1, 2); // one in service, three queued, two dropped
        assert_eq!(run(true), kept);
    }

    #[test]
    fn zero_buffer_serializes_one_packet_at_a_time() {
        let mut l = Bottleneck::new(&cfg(Some(0), None), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        assert!(matches!(
            l.arrive(SimTime(0), pkt(0), &mut rng),
            Arrival::Started(_)
        ));
        assert_eq!(l.arrive(SimTime(1), pkt(1), &mut rng), Arrival::Dropped);
        let (_, next) = l.done(SimTime(120_000));
        assert_eq!(next, None);
        assert_eq!(l.totals.busy_ns, 120_000);
    }

    /// An aggregate of `n` segments starting at segment `first`.
    fn agg(first: u64, n: u32) -> Vec<Packet> {
        (0..n as u64)
            .map(|k| Packet {
                agg: if k == 0 { n } else { 0 },
                ..pkt(first + k)
            })
            .collect()
    }

    fn arrive_all(l: &mut Bottleneck, pkts: &[Packet], rng: &mut Rng) -> Vec<Arrival> {
        pkts.iter().map(|&p| l.arrive(SimTime(0), p, rng)).collect()
    }

    #[test]
    fn a_full_byte_queue_drops_an_aggregate_whole() {
        // 100 000 B buffer; one packet in service, 40 waiting (60 000 B).
        let mut l = Bottleneck::new(&cfg(Some(100_000), None), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        let first = arrive_all(&mut l, &agg(0, 41), &mut rng);
        assert!(matches!(first[0], Arrival::Started(_)));
        assert!(first[1..].iter().all(|&a| a == Arrival::Queued));
        assert_eq!(l.queue_bytes(), 60_000);
        // 30 more (45 000 B) would need 105 000 B: all 30 dropped, though 26 would fit.
        let second = arrive_all(&mut l, &agg(41, 30), &mut rng);
        assert!(second.iter().all(|&a| a == Arrival::Dropped));
        assert_eq!((l.totals.drops, l.queue_bytes()), (30, 60_000));
        // 26 (39 000 B → 99 000 B) fit: all queued.
        let third = arrive_all(&mut l, &agg(71, 26), &mut rng);
        assert!(third.iter().all(|&a| a == Arrival::Queued));
        assert_eq!(l.queue_bytes(), 99_000);
        // A single packet no longer fits (100 500 B).
        assert_eq!(l.arrive(SimTime(0), pkt(97), &mut rng), Arrival::Dropped);
    }

    #[test]
    fn a_packet_limit_counts_the_whole_aggregate() {
        let mut l = Bottleneck::new(&cfg(None, Some(10)), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        // Idle link: the first segment goes onto the wire, the other 10 wait: fits.
        let a = arrive_all(&mut l, &agg(0, 11), &mut rng);
        assert!(a[1..].iter().all(|&x| x == Arrival::Queued));
        l.done(SimTime(120_000)); // one leaves the buffer: 9 waiting, room for 1
        assert!(arrive_all(&mut l, &agg(11, 2), &mut rng)
            .iter()
            .all(|&x| x == Arrival::Dropped));
    }

    #[test]
    fn an_accepted_aggregate_keeps_its_space_until_its_segments_arrive() {
        let mut l = Bottleneck::new(&cfg(Some(6_000), None), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        l.arrive(SimTime(0), pkt(0), &mut rng); // in service
        let a = agg(1, 4); // 6 000 B: fits exactly
        assert_eq!(l.arrive(SimTime(0), a[0], &mut rng), Arrival::Queued);
        // Another flow's packet arrives before the rest of the aggregate: no room left.
        let other = Packet { flow: 1, ..pkt(0) };
        assert_eq!(l.arrive(SimTime(1), other, &mut rng), Arrival::Dropped);
        assert!(arrive_all(&mut l, &a[1..], &mut rng)
            .iter()
            .all(|&x| x == Arrival::Queued));
        assert_eq!(l.queue_bytes(), 6_000);
        assert_eq!(l.totals.max_queue_bytes, 6_000);
    }

    #[test]
    fn acks_queue_with_data_and_are_counted_apart() {
        use crate::packet::{linux_ack_bytes, Ack, Frame};
        let mut l: Bottleneck<Frame> =
            Bottleneck::new(&cfg(None, Some(1)), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        let ack = |cum: u64, nsack: u8| {
            let a = Ack {
                flow: 1,
                cum,
                nsack,
                ..Ack::default()
            };
            Frame::ack(a, linux_ack_bytes(&a))
        };
        // 1500 B data in service (120 µs at 100 Mbit/s), one 64 B ACK waits, the next is
        // dropped: the limit counts it as a packet
        let first = l.arrive(SimTime(0), Frame::data(pkt(0)), &mut rng);
        assert_eq!(first, Arrival::Started(SimTime(120_000)));
        assert_eq!(l.arrive(SimTime(0), ack(1, 1), &mut rng), Arrival::Queued);
        assert_eq!(l.arrive(SimTime(0), ack(2, 0), &mut rng), Arrival::Dropped);
        assert_eq!(l.queue_bytes(), 64);
        assert_eq!((l.totals.drops, l.totals.ack_drops), (1, 1));
        // the ACK is serialized after the data: 64 B = 5.12 µs
        let (_, next) = l.done(SimTime(120_000));
        assert_eq!(next, Some(SimTime(125_120)));
        let (f, _) = l.done(SimTime(125_120));
        assert!(f.ack.as_ref().is_some_and(|a| a.cum == 1));
        let t = &l.totals;
        assert_eq!((t.tx_packets, t.tx_bytes), (2, 1564));
        assert_eq!((t.ack_tx_packets, t.ack_tx_bytes), (1, 64));
    }

    #[test]
    fn linux_ack_size_counts_the_sack_option() {
        use crate::packet::{linux_ack_bytes, Ack};
        let sizes: Vec<u32> = (0..=3)
            .map(|n| {
                linux_ack_bytes(&Ack {
                    nsack: n,
                    ..Ack::default()
                })
            })
            .collect();
        // 52 B of headers; SACK option 2 + 8n padded to a multiple of 4
        assert_eq!(sizes, vec![52, 64, 72, 80]);
    }

    #[test]
    fn random_loss_drops_whole_aggregates_with_one_draw_each() {
        let mut c = cfg(None, None);
        c.loss = 0.5;
        let mut l = Bottleneck::new(&c, (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(7);
        // The same stream, drawn once per aggregate, tells which aggregates are lost.
        let mut twin = Rng::new(7);
        let (mut lost, n) = (0, 200);
        for k in 0..n {
            let fate = arrive_all(&mut l, &agg(k * 10, 10), &mut rng);
            let expect_lost = twin.bernoulli(0.5);
            let all_lost = fate.iter().all(|&x| x == Arrival::RandomLoss);
            let none_lost = fate.iter().all(|&x| x != Arrival::RandomLoss);
            assert!(all_lost || none_lost, "aggregate {k} split: {fate:?}");
            assert_eq!(all_lost, expect_lost, "aggregate {k}");
            lost += all_lost as u64;
        }
        assert!(lost > 0 && lost < n);
        assert_eq!(l.totals.random_losses, lost * 10);
        assert_eq!(l.accepted, (n - lost) * 10);
    }

    #[test]
    fn a_token_bucket_passes_its_burst_at_once_then_the_rate() {
        // 1500 B at 100 Mbit/s = 120 µs of tokens; a bucket of 2 frames, full at start.
        let mut l = tbf(3000, None, Some(100));
        assert_eq!(
            departures(&mut l, SimTime(0), 0, 4),
            vec![0, 0, 120_000, 240_000]
        );
        // After 1 s idle the bucket is full again but holds only 2 frames.
        let t = 1_000_000_000;
        assert_eq!(
            departures(&mut l, SimTime(t), 4, 3),
            vec![t, t, t + 120_000]
        );
        // Without a bucket the same arrivals serialize one by one.
        let mut fifo = Bottleneck::new(&cfg(None, Some(100)), (SimTime(0), SimTime::MAX));
        assert_eq!(
            departures(&mut fifo, SimTime(0), 0, 4),
            vec![120_000, 240_000, 360_000, 480_000]
        );
    }

    #[test]
    fn a_token_bucket_counts_the_packet_waiting_for_tokens_in_its_limit() {
        // A 1-frame bucket and a 1-frame byte limit: packet 0 leaves on the tokens, packet 1
        // waits in the backlog for 120 µs of tokens, so packet 2 finds the limit full.
        let mut l = tbf(1500, Some(1500), None);
        let mut rng = Rng::new(1);
        assert_eq!(
            l.arrive(SimTime(0), pkt(0), &mut rng),
            Arrival::Started(SimTime(0))
        );
        assert_eq!(l.arrive(SimTime(0), pkt(1), &mut rng), Arrival::Queued);
        assert_eq!(l.done(SimTime(0)).1, Some(SimTime(120_000)));
        assert_eq!(
            l.arrive(SimTime(10_000), pkt(2), &mut rng),
            Arrival::Dropped
        );
        // Once it has left, the backlog is empty again.
        l.done(SimTime(120_000));
        assert_eq!(
            l.arrive(SimTime(130_000), pkt(3), &mut rng),
            Arrival::Started(SimTime(240_000))
        );
    }

    #[test]
    fn a_token_bucket_takes_an_aggregate_only_if_it_fits_whole() {
        // tbf enqueues the whole skb before the bucket lets any of it go: a 3-segment
        // aggregate does not fit a 2-frame limit even on an idle link with tokens.
        let mut l = tbf(1_000_000, Some(3000), None);
        let mut rng = Rng::new(1);
        let a = agg(0, 3);
        assert!(arrive_all(&mut l, &a, &mut rng)
            .iter()
            .all(|&f| f == Arrival::Dropped));
        let b = agg(3, 2);
        assert_eq!(
            l.arrive(SimTime(0), b[0], &mut rng),
            Arrival::Started(SimTime(0))
        );
    }

    /// Packets arriving one after another at the same instant `at`, the link sending what
    /// it can at `at` before the next arrives (the order the event loop gives same-time
    /// events: a packet's completion is scheduled after the arrivals already due).
    fn clump(l: &mut Bottleneck, at: SimTime, pkts: &[Packet]) -> Vec<Arrival> {
        let mut rng = Rng::new(1);
        let mut pending = None;
        let mut out = Vec::new();
        for &p in pkts {
            let a = l.arrive(at, p, &mut rng);
            if let Arrival::Started(t) = a {
                pending = Some(t);
            }
            out.push(a);
            while pending == Some(at) {
                pending = l.done(at).1;
            }
        }
        out
    }

    /// A lab tbf: 5 MB bucket, 160 000 B limit, with or without netem above it.
    fn lab_tbf(netem_root: bool) -> Bottleneck {
        let c = BottleneckConfig {
            burst_bytes: Some(5_000_000),
            netem_root,
            ..cfg(Some(160_000), None)
        };
        Bottleneck::new(&c, (SimTime(0), SimTime::MAX))
    }

    /// Four 42-segment aggregates (63 000 B each) then 30 single frames, all at one instant.
    fn lab_clump() -> Vec<Packet> {
        let mut pkts: Vec<Packet> = (0..4).flat_map(|k| agg(42 * k, 42)).collect();
        pkts.extend((168..198).map(pkt));
        pkts
    }

    #[test]
    fn under_netem_a_clump_is_cut_at_the_limit_though_the_bucket_would_pass_it() {
        // Full bucket (5 MB ≫ the clump's 213 000 B): every packet could leave at once.
        // Under netem all of them are in the tbf's backlog together: aggregates 1 and 2
        // fit (126 000 B), 3 and 4 (189 000 B, 252 000 B) are dropped whole; then single
        // frames fill 126 000 + 22 × 1500 = 159 000 B and the 23rd (160 500 B) is dropped.
        let mut l = lab_tbf(true);
        let fates = clump(&mut l, SimTime(0), &lab_clump());
        let kept = |r: std::ops::Range<usize>| {
            fates[r]
                .iter()
                .filter(|a| !matches!(a, Arrival::Dropped))
                .count()
        };
        assert_eq!(kept(0..84), 84);
        assert_eq!(kept(84..168), 0);
        assert_eq!(kept(168..190), 22);
        assert_eq!(kept(190..198), 0);
        assert_eq!(l.totals.drops, 84 + 8);
        // The kept ones all left at once.
        assert_eq!(l.totals.tx_bytes, 159_000);
        // One nanosecond later the backlog is empty again: an aggregate goes through.
        let later = clump(&mut l, SimTime(1), &agg(198, 42));
        assert!(later.iter().all(|a| !matches!(a, Arrival::Dropped)));
    }

    #[test]
    fn without_netem_the_same_clump_passes_undropped() {
        // Today's behaviour: each packet meets the backlog as the bucket has drained it.
        let mut l = lab_tbf(false);
        let fates = clump(&mut l, SimTime(0), &lab_clump());
        assert!(fates.iter().all(|a| !matches!(a, Arrival::Dropped)));
        assert_eq!((l.totals.drops, l.totals.tx_bytes), (0, 198 * 1500));
    }

    #[test]
    fn under_netem_a_packet_that_waited_for_tokens_counts_at_its_departure_instant() {
        // A 1-frame bucket: packet 0 leaves at 0, packet 1 waits for tokens until 120 µs.
        // At 120 µs netem releases a 3000 B clump into a 3000 B limit: packet 1 is still in
        // the backlog when the clump is enqueued, so only one of the two new frames fits.
        let c = BottleneckConfig {
            burst_bytes: Some(1500),
            netem_root: true,
            ..cfg(Some(3000), None)
        };
        let mut l = Bottleneck::new(&c, (SimTime(0), SimTime::MAX));
        clump(&mut l, SimTime(0), &[pkt(0), pkt(1)]);
        assert_eq!(l.done(SimTime(120_000)).1, None); // packet 1 left at 120 µs
        let t = SimTime(120_000);
        let fates = clump(&mut l, t, &[pkt(2), pkt(3)]);
        assert_ne!(fates[0], Arrival::Dropped);
        assert_eq!(fates[1], Arrival::Dropped);
    }

    #[test]
    fn netem_latency_releases_everything_due_by_the_watchdog_at_once() {
        // Watchdog 50 µs late: the packet due at 0 opens a release at 50 µs; those due at
        // 30 µs and at exactly 50 µs go with it; one due at 50.001 µs waits for the next.
        let c = BottleneckConfig {
            burst_bytes: Some(5_000_000),
            netem_root: true,
            netem_latency_ns: 50_000,
            ..cfg(Some(160_000), None)
        };
        let mut l: Bottleneck = Bottleneck::new(&c, (SimTime(0), SimTime::MAX));
        assert!(l.netem_holds());
        assert_eq!(l.netem_hold(SimTime(0), pkt(0)), Some(SimTime(50_000)));
        assert_eq!(l.netem_hold(SimTime(30_000), pkt(1)), None);
        assert_eq!(l.netem_hold(SimTime(50_000), pkt(2)), None);
        assert!(l.holds(0)); // a short flow's slot is not reused while netem holds its packet
        let first: Vec<u64> = l.netem_release().iter().map(|p| p.seg).collect();
        assert_eq!(first, vec![0, 1, 2]);
        assert_eq!(
            l.netem_hold(SimTime(50_001), pkt(3)),
            Some(SimTime(100_001))
        );
        assert_eq!(l.netem_release().len(), 1);
        // Without a latency netem holds nothing: packets meet the tbf when they are due.
        assert!(!lab_tbf(true).netem_holds());
    }
}
