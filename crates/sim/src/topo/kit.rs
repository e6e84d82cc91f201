//! The builders' kit: what every topology builder shares to make links and decide each port's
//! queue.
//!
//! Rules:
//! - A port's queue is decided when its link is made ([`Kit::link`] and its variants): the
//!   default kind ([`QueueKind`]), then per-port settings ([`Layer`]s, least specific first),
//!   then the scenario's `[ports."<port name>"]`, the later winning (the order is stated in
//!   `topo/mod.rs`).
//! - An invalid per-port setting does not stop the build: the kit keeps the first one
//!   ([`Kit::take_error`]) and the caller reports it.
//! - Imports the network, the packet queues and the config layer; no builder, and not
//!   `topo/mod.rs`.

use crate::net::{LinkSpec, Network, NodeKind};
use crate::pktref::SimQueue;
use crate::scenario::{PortQueue, Scenario};
use dcfair_core::qdisc::{ConfigError, PortContext, QdiscKind, Queue, QueueConfig};
use dcfair_core::transport::{self, Tables, TransportKind};
use dcfair_core::rng::Streams;
use dcfair_core::time::{BitsPerSec, SimDuration};
use std::cell::RefCell;

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
    /// The transports the run's flows use, and their tables: their wrappers go around every
    /// port's discipline (`dcfair_core::transport::wrap_port`); each port adds its own loss
    /// rate.
    pub transports: (Vec<TransportKind>, Tables),
    error: RefCell<Option<ConfigError>>,
}

impl<'a> Kit<'a> {
    /// The kit of `sc`'s build: every port's discipline inside the wrappers of the transports
    /// `sc`'s flows use.
    pub fn new(sc: &'a Scenario, streams: Streams) -> Self {
        let transports = (sc.transports_used(), sc.transport_tables().resolved());
        Kit { sc, streams, host_buffer: sc.topology.host_buffer_pkts(), transports, error: RefCell::new(None) }
    }

    /// The first invalid per-port setting met so far, if any.
    pub fn take_error(&self) -> Option<ConfigError> {
        self.error.take()
    }

    /// The queue of a new port: its default kind, then `layers` (least specific first), then
    /// the scenario's `[ports]` entry for `name`.
    fn queue(&self, name: &str, kind: QueueKind, layers: &[Layer], rate: BitsPerSec, port_index: u64, host: bool) -> SimQueue {
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
        let ctx = PortContext { rate, mtu: self.sc.mtu(), port_index, streams: self.streams, host };
        let (used, tables) = &self.transports;
        let q = transport::wrap_port(used, tables, cfg.build(&ctx), &ctx);
        Queue::new(q.with_loss(loss_rate, &ctx))
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
        let host = |n: u32| net.nodes[n as usize].kind == NodeKind::Host;
        let qa = self.queue(&net.port_name(a, b), ea.0, ea.1, l.rate, pa, host(a));
        let qb = self.queue(&net.port_name(b, a), eb.0, eb.1, l.rate, pa + 1, host(b));
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

/// Every port from a switch to a host: the default measured set of the fabrics.
pub(crate) fn switch_to_host_ports(net: &Network) -> Vec<u32> {
    (0..net.ports.len() as u32)
        .filter(|&p| {
            let port = &net.ports[p as usize];
            net.nodes[port.node as usize].kind == NodeKind::Switch && net.nodes[port.peer_node as usize].kind == NodeKind::Host
        })
        .collect()
}
