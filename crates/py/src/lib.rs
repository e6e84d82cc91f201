//! `dcfair._engine`: the Python face of the Rust engine (PyO3, abi3 for CPython >= 3.9).
//!
//! This module is deliberately thin: it converts arguments, releases the GIL for the whole
//! load-run-write sequence, and maps the engine's [`Error`] onto Python exceptions. All
//! behaviour (parsing, validation, the run, atomic output) lives in `dcfair-sim`, so nothing
//! here changes when the engine grows.
//!
//! Rules:
//! - `InvalidInput(key, reason)` (a `ValueError`) for [`Error::Invalid`], `OSError` for
//!   [`Error::Io`], `RuntimeError` for [`Error::Internal`] and for a panic inside the engine.
//! - The GIL is released during the run and re-acquired only in the progress path, which
//!   also runs Python's signal handlers: Ctrl-C (or any exception raised by the user's
//!   `progress` callable) stops the run and is re-raised unchanged.
//! - Output files are written only after a successful run (the engine writes them atomically),
//!   so a failed or interrupted run never touches an earlier result.
//! - Stopping a run: the progress hook returns `ControlFlow::Break`, the engine stops and
//!   returns `Error::Interrupted`, and the binding re-raises the Python exception that caused it.

// pyo3 0.22's #[pyfunction] expansion trips this lint on newer clippy (a false positive).
#![allow(clippy::useless_conversion)]

/// The engine's allocator for everything the engine allocates inside this extension
/// (`dcfair_sim::Allocator`: why, in its documentation). Python's own objects keep Python's.
#[global_allocator]
static ALLOCATOR: dcfair_sim::Allocator = dcfair_sim::Allocator;

use std::ops::ControlFlow;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

use dcfair_sim::{Column, Error, Progress, Results, Scenario, Table};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyList, PyType};

/// The exception class for invalid input, created from Python source at import time so that
/// it is an ordinary `ValueError` subclass under the limited API (abi3), pickles across
/// processes (its `args` are `(key, reason)`), and has `.key` / `.reason` attributes.
const INVALID_INPUT_SRC: &str = r#"
class InvalidInput(ValueError):
    """Invalid input: the scenario key (dotted path), file or option at fault, and why.

    The command line prints it as ``dcfair: invalid input: KEY: REASON`` and exits with 2.
    """

    def __init__(self, key, reason):
        super().__init__(key, reason)
        self.key = key
        self.reason = reason

    def __str__(self):
        return f"{self.key}: {self.reason}"
"#;

static INVALID_INPUT: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// What happened inside `allow_threads`; turned into Python values once the GIL is back.
enum Outcome<T> {
    Done(T),
    Failed(Error),
    /// The progress path raised (KeyboardInterrupt, or the user's callable failed).
    Python(PyErr),
    /// The engine panicked: a bug. The message is the panic payload, if it was a string.
    Panicked(String),
}

fn to_pyerr(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::Invalid { key, reason } => match INVALID_INPUT.get(py) {
            Some(cls) => PyErr::from_type_bound(cls.bind(py).clone(), (key, reason)),
            None => PyRuntimeError::new_err(format!("InvalidInput not initialised: {key}: {reason}")),
        },
        Error::Io { path, reason } => PyOSError::new_err(format!("{path}: {reason}")),
        Error::Internal(m) => PyRuntimeError::new_err(m),
        Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
    }
}

fn finish<T>(py: Python<'_>, o: Outcome<T>) -> PyResult<T> {
    match o {
        Outcome::Done(v) => Ok(v),
        Outcome::Failed(e) => Err(to_pyerr(py, e)),
        Outcome::Python(e) => Err(e),
        Outcome::Panicked(m) => Err(PyRuntimeError::new_err(format!("engine panicked: {m}"))),
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// Parses and validates a scenario without running it.
///
/// `overrides` are `--set`-style `(dotted.key, value)` pairs; values are TOML literals and
/// bare words are strings. With `build`, also builds its network and workloads as a run
/// would (`dcfair validate`: unreachable hosts, unknown port names). Returns `{"name", "seed",
/// "duration_s", "inputs", "sample_interval_s", "memory_bytes", "threads"}`, `inputs` the paths of the
/// other files a run reads (CDF files), `memory_bytes` the memory a run of it needs by the
/// engine's admission estimate (`dcfair_sim::admission::estimate`), `threads` the most threads
/// a run of it uses on this machine (`sim.threads`, at most the cores); with `build`, also
/// `"flows"` and `"measured_ports"` (the rows of flows.csv and ports.csv to come).
#[pyfunction]
#[pyo3(signature = (text, origin, overrides = Vec::new(), build = false))]
fn load_scenario(py: Python<'_>, text: String, origin: String, overrides: Vec<(String, String)>, build: bool) -> PyResult<PyObject> {
    let sc = py.allow_threads(|| {
        let sc = match dcfair_sim::load_scenario(&text, &origin, &overrides) {
            Ok(sc) => sc,
            Err(e) => return Outcome::Failed(e),
        };
        if !build {
            return Outcome::Done((sc, None));
        }
        // A panic is a bug: catch it so Python gets a RuntimeError, not an abort.
        match panic::catch_unwind(AssertUnwindSafe(|| dcfair_sim::check(&sc, None))) {
            Ok(Ok(checked)) => Outcome::Done((sc, Some(checked))),
            Ok(Err(e)) => Outcome::Failed(e),
            Err(payload) => Outcome::Panicked(panic_message(payload.as_ref())),
        }
    });
    let (sc, checked): (Scenario, Option<dcfair_sim::run::Checked>) = finish(py, sc)?;
    let d = PyDict::new_bound(py);
    d.set_item("name", &sc.name)?;
    d.set_item("seed", sc.seed)?;
    d.set_item("duration_s", sc.sim.duration_s)?;
    let inputs: Vec<String> = sc.input_files().iter().map(|p| p.to_string_lossy().into_owned()).collect();
    d.set_item("inputs", inputs)?;
    d.set_item("sample_interval_s", sc.measure.sample_interval_s)?;
    d.set_item("memory_bytes", dcfair_sim::admission::estimate(&sc).bytes)?;
    d.set_item("threads", sc.sim.threads.at_most(dcfair_sim::scenario::Threads::cores()))?;
    if let Some(c) = checked {
        d.set_item("flows", c.flows)?;
        d.set_item("measured_ports", c.measured_ports)?;
    }
    Ok(d.into_any().unbind())
}

/// Loads, validates and runs a scenario, writing the results into `out_dir` if given.
fn run_results(
    py: Python<'_>,
    text: String,
    origin: String,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    out_dir: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<Results> {
    if let Some(p) = &progress {
        if !p.bind(py).is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err("progress must be callable or None"));
        }
    }
    let outcome = py.allow_threads(move || {
        let sc = match dcfair_sim::load_scenario(&text, &origin, &overrides) {
            Ok(sc) => sc,
            Err(e) => return Outcome::Failed(e),
        };
        let mut stopped: Option<PyErr> = None;
        let ran: std::thread::Result<Result<Results, Error>> = {
            let mut on_progress = |p: &Progress| {
                let err = Python::with_gil(|py| {
                    py.check_signals().err().or_else(|| {
                        progress.as_ref().and_then(|f| {
                            f.call1(py, (p.sim_time_s, p.duration_s, p.events, p.wall_time_s)).err()
                        })
                    })
                });
                match err {
                    Some(e) => {
                        stopped = Some(e);
                        ControlFlow::Break(())
                    }
                    None => ControlFlow::Continue(()),
                }
            };
            // A panic is a bug: catch it so Python gets a RuntimeError, not an abort.
            panic::catch_unwind(AssertUnwindSafe(|| dcfair_sim::run(&sc, seed, Some(&mut on_progress))))
        };
        match ran {
            Ok(Ok(results)) => {
                if let Some(dir) = &out_dir {
                    if let Err(e) = results.write_to(dir) {
                        return Outcome::Failed(e);
                    }
                }
                Outcome::Done(results)
            }
            Ok(Err(Error::Interrupted)) => match stopped {
                Some(e) => Outcome::Python(e),
                None => Outcome::Panicked("stopped without a reason".into()),
            },
            Ok(Err(e)) => Outcome::Failed(e),
            Err(payload) => Outcome::Panicked(panic_message(payload.as_ref())),
        }
    });
    finish(py, outcome)
}

/// Loads, validates and runs a scenario; returns the text of `summary.json`.
///
/// `seed` overrides the scenario's seed. If `out_dir` is given, `summary.json`, `flows.csv`
/// and `ports.csv` (and the optional files the scenario asks for) are written there after the run
/// succeeds (the directory is created then, and not before). `progress(sim_time_s,
/// duration_s, events, wall_time_s)` is called about every 0.2 s of wall time, with the GIL
/// held; anything it raises stops the run and is re-raised. Ctrl-C raises `KeyboardInterrupt`
/// the same way, with or without `progress`.
#[pyfunction]
#[pyo3(signature = (text, origin, overrides = Vec::new(), seed = None, out_dir = None, progress = None))]
fn run(
    py: Python<'_>,
    text: String,
    origin: String,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    out_dir: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    Ok(run_results(py, text, origin, overrides, seed, out_dir, progress)?.summary_json)
}

/// A table as a list of `(name, kind, data)`: `kind` is `f64`, `opt_f64` (NaN = missing),
/// `u64`, `opt_u64` (2^64 - 1 = missing) with `data` a 1-d numpy array that takes over the
/// engine's own buffer (no copy), or `cat` with `data = (codes, levels)`: a `uint32` array
/// (2^32 - 1 = missing) and a list of strings.
fn table_to_py(py: Python<'_>, t: Table) -> PyResult<PyObject> {
    let out = PyList::empty_bound(py);
    for (name, col) in t.names.into_iter().zip(t.columns) {
        let kind = col.kind();
        let data: PyObject = match col {
            Column::F64(v) | Column::OptF64(v) => v.into_pyarray_bound(py).into_any().unbind(),
            Column::U64(v) | Column::OptU64(v) => v.into_pyarray_bound(py).into_any().unbind(),
            Column::Cat { codes, levels } => (codes.into_pyarray_bound(py), levels).into_py(py),
        };
        out.append((name, kind, data))?;
    }
    Ok(out.into_any().unbind())
}

/// Like [`run`], but returns `(summary_json, tables)`: `tables` maps `flows`, `ports`, the
/// tables every run has (`fabric`, `port_drops`: the stems of `dcfair_sim::RUN_FILES`) and
/// the optional tables the scenario asked for (`timeseries`, `groups`, `group_windows`,
/// `drop_runs`, `trace`, `subflows`, `jobs`, `job_iterations`, `paths`: the stems of
/// `dcfair_sim::OPTIONAL_FILES`) to columns as
/// `table_to_py` describes. Files are written to `out_dir` exactly as [`run`] writes them.
#[pyfunction]
#[pyo3(signature = (text, origin, overrides = Vec::new(), seed = None, out_dir = None, progress = None))]
fn run_tables(
    py: Python<'_>,
    text: String,
    origin: String,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    out_dir: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<(String, PyObject)> {
    let r = run_results(py, text, origin, overrides, seed, out_dir, progress)?;
    let tables = PyDict::new_bound(py);
    tables.set_item("flows", table_to_py(py, r.flows)?)?;
    tables.set_item("ports", table_to_py(py, r.ports)?)?;
    let always = [("fabric", r.fabric), ("port_drops", r.port_drops)];
    debug_assert!(always.iter().zip(dcfair_sim::RUN_FILES).all(|((k, _), f)| f == format!("{k}.csv")));
    for (name, t) in always {
        tables.set_item(name, table_to_py(py, t)?)?;
    }
    let optional = [
        ("timeseries", r.timeseries),
        ("groups", r.groups),
        ("group_windows", r.group_windows),
        ("drop_runs", r.drop_runs),
        ("trace", r.trace),
        ("subflows", r.subflows),
        ("jobs", r.jobs),
        ("job_iterations", r.job_iterations),
        ("paths", r.paths),
    ];
    debug_assert!(optional.iter().zip(dcfair_sim::OPTIONAL_FILES).all(|((k, _), f)| f == format!("{k}.csv")));
    for (name, t) in optional {
        if let Some(t) = t {
            tables.set_item(name, table_to_py(py, t)?)?;
        }
    }
    Ok((r.summary_json, tables.into_any().unbind()))
}

/// The engine version written into every output.
#[pyfunction]
fn version() -> &'static str {
    dcfair_sim::ENGINE_VERSION
}

/// Runs the real-packet switch with the command line `argv` (program name first) and ends this
/// process with its exit status (`python -m dcfair.switch`; `dcfair_switch::cli`). The GIL is
/// released for good: the switch owns the process from here on.
#[cfg(target_os = "linux")]
#[pyfunction]
fn switch_main(py: Python<'_>, argv: Vec<String>) {
    py.allow_threads(|| dcfair_switch::cli::run(argv))
}

/// The scenario as the engine builds it, as JSON text: its resolved document (every default
/// filled in), nodes, ports (rates, delays, measured), flows (ends, start times, sizes, routes)
/// (`dcfair_switch::fabric::plan_of`). Peer simulators read it instead of the TOML
/// (`dcfair.peers`). `seed` overrides the scenario's.
#[cfg(target_os = "linux")]
#[pyfunction]
#[pyo3(signature = (text, origin, overrides = Vec::new(), seed = None))]
fn plan(py: Python<'_>, text: String, origin: String, overrides: Vec<(String, String)>, seed: Option<u64>) -> PyResult<String> {
    let out = py.allow_threads(|| {
        let sc = match dcfair_sim::load_scenario(&text, &origin, &overrides) {
            Ok(sc) => sc,
            Err(e) => return Outcome::Failed(e),
        };
        let seed = seed.unwrap_or(sc.seed);
        match panic::catch_unwind(AssertUnwindSafe(|| dcfair_switch::fabric::plan_of(&sc, seed, false))) {
            Ok(Ok(v)) => Outcome::Done(v.to_string()),
            Ok(Err(e)) => Outcome::Failed(e),
            Err(payload) => Outcome::Panicked(panic_message(payload.as_ref())),
        }
    });
    finish(py, out)
}

/// The queue disciplines the engine knows, in registry order: `(kind, one-line summary)`.
#[pyfunction]
fn queue_kinds() -> Vec<(&'static str, &'static str)> {
    dcfair_core::qdisc::KINDS.iter().map(|k| (k.name, k.summary)).collect()
}

/// The memory bound runs of this process must fit in, bytes, and a phrase saying which bound
/// it is (`dcfair_sim::admission::bound`); `None` where none can be read. A bad
/// `DCFAIR_MAX_MEMORY_MB` is invalid input naming it.
#[pyfunction]
fn memory_bound(py: Python<'_>) -> PyResult<Option<(u64, &'static str)>> {
    dcfair_sim::admission::bound().map_err(|e| to_pyerr(py, e))
}

/// The exact engine build written into every output (`dcfair_sim::ENGINE_BUILD`).
#[pyfunction]
fn build() -> &'static str {
    dcfair_sim::ENGINE_BUILD
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let globals = PyDict::new_bound(py);
    globals.set_item("__name__", "dcfair._engine")?;
    py.run_bound(INVALID_INPUT_SRC, Some(&globals), None)?;
    let cls = globals.get_item("InvalidInput")?.expect("InvalidInput defined above");
    let cls = cls.downcast_into::<PyType>()?;
    let _ = INVALID_INPUT.set(py, cls.clone().unbind());
    m.add("InvalidInput", cls)?;
    m.add_function(wrap_pyfunction!(load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_tables, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    m.add_function(wrap_pyfunction!(queue_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(memory_bound, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_function(wrap_pyfunction!(switch_main, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add("__version__", dcfair_sim::ENGINE_VERSION)?;
    m.add("__build__", dcfair_sim::ENGINE_BUILD)?;
    Ok(())
}
