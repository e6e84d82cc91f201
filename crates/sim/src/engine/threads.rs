//! A run on several threads: one part of the network per thread, in the windows of a run in
//! parts (`windows.rs`).
//!
//! Rules:
//! - The run is built once, then split ([`Sim::split`]) into one [`Sim`] per part, each run on
//!   its own thread: the first part's is the run built. The parts share the run's ports and
//!   flows, in place, through views of its arenas (`arena.rs`): a part reaches the ports of its
//!   nodes, and the flows whose senders it runs; a flow whose receiver runs in another part is
//!   in that part a shadow (a copy of the flow made at the split, of which that part runs the
//!   receiver's end). Each part has its own copy of the rest of the run, which is small: the
//!   nodes, the routing state, the probes, samplers, FairQ ports and shared buffers, and the
//!   receivers' observations.
//! - A part runs the events of its nodes, from its own queue, and those of the whole run (the
//!   window's opening, the samplers, FairQ's ticks), which every part runs at the same
//!   instants over what it owns. Threads share nothing else but the packets between parts, the
//!   earliest time each part has work next, and a barrier ([`Exchange`]).
//! - The windows are those of a run in parts, computed by every thread from the same numbers,
//!   so every thread runs the same windows. After its events of a window, a thread posts the
//!   packets it sent to each other part (by value, with their telemetry records) and the
//!   earliest of its next event and of those packets; waits at the barrier; then takes the
//!   packets posted to it. The least posted time and the whole run's next event give the next
//!   window. Posts alternate between two sets of slots, so no thread writes a slot another
//!   still reads.
//! - A part changes only what it owns: the ports of its nodes (their queues; in its own copies,
//!   their probes, drops by flow and counts when the window opened), its switches' shared
//!   buffers and FairQ ports, and each flow's end at its nodes (the endpoint's side, that side's
//!   timer, the receiver's observations). When every thread is done, [`Split::join`] makes the
//!   ports and flows whole again, folds every shadow's receiver's end into its flow, and moves
//!   what each part owns of the rest into the first part's run; the results are read from it:
//!   they equal those of the run on one thread, byte for byte.
//! - A sum over flows of several parts (a group's delivered bytes, in the time series) counts
//!   in each part the flows whose receivers it runs; the join adds the parts' sums.
//! - A thread that panics, or a stop asked by the progress callback (on the first thread),
//!   stops every thread at its next barrier.

use super::windows::{next_window, refusal, Partition, PartsStats, Windows};
use super::{ProgressFn, Progress, Sim, World, X_INT, X_PARTS};
use crate::arena::{Arena, Lent};
use crate::event::{Event, EventQueue};
use crate::net::{Network, Port};
use crate::pktref::{InFlight, Slab};
use crate::workload::{Flow, Flows};
use std::sync::Arc;
use dcfair_core::telemetry::Telemetry;
use dcfair_core::time::SimTime;
use dcfair_core::transport::Side;
use std::hint::spin_loop;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The packets one part posts to another at a window's end, with their telemetry records (in
/// a run with telemetry).
#[derive(Default)]
struct Post {
    pkts: Vec<(SimTime, u64, InFlight)>,
    ints: Vec<Telemetry>,
}

/// What the threads of one run share (module rules).
pub struct Exchange {
    parts: usize,
    barrier: SpinBarrier,
    /// By the window's parity, then `from * parts + to`.
    slots: [Vec<Mutex<Post>>; 2],
    /// By the window's parity, then part: the earliest of the part's next event and the
    /// packets it posted (picoseconds; `u64::MAX`: none).
    next: [Vec<AtomicU64>; 2],
    /// By part: the events its queue has run (for the progress the first thread reports).
    events: Vec<AtomicU64>,
    stop: AtomicBool,
}

impl Exchange {
    /// The exchange of a run on `parts` threads.
    pub fn new(parts: usize) -> Exchange {
        let slots = || (0..parts * parts).map(|_| Mutex::new(Post::default())).collect();
        let next = || (0..parts).map(|_| AtomicU64::new(u64::MAX)).collect();
        let events = (0..parts).map(|_| AtomicU64::new(0)).collect();
        Exchange { parts, barrier: SpinBarrier::new(parts), slots: [slots(), slots()], next: [next(), next()], events, stop: AtomicBool::new(false) }
    }

    /// Stops every thread at its next barrier.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// A guard for a thread's run: if the thread panics, the others stop.
    pub fn stop_on_panic(&self) -> impl Drop + '_ {
        struct Guard<'a>(&'a Exchange);
        impl Drop for Guard<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.stop();
                }
            }
        }
        Guard(self)
    }

    /// The events every part has run, as far as the others have posted.
    fn events(&self) -> u64 {
        self.events.iter().map(|n| n.load(Ordering::Relaxed)).sum()
    }

    /// The earliest time any part has work, from the posts of parity `parity`.
    fn earliest(&self, parity: usize) -> SimTime {
        SimTime(self.next[parity].iter().map(|n| n.load(Ordering::Relaxed)).min().unwrap_or(u64::MAX))
    }
}

/// A barrier whose threads spin (yielding now and then) instead of sleeping: a window's wait is
/// microseconds, shorter than a sleeping thread takes to wake. It gives up when `stop` is set.
/// (`sync_replay` times its windows with it.)
pub struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    round: AtomicUsize,
}

impl SpinBarrier {
    /// A barrier of `n` threads.
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier { n, arrived: AtomicUsize::new(0), round: AtomicUsize::new(0) }
    }

    /// Waits for every thread; `false` if `stop` was set instead.
    pub fn wait(&self, stop: &AtomicBool) -> bool {
        let round = self.round.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.round.fetch_add(1, Ordering::Release);
            return !stop.load(Ordering::Acquire);
        }
        let mut spins = 0u32;
        while self.round.load(Ordering::Acquire) == round {
            spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) {
                if stop.load(Ordering::Acquire) {
                    return false;
                }
                std::thread::yield_now();
            }
        }
        !stop.load(Ordering::Acquire)
    }
}

/// A thread's run was stopped: another failed, or the progress callback asked.
#[derive(Debug)]
pub struct Stopped;

impl Sim {
    /// Why this run cannot be split into parts (its events reach across the network at once,
    /// or its tie order is not by origin); `None` when it can.
    pub fn split_refusal(&self) -> Option<&'static str> {
        refusal(&self.w)
    }

    /// This run, built and not yet started, as one run per part of `p`, by part (module
    /// rules): the first is this one. The parts' runs share this run's ports and flows through
    /// views of its arenas (`arena.rs`): a port is its node's part's; a flow is its sender's
    /// part's, and the receiver's part, when another, runs a shadow of it. Each part's queue
    /// holds the events of its nodes and those of the whole run. `Err` says why the run cannot
    /// be split.
    pub fn split(mut self, p: &Partition) -> Result<Split, String> {
        let (mut queues, mut global) = self.pending_by_part(p)?;
        let n = p.parts;
        for (t, tie, ev) in global.take_all() {
            queues.iter_mut().for_each(|q| q.push_tied(t, tie, ev));
        }
        let part_of = |node: u32| p.part[node as usize];
        let port_owner = self.w.net.ports.iter().map(|x| part_of(x.node)).collect();
        let sender: Vec<u32> = self.w.flows.iter().map(|f| part_of(f.ids.src)).collect();
        let receiver: Vec<u32> = self.w.flows.iter().map(|f| part_of(f.ids.dst)).collect();
        let windowed: Vec<bool> = match self.w.series.is_some() {
            true => self.w.flows.iter().map(|f| f.ends.cwnd_bytes().is_some()).collect(),
            false => Vec::new(),
        };
        // views that reach only their part's ports and flows (and their shadows): the parts'
        // events change nothing else of them (module rules)
        let (ports, ports_lent) = unsafe { self.w.net.ports.lend(n, port_owner, |_, _| Vec::new()) };
        let (flows, flows_lent) = unsafe { self.w.flows.lend(n, sender.clone(), |f, x| if receiver[f] != sender[f] { vec![(receiver[f], x.clone())] } else { Vec::new() }) };
        let mut views: Vec<_> = ports.into_iter().zip(flows).zip(queues).collect();
        let others: Vec<Sim> = views.split_off(1).into_iter().map(|((ports, flows), q)| self.copy_for_part(ports, flows, q)).collect();
        let ((ports, flows), q) = views.pop().expect("the first part");
        (self.w.net.ports, self.w.flows, self.q) = (ports, flows, q);
        let mut parts = vec![self];
        parts.extend(others);
        for (k, sim) in parts.iter_mut().enumerate() {
            if let Some(s) = sim.w.series.as_mut() {
                s.for_part(receiver.iter().map(|&r| r == k as u32).collect(), windowed.clone());
            }
        }
        Ok(Split { parts, ports: ports_lent, flows: flows_lent })
    }

    /// Runs part `k` of `p` on this thread, to the end (module rules), this run one of the
    /// parts of [`Sim::split`] and the other parts on the other threads that share `ex`;
    /// `progress` (the first thread's) sees the run's time and every part's events, as far as
    /// they have posted them. `Err(Ok(why))` before anything ran when this run is not a part of
    /// a split in `p.parts` parts for as many threads, `Err(Err(Stopped))` when stopped. Stats count this part's events and crossings.
    pub fn run_part(&mut self, k: usize, p: &Partition, ex: &Exchange, mut progress: Option<ProgressFn<'_>>) -> Result<PartsStats, Result<String, Stopped>> {
        if !self.w.net.ports.is_view() || p.parts != ex.parts {
            ex.stop();
            return Err(Ok(format!("a run in parts runs a part of Sim::split, in {} parts on {} threads", p.parts, ex.parts)));
        }
        let (n, me) = (p.parts, k as u32);
        let mut global = self.q.fork();
        let mut mine = self.q.fork();
        let whole = self.w.net.nodes.len() as u32;
        for (t, tie, ev) in self.q.take_all() {
            match self.origin_of(ev) {
                o if o == whole => global.push_tied(t, tie, ev),
                o if p.part[o as usize] == me => mine.push_tied(t, tie, ev),
                o => panic!("part {me} holds an event of node {o}, of part {}", p.part[o as usize]),
            }
        }
        self.q = mine;
        self.win = Some(Box::new(Windows::of_thread(p, k)));
        self.extras |= X_PARTS;
        let end = self.w.end;
        let mut stats = PartsStats { events: vec![0; n], ..PartsStats::default() };
        let wall = std::time::Instant::now();
        let mut last_report = 0.0f64;
        let mut parity = 0;
        ex.next[parity][k].store(self.q.next_time().map_or(u64::MAX, |t| t.0), Ordering::Relaxed);
        let ran = (|| {
            if !ex.barrier.wait(&ex.stop) {
                return Err(Stopped);
            }
            loop {
                let w0 = ex.earliest(parity).min(global.next_time().unwrap_or(SimTime::MAX));
                if w0 > end {
                    return Ok(());
                }
                let (span, tg) = next_window(w0, global.next_time(), p.lookahead, end);
                if let Some((last, until)) = span {
                    parity ^= 1;
                    self.thread_window(k, last, until, parity, ex, &mut stats)?;
                }
                if let Some(tg) = tg {
                    parity ^= 1;
                    self.thread_window(k, tg, SimTime(tg.0 + 1), parity, ex, &mut stats)?;
                    stats.global_events += self.run_global(&mut global, tg);
                }
                if let Some(report) = progress.as_mut() {
                    let w = wall.elapsed().as_secs_f64();
                    if w - last_report >= 0.2 {
                        last_report = w;
                        let at = Progress { sim_time_s: w0.as_secs_f64(), duration_s: end.as_secs_f64(), events: ex.events() + stats.global_events, wall_time_s: w };
                        if report(&at).is_break() {
                            ex.stop();
                            return Err(Stopped);
                        }
                    }
                }
            }
        })();
        self.win = None;
        self.extras &= !X_PARTS;
        self.events_in_parts = global.events();
        ran.map_err(Err)?;
        if let Some(report) = progress.as_mut() {
            let at = Progress { sim_time_s: end.as_secs_f64(), duration_s: end.as_secs_f64(), events: ex.events() + stats.global_events, wall_time_s: wall.elapsed().as_secs_f64() };
            if let ControlFlow::Break(()) = report(&at) {
                return Err(Err(Stopped));
            }
        }
        Ok(stats)
    }

    /// This part's events up to `last`; then it posts its packets for the other parts (none
    /// arrives before `until`) in the slots of `parity`, waits for every thread, and takes
    /// the packets posted to it.
    fn thread_window(&mut self, k: usize, last: SimTime, until: SimTime, parity: usize, ex: &Exchange, stats: &mut PartsStats) -> Result<(), Stopped> {
        let before = self.q.events();
        self.win.as_deref_mut().expect("windows").until = until;
        self.run_events(last, u64::MAX);
        stats.events[k] += self.q.events() - before;
        ex.events[k].store(self.q.events(), Ordering::Relaxed);
        stats.windows += 1;
        let n = ex.parts;
        let win = self.win.as_deref_mut().expect("windows");
        let mut earliest = self.q.next_time().unwrap_or(SimTime::MAX);
        for to in (0..n).filter(|&to| to != k) {
            let (out, ints) = (&mut win.outbox[to], &mut win.outbox_int[to]);
            stats.crossings += out.len() as u64;
            earliest = out.iter().map(|&(t, _, _)| t).fold(earliest, SimTime::min);
            let mut slot = ex.slots[parity][k * n + to].lock().expect("a slot");
            debug_assert!(slot.pkts.is_empty() && slot.ints.is_empty(), "a slot not yet read");
            std::mem::swap(&mut slot.pkts, out);
            std::mem::swap(&mut slot.ints, ints);
        }
        ex.next[parity][k].store(earliest.0, Ordering::Relaxed);
        if !ex.barrier.wait(&ex.stop) {
            return Err(Stopped);
        }
        let with_int = self.extras & X_INT != 0;
        for from in (0..n).filter(|&from| from != k) {
            let mut slot = ex.slots[parity][from * n + k].lock().expect("a slot");
            let Post { pkts, ints } = &mut *slot;
            let mut records = ints.drain(..);
            for (t, tie, f) in pkts.drain(..) {
                let h = self.slab.put(f);
                if with_int {
                    let rec = records.next().expect("a telemetry record per packet");
                    if self.int.len() <= h as usize {
                        self.int.resize(h as usize + 1, Telemetry::default());
                    }
                    self.int[h as usize] = rec;
                }
                self.q.push_tied(t, tie, Event::Arrive { pkt: h });
            }
        }
        Ok(())
    }

    /// A run of another part of this one, for [`Sim::split`]: with the views `ports` and
    /// `flows` and the queue `q`, and its own copy of the rest of this run's world and of the
    /// engine's state, as this run has them before it starts.
    fn copy_for_part(&self, ports: Arena<Port>, flows: Flows, q: EventQueue) -> Sim {
        let w = &self.w;
        debug_assert!(w.bonds.is_empty() && w.incast.is_none() && w.jobs.is_none() && w.pfc.is_none() && w.timer_coin.is_none(), "refused in parts");
        let world = World {
            net: Network { nodes: w.net.nodes.clone(), ports, laid_out: w.net.laid_out },
            routes: w.routes.clone(),
            route: w.route.clone(),
            flows,
            background: w.background,
            bonds: Vec::new(),
            incast: None,
            jobs: None,
            via: w.via.clone(),
            packet_cores: w.packet_cores.clone(),
            core_rng: w.core_rng.clone(),
            window_start: w.window_start,
            end: w.end,
            measured_rate_bps: w.measured_rate_bps,
            series: w.series.clone(),
            probes: w.probes.clone(),
            port_drops: Default::default(),
            flow_group: w.flow_group.clone(),
            group_names: w.group_names.clone(),
            poisson_plan: w.poisson_plan.clone(),
            timer_coin: None,
            float_clock: w.float_clock,
            by_origin: w.by_origin,
            fairq: w.fairq.clone(),
            pfc: None,
            buffers: w.buffers.clone(),
            track_order: w.track_order,
            trimming: w.trimming,
            telemetry: w.telemetry,
        };
        Sim {
            q,
            w: world,
            obs: self.obs.clone(),
            order: self.order.clone(),
            drops_at_window: self.drops_at_window.clone(),
            slab: Slab::default(),
            int: Vec::new(),
            int_echo: Telemetry::default(),
            qev: Default::default(),
            scratch: Vec::with_capacity(64),
            next_uid: self.next_uid,
            fnow: self.fnow,
            tracks_ties: self.tracks_ties,
            win: None,
            events_in_parts: 0,
            extras: self.extras,
            deep_hints: self.deep_hints,
            #[cfg(feature = "trace")]
            trace: String::new(),
        }
    }
}

/// A run split for its threads ([`Sim::split`]): a run per part, and the ports and flows their
/// views reach, lent from the first.
pub struct Split {
    /// By part; the first is the run that was split.
    parts: Vec<Sim>,
    ports: Arc<Lent<Port>>,
    flows: Arc<Lent<Flow>>,
}

impl Split {
    /// The runs of the parts, once each ran (or not), back into one: the first, its ports and
    /// flows whole again, with what each other part of `p` owns moved into it (module rules):
    /// the receiver's end of every flow whose receiver ran in another part than its sender, the
    /// ports' probes, drops by flow and counts when the window opened, the switches' shared
    /// buffers and FairQ ports, the flows' observations at their receivers, the samples; and
    /// every part's events.
    pub fn join(parts: Vec<Sim>, ports: Arc<Lent<Port>>, flows: Arc<Lent<Flow>>, p: &Partition) -> Sim {
        let mut parts = parts.into_iter();
        let mut first = parts.next().expect("the first part");
        let mut shadows = vec![first.w.flows.unlend()];
        first.w.net.ports.unlend();
        let others: Vec<Sim> = parts
            .map(|mut o| {
                shadows.push(o.w.flows.unlend());
                o.w.net.ports.unlend();
                o
            })
            .collect();
        first.w.net.ports.restore(ports);
        first.w.flows.restore(flows);
        for (f, mut b) in shadows.into_iter().flatten() {
            let a = &mut first.w.flows[f as usize];
            let s = Side::Receiver.index();
            a.ends.adopt(&mut b.ends, Side::Receiver);
            a.timer_at[s] = b.timer_at[s];
            a.deadline_seen[s] = b.deadline_seen[s];
            a.timer_f[s] = b.timer_f[s];
            a.delivered_at_window = b.delivered_at_window;
        }
        for (k, other) in others.into_iter().enumerate() {
            first.adopt_part(other, k + 1, p);
        }
        first
    }

    /// The runs of the parts, as [`Split::join`] takes them.
    pub fn into_parts(self) -> (Vec<Sim>, Arc<Lent<Port>>, Arc<Lent<Flow>>) {
        (self.parts, self.ports, self.flows)
    }
}

impl Sim {
    /// Moves into this run (the first part's, its ports and flows whole again) what part `k`
    /// of `p` owns in `other`, which ran that part on another thread ([`Split::join`]): the
    /// state of its ports that is not in them, its buffers and FairQ ports, its flows'
    /// observations at their receivers, and its samples; adds its counts and events.
    fn adopt_part(&mut self, mut other: Sim, k: usize, p: &Partition) {
        let me = k as u32;
        let ours = |node: u32| p.part[node as usize] == me;
        let w = &mut self.w;
        let o = &mut other.w;
        for (pid, port) in w.net.ports.iter().enumerate() {
            if ours(port.node) {
                if let Some(at) = other.drops_at_window.get(pid) {
                    self.drops_at_window[pid] = *at;
                }
                let probe = port.probe as usize;
                if probe < o.probes.len() {
                    std::mem::swap(&mut w.probes[probe], &mut o.probes[probe]);
                }
            }
        }
        w.port_drops.absorb(std::mem::take(&mut o.port_drops));
        if let (Some(a), Some(b)) = (w.buffers.as_deref_mut(), o.buffers.as_deref_mut()) {
            for (i, sb) in b.sw.iter_mut().enumerate() {
                if ours(b.node[i]) {
                    std::mem::swap(&mut a.sw[i], sb);
                }
            }
        }
        if let (Some(a), Some(b)) = (w.fairq.as_deref_mut(), o.fairq.as_deref_mut()) {
            for (i, fp) in b.core.ports.iter_mut().enumerate() {
                if ours(w.net.ports[b.gids[i] as usize].node) {
                    std::mem::swap(&mut a.core.ports[i], fp);
                }
            }
            a.core.rewrites += b.core.rewrites;
        }
        for (f, flow) in w.flows.iter().enumerate() {
            if ours(flow.ids.dst) {
                std::mem::swap(&mut self.obs[f], &mut other.obs[f]);
                if let Some(order) = other.order.get_mut(f) {
                    std::mem::swap(&mut self.order[f], order);
                }
            }
        }
        if let (Some(a), Some(b)) = (w.series.as_mut(), o.series.as_ref()) {
            let flows = &w.flows;
            let node = |f: u64, side: usize| if side == 0 { flows[f as usize].ids.src } else { flows[f as usize].ids.dst };
            a.adopt(b, |port| ours(w.net.ports[port as usize].node), |f| ours(node(f, 1)), |f| ours(node(f, 0)));
        }
        self.events_in_parts += other.q.events();
    }
}

#[cfg(test)]
mod tests {
    //! In this crate's own tests every access through a part's views is checked against its
    //! owner (`arena.rs`), in release builds too: runs whose global events (the window's
    //! opening, the samplers, FairQ), routing and telemetry read ports and flows, on 2 and 3
    //! threads, give the one-thread run's files. (`tests/runs/parts.rs` runs every discipline,
    //! transport and topology, with the checks of debug builds only.)

    use crate::results::Results;
    use crate::run::{run, run_on_threads};
    use crate::load_scenario;

    /// The files of a run but its wall time and its threads.
    fn files(r: &Results) -> Vec<String> {
        let mut summary: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
        summary.as_object_mut().unwrap().remove("wall_time_s");
        let mut out = vec![summary.to_string(), r.flows_csv.clone(), r.ports_csv.clone()];
        out.extend(r.run_tables().iter().map(|(_, t)| t.to_csv()));
        out.extend(r.optional_tables().iter().filter_map(|(_, t)| t.map(|t| t.to_csv())));
        out
    }

    fn same_on_threads(path: &str, extra: &[(&str, &str)]) {
        let path = format!("{}/../../scenarios/{path}", env!("CARGO_MANIFEST_DIR"));
        let mut over: Vec<(String, String)> = extra.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        over.push(("sim.tie_break".into(), "\"origin\"".into()));
        let sc = load_scenario(&std::fs::read_to_string(&path).unwrap(), &path, &over).unwrap();
        let want = files(&run(&sc, None, None).unwrap());
        for threads in 2..=3 {
            let (r, stats) = run_on_threads(&sc, None, threads).unwrap();
            assert!(stats.crossings > 0 && stats.events.iter().all(|&e| e > 0), "{path} on {threads} threads: {stats:?}");
            assert!(want == files(&r), "{path} on {threads} threads differs from the one-thread run");
        }
    }

    #[test]
    fn every_part_reaches_only_what_it_owns() {
        let sampled = [("measure.ports", "\"all\""), ("measure.sample_interval_s", "0.0005"), ("measure.sample_flows", "true"), ("measure.cwnd", "true")];
        let perm = |extra: &[(&'static str, &'static str)]| [&sampled[..], &[("topology.k", "4"), ("sim.duration_s", "0.002")], extra].concat();
        same_on_threads("scale/permutation.toml", &perm(&[("routing.mode", "\"adaptive\"")]));
        same_on_threads("scale/permutation.toml", &perm(&[("flows.transport", "\"roce\""), ("roce.lossless", "false"), ("roce.cc", "\"hpcc\"")]));
        same_on_threads("papers/fairq/testbed_elephants.toml", &[("sim.duration_s", "0.02"), ("measure.window_s", "0.01")]);
    }
}
