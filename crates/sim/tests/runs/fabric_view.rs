//! What a view of the whole fabric reads: `measure.ports = "all"` (every switch port measured,
//! in ports.csv and timeseries.csv), `fabric.csv` (the network as built, with its tiers) and
//! `port_drops.csv` (each flow's drops at each measured port).

use crate::common::{go, ov};
use dcfair_sim::{load_scenario, run, Error, Results, Table};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A k = 4 fat-tree (16 hosts, 20 switches of 4 ports: 80 switch ports) with 20-packet
/// taildrop queues and routing by destination bits: four 6-hop flows climb to one core and
/// meet a 2-hop flow at e0_0 -> h0, so packets drop at more than one port.
const FATTREE: &str = r#"
    name = "fabric"
    [sim]
    duration_s = 0.2
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

const DUMBBELL: &str = r#"
    name = "dumbbell"
    [sim]
    duration_s = 0.3
    [topology]
    kind = "dumbbell"
    senders = 3
    access_rate_mbps = 1000.0
    access_delay_us = 10.0
    bottleneck_rate_mbps = 100.0
    bottleneck_delay_us = 10.0
    [queue]
    limit_pkts = 20
    [flows]
    count = 3
    [udp]
    rate_fraction = 0.3
"#;

const ALL: (&str, &str) = ("measure.ports", "all");

/// The rows of a table as maps column -> rendered cell (via its CSV form).
fn rows(t: &Table) -> Vec<HashMap<String, String>> {
    let csv = t.to_csv();
    let mut lines = csv.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines.map(|l| head.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

fn num(row: &HashMap<String, String>, col: &str) -> u64 {
    row[col].parse().unwrap_or_else(|_| panic!("{col} = {:?}", row[col]))
}

fn invalid(text: &str, extra: &[(&str, &str)]) -> (String, String) {
    match load_scenario(text, "t.toml", &ov(extra)).and_then(|sc| run(&sc, None, None)) {
        Err(Error::Invalid { key, reason }) => (key, reason),
        other => panic!("expected invalid input, got {:?}", other.map(|r| r.summary_json)),
    }
}

/// Checks that every measured port's rows of port_drops.csv add up to its drops in ports.csv,
/// in all and by reason, and that only measured ports with drops have rows; returns the
/// ports with drops.
fn drops_add_up(r: &Results) -> Vec<String> {
    let mut by_port: BTreeMap<String, (u64, HashMap<String, u64>)> = BTreeMap::new();
    for d in rows(&r.port_drops) {
        assert!(num(&d, "pkts") > 0 && num(&d, "bytes") >= num(&d, "pkts") * 40, "{d:?}");
        let e = by_port.entry(d["port"].clone()).or_default();
        e.0 += num(&d, "pkts");
        *e.1.entry(d["reason"].clone()).or_default() += num(&d, "pkts");
    }
    let ports = rows(&r.ports);
    for p in &ports {
        let (sum, reasons) = by_port.get(&p["port"]).cloned().unwrap_or_default();
        assert_eq!(sum, num(p, "drops"), "{}: port_drops sums to ports.csv's drops", p["port"]);
        for (col, v) in p.iter().filter(|(c, _)| c.starts_with("drops_")) {
            let reason = &col["drops_".len()..];
            assert_eq!(reasons.get(reason).copied().unwrap_or(0), v.parse::<u64>().unwrap(), "{} {col}", p["port"]);
        }
    }
    for port in by_port.keys() {
        assert!(ports.iter().any(|p| &p["port"] == port), "{port} has drops but is not measured");
    }
    by_port.into_keys().collect()
}

// --- every switch port ---------------------------------------------------------------------
#[test]
fn all_measures_every_switch_port_and_fabric_csv_names_every_port_with_its_tier() {
    let r = go(FATTREE, &[ALL, ("measure.sample_interval_s", "0.05")]);
    let fabric = rows(&r.fabric);
    assert_eq!(fabric.len(), 2 * 48, "16 host links + 16 edge-aggregation + 16 aggregation-core, both ways");
    let tier_of = |node: &str| match &node[..1] {
        "h" => ("host", 0),
        "e" => ("edge", 1),
        "a" => ("aggregation", 2),
        "c" => ("core", 3),
        _ => panic!("{node}"),
    };
    let mut switch_ports = Vec::new();
    for f in &fabric {
        let (node, peer) = f["port"].split_once("->").unwrap();
        assert_eq!((f["node"].as_str(), f["peer"].as_str()), (node, peer));
        let (tier, level) = tier_of(node);
        assert_eq!((f["tier"].as_str(), num(f, "level")), (tier, level), "{}", f["port"]);
        assert_eq!(num(f, "rate_bps"), 1_000_000_000);
        assert_eq!(f["delay_s"], "0.000005");
        assert_eq!(f["queue_kind"], "droptail");
        assert_eq!(num(f, "measured"), (tier != "host") as u64, "{}: every switch port, no host NIC", f["port"]);
        if tier != "host" {
            switch_ports.push(f["port"].clone());
        }
    }
    assert_eq!(switch_ports.len(), 80);
    let measured: Vec<String> = rows(&r.ports).into_iter().map(|p| p["port"].clone()).collect();
    assert_eq!(measured, switch_ports, "ports.csv: every switch port, in port order");
    // the time series: two queue series per switch port at each of the 5 ticks
    let ts = rows(r.timeseries.as_ref().unwrap());
    for metric in ["queue_pkts", "queue_bytes"] {
        let at0: Vec<&str> = ts.iter().filter(|x| x["metric"] == metric && x["time_s"] == "0").map(|x| x["port"].as_str()).collect();
        assert_eq!(at0, switch_ports.iter().map(String::as_str).collect::<Vec<_>>(), "{metric}");
        assert_eq!(ts.iter().filter(|x| x["metric"] == metric).count(), 5 * 80);
    }
}

#[test]
fn tiers_are_named_by_each_topology() {
    let leaf_spine = r#"
        name = "ls"
        [sim]
        duration_s = 0.01
        [topology]
        kind = "leaf_spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 2
        host_rate_mbps = 1000.0
        fabric_rate_mbps = 1000.0
        link_delay_us = 1.0
        [flows]
        count = 1
        src = "h0"
        dst = "h3"
    "#;
    let tiers = |r: &Results| -> BTreeMap<String, (String, u64)> {
        rows(&r.fabric).iter().map(|f| (f["node"].clone(), (f["tier"].clone(), num(f, "level")))).collect()
    };
    let t = tiers(&go(leaf_spine, &[]));
    assert_eq!(t["h0"], ("host".into(), 0));
    assert_eq!(t["l1"], ("leaf".into(), 1));
    assert_eq!(t["sp0"], ("spine".into(), 2));
    let t = tiers(&go(DUMBBELL, &[]));
    assert_eq!(t["sw"], ("switch".into(), 1));
    assert_eq!(t["udp"], ("host".into(), 0));
}

// --- drops per port and flow -----------------------------------------------------------------
#[test]
fn port_drops_add_up_to_each_measured_ports_drops() {
    let r = go(FATTREE, &[ALL]);
    let dropping = drops_add_up(&r);
    assert!(dropping.len() >= 2 && dropping.contains(&"e0_0->h0".to_string()), "{dropping:?}");
    // the 2-hop flow (id 0, group hop2) loses packets at e0_0 -> h0, where it meets the others
    let at_h0: Vec<_> = rows(&r.port_drops).into_iter().filter(|d| d["port"] == "e0_0->h0").collect();
    assert!(at_h0.iter().any(|d| d["flow_id"] == "0" && d["group"] == "hop2"), "{at_h0:?}");
    assert!(at_h0.iter().all(|d| (d["group"] == "hop2") == (d["flow_id"] == "0")));
    // by default only the switch -> host ports are measured, and counted
    let r = go(FATTREE, &[]);
    assert_eq!(drops_add_up(&r), ["e0_0->h0"]);
}

#[test]
fn drops_at_dequeue_pushed_out_and_refused_by_a_shared_buffer_are_counted_too() {
    let codel = [("queue.kind", "codel"), ("queue.limit_pkts", "1000"), ("queue.codel.target_us", "20"), ("queue.codel.interval_us", "200")];
    for (extra, reason) in [
        (codel.to_vec(), "codel"),                                              // at dequeue
        (vec![("queue.kind", "sfq")], "longest_queue"),                         // pushed out
        (vec![("queue.limit_pkts", "1000"), ("buffer.bytes", "60000")], "overflow"), // the shared buffer's
    ] {
        let r = go(FATTREE, &[&[ALL][..], &extra].concat());
        assert!(!drops_add_up(&r).is_empty(), "{extra:?}: the run must drop");
        assert!(rows(&r.port_drops).iter().all(|d| d["reason"] == reason), "{extra:?}: {reason} only");
    }
}

#[test]
fn a_run_without_drops_has_the_header_only() {
    let r = go(FATTREE, &[("queue.limit_pkts", "10000")]);
    assert_eq!(r.port_drops.rows(), 0);
    assert_eq!(r.port_drops.to_csv(), "port,flow_id,group,reason,pkts,bytes\n");
}

// --- measuring changes nothing else --------------------------------------------------------
#[test]
fn measuring_every_port_changes_no_flow() {
    for (text, extra) in [(FATTREE, vec![]), (DUMBBELL, vec![])] {
        let a = go(text, &extra);
        let b = go(text, &[ALL]);
        assert_eq!(a.flows_csv, b.flows_csv, "the UDP source's rate still refers to the bottleneck");
        assert_eq!(a.fabric.to_csv().replace(",1\n", ",0\n"), b.fabric.to_csv().replace(",1\n", ",0\n"), "the same network");
        let events = |r: &Results| serde_json::from_str::<serde_json::Value>(&r.summary_json).unwrap()["events"].clone();
        assert_eq!(events(&a), events(&b));
    }
}

#[test]
fn files_are_written_for_every_run() {
    let dir = std::env::temp_dir().join(format!("dcfair-fabric-view-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let r = go(FATTREE, &[("queue.limit_pkts", "10000")]);
    r.write_to(&dir).unwrap();
    for (name, t) in r.run_tables() {
        assert_eq!(std::fs::read_to_string(dir.join(name)).unwrap(), t.to_csv(), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// --- invalid input -------------------------------------------------------------------------
#[test]
fn bad_measured_ports_name_their_key() {
    assert_eq!(invalid(FATTREE, &[("measure.ports", r#"["e0_0->h99"]"#)]).0, "measure.ports");
    assert_eq!(invalid(FATTREE, &[("measure.ports", "[]")]).0, "measure.ports");
    let (key, reason) = invalid(FATTREE, &[("measure.ports", "every")]);
    assert_eq!(key, "measure.ports");
    assert!(reason.contains("\"all\""), "{reason}");
    assert_eq!(invalid(FATTREE, &[("measure.ports", "3")]).0, "measure.ports");
}

#[test]
fn too_many_series_of_every_port_are_invalid_at_load() {
    // 80 switch ports x 2 series + 5 flows + 2 groups every microsecond for 0.2 s: 3.3e7 rows
    // fit; every 0.5 us, 6.7e7 do not, and the load (before anything is built) says so.
    let fine = load_scenario(FATTREE, "t.toml", &ov(&[ALL, ("measure.sample_interval_s", "1e-6")]));
    assert!(fine.is_ok(), "{:?}", fine.err());
    match load_scenario(FATTREE, "t.toml", &ov(&[ALL, ("measure.sample_interval_s", "5e-7")])) {
        Err(Error::Invalid { key, reason }) => {
            assert_eq!(key, "measure.sample_interval_s");
            assert!(reason.contains("80 measured"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

/// The flows whose data packets (more than a header) reach the discipline of `port`, from a
/// trace of it.
fn data_flows_at(text: &str, extra: &[(&str, &str)], port: &str) -> BTreeSet<u64> {
    let mut extra = extra.to_vec();
    extra.push(("measure.trace.port", port));
    let r = go(text, &extra);
    rows(r.trace.as_ref().unwrap()).iter().filter(|t| t["event"] == "arrive" && num(t, "size_bytes") > 100).map(|t| num(t, "flow_id")).collect()
}

/// The flows paths.csv routes through each port.
fn flows_by_port(r: &Results) -> BTreeMap<String, BTreeSet<u64>> {
    let mut by: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for p in rows(r.paths.as_ref().expect("paths.csv with sample_interval_s")) {
        by.entry(p["port"].clone()).or_default().insert(num(&p, "flow_id"));
    }
    by
}

#[test]
fn paths_name_the_ports_each_flow_crosses_and_the_packets_agree() {
    // destination bits: the 2-hop flow crosses 2 ports, the 6-hop flows 6, all ending at e0_0 -> h0
    let r = go(FATTREE, &[("measure.sample_interval_s", "0.05")]);
    let paths = rows(r.paths.as_ref().unwrap());
    let hops = |f: u64| paths.iter().filter(|p| num(p, "flow_id") == f).map(|p| p["port"].clone()).collect::<Vec<_>>();
    assert_eq!(hops(0), ["h1->e0_0", "e0_0->h0"]);
    for f in 1..5 {
        let h = hops(f);
        assert_eq!((h.len(), h.last().map(String::as_str)), (6, Some("e0_0->h0")), "flow {f}: {h:?}");
    }
    // ECMP on a permutation: at the ports of every tier, the flows paths.csv names are the
    // flows whose data packets the port's trace sees
    let perm = r#"
        name = "perm"
        [sim]
        duration_s = 0.01
        [topology]
        kind = "fat_tree"
        k = 4
        host_rate_mbps = 1000.0
        fabric_rate_mbps = 1000.0
        link_delay_us = 5.0
        [measure]
        sample_interval_s = 0.005
        [groups.perm]
        pattern = "permutation"
    "#;
    let r = go(perm, &[]);
    let by = flows_by_port(&r);
    assert_eq!(by.values().map(BTreeSet::len).sum::<usize>(), rows(r.paths.as_ref().unwrap()).len(), "no flow crosses a port twice");
    for port in ["h0->e0_0", "e0_0->a0_0", "a0_0->c1", "c1->a1_0", "a1_0->e1_0", "e1_1->h7", "a0_1->c3"] {
        let want = by.get(port).cloned().unwrap_or_default();
        assert_eq!(data_flows_at(perm, &[], port), want, "{port}");
    }
    assert!(["a0_0->c1", "a0_1->c3"].iter().any(|p| by.get(*p).map_or(0, BTreeSet::len) >= 2), "ECMP shares a core port: {by:?}");
}

#[test]
fn paths_say_why_a_flow_has_no_single_path() {
    let r = go(FATTREE, &[("measure.sample_interval_s", "0.05"), ("routing.mode", "spray")]);
    let paths = rows(r.paths.as_ref().unwrap());
    assert_eq!(paths.len(), 5, "one row per flow");
    assert!(paths.iter().all(|p| p["hop"].is_empty() && p["port"].is_empty() && p["note"] == "spray"), "{paths:?}");
    assert!(go(FATTREE, &[]).paths.is_none(), "only with sample_interval_s");
}
