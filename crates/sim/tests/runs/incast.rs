//! TCP incast servers over one persistent connection each, or over a new connection per
//! request (`incast.connection = "per_request"`): every request is answered either way, a new
//! connection costs its handshake, the counts of every connection add up, and bad settings name
//! the key (fixed seeds).

use crate::common::{go, go_seeded, metric, ov};
use dcfair_sim::{load_scenario, Error, Results};

/// 4 servers answer one client over a 1 Gbit/s bottleneck with a 64-packet buffer (no loss):
/// 20 kB each per request, 5 requests, a millisecond apart.
const INCAST: &str = r#"
[sim]
duration_s = 1.0
[topology]
kind = "dumbbell"
senders = 4
receivers = 1
access_rate_mbps = 1000.0
access_delay_us = 25.0
bottleneck_rate_mbps = 1000.0
bottleneck_delay_us = 25.0
[queue]
limit_pkts = 64
[tcp]
handshake = true
min_rto_ms = 200.0
[incast]
servers = 4
server_bytes = 20000
rounds = 5
gap_s = 0.001
start_s = 0.01
"#;

const PER_REQUEST: (&str, &str) = ("incast.connection", "per_request");

/// flows.csv column `name` of every incast server (the only flows here).
fn column(r: &Results, name: &str) -> Vec<u64> {
    let mut lines = r.flows_csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == name).unwrap();
    lines.map(|l| l.split(',').nth(i).unwrap().parse().unwrap()).collect()
}

#[test]
fn every_request_is_answered_over_either_kind_of_connection() {
    for extra in [vec![], vec![PER_REQUEST]] {
        let r = go(INCAST, &extra);
        assert_eq!(metric(&r, "rounds_completed"), 5.0, "{extra:?}");
        assert_eq!(metric(&r, "answers_completed"), 20.0, "{extra:?}");
        // every connection's bytes count: 5 answers of 20 kB per server
        assert_eq!(column(&r, "bytes_delivered"), vec![100_000; 4], "{extra:?}");
        assert_eq!(metric(&r, "drops"), 0.0, "the buffer holds every burst: {extra:?}");
    }
}

#[test]
fn a_new_connection_per_request_costs_a_handshake_per_answer() {
    let persistent = go(INCAST, &[]);
    let fresh = go(INCAST, &[PER_REQUEST]);
    // an answer waits one round trip (the SYN and its SYN-ACK, 2 x 100 us here) before its data
    // and starts from the initial window every time, where a held connection has grown its own
    let (a, b) = (metric(&persistent, "answer_time_mean_s"), metric(&fresh, "answer_time_mean_s"));
    assert!(b > a + 0.8e-4, "per request {b} s, persistent {a} s");
    // each connection sends its own FIN, so every answer's bytes count once and no more
    assert_eq!(column(&fresh, "bytes_sent"), vec![100_000; 4]);
}

#[test]
fn per_request_connections_are_deterministic() {
    // long enough for a lost SYN's initial timeout (3 s); the run ends with the last answer
    let lossy = [PER_REQUEST, ("queue.limit_pkts", "8"), ("sim.duration_s", "20")];
    let a = go_seeded(INCAST, &lossy, 2);
    let b = go_seeded(INCAST, &lossy, 2);
    assert_eq!(a.flows_csv, b.flows_csv);
    assert_eq!(a.ports_csv, b.ports_csv);
    // with losses the connections recover on their own and every answer still arrives
    assert!(metric(&a, "drops") > 0.0, "the 8-packet buffer should overflow: the test is void");
    assert_eq!(metric(&a, "answers_completed"), 20.0);
}

#[test]
fn per_request_needs_a_handshake_and_tcp() {
    let key = |extra: &[(&str, &str)]| match load_scenario(INCAST, "t.toml", &ov(extra)) {
        Err(Error::Invalid { key, .. }) => key,
        other => panic!("expected invalid input, got {other:?}"),
    };
    assert_eq!(key(&[PER_REQUEST, ("tcp.handshake", "false")]), "incast.connection");
    assert_eq!(key(&[PER_REQUEST, ("incast.transport", "xpass")]), "incast.connection");
    assert_eq!(key(&[("incast.connection", "sometimes")]), "incast.connection");
}
