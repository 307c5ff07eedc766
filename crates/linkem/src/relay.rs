//! The AF_PACKET relay: frames arriving on interface `a` leave on `b` (forward data) and
//! vice versa (their ACKs, and reverse-direction data), each after its class's delay, the
//! direction's optional user-space bottleneck (`queue` / `rev_queue`) and loss (`loss` /
//! `rev_loss`). Stats are printed as one JSON object per line on stdout.

use std::io::{self, Write};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;

use crate::config::{parse_ipv4, Config};
use crate::link::{Counters, Link};
use crate::sys::{self, PacketSocket, VNET_HDR_LEN};

/// Frame buffers recycled through a free list: no allocation per packet once warm.
struct Pool {
    bufs: Vec<Box<[u8]>>,
    free: Vec<u32>,
    size: usize,
}

impl Pool {
    fn get(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.bufs.push(vec![0u8; self.size].into_boxed_slice());
            (self.bufs.len() - 1) as u32
        })
    }
    fn put(&mut self, i: u32) {
        self.free.push(i);
    }
}

/// Lateness of releases relative to their due time, with a log2 histogram in µs.
#[derive(Default, Clone)]
pub struct Lateness {
    pub n: u64,
    pub sum_ns: u128,
    pub max_ns: i64,
    pub over_1ms: u64,
    pub hist_us_log2: [u64; 24],
}

impl Lateness {
    pub fn add(&mut self, late_ns: i64) {
        let l = late_ns.max(0);
        self.n += 1;
        self.sum_ns += l as u128;
        self.max_ns = self.max_ns.max(l);
        if l > 1_000_000 {
            self.over_1ms += 1;
        }
        let us = (l / 1000) as u64;
        let b = if us == 0 {
            0
        } else {
            (64 - us.leading_zeros()) as usize
        };
        self.hist_us_log2[b.min(23)] += 1;
    }
    pub fn merge(&mut self, o: &Lateness) {
        self.n += o.n;
        self.sum_ns += o.sum_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
        self.over_1ms += o.over_1ms;
        for (a, b) in self.hist_us_log2.iter_mut().zip(o.hist_us_log2.iter()) {
            *a += b;
        }
    }
    pub fn mean_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.n as f64
        }
    }
    /// Upper edge (µs) of the histogram bucket holding the q-quantile.
    pub fn quantile_us(&self, q: f64) -> u64 {
        let target = (q * self.n as f64).ceil() as u64;
        let mut acc = 0;
        for (b, &c) in self.hist_us_log2.iter().enumerate() {
            acc += c;
            if acc >= target && c > 0 {
                return if b == 0 { 1 } else { 1u64 << b };
            }
        }
        0
    }
}

/// A class's port table in the delay lines: (base port, entries, index of its first line,
/// keyed on the far end's port).
type PortLines = (u16, usize, usize, bool);

#[derive(Default)]
struct Classes {
    nets: Vec<(u32, u32)>, // (network, mask)
    /// Per class, its per-port delay lines (lines after the zero-delay class's).
    ports: Vec<Option<PortLines>>,
}

impl Classes {
    /// Class of an Ethernet frame by its IPv4 source (`by_src`) or destination address;
    /// everything else (ARP, non-matching) falls into the last, zero-delay class.
    /// A class with a port table sends a TCP segment whose source (`by_src`) or
    /// destination port the table covers to that port's own delay line.
    fn classify(&self, frame: &[u8], by_src: bool) -> usize {
        if frame.len() >= 34 && frame[12] == 0x08 && frame[13] == 0x00 {
            let o = if by_src { 26 } else { 30 };
            let addr = u32::from_be_bytes([frame[o], frame[o + 1], frame[o + 2], frame[o + 3]]);
            for (i, &(net, mask)) in self.nets.iter().enumerate() {
                if addr & mask == net {
                    return self.port_line(i, frame, by_src).unwrap_or(i);
                }
            }
        }
        self.nets.len()
    }

    fn port_line(&self, class: usize, frame: &[u8], by_src: bool) -> Option<usize> {
        let (base, n, first, far) = (*self.ports.get(class)?)?;
        // the class's own side's port is on the same end as its address; `far`: the other
        let port = tcp_port(frame, by_src != far)?;
        let i = usize::from(port.checked_sub(base)?);
        (i < n).then_some(first + i)
    }
}

/// The TCP source (`src`) or destination port of an IPv4 frame; None for other frames and
/// for non-first fragments (which carry no TCP header).
fn tcp_port(frame: &[u8], src: bool) -> Option<u16> {
    if frame.len() < 34 || frame[12] != 0x08 || frame[13] != 0x00 || frame[23] != 6 {
        return None;
    }
    if u16::from_be_bytes([frame[20], frame[21]]) & 0x1fff != 0 {
        return None;
    }
    let o = 14 + usize::from(frame[14] & 0x0f) * 4 + if src { 0 } else { 2 };
    Some(u16::from_be_bytes([*frame.get(o)?, *frame.get(o + 1)?]))
}

/// The relay's address classes (first match) and the delay lines' one-way delays per
/// direction: the classes', the zero-delay class's, then every port table's entries.
fn classes_and_delays(cfg: &Config) -> (Classes, Vec<i64>, Vec<i64>) {
    let mut cl = Classes::default();
    let mut fwd: Vec<i64> = cfg.classes.iter().map(|c| c.fwd_delay_ns).collect();
    let mut rev: Vec<i64> = cfg.classes.iter().map(|c| c.rev_delay_ns).collect();
    fwd.push(0);
    rev.push(0);
    for c in &cfg.classes {
        let mask = if c.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - c.prefix as u32)
        };
        cl.nets.push((parse_ipv4(&c.net).unwrap_or(0) & mask, mask));
        cl.ports.push(c.ports.as_ref().map(|p| {
            let first = fwd.len();
            fwd.extend(&p.fwd_delay_ns);
            rev.extend(&p.rev_delay_ns);
            (p.base, p.fwd_delay_ns.len(), first, p.far)
        }));
    }
    (cl, fwd, rev)
}

/// An IPv4 TCP segment without payload with the ACK flag and neither SYN, FIN nor RST:
/// a pure acknowledgement (what the simulator counts as an ACK frame).
fn is_pure_ack(frame: &[u8]) -> bool {
    if frame.len() < 34 || frame[12] != 0x08 || frame[13] != 0x00 || frame[23] != 6 {
        return false;
    }
    let ihl = usize::from(frame[14] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([frame[16], frame[17]]));
    let tcp = 14 + ihl;
    if frame.len() < tcp + 14 {
        return false;
    }
    let doff = usize::from(frame[tcp + 12] >> 4) * 4;
    let flags = frame[tcp + 13];
    let (fin, syn, rst, ack) = (0x01, 0x02, 0x04, 0x10);
    total == ihl + doff && flags & ack != 0 && flags & (fin | syn | rst) == 0
}

fn counters_json(c: &Counters, backlog: (u64, u64), in_flight: usize) -> serde_json::Value {
    json!({
        "rx_pkts": c.rx_pkts, "rx_bytes": c.rx_bytes, "tx_pkts": c.tx_pkts, "tx_bytes": c.tx_bytes,
        "loss_drops": c.loss_drops, "queue_drops": c.queue_drops, "red_drops": c.red_drops,
        "ack_drops": c.ack_drops,
        "queue_bytes": backlog.0, "queue_pkts": backlog.1, "in_flight": in_flight,
    })
}

/// Upper bound of the early wake-up (and so of the spin per wake-up).
const MAX_LEAD_NS: i64 = 200_000;

/// Sleeps longer than this wake from deeper idle states and are learnt separately.
const LONG_SLEEP_NS: i64 = 1_000_000;

/// Learns how late timed wake-ups arrive, separately for short and long sleeps: after a
/// long idle period (an isolated packet, e.g. an RTT probe or an application-limited
/// flow) the CPU wakes from a deeper idle state — on a virtual machine the host
/// reschedules the virtual CPU — and is later, and scattered. Per class: an EWMA of the
/// observed latency and of its absolute deviation (gain 1/16, and 1/n over the first 16
/// wake-ups so one idle stretch of a few packets is enough to learn it). The latency is
/// measured from the requested time, so it does not depend on the lead itself.
/// The lead is the mean for short sleeps (frequent: every extra µs of spin costs CPU)
/// and mean + 2 deviations for long ones (rare: the spin is cheap, a late release is a
/// longer path).
#[derive(Default)]
struct Waker {
    n: [u32; 2],
    mean_ns: [f64; 2],
    dev_ns: [f64; 2],
}

impl Waker {
    fn class(sleep_ns: i64) -> usize {
        usize::from(sleep_ns > LONG_SLEEP_NS)
    }
    fn observe(&mut self, sleep_ns: i64, latency_ns: i64) {
        let c = Self::class(sleep_ns);
        let x = latency_ns.clamp(0, MAX_LEAD_NS) as f64;
        self.n[c] = self.n[c].saturating_add(1);
        let g = 1.0 / f64::from(self.n[c].min(16));
        self.dev_ns[c] += ((x - self.mean_ns[c]).abs() - self.dev_ns[c]) * g;
        self.mean_ns[c] += (x - self.mean_ns[c]) * g;
    }
    fn lead_ns(&self, sleep_ns: i64) -> i64 {
        let c = Self::class(sleep_ns);
        let lead = self.mean_ns[c] + if c == 1 { 2.0 * self.dev_ns[c] } else { 0.0 };
        (lead as i64).clamp(0, MAX_LEAD_NS)
    }
}

/// What one direction's thread publishes for the stats printer.
#[derive(Default, Clone)]
struct DirSnapshot {
    /// When the snapshot was taken (ns since the relay started).
    t_ns: i64,
    counters: Counters,
    backlog: (u64, u64),
    in_flight: usize,
    late: Lateness,
    send_errors: u64,
    /// Longest single send(2): it runs the downstream namespaces' receive path (softirq).
    send_max_ns: i64,
    /// Time from the kernel's receive timestamp to our recvmsg (how late the kernel
    /// handed packets over; part of the lateness when a packet is due soon after).
    rx_lag: Lateness,
}

fn snapshot_json(s: &DirSnapshot) -> serde_json::Value {
    let mut v = counters_json(&s.counters, s.backlog, s.in_flight);
    v["send_errors"] = json!(s.send_errors);
    v["send_max_ns"] = json!(s.send_max_ns);
    v["t_ns"] = json!(s.t_ns);
    v["rx_lag_mean_ns"] = json!(s.rx_lag.mean_ns());
    v["rx_lag_max_ns"] = json!(s.rx_lag.max_ns);
    v["rx_lag_over_1ms"] = json!(s.rx_lag.over_1ms);
    v
}

fn late_json(l: &Lateness) -> serde_json::Value {
    json!({"n": l.n, "mean_ns": l.mean_ns(), "max_ns": l.max_ns, "over_1ms": l.over_1ms,
           "p99_us": l.quantile_us(0.99), "p999_us": l.quantile_us(0.999), "hist_us_log2": l.hist_us_log2.to_vec()})
}

/// One direction: receive on `rx`, emulate, release on `tx`. Runs until a stop signal.
/// Each direction has its own thread, pool and link, so the work a release triggers
/// downstream (the kernel runs the next namespaces' receive path inside send(2)) in one
/// direction never delays releases in the other.
/// The fixed wiring of one direction.
struct Dir<'a> {
    rx: &'a PacketSocket,
    tx: &'a PacketSocket,
    /// Classify by IPv4 source (data direction) or destination (ACK direction).
    by_src: bool,
    shared: &'a Mutex<DirSnapshot>,
}

fn direction(
    dir: Dir<'_>,
    mut link: Link<u32>,
    classes: &Classes,
    cfg: &Config,
    t0: i64,
) -> io::Result<()> {
    let Dir {
        rx,
        tx,
        by_src,
        shared,
    } = dir;
    if cfg.rt_priority > 0 {
        sys::set_realtime(cfg.rt_priority);
    }
    sys::set_min_timer_slack();
    let mut pool = Pool {
        bufs: Vec::new(),
        free: Vec::new(),
        size: cfg.max_frame + VNET_HDR_LEN,
    };
    let mut lens: Vec<u32> = Vec::new();
    let mut snap = DirSnapshot::default();
    // Publish often: the stats printer reads the latest snapshot, and each snapshot
    // carries its own time, so interval rates are computed over the right span.
    let publish_every = (cfg.stats_interval_ms.max(1) * 1_000_000) as i64 / 10;
    let mut next_publish = sys::now_ns() + publish_every;
    let mut blocked = false;
    let mut waker = Waker::default();
    let fds = [rx.raw()];
    let result = loop {
        if sys::stop_requested() {
            break Ok(());
        }
        let now = sys::now_ns();
        // Wake `lead` ns before the next release (lead = the timer's typical wake-up
        // latency, learnt below) and spin the rest, so releases are not systematically
        // late by the wake-up latency. The spin is at most `lead` (≤ MAX_LEAD_NS).
        let pkt = link.next_event();
        let lead = pkt.map_or(0, |t| waker.lead_ns(t - now));
        let mut next = next_publish;
        if let Some(t) = pkt {
            next = next.min(t - lead);
        }
        if blocked {
            next = next.min(now + 20_000);
        }
        if next > now {
            match sys::poll_readable(&fds, Some(next - now)) {
                Err(e) => break Err(e),
                Ok(0) => {
                    if let Some(t) = pkt {
                        if t - lead == next {
                            let woke = sys::now_ns();
                            waker.observe(t - now, woke - next);
                            while sys::now_ns() < t {
                                std::hint::spin_loop();
                            }
                        }
                    }
                }
                Ok(_) => {}
            }
        }
        // Receive a bounded batch so releases are not starved by a flood.
        for _ in 0..64 {
            let i = pool.get();
            let buf = &mut pool.bufs[i as usize];
            match rx.recv(buf) {
                Err(e) => return Err(e),
                Ok(None) => {
                    pool.put(i);
                    break;
                }
                Ok(Some((n, ts))) => {
                    snap.rx_lag.add(sys::now_ns() - ts);
                    let frame = &buf[VNET_HDR_LEN.min(n)..n];
                    let class = classes.classify(frame, by_src);
                    let flen = frame.len() as u32;
                    if lens.len() <= i as usize {
                        lens.resize(i as usize + 1, 0);
                    }
                    lens[i as usize] = n as u32;
                    let ack = is_pure_ack(frame);
                    if let Some(h) = link.arrive_frame(ts, i, flen, class, ack) {
                        pool.put(h);
                    }
                }
            }
        }
        // Release everything that is due.
        blocked = false;
        let now = sys::now_ns();
        link.advance(now, &mut |h| pool.put(h));
        while let Some(p) = link.pop_due(now) {
            let frame = &pool.bufs[p.1 as usize][..lens[p.1 as usize] as usize];
            // Lateness is taken when the frame is handed to the kernel.
            let t_send = sys::now_ns();
            let sent = tx.send(frame);
            snap.send_max_ns = snap.send_max_ns.max(sys::now_ns() - t_send);
            match sent {
                Ok(true) => {
                    snap.late.add(t_send - p.0);
                    pool.put(p.1);
                }
                Ok(false) => {
                    link.unpop(p);
                    blocked = true;
                    break;
                }
                Err(_) => {
                    snap.send_errors += 1;
                    pool.put(p.1);
                }
            }
        }
        if sys::now_ns() >= next_publish {
            snap.t_ns = sys::now_ns() - t0;
            snap.counters = link.counters;
            snap.backlog = link.backlog();
            snap.in_flight = link.in_flight();
            *shared.lock().unwrap_or_else(|e| e.into_inner()) = snap.clone();
            next_publish = sys::now_ns() + publish_every;
        }
    };
    snap.t_ns = sys::now_ns() - t0;
    snap.counters = link.counters;
    snap.backlog = link.backlog();
    snap.in_flight = link.in_flight();
    *shared.lock().unwrap_or_else(|e| e.into_inner()) = snap;
    result
}

pub fn run(cfg: &Config) -> io::Result<()> {
    sys::die_with_parent();
    sys::install_stop_handlers();
    sys::set_min_timer_slack();
    let sock_a = PacketSocket::open(&cfg.a)?;
    let sock_b = PacketSocket::open(&cfg.b)?;
    let (classes, fwd_delays, rev_delays) = classes_and_delays(cfg);
    // a → b carries the forward data; b → a their ACKs and, with a reverse queue, the
    // reverse flows' data: each direction has its own bottleneck and loss.
    // the classes and the zero-delay class have a FIFO line each; per-port delays share
    // one release-time heap
    let fifo = cfg.classes.len() + 1;
    let data =
        Link::new(fwd_delays, cfg.loss, cfg.seed, cfg.queue.as_ref()).with_fifo_classes(fifo);
    let acks = Link::new(
        rev_delays,
        cfg.rev_loss,
        cfg.seed.wrapping_add(1),
        cfg.rev_queue.as_ref(),
    )
    .with_fifo_classes(fifo);
    let shared = [
        Mutex::new(DirSnapshot::default()),
        Mutex::new(DirSnapshot::default()),
    ];
    let t0 = sys::now_ns();
    let rt = cfg.rt_priority > 0 && sys::set_realtime(cfg.rt_priority);
    let out = io::stdout();
    {
        let mut o = out.lock();
        writeln!(
            o,
            "{}",
            json!({"ready": true, "realtime": rt, "t0_ns": t0, "a": cfg.a, "b": cfg.b})
        )?;
        o.flush()?;
    }
    let emit = |fin: bool| -> io::Result<()> {
        let a = shared[0].lock().unwrap_or_else(|e| e.into_inner()).clone();
        let b = shared[1].lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut late = a.late.clone();
        late.merge(&b.late);
        let v = json!({
            "t_ns": sys::now_ns() - t0, "final": fin,
            "a2b": snapshot_json(&a), "b2a": snapshot_json(&b),
            "late": late_json(&late), "late_a2b": late_json(&a.late), "late_b2a": late_json(&b.late),
            "send_errors": a.send_errors + b.send_errors,
        });
        let mut o = out.lock();
        writeln!(o, "{v}")?;
        o.flush()
    };
    let every = Duration::from_millis(cfg.stats_interval_ms.max(1));
    let res: io::Result<()> = std::thread::scope(|s| {
        let ha = s.spawn(|| {
            direction(
                Dir {
                    rx: &sock_a,
                    tx: &sock_b,
                    by_src: true,
                    shared: &shared[0],
                },
                data,
                &classes,
                cfg,
                t0,
            )
        });
        let hb = s.spawn(|| {
            direction(
                Dir {
                    rx: &sock_b,
                    tx: &sock_a,
                    by_src: false,
                    shared: &shared[1],
                },
                acks,
                &classes,
                cfg,
                t0,
            )
        });
        while !sys::stop_requested() && !ha.is_finished() && !hb.is_finished() {
            std::thread::sleep(every);
            emit(false)?;
        }
        // A direction that failed stops the other one too.
        sys::request_stop();
        let ra = ha
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("data thread panicked")));
        let rb = hb
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("ACK thread panicked")));
        ra.and(rb)
    });
    emit(true)?;
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[12] = 0x08;
        f[26..30].copy_from_slice(&src);
        f[30..34].copy_from_slice(&dst);
        f
    }

    #[test]
    fn classify_by_source_on_data_and_destination_on_acks() {
        let c = Classes {
            nets: vec![(0x0a01_0000, 0xffff_ff00), (0x0a01_0100, 0xffff_ff00)],
            ports: vec![],
        };
        let f = frame([10, 1, 1, 2], [10, 2, 1, 2]);
        assert_eq!(c.classify(&f, true), 1);
        let ack = frame([10, 2, 0, 2], [10, 1, 0, 2]);
        assert_eq!(c.classify(&ack, false), 0);
        let other = frame([10, 9, 0, 2], [10, 9, 0, 3]);
        assert_eq!(
            c.classify(&other, true),
            2,
            "unknown addresses take the zero-delay class"
        );
        let mut arp = f.clone();
        arp[13] = 0x06;
        assert_eq!(c.classify(&arp, true), 2);
    }

    fn tcp(payload: usize, flags: u8) -> Vec<u8> {
        let mut f = frame([10, 2, 0, 2], [10, 1, 0, 2]);
        f.resize(14 + 20 + 32 + payload, 0);
        f[14] = 0x45; // IPv4, 20-byte header
        f[16..18].copy_from_slice(&((20 + 32 + payload) as u16).to_be_bytes());
        f[23] = 6;
        f[14 + 20 + 12] = 8 << 4; // 32-byte TCP header (timestamps)
        f[14 + 20 + 13] = flags;
        f
    }

    fn tcp_ports(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
        let mut f = frame(src, dst);
        f[14] = 0x45;
        f[23] = 6;
        f[34..36].copy_from_slice(&sport.to_be_bytes());
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f
    }

    #[test]
    fn port_tables_give_each_covered_port_its_own_delay_line() {
        let cfg: Config = serde_json::from_str(
            r#"{"a": "a", "b": "b", "classes": [
                {"net": "10.1.5.0", "prefix": 24, "fwd_delay_ns": 5, "rev_delay_ns": 6,
                 "ports": {"base": 20000, "fwd_delay_ns": [10, 20], "rev_delay_ns": [11, 21]}},
                {"net": "10.1.0.0", "prefix": 16, "fwd_delay_ns": 1, "rev_delay_ns": 2}]}"#,
        )
        .unwrap();
        let (c, fwd, rev) = classes_and_delays(&cfg);
        assert_eq!(fwd, vec![5, 1, 0, 10, 20]);
        assert_eq!(rev, vec![6, 2, 0, 11, 21]);
        let (s, r) = ([10, 1, 5, 2], [10, 2, 5, 2]);
        // data: by source address and port
        assert_eq!(c.classify(&tcp_ports(s, r, 20001, 6205), true), 4);
        assert_eq!(c.classify(&tcp_ports(s, r, 20000, 6205), true), 3);
        // ACKs: by destination address and port
        assert_eq!(c.classify(&tcp_ports(r, s, 6205, 20001), false), 4);
        // a port the table does not cover (the RTT probe's ephemeral port): the class's delay
        assert_eq!(c.classify(&tcp_ports(s, r, 40000, 6205), true), 0);
        assert_eq!(c.classify(&tcp_ports(s, r, 20002, 6205), true), 0);
        // the port table belongs to its class only
        assert_eq!(
            c.classify(&tcp_ports([10, 1, 6, 2], r, 20001, 6205), true),
            1
        );
        // not TCP, or a non-first fragment: the class's delay
        let mut udp = tcp_ports(s, r, 20001, 6205);
        udp[23] = 17;
        assert_eq!(c.classify(&udp, true), 0);
        let mut frag = tcp_ports(s, r, 20001, 6205);
        frag[21] = 1;
        assert_eq!(c.classify(&frag, true), 0);
    }

    #[test]
    fn a_far_port_table_keys_on_the_other_ends_port() {
        // a reverse entry: its clients (10.2.5.2, ports 20000 + k) open connections to one
        // server port (6205) on the class's side; the table must key on the client's port
        let cfg: Config = serde_json::from_str(
            r#"{"a": "a", "b": "b", "classes": [
                {"net": "10.1.5.0", "prefix": 24, "fwd_delay_ns": 5, "rev_delay_ns": 6,
                 "ports": {"base": 20000, "fwd_delay_ns": [10, 20], "rev_delay_ns": [11, 21],
                           "far": true}}]}"#,
        )
        .unwrap();
        let (c, _, _) = classes_and_delays(&cfg);
        let (s, r) = ([10, 1, 5, 2], [10, 2, 5, 2]);
        // b → a (the reverse data): class by destination address, port by source
        assert_eq!(c.classify(&tcp_ports(r, s, 20001, 6205), false), 3);
        assert_eq!(c.classify(&tcp_ports(r, s, 20000, 6205), false), 2);
        // a → b (its ACKs): class by source address, port by destination
        assert_eq!(c.classify(&tcp_ports(s, r, 6205, 20001), true), 3);
        // the class side's own port is not what a far table looks at
        assert_eq!(c.classify(&tcp_ports(s, r, 20001, 6205), true), 0);
    }

    #[test]
    fn pure_acks_are_told_from_data_and_handshakes() {
        assert!(is_pure_ack(&tcp(0, 0x10)));
        assert!(!is_pure_ack(&tcp(1448, 0x10)), "data");
        assert!(!is_pure_ack(&tcp(0, 0x12)), "SYN-ACK");
        assert!(!is_pure_ack(&tcp(0, 0x11)), "FIN-ACK");
        let mut udp = tcp(0, 0x10);
        udp[23] = 17;
        assert!(!is_pure_ack(&udp));
        assert!(!is_pure_ack(&frame([10, 2, 0, 2], [10, 1, 0, 2])[..20]));
    }

    #[test]
    fn waker_learns_the_mean_wakeup_latency_within_bounds() {
        let mut w = Waker::default();
        let (short, long) = (100_000, 50_000_000);
        for _ in 0..200 {
            w.observe(short, 40_000);
            w.observe(long, 90_000);
        }
        assert!((w.lead_ns(short) - 40_000).abs() < 100);
        assert!(
            (w.lead_ns(long) - 90_000).abs() < 100,
            "long sleeps learnt apart"
        );
        for _ in 0..200 {
            w.observe(short, 5_000_000); // a 5 ms outlier burst is clamped
        }
        assert!(w.lead_ns(short) >= MAX_LEAD_NS - 10 && w.lead_ns(short) <= MAX_LEAD_NS);
    }

    #[test]
    fn waker_covers_scattered_long_wakeups_and_learns_from_the_first_ones() {
        let long = 10_000_000;
        // one wake-up is enough to lead by at least its latency (no slow warm-up)
        let mut w = Waker::default();
        w.observe(long, 90_000);
        assert!(w.lead_ns(long) >= 90_000);
        assert_eq!(w.lead_ns(100_000), 0, "short sleeps learn on their own");
        // long wake-ups alternating 60 and 100 µs late: mean 80, mean deviation 20, so the
        // lead is 80 + 2 × 20 = 120 µs (the later half released on time, not 20 µs late)
        let mut w = Waker::default();
        for i in 0..400 {
            w.observe(long, if i % 2 == 0 { 60_000 } else { 100_000 });
        }
        assert!(
            (w.lead_ns(long) - 120_000).abs() < 2_000,
            "{}",
            w.lead_ns(long)
        );
        // short sleeps with the same scatter lead by the mean only (spin costs CPU there)
        let mut w = Waker::default();
        for i in 0..400 {
            w.observe(100_000, if i % 2 == 0 { 6_000 } else { 10_000 });
        }
        assert!(
            (w.lead_ns(100_000) - 8_000).abs() < 300,
            "{}",
            w.lead_ns(100_000)
        );
    }

    #[test]
    fn lateness_stats() {
        let mut l = Lateness::default();
        for x in [0, 10_000, 20_000, 2_000_000] {
            l.add(x);
        }
        assert_eq!(l.n, 4);
        assert_eq!(l.max_ns, 2_000_000);
        assert_eq!(l.over_1ms, 1);
        assert!((l.mean_ns() - 507_500.0).abs() < 1e-6);
        assert_eq!(l.quantile_us(0.5), 16); // 10 µs lies in [8, 16)
    }
}
