//! What the switch's two commands (`cli.rs`: one switch; `multi.rs`: several) share: how they
//! end on an error, how a switch is built from its `switch.toml`, how a socket's frames are
//! read, and how the stats file is written.
//!
//! Rules (`docs/testbed.md`, "Switch"): an error is one line on stderr and the exit status, 2
//! for bad input (naming the key), 1 for a system failure; a file that cannot be read or does
//! not validate, and a `[fabric]` the simulator refuses, are bad input, found before any
//! socket is opened.
//! - A round reads at most [`BATCH`] frames from a socket before the others get a turn. A
//!   frame's arrival is the kernel's receive time (`SO_TIMESTAMPNS`) on the switch's clock,
//!   never later than when it was read; without a timestamp, when it was read.
//! - The stats file is written to a temporary name, then renamed, so a reader never sees half
//!   of one.

use crate::config::SwitchConfig;
use crate::latency::Histogram;
use crate::sock::{realtime_ns, PacketSocket};
use crate::switch::Switch;
use dcfair_core::time::SimTime;
use serde_json::Value;
use std::process::exit;

/// Frames read from one socket before the others get a turn.
pub const BATCH: usize = 64;
/// Longest wait when nothing is due (ns): bounds how stale the time series can get.
pub const MAX_WAIT_NS: u64 = 100_000_000;

/// What reading a switch's sockets recorded: each frame's input delay (the kernel's receive
/// time to the read) and the reads that failed.
#[derive(Debug, Default)]
pub struct RxLog {
    pub delay: Histogram,
    pub errors: u64,
}

/// Ends the process with `code` after one line on stderr.
pub fn fail(code: i32, msg: &str) -> ! {
    eprintln!("dcfair-switch: {msg}");
    exit(code)
}

/// The configuration in file `path` and the switch it describes, seeded by `seed`, else the
/// file's `seed`, else 1; with `[fabric]`, routed by the simulator's code. `label` goes before
/// the key of an error (`""`, or the file's name when one process loads several).
pub fn load(path: &str, seed: Option<u64>, label: &str) -> (SwitchConfig, Switch) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(2, &format!("--config: cannot read {path}: {e}")));
    let cfg = SwitchConfig::from_toml(&text).unwrap_or_else(|e| fail(2, &format!("invalid input: {label}{}: {}", e.key, e.reason)));
    let seed = seed.or(cfg.seed).unwrap_or(1);
    let mut sw = Switch::new(&cfg, seed);
    if let Some(fc) = &cfg.fabric {
        let links: Vec<Option<u16>> = cfg.port.iter().map(|p| p.link).collect();
        match crate::fabric::Router::new(fc, &links, seed) {
            Ok(r) => sw.fabric = Some(r),
            Err(dcfair_sim::Error::Invalid { key, reason }) => fail(2, &format!("invalid input: {label}{key}: {reason}")),
            Err(e) => fail(1, &format!("{label}fabric: {e}")),
        }
    }
    (cfg, sw)
}

/// Reads up to [`BATCH`] frames from `sock` into slots of `sw`'s slab and hands each to `got`
/// as (read time, arrival time, slot, length); `clock` is the switch's clock, `last_t` the last
/// time it used (a read is never before it).
pub fn read_frames(
    sock: &PacketSocket,
    sw: &mut Switch,
    clock: &dyn Fn() -> SimTime,
    last_t: SimTime,
    log: &mut RxLog,
    mut got: impl FnMut(SimTime, SimTime, u32, usize),
) {
    for _ in 0..BATCH {
        let slot = sw.slab.alloc();
        match sock.recv(sw.slab.slot_mut(slot)) {
            Ok(Some((n, ts))) => {
                let t = clock().max(last_t);
                let mut arrival = t;
                if let Some(ts) = ts {
                    let late_ns = realtime_ns() - ts;
                    log.delay.record(late_ns);
                    arrival = SimTime(t.0.saturating_sub(late_ns.max(0) as u64 * 1000));
                }
                got(t, arrival, slot, n);
            }
            Ok(None) => {
                sw.slab.release(slot);
                break;
            }
            Err(_) => {
                log.errors += 1;
                sw.slab.release(slot);
                break;
            }
        }
    }
}

/// Once every socket is open: asks for tight timers, prints `ready` (one line, flushed) and
/// returns the start of the switch's clock.
pub fn ready() -> std::time::Instant {
    use std::io::Write;
    crate::sock::tight_timers();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    std::time::Instant::now()
}

/// Writes the stats document `doc` to `path` (a temporary name, then renamed); exit 1 if it cannot.
pub fn write_stats(path: &str, doc: &Value) {
    let tmp = format!("{path}.tmp");
    let body = serde_json::to_string_pretty(doc).expect("stats serialize");
    if let Err(e) = std::fs::write(&tmp, body).and_then(|_| std::fs::rename(&tmp, path)) {
        fail(1, &format!("--stats: cannot write {path}: {e}"));
    }
}
