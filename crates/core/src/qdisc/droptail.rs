//! DropTail: one FIFO, arrivals dropped when the buffer is full; optionally DCTCP's
//! instantaneous ECN marking threshold K.
//!
//! The baseline of every paper here ("FIFO" in the HCF paper, "taildrop" in the Outcast paper),
//! and, with a marking threshold, the switch side of DCTCP (Alizadeh et al., "Data Center TCP
//! (DCTCP)", SIGCOMM 2010, section 3.1; RFC 8257 section 3.1).
//!
//! Rules, on every arrival:
//! 1. A packet that does not fit the buffer (`Limit::fits`: one more packet within
//!    `limit_pkts` and its bytes within `limit_bytes`) is dropped with
//!    [`DropReason::Overflow`], marked or not.
//! 2. Otherwise it is stored; if a marking threshold is set, the packet is ECN-capable (ECT(0),
//!    ECT(1) or already CE) and the queue it *finds* (before it is stored, the packet being
//!    serialized not counted) holds at least `mark_threshold_pkts` packets or at least
//!    `mark_threshold_bytes` bytes, it is set to CE ([`MarkReason::Threshold`]). Not-ECT
//!    packets are never marked (they are stored or dropped by rule 1 alone).
//!
//!    "At least K found" is "more than K with the arrival counted": the DCTCP paper's "marked
//!    if the queue occupancy is greater than K upon its arrival", read as the usual
//!    implementations do: ns-2's DCTCP set-up and ns-3's `RedQueueDisc` with
//!    `min = max = K` and queue weight 1 (the average is the length found by the arrival,
//!    and the mark is taken when it is `>= K`), and Linux RED with `min = max = K`.
//!
//! Parameters (the `[queue]` buffer and the optional `[queue.droptail]` thresholds):
//! `docs/mechanisms/droptail.md`.
//!
//! Without a threshold the discipline never marks: it is a plain FIFO.
//!
//! An empty FIFO offered a packet when its port is idle (`Qdisc::pass_empty`, the step
//! `Queue::pass` makes) applies rules 1 and 2 to it and hands it straight back instead of
//! storing it and giving it out at the next dequeue: the same outcome without the ring's slot.
//! Validation: a threshold of 0, or one above the matching buffer limit, is a [`ConfigError`]
//! naming the key. Cost: O(1) per packet. Validation of the model: `docs/validation.md`
//! (side by side with ns-2's `Queue/DropTail`) and `docs/mechanisms/dctcp.md`.

use crate::config::{ConfigError, Limit};
use super::framework::{Discipline, DropReason, MarkReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::packet::{Ecn, Packet};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[queue.droptail]`: the optional ECN marking threshold (see the module documentation).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct DropTailConfig {
    pub mark_threshold_pkts: Option<u32>,
    pub mark_threshold_bytes: Option<u64>,
}

impl DropTailConfig {
    /// Rejects a zero threshold or one above the buffer limit; keys relative to `[queue.droptail]`.
    pub fn validate(&self, limit: Limit) -> Result<(), ConfigError> {
        if let Some(k) = self.mark_threshold_pkts {
            if k == 0 {
                return Err(ConfigError::new("mark_threshold_pkts", "must be at least 1 packet (omit the key for no marking)"));
            }
            if let Some(l) = limit.pkts {
                if k > l {
                    return Err(ConfigError::new("mark_threshold_pkts", format!("{k} is above the buffer limit_pkts = {l}")));
                }
            }
        }
        if let Some(k) = self.mark_threshold_bytes {
            if k == 0 {
                return Err(ConfigError::new("mark_threshold_bytes", "must be at least 1 byte (omit the key for no marking)"));
            }
            if let Some(l) = limit.bytes {
                if k > l {
                    return Err(ConfigError::new("mark_threshold_bytes", format!("{k} is above the buffer limit_bytes = {l}")));
                }
            }
        }
        Ok(())
    }
}

pub struct DropTail<P = Packet> {
    q: VecDeque<P>,
    bytes: u64,
    /// The buffer limit, `u32::MAX` / `u64::MAX` for none: a queue never holds 2^32 - 1
    /// packets (32 bytes each at the least), and adding a packet's size to the bytes stored
    /// never reaches 2^64 - 1, so both read as `Limit::fits` does. Kept as plain words rather
    /// than a [`Limit`] (24 bytes) so that the discipline fills one cache line, which the
    /// simulator's port holds inline.
    limit_pkts: u32,
    /// Marking threshold in packets (`u32::MAX`: none; never above `limit_pkts`).
    mark_pkts: u32,
    limit_bytes: u64,
    /// Marking threshold in bytes (`u64::MAX`: none).
    mark_bytes: u64,
}

const _: () = assert!(std::mem::size_of::<DropTail<crate::packet::Packet>>() == 64, "DropTail outgrew one cache line");

impl<P: QPacket> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        // No room reserved: the buffer grows on demand, a few times per port at most (a k = 32
        // fat-tree has 49,152 ports, and reserving 32 packets each took 48 MiB, most never used).
        DropTail {
            q: VecDeque::new(),
            bytes: 0,
            limit_pkts: limit.pkts.unwrap_or(u32::MAX),
            mark_pkts: u32::MAX,
            limit_bytes: limit.bytes.unwrap_or(u64::MAX),
            mark_bytes: u64::MAX,
        }
    }

    /// A DropTail queue that marks as `c` says (no marking if `c` sets no threshold).
    pub fn with_marking(limit: Limit, c: &DropTailConfig) -> Self {
        let mut q = DropTail::new(limit);
        q.mark_pkts = c.mark_threshold_pkts.unwrap_or(u32::MAX);
        q.mark_bytes = c.mark_threshold_bytes.unwrap_or(u64::MAX);
        q
    }

    /// Where the packet that leaves next lies (a cache hint: the address only, nothing read
    /// behind it).
    #[inline(always)]
    pub fn front_ptr(&self) -> Option<*const P> {
        self.q.front().map(|p| p as *const P)
    }

    /// Rules 1 and 2 for an arrival: `pkt` back when it fits (CE-marked, and the mark reported,
    /// when the queue is at a marking threshold and the packet is ECN-capable), else `None`
    /// with the drop reported.
    #[inline(always)]
    fn admit(&self, mut pkt: P, ev: &mut QdiscEvents<P>) -> Option<P> {
        let len = self.q.len() as u64;
        if len >= self.limit_pkts as u64 || self.bytes + pkt.size() as u64 > self.limit_bytes {
            ev.drop(pkt, DropReason::Overflow, false);
            return None;
        }
        if pkt.ecn() != Ecn::NotEct && (len >= self.mark_pkts as u64 || self.bytes >= self.mark_bytes) {
            pkt.set_ecn(Ecn::Ce);
            ev.mark(MarkReason::Threshold);
        }
        Some(pkt)
    }
}

impl<P> DropTail<P> {
    /// The buffer limit it was built with.
    pub fn limit(&self) -> Limit {
        Limit {
            pkts: (self.limit_pkts != u32::MAX).then_some(self.limit_pkts),
            bytes: (self.limit_bytes != u64::MAX).then_some(self.limit_bytes),
        }
    }
}

/// Shows the limit as the [`Limit`] it was built from, as every other discipline's `Debug` does.
impl<P: std::fmt::Debug> std::fmt::Debug for DropTail<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DropTail")
            .field("q", &self.q)
            .field("bytes", &self.bytes)
            .field("limit", &self.limit())
            .field("mark_pkts", &(self.mark_pkts != u32::MAX).then_some(self.mark_pkts))
            .field("mark_bytes", &(self.mark_bytes != u64::MAX).then_some(self.mark_bytes))
            .finish()
    }
}

impl<P: QPacket> Discipline for DropTail<P> {
    type Config = DropTailConfig;
    fn validate(cfg: &DropTailConfig, limit: Limit) -> Result<(), ConfigError> {
        cfg.validate(limit)
    }
    fn build(cfg: &DropTailConfig, limit: Limit, _ctx: &PortContext) -> Self {
        DropTail::with_marking(limit, cfg)
    }
}

impl<P: QPacket> Qdisc for DropTail<P> {
    type Pkt = P;

    #[inline]
    fn enqueue(&mut self, pkt: P, _now: SimTime, ev: &mut QdiscEvents<P>) {
        if let Some(pkt) = self.admit(pkt, ev) {
            self.bytes += pkt.size() as u64;
            self.q.push_back(pkt);
        }
    }
    /// An empty FIFO sends what it admits at once: nothing to store (a ring slot written and
    /// read back, a likely cache miss when the port's buffer has left the cache).
    #[inline]
    fn pass_empty(&mut self, pkt: P, _now: SimTime, ev: &mut QdiscEvents<P>) -> Result<Option<P>, P> {
        debug_assert!(self.q.is_empty());
        Ok(self.admit(pkt, ev))
    }
    #[inline]
    fn dequeue(&mut self, _now: SimTime, _ev: &mut QdiscEvents<P>) -> Option<P> {
        let p = self.q.pop_front()?;
        // the next packet to leave: written at its enqueue, long ago, and read at the next
        // dequeue, about one packet time from now (hint.rs)
        if let Some(n) = self.q.front() {
            crate::hint::prefetch(n);
        }
        self.bytes -= p.size() as u64;
        if self.q.is_empty() {
            // Back to the start of the ring: a port that is mostly idle then keeps reusing
            // the same (cached) slot instead of walking its whole buffer.
            self.q.clear();
        }
        Some(p)
    }
    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn name(&self) -> &'static str {
        "droptail"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{check_accounting, pkt};
    use crate::qdisc::Queue;
    use proptest::prelude::*;

    // --- the rule: FIFO, drop on full ---------------------------------------------------
    #[test]
    fn drops_only_when_full_and_keeps_order() {
        let mut q = DropTail::new(Limit::pkts(2));
        let mut ev = QdiscEvents::default();
        for s in 0..3 {
            q.enqueue(pkt(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        assert_eq!(ev.dropped.len(), 1);
        assert_eq!(ev.dropped[0].pkt.seq, 2);
        assert_eq!(ev.dropped[0].reason, DropReason::Overflow);
        assert!(!ev.dropped[0].queued);
        assert_eq!(q.dequeue(SimTime::ZERO, &mut ev).unwrap().seq, 0);
        assert_eq!(q.dequeue(SimTime::ZERO, &mut ev).unwrap().seq, 1);
        assert!(q.dequeue(SimTime::ZERO, &mut ev).is_none());
    }

    #[test]
    fn the_hint_points_at_the_packet_that_leaves_next() {
        let mut q = crate::qdisc::AnyQdisc::DropTail(DropTail::new(Limit::pkts(4)));
        let mut ev = QdiscEvents::default();
        assert!(q.next_out_hint().is_none());
        for s in 0..3 {
            q.enqueue(pkt(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        for s in 0..3 {
            // SAFETY: the hint points into the queue's buffer, which nothing changes before the read
            let hinted = unsafe { &*q.next_out_hint().unwrap() }.seq;
            assert_eq!(hinted, s);
            assert_eq!(q.dequeue(SimTime::ZERO, &mut ev).unwrap().seq, s);
        }
        assert!(q.next_out_hint().is_none());
    }

    #[test]
    fn byte_limit_counts_sizes() {
        let mut q = DropTail::new(Limit { pkts: None, bytes: Some(3000) });
        let mut ev = QdiscEvents::default();
        q.enqueue(pkt(1, 0, 1500), SimTime::ZERO, &mut ev);
        q.enqueue(pkt(1, 1, 1000), SimTime::ZERO, &mut ev);
        q.enqueue(pkt(1, 2, 1000), SimTime::ZERO, &mut ev); // 3500 > 3000
        q.enqueue(pkt(1, 3, 500), SimTime::ZERO, &mut ev); // exactly 3000
        assert_eq!(ev.dropped.len(), 1);
        assert_eq!(q.len_bytes(), 3000);
    }

    // --- the marking threshold K ----------------------------------------------------------
    fn ect(flow: u32, seq: u64, size: u32) -> Packet {
        Packet { ecn: Ecn::Ect0, ..pkt(flow, seq, size) }
    }
    fn marking(pkts: Option<u32>, bytes: Option<u64>, limit: Limit) -> DropTail {
        DropTail::with_marking(limit, &DropTailConfig { mark_threshold_pkts: pkts, mark_threshold_bytes: bytes })
    }

    #[test]
    fn marks_ect_arrivals_iff_they_find_k_or_more() {
        let mut q = marking(Some(3), None, Limit::pkts(6));
        let mut ev = QdiscEvents::default();
        for s in 0..6 {
            q.enqueue(ect(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        // arrivals 0, 1, 2 find 0, 1, 2 packets; 3, 4, 5 find 3, 4, 5
        let ce: Vec<bool> = (0..6).map(|_| q.dequeue(SimTime::ZERO, &mut ev).unwrap().ecn == Ecn::Ce).collect();
        assert_eq!(ce, [false, false, false, true, true, true]);
        assert_eq!(ev.marks[MarkReason::Threshold as usize], 3);
        assert!(ev.dropped.is_empty());
        // a drained queue stops marking at once (instantaneous, no average)
        q.enqueue(ect(1, 9, 1500), SimTime::ZERO, &mut ev);
        assert_eq!(q.dequeue(SimTime::ZERO, &mut ev).unwrap().ecn, Ecn::Ect0);
    }

    #[test]
    fn not_ect_is_never_marked_and_overflow_still_drops() {
        let mut q = marking(Some(1), None, Limit::pkts(3));
        let mut queue = Queue::new(q);
        let mut ev = QdiscEvents::default();
        for s in 0..5 {
            queue.enqueue(pkt(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        assert_eq!(queue.stats.marks_total(), 0);
        assert_eq!(queue.stats.drops_by_reason(DropReason::Overflow), 2);
        // a full queue drops an ECT packet rather than marking it
        q = marking(Some(1), None, Limit::pkts(2));
        let mut queue = Queue::new(q);
        let mut ev = QdiscEvents::default();
        for s in 0..3 {
            queue.enqueue(ect(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        assert_eq!((queue.stats.marks_total(), queue.stats.drops_pkts()), (1, 1));
        // CE stays CE (counted as a mark again: the switch saw congestion too)
        let mut q = marking(Some(1), None, Limit::pkts(4));
        let mut ev = QdiscEvents::default();
        q.enqueue(ect(1, 0, 1500), SimTime::ZERO, &mut ev);
        q.enqueue(Packet { ecn: Ecn::Ce, ..pkt(1, 1, 1500) }, SimTime::ZERO, &mut ev);
        q.enqueue(Packet { ecn: Ecn::Ect1, ..pkt(1, 2, 1500) }, SimTime::ZERO, &mut ev);
        assert_eq!(ev.marks[MarkReason::Threshold as usize], 2);
    }

    #[test]
    fn byte_threshold_counts_bytes_found() {
        let mut q = marking(None, Some(2000), Limit { pkts: Some(10), bytes: None });
        let mut ev = QdiscEvents::default();
        q.enqueue(ect(1, 0, 1500), SimTime::ZERO, &mut ev); // finds 0
        q.enqueue(ect(1, 1, 400), SimTime::ZERO, &mut ev); // finds 1500
        q.enqueue(ect(1, 2, 100), SimTime::ZERO, &mut ev); // finds 1900
        q.enqueue(ect(1, 3, 100), SimTime::ZERO, &mut ev); // finds 2000: marked
        let ce: Vec<bool> = (0..4).map(|_| q.dequeue(SimTime::ZERO, &mut ev).unwrap().ecn == Ecn::Ce).collect();
        assert_eq!(ce, [false, false, false, true]);
    }

    #[test]
    fn without_a_threshold_nothing_is_marked() {
        let mut q = DropTail::with_marking(Limit::pkts(100), &DropTailConfig::default());
        let mut ev = QdiscEvents::default();
        for s in 0..100 {
            q.enqueue(ect(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        assert_eq!(ev.marks, [0; MarkReason::COUNT]);
    }

    #[test]
    fn validation_names_the_key() {
        let c = |p, b| DropTailConfig { mark_threshold_pkts: p, mark_threshold_bytes: b };
        let lim = Limit { pkts: Some(100), bytes: Some(150_000) };
        assert_eq!(c(Some(0), None).validate(lim).unwrap_err().key, "mark_threshold_pkts");
        assert_eq!(c(Some(101), None).validate(lim).unwrap_err().key, "mark_threshold_pkts");
        assert_eq!(c(None, Some(0)).validate(lim).unwrap_err().key, "mark_threshold_bytes");
        assert_eq!(c(None, Some(150_001)).validate(lim).unwrap_err().key, "mark_threshold_bytes");
        c(Some(100), Some(150_000)).validate(lim).unwrap();
        c(Some(20), None).validate(Limit { pkts: None, bytes: Some(1000) }).unwrap();
        c(None, None).validate(lim).unwrap();
    }

    // --- accounting identities ----------------------------------------------------------
    // --- an idle port's packet in one step -----------------------------------------------
    /// A queue that has seen `history` (each packet enqueued, then the queue drained), so that
    /// its counters (maxima, marks, drops) are not all zero.
    fn seasoned(limit: Limit, k_pkts: Option<u32>, k_bytes: Option<u64>, history: &[(u32, bool)]) -> Queue<DropTail> {
        let mut q = Queue::new(marking(k_pkts, k_bytes, limit));
        let mut ev = QdiscEvents::default();
        for (i, &(size, ecn)) in history.iter().enumerate() {
            let p = if ecn { ect(1, i as u64, size) } else { pkt(1, i as u64, size) };
            q.enqueue(p, SimTime::ZERO, &mut ev);
        }
        while q.dequeue(SimTime::ZERO, &mut ev).is_some() {}
        q
    }

    proptest! {
        /// `Queue::pass` on an empty DropTail is `enqueue` then `dequeue`: the same packet out
        /// (with the same mark), the same counters, the same events, an empty queue after.
        #[test]
        fn pass_is_enqueue_then_dequeue(
            limit_pkts in proptest::option::of(0u32..4), limit_bytes in proptest::option::of(0u64..3000),
            k_pkts in proptest::option::of(0u32..3), k_bytes in proptest::option::of(0u64..2000),
            history in proptest::collection::vec((40u32..1500, any::<bool>()), 0..6),
            size in 40u32..1500, ecn in any::<bool>(),
        ) {
            let limit = Limit { pkts: limit_pkts, bytes: limit_bytes };
            let offered = if ecn { ect(2, 7, size) } else { pkt(2, 7, size) };
            let (mut a, mut b) = (seasoned(limit, k_pkts, k_bytes, &history), seasoned(limit, k_pkts, k_bytes, &history));
            let (mut ea, mut eb) = (QdiscEvents::default(), QdiscEvents::default());
            let out_a = a.pass(offered.clone(), SimTime::ZERO, &mut ea).expect("DropTail takes the one step");
            b.enqueue(offered, SimTime::ZERO, &mut eb);
            let (drops_b, marks_b) = (eb.dropped.iter().map(|d| (d.pkt.uid, d.reason, d.queued)).collect::<Vec<_>>(), eb.marks);
            let out_b = b.dequeue(SimTime::ZERO, &mut eb);
            prop_assert!(eb.dropped.is_empty() && eb.marks == [0; MarkReason::COUNT], "a dequeue of one packet drops or marks nothing");
            prop_assert_eq!(out_a.as_ref().map(|p| (p.uid, p.ecn)), out_b.as_ref().map(|p| (p.uid, p.ecn)));
            prop_assert_eq!(ea.dropped.iter().map(|d| (d.pkt.uid, d.reason, d.queued)).collect::<Vec<_>>(), drops_b);
            prop_assert_eq!(ea.marks, marks_b);
            prop_assert_eq!(&a.stats, &b.stats);
            prop_assert_eq!(format!("{:?}", a.qdisc), format!("{:?}", b.qdisc));
            prop_assert_eq!((a.qdisc.len_pkts(), a.qdisc.len_bytes()), (0, 0));
        }
    }

    #[test]
    fn a_discipline_that_stores_its_packets_hands_the_packet_back() {
        // a discipline without its own `pass_empty` (here DropTail behind a wrapper)
        let mut q = Queue::new(EctIn(DropTail::new(Limit::pkts(4))));
        let mut ev = QdiscEvents::default();
        let back = q.pass(pkt(1, 3, 1500), SimTime::ZERO, &mut ev).expect_err("the default hands the packet back");
        assert_eq!(back.seq, 3);
        assert_eq!(q.stats, crate::qdisc::QdiscStats::default());
        let mut q = Queue::new(crate::qdisc::AnyQdisc::DropTail(DropTail::new(Limit::pkts(4))));
        assert_eq!(q.pass(pkt(1, 4, 1500), SimTime::ZERO, &mut ev).unwrap().unwrap().seq, 4);
        assert_eq!((q.stats.enqueued_pkts, q.stats.dequeued_pkts, q.stats.max_len_pkts, q.stats.len_pkts), (1, 1, 1, 0));
    }

    proptest! {
        #[test]
        fn accounting_holds(ops in proptest::collection::vec((any::<bool>(), 0u32..8, 40u32..1500), 1..400)) {
            check_accounting(DropTail::new(Limit::pkts(5)), &ops);
        }
        #[test]
        fn accounting_holds_with_marking(ops in proptest::collection::vec((any::<bool>(), 0u32..8, 40u32..1500), 1..400)) {
            let out = check_accounting(EctIn(marking(Some(2), Some(3000), Limit::pkts(5))), &ops);
            prop_assert!(out.iter().all(|p| p.ecn == Ecn::Ce || p.ecn == Ecn::Ect0));
        }
    }

    /// The harness offers Not-ECT packets; this wrapper makes them ECT(0) so marks happen.
    struct EctIn(DropTail);
    impl Qdisc for EctIn {
        type Pkt = Packet;
        fn enqueue(&mut self, pkt: Packet, now: SimTime, ev: &mut QdiscEvents) {
            self.0.enqueue(Packet { ecn: Ecn::Ect0, ..pkt }, now, ev)
        }
        fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents) -> Option<Packet> {
            self.0.dequeue(now, ev)
        }
        fn len_pkts(&self) -> usize {
            self.0.len_pkts()
        }
        fn len_bytes(&self) -> u64 {
            self.0.len_bytes()
        }
        fn name(&self) -> &'static str {
            "droptail"
        }
    }
}
