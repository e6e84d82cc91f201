//! Transports: the end hosts' protocols, above the disciplines, behind one registry.
//!
//! Rules:
//! - A flow's two endpoints are one [`Endpoint`]: an enum with one variant per registered
//!   transport, dispatched statically (one `match` per call, no virtual call). The engine
//!   calls [`Endpoint::on_packet`], [`Endpoint::on_timer`], [`Endpoint::deadline`] and the
//!   observation calls of [`Transport`] (`framework.rs`, which states the rules every transport
//!   keeps), and names no transport.
//! - The registry is this file: one line per transport in the `transports!` call below, and
//!   everything else follows from it (`docs/extending.md`, "Adding a transport"). A line is the
//!   variant of [`Endpoint`] (and of [`TransportKind`] for a transport chosen by name), the
//!   transport's name (its module in this folder, and what `transport = "<name>"` takes), its
//!   table in brackets when it has one (`[xpass]`: a top-level table of a scenario), the type of
//!   its endpoints, where [`Endpoint`] keeps them (`inline`, or `boxed` out of line), for a
//!   transport that binds flows together the type of that bond (`bond T`), and a one-line
//!   summary.
//! - The lines under `chosen` are the transports a flow group, the incast or the Poisson
//!   arrivals choose (`transport = "<name>"`, [`TransportKind`]; the first is the default). They
//!   are [`Selectable`]: built from a [`FlowSpec`] and their table. The lines under `built` are
//!   made by their workloads (an MPTCP subflow from `tcp.mptcp`, a UDP source from `[udp]`).
//! - From a line come: the module declaration; the [`Endpoint`] variant and its dispatch; the
//!   [`Variant`] projection; for a chosen transport the [`TransportKind`] value, its table in a
//!   scenario (through [`transport_tables!`](crate::transport_tables), which adds one field per
//!   table to the scenario's type: the config layer names no transport), the table's
//!   validation ([`TablesRef::validate`]), the table as a run uses it ([`Tables`]),
//!   construction ([`Endpoint::build`]) and its wrapper around every port's discipline
//!   ([`wrap_port`]); for every transport its figures in `summary.json` ([`summary`]); for a
//!   transport with a bond, the [`AnyBond`] variant.
//! - Only TCP (and the MPTCP subflow, a TCP flow) is `inline`: [`Endpoint`] sits in every flow
//!   of a run and is as large as its largest inline variant. A transport larger than TCP's two
//!   state machines is `boxed`.
//! - Layers: [`framework`] (the traits and what builds a transport) imports no transport; each
//!   transport imports it, the TCP state machines (`crate::tcp`) and the disciplines (a port
//!   wrapper's types); this file imports the transports. No discipline imports a transport.

#[macro_use]
pub mod framework;

pub use framework::{Bond, Data, FlowSpec, HasEndpoint, NoTable, Selectable, Side, Transport, Variant};

use crate::packet::Packet;
use crate::qdisc::{AnyQdisc, PortContext, QPacket};
use crate::tcp::{FlowIds, SenderStats, TcpConfig};
use crate::telemetry::IntHop;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// What a receiver's call reports to the engine ([`Endpoint::receive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Receipt {
    /// The packet counts as an arrival of the flow ([`Transport::is_arrival`]).
    pub arrival: bool,
    /// Bytes the receiver has delivered in order, now ([`Transport::delivered_bytes`]).
    pub delivered: u64,
    /// The receiver answers nothing and keeps no timer ([`Transport::ONE_WAY`]).
    pub one_way: bool,
}

/// One registered transport, as `dcfair kinds` lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransportInfo {
    /// Its name: `transport = "<name>"` for a chosen one.
    pub name: &'static str,
    /// Chosen by name (else made by its workload).
    pub chosen: bool,
    /// One line: what the transport does.
    pub summary: &'static str,
}

/// The [`Variant`] projection of the endpoints of type `$ty`, held by `Endpoint::$v`.
macro_rules! variant {
    ($v:ident, $ty:ty) => {
        impl Variant<Endpoint> for $ty {
            #[inline(always)]
            fn of(e: &Endpoint) -> Option<&Self> {
                match e {
                    Endpoint::$v(t) => Some(std::borrow::Borrow::borrow(t)),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
            #[inline(always)]
            fn of_mut(e: &mut Endpoint) -> Option<&mut Self> {
                match e {
                    Endpoint::$v(t) => Some(std::borrow::BorrowMut::borrow_mut(t)),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }
    };
}

/// The table of a chosen transport in [`Tables`], or [`NoTable`].
macro_rules! table_of {
    ($tables:ident) => { &NoTable };
    ($tables:ident $field:ident) => { &$tables.$field };
}

macro_rules! transports {
    (
        chosen { $( $cv:ident $cname:ident $([$ctable:ident])? => $cty:ty, $cstore:ident : $csum:literal ; )+ }
        built { $( $bv:ident $bname:ident => $bty:ty, $bstore:ident $(, bond $bond:ty)? : $bsum:literal ; )+ }
    ) => {
        transports! { @expand ($)
            chosen { $( $cv $cname $([$ctable])? => $cty, $cstore : $csum ; )+ }
            built { $( $bv $bname => $bty, $bstore $(, bond $bond)? : $bsum ; )+ }
        }
    };
    (@expand ($d:tt)
        chosen { $( $cv:ident $cname:ident $([$ctable:ident])? => $cty:ty, $cstore:ident : $csum:literal ; )+ }
        built { $( $bv:ident $bname:ident => $bty:ty, $bstore:ident $(, bond $bond:ty)? : $bsum:literal ; )+ }
    ) => {
        $( pub mod $cname; )+
        $( pub mod $bname; )+

        /// The transport of a flow group, of the incast servers or of the Poisson arrivals
        /// (`transport = "<name>"`): the registry's chosen transports, the first by default.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, Default)]
        #[serde(rename_all = "snake_case")]
        pub enum TransportKind {
            #[default]
            $( $cv, )+
        }

        impl TransportKind {
            /// Every chosen transport, in registry order.
            pub const ALL: &'static [TransportKind] = &[$(TransportKind::$cv),+];
            /// Its name, as `transport` takes it.
            pub fn as_str(self) -> &'static str {
                match self { $( TransportKind::$cv => stringify!($cname), )+ }
            }
            /// Its name in messages ("ExpressPass").
            pub fn title(self) -> &'static str {
                match self { $( TransportKind::$cv => <$cty as Transport>::TITLE, )+ }
            }
            /// Flow control by TCP's window, which FairQ rewrites.
            pub fn tcp_window(self) -> bool {
                match self { $( TransportKind::$cv => <$cty as Transport>::TCP_WINDOW, )+ }
            }
            /// Its flows may be MPTCP subflows.
            pub fn multipath(self) -> bool {
                match self { $( TransportKind::$cv => <$cty as Transport>::MULTIPATH, )+ }
            }
            /// It answers incast requests on a new connection each (`per_request`).
            pub fn reconnects(self) -> bool {
                match self { $( TransportKind::$cv => <$cty as Transport>::RECONNECTS, )+ }
            }
        }

        /// Every registered transport, in registry order.
        pub const TRANSPORTS: &[TransportInfo] = &[
            $( TransportInfo { name: stringify!($cname), chosen: true, summary: $csum }, )+
            $( TransportInfo { name: stringify!($bname), chosen: false, summary: $bsum }, )+
        ];

        /// The tables of the chosen transports that have one, each as a run uses it (its
        /// defaults where the scenario has no such table).
        #[derive(Clone, Debug, Default)]
        pub struct Tables {
            $( $( pub $ctable: <$cty as Selectable>::Table, )? )+
        }

        /// The tables of the chosen transports as a scenario holds them: each `None` when the
        /// scenario has no such table.
        #[derive(Clone, Copy, Debug, Default)]
        pub struct TablesRef<'a> {
            $( $( pub $ctable: Option<&'a <$cty as Selectable>::Table>, )? )+
            #[doc(hidden)]
            pub _tables: std::marker::PhantomData<&'a ()>,
        }

        impl TablesRef<'_> {
            /// Every table present, checked against the run's MTU; the error key starts with the
            /// table's name.
            pub fn validate(&self, mtu: u32) -> Result<(), crate::config::ConfigError> {
                $( $(
                    if let Some(t) = self.$ctable {
                        <$cty as Selectable>::validate(t, mtu).map_err(|e| e.within(stringify!($ctable)))?;
                    }
                )? )+
                let _ = mtu;
                Ok(())
            }

            /// The tables as a run uses them: defaults where absent.
            pub fn resolved(&self) -> Tables {
                Tables { $( $( $ctable: self.$ctable.cloned().unwrap_or_default(), )? )+ }
            }
        }

        /// The type of each chosen transport's table, by its [`TransportKind`] variant's name
        /// (for [`transport_tables!`](crate::transport_tables)).
        #[doc(hidden)]
        pub mod table_type {
            use super::*;
            $( $( pub type $cv = <$cty as Selectable>::Table; const _: &str = stringify!($ctable); )? )+
        }

        /// Adds the chosen transports' tables to the scenario's type: wrap its definition in
        /// this macro, and it gains one field per table after the fields written (`pub xpass:
        /// Option<XpassConfig>`, the top-level `[xpass]`), and the methods `transport_tables`
        /// (the tables as it holds them, a [`TablesRef`]) and `resolve_transport_tables` (the
        /// tables of the transports a run uses, with their defaults where absent: the scenario
        /// as it runs). So the config layer names no transport.
        #[macro_export]
        macro_rules! transport_tables {
            ($d(#[$d meta:meta])* $d vis:vis struct $d name:ident { $d($d body:tt)* }) => {
                $d(#[$d meta])*
                $d vis struct $d name {
                    $d($d body)*
                    $( $(
                        #[doc = concat!("The `[", stringify!($ctable), "]` table (", $csum, "); its defaults when absent.")]
                        pub $ctable: Option<$d crate::transport::table_type::$cv>,
                    )? )+
                }

                impl $d name {
                    /// The chosen transports' tables as the scenario holds them.
                    pub fn transport_tables(&self) -> $d crate::transport::TablesRef<'_> {
                        $d crate::transport::TablesRef {
                            $( $( $ctable: self.$ctable.as_ref(), )? )+
                            _tables: std::marker::PhantomData,
                        }
                    }

                    /// Fills in the table of every transport of `used` that has one with its
                    /// defaults, where absent.
                    pub fn resolve_transport_tables(&mut self, used: &[$d crate::transport::TransportKind]) {
                        $( $(
                            if used.contains(&$d crate::transport::TransportKind::$cv) {
                                self.$ctable.get_or_insert_with(Default::default);
                            }
                        )? )+
                        let _ = used;
                    }
                }
            };
        }

        /// The two endpoints of one flow, whichever its transport (static dispatch: module
        /// rules). As large as its largest inline variant. A clone is a flow's copy for a run in
        /// parts (the ends a part runs of a flow whose other end runs in another part).
        #[derive(Clone, Debug)]
        pub enum Endpoint {
            $( $cv(store!($cstore, $cty)), )+
            $( $bv(store!($bstore, $bty)), )+
        }

        macro_rules! each {
            ($self:ident, $e:ident => $x:expr) => {
                match $self {
                    $( Endpoint::$cv($e) => $x, )+
                    $( Endpoint::$bv($e) => $x, )+
                }
            };
        }

        /// `$x` with `$e` the endpoints `$self` holds, as `&mut` their own type.
        macro_rules! each_mut {
            ($self:ident, $e:ident => $x:expr) => {
                match $self {
                    $( Endpoint::$cv(b) => { let $e: &mut $cty = unboxed_mut!($cstore, b); $x } )+
                    $( Endpoint::$bv(b) => { let $e: &mut $bty = unboxed_mut!($bstore, b); $x } )+
                }
            };
        }

        /// `$x` with `$t` the type of the endpoints `$self` holds.
        macro_rules! each_type {
            ($self:ident, $t:ident => $x:expr) => {
                match $self {
                    $( Endpoint::$cv(_) => { type $t = $cty; $x } )+
                    $( Endpoint::$bv(_) => { type $t = $bty; $x } )+
                }
            };
        }

        $( variant!($cv, $cty); )+
        $( variant!($bv, $bty); )+

        impl Endpoint {
            /// The endpoints of one flow of the chosen transport `kind`, with its table from
            /// `tables`.
            pub fn build(kind: TransportKind, tables: &Tables, spec: &FlowSpec) -> Endpoint {
                let _ = tables;
                match kind {
                    $( TransportKind::$cv => Endpoint::$cv(stored!($cstore, <$cty as Selectable>::build(table_of!(tables $($ctable)?), spec))), )+
                }
            }

            /// Swaps the state of end `side` with `other`'s ([`Transport::adopt`]); `other` is a
            /// copy of the same flow, so of the same transport.
            pub fn adopt(&mut self, other: &mut Endpoint, side: Side) {
                match (self, other) {
                    $( (Endpoint::$cv(a), Endpoint::$cv(b)) => unboxed_mut!($cstore, a).adopt(unboxed_mut!($cstore, b), side), )+
                    $( (Endpoint::$bv(a), Endpoint::$bv(b)) => unboxed_mut!($bstore, a).adopt(unboxed_mut!($bstore, b), side), )+
                    #[allow(unreachable_patterns)]
                    (a, b) => panic!("a {} flow's copy is a {} flow", a.name(), b.name()),
                }
            }

            /// The registered name of the flow's transport.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Endpoint::$cv(_) => stringify!($cname), )+
                    $( Endpoint::$bv(_) => stringify!($bname), )+
                }
            }
        }

        /// The port discipline `q` with the wrappers of the chosen transports in `used` around
        /// it, in registry order (ExpressPass's credit shaper), their tables from `tables`.
        pub fn wrap_port<P: QPacket + 'static>(used: &[TransportKind], tables: &Tables, q: AnyQdisc<P>, ctx: &PortContext) -> AnyQdisc<P> {
            let _ = tables;
            let mut q = q;
            $(
                if used.contains(&TransportKind::$cv) {
                    q = <$cty as Selectable>::wrap_port(table_of!(tables $($ctable)?), q, ctx);
                }
            )+
            q
        }

        /// The figures the transports add to `summary.json` over the flows of `ends`: each
        /// transport's [`Transport::summary`] over its own flows, for every transport with at
        /// least one flow in the run, in registry order.
        pub fn summary<'a>(ends: impl Iterator<Item = &'a Endpoint> + Clone) -> Vec<(&'static str, u64)> {
            let mut out = Vec::new();
            $(
                let of: Vec<&$cty> = ends.clone().filter_map(<$cty as Variant<Endpoint>>::of).collect();
                if !of.is_empty() {
                    out.extend(<$cty as Transport>::summary(&of));
                }
            )+
            $(
                let of: Vec<&$bty> = ends.clone().filter_map(<$bty as Variant<Endpoint>>::of).collect();
                if !of.is_empty() {
                    out.extend(<$bty as Transport>::summary(&of));
                }
            )+
            out
        }

        /// A transport's state over several flows (its [`Bond`]), one variant per transport
        /// with a bond.
        #[derive(Debug)]
        pub enum AnyBond {
            $( $( $bv($bond), )? )+
        }

        macro_rules! each_bond {
            ($self:ident, $b:ident => $x:expr) => {
                match $self {
                    $( $( AnyBond::$bv($b) => { let $b: &$bond = $b; $x } )? )+
                }
            };
            (mut $self:ident, $b:ident => $x:expr) => {
                match $self {
                    $( $( AnyBond::$bv($b) => { let $b: &mut $bond = $b; $x } )? )+
                }
            };
        }
    };
}

transports! {
    chosen {
        Tcp tcp => tcp::TcpEnds, inline:
            "TCP: the sender and receiver state machines of the flow's tcp table (NewReno, CUBIC, DCTCP, pFabric's)";
        Xpass xpass [xpass] => xpass::XpassEnds, boxed:
            "ExpressPass: receiver-driven credits, rate-limited at every switch port (the SIGCOMM 2017 paper)";
        Roce roce [roce] => roce::RoceEnds, boxed:
            "RoCEv2: PSN-numbered packets paced at a rate, go-back-N or selective (IRN) recovery, DCQCN or TIMELY";
        Ndp ndp [ndp] => ndp::NdpEnds, boxed:
            "NDP: a full window at once, then one packet per PULL paced by the receiver; switches trim payloads to headers (SIGCOMM 2017)";
    }
    built {
        Mptcp mptcp => mptcp::Subflow, inline, bond mptcp::Connection:
            "Multipath TCP: a connection of tcp.mptcp.subflows TCP subflows, coupled (LIA, OLIA)";
        Udp udp => udp::UdpEnds, inline:
            "UDP: a constant-rate or Poisson source ([udp])";
    }
}

/// A call of the engine's packet path: TCP's arm inline (`$x`, with `$t` the TCP ends), every
/// other transport's through one call out of line (`$other`, with `$e` the endpoints), so that
/// the path of a TCP flow is a compare and a branch, as it was before transports were an open
/// set (`docs/performance.md`, "Transports as an open set"). TCP is the inline transport of the
/// registry.
macro_rules! tcp_first {
    ($self:ident, $t:ident => $x:expr, |$e:ident| $other:expr) => {
        match $self {
            Endpoint::Tcp($t) => $x,
            $e => $other,
        }
    };
}

impl Endpoint {
    /// The sender opens the flow at its start time.
    #[inline]
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        each!(self, e => e.start(now, out))
    }
    /// The application hands the sender `bytes` more to send.
    #[inline]
    pub fn write(&mut self, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        each!(self, e => e.write(bytes, now, out))
    }
    /// A new connection per request ([`Transport::reconnect`]).
    pub fn reconnect(&mut self, ids: &mut FlowIds, tcp: &TcpConfig, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        each!(self, e => e.reconnect(ids, tcp, bytes, now, out))
    }
    /// A packet of the flow reached end `side`.
    #[inline(always)]
    pub fn on_packet(&mut self, side: Side, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        #[inline(never)]
        fn other(e: &mut Endpoint, side: Side, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
            each!(e, t => t.on_packet(side, pkt, now, out))
        }
        tcp_first!(self, t => t.on_packet(side, pkt, now, out), |e| other(e, side, pkt, now, out))
    }
    /// The timer of end `side` fired.
    #[inline(always)]
    pub fn on_timer(&mut self, side: Side, now: SimTime, out: &mut Vec<Packet>) {
        #[inline(never)]
        fn other(e: &mut Endpoint, side: Side, now: SimTime, out: &mut Vec<Packet>) {
            each!(e, t => t.on_timer(side, now, out))
        }
        tcp_first!(self, t => t.on_timer(side, now, out), |e| other(e, side, now, out))
    }
    /// The deadline of end `side`.
    #[inline(always)]
    pub fn deadline(&self, side: Side) -> Option<SimTime> {
        #[inline(never)]
        fn other(e: &Endpoint, side: Side) -> Option<SimTime> {
            each!(e, t => t.deadline(side))
        }
        tcp_first!(self, t => t.deadline(side), |e| other(e, side))
    }
    /// Whether the sender is a clock ([`Transport::CLOCKED`]).
    #[inline(always)]
    pub fn clocked(&self) -> bool {
        tcp_first!(self, _t => <tcp::TcpEnds as Transport>::CLOCKED, |e| each_type!(e, T => <T as Transport>::CLOCKED))
    }
    /// A packet of the flow reached its receiver: the receiver takes it ([`Transport::on_packet`]),
    /// and what the engine records of it comes back in one [`Receipt`] (one dispatch per
    /// packet).
    #[inline(always)]
    pub fn receive(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) -> Receipt {
        #[inline(always)]
        fn with<T: Transport>(t: &mut T, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) -> Receipt {
            let arrival = T::is_arrival(pkt);
            t.on_packet(Side::Receiver, pkt, now, out);
            Receipt { arrival, delivered: t.delivered_bytes(), one_way: T::ONE_WAY }
        }
        #[inline(never)]
        fn other(e: &mut Endpoint, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) -> Receipt {
            each_mut!(e, t => with(t, pkt, now, out))
        }
        tcp_first!(self, t => with(t, pkt, now, out), |e| other(e, pkt, now, out))
    }
    /// A packet that carries telemetry reached end `side` ([`Transport::on_packet_int`]); at the
    /// receiver, what the engine records of it comes back as from [`Endpoint::receive`].
    pub fn on_packet_int(&mut self, side: Side, pkt: &Packet, hops: &[IntHop], now: SimTime, out: &mut Vec<Packet>) -> Receipt {
        fn with<T: Transport>(t: &mut T, side: Side, pkt: &Packet, hops: &[IntHop], now: SimTime, out: &mut Vec<Packet>) -> Receipt {
            let arrival = side == Side::Receiver && T::is_arrival(pkt);
            t.on_packet_int(side, pkt, hops, now, out);
            Receipt { arrival, delivered: t.delivered_bytes(), one_way: T::ONE_WAY }
        }
        each_mut!(self, t => with(t, side, pkt, hops, now, out))
    }
    /// The class of the sender's packets ([`Transport::class`]).
    pub fn class(&self) -> u8 {
        each!(self, e => e.class())
    }
    /// Whether the flow's packets ask for telemetry ([`Transport::wants_telemetry`]).
    pub fn wants_telemetry(&self) -> bool {
        each!(self, e => e.wants_telemetry())
    }
    /// Whether packets go one way only ([`Transport::ONE_WAY`]).
    #[inline(always)]
    pub fn one_way(&self) -> bool {
        tcp_first!(self, _t => <tcp::TcpEnds as Transport>::ONE_WAY, |e| each_type!(e, T => <T as Transport>::ONE_WAY))
    }
    /// The protocol of the flow's data packets ([`Transport::PROTO`]).
    pub fn proto(&self) -> crate::packet::Proto {
        each_type!(self, T => <T as Transport>::PROTO)
    }
    /// `flows.csv`'s `kind` of the flow ([`Transport::ROW_KIND`]).
    pub fn row_kind(&self) -> &'static str {
        each_type!(self, T => <T as Transport>::ROW_KIND)
    }
    /// Whether `pkt`, reaching the receiver, is an arrival of the flow.
    #[inline(always)]
    pub fn is_arrival(&self, pkt: &Packet) -> bool {
        #[inline(never)]
        fn other(e: &Endpoint, pkt: &Packet) -> bool {
            each_type!(e, T => <T as Transport>::is_arrival(pkt))
        }
        tcp_first!(self, _t => <tcp::TcpEnds as Transport>::is_arrival(pkt), |e| other(e, pkt))
    }
    /// Payload bytes delivered in order at the receiver.
    #[inline(always)]
    pub fn delivered_bytes(&self) -> u64 {
        #[inline(never)]
        fn other(e: &Endpoint) -> u64 {
            each!(e, t => t.delivered_bytes())
        }
        tcp_first!(self, t => t.delivered_bytes(), |e| other(e))
    }
    /// Data packets the sender emitted.
    #[inline]
    pub fn data_pkts_sent(&self) -> u64 {
        each!(self, e => e.data_pkts_sent())
    }
    /// The sender's counters of `flows.csv`.
    pub fn sender_stats(&self) -> SenderStats {
        each!(self, e => e.sender_stats())
    }
    /// The receiver's window-scale shift, for FairQ's end-host helper.
    #[inline(always)]
    pub fn window_shift(&self) -> Option<u8> {
        #[inline(never)]
        fn other(e: &Endpoint) -> Option<u8> {
            each!(e, t => t.window_shift())
        }
        tcp_first!(self, t => t.window_shift(), |e| other(e))
    }
    /// The sender's congestion window, bytes, if it has one.
    pub fn cwnd_bytes(&self) -> Option<u64> {
        each!(self, e => e.cwnd_bytes())
    }
    /// The sender's state for the `trace` feature's `s` line.
    pub fn trace_state(&self) -> Option<String> {
        each!(self, e => e.trace_state())
    }
}

impl AnyBond {
    /// The flow ids it binds.
    #[inline]
    pub fn flows(&self) -> Range<usize> {
        each_bond!(self, b => Bond::<Endpoint>::flows(b))
    }
    /// Whether flow `k` of the bond starts at its own start time.
    pub fn opens(&self, k: usize) -> bool {
        each_bond!(self, b => Bond::<Endpoint>::opens(b, k))
    }
    /// Right before a packet reaches end `side` of flow `k` of `flows` (the bond's flows).
    #[inline]
    pub fn before_packet<F: HasEndpoint<Endpoint>>(&mut self, flows: &mut [F], k: usize, side: Side) {
        each_bond!(mut self, b => b.before_packet(flows, k, side))
    }
    /// Right after flow `k`'s receiver took a packet and has delivered `delivered` bytes in
    /// order: how far the bond's own in-order bytes advanced.
    #[inline]
    pub fn after_receive(&mut self, k: usize, delivered: u64) -> u64 {
        each_bond!(mut self, b => Bond::<Endpoint>::after_receive(b, k, delivered))
    }
    /// Right after a sender of the bond took a packet or started: the flows (bit k) whose
    /// deadlines may have moved.
    #[inline]
    pub fn after_send<F: HasEndpoint<Endpoint>>(&mut self, flows: &mut [F], now: SimTime, out: &mut Vec<Packet>) -> u32 {
        each_bond!(mut self, b => b.after_send(flows, now, out))
    }
    /// Bytes delivered in order at the bond's level.
    pub fn delivered_bytes(&self) -> u64 {
        each_bond!(self, b => Bond::<Endpoint>::delivered_bytes(b))
    }
    /// The bond's size (`None`: without end).
    pub fn size(&self) -> Option<u64> {
        each_bond!(self, b => Bond::<Endpoint>::size(b))
    }
    /// The bond's start time.
    pub fn start(&self) -> SimTime {
        each_bond!(self, b => Bond::<Endpoint>::start(b))
    }
}

#[cfg(test)]
mod tests;
