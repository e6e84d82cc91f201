//! Port probes: per-packet observations at chosen ports (`measure.drop_runs_ports`,
//! `[measure.trace]`). Off by default.
//!
//! A probe sits at one output port and sees every packet the port's discipline decides on:
//! each arrival (offered to the discipline), its fate (stored, or dropped with a reason), every
//! packet dropped later (pushed out, or dropped at dequeue), and every dequeue (the packet
//! starts serialization). Packets are attributed to the *input port* they came through, named
//! by the previous hop's output port (`"h1->e0_0"`, `"a0_0->e0_0"`); at a host's own NIC every
//! packet comes from the host, named by the host (`"h0"`).
//!
//! Consecutive-drop runs (`drop_runs.csv`), the TCP Outcast paper's port blackout (figures 11,
//! 14 and 16):
//! - **by input**: the packets one input port sends to the probed port form a sequence, in the
//!   order the discipline decides on them. A run is a maximal stretch of that sequence whose
//!   packets were all dropped; it ends at the next packet of that input the port accepts. Its
//!   length is the number of drops.
//! - **by group**: the same per *flow* (the sequence of one flow's packets at the port, data and
//!   ACKs alike), and the runs of all the flows of a group counted together; `flows` says over
//!   how many flows, so `episodes / flows` is the per-flow mean the paper plots for its twelve
//!   6-hop flows.
//! - A drop after acceptance (SFQ/DRR push-out, CoDel at dequeue) counts as a drop at the
//!   moment it happens; the acceptance of that packet had already ended the run before it.
//!   For disciplines that decide only on arrival (DropTail, RED, blackout) every packet's fate
//!   is its arrival decision and the runs are exact.
//! - A run still open when the simulation ends is counted with the length it has.
//! - State is one counter per input and per flow; histograms grow only when a run longer than
//!   any before ends (runs of 256 drops or more go to a map). Nothing is allocated per packet.
//! - `drop_runs.csv` has one row per run length that occurred, per key; a key that sent packets
//!   but lost none has a single row (run length 1, no episode), so that it still shows.
//!
//! Trace (`trace.csv`): one row per arrival, enqueue, drop and dequeue at one port inside
//! `[start_s, end_s]` (both ends included), with the queue length after the event (for
//! `arrive`: what the packet found). Rows are held in memory, about 44 bytes each, up to
//! `max_rows` (default 1,000,000); past that the trace stops, the summary says
//! `trace_truncated: true` with the time it stopped, and `dcfair run` warns.
//!
//! Rules:
//! - With no probe, a port pays one comparison per packet (`Port::probe == NO_PROBE`).
//! - The engine owns the probes (`Sim::probes`) and hands them the queue calls of their ports;
//!   this file imports no engine: [`attach`] builds the probes on the network, and the tables
//!   are rendered from the probes and the flows' groups.
//! - Probes only observe: they never change a decision, an event or a random draw, so every
//!   other result is identical with or without them (tested).

use crate::columns::{CatBuilder, Column, Table};
use crate::net::{Network, NodeKind};
use crate::pktref::{PktRef, Slab};
use crate::scenario::{Scenario, TraceConfig};
use crate::error::Error;
use dcfair_core::packet::Packet;
use dcfair_core::qdisc::{DropReason, Dropped, QPacket, Qdisc, QdiscEvents, Queue};
use dcfair_core::time::SimTime;

// ---------------------------------------------------------------------------------------------
// Consecutive-drop runs
// ---------------------------------------------------------------------------------------------

/// Run lengths below this are counted in an array, longer ones in a map (a flow starved for
/// a million packets must not cost a million counters, or a million rows).
const DENSE_RUNS: usize = 256;

/// Histogram of run lengths: runs of exactly `n` drops.
#[derive(Clone, Debug, Default, PartialEq)]
struct Hist {
    /// `short[n]` for `n < DENSE_RUNS` (`short[0]` unused); grows to the longest short run.
    short: Vec<u64>,
    long: std::collections::BTreeMap<u32, u64>,
}

impl Hist {
    #[inline]
    fn add(&mut self, len: u32) {
        let n = len as usize;
        if n >= DENSE_RUNS {
            *self.long.entry(len).or_insert(0) += 1;
            return;
        }
        if n >= self.short.len() {
            self.short.resize(n + 1, 0);
        }
        self.short[n] += 1;
    }

    /// `(run length, runs)` for every length that occurred, shortest first.
    fn lengths(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let short = self.short.iter().enumerate().filter(|(_, &e)| e > 0).map(|(n, &e)| (n as u64, e));
        short.chain(self.long.iter().map(|(&n, &e)| (n as u64, e)))
    }
}

/// Run counters of one probed port. Keys are dense codes: inputs by their probe code, flows by
/// flow id, groups by group index.
#[derive(Clone, Debug)]
pub struct DropRuns {
    flows: usize,
    /// Drops so far in the open run of each input / each flow.
    input_run: Vec<u32>,
    flow_run: Vec<u32>,
    input_hist: Vec<Hist>,
    group_hist: Vec<Hist>,
    /// Which flows were seen through which input (bit `input * flows + flow`) and at all.
    input_flow_seen: Vec<u64>,
    flow_seen: Vec<bool>,
    input_arrivals: Vec<u64>,
}

impl DropRuns {
    pub fn new(inputs: usize, flows: usize, groups: usize) -> DropRuns {
        DropRuns {
            flows,
            input_run: vec![0; inputs],
            flow_run: vec![0; flows],
            input_hist: vec![Hist::default(); inputs],
            group_hist: vec![Hist::default(); groups],
            input_flow_seen: vec![0; (inputs * flows).div_ceil(64)],
            flow_seen: vec![false; flows],
            input_arrivals: vec![0; inputs],
        }
    }

    /// A packet of `flow` arrived through `input` (before its fate is known).
    #[inline]
    pub fn arrived(&mut self, input: u32, flow: u32) {
        let bit = input as usize * self.flows + flow as usize;
        self.input_flow_seen[bit / 64] |= 1 << (bit % 64);
        self.flow_seen[flow as usize] = true;
        self.input_arrivals[input as usize] += 1;
    }

    /// A packet of `flow` that came through `input` was dropped.
    #[inline]
    pub fn dropped(&mut self, input: u32, flow: u32) {
        self.input_run[input as usize] += 1;
        self.flow_run[flow as usize] += 1;
    }

    /// A packet of `flow` (group `group`) that came through `input` was accepted: it ends the
    /// open runs of its input and of its flow.
    #[inline]
    pub fn accepted(&mut self, input: u32, flow: u32, group: u16) {
        let r = &mut self.input_run[input as usize];
        if *r > 0 {
            self.input_hist[input as usize].add(*r);
            *r = 0;
        }
        let r = &mut self.flow_run[flow as usize];
        if *r > 0 {
            self.group_hist[group as usize].add(*r);
            *r = 0;
        }
    }

    /// Counts the runs still open (the end of the simulation ends them).
    pub fn close(&mut self, flow_group: &[u16]) {
        for (i, r) in self.input_run.iter_mut().enumerate() {
            if *r > 0 {
                self.input_hist[i].add(*r);
                *r = 0;
            }
        }
        for (f, r) in self.flow_run.iter_mut().enumerate() {
            if *r > 0 {
                self.group_hist[flow_group[f] as usize].add(*r);
                *r = 0;
            }
        }
    }

    fn input_flows(&self, input: usize) -> u64 {
        (0..self.flows)
            .filter(|&f| {
                let bit = input * self.flows + f;
                self.input_flow_seen[bit / 64] >> (bit % 64) & 1 == 1
            })
            .count() as u64
    }
}

// ---------------------------------------------------------------------------------------------
// Trace
// ---------------------------------------------------------------------------------------------

/// The `event` levels of `trace.csv`, in code order.
pub const TRACE_EVENTS: [&str; 4] = ["arrive", "enqueue", "drop", "dequeue"];
const ARRIVE: u8 = 0;
const ENQUEUE: u8 = 1;
const DROP: u8 = 2;
const DEQUEUE: u8 = 3;
const NO_REASON: u8 = u8::MAX;

/// The rows of a port's trace, column by column (compact; widened when rendered).
#[derive(Clone, Debug, Default)]
pub struct Trace {
    start: SimTime,
    end: SimTime,
    max_rows: usize,
    /// When the trace stopped at `max_rows`.
    pub truncated_at: Option<SimTime>,
    time_s: Vec<f64>,
    event: Vec<u8>,
    reason: Vec<u8>,
    input: Vec<u32>,
    flow: Vec<u32>,
    group: Vec<u16>,
    seq: Vec<u64>,
    size: Vec<u32>,
    queue_pkts: Vec<u32>,
    queue_bytes: Vec<u64>,
}

impl Trace {
    fn new(cfg: &TraceConfig, duration_s: f64) -> Trace {
        Trace {
            start: SimTime::from_secs_f64(cfg.start_s),
            end: SimTime::from_secs_f64(cfg.end_s.unwrap_or(duration_s).min(duration_s)),
            max_rows: cfg.max_rows as usize,
            ..Default::default()
        }
    }

    /// Is `now` traced? Stops the trace (once) when it is full.
    #[inline]
    fn on(&mut self, now: SimTime) -> bool {
        if now < self.start || now > self.end || self.truncated_at.is_some() {
            return false;
        }
        if self.time_s.len() >= self.max_rows {
            self.truncated_at = Some(now);
            return false;
        }
        true
    }

    pub fn rows(&self) -> usize {
        self.time_s.len()
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn row<Q: Qdisc>(&mut self, now: SimTime, event: u8, reason: u8, input: u32, pkt: Head, group: u16, q: &Queue<Q>) {
        if !self.on(now) {
            return;
        }
        self.time_s.push(now.as_secs_f64());
        self.event.push(event);
        self.reason.push(reason);
        self.input.push(input);
        self.flow.push(pkt.flow);
        self.group.push(group);
        self.seq.push(pkt.seq);
        self.size.push(pkt.size);
        self.queue_pkts.push(q.len_pkts() as u32);
        self.queue_bytes.push(q.len_bytes());
    }
}

/// The fields of a packet a trace row shows.
#[derive(Clone, Copy, Debug)]
struct Head {
    flow: u32,
    seq: u64,
    size: u32,
}

impl Head {
    #[inline]
    fn of(p: &Packet) -> Head {
        Head { flow: p.flow, seq: p.seq, size: p.size }
    }
}

// ---------------------------------------------------------------------------------------------
// The probe
// ---------------------------------------------------------------------------------------------

/// What one port observes.
#[derive(Clone, Debug)]
pub struct Probe {
    /// Global id and name of the probed port.
    pub port: u32,
    pub name: String,
    /// Input names by code; codes by the local index of the link a packet came in on
    /// (`ingress`). A host's port has one input, code 0.
    inputs: Vec<String>,
    host: bool,
    pub runs: Option<DropRuns>,
    pub trace: Option<Trace>,
}

impl Probe {
    fn new(net: &Network, port: u32) -> Probe {
        let p = &net.ports[port as usize];
        let node = &net.nodes[p.node as usize];
        let host = node.kind == NodeKind::Host;
        let inputs = if host {
            vec![node.name.clone()]
        } else {
            // The port at the far end of each of the node's links: what feeds the node there.
            node.ports
                .iter()
                .map(|&out| {
                    let o = &net.ports[out as usize];
                    let feeder = net.nodes[o.peer_node as usize].ports[o.peer_port as usize];
                    net.ports[feeder as usize].name.clone()
                })
                .collect()
        };
        Probe { port, name: p.name.clone(), inputs, host, runs: None, trace: None }
    }

    #[inline]
    fn input(&self, ingress: u16) -> u32 {
        if self.host {
            0
        } else {
            ingress as u32
        }
    }

    /// Offers `pkt` to `q` (the probed port's queue) and records what happens. Kept out of
    /// line (and cold) so that the engine's path for the ports without a probe stays as it was.
    #[cold]
    #[inline(never)]
    pub(crate) fn offer<Q: Qdisc<Pkt = PktRef>>(&mut self, now: SimTime, pkt: PktRef, q: &mut Queue<Q>, ev: &mut QdiscEvents<PktRef>, flow_group: &[u16], slab: &Slab) {
        let input = self.input(pkt.ingress());
        let p = slab.pkt(pkt.handle);
        let (head, group) = (Head::of(p), flow_group[p.flow as usize]);
        if let Some(r) = &mut self.runs {
            r.arrived(input, head.flow);
        }
        if let Some(t) = &mut self.trace {
            t.row(now, ARRIVE, NO_REASON, input, head, group, q);
        }
        q.enqueue(pkt, now, ev);
        let refused = self.drops(now, &ev.dropped, q, flow_group, slab);
        if !refused {
            if let Some(r) = &mut self.runs {
                r.accepted(input, head.flow, group);
            }
            if let Some(t) = &mut self.trace {
                t.row(now, ENQUEUE, NO_REASON, input, head, group, q);
            }
        }
    }

    /// Records the drops of the last queue call; returns whether the offered packet was refused.
    #[inline]
    fn drops<Q: Qdisc<Pkt = PktRef>>(&mut self, now: SimTime, dropped: &[Dropped<PktRef>], q: &Queue<Q>, flow_group: &[u16], slab: &Slab) -> bool {
        let mut refused = false;
        for d in dropped {
            refused |= !d.queued;
            let input = self.input(d.pkt.ingress());
            let p = slab.pkt(d.pkt.handle);
            if let Some(r) = &mut self.runs {
                r.dropped(input, p.flow);
            }
            if let Some(t) = &mut self.trace {
                t.row(now, DROP, d.reason as u8, input, Head::of(p), flow_group[p.flow as usize], q);
            }
        }
        refused
    }

    /// Records a dequeue call of the probed port: the packets it dropped (`dropped`, as the
    /// call reported them), then the one it returned (if any).
    #[cold]
    #[inline(never)]
    pub(crate) fn dequeued<Q: Qdisc<Pkt = PktRef>>(&mut self, now: SimTime, out: Option<&PktRef>, q: &Queue<Q>, dropped: &[Dropped<PktRef>], flow_group: &[u16], slab: &Slab) {
        self.drops(now, dropped, q, flow_group, slab);
        if let Some(r) = out {
            let input = self.input(r.ingress());
            let p = slab.pkt(r.handle);
            if let Some(t) = &mut self.trace {
                t.row(now, DEQUEUE, NO_REASON, input, Head::of(p), flow_group[p.flow as usize], q);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Attaching probes and rendering their tables
// ---------------------------------------------------------------------------------------------

/// The port id of `name`, or invalid input naming `key`.
fn port_named(net: &Network, key: &str, name: &str) -> Result<u32, Error> {
    net.ports.iter().position(|p| p.name == name).map(|i| i as u32).ok_or_else(|| {
        let mut known: Vec<&str> = net.ports.iter().map(|p| p.name.as_str()).collect();
        known.sort();
        let hint = known.iter().take(6).cloned().collect::<Vec<_>>().join(", ");
        Error::invalid(key, format!("no port named {name:?} (ports look like {hint}, ...)"))
    })
}

/// The probes the scenario asks for on `net`, for `flows` flows in `groups` groups; sets each
/// probed port's `Port::probe` to its probe's index. Invalid input if a port name is unknown.
pub fn attach(sc: &Scenario, net: &mut Network, flows: usize, groups: usize) -> Result<Vec<Probe>, Error> {
    let mut want: Vec<(u32, bool, Option<&TraceConfig>)> = Vec::new();
    for name in sc.measure.drop_runs_ports.iter().flatten() {
        want.push((port_named(net, "measure.drop_runs_ports", name)?, true, None));
    }
    if let Some(t) = &sc.measure.trace {
        let p = port_named(net, "measure.trace.port", &t.port)?;
        match want.iter_mut().find(|w| w.0 == p) {
            Some(w) => w.2 = Some(t),
            None => want.push((p, false, Some(t))),
        }
    }
    let mut probes = Vec::new();
    for (port, runs, trace) in want {
        let mut probe = Probe::new(net, port);
        if runs {
            probe.runs = Some(DropRuns::new(probe.inputs.len(), flows, groups));
        }
        probe.trace = trace.map(|t| Trace::new(t, sc.sim.duration_s));
        net.ports[port as usize].probe = probes.len() as u32;
        probes.push(probe);
    }
    Ok(probes)
}

/// `drop_runs.csv` of the probes with drop runs, or `None` if there are none, for flows in
/// groups `flow_group` (by flow id) named `group_names`. Closes the runs still open.
pub fn drop_runs_table(probes: &mut [Probe], flow_group: &[u16], group_names: &[String]) -> Option<Table> {
    let mut cols = RunCols::default();
    let mut any = false;
    for p in probes {
        let Some(r) = &mut p.runs else { continue };
        any = true;
        r.close(flow_group);
        for (i, name) in p.inputs.iter().enumerate() {
            if r.input_arrivals[i] > 0 {
                cols.key(&p.name, "input", name, r.input_flows(i), &r.input_hist[i]);
            }
        }
        for (g, name) in group_names.iter().enumerate() {
            let flows = (0..flow_group.len()).filter(|&f| flow_group[f] as usize == g && r.flow_seen[f]).count() as u64;
            if flows > 0 {
                cols.key(&p.name, "group", name, flows, &r.group_hist[g]);
            }
        }
    }
    any.then(|| cols.finish())
}

#[derive(Default)]
struct RunCols {
    port: CatBuilder,
    by: CatBuilder,
    key: CatBuilder,
    flows: Vec<u64>,
    run_length: Vec<u64>,
    episodes: Vec<u64>,
    share: Vec<f64>,
}

impl RunCols {
    /// One row per run length that occurred; a key without drops gets one row, run length 1
    /// and no episode, so that it still shows.
    fn key(&mut self, port: &str, by: &str, key: &str, flows: u64, h: &Hist) {
        let total: u64 = h.lengths().map(|(_, e)| e).sum();
        let none = [(1, 0)];
        let rows: Box<dyn Iterator<Item = (u64, u64)>> = if total == 0 { Box::new(none.into_iter()) } else { Box::new(h.lengths()) };
        for (n, e) in rows {
            self.port.push(port);
            self.by.push(by);
            self.key.push(key);
            self.flows.push(flows);
            self.run_length.push(n);
            self.episodes.push(e);
            self.share.push(if total > 0 { e as f64 / total as f64 } else { f64::NAN });
        }
    }

    fn finish(self) -> Table {
        let mut t = Table::new();
        t.push("port", self.port.finish());
        t.push("by", self.by.finish());
        t.push("key", self.key.finish());
        t.push("flows", Column::U64(self.flows));
        t.push("run_length", Column::U64(self.run_length));
        t.push("episodes", Column::U64(self.episodes));
        t.push("share", Column::OptF64(self.share));
        t
    }
}

/// `trace.csv` of the traced port, with (rows, truncated at) for the summary, or `None`; the
/// flows' groups are named `group_names`.
pub fn trace_table(probes: &mut [Probe], group_names: &[String]) -> Option<(Table, usize, Option<SimTime>)> {
    let p = probes.iter_mut().find(|p| p.trace.is_some())?;
    let tr = p.trace.take()?;
    let rows = tr.rows();
    let mut t = Table::new();
    t.push("time_s", Column::F64(tr.time_s));
    t.push("event", Column::Cat { codes: tr.event.iter().map(|&e| e as u32).collect(), levels: TRACE_EVENTS.map(String::from).to_vec() });
    t.push("input", CatBuilder::from_codes(tr.input, &p.inputs));
    t.push("flow_id", Column::U64(tr.flow.into_iter().map(u64::from).collect()));
    t.push("group", CatBuilder::from_codes(tr.group.into_iter().map(u32::from), group_names));
    t.push("seq", Column::U64(tr.seq));
    t.push("size_bytes", Column::U64(tr.size.into_iter().map(u64::from).collect()));
    let reasons: Vec<String> = DropReason::ALL.iter().map(|r| r.as_str().to_string()).collect();
    t.push("reason", CatBuilder::from_codes(tr.reason.into_iter().map(|r| if r == NO_REASON { u32::MAX } else { r as u32 }), &reasons));
    t.push("queue_pkts", Column::U64(tr.queue_pkts.into_iter().map(u64::from).collect()));
    t.push("queue_bytes", Column::U64(tr.queue_bytes));
    Some((t, rows, tr.truncated_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- runs by input, from hand-made sequences -----------------------------------------
    /// Feeds `seq` (input, flow, accepted?) to a fresh counter of 2 inputs, 3 flows in groups
    /// [0, 1, 1], closes it, and returns the histograms (input 0, input 1, group 0, group 1).
    fn runs_of(seq: &[(u32, u32, bool)]) -> Vec<Vec<(u64, u64)>> {
        let groups = [0u16, 1, 1];
        let mut r = DropRuns::new(2, 3, 2);
        for &(input, flow, ok) in seq {
            r.arrived(input, flow);
            if ok {
                r.accepted(input, flow, groups[flow as usize]);
            } else {
                r.dropped(input, flow);
            }
        }
        r.close(&groups);
        r.input_hist.iter().chain(&r.group_hist).map(|h| h.lengths().collect()).collect()
    }

    #[test]
    fn a_run_is_ended_by_an_accepted_packet_of_the_same_input() {
        // Input 0: D D A D A D D D A -> runs 2, 1, 3. Input 1 interleaved, never dropped:
        // its acceptances do not end input 0's runs.
        let (d, a) = (false, true);
        let seq = [(0, 0, d), (1, 1, a), (0, 0, d), (0, 0, a), (1, 1, a), (0, 0, d), (0, 0, a), (0, 0, d), (1, 1, a), (0, 0, d), (0, 0, d), (0, 0, a)];
        let h = runs_of(&seq);
        assert_eq!(h[0], [(1, 1), (2, 1), (3, 1)], "input 0: one run each of 1, 2 and 3");
        assert!(h[1].is_empty(), "input 1 never lost a packet");
    }

    #[test]
    fn blackout_of_one_input_while_the_other_gets_through() {
        // The paper's figure 9: B's packets arrive just ahead of A's and take every free slot.
        let mut seq = Vec::new();
        for _ in 0..4 {
            seq.push((1, 1, true));
            seq.push((0, 0, false));
        }
        seq.push((0, 0, true));
        let h = runs_of(&seq);
        assert_eq!(h[0], [(4, 1)], "one run of 4 at input 0");
        assert_eq!(h[2], [(4, 1)], "flow 0 (group 0) lost the same 4 in a row");
    }

    #[test]
    fn flow_runs_are_per_flow_and_summed_by_group() {
        // Flows 1 and 2 (group 1) share input 1 and alternate; every other packet is dropped:
        // input 1 sees D A D A (runs 1, 1) but flow 1 sees D D and flow 2 sees A A.
        let seq = [(1, 1, false), (1, 2, true), (1, 1, false), (1, 2, true), (1, 1, true)];
        let h = runs_of(&seq);
        assert_eq!(h[1], [(1, 2)]);
        assert_eq!(h[3], [(2, 1)], "one run of 2 (flow 1)");
    }

    #[test]
    fn open_runs_are_counted_at_the_end() {
        let h = runs_of(&[(0, 0, true), (0, 0, false), (0, 0, false)]);
        assert_eq!(h[0], [(2, 1)]);
        assert_eq!(h[2], [(2, 1)]);
    }

    #[test]
    fn flows_seen_through_each_input() {
        let mut r = DropRuns::new(3, 70, 1);
        for f in [0, 5, 69, 5] {
            r.arrived(2, f);
        }
        r.arrived(0, 64);
        assert_eq!((r.input_flows(0), r.input_flows(1), r.input_flows(2)), (1, 0, 3));
    }

    // --- rendering ------------------------------------------------------------------------
    #[test]
    fn rows_are_the_lengths_that_occurred_and_keys_without_drops_show_once() {
        let mut h = Hist::default();
        for len in [1, 3, 1, 1, 100_000, 300, 300] {
            h.add(len);
        }
        assert_eq!(h.short.len(), 4, "long runs do not grow the array");
        let mut c = RunCols::default();
        c.key("sw->r0", "input", "s0->sw", 2, &h);
        c.key("sw->r0", "input", "s1->sw", 1, &Hist::default());
        let csv = c.finish().to_csv();
        assert_eq!(
            csv,
            "port,by,key,flows,run_length,episodes,share\n\
             sw->r0,input,s0->sw,2,1,3,0.42857142857142855\n\
             sw->r0,input,s0->sw,2,3,1,0.14285714285714285\n\
             sw->r0,input,s0->sw,2,300,2,0.2857142857142857\n\
             sw->r0,input,s0->sw,2,100000,1,0.14285714285714285\n\
             sw->r0,input,s1->sw,1,1,0,\n"
        );
    }
}
