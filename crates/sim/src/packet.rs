//! Packet headers as they travel through the simulator. No payload: `Copy`, a few words.
//! Sequence numbers count segments (segment `i` carries bytes `[i·MSS, (i+1)·MSS)`, the last
//! segment of a transfer may be shorter), which keeps the sender's scoreboard an array.

use crate::units::SimTime;

/// Maximum SACK blocks per ACK: with the timestamp option (12 bytes incl. padding) 40 − 12
/// leaves room for 3 blocks of 8 bytes + 2 (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// A data segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
