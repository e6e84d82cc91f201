//! NDP's receiver: ACK or NACK every packet at once, and ask for one more with a PULL.
//!
//! Rules (module rules of `ndp/mod.rs` for the wire):
//! - A data packet is ACKed at once; a trimmed one (its header alone) is NACKed at once. Either
//!   way the receiver then sends a PULL with its pull count, one higher: each arrival asks the
//!   sender for one packet. The PULLs are paced by the receiver's NIC (`port.rs`), not here.
//! - Packets are delivered in order: `delivered_bytes` counts the payload of the packets
//!   received from packet 0 on without a gap; a packet received twice counts once.

use super::config::NdpConfig;
use super::kind;
use crate::packet::{Packet, Proto};
use crate::tcp::FlowIds;
use crate::time::SimTime;
use std::collections::VecDeque;

/// What the receiver counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NdpReceiverStats {
    pub data_pkts: u64,
    pub trimmed: u64,
    pub duplicates: u64,
    pub pulls_sent: u64,
}

#[derive(Clone, Debug)]
pub struct NdpReceiver {
    ids: FlowIds,
    mss: u32,
    header: u32,
    /// Packets received in order from 0: `got[k]` is the payload of packet `next + k`, 0 until
    /// it arrives.
    next: u64,
    got: VecDeque<u32>,
    delivered: u64,
    pulls: u64,
    pub stats: NdpReceiverStats,
}

impl NdpReceiver {
    pub fn new(cfg: &NdpConfig, ids: FlowIds) -> NdpReceiver {
        NdpReceiver {
            ids,
            mss: cfg.mss_bytes,
            header: cfg.header_bytes,
            next: 0,
            got: VecDeque::new(),
            delivered: 0,
            pulls: 0,
            stats: NdpReceiverStats::default(),
        }
    }

    pub fn on_packet(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if !pkt.has(kind::DATA) {
            return;
        }
        let i = pkt.seq / self.mss as u64;
        let reply = if super::trimmed(pkt) {
            self.stats.trimmed += 1;
            kind::NACK
        } else {
            self.stats.data_pkts += 1;
            self.take(i, pkt.payload);
            kind::ACK
        };
        out.push(self.control(reply, pkt.seq, 0, now));
        self.pulls += 1;
        self.stats.pulls_sent += 1;
        out.push(self.control(kind::PULL, 0, self.pulls, now));
    }

    fn take(&mut self, i: u64, payload: u32) {
        if i < self.next {
            self.stats.duplicates += 1;
            return;
        }
        let k = (i - self.next) as usize;
        if self.got.len() <= k {
            self.got.resize(k + 1, 0);
        }
        if self.got[k] != 0 {
            self.stats.duplicates += 1;
            return;
        }
        self.got[k] = payload.max(1);
        while let Some(&p) = self.got.front().filter(|&&p| p != 0) {
            self.got.pop_front();
            self.next += 1;
            self.delivered += p as u64;
        }
    }

    fn control(&self, what: u8, seq: u64, pulls: u64, now: SimTime) -> Packet {
        Packet {
            proto: Proto::Ndp,
            seq,
            ack: pulls,
            size: self.header,
            flags: what,
            priority: if what == kind::PULL { super::PULL_PRIORITY } else { 0 },
            created: now,
            ..self.ids.reverse()
        }
    }

    pub fn on_timer(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {}

    pub fn next_deadline(&self) -> Option<SimTime> {
        None
    }

    pub fn delivered_bytes(&self) -> u64 {
        self.delivered
    }
}
