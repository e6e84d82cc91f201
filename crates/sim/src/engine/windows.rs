//! A run split into parts, on one thread: the conservative schedule the parallel engine
//! (`threads.rs`) follows, run part after part.
//!
//! Rules:
//! - [`Partition::split`] splits by levels: every host with the switch it hangs off; the
//!   switches nearest the hosts (a fat-tree's edges, a leaf-spine's leaves) in blocks of
//!   consecutive node ids, one block per part; then, level by level upwards, every other switch
//!   with the part most of its neighbours below are in (ties: the part that has the fewest
//!   switches of that level so far, then the lowest). A fat-tree's pods stay whole when the
//!   parts divide them. That is the split of the built-in topologies, whose node ids follow
//!   their structure (`Network::laid_out`). A custom topology, whose ids follow the order the
//!   scenario lists its nodes in, is partitioned as a graph instead (`graph_split.rs`), or by
//!   levels when the graph has fewer groups than parts.
//! - The lookahead is the least delay of a link between two parts: a packet put on such a
//!   link arrives at least that long after the event that sent it. A split with a link of no
//!   delay between parts is refused.
//! - Time advances in windows `[w, w + lookahead)`, `w` the earliest pending event. Each part
//!   has its own event queue, ordered by origin (`sim.tie_break = "origin"`, `event.rs`), and
//!   its own packet slab (and telemetry records), and runs its events of the window alone, one
//!   part after the other. A packet bound for another part leaves its slab and waits, by value,
//!   in that part's outbox until the window ends (it arrives at or after the end: checked); the
//!   other part stores it in its own slab then. A run in parts starts before any packet is
//!   sent. The events of the whole run (the window's opening, the samplers, FairQ's ticks)
//!   have a queue of their own: a window ends at the next of them; every part runs its events
//!   of that instant, then they run (their origin, past every node, orders them last).
//! - So the outputs equal those of the same scenario run whole, byte for byte, exactly when
//!   nothing an event does reaches another part but through a link's delay: the order by
//!   origin does not depend on which part scheduled first, and no part sees another's state
//!   mid-window. Runs whose events reach across the network at once are refused
//!   ([`Sim::run_in_parts`]): an incast's requests, jobs, MPTCP connections, PFC.

use super::{graph_split, Sim, World, X_INT};
use crate::event::{Event, EventQueue};
use crate::pktref::{InFlight, Slab};
use dcfair_core::telemetry::Telemetry;
use crate::net::{Network, NodeKind};
use dcfair_core::time::{SimDuration, SimTime};

/// Which part every node runs in, and the lookahead the cut links give.
#[derive(Clone, Debug)]
pub struct Partition {
    /// The part of every node, by node id.
    pub part: Vec<u32>,
    pub parts: usize,
    /// The least delay of a link between two parts (`u64::MAX`: none is cut).
    pub lookahead: SimDuration,
}

impl Partition {
    /// `net` in `parts` parts (module rules); `Err` names a link of no delay between two parts.
    pub fn split(net: &Network, parts: usize) -> Result<Partition, String> {
        assert!(parts >= 1);
        let levels = || Partition::of(net, parts, by_levels(net, parts));
        if parts == 1 || net.laid_out {
            return levels();
        }
        match graph_split::parts(net, parts).map(|part| Partition::of(net, parts, part)) {
            Some(Ok(graph)) => Ok(graph),
            _ => levels(),
        }
    }

    /// The partition `part` of `net`, with its lookahead; `Err` names a link of no delay between
    /// two parts.
    pub(super) fn of(net: &Network, parts: usize, part: Vec<u32>) -> Result<Partition, String> {
        let mut lookahead = SimDuration(u64::MAX);
        for port in &net.ports {
            if part[port.node as usize] != part[port.peer_node as usize] {
                if port.delay == SimDuration::ZERO {
                    return Err(format!("the link {} has no delay and joins two parts: nothing could run ahead", port.name));
                }
                lookahead = lookahead.min(port.delay);
            }
        }
        Ok(Partition { part, parts, lookahead })
    }

    /// The links between two parts.
    pub fn cut_links(&self, net: &Network) -> usize {
        net.ports.iter().filter(|p| self.part[p.node as usize] != self.part[p.peer_node as usize]).count() / 2
    }
}

/// The part of every node, split by levels (module rules).
pub(super) fn by_levels(net: &Network, parts: usize) -> Vec<u32> {
    let level = net.levels();
    let n = net.nodes.len();
    let is_switch = |i: usize| net.nodes[i].kind == NodeKind::Switch;
    let mut part = vec![u32::MAX; n];
    let first: Vec<usize> = (0..n).filter(|&i| is_switch(i) && level[i] == 1).collect();
    for (j, &s) in first.iter().enumerate() {
        part[s] = (j * parts / first.len()) as u32;
    }
    let neighbours = |i: usize| net.nodes[i].ports.iter().map(move |&p| net.ports[p as usize].peer_node as usize);
    for i in (0..n).filter(|&i| !is_switch(i)) {
        part[i] = neighbours(i).map(|v| part[v]).find(|&p| p != u32::MAX).unwrap_or(0);
    }
    let top = level.iter().copied().filter(|&l| l != u64::MAX).max().unwrap_or(0);
    for l in 2..=top {
        let mut placed = vec![0u64; parts];
        for i in (0..n).filter(|&i| is_switch(i) && level[i] == l) {
            let mut votes = vec![0u64; parts];
            for v in neighbours(i).filter(|&v| level[v] < l) {
                votes[part[v] as usize] += 1;
            }
            let best = (0..parts).max_by_key(|&k| (votes[k], std::cmp::Reverse(placed[k]), std::cmp::Reverse(k))).unwrap_or(0);
            part[i] = best as u32;
            placed[best] += 1;
        }
    }
    for p in part.iter_mut().filter(|p| **p == u32::MAX) {
        *p = 0; // a switch no host reaches
    }
    part
}

/// What a run in parts needs while a part runs: the part of every node, the part running,
/// the packets for each other part (with their telemetry records, in a run with telemetry),
/// the end of the window (no packet for another part may arrive before it), and the slabs and
/// telemetry records of the parts not running.
#[derive(Debug)]
pub(super) struct Windows {
    part: Vec<u32>,
    current: u32,
    pub(super) outbox: Vec<Vec<(SimTime, u64, InFlight)>>,
    pub(super) outbox_int: Vec<Vec<Telemetry>>,
    pub(super) until: SimTime,
    slabs: Vec<Slab>,
    ints: Vec<Vec<Telemetry>>,
}

impl Windows {
    /// The windows of part `k` of `p` run alone, on a thread of its own (`threads.rs`): the
    /// part's slab is the run's own.
    pub(super) fn of_thread(p: &Partition, k: usize) -> Windows {
        Windows { part: p.part.clone(), current: k as u32, outbox: vec![Vec::new(); p.parts], outbox_int: vec![Vec::new(); p.parts], until: SimTime::ZERO, slabs: Vec::new(), ints: Vec::new() }
    }
}

impl Partition {
    /// The parts of `net` for a run on `threads` threads, or why it runs on one: a split
    /// pays only when every thread gets at least one of the switches nearest the hosts (a
    /// dumbbell, whose hosts hang off one switch, runs on one thread).
    pub fn for_threads(net: &Network, threads: usize) -> Result<Partition, String> {
        if threads <= 1 {
            return Err("one thread asked for, or one core".into());
        }
        let level = net.levels();
        let first = (0..net.nodes.len()).filter(|&i| net.nodes[i].kind == NodeKind::Switch && level[i] == 1).count();
        if first < threads {
            return Err(format!("the hosts hang off {first} switch{}, fewer than the {threads} threads: the split would not pay", if first == 1 { "" } else { "es" }));
        }
        Partition::split(net, threads)
    }
}

/// How a run in parts went: what a parallel run of the same parts would synchronise on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartsStats {
    /// Windows run (each an exchange of packets between parts), instants of the whole run's
    /// events included.
    pub windows: u64,
    /// Events each part ran.
    pub events: Vec<u64>,
    /// The events of the busiest part, summed over the windows: the events a parallel run
    /// would wait for, one thread per part, with free synchronisation.
    pub critical_events: u64,
    /// Events of the whole run's own queue (run between windows, by every part at once).
    pub global_events: u64,
    /// Packets sent from one part to another.
    pub crossings: u64,
    /// With `record` ([`Sim::run_in_parts`]): every window's work, [`PartsStats::stride`]
    /// numbers per window: the events each part ran, the packets each part received from the
    /// others when it ended, then the whole run's events that followed it (`bench/sync.py`
    /// replays them on threads). Empty without `record`.
    pub record: Vec<u32>,
}

impl PartsStats {
    /// Numbers per window in [`PartsStats::record`].
    pub fn stride(&self) -> usize {
        2 * self.events.len() + 1
    }
}

/// The next window from `w0`, the earliest pending event of any part (at most `end`), with
/// the whole run's next event at `global`: the span the parts run alone, as its last instant
/// and the end no packet between parts may precede (none when the whole run's events come
/// first), and the instant of the whole run's events that follow it, if they do before `end`.
pub(super) fn next_window(w0: SimTime, global: Option<SimTime>, lookahead: SimDuration, end: SimTime) -> (Option<(SimTime, SimTime)>, Option<SimTime>) {
    let tg = global.unwrap_or(SimTime::MAX);
    let we = SimTime(w0.0.saturating_add(lookahead.0)).min(tg);
    let span = (we > w0).then(|| (SimTime(we.0 - 1).min(end), we));
    (span, (tg == we && tg <= end).then_some(tg))
}

/// What stops a run in parts, if anything: a mechanism whose events reach across the network
/// at once, or the order that is not by origin.
pub(super) fn refusal(w: &World) -> Option<&'static str> {
    if !w.by_origin {
        return Some("a run in parts needs sim.tie_break = \"origin\"");
    }
    if w.incast.is_some() {
        return Some("an incast's requests reach every server at once");
    }
    if w.jobs.is_some() {
        return Some("a job's iterations start its transfers on every host at once");
    }
    if !w.bonds.is_empty() {
        return Some("an MPTCP connection's subflows share their ends' state across hosts");
    }
    if w.pfc.is_some() {
        return Some("PFC's deadlock check reads every port");
    }
    None
}

impl Sim {
    /// The pending events of this run, about to be split into the parts of `p`: the events of
    /// each part's nodes, by part, and those of the whole run. `Err` says why the run cannot be
    /// split (its events left as they were).
    pub(super) fn pending_by_part(&mut self, p: &Partition) -> Result<(Vec<EventQueue>, EventQueue), String> {
        if let Some(why) = refusal(&self.w) {
            return Err(why.into());
        }
        if p.part.len() != self.w.net.nodes.len() {
            return Err(format!("a partition of {} nodes for a network of {}", p.part.len(), self.w.net.nodes.len()));
        }
        let mut global = self.q.fork();
        let mut queues: Vec<EventQueue> = (0..p.parts).map(|_| self.q.fork()).collect();
        let pending = self.q.take_all();
        if pending.iter().any(|(_, _, ev)| matches!(ev, Event::Arrive { .. })) {
            for (t, tie, ev) in pending {
                self.q.push_tied(t, tie, ev);
            }
            return Err("a run in parts starts before any packet is sent".into());
        }
        let whole = self.w.net.nodes.len() as u32;
        for (t, tie, ev) in pending {
            match self.origin_of(ev) {
                o if o == whole => global.push_tied(t, tie, ev),
                o => queues[p.part[o as usize] as usize].push_tied(t, tie, ev),
            }
        }
        Ok((queues, global))
    }

    /// Runs to the end in the parts of `p` (module rules), on this thread; with `record`, the
    /// stats keep every window's work ([`PartsStats::record`]). `Err` says why the run cannot
    /// be split, before anything ran. The packets still in flight at the end go with their
    /// parts' slabs: what is left to read is the run's results, not a run to go on with.
    pub fn run_in_parts(&mut self, p: &Partition, record: bool) -> Result<PartsStats, String> {
        let (mut queues, mut global) = self.pending_by_part(p)?;
        let n = p.parts;
        self.win = Some(Box::new(Windows {
            part: p.part.clone(),
            current: 0,
            outbox: vec![Vec::new(); n],
            outbox_int: vec![Vec::new(); n],
            until: SimTime::ZERO,
            slabs: (0..n).map(|_| Slab::default()).collect(),
            ints: vec![Vec::new(); n],
        }));
        self.extras |= super::X_PARTS;
        let end = self.w.end;
        let mut stats = PartsStats { events: vec![0; n], ..PartsStats::default() };
        let mut kept = Vec::new();
        let mut record = record.then_some(&mut kept);
        loop {
            let Some(w0) = queues.iter().chain([&global]).filter_map(EventQueue::next_time).min() else { break };
            if w0 > end {
                break;
            }
            let (span, tg) = next_window(w0, global.next_time(), p.lookahead, end);
            if let Some((last, until)) = span {
                self.run_parts(&mut queues, last, until, &mut stats, record.as_deref_mut());
            }
            if let Some(tg) = tg {
                // the events of the whole run at `tg` follow every part's events of that instant
                self.run_parts(&mut queues, tg, SimTime(tg.0 + 1), &mut stats, record.as_deref_mut());
                let ran = self.run_global(&mut global, tg);
                if let Some(r) = record.as_deref_mut() {
                    *r.last_mut().expect("a window") = ran as u32;
                }
            }
        }
        self.win = None;
        self.extras &= !super::X_PARTS;
        self.events_in_parts = queues.iter().chain([&global]).map(EventQueue::events).sum();
        stats.global_events = global.events();
        stats.record = kept;
        Ok(stats)
    }

    /// Runs the whole run's events at `tg`, from their queue `global`; returns how many ran.
    pub(super) fn run_global(&mut self, global: &mut EventQueue, tg: SimTime) -> u64 {
        let before = global.events();
        std::mem::swap(&mut self.q, global);
        self.run_events(tg, u64::MAX);
        std::mem::swap(&mut self.q, global);
        global.events() - before
    }

    /// Every part runs its events up to `last`, alone, in turn; then the packets between parts
    /// reach their queues. None of them may arrive before `until`. `record` gets the window's
    /// work ([`PartsStats::record`]).
    fn run_parts(&mut self, queues: &mut [EventQueue], last: SimTime, until: SimTime, stats: &mut PartsStats, mut record: Option<&mut Vec<u32>>) {
        let mut busiest = 0;
        for (k, q) in queues.iter_mut().enumerate() {
            let before = q.events();
            let win = self.win.as_deref_mut().expect("windows");
            (win.current, win.until) = (k as u32, until);
            std::mem::swap(&mut self.q, q);
            std::mem::swap(&mut self.slab, &mut win.slabs[k]);
            std::mem::swap(&mut self.int, &mut win.ints[k]);
            self.run_events(last, u64::MAX);
            let win = self.win.as_deref_mut().expect("windows");
            std::mem::swap(&mut self.int, &mut win.ints[k]);
            std::mem::swap(&mut self.slab, &mut win.slabs[k]);
            std::mem::swap(&mut self.q, q);
            let ran = q.events() - before;
            stats.events[k] += ran;
            busiest = busiest.max(ran);
            if let Some(r) = record.as_deref_mut() {
                r.push(ran as u32);
            }
        }
        stats.windows += 1;
        stats.critical_events += busiest;
        let win = self.win.as_deref_mut().expect("windows");
        for (k, out) in win.outbox.iter_mut().enumerate() {
            stats.crossings += out.len() as u64;
            if let Some(r) = record.as_deref_mut() {
                r.push(out.len() as u32);
            }
            let (slab, ints) = (&mut win.slabs[k], &mut win.ints[k]);
            let mut records = win.outbox_int[k].drain(..);
            for (t, tie, f) in out.drain(..) {
                let h = slab.put(f);
                if let Some(rec) = records.next() {
                    if ints.len() <= h as usize {
                        ints.resize(h as usize + 1, Telemetry::default());
                    }
                    ints[h as usize] = rec;
                }
                queues[k].push_tied(t, tie, Event::Arrive { pkt: h });
            }
        }
        if let Some(r) = record {
            r.push(0);
        }
    }

    /// The arrival at `t` at node `node` of packet `pkt`, just put on a link: in the queue of
    /// the part running, or, out of this part's slab, in the outbox of `node`'s part when it is
    /// another.
    #[inline(never)]
    pub(super) fn arrive_across(&mut self, t: SimTime, pkt: u32, node: u32) {
        let win = self.win.as_deref_mut().expect("a run in parts");
        let to = win.part[node as usize] as usize;
        if to == win.current as usize {
            return self.q.schedule(t, Event::Arrive { pkt });
        }
        assert!(t >= win.until, "a packet for part {to} at {t} inside the window that ends at {}", win.until);
        let tie = self.q.origin_tie();
        win.outbox[to].push((t, tie, self.slab.take(pkt)));
        if self.extras & X_INT != 0 {
            win.outbox_int[to].push(self.int[pkt as usize]);
        }
    }
}
