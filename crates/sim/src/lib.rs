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
//!   leaves a half-written or mixed set of results (`results.rs`).
//! - This file declares the modules, hands their public names on, wraps the entry points and
//!   defines the [`Allocator`]; no module of the crate imports it. The config layer
//!   (`scenario/`) imports nothing of the runtime (its rules say more).

pub mod arena;
pub mod assemble;
pub mod buffer;
pub mod calendar;
pub mod columns;
pub mod engine;
pub mod error;
pub mod event;
pub mod fairq;
pub mod groups;
pub mod jobs;
pub mod metrics;
pub mod net;
pub mod poisson;
pub mod pfc;
pub mod pktref;
pub mod port_drops;
pub mod probe;
pub mod render;
pub mod results;
pub mod routing;
pub mod run;
pub mod scenario;
pub mod series;
pub mod topo;
pub mod workload;

pub use columns::{Column, Table};
pub use engine::{Progress, ProgressFn};
pub use error::Error;
pub use results::{Results, ENGINE_BUILD, ENGINE_VERSION, FAULT_EXIT_STATUS, OPTIONAL_FILES, RUN_FILES};
pub use scenario::admission;
pub use scenario::Scenario;

/// The memory allocator the programs that run the engine for users and benchmarks install as
/// their global allocator (`#[global_allocator] static A: dcfair_sim::Allocator =
/// dcfair_sim::Allocator;` in the `dcfair._engine` extension and the `simrun` driver).
///
/// Why not the system's: a large run keeps hundreds of MB of per-flow and per-port state
/// (100,000 flows: about 300 MB) that every packet visits at random. With glibc's malloc those
/// pages are 4 KiB and a visit is often a TLB miss as well as a cache miss; mimalloc takes its
/// memory in large segments advised for transparent huge pages and packs small objects of one
/// size together, which shortens the CPU time of large runs and leaves small ones as they are
/// (`bench/pfabric.py`; the measurements are in `docs/history.md`, "Why every rate fell as
/// runs grew"). The price is memory where it is sparse: huge pages count in full once touched
/// (the pFabric row of `docs/performance.md`); `MIMALLOC_ALLOW_THP=0` in the environment turns
/// the huge pages off. The allocator never changes a result: nothing in the engine depends on
/// addresses.
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
