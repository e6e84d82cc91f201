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

pub mod calendar;
pub mod columns;
pub mod engine;
pub mod error;
pub mod event;
pub mod fairq;
pub mod groups;
pub mod metrics;
pub mod net;
pub mod poisson;
pub mod pktref;
pub mod probe;
pub mod routing;
pub mod run;
pub mod scenario;
pub mod series;
pub mod topo;
pub mod workload;

pub use columns::{Column, Table};
pub use scenario::admission;
pub use error::Error;
pub use scenario::Scenario;

/// The memory allocator the programs that run the engine for users and benchmarks install as
/// their global allocator (`#[global_allocator] static A: dcfair_sim::Allocator =
/// dcfair_sim::Allocator;` in the `dcfair._engine` extension and the `simrun` driver).
///
/// Why not the system's: a large run keeps hundreds of MB of per-flow and per-port state
/// (100,000 flows: about 300 MB) that every packet visits at random. With glibc's malloc those
/// pages are 4 KiB and a visit is often a TLB miss as well as a cache miss; mimalloc takes its
/// memory in large segments advised for transparent huge pages and packs small objects of one
/// size together. On the pFabric fabric with FQ-CoDel at 20,000 flows: 70 to 86 s of CPU with
/// glibc (5 runs), 63 to 71 s with mimalloc (4 runs); at 100,000 flows, with the slab layout
/// change of the same session, 468 s became 379 s (`docs/performance.md`).
/// Small runs are unchanged within noise. The price is memory where it is sparse (huge pages
/// count in full once touched: the 100,000-flow pFabric run peaks at 2.2 GiB instead of
/// 608 MiB); `MIMALLOC_ALLOW_THP=0` in the environment turns the huge pages off. The allocator
/// never changes a result: nothing in the engine depends on addresses.
///
/// An allocation the machine cannot give (what [`admission`] did not foresee, or a bound set
/// with `ulimit -v`) ends the process with one line on stderr and exit status 1, instead of a
/// Rust abort (`memory allocation of N bytes failed`, SIGABRT).
pub struct Allocator;

unsafe impl std::alloc::GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        out_of_memory_if_null(mimalloc::MiMalloc.alloc(layout), layout)
    }
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        out_of_memory_if_null(mimalloc::MiMalloc.alloc_zeroed(layout), layout)
    }
    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        mimalloc::MiMalloc.dealloc(ptr, layout)
    }
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let p = mimalloc::MiMalloc.realloc(ptr, layout, new_size);
        out_of_memory_if_null(p, std::alloc::Layout::from_size_align_unchecked(new_size, layout.align()))
    }
}

/// Exit status of a process that ran out of memory ([`Allocator`]).
pub const OUT_OF_MEMORY_EXIT_STATUS: i32 = 1;

#[inline]
fn out_of_memory_if_null(p: *mut u8, layout: std::alloc::Layout) -> *mut u8 {
    if p.is_null() {
        out_of_memory(layout.size());
    }
    p
}

#[cold]
fn out_of_memory(bytes: usize) -> ! {
    use std::io::Write as _;
    // formatted into a stack buffer: nothing may allocate here
    let mut buf = [0u8; 256];
    let mut cur = std::io::Cursor::new(&mut buf[..]);
    let _ = write!(
        cur,
        "dcfair: out of memory: an allocation of {bytes} bytes failed; make the scenario smaller, or give the run \
         more memory (--max-memory bounds what dcfair admits)\n"
    );
    let n = cur.position() as usize;
    let _ = std::io::stderr().write_all(&buf[..n]);
    std::process::exit(OUT_OF_MEMORY_EXIT_STATUS)
}

/// Version of the engine, written into every output.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The exact engine this binary was built from, written into every output as `engine_build`:
/// the last git commit that changed the engine's sources, with `+dirty.<hash>` when they had
/// uncommitted changes, or `src.<hash>` outside git (`build.rs` says how). Cached runs are
/// keyed by it, so no result is ever taken from another engine.
pub const ENGINE_BUILD: &str = env!("DCFAIR_ENGINE_BUILD");

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
/// the two forms always agree). The optional tables are present only when the scenario asks
/// for them, and are rendered to their files ([`OPTIONAL_FILES`]) only when written:
/// `timeseries` and `groups` with `[measure] sample_interval_s`, `group_windows` with
/// `group_window_s`, `drop_runs` with `drop_runs_ports`, `trace` with `[measure.trace]`.
#[derive(Clone, Debug)]
pub struct Results {
    pub summary_json: String,
    pub flows_csv: String,
    pub ports_csv: String,
    pub flows: Table,
    pub ports: Table,
    pub timeseries: Option<Table>,
    pub groups: Option<Table>,
    pub group_windows: Option<Table>,
    pub drop_runs: Option<Table>,
    pub trace: Option<Table>,
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

/// The files a run writes only when its scenario asks for them (`docs/metrics.md`). A run
/// that has none of one removes that file from its output directory, so a directory never
/// mixes two runs.
pub const OPTIONAL_FILES: [&str; 5] = ["timeseries.csv", "groups.csv", "group_windows.csv", "drop_runs.csv", "trace.csv"];

/// Parses `text` (TOML; `origin` names it in messages), applies `--set`-style overrides
/// (`("queue.kind", "hcf")`; values are TOML literals, bare words are strings) and validates.
pub fn load_scenario(text: &str, origin: &str, overrides: &[(String, String)]) -> Result<Scenario, Error> {
    scenario::load(text, origin, overrides)
}

/// Builds a scenario's network and workloads without running it (`dcfair validate`): the
/// errors a run would give before its first event, such as hosts that cannot reach each other
/// or a measured port that does not exist. `seed` overrides the scenario's seed.
pub fn check(sc: &Scenario, seed: Option<u64>) -> Result<run::Checked, Error> {
    run::check(sc, seed)
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
    /// The optional tables by file name, in [`OPTIONAL_FILES`] order.
    pub fn optional_tables(&self) -> [(&'static str, Option<&Table>); 5] {
        [
            (OPTIONAL_FILES[0], self.timeseries.as_ref()),
            (OPTIONAL_FILES[1], self.groups.as_ref()),
            (OPTIONAL_FILES[2], self.group_windows.as_ref()),
            (OPTIONAL_FILES[3], self.drop_runs.as_ref()),
            (OPTIONAL_FILES[4], self.trace.as_ref()),
        ]
    }

    /// Writes `summary.json`, `flows.csv`, `ports.csv` and the optional tables this run has
    /// into `dir` (created if needed), each through a temporary file and a rename. An optional
    /// file left from an earlier run is removed when this run has none, so a directory never
    /// mixes two runs.
    pub fn write_to(&self, dir: &std::path::Path) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut files = vec![
            ("summary.json", Body::Text(&self.summary_json)),
            ("flows.csv", Body::Text(&self.flows_csv)),
            ("ports.csv", Body::Text(&self.ports_csv)),
        ];
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
