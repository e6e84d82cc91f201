//! NewReno (RFC 6582): Reno whose fast recovery survives partial ACKs.
//!
//! Same increase, fast-retransmit and timeout reactions as [`Reno`]; the differences:
//! - A partial ACK (new data acknowledged, but not all the data outstanding when fast
//!   recovery began, i.e. short of `recover`) keeps the sender in fast recovery; the sender
//!   retransmits the next hole, and the window is deflated by the amount acknowledged, with
//!   one SMSS added back when at least one SMSS was acknowledged (RFC 6582 3.2 step 3; ns-2's
//!   `partial_window_deflation_ 1`). The window never drops below one SMSS.
//! - A full ACK (at or beyond `recover`) ends recovery with `cwnd = ssthresh` (RFC 6582 3.2
//!   step 3, second option; ns-2's default `exit_recovery_fix_ 0`). The first option,
//!   `min(ssthresh, max(FlightSize, SMSS) + SMSS)`, guards against a burst; it is not used,
//!   to stay with ns-2.
//!
//! The sender owns `recover` and its checks (one fast retransmit per window, none after a
//! timeout until the ACK passes the data outstanding at the timeout).

use super::{AckEvent, CongestionControl, Loss, Reno, Window};

/// RFC 6582 NewReno.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    #[inline]
    fn partial_ack_keeps_recovery(&self) -> bool {
        true
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        Reno.on_ack(w, ev)
    }
    fn on_enter_fast_recovery(&mut self, w: &mut Window, loss: &Loss, dupacks: u32) {
        Reno.on_enter_fast_recovery(w, loss, dupacks)
    }
    #[inline]
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        Reno.on_dupack_in_recovery(w)
    }
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) {
        w.deflate_partial(acked);
    }
    fn on_exit_recovery(&mut self, w: &mut Window, flight: u64, acked: u64) {
        Reno.on_exit_recovery(w, flight, acked)
    }
    fn on_timeout(&mut self, w: &mut Window, loss: &Loss) {
        Reno.on_timeout(w, loss)
    }
    fn on_ecn_echo(&mut self, w: &mut Window, ev: &AckEvent, loss: &Loss) {
        Reno.on_ecn_echo(w, ev, loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    // --- partial ACKs ---------------------------------------------------------------------------
    #[test]
    fn partial_ack_deflates_by_the_acked_amount_plus_one_segment() {
        let mut w = Window::new(MSS, 20);
        let mut c = NewReno;
        c.on_enter_fast_recovery(&mut w, &Loss { flight: 20 * MSS, rwnd: u64::MAX }, 3);
        assert_eq!(w.cwnd, 13 * MSS);
        for _ in 0..7 {
            c.on_dupack_in_recovery(&mut w);
        }
        assert_eq!(w.cwnd, 20 * MSS);
        // a partial ACK of 6 segments: 20 - 6 + 1
        c.on_partial_ack(&mut w, 6 * MSS);
        assert_eq!(w.cwnd, 15 * MSS);
        // less than a segment acknowledged: no add-back
        c.on_partial_ack(&mut w, 500);
        assert_eq!(w.cwnd, 14 * MSS + 500);
        // never below one segment
        c.on_partial_ack(&mut w, 100 * MSS);
        assert_eq!(w.cwnd, MSS);
        c.on_exit_recovery(&mut w, 3 * MSS, MSS);
        assert_eq!(w.cwnd, 10 * MSS);
        assert!(c.partial_ack_keeps_recovery());
    }
}
