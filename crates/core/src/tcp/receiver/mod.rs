//! The receiving end of a flow: cumulative ACKs, an out-of-order buffer, delayed ACKs.
//!
//! The passive opener of RFC 9293 reduced to what a bulk receiver does; the application reads
//! every in-order byte at once, so the advertised window is always the whole `rcv_buf_bytes`
//! and its right edge moves with `rcv_nxt` (as ns-2's `TCPSink` with a fixed `window_`).
//!
//! Rules:
//! - **States** ([`ReceiverState`]): `Listen` until a SYN, `SynReceived` until the sender's ACK
//!   (or its first data, which carries the ACK), `Established`, and `CloseWait` once the FIN is
//!   consumed. Without `handshake` the receiver starts `Established` with `rcv_nxt = 0`.
//!   No FIN of its own and no RST are modelled.
//! - **Window** (RFC 7323): the shift is `wscale_for(rcv_buf_bytes)` when both sides offered the
//!   option (without a handshake, when `window_scaling` is on), else 0 and the field saturates
//!   at 65535. The SYN-ACK carries the unscaled window and the option; every other segment
//!   carries `rcv_buf_bytes >> shift`. Payload beyond the advertised right edge is trimmed.
//! - **ACK policy** (RFC 5681 4.2, RFC 1122 4.2.3.2): an immediate ACK for an out-of-order
//!   segment (a duplicate ACK), for a segment that fills all or part of a gap, for a duplicate
//!   segment, for anything carrying a FIN and for a SYN. In-order data is acknowledged at once,
//!   or with `delayed_ack` when two full segments (`2 * mss_bytes`) are unacknowledged or
//!   `delack_timeout_ms` after the first unacknowledged one; the first `quickack_segments`
//!   in-order data segments of a connection are acknowledged at once all the same (Linux's
//!   quick-ACK mode at a connection's start).
//! - **Out-of-order data** is kept as sorted, disjoint byte intervals in one `Vec` that is reused:
//!   no allocation per packet once it has grown to the largest number of holes seen.
//!   `delivered_bytes` counts in-order payload only, each byte once.
//! - **Timestamps** (RFC 7323 4.3): `ts_ecr` echoes `TS.Recent`, the `ts_val` of the latest
//!   segment that arrived at or before the left edge of the last ACK sent. A delayed ACK thus
//!   echoes the earlier of the two segments and a duplicate ACK the last in-order one.
//! - **ECN** (with `ecn` or `cc = "dctcp"`): in use if the SYN asked for it (ECE and CWR set;
//!   the SYN-ACK then carries ECE, RFC 3168 6.1.1), or by the configuration without a
//!   handshake. CE marks are counted in any case. The echo depends on the congestion control:
//!   - *classic* (RFC 3168 6.1.3): a CE data segment latches ECE; every ACK carries ECE until a
//!     segment with CWR arrives (CWR is processed before CE, so a segment with both keeps it
//!     latched). The delayed-ACK policy is unchanged.
//!   - *DCTCP* (RFC 8257 3.2): one bit of state, `ce`, the CE bit of the last data segment.
//!     Every ACK carries ECE = `ce`. When a segment's CE bit differs from `ce` and a delayed
//!     ACK is pending, an ACK goes out at once *before* the segment is processed: it
//!     acknowledges what arrived before (`rcv_nxt` before the segment) with the old `ce`;
//!     then `ce` flips and the segment is acknowledged by the usual policy. Without delayed
//!     ACKs every segment is acknowledged at once with its own CE bit, so ECE echoes CE
//!     exactly. CWR is ignored. The sender thus learns the exact sequence of marks.
//! - **SACK** (RFC 2018 section 4, with `sack`): every ACK carries up to 3 blocks
//!   (`Packet::sack`, unused slots `start == end`) naming out-of-order data held. The first block
//!   is the whole contiguous block holding the segment that triggered the ACK, unless that
//!   segment advanced the cumulative ACK; the others repeat the most recently reported blocks,
//!   most recent first, leaving out any that is now part of a block already in the option and
//!   any that the cumulative ACK has passed. The list is a fixed array of 3: a block that drops
//!   off it is reported again only when a segment lands in it. Each listed block is always a
//!   whole interval of the out-of-order set (a merge makes the merged block the first one). No
//!   D-SACK (RFC 2883), no reneging: received data is kept until it is delivered.

use super::{decode_window, encode_window, FlowIds, TcpConfig};
use crate::packet::{flags, Ecn, Packet, Proto, SackBlock, NO_WSCALE};
use crate::time::{SimDuration, SimTime};

/// Connection state of the receiver (RFC 9293 3.3.2 names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverState {
    Listen,
    SynReceived,
    Established,
    /// The FIN has been received in order; every data byte has been delivered.
    CloseWait,
}

/// Counters a receiver keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// TCP segments that arrived, of any kind.
    pub segments_received: u64,
    /// ACKs sent (SYN-ACKs included).
    pub acks_sent: u64,
    /// Segments whose payload had all been received before.
    pub dup_segments: u64,
    /// Segments that arrived beyond a hole and were buffered.
    pub ooo_segments: u64,
    /// Segments that arrived with ECN CE set.
    pub ce_segments: u64,
    /// ACKs sent with ECN-Echo.
    pub ece_acks: u64,
}

/// How the receiver echoes CE marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EcnEcho {
    /// No ECN (not configured, or not negotiated).
    Off,
    /// RFC 3168: ECE latched from a CE segment until a CWR segment.
    Classic,
    /// RFC 8257 3.2: ECE follows the CE bit of the data, with an immediate ACK on each change.
    Dctcp,
}

/// Sorted, disjoint, non-adjacent half-open byte intervals `[start, end)`.
#[derive(Clone, Debug, Default)]
struct IntervalSet {
    v: Vec<(u64, u64)>,
}

impl IntervalSet {
    fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
    /// Adds `[s, e)`, merging with every interval it overlaps or touches.
    fn insert(&mut self, s: u64, e: u64) {
        if s >= e {
            return;
        }
        // first interval whose end reaches s
        let i = self.v.partition_point(|&(_, end)| end < s);
        // intervals i..j overlap or touch [s, e)
        let j = i + self.v[i..].partition_point(|&(start, _)| start <= e);
        if i == j {
            self.v.insert(i, (s, e));
        } else {
            let ns = s.min(self.v[i].0);
            let ne = e.max(self.v[j - 1].1);
            self.v[i] = (ns, ne);
            self.v.drain(i + 1..j);
        }
    }
    /// Removes the intervals that start at or before `edge` and returns the new contiguous edge.
    fn take_prefix(&mut self, mut edge: u64) -> u64 {
        let k = self.v.partition_point(|&(start, _)| start <= edge);
        for &(_, end) in &self.v[..k] {
            edge = edge.max(end);
        }
        self.v.drain(..k);
        edge
    }
    fn bytes(&self) -> u64 {
        self.v.iter().map(|&(s, e)| e - s).sum()
    }
    /// The interval holding byte `seq`, if any.
    fn containing(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.v.partition_point(|&(_, end)| end <= seq);
        self.v.get(i).copied().filter(|&(start, _)| start <= seq)
    }
}

/// Most SACK blocks one ACK carries (the size of `Packet::sack`).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK blocks to report, most recent first (RFC 2018 section 4); a fixed array, no
/// allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SackList {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    n: usize,
}

impl SackList {
    /// `first` becomes the first block; earlier blocks follow unless `first` covers them.
    fn report(&mut self, first: SackBlock) {
        let mut next = [SackBlock::default(); MAX_SACK_BLOCKS];
        next[0] = first;
        let mut n = 1;
        for b in &self.blocks[..self.n] {
            let covered = b.start >= first.start && b.end <= first.end;
            if !covered && n < MAX_SACK_BLOCKS {
                next[n] = *b;
                n += 1;
            }
        }
        self.blocks = next;
        self.n = n;
    }
    /// Forgets the blocks the cumulative ACK `rcv_nxt` has passed, keeping the order.
    fn drop_below(&mut self, rcv_nxt: u64) {
        let mut n = 0;
        for i in 0..self.n {
            if self.blocks[i].start >= rcv_nxt {
                self.blocks[n] = self.blocks[i];
                n += 1;
            }
        }
        for b in &mut self.blocks[n..] {
            *b = SackBlock::default();
        }
        self.n = n;
    }
}

/// The receiving end of one flow.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    ids: FlowIds,
    mss: u64,
    header: u32,
    rcv_buf: u64,
    window_scaling: bool,
    delayed_ack: bool,
    delack_timeout: SimDuration,
    /// In-order data segments still to be acknowledged at once (`quickack_segments`).
    quickack_left: u32,
    state: ReceiverState,
    /// Window scaling negotiated (or assumed, without a handshake) and the shift applied to
    /// our advertised window.
    scaling: bool,
    shift: u8,
    /// Our initial sequence number and next sequence number (we send no data: iss + 1 after
    /// the SYN-ACK).
    iss: u64,
    snd_nxt: u64,
    /// The peer's initial sequence number; its data starts at `data_start`.
    irs: u64,
    data_start: u64,
    /// Next byte expected (SYN and FIN count one).
    rcv_nxt: u64,
    ooo: IntervalSet,
    /// Sequence number of the peer's FIN, once seen (in order or not).
    fin_seq: Option<u64>,
    fin_received: bool,
    last_ack_sent: u64,
    ts_recent: SimTime,
    delack_deadline: Option<SimTime>,
    /// RFC 2018: report SACK blocks, and the blocks to report.
    sack: bool,
    sack_list: SackList,
    /// Flags added to every ACK (ECE while the echo says so).
    ack_flags: u8,
    /// The echo configured, and the one in use on this connection.
    ecn_conf: EcnEcho,
    ecn: EcnEcho,
    stats: ReceiverStats,
}

impl TcpReceiver {
    /// The receiving end of the flow `ids` (ids as seen by the sender).
    pub fn new(cfg: &TcpConfig, ids: FlowIds) -> TcpReceiver {
        TcpReceiver::with_iss(cfg, ids, 0)
    }

    /// [`TcpReceiver::new`] with our initial sequence number `iss` (with a handshake): a new
    /// connection between the same endpoints starts far from the last one's sequence numbers,
    /// so that the last one's late segments are not taken for its own.
    pub fn with_iss(cfg: &TcpConfig, ids: FlowIds, iss: u64) -> TcpReceiver {
        debug_assert!(cfg.validate().is_ok(), "TcpReceiver built from an invalid TcpConfig");
        let (state, scaling) = if cfg.handshake {
            (ReceiverState::Listen, false)
        } else {
            (ReceiverState::Established, cfg.window_scaling)
        };
        let ecn_conf = match (cfg.ecn_enabled(), cfg.cc) {
            (false, _) => EcnEcho::Off,
            (true, super::CcKind::Dctcp) => EcnEcho::Dctcp,
            (true, _) => EcnEcho::Classic,
        };
        TcpReceiver {
            ids,
            mss: cfg.mss_bytes as u64,
            header: cfg.header_bytes,
            rcv_buf: cfg.rcv_buf_bytes,
            window_scaling: cfg.window_scaling,
            delayed_ack: cfg.delayed_ack,
            delack_timeout: cfg.delack_timeout(),
            quickack_left: cfg.quickack_segments,
            state,
            scaling,
            shift: if scaling { cfg.rcv_wscale() } else { 0 },
            iss,
            snd_nxt: 0,
            irs: 0,
            data_start: 0,
            rcv_nxt: 0,
            ooo: IntervalSet { v: Vec::with_capacity(8) },
            fin_seq: None,
            fin_received: false,
            last_ack_sent: 0,
            ts_recent: SimTime::ZERO,
            delack_deadline: None,
            sack: cfg.sack,
            sack_list: SackList::default(),
            ack_flags: 0,
            ecn_conf,
            ecn: if cfg.handshake { EcnEcho::Off } else { ecn_conf },
            stats: ReceiverStats::default(),
        }
    }

    pub fn on_packet(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if pkt.proto != Proto::Tcp || pkt.has(flags::RST) {
            return;
        }
        self.stats.segments_received += 1;
        match self.state {
            // RFC 9293 3.10.7.2: a SYN opens the connection; anything else is ignored (no RST).
            ReceiverState::Listen => {
                if pkt.has(flags::SYN) && !pkt.has(flags::ACK) {
                    self.accept_syn(pkt);
                    self.state = ReceiverState::SynReceived;
                    self.send_syn_ack(now, out);
                }
            }
            // RFC 9293 3.10.7.4, SYN-RECEIVED: a retransmitted SYN means our SYN-ACK was lost,
            // repeat it; an acceptable ACK (the third segment or the first data) establishes.
            ReceiverState::SynReceived => {
                if pkt.has(flags::SYN) {
                    if pkt.seq == self.irs {
                        self.send_syn_ack(now, out);
                    }
                } else if pkt.has(flags::ACK) && pkt.ack == self.iss + 1 {
                    self.state = ReceiverState::Established;
                    self.on_segment(pkt, now, out);
                }
            }
            // RFC 9293 3.10.7.4, ESTABLISHED / CLOSE-WAIT: data and FIN; a stray SYN (a late
            // retransmission) is answered with an ACK (RFC 5961 4's challenge ACK, simplified).
            ReceiverState::Established | ReceiverState::CloseWait => {
                if pkt.has(flags::SYN) {
                    self.send_ack(now, out);
                } else {
                    self.on_segment(pkt, now, out);
                }
            }
        }
    }

    /// Sends the delayed ACK when its deadline has passed; otherwise does nothing.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        match self.delack_deadline {
            Some(t) if t <= now => self.send_ack(now, out),
            _ => {}
        }
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        self.delack_deadline
    }
    /// Payload bytes delivered in order to the application.
    pub fn delivered_bytes(&self) -> u64 {
        match self.state {
            ReceiverState::Listen | ReceiverState::SynReceived => 0,
            _ => self.rcv_nxt - self.data_start - self.fin_received as u64,
        }
    }
    /// The FIN was received in order.
    pub fn fin_received(&self) -> bool {
        self.fin_received
    }
    pub fn state(&self) -> ReceiverState {
        self.state
    }
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
    /// The window-scale shift applied to the window field of our ACKs (what FairQ's end-host
    /// helper writes into `Packet::reserved_wscale`).
    pub fn wscale_shift(&self) -> u8 {
        self.shift
    }
    /// The window our ACKs advertise, in bytes (after the rounding of the scaled field).
    pub fn adv_window(&self) -> u64 {
        decode_window(encode_window(self.rcv_buf, self.shift), self.shift)
    }
    /// Next sequence number expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// Out-of-order payload bytes held.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo.bytes()
    }
    /// The SACK blocks the next ACK will carry, most recent first (empty without `sack`).
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack_list.blocks[..self.sack_list.n]
    }

    // ----- internals -------------------------------------------------------------------------

    /// RFC 9293 3.10.7.2 + RFC 7323 2.2: remember the peer's ISN; scale only if both offered.
    fn accept_syn(&mut self, pkt: &Packet) {
        self.irs = pkt.seq;
        self.rcv_nxt = pkt.seq + 1;
        self.data_start = self.rcv_nxt;
        self.last_ack_sent = self.rcv_nxt;
        self.ts_recent = pkt.ts_val;
        // RFC 7323 1.3: scaling is in force only if both sides send the option; the SYN-ACK
        // may carry it only in answer to a SYN that did
        self.scaling = self.window_scaling && pkt.wscale != NO_WSCALE;
        self.shift = if self.scaling { super::wscale_for(self.rcv_buf) } else { 0 };
        // RFC 3168 6.1.1: an ECN-setup SYN has both ECE and CWR
        let asks = pkt.has(flags::ECE) && pkt.has(flags::CWR);
        self.ecn = if asks { self.ecn_conf } else { EcnEcho::Off };
    }

    fn on_segment(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        // before TS.Recent moves: DCTCP's immediate ACK covers, and echoes, earlier segments
        self.ecn_hook(pkt, now, out);
        // RFC 7323 4.3 (2): TS.Recent follows segments at or before the last ACK's edge
        if pkt.seq <= self.last_ack_sent && pkt.ts_val >= self.ts_recent {
            self.ts_recent = pkt.ts_val;
        }
        let fin = pkt.has(flags::FIN);
        if pkt.payload == 0 && !fin {
            return; // a pure ACK (the handshake's third segment): nothing to acknowledge
        }
        let start = pkt.seq;
        let end = start + pkt.payload as u64;
        let right = self.rcv_nxt + self.adv_window();
        let mut ack_now = fin;
        if fin && end <= right && self.fin_seq.is_none() {
            self.fin_seq = Some(end);
        }
        if pkt.payload > 0 {
            if end <= self.rcv_nxt {
                // RFC 9293 3.10.7.4: an old duplicate; acknowledge to resynchronise
                self.stats.dup_segments += 1;
                ack_now = true;
            } else if start > self.rcv_nxt {
                // RFC 5681 4.2: out of order; keep it and send a duplicate ACK at once
                self.stats.ooo_segments += 1;
                self.ooo.insert(start, end.min(right));
                ack_now = true;
                if self.sack {
                    // RFC 2018 4: the first block holds the segment that triggered the ACK
                    if let Some((s, e)) = self.ooo.containing(start) {
                        self.sack_list.report(SackBlock { start: s, end: e });
                    }
                }
            } else {
                // in order (maybe partly old): advance, then pull in what was buffered
                let had_gap = !self.ooo.is_empty();
                if self.quickack_left > 0 {
                    self.quickack_left -= 1;
                    ack_now = true;
                }
                self.rcv_nxt = end.min(right);
                self.rcv_nxt = self.ooo.take_prefix(self.rcv_nxt);
                ack_now |= had_gap; // RFC 5681 4.2: it filled all or part of a gap
                if self.sack && had_gap {
                    self.sack_list.drop_below(self.rcv_nxt);
                }
            }
        }
        if !self.fin_received && self.fin_seq == Some(self.rcv_nxt) {
            // every byte before the FIN is here: consume it (RFC 9293 3.10.7.4, eighth step)
            self.rcv_nxt += 1;
            self.fin_received = true;
            self.state = ReceiverState::CloseWait;
        }
        if ack_now || !self.delayed_ack || self.rcv_nxt - self.last_ack_sent >= 2 * self.mss {
            self.send_ack(now, out);
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.delack_timeout);
        }
    }

    /// ECN: counts CE, and sets ECE in `ack_flags` by the echo in use (module rules); for
    /// DCTCP, sends the immediate ACK of a CE change.
    #[inline]
    fn ecn_hook(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        let ce = pkt.ecn == Ecn::Ce;
        if ce {
            self.stats.ce_segments += 1;
        }
        match self.ecn {
            EcnEcho::Off => {}
            EcnEcho::Classic => {
                if pkt.has(flags::CWR) {
                    self.ack_flags &= !flags::ECE;
                }
                if ce {
                    self.ack_flags |= flags::ECE;
                }
            }
            EcnEcho::Dctcp => {
                if pkt.payload == 0 && !pkt.has(flags::FIN) {
                    return; // only data segments carry the CE state
                }
                let state = self.ack_flags & flags::ECE != 0;
                if ce != state {
                    if self.delack_deadline.is_some() {
                        self.send_ack(now, out); // the old state, for what arrived before
                    }
                    self.ack_flags ^= flags::ECE;
                }
            }
        }
    }

    fn header_packet(&self, now: SimTime) -> Packet {
        Packet {
            size: self.header,
            payload: 0,
            seq: self.snd_nxt,
            ack: self.rcv_nxt,
            created: now,
            ts_val: now,
            ts_ecr: self.ts_recent,
            ..self.ids.reverse()
        }
    }

    fn send_syn_ack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let mut p = self.header_packet(now);
        p.seq = self.iss;
        p.flags = flags::SYN | flags::ACK;
        if self.ecn != EcnEcho::Off {
            p.flags |= flags::ECE; // RFC 3168 6.1.1: an ECN-setup SYN-ACK
        }
        // RFC 7323 2.2: the window of a SYN-ACK is never scaled
        p.rwnd = encode_window(self.rcv_buf, 0);
        p.wscale = if self.scaling { self.shift } else { NO_WSCALE };
        self.snd_nxt = self.iss + 1;
        self.stats.acks_sent += 1;
        out.push(p);
    }

    fn send_ack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let mut p = self.header_packet(now);
        p.flags = flags::ACK | self.ack_flags;
        self.stats.ece_acks += (self.ack_flags & flags::ECE != 0) as u64;
        p.rwnd = encode_window(self.rcv_buf, self.shift);
        if self.sack {
            p.sack = self.sack_list.blocks;
        }
        self.last_ack_sent = self.rcv_nxt;
        self.delack_deadline = None;
        self.stats.acks_sent += 1;
        out.push(p);
    }
}

#[cfg(test)]
mod tests;
