//! One process serving several switch namespaces (a fabric's switches):
//! `dcfair-switch multi [--seed N] (--netns NAME --config FILE --stats FILE)...`.
//!
//! Rules:
//! - Each `--netns/--config/--stats` triple is one switch, exactly as `dcfair-switch --config
//!   FILE --stats FILE` run inside namespace NAME would be (same `switch.toml`, same
//!   [`Switch`], same stats file); the process enters each namespace (`setns`, the namespace
//!   file `/run/netns/NAME`) only to open that switch's packet sockets, which stay bound to
//!   their interfaces afterwards.
//! - Bad arguments or configuration: exit 2 naming the key (`--config` files are named with
//!   their switch), before any socket opens; an interface or namespace that cannot be opened:
//!   exit 1 naming it. Prints `ready` once every socket of every switch is open.
//! - One loop for all switches, as `cli.rs`'s loop for one: serve every switch's ports up to
//!   now, run their timers, wait for a frame on any socket, a signal or the earliest deadline,
//!   read up to [`BATCH`](crate::command::BATCH) frames per socket, and queue the frames of a round in the order and at
//!   the time the kernel received them (`arrival = "kernel"`; the `arrival` key is not read
//!   here), each after its switch was served up to that time. The wait mode is the first
//!   switch's `wait`.
//! - SIGINT/SIGTERM: every switch writes its stats file (temporary name, then renamed), exit 0.
//!   `cpu_user_s`/`cpu_sys_s` in each file are the whole process's.

use crate::command::{fail, load, read_frames, ready, write_stats, RxLog, MAX_WAIT_NS};
use crate::sock::{cpu_times, enter_netns, wait_round, PacketSocket, Signals};
use crate::switch::{Switch, SLOT};
use crate::wait::Waiter;
use dcfair_core::time::SimTime;
use serde_json::json;
use std::process::exit;

const USAGE: &str = "usage: dcfair-switch multi [--seed N] (--netns NAME --config switch.toml --stats stats.json)...";

struct Unit {
    netns: String,
    stats: String,
    sw: Switch,
    socks: Vec<PacketSocket>,
    rx: RxLog,
}

/// Runs `dcfair-switch multi ...` (`argv`: the program name, then `multi`, then the options).
pub fn run(argv: Vec<String>) -> ! {
    let mut a = argv.into_iter().skip(2);
    let mut seed = None;
    let mut triples: Vec<[Option<String>; 3]> = Vec::new();
    while let Some(k) = a.next() {
        let mut val = |k: &str| a.next().unwrap_or_else(|| fail(2, &format!("{k}: needs a value\n{USAGE}")));
        let slot = match k.as_str() {
            "--seed" => {
                let v = val("--seed");
                seed = Some(v.parse::<u64>().unwrap_or_else(|_| fail(2, &format!("--seed: {v:?} is not a non-negative integer"))));
                continue;
            }
            "--netns" => 0,
            "--config" => 1,
            "--stats" => 2,
            _ => fail(2, &format!("{k}: unknown argument\n{USAGE}")),
        };
        if slot == 0 {
            triples.push([None, None, None]);
        }
        let Some(t) = triples.last_mut() else { fail(2, &format!("{k}: comes after its --netns\n{USAGE}")) };
        if t[slot].is_some() {
            fail(2, &format!("{k}: given twice for one --netns\n{USAGE}"));
        }
        t[slot] = Some(val(&k));
    }
    if triples.is_empty() {
        fail(2, &format!("--netns: at least one switch\n{USAGE}"));
    }
    // configurations and routers first: invalid input exits 2 before any socket opens
    let mut built = Vec::new();
    for t in triples {
        let [Some(netns), Some(config), Some(stats)] = t else { fail(2, &format!("each --netns needs --config and --stats\n{USAGE}")) };
        let (cfg, sw) = load(&config, seed, &format!("{config}: "));
        built.push((netns, stats, cfg, sw));
    }
    let signals = Signals::new().unwrap_or_else(|e| fail(1, &format!("signalfd: {e}")));
    let home = std::fs::File::open("/proc/self/ns/net").unwrap_or_else(|e| fail(1, &format!("/proc/self/ns/net: {e}")));
    let home_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&home));
    let wait_mode = built[0].2.wait;
    let spin_us = built[0].2.spin_us;
    let mut units: Vec<Unit> = Vec::new();
    for (netns, stats, cfg, sw) in built {
        enter_netns(&format!("/run/netns/{netns}")).unwrap_or_else(|e| fail(1, &format!("namespace {netns}: {e}")));
        let socks = cfg
            .port
            .iter()
            .map(|p| PacketSocket::open(&p.iface).unwrap_or_else(|e| fail(1, &format!("namespace {netns}: interface {}: {e}", p.iface))))
            .collect();
        units.push(Unit { netns, stats, sw, socks, rx: RxLog::default() });
    }
    let _ = enter_netns(&home_path);
    let t0 = ready();
    let clock = || SimTime(t0.elapsed().as_nanos() as u64 * 1000);
    // fd index -> (unit, port)
    let owner: Vec<(usize, usize)> = units.iter().enumerate().flat_map(|(u, x)| (0..x.socks.len()).map(move |p| (u, p))).collect();
    let mut fds: Vec<libc::pollfd> = units
        .iter()
        .flat_map(|u| u.socks.iter().map(|s| s.raw()))
        .chain(std::iter::once(signals.raw()))
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
        .collect();
    let nsock = owner.len();
    let (mut wakeups, mut sleeps) = (0u64, 0u64);
    let mut waiter = Waiter::new(wait_mode, (spin_us * 1000.0) as u64, MAX_WAIT_NS);
    let mut pending: Vec<(SimTime, usize, usize, u32, usize)> = Vec::new();
    let mut last_t = SimTime::ZERO;
    loop {
        let now = clock().max(last_t);
        last_t = now;
        let mut sent = false;
        let mut deadline = SimTime(u64::MAX);
        for u in units.iter_mut() {
            let Unit { sw, socks, .. } = u;
            sw.service(now, &mut |i, f| {
                sent = true;
                socks[i].send(f)
            });
            sw.timers(now);
            deadline = deadline.min(sw.next_deadline());
        }
        let now_ns = now.0 / 1000;
        if sent {
            waiter.active(now_ns);
        }
        let timeout = waiter.timeout_ns(now_ns, deadline.0.div_ceil(1000));
        sleeps += (timeout > 0) as u64;
        let stop = wait_round(&mut fds, nsock, timeout).unwrap_or_else(|e| fail(1, &format!("ppoll: {e}")));
        wakeups += 1;
        if stop {
            break;
        }
        for (k, &(ui, pi)) in owner.iter().enumerate() {
            if fds[k].revents == 0 {
                continue;
            }
            let u = &mut units[ui];
            read_frames(&u.socks[pi], &mut u.sw, &clock, last_t, &mut u.rx, |t, arrival, slot, n| {
                waiter.active(t.0 / 1000);
                pending.push((arrival, ui, pi, slot, n));
            });
        }
        if !pending.is_empty() {
            pending.sort_unstable_by_key(|p| p.0);
            for &(t, ui, pi, slot, n) in &pending {
                let t = t.max(last_t);
                last_t = t;
                let Unit { sw, socks, .. } = &mut units[ui];
                sw.service(t, &mut |j, f| socks[j].send(f));
                sw.on_frame(t, pi, slot, n);
            }
            pending.clear();
        }
    }
    let now = clock().max(last_t);
    let (user, sys) = cpu_times();
    let n = units.len();
    for u in &units {
        let extra = json!({
            "io": "AF_PACKET recvmsg/send, one frame per call (no TPACKET ring)",
            "process": format!("multi: one process serving {n} switch namespaces"),
            "netns": u.netns,
            "frame_slot_bytes": SLOT,
            "ignore_outgoing": u.socks.iter().map(|s| s.ignore_outgoing).collect::<Vec<_>>(),
            "rx_errors": u.rx.errors,
            "wakeups": wakeups,
            "sleeps": sleeps,
            "rx_delay": u.rx.delay.to_json(),
            "tx_late": u.sw.tx_late.to_json(),
            "wait": wait_mode.name(),
            "arrival": "kernel",
            "spin_us": spin_us,
            "cpu": serde_json::Value::Null,
            "cpu_user_s": user,
            "cpu_sys_s": sys,
        });
        write_stats(&u.stats, &u.sw.stats(now, extra));
    }
    exit(0)
}
