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
//!
//! The builder only: the configuration ([`CustomConfig`]: keys, checks, host names) is the config
//! layer's (`scenario/topology.rs`).

use super::kit::{link, switch_to_host_ports, Kit};
use crate::net::{Network, NodeKind};
use crate::scenario::topology::CustomConfig;
use std::collections::HashMap;

impl CustomConfig {
    /// Builds the network: returns it, its core switches (the waypoints of equal-length
    /// routing) and its measured ports by default.
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
