//! MPTCP connections in the simulator: a flow of a group with `tcp.mptcp.subflows = N > 1` is
//! a [`Connection`] of N subflows, each an ordinary [`TcpFlow`] (the host side is
//! `dcfair_core::tcp::mptcp`, whose module doc lists the calls made here).
//!
//! Rules:
//! - **Subflows are flows.** The N subflows of a connection are N consecutive [`TcpFlow`]s
//!   (flow ids `first .. first + N`), each with its own `FlowObs`, timers, sender and receiver,
//!   between the same two hosts; subflow k's source port is the one a plain flow with its flow
//!   id would get (`1024 + id % 60000`), its destination port the first subflow's, so the
//!   5-tuples differ and ECMP hashes them apart. A flow of a group without `tcp.mptcp` (or
//!   with `subflows = 1`) is numbered and built exactly as before.
//! - Every subflow sender is persistent (`TcpSender::new_persistent`): it sends only what the
//!   connection writes into it. With `coupling = "lia"` or `"olia"` each runs
//!   `AnyCc::Coupled`; with `"uncoupled"` each keeps the group's `tcp.cc`.
//! - **Joins.** The first subflow opens at the flow's start time. With `tcp.handshake` the
//!   others open when the first one's handshake completes (its sender is established: an
//!   MP_JOIN follows MP_CAPABLE); without it, all open together.
//! - **Hooks** (the engine calls them only for a flow whose `conn` is not [`NO_CONN`]; a
//!   plain flow pays one branch): [`Connection::before_ack`] sets the coupled increase right
//!   before an ACK reaches subflow r's sender; [`Connection::on_delivered`] maps what subflow
//!   k's receiver delivered in order to data sequence numbers and reassembles it;
//!   [`Connection::after_ack`] hands the data ACK and shared window to the data sender (the
//!   receiver's values at the instant a subflow ACK reaches the sender: the data ACK rides on
//!   every subflow's ACKs, and no copy of it is carried in the packet), opens the joins when
//!   due, and lets the scheduler hand out data.
//! - **Scheduling**: while the lowest-RTT subflow with at least one MSS of room
//!   (`min(cwnd, rwnd)` less its written, unacknowledged bytes) exists and the data sender has
//!   data within the shared window, one chunk of at most one MSS goes to it (mapped, then
//!   written). A chunk stays on its subflow (no reinjection).
//! - **Completion**: a sized connection completes when its data ACK at the receiver reaches its
//!   size (`obs.completed`); a long-lived one (`size: None`) never does.
//! - **Data-level observation** (`obs`): an "arrival" is an advance of the data ACK, so
//!   `max_gap` is the longest time without in-order progress of the connection (from its start,
//!   and to the end of the run as for a flow); flows.csv's row of the connection reads it.
//! - Nothing here draws a random number; the order of every call is the engine's event order.

use crate::metrics::FlowObs;
pub use crate::workload::NO_CONN;
use crate::workload::{ConnSpec, TcpFlow};
use std::ops::Range;
use dcfair_core::packet::Packet;
use dcfair_core::tcp::congestion::{AnyCc, Coupled};
use dcfair_core::tcp::mptcp::{coupling, scheduler, Coupling, DataReceiver, DataSender, Mapping, PathView, SubflowView};
use dcfair_core::tcp::sender::SenderState;
use dcfair_core::tcp::TcpConfig;
use dcfair_core::time::SimTime;

/// The connections of `specs`, their congestion control installed on their subflows in `tcp`.
pub fn connections(tcp: &mut [TcpFlow], specs: &[ConnSpec]) -> Vec<Connection> {
    specs
        .iter()
        .map(|s| {
            let c = Connection::new(s.tcp, s.first, s.tcp.mptcp.subflows, s.size, s.start);
            c.install(&mut tcp[c.range()], s.tcp);
            c
        })
        .collect()
}

/// One MPTCP connection: its subflows (by flow id), its data level and its observation.
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
    pub data_snd: DataSender,
    pub data_rcv: DataReceiver,
    /// The data sequence mapping of each subflow.
    pub maps: Vec<Mapping>,
    /// Data-level progress (module rules).
    pub obs: FlowObs,
    /// The subflows after the first have been opened.
    pub joined: bool,
    /// The data ACK when the measurement window opened.
    pub delivered_at_window: u64,
    views: Vec<SubflowView>,
    paths: Vec<PathView>,
}

impl Connection {
    /// A connection of `n` subflows with flow ids from `first`, sending `size` bytes (`None`:
    /// forever) from `start`, with the group's TCP configuration `tcp`.
    pub fn new(tcp: &TcpConfig, first: u32, n: u32, size: Option<u64>, start: SimTime) -> Connection {
        Connection {
            first,
            n,
            coupling: tcp.mptcp.coupling,
            size,
            start,
            mss: tcp.mss_bytes as u64,
            data_snd: DataSender::new(size, tcp.rcv_buf_bytes),
            data_rcv: DataReceiver::new(tcp.rcv_buf_bytes),
            maps: (0..n).map(|_| Mapping::new()).collect(),
            obs: FlowObs::default(),
            joined: false,
            delivered_at_window: 0,
            views: Vec::with_capacity(n as usize),
            paths: Vec::with_capacity(n as usize),
        }
    }

    /// The flow ids of the connection's subflows.
    #[inline]
    pub fn range(&self) -> Range<usize> {
        self.first as usize..(self.first + self.n) as usize
    }

    /// The connection's subflows in `tcp` (all flows, by flow id).
    #[inline]
    pub fn subflows<'a>(&self, tcp: &'a [TcpFlow]) -> &'a [TcpFlow] {
        &tcp[self.range()]
    }

    /// The data ACK at the receiver: bytes delivered in order at the data level.
    #[inline]
    pub fn delivered_bytes(&self) -> u64 {
        self.data_rcv.data_ack()
    }

    /// Installs the coupled congestion control on every subflow sender (LIA and OLIA; the
    /// uncoupled rule keeps the group's). Called once, before anything is sent.
    pub fn install(&self, subs: &mut [TcpFlow], tcp: &TcpConfig) {
        if self.coupling == Coupling::Uncoupled {
            return;
        }
        let init_cwnd = self.mss * tcp.init_cwnd_pkts as u64;
        for f in subs {
            let iss = f.sender.snd_una();
            *f.sender.cc_mut() = AnyCc::Coupled(Coupled::new(iss, self.mss, init_cwnd));
        }
    }

    /// Right before an ACK reaches subflow `r`'s sender: its coupled increase from every
    /// subflow's state now (`tcp/mptcp` step 3). Nothing for uncoupled subflows.
    #[inline]
    pub fn before_ack(&mut self, subs: &mut [TcpFlow], r: usize) {
        if self.coupling == Coupling::Uncoupled {
            return;
        }
        self.views.clear();
        for f in subs.iter() {
            let loss_interval_bytes = match f.sender.cc() {
                AnyCc::Coupled(c) => c.loss_interval_bytes(),
                _ => 0,
            };
            self.views.push(SubflowView {
                cwnd_bytes: f.sender.base_cwnd_bytes(),
                srtt: f.sender.rtt_estimator().srtt(),
                mss: self.mss as u32,
                loss_interval_bytes,
            });
        }
        let inc = coupling::increase(self.coupling, &self.views, r, self.mss);
        if let AnyCc::Coupled(c) = subs[r].sender.cc_mut() {
            c.set_increase_per_mss(inc);
        }
    }

    /// Subflow `k`'s receiver has delivered `delivered` bytes in order (its `delivered_bytes`)
    /// at `now`: the new bytes are mapped to data and reassembled (`tcp/mptcp` step 4); the
    /// data-level observation and completion follow the data ACK.
    #[inline]
    pub fn on_delivered(&mut self, k: usize, delivered: u64, now: SimTime, in_window: bool) {
        let rcv = &mut self.data_rcv;
        let mut advanced = 0u64;
        self.maps[k].consume(delivered, |seq, len| advanced += rcv.deliver(seq, len));
        if advanced == 0 {
            return;
        }
        self.obs.arrival(now, self.start, advanced.min(u32::MAX as u64) as u32, in_window);
        if self.obs.completed.is_none() && self.size.is_some_and(|s| rcv.data_ack() >= s) {
            self.obs.completed = Some(now);
        }
    }

    /// After an ACK reached one of the subflow senders (or the first subflow opened): the data
    /// ACK and window reach the data sender, the other subflows open when due, and the
    /// scheduler hands out data (`tcp/mptcp` step 2). Packets go to `out` (all leave the
    /// connection's source host); returns the subflows (bit k: subflow k) that sent or opened,
    /// whose timers the engine must re-arm.
    pub fn after_ack(&mut self, subs: &mut [TcpFlow], now: SimTime, out: &mut Vec<Packet>) -> u32 {
        self.data_snd.on_data_ack(self.data_rcv.data_ack(), self.data_rcv.window());
        let mut touched = 0u32;
        if !self.joined && subs[0].sender.state() == SenderState::Established {
            self.joined = true;
            for (k, f) in subs.iter_mut().enumerate().skip(1) {
                f.start(now, out);
                touched |= 1 << k;
            }
        }
        loop {
            if self.data_snd.available() == 0 {
                break;
            }
            self.paths.clear();
            for f in subs.iter() {
                let s = &f.sender;
                let room = s.usable_window().saturating_sub(s.unacked_bytes());
                let established = s.state() == SenderState::Established;
                let space_bytes = if established && room >= self.mss { room } else { 0 };
                self.paths.push(PathView { srtt: s.rtt_estimator().srtt(), space_bytes });
            }
            let Some(k) = scheduler::pick(&self.paths) else { break };
            let Some((seq, len)) = self.data_snd.take(self.mss) else { break };
            let f = &mut subs[k];
            self.maps[k].push(f.sender.bytes_written(), seq, len);
            f.sender.write(len, now, out);
            touched |= 1 << k;
        }
        touched
    }
}
