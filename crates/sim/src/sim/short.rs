//! Short flows: connections opened by an arrival process (issue 10 §3).
//!
//! Each `Config::short_flows` entry carries its schedule (start, size, RTT per short flow)
//! and one set of TCP settings. At each arrival a connection slot opens: a `Flow` in
//! `Sim::flows` after the long-lived ones, with its own pair of delay lines, exactly as a
//! long-lived connection (handshake at its start, Linux sender and receiver). When the
//! receiver has the last byte the flow's FCT is recorded; once the sender has its final
//! ACK and no packet of the slot is left on its delay lines or in the bottleneck, the slot
//! is free and the entry's next arrival reuses it (its lines, its jitter generators and
//! its timers' heap entries). So a run holds as many slots as short flows were ever open
//! at once, not one per arrival, and the per-flow cost does not grow with the number of
//! arrivals. Short flows are not sampled per interval (their bytes are in the link's).
//!
//! FCT: from the SYN leaving the sender (the arrival time) to the receiver delivering the
//! last byte in order — handshake, slow start and serialization included. The connection
//! is not closed with a FIN exchange: nothing after the last byte changes the FCT.
//!
//! A reverse entry's short flows (`direction = "reverse"`) send their data across the
//! reverse bottleneck and their ACKs across the forward one, as a reverse long-lived
//! connection does.

use super::{rwnd_from_rmem, sndbuf_from_wmem, Flow, Path, Sim};
use crate::cc::AnyCc;
use crate::config::{Config, ShortFlowsConfig, Stack};
use crate::event::{DelayLine, Ev, EventQueue, Timer, TimerKind};
use crate::output::ShortFlowTable;
use crate::packet::HEADER_BYTES;
use crate::rng::Rng;
use crate::tcp::{Receiver, Sender, SenderParams};
use crate::units::SimTime;
use crate::SimError;

/// What a short-flow slot runs now.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Its entry (a slot serves one entry: its delay lines carry the entry's jitter).
    entry: u32,
    /// Row of the short-flow table.
    row: usize,
    size: u64,
    /// The receiver had the last byte at this time.
    delivered_at: Option<SimTime>,
    live: bool,
}

pub(super) struct ShortFlows {
    entries: Vec<ShortFlowsConfig>,
    /// Next arrival of each entry (index into its schedule).
    next: Vec<usize>,
    /// First row of each entry in the table.
    offset: Vec<usize>,
    /// Index of the first short-flow slot in `Sim::flows` (the long-lived come first).
    pub base: usize,
    slots: Vec<Slot>,
    /// Per entry: slots (indices into `slots`) ready for the next arrival.
    free: Vec<Vec<u32>>,
    /// Slots whose flow delivered its last byte but may still have packets in flight.
    draining: Vec<u32>,
    table: ShortFlowTable,
}

impl ShortFlows {
    pub fn new(cfg: &Config) -> Result<ShortFlows, SimError> {
        let mut table = ShortFlowTable::default();
        let mut offset = Vec::with_capacity(cfg.short_flows.len());
        for e in &cfg.short_flows {
            validate(e, cfg.bottleneck.mtu_bytes)?;
            offset.push(table.start_ns.len());
            let n = e.start_ns.len();
            table.group.extend(std::iter::repeat_n(e.group, n));
            table.start_ns.extend_from_slice(&e.start_ns);
            table.size_bytes.extend_from_slice(&e.size_bytes);
            table.rtt_ns.extend_from_slice(&e.rtt_ns);
        }
        let rows = table.start_ns.len();
        table.fct_ns = vec![-1; rows];
        table.bytes_delivered = vec![0; rows];
        table.retransmits = vec![0; rows];
        table.timeouts = vec![0; rows];
        Ok(ShortFlows {
            next: vec![0; cfg.short_flows.len()],
            free: vec![Vec::new(); cfg.short_flows.len()],
            entries: cfg.short_flows.clone(),
            offset,
            base: cfg.flows.len(),
            slots: Vec::new(),
            draining: Vec::new(),
            table,
        })
    }

    /// Schedule each entry's first arrival.
    pub fn schedule_first(&self, q: &mut EventQueue) {
        for (e, c) in self.entries.iter().enumerate() {
            if let Some(&t) = c.start_ns.first() {
                q.push(SimTime(t), Ev::Arrival(e as u32));
            }
        }
    }

    /// Is `flow` (an index into `Sim::flows`) a short flow's slot?
    #[inline]
    pub fn is_short(&self, flow: u32) -> bool {
        flow as usize >= self.base
    }

    /// The flow in slot `flow` delivered `total` bytes in order by `now`: record its FCT
    /// the first time it has them all.
    pub fn delivered(&mut self, flow: u32, total: u64, now: SimTime) {
        let i = flow as usize - self.base;
        let s = &mut self.slots[i];
        if s.delivered_at.is_none() && total >= s.size {
            s.delivered_at = Some(now);
            self.table.fct_ns[s.row] = (now.0 - self.table.start_ns[s.row]) as i64;
            self.draining.push(i as u32);
        }
    }

    fn record(&mut self, i: usize, fl: &Flow) {
        let s = &mut self.slots[i];
        let st = fl.sender.stats();
        self.table.bytes_delivered[s.row] = fl.rx.delivered_bytes;
        self.table.retransmits[s.row] = st.retransmits;
        self.table.timeouts[s.row] = st.timeouts;
        s.live = false;
    }

    pub fn into_table(mut self, flows: &[Flow]) -> ShortFlowTable {
        for i in 0..self.slots.len() {
            if self.slots[i].live {
                self.record(i, &flows[self.base + i]);
            }
        }
        self.table.slots = self.slots.len() as u64;
        self.table
    }
}

fn validate(e: &ShortFlowsConfig, mtu: u32) -> Result<(), SimError> {
    let err = |k: &str, message: String| SimError::Config {
        key: format!("flows.{}.{k}", e.group),
        message,
    };
    let n = e.start_ns.len();
    if e.size_bytes.len() != n || e.rtt_ns.len() != n {
        return Err(err(
            "arrivals",
            format!(
                "start_ns, size_bytes and rtt_ns differ in length ({n}, {}, {})",
                e.size_bytes.len(),
                e.rtt_ns.len()
            ),
        ));
    }
    if e.start_ns.windows(2).any(|w| w[0] > w[1]) {
        return Err(err("arrivals", "start times must not decrease".into()));
    }
    if e.stack != Stack::Linux {
        return Err(err("stack", "short flows run the Linux stack only".into()));
    }
    if e.size_bytes.contains(&0) {
        return Err(err("size", "must be positive".into()));
    }
    if e.rtt_ns.contains(&0) {
        return Err(err("rtt", "must be positive".into()));
    }
    let mss = (mtu - HEADER_BYTES) as u64;
    if rwnd_from_rmem(e.rmem_bytes) < 2 * mss || sndbuf_from_wmem(e.wmem_bytes) < 2 * mss {
        return Err(err(
            "rmem",
            format!(
                "rmem and wmem must leave at least 2 segments ({}B)",
                4 * mss
            ),
        ));
    }
    if e.cwnd_clamp.is_some_and(|w| w < 2) {
        return Err(err("cwnd_clamp", "must be at least 2".into()));
    }
    // As for the long flows (and the delay lines' draws need it: `DelayLine::with_jitter`).
    for (k, v) in [("jitter", e.jitter_ns), ("ack_jitter", e.ack_jitter_ns)] {
        if v > 1_000_000_000 {
            return Err(err(k, format!("must be at most 1s, got {v}ns")));
        }
    }
    AnyCc::from_name(&e.cca, &e.cca_params, 0).map_err(|pe| {
        let k = if pe.param.is_empty() {
            "cca".to_string()
        } else {
            format!("params.{}", pe.param)
        };
        err(&k, pe.message)
    })?;
    Ok(())
}

/// A lazily cancelled timer handed to a slot's next flow: cancelled, but keeping its
/// generation and live heap entry, so an entry of the previous flow can never fire it.
fn inherited(t: Timer) -> Timer {
    let mut t = t;
    t.cancel();
    t
}

impl Sim {
    /// The next short flow of entry `e` arrives: open it in a free slot of the entry (or a
    /// new one) and send its SYN; schedule the entry's following arrival.
    pub(super) fn arrival(&mut self, now: SimTime, e: u32) {
        self.reclaim();
        let sf = &mut self.short;
        let k = sf.next[e as usize];
        sf.next[e as usize] += 1;
        let c = &sf.entries[e as usize];
        if let Some(&t) = c.start_ns.get(k + 1) {
            self.q.push(SimTime(t), Ev::Arrival(e));
        }
        let (rtt, size) = (c.rtt_ns[k], c.size_bytes[k]);
        let row = sf.offset[e as usize] + k;
        let i = match sf.free[e as usize].pop() {
            Some(i) => i as usize,
            None => self.new_slot(e),
        };
        let slot = self.short.base + i;
        let fl = self.open(e, slot, row, rtt, size, now);
        self.paths[slot].set_rtt(rtt);
        let old = std::mem::replace(&mut self.flows[slot], fl);
        let fl = &mut self.flows[slot];
        for (new, old) in [
            (&mut fl.delack, old.delack),
            (&mut fl.comp_ack, old.comp_ack),
            (&mut fl.start_timer, old.start_timer),
            (&mut fl.stop_timer, old.stop_timer),
            (&mut fl.sender.rto_timer, old.sender.rto_timer),
            (&mut fl.sender.pacing_timer, old.sender.pacing_timer),
            (&mut fl.sender.app_timer, old.sender.app_timer),
            (&mut fl.sender.reo_timer, old.sender.reo_timer),
            (&mut fl.sender.tlp_timer, old.sender.tlp_timer),
        ] {
            *new = inherited(old);
        }
        self.short.slots[i] = Slot {
            entry: e,
            row,
            size,
            delivered_at: None,
            live: true,
        };
        // The Start timer sends the SYN (the same path as a long-lived connection's).
        fl.start_timer
            .arm(&mut self.q, now, slot as u32, TimerKind::Start);
    }

    /// A new slot for entry `e` (a placeholder flow, replaced at once): its index in
    /// `ShortFlows::slots`.
    fn new_slot(&mut self, e: u32) -> usize {
        let c = &self.short.entries[e as usize];
        let id = self.flows.len() as u32;
        let seed = self.seed;
        self.paths.push(Path::new(
            1,
            c.direction.link(),
            DelayLine::with_jitter(c.jitter_ns, Rng::new(crate::rng::jitter_seed(seed, id))),
            DelayLine::with_jitter(
                c.ack_jitter_ns,
                Rng::new(crate::rng::ack_jitter_seed(seed, id)),
            ),
        ));
        let placeholder = self.open(e, id as usize, 0, 1, 1, SimTime(0));
        self.flows.push(placeholder);
        self.short.slots.push(Slot {
            entry: e,
            row: 0,
            size: 0,
            delivered_at: None,
            live: false,
        });
        self.short.slots.len() - 1
    }

    /// A fresh connection of entry `e` in slot `slot` (an index into `Sim::flows`).
    fn open(&self, e: u32, slot: usize, row: usize, rtt: u64, size: u64, now: SimTime) -> Flow {
        let c = &self.short.entries[e as usize];
        let mss = self.mtu - HEADER_BYTES;
        // each short flow's own seed (for randomized algorithms), after the long-lived ids
        let id = (self.short.base + row) as u32;
        let cc = AnyCc::from_name(&c.cca, &c.cca_params, crate::rng::flow_seed(self.seed, id))
            .expect("validated in ShortFlows::new");
        let params = SenderParams {
            id: slot as u32,
            mss,
            sack: c.sack,
            rwnd_bytes: rwnd_from_rmem(c.rmem_bytes),
            sndbuf_bytes: sndbuf_from_wmem(c.wmem_bytes),
            size_bytes: Some(size),
            app_rate_bps: None,
            cwnd_clamp: c.cwnd_clamp.unwrap_or(u32::MAX),
            gso: c.gso,
        };
        Flow {
            sender: Sender::new(params, cc),
            rx: Receiver::with_rtt(mss, SimTime(rtt), c.sack),
            ns2: None,
            delack: Timer::default(),
            comp_ack: Timer::default(),
            start_timer: Timer::default(),
            stop_timer: Timer::default(),
            start: now,
            delivered_window: 0,
        }
    }

    /// Free the slots whose flow is over: the last byte delivered, the sender has its
    /// final ACK, and none of its packets is on its delay lines or in the bottleneck.
    fn reclaim(&mut self) {
        let mut k = 0;
        while k < self.short.draining.len() {
            let i = self.short.draining[k] as usize;
            let slot = self.short.base + i;
            let fl = &self.flows[slot];
            let over = fl.sender.stats().completion.is_some()
                && self.paths[slot].fwd.is_empty()
                && self.paths[slot].rev.is_empty()
                && !self.links.iter().any(|l| l.holds(slot as u32));
            if over {
                self.short.record(i, fl);
                let e = self.short.slots[i].entry as usize;
                self.short.free[e].push(i as u32);
                self.short.draining.swap_remove(k);
            } else {
                k += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pop every event up to the end and return the times at which the timer fired.
    fn fires(q: &mut EventQueue, t: &mut Timer) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some((now, ev)) = q.pop() {
            if let Ev::Timer(f, kind, gen) = ev {
                if t.on_pop(q, gen, now, f, kind) {
                    out.push(now.0);
                }
            }
        }
        out
    }

    #[test]
    fn an_inherited_timer_ignores_the_previous_flows_heap_entries() {
        // the previous flow armed its RTO for t = 100 and re-armed it (lazily) twice: one
        // live heap entry of generation 1 at 100
        let mut q = EventQueue::new();
        let mut old = Timer::default();
        old.arm(&mut q, SimTime(100), 7, TimerKind::Rto);
        old.arm(&mut q, SimTime(150), 7, TimerKind::Rto);
        // the slot's next flow arms its RTO for 300 on the inherited timer
        let mut t = inherited(old);
        t.arm(&mut q, SimTime(300), 7, TimerKind::Rto);
        assert_eq!(fires(&mut q, &mut t), vec![300]);
    }

    #[test]
    fn a_short_flows_jitter_above_one_second_is_refused_naming_the_key() {
        let mut e = ShortFlowsConfig {
            group: 3,
            cca: "cubic".into(),
            cca_params: Default::default(),
            sack: true,
            rmem_bytes: 6_291_456,
            wmem_bytes: 4_194_304,
            cwnd_clamp: None,
            jitter_ns: 1_000_000_000,
            ack_jitter_ns: 0,
            stack: Stack::Linux,
            gso: false,
            direction: crate::config::Direction::default(),
            start_ns: vec![0],
            size_bytes: vec![10_000],
            rtt_ns: vec![50_000_000],
        };
        assert!(validate(&e, 1500).is_ok());
        e.ack_jitter_ns = 1_000_000_001;
        let Err(SimError::Config { key, message }) = validate(&e, 1500) else {
            panic!("an ack jitter of 1 s + 1 ns was accepted");
        };
        assert_eq!(
            (key.as_str(), message.as_str()),
            ("flows.3.ack_jitter", "must be at most 1s, got 1000000001ns")
        );
    }

    #[test]
    fn an_inherited_cancelled_timer_never_fires() {
        let mut q = EventQueue::new();
        let mut old = Timer::default();
        old.arm(&mut q, SimTime(100), 7, TimerKind::DelAck);
        let mut t = inherited(old);
        assert_eq!(fires(&mut q, &mut t), Vec::<u64>::new());
    }
}
