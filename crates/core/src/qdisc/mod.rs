//! Queue disciplines: one trait, typed drop reasons, accounting kept outside the discipline.
//!
//! Rules:
//! - A discipline *decides*; it keeps no statistics. [`Qdisc::enqueue`] and [`Qdisc::dequeue`]
//!   report every packet they refuse or push out into [`QdiscEvents::dropped`], tagged with a
//!   [`DropReason`] and whether the packet had been enqueued before (`queued`). Marks (ECN CE)
//!   are set on the packet by the discipline and reported with [`QdiscEvents::mark`].
//! - An offered packet ends up exactly once either in the queue or in `dropped` with
//!   `queued == false`. A packet that had been enqueued leaves exactly once, by `dequeue` or in
//!   `dropped` with `queued == true`.
//! - [`Queue`] wraps a discipline and keeps [`QdiscStats`]; the identities
//!   `received = enqueued + dropped_before` and `queued = enqueued - dequeued - dropped_after`
//!   hold after every call and are checked by property tests for every discipline.
//! - Time is passed in (`now`), never read. Randomness comes from a stream given at construction.
//! - A discipline stores packets of its type [`Qdisc::Pkt`]: [`Packet`]s by value, or stand-ins
//!   for packets kept elsewhere (the simulator's `PktRef`: a slab handle plus the fields a
//!   discipline reads). It reads and marks them only through [`QPacket`]. Every built-in
//!   discipline is generic over it with `Packet` as the default, so `DropTail`, `AnyQdisc` and
//!   `Queue<AnyQdisc>` still mean the packet-holding ones (the real-packet switch, the tests).
//! - Dispatch is static: [`AnyQdisc`] is an enum over the disciplines, generated with the rest of
//!   `queue.kind` from one line per discipline in [`registry`] (`docs/extending.md` walks through
//!   adding one). The [`Qdisc`] trait stays public so users can write their own and test it
//!   with the same harness.
//! - Layers: [`framework`] (the trait, events, accounting) knows no discipline; each discipline
//!   imports it; [`registry`] imports the disciplines. Nothing imports upward.
//! - Configuration structs deserialize with unknown keys rejected and validate to a
//!   [`ConfigError`] naming the key (relative to the `queue` table) and the reason.

pub mod afd;
pub mod blackout;
mod bucket_fifos;
pub mod codel;
pub mod droptail;
pub mod drr;
pub mod fq_codel;
pub mod framework;
pub mod hcf;
pub mod loss;
pub mod pfabric;
pub mod red;
pub mod registry;
pub mod sfq;
pub mod xpass;

pub use crate::config::{ConfigError, Limit};
pub use framework::{
    Discipline, DropReason, Dropped, MarkReason, PortContext, Ports, QPacket, Qdisc, QdiscEvents, QdiscStats, Queue,
    Variant,
};
pub use registry::{AnyQdisc, KindInfo, PortWrap, QdiscKind, QueueConfig, KINDS};

/// Test support shared by every discipline's tests: a random workload that checks the
/// accounting identities and conservation after every call.
#[cfg(test)]
pub(crate) mod testkit {
    use super::*;
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
        PortContext { rate: BitsPerSec(100_000_000), mtu: 1500, port_index: 0, streams: Streams::new(seed) }
    }

    /// Drives `q` with `ops` (true = arrival of a packet of flow `flows[i]`, false = departure)
    /// and checks, after every call, both identities, conservation of every packet, and that
    /// stored packets match `len_pkts` / `len_bytes`. Returns the departed packets in order.
    pub fn check_accounting<Q: Qdisc<Pkt = Packet>>(q: Q, arrivals: &[(bool, u32, u32)]) -> Vec<Packet> {
        let mut queue = Queue::new(q);
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
                queue.enqueue(pkt(flow, *s, size), now);
            } else if let Some(p) = queue.dequeue(now) {
                out_bytes += p.size as u64;
                out.push(p);
            }
            for d in queue.ev.dropped.drain(..) {
                dropped += 1;
                drop_bytes += d.pkt.size as u64;
            }
            let st = &queue.stats;
            assert_eq!(st.received_pkts, st.enqueued_pkts + st.dropped_before_pkts());
            assert_eq!(st.queued_pkts(), queue.qdisc.len_pkts() as u64);
            assert_eq!(st.queued_bytes(), queue.qdisc.len_bytes());
            assert_eq!(st.received_pkts, out.len() as u64 + dropped + queue.qdisc.len_pkts() as u64);
            assert_eq!(in_bytes, out_bytes + drop_bytes + queue.qdisc.len_bytes());
        }
        out
    }
}
