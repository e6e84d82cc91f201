//! The jobs family (`jobs.rs`): `jobs.csv` (one row per job: its iterations' times, its
//! completion time, its completion time alone and its slowdown), `job_iterations.csv` (one row
//! per iteration that started before the run ended), and the summary's `jobs_*` and `job_*_<name>` keys.
//!
//! A job's slowdown is its completion time over its completion time alone (`run.rs`): null
//! when either is missing (the job did not finish in the run, or alone, or
//! `measure.jobs_baseline = false`). `jobs_jain_slowdown` is Jain's index of the slowdowns
//! there are.

use super::num;
use crate::columns::{CatBuilder, Column, Table};
use crate::engine::Sim;
use crate::jobs::Job;
use crate::metrics::{jain, mean, percentile};
use serde_json::{json, Map, Value};

/// One job's figures, seconds.
struct Figures {
    iterations: Vec<f64>,
    completion: Option<f64>,
    alone: Option<f64>,
    slowdown: Option<f64>,
}

fn figures(job: &Job, alone: Option<dcfair_core::time::SimDuration>) -> Figures {
    let completion = job.completion().map(|d| d.as_secs_f64());
    let alone = alone.map(|d| d.as_secs_f64());
    let slowdown = match (completion, alone) {
        (Some(c), Some(a)) if a > 0.0 => Some(c / a),
        _ => None,
    };
    Figures { iterations: job.iteration_times().iter().map(|d| d.as_secs_f64()).collect(), completion, alone, slowdown }
}

pub(super) fn summary(sim: &Sim, m: &mut Map<String, Value>) {
    let w = sim.world();
    let Some(jobs) = w.jobs.as_deref() else { return };
    let mut slowdowns = Vec::new();
    for (job, &alone) in jobs.jobs.iter().zip(&jobs.alone) {
        let name = &w.group_names[job.group as usize];
        let f = figures(job, alone);
        m.insert(format!("job_completion_s_{name}"), num(f.completion));
        m.insert(format!("job_alone_s_{name}"), num(f.alone));
        m.insert(format!("job_slowdown_{name}"), num(f.slowdown));
        m.insert(format!("job_iteration_mean_s_{name}"), num(mean(&f.iterations)));
        slowdowns.extend(f.slowdown);
    }
    m.insert("jobs".into(), json!(jobs.jobs.len()));
    m.insert("jobs_completed".into(), json!(jobs.jobs.iter().filter(|j| j.done()).count()));
    m.insert("jobs_jain_slowdown".into(), num(jain(&slowdowns)));
    m.insert("jobs_slowdown_mean".into(), num(mean(&slowdowns)));
    m.insert("jobs_slowdown_max".into(), num(slowdowns.iter().cloned().reduce(f64::max)));
}

/// `jobs.csv` and `job_iterations.csv`, or `None` without jobs.
pub(super) fn tables(sim: &Sim) -> Option<(Table, Table)> {
    let w = sim.world();
    let jobs = w.jobs.as_deref()?;
    let name = |h: u32| w.net.nodes[h as usize].name.as_str();
    let (mut job, mut collective, mut placed) = (CatBuilder::new(), CatBuilder::new(), CatBuilder::new());
    let (mut hosts, mut size, mut iterations, mut done) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut start, mut it_mean, mut it_p50, mut it_max) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut completion, mut alone, mut slowdown) = (Vec::new(), Vec::new(), Vec::new());
    let (mut i_job, mut i_no, mut i_start, mut i_end, mut i_time) = (CatBuilder::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (j, &a) in jobs.jobs.iter().zip(&jobs.alone) {
        let f = figures(j, a);
        let g = &w.group_names[j.group as usize];
        job.push(g);
        collective.push(j.collective.name());
        placed.push(&j.hosts.iter().map(|&h| name(h)).collect::<Vec<_>>().join(" "));
        hosts.push(j.hosts.len() as u64);
        size.push(j.size);
        iterations.push(j.iterations as u64);
        done.push(f.iterations.len() as u64);
        start.push(j.start.as_secs_f64());
        it_mean.push(mean(&f.iterations).unwrap_or(f64::NAN));
        it_p50.push(percentile(&f.iterations, 50.0).unwrap_or(f64::NAN));
        it_max.push(f.iterations.iter().cloned().reduce(f64::max).unwrap_or(f64::NAN));
        completion.push(f.completion.unwrap_or(f64::NAN));
        alone.push(f.alone.unwrap_or(f64::NAN));
        slowdown.push(f.slowdown.unwrap_or(f64::NAN));
        for (k, s) in j.iteration_starts.iter().enumerate().filter(|(_, &s)| s <= w.end) {
            let e = j.iteration_ends.get(k);
            i_job.push(g);
            i_no.push(k as u64);
            i_start.push(s.as_secs_f64());
            i_end.push(e.map_or(f64::NAN, |e| e.as_secs_f64()));
            i_time.push(e.map_or(f64::NAN, |&e| (e - *s).as_secs_f64()));
        }
    }
    let mut t = Table::new();
    t.push("job", job.finish());
    t.push("collective", collective.finish());
    t.push("hosts", Column::U64(hosts));
    t.push("size_bytes", Column::U64(size));
    t.push("iterations", Column::U64(iterations));
    t.push("iterations_done", Column::U64(done));
    t.push("start_s", Column::F64(start));
    t.push("iteration_mean_s", Column::OptF64(it_mean));
    t.push("iteration_p50_s", Column::OptF64(it_p50));
    t.push("iteration_max_s", Column::OptF64(it_max));
    t.push("completion_s", Column::OptF64(completion));
    t.push("alone_completion_s", Column::OptF64(alone));
    t.push("slowdown", Column::OptF64(slowdown));
    t.push("placed_hosts", placed.finish());
    let mut it = Table::new();
    it.push("job", i_job.finish());
    it.push("iteration", Column::U64(i_no));
    it.push("start_s", Column::F64(i_start));
    it.push("end_s", Column::OptF64(i_end));
    it.push("time_s", Column::OptF64(i_time));
    Some((t, it))
}
