//! Congestion control: one small trait with no-op hooks, one file per algorithm, an enum for
//! static dispatch.
//!
//! Rules:
//! - The congestion state every algorithm shares, `cwnd` and `ssthresh` in bytes, is a
//!   [`Window`] owned by the sender and lent to each hook. An algorithm keeps only what is its
//!   own (CUBIC's `W_max`, DCTCP's `alpha`, ...).
//! - Loss *detection* and *recovery* (duplicate ACK counting, `recover`, retransmissions, the
//!   timer) belong to the sender; an algorithm only decides how the window reacts. The single
//!   recovery decision it makes is [`CongestionControl::partial_ack_keeps_recovery`].
//! - Every hook has a default that does nothing, so an algorithm that overrides none of them is
//!   a fixed window of `init_cwnd_pkts` segments. Hooks are called:
//!   `on_ack` for every ACK of new data outside fast recovery; `on_enter_fast_recovery` when
//!   the duplicate-ACK threshold is reached; `on_dupack_in_recovery` for every further
//!   duplicate ACK in fast recovery; `on_partial_ack` for an ACK of new data short of `recover`
//!   that keeps the sender in recovery; `on_exit_recovery` when fast recovery ends;
//!   `on_timeout` when the retransmission timer expires. With ECN in use on the connection:
//!   `on_ecn_ack` for *every* acceptable ACK (new data or not, in recovery or not; DCTCP
//!   estimates its `alpha` there), and `on_ecn_echo` when the sender reacts to an ECN-Echo,
//!   which the sender allows at most once per window of data and never during loss recovery
//!   (RFC 3168 6.1.2; see `sender/ecn.rs`).
//!   Two queries shape the sender's loss recovery: `fast_retransmit` (may duplicate ACKs start
//!   a recovery; pFabric: no) and `probe_mode` (send only one-byte probes on the timer; pFabric
//!   after repeated timeouts).
//! - [`AnyCc`] dispatches statically over the built-in algorithms (no virtual calls on the
//!   per-packet path): Reno, NewReno, CUBIC, DCTCP, pFabric, and [`Coupled`] (NewReno with the
//!   congestion-avoidance increase set by an MPTCP connection; not a [`CcKind`]: the
//!   connection installs it on its subflows).
//! - The ECN reaction of the loss-based algorithms is their fast-retransmit decrease without
//!   the retransmission and without inflation ([`Window::ecn_reduce_by`]): RFC 3168 6.1.2 for
//!   Reno and NewReno (one half), RFC 9438 4.6 for CUBIC (`beta_cubic`). DCTCP cuts by
//!   `alpha / 2` (RFC 8257 3.3).
//! - RFC 5681's increase rules are [`Window::slow_start_or_avoid`]; its decrease
//!   (`ssthresh = max(FlightSize / 2, 2 SMSS)`) is [`Window::halve_ssthresh`].
//! - Where RFCs and ns-2 disagree on a window reaction, [`WindowRules`] (set from
//!   `TcpConfig`, RFC behaviour by default) selects the rule, and the `Window` helpers apply
//!   it, so every algorithm gets the same choice: what `ssthresh` halves
//!   ([`Window::loss_ssthresh`]), the window on entering fast recovery
//!   ([`Window::enter_recovery`]) and on leaving it ([`Window::exit_recovery`]). The part of
//!   `cwnd` that is fast-recovery inflation (one SMSS per duplicate ACK, ns-2's `dupwnd_`)
//!   is kept apart in `Window::inflation` so that the "deflated" exit and the cwnd-based
//!   `ssthresh` can leave it out.
//! - The multiplicative decrease is a [`Decrease`]: Reno's one half (exact integer halving, the
//!   plain helpers) or CUBIC's `beta_cubic` (the `_by` helpers). Both go through the same
//!   `WindowRules`, so `ssthresh_from`, `recovery_cwnd` and `recovery_exit` mean the same for
//!   every algorithm, with "half" read as "the algorithm's decrease".
//! - Hooks that need time or the path's round-trip time read them from [`AckEvent`] (`now`,
//!   `srtt`, `min_rtt`); the loss hooks take none, since the algorithms here only reset
//!   their epoch there.

pub mod coupled;
pub mod cubic;
pub mod dctcp;
pub mod newreno;
pub mod pfabric;
pub mod reno;

pub use coupled::Coupled;
pub use cubic::{Cubic, CubicParams};
pub use dctcp::{Dctcp, DctcpParams};
pub use newreno::NewReno;
pub use pfabric::PFabricCc;
pub use reno::Reno;

use super::{CcKind, TcpConfig};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// What `ssthresh` is half of after a loss (`tcp.ssthresh_from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SsthreshFrom {
    /// RFC 5681 equation (4): `max(FlightSize / 2, 2 SMSS)`, exact bytes.
    #[default]
    FlightSize,
    /// ns-2 (`slowdown()` with `precision_reduce_`): half of `min(cwnd, rwnd)`, cwnd without
    /// its fast-recovery inflation, rounded down to whole segments, at least 2 segments.
    Cwnd,
}

/// `cwnd` (before inflation) on entering fast recovery (`tcp.recovery_cwnd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryCwnd {
    /// RFC 5681 3.2 step 3: `cwnd = ssthresh + dupacks * SMSS`.
    #[default]
    Ssthresh,
    /// ns-2 (`CLOSE_CWND_HALF`): `cwnd = min(cwnd, rwnd) / 2 + dupacks * SMSS`, the half not
    /// rounded (ns-2's float `cwnd_`) and not floored at 2 segments.
    HalfWindow,
}

/// `cwnd` when fast recovery ends on a full ACK (`tcp.recovery_exit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryExit {
    /// RFC 6582 3.2 step 3 (second option) / RFC 5681 step 6: `cwnd = ssthresh`.
    #[default]
    Ssthresh,
    /// ns-2 (`exit_recovery_fix_ 0`): drop the inflation, keep the (partially deflated)
    /// window as it is, and open it for the exiting ACK as for any ACK of new data.
    Deflated,
}

/// The window rules where RFCs and ns-2 differ; `Default` is the RFC behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WindowRules {
    pub ssthresh_from: SsthreshFrom,
    pub recovery_cwnd: RecoveryCwnd,
    pub recovery_exit: RecoveryExit,
}

/// The multiplicative decrease of `ssthresh` at a loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decrease {
    /// Reno (RFC 5681): one half, by integer division (exact bytes, rounded down).
    Half,
    /// A factor in (0, 1), CUBIC's `beta_cubic` (RFC 9438 4.6): `bytes * beta` rounded down,
    /// in IEEE-754 double arithmetic (the same on every platform). A product within 10^-6 of
    /// a whole number is that number: `beta = 0.7` is slightly below 7/10 in binary, and
    /// 70 % of 10 000 bytes should be 7 000, not 6 999.
    Beta(f64),
}

impl Decrease {
    /// The decreased value of `bytes`.
    #[inline]
    pub fn of(self, bytes: u64) -> u64 {
        match self {
            Decrease::Half => bytes / 2,
            Decrease::Beta(b) => {
                let v = bytes as f64 * b;
                let r = v.round();
                (if (v - r).abs() < 1e-6 { r } else { v.floor() }) as u64
            }
        }
    }
}

/// What the sender knows at a loss (fast retransmit or timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loss {
    /// FlightSize: payload bytes outstanding (limited-transmit segments left out).
    pub flight: u64,
    /// The peer's receive window, bytes.
    pub rwnd: u64,
}

/// The congestion window state shared by every algorithm, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window, fast-recovery inflation included.
    pub cwnd: u64,
    /// Slow-start threshold (`u64::MAX` until the first loss: "arbitrarily high", RFC 5681 3.1).
    pub ssthresh: u64,
    /// Sender maximum segment size (SMSS).
    pub mss: u64,
    /// Congestion-avoidance credit, in bytes squared: the remainder of `SMSS^2 / cwnd` carried
    /// from one ACK to the next so that integer arithmetic adds exactly one SMSS per window.
    pub ca_credit: u64,
    /// The part of `cwnd` that is fast-recovery inflation (0 outside fast recovery).
    pub inflation: u64,
    /// Which loss reactions apply.
    pub rules: WindowRules,
}

impl Window {
    /// Initial window of `init_cwnd_pkts` full segments (RFC 5681 3.1 allows up to 4 KB; the
    /// count is a parameter here, as ns-2's `windowInit_`), RFC rules.
    pub fn new(mss: u64, init_cwnd_pkts: u32) -> Window {
        Window::with_rules(mss, init_cwnd_pkts, WindowRules::default())
    }

    /// Like [`Window::new`] with the given loss rules.
    pub fn with_rules(mss: u64, init_cwnd_pkts: u32, rules: WindowRules) -> Window {
        Window { cwnd: mss * init_cwnd_pkts as u64, ssthresh: u64::MAX, mss, ca_credit: 0, inflation: 0, rules }
    }

    /// `cwnd` without its fast-recovery inflation.
    #[inline]
    pub fn base_cwnd(&self) -> u64 {
        self.cwnd - self.inflation
    }

    /// `ssthresh` after a loss, by `rules.ssthresh_from`: `max(FlightSize / 2, 2 SMSS)`
    /// (RFC 5681 equation 4) or `max(floor(min(base cwnd, rwnd) / 2 / SMSS), 2) * SMSS` (ns-2).
    pub fn loss_ssthresh(&mut self, loss: &Loss) {
        self.loss_ssthresh_by(loss, Decrease::Half)
    }

    /// [`Window::loss_ssthresh`] with the decrease `dec` in place of one half:
    /// `max(dec(FlightSize), 2 SMSS)` or `max(floor(dec(min(base cwnd, rwnd)) / SMSS), 2) * SMSS`.
    pub fn loss_ssthresh_by(&mut self, loss: &Loss, dec: Decrease) {
        match self.rules.ssthresh_from {
            SsthreshFrom::FlightSize => {
                self.ssthresh = dec.of(loss.flight).max(2 * self.mss);
                self.ca_credit = 0;
            }
            SsthreshFrom::Cwnd => {
                let part = dec.of(self.base_cwnd().min(loss.rwnd));
                self.ssthresh = (part / self.mss * self.mss).max(2 * self.mss);
                self.ca_credit = 0;
            }
        }
    }

    /// Fast retransmit (RFC 5681 3.2 steps 2-3): `ssthresh` by [`Window::loss_ssthresh`],
    /// then `cwnd` = `ssthresh` or half of `min(cwnd, rwnd)` (by `rules.recovery_cwnd`),
    /// inflated by `dupacks` segments.
    pub fn enter_recovery(&mut self, loss: &Loss, dupacks: u32) {
        self.enter_recovery_by(loss, dupacks, Decrease::Half)
    }

    /// [`Window::enter_recovery`] with the decrease `dec` in place of one half (for
    /// `half_window`: `dec(min(cwnd, rwnd))` plus the inflation).
    pub fn enter_recovery_by(&mut self, loss: &Loss, dupacks: u32, dec: Decrease) {
        let window = self.base_cwnd().min(loss.rwnd);
        self.loss_ssthresh_by(loss, dec);
        let base = match self.rules.recovery_cwnd {
            RecoveryCwnd::Ssthresh => self.ssthresh,
            RecoveryCwnd::HalfWindow => dec.of(window),
        };
        self.inflation = dupacks as u64 * self.mss;
        self.cwnd = base + self.inflation;
    }

    /// One more duplicate ACK in fast recovery (RFC 5681 3.2 step 4): one SMSS of inflation.
    #[inline]
    pub fn inflate(&mut self) {
        self.cwnd += self.mss;
        self.inflation += self.mss;
    }

    /// A partial ACK of `acked` bytes (RFC 6582 3.2 step 3): `cwnd` falls by `acked` and
    /// gets one SMSS back if at least one SMSS was acknowledged. The inflation is spent first
    /// (ns-2's `partial_window_deflation_`): what it cannot cover comes off the base window,
    /// and the SMSS given back is inflation. The floor is one SMSS for the whole window (RFC);
    /// with the `Deflated` exit, whose window after recovery is the base alone, it is one
    /// SMSS for the base (ns-2 keeps `cwnd_ >= 1` apart from `dupwnd_`).
    pub fn deflate_partial(&mut self, acked: u64) {
        let add_back = if acked >= self.mss { self.mss } else { 0 };
        let base = self.base_cwnd().saturating_sub(acked.saturating_sub(self.inflation));
        self.inflation = self.inflation.saturating_sub(acked) + add_back;
        let floor = match self.rules.recovery_exit {
            RecoveryExit::Ssthresh => self.mss.saturating_sub(self.inflation),
            RecoveryExit::Deflated => self.mss,
        };
        self.cwnd = base.max(floor) + self.inflation;
    }

    /// Fast recovery ends with the ACK of `acked` new bytes, by `rules.recovery_exit`:
    /// `cwnd = ssthresh`, or the window without inflation, opened for this ACK.
    pub fn exit_recovery(&mut self, acked: u64) {
        match self.rules.recovery_exit {
            RecoveryExit::Ssthresh => self.cwnd = self.ssthresh,
            RecoveryExit::Deflated => {
                self.cwnd = self.base_cwnd().max(1);
                self.inflation = 0;
                self.slow_start_or_avoid(acked);
            }
        }
        self.inflation = 0;
    }

    /// The reaction to an ECN-Echo (RFC 3168 6.1.2): `ssthresh` as after a loss (by
    /// `rules.ssthresh_from`, with the decrease `dec`), `cwnd` as on entering fast recovery (by
    /// `rules.recovery_cwnd`) but without inflation; nothing is retransmitted.
    pub fn ecn_reduce_by(&mut self, loss: &Loss, dec: Decrease) {
        self.enter_recovery_by(loss, 0, dec);
    }

    /// Retransmission timeout (RFC 5681 3.1): `ssthresh` by [`Window::loss_ssthresh`] (the
    /// inflation dropped first, as ns-2 does), `cwnd` = one SMSS (the loss window).
    pub fn timeout(&mut self, loss: &Loss) {
        self.timeout_by(loss, Decrease::Half)
    }

    /// [`Window::timeout`] with the decrease `dec` in place of one half.
    pub fn timeout_by(&mut self, loss: &Loss, dec: Decrease) {
        self.cwnd = self.base_cwnd();
        self.inflation = 0;
        self.loss_ssthresh_by(loss, dec);
        self.cwnd = self.mss;
    }

    /// RFC 5681 3.1 for one ACK of `acked` new bytes: in slow start (`cwnd < ssthresh`)
    /// `cwnd += min(acked, SMSS)` (equation 2); in congestion avoidance `cwnd += SMSS*SMSS/cwnd`
    /// (equation 3), with the fractional part carried in `ca_credit`.
    pub fn slow_start_or_avoid(&mut self, acked: u64) {
        if acked == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(self.mss);
        } else {
            self.avoid_by_credit(self.mss * self.mss);
        }
    }

    /// Congestion avoidance by `credit` bytes squared: `cwnd += credit / cwnd`, the remainder
    /// carried in `ca_credit` (RFC 5681 equation 3 is `credit = SMSS^2`; a coupled increase
    /// of `x` bytes is `credit = x * cwnd`, `coupled.rs`).
    pub fn avoid_by_credit(&mut self, credit: u64) {
        self.ca_credit = self.ca_credit.saturating_add(credit);
        if self.ca_credit >= self.cwnd {
            let inc = self.ca_credit / self.cwnd;
            self.ca_credit -= inc * self.cwnd;
            self.cwnd += inc;
        }
    }

    /// The opposite of [`Window::avoid_by_credit`]: `cwnd -= debit / cwnd`, the carried credit
    /// spent first, the fraction left over kept as credit; never below one SMSS (where the
    /// floor binds, the credit is dropped). OLIA's negative increase (`coupled.rs`).
    pub fn shrink_by_credit(&mut self, debit: u64) {
        if debit <= self.ca_credit {
            self.ca_credit -= debit;
            return;
        }
        let deficit = debit - self.ca_credit;
        let dec = deficit.div_ceil(self.cwnd);
        if self.cwnd.saturating_sub(dec) < self.mss {
            self.cwnd = self.cwnd.min(self.mss);
            self.ca_credit = 0;
        } else {
            // borrow `dec` whole bytes of window: `dec * cwnd` bytes squared, less the deficit
            self.ca_credit = (self.cwnd - deficit % self.cwnd) % self.cwnd;
            self.cwnd -= dec;
        }
    }

    /// RFC 5681 equation (4): `ssthresh = max(FlightSize / 2, 2 SMSS)`.
    pub fn halve_ssthresh(&mut self, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.mss);
        self.ca_credit = 0;
    }
}

/// What the sender knows about one ACK when it calls a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckEvent {
    pub now: SimTime,
    /// Payload bytes newly acknowledged by this ACK (0 for a duplicate).
    pub acked_bytes: u64,
    /// Payload bytes outstanding before this ACK.
    pub flight_bytes: u64,
    /// The RTT sample this ACK produced, if any.
    pub rtt_sample: Option<SimDuration>,
    /// The sender's smoothed RTT (RFC 6298 SRTT) after this ACK; `None` before any sample.
    pub srtt: Option<SimDuration>,
    /// The smallest RTT sample of the connection so far; `None` before any sample.
    pub min_rtt: Option<SimDuration>,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// The cumulative acknowledgement number of this ACK (the sender's `snd_una` after it).
    pub ack: u64,
    /// The sender's `snd_nxt` when the ACK arrives (before it sends anything in answer).
    pub snd_nxt: u64,
}

/// A congestion control algorithm. Every hook defaults to doing nothing.
pub trait CongestionControl {
    /// The name used in configuration and traces.
    fn name(&self) -> &'static str;

    /// Does an ACK of new data that falls short of `recover` keep the sender in fast recovery
    /// (NewReno, RFC 6582) rather than end it (Reno, RFC 5681)?
    fn partial_ack_keeps_recovery(&self) -> bool {
        false
    }
    /// An ACK of new data outside fast recovery.
    fn on_ack(&mut self, _w: &mut Window, _ev: &AckEvent) {}
    /// The duplicate-ACK threshold was reached (`dupacks` of them); `loss.flight` is the
    /// payload outstanding (not counting limited-transmit segments); the sender retransmits next.
    fn on_enter_fast_recovery(&mut self, _w: &mut Window, _loss: &Loss, _dupacks: u32) {}
    /// A further duplicate ACK during fast recovery.
    fn on_dupack_in_recovery(&mut self, _w: &mut Window) {}
    /// A partial ACK (see `partial_ack_keeps_recovery`) acknowledging `acked` payload bytes.
    fn on_partial_ack(&mut self, _w: &mut Window, _acked: u64) {}
    /// Fast recovery ends on an ACK of `acked` new bytes, `flight` payload bytes still
    /// outstanding.
    fn on_exit_recovery(&mut self, _w: &mut Window, _flight: u64, _acked: u64) {}
    /// The retransmission timer expired (`loss.flight` payload bytes outstanding).
    fn on_timeout(&mut self, _w: &mut Window, _loss: &Loss) {}
    /// Any acceptable ACK of a connection that uses ECN, `ev.ece` telling whether it carried
    /// ECN-Echo; called after the ACK's other hooks (DCTCP counts acknowledged and marked bytes).
    fn on_ecn_ack(&mut self, _w: &mut Window, _ev: &AckEvent) {}
    /// The sender reacts to an ECN-Echo (at most once per window, outside loss recovery; see
    /// the module rules); `loss.flight` is the payload outstanding after the ACK. Called after
    /// [`CongestionControl::on_ecn_ack`] for the same ACK.
    fn on_ecn_echo(&mut self, _w: &mut Window, _ev: &AckEvent, _loss: &Loss) {}
    /// May duplicate ACKs (or new SACK information) start a fast retransmit and recovery?
    /// pFabric's rate control says no: it repairs losses by the timer alone.
    fn fast_retransmit(&self) -> bool {
        true
    }
    /// Is the sender in pFabric's probe mode (send only one-byte probes on the timer)?
    fn probe_mode(&self) -> bool {
        false
    }
}

/// Static dispatch over the built-in congestion controls.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyCc {
    Reno(Reno),
    NewReno(NewReno),
    Cubic(Cubic),
    PFabric(PFabricCc),
    Dctcp(Dctcp),
    /// An MPTCP subflow's coupled increase (`coupled.rs`); never built from a [`CcKind`].
    Coupled(Coupled),
}

impl AnyCc {
    /// The algorithm `kind` with default parameters (CUBIC: RFC 9438's).
    pub fn new(kind: CcKind) -> AnyCc {
        AnyCc::with_params(kind, CubicParams::default(), DctcpParams::default(), TcpConfig::default().pfabric_probe_after)
    }

    /// The algorithm `cfg.cc` with the parameters of `cfg`.
    pub fn from_config(cfg: &TcpConfig) -> AnyCc {
        AnyCc::with_params(cfg.cc, CubicParams::from_config(cfg), DctcpParams::from_config(cfg), cfg.pfabric_probe_after)
    }

    fn with_params(kind: CcKind, cubic: CubicParams, dctcp: DctcpParams, probe_after: u32) -> AnyCc {
        match kind {
            CcKind::Reno => AnyCc::Reno(Reno),
            CcKind::Newreno => AnyCc::NewReno(NewReno),
            CcKind::Cubic => AnyCc::Cubic(Cubic::new(cubic)),
            CcKind::Pfabric => AnyCc::PFabric(PFabricCc::new(probe_after)),
            CcKind::Dctcp => AnyCc::Dctcp(Dctcp::new(dctcp)),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCc::Reno($c) => $e,
            AnyCc::NewReno($c) => $e,
            AnyCc::Cubic($c) => $e,
            AnyCc::PFabric($c) => $e,
            AnyCc::Dctcp($c) => $e,
            AnyCc::Coupled($c) => $e,
        }
    };
}

impl CongestionControl for AnyCc {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    #[inline]
    fn partial_ack_keeps_recovery(&self) -> bool {
        dispatch!(self, c => c.partial_ack_keeps_recovery())
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        dispatch!(self, c => c.on_ack(w, ev))
    }
    #[inline]
    fn on_enter_fast_recovery(&mut self, w: &mut Window, loss: &Loss, dupacks: u32) {
        dispatch!(self, c => c.on_enter_fast_recovery(w, loss, dupacks))
    }
    #[inline]
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        dispatch!(self, c => c.on_dupack_in_recovery(w))
    }
    #[inline]
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) {
        dispatch!(self, c => c.on_partial_ack(w, acked))
    }
    #[inline]
    fn on_exit_recovery(&mut self, w: &mut Window, flight: u64, acked: u64) {
        dispatch!(self, c => c.on_exit_recovery(w, flight, acked))
    }
    #[inline]
    fn on_timeout(&mut self, w: &mut Window, loss: &Loss) {
        dispatch!(self, c => c.on_timeout(w, loss))
    }
    #[inline]
    fn on_ecn_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        dispatch!(self, c => c.on_ecn_ack(w, ev))
    }
    #[inline]
    fn on_ecn_echo(&mut self, w: &mut Window, ev: &AckEvent, loss: &Loss) {
        dispatch!(self, c => c.on_ecn_echo(w, ev, loss))
    }
    #[inline]
    fn fast_retransmit(&self) -> bool {
        dispatch!(self, c => c.fast_retransmit())
    }
    #[inline]
    fn probe_mode(&self) -> bool {
        dispatch!(self, c => c.probe_mode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    // --- RFC 5681 increase ------------------------------------------------------------------
    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut w = Window::new(MSS, 2);
        assert_eq!(w.cwnd, 2000);
        w.slow_start_or_avoid(1000);
        w.slow_start_or_avoid(2000); // a stretch ACK still adds one SMSS
        w.slow_start_or_avoid(300); // a small ACK adds what it acknowledges
        w.slow_start_or_avoid(0); // a duplicate adds nothing
        assert_eq!(w.cwnd, 4300);
    }

    #[test]
    fn congestion_avoidance_tracks_the_real_valued_rule() {
        // integer cwnd with carried credit stays within 0.01% of the real-valued
        // cwnd += SMSS^2 / cwnd (ns-2's floating `cwnd_ += 1 / cwnd_`), window after window
        for start in [2 * MSS, 3 * MSS, 10 * MSS, 7 * MSS + 123] {
            let mut w = Window { cwnd: start, ssthresh: 0, ..Window::new(MSS, 1) };
            let mut real = start as f64;
            for _ in 0..500 {
                w.slow_start_or_avoid(MSS);
                real += (MSS * MSS) as f64 / real;
                assert!((w.cwnd as f64 - real).abs() <= 1.0 + real * 1e-4, "{} vs {real}", w.cwnd);
            }
        }
        // by hand: 3000 + 333 + 300 + 275, the remainder carried as credit
        let mut w = Window { cwnd: 3 * MSS, ssthresh: 0, ..Window::new(MSS, 1) };
        for _ in 0..3 {
            w.slow_start_or_avoid(MSS);
        }
        assert_eq!(w.cwnd, 3908);
        assert_eq!(w.ca_credit, 1_001_100 - 275 * 3633);
    }

    #[test]
    fn credit_helpers_carry_fractions_both_ways() {
        // +2.5 bytes at cwnd 10 000 is 25 000 bytes squared: 2 bytes now, 5 000 carried
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 0, ..Window::new(MSS, 1) };
        w.avoid_by_credit(25_000);
        assert_eq!((w.cwnd, w.ca_credit), (10_002, 5_000));
        // -0.4 bytes (4 000.8 -> 4 001 at 10 002) comes out of the credit
        w.shrink_by_credit(4_001);
        assert_eq!((w.cwnd, w.ca_credit), (10_002, 999));
        // -3 bytes (30 006): 999 of credit, 29 007 short: 3 whole bytes borrowed
        // (ceil(29 007 / 10 002) = 3), 3 * 10 002 - 29 007 = 999 back as credit
        w.shrink_by_credit(30_006);
        assert_eq!((w.cwnd, w.ca_credit), (9_999, 999));
        // the floor: one segment, the credit dropped
        w.shrink_by_credit(u64::MAX);
        assert_eq!((w.cwnd, w.ca_credit), (MSS, 0));
        // SMSS^2 is RFC 5681's increase: 1000 bytes at cwnd 1000
        w.avoid_by_credit(MSS * MSS);
        assert_eq!(w.cwnd, 2 * MSS);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        let mut w = Window::new(MSS, 2);
        w.halve_ssthresh(10 * MSS);
        assert_eq!(w.ssthresh, 5 * MSS);
        w.halve_ssthresh(3 * MSS);
        assert_eq!(w.ssthresh, 2 * MSS);
    }

    // --- ns-2's loss rules (WindowRules) -----------------------------------------------------
    fn ns2_rules() -> WindowRules {
        WindowRules {
            ssthresh_from: SsthreshFrom::Cwnd,
            recovery_cwnd: RecoveryCwnd::HalfWindow,
            recovery_exit: RecoveryExit::Deflated,
        }
    }
    fn segs(w: &Window) -> f64 {
        w.cwnd as f64 / w.mss as f64
    }

    #[test]
    fn ssthresh_from_cwnd_is_half_the_window_in_whole_segments() {
        let loss = |flight, rwnd| Loss { flight, rwnd };
        // ns-2 trace: cwnd_ 7.283 -> ssthresh_ 3 (FlightSize would give 3.5 segments here)
        let mut w = Window { cwnd: 7283, ..Window::with_rules(MSS, 1, ns2_rules()) };
        w.loss_ssthresh(&loss(7 * MSS, u64::MAX));
        assert_eq!(w.ssthresh, 3 * MSS);
        // the receive window caps it (ns-2's window_), and the floor is two segments
        w.loss_ssthresh(&loss(7 * MSS, 4 * MSS + 999));
        assert_eq!(w.ssthresh, 2 * MSS);
        w.cwnd = MSS;
        w.loss_ssthresh(&loss(MSS, u64::MAX));
        assert_eq!(w.ssthresh, 2 * MSS);
        // inflation is left out
        let mut w = Window { cwnd: 10 * MSS, inflation: 4 * MSS, ..Window::with_rules(MSS, 1, ns2_rules()) };
        w.loss_ssthresh(&loss(0, u64::MAX));
        assert_eq!(w.ssthresh, 3 * MSS);
        // the RFC rule takes FlightSize, exact bytes
        let mut w = Window { cwnd: 7283, ..Window::new(MSS, 1) };
        w.loss_ssthresh(&loss(7 * MSS, u64::MAX));
        assert_eq!(w.ssthresh, 3500);
    }

    #[test]
    fn half_window_recovery_and_deflated_exit_follow_ns2() {
        // ns-2 trace of one flow (cwnd_ in segments): 7.283 at the third duplicate ACK ->
        // ssthresh_ 3, cwnd_ 3.641 (+3 dupwnd_), and the full ACK opens it to 3.916
        let mut w = Window { cwnd: 7283, ssthresh: u64::MAX, ..Window::with_rules(MSS, 1, ns2_rules()) };
        w.enter_recovery(&Loss { flight: 9 * MSS, rwnd: u64::MAX }, 3);
        assert_eq!((w.ssthresh, w.inflation), (3 * MSS, 3 * MSS));
        assert_eq!(w.cwnd, 3641 + 3 * MSS);
        for _ in 0..5 {
            w.inflate();
        }
        assert_eq!((w.cwnd, w.inflation), (3641 + 8 * MSS, 8 * MSS));
        w.exit_recovery(MSS);
        assert_eq!(w.inflation, 0);
        assert!((segs(&w) - 3.916).abs() < 0.001, "{}", segs(&w));
        // the RFC rules: cwnd = ssthresh + 3 on entry, = ssthresh on exit
        let mut w = Window { cwnd: 7283, ssthresh: u64::MAX, ..Window::new(MSS, 1) };
        w.enter_recovery(&Loss { flight: 9 * MSS, rwnd: u64::MAX }, 3);
        assert_eq!((w.ssthresh, w.cwnd), (4500, 7500));
        w.exit_recovery(MSS);
        assert_eq!(w.cwnd, 4500);
        // half_window is half of min(cwnd, rwnd), not floored at two segments
        let mut w = Window { cwnd: 2 * MSS, ..Window::with_rules(MSS, 1, ns2_rules()) };
        w.enter_recovery(&Loss { flight: 4 * MSS, rwnd: u64::MAX }, 3);
        assert_eq!((w.ssthresh, w.cwnd), (2 * MSS, 4 * MSS));
        // deflated exit below ssthresh: slow start, one segment for the exiting ACK
        w.exit_recovery(MSS);
        assert_eq!(w.cwnd, 2 * MSS);
    }

    #[test]
    fn partial_deflation_spends_the_inflation_first() {
        let mut w = Window { cwnd: 15 * MSS, inflation: 5 * MSS, ..Window::with_rules(MSS, 1, ns2_rules()) };
        // 3 segments acknowledged: inflation 5 - 3 + 1, base untouched
        w.deflate_partial(3 * MSS);
        assert_eq!((w.base_cwnd(), w.inflation), (10 * MSS, 3 * MSS));
        // 8 acknowledged: inflation 3 covers 3, base loses 5, one segment of inflation back
        w.deflate_partial(8 * MSS);
        assert_eq!((w.base_cwnd(), w.inflation), (5 * MSS, MSS));
        // ns-2 keeps the base at one segment at least (the exit leaves the base alone)
        w.deflate_partial(20 * MSS);
        assert_eq!((w.base_cwnd(), w.inflation), (MSS, MSS));
        // the RFC total is the same while nothing is clamped, floored at one segment overall
        let mut r = Window { cwnd: 15 * MSS, inflation: 5 * MSS, ..Window::new(MSS, 1) };
        r.deflate_partial(3 * MSS);
        r.deflate_partial(8 * MSS);
        assert_eq!(r.cwnd, 6 * MSS);
        r.deflate_partial(20 * MSS);
        assert_eq!(r.cwnd, MSS);
    }

    #[test]
    fn a_timeout_in_recovery_halves_the_window_without_its_inflation() {
        let mut w = Window { cwnd: 12 * MSS, inflation: 6 * MSS, ..Window::with_rules(MSS, 1, ns2_rules()) };
        w.timeout(&Loss { flight: 10 * MSS, rwnd: u64::MAX });
        assert_eq!((w.ssthresh, w.cwnd, w.inflation), (3 * MSS, MSS, 0));
        let mut w = Window { cwnd: 12 * MSS, inflation: 6 * MSS, ..Window::new(MSS, 1) };
        w.timeout(&Loss { flight: 10 * MSS, rwnd: u64::MAX });
        assert_eq!((w.ssthresh, w.cwnd, w.inflation), (5 * MSS, MSS, 0));
    }

    #[test]
    fn the_beta_helpers_decrease_by_beta_under_every_rule() {
        let loss = Loss { flight: 10 * MSS, rwnd: u64::MAX };
        assert_eq!((Decrease::Half.of(7283), Decrease::Beta(0.7).of(10_000), Decrease::Beta(0.7).of(7283)), (3641, 7000, 5098));
        // RFC rules: beta * FlightSize, cwnd = ssthresh + inflation
        let mut w = Window { cwnd: 12 * MSS, ..Window::new(MSS, 1) };
        w.enter_recovery_by(&loss, 3, Decrease::Beta(0.7));
        assert_eq!((w.ssthresh, w.cwnd), (7 * MSS, 10 * MSS));
        // ns-2 rules: beta * min(cwnd, rwnd) in whole segments; beta * window on entry
        let mut w = Window { cwnd: 12 * MSS, ..Window::with_rules(MSS, 1, ns2_rules()) };
        w.enter_recovery_by(&loss, 3, Decrease::Beta(0.7));
        assert_eq!((w.ssthresh, w.cwnd), (8 * MSS, 8400 + 3 * MSS));
        let mut w = Window { cwnd: 12 * MSS, ..Window::new(MSS, 1) };
        w.timeout_by(&loss, Decrease::Beta(0.7));
        assert_eq!((w.ssthresh, w.cwnd), (7 * MSS, MSS));
        // Half is the plain helpers, to the byte
        for rules in [WindowRules::default(), ns2_rules()] {
            let (mut a, mut b) = (Window { cwnd: 7283, ..Window::with_rules(MSS, 1, rules) }, Window { cwnd: 7283, ..Window::with_rules(MSS, 1, rules) });
            a.enter_recovery(&loss, 3);
            b.enter_recovery_by(&loss, 3, Decrease::Half);
            assert_eq!(a, b);
            a.timeout(&loss);
            b.timeout_by(&loss, Decrease::Half);
            assert_eq!(a, b);
        }
    }

    // --- dispatch -----------------------------------------------------------------------------
    #[test]
    fn any_cc_maps_kinds_and_names() {
        assert_eq!(AnyCc::new(CcKind::Reno).name(), "reno");
        assert_eq!(AnyCc::new(CcKind::Newreno).name(), "newreno");
        assert_eq!(AnyCc::new(CcKind::Cubic).name(), "cubic");
        assert_eq!(AnyCc::new(CcKind::Pfabric).name(), "pfabric");
        assert!(AnyCc::new(CcKind::Newreno).fast_retransmit() && !AnyCc::new(CcKind::Pfabric).fast_retransmit());
        assert_eq!(AnyCc::new(CcKind::Dctcp).name(), "dctcp");
        assert!(AnyCc::new(CcKind::Dctcp).partial_ack_keeps_recovery());
        assert!(!AnyCc::new(CcKind::Reno).partial_ack_keeps_recovery());
        assert!(AnyCc::new(CcKind::Newreno).partial_ack_keeps_recovery());
        assert!(AnyCc::new(CcKind::Cubic).partial_ack_keeps_recovery());
        // the configuration's CUBIC parameters reach the algorithm
        let cfg = TcpConfig { cc: CcKind::Cubic, cubic_beta: 0.8, cubic_c: 1.0, ..Default::default() };
        match AnyCc::from_config(&cfg) {
            AnyCc::Cubic(c) => assert_eq!((c.params().beta, c.params().c), (0.8, 1.0)),
            other => panic!("{other:?}"),
        }
        assert_eq!(AnyCc::from_config(&TcpConfig::default()), AnyCc::NewReno(NewReno));
    }

    #[test]
    fn default_hooks_are_a_fixed_window() {
        struct Fixed;
        impl CongestionControl for Fixed {
            fn name(&self) -> &'static str {
                "fixed"
            }
        }
        let mut w = Window::new(MSS, 4);
        let ev = AckEvent {
            now: SimTime::ZERO,
            acked_bytes: MSS,
            flight_bytes: MSS,
            rtt_sample: None,
            srtt: None,
            min_rtt: None,
            ece: false,
            ack: 0,
            snd_nxt: 0,
        };
        let mut c = Fixed;
        c.on_ack(&mut w, &ev);
        let loss = Loss { flight: 4 * MSS, rwnd: u64::MAX };
        c.on_enter_fast_recovery(&mut w, &loss, 3);
        c.on_dupack_in_recovery(&mut w);
        c.on_partial_ack(&mut w, MSS);
        c.on_exit_recovery(&mut w, MSS, MSS);
        c.on_timeout(&mut w, &loss);
        c.on_ecn_ack(&mut w, &ev);
        c.on_ecn_echo(&mut w, &ev, &loss);
        assert_eq!(w, Window::new(MSS, 4));
        assert!(!c.partial_ack_keeps_recovery());
    }
}
