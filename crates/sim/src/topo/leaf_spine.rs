//! Leaf-spine: `leaves` leaf (ToR) switches with `hosts_per_leaf` hosts each, every leaf linked
//! to every one of `spines` spine switches.
//!
//! Names: hosts `h0 ..` in leaf order (host `h` under leaf `h / hosts_per_leaf`), leaves `l<i>`,
//! spines `sp<i>`. Host links run at `host_rate_mbps`, leaf-spine links at `fabric_rate_mbps`,
//! all with `link_delay_us` each way. Oversubscription = hosts_per_leaf x host rate / (spines x
//! fabric rate); a scenario gives either `fabric_rate_mbps` or `oversubscription` (then the
//! fabric rate is the one that gives it), not both. Every leaf lists its host ports first, then
//! its spine ports in spine order, so symmetric hashing mirrors paths. Measured by default:
//! every leaf -> host port. Tiers (`fabric.csv`): `leaf`, `spine`.
//!
//! The builder only: the configuration ([`LeafSpineConfig`]: keys, checks, host names) is the
//! config layer's (`scenario/topology.rs`).

use super::kit::{link, switch_to_host_ports, Kit};
use crate::net::{Network, NodeKind, Tier};
use crate::routing::Tiers;
use crate::scenario::topology::LeafSpineConfig;

impl LeafSpineConfig {
    /// Builds the network: returns it, its core switches (the waypoints of equal-length
    /// routing) and its measured ports by default.
    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let host_link = link(self.host_rate_mbps, self.link_delay_us);
        let fabric = link(self.fabric_rate(), self.link_delay_us);
        let n = self.leaves * self.hosts_per_leaf;
        let hosts: Vec<u32> = (0..n).map(|i| net.add_node(NodeKind::Host, format!("h{i}"))).collect();
        let leaves: Vec<u32> = (0..self.leaves).map(|i| net.add_switch(Tier::Leaf, format!("l{i}"))).collect();
        let spines: Vec<u32> = (0..self.spines).map(|i| net.add_switch(Tier::Spine, format!("sp{i}"))).collect();
        for (i, &h) in hosts.iter().enumerate() {
            kit.link(&mut net, leaves[i / self.hosts_per_leaf as usize], h, host_link);
        }
        for &l in &leaves {
            for &s in &spines {
                kit.link(&mut net, s, l, fabric);
            }
        }
        let measured = switch_to_host_ports(&net);
        (net, spines, measured)
    }

    /// The tiers as [`LeafSpineConfig::build`] lays them out: every leaf a pod of its own,
    /// spines last.
    pub(crate) fn tiers(&self) -> Tiers {
        Tiers { edges: self.leaves, per_pod: 1, aggs: 0 }
    }
}
