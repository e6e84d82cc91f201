//! Topologies: build a [`Network`] and say which hosts play which role.
//!
//! Rules:
//! - A builder only creates nodes, links, queues and routes; workloads are attached later.
//! - The measured ports (the bottlenecks) run the scenario's `[queue]` discipline; every other
//!   port (host NICs, reverse paths) is a DropTail FIFO of `host_buffer_pkts`.
//! - Each port's discipline draws its randomness from its own stream, named by its port id.

use crate::net::{LinkSpec, Network, NodeKind};
use crate::scenario::{DumbbellConfig, Scenario, TopologyConfig};
use dcfair_core::qdisc::{droptail::DropTail, AnyQdisc, Limit, PortContext, Queue};
use dcfair_core::rng::Streams;
use dcfair_core::time::{BitsPerSec, SimDuration};

/// A built topology and the roles of its hosts.
#[derive(Debug)]
pub struct Built {
    pub net: Network,
    pub senders: Vec<u32>,
    pub receivers: Vec<u32>,
    /// Host of the UDP background source, if the scenario has one.
    pub udp_host: Option<u32>,
    /// Total rate of the measured ports (for utilization).
    pub measured_rate: BitsPerSec,
}

pub fn build(sc: &Scenario, streams: Streams) -> Built {
    match &sc.topology {
        TopologyConfig::Dumbbell(d) => dumbbell(sc, d, streams),
    }
}

fn us(v: f64) -> SimDuration {
    SimDuration::from_secs_f64(v * 1e-6)
}

/// N senders -> one switch -> bottleneck port per receiver -> receivers.
fn dumbbell(sc: &Scenario, d: &DumbbellConfig, streams: Streams) -> Built {
    let mut net = Network::default();
    let mtu = sc.mtu();
    let fifo = |n: u32| Queue::new(AnyQdisc::DropTail(DropTail::new(Limit::pkts(n))));
    let link = |mbps: f64, delay_us: f64| LinkSpec {
        rate: BitsPerSec::from_mbps_f64(mbps),
        delay: us(delay_us),
        rate_f: mbps * 1e6,
        delay_f: delay_us * 1e-6,
    };
    let access = link(d.access_rate_mbps, d.access_delay_us);
    let bottleneck = link(d.bottleneck_rate_mbps, d.bottleneck_delay_us);

    let senders: Vec<u32> = (0..d.senders).map(|i| net.add_node(NodeKind::Host, format!("s{i}"))).collect();
    let receivers: Vec<u32> = (0..d.receivers).map(|i| net.add_node(NodeKind::Host, format!("r{i}"))).collect();
    let udp_host = sc.udp.as_ref().map(|_| net.add_node(NodeKind::Host, "udp".into()));
    let sw = net.add_node(NodeKind::Switch, "sw".into());

    let mut measured_rate = 0u64;
    for &h in senders.iter().chain(udp_host.iter()) {
        net.connect(h, sw, access, access, fifo(d.host_buffer_pkts), fifo(d.host_buffer_pkts));
        let local = (net.nodes[sw as usize].ports.len() - 1) as u16;
        net.route(sw, h, local);
    }
    for &r in &receivers {
        let next_port = net.ports.len() as u64 + 1; // the switch's end of the link created next
        let ctx = PortContext { rate: bottleneck.rate, mtu, port_index: next_port, streams };
        let q = Queue::new(sc.queue.build(&ctx));
        let (_, sp) = net.connect(r, sw, bottleneck, bottleneck, fifo(d.host_buffer_pkts), q);
        net.ports[sp as usize].measured = true;
        measured_rate += bottleneck.rate.0;
        let local = (net.nodes[sw as usize].ports.len() - 1) as u16;
        net.route(sw, r, local);
    }
    Built { net, senders, receivers, udp_host, measured_rate: BitsPerSec(measured_rate) }
}
