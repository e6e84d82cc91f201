//! TCP endpoints (SKELETON: the public API below is fixed; bodies are being implemented).
//!
//! A flow is one [`TcpSender`] (the active opener, which sends `size` bytes or forever) and one
//! [`TcpReceiver`] (the passive side, which acknowledges). Both are driven by the host:
//! `on_packet` for every arriving segment, `on_timer` when `next_deadline` has passed; both push
//! the segments they emit into `out`. Timers are lazy: an endpoint only reports its earliest
//! deadline and the host re-checks it when it fires.

use crate::packet::{Addr, FlowId, Packet};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

/// Congestion control algorithm of a sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    Reno,
    #[default]
    Newreno,
}

/// TCP parameters (the `[tcp]` table of a scenario). Units are in the key names.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    pub cc: CcKind,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub init_cwnd_pkts: u32,
    pub rcv_buf_bytes: u64,
    pub window_scaling: bool,
    pub delayed_ack: bool,
    pub delack_timeout_ms: f64,
    pub min_rto_ms: f64,
    pub max_rto_s: f64,
    pub initial_rto_s: f64,
    pub dupack_threshold: u32,
    pub handshake: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Newreno,
            mss_bytes: 1460,
            header_bytes: 40,
            init_cwnd_pkts: 2,
            rcv_buf_bytes: 65535,
            window_scaling: true,
            delayed_ack: false,
            delack_timeout_ms: 40.0,
            min_rto_ms: 200.0,
            max_rto_s: 60.0,
            initial_rto_s: 1.0,
            dupack_threshold: 3,
            handshake: true,
        }
    }
}

/// Addresses and ports of a flow, from the sender's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowIds {
    pub flow: FlowId,
    pub src: Addr,
    pub dst: Addr,
    pub sport: u16,
    pub dport: u16,
}

/// Counters a sender keeps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    pub pkts_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub bytes_acked: u64,
}

#[derive(Debug)]
pub struct TcpSender {}

impl TcpSender {
    /// A sender of `size` payload bytes (`None`: a long-lived flow that never ends).
    pub fn new(_cfg: &TcpConfig, _ids: FlowIds, _size: Option<u64>) -> TcpSender {
        todo!()
    }
    /// Opens the connection at `now` (SYN, or the first window when `handshake` is off).
    pub fn start(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {
        todo!()
    }
    pub fn on_packet(&mut self, _pkt: &Packet, _now: SimTime, _out: &mut Vec<Packet>) {
        todo!()
    }
    pub fn on_timer(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {
        todo!()
    }
    pub fn next_deadline(&self) -> Option<SimTime> {
        todo!()
    }
    pub fn stats(&self) -> &SenderStats {
        todo!()
    }
    /// All data (and the FIN) acknowledged.
    pub fn is_done(&self) -> bool {
        todo!()
    }
    pub fn cwnd_bytes(&self) -> u64 {
        todo!()
    }
    pub fn rto(&self) -> SimDuration {
        todo!()
    }
}

#[derive(Debug)]
pub struct TcpReceiver {}

impl TcpReceiver {
    /// The receiving end of the flow `ids` (ids as seen by the sender).
    pub fn new(_cfg: &TcpConfig, _ids: FlowIds) -> TcpReceiver {
        todo!()
    }
    pub fn on_packet(&mut self, _pkt: &Packet, _now: SimTime, _out: &mut Vec<Packet>) {
        todo!()
    }
    pub fn on_timer(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {
        todo!()
    }
    pub fn next_deadline(&self) -> Option<SimTime> {
        todo!()
    }
    /// Payload bytes delivered in order to the application.
    pub fn delivered_bytes(&self) -> u64 {
        todo!()
    }
    /// The FIN was received in order.
    pub fn fin_received(&self) -> bool {
        todo!()
    }
}
