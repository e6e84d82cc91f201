//! NDP in whole runs (fixed seeds): a k = 8 fat-tree permutation near line rate with spraying
//! and trimming, an incast whose short flows all finish without a timeout, the per-packet
//! routing modes and TCP's reordering window.

use crate::common;
use crate::common::{go, metric};
use dcfair_sim::Results;

const PERMUTATION: &str = include_str!("../../../../scenarios/papers/ndp/permutation.toml");
const INCAST: &str = include_str!("../../../../scenarios/papers/ndp/incast.toml");

/// The values of column `name` of `flows.csv`.
fn flow_col(r: &Results, name: &str) -> Vec<f64> {
    let mut lines = r.flows_csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    lines.map(|l| l.split(',').nth(i).unwrap().parse().unwrap()).collect()
}

#[test]
fn a_k8_permutation_runs_near_line_rate_and_its_worst_flow_close_to_it() {
    let r = go(PERMUTATION, &[]);
    // goodput of each flow over the 8 ms window, as a fraction of the 10 Gbit/s links
    let rates: Vec<f64> = flow_col(&r, "pkts_in_window").iter().map(|p| p * 9000.0 * 8.0 / 0.008 / 1e10).collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let worst = rates.iter().cloned().fold(f64::MAX, f64::min);
    assert!(mean >= 0.90, "mean {mean:.3} of line rate");
    assert!(worst >= 0.80, "worst flow {worst:.3} of line rate");
    assert!(metric(&r, "trims") > 0.0 && metric(&r, "ndp_nacks") > 0.0, "the fabric trims and the receivers NACK");
    assert_eq!(metric(&r, "drops"), 0.0);
    assert!(metric(&r, "reordered_fraction") > 0.1, "sprayed packets arrive out of order");
    // the same run again: byte-identical
    let again = go(PERMUTATION, &[]);
    assert!(r.flows_csv == again.flows_csv && r.ports_csv == again.ports_csv);
}

#[test]
fn spraying_at_random_per_hop_is_behind_the_path_permutation() {
    let perm = go(PERMUTATION, &[("sim.duration_s", "0.004"), ("measure.window_s", "0.003")]);
    let random = go(PERMUTATION, &[("sim.duration_s", "0.004"), ("measure.window_s", "0.003"), ("ndp.paths", "random")]);
    // a sprayed flow has no single path: paths.csv says so
    let sampled = go(PERMUTATION, &[("sim.duration_s", "0.0002"), ("measure.window_s", "0.0001"), ("measure.sample_interval_s", "0.0001")]);
    let paths = sampled.paths.as_ref().unwrap().to_csv();
    assert!(paths.lines().skip(1).all(|l| l.ends_with(",,,sprayed")) && paths.lines().count() == 129, "{paths}");
    let (p, q) = (metric(&perm, "throughput_bps_tcp"), metric(&random, "throughput_bps_tcp"));
    assert!(p > q, "permutation {p:.3e} against random {q:.3e}");
}

#[test]
fn an_incast_of_short_flows_finishes_without_timeouts_near_the_receivers_limit() {
    let r = go(INCAST, &[("flows.count", "15")]);
    let fct = flow_col(&r, "fct_s");
    assert_eq!(fct.len(), 15);
    assert!(fct.iter().all(|f| f.is_finite()), "every flow completes: {fct:?}");
    assert_eq!(metric(&r, "ndp_timeouts"), 0.0);
    assert!(metric(&r, "trims") > 0.0, "the first windows collide and are trimmed");
    // 15 x 50 packets of 9,064 bytes through h0's 10 Gbit/s link take 5.44 ms at best
    let optimal = 15.0 * 50.0 * 9064.0 * 8.0 / 1e10;
    let last = fct.iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.15 * optimal, "the last flow ends at {last:.4} s, optimal {optimal:.4} s");
}

#[test]
fn per_packet_modes_reorder_flowlets_with_a_long_gap_do_not_and_a_one_path_fabric_refuses_them() {
    let tcp = |mode: &str, gap: &str| {
        go(PERMUTATION, &[("flows.transport", "tcp"), ("sim.duration_s", "0.003"), ("measure.window_s", "0.002"), ("routing.mode", mode), ("routing.flowlet_gap_us", gap), ("tcp.mss_bytes", "1460"), ("tcp.header_bytes", "40")])
    };
    for mode in ["spray", "spray_round_robin", "adaptive"] {
        assert!(metric(&tcp(mode, "100"), "reordered_fraction") > 0.05, "{mode}");
    }
    // one flowlet per flow, one path: what arrives out of order are retransmissions alone
    let flowlet = tcp("flowlet", "1000000");
    assert!(metric(&flowlet, "reordered_fraction") < 0.01);
    let sc = dcfair_sim::load_scenario(include_str!("../../../../scenarios/papers/hcf/longflows.toml"), "t.toml", &common::ov(&[("routing.mode", "flowlet")])).unwrap();
    match dcfair_sim::run(&sc, None, None) {
        Err(dcfair_sim::Error::Invalid { key, .. }) => assert_eq!(key, "routing.mode"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn tcps_reordering_window_turns_sprayed_reordering_back_into_throughput() {
    let run = |w: &str| {
        go(PERMUTATION, &[("flows.transport", "tcp"), ("sim.duration_s", "0.005"), ("measure.window_s", "0.004"), ("routing.mode", "spray_round_robin"), ("tcp.mss_bytes", "1460"), ("tcp.header_bytes", "40"), ("tcp.reorder_window_us", w)])
    };
    let (off, on) = (run("0"), run("100"));
    assert!(metric(&on, "retransmits") < 0.1 * metric(&off, "retransmits"), "spurious retransmissions");
    assert!(metric(&on, "throughput_bps_tcp") > 1.2 * metric(&off, "throughput_bps_tcp"));
}
