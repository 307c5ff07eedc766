//! The scoreboard's storage: a ring with a power-of-two number of slots in which segment `i`
//! lives at slot `i & (slots − 1)`, for the outstanding segments `snd_una..snd_nxt`.
//!
//! The mask is taken from the ring's length at each access rather than kept beside it:
//! `i & (len − 1)` is below `len` whenever `len > 0`, which the compiler sees, so an access
//! carries no bounds check (a stored mask left one on every entry read or written).
//!
//! Indexed by the sequence number itself, an entry is found without subtracting `snd_una`
//! or wrapping an index, and a cumulative ACK frees its entries by moving `snd_una` alone
//! (issue 13: a `VecDeque` spent instructions per segment on both). The ring doubles when
//! a new segment finds it full.
//!
//! The delivery-state snapshots of the rate sample (`TxSnapshot`) live in a ring of their
//! own, indexed alike, kept only for a sender whose congestion control reads the sample
//! (BBR): the others store 16 bytes per segment instead of 48 (session 10).

use super::{Seg, TxSnapshot};

pub(super) struct Board {
    slots: Vec<Seg>,
    /// Empty, or one snapshot per slot.
    snaps: Vec<TxSnapshot>,
}

/// Slot of segment `i` in a ring of `len` slots (a power of two).
#[inline(always)]
fn slot(i: u64, len: usize) -> usize {
    (i as usize) & len.wrapping_sub(1)
}

impl Board {
    /// A ring of `slots` slots (a power of two), with snapshots if `snaps`.
    pub(super) fn new(slots: usize, snaps: bool) -> Board {
        assert!(slots.is_power_of_two(), "scoreboard size {slots}");
        Board {
            slots: vec![Seg::default(); slots],
            snaps: vec![TxSnapshot::default(); if snaps { slots } else { 0 }],
        }
    }

    /// Segment `i`'s snapshot (`i` outstanding; a board with snapshots).
    #[inline]
    pub(super) fn snap(&self, i: u64) -> &TxSnapshot {
        &self.snaps[slot(i, self.snaps.len())]
    }

    /// Keep segment `i`'s snapshot (`i` outstanding; a board with snapshots).
    #[inline]
    pub(super) fn set_snap(&mut self, i: u64, snap: TxSnapshot) {
        let at = slot(i, self.snaps.len());
        self.snaps[at] = snap;
    }

    /// Segment `i`'s entry (`i` outstanding).
    #[inline]
    pub(super) fn get(&self, i: u64) -> &Seg {
        &self.slots[slot(i, self.slots.len())]
    }

    #[inline]
    pub(super) fn get_mut(&mut self, i: u64) -> &mut Seg {
        let at = slot(i, self.slots.len());
        &mut self.slots[at]
    }

    /// Store the entry of segment `nxt`, the next after the outstanding `una..nxt`.
    #[inline]
    pub(super) fn push(&mut self, una: u64, nxt: u64, seg: Seg) {
        if nxt - una >= self.slots.len() as u64 {
            self.grow(una, nxt);
        }
        *self.get_mut(nxt) = seg;
    }

    /// Double the ring, keeping the entries of `una..nxt`.
    #[cold]
    fn grow(&mut self, una: u64, nxt: u64) {
        let mut bigger = Board::new(self.slots.len() * 2, !self.snaps.is_empty());
        for i in una..nxt {
            *bigger.get_mut(i) = *self.get(i);
            if !self.snaps.is_empty() {
                bigger.set_snap(i, *self.snap(i));
            }
        }
        *self = bigger;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: u64) -> Seg {
        Seg {
            tx_time: crate::units::SimTime(i),
            flags: (i % 7) as u8,
        }
    }

    /// Against a plain FIFO: windows that grow past the ring, shrink and slide keep every
    /// outstanding segment's entry.
    #[test]
    fn entries_survive_sliding_and_growth() {
        let mut b = Board::new(4, true);
        let mut fifo = std::collections::VecDeque::new();
        let (mut una, mut nxt) = (0u64, 0u64);
        for step in 0..5000u64 {
            // Send 0–3 segments, then acknowledge 0–2 (a multiplicative pattern).
            for _ in 0..(step * 7919) % 4 {
                b.push(una, nxt, entry(nxt));
                b.set_snap(
                    nxt,
                    TxSnapshot {
                        delivered: 3 * nxt,
                        ..TxSnapshot::default()
                    },
                );
                fifo.push_back(entry(nxt));
                nxt += 1;
            }
            for _ in 0..((step * 104_729) % 3).min(nxt - una) {
                fifo.pop_front();
                una += 1;
            }
            for (k, e) in fifo.iter().enumerate() {
                let got = b.get(una + k as u64);
                assert_eq!(
                    (got.tx_time, got.flags, b.snap(una + k as u64).delivered),
                    (e.tx_time, e.flags, 3 * e.tx_time.0),
                    "step {step}"
                );
            }
        }
        assert!(nxt - una > 64, "the window grew past several doublings");
    }
}
