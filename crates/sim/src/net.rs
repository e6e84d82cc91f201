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
//! - Every node has a [`Tier`], its role as its topology's builder names it (`fabric.csv`): a
//!   host is [`Tier::Host`], a switch [`Tier::Switch`] unless its builder says more.

use crate::arena::Arena;
use crate::pktref::{PktRef, SimQueue};
use dcfair_core::qdisc::{AnyQdisc, Ports};
use dcfair_core::time::{BitsPerSec, SimDuration, SimTime};

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

/// A node's role in its topology, as the builder names it (`fabric.csv`'s `tier`): fat-trees
/// have edge, aggregation and core switches, leaf-spines leaves and spines; a switch of any
/// other topology is a plain switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    Host,
    Edge,
    Aggregation,
    Core,
    Leaf,
    Spine,
    Switch,
}

impl Tier {
    /// Its name in `fabric.csv`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Host => "host",
            Tier::Edge => "edge",
            Tier::Aggregation => "aggregation",
            Tier::Core => "core",
            Tier::Leaf => "leaf",
            Tier::Spine => "spine",
            Tier::Switch => "switch",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub tier: Tier,
    pub name: String,
    /// Global ids of this node's ports; a packet arriving "through port i" came in on the link
    /// whose local end is `ports[i]`.
    pub ports: Vec<u32>,
}

#[derive(Debug)]
// Laid out by hand (`repr(C)`, cache-line aligned) so that what every packet touches sits
// together in the first [`PORT_HOT_LINES`] lines: the engine's fields, then the queue (its
// per-packet counters, and the discipline when it is DropTail, the one kept inline in
// `AnyQdisc`); the link's other fields and the name after them. Packets and bytes sent are
// the queue's dequeue counters (every packet a port dequeues goes on the wire at once), and
// what a queue call reports goes to the engine's one scratch, not to the port. A fat-tree of
// k = 32 has 49,152 ports, far more than the caches hold, and each line a packet touches in a
// port is a likely miss (docs/performance.md).
#[repr(C, align(64))]
pub struct Port {
    /// When the packet being serialized (if any) is fully on the wire.
    pub busy_until: SimTime,
    /// Picoseconds per byte when the rate divides 8 x 10^12 (every whole number of Mbit/s that
    /// divides 8,000,000, such as 100 Mbit/s, 1, 10, 25, 40 or 100 Gbit/s), else 0: then
    /// [`Port::tx_time`] multiplies instead of dividing a 128-bit number, with the same result.
    ps_per_byte: u64,
    pub delay: SimDuration,
    /// Bytes whose serialization ended inside the measurement window.
    pub window_bytes_out: u64,
    /// The node at the other end of the link and the local index of the link there.
    pub peer_node: u32,
    /// Index of this port's probe in `Sim::probes`, or [`NO_PROBE`] (`probe.rs`).
    pub probe: u32,
    pub peer_port: u16,
    /// A `TxDone` event is pending for this port.
    pub txdone_pending: bool,
    /// Reported in `ports.csv` and the summary's utilization and drops.
    pub measured: bool,
    /// The peer node is a switch (else a host).
    pub peer_switch: bool,
    pub queue: SimQueue,
    pub rate: BitsPerSec,
    /// The shadow clock's `busy_until` and the link as `f64` (bits/s, seconds), for
    /// `sim.tie_break = "float_clock"` (see `engine.rs`).
    pub busy_until_f: f64,
    pub rate_f: f64,
    pub delay_f: f64,
    pub node: u32,
    pub name: String,
}

/// The cache lines at the start of a [`Port`] that a packet crossing it touches.
pub const PORT_HOT_LINES: usize = 3;

const _: () = {
    let hot = std::mem::offset_of!(Port, rate);
    assert!(hot <= 64 * PORT_HOT_LINES, "the hot fields of a Port outgrew PORT_HOT_LINES");
    assert!(hot > 64 * (PORT_HOT_LINES - 1), "PORT_HOT_LINES counts a line no hot field uses");
};

/// `Port::probe` of a port without a probe.
pub const NO_PROBE: u32 = u32::MAX;

/// The arenas of nodes and ports.
#[derive(Debug, Default)]
pub struct Network {
    pub nodes: Vec<Node>,
    /// Lent to the threads of a run in parts (`arena.rs`).
    pub ports: Arena<Port>,
    /// The node ids follow the topology's structure (every built-in kind: a fat-tree's pods,
    /// a leaf-spine's leaves, the chain of a parking lot), not the order a scenario lists
    /// them in (a custom topology): how a run in parts is split (`engine/windows.rs`).
    pub laid_out: bool,
}

/// What a discipline's `wire` hook sees of the built network (see `QueueConfig::wire`).
impl Ports<AnyQdisc<PktRef>> for Network {
    fn feeds(&self, name: &str) -> Option<(u32, u16)> {
        self.ports.iter().find(|p| p.name == name).map(|p| (p.peer_node, p.peer_port))
    }
    fn node_name(&self, node: u32) -> String {
        self.nodes[node as usize].name.clone()
    }
    fn each(&mut self, f: &mut dyn FnMut(u32, &mut AnyQdisc<PktRef>)) {
        for p in &mut self.ports {
            f(p.node, &mut p.queue.qdisc);
        }
    }
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
    /// Every node's distance in links from the nearest host, by node id (`u64::MAX`: no host
    /// reaches it): a breadth-first walk from all hosts at once. Hosts are level 0, a
    /// fat-tree's edges 1, its aggregation switches 2, its cores 3.
    pub fn levels(&self) -> Vec<u64> {
        let mut level = vec![u64::MAX; self.nodes.len()];
        let mut next = std::collections::VecDeque::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.kind == NodeKind::Host {
                level[i] = 0;
                next.push_back(i);
            }
        }
        while let Some(i) = next.pop_front() {
            for &p in &self.nodes[i].ports {
                let peer = self.ports[p as usize].peer_node as usize;
                if level[peer] == u64::MAX {
                    level[peer] = level[i] + 1;
                    next.push_back(peer);
                }
            }
        }
        level
    }

    /// Adds a host, or a switch of tier [`Tier::Switch`]; returns its id.
    pub fn add_node(&mut self, kind: NodeKind, name: String) -> u32 {
        let tier = if kind == NodeKind::Host { Tier::Host } else { Tier::Switch };
        self.nodes.push(Node { kind, tier, name, ports: Vec::new() });
        (self.nodes.len() - 1) as u32
    }

    /// Adds a switch of tier `tier`; returns its id.
    pub fn add_switch(&mut self, tier: Tier, name: String) -> u32 {
        debug_assert_ne!(tier, Tier::Host, "a host is added by add_node");
        self.nodes.push(Node { kind: NodeKind::Switch, tier, name, ports: Vec::new() });
        (self.nodes.len() - 1) as u32
    }

    /// The name of the port from `a` to `b`: `"<a>-><b>"`.
    pub fn port_name(&self, a: u32, b: u32) -> String {
        format!("{}->{}", self.nodes[a as usize].name, self.nodes[b as usize].name)
    }

    /// Joins `a` and `b` with a full-duplex link: `ab` for a -> b (queue `qa` at a's port),
    /// `ba` for b -> a (queue `qb`). Returns the global ids of (a's port, b's port).
    pub fn connect(
        &mut self,
        a: u32,
        b: u32,
        ab: LinkSpec,
        ba: LinkSpec,
        qa: SimQueue,
        qb: SimQueue,
    ) -> (u32, u32) {
        let pa = self.ports.len() as u32;
        let pb = pa + 1;
        let la = self.nodes[a as usize].ports.len() as u16;
        let lb = self.nodes[b as usize].ports.len() as u16;
        let (name_a, name_b) = (self.port_name(a, b), self.port_name(b, a));
        let switch = |n: u32| self.nodes[n as usize].kind == NodeKind::Switch;
        let (sa, sb) = (switch(a), switch(b));
        self.ports.push(Port::new(name_a, a, b, lb, sb, ab, qa));
        self.ports.push(Port::new(name_b, b, a, la, sa, ba, qb));
        self.nodes[a as usize].ports.push(pa);
        self.nodes[b as usize].ports.push(pb);
        (pa, pb)
    }
}

impl Port {
    fn new(name: String, node: u32, peer_node: u32, peer_port: u16, peer_switch: bool, l: LinkSpec, queue: SimQueue) -> Port {
        Port {
            name,
            node,
            peer_node,
            peer_port,
            peer_switch,
            rate: l.rate,
            ps_per_byte: if l.rate.0 > 0 && PS_BITS_PER_SEC % l.rate.0 == 0 { PS_BITS_PER_SEC / l.rate.0 } else { 0 },
            delay: l.delay,
            queue,
            busy_until: SimTime::ZERO,
            busy_until_f: 0.0,
            rate_f: l.rate_f,
            delay_f: l.delay_f,
            txdone_pending: false,
            measured: false,
            window_bytes_out: 0,
            probe: NO_PROBE,
        }
    }

    /// Serialization delay of `bytes` at this port's rate: `rate.tx_time(bytes)`.
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> SimDuration {
        if self.ps_per_byte != 0 {
            SimDuration(bytes as u64 * self.ps_per_byte)
        } else {
            self.rate.tx_time(bytes as u64)
        }
    }
}

/// Bits per second times picoseconds per second: `8 * 10^12` bits of picoseconds per byte.
const PS_BITS_PER_SEC: u64 = 8 * 1_000_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;
    use dcfair_core::qdisc::{droptail::DropTail, AnyQdisc, Limit, Queue};

    fn port(bps: u64) -> Port {
        let l = LinkSpec { rate: BitsPerSec(bps), delay: SimDuration::ZERO, rate_f: bps as f64, delay_f: 0.0 };
        Port::new("p".into(), 0, 1, 0, true, l, Queue::new(AnyQdisc::DropTail(DropTail::new(Limit::pkts(1)))))
    }

    #[test]
    fn tx_time_multiplies_when_it_can_and_agrees_with_the_rate() {
        for bps in [100_000_000, 1_000_000_000, 10_000_000_000, 25_000_000_000, 3, 1_000_000_007, 12_345_678_900] {
            let p = port(bps);
            assert_eq!(p.ps_per_byte != 0, 8_000_000_000_000 % bps == 0, "{bps}");
            for bytes in [1, 40, 64, 1460, 1500, 9000, 65535] {
                assert_eq!(p.tx_time(bytes), BitsPerSec(bps).tx_time(bytes as u64), "{bps} bit/s, {bytes} B");
            }
        }
    }
}
