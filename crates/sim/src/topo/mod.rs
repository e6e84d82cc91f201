//! Topologies: build a [`Network`] and say which hosts and switches play which role.
//!
//! Rules:
//! - A builder only creates nodes, links and queues; routes come from `routing.rs` and workloads
//!   are attached later. One file per topology holds its builder: a method `build` of its
//!   configuration, whose type, checks and host names are the config layer's
//!   (`scenario/topology.rs`). [`build`] calls the builders through those methods.
//! - Hosts have names (`h0`, `s3`, `r0`, ...) that scenarios use to place flows. Every topology
//!   knows its host names before it is built ([`TopologyConfig::host_names`]), so a scenario
//!   naming a host that does not exist is rejected by validation.
//! - Queues: a host NIC is a DropTail FIFO of `host_buffer_pkts`, or the scenario's
//!   `[host_queue]` discipline when it has one. A switch port runs the
//!   scenario's `[queue]` discipline, except where a topology says otherwise (the dumbbell keeps
//!   FIFOs on its uncongested reverse ports, as ns-2 scripts do). Each discipline draws its
//!   randomness from its own stream, named by its global port id.
//! - Per-port settings ([`PortQueue`]: a buffer and/or a discipline) change a port's queue, in
//!   this order, the later winning: the default above, a custom link's settings for both ends,
//!   its settings for the port's end, and the scenario's `[ports."<port name>"]`. A discipline
//!   table without a limit keeps the buffer the port had; `buffer_pkts` sets `limit_pkts` of
//!   whatever discipline the port runs. Every port's queue is decided when its link is made,
//!   and a `[ports]` name that matches no port is invalid input naming its key.
//! - Measured ports (utilization, drops, `ports.csv`) are `measure.ports` when given, else the
//!   topology's natural bottlenecks (documented per topology in `docs/topologies.md`).
//! - Fat-trees and leaf-spines also say how they lay out their tiers, for routing by tier.
//! - Imports the network, routing's `Tiers` and the config layer. The builder files import only the kit
//!   (`kit.rs`: links, port queues); this file imports the builders and the kit, and nothing
//!   imports this file back.

pub mod custom;
pub mod dumbbell;
pub mod fat_tree;
mod kit;
pub mod leaf_spine;
pub mod parking_lot;

use crate::net::{Network, NodeKind};
use crate::routing::Tiers;
use crate::scenario::{Scenario, TopologyConfig};
use dcfair_core::qdisc::ConfigError;
use dcfair_core::rng::Streams;
use dcfair_core::time::BitsPerSec;
use kit::Kit;
use std::collections::HashMap;

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
    /// How a fat-tree or leaf-spine lays out its switches (for routing by tier).
    pub tiers: Option<Tiers>,
}

impl Built {
    pub fn host(&self, name: &str) -> Option<u32> {
        self.hosts.get(name).copied()
    }
}

/// Builds the network of `sc` and marks its measured ports.
pub fn build(sc: &Scenario, streams: Streams) -> Result<Built, ConfigError> {
    let kit = Kit::new(sc, streams);
    let ((mut net, cores, default_measured), tiers) = match &sc.topology {
        TopologyConfig::Dumbbell(c) => (c.build(&kit), None),
        TopologyConfig::FatTree(c) => (c.build(&kit), Some(c.tiers())),
        TopologyConfig::LeafSpine(c) => (c.build(&kit), Some(c.tiers())),
        TopologyConfig::ParkingLot(c) => (c.build(&kit), None),
        TopologyConfig::Custom(c) => (c.build(&kit), None),
    };
    if let Some(e) = kit.take_error() {
        return Err(e);
    }
    let by_name: HashMap<&str, u32> = net.ports.iter().enumerate().map(|(i, p)| (p.name.as_str(), i as u32)).collect();
    let no_such_port = |key: String, n: &str| {
        let mut known: Vec<&str> = by_name.keys().copied().collect();
        known.sort();
        let hint = known.iter().take(6).cloned().collect::<Vec<_>>().join(", ");
        ConfigError::new(key, format!("no port named {n:?} (ports look like {hint}, ...)"))
    };
    if let Some(n) = sc.ports.keys().find(|n| !by_name.contains_key(n.as_str())) {
        return Err(no_such_port(format!("ports.{n}"), n));
    }
    let measured: Vec<u32> = match &sc.measure.ports {
        None => default_measured,
        Some(names) => {
            let mut v = Vec::new();
            for n in names {
                match by_name.get(n.as_str()) {
                    Some(&p) => v.push(p),
                    None => return Err(no_such_port("measure.ports".into(), n)),
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
    Ok(Built { net, hosts, cores, measured_rate: BitsPerSec(rate), tiers })
}

