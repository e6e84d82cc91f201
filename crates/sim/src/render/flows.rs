//! The flows family: per-flow figures of the TCP flows over the measurement window, the UDP
//! source's throughput, and `flows.csv` (one row per flow, TCP flows first, then UDP sources).

use super::{insert_fct, num};
use crate::columns::{CatBuilder, Column, Table};
use crate::engine::Sim;
use crate::metrics::{jain, mean, variance, FlowObs};
use crate::workload::TcpFlow;
use serde_json::{json, Map, Value};

/// Per-flow figures of the TCP flows, by flow id, shared with the groups family.
pub(super) struct Figures {
    /// Data packets received in the window.
    pub pkts: Vec<f64>,
    /// Data packets sent in the window, retransmissions included.
    pub sent: Vec<f64>,
    /// Longest time without a delivery, seconds.
    pub gaps: Vec<f64>,
    /// Bits delivered in the window per second of window.
    pub goodput: Vec<f64>,
}

impl Figures {
    pub fn of(sim: &Sim, window: f64) -> Figures {
        let n_tcp = sim.tcp.len();
        Figures {
            pkts: sim.obs[..n_tcp].iter().map(|o| o.pkts_in_window as f64).collect(),
            sent: sim.tcp.iter().map(|f| sent_in_window(f) as f64).collect(),
            gaps: sim.tcp.iter().zip(&sim.obs).map(|(f, o)| o.max_gap_until(f.start, sim.end).as_secs_f64()).collect(),
            goodput: sim
                .tcp
                .iter()
                .map(|f| (f.delivered_bytes() - f.delivered_at_window.min(f.delivered_bytes())) as f64 * 8.0 / window)
                .collect(),
        }
    }
}

/// The share of `xs` that is zero (`None` for no flow).
pub(super) fn zero_fraction(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().filter(|&&x| x == 0.0).count() as f64 / xs.len() as f64)
}

/// The flow completion time of `f`, seconds, if it completed.
pub(super) fn fct_of(f: &TcpFlow, o: &FlowObs) -> Option<f64> {
    o.completed.map(|c| (c - f.start).as_secs_f64())
}

pub(super) fn summary(sim: &Sim, fig: &Figures, window: f64, m: &mut Map<String, Value>) {
    let n_tcp = sim.tcp.len();
    let fcts: Vec<f64> = sim.tcp.iter().zip(&sim.obs).filter_map(|(f, o)| fct_of(f, o)).collect();
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
    m.insert("flows".into(), json!(n_tcp));
    m.insert("flows_completed".into(), json!(fcts.len()));
    m.insert("timeouts".into(), json!(sim.tcp.iter().map(|f| f.sender_stats().timeouts).sum::<u64>()));
    m.insert("retransmits".into(), json!(sim.tcp.iter().map(|f| f.sender_stats().retransmits).sum::<u64>()));
    m.insert("throughput_bps_tcp".into(), num(mean(&fig.goodput)));
    if let Some(u) = sim.udp.first() {
        let got = u.bytes_received - u.bytes_received_at_window;
        m.insert("throughput_bps_udp".into(), num(Some(got as f64 * 8.0 / window)));
    }
    insert_fct(m, "", &fcts);
}

/// `flows.csv` as columns: one row per flow, TCP flows first, then UDP sources.
pub(super) fn table(sim: &Sim) -> Table {
    let groups = &sim.group_names;
    let n = sim.tcp.len() + sim.udp.len();
    let name = |a: u32| sim.net.nodes[a as usize].name.as_str();
    let (mut flow_id, mut src, mut dst, mut kind) = (Vec::with_capacity(n), CatBuilder::new(), CatBuilder::new(), CatBuilder::new());
    let (mut start_s, mut end_s, mut fct_s, mut max_gap_s) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut bytes_sent, mut bytes_delivered, mut pkts_in_window, mut retransmits, mut timeouts) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut pkts_sent_in_window = Vec::with_capacity(n);
    let mut group = CatBuilder::new();
    let mut size_bytes = Vec::with_capacity(n);
    for (f, o) in sim.tcp.iter().zip(&sim.obs) {
        let st = f.sender_stats();
        flow_id.push(f.ids.flow as u64);
        src.push(name(f.ids.src));
        dst.push(name(f.ids.dst));
        kind.push("tcp");
        start_s.push(f.start.as_secs_f64());
        end_s.push(o.completed.map_or(f64::NAN, |c| c.as_secs_f64()));
        bytes_sent.push(st.bytes_sent);
        bytes_delivered.push(f.delivered_bytes());
        pkts_in_window.push(o.pkts_in_window);
        pkts_sent_in_window.push(sent_in_window(f));
        fct_s.push(fct_of(f, o).unwrap_or(f64::NAN));
        max_gap_s.push(o.max_gap_until(f.start, sim.end).as_secs_f64());
        retransmits.push(st.retransmits);
        timeouts.push(st.timeouts);
        group.push(&groups[f.group as usize]);
        size_bytes.push(f.size.map_or(f64::NAN, |b| b as f64));
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
