//! `Agent/TCPSink`: one cumulative ACK per arriving data packet, at once (no SACK); or
//! `Agent/TCPSink/DelAck` (`delack`): an in-order packet that fills no gap, with no ACK
//! pending, is acknowledged `interval_` (100 ms) later unless another packet comes first;
//! every other packet is acknowledged at once, covering the held one. The ACK carries
//! ns-2's `seqno`: the highest packet received in order (the sender's packet 0 is the
//! connection-opening packet, so data starts at 1).

use crate::packet::{Ack, Packet};
use crate::units::SimTime;
use std::collections::BTreeSet;

/// `Agent/TCPSink/DelAck`'s `interval_`.
pub const DELACK_INTERVAL: SimTime = SimTime::from_millis(100);

/// What the sink does with an arriving packet.
#[derive(Debug, PartialEq)]
pub enum SinkAck {
    Now(Ack),
    /// Hold the ACK; arm the delayed-ACK timer.
    Delay,
}

#[derive(Debug, Default)]
pub struct Sink {
    /// `Agent/TCPSink/DelAck` rather than `Agent/TCPSink`.
    pub delack: bool,
    /// The ACK held by the delayed-ACK timer.
    held: Option<Ack>,
    /// Highest packet number seen (`maxseen_`).
    maxseen: u64,
    /// Highest in-order packet number received (`Acker::next_ - 1`).
    pub highest: u64,
    /// Packets received above a hole.
    above: BTreeSet<u64>,
    /// Payload bytes delivered in order (data packets only).
    pub delivered_bytes: u64,
}

impl Sink {
    /// A data packet arrives: returns what to do about the ACK and the payload bytes it
    /// delivered in order.
    pub fn on_packet(&mut self, pkt: &Packet, timer_pending: bool) -> (SinkAck, u64) {
        let gap_filling = pkt.seg < self.maxseen;
        self.maxseen = self.maxseen.max(pkt.seg);
        let (ack, bytes) = self.on_segment(pkt);
        // RFC2581_immediate_ack_: no delay when filling a gap
        if self.delack && !timer_pending && pkt.seg == self.highest && !gap_filling {
            self.held = Some(ack);
            return (SinkAck::Delay, bytes);
        }
        self.held = None;
        (SinkAck::Now(ack), bytes)
    }

    /// The delayed-ACK timer expired: the held ACK, if any.
    pub fn on_delack_timeout(&mut self) -> Option<Ack> {
        self.held.take()
    }

    /// A data packet arrives: the cumulative ACK for it and the payload bytes it delivered
    /// in order.
    pub fn on_segment(&mut self, pkt: &Packet) -> (Ack, u64) {
        let before = self.delivered_bytes;
        if pkt.seg == self.highest + 1 {
            self.highest += 1;
            self.delivered_bytes += pkt.len as u64;
            while self.above.remove(&(self.highest + 1)) {
                self.highest += 1;
                // every data packet of a one-way agent is packetSize_ bytes
                self.delivered_bytes += pkt.len as u64;
            }
        } else if pkt.seg > self.highest + 1 {
            self.above.insert(pkt.seg);
        }
        let ack = Ack {
            flow: pkt.flow,
            cum: self.highest,
            tsecr: pkt.ts,
            ..Ack::default()
        };
        (ack, self.delivered_bytes - before)
    }
}
