//! MPTCP as a transport: a flow of a group with `tcp.mptcp.subflows = N > 1` is a
//! [`Connection`] (a [`Bond`]) over N subflows, each an ordinary TCP flow ([`Subflow`]); the
//! host side is `crate::tcp::mptcp`, whose module doc lists the calls made here.
//!
//! Rules:
//! - **Subflows are flows.** The N subflows of a connection are N consecutive flows of the
//!   engine (flow ids `first .. first + N`), each with its own observation, timers, sender and
//!   receiver, between the same two hosts; the workload gives subflow k the source port a plain
//!   flow with its flow id would get (`1024 + id % 60000`) and the first subflow's destination
//!   port, so the 5-tuples differ and ECMP hashes them apart.
//! - Every subflow sender is persistent (`Data::Written`): it sends only what the connection
//!   writes into it. With `coupling = "lia"` or `"olia"` each runs `AnyCc::Coupled`
//!   ([`Connection::install`]); with `"uncoupled"` each keeps the group's `tcp.cc`.
//! - **Joins.** The first subflow opens at the flow's start time ([`Bond::opens`]). With
//!   `tcp.handshake` the others open when the first one's handshake completes (its sender is
//!   established: an MP_JOIN follows MP_CAPABLE); without it, all open together.
//! - **Calls** (the engine makes them only for a flow bound to a connection; a plain flow pays
//!   one branch): [`Bond::before_packet`] sets the coupled increase right before an ACK
//!   reaches subflow r's sender; [`Bond::after_receive`] maps what subflow k's receiver
//!   delivered in order to data sequence numbers and reassembles it; [`Bond::after_send`]
//!   hands the data ACK and shared window to the data sender (the receiver's values at the
//!   instant a subflow ACK reaches the sender: the data ACK rides on every subflow's ACKs, and
//!   no copy of it is carried in the packet), opens the joins when due, and lets the scheduler
//!   hand out data.
//! - **Scheduling**: while the lowest-RTT subflow with at least one MSS of room
//!   (`min(cwnd, rwnd)` less its written, unacknowledged bytes) exists and the data sender has
//!   data within the shared window, one chunk of at most one MSS goes to it (mapped, then
//!   written). A chunk stays on its subflow (no reinjection).
//! - **Completion and observation** are the engine's, from what the bond reports: an arrival
//!   of the connection is an advance of its data ACK, and a sized connection completes when
//!   its data ACK reaches its size; a long-lived one (`size: None`) never does.
//! - Nothing here draws a random number; the order of every call is the engine's event order.

use super::framework::{Bond, HasEndpoint, Side, Transport, Variant};
use super::tcp::TcpEnds;
use crate::packet::Packet;
use crate::tcp::congestion::{AnyCc, Coupled};
use crate::tcp::mptcp::{coupling, scheduler, Coupling, DataReceiver, DataSender, Mapping, PathView, SubflowView};
use crate::tcp::sender::SenderState;
use crate::tcp::{FlowIds, SenderStats, TcpConfig};
use crate::time::SimTime;
use std::ops::Range;

/// One subflow of an MPTCP connection: a TCP flow whose sender the connection writes into.
#[derive(Clone, Debug)]
pub struct Subflow(pub TcpEnds);

impl Transport for Subflow {
    const TITLE: &'static str = "MPTCP";
    const TCP_WINDOW: bool = true;

    #[inline]
    fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.0.start(now, out);
    }
    #[inline]
    fn on_packet(&mut self, side: Side, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        self.0.on_packet(side, pkt, now, out);
    }
    #[inline]
    fn on_timer(&mut self, side: Side, now: SimTime, out: &mut Vec<Packet>) {
        self.0.on_timer(side, now, out);
    }
    #[inline]
    fn deadline(&self, side: Side) -> Option<SimTime> {
        self.0.deadline(side)
    }
    fn adopt(&mut self, other: &mut Self, side: Side) {
        self.0.adopt(&mut other.0, side);
    }
    #[inline]
    fn delivered_bytes(&self) -> u64 {
        self.0.delivered_bytes()
    }
    #[inline]
    fn data_pkts_sent(&self) -> u64 {
        self.0.data_pkts_sent()
    }
    fn sender_stats(&self) -> SenderStats {
        self.0.sender_stats()
    }
    #[inline]
    fn window_shift(&self) -> Option<u8> {
        self.0.window_shift()
    }
    fn cwnd_bytes(&self) -> Option<u64> {
        self.0.cwnd_bytes()
    }
    fn trace_state(&self) -> Option<String> {
        self.0.trace_state()
    }
}

impl Subflow {
    /// Subflow `ids` of a connection with the group's settings `tcp`.
    pub fn new(tcp: &TcpConfig, ids: FlowIds) -> Subflow {
        Subflow(TcpEnds::new(tcp, ids, super::framework::Data::Written))
    }
}

/// One MPTCP connection: its subflows (by flow id) and its data level.
#[derive(Debug)]
pub struct Connection {
    /// Flow id of the first subflow (the connection's id in flows.csv).
    pub first: u32,
    /// Number of subflows: flow ids `first .. first + n`.
    pub n: u32,
    pub coupling: Coupling,
    /// Bytes the application sends; `None`: long-lived.
    pub size: Option<u64>,
    pub start: SimTime,
    mss: u64,
    init_cwnd: u64,
    pub data_snd: DataSender,
    pub data_rcv: DataReceiver,
    /// The data sequence mapping of each subflow.
    pub maps: Vec<Mapping>,
    /// The subflows after the first have been opened.
    pub joined: bool,
    views: Vec<SubflowView>,
    paths: Vec<PathView>,
}

/// Subflow `k` of `subs`, the flows of a connection.
#[inline]
fn sub<'a, E: 'a, F: HasEndpoint<E>>(subs: &'a [F], k: usize) -> &'a TcpEnds
where
    Subflow: Variant<E>,
{
    &Subflow::of(subs[k].endpoint()).expect("the flows of a connection are its subflows").0
}

#[inline]
fn sub_mut<'a, E: 'a, F: HasEndpoint<E>>(subs: &'a mut [F], k: usize) -> &'a mut TcpEnds
where
    Subflow: Variant<E>,
{
    &mut Subflow::of_mut(subs[k].endpoint_mut()).expect("the flows of a connection are its subflows").0
}

impl Connection {
    /// A connection of `n` subflows with flow ids from `first`, sending `size` bytes (`None`:
    /// forever) from `start`, with the group's TCP configuration `tcp`.
    pub fn new(tcp: &TcpConfig, first: u32, n: u32, size: Option<u64>, start: SimTime) -> Connection {
        let mss = tcp.mss_bytes as u64;
        Connection {
            first,
            n,
            coupling: tcp.mptcp.coupling,
            size,
            start,
            mss,
            init_cwnd: mss * tcp.init_cwnd_pkts as u64,
            data_snd: DataSender::new(size, tcp.rcv_buf_bytes),
            data_rcv: DataReceiver::new(tcp.rcv_buf_bytes),
            maps: (0..n).map(|_| Mapping::new()).collect(),
            joined: false,
            views: Vec::with_capacity(n as usize),
            paths: Vec::with_capacity(n as usize),
        }
    }

    /// Installs the coupled congestion control on every subflow sender of `subs` (LIA and OLIA;
    /// the uncoupled rule keeps the group's). Called once, before anything is sent.
    pub fn install<E, F: HasEndpoint<E>>(&self, subs: &mut [F])
    where
        Subflow: Variant<E>,
    {
        if self.coupling == Coupling::Uncoupled {
            return;
        }
        for k in 0..subs.len() {
            let s = &mut sub_mut(subs, k).sender;
            let iss = s.snd_una();
            *s.cc_mut() = AnyCc::Coupled(Coupled::new(iss, self.mss, self.init_cwnd));
        }
    }
}

impl<E> Bond<E> for Connection
where
    Subflow: Variant<E>,
{
    #[inline]
    fn flows(&self) -> Range<usize> {
        self.first as usize..(self.first + self.n) as usize
    }

    #[inline]
    fn opens(&self, k: usize) -> bool {
        k == 0
    }

    /// Right before an ACK reaches subflow `r`'s sender: its coupled increase from every
    /// subflow's state now (`tcp/mptcp` step 3). Nothing for uncoupled subflows, or at a
    /// receiver.
    #[inline]
    fn before_packet<F: HasEndpoint<E>>(&mut self, subs: &mut [F], r: usize, side: Side) {
        if side != Side::Sender || self.coupling == Coupling::Uncoupled {
            return;
        }
        self.views.clear();
        for k in 0..subs.len() {
            let s = &sub(subs, k).sender;
            let loss_interval_bytes = match s.cc() {
                AnyCc::Coupled(c) => c.loss_interval_bytes(),
                _ => 0,
            };
            self.views.push(SubflowView {
                cwnd_bytes: s.base_cwnd_bytes(),
                srtt: s.rtt_estimator().srtt(),
                mss: self.mss as u32,
                loss_interval_bytes,
            });
        }
        let inc = coupling::increase(self.coupling, &self.views, r, self.mss);
        if let AnyCc::Coupled(c) = sub_mut(subs, r).sender.cc_mut() {
            c.set_increase_per_mss(inc);
        }
    }

    /// Subflow `k`'s receiver has delivered `delivered` bytes in order: the new bytes are
    /// mapped to data and reassembled (`tcp/mptcp` step 4); returns how far the data ACK
    /// advanced.
    #[inline]
    fn after_receive(&mut self, k: usize, delivered: u64) -> u64 {
        let rcv = &mut self.data_rcv;
        let mut advanced = 0u64;
        self.maps[k].consume(delivered, |seq, len| advanced += rcv.deliver(seq, len));
        advanced
    }

    /// After an ACK reached one of the subflow senders (or the first subflow opened): the data
    /// ACK and window reach the data sender, the other subflows open when due, and the
    /// scheduler hands out data (`tcp/mptcp` step 2). Returns the subflows (bit k: subflow k)
    /// that sent or opened.
    fn after_send<F: HasEndpoint<E>>(&mut self, subs: &mut [F], now: SimTime, out: &mut Vec<Packet>) -> u32 {
        self.data_snd.on_data_ack(self.data_rcv.data_ack(), self.data_rcv.window());
        let mut touched = 0u32;
        if !self.joined && sub(subs, 0).sender.state() == SenderState::Established {
            self.joined = true;
            for k in 1..subs.len() {
                sub_mut(subs, k).start(now, out);
                touched |= 1 << k;
            }
        }
        loop {
            if self.data_snd.available() == 0 {
                break;
            }
            self.paths.clear();
            for k in 0..subs.len() {
                let s = &sub(subs, k).sender;
                let room = s.usable_window().saturating_sub(s.unacked_bytes());
                let established = s.state() == SenderState::Established;
                let space_bytes = if established && room >= self.mss { room } else { 0 };
                self.paths.push(PathView { srtt: s.rtt_estimator().srtt(), space_bytes });
            }
            let Some(k) = scheduler::pick(&self.paths) else { break };
            let Some((seq, len)) = self.data_snd.take(self.mss) else { break };
            let s = &mut sub_mut(subs, k).sender;
            self.maps[k].push(s.bytes_written(), seq, len);
            s.write(len, now, out);
            touched |= 1 << k;
        }
        touched
    }

    /// The data ACK at the receiver: bytes delivered in order at the data level.
    #[inline]
    fn delivered_bytes(&self) -> u64 {
        self.data_rcv.data_ack()
    }

    fn size(&self) -> Option<u64> {
        self.size
    }

    fn start(&self) -> SimTime {
        self.start
    }
}
