//! The results of a run: its summary and tables ([`Results`]), what names the engine that
//! computed them ([`ENGINE_VERSION`], [`ENGINE_BUILD`]), and how they are written to a
//! directory.
//!
//! Rules:
//! - Output files are written to temporary names and renamed into place, so a failure never
//!   leaves a half-written or mixed set of results; an optional file left from an earlier run is
//!   removed when this run has none.
//! - Imports nothing of this crate but the tables (`columns.rs`) and the error type; `render/`
//!   fills a [`Results`], the crate root hands it on.

use crate::columns::Table;
use crate::error::Error;

/// Version of the engine, written into every output.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The exact engine this binary was built from, written into every output as `engine_build`:
/// the last git commit that changed the engine's sources, with `+dirty.<hash>` when they had
/// uncommitted changes, or `src.<hash>` outside git (`build.rs` says how). Cached runs are
/// keyed by it, so no result is ever taken from another engine.
pub const ENGINE_BUILD: &str = env!("DCFAIR_ENGINE_BUILD");

/// The results of one run: the summary, and the tables as columns ([`Table`]).
///
/// `flows_csv` and `ports_csv` are the CSV text of `flows` and `ports` (rendered from them, so
/// the two forms always agree). `fabric` (the network as built) and `port_drops` (the drops of
/// each flow at each measured port, no rows when none dropped) are written by every run, as
/// [`RUN_FILES`]. The optional tables are present only when the scenario asks
/// for them, and are rendered to their files ([`OPTIONAL_FILES`]) only when written:
/// `timeseries` and `groups` with `[measure] sample_interval_s`, `group_windows` with
/// `group_window_s`, `drop_runs` with `drop_runs_ports`, `trace` with `[measure.trace]`,
/// `subflows` when the run has MPTCP connections (`tcp.mptcp.subflows > 1`), `jobs` and
/// `job_iterations` when it has jobs (collective patterns), `paths` (the ports each flow
/// crosses, to read beside the sampled queues) with `sample_interval_s`.
#[derive(Clone, Debug)]
pub struct Results {
    pub summary_json: String,
    pub flows_csv: String,
    pub ports_csv: String,
    pub flows: Table,
    pub ports: Table,
    pub fabric: Table,
    pub port_drops: Table,
    pub timeseries: Option<Table>,
    pub groups: Option<Table>,
    pub group_windows: Option<Table>,
    pub drop_runs: Option<Table>,
    pub trace: Option<Table>,
    pub subflows: Option<Table>,
    pub jobs: Option<Table>,
    pub job_iterations: Option<Table>,
    pub paths: Option<Table>,
}

/// Exit status of a process stopped by the fault-injection hook [`fault_stop_after`].
pub const FAULT_EXIT_STATUS: i32 = 86;

/// Fault injection for the tests of crash recovery (`tests/test_faults.py`): with
/// `DCFAIR_FAULT_STOP_AFTER_FILES=N` in the environment, [`Results::write_to`] ends the process
/// (exit status [`FAULT_EXIT_STATUS`]) right after the N-th result file is in place, as a crash
/// between the files of a run would. Unset (always, outside those tests), it does nothing.
fn fault_stop_after() -> Option<usize> {
    std::env::var("DCFAIR_FAULT_STOP_AFTER_FILES").ok().and_then(|v| v.parse().ok())
}

/// The tables every run writes beside `summary.json`, `flows.csv` and `ports.csv`, in
/// [`Results::run_tables`] order (`docs/metrics.md`).
pub const RUN_FILES: [&str; 2] = ["fabric.csv", "port_drops.csv"];

/// The files a run writes only when its scenario asks for them (`docs/metrics.md`). A run
/// that has none of one removes that file from its output directory, so a directory never
/// mixes two runs.
pub const OPTIONAL_FILES: [&str; 9] = [
    "timeseries.csv",
    "groups.csv",
    "group_windows.csv",
    "drop_runs.csv",
    "trace.csv",
    "subflows.csv",
    "jobs.csv",
    "job_iterations.csv",
    "paths.csv",
];

/// The body of one result file.
enum Body<'a> {
    Text(&'a str),
    Csv(&'a Table),
}

fn write_body(path: &std::path::Path, body: &Body<'_>) -> std::io::Result<()> {
    match body {
        Body::Text(s) => std::fs::write(path, s),
        Body::Csv(t) => {
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            t.write_csv(&mut w)?;
            std::io::Write::flush(&mut w)
        }
    }
}

impl Results {
    /// The tables of [`RUN_FILES`] by file name.
    pub fn run_tables(&self) -> [(&'static str, &Table); 2] {
        [(RUN_FILES[0], &self.fabric), (RUN_FILES[1], &self.port_drops)]
    }

    /// The optional tables by file name, in [`OPTIONAL_FILES`] order.
    pub fn optional_tables(&self) -> [(&'static str, Option<&Table>); 9] {
        [
            (OPTIONAL_FILES[0], self.timeseries.as_ref()),
            (OPTIONAL_FILES[1], self.groups.as_ref()),
            (OPTIONAL_FILES[2], self.group_windows.as_ref()),
            (OPTIONAL_FILES[3], self.drop_runs.as_ref()),
            (OPTIONAL_FILES[4], self.trace.as_ref()),
            (OPTIONAL_FILES[5], self.subflows.as_ref()),
            (OPTIONAL_FILES[6], self.jobs.as_ref()),
            (OPTIONAL_FILES[7], self.job_iterations.as_ref()),
            (OPTIONAL_FILES[8], self.paths.as_ref()),
        ]
    }

    /// Writes `summary.json`, `flows.csv`, `ports.csv`, the [`RUN_FILES`] and the optional tables
    /// this run has into `dir` (created if needed), each through a temporary file and a rename. An optional
    /// file left from an earlier run is removed when this run has none, so a directory never
    /// mixes two runs.
    pub fn write_to(&self, dir: &std::path::Path) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut files = vec![
            ("summary.json", Body::Text(&self.summary_json)),
            ("flows.csv", Body::Text(&self.flows_csv)),
            ("ports.csv", Body::Text(&self.ports_csv)),
        ];
        files.extend(self.run_tables().map(|(name, t)| (name, Body::Csv(t))));
        let optional = self.optional_tables();
        files.extend(optional.iter().filter_map(|(name, t)| t.map(|t| (*name, Body::Csv(t)))));
        // All files are fully written before any replaces an earlier result, so a full disk or
        // a crash while writing leaves the previous set untouched.
        let mut written = Vec::new();
        for (name, body) in &files {
            let tmp = dir.join(format!(".{name}.tmp"));
            if let Err(e) = write_body(&tmp, body) {
                for t in &written {
                    let _ = std::fs::remove_file(t);
                }
                let _ = std::fs::remove_file(&tmp);
                return Err(Error::io(&tmp, e));
            }
            written.push(tmp);
        }
        let stop_after = fault_stop_after();
        for (i, ((name, _), tmp)) in files.iter().zip(&written).enumerate() {
            std::fs::rename(tmp, dir.join(name)).map_err(|e| Error::io(dir, e))?;
            if stop_after == Some(i + 1) {
                std::process::exit(FAULT_EXIT_STATUS);
            }
        }
        for (name, t) in optional {
            let stale = dir.join(name);
            if t.is_none() && stale.exists() {
                std::fs::remove_file(&stale).map_err(|e| Error::io(&stale, e))?;
            }
        }
        Ok(())
    }
}

/// A finite number, or null (JSON has no NaN or infinity): how `summary.json` writes a figure
/// that may be missing.
pub fn num(x: Option<f64>) -> serde_json::Value {
    match x {
        Some(v) if v.is_finite() => serde_json::json!(v),
        _ => serde_json::Value::Null,
    }
}
