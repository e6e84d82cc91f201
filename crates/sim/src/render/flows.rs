//! The flows family: per-flow figures of the TCP flows over the measurement window, the UDP
//! source's throughput, and `flows.csv` (one row per flow, TCP flows first, then UDP sources).
//!
//! An MPTCP connection is one row (`Row`), under its first subflow's flow id: its bytes
//! delivered are the data ACK, its gap and FCT the data level's (`mptcp.rs`), its packet and
//! loss counts the sums over its subflows. Every per-flow figure of the summary (Jain,
//! starvation, throughput, FCT) counts rows, so a connection counts once whatever its
//! subflows. The subflows themselves are the rows of `subflows.csv` ([`subflows_table`]).

use super::{insert_fct, num};
use crate::columns::{CatBuilder, Column, Table};
use crate::engine::Sim;
use crate::metrics::{jain, mean, variance, FlowObs};
use crate::mptcp::NO_CONN;
use crate::routing::RoutingMode;
use crate::workload::TcpFlow;
use dcfair_core::tcp::SenderStats;
use serde_json::{json, Map, Value};

/// One TCP row of flows.csv: a plain flow, or an MPTCP connection (module doc).
pub(super) struct Row<'a> {
    /// The flow (an MPTCP connection: its first subflow), for its ids, group and start.
    pub flow: &'a TcpFlow,
    /// Receiver-side observation: the flow's, or the connection's data level.
    pub obs: &'a FlowObs,
    pub size: Option<u64>,
    /// In-order bytes delivered, and as many when the window opened.
    pub delivered: u64,
    pub delivered_at_window: u64,
    /// Data packets received, and sent (retransmissions included), in the window.
    pub pkts_in_window: u64,
    pub sent_in_window: u64,
    pub stats: SenderStats,
}

/// The TCP rows of flows.csv, in flow id order.
pub(super) fn rows(sim: &Sim) -> Vec<Row<'_>> {
    let mut v = Vec::with_capacity(sim.tcp.len());
    for (i, (f, o)) in sim.tcp.iter().zip(&sim.obs).enumerate() {
        if f.conn == NO_CONN {
            v.push(Row {
                flow: f,
                obs: o,
                size: f.size,
                delivered: f.delivered_bytes(),
                delivered_at_window: f.delivered_at_window.min(f.delivered_bytes()),
                pkts_in_window: o.pkts_in_window,
                sent_in_window: sent_in_window(f),
                stats: f.sender_stats(),
            });
            continue;
        }
        let c = &sim.conns[f.conn as usize];
        if c.first as usize != i {
            continue;
        }
        let subs = c.range();
        let mut stats = SenderStats::default();
        for s in &sim.tcp[subs.clone()] {
            stats.add(s.sender.stats());
        }
        v.push(Row {
            flow: f,
            obs: &c.obs,
            size: c.size,
            delivered: c.delivered_bytes(),
            delivered_at_window: c.delivered_at_window.min(c.delivered_bytes()),
            pkts_in_window: sim.obs[subs.clone()].iter().map(|o| o.pkts_in_window).sum(),
            sent_in_window: sim.tcp[subs].iter().map(sent_in_window).sum(),
            stats,
        });
    }
    v
}

/// Per-row figures of the TCP rows ([`rows`]), shared with the groups family.
pub(super) struct Figures<'a> {
    pub rows: Vec<Row<'a>>,
    /// Data packets received in the window.
    pub pkts: Vec<f64>,
    /// Data packets sent in the window, retransmissions included.
    pub sent: Vec<f64>,
    /// Longest time without a delivery, seconds.
    pub gaps: Vec<f64>,
    /// Bits delivered in the window per second of window.
    pub goodput: Vec<f64>,
}

impl Figures<'_> {
    pub fn of(sim: &Sim, window: f64) -> Figures<'_> {
        let rows = rows(sim);
        Figures {
            pkts: rows.iter().map(|r| r.pkts_in_window as f64).collect(),
            sent: rows.iter().map(|r| r.sent_in_window as f64).collect(),
            gaps: rows.iter().map(|r| r.obs.max_gap_until(r.flow.start, sim.end).as_secs_f64()).collect(),
            goodput: rows.iter().map(|r| (r.delivered - r.delivered_at_window) as f64 * 8.0 / window).collect(),
            rows,
        }
    }
}

/// The share of `xs` that is zero (`None` for no flow).
pub(super) fn zero_fraction(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().filter(|&&x| x == 0.0).count() as f64 / xs.len() as f64)
}

/// The flow completion time of a row, seconds, if it completed.
pub(super) fn fct_of(r: &Row<'_>) -> Option<f64> {
    r.obs.completed.map(|c| (c - r.flow.start).as_secs_f64())
}

pub(super) fn summary(sim: &Sim, fig: &Figures<'_>, window: f64, m: &mut Map<String, Value>) {
    let fcts: Vec<f64> = fig.rows.iter().filter_map(fct_of).collect();
    m.insert("jain_index".into(), num(jain(&fig.pkts)));
    m.insert("throughput_variance_pkts".into(), num(variance(&fig.pkts)));
    m.insert("starved_fraction".into(), num(zero_fraction(&fig.pkts)));
    m.insert("max_starvation_s".into(), num(fig.gaps.iter().cloned().reduce(f64::max)));
    m.insert("mean_pkts_in_window".into(), num(mean(&fig.pkts)));
    // The same three measures over the packets each flow *sent* in the window (the HCF paper's
    // words), retransmissions included: a flow backing off still sends its retransmissions.
    m.insert("sent_jain_index".into(), num(jain(&fig.sent)));
    m.insert("sent_variance_pkts".into(), num(variance(&fig.sent)));
    m.insert("sent_starved_fraction".into(), num(zero_fraction(&fig.sent)));
    m.insert("mean_pkts_sent_in_window".into(), num(mean(&fig.sent)));
    m.insert("flows".into(), json!(fig.rows.len()));
    m.insert("flows_completed".into(), json!(fcts.len()));
    m.insert("timeouts".into(), json!(fig.rows.iter().map(|r| r.stats.timeouts).sum::<u64>()));
    m.insert("retransmits".into(), json!(fig.rows.iter().map(|r| r.stats.retransmits).sum::<u64>()));
    m.insert("throughput_bps_tcp".into(), num(mean(&fig.goodput)));
    if let Some(u) = sim.udp.first() {
        let got = u.bytes_received - u.bytes_received_at_window;
        m.insert("throughput_bps_udp".into(), num(Some(got as f64 * 8.0 / window)));
    }
    insert_fct(m, "", &fcts);
}

/// `flows.csv` as columns: one row per flow, TCP flows first, then UDP sources.
pub(super) fn table(sim: &Sim, rows: &[Row<'_>]) -> Table {
    let groups = &sim.group_names;
    let n = rows.len() + sim.udp.len();
    let name = |a: u32| sim.net.nodes[a as usize].name.as_str();
    let (mut flow_id, mut src, mut dst, mut kind) = (Vec::with_capacity(n), CatBuilder::new(), CatBuilder::new(), CatBuilder::new());
    let (mut start_s, mut end_s, mut fct_s, mut max_gap_s) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut bytes_sent, mut bytes_delivered, mut pkts_in_window, mut retransmits, mut timeouts) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut pkts_sent_in_window = Vec::with_capacity(n);
    let mut group = CatBuilder::new();
    let mut size_bytes = Vec::with_capacity(n);
    for r in rows {
        let (f, o, st) = (r.flow, r.obs, &r.stats);
        flow_id.push(f.ids.flow as u64);
        src.push(name(f.ids.src));
        dst.push(name(f.ids.dst));
        kind.push("tcp");
        start_s.push(f.start.as_secs_f64());
        end_s.push(o.completed.map_or(f64::NAN, |c| c.as_secs_f64()));
        bytes_sent.push(st.bytes_sent);
        bytes_delivered.push(r.delivered);
        pkts_in_window.push(r.pkts_in_window);
        pkts_sent_in_window.push(r.sent_in_window);
        fct_s.push(fct_of(r).unwrap_or(f64::NAN));
        max_gap_s.push(o.max_gap_until(f.start, sim.end).as_secs_f64());
        retransmits.push(st.retransmits);
        timeouts.push(st.timeouts);
        group.push(&groups[f.group as usize]);
        size_bytes.push(r.size.map_or(f64::NAN, |b| b as f64));
    }
    for u in &sim.udp {
        let o: &FlowObs = &sim.obs[u.flow as usize];
        flow_id.push(u.flow as u64);
        src.push(name(u.src));
        dst.push(name(u.dst));
        kind.push("udp");
        start_s.push(u.start.as_secs_f64());
        end_s.push(f64::NAN);
        bytes_sent.push(u.bytes_sent);
        bytes_delivered.push(u.bytes_received);
        pkts_in_window.push(o.pkts_in_window);
        pkts_sent_in_window.push(u.pkts_sent - u.pkts_sent_at_window);
        fct_s.push(f64::NAN);
        max_gap_s.push(o.max_gap_until(u.start, sim.end).as_secs_f64());
        retransmits.push(0);
        timeouts.push(0);
        group.push("udp");
        size_bytes.push(f64::NAN);
    }
    let mut t = Table::new();
    t.push("flow_id", Column::U64(flow_id));
    t.push("src", src.finish());
    t.push("dst", dst.finish());
    t.push("kind", kind.finish());
    t.push("start_s", Column::F64(start_s));
    t.push("end_s", Column::OptF64(end_s));
    t.push("bytes_sent", Column::U64(bytes_sent));
    t.push("bytes_delivered", Column::U64(bytes_delivered));
    t.push("pkts_in_window", Column::U64(pkts_in_window));
    t.push("fct_s", Column::OptF64(fct_s));
    t.push("max_gap_s", Column::F64(max_gap_s));
    t.push("retransmits", Column::U64(retransmits));
    t.push("timeouts", Column::U64(timeouts));
    t.push("group", group.finish());
    t.push("size_bytes", Column::OptF64(size_bytes));
    t.push("pkts_sent_in_window", Column::U64(pkts_sent_in_window));
    t
}

/// Data packets flow `f` sent inside the measurement window, retransmissions included.
fn sent_in_window(f: &TcpFlow) -> u64 {
    f.data_pkts_sent().saturating_sub(f.sent_at_window)
}

/// `subflows.csv`: one row per subflow of every MPTCP connection, in flow id order; `None`
/// when the run has no connection. `connection_id` is the flow id of the connection's row in
/// flows.csv; `path` the switches its data packets cross ([`path_of`]).
pub(super) fn subflows_table(sim: &Sim) -> Option<Table> {
    if sim.conns.is_empty() {
        return None;
    }
    let name = |a: u32| sim.net.nodes[a as usize].name.as_str();
    let (mut conn_id, mut subflow, mut flow_id, mut sport) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut src, mut dst, mut path) = (CatBuilder::new(), CatBuilder::new(), CatBuilder::new());
    let (mut bytes_sent, mut bytes_delivered, mut retransmits, mut timeouts) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in &sim.conns {
        for (k, f) in c.subflows(&sim.tcp).iter().enumerate() {
            let st = f.sender.stats();
            conn_id.push(c.first as u64);
            subflow.push(k as u64);
            flow_id.push(f.ids.flow as u64);
            src.push(name(f.ids.src));
            dst.push(name(f.ids.dst));
            sport.push(f.ids.sport as u64);
            path.push(&path_of(sim, f));
            bytes_sent.push(st.bytes_sent);
            bytes_delivered.push(f.delivered_bytes());
            retransmits.push(st.retransmits);
            timeouts.push(st.timeouts);
        }
    }
    let mut t = Table::new();
    t.push("connection_id", Column::U64(conn_id));
    t.push("subflow", Column::U64(subflow));
    t.push("flow_id", Column::U64(flow_id));
    t.push("src", src.finish());
    t.push("dst", dst.finish());
    t.push("sport", Column::U64(sport));
    t.push("path", path.finish());
    t.push("bytes_sent", Column::U64(bytes_sent));
    t.push("bytes_delivered", Column::U64(bytes_delivered));
    t.push("retransmits", Column::U64(retransmits));
    t.push("timeouts", Column::U64(timeouts));
    Some(t)
}

/// The switches a data packet of flow `f` crosses from its source to its destination, joined
/// by `>`: the routes walked with the flow's 5-tuple and waypoint, as the engine routes each
/// packet (ecmp, symmetric, dst_bits). `"spray"` under per-packet spraying and
/// `"random_packet"` with a core drawn per packet: those have no single path.
pub(super) fn path_of(sim: &Sim, f: &TcpFlow) -> String {
    let via = sim.via[f.ids.flow as usize];
    if sim.routes.mode() == RoutingMode::Spray {
        return "spray".into();
    }
    if via == crate::engine::VIA_PER_PACKET {
        return "random_packet".into();
    }
    // no choice below draws from it: spray, the one mode that does, has returned
    let mut rng = dcfair_core::rng::Streams::new(0).stream("mptcp.path", 0);
    let mut pkt = f.ids.forward();
    pkt.via = via;
    let mut names: Vec<&str> = Vec::new();
    let mut port = sim.net.nodes[f.ids.src as usize].ports[0];
    while names.len() <= sim.net.nodes.len() {
        let p = &sim.net.ports[port as usize];
        if !p.peer_switch {
            break;
        }
        names.push(&sim.net.nodes[p.peer_node as usize].name);
        pkt.hops = pkt.hops.saturating_add(1);
        match sim.routes.next_global_port(p.peer_node, &mut pkt, &mut rng) {
            Some(next) => port = next,
            None => break,
        }
    }
    names.join(">")
}
