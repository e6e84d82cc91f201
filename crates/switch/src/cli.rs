//! The switch's command line: `dcfair-switch --config switch.toml --stats stats.json [--seed N]`
//! (the binary, `src/main.rs`) or `python -m dcfair.switch ...` (the Python extension).
//!
//! Rules (the contract of `docs/testbed.md`, section "Switch"):
//! - Bad arguments or configuration: a message naming the key on stderr, exit 2, before any
//!   socket is opened. An interface that cannot be opened (missing, not root): exit 1.
//! - Prints `ready` (one line, flushed) once every socket is open and promiscuous.
//! - Runs a single-threaded loop: serve the ports up to now, run the timers, wait (`ppoll`) for
//!   a frame, a signal or the next deadline; read up to [`BATCH`](crate::command::BATCH) frames per socket per round.
//!   How long `ppoll` may sleep is the `wait` mode's ([`crate::wait`]): `poll` sleeps,
//!   `busy` never does (timeout 0), `hybrid` spins for `spin_us` after a frame and then sleeps.
//!   A spinning round that found nothing yields the CPU (`sched_yield`) to whoever is runnable.
//! - `arrival = "kernel"`: the frames of a round are queued in the order and at the time the
//!   kernel received them (`SO_TIMESTAMPNS`, never later than now, never before the last time
//!   used), each after the ports were served up to that time; `"read"`: at the time they are
//!   read, socket by socket.
//! - With `cpu = N` the process is pinned to CPU N before any socket is opened; a CPU this
//!   machine does not offer is a bad value (exit 2 naming `cpu`).
//! - On SIGINT or SIGTERM: writes the stats file (to a temporary name, then renamed, so a reader
//!   never sees half a file) and exits 0. Frames still queued are counted, not sent.
//! - Time is `Instant` (CLOCK_MONOTONIC) since start, in the core's picoseconds.

use crate::config::Arrival;
use crate::command::{fail, load, read_frames, ready, write_stats, RxLog, MAX_WAIT_NS};
use crate::sock::{cpu_times, pin_to_cpu, wait_round, PacketSocket, Signals};
use crate::switch::SLOT;
use crate::wait::Waiter;
use dcfair_core::time::SimTime;
use serde_json::json;
use std::process::exit;


const USAGE: &str = "usage: dcfair-switch --config switch.toml --stats stats.json [--seed N]\n       dcfair-switch plan --scenario FILE [--seed N] [--set KEY=VALUE ...] [--simulate]";

/// `dcfair-switch plan`: the scenario's fabric as JSON on stdout ([`crate::fabric::plan`]);
/// invalid input exits 2 naming the key.
fn plan(argv: Vec<String>) -> ! {
    let mut a = argv.into_iter().skip(2);
    let (mut scenario, mut seed, mut set, mut simulate) = (None, None, Vec::new(), false);
    while let Some(k) = a.next() {
        let mut val = |k: &str| a.next().unwrap_or_else(|| fail(2, &format!("{k}: needs a value\n{USAGE}")));
        match k.as_str() {
            "--scenario" => scenario = Some(val("--scenario")),
            "--seed" => {
                let v = val("--seed");
                seed = Some(v.parse::<u64>().unwrap_or_else(|_| fail(2, &format!("--seed: {v:?} is not a non-negative integer"))));
            }
            "--set" => set.push(val("--set")),
            "--simulate" => simulate = true,
            _ => fail(2, &format!("{k}: unknown argument\n{USAGE}")),
        }
    }
    let scenario = scenario.unwrap_or_else(|| fail(2, &format!("--scenario: required\n{USAGE}")));
    match crate::fabric::plan(&scenario, &set, seed, simulate) {
        Ok(v) => {
            println!("{}", serde_json::to_string(&v).expect("plan serializes"));
            exit(0)
        }
        Err(dcfair_sim::Error::Invalid { key, reason }) => fail(2, &format!("invalid input: {key}: {reason}")),
        Err(e) => fail(1, &format!("{e}")),
    }
}

struct Args {
    config: String,
    stats: String,
    seed: Option<u64>,
}

fn args(argv: Vec<String>) -> Args {
    let mut a = argv.into_iter().skip(1);
    let (mut config, mut stats, mut seed) = (None, None, None);
    while let Some(k) = a.next() {
        let mut val = |k: &str| a.next().unwrap_or_else(|| fail(2, &format!("{k}: needs a value\n{USAGE}")));
        match k.as_str() {
            "--config" => config = Some(val("--config")),
            "--stats" => stats = Some(val("--stats")),
            "--seed" => {
                let v = val("--seed");
                seed = Some(v.parse::<u64>().unwrap_or_else(|_| fail(2, &format!("--seed: {v:?} is not a non-negative integer"))));
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                exit(0)
            }
            _ => fail(2, &format!("{k}: unknown argument\n{USAGE}")),
        }
    }
    Args {
        config: config.unwrap_or_else(|| fail(2, &format!("--config: required\n{USAGE}"))),
        stats: stats.unwrap_or_else(|| fail(2, &format!("--stats: required\n{USAGE}"))),
        seed,
    }
}

/// Runs the switch with the command line `argv` (program name first) and ends the process with
/// its exit status: the `dcfair-switch` binary, and `python -m dcfair.switch` (the same switch
/// inside the Python extension, so that a wheel carries it).
pub fn run(argv: Vec<String>) -> ! {
    if argv.get(1).map(String::as_str) == Some("plan") {
        plan(argv)
    }
    if argv.get(1).map(String::as_str) == Some("multi") {
        crate::multi::run(argv)
    }
    let a = args(argv);
    let (cfg, mut sw) = load(&a.config, a.seed, "");
    if let Some(c) = cfg.cpu {
        if let Err(e) = pin_to_cpu(c) {
            fail(2, &format!("invalid input: cpu: cannot run on CPU {c} ({e}); this machine has {} online", std::thread::available_parallelism().map_or(0, |n| n.get())));
        }
    }
    let signals = Signals::new().unwrap_or_else(|e| fail(1, &format!("signalfd: {e}")));
    let socks: Vec<PacketSocket> = cfg
        .port
        .iter()
        .map(|p| PacketSocket::open(&p.iface).unwrap_or_else(|e| fail(1, &format!("interface {}: {e}", p.iface))))
        .collect();
    let t0 = ready();
    let clock = || SimTime(t0.elapsed().as_nanos() as u64 * 1000);
    let mut fds: Vec<libc::pollfd> = socks
        .iter()
        .map(|s| s.raw())
        .chain(std::iter::once(signals.raw()))
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
        .collect();
    let nsock = socks.len();
    let mut wakeups = 0u64;
    let mut sleeps = 0u64;
    let mut rx = RxLog::default();
    let kernel_arrival = cfg.arrival == Arrival::Kernel;
    let mut waiter = Waiter::new(cfg.wait, (cfg.spin_us * 1000.0) as u64, MAX_WAIT_NS);
    // frames of one round with their times: arrival (`kernel`) or read (`read`) (reused)
    let mut pending: Vec<(SimTime, usize, u32, usize)> = Vec::new();
    let mut last_t = SimTime::ZERO;
    loop {
        let now = clock().max(last_t);
        last_t = now;
        let mut sent = false;
        sw.service(now, &mut |i, f| {
            sent = true;
            socks[i].send(f)
        });
        sw.timers(now);
        let now_ns = now.0 / 1000;
        if sent {
            waiter.active(now_ns);
        }
        let deadline = sw.next_deadline();
        let timeout = waiter.timeout_ns(now_ns, deadline.0.div_ceil(1000));
        sleeps += (timeout > 0) as u64;
        let stop = wait_round(&mut fds, nsock, timeout).unwrap_or_else(|e| fail(1, &format!("ppoll: {e}")));
        wakeups += 1;
        if stop {
            break;
        }
        for i in 0..nsock {
            if fds[i].revents == 0 {
                continue;
            }
            read_frames(&socks[i], &mut sw, &clock, last_t, &mut rx, |t, arrival, slot, n| {
                waiter.active(t.0 / 1000);
                pending.push((if kernel_arrival { arrival } else { t }, i, slot, n));
            });
        }
        if kernel_arrival {
            // replay the round in arrival order: the ports serve up to each frame's arrival
            // before it is queued, so frames that piled up while the loop was not running do
            // not reach the queue all at once (the time never goes back: clamped to the last)
            pending.sort_unstable_by_key(|p| p.0);
        }
        for &(t, i, slot, n) in &pending {
            let t = t.max(last_t);
            last_t = t;
            if kernel_arrival {
                sw.service(t, &mut |j, f| socks[j].send(f));
            }
            sw.on_frame(t, i, slot, n);
        }
        pending.clear();
    }
    let now = clock().max(last_t);
    let extra = json!({
        "io": "AF_PACKET recvmsg/send, one frame per call (no TPACKET ring)",
        "frame_slot_bytes": SLOT,
        "ignore_outgoing": socks.iter().map(|s| s.ignore_outgoing).collect::<Vec<_>>(),
        "rx_errors": rx.errors,
        "wakeups": wakeups,
        "sleeps": sleeps,
        "rx_delay": rx.delay.to_json(),
        "tx_late": sw.tx_late.to_json(),
        "wait": cfg.wait.name(),
        "arrival": if kernel_arrival { "kernel" } else { "read" },
        "spin_us": cfg.spin_us,
        "cpu": cfg.cpu,
        "cpu_user_s": cpu_times().0,
        "cpu_sys_s": cpu_times().1,
    });
    write_stats(&a.stats, &sw.stats(now, extra));
    exit(0)
}
