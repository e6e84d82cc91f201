//! FQ-CoDel and CoDel through the engine (fixed seeds): fair shares for long flows and low
//! delay for a sparse flow on a dumbbell, against DropTail with the same buffer.

use crate::common;
use crate::common::metrics;
use dcfair_sim::{load_scenario, Error, Results};

/// 8 long TCP flows from s0..s7 and 40 two-packet flows from s8, all to r0, over a 1 Gbps
/// bottleneck with a 200-packet buffer (2.4 ms of queue when full). CoDel is scaled to the
/// fabric as paper 003 does (Linux's 5 ms / 100 ms divided by 25 here: RTT ~25 us at 1 Gbps).
const SPARSE: &str = r#"
    name = "fq-codel-sparse"
    seed = 1
    [sim]
    duration_s = 1.0
    [measure]
    window_s = 0.8
    [topology]
    kind = "dumbbell"
    senders = 9
    access_rate_mbps = 10000.0
    access_delay_us = 2.0
    bottleneck_rate_mbps = 1000.0
    bottleneck_delay_us = 2.0
    [queue]
    kind = "droptail"
    limit_pkts = 200
    [queue.fq_codel]
    target_us = 200.0
    interval_us = 4000.0
    [queue.codel]
    target_us = 200.0
    interval_us = 4000.0
    [tcp]
    min_rto_ms = 10.0
    rcv_buf_bytes = 1048576
    [groups.long]
    count = 8
    src = ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"]
    dst = "r0"
    start_min_s = 0.0
    start_max_s = 0.01
    [groups.sparse]
    count = 40
    size_pkts = 2
    src = "s8"
    dst = "r0"
    start_min_s = 0.1
    start_max_s = 0.95
"#;

fn go(extra: &[(&str, &str)]) -> Results {
    common::go(SPARSE, extra)
}

fn num(m: &serde_json::Value, key: &str) -> f64 {
    m[key].as_f64().unwrap_or_else(|| panic!("{key} missing in {m}"))
}

#[test]
fn fq_codel_shares_fairly_and_serves_the_sparse_flow_first() {
    let dt = metrics(&go(&[]));
    let fq = metrics(&go(&[("queue.kind", "fq_codel")]));
    // DropTail: the buffer stands full, the sparse flows wait behind it
    assert!(num(&dt, "fct_mean_s_sparse") > 2e-3, "{dt}");
    // FQ-CoDel: equal long-flow goodput at full utilization...
    assert!(num(&fq, "jain_index_long") > 0.95, "{fq}");
    assert!(num(&fq, "utilization") > 0.95, "{fq}");
    // ...every sparse flow done, at least 10 times faster than behind the DropTail queue
    assert_eq!(num(&fq, "flows_completed"), 40.0);
    let (f, d) = (num(&fq, "fct_mean_s_sparse"), num(&dt, "fct_mean_s_sparse"));
    assert!(f * 10.0 < d, "sparse FCT: fq_codel {f} s, droptail {d} s");
    assert!(num(&fq, "fct_max_s_sparse") < 0.5e-3, "{fq}");
    // CoDel did act, and so did the fattest-queue drop at the shared limit
    assert!(fq["drops_by_reason"]["codel"].as_u64().unwrap() > 0, "{fq}");
    assert!(fq["drops_by_reason"]["longest_queue"].as_u64().unwrap() > 0, "{fq}");
}

#[test]
fn codel_alone_keeps_the_fifo_short() {
    let dt = metrics(&go(&[]));
    let cd = metrics(&go(&[("queue.kind", "codel")]));
    assert!(num(&cd, "utilization") > 0.9, "{cd}");
    assert!(cd["drops_by_reason"]["codel"].as_u64().unwrap() > 0, "{cd}");
    // the sparse flows still wait behind the long flows, but behind a shorter queue
    let (c, d) = (num(&cd, "fct_mean_s_sparse"), num(&dt, "fct_mean_s_sparse"));
    assert!(c * 2.0 < d, "sparse FCT: codel {c} s, droptail {d} s");
}

#[test]
fn same_seed_same_bytes() {
    let a = go(&[("queue.kind", "fq_codel"), ("sim.duration_s", "0.2"), ("measure.window_s", "0.1")]);
    let b = go(&[("queue.kind", "fq_codel"), ("sim.duration_s", "0.2"), ("measure.window_s", "0.1")]);
    assert_eq!(a.flows_csv, b.flows_csv);
}

#[test]
fn bad_values_name_the_key() {
    for (key, value) in [
        ("queue.fq_codel.flows", "0"),
        ("queue.fq_codel.quantum_bytes", "0"),
        ("queue.fq_codel.drop_batch", "0"),
        ("queue.fq_codel.target_us", "0.0"),
        ("queue.fq_codel.interval_us", "-1.0"),
        ("queue.codel.target_us", "-5.0"),
        ("queue.fq_codel.invsqrt", "fast"),
        ("queue.codel.invsqrt", "1"),
    ] {
        // the table is checked whichever discipline runs
        match load_scenario(SPARSE, "sparse.toml", &[(key.to_string(), value.to_string())]) {
            Err(e @ Error::Invalid { .. }) => {
                assert_eq!(e.exit_code(), 2);
                let Error::Invalid { key: k, .. } = e else { unreachable!() };
                assert_eq!(k, key);
            }
            other => panic!("{key} = {value}: expected invalid input, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn linux_newton_estimate_is_a_choice_of_both_tables_and_the_default_stays_exact() {
    for kind in ["fq_codel", "codel"] {
        let key = format!("queue.{kind}.invsqrt");
        let plain = go(&[("queue.kind", kind)]);
        assert_eq!(go(&[("queue.kind", kind), (&key, "exact")]).flows_csv, plain.flows_csv, "{kind}: exact is the default");
        let newton = go(&[("queue.kind", kind), (&key, "newton")]);
        let (a, b) = (metrics(&plain), metrics(&newton));
        assert!(num(&b, "drops") > 0.0 && num(&b, "utilization") > 0.9, "{kind}: {b}");
        // another spacing of the drops: another run
        assert_ne!(newton.flows_csv, plain.flows_csv, "{kind}: {a} against {b}");
    }
}

#[test]
fn drops_in_the_window_are_those_after_it_opens() {
    let late = go(&[("queue.kind", "fq_codel")]);
    let whole = go(&[("queue.kind", "fq_codel"), ("measure.window_s", "1.0")]);
    let (l, w) = (metrics(&late), metrics(&whole));
    // the same run measured over [0.2, 1] s and over [0, 1] s
    assert_eq!(num(&l, "drops"), num(&w, "drops"));
    assert_eq!(num(&w, "window_drops"), num(&w, "drops"), "a window from time zero holds every drop");
    assert!(num(&l, "window_drops") < num(&l, "drops"), "the start-up drops fall before 0.2 s: {l}");
    // ports.csv's column adds up to the summary's
    let col: f64 = late.ports_csv.lines().skip(1).map(|r| r.rsplit(',').next().unwrap().parse::<f64>().unwrap()).sum();
    assert!(late.ports_csv.lines().next().unwrap().ends_with(",window_drops"));
    assert_eq!(col, num(&l, "window_drops"));
}
