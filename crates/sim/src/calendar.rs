//! A calendar queue: the store behind the event queue (`event.rs`).
//!
//! Rules:
//! - It holds entries of any totally ordered type that has a time in picoseconds ([`Entry`]) and
//!   pops them in exactly their `Ord` order, the order a binary heap of the same entries would
//!   give. Entries must be distinct (the event queue's carry a unique sequence number). Where an
//!   entry is kept never changes the order, only the cost of finding it.
//! - Time only moves forward: an entry must not be earlier than the last entry popped (the
//!   engine's clock). One that is anyway is kept in the current bucket and popped next, in
//!   order, as a heap would.
//! - Layout: a ring of `2^bits` buckets, each `2^shift` ps wide, covering the bucket numbers
//!   `[cur, cur + 2^bits)`, where `cur` is the bucket of the last entry popped. A bucket is a
//!   list sorted by `Ord`, linked through a pool of nodes (`u32` indices, a free list), with its
//!   head and tail: a new entry is compared with the tail first, so entries that arrive in
//!   order (a burst at one instant, FIFO) are appended in constant time. A bitmap of non-empty
//!   buckets finds the next one. Entries beyond the ring (retransmission timers, far-off flow
//!   starts) wait in a binary heap (`far`) and move into the ring when `cur` comes within
//!   reach of them.
//! - Pop: the head of the first non-empty bucket at or after `cur`, in ring order. Every ring
//!   entry's bucket lies in `[cur, cur + 2^bits)` and every `far` entry's at or beyond
//!   `cur + 2^bits`, so that head is the least entry of all.
//! - The geometry follows the traffic, for speed only: after 2^10, 2^11, ... and then every
//!   2^16 pops, the bucket width becomes the least power of two not below [`GAPS_PER_BUCKET`] mean
//!   gaps between the pops of that interval, and the ring about twice as many buckets as
//!   entries pending (2^6 to 2^18); when either is off by more than a factor of two, every
//!   entry is re-filed. A fat-tree at 10 Gbit/s pops an event every 2 ns or so and keeps about
//!   a thousand pending; buckets are then 4 ns wide and hold one or two entries each.
//! - No allocation on the hot path once the pool and the heap have grown to the run's peak.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What the calendar stores: ordered, with a time (picoseconds) that agrees with the order
/// (`a < b` implies `a.time() <= b.time()`).
pub trait Entry: Copy + Ord + std::fmt::Debug {
    fn time(&self) -> u64;
}

/// Target mean number of pops per bucket width.
pub const GAPS_PER_BUCKET: u64 = 1;

const NIL: u32 = u32::MAX;
const MIN_BITS: u32 = 6;
const MAX_BITS: u32 = 18;
/// Pops between two looks at the geometry once the first few have been made.
const CHECK_EVERY: u64 = 1 << 16;

#[derive(Clone, Copy, Debug)]
struct Node<T> {
    e: T,
    next: u32,
}

/// A calendar queue of `T` (see the module rules).
#[derive(Debug)]
pub struct Calendar<T: Entry> {
    /// Bucket width: `2^shift` ps.
    shift: u32,
    /// `2^bits` buckets.
    bits: u32,
    /// The bucket number (`time >> shift`) of the last entry popped.
    cur: u64,
    head: Vec<u32>,
    tail: Vec<u32>,
    /// Bit `i` set: bucket `i` is not empty.
    occupied: Vec<u64>,
    nodes: Vec<Node<T>>,
    /// Head of the free list of `nodes`, linked through `next`.
    free: u32,
    /// Entries in the ring.
    near: usize,
    far: BinaryHeap<Reverse<T>>,
    /// Bucket number of the earliest `far` entry (`u64::MAX`: none).
    far_min: u64,
    /// Time of the last entry popped.
    now: u64,
    pops: u64,
    next_check: u64,
    /// Pops and time at the previous look at the geometry.
    check_pops: u64,
    check_time: u64,
    /// Re-filings so far (for tests and curiosity).
    refiled: u32,
}

impl<T: Entry> Default for Calendar<T> {
    fn default() -> Self {
        Calendar::new(0, 12, 10)
    }
}

impl<T: Entry> Calendar<T> {
    /// An empty calendar whose clock is at `now`, with buckets of `2^shift` ps and `2^bits`
    /// of them (the geometry then adapts by itself).
    pub fn new(now: u64, shift: u32, bits: u32) -> Calendar<T> {
        let bits = bits.clamp(MIN_BITS, MAX_BITS);
        let shift = shift.min(63);
        let n = 1usize << bits;
        Calendar {
            shift,
            bits,
            cur: now >> shift,
            head: vec![NIL; n],
            tail: vec![NIL; n],
            occupied: vec![0; n / 64],
            nodes: Vec::with_capacity(1 << 12),
            free: NIL,
            near: 0,
            far: BinaryHeap::new(),
            far_min: u64::MAX,
            now,
            pops: 0,
            next_check: 1 << 10,
            check_pops: 0,
            check_time: now,
            refiled: 0,
        }
    }

    /// An empty calendar with the geometry and clock of `other`.
    pub fn like<U: Entry>(other: &Calendar<U>) -> Calendar<T> {
        let mut c = Calendar::new(other.now, other.shift, other.bits);
        (c.pops, c.next_check, c.check_pops, c.check_time) = (other.pops, other.next_check, other.check_pops, other.check_time);
        c
    }

    pub fn len(&self) -> usize {
        self.near + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Times every entry was re-filed into a new geometry.
    pub fn refiled(&self) -> u32 {
        self.refiled
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        (1usize << self.bits) - 1
    }

    /// One past the last bucket number the ring covers.
    #[inline(always)]
    fn limit(&self) -> u64 {
        self.cur.saturating_add(1 << self.bits)
    }

    #[inline]
    pub fn push(&mut self, e: T) {
        let b = (e.time() >> self.shift).max(self.cur);
        if b >= self.limit() {
            self.push_far(b, e);
        } else {
            self.insert(b, e);
        }
    }

    #[cold]
    fn push_far(&mut self, b: u64, e: T) {
        self.far_min = self.far_min.min(b);
        self.far.push(Reverse(e));
    }

    /// Files `e` into ring bucket number `b` (within the ring's span).
    #[inline(always)]
    fn insert(&mut self, b: u64, e: T) {
        let i = b as usize & self.mask();
        let n = match self.free {
            NIL => {
                self.nodes.push(Node { e, next: NIL });
                (self.nodes.len() - 1) as u32
            }
            f => {
                self.free = self.nodes[f as usize].next;
                self.nodes[f as usize] = Node { e, next: NIL };
                f
            }
        };
        self.near += 1;
        let h = self.head[i];
        if h == NIL {
            self.head[i] = n;
            self.tail[i] = n;
            self.occupied[i >> 6] |= 1 << (i & 63);
            return;
        }
        let t = self.tail[i];
        if self.nodes[t as usize].e < e {
            self.nodes[t as usize].next = n;
            self.tail[i] = n;
        } else if e < self.nodes[h as usize].e {
            self.nodes[n as usize].next = h;
            self.head[i] = n;
        } else {
            // somewhere after the head and before the tail
            let mut p = h;
            loop {
                let q = self.nodes[p as usize].next;
                if q == NIL || e < self.nodes[q as usize].e {
                    self.nodes[n as usize].next = q;
                    self.nodes[p as usize].next = n;
                    if q == NIL {
                        self.tail[i] = n;
                    }
                    break;
                }
                p = q;
            }
        }
    }

    /// The ring index of the first non-empty bucket at or after `cur` (the ring must not be
    /// empty).
    #[inline]
    fn first_occupied(&self) -> usize {
        let i0 = self.cur as usize & self.mask();
        let w0 = i0 >> 6;
        let m = self.occupied[w0] & (!0u64 << (i0 & 63));
        if m != 0 {
            return w0 << 6 | m.trailing_zeros() as usize;
        }
        let words = self.occupied.len();
        // the last round looks at word w0 again: its bits below i0 are the end of the span
        for k in 1..=words {
            let w = (w0 + k) & (words - 1);
            let m = self.occupied[w];
            if m != 0 {
                return w << 6 | m.trailing_zeros() as usize;
            }
        }
        unreachable!("the ring holds {} entries but no bucket is marked", self.near)
    }

    /// Removes and returns the least entry if its time is not later than `until`.
    #[inline]
    pub fn pop_until(&mut self, until: u64) -> Option<T> {
        if self.near == 0 {
            let &Reverse(e) = self.far.peek()?;
            if e.time() > until {
                return None;
            }
            self.advance((e.time() >> self.shift).max(self.cur));
            if self.near == 0 {
                // still out of reach: only at the very end of time, where the span saturates
                self.far.pop();
                self.far_min = self.far.peek().map_or(u64::MAX, |r| (r.0.time() >> self.shift).max(self.cur));
                return Some(self.popped(e));
            }
        }
        let i = self.first_occupied();
        let h = self.head[i];
        let Node { e, next } = self.nodes[h as usize];
        if e.time() > until {
            return None;
        }
        self.head[i] = next;
        if next == NIL {
            self.occupied[i >> 6] &= !(1 << (i & 63));
        }
        self.nodes[h as usize].next = self.free;
        self.free = h;
        self.near -= 1;
        let b = e.time() >> self.shift;
        if b > self.cur {
            self.advance(b);
        }
        Some(self.popped(e))
    }

    /// The least entry, if any (the ring's least and `far`'s, compared); changes nothing.
    pub fn peek_min(&self) -> Option<T> {
        let near = (self.near != 0).then(|| self.nodes[self.head[self.first_occupied()] as usize].e);
        let far = self.far.peek().map(|r| r.0);
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The least entry of the ring, if the ring holds any (a hint for prefetching: `far` is
    /// not looked at). Also asks for the node of the entry after it (found as
    /// [`Calendar::peek_ahead`] finds the next), so that the next peek finds its node cached.
    #[inline]
    pub fn peek_near(&self) -> Option<T> {
        if self.near == 0 {
            return None;
        }
        let i = self.first_occupied();
        let Node { e, next } = self.nodes[self.head[i] as usize];
        if let Some((after, _)) = self.after(next, i) {
            dcfair_core::hint::prefetch(self.nodes.as_ptr().wrapping_add(after as usize));
        }
        Some(e)
    }

    /// The least `N` entries of the ring, as far as the ring can tell cheaply (hints for
    /// prefetching: `far` is not looked at): each after the first is looked for in the bucket
    /// of the one before and in the later buckets of the same bitmap word, and the list stops
    /// (`None`s) where it is not there. Also asks for the node of the entry after those, found
    /// the same way, so that the next call finds its last node cached: a caller that calls this
    /// once per pop learns each entry `N` pops before it is popped.
    #[inline]
    pub fn peek_ahead<const N: usize>(&self) -> [Option<T>; N] {
        let mut out = [None; N];
        if self.near == 0 {
            return out;
        }
        let mut i = self.first_occupied();
        let mut h = self.head[i];
        for slot in out.iter_mut() {
            let Node { e, next } = self.nodes[h as usize];
            *slot = Some(e);
            let Some((n, j)) = self.after(next, i) else { return out };
            (h, i) = (n, j);
        }
        dcfair_core::hint::prefetch(self.nodes.as_ptr().wrapping_add(h as usize));
        out
    }

    /// The node after one whose `next` is `next`, in bucket `i`: `next` itself, else the head
    /// of the next occupied bucket of the same bitmap word; with the bucket it is in.
    #[inline(always)]
    fn after(&self, next: u32, i: usize) -> Option<(u32, usize)> {
        if next != NIL {
            return Some((next, i));
        }
        let m = self.occupied[i >> 6] & (!1u64 << (i & 63));
        if m == 0 {
            return None;
        }
        let j = (i & !63) | m.trailing_zeros() as usize;
        Some((self.head[j], j))
    }

    /// Bookkeeping of a pop.
    #[inline(always)]
    fn popped(&mut self, e: T) -> T {
        self.now = self.now.max(e.time());
        self.pops += 1;
        if self.pops == self.next_check {
            self.check_geometry();
        }
        e
    }

    /// Moves the cursor to bucket number `b` and brings the `far` entries it now reaches into
    /// the ring.
    #[inline]
    fn advance(&mut self, b: u64) {
        self.cur = b;
        if self.far_min < self.limit() {
            self.pull_far();
        }
    }

    #[cold]
    fn pull_far(&mut self) {
        let limit = self.limit();
        while let Some(&Reverse(e)) = self.far.peek() {
            let b = (e.time() >> self.shift).max(self.cur);
            if b >= limit {
                self.far_min = b;
                return;
            }
            self.far.pop();
            self.insert(b, e);
        }
        self.far_min = u64::MAX;
    }

    /// Every entry, in no particular order; the calendar is left empty (its geometry and clock
    /// kept).
    pub fn take_all(&mut self) -> Vec<T> {
        let mut v: Vec<T> = Vec::with_capacity(self.len());
        for i in 0..self.head.len() {
            let mut n = self.head[i];
            while n != NIL {
                v.push(self.nodes[n as usize].e);
                n = self.nodes[n as usize].next;
            }
            self.head[i] = NIL;
            self.tail[i] = NIL;
        }
        self.occupied.iter_mut().for_each(|w| *w = 0);
        self.nodes.clear();
        self.free = NIL;
        self.near = 0;
        v.extend(self.far.drain().map(|Reverse(e)| e));
        self.far_min = u64::MAX;
        v
    }

    /// Looks at the traffic since the last look and re-files every entry if the bucket width
    /// or the number of buckets is off by more than a factor of two.
    #[cold]
    fn check_geometry(&mut self) {
        let pops = self.pops - self.check_pops;
        let gap = (self.now - self.check_time) / pops;
        (self.check_pops, self.check_time) = (self.pops, self.now);
        self.next_check = self.pops + (self.pops.max(1 << 10)).min(CHECK_EVERY);
        let width = gap.saturating_mul(GAPS_PER_BUCKET).max(1);
        let shift = (64 - (width - 1).leading_zeros()).min(63); // ceil(log2 width)
        let want = (2 * self.len()).max(1);
        let bits = (usize::BITS - (want - 1).leading_zeros()).clamp(MIN_BITS, MAX_BITS);
        let cheap = self.len() as u64 <= CHECK_EVERY / 16;
        if (cheap && (shift, bits) != (self.shift, self.bits)) || shift.abs_diff(self.shift) > 1 || bits.abs_diff(self.bits) > 1 {
            self.refile(shift, bits);
        }
    }

    /// Re-files every entry into a ring of `2^bits` buckets of `2^shift` ps.
    fn refile(&mut self, shift: u32, bits: u32) {
        let v = self.take_all();
        self.shift = shift;
        if bits != self.bits {
            self.bits = bits;
            let n = 1usize << bits;
            self.head = vec![NIL; n];
            self.tail = vec![NIL; n];
            self.occupied = vec![0; n / 64];
        }
        self.cur = self.now >> shift;
        self.refiled += 1;
        for e in v {
            self.push(e);
        }
    }

    /// Sets the geometry now (tests).
    #[cfg(test)]
    fn force_geometry(&mut self, shift: u32, bits: u32) {
        self.refile(shift, bits.clamp(MIN_BITS, MAX_BITS));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (time, insertion number): the event queue's order in miniature.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct E(u64, u32);
    impl Entry for E {
        fn time(&self) -> u64 {
            self.0
        }
    }

    /// A workload step: (pops before the push, time offset class, offset).
    type Step = (u8, u8, u32);

    /// Runs `steps` through a calendar and a binary heap side by side; every pop must agree.
    /// Offsets: mostly near (a few buckets), some far beyond the ring, some equal to `now`.
    fn against_a_heap(steps: &[Step], shift: u32, bits: u32, until_every: usize) {
        let mut c: Calendar<E> = Calendar::new(0, shift, bits);
        let mut h: BinaryHeap<Reverse<E>> = BinaryHeap::new();
        let mut now = 0u64;
        let mut pops = 0usize;
        let mut pop = |c: &mut Calendar<E>, h: &mut BinaryHeap<Reverse<E>>, now: &mut u64| {
            pops += 1;
            // now and then a horizon just before the next entry: both must refuse
            if until_every > 0 && pops % until_every == 0 {
                if let Some(&Reverse(e)) = h.peek() {
                    if e.0 > 0 {
                        assert_eq!(c.pop_until(e.0 - 1), None);
                    }
                }
            }
            // the least entry is the one that pops next, always
            assert_eq!(c.peek_min().map(Reverse).as_ref(), h.peek());
            // the hint, when there is one, is the entry that pops next
            if let Some(p) = c.peek_near() {
                assert_eq!(Some(&Reverse(p)), h.peek());
                assert_eq!(c.peek_ahead::<1>()[0], Some(p));
            }
            let got = c.pop_until(u64::MAX);
            let want = h.pop().map(|Reverse(e)| e);
            assert_eq!(got, want);
            if let Some(e) = got {
                *now = e.0;
            }
            assert_eq!(c.len(), h.len());
        };
        for (n, &(pops, class, off)) in steps.iter().enumerate() {
            for _ in 0..pops % 4 {
                pop(&mut c, &mut h, &mut now);
            }
            let dt = match class % 8 {
                0 => 0,
                1..=4 => off as u64 % (8 << shift),             // a few buckets ahead
                5 => off as u64 % (2 << (shift + bits)),        // up to two ring spans
                6 => (off as u64) << 20,                        // far: timers
                _ => 0,                                         // the end of time (below)
            };
            let t = if class % 8 == 7 { u64::MAX - (off % 4) as u64 } else { now.saturating_add(dt) };
            let e = E(t.max(now), n as u32);
            c.push(e);
            h.push(Reverse(e));
        }
        while !h.is_empty() {
            pop(&mut c, &mut h, &mut now);
        }
        assert_eq!(c.pop_until(u64::MAX), None);
    }

    use proptest::prelude::*;
    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Any mix of near, equal, far and end-of-time entries pops as a binary heap does,
        /// in a small ring (wrap-around, the far heap) and a larger one, with and without
        /// horizons.
        #[test]
        fn pops_in_the_order_of_a_heap(
            steps in proptest::collection::vec(any::<Step>(), 0..600),
            shift in 0u32..12,
        ) {
            against_a_heap(&steps, shift, 6, 0);
            against_a_heap(&steps, shift, 8, 7);
        }
    }

    #[test]
    fn a_long_random_run_with_geometry_changes_pops_as_a_heap() {
        // A pseudo-random workload whose rate changes by orders of magnitude, so that the
        // geometry is re-filed several times with entries pending.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut c: Calendar<E> = Calendar::new(0, 0, 6);
        let mut h: BinaryHeap<Reverse<E>> = BinaryHeap::new();
        let mut now = 0u64;
        let mut n = 0u32;
        for phase in 0..6u32 {
            let scale = [1_000u64, 2_000_000, 50, 1 << 30, 7_000, 300][phase as usize];
            let pending = [100usize, 3000, 10, 500, 20_000, 64][phase as usize];
            for _ in 0..200_000 {
                while h.len() < pending {
                    let r = rnd();
                    let dt = match r % 16 {
                        0 => 0,
                        1 => scale * 100_000 + r % scale, // far off
                        _ => r % (2 * scale),
                    };
                    let e = E(now + dt, n);
                    n += 1;
                    c.push(e);
                    h.push(Reverse(e));
                }
                let hints = c.peek_ahead::<3>();
                let got = c.pop_until(u64::MAX);
                let want = h.pop().map(|Reverse(e)| e);
                assert_eq!(got, want);
                assert!(hints[0].is_none() || hints[0] == got, "peek_ahead gave {hints:?} before popping {got:?}");
                // the later hints come in order after it, and stop at the first gap
                for w in hints.windows(2) {
                    assert!(w[1].is_none() || w[0].is_some() && w[1] > w[0], "peek_ahead gave {hints:?}");
                }
                now = got.unwrap().0;
            }
        }
        while let Some(Reverse(e)) = h.pop() {
            assert_eq!(c.pop_until(u64::MAX), Some(e));
        }
        assert!(c.is_empty());
        assert!(c.refiled() >= 6, "the geometry followed the traffic only {} times", c.refiled());
    }

    #[test]
    fn entries_at_one_instant_pop_in_order_and_append_at_the_tail() {
        let mut c: Calendar<E> = Calendar::new(0, 10, 6);
        for i in 0..10_000 {
            c.push(E(5_000, i));
        }
        c.push(E(4_000, 10_000));
        assert_eq!(c.pop_until(u64::MAX), Some(E(4_000, 10_000)));
        for i in 0..10_000 {
            assert_eq!(c.pop_until(u64::MAX), Some(E(5_000, i)));
        }
        assert_eq!(c.pop_until(u64::MAX), None);
    }

    #[test]
    fn far_future_entries_wait_outside_the_ring_and_come_back_in_order() {
        let mut c: Calendar<E> = Calendar::new(0, 4, 6); // span: 64 buckets of 16 ps = 1024 ps
        let times = [1u64 << 40, 3, 1 << 40, 5_000, 2_000, u64::MAX, 1_030, 999];
        for (i, &t) in times.iter().enumerate() {
            c.push(E(t, i as u32));
        }
        assert_eq!(c.far.len(), 6);
        let mut want: Vec<E> = times.iter().enumerate().map(|(i, &t)| E(t, i as u32)).collect();
        want.sort();
        for w in want {
            assert_eq!(c.pop_until(u64::MAX), Some(w));
        }
        assert!(c.is_empty());
    }

    #[test]
    fn a_horizon_leaves_the_entry_and_the_clock_alone() {
        let mut c: Calendar<E> = Calendar::new(0, 4, 6);
        c.push(E(100, 0));
        c.push(E(1 << 30, 1));
        assert_eq!(c.pop_until(99), None);
        assert_eq!(c.pop_until(100), Some(E(100, 0)));
        assert_eq!(c.pop_until(1 << 29), None);
        // an entry between the last pop and the refused one still comes first
        c.push(E(200, 2));
        assert_eq!(c.pop_until(u64::MAX), Some(E(200, 2)));
        assert_eq!(c.pop_until(u64::MAX), Some(E(1 << 30, 1)));
    }

    #[test]
    fn an_entry_in_the_past_pops_next() {
        let mut c: Calendar<E> = Calendar::new(0, 4, 6);
        c.push(E(1_000, 0));
        c.push(E(1_100, 1));
        assert_eq!(c.pop_until(u64::MAX), Some(E(1_000, 0)));
        c.push(E(10, 2)); // a bug in the caller, but the order is still a heap's
        assert_eq!(c.pop_until(u64::MAX), Some(E(10, 2)));
        assert_eq!(c.pop_until(u64::MAX), Some(E(1_100, 1)));
    }

    #[test]
    fn refiling_keeps_every_entry_and_the_order() {
        let mut c: Calendar<E> = Calendar::new(0, 8, 6);
        for i in 0..1000u32 {
            c.push(E((i as u64 * 7919) % 100_000, i));
        }
        let mut want: Vec<E> = (0..1000u32).map(|i| E((i as u64 * 7919) % 100_000, i)).collect();
        want.sort();
        for (k, w) in want.into_iter().enumerate() {
            if k % 100 == 0 {
                c.force_geometry((k / 100) as u32 % 20, 6 + (k / 100) as u32 % 8);
            }
            assert_eq!(c.pop_until(u64::MAX), Some(w));
        }
    }
}
