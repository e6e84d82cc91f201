//! Run a scenario: build it (`assemble.rs`), run the event loop, and render the result files
//! (`render/`).
//!
//! Rules:
//! - The run is a pure function of (scenario, seed): the same pair gives byte-identical result
//!   files, but for `wall_time_s` in `summary.json`, the run's own wall-clock time.
//! - [`check`] builds exactly what [`run`] builds and drops it: a scenario [`check`] accepts
//!   starts to run.
//! - A run with jobs (`jobs.rs`) also runs each job alone, unless `measure.jobs_baseline =
//!   false`: the same scenario and seed built with that job's flows only
//!   (`assemble::build_alone`: its hosts, start and 5-tuples as in the whole run, no other
//!   traffic, no time series, trace or drop runs), run until the job ends. Its completion time
//!   is the job's baseline, and the job's slowdown is its completion time over it
//!   (`docs/metrics.md`, jobs.csv).
//! - With `sim.threads` above one (or `"auto"` on a machine of several cores), a run that can
//!   be split runs on that many threads, one part of the network each ([`run_on_threads`],
//!   `engine/threads.rs`), at most as many as the machine has cores; one that cannot
//!   (`Partition::for_threads`, `Sim::split_refusal`) runs on one. Either way the result files are those of the run on one thread, and
//!   `summary.json` records the threads asked for, those used and why not more
//!   ([`Threading`]).

use crate::assemble::{build, build_alone};
use crate::engine::{Exchange, Partition, PartsStats, ProgressFn, Sim, Split};
use crate::error::Error;
use crate::render;
use crate::results::Results;
use crate::scenario::{Scenario, Threads};
use serde_json::{json, Value};

/// Runs `sc` with `seed` (or the scenario's own).
pub fn run(sc: &Scenario, seed: Option<u64>, progress: Option<ProgressFn<'_>>) -> Result<Results, Error> {
    let seed = seed.unwrap_or(sc.seed);
    let wall = std::time::Instant::now();
    let mut progress = progress;
    let (mut sim, threading) = simulate_threads(sc, seed, progress.as_mut().map(|p| &mut **p as ProgressFn<'_>))?;
    job_baselines(sc, seed, &mut sim, progress)?;
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(render::results(sc, seed, &mut sim, wall_s, threading.map(|t| t.json())))
}

/// How a run used threads: `summary.json`'s `threads`, written when `sim.threads` is not 1.
/// Like `wall_time_s`, it says how the run ran, not what it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Threading {
    /// `sim.threads`, resolved on this machine.
    pub asked: usize,
    pub used: usize,
    /// Why the run used fewer threads than asked for: it cannot be split, the split would not
    /// pay, or the machine has fewer cores.
    pub why: Option<String>,
}

impl Threading {
    fn json(&self) -> Value {
        match &self.why {
            Some(why) => json!({ "asked": self.asked, "used": self.used, "why": why }),
            None => json!({ "asked": self.asked, "used": self.used }),
        }
    }
}

/// Builds `sc` and runs it to the end on the threads `sim.threads` asks for, or on one when it
/// cannot be split or the split would not pay (module rules).
fn simulate_threads(sc: &Scenario, seed: u64, progress: Option<ProgressFn<'_>>) -> Result<(Sim, Option<Threading>), Error> {
    if sc.sim.threads == Threads::Count(1) {
        return Ok((simulate(sc, seed, progress)?, None));
    }
    let cores = Threads::cores();
    let (asked, n) = (sc.sim.threads.resolve(cores), sc.sim.threads.at_most(cores));
    let plan = |sim: &Sim| match sim.split_refusal() {
        Some(why) if n > 1 => Err(why.to_string()),
        _ if n < asked && n == 1 => Err(format!("the machine has {cores} core")),
        _ => Partition::for_threads(&sim.world().net, n),
    };
    let (sim, ran) = on_threads(sc, seed, plan, progress)?;
    let threading = match ran {
        Ok(_) if n < asked => Threading { asked, used: n, why: Some(format!("the machine has {cores} cores")) },
        Ok(_) => Threading { asked, used: n, why: None },
        Err(why) => Threading { asked, used: 1, why: Some(why) },
    };
    Ok((sim, Some(threading)))
}

/// Runs `sc` like [`run`], on `threads` threads, one part of the network each
/// (`engine/threads.rs`), even where the split would not pay: the outputs equal [`run`]'s on
/// one thread byte for byte (but `wall_time_s`); with them, how the windows went. Invalid input
/// (`sim`: the reason) when the scenario cannot be split.
pub fn run_on_threads(sc: &Scenario, seed: Option<u64>, threads: usize) -> Result<(Results, PartsStats), Error> {
    let seed = seed.unwrap_or(sc.seed);
    let wall = std::time::Instant::now();
    let plan = |sim: &Sim| match sim.split_refusal() {
        Some(why) => Err(why.to_string()),
        None => Partition::split(&sim.world().net, threads),
    };
    let (mut sim, ran) = on_threads(sc, seed, plan, None)?;
    let stats = ran.map_err(|why| Error::invalid("sim", why))?;
    let wall_s = wall.elapsed().as_secs_f64();
    Ok((render::results(sc, seed, &mut sim, wall_s, None), stats))
}

/// Runs `sc` with `seed` to the end, on a thread per part if `plan` splits it in parts, else
/// on this one (`Err(why)` beside the run). Built once on this thread, the run is split into a run per
/// part (`Sim::split`: the parts share its ports and flows), every other thread runs its part
/// (`Sim::run_part`) while this one runs the first, and the parts are joined back into one
/// (`Split::join`); the stats add up the parts'.
fn on_threads(
    sc: &Scenario,
    seed: u64,
    plan: impl FnOnce(&Sim) -> Result<Partition, String>,
    progress: Option<ProgressFn<'_>>,
) -> Result<(Sim, Result<PartsStats, String>), Error> {
    let mut first = build(sc, seed)?;
    let p = match plan(&first) {
        Ok(p) => p,
        Err(why) => {
            if first.run(progress).is_break() {
                return Err(Error::Interrupted);
            }
            return Ok((first, Err(why)));
        }
    };
    let (parts, ports, flows) = first.split(&p).map_err(|why| Error::invalid("sim", why))?.into_parts();
    let ex = Exchange::new(p.parts);
    let (p, ex) = (&p, &ex);
    let ran = std::thread::scope(|scope| {
        let mut parts = parts.into_iter();
        let mut first = parts.next().expect("the first part");
        let handles: Vec<_> = parts
            .enumerate()
            .map(|(k, mut sim)| {
                scope.spawn(move || {
                    let _stop = ex.stop_on_panic();
                    (sim.run_part(k + 1, p, ex, None), sim)
                })
            })
            .collect();
        let mine = {
            let _stop = ex.stop_on_panic();
            first.run_part(0, p, ex, progress)
        };
        let others: Vec<_> = handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect();
        (first, mine, others)
    });
    let (first, mine, others) = ran;
    let fail = |r: Result<String, crate::engine::Stopped>| match r {
        Ok(why) => Error::invalid("sim", why),
        Err(_) => Error::Interrupted,
    };
    let mut stats = mine.map_err(fail)?;
    let mut sims = vec![first];
    for (k, (ran, sim)) in others.into_iter().enumerate() {
        let s = ran.map_err(fail)?;
        stats.events[k + 1] = s.events[k + 1];
        stats.crossings += s.crossings;
        sims.push(sim);
    }
    Ok((Split::join(sims, ports, flows, p), Ok(stats)))
}

/// Runs `sc` like [`run`], the network split into `parts` parts run one after the other in
/// windows of the lookahead (`engine/windows.rs`): the outputs equal [`run`]'s byte for byte
/// (but `wall_time_s`); with them, how the windows went. Invalid input when the scenario cannot
/// be split (`sim`: the reason).
pub fn run_in_parts(sc: &Scenario, seed: Option<u64>, parts: usize) -> Result<(Results, PartsStats), Error> {
    let seed = seed.unwrap_or(sc.seed);
    let wall = std::time::Instant::now();
    let mut sim = build(sc, seed)?;
    let p = Partition::split(&sim.world().net, parts).map_err(|why| Error::invalid("sim", why))?;
    let stats = sim.run_in_parts(&p, false).map_err(|why| Error::invalid("sim", why))?;
    let wall_s = wall.elapsed().as_secs_f64();
    Ok((render::results(sc, seed, &mut sim, wall_s, None), stats))
}

/// Runs every job of `sim` alone (module rules) and records its completion time there;
/// `progress` sees these runs too (and may stop them).
fn job_baselines(sc: &Scenario, seed: u64, sim: &mut Sim, mut progress: Option<ProgressFn<'_>>) -> Result<(), Error> {
    if !sc.measure.jobs_baseline || sim.world().jobs.is_none() {
        return Ok(());
    }
    let mut quiet = sc.clone();
    quiet.measure.sample_interval_s = None;
    quiet.measure.group_window_s = None;
    quiet.measure.cwnd = false;
    quiet.measure.trace = None;
    quiet.measure.drop_runs_ports = None;
    let groups: Vec<usize> = sc.jobs().iter().map(|(g, _, _)| *g).collect();
    let mut alone = Vec::with_capacity(groups.len());
    for g in groups {
        let mut solo = build_alone(&quiet, seed, g)?;
        if solo.run(progress.as_mut().map(|p| &mut **p as ProgressFn<'_>)).is_break() {
            return Err(Error::Interrupted);
        }
        let jobs = solo.world().jobs.as_deref().expect("a job run alone");
        alone.push(jobs.jobs[0].completion());
    }
    if let Some(jobs) = sim.world_mut().jobs.as_deref_mut() {
        jobs.alone = alone;
    }
    Ok(())
}

/// Runs `sc` like [`run`] and also returns the engine's event log (feature `trace`; the line
/// formats are in [`crate::engine::trace`]).
#[cfg(feature = "trace")]
pub fn run_traced(sc: &Scenario, seed: Option<u64>) -> Result<(Results, String), Error> {
    let seed = seed.unwrap_or(sc.seed);
    let wall = std::time::Instant::now();
    let mut sim = simulate(sc, seed, None)?;
    let wall_s = wall.elapsed().as_secs_f64();
    let r = render::results(sc, seed, &mut sim, wall_s, None);
    Ok((r, sim.take_trace()))
}

/// Builds the network and the workloads of `sc` and runs the event loop to the end.
pub(crate) fn simulate(sc: &Scenario, seed: u64, progress: Option<ProgressFn<'_>>) -> Result<Sim, Error> {
    let mut sim = build(sc, seed)?;
    if sim.run(progress).is_break() {
        return Err(Error::Interrupted);
    }
    Ok(sim)
}

/// Builds `sc` as a run would and drops it without running: the checks that need the network
/// (hosts that cannot reach each other, port names of `[measure]`, waypoints, probes) fail here
/// exactly as they would at the start of [`run`].
pub fn check(sc: &Scenario, seed: Option<u64>) -> Result<Checked, Error> {
    let sim = build(sc, seed.unwrap_or(sc.seed))?;
    Ok(Checked { flows: sim.world().flows.len(), measured_ports: sim.world().net.ports.iter().filter(|p| p.measured).count() })
}

/// What [`check`] built, for the size of the results to come (one row per flow in flows.csv,
/// one per measured port in ports.csv).
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    pub flows: usize,
    pub measured_ports: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every packet leaves the slab exactly when it is delivered or dropped: once every flow of
    /// a lossy run has completed and the network is idle, no slot is left in use (a drop that
    /// did not free its slot, by any discipline's path, would leave one).
    #[test]
    fn an_idle_network_holds_no_packet_after_drops() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/papers/fqcodel/leafspine.toml");
        let text = std::fs::read_to_string(path).unwrap();
        for kind in ["droptail", "fq_codel", "sfq", "pfabric"] {
            let ov: Vec<(String, String)> = [
                ("queue.kind", kind),
                ("queue.limit_pkts", "12"),
                ("poisson.stop_s", "0.004"),
                ("sim.duration_s", "0.3"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let sc = crate::scenario::load(&text, path, &ov).unwrap();
            let sim = simulate(&sc, 1, None).unwrap();
            let drops: u64 = sim.world().net.ports.iter().map(|p| p.queue.stats.drops_pkts()).sum();
            let queued: usize = sim.world().net.ports.iter().map(|p| p.queue.len_pkts()).sum();
            let flows = sim.world().flows.iter().filter(|f| f.size.is_some()).count();
            let done = sim.world().flows.iter().zip(sim.obs()).filter(|(f, o)| f.size.is_some() && o.completed.is_some()).count();
            assert!(drops > 0, "{kind}: the run must drop packets");
            assert!(flows > 10 && done == flows, "{kind}: {done} of {flows} flows completed");
            assert_eq!((queued, sim.packets_in_slab()), (0, 0), "{kind}");
        }
    }

    /// The two-step cache hints go to runs that keep thousands of ports busy: many ports and
    /// many flows, not either alone.
    #[test]
    fn the_two_step_hints_go_to_runs_that_keep_many_ports_busy_and_large_fabrics_route_by_tier() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/scale/");
        for (file, k, deep) in [("permutation.toml", "8", false), ("permutation.toml", "16", true), ("sparse_k32.toml", "32", false), ("dense_k8.toml", "8", false)] {
            let path = format!("{dir}{file}");
            let text = std::fs::read_to_string(&path).unwrap();
            let sc = crate::scenario::load(&text, &path, &[("topology.k".to_string(), k.to_string())]).unwrap();
            let sim = crate::assemble::build(&sc, 1).unwrap();
            assert_eq!(sim.deep_hints(), deep, "{file} at k = {k}: {} ports, {} flows", sim.world().net.ports.len(), sim.world().flows.len());
            // and routes are read by tier where the compact table outgrows a core's caches
            assert_eq!(sim.world().routes.tiered(), k == "32", "{file} at k = {k}");
        }
    }
}
