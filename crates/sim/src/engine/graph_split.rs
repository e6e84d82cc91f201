//! A graph partition of a network, for the runs in parts and on threads (`windows.rs`) of
//! topologies whose node ids do not follow their structure (a custom topology lists its
//! switches in any order).
//!
//! Rules:
//! - Nodes that must stay together form a group: a host with one link joins the node at its
//!   other end, and the two ends of a link with no delay join each other (a part boundary on
//!   such a link would leave no lookahead). A group weighs its nodes' ports: each port's packets
//!   are work for the part that runs it.
//! - Growing: part after part, from the unplaced group farthest (breadth-first) from a start,
//!   groups join in breadth-first order over links until the part weighs its share (the total
//!   weight over the parts, rounded up); a part whose region runs out goes on from the lowest
//!   unplaced group. The last part takes what is left. The first part starts from one of
//!   [`TRIES`] groups evenly spread over the ids, the others from the lowest unplaced group.
//! - Refining: passes over the groups in id order move a group to the other part that holds
//!   most of its links (the lowest on ties) when that cuts fewer links and keeps that part
//!   within its share plus the larger of 5 % of it and the heaviest group, or when it cuts as
//!   many and the move evens the two parts' weights. No move empties a part. Each move lowers
//!   the cut, or keeps it and lowers the sum of squared part weights, so the passes end; at
//!   most [`PASSES`].
//! - Of the [`TRIES`] partitions grown and refined, the one that cuts fewest links is kept (the
//!   first on ties). Every step goes by ids and counts: the same network gives the same parts.

use crate::net::{Network, NodeKind};
use dcfair_core::time::SimDuration;
use std::collections::VecDeque;

/// Refining passes at most.
const PASSES: usize = 16;

/// Partitions grown, each from another start; the one that cuts fewest links is kept.
const TRIES: usize = 8;

/// The part of every node, by node id, in `parts` parts (module rules); `None` when the
/// network has fewer groups than parts, or a part came out empty.
pub(super) fn parts(net: &Network, parts: usize) -> Option<Vec<u32>> {
    let (group, groups) = groups(net);
    if groups < parts {
        return None;
    }
    let g = Graph::of(net, &group, groups);
    let mut best: Option<(usize, Vec<u32>)> = None;
    let tries = TRIES.min(groups);
    for t in 0..tries {
        let mut part = g.grow(parts, t * groups / tries);
        g.refine(&mut part, parts);
        let cut = g.cut(&part);
        if best.as_ref().is_none_or(|(c, _)| cut < *c) {
            best = Some((cut, part));
        }
    }
    let (_, part) = best?;
    let mut used = vec![false; parts];
    for &p in &part {
        used[p as usize] = true;
    }
    used.iter().all(|&u| u).then(|| group.iter().map(|&gr| part[gr as usize]).collect())
}

/// The group of every node (module rules), numbered in the order of their lowest node ids,
/// and how many groups there are.
fn groups(net: &Network) -> (Vec<u32>, usize) {
    let n = net.nodes.len();
    let mut up: Vec<u32> = (0..n as u32).collect();
    fn root(up: &mut [u32], mut i: u32) -> u32 {
        while up[i as usize] != i {
            up[i as usize] = up[up[i as usize] as usize]; // path halving
            i = up[i as usize];
        }
        i
    }
    for port in &net.ports {
        let node = &net.nodes[port.node as usize];
        let leaf_host = node.kind == NodeKind::Host && node.ports.len() == 1;
        if leaf_host || port.delay == SimDuration::ZERO {
            let (a, b) = (root(&mut up, port.node), root(&mut up, port.peer_node));
            up[a.max(b) as usize] = a.min(b);
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut group = vec![0u32; n];
    let mut groups = 0usize;
    for i in 0..n as u32 {
        let r = root(&mut up, i) as usize;
        if id[r] == u32::MAX {
            id[r] = groups as u32;
            groups += 1;
        }
        group[i as usize] = id[r];
    }
    (group, groups)
}

/// The groups as a graph: their weights, and every link between two groups once from each end.
struct Graph {
    weight: Vec<u64>,
    /// The neighbours of group `i`: `adj[start[i]..start[i + 1]]`, a group once per link.
    start: Vec<usize>,
    adj: Vec<u32>,
}

impl Graph {
    fn of(net: &Network, group: &[u32], groups: usize) -> Graph {
        let mut weight = vec![0u64; groups];
        let mut degree = vec![0usize; groups + 1];
        for port in &net.ports {
            let (a, b) = (group[port.node as usize], group[port.peer_node as usize]);
            weight[a as usize] += 1;
            if a != b {
                degree[a as usize + 1] += 1;
            }
        }
        let mut start = degree;
        for i in 0..groups {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut adj = vec![0u32; start[groups]];
        for port in &net.ports {
            let (a, b) = (group[port.node as usize], group[port.peer_node as usize]);
            if a != b {
                adj[fill[a as usize]] = b;
                fill[a as usize] += 1;
            }
        }
        Graph { weight, start, adj }
    }

    fn neighbours(&self, i: usize) -> &[u32] {
        &self.adj[self.start[i]..self.start[i + 1]]
    }

    /// Links between two parts.
    fn cut(&self, part: &[u32]) -> usize {
        (0..part.len()).map(|i| self.neighbours(i).iter().filter(|&&j| part[j as usize] != part[i]).count()).sum::<usize>() / 2
    }

    /// The part of every group after growing (module rules), the first part from the group
    /// farthest from `start` rather than from the lowest.
    fn grow(&self, parts: usize, start: usize) -> Vec<u32> {
        let n = self.weight.len();
        let share = self.weight.iter().sum::<u64>().div_ceil(parts as u64);
        let mut part = vec![u32::MAX; n];
        let mut lowest = 0usize; // every group below it is placed
        let mut queue = VecDeque::new();
        for k in 0..parts as u32 {
            while lowest < n && part[lowest] != u32::MAX {
                lowest += 1;
            }
            if lowest == n {
                break;
            }
            if k as usize == parts - 1 {
                part.iter_mut().filter(|p| **p == u32::MAX).for_each(|p| *p = k);
                break;
            }
            let mut held = 0u64;
            let mut from = self.farthest(if k == 0 { start } else { lowest }, &part);
            while held < share {
                queue.clear();
                queue.push_back(from as u32);
                part[from] = k;
                held += self.weight[from];
                while let Some(i) = queue.pop_front() {
                    if held >= share {
                        break;
                    }
                    for &j in self.neighbours(i as usize) {
                        if held >= share {
                            break;
                        }
                        if part[j as usize] == u32::MAX {
                            part[j as usize] = k;
                            held += self.weight[j as usize];
                            queue.push_back(j);
                        }
                    }
                }
                match (lowest..n).find(|&i| part[i] == u32::MAX) {
                    Some(next) if held < share => from = next,
                    _ => break,
                }
            }
        }
        part
    }

    /// The unplaced group that a breadth-first walk over unplaced groups from `from` meets last.
    fn farthest(&self, from: usize, part: &[u32]) -> usize {
        let mut seen = vec![false; self.weight.len()];
        let mut queue = VecDeque::from([from as u32]);
        seen[from] = true;
        let mut last = from;
        while let Some(i) = queue.pop_front() {
            last = i as usize;
            for &j in self.neighbours(i as usize) {
                if !seen[j as usize] && part[j as usize] == u32::MAX {
                    seen[j as usize] = true;
                    queue.push_back(j);
                }
            }
        }
        last
    }

    /// Moves groups between parts while a move helps (module rules).
    fn refine(&self, part: &mut [u32], parts: usize) {
        let share = self.weight.iter().sum::<u64>().div_ceil(parts as u64);
        let heaviest = self.weight.iter().copied().max().unwrap_or(0);
        let limit = share + (share / 20).max(heaviest);
        let mut weight = vec![0u64; parts];
        let mut members = vec![0usize; parts];
        for (i, &p) in part.iter().enumerate() {
            weight[p as usize] += self.weight[i];
            members[p as usize] += 1;
        }
        let mut links = vec![0u64; parts];
        for _ in 0..PASSES {
            let mut moved = false;
            for i in 0..part.len() {
                let own = part[i] as usize;
                if members[own] == 1 {
                    continue;
                }
                let near = self.neighbours(i);
                for &j in near {
                    links[part[j as usize] as usize] += 1;
                }
                // the other part with most of its links, the lowest on ties (none: keep it)
                let to = near.iter().map(|&j| part[j as usize] as usize).filter(|&t| t != own).max_by_key(|&t| (links[t], std::cmp::Reverse(t)));
                let (mine, theirs) = (links[own], to.map_or(0, |t| links[t]));
                for &j in near {
                    links[part[j as usize] as usize] = 0;
                }
                let Some(to) = to else { continue };
                let w = self.weight[i];
                let fewer_cut = theirs > mine && weight[to] + w <= limit;
                let evener = theirs == mine && weight[to] + w < weight[own];
                if fewer_cut || evener {
                    part[i] = to as u32;
                    weight[own] -= w;
                    weight[to] += w;
                    members[own] -= 1;
                    members[to] += 1;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Partition;
    use crate::net::LinkSpec;
    use crate::pktref::SimQueue;
    use dcfair_core::qdisc::{droptail::DropTail, AnyQdisc, Limit, Queue};
    use dcfair_core::time::BitsPerSec;
    use rand::Rng as _;

    fn link(delay_ns: u64) -> LinkSpec {
        LinkSpec { rate: BitsPerSec(1_000_000_000), delay: SimDuration(delay_ns * 1000), rate_f: 1e9, delay_f: delay_ns as f64 * 1e-9 }
    }

    fn q() -> SimQueue {
        Queue::new(AnyQdisc::DropTail(DropTail::new(Limit::pkts(10))))
    }

    fn connect(net: &mut Network, a: u32, b: u32, delay_ns: u64) {
        net.connect(a, b, link(delay_ns), link(delay_ns), q(), q());
    }

    /// Two clusters of four switches, each a full mesh with links of `inner_ns` and two hosts per
    /// switch, joined by one link of 1 us; the switches listed a0, b0, a1, b1, ...
    fn two_clusters(inner_ns: u64) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..4 {
            a.push(net.add_node(NodeKind::Switch, format!("a{i}")));
            b.push(net.add_node(NodeKind::Switch, format!("b{i}")));
        }
        for c in [&a, &b] {
            for i in 0..4 {
                for j in i + 1..4 {
                    connect(&mut net, c[i], c[j], inner_ns);
                }
                for h in 0..2 {
                    let host = net.add_node(NodeKind::Host, format!("{}h{h}", net.nodes[c[i] as usize].name));
                    connect(&mut net, c[i], host, 1000);
                }
            }
        }
        connect(&mut net, a[0], b[0], 1000);
        (net, a, b)
    }

    #[test]
    fn clusters_listed_out_of_order_are_split_at_the_link_between_them() {
        let (net, a, b) = two_clusters(1000);
        let levels = Partition::of(&net, 2, crate::engine::windows::by_levels(&net, 2)).unwrap();
        assert!(levels.cut_links(&net) > 4, "the blocks of ids mix the clusters");
        let p = Partition::split(&net, 2).unwrap();
        assert_eq!((p.cut_links(&net), p.lookahead), (1, SimDuration(1_000_000)));
        for c in [&a, &b] {
            assert!(c.iter().all(|&s| p.part[s as usize] == p.part[c[0] as usize]), "{:?}", p.part);
        }
        assert_ne!(p.part[a[0] as usize], p.part[b[0] as usize]);
        // every host with its switch
        for port in &net.ports {
            if net.nodes[port.node as usize].kind == NodeKind::Host {
                assert_eq!(p.part[port.node as usize], p.part[port.peer_node as usize]);
            }
        }
    }

    #[test]
    fn links_of_no_delay_stay_inside_a_part() {
        let (net, _, _) = two_clusters(0);
        let why = Partition::of(&net, 2, crate::engine::windows::by_levels(&net, 2)).unwrap_err();
        assert!(why.contains("no delay"), "{why}");
        let p = Partition::split(&net, 2).unwrap();
        assert_eq!((p.cut_links(&net), p.lookahead), (1, SimDuration(1_000_000)));
        // more parts than groups: nothing to split but at a link of no delay
        let why = Partition::split(&net, 3).unwrap_err();
        assert!(why.contains("no delay"), "{why}");
    }

    /// The ports of the switch that has most (a fat-tree's `k`).
    fn k_of(net: &Network) -> usize {
        net.nodes.iter().map(|n| n.ports.len()).max().unwrap_or(0)
    }

    /// The built-in fabrics are split by levels; the graph partition of the same network, listed
    /// as a custom topology would be, cuts at most a quarter more links, and its heaviest part
    /// is over its share by at most one group.
    #[test]
    fn fabrics_are_split_by_levels_and_their_graph_partition_cuts_few_more_links() {
        for topo in ["kind = \"fat_tree\"\nk = 4", "kind = \"fat_tree\"\nk = 8", "kind = \"leaf_spine\"\nleaves = 6\nspines = 3\nhosts_per_leaf = 4"] {
            let text = format!("name = \"t\"\n[sim]\nduration_s = 1.0\n[flows]\ncount = 1\nsrc = \"h0\"\ndst = \"h1\"\n[topology]\n{topo}\nhost_rate_mbps = 1000.0\nfabric_rate_mbps = 1000.0\nlink_delay_us = 1.0\n");
            let sc = crate::scenario::load(&text, "t.toml", &[]).unwrap();
            let mut net = crate::topo::build(&sc, dcfair_core::rng::Streams::new(1)).unwrap().net;
            for parts in 2..=4 {
                net.laid_out = true;
                let p = Partition::split(&net, parts).unwrap();
                assert_eq!(p.part, crate::engine::windows::by_levels(&net, parts), "{topo}, {parts} parts");
                net.laid_out = false;
                let g = Partition::split(&net, parts).unwrap();
                assert_ne!(g.part, p.part, "{topo}, {parts} parts: the graph's own partition");
                let (cut, by_levels) = (g.cut_links(&net), p.cut_links(&net));
                assert!(cut * 4 <= by_levels * 5, "{topo}, {parts} parts: {cut} links cut, {by_levels} by levels");
                let mut ports = vec![0usize; parts];
                for port in &net.ports {
                    ports[g.part[port.node as usize] as usize] += 1;
                }
                let share = net.ports.len().div_ceil(parts);
                assert!(*ports.iter().max().unwrap() <= share + share / 20 + 2 * k_of(&net), "{topo}, {parts} parts: {ports:?}");
            }
        }
    }

    #[test]
    fn refining_never_cuts_more_links_and_keeps_every_part() {
        let mut rng = dcfair_core::rng::Streams::new(7).stream("mesh", 0);
        for round in 0..30 {
            let mut net = Network::default();
            let n = 6 + round % 10;
            let sw: Vec<u32> = (0..n).map(|i| net.add_node(NodeKind::Switch, format!("s{i}"))).collect();
            for i in 0..3 * n {
                let h = net.add_node(NodeKind::Host, format!("h{i}"));
                connect(&mut net, sw[rng.gen_range(0..n)], h, 1000);
            }
            for i in 1..n {
                connect(&mut net, sw[rng.gen_range(0..i)], sw[i], 1000); // connected
            }
            for _ in 0..2 * n {
                let (x, y) = (rng.gen_range(0..n), rng.gen_range(0..n));
                if x != y {
                    connect(&mut net, sw[x], sw[y], 1000);
                }
            }
            let (group, groups) = groups(&net);
            assert_eq!(groups, n, "a host with one link joins its switch");
            let g = Graph::of(&net, &group, groups);
            for parts in 2..=4 {
                let mut part = g.grow(parts, 0);
                assert!(part.iter().all(|&p| (p as usize) < parts));
                let grown = g.cut(&part);
                g.refine(&mut part, parts);
                assert!(g.cut(&part) <= grown, "round {round}, {parts} parts");
                // the partition kept is the best of its tries, every part used
                if let Some(best) = super::parts(&net, parts) {
                    assert!((0..parts as u32).all(|k| best.contains(&k)));
                    let by_group: Vec<u32> = (0..groups).map(|gr| best[group.iter().position(|&x| x as usize == gr).unwrap()]).collect();
                    assert!(g.cut(&by_group) <= g.cut(&part), "round {round}, {parts} parts");
                }
            }
        }
    }
}
