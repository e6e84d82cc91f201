//! The `[poisson]` table and its CDF file: what Poisson flow arrivals are drawn from.
//!
//! Rules:
//! - Holds the table's types, the CDF file's parser and the size distribution it defines; the
//!   checks against the rest of the scenario are in `validate.rs`, and the flows are drawn, and
//!   their metrics computed, in `poisson.rs` (at the crate root), whose documentation
//!   describes the workload.
//! - **The CDF file** (`cdf_file`, relative to the scenario file's directory, or absolute) is
//!   read and checked when the scenario is loaded ([`PoissonConfig::prepare`]), so `dcfair
//!   validate` rejects a bad one: lines `value cdf` or `value ignored cdf` (ns-2 reads the first
//!   and the last column), blank lines and `#` lines skipped; values >= 0 and non-decreasing,
//!   cdf non-decreasing in [0, scale], the last cdf equal to the scale (1, or 100 with
//!   `cdf_percent`; detected from the last point when `cdf_percent` is left out). Every error
//!   names `poisson.cdf_file`, the file and line.
//! - **Sizes** (ns-2 `Empirical`, `interpolation_ 2`, as the PIAS/pFabric scripts use it):
//!   `u` uniform in [0, 1); the first point `i` with `cdf_i >= u`; `u <= cdf_0` gives
//!   `value_0`, otherwise `value_{i-1} + (u - cdf_{i-1}) (value_i - value_{i-1}) /
//!   (cdf_i - cdf_{i-1})`. The result is rounded up (`ceil`, as the scripts do) to whole units,
//!   at least 1 unit, times the unit (`cdf_unit = "packets"`: `tcp.mss_bytes` payload bytes, the
//!   scripts' 1460; `"bytes"`: 1), and capped at `max_size_bytes`. `E[size]` is the exact mean
//!   of that same rounded, capped variable (computed in closed form from the points, not
//!   sampled).
//! - Imports nothing of this crate but the error type and the config layer's other tables.

use super::flows::Hosts;
use dcfair_core::transport::TransportKind;
use super::topology::TopologyConfig;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Group names of the workload: the CDF flows, and the one-packet flows.
pub const GROUP: &str = "poisson";
pub const GROUP_1PKT: &str = "poisson_1pkt";
/// At most this many flows per run (memory: `docs/workloads.md`); `max_flows` cannot raise it.
pub const MAX_FLOWS: u64 = 5_000_000;
/// Unit of the values of a CDF file.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CdfUnit {
    /// Segments of `tcp.mss_bytes` payload (the ns-2 PIAS/pFabric/MQ-ECN files, 1460 bytes).
    Packets,
    Bytes,
}

/// The `[poisson]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
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
    /// The flows' transport: `"tcp"` (the default, `[tcp]`) or another chosen transport
    /// (segments of `tcp.mss_bytes` + `tcp.header_bytes` whichever the transport).
    #[serde(default)]
    pub transport: TransportKind,
    /// Also report the median and 95th percentile of each size class's slowdown
    /// (`slowdown_p50_size_*`, `slowdown_p95_size_*`), as the HPCC paper plots FCT slowdown.
    #[serde(default)]
    pub slowdown_percentiles: bool,
    /// The parsed CDF, read when the scenario is loaded ([`PoissonConfig::prepare`]).
    #[serde(skip)]
    pub cdf: Option<Arc<Cdf>>,
    /// Where the CDF was read from (`cdf_file` resolved by [`PoissonConfig::prepare`]).
    #[serde(skip)]
    pub cdf_path: Option<PathBuf>,
}

impl PoissonConfig {
    /// Resolves `cdf_file` against the scenario file's directory (`origin`, when it names a
    /// file) and reads the CDF, so a bad file is found when the scenario is loaded.
    pub fn prepare(&mut self, origin: &str) -> Result<(), Error> {
        let path = resolve(&self.cdf_file, origin);
        self.cdf = Some(Arc::new(Cdf::load(&path, self.cdf_percent, "poisson.cdf_file")?));
        self.cdf_path = Some(path);
        Ok(())
    }

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

    /// The source and destination host names on `topology` (validated).
    pub fn ends(&self, topology: &TopologyConfig) -> (Vec<String>, Vec<String>) {
        let all = self.hosts.as_ref().map_or_else(|| topology.host_names(false), Hosts::names);
        let src = self.src.as_ref().map_or_else(|| all.clone(), Hosts::names);
        let dst = self.dst.as_ref().map_or_else(|| all.clone(), Hosts::names);
        (src, dst)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::schema::Scenario;
    use rand::Rng as _;

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

    fn key_of(r: Result<Scenario, Error>) -> String {
        match r {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected invalid input, got {other:?}"),
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
        let sc = crate::scenario::load::load(sc_text, file.to_str().unwrap(), &[]).unwrap();
        assert_eq!(sc.poisson.unwrap().cdf.unwrap().points, vec![(1.0, 0.0), (4.0, 1.0)]);
        // a scenario given as text: relative to the working directory, where it is not
        assert_eq!(key_of(crate::scenario::load::load(sc_text, "<string>", &[])), "poisson.cdf_file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
