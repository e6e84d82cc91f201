//! The incast family: completed rounds (one request to every server), the block's goodput,
//! round times, and answer times (one server's share of one request, as its client sees it).

use super::num;
use crate::metrics::{mean, percentile, std_dev};
use crate::workload::Incast;
use serde_json::{json, Map, Value};

pub(super) fn summary(ic: &Incast, m: &mut Map<String, Value>) {
    let rt: Vec<f64> = ic.round_times.iter().map(|d| d.as_secs_f64()).collect();
    let total: f64 = rt.iter().sum();
    let block = ic.per_server * ic.servers as u64;
    m.insert("rounds_completed".into(), json!(rt.len()));
    m.insert("block_bytes".into(), json!(block));
    m.insert("block_goodput_bps".into(), num((total > 0.0).then(|| block as f64 * 8.0 * rt.len() as f64 / total)));
    m.insert("round_time_mean_s".into(), num(mean(&rt)));
    m.insert("round_time_p99_s".into(), num(percentile(&rt, 99.0)));
    m.insert("round_time_max_s".into(), num(rt.iter().cloned().reduce(f64::max)));
    let at: Vec<f64> = ic.answer_times.iter().map(|d| d.as_secs_f64()).collect();
    m.insert("answers_completed".into(), json!(at.len()));
    m.insert("answer_time_mean_s".into(), num(mean(&at)));
    m.insert("answer_time_std_s".into(), num(std_dev(&at)));
    m.insert("answer_time_p99_s".into(), num(percentile(&at, 99.0)));
    m.insert("answer_time_max_s".into(), num(at.iter().cloned().reduce(f64::max)));
}
