//! Per-port buffers and disciplines: custom links' `buffer_pkts` / `queue` (per link and per
//! end) and the scenario's `[ports."<name>"]`, through the public API (fixed seeds).

use dcfair_core::rng::Streams;
use crate::common::{go, ov};
use dcfair_sim::{load_scenario, run, topo, Error, Results};

/// a -> s1 -> s2 -> b, with the 100 Mbit/s link s1 - s2 in the middle (its port s1->s2 is the
/// bottleneck of the flow a -> b; s2->s1 carries the ACKs) and host c on s2.
fn custom(link: &str) -> String {
    format!(
        r#"
    [sim]
    duration_s = 0.2
    [topology]
    kind = "custom"
    hosts = ["a", "b", "c"]
    switches = ["s1", "s2"]
    links = [
      {{ a = "a", b = "s1", rate_mbps = 1000.0, delay_us = 5.0 }},
      {{ a = "s1", b = "s2", rate_mbps = 100.0, delay_us = 50.0 {link} }},
      {{ a = "s2", b = "b", rate_mbps = 1000.0, delay_us = 5.0 }},
      {{ a = "c", b = "s2", rate_mbps = 1000.0, delay_us = 5.0 }},
    ]
    [measure]
    ports = ["s1->s2", "s2->s1", "a->s1"]
    [queue]
    limit_pkts = 20
    [tcp]
    rcv_buf_bytes = 1000000
    [flows]
    count = 2
    src = "a"
    dst = "b"
"#
    )
}

fn invalid(text: &str, extra: &[(&str, &str)]) -> (String, String) {
    match load_scenario(text, "t.toml", &ov(extra)).and_then(|sc| run(&sc, None, None)) {
        Err(e @ Error::Invalid { .. }) => {
            assert_eq!(e.exit_code(), 2);
            let Error::Invalid { key, reason } = e else { unreachable!() };
            (key, reason)
        }
        other => panic!("expected invalid input, got {:?}", other.map(|r| r.summary_json)),
    }
}

/// (queue kind, most packets queued) of a measured port, from `ports.csv`.
fn port(r: &Results, name: &str) -> (String, u64) {
    let mut lines = r.ports_csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |c: &str| head.iter().position(|h| *h == c).unwrap();
    let row: Vec<&str> = lines.map(|l| l.split(',').collect::<Vec<_>>()).find(|f| f[0] == name).unwrap_or_else(|| panic!("{name} not measured"));
    (row[col("queue_kind")].to_string(), row[col("max_queue_pkts")].parse().unwrap())
}

/// The packet limit a port's discipline was built with.
fn limit(text: &str, extra: &[(&str, &str)], name: &str) -> String {
    let sc = load_scenario(text, "t.toml", &ov(extra)).unwrap();
    let built = topo::build(&sc, Streams::new(1)).unwrap();
    let p = built.net.ports.iter().find(|p| p.name == name).unwrap();
    // every discipline keeps its `Limit` in a field `limit`
    let dbg = format!("{:?}", p.queue.qdisc);
    let pat = "limit: Limit { pkts: ";
    let i = dbg.find(pat).unwrap_or_else(|| panic!("no limit in {dbg}"));
    dbg[i + pat.len()..].split([',', ' ', '}']).next().unwrap().to_string()
}

// --- custom links ------------------------------------------------------------------------------
#[test]
fn without_settings_every_port_keeps_its_default() {
    let r = go(&custom(""), &[]);
    assert_eq!(port(&r, "s1->s2"), ("droptail".into(), 20), "the bottleneck fills the scenario's buffer");
    assert_eq!(limit(&custom(""), &[], "a->s1"), "Some(1000)", "host NIC: host_buffer_pkts");
}

#[test]
fn a_link_sets_the_buffer_of_both_ports_and_an_end_of_its_own() {
    let both = custom(", buffer_pkts = 7");
    assert_eq!(port(&go(&both, &[]), "s1->s2"), ("droptail".into(), 7));
    assert_eq!(limit(&both, &[], "s2->s1"), "Some(7)");
    let end = custom(", buffer_pkts = 7, a_buffer_pkts = 3");
    assert_eq!(port(&go(&end, &[]), "s1->s2"), ("droptail".into(), 3), "the end's own value wins");
    assert_eq!(limit(&end, &[], "s2->s1"), "Some(7)");
    assert_eq!(limit(&custom(", b_buffer_pkts = 4"), &[], "s2->s1"), "Some(4)");
    assert_eq!(limit(&custom(", b_buffer_pkts = 4"), &[], "s1->s2"), "Some(20)");
}

#[test]
fn a_link_sets_the_discipline_of_both_ports_or_of_one_end() {
    let r = go(&custom(r#", queue = { kind = "sfq", limit_pkts = 9 }"#), &[]);
    assert_eq!(port(&r, "s1->s2").0, "sfq");
    assert_eq!(port(&r, "s2->s1").0, "sfq");
    assert!(port(&r, "s1->s2").1 <= 9);
    let r = go(&custom(r#", queue = { kind = "sfq" }, a_queue = { kind = "red", red = { max_p = 0.5 } }"#), &[]);
    assert_eq!(port(&r, "s1->s2").0, "red");
    assert_eq!(port(&r, "s2->s1").0, "sfq");
    assert_eq!(port(&r, "a->s1").0, "droptail", "other links keep their defaults");
}

#[test]
fn a_discipline_without_a_limit_keeps_the_ports_buffer() {
    let text = custom(r#", buffer_pkts = 12, a_queue = { kind = "red" }"#);
    assert_eq!(limit(&text, &[], "s1->s2"), "Some(12)");
    let text = custom(r#", a_queue = { kind = "sfq" }"#);
    assert_eq!(limit(&text, &[], "s1->s2"), "Some(20)", "the scenario's [queue] limit");
    let text = custom(r#", a_queue = { kind = "sfq", limit_pkts = 5 }"#);
    assert_eq!(limit(&text, &[], "s1->s2"), "Some(5)");
}

// --- [ports."<name>"] -------------------------------------------------------------------------
#[test]
fn named_ports_win_over_links_and_topology() {
    let text = custom(r#", a_buffer_pkts = 3, a_queue = { kind = "red" }"#);
    let r = go(&text, &[("ports.s1->s2.buffer_pkts", "4")]);
    assert_eq!(port(&r, "s1->s2").0, "red", "only the buffer is overridden");
    assert_eq!(limit(&text, &[("ports.s1->s2.buffer_pkts", "4")], "s1->s2"), "Some(4)");
    let r = go(&text, &[("ports.s1->s2.queue.kind", "drr")]);
    assert_eq!(port(&r, "s1->s2").0, "drr");
    assert_eq!(limit(&text, &[("ports.s1->s2.queue.kind", "drr")], "s1->s2"), "Some(3)", "keeps the link's buffer");
    // a host NIC, through the TOML table form
    let text = format!("{}\n[ports.\"a->s1\"]\nqueue = {{ kind = \"sfq\", limit_pkts = 50 }}\n", custom(""));
    let r = go(&text, &[]);
    assert_eq!(port(&r, "a->s1").0, "sfq");
    assert_eq!(limit(&text, &[], "a->s1"), "Some(50)");
}

#[test]
fn named_ports_work_on_every_topology() {
    let ft = r#"
        [sim]
        duration_s = 0.05
        [topology]
        kind = "fat_tree"
        k = 4
        host_rate_mbps = 1000.0
        fabric_rate_mbps = 1000.0
        link_delay_us = 1.0
        [flows]
        count = 2
        src = ["h0", "h5"]
        dst = "h1"
        [ports."e0_0->h1"]
        buffer_pkts = 6
        queue = { kind = "sfq" }
    "#;
    let r = go(ft, &[]);
    assert_eq!(port(&r, "e0_0->h1"), ("sfq".into(), 6));
    assert_eq!(port(&r, "e0_0->h0").0, "droptail");
}

// --- invalid input names its key ---------------------------------------------------------------
#[test]
fn a_port_that_does_not_exist_is_invalid_input_naming_the_key() {
    let (key, reason) = invalid(&custom(""), &[("ports.s1->s9.buffer_pkts", "4")]);
    assert_eq!(key, "ports.s1->s9");
    assert!(reason.contains("no port named \"s1->s9\""), "{reason}");
}

#[test]
fn bad_values_name_their_key() {
    assert_eq!(invalid(&custom(""), &[("ports.s1->s2.buffer_pkts", "0")]).0, "ports.s1->s2.buffer_pkts");
    assert_eq!(
        invalid(&custom(""), &[("ports.s1->s2.buffer_pkts", "4"), ("ports.s1->s2.queue.limit_pkts", "4")]).0,
        "ports.s1->s2.buffer_pkts"
    );
    assert_eq!(invalid(&custom(""), &[("ports.s1->s2.bufer_pkts", "4")]).0, "ports.s1->s2.bufer_pkts");
    assert_eq!(invalid(&custom(", a_buffer_pkts = 0"), &[]).0, "topology.links[1].a_buffer_pkts");
    assert_eq!(invalid(&custom(", buffer_pkts = 5, queue = { limit_pkts = 5 }"), &[]).0, "topology.links[1].buffer_pkts");
    assert_eq!(
        invalid(&custom(r#", a_queue = { kind = "red", red = { max_p = 2.0 } }"#), &[]).0,
        "topology.links[1].a_queue.red.max_p"
    );
    // a buffer the port's (inherited) discipline cannot work with
    let (key, reason) = invalid(&custom(""), &[("queue.kind", "hcf"), ("ports.s1->s2.buffer_pkts", "1")]);
    assert_eq!(key, "ports.s1->s2.buffer_pkts");
    assert!(reason.contains("hcf"), "{reason}");
}
