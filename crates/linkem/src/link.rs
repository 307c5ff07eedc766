//! The emulation core of one direction, free of I/O so it can be tested with plain numbers.
//!
//! A packet arriving at time `t` (the kernel's receive timestamp) goes through, in order:
//! 1. (optional) the user-space bottleneck: RED or drop-tail admission, then FIFO
//!    serialisation at the configured rate;
//! 2. Bernoulli loss (data direction only);
//! 3. the delay line of its class, which releases it at `departure + delay`.
//!
//! Packets are opaque handles `H` (buffer indices in the relay); a dropped handle is given
//! back to the caller so its buffer can be reused. All times are integer nanoseconds.

use std::collections::{BinaryHeap, VecDeque};

use tcpfair_sim::aqm::Red;
use tcpfair_sim::rng::Rng;
use tcpfair_sim::units::SimTime;

use crate::config::Queue;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub rx_pkts: u64,
    pub rx_bytes: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub loss_drops: u64,
    pub queue_drops: u64,
    pub red_drops: u64,
    /// Pure ACKs among the drops above (queue, RED or loss), as the relay marked them.
    pub ack_drops: u64,
}

struct Waiting<H> {
    h: H,
    len: u32,
    class: u16,
    arrival: i64,
    ack: bool,
}

/// Kernel timestamps (ns) as the simulator's time type; they are never negative.
fn ns(t: i64) -> SimTime {
    SimTime(t.max(0) as u64)
}

struct Bottleneck<H> {
    rate_bps: u64,
    limit_bytes: Option<u64>,
    limit_pkts: Option<u64>,
    fifo: VecDeque<Waiting<H>>,
    bytes: u64,
    /// When the head packet finishes serialisation (None: not computed yet / empty).
    head_finish: Option<i64>,
    /// When the link becomes free (end of the previous transmission).
    link_free: i64,
    /// The simulator's RED (crates/sim/src/aqm.rs), so both backends drop alike.
    red: Option<Red>,
}

impl<H> Bottleneck<H> {
    fn tx_time(&self, len: u32) -> i64 {
        ((len as u128 * 8 * 1_000_000_000) / self.rate_bps as u128) as i64
    }
}

/// A packet of a class without a FIFO line of its own (a per-port delay), in the shared
/// release-time heap: ordered by release time, then arrival (`seq`), earliest first.
struct Held<H> {
    due: i64,
    seq: u64,
    h: H,
    len: u32,
    class: usize,
}

impl<H> PartialEq for Held<H> {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl<H> Eq for Held<H> {}
impl<H> PartialOrd for Held<H> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<H> Ord for Held<H> {
    /// Reversed, so `BinaryHeap` (a max-heap) pops the earliest release first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.due, o.seq).cmp(&(self.due, self.seq))
    }
}

/// Put a packet of `class` into its FIFO line, or the heap for classes past the lines.
fn hold_in<H>(
    lines: &mut [VecDeque<(i64, H, u32)>],
    heap: &mut BinaryHeap<Held<H>>,
    seq: &mut u64,
    due: i64,
    h: H,
    len: u32,
    class: usize,
) {
    if let Some(line) = lines.get_mut(class) {
        line.push_back((due, h, len));
    } else {
        *seq += 1;
        heap.push(Held {
            due,
            seq: *seq,
            h,
            len,
            class,
        });
    }
}

pub struct Link<H> {
    /// Per-class delay lines; each is FIFO because all its packets have the same delay.
    lines: Vec<VecDeque<(i64, H, u32)>>,
    /// Classes from `lines.len()` on (thousands of per-port delays): one heap, so finding
    /// the next release costs O(log n), not a scan of a line per class.
    heap: BinaryHeap<Held<H>>,
    seq: u64,
    delays: Vec<i64>,
    loss: f64,
    rng: Rng,
    queue: Option<Bottleneck<H>>,
    pub counters: Counters,
}

impl<H> Link<H> {
    /// `delays[c]` is the one-way delay of class `c` (ns).
    pub fn new(delays: Vec<i64>, loss: f64, seed: u64, queue: Option<&Queue>) -> Self {
        let queue = queue.map(|q| {
            let s_ns = q.mean_pkt_bytes as f64 * 8e9 / q.rate_bps as f64;
            Bottleneck {
                rate_bps: q.rate_bps,
                limit_bytes: q.limit_bytes,
                limit_pkts: q.limit_pkts,
                fifo: VecDeque::new(),
                bytes: 0,
                head_finish: None,
                link_free: i64::MIN,
                red: q.red.as_ref().map(|p| {
                    // Byte mode scales p_b by packet size / mean_pkt_bytes (the frame of a full MTU).
                    Red::new(
                        p.min_th,
                        p.max_th,
                        p.max_p,
                        p.wq,
                        p.bytes,
                        p.gentle,
                        SimTime(s_ns as u64),
                        q.mean_pkt_bytes,
                    )
                }),
            }
        });
        Link {
            lines: delays.iter().map(|_| VecDeque::new()).collect(),
            heap: BinaryHeap::new(),
            seq: 0,
            delays,
            loss,
            rng: Rng::new(seed),
            queue,
            counters: Counters::default(),
        }
    }

    /// Only classes below `n` get a FIFO line; the others share the release-time heap.
    pub fn with_fifo_classes(mut self, n: usize) -> Self {
        self.lines.truncate(n);
        self
    }

    /// Hold a packet of `class` until `due`.
    fn hold(&mut self, due: i64, h: H, len: u32, class: usize) {
        if class < self.lines.len() {
            self.lines[class].push_back((due, h, len));
        } else {
            self.seq += 1;
            let seq = self.seq;
            self.heap.push(Held {
                due,
                seq,
                h,
                len,
                class,
            });
        }
    }

    /// Queue occupancy (bytes, packets) of the user-space bottleneck.
    pub fn backlog(&self) -> (u64, u64) {
        self.queue
            .as_ref()
            .map_or((0, 0), |q| (q.bytes, q.fifo.len() as u64))
    }

    /// Packets held in delay lines.
    pub fn in_flight(&self) -> usize {
        self.lines.iter().map(|l| l.len()).sum::<usize>() + self.heap.len()
    }

    /// A packet arrived at `t`. Returns the handle if the packet was dropped.
    pub fn arrive(&mut self, t: i64, h: H, len: u32, class: usize) -> Option<H> {
        self.arrive_frame(t, h, len, class, false)
    }

    /// As `arrive`, for a frame the caller knows to be a pure ACK or not (`ack`): a
    /// dropped ACK is also counted in `ack_drops`.
    pub fn arrive_frame(&mut self, t: i64, h: H, len: u32, class: usize, ack: bool) -> Option<H> {
        let dropped = self.admit(t, h, len, class, ack);
        if dropped.is_some() && ack {
            self.counters.ack_drops += 1;
        }
        dropped
    }

    fn admit(&mut self, t: i64, h: H, len: u32, class: usize, ack: bool) -> Option<H> {
        self.counters.rx_pkts += 1;
        self.counters.rx_bytes += len as u64;
        let Some(q) = self.queue.as_mut() else {
            if self.rng.bernoulli(self.loss) {
                self.counters.loss_drops += 1;
                return Some(h);
            }
            self.hold(t + self.delays[class], h, len, class);
            return None;
        };
        if let Some(red) = q.red.as_mut() {
            let inst = if red.bytes {
                q.bytes as f64
            } else {
                q.fifo.len() as f64
            };
            if red.should_drop(ns(t), inst, len, &mut self.rng) {
                self.counters.red_drops += 1;
                return Some(h);
            }
        }
        let over_bytes = q.limit_bytes.is_some_and(|l| q.bytes + len as u64 > l);
        let over_pkts = q.limit_pkts.is_some_and(|l| q.fifo.len() as u64 + 1 > l);
        if over_bytes || over_pkts {
            self.counters.queue_drops += 1;
            return Some(h);
        }
        q.bytes += len as u64;
        q.fifo.push_back(Waiting {
            h,
            len,
            class: class as u16,
            arrival: t,
            ack,
        });
        if let Some(r) = q.red.as_mut() {
            r.on_busy();
        }
        None
    }

    /// Move packets whose serialisation finished by `now` from the bottleneck into their
    /// delay lines (applying loss there). Dropped handles go to `dropped`.
    pub fn advance(&mut self, now: i64, dropped: &mut impl FnMut(H)) {
        let Some(q) = self.queue.as_mut() else { return };
        while let Some(head) = q.fifo.front() {
            let finish = match q.head_finish {
                Some(f) => f,
                None => {
                    let f = q.link_free.max(head.arrival) + q.tx_time(head.len);
                    q.head_finish = Some(f);
                    f
                }
            };
            if finish > now {
                break;
            }
            let w = q.fifo.pop_front().expect("head exists");
            q.bytes -= w.len as u64;
            q.link_free = finish;
            q.head_finish = None;
            if q.fifo.is_empty() {
                if let Some(r) = q.red.as_mut() {
                    r.on_idle(ns(finish));
                }
            }
            if self.rng.bernoulli(self.loss) {
                self.counters.loss_drops += 1;
                self.counters.ack_drops += u64::from(w.ack);
                dropped(w.h);
                continue;
            }
            let c = w.class as usize;
            let due = finish + self.delays[c];
            hold_in(
                &mut self.lines,
                &mut self.heap,
                &mut self.seq,
                due,
                w.h,
                w.len,
                c,
            );
        }
    }

    /// Earliest time something happens (a delay line releases or the queue head finishes).
    pub fn next_event(&mut self) -> Option<i64> {
        let mut t = self
            .lines
            .iter()
            .filter_map(|l| l.front().map(|p| p.0))
            .chain(self.heap.peek().map(|p| p.due))
            .min();
        if let Some(q) = self.queue.as_mut() {
            if let Some(head) = q.fifo.front() {
                let f = *q.head_finish.get_or_insert_with(|| {
                    q.link_free.max(head.arrival)
                        + ((head.len as u128 * 8 * 1_000_000_000) / q.rate_bps as u128) as i64
                });
                t = Some(t.map_or(f, |x| x.min(f)));
            }
        }
        t
    }

    /// The due packet with the earliest release time, if any is due by `now`.
    /// Returns (release time, handle, length, class).
    pub fn pop_due(&mut self, now: i64) -> Option<(i64, H, u32, usize)> {
        let line = self
            .lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.front().map(|p| (i, p.0)))
            .filter(|&(_, due)| due <= now)
            .min_by_key(|&(_, due)| due);
        let held = self.heap.peek().map(|p| p.due).filter(|&due| due <= now);
        let p = match (line, held) {
            (Some((i, due)), h) if h.is_none_or(|h| due <= h) => {
                let p = self.lines[i].pop_front()?;
                (p.0, p.1, p.2, i)
            }
            (_, Some(_)) => {
                let p = self.heap.pop()?;
                (p.due, p.h, p.len, p.class)
            }
            _ => return None,
        };
        self.counters.tx_pkts += 1;
        self.counters.tx_bytes += p.2 as u64;
        Some(p)
    }

    /// Put back a packet the kernel could not take yet (it keeps its release time).
    pub fn unpop(&mut self, p: (i64, H, u32, usize)) {
        self.counters.tx_pkts -= 1;
        self.counters.tx_bytes -= p.2 as u64;
        if p.3 < self.lines.len() {
            self.lines[p.3].push_front((p.0, p.1, p.2));
        } else {
            // seq 0: before every held packet with the same release time, as it was
            let (due, h, len, class) = p;
            self.heap.push(Held {
                due,
                seq: 0,
                h,
                len,
                class,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Red;

    const MS: i64 = 1_000_000;

    fn q(rate: u64, limit_bytes: Option<u64>, red: Option<Red>) -> Queue {
        Queue {
            rate_bps: rate,
            limit_bytes,
            limit_pkts: None,
            red,
            mean_pkt_bytes: 1500,
        }
    }

    #[test]
    fn classes_past_the_fifo_lines_release_in_time_order_from_the_heap() {
        // class 0 a FIFO line (10 ms); classes 1 (30 ms) and 2 (5 ms) in the heap
        let mut l: Link<u32> =
            Link::new(vec![10 * MS, 30 * MS, 5 * MS], 0.0, 1, None).with_fifo_classes(1);
        assert!(l.arrive(0, 1, 100, 1).is_none()); // due 30 ms
        assert!(l.arrive(MS, 2, 100, 2).is_none()); // due 6 ms
        assert!(l.arrive(2 * MS, 3, 100, 0).is_none()); // due 12 ms
        assert!(l.arrive(3 * MS, 4, 100, 2).is_none()); // due 8 ms
        assert!(l.arrive(25 * MS, 5, 100, 2).is_none()); // due 30 ms, after packet 1
        assert_eq!(l.in_flight(), 5);
        assert_eq!(l.next_event(), Some(6 * MS));
        assert!(l.pop_due(6 * MS - 1).is_none());
        let p = l.pop_due(i64::MAX).unwrap();
        assert_eq!(p, (6 * MS, 2, 100, 2));
        l.unpop(p);
        assert_eq!(l.in_flight(), 5);
        let out: Vec<_> = std::iter::from_fn(|| l.pop_due(i64::MAX))
            .map(|p| (p.0 / MS, p.1, p.3))
            .collect();
        assert_eq!(
            out,
            vec![(6, 2, 2), (8, 4, 2), (12, 3, 0), (30, 1, 1), (30, 5, 2)]
        );
        assert_eq!((l.in_flight(), l.next_event()), (0, None));
        assert_eq!(l.counters.tx_pkts, 5);
    }

    #[test]
    fn delay_line_releases_after_its_class_delay() {
        let mut l: Link<u32> = Link::new(vec![10 * MS, 50 * MS], 0.0, 1, None);
        assert!(l.arrive(0, 1, 1500, 1).is_none());
        assert!(l.arrive(1, 2, 1500, 0).is_none());
        assert_eq!(l.next_event(), Some(10 * MS + 1));
        assert!(l.pop_due(10 * MS).is_none());
        assert_eq!(l.pop_due(10 * MS + 1).map(|p| p.1), Some(2));
        assert!(l.pop_due(49 * MS).is_none());
        assert_eq!(l.pop_due(50 * MS), Some((50 * MS, 1, 1500, 1)));
    }

    #[test]
    fn bottleneck_serialises_at_the_configured_rate() {
        // 12 Mbit/s: a 1500-byte packet takes exactly 1 ms.
        let mut l: Link<u32> = Link::new(vec![5 * MS], 0.0, 1, Some(&q(12_000_000, None, None)));
        for i in 0..3 {
            assert!(l.arrive(0, i, 1500, 0).is_none());
        }
        let mut none = |_h: u32| panic!("nothing should drop");
        l.advance(10 * MS, &mut none);
        let out: Vec<_> = std::iter::from_fn(|| l.pop_due(i64::MAX))
            .map(|p| p.0)
            .collect();
        assert_eq!(out, vec![6 * MS, 7 * MS, 8 * MS]);
    }

    #[test]
    fn drop_tail_limit_in_bytes() {
        let mut l: Link<u32> = Link::new(vec![0], 0.0, 1, Some(&q(12_000_000, Some(3000), None)));
        assert!(l.arrive(0, 0, 1500, 0).is_none());
        assert!(l.arrive(0, 1, 1500, 0).is_none());
        assert_eq!(l.arrive(0, 2, 1500, 0), Some(2));
        assert_eq!(l.counters.queue_drops, 1);
        assert_eq!(l.backlog(), (3000, 2));
    }

    #[test]
    fn red_never_drops_below_min_th_and_always_above_max_th() {
        let red = Red {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            wq: 1.0,
            bytes: false,
            gentle: false,
        };
        // wq = 1 makes avg equal the instantaneous queue, so thresholds can be checked exactly.
        let mut l: Link<u32> = Link::new(vec![0], 0.0, 1, Some(&q(1_000, None, Some(red))));
        for i in 0..5 {
            assert!(
                l.arrive(0, i, 100, 0).is_none(),
                "queue {i} < min_th must not drop"
            );
        }
        for i in 5..200 {
            let _ = l.arrive(0, i, 100, 0);
        }
        // Once 15 packets sit in the queue, every arrival is dropped: the queue never exceeds 15.
        assert_eq!(l.backlog().1, 15);
        assert!(l.counters.red_drops > 0);
    }

    #[test]
    fn red_drop_fraction_follows_max_p_in_the_linear_region() {
        // Hold the average at the middle of [min_th, max_th]: pb = max_p / 2 = 0.05.
        // With count incremented before pa = pb/(1 − count·pb) (Fig. 2), the gap between
        // drops is uniform on {1, …, 1/pb − 1} = {1..19}: mean 10, drop fraction 2·pb = 0.1.
        let red = Red {
            min_th: 0.0,
            max_th: 20.0,
            max_p: 0.1,
            wq: 1.0,
            bytes: false,
            gentle: false,
        };
        let mut l: Link<u32> = Link::new(vec![0], 0.0, 9, Some(&q(1_000_000_000, None, Some(red))));
        let mut drops = 0;
        let n = 100_000;
        for i in 0..n {
            // Keep exactly 10 packets queued: arrive, then remove one if above 10.
            if l.arrive(0, i, 100, 0).is_some() {
                drops += 1;
            }
            while l.backlog().1 > 10 {
                let qq = l.queue.as_mut().unwrap();
                let w = qq.fifo.pop_front().unwrap();
                qq.bytes -= w.len as u64;
            }
        }
        let frac = drops as f64 / n as f64;
        let expect = 0.1;
        assert!(
            (frac - expect).abs() < 0.004,
            "drop fraction {frac}, expected ≈ {expect}"
        );
    }

    #[test]
    fn red_average_decays_while_the_queue_is_idle_even_when_arrivals_are_dropped() {
        // 12 Mbit/s, 1500-byte packets: s = 1 ms per packet.
        let red = Red {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            wq: 0.01,
            bytes: false,
            gentle: false,
        };
        let mut l: Link<u32> = Link::new(vec![0], 0.0, 1, Some(&q(12_000_000, None, Some(red))));
        let mut none = |_h: u32| {};
        // a burst of 400 packets at t = 0 drives the average far above max_th
        for i in 0..400 {
            let _ = l.arrive(0, i, 1500, 0);
        }
        l.advance(i64::MAX / 4, &mut none);
        assert_eq!(l.backlog().1, 0);
        let avg0 = l.queue.as_ref().unwrap().red.as_ref().unwrap().avg();
        assert!(avg0 > 15.0, "avg {avg0}");
        // The queue has been idle since it drained; after 1000 packet times (1 s) the
        // average is (1 − 0.01)^1000 ≈ 4.3e-5 of what it was: nothing is dropped.
        let drained = l.queue.as_ref().unwrap().link_free;
        for k in 0..20 {
            let t = drained + 1_000 * MS + k * 10 * MS;
            assert!(
                l.arrive(t, 1000 + k as u32, 1500, 0).is_none(),
                "arrival {k} after idle dropped"
            );
            l.advance(t + 2 * MS, &mut none);
        }
    }

    #[test]
    fn dropped_acks_are_counted_apart_wherever_they_drop() {
        // a 1500-byte buffer holding one full frame: the next two overflow, one an ACK
        let mut l: Link<u32> = Link::new(vec![0], 0.0, 1, Some(&q(12_000_000, Some(1500), None)));
        assert!(l.arrive_frame(0, 0, 1500, 0, false).is_none());
        assert_eq!(l.arrive_frame(0, 1, 66, 0, true), Some(1));
        assert_eq!(l.arrive_frame(0, 2, 1500, 0, false), Some(2));
        assert_eq!((l.counters.queue_drops, l.counters.ack_drops), (2, 1));
        // every packet lost: only the ACKs count as ACK drops
        let mut l: Link<u32> = Link::new(vec![0], 0.999_999_999, 1, None);
        for (i, ack) in [true, false, true].into_iter().enumerate() {
            assert!(l.arrive_frame(0, i as u32, 66, 0, ack).is_some());
        }
        assert_eq!((l.counters.loss_drops, l.counters.ack_drops), (3, 2));
    }

    #[test]
    fn loss_is_bernoulli_at_the_configured_rate() {
        let mut l: Link<u32> = Link::new(vec![0], 0.02, 4, None);
        let n = 100_000u32;
        let dropped = (0..n).filter(|&i| l.arrive(0, i, 100, 0).is_some()).count() as f64;
        let sd = (n as f64 * 0.02 * 0.98).sqrt();
        assert!((dropped - 2000.0).abs() < 4.0 * sd, "dropped {dropped}");
    }
}

#[cfg(test)]
mod cost {
    use super::*;

    /// Not a check: prints the per-packet cost of arrive + next_event + pop_due with
    /// n per-port delays (docs/kernel.md). `cargo test --release -p tcpfair-linkem
    /// per_port_delay_cost -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn per_port_delay_cost() {
        for n in [4usize, 1000, 6000, 12768] {
            let mut l: Link<u32> =
                Link::new(vec![20_000_000; n + 3], 0.0, 1, None).with_fifo_classes(3);
            let pkts = 200_000u32;
            let t0 = std::time::Instant::now();
            let mut now = 0i64;
            for i in 0..pkts {
                now += 240_000; // 1514-byte frames at 50 Mbit/s
                l.arrive(now, i, 1514, 3 + (i as usize * 7) % n);
                let _ = l.next_event();
                while l.pop_due(now).is_some() {}
            }
            let per = t0.elapsed().as_nanos() as f64 / f64::from(pkts);
            println!("{n} port delays: {per:.0} ns per packet");
        }
    }
}
