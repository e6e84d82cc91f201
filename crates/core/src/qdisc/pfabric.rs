//! pFabric: a tiny priority buffer that drops the least urgent packet and sends the most urgent flow.
//!
//! From Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013,
//! section 4.1 (switch design). Every packet carries one number, [`Packet::priority`]; lower is
//! more urgent (pFabric's senders write the flow's remaining size, `tcp.priority = "remaining"`).
//!
//! Rules:
//! - **Enqueue.** If one more packet fits `limit_pkts` / `limit_bytes` ([`Limit::fits`]), it is
//!   stored. Otherwise the least urgent packet among the stored ones *and* the arriving one is
//!   dropped with [`DropReason::PriorityEvict`]: the arriving packet itself (refused,
//!   `queued == false`) if its priority value is at least the largest stored one, else the
//!   stored packet with the largest value (pushed out, `queued == true`) and the arriving
//!   packet takes its room. **Ties** go against the most recently arrived packet: an arrival
//!   that ties with the worst stored packet is the one dropped, and among stored packets that
//!   tie, the latest arrival is evicted (so a flow loses its tail, not its head, and nothing
//!   it has queued longer is thrown away for an equal newcomer). With a byte limit one arrival
//!   may push out several stored packets, each strictly less urgent than itself; if it still
//!   does not fit, it is refused (the evictions stand). A packet larger than the whole byte
//!   limit is refused with [`DropReason::Overflow`].
//! - **Dequeue.** Find the most urgent stored packet (smallest value; ties: earliest arrival),
//!   then send the *earliest-arrived stored packet of that packet's flow* (section 4.1:
//!   starvation prevention, and a flow's packets leave in the order they came, so the switch
//!   never reorders a flow even when a retransmission carries a smaller remaining size).
//! - **Flow** identity is the 5-tuple ([`Packet::flow_key`]); the two directions of a
//!   connection are different flows.
//! - **Cost.** Stored packets sit in one flat array with their arrival number; enqueue and
//!   dequeue scan it linearly, O(n) per packet, as the hardware's parallel compare does in one
//!   step (pFabric buffers hold a couple of BDPs: tens of packets). Removal swaps the last
//!   entry in. The array starts empty and grows to the deepest occupancy the port reaches, a
//!   few times per port at most; after that the packet path allocates nothing.
//!
//! Parameters: only the shared `[queue]` limits; `queue.kind = "pfabric"` has no sub-table.
//! Validation: the rule tests below and the scenario test in `crates/sim/tests/runs/pfabric.rs`;
//! the model and its simplifications are in `docs/mechanisms/pfabric.md`.

use crate::config::{ConfigError, Limit};
use super::framework::{Discipline, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::packet::Packet;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `[queue.pfabric]`: pFabric's buffer takes no parameters beyond the `[queue]` limit; the
/// table may be present (empty) like every discipline's.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PfabricConfig {}

#[derive(Debug)]
struct Entry<P = Packet> {
    pkt: P,
    key: u64,
    /// Arrival number (strictly increasing over the life of the queue).
    arrival: u64,
}

/// The pFabric switch buffer.
#[derive(Debug)]
pub struct PFabric<P = Packet> {
    q: Vec<Entry<P>>,
    bytes: u64,
    limit: Limit,
    next_arrival: u64,
}

impl<P: QPacket> PFabric<P> {
    pub fn new(limit: Limit) -> Self {
        PFabric { q: Vec::new(), bytes: 0, limit, next_arrival: 0 }
    }

    /// Index of the least urgent stored packet: largest priority value, latest arrival on ties.
    fn worst(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, e) in self.q.iter().enumerate() {
            match best {
                Some(b) => {
                    let w = &self.q[b];
                    if (e.pkt.priority(), e.arrival) > (w.pkt.priority(), w.arrival) {
                        best = Some(i);
                    }
                }
                None => best = Some(i),
            }
        }
        best
    }

    fn remove(&mut self, i: usize) -> P {
        let e = self.q.swap_remove(i);
        self.bytes -= e.pkt.size() as u64;
        e.pkt
    }
}

impl<P: QPacket> Discipline for PFabric<P> {
    type Config = PfabricConfig;
    fn validate(_cfg: &PfabricConfig, _limit: Limit) -> Result<(), ConfigError> {
        Ok(())
    }
    fn build(_cfg: &PfabricConfig, limit: Limit, _ctx: &PortContext) -> Self {
        PFabric::new(limit)
    }
}

impl<P: QPacket> Qdisc for PFabric<P> {
    type Pkt = P;

    fn enqueue(&mut self, pkt: P, _now: SimTime, ev: &mut QdiscEvents<P>) {
        if !self.limit.fits(0, 0, pkt.size()) {
            ev.drop(pkt, DropReason::Overflow, false);
            return;
        }
        while !self.limit.fits(self.q.len(), self.bytes, pkt.size()) {
            match self.worst() {
                // the arriving packet is the least urgent (or ties and is the latest): refuse it
                Some(w) if pkt.priority() < self.q[w].pkt.priority() => {
                    let out = self.remove(w);
                    ev.drop(out, DropReason::PriorityEvict, true);
                }
                _ => {
                    ev.drop(pkt, DropReason::PriorityEvict, false);
                    return;
                }
            }
        }
        self.bytes += pkt.size() as u64;
        let key = pkt.flow_key();
        self.q.push(Entry { pkt, key, arrival: self.next_arrival });
        self.next_arrival += 1;
    }

    fn dequeue(&mut self, _now: SimTime, _ev: &mut QdiscEvents<P>) -> Option<P> {
        // the most urgent packet (earliest on ties) ...
        let mut top = 0;
        for (i, e) in self.q.iter().enumerate().skip(1) {
            let t = &self.q[top];
            if (e.pkt.priority(), e.arrival) < (t.pkt.priority(), t.arrival) {
                top = i;
            }
        }
        let key = self.q.get(top)?.key;
        // ... then the earliest packet of its flow
        let mut first = top;
        for (i, e) in self.q.iter().enumerate() {
            if e.key == key && e.arrival < self.q[first].arrival {
                first = i;
            }
        }
        Some(self.remove(first))
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn name(&self) -> &'static str {
        "pfabric"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{check_accounting, pkt};
    use proptest::prelude::*;

    /// A packet of `flow` with sequence number `seq` and priority `prio`.
    fn p(flow: u32, seq: u64, prio: u64) -> Packet {
        Packet { priority: prio, ..pkt(flow, seq, 1500) }
    }
    fn drain(q: &mut PFabric) -> Vec<(u32, u64)> {
        let mut ev = QdiscEvents::default();
        std::iter::from_fn(|| q.dequeue(SimTime::ZERO, &mut ev)).map(|p| (p.flow, p.seq)).collect()
    }

    // --- enqueue: evict the least urgent ---------------------------------------------------
    #[test]
    fn a_full_buffer_evicts_the_largest_priority_value() {
        let mut q = PFabric::new(Limit::pkts(3));
        let mut ev = QdiscEvents::default();
        q.enqueue(p(1, 0, 500), SimTime::ZERO, &mut ev);
        q.enqueue(p(2, 0, 900), SimTime::ZERO, &mut ev);
        q.enqueue(p(3, 0, 100), SimTime::ZERO, &mut ev);
        assert!(ev.dropped.is_empty());
        // a more urgent arrival pushes out flow 2's packet
        q.enqueue(p(4, 0, 300), SimTime::ZERO, &mut ev);
        assert_eq!(ev.dropped.len(), 1);
        let d = &ev.dropped[0];
        assert_eq!((d.pkt.flow, d.reason, d.queued), (2, DropReason::PriorityEvict, true));
        ev.clear();
        // a less urgent arrival is itself refused
        q.enqueue(p(5, 0, 600), SimTime::ZERO, &mut ev);
        let d = &ev.dropped[0];
        assert_eq!((d.pkt.flow, d.reason, d.queued), (5, DropReason::PriorityEvict, false));
        assert_eq!(q.len_pkts(), 3);
        assert_eq!(drain(&mut q), [(3, 0), (4, 0), (1, 0)]);
    }

    #[test]
    fn ties_drop_the_most_recent_arrival() {
        let mut q = PFabric::new(Limit::pkts(2));
        let mut ev = QdiscEvents::default();
        q.enqueue(p(1, 0, 700), SimTime::ZERO, &mut ev);
        q.enqueue(p(2, 0, 700), SimTime::ZERO, &mut ev);
        // an arrival tying with the worst stored value is the one dropped
        q.enqueue(p(3, 0, 700), SimTime::ZERO, &mut ev);
        assert_eq!((ev.dropped[0].pkt.flow, ev.dropped[0].queued), (3, false));
        ev.clear();
        // among tying stored packets the later arrival (flow 2) is evicted
        q.enqueue(p(4, 0, 10), SimTime::ZERO, &mut ev);
        assert_eq!((ev.dropped[0].pkt.flow, ev.dropped[0].queued), (2, true));
        assert_eq!(drain(&mut q), [(4, 0), (1, 0)]);
    }

    #[test]
    fn a_byte_limit_may_push_out_several_less_urgent_packets() {
        let mut q = PFabric::new(Limit { pkts: None, bytes: Some(3000) });
        let mut ev = QdiscEvents::default();
        q.enqueue(Packet { priority: 50, ..pkt(1, 0, 1000) }, SimTime::ZERO, &mut ev);
        q.enqueue(Packet { priority: 90, ..pkt(2, 0, 1000) }, SimTime::ZERO, &mut ev);
        q.enqueue(Packet { priority: 80, ..pkt(3, 0, 1000) }, SimTime::ZERO, &mut ev);
        // 2500 bytes at priority 10: flows 2 and 3 go, flow 1 stays
        q.enqueue(Packet { priority: 10, ..pkt(4, 0, 2000) }, SimTime::ZERO, &mut ev);
        let gone: Vec<u32> = ev.dropped.iter().map(|d| d.pkt.flow).collect();
        assert_eq!(gone, [2, 3]);
        assert_eq!(q.len_bytes(), 3000);
        ev.clear();
        // larger than the whole buffer: overflow, nothing evicted
        q.enqueue(Packet { priority: 0, ..pkt(5, 0, 3001) }, SimTime::ZERO, &mut ev);
        assert_eq!((ev.dropped.len(), ev.dropped[0].reason), (1, DropReason::Overflow));
        assert_eq!(drain(&mut q), [(4, 0), (1, 0)]);
    }

    // --- dequeue: earliest packet of the most urgent flow ------------------------------------
    #[test]
    fn dequeue_sends_the_earliest_packet_of_the_most_urgent_flow() {
        let mut q = PFabric::new(Limit::pkts(10));
        let mut ev = QdiscEvents::default();
        // flow 1 queued seq 0 at priority 9000, then a retransmission-like packet at 1000;
        // flow 2 sits at 5000
        q.enqueue(p(1, 0, 9000), SimTime::ZERO, &mut ev);
        q.enqueue(p(2, 0, 5000), SimTime::ZERO, &mut ev);
        q.enqueue(p(1, 1, 1000), SimTime::ZERO, &mut ev);
        q.enqueue(p(2, 1, 4000), SimTime::ZERO, &mut ev);
        // flow 1 is the most urgent (1000): its earliest packet (seq 0) leaves first, although
        // its own value (9000) is the largest in the buffer
        assert_eq!(drain(&mut q), [(1, 0), (1, 1), (2, 0), (2, 1)]);
    }

    #[test]
    fn equal_priorities_are_served_in_arrival_order() {
        let mut q = PFabric::new(Limit::pkts(10));
        let mut ev = QdiscEvents::default();
        for (f, s) in [(3, 0), (1, 0), (2, 0), (1, 1), (3, 1)] {
            q.enqueue(p(f, s, 0), SimTime::ZERO, &mut ev);
        }
        // all tie: the earliest packet is also its flow's earliest, so the order is FIFO
        assert_eq!(drain(&mut q), [(3, 0), (1, 0), (2, 0), (1, 1), (3, 1)]);
    }

    #[test]
    fn the_two_directions_of_a_connection_are_different_flows() {
        let mut q = PFabric::new(Limit::pkts(10));
        let mut ev = QdiscEvents::default();
        let fwd = Packet { src: 1, dst: 2, sport: 10, dport: 20, priority: 900, ..pkt(7, 0, 1500) };
        let rev = Packet { src: 2, dst: 1, sport: 20, dport: 10, priority: 0, ..pkt(7, 1, 40) };
        q.enqueue(fwd, SimTime::ZERO, &mut ev);
        q.enqueue(rev, SimTime::ZERO, &mut ev);
        assert_eq!(drain(&mut q), [(7, 1), (7, 0)]);
    }

    // --- properties: accounting, never reorder a flow ----------------------------------------
    proptest! {
        #[test]
        fn accounting_holds(ops in proptest::collection::vec((any::<bool>(), 0u32..8, 40u32..1500), 1..400)) {
            check_accounting(PFabric::new(Limit::pkts(5)), &ops);
            check_accounting(PFabric::new(Limit { pkts: Some(6), bytes: Some(4000) }), &ops);
        }

        /// Random priorities, a small buffer: whatever is evicted, the packets of a flow that
        /// leave do so in the order they arrived.
        #[test]
        fn a_flow_is_never_reordered(ops in proptest::collection::vec((any::<bool>(), 0u32..5, 0u64..50), 1..500)) {
            let mut q = PFabric::new(Limit::pkts(6));
            let mut ev = QdiscEvents::default();
            let mut seq = [0u64; 5];
            let mut last = [None::<u64>; 5];
            for (arrive, f, prio) in ops {
                if arrive {
                    q.enqueue(p(f, seq[f as usize], prio), SimTime::ZERO, &mut ev);
                    seq[f as usize] += 1;
                } else if let Some(out) = q.dequeue(SimTime::ZERO, &mut ev) {
                    let l = &mut last[out.flow as usize];
                    prop_assert!(l.is_none_or(|s| s < out.seq), "flow {} sent {} after {:?}", out.flow, out.seq, l);
                    *l = Some(out.seq);
                }
                ev.clear();
            }
        }

        /// Every dequeued packet belongs to the flow of a most urgent stored packet.
        #[test]
        fn dequeue_serves_a_most_urgent_flow(prios in proptest::collection::vec((0u32..6, 0u64..20), 1..12)) {
            let mut q = PFabric::new(Limit::pkts(12));
            let mut ev = QdiscEvents::default();
            for (i, &(f, pr)) in prios.iter().enumerate() {
                q.enqueue(p(f, i as u64, pr), SimTime::ZERO, &mut ev);
            }
            let min = prios.iter().map(|x| x.1).min().unwrap();
            let urgent: Vec<u32> = prios.iter().filter(|x| x.1 == min).map(|x| x.0).collect();
            let out = q.dequeue(SimTime::ZERO, &mut ev).unwrap();
            prop_assert!(urgent.contains(&out.flow));
            // and it is that flow's first packet
            let first = prios.iter().position(|x| x.0 == out.flow).unwrap() as u64;
            prop_assert_eq!(out.seq, first);
        }
    }
}
