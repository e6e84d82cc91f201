//! TCP endpoints: a sender and a receiver state machine, congestion controls behind one trait.
//!
//! A flow is one [`TcpSender`] (the active opener, which sends `size` bytes or forever) and one
//! [`TcpReceiver`] (the passive side, which acknowledges). Both are driven by the host:
//! `on_packet` for every arriving segment, `on_timer` when `next_deadline` has passed; both push
//! the segments they emit into `out`. The model aims at reproducing ns-2's one-way
//! `Agent/TCP/Newreno` + `Agent/TCPSink` results with byte-exact RFC arithmetic; the full model,
//! every parameter and every departure from ns-2 and Linux is written down in `docs/tcp.md`.
//!
//! Rules:
//! - **Time is passed in.** Every method takes `now`; nothing reads a clock.
//! - **Timers are lazy.** An endpoint keeps one deadline per timer and reports the earliest in
//!   `next_deadline()`. `on_timer(now)` does nothing unless that deadline has passed, so the host
//!   may call it early, late or spuriously; moving a deadline never needs a cancellation.
//! - **Sequence numbers are absolute `u64` byte offsets** (no wrap-around). The sender's initial
//!   sequence number is 0; with the handshake the SYN takes sequence number 0 and data starts
//!   at 1, without it data starts at 0. A FIN takes one sequence number after the last byte.
//!   ACKs are cumulative; with `sack` they also carry up to 3 SACK blocks (RFC 2018) and the
//!   sender recovers losses by RFC 6675.
//! - **Sizes on the wire:** a data segment is `payload + header_bytes`; a pure ACK, a SYN, a
//!   SYN-ACK and a pure FIN are `header_bytes`. `Packet::uid` is left 0 (the engine numbers
//!   packets); `created` and `ts_val` are the emission time; `ts_ecr` echoes the peer.
//! - **Windows.** The receive window travels in the 16-bit field scaled by the window-scale shift
//!   of its sender (RFC 7323), decoded by [`decode_window`]. The sender takes the peer's window
//!   from *every* in-order ACK, because a switch (FairQ) may rewrite it, and never has more than
//!   `min(cwnd, rwnd)` payload bytes outstanding when it sends new data (the only exceptions:
//!   limited transmit, off by default, and a one-byte probe into a zero window).
//! - **No allocation per packet in steady state:** segments are pushed into the caller's `out`;
//!   the receiver's out-of-order set reuses its storage.
//! - **Errors, not panics:** [`TcpConfig::validate`] rejects impossible parameters with the key
//!   name (relative to the `tcp` table). The constructors assume a validated configuration.
//!
//! Modules: [`sender`] (the sender state machine and loss recovery), [`receiver`] (cumulative
//! ACKs, out-of-order buffer, delayed ACKs, SACK blocks, ECN echo), [`rtt`] (RFC 6298 estimator),
//! [`congestion`] (the [`congestion::CongestionControl`] trait, Reno, NewReno, CUBIC, DCTCP, pFabric),
//! [`profile`] (named settings such as pFabric's Table II), [`sack`]
//! (the sender's RFC 6675 scoreboard), [`pacing`] (release times at `ratio * cwnd / srtt`),
//! [`mptcp`] (the host side of Multipath TCP: data level, scheduler, coupled increase; its
//! `tcp.mptcp` table makes a flow group's flows MPTCP connections in the simulator).

pub mod congestion;
pub mod mptcp;
pub mod pacing;
pub mod profile;
pub mod receiver;
pub mod rtt;
pub mod sack;
pub mod sender;
pub mod timer_wheel;

pub use congestion::{RecoveryCwnd, RecoveryExit, SsthreshFrom, WindowRules};
pub use receiver::{ReceiverState, ReceiverStats, TcpReceiver};
pub use sender::{SenderState, TcpSender};

use crate::packet::{Addr, FlowId, Packet, Proto};
use crate::config::ConfigError;
use crate::time::SimDuration;
use serde::{Deserialize, Serialize};

/// Congestion control algorithm of a sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    /// RFC 5681 Reno: fast recovery ends on the first new ACK.
    Reno,
    /// RFC 6582 NewReno: partial ACKs retransmit the next hole and stay in fast recovery.
    #[default]
    Newreno,
    /// RFC 9438 CUBIC (with NewReno's fast recovery): `congestion/cubic.rs`.
    Cubic,
    /// pFabric's minimal rate control (no fast retransmit, fixed RTO, probe mode):
    /// `congestion/pfabric.rs`.
    Pfabric,
    /// RFC 8257 DCTCP (implies ECN; NewReno on loss): `congestion/dctcp.rs`.
    Dctcp,
}

/// What a sender writes into [`crate::packet::Packet::priority`] (`tcp.priority`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PriorityMode {
    /// 0 on every packet.
    #[default]
    None,
    /// pFabric's remaining flow size: payload bytes of the flow not yet acknowledged when the
    /// segment leaves (`u64::MAX`-ish for an endless flow); pure ACKs and SYNs carry 0.
    Remaining,
}

/// TCP parameters (the `[tcp]` table of a scenario). Units are in the key names; `docs/tcp.md`
/// describes each key with its default.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Congestion control of every sender (`"reno"`, `"newreno"` or `"cubic"`).
    pub cc: CcKind,
    /// Maximum segment size: payload bytes of a full segment.
    pub mss_bytes: u32,
    /// TCP/IP header bytes added to every segment on the wire.
    pub header_bytes: u32,
    /// Initial congestion window, in full segments.
    pub init_cwnd_pkts: u32,
    /// Receive buffer of the receiver; it advertises all of it (the application reads at once).
    pub rcv_buf_bytes: u64,
    /// Offer the RFC 7323 window-scale option (both sides must offer it to use it).
    pub window_scaling: bool,
    /// Receiver delays ACKs: one ACK per two full segments or after `delack_timeout_ms`.
    pub delayed_ack: bool,
    /// Delayed-ACK timeout, milliseconds.
    pub delack_timeout_ms: f64,
    /// With `delayed_ack`: the first this many in-order data segments of a connection are
    /// acknowledged at once (Linux's quick-ACK mode at a connection's start: the receive window
    /// over two segments, at most 16); 0 delays from the first (ns-2's DelAck sink).
    pub quickack_segments: u32,
    /// Lower bound of the retransmission timeout, milliseconds.
    pub min_rto_ms: f64,
    /// Upper bound of the retransmission timeout (backed off or not), seconds.
    pub max_rto_s: f64,
    /// Retransmission timeout before the first RTT sample, seconds.
    pub initial_rto_s: f64,
    /// Duplicate ACKs that trigger a fast retransmit.
    pub dupack_threshold: u32,
    /// A reordering window in the style of RACK (RFC 8985), microseconds: once the duplicate
    /// ACKs reach `dupack_threshold`, the sender waits this long before it deems the segment
    /// lost and retransmits; an ACK that fills the hole meanwhile shows it was reordered, not
    /// lost. 0 (the default) retransmits at once.
    pub reorder_window_us: f64,
    /// Open with SYN / SYN-ACK / ACK; without it data flows from `start()`.
    pub handshake: bool,
    /// Largest RTO backoff multiplier: the RTO doubles per timeout until `max_backoff` times the
    /// base (64 as in ns-2), and is capped by `max_rto_s` in any case.
    pub max_backoff: u32,
    /// RTT samples from the timestamp echo of every ACK of new data (RFC 7323) instead of one
    /// timed segment per RTT with Karn's rule (ns-2's default). Segments always carry
    /// `ts_val` / `ts_ecr`; this only chooses the sampling.
    pub timestamps: bool,
    /// Karn's rule as Linux applies it (without `timestamps`): no RTT sample, and so no end of
    /// the RTO backoff, from an ACK that acknowledges any retransmitted data, even when it also
    /// acknowledges the timed segment (Linux `tcp_clean_rtx_queue`: no sample with
    /// `FLAG_RETRANS_DATA_ACKED`). Off (the default, ns-2's rule): the ACK of the timed segment
    /// gives a sample whatever else it acknowledges.
    pub karn_strict: bool,
    /// RFC 3042 limited transmit: the first `dupack_threshold - 1` duplicate ACKs each release
    /// one new segment beyond cwnd (within the receive window). ns-2's `singledup_ 1`.
    pub limited_transmit: bool,
    /// Clock granularity G of RFC 6298 (RTO = SRTT + max(G, 4 RTTVAR)), microseconds.
    pub clock_granularity_us: f64,
    /// When the retransmission (and persist) timer fires: 0, exactly when due (ns-2, and the
    /// default); a kernel tick rate such as 250 or 1000, as Linux's timer wheel at that `HZ`
    /// fires it, rounded up to the wheel level's granularity (`timer_wheel.rs`), so that
    /// backed-off timers of different flows fire together.
    pub timer_wheel_hz: u32,
    /// What `ssthresh` halves after a loss: `"flight_size"` (RFC 5681) or `"cwnd"` (ns-2:
    /// `min(cwnd, rwnd) / 2` in whole segments, at least 2).
    pub ssthresh_from: SsthreshFrom,
    /// `cwnd` on a fast retransmit before inflation: `"ssthresh"` (RFC 5681) or
    /// `"half_window"` (ns-2: `min(cwnd, rwnd) / 2`, unrounded).
    pub recovery_cwnd: RecoveryCwnd,
    /// `cwnd` when fast recovery ends: `"ssthresh"` (RFC 6582) or `"deflated"` (ns-2's
    /// `exit_recovery_fix_ 0`: the window without inflation, opened for the exiting ACK).
    pub recovery_exit: RecoveryExit,
    /// Most new segments one ACK may release during fast recovery (0: no limit). ns-2's
    /// NewReno sends at most 2 per ACK while it counts duplicate ACKs.
    pub recovery_max_burst: u32,
    /// Without a handshake: the first data segment (and its retransmissions) goes on the wire
    /// as its payload alone, without `header_bytes` (ns-2's `Agent/TCP` adds the header to
    /// every segment but number 0).
    pub headerless_first_segment: bool,
    /// Without a handshake: an ACK of exactly the first data segment sets cwnd to the initial
    /// window instead of opening it, or to one segment if the retransmission timer expired
    /// before any ACK (ns-2's `delay_growth_` with `syn_ false`, and `bugfix_ss_`).
    pub first_ack_resets_cwnd: bool,
    /// CUBIC's `C` (RFC 9438 4.1), segments per second cubed: how fast the window returns to
    /// and probes beyond `W_max`. Only with `cc = "cubic"`.
    pub cubic_c: f64,
    /// CUBIC's multiplicative decrease `beta_cubic` (RFC 9438 4.6), in (0, 1).
    pub cubic_beta: f64,
    /// CUBIC's fast convergence (RFC 9438 4.7): a loss below the last `W_max` lowers it further.
    pub cubic_fast_convergence: bool,
    /// CUBIC's Reno-friendly region (RFC 9438 4.3): never slower than an AIMD flow with the
    /// same average window as Reno.
    pub cubic_reno_friendly: bool,
    /// Selective acknowledgements (RFC 2018) and SACK-based loss recovery (RFC 6675). Both
    /// ends read the scenario's configuration, so SACK-permitted is taken as negotiated when
    /// this is on (no option on the SYN).
    pub sack: bool,
    /// Pace data segments at `ratio * cwnd / srtt` instead of sending them back to back.
    pub pacing: bool,
    /// Pacing ratio while `cwnd < ssthresh / 2` (early slow start), a multiple of `cwnd / srtt`.
    pub pacing_ss_ratio: f64,
    /// Pacing ratio otherwise (late slow start, congestion avoidance, recovery).
    pub pacing_ca_ratio: f64,
    /// What data segments carry in `Packet::priority`: `"none"` (0) or `"remaining"` (the
    /// flow's unacknowledged payload bytes, pFabric's remaining flow size).
    pub priority: PriorityMode,
    /// Largest congestion window, full segments, applied whenever an ACK opens the window
    /// (ns-2's `maxcwnd_`); 0: no cap.
    pub max_cwnd_pkts: u32,
    /// `cc = "pfabric"`: consecutive timeouts after which the sender enters probe mode (5 in
    /// the pFabric paper).
    pub pfabric_probe_after: u32,
    /// A named set of settings applied to this table before it is read: `"pfabric"` (the
    /// pFabric paper's Table II as the FQ-CoDel paper lists it). Keys set in the same table
    /// win. Applied by the scenario loader; see `profile.rs`.
    pub profile: Option<profile::TcpProfile>,
    /// Which categories of the profile apply: any of `"rtx"`, `"rx"`, `"cc"` (all three by default).
    pub profile_categories: Vec<profile::ProfileCategory>,
    /// ECN (RFC 3168): negotiated in the handshake, ECT(0) on data segments, ECE treated as a
    /// congestion signal once per window with CWR. Always on with `cc = "dctcp"`.
    pub ecn: bool,
    /// DCTCP's estimation gain g (RFC 8257 3.3), in (0, 1].
    pub dctcp_g: f64,
    /// DCTCP's initial alpha, in [0, 1] (Linux's `dctcp_alpha_on_init` = 1024/1024).
    pub dctcp_alpha_init: f64,
    /// Multipath TCP (`tcp.mptcp`: `subflows`, `coupling`; see `mptcp/mod.rs`): the
    /// simulator makes each flow of a group with `subflows > 1` an MPTCP connection
    /// (`crate::transport::mptcp`).
    pub mptcp: mptcp::MptcpConfig,
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
            quickack_segments: 0,
            min_rto_ms: 200.0,
            max_rto_s: 60.0,
            initial_rto_s: 1.0,
            dupack_threshold: 3,
            reorder_window_us: 0.0,
            handshake: true,
            max_backoff: 64,
            timestamps: false,
            karn_strict: false,
            limited_transmit: false,
            clock_granularity_us: 0.0,
            timer_wheel_hz: 0,
            ssthresh_from: SsthreshFrom::FlightSize,
            recovery_cwnd: RecoveryCwnd::Ssthresh,
            recovery_exit: RecoveryExit::Ssthresh,
            recovery_max_burst: 0,
            headerless_first_segment: false,
            first_ack_resets_cwnd: false,
            cubic_c: 0.4,
            cubic_beta: 0.7,
            cubic_fast_convergence: true,
            cubic_reno_friendly: true,
            sack: false,
            pacing: false,
            pacing_ss_ratio: 1.0,
            pacing_ca_ratio: 1.0,
            priority: PriorityMode::None,
            max_cwnd_pkts: 0,
            pfabric_probe_after: 5,
            profile: None,
            profile_categories: profile::ProfileCategory::ALL.to_vec(),
            ecn: false,
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: 1.0,
            mptcp: mptcp::MptcpConfig::default(),
        }
    }
}

/// Largest window-scale shift (RFC 7323 section 2.3).
pub const MAX_WSCALE: u8 = 14;
/// Largest value of the 16-bit window field.
pub const MAX_WINDOW_FIELD: u64 = 0xFFFF;
/// Largest window the scaled field can express: `65535 << 14` bytes (just under 1 GiB).
pub const MAX_SCALED_WINDOW: u64 = MAX_WINDOW_FIELD << MAX_WSCALE;
/// Upper bound accepted for any duration key (about 11.6 days), so durations fit picoseconds.
const MAX_DURATION_S: f64 = 1.0e6;
/// Range accepted for the pacing ratios (`pacing_ss_ratio`, `pacing_ca_ratio`).
pub const PACING_RATIO_RANGE: (f64, f64) = (0.01, 100.0);
/// Highest `timer_wheel_hz` accepted (Linux offers 100 to 1000).
pub const MAX_TIMER_WHEEL_HZ: u32 = 10_000;

/// The smallest window-scale shift with which `buf` bytes fit the 16-bit field (at most 14).
pub fn wscale_for(buf: u64) -> u8 {
    let mut s = 0u8;
    while s < MAX_WSCALE && (buf >> s) > MAX_WINDOW_FIELD {
        s += 1;
    }
    s
}

/// The window field that advertises `bytes` under `shift` (rounded down, saturated at 65535).
#[inline]
pub fn encode_window(bytes: u64, shift: u8) -> u16 {
    (bytes >> shift).min(MAX_WINDOW_FIELD) as u16
}

/// The window, in bytes, that a field value stands for under `shift`.
#[inline]
pub fn decode_window(field: u16, shift: u8) -> u64 {
    (field as u64) << shift
}

impl TcpConfig {
    /// Checks every parameter; the error key is relative to the `tcp` table.
    pub fn validate(&self) -> Result<(), ConfigError> {
        /// A duration key: finite, non-negative (positive if `positive`), at most 10^6 s.
        fn duration(key: &str, v: f64, units_per_s: f64, positive: bool) -> Result<(), ConfigError> {
            if !v.is_finite() {
                return Err(ConfigError::new(key, format!("must be a finite number, got {v}")));
            }
            if v < 0.0 || (positive && v == 0.0) {
                let bound = if positive { "positive" } else { "zero or positive" };
                return Err(ConfigError::new(key, format!("must be {bound}, got {v}")));
            }
            if v > MAX_DURATION_S * units_per_s {
                return Err(ConfigError::new(key, format!("{v} is longer than {MAX_DURATION_S} s")));
            }
            Ok(())
        }
        if self.mss_bytes == 0 {
            return Err(ConfigError::new("mss_bytes", "must be at least 1 byte"));
        }
        if self.header_bytes == 0 {
            return Err(ConfigError::new("header_bytes", "must be at least 1 byte (pure ACKs are header-only)"));
        }
        if self.mss_bytes.checked_add(self.header_bytes).is_none() {
            return Err(ConfigError::new("mss_bytes", "mss_bytes + header_bytes overflows 32 bits"));
        }
        if self.init_cwnd_pkts == 0 {
            return Err(ConfigError::new("init_cwnd_pkts", "must be at least 1 segment"));
        }
        if self.rcv_buf_bytes == 0 {
            return Err(ConfigError::new("rcv_buf_bytes", "must be at least 1 byte"));
        }
        if self.window_scaling && self.rcv_buf_bytes > MAX_SCALED_WINDOW {
            return Err(ConfigError::new(
                "rcv_buf_bytes",
                format!("{} exceeds the largest scaled window {MAX_SCALED_WINDOW} (RFC 7323)", self.rcv_buf_bytes),
            ));
        }
        if self.dupack_threshold == 0 {
            return Err(ConfigError::new("dupack_threshold", "must be at least 1 duplicate ACK"));
        }
        if self.max_backoff == 0 {
            return Err(ConfigError::new("max_backoff", "must be at least 1 (1 disables backoff)"));
        }
        duration("delack_timeout_ms", self.delack_timeout_ms, 1e3, false)?;
        duration("reorder_window_us", self.reorder_window_us, 1e6, false)?;
        duration("min_rto_ms", self.min_rto_ms, 1e3, false)?;
        duration("max_rto_s", self.max_rto_s, 1.0, true)?;
        duration("initial_rto_s", self.initial_rto_s, 1.0, true)?;
        duration("clock_granularity_us", self.clock_granularity_us, 1e6, false)?;
        if self.timer_wheel_hz > MAX_TIMER_WHEEL_HZ {
            return Err(ConfigError::new(
                "timer_wheel_hz",
                format!("must be 0 (exact timers) or a tick rate up to {MAX_TIMER_WHEEL_HZ} Hz, got {}", self.timer_wheel_hz),
            ));
        }
        for (key, on) in [
            ("headerless_first_segment", self.headerless_first_segment),
            ("first_ack_resets_cwnd", self.first_ack_resets_cwnd),
        ] {
            if on && self.handshake {
                return Err(ConfigError::new(
                    key,
                    "applies only with handshake = false (ns-2's one-way TCP without a SYN)",
                ));
            }
        }
        if !(self.cubic_c.is_finite() && self.cubic_c > 0.0) {
            return Err(ConfigError::new("cubic_c", format!("must be a positive number (segments/s^3), got {}", self.cubic_c)));
        }
        if !(self.cubic_beta > 0.0 && self.cubic_beta < 1.0) {
            return Err(ConfigError::new("cubic_beta", format!("must be between 0 and 1 (exclusive), got {}", self.cubic_beta)));
        }
        for (key, v) in [("pacing_ss_ratio", self.pacing_ss_ratio), ("pacing_ca_ratio", self.pacing_ca_ratio)] {
            let (lo, hi) = PACING_RATIO_RANGE;
            if !v.is_finite() || !(lo..=hi).contains(&v) {
                return Err(ConfigError::new(key, format!("must be a number from {lo} to {hi} (a multiple of cwnd / srtt), got {v}")));
            }
        }
        if self.pfabric_probe_after == 0 {
            return Err(ConfigError::new("pfabric_probe_after", "must be at least 1 timeout"));
        }
        if self.cc == CcKind::Pfabric && self.min_rto_ms <= 0.0 {
            return Err(ConfigError::new("min_rto_ms", "must be positive with cc = \"pfabric\" (its fixed RTO)"));
        }
        if !(self.dctcp_g > 0.0 && self.dctcp_g <= 1.0) {
            return Err(ConfigError::new("dctcp_g", format!("must be in (0, 1], got {}", self.dctcp_g)));
        }
        if !(0.0..=1.0).contains(&self.dctcp_alpha_init) {
            return Err(ConfigError::new("dctcp_alpha_init", format!("must be in [0, 1], got {}", self.dctcp_alpha_init)));
        }
        self.mptcp.validate(self.cc).map_err(|e| e.within("mptcp"))?;
        if self.max_rto_s * 1000.0 < self.min_rto_ms {
            return Err(ConfigError::new(
                "max_rto_s",
                format!("{} s is below min_rto_ms = {} ms", self.max_rto_s, self.min_rto_ms),
            ));
        }
        Ok(())
    }

    /// The endpoints use ECN: `ecn`, or a congestion control that needs it (DCTCP).
    pub fn ecn_enabled(&self) -> bool {
        self.ecn || self.cc == CcKind::Dctcp
    }
    /// The window rules selected by `ssthresh_from`, `recovery_cwnd`, `recovery_exit`.
    pub fn window_rules(&self) -> WindowRules {
        WindowRules { ssthresh_from: self.ssthresh_from, recovery_cwnd: self.recovery_cwnd, recovery_exit: self.recovery_exit }
    }
    /// `min_rto_ms` as a duration.
    pub fn min_rto(&self) -> SimDuration {
        SimDuration::from_secs_f64(self.min_rto_ms / 1e3)
    }
    /// `max_rto_s` as a duration.
    pub fn max_rto(&self) -> SimDuration {
        SimDuration::from_secs_f64(self.max_rto_s)
    }
    /// `initial_rto_s` as a duration.
    pub fn initial_rto(&self) -> SimDuration {
        SimDuration::from_secs_f64(self.initial_rto_s)
    }
    /// `delack_timeout_ms` as a duration.
    pub fn delack_timeout(&self) -> SimDuration {
        SimDuration::from_secs_f64(self.delack_timeout_ms / 1e3)
    }
    /// `clock_granularity_us` as a duration.
    pub fn clock_granularity(&self) -> SimDuration {
        SimDuration::from_secs_f64(self.clock_granularity_us / 1e6)
    }
    /// The shift a receiver with this configuration applies to its window when scaling is in
    /// use (0 without `window_scaling`).
    pub fn rcv_wscale(&self) -> u8 {
        if self.window_scaling {
            wscale_for(self.rcv_buf_bytes)
        } else {
            0
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

impl FlowIds {
    /// A TCP packet of this flow from its sender to its receiver, every other field default.
    #[inline]
    pub fn forward(&self) -> Packet {
        Packet { flow: self.flow, src: self.src, dst: self.dst, sport: self.sport, dport: self.dport, proto: Proto::Tcp, ..Packet::default() }
    }
    /// A TCP packet of this flow from its receiver back to its sender (ACKs, credits).
    #[inline]
    pub fn reverse(&self) -> Packet {
        Packet { flow: self.flow, src: self.dst, dst: self.src, sport: self.dport, dport: self.sport, proto: Proto::Tcp, ..Packet::default() }
    }
}

/// Counters a sender keeps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Segments emitted: SYNs, pure ACKs, data and FIN segments, first copies and retransmissions.
    pub pkts_sent: u64,
    /// Payload bytes emitted, retransmissions included.
    pub bytes_sent: u64,
    /// Segments emitted with payload, first copies and retransmissions: the packets a flow
    /// sends (the HCF paper's measures count these).
    pub data_segments_sent: u64,
    /// Segments emitted again (SYN, data or FIN) for any reason: timeout, fast retransmit,
    /// partial ACK, go-back-N after a timeout.
    pub retransmits: u64,
    /// Fast-retransmit events (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission-timer expirations (SYN timeouts included).
    pub timeouts: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Window reductions in answer to ECN-Echo (at most one per window of data).
    pub ecn_reductions: u64,
}

impl SenderStats {
    /// The counters of a sender whose every packet is a data packet (RoCE's, NDP's: no SYN, no
    /// pure ACK): `data_pkts` are both its packets and its segments.
    pub fn of_data_sender(data_pkts: u64, bytes_sent: u64, retransmits: u64, timeouts: u64, bytes_acked: u64) -> SenderStats {
        SenderStats { pkts_sent: data_pkts, bytes_sent, data_segments_sent: data_pkts, retransmits, timeouts, bytes_acked, ..SenderStats::default() }
    }
    /// Adds `other`'s counts to these (the connections of one flow, summed).
    pub fn add(&mut self, other: &SenderStats) {
        self.pkts_sent += other.pkts_sent;
        self.bytes_sent += other.bytes_sent;
        self.data_segments_sent += other.data_segments_sent;
        self.retransmits += other.retransmits;
        self.fast_retransmits += other.fast_retransmits;
        self.timeouts += other.timeouts;
        self.bytes_acked += other.bytes_acked;
        self.ecn_reductions += other.ecn_reductions;
    }
}

// =============================================================================================
// Test support: a two-endpoint channel driven by a sorted event list (FIFO ties).
// =============================================================================================
#[cfg(test)]
pub(crate) mod testnet {
    use super::*;
    use crate::packet::{flags, Packet};
    use crate::time::{BitsPerSec, SimTime};
    use std::collections::BTreeMap;

    /// Direction of a packet: `Fwd` from sender to receiver, `Rev` back.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Dir {
        Fwd,
        Rev,
    }

    enum Ev {
        Arrive(Dir, Packet),
        SenderTimer,
        ReceiverTimer,
    }

    /// One packet offered to the channel.
    #[derive(Clone, Debug)]
    pub struct Sent {
        pub t: SimTime,
        pub dir: Dir,
        pub pkt: Packet,
        pub dropped: bool,
    }

    pub type DropFn = Box<dyn FnMut(&Packet, Dir, SimTime) -> bool>;
    pub type RewriteFn = Box<dyn FnMut(&mut Packet, SimTime)>;

    /// The flow ids every test uses.
    pub const IDS: FlowIds = FlowIds { flow: 7, src: 1, dst: 2, sport: 1000, dport: 80 };

    /// A sender and a receiver joined by a channel with a fixed one-way delay, an optional
    /// serialization rate in the forward direction (with an optional drop-tail buffer of
    /// `queue_limit` packets, the one in transmission included), a drop predicate and an
    /// optional rewrite of ACKs (what FairQ does). After every endpoint call it checks:
    /// new data never leaves the sender beyond `min(cwnd, rwnd)`, and the receiver's
    /// `delivered_bytes` equals the contiguous prefix of payload that actually reached it.
    pub struct Net {
        pub now: SimTime,
        pub snd: TcpSender,
        pub rcv: TcpReceiver,
        pub delay: SimDuration,
        pub rate: Option<BitsPerSec>,
        pub queue_limit: Option<usize>,
        /// Packets the drop-tail buffer refused.
        pub queue_drops: u64,
        /// DCTCP marking threshold of the forward buffer: an ECT packet that finds at least this
        /// many packets there (the one in transmission included) is set to CE.
        pub mark_at: Option<usize>,
        /// Packets the forward buffer marked.
        pub queue_marks: u64,
        pub drop: DropFn,
        pub rewrite_ack: Option<RewriteFn>,
        /// Rewrites segments of the forward direction (a switch on the data path: FairQ's
        /// option rewriting of the SYN).
        pub rewrite_fwd: Option<RewriteFn>,
        pub log: Vec<Sent>,
        /// Largest `flight_bytes()` seen right after a call that sent new data.
        pub max_flight: u64,
        /// (time, RTO) after every sender timer expiry that changed the timeout count.
        pub rto_log: Vec<(SimTime, SimDuration)>,
        pub events: u64,
        /// The last event `step` ran was a sender timer (retransmission, persist or pacing).
        pub last_was_sender_timer: bool,
        evq: BTreeMap<(SimTime, u64), Ev>,
        seq: u64,
        fwd_busy: SimTime,
        /// Departure times of the packets in the forward buffer.
        fwd_queue: std::collections::VecDeque<SimTime>,
        snd_timer_at: Option<SimTime>,
        rcv_timer_at: Option<SimTime>,
        out: Vec<Packet>,
        data_start: u64,
        got: Vec<bool>,
        limited_transmit: bool,
        sack: bool,
        mss: u64,
        header: u32,
        headerless_first: bool,
    }

    impl Net {
        pub fn new(cfg: &TcpConfig, size: Option<u64>, delay: SimDuration) -> Net {
            cfg.validate().expect("test config");
            let cap = size.unwrap_or(0).min(4_000_000) as usize;
            Net {
                now: SimTime::ZERO,
                snd: TcpSender::new(cfg, IDS, size),
                rcv: TcpReceiver::new(cfg, IDS),
                delay,
                rate: None,
                queue_limit: None,
                queue_drops: 0,
                mark_at: None,
                queue_marks: 0,
                drop: Box::new(|_, _, _| false),
                rewrite_ack: None,
                rewrite_fwd: None,
                log: Vec::new(),
                max_flight: 0,
                rto_log: Vec::new(),
                events: 0,
                last_was_sender_timer: false,
                evq: BTreeMap::new(),
                seq: 0,
                fwd_busy: SimTime::ZERO,
                fwd_queue: std::collections::VecDeque::new(),
                snd_timer_at: None,
                rcv_timer_at: None,
                out: Vec::with_capacity(64),
                data_start: cfg.handshake as u64,
                got: vec![false; cap],
                limited_transmit: cfg.limited_transmit,
                sack: cfg.sack,
                mss: cfg.mss_bytes as u64,
                header: cfg.header_bytes,
                headerless_first: cfg.headerless_first_segment && !cfg.handshake,
            }
        }

        fn push(&mut self, t: SimTime, ev: Ev) {
            self.evq.insert((t, self.seq), ev);
            self.seq += 1;
        }

        fn emit(&mut self, dir: Dir) {
            let pkts = std::mem::take(&mut self.out);
            for mut p in pkts.iter().cloned() {
                assert_eq!(p.uid, 0);
                assert_eq!(p.created, self.now);
                let headerless = self.headerless_first && p.payload > 0 && p.seq == self.data_start;
                let expect = if headerless { p.payload } else { p.payload + self.header };
                assert_eq!(p.size, expect, "wire size = payload + header");
                let rewrite = if dir == Dir::Rev { self.rewrite_ack.as_mut() } else { self.rewrite_fwd.as_mut() };
                if let Some(f) = rewrite {
                    f(&mut p, self.now);
                }
                let mut dropped = (self.drop)(&p, dir, self.now);
                if dir == Dir::Fwd && self.rate.is_some() && !dropped {
                    while self.fwd_queue.front().is_some_and(|&d| d <= self.now) {
                        self.fwd_queue.pop_front();
                    }
                    if self.queue_limit.is_some_and(|l| self.fwd_queue.len() >= l) {
                        dropped = true;
                        self.queue_drops += 1;
                    } else if self.mark_at.is_some_and(|k| self.fwd_queue.len() >= k) && p.ecn != crate::packet::Ecn::NotEct {
                        p.ecn = crate::packet::Ecn::Ce;
                        self.queue_marks += 1;
                    }
                }
                self.log.push(Sent { t: self.now, dir, pkt: p.clone(), dropped });
                if dropped {
                    continue;
                }
                let depart = match (dir, self.rate) {
                    (Dir::Fwd, Some(r)) => {
                        let start = self.fwd_busy.max(self.now);
                        self.fwd_busy = start + r.tx_time(p.size as u64);
                        self.fwd_queue.push_back(self.fwd_busy);
                        self.fwd_busy
                    }
                    _ => self.now,
                };
                self.push(depart + self.delay, Ev::Arrive(dir, p));
            }
            let mut v = pkts;
            v.clear();
            self.out = v;
        }

        fn after_sender(&mut self, nxt_before: u64) {
            if self.snd.snd_nxt() > nxt_before && !self.limited_transmit {
                let f = self.snd.flight_bytes();
                if self.sack {
                    // SACK: what counts against cwnd is the pipe (SACKed octets leave it),
                    // and the receive window still bounds the flight
                    let (p, c, r) = (self.snd.pipe(), self.snd.cwnd_bytes(), self.snd.peer_rwnd());
                    assert!(p <= c.max(self.mss), "pipe {p} above cwnd {c} at {}", self.now);
                    assert!(f <= r.max(1), "flight {f} above rwnd {r} at {}", self.now);
                } else {
                    let w = self.snd.usable_window();
                    assert!(f <= w.max(1), "flight {f} above usable window {w} at {}", self.now);
                }
                self.max_flight = self.max_flight.max(f);
            }
            self.emit(Dir::Fwd);
            if let Some(t) = self.snd.next_deadline() {
                if self.snd_timer_at.is_none_or(|p| t < p) {
                    self.snd_timer_at = Some(t);
                    self.push(t.max(self.now), Ev::SenderTimer);
                }
            }
        }

        fn after_receiver(&mut self) {
            // every byte delivered exactly once and in order: delivered == contiguous prefix
            let mut prefix = 0usize;
            while prefix < self.got.len() && self.got[prefix] {
                prefix += 1;
            }
            let d = self.rcv.delivered_bytes();
            if !self.got.is_empty() {
                assert_eq!(d, prefix as u64, "delivered bytes vs received prefix at {}", self.now);
            }
            self.emit(Dir::Rev);
            if let Some(t) = self.rcv.next_deadline() {
                if self.rcv_timer_at.is_none_or(|p| t < p) {
                    self.rcv_timer_at = Some(t);
                    self.push(t.max(self.now), Ev::ReceiverTimer);
                }
            }
        }

        pub fn start(&mut self) {
            let nxt = self.snd.snd_nxt();
            self.snd.start(self.now, &mut self.out);
            self.after_sender(nxt);
        }

        /// Runs one event; false when none is left.
        pub fn step(&mut self) -> bool {
            let Some(((t, _), ev)) = self.evq.pop_first() else { return false };
            assert!(t >= self.now, "time went backwards");
            self.now = t;
            self.events += 1;
            self.last_was_sender_timer = matches!(ev, Ev::SenderTimer);
            match ev {
                Ev::Arrive(Dir::Fwd, p) => {
                    if p.payload > 0 {
                        let lo = (p.seq - self.data_start) as usize;
                        let hi = (lo + p.payload as usize).min(self.got.len());
                        for b in &mut self.got[lo.min(hi)..hi] {
                            *b = true;
                        }
                    }
                    self.rcv.on_packet(&p, t, &mut self.out);
                    self.after_receiver();
                }
                Ev::Arrive(Dir::Rev, p) => {
                    let nxt = self.snd.snd_nxt();
                    self.snd.on_packet(&p, t, &mut self.out);
                    self.after_sender(nxt);
                }
                Ev::SenderTimer => {
                    if self.snd_timer_at == Some(t) {
                        self.snd_timer_at = None;
                    }
                    let nxt = self.snd.snd_nxt();
                    let to = self.snd.stats().timeouts;
                    self.snd.on_timer(t, &mut self.out);
                    if self.snd.stats().timeouts > to {
                        self.rto_log.push((t, self.snd.rto()));
                    }
                    self.after_sender(nxt);
                }
                Ev::ReceiverTimer => {
                    if self.rcv_timer_at == Some(t) {
                        self.rcv_timer_at = None;
                    }
                    self.rcv.on_timer(t, &mut self.out);
                    self.after_receiver();
                }
            }
            true
        }

        /// Runs until the sender is done, nothing is left to do, `until` passes or `max_events`
        /// events have run.
        pub fn run(&mut self, until: SimTime, max_events: u64) {
            while !self.snd.is_done() && self.events < max_events {
                match self.evq.first_key_value() {
                    Some(((t, _), _)) if *t <= until => {
                        self.step();
                    }
                    _ => break,
                }
            }
        }

        /// Data segments (payload > 0) the sender offered, in order.
        pub fn data_sent(&self) -> impl Iterator<Item = &Sent> {
            self.log.iter().filter(|s| s.dir == Dir::Fwd && s.pkt.payload > 0)
        }
        /// Segments with flag `f` offered in direction `dir`.
        pub fn count_flag(&self, dir: Dir, f: u8) -> usize {
            self.log.iter().filter(|s| s.dir == dir && s.pkt.has(f)).count()
        }
        /// Pure ACKs from the receiver.
        pub fn acks(&self) -> impl Iterator<Item = &Sent> {
            self.log.iter().filter(|s| s.dir == Dir::Rev && s.pkt.has(flags::ACK) && !s.pkt.has(flags::SYN))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- window-scale arithmetic ---------------------------------------------------------
    #[test]
    fn one_megabyte_needs_shift_five_and_is_exact() {
        let buf = 1 << 20;
        assert_eq!(wscale_for(buf), 5);
        assert_eq!(encode_window(buf, 5), 32768);
        assert_eq!(decode_window(32768, 5), 1_048_576);
    }
    #[test]
    fn shift_is_the_smallest_that_fits() {
        assert_eq!(wscale_for(65535), 0);
        assert_eq!(wscale_for(65536), 1);
        assert_eq!(wscale_for(131_071), 1); // 131071 >> 1 = 65535
        assert_eq!(wscale_for(131_072), 2);
        assert_eq!(wscale_for(MAX_SCALED_WINDOW), 14);
        assert_eq!(wscale_for(u64::MAX), 14);
        // without scaling the field saturates at 65535
        assert_eq!(encode_window(1 << 20, 0), 65535);
        // a window that is not a multiple of 2^shift is rounded down
        assert_eq!(decode_window(encode_window(100_001, 1), 1), 100_000);
    }

    // --- validation ----------------------------------------------------------------------
    fn rejects(f: impl FnOnce(&mut TcpConfig), key: &str) {
        let mut c = TcpConfig::default();
        f(&mut c);
        let e = c.validate().expect_err(key);
        assert_eq!(e.key, key, "{e}");
    }
    #[test]
    fn defaults_are_valid() {
        TcpConfig::default().validate().unwrap();
    }
    #[test]
    fn validate_names_the_key() {
        rejects(|c| c.mss_bytes = 0, "mss_bytes");
        rejects(|c| c.header_bytes = 0, "header_bytes");
        rejects(|c| c.mss_bytes = u32::MAX, "mss_bytes");
        rejects(|c| c.init_cwnd_pkts = 0, "init_cwnd_pkts");
        rejects(|c| c.rcv_buf_bytes = 0, "rcv_buf_bytes");
        rejects(|c| c.rcv_buf_bytes = MAX_SCALED_WINDOW + 1, "rcv_buf_bytes");
        rejects(|c| c.dupack_threshold = 0, "dupack_threshold");
        rejects(|c| c.max_backoff = 0, "max_backoff");
        rejects(|c| c.min_rto_ms = -1.0, "min_rto_ms");
        rejects(|c| c.min_rto_ms = f64::NAN, "min_rto_ms");
        rejects(|c| c.max_rto_s = 0.0, "max_rto_s");
        rejects(|c| c.max_rto_s = f64::INFINITY, "max_rto_s");
        rejects(|c| (c.min_rto_ms, c.max_rto_s) = (2000.0, 1.0), "max_rto_s");
        rejects(|c| c.initial_rto_s = 0.0, "initial_rto_s");
        rejects(|c| c.initial_rto_s = f64::NEG_INFINITY, "initial_rto_s");
        rejects(|c| c.delack_timeout_ms = -0.5, "delack_timeout_ms");
        rejects(|c| c.delack_timeout_ms = f64::NAN, "delack_timeout_ms");
        rejects(|c| c.clock_granularity_us = -1.0, "clock_granularity_us");
        rejects(|c| c.timer_wheel_hz = MAX_TIMER_WHEEL_HZ + 1, "timer_wheel_hz");
        rejects(|c| c.max_rto_s = 1e300, "max_rto_s");
        rejects(|c| c.headerless_first_segment = true, "headerless_first_segment");
        rejects(|c| c.first_ack_resets_cwnd = true, "first_ack_resets_cwnd");
        rejects(|c| c.cubic_c = 0.0, "cubic_c");
        rejects(|c| c.cubic_c = -0.4, "cubic_c");
        rejects(|c| c.cubic_c = f64::INFINITY, "cubic_c");
        rejects(|c| c.cubic_c = f64::NAN, "cubic_c");
        rejects(|c| c.cubic_beta = 0.0, "cubic_beta");
        rejects(|c| c.cubic_beta = 1.0, "cubic_beta");
        rejects(|c| c.cubic_beta = -0.7, "cubic_beta");
        rejects(|c| c.cubic_beta = f64::NAN, "cubic_beta");
        rejects(|c| c.pfabric_probe_after = 0, "pfabric_probe_after");
        rejects(|c| (c.cc, c.min_rto_ms) = (CcKind::Pfabric, 0.0), "min_rto_ms");
        TcpConfig { handshake: false, headerless_first_segment: true, first_ack_resets_cwnd: true, ..Default::default() }
            .validate()
            .unwrap();
        TcpConfig { sack: true, ..Default::default() }.validate().unwrap();
        for bad in [0.0, -1.0, 0.001, 101.0, f64::NAN, f64::INFINITY] {
            rejects(|c| c.pacing_ss_ratio = bad, "pacing_ss_ratio");
            rejects(|c| c.pacing_ca_ratio = bad, "pacing_ca_ratio");
        }
        TcpConfig { pacing: true, pacing_ss_ratio: 2.0, pacing_ca_ratio: 1.2, ..Default::default() }.validate().unwrap();
        for bad in [0.0, -0.1, 1.5, f64::NAN] {
            rejects(|c| c.dctcp_g = bad, "dctcp_g");
        }
        for bad in [-0.1, 1.01, f64::NAN] {
            rejects(|c| c.dctcp_alpha_init = bad, "dctcp_alpha_init");
        }
        TcpConfig { dctcp_g: 1.0, dctcp_alpha_init: 0.0, ..Default::default() }.validate().unwrap();
        rejects(|c| c.mptcp.subflows = 0, "mptcp.subflows");
        rejects(|c| (c.cc, c.mptcp.subflows) = (CcKind::Cubic, 2), "mptcp.coupling");
    }
    #[test]
    fn unscaled_large_buffers_are_allowed_and_capped() {
        let c = TcpConfig { window_scaling: false, rcv_buf_bytes: 1 << 30, ..Default::default() };
        c.validate().unwrap();
        assert_eq!(c.rcv_wscale(), 0);
    }
    #[test]
    fn new_keys_have_documented_defaults() {
        let c = TcpConfig::default();
        assert_eq!(c.max_backoff, 64);
        assert!(!c.timestamps && !c.limited_transmit);
        assert_eq!(c.clock_granularity_us, 0.0);
        assert_eq!(c.rcv_wscale(), 0); // 65535 fits without scaling
        // the ns-2 rule options default to the RFC behaviour
        assert_eq!(c.window_rules(), WindowRules::default());
        assert_eq!(
            (c.ssthresh_from, c.recovery_cwnd, c.recovery_exit),
            (SsthreshFrom::FlightSize, RecoveryCwnd::Ssthresh, RecoveryExit::Ssthresh)
        );
        assert_eq!(c.recovery_max_burst, 0);
        assert!(!c.headerless_first_segment && !c.first_ack_resets_cwnd);
        // CUBIC's RFC 9438 values
        assert_eq!((c.cubic_c, c.cubic_beta, c.cubic_fast_convergence, c.cubic_reno_friendly), (0.4, 0.7, true, true));
        // SACK and pacing are off; the ratios default to 1 (ns-3: 2.0 / 1.2, Linux 200 % / 120 %)
        assert!(!c.sack && !c.pacing);
        assert_eq!((c.pacing_ss_ratio, c.pacing_ca_ratio), (1.0, 1.0));
        // ECN off; DCTCP's g = 1/16 (RFC 8257) and alpha starting at 1 (Linux)
        assert!(!c.ecn && !c.ecn_enabled());
        assert_eq!((c.dctcp_g, c.dctcp_alpha_init), (0.0625, 1.0));
        assert!(TcpConfig { cc: CcKind::Dctcp, ..Default::default() }.ecn_enabled());
    }
}
