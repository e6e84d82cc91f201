//! What a run in parts would cost on threads, measured by replaying its windows:
//! `sync_replay SCENARIO [KEY=VALUE ...] [--parts N]`.
//!
//! Rules:
//! - The scenario runs in `N` parts on this thread (`Sim::run_in_parts`, tie order by origin),
//!   keeping every window's work (`PartsStats::record`). An event costs `c`: that loop's wall
//!   time over its events (the parts' bookkeeping included).
//! - The replay runs the same windows again with no simulation in them: each part spins `c` per
//!   event it ran in the window and stores the packets it received from the other parts; the
//!   whole run's events after a window are spun by part 0 while the others wait. Parts meet at
//!   a spinning barrier at the end of every window, as a parallel engine's threads would.
//! - It replays on one thread (the parts in turn, no barrier), on `N` threads when the machine
//!   has `N` cores, and on `N` threads with `c = 0`: the synchronisation alone (the median of
//!   [`EMPTY_REPLAYS`] replays).
//! - `critical_s` is what `N` threads would take with free synchronisation: per window, the
//!   busiest part's events, plus the whole run's events, times `c`.
//!
//! Prints one JSON line (`bench/sync.py` reads it); times in seconds, `sync_ns_per_window`
//! from the replay without work.

use dcfair_sim::engine::{Partition, PartsStats, SpinBarrier};
use std::hint::spin_loop;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| usage("a scenario file"));
    let (mut overrides, mut parts) = (Vec::new(), 2usize);
    while let Some(a) = args.next() {
        if a == "--parts" {
            parts = args.next().and_then(|n| n.parse().ok()).filter(|&n| n >= 1).unwrap_or_else(|| usage("--parts takes a count of at least 1"));
        } else if let Some((k, v)) = a.split_once('=') {
            overrides.push((k.to_string(), v.to_string()));
        } else {
            usage(&format!("not KEY=VALUE: {a}"));
        }
    }
    overrides.push(("sim.tie_break".into(), "origin".into()));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail(&format!("{path}: {e}"), 2));
    let sc = dcfair_sim::load_scenario(&text, &path, &overrides).unwrap_or_else(|e| fail(&e.to_string(), e.exit_code()));
    let mut sim = dcfair_sim::assemble::build(&sc, sc.seed).unwrap_or_else(|e| fail(&e.to_string(), e.exit_code()));
    let p = Partition::split(&sim.world().net, parts).unwrap_or_else(|e| fail(&e, 2));
    let t = Instant::now();
    let s = sim.run_in_parts(&p, true).unwrap_or_else(|e| fail(&e, 2));
    let loop_s = t.elapsed().as_secs_f64();
    let events: u64 = s.events.iter().sum::<u64>() + s.global_events;
    let c_ns = loop_s * 1e9 / events.max(1) as f64;
    let cores = dcfair_sim::scenario::Threads::cores();
    let (threads_s, waits) = if parts <= cores { replay(&s, c_ns) } else { (f64::NAN, vec![]) };
    let mut empty: Vec<f64> = (0..EMPTY_REPLAYS).filter(|_| parts <= cores).map(|_| replay(&s, 0.0).0).collect();
    empty.sort_by(f64::total_cmp);
    let empty_s = empty.get(EMPTY_REPLAYS / 2).copied().unwrap_or(f64::NAN);
    let nan_null = |x: f64| if x.is_finite() { serde_json::json!(x) } else { serde_json::Value::Null };
    let out = serde_json::json!({
        "engine_build": dcfair_sim::ENGINE_BUILD, "parts": parts, "cores": cores, "windows": s.windows, "events": events,
        "global_events": s.global_events, "crossings": s.crossings,
        "lookahead_ps": p.lookahead.0, "event_ns": c_ns, "loop_s": loop_s,
        "serial_s": serial(&s, c_ns), "critical_s": critical(&s) as f64 * c_ns * 1e-9,
        "threads_s": nan_null(threads_s), "wait_s": waits,
        "sync_ns_per_window": nan_null(empty_s * 1e9 / s.windows.max(1) as f64),
    });
    println!("{out}");
}

/// Replays without work, for their median: a thread of this machine's is now and then
/// descheduled for milliseconds, which one replay alone would count as synchronisation.
const EMPTY_REPLAYS: usize = 7;

fn usage(why: &str) -> ! {
    fail(&format!("{why}\nusage: sync_replay SCENARIO [KEY=VALUE ...] [--parts N]"), 2)
}

fn fail(why: &str, code: i32) -> ! {
    eprintln!("sync_replay: {why}");
    std::process::exit(code)
}

/// Spins for `ns` nanoseconds.
fn spin(ns: f64) {
    if ns <= 0.0 {
        return;
    }
    let end = Instant::now() + Duration::from_nanos(ns as u64);
    while Instant::now() < end {
        spin_loop();
    }
}

/// The windows of `s`, one by one: (each part's events, each part's received packets, the
/// whole run's events after it).
fn windows(s: &PartsStats) -> impl Iterator<Item = (&[u32], &[u32], u32)> {
    let n = s.events.len();
    s.record.chunks_exact(s.stride()).map(move |w| (&w[..n], &w[n..2 * n], w[2 * n]))
}

/// The busiest part's events of every window, and the whole run's, summed.
fn critical(s: &PartsStats) -> u64 {
    windows(s).map(|(e, _, g)| *e.iter().max().unwrap_or(&0) as u64 + g as u64).sum()
}

/// The replay on one thread: every part's work in turn, no barrier.
fn serial(s: &PartsStats, c_ns: f64) -> f64 {
    let t = Instant::now();
    let mut inbox: Vec<[u64; 6]> = Vec::new();
    for (e, r, g) in windows(s) {
        for (&ek, &rk) in e.iter().zip(r) {
            spin(ek as f64 * c_ns);
            receive(&mut inbox, rk);
        }
        spin(g as f64 * c_ns);
    }
    t.elapsed().as_secs_f64()
}

/// A packet from another part stored at the window's end (a 48-byte event).
fn receive(inbox: &mut Vec<[u64; 6]>, n: u32) {
    inbox.clear();
    inbox.extend((0..n as u64).map(|i| [i; 6]));
    std::hint::black_box(&inbox);
}

/// The replay's barrier never stops.
static NEVER: AtomicBool = AtomicBool::new(false);

/// The replay on one thread per part: its wall time and each thread's time at the barrier.
fn replay(s: &PartsStats, c_ns: f64) -> (f64, Vec<f64>) {
    let n = s.events.len();
    let barrier = SpinBarrier::new(n);
    let t = Instant::now();
    let waits: Vec<f64> = std::thread::scope(|scope| {
        let run = |k: usize| {
            let (barrier, mut waited, mut inbox) = (&barrier, Duration::ZERO, Vec::new());
            move || {
                for (e, r, g) in windows(s) {
                    spin(e[k] as f64 * c_ns);
                    let w = Instant::now();
                    barrier.wait(&NEVER);
                    waited += w.elapsed();
                    receive(&mut inbox, r[k]);
                    if g > 0 {
                        if k == 0 {
                            spin(g as f64 * c_ns);
                        }
                        let w = Instant::now();
                        barrier.wait(&NEVER);
                        waited += w.elapsed();
                    }
                }
                waited.as_secs_f64()
            }
        };
        let handles: Vec<_> = (0..n).map(|k| scope.spawn(run(k))).collect();
        handles.into_iter().map(|h| h.join().expect("a replay thread")).collect()
    });
    (t.elapsed().as_secs_f64(), waits)
}

