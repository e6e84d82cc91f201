//! Test support shared by every discipline's tests: a random workload that checks the
//! accounting identities and conservation after every call.

use super::{PortContext, Qdisc, QdiscEvents, Queue};
use crate::packet::{Packet, Proto};
use crate::rng::Streams;
use crate::time::{BitsPerSec, SimTime};

/// A packet of flow `flow` with per-flow sequence number `seq` and `size` bytes.
pub fn pkt(flow: u32, seq: u64, size: u32) -> Packet {
    Packet {
        uid: flow as u64 * 1_000_000_000 + seq,
        flow,
        src: flow,
        dst: 1_000_000,
        sport: (flow % 60_000) as u16,
        dport: 80,
        proto: Proto::Tcp,
        size,
        payload: size.saturating_sub(40),
        seq,
        ..Default::default()
    }
}

pub fn ctx(seed: u64) -> PortContext {
    PortContext { rate: BitsPerSec(100_000_000), mtu: 1500, port_index: 0, streams: Streams::new(seed), host: false }
}

/// Drives `q` with `ops` (true = arrival of a packet of flow `flows[i]`, false = departure)
/// and checks, after every call, both identities, conservation of every packet, and that
/// stored packets match `len_pkts` / `len_bytes`. Returns the departed packets in order.
pub fn check_accounting<Q: Qdisc<Pkt = Packet>>(q: Q, arrivals: &[(bool, u32, u32)]) -> Vec<Packet> {
    let mut queue = Queue::new(q);
    let mut ev = QdiscEvents::default();
    let mut seqs = std::collections::HashMap::<u32, u64>::new();
    let mut now = SimTime::ZERO;
    let mut out = Vec::new();
    let mut dropped = 0u64;
    let mut in_bytes = 0u64;
    let mut out_bytes = 0u64;
    let mut drop_bytes = 0u64;
    for &(arrive, flow, size) in arrivals {
        now += crate::time::SimDuration::from_us(1);
        if arrive {
            let s = seqs.entry(flow).or_insert(0);
            *s += 1;
            in_bytes += size as u64;
            queue.enqueue(pkt(flow, *s, size), now, &mut ev);
        } else if let Some(p) = queue.dequeue(now, &mut ev) {
            out_bytes += p.size as u64;
            out.push(p);
        }
        for d in ev.dropped.drain(..) {
            dropped += 1;
            drop_bytes += d.pkt.size as u64;
        }
        let st = &queue.stats;
        assert_eq!(st.len_pkts, queue.qdisc.len_pkts() as u64);
        assert_eq!(st.len_bytes, queue.qdisc.len_bytes());
        assert_eq!(st.queued_pkts(), queue.qdisc.len_pkts() as u64);
        assert_eq!(st.queued_bytes(), queue.qdisc.len_bytes());
        assert_eq!(st.received_pkts(), out.len() as u64 + dropped + queue.qdisc.len_pkts() as u64);
        assert_eq!(in_bytes, out_bytes + drop_bytes + queue.qdisc.len_bytes());
    }
    out
}
