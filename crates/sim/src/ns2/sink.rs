//! `Agent/TCPSink`: one cumulative ACK per arriving data packet, at once (no delayed ACK,
//! no SACK). The ACK carries ns-2's `seqno`: the highest packet received in order (the
//! sender's packet 0 is the connection-opening packet, so data starts at 1).

use crate::packet::{Ack, Packet};
use std::collections::BTreeSet;

#[derive(Debug, Default)]
pub struct Sink {
    /// Highest in-order packet number received (`Acker::next_ - 1`).
    pub highest: u64,
    /// Packets received above a hole.
    above: BTreeSet<u64>,
    /// Payload bytes delivered in order (data packets only).
    pub delivered_bytes: u64,
}

impl Sink {
    /// A data packet arrives: returns the ACK to send and the payload bytes it delivered
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
