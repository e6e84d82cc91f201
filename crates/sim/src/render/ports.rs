//! The ports family: the measured ports' utilization, drops by reason and marks, FairQ's window
//! rewrites, and `ports.csv` (one row per measured port, columns as `docs/metrics.md` lists
//! them).

use super::num;
use crate::columns::{CatBuilder, Column, Table};
use crate::engine::Sim;
use crate::net::Port;
use dcfair_core::qdisc::{DropReason, Qdisc, QdiscStats};
use serde_json::{json, Map, Value};

pub(super) fn summary(sim: &Sim, window: f64, m: &mut Map<String, Value>) {
    let mut total = QdiscStats::default();
    let mut window_bytes = 0u64;
    for p in sim.world().net.ports.iter().filter(|p| p.measured) {
        let s = &p.queue.stats;
        for r in 0..DropReason::COUNT {
            total.by_reason.dropped_before[r].0 += s.by_reason.dropped_before[r].0;
            total.by_reason.dropped_after[r].0 += s.by_reason.dropped_after[r].0;
        }
        for k in 0..s.by_reason.marks.len() {
            total.by_reason.marks[k] += s.by_reason.marks[k];
        }
        window_bytes += p.window_bytes_out;
    }
    let mut by_reason = Map::new();
    for r in DropReason::ALL {
        let n = total.drops_by_reason(r);
        if n > 0 {
            by_reason.insert(r.as_str().to_string(), json!(n));
        }
    }
    m.insert("utilization".into(), num(Some(window_bytes as f64 * 8.0 / (sim.world().measured_rate_bps * window))));
    m.insert("drops".into(), json!(total.drops_pkts()));
    m.insert("window_drops".into(), json!(sim.measured_window_drops().sum::<u64>()));
    m.insert("marks".into(), json!(total.marks_total()));
    m.insert("drops_by_reason".into(), Value::Object(by_reason));
    if let Some(fq) = sim.world().fairq.as_deref() {
        m.insert("fairq_rewrites".into(), json!(fq.core.rewrites));
    }
}

/// `ports.csv` as columns: one row per measured port.
pub(super) fn table(sim: &Sim, window: f64) -> Table {
    let measured: Vec<_> = sim.world().net.ports.iter().filter(|p| p.measured).collect();
    let mut port = CatBuilder::new();
    let mut kind = CatBuilder::new();
    for p in &measured {
        port.push(&p.name);
        kind.push(p.queue.qdisc.name());
    }
    let u64s = |f: &dyn Fn(&Port) -> u64| Column::U64(measured.iter().map(|p| f(p)).collect());
    let mut t = Table::new();
    t.push("port", port.finish());
    t.push("packets_out", u64s(&|p| p.queue.stats.dequeued_pkts));
    t.push("bytes_out", u64s(&|p| p.queue.stats.dequeued_bytes));
    t.push(
        "utilization",
        Column::F64(
            measured
                .iter()
                .map(|p| if window > 0.0 { p.window_bytes_out as f64 * 8.0 / (p.rate.as_f64() * window) } else { f64::NAN })
                .collect(),
        ),
    );
    t.push("drops", u64s(&|p| p.queue.stats.drops_pkts()));
    t.push("marks", u64s(&|p| p.queue.stats.marks_total()));
    t.push("max_queue_pkts", u64s(&|p| p.queue.stats.max_len_pkts));
    for r in DropReason::ALL {
        t.push(format!("drops_{}", r.as_str()), u64s(&|p| p.queue.stats.drops_by_reason(r)));
    }
    t.push("queue_kind", kind.finish());
    t.push("rate_bps", u64s(&|p| p.rate.0));
    t.push("max_queue_bytes", u64s(&|p| p.queue.stats.max_len_bytes));
    t.push("window_drops", Column::U64(sim.measured_window_drops().collect()));
    t
}
