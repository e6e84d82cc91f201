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
//! - Imports the network, the packet queues and the config layer. The builder files import
//!   this file (the kit, `link`); this file names none of them.

pub mod custom;
pub mod dumbbell;
pub mod fat_tree;
pub mod leaf_spine;
pub mod parking_lot;

use crate::net::{LinkSpec, Network, NodeKind};
use crate::scenario::{PortQueue, Scenario, TopologyConfig};
use crate::pktref::SimQueue;
use dcfair_core::qdisc::{ConfigError, PortContext, PortWrap, QdiscKind, Queue, QueueConfig};
use dcfair_core::rng::Streams;
use dcfair_core::time::{BitsPerSec, SimDuration};
use std::cell::RefCell;
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
}

impl Built {
    pub fn host(&self, name: &str) -> Option<u32> {
        self.hosts.get(name).copied()
    }
}

/// Settings for one port, with the prefix of their keys (for errors): `"ports.sw->r0."`,
/// `"topology.links[2]."`, `"topology.links[2].a_"`.
pub(crate) type Layer<'a> = (&'a PortQueue, String);

/// Which queue a new port gets by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueKind {
    /// The scenario's `[queue]` discipline.
    Scenario,
    /// A DropTail FIFO of `host_buffer_pkts`.
    Fifo,
    /// A host NIC: the scenario's `[host_queue]`, else [`QueueKind::Fifo`].
    Host,
}

/// What every builder shares: the scenario, the random streams, the host buffer; and the first
/// invalid per-port setting met while building (reported by [`build`]).
pub(crate) struct Kit<'a> {
    pub sc: &'a Scenario,
    pub streams: Streams,
    pub host_buffer: u32,
    /// What wraps every port's discipline in this run (the ExpressPass credit shaper); each
    /// port adds its own loss rate.
    pub wrap: PortWrap,
    error: RefCell<Option<ConfigError>>,
}

impl Kit<'_> {
    /// The queue of a new port: its default kind, then `layers` (least specific first), then
    /// the scenario's `[ports]` entry for `name`.
    fn queue(&self, name: &str, kind: QueueKind, layers: &[Layer], rate: BitsPerSec, port_index: u64) -> SimQueue {
        let mut cfg = match kind {
            QueueKind::Scenario => self.sc.queue.clone(),
            QueueKind::Host if self.sc.host_queue.is_some() => self.sc.host_queue().expect("checked"),
            QueueKind::Fifo | QueueKind::Host => {
                QueueConfig { kind: QdiscKind::Droptail, limit_pkts: Some(self.host_buffer), ..QueueConfig::default() }
            }
        };
        let named = self.sc.ports.get(name).map(|pq| (pq, format!("ports.{name}.")));
        let mut last: Option<String> = None; // key of the last setting applied
        let mut loss_rate = 0.0;
        for (pq, prefix) in layers.iter().map(|(p, k)| (*p, k.clone())).chain(named) {
            if let Err(e) = pq.validate() {
                self.fail(e.within(prefix.trim_end_matches('.')));
            }
            if let Some(q) = &pq.queue {
                let mut q = q.clone();
                if q.limit_pkts.is_none() && q.limit_bytes.is_none() {
                    (q.limit_pkts, q.limit_bytes) = (cfg.limit_pkts, cfg.limit_bytes);
                }
                cfg = q;
                last = Some(format!("{prefix}queue"));
            }
            if let Some(b) = pq.buffer_pkts {
                cfg.limit_pkts = Some(b);
                last = Some(format!("{prefix}buffer_pkts"));
            }
            if let Some(r) = pq.loss_rate {
                loss_rate = r;
            }
        }
        if let Some(key) = last {
            if let Err(e) = cfg.validate() {
                let e = if key.ends_with("buffer_pkts") { ConfigError::new(key, format!("{}: {}", e.key, e.reason)) } else { e.within(&key) };
                self.fail(e);
                cfg = QueueConfig::default(); // not run: build reports the error
            }
        }
        let ctx = PortContext { rate, mtu: self.sc.mtu(), port_index, streams: self.streams };
        let wrap = PortWrap { loss_rate, ..self.wrap.clone() };
        Queue::new(cfg.build_port(&ctx, &wrap))
    }

    fn fail(&self, e: ConfigError) {
        self.error.borrow_mut().get_or_insert(e);
    }

    /// The default queue of a port owned by `node`: FIFO for hosts, the scenario's for switches.
    fn default_kind(net: &Network, node: u32) -> QueueKind {
        match net.nodes[node as usize].kind {
            NodeKind::Host => QueueKind::Host,
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
        self.link_layers(net, a, b, l, (ka, &[]), (kb, &[]))
    }

    /// A full-duplex link with the default queue kinds and per-port settings at each end.
    pub fn link_custom(&self, net: &mut Network, a: u32, b: u32, l: LinkSpec, la: &[Layer], lb: &[Layer]) -> (u32, u32) {
        let (ka, kb) = (Self::default_kind(net, a), Self::default_kind(net, b));
        self.link_layers(net, a, b, l, (ka, la), (kb, lb))
    }

    fn link_layers(&self, net: &mut Network, a: u32, b: u32, l: LinkSpec, ea: (QueueKind, &[Layer]), eb: (QueueKind, &[Layer])) -> (u32, u32) {
        let pa = net.ports.len() as u64;
        let qa = self.queue(&net.port_name(a, b), ea.0, ea.1, l.rate, pa);
        let qb = self.queue(&net.port_name(b, a), eb.0, eb.1, l.rate, pa + 1);
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

/// Builds the network of `sc` and marks its measured ports.
pub fn build(sc: &Scenario, streams: Streams) -> Result<Built, ConfigError> {
    let host_buffer = sc.topology.host_buffer_pkts();
    let wrap = PortWrap { xpass: sc.uses_xpass().then(|| sc.xpass_config()), loss_rate: 0.0 };
    let kit = Kit { sc, streams, host_buffer, wrap, error: RefCell::new(None) };
    let (mut net, cores, default_measured) = match &sc.topology {
        TopologyConfig::Dumbbell(c) => c.build(&kit),
        TopologyConfig::FatTree(c) => c.build(&kit),
        TopologyConfig::LeafSpine(c) => c.build(&kit),
        TopologyConfig::ParkingLot(c) => c.build(&kit),
        TopologyConfig::Custom(c) => c.build(&kit),
    };
    if let Some(e) = kit.error.take() {
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
