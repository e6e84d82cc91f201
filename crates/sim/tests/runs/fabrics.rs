//! Multi-hop topologies and routing, through the public API (fixed seeds).

use crate::common;
use crate::common::{go, metric, ov};
use dcfair_sim::routing::{Routes, RoutingMode};
use dcfair_sim::{load_scenario, run, Error, Results};

const FAT_TREE: &str = r#"
    name = "ft"
    [sim]
    duration_s = 0.5
    [topology]
    kind = "fat_tree"
    k = 4
    host_rate_mbps = 1000.0
    fabric_rate_mbps = 1000.0
    link_delay_us = 1.0
    [queue]
    limit_pkts = 100
    [tcp]
    min_rto_ms = 2.0
    [flows]
    count = 1
    src = "h0"
    dst = "h15"
"#;

fn invalid_key(text: &str, extra: &[(&str, &str)]) -> String {
    let r = load_scenario(text, "t.toml", &ov(extra)).and_then(|sc| run(&sc, None, None));
    match r {
        Err(Error::Invalid { key, .. }) => key,
        other => panic!("expected invalid input, got {:?}", other.map(|r| r.summary_json)),
    }
}

// --- fat-tree structure and routes ---------------------------------------------------------------
#[test]
fn fat_tree_k4_has_the_textbook_shape_and_path_lengths() {
    let sc = load_scenario(FAT_TREE, "t.toml", &[]).unwrap();
    let built = dcfair_sim::topo::build(&sc, dcfair_core::rng::Streams::new(1)).unwrap();
    let net = &built.net;
    let hosts = net.nodes.iter().filter(|n| n.kind == dcfair_sim::net::NodeKind::Host).count();
    assert_eq!((hosts, net.nodes.len() - hosts), (16, 20), "k=4: 16 hosts, 8 edge + 8 agg + 4 core");
    assert_eq!(net.ports.len(), 2 * (16 + 16 + 16), "48 full-duplex links");
    assert_eq!(built.cores.len(), 4);
    let routes = Routes::build(net, RoutingMode::Ecmp);
    // Number of equal-cost first hops from h0's edge switch (e0_0) towards:
    let e00 = net.nodes.iter().position(|n| n.name == "e0_0").unwrap() as u32;
    let h = |name: &str| built.host(name).unwrap();
    assert_eq!(routes.choices(e00, h("h1")).len(), 1, "same edge: straight down");
    assert_eq!(routes.choices(e00, h("h2")).len(), 2, "same pod: either aggregation");
    assert_eq!(routes.choices(e00, h("h15")).len(), 2, "other pod: either aggregation, then either core");
}

#[test]
fn longer_paths_take_longer() {
    // h0 -> h1 crosses 2 links, h0 -> h2 4 links, h0 -> h15 6 links. A short transfer is
    // dominated by round trips and store-and-forward delays, so it finishes later on a longer path.
    let fct = |dst: &str| {
        let r = go(FAT_TREE, &[("flows.dst", dst), ("flows.size_bytes", "30000")]);
        assert_eq!(metric(&r, "flows_completed"), 1.0, "h0 -> {dst}");
        metric(&r, "fct_max_s")
    };
    let (two, four, six) = (fct("h1"), fct("h2"), fct("h15"));
    assert!(two < four && four < six, "{two} {four} {six}");
}

#[test]
fn a_permutation_of_long_flows_fills_the_fabric_without_loss_of_accounting() {
    let srcs = "[\"h0\",\"h1\",\"h2\",\"h3\",\"h4\",\"h5\",\"h6\",\"h7\"]";
    let dsts = "[\"h8\",\"h9\",\"h10\",\"h11\",\"h12\",\"h13\",\"h14\",\"h15\"]";
    for mode in ["ecmp", "symmetric", "spray", "dst_bits"] {
        let r = go(FAT_TREE, &[("flows.count", "8"), ("flows.src", srcs), ("flows.dst", dsts), ("routing.mode", mode)]);
        // 8 flows into 8 distinct host ports: each receiver link is the flow's own.
        let tput = metric(&r, "throughput_bps_tcp");
        assert!(tput > 2.0e8, "{mode}: mean goodput {tput}");
    }
}

#[test]
fn the_scale_scenario_runs_a_permutation_on_a_k4_fat_tree_end_to_end() {
    // scenarios/scale/permutation.toml (flows.pattern = "permutation") at k = 4: 16 hosts
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/scale/permutation.toml")).unwrap();
    let pairs = |seed: u64| {
        let r = common::go_seeded(&text, &[("topology.k", "4")], seed);
        let mut lines = r.flows_csv.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
        let (src, dst, got) = (col("src"), col("dst"), col("bytes_delivered"));
        let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
        assert_eq!(rows.len(), 16, "seed {seed}: one flow per host");
        assert!(rows.iter().all(|r| r[got].parse::<u64>().unwrap() > 0), "seed {seed}: every flow delivers");
        (rows.iter().map(|r| (r[src].clone(), r[dst].clone())).collect::<Vec<_>>(), r.flows_csv)
    };
    let (one, csv) = pairs(1);
    let hosts: std::collections::BTreeSet<String> = (0..16).map(|i| format!("h{i}")).collect();
    assert_eq!(one.iter().map(|p| p.0.clone()).collect::<std::collections::BTreeSet<_>>(), hosts, "each host sends once");
    assert_eq!(one.iter().map(|p| p.1.clone()).collect::<std::collections::BTreeSet<_>>(), hosts, "each host receives once");
    assert!(one.iter().all(|(s, d)| s != d), "no host sends to itself: {one:?}");
    let (again, csv_again) = pairs(1);
    assert_eq!((&again, &csv_again), (&one, &csv), "the same seed: the same pairs and the same bytes");
    assert_ne!(pairs(2).0, one, "another seed: another permutation");
}

/// The core ports that carried packets when eight flows cross the k = 4 fat-tree's core.
fn core_ports_used(extra: &[(&str, &str)], seed: u64) -> Vec<String> {
    let sc = load_scenario(FAT_TREE, "t.toml", &[]).unwrap();
    let built = dcfair_sim::topo::build(&sc, dcfair_core::rng::Streams::new(1)).unwrap();
    let names: Vec<String> = built.net.ports.iter().map(|p| p.name.clone()).filter(|n| n.starts_with('c')).collect();
    let list = format!("[{}]", names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(","));
    let srcs = "[\"h0\",\"h1\",\"h2\",\"h3\",\"h4\",\"h5\",\"h6\",\"h7\"]";
    let dsts = "[\"h8\",\"h9\",\"h10\",\"h11\",\"h12\",\"h13\",\"h14\",\"h15\"]";
    let mut o = vec![("flows.count", "8"), ("flows.src", srcs), ("flows.dst", dsts), ("sim.duration_s", "0.02"), ("measure.ports", &list)];
    o.extend_from_slice(extra);
    let r = common::go_seeded(FAT_TREE, &o, seed);
    names.into_iter().filter(|n| port_packets_out(&r, n) > 0).collect()
}

#[test]
fn the_ecmp_hash_seed_is_fixed_by_default_and_drawn_from_the_run_seed_on_request() {
    for mode in ["ecmp", "symmetric"] {
        let m = [("routing.mode", mode)];
        // default (0): the same paths whatever the run's seed
        let fixed = core_ports_used(&m, 1);
        assert!(!fixed.is_empty());
        assert_eq!(core_ports_used(&m, 2), fixed, "{mode}: seed 0 ignores the run's seed");
        // another fixed seed: other paths, again the same for every run seed
        let seven = [("routing.mode", mode), ("routing.hash_seed", "7")];
        assert_eq!(core_ports_used(&seven, 1), core_ports_used(&seven, 2));
        assert_ne!(core_ports_used(&seven, 1), fixed, "{mode}: seed 7 is another hash");
        // "run": the run's seed picks the paths
        let run = [("routing.mode", mode), ("routing.hash_seed", "run")];
        let sets: std::collections::BTreeSet<_> = (1..=4).map(|seed| core_ports_used(&run, seed)).collect();
        assert!(sets.len() >= 2, "{mode}: four run seeds, one choice of paths");
    }
    assert_eq!(invalid_key(FAT_TREE, &[("routing.hash_seed", "-1")]), "routing.hash_seed");
    assert_eq!(invalid_key(FAT_TREE, &[("routing.hash_seed", "often")]), "routing.hash_seed");
    assert_eq!(invalid_key(FAT_TREE, &[("routing.hash_seed", "72057594037927936")]), "routing.hash_seed");
}

#[test]
fn equal_length_routing_with_the_core_by_destination_bits_climbs_to_that_core() {
    // k = 4: four cores; a flow to host h climbs (data and ACKs alike) to core h mod 4
    for (dst, core) in [("h5", "c1"), ("h6", "c2"), ("h12", "c0"), ("h9", "c1")] {
        let o = [("flows.count", "1"), ("flows.src", "h0"), ("flows.dst", dst), ("routing.equal_length", "true"), ("routing.core", "dst_bits")];
        let used = core_ports_used(&o, 1);
        assert!(!used.is_empty() && used.iter().all(|p| p.starts_with(&format!("{core}->"))), "h0 -> {dst}: {used:?}");
        // both directions: down towards the receiver's pod and towards the sender's
        assert!(used.len() >= 2, "{used:?}");
    }
}

#[test]
fn equal_length_routing_with_a_random_core_per_packet_spreads_one_flow_over_every_core() {
    // one flow between neighbours: per flow it climbs to one core, per packet to all four
    let one = [("flows.count", "1"), ("flows.src", "h0"), ("flows.dst", "h1"), ("routing.equal_length", "true")];
    let cores = |used: &[String]| used.iter().map(|p| p[..2].to_string()).collect::<std::collections::BTreeSet<_>>();
    let mut per_flow = one.to_vec();
    per_flow.push(("routing.core", "random"));
    assert_eq!(cores(&core_ports_used(&per_flow, 1)).len(), 1);
    let mut per_packet = one.to_vec();
    per_packet.push(("routing.core", "random_packet"));
    let used = core_ports_used(&per_packet, 1);
    assert_eq!(cores(&used).len(), 4, "{used:?}");
    // deterministic: the same seed spreads the packets the same way, another seed differently
    let bytes = |seed| {
        let mut o = per_packet.clone();
        o.push(("sim.duration_s", "0.02"));
        common::go_seeded(FAT_TREE, &o, seed).flows_csv
    };
    assert_eq!(bytes(3), bytes(3));
    assert_ne!(bytes(3), bytes(4));
}

#[test]
fn equal_length_routing_climbs_to_a_core_even_for_neighbours() {
    // h0 -> h1 share an edge switch: 2 links normally, 6 with equal-length routing. A finite flow
    // takes longer over the longer path (more propagation per RTT).
    let base = [("flows.dst", "h1"), ("flows.size_bytes", "20000")];
    let short = go(FAT_TREE, &base);
    let mut el = base.to_vec();
    el.push(("routing.equal_length", "true"));
    let long = go(FAT_TREE, &el);
    assert!(metric(&long, "fct_max_s") > metric(&short, "fct_max_s"));
}

fn port_packets_out(r: &Results, port: &str) -> u64 {
    let line = r.ports_csv.lines().find(|l| l.starts_with(&format!("{port},"))).unwrap_or_else(|| panic!("{port} not measured"));
    line.split(',').nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_group_waypoint_takes_its_flows_through_that_switch() {
    // h0 -> h1 share e0_0; through c0 they climb e0_0 -> a0_0 -> c0 and back down.
    let base = [("flows.dst", "h1"), ("flows.size_bytes", "20000"), ("measure.ports", r#"["c0->a0_0", "e0_0->h1"]"#)];
    let direct = go(FAT_TREE, &base);
    assert_eq!(port_packets_out(&direct, "c0->a0_0"), 0);
    let mut via = base.to_vec();
    via.push(("flows.via", "c0"));
    let detour = go(FAT_TREE, &via);
    let delivered = port_packets_out(&detour, "e0_0->h1");
    assert!(delivered >= 14, "20000 bytes are 14 segments, got {delivered}");
    // Data and ACKs both pass c0 (both directions take the waypoint).
    assert!(port_packets_out(&detour, "c0->a0_0") > delivered, "every data packet and the ACKs came down from c0");
    assert!(metric(&detour, "fct_max_s") > metric(&direct, "fct_max_s"));
}

#[test]
fn a_waypoint_must_be_a_switch() {
    assert_eq!(invalid_key(FAT_TREE, &[("flows.via", "c99")]), "flows.via");
    assert_eq!(invalid_key(FAT_TREE, &[("flows.via", "h3")]), "flows.via");
}

// --- other fabrics -------------------------------------------------------------------------------
const LEAF_SPINE: &str = r#"
    [sim]
    duration_s = 0.2
    [topology]
    kind = "leaf_spine"
    leaves = 3
    spines = 2
    hosts_per_leaf = 4
    host_rate_mbps = 1000.0
    fabric_rate_mbps = 1000.0
    link_delay_us = 1.0
    [queue]
    limit_pkts = 100
    [flows]
    count = 4
    src = ["h0", "h1", "h2", "h3"]
    dst = ["h4", "h5", "h8", "h9"]
"#;

#[test]
fn leaf_spine_runs_and_names_its_ports() {
    let r = go(LEAF_SPINE, &[]);
    assert!(metric(&r, "throughput_bps_tcp") > 1e8);
    assert!(r.ports_csv.contains("l1->h4"), "{}", r.ports_csv);
    let r = go(LEAF_SPINE, &[("measure.ports", "[\"l1->h4\"]")]);
    assert_eq!(r.ports_csv.lines().count(), 2, "one measured port");
}

#[test]
fn leaf_spine_oversubscription_sets_the_fabric_rate() {
    // 4 hosts x 1 Gbit/s under a leaf, 2 spines: 2:1 means 1 Gbit/s leaf-spine links (the
    // scenario's own rate), 4:1 half that: four flows leaving a leaf then get half as much.
    let same = LEAF_SPINE.replace("fabric_rate_mbps = 1000.0", "oversubscription = 2.0");
    assert_eq!(go(&same, &[]).flows_csv, go(LEAF_SPINE, &[]).flows_csv);
    let narrow = go(&LEAF_SPINE.replace("fabric_rate_mbps = 1000.0", "oversubscription = 4.0"), &[]);
    let (wide, narrow) = (metric(&go(LEAF_SPINE, &[]), "throughput_bps_tcp"), metric(&narrow, "throughput_bps_tcp"));
    assert!(narrow < 0.6 * wide && narrow > 0.35 * wide, "{narrow} against {wide}");
    assert_eq!(invalid_key(LEAF_SPINE, &[("topology.oversubscription", "2.0")]), "topology.oversubscription");
    assert_eq!(invalid_key(&same, &[("topology.oversubscription", "0")]), "topology.oversubscription");
    assert_eq!(invalid_key(&LEAF_SPINE.replace("fabric_rate_mbps = 1000.0", ""), &[]), "topology.fabric_rate_mbps");
}

const PARKING_LOT: &str = r#"
    [sim]
    duration_s = 0.5
    [measure]
    window_s = 0.3
    [topology]
    kind = "parking_lot"
    bottlenecks = 3
    host_rate_mbps = 1000.0
    bottleneck_rate_mbps = 100.0
    link_delay_us = 5.0
    [queue]
    limit_pkts = 50
    [flows]
    count = 1
    src = "src0"
    dst = "dst3"
    [groups.cross]
    count = 3
    src = ["src0", "src1", "src2"]
    dst = ["dst1", "dst2", "dst3"]
"#;

#[test]
fn parking_lot_long_flow_gets_less_than_the_cross_flows() {
    let r = go(PARKING_LOT, &[]);
    let long = metric(&r, "throughput_bps_flows");
    let cross = metric(&r, "throughput_bps_cross");
    assert!(long < cross, "the flow crossing 3 bottlenecks ({long}) gets less than one-hop flows ({cross})");
    assert_eq!(r.ports_csv.lines().count(), 4, "3 chain links measured");
}

// --- bad input -------------------------------------------------------------------------------------
#[test]
fn bad_fabrics_name_the_key() {
    assert_eq!(invalid_key(FAT_TREE, &[("topology.k", "5")]), "topology.k");
    assert_eq!(invalid_key(FAT_TREE, &[("flows.dst", "h99")]), "flows.dst");
    assert_eq!(invalid_key(FAT_TREE, &[("flows.dst", "h0")]), "flows.dst");
    assert_eq!(invalid_key(FAT_TREE, &[("measure.ports", "[\"nope\"]")]), "measure.ports");
    assert_eq!(invalid_key(PARKING_LOT, &[("routing.equal_length", "true")]), "routing.equal_length");
    assert_eq!(invalid_key(LEAF_SPINE, &[("flows.src", "[]")]), "flows.src");
    // no src on a fabric
    let text = FAT_TREE.replace("src = \"h0\"", "");
    assert_eq!(invalid_key(&text, &[]), "flows.src");
}

const CUSTOM: &str = r#"
    [sim]
    duration_s = 0.1
    [topology]
    kind = "custom"
    hosts = ["a", "b", "c"]
    switches = ["s1", "s2"]
    links = [
      { a = "a", b = "s1", rate_mbps = 1000.0, delay_us = 5.0 },
      { a = "s1", b = "s2", rate_mbps = 100.0, delay_us = 50.0, measured = true },
      { a = "s2", b = "b", rate_mbps = 1000.0, delay_us = 5.0 },
      { a = "c", b = "s2", rate_mbps = 1000.0, delay_us = 5.0 },
    ]
    [queue]
    limit_pkts = 20
    [flows]
    count = 1
    src = "a"
    dst = "b"
"#;

#[test]
fn custom_topologies_run_and_reject_what_cannot_run() {
    let r = go(CUSTOM, &[]);
    assert!(metric(&r, "utilization") > 0.8, "{}", r.summary_json);
    assert!(r.ports_csv.contains("s1->s2"));
    // a link to nowhere, a host with two NICs, a disconnected pair of hosts
    let bad = CUSTOM.replace("b = \"b\"", "b = \"x\"");
    assert_eq!(invalid_key(&bad, &[]), "topology.links[2].b");
    let two = CUSTOM.replace("{ a = \"c\", b = \"s2\"", "{ a = \"a\", b = \"s2\"");
    assert_eq!(invalid_key(&two, &[]), "topology.links");
    let cut = CUSTOM.replace("{ a = \"s1\", b = \"s2\", rate_mbps = 100.0, delay_us = 50.0, measured = true },", "");
    let cut = cut.replace("{ a = \"c\", b = \"s2\"", "{ a = \"c\", b = \"s1\"");
    assert_eq!(invalid_key(&cut, &[]), "topology");
}
