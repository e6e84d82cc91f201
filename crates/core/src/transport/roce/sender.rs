//! The RoCEv2 sender (requester): messages cut into PSN-numbered packets, paced at the rate of
//! its congestion control, recovered by go-back-N or selectively.
//!
//! Rules (the wire format is in the folder's module doc, `mod.rs`):
//! - Data is a list of messages: `Data::Bulk(Some(n))` is one message of `n` bytes,
//!   `Data::Bulk(None)` one without end, `Data::Written` one message per `write`. A message is
//!   cut into packets of `mtu_bytes` of payload, its last one shorter; PSNs count packets,
//!   from 0, across messages. The last packet of a message asks for an ACK (`ACK_REQ`).
//! - Pacing: a data packet leaves no sooner than `size / Rc` after the previous one left, `Rc`
//!   the rate now (line rate: the sender's NIC, with `cc = "none"`); a change of the rate moves
//!   the next departure at once. At most one data packet leaves per call.
//! - What leaves next: with `selective`, the lowest PSN known lost, else the next new PSN;
//!   with `go_back_n`, the PSN `snd_nxt` (below `snd_max` after a rewind: a retransmission).
//!   A new PSN waits while `bdp_cap_bytes` of payload (`ceil(cap / mtu)` packets) are in
//!   flight past the cumulative ACK.
//! - An ACK carries the cumulative PSN (`ack`: every PSN below it arrived). A NACK carries it
//!   too; with `go_back_n` the sender rewinds `snd_nxt` to it; with `selective` its `seq` names
//!   the out-of-order PSN that arrived: that PSN is marked received, and every PSN between the
//!   cumulative one and it not marked received is marked lost (each PSN once).
//! - The retransmission timer: `rto_us` after the last progress of the cumulative ACK (or the
//!   first send after none was outstanding) with PSNs outstanding. On expiry, `go_back_n`
//!   rewinds to the cumulative PSN; `selective` marks every outstanding PSN not known received
//!   lost. The timer then restarts (no backoff).
//! - The one deadline: the earliest of the next departure (when something may leave), the
//!   retransmission timer and the congestion control's timer (DCQCN's increase timer, while
//!   the flow has data).

use super::config::{CcKind, Recovery, RoceConfig};
use super::dcqcn::Dcqcn;
use super::timely::Timely;
use super::hpcc::{Hpcc, HpccParams};
use crate::telemetry::{self, IntHop};
use super::{kind, ROCE_PORT};
use crate::packet::{Ecn, Packet, Proto};
use crate::tcp::FlowIds;
use crate::time::{BitsPerSec, SimDuration, SimTime};
use std::collections::BTreeSet;

/// The sender's rate control.
#[derive(Clone, Debug)]
pub enum RateControl {
    /// Line rate always.
    None,
    Dcqcn(Dcqcn),
    Timely(Timely),
    /// A window (bytes in flight) and the rate `W / T`, from the telemetry its ACKs echo.
    Hpcc(Hpcc),
}

/// One message: its first PSN and byte, its length (`u64::MAX`: without end).
#[derive(Clone, Copy, Debug)]
struct Message {
    first_psn: u64,
    first_byte: u64,
    bytes: u64,
}

/// The sender's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoceSenderStats {
    /// Data packets sent, first copies and retransmissions.
    pub data_pkts: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Data packets sent again.
    pub retransmits: u64,
    /// Retransmission-timer expirations.
    pub timeouts: u64,
    pub acks_received: u64,
    pub nacks_received: u64,
    pub cnps_received: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
}

/// The RoCEv2 sender of one flow.
#[derive(Clone, Debug)]
pub struct RoceSender {
    ids: FlowIds,
    class: u8,
    mtu: u32,
    header: u32,
    recovery: Recovery,
    rto: SimDuration,
    /// Packets in flight allowed past the cumulative ACK (`u64::MAX`: no cap).
    cap_pkts: u64,
    line: f64,
    cc: RateControl,
    messages: Vec<Message>,
    /// PSNs the messages hold (`u64::MAX`: without end).
    total_psns: u64,
    /// Payload bytes of the messages (`u64::MAX`: without end).
    total_bytes: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Selective: PSNs at or above `snd_una` the receiver reported, and PSNs known lost.
    sacked: BTreeSet<u64>,
    lost: BTreeSet<u64>,
    /// Selective: PSNs below this were already checked for loss.
    scanned: u64,
    /// The last departure and its size on the wire.
    last_tx: Option<(SimTime, u32)>,
    rto_at: Option<SimTime>,
    started: bool,
    pub stats: RoceSenderStats,
}

impl RoceSender {
    /// The 802.1p class of its packets (`roce.priority`).
    pub fn class(&self) -> u8 {
        self.class
    }

    /// The sender of flow `ids` with the table `cfg`, NIC rate `line`, given `size` bytes from
    /// the start (`Some(0)`: nothing until written; `None`: without end).
    pub fn new(cfg: &RoceConfig, ids: FlowIds, line: BitsPerSec, size: Option<u64>) -> RoceSender {
        let line_bps = line.0 as f64;
        let cc = match cfg.cc {
            CcKind::None => RateControl::None,
            CcKind::Dcqcn => RateControl::Dcqcn(Dcqcn::new(&cfg.dcqcn, line_bps)),
            CcKind::Timely => RateControl::Timely(Timely::new(&cfg.timely, line_bps)),
            CcKind::Hpcc => {
                let h = &cfg.hpcc;
                let t = SimDuration::from_secs_f64(h.base_rtt_us * 1e-6);
                let w_ai_bytes = h.rai_mbps * 1e6 / 8.0 * t.as_secs_f64();
                RateControl::Hpcc(Hpcc::new(HpccParams { eta: h.eta, max_stage: h.max_stage, w_ai_bytes, base_rtt: t, nic_bps: line_bps }))
            }
        };
        let int_bytes = if cfg.cc == CcKind::Hpcc { cfg.hpcc.int_header_bytes } else { 0 };
        let cap_pkts = match cfg.bdp_cap_bytes {
            0 => u64::MAX,
            b => b.div_ceil(cfg.mtu_bytes as u64).max(1),
        };
        let mut s = RoceSender {
            ids,
            class: cfg.priority,
            mtu: cfg.mtu_bytes,
            header: cfg.header_bytes + int_bytes,
            recovery: cfg.recovery,
            rto: SimDuration::from_secs_f64(cfg.rto_us * 1e-6),
            cap_pkts,
            line: line_bps,
            cc,
            messages: Vec::new(),
            total_psns: 0,
            total_bytes: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            sacked: BTreeSet::new(),
            lost: BTreeSet::new(),
            scanned: 0,
            last_tx: None,
            rto_at: None,
            started: false,
            stats: RoceSenderStats::default(),
        };
        match size {
            None => {
                s.messages.push(Message { first_psn: 0, first_byte: 0, bytes: u64::MAX });
                s.total_psns = u64::MAX;
                s.total_bytes = u64::MAX;
            }
            Some(n) => s.add_message(n),
        }
        s
    }

    fn add_message(&mut self, bytes: u64) {
        if bytes == 0 || self.total_psns == u64::MAX {
            return;
        }
        self.messages.push(Message { first_psn: self.total_psns, first_byte: self.total_bytes, bytes });
        self.total_psns += bytes.div_ceil(self.mtu as u64);
        self.total_bytes += bytes;
    }

    /// The current rate Rc, bits/s.
    pub fn rate_bps(&self) -> f64 {
        match &self.cc {
            RateControl::None => self.line,
            RateControl::Dcqcn(d) => d.rate(),
            RateControl::Timely(t) => t.rate(),
            RateControl::Hpcc(h) => h.rate_bps(),
        }
    }

    /// The rate control.
    pub fn rate_control(&self) -> &RateControl {
        &self.cc
    }

    /// The cumulative PSN: every PSN below it is acknowledged.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// The next PSN go-back-N sends.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// One past the highest PSN sent.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }

    /// Rate cuts of the congestion control (DCQCN's cuts, TIMELY's decreases).
    pub fn rate_decreases(&self) -> u64 {
        match &self.cc {
            RateControl::None => 0,
            RateControl::Dcqcn(d) => d.cuts,
            RateControl::Timely(t) => t.decreases,
            RateControl::Hpcc(h) => h.decreases,
        }
    }

    /// The message holding `psn`, and the packet's payload and whether it ends the message.
    fn payload_of(&self, psn: u64) -> (u32, bool) {
        let i = self.messages.partition_point(|m| m.first_psn <= psn) - 1;
        let m = self.messages[i];
        if m.bytes == u64::MAX {
            return (self.mtu, false);
        }
        let off = (psn - m.first_psn) * self.mtu as u64;
        let left = m.bytes - off;
        (left.min(self.mtu as u64) as u32, left <= self.mtu as u64)
    }

    /// Payload bytes of the PSNs below `psn`.
    fn bytes_before(&self, psn: u64) -> u64 {
        if psn == 0 {
            return 0;
        }
        let i = self.messages.partition_point(|m| m.first_psn < psn) - 1;
        let m = self.messages[i];
        m.first_byte + ((psn - m.first_psn) * self.mtu as u64).min(m.bytes)
    }

    /// Whether every byte written so far is acknowledged.
    pub fn done(&self) -> bool {
        self.total_psns != u64::MAX && self.snd_una >= self.total_psns
    }

    /// Whether PSNs are outstanding or waiting: the flow has data.
    fn active(&self) -> bool {
        self.snd_una < self.total_psns
    }

    /// The PSN that would leave next, if any may (recovery and the BDP cap; not the pacing).
    fn next_psn(&self) -> Option<u64> {
        match self.recovery {
            Recovery::Selective => {
                if let Some(&p) = self.lost.first() {
                    return Some(p);
                }
                let p = self.snd_max;
                (p < self.total_psns && p < self.snd_una.saturating_add(self.cap_pkts)).then_some(p)
            }
            Recovery::GoBackN => {
                let p = self.snd_nxt;
                let new = p >= self.snd_max;
                (p < self.total_psns && (!new || p < self.snd_una.saturating_add(self.cap_pkts))).then_some(p)
            }
        }
        .filter(|&p| self.in_window(p))
    }

    /// HPCC: whether PSN `p` is within the window past the cumulative ACK (at least one packet
    /// may always be in flight). Every other control: always.
    fn in_window(&self, p: u64) -> bool {
        match &self.cc {
            RateControl::Hpcc(h) => p <= self.snd_una || ((p - self.snd_una) * self.mtu as u64) as f64 <= h.window(),
            _ => true,
        }
    }

    /// Whether its data packets collect in-band telemetry (HPCC).
    pub fn wants_telemetry(&self) -> bool {
        matches!(self.cc, RateControl::Hpcc(_))
    }

    /// An ACK that echoes the telemetry of the data packet it answers reached the sender at
    /// `now` (HPCC): the window moves, then the ACK is taken as any other.
    pub fn on_packet_int(&mut self, pkt: &Packet, hops: &[IntHop], now: SimTime, out: &mut Vec<Packet>) {
        if let RateControl::Hpcc(h) = &mut self.cc {
            if pkt.has(kind::ACK) && !hops.is_empty() {
                h.on_ack(pkt.ack, self.snd_nxt, hops);
            }
        }
        self.on_packet(pkt, now, out);
    }

    /// When the next data packet may leave, by the pacing (`None`: at once).
    fn next_departure(&self) -> Option<SimTime> {
        let (t, size) = self.last_tx?;
        let rate = BitsPerSec(self.rate_bps().round().max(1.0) as u64);
        Some(t + rate.tx_time(size as u64))
    }

    /// The sender opens the flow at `now`.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.started = true;
        self.try_send(now, out);
    }

    /// The application adds a message of `bytes` at `now`.
    pub fn write(&mut self, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        let idle = !self.active();
        self.add_message(bytes);
        if idle {
            if let RateControl::Dcqcn(d) = &mut self.cc {
                d.resume(now);
            }
        }
        if self.started {
            self.try_send(now, out);
        }
    }

    /// Sends one data packet if one may leave at `now`.
    fn try_send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let Some(psn) = self.next_psn() else { return };
        if self.next_departure().is_some_and(|t| t > now) {
            return;
        }
        let (payload, last) = self.payload_of(psn);
        let size = payload + self.header;
        let ids = self.ids;
        out.push(Packet {
            flow: ids.flow,
            src: ids.src,
            dst: ids.dst,
            sport: ids.sport,
            dport: ROCE_PORT,
            proto: Proto::Udp,
            ecn: Ecn::Ect0,
            class: self.class,
            int: if matches!(self.cc, RateControl::Hpcc(_)) { telemetry::COLLECT } else { telemetry::NONE },
            flags: kind::DATA | if last { kind::ACK_REQ } else { 0 },
            seq: psn,
            payload,
            size,
            created: now,
            ts_val: now,
            ..Default::default()
        });
        let retransmit = psn < self.snd_max;
        match self.recovery {
            Recovery::Selective => {
                if !self.lost.remove(&psn) {
                    self.snd_max = psn + 1;
                }
                self.snd_nxt = self.snd_max;
            }
            Recovery::GoBackN => {
                self.snd_nxt = psn + 1;
                self.snd_max = self.snd_max.max(self.snd_nxt);
            }
        }
        self.stats.data_pkts += 1;
        self.stats.bytes_sent += payload as u64;
        self.stats.retransmits += retransmit as u64;
        self.last_tx = Some((now, size));
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rto);
        }
        if let RateControl::Dcqcn(d) = &mut self.cc {
            d.on_sent(size as u64, now);
        }
    }

    /// An ACK, NACK or CNP of the flow reached the sender at `now`.
    pub fn on_packet(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if pkt.has(kind::CNP) {
            self.stats.cnps_received += 1;
            if let RateControl::Dcqcn(d) = &mut self.cc {
                d.on_cnp(now);
            }
        } else if pkt.has(kind::ACK) || pkt.has(kind::NACK) {
            let nack = pkt.has(kind::NACK);
            if nack {
                self.stats.nacks_received += 1;
            } else {
                self.stats.acks_received += 1;
            }
            self.on_cumulative(pkt.ack.min(self.snd_max), now);
            if nack {
                self.on_nack(pkt);
            } else if let RateControl::Timely(t) = &mut self.cc {
                t.on_ack(now.saturating_since(pkt.ts_ecr), pkt.ack, self.snd_nxt);
            }
        }
        self.try_send(now, out);
    }

    /// The receiver has every PSN below `ack`.
    fn on_cumulative(&mut self, ack: u64, now: SimTime) {
        if ack <= self.snd_una {
            return;
        }
        self.stats.bytes_acked = self.bytes_before(ack);
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        self.sacked = self.sacked.split_off(&ack);
        self.lost = self.lost.split_off(&ack);
        self.rto_at = (self.snd_una < self.snd_max).then_some(now + self.rto);
    }

    fn on_nack(&mut self, pkt: &Packet) {
        let expected = pkt.ack;
        match self.recovery {
            Recovery::GoBackN => {
                if expected < self.snd_nxt {
                    self.snd_nxt = expected.max(self.snd_una);
                }
            }
            Recovery::Selective => {
                let got = pkt.seq;
                if got < self.snd_una || got >= self.snd_max {
                    return;
                }
                self.sacked.insert(got);
                for p in self.scanned.max(self.snd_una)..got {
                    if !self.sacked.contains(&p) {
                        self.lost.insert(p);
                    }
                }
                self.scanned = self.scanned.max(got + 1);
            }
        }
    }

    /// The timer fired at `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let RateControl::Dcqcn(d) = &mut self.cc {
            d.on_timer(now);
        }
        if self.rto_at.is_some_and(|t| now >= t) {
            if self.snd_una < self.snd_max {
                self.stats.timeouts += 1;
                match self.recovery {
                    Recovery::GoBackN => self.snd_nxt = self.snd_una,
                    Recovery::Selective => {
                        for p in self.snd_una..self.snd_max {
                            if !self.sacked.contains(&p) {
                                self.lost.insert(p);
                            }
                        }
                        self.scanned = self.snd_max;
                    }
                }
                self.rto_at = Some(now + self.rto);
            } else {
                self.rto_at = None;
            }
        }
        self.try_send(now, out);
    }

    /// The earliest time the sender has something to do.
    pub fn next_deadline(&self) -> Option<SimTime> {
        if !self.started {
            return None;
        }
        let send = self.next_psn().map(|_| self.next_departure().unwrap_or(SimTime::ZERO));
        let cc = match &self.cc {
            RateControl::Dcqcn(d) if self.active() => d.next_event(),
            _ => None,
        };
        [send, self.rto_at, cc].into_iter().flatten().min()
    }
}
