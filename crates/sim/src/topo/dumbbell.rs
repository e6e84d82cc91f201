//! Dumbbell: `senders` hosts -> one switch -> a bottleneck port per receiver -> `receivers` hosts.
//!
//! Hosts: `s0 ..` (senders), `r0 ..` (receivers), and `udp` when the scenario has UDP
//! background. Sender links run at `access_rate_mbps` with `access_delay_us` each way; each
//! switch-receiver link at `bottleneck_rate_mbps` with `bottleneck_delay_us` each way, so the RTT
//! is `2 (access_delay_us + bottleneck_delay_us)` plus serialization. Only the bottleneck ports
//! (switch -> receiver) run the scenario's discipline and are measured; the switch -> sender
//! ports carry only ACKs and are FIFOs of `host_buffer_pkts`, as in the ns-2 scripts this
//! setting comes from.
//!
//! The builder only: the configuration ([`DumbbellConfig`]: keys, checks, host names) is the config
//! layer's (`scenario/topology.rs`).

use super::kit::{link, Kit, QueueKind};
use crate::net::{Network, NodeKind};
use crate::scenario::topology::{DumbbellConfig, UDP_HOST};

impl DumbbellConfig {
    /// Builds the network: returns it, its core switches (the waypoints of equal-length
    /// routing) and its measured ports by default.
    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let access = link(self.access_rate_mbps, self.access_delay_us);
        let bottleneck = link(self.bottleneck_rate_mbps, self.bottleneck_delay_us);
        let senders: Vec<u32> = (0..self.senders).map(|i| net.add_node(NodeKind::Host, format!("s{i}"))).collect();
        let receivers: Vec<u32> = (0..self.receivers).map(|i| net.add_node(NodeKind::Host, format!("r{i}"))).collect();
        let udp_host = kit.sc.udp.as_ref().map(|_| net.add_node(NodeKind::Host, UDP_HOST.into()));
        let sw = net.add_node(NodeKind::Switch, "sw".into());
        for &h in senders.iter().chain(udp_host.iter()) {
            kit.link_with(&mut net, h, sw, access, QueueKind::Host, QueueKind::Fifo);
        }
        let mut measured = Vec::new();
        for &r in &receivers {
            let (_, sp) = kit.link_with(&mut net, r, sw, bottleneck, QueueKind::Host, QueueKind::Scenario);
            measured.push(sp);
        }
        (net, Vec::new(), measured)
    }
}
