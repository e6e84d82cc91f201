//! Dumbbell: `senders` hosts -> one switch -> a bottleneck port per receiver -> `receivers` hosts.
//!
//! Hosts: `s0 ..` (senders), `r0 ..` (receivers), and `udp` when the scenario has UDP
//! background. Sender links run at `access_rate_mbps` with `access_delay_us` each way; each
//! switch-receiver link at `bottleneck_rate_mbps` with `bottleneck_delay_us` each way, so the RTT
//! is `2 (access_delay_us + bottleneck_delay_us)` plus serialization. Only the bottleneck ports
//! (switch -> receiver) run the scenario's discipline and are measured; the switch -> sender
//! ports carry only ACKs and are FIFOs of `host_buffer_pkts`, as in the ns-2 scripts this
//! setting comes from.

use super::{at_least_one, default_host_buffer, link, non_negative, positive, Kit, QueueKind};
use crate::net::{Network, NodeKind};
use dcfair_core::qdisc::ConfigError;
use serde::Deserialize;

/// Name of the host the dumbbell adds for UDP background.
pub const UDP_HOST: &str = "udp";

#[derive(Clone, Debug, Deserialize)]
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
