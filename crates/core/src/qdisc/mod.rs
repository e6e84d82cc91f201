//! Queue disciplines: one trait, typed drop reasons, accounting kept outside the discipline.
//!
//! Rules:
//! - A discipline *decides*; it keeps no statistics. [`Qdisc::enqueue`] and [`Qdisc::dequeue`]
//!   report every packet they refuse or push out into [`QdiscEvents::dropped`], tagged with a
//!   [`DropReason`] and whether the packet had been enqueued before (`queued`). Marks (ECN CE)
//!   are set on the packet by the discipline and reported with [`QdiscEvents::mark`].
//! - An offered packet ends up exactly once either in the queue or in `dropped` with
//!   `queued == false`. A packet that had been enqueued leaves exactly once, by `dequeue` or in
//!   `dropped` with `queued == true`.
//! - [`Queue`] wraps a discipline and keeps [`QdiscStats`]; the identities
//!   `received = enqueued + dropped_before` and `queued = enqueued - dequeued - dropped_after`
//!   hold after every call and are checked by property tests for every discipline.
//! - Time is passed in (`now`), never read. Randomness comes from a stream given at construction.
//! - A discipline stores packets of its type [`Qdisc::Pkt`]: [`Packet`]s by value, or stand-ins
//!   for packets kept elsewhere (the simulator's `PktRef`: a slab handle plus the fields a
//!   discipline reads). It reads and marks them only through [`QPacket`]. Every built-in
//!   discipline is generic over it with `Packet` as the default, so `DropTail`, `AnyQdisc` and
//!   `Queue<AnyQdisc>` still mean the packet-holding ones (the real-packet switch, the tests).
//! - Dispatch is static: [`AnyQdisc`] is an enum over the disciplines. The [`Qdisc`] trait stays
//!   public so users can write their own and test it with the same harness.
//! - Configuration structs deserialize with unknown keys rejected and validate to a
//!   [`ConfigError`] naming the key (relative to the `queue` table) and the reason.

pub mod blackout;
mod bucket_fifos;
pub mod codel;
pub mod droptail;
pub mod drr;
pub mod fq_codel;
pub mod hcf;
pub mod pfabric;
pub mod red;
pub mod sfq;
pub mod xpass;

use crate::packet::{Addr, Ecn, Packet, Proto};
use crate::rng::Streams;
use crate::time::{BitsPerSec, SimTime};
use serde::Deserialize;

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
    /// A per-flow / per-bucket limit was hit (SFQ depth, HCF bin of a full class).
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
pub trait QPacket: Clone + Default + std::fmt::Debug {
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
}

impl<P> Default for QdiscEvents<P> {
    fn default() -> Self {
        QdiscEvents { dropped: Vec::new(), marks: [0; MarkReason::COUNT] }
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
}

/// Per-port counters kept by [`Queue`] around any discipline.
///
/// `repr(C)`: the counters every packet updates come first, together (two cache lines with
/// [`QdiscEvents`] before them in [`Queue`]); the drop counters, touched only on drops, after.
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct QdiscStats {
    pub received_pkts: u64,
    pub received_bytes: u64,
    pub enqueued_pkts: u64,
    pub enqueued_bytes: u64,
    pub dequeued_pkts: u64,
    pub dequeued_bytes: u64,
    pub max_len_pkts: u64,
    pub max_len_bytes: u64,
    pub marks: [u64; MarkReason::COUNT],
    /// Refused on arrival, by reason (packets, bytes).
    pub dropped_before: [(u64, u64); DropReason::COUNT],
    /// Pushed out after enqueue, by reason (packets, bytes).
    pub dropped_after: [(u64, u64); DropReason::COUNT],
}

impl QdiscStats {
    pub fn dropped_before_pkts(&self) -> u64 {
        self.dropped_before.iter().map(|d| d.0).sum()
    }
    pub fn dropped_after_pkts(&self) -> u64 {
        self.dropped_after.iter().map(|d| d.0).sum()
    }
    pub fn drops_pkts(&self) -> u64 {
        self.dropped_before_pkts() + self.dropped_after_pkts()
    }
    pub fn drops_by_reason(&self, r: DropReason) -> u64 {
        self.dropped_before[r as usize].0 + self.dropped_after[r as usize].0
    }
    pub fn marks_total(&self) -> u64 {
        self.marks.iter().sum()
    }
    /// Packets the counters say are queued: `enqueued - dequeued - dropped_after`.
    pub fn queued_pkts(&self) -> u64 {
        self.enqueued_pkts - self.dequeued_pkts - self.dropped_after_pkts()
    }
    pub fn queued_bytes(&self) -> u64 {
        let after: u64 = self.dropped_after.iter().map(|d| d.1).sum();
        self.enqueued_bytes - self.dequeued_bytes - after
    }
}

/// A discipline plus the accounting the framework keeps for it.
///
/// `repr(C)`: the events and the hot counters of [`QdiscStats`] first, so that every call
/// touches as few cache lines as it can.
#[derive(Debug)]
#[repr(C)]
pub struct Queue<Q: Qdisc = AnyQdisc> {
    /// Events of the last call; drained by the caller.
    pub ev: QdiscEvents<Q::Pkt>,
    pub stats: QdiscStats,
    pub qdisc: Q,
}

impl<Q: Qdisc> Queue<Q> {
    pub fn new(qdisc: Q) -> Self {
        Queue { ev: QdiscEvents::default(), stats: QdiscStats::default(), qdisc }
    }

    /// Offers a packet; afterwards `self.ev.dropped` lists what was dropped (caller drains it).
    /// Always inlined, like `AnyQdisc::enqueue`: a second caller (the simulator's port probe)
    /// and a sixth discipline made the compiler stop inlining them into the engine's packet
    /// path, +1.2 % instructions in the HCF long-flow run (callgrind, 20 s); inlined, +0.1 %.
    #[inline(always)]
    pub fn enqueue(&mut self, pkt: Q::Pkt, now: SimTime) {
        self.ev.clear();
        let size = pkt.size() as u64;
        self.stats.received_pkts += 1;
        self.stats.received_bytes += size;
        self.qdisc.enqueue(pkt, now, &mut self.ev);
        let mut refused = false;
        for d in &self.ev.dropped {
            let b = d.pkt.size() as u64;
            if d.queued {
                let c = &mut self.stats.dropped_after[d.reason as usize];
                c.0 += 1;
                c.1 += b;
            } else {
                debug_assert!(!refused, "an offered packet was refused twice");
                refused = true;
                let c = &mut self.stats.dropped_before[d.reason as usize];
                c.0 += 1;
                c.1 += b;
            }
        }
        if !refused {
            self.stats.enqueued_pkts += 1;
            self.stats.enqueued_bytes += size;
        }
        self.account_marks();
        let len = self.qdisc.len_pkts() as u64;
        if len > self.stats.max_len_pkts {
            self.stats.max_len_pkts = len;
        }
        let lb = self.qdisc.len_bytes();
        if lb > self.stats.max_len_bytes {
            self.stats.max_len_bytes = lb;
        }
        debug_assert_eq!(self.stats.queued_pkts(), len, "accounting identity broken by {}", self.qdisc.name());
    }

    /// Takes the next packet to send; afterwards `self.ev.dropped` lists packets dropped on the way.
    #[inline]
    pub fn dequeue(&mut self, now: SimTime) -> Option<Q::Pkt> {
        self.ev.clear();
        let out = self.qdisc.dequeue(now, &mut self.ev);
        for d in &self.ev.dropped {
            debug_assert!(d.queued, "dequeue can only drop stored packets");
            let c = &mut self.stats.dropped_after[d.reason as usize];
            c.0 += 1;
            c.1 += d.pkt.size() as u64;
        }
        if let Some(p) = &out {
            self.stats.dequeued_pkts += 1;
            self.stats.dequeued_bytes += p.size() as u64;
        }
        self.account_marks();
        debug_assert_eq!(self.stats.queued_pkts(), self.qdisc.len_pkts() as u64);
        out
    }

    #[inline]
    fn account_marks(&mut self) {
        if self.ev.marks == [0; MarkReason::COUNT] {
            return; // most calls mark nothing
        }
        for (i, m) in self.ev.marks.iter().enumerate() {
            self.stats.marks[i] += *m as u64;
        }
    }

    pub fn len_pkts(&self) -> usize {
        self.qdisc.len_pkts()
    }
    pub fn is_empty(&self) -> bool {
        self.qdisc.len_pkts() == 0
    }
}

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

/// A configuration error: the key (dotted, relative to the table being validated) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
        ConfigError { key: key.into(), reason: reason.into() }
    }
    /// Prefixes the key with the path of the enclosing table.
    pub fn within(mut self, prefix: &str) -> ConfigError {
        self.key = if self.key.is_empty() { prefix.to_string() } else { format!("{prefix}.{}", self.key) };
        self
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.reason)
    }
}
impl std::error::Error for ConfigError {}

/// Which discipline a port runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QdiscKind {
    #[default]
    Droptail,
    Red,
    Sfq,
    Drr,
    Hcf,
    /// The ON/OFF port-blackout model of the TCP Outcast paper (a test device).
    Blackout,
    /// pFabric's priority buffer (`pfabric.rs`).
    Pfabric,
    /// CoDel over one FIFO (RFC 8289).
    Codel,
    /// FQ-CoDel (RFC 8290).
    FqCodel,
}

impl QdiscKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QdiscKind::Droptail => "droptail",
            QdiscKind::Red => "red",
            QdiscKind::Sfq => "sfq",
            QdiscKind::Drr => "drr",
            QdiscKind::Hcf => "hcf",
            QdiscKind::Blackout => "blackout",
            QdiscKind::Pfabric => "pfabric",
            QdiscKind::Codel => "codel",
            QdiscKind::FqCodel => "fq_codel",
        }
    }
}

/// The `[queue]` table: the discipline, the shared buffer limit, and one optional sub-table of
/// parameters per discipline (`[queue.red]`, `[queue.hcf]`, ...). Only the sub-table of `kind`
/// is used (its defaults when absent), so one file can carry the parameters of every discipline
/// and `--set queue.kind=...` switches between them. Every sub-table present is validated,
/// used or not: a wrong value in a file is an error whichever discipline runs.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    #[serde(default)]
    pub kind: QdiscKind,
    /// Buffer limit in packets (the total over all internal queues).
    pub limit_pkts: Option<u32>,
    /// Buffer limit in bytes; with both set, a packet must fit both.
    pub limit_bytes: Option<u64>,
    pub droptail: Option<droptail::DropTailConfig>,
    pub red: Option<red::RedConfig>,
    pub sfq: Option<sfq::SfqConfig>,
    pub drr: Option<drr::DrrConfig>,
    pub hcf: Option<hcf::HcfConfig>,
    pub blackout: Option<blackout::BlackoutConfig>,
    pub codel: Option<codel::CodelConfig>,
    pub fq_codel: Option<fq_codel::FqCodelConfig>,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            kind: QdiscKind::Droptail,
            limit_pkts: Some(100),
            limit_bytes: None,
            droptail: None,
            red: None,
            sfq: None,
            drr: None,
            hcf: None,
            blackout: None,
            codel: None,
            fq_codel: None,
        }
    }
}

/// A buffer limit in packets and/or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub pkts: Option<u32>,
    pub bytes: Option<u64>,
}

impl Limit {
    pub fn pkts(n: u32) -> Limit {
        Limit { pkts: Some(n), bytes: None }
    }
    /// Would a queue holding (`len_pkts`, `len_bytes`) still fit one more packet of `size` bytes?
    #[inline]
    pub fn fits(&self, len_pkts: usize, len_bytes: u64, size: u32) -> bool {
        self.pkts.is_none_or(|p| (len_pkts as u64) < p as u64)
            && self.bytes.is_none_or(|b| len_bytes + size as u64 <= b)
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
}

impl QueueConfig {
    pub fn limit(&self) -> Limit {
        Limit { pkts: self.limit_pkts, bytes: self.limit_bytes }
    }

    /// Checks every parameter; the error key is relative to the `queue` table.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.limit_pkts.is_none() && self.limit_bytes.is_none() {
            return Err(ConfigError::new("limit_pkts", "set limit_pkts or limit_bytes"));
        }
        if self.limit_pkts == Some(0) {
            return Err(ConfigError::new("limit_pkts", "must be at least 1 packet"));
        }
        if self.limit_bytes == Some(0) {
            return Err(ConfigError::new("limit_bytes", "must be at least 1 byte"));
        }
        let limit = self.limit();
        let active = self.kind;
        // Every table present, plus the defaults of the active kind when its table is absent.
        let pick = |k: QdiscKind, present: bool| present || k == active;
        if let Some(d) = &self.droptail {
            d.validate(limit).map_err(|e| e.within("droptail"))?;
        }
        if pick(QdiscKind::Red, self.red.is_some()) {
            self.red.clone().unwrap_or_default().validate(limit).map_err(|e| e.within("red"))?;
        }
        if pick(QdiscKind::Sfq, self.sfq.is_some()) {
            self.sfq.clone().unwrap_or_default().validate().map_err(|e| e.within("sfq"))?;
        }
        if pick(QdiscKind::Drr, self.drr.is_some()) {
            self.drr.clone().unwrap_or_default().validate().map_err(|e| e.within("drr"))?;
        }
        if pick(QdiscKind::Hcf, self.hcf.is_some()) {
            self.hcf.clone().unwrap_or_default().validate(limit).map_err(|e| e.within("hcf"))?;
        }
        if pick(QdiscKind::Blackout, self.blackout.is_some()) {
            self.blackout.clone().unwrap_or_default().validate().map_err(|e| e.within("blackout"))?;
        }
        if pick(QdiscKind::Codel, self.codel.is_some()) {
            self.codel.clone().unwrap_or_default().validate().map_err(|e| e.within("codel"))?;
        }
        if pick(QdiscKind::FqCodel, self.fq_codel.is_some()) {
            self.fq_codel.clone().unwrap_or_default().validate().map_err(|e| e.within("fq_codel"))?;
        }
        Ok(())
    }

    /// Builds the discipline for one port. Call `validate` first.
    pub fn build<P: QPacket>(&self, ctx: &PortContext) -> AnyQdisc<P> {
        let limit = self.limit();
        match self.kind {
            QdiscKind::Droptail => match &self.droptail {
                Some(c) => AnyQdisc::DropTail(droptail::DropTail::with_marking(limit, c)),
                None => AnyQdisc::DropTail(droptail::DropTail::new(limit)),
            },
            QdiscKind::Red => AnyQdisc::Red(red::Red::new(&self.red.clone().unwrap_or_default(), limit, ctx)),
            QdiscKind::Sfq => AnyQdisc::Sfq(sfq::Sfq::new(&self.sfq.clone().unwrap_or_default(), limit, ctx)),
            QdiscKind::Drr => AnyQdisc::Drr(drr::Drr::new(&self.drr.clone().unwrap_or_default(), limit, ctx)),
            QdiscKind::Hcf => AnyQdisc::Hcf(hcf::Hcf::new(&self.hcf.clone().unwrap_or_default(), limit, ctx)),
            QdiscKind::Blackout => {
                AnyQdisc::Blackout(blackout::Blackout::new(&self.blackout.clone().unwrap_or_default(), limit, ctx))
            }
            QdiscKind::Pfabric => AnyQdisc::Pfabric(pfabric::PFabric::new(limit)),
            QdiscKind::Codel => AnyQdisc::Codel(codel::Codel::new(&self.codel.clone().unwrap_or_default(), limit, ctx)),
            QdiscKind::FqCodel => {
                AnyQdisc::FqCodel(fq_codel::FqCodel::new(&self.fq_codel.clone().unwrap_or_default(), limit, ctx))
            }
        }
    }
}

/// Static dispatch over every built-in discipline. One per port, so its size (that of the
/// largest discipline) does not matter; boxing would add an indirection per packet.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum AnyQdisc<P = Packet> {
    DropTail(droptail::DropTail<P>),
    Red(red::Red<P>),
    Sfq(sfq::Sfq<P>),
    Drr(drr::Drr<P>),
    Hcf(hcf::Hcf<P>),
    Blackout(blackout::Blackout<P>),
    Pfabric(pfabric::PFabric<P>),
    Codel(codel::Codel<P>),
    FqCodel(fq_codel::FqCodel<P>),
    /// The ExpressPass credit shaper around another discipline (built by the simulator when a
    /// run has ExpressPass flows, not by `queue.kind`).
    Xpass(Box<xpass::CreditShaper<P>>),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::DropTail($q) => $e,
            AnyQdisc::Red($q) => $e,
            AnyQdisc::Sfq($q) => $e,
            AnyQdisc::Drr($q) => $e,
            AnyQdisc::Hcf($q) => $e,
            AnyQdisc::Blackout($q) => $e,
            AnyQdisc::Pfabric($q) => $e,
            AnyQdisc::Codel($q) => $e,
            AnyQdisc::FqCodel($q) => $e,
            AnyQdisc::Xpass($q) => $e,
        }
    };
}

impl<P: QPacket> Qdisc for AnyQdisc<P> {
    type Pkt = P;
    #[inline(always)]
    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        dispatch!(self, q => q.enqueue(pkt, now, ev))
    }
    #[inline]
    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        dispatch!(self, q => q.dequeue(now, ev))
    }
    #[inline]
    fn len_pkts(&self) -> usize {
        dispatch!(self, q => q.len_pkts())
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        dispatch!(self, q => q.len_bytes())
    }
    fn name(&self) -> &'static str {
        dispatch!(self, q => q.name())
    }
    #[inline]
    fn ready_at(&self) -> Option<SimTime> {
        dispatch!(self, q => q.ready_at())
    }
}

/// Test support shared by every discipline's tests: a random workload that checks the
/// accounting identities and conservation after every call.
#[cfg(test)]
pub(crate) mod testkit {
    use super::*;
    use crate::packet::Proto;

    /// A packet of flow `flow` with per-flow sequence number `seq` and `size` bytes.
    pub fn pkt(flow: u32, seq: u64, size: u32) -> Packet {
        Packet {
            uid: flow as u64 * 1_000_000_000 + seq,
            flow,
            src: flow,
            dst: 1_000_000,
            sport: (flow % 60_000) as u16,
            dport: 80,
            proto: Proto::Tcp,
            size,
            payload: size.saturating_sub(40),
            seq,
            ..Default::default()
        }
    }

    pub fn ctx(seed: u64) -> PortContext {
        PortContext { rate: BitsPerSec(100_000_000), mtu: 1500, port_index: 0, streams: Streams::new(seed) }
    }

    /// Drives `q` with `ops` (true = arrival of a packet of flow `flows[i]`, false = departure)
    /// and checks, after every call, both identities, conservation of every packet, and that
    /// stored packets match `len_pkts` / `len_bytes`. Returns the departed packets in order.
    pub fn check_accounting<Q: Qdisc<Pkt = Packet>>(q: Q, arrivals: &[(bool, u32, u32)]) -> Vec<Packet> {
        let mut queue = Queue::new(q);
        let mut seqs = std::collections::HashMap::<u32, u64>::new();
        let mut now = SimTime::ZERO;
        let mut out = Vec::new();
        let mut dropped = 0u64;
        let mut in_bytes = 0u64;
        let mut out_bytes = 0u64;
        let mut drop_bytes = 0u64;
        for &(arrive, flow, size) in arrivals {
            now += crate::time::SimDuration::from_us(1);
            if arrive {
                let s = seqs.entry(flow).or_insert(0);
                *s += 1;
                in_bytes += size as u64;
                queue.enqueue(pkt(flow, *s, size), now);
            } else if let Some(p) = queue.dequeue(now) {
                out_bytes += p.size as u64;
                out.push(p);
            }
            for d in queue.ev.dropped.drain(..) {
                dropped += 1;
                drop_bytes += d.pkt.size as u64;
            }
            let st = &queue.stats;
            assert_eq!(st.received_pkts, st.enqueued_pkts + st.dropped_before_pkts());
            assert_eq!(st.queued_pkts(), queue.qdisc.len_pkts() as u64);
            assert_eq!(st.queued_bytes(), queue.qdisc.len_bytes());
            assert_eq!(st.received_pkts, out.len() as u64 + dropped + queue.qdisc.len_pkts() as u64);
            assert_eq!(in_bytes, out_bytes + drop_bytes + queue.qdisc.len_bytes());
        }
        out
    }
}
