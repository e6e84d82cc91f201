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
//!   every ACK of new data (RFC 7323 4.1). The SYN is timed too. With `karn_strict` (Linux)
//!   the ACK of the timed segment gives no sample when it also acknowledges retransmitted data.
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
//! - **Reordering window** (`reorder_window_us` > 0, in the style of RACK, RFC 8985): where the
//!   duplicate ACKs (or the SACK scoreboard) would start a recovery, the sender first waits the
//!   window; an ACK that advances `snd_una` meanwhile cancels the wait (the segment was
//!   reordered), and at the window's end, with the hole still open and no recovery, recovery
//!   starts as it would have. The wait takes the retransmission timer's place (recovery arms
//!   it again), and is not taken when the retransmission timer would fire first.
//! - **Fast recovery**: duplicate ACKs inflate cwnd; a full ACK (`>= recover`) ends it; a
//!   partial ACK ends it for Reno and, for NewReno, retransmits the next hole and stays, with
//!   the timer restarted only on the first partial ACK (RFC 6582 4, "Impatient"; ns-2's
//!   `newreno_changes1_ 1`). With `recovery_max_burst > 0`, one ACK releases at most that many
//!   new segments while in recovery (ns-2's NewReno: 2).
//! - **Window rules** (`ssthresh_from`, `recovery_cwnd`, `recovery_exit`): RFC by default, ns-2's
//!   on request; the sender hands the congestion control a [`Loss`] (FlightSize and rwnd) and
//!   the `Window` helpers apply the rule (see `congestion/mod.rs` and `docs/tcp.md`).
//! - **ns-2 start-up quirks** (without a handshake only, off by default):
//!   `headerless_first_segment` sends segment 0 without header bytes; `first_ack_resets_cwnd`
//!   makes the ACK of exactly segment 0 set cwnd to the initial window (1 segment after a
//!   timeout before any ACK).
//! - **Limited transmit** (RFC 3042, off by default): each of the first `dupack_threshold - 1`
//!   duplicate ACKs may release one segment beyond cwnd (never beyond rwnd); those segments
//!   are left out of the FlightSize that sets ssthresh.
//! - **Packets**: data segments are `payload + header_bytes` long, carry ACK (and FIN), the
//!   sender's own window and, with `priority = "remaining"`, `priority` = payload bytes not yet
//!   acknowledged (pFabric's remaining flow size; ACKs and SYNs carry 0; 0 everywhere with
//!   the default `"none"`).
//! - **Window cap** (`max_cwnd_pkts`, ns-2's `maxcwnd_`): after an ACK opens the window outside
//!   fast recovery, cwnd is clamped to the cap.
//! - **pFabric's rate control** (`cc = "pfabric"`, `congestion/pfabric.rs`): the congestion
//!   control's `fast_retransmit()` is false, so duplicate ACKs and SACK information never start
//!   a recovery; the RTO is fixed at `min_rto_ms` (no estimate, no backoff); while its
//!   `probe_mode()` holds, `try_send` sends nothing and each timeout sends one segment of one
//!   payload byte at `snd_una`. `uid` is left 0, `created = ts_val = now`,
//!   `ts_ecr` echoes the receiver. ECT(0) only with ECN (below).
//! - **ECN** (RFC 3168, with `ecn` or `cc = "dctcp"`): the SYN carries ECE and CWR; ECN is in
//!   use if the SYN-ACK answers with ECE and without CWR (without a handshake: by the
//!   configuration, both ends reading the same one). Then new data segments are ECT(0); a
//!   retransmission is Not-ECT (RFC 3168 6.1.5) except with DCTCP, whose segments are all ECT
//!   (as in Linux and ns-3); pure ACKs, SYNs and pure FINs never are. Every acceptable ACK goes
//!   to `on_ecn_ack`. An ACK with ECE makes the sender *react* (`on_ecn_echo`: half the window
//!   for Reno / NewReno, `beta_cubic` for CUBIC, `alpha / 2` for DCTCP) only outside loss
//!   recovery, once the cumulative ACK has reached the last loss's `recover` and the
//!   `ecn_high` of the last reaction (`snd_max` at that reaction) has been passed: at most once
//!   per window of data. An ACK with ECE never opens the window (RFC 3168 6.1.2), and neither
//!   does any ACK from a reaction up to and including the ACK that reaches `ecn_high`: the
//!   CWR state ends only when an ACK goes *past* `ecn_high`, as in Linux ("CWR is to be held
//!   something above high_seq is ACKed", `snd_una != high_seq`), ns-3 (`ackNumber >
//!   m_recover`) and ns-2 (`seqno > recover_`), so an ECE on the ACK that exactly covers the
//!   cut window is ignored and the next ACK reacts. The next new data segment after a
//!   reaction carries CWR.
//! - **SACK loss recovery** (RFC 6675, with `sack`; the ACKs' blocks kept in a
//!   [`Scoreboard`]). A duplicate ACK is an ACK that SACKs octets not SACKed before (RFC 6675
//!   section 2; an ACK without new SACK information is not one, whatever its ACK number).
//!   Recovery starts at the `dupack_threshold`-th of them or as soon as `IsLost(HighACK + 1)`
//!   (section 5 steps 2-4), provided the cumulative ACK has reached `recover` (RecoveryPoint
//!   of the last recovery or timeout, section 5.1): `recover = snd_max`, the congestion control
//!   reacts through `on_enter_fast_recovery` and its inflation is taken off again (cwnd stays
//!   at the window it chose, `ssthresh` by default, for the whole recovery: no inflation, no
//!   partial-ACK deflation; `partial_ack_keeps_recovery` is not consulted), and the segment at
//!   `snd_una` is retransmitted. Then, on every ACK, while `cwnd - pipe >= SMSS`, `NextSeg()`
//!   rules 1-4 pick what leaves: the first lost hole above `HighRxt`, else new data (within
//!   rwnd), else the first unSACKed hole above `HighRxt` below the highest SACK, else once per
//!   recovery the rescue segment ending at the highest unSACKed octet. Recovery ends on a
//!   cumulative ACK at or beyond `recover` (`on_exit_recovery`); the scoreboard is kept. The
//!   retransmission timer restarts on every cumulative ACK (RFC 6298 5.3).
//! - **SACK after a timeout** (RFC 6675 5.1): the scoreboard is cleared (RFC 2018 section 5's
//!   SHOULD: the timeout may mean the receiver reneged), recovery ends, `recover = snd_max`, and go-back-N
//!   resends from `snd_una`, but SACK blocks that arrive after the timeout are used: octets they
//!   cover are skipped, and only unSACKed octets between `snd_una` and `snd_nxt` count against
//!   cwnd, until the cumulative ACK reaches `recover`. No new recovery starts before that.
//! - **SACK reneging** (RFC 2018 section 8): a cumulative ACK that stops at or inside a SACKed
//!   range shows the receiver dropped data it had SACKed; the scoreboard is cleared, and the
//!   data is resent by recovery or, at the latest, by the retransmission timer (the receiver
//!   modelled here never reneges).
//! - **Pacing** (with `pacing`, see [`Pacer`]): once an RTT sample exists, data segments leave
//!   no faster than `ratio * cwnd / srtt`; a held segment is released by the sender's own
//!   deadline (`next_deadline()` is the earlier of the timer and the release time), so the
//!   engine's lazy timer wakes it. The fast retransmit (SACK or not) and the first segment after
//!   a timeout leave at once; every other data segment waits, NewReno's partial-ACK
//!   retransmission excepted (it is sent from the ACK like the fast retransmit).

mod ecn;
mod sack_recovery;

use super::congestion::{AckEvent, AnyCc, CongestionControl, Loss, Window};
use super::pacing::Pacer;
use super::rtt::RttEstimator;
use super::sack::Scoreboard;
use super::{decode_window, encode_window, wscale_for, CcKind, FlowIds, PriorityMode, SenderStats, TcpConfig, MAX_WSCALE};
use crate::packet::{flags, Ecn, Packet, Proto, NO_WSCALE};
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
    /// The end of a reordering window (`reorder_window_us`): the segment at `snd_una` is lost.
    Reorder,
}
/// Largest SACK scoreboard, in ranges (see `TcpSender::new`).
const MAX_SACK_RANGES: u64 = 1024;

/// The sending end of one flow.
#[derive(Clone, Debug)]
pub struct TcpSender {
    ids: FlowIds,
    mss: u64,
    header: u32,
    dupthresh: u32,
    handshake: bool,
    window_scaling: bool,
    timestamps: bool,
    /// `TcpConfig::karn_strict`, and the highest end of any retransmitted segment: without SACK
    /// every retransmission starts at `snd_una`, so an ACK acknowledges retransmitted data
    /// exactly when `snd_una < rtx_high` (with SACK a conservative test).
    karn_strict: bool,
    rtx_high: u64,
    limited_transmit: bool,
    /// Most new segments per ACK in fast recovery (0: unlimited).
    recovery_max_burst: u32,
    /// ns-2 start-up quirks (`TcpConfig::headerless_first_segment`, `first_ack_resets_cwnd`),
    /// in force only without a handshake.
    headerless_first: bool,
    first_ack_reset: bool,
    init_cwnd: u64,
    /// `max_cwnd_pkts` in bytes (`u64::MAX`: no cap).
    max_cwnd: u64,
    /// `priority = "remaining"`: data segments carry the unacknowledged payload bytes.
    prio_remaining: bool,
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
    /// RFC 6582 `recover`: the ISS at first, then `snd_max` at the last fast retransmit or
    /// timeout.
    recover: Option<u64>,
    partial_seen: bool,
    /// Bytes sent by limited transmit beyond cwnd (left out of FlightSize).
    lt_bytes: u64,
    // round-trip time
    rtt: RttEstimator,
    /// The timed segment: the ACK number that covers it, and when it left.
    timed: Option<(u64, SimTime)>,
    timer: Option<(SimTime, TimerKind)>,
    /// `timer_wheel_hz` (0: exact timers).
    timer_hz: u32,
    // what we acknowledge / echo
    rcv_ack: u64,
    ts_recent: SimTime,
    stats: SenderStats,
    // SACK (RFC 6675)
    sack: bool,
    sb: Scoreboard,
    /// One past the highest octet retransmitted in this recovery (RFC 6675 HighRxt).
    high_rxt: u64,
    /// NextSeg rule 4's rescue retransmission was sent in this recovery.
    rescue_sent: bool,
    /// With SACK, after a timeout until the cumulative ACK reaches `recover`: go-back-N skips
    /// SACKed octets and counts only unSACKed ones against cwnd.
    after_rto: bool,
    // ECN (RFC 3168)
    /// ECN configured (`ecn`, or DCTCP): offered on the SYN.
    ecn: bool,
    /// ECN in use on this connection (negotiated, or configured without a handshake).
    ecn_ok: bool,
    /// Retransmissions are ECT too (DCTCP).
    ect_retransmits: bool,
    /// `snd_max` at the last ECN reaction: no other reaction, and no increase, before the
    /// cumulative ACK reaches it.
    ecn_high: u64,
    /// The next new data segment carries CWR.
    cwr_pending: bool,
    // pacing
    pacer: Pacer,
    /// A data segment is held by the pacer until this time.
    pace_wake: Option<SimTime>,
    /// `reorder_window_us` (zero: off).
    reorder_window: SimDuration,
}

impl TcpSender {
    /// A sender of `size` payload bytes (`None`: a long-lived flow that never ends).
    pub fn new(cfg: &TcpConfig, ids: FlowIds, size: Option<u64>) -> TcpSender {
        TcpSender::with_iss(cfg, ids, size, 0)
    }

    /// [`TcpSender::new`] with initial sequence number `iss`: a new connection between the same
    /// endpoints starts far from the last one's sequence numbers, so that the last one's late
    /// ACKs are ignored as old.
    pub fn with_iss(cfg: &TcpConfig, ids: FlowIds, size: Option<u64>, iss: u64) -> TcpSender {
        debug_assert!(cfg.validate().is_ok(), "TcpSender built from an invalid TcpConfig");
        let mss = cfg.mss_bytes as u64;
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
            karn_strict: cfg.karn_strict,
            rtx_high: 0,
            limited_transmit: cfg.limited_transmit,
            recovery_max_burst: cfg.recovery_max_burst,
            headerless_first: cfg.headerless_first_segment && !cfg.handshake,
            first_ack_reset: cfg.first_ack_resets_cwnd && !cfg.handshake,
            init_cwnd: mss * cfg.init_cwnd_pkts as u64,
            max_cwnd: if cfg.max_cwnd_pkts == 0 { u64::MAX } else { mss * cfg.max_cwnd_pkts as u64 },
            prio_remaining: cfg.priority == PriorityMode::Remaining,
            rcv_buf: cfg.rcv_buf_bytes,
            state: SenderState::Closed,
            iss,
            data_start,
            data_end: size.map_or(u64::MAX, |s| data_start.saturating_add(s)),
            has_fin: size.is_some(),
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            win: Window::with_rules(mss, cfg.init_cwnd_pkts, cfg.window_rules()),
            cc: AnyCc::from_config(cfg),
            peer_rwnd,
            peer_shift,
            my_shift,
            dupacks: 0,
            in_recovery: false,
            // RFC 6582 3.2 step 1: `recover` starts at the initial send sequence number, so
            // no fast retransmit before an ACK covers more than it (without a handshake, the
            // first data byte; ns-2 likewise refuses one until segment 0 is acknowledged)
            recover: Some(iss),
            partial_seen: false,
            lt_bytes: 0,
            // pFabric's rate control: a fixed RTO of min_rto, no backoff (congestion/pfabric.rs)
            rtt: if cfg.cc == CcKind::Pfabric {
                RttEstimator::new(cfg.min_rto(), cfg.min_rto(), cfg.min_rto(), SimDuration::ZERO, 1)
            } else {
                RttEstimator::new(cfg.initial_rto(), cfg.min_rto(), cfg.max_rto(), cfg.clock_granularity(), cfg.max_backoff)
            },
            timed: None,
            timer: None,
            timer_hz: cfg.timer_wheel_hz,
            rcv_ack: 0,
            ts_recent: SimTime::ZERO,
            stats: SenderStats::default(),
            sack: cfg.sack,
            // enough ranges for every other segment of the largest receive window SACKed, so
            // that only windows rewritten below a segment can make it forget a range
            sb: if cfg.sack {
                Scoreboard::with_capacity((cfg.rcv_buf_bytes / mss / 2 + 2).min(MAX_SACK_RANGES) as usize)
            } else {
                Scoreboard::default()
            },
            high_rxt: iss,
            rescue_sent: false,
            after_rto: false,
            ecn: cfg.ecn_enabled(),
            ecn_ok: cfg.ecn_enabled() && !cfg.handshake,
            ect_retransmits: cfg.cc == super::CcKind::Dctcp,
            ecn_high: iss,
            cwr_pending: false,
            pacer: Pacer::new(cfg),
            pace_wake: None,
            reorder_window: SimDuration::from_secs_f64(cfg.reorder_window_us * 1e-6),
        }
    }

    /// A persistent connection driven by its application: it starts with nothing to send,
    /// never sends a FIN, and sends what [`TcpSender::write`] hands it (incast servers answering
    /// one request after another on the same connection, so cwnd and the RTO estimate carry
    /// over between requests, as in the incast literature). No restart window after idle.
    pub fn new_persistent(cfg: &TcpConfig, ids: FlowIds) -> TcpSender {
        let mut s = TcpSender::new(cfg, ids, Some(0));
        s.has_fin = false;
        s
    }

    /// The application writes `bytes` more; what the window allows leaves at once (or after
    /// the handshake). Only for [`TcpSender::new_persistent`] senders.
    pub fn write(&mut self, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        debug_assert!(!self.has_fin, "write() on a sender with a fixed size");
        self.data_end = self.data_end.saturating_add(bytes);
        self.try_send(now, out);
    }

    /// Payload bytes the application has handed over so far (`u64::MAX` for a long-lived flow).
    pub fn bytes_written(&self) -> u64 {
        self.data_end.saturating_sub(self.data_start)
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

    /// Handles an expired timer or pacing release; does nothing if neither deadline has passed.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let paced = self.pace_wake.is_some_and(|w| w <= now);
        if paced {
            self.pace_wake = None;
        }
        let Some((_, kind)) = self.timer.filter(|&(at, _)| at <= now) else {
            if paced {
                self.try_send(now, out); // a segment held by the pacer may leave
            }
            return;
        };
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
            (SenderState::Established | SenderState::FinWait1, TimerKind::Reorder) => {
                self.on_reorder_timeout(now, out);
            }
            (SenderState::Established | SenderState::FinWait1, TimerKind::Persist) => {
                self.probe_zero_window(now, out);
            }
            (SenderState::Closed | SenderState::Done, _) => {}
        }
    }

    /// When a retransmission (or persist) timer armed now for the current RTO fires: at
    /// `now + RTO`, or on Linux's timer wheel with `timer_wheel_hz` (`timer_wheel.rs`).
    #[inline]
    fn timer_due(&self, now: SimTime) -> SimTime {
        super::timer_wheel::expiry(now, self.rtt.rto(), self.timer_hz)
    }

    /// The earlier of the retransmission (or persist) timer and the pacer's release time.
    pub fn next_deadline(&self) -> Option<SimTime> {
        match (self.timer, self.pace_wake) {
            (Some((t, _)), Some(w)) => Some(t.min(w)),
            (Some((t, _)), None) => Some(t),
            (None, w) => w,
        }
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
    /// Payload bytes written and not yet acknowledged, sent or still waiting in the send
    /// buffer: what an MPTCP connection counts against a subflow's window before it hands the
    /// subflow more data (`tcp/mptcp`).
    pub fn unacked_bytes(&self) -> u64 {
        self.data_end.saturating_sub(self.snd_una.max(self.data_start))
    }
    /// Payload octets presumed in the network. Without SACK, `flight_bytes()`. With SACK, in
    /// recovery: RFC 6675's `SetPipe()` (unSACKed octets not lost, plus those retransmitted);
    /// otherwise the unSACKed octets in `[snd_una, snd_nxt)`.
    pub fn pipe(&self) -> u64 {
        if !self.sack {
            return self.flight_bytes();
        }
        let una = self.snd_una.max(self.data_start);
        if self.in_recovery {
            let high = self.snd_max.min(self.data_end);
            self.sb.pipe(una, high, self.high_rxt.max(una), self.dupthresh, self.mss)
        } else {
            self.sb.unsacked_between(una, self.snd_nxt.min(self.data_end))
        }
    }
    /// The SACK scoreboard (empty without `sack`).
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    /// RFC 6675 HighRxt: one past the highest octet retransmitted in the current recovery.
    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }
    /// The pacer (its release time).
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
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
    /// Duplicate ACKs counted since the last ACK of new data (or timeout).
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }
    /// In fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Name of the congestion control.
    /// ECN is in use on this connection (negotiated in the handshake, or configured without one).
    pub fn ecn_in_use(&self) -> bool {
        self.ecn_ok
    }
    /// The congestion control (DCTCP's `alpha`, CUBIC's state, for traces and tests).
    pub fn cc(&self) -> &AnyCc {
        &self.cc
    }
    /// The congestion control, to change: an MPTCP connection installs
    /// [`super::congestion::Coupled`] on its subflows and sets its increase before each ACK
    /// (`tcp/mptcp`). Replacing the algorithm of a running sender keeps the window as it is.
    pub fn cc_mut(&mut self) -> &mut AnyCc {
        &mut self.cc
    }
    /// cwnd without its fast-recovery inflation (what the coupled increase reads).
    pub fn base_cwnd_bytes(&self) -> u64 {
        self.win.base_cwnd()
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    // ----- connection set-up ------------------------------------------------------------------

    fn send_syn(&mut self, now: SimTime, retransmission: bool, out: &mut Vec<Packet>) {
        let mut p = self.header_packet(now);
        p.seq = self.iss;
        p.ack = 0;
        p.flags = flags::SYN;
        if self.ecn {
            p.flags |= flags::ECE | flags::CWR; // RFC 3168 6.1.1: an ECN-setup SYN
        }
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
        self.timer = Some((self.timer_due(now), TimerKind::Retransmit));
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
        // RFC 3168 6.1.1: an ECN-setup SYN-ACK has ECE set and CWR clear
        self.ecn_ok = self.ecn && pkt.has(flags::ECE) && !pkt.has(flags::CWR);
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
        let ece = self.ecn_ok && pkt.has(flags::ECE);
        let flight_before = self.flight_bytes();
        let acked = self.payload_between(self.snd_una, ack);
        let newly_sacked = if self.sack { self.update_scoreboard(pkt) } else { 0 };
        let mut sample = None;
        if ack > self.snd_una {
            sample = self.on_new_ack(pkt, ece, now, out);
        } else if !self.sack && pkt.payload == 0 && !pkt.has(flags::FIN) && self.snd_max > self.snd_una {
            self.on_dupack(now, out);
        }
        if newly_sacked > 0 && self.state != SenderState::Done {
            self.on_sack_dupack(now, out);
        }
        if self.ecn_ok {
            self.on_ecn(ece, ack, acked, flight_before, sample, now);
        }
        if self.state != SenderState::Done {
            self.try_send(now, out);
        }
    }

    /// What the congestion control learns of one ACK.
    #[inline]
    fn ack_event(&self, now: SimTime, ack: u64, acked: u64, flight_before: u64, sample: Option<SimDuration>, ece: bool) -> AckEvent {
        AckEvent {
            now,
            acked_bytes: acked,
            flight_bytes: flight_before,
            rtt_sample: sample,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            ece,
            ack,
            snd_nxt: self.snd_nxt,
        }
    }

    /// An ACK that advances `snd_una`. Returns the RTT sample it gave, if any.
    fn on_new_ack(&mut self, pkt: &Packet, ece: bool, now: SimTime, out: &mut Vec<Packet>) -> Option<SimDuration> {
        let ack = pkt.ack;
        let acked = self.payload_between(self.snd_una, ack);
        let flight_before = self.flight_bytes();
        let acked_before = self.stats.bytes_acked;
        self.stats.bytes_acked += acked;
        // RFC 7323 4.1 (timestamps) or RFC 6298 3 with Karn's rule (one timed segment)
        let sample = if self.timestamps {
            Some(now.saturating_since(pkt.ts_ecr))
        } else {
            match self.timed {
                Some((end, t)) if ack >= end => {
                    self.timed = None;
                    // Linux's Karn: nothing from an ACK that also covers retransmitted data
                    let ambiguous = self.karn_strict && self.snd_una < self.rtx_high;
                    (!ambiguous).then(|| now.saturating_since(t))
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
        if self.after_rto && self.recover.is_none_or(|r| ack >= r) {
            self.after_rto = false; // RFC 6675 5.1: the data outstanding at the timeout is in
        }
        let mut restart_timer = true;
        if self.in_recovery {
            let full = self.recover.is_none_or(|r| ack >= r);
            if full || (!self.sack && !self.cc.partial_ack_keeps_recovery()) {
                // RFC 6582 3.2 step 3 (full ACK) / RFC 5681 3.2 step 6 (Reno, any new ACK) /
                // RFC 6675 5 (A) (SACK: the ACK covers RecoveryPoint)
                self.in_recovery = false;
                let flight = self.flight_bytes();
                self.cc.on_exit_recovery(&mut self.win, flight, acked);
            } else if self.sack {
                // RFC 6675 5 (B): the scoreboard is updated, cwnd stays, NextSeg sends (C)
            } else {
                // RFC 6582 3.2 step 3 (partial ACK): deflate, resend the next hole, stay
                self.cc.on_partial_ack(&mut self.win, acked);
                self.retransmit_head(now, out);
                // RFC 6582 4, Impatient variant: only the first partial ACK restarts the timer
                restart_timer = !self.partial_seen;
                self.partial_seen = true;
            }
        } else if !(ece || (self.ecn_ok && ack <= self.ecn_high)) {
            // RFC 3168 6.1.2: no increase on an ECE ACK, nor from a reaction up to and
            // including the ACK of the window it cut (Linux's CWR state)
            let ev = self.ack_event(now, ack, acked, flight_before, sample, ece);
            self.cc.on_ack(&mut self.win, &ev);
            if self.win.cwnd > self.max_cwnd {
                self.win.cwnd = self.max_cwnd; // ns-2's maxcwnd_ (opencwnd)
            }
        }
        if self.first_ack_reset && acked_before == 0 && ack == self.data_start + self.mss.min(self.data_end - self.data_start) {
            // ns-2 (`delay_growth_`, `bugfix_ss_`): the ACK of exactly segment 0 sets the
            // initial window, one segment if a timeout came before any ACK
            self.win.cwnd = if self.stats.timeouts > 0 { self.mss } else { self.init_cwnd };
        }
        if self.has_fin && self.snd_una == self.data_end + 1 {
            // our FIN is acknowledged: FIN-WAIT-2, which is the end here
            self.state = SenderState::Done;
            self.timer = None;
            self.timed = None;
            self.pace_wake = None;
        } else if self.snd_una == self.snd_max {
            self.timer = None; // RFC 6298 5.2: nothing outstanding
        } else if restart_timer {
            self.timer = Some((self.timer_due(now), TimerKind::Retransmit)); // RFC 6298 5.3
        }
        sample
    }

    /// A duplicate ACK (RFC 5681 section 2, minus the unchanged-window condition).
    fn on_dupack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.dupacks = self.dupacks.saturating_add(1);
        if self.in_recovery {
            // RFC 5681 3.2 step 4: inflate by the segment that left the network
            self.cc.on_dupack_in_recovery(&mut self.win);
        } else if self.dupacks == self.dupthresh && self.cc.fast_retransmit() {
            // RFC 6582 3.2 step 2: a new recovery only once the ACK covers more than `recover`
            if self.recover.is_none_or(|r| self.snd_una > r) && !self.wait_for_reordering(now) {
                self.enter_fast_recovery(now, out);
            }
        }
        // below the threshold, limited transmit (if enabled) happens in try_send
    }

    /// Under a reordering window, the loss the duplicate ACKs point to is deemed a loss only
    /// when the window has passed: returns whether to wait. The wait is the sender's timer
    /// ([`TimerKind::Reorder`]), started the first time, in place of the retransmission timer
    /// (which recovery arms again); an ACK of new data restarts the retransmission timer and so
    /// ends the wait. A window that would end after the retransmission timer is not waited.
    fn wait_for_reordering(&mut self, now: SimTime) -> bool {
        if self.reorder_window == SimDuration::ZERO {
            return false;
        }
        match self.timer {
            Some((t, TimerKind::Reorder)) => t > now,
            Some((t, _)) if now + self.reorder_window >= t => false,
            _ => {
                self.timer = Some((now + self.reorder_window, TimerKind::Reorder));
                true
            }
        }
    }

    /// The reordering window has passed with the hole still open: the segment at `snd_una` is
    /// lost, and recovery starts as the duplicate ACKs would have started it.
    fn on_reorder_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.in_recovery || self.snd_max == self.snd_una || !self.cc.fast_retransmit() {
            if self.snd_max > self.snd_una {
                self.timer = Some((self.timer_due(now), TimerKind::Retransmit));
            }
            return;
        }
        if self.sack {
            self.enter_sack_recovery(now, out);
        } else {
            self.enter_fast_recovery(now, out);
        }
        self.try_send(now, out);
    }

    /// RFC 5681 3.2 steps 2-3 with RFC 6582 3.2 step 2.
    fn enter_fast_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let loss = Loss { flight: self.flight_bytes().saturating_sub(self.lt_bytes), rwnd: self.peer_rwnd };
        self.cc.on_enter_fast_recovery(&mut self.win, &loss, self.dupacks);
        self.in_recovery = true;
        self.recover = Some(self.snd_max);
        self.partial_seen = false;
        self.lt_bytes = 0;
        self.stats.fast_retransmits += 1;
        self.timed = None; // Karn: the timed segment's ACK may now be ambiguous
        self.retransmit_head(now, out);
        self.timer = Some((self.timer_due(now), TimerKind::Retransmit));
    }

    // ----- timers -----------------------------------------------------------------------------

    /// RFC 6298 5.4-5.6 and RFC 5681 3.1 (equation 4, loss window), go-back-N as ns-2.
    fn on_retransmit_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.stats.timeouts += 1;
        let loss = Loss { flight: self.flight_bytes(), rwnd: self.peer_rwnd };
        self.cc.on_timeout(&mut self.win, &loss);
        self.rtt.back_off();
        self.timed = None;
        self.in_recovery = false;
        self.recover = Some(self.snd_max); // RFC 6582 3.2 step 4
        self.dupacks = 0;
        self.lt_bytes = 0;
        self.snd_nxt = self.snd_una;
        if self.sack {
            // RFC 6675 5.1 / RFC 2018: forget the SACK information; what arrives from now on
            // is used until the ACK reaches `recover`
            self.sb.clear();
            self.after_rto = true;
            self.high_rxt = self.snd_una;
        }
        self.timer = Some((self.timer_due(now), TimerKind::Retransmit));
        if self.cc.probe_mode() {
            // pFabric's probe mode: one byte at snd_una, nothing else until an ACK of new data
            self.send_from_nxt(1, now, out);
            return;
        }
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
        self.pace_wake = None;
        if self.cc.probe_mode() {
            return; // pFabric's probe mode: only the timer sends (a probe)
        }
        if self.sack && self.in_recovery {
            self.send_in_recovery(now, out);
            return;
        }
        let lt = if self.limited_transmit && !self.in_recovery && self.dupacks > 0 && self.dupacks < self.dupthresh {
            self.dupacks as u64 * self.mss
        } else {
            0
        };
        let wnd = self.win.cwnd.saturating_add(lt).min(self.peer_rwnd);
        let right = self.snd_una.saturating_add(wnd);
        let mut burst = if self.in_recovery && self.recovery_max_burst > 0 { self.recovery_max_burst } else { u32::MAX };
        loop {
            if burst == 0 {
                break;
            }
            burst -= 1;
            // SACK after a timeout: skip what the receiver SACKed, stop before the next range
            let mut run = u64::MAX;
            if self.sack && self.after_rto && self.snd_nxt < self.snd_max {
                let (s, next) = self.sb.unsacked_run(self.snd_nxt);
                self.snd_nxt = s.min(self.snd_max);
                run = next.map_or(u64::MAX, |n| n - self.snd_nxt);
            }
            if self.snd_nxt < self.data_end {
                let mut want = self.mss.min(self.data_end - self.snd_nxt);
                let mut space = right.saturating_sub(self.snd_nxt);
                let mut idle = self.snd_nxt == self.snd_una;
                if self.sack && self.after_rto {
                    // only unSACKed octets count against cwnd (rwnd still binds the right edge)
                    let una = self.snd_una.max(self.data_start);
                    let pipe = self.sb.unsacked_between(una, self.snd_nxt);
                    let cw = self.win.cwnd.saturating_add(lt).saturating_sub(pipe);
                    let rw = self.snd_una.saturating_add(self.peer_rwnd).saturating_sub(self.snd_nxt);
                    want = want.min(run);
                    space = cw.min(rw);
                    idle = pipe == 0;
                }
                let len = if space >= want {
                    want
                } else if idle && space > 0 {
                    space // a window smaller than a segment, nothing outstanding: fill it
                } else {
                    if idle && space == 0 && self.timer.is_none() {
                        self.timer = Some((self.timer_due(now), TimerKind::Persist));
                    }
                    break;
                };
                if let Some(t) = self.pacer.hold_until(now, self.rtt.srtt()) {
                    self.pace_wake = Some(t); // the pacer releases it (next_deadline)
                    break;
                }
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
        if self.headerless_first && len > 0 && seq == self.data_start {
            p.size = len as u32; // ns-2 sends segment 0 without its header
        }
        if fin {
            p.flags |= flags::FIN;
        }
        if self.ecn_ok && len > 0 {
            // RFC 3168 6.1.2 / 6.1.5: ECT(0) on new data (DCTCP: on retransmissions too), CWR
            // on the first new data segment after a reduction
            let new_data = seq >= self.snd_max;
            if new_data || self.ect_retransmits {
                p.ecn = Ecn::Ect0;
            }
            if new_data && self.cwr_pending {
                p.flags |= flags::CWR;
                self.cwr_pending = false;
            }
        }
        let end = seq + len + fin as u64;
        if seq < self.snd_max {
            self.stats.retransmits += 1;
            self.rtx_high = self.rtx_high.max(end);
            if self.sack && self.timed.is_some_and(|(t_end, _)| seq < t_end && t_end <= end) {
                self.timed = None; // Karn: SACK recovery may resend the timed segment
            }
        } else if !self.timestamps && self.timed.is_none() && len > 0 {
            self.timed = Some((end, now)); // time new data only (Karn)
        }
        self.stats.pkts_sent += 1;
        self.stats.bytes_sent += len;
        if len > 0 {
            self.stats.data_segments_sent += 1;
            self.pacer.on_send(now, len, self.win.cwnd, self.win.ssthresh, self.rtt.srtt());
        }
        self.snd_max = self.snd_max.max(end);
        if fin && self.state == SenderState::Established {
            self.state = SenderState::FinWait1;
        }
        // RFC 6298 5.1: start the timer if it is not running (a persist timer gives way)
        if !matches!(self.timer, Some((_, TimerKind::Retransmit | TimerKind::Reorder))) {
            self.timer = Some((self.timer_due(now), TimerKind::Retransmit));
        }
        out.push(p);
    }

    /// A segment of ours with the header fields filled in: a pure ACK as it stands.
    fn header_packet(&self, now: SimTime) -> Packet {
        Packet {
            size: self.header,
            payload: 0,
            seq: self.snd_nxt,
            ack: self.rcv_ack,
            flags: flags::ACK,
            rwnd: encode_window(self.rcv_buf, self.my_shift),
            priority: if self.prio_remaining { self.data_end.saturating_sub(self.snd_una.max(self.data_start)) } else { 0 },
            created: now,
            ts_val: now,
            ts_ecr: self.ts_recent,
            ..self.ids.forward()
        }
    }

    /// Payload bytes in the sequence range `[a, b)`.
    fn payload_between(&self, a: u64, b: u64) -> u64 {
        b.min(self.data_end).saturating_sub(a.max(self.data_start))
    }
}

#[cfg(test)]
mod tests;
