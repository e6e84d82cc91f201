//! Topologies: build a [`Network`] and say which hosts and switches play which role.
//!
//! Rules:
//! - A builder only creates nodes, links and queues; routes come from `routing.rs` and workloads
//!   are attached later. One file per topology, its configuration beside its builder.
//! - Hosts have names (`h0`, `s3`, `r0`, ...) that scenarios use to place flows. Every topology
//!   knows its host names before it is built ([`TopologyConfig::host_names`]), so a scenario
//!   naming a host that does not exist is rejected by validation.
//! - Queues: a host NIC is a DropTail FIFO of `host_buffer_pkts`. A switch port runs the
//!   scenario's `[queue]` discipline, except where a topology says otherwise (the dumbbell keeps
//!   FIFOs on its uncongested reverse ports, as ns-2 scripts do). Each discipline draws its
//!   randomness from its own stream, named by its global port id.
//! - Measured ports (utilization, drops, `ports.csv`) are `measure.ports` when given, else the
//!   topology's natural bottlenecks (documented per topology in `docs/topologies.md`).

pub mod custom;
pub mod dumbbell;
pub mod fat_tree;
pub mod leaf_spine;
pub mod parking_lot;

use crate::net::{LinkSpec, Network, NodeKind};
use crate::scenario::Scenario;
use dcfair_core::qdisc::{droptail::DropTail, AnyQdisc, ConfigError, Limit, PortContext, Queue};
use dcfair_core::rng::Streams;
use dcfair_core::time::{BitsPerSec, SimDuration};
use serde::Deserialize;
use std::collections::HashMap;

/// The `[topology]` table, tagged by `kind`.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// `senders` hosts -> one switch -> bottleneck port(s) -> `receivers` hosts.
    Dumbbell(dumbbell::DumbbellConfig),
    /// The k-ary fat-tree of Al-Fares et al. (k pods, k^3/4 hosts).
    FatTree(fat_tree::FatTreeConfig),
    /// Two tiers: every leaf to every spine.
    LeafSpine(leaf_spine::LeafSpineConfig),
    /// A chain of switches whose links are bottlenecks in series.
    ParkingLot(parking_lot::ParkingLotConfig),
    /// Hosts, switches and links given one by one.
    Custom(custom::CustomConfig),
}

impl TopologyConfig {
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

    /// UDP end points when `[udp]` names none: the dumbbell's own `udp` host to `r0`.
    pub fn default_udp_endpoints(&self) -> Option<(&'static str, &'static str)> {
        match self {
            TopologyConfig::Dumbbell(_) => Some((dumbbell::UDP_HOST, "r0")),
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

/// A built topology.
#[derive(Debug)]
pub struct Built {
    pub net: Network,
    /// Host node id by name.
    pub hosts: HashMap<String, u32>,
    /// Switches at the top tier (fat-tree cores, leaf-spine spines): the waypoints of
    /// equal-length routing.
    pub cores: Vec<u32>,
    /// Total rate of the measured ports (for utilization).
    pub measured_rate: BitsPerSec,
}

impl Built {
    pub fn host(&self, name: &str) -> Option<u32> {
        self.hosts.get(name).copied()
    }
}

/// Which queue a new port gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueKind {
    /// The scenario's `[queue]` discipline.
    Scenario,
    /// A DropTail FIFO of `host_buffer_pkts`.
    Fifo,
}

/// What every builder shares: the scenario, the random streams, the host buffer.
pub(crate) struct Kit<'a> {
    pub sc: &'a Scenario,
    pub streams: Streams,
    pub host_buffer: u32,
}

impl Kit<'_> {
    fn queue(&self, kind: QueueKind, rate: BitsPerSec, port_index: u64) -> Queue {
        match kind {
            QueueKind::Fifo => Queue::new(AnyQdisc::DropTail(DropTail::new(Limit::pkts(self.host_buffer)))),
            QueueKind::Scenario => {
                let ctx = PortContext { rate, mtu: self.sc.mtu(), port_index, streams: self.streams };
                Queue::new(self.sc.queue.build(&ctx))
            }
        }
    }

    /// The default queue of a port owned by `node`: FIFO for hosts, the scenario's for switches.
    fn default_kind(net: &Network, node: u32) -> QueueKind {
        match net.nodes[node as usize].kind {
            NodeKind::Host => QueueKind::Fifo,
            NodeKind::Switch => QueueKind::Scenario,
        }
    }

    /// A full-duplex link with the default queue at each end.
    pub fn link(&self, net: &mut Network, a: u32, b: u32, l: LinkSpec) -> (u32, u32) {
        let (ka, kb) = (Self::default_kind(net, a), Self::default_kind(net, b));
        self.link_with(net, a, b, l, ka, kb)
    }

    /// A full-duplex link with the given queue kinds at a's and b's ends.
    pub fn link_with(&self, net: &mut Network, a: u32, b: u32, l: LinkSpec, ka: QueueKind, kb: QueueKind) -> (u32, u32) {
        let pa = net.ports.len() as u64;
        let qa = self.queue(ka, l.rate, pa);
        let qb = self.queue(kb, l.rate, pa + 1);
        net.connect(a, b, l, l, qa, qb)
    }
}

pub(crate) fn us(v: f64) -> SimDuration {
    SimDuration::from_secs_f64(v * 1e-6)
}

/// A link of `rate_mbps` and `delay_us`, with the floating-point shadows that
/// `sim.tie_break = "float_clock"` orders ties by (computed as a float simulator would).
pub(crate) fn link(rate_mbps: f64, delay_us: f64) -> LinkSpec {
    LinkSpec { rate: BitsPerSec::from_mbps_f64(rate_mbps), delay: us(delay_us), rate_f: rate_mbps * 1e6, delay_f: delay_us * 1e-6 }
}

pub(crate) fn positive(key: &str, v: f64) -> Result<(), ConfigError> {
    if !v.is_finite() || v <= 0.0 {
        return Err(ConfigError::new(key, format!("must be a positive number, got {v}")));
    }
    Ok(())
}

pub(crate) fn non_negative(key: &str, v: f64) -> Result<(), ConfigError> {
    if !v.is_finite() || v < 0.0 {
        return Err(ConfigError::new(key, format!("must be zero or positive, got {v}")));
    }
    Ok(())
}

pub(crate) fn at_least_one(key: &str, v: u32) -> Result<(), ConfigError> {
    if v == 0 {
        return Err(ConfigError::new(key, "must be at least 1"));
    }
    Ok(())
}

pub(crate) fn default_host_buffer() -> u32 {
    1000
}

/// Builds the network of `sc` and marks its measured ports.
pub fn build(sc: &Scenario, streams: Streams) -> Result<Built, ConfigError> {
    let kit = |host_buffer| Kit { sc, streams, host_buffer };
    let (mut net, cores, default_measured) = match &sc.topology {
        TopologyConfig::Dumbbell(c) => c.build(&kit(c.host_buffer_pkts)),
        TopologyConfig::FatTree(c) => c.build(&kit(c.host_buffer_pkts)),
        TopologyConfig::LeafSpine(c) => c.build(&kit(c.host_buffer_pkts)),
        TopologyConfig::ParkingLot(c) => c.build(&kit(c.host_buffer_pkts)),
        TopologyConfig::Custom(c) => c.build(&kit(c.host_buffer_pkts)),
    };
    let measured: Vec<u32> = match &sc.measure.ports {
        None => default_measured,
        Some(names) => {
            let by_name: HashMap<&str, u32> = net.ports.iter().enumerate().map(|(i, p)| (p.name.as_str(), i as u32)).collect();
            let mut v = Vec::new();
            for n in names {
                match by_name.get(n.as_str()) {
                    Some(&p) => v.push(p),
                    None => {
                        let mut known: Vec<&str> = by_name.keys().copied().collect();
                        known.sort();
                        let hint = known.iter().take(6).cloned().collect::<Vec<_>>().join(", ");
                        return Err(ConfigError::new("measure.ports", format!("no port named {n:?} (ports look like {hint}, ...)")));
                    }
                }
            }
            v
        }
    };
    let mut rate = 0u64;
    for p in measured {
        let port = &mut net.ports[p as usize];
        if !port.measured {
            port.measured = true;
            rate += port.rate.0;
        }
    }
    let hosts = net
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind == NodeKind::Host)
        .map(|(i, n)| (n.name.clone(), i as u32))
        .collect();
    Ok(Built { net, hosts, cores, measured_rate: BitsPerSec(rate) })
}

/// Every port from a switch to a host: the default measured set of the fabrics.
pub(crate) fn switch_to_host_ports(net: &Network) -> Vec<u32> {
    (0..net.ports.len() as u32)
        .filter(|&p| {
            let port = &net.ports[p as usize];
            net.nodes[port.node as usize].kind == NodeKind::Switch && net.nodes[port.peer_node as usize].kind == NodeKind::Host
        })
        .collect()
}
