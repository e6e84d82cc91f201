//! ExpressPass end to end (fixed seeds): long flows on a dumbbell fill the bottleneck with
//! (almost) no data drops and a small data queue; fairness; sized flows finish; bad `[xpass]`
//! input names its key.

use crate::common::{go, metrics, ov};
use dcfair_sim::{load_scenario, Error, Results};

/// N ExpressPass flows from N senders to one receiver; 10 Gbit/s everywhere, RTT about 24 us
/// at the bottleneck (the paper's dumbbell scale); data buffer 100 packets.
const DUMBBELL: &str = r#"
[sim]
duration_s = 0.02
[measure]
window_s = 0.01
[topology]
kind = "dumbbell"
senders = 8
receivers = 1
access_rate_mbps = 10000.0
access_delay_us = 5.0
bottleneck_rate_mbps = 10000.0
bottleneck_delay_us = 1.0
[routing]
mode = "symmetric"
[queue]
limit_pkts = 100
[flows]
count = 8
transport = "xpass"
start_max_s = 0.001
"#;

fn summary(r: &Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

/// Data-rate ceiling of a 10 Gbit/s link whose credits are 84 B and data frames 1500 B.
const MAX_DATA: f64 = 1500.0 / 1584.0;

fn port_row(r: &Results) -> Vec<String> {
    r.ports_csv.lines().nth(1).unwrap().split(',').map(String::from).collect()
}

#[test]
fn long_flows_fill_the_bottleneck_without_data_drops() {
    // measured (seed 1): paper law 0.805 utilization (85 % of the data ceiling), Jain 0.955;
    // code law 0.931; no feedback 0.947; every case 0 drops and at most 1 data packet queued
    for (law, min_util) in [("paper", 0.80 * MAX_DATA), ("code", 0.95 * MAX_DATA), ("none", 0.99 * MAX_DATA)] {
        let r = go(DUMBBELL, &[("xpass.feedback_law", law)]);
        let m = &summary(&r)["metrics"];
        let util = m["utilization"].as_f64().unwrap();
        assert!(util > min_util && util <= MAX_DATA + 1e-3, "{law}: utilization {util}");
        assert_eq!(m["drops"].as_u64(), Some(0), "{law}: data drops");
        let row = port_row(&r);
        assert_eq!(row[6], "1", "{law}: max_queue_pkts {}", row[6]);
        assert!(m["jain_index"].as_f64().unwrap() > 0.95, "{law}: Jain {}", m["jain_index"]);
    }
}

#[test]
fn sized_flows_complete_and_are_deterministic() {
    let text = DUMBBELL.replace("start_max_s = 0.001", "start_max_s = 0.001\nsize_pkts = 200");
    let a = go(&text, &[]);
    let m = &summary(&a)["metrics"];
    assert_eq!(m["flows_completed"].as_u64(), Some(8));
    let b = go(&text, &[]);
    assert_eq!(a.flows_csv, b.flows_csv);
    assert_eq!(a.ports_csv, b.ports_csv);
}

#[test]
fn bad_xpass_input_names_the_key() {
    for (key, value) in [("xpass.credit_queue_pkts", "0"), ("xpass.jitter", "1.0"), ("xpass.jitter", "-0.5"), ("xpass.credit_max_bytes", "1600")] {
        match load_scenario(DUMBBELL, "t.toml", &ov(&[(key, value)])) {
            Err(Error::Invalid { key: k, .. }) => assert_eq!(k, key),
            other => panic!("{key} = {value}: {other:?}"),
        }
    }
}

#[test]
fn credit_counters_count_the_waste_of_a_one_packet_flow() {
    // one 1-packet flow on an idle dumbbell, base RTT 100 us: the receiver paces credits from
    // the request's arrival until the stop arrives, one RTT later; all but one are wasted
    let text = DUMBBELL
        .replace("senders = 8", "senders = 1")
        .replace("access_delay_us = 5.0", "access_delay_us = 49.0")
        .replace("count = 8", "count = 1\nsize_pkts = 1")
        .replace("start_max_s = 0.001", "start_max_s = 0.0");
    let max_rate = 10e9 / (8.0 * (84.0 + 1500.0)); // credits/s
    for initial in [1.0, 0.25] {
        let r = go(&text, &[("xpass.initial_rate", &initial.to_string())]);
        let m = metrics(&r);
        let n = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k} missing"));
        let expect = initial * max_rate * 100e-6 - 1.0;
        let wasted = n("xpass_credits_wasted") as f64;
        assert!(wasted > 0.9 * expect && wasted < 1.1 * expect + 1.0, "initial {initial}: wasted {wasted}, expected about {expect}");
        assert_eq!(n("xpass_credits_lost"), 0);
        assert_eq!(n("xpass_credits_received"), n("xpass_credits_sent"));
        assert_eq!(n("xpass_credits_received"), n("xpass_credits_wasted") + 1);
    }
    // a TCP run has no such keys
    let tcp = go(DUMBBELL, &[("flows.transport", "tcp")]);
    assert!(metrics(&tcp).get("xpass_credits_sent").is_none());
}
