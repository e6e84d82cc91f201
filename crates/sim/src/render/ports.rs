//! The ports family: the measured ports' utilization, drops by reason and marks, FairQ's window
//! rewrites, and `ports.csv` (one row per measured port, and with PFC one per port that sent
//! or received a pause frame; columns as `docs/metrics.md` lists them).

use super::num;
use crate::columns::{CatBuilder, Column, Table};
use crate::engine::Sim;
use crate::net::Port;
use crate::pfc::PfcPort;
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
    if sim.world().trimming {
        // over every port, measured or not: where a fabric trims is part of the answer
        let ports = &sim.world().net.ports;
        m.insert("trims".into(), json!(ports.iter().map(|p| p.queue.stats.by_reason.trims.0).sum::<u64>()));
        m.insert("trimmed_bytes".into(), json!(ports.iter().map(|p| p.queue.stats.by_reason.trims.1).sum::<u64>()));
    }
    if let Some(b) = sim.world().buffers.as_deref() {
        m.insert("buffer_max_used_bytes".into(), json!(b.sw.iter().map(|s| s.max_used).max().unwrap_or(0)));
        m.insert("buffer_drops".into(), json!(b.sw.iter().map(|s| s.drops).sum::<u64>()));
    }
}

/// `ports.csv` as columns: one row per measured port, and in a PFC run also one per port that
/// sent or received a pause frame, with the PFC columns (`pfc.rs`).
pub(super) fn table(sim: &Sim, window: f64) -> Table {
    let w = sim.world();
    let pfc = w.pfc.as_deref();
    let active = |i: usize| pfc.is_some_and(|pfc| pfc_active(&pfc.ports[i]));
    let ids: Vec<usize> = (0..w.net.ports.len()).filter(|&i| w.net.ports[i].measured || active(i)).collect();
    let rows: Vec<&Port> = ids.iter().map(|&i| &w.net.ports[i]).collect();
    let mut port = CatBuilder::new();
    let mut kind = CatBuilder::new();
    for p in &rows {
        port.push(&p.name);
        kind.push(p.queue.qdisc.name());
    }
    let u64s = |f: &dyn Fn(&Port) -> u64| Column::U64(rows.iter().map(|p| f(p)).collect());
    let mut t = Table::new();
    t.push("port", port.finish());
    t.push("packets_out", u64s(&|p| p.queue.stats.dequeued_pkts));
    t.push("bytes_out", u64s(&|p| p.queue.stats.dequeued_bytes));
    t.push(
        "utilization",
        Column::F64(
            rows
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
    t.push("window_drops", Column::U64(ids.iter().map(|&i| sim.window_drops(i)).collect()));
    if w.trimming {
        t.push("trims", Column::U64(rows.iter().map(|p| p.queue.stats.by_reason.trims.0).collect()));
    }
    if let Some(pfc) = pfc {
        let of = |f: &dyn Fn(&PfcPort) -> u64| Column::U64(ids.iter().map(|&i| f(&pfc.ports[i])).collect());
        t.push("measured", Column::U64(rows.iter().map(|p| p.measured as u64).collect()));
        t.push("pfc_pauses_sent", of(&|p| p.pauses_sent));
        t.push("pfc_resumes_sent", of(&|p| p.resumes_sent));
        t.push("pfc_pauses_received", of(&|p| p.pause.pauses));
        t.push("pfc_resumes_received", of(&|p| p.pause.resumes));
        t.push("pfc_paused_s", Column::F64(ids.iter().map(|&i| pfc.ports[i].pause.paused_time(w.end).as_secs_f64()).collect()));
        t.push("lossless_packets_out", of(&|p| p.q.packets_out));
        t.push("lossless_bytes_out", of(&|p| p.q.bytes_out));
        t.push("lossless_marks", of(&|p| p.q.marks));
        t.push("lossless_max_queue_bytes", of(&|p| p.q.max_bytes));
        t.push("lossless_drops", of(&|p| p.gate.drops));
        t.push("ingress_max_bytes", of(&|p| p.gate.max_bytes));
    }
    t
}

/// Whether a port takes part in PFC: it sent or received a frame, or dropped for want of headroom.
fn pfc_active(p: &PfcPort) -> bool {
    p.pauses_sent + p.resumes_sent + p.pause.pauses + p.pause.resumes + p.gate.drops > 0
}

/// A PFC run's figures of `summary.json` over every port, and the deadlock (`pfc.rs`).
pub(super) fn pfc_summary(sim: &Sim, m: &mut Map<String, Value>) -> Option<Value> {
    let w = sim.world();
    let pfc = w.pfc.as_deref()?;
    let sum = |f: &dyn Fn(&PfcPort) -> u64| pfc.ports.iter().map(f).sum::<u64>();
    m.insert("pfc_pauses_sent".into(), json!(sum(&|p| p.pauses_sent)));
    m.insert("pfc_resumes_sent".into(), json!(sum(&|p| p.resumes_sent)));
    m.insert("pfc_paused_ports".into(), json!(pfc.ports.iter().filter(|p| p.pause.pauses > 0).count()));
    let paused: f64 = pfc.ports.iter().map(|p| p.pause.paused_time(w.end).as_secs_f64()).sum();
    m.insert("pfc_paused_s".into(), num(Some(paused)));
    m.insert("lossless_drops".into(), json!(sum(&|p| p.gate.drops)));
    m.insert("lossless_marks".into(), json!(sum(&|p| p.q.marks)));
    m.insert("lossless_max_queue_bytes".into(), json!(pfc.ports.iter().map(|p| p.q.max_bytes).max().unwrap_or(0)));
    Some(match &pfc.deadlock {
        None => Value::Null,
        Some(d) => json!({
            "at_s": d.at.as_secs_f64(),
            "ports": d.ports.iter().map(|&p| w.net.ports[p as usize].name.clone()).collect::<Vec<_>>(),
        }),
    })
}
