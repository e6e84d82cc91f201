//! Jobs (collective patterns, `crates/sim/src/jobs.rs`) through the public API: two all-reduce
//! jobs sharing a k = 4 fat-tree (`scenarios/jobs/two_allreduce_k4.toml`), their baselines,
//! the order of their transfers in flows.csv, placement and bad input.

use crate::common::{go, go_seeded, metric, metrics, ov};
use dcfair_sim::{load_scenario, run, Error, Results};

const TWO_JOBS: &str = include_str!("../../../../scenarios/jobs/two_allreduce_k4.toml");

/// The rows of a CSV text as maps from column name to field.
fn rows(csv: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = csv.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines.map(|l| head.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

fn csv_of(r: &Results, name: &str) -> String {
    let t = r.optional_tables().into_iter().find(|(n, _)| *n == name).and_then(|(_, t)| t).unwrap_or_else(|| panic!("no {name}"));
    t.to_csv()
}

fn invalid_key(text: &str, extra: &[(&str, &str)]) -> String {
    match load_scenario(text, "t.toml", &ov(extra)).and_then(|sc| run(&sc, None, None)) {
        Err(Error::Invalid { key, .. }) => key,
        other => panic!("expected invalid input, got {:?}", other.map(|r| r.summary_json)),
    }
}

// --- two jobs on one fabric ---------------------------------------------------------------------
#[test]
fn two_allreduce_jobs_on_a_k4_fat_tree_are_slower_together_than_alone() {
    let r = go(TWO_JOBS, &[]);
    let jobs = rows(&csv_of(&r, "jobs.csv"));
    assert_eq!(jobs.len(), 2);
    for j in &jobs {
        let f = |k: &str| j[k].parse::<f64>().unwrap_or_else(|_| panic!("{k} of {j:?}"));
        assert_eq!((f("iterations"), f("iterations_done"), f("hosts")), (3.0, 3.0, 8.0), "{j:?}");
        assert!(f("slowdown") >= 1.0, "sharing the fabric does not speed a job up: {j:?}");
        assert!((f("slowdown") - f("completion_s") / f("alone_completion_s")).abs() < 1e-12);
        assert!(f("iteration_p50_s") <= f("iteration_max_s") && f("iteration_mean_s") <= f("iteration_max_s"));
    }
    assert_eq!(jobs[0]["collective"], "allreduce_ring");
    assert_eq!(jobs[1]["collective"], "allreduce_tree");
    let jain = metric(&r, "jobs_jain_slowdown");
    assert!(jain > 0.5 && jain <= 1.0, "{jain}");
    assert_eq!(metric(&r, "jobs_completed"), 2.0);
    // the run ends with the last job, which nothing else keeps going
    let last = jobs.iter().map(|j| j["completion_s"].parse::<f64>().unwrap()).fold(0.0, f64::max);
    let summary: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    assert_eq!(summary["sim_time_s"].as_f64().unwrap(), last);
    // every iteration of job.csv's rows, apart by the compute gap
    let its = rows(&csv_of(&r, "job_iterations.csv"));
    assert_eq!(its.len(), 6);
    for w in its.windows(2).filter(|w| w[0]["job"] == w[1]["job"]) {
        let gap = w[1]["start_s"].parse::<f64>().unwrap() - w[0]["end_s"].parse::<f64>().unwrap();
        assert!((gap - 0.0001).abs() < 1e-12, "{gap}");
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_the_baselines_can_be_left_out() {
    let strip = |r: &Results| {
        let mut v: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
        v.as_object_mut().unwrap().remove("wall_time_s");
        v
    };
    let (a, b) = (go_seeded(TWO_JOBS, &[], 3), go_seeded(TWO_JOBS, &[], 3));
    assert_eq!(strip(&a), strip(&b));
    for name in ["jobs.csv", "job_iterations.csv"] {
        assert_eq!(csv_of(&a, name), csv_of(&b, name), "{name}");
    }
    assert_eq!((a.flows_csv.clone(), a.ports_csv.clone()), (b.flows_csv, b.ports_csv));
    let off = go_seeded(TWO_JOBS, &[("measure.jobs_baseline", "false")], 3);
    assert_eq!(off.flows_csv, a.flows_csv, "the baselines change nothing of the run itself");
    let m = metrics(&off);
    assert!(m["job_slowdown_a"].is_null() && m["jobs_jain_slowdown"].is_null());
    assert_eq!(m["job_completion_s_a"], metrics(&a)["job_completion_s_a"]);
}

// --- dependencies, as the engine ran them -------------------------------------------------------
#[test]
fn a_ring_transfer_starts_only_after_the_chunk_it_forwards_has_arrived() {
    let r = go(TWO_JOBS, &[]);
    let flows = rows(&r.flows_csv);
    let ring: Vec<_> = flows.iter().filter(|f| f["group"] == "a").collect();
    let n = 8;
    assert_eq!(ring.len(), 3 * 2 * (n - 1) * n, "3 iterations of 2 (N - 1) steps of N transfers");
    let t = |f: &std::collections::HashMap<String, String>, k: &str| f[k].parse::<f64>().unwrap();
    assert!(ring.iter().all(|f| f["size_bytes"] == "125000"), "size / N each");
    for (k, f) in ring.iter().enumerate() {
        let (it, s, i) = (k / (2 * (n - 1) * n), (k / n) % (2 * (n - 1)), k % n);
        if s == 0 {
            continue;
        }
        // step s from rank i forwards what rank i - 1 sent it in step s - 1
        let dep = ring[it * 2 * (n - 1) * n + (s - 1) * n + (i + n - 1) % n];
        assert_eq!(dep["dst"], f["src"]);
        assert!(t(f, "start_s") >= t(dep, "end_s"), "flow {} started at {} before {} arrived at {}", f["flow_id"], f["start_s"], dep["flow_id"], dep["end_s"]);
    }
}

#[test]
fn a_job_the_run_cuts_short_reports_what_it_did() {
    let r = go(TWO_JOBS, &[("sim.duration_s", "0.005"), ("groups.a.iterations", "50"), ("measure.jobs_baseline", "false")]);
    let jobs = rows(&csv_of(&r, "jobs.csv"));
    assert_eq!(jobs[0]["iterations"], "50");
    let done: u32 = jobs[0]["iterations_done"].parse().unwrap();
    assert!(done >= 1 && done < 50, "{done}");
    assert!(jobs[0]["completion_s"].is_empty() && jobs[0]["slowdown"].is_empty());
    let not_started = rows(&r.flows_csv).iter().filter(|f| f["group"] == "a" && f["start_s"].is_empty()).count();
    assert!(not_started > 0, "the transfers of iterations that never began have no start");
}

// --- placement ----------------------------------------------------------------------------------
#[test]
fn contiguous_and_random_jobs_take_the_hosts_no_list_holds() {
    let fabric = &TWO_JOBS[..TWO_JOBS.find("[groups.a]").unwrap()];
    let text = format!(
        r#"{fabric}
        [measure]
        jobs_baseline = false
        [groups.a]
        pattern = "allreduce_ring"
        hosts = ["h0", "h1", "h2", "h3"]
        size_bytes = 40000
        [groups.b]
        pattern = "allreduce_ring"
        placement = "random"
        job_hosts = 4
        size_bytes = 40000
        [groups.c]
        pattern = "allgather"
        job_hosts = 4
        size_bytes = 40000
        "#
    );
    let place = |seed: u64| {
        let r = go_seeded(&text, &[], seed);
        rows(&csv_of(&r, "jobs.csv")).into_iter().map(|j| j["placed_hosts"].clone()).collect::<Vec<_>>()
    };
    let (one, two) = (place(1), place(2));
    assert_eq!(one[0], "h0 h1 h2 h3");
    assert_eq!(one[2], "h4 h5 h6 h7", "contiguous: the next free hosts");
    let b: Vec<u32> = one[1].split(' ').map(|h| h[1..].parse().unwrap()).collect();
    assert!(b.len() == 4 && b.iter().all(|&h| h >= 8) && b.windows(2).all(|w| w[0] < w[1]), "random among the free hosts, in order: {b:?}");
    assert_eq!(one, place(1), "the same seed, the same hosts");
    assert!(one[1] != two[1] || place(3)[1] != one[1], "another seed, other hosts");
}

// --- bad input names its key --------------------------------------------------------------------
#[test]
fn bad_jobs_are_refused_naming_their_key() {
    let t = TWO_JOBS;
    assert_eq!(invalid_key(t, &[("groups.a.hosts", r#"["h0"]"#)]), "groups.a.hosts");
    assert_eq!(invalid_key(t, &[("groups.a.hosts", r#"["h0", "h99"]"#)]), "groups.a.hosts");
    assert_eq!(invalid_key(t, &[("groups.b.hosts", r#"["h1", "h3", "h5", "h7", "h9", "h11"]"#)]), "groups.b.hosts", "halving-doubling on 6");
    assert_eq!(invalid_key(t, &[("groups.b.hosts", r#"["h1", "h2"]"#)]), "groups.b.hosts", "h2 is job a's");
    assert_eq!(invalid_key(t, &[("groups.a.iterations", "0")]), "groups.a.iterations");
    assert_eq!(invalid_key(t, &[("groups.a.compute_gap_s", "-0.001")]), "groups.a.compute_gap_s");
    assert_eq!(invalid_key(t, &[("groups.a.size_bytes", "4")]), "groups.a.size_bytes");
    let c = |extra: &[(&str, &str)]| {
        let mut v = vec![("groups.c.pattern", "allreduce_ring"), ("groups.c.size_bytes", "1000"), ("groups.b.hosts", r#"["h1", "h3"]"#)];
        v.extend_from_slice(extra);
        invalid_key(t, &v)
    };
    assert_eq!(c(&[("groups.c.job_hosts", "1")]), "groups.c.job_hosts", "a ring of one host");
    assert_eq!(c(&[("groups.c.job_hosts", "7")]), "groups.c.job_hosts", "6 hosts are free");
    assert_eq!(c(&[]), "groups.c.job_hosts", "required without a list");
    assert_eq!(c(&[("groups.c.job_hosts", "2"), ("groups.c.count", "2")]), "groups.c.pattern");
    assert_eq!(invalid_key(t, &[("groups.x.count", "1"), ("groups.x.src", "h0"), ("groups.x.dst", "h1"), ("groups.x.iterations", "2")]), "groups.x.iterations");
}
