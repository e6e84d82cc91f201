//! The Outcast measurements through the public API: group goodput over time, consecutive-drop
//! runs, the port trace, and the blackout discipline in a network (fixed seeds).

use crate::common::{go, ov};
use dcfair_sim::{load_scenario, run, Column, Error, Results, Table};
use std::collections::HashMap;

/// One 2-hop flow and four 6-hop flows into h0 of a k = 4 fat-tree with 20-packet taildrop
/// queues, routed by destination bits so the 6-hop flows share one input port of e0_0.
const OUTCAST: &str = r#"
    name = "outcast"
    [sim]
    duration_s = 0.6
    [topology]
    kind = "fat_tree"
    k = 4
    host_rate_mbps = 1000.0
    fabric_rate_mbps = 1000.0
    link_delay_us = 5.0
    [routing]
    mode = "dst_bits"
    [queue]
    limit_pkts = 20
    [tcp]
    min_rto_ms = 10.0
    [groups.hop2]
    count = 1
    src = "h1"
    dst = "h0"
    [groups.hop6]
    count = 4
    src = ["h4", "h8", "h12", "h14"]
    dst = "h0"
"#;

/// The section 4.3 model: one sender, one switch, one receiver.
const MODEL: &str = r#"
    name = "model"
    [sim]
    duration_s = 1.0
    [topology]
    kind = "dumbbell"
    senders = 2
    access_rate_mbps = 1000.0
    access_delay_us = 25.0
    bottleneck_rate_mbps = 1000.0
    bottleneck_delay_us = 25.0
    [queue]
    kind = "blackout"
    limit_pkts = 100
    [queue.blackout]
    drop_pkts = 6
    [tcp]
    min_rto_ms = 10.0
    [flows]
    count = 2
"#;

fn invalid_key(text: &str, extra: &[(&str, &str)]) -> String {
    match load_scenario(text, "t.toml", &ov(extra)).and_then(|sc| run(&sc, None, None)) {
        Err(Error::Invalid { key, .. }) => key,
        other => panic!("expected invalid input, got {:?}", other.map(|r| r.summary_json)),
    }
}

fn summary(r: &Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

/// The rows of a table as maps column -> rendered cell (via its CSV form).
fn rows(t: &Table) -> Vec<HashMap<String, String>> {
    let csv = t.to_csv();
    let mut lines = csv.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines.map(|l| head.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    row[col].parse().unwrap_or_else(|_| panic!("{col} = {:?}", row[col]))
}

fn port_row(r: &Results, port: &str) -> HashMap<String, String> {
    rows(&r.ports).into_iter().find(|p| p["port"] == port).unwrap()
}

fn without_volatile(summary: &str) -> String {
    summary.lines().filter(|l| !l.contains("wall_time_s")).collect()
}

// --- probes observe only ------------------------------------------------------------------
#[test]
fn probes_change_no_other_result() {
    let plain = go(OUTCAST, &[]);
    let probed = go(OUTCAST, &[("measure.drop_runs_ports", r#"["e0_0->h0", "e0_0->h1"]"#), ("measure.trace.port", "e0_0->h0")]);
    assert_eq!(plain.flows_csv, probed.flows_csv);
    assert_eq!(plain.ports_csv, probed.ports_csv);
    let mut s = summary(&probed);
    s.as_object_mut().unwrap().remove("trace");
    let mut p = summary(&plain);
    for v in [&mut s, &mut p] {
        v.as_object_mut().unwrap().remove("wall_time_s");
    }
    assert_eq!(s, p, "same summary, events included, apart from the trace's own entry");
    assert!(plain.drop_runs.is_none() && plain.trace.is_none() && plain.groups.is_none());
}

#[test]
fn measurements_are_deterministic() {
    let extra = [("measure.drop_runs_ports", r#"["e0_0->h0"]"#), ("measure.trace.port", "e0_0->h0"), ("measure.sample_interval_s", "0.01")];
    let (a, b) = (go(OUTCAST, &extra), go(OUTCAST, &extra));
    for (x, y) in a.optional_tables().iter().zip(b.optional_tables()) {
        assert_eq!(x.1.map(Table::to_csv), y.1.map(Table::to_csv), "{}", x.0);
    }
    assert_eq!(without_volatile(&a.summary_json), without_volatile(&b.summary_json));
}

// --- consecutive-drop runs ----------------------------------------------------------------
#[test]
fn drop_runs_account_for_every_drop_of_the_port() {
    let r = go(OUTCAST, &[("measure.drop_runs_ports", r#"["e0_0->h0"]"#)]);
    let drops = num(&port_row(&r, "e0_0->h0"), "drops");
    assert!(drops > 0.0, "the scenario must drop at e0_0->h0");
    let runs = rows(r.drop_runs.as_ref().unwrap());
    let dropped = |by: &str| -> f64 { runs.iter().filter(|x| x["by"] == by).map(|x| num(x, "run_length") * num(x, "episodes")).sum() };
    assert_eq!(dropped("input"), drops, "runs by input cover every drop once");
    assert_eq!(dropped("group"), drops, "runs by flow, summed by group, too");
    let keys = |by: &str| -> Vec<(String, String)> {
        let mut k: Vec<_> = runs.iter().filter(|x| x["by"] == by).map(|x| (x["key"].clone(), x["flows"].clone())).collect();
        k.dedup();
        k
    };
    // The 2-hop flow enters from h1, the 6-hop flows from one aggregation switch; ACKs of
    // h0's own flows never come back to e0_0 -> h0 from h0.
    assert_eq!(keys("input"), [("h1->e0_0".into(), "1".into()), ("a0_0->e0_0".into(), "4".into())]);
    assert_eq!(keys("group"), [("hop2".into(), "1".into()), ("hop6".into(), "4".into())]);
    for x in &runs {
        assert_eq!(x["port"], "e0_0->h0");
    }
}

#[test]
fn runs_at_a_host_nic_have_the_host_as_their_input() {
    let r = go(OUTCAST, &[("measure.drop_runs_ports", r#"["h0->e0_0"]"#)]);
    let runs = rows(r.drop_runs.as_ref().unwrap());
    assert!(runs.iter().filter(|x| x["by"] == "input").all(|x| x["key"] == "h0"));
    // h0 only sends ACKs: 5 flows' worth, and with a 1000-packet NIC buffer nothing is lost.
    assert!(runs.iter().all(|x| x["episodes"] == "0"));
}

// --- trace --------------------------------------------------------------------------------
#[test]
fn trace_follows_the_queue_inside_its_window() {
    let r = go(OUTCAST, &[("measure.trace.port", "e0_0->h0"), ("measure.trace.start_s", "0.1"), ("measure.trace.end_s", "0.2")]);
    let t = rows(r.trace.as_ref().unwrap());
    assert!(t.len() > 1000);
    let s = summary(&r);
    assert_eq!(s["trace"]["rows"].as_u64().unwrap() as usize, t.len());
    assert!(s["trace"]["truncated_at_s"].is_null());
    let mut q: Option<f64> = None;
    let (mut arrive, mut enq, mut drop) = (0, 0, 0);
    for row in &t {
        let time = num(row, "time_s");
        assert!((0.1..=0.2).contains(&time), "{time}");
        let len = num(row, "queue_pkts");
        assert!(len <= 20.0);
        match row["event"].as_str() {
            "arrive" => {
                arrive += 1;
                if let Some(q) = q {
                    assert_eq!(len, q, "an arrival finds the queue as the last event left it");
                }
            }
            "enqueue" => {
                enq += 1;
                assert_eq!(len, q.unwrap() + 1.0);
            }
            "drop" => {
                drop += 1;
                assert_eq!(row["reason"], "overflow");
                assert_eq!(len, 20.0, "taildrop drops only when full");
            }
            "dequeue" => {
                if let Some(q) = q {
                    assert_eq!(len, q - 1.0);
                }
            }
            e => panic!("event {e}"),
        }
        assert_eq!(num(row, "queue_bytes"), len * 1500.0, "every packet here is a full segment");
        q = Some(len);
        assert!(row["group"] == "hop2" || row["group"] == "hop6");
    }
    assert_eq!(arrive, enq + drop, "every arrival is stored or dropped");
    assert!(drop > 0);
}

#[test]
fn a_full_trace_stops_and_says_when() {
    let r = go(OUTCAST, &[("measure.trace.port", "e0_0->h0"), ("measure.trace.max_rows", "100")]);
    assert_eq!(r.trace.as_ref().unwrap().rows(), 100);
    let s = summary(&r);
    assert_eq!(s["trace"]["rows"], 100);
    let cut = s["trace"]["truncated_at_s"].as_f64().unwrap();
    let last = rows(r.trace.as_ref().unwrap()).last().map(|x| num(x, "time_s")).unwrap();
    assert!(cut >= last && cut < 0.6);
}

// --- group goodput over time --------------------------------------------------------------
#[test]
fn group_goodput_adds_up_to_what_the_flows_delivered() {
    let r = go(OUTCAST, &[("measure.sample_interval_s", "0.01"), ("measure.group_window_s", "0.05"), ("measure.sample_flows", "false")]);
    let flows = rows(&r.flows);
    let windows = rows(r.group_windows.as_ref().unwrap());
    let per_sample = rows(r.groups.as_ref().unwrap());
    assert_eq!(per_sample.len(), 60 * 2, "60 intervals x 2 groups");
    assert_eq!(windows.len(), 12 * 2, "12 windows of 50 ms x 2 groups");
    for g in ["hop2", "hop6"] {
        let delivered: f64 = flows.iter().filter(|f| f["group"] == g).map(|f| num(f, "bytes_delivered")).sum();
        for table in [&per_sample, &windows] {
            let sum: f64 = table.iter().filter(|x| x["group"] == g).map(|x| num(x, "delivered_bytes")).sum();
            assert_eq!(sum, delivered, "{g}");
        }
        for x in per_sample.iter().filter(|x| x["group"] == g) {
            let span = num(x, "end_s") - num(x, "start_s");
            assert!((num(x, "goodput_bps") - num(x, "delivered_bytes") * 8.0 / span).abs() < 1e-3);
            assert!((num(x, "goodput_bps_per_flow") * num(x, "flows") - num(x, "goodput_bps")).abs() < 1e-3);
        }
    }
    let s = summary(&r);
    let m = &s["metrics"];
    let (mean6, agg6) = (m["throughput_bps_hop6"].as_f64().unwrap(), m["aggregate_throughput_bps_hop6"].as_f64().unwrap());
    assert!((agg6 - 4.0 * mean6).abs() < 1e-6 * agg6, "the aggregate is the per-flow mean times the flows");
}

#[test]
fn a_last_partial_window_covers_what_remains() {
    let r = go(OUTCAST, &[("sim.duration_s", "0.55"), ("measure.sample_interval_s", "0.01"), ("measure.group_window_s", "0.1")]);
    let w = rows(r.group_windows.as_ref().unwrap());
    let last = w.last().unwrap();
    assert_eq!((num(last, "start_s"), num(last, "end_s")), (0.5, 0.55));
    assert_eq!(w.len(), 6 * 2);
}

#[test]
fn udp_is_a_group_of_its_own() {
    let r = go(MODEL, &[("queue.blackout.drop_pkts", "0"), ("udp.rate_fraction", "0.1"), ("measure.sample_interval_s", "0.1")]);
    let g = rows(r.groups.as_ref().unwrap());
    let names: Vec<&str> = g.iter().take(2).map(|x| x["group"].as_str()).collect();
    assert_eq!(names, ["flows", "udp"]);
    let Some(Column::Cat { levels, .. }) = r.groups.as_ref().unwrap().column("group") else { panic!() };
    assert_eq!(levels, &["flows", "udp"]);
}

// --- the blackout discipline in a network -------------------------------------------------
#[test]
fn blackout_with_no_packets_is_exactly_droptail() {
    let a = go(MODEL, &[("queue.blackout.drop_pkts", "0")]);
    let b = go(MODEL, &[("queue.kind", "droptail")]);
    assert_eq!(a.flows_csv, b.flows_csv);
    assert_eq!(num(&port_row(&a, "sw->r0"), "drops"), num(&port_row(&b, "sw->r0"), "drops"));
}

#[test]
fn blackout_drops_are_typed_and_counted() {
    let r = go(MODEL, &[]);
    let p = port_row(&r, "sw->r0");
    assert_eq!(p["queue_kind"], "blackout");
    assert!(num(&p, "drops_blackout") > 0.0);
    assert_eq!(num(&p, "drops"), num(&p, "drops_blackout") + num(&p, "drops_overflow"));
    assert!(summary(&r)["metrics"]["drops_by_reason"]["blackout"].as_u64().unwrap() > 0);
}

#[test]
fn blackout_of_one_input_spares_the_others() {
    let r = go(MODEL, &[("queue.blackout.input", "s1->sw"), ("measure.trace.port", "sw->r0")]);
    let t = rows(r.trace.as_ref().unwrap());
    let blacked: Vec<&str> = t.iter().filter(|x| x["reason"] == "blackout").map(|x| x["input"].as_str()).collect();
    assert!(!blacked.is_empty());
    assert!(blacked.iter().all(|&i| i == "s1->sw"), "only s1's packets are dropped by blackout");
    assert!(t.iter().any(|x| x["input"] == "s0->sw" && x["event"] == "enqueue"));
}

// --- invalid input names the key ----------------------------------------------------------
#[test]
fn bad_measurement_keys_name_their_path() {
    assert_eq!(invalid_key(OUTCAST, &[("measure.drop_runs_ports", r#"["e0_0->h99"]"#)]), "measure.drop_runs_ports");
    assert_eq!(invalid_key(OUTCAST, &[("measure.drop_runs_ports", "[]")]), "measure.drop_runs_ports");
    assert_eq!(invalid_key(OUTCAST, &[("measure.drop_runs_ports", r#"["e0_0->h0", "e0_0->h0"]"#)]), "measure.drop_runs_ports");
    assert_eq!(invalid_key(OUTCAST, &[("measure.trace.port", "nowhere")]), "measure.trace.port");
    assert_eq!(invalid_key(OUTCAST, &[("measure.trace.start_s", "0.1")]), "measure.trace.port");
    assert_eq!(invalid_key(OUTCAST, &[("measure.trace.port", "e0_0->h0"), ("measure.trace.start_s", "-1")]), "measure.trace.start_s");
    assert_eq!(invalid_key(OUTCAST, &[("measure.trace.port", "e0_0->h0"), ("measure.trace.start_s", "9")]), "measure.trace.start_s");
    assert_eq!(
        invalid_key(OUTCAST, &[("measure.trace.port", "e0_0->h0"), ("measure.trace.start_s", "0.2"), ("measure.trace.end_s", "0.1")]),
        "measure.trace.end_s"
    );
    assert_eq!(invalid_key(OUTCAST, &[("measure.trace.port", "e0_0->h0"), ("measure.trace.max_rows", "0")]), "measure.trace.max_rows");
    assert_eq!(invalid_key(OUTCAST, &[("measure.trace.port", "e0_0->h0"), ("measure.trace.rows", "5")]), "measure.trace.rows");
    assert_eq!(invalid_key(OUTCAST, &[("measure.group_window_s", "0.1")]), "measure.group_window_s");
    assert_eq!(invalid_key(OUTCAST, &[("measure.sample_interval_s", "0.01"), ("measure.group_window_s", "0.015")]), "measure.group_window_s");
    assert_eq!(invalid_key(OUTCAST, &[("measure.sample_interval_s", "0.01"), ("measure.group_window_s", "-1")]), "measure.group_window_s");
}

#[test]
fn bad_blackout_keys_name_their_path() {
    assert_eq!(invalid_key(MODEL, &[("queue.blackout.mean_off_s", "0")]), "queue.blackout.mean_off_s");
    assert_eq!(invalid_key(MODEL, &[("queue.blackout.mean_off_s", "-0.005")]), "queue.blackout.mean_off_s");
    assert_eq!(invalid_key(MODEL, &[("queue.blackout.packet_bytes", "0")]), "queue.blackout.packet_bytes");
    assert_eq!(invalid_key(MODEL, &[("queue.blackout.drop_pkts", "-1")]), "queue.blackout.drop_pkts");
    assert_eq!(invalid_key(MODEL, &[("queue.blackout.input", "s9->sw")]), "queue.blackout.input");
    // sw -> s0 feeds host s0, which runs no blackout port.
    assert_eq!(invalid_key(MODEL, &[("queue.blackout.input", "sw->s0")]), "queue.blackout.input");
    assert_eq!(invalid_key(OUTCAST, &[("queue.kind", "blackout")]), "queue.blackout.drop_pkts");
    // A table that is present is checked whichever discipline runs.
    assert_eq!(invalid_key(OUTCAST, &[("queue.blackout.mean_off_s", "0")]), "queue.blackout.mean_off_s");
}

// --- files --------------------------------------------------------------------------------
#[test]
fn optional_files_are_written_and_stale_ones_removed() {
    let dir = std::env::temp_dir().join(format!("dcfair-measure-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // the 2-hop flow as an MPTCP connection of 2 subflows: subflows.csv; a job: its two files
    let full = go(
        OUTCAST,
        &[
            ("measure.drop_runs_ports", r#"["e0_0->h0"]"#),
            ("measure.trace.port", "e0_0->h0"),
            ("measure.sample_interval_s", "0.1"),
            ("measure.group_window_s", "0.2"),
            ("groups.hop2.tcp.mptcp.subflows", "2"),
            ("groups.hop2.tcp.mptcp.coupling", "\"uncoupled\""),
            // a job: jobs.csv and job_iterations.csv
            ("groups.job.pattern", "allgather"),
            ("groups.job.hosts", r#"["h2", "h3"]"#),
            ("groups.job.size_bytes", "20000"),
            ("measure.jobs_baseline", "false"),
        ],
    );
    full.write_to(&dir).unwrap();
    for name in dcfair_sim::OPTIONAL_FILES {
        assert!(dir.join(name).exists(), "{name}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("trace.csv")).unwrap(), full.trace.as_ref().unwrap().to_csv());
    go(OUTCAST, &[("measure.drop_runs_ports", r#"["e0_0->h0"]"#)]).write_to(&dir).unwrap();
    let left: Vec<String> = dcfair_sim::OPTIONAL_FILES.iter().filter(|n| dir.join(n).exists()).map(|n| n.to_string()).collect();
    assert_eq!(left, ["drop_runs.csv"]);
    let _ = std::fs::remove_dir_all(&dir);
}
