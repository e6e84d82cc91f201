//! Poisson flow arrivals with empirical flow-size distributions: the flows of the `[poisson]`
//! table (`scenario/poisson.rs`: the table, the CDF file and how a size is drawn from it), and
//! their metrics.
//!
//! The background workload of pFabric, PIAS, HPCC, Homa and ExpressPass, and the mix of the
//! FQ-CoDel paper: finite TCP flows arrive as a Poisson process; each flow's size is drawn from
//! an empirical CDF file (ns-2's `RandomVariable/Empirical` format, `docs/workloads.md`); each
//! flow's end points are drawn at random among the participating hosts.
//!
//! Rules:
//! - **Load** is offered load as a fraction of the capacity of the sources' access links, as
//!   pFabric defines it ("load on the edge links"): the reference capacity `C` is the sum of
//!   the NIC rates of the source hosts, and flows arrive at the total rate
//!   `lambda = load x C / (8 x E[size])`. A flow's source is drawn with probability
//!   proportional to its NIC rate (uniform when the rates are equal, as in every fabric), so
//!   each source offers `load` of its own access link; its destination is uniform among the
//!   destinations other than the source. `load` is in (0, 1].
//! - **One-packet flows** (`one_packet_fraction = f`, the FQ-CoDel paper's mix): a second,
//!   independent Poisson process of flows of exactly one segment (`tcp.mss_bytes`) carries the
//!   share `f` of the offered *bytes*: with `B = load x C / 8` bytes/s in all, the CDF flows
//!   arrive at `(1 - f) B / E[size]` and the one-packet flows at `f B / mss`. Total offered load
//!   stays `load`. They form their own group, `poisson_1pkt`; the CDF flows are `poisson`.
//! - **Arrivals** in `[start_s, stop_s)`; at most `max_flows` in all (the first ones by time).
//!   Everything is drawn at build time: the flows are ordinary finite TCP flows (dense ids after
//!   the `[flows]`/`[groups]` flows and the incast servers, numbered by start time), so every
//!   per-flow and per-group metric applies. Streams: `("poisson.arrivals", 0 | 1)` (CDF class,
//!   one-packet class), `("poisson.size", 0)`, `("poisson.pair", 0 | 1)`.
//! - **Size classes** (pFabric's, in `summary.json`): `1pkt` (size <= `tcp.mss_bytes`), `small`
//!   (< 100 KB = 100,000 bytes), `mid` (100 KB to < 10 MB), `large` (>= 10 MB = 10,000,000
//!   bytes), and `all`, over the flows of both Poisson groups. The **ideal FCT** of a flow is
//!   its base RTT (the propagation delays of every link on its route there and back, through its
//!   waypoint if it has one; no serialization, no queueing) plus `8 x size / r`, `r` the rate of
//!   its source's access link; slowdown = FCT / ideal FCT. A lone flow's slowdown is above 1 by
//!   the headers, the handshake and store-and-forward; that is the definition, not a bound.
//! - Reads the config layer (`crate::scenario`) and builds on the topology and the workloads;
//!   it imports no engine: the metrics are computed from the finished run's flows, observations,
//!   waypoints, network and routes ([`done_flows`]).

use crate::error::Error;
use crate::metrics::{mean, percentile, FlowObs};
use crate::net::{Network, NodeKind};
use crate::results::num;
use crate::routing::Routes;
use crate::scenario::poisson::{PoissonConfig, GROUP, GROUP_1PKT, MAX_FLOWS};
use crate::scenario::Scenario;
use crate::topo::Built;
use crate::workload::Flow;
use dcfair_core::rng::Streams;
use dcfair_core::tcp::FlowIds;
use dcfair_core::transport::{Data, Endpoint, FlowSpec};
use dcfair_core::time::{SimDuration, SimTime};
use rand::Rng as _;
use serde_json::{json, Map, Value};

/// Size class bounds, bytes (pFabric: (0, 100 KB], [10 MB, inf)).
pub const SMALL_BELOW_BYTES: u64 = 100_000;
pub const LARGE_FROM_BYTES: u64 = 10_000_000;

// ---------------------------------------------------------------------------------------------
// Building the flows
// ---------------------------------------------------------------------------------------------

/// What the arrival processes are derived from (also reported in `summary.json`).
#[derive(Clone, Debug)]
pub struct Plan {
    /// Sum of the sources' access link rates, bits/s.
    pub reference_bps: f64,
    /// Mean size of the CDF flows, bytes (after rounding and the cap).
    pub mean_size_bytes: f64,
    /// Arrival rates of the CDF flows and of the one-packet flows, per second.
    pub rate_per_s: [f64; 2],
    pub start_s: f64,
    pub stop_s: f64,
}

/// The NIC rate of a host, bits/s.
fn nic_rate(net: &Network, host: u32) -> f64 {
    net.ports[net.nodes[host as usize].ports[0] as usize].rate.as_f64()
}

/// The arrival processes of `p` on network `net`.
pub fn plan(sc: &Scenario, p: &PoissonConfig, net: &Network) -> Plan {
    let cdf = p.cdf.as_ref().expect("PoissonConfig::prepare read the CDF");
    let (src, _) = p.ends(&sc.topology);
    let hosts: std::collections::HashMap<&str, u32> =
        net.nodes.iter().enumerate().filter(|(_, x)| x.kind == NodeKind::Host).map(|(i, x)| (x.name.as_str(), i as u32)).collect();
    let reference_bps: f64 = src.iter().map(|n| nic_rate(net, hosts[n.as_str()])).sum();
    let mean_size_bytes = cdf.mean_size_bytes(p.unit_bytes(sc.tcp.mss_bytes), p.max_size_bytes);
    let bytes_per_s = p.load * reference_bps / 8.0;
    let f = p.one_packet_fraction;
    Plan {
        reference_bps,
        mean_size_bytes,
        rate_per_s: [(1.0 - f) * bytes_per_s / mean_size_bytes, f * bytes_per_s / sc.tcp.mss_bytes as f64],
        start_s: p.start_s,
        stop_s: p.stop_s(sc.sim.duration_s),
    }
}

/// One arrival before it becomes a flow.
struct Arrival {
    t: f64,
    class: u8,
    src: u32,
    dst: u32,
    size: u64,
}

/// The Poisson flows of `[poisson]`, drawn by `plan` (its [`plan`]), with ids from `first`; the
/// CDF flows in group `group`, the one-packet flows in `group + 1`. Ordered (and numbered) by
/// start time.
pub fn flows(sc: &Scenario, streams: Streams, built: &Built, plan: &Plan, first: u32, group: u16) -> Result<Vec<Flow>, Error> {
    let p = sc.poisson.as_ref().expect("a plan comes from [poisson]");
    let cdf = p.cdf.as_ref().expect("PoissonConfig::prepare read the CDF");
    let (src_names, dst_names) = p.ends(&sc.topology);
    let id = |n: &String| built.host(n).expect("validated host");
    let src: Vec<u32> = src_names.iter().map(id).collect();
    let dst: Vec<u32> = dst_names.iter().map(id).collect();
    // cumulative NIC rates: a source is drawn in proportion to its access link
    let cum: Vec<f64> = src.iter().scan(0.0, |s, &h| {
        *s += nic_rate(&built.net, h);
        Some(*s)
    }).collect();
    let self_in_dst: Vec<Option<usize>> = src.iter().map(|s| dst.iter().position(|d| d == s)).collect();
    let limit = p.max_flows.unwrap_or(MAX_FLOWS);
    let expected = (plan.rate_per_s[0] + plan.rate_per_s[1]) * (plan.stop_s - plan.start_s);
    if p.max_flows.is_none() && expected > MAX_FLOWS as f64 {
        return Err(Error::invalid(
            "poisson.load",
            format!("about {expected:.0} flows would arrive, more than {MAX_FLOWS}: shorten [start_s, stop_s), lower the load or set poisson.max_flows"),
        ));
    }
    let unit = p.unit_bytes(sc.tcp.mss_bytes);
    let mut size_rng = streams.stream("poisson.size", 0);
    let mut arrivals: Vec<Arrival> = Vec::new();
    for class in 0..2u8 {
        let rate = plan.rate_per_s[class as usize];
        if rate <= 0.0 {
            continue;
        }
        let mut time_rng = streams.stream("poisson.arrivals", class as u64);
        let mut pair_rng = streams.stream("poisson.pair", class as u64);
        let mut t = plan.start_s;
        // per class at most `limit`: the merge below keeps the first `limit` of both together
        for _ in 0..limit {
            let u: f64 = time_rng.gen();
            t += -(1.0 - u).ln() / rate;
            if t >= plan.stop_s {
                break;
            }
            let x = pair_rng.gen::<f64>() * cum[cum.len() - 1];
            let s = cum.partition_point(|&c| c <= x).min(src.len() - 1);
            // uniform among the destinations but the source itself
            let k = pair_rng.gen_range(0..dst.len() - self_in_dst[s].is_some() as usize);
            let d = dst[if self_in_dst[s].is_some_and(|at| k >= at) { k + 1 } else { k }];
            let size = if class == 0 { cdf.size_bytes(size_rng.gen(), unit, p.max_size_bytes) } else { sc.tcp.mss_bytes as u64 };
            arrivals.push(Arrival { t, class, src: src[s], dst: d, size });
        }
    }
    // by time; ties (practically never) CDF class first, then draw order: a stable sort
    arrivals.sort_by(|a, b| a.t.total_cmp(&b.t).then(a.class.cmp(&b.class)));
    arrivals.truncate(limit as usize);
    let (tables, mtu) = (sc.transport_tables().resolved(), sc.mtu());
    let out = arrivals
        .iter()
        .enumerate()
        .map(|(j, a)| {
            let i = first + j as u32;
            let ids = FlowIds { flow: i, src: a.src, dst: a.dst, sport: 1024 + (i % 60_000) as u16, dport: 80 + (i / 60_000) as u16 };
            let nic = built.net.nodes[ids.dst as usize].ports[0];
            let src_nic = built.net.nodes[ids.src as usize].ports[0];
            let spec = FlowSpec {
                ids,
                data: Data::Bulk(Some(a.size)),
                tcp: &sc.tcp,
                sender_rate: built.net.ports[src_nic as usize].rate,
                receiver_rate: built.net.ports[nic as usize].rate,
                mtu,
                streams,
            };
            let ends = Endpoint::build(p.transport, &tables, &spec);
            Flow::new(ids, group + a.class as u16, Some(a.size), SimTime::from_secs_f64(a.t), ends)
        })
        .collect();
    Ok(out)
}

/// Names of the workload's groups, in group-index order.
pub fn group_names(sc: &Scenario) -> Vec<&'static str> {
    match &sc.poisson {
        None => Vec::new(),
        Some(p) if p.one_packet_fraction > 0.0 => vec![GROUP, GROUP_1PKT],
        Some(_) => vec![GROUP],
    }
}

// ---------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------

/// Propagation delay along the route from host `a` (through waypoint `via`, if any) to `b`.
pub fn path_delay(net: &Network, routes: &Routes, a: u32, via: u32, b: u32) -> SimDuration {
    let mut total = SimDuration::ZERO;
    let mut port = net.nodes[a as usize].ports[0];
    let mut target = if via != dcfair_core::packet::NO_VIA { via } else { b };
    for _ in 0..=net.nodes.len() {
        let pt = &net.ports[port as usize];
        total = total + pt.delay;
        let node = pt.peer_node;
        if node == b {
            return total;
        }
        if node == target {
            target = b;
        }
        let Some(&local) = routes.choices(node, target).first() else { return total };
        port = net.nodes[node as usize].ports[local as usize];
    }
    total
}

/// The size classes of `summary.json`, in order.
pub const CLASSES: [&str; 5] = ["all", "1pkt", "small", "mid", "large"];

/// Whether a flow of `size` bytes belongs to size class `class` (one of [`CLASSES`]).
pub fn in_class(class: &str, size: u64, mss: u32) -> bool {
    match class {
        "1pkt" => size <= mss as u64,
        "small" => size < SMALL_BELOW_BYTES,
        "mid" => (SMALL_BELOW_BYTES..LARGE_FROM_BYTES).contains(&size),
        "large" => size >= LARGE_FROM_BYTES,
        _ => true,
    }
}

/// One finished or unfinished Poisson flow, as the metrics see it.
#[derive(Clone, Copy, Debug)]
pub struct Done {
    pub size: u64,
    /// FCT and ideal FCT, seconds (`None`: did not finish).
    pub fct_s: Option<f64>,
    pub ideal_s: f64,
}

/// The workload's keys in `summary.json` (`docs/metrics.md`): its plan, the realized load and
/// the per-class FCT statistics.
pub fn insert_metrics(m: &mut Map<String, Value>, sc: &Scenario, plan: &Plan, flows: &[Done], bytes_1pkt: u64) {
    let span = plan.stop_s - plan.start_s;
    let bytes: u64 = flows.iter().map(|f| f.size).sum();
    m.insert("poisson_flows".into(), json!(flows.len()));
    m.insert("poisson_reference_bps".into(), num(Some(plan.reference_bps)));
    m.insert("poisson_mean_size_bytes".into(), num(Some(plan.mean_size_bytes)));
    m.insert("poisson_arrival_rate_per_s".into(), num(Some(plan.rate_per_s[0] + plan.rate_per_s[1])));
    m.insert("poisson_offered_load".into(), num(Some(bytes as f64 * 8.0 / (plan.reference_bps * span))));
    m.insert("poisson_one_packet_byte_fraction".into(), num((bytes > 0).then(|| bytes_1pkt as f64 / bytes as f64)));
    for name in CLASSES {
        let of: Vec<&Done> = flows.iter().filter(|f| in_class(name, f.size, sc.tcp.mss_bytes)).collect();
        let done: Vec<&Done> = of.iter().copied().filter(|f| f.fct_s.is_some()).collect();
        let fct: Vec<f64> = done.iter().map(|f| f.fct_s.unwrap_or(0.0)).collect();
        let slow: Vec<f64> = done.iter().map(|f| f.fct_s.unwrap_or(0.0) / f.ideal_s).collect();
        let sizes: Vec<f64> = done.iter().map(|f| f.size as f64).collect();
        let sfx = format!("_size_{name}");
        m.insert(format!("flows{sfx}"), json!(of.len()));
        m.insert(format!("flows_completed{sfx}"), json!(done.len()));
        m.insert(format!("fct_mean_s{sfx}"), num(mean(&fct)));
        m.insert(format!("fct_p50_s{sfx}"), num(percentile(&fct, 50.0)));
        m.insert(format!("fct_p99_s{sfx}"), num(percentile(&fct, 99.0)));
        m.insert(format!("fct_max_s{sfx}"), num(fct.iter().cloned().reduce(f64::max)));
        m.insert(format!("slowdown_mean{sfx}"), num(mean(&slow)));
        m.insert(format!("slowdown_p99{sfx}"), num(percentile(&slow, 99.0)));
        if sc.poisson.as_ref().is_some_and(|p| p.slowdown_percentiles) {
            m.insert(format!("slowdown_p50{sfx}"), num(percentile(&slow, 50.0)));
            m.insert(format!("slowdown_p95{sfx}"), num(percentile(&slow, 95.0)));
        }
        let tput = match (mean(&sizes), mean(&fct)) {
            (Some(s), Some(t)) if t > 0.0 => Some(8.0 * s / t),
            _ => None,
        };
        m.insert(format!("mean_throughput_bps{sfx}"), num(tput));
    }
}

/// The per-flow view [`insert_metrics`] needs, from a finished simulation's flows, their
/// observations, waypoints (by flow id), network and routes: `(flows, bytes of the one-packet
/// group)` for the flows of groups `group` and `group + 1`.
pub fn done_flows(flows: &[Flow], obs: &[FlowObs], via: &[u32], net: &Network, routes: &Routes, group: u16) -> (Vec<Done>, u64) {
    let mut v = Vec::new();
    let mut bytes_1pkt = 0;
    for (i, f) in flows.iter().enumerate() {
        if f.group != group && f.group != group + 1 {
            continue;
        }
        let size = f.size.unwrap_or(0);
        if f.group == group + 1 {
            bytes_1pkt += size;
        }
        let via = via.get(i).copied().unwrap_or(dcfair_core::packet::NO_VIA);
        let rtt = path_delay(net, routes, f.ids.src, via, f.ids.dst) + path_delay(net, routes, f.ids.dst, via, f.ids.src);
        let ideal_s = rtt.as_secs_f64() + 8.0 * size as f64 / nic_rate(net, f.ids.src);
        let fct_s = obs[i].completed.map(|c| (c - f.start).as_secs_f64());
        v.push(Done { size, fct_s, ideal_s });
    }
    (v, bytes_1pkt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// The CDF files shipped in `scenarios/workloads/`.
    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/workloads").join(name)
    }

    // --- building the flows -----------------------------------------------------------------
    /// 16 hosts of 1 Gbit/s on a leaf-spine; web search at load 0.5 (about 600 flows/s).
    fn scenario(overrides: &[(&str, &str)]) -> Result<Scenario, Error> {
        let text = format!(
            r#"
            [sim]
            duration_s = 200.0
            [topology]
            kind = "leaf_spine"
            leaves = 2
            spines = 2
            hosts_per_leaf = 8
            host_rate_mbps = 1000.0
            fabric_rate_mbps = 4000.0
            link_delay_us = 1.0
            [poisson]
            load = 0.5
            cdf_file = "{}"
            cdf_unit = "packets"
            "#,
            data("websearch_cdf.txt").display()
        );
        let ov: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        crate::scenario::load(&text, "t.toml", &ov)
    }

    fn generate(sc: &Scenario, seed: u64) -> (Vec<Flow>, Plan) {
        let streams = Streams::new(seed);
        let built = crate::topo::build(sc, streams).unwrap();
        let plan = plan(sc, sc.poisson.as_ref().unwrap(), &built.net);
        (flows(sc, streams, &built, &plan, 7, 3).unwrap(), plan)
    }

    fn key_of(r: Result<Scenario, Error>) -> String {
        match r {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected invalid input, got {other:?}"),
        }
    }

    #[test]
    fn realized_load_matches_load() {
        let sc = scenario(&[("poisson.stop_s", "180")]).unwrap();
        let (fl, plan) = generate(&sc, 1);
        assert_eq!(plan.reference_bps, 16e9);
        assert!(fl.len() > 90_000, "{} flows", fl.len());
        let bytes: u64 = fl.iter().map(|f| f.size.unwrap()).sum();
        let load = bytes as f64 * 8.0 / (plan.reference_bps * 180.0);
        assert!((load - 0.5).abs() < 0.5 * 0.03, "realized load {load}");
        // arrivals: a Poisson process of the planned rate, in [start_s, stop_s), numbered in order
        let rate = fl.len() as f64 / 180.0;
        assert!((rate / plan.rate_per_s[0] - 1.0).abs() < 0.02, "{rate} vs {}", plan.rate_per_s[0]);
        assert!(fl.windows(2).all(|w| w[0].start <= w[1].start && w[1].ids.flow == w[0].ids.flow + 1));
        assert_eq!(fl[0].ids.flow, 7);
        assert!(fl.iter().all(|f| f.group == 3 && f.start < SimTime::from_secs_f64(180.0)));
        // exponential gaps: coefficient of variation 1
        let gaps: Vec<f64> = fl.windows(2).map(|w| (w[1].start - w[0].start).as_secs_f64()).collect();
        let (m, sd) = (mean(&gaps).unwrap(), crate::metrics::std_dev(&gaps).unwrap());
        assert!((sd / m - 1.0).abs() < 0.02, "cv {}", sd / m);
        // end points: never a host to itself, every source alike (equal access rates)
        assert!(fl.iter().all(|f| f.ids.src != f.ids.dst));
        let mut per_src = std::collections::HashMap::<u32, usize>::new();
        fl.iter().for_each(|f| *per_src.entry(f.ids.src).or_default() += 1);
        assert_eq!(per_src.len(), 16);
        let expect = fl.len() as f64 / 16.0;
        assert!(per_src.values().all(|&n| (n as f64 / expect - 1.0).abs() < 0.05), "{per_src:?}");
    }

    #[test]
    fn sources_are_drawn_by_access_rate() {
        // a dumbbell: senders at 1000 Mbit/s, the receiver's link at 100 Mbit/s
        let text = format!(
            r#"
            [sim]
            duration_s = 20.0
            [topology]
            kind = "dumbbell"
            senders = 2
            access_rate_mbps = 1000.0
            access_delay_us = 10.0
            bottleneck_rate_mbps = 100.0
            bottleneck_delay_us = 10.0
            [poisson]
            load = 0.5
            cdf_file = "{}"
            cdf_unit = "bytes"
            "#,
            data("xpass_webserver_cdf_bytes.txt").display()
        );
        let sc = crate::scenario::load(&text, "t.toml", &[]).unwrap();
        let (fl, plan) = generate(&sc, 3);
        assert_eq!(plan.reference_bps, 2.1e9);
        let r0_id = fl.iter().map(|g| g.ids.src).max().unwrap();
        let r0 = fl.iter().filter(|f| f.ids.src == r0_id).count();
        let share = r0 as f64 / fl.len() as f64;
        assert!((share - 100.0 / 2100.0).abs() < 0.005, "share of r0 {share}");
    }

    #[test]
    fn one_packet_flows_carry_their_share_of_the_bytes() {
        // web server sizes (66 KB mean): 100k CDF flows and 250k one-packet flows in 7 s
        let cdf = data("xpass_webserver_cdf_bytes.txt");
        let sc = scenario(&[
            ("poisson.one_packet_fraction", "0.05"),
            ("poisson.stop_s", "7"),
            ("poisson.cdf_file", cdf.to_str().unwrap()),
            ("poisson.cdf_unit", "bytes"),
        ])
        .unwrap();
        let (fl, plan) = generate(&sc, 2);
        let ones: Vec<&Flow> = fl.iter().filter(|f| f.group == 4).collect();
        assert!(fl.len() - ones.len() > 90_000, "{} CDF flows", fl.len() - ones.len());
        assert!(ones.iter().all(|f| f.size == Some(1460)));
        let b1: u64 = ones.iter().map(|f| f.size.unwrap()).sum();
        let all: u64 = fl.iter().map(|f| f.size.unwrap()).sum();
        let frac = b1 as f64 / all as f64;
        assert!((frac - 0.05).abs() < 0.05 * 0.05, "one-packet byte fraction {frac}");
        let load = all as f64 * 8.0 / (plan.reference_bps * 7.0);
        assert!((load - 0.5).abs() < 0.5 * 0.03, "realized load {load}");
        // the CDF flows keep their own rate; one-packet flows f B / mss
        assert!((plan.rate_per_s[1] - 0.05 * 1e9 / 1460.0).abs() < 1e-6);
        assert_eq!(group_names(&sc), [GROUP, GROUP_1PKT]);
    }

    #[test]
    fn the_same_seed_gives_the_same_flows() {
        let sc = scenario(&[("poisson.stop_s", "5"), ("poisson.one_packet_fraction", "0.01")]).unwrap();
        let view = |fl: &[Flow]| fl.iter().map(|f| (f.start, f.ids.src, f.ids.dst, f.size, f.group)).collect::<Vec<_>>();
        let (a, _) = generate(&sc, 11);
        let (b, _) = generate(&sc, 11);
        let (c, _) = generate(&sc, 12);
        assert_eq!(view(&a), view(&b));
        assert_ne!(view(&a), view(&c));
    }

    #[test]
    fn max_flows_keeps_the_first_arrivals_and_restrictions_hold() {
        let sc = scenario(&[("poisson.max_flows", "100"), ("poisson.one_packet_fraction", "0.1")]).unwrap();
        let (fl, _) = generate(&sc, 1);
        assert_eq!(fl.len(), 100);
        let (all, _) = generate(&scenario(&[("poisson.stop_s", "1"), ("poisson.one_packet_fraction", "0.1")]).unwrap(), 1);
        let first: Vec<_> = all.iter().take(100).map(|f| (f.start, f.size)).collect();
        assert_eq!(fl.iter().map(|f| (f.start, f.size)).collect::<Vec<_>>(), first);
        let sc = scenario(&[("poisson.src", "[\"h0\", \"h1\"]"), ("poisson.dst", "h9"), ("poisson.stop_s", "1")]).unwrap();
        let (fl, plan) = generate(&sc, 1);
        assert_eq!(plan.reference_bps, 2e9);
        assert!(!fl.is_empty() && fl.iter().all(|f| f.ids.src <= 1 && f.ids.dst == 9), "hosts are nodes 0..16");
        let sc = scenario(&[("poisson.start_s", "10"), ("poisson.stop_s", "11"), ("poisson.max_size_bytes", "20000")]).unwrap();
        let (fl, _) = generate(&sc, 1);
        assert!(fl.iter().all(|f| f.start >= SimTime::from_secs_f64(10.0) && f.size.unwrap() <= 20000));
    }

    /// The memory a flow holds before it starts (docs/workloads.md): printed, not asserted,
    /// since the TCP state belongs to `crates/core/src/tcp`.
    #[test]
    fn idle_flow_footprint() {
        let (flow, obs) = (std::mem::size_of::<Flow>(), std::mem::size_of::<crate::metrics::FlowObs>());
        let ev = std::mem::size_of::<crate::event::Event>();
        println!("Flow {flow} B, FlowObs {obs} B, Event {ev} B, via 4 B: {} B per idle flow", flow + obs + ev + 4);
        assert!(flow + obs < 4096, "a flow should stay well under a page");
    }

    // --- bad input --------------------------------------------------------------------------
    #[test]
    fn bad_values_name_their_key() {
        for (k, v, expect) in [
            ("poisson.load", "0", "poisson.load"),
            ("poisson.load", "1.5", "poisson.load"),
            ("poisson.lod", "0.5", "poisson.lod"),
            ("poisson.cdf_unit", "kb", "poisson.cdf_unit"),
            ("poisson.cdf_file", "/nonexistent.txt", "poisson.cdf_file"),
            ("poisson.cdf_percent", "true", "poisson.cdf_file"),
            ("poisson.one_packet_fraction", "1", "poisson.one_packet_fraction"),
            ("poisson.one_packet_fraction", "-0.1", "poisson.one_packet_fraction"),
            ("poisson.max_flows", "0", "poisson.max_flows"),
            ("poisson.max_size_bytes", "0", "poisson.max_size_bytes"),
            ("poisson.start_s", "-1", "poisson.start_s"),
            ("poisson.start_s", "200", "poisson.start_s"),
            ("poisson.stop_s", "0", "poisson.stop_s"),
            ("poisson.stop_s", "201", "poisson.stop_s"),
            ("poisson.hosts", "[\"h0\", \"h99\"]", "poisson.hosts"),
            ("poisson.hosts", "[\"h0\", \"h0\"]", "poisson.hosts"),
            ("poisson.src", "[]", "poisson.src"),
            ("poisson.hosts", "h3", "poisson.dst"),
            ("groups.poisson.count", "1", "groups.poisson"),
            ("groups.size_small.count", "1", "groups.size_small"),
        ] {
            // a group needs its end points on a leaf-spine
            let g = k.strip_suffix(".count").unwrap_or(k);
            let (src, dst) = (format!("{g}.src"), format!("{g}.dst"));
            let ov: Vec<(&str, &str)> =
                if k.starts_with("groups.") { vec![(k, v), (&src, "h0"), (&dst, "h1")] } else { vec![(k, v)] };
            assert_eq!(key_of(scenario(&ov)), expect, "{k} = {v}");
        }
    }

    #[test]
    fn too_many_flows_is_invalid_input_naming_the_load() {
        // 90 % of 16 Gbit/s in one-packet flows for 200 s: some 250 million flows
        let sc = scenario(&[("poisson.one_packet_fraction", "0.9"), ("poisson.load", "1")]).unwrap();
        let streams = Streams::new(1);
        let built = crate::topo::build(&sc, streams).unwrap();
        let plan = plan(&sc, sc.poisson.as_ref().unwrap(), &built.net);
        match flows(&sc, streams, &built, &plan, 0, 0) {
            Err(Error::Invalid { key, reason }) => assert!(key == "poisson.load" && reason.contains("max_flows"), "{reason}"),
            other => panic!("{:?}", other.map(|v| v.len())),
        }
    }
}
