//! Leaf-spine: `leaves` leaf (ToR) switches with `hosts_per_leaf` hosts each, every leaf linked
//! to every one of `spines` spine switches.
//!
//! Names: hosts `h0 ..` in leaf order (host `h` under leaf `h / hosts_per_leaf`), leaves `l<i>`,
//! spines `sp<i>`. Host links run at `host_rate_mbps`, leaf-spine links at `fabric_rate_mbps`,
//! all with `link_delay_us` each way. Oversubscription = hosts_per_leaf x host rate / (spines x
//! fabric rate); a scenario gives either `fabric_rate_mbps` or `oversubscription` (then the
//! fabric rate is the one that gives it), not both. Every leaf lists its host ports first, then
//! its spine ports in spine order, so symmetric hashing mirrors paths. Measured by default:
//! every leaf -> host port.

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
    /// Rate of every leaf-spine link; or derived from `oversubscription`.
    #[serde(default)]
    pub fabric_rate_mbps: Option<f64>,
    /// A leaf's host capacity over its spine capacity (1 = non-blocking); the alternative
    /// to `fabric_rate_mbps`.
    #[serde(default)]
    pub oversubscription: Option<f64>,
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
        match (self.fabric_rate_mbps, self.oversubscription) {
            (Some(r), None) => positive("fabric_rate_mbps", r)?,
            (None, Some(o)) => positive("oversubscription", o)?,
            (Some(_), Some(_)) => {
                return Err(ConfigError::new("oversubscription", "give fabric_rate_mbps or oversubscription, not both"))
            }
            (None, None) => {
                return Err(ConfigError::new("fabric_rate_mbps", "missing: give fabric_rate_mbps or oversubscription"))
            }
        }
        non_negative("link_delay_us", self.link_delay_us)?;
        at_least_one("host_buffer_pkts", self.host_buffer_pkts)
    }

    /// Rate of a leaf-spine link, Mbit/s: as given, or the one that gives the oversubscription.
    pub fn fabric_rate(&self) -> f64 {
        match (self.fabric_rate_mbps, self.oversubscription) {
            (Some(r), _) => r,
            (None, Some(o)) => self.hosts_per_leaf as f64 * self.host_rate_mbps / (self.spines as f64 * o),
            (None, None) => unreachable!("validate() requires one of them"),
        }
    }

    /// Oversubscription of a leaf: host capacity over spine capacity.
    pub fn oversubscription(&self) -> f64 {
        (self.hosts_per_leaf as f64 * self.host_rate_mbps) / (self.spines as f64 * self.fabric_rate())
    }

    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let host_link = link(self.host_rate_mbps, self.link_delay_us);
        let fabric = link(self.fabric_rate(), self.link_delay_us);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(fabric: Option<f64>, over: Option<f64>) -> LeafSpineConfig {
        LeafSpineConfig {
            leaves: 9,
            spines: 4,
            hosts_per_leaf: 16,
            host_rate_mbps: 10_000.0,
            fabric_rate_mbps: fabric,
            oversubscription: over,
            link_delay_us: 1.0,
            host_buffer_pkts: 100,
        }
    }

    #[test]
    fn oversubscription_and_fabric_rate_are_two_ways_to_say_one_thing() {
        // pFabric's fabric: 16 x 10 Gbit/s under a leaf, 4 x 40 Gbit/s above it: non-blocking
        assert_eq!(cfg(Some(40_000.0), None).oversubscription(), 1.0);
        assert_eq!(cfg(None, Some(1.0)).fabric_rate(), 40_000.0);
        assert_eq!(cfg(None, Some(4.0)).fabric_rate(), 10_000.0);
        assert_eq!(cfg(None, Some(4.0)).oversubscription(), 4.0);
        assert_eq!(cfg(Some(10_000.0), None).oversubscription(), 4.0);
    }

    #[test]
    fn exactly_one_of_them_is_given_and_it_is_positive() {
        assert!(cfg(Some(40_000.0), None).validate().is_ok() && cfg(None, Some(3.0)).validate().is_ok());
        assert_eq!(cfg(None, None).validate().unwrap_err().key, "fabric_rate_mbps");
        assert_eq!(cfg(Some(1.0), Some(1.0)).validate().unwrap_err().key, "oversubscription");
        assert_eq!(cfg(None, Some(0.0)).validate().unwrap_err().key, "oversubscription");
        assert_eq!(cfg(None, Some(-2.0)).validate().unwrap_err().key, "oversubscription");
        assert_eq!(cfg(Some(-1.0), None).validate().unwrap_err().key, "fabric_rate_mbps");
    }
}
