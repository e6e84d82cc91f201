//! ExpressPass on the sized workloads (fixed seeds): `[incast] transport = "xpass"` and
//! `[poisson] transport = "xpass"` complete every answer and every flow, drop no data packet
//! where TCP overflows a shallow buffer, put the credit shaper on the ports, run the same bytes
//! for the same seed, and name a bad `transport` value.

use crate::common::{go, go_seeded, metric, metrics, ov};
use dcfair_sim::{load_scenario, Error, Results};

/// 8 servers at 10 Gbit/s answer one client behind a 10 Gbit/s bottleneck with a 16-packet
/// buffer: 100 kB each per request (550 full segments against 16 places), 3 requests.
const INCAST: &str = r#"
[sim]
duration_s = 0.5
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
limit_pkts = 16
[tcp]
min_rto_ms = 2.0
[incast]
servers = 8
server_bytes = 100000
rounds = 3
start_s = 0.001
"#;

/// Column `name` of ports.csv summed over every port.
fn port_sum(r: &Results, name: &str) -> u64 {
    let mut lines = r.ports_csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name} in {head:?}"));
    lines.map(|l| l.split(',').nth(i).unwrap().parse::<u64>().unwrap()).sum()
}

/// Data drops over the measured ports (ports.csv): all drops but refused credits.
fn data_drops(r: &Results) -> u64 {
    port_sum(r, "drops") - port_sum(r, "drops_credit_overflow")
}

/// Whether every measured port runs the ExpressPass credit shaper.
fn shaped(r: &Results) -> bool {
    let mut lines = r.ports_csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == "queue_kind").unwrap();
    lines.all(|l| l.split(',').nth(i) == Some("xpass"))
}

fn mask(s: &str) -> String {
    s.lines().filter(|l| !l.contains("wall_time_s")).collect::<Vec<_>>().join("\n")
}

#[test]
fn an_xpass_incast_answers_every_request_without_data_drops() {
    let tcp = go(INCAST, &[]);
    let x = go(INCAST, &[("incast.transport", "xpass")]);
    for r in [&tcp, &x] {
        assert_eq!(metric(r, "rounds_completed"), 3.0, "{}", r.summary_json);
        assert_eq!(metric(r, "answers_completed"), 24.0);
    }
    // the same buffer overflows under TCP; ExpressPass loses credits instead
    assert!(data_drops(&tcp) > 0, "TCP incast drops nothing at the bottleneck: the test is void");
    assert!(!shaped(&tcp), "no shaper without ExpressPass");
    assert_eq!(data_drops(&x), 0, "{}", x.ports_csv);
    assert!(shaped(&x), "the credit shaper is on the ports: {}", x.ports_csv);
    // 2.4 MB through 10 Gbit/s takes 1.92 ms at least; ExpressPass's block goodput is below the
    // line rate and well above nothing (measured 6.93 Gbit/s, seed 1)
    let g = metric(&x, "block_goodput_bps");
    assert!(g > 2e9 && g < 1e10, "goodput {g}");
}

#[test]
fn an_xpass_incast_is_deterministic_and_defaults_stay_tcp() {
    let a = go_seeded(INCAST, &[("incast.transport", "xpass")], 3);
    let b = go_seeded(INCAST, &[("incast.transport", "xpass")], 3);
    assert_eq!(mask(&a.summary_json), mask(&b.summary_json));
    assert_eq!(a.ports_csv, b.ports_csv);
    // "tcp" written out is the default
    let d = go_seeded(INCAST, &[], 3);
    let t = go_seeded(INCAST, &[("incast.transport", "tcp")], 3);
    assert_eq!(mask(&d.summary_json), mask(&t.summary_json));
    assert_eq!(d.ports_csv, t.ports_csv);
}

/// 8 hosts at 10 Gbit/s on a leaf-spine (symmetric routing: credits retrace their data's
/// path); web search sizes at 30 % load for 5 ms, 10 % of the bytes in one-packet flows.
fn poisson() -> String {
    let cdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/workloads/websearch_cdf.txt");
    format!(
        r#"
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
        [routing]
        mode = "symmetric"
        [queue]
        limit_pkts = 200
        [poisson]
        load = 0.3
        cdf_file = "{cdf}"
        cdf_unit = "packets"
        stop_s = 0.005
        one_packet_fraction = 0.1
        transport = "xpass"
        "#
    )
}

#[test]
fn xpass_poisson_flows_all_complete_deterministically() {
    let a = go_seeded(&poisson(), &[], 1);
    let m = metrics(&a);
    let n = m["poisson_flows"].as_u64().unwrap();
    assert!(n >= 10, "{n} flows");
    assert_eq!(m["flows_completed"].as_u64(), Some(n), "{}", a.summary_json);
    assert!(m["flows_size_1pkt"].as_u64().unwrap() > 0, "one-packet flows present");
    assert!(m["fct_max_s_size_1pkt"].as_f64().unwrap() < 0.01, "one-packet FCT finite and short");
    assert_eq!(data_drops(&a), 0, "{}", a.ports_csv);
    assert!(shaped(&a) && port_sum(&a, "drops_credit_overflow") > 0, "the shaper is on the ports and refuses credits");
    let b = go_seeded(&poisson(), &[], 1);
    assert_eq!(mask(&a.summary_json), mask(&b.summary_json));
    assert_eq!(a.flows_csv, b.flows_csv);
    // the same arrivals under TCP (default transport): same flows, no shaper
    let t = go_seeded(&poisson().replace("transport = \"xpass\"", ""), &[], 1);
    assert_eq!(metrics(&t)["poisson_flows"].as_u64(), Some(n));
    assert!(!shaped(&t));
}

#[test]
fn a_bad_transport_names_its_key() {
    for (text, key) in [(INCAST.to_string(), "incast.transport"), (poisson(), "poisson.transport")] {
        match load_scenario(&text, "t.toml", &ov(&[(key, "quic")])) {
            Err(Error::Invalid { key: k, reason }) => assert_eq!(k, key, "{reason}"),
            other => panic!("{key} = quic: {:?}", other.map(|_| ())),
        }
    }
}
