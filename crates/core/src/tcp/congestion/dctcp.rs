//! DCTCP (RFC 8257; Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010): the sender
//! estimates the fraction of its bytes that met a congested switch and cuts its window in
//! proportion, once per window of data.
//!
//! Rules (bytes; SMSS = `mss_bytes`):
//! - **alpha** (RFC 8257 3.3, [`CongestionControl::on_ecn_ack`], every acceptable ACK):
//!   `bytes_acked += acked`, and `bytes_marked += acked` if the ACK carries ECE. When the ACK
//!   number passes `window_end` (strictly, RFC 8257 3.3 step 5), one window of data is
//!   complete: `F = bytes_marked / bytes_acked`, `alpha = (1 - g) * alpha + g * F`,
//!   `window_end = snd_nxt`, both counters reset. `window_end` starts at 0, so the first ACK of
//!   data closes the first (short) window. Duplicate ACKs acknowledge 0 bytes and count nothing.
//! - **ECN-Echo** ([`CongestionControl::on_ecn_echo`], which the sender calls at most once per
//!   window of data and never in loss recovery, with the CWR flag per RFC 3168):
//!   `cwnd = max(cwnd - floor(cwnd * alpha / 2), 2 SMSS)` and `ssthresh = cwnd` (RFC 8257 3.3;
//!   Linux `dctcp_ssthresh`, whose floor is 2 segments). `alpha` is the value after the ACK's
//!   own update.
//! - **Increase** and **loss** (fast retransmit, partial ACKs, recovery exit, timeout): NewReno
//!   unchanged (RFC 8257 3.5: "loss ... the same as a conventional TCP"; Linux halves on loss).
//!
//! Parameters (`[tcp]`: `dctcp_g`, the gain g, and `dctcp_alpha_init`): `docs/mechanisms/dctcp.md`.
//! `alpha` is an `f64` (Linux keeps it in 10-bit fixed point); its arithmetic is IEEE-754, the
//! same on every platform.
//! Tests: below (alpha's rule, convergence to F, the cut), `sender/tests/ecn.rs` (once per window, CWR),
//! `receiver/tests.rs` (the echo), `crates/sim/tests/runs/dctcp.rs` (the queue stays near K).

use super::{AckEvent, CongestionControl, Loss, NewReno, Window};
use super::super::TcpConfig;

/// DCTCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// Estimation gain g, in (0, 1].
    pub g: f64,
    /// alpha before the first window completes, in [0, 1].
    pub alpha_init: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0, alpha_init: 1.0 }
    }
}

impl DctcpParams {
    pub fn from_config(cfg: &TcpConfig) -> DctcpParams {
        DctcpParams { g: cfg.dctcp_g, alpha_init: cfg.dctcp_alpha_init }
    }
}

/// RFC 8257 DCTCP sender.
#[derive(Clone, Debug, PartialEq)]
pub struct Dctcp {
    p: DctcpParams,
    alpha: f64,
    /// The ACK number that must be passed to close the current observation window.
    window_end: u64,
    bytes_acked: u64,
    bytes_marked: u64,
}

impl Dctcp {
    pub fn new(p: DctcpParams) -> Dctcp {
        Dctcp { p, alpha: p.alpha_init, window_end: 0, bytes_acked: 0, bytes_marked: 0 }
    }
    /// The current estimate of the fraction of marked bytes.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    pub fn params(&self) -> DctcpParams {
        self.p
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    #[inline]
    fn partial_ack_keeps_recovery(&self) -> bool {
        true
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        NewReno.on_ack(w, ev)
    }
    fn on_enter_fast_recovery(&mut self, w: &mut Window, loss: &Loss, dupacks: u32) {
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
        NewReno.on_timeout(w, loss)
    }
    #[inline]
    fn on_ecn_ack(&mut self, _w: &mut Window, ev: &AckEvent) {
        self.bytes_acked += ev.acked_bytes;
        if ev.ece {
            self.bytes_marked += ev.acked_bytes;
        }
        if ev.ack <= self.window_end {
            return;
        }
        let f = if self.bytes_acked > 0 { self.bytes_marked as f64 / self.bytes_acked as f64 } else { 0.0 };
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
        self.window_end = ev.snd_nxt;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
    }
    fn on_ecn_echo(&mut self, w: &mut Window, _ev: &AckEvent, _loss: &Loss) {
        let cwnd = w.base_cwnd();
        let cut = (cwnd as f64 * self.alpha / 2.0).floor() as u64;
        let next = cwnd.saturating_sub(cut).max(2 * w.mss);
        w.ssthresh = next;
        w.cwnd = next;
        w.inflation = 0;
        w.ca_credit = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    const MSS: u64 = 1000;

    fn ack(ack: u64, acked: u64, ece: bool, snd_nxt: u64) -> AckEvent {
        AckEvent {
            now: SimTime::ZERO,
            acked_bytes: acked,
            flight_bytes: 0,
            rtt_sample: None,
            srtt: None,
            min_rtt: None,
            ece,
            ack,
            snd_nxt,
        }
    }
    fn dctcp(g: f64, alpha_init: f64) -> Dctcp {
        Dctcp::new(DctcpParams { g, alpha_init })
    }

    /// Feeds `windows` windows of `per` ACKs of one MSS each, the first `marked` of every
    /// window with ECE, and returns alpha after each window. The sender's `snd_nxt` is always
    /// `per - 1` segments past the ACK, so that every window (after the first, one-ACK window
    /// that a fresh sender closes with its first ACK, fed here unmarked) is exactly `per` ACKs.
    fn run(c: &mut Dctcp, windows: usize, per: u64, marked: u64, start: &mut u64) -> Vec<f64> {
        let mut w = Window::new(MSS, 10);
        if *start == 0 {
            *start = MSS;
            c.on_ecn_ack(&mut w, &ack(MSS, MSS, false, MSS + (per - 1) * MSS));
        }
        let mut out = Vec::new();
        for _ in 0..windows {
            for i in 0..per {
                *start += MSS;
                c.on_ecn_ack(&mut w, &ack(*start, MSS, i < marked, *start + (per - 1) * MSS));
            }
            out.push(c.alpha());
        }
        out
    }

    // --- alpha ---------------------------------------------------------------------------------
    #[test]
    fn alpha_is_updated_once_per_window_with_gain_g() {
        let mut c = dctcp(1.0 / 16.0, 1.0);
        let mut w = Window::new(MSS, 10);
        // the first ACK closes the first window (window_end starts at 0): F = 0
        c.on_ecn_ack(&mut w, &ack(MSS, MSS, false, 10 * MSS));
        assert_eq!(c.alpha(), 15.0 / 16.0);
        // ACKs up to and including window_end = 10 MSS only count
        for k in 2..=10 {
            c.on_ecn_ack(&mut w, &ack(k * MSS, MSS, k % 3 == 0, 20 * MSS));
            assert_eq!(c.alpha(), 15.0 / 16.0, "ack {k}");
        }
        // a duplicate ACK counts nothing, even with ECE
        c.on_ecn_ack(&mut w, &ack(10 * MSS, 0, true, 20 * MSS));
        // the ACK past window_end closes it: 10 segments acked, 3 of them (3, 6, 9) marked, + this one
        c.on_ecn_ack(&mut w, &ack(11 * MSS, MSS, true, 20 * MSS));
        let f = 4.0 / 10.0;
        assert_eq!(c.alpha(), (15.0 / 16.0) * (15.0 / 16.0) + f / 16.0);
        // g is the parameter: g = 1/4 from alpha 0 with F = 1/2 gives 1/8
        let mut c = dctcp(0.25, 0.0);
        let mut s = 0;
        let a = run(&mut c, 1, 10, 5, &mut s);
        assert_eq!(a, [0.125]);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        for (g, f_num) in [(1.0 / 16.0, 3u64), (1.0 / 16.0, 0), (1.0 / 16.0, 10), (0.5, 7)] {
            let mut c = dctcp(g, 1.0);
            let mut s = 0;
            let a = run(&mut c, 400, 10, f_num, &mut s);
            let f = f_num as f64 / 10.0;
            let last = *a.last().unwrap();
            assert!((last - f).abs() < 1e-9, "g {g} F {f}: alpha {last}");
            // the distance to F shrinks by (1 - g) per window
            let d0 = (a[10] - f).abs();
            let d1 = (a[11] - f).abs();
            if d0 > 1e-12 {
                assert!((d1 / d0 - (1.0 - g)).abs() < 1e-9, "{d1} / {d0}");
            }
        }
    }

    // --- the cut ---------------------------------------------------------------------------------
    #[test]
    fn ecn_echo_cuts_cwnd_by_alpha_over_two() {
        let loss = Loss { flight: 0, rwnd: u64::MAX };
        let ev = ack(0, 0, true, 0);
        for (alpha, cwnd, want) in [(1.0, 100 * MSS, 50 * MSS), (0.5, 100 * MSS, 75 * MSS), (0.0, 100 * MSS, 100 * MSS), (0.1, 33 * MSS, 31350)] {
            let mut c = dctcp(1.0 / 16.0, alpha);
            let mut w = Window { cwnd, ca_credit: 17, ..Window::new(MSS, 1) };
            c.on_ecn_echo(&mut w, &ev, &loss);
            assert_eq!((w.cwnd, w.ssthresh, w.ca_credit), (want, want, 0), "alpha {alpha}");
        }
        // never below two segments
        let mut c = dctcp(1.0 / 16.0, 1.0);
        let mut w = Window { cwnd: 3 * MSS, ..Window::new(MSS, 1) };
        c.on_ecn_echo(&mut w, &ev, &loss);
        assert_eq!(w.cwnd, 2 * MSS);
    }

    #[test]
    fn loss_reactions_are_newreno() {
        let loss = Loss { flight: 20 * MSS, rwnd: u64::MAX };
        let (mut a, mut b) = (Window::new(MSS, 20), Window::new(MSS, 20));
        let mut c = dctcp(1.0 / 16.0, 0.0);
        c.on_enter_fast_recovery(&mut a, &loss, 3);
        NewReno.on_enter_fast_recovery(&mut b, &loss, 3);
        assert_eq!(a, b);
        assert_eq!(a.ssthresh, 10 * MSS, "a loss halves whatever alpha is");
        c.on_partial_ack(&mut a, 2 * MSS);
        NewReno.on_partial_ack(&mut b, 2 * MSS);
        c.on_timeout(&mut a, &loss);
        NewReno.on_timeout(&mut b, &loss);
        assert_eq!(a, b);
    }
}
