//! The fabric family: `fabric.csv`, the network as built, one row per port (every port of every
//! node, measured or not), and `port_drops.csv`, the drops of each flow at each measured port
//! (`port_drops.rs` counts them).
//!
//! Rules:
//! - A port's row says what the network is, not what happened in it: a scenario gives the same
//!   `fabric.csv` whatever its seed.
//! - Rows come in port id order: the order the topology builder made the links, the two
//!   directions of a link together.
//! - A node's `tier` is its builder's name for its role (`net::Tier`); its `level` is the
//!   number of links between it and the nearest host (hosts 0, a fat-tree's edges 1, its
//!   aggregation switches 2, its cores 3), empty for a switch no host reaches.

use crate::columns::{CatBuilder, Column, Table};
use crate::engine::Sim;
use crate::net::Network;
use dcfair_core::qdisc::Qdisc;

/// `fabric.csv` as columns: `port, node, tier, level, peer, rate_bps, delay_s, queue_kind,
/// measured`.
pub(super) fn table(net: &Network) -> Table {
    let level = net.levels();
    let (mut port, mut node, mut tier, mut peer, mut kind) = (CatBuilder::new(), CatBuilder::new(), CatBuilder::new(), CatBuilder::new(), CatBuilder::new());
    for p in &net.ports {
        let n = &net.nodes[p.node as usize];
        port.push(&p.name);
        node.push(&n.name);
        tier.push(n.tier.as_str());
        peer.push(&net.nodes[p.peer_node as usize].name);
        kind.push(p.queue.qdisc.name());
    }
    let mut t = Table::new();
    t.push("port", port.finish());
    t.push("node", node.finish());
    t.push("tier", tier.finish());
    t.push("level", Column::OptU64(net.ports.iter().map(|p| level[p.node as usize]).collect()));
    t.push("peer", peer.finish());
    t.push("rate_bps", Column::U64(net.ports.iter().map(|p| p.rate.0).collect()));
    t.push("delay_s", Column::F64(net.ports.iter().map(|p| p.delay.as_secs_f64()).collect()));
    t.push("queue_kind", kind.finish());
    t.push("measured", Column::U64(net.ports.iter().map(|p| p.measured as u64).collect()));
    t
}

/// `port_drops.csv` of `sim` (`port_drops.rs`).
pub(super) fn drops_table(sim: &Sim) -> Table {
    let w = sim.world();
    w.port_drops.table(&w.net, &w.flow_group, &w.group_names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{LinkSpec, NodeKind, Tier};
    use dcfair_core::qdisc::{droptail::DropTail, AnyQdisc, Limit, Queue};
    use dcfair_core::time::{BitsPerSec, SimDuration};

    /// Host `h` on switch `lo`, `lo` on `hi`, and `far`, a switch no host reaches.
    #[test]
    fn levels_count_links_from_the_nearest_host_and_rows_follow_the_ports() {
        let mut net = Network::default();
        let h = net.add_node(NodeKind::Host, "h".into());
        let lo = net.add_switch(Tier::Leaf, "lo".into());
        let hi = net.add_switch(Tier::Spine, "hi".into());
        let _far = net.add_node(NodeKind::Switch, "far".into());
        let l = LinkSpec { rate: BitsPerSec(10_000_000_000), delay: SimDuration::from_secs_f64(5e-6), rate_f: 1e10, delay_f: 5e-6 };
        let q = || Queue::new(AnyQdisc::DropTail(DropTail::new(Limit::pkts(8))));
        net.connect(h, lo, l, l, q(), q());
        net.connect(hi, lo, l, l, q(), q());
        assert_eq!(net.levels()[..], [0, 1, 2, u64::MAX][..]);
        net.ports[3].measured = true;
        assert_eq!(
            table(&net).to_csv(),
            "port,node,tier,level,peer,rate_bps,delay_s,queue_kind,measured\n\
             h->lo,h,host,0,lo,10000000000,0.000005,droptail,0\n\
             lo->h,lo,leaf,1,h,10000000000,0.000005,droptail,0\n\
             hi->lo,hi,spine,2,lo,10000000000,0.000005,droptail,0\n\
             lo->hi,lo,leaf,1,hi,10000000000,0.000005,droptail,1\n"
        );
    }
}
