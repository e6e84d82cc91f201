//! `[poisson]` flow arrivals end to end: the flows run, finish and are measured (fixed seeds).

use crate::common;
use crate::common::metrics;
use dcfair_sim::Results;

/// 8 hosts at 10 Gbit/s on a leaf-spine with 4 us links; web search at 30 % load for 20 ms.
fn scenario() -> String {
    let cdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/workloads/websearch_cdf.txt");
    format!(
        r#"
        name = "poisson"
        [sim]
        duration_s = 0.3
        [topology]
        kind = "leaf_spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 4
        host_rate_mbps = 10000.0
        fabric_rate_mbps = 20000.0
        link_delay_us = 4.0
        [queue]
        limit_pkts = 200
        [tcp]
        min_rto_ms = 2.0
        [poisson]
        load = 0.3
        cdf_file = "{cdf}"
        cdf_unit = "packets"
        stop_s = 0.02
        "#
    )
}

fn go(extra: &[(&str, &str)], seed: u64) -> Results {
    common::go_seeded(&scenario(), extra, seed)
}

#[test]
fn poisson_flows_run_finish_and_get_size_class_metrics() {
    let r = go(&[], 1);
    let m = metrics(&r);
    let n = m["poisson_flows"].as_u64().unwrap();
    // 24 Gbit/s offered over 20 ms by 1.66 MB flows: about 36 flows
    assert!((15..=70).contains(&n), "{n} flows");
    assert_eq!(m["flows"].as_u64(), Some(n));
    assert_eq!(m["flows_completed"].as_u64(), Some(n), "all finish in 0.3 s: {}", r.summary_json);
    assert_eq!(m["flows_size_all"].as_u64(), Some(n));
    let by_class: u64 = ["small", "mid", "large"].iter().map(|c| m[format!("flows_size_{c}")].as_u64().unwrap()).sum();
    assert_eq!(by_class, n, "small, mid and large partition the flows");
    assert!(m["poisson_reference_bps"].as_f64() == Some(8e10));
    // a slowdown is at least about 1 (the ideal leaves out headers, handshake, store-and-forward)
    let s = m["slowdown_mean_size_all"].as_f64().unwrap();
    assert!(s >= 1.0, "slowdown {s}");
    let tput = m["mean_throughput_bps_size_all"].as_f64().unwrap();
    assert!(tput > 0.0 && tput <= 1e10, "mean throughput {tput}");
    for k in ["fct_mean_s_size_small", "fct_p50_s_size_small", "fct_p99_s_size_small", "fct_max_s_size_small", "slowdown_p99_size_small"] {
        assert!(m[k].is_number(), "{k}: {}", r.summary_json);
    }
    // classes without flows are null, never missing
    assert!(m.get("fct_mean_s_size_large").is_some());
    // flows.csv: every flow in group poisson, ids dense, starts in [0, 0.02)
    let lines: Vec<&str> = r.flows_csv.lines().collect();
    assert_eq!(lines.len() as u64, n + 1);
    // group, size_bytes (a whole number of bytes for every flow), read by name
    let (group, size) = (column(&r.flows_csv, "group"), column(&r.flows_csv, "size_bytes"));
    assert!(group.iter().all(|g| g == "poisson") && size.iter().all(|b| b.parse::<u64>().is_ok()), "{}", lines[1]);
}

#[test]
fn slowdown_percentiles_are_reported_on_request_only() {
    let m = metrics(&go(&[], 1));
    assert!(m.get("slowdown_p50_size_all").is_none() && m.get("slowdown_p95_size_all").is_none());
    let m = metrics(&go(&[("poisson.slowdown_percentiles", "true")], 1));
    let p = |q: &str| m[format!("slowdown_{q}_size_all")].as_f64().unwrap();
    assert!(1.0 <= p("p50") && p("p50") <= p("p95") && p("p95") <= p("p99"), "{} {} {}", p("p50"), p("p95"), p("p99"));
}

/// Column `name` of a CSV text (`docs/metrics.md` fixes the names of flows.csv's columns, not
/// their places).
fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    lines.map(|l| l.split(',').nth(i).unwrap().to_string()).collect()
}

#[test]
fn one_packet_flows_are_their_own_group_and_runs_are_deterministic() {
    let a = go(&[("poisson.one_packet_fraction", "0.1")], 5);
    let b = go(&[("poisson.one_packet_fraction", "0.1")], 5);
    let mask = |s: &str| s.lines().filter(|l| !l.contains("wall_time_s")).collect::<Vec<_>>().join("\n");
    assert_eq!(mask(&a.summary_json), mask(&b.summary_json));
    assert_eq!(a.flows_csv, b.flows_csv);
    let m = metrics(&a);
    // 10 % of 24 Gbit/s in 1460-byte flows for 20 ms: about 4100 flows
    // 1-packet flows: group poisson_1pkt, size_bytes one segment
    let (group, size) = (column(&a.flows_csv, "group"), column(&a.flows_csv, "size_bytes"));
    let ones = group.iter().zip(&size).filter(|(g, b)| *g == "poisson_1pkt" && *b == "1460").count();
    assert_eq!(ones, group.iter().filter(|g| *g == "poisson_1pkt").count());
    assert!((3500..4700).contains(&ones), "{ones}");
    assert!(m["fct_mean_s_poisson_1pkt"].is_number(), "per-group keys: {}", a.summary_json);
    assert!(m["fct_mean_s_poisson"].is_number());
    assert!(m["flows_size_1pkt"].as_u64().unwrap() >= ones as u64);
    let f = m["poisson_one_packet_byte_fraction"].as_f64().unwrap();
    assert!(f > 0.02 && f < 0.4, "{f}: one long-tailed draw of 20 ms");
}
