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
//!   `on_timeout` when the retransmission timer expires; `on_ecn_echo` for an ACK with ECE.
//! - [`AnyCc`] dispatches statically over the built-in algorithms (no virtual calls on the
//!   per-packet path); CUBIC and DCTCP slot in as new variants.
//! - RFC 5681's increase rules are [`Window::slow_start_or_avoid`]; its decrease
//!   (`ssthresh = max(FlightSize / 2, 2 SMSS)`) is [`Window::halve_ssthresh`].

pub mod newreno;
pub mod reno;

pub use newreno::NewReno;
pub use reno::Reno;

use super::CcKind;
use crate::time::{SimDuration, SimTime};

/// The congestion window state shared by every algorithm, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window.
    pub cwnd: u64,
    /// Slow-start threshold (`u64::MAX` until the first loss: "arbitrarily high", RFC 5681 3.1).
    pub ssthresh: u64,
    /// Sender maximum segment size (SMSS).
    pub mss: u64,
    /// Congestion-avoidance credit, in bytes squared: the remainder of `SMSS^2 / cwnd` carried
    /// from one ACK to the next so that integer arithmetic adds exactly one SMSS per window.
    pub ca_credit: u64,
}

impl Window {
    /// Initial window of `init_cwnd_pkts` full segments (RFC 5681 3.1 allows up to 4 KB; the
    /// count is a parameter here, as ns-2's `windowInit_`).
    pub fn new(mss: u64, init_cwnd_pkts: u32) -> Window {
        Window { cwnd: mss * init_cwnd_pkts as u64, ssthresh: u64::MAX, mss, ca_credit: 0 }
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
            self.ca_credit += self.mss * self.mss;
            if self.ca_credit >= self.cwnd {
                let inc = self.ca_credit / self.cwnd;
                self.ca_credit -= inc * self.cwnd;
                self.cwnd += inc;
            }
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
    /// The ACK carried ECN-Echo.
    pub ece: bool,
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
    /// The duplicate-ACK threshold was reached (`dupacks` of them) with `flight` payload bytes
    /// outstanding (not counting limited-transmit segments); the sender retransmits next.
    fn on_enter_fast_recovery(&mut self, _w: &mut Window, _flight: u64, _dupacks: u32) {}
    /// A further duplicate ACK during fast recovery.
    fn on_dupack_in_recovery(&mut self, _w: &mut Window) {}
    /// A partial ACK (see `partial_ack_keeps_recovery`) acknowledging `acked` payload bytes.
    fn on_partial_ack(&mut self, _w: &mut Window, _acked: u64) {}
    /// Fast recovery ends, `flight` payload bytes still outstanding.
    fn on_exit_recovery(&mut self, _w: &mut Window, _flight: u64) {}
    /// The retransmission timer expired with `flight` payload bytes outstanding.
    fn on_timeout(&mut self, _w: &mut Window, _flight: u64) {}
    /// An ACK carried ECN-Echo; called after the ACK's other hooks, with `ev.acked_bytes` the
    /// bytes it acknowledged (hook for DCTCP and RFC 3168; classic ECN is not modelled yet).
    fn on_ecn_echo(&mut self, _w: &mut Window, _ev: &AckEvent) {}
}

/// Static dispatch over the built-in congestion controls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyCc {
    Reno(Reno),
    NewReno(NewReno),
}

impl AnyCc {
    pub fn new(kind: CcKind) -> AnyCc {
        match kind {
            CcKind::Reno => AnyCc::Reno(Reno),
            CcKind::Newreno => AnyCc::NewReno(NewReno),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCc::Reno($c) => $e,
            AnyCc::NewReno($c) => $e,
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
    fn on_enter_fast_recovery(&mut self, w: &mut Window, flight: u64, dupacks: u32) {
        dispatch!(self, c => c.on_enter_fast_recovery(w, flight, dupacks))
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
    fn on_exit_recovery(&mut self, w: &mut Window, flight: u64) {
        dispatch!(self, c => c.on_exit_recovery(w, flight))
    }
    #[inline]
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        dispatch!(self, c => c.on_timeout(w, flight))
    }
    #[inline]
    fn on_ecn_echo(&mut self, w: &mut Window, ev: &AckEvent) {
        dispatch!(self, c => c.on_ecn_echo(w, ev))
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
            let mut w = Window { cwnd: start, ssthresh: 0, mss: MSS, ca_credit: 0 };
            let mut real = start as f64;
            for _ in 0..500 {
                w.slow_start_or_avoid(MSS);
                real += (MSS * MSS) as f64 / real;
                assert!((w.cwnd as f64 - real).abs() <= 1.0 + real * 1e-4, "{} vs {real}", w.cwnd);
            }
        }
        // by hand: 3000 + 333 + 300 + 275, the remainder carried as credit
        let mut w = Window { cwnd: 3 * MSS, ssthresh: 0, mss: MSS, ca_credit: 0 };
        for _ in 0..3 {
            w.slow_start_or_avoid(MSS);
        }
        assert_eq!(w.cwnd, 3908);
        assert_eq!(w.ca_credit, 1_001_100 - 275 * 3633);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        let mut w = Window::new(MSS, 2);
        w.halve_ssthresh(10 * MSS);
        assert_eq!(w.ssthresh, 5 * MSS);
        w.halve_ssthresh(3 * MSS);
        assert_eq!(w.ssthresh, 2 * MSS);
    }

    // --- dispatch -----------------------------------------------------------------------------
    #[test]
    fn any_cc_maps_kinds_and_names() {
        assert_eq!(AnyCc::new(CcKind::Reno).name(), "reno");
        assert_eq!(AnyCc::new(CcKind::Newreno).name(), "newreno");
        assert!(!AnyCc::new(CcKind::Reno).partial_ack_keeps_recovery());
        assert!(AnyCc::new(CcKind::Newreno).partial_ack_keeps_recovery());
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
        let ev = AckEvent { now: SimTime::ZERO, acked_bytes: MSS, flight_bytes: MSS, rtt_sample: None, ece: false };
        let mut c = Fixed;
        c.on_ack(&mut w, &ev);
        c.on_enter_fast_recovery(&mut w, 4 * MSS, 3);
        c.on_dupack_in_recovery(&mut w);
        c.on_partial_ack(&mut w, MSS);
        c.on_exit_recovery(&mut w, MSS);
        c.on_timeout(&mut w, MSS);
        c.on_ecn_echo(&mut w, &ev);
        assert_eq!(w, Window::new(MSS, 4));
        assert!(!c.partial_ack_keeps_recovery());
    }
}
