//! Packet headers as they travel through the simulator. No payload: `Copy`, a few words.
//! Sequence numbers count segments (segment `i` carries bytes `[i·MSS, (i+1)·MSS)`, the last
//! segment of a transfer may be shorter), which keeps the sender's scoreboard an array.

use crate::units::SimTime;

/// Maximum SACK blocks per ACK: with the timestamp option (12 bytes incl. padding) 40 − 12
/// leaves room for 3 blocks of 8 bytes + 2 (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// A data segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Packet {
    pub flow: u32,
    /// Segment number.
    pub seg: u64,
    /// Payload bytes.
    pub len: u32,
    /// Bytes on the wire (IP packet: payload + 52 bytes of IP, TCP and timestamp headers).
    pub wire: u32,
    /// TCP timestamp (RFC 7323 TSval): when this transmission left the sender.
    pub ts: SimTime,
    /// GSO/TSO aggregate: the first segment of an aggregate carries its size in segments
    /// (1 for a sender without GSO: every segment is its own aggregate), the segments
    /// that follow it in the same aggregate carry 0. The bottleneck's random loss and its
    /// queue accept or drop an aggregate whole (`link.rs`).
    pub agg: u32,
}

/// An acknowledgement (cumulative + SACK blocks), in segments. Half-open ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ack {
    /// The connection (set by the engine when the ACK leaves the receiver).
    pub flow: u32,
    /// Next segment expected (everything below has arrived).
    pub cum: u64,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub nsack: u8,
    /// Sent by the delayed-ACK timer rather than by arriving data.
    pub delayed: bool,
    /// Echoed timestamp (RFC 7323 TSecr = the receiver's TS.Recent).
    pub tsecr: SimTime,
    /// This is the SYN-ACK of the connection's handshake.
    pub syn: bool,
}

impl Ack {
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.nsack as usize]
    }
}

/// Bytes of a SYN on the wire: IP 20 + TCP 20 + options 20 (MSS, SACK-permitted,
/// timestamps, window scale). A packet with `len == 0` is a SYN.
pub const SYN_BYTES: u32 = 60;

/// IP (20) + TCP (20) + timestamp option (12, RFC 7323 incl. padding): Linux's header bytes
/// per segment with timestamps on, so MSS = MTU − 52 (1448 for a 1500-byte MTU).
pub const HEADER_BYTES: u32 = 52;

/// What a bottleneck queues: it needs a frame's size, its connection and its GSO mark.
pub trait Wire {
    /// Bytes on the wire (IP packet).
    fn wire(&self) -> u32;
    /// The connection it belongs to.
    fn flow(&self) -> u32;
    /// `Packet::agg`: 1 for a frame of its own, n for the head of a GSO aggregate of n,
    /// 0 for the segments that follow a head.
    fn agg(&self) -> u32;
    /// An acknowledgement (counted apart when a link drops it).
    fn is_ack(&self) -> bool {
        false
    }
}

impl Wire for Packet {
    fn wire(&self) -> u32 {
        self.wire
    }
    fn flow(&self) -> u32 {
        self.flow
    }
    fn agg(&self) -> u32 {
        self.agg
    }
}

/// Bytes of a Linux ACK on the wire: the headers of a segment (`HEADER_BYTES`, with the
/// timestamp option) plus, when it carries SACK blocks, the SACK option (kind, length and
/// 8 bytes a block, padded to 4 bytes by two NOPs): 52, 64, 72 or 80 bytes.
pub fn linux_ack_bytes(ack: &Ack) -> u32 {
    match ack.nsack {
        0 => HEADER_BYTES,
        n => HEADER_BYTES + 4 + 8 * n as u32,
    }
}

/// A frame on a bottleneck when the dumbbell has a reverse bottleneck: each link carries
/// one direction's data and the other direction's ACKs. An ACK frame carries its
/// connection, its bytes on the wire and a GSO mark of 1 in `pkt`, as a data packet does,
/// so that the link reads them without asking which kind of frame it holds (session 11:
/// an enum's match on every access), and the ACK itself boxed in `ack`, so that a frame
/// stays the size of a data packet and a pointer (the forward link of a run without
/// reverse traffic queues data only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The data packet; for an ACK only `flow`, `wire` and `agg` (1) are set.
    pub pkt: Packet,
    /// The ACK, if this is one.
    pub ack: Option<Box<Ack>>,
}

impl Frame {
    /// A data packet's frame.
    #[inline(always)]
    pub fn data(pkt: Packet) -> Frame {
        Frame { pkt, ack: None }
    }

    /// An ACK's frame, `wire` bytes on the wire.
    pub fn ack(ack: Ack, wire: u32) -> Frame {
        Frame {
            pkt: Packet {
                flow: ack.flow,
                wire,
                agg: 1,
                ..Packet::default()
            },
            ack: Some(Box::new(ack)),
        }
    }
}

impl Wire for Frame {
    fn wire(&self) -> u32 {
        self.pkt.wire
    }
    fn flow(&self) -> u32 {
        self.pkt.flow
    }
    fn agg(&self) -> u32 {
        self.pkt.agg
    }
    fn is_ack(&self) -> bool {
        self.ack.is_some()
    }
}
