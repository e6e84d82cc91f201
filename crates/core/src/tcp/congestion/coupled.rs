//! Coupled congestion avoidance for the subflows of an MPTCP connection (RFC 6356 section 4,
//! OLIA): NewReno in everything but the congestion-avoidance increase, which the connection
//! computes across its subflows (`tcp/mptcp/coupling.rs`) and hands in before each ACK.
//!
//! Rules:
//! - **Slow start, fast retransmit, fast recovery, timeout, ECN**: [`NewReno`]'s reactions, by
//!   delegation (RFC 6356 section 4: "the algorithm only applies to the increase phase of the
//!   congestion avoidance state"; the same holds for OLIA, Khalili et al. 2012 section 5).
//! - **Congestion avoidance** (`cwnd >= ssthresh`, the [`Window::slow_start_or_avoid`] test):
//!   an ACK of `acked` new bytes changes cwnd by `increase_per_mss * acked / SMSS` bytes, where
//!   `increase_per_mss` is the last value given to [`Coupled::set_increase_per_mss`] (bytes of
//!   window per SMSS acknowledged). The connection sets it from its subflows' state right
//!   before it hands the subflow an ACK, so the value is computed with the window the ACK
//!   meets. Until it is set, it is NewReno's `SMSS^2 / cwnd` at the initial window (see
//!   [`Coupled::new`]); the connection is expected to set it on every ACK.
//! - **Fractions add up exactly**: the change is turned into bytes squared (`x * cwnd`,
//!   rounded to the nearest whole number) and added to the window's `ca_credit` by
//!   [`Window::avoid_by_credit`], the same carry as RFC 5681's `SMSS^2 / cwnd`; so NewReno's
//!   increase (`SMSS^2 / cwnd` per SMSS acknowledged) gives exactly NewReno's window, and many
//!   small ACKs add up to what one large one would give (to within one byte squared per ACK).
//! - **A negative increase** (OLIA's `alpha_r < 0`) shrinks the window the same way
//!   ([`Window::shrink_by_credit`]), never below one SMSS.
//! - **Loss intervals**: the algorithm keeps OLIA's [`LossIntervals`] of its subflow (every ACK
//!   of new data outside recovery moves its end to `snd_una`; entering fast recovery, a
//!   timeout and an ECN reaction are congestion events), readable as
//!   [`Coupled::loss_interval_bytes`]. LIA and the uncoupled rule ignore it.
//! - Not in [`super::CcKind`]: a scenario does not pick it; the MPTCP connection installs it
//!   on its subflows (`tcp.mptcp.coupling`).

use super::{AckEvent, CongestionControl, Loss, NewReno, Window};
use crate::tcp::mptcp::coupling::LossIntervals;

/// NewReno with a congestion-avoidance increase set from outside.
#[derive(Clone, Debug, PartialEq)]
pub struct Coupled {
    /// Bytes of cwnd per SMSS acknowledged in congestion avoidance (may be negative).
    increase_per_mss: f64,
    loss: LossIntervals,
}

impl Coupled {
    /// A subflow whose sender starts at `snd_una` (its initial sequence number) with a window of
    /// `init_cwnd` bytes of `mss`-byte segments: the increase starts as NewReno's at that window.
    pub fn new(snd_una: u64, mss: u64, init_cwnd: u64) -> Coupled {
        Coupled { increase_per_mss: (mss * mss) as f64 / init_cwnd.max(1) as f64, loss: LossIntervals::new(snd_una) }
    }

    /// The increase the next ACKs apply in congestion avoidance: bytes of cwnd per SMSS
    /// acknowledged (`coupling::increase(.., mss)`); negative shrinks the window.
    #[inline]
    pub fn set_increase_per_mss(&mut self, bytes: f64) {
        debug_assert!(bytes.is_finite(), "coupled increase {bytes}");
        self.increase_per_mss = if bytes.is_finite() { bytes } else { 0.0 };
    }

    /// The increase in force.
    pub fn increase_per_mss(&self) -> f64 {
        self.increase_per_mss
    }

    /// OLIA's `l_r` for this subflow, bytes (see [`LossIntervals::interval`]).
    #[inline]
    pub fn loss_interval_bytes(&self) -> u64 {
        self.loss.interval()
    }

    /// The loss intervals themselves.
    pub fn loss_intervals(&self) -> &LossIntervals {
        &self.loss
    }
}

impl CongestionControl for Coupled {
    fn name(&self) -> &'static str {
        "coupled"
    }
    #[inline]
    fn partial_ack_keeps_recovery(&self) -> bool {
        NewReno.partial_ack_keeps_recovery()
    }
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        self.loss.on_ack(ev.ack);
        if ev.acked_bytes == 0 {
            return;
        }
        if w.cwnd < w.ssthresh {
            w.slow_start_or_avoid(ev.acked_bytes);
            return;
        }
        // bytes of window for this ACK, times cwnd: the credit `Window` carries
        let credit = self.increase_per_mss * ev.acked_bytes as f64 / w.mss as f64 * w.cwnd as f64;
        let whole = credit.abs().round();
        if credit >= 0.0 {
            w.avoid_by_credit(whole as u64);
        } else {
            w.shrink_by_credit(whole as u64);
        }
    }
    fn on_enter_fast_recovery(&mut self, w: &mut Window, loss: &Loss, dupacks: u32) {
        self.loss.on_congestion_event();
        NewReno.on_enter_fast_recovery(w, loss, dupacks)
    }
    #[inline]
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        NewReno.on_dupack_in_recovery(w)
    }
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) {
        NewReno.on_partial_ack(w, acked)
    }
    fn on_exit_recovery(&mut self, w: &mut Window, flight: u64, acked: u64) {
        NewReno.on_exit_recovery(w, flight, acked)
    }
    fn on_timeout(&mut self, w: &mut Window, loss: &Loss) {
        self.loss.on_congestion_event();
        NewReno.on_timeout(w, loss)
    }
    fn on_ecn_echo(&mut self, w: &mut Window, ev: &AckEvent, loss: &Loss) {
        self.loss.on_congestion_event();
        NewReno.on_ecn_echo(w, ev, loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    const MSS: u64 = 1000;

    fn ack(acked: u64, ack: u64) -> AckEvent {
        AckEvent { now: SimTime::ZERO, acked_bytes: acked, flight_bytes: 0, rtt_sample: None, srtt: None, min_rtt: None, ece: false, ack, snd_nxt: ack }
    }
    fn avoiding(cwnd: u64) -> Window {
        Window { cwnd, ssthresh: 0, ..Window::new(MSS, 1) }
    }
    fn newreno_increase(w: &Window) -> f64 {
        (w.mss * w.mss) as f64 / w.cwnd as f64
    }

    #[test]
    fn newreno_increase_gives_newreno_to_the_byte() {
        for start in [2 * MSS, 3 * MSS, 10 * MSS, 7 * MSS + 123] {
            let (mut a, mut b) = (avoiding(start), avoiding(start));
            let mut c = Coupled::new(0, MSS, start);
            for i in 1..=500 {
                c.set_increase_per_mss(newreno_increase(&a));
                c.on_ack(&mut a, &ack(MSS, i * MSS));
                NewReno.on_ack(&mut b, &ack(MSS, i * MSS));
                assert_eq!(a, b, "ACK {i} from {start}");
            }
        }
        // slow start is NewReno's whatever the increase says
        let (mut a, mut b) = (Window::new(MSS, 2), Window::new(MSS, 2));
        let mut c = Coupled::new(0, MSS, 2 * MSS);
        c.set_increase_per_mss(-5.0 * MSS as f64);
        for i in 1..=5 {
            c.on_ack(&mut a, &ack(MSS, i * MSS));
            NewReno.on_ack(&mut b, &ack(MSS, i * MSS));
        }
        assert_eq!((a.cwnd, a), (7 * MSS, b));
    }

    #[test]
    fn fractions_accumulate() {
        // 0.25 bytes per SMSS acknowledged at cwnd 10 000: an ACK of 100 bytes is 0.025 bytes,
        // 0.025 * 10 000 = 250 bytes squared; 40 of them make 10 000 = exactly one byte, as
        // one ACK of 4 000 bytes does (0.25 * 4 = 1)
        let mut c = Coupled::new(0, MSS, 10 * MSS);
        c.set_increase_per_mss(0.25);
        let mut small = avoiding(10 * MSS);
        for i in 1..=40 {
            c.on_ack(&mut small, &ack(100, i * 100));
            assert_eq!(small.cwnd, 10 * MSS + (i == 40) as u64, "after {i}");
        }
        let mut large = avoiding(10 * MSS);
        c.on_ack(&mut large, &ack(4 * MSS, 4 * MSS));
        assert_eq!((small.cwnd, small.ca_credit), (10 * MSS + 1, 0));
        assert_eq!(small, large);
        // LIA's 1/40 SMSS per SMSS (two equal subflows) over ACKs of 100 bytes follows the
        // real-valued sum (2.5 bytes per ACK) as closely as NewReno's carry follows its rule
        // (`congestion_avoidance_tracks_the_real_valued_rule`)
        let mut w = avoiding(10 * MSS);
        let mut real = w.cwnd as f64;
        for i in 1..=4000 {
            c.set_increase_per_mss(MSS as f64 / 40.0);
            c.on_ack(&mut w, &ack(100, i * 100));
            real += 2.5;
            assert!((w.cwnd as f64 - real).abs() <= 1.0 + real * 1e-4, "{} vs {real}", w.cwnd);
        }
    }

    #[test]
    fn a_negative_increase_shrinks_down_to_one_segment() {
        // OLIA's path 1 of the worked example: 10/225 - 0.05 = -1/180 SMSS per SMSS acked
        // (-5.555.. bytes); at cwnd 10 000: -55 555.6 bytes squared, rounded 55 556: one
        // ACK takes 6 bytes off (ceil 5.5556) and leaves 4 444 bytes squared of credit
        let mut w = avoiding(10 * MSS);
        let mut c = Coupled::new(0, MSS, 10 * MSS);
        c.set_increase_per_mss((10.0 / 225.0 - 0.05) * MSS as f64);
        c.on_ack(&mut w, &ack(MSS, MSS));
        assert_eq!((w.cwnd, w.ca_credit), (10 * MSS - 6, 60_000 - 55_556));
        // the credit is spent first: a debit within it leaves cwnd alone
        c.set_increase_per_mss(-0.4);
        c.on_ack(&mut w, &ack(MSS, 2 * MSS)); // 0.4 * 9994 = 3997.6 -> 3998
        assert_eq!((w.cwnd, w.ca_credit), (10 * MSS - 6, 4444 - 3998));
        // a large negative increase stops at one segment, credit dropped
        c.set_increase_per_mss(-20.0 * MSS as f64);
        c.on_ack(&mut w, &ack(MSS, 3 * MSS));
        assert_eq!((w.cwnd, w.ca_credit), (MSS, 0));
        c.on_ack(&mut w, &ack(MSS, 4 * MSS));
        assert_eq!(w.cwnd, MSS);
        // and grows again from there
        c.set_increase_per_mss(MSS as f64);
        c.on_ack(&mut w, &ack(MSS, 5 * MSS));
        assert_eq!(w.cwnd, 2 * MSS);
    }

    #[test]
    fn losses_are_newreno_and_move_the_loss_intervals() {
        let loss = Loss { flight: 20 * MSS, rwnd: u64::MAX };
        let (mut a, mut b) = (Window::new(MSS, 20), Window::new(MSS, 20));
        let mut c = Coupled::new(1, MSS, 20 * MSS);
        c.on_ack(&mut a, &ack(MSS, 1 + 30 * MSS));
        NewReno.on_ack(&mut b, &ack(MSS, 1 + 30 * MSS));
        assert_eq!(c.loss_interval_bytes(), 30 * MSS);
        c.on_enter_fast_recovery(&mut a, &loss, 3);
        NewReno.on_enter_fast_recovery(&mut b, &loss, 3);
        c.on_dupack_in_recovery(&mut a);
        NewReno.on_dupack_in_recovery(&mut b);
        c.on_partial_ack(&mut a, 2 * MSS);
        NewReno.on_partial_ack(&mut b, 2 * MSS);
        c.on_exit_recovery(&mut a, 5 * MSS, MSS);
        NewReno.on_exit_recovery(&mut b, 5 * MSS, MSS);
        assert_eq!(a, b);
        assert!(c.partial_ack_keeps_recovery());
        // 10 segments since the loss: l = max(10, 30) segments
        c.on_ack(&mut a, &ack(MSS, 1 + 40 * MSS));
        assert_eq!(c.loss_interval_bytes(), 30 * MSS);
        c.on_timeout(&mut a, &loss);
        NewReno.on_timeout(&mut b, &loss);
        assert_eq!(a, b);
        // intervals 30 and 10 segments, none since: l = 10
        assert_eq!(c.loss_interval_bytes(), 10 * MSS);
        c.on_ecn_echo(&mut a, &ack(0, 1 + 40 * MSS), &loss);
        NewReno.on_ecn_echo(&mut b, &ack(0, 1 + 40 * MSS), &loss);
        assert_eq!(a, b);
        // nothing acknowledged since the timeout: no new interval
        assert_eq!(c.loss_interval_bytes(), 10 * MSS);
    }
}
