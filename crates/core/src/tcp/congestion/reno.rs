//! Reno (RFC 5681): slow start, congestion avoidance, fast retransmit and fast recovery.
//!
//! The window reactions, all in bytes (SMSS = `mss_bytes`):
//! - ACK of new data: `cwnd += min(acked, SMSS)` below `ssthresh`, else `cwnd += SMSS^2 / cwnd`
//!   (RFC 5681 3.1, equations 2 and 3; ns-2's `opencwnd` with `increase_num_ 1`).
//! - Fast retransmit (RFC 5681 3.2 steps 2-3): `ssthresh = max(FlightSize / 2, 2 SMSS)`,
//!   `cwnd = ssthresh + dupacks * SMSS` (the `dupacks` segments that have left the network).
//! - Each further duplicate ACK in recovery: `cwnd += SMSS` (step 4, window inflation).
//! - Fast recovery ends on the first ACK of new data, *partial or not* (step 6):
//!   `cwnd = ssthresh` (deflation). Reno never stays in recovery on a partial ACK; a second
//!   loss in the same window is then left to the retransmission timer, because the sender's
//!   `recover` guard (ns-2's `bugFix_`, on by default) refuses a second fast retransmit until
//!   the ACK passes the data outstanding at the first one.
//! - Timeout (RFC 5681 3.1, equation 4 and the loss window): `ssthresh = max(FlightSize / 2,
//!   2 SMSS)`, `cwnd = 1 SMSS`.
//!
//! - ECN-Echo (RFC 3168 6.1.2, when the sender reacts): `ssthresh` as after a loss, `cwnd =
//!   ssthresh`, no retransmission ([`Window::ecn_reduce_by`]).
//!
//! Stateless: all state is the shared [`Window`].

use super::{AckEvent, CongestionControl, Decrease, Loss, Window};

/// RFC 5681 Reno.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        w.slow_start_or_avoid(ev.acked_bytes);
    }
    fn on_enter_fast_recovery(&mut self, w: &mut Window, loss: &Loss, dupacks: u32) {
        w.enter_recovery(loss, dupacks);
    }
    #[inline]
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        w.inflate();
    }
    fn on_exit_recovery(&mut self, w: &mut Window, _flight: u64, acked: u64) {
        w.exit_recovery(acked);
    }
    fn on_timeout(&mut self, w: &mut Window, loss: &Loss) {
        w.timeout(loss);
    }
    fn on_ecn_echo(&mut self, w: &mut Window, _ev: &AckEvent, loss: &Loss) {
        w.ecn_reduce_by(loss, Decrease::Half);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    const MSS: u64 = 1460;

    fn fl(flight: u64) -> Loss {
        Loss { flight, rwnd: u64::MAX }
    }
    fn ack(acked: u64) -> AckEvent {
        AckEvent { now: SimTime::ZERO, acked_bytes: acked, flight_bytes: 0, rtt_sample: None, srtt: None, min_rtt: None, ece: false, ack: 0, snd_nxt: 0 }
    }

    // --- fast retransmit / fast recovery ---------------------------------------------------
    #[test]
    fn fast_recovery_halves_inflates_and_deflates() {
        let mut w = Window::new(MSS, 20);
        let mut r = Reno;
        r.on_enter_fast_recovery(&mut w, &fl(20 * MSS), 3);
        assert_eq!(w.ssthresh, 10 * MSS);
        assert_eq!(w.cwnd, 13 * MSS);
        for _ in 0..5 {
            r.on_dupack_in_recovery(&mut w);
        }
        assert_eq!(w.cwnd, 18 * MSS);
        r.on_exit_recovery(&mut w, 10 * MSS, MSS);
        assert_eq!(w.cwnd, 10 * MSS);
        assert!(!r.partial_ack_keeps_recovery());
        // after recovery: congestion avoidance
        r.on_ack(&mut w, &ack(MSS));
        assert_eq!(w.cwnd, 10 * MSS + MSS / 10);
    }

    // --- timeout --------------------------------------------------------------------------------
    #[test]
    fn timeout_sets_loss_window_of_one_segment() {
        let mut w = Window::new(MSS, 10);
        let mut r = Reno;
        r.on_timeout(&mut w, &fl(10 * MSS));
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 5 * MSS));
        // slow start again up to ssthresh
        for _ in 0..4 {
            r.on_ack(&mut w, &ack(MSS));
        }
        assert_eq!(w.cwnd, 5 * MSS);
        r.on_ack(&mut w, &ack(MSS));
        assert_eq!(w.cwnd, 5 * MSS + MSS / 5);
        // a tiny flight still leaves ssthresh at two segments
        r.on_timeout(&mut w, &fl(MSS));
        assert_eq!(w.ssthresh, 2 * MSS);
    }
}
