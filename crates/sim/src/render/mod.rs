//! The result files of a finished run: `summary.json`, `flows.csv`, `ports.csv` and the
//! optional tables (`docs/metrics.md` defines every figure).
//!
//! Rules:
//! - One file per result family, each computing its own part of `summary.json`'s `metrics`
//!   from the engine's raw counters, and its own table where it has one: [`flows`] (per-flow
//!   figures, the background source's throughput, `flows.csv`), [`ports`] (the measured ports,
//!   drops by reason, FairQ's rewrites, `ports.csv`), [`groups`] (the per-group figures),
//!   [`incast`] (rounds and answers), [`jobs`] (the collectives' iterations, completion and
//!   slowdown, `jobs.csv`), [`transports`] (each transport's own figures), [`fabric`] (the
//!   network as built, `fabric.csv`, and the drops of each flow at each measured port,
//!   `port_drops.csv`) and the Poisson figures of `poisson.rs`. The optional tables (time series, drop runs, the packet
//!   trace) come from their observers, but `subflows.csv` (the flows of the bonds: MPTCP's
//!   subflows), which the flows family renders.
//! - The run is a pure function of (scenario, seed): JSON keys are sorted and floats use Rust's
//!   shortest round-trip formatting, so the files are byte-identical for the same inputs. The
//!   single exception is `wall_time_s` in `summary.json`, the run's own wall-clock time.
//! - A figure with no value (no flow finished, an empty window) is `null`: JSON has no NaN.

mod fabric;
mod flows;
mod groups;
mod incast;
mod jobs;
mod ports;
mod transports;

use crate::assemble::poisson_group;
use crate::engine::Sim;
use crate::metrics::{mean, percentile, std_dev};
use crate::results::{Results, ENGINE_BUILD, ENGINE_VERSION};
use crate::scenario::Scenario;
use serde_json::{json, Map, Value};

/// The result files of `sim`, run from `sc` with `seed` in `wall_s` seconds of wall time. Takes
/// the observers' tables out of `sim`.
pub fn results(sc: &Scenario, seed: u64, sim: &mut Sim, wall_s: f64, threads: Option<Value>) -> Results {
    let w = sim.world_mut();
    let series = w.series.take().map(crate::series::Series::into_tables);
    let drop_runs = crate::probe::drop_runs_table(&mut w.probes, &w.flow_group, &w.group_names);
    let trace = crate::probe::trace_table(&mut w.probes, &w.group_names);
    let trace_info = trace.as_ref().map(|(_, rows, cut)| {
        let t = sc.measure.trace.as_ref().expect("a trace table comes from [measure.trace]");
        json!({
            "port": t.port,
            "start_s": t.start_s,
            "end_s": t.end_s.unwrap_or(sc.sim.duration_s).min(sc.sim.duration_s),
            "rows": rows,
            "max_rows": t.max_rows,
            "truncated_at_s": cut.map(|c| c.as_secs_f64()),
        })
    });

    let sim: &Sim = sim;
    let w = sim.world();
    // The run may have ended early (an incast's last round): the window ends with it.
    let window = w.end.saturating_since(w.window_start).as_secs_f64();
    let figures = flows::Figures::of(sim, window);
    let mut m = Map::new();
    flows::summary(sim, &figures, window, &mut m);
    ports::summary(sim, window, &mut m);
    let deadlock = ports::pfc_summary(sim, &mut m);
    groups::summary(sc, &figures, &mut m);
    if let Some(ic) = &w.incast {
        incast::summary(ic, &mut m);
    }
    jobs::summary(sim, &mut m);
    transports::summary(sim, &mut m);
    if let Some(plan) = &w.poisson_plan {
        let (done, bytes_1pkt) = crate::poisson::done_flows(&w.flows, sim.obs(), &w.via, &w.net, &w.routes, poisson_group(sc));
        crate::poisson::insert_metrics(&mut m, sc, plan, &done, bytes_1pkt);
    }

    let mut summary = json!({
        "scenario": sc.name,
        "seed": seed,
        "engine_version": ENGINE_VERSION,
        "engine_build": ENGINE_BUILD,
        "queue_kind": sc.queue.kind.as_str(),
        "sim_time_s": w.end.as_secs_f64(),
        "window_s": window,
        "wall_time_s": wall_s,
        "events": sim.events(),
        "metrics": Value::Object(m),
    });
    if let Some(t) = trace_info {
        summary["trace"] = t;
    }
    if let Some(d) = deadlock {
        summary["pfc_deadlock"] = d;
    }
    if let Some(t) = threads {
        summary["threads"] = t;
    }
    let mut summary_json = serde_json::to_string_pretty(&summary).expect("JSON of plain values");
    summary_json.push('\n');

    let (flows, ports) = (flows::table(sim, &figures.rows), ports::table(sim, window));
    let (fabric, port_drops) = (fabric::table(&w.net), fabric::drops_table(sim));
    let subflows = flows::subflows_table(sim);
    let paths = sc.measure.sample_interval_s.map(|_| flows::paths_table(sim));
    let (jobs, job_iterations) = jobs::tables(sim).unzip();
    let (timeseries, groups, group_windows) = match series {
        Some((ts, groups, windows)) => (Some(ts), Some(groups), windows),
        None => (None, None, None),
    };
    Results {
        summary_json,
        flows_csv: flows.to_csv(),
        ports_csv: ports.to_csv(),
        flows,
        ports,
        fabric,
        port_drops,
        timeseries,
        groups,
        group_windows,
        drop_runs,
        trace: trace.map(|(t, _, _)| t),
        subflows,
        jobs,
        job_iterations,
        paths,
    }
}

pub(crate) use crate::results::num;

/// The FCT statistics of `fcts` under keys `fct_<stat>_s<suffix>`, if any flow finished.
fn insert_fct(m: &mut Map<String, Value>, suffix: &str, fcts: &[f64]) {
    if fcts.is_empty() {
        return;
    }
    m.insert(format!("fct_mean_s{suffix}"), num(mean(fcts)));
    m.insert(format!("fct_p50_s{suffix}"), num(percentile(fcts, 50.0)));
    m.insert(format!("fct_p99_s{suffix}"), num(percentile(fcts, 99.0)));
    m.insert(format!("fct_max_s{suffix}"), num(fcts.iter().cloned().reduce(f64::max)));
    m.insert(format!("fct_std_s{suffix}"), num(std_dev(fcts)));
}
