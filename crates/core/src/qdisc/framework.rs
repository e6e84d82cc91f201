//! What every discipline is and what the framework keeps around it: the [`Qdisc`] trait, the
//! packet view [`QPacket`], typed drop and mark reasons, the events of one call, the accounting
//! wrapper [`Queue`], and the [`Discipline`] trait through which the registry builds a
//! discipline from its `[queue.<kind>]` table.
//!
//! Rules (the module documentation of [`crate::qdisc`] states them in full):
//! - A discipline decides; [`Queue`] counts. After every call the queue's count of stored
//!   packets and bytes equals the discipline's, and `stored = enqueued - dequeued -
//!   dropped_after`; a received packet is one enqueued or dropped before enqueue.
//! - This module knows no discipline: disciplines import it, the registry imports them.

use crate::config::{ConfigError, Limit};
use crate::packet::{Addr, Ecn, Packet, Proto};
use crate::rng::Streams;
use crate::time::{BitsPerSec, SimTime};
use serde::de::DeserializeOwned;

/// Why a discipline dropped a packet. The names are the `drops_<reason>` columns of `ports.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The arriving packet found the buffer (or the queue it belongs in) full.
    Overflow = 0,
    /// RED: probabilistic early drop between the thresholds.
    RedEarly,
    /// RED: forced drop (average above max threshold, or above 2*max in gentle mode).
    RedForced,
    /// A per-flow limit was hit: an SFQ bucket at its depth, or an AFD flow above the fair share.
    FlowLimit,
    /// Pushed out of the longest (fattest) queue to make room under a shared limit (SFQ, DRR, FQ-CoDel).
    LongestQueue,
    /// CoDel control law at dequeue.
    Codel,
    /// pFabric: the lowest-priority packet was evicted.
    PriorityEvict,
    /// ExpressPass: the credit queue was full.
    CreditOverflow,
    /// A loss device on a link (random loss): not a queue decision.
    LinkLoss,
    /// The blackout test device (`blackout.rs`): an arrival during an ON period.
    Blackout,
}

impl DropReason {
    /// Every reason, in the order of the `drops_<reason>` columns (new reasons go last).
    pub const ALL: [DropReason; 10] = [
        DropReason::Overflow,
        DropReason::RedEarly,
        DropReason::RedForced,
        DropReason::FlowLimit,
        DropReason::LongestQueue,
        DropReason::Codel,
        DropReason::PriorityEvict,
        DropReason::CreditOverflow,
        DropReason::LinkLoss,
        DropReason::Blackout,
    ];
    pub const COUNT: usize = Self::ALL.len();
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::RedEarly => "red_early",
            DropReason::RedForced => "red_forced",
            DropReason::FlowLimit => "flow_limit",
            DropReason::LongestQueue => "longest_queue",
            DropReason::Codel => "codel",
            DropReason::PriorityEvict => "priority_evict",
            DropReason::CreditOverflow => "credit_overflow",
            DropReason::LinkLoss => "link_loss",
            DropReason::Blackout => "blackout",
        }
    }
}

/// Why a discipline set ECN CE on a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MarkReason {
    Red = 0,
    Codel,
    /// DCTCP-style instantaneous threshold K.
    Threshold,
}

impl MarkReason {
    pub const COUNT: usize = 3;
    pub fn as_str(self) -> &'static str {
        match self {
            MarkReason::Red => "red",
            MarkReason::Codel => "codel",
            MarkReason::Threshold => "threshold",
        }
    }
}

/// What a discipline may read or change of a packet it stores: the packet itself
/// ([`Packet`]), or a small stand-in for a packet kept elsewhere (the simulator queues
/// `PktRef`s to the packets in its slab, `crates/sim/src/pktref.rs`). A stand-in answers
/// exactly as the packet would, and a mark set on it (`set_ecn`) must reach the packet.
/// It is `Send`: a run on several threads keeps one copy of its ports per thread.
pub trait QPacket: Clone + Default + std::fmt::Debug + Send {
    /// Bytes on the wire (`Packet::size`).
    fn size(&self) -> u32;
    /// The 5-tuple packed into 64 bits (`Packet::flow_key`).
    fn flow_key(&self) -> u64;
    fn ecn(&self) -> Ecn;
    fn set_ecn(&mut self, ecn: Ecn);
    /// Scheduling priority (pFabric; lower is served first).
    fn priority(&self) -> u64;
    /// Input port at the switch holding the packet.
    fn ingress(&self) -> u16;
    fn proto(&self) -> Proto;
    fn src(&self) -> Addr;
    fn dst(&self) -> Addr;
    /// A trimming discipline cuts the packet to its `size` header bytes (payload dropped, the
    /// header kept): `size()` reads `size` from now on. `Packet::payload` keeps what was sent,
    /// so a trimmed packet is one whose `size` is below its `payload`.
    fn trim(&mut self, size: u32);
}

impl QPacket for Packet {
    #[inline(always)]
    fn size(&self) -> u32 {
        self.size
    }
    #[inline(always)]
    fn flow_key(&self) -> u64 {
        Packet::flow_key(self)
    }
    #[inline(always)]
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    #[inline(always)]
    fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = ecn;
    }
    #[inline(always)]
    fn priority(&self) -> u64 {
        self.priority
    }
    #[inline(always)]
    fn ingress(&self) -> u16 {
        self.ingress
    }
    #[inline(always)]
    fn proto(&self) -> Proto {
        self.proto
    }
    #[inline(always)]
    fn src(&self) -> Addr {
        self.src
    }
    #[inline(always)]
    fn dst(&self) -> Addr {
        self.dst
    }
    fn trim(&mut self, size: u32) {
        self.size = size;
    }
}

/// A packet a discipline refused or pushed out.
#[derive(Clone, Debug)]
pub struct Dropped<P = Packet> {
    pub pkt: P,
    pub reason: DropReason,
    /// `true` if the packet had been enqueued (dropped after enqueue), `false` if it was refused.
    pub queued: bool,
}

/// What a discipline reports during one call. Owned and reused by the caller (no allocation on
/// the hot path once warmed up); the caller drains `dropped` after every call.
#[derive(Debug)]
pub struct QdiscEvents<P = Packet> {
    pub dropped: Vec<Dropped<P>>,
    pub marks: [u32; MarkReason::COUNT],
    /// Bytes a trimming discipline cut from the packet it stored in this call
    /// ([`QPacket::trim`]): the packet is stored at its trimmed size.
    pub cut_bytes: u32,
}

impl<P> Default for QdiscEvents<P> {
    fn default() -> Self {
        QdiscEvents { dropped: Vec::new(), marks: [0; MarkReason::COUNT], cut_bytes: 0 }
    }
}

impl<P> QdiscEvents<P> {
    #[inline]
    pub fn drop(&mut self, pkt: P, reason: DropReason, queued: bool) {
        self.dropped.push(Dropped { pkt, reason, queued });
    }
    #[inline]
    pub fn mark(&mut self, reason: MarkReason) {
        self.marks[reason as usize] += 1;
    }
    /// Empties the list and the marks; `cut_bytes` is reset by the queue that counts it
    /// (`Queue::count_offer_rare`), the one call that reads it.
    pub fn clear(&mut self) {
        self.dropped.clear();
        self.marks = [0; MarkReason::COUNT];
    }
}

/// A queue discipline at an output port, storing packets of type [`Qdisc::Pkt`] (every
/// built-in discipline is generic over it, [`Packet`] by default).
pub trait Qdisc {
    /// What the discipline stores: [`Packet`], or a stand-in (see [`QPacket`]).
    type Pkt: QPacket;
    /// Offers `pkt`. The discipline either stores it or reports it in `ev.dropped` with
    /// `queued == false`; it may also push out stored packets (`queued == true`).
    fn enqueue(&mut self, pkt: Self::Pkt, now: SimTime, ev: &mut QdiscEvents<Self::Pkt>);
    /// The next packet to transmit, if any. May drop stored packets on the way (CoDel).
    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<Self::Pkt>) -> Option<Self::Pkt>;
    /// Packets currently stored.
    fn len_pkts(&self) -> usize;
    /// Bytes currently stored (sum of `Packet::size`).
    fn len_bytes(&self) -> u64;
    /// Short name, as in `queue.kind`.
    fn name(&self) -> &'static str;
    /// When `dequeue` returned nothing although packets are stored (a shaper holding them
    /// back): the earliest time worth trying again. `None` (the default) for work-conserving
    /// disciplines.
    fn ready_at(&self) -> Option<SimTime> {
        None
    }
    /// `enqueue(pkt)` then `dequeue()` on a discipline that stores nothing, in one step that
    /// stores nothing either, for a discipline that can tell what the two calls would do
    /// (DropTail: the packet goes straight through, or is refused): the same packet out, the
    /// same events in `ev` (only the offered packet can be refused) and the same state
    /// after. `Err(pkt)` (the default) hands the packet back for the two calls.
    #[inline(always)]
    fn pass_empty(&mut self, pkt: Self::Pkt, _now: SimTime, _ev: &mut QdiscEvents<Self::Pkt>) -> Result<Option<Self::Pkt>, Self::Pkt> {
        Err(pkt)
    }
}

/// Per-port counters kept by [`Queue`] around any discipline.
///
/// `repr(C)`: the counters every packet updates, together (64 bytes, at the start of
/// [`Queue`]); the counters by reason, touched only on marks and drops, out of line in
/// [`ByReason`], allocated at a queue's first mark, drop or trim ([`Reasons`]).
///
/// Packets received (offered) are not counted apart: each is enqueued or refused
/// ([`QdiscStats::received_pkts`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct QdiscStats {
    /// Packets and bytes stored now, counted by [`Queue`] from what each call reports. They
    /// equal the discipline's own `len_pkts` and `len_bytes` (an accounting identity, checked
    /// in debug builds and by every discipline's tests), so that asking whether a port has
    /// packets waiting never calls into the discipline.
    pub len_pkts: u64,
    pub len_bytes: u64,
    pub enqueued_pkts: u64,
    pub enqueued_bytes: u64,
    pub dequeued_pkts: u64,
    pub dequeued_bytes: u64,
    pub max_len_pkts: u64,
    pub max_len_bytes: u64,
    pub by_reason: Reasons,
}

/// A queue's [`ByReason`], on the heap from its first write: reading a queue that never marked,
/// dropped or trimmed sees zeros without allocating, so that the ports that never lose a packet
/// (most ports of a large fabric: 3 M at k = 128, 360 bytes each) cost a pointer.
///
/// Reads go through `Deref`; a write through `DerefMut` allocates the counters when they are
/// not there yet. Two values are equal when their counters are, allocated or not.
#[derive(Clone, Debug, Default)]
pub struct Reasons(Option<Box<ByReason>>);

/// The counters of a queue that never marked, dropped or trimmed.
static NO_REASONS: ByReason = ByReason {
    marks: [0; MarkReason::COUNT],
    dropped_before: [(0, 0); DropReason::COUNT],
    dropped_after: [(0, 0); DropReason::COUNT],
    trims: (0, 0),
};

impl std::ops::Deref for Reasons {
    type Target = ByReason;
    #[inline]
    fn deref(&self) -> &ByReason {
        self.0.as_deref().unwrap_or(&NO_REASONS)
    }
}

impl std::ops::DerefMut for Reasons {
    #[inline]
    fn deref_mut(&mut self) -> &mut ByReason {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for Reasons {
    fn eq(&self, other: &Reasons) -> bool {
        **self == **other
    }
}

/// The marks and drops of a [`Queue`], by reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ByReason {
    pub marks: [u64; MarkReason::COUNT],
    /// Refused on arrival, by reason (packets, bytes).
    pub dropped_before: [(u64, u64); DropReason::COUNT],
    /// Pushed out after enqueue, by reason (packets, bytes).
    pub dropped_after: [(u64, u64); DropReason::COUNT],
    /// Packets stored trimmed ([`QPacket::trim`]), and the bytes cut from them.
    pub trims: (u64, u64),
}

impl QdiscStats {
    /// Packets offered to the queue: each was enqueued or refused.
    pub fn received_pkts(&self) -> u64 {
        self.enqueued_pkts + self.dropped_before_pkts()
    }
    pub fn received_bytes(&self) -> u64 {
        self.enqueued_bytes + self.dropped_before_bytes()
    }
    pub fn dropped_before_pkts(&self) -> u64 {
        self.by_reason.dropped_before.iter().map(|d| d.0).sum()
    }
    pub fn dropped_before_bytes(&self) -> u64 {
        self.by_reason.dropped_before.iter().map(|d| d.1).sum()
    }
    pub fn dropped_after_pkts(&self) -> u64 {
        self.by_reason.dropped_after.iter().map(|d| d.0).sum()
    }
    pub fn dropped_after_bytes(&self) -> u64 {
        self.by_reason.dropped_after.iter().map(|d| d.1).sum()
    }
    pub fn drops_pkts(&self) -> u64 {
        self.dropped_before_pkts() + self.dropped_after_pkts()
    }
    pub fn drops_by_reason(&self, r: DropReason) -> u64 {
        self.by_reason.dropped_before[r as usize].0 + self.by_reason.dropped_after[r as usize].0
    }
    pub fn marks_total(&self) -> u64 {
        self.by_reason.marks.iter().sum()
    }
    /// Packets the counters say are queued: `enqueued - dequeued - dropped_after`.
    pub fn queued_pkts(&self) -> u64 {
        self.enqueued_pkts - self.dequeued_pkts - self.dropped_after_pkts()
    }
    pub fn queued_bytes(&self) -> u64 {
        self.enqueued_bytes - self.dequeued_bytes - self.dropped_after_bytes()
    }
}

/// A discipline plus the accounting the framework keeps for it.
///
/// `repr(C)`: the hot counters of [`QdiscStats`] first, then the discipline, so that every
/// call touches as few cache lines as it can. What a call reports goes to a [`QdiscEvents`]
/// the caller owns and passes in: one scratch for all of its queues (the engine keeps one for
/// every port of the network), not one per queue.
#[derive(Debug)]
#[repr(C)]
pub struct Queue<Q: Qdisc> {
    pub stats: QdiscStats,
    pub qdisc: Q,
}

impl<Q: Qdisc> Queue<Q> {
    pub fn new(qdisc: Q) -> Self {
        Queue { stats: QdiscStats::default(), qdisc }
    }

    /// Offers a packet; afterwards `ev.dropped` lists what was dropped (the caller drains it).
    /// `ev` is cleared first. Always inlined, like the dispatch of `AnyQdisc::enqueue`, into
    /// both of its callers (the engine's port and the port probe): it is the packet path of
    /// every run.
    #[inline(always)]
    pub fn enqueue(&mut self, pkt: Q::Pkt, now: SimTime, ev: &mut QdiscEvents<Q::Pkt>) {
        ev.clear();
        let size = pkt.size() as u64;
        self.qdisc.enqueue(pkt, now, ev);
        self.count_offer(size, ev);
        self.debug_check_identity();
    }

    /// The counters of an offer of `size` bytes, from what the discipline reported in `ev`.
    /// Most offers are stored whole with nothing dropped: those take the straight line here,
    /// and the rest ([`Queue::count_offer_rare`]) one call out of line.
    #[inline(always)]
    fn count_offer(&mut self, size: u64, ev: &mut QdiscEvents<Q::Pkt>) {
        if !ev.dropped.is_empty() || ev.cut_bytes != 0 {
            return self.count_offer_rare(size, ev);
        }
        self.count_stored(1, size, 0, 0, ev);
    }

    /// [`Queue::count_offer`] of an offer that dropped packets (the offered one refused, or
    /// stored ones pushed out) or was stored trimmed: `ev.cut_bytes` fewer bytes than offered
    /// are stored, a trim counted by reason. Resets `cut_bytes`.
    #[cold]
    #[inline(never)]
    fn count_offer_rare(&mut self, size: u64, ev: &mut QdiscEvents<Q::Pkt>) {
        let mut refused = false;
        let (mut out_pkts, mut out_bytes) = (0, 0);
        let reasons = &mut *self.stats.by_reason;
        for d in &ev.dropped {
            let b = d.pkt.size() as u64;
            if d.queued {
                let c = &mut reasons.dropped_after[d.reason as usize];
                c.0 += 1;
                c.1 += b;
                out_pkts += 1;
                out_bytes += b;
            } else {
                debug_assert!(!refused, "an offered packet was refused twice");
                refused = true;
                let c = &mut reasons.dropped_before[d.reason as usize];
                c.0 += 1;
                c.1 += b;
            }
        }
        let cut = std::mem::take(&mut ev.cut_bytes) as u64;
        if cut != 0 {
            debug_assert!(!refused, "a packet was both trimmed and refused");
            let t = &mut reasons.trims;
            t.0 += 1;
            t.1 += cut;
        }
        let (in_pkts, in_bytes) = if refused { (0, 0) } else { (1, size - cut) };
        self.count_stored(in_pkts, in_bytes, out_pkts, out_bytes, ev);
    }

    /// The counters of `in_pkts` packets of `in_bytes` stored and `out_pkts` of `out_bytes`
    /// pushed out by one offer, and its marks.
    #[inline(always)]
    fn count_stored(&mut self, in_pkts: u64, in_bytes: u64, out_pkts: u64, out_bytes: u64, ev: &QdiscEvents<Q::Pkt>) {
        self.stats.enqueued_pkts += in_pkts;
        self.stats.enqueued_bytes += in_bytes;
        self.stats.len_pkts = self.stats.len_pkts + in_pkts - out_pkts;
        self.stats.len_bytes = self.stats.len_bytes + in_bytes - out_bytes;
        self.account_marks(ev);
        let (len, lb) = (self.stats.len_pkts, self.stats.len_bytes);
        if len > self.stats.max_len_pkts {
            self.stats.max_len_pkts = len;
        }
        if lb > self.stats.max_len_bytes {
            self.stats.max_len_bytes = lb;
        }
    }

    /// The counters of a packet of `size` bytes leaving the queue for the wire.
    #[inline(always)]
    fn count_sent(&mut self, size: u64) {
        self.stats.dequeued_pkts += 1;
        self.stats.dequeued_bytes += size;
        self.stats.len_pkts -= 1;
        self.stats.len_bytes -= size;
    }

    /// Takes the next packet to send; afterwards `ev.dropped` lists packets dropped on the way
    /// (`ev` is cleared first).
    #[inline]
    pub fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<Q::Pkt>) -> Option<Q::Pkt> {
        ev.clear();
        let out = self.qdisc.dequeue(now, ev);
        for d in &ev.dropped {
            debug_assert!(d.queued, "dequeue can only drop stored packets");
            let b = d.pkt.size() as u64;
            let c = &mut self.stats.by_reason.dropped_after[d.reason as usize];
            c.0 += 1;
            c.1 += b;
            self.stats.len_pkts -= 1;
            self.stats.len_bytes -= b;
        }
        if let Some(p) = &out {
            self.count_sent(p.size() as u64);
        }
        self.account_marks(ev);
        self.debug_check_identity();
        out
    }

    /// A packet offered to an empty queue whose port is idle, which sends whatever it can at
    /// once: `enqueue(pkt)` then `dequeue()`, with the same packet out, counters and events
    /// (`ev` holds the enqueue's: a refused packet), in one step when the discipline can take it
    /// ([`Qdisc::pass_empty`]) so that the packet is never stored. `Err(pkt)` when the
    /// discipline cannot: the caller makes the two calls.
    #[inline]
    pub fn pass(&mut self, pkt: Q::Pkt, now: SimTime, ev: &mut QdiscEvents<Q::Pkt>) -> Result<Option<Q::Pkt>, Q::Pkt> {
        debug_assert_eq!(self.stats.len_pkts, 0, "pass is for an empty queue");
        ev.clear();
        let size = pkt.size() as u64;
        let out = self.qdisc.pass_empty(pkt, now, ev)?;
        // counted as the two calls count them: the offer, then the packet sent
        self.count_offer(size, ev);
        if let Some(p) = &out {
            self.count_sent(p.size() as u64);
        }
        self.debug_check_identity();
        Ok(out)
    }

    /// Debug builds: the queue's count of stored packets and bytes is the discipline's, and
    /// the counters' (`enqueued - dequeued - dropped_after`).
    #[inline(always)]
    fn debug_check_identity(&self) {
        debug_assert_eq!(self.stats.len_pkts, self.qdisc.len_pkts() as u64, "accounting identity broken by {}", self.qdisc.name());
        debug_assert_eq!(self.stats.len_bytes, self.qdisc.len_bytes(), "accounting identity broken by {}", self.qdisc.name());
        debug_assert_eq!(self.stats.queued_pkts(), self.stats.len_pkts, "accounting identity broken by {}", self.qdisc.name());
    }

    #[inline]
    fn account_marks(&mut self, ev: &QdiscEvents<Q::Pkt>) {
        if ev.marks == [0; MarkReason::COUNT] {
            return; // most calls mark nothing
        }
        let marks = &mut self.stats.by_reason.marks;
        for (i, m) in ev.marks.iter().enumerate() {
            marks[i] += *m as u64;
        }
    }

    /// Packets stored ([`QdiscStats::len_pkts`]).
    #[inline]
    pub fn len_pkts(&self) -> usize {
        self.stats.len_pkts as usize
    }
    /// Bytes stored ([`QdiscStats::len_bytes`]).
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.stats.len_bytes
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.stats.len_pkts == 0
    }
}

/// Everything a discipline may need from its port when it is built.
#[derive(Clone, Copy, Debug)]
pub struct PortContext {
    /// Rate of the link the port drives.
    pub rate: BitsPerSec,
    /// Largest packet on the wire, bytes.
    pub mtu: u32,
    /// Global index of the port (used to name its random stream).
    pub port_index: u64,
    pub streams: Streams,
    /// The port is a host's NIC (else a switch's).
    pub host: bool,
}


/// A discipline the registry can build from its `[queue.<kind>]` table.
///
/// Implemented in the discipline's own file; the registry line names the type, and the kind
/// enum, the `QueueConfig` field, validation, construction and dispatch follow from it.
pub trait Discipline: Qdisc + Sized {
    /// The `[queue.<kind>]` table (unknown keys rejected; its `Default` is the table absent).
    type Config: Clone + Default + std::fmt::Debug + DeserializeOwned;
    /// Checks the table; error keys are relative to `[queue.<kind>]`.
    fn validate(cfg: &Self::Config, limit: Limit) -> Result<(), ConfigError>;
    /// The discipline of one port. `validate` has passed.
    fn build(cfg: &Self::Config, limit: Limit, ctx: &PortContext) -> Self;
    /// After every port of the network is built: resolves what the table names in the network
    /// (the blackout device's `input`). Error keys are relative to `[queue.<kind>]`.
    fn wire<Q>(_cfg: &Self::Config, _ports: &mut dyn Ports<Q>) -> Result<(), ConfigError>
    where
        Self: Variant<Q>,
    {
        Ok(())
    }
}

/// The discipline of type `Self` inside a port's dispatch enum `Q`, if it runs there
/// (implemented by the registry for every registered discipline).
pub trait Variant<Q>: Sized {
    fn of_mut(q: &mut Q) -> Option<&mut Self>;
}

/// The built network as a discipline's [`Discipline::wire`] hook sees it; `Q` is the type of
/// every port's discipline (`AnyQdisc<_>`).
pub trait Ports<Q> {
    /// The port named `name` (`"s0->sw"`): the node it feeds and the local index of the input
    /// through which its packets arrive there.
    fn feeds(&self, name: &str) -> Option<(u32, u16)>;
    /// The name of node `node`.
    fn node_name(&self, node: u32) -> String;
    /// Calls `f` with the owning node and the discipline of every port, in port order.
    fn each(&mut self, f: &mut dyn FnMut(u32, &mut Q));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limit;
    use crate::qdisc::droptail::DropTail;
    use crate::qdisc::testkit::pkt;

    #[test]
    fn counters_by_reason_are_allocated_by_the_first_drop_and_read_as_zeros_before() {
        let mut q = Queue::new(DropTail::new(Limit::pkts(1)));
        let mut ev = QdiscEvents::default();
        q.enqueue(pkt(1, 0, 1500), SimTime::ZERO, &mut ev);
        assert!(q.stats.by_reason.0.is_none(), "a queue that dropped nothing holds no counters");
        assert_eq!((q.stats.drops_pkts(), q.stats.marks_total()), (0, 0));
        assert_eq!(q.stats, QdiscStats { by_reason: Reasons(Some(Box::default())), ..q.stats.clone() });
        q.enqueue(pkt(1, 1, 1500), SimTime::ZERO, &mut ev);
        assert!(q.stats.by_reason.0.is_some());
        assert_eq!(q.stats.drops_by_reason(DropReason::Overflow), 1);
        assert_eq!(q.stats.dropped_before_bytes(), 1500);
        assert_ne!(q.stats, QdiscStats { by_reason: Reasons(None), ..q.stats.clone() });
    }
}
