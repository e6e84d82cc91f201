//! The RoCEv2 receiver (responder): in-order delivery, ACKs and NACKs, and DCQCN's
//! notification point (CNPs).
//!
//! Rules (the wire format is in the folder's module doc, `mod.rs`):
//! - `expected` is the next PSN in order. A data packet with PSN `expected` is delivered (its
//!   payload counts in [`RoceReceiver::delivered_bytes`]), and with `selective` so are the
//!   packets kept after it, in order. The receiver ACKs (`ack` = `expected`) every
//!   `ack_every_pkts` packets delivered, and on a packet that asks for it (`ACK_REQ`, the last
//!   of a message) or that closes a gap.
//! - A packet above `expected`: with `go_back_n` it is dropped, and the receiver sends one NACK
//!   (`ack` = `expected`) per gap: none again until `expected` moves. With `selective` it is
//!   kept (once), and every such packet is answered with a NACK whose `ack` is `expected` and
//!   whose `seq` is the packet's PSN (IRN's NACK: the cumulative PSN and the one that arrived).
//! - A packet below `expected` (a duplicate) is answered with an ACK of `expected`.
//! - An ACK or NACK echoes the data packet's `ts_val` in `ts_ecr` (TIMELY's RTT).
//! - CNPs (only with `cc = "dcqcn"`): a data packet that arrives marked CE makes a CNP, unless
//!   the last CNP of the flow left less than `dcqcn.cnp_interval_us` ago.
//! - The receiver keeps no timer.

use super::config::{CcKind, Recovery, RoceConfig};
use super::{kind, ACK_EXTRA_BYTES, CNP_EXTRA_BYTES, ROCE_PORT};
use crate::packet::{Ecn, Packet, Proto};
use crate::tcp::FlowIds;
use crate::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// The receiver's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoceReceiverStats {
    pub acks_sent: u64,
    pub nacks_sent: u64,
    pub cnps_sent: u64,
    /// Data packets that arrived marked CE.
    pub ce_pkts: u64,
    /// Out-of-order packets dropped (go-back-N).
    pub dropped: u64,
    /// Packets below `expected`, answered with an ACK.
    pub duplicates: u64,
}

/// The RoCEv2 receiver of one flow.
#[derive(Clone, Debug)]
pub struct RoceReceiver {
    ids: FlowIds,
    class: u8,
    header: u32,
    recovery: Recovery,
    ack_every: u32,
    /// CNP spacing (`None`: the receiver sends no CNPs).
    cnp_interval: Option<SimDuration>,
    expected: u64,
    delivered: u64,
    /// In-order packets since the last ACK.
    since_ack: u32,
    /// Go-back-N: the `expected` a NACK was sent for.
    nacked: Option<u64>,
    /// Selective: packets kept above `expected`, PSN to payload.
    kept: BTreeMap<u64, u32>,
    last_cnp: Option<SimTime>,
    pub stats: RoceReceiverStats,
}

impl RoceReceiver {
    pub fn new(cfg: &RoceConfig, ids: FlowIds) -> RoceReceiver {
        let cnp_interval = (cfg.cc == CcKind::Dcqcn).then(|| SimDuration::from_secs_f64(cfg.dcqcn.cnp_interval_us * 1e-6));
        RoceReceiver {
            ids,
            class: cfg.priority,
            header: cfg.header_bytes,
            recovery: cfg.recovery,
            ack_every: cfg.ack_every_pkts,
            cnp_interval,
            expected: 0,
            delivered: 0,
            since_ack: 0,
            nacked: None,
            kept: BTreeMap::new(),
            last_cnp: None,
            stats: RoceReceiverStats::default(),
        }
    }

    /// Payload bytes delivered in order.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered
    }

    /// The next PSN in order.
    pub fn expected(&self) -> u64 {
        self.expected
    }

    /// A control packet of type `flags` towards the sender.
    fn control(&self, flags: u8, extra: u32, data: &Packet) -> Packet {
        let ids = self.ids;
        Packet {
            flow: ids.flow,
            src: ids.dst,
            dst: ids.src,
            sport: ROCE_PORT,
            dport: ids.sport,
            proto: Proto::Udp,
            class: self.class,
            flags,
            ack: self.expected,
            size: self.header + extra,
            created: data.created,
            ts_ecr: data.ts_val,
            // an ACK of a packet that collected telemetry carries it back (HPCC)
            int: if data.int == crate::telemetry::NONE { crate::telemetry::NONE } else { crate::telemetry::ECHO },
            ..Default::default()
        }
    }

    /// A packet of the flow reached the receiver at `now`.
    pub fn on_packet(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if !pkt.has(kind::DATA) {
            return;
        }
        if pkt.ecn == Ecn::Ce {
            self.stats.ce_pkts += 1;
            if let Some(gap) = self.cnp_interval {
                if self.last_cnp.is_none_or(|t| now >= t + gap) {
                    self.last_cnp = Some(now);
                    self.stats.cnps_sent += 1;
                    let mut c = self.control(kind::CNP, CNP_EXTRA_BYTES, pkt);
                    c.ack = 0;
                    out.push(c);
                }
            }
        }
        let psn = pkt.seq;
        if psn == self.expected {
            self.delivered += pkt.payload as u64;
            self.expected += 1;
            self.since_ack += 1;
            let mut closed_gap = false;
            while let Some(payload) = self.kept.remove(&self.expected) {
                self.delivered += payload as u64;
                self.expected += 1;
                self.since_ack += 1;
                closed_gap = true;
            }
            if self.since_ack >= self.ack_every || pkt.has(kind::ACK_REQ) || closed_gap || self.nacked.is_some() {
                self.nacked = None;
                self.since_ack = 0;
                self.stats.acks_sent += 1;
                out.push(self.control(kind::ACK, ACK_EXTRA_BYTES, pkt));
            }
        } else if psn > self.expected {
            match self.recovery {
                Recovery::GoBackN => {
                    self.stats.dropped += 1;
                    if self.nacked != Some(self.expected) {
                        self.nacked = Some(self.expected);
                        self.stats.nacks_sent += 1;
                        out.push(self.control(kind::NACK, ACK_EXTRA_BYTES, pkt));
                    }
                }
                Recovery::Selective => {
                    self.kept.entry(psn).or_insert(pkt.payload);
                    self.stats.nacks_sent += 1;
                    let mut n = self.control(kind::NACK, ACK_EXTRA_BYTES, pkt);
                    n.seq = psn;
                    out.push(n);
                }
            }
        } else {
            self.stats.duplicates += 1;
            self.stats.acks_sent += 1;
            out.push(self.control(kind::ACK, ACK_EXTRA_BYTES, pkt));
        }
    }

    /// The receiver keeps no timer.
    pub fn on_timer(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {}

    pub fn next_deadline(&self) -> Option<SimTime> {
        None
    }
}
