//! The event queue: a calendar queue (`calendar.rs`) ordered by (time, tie, insertion sequence).
//!
//! Rules:
//! - Events are ordered by (time, tie, insertion sequence). `tie` is 0 for
//!   [`EventQueue::schedule`], so ordinary events at the same time run in the order they were
//!   scheduled (FIFO ties) and a run is deterministic whatever the store's internal layout.
//!   [`EventQueue::schedule_tie`] gives an explicit tie key: the engine passes the bits of a
//!   non-negative `f64` (whose bit patterns sort like the numbers) to order exact ties the way
//!   a floating-point clock would, or `u64::MAX` ([`EventQueue::schedule_last`]) to put an
//!   event after the ordinary events of its instant (see `engine.rs`, `scenario::TieBreak`).
//! - An event is packed into 32 bits: 3 bits of kind and a 29-bit id (a packet handle, a port,
//!   a flow's end `2 x flow + side`, a flow; at most [`MAX_ID`], 536 million: a k = 64
//!   fat-tree has 393,216 ports and 65,536 hosts, whose flows have twice as many endpoints,
//!   and memory bounds the packets in flight far below it). Kinds 0 to 4 are the events every
//!   packet, flow or shaper makes, whatever the transport (a transport's timers are its
//!   endpoints' `Timer` events); 5 and 6 are free for the next such event. Kind 7
//!   holds every other event (`Ext`): a sub-kind byte and a 21-bit id (at most
//!   [`MAX_EXT_ID`], two million), so that a new mechanism adds its events as sub-kinds of
//!   their own without taking bits from another's.
//! - The queue uses one of two layouts, chosen by the ties in use; the order is the same in
//!   both:
//!   - *compact* (every tie so far is 0 or `u64::MAX`: `fifo` and `random_timers` runs): an
//!     entry is one 128-bit key, `time << 64 | last << 63 | seq << 32 | event` (16 bytes).
//!     `(time, last, seq)` is unique, so one integer comparison orders two entries.
//!   - *tie-keyed* (from the first other tie on: `float_clock` runs): `time`, `tie`, then
//!     `seq << 32 | event`, compared in that order (24 bytes).
//!   The first tie outside {0, `u64::MAX`} re-encodes the pending entries into the second
//!   layout, so callers need not say in advance which one they need.
//! - *By origin* ([`EventQueue::by_origin`], `sim.tie_break = "origin"`), every entry is
//!   tie-keyed and the queue writes the tie itself: the node the engine says is running
//!   ([`EventQueue::set_origin`]) in bits 43 to 62, and that node's own count of the events it
//!   has scheduled in bits 0 to 42. The tie is unique, so the sequence number never decides,
//!   and it depends on what each node ran alone: the order is the same whichever events were
//!   scheduled first, and so however the network is split into parts that schedule apart.
//! - The store is an enum over three calendars, one per layout (by origin, tie-keyed entries
//!   of its own): one well-predicted branch per push and pop, and no test of the layout inside
//!   the comparisons.
//! - The entries live in a [`Calendar`], which pops them in exactly their `Ord` order (the
//!   order a binary heap of the same entries gives: `calendar.rs`'s property tests compare
//!   the two; docs/performance.md, "Where the engine's time goes").
//! - Sequence numbers are 31 bits. When they run out (every 2^31 insertions), the pending
//!   entries are renumbered `0 .. n` in their order, which keeps every relative order (FIFO
//!   ties included), and numbering resumes at `n`.
//! - Scheduling in the past is a bug (debug assertion); the engine's clock never goes back
//!   (an event in the past would still pop next, in order).

use dcfair_core::time::SimTime;
use std::cmp::Ordering;
use crate::calendar::{Calendar, Entry};

/// What happens when an event fires. Small and `Copy`: packets are referred to by slab handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet (slab handle) finishes arriving at the far end of its link (the slab keeps the
    /// node and port it arrives at).
    Arrive { pkt: u32 },
    /// The port finished serializing its packet and may start the next.
    TxDone { port: u32 },
    /// A transport endpoint's timer (lazy: the endpoint re-checks its own deadline).
    Timer { endpoint: u32 },
    /// A flow (or generator) starts.
    Start { flow: u32 },
    /// A port whose discipline held packets back (a transport's shaper) may send again.
    Wake { port: u32 },
    /// The incast client sends its next request to every server.
    Request,
    /// The measurement window opens (snapshot of cumulative counters).
    Sample,
    /// Periodic sampling of the time series (`[measure] sample_interval_s`; `series.rs`).
    SeriesTick,
    /// FairQ: sample the queues of the FairQ ports (`fairq.sample_interval_us`; `fairq.rs`).
    FairqSample,
    /// FairQ: the window controllers' timer `T` (`fairq.interval_us`).
    FairqTick,
    /// PFC: the oldest pause frame on its way to the port arrives (`pfc.rs`).
    PfcFrame { port: u32 },
    /// PFC: the gate of the port may send its PAUSE again (`pfc.rs`).
    PfcRefresh { port: u32 },
}

/// The largest id an event of kinds 0 to 6 can carry (29 bits).
pub const MAX_ID: u32 = (1 << ID_BITS) - 1;
const ID_BITS: u32 = 29;
/// The largest id an [`Ext`] event can carry (21 bits: the 29 bits of an id less a sub-kind byte).
pub const MAX_EXT_ID: u32 = (1 << EXT_ID_BITS) - 1;
const EXT_ID_BITS: u32 = ID_BITS - 8;

/// The kind of an [`Ext`] event. Kinds 0 to 4 are [`Event::pack`]'s first five; 5 and 6 are
/// free.
const KIND_EXT: u32 = 7;

/// The sub-kinds of kind 7: one byte, 256 of them.
#[repr(u32)]
enum Ext {
    Request = 0,
    Sample = 1,
    SeriesTick = 2,
    FairqSample = 3,
    FairqTick = 4,
    PfcFrame = 5,
    PfcRefresh = 6,
}

impl Event {
    #[inline(always)]
    fn pack(self) -> u64 {
        let (kind, id) = match self {
            Event::Arrive { pkt } => (0, pkt),
            Event::TxDone { port } => (1, port),
            Event::Timer { endpoint } => (2, endpoint),
            Event::Start { flow } => (3, flow),
            Event::Wake { port } => (4, port),
            Event::Request => return Event::ext(Ext::Request, 0),
            Event::Sample => return Event::ext(Ext::Sample, 0),
            Event::SeriesTick => return Event::ext(Ext::SeriesTick, 0),
            Event::FairqSample => return Event::ext(Ext::FairqSample, 0),
            Event::FairqTick => return Event::ext(Ext::FairqTick, 0),
            Event::PfcFrame { port } => return Event::ext(Ext::PfcFrame, port),
            Event::PfcRefresh { port } => return Event::ext(Ext::PfcRefresh, port),
        };
        debug_assert!(id <= MAX_ID, "event id {id} needs more than {ID_BITS} bits");
        (kind << ID_BITS | id) as u64
    }

    /// An event of kind 7: its sub-kind byte, then its id.
    #[inline(always)]
    fn ext(sub: Ext, id: u32) -> u64 {
        debug_assert!(id <= MAX_EXT_ID, "event id {id} needs more than {EXT_ID_BITS} bits");
        (KIND_EXT << ID_BITS | (sub as u32) << EXT_ID_BITS | id) as u64
    }

    #[inline(always)]
    fn unpack(bits: u64) -> Event {
        let id = bits as u32 & MAX_ID;
        match (bits as u32) >> ID_BITS {
            0 => Event::Arrive { pkt: id },
            1 => Event::TxDone { port: id },
            2 => Event::Timer { endpoint: id },
            3 => Event::Start { flow: id },
            4 => Event::Wake { port: id },
            _ => Event::unpack_ext(id),
        }
    }

    /// The event of kind 7 whose sub-kind and id are `bits`.
    #[inline(always)]
    fn unpack_ext(bits: u32) -> Event {
        let id = bits & MAX_EXT_ID;
        match bits >> EXT_ID_BITS {
            0 => Event::Request,
            1 => Event::Sample,
            2 => Event::SeriesTick,
            3 => Event::FairqSample,
            4 => Event::FairqTick,
            5 => Event::PfcFrame { port: id },
            _ => Event::PfcRefresh { port: id },
        }
    }
}

const LAST: u64 = 1 << 63;
/// Bits 32..63 of `low`: the sequence number.
const SEQ_SHIFT: u32 = 32;
const SEQ_LIMIT: u64 = 1 << 31;

/// An entry of the compact layout: the key `time << 64 | low`, `low = last << 63 | seq << 32 |
/// event`. Two `u64`s rather than a `u128`, so that the entry is 16 bytes aligned to 8.
#[derive(Clone, Copy, Debug)]
struct Compact {
    time: u64,
    low: u64,
}

impl Compact {
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.low as u128
    }
}

/// An entry of the tie-keyed layout: `(time, tie, low)`, `low = seq << 32 | event`.
#[derive(Clone, Copy, Debug)]
struct Keyed {
    time: u64,
    tie: u64,
    low: u64,
}

impl Keyed {
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.tie as u128
    }
}

impl Entry for Compact {
    #[inline(always)]
    fn time(&self) -> u64 {
        self.time
    }
}
impl PartialEq for Compact {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Compact {}
impl PartialOrd for Compact {
    #[inline(always)]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Compact {
    #[inline(always)]
    fn cmp(&self, o: &Self) -> Ordering {
        self.key().cmp(&o.key())
    }
}

impl Entry for Keyed {
    #[inline(always)]
    fn time(&self) -> u64 {
        self.time
    }
}
impl PartialEq for Keyed {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key() && self.low == o.low
    }
}
impl Eq for Keyed {}
impl PartialOrd for Keyed {
    #[inline(always)]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Keyed {
    #[inline(always)]
    fn cmp(&self, o: &Self) -> Ordering {
        self.key().cmp(&o.key()).then(self.low.cmp(&o.low))
    }
}

#[derive(Debug)]
enum Store {
    Compact(Calendar<Compact>),
    Keyed(Calendar<Keyed>),
    /// Tie-keyed, the ties written by origin (module rules).
    Origin(Calendar<Keyed>),
}

/// The most nodes a queue by origin tells apart (20 bits).
pub const MAX_ORIGINS: usize = 1 << 20;
const ORIGIN_SHIFT: u32 = 43;
const ORIGIN_COUNT_LIMIT: u64 = 1 << ORIGIN_SHIFT;

/// Deterministic future-event list.
#[derive(Debug)]
pub struct EventQueue {
    store: Store,
    /// The next sequence number.
    seq: u64,
    /// Renumber when `seq` reaches this (`SEQ_LIMIT`; smaller in tests).
    seq_limit: u64,
    now: SimTime,
    now_tie: u64,
    popped: u64,
    /// By origin: the node running, and the events each node has scheduled (empty otherwise).
    origin: u32,
    counts: Vec<u64>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            store: Store::Compact(Calendar::default()),
            seq: 0,
            seq_limit: SEQ_LIMIT,
            now: SimTime::ZERO,
            now_tie: 0,
            popped: 0,
            origin: 0,
            counts: Vec::new(),
        }
    }

    /// A queue that orders ties by origin (module rules) among `origins` nodes (at most
    /// [`MAX_ORIGINS`]), the last of which, `origins - 1`, is running until
    /// [`EventQueue::set_origin`] says otherwise.
    pub fn by_origin(origins: usize) -> EventQueue {
        assert!((1..=MAX_ORIGINS).contains(&origins), "{origins} origins");
        EventQueue { store: Store::Origin(Calendar::default()), origin: origins as u32 - 1, counts: vec![0; origins], ..EventQueue::new() }
    }

    /// By origin: the events scheduled from now on are node `node`'s.
    #[inline(always)]
    pub fn set_origin(&mut self, node: u32) {
        debug_assert!((node as usize) < self.counts.len());
        self.origin = node;
    }

    /// By origin: the tie of the next event the running node schedules (counted as scheduled),
    /// for an event stored in another queue ([`EventQueue::push_tied`]).
    pub fn origin_tie(&mut self) -> u64 {
        let n = &mut self.counts[self.origin as usize];
        *n += 1;
        assert!(*n < ORIGIN_COUNT_LIMIT, "node {} scheduled 2^43 events", self.origin);
        (self.origin as u64) << ORIGIN_SHIFT | *n
    }

    /// By origin: stores `ev` at `at` with the tie another queue gave it
    /// ([`EventQueue::origin_tie`]).
    pub fn push_tied(&mut self, at: SimTime, tie: u64, ev: Event) {
        let Store::Origin(c) = &mut self.store else { panic!("push_tied on a queue that is not by origin") };
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        c.push(Keyed { time: at.0, tie, low: ev.pack() });
    }

    /// By origin: an empty queue that goes on counting where this one is (each node's count,
    /// the running node), for a part of the network run apart.
    pub fn fork(&self) -> EventQueue {
        assert!(matches!(self.store, Store::Origin(_)), "fork of a queue that is not by origin");
        EventQueue { store: Store::Origin(Calendar::default()), origin: self.origin, counts: self.counts.clone(), now: self.now, ..EventQueue::new() }
    }

    /// The pending events as (time, tie, event), in no particular order, leaving none.
    pub fn take_all(&mut self) -> Vec<(SimTime, u64, Event)> {
        match &mut self.store {
            Store::Compact(c) => c.take_all().into_iter().map(|e| (SimTime(e.time), if e.low & LAST != 0 { u64::MAX } else { 0 }, Event::unpack(e.low))).collect(),
            Store::Keyed(c) | Store::Origin(c) => c.take_all().into_iter().map(|e| (SimTime(e.time), e.tie, Event::unpack(e.low))).collect(),
        }
    }

    /// The time of the next event, if any.
    pub fn next_time(&self) -> Option<SimTime> {
        match &self.store {
            Store::Compact(c) => c.peek_min().map(|e| SimTime(e.time)),
            Store::Keyed(c) | Store::Origin(c) => c.peek_min().map(|e| SimTime(e.time)),
        }
    }
    /// Current time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Events popped so far.
    pub fn events(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        match &self.store {
            Store::Compact(c) => c.len(),
            Store::Keyed(c) | Store::Origin(c) => c.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        self.schedule_tie(at, 0, ev);
    }
    /// Schedules `ev` at `at`; among events of the same time, lower `tie` runs first (then
    /// insertion order). By origin, the queue writes the tie (module rules).
    ///
    /// Always inlined, the rare layouts out of line: it is on the engine's hot path, where
    /// LLVM stopped inlining a plain `#[inline]` once the queue had a third layout.
    #[inline(always)]
    pub fn schedule_tie(&mut self, at: SimTime, tie: u64, ev: Event) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        if self.seq >= self.seq_limit {
            self.renumber();
        }
        let low = self.seq << SEQ_SHIFT | ev.pack();
        match &mut self.store {
            Store::Compact(c) if tie == 0 || tie == u64::MAX => {
                let last = if tie == 0 { 0 } else { LAST };
                c.push(Compact { time: at.0, low: last | low });
            }
            Store::Keyed(c) => c.push(Keyed { time: at.0, tie, low }),
            _ => self.schedule_other(at, tie, ev, low),
        }
        self.seq += 1;
    }

    /// [`EventQueue::schedule_tie`] of a compact queue's first tie ([`EventQueue::first_tie`]),
    /// or of a queue by origin.
    #[inline(never)]
    fn schedule_other(&mut self, at: SimTime, tie: u64, ev: Event, low: u64) {
        if let Store::Compact(_) = self.store {
            return self.first_tie(at, tie, ev);
        }
        let tie = self.origin_tie();
        let Store::Origin(c) = &mut self.store else { unreachable!("the other layouts are handled inline") };
        c.push(Keyed { time: at.0, tie, low });
    }

    /// The first tie that is neither "ordinary" nor "last": every pending entry moves to the
    /// tie-keyed layout (renumbered `0 .. n`), then the entry is stored there with sequence
    /// number `n`. Kept out of line so that [`EventQueue::schedule_tie`] inlines into the
    /// engine's hot path.
    #[cold]
    #[inline(never)]
    fn first_tie(&mut self, at: SimTime, tie: u64, ev: Event) {
        self.to_tie_keyed();
        let low = self.seq << SEQ_SHIFT | ev.pack();
        let Store::Keyed(c) = &mut self.store else { unreachable!("just converted") };
        c.push(Keyed { time: at.0, tie, low });
    }
    /// Like [`EventQueue::schedule`], but after every event of the same instant that was
    /// (or will be) scheduled with `schedule`.
    #[inline]
    pub fn schedule_last(&mut self, at: SimTime, ev: Event) {
        self.schedule_tie(at, u64::MAX, ev);
    }
    /// The tie key of the last event popped.
    #[inline]
    pub fn now_tie(&self) -> u64 {
        self.now_tie
    }
    /// Pops the next event if it is not later than `until`, advancing the clock (always
    /// inlined: the engine's hot path).
    #[inline(always)]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        let (time, tie, low) = match &mut self.store {
            Store::Compact(c) => {
                let e = c.pop_until(until.0)?;
                (e.time, if e.low & LAST != 0 { u64::MAX } else { 0 }, e.low)
            }
            Store::Keyed(c) | Store::Origin(c) => {
                let e = c.pop_until(until.0)?;
                (e.time, e.tie, e.low)
            }
        };
        self.now = SimTime(time);
        self.now_tie = tie;
        self.popped += 1;
        Some((self.now, Event::unpack(low)))
    }

    /// The next event, if the store can tell cheaply (a hint for prefetching).
    #[inline]
    pub fn peek_hint(&self) -> Option<Event> {
        match &self.store {
            Store::Compact(c) => c.peek_near().map(|e| Event::unpack(e.low)),
            Store::Keyed(c) | Store::Origin(c) => c.peek_near().map(|e| Event::unpack(e.low)),
        }
    }

    /// The next `N` events, as far as the store can tell cheaply (hints for prefetching; an
    /// event scheduled before they pop can come first). See [`Calendar::peek_ahead`].
    #[inline]
    pub fn peek_ahead<const N: usize>(&self) -> [Option<Event>; N] {
        match &self.store {
            Store::Compact(c) => c.peek_ahead::<N>().map(|e| e.map(|e| Event::unpack(e.low))),
            Store::Keyed(c) | Store::Origin(c) => c.peek_ahead::<N>().map(|e| e.map(|e| Event::unpack(e.low))),
        }
    }

    /// Switches from the compact to the tie-keyed layout: re-encodes the pending entries with
    /// sequence numbers `0 .. n` in their order.
    #[cold]
    fn to_tie_keyed(&mut self) {
        let Store::Compact(c) = &mut self.store else { return };
        let mut v = c.take_all();
        v.sort_unstable(); // entries are distinct
        let mut keyed = Calendar::like(c);
        for (i, e) in v.iter().enumerate() {
            keyed.push(Keyed {
                time: e.time,
                tie: if e.low & LAST != 0 { u64::MAX } else { 0 },
                low: (i as u64) << SEQ_SHIFT | e.low & u32::MAX as u64,
            });
        }
        self.seq = v.len() as u64;
        self.store = Store::Keyed(keyed);
    }

    /// Gives the pending entries sequence numbers `0 .. n` in their order, so that numbering
    /// can go on from `n` without wrapping.
    #[cold]
    fn renumber(&mut self) {
        let n = self.len() as u64;
        assert!(n < self.seq_limit, "more pending events than sequence numbers");
        let seq = |i: usize| (i as u64) << SEQ_SHIFT;
        match &mut self.store {
            Store::Compact(c) => {
                let mut v = c.take_all();
                v.sort_unstable();
                for (i, mut e) in v.into_iter().enumerate() {
                    e.low = e.low & LAST | seq(i) | e.low & u32::MAX as u64;
                    c.push(e);
                }
            }
            Store::Keyed(c) | Store::Origin(c) => {
                let mut v = c.take_all();
                v.sort_unstable();
                for (i, mut e) in v.into_iter().enumerate() {
                    e.low = seq(i) | e.low & u32::MAX as u64;
                    c.push(e);
                }
            }
        }
        self.seq = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_fifo() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), Event::Start { flow: 1 });
        q.schedule(SimTime(3), Event::Start { flow: 2 });
        q.schedule(SimTime(5), Event::Start { flow: 3 });
        q.schedule(SimTime(5), Event::Start { flow: 4 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime::MAX)).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(3), Event::Start { flow: 2 }),
                (SimTime(5), Event::Start { flow: 1 }),
                (SimTime(5), Event::Start { flow: 3 }),
                (SimTime(5), Event::Start { flow: 4 }),
            ]
        );
        assert_eq!(q.now(), SimTime(5));
        assert_eq!(q.events(), 4);
    }

    /// Three nodes each schedule their own events (some at one shared instant) in a fixed
    /// order; however the three sequences interleave, the queue pops the same order: by time,
    /// then node, then each node's own order.
    #[test]
    fn by_origin_the_order_does_not_depend_on_which_node_scheduled_first() {
        use rand::seq::SliceRandom;
        let plan: Vec<Vec<(u64, Event)>> = (0..3u32)
            .map(|n| (0..20u32).map(|i| (5 + (i as u64 * 7 + n as u64) % 4, Event::Start { flow: n * 100 + i })).collect())
            .collect();
        let pops = |order: &[u32]| {
            let mut q = EventQueue::by_origin(4);
            let mut next = [0usize; 3];
            for &n in order {
                q.set_origin(n);
                let (t, ev) = plan[n as usize][next[n as usize]];
                next[n as usize] += 1;
                q.schedule(SimTime(t), ev);
            }
            std::iter::from_fn(|| q.pop_until(SimTime::MAX)).collect::<Vec<_>>()
        };
        let mut order: Vec<u32> = (0..3).flat_map(|n| std::iter::repeat(n).take(20)).collect();
        let first = pops(&order);
        let mut rng = dcfair_core::rng::Streams::new(5).stream("t", 0);
        for _ in 0..20 {
            order.shuffle(&mut rng);
            assert_eq!(pops(&order), first);
        }
        // by time, then node, then the node's own order
        let key = |e: &(SimTime, Event)| match e.1 {
            Event::Start { flow } => (e.0, flow / 100, flow % 100),
            _ => unreachable!(),
        };
        assert!(first.windows(2).all(|w| key(&w[0]) < key(&w[1])), "{first:?}");
        // FIFO ties are not: the same shuffles give other orders
        let fifo = |order: &[u32]| {
            let mut q = EventQueue::new();
            let mut next = [0usize; 3];
            for &n in order {
                let (t, ev) = plan[n as usize][next[n as usize]];
                next[n as usize] += 1;
                q.schedule(SimTime(t), ev);
            }
            std::iter::from_fn(|| q.pop_until(SimTime::MAX)).collect::<Vec<_>>()
        };
        order.shuffle(&mut rng);
        let a = fifo(&order);
        order.shuffle(&mut rng);
        assert_ne!(fifo(&order), a);
    }

    #[test]
    fn last_events_follow_the_ordinary_ones_of_their_instant() {
        let mut q = EventQueue::new();
        q.schedule_last(SimTime(5), Event::Start { flow: 1 });
        q.schedule(SimTime(5), Event::Start { flow: 2 });
        q.schedule_last(SimTime(4), Event::Start { flow: 3 });
        q.schedule_last(SimTime(5), Event::Start { flow: 4 });
        q.schedule(SimTime(5), Event::Start { flow: 5 });
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_until(SimTime::MAX))
            .map(|(_, e)| match e {
                Event::Start { flow } => flow,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, [3, 2, 5, 1, 4]);
    }

    #[test]
    fn tie_keys_order_events_of_one_instant() {
        let mut q = EventQueue::new();
        let f = |x: f64| x.to_bits();
        q.schedule_tie(SimTime(5), f(5.000000000000002), Event::Start { flow: 1 });
        q.schedule_tie(SimTime(5), f(4.999999999999999), Event::Start { flow: 2 });
        q.schedule_tie(SimTime(4), f(9.0), Event::Start { flow: 3 });
        q.schedule_tie(SimTime(5), f(5.000000000000002), Event::Start { flow: 4 });
        let order: Vec<(u32, u64)> = std::iter::from_fn(|| {
            let (_, e) = q.pop_until(SimTime::MAX)?;
            let Event::Start { flow } = e else { unreachable!() };
            Some((flow, q.now_tie()))
        })
        .collect();
        assert_eq!(order.iter().map(|x| x.0).collect::<Vec<_>>(), [3, 2, 1, 4]);
        assert_eq!(order[1].1, f(4.999999999999999));
    }

    #[test]
    fn the_hints_name_the_events_that_pop_next_in_both_layouts() {
        let mut q = EventQueue::new();
        for (i, t) in [9u64, 3, 3, 7, 1_000_000_000, 2].into_iter().enumerate() {
            q.schedule(SimTime(t), Event::Arrive { pkt: i as u32 });
        }
        q.schedule_last(SimTime(3), Event::TxDone { port: 4 });
        let mut popped = 0;
        let mut seconds = 0;
        let mut check = |q: &mut EventQueue| {
            let [hint, hint2] = q.peek_ahead::<2>();
            assert_eq!(hint, q.peek_hint());
            let (_, e) = q.pop_until(SimTime::MAX).unwrap();
            assert!(hint.is_none() || hint == Some(e), "hint {hint:?}, popped {e:?}");
            popped += hint.is_some() as u32;
            // nothing is scheduled between two pops here: the second hint pops next
            if hint2.is_some() {
                assert_eq!(hint2, q.peek_hint(), "second hint {hint2:?}");
                seconds += 1;
            }
        };
        for _ in 0..3 {
            check(&mut q);
        }
        q.schedule_tie(SimTime(4), 1.5f64.to_bits(), Event::Wake { port: 1 }); // tie-keyed from here
        while !q.is_empty() {
            check(&mut q);
        }
        assert!(seconds >= 3, "the second hint named only {seconds} events");
        assert!(popped >= 6, "the hint named only {popped} of 8 events");
    }

    #[test]
    fn stops_at_horizon() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), Event::Sample);
        assert!(q.pop_until(SimTime(9)).is_none());
        assert_eq!(q.len(), 1);
        assert!(q.pop_until(SimTime(10)).is_some());
    }

    // --- the packed entry -------------------------------------------------------------------
    #[test]
    fn entries_are_small() {
        assert_eq!(std::mem::size_of::<Compact>(), 16);
        assert_eq!(std::mem::size_of::<Keyed>(), 24);
    }

    #[test]
    fn events_pack_into_32_bits_and_back() {
        for id in [0, 1, 12345, MAX_ID] {
            for ev in [
                Event::Arrive { pkt: id },
                Event::TxDone { port: id },
                Event::Timer { endpoint: id },
                Event::Start { flow: id },
                Event::Wake { port: id },
                Event::Request,
                Event::Sample,
                Event::SeriesTick,
                Event::FairqSample,
                Event::FairqTick,
            ] {
                assert!(ev.pack() >> 32 == 0);
                assert_eq!(Event::unpack(ev.pack()), ev);
            }
        }
        for id in [0, 1, 12345, MAX_EXT_ID] {
            for ev in [Event::PfcFrame { port: id }, Event::PfcRefresh { port: id }] {
                assert_eq!(Event::unpack(ev.pack()), ev);
            }
        }
    }

    #[test]
    fn now_tie_reports_the_tie_in_both_layouts() {
        let mut q = EventQueue::new();
        q.schedule_last(SimTime(1), Event::Sample);
        q.schedule(SimTime(2), Event::Sample);
        q.pop_until(SimTime::MAX);
        assert_eq!(q.now_tie(), u64::MAX);
        q.schedule_tie(SimTime(3), 7, Event::Sample); // switches layout with one entry pending
        q.schedule_last(SimTime(3), Event::Sample);
        let ties: Vec<u64> = std::iter::from_fn(|| q.pop_until(SimTime::MAX).map(|_| q.now_tie())).collect();
        assert_eq!(ties, [0, 7, u64::MAX]);
    }

    #[test]
    fn switching_layout_keeps_the_order_of_pending_ties() {
        let mut q = EventQueue::new();
        for i in 0..100 {
            let ev = Event::Start { flow: i };
            if i % 3 == 0 { q.schedule_last(SimTime(9), ev) } else { q.schedule(SimTime(9), ev) }
        }
        q.schedule(SimTime(1), Event::Sample);
        q.schedule(SimTime(2), Event::Sample);
        q.pop_until(SimTime::MAX); // the store is no longer in insertion order
        q.schedule_tie(SimTime(9), 5, Event::Start { flow: 1000 });
        q.schedule(SimTime(9), Event::Start { flow: 1001 });
        q.pop_until(SimTime::MAX);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_until(SimTime::MAX))
            .map(|(_, e)| if let Event::Start { flow } = e { flow } else { unreachable!() })
            .collect();
        let ordinary = (0..100).filter(|i| i % 3 != 0).chain([1001]);
        let want: Vec<u32> = ordinary.chain([1000]).chain((0..100).filter(|i| i % 3 == 0)).collect();
        assert_eq!(order, want);
    }

    /// One scheduling step of the model test: (time offset, tie choice, pops before it).
    type Step = (u8, u8, u8);

    /// Runs `steps` through a queue and through the definition (a stable sort by
    /// (time, tie) of what is pending), and compares what pops out.
    fn check_against_the_definition(steps: &[Step], ties: &[u64], seq_limit: u64) {
        let mut q = EventQueue::new();
        q.seq_limit = seq_limit;
        let mut model: Vec<(u64, u64, u32)> = Vec::new(); // (time, tie, id), in insertion order
        let mut now = 0u64;
        let pop = |q: &mut EventQueue, model: &mut Vec<(u64, u64, u32)>, now: &mut u64| {
            let got = q.pop_until(SimTime::MAX).map(|(t, e)| {
                let Event::Start { flow } = e else { unreachable!() };
                (t.0, q.now_tie(), flow)
            });
            // min_by_key returns the first of equal minima: the earliest inserted
            let want = model.iter().enumerate().min_by_key(|(_, &(t, tie, _))| (t, tie)).map(|(i, _)| i);
            let want = want.map(|i| model.remove(i));
            assert_eq!(got, want);
            if let Some((t, _, _)) = got {
                *now = t;
            }
        };
        for (id, &(dt, tie, pops)) in steps.iter().enumerate() {
            // about one pop per insertion, and never more than 48 pending (renumbering needs
            // fewer pending entries than sequence numbers)
            for _ in 0..(pops % 3).max((model.len() >= 48) as u8) {
                pop(&mut q, &mut model, &mut now);
            }
            let (t, tie) = (now + (dt % 5) as u64, ties[tie as usize % ties.len()]);
            q.schedule_tie(SimTime(t), tie, Event::Start { flow: id as u32 });
            model.push((t, tie, id as u32));
        }
        while !model.is_empty() {
            pop(&mut q, &mut model, &mut now);
        }
        assert!(q.pop_until(SimTime::MAX).is_none());
    }

    use proptest::prelude::*;
    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// `fifo` and `random_timers` runs: ties 0 and MAX only, the compact layout throughout,
        /// without and with renumbering.
        #[test]
        fn compact_layout_orders_as_defined(
            steps in proptest::collection::vec(any::<Step>(), 0..400),
            limit in 49u64..80,
        ) {
            check_against_the_definition(&steps, &[0, u64::MAX], SEQ_LIMIT);
            check_against_the_definition(&steps, &[0, u64::MAX], limit);
        }

        /// `float_clock` runs: arbitrary ties (some equal), the switch of layout part-way, and
        /// renumbering every few dozen insertions.
        #[test]
        fn tie_keyed_layout_orders_as_defined(
            steps in proptest::collection::vec(any::<Step>(), 0..400),
            limit in 49u64..80,
        ) {
            let f = |x: f64| x.to_bits();
            check_against_the_definition(&steps, &[0, 0, u64::MAX, f(1.5), f(1.5000000000000002), f(0.1), 3], SEQ_LIMIT);
            check_against_the_definition(&steps, &[0, f(2.0), f(2.0), u64::MAX, f(1e-12)], limit);
        }
    }
}

