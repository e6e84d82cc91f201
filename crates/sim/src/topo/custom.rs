//! A custom topology: hosts, switches and full-duplex links listed by name.
//!
//! ```toml
//! [topology]
//! kind = "custom"
//! hosts = ["a", "b"]
//! switches = ["s1", "s2"]
//! links = [
//!   { a = "a", b = "s1", rate_mbps = 1000.0, delay_us = 5.0 },
//!   { a = "s1", b = "s2", rate_mbps = 100.0, delay_us = 50.0, measured = true },
//!   { a = "s2", b = "b", rate_mbps = 1000.0, delay_us = 5.0 },
//! ]
//! ```
//!
//! A host must have exactly one link (its NIC). Names must be unique. A link with
//! `measured = true` has its `a -> b` port measured; without any, every switch -> host port is.
//! A link may set the buffer (`buffer_pkts`) and the discipline (`queue`, a `[queue]` table) of
//! both its ports, or of one end's port (`a_buffer_pkts`, `a_queue`, `b_buffer_pkts`,
//! `b_queue`), which wins over the link's (rules in `topo/mod.rs`, `docs/topologies.md`).
//! A network that is not connected is accepted only if no flow needs to cross the gap (the run
//! checks every flow's end points).

use super::{at_least_one, default_host_buffer, link, non_negative, positive, switch_to_host_ports, Kit, PortQueue};
use crate::net::{Network, NodeKind};
use dcfair_core::qdisc::{ConfigError, QueueConfig};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomConfig {
    pub hosts: Vec<String>,
    pub switches: Vec<String>,
    pub links: Vec<LinkConfig>,
    #[serde(default = "default_host_buffer")]
    pub host_buffer_pkts: u32,
}

#[derive(Clone, Debug, Deserialize)]
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
    /// Buffer and discipline of a's port (a -> b) only, over the two above.
    pub a_buffer_pkts: Option<u32>,
    pub a_queue: Option<QueueConfig>,
    /// Buffer and discipline of b's port (b -> a) only.
    pub b_buffer_pkts: Option<u32>,
    pub b_queue: Option<QueueConfig>,
}

impl LinkConfig {
    /// The settings of both ends, of a's end and of b's end.
    fn port_queues(&self) -> [PortQueue; 3] {
        let pq = |buffer_pkts, queue: &Option<QueueConfig>| PortQueue { buffer_pkts, queue: queue.clone() };
        [pq(self.buffer_pkts, &self.queue), pq(self.a_buffer_pkts, &self.a_queue), pq(self.b_buffer_pkts, &self.b_queue)]
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

    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let mut id = HashMap::new();
        for h in &self.hosts {
            id.insert(h.as_str(), net.add_node(NodeKind::Host, h.clone()));
        }
        for s in &self.switches {
            id.insert(s.as_str(), net.add_node(NodeKind::Switch, s.clone()));
        }
        let mut measured = Vec::new();
        for (i, l) in self.links.iter().enumerate() {
            let [both, qa, qb] = l.port_queues();
            let key = |end: &str| format!("topology.links[{i}].{end}");
            let la = [(&both, key("")), (&qa, key("a_"))];
            let lb = [(&both, key("")), (&qb, key("b_"))];
            let (pa, _) = kit.link_custom(&mut net, id[l.a.as_str()], id[l.b.as_str()], link(l.rate_mbps, l.delay_us), &la, &lb);
            if l.measured {
                measured.push(pa);
            }
        }
        if measured.is_empty() {
            measured = switch_to_host_ports(&net);
        }
        (net, Vec::new(), measured)
    }
}
