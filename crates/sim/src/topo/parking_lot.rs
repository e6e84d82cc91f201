//! Parking lot: `bottlenecks` links in series, switches `p0 .. p<bottlenecks>` in a chain.
//!
//! Each switch `p<i>` has two hosts, `src<i>` and `dst<i>`, on host links (`host_rate_mbps`,
//! `link_delay_us`). The chain links `p<i> -> p<i+1>` run at `bottleneck_rate_mbps` with
//! `link_delay_us` each way and are measured by default. The classic workload: one long flow
//! `src0 -> dst<bottlenecks>` crossing every bottleneck, and one cross flow `src<i> -> dst<i+1>`
//! per bottleneck (ExpressPass's figure 10).
//!
//! The builder only: the configuration ([`ParkingLotConfig`]: keys, checks, host names) is the
//! config layer's (`scenario/topology.rs`).

use super::kit::{link, Kit};
use crate::net::{Network, NodeKind};
use crate::scenario::topology::ParkingLotConfig;

impl ParkingLotConfig {
    /// Builds the network: returns it, its core switches (the waypoints of equal-length
    /// routing) and its measured ports by default.
    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let host_link = link(self.host_rate_mbps, self.link_delay_us);
        let chain = link(self.bottleneck_rate_mbps, self.link_delay_us);
        let hosts: Vec<(u32, u32)> = (0..=self.bottlenecks)
            .map(|i| (net.add_node(NodeKind::Host, format!("src{i}")), net.add_node(NodeKind::Host, format!("dst{i}"))))
            .collect();
        let sw: Vec<u32> = (0..=self.bottlenecks).map(|i| net.add_node(NodeKind::Switch, format!("p{i}"))).collect();
        for (i, &(s, d)) in hosts.iter().enumerate() {
            kit.link(&mut net, sw[i], s, host_link);
            kit.link(&mut net, sw[i], d, host_link);
        }
        let mut measured = Vec::new();
        for i in 0..self.bottlenecks as usize {
            let (forward, _) = kit.link(&mut net, sw[i], sw[i + 1], chain);
            measured.push(forward);
        }
        (net, Vec::new(), measured)
    }
}
