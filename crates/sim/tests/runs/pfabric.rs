//! pFabric end to end: its queue, transport and TCP profile against DropTail + NewReno with the
//! same buffer and the same TCP tuning, on a small leaf-spine with the web-search workload
//! (fixed seeds). `docs/mechanisms/pfabric.md`.

use crate::common::metrics;
use dcfair_sim::{load_scenario, run, Results};

/// 16 hosts at 10 Gbit/s on 2 leaves and 2 spines (20 Gbit/s fabric), 1 us links, 36-packet
/// buffers (pFabric's 2 x BDP); web search at 60 % load for 10 ms, TCP tuned by the pFabric
/// profile on both sides. 180 flows per run.
fn scenario() -> String {
    let cdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/workloads/websearch_cdf.txt");
    format!(
        r#"
        name = "pfabric"
        [sim]
        duration_s = 0.2
        [topology]
        kind = "leaf_spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 8
        host_rate_mbps = 10000.0
        fabric_rate_mbps = 20000.0
        link_delay_us = 1.0
        [queue]
        kind = "droptail"
        limit_pkts = 36
        [tcp]
        profile = "pfabric"
        [poisson]
        load = 0.8
        cdf_file = "{cdf}"
        cdf_unit = "packets"
        stop_s = 0.02
        "#
    )
}

/// pFabric: its queue at every switch port and at the host NICs too (pFabric schedules by
/// priority at the end hosts as well; their buffer stays `host_buffer_pkts`), its transport,
/// remaining-size priorities.
fn pfabric() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = [("queue.kind", "pfabric"), ("tcp.cc", "pfabric"), ("tcp.priority", "remaining")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for h in 0..16 {
        v.push((format!("ports.h{h}->l{}.queue.kind", h / 8), "pfabric".into()));
    }
    v
}

fn go(ov: &[(String, String)], seed: u64) -> Results {
    let sc = load_scenario(&scenario(), "t.toml", ov).unwrap();
    run(&sc, Some(seed), None).unwrap()
}

#[test]
fn pfabric_finishes_small_flows_sooner_than_droptail_newreno() {
    for seed in [1, 2] {
        let base = metrics(&go(&[], seed));
        let pf = metrics(&go(&pfabric(), seed));
        let n = base["poisson_flows"].as_u64().unwrap();
        assert_eq!(pf["poisson_flows"].as_u64(), Some(n), "same arrivals");
        for m in [&base, &pf] {
            assert_eq!(m["flows_completed"].as_u64(), Some(n), "every flow ends: {m}");
        }
        let f = |m: &serde_json::Value, k: &str| m[k].as_f64().unwrap();
        let (b, p) = (f(&base, "fct_mean_s_size_small"), f(&pf, "fct_mean_s_size_small"));
        eprintln!("seed {seed}: {n} flows; small-flow mean FCT droptail+newreno {b:.3e} s, pfabric {p:.3e} s; \
                   p99 {:.3e} / {:.3e}; all {:.3e} / {:.3e}; drops {} / {}",
                  f(&base, "fct_p99_s_size_small"), f(&pf, "fct_p99_s_size_small"),
                  f(&base, "fct_mean_s_size_all"), f(&pf, "fct_mean_s_size_all"), base["drops"], pf["drops"]);
        // measured: 3.86e-5 vs 1.84e-4 s (seed 1), 4.46e-5 vs 2.07e-4 s (seed 2), about 4.7x
        assert!(p < 0.5 * b, "seed {seed}: pFabric small-flow mean FCT {p} not half DropTail+NewReno's {b}");
        // and the mean over all flows is lower too (2.9e-3 vs 4.2-4.4e-3 s)
        assert!(f(&pf, "fct_mean_s_size_all") < f(&base, "fct_mean_s_size_all"));
    }
}
