//! DropTail: one FIFO, arrivals dropped when the buffer is full.
//!
//! The baseline of every paper here ("FIFO" in the HCF paper, "taildrop" in the Outcast paper).
//!
//! Parameters (from `[queue]`): `limit_pkts` and/or `limit_bytes`, the buffer. An arriving
//! packet is stored if one more packet fits both limits (`Limit::fits`), else dropped with
//! [`DropReason::Overflow`]. Cost: O(1) per packet. Validation: `docs/validation.md`
//! (side by side with ns-2's `Queue/DropTail`).

use super::{DropReason, Limit, Qdisc, QdiscEvents};
use crate::packet::Packet;
use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Debug)]
pub struct DropTail {
    q: VecDeque<Packet>,
    bytes: u64,
    limit: Limit,
}

impl DropTail {
    pub fn new(limit: Limit) -> DropTail {
        // Room for a typical switch buffer up front; deep host buffers grow on demand (a
        // thousand-host topology must not reserve a thousand full buffers it never fills).
        let cap = limit.pkts.unwrap_or(32).min(32) as usize;
        DropTail { q: VecDeque::with_capacity(cap), bytes: 0, limit }
    }
}

impl Qdisc for DropTail {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _now: SimTime, ev: &mut QdiscEvents) {
        if self.limit.fits(self.q.len(), self.bytes, pkt.size) {
            self.bytes += pkt.size as u64;
            self.q.push_back(pkt);
        } else {
            ev.drop(pkt, DropReason::Overflow, false);
        }
    }
    #[inline]
    fn dequeue(&mut self, _now: SimTime, _ev: &mut QdiscEvents) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.size as u64;
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

    // --- accounting identities ----------------------------------------------------------
    proptest! {
        #[test]
        fn accounting_holds(ops in proptest::collection::vec((any::<bool>(), 0u32..8, 40u32..1500), 1..400)) {
            check_accounting(DropTail::new(Limit::pkts(5)), &ops);
        }
    }
}
