//! The k-ary fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008), the topology of the TCP
//! Outcast paper's testbed.
//!
//! `k` pods, each with `k/2` edge (ToR) and `k/2` aggregation switches; `(k/2)^2` core
//! switches; `k/2` hosts per edge switch, `k^3/4` hosts in all. Names: hosts `h0 ..` in pod
//! order (host `h` sits under edge `h / (k/2)`), edge switches `e<pod>_<i>`, aggregation
//! `a<pod>_<i>`, cores `c<i>`. Edge `e<p>_<i>` links to every aggregation switch of its pod;
//! aggregation `a<p>_<j>` links to cores `c<j (k/2)> .. c<j (k/2) + k/2 - 1>`. Every switch port
//! lists its down links first, then its up links in index order, so symmetric hashing mirrors
//! paths. Host links run at `host_rate_mbps`, switch-switch links at `fabric_rate_mbps`, all with
//! `link_delay_us` each way. Measured by default: every switch -> host port. Tiers (`fabric.csv`):
//! `edge`, `aggregation`, `core`.
//!
//! The builder only: the configuration ([`FatTreeConfig`]: keys, checks, host names) is the config
//! layer's (`scenario/topology.rs`).

use super::kit::{link, switch_to_host_ports, Kit};
use crate::net::{Network, NodeKind, Tier};
use crate::routing::Tiers;
use crate::scenario::topology::FatTreeConfig;

impl FatTreeConfig {
    /// Builds the network: returns it, its core switches (the waypoints of equal-length
    /// routing) and its measured ports by default.
    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let (k, h) = (self.k, self.k / 2);
        let host_link = link(self.host_rate_mbps, self.link_delay_us);
        let fabric = link(self.fabric_rate_mbps, self.link_delay_us);
        let hosts: Vec<u32> = (0..self.hosts()).map(|i| net.add_node(NodeKind::Host, format!("h{i}"))).collect();
        let edge: Vec<Vec<u32>> =
            (0..k).map(|p| (0..h).map(|i| net.add_switch(Tier::Edge, format!("e{p}_{i}"))).collect()).collect();
        let agg: Vec<Vec<u32>> =
            (0..k).map(|p| (0..h).map(|i| net.add_switch(Tier::Aggregation, format!("a{p}_{i}"))).collect()).collect();
        let cores: Vec<u32> = (0..h * h).map(|i| net.add_switch(Tier::Core, format!("c{i}"))).collect();
        // Down links first at every switch: hosts under edges, then edges under aggregations,
        // then aggregations under cores (pod order).
        let per_edge = h as usize;
        for (e, &sw) in edge.iter().flatten().enumerate() {
            for &host in &hosts[e * per_edge..(e + 1) * per_edge] {
                kit.link(&mut net, sw, host, host_link);
            }
        }
        for (pod_aggs, pod_edges) in agg.iter().zip(&edge) {
            for &a in pod_aggs {
                for &e in pod_edges {
                    kit.link(&mut net, a, e, fabric);
                }
            }
        }
        for (c, &core) in cores.iter().enumerate() {
            let j = c / per_edge; // the aggregation index this core serves in every pod
            for pod_aggs in &agg {
                kit.link(&mut net, core, pod_aggs[j], fabric);
            }
        }
        let measured = switch_to_host_ports(&net);
        (net, cores, measured)
    }

    /// The tiers as [`FatTreeConfig::build`] lays them out: `k/2` edges and `k/2` aggregation
    /// switches to a pod, cores last.
    pub(crate) fn tiers(&self) -> Tiers {
        let h = self.k / 2;
        Tiers { edges: self.k * h, per_pod: h, aggs: self.k * h }
    }
}
