//! The sending end of a flow: connection set-up, the send window, loss detection and recovery.
//!
//! A bulk sender of `size` bytes (or forever) in the style of ns-2's one-way `Agent/TCP/Newreno`,
//! with byte sequence numbers, an optional three-way handshake and a FIN. Congestion window
//! arithmetic lives in [`super::congestion`]; the RTO in [`super::rtt`].
//!
//! Rules:
//! - **States** ([`SenderState`], RFC 9293 3.3.2 names): `Closed` until `start()`; `SynSent`
//!   while the SYN is unanswered (retransmitted on the RTO, backed off); `Established`;
//!   `FinWait1` once the FIN has been sent; `Done` once it is acknowledged (FIN-WAIT-2: the
//!   peer's FIN and TIME-WAIT are not modelled). Each `match` arm cites its RFC section.
//! - **Sequence space**: ISS = 0. With the handshake the SYN is sequence number 0 and data
//!   occupies `[1, 1 + size)`; without it data occupies `[0, size)`. The FIN rides on the
//!   segment carrying the last byte (a pure FIN only for an empty flow or when only the FIN
//!   is left to retransmit). `snd_una` is the oldest unacknowledged number, `snd_nxt` the next
//!   to send, `snd_max` the highest ever sent plus one (they differ after a timeout).
//! - **Send window**: new data leaves only while `snd_nxt + len <= snd_una + min(cwnd, rwnd)`,
//!   with `rwnd` decoded from the latest acceptable ACK (every one, as a switch may rewrite it).
//!   Segments are full (`mss_bytes`) unless the data ends or the usable window is below one
//!   segment with nothing outstanding, in which case the window's worth is sent (no deadlock
//!   under a small rewritten window). A zero window with nothing outstanding arms the persist
//!   timer, which sends a one-byte probe (RFC 9293 3.8.6.1).
//! - **RTT sampling**: one timed segment at a time, new data only, never across a
//!   retransmission (Karn, RFC 6298 3; ns-2's `rtt_active_`), or with `timestamps` the echo of
//!   every ACK of new data (RFC 7323 4.1). The SYN is timed too.
//! - **Retransmission timer** (RFC 6298 5): armed when a segment leaves and none is running,
//!   restarted by every ACK of new data, stopped when nothing is outstanding. On expiry:
//!   `ssthresh = max(FlightSize / 2, 2 SMSS)` with FlightSize the data sent since the last
//!   go-back (so repeated timeouts bring it to 2 SMSS, as in ns-2), `cwnd = 1 SMSS`, the RTO
//!   backs off (up to `max_backoff`), `recover = snd_max`, fast recovery ends, and the sender
//!   goes back to `snd_una` and resends everything from there as the window allows (go-back-N,
//!   as ns-2). The first segment goes out even into a closed window.
//! - **Fast retransmit** at the `dupack_threshold`-th duplicate ACK (a pure ACK for `snd_una`
//!   with data outstanding; window changes do not disqualify it, since switches rewrite
//!   windows), only if `snd_una > recover` (RFC 6582 3.2 step 2 with `recover` = `snd_max` at
//!   the last fast retransmit or timeout: at most one fast retransmit per window, none on the
//!   duplicate ACKs that go-back-N provokes; this is ns-2's `bugFix_` and FreeBSD's check, and
//!   applies to Reno too). The timer restarts with the retransmission (as ns-2 and Linux).
//! - **Fast recovery**: duplicate ACKs inflate cwnd; a full ACK (`>= recover`) ends it; a
//!   partial ACK ends it for Reno and, for NewReno, retransmits the next hole and stays, with
//!   the timer restarted only on the first partial ACK (RFC 6582 4, "Impatient"; ns-2's
//!   `newreno_changes1_ 1`).
//! - **Limited transmit** (RFC 3042, off by default): each of the first `dupack_threshold - 1`
//!   duplicate ACKs may release one segment beyond cwnd (never beyond rwnd); those segments
//!   are left out of the FlightSize that sets ssthresh.
//! - **Packets**: data segments are `payload + header_bytes` long, carry ACK (and FIN), the
//!   sender's own window and `priority` = payload bytes not yet acknowledged (pFabric's
//!   remaining flow size; ACKs and SYNs carry 0). `uid` is left 0, `created = ts_val = now`,
//!   `ts_ecr` echoes the receiver. ECT is never set (ECN is a hook for DCTCP).

use super::congestion::{AckEvent, AnyCc, CongestionControl, Window};
use super::rtt::RttEstimator;
use super::{decode_window, encode_window, wscale_for, FlowIds, SenderStats, TcpConfig, MAX_WSCALE};
use crate::packet::{flags, Packet, Proto, NO_WSCALE};
use crate::time::{SimDuration, SimTime};

/// Connection state of the sender (RFC 9293 3.3.2 names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    /// Not started.
    Closed,
    /// SYN sent, no SYN-ACK yet.
    SynSent,
    /// Sending data.
    Established,
    /// The FIN has been sent (at least once) and is not yet acknowledged.
    FinWait1,
    /// Every byte and the FIN acknowledged (RFC 9293's FIN-WAIT-2; nothing more happens).
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerKind {
    /// RFC 6298 retransmission timer (also the SYN timer).
    Retransmit,
    /// RFC 9293 3.8.6.1 zero-window probe.
    Persist,
}

/// The sending end of one flow.
#[derive(Debug)]
pub struct TcpSender {
    ids: FlowIds,
    mss: u64,
    header: u32,
    dupthresh: u32,
    handshake: bool,
    window_scaling: bool,
    timestamps: bool,
    limited_transmit: bool,
    /// Our own receive buffer (we receive no data; it sets the window our segments carry).
    rcv_buf: u64,
    state: SenderState,
    // sequence space
    iss: u64,
    data_start: u64,
    /// One past the last data byte (`u64::MAX` for an endless flow).
    data_end: u64,
    has_fin: bool,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    // windows
    win: Window,
    cc: AnyCc,
    /// The peer's window in bytes, and the shifts in force for its field and ours.
    peer_rwnd: u64,
    peer_shift: u8,
    my_shift: u8,
    // loss recovery
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover`: `snd_max` at the last fast retransmit or timeout.
    recover: Option<u64>,
    partial_seen: bool,
    /// Bytes sent by limited transmit beyond cwnd (left out of FlightSize).
    lt_bytes: u64,
    // round-trip time
    rtt: RttEstimator,
    /// The timed segment: the ACK number that covers it, and when it left.
    timed: Option<(u64, SimTime)>,
    timer: Option<(SimTime, TimerKind)>,
    // what we acknowledge / echo
    rcv_ack: u64,
    ts_recent: SimTime,
    stats: SenderStats,
}

impl TcpSender {
    /// A sender of `size` payload bytes (`None`: a long-lived flow that never ends).
    pub fn new(cfg: &TcpConfig, ids: FlowIds, size: Option<u64>) -> TcpSender {
        debug_assert!(cfg.validate().is_ok(), "TcpSender built from an invalid TcpConfig");
        let mss = cfg.mss_bytes as u64;
        let iss = 0;
        let data_start = iss + cfg.handshake as u64;
        // Without a handshake both ends know each other's window and shift from the shared
        // configuration (the peer is a TcpReceiver with the same `rcv_buf_bytes`).
        let assumed_shift = cfg.rcv_wscale();
        let (peer_rwnd, peer_shift, my_shift) = if cfg.handshake {
            (0, 0, 0)
        } else {
            let w = decode_window(encode_window(cfg.rcv_buf_bytes, assumed_shift), assumed_shift);
            (w, assumed_shift, assumed_shift)
        };
        TcpSender {
            ids,
            mss,
            header: cfg.header_bytes,
            dupthresh: cfg.dupack_threshold,
            handshake: cfg.handshake,
            window_scaling: cfg.window_scaling,
            timestamps: cfg.timestamps,
            limited_transmit: cfg.limited_transmit,
            rcv_buf: cfg.rcv_buf_bytes,
            state: SenderState::Closed,
            iss,
            data_start,
            data_end: size.map_or(u64::MAX, |s| data_start.saturating_add(s)),
            has_fin: size.is_some(),
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            win: Window::new(mss, cfg.init_cwnd_pkts),
            cc: AnyCc::new(cfg.cc),
            peer_rwnd,
            peer_shift,
            my_shift,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_seen: false,
            lt_bytes: 0,
            rtt: RttEstimator::new(
                cfg.initial_rto(),
                cfg.min_rto(),
                cfg.max_rto(),
                cfg.clock_granularity(),
                cfg.max_backoff,
            ),
            timed: None,
            timer: None,
            rcv_ack: 0,
            ts_recent: SimTime::ZERO,
            stats: SenderStats::default(),
        }
    }

    /// Opens the connection at `now` (SYN, or the first window when `handshake` is off).
    /// Calling it again does nothing.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        match self.state {
            // RFC 9293 3.10.1 (OPEN call, active): send a SYN, enter SYN-SENT
            SenderState::Closed if self.handshake => {
                self.state = SenderState::SynSent;
                self.send_syn(now, false, out);
            }
            // no handshake: the connection is taken as established
            SenderState::Closed => {
                self.state = SenderState::Established;
                self.try_send(now, out);
            }
            _ => {}
        }
    }

    pub fn on_packet(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if pkt.proto != Proto::Tcp || !pkt.has(flags::ACK) || pkt.has(flags::RST) {
            return;
        }
        match self.state {
            // RFC 9293 3.10.7.1: nothing to do before the open or after the end
            SenderState::Closed | SenderState::Done => {}
            // RFC 9293 3.10.7.3 (SYN-SENT): a SYN-ACK that acknowledges our SYN establishes
            SenderState::SynSent => {
                if pkt.has(flags::SYN) && pkt.ack == self.iss + 1 {
                    self.on_syn_ack(pkt, now, out);
                }
            }
            // RFC 9293 3.10.7.4 (ESTABLISHED, FIN-WAIT-1): ACK processing; a duplicate
            // SYN-ACK (our retransmitted SYN crossed it) is ignored
            SenderState::Established | SenderState::FinWait1 => {
                if !pkt.has(flags::SYN) {
                    self.on_ack(pkt, now, out);
                }
            }
        }
    }

    /// Handles an expired timer; does nothing if its deadline is still in the future.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let Some((at, kind)) = self.timer else { return };
        if at > now {
            return;
        }
        self.timer = None;
        match (self.state, kind) {
            // RFC 6298 5.5-5.6 with RFC 9293 3.8.1: resend the SYN, back off
            (SenderState::SynSent, _) => {
                self.stats.timeouts += 1;
                self.rtt.back_off();
                self.timed = None;
                self.send_syn(now, true, out);
            }
            (SenderState::Established | SenderState::FinWait1, TimerKind::Retransmit) => {
                self.on_retransmit_timeout(now, out);
            }
            // RFC 9293 3.8.6.1: probe a zero window
            (SenderState::Established | SenderState::FinWait1, TimerKind::Persist) => {
                self.probe_zero_window(now, out);
            }
            (SenderState::Closed | SenderState::Done, _) => {}
        }
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        self.timer.map(|(t, _)| t)
    }
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// All data (and the FIN) acknowledged.
    pub fn is_done(&self) -> bool {
        self.state == SenderState::Done
    }
    pub fn cwnd_bytes(&self) -> u64 {
        self.win.cwnd
    }
    /// The retransmission timeout in force (backoff included).
    pub fn rto(&self) -> SimDuration {
        self.rtt.rto()
    }

    // ----- further observers (tests, traces, the engine) ------------------------------------

    pub fn state(&self) -> SenderState {
        self.state
    }
    /// Slow-start threshold, bytes (`u64::MAX` before the first loss).
    pub fn ssthresh_bytes(&self) -> u64 {
        self.win.ssthresh
    }
    /// The peer's receive window, bytes, from the latest acceptable ACK.
    pub fn peer_rwnd(&self) -> u64 {
        self.peer_rwnd
    }
    /// The shift applied to the peer's window field (0 unless scaling was negotiated).
    pub fn peer_wscale(&self) -> u8 {
        self.peer_shift
    }
    /// `min(cwnd, rwnd)`: how far beyond `snd_una` new data may reach.
    pub fn usable_window(&self) -> u64 {
        self.win.cwnd.min(self.peer_rwnd)
    }
    /// Payload bytes in `[snd_una, snd_nxt)`: sent (since the last go-back) and not acknowledged.
    pub fn flight_bytes(&self) -> u64 {
        self.snd_nxt.min(self.data_end).saturating_sub(self.snd_una.max(self.data_start))
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// In fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Name of the congestion control.
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    // ----- connection set-up ------------------------------------------------------------------

    fn send_syn(&mut self, now: SimTime, retransmission: bool, out: &mut Vec<Packet>) {
        let mut p = self.header_packet(now);
        p.seq = self.iss;
        p.ack = 0;
        p.flags = flags::SYN;
        // RFC 7323 2.2: the SYN's window is not scaled; it carries our shift if we offer scaling
        p.rwnd = encode_window(self.rcv_buf, 0);
        p.wscale = if self.window_scaling { wscale_for(self.rcv_buf) } else { NO_WSCALE };
        p.priority = 0;
        self.snd_nxt = self.iss + 1;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if retransmission {
            self.stats.retransmits += 1;
        } else {
            self.timed = Some((self.iss + 1, now));
        }
        self.stats.pkts_sent += 1;
        self.timer = Some((now + self.rtt.rto(), TimerKind::Retransmit));
        out.push(p);
    }

    /// RFC 9293 3.10.7.3 and RFC 7323 1.3 / 2.2: take the peer's ISN, window and shift (scaling
    /// holds only if both SYNs carried the option), sample the SYN's RTT, ACK, send data.
    fn on_syn_ack(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        self.rcv_ack = pkt.seq + 1;
        self.ts_recent = pkt.ts_val;
        let scaling = self.window_scaling && pkt.wscale != NO_WSCALE;
        self.peer_shift = if scaling { pkt.wscale.min(MAX_WSCALE) } else { 0 };
        self.my_shift = if scaling { wscale_for(self.rcv_buf) } else { 0 };
        self.peer_rwnd = pkt.rwnd as u64;
        self.snd_una = self.iss + 1;
        let sample = if self.timestamps {
            Some(now.saturating_since(pkt.ts_ecr))
        } else {
            self.timed.filter(|&(end, _)| pkt.ack >= end).map(|(_, t)| now.saturating_since(t))
        };
        self.timed = None;
        if let Some(r) = sample {
            self.rtt.sample(r);
        }
        self.timer = None;
        self.state = SenderState::Established;
        let mut ack = self.header_packet(now);
        ack.priority = 0;
        self.stats.pkts_sent += 1;
        out.push(ack);
        self.try_send(now, out);
    }

    // ----- ACK processing ---------------------------------------------------------------------

    fn on_ack(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        let ack = pkt.ack;
        // RFC 9293 3.10.7.4: an ACK below snd_una is old (reordered) and one above snd_max
        // acknowledges nothing we sent; both are ignored, window included
        if ack < self.snd_una || ack > self.snd_max {
            return;
        }
        if pkt.ts_val >= self.ts_recent {
            self.ts_recent = pkt.ts_val;
        }
        // the window of every acceptable ACK, as rewritten by any switch on the way
        self.peer_rwnd = decode_window(pkt.rwnd, self.peer_shift);
        let ece = pkt.has(flags::ECE);
        let flight_before = self.flight_bytes();
        let mut sample = None;
        if ack > self.snd_una {
            sample = self.on_new_ack(pkt, now, out);
        } else if pkt.payload == 0 && !pkt.has(flags::FIN) && self.snd_max > self.snd_una {
            self.on_dupack(now, out);
        }
        if ece {
            let ev = AckEvent { now, acked_bytes: 0, flight_bytes: flight_before, rtt_sample: sample, ece };
            self.cc.on_ecn_echo(&mut self.win, &ev);
        }
        if self.state != SenderState::Done {
            self.try_send(now, out);
        }
    }

    /// An ACK that advances `snd_una`. Returns the RTT sample it gave, if any.
    fn on_new_ack(&mut self, pkt: &Packet, now: SimTime, out: &mut Vec<Packet>) -> Option<SimDuration> {
        let ack = pkt.ack;
        let acked = self.payload_between(self.snd_una, ack);
        let flight_before = self.flight_bytes();
        self.stats.bytes_acked += acked;
        // RFC 7323 4.1 (timestamps) or RFC 6298 3 with Karn's rule (one timed segment)
        let sample = if self.timestamps {
            Some(now.saturating_since(pkt.ts_ecr))
        } else {
            match self.timed {
                Some((end, t)) if ack >= end => {
                    self.timed = None;
                    Some(now.saturating_since(t))
                }
                _ => None,
            }
        };
        if let Some(r) = sample {
            self.rtt.sample(r); // also ends any backoff
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.dupacks = 0;
        self.lt_bytes = 0;
        let mut restart_timer = true;
        if self.in_recovery {
            let full = self.recover.is_none_or(|r| ack >= r);
            if full || !self.cc.partial_ack_keeps_recovery() {
                // RFC 6582 3.2 step 3 (full ACK) / RFC 5681 3.2 step 6 (Reno, any new ACK)
                self.in_recovery = false;
                let flight = self.flight_bytes();
                self.cc.on_exit_recovery(&mut self.win, flight);
            } else {
                // RFC 6582 3.2 step 3 (partial ACK): deflate, resend the next hole, stay
                self.cc.on_partial_ack(&mut self.win, acked);
                self.retransmit_head(now, out);
                // RFC 6582 4, Impatient variant: only the first partial ACK restarts the timer
                restart_timer = !self.partial_seen;
                self.partial_seen = true;
            }
        } else {
            let ev = AckEvent { now, acked_bytes: acked, flight_bytes: flight_before, rtt_sample: sample, ece: false };
            self.cc.on_ack(&mut self.win, &ev);
        }
        if self.has_fin && self.snd_una == self.data_end + 1 {
            // our FIN is acknowledged: FIN-WAIT-2, which is the end here
            self.state = SenderState::Done;
            self.timer = None;
            self.timed = None;
        } else if self.snd_una == self.snd_max {
            self.timer = None; // RFC 6298 5.2: nothing outstanding
        } else if restart_timer {
            self.timer = Some((now + self.rtt.rto(), TimerKind::Retransmit)); // RFC 6298 5.3
        }
        sample
    }

    /// A duplicate ACK (RFC 5681 section 2, minus the unchanged-window condition).
    fn on_dupack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.dupacks = self.dupacks.saturating_add(1);
        if self.in_recovery {
            // RFC 5681 3.2 step 4: inflate by the segment that left the network
            self.cc.on_dupack_in_recovery(&mut self.win);
        } else if self.dupacks == self.dupthresh {
            // RFC 6582 3.2 step 2: a new recovery only once the ACK covers more than `recover`
            if self.recover.is_none_or(|r| self.snd_una > r) {
                self.enter_fast_recovery(now, out);
            }
        }
        // below the threshold, limited transmit (if enabled) happens in try_send
    }

    /// RFC 5681 3.2 steps 2-3 with RFC 6582 3.2 step 2.
    fn enter_fast_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let flight = self.flight_bytes().saturating_sub(self.lt_bytes);
        self.cc.on_enter_fast_recovery(&mut self.win, flight, self.dupacks);
        self.in_recovery = true;
        self.recover = Some(self.snd_max);
        self.partial_seen = false;
        self.lt_bytes = 0;
        self.stats.fast_retransmits += 1;
        self.timed = None; // Karn: the timed segment's ACK may now be ambiguous
        self.retransmit_head(now, out);
        self.timer = Some((now + self.rtt.rto(), TimerKind::Retransmit));
    }

    // ----- timers -----------------------------------------------------------------------------

    /// RFC 6298 5.4-5.6 and RFC 5681 3.1 (equation 4, loss window), go-back-N as ns-2.
    fn on_retransmit_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.stats.timeouts += 1;
        let flight = self.flight_bytes();
        self.cc.on_timeout(&mut self.win, flight);
        self.rtt.back_off();
        self.timed = None;
        self.in_recovery = false;
        self.recover = Some(self.snd_max); // RFC 6582 3.2 step 4
        self.dupacks = 0;
        self.lt_bytes = 0;
        self.snd_nxt = self.snd_una;
        self.timer = Some((now + self.rtt.rto(), TimerKind::Retransmit));
        // the oldest unacknowledged segment leaves even into a closed window (then one byte)
        let wnd = self.usable_window().max(1);
        self.send_from_nxt(wnd, now, out);
        self.try_send(now, out);
    }

    fn probe_zero_window(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.snd_nxt == self.snd_una && self.snd_nxt < self.data_end && self.usable_window() == 0 {
            self.send_from_nxt(1, now, out);
        } else {
            self.try_send(now, out);
        }
    }

    // ----- transmission -----------------------------------------------------------------------

    /// Sends as much new (or, after a go-back, old) data as the window allows, then the FIN.
    fn try_send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !matches!(self.state, SenderState::Established | SenderState::FinWait1) {
            return;
        }
        let lt = if self.limited_transmit && !self.in_recovery && self.dupacks > 0 && self.dupacks < self.dupthresh {
            self.dupacks as u64 * self.mss
        } else {
            0
        };
        let wnd = self.win.cwnd.saturating_add(lt).min(self.peer_rwnd);
        let right = self.snd_una.saturating_add(wnd);
        loop {
            if self.snd_nxt < self.data_end {
                let want = self.mss.min(self.data_end - self.snd_nxt);
                let space = right.saturating_sub(self.snd_nxt);
                let idle = self.snd_nxt == self.snd_una;
                let len = if space >= want {
                    want
                } else if idle && space > 0 {
                    space // a window smaller than a segment, nothing outstanding: fill it
                } else {
                    if idle && space == 0 && self.timer.is_none() {
                        self.timer = Some((now + self.rtt.rto(), TimerKind::Persist));
                    }
                    break;
                };
                self.send_from_nxt(len, now, out);
            } else if self.has_fin && self.snd_nxt == self.data_end {
                self.send_from_nxt(0, now, out); // a pure FIN
            } else {
                break;
            }
        }
        if lt > 0 {
            self.lt_bytes = self.flight_bytes().saturating_sub(self.win.cwnd);
        }
    }

    /// Sends up to `limit` payload bytes from `snd_nxt` (a pure FIN when no data is left) and
    /// advances `snd_nxt`.
    fn send_from_nxt(&mut self, limit: u64, now: SimTime, out: &mut Vec<Packet>) {
        let start = self.snd_nxt;
        let len = if start < self.data_end { self.mss.min(self.data_end - start).min(limit) } else { 0 };
        let fin = self.has_fin && start + len == self.data_end;
        if len == 0 && !fin {
            return;
        }
        self.emit(start, len, fin, now, out);
        self.snd_nxt = start + len + fin as u64;
    }

    /// Retransmits the segment at `snd_una` (fast retransmit, partial ACK), leaving `snd_nxt`.
    fn retransmit_head(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let start = self.snd_una;
        let sent_end = self.snd_max.min(self.data_end);
        let len = if start < sent_end { self.mss.min(sent_end - start) } else { 0 };
        let fin = self.has_fin && self.snd_max > self.data_end && start + len == self.data_end;
        if len > 0 || fin {
            self.emit(start, len, fin, now, out);
        }
    }

    /// Puts one segment on the wire and does the bookkeeping every transmission shares.
    fn emit(&mut self, seq: u64, len: u64, fin: bool, now: SimTime, out: &mut Vec<Packet>) {
        let mut p = self.header_packet(now);
        p.seq = seq;
        p.payload = len as u32;
        p.size = self.header + len as u32;
        if fin {
            p.flags |= flags::FIN;
        }
        let end = seq + len + fin as u64;
        if seq < self.snd_max {
            self.stats.retransmits += 1;
        } else if !self.timestamps && self.timed.is_none() && len > 0 {
            self.timed = Some((end, now)); // time new data only (Karn)
        }
        self.stats.pkts_sent += 1;
        self.stats.bytes_sent += len;
        self.snd_max = self.snd_max.max(end);
        if fin && self.state == SenderState::Established {
            self.state = SenderState::FinWait1;
        }
        // RFC 6298 5.1: start the timer if it is not running (a persist timer gives way)
        if !matches!(self.timer, Some((_, TimerKind::Retransmit))) {
            self.timer = Some((now + self.rtt.rto(), TimerKind::Retransmit));
        }
        out.push(p);
    }

    /// A segment of ours with the header fields filled in: a pure ACK as it stands.
    fn header_packet(&self, now: SimTime) -> Packet {
        Packet {
            flow: self.ids.flow,
            src: self.ids.src,
            dst: self.ids.dst,
            sport: self.ids.sport,
            dport: self.ids.dport,
            proto: Proto::Tcp,
            size: self.header,
            payload: 0,
            seq: self.snd_nxt,
            ack: self.rcv_ack,
            flags: flags::ACK,
            rwnd: encode_window(self.rcv_buf, self.my_shift),
            priority: self.data_end.saturating_sub(self.snd_una.max(self.data_start)),
            created: now,
            ts_val: now,
            ts_ecr: self.ts_recent,
            ..Packet::default()
        }
    }

    /// Payload bytes in the sequence range `[a, b)`.
    fn payload_between(&self, a: u64, b: u64) -> u64 {
        b.min(self.data_end).saturating_sub(a.max(self.data_start))
    }
}
