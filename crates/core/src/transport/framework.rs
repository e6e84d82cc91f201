//! What every transport implements, and what builds and drives it.
//!
//! Rules:
//! - A [`Transport`] is the pair of endpoints of one flow: the sender at the flow's source host
//!   and the receiver at its destination, in one value (one per flow, in the engine's flow
//!   table; `Endpoint` is the registry's enum over them). The engine hands it `now`, the packet
//!   that reached one of its two ends ([`Side`]) and a `Vec<Packet>` to push what that end
//!   emits; it never reads a clock, draws only from the streams it was built with, and keeps
//!   one deadline per end ([`Transport::deadline`]).
//! - Timers are lazy by default: the engine keeps at most one timer event per end, at or
//!   before its deadline, and asks again after every call. A transport whose sender is a clock
//!   ([`Transport::CLOCKED`]: a constant-rate or Poisson source) gets an event at exactly each
//!   deadline instead, scheduled before what it emitted, and never moved.
//! - What the engine observes of a flow goes through the same calls whatever the transport:
//!   arrivals at the receiver ([`Transport::is_arrival`]), in-order bytes
//!   ([`Transport::delivered_bytes`]), data packets sent ([`Transport::data_pkts_sent`]), the
//!   sender's counters ([`Transport::sender_stats`]); a transport adds its own figures to
//!   `summary.json` through [`Transport::summary`].
//! - A transport that a flow group, the incast or the Poisson arrivals choose by name
//!   (`transport = "<name>"`) is also [`Selectable`]: it is built from a [`FlowSpec`] and its
//!   table (`[<name>]`, or [`NoTable`]), validates that table, and may put a wrapper around
//!   every port's discipline when a run has its flows ([`Selectable::wrap_port`]).
//! - A transport that binds several flows together (MPTCP's connection over its subflows)
//!   keeps that state in a [`Bond`], which the engine calls around the calls of the flows it
//!   binds. The flows stay the engine's; a bond reaches their endpoints through
//!   [`HasEndpoint`] and [`Variant`].
//! - Imports the packet, time, configuration, the disciplines (the port wrapper's types) and
//!   the TCP types every transport shares (flow identity, segment sizes, sender counters);
//!   never the registry (`mod.rs`), which imports the transports.

use crate::config::ConfigError;
use crate::packet::{Packet, Proto};
use crate::qdisc::{AnyQdisc, PortContext, QPacket};
use crate::rng::Streams;
use crate::telemetry::IntHop;
use crate::tcp::{FlowIds, SenderStats, TcpConfig};
use crate::time::{BitsPerSec, SimTime};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// One end of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Side {
    /// At the flow's source host.
    Sender = 0,
    /// At the flow's destination host.
    Receiver = 1,
}

impl Side {
    /// Both sides, by index.
    pub const BOTH: [Side; 2] = [Side::Sender, Side::Receiver];

    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What the application gives a flow's sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data {
    /// `size` bytes from the start (`None`: without end).
    Bulk(Option<u64>),
    /// Nothing until the application writes ([`Transport::write`]): an incast server, an MPTCP
    /// subflow.
    Written,
}

/// Everything a [`Selectable`] transport needs to build one flow's endpoints.
#[derive(Clone, Debug)]
pub struct FlowSpec<'a> {
    pub ids: FlowIds,
    pub data: Data,
    /// The flow's TCP settings (its group's `tcp` table, or `[tcp]`): every transport takes its
    /// segment size (`mss_bytes`) and headers (`header_bytes`) from them.
    pub tcp: &'a TcpConfig,
    /// The rate of the sender's NIC (a rate-based sender's line rate).
    pub sender_rate: BitsPerSec,
    /// The rate of the receiver's NIC.
    pub receiver_rate: BitsPerSec,
    /// The run's MTU: the largest full segment of any group.
    pub mtu: u32,
    /// The run's random streams; a transport draws from streams named after it.
    pub streams: Streams,
}

/// The table of a transport that has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct NoTable;

/// The two endpoints of one flow (module rules).
pub trait Transport {
    /// The transport's name in messages ("ExpressPass").
    const TITLE: &'static str;
    /// `flows.csv`'s `kind` of its flows (`docs/metrics.md`: `tcp` or `udp`).
    const ROW_KIND: &'static str = "tcp";
    /// The protocol of its data packets: what the routes see (a sprayed transport's packets are
    /// spread per packet, `Routes::with_sprayed`).
    const PROTO: Proto = Proto::Tcp;
    /// Flow control by TCP's receive window, which FairQ rewrites.
    const TCP_WINDOW: bool = false;
    /// Its flows may be the subflows of an MPTCP connection (`tcp.mptcp.subflows > 1`).
    const MULTIPATH: bool = false;
    /// It can answer each incast request on a new connection (`incast.connection =
    /// "per_request"`, [`Transport::reconnect`]).
    const RECONNECTS: bool = false;
    /// The sender is a clock (module rules), not a lazy deadline.
    const CLOCKED: bool = false;
    /// Packets go one way: the receiver sends nothing back and keeps no timer, so only the way
    /// there must exist, and the engine neither emits nor re-arms after the receiver's calls.
    const ONE_WAY: bool = false;

    /// The sender opens the flow at its start time.
    fn start(&mut self, now: SimTime, out: &mut Vec<Packet>);
    /// The application hands the sender `bytes` more to send.
    fn write(&mut self, _bytes: u64, _now: SimTime, _out: &mut Vec<Packet>) {
        debug_assert!(false, "{} senders take no writes", Self::TITLE);
    }
    /// Closes the flow's connection and opens a new one that sends `bytes` (an incast answer
    /// per request); may give the flow a new source port in `ids`. Only for
    /// [`Transport::RECONNECTS`].
    fn reconnect(&mut self, _ids: &mut FlowIds, _tcp: &TcpConfig, _bytes: u64, _now: SimTime, _out: &mut Vec<Packet>) {
        debug_assert!(false, "{} connections are not reopened", Self::TITLE);
    }
    /// A packet of the flow reached end `side`.
    fn on_packet(&mut self, side: Side, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>);
    /// The timer of end `side` fired (at or after its deadline; it acts on what is due).
    fn on_timer(&mut self, side: Side, now: SimTime, out: &mut Vec<Packet>);
    /// The earliest time end `side` has something to do, if any.
    fn deadline(&self, side: Side) -> Option<SimTime>;
    /// Swaps the state of end `side` with `other`'s: a run on several threads drives a flow
    /// whose ends sit in different parts through two copies, each moving one end, and joins
    /// them with this call once the run is over. Everything of that end moves; nothing of the
    /// other end does.
    fn adopt(&mut self, other: &mut Self, side: Side);

    /// Whether `pkt`, reaching the receiver, counts as an arrival of the flow
    /// (`crates/sim/src/metrics.rs`): a segment with payload, by default.
    #[inline(always)]
    fn is_arrival(pkt: &Packet) -> bool {
        pkt.is_data()
    }
    /// Payload bytes delivered in order at the receiver, over every connection of the flow.
    fn delivered_bytes(&self) -> u64;
    /// Data packets the sender emitted, retransmissions included.
    fn data_pkts_sent(&self) -> u64;
    /// The sender's counters of `flows.csv` (bytes sent, retransmissions, timeouts); zero
    /// where the transport has no such counter.
    fn sender_stats(&self) -> SenderStats {
        SenderStats::default()
    }
    /// The receiver's window-scale shift, for a transport whose window FairQ's end-host helper
    /// tags ([`Transport::TCP_WINDOW`]).
    fn window_shift(&self) -> Option<u8> {
        None
    }
    /// The sender's congestion window, bytes, for a transport that has one (the time series'
    /// `cwnd`).
    fn cwnd_bytes(&self) -> Option<u64> {
        None
    }
    /// The 802.1p class of the packets the sender emits (`Packet::class`): with PFC, a sender
    /// in the lossless class is held while its NIC's lossless queue is not empty, as a NIC
    /// that pulls from its queue pairs would hold it.
    fn class(&self) -> u8 {
        0
    }
    /// Whether the flow's packets ask for in-band telemetry (`crate::telemetry`): the engine
    /// keeps telemetry records only in a run with such a flow.
    fn wants_telemetry(&self) -> bool {
        false
    }
    /// A packet that carries telemetry (`Packet::int` not `NONE`) reached end `side`, with the
    /// hops it carries: what [`Transport::on_packet`] does, with the hops to read.
    fn on_packet_int(&mut self, side: Side, pkt: &Packet, hops: &[IntHop], now: SimTime, out: &mut Vec<Packet>) {
        let _ = hops;
        self.on_packet(side, pkt, now, out)
    }
    /// The sender's state as the `trace` feature's `s` line writes it (TCP only).
    fn trace_state(&self) -> Option<String> {
        None
    }
    /// The figures this transport adds to `summary.json` over the run's flows of it (`ends`,
    /// never empty), as `(key, value)`.
    fn summary(_ends: &[&Self]) -> Vec<(&'static str, u64)>
    where
        Self: Sized,
    {
        Vec::new()
    }
}

/// The calls of [`Transport`] for a transport whose two ends are state machines of their own,
/// each with `on_packet(pkt, now, out)`, `on_timer(now, out)` and `next_deadline()`, the
/// sender also with `start(now, out)` and `write(bytes, now, out)` (TCP's, ExpressPass's): the
/// application's calls go to the sender, a packet, a timer and a deadline to the end of its
/// side. Inside the `impl Transport`, `two_ends!(sender, receiver);` names the fields that hold
/// the two.
macro_rules! two_ends {
    ($sender:ident, $receiver:ident) => {
        #[inline]
        fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
            self.$sender.start(now, out);
        }
        #[inline]
        fn write(&mut self, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
            self.$sender.write(bytes, now, out);
        }
        #[inline]
        fn on_packet(&mut self, side: Side, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
            match side {
                Side::Sender => self.$sender.on_packet(pkt, now, out),
                Side::Receiver => self.$receiver.on_packet(pkt, now, out),
            }
        }
        #[inline]
        fn on_timer(&mut self, side: Side, now: SimTime, out: &mut Vec<Packet>) {
            match side {
                Side::Sender => self.$sender.on_timer(now, out),
                Side::Receiver => self.$receiver.on_timer(now, out),
            }
        }
        #[inline]
        fn deadline(&self, side: Side) -> Option<SimTime> {
            match side {
                Side::Sender => self.$sender.next_deadline(),
                Side::Receiver => self.$receiver.next_deadline(),
            }
        }
        fn adopt(&mut self, other: &mut Self, side: Side) {
            match side {
                Side::Sender => std::mem::swap(&mut self.$sender, &mut other.$sender),
                Side::Receiver => std::mem::swap(&mut self.$receiver, &mut other.$receiver),
            }
        }
    };
}

/// A transport chosen by name (module rules).
pub trait Selectable: Transport + Sized {
    /// Its table in a scenario (`[<name>]`), or [`NoTable`].
    type Table: Clone + Default + std::fmt::Debug + Serialize + DeserializeOwned;
    /// Checks the table against the run's MTU; error keys are relative to the table.
    fn validate(_table: &Self::Table, _mtu: u32) -> Result<(), ConfigError> {
        Ok(())
    }
    /// The endpoints of one flow.
    fn build(table: &Self::Table, spec: &FlowSpec) -> Self;
    /// The discipline `q` of a port of a run with flows of this transport: the same, or inside
    /// a wrapper of the transport's (`AnyQdisc::wrap`).
    fn wrap_port<P: QPacket + 'static>(_table: &Self::Table, q: AnyQdisc<P>, _ctx: &PortContext) -> AnyQdisc<P> {
        q
    }
}

/// The transport of type `Self` inside the registry's enum of endpoints `E`, if it is that
/// one (implemented by the registry for every registered transport).
pub trait Variant<E>: Sized {
    fn of(e: &E) -> Option<&Self>;
    fn of_mut(e: &mut E) -> Option<&mut Self>;
}

/// What holds a flow's endpoint (the engine's flow record), for a [`Bond`] to reach the
/// endpoints of the flows it binds.
pub trait HasEndpoint<E> {
    fn endpoint(&self) -> &E;
    fn endpoint_mut(&mut self) -> &mut E;
}

/// A transport's state over several consecutive flows (module rules): the calls the engine
/// makes around those of the flows, in this order: [`Bond::before_packet`] right before a
/// packet reaches one of the flows, [`Bond::after_receive`] right after a receiver took one,
/// [`Bond::after_send`] right after a sender took one or started. `flows` is the slice of the
/// engine's flows [`Bond::flows`] names, `k` the index of the flow in it.
pub trait Bond<E> {
    /// The flow ids it binds.
    fn flows(&self) -> Range<usize>;
    /// Whether flow `k` starts at its own start time (the others are opened by the bond).
    fn opens(&self, k: usize) -> bool;
    fn before_packet<F: HasEndpoint<E>>(&mut self, flows: &mut [F], k: usize, side: Side);
    /// Flow `k`'s receiver has delivered `delivered` bytes in order: returns the bytes the
    /// bond now delivers in order beyond what it had (its own arrivals).
    fn after_receive(&mut self, k: usize, delivered: u64) -> u64;
    /// A sender of the bond took a packet or started at `now`: the bond may make any of its
    /// senders send (into `out`: they share one source host); returns the flows (bit k) whose
    /// deadlines may have moved.
    fn after_send<F: HasEndpoint<E>>(&mut self, flows: &mut [F], now: SimTime, out: &mut Vec<Packet>) -> u32;
    /// Bytes delivered in order at the bond's level.
    fn delivered_bytes(&self) -> u64;
    /// The bond's size (`None`: without end).
    fn size(&self) -> Option<u64>;
    /// The bond's start time.
    fn start(&self) -> SimTime;
}
