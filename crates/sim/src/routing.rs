//! Routing: shortest-path next hops per switch and destination, and how a switch picks one.
//!
//! Rules:
//! - [`Routes::build`] runs one breadth-first search per destination node over the links
//!   (hop count is the metric) and keeps, for every switch and destination, *every* neighbour
//!   port on a shortest path, in the switch's port order. The tables are flat arrays: a
//!   `(start, len)` pair per (switch, destination) into one `Vec<u16>` of local ports.
//! - Hosts never forward: a packet that reaches a host is delivered to it. Paths through hosts
//!   are not considered (a host is only an end point).
//! - When a switch has several next hops, [`RoutingMode`] picks one:
//!   - `ecmp`: a hash of the directed 5-tuple, salted by the hop count (so successive tiers of a
//!     fabric choose independently and no flow polarises onto one core) and by the hash seed
//!     (`routing.hash_seed`: salt = `seed << 8 | hops`; seed 0, the default, is the hash of
//!     earlier releases; `"run"` draws it from the run's seed, stream `routing.hash`);
//!   - `symmetric`: the same but over the *unordered* pair of end points, so a flow's ACKs (or
//!     credits) retrace its path on topologies whose tiers mirror each other (dumbbell, parking
//!     lot, leaf-spine, fat-tree: the same choice index at the same hop number is the mirror
//!     link);
//!   - `spray`: a fresh random choice per packet (per-packet spraying), from the switch's stream;
//!   - `dst_bits`: the index is the destination's host number modulo the choices: the static
//!     two-level routing of the Outcast paper's fat-tree testbed (by destination address bits).
//! - Equal-length routing: a packet with `via != NO_VIA` first goes to switch `via` (a core),
//!   which clears it; the end points choose `via` per flow (see `workload.rs`).
//! - A destination no switch can reach is an error found when the scenario is built, never at
//!   run time (see `Routes::first_unreachable`), and so is a routing loop (`Routes::first_loop`,
//!   which cannot happen with shortest-path tables and is verified all the same).

use crate::net::{Network, NodeKind};
use dcfair_core::packet::{hash_flow, Packet, Proto, NO_VIA};
use dcfair_core::rng::{mix64, Rng};
use rand::Rng as _;
use std::collections::VecDeque;

/// How a switch picks among equal-cost next hops: the `routing.mode` of the config layer.
pub use crate::scenario::RoutingMode;

/// Next-hop tables of every switch.
#[derive(Debug, Default)]
pub struct Routes {
    nodes: usize,
    /// Per (switch, destination): (start, len) into `ports`; indexed `switch_slot * nodes + dst`.
    span: Vec<(u32, u16)>,
    ports: Vec<u16>,
    /// The same ports by global id.
    global: Vec<u32>,
    /// Node id -> row in `span` (switches only; `u32::MAX` for hosts).
    slot: Vec<u32>,
    /// Host number of each host node (its index among hosts, in id order), for `dst_bits`.
    host_no: Vec<u32>,
    /// Per (switch, destination), indexed like `span`: the global id of the next hop of a
    /// packet without waypoint when it does not depend on the packet (one choice, or any
    /// number under `dst_bits`), else [`NO_PORT`]: one load instead of four and a division.
    direct: Vec<u32>,
    mode: RoutingMode,
    /// `hash seed << 8`: the hop count fills the low byte of the flow hash's salt.
    hash_base: u64,
}

/// A `direct` entry that leaves the choice to [`Routes::next_global_port`]'s full path.
const NO_PORT: u32 = u32::MAX;

impl Routes {
    /// Shortest-path next hops of every switch towards every node.
    pub fn build(net: &Network, mode: RoutingMode) -> Routes {
        let n = net.nodes.len();
        let mut slot = vec![u32::MAX; n];
        let mut switches = 0u32;
        let mut host_no = vec![u32::MAX; n];
        let mut hosts = 0u32;
        for (i, node) in net.nodes.iter().enumerate() {
            match node.kind {
                NodeKind::Switch => {
                    slot[i] = switches;
                    switches += 1;
                }
                NodeKind::Host => {
                    host_no[i] = hosts;
                    hosts += 1;
                }
            }
        }
        let mut span = vec![(0u32, 0u16); switches as usize * n];
        let mut ports = Vec::new();
        let mut global = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for dst in 0..n {
            // BFS from dst over reversed links; only switches relay.
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(u) = queue.pop_front() {
                if u != dst && net.nodes[u].kind == NodeKind::Host {
                    continue;
                }
                for &p in &net.nodes[u].ports {
                    let v = net.ports[p as usize].peer_node as usize;
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            for (s, node) in net.nodes.iter().enumerate() {
                if node.kind != NodeKind::Switch || dist[s] == u32::MAX || s == dst {
                    continue;
                }
                let start = ports.len() as u32;
                for (local, &p) in node.ports.iter().enumerate() {
                    let v = net.ports[p as usize].peer_node as usize;
                    let relays = v == dst || net.nodes[v].kind == NodeKind::Switch;
                    if relays && dist[v] != u32::MAX && dist[v] + 1 == dist[s] {
                        ports.push(local as u16);
                        global.push(p);
                    }
                }
                span[slot[s] as usize * n + dst] = (start, (ports.len() as u32 - start) as u16);
            }
        }
        let direct = span
            .iter()
            .enumerate()
            .map(|(i, &(start, len))| match (len, mode) {
                (0, _) => NO_PORT,
                (1, _) => global[start as usize],
                (len, RoutingMode::DstBits) => {
                    let no = host_no.get(i % n).copied().unwrap_or(0);
                    global[start as usize + (no as u64 % len as u64) as usize]
                }
                _ => NO_PORT,
            })
            .collect();
        Routes { nodes: n, span, ports, global, slot, host_no, direct, mode, hash_base: 0 }
    }

    /// The same tables with the flow hash of `ecmp` and `symmetric` seeded by `seed` (at most
    /// 2^56 - 1; 0 is the unseeded hash): a new, independent choice of paths for every seed.
    pub fn with_hash_seed(mut self, seed: u64) -> Routes {
        debug_assert!(seed < 1 << 56);
        self.hash_base = seed << 8;
        self
    }

    /// How switches pick among equal-cost next hops (fixed when the tables are built).
    pub fn mode(&self) -> RoutingMode {
        self.mode
    }

    /// The equal-cost next hops (local port indices) of switch `sw` towards `dst`.
    #[inline]
    pub fn choices(&self, sw: u32, dst: u32) -> &[u16] {
        let s = self.slot[sw as usize];
        if s == u32::MAX {
            return &[];
        }
        let (start, len) = self.span[s as usize * self.nodes + dst as usize];
        &self.ports[start as usize..start as usize + len as usize]
    }

    /// The local port switch `sw` sends `pkt` out of, or `None` if `dst` is unreachable.
    /// Clears `pkt.via` when `sw` is the waypoint.
    #[inline]
    pub fn next_port(&self, sw: u32, pkt: &mut Packet, rng: &mut Rng) -> Option<u16> {
        self.pick(sw, pkt, rng).map(|i| self.ports[i])
    }

    /// Like [`Routes::next_port`], but the port's global id (what the engine needs: no look-up
    /// in the node's port list). The same choice, read from `direct` when it can be.
    #[inline]
    pub fn next_global_port(&self, sw: u32, pkt: &mut Packet, rng: &mut Rng) -> Option<u32> {
        if pkt.via == NO_VIA {
            let s = self.slot[sw as usize];
            if s == u32::MAX {
                return None;
            }
            let d = self.direct[s as usize * self.nodes + pkt.dst as usize];
            if d != NO_PORT {
                return Some(d);
            }
        }
        self.pick(sw, pkt, rng).map(|i| self.global[i])
    }

    /// The index in `ports` / `global` of the chosen next hop.
    #[inline]
    fn pick(&self, sw: u32, pkt: &mut Packet, rng: &mut Rng) -> Option<usize> {
        if pkt.via == sw {
            pkt.via = NO_VIA;
        }
        let target = if pkt.via != NO_VIA { pkt.via } else { pkt.dst };
        let s = self.slot[sw as usize];
        if s == u32::MAX {
            return None;
        }
        let (start, len) = self.span[s as usize * self.nodes + target as usize];
        let i = match len {
            0 => return None,
            1 => 0,
            n => match self.mode {
                RoutingMode::Ecmp => hash_flow(pkt.flow_key(), self.hash_base | pkt.hops as u64) % n as u64,
                RoutingMode::Symmetric => hash_flow(unordered_key(pkt), self.hash_base | pkt.hops as u64) % n as u64,
                RoutingMode::Spray => rng.gen_range(0..n as u64),
                RoutingMode::DstBits => self.host_no.get(pkt.dst as usize).copied().unwrap_or(0) as u64 % n as u64,
            },
        };
        Some(start as usize + i as usize)
    }

    /// The first (switch, destination) from which some sequence of next hops comes back to a
    /// switch it has passed (a routing loop), or `None`. Checked for every destination, over
    /// every equal-cost choice, so no flow hash, spray draw or waypoint can find a loop: a
    /// waypoint's two legs are each loop-free and the waypoint is cleared on arrival.
    /// Shortest-path tables cannot loop (each hop is one closer); this verifies the tables
    /// as built rather than trusting that argument (one depth-first pass per destination).
    pub fn first_loop(&self, net: &Network) -> Option<(u32, u32)> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let n = self.nodes;
        let mut state = vec![NEW; n];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for dst in 0..n {
            state.iter_mut().for_each(|s| *s = NEW);
            for root in 0..n {
                if self.slot[root] == u32::MAX || state[root] != NEW || root == dst {
                    continue;
                }
                state[root] = OPEN;
                stack.push((root as u32, 0));
                while let Some(&mut (sw, ref mut next)) = stack.last_mut() {
                    let (start, len) = self.span[self.slot[sw as usize] as usize * n + dst];
                    if *next == len as usize {
                        state[sw as usize] = DONE;
                        stack.pop();
                        continue;
                    }
                    let peer = net.ports[self.global[start as usize + *next] as usize].peer_node;
                    *next += 1;
                    if peer as usize == dst || self.slot[peer as usize] == u32::MAX {
                        continue; // delivered: hosts never forward
                    }
                    match state[peer as usize] {
                        OPEN => return Some((peer, dst as u32)),
                        NEW => {
                            state[peer as usize] = OPEN;
                            stack.push((peer, 0));
                        }
                        _ => {}
                    }
                }
            }
        }
        None
    }

    /// Every pair (host `a`, host `b`) of `pairs` must be connected; the first that is not is
    /// returned.
    pub fn first_unreachable(&self, net: &Network, pairs: impl IntoIterator<Item = (u32, u32)>) -> Option<(u32, u32)> {
        pairs.into_iter().find(|&(a, b)| !self.reachable(net, a, b))
    }

    /// A host reaches `dst` if its NIC's peer is `dst` or a switch with a route to `dst`.
    pub fn reachable(&self, net: &Network, host: u32, dst: u32) -> bool {
        let Some(&nic) = net.nodes[host as usize].ports.first() else { return false };
        let first = net.ports[nic as usize].peer_node;
        first == dst || !self.choices(first, dst).is_empty()
    }
}

/// The 5-tuple with its two ends in a fixed order, so both directions hash alike.
#[inline]
fn unordered_key(p: &Packet) -> u64 {
    let (a, b) = ((p.src as u64) << 16 | p.sport as u64, (p.dst as u64) << 16 | p.dport as u64);
    // ExpressPass credits hash as their data's protocol, so they retrace the data path
    let proto = if p.proto == Proto::Credit { Proto::Tcp } else { p.proto };
    mix64(a.min(b)) ^ mix64(a.max(b).rotate_left(17)) ^ proto as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::LinkSpec;
    use dcfair_core::qdisc::{droptail::DropTail, AnyQdisc, Limit, Queue};
    use dcfair_core::time::{BitsPerSec, SimDuration};

    fn q() -> crate::pktref::SimQueue {
        Queue::new(AnyQdisc::DropTail(DropTail::new(Limit::pkts(10))))
    }
    fn link() -> LinkSpec {
        LinkSpec { rate: BitsPerSec::from_gbps(1), delay: SimDuration::from_us(1), rate_f: 1e9, delay_f: 1e-6 }
    }

    /// h0 - s0 = {s1, s2} = s3 - h1: two equal paths.
    fn diamond() -> Network {
        let mut net = Network::default();
        let h0 = net.add_node(NodeKind::Host, "h0".into());
        let h1 = net.add_node(NodeKind::Host, "h1".into());
        let s: Vec<u32> = (0..4).map(|i| net.add_node(NodeKind::Switch, format!("s{i}"))).collect();
        net.connect(h0, s[0], link(), link(), q(), q());
        net.connect(s[0], s[1], link(), link(), q(), q());
        net.connect(s[0], s[2], link(), link(), q(), q());
        net.connect(s[1], s[3], link(), link(), q(), q());
        net.connect(s[2], s[3], link(), link(), q(), q());
        net.connect(s[3], h1, link(), link(), q(), q());
        net
    }

    fn pkt(src: u32, dst: u32, sport: u16) -> Packet {
        Packet { src, dst, sport, dport: 80, ..Default::default() }
    }

    // --- tables -----------------------------------------------------------------------------
    #[test]
    fn both_equal_paths_are_kept() {
        let net = diamond();
        let r = Routes::build(&net, RoutingMode::Ecmp);
        assert_eq!(r.choices(2, 1).len(), 2, "s0 has two ways to h1");
        assert_eq!(r.choices(3, 1).len(), 1);
        assert_eq!(r.choices(5, 0).len(), 2, "s3 has two ways back to h0");
        assert!(r.reachable(&net, 0, 1) && r.reachable(&net, 1, 0));
    }

    #[test]
    fn hosts_do_not_relay() {
        // s0 - h_mid - s1: the only path crosses a host, so there is none.
        let mut net = Network::default();
        let a = net.add_node(NodeKind::Host, "a".into());
        let mid = net.add_node(NodeKind::Host, "mid".into());
        let b = net.add_node(NodeKind::Host, "b".into());
        let s0 = net.add_node(NodeKind::Switch, "s0".into());
        let s1 = net.add_node(NodeKind::Switch, "s1".into());
        net.connect(a, s0, link(), link(), q(), q());
        net.connect(s0, mid, link(), link(), q(), q());
        net.connect(mid, s1, link(), link(), q(), q());
        net.connect(s1, b, link(), link(), q(), q());
        let r = Routes::build(&net, RoutingMode::Ecmp);
        assert!(!r.reachable(&net, a, b));
        assert_eq!(r.first_unreachable(&net, [(a, mid), (a, b)]), Some((a, b)));
    }

    #[test]
    fn shortest_path_tables_have_no_loop_and_a_table_that_sends_back_has_one() {
        let net = diamond();
        for mode in [RoutingMode::Ecmp, RoutingMode::Spray, RoutingMode::DstBits] {
            assert_eq!(Routes::build(&net, mode).first_loop(&net), None);
        }
        // s1 (node 3) towards h1 (node 1) goes back to s0 (node 2), which may send to s1 again
        let mut r = Routes::build(&net, RoutingMode::Ecmp);
        let (start, len) = r.span[r.slot[3] as usize * r.nodes + 1];
        assert_eq!(len, 1);
        let back = net.nodes[3].ports.iter().position(|&p| net.ports[p as usize].peer_node == 2).unwrap();
        r.ports[start as usize] = back as u16;
        r.global[start as usize] = net.nodes[3].ports[back];
        let (sw, dst) = r.first_loop(&net).expect("a loop");
        assert_eq!(dst, 1);
        assert!(sw == 2 || sw == 3, "found at {sw}");
    }

    // --- choosing among equal next hops ---------------------------------------------------------
    #[test]
    fn ecmp_is_per_flow_and_spreads_flows() {
        let net = diamond();
        let r = Routes::build(&net, RoutingMode::Ecmp);
        let mut rng = dcfair_core::rng::Streams::new(1).stream("t", 0);
        let mut used = [0; 2];
        for sport in 0..200 {
            let mut p = pkt(0, 1, sport);
            let first = r.next_port(2, &mut p, &mut rng).unwrap();
            for _ in 0..5 {
                assert_eq!(r.next_port(2, &mut p.clone(), &mut rng), Some(first), "one flow, one path");
            }
            used[(first - 1) as usize] += 1;
        }
        assert!(used[0] > 60 && used[1] > 60, "{used:?}");
    }

    #[test]
    fn the_hash_seed_draws_a_new_choice_and_zero_is_the_unseeded_hash() {
        let net = diamond();
        let mut rng = dcfair_core::rng::Streams::new(1).stream("t", 0);
        for mode in [RoutingMode::Ecmp, RoutingMode::Symmetric] {
            let plain = Routes::build(&net, mode);
            let zero = Routes::build(&net, mode).with_hash_seed(0);
            let (one, two) = (Routes::build(&net, mode).with_hash_seed(1), Routes::build(&net, mode).with_hash_seed(2));
            let mut differ = [0; 2];
            for sport in 0..400 {
                let p = pkt(0, 1, sport);
                let at = |r: &Routes, rng: &mut Rng| r.next_port(2, &mut p.clone(), rng).unwrap();
                // seed 0 is the earlier releases' hash: salted by the hop count alone
                let key = if mode == RoutingMode::Ecmp { p.flow_key() } else { unordered_key(&p) };
                let earlier = plain.choices(2, 1)[(hash_flow(key, p.hops as u64) % 2) as usize];
                assert_eq!(at(&zero, &mut rng), earlier, "seed 0 is the earlier hash");
                assert_eq!(at(&plain, &mut rng), earlier);
                // a seeded flow keeps its path
                assert_eq!(at(&one, &mut rng), at(&one, &mut rng));
                differ[0] += (at(&one, &mut rng) != at(&plain, &mut rng)) as u32;
                differ[1] += (at(&two, &mut rng) != at(&one, &mut rng)) as u32;
            }
            // independent hash functions: about half of the flows move between two seeds
            assert!(differ.iter().all(|&d| (140..=260).contains(&d)), "{mode:?}: {differ:?}");
        }
    }

    #[test]
    fn symmetric_mode_retraces_the_path() {
        let net = diamond();
        let r = Routes::build(&net, RoutingMode::Symmetric);
        let mut rng = dcfair_core::rng::Streams::new(1).stream("t", 0);
        for sport in 0..100 {
            let mut fwd = Packet { hops: 1, ..pkt(0, 1, sport) };
            let up = r.next_port(2, &mut fwd, &mut rng).unwrap(); // s0's port 1 -> s1, 2 -> s2
            let mut rev = Packet { hops: 1, src: 1, dst: 0, sport: 80, dport: sport, ..Default::default() };
            let back = r.next_port(5, &mut rev, &mut rng).unwrap(); // s3's port 0 -> s1, 1 -> s2
            assert_eq!(up - 1, back, "flow {sport}: the ACK must come back through the same middle switch");
        }
    }

    #[test]
    fn spray_uses_every_path_for_one_flow() {
        let net = diamond();
        let r = Routes::build(&net, RoutingMode::Spray);
        let mut rng = dcfair_core::rng::Streams::new(1).stream("t", 0);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..50 {
            seen.insert(r.next_port(2, &mut pkt(0, 1, 7), &mut rng).unwrap());
        }
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn a_waypoint_is_visited_then_cleared() {
        let net = diamond();
        let r = Routes::build(&net, RoutingMode::Ecmp);
        let mut rng = dcfair_core::rng::Streams::new(1).stream("t", 0);
        let mut p = Packet { via: 4, ..pkt(0, 1, 1) }; // must pass s2 (node 4)
        assert_eq!(r.next_port(2, &mut p, &mut rng), Some(2), "s0 heads for s2");
        assert_eq!(r.next_port(4, &mut p, &mut rng), Some(1), "s2 clears via and heads for h1 via s3");
        assert_eq!(p.via, NO_VIA);
    }

    #[test]
    fn the_direct_table_gives_the_choice_of_the_full_path() {
        // Two diamonds' worth of choices: every switch, destination, mode, waypoint or none,
        // several flows and hop counts; the same random stream on both sides (spray).
        let net = diamond();
        for mode in [RoutingMode::Ecmp, RoutingMode::Symmetric, RoutingMode::Spray, RoutingMode::DstBits] {
            let r = Routes::build(&net, mode);
            let mut a = dcfair_core::rng::Streams::new(3).stream("t", 0);
            let mut b = a.clone();
            let mut direct = 0;
            for sw in 2..6u32 {
                for dst in 0..6u32 {
                    for via in [NO_VIA, 3, 4] {
                        for (sport, hops) in [(1, 0), (2, 1), (9, 2), (40, 3)] {
                            let p = Packet { via, hops, ..pkt(1 - dst.min(1), dst, sport) };
                            let (mut p1, mut p2) = (p.clone(), p);
                            let got = r.next_global_port(sw, &mut p1, &mut a);
                            let want = r.pick(sw, &mut p2, &mut b).map(|i| r.global[i]);
                            assert_eq!(got, want, "{mode:?} at {sw} to {dst} via {via}");
                            assert_eq!(p1, p2);
                            direct += (via == NO_VIA && r.direct[r.slot[sw as usize] as usize * r.nodes + dst as usize] != NO_PORT) as u32;
                        }
                    }
                }
            }
            assert!(direct > 0, "{mode:?}: some choices are direct");
        }
    }
}
