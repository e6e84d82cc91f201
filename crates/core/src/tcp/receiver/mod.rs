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
#[derive(Debug)]
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
mod tests {
    use super::*;
    use crate::tcp::testnet::IDS;

    const MSS: u32 = 1460;

    fn nohs() -> TcpConfig {
        TcpConfig { handshake: false, ..Default::default() }
    }
    fn t(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }
    /// A data segment as the sender would emit it.
    fn seg(seq: u64, len: u32) -> Packet {
        Packet {
            flow: IDS.flow,
            src: IDS.src,
            dst: IDS.dst,
            sport: IDS.sport,
            dport: IDS.dport,
            seq,
            payload: len,
            size: len + 40,
            flags: flags::ACK,
            ..Packet::default()
        }
    }
    fn fin(mut p: Packet) -> Packet {
        p.flags |= flags::FIN;
        p
    }
    /// Feeds `p` at `now`; returns the ACK numbers emitted.
    fn feed(r: &mut TcpReceiver, p: &Packet, now: SimTime) -> Vec<u64> {
        let mut out = Vec::new();
        r.on_packet(p, now, &mut out);
        out.iter().map(|a| a.ack).collect()
    }

    // --- cumulative ACKs ------------------------------------------------------------------------
    #[test]
    fn each_in_order_segment_is_acked_with_the_whole_buffer() {
        let mut r = TcpReceiver::new(&nohs(), IDS);
        let mut out = Vec::new();
        r.on_packet(&seg(0, MSS), t(5), &mut out);
        assert_eq!(out.len(), 1);
        let a = &out[0];
        assert_eq!((a.ack, a.seq, a.flags), (1460, 0, flags::ACK));
        assert_eq!((a.src, a.dst, a.sport, a.dport, a.flow), (IDS.dst, IDS.src, IDS.dport, IDS.sport, IDS.flow));
        assert_eq!((a.size, a.payload, a.rwnd), (40, 0, 65535));
        assert_eq!((a.uid, a.created, a.ts_val), (0, t(5), t(5)));
        assert_eq!(r.delivered_bytes(), 1460);
    }

    #[test]
    fn out_of_order_segments_get_dupacks_and_the_fill_jumps_the_ack() {
        let mut r = TcpReceiver::new(&nohs(), IDS);
        assert_eq!(feed(&mut r, &seg(0, MSS), t(0)), [1460]);
        assert_eq!(feed(&mut r, &seg(2920, MSS), t(1)), [1460]);
        assert_eq!(feed(&mut r, &seg(5840, MSS), t(2)), [1460]);
        assert_eq!(r.ooo_bytes(), 2920);
        assert_eq!(r.delivered_bytes(), 1460);
        // filling the first hole pulls in the next buffered segment only
        assert_eq!(feed(&mut r, &seg(1460, MSS), t(3)), [4380]);
        assert_eq!(feed(&mut r, &seg(4380, MSS), t(4)), [7300]);
        assert_eq!(r.delivered_bytes(), 7300);
        assert_eq!(r.ooo_bytes(), 0);
        assert_eq!(r.stats().ooo_segments, 2);
    }

    #[test]
    fn duplicates_are_acked_but_delivered_once() {
        let mut r = TcpReceiver::new(&nohs(), IDS);
        feed(&mut r, &seg(0, MSS), t(0));
        assert_eq!(feed(&mut r, &seg(0, MSS), t(1)), [1460]);
        // a buffered segment arriving twice is not counted twice either
        feed(&mut r, &seg(2920, MSS), t(2));
        feed(&mut r, &seg(2920, MSS), t(3));
        assert_eq!(feed(&mut r, &seg(1460, MSS), t(4)), [4380]);
        assert_eq!(r.delivered_bytes(), 4380);
        assert_eq!(r.stats().dup_segments, 1);
        // partly old, partly new (a resend with other boundaries)
        assert_eq!(feed(&mut r, &seg(4000, 1000), t(5)), [5000]);
        assert_eq!(r.delivered_bytes(), 5000);
    }

    #[test]
    fn payload_beyond_the_window_is_trimmed() {
        let c = TcpConfig { rcv_buf_bytes: 4000, window_scaling: false, ..nohs() };
        let mut r = TcpReceiver::new(&c, IDS);
        feed(&mut r, &seg(3000, MSS), t(0)); // only [3000, 4000) fits
        assert_eq!(r.ooo_bytes(), 1000);
        assert_eq!(feed(&mut r, &seg(0, 3000), t(1)), [4000]);
        assert_eq!(feed(&mut r, &seg(4000, MSS), t(2)), [5460]);
    }

    #[test]
    fn interval_set_merges_overlaps_and_neighbours() {
        let mut s = IntervalSet::default();
        s.insert(10, 20);
        s.insert(30, 40);
        s.insert(50, 60);
        s.insert(20, 30); // touches both sides
        assert_eq!(s.v, [(10, 40), (50, 60)]);
        s.insert(35, 55);
        assert_eq!(s.v, [(10, 60)]);
        s.insert(0, 5);
        s.insert(70, 80);
        s.insert(5, 5); // empty: ignored
        assert_eq!(s.v, [(0, 5), (10, 60), (70, 80)]);
        assert_eq!(s.take_prefix(3), 5);
        assert_eq!(s.v, [(10, 60), (70, 80)]);
        assert_eq!(s.take_prefix(8), 8);
        assert_eq!(s.take_prefix(10), 60);
        assert_eq!(s.bytes(), 10);
    }

    // --- delayed ACKs ---------------------------------------------------------------------------
    #[test]
    fn delayed_acks_cover_two_segments_or_wait_for_the_timer() {
        let c = TcpConfig { delayed_ack: true, ..nohs() };
        let mut r = TcpReceiver::new(&c, IDS);
        assert!(feed(&mut r, &seg(0, MSS), t(0)).is_empty());
        assert_eq!(r.next_deadline(), Some(t(40_000)));
        assert_eq!(feed(&mut r, &seg(1460, MSS), t(10)), [2920]);
        assert_eq!(r.next_deadline(), None);
        assert!(feed(&mut r, &seg(2920, MSS), t(20)).is_empty());
        let mut out = Vec::new();
        r.on_timer(t(40_019), &mut out); // early: nothing
        assert!(out.is_empty());
        r.on_timer(t(40_020), &mut out);
        assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), [4380]);
        assert_eq!(r.next_deadline(), None);
        r.on_timer(t(50_000), &mut out); // spurious: nothing
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn quick_acks_answer_the_first_segments_at_once_then_delay() {
        let c = TcpConfig { delayed_ack: true, quickack_segments: 2, ..nohs() };
        let mut r = TcpReceiver::new(&c, IDS);
        assert_eq!(feed(&mut r, &seg(0, MSS), t(0)), [1460]);
        assert_eq!(feed(&mut r, &seg(1460, MSS), t(10)), [2920]);
        // the third is delayed as usual: one ACK per two segments or the timer
        assert!(feed(&mut r, &seg(2920, MSS), t(20)).is_empty());
        assert_eq!(r.next_deadline(), Some(t(40_020)));
        assert_eq!(feed(&mut r, &seg(4380, MSS), t(30)), [5840]);
        // out-of-order segments are not counted: they are acknowledged at once anyway
        let mut r = TcpReceiver::new(&c, IDS);
        assert_eq!(feed(&mut r, &seg(1460, MSS), t(0)), [0]);
        assert_eq!(feed(&mut r, &seg(0, MSS), t(1)), [2920]);
        assert_eq!(feed(&mut r, &seg(2920, MSS), t(2)), [4380]);
        assert!(feed(&mut r, &seg(4380, MSS), t(3)).is_empty());
    }

    #[test]
    fn delayed_acks_are_immediate_for_gaps_fills_duplicates_and_fin() {
        let c = TcpConfig { delayed_ack: true, ..nohs() };
        let mut r = TcpReceiver::new(&c, IDS);
        assert!(feed(&mut r, &seg(0, MSS), t(0)).is_empty());
        assert_eq!(feed(&mut r, &seg(2920, MSS), t(1)), [1460]); // out of order
        assert_eq!(feed(&mut r, &seg(1460, MSS), t(2)), [4380]); // fills the gap
        assert_eq!(feed(&mut r, &seg(0, MSS), t(3)), [4380]); // duplicate
        assert_eq!(feed(&mut r, &fin(seg(4380, 100)), t(4)), [4481]); // FIN
        assert_eq!(r.next_deadline(), None);
    }

    #[test]
    fn small_segments_count_by_bytes() {
        let c = TcpConfig { delayed_ack: true, ..nohs() };
        let mut r = TcpReceiver::new(&c, IDS);
        for i in 0..5 {
            assert!(feed(&mut r, &seg(i * 500, 500), t(i)).is_empty());
        }
        assert_eq!(feed(&mut r, &seg(2500, 500), t(9)), [3000]); // 3000 >= 2 * 1460
    }

    // --- FIN --------------------------------------------------------------------------------------
    #[test]
    fn fin_in_order_is_consumed_and_acked() {
        let mut r = TcpReceiver::new(&nohs(), IDS);
        assert_eq!(feed(&mut r, &fin(seg(0, 1000)), t(0)), [1001]);
        assert!(r.fin_received());
        assert_eq!(r.state(), ReceiverState::CloseWait);
        assert_eq!(r.delivered_bytes(), 1000);
        // a retransmitted FIN is acknowledged again, nothing else changes
        assert_eq!(feed(&mut r, &fin(seg(0, 1000)), t(1)), [1001]);
        assert_eq!(r.delivered_bytes(), 1000);
    }

    #[test]
    fn fin_beyond_a_hole_waits_for_the_hole() {
        let mut r = TcpReceiver::new(&nohs(), IDS);
        assert_eq!(feed(&mut r, &fin(seg(1000, 500)), t(0)), [0]);
        assert!(!r.fin_received());
        assert_eq!(feed(&mut r, &seg(0, 1000), t(1)), [1501]);
        assert!(r.fin_received());
        assert_eq!(r.delivered_bytes(), 1500);
        // an empty flow: a pure FIN
        let mut r = TcpReceiver::new(&nohs(), IDS);
        assert_eq!(feed(&mut r, &fin(seg(0, 0)), t(0)), [1]);
        assert!(r.fin_received());
        assert_eq!(r.delivered_bytes(), 0);
    }

    // --- handshake and window scaling -------------------------------------------------------------
    fn syn(wscale: u8) -> Packet {
        Packet { flags: flags::SYN, size: 40, wscale, ack: 0, ..seg(0, 0) }
    }

    #[test]
    fn syn_ack_offers_the_scale_and_later_windows_are_scaled_exactly() {
        let c = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
        let mut r = TcpReceiver::new(&c, IDS);
        assert_eq!(r.state(), ReceiverState::Listen);
        assert!(feed(&mut r, &seg(1, MSS), t(0)).is_empty(), "data before the SYN is ignored");
        let mut out = Vec::new();
        r.on_packet(&syn(5), t(1), &mut out);
        let sa = &out[0];
        assert_eq!((sa.flags, sa.seq, sa.ack, sa.size), (flags::SYN | flags::ACK, 0, 1, 40));
        assert_eq!((sa.rwnd, sa.wscale), (65535, 5), "SYN-ACK window unscaled, shift offered");
        assert_eq!(r.state(), ReceiverState::SynReceived);
        // the first data segment carries the handshake's ACK
        out.clear();
        r.on_packet(&Packet { ack: 1, ..seg(1, MSS) }, t(2), &mut out);
        assert_eq!(r.state(), ReceiverState::Established);
        let a = &out[0];
        assert_eq!((a.ack, a.seq, a.rwnd), (1461, 1, 32768));
        assert_eq!(decode_window(a.rwnd, r.wscale_shift()), 1_048_576);
        assert_eq!(r.adv_window(), 1 << 20);
        assert_eq!(r.delivered_bytes(), 1460);
    }

    #[test]
    fn no_scaling_unless_the_sender_offers_it() {
        let c = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
        let mut r = TcpReceiver::new(&c, IDS);
        let mut out = Vec::new();
        r.on_packet(&syn(NO_WSCALE), t(0), &mut out);
        assert_eq!(out[0].wscale, NO_WSCALE);
        assert_eq!(r.wscale_shift(), 0);
        assert_eq!(r.adv_window(), 65535, "the unscaled field caps the window");
        // and not if we do not: the option is never sent
        let c = TcpConfig { rcv_buf_bytes: 1 << 20, window_scaling: false, ..Default::default() };
        let mut r = TcpReceiver::new(&c, IDS);
        out.clear();
        r.on_packet(&syn(7), t(0), &mut out);
        assert_eq!((out[0].wscale, r.wscale_shift()), (NO_WSCALE, 0));
    }

    #[test]
    fn a_retransmitted_syn_repeats_the_syn_ack() {
        let mut r = TcpReceiver::new(&TcpConfig::default(), IDS);
        let mut out = Vec::new();
        r.on_packet(&syn(0), t(0), &mut out);
        r.on_packet(&syn(0), t(1), &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|p| p.has(flags::SYN) && p.ack == 1));
        // the pure third ACK establishes without an ACK in return
        out.clear();
        r.on_packet(&Packet { ack: 1, ..seg(1, 0) }, t(2), &mut out);
        assert_eq!(r.state(), ReceiverState::Established);
        assert!(out.is_empty());
        // a late SYN copy now gets a plain ACK
        r.on_packet(&syn(0), t(3), &mut out);
        assert_eq!((out[0].flags, out[0].ack), (flags::ACK, 1));
    }

    // --- timestamps echo (RFC 7323 4.3) -------------------------------------------------------------
    #[test]
    fn echo_follows_ts_recent() {
        let c = TcpConfig { delayed_ack: true, ..nohs() };
        let mut r = TcpReceiver::new(&c, IDS);
        let mut out = Vec::new();
        let stamp = |mut p: Packet, ts: u64| {
            p.ts_val = t(ts);
            p
        };
        r.on_packet(&stamp(seg(0, MSS), 100), t(150), &mut out);
        r.on_packet(&stamp(seg(1460, MSS), 110), t(160), &mut out);
        assert_eq!(out[0].ts_ecr, t(100), "a delayed ACK echoes the earlier segment");
        r.on_packet(&stamp(seg(4380, MSS), 130), t(180), &mut out); // out of order
        // TS.Recent only follows segments that start at or before the last ACK's edge: the
        // second segment (seq 1460 > 0) never did, so the duplicate ACK still echoes 100
        assert_eq!(out[1].ts_ecr, t(100), "a duplicate ACK echoes TS.Recent");
        r.on_packet(&stamp(seg(2920, MSS), 300), t(350), &mut out); // the retransmission fills it
        assert_eq!((out[2].ack, out[2].ts_ecr), (5840, t(300)));
    }

    // --- SACK blocks (RFC 2018 section 4) -------------------------------------------------------------
    fn sack_cfg() -> TcpConfig {
        TcpConfig { sack: true, rcv_buf_bytes: 1 << 20, ..nohs() }
    }
    /// The blocks of the one ACK `p` provokes, in segments of MSS bytes.
    fn blocks(r: &mut TcpReceiver, p: &Packet) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        r.on_packet(p, t(0), &mut out);
        assert_eq!(out.len(), 1);
        let m = MSS as u64;
        let used: Vec<_> = out[0].sack.iter().take_while(|b| b.start < b.end).collect();
        assert!(out[0].sack[used.len()..].iter().all(|b| *b == SackBlock::default()), "unused slots are empty");
        used.iter().map(|b| (b.start / m, b.end / m)).collect()
    }
    fn s(k: u64) -> Packet {
        seg(k * MSS as u64, MSS)
    }

    #[test]
    fn sack_blocks_most_recent_first_merged_and_dropped_when_acked() {
        let mut r = TcpReceiver::new(&sack_cfg(), IDS);
        assert_eq!(blocks(&mut r, &s(0)), []);
        // holes at 1, 3, 5, 7: each ACK names the newest block first
        assert_eq!(blocks(&mut r, &s(2)), [(2, 3)]);
        assert_eq!(blocks(&mut r, &s(4)), [(4, 5), (2, 3)]);
        assert_eq!(blocks(&mut r, &s(6)), [(6, 7), (4, 5), (2, 3)]);
        // a fourth block pushes the oldest off the three slots
        assert_eq!(blocks(&mut r, &s(8)), [(8, 9), (6, 7), (4, 5)]);
        // segment 3 joins blocks 2 and 4: the merged block comes first and covers block 4
        assert_eq!(blocks(&mut r, &s(3)), [(2, 5), (8, 9), (6, 7)]);
        // a duplicate of held data moves its block to the front
        assert_eq!(blocks(&mut r, &s(8)), [(8, 9), (2, 5), (6, 7)]);
        // a segment next to a block grows it (first block = the whole contiguous block)
        assert_eq!(blocks(&mut r, &s(9)), [(8, 10), (2, 5), (6, 7)]);
        // segment 1 advances the cumulative ACK to 5: the passed block goes, order stays
        let mut out = Vec::new();
        r.on_packet(&s(1), t(1), &mut out);
        assert_eq!(out[0].ack, 5 * MSS as u64);
        assert_eq!(r.sack_blocks().len(), 2);
        assert_eq!(blocks(&mut r, &s(0)), [(8, 10), (6, 7)], "a duplicate below rcv_nxt changes nothing");
        // filling everything empties the list
        r.on_packet(&s(5), t(2), &mut out);
        assert_eq!(blocks(&mut r, &s(7)), []);
        assert_eq!(r.delivered_bytes(), 10 * MSS as u64);
        assert!(r.sack_blocks().is_empty());
    }

    #[test]
    fn sack_block_of_a_trimmed_segment_ends_at_the_window() {
        let c = TcpConfig { sack: true, rcv_buf_bytes: 4000, window_scaling: false, ..nohs() };
        let mut r = TcpReceiver::new(&c, IDS);
        let mut out = Vec::new();
        r.on_packet(&seg(3000, MSS), t(0), &mut out);
        assert_eq!(out[0].sack[0], SackBlock { start: 3000, end: 4000 });
        // entirely beyond the window: nothing held, nothing reported
        out.clear();
        r.on_packet(&seg(5000, MSS), t(1), &mut out);
        assert_eq!((out[0].sack[0], out[0].sack[1]), (SackBlock { start: 3000, end: 4000 }, SackBlock::default()));
    }

    #[test]
    fn without_sack_acks_carry_no_blocks() {
        let mut r = TcpReceiver::new(&nohs(), IDS);
        let mut out = Vec::new();
        for k in [0u64, 2, 4, 6] {
            r.on_packet(&s(k), t(k), &mut out);
        }
        assert!(out.iter().all(|a| a.sack == [SackBlock::default(); 3]));
        assert!(r.sack_blocks().is_empty());
    }

    // --- ECN echo (RFC 3168 6.1.3, RFC 8257 3.2) ---------------------------------------------------
    fn ce(mut p: Packet) -> Packet {
        p.ecn = Ecn::Ce;
        p
    }
    fn with(mut p: Packet, f: u8) -> Packet {
        p.flags |= f;
        p
    }
    /// Feeds full segments `0..pattern.len()` (CE where `pattern` says), 1 us apart, then fires
    /// the delayed-ACK timer; returns every ACK as (ACK number in segments, ECE).
    fn echo(cfg: &TcpConfig, pattern: &[u8]) -> (Vec<(u64, bool)>, TcpReceiver) {
        let mut r = TcpReceiver::new(cfg, IDS);
        let mut out = Vec::new();
        for (i, &c) in pattern.iter().enumerate() {
            let p = seg(i as u64 * MSS as u64, MSS);
            r.on_packet(&if c == 1 { ce(p) } else { p }, t(i as u64), &mut out);
        }
        r.on_timer(t(1_000_000), &mut out);
        let acks = out.iter().map(|a| (a.ack / MSS as u64, a.has(flags::ECE))).collect();
        (acks, r)
    }
    fn dctcp_cfg(delayed_ack: bool) -> TcpConfig {
        TcpConfig { cc: crate::tcp::CcKind::Dctcp, delayed_ack, ..nohs() }
    }

    #[test]
    fn dctcp_delayed_acks_flush_the_old_state_at_each_ce_change() {
        let (acks, r) = echo(&dctcp_cfg(true), &[0, 0, 1, 1, 1, 0, 0, 0]);
        // 0-1 unmarked (one delayed ACK); 2-3 marked (one ACK, ECE); at segment 5 the state
        // changes with segment 4 unacknowledged: an immediate ACK of 5 segments with the old
        // state (ECE), then 5-6 together and 7 by the timer, unmarked
        assert_eq!(acks, [(2, false), (4, true), (5, true), (7, false), (8, false)]);
        assert_eq!((r.stats().ce_segments, r.stats().ece_acks), (3, 2));
        // alternating marks: every segment ends up acknowledged alone with its own CE bit
        let (acks, _) = echo(&dctcp_cfg(true), &[1, 0, 1, 0]);
        assert_eq!(acks, [(1, true), (2, false), (3, true), (4, false)]);
        // a change right after an ACK (nothing pending) sends nothing extra
        let (acks, _) = echo(&dctcp_cfg(true), &[0, 0, 1, 1, 0, 0]);
        assert_eq!(acks, [(2, false), (4, true), (6, false)]);
    }

    #[test]
    fn dctcp_echo_counts_the_marked_bytes_exactly() {
        // whatever the pattern, the bytes acknowledged by ECE ACKs are exactly the marked ones
        let pattern: Vec<u8> = (0..200u64).map(|i| ((i * 7919) % 13 < 4) as u8).collect();
        for delayed in [false, true] {
            let (acks, _) = echo(&dctcp_cfg(delayed), &pattern);
            let mut prev = 0;
            let mut marked = 0;
            for &(a, e) in &acks {
                if e {
                    marked += a - prev;
                }
                prev = a;
            }
            assert_eq!(prev, 200);
            assert_eq!(marked, pattern.iter().map(|&c| c as u64).sum::<u64>(), "delayed {delayed}");
        }
        // without delayed ACKs: one ACK per segment, ECE = CE
        let (acks, _) = echo(&dctcp_cfg(false), &[0, 1, 1, 0, 1]);
        assert_eq!(acks, [(1, false), (2, true), (3, true), (4, false), (5, true)]);
    }

    #[test]
    fn classic_ecn_latches_ece_until_cwr() {
        let cfg = TcpConfig { ecn: true, ..nohs() };
        let mut r = TcpReceiver::new(&cfg, IDS);
        let mut out = Vec::new();
        let m = MSS as u64;
        r.on_packet(&seg(0, MSS), t(0), &mut out);
        r.on_packet(&ce(seg(m, MSS)), t(1), &mut out);
        r.on_packet(&seg(2 * m, MSS), t(2), &mut out); // still latched
        r.on_packet(&with(seg(3 * m, MSS), flags::CWR), t(3), &mut out); // CWR clears
        r.on_packet(&seg(4 * m, MSS), t(4), &mut out);
        r.on_packet(&ce(with(seg(5 * m, MSS), flags::CWR)), t(5), &mut out); // CWR then CE: set
        r.on_packet(&seg(6 * m, MSS), t(6), &mut out);
        let ece: Vec<bool> = out.iter().map(|a| a.has(flags::ECE)).collect();
        assert_eq!(ece, [false, true, true, false, false, true, true]);
        assert_eq!(r.stats().ece_acks, 4);
        // a DCTCP receiver ignores CWR and follows CE
        let mut r = TcpReceiver::new(&dctcp_cfg(false), IDS);
        out.clear();
        r.on_packet(&ce(seg(0, MSS)), t(0), &mut out);
        r.on_packet(&with(seg(m, MSS), flags::CWR), t(1), &mut out);
        r.on_packet(&ce(with(seg(2 * m, MSS), flags::CWR)), t(2), &mut out);
        assert_eq!(out.iter().map(|a| a.has(flags::ECE)).collect::<Vec<_>>(), [true, false, true]);
    }

    #[test]
    fn ecn_is_echoed_only_when_negotiated() {
        let m = MSS as u64;
        let ecn_syn = Packet { flags: flags::SYN | flags::ECE | flags::CWR, ..syn(0) };
        for (cfg, syn_pkt, in_use) in [
            (TcpConfig { ecn: true, ..Default::default() }, ecn_syn.clone(), true),
            (TcpConfig { ecn: true, ..Default::default() }, syn(0), false),
            (TcpConfig::default(), ecn_syn.clone(), false),
        ] {
            let mut r = TcpReceiver::new(&cfg, IDS);
            let mut out = Vec::new();
            r.on_packet(&syn_pkt, t(0), &mut out);
            assert_eq!(out[0].has(flags::ECE), in_use);
            assert!(!out[0].has(flags::CWR));
            r.on_packet(&ce(Packet { ack: 1, ..seg(1, MSS) }), t(1), &mut out);
            r.on_packet(&Packet { ack: 1, ..seg(1 + m, MSS) }, t(2), &mut out);
            assert_eq!(out[1].has(flags::ECE) && out[2].has(flags::ECE), in_use);
            assert_eq!(r.stats().ce_segments, 1, "CE is counted in any case");
        }
        // ECN off: CE is counted and never echoed
        let (acks, r) = echo(&nohs(), &[1, 1, 0]);
        assert!(acks.iter().all(|&(_, e)| !e));
        assert_eq!((r.stats().ce_segments, r.stats().ece_acks), (2, 0));
    }

    // --- steady state ----------------------------------------------------------------------------------
    #[test]
    fn the_out_of_order_buffer_reuses_its_storage() {
        let mut r = TcpReceiver::new(&TcpConfig { rcv_buf_bytes: 1 << 20, ..nohs() }, IDS);
        let mut out = Vec::with_capacity(16);
        let mut cap = 0;
        for round in 0..200u64 {
            let base = round * 20 * MSS as u64;
            // every other segment of a 20-segment window lost, then repaired
            for k in (1..20).step_by(2) {
                r.on_packet(&seg(base + k * MSS as u64, MSS), t(round), &mut out);
            }
            for k in (0..20).step_by(2) {
                r.on_packet(&seg(base + k * MSS as u64, MSS), t(round), &mut out);
            }
            out.clear();
            if round == 0 {
                cap = r.ooo.v.capacity();
            }
            assert_eq!(r.ooo.v.capacity(), cap);
        }
        assert_eq!(r.delivered_bytes(), 200 * 20 * MSS as u64);
    }
}
