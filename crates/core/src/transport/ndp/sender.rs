//! NDP's sender: a window of packets at the start, then one packet per PULL, resending first.
//!
//! Rules (module rules of `ndp/mod.rs` for the wire):
//! - At `start` the sender sends `initial_window_pkts` packets at once (fewer if the flow is
//!   shorter), without waiting for anything.
//! - A PULL carries the receiver's cumulative pull count; the sender sends one packet for each
//!   pull it had not seen (a lost or reordered PULL is made up by the next one): the oldest
//!   packet waiting to be resent if any, else the next new one, else nothing.
//! - An ACK marks its packet delivered. A NACK (the receiver got the packet's header, trimmed)
//!   puts the packet in the resend queue, once, to leave on the next PULL ahead of new data
//!   (the paper's rule: queued, "but not yet" sent).
//! - A packet neither ACKed nor NACKed `rto_us` after it was last sent is resent at once (a
//!   timeout): its header was lost, or the PULLs stopped.
//! - Paths (`ndp.paths = "permutation"`): each data packet carries a path number in its source
//!   port, the next of a random order of [`PATH_NUMBERS`] numbers (stream `ndp.paths`, one per
//!   flow), shuffled again after each cycle; the switches read it (`routing.rs`).
//! - Packets are numbered from 0; packet `i` carries payload bytes `[i mss, i mss + len)`.
//!   The flow is done when every packet is ACKed.

use super::config::{NdpConfig, Paths, PATH_NUMBERS};
use super::kind;
use crate::rng::Rng;
use rand::seq::SliceRandom;
use crate::packet::{Packet, Proto};
use crate::tcp::FlowIds;
use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

/// A packet of the window: waiting for its ACK (sent at the time given), delivered, or queued
/// to be resent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Sent(SimTime),
    Acked,
    Queued,
}

/// What the sender counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NdpSenderStats {
    pub data_pkts: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub pulls: u64,
    pub bytes_acked: u64,
}

#[derive(Clone, Debug)]
pub struct NdpSender {
    ids: FlowIds,
    mss: u32,
    header: u32,
    iw: u32,
    rto: SimDuration,
    /// Payload bytes the application has given (`u64::MAX`: without end).
    limit: u64,
    /// The next packet never sent.
    next_new: u64,
    /// The oldest packet not ACKed; `window[k]` is packet `base + k`.
    base: u64,
    window: VecDeque<Slot>,
    /// Packets to resend, oldest NACK first.
    resend: VecDeque<u64>,
    pulls_seen: u64,
    started: bool,
    /// The earliest time a sent packet times out.
    rto_due: Option<SimTime>,
    /// `paths = "permutation"`: the order of path numbers, where the next packet is in it, and
    /// the stream that shuffles it; empty otherwise.
    path_order: Vec<u16>,
    path_next: usize,
    path_rng: Option<Rng>,
    pub stats: NdpSenderStats,
}

impl NdpSender {
    /// `rng`: the stream that orders the paths (used with `paths = "permutation"` only).
    pub fn new(cfg: &NdpConfig, ids: FlowIds, size: Option<u64>, rng: Rng) -> NdpSender {
        let (path_order, path_rng) = match cfg.paths {
            Paths::Permutation => ((0..PATH_NUMBERS).collect(), Some(rng)),
            Paths::Random | Paths::Routing => (Vec::new(), None),
        };
        NdpSender {
            path_next: path_order.len(),
            path_order,
            path_rng,
            ids,
            mss: cfg.mss_bytes,
            header: cfg.header_bytes,
            iw: cfg.initial_window_pkts,
            rto: SimDuration::from_secs_f64(cfg.rto_us * 1e-6),
            limit: size.unwrap_or(u64::MAX),
            next_new: 0,
            base: 0,
            window: VecDeque::new(),
            resend: VecDeque::new(),
            pulls_seen: 0,
            started: false,
            rto_due: None,
            stats: NdpSenderStats::default(),
        }
    }

    /// Packets of the bytes given so far.
    fn total_pkts(&self) -> u64 {
        if self.limit == u64::MAX {
            u64::MAX
        } else {
            self.limit.div_ceil(self.mss as u64)
        }
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.started = true;
        for _ in 0..self.iw {
            if !self.send_one(now, out) {
                break;
            }
        }
        self.update_rto();
    }

    /// The application gives `bytes` more (an incast answer, a collective's step).
    pub fn write(&mut self, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        let idle = self.base == self.next_new;
        self.limit = if self.limit == u64::MAX { bytes } else { self.limit.saturating_add(bytes) };
        if self.started && idle {
            // a new message on an idle flow opens with a window, as a new flow would
            self.start(now, out);
        }
    }

    pub fn on_packet(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if pkt.has(kind::ACK) {
            self.on_ack(pkt.seq / self.mss as u64);
        } else if pkt.has(kind::NACK) {
            self.on_nack(pkt.seq / self.mss as u64);
        }
        if pkt.has(kind::PULL) && pkt.ack > self.pulls_seen {
            let n = pkt.ack - self.pulls_seen;
            self.pulls_seen = pkt.ack;
            self.stats.pulls += n;
            for _ in 0..n {
                if !self.send_one(now, out) {
                    break;
                }
            }
        }
        self.update_rto();
    }

    fn slot(&mut self, i: u64) -> Option<&mut Slot> {
        if i < self.base {
            return None;
        }
        self.window.get_mut((i - self.base) as usize)
    }

    fn on_ack(&mut self, i: u64) {
        let len = self.payload_of(i) as u64;
        match self.slot(i) {
            Some(s) if *s != Slot::Acked => *s = Slot::Acked,
            _ => return,
        }
        self.stats.bytes_acked += len;
        while self.window.front() == Some(&Slot::Acked) {
            self.window.pop_front();
            self.base += 1;
        }
    }

    fn on_nack(&mut self, i: u64) {
        self.stats.nacks += 1;
        if let Some(s) = self.slot(i) {
            if matches!(*s, Slot::Sent(_)) {
                *s = Slot::Queued;
                self.resend.push_back(i);
            }
        }
    }

    /// Payload bytes of packet `i`.
    fn payload_of(&self, i: u64) -> u32 {
        let start = i * self.mss as u64;
        (self.limit.saturating_sub(start)).min(self.mss as u64) as u32
    }

    /// Sends the oldest packet waiting to be resent, else the next new one; false if neither.
    fn send_one(&mut self, now: SimTime, out: &mut Vec<Packet>) -> bool {
        while let Some(i) = self.resend.pop_front() {
            if let Some(s) = self.slot(i) {
                if *s == Slot::Queued {
                    *s = Slot::Sent(now);
                    self.stats.retransmits += 1;
                    self.emit(i, now, out);
                    return true;
                }
            }
        }
        if self.next_new >= self.total_pkts() {
            return false;
        }
        let i = self.next_new;
        self.next_new += 1;
        self.window.push_back(Slot::Sent(now));
        self.emit(i, now, out);
        true
    }

    fn emit(&mut self, i: u64, now: SimTime, out: &mut Vec<Packet>) {
        let payload = self.payload_of(i);
        let sport = match self.path_rng.as_mut() {
            Some(rng) => {
                if self.path_next == self.path_order.len() {
                    self.path_order.shuffle(rng);
                    self.path_next = 0;
                }
                self.path_next += 1;
                self.path_order[self.path_next - 1]
            }
            None => self.ids.sport,
        };
        self.stats.data_pkts += 1;
        self.stats.bytes_sent += payload as u64;
        out.push(Packet {
            proto: Proto::Ndp,
            seq: i * self.mss as u64,
            payload,
            size: payload + self.header,
            flags: kind::DATA,
            created: now,
            ts_val: now,
            sport,
            ..self.ids.forward()
        });
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.rto_due.is_none_or(|t| t > now) {
            return;
        }
        let rto = self.rto;
        let mut late = Vec::new();
        for (k, s) in self.window.iter_mut().enumerate() {
            if let Slot::Sent(t) = *s {
                if t + rto <= now {
                    *s = Slot::Queued;
                    late.push(self.base + k as u64);
                }
            }
        }
        // a timed-out packet goes at once, ahead of what NACKs queued
        for &i in late.iter().rev() {
            self.resend.push_front(i);
        }
        self.stats.timeouts += late.len() as u64;
        for _ in 0..late.len() {
            self.send_one(now, out);
        }
        self.update_rto();
    }

    fn update_rto(&mut self) {
        let oldest = self.window.iter().filter_map(|s| if let Slot::Sent(t) = *s { Some(t) } else { None }).min();
        self.rto_due = oldest.map(|t| t + self.rto);
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        self.rto_due
    }

    /// Every byte given has been ACKed.
    pub fn is_done(&self) -> bool {
        self.limit != u64::MAX && self.base >= self.total_pkts()
    }
}
