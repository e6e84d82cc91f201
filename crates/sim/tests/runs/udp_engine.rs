//! Engine checks that need no transport: UDP through the dumbbell.

use dcfair_sim::{load_scenario, run};

const UDP_ONLY: &str = r#"
    name = "udp-only"
    [sim]
    duration_s = 2.0
    [measure]
    window_s = 1.0
    [topology]
    kind = "dumbbell"
    senders = 1
    access_rate_mbps = 1000.0
    access_delay_us = 25.0
    bottleneck_rate_mbps = 100.0
    bottleneck_delay_us = 25.0
    [queue]
    limit_pkts = 20
    [udp]
    rate_fraction = 0.5
    pattern = "cbr"
    packet_bytes = 1500
"#;

fn metric(summary: &str, key: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(summary).unwrap();
    v["metrics"][key].as_f64().unwrap_or_else(|| panic!("{key} missing in {summary}"))
}

#[test]
fn cbr_udp_fills_its_share_exactly() {
    let sc = load_scenario(UDP_ONLY, "udp.toml", &[]).unwrap();
    let r = run(&sc, None, None).unwrap();
    let u = metric(&r.summary_json, "utilization");
    assert!((u - 0.5).abs() < 0.01, "utilization {u}");
    assert_eq!(metric(&r.summary_json, "drops"), 0.0);
    let t = metric(&r.summary_json, "throughput_bps_udp");
    assert!((t - 50e6).abs() / 50e6 < 0.01, "udp throughput {t}");
}

#[test]
fn poisson_udp_mean_rate_and_determinism() {
    let ov = [("udp.pattern".to_string(), "poisson".to_string()), ("sim.duration_s".into(), "20".into()), ("measure.window_s".into(), "19".into())];
    let sc = load_scenario(UDP_ONLY, "udp.toml", &ov).unwrap();
    let a = run(&sc, Some(3), None).unwrap();
    let b = run(&sc, Some(3), None).unwrap();
    assert_eq!(a.flows_csv, b.flows_csv);
    assert_eq!(a.ports_csv, b.ports_csv);
    let u = metric(&a.summary_json, "utilization");
    assert!((u - 0.5).abs() < 0.02, "utilization {u}");
    // a 20-packet buffer at 50 % Poisson load overflows now and then, never much
    let c = run(&sc, Some(4), None).unwrap();
    assert_ne!(a.flows_csv, c.flows_csv, "another seed must give another sample path");
}
