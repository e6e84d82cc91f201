//! FairQ end to end (fixed seeds): long flows into one receiver port, with and without FairQ;
//! the window-scaling modes through real TCP endpoints; invalid `[fairq]` input.

use crate::common::{go, metric, ov};
use dcfair_sim::{load_scenario, run, Column, Error, Results};

/// 30 long flows from 30 senders into one receiver behind a 1 Gbit/s port with a 100-packet
/// buffer; RTT 100 us (a pipe of about 8 packets); receivers' windows 1 MB (scale factor 4).
const LONG: &str = r#"
[sim]
duration_s = 1.0
[measure]
window_s = 0.5
sample_interval_s = 0.0005
sample_flows = false
[topology]
kind = "dumbbell"
senders = 30
receivers = 1
access_rate_mbps = 1000.0
access_delay_us = 20.0
bottleneck_rate_mbps = 1000.0
bottleneck_delay_us = 5.0
[queue]
limit_pkts = 100
[tcp]
cc = "newreno"
rcv_buf_bytes = 1000000
[flows]
count = 30
start_max_s = 0.01
"#;

/// Queue samples (bytes) of the bottleneck in the second half of the run.
fn queue_bytes(r: &Results) -> Vec<f64> {
    let t = r.timeseries.as_ref().unwrap();
    let (Some(Column::F64(time)), Some(Column::Cat { codes, levels }), Some(Column::F64(value))) =
        (t.column("time_s"), t.column("metric"), t.column("value"))
    else {
        panic!("timeseries columns")
    };
    let qb = levels.iter().position(|l| l == "queue_bytes").unwrap() as u32;
    (0..time.len()).filter(|&i| codes[i] == qb && time[i] >= 0.5).map(|i| value[i]).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn fairq_holds_the_queue_near_its_target_where_droptail_overflows() {
    let dt = go(LONG, &[]);
    let fq = go(&format!("{LONG}\n[fairq]\n"), &[]);
    let (qd, qf) = (queue_bytes(&dt), queue_bytes(&fq));
    let target = 0.25 * 100.0 * 1500.0;
    let (md, mf) = (mean(&qd), mean(&qf));
    eprintln!(
        "droptail: mean queue {md:.0} B, drops {}, util {:.3}; fairq: mean queue {mf:.0} B, drops {}, util {:.3}, rewrites {}",
        metric(&dt, "drops"),
        metric(&dt, "utilization"),
        metric(&fq, "drops"),
        metric(&fq, "utilization"),
        metric(&fq, "fairq_rewrites")
    );
    assert!(metric(&dt, "drops") > 100.0, "DropTail should overflow");
    assert!(md > 2.0 * target, "DropTail keeps a full buffer");
    assert!((mf - target).abs() < 0.5 * target, "FairQ mean queue {mf} vs target {target}");
    assert!(metric(&fq, "drops") < 0.05 * metric(&dt, "drops"), "FairQ drops few");
    assert!(metric(&fq, "utilization") > 0.95, "the link stays busy");
    assert!(metric(&fq, "fairq_rewrites") > 1000.0);
}

#[test]
fn scaling_modes_all_hold_the_queue() {
    for mode in ["reserved_bits", "unify", "off"] {
        let fq = go(&format!("{LONG}\n[fairq]\nwscale = \"{mode}\"\nunify_wscale = 4\n"), &[]);
        let mf = mean(&queue_bytes(&fq));
        eprintln!("{mode}: mean queue {mf:.0} B, drops {}", metric(&fq, "drops"));
        assert!((mf - 37_500.0).abs() < 0.5 * 37_500.0, "{mode}: mean queue {mf}");
    }
}

#[test]
fn same_seed_same_bytes() {
    let text = format!("{LONG}\n[fairq]\n");
    let (a, b) = (go(&text, &[("sim.duration_s", "0.2"), ("measure.window_s", "0.1")]), go(&text, &[("sim.duration_s", "0.2"), ("measure.window_s", "0.1")]));
    assert_eq!(a.flows_csv, b.flows_csv);
    assert_eq!(a.ports_csv, b.ports_csv);
}

fn invalid(text: &str, extra: &[(&str, &str)]) -> String {
    match load_scenario(text, "t.toml", &ov(extra)).and_then(|sc| run(&sc, None, None)) {
        Err(e @ Error::Invalid { .. }) => {
            assert_eq!(e.exit_code(), 2);
            let Error::Invalid { key, .. } = e else { unreachable!() };
            key
        }
        other => panic!("expected invalid input, got {:?}", other.map(|r| r.summary_json)),
    }
}

#[test]
fn bad_fairq_input_names_the_key() {
    let text = format!("{LONG}\n[fairq]\n");
    assert_eq!(invalid(&text, &[("fairq.target_fraction", "0")]), "fairq.target_fraction");
    assert_eq!(invalid(&text, &[("fairq.target_fraction", "1.5")]), "fairq.target_fraction");
    assert_eq!(invalid(&text, &[("fairq.update_ticks", "0")]), "fairq.update_ticks");
    assert_eq!(invalid(&text, &[("fairq.interval_us", "0")]), "fairq.interval_us");
    assert_eq!(invalid(&text, &[("fairq.switches", "[\"nope\"]")]), "fairq.switches");
    assert!(invalid(&text, &[("fairq.bogus", "1")]).starts_with("fairq"));
}
