//! RoCEv2 end to end (fixed seeds): sized flows on a small dumbbell deliver every byte with
//! each congestion control and each recovery, DCQCN turns a RED bottleneck's CE marks into
//! CNPs and rate cuts, the incast's written answers arrive, and bad `[roce]` input names its
//! key.

use crate::common::{go, metric, metrics, ov};
use dcfair_sim::{load_scenario, Error};

/// 2 senders, 1 receiver, 10 Gbit/s everywhere, RTT about 24 us; 500 kB per flow (500
/// packets of 1000 bytes); a 100-packet DropTail bottleneck.
const DUMBBELL: &str = r#"
seed = 1
[sim]
duration_s = 0.005
[topology]
kind = "dumbbell"
senders = 2
receivers = 1
access_rate_mbps = 10000.0
access_delay_us = 5.0
bottleneck_rate_mbps = 10000.0
bottleneck_delay_us = 1.0
[routing]
mode = "symmetric"
[queue]
kind = "droptail"
limit_pkts = 100
[flows]
count = 2
transport = "roce"
size_bytes = 500000
[roce]
cc = "none"
lossless = false              # recovery on a lossy fabric: no [pfc]
"#;

/// DCQCN's congestion point: RED marking on the instantaneous queue (q_weight 1), from 5 to
/// 20 packets.
const RED: [(&str, &str); 5] = [
    ("queue.kind", "red"),
    ("queue.red.ecn", "true"),
    ("queue.red.q_weight", "1.0"),
    ("queue.red.min_thresh_pkts", "5"),
    ("queue.red.max_thresh_pkts", "20"),
];

fn n(m: &serde_json::Value, key: &str) -> u64 {
    m[key].as_u64().unwrap_or_else(|| panic!("{key} missing in {m}"))
}

#[test]
fn sized_flows_deliver_every_byte_with_each_cc_and_recovery() {
    // 50 ms: TIMELY, cut to its minimum rate by the first queue, climbs back by 10 Mbit/s
    // per round trip
    for cc in ["none", "dcqcn", "timely"] {
        for recovery in ["go_back_n", "selective"] {
            let r = go(DUMBBELL, &[("roce.cc", cc), ("roce.recovery", recovery), ("sim.duration_s", "0.05")]);
            let m = metrics(&r);
            assert_eq!(n(&m, "flows_completed"), 2, "{cc} {recovery}: {m}");
            for k in ["roce_cnps_sent", "roce_nacks_sent", "roce_timeouts", "roce_rate_decreases", "roce_retransmits"] {
                assert!(m.get(k).is_some(), "{cc} {recovery}: {k}");
            }
        }
    }
}

#[test]
fn line_rate_senders_overflow_the_droptail_bottleneck_and_recover() {
    let r = go(DUMBBELL, &[]);
    let m = metrics(&r);
    assert_eq!(n(&m, "flows_completed"), 2);
    // two senders in lockstep: DropTail drops the later one's packets from some PSN on, so its
    // receiver sees no gap to NACK and the timeout recovers them
    assert!(n(&m, "roce_nacks_sent") + n(&m, "roce_timeouts") > 0 && n(&m, "roce_retransmits") > 0, "{m}");
    assert_eq!(n(&m, "roce_cnps_sent"), 0, "no CNP without DCQCN");
}

#[test]
fn dcqcn_turns_red_marks_into_cnps_and_cuts() {
    let mut set: Vec<(&str, &str)> = RED.to_vec();
    set.push(("roce.cc", "dcqcn"));
    let r = go(DUMBBELL, &set);
    let m = metrics(&r);
    assert_eq!(n(&m, "flows_completed"), 2, "{m}");
    assert!(n(&m, "roce_cnps_sent") > 0, "{m}");
    assert_eq!(n(&m, "roce_rate_decreases"), n(&m, "roce_cnps_sent"), "one cut per CNP (no decrease interval)");
    // the cuts keep the queue under the buffer: fewer retransmissions than at line rate
    let none = metrics(&go(DUMBBELL, &RED));
    assert!(n(&m, "roce_retransmits") < n(&none, "roce_retransmits").max(1), "dcqcn {m}\nnone {none}");
}

#[test]
fn the_incast_answers_are_written_to_roce_senders_and_arrive() {
    let text = r#"
seed = 1
[sim]
duration_s = 0.02
[topology]
kind = "dumbbell"
senders = 4
receivers = 1
access_rate_mbps = 10000.0
access_delay_us = 5.0
bottleneck_rate_mbps = 10000.0
bottleneck_delay_us = 1.0
[routing]
mode = "symmetric"
[queue]
limit_pkts = 1000
[incast]
servers = 4
server_bytes = 50000
rounds = 2
start_s = 0.001
transport = "roce"
[pfc]
"#;
    for cc in ["none", "dcqcn", "timely"] {
        let r = go(text, &[("roce.cc", cc)]);
        assert_eq!(metric(&r, "rounds_completed"), 2.0, "{cc}: {}", r.summary_json);
        assert_eq!(metric(&r, "answers_completed"), 8.0, "{cc}");
    }
}

#[test]
fn poisson_arrivals_of_roce_flows_all_complete() {
    let cdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/workloads/websearch_cdf.txt");
    let text = format!(
        r#"
        seed = 1
        [sim]
        duration_s = 0.1
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
        [poisson]
        load = 0.3
        cdf_file = "{cdf}"
        cdf_unit = "packets"
        stop_s = 0.02
        transport = "roce"
        [pfc]
        "#
    );
    let r = go(&text, &[]);
    let m = metrics(&r);
    assert!(n(&m, "flows") > 10, "{m}");
    assert_eq!(n(&m, "flows_completed"), n(&m, "flows"), "{m}");
}

#[test]
fn bad_roce_input_names_the_key() {
    for (key, value) in [("roce.priority", "8"), ("roce.mtu_bytes", "0"), ("roce.dcqcn.g", "0"), ("roce.timely.beta", "2.0"), ("roce.rto_us", "-1")] {
        match load_scenario(DUMBBELL, "t.toml", &ov(&[(key, value)])) {
            Err(Error::Invalid { key: k, .. }) => assert_eq!(k, key),
            other => panic!("{key} = {value}: {other:?}"),
        }
    }
    assert!(load_scenario(DUMBBELL, "t.toml", &ov(&[("roce.cc", "swift")])).is_err());
}

#[test]
fn roce_flows_without_a_lossless_class_are_refused_by_key() {
    for (extra, key) in [
        (vec![("roce.lossless", "true")], "pfc"),
        (vec![("roce.lossless", "true"), ("pfc.priority", "5")], "roce.priority"),
    ] {
        match load_scenario(DUMBBELL, "t.toml", &ov(&extra)) {
            Err(Error::Invalid { key: k, .. }) => assert_eq!(k, key, "{extra:?}"),
            other => panic!("{extra:?}: {:?}", other.map(|_| ())),
        }
    }
    assert!(load_scenario(DUMBBELL, "t.toml", &ov(&[("roce.lossless", "true"), ("pfc.priority", "3")])).is_ok());
}

/// The HPCC fork's shared setting (`validation/hpcc/incast.toml`), 2-to-1 at 100 Gbit/s for
/// 5 ms: HPCC keeps the bottleneck's queue near zero at about eta of the link, DCQCN (the fork's
/// Mellanox options) fills more of the link with a queue of hundreds of kilobytes; both fair,
/// neither pauses. `docs/validation.md` has the fork's own numbers beside them.
#[test]
fn hpcc_keeps_the_queue_near_zero_where_dcqcn_holds_hundreds_of_kilobytes() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../validation/hpcc/incast.toml")).unwrap();
    let queue_max = |r: &dcfair_sim::Results| {
        let mut lines = r.ports_csv.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let i = head.iter().position(|h| *h == "lossless_max_queue_bytes").unwrap();
        let row = lines.find(|l| l.starts_with("sw->r0,")).unwrap();
        row.split(',').nth(i).unwrap().parse::<f64>().unwrap()
    };
    let run = |cc: &str| go(&text, &[("roce.cc", cc), ("sim.duration_s", "0.005"), ("measure.window_s", "0.003"), ("measure.sample_interval_s", "0.001")]);
    let hpcc = run("hpcc");
    let dcqcn = run("dcqcn");
    let tput = |r: &dcfair_sim::Results| 2.0 * metric(r, "throughput_bps_tcp") * 1058.0 / 1000.0;
    assert!(tput(&hpcc) > 0.9e11 * 0.95 && tput(&hpcc) < 1e11, "HPCC near eta x the link: {}", tput(&hpcc));
    assert!(tput(&dcqcn) > 0.95e11, "{}", tput(&dcqcn));
    assert!(metric(&hpcc, "jain_index") > 0.99 && metric(&dcqcn, "jain_index") > 0.99);
    assert!(queue_max(&dcqcn) > 300_000.0, "DCQCN marks from 400 kB: {}", queue_max(&dcqcn));
    assert!(queue_max(&hpcc) < 100_000.0, "HPCC's only queue is its first RTT's burst: {}", queue_max(&hpcc));
    assert_eq!(metric(&hpcc, "pfc_pauses_sent") + metric(&dcqcn, "pfc_pauses_sent"), 0.0);
    assert!(metric(&hpcc, "roce_rate_decreases") > 0.0, "HPCC's window moves");
}
