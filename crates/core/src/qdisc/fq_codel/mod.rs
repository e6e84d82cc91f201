//! FQ-CoDel: FlowQueue-CoDel (RFC 8290), as Linux `net/sched/sch_fq_codel.c` behaves.
//!
//! Flows are hashed into `flows` queues served by deficit round robin with two lists: queues
//! that just became active ("new") are served before the backlogged ones ("old"), so the
//! packets of sparse flows (a query, an ACK stream, anything sending below its fair rate) skip
//! the backlog. Each queue runs its own CoDel law (`codel/mod.rs`) at dequeue; when the shared
//! buffer overflows, packets are dropped from the head of the queue holding the most bytes
//! (Hoeiland-Joergensen et al., RFC 8290, 2018; evaluated in the data center against DCTCP and
//! pFabric by paper 003, "FQ-CoDel in the data center").
//!
//! Rules:
//! - Classification: queue = `hash_flow(pkt.flow_key(), salt) % flows`; the salt is drawn once
//!   from the port's stream. Flows that collide share one queue (one FIFO, one CoDel state).
//! - Enqueue: the packet is stamped with `now` and appended to its queue. A queue that is in
//!   neither list joins the tail of the *new* list with `deficit = quantum_bytes` (a queue that
//!   is still in a list, even empty, keeps its place and deficit, as in Linux).
//! - Overflow: if, with the arrival stored, the buffer exceeds `queue.limit_pkts` or
//!   `limit_bytes`, the queue with the most bytes (the lowest index among equals; the
//!   arrival counts in its own queue) loses packets from its head, [`DropReason::LongestQueue`],
//!   until `drop_batch` packets are gone or at least half of its bytes (Linux
//!   `fq_codel_drop`); its CoDel `count` grows by the number dropped. With a packet limit one
//!   batch always suffices; with a byte limit batches repeat until the buffer fits. When the
//!   batch empties the arrival's own queue the arrival itself is among the dropped and is
//!   reported refused (`queued == false`). A packet larger than the whole byte limit is refused
//!   at once ([`DropReason::Overflow`]).
//! - Dequeue (RFC 8290 section 4.2): take the first queue of the new list, else of the old
//!   list, else nothing. If its deficit is not positive, add `quantum_bytes` and move it to the
//!   tail of the old list; repeat. Otherwise let its CoDel law dequeue from it (dropping or
//!   marking on the way, [`DropReason::Codel`] / [`crate::qdisc::MarkReason::Codel`]). If that
//!   gives no packet (the queue is empty): a queue from the new list moves to the tail of the
//!   old list if the old list is not empty (so a flow cannot stay "new" forever and starve the
//!   old ones), otherwise it leaves the lists; a queue from the old list leaves the lists;
//!   repeat. If it gives a packet, subtract its size from the deficit and send it.
//! - CoDel per queue (see `codel/mod.rs`): sojourn from the packet's enqueue stamp; the backlog
//!   compared with one MTU is the *whole* discipline's (as Linux passes `sch->qstats.backlog`).
//!
//! Parameters (`[queue.fq_codel]`; the buffer is `queue.limit_pkts` / `limit_bytes`):
//! `docs/mechanisms/fq_codel.md`.
//!
//! The data-center scaling of paper 003 (section IV): the defaults target 5 ms and interval
//! 100 ms were chosen for access links and human time scales; with a 12 us RTT and 1.2 us per
//! MTU at 10 Gbps, the paper divides both by 1000: `target_us = 5`, `interval_us = 100` (about
//! 4 packets per queue at 10 Gbps). dcfair keeps Linux's defaults and the paper's values are set
//! in its scenarios (`[queue.fq_codel] target_us = 5.0, interval_us = 100.0`).
//!
//! `target_us >= interval_us` is accepted (see `codel/mod.rs`). Differences from Linux: `ecn`
//! defaults to false here (Linux's fq_codel turns it on; dcfair's TCP never sets ECT unless a
//! transport asks for it, so the default only matters for ECN transports); no GSO splitting
//! (a packet is one MTU-sized frame at most); no `memory_limit` (Linux's 32 MB truesize cap:
//! set `queue.limit_bytes`); Linux raises a quantum below 256 to 256, dcfair takes it as given;
//! the fattest queue under a byte limit may be hit by several batches (Linux does one batch per
//! enqueue and may overshoot its memory limit). CoDel's spacing is exact (see `codel/mod.rs`).
//! Cost: O(1) per enqueue and dequeue (plus O(1) per CoDel drop); an overflow scans the
//! `flows` byte counters to find the fattest (O(flows), as Linux, amortized over up to
//! `drop_batch` drops). Packets live in one slab grown to the peak occupancy; nothing is
//! allocated per packet afterwards.
//! Randomness: stream `("qdisc.fq_codel", port_index)`, one draw (the salt).
//! Validation of the configuration: [`FqCodelConfig::validate`]; of the rules: the tests
//! below, the scenario test `crates/sim/tests/runs/fq_codel.rs`, and `docs/mechanisms/fq_codel.md`.

use super::codel::{validate_law, CodelParams, CodelQueue, CodelVars, InvSqrt};
use super::bucket_fifos::NIL;
use super::framework::{Discipline, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::config::{ConfigError, Limit};
use crate::packet::{FlowHasher, Packet};
use crate::time::SimTime;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// Largest `flows` accepted (Linux's limit).
pub const MAX_FLOWS: u32 = 65_536;
/// Largest `quantum_bytes` accepted (Linux's limit).
pub const MAX_QUANTUM_BYTES: u32 = 1 << 20;

/// `[queue.fq_codel]`: see the module documentation for the meaning of every key.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FqCodelConfig {
    pub flows: u32,
    pub quantum_bytes: u32,
    pub target_us: f64,
    pub interval_us: f64,
    pub drop_batch: u32,
    pub ecn: bool,
    pub ce_threshold_us: Option<f64>,
    pub invsqrt: InvSqrt,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            flows: 1024,
            quantum_bytes: 1514,
            target_us: 5000.0,
            interval_us: 100_000.0,
            drop_batch: 64,
            ecn: false,
            ce_threshold_us: None,
            invsqrt: InvSqrt::Exact,
        }
    }
}

impl FqCodelConfig {
    /// Rejects impossible values; the key is relative to `[queue.fq_codel]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.flows == 0 || self.flows > MAX_FLOWS {
            return Err(ConfigError::new("flows", format!("must be in 1..={MAX_FLOWS}, got {}", self.flows)));
        }
        if self.quantum_bytes == 0 || self.quantum_bytes > MAX_QUANTUM_BYTES {
            return Err(ConfigError::new(
                "quantum_bytes",
                format!("must be in 1..={MAX_QUANTUM_BYTES} bytes, got {}", self.quantum_bytes),
            ));
        }
        if self.drop_batch == 0 {
            return Err(ConfigError::new("drop_batch", "must be at least 1 packet"));
        }
        validate_law(self.target_us, self.interval_us, self.ce_threshold_us)
    }
}

// ---------------------------------------------------------------------------------------------
// Per-queue state and packet store
// ---------------------------------------------------------------------------------------------

/// Which list a queue is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum InList {
    None,
    New,
    Old,
}

/// Everything one queue holds, on one cache line (64 bytes, aligned): its FIFO's ends and bytes
/// (Linux `backlogs[]`), its link in the new or old list, its deficit, and its CoDel state.
/// (Four arrays of `flows` entries cost three to four cold lines per packet at each of a
/// fabric's FQ-CoDel ports, `bench/pfabric.py`; the CoDel state on a line of its own, one more
/// at every dequeue.)
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Slot {
    fifo: Fifo,
    deficit: i64,
    /// Next queue in the same list.
    next: u32,
    list: InList,
    vars: CodelVars,
}

/// A queue's FIFO of cells: its ends and its bytes (scanned for the fattest queue). Apart from
/// the CoDel state in the same [`Slot`], so that the law can borrow both at once.
#[derive(Clone, Copy, Debug)]
struct Fifo {
    backlog: u64,
    head: u32,
    tail: u32,
}

const EMPTY_SLOT: Slot = Slot {
    fifo: Fifo { backlog: 0, head: NIL, tail: NIL },
    deficit: 0,
    next: NIL,
    list: InList::None,
    vars: CODEL_VARS_INIT,
};

const _: () = assert!(std::mem::size_of::<Slot>() == 64, "one queue, one cache line");

/// [`CodelVars::default`], as a constant.
const CODEL_VARS_INIT: CodelVars =
    CodelVars { first_above_time: SimTime::ZERO, drop_next: SimTime::ZERO, count: 0, lastcount: 0, rec_inv_sqrt: 0, dropping: false };

#[derive(Debug)]
struct Cell<P = Packet> {
    pkt: P,
    /// Enqueue time (CoDel's timestamp).
    enq: SimTime,
    next: u32,
}

/// Packets: one singly linked FIFO per queue, cells in one slab.
#[derive(Debug)]
struct Cells<P = Packet> {
    cells: Vec<Cell<P>>,
    free: u32,
    total_pkts: usize,
    total_bytes: u64,
}

impl<P: QPacket> Cells<P> {
    #[inline]
    fn push_back(&mut self, f: &mut Fifo, pkt: P, enq: SimTime) {
        let size = pkt.size() as u64;
        let c = if self.free != NIL {
            let c = self.free;
            let cell = &mut self.cells[c as usize];
            self.free = cell.next;
            *cell = Cell { pkt, enq, next: NIL };
            c
        } else {
            self.cells.push(Cell { pkt, enq, next: NIL });
            (self.cells.len() - 1) as u32
        };
        let t = f.tail;
        f.tail = c;
        f.backlog += size;
        if t == NIL {
            f.head = c;
        } else {
            self.cells[t as usize].next = c;
        }
        self.total_pkts += 1;
        self.total_bytes += size;
    }

    #[inline]
    fn pop_front(&mut self, f: &mut Fifo) -> Option<(P, SimTime)> {
        let c = f.head;
        if c == NIL {
            return None;
        }
        let cell = &mut self.cells[c as usize];
        let pkt = std::mem::take(&mut cell.pkt);
        let enq = cell.enq;
        let next = cell.next;
        cell.next = self.free;
        self.free = c;
        f.head = next;
        if next == NIL {
            f.tail = NIL;
        }
        let size = pkt.size() as u64;
        f.backlog -= size;
        self.total_pkts -= 1;
        self.total_bytes -= size;
        Some((pkt, enq))
    }
}

/// The queues' slots and the cells of their packets.
#[derive(Debug)]
struct Store<P = Packet> {
    cells: Cells<P>,
    /// The `n` slots, allocated at the first packet (empty until then: a port that never
    /// queues holds none).
    slots: Vec<Slot>,
    n: u32,
}

impl<P: QPacket> Store<P> {
    fn new(n: u32) -> Self {
        let cells = Cells { cells: Vec::new(), free: NIL, total_pkts: 0, total_bytes: 0 };
        Store { cells, slots: Vec::new(), n }
    }

    #[inline]
    fn push_back(&mut self, q: u32, pkt: P, enq: SimTime) {
        if self.slots.is_empty() {
            self.allocate();
        }
        self.cells.push_back(&mut self.slots[q as usize].fifo, pkt, enq)
    }

    #[cold]
    #[inline(never)]
    fn allocate(&mut self) {
        self.slots = vec![EMPTY_SLOT; self.n as usize];
    }

    #[inline]
    fn pop_front(&mut self, q: u32) -> Option<(P, SimTime)> {
        self.cells.pop_front(&mut self.slots[q as usize].fifo)
    }

    /// Queue `q`'s backlog in bytes (0 before the first packet).
    #[cfg(test)]
    fn backlog(&self, q: u32) -> u64 {
        self.slots.get(q as usize).map_or(0, |s| s.fifo.backlog)
    }

    #[inline]
    fn is_empty(&self, q: u32) -> bool {
        self.slots[q as usize].fifo.head == NIL
    }
}

/// One queue seen by its CoDel law: its FIFO, borrowed beside its CoDel state.
struct QueueView<'a, P> {
    cells: &'a mut Cells<P>,
    fifo: &'a mut Fifo,
}

impl<P: QPacket> CodelQueue for QueueView<'_, P> {
    type Pkt = P;
    #[inline]
    fn pop(&mut self) -> Option<(P, SimTime)> {
        self.cells.pop_front(self.fifo)
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.cells.total_bytes
    }
}

// ---------------------------------------------------------------------------------------------
// Scheduling state: the new and old lists
// ---------------------------------------------------------------------------------------------

/// A FIFO of queue indices linked through `Slot::next`.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY_LIST: List = List { head: NIL, tail: NIL };

#[inline]
fn list_push(l: &mut List, slots: &mut [Slot], q: u32) {
    slots[q as usize].next = NIL;
    if l.tail == NIL {
        l.head = q;
    } else {
        slots[l.tail as usize].next = q;
    }
    l.tail = q;
}

#[inline]
fn list_pop(l: &mut List, slots: &mut [Slot]) -> u32 {
    let q = l.head;
    debug_assert_ne!(q, NIL);
    l.head = slots[q as usize].next;
    if l.head == NIL {
        l.tail = NIL;
    }
    slots[q as usize].next = NIL;
    q
}

// ---------------------------------------------------------------------------------------------
// FQ-CoDel
// ---------------------------------------------------------------------------------------------

/// The FQ-CoDel discipline; see the module documentation.
#[derive(Debug)]
pub struct FqCodel<P = Packet> {
    store: Store<P>,
    new_flows: List,
    old_flows: List,
    limit: Limit,
    n: u32,
    /// `n - 1` when `n` is a power of two (the modulo is then a mask), else 0.
    mask: u32,
    quantum: i64,
    drop_batch: u32,
    params: CodelParams,
    /// The salt, drawn once from the port's stream, mixed.
    hasher: FlowHasher,
}

impl<P: QPacket> FqCodel<P> {
    pub fn new(c: &FqCodelConfig, limit: Limit, ctx: &PortContext) -> Self {
        let n = c.flows.clamp(1, MAX_FLOWS);
        let mut rng = ctx.streams.stream("qdisc.fq_codel", ctx.port_index);
        let salt: u64 = rng.gen();
        FqCodel {
            store: Store::new(n),
            new_flows: EMPTY_LIST,
            old_flows: EMPTY_LIST,
            limit,
            n,
            mask: if n.is_power_of_two() { n - 1 } else { 0 },
            quantum: c.quantum_bytes.max(1) as i64,
            drop_batch: c.drop_batch.max(1),
            params: CodelParams::new(c.target_us, c.interval_us, c.ecn, c.ce_threshold_us, ctx.mtu).with_invsqrt(c.invsqrt),
            hasher: FlowHasher::new(salt),
        }
    }

    /// The queue `pkt` is hashed to.
    #[inline]
    pub fn queue_of(&self, pkt: &P) -> u32 {
        let h = self.hasher.hash(pkt.flow_key());
        if self.mask != 0 {
            (h & self.mask as u64) as u32 // the same as `% n` for a power of two
        } else {
            (h % self.n as u64) as u32
        }
    }

    #[inline]
    fn over_limit(&self) -> bool {
        self.limit.pkts.is_some_and(|p| self.store.cells.total_pkts > p as usize)
            || self.limit.bytes.is_some_and(|b| self.store.cells.total_bytes > b)
    }

    /// The queue with the most bytes, the lowest index among equals (Linux `fq_codel_drop`);
    /// `arrival` (never empty here) if every queue holds zero bytes (zero-size packets only).
    ///
    /// Only queues on the new or old list can hold bytes (a queue joins a list when a packet
    /// arrives to it and leaves only when found empty), so the lists are scanned instead of all
    /// `flows` queues: the same answer, the lowest index among equals kept explicitly, at the
    /// cost of the active queues rather than of 1024 (a third of the run time at 240-packet
    /// buffers under overflow in `bench/pfabric.py`).
    fn fattest(&self, arrival: u32) -> u32 {
        let mut best = arrival;
        let mut max = 0u64;
        for list in [&self.new_flows, &self.old_flows] {
            let mut q = list.head;
            while q != NIL {
                let slot = &self.store.slots[q as usize];
                let b = slot.fifo.backlog;
                if b > max || (b == max && b > 0 && q < best) {
                    max = b;
                    best = q;
                }
                q = slot.next;
            }
        }
        debug_assert!(self.store.slots.iter().all(|s| s.fifo.backlog <= max), "a backlogged queue is on no list");
        best
    }

    /// Drops one batch from the head of the fattest queue; `arrival` is the queue the packet
    /// just stored (at its tail) belongs to. Returns true if the arrival itself was dropped.
    /// Out of line and cold: most arrivals fit, and `enqueue` without it spills fewer
    /// registers (L1 data misses -4 % in the 300-flow run of `bench/pfabric.py`).
    #[cold]
    #[inline(never)]
    fn drop_batch(&mut self, arrival: u32, ev: &mut QdiscEvents<P>) -> bool {
        let fat = self.fattest(arrival);
        let threshold = self.store.slots[fat as usize].fifo.backlog / 2;
        let (mut i, mut len) = (0u32, 0u64);
        let mut arrival_dropped = false;
        while let Some((pkt, _)) = self.store.pop_front(fat) {
            len += pkt.size() as u64;
            i += 1;
            if fat == arrival && self.store.is_empty(fat) {
                arrival_dropped = true;
                ev.drop(pkt, DropReason::LongestQueue, false);
                break;
            }
            ev.drop(pkt, DropReason::LongestQueue, true);
            if i >= self.drop_batch || len >= threshold {
                break;
            }
        }
        let v = &mut self.store.slots[fat as usize].vars;
        v.count = v.count.saturating_add(i);
        arrival_dropped
    }

    /// The CoDel state of queue `q` (tests, traces).
    pub fn codel_vars(&self, q: u32) -> &CodelVars {
        debug_assert!(q < self.n, "queue {q} of {}", self.n);
        self.store.slots.get(q as usize).map_or(&EMPTY_SLOT.vars, |s| &s.vars)
    }
}

impl<P: QPacket> Discipline for FqCodel<P> {
    type Config = FqCodelConfig;
    fn validate(cfg: &FqCodelConfig, _limit: Limit) -> Result<(), ConfigError> {
        cfg.validate()
    }
    fn build(cfg: &FqCodelConfig, limit: Limit, ctx: &PortContext) -> Self {
        FqCodel::new(cfg, limit, ctx)
    }
}

impl<P: QPacket> Qdisc for FqCodel<P> {
    type Pkt = P;

    #[inline]
    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        if !self.limit.fits(0, 0, pkt.size()) {
            ev.drop(pkt, DropReason::Overflow, false);
            return;
        }
        let q = self.queue_of(&pkt);
        self.store.push_back(q, pkt, now);
        let s = &mut self.store.slots[q as usize];
        if s.list == InList::None {
            s.list = InList::New;
            s.deficit = self.quantum;
            list_push(&mut self.new_flows, &mut self.store.slots, q);
        }
        while self.over_limit() {
            if self.drop_batch(q, ev) {
                break;
            }
        }
    }

    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        loop {
            let from_new = self.new_flows.head != NIL;
            let q = if from_new {
                self.new_flows.head
            } else if self.old_flows.head != NIL {
                self.old_flows.head
            } else {
                return None;
            };
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let slots = &mut self.store.slots;
            let s = &mut slots[q as usize];
            if s.deficit <= 0 {
                s.deficit += self.quantum;
                s.list = InList::Old;
                list_pop(list, slots);
                list_push(&mut self.old_flows, slots, q);
                continue;
            }
            let Slot { fifo, vars, .. } = s;
            let out = if fifo.head == NIL {
                // What the law does with an empty queue (CoDel's `dropping` ends), without the
                // law: about half of the visits here find the queue empty (a sparse flow's queue
                // is visited once more in each list after its packet left; `bench/pfabric.py`).
                vars.dropping = false;
                None
            } else {
                vars.dequeue(&self.params, &mut QueueView { cells: &mut self.store.cells, fifo }, now, ev)
            };
            let s = &mut self.store.slots[q as usize];
            match out {
                Some(pkt) => {
                    s.deficit -= pkt.size() as i64;
                    return Some(pkt);
                }
                None => {
                    let slots = &mut self.store.slots;
                    list_pop(list, slots);
                    if from_new && self.old_flows.head != NIL {
                        slots[q as usize].list = InList::Old;
                        list_push(&mut self.old_flows, slots, q);
                    } else {
                        slots[q as usize].list = InList::None;
                    }
                }
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.store.cells.total_pkts
    }
    fn len_bytes(&self) -> u64 {
        self.store.cells.total_bytes
    }
    fn name(&self) -> &'static str {
        "fq_codel"
    }
}

#[cfg(test)]
mod tests;
