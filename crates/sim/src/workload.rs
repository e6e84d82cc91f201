//! Workloads: the flows attached to hosts, and the state of the incast.
//!
//! Rules:
//! - A flow is a [`Flow`]: its two endpoints (`dcfair_core::transport::Endpoint`: the sender at
//!   its source host, the receiver at its destination, of whichever transport) with what the
//!   engine keeps beside them: its ids, group, size and start, the lazy-timer bookkeeping
//!   (`timer_at`: the time of the one pending timer event of each end, if any) and the
//!   snapshots of the measurement window. The endpoints of a group's flows are built from the
//!   group's `transport` and its TCP (`Scenario::tcp_of`: its `tcp` table over `[tcp]`), which
//!   every transport takes its segment sizes from; incast servers and Poisson flows use `[tcp]`.
//! - A UDP source (`[udp]`) is a flow too: a background source whose packets are counted at
//!   the receiver like any flow's, drawn from its own random stream.
//! - Flow ids are dense: the flow groups' flows first, then the incast servers, the Poisson
//!   flows, and last the background sources (`Sim`'s flows from `background` on).
//! - A flow of a group with `tcp.mptcp.subflows = N > 1` is N subflows with consecutive flow
//!   ids, bound by one MPTCP connection ([`Bound`], whose index is each subflow's `bond`).
//! - Random start times come from the stream `("flow.start", flow_id)`, so changing one group's
//!   size never shifts another group's draws.
//! - A group's `pattern` ([`pattern_pairs`]) draws its random pairs from the stream
//!   `("flows.pattern", group index)`: the same seed gives the same pairs, each group its own.
//! - A job (a group whose `pattern` is a collective) is one flow per transfer of every
//!   iteration, in `jobs.rs`'s order, on the hosts `jobs::place` gives it; the flows that wait
//!   for others start at `jobs::NOT_STARTED`. Its transfers from rank a to rank b share one
//!   5-tuple (source port `1024 + a N + b`, destination port 4791, which no other flow uses), as
//!   a collective library keeps one connection per peer: ECMP hashes them onto one path, the
//!   same path when the job runs alone ([`flows_and_jobs`] with `only`).

use crate::arena::Arena;
use crate::jobs::{self, Job, NOT_STARTED};
use crate::metrics::FlowObs;
use crate::scenario::{IncastConnection, Pattern, Scenario};
use crate::topo::Built;
use dcfair_core::rng::{Rng, Streams};
use dcfair_core::tcp::{FlowIds, TcpConfig};
use dcfair_core::time::{BitsPerSec, SimDuration, SimTime};
use dcfair_core::transport::mptcp::{Connection, Subflow};
use dcfair_core::transport::udp::UdpEnds;
use dcfair_core::transport::{AnyBond, Data, Endpoint, FlowSpec, HasEndpoint, Tables, TransportKind};
use rand::Rng as _;

/// One flow: its endpoints and what the engine keeps beside them (module rules).
#[derive(Clone, Debug)]
pub struct Flow {
    pub ids: FlowIds,
    /// Index into the run's group names (`assemble::group_names`, then `udp`).
    pub group: u16,
    pub size: Option<u64>,
    pub start: SimTime,
    /// Time of the pending timer event of [sender, receiver].
    pub timer_at: [Option<SimTime>; 2],
    /// Float-clock mode (`sim.tie_break = "float_clock"`): the last deadline seen of
    /// [sender, receiver] and its shadow-clock time.
    pub deadline_seen: [Option<SimTime>; 2],
    pub timer_f: [f64; 2],
    /// In-order bytes delivered when the measurement window opened.
    pub delivered_at_window: u64,
    /// Data packets sent (`Endpoint::data_pkts_sent`) when the measurement window opened.
    pub sent_at_window: u64,
    /// The bond this flow is one of (an index into `Sim`'s bonds: an MPTCP connection's
    /// subflows), or [`NO_BOND`]: a flow on its own.
    pub bond: u32,
    /// The sender and the receiver.
    pub ends: Endpoint,
}

/// A run's flows by flow id: an arena whose views may hold shadows (`arena.rs`: a part of a
/// run on several threads runs the receiver of a flow whose sender runs in another part).
pub type Flows = Arena<Flow, true>;

/// `Flow::bond` of a flow on its own.
pub const NO_BOND: u32 = u32::MAX;

impl Flow {
    /// A flow of group `group` with endpoints `ends`, starting at `start`, sending `size`
    /// bytes (`None`: without end).
    pub fn new(ids: FlowIds, group: u16, size: Option<u64>, start: SimTime, ends: Endpoint) -> Flow {
        Flow {
            ids,
            group,
            size,
            start,
            timer_at: [None, None],
            deadline_seen: [None, None],
            timer_f: [0.0, 0.0],
            delivered_at_window: 0,
            sent_at_window: 0,
            bond: NO_BOND,
            ends,
        }
    }

    /// In-order payload bytes at the receiver, whichever the transport (every connection's).
    #[inline]
    pub fn delivered_bytes(&self) -> u64 {
        self.ends.delivered_bytes()
    }

    /// Data packets the sender emitted so far, retransmissions included, whichever the
    /// transport: the packets "sent by each flow" of the HCF paper's measures.
    #[inline]
    pub fn data_pkts_sent(&self) -> u64 {
        self.ends.data_pkts_sent()
    }
}

impl HasEndpoint<Endpoint> for Flow {
    #[inline(always)]
    fn endpoint(&self) -> &Endpoint {
        &self.ends
    }
    #[inline(always)]
    fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.ends
    }
}

/// A bond over several flows (`dcfair_core::transport::AnyBond`: an MPTCP connection) with
/// what the engine observes of it: its arrivals are advances of its own in-order bytes (the
/// data ACK), its row in flows.csv is under its first flow's id.
#[derive(Debug)]
pub struct Bound {
    pub bond: AnyBond,
    pub obs: FlowObs,
    /// Its in-order bytes when the measurement window opened.
    pub delivered_at_window: u64,
}

/// The endpoints of flow `ids` of the chosen transport `kind` (segments of `tcp`), its sender
/// given `data`, the sender's and the receiver's NIC rates read from `built`.
fn endpoint(sc: &Scenario, streams: Streams, built: &Built, tables: &Tables, kind: TransportKind, tcp: &TcpConfig, ids: FlowIds, data: Data) -> Endpoint {
    let nic = built.net.nodes[ids.dst as usize].ports[0];
    let src_nic = built.net.nodes[ids.src as usize].ports[0];
    let spec = FlowSpec {
        ids,
        data,
        tcp,
        sender_rate: built.net.ports[src_nic as usize].rate,
        receiver_rate: built.net.ports[nic as usize].rate,
        mtu: sc.mtu(),
        streams,
    };
    Endpoint::build(kind, tables, &spec)
}

/// Creates the flows of every group, numbered across groups in `Scenario::flow_groups()`
/// order. A group with `src`/`dst` places its j-th flow on `src[j % len]` -> `dst[j % len]`;
/// without them (dumbbell), global flow i goes from sender `i % S` to receiver `i % R`; a group
/// with a `pattern` places its flows as [`pattern_pairs`] says. A flow of a group with
/// `tcp.mptcp.subflows = N > 1` is N subflows with consecutive flow ids (persistent senders, each
/// with `bond` set to its connection's index) and one connection ([`Bound`], its coupled
/// congestion control installed on the subflows); the placement counts it once (j), the
/// numbering N times (i).
pub fn group_flows(sc: &Scenario, streams: Streams, built: &Built) -> (Vec<Flow>, Vec<Bound>) {
    let (flows, bonds, _) = flows_and_jobs(sc, streams, built, None);
    (flows, bonds)
}

/// [`group_flows`], with the jobs among the groups (`jobs.rs`), in `Scenario::jobs` order.
/// With `only = Some(g)`, the flows of group `g` alone (a job run alone for its baseline), placed
/// as in the whole scenario.
pub fn flows_and_jobs(sc: &Scenario, streams: Streams, built: &Built, only: Option<usize>) -> (Vec<Flow>, Vec<Bound>, Vec<Job>) {
    let mut flows: Vec<Flow> = Vec::new();
    let mut bonds = Vec::new();
    let mut jobs = Vec::new();
    let tables = sc.transport_tables().resolved();
    let (def_src, def_dst) = sc.topology.default_endpoints().unwrap_or_default();
    let ids_of = |names: &[String]| -> Vec<u32> { names.iter().map(|n| built.host(n).expect("validated host name")).collect() };
    let (def_src, def_dst) = (ids_of(&def_src), ids_of(&def_dst));
    let placed = if sc.jobs().is_empty() { Vec::new() } else { jobs::place(sc, streams) };
    let mut job_no = 0;
    for (g, (_, f)) in sc.flow_groups().into_iter().enumerate() {
        let tcp = sc.tcp_of(f);
        let size = f.size(tcp.mss_bytes);
        if let Some(p) = f.collective() {
            job_no += 1;
            if only.is_some_and(|o| o != g) {
                continue;
            }
            let hosts = ids_of(&placed[job_no - 1]);
            let n = hosts.len() as u32;
            let gap = SimDuration::from_secs_f64(f.compute_gap_s.unwrap_or(0.0));
            let job = Job::new(g as u16, p, hosts, size.unwrap_or(0), f.job_iterations(), gap, jobs::job_start(f, g, streams), flows.len() as u32);
            flows.reserve(job.flows() as usize);
            for k in 0..job.iterations {
                for (t, tr) in job.schedule.transfers.iter().enumerate() {
                    let pair = tr.src * n + tr.dst;
                    let ids = FlowIds {
                        flow: flows.len() as u32,
                        src: job.hosts[tr.src as usize],
                        dst: job.hosts[tr.dst as usize],
                        sport: 1024 + (pair % 60_000) as u16,
                        dport: 4791 + (pair / 60_000) as u16,
                    };
                    let start = if k == 0 && job.schedule.needs[t] == 0 { job.start } else { NOT_STARTED };
                    let ends = endpoint(sc, streams, built, &tables, f.transport, tcp, ids, Data::Bulk(Some(tr.bytes)));
                    flows.push(Flow::new(ids, g as u16, Some(tr.bytes), start, ends));
                }
            }
            jobs.push(job);
            continue;
        }
        if only.is_some() {
            continue;
        }
        let src = f.src.as_ref().map(|h| ids_of(&h.names()));
        let dst = f.dst.as_ref().map(|h| ids_of(&h.names()));
        let pairs = f.pattern.map(|p| {
            let end = f.pattern_end().map(|e| ids_of(&[e])[0]);
            pattern_pairs(p, &ids_of(&sc.pattern_hosts(f)), end, f.stride.unwrap_or(0), &mut streams.stream("flows.pattern", g as u64))
        });
        let count = pairs.as_ref().map_or(f.count.unwrap_or(0) as usize, Vec::len);
        flows.reserve(count * tcp.mptcp.subflows as usize);
        for j in 0..count {
            let i = flows.len() as u32;
            let pick = |list: &Option<Vec<u32>>, def: &[u32]| match list {
                Some(l) => l[j % l.len()],
                None => def[i as usize % def.len()],
            };
            let mut rng = streams.stream("flow.start", i as u64);
            let start_s = if f.start_max_s > f.start_min_s { rng.gen_range(f.start_min_s..f.start_max_s) } else { f.start_min_s };
            let (s, d) = match &pairs {
                Some(p) => p[j],
                None => (pick(&src, &def_src), pick(&dst, &def_dst)),
            };
            let ids = FlowIds {
                flow: i,
                src: s,
                dst: d,
                sport: 1024 + (i % 60_000) as u16,
                dport: 80 + (i / 60_000) as u16,
            };
            let start = SimTime::from_secs_f64(start_s);
            let n = tcp.mptcp.subflows;
            if n > 1 {
                for k in 0..n {
                    let id = i + k;
                    let ids = FlowIds { flow: id, sport: 1024 + (id % 60_000) as u16, ..ids };
                    let mut sub = Flow::new(ids, g as u16, None, start, Endpoint::Mptcp(Subflow::new(tcp, ids)));
                    sub.bond = bonds.len() as u32;
                    flows.push(sub);
                }
                let conn = Connection::new(tcp, i, n, size, start);
                conn.install(&mut flows[i as usize..(i + n) as usize]);
                bonds.push(Bound { bond: AnyBond::Mptcp(conn), obs: FlowObs::default(), delivered_at_window: 0 });
                continue;
            }
            let ends = endpoint(sc, streams, built, &tables, f.transport, tcp, ids, Data::Bulk(size));
            flows.push(Flow::new(ids, g as u16, size, start, ends));
        }
    }
    (flows, bonds, jobs)
}

/// The (source, destination) of every flow of a `pattern` group over `hosts` (host ids, in the
/// group's host order), in flow order: by source host, then (all_to_all) by destination host.
/// `end`: the named receiver of `incast` (sender of `outcast`), else the first host; `stride`
/// as validated. `permutation` is a uniform random derangement (shuffles drawn from `rng` until
/// one leaves no host in place) and `random` draws each host's receiver uniformly among the
/// others, both from `rng` (the stream `("flows.pattern", group index)`).
pub fn pattern_pairs(p: Pattern, hosts: &[u32], end: Option<u32>, stride: u64, rng: &mut Rng) -> Vec<(u32, u32)> {
    let n = hosts.len();
    match p {
        Pattern::Permutation => {
            let mut to: Vec<usize> = (0..n).collect();
            loop {
                for i in (1..n).rev() {
                    to.swap(i, rng.gen_range(0..=i));
                }
                if to.iter().enumerate().all(|(i, &t)| i != t) {
                    break;
                }
            }
            (0..n).map(|i| (hosts[i], hosts[to[i]])).collect()
        }
        Pattern::Random => (0..n)
            .map(|i| {
                let j = rng.gen_range(0..n - 1);
                (hosts[i], hosts[if j >= i { j + 1 } else { j }])
            })
            .collect(),
        Pattern::AllToAll => (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (hosts[i], hosts[j]))).collect(),
        Pattern::Stride => (0..n).map(|i| (hosts[i], hosts[((i as u64 + stride) % n as u64) as usize])).collect(),
        Pattern::Incast | Pattern::Outcast => {
            let one = end.unwrap_or(hosts[0]);
            let others = hosts.iter().copied().filter(|&h| h != one);
            if p == Pattern::Incast {
                others.map(|h| (h, one)).collect()
            } else {
                others.map(|h| (one, h)).collect()
            }
        }
        // a job's transfers are `jobs.rs`'s, made by `flows_and_jobs`
        _ => unreachable!("{} is a collective, not a traffic matrix", p.name()),
    }
}

/// The state of an incast workload: which flows are its servers and where the rounds stand.
#[derive(Debug)]
pub struct Incast {
    /// Flow id of server 0; servers are flows `first .. first + servers`.
    pub first: u32,
    pub servers: u32,
    pub per_server: u64,
    /// Requests per epoch.
    pub rounds: u32,
    pub gap: SimDuration,
    pub start: SimTime,
    /// Epochs of `rounds` requests; epoch k starts no earlier than `start + k x epoch_interval`.
    pub epochs: u32,
    pub epoch_interval: SimDuration,
    /// The last answer ends the run (no other workload is running).
    pub ends_run: bool,
    /// Each answer is a new connection (`incast.connection = "per_request"`), built from this
    /// configuration.
    pub per_request: Option<Box<TcpConfig>>,
    /// Requests sent so far (the current one is `issued - 1`).
    pub issued: u32,
    pub round_start: SimTime,
    /// Servers whose answer to the current request is not complete yet.
    pub pending: u32,
    /// Per server: its answer to the current request is complete.
    pub answered: Vec<bool>,
    /// Completion time of every finished request.
    pub round_times: Vec<SimDuration>,
    /// Per answer (one server's share of one request): time from the request to its last byte
    /// in order at the client, in order of completion.
    pub answer_times: Vec<SimDuration>,
}

/// What a delivery means for the incast's current request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundEnd {
    NotYet,
    /// Every answer is in; the next request leaves at this time.
    NextRequestAt(SimTime),
    /// Every answer to the last request is in.
    LastRound,
}

impl Incast {
    #[inline]
    pub fn server_of(&self, flow: u32) -> Option<usize> {
        (flow >= self.first && flow < self.first + self.servers).then(|| (flow - self.first) as usize)
    }

    /// Flow `flow` has `delivered` bytes in order at the client at `now`: counts its answer
    /// once it covers every request so far, and ends the round when it was the last one.
    #[inline]
    pub fn on_delivered(&mut self, flow: u32, delivered: u64, now: SimTime) -> RoundEnd {
        let Some(i) = self.server_of(flow) else { return RoundEnd::NotYet };
        if self.issued == 0 || self.answered[i] || delivered < self.per_server * self.issued as u64 {
            return RoundEnd::NotYet;
        }
        self.answered[i] = true;
        self.pending -= 1;
        self.answer_times.push(now - self.round_start);
        if self.pending > 0 {
            return RoundEnd::NotYet;
        }
        self.round_times.push(now - self.round_start);
        if self.issued >= self.rounds.saturating_mul(self.epochs) {
            return RoundEnd::LastRound;
        }
        let next = now + self.gap;
        if self.issued % self.rounds != 0 {
            return RoundEnd::NextRequestAt(next);
        }
        // An epoch is over: the next one starts at its time (or at once, when late).
        let epoch_start = self.start + self.epoch_interval.saturating_mul((self.issued / self.rounds) as u64);
        RoundEnd::NextRequestAt(next.max(epoch_start))
    }
}

/// The incast servers of `[incast]` as flows written to (ids from `first`), server i on
/// `src[i % S]` answering client `dst[(i / S) % D]` (`IncastConfig::endpoints`; on a dumbbell by
/// default `s<i>` and `r0`), over `[incast].transport`; and the state that drives their rounds. Server i opens its
/// connection at `i * start_s / servers`; the first request leaves at `start_s`.
pub fn incast(sc: &Scenario, streams: Streams, first: u32, group: u16, built: &Built) -> (Vec<Flow>, Option<Incast>) {
    let Some(ic) = &sc.incast else { return (Vec::new(), None) };
    let tables = sc.transport_tables().resolved();
    let host = |n: &String| built.host(n).expect("validated incast host");
    let (src, dst) = ic.endpoints();
    let (src, dst): (Vec<u32>, Vec<u32>) = (src.iter().map(host).collect(), dst.iter().map(host).collect());
    let ends_run = sc.flow_groups().is_empty() && sc.poisson.is_none() && sc.udp.is_none();
    let start = SimTime::from_secs_f64(ic.start_s);
    // Connections open one after another over [0, start_s) so that their handshakes do not
    // collide (the servers of an incast hold connections opened long before the requests).
    let open_gap = ic.start_s / ic.servers.max(1) as f64;
    let flows = (0..ic.servers)
        .map(|i| {
            let id = first + i;
            let (s, d) = (src[i as usize % src.len()], dst[(i as usize / src.len()) % dst.len()]);
            let ids = FlowIds { flow: id, src: s, dst: d, sport: 2000, dport: 3000 + (i % 60_000) as u16 };
            let open = SimTime::from_secs_f64(open_gap * i as f64);
            // nothing to send until the first request: each request is a write
            Flow::new(ids, group, None, open, endpoint(sc, streams, built, &tables, ic.transport, &sc.tcp, ids, Data::Written))
        })
        .collect();
    let state = Incast {
        first,
        servers: ic.servers,
        per_server: ic.per_server(),
        rounds: ic.rounds,
        gap: SimDuration::from_secs_f64(ic.gap_s),
        start,
        issued: 0,
        round_start: start,
        pending: 0,
        answered: vec![false; ic.servers as usize],
        round_times: Vec::new(),
        answer_times: Vec::new(),
        epochs: ic.epochs,
        epoch_interval: SimDuration::from_secs_f64(ic.epoch_interval_s),
        ends_run,
        per_request: (ic.connection == IncastConnection::PerRequest).then(|| Box::new(sc.tcp.clone())),
    };
    (flows, Some(state))
}

/// The UDP background source of `[udp]`, if any, as flow `flow` of group `group`; its rate is
/// a fraction of `bottleneck`, its gaps drawn from the stream `("udp", flow)`.
pub fn udp_source(sc: &Scenario, streams: Streams, flow: u32, group: u16, built: &Built, bottleneck: BitsPerSec) -> Option<Flow> {
    let u = sc.udp.as_ref()?;
    let (def_src, def_dst) = sc.topology.default_udp_endpoints().unwrap_or_default();
    let host = built.host(u.src.as_deref().unwrap_or(def_src)).expect("validated UDP source");
    let dst = built.host(u.dst.as_deref().unwrap_or(def_dst)).expect("validated UDP destination");
    if u.rate_fraction <= 0.0 {
        return None;
    }
    let rate = bottleneck.as_f64() * u.rate_fraction;
    let ids = FlowIds { flow, src: host, dst, sport: 5000, dport: 5001 };
    let ends = UdpEnds::new(ids, u.pattern, u.packet_bytes, rate, streams.stream("udp", flow as u64)).with_class(u.priority);
    Some(Flow::new(ids, group, None, SimTime::from_secs_f64(u.start_s), Endpoint::Udp(ends)))
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- each flow's TCP comes from its group -------------------------------------------------
    #[test]
    fn both_ends_of_a_flow_get_their_group_tcp() {
        let text = r#"
            [sim]
            duration_s = 1.0
            [topology]
            kind = "dumbbell"
            senders = 4
            access_rate_mbps = 1000.0
            access_delay_us = 10.0
            bottleneck_rate_mbps = 100.0
            bottleneck_delay_us = 10.0
            [tcp]
            cc = "reno"
            handshake = false
            rcv_buf_bytes = 20000
            [flows]
            count = 2
            [groups.fat]
            count = 2
            [groups.fat.tcp]
            cc = "cubic"
            handshake = true
            rcv_buf_bytes = 40000
            [incast]
            servers = 2
            block_bytes = 1000
            rounds = 1
        "#;
        let sc = crate::scenario::load(text, "mixed.toml", &[]).unwrap();
        let streams = Streams::new(1);
        let built = crate::topo::build(&sc, streams).unwrap();
        let (flows, _) = group_flows(&sc, streams, &built);
        let (servers, _) = super::incast(&sc, streams, flows.len() as u32, 2, &built);
        use dcfair_core::transport::{tcp::TcpEnds, Variant};
        let got: Vec<_> = flows
            .iter()
            .chain(&servers)
            .map(|f| {
                let t = TcpEnds::of(&f.ends).expect("TCP flows");
                (f.group, t.sender.cc_name(), t.receiver.state(), t.receiver.adv_window())
            })
            .collect();
        use dcfair_core::tcp::ReceiverState::{Established, Listen};
        assert_eq!(
            got,
            [
                (0, "reno", Established, 20000),
                (0, "reno", Established, 20000),
                (1, "cubic", Listen, 40000),
                (1, "cubic", Listen, 40000),
                (2, "reno", Established, 20000),
                (2, "reno", Established, 20000),
            ]
        );
    }

    #[test]
    fn incast_servers_cover_every_source_for_each_client_in_turn() {
        let text = r#"
            name = "c"
            [sim]
            duration_s = 1.0
            [topology]
            kind = "custom"
            hosts = ["a", "b", "c", "x", "y"]
            switches = ["sw"]
            links = [
              { a = "a", b = "sw", rate_mbps = 1000.0, delay_us = 10.0 },
              { a = "b", b = "sw", rate_mbps = 1000.0, delay_us = 10.0 },
              { a = "c", b = "sw", rate_mbps = 1000.0, delay_us = 10.0 },
              { a = "x", b = "sw", rate_mbps = 1000.0, delay_us = 10.0 },
              { a = "y", b = "sw", rate_mbps = 1000.0, delay_us = 10.0, measured = true },
            ]
            [queue]
            kind = "droptail"
            limit_pkts = 20
            [incast]
            servers = 12
            server_bytes = 1000
            rounds = 2
            src = ["a", "b", "c"]
            dst = ["x", "y"]
        "#;
        let sc = crate::scenario::load(text, "c.toml", &[]).unwrap();
        let built = crate::topo::build(&sc, Streams::new(1)).unwrap();
        let (servers, state) = super::incast(&sc, Streams::new(1), 0, 0, &built);
        let name = |h: u32| built.net.nodes[h as usize].name.clone();
        let pairs: Vec<String> = servers.iter().map(|f| format!("{}>{}", name(f.ids.src), name(f.ids.dst))).collect();
        // Three sources per client, two clients, then again: every pair twice.
        assert_eq!(pairs, ["a>x", "b>x", "c>x", "a>y", "b>y", "c>y", "a>x", "b>x", "c>x", "a>y", "b>y", "c>y"]);
        let st = state.unwrap();
        assert!(st.ends_run, "the incast is the only workload");
        assert_eq!((st.epochs, st.rounds), (1, 2));
    }

    // --- traffic patterns ----------------------------------------------------------------------
    fn pairs(p: Pattern, n: u32, end: Option<u32>, stride: u64, seed: u64) -> Vec<(u32, u32)> {
        // ids that are not 0..n, to catch an index taken for an id
        let hosts: Vec<u32> = (0..n).map(|i| 100 + 3 * i).collect();
        pattern_pairs(p, &hosts, end, stride, &mut Streams::new(seed).stream("flows.pattern", 0))
    }

    #[test]
    fn a_permutation_is_a_derangement_drawn_from_the_seed() {
        for n in [2, 3, 16, 1000] {
            for seed in 1..=5 {
                let p = pairs(Pattern::Permutation, n, None, 0, seed);
                assert_eq!(p.len(), n as usize);
                let srcs: std::collections::BTreeSet<u32> = p.iter().map(|x| x.0).collect();
                let dsts: std::collections::BTreeSet<u32> = p.iter().map(|x| x.1).collect();
                let all: std::collections::BTreeSet<u32> = (0..n).map(|i| 100 + 3 * i).collect();
                assert_eq!((&srcs, &dsts), (&all, &all), "n {n}: every host sends once and receives once");
                assert!(p.iter().all(|(s, d)| s != d), "n {n} seed {seed}: no host sends to itself");
                assert_eq!(p, pairs(Pattern::Permutation, n, None, 0, seed), "the same seed, the same pairs");
            }
        }
        assert_eq!(pairs(Pattern::Permutation, 2, None, 0, 1), [(100, 103), (103, 100)]);
        let by_seed: std::collections::BTreeSet<_> = (1..=5).map(|seed| pairs(Pattern::Permutation, 16, None, 0, seed)).collect();
        assert_eq!(by_seed.len(), 5, "five seeds, five permutations");
    }

    #[test]
    fn random_sends_each_host_to_another_host_receivers_may_repeat() {
        let p = pairs(Pattern::Random, 64, None, 0, 1);
        assert_eq!(p.len(), 64);
        assert!(p.iter().enumerate().all(|(i, &(s, d))| s == 100 + 3 * i as u32 && d != s && (d - 100) % 3 == 0 && d < 100 + 3 * 64));
        let dsts: std::collections::BTreeSet<u32> = p.iter().map(|x| x.1).collect();
        assert!(dsts.len() < 64, "64 uniform draws among 63 hosts repeat (all distinct: p < 1e-25)");
        assert_eq!(p, pairs(Pattern::Random, 64, None, 0, 1));
        assert_ne!(p, pairs(Pattern::Random, 64, None, 0, 2));
        assert_eq!(pairs(Pattern::Random, 2, None, 0, 9), [(100, 103), (103, 100)], "two hosts: each has one other");
    }

    #[test]
    fn all_to_all_stride_incast_and_outcast_have_their_shapes() {
        let h = |i: u32| 100 + 3 * i;
        for n in [2u32, 5, 16] {
            let a = pairs(Pattern::AllToAll, n, None, 0, 1);
            assert_eq!(a.len() as u32, n * (n - 1));
            let set: std::collections::BTreeSet<_> = a.iter().copied().collect();
            assert_eq!(set.len(), a.len(), "each ordered pair once");
            assert!(a.iter().all(|(s, d)| s != d));
        }
        assert_eq!(pairs(Pattern::AllToAll, 3, None, 0, 1), [(h(0), h(1)), (h(0), h(2)), (h(1), h(0)), (h(1), h(2)), (h(2), h(0)), (h(2), h(1))]);
        for (n, stride) in [(16u32, 1u64), (16, 4), (16, 15), (16, 17), (7, 3)] {
            let s = pairs(Pattern::Stride, n, None, stride, 1);
            let want: Vec<_> = (0..n).map(|i| (h(i), h(((i as u64 + stride) % n as u64) as u32))).collect();
            assert_eq!(s, want, "n {n} stride {stride}");
        }
        let inc = pairs(Pattern::Incast, 5, None, 0, 1);
        assert_eq!(inc, [(h(1), h(0)), (h(2), h(0)), (h(3), h(0)), (h(4), h(0))], "to the first host by default");
        let inc = pairs(Pattern::Incast, 5, Some(h(3)), 0, 1);
        assert_eq!(inc, [(h(0), h(3)), (h(1), h(3)), (h(2), h(3)), (h(4), h(3))], "to the named receiver");
        assert_eq!(pairs(Pattern::Incast, 3, Some(999), 0, 1), [(h(0), 999), (h(1), 999), (h(2), 999)], "a receiver outside the hosts");
        let out = pairs(Pattern::Outcast, 4, Some(h(2)), 0, 1);
        assert_eq!(out, [(h(2), h(0)), (h(2), h(1)), (h(2), h(3))]);
        assert_eq!(pairs(Pattern::Outcast, 3, None, 0, 1), [(h(0), h(1)), (h(0), h(2))]);
    }

    #[test]
    fn a_pattern_group_places_its_flows_and_groups_draw_apart() {
        let text = r#"
            [sim]
            duration_s = 1.0
            [topology]
            kind = "leaf_spine"
            leaves = 4
            spines = 2
            hosts_per_leaf = 4
            host_rate_mbps = 1000.0
            fabric_rate_mbps = 1000.0
            link_delay_us = 1.0
            [flows]
            pattern = "permutation"
            [groups.again]
            pattern = "permutation"
            [groups.into_h3]
            pattern = "incast"
            hosts = ["h0", "h1", "h2", "h3"]
            dst = "h3"
        "#;
        let sc = crate::scenario::load(text, "p.toml", &[]).unwrap();
        let built = crate::topo::build(&sc, Streams::new(1)).unwrap();
        let (flows, _) = group_flows(&sc, Streams::new(1), &built);
        let name = |h: u32| built.net.nodes[h as usize].name.clone();
        let group = |g: u16| flows.iter().filter(|f| f.group == g).map(|f| (name(f.ids.src), name(f.ids.dst))).collect::<Vec<_>>();
        // groups by name after [flows]: again (1), into_h3 (2)
        let (first, again, incast) = (group(0), group(1), group(2));
        assert_eq!((first.len(), again.len()), (16, 16));
        assert_eq!(first.iter().map(|p| p.0.clone()).collect::<Vec<_>>(), (0..16).map(|i| format!("h{i}")).collect::<Vec<_>>(), "in host order");
        assert_ne!(first, again, "each group its own stream");
        assert_eq!(incast, [("h0".into(), "h3".into()), ("h1".into(), "h3".into()), ("h2".into(), "h3".into())]);
        let ids: Vec<u32> = flows.iter().map(|f| f.ids.flow).collect();
        assert_eq!(ids, (0..35).collect::<Vec<u32>>(), "numbered across groups");
        assert_eq!(sc.flow_groups().iter().map(|(_, f)| sc.group_flows(f)).sum::<u64>(), 35, "the config layer counts what is built");
    }

    fn incast(servers: u32, rounds: u32) -> Incast {
        Incast {
            first: 10,
            servers,
            per_server: 1000,
            rounds,
            gap: SimDuration::from_us(5),
            start: SimTime::ZERO,
            issued: 1,
            round_start: SimTime::ZERO,
            pending: servers,
            answered: vec![false; servers as usize],
            round_times: Vec::new(),
            answer_times: Vec::new(),
            epochs: 1,
            epoch_interval: SimDuration::ZERO,
            ends_run: true,
            per_request: None,
        }
    }

    // --- the end of an incast round -----------------------------------------------------------
    #[test]
    fn a_round_ends_with_its_last_complete_answer() {
        let mut ic = incast(2, 2);
        let t = SimTime::from_secs_f64(0.001);
        assert_eq!(ic.on_delivered(10, 999, t), RoundEnd::NotYet, "short of the answer");
        assert_eq!(ic.on_delivered(10, 1000, t), RoundEnd::NotYet, "one of two answers");
        assert_eq!(ic.on_delivered(10, 1500, t), RoundEnd::NotYet, "counted once");
        assert_eq!(ic.on_delivered(3, 5000, t), RoundEnd::NotYet, "not a server");
        assert_eq!(ic.on_delivered(11, 1000, t), RoundEnd::NextRequestAt(t + SimDuration::from_us(5)));
        assert_eq!(ic.round_times, vec![t - SimTime::ZERO]);
    }

    #[test]
    fn the_last_round_ends_the_workload_and_targets_are_cumulative() {
        let mut ic = incast(1, 2);
        ic.issued = 2; // second request: the server must have delivered 2 x 1000 bytes
        let t = SimTime::from_secs_f64(0.002);
        assert_eq!(ic.on_delivered(10, 1999, t), RoundEnd::NotYet);
        assert_eq!(ic.on_delivered(10, 2000, t), RoundEnd::LastRound);
    }

    #[test]
    fn answer_times_are_per_server_from_the_request() {
        let mut ic = incast(2, 1);
        ic.round_start = SimTime::from_secs_f64(0.001);
        ic.on_delivered(11, 1000, SimTime::from_secs_f64(0.003));
        assert_eq!(ic.on_delivered(10, 1000, SimTime::from_secs_f64(0.004)), RoundEnd::LastRound);
        assert_eq!(ic.answer_times, vec![SimDuration::from_us(2000), SimDuration::from_us(3000)]);
    }

    #[test]
    fn epochs_start_on_their_schedule_or_late() {
        let mut ic = incast(1, 2);
        ic.epochs = 3;
        ic.epoch_interval = SimDuration::from_us(1000);
        let us = |x: u64| SimTime::ZERO + SimDuration::from_us(x);
        // Request 1 of epoch 0: the next one follows after the gap.
        assert_eq!(ic.on_delivered(10, 1000, us(100)), RoundEnd::NextRequestAt(us(105)));
        // Request 2 ends epoch 0: epoch 1 starts at 1000 us, not after the gap.
        ic.issued = 2;
        ic.answered[0] = false;
        ic.pending = 1;
        assert_eq!(ic.on_delivered(10, 2000, us(200)), RoundEnd::NextRequestAt(us(1000)));
        // Epoch 1 ends after its own start time: epoch 2 (due at 2000 us) starts late, after the gap.
        ic.issued = 4;
        ic.answered[0] = false;
        ic.pending = 1;
        assert_eq!(ic.on_delivered(10, 4000, us(2500)), RoundEnd::NextRequestAt(us(2505)));
        // The last request of the last epoch.
        ic.issued = 6;
        ic.answered[0] = false;
        ic.pending = 1;
        assert_eq!(ic.on_delivered(10, 6000, us(3000)), RoundEnd::LastRound);
    }
}
