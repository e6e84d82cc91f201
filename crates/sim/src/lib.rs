//! dcfair-sim: the discrete-event engine and the network around the mechanisms.
//!
//! The public surface is small: parse and validate a scenario ([`load_scenario`]), run it
//! ([`run`]), and write its results ([`Results::write_to`]). Everything else is the engine.
//!
//! Rules:
//! - A run is a pure function of (scenario, seed): byte-identical outputs for the same inputs.
//! - Invalid input is an [`Error::Invalid`] with the dotted key and the reason; it is found
//!   before anything runs or is written.
//! - Output files are written to temporary names and renamed into place, so a failure never
//!   leaves a half-written or mixed set of results.

pub mod columns;
pub mod engine;
pub mod error;
pub mod event;
pub mod metrics;
pub mod net;
pub mod poisson;
pub mod routing;
pub mod run;
pub mod scenario;
pub mod series;
pub mod topo;
pub mod workload;

pub use columns::{Column, Table};
pub use error::Error;
pub use scenario::Scenario;

/// Version of the engine, written into every output.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A progress callback: return `ControlFlow::Break(())` to stop the run ([`Error::Interrupted`]).
pub type ProgressFn<'a> = &'a mut dyn FnMut(&Progress) -> std::ops::ControlFlow<()>;

/// Progress of a running simulation, reported to an optional callback.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub sim_time_s: f64,
    pub duration_s: f64,
    pub events: u64,
    pub wall_time_s: f64,
}


/// The results of one run: the summary, and the tables as columns ([`Table`]).
///
/// `flows_csv` and `ports_csv` are the CSV text of `flows` and `ports` (rendered from them, so
/// the two forms always agree); `timeseries` is present only when `[measure]
/// sample_interval_s` is set, and is rendered to `timeseries.csv` only when written.
#[derive(Clone, Debug)]
pub struct Results {
    pub summary_json: String,
    pub flows_csv: String,
    pub ports_csv: String,
    pub flows: Table,
    pub ports: Table,
    pub timeseries: Option<Table>,
}

/// Parses `text` (TOML; `origin` names it in messages), applies `--set`-style overrides
/// (`("queue.kind", "hcf")`; values are TOML literals, bare words are strings) and validates.
pub fn load_scenario(text: &str, origin: &str, overrides: &[(String, String)]) -> Result<Scenario, Error> {
    scenario::load(text, origin, overrides)
}

/// Runs a scenario; `seed` overrides the scenario's seed. `progress` is called about every
/// 0.2 s of wall time and once at the end; it may stop the run.
pub fn run(sc: &Scenario, seed: Option<u64>, progress: Option<ProgressFn<'_>>) -> Result<Results, Error> {
    run::run(sc, seed, progress)
}

/// Runs a scenario and returns its results with the engine's event log (cargo feature
/// `trace`, for differential tests against ns-2; see [`engine::trace`]).
#[cfg(feature = "trace")]
pub fn run_traced(sc: &Scenario, seed: Option<u64>) -> Result<(Results, String), Error> {
    run::run_traced(sc, seed)
}

impl Results {
    /// Writes `summary.json`, `flows.csv`, `ports.csv` (and `timeseries.csv` when sampled)
    /// into `dir` (created if needed), each through a temporary file and a rename. A
    /// `timeseries.csv` left from an earlier run with sampling is removed when this run has
    /// none, so a directory never mixes two runs.
    pub fn write_to(&self, dir: &std::path::Path) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let series = self.timeseries.as_ref().map(Table::to_csv);
        let mut files = vec![("summary.json", &self.summary_json), ("flows.csv", &self.flows_csv), ("ports.csv", &self.ports_csv)];
        if let Some(ts) = &series {
            files.push(("timeseries.csv", ts));
        }
        // All files are fully written before any replaces an earlier result, so a full disk or
        // a crash while writing leaves the previous set untouched.
        let mut written = Vec::new();
        for (name, body) in &files {
            let tmp = dir.join(format!(".{name}.tmp"));
            if let Err(e) = std::fs::write(&tmp, body) {
                for t in &written {
                    let _ = std::fs::remove_file(t);
                }
                let _ = std::fs::remove_file(&tmp);
                return Err(Error::io(&tmp, e));
            }
            written.push(tmp);
        }
        for ((name, _), tmp) in files.iter().zip(&written) {
            std::fs::rename(tmp, dir.join(name)).map_err(|e| Error::io(dir, e))?;
        }
        if series.is_none() {
            let stale = dir.join("timeseries.csv");
            if stale.exists() {
                std::fs::remove_file(&stale).map_err(|e| Error::io(&stale, e))?;
            }
        }
        Ok(())
    }
}
