//! Leaf-spine: `leaves` leaf (ToR) switches with `hosts_per_leaf` hosts each, every leaf linked
//! to every one of `spines` spine switches.
//!
//! Names: hosts `h0 ..` in leaf order (host `h` under leaf `h / hosts_per_leaf`), leaves `l<i>`,
//! spines `sp<i>`. Host links run at `host_rate_mbps`, leaf-spine links at `fabric_rate_mbps`
//! (oversubscription = hosts_per_leaf x host rate / (spines x fabric rate)), all with
//! `link_delay_us` each way. Every leaf lists its host ports first, then its spine ports in
//! spine order, so symmetric hashing mirrors paths. Measured by default: every leaf -> host port.

use super::{at_least_one, default_host_buffer, link, non_negative, positive, switch_to_host_ports, Kit};
use crate::net::{Network, NodeKind};
use dcfair_core::qdisc::ConfigError;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineConfig {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub host_rate_mbps: f64,
    pub fabric_rate_mbps: f64,
    pub link_delay_us: f64,
    #[serde(default = "default_host_buffer")]
    pub host_buffer_pkts: u32,
}

impl LeafSpineConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least_one("leaves", self.leaves)?;
        at_least_one("spines", self.spines)?;
        at_least_one("hosts_per_leaf", self.hosts_per_leaf)?;
        if self.leaves as u64 * self.hosts_per_leaf as u64 > 1_000_000 {
            return Err(ConfigError::new("hosts_per_leaf", "at most 1,000,000 hosts"));
        }
        positive("host_rate_mbps", self.host_rate_mbps)?;
        positive("fabric_rate_mbps", self.fabric_rate_mbps)?;
        non_negative("link_delay_us", self.link_delay_us)?;
        at_least_one("host_buffer_pkts", self.host_buffer_pkts)
    }

    /// Oversubscription of a leaf: host capacity over spine capacity.
    pub fn oversubscription(&self) -> f64 {
        (self.hosts_per_leaf as f64 * self.host_rate_mbps) / (self.spines as f64 * self.fabric_rate_mbps)
    }

    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let host_link = link(self.host_rate_mbps, self.link_delay_us);
        let fabric = link(self.fabric_rate_mbps, self.link_delay_us);
        let n = self.leaves * self.hosts_per_leaf;
        let hosts: Vec<u32> = (0..n).map(|i| net.add_node(NodeKind::Host, format!("h{i}"))).collect();
        let leaves: Vec<u32> = (0..self.leaves).map(|i| net.add_node(NodeKind::Switch, format!("l{i}"))).collect();
        let spines: Vec<u32> = (0..self.spines).map(|i| net.add_node(NodeKind::Switch, format!("sp{i}"))).collect();
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
}
