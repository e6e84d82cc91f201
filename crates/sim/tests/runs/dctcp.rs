//! DCTCP end to end (fixed seeds): on a dumbbell with a DropTail marking threshold K, DCTCP keeps
//! the bottleneck queue near K, far below the buffer, at full utilization and without drops,
//! where NewReno without ECN fills the buffer. `docs/mechanisms/dctcp.md` quotes these numbers.

use crate::common;
use crate::common::metric;
use dcfair_sim::columns::Column;
use dcfair_sim::{load_scenario, Results};

/// 10 long flows, 10 Gb/s access, a 1 Gb/s bottleneck, about 100 us base RTT, a 200-packet
/// buffer, K = 20 packets (the DCTCP paper's value at 1 Gb/s), queue sampled every 50 us.
const DUMBBELL: &str = r#"
    name = "dctcp-dumbbell"
    seed = 1
    [sim]
    duration_s = 1.0
    [measure]
    window_s = 0.5
    sample_interval_s = 0.00005
    sample_flows = false
    [topology]
    kind = "dumbbell"
    senders = 10
    access_rate_mbps = 10000.0
    access_delay_us = 5.0
    bottleneck_rate_mbps = 1000.0
    bottleneck_delay_us = 20.0
    [queue]
    kind = "droptail"
    limit_pkts = 200
    [queue.droptail]
    mark_threshold_pkts = 20
    [tcp]
    cc = "dctcp"
    rcv_buf_bytes = 4194304
    min_rto_ms = 10.0
    [flows]
    count = 10
    start_max_s = 0.01
"#;

fn go(extra: &[(&str, &str)]) -> Results {
    common::go(DUMBBELL, extra)
}

fn num(c: &Column, i: usize) -> f64 {
    match c {
        Column::F64(v) | Column::OptF64(v) => v[i],
        Column::U64(v) | Column::OptU64(v) => v[i] as f64,
        Column::Cat { .. } => panic!("categorical"),
    }
}

/// Mean and maximum of the bottleneck's `queue_pkts` samples in the measurement window.
fn queue_stats(r: &Results, from_s: f64) -> (f64, f64) {
    let ts = r.timeseries.as_ref().expect("time series");
    let (t, m, v) = (ts.column("time_s").unwrap(), ts.column("metric").unwrap(), ts.column("value").unwrap());
    let Column::Cat { codes, levels } = m else { panic!("metric is categorical") };
    let q = levels.iter().position(|l| l == "queue_pkts").unwrap() as u32;
    let xs: Vec<f64> = (0..ts.rows()).filter(|&i| codes[i] == q && num(t, i) >= from_s).map(|i| num(v, i)).collect();
    assert!(xs.len() > 1000, "{} samples", xs.len());
    (xs.iter().sum::<f64>() / xs.len() as f64, xs.iter().cloned().fold(0.0, f64::max))
}

#[test]
fn dctcp_holds_the_queue_near_k_where_newreno_fills_the_buffer() {
    let d = go(&[]);
    let (d_mean, d_max) = queue_stats(&d, 0.5);
    let (u, drops, marks) = (metric(&d, "utilization"), metric(&d, "drops"), metric(&d, "marks"));
    eprintln!("dctcp: queue mean {d_mean:.2} max {d_max} utilization {u:.4} drops {drops} marks {marks} timeouts {}", metric(&d, "timeouts"));
    assert!(u > 0.95, "utilization {u}");
    assert!((10.0..=30.0).contains(&d_mean), "mean queue {d_mean} not near K = 20");
    assert!(d_max < 100.0, "max queue {d_max}");
    assert!(drops <= 10.0, "drops {drops}");
    assert!(marks > 1000.0, "marks {marks}");
    assert_eq!(metric(&d, "timeouts"), 0.0);

    let n = go(&[("tcp.cc", "newreno")]);
    let (n_mean, n_max) = queue_stats(&n, 0.5);
    let (nu, ndrops, nmarks) = (metric(&n, "utilization"), metric(&n, "drops"), metric(&n, "marks"));
    eprintln!("newreno: queue mean {n_mean:.2} max {n_max} utilization {nu:.4} drops {ndrops} marks {nmarks}");
    assert!(nu > 0.95, "utilization {nu}");
    assert_eq!(nmarks, 0.0, "Not-ECT packets are never marked");
    assert!(n_max >= 195.0, "NewReno fills the 200-packet buffer: max {n_max}");
    assert!(n_mean > 4.0 * d_mean, "NewReno mean queue {n_mean} vs DCTCP {d_mean}");
    assert!(ndrops > 100.0, "drops {ndrops}");
}

#[test]
fn rfc3168_ecn_newreno_also_avoids_the_drops() {
    let r = go(&[("tcp.cc", "newreno"), ("tcp.ecn", "true")]);
    let (mean, max) = queue_stats(&r, 0.5);
    let (u, drops, marks) = (metric(&r, "utilization"), metric(&r, "drops"), metric(&r, "marks"));
    eprintln!("newreno+ecn: queue mean {mean:.2} max {max} utilization {u:.4} drops {drops} marks {marks}");
    assert!(drops <= 10.0 && marks > 100.0, "drops {drops} marks {marks}");
    assert!(max < 100.0, "max queue {max}");
}

#[test]
fn invalid_thresholds_name_the_key() {
    for (k, v) in [("queue.droptail.mark_threshold_pkts", "0"), ("queue.droptail.mark_threshold_pkts", "201")] {
        let ov = vec![(k.to_string(), v.to_string())];
        let e = load_scenario(DUMBBELL, "dctcp.toml", &ov).unwrap_err().to_string();
        assert!(e.contains("queue.droptail.mark_threshold_pkts"), "{e}");
    }
    let ov = vec![("tcp.dctcp_g".to_string(), "0".to_string())];
    let e = load_scenario(DUMBBELL, "dctcp.toml", &ov).unwrap_err().to_string();
    assert!(e.contains("tcp.dctcp_g"), "{e}");
}
