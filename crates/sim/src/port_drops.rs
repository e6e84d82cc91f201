//! Drops per port and flow (`port_drops.csv`): at every measured port, the packets each flow
//! lost there, by reason.
//!
//! Rules:
//! - Counted where the engine already handles a port's drops: the packets a queue call
//!   reported dropped, before their slab slots are freed, and a shared buffer's refusal. Only
//!   at measured ports, and out of line: a queue call that drops nothing pays nothing for it,
//!   nor does a run that drops nothing.
//! - Every drop `ports.csv` counts at a measured port is counted here once: under the flow id
//!   the packet carries (data, ACKs and credits alike, as in `trace.csv`), the reason the
//!   discipline gave, and the packet's size at the port. So the rows of a port sum to its
//!   `drops`, and by reason to its `drops_<reason>`. (A PFC run's lossless drops are not the
//!   discipline's: `ports.csv` counts them apart, in `lossless_drops`, and so does this file.)
//! - State: one entry per (port, flow, reason) that dropped, in a hash map; a flow that drops
//!   nothing costs nothing. The table is sorted by port id, flow id and reason code, so it is a
//!   pure function of the run whatever the map's order.
//! - Imports no engine: the engine calls [`PortDrops::count`] and [`PortDrops::add`]; the
//!   table is rendered from the counts, the ports' names and the flows' groups.

use crate::columns::{CatBuilder, Column, Table};
use crate::net::Network;
use crate::pktref::{PktRef, Slab};
use dcfair_core::qdisc::{DropReason, Dropped};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The drops counted so far, by (port, flow, reason): packets and bytes.
#[derive(Clone, Debug, Default)]
pub struct PortDrops {
    counts: HashMap<u64, (u64, u64), BuildHasherDefault<KeyHasher>>,
}

// A key packs the port id (28 bits), the flow id (32 bits) and the reason (4 bits).
const FLOW_SHIFT: u32 = 4;
const PORT_SHIFT: u32 = 36;
const _: () = assert!(DropReason::COUNT <= 1 << FLOW_SHIFT, "a drop reason no longer fits its 4 bits");

/// The most ports a network may have for its drops to be counted by port (the key's 28 bits).
pub const MAX_PORTS: usize = 1 << (64 - PORT_SHIFT);

#[inline]
fn key(port: u32, flow: u32, reason: DropReason) -> u64 {
    (port as u64) << PORT_SHIFT | (flow as u64) << FLOW_SHIFT | reason as u64
}

impl PortDrops {
    /// The drops of one queue call of measured port `port` (`dropped`, as the call reported
    /// them; their packets still in `slab`).
    #[inline]
    pub(crate) fn count(&mut self, port: u32, dropped: &[Dropped<PktRef>], slab: &Slab) {
        for d in dropped {
            self.add(port, slab.pkt(d.pkt.handle).flow, d.reason, d.pkt.size);
        }
    }

    /// One packet of `flow`, `size` bytes, dropped at measured port `port` for `reason`.
    #[inline]
    pub fn add(&mut self, port: u32, flow: u32, reason: DropReason, size: u32) {
        debug_assert!((port as usize) < MAX_PORTS);
        let c = self.counts.entry(key(port, flow, reason)).or_insert((0, 0));
        c.0 += 1;
        c.1 += size as u64;
    }

    /// Adds the counts of `other`, which counted other ports (a part of a run on several
    /// threads counts the ports of its nodes alone).
    pub fn absorb(&mut self, other: PortDrops) {
        for (k, (n, b)) in other.counts {
            let c = self.counts.entry(k).or_insert((0, 0));
            c.0 += n;
            c.1 += b;
        }
    }

    /// `port_drops.csv`: one row per port, flow and reason with drops, by port id, flow id and
    /// reason code; ports named as in `net`, groups by flow id (`flow_group`, indices into
    /// `group_names`). Columns `port, flow_id, group, reason, pkts, bytes`.
    pub fn table(&self, net: &Network, flow_group: &[u16], group_names: &[String]) -> Table {
        let mut rows: Vec<(u64, (u64, u64))> = self.counts.iter().map(|(&k, &v)| (k, v)).collect();
        rows.sort_unstable_by_key(|&(k, _)| k);
        let mut port = CatBuilder::new();
        let (mut flow, mut pkts, mut bytes) = (Vec::new(), Vec::new(), Vec::new());
        let (mut group, mut reason) = (Vec::new(), Vec::new());
        for (k, (n, b)) in rows {
            let f = (k >> FLOW_SHIFT) as u32;
            port.push(&net.ports[(k >> PORT_SHIFT) as usize].name);
            flow.push(f as u64);
            group.push(flow_group.get(f as usize).map_or(u32::MAX, |&g| g as u32));
            reason.push((k & ((1 << FLOW_SHIFT) - 1)) as u32);
            pkts.push(n);
            bytes.push(b);
        }
        let reasons: Vec<String> = DropReason::ALL.iter().map(|r| r.as_str().to_string()).collect();
        let mut t = Table::new();
        t.push("port", port.finish());
        t.push("flow_id", Column::U64(flow));
        t.push("group", CatBuilder::from_codes(group, group_names));
        t.push("reason", CatBuilder::from_codes(reason, &reasons));
        t.push("pkts", Column::U64(pkts));
        t.push("bytes", Column::U64(bytes));
        t
    }
}

/// The hash of a packed key: one 64 x 64 -> 128-bit multiply, folded (the keys are dense
/// small numbers, which a plain multiply would leave in the low bits the map indexes by).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write_u64(&mut self, k: u64) {
        let m = (k ^ self.0) as u128 * 0x9e37_79b9_7f4a_7c15;
        self.0 = (m as u64) ^ (m >> 64) as u64;
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{LinkSpec, NodeKind};
    use dcfair_core::qdisc::{droptail::DropTail, AnyQdisc, Limit, Queue};
    use dcfair_core::time::{BitsPerSec, SimDuration};

    /// Two hosts on one switch: ports `a->sw` (0), `sw->a` (1), `b->sw` (2), `sw->b` (3).
    fn net() -> Network {
        let mut net = Network::default();
        let (a, b) = (net.add_node(NodeKind::Host, "a".into()), net.add_node(NodeKind::Host, "b".into()));
        let sw = net.add_node(NodeKind::Switch, "sw".into());
        let l = LinkSpec { rate: BitsPerSec(1_000_000_000), delay: SimDuration::ZERO, rate_f: 1e9, delay_f: 0.0 };
        let q = || Queue::new(AnyQdisc::DropTail(DropTail::new(Limit::pkts(1))));
        net.connect(a, sw, l, l, q(), q());
        net.connect(b, sw, l, l, q(), q());
        net
    }

    #[test]
    fn rows_are_sorted_by_port_flow_and_reason_and_sum_what_was_added() {
        let mut d = PortDrops::default();
        for (port, flow, reason, size) in [
            (3, 7, DropReason::Overflow, 1500),
            (1, 9, DropReason::Overflow, 1500),
            (3, 2, DropReason::RedEarly, 40),
            (3, 2, DropReason::Overflow, 1500),
            (3, 7, DropReason::Overflow, 1000),
            (1, 9, DropReason::Overflow, 1500),
        ] {
            d.add(port, flow, reason, size);
        }
        let groups = ["g0".to_string(), "g1".to_string()];
        let flow_group = [0u16, 0, 1, 0, 0, 0, 0, 1, 0, 0];
        let csv = d.table(&net(), &flow_group, &groups).to_csv();
        assert_eq!(
            csv,
            "port,flow_id,group,reason,pkts,bytes\n\
             sw->a,9,g0,overflow,2,3000\n\
             sw->b,2,g1,overflow,1,1500\n\
             sw->b,2,g1,red_early,1,40\n\
             sw->b,7,g1,overflow,2,2500\n"
        );
    }

    #[test]
    fn no_drop_is_a_table_of_its_header() {
        let t = PortDrops::default().table(&net(), &[], &[]);
        assert_eq!(t.rows(), 0);
        assert_eq!(t.to_csv(), "port,flow_id,group,reason,pkts,bytes\n");
    }

    #[test]
    fn keys_keep_their_parts_apart() {
        let k = key((MAX_PORTS - 1) as u32, u32::MAX, DropReason::ALL[DropReason::COUNT - 1]);
        assert_eq!(k >> PORT_SHIFT, (MAX_PORTS - 1) as u64);
        assert_eq!((k >> FLOW_SHIFT) as u32, u32::MAX);
        assert_eq!(k & 15, DropReason::COUNT as u64 - 1);
    }
}
