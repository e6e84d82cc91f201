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
//! - Measured ports (utilization, drops, `ports.csv`) are `measure.ports` when given (names, or
//!   `"all"`: every switch port), else the topology's natural bottlenecks (documented per
//!   topology in `docs/topologies.md`). Measuring changes no network: what the network takes
//!   from its measured ports (the UDP source's rate) it takes from the bottlenecks when every
//!   port is measured ([`Built::reference_rate`]).
//! - Every switch has its tier as its builder names it (`net::Tier`; fat-trees and
//!   leaf-spines name theirs, other topologies' switches are plain switches).
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
use crate::scenario::{MeasuredPorts, Scenario, TopologyConfig};
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
    /// The rate of the first measured port (in port order), or with `measure.ports = "all"` of
    /// the first of the topology's own measured ports: what the UDP source's rate is a fraction
    /// of. The total of the measured ports when none is measured.
    pub reference_rate: BitsPerSec,
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
    net.laid_out = !matches!(sc.topology, TopologyConfig::Custom(_));
    // the arenas grew by doubling: give back what no port or node fills (at k = 128, a
    // quarter of the ports' 1 GiB)
    net.ports.shrink_to_fit();
    net.nodes.shrink_to_fit();
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
    let first = |ports: &[u32]| ports.iter().min().map(|&p| net.ports[p as usize].rate);
    let mut reference = first(&default_measured);
    let measured: Vec<u32> = match &sc.measure.ports {
        None => default_measured,
        Some(MeasuredPorts::All) => (0..net.ports.len() as u32).filter(|&p| net.nodes[net.ports[p as usize].node as usize].kind == NodeKind::Switch).collect(),
        Some(MeasuredPorts::Named(names)) => {
            let mut v = Vec::new();
            for n in names {
                match by_name.get(n.as_str()) {
                    Some(&p) => v.push(p),
                    None => return Err(no_such_port("measure.ports".into(), n)),
                }
            }
            reference = first(&v);
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
    let reference_rate = reference.unwrap_or(BitsPerSec(rate));
    Ok(Built { net, hosts, cores, measured_rate: BitsPerSec(rate), reference_rate, tiers })
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Tier;

    /// The scenario file `path` (from the repository's root) with `overrides`, built.
    fn built(path: &str, overrides: &[(&str, &str)]) -> (Scenario, Built) {
        let path = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
        let ov: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let sc = crate::scenario::load(&std::fs::read_to_string(&path).unwrap(), &path, &ov).unwrap();
        let b = build(&sc, Streams::new(1)).unwrap();
        (sc, b)
    }

    /// What the config layer counts at load time for `measure.ports = "all"` is what every
    /// builder makes, and what "all" measures: every switch port, no host NIC.
    #[test]
    fn all_measures_the_switch_ports_the_config_counts() {
        for (path, overrides) in [
            ("scenarios/papers/hcf/longflows.toml", vec![]),
            ("scenarios/papers/hcf/longflows.toml", vec![("udp.rate_fraction", "0.1")]),
            ("bench/fattree_k8.toml", vec![]),
            ("scenarios/papers/fqcodel/leafspine.toml", vec![]),
            ("scenarios/papers/xpass/parking_lot.toml", vec![]),
            ("scenarios/papers/fairq/testbed_incast.toml", vec![]),
        ] {
            let (sc, b) = built(path, &[&[("measure.ports", "all")][..], &overrides].concat());
            let switch_port = |p: &crate::net::Port| b.net.nodes[p.node as usize].kind == NodeKind::Switch;
            let n = b.net.ports.iter().filter(|p| switch_port(p)).count() as u64;
            assert_eq!(sc.topology.switch_ports(sc.udp.is_some()), n, "{path} {overrides:?}");
            assert!(b.net.ports.iter().all(|p| p.measured == switch_port(p)), "{path}");
            let rate: u64 = b.net.ports.iter().filter(|p| p.measured).map(|p| p.rate.0).sum();
            assert_eq!(b.measured_rate.0, rate, "{path}");
        }
    }

    /// Measuring every port leaves what the network takes from its measured ports as it was:
    /// the UDP source's reference is still the topology's first bottleneck.
    #[test]
    fn the_udp_reference_is_the_bottleneck_whatever_is_measured() {
        let lf = "scenarios/papers/hcf/longflows.toml";
        let (_, plain) = built(lf, &[("udp.rate_fraction", "0.1")]);
        let (_, all) = built(lf, &[("udp.rate_fraction", "0.1"), ("measure.ports", "all")]);
        let (_, named) = built(lf, &[("udp.rate_fraction", "0.1"), ("measure.ports", r#"["sw->s1", "sw->r0"]"#)]);
        assert_eq!(plain.reference_rate.0, 100_000_000, "the bottleneck sw->r0");
        assert_eq!(all.reference_rate, plain.reference_rate);
        assert_eq!(named.reference_rate.0, 1_000_000_000, "named ports: the first in port order, as before");
    }

    #[test]
    fn fabrics_name_their_tiers() {
        let (_, b) = built("bench/fattree_k8.toml", &[]);
        let tier = |name: &str| b.net.nodes.iter().find(|n| n.name == name).unwrap().tier;
        assert_eq!([tier("h0"), tier("e0_0"), tier("a7_3"), tier("c15")], [Tier::Host, Tier::Edge, Tier::Aggregation, Tier::Core]);
        let (_, b) = built("scenarios/papers/fqcodel/leafspine.toml", &[]);
        assert!(b.net.nodes.iter().all(|n| matches!(n.tier, Tier::Host | Tier::Leaf | Tier::Spine)));
        assert!(b.net.nodes.iter().any(|n| n.tier == Tier::Spine) && b.net.nodes.iter().any(|n| n.tier == Tier::Leaf));
        let (_, b) = built("scenarios/papers/fairq/testbed_incast.toml", &[]);
        assert!(b.net.nodes.iter().all(|n| (n.tier == Tier::Switch) == (n.kind == NodeKind::Switch)), "a custom topology's switches are plain switches");
    }
}
