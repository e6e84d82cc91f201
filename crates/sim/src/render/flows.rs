//! The flows family: per-flow figures of the flows over the measurement window, the background
//! source's throughput, and `flows.csv` (one row per flow, in flow id order: the flows the
//! figures count, then the background sources).
//!
//! Flows bound by their transport (an MPTCP connection's subflows) are one row (`Row`), under
//! their first flow's id: its bytes delivered are the bond's own in-order bytes (the data
//! ACK), its gap and FCT the bond's observation (`workload::Bound`), its packet and loss counts
//! the sums over its flows. Every per-flow figure of the summary (Jain, starvation, throughput,
//! FCT) counts rows, so a connection counts once whatever its subflows. The bound flows
//! themselves are the rows of `subflows.csv` ([`subflows_table`]).

use super::{insert_fct, num};
use crate::columns::{CatBuilder, Column, Table};
use crate::engine::Sim;
use crate::jobs::NOT_STARTED;
use crate::metrics::{jain, mean, variance, FlowObs};
use crate::workload::{Flow, NO_BOND};
use dcfair_core::tcp::SenderStats;
use serde_json::{json, Map, Value};

/// One counted row of flows.csv: a flow on its own, or a bond (module doc).
pub(super) struct Row<'a> {
    /// The flow (a bond: its first flow), for its ids, group, start and kind.
    pub flow: &'a Flow,
    /// Receiver-side observation: the flow's, or the bond's.
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

/// The rows of flows.csv of the flows the figures count (all but the background sources), in
/// flow id order.
pub(super) fn rows(sim: &Sim) -> Vec<Row<'_>> {
    let w = sim.world();
    let counted = &w.flows[..w.background];
    let mut v = Vec::with_capacity(counted.len());
    for (i, (f, o)) in counted.iter().zip(sim.obs()).enumerate() {
        if f.bond == NO_BOND {
            v.push(Row {
                flow: f,
                obs: o,
                size: f.size,
                delivered: f.delivered_bytes(),
                delivered_at_window: f.delivered_at_window.min(f.delivered_bytes()),
                pkts_in_window: o.pkts_in_window,
                sent_in_window: sent_in_window(f),
                stats: f.ends.sender_stats(),
            });
            continue;
        }
        let b = &w.bonds[f.bond as usize];
        let subs = b.bond.flows();
        if subs.start != i {
            continue;
        }
        let mut stats = SenderStats::default();
        for s in &w.flows[subs.clone()] {
            stats.add(&s.ends.sender_stats());
        }
        let delivered = b.bond.delivered_bytes();
        v.push(Row {
            flow: f,
            obs: &b.obs,
            size: b.bond.size(),
            delivered,
            delivered_at_window: b.delivered_at_window.min(delivered),
            pkts_in_window: sim.obs()[subs.clone()].iter().map(|o| o.pkts_in_window).sum(),
            sent_in_window: w.flows[subs].iter().map(sent_in_window).sum(),
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
        let w = sim.world();
        let rows = rows(sim);
        Figures {
            pkts: rows.iter().map(|r| r.pkts_in_window as f64).collect(),
            sent: rows.iter().map(|r| r.sent_in_window as f64).collect(),
            gaps: rows.iter().map(|r| r.obs.max_gap_until(r.flow.start, w.end).as_secs_f64()).collect(),
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
    let w = sim.world();
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
    // the first background source, under its group's name (`throughput_bps_udp`)
    if let Some(u) = w.flows.get(w.background) {
        let got = u.delivered_bytes() - u.delivered_at_window;
        m.insert(format!("throughput_bps_{}", w.group_names[u.group as usize]), num(Some(got as f64 * 8.0 / window)));
    }
    insert_fct(m, "", &fcts);
    if let Some(order) = sim.order() {
        // over the counted rows' flows: the share of their data arrivals that came out of order
        let ids = || fig.rows.iter().map(|r| r.flow.ids.flow as usize);
        let reordered: u64 = ids().map(|f| order[f].reordered).sum();
        let arrivals: u64 = ids().map(|f| sim.obs()[f].arrivals).sum();
        m.insert("reordered_fraction".into(), num((arrivals > 0).then(|| reordered as f64 / arrivals as f64)));
    }
}

/// `flows.csv` as columns: one row per counted row ([`rows`]), then one per background source.
pub(super) fn table(sim: &Sim, rows: &[Row<'_>]) -> Table {
    let w = sim.world();
    let groups = &w.group_names;
    let background = &w.flows[w.background..];
    let n = rows.len() + background.len();
    let name = |a: u32| w.net.nodes[a as usize].name.as_str();
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
        kind.push(f.ends.row_kind());
        // a job's transfer the run ended before: no start
        start_s.push(if f.start == NOT_STARTED { f64::NAN } else { f.start.as_secs_f64() });
        end_s.push(o.completed.map_or(f64::NAN, |c| c.as_secs_f64()));
        bytes_sent.push(st.bytes_sent);
        bytes_delivered.push(r.delivered);
        pkts_in_window.push(r.pkts_in_window);
        pkts_sent_in_window.push(r.sent_in_window);
        fct_s.push(fct_of(r).unwrap_or(f64::NAN));
        max_gap_s.push(o.max_gap_until(f.start, w.end).as_secs_f64());
        retransmits.push(st.retransmits);
        timeouts.push(st.timeouts);
        group.push(&groups[f.group as usize]);
        size_bytes.push(r.size.map_or(f64::NAN, |b| b as f64));
    }
    for u in background {
        let o: &FlowObs = &sim.obs()[u.ids.flow as usize];
        let st = u.ends.sender_stats();
        flow_id.push(u.ids.flow as u64);
        src.push(name(u.ids.src));
        dst.push(name(u.ids.dst));
        kind.push(u.ends.row_kind());
        start_s.push(u.start.as_secs_f64());
        end_s.push(f64::NAN);
        bytes_sent.push(st.bytes_sent);
        bytes_delivered.push(u.delivered_bytes());
        pkts_in_window.push(o.pkts_in_window);
        pkts_sent_in_window.push(sent_in_window(u));
        fct_s.push(f64::NAN);
        max_gap_s.push(o.max_gap_until(u.start, w.end).as_secs_f64());
        retransmits.push(st.retransmits);
        timeouts.push(st.timeouts);
        group.push(&groups[u.group as usize]);
        size_bytes.push(f64::NAN);
    }
    let mut t = Table::new();
    t.push("flow_id", Column::U64(flow_id));
    t.push("src", src.finish());
    t.push("dst", dst.finish());
    t.push("kind", kind.finish());
    t.push("start_s", Column::OptF64(start_s));
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
    if let Some(order) = sim.order() {
        let ids = rows.iter().map(|r| r.flow.ids.flow).chain(background.iter().map(|u| u.ids.flow));
        t.push("reordered_pkts", Column::U64(ids.map(|f| order[f as usize].reordered).collect()));
    }
    t
}

/// Data packets flow `f` sent inside the measurement window, retransmissions included.
fn sent_in_window(f: &Flow) -> u64 {
    f.data_pkts_sent().saturating_sub(f.sent_at_window)
}

/// `subflows.csv`: one row per flow of every bond (every subflow of every MPTCP connection),
/// in flow id order; `None` when the run has no bond. `connection_id` is the flow id of the
/// bond's row in flows.csv; `path` the switches its data packets cross ([`path_of`]).
pub(super) fn subflows_table(sim: &Sim) -> Option<Table> {
    let w = sim.world();
    if w.bonds.is_empty() {
        return None;
    }
    let name = |a: u32| w.net.nodes[a as usize].name.as_str();
    let (mut conn_id, mut subflow, mut flow_id, mut sport) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut src, mut dst, mut path) = (CatBuilder::new(), CatBuilder::new(), CatBuilder::new());
    let (mut bytes_sent, mut bytes_delivered, mut retransmits, mut timeouts) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for b in &w.bonds {
        let subs = b.bond.flows();
        for (k, f) in w.flows[subs.clone()].iter().enumerate() {
            let st = f.ends.sender_stats();
            conn_id.push(subs.start as u64);
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
/// by `>` (the peers of [`path_ports`]' ports but the last, the destination host); the reason
/// it has no single path otherwise.
pub(super) fn path_of(sim: &Sim, f: &Flow) -> String {
    let w = sim.world();
    match path_ports(sim, f) {
        Ok(ports) => {
            let hops = &ports[..ports.len().saturating_sub(1)];
            let names: Vec<&str> = hops.iter().map(|&p| w.net.nodes[w.net.ports[p as usize].peer_node as usize].name.as_str()).collect();
            names.join(">")
        }
        Err(why) => why.into(),
    }
}

/// The output ports a data packet of flow `f` leaves through, from its source's port to the
/// port into its destination: the routes walked with the flow's 5-tuple, protocol and
/// waypoint, as the engine routes each packet (ecmp, symmetric, dst_bits). `Err` names why the
/// flow has no single path: the mode's name under the per-packet modes (`spray`,
/// `spray_round_robin`, `flowlet`, `adaptive`), `"random_packet"` with a core drawn per packet,
/// `"sprayed"` for a sprayed transport's flow (NDP's).
pub(super) fn path_ports(sim: &Sim, f: &Flow) -> Result<Vec<u32>, &'static str> {
    let w = sim.world();
    let via = w.via[f.ids.flow as usize];
    if w.routes.mode().per_packet() {
        return Err(w.routes.mode().as_str());
    }
    if via == crate::engine::VIA_PER_PACKET {
        return Err("random_packet");
    }
    let proto = f.ends.proto();
    if w.routes.sprays(proto) {
        return Err("sprayed");
    }
    // no choice below draws from it: the per-packet modes and sprayed packets, the ones that
    // do, have returned
    let mut rng = dcfair_core::rng::Streams::new(0).stream("mptcp.path", 0);
    let mut pkt = f.ids.forward();
    pkt.proto = proto;
    pkt.via = via;
    let mut port = w.net.nodes[f.ids.src as usize].ports[0];
    let mut ports = vec![port];
    while ports.len() <= w.net.nodes.len() {
        let p = &w.net.ports[port as usize];
        if !p.peer_switch {
            break;
        }
        pkt.hops = pkt.hops.saturating_add(1);
        match w.routes.next_global_port(p.peer_node, &mut pkt, &mut rng) {
            Some(next) => {
                port = next;
                ports.push(port);
            }
            None => break,
        }
    }
    Ok(ports)
}

/// `paths.csv`: the output ports each flow's data packets leave through, one row per hop
/// (hop 0: the source's port), flows in flow id order (every flow of `w.flows`: MPTCP's
/// subflows each, the background sources); a flow with no single path ([`path_ports`]) has one
/// row with an empty `hop` and `port`, and the reason in `note`.
pub(super) fn paths_table(sim: &Sim) -> Table {
    let w = sim.world();
    let (mut flow_id, mut hop, mut port, mut note) = (Vec::new(), Vec::new(), CatBuilder::new(), CatBuilder::new());
    for f in &w.flows {
        match path_ports(sim, f) {
            Ok(ports) => {
                for (k, &p) in ports.iter().enumerate() {
                    flow_id.push(f.ids.flow as u64);
                    hop.push(k as u64);
                    port.push(&w.net.ports[p as usize].name);
                    note.push("");
                }
            }
            Err(why) => {
                flow_id.push(f.ids.flow as u64);
                hop.push(u64::MAX);
                port.push("");
                note.push(why);
            }
        }
    }
    let mut t = Table::new();
    t.push("flow_id", Column::U64(flow_id));
    t.push("hop", Column::OptU64(hop));
    t.push("port", port.finish());
    t.push("note", note.finish());
    t
}
