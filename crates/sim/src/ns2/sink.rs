//! `Agent/TCPSink`: one cumulative ACK per arriving data packet, at once (no SACK); or
//! `Agent/TCPSink/DelAck` (`delack`): an in-order packet that fills no gap, with no ACK
//! pending, is acknowledged `interval_` (100 ms) later unless another packet comes first;
//! every other packet is acknowledged at once, covering the held one. The ACK carries
//! ns-2's `seqno`: the highest packet received in order (the sender's packet 0 is the
//! connection-opening packet, so data starts at 1 — except for `Agent/TCP/Vegas`, whose
//! packet 0 is data: `first_is_data`).
//!
//! With `sack` (the sink of `Agent/TCP/Sack1`: `Agent/TCPSink` with SACK options, ns-2's
//! `Sacker`) each ACK also carries up to 3 SACK blocks (`maxSackBlocks_`), as half-open
//! packet ranges above the cumulative ACK: first the block holding the packet that just
//! arrived (when it is above a hole), then the blocks of earlier ACKs, most recent first,
//! that it did not absorb and the cumulative ACK did not cover.

use crate::packet::{Ack, Packet, MAX_SACK_BLOCKS};
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
    /// Packet 0 is a data packet not yet received (`Agent/TCP/Vegas`'s sink); until it
    /// arrives nothing is in order. The sender's window is one packet until packet 0 is
    /// acknowledged, so nothing above it can arrive first.
    first_pending: bool,
    /// Packets received above a hole.
    above: BTreeSet<u64>,
    /// Payload bytes delivered in order (data packets only).
    pub delivered_bytes: u64,
    /// Send SACK blocks (the Sack1 sink).
    pub sack: bool,
    /// Blocks reported so far, most recent first.
    recent: Vec<(u64, u64)>,
}

impl Sink {
    /// An `Agent/TCPSink`, sending SACK blocks when `sack` (the Sack1 sink).
    /// `first_is_data`: the sender's packet 0 carries data (Vegas) rather than opening the
    /// connection.
    pub fn new(sack: bool, first_is_data: bool) -> Sink {
        Sink {
            sack,
            first_pending: first_is_data,
            ..Sink::default()
        }
    }

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
        let next = if self.first_pending {
            0
        } else {
            self.highest + 1
        };
        if pkt.seg == next {
            self.first_pending = false;
            self.highest = next;
            self.delivered_bytes += pkt.len as u64;
            while self.above.remove(&(self.highest + 1)) {
                self.highest += 1;
                // every data packet of a one-way agent is packetSize_ bytes
                self.delivered_bytes += pkt.len as u64;
            }
        } else if pkt.seg > next {
            self.above.insert(pkt.seg);
        }
        let mut ack = Ack {
            flow: pkt.flow,
            cum: self.highest,
            tsecr: pkt.ts,
            ..Ack::default()
        };
        if self.sack {
            self.sack_blocks(pkt.seg, &mut ack);
        }
        (ack, self.delivered_bytes - before)
    }

    /// The run of packets held above the hole that contains `seg`, half-open.
    fn block_of(&self, seg: u64) -> (u64, u64) {
        let mut lo = seg;
        while lo > 0 && self.above.contains(&(lo - 1)) {
            lo -= 1;
        }
        let mut hi = seg + 1;
        while self.above.contains(&hi) {
            hi += 1;
        }
        (lo, hi)
    }

    /// Fill `ack`'s SACK blocks after packet `seg` arrived.
    fn sack_blocks(&mut self, seg: u64, ack: &mut Ack) {
        let cum = self.highest;
        let first = self.above.contains(&seg).then(|| self.block_of(seg));
        let mut blocks: Vec<(u64, u64)> = first.into_iter().collect();
        for &(l, r) in &self.recent {
            let (l, r) = (l.max(cum + 1), r);
            let absorbed = first.is_some_and(|(fl, fr)| l < fr && fl < r);
            if l < r && !absorbed && blocks.len() < MAX_SACK_BLOCKS {
                blocks.push((l, r));
            }
        }
        for (i, &b) in blocks.iter().enumerate() {
            ack.sack[i] = b;
        }
        ack.nsack = blocks.len() as u8;
        self.recent = blocks;
    }
}
