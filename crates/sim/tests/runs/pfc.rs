//! PFC's lossless class in whole runs: a lossless source faster than its bottleneck is paused
//! instead of dropped, a lossy one is dropped, a headroom too small for what is in flight drops
//! lossless packets (and says so), and the `[pfc]` keys are checked (fixed seeds).

use crate::common::{go, metric, ov};
use dcfair_sim::{load_scenario, Error, Results};

/// Host `a` sends UDP at 5 Gbit/s (half its 10 Gbit/s NIC) through switch `s` to `b` over a
/// 1 Gbit/s link with a 100-packet buffer, for 10 ms.
const OVERLOAD: &str = r#"
[sim]
duration_s = 0.01
[topology]
kind = "custom"
hosts = ["a", "b"]
switches = ["s"]
links = [
  { a = "a", b = "s", rate_mbps = 10000.0, delay_us = 10.0, measured = true },
  { a = "s", b = "b", rate_mbps = 1000.0, delay_us = 10.0, buffer_pkts = 100, measured = true },
]
[udp]
rate_fraction = 0.5
pattern = "cbr"
packet_bytes = 1500
src = "a"
dst = "b"
[pfc]
"#;

/// The column `name` of `ports.csv`, by port name.
fn port_col(r: &Results, port: &str, name: &str) -> f64 {
    let mut lines = r.ports_csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    let row = lines.find(|l| l.split(',').next() == Some(port)).unwrap_or_else(|| panic!("no row {port}:\n{}", r.ports_csv));
    row.split(',').nth(i).unwrap().parse().unwrap()
}

fn delivered_bytes(r: &Results) -> f64 {
    metric(r, "throughput_bps_udp") * 0.01 / 8.0
}

#[test]
fn a_lossless_source_is_paused_not_dropped_and_the_bottleneck_stays_full() {
    let r = go(OVERLOAD, &[("udp.priority", "3")]);
    assert_eq!(metric(&r, "lossless_drops"), 0.0);
    assert_eq!(metric(&r, "drops"), 0.0, "{}", r.summary_json);
    assert!(metric(&r, "pfc_pauses_sent") >= 1.0);
    assert!(metric(&r, "pfc_resumes_sent") >= 1.0, "the gate falls to XON between pauses");
    // the switch paused the sender's NIC (a's port), and a's port shows it
    assert!(port_col(&r, "a->s", "pfc_pauses_received") >= 1.0);
    assert!(port_col(&r, "s->a", "pfc_pauses_sent") >= 1.0, "the switch's port on a's link sends the frames");
    let paused = port_col(&r, "a->s", "pfc_paused_s");
    assert!(paused > 0.005 && paused < 0.01, "5 Gbit/s into 1: paused most of the time, {paused} s");
    // nothing piles up in the switch beyond XOFF and the headroom
    let gate = port_col(&r, "s->a", "ingress_max_bytes");
    assert!((100_000.0..=100_000.0 + 2.0 * 12_500.0 + 3000.0).contains(&gate), "{gate}");
    // the bottleneck stays busy: 1 Gbit/s for the 10 ms less the first packet's trip
    let got = metric(&r, "throughput_bps_udp");
    assert!(got > 0.97e9 && got <= 1.0e9, "{got}");
}

#[test]
fn a_lossy_source_in_the_same_run_is_dropped_and_pauses_nothing() {
    let r = go(OVERLOAD, &[("udp.priority", "0")]);
    assert_eq!(metric(&r, "pfc_pauses_sent"), 0.0);
    assert!(metric(&r, "drops") > 1000.0, "{}", r.summary_json);
    assert!(delivered_bytes(&r) > 0.97 * 1.25e6);
}

#[test]
fn a_headroom_smaller_than_what_is_in_flight_drops_lossless_packets_and_counts_them() {
    let r = go(OVERLOAD, &[("udp.priority", "3"), ("pfc.headroom_bytes", "1500")]);
    let lost = metric(&r, "lossless_drops");
    assert!(lost > 0.0, "10 us of 5 Gbit/s is 6 kB in flight: a 1.5 kB headroom overflows");
    assert_eq!(port_col(&r, "s->a", "lossless_drops"), lost);
}

#[test]
fn bad_pfc_keys_are_named() {
    for (k, v, key) in [
        ("pfc.xon_bytes", "200000", "pfc.xon_bytes"),
        ("pfc.priority", "9", "pfc.priority"),
        ("pfc.ecn.pmax", "2", "pfc.ecn.pmax"),
        ("pfc.pause_quanta", "0", "pfc.pause_quanta"),
        ("udp.priority", "8", "udp.priority"),
    ] {
        match load_scenario(OVERLOAD, "t.toml", &ov(&[(k, v)])) {
            Err(Error::Invalid { key: got, .. }) => assert_eq!(got, key, "{k} = {v}"),
            other => panic!("{k} = {v}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_pfc_run() {
    let a = go(OVERLOAD, &[("udp.priority", "3"), ("udp.pattern", "poisson")]);
    let b = go(OVERLOAD, &[("udp.priority", "3"), ("udp.pattern", "poisson")]);
    assert_eq!((a.ports_csv.clone(), a.flows_csv.clone()), (b.ports_csv, b.flows_csv));
}

#[test]
fn a_shared_buffer_holds_a_lossy_queue_to_alpha_times_what_is_free() {
    // the port's own limit out of the way. PFC reserves its gates' headroom, 28 kB on a's link
    // (2 x 12.5 kB + 2 MTU) and 5.5 kB on b's: 66.5 kB are shared. alpha 1: the one busy queue
    // settles at half of that
    let text = OVERLOAD.replace("buffer_pkts = 100,", "buffer_pkts = 100000,");
    let r = go(&text, &[("udp.priority", "0"), ("buffer.bytes", "100000"), ("buffer.alpha", "1")]);
    let q = port_col(&r, "s->b", "max_queue_bytes");
    assert!((31_750.0..=33_250.0).contains(&q), "{q}");
    assert!(metric(&r, "buffer_drops") > 1000.0);
    assert_eq!(metric(&r, "buffer_max_used_bytes"), q);
    // alpha 3: three quarters
    let r = go(&text, &[("udp.priority", "0"), ("buffer.bytes", "100000"), ("buffer.alpha", "3")]);
    let q = port_col(&r, "s->b", "max_queue_bytes");
    assert!((48_375.0..=49_875.0).contains(&q), "{q}");
}

#[test]
fn with_a_shared_buffer_the_gates_pause_at_a_fraction_of_what_is_free() {
    // 400 kB less the gates' headroom (28 + 5.5 kB) is 366.5 kB shared: a gate pauses near
    // (366.5 kB - what the switch holds) / 8, at most 46 kB, far below the static 100 kB
    let r = go(OVERLOAD, &[("udp.priority", "3"), ("buffer.bytes", "400000")]);
    assert_eq!(metric(&r, "lossless_drops"), 0.0);
    let gate = port_col(&r, "s->a", "ingress_max_bytes");
    assert!((35_000.0..=46_000.0 + 28_000.0).contains(&gate), "{gate}");
    assert!(metric(&r, "throughput_bps_udp") > 0.97e9);
}

#[test]
fn bad_buffer_keys_are_named() {
    for (extra, key) in [
        (vec![("buffer.alpha", "-1")], "buffer.alpha"),
        (vec![("buffer.pfc_alpha", "0")], "buffer.pfc_alpha"),
        (vec![("buffer.bytes", "50000")], "pfc.xoff_bytes"),
    ] {
        match load_scenario(OVERLOAD, "t.toml", &ov(&extra)) {
            Err(Error::Invalid { key: got, .. }) => assert_eq!(got, key, "{extra:?}"),
            other => panic!("{extra:?}: {:?}", other.map(|_| ())),
        }
    }
}

/// Four switches in a ring, a host on each; each host sends a line-rate lossless flow two hops
/// clockwise (`via` the next switch), so every ring link carries two flows and every switch's
/// ingress from the ring waits on its egress to the ring: a cyclic buffer dependency.
const RING: &str = r#"
[sim]
duration_s = 0.02
[topology]
kind = "custom"
hosts = ["h1", "h2", "h3", "h4"]
switches = ["s1", "s2", "s3", "s4"]
links = [
  { a = "h1", b = "s1", rate_mbps = 10000.0, delay_us = 1.0 },
  { a = "h2", b = "s2", rate_mbps = 10000.0, delay_us = 1.0 },
  { a = "h3", b = "s3", rate_mbps = 10000.0, delay_us = 1.0 },
  { a = "h4", b = "s4", rate_mbps = 10000.0, delay_us = 1.0 },
  { a = "s1", b = "s2", rate_mbps = 10000.0, delay_us = 1.0, measured = true },
  { a = "s2", b = "s3", rate_mbps = 10000.0, delay_us = 1.0, measured = true },
  { a = "s3", b = "s4", rate_mbps = 10000.0, delay_us = 1.0, measured = true },
  { a = "s4", b = "s1", rate_mbps = 10000.0, delay_us = 1.0, measured = true },
]
[queue]
limit_pkts = 1000
[pfc]
[roce]
cc = "none"
[groups.a]
src = "h1"
dst = "h3"
count = 1
via = "s2"
transport = "roce"
[groups.b]
src = "h2"
dst = "h4"
count = 1
via = "s3"
transport = "roce"
[groups.c]
src = "h3"
dst = "h1"
count = 1
via = "s4"
transport = "roce"
[groups.d]
src = "h4"
dst = "h2"
count = 1
via = "s1"
transport = "roce"
"#;

#[test]
fn a_pfc_deadlock_is_found_reported_and_ends_the_run() {
    let r = go(RING, &[]);
    let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    let d = &s["pfc_deadlock"];
    assert!(d.is_object(), "{}", r.summary_json);
    let at = d["at_s"].as_f64().unwrap();
    assert!(at < 0.01, "found within a few pause times, not at the end: {at}");
    assert!(s["sim_time_s"].as_f64().unwrap() <= at, "the run ends there");
    let ports: Vec<&str> = d["ports"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(ports.len(), 4, "{ports:?}");
    assert!(ports.iter().all(|p| p.starts_with('s') && p.contains("->s")), "the ring's ports: {ports:?}");
    assert_eq!(metric(&r, "lossless_drops"), 0.0);
    // without the fourth flow the dependency is a chain, not a cycle: pauses, and no deadlock
    let chain = RING.replace("[groups.d]", "[groups.d]\nsize_bytes = 1").replace("via = \"s1\"", "via = \"s3\"");
    let r = go(&chain, &[]);
    let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    assert!(s["pfc_deadlock"].is_null(), "{}", r.summary_json);
    assert!(metric(&r, "pfc_pauses_sent") > 0.0 && s["sim_time_s"].as_f64() == Some(0.02));
    assert!(metric(&r, "throughput_bps_a") > 3e9, "{}", r.summary_json);
}
