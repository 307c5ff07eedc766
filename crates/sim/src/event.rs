//! The event queue, keyed by (time, insertion sequence), so events at equal times come out
//! in the order they were scheduled — determinism by construction.
//!
//! Constant-delay paths (access links, ACK return paths) are FIFO: `DelayLine` holds their
//! packets in a ring and keeps only its head in the heap.

use crate::rng::Rng;
use crate::units::SimTime;
use std::collections::VecDeque;

/// What happens at an event. Small and `Copy`: packets live in delay lines and queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The head of a forward delay line (index) reaches the bottleneck.
    FwdArrive(u32),
    /// The head of a reverse delay line (index; an ACK) reaches its sender.
    RevArrive(u32),
    /// A bottleneck (0 forward, 1 reverse) finished serializing its head packet.
    LinkDone(u8),
    /// netem's watchdog runs (`netem_latency` after the first packet it holds was due):
    /// every packet it holds enters the bottleneck (index) at once.
    NetemRelease(u8),
    /// A flow timer fired (lazy: checked against the timer's generation).
    Timer(u32, TimerKind, u32),
    /// Take a measurement sample.
    Sample,
    /// The next short flow of an arrivals entry (index into `Config::short_flows`) opens.
    Arrival(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Connection start (end of the handshake).
    Start,
    Rto,
    DelAck,
    Pacing,
    /// The application has written another segment's worth (app-limited writer).
    App,
    /// The application stops writing (`stop`).
    Stop,
    /// RACK reordering window expired (RFC 8985 §6.3).
    Reo,
    /// Tail loss probe timeout (RFC 8985 §7).
    Tlp,
    /// The receiver's SACK-compression timer.
    CompAck,
}

/// One scheduled event. The queue orders entries by (time, insertion order) without storing
/// a sequence number: see `EventQueue`.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    ev: Ev,
}

/// An `Entry` as the queue holds it: 16 bytes instead of 24 (`Ev`'s largest variant,
/// `Timer`, is 12 bytes and the entry's alignment 8), so a cache line holds four entries
/// instead of 2.67 and a move between buckets copies two words (session 12: the buckets'
/// appends and redistributions were half of N10000's first-level write misses). Packed
/// where the event is pushed (its variant mostly a constant there), unpacked as it leaves:
/// about 4 instructions an event, in the small queue too (keeping `Entry` there cost as
/// much: the event loop then joins two forms of `Ev`).
///
/// `ev`: a timer has bit 63 set, its connection in bits 36–62 (hence `MAX_CONNECTIONS`),
/// its kind in bits 32–35 and its whole 32-bit generation in bits 0–31 (a narrower
/// generation could let a stale entry alias a live one); any other event has its variant's
/// number in bits 32–34 and its index in bits 0–31.
#[derive(Clone, Copy, Debug)]
struct Packed {
    time: u64,
    ev: u64,
}

/// The number of connections (long-lived flows plus short-flow slots) a timer's queue
/// entry can name: 27 bits of `Packed`. A run holding this many would need terabytes.
pub const MAX_CONNECTIONS: usize = 1 << 27;

const TIMER_BIT: u64 = 1 << 63;
const FLOW_SHIFT: u32 = 36;

/// `TimerKind` by its number (`kind as usize`), padded to 16 so that a 4-bit field indexes
/// it without a bounds check.
const KINDS: [TimerKind; 16] = {
    use TimerKind::*;
    let mut t = [Start; 16];
    let all = [Start, Rto, DelAck, Pacing, App, Stop, Reo, Tlp, CompAck];
    let mut i = 0;
    while i < all.len() {
        t[all[i] as usize] = all[i];
        i += 1;
    }
    t
};

impl Packed {
    #[inline(always)]
    fn pack(e: Entry) -> Packed {
        let (tag, x) = match e.ev {
            Ev::Timer(flow, kind, gen) => {
                debug_assert!((flow as usize) < MAX_CONNECTIONS);
                let ev = TIMER_BIT
                    | u64::from(flow) << FLOW_SHIFT
                    | (kind as u64) << 32
                    | u64::from(gen);
                return Packed { time: e.time, ev };
            }
            Ev::FwdArrive(i) => (0u64, i),
            Ev::RevArrive(i) => (1, i),
            Ev::LinkDone(b) => (2, u32::from(b)),
            Ev::NetemRelease(b) => (3, u32::from(b)),
            Ev::Sample => (4, 0),
            Ev::Arrival(i) => (5, i),
        };
        Packed {
            time: e.time,
            ev: tag << 32 | u64::from(x),
        }
    }

    #[inline(always)]
    fn unpack(self) -> Entry {
        let (p, x) = (self.ev, self.ev as u32);
        let ev = if p & TIMER_BIT != 0 {
            let flow = ((p & !TIMER_BIT) >> FLOW_SHIFT) as u32;
            Ev::Timer(flow, KINDS[(p >> 32) as usize & 15], x)
        } else {
            match p >> 32 {
                0 => Ev::FwdArrive(x),
                1 => Ev::RevArrive(x),
                2 => Ev::LinkDone(x as u8),
                3 => Ev::NetemRelease(x as u8),
                4 => Ev::Sample,
                _ => Ev::Arrival(x),
            }
        };
        Entry {
            time: self.time,
            ev,
        }
    }
}

/// Bits per digit of the radix heap: a bucket per value of a 6-bit digit, so a level's
/// occupancy is one `u64`.
const DIGIT: u32 = 6;
const SLOTS: usize = 1 << DIGIT;
/// Levels: digits of a 64-bit time (the top one has 4 bits).
const LEVELS: usize = 64_usize.div_ceil(DIGIT as usize);

/// The queue keeps at most this many entries in one sorted array (a dumbbell of a few
/// connections holds about ten: their delay lines' heads, their timers, the link's next
/// completion); beyond it, the buckets take them until fewer than `SMALL_MIN` are left.
const SMALL_MAX: usize = 32;
const SMALL_MIN: usize = 12;

/// The level of a time whose highest bit differing from `last` is bit `b`: its digit.
const LEVEL_OF_BIT: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut b = 0;
    while b < 64 {
        t[b] = (b / DIGIT as usize) as u8;
        b += 1;
    }
    t
};

/// The event queue: a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan, "Faster algorithms for
/// the shortest path problem", 1990) on event times with 64-way buckets. It needs a
/// monotone queue — nothing pushed below the last minimum taken out — which an event
/// simulator is: an event is scheduled at or after the current time.
///
/// A time's bucket is chosen against `last`, the last minimum the queue settled on: its
/// level is the highest 6-bit digit in which the time differs from `last` (level 0 when
/// they differ only in the lowest digit) and its slot that digit's value. So a level-0
/// bucket holds one time only, `last` with its lowest digit replaced by the slot, and the
/// buckets' order — level, then slot — is that of their times. A push appends to its
/// bucket (no sifting through the other entries, whatever their number); the minimum is
/// the front of the lowest occupied level-0 bucket, and when level 0 is empty, the minimum
/// of the lowest occupied bucket of the lowest occupied level: that bucket's other entries
/// then move below it around the minimum, the new `last`. An entry moves down at most a
/// level at a time and only while its time approaches: an event 25 ms ahead (level 4 of
/// nanoseconds) moves about four times in its life, sequentially in memory (session 9; the
/// binary radix heap before it moved entries through up to 25 one-bit buckets, and at
/// 10,000 flows its redistributions were a fifth of all instructions).
///
/// Events at equal times leave in the order they were scheduled, with no sequence number
/// stored: equal times always share a bucket; every bucket holds its entries in insertion
/// order (a push appends the newest event; a redistribution empties the lowest occupied
/// bucket, in order, into buckets that are all empty — every one below it); and a level-0
/// bucket is read from the front. So the order out is exactly that of a binary heap on
/// (time, insertion sequence): the same events in the same order
/// (tests/test_sim_determinism.py; cargo tests check it on random operations).
///
/// A queue of few entries — a dumbbell of a few connections holds about ten — is one array
/// sorted by (time, insertion order), latest first: the next event is its last entry, and
/// a push moves the entries that leave before it (for an event scheduled soon, the few at
/// the back) one place on. It moves to the buckets when a push finds `SMALL_MAX` entries,
/// and back when fewer than `SMALL_MIN` are left; either way every entry keeps its place
/// in the order (session 9: −8 % instructions per packet with two connections).
///
/// Timers are cancelled lazily: each timer carries a generation counter, an entry whose
/// generation no longer matches is ignored when it comes out. A timer that is pushed later
/// (the RTO, re-armed on every ACK) keeps its entry and is re-scheduled when the old entry
/// fires early, so re-arming costs no queue operation.
#[derive(Debug)]
pub struct EventQueue {
    /// The queue is small (`small` holds every entry; the buckets are empty).
    is_small: bool,
    /// While small: the entries sorted by time, latest first, and among equal times newest
    /// first, so the next event is the last one.
    /// An array of known length, so no index into it needs a bounds check or a capacity
    /// check (session 9: `Vec::push` and indexing were ≈ 30 instructions per push).
    small: [Packed; SMALL_MAX],
    /// Entries in `small` while small; `SMALL_MAX` while not, so that `small_len <
    /// SMALL_MAX` alone tells a push that the small queue takes it.
    small_len: usize,
    /// Entries in the buckets (while not small).
    count: usize,
    /// `buckets[level][slot]`.
    buckets: Box<[[Vec<Packed>; SLOTS]; LEVELS]>,
    /// Bit `s` of `occupied[l]` is set when bucket (`l`, `s`) holds entries not yet taken.
    /// (No summary of the occupied levels: the lowest occupied one above level 0 is almost
    /// always level 1 or 2, found by testing a word or two, and keeping a summary cost every
    /// move two instructions; session 12.)
    occupied: [u64; LEVELS],
    /// The level-0 slot being read, from entry `front` on (its earlier entries are taken).
    cur: usize,
    front: usize,
    /// The last minimum settled on: every entry's time is greater or equal.
    last: u64,
    now: u64,
    pub popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            is_small: true,
            small: [Packed { time: 0, ev: 0 }; SMALL_MAX],
            small_len: 0,
            count: 0,
            buckets: Box::new(std::array::from_fn(|_| std::array::from_fn(|_| Vec::new()))),
            occupied: [0; LEVELS],
            cur: 0,
            front: 0,
            last: 0,
            now: 0,
            popped: 0,
        }
    }

    pub fn now(&self) -> SimTime {
        SimTime(self.now)
    }

    /// Append `e` to its bucket relative to `last` (`buckets`/`occupied` passed apart, so a
    /// redistribution can hold the bucket it empties).
    #[inline(always)]
    fn put_in(
        buckets: &mut [[Vec<Packed>; SLOTS]],
        occupied: &mut [u64; LEVELS],
        last: u64,
        e: Packed,
    ) {
        let x = e.time ^ last;
        let level = if x == 0 {
            0
        } else {
            LEVEL_OF_BIT[63 - x.leading_zeros() as usize] as usize
        };
        let slot = (e.time >> (DIGIT * level as u32)) as usize & (SLOTS - 1);
        occupied[level] |= 1 << slot;
        buckets[level][slot].push(e);
    }

    /// Schedule `ev` at `t` (never before the current time).
    #[inline(always)]
    pub fn push(&mut self, t: SimTime, ev: Ev) {
        debug_assert!(
            t.0 >= self.now,
            "scheduling in the past: {} < {}",
            t.0,
            self.now
        );
        let time = t.0.max(self.now);
        let e = Packed::pack(Entry { time, ev });
        if self.small_len < SMALL_MAX {
            // Before every entry of an equal or earlier time (it leaves after them): most
            // events are scheduled soon, behind few such entries, so look from the back.
            let v = &mut self.small;
            let mut i = self.small_len;
            self.small_len = i + 1;
            while i > 0 && v[i - 1].time <= time {
                v[i] = v[i - 1];
                i -= 1;
            }
            v[i] = e;
            return;
        }
        self.push_buckets(e);
    }

    /// `push` into the buckets (the small queue's entries go there first when it is full).
    #[inline]
    fn push_buckets(&mut self, e: Packed) {
        if self.is_small {
            self.grow();
        }
        let time = e.time;
        self.count += 1;
        if time < self.last {
            // Only after a peek settled a later minimum that was not popped (the time is
            // not before `now`): rebuild around `time`.
            self.rebase(time);
        }
        self.put(e);
    }

    /// `put_in` into the whole queue, around `last`.
    #[inline(always)]
    fn put(&mut self, e: Packed) {
        Self::put_in(&mut self.buckets[..], &mut self.occupied, self.last, e);
    }

    /// The small queue is full: move its entries into the buckets, around the current
    /// time, in the order they leave (so equal times keep their order in their bucket).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.is_small = false;
        self.last = self.now;
        self.cur = (self.now as usize) & (SLOTS - 1);
        self.front = 0;
        self.count = self.small_len;
        let small = self.small;
        let n = std::mem::replace(&mut self.small_len, SMALL_MAX);
        for &e in small[..n].iter().rev() {
            self.put(e);
        }
    }

    /// Few entries are left in the buckets: take them out, in order, into the small
    /// queue.
    #[cold]
    #[inline(never)]
    fn shrink(&mut self) {
        let mut n = 0;
        while let Some(e) = self.take(u64::MAX) {
            self.small[n] = e;
            n += 1;
        }
        self.small[..n].reverse();
        self.small_len = n;
        self.count = 0;
        self.is_small = true;
    }

    /// Every entry not yet taken, bucket by bucket (each in insertion order), emptying the
    /// queue.
    fn take_all(&mut self) -> Vec<Packed> {
        let mut all = Vec::new();
        for (l, level) in self.buckets.iter_mut().enumerate() {
            for (s, b) in level.iter_mut().enumerate() {
                let skip = if (l, s) == (0, self.cur) {
                    self.front
                } else {
                    0
                };
                all.extend(b.drain(..).skip(skip));
            }
        }
        self.occupied = [0; LEVELS];
        self.cur = 0;
        self.front = 0;
        all
    }

    /// Re-bucket every entry relative to a new, lower minimum `t` (rare: see `push`). Each
    /// bucket is re-put in order, so entries of equal time keep their order.
    #[cold]
    #[inline(never)]
    fn rebase(&mut self, t: u64) {
        let all = self.take_all();
        self.last = t;
        self.cur = (t as usize) & (SLOTS - 1);
        for e in all {
            self.put(e);
        }
    }

    /// The level-0 slot being read is used up: empty it and go on to the next occupied
    /// level-0 slot, if any (returns whether there is one).
    #[inline(always)]
    fn next_slot(&mut self) -> bool {
        self.buckets[0][self.cur].clear();
        self.occupied[0] &= !(1 << self.cur);
        self.front = 0;
        if self.occupied[0] == 0 {
            return false;
        }
        self.cur = self.occupied[0].trailing_zeros() as usize;
        // The minimum moves on within the lowest digit: no entry changes bucket, and an
        // event scheduled below the new minimum (after a peek) still rebuilds the queue.
        self.last = (self.last & !(SLOTS as u64 - 1)) | self.cur as u64;
        true
    }

    /// The lowest occupied bucket above level 0 (level 0 is empty), if any.
    #[inline(always)]
    fn lowest_bucket(&self) -> Option<(usize, usize)> {
        let level = (1..LEVELS).find(|&l| self.occupied[l] != 0)?;
        Some((level, self.occupied[level].trailing_zeros() as usize))
    }

    /// Bring the minimum to the front of the level-0 slot being read (if the queue is not
    /// empty).
    fn settle(&mut self) -> Option<&Packed> {
        if self.front == self.buckets[0][self.cur].len() && !self.next_slot() {
            let (level, slot) = self.lowest_bucket()?;
            self.redistribute(level, slot, false, u64::MAX);
        }
        self.buckets[0][self.cur].get(self.front)
    }

    /// Empty bucket (`level`, `slot`), the lowest occupied one (level 0 is empty), into the
    /// buckets below it around its minimum, which becomes `last`; all of them are empty, so
    /// each keeps its entries in insertion order. With `take`, the first minimum (the
    /// oldest of equal ones) leaves directly, without a stop in level 0 — with few entries
    /// the bucket mostly holds one to three — and is returned if due by `limit`; if it is
    /// not, nothing changes.
    #[inline(always)]
    fn redistribute(
        &mut self,
        level: usize,
        slot: usize,
        take: bool,
        limit: u64,
    ) -> Option<Packed> {
        let (lower, upper) = self.buckets.split_at_mut(level);
        let moved = &mut upper[0][slot];
        if take && moved.len() == 1 {
            // The common case with few connections: the bucket holds the minimum only.
            let first = moved[0];
            if first.time > limit {
                return None;
            }
            moved.clear();
            self.occupied[level] &= !(1 << slot);
            self.last = first.time;
            self.cur = (first.time as usize) & (SLOTS - 1);
            self.front = 0;
            return Some(first);
        }
        if take && moved.len() == 2 {
            // Next most common with many connections (N10000: a fifth of the buckets
            // taken): the earlier leaves (the older of equal times), the other moves below
            // it — to the level-0 slot read next when their times are equal.
            let (a, b) = (moved[0], moved[1]);
            let (first, other) = if b.time < a.time { (b, a) } else { (a, b) };
            if first.time > limit {
                return None;
            }
            moved.clear();
            self.occupied[level] &= !(1 << slot);
            self.last = first.time;
            Self::put_in(lower, &mut self.occupied, first.time, other);
            self.cur = (first.time as usize) & (SLOTS - 1);
            self.front = 0;
            return Some(first);
        }
        let mut m = 0;
        for (i, e) in moved.iter().enumerate().skip(1) {
            if e.time < moved[m].time {
                m = i;
            }
        }
        let last = moved[m].time;
        if take && last > limit {
            return None;
        }
        self.last = last;
        self.occupied[level] &= !(1 << slot);
        // Every entry lands below (they share the digits above `level` with the new
        // minimum, and its digit at `level`); those at the minimum time in level 0.
        for (i, &e) in moved.iter().enumerate() {
            if !(take && i == m) {
                Self::put_in(lower, &mut self.occupied, last, e);
            }
        }
        let first = moved[m];
        moved.clear();
        self.cur = (last as usize) & (SLOTS - 1);
        self.front = 0;
        take.then_some(first)
    }

    /// The level-0 slot being read is used up: take the next minimum from the next
    /// occupied level-0 slot, or from the lowest occupied bucket above, if it is due by
    /// `limit`.
    #[inline(always)]
    fn take_next(&mut self, limit: u64) -> Option<Packed> {
        if self.next_slot() {
            let e = self.buckets[0][self.cur][0];
            if e.time > limit {
                return None;
            }
            self.front = 1;
            return Some(e);
        }
        let (level, slot) = self.lowest_bucket()?;
        self.redistribute(level, slot, true, limit)
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.is_small {
            return self
                .small
                .get(self.small_len.wrapping_sub(1))
                .map(|e| SimTime(e.time));
        }
        self.settle().map(|e| SimTime(e.time))
    }

    /// Remove the next event and advance the clock to it. Time never goes backwards.
    pub fn pop(&mut self) -> Option<(SimTime, Ev)> {
        self.pop_until(SimTime(u64::MAX))
    }

    /// `pop` if the next event is at or before `limit` (one look at the queue instead of
    /// `peek_time` then `pop`).
    #[inline(always)]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, Ev)> {
        let e = if self.is_small {
            // One comparison for "not empty" and the bounds (`small_len` - 1 wraps at 0).
            let n = self.small_len;
            match self.small.get(n.wrapping_sub(1)) {
                Some(&e) if e.time <= limit.0 => {
                    self.small_len = n - 1;
                    // Time cannot go back here: the array is sorted, its last entry is its
                    // minimum, and a push puts nothing below `now` (it clamps) (≈ 3
                    // instructions an event saved; session 11).
                    debug_assert!(e.time >= self.now, "time went backwards");
                    e
                }
                _ => return None,
            }
        } else {
            let e = self.take(limit.0)?;
            self.count -= 1;
            if self.count < SMALL_MIN {
                self.shrink();
            }
            // Nor here: every entry is at `last` or later (a push clamps to `now`, and one
            // below `last` rebuilds around its time), and `take` returns the lowest (the
            // cargo tests check the order against a binary heap, the pinned digests whole
            // runs). A release check cost 3 instructions an event at 10,000 flows and,
            // with its panic path, shaped the loop's code (session 12).
            debug_assert!(e.time >= self.now, "time went backwards");
            e
        };
        self.now = e.time;
        self.popped += 1;
        Some((SimTime(e.time), e.unpack().ev))
    }

    /// The next entry from the buckets, if due by `limit`.
    #[inline(always)]
    fn take(&mut self, limit: u64) -> Option<Packed> {
        if self.occupied[0] == 0 {
            // Level 0 holds nothing (a level-0 slot keeps its bit until it is used up and
            // cleared): the minimum is in the lowest bucket above. With many connections
            // most events leave so, straight from a bucket of one entry, and the slot
            // being read was left empty by the last of them (session 12).
            let (level, slot) = self.lowest_bucket()?;
            return self.redistribute(level, slot, true, limit);
        }
        match self.buckets[0][self.cur].get(self.front) {
            Some(&e) if e.time > limit => None,
            Some(&e) => {
                self.front += 1;
                Some(e)
            }
            None => self.take_next(limit),
        }
    }

    pub fn len(&self) -> usize {
        if self.is_small {
            self.small_len
        } else {
            self.count
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A lazily cancelled timer: when it should fire (its deadline, if armed) and the time of
/// its live queue entry (if any), which may be earlier than the deadline. 24 bytes (two
/// times, their flags and the generation), so a connection's timers share few cache lines.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline: u64,
    scheduled: u64,
    gen: u32,
    armed: bool,
    has_entry: bool,
}

impl Timer {
    /// When the timer fires, if armed.
    pub fn deadline(&self) -> Option<SimTime> {
        self.armed.then_some(SimTime(self.deadline))
    }

    /// Arm (or re-arm) the timer for `t`. Pushes a heap entry only when `t` is earlier than
    /// the live entry.
    #[inline]
    pub fn arm(&mut self, q: &mut EventQueue, t: SimTime, flow: u32, kind: TimerKind) {
        self.deadline = t.0;
        self.armed = true;
        if !self.has_entry || t.0 < self.scheduled {
            self.schedule(q, t.0, flow, kind);
        }
    }

    #[inline]
    fn schedule(&mut self, q: &mut EventQueue, t: u64, flow: u32, kind: TimerKind) {
        self.gen = self.gen.wrapping_add(1);
        self.scheduled = t;
        self.has_entry = true;
        q.push(SimTime(t), Ev::Timer(flow, kind, self.gen));
    }

    pub fn cancel(&mut self) {
        self.armed = false;
    }

    pub fn is_armed(&self) -> bool {
        self.armed
    }

    /// A heap entry of this timer came out at `now`. Returns true when the timer fires;
    /// re-schedules it when its deadline moved later. Inline in the event loop: at 10,000
    /// connections a fifth of the events are timer entries, two thirds of which do nothing
    /// or only move (issue 13), and the call cost a third of their instructions; the push
    /// of a moved entry stays out of line.
    #[inline(always)]
    pub fn on_pop(
        &mut self,
        q: &mut EventQueue,
        gen: u32,
        now: SimTime,
        flow: u32,
        kind: TimerKind,
    ) -> bool {
        if gen != self.gen {
            return false; // superseded entry
        }
        self.has_entry = false;
        if !self.armed {
            return false;
        }
        if self.deadline <= now.0 {
            self.armed = false;
            return true;
        }
        self.reschedule(q, flow, kind);
        false
    }

    /// `on_pop`'s entry came out before the deadline: push one for the deadline.
    #[inline(never)]
    fn reschedule(&mut self, q: &mut EventQueue, flow: u32, kind: TimerKind) {
        self.schedule(q, self.deadline, flow, kind);
    }
}

/// A delay line's random host delay: uniform over the `max` + 1 integer nanoseconds
/// 0..=`max`, drawn from its own generator. `span` is `max` + 1 as an `f64`, converted once
/// (the same value the draw used to convert at every item: the arithmetic is unchanged).
#[derive(Debug)]
struct Jitter {
    max: u64,
    span: f64,
    rng: Rng,
    /// Arrival time of the item last pushed: the line's back while it holds any (an item
    /// pushed behind it shares its time), kept here so the FIFO clamp does not look the
    /// back up in `rest` (ring index arithmetic at every item).
    last: SimTime,
}

/// A constant-delay FIFO path. Items pushed at non-decreasing times arrive in order, so
/// only the head needs a heap entry.
///
/// Optionally the line adds a random host delay to every item (`with_jitter`): uniform in
/// [0, J], from its own seeded generator, and never less than the previous item's arrival
/// time, so the path stays FIFO (a flow's packets are never reordered).
///
/// Layout for many flows (issue 13): up to `N` items live inline (`near`, a ring: `near_head`
/// is the oldest), items beyond those in a separate ring (`rest`); the jitter generator
/// (rarely used) is boxed. With thousands of connections a line mostly holds zero to two
/// items (a sender answers an ACK with one or two segments), so taking the head or appending
/// touches the first cache lines of the line and nothing else — no second allocation.
///
/// An item that goes to `rest` stays there until it leaves (session 8): once `near` is full,
/// every later item is appended to `rest` until `rest` has drained, so each item is written
/// once and read once (a line of two flows holds thousands of packets; refilling `near` from
/// `rest` at every pop copied each of them three times). Invariant: every item in `near` is
/// older than every item in `rest`, so the line takes from `near` while it holds any, then
/// from `rest`, and items leave in arrival order.
#[derive(Debug)]
#[repr(C)]
pub struct DelayLine<T, const N: usize = 3> {
    /// Items inline: `near_len` of them, the oldest at `near[near_head]`.
    near_len: u8,
    near_head: u8,
    /// `rest` holds items: kept beside `near_len` so that appending and popping on a line
    /// with nothing in `rest` (a connection among thousands) read only the line's first
    /// cache line, not `rest`'s length further on (issue 13: first-level misses).
    spilled: bool,
    jitter: Option<Box<Jitter>>,
    /// The line's constant delay (`set_delay`), which the caller adds to an item's time
    /// before `push`: kept in the header, beside what every push and pop reads anyway, so
    /// that a connection's sender and receiver find their path's delays in the cache line
    /// they append to (issue 13: as a field of `Path` it was a cache line of its own at
    /// each ACK and delivery, ~18 % of a 10,000-flow run's read misses on delay lines).
    delay: SimTime,
    near: [(SimTime, T); N],
    rest: VecDeque<(SimTime, T)>,
}

impl<T: Copy + Default, const N: usize> Default for DelayLine<T, N> {
    fn default() -> Self {
        DelayLine {
            near_len: 0,
            near_head: 0,
            spilled: false,
            jitter: None,
            delay: SimTime::ZERO,
            near: [(SimTime::ZERO, T::default()); N],
            rest: VecDeque::new(),
        }
    }
}

impl<T: Copy + Default, const N: usize> DelayLine<T, N> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A line that delays each item by a further uniform random amount in [0, `max_ns`]
    /// drawn from `rng` (no draws at all when `max_ns` is 0, so output is unchanged).
    pub fn with_jitter(max_ns: u64, rng: Rng) -> Self {
        // The draw converts through `i64`: below 2^63 it truncates as a `u64` conversion
        // would, and above the `min` with `max` gives the same (the engine allows 1 s).
        assert!(max_ns < 1 << 63, "jitter of {max_ns} ns");
        DelayLine {
            jitter: (max_ns > 0).then(|| {
                Box::new(Jitter {
                    max: max_ns,
                    span: (max_ns + 1) as f64,
                    rng,
                    last: SimTime::ZERO,
                })
            }),
            ..Self::default()
        }
    }

    /// The line's constant delay (zero until `set_delay`).
    #[inline(always)]
    pub fn delay(&self) -> SimTime {
        self.delay
    }

    pub fn set_delay(&mut self, delay: SimTime) {
        self.delay = delay;
    }

    /// Index in `near` of the item `k` places behind the oldest inline one (`k` < `N`).
    fn near_index(&self, k: usize) -> usize {
        let i = self.near_head as usize + k;
        if i >= N {
            i - N
        } else {
            i
        }
    }

    /// Arrival time of the last item on the line.
    #[inline(always)]
    fn back_time(&self) -> Option<SimTime> {
        if self.spilled {
            return self.rest.back().map(|b| b.0);
        }
        let n = self.near_len as usize;
        n.checked_sub(1).map(|k| self.near[self.near_index(k)].0)
    }

    /// Append an item (the line's order is its arrival order); returns whether the line was
    /// empty.
    #[inline(always)]
    fn append(&mut self, at: SimTime, item: T) -> bool {
        let n = self.near_len as usize;
        if n == N || self.spilled {
            self.rest.push_back((at, item));
            self.spilled = true;
            return false;
        }
        let i = self.near_index(n);
        self.near[i] = (at, item);
        self.near_len += 1;
        n == 0
    }

    /// Take the oldest item, if any.
    #[inline(always)]
    fn take_front(&mut self) -> Option<(SimTime, T)> {
        if self.near_len == 0 {
            let front = self.rest.pop_front();
            self.spilled = !self.rest.is_empty();
            return front;
        }
        let h = self.near_head as usize;
        let front = self.near[h];
        self.near_head = if h + 1 == N { 0 } else { h as u8 + 1 };
        self.near_len -= 1;
        Some(front)
    }

    /// Put `item` on the line to arrive at `at` (plus the line's random delay, if any);
    /// schedules `ev` if the line was empty.
    #[inline(always)]
    pub fn push(&mut self, q: &mut EventQueue, at: SimTime, item: T, ev: Ev) {
        let at = match self.jitter.as_deref_mut() {
            None => at,
            Some(j) => {
                // Uniform over the max + 1 integer nanoseconds 0..=max. Converted through
                // `i64` (cheaper than to `u64`): the same integer, as max < 2^63 (`with_jitter`).
                let extra = ((j.rng.uniform() * j.span) as i64 as u64).min(j.max);
                let t = SimTime(at.0 + extra);
                // FIFO: a later packet never overtakes an earlier one (a host's send path
                // is a queue); it leaves right after it instead. (`last` is the back while
                // the line holds anything; `back_time` without looking the back up.)
                let empty = self.near_len == 0 && !self.spilled;
                let at = if empty { t } else { t.max(j.last) };
                j.last = at;
                at
            }
        };
        debug_assert!(
            self.back_time().is_none_or(|b| b <= at),
            "delay line out of order"
        );
        if self.append(at, item) {
            q.push(at, ev);
        }
    }

    /// Put `item` on the line right behind the last item, at the same time and without a
    /// random delay of its own: the rest of a unit the host sends as one (a GSO aggregate's
    /// segments share its jitter). The line must not be empty.
    pub fn push_behind(&mut self, item: T) {
        let at = self.back_time().expect("push_behind on an empty line");
        self.append(at, item);
    }

    /// Take the head (its event fired); schedules `ev` for the next one. (`take_front`
    /// and `front_time` in one: the item is copied once, and the next one's time is read
    /// where it is known to be.)
    #[inline(always)]
    pub fn pop(&mut self, q: &mut EventQueue, ev: Ev) -> T {
        let n = self.near_len;
        if n == 0 {
            let (_, item) = self
                .rest
                .pop_front()
                .expect("delay-line event without an item");
            match self.rest.front() {
                Some(&(t, _)) => q.push(t, ev),
                None => self.spilled = false,
            }
            return item;
        }
        let h = self.near_head as usize;
        let item = self.near[h].1;
        let next = if h + 1 == N { 0 } else { h + 1 };
        // A line left empty starts again at slot 0: with many connections a line holds one
        // or two items at a time, which then stay in the first slots (the line's first
        // cache line) instead of going round all `N` (issue 13: first-level misses).
        self.near_head = if n > 1 { next as u8 } else { 0 };
        self.near_len = n - 1;
        if n > 1 {
            q.push(self.near[next].0, ev);
        } else if self.spilled {
            if let Some(&(t, _)) = self.rest.front() {
                q.push(t, ev);
            }
        }
        item
    }

    pub fn len(&self) -> usize {
        self.near_len as usize + self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.near_len == 0 && self.rest.is_empty()
    }

    /// Take everything on the line (tests drive senders without the event loop).
    pub fn drain(&mut self) -> Vec<T> {
        std::iter::from_fn(|| self.take_front().map(|(_, x)| x)).collect()
    }

    /// Take everything on the line with the time each item reaches its end (tests).
    #[cfg(test)]
    pub fn drain_with_times(&mut self) -> Vec<(SimTime, T)> {
        std::iter::from_fn(|| self.take_front()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Ev::FwdArrive(1));
        q.push(SimTime(3), Ev::FwdArrive(2));
        q.push(SimTime(5), Ev::FwdArrive(3));
        q.push(SimTime(5), Ev::FwdArrive(4));
        let order: Vec<Ev> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            vec![
                Ev::FwdArrive(2),
                Ev::FwdArrive(1),
                Ev::FwdArrive(3),
                Ev::FwdArrive(4)
            ]
        );
    }

    #[test]
    fn pop_until_takes_events_up_to_the_limit_and_leaves_the_rest() {
        let mut q = EventQueue::new();
        for (t, l) in [(5, 1), (9, 2), (5, 3), (7, 4)] {
            q.push(SimTime(t), Ev::FwdArrive(l));
        }
        let mut got = vec![];
        while let Some((t, ev)) = q.pop_until(SimTime(7)) {
            got.push((t.0, ev));
        }
        let want = [(5, 1), (5, 3), (7, 4)].map(|(t, l)| (t, Ev::FwdArrive(l)));
        assert_eq!(got, want);
        assert_eq!((q.len(), q.now(), q.popped), (1, SimTime(7), 3));
        assert_eq!(q.pop(), Some((SimTime(9), Ev::FwdArrive(2))));
    }

    #[test]
    fn timers_and_packet_events_interleave_in_global_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Ev::Timer(0, TimerKind::Rto, 1));
        q.push(SimTime(5), Ev::FwdArrive(1));
        q.push(SimTime(4), Ev::Timer(0, TimerKind::DelAck, 1));
        q.push(SimTime(5), Ev::Timer(0, TimerKind::Tlp, 1));
        q.push(SimTime(6), Ev::LinkDone(0));
        let order: Vec<Ev> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            vec![
                Ev::Timer(0, TimerKind::DelAck, 1),
                Ev::Timer(0, TimerKind::Rto, 1),
                Ev::FwdArrive(1),
                Ev::Timer(0, TimerKind::Tlp, 1),
                Ev::LinkDone(0)
            ]
        );
    }

    /// Drive the queue and a binary heap on (time, seq) with the same random operations:
    /// pushes at or after the current time (delays from `delay`), peeks without pops,
    /// pushes after a peek, and pops up to a limit that may come before the next event;
    /// they must agree on every pop. One push per step on average, so the queue grows to
    /// thousands of entries; with `phases`, phases of 1,000 steps alternately grow it so and
    /// drain it (no pushes), so it changes between its small sorted array and its buckets
    /// again and again. Returns how many times it changed.
    fn check_against_binary_heap(
        seed: u64,
        steps: u64,
        phases: bool,
        delay: impl Fn(&mut Rng) -> u64,
    ) -> u32 {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = Rng::new(seed);
        let mut q = EventQueue::new();
        let mut reference: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        let (mut switches, mut small) = (0, q.is_small);
        for step in 0..steps {
            if q.is_small != small {
                switches += 1;
                small = q.is_small;
            }
            let rate = if phases && (step / 1000) % 2 == 1 {
                1.0
            } else {
                3.0
            };
            let pushes = (rng.uniform() * rate) as u32;
            for _ in 0..pushes {
                let d = delay(&mut rng);
                seq += 1;
                q.push(SimTime(now.saturating_add(d)), Ev::FwdArrive(seq as u32));
                reference.push(Reverse((now.saturating_add(d), seq)));
            }
            if step % 7 == 0 {
                // Peek only; the next pushes may go below the peeked minimum.
                let want = reference.peek().map(|Reverse((t, _))| SimTime(*t));
                assert_eq!(q.peek_time(), want);
                continue;
            }
            // Pop, or pop up to a limit that may fall before the minimum.
            let limit = match step % 3 {
                0 => u64::MAX,
                _ => now.saturating_add(delay(&mut rng)),
            };
            let got = q.pop_until(SimTime(limit));
            let want = match reference.peek() {
                Some(Reverse((t, _))) if *t <= limit => reference
                    .pop()
                    .map(|Reverse((t, s))| (SimTime(t), Ev::FwdArrive(s as u32))),
                _ => None,
            };
            assert_eq!(got, want, "step {step}");
            if let Some((t, _)) = got {
                now = t.0;
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.is_empty(), reference.is_empty());
        }
        while let Some(Reverse((t, s))) = reference.pop() {
            assert_eq!(q.pop(), Some((SimTime(t), Ev::FwdArrive(s as u32))));
        }
        assert!(q.is_empty() && q.pop().is_none());
        switches
    }

    /// Every event, with the largest indexes, generations and connections, comes out of
    /// its 16-byte form as it went in.
    #[test]
    fn a_packed_entry_unpacks_to_the_event_it_was_made_from() {
        use TimerKind::*;
        let mut evs = vec![Ev::Sample, Ev::LinkDone(255), Ev::NetemRelease(1)];
        for i in [0, 1, 0x8000_0001, u32::MAX] {
            evs.extend([Ev::FwdArrive(i), Ev::RevArrive(i), Ev::Arrival(i)]);
        }
        for kind in [Start, Rto, DelAck, Pacing, App, Stop, Reo, Tlp, CompAck] {
            for flow in [0, 1, MAX_CONNECTIONS as u32 - 1] {
                for gen in [0, 7, u32::MAX] {
                    evs.push(Ev::Timer(flow, kind, gen));
                }
            }
        }
        for (k, &ev) in evs.iter().enumerate() {
            let time = u64::MAX - k as u64;
            let e = Packed::pack(Entry { time, ev }).unpack();
            assert_eq!((e.time, e.ev), (time, ev));
        }
    }

    /// The radix heap gives exactly the order of a binary heap on (time, seq), under a
    /// simulator's pattern: delays from nanoseconds to seconds, many at equal times.
    #[test]
    fn radix_queue_pops_in_the_order_of_a_binary_heap() {
        check_against_binary_heap(42, 200_000, false, simulator_delay);
    }

    /// Delays from nanoseconds to seconds, many of them 0 (equal times).
    fn simulator_delay(rng: &mut Rng) -> u64 {
        match (rng.uniform() * 4.0) as u32 {
            0 => 0,
            1 => (rng.uniform() * 1_000.0) as u64,
            2 => (rng.uniform() * 50_000_000.0) as u64,
            _ => (rng.uniform() * 3e9) as u64,
        }
    }

    /// A queue that grows past `SMALL_MAX` and drains below `SMALL_MIN` a hundred times
    /// keeps the order across every change between the sorted array and the buckets.
    #[test]
    fn queue_keeps_its_order_while_it_grows_and_shrinks() {
        let switches = check_against_binary_heap(43, 200_000, true, simulator_delay);
        assert_eq!(switches, 200);
    }

    /// Equal times by the thousand: delays of 0–3 ns or a few fixed values, so entries of
    /// one time arrive by pushes and by redistributions from several buckets, and must
    /// still leave in insertion order (the queue stores no sequence number).
    #[test]
    fn radix_queue_keeps_insertion_order_among_equal_times() {
        check_against_binary_heap(7, 200_000, false, |rng| (rng.uniform() * 4.0) as u64);
        check_against_binary_heap(8, 200_000, false, |rng| {
            [0, 1_000, 25_000_000, 50_000_000][(rng.uniform() * 4.0) as usize]
        });
    }

    /// Delays of every magnitude up to 2^62 ns, so entries start in every level of the
    /// 64-way buckets (the top one has a 4-bit digit) and fall through all of them.
    #[test]
    fn radix_queue_orders_times_across_all_levels() {
        check_against_binary_heap(9, 100_000, false, |rng| {
            let bits = (rng.uniform() * 62.0) as u32;
            (1u64 << bits) + (rng.uniform() * (1u64 << bits) as f64) as u64
        });
    }

    /// A peek settles on the next level-0 time; an event then scheduled between the
    /// current time and that one must still come out first.
    #[test]
    fn an_event_pushed_after_a_peek_below_the_peeked_time_comes_first() {
        for far in [0, SMALL_MAX as u32 + 1] {
            pushed_after_a_peek_below_the_peeked_time(far);
        }
    }

    /// With `far` later events queued first (enough of them and the queue uses its buckets).
    fn pushed_after_a_peek_below_the_peeked_time(far: u32) {
        let mut q = EventQueue::new();
        for i in 0..far {
            q.push(SimTime(1_000_000 + u64::from(i)), Ev::RevArrive(i));
        }
        assert_eq!(q.is_small, far <= SMALL_MAX as u32);
        q.push(SimTime(10), Ev::FwdArrive(1));
        q.push(SimTime(20), Ev::FwdArrive(2));
        assert_eq!(q.pop(), Some((SimTime(10), Ev::FwdArrive(1))));
        assert_eq!(q.peek_time(), Some(SimTime(20)));
        q.push(SimTime(15), Ev::FwdArrive(3));
        q.push(SimTime(10), Ev::FwdArrive(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).take(3).collect();
        let want = [(10, 4), (15, 3), (20, 2)].map(|(t, l)| (SimTime(t), Ev::FwdArrive(l)));
        assert_eq!(order, want);
    }

    #[test]
    fn rearmed_timer_fires_once_at_its_last_deadline() {
        let mut q = EventQueue::new();
        let mut t = Timer::default();
        t.arm(&mut q, SimTime(10), 0, TimerKind::Rto);
        t.arm(&mut q, SimTime(20), 0, TimerKind::Rto); // later: no new heap entry
        assert_eq!(q.len(), 1);
        t.arm(&mut q, SimTime(15), 0, TimerKind::Rto);
        let mut fired = vec![];
        while let Some((now, Ev::Timer(f, k, g))) = q.pop() {
            if t.on_pop(&mut q, g, now, f, k) {
                fired.push(now);
            }
        }
        assert_eq!(fired, vec![SimTime(15)]);
    }

    #[test]
    fn earlier_rearm_supersedes_and_cancel_silences() {
        let mut q = EventQueue::new();
        let mut t = Timer::default();
        t.arm(&mut q, SimTime(30), 0, TimerKind::DelAck);
        t.arm(&mut q, SimTime(10), 0, TimerKind::DelAck);
        let mut fired = vec![];
        while let Some((now, Ev::Timer(f, k, g))) = q.pop() {
            if t.on_pop(&mut q, g, now, f, k) {
                fired.push(now);
            }
        }
        assert_eq!(fired, vec![SimTime(10)]);
        t.arm(&mut q, SimTime(40), 0, TimerKind::DelAck);
        t.cancel();
        let (now, ev) = q.pop().unwrap();
        let Ev::Timer(f, k, g) = ev else { panic!() };
        assert!(!t.on_pop(&mut q, g, now, f, k));
    }

    #[test]
    fn delay_line_keeps_one_heap_entry_and_fifo_order() {
        let mut q = EventQueue::new();
        let mut d: DelayLine<u32> = DelayLine::new();
        for i in 0..5 {
            d.push(&mut q, SimTime(100 + i), i as u32, Ev::FwdArrive(0));
        }
        assert_eq!(q.len(), 1);
        let mut got = vec![];
        while let Some((now, _)) = q.pop() {
            got.push((now.0, d.pop(&mut q, Ev::FwdArrive(0))));
        }
        assert_eq!(got, vec![(100, 0), (101, 1), (102, 2), (103, 3), (104, 4)]);
    }

    /// Drive a line with `N` inline slots and a plain FIFO (the model) with the same random
    /// pushes, pushes behind and pops: lines of up to `max` items, filling with probability
    /// `fill` per step, so they grow past the inline slots, drain to empty and grow again.
    /// Every item comes back in order, each at its time, with one queue entry per line at
    /// most; returns the line for checks of its layout.
    fn check_delay_line_against_a_fifo<const N: usize>(
        seed: u64,
        steps: u32,
        max: usize,
        fill: f64,
    ) -> DelayLine<u32, N> {
        let mut rng = Rng::new(seed);
        let mut q = EventQueue::new();
        let mut d: DelayLine<u32, N> = DelayLine::new();
        let mut model: VecDeque<(u64, u32)> = VecDeque::new();
        let (mut now, mut next) = (0u64, 0u32);
        for _ in 0..steps {
            if model.len() < max && (model.is_empty() || rng.uniform() < fill) {
                let at = model.back().map_or(now, |b| b.0) + (rng.uniform() * 3.0) as u64;
                if rng.uniform() < 0.2 && !model.is_empty() {
                    d.push_behind(next);
                    model.push_back((model.back().expect("non-empty").0, next));
                } else {
                    d.push(&mut q, SimTime(at), next, Ev::FwdArrive(0));
                    model.push_back((at, next));
                }
                next += 1;
            } else {
                let (t, _) = q.pop().expect("an entry for the line's head");
                now = t.0;
                let want = model.pop_front().expect("model non-empty");
                assert_eq!((t.0, d.pop(&mut q, Ev::FwdArrive(0))), want);
            }
            assert_eq!(d.len(), model.len());
            assert_eq!(d.is_empty(), model.is_empty());
            assert_eq!(d.back_time(), model.back().map(|b| SimTime(b.0)));
            assert_eq!(d.spilled, !d.rest.is_empty());
            assert_eq!(q.len(), usize::from(!model.is_empty()));
        }
        let all: Vec<(SimTime, u32)> = model.iter().map(|m| (SimTime(m.0), m.1)).collect();
        let mut copy: DelayLine<u32, N> = DelayLine::new();
        for &(t, x) in &all {
            copy.append(t, x);
        }
        assert_eq!(copy.drain_with_times(), all);
        let rest: Vec<u32> = model.iter().map(|m| m.1).collect();
        assert_eq!(d.drain(), rest);
        assert!(d.is_empty());
        d
    }

    /// Lines of 0 to 12 items (two inline slots), and of up to 200 items that fill and
    /// drain (three inline slots, the forward lines' size): the inline ring and the overflow
    /// ring behind it together give back every item, in order, each at its time.
    #[test]
    fn delay_line_overflowing_its_inline_ring_stays_fifo() {
        check_delay_line_against_a_fifo::<2>(11, 100_000, 12, 0.5);
        check_delay_line_against_a_fifo::<3>(12, 100_000, 200, 0.5);
        check_delay_line_against_a_fifo::<3>(13, 100_000, 200, 0.9);
        check_delay_line_against_a_fifo::<1>(14, 100_000, 5, 0.6);
    }

    /// A line that never holds more than its inline slots (a connection among thousands)
    /// never allocates its overflow ring.
    #[test]
    fn a_line_within_its_inline_slots_allocates_nothing() {
        let d = check_delay_line_against_a_fifo::<3>(15, 100_000, 3, 0.5);
        assert_eq!(d.rest.capacity(), 0);
        let d = check_delay_line_against_a_fifo::<2>(16, 100_000, 2, 0.7);
        assert_eq!(d.rest.capacity(), 0);
    }

    #[test]
    fn an_item_pushed_behind_shares_the_last_ones_time_and_draws_nothing() {
        let mut q = EventQueue::new();
        let mut d: DelayLine<u32> = DelayLine::with_jitter(1000, Rng::new(5));
        let mut twin = Rng::new(5);
        d.push(&mut q, SimTime(10_000), 0, Ev::FwdArrive(0));
        d.push_behind(1);
        d.push_behind(2);
        d.push(&mut q, SimTime(20_000), 3, Ev::FwdArrive(0));
        // The same draws as a line given only items 0 and 3.
        let extra = |r: &mut Rng| ((r.uniform() * 1001.0) as u64).min(1000);
        let (t0, t3) = (10_000 + extra(&mut twin), 20_000 + extra(&mut twin));
        let mut got = vec![];
        while let Some((now, _)) = q.pop() {
            got.push((now.0, d.pop(&mut q, Ev::FwdArrive(0))));
        }
        assert_eq!(got, vec![(t0, 0), (t0, 1), (t0, 2), (t3, 3)]);
    }

    /// The FIFO clamp against a model that reads the back of the line: bursts of items
    /// 100 ns apart (≪ 1 µs jitter, so most are clamped) fill `near` and spill into `rest`,
    /// with pops in between, and the line empties between bursts. (That an emptied line's
    /// last time does not hold back an item pushed at an earlier time is pinned by
    /// `a_draw_is_the_u64_truncation_up_to_the_largest_jitter`, which drains and pushes at 0.)
    #[test]
    fn the_jitter_clamp_follows_the_lines_back_through_near_rest_and_emptying() {
        let mut q = EventQueue::new();
        let mut d: DelayLine<u32> = DelayLine::with_jitter(1000, Rng::new(7));
        let mut twin = Rng::new(7);
        let mut model: VecDeque<(u64, u32)> = VecDeque::new();
        let mut item = 0u32;
        for burst in 0..2_000u64 {
            // A burst of up to 8 items spans at most 800 ns plus 1 µs of jitter: the next
            // starts after the line has drained (the event loop never goes back in time).
            let start = burst * 2_000;
            for k in 0..(burst * 7919) % 9 {
                let at = start + 100 * k;
                let t = at + ((twin.uniform() * 1001.0) as u64).min(1000);
                let t = model.back().map_or(t, |&(b, _)| t.max(b));
                model.push_back((t, item));
                d.push(&mut q, SimTime(at), item, Ev::FwdArrive(0));
                item += 1;
                if k % 3 == 2 {
                    let (now, _) = q.pop().unwrap();
                    let want = model.pop_front().unwrap();
                    assert_eq!((now.0, d.pop(&mut q, Ev::FwdArrive(0))), want);
                }
            }
            while let Some((now, _)) = q.pop() {
                let want = model.pop_front().unwrap();
                assert_eq!((now.0, d.pop(&mut q, Ev::FwdArrive(0))), want);
            }
            assert!(d.is_empty() && model.is_empty());
        }
    }

    /// A draw is the uniform variate times max + 1 truncated to a `u64` (the conversion
    /// before session 10), capped at max, for jitters up to the largest allowed.
    #[test]
    fn a_draw_is_the_u64_truncation_up_to_the_largest_jitter() {
        for (k, max) in [1_000u64, 1 << 40, (1 << 62) + 12_345, (1 << 63) - 1]
            .into_iter()
            .enumerate()
        {
            let seed = 40 + k as u64;
            let (mut twin, span) = (Rng::new(seed), (max + 1) as f64);
            let mut d: DelayLine<u32> = DelayLine::with_jitter(max, Rng::new(seed));
            for i in 0..20_000 {
                d.push(&mut EventQueue::new(), SimTime(0), i, Ev::FwdArrive(0));
                let want = ((twin.uniform() * span) as u64).min(max);
                assert_eq!(d.drain_with_times(), vec![(SimTime(want), i)], "max {max}");
            }
        }
    }

    #[test]
    fn jittered_line_stays_fifo_within_bounds_with_uniform_delays() {
        let mut q = EventQueue::new();
        let mut d: DelayLine<u32> = DelayLine::with_jitter(1000, Rng::new(5));
        // Items 10 µs apart (≫ 1 µs jitter): no clamping, so each extra delay is a raw draw.
        let n = 20_000u64;
        for i in 0..n {
            d.push(&mut q, SimTime(i * 10_000), i as u32, Ev::FwdArrive(0));
        }
        let mut last = 0;
        let mut sum = 0u64;
        for i in 0..n {
            let (now, _) = q.pop().unwrap();
            assert_eq!(d.pop(&mut q, Ev::FwdArrive(0)), i as u32);
            assert!(now.0 >= last);
            let extra = now.0 - i * 10_000;
            assert!(extra <= 1000, "{extra}");
            sum += extra;
            last = now.0;
        }
        // Mean of uniform {0..1000} is 500, sd 289 / sqrt(n) ≈ 2: ±5 sd.
        let mean = sum as f64 / n as f64;
        assert!((mean - 500.0).abs() < 10.5, "{mean}");
        // Items pushed at the same instant keep their order (clamped, never overtaking).
        let mut d: DelayLine<u32> = DelayLine::with_jitter(1000, Rng::new(6));
        for i in 0..50 {
            d.push(&mut q, SimTime(1_000_000_000), i, Ev::FwdArrive(0));
        }
        let mut got = vec![];
        let mut prev = SimTime::ZERO;
        while let Some((now, _)) = q.pop() {
            assert!(now >= prev);
            prev = now;
            got.push(d.pop(&mut q, Ev::FwdArrive(0)));
        }
        assert_eq!(got, (0..50).collect::<Vec<u32>>());
    }
}
