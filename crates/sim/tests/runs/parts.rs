//! Runs split into parts (`engine/windows.rs`): each part runs its events of a window alone,
//! packets between parts wait for the window's end, and the outputs equal the whole run's byte
//! for byte, for every discipline, transport and topology, at 1, 2 and 3 parts run one after
//! the other, and on 2 and 3 threads (`engine/threads.rs`).

use crate::common::ov;
use dcfair_sim::run::{run_in_parts, run_on_threads};
use dcfair_sim::{load_scenario, run, Error, Results};

const P: &str = "../../scenarios/papers";

/// A k = 4 fat-tree permutation under ECMP, with every port's queue and every flow sampled.
const FATTREE: &str = r#"
    name = "perm"
    [sim]
    duration_s = 0.004
    tie_break = "origin"
    [topology]
    kind = "fat_tree"
    k = 4
    host_rate_mbps = 1000.0
    fabric_rate_mbps = 1000.0
    link_delay_us = 2.0
    [queue]
    limit_pkts = 20
    [tcp]
    min_rto_ms = 1.0
    [measure]
    ports = "all"
    sample_interval_s = 0.0005
    [groups.perm]
    pattern = "permutation"
    [groups.long]
    count = 3
    src = ["h1", "h5", "h9"]
    dst = "h0"
"#;

/// Every file of a run but the run's own wall-clock time.
fn files(r: &Results) -> Vec<(String, String)> {
    let mut summary: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    summary.as_object_mut().unwrap().remove("wall_time_s");
    let mut out = vec![("summary.json".to_string(), summary.to_string()), ("flows.csv".into(), r.flows_csv.clone()), ("ports.csv".into(), r.ports_csv.clone())];
    out.extend(r.run_tables().iter().map(|(n, t)| (n.to_string(), t.to_csv())));
    out.extend(r.optional_tables().iter().filter_map(|(n, t)| t.map(|t| (n.to_string(), t.to_csv()))));
    out
}

/// `text` with `extra` by origin, run whole and in 1, 2 and 3 parts: every file the same.
fn same_in_parts(text: &str, extra: &[(&str, &str)]) -> Results {
    same_in_parts_of(text, "t.toml", extra)
}

/// [`same_in_parts`] of a scenario file (its relative paths, such as a CDF's, read from its
/// directory).
fn same_file_in_parts(path: &str, extra: &[(&str, &str)]) -> Results {
    let path = format!("{}/{P}/{path}", env!("CARGO_MANIFEST_DIR"));
    same_in_parts_of(&std::fs::read_to_string(&path).unwrap(), &path, extra)
}

fn same_in_parts_of(text: &str, origin: &str, extra: &[(&str, &str)]) -> Results {
    let mut extra = extra.to_vec();
    extra.push(("sim.tie_break", "\"origin\""));
    let sc = load_scenario(text, origin, &ov(&extra)).unwrap();
    let whole = run(&sc, None, None).unwrap();
    let want = files(&whole);
    for parts in 1..=3 {
        let (r, stats) = run_in_parts(&sc, None, parts).unwrap_or_else(|e| panic!("{parts} parts: {e}"));
        let got = files(&r);
        let ran = stats.events.iter().filter(|&&e| e > 0).count();
        if text.contains("\"dumbbell\"") {
            // one switch, every host on it: nothing to split
            assert_eq!((ran, stats.crossings), (1, 0), "{stats:?}");
        } else if parts > 1 {
            // really split: packets crossed, and more than one part ran events
            assert!(stats.crossings > 0 && ran >= 2, "{stats:?}");
        }
        assert_eq!(stats.events.iter().sum::<u64>() + stats.global_events, r.summary_json.lines().find_map(|l| l.trim().strip_prefix("\"events\": ")).unwrap().trim_end_matches(',').parse::<u64>().unwrap());
        for ((name, a), (_, b)) in want.iter().zip(&got) {
            assert!(a == b, "{} in {parts} parts differs from the whole run ({extra:?})", name);
        }
        assert_eq!(want.len(), got.len());
    }
    for threads in 2..=3 {
        let (r, stats) = run_on_threads(&sc, None, threads).unwrap_or_else(|e| panic!("{threads} threads: {e}"));
        let ran = stats.events.iter().filter(|&&e| e > 0).count();
        assert!(text.contains("\"dumbbell\"") || (stats.crossings > 0 && ran >= 2), "{threads} threads: {stats:?}");
        for ((name, a), (_, b)) in want.iter().zip(&files(&r)) {
            assert!(a == b, "{} on {threads} threads differs from the whole run ({extra:?})", name);
        }
    }
    whole
}

fn file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{P}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn every_discipline_gives_the_same_files_in_parts() {
    for kind in ["droptail", "red", "sfq", "drr", "hcf", "codel", "fq_codel", "afd", "pfabric"] {
        let r = same_in_parts(FATTREE, &[("queue.kind", &format!("\"{kind}\""))]);
        assert!(r.flows_csv.lines().count() > 16, "{kind}");
    }
}

#[test]
fn every_transport_gives_the_same_files_in_parts() {
    for cc in ["reno", "newreno", "cubic"] {
        same_in_parts(FATTREE, &[("tcp.cc", &format!("\"{cc}\""))]);
    }
    same_in_parts(FATTREE, &[("tcp.cc", "\"dctcp\""), ("queue.droptail.mark_threshold_pkts", "10")]);
    same_in_parts(FATTREE, &[("tcp.cc", "\"pfabric\""), ("queue.kind", "\"pfabric\"")]);
    same_in_parts(FATTREE, &[("udp.rate_fraction", "0.2"), ("udp.src", "\"h1\""), ("udp.dst", "\"h8\"")]);
    same_in_parts(FATTREE, &[("groups.perm.transport", "\"roce\""), ("groups.long.transport", "\"roce\""), ("roce.lossless", "false")]);
    // HPCC: telemetry records that cross between parts with their packets
    same_in_parts(FATTREE, &[("groups.perm.transport", "\"roce\""), ("groups.long.transport", "\"roce\""), ("roce.lossless", "false"), ("roce.cc", "\"hpcc\"")]);
    same_file_in_parts("xpass/parking_lot.toml", &[("sim.duration_s", "0.002"), ("measure.window_s", "0.001")]);
    same_file_in_parts("ndp/permutation.toml", &[("sim.duration_s", "0.0005"), ("measure.window_s", "0.0003")]);
}

#[test]
fn every_topology_and_routing_mode_gives_the_same_files_in_parts() {
    same_file_in_parts("fqcodel/leafspine.toml", &[("sim.duration_s", "0.003"), ("poisson.stop_s", "0.002")]);
    same_file_in_parts("hcf/longflows.toml", &[("sim.duration_s", "0.5"), ("measure.window_s", "0.3")]);
    same_file_in_parts("fairq/testbed_elephants.toml", &[("sim.duration_s", "0.02"), ("measure.window_s", "0.01")]);
    same_file_in_parts("outcast/fattree.toml", &[("sim.duration_s", "0.02"), ("measure.drop_runs_ports", r#"["e0_0->h0"]"#), ("measure.trace.port", "e0_0->h0")]);
    // the random choices per packet: each switch's or host's own stream
    for mode in ["spray", "spray_round_robin", "flowlet", "adaptive"] {
        same_in_parts(FATTREE, &[("routing.mode", &format!("\"{mode}\""))]);
    }
    same_in_parts(FATTREE, &[("routing.equal_length", "true"), ("routing.core", "\"random_packet\"")]);
}

#[test]
fn runs_that_reach_across_the_network_at_once_are_refused() {
    let refused = |text: &str, extra: &[(&str, &str)]| match load_scenario(text, "t.toml", &ov(extra)).and_then(|sc| run_in_parts(&sc, None, 2)) {
        Err(Error::Invalid { key, reason }) => (key, reason),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.0.summary_json)),
    };
    let (key, why) = refused(FATTREE, &[("sim.tie_break", "\"fifo\"")]);
    assert_eq!((key.as_str(), why.contains("origin")), ("sim", true), "{why}");
    let (_, why) = refused(&file("hcf/incast_typical.toml"), &[("sim.tie_break", "\"origin\"")]);
    assert!(why.contains("incast"), "{why}");
    let (_, why) = refused(FATTREE, &[("topology.link_delay_us", "0")]);
    assert!(why.contains("no delay"), "{why}");
}

/// A recorded run in parts keeps every window's work, and its sums are the run's: each part's
/// events, the packets between parts, the whole run's events; the busiest part of each window
/// summed is the critical path the stats give.
#[test]
fn the_windows_record_adds_up_to_the_run() {
    let sc = load_scenario(FATTREE, "t.toml", &[]).unwrap();
    for parts in [1, 3] {
        let mut sim = dcfair_sim::assemble::build(&sc, sc.seed).unwrap();
        let p = dcfair_sim::engine::Partition::split(&sim.world().net, parts).unwrap();
        let s = sim.run_in_parts(&p, true).unwrap();
        let stride = s.stride();
        assert_eq!((stride, s.record.len() as u64), (2 * parts + 1, s.windows * stride as u64));
        let windows: Vec<&[u32]> = s.record.chunks(stride).collect();
        let sum = |i: usize| windows.iter().map(|w| w[i] as u64).sum::<u64>();
        assert_eq!((0..parts).map(sum).collect::<Vec<_>>(), s.events);
        assert_eq!((parts..2 * parts).map(sum).sum::<u64>(), s.crossings);
        assert_eq!(sum(2 * parts), s.global_events);
        assert_eq!(windows.iter().map(|w| *w[..parts].iter().max().unwrap() as u64).sum::<u64>(), s.critical_events);
        assert!(s.global_events > 0 && (parts == 1 || s.crossings > 0), "{s:?}");
        // without `record`, nothing is kept
        let mut sim = dcfair_sim::assemble::build(&sc, sc.seed).unwrap();
        assert!(sim.run_in_parts(&p, false).unwrap().record.is_empty());
    }
}

/// `sim.threads` through [`run`]: the files of the run on one thread, and `summary.json` says
/// how many threads ran it; a run that cannot be split, or whose split would not pay, runs on
/// one thread and says why; more than one thread needs the order by origin.
#[test]
fn sim_threads_runs_the_same_run_on_threads_or_says_why_not() {
    let threads_of = |r: &Results| serde_json::from_str::<serde_json::Value>(&r.summary_json).unwrap()["threads"].clone();
    let without_threads = |r: &Results| {
        let mut f = files(r);
        let mut s: serde_json::Value = serde_json::from_str(&f[0].1).unwrap();
        s.as_object_mut().unwrap().remove("threads");
        f[0].1 = s.to_string();
        f
    };
    let origin = ("sim.tie_break", "\"origin\"");
    let sc = load_scenario(FATTREE, "t.toml", &ov(&[origin])).unwrap();
    let one = run(&sc, None, None).unwrap();
    assert!(threads_of(&one).is_null(), "one thread: no record");
    let sc2 = load_scenario(FATTREE, "t.toml", &ov(&[origin, ("sim.threads", "2")])).unwrap();
    let two = run(&sc2, None, None).unwrap();
    assert_eq!(threads_of(&two), serde_json::json!({"asked": 2, "used": 2}));
    assert_eq!(without_threads(&two), files(&one));
    // no more threads than cores: they would spin at every barrier for a core
    let cores = dcfair_sim::scenario::Threads::cores();
    let many = load_scenario(FATTREE, "t.toml", &ov(&[origin, ("sim.threads", "64")])).unwrap();
    let r = run(&many, None, None).unwrap();
    let t = threads_of(&r);
    // (the k = 4 fat-tree has 8 edge switches: more threads than that would not pay)
    let used = if cores <= 8 { cores } else { 1 };
    assert_eq!((t["asked"].as_u64(), t["used"].as_u64()), (Some(64), Some(used as u64)), "{t}");
    assert!(t["why"].as_str().unwrap().contains("core") || t["why"].as_str().unwrap().contains("switches"), "{t}");
    assert_eq!(without_threads(&r), files(&one));
    // a dumbbell: its hosts hang off one switch
    let dumbbell = load_scenario(&file("hcf/longflows.toml"), "l.toml", &ov(&[origin, ("sim.threads", "2"), ("sim.duration_s", "0.2"), ("measure.window_s", "0.1")])).unwrap();
    let t = threads_of(&run(&dumbbell, None, None).unwrap());
    assert_eq!((t["asked"].as_u64(), t["used"].as_u64()), (Some(2), Some(1)), "{t}");
    assert!(t["why"].as_str().unwrap().contains("would not pay"), "{t}");
    // an incast's requests reach every server at once
    let incast = load_scenario(&file("hcf/incast_typical.toml"), "i.toml", &ov(&[origin, ("sim.threads", "2")])).unwrap();
    let t = threads_of(&run(&incast, None, None).unwrap());
    assert!(t["used"] == 1 && t["why"].as_str().unwrap().contains("incast"), "{t}");
    // the order by origin, and a count from 1 to 256 or "auto"
    for (value, tie, says) in [("2", "\"fifo\"", "origin"), ("0", "\"origin\"", "from 1 to 256"), ("\"many\"", "\"origin\"", "auto"), ("2.5", "\"origin\"", "auto")] {
        match load_scenario(FATTREE, "t.toml", &ov(&[("sim.tie_break", tie), ("sim.threads", value)])) {
            Err(Error::Invalid { key, reason }) => assert!(key == "sim.threads" && reason.contains(says), "{value}: {key}: {reason}"),
            other => panic!("sim.threads = {value}: {:?}", other.map(|s| s.sim.threads)),
        }
    }
    assert_eq!(load_scenario(FATTREE, "t.toml", &ov(&[origin, ("sim.threads", "\"auto\"")])).unwrap().sim.threads, dcfair_sim::scenario::Threads::Auto);
}

/// A run on threads reports its progress (every part's events), and when the callback stops it,
/// it ends on every thread, with `Interrupted`.
#[test]
fn a_run_on_threads_stops_when_asked() {
    let path = format!("{}/../../scenarios/scale/permutation.toml", env!("CARGO_MANIFEST_DIR"));
    let sc = load_scenario(&std::fs::read_to_string(&path).unwrap(), &path, &ov(&[("sim.tie_break", "\"origin\""), ("sim.threads", "2"), ("sim.duration_s", "1.0")])).unwrap();
    let mut calls = 0;
    let mut stop = |p: &dcfair_sim::engine::Progress| {
        assert!(p.events > 0 && p.sim_time_s > 0.0, "{p:?}");
        calls += 1;
        std::ops::ControlFlow::Break(())
    };
    assert!(matches!(run(&sc, None, Some(&mut stop)), Err(Error::Interrupted)));
    assert_eq!(calls, 1);
}

/// A build that fails on threads fails as it does on one, and no thread waits for the others:
/// before the routes (hosts that cannot reach each other) and after them (an unknown port).
#[test]
fn a_run_on_threads_whose_build_fails_says_why_and_ends() {
    const DISCONNECTED: &str = r#"
        [sim]
        duration_s = 0.1
        tie_break = "origin"
        threads = 2
        [topology]
        kind = "custom"
        hosts = ["a", "b", "c"]
        switches = ["s1", "s2"]
        links = [
          { a = "a", b = "s1", rate_mbps = 1000.0, delay_us = 5.0 },
          { a = "b", b = "s1", rate_mbps = 1000.0, delay_us = 5.0 },
          { a = "c", b = "s2", rate_mbps = 1000.0, delay_us = 5.0 },
        ]
        [flows]
        count = 1
        src = "a"
        dst = "c"
    "#;
    let key = |text: &str, extra: &[(&str, &str)]| match run(&load_scenario(text, "t.toml", &ov(extra)).unwrap(), None, None) {
        Err(Error::Invalid { key, .. }) => key,
        other => panic!("expected invalid input, got {:?}", other.map(|r| r.summary_json)),
    };
    assert_eq!(key(DISCONNECTED, &[]), "topology");
    assert_eq!(key(FATTREE, &[("sim.threads", "2"), ("measure.trace.port", "\"nope\"")]), "measure.trace.port");
}

/// Two clusters of three switches (a full mesh of links of `inner_us`, two hosts on each
/// switch) joined by one link of 2 us, their switches listed a0, b0, a1, b1, a2, b2: blocks of
/// consecutive ids would mix the clusters.
fn two_clusters(inner_us: f64) -> String {
    let (mut hosts, mut switches, mut links) = (Vec::new(), Vec::new(), Vec::new());
    let mut link = |a: &str, b: &str, us: f64| links.push(format!("{{ a = \"{a}\", b = \"{b}\", rate_mbps = 1000.0, delay_us = {us:?} }}"));
    for i in 0..3 {
        switches.extend([format!("\"a{i}\""), format!("\"b{i}\"")]);
    }
    for c in ["a", "b"] {
        for i in 0..3 {
            for j in i + 1..3 {
                link(&format!("{c}{i}"), &format!("{c}{j}"), inner_us);
            }
            for h in 0..2 {
                hosts.push(format!("\"{c}{i}h{h}\""));
                link(&format!("{c}{i}h{h}"), &format!("{c}{i}"), 2.0);
            }
        }
    }
    link("a0", "b0", 2.0);
    format!(
        "name = \"clusters\"\n[sim]\nduration_s = 0.004\ntie_break = \"origin\"\n[topology]\nkind = \"custom\"\nhosts = [{}]\nswitches = [{}]\nlinks = [\n{}\n]\n[queue]\nlimit_pkts = 20\n[tcp]\nmin_rto_ms = 1.0\n[groups.perm]\npattern = \"permutation\"\n",
        hosts.join(", "),
        switches.join(", "),
        links.join(",\n")
    )
}

/// A custom topology is split where its graph is: at the one link between its clusters, even
/// when the clusters' own links have no delay (where a split by levels is refused), with the
/// files of the run on one thread.
#[test]
fn a_custom_topology_is_split_as_a_graph() {
    let sc = load_scenario(&two_clusters(1.0), "t.toml", &[]).unwrap();
    let sim = dcfair_sim::assemble::build(&sc, sc.seed).unwrap();
    let net = &sim.world().net;
    let p = dcfair_sim::engine::Partition::split(net, 2).unwrap();
    assert_eq!(p.cut_links(net), 1);
    same_in_parts(&two_clusters(1.0), &[]);
    let sc = load_scenario(&two_clusters(0.0), "t.toml", &[]).unwrap();
    let whole = files(&run(&sc, None, None).unwrap());
    let (r, stats) = run_on_threads(&sc, None, 2).unwrap();
    assert!(stats.crossings > 0 && stats.events.iter().all(|&e| e > 0), "{stats:?}");
    assert!(whole == files(&r), "the clusters on 2 threads differ from the whole run");
}
