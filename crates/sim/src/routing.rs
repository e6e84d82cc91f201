//! Routing: shortest-path next hops per switch and destination, and how a switch picks one.
//!
//! Rules:
//! - Hop count is the metric, and a switch keeps, for every destination, *every* neighbour port
//!   on a shortest path, in the switch's port order (its choice set).
//! - Hosts never forward: a packet that reaches a host is delivered to it. Paths through hosts
//!   are not considered (a host is only an end point).
//! - The tables do not grow with switches x hosts. A host with one link, to a switch (its
//!   *attachment*; every host of the built-in fabrics), is reached from every other switch the
//!   way its attachment is: hosts do not relay, so every path to it ends attachment -> host and
//!   the shortest ones are the shortest to the attachment plus that link. Its own entry is only
//!   the attachment's port to it. So [`Routes::build`] runs one breadth-first search per
//!   *switch* over the switch-to-switch links, and one over all links per other host (none in
//!   the fabrics: a host with several links or linked to a host). Their results form a table
//!   of one `u32` per (switch, column), a column per switch and per such host: the global id of
//!   the port when there is one choice, else where a choice set interned once per switch
//!   starts (a fat-tree edge switch has one, "any up port"). Under `dst_bits` the index of a
//!   destination in a set of one of the first three lengths met is stored with the destination,
//!   so a hop costs no division (a fat-tree's sets all have `k/2` ports).
//! - A fabric of at most 2^22 (switch, node) pairs (a k = 16 fat-tree has 430,080) also keeps,
//!   per pair, the next hop whenever it does not depend on the packet: one load per hop where
//!   the compact table takes three. It is derived from the compact table, so the choices are
//!   the same.
//! - A fat-tree or leaf-spine whose compact table has at least [`TIERED_MIN`] entries (a k = 32
//!   fat-tree's 6.25 MiB) reads its hops towards hosts by tier instead (see `Tiered`): an edge
//!   sends up, an aggregation switch down to the destination's edge when it is in its pod and up
//!   otherwise, a core down to the destination's pod. The topology says how it lays out its
//!   tiers ([`Tiers`]); the tiered form is taken from the compact table and kept only if every
//!   (switch, edge) entry equals the table's, so paths do not change.
//! - [`Routes::hint`] names the port a switch will send a packet out of, without a random draw
//!   and without changing the packet, for the engine's cache hints.
//! - When a switch has several next hops, [`RoutingMode`] picks one:
//!   - `ecmp`: a hash of the directed 5-tuple, salted by the hop count (so successive tiers of a
//!     fabric choose independently and no flow polarises onto one core) and by the hash seed
//!     (`routing.hash_seed`: salt = `seed << 8 | hops`; seed 0, the default, is the hash of
//!     earlier releases; `"run"` draws it from the run's seed, stream `routing.hash`);
//!   - `symmetric`: the same but over the *unordered* pair of end points, so a flow's ACKs (or
//!     credits) retrace its path on topologies whose tiers mirror each other (dumbbell, parking
//!     lot, leaf-spine, fat-tree: the same choice index at the same hop number is the mirror
//!     link);
//!   - `spray`: a fresh random choice per packet (per-packet spraying), from the stream
//!     `routing.spray`;
//!   - `spray_round_robin`: oblivious round robin per packet: every choice set of every switch
//!     keeps a counter (starting at an index drawn from `routing.spray`) that each packet
//!     through it advances, whatever its flow;
//!   - `flowlet`: a flow keeps its next hop at a switch while its packets there are at most
//!     `routing.flowlet_gap_us` apart; the first packet after a longer gap starts a flowlet and
//!     draws a new next hop (LetFlow's random choice), from `routing.spray`;
//!   - `adaptive`: each packet takes the next hop whose port holds the fewest bytes queued at
//!     that instant (local queue length), ties drawn from `routing.spray`;
//!   - `dst_bits`: the index is the destination's host number modulo the choices: the static
//!     two-level routing of the Outcast paper's fat-tree testbed (by destination address bits).
//! - The last three modes keep state: [`RouteState`], which the engine owns and passes in with
//!   its ports and the time ([`Routes::next_global_port_in`]). [`Routes::next_port`] and
//!   [`Routes::next_global_port`] have no such state and draw at random where those modes would
//!   use it (only the real-packet switch, which refuses them, and tests call them).
//! - Sprayed transports: with `spray_proto` set ([`Routes::with_sprayed`]), a packet of that
//!   protocol (NDP's) is spread per packet under `ecmp`, `symmetric` and `dst_bits`, as its
//!   transport asks: one with payload by the path number its sender put in its source port
//!   (with `digits`: a switch with `n` choices at the packet's `h`-th hop takes digit `h - 1`
//!   of that number in base `n`, so a sender that cycles through the numbers takes every path
//!   of a fat-tree or leaf-spine equally often), else at random. Under the per-packet modes it
//!   follows the mode like every packet.
//! - Equal-length routing: a packet with `via != NO_VIA` first goes to switch `via` (a core),
//!   which clears it; the end points choose `via` per flow (see `workload.rs`).
//! - A destination no switch can reach is an error found when the scenario is built, never at
//!   run time (see `Routes::first_unreachable`), and so is a routing loop (`Routes::first_loop`,
//!   which cannot happen with shortest-path tables and is verified all the same).

use crate::arena::Arena;
use crate::net::{Network, NodeKind, Port};
use dcfair_core::packet::{hash_flow, Packet, Proto, NO_VIA};
use dcfair_core::rng::{mix64, Rng};
use dcfair_core::time::{SimDuration, SimTime};
use rand::Rng as _;
use std::collections::{HashMap, VecDeque};

/// How a switch picks among equal-cost next hops: the `routing.mode` of the config layer.
pub use crate::scenario::RoutingMode;

/// Next-hop tables of every switch.
#[derive(Debug, Default)]
pub struct Routes {
    /// Node id -> row of `table` (switches only; `u32::MAX` for hosts).
    slot: Vec<u32>,
    /// Per node, how a packet heads for it (its column, its attachment, its host number).
    dest: Vec<Dest>,
    /// Per node, its column as a packet carries it ([`Routes::column`]): one dense load at
    /// each emission instead of a `Dest` read and a narrowing.
    packet_col: Vec<u16>,
    /// Columns of `table`: one per switch (its row number), then one per host without an
    /// attachment.
    cols: usize,
    /// Per (switch row, column), indexed `row * cols + column`: the global id of the only next
    /// hop, or a choice set of several ports: [`GROUP`] | the index of its length among the
    /// first three lengths met (3: another) << [`LEN_SHIFT`] | where it starts in `ports`; or [`NO_ROUTE`].
    table: Vec<u32>,
    /// The choice sets of several ports (each interned once per switch), one after another.
    ports: Vec<u16>,
    /// The length of the choice set that starts at each index of `ports` (0 elsewhere).
    group_len: Vec<u32>,
    /// The same ports by global id.
    global: Vec<u32>,
    /// Global port id -> its index among its node's ports (the one-port choice sets).
    local: Vec<u16>,
    mode: RoutingMode,
    /// `hash seed << 8`: the hop count fills the low byte of the flow hash's salt.
    hash_base: u64,
    /// On a fabric of at most [`DIRECT_MAX`] (switch, node) pairs, per pair (indexed
    /// `row * nodes + node`): the global id of the next hop of a packet without waypoint when
    /// it does not depend on the packet (one choice, or any number under `dst_bits`), else
    /// [`NO_PORT`]: one load per hop. Empty on larger fabrics.
    direct: Vec<u32>,
    /// A fat-tree's or leaf-spine's next hops towards hosts by tier ([`Routes::with_tiers`]).
    tiered: Option<Tiered>,
    /// The protocol number whose packets are sprayed whatever a per-flow mode says (module
    /// rules), or 0: none; with `spray_digits`, its packets with payload take the path number
    /// in their source port.
    spray_proto: u8,
    spray_digits: bool,
    /// The choice takes the engine's state: a stateful mode, or a sprayed transport.
    stateful: bool,
}

/// What the stateful modes remember between packets, and the stream of every random choice
/// (module rules). The engine owns it; the tables stay read-only.
#[derive(Clone, Debug)]
pub struct RouteState {
    /// `routing.spray`: spraying, flowlet starts, adaptive ties. One stream for every switch,
    /// or one per node (by node id) in a run whose order must not depend on how the network is
    /// split ([`RouteState::per_switch`]).
    rngs: Vec<Rng>,
    /// `spray_round_robin`: per choice set, by where it starts in `Routes::global`, the index the
    /// next packet takes.
    rr: Vec<u32>,
    /// `flowlet`: per (switch, flow), by hash, the time of the flow's last packet there, the
    /// choice set it was chosen from (where it starts) and the index chosen in it.
    flowlets: HashMap<u64, (SimTime, u32, u32)>,
    /// `routing.flowlet_gap_us`.
    gap: SimDuration,
}

impl RouteState {
    /// The state of a run of `routes`: round-robin counters at an index drawn from `rng`, no
    /// flowlet yet, flowlets split by idle times above `gap`.
    pub fn new(routes: &Routes, mut rng: Rng, gap: SimDuration) -> RouteState {
        let rr = if routes.mode == RoutingMode::SprayRoundRobin {
            routes.group_len.iter().map(|&len| if len > 1 { rng.gen_range(0..len) } else { 0 }).collect()
        } else {
            Vec::new()
        };
        RouteState { rngs: vec![rng], rr, flowlets: HashMap::new(), gap }
    }

    /// The same state with a stream of its own for every node (`nodes` of them), from
    /// `stream(node)`: a switch's draws then depend on the packets it sees alone.
    pub fn per_switch(mut self, nodes: usize, stream: impl Fn(u64) -> Rng) -> RouteState {
        self.rngs = (0..nodes as u64).map(stream).collect();
        self
    }

    /// The stream of switch `sw`'s draws.
    #[inline]
    fn rng(&mut self, sw: u32) -> &mut Rng {
        let i = if self.rngs.len() == 1 { 0 } else { sw as usize };
        &mut self.rngs[i]
    }
}

/// How a fat-tree or leaf-spine builder lays out its switches, in node order: `edges` edge
/// switches (leaves), `per_pod` to a pod (a leaf-spine: 1), then `aggs` aggregation switches
/// (`per_pod` to a pod; a leaf-spine: none), then the cores (spines). Each aggregation switch
/// reaches the edges of its pod through its ports towards them, and each core every pod
/// through one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiers {
    pub edges: u32,
    pub per_pod: u32,
    pub aggs: u32,
}

/// The next hops of a tiered fabric towards the hosts under its edges, by tier instead of by
/// (switch, destination): an edge sends up (one choice set), an aggregation switch down to
/// the destination's edge when it is in its pod and up otherwise, a core down to the
/// destination's pod. A few kilobytes per switch where the compact table's row has one entry
/// per switch of the fabric; every entry equals the table's ([`Routes::with_tiers`]).
#[derive(Debug)]
struct Tiered {
    /// Rows below `edges` are edges, below `aggs_end` aggregation switches, the rest cores.
    edges: u32,
    aggs_end: u32,
    /// Per switch row.
    rows: Vec<TierRow>,
    /// Per edge row: its pod and its index in the pod (kept, so that a hop divides nothing).
    edge_at: Vec<(u32, u32)>,
    /// The down ports (global ids) of every aggregation switch (by edge index) and core (by
    /// pod), at each row's `down`.
    downs: Vec<u32>,
}

/// A switch row of [`Tiered`].
#[derive(Clone, Copy, Debug)]
struct TierRow {
    /// The `table` entry of the way up (the choice set of every up port); [`NO_ROUTE`] at a
    /// core or in a fabric of one pod.
    up: u32,
    /// Where the row's down ports start in `downs`.
    down: u32,
    /// The pod of an aggregation switch.
    pod: u32,
}

impl Tiered {
    /// The `table` entry of switch row `row` towards column `col`, when `col` is an edge's.
    #[inline(always)]
    fn entry(&self, row: u32, col: usize) -> Option<u32> {
        if col >= self.edges as usize {
            return None;
        }
        let r = &self.rows[row as usize];
        if row < self.edges {
            return Some(if row as usize == col { NO_ROUTE } else { r.up });
        }
        let (pod, index) = self.edge_at[col];
        Some(if row >= self.aggs_end {
            self.downs[(r.down + pod) as usize]
        } else if pod == r.pod {
            self.downs[(r.down + index) as usize]
        } else {
            r.up
        })
    }
}

/// Most (switch, node) pairs that get a [`Routes::direct`] table (16 MiB of it).
const DIRECT_MAX: usize = 1 << 22;

/// Fewest compact-table entries (1 MiB of them: a k = 32 fat-tree has 1.6 million, k = 16
/// 102,400) for which routes are read by tier ([`Routes::with_tiers`]). A smaller table stays
/// in a core's caches, and reading it takes fewer instructions than the tiers.
pub const TIERED_MIN: usize = 1 << 18;

/// A `direct` entry that leaves the choice to the packet.
const NO_PORT: u32 = u32::MAX;

/// How a packet heads for one node.
#[derive(Clone, Copy, Debug)]
struct Dest {
    /// Column of `table`.
    col: u32,
    /// The switch a host hangs off (then `col` is that switch's column), else [`NO_NODE`].
    attach: u32,
    /// The attachment's port to the host (global id).
    last_port: u32,
    /// Host number (index among hosts, in id order) for `dst_bits`; `u32::MAX` for a switch.
    host_no: u32,
    /// `host_no` modulo each of the first three lengths of choice sets met: the `dst_bits`
    /// index in a choice set of that length.
    mods: [u16; 3],
}

/// What the compact table says of a hop ([`Routes::lookup`]).
enum Lookup<'a> {
    /// The one next hop (global port id).
    Port(u32),
    /// A choice set (its `table` entry) and the destination to choose for.
    Choose(u32, &'a Dest),
    /// No route.
    None,
}

/// How a choice that is not a function of the packet's header is made: a draw from a stream
/// alone (a [`Rng`]: the per-flow modes and `spray`), or with the engine's state
/// ([`Stateful`]). The table walk is compiled once for each, so the per-flow modes pass one
/// pointer as they always did.
trait Chooser {
    /// The stateful modes' rules, and sprayed transports, apply.
    const STATEFUL: bool;
    /// The index in the choice set of routes `r` that starts at `start`, for `pkt` at switch
    /// `sw`, when the header does not decide it.
    fn index(&mut self, r: &Routes, sw: u32, start: usize, pkt: &Packet) -> usize;
}

impl Chooser for Rng {
    const STATEFUL: bool = false;
    #[inline(always)]
    fn index(&mut self, r: &Routes, _sw: u32, start: usize, _pkt: &Packet) -> usize {
        self.gen_range(0..r.group_len[start] as u64) as usize
    }
}

/// The engine's state, its ports (their queues) and the time: what the stateful modes read.
struct Stateful<'a> {
    st: &'a mut RouteState,
    ports: &'a Arena<Port>,
    now: SimTime,
}

impl Chooser for Stateful<'_> {
    const STATEFUL: bool = true;
    #[inline(always)]
    fn index(&mut self, r: &Routes, sw: u32, start: usize, pkt: &Packet) -> usize {
        r.choose_stateful(sw, start, pkt, self)
    }
}

/// Salts the flowlet table's key of a (switch, flow): the switch's id is xored in.
const FLOWLET_SALT: u64 = 0x666c_6f77_6c65_7400;

/// A `table` entry of several choices (see `Routes::table`).
const GROUP: u32 = 1 << 31;
const LEN_SHIFT: u32 = 29;
const START_MASK: u32 = (1 << LEN_SHIFT) - 1;
/// A `table` entry of a switch that cannot reach the column (or is it).
const NO_ROUTE: u32 = u32::MAX;
const NO_NODE: u32 = u32::MAX;
/// [`Routes::row`] of a host.
pub const NO_ROW: u32 = u32::MAX;
/// [`Routes::column`] of a destination whose column does not fit 16 bits.
pub const NO_COL: u16 = u16::MAX;

impl Routes {
    /// Shortest-path next hops of every switch towards every node.
    pub fn build(net: &Network, mode: RoutingMode) -> Routes {
        let n = net.nodes.len();
        let mut slot = vec![u32::MAX; n];
        let mut switch_ids = Vec::new();
        for (i, node) in net.nodes.iter().enumerate() {
            if node.kind == NodeKind::Switch {
                slot[i] = switch_ids.len() as u32;
                switch_ids.push(i as u32);
            }
        }
        let switches = switch_ids.len();
        let mut local = vec![0u16; net.ports.len()];
        for node in &net.nodes {
            for (i, &p) in node.ports.iter().enumerate() {
                local[p as usize] = i as u16;
            }
        }
        // Columns: switches first (row = column), then the hosts without an attachment.
        let mut dest = Vec::with_capacity(n);
        let mut lone_hosts = Vec::new();
        let mut hosts = 0u32;
        for (i, node) in net.nodes.iter().enumerate() {
            let d = match node.kind {
                NodeKind::Switch => Dest { col: slot[i], attach: NO_NODE, last_port: 0, host_no: u32::MAX, mods: [0; 3] },
                NodeKind::Host => {
                    hosts += 1;
                    let peer = match node.ports[..] {
                        [nic] => Some(&net.ports[nic as usize]).filter(|p| p.peer_switch),
                        _ => None,
                    };
                    match peer {
                        Some(p) => {
                            let at = p.peer_node;
                            let last_port = net.nodes[at as usize].ports[p.peer_port as usize];
                            Dest { col: slot[at as usize], attach: at, last_port, host_no: hosts - 1, mods: [0; 3] }
                        }
                        None => {
                            lone_hosts.push(i as u32);
                            let col = (switches + lone_hosts.len() - 1) as u32;
                            Dest { col, attach: NO_NODE, last_port: 0, host_no: hosts - 1, mods: [0; 3] }
                        }
                    }
                }
            };
            dest.push(d);
        }
        let cols = switches + lone_hosts.len();
        let mut b = Builder {
            table: vec![NO_ROUTE; switches * cols],
            cols,
            lens: Vec::new(),
            ports: Vec::new(),
            group_len: Vec::new(),
            global: Vec::new(),
            interned: vec![HashMap::new(); switches],
            last: vec![NO_ROUTE; switches],
            local: &local,
        };
        // Switch-to-switch links of every switch, in port order: (global port, peer row).
        let mut adj_start = Vec::with_capacity(switches + 1);
        let mut adj = Vec::new();
        for &sw in &switch_ids {
            adj_start.push(adj.len() as u32);
            for &p in &net.nodes[sw as usize].ports {
                let peer = slot[net.ports[p as usize].peer_node as usize];
                if peer != u32::MAX {
                    adj.push((p, peer));
                }
            }
        }
        adj_start.push(adj.len() as u32);
        // One BFS per switch over the switch links. A switch's next hops are its neighbours one
        // closer; when it is dequeued at distance d, every node at d - 1 has its distance.
        let mut dist = vec![u32::MAX; switches];
        let mut queue = VecDeque::new();
        let mut choice = Vec::new();
        for col in 0..switches {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[col] = 0;
            queue.clear();
            queue.push_back(col as u32);
            while let Some(u) = queue.pop_front() {
                let du = dist[u as usize];
                choice.clear();
                for &(p, v) in &adj[adj_start[u as usize] as usize..adj_start[u as usize + 1] as usize] {
                    let dv = dist[v as usize];
                    if dv == u32::MAX {
                        dist[v as usize] = du + 1;
                        queue.push_back(v);
                    } else if dv + 1 == du {
                        choice.push(p);
                    }
                }
                if u as usize != col {
                    b.set(u as usize, col, &choice);
                }
            }
        }
        // The hosts without an attachment: a BFS over every link, as hosts relay nothing.
        let mut dist = vec![u32::MAX; n];
        for (k, &dst) in lone_hosts.iter().enumerate() {
            let dst = dst as usize;
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push_back(dst as u32);
            while let Some(u) = queue.pop_front() {
                let u = u as usize;
                if u != dst && net.nodes[u].kind == NodeKind::Host {
                    continue;
                }
                for &p in &net.nodes[u].ports {
                    let v = net.ports[p as usize].peer_node as usize;
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u] + 1;
                        queue.push_back(v as u32);
                    }
                }
            }
            for (row, &s) in switch_ids.iter().enumerate() {
                let s = s as usize;
                if dist[s] == u32::MAX {
                    continue;
                }
                choice.clear();
                for &p in &net.nodes[s].ports {
                    let v = net.ports[p as usize].peer_node as usize;
                    let relays = v == dst || net.nodes[v].kind == NodeKind::Switch;
                    if relays && dist[v] != u32::MAX && dist[v] + 1 == dist[s] {
                        choice.push(p);
                    }
                }
                b.set(row, switches + k, &choice);
            }
        }
        let Builder { table, lens, ports, group_len, global, .. } = b;
        for d in &mut dest {
            for (m, &len) in d.mods.iter_mut().zip(&lens) {
                *m = (d.host_no % len) as u16;
            }
        }
        let packet_col = dest.iter().map(|d| u16::try_from(d.col).map_or(NO_COL, |c| c.min(NO_COL))).collect();
        let mut r = Routes { slot, dest, packet_col, cols, table, ports, group_len, global, local, mode, hash_base: 0, direct: Vec::new(), tiered: None, spray_proto: 0, spray_digits: false, stateful: mode.stateful() };
        r.direct = r.direct_table();
        r
    }

    /// The [`Routes::direct`] table of a small fabric (empty past [`DIRECT_MAX`] pairs).
    fn direct_table(&self) -> Vec<u32> {
        let n = self.dest.len();
        let switches: Vec<(usize, u32)> = (0..n).filter(|&i| self.slot[i] != u32::MAX).map(|i| (i, self.slot[i])).collect();
        if switches.len().saturating_mul(n) > DIRECT_MAX {
            return Vec::new();
        }
        let mut direct = vec![NO_PORT; switches.len() * n];
        for &(sw, row) in &switches {
            for dst in 0..n {
                let e = self.entry(row, sw as u32, dst as u32);
                direct[row as usize * n + dst] = if e & GROUP == 0 {
                    e
                } else if e != NO_ROUTE && self.mode == RoutingMode::DstBits {
                    let start = (e & START_MASK) as usize;
                    self.global[start + self.dest[dst].host_no as usize % self.group_len[start] as usize]
                } else {
                    NO_PORT
                };
            }
        }
        direct
    }

    /// The same routes, read by tier towards the hosts of a fabric laid out as `tiers` says
    /// (see [`Tiers`]) when its compact table has at least [`TIERED_MIN`] entries and the
    /// layout holds: every (switch, edge) entry read by tier must equal the table's, else the
    /// routes stay as they are. Paths are the same either way; a hop reads a few kilobytes per
    /// switch instead of a table of switches x switches that no longer fits a core's caches.
    pub fn with_tiers(self, tiers: Tiers) -> Routes {
        if self.table.len() < TIERED_MIN {
            return self;
        }
        self.read_by_tier(tiers)
    }

    /// [`Routes::with_tiers`] at any size.
    fn read_by_tier(mut self, tiers: Tiers) -> Routes {
        self.tiered = self.tiered_from(tiers);
        self
    }

    /// Routes are read by tier ([`Routes::with_tiers`]).
    pub fn tiered(&self) -> bool {
        self.tiered.is_some()
    }

    /// The [`Tiered`] form of the table, if the fabric is laid out as `tiers` says.
    fn tiered_from(&self, t: Tiers) -> Option<Tiered> {
        let switches = self.table.len().checked_div(self.cols)?;
        let aggs_end = t.edges.checked_add(t.aggs)?;
        if t.per_pod == 0 || t.edges == 0 || !t.edges.is_multiple_of(t.per_pod) || !t.aggs.is_multiple_of(t.per_pod) || aggs_end as usize >= switches {
            return None;
        }
        let (edges, pods) = (t.edges as usize, t.edges / t.per_pod);
        let at = |row: usize, col: usize| self.table[row * self.cols + col];
        let edge_at: Vec<(u32, u32)> = (0..t.edges).map(|c| (c / t.per_pod, c % t.per_pod)).collect();
        // an edge of another pod than `pod`, to read the way up
        let other = |pod: u32| (pods > 1).then(|| (((pod + 1) % pods) * t.per_pod) as usize);
        let mut rows = Vec::with_capacity(switches);
        let mut downs = Vec::new();
        for row in 0..switches {
            let r = if row < edges {
                TierRow { up: at(row, (row + 1) % edges), down: 0, pod: 0 }
            } else if row < aggs_end as usize {
                let pod = (row - edges) as u32 / t.per_pod;
                let down = downs.len() as u32;
                downs.extend((0..t.per_pod).map(|i| at(row, (pod * t.per_pod + i) as usize)));
                TierRow { up: other(pod).map_or(NO_ROUTE, |c| at(row, c)), down, pod }
            } else {
                let down = downs.len() as u32;
                downs.extend((0..pods).map(|pod| at(row, (pod * t.per_pod) as usize)));
                TierRow { up: NO_ROUTE, down, pod: 0 }
            };
            rows.push(r);
        }
        let tiered = Tiered { edges: t.edges, aggs_end, rows, edge_at, downs };
        let agrees = (0..switches).all(|row| (0..edges).all(|col| tiered.entry(row as u32, col) == Some(at(row, col))));
        agrees.then_some(tiered)
    }

    /// The same tables, with the packets of protocol `proto` sprayed under the per-flow modes
    /// (module rules): by the path number in their source port (`digits`, for packets with
    /// payload) or at random.
    pub fn with_sprayed(mut self, proto: Proto, digits: bool) -> Routes {
        self.spray_proto = proto as u8;
        self.spray_digits = digits;
        self.stateful = true;
        self
    }

    /// Whether packets of `proto` are sprayed ([`Routes::with_sprayed`]).
    pub fn sprays(&self, proto: Proto) -> bool {
        self.spray_proto == proto as u8
    }

    /// The same tables with the flow hash of `ecmp` and `symmetric` seeded by `seed` (at most
    /// 2^56 - 1; 0 is the unseeded hash): a new, independent choice of paths for every seed.
    pub fn with_hash_seed(mut self, seed: u64) -> Routes {
        debug_assert!(seed < 1 << 56);
        self.hash_base = seed << 8;
        self
    }

    /// Whether some switch has several next hops towards some node (a path to choose).
    pub fn has_choices(&self) -> bool {
        !self.global.is_empty()
    }

    /// How switches pick among equal-cost next hops (fixed when the tables are built).
    pub fn mode(&self) -> RoutingMode {
        self.mode
    }

    /// The `table` entry of switch `sw` (row `row`) towards node `target`.
    #[inline]
    fn entry(&self, row: u32, sw: u32, target: u32) -> u32 {
        let d = &self.dest[target as usize];
        if d.attach == sw {
            d.last_port
        } else {
            self.table[row as usize * self.cols + d.col as usize]
        }
    }

    /// The equal-cost next hops (local port indices) of switch `sw` towards `dst`.
    #[inline]
    pub fn choices(&self, sw: u32, dst: u32) -> &[u16] {
        let row = self.slot[sw as usize];
        if row == u32::MAX {
            return &[];
        }
        match self.entry(row, sw, dst) {
            NO_ROUTE => &[],
            e if e & GROUP == 0 => std::slice::from_ref(&self.local[e as usize]),
            e => {
                let (start, len) = self.group(e);
                &self.ports[start..start + len]
            }
        }
    }

    /// The local port switch `sw` sends `pkt` out of, or `None` if `dst` is unreachable.
    /// Clears `pkt.via` when `sw` is the waypoint.
    #[inline]
    pub fn next_port(&self, sw: u32, pkt: &mut Packet, rng: &mut Rng) -> Option<u16> {
        self.pick(sw, pkt, rng).map(|p| self.local[p as usize])
    }

    /// Like [`Routes::next_port`], but the port's global id (what the engine needs: no look-up
    /// in the node's port list).
    #[inline]
    pub fn next_global_port(&self, sw: u32, pkt: &mut Packet, rng: &mut Rng) -> Option<u32> {
        let (row, col) = (self.row(sw), self.column(pkt.dst));
        if pkt.via == NO_VIA && row != NO_ROW {
            if let Some(p) = self.direct_hit(row, pkt.dst) {
                return Some(p);
            }
        }
        self.next_global_port_table(sw, row, col, pkt, rng)
    }

    /// The row of node `node` in the tables: a switch's number among switches, [`NO_ROW`] for
    /// a host (which the engine reads as "deliver, do not route").
    #[inline]
    pub fn row(&self, node: u32) -> u32 {
        self.slot[node as usize]
    }

    /// The column of `dst` in the tables ([`NO_COL`] beyond `u16::MAX - 1` columns), which
    /// the engine keeps with a packet from its emission on, so that
    /// [`Routes::next_global_port_in`] reads a next hop in one load.
    #[inline]
    pub fn column(&self, dst: u32) -> u16 {
        self.packet_col[dst as usize]
    }

    /// [`Routes::next_global_port`] at switch `sw` of row `row` for a packet whose destination
    /// has column `col` ([`Routes::row`], [`Routes::column`]). The same choice; a packet without
    /// waypoint whose choice does not depend on the packet (one choice, or any number under
    /// `dst_bits`) takes a short cut ([`Routes::next_direct`]), the rest the table walk
    /// ([`Routes::next_global_port_walk`]). `st`, `ports` and `now` serve the stateful modes and
    /// sprayed transports (module rules), which take a table walk of their own.
    #[allow(clippy::too_many_arguments)]
    pub fn next_global_port_in(&self, sw: u32, row: u32, col: u16, pkt: &mut Packet, st: &mut RouteState, ports: &Arena<Port>, now: SimTime) -> Option<u32> {
        match self.next_direct(row, pkt) {
            Some(p) => Some(p),
            None => self.next_global_port_walk(sw, row, col, pkt, st, ports, now),
        }
    }

    /// The short cut of [`Routes::next_global_port_in`]: the direct table's next hop of a
    /// packet without waypoint at switch row `row`, when its choice does not depend on the
    /// packet.
    ///
    /// Always inlined: the engine's `Sim::run` is large enough that LLVM stopped inlining a
    /// plain `#[inline]` here (one call per hop, about 0.8 % of a dumbbell's instructions). The
    /// engine calls the walk out of line, with the fewest arguments it can.
    #[inline(always)]
    pub fn next_direct(&self, row: u32, pkt: &Packet) -> Option<u32> {
        debug_assert!(row == NO_ROW || (row as usize) < self.slot.len());
        if pkt.via == NO_VIA && row != NO_ROW {
            return self.direct_hit(row, pkt.dst);
        }
        None
    }

    /// [`Routes::next_global_port_in`] past the direct table, by the routing mode: the
    /// stateless walk, or the stateful one.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn next_global_port_walk(&self, sw: u32, row: u32, col: u16, pkt: &mut Packet, st: &mut RouteState, ports: &Arena<Port>, now: SimTime) -> Option<u32> {
        debug_assert!(row == self.row(sw) && (col == self.column(pkt.dst) || col == NO_COL));
        if self.stateful {
            return self.next_global_port_table(sw, row, col, pkt, &mut Stateful { st, ports, now });
        }
        self.next_global_port_table(sw, row, col, pkt, st.rng(sw))
    }

    /// The direct table's next hop at switch row `row` towards node `dst`, when there is a
    /// direct table and the hop does not depend on the packet.
    #[inline(always)]
    fn direct_hit(&self, row: u32, dst: u32) -> Option<u32> {
        if self.direct.is_empty() {
            return None;
        }
        let p = self.direct[row as usize * self.dest.len() + dst as usize];
        (p != NO_PORT).then_some(p)
    }

    /// [`Routes::next_global_port_in`] past the direct table: the compact table, a choice set,
    /// or a waypoint.
    #[inline]
    fn next_global_port_table<C: Chooser>(&self, sw: u32, row: u32, col: u16, pkt: &mut Packet, ch: &mut C) -> Option<u32> {
        if pkt.via == NO_VIA {
            if row == NO_ROW {
                return None;
            }
            return match self.lookup(sw, row, col, pkt.dst) {
                Lookup::Port(p) => Some(p),
                Lookup::Choose(e, d) => Some(self.choose(sw, e, d, pkt, ch)),
                Lookup::None => None,
            };
        }
        self.pick(sw, pkt, ch)
    }

    /// The global id of the chosen next hop (a packet with a waypoint).
    #[inline]
    fn pick<C: Chooser>(&self, sw: u32, pkt: &mut Packet, ch: &mut C) -> Option<u32> {
        if pkt.via == sw {
            pkt.via = NO_VIA;
        }
        let target = if pkt.via != NO_VIA { pkt.via } else { pkt.dst };
        let row = self.slot[sw as usize];
        if row == u32::MAX {
            return None;
        }
        let e = self.entry(row, sw, target);
        if e & GROUP == 0 {
            return Some(e);
        }
        if e == NO_ROUTE {
            return None;
        }
        Some(self.choose(sw, e, &self.dest[pkt.dst as usize], pkt, ch))
    }

    /// The next hop among the choice set of entry `e` (several choices) for `pkt`, whose
    /// destination is `d`, by the routing mode.
    #[inline(always)]
    fn choose<C: Chooser>(&self, sw: u32, e: u32, d: &Dest, pkt: &Packet, ch: &mut C) -> u32 {
        let start = (e & START_MASK) as usize;
        let i = match if C::STATEFUL && pkt.proto as u8 == self.spray_proto { None } else { self.index(e, d, pkt, pkt.hops) } {
            Some(i) => i,
            None => ch.index(self, sw, start, pkt),
        };
        self.global[start + i]
    }

    /// The index in the choice set that starts at `start` of a packet whose choice is not a
    /// function of its header (module rules): a sprayed transport's, or the stateful modes'.
    #[inline(never)]
    fn choose_stateful(&self, sw: u32, start: usize, pkt: &Packet, s: &mut Stateful) -> usize {
        let len = self.group_len[start];
        let (st, ports, now) = (&mut *s.st, s.ports, s.now);
        if pkt.proto as u8 == self.spray_proto && !self.mode.per_packet() {
            if self.spray_digits && pkt.payload > 0 {
                // the path number's digit for this hop, in base the choice set's length
                let place = (len as u64).saturating_pow(pkt.hops.saturating_sub(1) as u32);
                return (pkt.sport as u64 / place % len as u64) as usize;
            }
            return st.rng(sw).gen_range(0..len as u64) as usize;
        }
        match self.mode {
            RoutingMode::SprayRoundRobin => {
                let c = &mut st.rr[start];
                let i = *c;
                *c = if i + 1 == len { 0 } else { i + 1 };
                i as usize
            }
            RoutingMode::Flowlet => {
                let key = hash_flow(pkt.flow_key(), FLOWLET_SALT ^ sw as u64);
                let gap = st.gap;
                match st.flowlets.get_mut(&key) {
                    Some((last, set, i)) if *set == start as u32 && now.saturating_since(*last) <= gap => {
                        *last = now;
                        *i as usize
                    }
                    _ => {
                        let i = st.rng(sw).gen_range(0..len as u64) as usize;
                        st.flowlets.insert(key, (now, start as u32, i as u32));
                        i
                    }
                }
            }
            RoutingMode::Adaptive => {
                let set = &self.global[start..start + len as usize];
                let load = |p: u32| if (p as usize) < ports.len() { ports[p as usize].queue.len_bytes() } else { 0 };
                let least = set.iter().map(|&p| load(p)).min().unwrap_or(0);
                let ties = set.iter().filter(|&&p| load(p) == least).count();
                let k = if ties > 1 { st.rng(sw).gen_range(0..ties as u64) as usize } else { 0 };
                set.iter().enumerate().filter(|&(_, &p)| load(p) == least).nth(k).map_or(0, |(i, _)| i)
            }
            _ => st.rng(sw).gen_range(0..len as u64) as usize,
        }
    }

    /// The index in the choice set of `table` entry `e` that every mode but `spray` picks for
    /// `pkt` at hop count `hops` (`None` under `spray`: a draw).
    #[inline(always)]
    fn index(&self, e: u32, d: &Dest, pkt: &Packet, hops: u8) -> Option<usize> {
        let start = (e & START_MASK) as usize;
        Some(match self.mode {
            // the host's index in sets of the first three lengths, else a division
            RoutingMode::DstBits => match (e & !GROUP) >> LEN_SHIFT {
                3 => d.host_no as usize % self.group_len[start] as usize,
                l => d.mods[l as usize] as usize,
            },
            RoutingMode::Ecmp => (hash_flow(pkt.flow_key(), self.hash_base | hops as u64) % self.group_len[start] as u64) as usize,
            RoutingMode::Symmetric => (hash_flow(unordered_key(pkt), self.hash_base | hops as u64) % self.group_len[start] as u64) as usize,
            RoutingMode::Spray | RoutingMode::SprayRoundRobin | RoutingMode::Flowlet | RoutingMode::Adaptive => return None,
        })
    }

    /// The global id of the port switch `sw` (row `row`) will send `pkt` out of when it
    /// arrives there, when that takes no draw (a hint for prefetching: `None` under `spray`,
    /// with a waypoint, or without a route). `pkt.hops` is read as it will be on arrival.
    #[inline]
    pub fn hint(&self, sw: u32, row: u32, col: u16, pkt: &Packet) -> Option<u32> {
        if pkt.via != NO_VIA || row == NO_ROW {
            return None;
        }
        if let Some(p) = self.direct_hit(row, pkt.dst) {
            return Some(p);
        }
        match self.lookup(sw, row, col, pkt.dst) {
            Lookup::Port(p) => Some(p),
            Lookup::Choose(e, d) => self.index(e, d, pkt, pkt.hops.saturating_add(1)).map(|i| self.global[(e & START_MASK) as usize + i]),
            Lookup::None => None,
        }
    }

    /// The compact table (or its tiered form) at switch `sw` (row `row`, a switch's) towards
    /// node `dst` of column `col` ([`NO_COL`]: read from its `Dest`).
    #[inline(always)]
    fn lookup(&self, sw: u32, row: u32, col: u16, dst: u32) -> Lookup<'_> {
        let col = if col != NO_COL { col as usize } else { self.dest[dst as usize].col as usize };
        let e = match self.tiered.as_ref().and_then(|t| t.entry(row, col)) {
            Some(e) => e,
            None => self.table[row as usize * self.cols + col],
        };
        if e & GROUP == 0 {
            return Lookup::Port(e);
        }
        // the attachment's own entry is NO_ROUTE: a host's last hop is in its `Dest`
        let d = &self.dest[dst as usize];
        if d.attach == sw {
            return Lookup::Port(d.last_port);
        }
        if e == NO_ROUTE {
            return Lookup::None;
        }
        Lookup::Choose(e, d)
    }

    /// Where the choice set of a `table` entry of several choices starts, and its length.
    #[inline]
    fn group(&self, e: u32) -> (usize, usize) {
        let start = (e & START_MASK) as usize;
        (start, self.group_len[start] as usize)
    }

    /// The first (switch, destination) from which some sequence of next hops comes back to a
    /// switch it has passed (a routing loop), or `None`. Checked for every destination, over
    /// every equal-cost choice, so no flow hash, spray draw or waypoint can find a loop: a
    /// waypoint's two legs are each loop-free and the waypoint is cleared on arrival.
    /// Shortest-path tables cannot loop (each hop is one closer); this verifies the tables
    /// as built rather than trusting that argument (one depth-first pass per column: a host's
    /// routes are its attachment's but for the last hop, which delivers).
    pub fn first_loop(&self, net: &Network) -> Option<(u32, u32)> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let switches = self.table.len().checked_div(self.cols).unwrap_or(0);
        // the row of the switch each port leads to (u32::MAX: a host, which delivers)
        let to: Vec<u32> = net.ports.iter().map(|p| self.slot[p.peer_node as usize]).collect();
        let mut state = vec![NEW; switches];
        // (row, its one next hop or NO_ROUTE, then global[next..end])
        let mut stack: Vec<(u32, u32, u32, u32)> = Vec::new();
        // the looping switch of each column checked so far
        let mut seen: Vec<Option<Option<u32>>> = vec![None; self.cols];
        for dst in 0..self.dest.len() {
            let col = self.dest[dst].col as usize;
            let target = match self.dest[dst].attach {
                NO_NODE => dst,
                at => at as usize,
            };
            let target_row = self.slot[target];
            let frame = |row: u32| match self.table[row as usize * self.cols + col] {
                e if e & GROUP == 0 => (row, e, 0, 0),
                NO_ROUTE => (row, NO_ROUTE, 0, 0),
                e => {
                    let (start, len) = self.group(e);
                    (row, NO_ROUTE, start as u32, (start + len) as u32)
                }
            };
            let found = *seen[col].get_or_insert_with(|| {
                state.iter_mut().for_each(|s| *s = NEW);
                for root in 0..switches as u32 {
                    if state[root as usize] != NEW || root == target_row {
                        continue;
                    }
                    state[root as usize] = OPEN;
                    stack.push(frame(root));
                    while let Some(top) = stack.last_mut() {
                        let p = if top.1 != NO_ROUTE {
                            std::mem::replace(&mut top.1, NO_ROUTE)
                        } else if top.2 < top.3 {
                            top.2 += 1;
                            self.global[top.2 as usize - 1]
                        } else {
                            state[top.0 as usize] = DONE;
                            stack.pop();
                            continue;
                        };
                        let peer = to[p as usize];
                        if peer == u32::MAX || peer == target_row {
                            continue; // delivered: hosts never forward
                        }
                        match state[peer as usize] {
                            OPEN => {
                                stack.clear();
                                return Some(net.ports[p as usize].peer_node);
                            }
                            NEW => {
                                state[peer as usize] = OPEN;
                                stack.push(frame(peer));
                            }
                            _ => {}
                        }
                    }
                }
                None
            });
            if let Some(sw) = found {
                return Some((sw, dst as u32));
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

/// The tables while [`Routes::build`] fills them.
struct Builder<'a> {
    table: Vec<u32>,
    cols: usize,
    lens: Vec<u32>,
    ports: Vec<u16>,
    group_len: Vec<u32>,
    global: Vec<u32>,
    /// Per switch row: the entries of its choice sets by their global ports.
    interned: Vec<HashMap<Box<[u32]>, u32>>,
    /// Per switch row: the choice set it was given last (most columns of a row share a few).
    last: Vec<u32>,
    local: &'a [u16],
}

impl Builder<'_> {
    /// Records the next hops (global ids, in port order) of switch `row` towards column `col`.
    fn set(&mut self, row: usize, col: usize, choice: &[u32]) {
        let e = match choice {
            [] => NO_ROUTE,
            &[p] => p,
            _ => {
                let last = self.last[row];
                let start = (last & START_MASK) as usize;
                if last != NO_ROUTE && self.global[start..start + self.group_len[start] as usize] == *choice {
                    last
                } else if let Some(&e) = self.interned[row].get(choice) {
                    e
                } else {
                    let (start, len) = (self.global.len() as u32, choice.len() as u32);
                    assert!(start + len < START_MASK, "routing: too many choice sets");
                    let l = match self.lens.iter().position(|&l| l == len) {
                        Some(l) => l as u32,
                        None if self.lens.len() < 3 => {
                            self.lens.push(len);
                            self.lens.len() as u32 - 1
                        }
                        None => 3,
                    };
                    let e = GROUP | l << LEN_SHIFT | start;
                    self.global.extend_from_slice(choice);
                    self.ports.extend(choice.iter().map(|&p| self.local[p as usize]));
                    self.group_len.push(len);
                    self.group_len.extend(std::iter::repeat_n(0, choice.len() - 1));
                    self.interned[row].insert(choice.into(), e);
                    e
                }
            }
        };
        if e & GROUP != 0 && e != NO_ROUTE {
            self.last[row] = e;
        }
        self.table[row * self.cols + col] = e;
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
        // (h1's routes are those of its attachment s3, node 5, but for the last hop)
        let at = r.slot[3] as usize * r.cols + r.dest[1].col as usize;
        assert_eq!(r.choices(3, 1).len(), 1);
        let back = net.nodes[3].ports.iter().position(|&p| net.ports[p as usize].peer_node == 2).unwrap();
        r.table[at] = net.nodes[3].ports[back];
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
    fn the_direct_table_and_the_hint_give_the_choice_of_the_full_path() {
        // Two diamonds' worth of choices: every switch, destination, mode, waypoint or none,
        // several flows and hop counts; the same random stream on both sides (spray).
        let net = diamond();
        for mode in [RoutingMode::Ecmp, RoutingMode::Symmetric, RoutingMode::Spray, RoutingMode::DstBits] {
            let r = Routes::build(&net, mode);
            // the same tables without the direct one: the compact path of `hint`
            let mut compact = Routes::build(&net, mode);
            compact.direct = Vec::new();
            let mut a = dcfair_core::rng::Streams::new(3).stream("t", 0);
            let mut b = a.clone();
            let mut direct = 0;
            let mut hinted = 0;
            for sw in 2..6u32 {
                for dst in 0..6u32 {
                    for via in [NO_VIA, 3, 4] {
                        for (sport, hops) in [(1, 0), (2, 1), (9, 2), (40, 3)] {
                            let p = Packet { via, hops, ..pkt(1 - dst.min(1), dst, sport) };
                            let (mut p1, mut p2) = (p.clone(), p);
                            let got = r.next_global_port(sw, &mut p1, &mut a);
                            let want = r.pick(sw, &mut p2, &mut b);
                            assert_eq!(got, want, "{mode:?} at {sw} to {dst} via {via}");
                            assert_eq!(p1, p2);
                            if mode != RoutingMode::Spray {
                                // a column too wide for the packet's record: read from its `Dest`
                                let mut p3 = Packet { via, hops, ..pkt(1 - dst.min(1), dst, sport) };
                                let mut st = RouteState::new(&r, b.clone(), SimDuration::from_us(1));
                                assert_eq!(r.next_global_port_in(sw, r.row(sw), NO_COL, &mut p3, &mut st, &Arena::default(), SimTime::ZERO), want);
                            }
                            // the hint, taken before arrival (one hop fewer), names the same port
                            if hops > 0 {
                                let before = Packet { via, hops: hops - 1, ..pkt(1 - dst.min(1), dst, sport) };
                                for routes in [&r, &compact] {
                                    let hint = routes.hint(sw, routes.row(sw), routes.column(dst), &before);
                                    if let Some(port) = hint {
                                        assert_eq!(Some(port), want, "{mode:?} hint at {sw} to {dst}");
                                        hinted += 1;
                                    } else {
                                        assert!(via != NO_VIA || mode == RoutingMode::Spray || want.is_none(), "{mode:?}: no hint at {sw} to {dst}");
                                    }
                                }
                            }
                            let e = r.entry(r.slot[sw as usize], sw, dst);
                            direct += (via == NO_VIA && (e & GROUP == 0 || mode == RoutingMode::DstBits && e != NO_ROUTE)) as u32;
                        }
                    }
                }
            }
            assert!(direct > 0, "{mode:?}: some choices are direct");
            assert!(hinted > 0, "{mode:?}: some choices are hinted");
        }
    }

    // --- the compact tables hold what one search per destination finds -------------------------
    /// The choice sets of every (switch, node) as the straightforward algorithm finds them: one
    /// breadth-first search per destination over every link, hosts relaying nothing.
    fn reference(net: &Network) -> Vec<Vec<Vec<u16>>> {
        let n = net.nodes.len();
        let mut out = vec![vec![Vec::new(); n]; n];
        for dst in 0..n {
            let mut dist = vec![u32::MAX; n];
            dist[dst] = 0;
            let mut queue = VecDeque::from([dst]);
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
                for (local, &p) in node.ports.iter().enumerate() {
                    let v = net.ports[p as usize].peer_node as usize;
                    let relays = v == dst || net.nodes[v].kind == NodeKind::Switch;
                    if relays && dist[v] != u32::MAX && dist[v] + 1 == dist[s] {
                        out[s][dst].push(local as u16);
                    }
                }
            }
        }
        out
    }

    /// Every choice set equals the reference's, in the same order, and `dst_bits` picks the
    /// reference's port by host number; no loop is found.
    fn same_as_reference(net: &Network) {
        let want = reference(net);
        let host_no: Vec<u64> = {
            let mut h = 0;
            net.nodes.iter().map(|nd| if nd.kind == NodeKind::Host { h += 1; h - 1 } else { u32::MAX as u64 }).collect()
        };
        let r = Routes::build(net, RoutingMode::DstBits);
        let mut rng = dcfair_core::rng::Streams::new(1).stream("t", 0);
        for sw in 0..net.nodes.len() as u32 {
            for dst in 0..net.nodes.len() as u32 {
                let w = &want[sw as usize][dst as usize];
                assert_eq!(r.choices(sw, dst), &w[..], "{sw} -> {dst}");
                if net.nodes[sw as usize].kind == NodeKind::Switch {
                    let got = r.next_global_port(sw, &mut pkt(0, dst, 1), &mut rng);
                    let pick = (!w.is_empty()).then(|| net.nodes[sw as usize].ports[w[(host_no[dst as usize] % w.len() as u64) as usize] as usize]);
                    assert_eq!(got, pick, "dst_bits {sw} -> {dst}");
                }
            }
        }
        assert_eq!(r.first_loop(net), None);
    }

    #[test]
    fn the_tables_match_one_search_per_destination() {
        same_as_reference(&diamond());
        // hosts linked to a host, to nothing, to two switches; parallel links; a part cut off
        let mut net = diamond();
        let s: Vec<u32> = (2..6).collect();
        let twice = net.add_node(NodeKind::Host, "twice".into());
        let pair = net.add_node(NodeKind::Host, "pair".into());
        net.add_node(NodeKind::Host, "alone".into());
        let far = net.add_node(NodeKind::Switch, "far".into());
        let behind = net.add_node(NodeKind::Host, "behind".into());
        net.connect(twice, s[1], link(), link(), q(), q());
        net.connect(twice, s[3], link(), link(), q(), q());
        net.connect(pair, twice, link(), link(), q(), q());
        net.connect(s[0], s[2], link(), link(), q(), q());
        net.connect(far, behind, link(), link(), q(), q());
        same_as_reference(&net);
        // choice sets of 2, 3, 4 and 5 parallel links: more lengths than `Dest::mods` holds
        let mut net = Network::default();
        let s: Vec<u32> = (0..5).map(|i| net.add_node(NodeKind::Switch, format!("s{i}"))).collect();
        for (i, &sw) in s.iter().enumerate() {
            let h = net.add_node(NodeKind::Host, format!("h{i}"));
            net.connect(sw, h, link(), link(), q(), q());
            for _ in 0..i + 1 {
                if i > 0 {
                    net.connect(s[0], sw, link(), link(), q(), q());
                }
            }
        }
        same_as_reference(&net);
        // a random mesh of switches with hosts behind them
        let mut rng = dcfair_core::rng::Streams::new(7).stream("mesh", 0);
        for _ in 0..20 {
            let mut net = Network::default();
            let sw: Vec<u32> = (0..8).map(|i| net.add_node(NodeKind::Switch, format!("s{i}"))).collect();
            for i in 0..12 {
                let h = net.add_node(NodeKind::Host, format!("h{i}"));
                net.connect(sw[rng.gen_range(0..8)], h, link(), link(), q(), q());
            }
            for _ in 0..12 {
                let (a, b) = (rng.gen_range(0..8), rng.gen_range(0..8));
                if a != b {
                    net.connect(sw[a], sw[b], link(), link(), q(), q());
                }
            }
            same_as_reference(&net);
        }
    }

    /// A fat-tree or leaf-spine built from a scenario's `[topology]` table.
    fn fabric(topo: &str) -> crate::topo::Built {
        let rates = "host_rate_mbps = 1000.0\nfabric_rate_mbps = 1000.0\nlink_delay_us = 1.0\n";
        let text = format!("name = \"t\"\n[sim]\nduration_s = 1.0\n[flows]\ncount = 1\nsrc = \"h0\"\ndst = \"h1\"\n[topology]\n{topo}\n{rates}");
        let sc = crate::scenario::load(&text, "t.toml", &[]).unwrap();
        crate::topo::build(&sc, dcfair_core::rng::Streams::new(1)).unwrap()
    }

    #[test]
    fn routing_by_tier_takes_the_tables_hops_and_a_layout_that_does_not_hold_is_not_used() {
        for topo in ["kind = \"fat_tree\"\nk = 4", "kind = \"fat_tree\"\nk = 6", "kind = \"fat_tree\"\nk = 8", "kind = \"leaf_spine\"\nleaves = 5\nspines = 3\nhosts_per_leaf = 4", "kind = \"leaf_spine\"\nleaves = 1\nspines = 2\nhosts_per_leaf = 3"] {
            let built = fabric(topo);
            let net = &built.net;
            let tiers = built.tiers.expect("a fabric says how it lays out its tiers");
            // no switch; more edges than switches; the first core taken for an aggregation
            // switch (which holds where there are fewer than three pods)
            let mut wrong = vec![Tiers { edges: 0, ..tiers }, Tiers { edges: 1_000_000, ..tiers }];
            if tiers.edges / tiers.per_pod >= 3 {
                wrong.push(Tiers { aggs: tiers.aggs + tiers.per_pod, ..tiers });
            }
            // another layout may hold for the columns it reads by tier (it is checked entry by entry)
            let other = Tiers { edges: tiers.edges / tiers.per_pod, per_pod: 1, aggs: 0 };
            assert!(Routes::build(net, RoutingMode::Ecmp).read_by_tier(tiers).tiered(), "{topo}");
            for t in wrong {
                assert!(!Routes::build(net, RoutingMode::Ecmp).read_by_tier(t).tiered(), "{topo}: {t:?}");
            }
            for mode in [RoutingMode::Ecmp, RoutingMode::Symmetric, RoutingMode::Spray, RoutingMode::DstBits] {
                let table = Routes::build(net, mode).with_hash_seed(3);
                for t in [tiers, other] {
                    let tiered = Routes::build(net, mode).with_hash_seed(3).read_by_tier(t);
                    let mut rngs = [dcfair_core::rng::Streams::new(1).stream("t", 0), dcfair_core::rng::Streams::new(1).stream("t", 0)];
                    for sw in (0..net.nodes.len() as u32).filter(|&n| net.nodes[n as usize].kind == NodeKind::Switch) {
                        for dst in 0..net.nodes.len() as u32 {
                            for sport in 1..4 {
                                let mut p = pkt(0, dst, sport);
                                p.hops = sport as u8;
                                let (row, col) = (table.row(sw), table.column(dst));
                                // past the direct table, which routing by tier does not replace
                                let want = table.next_global_port_table(sw, row, col, &mut p.clone(), &mut rngs[0]);
                                let got = tiered.next_global_port_table(sw, row, col, &mut p.clone(), &mut rngs[1]);
                                assert_eq!(got, want, "{topo} {t:?} {mode:?} {sw} -> {dst}");
                                assert_eq!(tiered.hint(sw, row, col, &p), table.hint(sw, row, col, &p), "{topo} {t:?} {mode:?} hint {sw} -> {dst}");
                            }
                        }
                    }
                }
            }
        }
        assert!(!Routes::build(&diamond(), RoutingMode::Ecmp).read_by_tier(Tiers { edges: 3, per_pod: 1, aggs: 0 }).tiered());
        // a table that fits a core's caches is read as a table
        let built = fabric("kind = \"fat_tree\"\nk = 8");
        let r = Routes::build(&built.net, RoutingMode::Ecmp);
        assert!(r.table.len() < TIERED_MIN && !r.with_tiers(built.tiers.unwrap()).tiered());
    }

    #[test]
    fn the_fabric_tables_match_one_search_per_destination() {
        for topo in ["kind = \"fat_tree\"\nk = 6", "kind = \"leaf_spine\"\nleaves = 5\nspines = 3\nhosts_per_leaf = 4"] {
            same_as_reference(&fabric(topo).net);
        }
    }
}
