//! The event loop: packets move between ports, links, switches and host transports.
//!
//! Rules:
//! - Only the engine owns the clock ([`EventQueue::now`]); every mechanism gets `now` passed in.
//! - Packets live in one slab (`pktref.rs`) from the moment their host emits them until they
//!   are delivered or dropped, and are changed there in place (routing, FairQ, CE marks); events
//!   carry their `u32` handles and port queues hold [`PktRef`]s (handle plus the fields a
//!   discipline reads, 32 bytes), so a hop copies no packet. Every drop a queue reports frees
//!   its slot; a port writes a CE mark set on the ref back to the packet when it dequeues it.
//! - Every packet offered to a port goes through its discipline, even when the port is idle
//!   (the discipline must see every arrival: HCF spends credits, RED updates its average). An
//!   idle port then dequeues at once.
//! - A port keeps at most one pending `TxDone`, and only when a packet is waiting: a packet
//!   that finds the port idle starts at once, and one that finds it busy with nothing pending
//!   schedules the `TxDone` at `busy_until`.
//! - The engine drives every flow's endpoints through `dcfair_core::transport::Endpoint` and
//!   names no transport: a packet that reaches a host goes to `on_packet` of its flow's end
//!   there, a timer to `on_timer`, and what they emit leaves the host's NIC. What differs
//!   between transports is the transports' (their registry, `crates/core/src/transport/`); the
//!   engine keeps per flow only its ids, start, group, timer bookkeeping and window snapshots
//!   (`workload::Flow`). Three hooks stay the engine's, whatever the transport: FairQ's tagging
//!   of what a receiver emits, the incast's count of delivered bytes, and the jobs' starts: a
//!   flow that completes is shown to the jobs (`jobs.rs`), which say which flows start then
//!   (one call per completed flow, out of line; a flow's start is when its `Start` event runs).
//! - Transport timers are lazy: each endpoint has at most one timer event in the queue, at or
//!   before its deadline; when it fires, the endpoint checks its own deadline and the engine
//!   re-arms at the endpoint's next deadline. Moving a deadline later costs nothing. A paced
//!   sender (`tcp.pacing`) reports the release time of its next held segment as a deadline, so
//!   pacing runs on this same timer; without it a sender's deadline is its retransmission (or
//!   persist) timer alone. A sender that is a clock (a UDP source: `Endpoint::clocked`) has its
//!   next event scheduled at exactly its deadline, before what it emitted, and never moved.
//! - Flows bound by their transport (an MPTCP connection's subflows, `Flow::bond`) are still
//!   flows; around the calls of one of them the engine calls the bond
//!   (`dcfair_core::transport::Bond`) with the bond's flows, and re-arms the flows it says it
//!   touched. A flow on its own pays one branch for it.
//! - Events of the same instant run in scheduling order (`sim.tie_break = "fifo"`), or with
//!   `"random_timers"` a timer goes before or after the others by a seeded coin (stream
//!   `"engine.timer_ties"`) drawn when it is armed, or with `"float_clock"` every event also
//!   carries the `f64` time ns-2's floating-point clock would give it (`fnow` plus the delay in
//!   `f64`, see `scenario::TieBreak`) and ties go to the smaller one. The exact integer time
//!   always decides first; the shadow clock only orders ties, so it never moves an event.
//! - Before it runs an event, the loop asks the processor for the first line the next one
//!   will read (`prefetch_next`: the arriving packet's slab record, or the port of a `TxDone`
//!   and its discipline's state). A run that keeps at least [`DEEP_HINT_PORTS`] ports busy looks
//!   two events ahead instead (`prefetch_ahead`: the record of the event after next, and the
//!   output port of the next arrival, routed ahead without a draw).
//!   Hints only (`dcfair_core::hint`): nothing depends on them, and the peeks behind them
//!   (`EventQueue::peek_hint`, `EventQueue::peek_ahead`, `Routes::hint`) change no state.
//! - Every packet meets what a port runs in one pipeline: `offer` (FairQ's rewrite at a switch)
//!   then `port_in` (the discipline's enqueue, made by the port's probe when it has one) and
//!   `port_out` (the discipline's dequeue, then the probe's record); each ends by freeing the
//!   packets the discipline dropped, counted first by flow when the port is measured
//!   (`port_drops.rs`, out of line: a call that drops nothing pays nothing for it). A probe
//!   (`probe.rs`: drop runs, `[measure.trace]`) makes the very same call and records what
//!   happened; any other port pays one comparison per packet for the feature. A packet offered to an idle port that stores nothing, without a probe, takes
//!   the enqueue and the dequeue in one step (`Queue::pass`): the same packet out, counters and
//!   drops, but DropTail never writes it into its ring and reads it back (on a large fabric,
//!   a cache miss on the port's buffer for most packets: `docs/performance.md`).
//! - PFC, shared buffers and in-band telemetry (`pfc.rs`, `buffer.rs`,
//!   `dcfair_core::telemetry`) meet the packet path behind one byte of flags (`Sim::extras`),
//!   their work out of line, so a run without them pays one test per step. A lossless packet
//!   leaves the pipeline above: at a switch its ingress gate admits it (and may pause the link it
//!   came in on), then it waits in its output port's lossless FIFO, and the port serves its two
//!   classes in turn or the lossless one first; a lossless sender waits while its NIC's lossless
//!   FIFO holds packets. A shared buffer admits a lossy packet before its port's discipline sees
//!   it. A switch port stamps the telemetry of a packet that collects it as the packet leaves.
//! - The engine owns the dispatch of every event: the observers and mechanisms it carries (the
//!   probes, the time series sampler, FairQ) are plain state with functions the engine calls,
//!   and none of them imports the engine.
//! - With the `trace` cargo feature (tests and the ns-2 differential scripts only), the run
//!   collects one text line per event of interest (`Sim::take_trace`): at a measured port `+`
//!   (offered and stored), `d` (dropped), `-` (serialization starts); `r` (arrival at the
//!   destination host); `x` (a TCP segment leaves its sender); `s` (a TCP sender's state after each ACK or
//!   timer, `Endpoint::trace_state`).
//!   Fields are documented in [`trace`]. Without the feature none of this is compiled.

mod graph_split;
mod threads;
mod windows;

pub use threads::{Exchange, SpinBarrier, Split, Stopped};
pub use windows::{Partition, PartsStats};

use crate::event::{Event, EventQueue};
use crate::fairq::FairqNet;
use crate::jobs::{Jobs, NOT_STARTED};
use crate::metrics::{FlowObs, Order};
use crate::net::{Network, Port, NO_PROBE};
use crate::buffer::Buffers;
use crate::pfc::{PfcNet, NO_GATE};
use crate::pktref::{PktRef, Slab};
use crate::poisson::Plan;
use crate::port_drops::PortDrops;
use crate::probe::Probe;
use crate::routing::{RouteState, Routes, NO_ROW};
use crate::series::Series;
use crate::workload::{Bound, Flows, Incast, RoundEnd, NO_BOND};
use std::ops::ControlFlow;
use dcfair_core::hint::prefetch;
use dcfair_core::packet::Packet;
#[cfg(feature = "trace")]
use dcfair_core::packet::Proto;
use dcfair_core::qdisc::QdiscEvents;
use dcfair_core::rng::Rng;
use dcfair_core::telemetry::{self, IntHop, Telemetry};
use dcfair_core::time::SimTime;
use dcfair_core::transport::Side;
use rand::Rng as _;

/// A progress callback: return `ControlFlow::Break(())` to stop the run
/// ([`crate::error::Error::Interrupted`]).
pub type ProgressFn<'a> = &'a mut dyn FnMut(&Progress) -> std::ops::ControlFlow<()>;

/// Progress of a running simulation, reported to an optional callback.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub sim_time_s: f64,
    pub duration_s: f64,
    pub events: u64,
    pub wall_time_s: f64,
}

/// [`Sim::extras`]: PFC's lossless class (`World::pfc`).
const X_PFC: u8 = 1;
/// [`Sim::extras`]: shared-buffer switches (`World::buffers`).
const X_BUFFER: u8 = 2;
/// [`Sim::extras`]: in-band telemetry (`World::telemetry`).
pub(crate) const X_INT: u8 = 4;
/// [`Sim::extras`]: counting out-of-order arrivals (`World::track_order`).
const X_ORDER: u8 = 8;
/// [`Sim::extras`]: ports that trim (`World::trimming`).
const X_TRIM: u8 = 16;
/// [`Sim::extras`]: a run in parts, while it runs (`windows.rs`): a packet put on a link
/// to another part goes to that part ([`Sim::arrive_across`]).
const X_PARTS: u8 = 32;
/// The [`Sim::extras`] that meet a packet on its way through ports and switches.
const X_PATH: u8 = X_PFC | X_BUFFER | X_INT | X_TRIM;

/// The `from` of a packet a host's transport emits: it crosses no switch.
const FROM_HOST: u32 = u32::MAX;

/// `Sim::via` of a flow whose every packet climbs to a core drawn for it alone
/// (`routing.core = "random_packet"`).
pub const VIA_PER_PACKET: u32 = u32::MAX - 1;

/// Busy ports from which a run gets the engine's two-step cache hints (`Sim::prefetch_ahead`):
/// 4,096 ports' first [`crate::net::PORT_HOT_LINES`] lines take 768 KiB of a core's 1 MiB
/// second-level cache. The ports a run keeps busy are counted as at most [`PORTS_PER_FLOW`]
/// per flow, and at most all of them. A run below it keeps its ports cached and takes the one-step hints of
/// `Sim::prefetch_next`, which cost it less: with two steps a k = 8 fat-tree runs about a fifth
/// slower, and so does a k = 8 one with 8,192 flows, or a k = 32 one with 128; a k = 16
/// permutation (6,144 ports) runs as fast with either, a k = 32 one faster with two
/// (docs/performance.md, "Where the engine's time goes").
pub const DEEP_HINT_PORTS: usize = 4096;

/// Ports a flow keeps busy at most, for [`DEEP_HINT_PORTS`]: a fat-tree path crosses six output
/// ports each way (data and ACKs).
pub const PORTS_PER_FLOW: usize = 12;

/// Everything a run is made of, as the builder (`assemble.rs`) decides it: the network and its
/// routes, the flows with their endpoints, the workloads' state and the observers. It is the
/// one list of a run's parts: the builder fills it in once, [`Sim::new`] adds the clock and the
/// engine's own state (the event queue, the packet slab, the flows' observations), and readers
/// (the result files, the real-packet switch, tests) see it through [`Sim::world`].
pub struct World {
    pub net: Network,
    /// Read only; the parts of a run on several threads share them (`engine/threads.rs`).
    pub routes: std::sync::Arc<Routes>,
    /// What the per-packet routing modes choose from and remember (`routing.rs`).
    pub route: RouteState,
    /// Every flow by flow id: the flow groups', the incast servers', the Poisson flows', then
    /// from `background` on the background sources (`[udp]`).
    pub flows: Flows,
    /// The first background source: the flows before it are the ones the per-flow figures
    /// count.
    pub background: usize,
    /// The bonds over several flows (MPTCP connections), indexed by `Flow::bond`.
    pub bonds: Vec<Bound>,
    pub incast: Option<Incast>,
    /// The jobs (collectives: `jobs.rs`), when some flow group is one.
    pub jobs: Option<Box<Jobs>>,
    /// Equal-length routing: the waypoint of every flow's packets, by flow id (`NO_VIA`: none;
    /// [`VIA_PER_PACKET`]: a core drawn for each packet from `packet_cores`).
    pub via: Vec<u32>,
    /// The cores a `VIA_PER_PACKET` flow's packets are spread over, and the stream that picks:
    /// one for every host, or by origin one per node (by node id); empty without them.
    pub packet_cores: Vec<u32>,
    pub core_rng: Vec<Rng>,
    /// When the measurement window opens.
    pub window_start: SimTime,
    /// End of the run: `sim.duration_s`, or earlier when an incast finishes its last round.
    pub end: SimTime,
    /// Total rate of the measured ports, bits/s (for utilization).
    pub measured_rate_bps: f64,
    /// The time series sampler, when `[measure] sample_interval_s` is set (`series.rs`).
    pub series: Option<Series>,
    /// Port probes (`probe.rs`), indexed by `Port::probe`.
    pub probes: Vec<Probe>,
    /// The drops of every flow at every measured port (`port_drops.rs`).
    pub port_drops: PortDrops,
    /// The flow group of every flow by flow id, an index into `group_names`: the groups of
    /// `flows.csv`.
    pub flow_group: Vec<u16>,
    pub group_names: Vec<String>,
    /// The rates and window the `[poisson]` flows were drawn from, for the Poisson metrics.
    pub poisson_plan: Option<Plan>,
    /// With `sim.tie_break = "random_timers"`: the coin that puts an armed timer before or
    /// after the other events of its instant.
    pub timer_coin: Option<Rng>,
    /// With `sim.tie_break = "float_clock"`: order ties by the `f64` shadow clock.
    pub float_clock: bool,
    /// With `sim.tie_break = "origin"`: order ties by the node that scheduled the event, then
    /// by that node's own count (`EventQueue::by_origin`; [`Sim::track_tie`]).
    pub by_origin: bool,
    /// FairQ at some switches (`fairq.rs`), when the scenario has `[fairq]`.
    pub fairq: Option<Box<FairqNet>>,
    /// PFC's lossless class on every link (`pfc.rs`), when the scenario has `[pfc]`.
    pub pfc: Option<Box<PfcNet>>,
    /// One shared buffer per switch (`buffer.rs`), when the scenario has `[buffer]`.
    pub buffers: Option<Box<Buffers>>,
    /// Count, per flow, the data packets that arrive out of order (`metrics::Order`): runs
    /// whose packets may take different paths (a per-packet routing mode, a sprayed
    /// transport).
    pub track_order: bool,
    /// Switch ports trim NDP's packets (`ndp.trim` in a run with NDP flows): `ports.csv` and
    /// `summary.json` count the trims.
    pub trimming: bool,
    /// Some flow's packets ask for in-band telemetry (`dcfair_core::telemetry`): switch ports
    /// stamp the packets that collect it, and the engine keeps the records.
    pub telemetry: bool,
}

/// A run: its [`World`] and what the engine keeps to run it. The fields are the engine's own;
/// everything else reads the world ([`Sim::world`]) and the observations ([`Sim::obs`]).
pub struct Sim {
    q: EventQueue,
    w: World,
    /// Receiver-side observations, indexed by flow id.
    obs: Vec<FlowObs>,
    /// Per flow, the order its data arrives in, when the run counts reordering
    /// (`World::track_order`; else empty).
    order: Vec<Order>,
    /// Every port's drops when the measurement window opened, by port id (empty before).
    drops_at_window: Vec<u64>,
    slab: Slab,
    /// The telemetry record of every slab slot, in a run with telemetry (else empty), and the
    /// record of the packet a receiver is answering (what its `ECHO` packets carry back).
    int: Vec<Telemetry>,
    int_echo: Telemetry,
    /// What the last call into a port's queue reported: one scratch for every port, drained
    /// (its drops freed from the slab) right after each call.
    qev: QdiscEvents<PktRef>,
    scratch: Vec<Packet>,
    next_uid: u64,
    /// The shadow clock's time of the event being handled (float-clock mode).
    fnow: f64,
    /// The tie order needs each event's float-clock time or origin ([`Sim::track_tie`]).
    tracks_ties: bool,
    /// A run in parts, while it runs (`windows.rs`).
    win: Option<Box<windows::Windows>>,
    /// The events the parts' own queues ran ([`Sim::run_in_parts`]).
    events_in_parts: u64,
    /// The mechanisms on the packet path that most runs do without, as bits ([`X_PFC`],
    /// [`X_BUFFER`], [`X_INT`]): one test of this byte where a packet meets any of them, and
    /// the mechanism's work out of line.
    extras: u8,
    /// Look two events ahead for cache hints ([`Sim::prefetch_ahead`]): a run that keeps at
    /// least [`DEEP_HINT_PORTS`] ports busy, which do not stay in the cache.
    deep_hints: bool,
    /// Event log (feature `trace`); see [`trace`].
    #[cfg(feature = "trace")]
    trace: String,
}

/// The packets the last queue call of port `pid` reported dropped (`qev`), out of the packet
/// path: counted by flow when the port is `measured` (`port_drops.rs`), released from the
/// port's switch's shared buffer (if the run has `buffers`), and freed from the slab, which
/// empties the list. Takes the engine's parts one by one, so that a caller that still holds
/// the port ([`Sim::port_in`]) can call it.
#[cold]
#[inline(never)]
fn free_dropped(qev: &mut QdiscEvents<PktRef>, slab: &mut Slab, drops: &mut PortDrops, buffers: Option<&mut Buffers>, pid: u32, measured: bool) {
    if measured {
        drops.count(pid, &qev.dropped, slab);
    }
    if let Some(sb) = buffers.and_then(|b| b.of(pid)) {
        for d in &qev.dropped {
            sb.release(d.pkt.size);
        }
    }
    slab.free_dropped(qev);
}

/// The `trace` feature's line formats. Times are seconds with 9 decimals (ns resolution);
/// `seq` is the TCP sequence number in bytes (UDP: 0), `fid` the flow id.
///
/// ```text
/// + t port fid seq size          offered to measured port `port` and stored
/// d t port fid seq size          dropped by the discipline of measured port `port`
/// - t port fid seq size          serialization starts at measured port `port`
/// r t fid seq size flags ack     arrival at the destination host (data and ACKs)
/// x t fid seq payload            a TCP data segment leaves its sender
/// s t fid why cwnd ssthresh una nxt max dupacks recovery rto_s backoff timeouts
///                                sender state after `why` = start | ack | timer (bytes; ssthresh
///                                u64::MAX before the first loss; recovery 0 or 1)
/// ```
#[cfg(feature = "trace")]
pub mod trace {
    /// Seconds with nanosecond resolution.
    pub fn t(now: dcfair_core::time::SimTime) -> String {
        format!("{:.9}", now.as_secs_f64())
    }

    /// The `s` line of a sender, for a transport that writes one (TCP's; empty otherwise).
    pub fn sender(now: dcfair_core::time::SimTime, fid: usize, why: &str, e: &dcfair_core::transport::Endpoint) -> String {
        match e.trace_state() {
            Some(state) => format!("s {} {fid} {why} {state}\n", t(now)),
            None => String::new(),
        }
    }
}

impl Sim {
    /// The run of `world`, with its first events scheduled: FairQ's first sample and tick,
    /// every flow's start, the window opening, the incast's first request, then the time
    /// series' first tick (events of one instant run in this order).
    pub fn new(world: World) -> Sim {
        let n = world.flows.len();
        debug_assert_eq!(world.via.len(), n);
        let deep_hints = world.net.ports.len().min(n.saturating_mul(PORTS_PER_FLOW)) >= DEEP_HINT_PORTS;
        let world_tracks_order = world.track_order;
        let extras = (world.pfc.is_some() as u8 * X_PFC) | (world.buffers.is_some() as u8 * X_BUFFER) | (world.telemetry as u8 * X_INT) | (world_tracks_order as u8 * X_ORDER) | (world.trimming as u8 * X_TRIM);
        let tracks_ties = world.float_clock || world.by_origin;
        let mut sim = Sim {
            // by origin, the nodes and one more for the events of the whole run
            q: if world.by_origin { EventQueue::by_origin(world.net.nodes.len() + 1) } else { EventQueue::new() },
            tracks_ties,
            win: None,
            events_in_parts: 0,
            w: world,
            obs: vec![FlowObs::default(); n],
            order: if world_tracks_order { vec![Order::default(); n] } else { Vec::new() },
            drops_at_window: Vec::new(),
            slab: Slab::default(),
            int: Vec::new(),
            int_echo: Telemetry::default(),
            qev: QdiscEvents::default(),
            scratch: Vec::with_capacity(64),
            next_uid: 1,
            fnow: 0.0,
            extras,
            deep_hints,
            #[cfg(feature = "trace")]
            trace: String::new(),
        };
        if let Some(fq) = sim.w.fairq.as_deref() {
            let now = sim.q.now();
            let (sample_dt, tick_dt) = (fq.sample_interval(), fq.tick_interval());
            sim.q.schedule(now + sample_dt, Event::FairqSample);
            sim.q.schedule(now + tick_dt, Event::FairqTick);
        }
        sim.schedule_starts();
        if let Some(series) = &sim.w.series {
            sim.q.schedule(series.next_time(), Event::SeriesTick);
        }
        sim
    }

    /// What the run is made of: the network, the flows and their endpoints, the observers.
    pub fn world(&self) -> &World {
        &self.w
    }

    /// The run's world, for a caller that builds a run only to read what it is made of (the
    /// real-packet switch's routes and flows).
    pub fn into_world(self) -> World {
        self.w
    }

    /// The world, to take the observers' tables out once the run is over (`render/`).
    pub(crate) fn world_mut(&mut self) -> &mut World {
        &mut self.w
    }

    /// Receiver-side observations, by flow id.
    pub fn obs(&self) -> &[FlowObs] {
        &self.obs
    }

    /// The order each flow's data arrived in, by flow id, when the run counts reordering
    /// (`World::track_order`); else `None`.
    pub fn order(&self) -> Option<&[Order]> {
        (!self.order.is_empty()).then_some(&self.order[..])
    }

    /// Events run so far.
    pub fn events(&self) -> u64 {
        self.q.events() + self.events_in_parts
    }

    /// The event log (feature `trace`; see [`trace`]), taken out of the run.
    #[cfg(feature = "trace")]
    pub fn take_trace(&mut self) -> String {
        std::mem::take(&mut self.trace)
    }

    /// Whether the run looks two events ahead for cache hints (see [`DEEP_HINT_PORTS`]).
    pub fn deep_hints(&self) -> bool {
        self.deep_hints
    }

    /// Packets in the slab: emitted and neither delivered nor dropped yet.
    #[cfg(test)]
    pub(crate) fn packets_in_slab(&self) -> usize {
        self.slab.live()
    }

    /// Schedules the starts of every flow (in flow id order) and the window opening.
    fn schedule_starts(&mut self) {
        for i in 0..self.w.flows.len() {
            // a server that answers each request on a new connection opens it at the request
            if self.w.incast.as_ref().is_some_and(|ic| ic.per_request.is_some() && ic.server_of(i as u32).is_some()) {
                continue;
            }
            // the flows of a bond other than those it opens itself (an MPTCP connection's joins)
            let b = self.w.flows[i].bond;
            if b != NO_BOND {
                let bond = &self.w.bonds[b as usize].bond;
                if !bond.opens(i - bond.flows().start) {
                    continue;
                }
            }
            let at = self.w.flows[i].start;
            if at == NOT_STARTED {
                continue; // a job's transfer that waits for others: the job starts it
            }
            self.at(at, at.as_secs_f64(), Event::Start { flow: i as u32 });
        }
        if let Some(ic) = &self.w.incast {
            // After the servers' own Start events at the same instant (ties run FIFO).
            self.q.schedule(ic.start, Event::Request);
        }
        self.q.schedule(self.w.window_start, Event::Sample);
    }

    /// Schedules `ev` at `t`, whose shadow-clock time is `f` (used only with `float_clock`; by
    /// origin, the queue writes the tie itself). Always inlined, as it was by itself before
    /// the queue had a third layout.
    #[inline(always)]
    fn at(&mut self, t: SimTime, f: f64, ev: Event) {
        if self.w.float_clock {
            self.q.schedule_tie(t, f.max(0.0).to_bits(), ev);
        } else {
            self.q.schedule(t, ev);
        }
    }

    /// Runs until the end time, calling `progress` about every 0.2 s of wall time and once at
    /// the end. Returns `Break` if the callback asked to stop (the run is then incomplete).
    pub fn run(&mut self, mut progress: Option<ProgressFn<'_>>) -> ControlFlow<()> {
        let wall = std::time::Instant::now();
        let mut last_report = 0.0f64;
        let duration_s = self.w.end.as_secs_f64();
        loop {
            // Check the wall clock only every 64k events: it is for progress display only.
            if self.run_events(SimTime::MAX, 65_536) {
                return self.report(&mut progress, wall, duration_s, true);
            }
            let w = wall.elapsed().as_secs_f64();
            if w - last_report >= 0.2 {
                last_report = w;
                self.report(&mut progress, wall, duration_s, false)?;
            }
        }
    }

    /// Runs up to `n` events, none later than `until` or the run's end (which an event may
    /// move earlier); returns whether none is left before them. The event loop: the one caller
    /// of [`Sim::dispatch`], so that the handlers inline into it (a run in parts calls it too,
    /// per part and window).
    #[inline(never)]
    fn run_events(&mut self, until: SimTime, n: u64) -> bool {
        for _ in 0..n {
            let Some((now, ev)) = self.q.pop_until(until.min(self.w.end)) else {
                return true;
            };
            if self.tracks_ties {
                self.track_tie(ev);
            }
            if self.deep_hints {
                self.prefetch_ahead();
            } else {
                self.prefetch_next();
            }
            self.dispatch(now, ev);
        }
        false
    }

    /// What the tie order needs of the event about to run: the float clock's time of it, or
    /// by origin the node it runs at, whose events it schedules ([`Sim::origin_of`]).
    #[inline(always)]
    fn track_tie(&mut self, ev: Event) {
        if self.w.float_clock {
            self.fnow = f64::from_bits(self.q.now_tie());
        } else {
            let node = self.origin_of(ev);
            self.q.set_origin(node);
        }
    }

    /// The node event `ev` runs at: where its packet arrives, its port's node, its flow end's
    /// host (a start: the sender's); the last origin, past every node, for the events of the
    /// whole run (the window's opening, the samplers, FairQ's ticks, the incast's requests).
    #[inline(never)]
    fn origin_of(&self, ev: Event) -> u32 {
        let port = |p: u32| self.w.net.ports[p as usize].node;
        match ev {
            Event::Arrive { pkt } => self.slab.items[pkt as usize].node,
            Event::TxDone { port: p } | Event::Wake { port: p } | Event::PfcFrame { port: p } | Event::PfcRefresh { port: p } => port(p),
            Event::Timer { endpoint } => {
                let ids = &self.w.flows[endpoint as usize / 2].ids;
                if endpoint % 2 == 0 { ids.src } else { ids.dst }
            }
            Event::Start { flow } => self.w.flows[flow as usize].ids.src,
            Event::Request | Event::Sample | Event::SeriesTick | Event::FairqSample | Event::FairqTick => self.w.net.nodes.len() as u32,
        }
    }

    /// Asks for the first lines the next event will read (its packet's slab record, or its
    /// port: the port's counters, the queue's accounting and an inline discipline, the first
    /// [`crate::net::PORT_HOT_LINES`] lines of the port), while this one runs: by then they
    /// have usually left the first-level cache (hint.rs).
    #[inline(always)]
    fn prefetch_next(&self) {
        self.prefetch_first_lines(self.q.peek_hint());
    }

    /// Asks for the first lines event `ev` will read: its packet's slab record, or its port's
    /// first lines.
    #[inline(always)]
    fn prefetch_first_lines(&self, ev: Option<Event>) {
        match ev {
            Some(Event::Arrive { pkt }) => prefetch(self.slab.items.as_ptr().wrapping_add(pkt as usize)),
            Some(Event::TxDone { port }) => self.prefetch_port(port),
            _ => {}
        }
    }

    /// On a run whose busy ports do not stay in the cache between two visits, asks
    /// for what the next two events will read, each a step ahead of its reads (the events are
    /// those [`EventQueue::peek_ahead`] can tell; one scheduled meanwhile only wastes a hint):
    /// - the event after next: its first lines ([`Sim::prefetch_first_lines`]);
    /// - the next event, whose record was asked for one event ago: a packet arriving at a
    ///   switch is routed ahead ([`Routes::hint`], no draw) and its output port's lines are
    ///   asked for, the misses `offer` would otherwise wait for; a port ending a transmission
    ///   has the buffer slot of the packet it sends next asked for (DropTail's head, written
    ///   at its enqueue long before), the miss `start_tx` would otherwise wait for.
    ///
    /// Out of line, so that the run loop of a small network stays as compact as it was.
    #[inline(never)]
    fn prefetch_ahead(&self) {
        let [next, after] = self.q.peek_ahead::<2>();
        self.prefetch_first_lines(after);
        match next {
            Some(Event::Arrive { pkt }) => {
                let f = &self.slab.items[pkt as usize];
                if let Some(out) = self.w.routes.hint(f.node, self.w.routes.row(f.node), f.col, &f.pkt) {
                    self.prefetch_port(out);
                }
            }
            // its port's lines were asked for one event ago, when it was the event after next
            Some(Event::TxDone { port }) if after.is_some() => {
                if let Some(p) = self.w.net.ports[port as usize].queue.qdisc.next_out_hint() {
                    prefetch(p);
                }
            }
            Some(Event::TxDone { port }) => self.prefetch_port(port),
            _ => {}
        }
    }

    /// Asks for the first [`crate::net::PORT_HOT_LINES`] lines of port `port`.
    #[inline(always)]
    fn prefetch_port(&self, port: u32) {
        let p = self.w.net.ports.hint(port as usize) as *const u8;
        for line in 0..crate::net::PORT_HOT_LINES {
            prefetch(p.wrapping_add(64 * line));
        }
    }

    fn report(&self, progress: &mut Option<ProgressFn<'_>>, wall: std::time::Instant, duration_s: f64, done: bool) -> ControlFlow<()> {
        match progress.as_mut() {
            Some(cb) => cb(&Progress {
                sim_time_s: if done { duration_s } else { self.q.now().as_secs_f64() },
                duration_s,
                events: self.q.events(),
                wall_time_s: wall.elapsed().as_secs_f64(),
            }),
            None => ControlFlow::Continue(()),
        }
    }

    #[inline]
    fn dispatch(&mut self, now: SimTime, ev: Event) {
        match ev {
            Event::Arrive { pkt } => self.arrive(now, pkt),
            Event::TxDone { port } => {
                self.w.net.ports[port as usize].txdone_pending = false;
                self.start_tx(port, now);
            }
            Event::Wake { port } => {
                // a shaper's held-back packet may be due; only if the port is idle and no
                // TxDone will come anyway (a stale wake does nothing)
                let p = &self.w.net.ports[port as usize];
                if !p.txdone_pending && now >= p.busy_until {
                    self.start_tx(port, now);
                }
            }
            Event::Timer { endpoint } => self.timer(now, endpoint),
            Event::Start { flow } => self.start(now, flow as usize),
            Event::Request => self.request(now),
            Event::Sample => self.open_window(),
            Event::SeriesTick => self.series_tick(now),
            Event::FairqSample => self.fairq_sample(now),
            Event::FairqTick => self.fairq_tick(now),
            Event::PfcFrame { port } => self.pfc_frame(now, port),
            Event::PfcRefresh { port } => self.pfc_refresh(now, port),
        }
    }

    /// Sends the packets in `out` from host `host`'s NIC, draining `out`.
    #[inline]
    fn emit(&mut self, now: SimTime, host: u32, out: &mut Vec<Packet>) {
        let nic = self.w.net.nodes[host as usize].ports[0];
        #[cfg(feature = "trace")]
        for p in out.iter() {
            use std::fmt::Write as _;
            if p.proto == Proto::Tcp && p.payload > 0 {
                let _ = writeln!(self.trace, "x {} {} {} {}", trace::t(now), p.flow, p.seq, p.payload);
            }
        }
        for mut p in out.drain(..) {
            p.uid = self.next_uid;
            self.next_uid += 1;
            p.via = self.w.via[p.flow as usize];
            if p.via == VIA_PER_PACKET {
                let rngs = &mut self.w.core_rng;
                let rng = if rngs.len() == 1 { &mut rngs[0] } else { &mut rngs[host as usize] };
                p.via = self.w.packet_cores[rng.gen_range(0..self.w.packet_cores.len())];
            }
            let col = self.w.routes.column(p.dst);
            let r = self.slab.insert(p, col);
            if self.extras & X_PATH != 0 && self.emit_extra(nic, r, now) {
                continue;
            }
            self.offer(nic, r, FROM_HOST, now);
        }
    }

    /// What the extras do with a packet a host just emitted into slot `r` (its telemetry
    /// record; a lossless packet joins the NIC's lossless FIFO): whether it was offered.
    #[inline(never)]
    fn emit_extra(&mut self, nic: u32, r: PktRef, now: SimTime) -> bool {
        let p = self.slab.pkt(r.handle);
        let (class, int) = (p.class, p.int);
        if self.extras & X_INT != 0 && int != telemetry::NONE {
            self.int_record(r.handle, int);
        }
        if self.w.pfc.as_deref().is_some_and(|pfc| class == pfc.lossless) {
            self.offer_lossless(nic, r, NO_GATE, now);
            return true;
        }
        false
    }

    /// Offers a packet that came in through port `from` (global id, or [`FROM_HOST`]) to port
    /// `pid`: FairQ sees it when the run has FairQ and the packet crosses a switch (the switch
    /// may rewrite the window of an ACK, in the packet's slab slot; no field of the [`PktRef`]
    /// changes); then it goes through the port's pipeline ([`Sim::port_in`]) and serialization
    /// starts if the port is idle, or, at an idle port without a probe whose queue is empty,
    /// both in one step ([`Queue::pass`](dcfair_core::qdisc::Queue::pass)).
    #[inline]
    fn offer(&mut self, pid: u32, pkt: PktRef, from: u32, now: SimTime) {
        if from != FROM_HOST {
            if let Some(fq) = self.w.fairq.as_deref_mut() {
                fq.on_switch(now, from, pid, &mut self.slab.items[pkt.handle as usize].pkt);
            }
        }
        let port = &mut self.w.net.ports[pid as usize];
        // An idle port with nothing stored: enqueue and dequeue in one step, which a discipline
        // that can (DropTail) makes without storing the packet (`Queue::pass`). A probe records
        // the two calls, and a traced run writes them out: both make them.
        let idle = !port.txdone_pending && now >= port.busy_until && port.queue.is_empty();
        let pkt = if idle && port.probe == NO_PROBE && !cfg!(feature = "trace") {
            match port.queue.pass(pkt, now, &mut self.qev) {
                Ok(sent) => {
                    self.free_dropped_at(pid);
                    if let Some(pkt) = sent {
                        self.transmit(pid, pkt, now);
                    }
                    return;
                }
                Err(pkt) => pkt,
            }
        } else {
            pkt
        };
        let port = self.port_in(pid, pkt, now);
        if port.txdone_pending {
            return;
        }
        if now >= port.busy_until {
            self.start_tx(pid, now);
        } else if !port.queue.is_empty() {
            port.txdone_pending = true;
            let (at, f) = (port.busy_until, port.busy_until_f);
            self.at(at, f, Event::TxDone { port: pid });
        }
    }

    /// The way in of a port's pipeline, after FairQ ([`Sim::offer`]), in this order:
    /// 1. the port's probe, which makes the discipline's call itself and records what
    ///    happened, or else the discipline's `enqueue`;
    /// 2. every packet the discipline dropped leaves the slab (its stats have counted it).
    ///
    /// Returns the port, so that the caller goes on with the port it already holds instead of
    /// a second look-up (and bounds check) of `ports[pid]`.
    #[inline]
    fn port_in(&mut self, pid: u32, pkt: PktRef, now: SimTime) -> &mut Port {
        let port = &mut self.w.net.ports[pid as usize];
        #[cfg(feature = "trace")]
        let (tflow, tseq, tsize) = {
            let p = self.slab.pkt(pkt.handle);
            (p.flow, p.seq, p.size)
        };
        if port.probe == NO_PROBE {
            port.queue.enqueue(pkt, now, &mut self.qev);
        } else {
            self.w.probes[port.probe as usize].offer(now, pkt, &mut port.queue, &mut self.qev, &self.w.flow_group, &self.slab);
        }
        #[cfg(feature = "trace")]
        if port.measured {
            use std::fmt::Write as _;
            let mut refused = false;
            for d in &self.qev.dropped {
                refused |= !d.queued;
                let p = self.slab.pkt(d.pkt.handle);
                let _ = writeln!(self.trace, "d {} {pid} {} {} {}", trace::t(now), p.flow, p.seq, p.size);
            }
            if !refused {
                let _ = writeln!(self.trace, "+ {} {pid} {tflow} {tseq} {tsize}", trace::t(now));
            }
        }
        // `free_dropped_at`, by parts: `port` is still borrowed
        if !self.qev.dropped.is_empty() {
            let buffers = self.w.buffers.as_deref_mut();
            free_dropped(&mut self.qev, &mut self.slab, &mut self.w.port_drops, buffers, pid, port.measured);
        }
        port
    }

    /// The way out of a port's pipeline: the discipline's `dequeue`, then the port's probe
    /// records it, then every packet the discipline dropped on the way leaves the slab.
    #[inline]
    fn port_out(&mut self, pid: u32, now: SimTime) -> Option<PktRef> {
        let port = &mut self.w.net.ports[pid as usize];
        let next = port.queue.dequeue(now, &mut self.qev);
        if port.probe != NO_PROBE {
            self.w.probes[port.probe as usize].dequeued(now, next.as_ref(), &port.queue, &self.qev.dropped, &self.w.flow_group, &self.slab);
        }
        self.free_dropped_at(pid);
        next
    }

    /// Takes the next packet out of the port's pipeline and puts it on the wire.
    #[inline]
    fn start_tx(&mut self, pid: u32, now: SimTime) {
        if self.extras & X_PFC != 0 {
            return self.start_tx_pfc(pid, now);
        }
        let next = self.port_out(pid, now);
        let Some(pkt) = next else {
            self.wake_when_ready(pid, now);
            return;
        };
        self.transmit(pid, pkt, now);
    }

    /// Port `pid`'s discipline gave nothing though it holds packets: a shaper (ExpressPass
    /// credits) holds them back, so the port tries again when the discipline says.
    fn wake_when_ready(&mut self, pid: u32, now: SimTime) {
        let port = &self.w.net.ports[pid as usize];
        if !port.queue.is_empty() {
            if let Some(at) = dcfair_core::qdisc::Qdisc::ready_at(&port.queue.qdisc) {
                self.q.schedule(at.max(now), Event::Wake { port: pid });
            }
        }
    }

    /// Puts `pkt`, just out of port `pid`'s pipeline, on the wire: the port is busy until its
    /// last bit is out, when a `TxDone` follows if packets wait, and it arrives at the peer a
    /// link delay later.
    #[inline]
    fn transmit(&mut self, pid: u32, pkt: PktRef, now: SimTime) {
        let lossless_waiting = self.extras & X_PATH != 0 && self.transmit_extra(pid, pkt, now);
        let port = &mut self.w.net.ports[pid as usize];
        #[cfg(feature = "trace")]
        if port.measured {
            use std::fmt::Write as _;
            let p = self.slab.pkt(pkt.handle);
            let _ = writeln!(self.trace, "- {} {pid} {} {} {}", trace::t(now), p.flow, p.seq, p.size);
        }
        let done = now + port.tx_time(pkt.size);
        // shadow clock, as ns-2's LinkDelay: resume at now + txt, arrival at now + (txt + delay);
        // only float-clock runs need it
        let (done_f, at_f) = if self.w.float_clock {
            let txt_f = 8.0 * pkt.size as f64 / port.rate_f;
            (self.fnow + txt_f, self.fnow + (txt_f + port.delay_f))
        } else {
            (0.0, 0.0)
        };
        port.busy_until = done;
        if self.w.float_clock {
            port.busy_until_f = done_f; // a cold cache line otherwise
        }
        if done >= self.w.window_start && done <= self.w.end {
            port.window_bytes_out += pkt.size as u64;
        }
        let (node, local, at) = (port.peer_node, port.peer_port, done + port.delay);
        let pending = !port.queue.is_empty() || lossless_waiting;
        if pending {
            port.txdone_pending = true;
        }
        self.slab.launch(&pkt, node, local);
        if pending {
            self.at(done, done_f, Event::TxDone { port: pid });
        }
        if self.extras & X_PARTS != 0 {
            return self.arrive_across(at, pkt.handle, node);
        }
        self.at(at, at_f, Event::Arrive { pkt: pkt.handle });
    }

    /// What the extras do with a packet port `pid` puts on the wire: its trim reaches the packet,
    /// the port's telemetry hop, and the shared buffer lets it go. Returns whether lossless
    /// packets wait at the port.
    #[inline(never)]
    fn transmit_extra(&mut self, pid: u32, pkt: PktRef, now: SimTime) -> bool {
        if self.extras & X_TRIM != 0 {
            self.slab.write_trim(&pkt);
        }
        if self.extras & X_INT != 0 {
            self.int_stamp(pid, pkt.handle, pkt.size, now);
        }
        if let Some(sb) = self.w.buffers.as_deref_mut().and_then(|b| b.of(pid)) {
            sb.release(pkt.size);
        }
        self.w.pfc.as_deref().is_some_and(|pfc| !pfc.ports[pid as usize].q.is_empty())
    }

    /// Telemetry: the record of the packet just put in slot `h`: empty for one that collects,
    /// the answered packet's for one that echoes.
    #[inline(never)]
    fn int_record(&mut self, h: u32, int: u8) {
        let h = h as usize;
        if self.int.len() <= h {
            self.int.resize(h + 1, Telemetry::default());
        }
        self.int[h] = if int == telemetry::ECHO { self.int_echo } else { Telemetry::default() };
    }

    /// Telemetry: port `pid` appends its hop to the packet in slot `h` leaving it at `now`, if
    /// the port is a switch's and the packet collects.
    #[inline(never)]
    fn int_stamp(&mut self, pid: u32, h: u32, size: u32, now: SimTime) {
        if self.slab.pkt(h).int != telemetry::COLLECT {
            return;
        }
        let port = &self.w.net.ports[pid as usize];
        if self.w.net.nodes[port.node as usize].kind != crate::net::NodeKind::Switch {
            return;
        }
        let (mut sent, mut queued) = (port.queue.stats.dequeued_bytes, port.queue.len_bytes());
        if let Some(pfc) = self.w.pfc.as_deref() {
            let q = &pfc.ports[pid as usize].q;
            sent += q.bytes_out;
            queued += q.bytes;
        }
        let hop = IntHop { ts: now, tx_bytes: sent - size as u64, qlen_bytes: queued, rate: port.rate };
        self.int[h as usize].push(hop);
    }

    /// What the extras do with a packet that came in at switch `node` through its port `local`,
    /// routed to port `out`: a lossless packet goes through its gate to the lossless FIFO, a
    /// lossy one may be refused by the shared buffer. Returns whether it was dealt with.
    #[inline(never)]
    fn arrive_extra(&mut self, node: u32, local: u16, out: u32, r: PktRef, now: SimTime) -> bool {
        let class = self.slab.pkt(r.handle).class;
        if self.w.pfc.as_deref().is_some_and(|pfc| class == pfc.lossless) {
            let gate = self.w.net.nodes[node as usize].ports[local as usize];
            self.admit_lossless(out, r, gate, now);
            return true;
        }
        self.extras & X_BUFFER != 0 && !self.admit_shared(out, r)
    }

    /// Shared buffer: a lossy packet offered to port `pid` is stored in its switch's buffer, or
    /// refused there (an overflow drop of the port, its slot freed). Host ports store it.
    #[inline(never)]
    fn admit_shared(&mut self, pid: u32, pkt: PktRef) -> bool {
        let Some(sb) = self.w.buffers.as_deref_mut().and_then(|b| b.of(pid)) else { return true };
        let queue = &mut self.w.net.ports[pid as usize].queue;
        if sb.admit_lossy(queue.len_bytes(), pkt.size) {
            return true;
        }
        let d = &mut queue.stats.by_reason.dropped_before[dcfair_core::qdisc::DropReason::Overflow as usize];
        d.0 += 1;
        d.1 += pkt.size as u64;
        if self.w.net.ports[pid as usize].measured {
            self.w.port_drops.add(pid, self.slab.pkt(pkt.handle).flow, dcfair_core::qdisc::DropReason::Overflow, pkt.size);
        }
        self.slab.free(pkt.handle);
        false
    }

    /// The packets port `pid`'s discipline just dropped are counted by flow if the port is
    /// measured, and leave its switch's shared buffer (if any) and the slab ([`free_dropped`]).
    /// A call that dropped nothing costs one test.
    #[inline(always)]
    fn free_dropped_at(&mut self, pid: u32) {
        if self.qev.dropped.is_empty() {
            return;
        }
        let measured = self.w.net.ports[pid as usize].measured;
        free_dropped(&mut self.qev, &mut self.slab, &mut self.w.port_drops, self.w.buffers.as_deref_mut(), pid, measured);
    }

    /// PFC: a lossless packet that came in through switch port `gate` is offered to port `out`:
    /// the gate admits it (and may send a PAUSE up its link) or drops it for want of headroom.
    #[inline(never)]
    fn admit_lossless(&mut self, out: u32, r: PktRef, gate: u32, now: SimTime) {
        let pfc = self.w.pfc.as_deref_mut().expect("a PFC run");
        let mut sb = self.w.buffers.as_deref_mut().and_then(|b| b.of(out));
        let g = &mut pfc.ports[gate as usize].gate;
        if let Some(sb) = sb.as_deref() {
            g.xoff = sb.xoff(pfc.xoff);
            g.xon = g.xoff.saturating_sub(pfc.xoff - pfc.xon);
        }
        let admit = g.admit(r.size);
        if admit != dcfair_core::pfc::Admit::Drop && sb.as_deref_mut().is_some_and(|sb| !sb.admit_lossless(r.size)) {
            // the whole buffer is full: the gate gives the bytes back and counts the drop
            g.release(r.size);
            g.drops += 1;
            self.slab.free(r.handle);
            return;
        }
        match admit {
            dcfair_core::pfc::Admit::Drop => {
                self.slab.free(r.handle);
                return;
            }
            dcfair_core::pfc::Admit::Pause => self.pfc_send(gate, true, now),
            dcfair_core::pfc::Admit::Stored => {}
        }
        self.offer_lossless(out, r, gate, now);
    }

    /// PFC: a lossless packet joins port `pid`'s lossless FIFO (with the gate it came in
    /// through), and the port starts sending if it is idle.
    #[inline(never)]
    fn offer_lossless(&mut self, pid: u32, r: PktRef, gate: u32, now: SimTime) {
        self.w.pfc.as_deref_mut().expect("a PFC run").ports[pid as usize].q.push(r, gate);
        let port = &mut self.w.net.ports[pid as usize];
        if port.txdone_pending {
            return;
        }
        if now >= port.busy_until {
            self.start_tx_pfc(pid, now);
        } else {
            port.txdone_pending = true;
            let (at, f) = (port.busy_until, port.busy_until_f);
            self.at(at, f, Event::TxDone { port: pid });
        }
    }

    /// PFC's [`Sim::start_tx`]: the next packet of the two classes (round robin or the lossless
    /// class first, a paused lossless class skipped); with nothing to send but a paused lossless
    /// class, a `Wake` when the pause ends.
    #[inline(never)]
    fn start_tx_pfc(&mut self, pid: u32, now: SimTime) {
        let pfc = self.w.pfc.as_deref_mut().expect("a PFC run");
        let pp = &mut pfc.ports[pid as usize];
        let ready = !pp.q.is_empty() && !pp.pause.paused(now);
        let lossy_first = match pfc.scheduler {
            dcfair_core::pfc::ClassScheduler::Strict => false,
            dcfair_core::pfc::ClassScheduler::RoundRobin => pp.lossy_turn,
        };
        if ready && !lossy_first {
            return self.send_lossless(pid, now);
        }
        if let Some(pkt) = self.port_out(pid, now) {
            self.w.pfc.as_deref_mut().expect("a PFC run").ports[pid as usize].lossy_turn = false;
            return self.transmit(pid, pkt, now);
        }
        if ready {
            return self.send_lossless(pid, now);
        }
        let pp = &mut self.w.pfc.as_deref_mut().expect("a PFC run").ports[pid as usize];
        if !pp.q.is_empty() && pp.wake_at != pp.pause.until {
            pp.wake_at = pp.pause.until;
            let at = pp.wake_at;
            self.q.schedule(at, Event::Wake { port: pid });
        }
        self.wake_when_ready(pid, now);
    }

    /// PFC: whether the sender of flow `f`, a lossless one, must wait for its NIC: its NIC's
    /// lossless FIFO holds packets (paused, or busy with other flows'). It then waits in the
    /// NIC's list, once, and its timer runs when the FIFO has drained ([`Sim::send_lossless`]):
    /// a NIC that pulls packets from its queue pairs holds them there, not in a queue of its own.
    #[inline(never)]
    fn held_by_nic(&mut self, f: usize) -> bool {
        let pfc = self.w.pfc.as_deref_mut().expect("a PFC run");
        let flow = &self.w.flows[f];
        if flow.ends.class() != pfc.lossless {
            return false;
        }
        let nic = self.w.net.nodes[flow.ids.src as usize].ports[0];
        pfc.hold(nic, f as u32)
    }

    /// PFC: the head of port `pid`'s lossless FIFO goes on the wire, and leaves the gate it came
    /// in through (which may send a RESUME).
    #[inline(never)]
    fn send_lossless(&mut self, pid: u32, now: SimTime) {
        let pfc = self.w.pfc.as_deref_mut().expect("a PFC run");
        let pp = &mut pfc.ports[pid as usize];
        let (pkt, gate) = pp.q.pop().expect("a lossless packet ready");
        pp.lossy_turn = true;
        let drained = pp.q.is_empty() && pp.has_waiters();
        if gate != NO_GATE && pfc.ports[gate as usize].gate.release(pkt.size) {
            self.pfc_send(gate, false, now);
        }
        self.transmit(pid, pkt, now);
        if drained {
            // the senders held by this NIC (`held_by_nic`) go on, in the order they waited
            let waiters = self.w.pfc.as_deref_mut().expect("a PFC run").take_waiters(pid);
            for &f in &waiters {
                self.w.flows[f as usize].timer_at[0] = Some(now);
                self.q.schedule(now, Event::Timer { endpoint: f * 2 });
            }
            self.w.pfc.as_deref_mut().expect("a PFC run").give_back(pid, waiters);
        }
    }

    /// PFC: port `p`'s node sends a PAUSE (or a RESUME) through it.
    #[inline(never)]
    fn pfc_send(&mut self, p: u32, pause: bool, now: SimTime) {
        let pfc = self.w.pfc.as_deref_mut().expect("a PFC run");
        let sent = pfc.send(&self.w.net, p, pause, now);
        self.q.schedule(sent.at, Event::PfcFrame { port: sent.to });
        if let Some(t) = sent.refresh {
            self.q.schedule(t, Event::PfcRefresh { port: p });
        }
    }

    /// PFC: a frame reaches port `p`; a port it resumes starts sending if idle.
    #[inline(never)]
    fn pfc_frame(&mut self, now: SimTime, p: u32) {
        let Some(pfc) = self.w.pfc.as_deref_mut() else { return };
        if pfc.receive(p, now) {
            let port = &self.w.net.ports[p as usize];
            if !port.txdone_pending && now >= port.busy_until {
                self.start_tx_pfc(p, now);
            }
        }
    }

    /// PFC: gate `p` sends its PAUSE again while above XON, and the deadlock check runs; a
    /// deadlock ends the run.
    #[inline(never)]
    fn pfc_refresh(&mut self, now: SimTime, p: u32) {
        let Some(pfc) = self.w.pfc.as_deref_mut() else { return };
        if !pfc.refresh_due(p, now) {
            return;
        }
        self.pfc_send(p, true, now);
        let pfc = self.w.pfc.as_deref_mut().expect("a PFC run");
        if pfc.check_deadlock(&self.w.net, now).is_some() {
            self.w.end = now;
        }
    }

    /// The next hop of `pkt` at switch `sw` past the direct table (`Routes::next_global_port_walk`):
    /// out of line, with six arguments, all passed in registers (the walk itself takes eight).
    #[inline(never)]
    fn route_walk(w: &mut World, sw: u32, row: u32, col: u16, pkt: &mut Packet, now: SimTime) -> Option<u32> {
        w.routes.next_global_port_walk(sw, row, col, pkt, &mut w.route, &w.net.ports, now)
    }

    /// The packet in slab slot `h` arrives. At a switch it is updated and routed in its slot,
    /// and only its [`PktRef`] goes to the output port's discipline (no copy of the packet).
    fn arrive(&mut self, now: SimTime, h: u32) {
        let f = &mut self.slab.items[h as usize];
        let (node, port, col) = (f.node, f.port, f.col);
        let row = self.w.routes.row(node);
        if row != NO_ROW {
            let pkt = &mut f.pkt;
            pkt.ingress = port;
            pkt.hops = pkt.hops.saturating_add(1);
            // Routes were checked for every flow when the network was built.
            let hop = match self.w.routes.next_direct(row, pkt) {
                Some(p) => Some(p),
                None => Self::route_walk(&mut self.w, node, row, col, pkt, now),
            };
            let Some(out) = hop else {
                debug_assert!(false, "no route to {} at {}", pkt.dst, self.w.net.nodes[node as usize].name);
                self.slab.free(h);
                return;
            };
            let r = PktRef::of(h, pkt);
            if self.extras & X_PATH != 0 && self.arrive_extra(node, port, out, r, now) {
                return;
            }
            // only FairQ reads where a packet came in: a run without it looks nothing up
            let from = if self.w.fairq.is_some() { self.w.net.nodes[node as usize].ports[port as usize] } else { FROM_HOST };
            self.offer(out, r, from, now);
        } else {
            self.deliver(now, node, h);
        }
    }

    /// The packet in slab slot `h` reached host `host`: observe it and hand it to its flow's
    /// end there, which reads it in its slot (a copy would cost a pass over all its 152 bytes; a
    /// data segment's transport reads only the first two of its three cache lines). The slot is
    /// freed as soon as the endpoint is done with it, before its replies are emitted.
    fn deliver(&mut self, now: SimTime, host: u32, h: u32) {
        let pkt = &self.slab.items[h as usize].pkt;
        let f = pkt.flow as usize;
        #[cfg(feature = "trace")]
        {
            use std::fmt::Write as _;
            let _ = writeln!(self.trace, "r {} {f} {} {} {} {}", trace::t(now), pkt.seq, pkt.size, pkt.flags, pkt.ack);
        }
        let in_window = now >= self.w.window_start;
        let mut out = std::mem::take(&mut self.scratch);
        let flow = &mut self.w.flows[f];
        // a run without bonds reads no flow's `bond` (one predictable branch per packet)
        let b = if self.w.bonds.is_empty() { NO_BOND } else { flow.bond };
        if host == flow.ids.dst {
            let size = pkt.size;
            let got = if self.extras & X_INT != 0 && pkt.int != telemetry::NONE {
                self.int_echo = self.int[h as usize];
                flow.ends.on_packet_int(Side::Receiver, pkt, self.int_echo.hops(), now, &mut out)
            } else {
                flow.ends.receive(pkt, now, &mut out)
            };
            if self.extras & X_ORDER != 0 && got.arrival {
                Self::count_order(&mut self.order[f], &self.slab.items[h as usize].pkt);
            }
            self.slab.free(h);
            if got.arrival {
                self.obs[f].arrival(now, flow.start, size, in_window);
            }
            let delivered = got.delivered;
            if b != NO_BOND {
                let bd = &mut self.w.bonds[b as usize];
                let k = f - bd.bond.flows().start;
                let advanced = bd.bond.after_receive(k, delivered);
                if advanced > 0 {
                    bd.obs.arrival(now, bd.bond.start(), advanced.min(u32::MAX as u64) as u32, in_window);
                    if bd.obs.completed.is_none() && bd.bond.size().is_some_and(|s| bd.bond.delivered_bytes() >= s) {
                        bd.obs.completed = Some(now);
                    }
                }
            }
            if let Some(size) = flow.size {
                if self.obs[f].completed.is_none() && delivered >= size {
                    self.obs[f].completed = Some(now);
                    if Self::job_transfer_arrived(&mut self.w.jobs, &mut self.q, f as u32, now) {
                        self.w.end = now; // the last job ended a run that has nothing else
                    }
                }
            }
            if let Some(ic) = &mut self.w.incast {
                match ic.on_delivered(f as u32, delivered, now) {
                    RoundEnd::NotYet => {}
                    RoundEnd::NextRequestAt(at) => self.q.schedule(at, Event::Request),
                    // The last answer is in: the run ends here unless other traffic runs.
                    RoundEnd::LastRound if ic.ends_run => self.w.end = now,
                    RoundEnd::LastRound => {}
                }
            }
            if got.one_way {
                // a receiver that answers nothing and keeps no timer (a UDP sink)
                self.scratch = out;
                return;
            }
            if let Some(fq) = self.w.fairq.as_deref() {
                if let Some(shift) = flow.ends.window_shift() {
                    fq.tag(&mut out, shift);
                }
            }
            let dst = flow.ids.dst;
            self.note_deadline(f, Side::Receiver, now);
            self.emit(now, dst, &mut out);
            self.scratch = out;
            self.rearm(f, Side::Receiver);
        } else {
            if b != NO_BOND {
                let bond = &mut self.w.bonds[b as usize].bond;
                let r = bond.flows();
                bond.before_packet(&mut self.w.flows[r.clone()], f - r.start, Side::Sender);
            }
            let flow = &mut self.w.flows[f];
            if self.extras & X_INT != 0 && pkt.int != telemetry::NONE {
                flow.ends.on_packet_int(Side::Sender, pkt, self.int[h as usize].hops(), now, &mut out);
            } else {
                flow.ends.on_packet(Side::Sender, pkt, now, &mut out);
            }
            self.slab.free(h);
            #[cfg(feature = "trace")]
            self.trace.push_str(&trace::sender(now, f, "ack", &flow.ends));
            let src = flow.ids.src;
            let touched = if b != NO_BOND { self.bond_send(b, now, &mut out) } else { 0 };
            self.note_deadline(f, Side::Sender, now);
            self.emit(now, src, &mut out);
            self.scratch = out;
            self.rearm(f, Side::Sender);
            if touched != 0 {
                self.rearm_bond(b, touched, now);
            }
        }
    }

    /// The data packet `pkt` arrived at its receiver in a run that counts reordering: `order`,
    /// its flow's count, sees it. Out of line: the delivery path of a run that counts nothing
    /// stays as it was.
    #[cold]
    #[inline(never)]
    fn count_order(order: &mut Order, pkt: &Packet) {
        order.arrival(pkt.seq, pkt.seq + pkt.payload as u64);
    }

    /// A flow starts: its sender opens (and, for a flow of a bond, the bond may make its other
    /// senders send).
    #[inline(never)]
    fn start(&mut self, now: SimTime, f: usize) {
        self.w.flows[f].start = now;
        let mut out = std::mem::take(&mut self.scratch);
        self.w.flows[f].ends.start(now, &mut out);
        let b = self.w.flows[f].bond;
        let touched = if b != NO_BOND { self.bond_send(b, now, &mut out) } else { 0 };
        #[cfg(feature = "trace")]
        self.trace.push_str(&trace::sender(now, f, "start", &self.w.flows[f].ends));
        let src = self.w.flows[f].ids.src;
        self.after_timed(now, f, Side::Sender, src, out);
        if touched != 0 {
            self.rearm_bond(b, touched, now);
        }
    }

    /// Flow `f`, a finite flow, completed at `now`: the jobs' flows that can start now start (a
    /// `Start` event each, at once or after a compute gap). Returns whether the last job ended a
    /// run that has nothing else (the caller ends it: handing this function the run's end
    /// would cost every packet of every run, as the end would then be reloaded).
    #[cold]
    #[inline(never)]
    fn job_transfer_arrived(jobs: &mut Option<Box<Jobs>>, q: &mut EventQueue, f: u32, now: SimTime) -> bool {
        let Some(jobs) = jobs.as_deref_mut() else { return false };
        for &(at, g) in jobs.on_arrived(f, now) {
            q.schedule(at, Event::Start { flow: g });
        }
        jobs.ends_run && jobs.all_done()
    }

    /// After a sender of bond `b` took a packet or started: the bond may make its senders
    /// send; returns the flows it touched (bit k: the bond's flow k).
    fn bond_send(&mut self, b: u32, now: SimTime, out: &mut Vec<Packet>) -> u32 {
        let bond = &mut self.w.bonds[b as usize].bond;
        let r = bond.flows();
        bond.after_send(&mut self.w.flows[r], now, out)
    }

    /// The sender timers of the flows of bond `b` in the mask (bit k: the bond's flow k).
    fn rearm_bond(&mut self, b: u32, mut mask: u32, now: SimTime) {
        let first = self.w.bonds[b as usize].bond.flows().start;
        while mask != 0 {
            let k = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            self.note_deadline(first + k, Side::Sender, now);
            self.rearm(first + k, Side::Sender);
        }
    }

    /// After end `side` of flow `f` started or took its timer: what it emitted leaves `host`,
    /// and its timer is re-armed, lazily or, for a clock, at exactly its next tick (scheduled
    /// before what it emitted).
    #[inline(always)]
    fn after_timed(&mut self, now: SimTime, f: usize, side: Side, host: u32, mut out: Vec<Packet>) {
        if self.w.flows[f].ends.clocked() {
            if let Some(d) = self.w.flows[f].ends.deadline(side) {
                self.w.flows[f].timer_at[side.index()] = Some(d);
                let fd = self.fnow + d.saturating_since(now).as_secs_f64();
                self.at(d, fd, Event::Timer { endpoint: (f * 2 + side.index()) as u32 });
            }
            self.emit(now, host, &mut out);
            self.scratch = out;
            return;
        }
        self.note_deadline(f, side, now);
        self.emit(now, host, &mut out);
        self.scratch = out;
        self.rearm(f, side);
    }

    /// Makes sure end `side` of flow `f` has a timer event at or before its deadline.
    #[inline]
    fn rearm(&mut self, f: usize, side: Side) {
        let flow = &mut self.w.flows[f];
        let deadline = flow.ends.deadline(side);
        let s = side.index();
        if let Some(d) = deadline {
            if flow.timer_at[s].is_none_or(|t| d < t) {
                let d = d.max(self.q.now());
                flow.timer_at[s] = Some(d);
                let fd = flow.timer_f[s];
                let ev = Event::Timer { endpoint: (f * 2 + s) as u32 };
                if self.w.timer_coin.as_mut().is_some_and(|rng| rng.gen::<bool>()) {
                    self.q.schedule_last(d, ev);
                } else {
                    self.at(d, fd, ev);
                }
            }
        }
    }

    /// Float-clock mode: when end `side` of flow `f` has a new deadline, its shadow-clock time
    /// is `fnow + (deadline - now)` (ns-2: `resched(rto)` at the current time).
    #[inline]
    fn note_deadline(&mut self, f: usize, side: Side, now: SimTime) {
        if !self.w.float_clock {
            return;
        }
        let flow = &mut self.w.flows[f];
        let s = side.index();
        let d = flow.ends.deadline(side);
        if d != flow.deadline_seen[s] {
            flow.deadline_seen[s] = d;
            if let Some(d) = d {
                flow.timer_f[s] = self.fnow + d.saturating_since(now).as_secs_f64();
            }
        }
    }

    fn timer(&mut self, now: SimTime, endpoint: u32) {
        let (f, side) = ((endpoint / 2) as usize, Side::BOTH[(endpoint % 2) as usize]);
        let flow = &mut self.w.flows[f];
        if flow.timer_at[side.index()] != Some(now) {
            return; // superseded by an earlier timer event that already ran
        }
        flow.timer_at[side.index()] = None;
        if self.extras & X_PFC != 0 && side == Side::Sender && self.held_by_nic(f) {
            return;
        }
        let flow = &mut self.w.flows[f];
        let mut out = std::mem::take(&mut self.scratch);
        flow.ends.on_timer(side, now, &mut out);
        let host = match side {
            Side::Sender => {
                #[cfg(feature = "trace")]
                self.trace.push_str(&trace::sender(now, f, "timer", &flow.ends));
                flow.ids.src
            }
            Side::Receiver => {
                if let Some(fq) = self.w.fairq.as_deref() {
                    if let Some(shift) = flow.ends.window_shift() {
                        fq.tag(&mut out, shift);
                    }
                }
                flow.ids.dst
            }
        };
        self.after_timed(now, f, side, host, out);
    }

    /// The incast client asks every server for its share of the next block, all at once.
    #[inline(never)]
    fn request(&mut self, now: SimTime) {
        let Some(ic) = &mut self.w.incast else { return };
        ic.issued += 1;
        ic.round_start = now;
        ic.pending = ic.servers;
        ic.answered.iter_mut().for_each(|a| *a = false);
        // borrowed out of the incast for the loop, put back after (no copy per request)
        let (first, servers, bytes, per_request) = (ic.first, ic.servers, ic.per_server, ic.per_request.take());
        for f in first..first + servers {
            let mut out = std::mem::take(&mut self.scratch);
            let flow = &mut self.w.flows[f as usize];
            match &per_request {
                Some(tcp) => flow.ends.reconnect(&mut flow.ids, tcp, bytes, now, &mut out),
                None => flow.ends.write(bytes, now, &mut out),
            }
            let src = flow.ids.src;
            self.note_deadline(f as usize, Side::Sender, now);
            self.emit(now, src, &mut out);
            self.scratch = out;
            self.rearm(f as usize, Side::Sender);
        }
        if let Some(ic) = &mut self.w.incast {
            ic.per_request = per_request;
        }
    }

    /// A `SeriesTick`: sample, then schedule the next tick if it falls inside the run.
    #[inline(never)]
    fn series_tick(&mut self, now: SimTime) {
        let Some(s) = self.w.series.as_mut() else { return };
        s.sample(now, &self.w.net, self.w.pfc.as_deref(), &self.w.flows, &self.w.flow_group);
        let next = s.advance();
        if next <= self.w.end && next > now {
            self.q.schedule(next, Event::SeriesTick);
        }
    }

    /// A `FairqSample`: the FairQ ports sample their queues; the next sample if inside the run.
    #[inline(never)]
    fn fairq_sample(&mut self, now: SimTime) {
        let Some(fq) = self.w.fairq.as_deref_mut() else { return };
        fq.sample(&self.w.net);
        let next = now + fq.sample_interval();
        if next <= self.w.end {
            self.q.schedule(next, Event::FairqSample);
        }
    }

    /// A `FairqTick`: the FairQ controllers run; the next tick if inside the run.
    #[inline(never)]
    fn fairq_tick(&mut self, now: SimTime) {
        let Some(fq) = self.w.fairq.as_deref_mut() else { return };
        fq.tick(now);
        let next = now + fq.tick_interval();
        if next <= self.w.end {
            self.q.schedule(next, Event::FairqTick);
        }
    }

    /// Snapshot of cumulative counters when the measurement window opens.
    #[inline(never)]
    fn open_window(&mut self) {
        // a part of a run on several threads: its own flows and ports (`arena.rs`)
        for i in (0..self.w.flows.len()).filter(|&i| self.w.flows.owns(i)).collect::<Vec<_>>() {
            let f = &mut self.w.flows[i];
            f.delivered_at_window = f.delivered_bytes();
            f.sent_at_window = f.data_pkts_sent();
        }
        for b in &mut self.w.bonds {
            b.delivered_at_window = b.bond.delivered_bytes();
        }
        let ports = &self.w.net.ports;
        self.drops_at_window = (0..ports.len()).map(|i| if ports.owns(i) { ports[i].queue.stats.drops_pkts() } else { 0 }).collect();
    }

    /// Packets port `i` dropped from the instant the measurement window opened (all of them if
    /// it has not opened).
    pub fn window_drops(&self, i: usize) -> u64 {
        self.w.net.ports[i].queue.stats.drops_pkts() - self.drops_at_window.get(i).copied().unwrap_or(0)
    }

    /// Packets each measured port dropped from the instant the measurement window opened (all
    /// of them if it has not opened), in port order: `window_drops` of ports.csv and summary.json.
    pub fn measured_window_drops(&self) -> impl Iterator<Item = u64> + '_ {
        self.w.net.ports.iter().enumerate().filter(|(_, p)| p.measured).map(|(i, _)| self.window_drops(i))
    }
}
