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
//! - [`Queue`] wraps a discipline and keeps [`QdiscStats`], its own count of the packets and
//!   bytes stored among them: after every call that count equals the discipline's `len_pkts`
//!   and `len_bytes`, and `stored = enqueued - dequeued - dropped_after` (checked in debug
//!   builds and by property tests for every discipline). Whether a port has packets waiting is
//!   read from that count, without a call into the discipline.
//! - Time is passed in (`now`), never read. Randomness comes from a stream given at construction.
//! - A discipline stores packets of its type [`Qdisc::Pkt`]: [`Packet`]s by value, or stand-ins
//!   for packets kept elsewhere (the simulator's `PktRef`: a slab handle plus the fields a
//!   discipline reads). It reads and marks them only through [`QPacket`]. Every built-in
//!   discipline is generic over it with `Packet` as the default, so `DropTail`, `AnyQdisc` and
//!   `Queue<AnyQdisc>` still mean the packet-holding ones (the real-packet switch, the tests).
//! - The registry is this file: one line per discipline in the `disciplines!` call below, and
//!   everything `queue.kind` needs follows from it (`docs/extending.md` walks through adding
//!   one). Adding a discipline is one file (its type, its `[queue.<kind>]` table and an
//!   `impl Discipline`) plus one line: the variant of [`QdiscKind`], the kind's name (the file's
//!   name, and the snake case of the variant), the variant of [`AnyQdisc`], the type, its table,
//!   where [`AnyQdisc`] keeps it (`inline`, or `boxed` out of line) and a one-line summary.
//! - Only DropTail is `inline`: the enum is as large as its largest inline variant and sits in
//!   every port, and the ports a packet crosses must stay few cache lines (a fat-tree of
//!   k = 32 has 49,152 of them). A discipline larger than DropTail is `boxed`; its state is
//!   then one pointer away, in its own allocation.
//! - From that line come the module declaration of the discipline's file, [`QdiscKind`] (and the
//!   names `queue.kind` accepts, in line order), the optional table `[queue.<kind>]` in
//!   [`QueueConfig`], [`QueueConfig::validate`] (every table present, plus the defaults of the
//!   active kind; first error in line order), [`QueueConfig::build`], [`QueueConfig::wire`], the
//!   dispatch enum [`AnyQdisc`] and [`KINDS`], the list `dcfair kinds` prints.
//! - Dispatch is static: [`AnyQdisc`] is an enum, one variant per line plus the port wrappers.
//!   The [`Qdisc`] trait stays public so users can write their own and test it with the same
//!   harness.
//! - Port wrappers are decided per run and per port, not by `queue.kind`. A loss device on a
//!   port with a loss rate is the disciplines' own ([`AnyQdisc::with_loss`], `loss.rs`). A
//!   wrapper that a mechanism above the disciplines supplies (a transport's, such as a credit
//!   shaper) goes in [`AnyQdisc::Wrapped`], a box behind
//!   one virtual call that only the runs with such a wrapper take: every other port's dispatch
//!   is the enum's, as without it.
//! - Layers: [`framework`] (the trait, events, accounting) knows no discipline; each discipline
//!   imports it (and the shared storage or the CoDel law it builds on); this file imports the
//!   disciplines. Nothing imports upward, and nothing here imports a transport: the
//!   transports sit above the disciplines (`crate::transport`).
//! - Configuration structs deserialize with unknown keys rejected and validate to a
//!   [`ConfigError`] naming the key (relative to the `queue` table) and the reason.

mod bucket_fifos;
pub mod framework;
pub mod loss;
#[cfg(test)]
pub(crate) mod testkit;

pub use crate::config::{ConfigError, Limit};
pub use framework::{
    Discipline, DropReason, Dropped, MarkReason, PortContext, Ports, QPacket, Qdisc, QdiscEvents, QdiscStats, Queue,
    Variant,
};

use crate::packet::Packet;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A `[queue.<kind>]` table as written, or its defaults when absent.
fn table<T: Clone + Default>(t: &Option<T>) -> Cow<'_, T> {
    t.as_ref().map_or_else(|| Cow::Owned(T::default()), Cow::Borrowed)
}

/// One registered discipline, as `dcfair kinds` lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// The name `queue.kind` takes, and the name of its `[queue.<kind>]` table.
    pub name: &'static str,
    /// One line: what the discipline does.
    pub summary: &'static str,
}

macro_rules! disciplines {
    ($( $kind:ident $field:ident => $variant:ident ($($ty:ident)::+, $cfg:ty) $store:ident : $summary:literal ; )+) => {
        $( pub mod $field; )+

        /// Which discipline a port runs (`queue.kind`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
        #[serde(rename_all = "snake_case")]
        pub enum QdiscKind {
            #[default]
            $( $kind, )+
        }

        impl QdiscKind {
            /// Every kind, in registry order.
            pub const ALL: &'static [QdiscKind] = &[$(QdiscKind::$kind),+];
            pub fn as_str(self) -> &'static str {
                match self { $(QdiscKind::$kind => stringify!($field)),+ }
            }
        }

        /// Every registered discipline, in registry order.
        pub const KINDS: &[KindInfo] = &[$(KindInfo { name: stringify!($field), summary: $summary }),+];

        /// The `[queue]` table: the discipline, the shared buffer limit, and one optional
        /// sub-table of parameters per discipline (`[queue.red]`, `[queue.hcf]`, ...). Only the
        /// sub-table of `kind` is used (its defaults when absent), so one file can carry the
        /// parameters of every discipline and `--set queue.kind=...` switches between them.
        /// Every sub-table present is validated, used or not: a wrong value in a file is an
        /// error whichever discipline runs.
        #[derive(Clone, Debug, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct QueueConfig {
            #[serde(default)]
            pub kind: QdiscKind,
            /// Buffer limit in packets (the total over all internal queues).
            pub limit_pkts: Option<u32>,
            /// Buffer limit in bytes; with both set, a packet must fit both.
            pub limit_bytes: Option<u64>,
            $( pub $field: Option<$cfg>, )+
        }

        impl Default for QueueConfig {
            fn default() -> Self {
                QueueConfig { kind: QdiscKind::default(), limit_pkts: Some(100), limit_bytes: None, $($field: None),+ }
            }
        }

        impl QueueConfig {
            /// Checks every parameter; the error key is relative to the `queue` table.
            pub fn validate(&self) -> Result<(), ConfigError> {
                self.validate_limit()?;
                let limit = self.limit();
                $(
                    if self.$field.is_some() || self.kind == QdiscKind::$kind {
                        let cfg = table(&self.$field);
                        <$($ty)::+ as Discipline>::validate(&cfg, limit).map_err(|e| e.within(stringify!($field)))?;
                    }
                )+
                Ok(())
            }

            /// Builds the discipline of `kind` for one port. Call `validate` first.
            pub fn build<P: QPacket>(&self, ctx: &PortContext) -> AnyQdisc<P> {
                let limit = self.limit();
                match self.kind {
                    $( QdiscKind::$kind => {
                        let cfg = table(&self.$field);
                        AnyQdisc::$variant(stored!($store, <$($ty)::+<P> as Discipline>::build(&cfg, limit, ctx)))
                    } )+
                }
            }

            /// The same table with the active kind's `[queue.<kind>]` filled in with its
            /// defaults when absent: the discipline as a port runs it (a scenario's resolved
            /// form, `dcfair-switch plan`).
            pub fn with_defaults(&self) -> QueueConfig {
                let mut q = self.clone();
                match q.kind {
                    $( QdiscKind::$kind => { q.$field = Some(table(&self.$field).into_owned()); } )+
                }
                q
            }

            /// After the whole network is built: lets the active discipline resolve what its
            /// table names in it (see [`Discipline::wire`]). Error keys are relative to `queue`.
            pub fn wire<P: QPacket>(&self, ports: &mut dyn Ports<AnyQdisc<P>>) -> Result<(), ConfigError> {
                match self.kind {
                    $( QdiscKind::$kind => {
                        let cfg = table(&self.$field);
                        <$($ty)::+<P> as Discipline>::wire(&cfg, ports).map_err(|e| e.within(stringify!($field)))
                    } )+
                }
            }
        }

        /// Static dispatch over every registered discipline and the port wrappers. One per
        /// port, and as large as its largest inline variant: the disciplines marked `boxed` in
        /// the registry live out of line, so that a port of an inline one stays a few cache
        /// lines (see `Port` in the simulator's `net.rs`).
        pub enum AnyQdisc<P = Packet> {
            $( $variant(store!($store, $($ty)::+<P>)), )+
            /// A wrapper around the port's discipline supplied from above the disciplines (a
            /// transport's; see [`AnyQdisc::wrap`]).
            Wrapped(Box<Wrapper<P>>),
            /// A loss device in front of the port's discipline (see [`AnyQdisc::with_loss`]).
            Lossy(Box<loss::LossyPort<P, AnyQdisc<P>>>),
        }

        impl<P: std::fmt::Debug> std::fmt::Debug for AnyQdisc<P> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $( AnyQdisc::$variant(q) => f.debug_tuple(stringify!($variant)).field(q).finish(), )+
                    AnyQdisc::Wrapped(_) => f.write_str("Wrapped(..)"),
                    AnyQdisc::Lossy(q) => f.debug_tuple("Lossy").field(q).finish(),
                }
            }
        }

        $(
            impl<P> Variant<AnyQdisc<P>> for $($ty)::+<P> {
                #[inline]
                fn of_mut(q: &mut AnyQdisc<P>) -> Option<&mut Self> {
                    match q {
                        AnyQdisc::$variant(d) => Some(std::borrow::BorrowMut::borrow_mut(d)),
                        _ => None,
                    }
                }
            }
        )+

        macro_rules! dispatch {
            ($self:ident, $q:ident => $e:expr) => {
                match $self {
                    $( AnyQdisc::$variant($q) => $e, )+
                    AnyQdisc::Wrapped($q) => $e,
                    AnyQdisc::Lossy($q) => $e,
                }
            };
        }
    };
}

disciplines! {
    Droptail droptail => DropTail(droptail::DropTail, droptail::DropTailConfig) inline:
        "FIFO tail drop; with a marking threshold, the switch side of DCTCP";
    Red red => Red(red::Red, red::RedConfig) boxed:
        "Random Early Detection: early drop or ECN mark on the average queue (Floyd and Jacobson)";
    Sfq sfq => Sfq(sfq::Sfq, sfq::SfqConfig) boxed:
        "Stochastic Fair Queueing: hashed per-flow FIFOs served round robin";
    Drr drr => Drr(drr::Drr, drr::DrrConfig) boxed:
        "Deficit Round Robin over hashed flow queues, drop from the longest";
    Hcf hcf => Hcf(hcf::Hcf, hcf::HcfConfig) boxed:
        "Hashed Credits Fair: credit bins, high and low priority queues (the HCF paper)";
    Blackout blackout => Blackout(blackout::Blackout, blackout::BlackoutConfig) boxed:
        "the TCP Outcast paper's port-blackout model: ON periods drop one input's packets";
    Pfabric pfabric => Pfabric(pfabric::PFabric, pfabric::PfabricConfig) boxed:
        "pFabric's priority buffer: serve the smallest remaining size, evict the largest";
    Codel codel => Codel(codel::Codel, codel::CodelConfig) boxed:
        "CoDel over one FIFO: drop or mark on sojourn time (RFC 8289)";
    FqCodel fq_codel => FqCodel(fq_codel::FqCodel, fq_codel::FqCodelConfig) boxed:
        "FQ-CoDel: per-flow queues, DRR with new-flow priority, CoDel per queue (RFC 8290)";
    Afd afd => Afd(afd::Afd, afd::AfdConfig) boxed:
        "Approximate Fair Dropping: one FIFO, early drops above a fair share estimated from a shadow buffer";
}

impl QueueConfig {
    pub fn limit(&self) -> Limit {
        Limit {
            pkts: self.limit_pkts,
            bytes: self.limit_bytes,
        }
    }

    fn validate_limit(&self) -> Result<(), ConfigError> {
        if self.limit_pkts.is_none() && self.limit_bytes.is_none() {
            return Err(ConfigError::new(
                "limit_pkts",
                "set limit_pkts or limit_bytes",
            ));
        }
        if self.limit_pkts == Some(0) {
            return Err(ConfigError::new("limit_pkts", "must be at least 1 packet"));
        }
        if self.limit_bytes == Some(0) {
            return Err(ConfigError::new("limit_bytes", "must be at least 1 byte"));
        }
        Ok(())
    }
}

impl<P: QPacket> AnyQdisc<P> {
    /// `self` behind a loss device that refuses a share `rate` of the arrivals (`loss.rs`), or
    /// `self` itself when `rate` is 0 (no device, no draw).
    pub fn with_loss(self, rate: f64, ctx: &PortContext) -> AnyQdisc<P> {
        if rate > 0.0 {
            AnyQdisc::Lossy(Box::new(loss::LossyPort::new(rate, self, ctx)))
        } else {
            self
        }
    }

    /// A port whose discipline runs inside `wrapper`, a [`Qdisc`] defined above the disciplines
    /// that holds the port's discipline and decides what reaches it (a transport's credit
    /// shaper). Its calls are virtual: only the ports of runs that need a wrapper pay for it. It is
    /// `Send`, as every port is: a run on several threads builds a copy per thread.
    pub fn wrap(wrapper: impl Qdisc<Pkt = P> + Send + 'static) -> AnyQdisc<P> {
        AnyQdisc::Wrapped(Box::new(Wrapper(Box::new(wrapper))))
    }

    /// Where the packet that leaves next lies, when the discipline can tell without a search
    /// (DropTail, the one inline discipline: its FIFO's head), for a cache hint.
    #[inline(always)]
    pub fn next_out_hint(&self) -> Option<*const P> {
        match self {
            AnyQdisc::DropTail(q) => q.front_ptr(),
            _ => None,
        }
    }
}

/// A port wrapper from above the disciplines ([`AnyQdisc::wrap`]): its calls are virtual, and
/// kept out of line, so that the dispatch of every other port is the enum's alone.
pub struct Wrapper<P>(Box<dyn Qdisc<Pkt = P> + Send>);

impl<P: QPacket> Qdisc for Wrapper<P> {
    type Pkt = P;
    #[inline(never)]
    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        self.0.enqueue(pkt, now, ev)
    }
    #[inline(never)]
    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        self.0.dequeue(now, ev)
    }
    #[inline(never)]
    fn len_pkts(&self) -> usize {
        self.0.len_pkts()
    }
    #[inline(never)]
    fn len_bytes(&self) -> u64 {
        self.0.len_bytes()
    }
    fn name(&self) -> &'static str {
        self.0.name()
    }
    #[inline(never)]
    fn ready_at(&self) -> Option<SimTime> {
        self.0.ready_at()
    }
}

impl<P: QPacket> Qdisc for AnyQdisc<P> {
    type Pkt = P;
    #[inline(always)]
    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        dispatch!(self, q => q.enqueue(pkt, now, ev))
    }
    #[inline(always)]
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
    #[inline(always)]
    fn pass_empty(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) -> Result<Option<P>, P> {
        dispatch!(self, q => q.pass_empty(pkt, now, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::ctx;
    use serde::de::{value::Error as DeError, IntoDeserializer};

    #[test]
    fn each_kind_is_named_by_its_table_and_builds_its_own_discipline() {
        assert_eq!(QdiscKind::ALL.len(), KINDS.len());
        for (&kind, info) in QdiscKind::ALL.iter().zip(KINDS) {
            assert_eq!(kind.as_str(), info.name);
            let parsed = QdiscKind::deserialize(info.name.into_deserializer());
            assert_eq!(parsed, Ok::<_, DeError>(kind));
            let cfg = QueueConfig { kind, ..QueueConfig::default() };
            if kind == QdiscKind::Blackout {
                continue; // needs drop_pkts (its validation says so)
            }
            cfg.validate().unwrap();
            let q: AnyQdisc = cfg.build(&ctx(1));
            assert_eq!(q.name(), info.name);
            assert!(!info.summary.is_empty());
        }
    }

    #[test]
    fn a_loss_device_goes_around_the_kind_when_the_port_has_a_rate() {
        let cfg = QueueConfig::default();
        let lossy: AnyQdisc = cfg.build(&ctx(1)).with_loss(0.5, &ctx(1));
        assert!(matches!(lossy, AnyQdisc::Lossy(_)));
        let bare: AnyQdisc = cfg.build(&ctx(1)).with_loss(0.0, &ctx(1));
        assert_eq!(bare.name(), "droptail");
        assert!(matches!(bare, AnyQdisc::DropTail(_)));
    }
}
