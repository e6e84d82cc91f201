//! Poisson flow arrivals with empirical flow-size distributions: the `[poisson]` table.
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
//! - **Sizes** (ns-2 `Empirical`, `interpolation_ 2`, as the PIAS/pFabric scripts use it):
//!   `u` uniform in [0, 1); the first point `i` with `cdf_i >= u`; `u <= cdf_0` gives
//!   `value_0`, otherwise `value_{i-1} + (u - cdf_{i-1}) (value_i - value_{i-1}) /
//!   (cdf_i - cdf_{i-1})`. The result is rounded up (`ceil`, as the scripts do) to whole units,
//!   at least 1 unit, times the unit (`cdf_unit = "packets"`: `tcp.mss_bytes` payload bytes, the
//!   scripts' 1460; `"bytes"`: 1), and capped at `max_size_bytes`. `E[size]` is the exact mean
//!   of that same rounded, capped variable (computed in closed form from the points, not
//!   sampled).
//! - **Arrivals** in `[start_s, stop_s)`; at most `max_flows` in all (the first ones by time).
//!   Everything is drawn at build time: the flows are ordinary finite TCP flows (dense ids after
//!   the `[flows]`/`[groups]` flows and the incast servers, numbered by start time), so every
//!   per-flow and per-group metric applies. Streams: `("poisson.arrivals", 0 | 1)` (CDF class,
//!   one-packet class), `("poisson.size", 0)`, `("poisson.pair", 0 | 1)`.
//! - **The CDF file** (`cdf_file`, relative to the scenario file's directory, or absolute) is
//!   read and checked when the scenario is loaded, so `dcfair validate` rejects a bad one: lines
//!   `value cdf` or `value ignored cdf` (ns-2 reads the first and the last column), blank lines
//!   and `#` lines skipped; values >= 0 and non-decreasing, cdf non-decreasing in [0, scale],
//!   the last cdf equal to the scale (1, or 100 with `cdf_percent`; detected from the last point
//!   when `cdf_percent` is left out). Every error names `poisson.cdf_file`, the file and line.
//! - **Size classes** (pFabric's, in `summary.json`): `1pkt` (size <= `tcp.mss_bytes`), `small`
//!   (< 100 KB = 100,000 bytes), `mid` (100 KB to < 10 MB), `large` (>= 10 MB = 10,000,000
//!   bytes), and `all`, over the flows of both Poisson groups. The **ideal FCT** of a flow is
//!   its base RTT (the propagation delays of every link on its route there and back, through its
//!   waypoint if it has one; no serialization, no queueing) plus `8 x size / r`, `r` the rate of
//!   its source's access link; slowdown = FCT / ideal FCT. A lone flow's slowdown is above 1 by
//!   the headers, the handshake and store-and-forward; that is the definition, not a bound.

use crate::error::Error;
use crate::metrics::{mean, percentile};
use crate::net::Network;
use crate::routing::Routes;
use crate::scenario::{Hosts, Scenario, Transport};
use crate::topo::Built;
use crate::workload::TcpFlow;
use dcfair_core::qdisc::ConfigError;
use dcfair_core::rng::Streams;
use dcfair_core::tcp::{FlowIds, TcpSender};
use dcfair_core::time::{SimDuration, SimTime};
use rand::Rng as _;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Group names of the workload: the CDF flows, and the one-packet flows.
pub const GROUP: &str = "poisson";
pub const GROUP_1PKT: &str = "poisson_1pkt";
/// At most this many flows per run (memory: `docs/workloads.md`); `max_flows` cannot raise it.
pub const MAX_FLOWS: u64 = 5_000_000;
/// Size class bounds, bytes (pFabric: (0, 100 KB], [10 MB, inf)).
pub const SMALL_BELOW_BYTES: u64 = 100_000;
pub const LARGE_FROM_BYTES: u64 = 10_000_000;

/// Unit of the values of a CDF file.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CdfUnit {
    /// Segments of `tcp.mss_bytes` payload (the ns-2 PIAS/pFabric/MQ-ECN files, 1460 bytes).
    Packets,
    Bytes,
}

/// The `[poisson]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonConfig {
    /// Offered load, a fraction of the sources' access link capacity, in (0, 1].
    pub load: f64,
    /// The CDF file: relative to the scenario file's directory, or absolute.
    pub cdf_file: String,
    pub cdf_unit: CdfUnit,
    /// The CDF column is in percent (0..100); left out: detected from the last point.
    pub cdf_percent: Option<bool>,
    /// Cap on a flow's size, bytes (sizes above are cut to it).
    pub max_size_bytes: Option<u64>,
    /// Hosts taking part (default: every host of the topology but the dumbbell's UDP host).
    pub hosts: Option<Hosts>,
    /// Sources (default: `hosts`).
    pub src: Option<Hosts>,
    /// Destinations (default: `hosts`).
    pub dst: Option<Hosts>,
    /// Arrivals in `[start_s, stop_s)`.
    #[serde(default)]
    pub start_s: f64,
    /// Default: `sim.duration_s`.
    pub stop_s: Option<f64>,
    /// At most this many flows (the first by arrival time).
    pub max_flows: Option<u64>,
    /// Share of the offered bytes carried by one-packet flows, in [0, 1).
    #[serde(default)]
    pub one_packet_fraction: f64,
    /// The flows' transport: `"tcp"` (default, `[tcp]`) or `"xpass"` (ExpressPass, `[xpass]`;
    /// segments of `tcp.mss_bytes` + `tcp.header_bytes`; puts the credit shaper on every port).
    #[serde(default)]
    pub transport: Transport,
    /// The parsed CDF, read when the scenario is loaded ([`prepare`]).
    #[serde(skip)]
    pub cdf: Option<Arc<Cdf>>,
    /// Where the CDF was read from (`cdf_file` resolved by [`prepare`]).
    #[serde(skip)]
    pub cdf_path: Option<PathBuf>,
}

impl PoissonConfig {
    pub fn stop_s(&self, duration_s: f64) -> f64 {
        self.stop_s.unwrap_or(duration_s)
    }

    /// Bytes per CDF unit.
    pub fn unit_bytes(&self, mss: u32) -> u64 {
        match self.cdf_unit {
            CdfUnit::Packets => mss as u64,
            CdfUnit::Bytes => 1,
        }
    }

    /// The source and destination host names (validated).
    pub fn ends(&self, sc: &Scenario) -> (Vec<String>, Vec<String>) {
        let all = self.hosts.as_ref().map_or_else(|| sc.topology.host_names(false), Hosts::names);
        let src = self.src.as_ref().map_or_else(|| all.clone(), Hosts::names);
        let dst = self.dst.as_ref().map_or_else(|| all.clone(), Hosts::names);
        (src, dst)
    }
}

// ---------------------------------------------------------------------------------------------
// The CDF file
// ---------------------------------------------------------------------------------------------

/// An empirical distribution: points `(value, cdf)` with cdf scaled to [0, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parses the text of a CDF file. `percent`: `Some(true)` the cdf column is in percent,
    /// `Some(false)` a fraction, `None` decide from the last point (1 or 100). Errors are
    /// `(line number or 0, reason)`.
    pub fn parse(text: &str, percent: Option<bool>) -> Result<Cdf, (usize, String)> {
        let mut raw: Vec<(f64, f64, usize)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = t.split_whitespace().collect();
            if cols.len() != 2 && cols.len() != 3 {
                return Err((n, format!("expected 'value cdf' or 'value n cdf', got {} columns: {t:?}", cols.len())));
            }
            let num = |s: &str, what: &str| -> Result<f64, (usize, String)> {
                match s.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(x),
                    _ => Err((n, format!("{what} {s:?} is not a number"))),
                }
            };
            let v = num(cols[0], "value")?;
            let c = num(cols[cols.len() - 1], "cdf")?;
            if v < 0.0 {
                return Err((n, format!("value {v} is negative")));
            }
            if let Some(&(pv, pc, _)) = raw.last() {
                if v < pv {
                    return Err((n, format!("values must not decrease: {v} after {pv}")));
                }
                if c < pc {
                    return Err((n, format!("cdf must not decrease: {c} after {pc}")));
                }
            }
            raw.push((v, c, n));
        }
        let Some(&(_, last, last_line)) = raw.last() else {
            return Err((0, "no data points (only blank or '#' lines)".into()));
        };
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-6 * y;
        let scale = match percent {
            Some(true) => 100.0,
            Some(false) => 1.0,
            None if close(last, 1.0) => 1.0,
            None if close(last, 100.0) => 100.0,
            None => return Err((last_line, format!("the last cdf is {last}: a CDF ends at 1 (or 100 in percent)"))),
        };
        if !close(last, scale) {
            let hint = if close(last, 100.0) { " (set cdf_percent = true)" } else if close(last, 1.0) { " (set cdf_percent = false)" } else { "" };
            return Err((last_line, format!("the last cdf is {last}, it must be {scale}{hint}")));
        }
        if let Some(&(_, c, n)) = raw.iter().find(|p| p.1 < 0.0) {
            return Err((n, format!("cdf {c} is negative")));
        }
        let mut points: Vec<(f64, f64)> = raw.iter().map(|&(v, c, _)| (v, c / scale)).collect();
        points.last_mut().expect("non-empty").1 = 1.0;
        Ok(Cdf { points })
    }

    /// Reads and parses `path`; errors name `key`, the file and the line.
    pub fn load(path: &Path, percent: Option<bool>, key: &str) -> Result<Cdf, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::invalid(key, format!("cannot read {}: {e}", path.display())))?;
        Cdf::parse(&text, percent).map_err(|(line, why)| {
            let at = if line > 0 { format!("{} line {line}", path.display()) } else { path.display().to_string() };
            Error::invalid(key, format!("{at}: {why}"))
        })
    }

    /// ns-2's `EmpiricalRandomVariable::value()` with `interpolation_ 2`, for `u` in [0, 1).
    pub fn value(&self, u: f64) -> f64 {
        let p = &self.points;
        // lookup: the first index whose cdf is >= u (index 0 if u <= cdf_0)
        let i = if u <= p[0].1 { 0 } else { 1 + p[1..].partition_point(|&(_, c)| c < u) };
        let i = i.min(p.len() - 1);
        if i > 0 && u < p[i].1 {
            let ((v0, c0), (v1, c1)) = (p[i - 1], p[i]);
            v0 + (u - c0) * (v1 - v0) / (c1 - c0)
        } else {
            p[i].0
        }
    }

    /// A flow size in bytes from a uniform `u`: `ceil` to whole units, at least one, times
    /// `unit` bytes, capped at `cap`.
    pub fn size_bytes(&self, u: f64, unit: u64, cap: Option<u64>) -> u64 {
        let units = self.value(u).ceil().max(1.0);
        let bytes = (units * unit as f64).min(u64::MAX as f64 / 2.0) as u64;
        cap.map_or(bytes, |c| bytes.min(c))
    }

    /// The exact mean of [`Cdf::size_bytes`] over `u` uniform in [0, 1).
    pub fn mean_size_bytes(&self, unit: u64, cap: Option<u64>) -> f64 {
        let m = unit as f64;
        let cap_f = cap.map_or(f64::INFINITY, |c| c as f64);
        // g(x) = min(max(1, ceil x) m, cap); with K = floor(cap / m) whole units under the cap,
        // g = ceil(x) m on (0, K] (or m for x <= 1) and cap beyond K.
        let k = if cap.is_some() { (cap_f / m).floor() } else { f64::INFINITY };
        let g = |x: f64| (x.ceil().max(1.0) * m).min(cap_f);
        // integral of ceil(t) over [0, x], x >= 0; ceil(t) >= 1 is already true on (0, x]
        let f = |x: f64| {
            let n = x.floor();
            n * (n + 1.0) / 2.0 + (x - n) * (n + 1.0)
        };
        let p = &self.points;
        let mut total = p[0].1 * g(p[0].0);
        for w in p.windows(2) {
            let ((a, c0), (b, c1)) = (w[0], w[1]);
            let mass = c1 - c0;
            if mass <= 0.0 {
                continue;
            }
            if b <= a {
                total += mass * g(a);
                continue;
            }
            let (lo, hi) = (a.min(k), b.min(k));
            let below = m * (f(hi) - f(lo));
            let above = if k.is_finite() { cap_f * ((b.max(k)) - (a.max(k))) } else { 0.0 };
            total += mass * (below + above) / (b - a);
        }
        total
    }
}

// ---------------------------------------------------------------------------------------------
// Loading and validation
// ---------------------------------------------------------------------------------------------

/// Resolves `cdf_file` against the scenario file's directory (`origin`, when it names a file)
/// and reads the CDF, so a bad file is found when the scenario is loaded.
pub fn prepare(sc: &mut Scenario, origin: &str) -> Result<(), Error> {
    let Some(p) = sc.poisson.as_mut() else { return Ok(()) };
    let path = resolve(&p.cdf_file, origin);
    p.cdf = Some(Arc::new(Cdf::load(&path, p.cdf_percent, "poisson.cdf_file")?));
    p.cdf_path = Some(path);
    Ok(())
}

fn resolve(file: &str, origin: &str) -> PathBuf {
    let f = Path::new(file);
    if f.is_absolute() {
        return f.to_path_buf();
    }
    let o = Path::new(origin);
    match o.parent() {
        Some(dir) if o.is_file() => dir.join(f),
        _ => f.to_path_buf(),
    }
}

/// Checks `[poisson]` against the rest of the scenario; keys are relative to `poisson`
/// except for group names (`groups.NAME`).
pub fn validate(sc: &Scenario) -> Result<(), ConfigError> {
    let Some(p) = &sc.poisson else { return Ok(()) };
    let within = |e: ConfigError| e.within("poisson");
    if !(p.load > 0.0 && p.load <= 1.0) {
        return Err(within(ConfigError::new("load", format!("must be in (0, 1], got {}", p.load))));
    }
    if p.cdf_file.trim().is_empty() {
        return Err(within(ConfigError::new("cdf_file", "name a CDF file")));
    }
    if !(p.one_packet_fraction >= 0.0 && p.one_packet_fraction < 1.0) {
        return Err(within(ConfigError::new("one_packet_fraction", format!("must be in [0, 1), got {}", p.one_packet_fraction))));
    }
    if p.max_size_bytes == Some(0) {
        return Err(within(ConfigError::new("max_size_bytes", "must be at least 1 byte")));
    }
    match p.max_flows {
        Some(0) => return Err(within(ConfigError::new("max_flows", "must be at least 1"))),
        Some(n) if n > MAX_FLOWS => return Err(within(ConfigError::new("max_flows", format!("at most {MAX_FLOWS}, got {n}")))),
        _ => {}
    }
    crate::topo::non_negative("start_s", p.start_s).map_err(within)?;
    let d = sc.sim.duration_s;
    if p.start_s >= d {
        return Err(within(ConfigError::new("start_s", format!("{} s is not before the end of the run ({d} s)", p.start_s))));
    }
    if let Some(stop) = p.stop_s {
        if !stop.is_finite() || stop <= p.start_s || stop > d {
            return Err(within(ConfigError::new("stop_s", format!("must be after start_s ({} s) and at most sim.duration_s ({d} s), got {stop}", p.start_s))));
        }
    }
    let known: std::collections::HashSet<String> = sc.topology.host_names(sc.udp.is_some()).into_iter().collect();
    for (key, list) in [("hosts", &p.hosts), ("src", &p.src), ("dst", &p.dst)] {
        let Some(h) = list else { continue };
        let names = h.names();
        if names.is_empty() {
            return Err(within(ConfigError::new(key, "name at least one host")));
        }
        let mut seen = std::collections::HashSet::new();
        for n in &names {
            if !known.contains(n) {
                return Err(within(ConfigError::new(key, format!("no host named {n:?} in this topology"))));
            }
            if !seen.insert(n) {
                return Err(within(ConfigError::new(key, format!("{n:?} is named twice"))));
            }
        }
    }
    let (src, dst) = p.ends(sc);
    if src.is_empty() {
        return Err(within(ConfigError::new("hosts", "no hosts take part")));
    }
    if let Some(s) = src.iter().find(|s| !dst.iter().any(|d| d != *s)) {
        return Err(within(ConfigError::new("dst", format!("source {s:?} has no destination other than itself"))));
    }
    for g in [GROUP, GROUP_1PKT] {
        if sc.groups.contains_key(g) {
            return Err(ConfigError::new(format!("groups.{g}"), "this group name is taken by the [poisson] workload"));
        }
    }
    if let Some(g) = sc.groups.keys().find(|g| g.starts_with("size_")) {
        return Err(ConfigError::new(format!("groups.{g}"), "names starting with size_ are taken by [poisson]'s size classes"));
    }
    Ok(())
}

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
    let cdf = p.cdf.as_ref().expect("prepare() read the CDF");
    let (src, _) = p.ends(sc);
    let hosts: std::collections::HashMap<&str, u32> =
        net.nodes.iter().enumerate().filter(|(_, x)| x.kind == crate::net::NodeKind::Host).map(|(i, x)| (x.name.as_str(), i as u32)).collect();
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

/// The Poisson flows of `[poisson]` (none without it), with ids from `first`; the CDF flows in
/// group `group`, the one-packet flows in `group + 1`. Ordered (and numbered) by start time.
pub fn flows(sc: &Scenario, streams: Streams, built: &Built, first: u32, group: u16) -> Result<Vec<TcpFlow>, Error> {
    let Some(p) = &sc.poisson else { return Ok(Vec::new()) };
    let plan = plan(sc, p, &built.net);
    let cdf = p.cdf.as_ref().expect("prepare() read the CDF");
    let (src_names, dst_names) = p.ends(sc);
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
    let out = arrivals
        .iter()
        .enumerate()
        .map(|(j, a)| {
            let i = first + j as u32;
            let ids = FlowIds { flow: i, src: a.src, dst: a.dst, sport: 1024 + (i % 60_000) as u16, dport: 80 + (i / 60_000) as u16 };
            let sender = TcpSender::new(&sc.tcp, ids, Some(a.size));
            let mut flow = TcpFlow::new(&sc.tcp, ids, group + a.class as u16, Some(a.size), SimTime::from_secs_f64(a.t), sender);
            if p.transport == Transport::Xpass {
                flow.xpass = Some(crate::workload::xpass_ends(sc, streams, built, &sc.tcp, ids, Some(a.size)));
            }
            flow
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
    let num = |x: Option<f64>| match x {
        Some(v) if v.is_finite() => json!(v),
        _ => Value::Null,
    };
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
        let tput = match (mean(&sizes), mean(&fct)) {
            (Some(s), Some(t)) if t > 0.0 => Some(8.0 * s / t),
            _ => None,
        };
        m.insert(format!("mean_throughput_bps{sfx}"), num(tput));
    }
}

/// The per-flow view [`insert_metrics`] needs, from a finished simulation: `(flows, bytes of
/// the one-packet group)` for the flows of groups `group` and `group + 1`.
pub fn done_flows(sim: &crate::engine::Sim, group: u16) -> (Vec<Done>, u64) {
    let mut v = Vec::new();
    let mut bytes_1pkt = 0;
    for (i, f) in sim.tcp.iter().enumerate() {
        if f.group != group && f.group != group + 1 {
            continue;
        }
        let size = f.size.unwrap_or(0);
        if f.group == group + 1 {
            bytes_1pkt += size;
        }
        let via = sim.via.get(i).copied().unwrap_or(dcfair_core::packet::NO_VIA);
        let rtt = path_delay(&sim.net, &sim.routes, f.ids.src, via, f.ids.dst) + path_delay(&sim.net, &sim.routes, f.ids.dst, via, f.ids.src);
        let ideal_s = rtt.as_secs_f64() + 8.0 * size as f64 / nic_rate(&sim.net, f.ids.src);
        let fct_s = sim.obs[i].completed.map(|c| (c - f.start).as_secs_f64());
        v.push(Done { size, fct_s, ideal_s });
    }
    (v, bytes_1pkt)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CDF files shipped in `scenarios/workloads/` (copies of `../shared/data/workloads`).
    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/workloads").join(name)
    }

    #[test]
    fn shipped_files_are_verbatim_copies_of_the_shared_ones() {
        let shared = Path::new("/work/shared/data/workloads");
        if !shared.exists() {
            return; // only on the machines that hold the shared data
        }
        for e in std::fs::read_dir(shared).unwrap() {
            let e = e.unwrap();
            let ours = std::fs::read(data(e.file_name().to_str().unwrap())).unwrap();
            assert_eq!(ours, std::fs::read(e.path()).unwrap(), "{:?}", e.file_name());
        }
    }

    // --- parsing ----------------------------------------------------------------------------
    #[test]
    fn every_shipped_file_loads_with_its_documented_scale() {
        // (file, cdf in percent, first value, last value)
        let files = [
            ("websearch_cdf.txt", false, 6.0, 20000.0),
            ("datamining_cdf.txt", false, 1.0, 666667.0),
            ("hadoop_cdf_mqecn.txt", false, 1.0, 333333.0),
            ("cache_cdf_mqecn.txt", false, 1.0, 33333.0),
            ("websearch_cdf_bytes_hpcc.txt", true, 0.0, 30_000_000.0),
            ("fb_hadoop_cdf_bytes_hpcc.txt", true, 0.0, 10_000_000.0),
            ("alistorage2019_cdf_bytes_hpcc.txt", true, 0.0, 2_000_000.0),
            ("googlerpc2008_cdf_bytes_hpcc.txt", true, 0.0, 15_158_197.0),
            ("fb_hadoop_cdf_bytes_homa.txt", false, 50.0, 10_000_000.0),
            ("xpass_search_cdf_bytes.txt", false, 9000.0, 30_000_000.0),
            ("xpass_mining_cdf_bytes.txt", false, 100.0, 1e9),
            ("xpass_cachefollower_cdf_bytes.txt", false, 70.0, 3_000_000.0),
            ("xpass_webserver_cdf_bytes.txt", false, 150.0, 500_000.0),
        ];
        for (f, percent, first, last) in files {
            let path = data(f);
            let detected = Cdf::load(&path, None, "poisson.cdf_file").unwrap_or_else(|e| panic!("{f}: {e}"));
            let given = Cdf::load(&path, Some(percent), "poisson.cdf_file").unwrap();
            assert_eq!(detected, given, "{f}");
            assert_eq!(detected.points[0].0, first, "{f}");
            assert_eq!(detected.points.last().unwrap().0, last, "{f}");
            assert_eq!(detected.points.last().unwrap().1, 1.0, "{f}");
            // the wrong scale is refused, naming the key and the last line
            let wrong = Cdf::load(&path, Some(!percent), "poisson.cdf_file").unwrap_err();
            let Error::Invalid { key, reason } = wrong else { panic!() };
            assert_eq!(key, "poisson.cdf_file");
            assert!(reason.contains(" line ") && reason.contains("cdf_percent"), "{f}: {reason}");
        }
    }

    #[test]
    fn the_published_means_are_reproduced() {
        // The interpolated mean before ceil (the PIAS scripts round it: 1138 and 5117 packets)
        // plus what ceil adds, under one unit.
        let within = |m: f64, interp: f64| m > interp && m < interp + 1.0;
        let ws = Cdf::load(&data("websearch_cdf.txt"), None, "k").unwrap();
        assert!(within(ws.mean_size_bytes(1, None), 1140.98), "{}", ws.mean_size_bytes(1, None));
        let dm = Cdf::load(&data("datamining_cdf.txt"), None, "k").unwrap();
        assert!(within(dm.mean_size_bytes(1, None), 5116.6), "{}", dm.mean_size_bytes(1, None));
        // HPCC's headers: 1711250 and 120420.75 bytes
        let hw = Cdf::load(&data("websearch_cdf_bytes_hpcc.txt"), None, "k").unwrap();
        assert!(within(hw.mean_size_bytes(1, None), 1_711_250.0));
        let hf = Cdf::load(&data("fb_hadoop_cdf_bytes_hpcc.txt"), None, "k").unwrap();
        assert!(within(hf.mean_size_bytes(1, None), 120_420.75));
        // Homa's header says 127796.6: the mean of its step CDF (no interpolation); dcfair
        // interpolates as ns-2 does (docs/workloads.md)
        let homa = Cdf::load(&data("fb_hadoop_cdf_bytes_homa.txt"), None, "k").unwrap();
        assert!(within(homa.mean_size_bytes(1, None), 121_848.96), "{}", homa.mean_size_bytes(1, None));
    }

    fn parse_err(text: &str) -> (usize, String) {
        Cdf::parse(text, None).unwrap_err()
    }

    #[test]
    fn bad_files_are_refused_with_their_line() {
        assert_eq!(parse_err("").0, 0);
        assert_eq!(parse_err("# only a comment\n\n").0, 0);
        assert_eq!(parse_err("1 1 0\n2 1 0.5\n1 1 1\n").0, 3, "value decreases");
        assert_eq!(parse_err("1 1 0\n2 1 0.5\n3 1 0.4\n4 1 1\n").0, 3, "cdf decreases");
        let (line, why) = parse_err("1 0\nabc 0.5\n3 1\n");
        assert_eq!(line, 2);
        assert!(why.contains("\"abc\""), "{why}");
        assert_eq!(parse_err("1 0\n2 0.5\n3 0.9\n").0, 3, "does not end at 1 or 100");
        assert_eq!(parse_err("1 0\n2 0.5 1 1\n").0, 2, "four columns");
        assert_eq!(parse_err("-1 0\n2 1\n").0, 1, "negative value");
        assert_eq!(parse_err("1 -0.5\n2 1\n").0, 1, "negative cdf");
        assert_eq!(parse_err("1 0\n2 nan\n").0, 2);
    }

    #[test]
    fn the_middle_column_is_ignored_as_in_ns2() {
        let c = Cdf::parse("1 7 0\n3 x 1\n", None);
        // `x` is not read: ns-2's sscanf("%lf %*f %lf") would stop there, dcfair only needs
        // the first and last columns
        assert_eq!(c.unwrap().points, vec![(1.0, 0.0), (3.0, 1.0)]);
    }

    #[test]
    fn missing_file_names_the_key() {
        let e = Cdf::load(Path::new("/nonexistent/cdf.txt"), None, "poisson.cdf_file").unwrap_err();
        let Error::Invalid { key, reason } = e else { panic!() };
        assert_eq!(key, "poisson.cdf_file");
        assert!(reason.contains("/nonexistent/cdf.txt"), "{reason}");
    }

    // --- sampling ---------------------------------------------------------------------------
    #[test]
    fn value_interpolates_as_ns2_empirical() {
        let c = Cdf::parse("1 1 0\n1 1 0.5\n2 1 0.6\n10 1 1\n", None).unwrap();
        assert_eq!(c.value(0.0), 1.0);
        assert_eq!(c.value(0.3), 1.0, "inside a flat step (equal values)");
        assert_eq!(c.value(0.5), 1.0, "exactly on a point: its value");
        assert!((c.value(0.55) - 1.5).abs() < 1e-12);
        assert!((c.value(0.8) - 6.0).abs() < 1e-12);
        assert!(c.value(0.999_999) < 10.0);
        // ceil to units, at least one, the unit, the cap
        assert_eq!(c.size_bytes(0.55, 1460, None), 2 * 1460);
        assert_eq!(c.size_bytes(0.0, 1460, None), 1460);
        assert_eq!(c.size_bytes(0.8, 1460, Some(5000)), 5000);
        let zero = Cdf::parse("0 0\n10 100\n", None).unwrap();
        assert_eq!(zero.size_bytes(0.0, 1, None), 1, "at least one byte");
    }

    #[test]
    fn exact_mean_matches_a_fine_riemann_sum() {
        for f in ["websearch_cdf.txt", "datamining_cdf.txt", "fb_hadoop_cdf_bytes_homa.txt", "xpass_webserver_cdf_bytes.txt"] {
            let c = Cdf::load(&data(f), None, "k").unwrap();
            for (unit, cap) in [(1460u64, None), (1460, Some(1_000_000)), (1, Some(12_345)), (1, None)] {
                let n = 2_000_000;
                let sum: f64 = (0..n).map(|i| c.size_bytes((i as f64 + 0.5) / n as f64, unit, cap) as f64).sum();
                let approx = sum / n as f64;
                let exact = c.mean_size_bytes(unit, cap);
                assert!((approx - exact).abs() <= 1e-3 * exact, "{f} unit {unit} cap {cap:?}: {approx} vs {exact}");
            }
        }
    }

    /// Kolmogorov-Smirnov distance between sampled sizes and the CDF of `size_bytes`.
    #[test]
    fn sampled_sizes_follow_the_cdf() {
        use rand::SeedableRng;
        let c = Cdf::load(&data("websearch_cdf.txt"), None, "k").unwrap();
        let mut rng = dcfair_core::rng::Rng::seed_from_u64(7);
        let n = 50_000;
        let mut xs: Vec<u64> = (0..n).map(|_| c.size_bytes(rng.gen(), 1460, None)).collect();
        xs.sort_unstable();
        // P(size <= s) for s = k * 1460: the largest u with ceil(value(u)) <= k, i.e. the
        // u at which the interpolated value reaches k (found by bisection on value()).
        let cdf_at = |k: f64| {
            let (mut lo, mut hi) = (0.0f64, 1.0f64);
            for _ in 0..60 {
                let mid = (lo + hi) / 2.0;
                if c.value(mid) <= k {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            lo
        };
        let mut d = 0.0f64;
        let mut i = 0;
        while i < xs.len() {
            let s = xs[i];
            let j = xs.partition_point(|&x| x <= s);
            let emp = j as f64 / n as f64;
            d = d.max((emp - cdf_at((s / 1460) as f64)).abs());
            i = j;
        }
        // KS critical value at 99.9 %: 1.95 / sqrt(n) = 0.0087
        assert!(d < 1.95 / (n as f64).sqrt(), "KS distance {d}");
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

    fn generate(sc: &Scenario, seed: u64) -> (Vec<TcpFlow>, Plan) {
        let streams = Streams::new(seed);
        let built = crate::topo::build(sc, streams).unwrap();
        let plan = plan(sc, sc.poisson.as_ref().unwrap(), &built.net);
        (flows(sc, streams, &built, 7, 3).unwrap(), plan)
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
        let ones: Vec<&TcpFlow> = fl.iter().filter(|f| f.group == 4).collect();
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
        let view = |fl: &[TcpFlow]| fl.iter().map(|f| (f.start, f.ids.src, f.ids.dst, f.size, f.group)).collect::<Vec<_>>();
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
        let (flow, obs) = (std::mem::size_of::<TcpFlow>(), std::mem::size_of::<crate::metrics::FlowObs>());
        let ev = std::mem::size_of::<crate::event::Event>();
        println!("TcpFlow {flow} B, FlowObs {obs} B, Event {ev} B, via 4 B: {} B per idle flow", flow + obs + ev + 4);
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
        match flows(&sc, streams, &built, 0, 0) {
            Err(Error::Invalid { key, reason }) => assert!(key == "poisson.load" && reason.contains("max_flows"), "{reason}"),
            other => panic!("{:?}", other.map(|v| v.len())),
        }
    }

    #[test]
    fn cdf_file_is_relative_to_the_scenario_file() {
        let dir = std::env::temp_dir().join(format!("dcfair-poisson-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("w")).unwrap();
        std::fs::write(dir.join("w/c.txt"), "# sizes\n1 1 0\n4 1 1\n").unwrap();
        let sc_text = "[sim]\nduration_s = 1.0\n[topology]\nkind = \"dumbbell\"\nsenders = 2\naccess_rate_mbps = 1000.0\n\
                       access_delay_us = 1.0\nbottleneck_rate_mbps = 1000.0\nbottleneck_delay_us = 1.0\n\
                       [poisson]\nload = 0.1\ncdf_file = \"w/c.txt\"\ncdf_unit = \"packets\"\n";
        let file = dir.join("s.toml");
        std::fs::write(&file, sc_text).unwrap();
        let sc = crate::scenario::load(sc_text, file.to_str().unwrap(), &[]).unwrap();
        assert_eq!(sc.poisson.unwrap().cdf.unwrap().points, vec![(1.0, 0.0), (4.0, 1.0)]);
        // a scenario given as text: relative to the working directory, where it is not
        assert_eq!(key_of(crate::scenario::load(sc_text, "<string>", &[])), "poisson.cdf_file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
