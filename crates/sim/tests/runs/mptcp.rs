//! MPTCP connections through the engine (`dcfair_core::transport::mptcp`), with fixed seeds:
//! data-level delivery, subflow paths, equivalence with plain TCP at one subflow, the coupled increase against TCP
//! at a shared bottleneck, invalid input and determinism.

use crate::common::{go, go_seeded, metric, ov};
use dcfair_sim::{load_scenario, run, Error, Results};

const FAT_TREE: &str = r#"
    name = "mptcp-ft"
    seed = 1
    [sim]
    duration_s = 0.2
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
    size_bytes = 3000000
    [flows.tcp.mptcp]
    subflows = 2
"#;

/// Two hosts into one receiver over a 100 Mbit/s bottleneck: group `mp` (one MPTCP connection)
/// from s0, group `tcp` (one NewReno flow) from s1.
const DUMBBELL: &str = r#"
    name = "mptcp-dumbbell"
    seed = 1
    [sim]
    duration_s = 5.0
    [measure]
    window_s = 4.0
    [topology]
    kind = "dumbbell"
    senders = 2
    access_rate_mbps = 1000.0
    access_delay_us = 25.0
    bottleneck_rate_mbps = 100.0
    bottleneck_delay_us = 25.0
    [queue]
    kind = "droptail"
    limit_pkts = 50
    [tcp]
    cc = "newreno"
    [groups.mp]
    count = 1
    src = "s0"
    dst = "r0"
    [groups.mp.tcp.mptcp]
    subflows = 2
    [groups.tcp]
    count = 1
    src = "s1"
    dst = "r0"
"#;

/// The rows of a CSV text, split on commas, header first.
fn csv(text: &str) -> Vec<Vec<String>> {
    text.lines().map(|l| l.split(',').map(String::from).collect()).collect()
}

/// Column `name` of a CSV text's data rows.
fn column(text: &str, name: &str) -> Vec<String> {
    let rows = csv(text);
    let i = rows[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name}"));
    rows[1..].iter().map(|r| r[i].clone()).collect()
}

fn subflows_csv(r: &Results) -> String {
    let t = r.subflows.as_ref().expect("an MPTCP run has subflows.csv");
    let mut b = Vec::new();
    t.write_csv(&mut b).unwrap();
    String::from_utf8(b).unwrap()
}

fn u64s(v: Vec<String>) -> Vec<u64> {
    v.iter().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn a_two_subflow_connection_delivers_a_sized_flow_completely_once() {
    let r = go(FAT_TREE, &[]);
    // one row for the connection, its bytes the data ACK
    assert_eq!(column(&r.flows_csv, "flow_id"), ["0"]);
    assert_eq!(u64s(column(&r.flows_csv, "bytes_delivered")), [3_000_000]);
    assert_eq!((metric(&r, "flows"), metric(&r, "flows_completed")), (1.0, 1.0));
    let sub = subflows_csv(&r);
    assert_eq!(column(&sub, "connection_id"), ["0", "0"]);
    let delivered = u64s(column(&sub, "bytes_delivered"));
    // every data byte rides one subflow: the subflows' in-order bytes add up to the size exactly
    // (a lost byte would leave the data ACK short, a duplicated one would add to the sum)
    assert_eq!(delivered.iter().sum::<u64>(), 3_000_000, "{sub}");
    assert!(delivered.iter().all(|&b| b > 500_000), "both subflows carry data: {sub}");
    // the connection completes no earlier than the data ACK reaches the size
    let fct = metric(&r, "fct_max_s");
    assert!(fct > 0.024 && fct < 0.2, "{fct}");
}

#[test]
fn subflows_have_their_own_5_tuples_and_ecmp_puts_them_on_different_cores() {
    let r = go(FAT_TREE, &[]);
    let sub = subflows_csv(&r);
    let sports = column(&sub, "sport");
    assert_eq!(sports, ["1024", "1025"], "distinct source ports, the same hosts");
    assert_eq!(column(&sub, "src"), ["h0", "h0"]);
    assert_eq!(column(&sub, "dst"), ["h15", "h15"]);
    // routing.hash_seed is fixed (0) here: these two 5-tuples hash onto cores c1 and c0
    let paths = column(&sub, "path");
    assert_eq!(paths, ["e0_0>a0_0>c1>a3_0>e3_1", "e0_0>a0_0>c0>a3_0>e3_1"]);
    // spraying has no single path
    let r = go(FAT_TREE, &[("routing.mode", "\"spray\"")]);
    assert_eq!(column(&subflows_csv(&r), "path"), ["spray", "spray"]);
}

#[test]
fn one_subflow_is_plain_tcp_byte_for_byte() {
    let without = FAT_TREE.replace("[flows.tcp.mptcp]\n    subflows = 2\n", "");
    assert!(!without.contains("[flows.tcp"));
    let strip = |r: &Results| {
        let mut v: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
        v.as_object_mut().unwrap().remove("wall_time_s");
        v
    };
    for mode in ["\"ecmp\"", "\"spray\""] {
        let a = go(FAT_TREE, &[("flows.tcp.mptcp.subflows", "1"), ("routing.mode", mode)]);
        let b = go(&without, &[("routing.mode", mode)]);
        assert_eq!(a.flows_csv, b.flows_csv, "{mode}");
        assert_eq!(a.ports_csv, b.ports_csv, "{mode}");
        assert_eq!(strip(&a), strip(&b), "{mode}");
        assert!(a.subflows.is_none(), "no connection, no subflows.csv");
    }
}

/// Goodput of the MPTCP connection over the plain TCP flow's at the shared bottleneck.
fn share(coupling: &str) -> f64 {
    let r = go(DUMBBELL, &[("groups.mp.tcp.mptcp.coupling", coupling)]);
    assert_eq!(metric(&r, "flows"), 2.0, "one connection and one flow");
    metric(&r, "throughput_bps_mp") / metric(&r, "throughput_bps_tcp")
}

#[test]
fn lia_takes_about_one_tcp_share_at_a_shared_bottleneck_and_uncoupled_takes_more() {
    // RFC 6356's goal 2 ("do no harm"): at a bottleneck all subflows share, the connection
    // takes no more than one TCP flow would. LIA's equilibrium (RFC 6356 section 3) gives it
    // one TCP's rate with equal RTTs; drop-tail's synchronised losses let it run somewhat above
    // (measured: 1.31 here), within the 0.6 to 1.5 band the issue sets.
    let lia = share("\"lia\"");
    assert!((0.6..=1.5).contains(&lia), "LIA / TCP = {lia}");
    let olia = share("\"olia\"");
    assert!((0.6..=1.5).contains(&olia), "OLIA / TCP = {olia}");
    // two uncoupled NewReno subflows are two TCP flows: about twice the plain flow's share
    // (measured: 1.84)
    let uncoupled = share("\"uncoupled\"");
    assert!(uncoupled > 1.5, "uncoupled / TCP = {uncoupled}");
    assert!(uncoupled > lia + 0.3, "uncoupled {uncoupled}, LIA {lia}");
}

#[test]
fn a_handshake_opens_the_joins_after_the_first_subflow() {
    // with the handshake the second subflow's SYN leaves when the first is established; both
    // subflows still deliver, and the data level is complete
    let r = go(FAT_TREE, &[("flows.tcp.handshake", "true")]);
    assert_eq!(u64s(column(&r.flows_csv, "bytes_delivered")), [3_000_000]);
    let r0 = go(FAT_TREE, &[("flows.tcp.handshake", "false")]);
    assert!(metric(&r0, "fct_max_s") < metric(&r, "fct_max_s"), "no handshake, no round trips before data");
}

#[test]
fn invalid_subflows_name_their_key() {
    for (k, v, want) in [
        ("flows.tcp.mptcp.subflows", "0", "flows.tcp.mptcp.subflows"),
        ("flows.tcp.mptcp.subflows", "33", "flows.tcp.mptcp.subflows"),
        ("flows.transport", "\"xpass\"", "flows.transport"),
    ] {
        match load_scenario(FAT_TREE, "t.toml", &ov(&[(k, v)])).and_then(|sc| run(&sc, None, None)) {
            Err(Error::Invalid { key, .. }) => assert_eq!(key, want, "{k} = {v}"),
            other => panic!("{k} = {v}: expected invalid input, got {:?}", other.map(|r| r.summary_json)),
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_files() {
    let a = go_seeded(DUMBBELL, &[("sim.duration_s", "1.0"), ("measure.window_s", "0.5")], 7);
    let b = go_seeded(DUMBBELL, &[("sim.duration_s", "1.0"), ("measure.window_s", "0.5")], 7);
    assert_eq!(a.flows_csv, b.flows_csv);
    assert_eq!(a.ports_csv, b.ports_csv);
    assert_eq!(subflows_csv(&a), subflows_csv(&b));
}
