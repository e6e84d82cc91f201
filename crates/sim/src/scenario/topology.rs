//! The `[topology]` table (one configuration per kind) and the per-port settings of `[ports]`
//! and of custom links ([`PortQueue`]).
//!
//! Rules:
//! - Holds what a scenario says about its topology and what follows from that alone: the
//!   values' checks, the host names, the default end points. The builders that turn a
//!   configuration into a network are in `topo/` (one file per kind, a method `build` of the
//!   kind's configuration); `docs/topologies.md` describes each topology.
//! - Every topology knows its host names before it is built ([`TopologyConfig::host_names`]),
//!   so a scenario naming a host that does not exist is rejected by validation.
//! - Error keys are relative to `topology` (to the `[ports]` entry for [`PortQueue`]).
//! - Imports nothing of this crate but the config layer's value checks.

use super::check::{at_least_one, non_negative, positive};
use dcfair_core::qdisc::{ConfigError, QueueConfig};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The `[topology]` table, tagged by `kind`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// `senders` hosts -> one switch -> bottleneck port(s) -> `receivers` hosts.
    Dumbbell(DumbbellConfig),
    /// The k-ary fat-tree of Al-Fares et al. (k pods, k^3/4 hosts).
    FatTree(FatTreeConfig),
    /// Two tiers: every leaf to every spine.
    LeafSpine(LeafSpineConfig),
    /// A chain of switches whose links are bottlenecks in series.
    ParkingLot(ParkingLotConfig),
    /// Hosts, switches and links given one by one.
    Custom(CustomConfig),
}

impl TopologyConfig {
    /// Buffer of a host NIC, packets (`host_buffer_pkts` of every topology).
    pub fn host_buffer_pkts(&self) -> u32 {
        match self {
            TopologyConfig::Dumbbell(c) => c.host_buffer_pkts,
            TopologyConfig::FatTree(c) => c.host_buffer_pkts,
            TopologyConfig::LeafSpine(c) => c.host_buffer_pkts,
            TopologyConfig::ParkingLot(c) => c.host_buffer_pkts,
            TopologyConfig::Custom(c) => c.host_buffer_pkts,
        }
    }

    /// Checks every value; error keys are relative to `topology`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            TopologyConfig::Dumbbell(c) => c.validate(),
            TopologyConfig::FatTree(c) => c.validate(),
            TopologyConfig::LeafSpine(c) => c.validate(),
            TopologyConfig::ParkingLot(c) => c.validate(),
            TopologyConfig::Custom(c) => c.validate(),
        }
    }

    /// Names of the hosts, in the order of their node ids.
    pub fn host_names(&self, with_udp_host: bool) -> Vec<String> {
        match self {
            TopologyConfig::Dumbbell(c) => c.host_names(with_udp_host),
            TopologyConfig::FatTree(c) => (0..c.hosts()).map(|i| format!("h{i}")).collect(),
            TopologyConfig::LeafSpine(c) => (0..c.leaves * c.hosts_per_leaf).map(|i| format!("h{i}")).collect(),
            TopologyConfig::ParkingLot(c) => c.host_names(),
            TopologyConfig::Custom(c) => c.hosts.clone(),
        }
    }

    /// Ports of its switches (every port but the hosts' NICs), as the builder will make them:
    /// two ports per link, less one per host (a host has exactly one link). `with_udp_host`: the
    /// dumbbell's `udp` host is built (the scenario has `[udp]`).
    pub fn switch_ports(&self, with_udp_host: bool) -> u64 {
        let links = match self {
            TopologyConfig::Dumbbell(c) => c.host_names(with_udp_host).len() as u64,
            TopologyConfig::FatTree(c) => 3 * c.hosts() as u64,
            TopologyConfig::LeafSpine(c) => c.leaves as u64 * (c.hosts_per_leaf as u64 + c.spines as u64),
            TopologyConfig::ParkingLot(c) => c.host_names().len() as u64 + c.bottlenecks as u64,
            TopologyConfig::Custom(c) => c.links.len() as u64,
        };
        2 * links - self.host_names(with_udp_host).len() as u64
    }

    /// UDP end points when `[udp]` names none: the dumbbell's own `udp` host to `r0`.
    pub fn default_udp_endpoints(&self) -> Option<(&'static str, &'static str)> {
        match self {
            TopologyConfig::Dumbbell(_) => Some((UDP_HOST, "r0")),
            _ => None,
        }
    }

    /// Flow end points when a flow group names none: the dumbbell's senders and receivers.
    pub fn default_endpoints(&self) -> Option<(Vec<String>, Vec<String>)> {
        match self {
            TopologyConfig::Dumbbell(c) => Some(c.endpoints()),
            _ => None,
        }
    }
}

/// A port's own buffer and/or discipline: the value of `[ports."<port name>"]` in a scenario,
/// and of the per-link and per-end keys of custom links (`docs/topologies.md`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PortQueue {
    /// Buffer in packets: `limit_pkts` of the port's discipline, whichever it is.
    pub buffer_pkts: Option<u32>,
    /// The discipline (a `[queue]` table). Without `limit_pkts` / `limit_bytes` the port keeps
    /// the buffer it had.
    pub queue: Option<QueueConfig>,
    /// Random loss at the port's entry, a probability per packet (`qdisc/loss.rs` in the core).
    pub loss_rate: Option<f64>,
}

impl PortQueue {
    pub fn is_empty(&self) -> bool {
        self.buffer_pkts.is_none() && self.queue.is_none() && self.loss_rate.is_none()
    }

    /// Checks what can be checked without the port (errors relative to this table).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.buffer_pkts == Some(0) {
            return Err(ConfigError::new("buffer_pkts", "must be at least 1 packet"));
        }
        if let Some(r) = self.loss_rate {
            dcfair_core::qdisc::loss::validate_rate("loss_rate", r)?;
        }
        if let (Some(_), Some(q)) = (self.buffer_pkts, &self.queue) {
            if q.limit_pkts.is_some() || q.limit_bytes.is_some() {
                return Err(ConfigError::new("buffer_pkts", "the queue table sets the buffer too: give buffer_pkts or queue.limit_pkts, not both"));
            }
        }
        Ok(())
    }
}

pub(crate) fn default_host_buffer() -> u32 {
    1000
}

// ---------------------------------------------------------------------------------------------
// Dumbbell (`topo/dumbbell.rs`)
// ---------------------------------------------------------------------------------------------

/// Name of the host the dumbbell adds for UDP background.
pub const UDP_HOST: &str = "udp";

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellConfig {
    /// Sender hosts (TCP flows are spread over them round robin).
    pub senders: u32,
    #[serde(default = "one")]
    pub receivers: u32,
    /// Rate of every sender link (both directions), Mbit/s.
    pub access_rate_mbps: f64,
    /// One-way propagation delay of a sender link, microseconds.
    pub access_delay_us: f64,
    /// Rate of each switch-receiver link (the bottleneck), Mbit/s.
    pub bottleneck_rate_mbps: f64,
    /// One-way propagation delay of each switch-receiver link, microseconds.
    pub bottleneck_delay_us: f64,
    /// Buffer of host NICs and of the non-bottleneck switch ports, packets.
    #[serde(default = "default_host_buffer")]
    pub host_buffer_pkts: u32,
}

fn one() -> u32 {
    1
}

impl DumbbellConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least_one("senders", self.senders)?;
        at_least_one("receivers", self.receivers)?;
        if self.senders > 1_000_000 || self.receivers > 1_000_000 {
            return Err(ConfigError::new("senders", "at most 1,000,000 hosts per side"));
        }
        positive("access_rate_mbps", self.access_rate_mbps)?;
        positive("bottleneck_rate_mbps", self.bottleneck_rate_mbps)?;
        non_negative("access_delay_us", self.access_delay_us)?;
        non_negative("bottleneck_delay_us", self.bottleneck_delay_us)?;
        at_least_one("host_buffer_pkts", self.host_buffer_pkts)
    }

    pub fn host_names(&self, with_udp_host: bool) -> Vec<String> {
        let (s, r) = self.endpoints();
        let mut v: Vec<String> = s.into_iter().chain(r).collect();
        if with_udp_host {
            v.push(UDP_HOST.into());
        }
        v
    }

    /// (senders, receivers) by name.
    pub fn endpoints(&self) -> (Vec<String>, Vec<String>) {
        ((0..self.senders).map(|i| format!("s{i}")).collect(), (0..self.receivers).map(|i| format!("r{i}")).collect())
    }
}

// ---------------------------------------------------------------------------------------------
// Fat-tree (`topo/fat_tree.rs`)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Ports per switch; even, at least 2.
    pub k: u32,
    pub host_rate_mbps: f64,
    pub fabric_rate_mbps: f64,
    pub link_delay_us: f64,
    #[serde(default = "default_host_buffer")]
    pub host_buffer_pkts: u32,
}

impl FatTreeConfig {
    pub fn hosts(&self) -> u32 {
        self.k * self.k * self.k / 4
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.k < 2 || self.k % 2 == 1 {
            return Err(ConfigError::new("k", format!("a fat-tree needs an even k of at least 2, got {}", self.k)));
        }
        if self.k > 128 {
            return Err(ConfigError::new("k", format!("at most 128 (524,288 hosts), got {}", self.k)));
        }
        positive("host_rate_mbps", self.host_rate_mbps)?;
        positive("fabric_rate_mbps", self.fabric_rate_mbps)?;
        non_negative("link_delay_us", self.link_delay_us)?;
        at_least_one("host_buffer_pkts", self.host_buffer_pkts)
    }
}

// ---------------------------------------------------------------------------------------------
// Leaf-spine (`topo/leaf_spine.rs`)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Deserialize, Serialize)]
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
}

// ---------------------------------------------------------------------------------------------
// Parking lot (`topo/parking_lot.rs`)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotConfig {
    pub bottlenecks: u32,
    pub host_rate_mbps: f64,
    pub bottleneck_rate_mbps: f64,
    pub link_delay_us: f64,
    #[serde(default = "default_host_buffer")]
    pub host_buffer_pkts: u32,
}

impl ParkingLotConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least_one("bottlenecks", self.bottlenecks)?;
        if self.bottlenecks > 10_000 {
            return Err(ConfigError::new("bottlenecks", "at most 10,000"));
        }
        positive("host_rate_mbps", self.host_rate_mbps)?;
        positive("bottleneck_rate_mbps", self.bottleneck_rate_mbps)?;
        non_negative("link_delay_us", self.link_delay_us)?;
        at_least_one("host_buffer_pkts", self.host_buffer_pkts)
    }

    pub fn host_names(&self) -> Vec<String> {
        (0..=self.bottlenecks).flat_map(|i| [format!("src{i}"), format!("dst{i}")]).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Custom (`topo/custom.rs`)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomConfig {
    pub hosts: Vec<String>,
    pub switches: Vec<String>,
    pub links: Vec<LinkConfig>,
    #[serde(default = "default_host_buffer")]
    pub host_buffer_pkts: u32,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub a: String,
    pub b: String,
    pub rate_mbps: f64,
    pub delay_us: f64,
    #[serde(default)]
    pub measured: bool,
    /// Buffer (packets) of both ports of the link.
    pub buffer_pkts: Option<u32>,
    /// Discipline of both ports (a `[queue]` table).
    pub queue: Option<QueueConfig>,
    /// Random loss of both ports of the link (a probability per packet).
    pub loss_rate: Option<f64>,
    /// Buffer, discipline and loss of a's port (a -> b) only, over the three above.
    pub a_buffer_pkts: Option<u32>,
    pub a_queue: Option<QueueConfig>,
    pub a_loss_rate: Option<f64>,
    /// Buffer, discipline and loss of b's port (b -> a) only.
    pub b_buffer_pkts: Option<u32>,
    pub b_queue: Option<QueueConfig>,
    pub b_loss_rate: Option<f64>,
}

impl LinkConfig {
    /// The settings of both ends, of a's end and of b's end.
    pub(crate) fn port_queues(&self) -> [PortQueue; 3] {
        let pq = |buffer_pkts, queue: &Option<QueueConfig>, loss_rate| PortQueue { buffer_pkts, queue: queue.clone(), loss_rate };
        [
            pq(self.buffer_pkts, &self.queue, self.loss_rate),
            pq(self.a_buffer_pkts, &self.a_queue, self.a_loss_rate),
            pq(self.b_buffer_pkts, &self.b_queue, self.b_loss_rate),
        ]
    }
}

impl CustomConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least_one("host_buffer_pkts", self.host_buffer_pkts)?;
        let mut seen = HashMap::new();
        for (i, n) in self.hosts.iter().chain(&self.switches).enumerate() {
            if n.is_empty() {
                return Err(ConfigError::new(if i < self.hosts.len() { "hosts" } else { "switches" }, "a name may not be empty"));
            }
            if seen.insert(n.as_str(), i).is_some() {
                return Err(ConfigError::new("hosts", format!("the name {n:?} is used twice")));
            }
        }
        if self.hosts.is_empty() {
            return Err(ConfigError::new("hosts", "at least one host"));
        }
        let mut nic = HashMap::new();
        for (i, l) in self.links.iter().enumerate() {
            let key = |k: &str| format!("links[{i}].{k}");
            for (end, name) in [("a", &l.a), ("b", &l.b)] {
                if !seen.contains_key(name.as_str()) {
                    return Err(ConfigError::new(key(end), format!("no host or switch named {name:?}")));
                }
            }
            if l.a == l.b {
                return Err(ConfigError::new(key("b"), "a link joins two different nodes"));
            }
            positive(&key("rate_mbps"), l.rate_mbps)?;
            non_negative(&key("delay_us"), l.delay_us)?;
            for (pq, prefix) in l.port_queues().iter().zip(["", "a_", "b_"]) {
                pq.validate().map_err(|e| ConfigError::new(key(&format!("{prefix}{}", e.key)), e.reason))?;
            }
            for name in [&l.a, &l.b] {
                if self.hosts.contains(name) {
                    *nic.entry(name.as_str()).or_insert(0) += 1;
                }
            }
        }
        for h in &self.hosts {
            match nic.get(h.as_str()).copied().unwrap_or(0) {
                1 => {}
                0 => return Err(ConfigError::new("links", format!("host {h:?} has no link"))),
                n => return Err(ConfigError::new("links", format!("host {h:?} has {n} links; a host has exactly one NIC"))),
            }
        }
        Ok(())
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
    fn a_fat_tree_has_an_even_k_up_to_128() {
        let ft = |k| FatTreeConfig { k, host_rate_mbps: 10_000.0, fabric_rate_mbps: 10_000.0, link_delay_us: 1.0, host_buffer_pkts: 100 };
        assert!(ft(2).validate().is_ok() && ft(128).validate().is_ok());
        assert_eq!(ft(128).hosts(), 524_288);
        for k in [0, 7, 130] {
            assert_eq!(ft(k).validate().unwrap_err().key, "k", "k = {k}");
        }
        assert!(ft(130).validate().unwrap_err().reason.contains("at most 128"));
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
