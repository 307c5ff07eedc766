//! The bottleneck: Bernoulli random loss, then the queue (drop-tail or RED, limited in bytes
//! or packets), then serialization at the link rate.
//!
//! The queue limit counts packets waiting in the buffer, not the one being serialized, as
//! Linux qdiscs (bfifo/pfifo/tbf `limit`) count their backlog: a zero-byte buffer still
//! lets one packet at a time onto the wire. Random loss is applied to data packets before
//! they reach the queue (like netem/linkem on ingress), so lost packets take no buffer space.

use crate::aqm::Red;
use crate::config::{AqmConfig, BottleneckConfig};
use crate::packet::Packet;
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
}

#[derive(Debug)]
pub struct Bottleneck {
    rate: Rate,
    limit: Limit,
    red: Option<Red>,
    loss: f64,
    queue: VecDeque<Packet>,
    q_bytes: u64,
    in_service: Option<Packet>,
    /// When the packet in service finishes.
    busy_until: SimTime,
    window: (SimTime, SimTime),
    pub totals: crate::output::LinkTotals,
    pub interval: IntervalCounters,
    /// Packets that entered the queue or went straight onto the link.
    pub accepted: u64,
}

impl Bottleneck {
    pub fn new(cfg: &BottleneckConfig, window: (SimTime, SimTime)) -> Bottleneck {
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
            red,
            loss: cfg.loss,
            queue: VecDeque::with_capacity(256),
            q_bytes: 0,
            in_service: None,
            busy_until: SimTime::ZERO,
            window,
            totals: Default::default(),
            interval: Default::default(),
            accepted: 0,
        }
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
        self.queue.len() as u64
    }

    fn fits(&self, pkt: &Packet) -> bool {
        match self.limit {
            Limit::Bytes(b) => self.q_bytes + pkt.wire as u64 <= b,
            Limit::Pkts(p) => (self.queue.len() as u64) < p,
        }
    }

    fn drop(&mut self) {
        self.totals.drops += 1;
        self.interval.drops += 1;
    }

    /// A data packet reaches the bottleneck at `now`.
    pub fn arrive(&mut self, now: SimTime, pkt: Packet, rng: &mut Rng) -> Arrival {
        if self.loss > 0.0 && rng.bernoulli(self.loss) {
            self.totals.random_losses += 1;
            self.interval.random_losses += 1;
            return Arrival::RandomLoss;
        }
        if let Some(red) = self.red.as_mut() {
            let q = if red.bytes {
                self.q_bytes as f64
            } else {
                self.queue.len() as f64
            };
            if red.should_drop(now, q, pkt.wire, rng) {
                self.drop();
                return Arrival::Dropped;
            }
            red.on_busy();
        }
        self.accepted += 1;
        if self.in_service.is_none() {
            debug_assert!(self.queue.is_empty());
            return Arrival::Started(self.start(now, pkt));
        }
        if !self.fits(&pkt) {
            self.accepted -= 1;
            self.drop();
            return Arrival::Dropped;
        }
        self.q_bytes += pkt.wire as u64;
        self.queue.push_back(pkt);
        let t = &mut self.totals;
        t.max_queue_bytes = t.max_queue_bytes.max(self.q_bytes);
        t.max_queue_pkts = t.max_queue_pkts.max(self.queue.len() as u64);
        Arrival::Queued
    }

    fn start(&mut self, now: SimTime, pkt: Packet) -> SimTime {
        let tx = self.rate.tx_time(pkt.wire as u64);
        self.totals.busy_ns += tx.0;
        self.in_service = Some(pkt);
        self.busy_until = now + tx;
        now + tx
    }

    /// The packet in service finished serializing at `now`. Returns it, and the completion
    /// time of the next one if the queue was not empty.
    pub fn done(&mut self, now: SimTime) -> (Packet, Option<SimTime>) {
        let pkt = self
            .in_service
            .take()
            .expect("link completion without a packet");
        let t = &mut self.totals;
        t.tx_packets += 1;
        t.tx_bytes += pkt.wire as u64;
        if now >= self.window.0 && now < self.window.1 {
            t.tx_bytes_window += pkt.wire as u64;
        }
        self.interval.tx_bytes += pkt.wire as u64;
        let next = match self.queue.pop_front() {
            Some(n) => {
                self.q_bytes -= n.wire as u64;
                Some(self.start(now, n))
            }
            None => {
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
        }
    }

    fn pkt(i: u64) -> Packet {
        Packet {
            flow: 0,
            seg: i,
            len: 1448,
            wire: 1500,
            ts: SimTime::ZERO,
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
    fn byte_limit_rejects_a_packet_that_would_overflow() {
        let mut l = Bottleneck::new(&cfg(Some(2999), None), (SimTime(0), SimTime::MAX));
        let mut rng = Rng::new(1);
        l.arrive(SimTime(0), pkt(0), &mut rng);
        assert_eq!(l.arrive(SimTime(0), pkt(1), &mut rng), Arrival::Queued);
        assert_eq!(l.arrive(SimTime(0), pkt(2), &mut rng), Arrival::Dropped); // 3000 > 2999
        assert_eq!(l.queue_bytes(), 1500);
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
}
