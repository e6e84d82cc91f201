//! The network: nodes (hosts and output-queued switches), ports, and the links between them.
//!
//! Rules:
//! - Nodes and ports live in arenas (`Vec`) and are addressed by `u32` ids. A node's address is
//!   its id. A link is the pair of a port and its peer; each direction is its own port with its
//!   own rate, propagation delay and queue discipline.
//! - A port serializes one packet at a time at its rate and hands it to the link, which delivers
//!   it `delay` later at the peer node. Delivery is in order because serialization ends are
//!   strictly increasing and ties in the event queue are FIFO.
//! - One pending event per busy port at most: the engine schedules a `TxDone` only when a packet
//!   waits behind the one being serialized (see `engine.rs`).
//! - Switches are output-queued; where a packet goes next is decided by `routing.rs`.
//! - The qdisc decides; [`dcfair_core::qdisc::Queue`] counts. A port adds only what the queue
//!   cannot know: bytes serialized, and bytes serialized inside the measurement window.

use dcfair_core::qdisc::{AnyQdisc, Queue};
use dcfair_core::time::{BitsPerSec, SimDuration, SimTime};

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub name: String,
    /// Global ids of this node's ports; a packet arriving "through port i" came in on the link
    /// whose local end is `ports[i]`.
    pub ports: Vec<u32>,
}

#[derive(Debug)]
pub struct Port {
    pub name: String,
    pub node: u32,
    /// The node at the other end of the link and the local index of the link there.
    pub peer_node: u32,
    pub peer_port: u16,
    pub rate: BitsPerSec,
    pub delay: SimDuration,
    pub queue: Queue<AnyQdisc>,
    /// When the packet being serialized (if any) is fully on the wire.
    pub busy_until: SimTime,
    /// The shadow clock's `busy_until` and the link as `f64` (bits/s, seconds), for
    /// `sim.tie_break = "float_clock"` (see `engine.rs`).
    pub busy_until_f: f64,
    pub rate_f: f64,
    pub delay_f: f64,
    /// A `TxDone` event is pending for this port.
    pub txdone_pending: bool,
    /// Reported in `ports.csv` and the summary's utilization and drops.
    pub measured: bool,
    pub pkts_out: u64,
    pub bytes_out: u64,
    /// Bytes whose serialization ended inside the measurement window.
    pub window_bytes_out: u64,
    /// Index of this port's probe in `Sim::probes`, or `probe::NO_PROBE` (`probe.rs`).
    pub probe: u32,
}

/// The arenas of nodes and ports.
#[derive(Debug, Default)]
pub struct Network {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
}

/// The parameters of one direction of a link.
#[derive(Clone, Copy, Debug)]
pub struct LinkSpec {
    pub rate: BitsPerSec,
    pub delay: SimDuration,
    /// The same as `f64` bits/s and seconds, computed as a floating-point simulator would
    /// from the scenario (`rate_mbps * 1e6`, `delay_us * 1e-6`); they only order exact ties
    /// in float-clock mode.
    pub rate_f: f64,
    pub delay_f: f64,
}

impl Network {
    pub fn add_node(&mut self, kind: NodeKind, name: String) -> u32 {
        self.nodes.push(Node { kind, name, ports: Vec::new() });
        (self.nodes.len() - 1) as u32
    }

    /// Joins `a` and `b` with a full-duplex link: `ab` for a -> b (queue `qa` at a's port),
    /// `ba` for b -> a (queue `qb`). Returns the global ids of (a's port, b's port).
    pub fn connect(
        &mut self,
        a: u32,
        b: u32,
        ab: LinkSpec,
        ba: LinkSpec,
        qa: Queue<AnyQdisc>,
        qb: Queue<AnyQdisc>,
    ) -> (u32, u32) {
        let pa = self.ports.len() as u32;
        let pb = pa + 1;
        let la = self.nodes[a as usize].ports.len() as u16;
        let lb = self.nodes[b as usize].ports.len() as u16;
        let name_a = format!("{}->{}", self.nodes[a as usize].name, self.nodes[b as usize].name);
        let name_b = format!("{}->{}", self.nodes[b as usize].name, self.nodes[a as usize].name);
        self.ports.push(Port::new(name_a, a, b, lb, ab, qa));
        self.ports.push(Port::new(name_b, b, a, la, ba, qb));
        self.nodes[a as usize].ports.push(pa);
        self.nodes[b as usize].ports.push(pb);
        (pa, pb)
    }
}

impl Port {
    fn new(name: String, node: u32, peer_node: u32, peer_port: u16, l: LinkSpec, queue: Queue<AnyQdisc>) -> Port {
        Port {
            name,
            node,
            peer_node,
            peer_port,
            rate: l.rate,
            delay: l.delay,
            queue,
            busy_until: SimTime::ZERO,
            busy_until_f: 0.0,
            rate_f: l.rate_f,
            delay_f: l.delay_f,
            txdone_pending: false,
            measured: false,
            pkts_out: 0,
            bytes_out: 0,
            window_bytes_out: 0,
            probe: crate::probe::NO_PROBE,
        }
    }
}
