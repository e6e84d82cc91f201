//! Workloads: the traffic sources attached to hosts.
//!
//! Rules:
//! - A TCP flow is a [`TcpFlow`]: a sender endpoint at its source host and a receiver endpoint at
//!   its destination, with the lazy-timer bookkeeping the engine needs (`timer_at`: the time of the
//!   one pending timer event of each endpoint, if any). Both ends are built from the TCP of the
//!   flow's group (`Scenario::tcp_of`: its `tcp` table over `[tcp]`); incast servers use `[tcp]`.
//! - A UDP source emits packets at a constant or Poisson rate from its own random stream; its
//!   packets are counted at the receiver like any flow's.
//! - Flow ids are dense: TCP flows first (`0..n_tcp`), then UDP sources.
//! - Random start times come from the stream `("flow.start", flow_id)`, so changing one group's
//!   size never shifts another group's draws.
//! - A group's `pattern` ([`pattern_pairs`]) draws its random pairs from the stream
//!   `("flows.pattern", group index)`: the same seed gives the same pairs, each group its own.

use crate::scenario::{IncastConnection, Pattern, Scenario, UdpPattern};
use crate::topo::Built;
use dcfair_core::packet::{Packet, Proto};
use dcfair_core::rng::{Rng, Streams};
use dcfair_core::tcp::{FlowIds, SenderStats, TcpConfig, TcpReceiver, TcpSender};
use dcfair_core::time::{BitsPerSec, SimDuration, SimTime};
use dcfair_core::xpass::endpoint::{XpassReceiver, XpassSender};
use crate::scenario::Transport;
use rand::Rng as _;

#[derive(Debug)]
pub struct TcpFlow {
    pub ids: FlowIds,
    /// Index into `Scenario::flow_groups()`.
    pub group: u16,
    pub size: Option<u64>,
    pub start: SimTime,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    /// Time of the pending timer event of [sender, receiver].
    pub timer_at: [Option<SimTime>; 2],
    /// Float-clock mode (`sim.tie_break = "float_clock"`): the last deadline seen of
    /// [sender, receiver] and its shadow-clock time.
    pub deadline_seen: [Option<SimTime>; 2],
    pub timer_f: [f64; 2],
    /// In-order bytes delivered when the measurement window opened.
    pub delivered_at_window: u64,
    /// Data packets sent ([`TcpFlow::data_pkts_sent`]) when the measurement window opened.
    pub sent_at_window: u64,
    /// ExpressPass endpoints, when the flow's group has `transport = "xpass"`; they then
    /// replace `sender` and `receiver` (which stay idle).
    pub xpass: Option<Box<XpassEnds>>,
    /// What the flow's earlier connections did, when it opens one per request
    /// (`incast.connection = "per_request"`): their counts add to the current connection's.
    pub carried: Option<Box<Carried>>,
    /// The MPTCP connection this flow is a subflow of (an index into `Sim::conns`), or
    /// [`NO_CONN`]: a plain flow.
    pub conn: u32,
}

/// The counters of a flow's finished connections ([`TcpFlow::reconnect`]).
#[derive(Clone, Debug, Default)]
pub struct Carried {
    pub delivered: u64,
    pub stats: SenderStats,
    /// Connections opened so far.
    pub connections: u64,
}

/// The two ends of an ExpressPass flow.
#[derive(Debug)]
pub struct XpassEnds {
    pub sender: XpassSender,
    pub receiver: XpassReceiver,
}

impl TcpFlow {
    /// In-order payload bytes at the receiver, whichever the transport (every connection's).
    #[inline]
    pub fn delivered_bytes(&self) -> u64 {
        let now = match &self.xpass {
            Some(x) => x.receiver.delivered_bytes(),
            None => self.receiver.delivered_bytes(),
        };
        now + self.carried.as_ref().map_or(0, |c| c.delivered)
    }

    /// The TCP sender's counters over every connection of the flow.
    pub fn sender_stats(&self) -> SenderStats {
        let mut s = self.sender.stats().clone();
        if let Some(c) = &self.carried {
            s.add(&c.stats);
        }
        s
    }

    /// Closes the flow's connection and opens a new one that will send `bytes` and a FIN (an
    /// incast server answering a request on its own connection): fresh endpoints from `tcp`,
    /// a new source port, sequence numbers far from the last connection's (its late segments
    /// are ignored as old), the last one's counters carried over. Opens it at once (a SYN).
    pub fn reconnect(&mut self, tcp: &TcpConfig, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        let mut c: Box<Carried> = self.carried.take().unwrap_or_default();
        if c.connections > 0 {
            c.delivered += self.receiver.delivered_bytes();
            c.stats.add(self.sender.stats());
        }
        c.connections += 1;
        let iss = c.connections << 40;
        // a new ephemeral port per connection, as a client's operating system picks one
        self.ids.sport = (20_000 + c.connections % 40_000) as u16;
        self.sender = TcpSender::with_iss(tcp, self.ids, Some(bytes), iss);
        self.receiver = TcpReceiver::with_iss(tcp, self.ids, iss);
        self.carried = Some(c);
        self.sender.start(now, out);
    }
    /// Data packets the sender emitted so far, retransmissions included, whichever the
    /// transport: the packets "sent by each flow" of the HCF paper's measures.
    #[inline]
    pub fn data_pkts_sent(&self) -> u64 {
        match &self.xpass {
            Some(x) => x.sender.stats.data_pkts,
            None => self.sender.stats().data_segments_sent + self.carried.as_ref().map_or(0, |c| c.stats.data_segments_sent),
        }
    }
    /// The deadline of endpoint `side` (0 sender, 1 receiver).
    #[inline]
    pub fn deadline(&self, side: usize) -> Option<SimTime> {
        match (&self.xpass, side) {
            (Some(x), 0) => x.sender.next_deadline(),
            (Some(x), _) => x.receiver.next_deadline(),
            (None, 0) => self.sender.next_deadline(),
            (None, _) => self.receiver.next_deadline(),
        }
    }
    /// The sender opens the connection (its SYN, or ExpressPass's credit request).
    #[inline]
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        match self.xpass.as_deref_mut() {
            Some(x) => x.sender.start(now, out),
            None => self.sender.start(now, out),
        }
    }
    /// A packet of this flow reaches its sender.
    #[inline]
    pub fn to_sender(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        match self.xpass.as_deref_mut() {
            Some(x) => x.sender.on_packet(pkt, now, out),
            None => self.sender.on_packet(pkt, now, out),
        }
    }
    /// A packet of this flow reaches its receiver.
    #[inline]
    pub fn to_receiver(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        match self.xpass.as_deref_mut() {
            Some(x) => x.receiver.on_packet(pkt, now, out),
            None => self.receiver.on_packet(pkt, now, out),
        }
    }
    /// The timer of endpoint `side` (0 sender, 1 receiver) fires.
    #[inline]
    pub fn on_timer(&mut self, side: usize, now: SimTime, out: &mut Vec<Packet>) {
        match (self.xpass.as_deref_mut(), side) {
            (Some(x), 0) => x.sender.on_timer(now, out),
            (Some(x), _) => x.receiver.on_timer(now, out),
            (None, 0) => self.sender.on_timer(now, out),
            (None, _) => self.receiver.on_timer(now, out),
        }
    }
    /// The application hands the sender `bytes` more to send.
    #[inline]
    pub fn write(&mut self, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        match self.xpass.as_deref_mut() {
            Some(x) => x.sender.write(bytes, now, out),
            None => self.sender.write(bytes, now, out),
        }
    }
}

impl TcpFlow {
    /// A flow of group `group` from `ids.src` to `ids.dst`, starting at `start`, whose sender
    /// is `sender` (a bulk sender of `size` bytes, or a persistent one, built from `tcp`) and
    /// whose receiver is built from `tcp`.
    pub fn new(tcp: &TcpConfig, ids: FlowIds, group: u16, size: Option<u64>, start: SimTime, sender: TcpSender) -> TcpFlow {
        TcpFlow {
            ids,
            group,
            size,
            start,
            sender,
            receiver: TcpReceiver::new(tcp, ids),
            timer_at: [None, None],
            deadline_seen: [None, None],
            timer_f: [0.0, 0.0],
            delivered_at_window: 0,
            sent_at_window: 0,
            xpass: None,
            carried: None,
            conn: NO_CONN,
        }
    }
}

#[derive(Debug)]
pub struct UdpSource {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub pattern: UdpPattern,
    pub size: u32,
    /// Mean time between packets.
    pub gap: SimDuration,
    pub start: SimTime,
    pub rng: Rng,
    pub pkts_sent: u64,
    /// `pkts_sent` when the measurement window opened.
    pub pkts_sent_at_window: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_received_at_window: u64,
}

impl UdpSource {
    /// The gap to the next packet.
    pub fn next_gap(&mut self) -> SimDuration {
        match self.pattern {
            UdpPattern::Cbr => self.gap,
            UdpPattern::Poisson => {
                // Inverse-transform exponential; 1 - u is in (0, 1], so ln is finite.
                let u: f64 = self.rng.gen();
                SimDuration::from_secs_f64(-(1.0 - u).ln() * self.gap.as_secs_f64())
            }
        }
    }

    pub fn packet(&self) -> Packet {
        Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            sport: 5000,
            dport: 5001,
            proto: Proto::Udp,
            size: self.size,
            payload: self.size.saturating_sub(28),
            ..Default::default()
        }
    }
}

/// Creates the TCP flows of every group, numbered across groups in `Scenario::flow_groups()`
/// order. A group with `src`/`dst` places its j-th flow on `src[j % len]` -> `dst[j % len]`;
/// without them (dumbbell), global flow i goes from sender `i % S` to receiver `i % R`; a group
/// with a `pattern` places its flows as [`pattern_pairs`] says. A flow of a group with
/// `tcp.mptcp.subflows = N > 1` is N subflows with consecutive flow ids (persistent senders, each
/// with `conn` set to its connection's index) and one [`ConnSpec`], from which `mptcp.rs` makes
/// the connection; the placement counts it once (j), the numbering N times (i).
pub fn tcp_flows<'a>(sc: &'a Scenario, streams: Streams, built: &Built) -> (Vec<TcpFlow>, Vec<ConnSpec<'a>>) {
    let mut flows = Vec::new();
    let mut conns = Vec::new();
    let (def_src, def_dst) = sc.topology.default_endpoints().unwrap_or_default();
    let ids_of = |names: &[String]| -> Vec<u32> { names.iter().map(|n| built.host(n).expect("validated host name")).collect() };
    let (def_src, def_dst) = (ids_of(&def_src), ids_of(&def_dst));
    for (g, (_, f)) in sc.flow_groups().into_iter().enumerate() {
        let tcp = sc.tcp_of(f);
        let size = f.size(tcp.mss_bytes);
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
                    let mut sub = TcpFlow::new(tcp, ids, g as u16, None, start, TcpSender::new_persistent(tcp, ids));
                    sub.conn = conns.len() as u32;
                    flows.push(sub);
                }
                conns.push(ConnSpec { tcp, first: i, size, start });
                continue;
            }
            let sender = TcpSender::new(tcp, ids, size);
            let mut flow = TcpFlow::new(tcp, ids, g as u16, size, start, sender);
            if f.transport == Transport::Xpass {
                flow.xpass = Some(xpass_ends(sc, streams, built, tcp, ids, size));
            }
            flows.push(flow);
        }
    }
    (flows, conns)
}

/// `TcpFlow::conn` of a flow that is not a subflow of an MPTCP connection.
pub const NO_CONN: u32 = u32::MAX;

/// An MPTCP connection as [`tcp_flows`] lays it out: its TCP settings (`tcp.mptcp` among them),
/// the flow id of its first subflow (the others follow), its size (`None`: long-lived) and its
/// start.
#[derive(Clone, Debug)]
pub struct ConnSpec<'a> {
    pub tcp: &'a TcpConfig,
    pub first: u32,
    pub size: Option<u64>,
    pub start: SimTime,
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
    }
}

/// The ExpressPass ends of flow `ids` (segments of `tcp`'s MSS and headers): a sender of `size`
/// bytes (`None`: long-lived; `Some(0)`: idle until the application writes, as an incast
/// server), a receiver pacing credits for its own NIC's rate from stream `("xpass.credit", flow)`.
pub fn xpass_ends(sc: &Scenario, streams: Streams, built: &Built, tcp: &TcpConfig, ids: FlowIds, size: Option<u64>) -> Box<XpassEnds> {
    let x = sc.xpass_config();
    let nic = built.net.nodes[ids.dst as usize].ports[0];
    let link_bps = built.net.ports[nic as usize].rate.0 as f64;
    Box::new(XpassEnds {
        sender: XpassSender::new(&x, ids, tcp.mss_bytes, tcp.header_bytes, size),
        receiver: XpassReceiver::new(&x, ids, link_bps, sc.mtu(), streams.stream("xpass.credit", ids.flow as u64)),
    })
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

/// The incast servers of `[incast]` as persistent TCP flows (ids from `first`), server i on
/// `src[i % S]` answering client `dst[(i / S) % D]` (`IncastConfig::endpoints`; on a dumbbell by
/// default `s<i>` and `r0`), over `[incast].transport`; and the state that drives their rounds. Server i opens its
/// connection at `i * start_s / servers`; the first request leaves at `start_s`.
pub fn incast(sc: &Scenario, streams: Streams, first: u32, group: u16, built: &Built) -> (Vec<TcpFlow>, Option<Incast>) {
    let Some(ic) = &sc.incast else { return (Vec::new(), None) };
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
            let mut flow = TcpFlow::new(&sc.tcp, ids, group, None, open, TcpSender::new_persistent(&sc.tcp, ids));
            if ic.transport == Transport::Xpass {
                // nothing to send until the first request: credits are asked for on each write
                flow.xpass = Some(xpass_ends(sc, streams, built, &sc.tcp, ids, Some(0)));
            }
            flow
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

/// The UDP background source of `[udp]`, if any, with flow id `flow`; its rate is a fraction
/// of `bottleneck`.
pub fn udp_source(sc: &Scenario, streams: Streams, flow: u32, built: &Built, bottleneck: BitsPerSec) -> Option<UdpSource> {
    let u = sc.udp.as_ref()?;
    let (def_src, def_dst) = sc.topology.default_udp_endpoints().unwrap_or_default();
    let host = built.host(u.src.as_deref().unwrap_or(def_src)).expect("validated UDP source");
    let dst = built.host(u.dst.as_deref().unwrap_or(def_dst)).expect("validated UDP destination");
    if u.rate_fraction <= 0.0 {
        return None;
    }
    let rate = bottleneck.as_f64() * u.rate_fraction;
    let gap = SimDuration::from_secs_f64(u.packet_bytes as f64 * 8.0 / rate);
    Some(UdpSource {
        flow,
        src: host,
        dst,
        pattern: u.pattern,
        size: u.packet_bytes,
        gap,
        start: SimTime::from_secs_f64(u.start_s),
        rng: streams.stream("udp", flow as u64),
        pkts_sent: 0,
        pkts_sent_at_window: 0,
        bytes_sent: 0,
        bytes_received: 0,
        bytes_received_at_window: 0,
    })
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
        let (flows, _) = tcp_flows(&sc, streams, &built);
        let (servers, _) = super::incast(&sc, streams, flows.len() as u32, 2, &built);
        let got: Vec<_> = flows
            .iter()
            .chain(&servers)
            .map(|f| (f.group, f.sender.cc_name(), f.receiver.state(), f.receiver.adv_window()))
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
        let (flows, _) = tcp_flows(&sc, Streams::new(1), &built);
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
