//! Sampling: every `interval`, one row per started connection (bytes delivered in order
//! since its previous sample — or since its start — cwnd, SRTT, retransmissions, bytes in
//! flight) and one row per bottleneck (queue at the sample time; drops, random losses,
//! ACK drops and transmitted bytes during the interval). Sample times are `k·interval`, `k ≥ 1`, up to
//! the end of the run.

use crate::link::{Bottleneck, IntervalCounters};
use crate::output::{FlowSamples, LinkSamples};
use crate::packet::Wire;
use crate::sim::Flow;
use crate::units::SimTime;

/// The measurement window [from, to) as its start and length, so that "is `t` in it" is
/// one subtraction and one comparison (`t − from` wraps to more than the length for `t`
/// before `from`): the link and the receiver ask it for every packet (session 11).
#[derive(Clone, Copy, Debug)]
pub struct Window {
    from: u64,
    len: u64,
}

impl Window {
    pub fn new((from, to): (SimTime, SimTime)) -> Window {
        Window {
            from: from.0,
            len: to.0.saturating_sub(from.0),
        }
    }

    /// `from <= t < to`.
    #[inline(always)]
    pub fn contains(&self, t: SimTime) -> bool {
        t.0.wrapping_sub(self.from) < self.len
    }
}

pub struct Recorder {
    interval: u64,
    duration: u64,
    k: u64,
    last_delivered: Vec<u64>,
    last_retx: Vec<u64>,
    flows: FlowSamples,
    /// One series per bottleneck: forward, then reverse if there is one.
    links: Vec<LinkSamples>,
}

impl Recorder {
    pub fn new(interval_ns: u64, duration_ns: u64, n_flows: usize, n_links: usize) -> Recorder {
        let n_samples = (duration_ns / interval_ns.max(1)) as usize;
        let rows = n_samples.saturating_mul(n_flows).min(1 << 20);
        let mut flows = FlowSamples::default();
        flows.flow.reserve(rows);
        flows.t_ns.reserve(rows);
        flows.delivered_bytes.reserve(rows);
        flows.cwnd_bytes.reserve(rows);
        flows.srtt_ns.reserve(rows);
        flows.retransmits.reserve(rows);
        flows.inflight_bytes.reserve(rows);
        Recorder {
            interval: interval_ns,
            duration: duration_ns,
            k: 0,
            last_delivered: vec![0; n_flows],
            last_retx: vec![0; n_flows],
            flows,
            links: vec![LinkSamples::default(); n_links],
        }
    }

    /// The next sample time, if it is within the run.
    pub fn next_sample(&mut self) -> Option<SimTime> {
        self.k += 1;
        let t = self.k.checked_mul(self.interval)?;
        (t <= self.duration).then_some(SimTime(t))
    }

    pub fn sample<T: Wire>(&mut self, now: SimTime, flows: &[Flow], links: &mut [Bottleneck<T>]) {
        for (i, fl) in flows.iter().enumerate() {
            if fl.start >= now {
                continue;
            }
            let s = &fl.sender;
            let (d, r, cwnd, srtt, inflight) = match fl.ns2.as_ref() {
                Some(c) => {
                    let mss = c.agent.size as u64;
                    (
                        c.sink.delivered_bytes,
                        c.agent.stats.retransmits,
                        c.cwnd_pkts() * mss,
                        c.srtt().0,
                        c.agent.in_flight() * mss,
                    )
                }
                None => {
                    // The congestion control's copies of the MSS and the smoothed RTT (equal
                    // to the sender's own: set with them, changed nowhere else), read from
                    // the lines `cwnd` shares, not from two more of the sender's (issue 13:
                    // a sample visits every connection, so at 10,000 flows that is 10,000
                    // cache misses fewer per sample).
                    let mss = s.tcp.mss as u64;
                    (
                        fl.rx.delivered_bytes,
                        s.stats().retransmits,
                        s.tcp.cwnd as u64 * mss,
                        s.tcp.srtt.0,
                        s.in_flight() * mss,
                    )
                }
            };
            let f = &mut self.flows;
            f.flow.push(i as u32);
            f.t_ns.push(now.0);
            f.delivered_bytes.push(d - self.last_delivered[i]);
            f.cwnd_bytes.push(cwnd);
            f.srtt_ns.push(srtt);
            f.retransmits.push(r - self.last_retx[i]);
            f.inflight_bytes.push(inflight);
            self.last_delivered[i] = d;
            self.last_retx[i] = r;
        }
        for (link, l) in links.iter_mut().zip(self.links.iter_mut()) {
            let IntervalCounters {
                drops,
                random_losses,
                tx_bytes,
                ack_drops,
            } = std::mem::take(&mut link.interval);
            l.t_ns.push(now.0);
            l.queue_bytes.push(link.queue_bytes());
            l.queue_pkts.push(link.queue_pkts());
            l.drops.push(drops);
            l.random_losses.push(random_losses);
            l.tx_bytes.push(tx_bytes);
            l.ack_drops.push(ack_drops);
        }
    }

    /// The flows' series and each bottleneck's (forward first).
    pub fn into_columns(self) -> (FlowSamples, Vec<LinkSamples>) {
        (self.flows, self.links)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `contains` is `from <= t < to` for every `t`, also for an empty or reversed window
    /// and at the ends of the time range.
    #[test]
    fn window_contains_exactly_from_up_to_to() {
        let ts = [0, 1, 5, 9, 10, 11, u64::MAX - 1, u64::MAX];
        for from in ts {
            for to in ts {
                let w = Window::new((SimTime(from), SimTime(to)));
                for t in ts {
                    assert_eq!(
                        w.contains(SimTime(t)),
                        from <= t && t < to,
                        "{from} {to} {t}"
                    );
                }
            }
        }
    }
}
