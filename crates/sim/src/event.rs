//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! Rules:
//! - Events are ordered by (time, tie, insertion sequence). `tie` is 0 for
//!   [`EventQueue::schedule`], so ordinary events at the same time run in the order they were
//!   scheduled (FIFO ties) and a run is deterministic whatever the heap's internal order.
//!   [`EventQueue::schedule_tie`] gives an explicit tie key: the engine passes the bits of a
//!   non-negative `f64` (whose bit patterns sort like the numbers) to order exact ties the way
//!   a floating-point clock would, or `u64::MAX` ([`EventQueue::schedule_last`]) to put an
//!   event after the ordinary events of its instant (see `engine.rs`, `scenario::TieBreak`).
//! - The ordering key is one `u128` (`time << 64 | tie`) and a `u64` sequence number: integer
//!   comparisons only. Packets never travel inside events, only their slab handles.
//! - Scheduling in the past is a bug (debug assertion); the engine's clock never goes back.

use dcfair_core::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens when an event fires. Small and `Copy`: packets are referred to by slab handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet (slab handle) finishes arriving at `node` through its port `port`.
    Arrive { node: u32, port: u16, pkt: u32 },
    /// The port finished serializing its packet and may start the next.
    TxDone { port: u32 },
    /// A transport endpoint's timer (lazy: the endpoint re-checks its own deadline).
    Timer { endpoint: u32 },
    /// A flow (or generator) starts.
    Start { flow: u32 },
    /// The incast client sends its next request to every server.
    Request,
    /// A UDP source emits its next packet.
    UdpSend { source: u32 },
    /// The measurement window opens (snapshot of cumulative counters).
    Sample,
    /// Periodic sampling of the time series (`[measure] sample_interval_s`; `series.rs`).
    SeriesTick,
}

#[derive(Debug)]
struct Entry {
    /// `time << 64 | tie`.
    key: u128,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key).then(o.seq.cmp(&self.seq))
    }
}

/// Deterministic future-event list.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: SimTime,
    now_tie: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue { heap: BinaryHeap::with_capacity(1 << 12), ..Default::default() }
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
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        self.schedule_tie(at, 0, ev);
    }
    /// Schedules `ev` at `at`; among events of the same time, lower `tie` runs first (then
    /// insertion order).
    #[inline]
    pub fn schedule_tie(&mut self, at: SimTime, tie: u64, ev: Event) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        self.seq += 1;
        self.heap.push(Entry { key: (at.0 as u128) << 64 | tie as u128, seq: self.seq, ev });
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
    /// Pops the next event if it is not later than `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        let top = self.heap.peek()?;
        let t = SimTime((top.key >> 64) as u64);
        if t > until {
            return None;
        }
        let e = self.heap.pop().expect("peeked");
        self.now = t;
        self.now_tie = e.key as u64;
        self.popped += 1;
        Some((t, e.ev))
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
    fn stops_at_horizon() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), Event::Sample);
        assert!(q.pop_until(SimTime(9)).is_none());
        assert_eq!(q.len(), 1);
        assert!(q.pop_until(SimTime(10)).is_some());
    }
}
