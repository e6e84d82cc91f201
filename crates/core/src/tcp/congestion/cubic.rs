//! CUBIC (RFC 9438): the window grows as a cubic function of the time since the last
//! congestion event, so its growth does not depend on the RTT, with a Reno-friendly floor.
//!
//! The rules, in segments (SMSS) and seconds as RFC 9438 writes them (the shared [`Window`]
//! is in bytes: each rule converts by SMSS). `C` = `tcp.cubic_c`, `beta` = `tcp.cubic_beta`,
//! `alpha = 3 (1 - beta) / (1 + beta)`. Parameters: `docs/tcp.md`, "CUBIC (RFC 9438)".
//! - **Slow start** while `cwnd < ssthresh`: RFC 5681, exactly as Reno
//!   ([`Window::slow_start_or_avoid`]). No HyStart++ (RFC 9438 4.10 allows plain slow start).
//! - **Epoch** (4.2): the first ACK of new data in congestion avoidance after a congestion
//!   event starts one: `t_epoch = now`, `cwnd_epoch = cwnd`, `W_est = cwnd_epoch`,
//!   `K = cbrt((W_max - cwnd_epoch) / C)`. When `W_max` is unset (after a timeout, 4.8) or not
//!   above `cwnd_epoch`, `K = 0` and `W_max = cwnd_epoch` (see the departures below).
//! - **Every ACK of new data in congestion avoidance**, `t = now - t_epoch`,
//!   `W_cubic(t) = C (t - K)^3 + W_max` (4.1):
//!   - with `cubic_reno_friendly` (4.3): `W_est += alpha * segments_acked / cwnd`, alpha
//!     becoming 1 once `W_est >= cwnd_prior`; if `W_cubic(t) < W_est` the sender is in the
//!     *Reno-friendly region* and `cwnd = W_est`;
//!   - otherwise the *concave* (`cwnd < W_max`) or *convex* (`cwnd >= W_max`) region (4.4,
//!     4.5): `target = W_cubic(t + RTT)` clamped to `[cwnd, 1.5 cwnd]` (4.2), and
//!     `cwnd += (target - cwnd) / cwnd` per segment acknowledged. Fractions of a byte are
//!     carried to the next ACK.
//! - **Congestion event** (fast retransmit, 4.6 and 4.7): with `cubic_fast_convergence`,
//!   `W_max = cwnd (1 + beta) / 2` if `cwnd < W_max`, else `W_max = cwnd`; `cwnd_prior =
//!   cwnd`; then the sender's window rules with `beta` for one half
//!   ([`Window::enter_recovery_by`]): by default `ssthresh = max(beta * min(FlightSize,
//!   cwnd), 2 SMSS)`, `cwnd = ssthresh` plus the fast-recovery inflation. The epoch ends.
//! - **Timeout** (4.8): `ssthresh` as at a congestion event (with `beta`), `cwnd = 1 SMSS`
//!   (Reno's loss window, [`Window::timeout_by`]), `cwnd_prior = cwnd`, `W_max` unset: the
//!   first epoch after it has `K = 0`, `W_max = W_est = cwnd_epoch`.
//! - **Fast recovery** is the sender's, with NewReno's partial ACKs (RFC 6582): a partial ACK
//!   keeps the sender in recovery and deflates the window, a full ACK ends it by
//!   `recovery_exit`. RFC 9438 leaves the recovery algorithm open; Linux without SACK does
//!   the same.
//!
//! Choices and departures (also in `docs/tcp.md`):
//! - **RTT = the connection's minimum RTT** (`AckEvent::min_rtt`), as Linux (`delay_min`),
//!   not RFC 9438's smoothed RTT: under a standing queue SRTT grows with the queue, and a
//!   longer look-ahead would make CUBIC more aggressive exactly when the buffer is full. 0
//!   before the first sample.
//! - **`cwnd` at a loss means `min(cwnd without inflation, rwnd)`**, the window actually in
//!   use: this model does no cwnd validation, so a receive-window-limited sender's cwnd may
//!   have grown far beyond what it ever sent.
//! - **`ssthresh = beta * min(FlightSize, cwnd)`** (with `ssthresh_from = "flight_size"`),
//!   not RFC 9438's `beta * FlightSize`; Linux uses cwnd alone. Without SACK, FlightSize
//!   counts everything sent behind the holes of a long NewReno recovery: a single flow on a
//!   21-packet path can count 160 segments "in flight" at its next fast retransmit, and beta
//!   of that would reopen the window to 112 segments, a burst that costs two RTOs. The minimum
//!   keeps the RFC's FlightSize whenever the sender is limited by the application or the
//!   receiver.
//! - **`cwnd_epoch >= W_max` gives `W_max = cwnd_epoch`, `K = 0`**, as Linux's origin point.
//!   RFC 9438 only sets `K = 0`, which keeps the window flat until `C t^3` exceeds
//!   `cwnd_epoch - W_max`. Both agree after a timeout (4.8). It happens otherwise only when
//!   `recovery_exit = "deflated"` or `"half_window"` leave cwnd above `beta * W_max`.
//! - **Growth per segment acknowledged**, not per ACK: identical without delayed ACKs, and
//!   it keeps a delayed-ACK CUBIC on its curve (RFC 9438 4.3 counts `segments_acked` for
//!   `W_est` already). Reno here grows per ACK, like ns-2.
//! - **The Reno-friendly region never lowers cwnd** (`cwnd = max(cwnd, W_est)`): after a
//!   `half_window` or `deflated` recovery cwnd can start above `W_est`.
//! - With `recovery_exit = "deflated"`, the ACK that ends recovery opens the window by Reno's
//!   rule (the ns-2 rule as written); CUBIC's epoch starts with the next ACK.
//! - Not modelled: HyStart++ (4.10), the ECN response (ECN is not modelled in this TCP),
//!   undoing spurious congestion events (4.9), and epochs paused while application-limited.
//! - Arithmetic is IEEE-754 double with basic operations only (the cube root is Newton's
//!   method here, not libm's `cbrt`), so runs are identical on every platform. The per-ACK
//!   path is a handful of multiplications and allocates nothing.

use super::{AckEvent, CongestionControl, Decrease, Loss, Window};
use crate::tcp::TcpConfig;
use crate::time::SimTime;

/// CUBIC's parameters (`tcp.cubic_*`), RFC 9438 defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// `C`, segments per second cubed (`tcp.cubic_c`, 0.4).
    pub c: f64,
    /// `beta_cubic`, the multiplicative decrease (`tcp.cubic_beta`, 0.7).
    pub beta: f64,
    /// Fast convergence, RFC 9438 4.7 (`tcp.cubic_fast_convergence`, true).
    pub fast_convergence: bool,
    /// The Reno-friendly region, RFC 9438 4.3 (`tcp.cubic_reno_friendly`, true).
    pub reno_friendly: bool,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams { c: 0.4, beta: 0.7, fast_convergence: true, reno_friendly: true }
    }
}

impl CubicParams {
    /// The parameters a [`TcpConfig`] selects.
    pub fn from_config(cfg: &TcpConfig) -> CubicParams {
        CubicParams {
            c: cfg.cubic_c,
            beta: cfg.cubic_beta,
            fast_convergence: cfg.cubic_fast_convergence,
            reno_friendly: cfg.cubic_reno_friendly,
        }
    }

    /// `alpha_cubic = 3 (1 - beta) / (1 + beta)` (RFC 9438 4.3): the additive increase, in
    /// segments per RTT, that gives AIMD(alpha, beta) Reno's average window.
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }
}

/// Where the last ACK of new data put the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// `cwnd < ssthresh` (also before the first ACK).
    SlowStart,
    /// `W_cubic(t) < W_est`: `cwnd = W_est` (RFC 9438 4.3).
    RenoFriendly,
    /// `cwnd < W_max` (RFC 9438 4.4).
    Concave,
    /// `cwnd >= W_max` (RFC 9438 4.5).
    Convex,
}

/// One congestion-avoidance stage. Windows in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    start: SimTime,
    /// `K`, seconds.
    k_s: f64,
    /// `cwnd` when the stage began.
    cwnd_epoch: f64,
    /// The Reno-friendly estimate `W_est`.
    w_est: f64,
}

/// RFC 9438 CUBIC.
#[derive(Clone, Debug, PartialEq)]
pub struct Cubic {
    p: CubicParams,
    alpha: f64,
    /// `W_max`, segments; 0 while unset (before any congestion event and after a timeout).
    w_max: f64,
    /// `cwnd_prior`: the window before the last reduction, segments.
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// Growth below one byte, carried to the next ACK.
    carry: f64,
    region: Region,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(CubicParams::default())
    }
}

impl Cubic {
    pub fn new(p: CubicParams) -> Cubic {
        Cubic { p, alpha: p.alpha(), w_max: 0.0, cwnd_prior: 0.0, epoch: None, carry: 0.0, region: Region::SlowStart }
    }

    pub fn params(&self) -> &CubicParams {
        &self.p
    }
    /// `W_max`, segments (0: unset).
    pub fn w_max_segs(&self) -> f64 {
        self.w_max
    }
    /// `cwnd_prior`, segments.
    pub fn cwnd_prior_segs(&self) -> f64 {
        self.cwnd_prior
    }
    /// `K` of the current epoch, seconds (`None` outside congestion avoidance).
    pub fn k_s(&self) -> Option<f64> {
        self.epoch.map(|e| e.k_s)
    }
    /// `W_est` of the current epoch, segments.
    pub fn w_est_segs(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est)
    }
    /// `cwnd_epoch` of the current epoch, segments.
    pub fn cwnd_epoch_segs(&self) -> Option<f64> {
        self.epoch.map(|e| e.cwnd_epoch)
    }
    /// The region of the last ACK of new data.
    pub fn region(&self) -> Region {
        self.region
    }

    /// `K = cbrt((W_max - cwnd_epoch) / C)`, seconds (RFC 9438 figure 2); 0 if
    /// `cwnd_epoch >= W_max`.
    pub fn k_for(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        if w_max > cwnd_epoch {
            cbrt((w_max - cwnd_epoch) / self.p.c)
        } else {
            0.0
        }
    }

    /// `W_cubic(t) = C (t - K)^3 + W_max`, segments, with this epoch's `K` and `W_max`
    /// (RFC 9438 figure 1); `t` in seconds since the epoch began.
    #[inline]
    pub fn w_cubic(&self, t_s: f64, k_s: f64) -> f64 {
        let d = t_s - k_s;
        self.p.c * d * d * d + self.w_max
    }

    /// The window in use at a loss, segments (see the module rules).
    fn loss_window(w: &Window, loss: &Loss) -> f64 {
        w.base_cwnd().min(loss.rwnd) as f64 / w.mss as f64
    }

    /// The loss with FlightSize bounded by the window without inflation (see the module
    /// rules: `ssthresh = beta * min(FlightSize, cwnd)`).
    fn bounded(w: &Window, loss: &Loss) -> Loss {
        Loss { flight: loss.flight.min(w.base_cwnd()), ..*loss }
    }

    /// RFC 9438 4.6-4.7: remember the window, lower `W_max` for fast convergence, end the epoch.
    fn congestion_event(&mut self, cwnd: f64) {
        self.w_max = if self.p.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + self.p.beta) / 2.0 } else { cwnd };
        self.cwnd_prior = cwnd;
        self.epoch = None;
        self.carry = 0.0;
    }

    /// Congestion avoidance for one ACK of new data (RFC 9438 4.2-4.5).
    fn avoid(&mut self, w: &mut Window, ev: &AckEvent) {
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let e = match self.epoch {
            Some(e) => e,
            None => {
                // 4.2, and 4.8 / Linux's origin point when W_max is unset or not above cwnd
                if self.w_max <= cwnd {
                    self.w_max = cwnd;
                }
                let e = Epoch { start: ev.now, k_s: self.k_for(self.w_max, cwnd), cwnd_epoch: cwnd, w_est: cwnd };
                self.carry = 0.0;
                self.epoch = Some(e);
                e
            }
        };
        let t = ev.now.saturating_since(e.start).as_secs_f64();
        if self.p.reno_friendly {
            // 4.3: W_est += alpha * segments_acked / cwnd; alpha = 1 once W_est >= cwnd_prior
            let alpha = if e.w_est >= self.cwnd_prior { 1.0 } else { self.alpha };
            let w_est = e.w_est + alpha * (ev.acked_bytes as f64 / mss) / cwnd;
            self.epoch = Some(Epoch { w_est, ..e });
            if self.w_cubic(t, e.k_s) < w_est {
                self.region = Region::RenoFriendly;
                w.cwnd = w.cwnd.max((w_est * mss) as u64);
                return;
            }
        }
        self.region = if cwnd < self.w_max { Region::Concave } else { Region::Convex };
        let rtt = ev.min_rtt.map_or(0.0, |r| r.as_secs_f64());
        // 4.2: the target one RTT ahead, between cwnd and 1.5 cwnd
        let target = self.w_cubic(t + rtt, e.k_s).max(cwnd).min(1.5 * cwnd);
        // 4.4 / 4.5: (target - cwnd) / cwnd per segment acknowledged, in bytes
        let grow = (target - cwnd) / cwnd * ev.acked_bytes as f64 + self.carry;
        let whole = grow.floor();
        self.carry = grow - whole;
        w.cwnd = w.cwnd.saturating_add(whole as u64);
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    #[inline]
    fn partial_ack_keeps_recovery(&self) -> bool {
        true
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if ev.acked_bytes == 0 {
            return;
        }
        if w.cwnd < w.ssthresh {
            self.region = Region::SlowStart;
            w.slow_start_or_avoid(ev.acked_bytes);
        } else {
            self.avoid(w, ev);
        }
    }
    fn on_enter_fast_recovery(&mut self, w: &mut Window, loss: &Loss, dupacks: u32) {
        self.congestion_event(Cubic::loss_window(w, loss));
        w.enter_recovery_by(&Cubic::bounded(w, loss), dupacks, Decrease::Beta(self.p.beta));
    }
    #[inline]
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        w.inflate();
    }
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) {
        w.deflate_partial(acked);
    }
    fn on_exit_recovery(&mut self, w: &mut Window, _flight: u64, acked: u64) {
        w.exit_recovery(acked);
    }
    fn on_timeout(&mut self, w: &mut Window, loss: &Loss) {
        self.cwnd_prior = Cubic::loss_window(w, loss);
        self.w_max = 0.0; // 4.8: the next epoch has K = 0 and W_max = cwnd_epoch
        self.epoch = None;
        self.carry = 0.0;
        w.timeout_by(&Cubic::bounded(w, loss), Decrease::Beta(self.p.beta));
    }
    /// RFC 9438 4.6: an ECN-Echo is a congestion event like a loss (no retransmission, no
    /// inflation).
    fn on_ecn_echo(&mut self, w: &mut Window, _ev: &AckEvent, loss: &Loss) {
        self.congestion_event(Cubic::loss_window(w, loss));
        w.ecn_reduce_by(&Cubic::bounded(w, loss), Decrease::Beta(self.p.beta));
    }
}

/// Cube root of `x` by Newton's method in IEEE-754 basic operations only, so that it gives the
/// same bits on every platform (libm's `cbrt` may differ in the last place between platforms).
/// 0 for `x <= 0` or NaN.
pub fn cbrt(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return 0.0;
    }
    if x.is_infinite() {
        return x;
    }
    // first guess: the exponent divided by three, within a few percent for normal numbers
    let mut y = f64::from_bits(x.to_bits() / 3 + 0x2A9F_7893_782D_A1CE);
    for _ in 0..64 {
        let next = y - (y * y * y - x) / (3.0 * y * y);
        if next == y {
            break;
        }
        y = next;
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    const MSS: u64 = 1000;

    fn ack_at(now: SimTime, acked: u64, min_rtt: SimDuration) -> AckEvent {
        AckEvent {
            now,
            acked_bytes: acked,
            flight_bytes: 0,
            rtt_sample: None,
            srtt: Some(min_rtt),
            min_rtt: Some(min_rtt),
            ece: false,
            ack: 0,
            snd_nxt: 0,
        }
    }
    fn no_rwnd(flight: u64) -> Loss {
        Loss { flight, rwnd: u64::MAX }
    }
    fn segs(w: &Window) -> f64 {
        w.cwnd as f64 / MSS as f64
    }

    /// A window of `segments` in congestion avoidance after a loss there (W_max = segments,
    /// cwnd = beta * segments), and the CUBIC that saw it.
    fn after_loss(p: CubicParams, segments: u64) -> (Cubic, Window) {
        let mut c = Cubic::new(p);
        let mut w = Window::new(MSS, 1);
        w.cwnd = segments * MSS;
        c.on_enter_fast_recovery(&mut w, &no_rwnd(segments * MSS), 3);
        c.on_exit_recovery(&mut w, 0, MSS);
        (c, w)
    }

    /// Drives `c` with an ACK clock: per round trip of `rtt`, one ACK of one segment per
    /// segment of cwnd, evenly spread. Calls `probe(t_s, cubic, window)` after every ACK,
    /// with `t_s` the time since `t0`; stops after `dur`.
    fn ack_clock(c: &mut Cubic, w: &mut Window, t0: SimTime, rtt: SimDuration, dur: SimDuration, mut probe: impl FnMut(f64, &Cubic, &Window)) {
        let mut now = t0;
        while now < t0 + dur {
            let n = (w.cwnd / MSS).max(1);
            let gap = SimDuration(rtt.0 / n);
            for _ in 0..n {
                now = now + gap;
                c.on_ack(w, &ack_at(now, MSS, rtt));
                probe(now.saturating_since(t0).as_secs_f64(), c, w);
            }
        }
    }

    // --- parameters and the cube root --------------------------------------------------------
    #[test]
    fn defaults_are_rfc_9438() {
        let p = CubicParams::default();
        assert_eq!((p.c, p.beta, p.fast_convergence, p.reno_friendly), (0.4, 0.7, true, true));
        assert!((p.alpha() - 0.9 / 1.7).abs() < 1e-15);
        assert_eq!(CubicParams::from_config(&TcpConfig::default()), p);
        assert_eq!(Cubic::default().name(), "cubic");
        assert!(Cubic::default().partial_ack_keeps_recovery());
    }

    #[test]
    fn cube_root_is_exact_to_the_last_bits() {
        for &x in &[1e-12, 1e-3, 0.5, 1.0, 2.0, 8.0, 27.0, 75.0, 1000.0, 123_456.789, 1e15, 1e300] {
            let (mine, libm) = (cbrt(x), x.cbrt());
            assert!((mine - libm).abs() <= 2.0 * f64::EPSILON * libm, "cbrt({x}) = {mine}, libm {libm}");
        }
        assert_eq!(cbrt(27.0), 3.0);
        assert_eq!(cbrt(1000.0), 10.0);
        assert_eq!((cbrt(0.0), cbrt(-8.0), cbrt(f64::NAN)), (0.0, 0.0, 0.0));
    }

    // --- K and the curve ------------------------------------------------------------------------
    #[test]
    fn k_for_a_known_w_max() {
        let c = Cubic::default();
        // W_max 100 segments, cwnd_epoch = beta * W_max = 70: K = cbrt(30 / 0.4) = cbrt(75)
        assert!((c.k_for(100.0, 70.0) - 4.217_163_326_508_746).abs() < 1e-12);
        // W_max 1000, cwnd 700 (C = 0.4): cbrt(750) = 9.0856...
        assert!((c.k_for(1000.0, 700.0) - 9.085_602_964_160_698).abs() < 1e-12);
        // 32 segments below W_max at C = 0.5: exactly 4 s
        assert_eq!(Cubic::new(CubicParams { c: 0.5, ..Default::default() }).k_for(132.0, 100.0), 4.0);
        assert_eq!(c.k_for(50.0, 60.0), 0.0, "cwnd_epoch above W_max");
        // and the epoch takes it: the first ACK in congestion avoidance after a loss at 100
        let (mut c, mut w) = after_loss(CubicParams::default(), 100);
        c.on_ack(&mut w, &ack_at(SimTime::from_secs_f64(1.0), MSS, SimDuration::from_ms(100)));
        assert!((c.k_s().unwrap() - 75f64.cbrt()).abs() < 1e-12);
        assert_eq!(c.cwnd_epoch_segs(), Some(70.0));
    }

    #[test]
    fn the_curve_starts_at_cwnd_epoch_and_reaches_w_max_at_k() {
        let (mut c, mut w) = after_loss(CubicParams::default(), 100);
        c.on_ack(&mut w, &ack_at(SimTime::ZERO, MSS, SimDuration::ZERO));
        let k = c.k_s().unwrap();
        assert!((c.w_cubic(0.0, k) - 70.0).abs() < 1e-12);
        assert!((c.w_cubic(k, k) - 100.0).abs() < 1e-12);
        // symmetric about the plateau: C (t - K)^3 on either side
        assert!((c.w_cubic(k + 2.0, k) - (100.0 + 0.4 * 8.0)).abs() < 1e-12);
        assert!((c.w_cubic(k - 2.0, k) - (100.0 - 0.4 * 8.0)).abs() < 1e-12);
    }

    // --- multiplicative decrease (4.6) ----------------------------------------------------------
    #[test]
    fn cwnd_right_after_a_loss_is_beta_times_the_window() {
        let mut c = Cubic::default();
        let mut w = Window::new(MSS, 100);
        c.on_enter_fast_recovery(&mut w, &no_rwnd(100 * MSS), 3);
        assert_eq!(w.ssthresh, 70 * MSS);
        assert_eq!((w.cwnd, w.inflation), (73 * MSS, 3 * MSS), "ssthresh plus the inflation");
        assert_eq!((c.w_max_segs(), c.cwnd_prior_segs()), (100.0, 100.0));
        c.on_dupack_in_recovery(&mut w);
        c.on_exit_recovery(&mut w, 50 * MSS, MSS);
        assert_eq!(w.cwnd, 70 * MSS);
        // at least two segments
        let mut w = Window::new(MSS, 2);
        c.on_enter_fast_recovery(&mut w, &no_rwnd(2 * MSS), 3);
        assert_eq!(w.ssthresh, 2 * MSS);
        // beta is a parameter; bytes are rounded down
        let mut c = Cubic::new(CubicParams { beta: 0.8, ..Default::default() });
        let mut w = Window::new(MSS, 11);
        c.on_enter_fast_recovery(&mut w, &no_rwnd(10 * MSS + 7), 3);
        assert_eq!(w.ssthresh, 8005);
        // ns-2's rules: beta of min(cwnd, rwnd) in whole segments; beta of the window on entry
        let rules = super::super::WindowRules {
            ssthresh_from: super::super::SsthreshFrom::Cwnd,
            recovery_cwnd: super::super::RecoveryCwnd::HalfWindow,
            recovery_exit: super::super::RecoveryExit::Deflated,
        };
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 10_500, ..Window::with_rules(MSS, 1, rules) };
        c.on_enter_fast_recovery(&mut w, &no_rwnd(9 * MSS), 3);
        assert_eq!((w.ssthresh, w.cwnd), (7 * MSS, 7350 + 3 * MSS));
        // the receive window bounds the window in use, so W_max too
        let mut c = Cubic::default();
        let mut w = Window::new(MSS, 50);
        c.on_enter_fast_recovery(&mut w, &Loss { flight: 20 * MSS, rwnd: 20 * MSS }, 3);
        assert_eq!((c.w_max_segs(), w.ssthresh), (20.0, 14 * MSS));
    }

    #[test]
    fn ssthresh_is_beta_times_the_window_when_flight_exceeds_it() {
        // after a long NewReno recovery FlightSize counts everything sent behind the holes:
        // 160 segments outstanding on a path that holds 21, and cwnd = 28 segments. beta of
        // FlightSize would reopen the window to 112 segments; beta of cwnd gives 19.6
        let mut c = Cubic::default();
        let mut w = Window::new(MSS, 28);
        c.on_enter_fast_recovery(&mut w, &no_rwnd(160 * MSS), 3);
        assert_eq!(w.ssthresh, 19_600);
        let mut w = Window::new(MSS, 28);
        c.on_timeout(&mut w, &no_rwnd(160 * MSS));
        assert_eq!((w.ssthresh, w.cwnd), (19_600, MSS));
        // a flight below cwnd (limited by the application or rwnd) is what counts
        let mut w = Window::new(MSS, 28);
        c.on_enter_fast_recovery(&mut w, &no_rwnd(10 * MSS), 3);
        assert_eq!(w.ssthresh, 7 * MSS);
    }

    // --- growth: the closed form ----------------------------------------------------------------
    #[test]
    fn one_ack_grows_by_the_rfc_increment_exactly() {
        let (mut c, mut w) = after_loss(CubicParams { reno_friendly: false, ..Default::default() }, 100);
        let rtt = SimDuration::from_ms(100);
        c.on_ack(&mut w, &ack_at(SimTime::ZERO, MSS, rtt)); // starts the epoch at 0
        let before = segs(&w);
        let (t, k) = (1.5, c.k_s().unwrap());
        let target = c.w_cubic(t + 0.1, k);
        c.on_ack(&mut w, &ack_at(SimTime::from_secs_f64(t), MSS, rtt));
        let expect = before + (target - before) / before; // segments, before the byte floor
        assert!((segs(&w) - expect).abs() < 1.0 / MSS as f64, "{} vs {expect}", segs(&w));
        assert_eq!(c.region(), Region::Concave);
        // the target is capped at 1.5 cwnd: far past K, one ACK adds at most half a segment
        c.on_ack(&mut w, &ack_at(SimTime::from_secs_f64(100.0), MSS, rtt));
        assert_eq!(c.region(), Region::Concave, "cwnd still below W_max");
        let cw = segs(&w);
        c.on_ack(&mut w, &ack_at(SimTime::from_secs_f64(100.0), MSS, rtt));
        assert!((segs(&w) - cw - 0.5).abs() < 1.0 / MSS as f64);
    }

    #[test]
    fn the_trajectory_follows_the_closed_form() {
        // W_max 1000 segments, 100 ms RTT, ACK-clocked (one ACK per segment): cwnd follows
        // W_cubic(t + RTT) with a lag of about one RTT, which the look-ahead compensates, so
        // cwnd(t) tracks W_cubic(t) through the concave region, the plateau at K = 9.09 s and
        // the convex region. Observed: within 0.17 segment (of 700 to 1024) at every point,
        // the largest early in the concave region where the curve bends most.
        let (mut c, mut w) = after_loss(CubicParams::default(), 1000);
        let rtt = SimDuration::from_ms(100);
        c.on_ack(&mut w, &ack_at(SimTime::ZERO, MSS, rtt));
        let k = c.k_s().unwrap();
        let curve = c.clone();
        let checkpoints = [0.5, 2.0, 4.0, 6.0, 8.0, k, 10.0, 12.0, 13.0];
        let mut next = 0;
        ack_clock(&mut c, &mut w, SimTime::ZERO, rtt, SimDuration::from_secs(13), |t, c, w| {
            assert_ne!(c.region(), Region::RenoFriendly, "at {t} s");
            if next < checkpoints.len() && t >= checkpoints[next] {
                let want = curve.w_cubic(t, k);
                assert!((segs(w) - want).abs() < 0.2, "t = {t}: cwnd {} vs W_cubic {want}", segs(w));
                next += 1;
            }
        });
        assert_eq!(next, checkpoints.len());
        assert!(segs(&w) > 1020.0);
    }

    #[test]
    fn concave_then_plateau_at_w_max_then_convex() {
        let (mut c, mut w) = after_loss(CubicParams::default(), 1000);
        let rtt = SimDuration::from_ms(100);
        c.on_ack(&mut w, &ack_at(SimTime::ZERO, MSS, rtt));
        let k = c.k_s().unwrap();
        let curve = c.clone();
        let curve_at = |t: f64| curve.w_cubic(t, k);
        // (time, cwnd, region) after every ACK
        let mut trace = Vec::new();
        ack_clock(&mut c, &mut w, SimTime::ZERO, rtt, SimDuration::from_secs_f64(k + 4.0), |t, c, w| {
            trace.push((t, segs(w), c.region()))
        });
        let at = |t: f64| *trace.iter().find(|x| x.0 >= t).unwrap();
        // concave below W_max, convex above; the switch within one RTT of K
        assert!(trace.iter().filter(|x| x.0 < k - 0.1).all(|x| x.2 == Region::Concave));
        assert!(trace.iter().filter(|x| x.0 > k + 0.1).all(|x| x.2 == Region::Convex));
        // fast at first: the first second brings back 88 of the 300 segments lost
        let first = at(1.0).1 - 700.0;
        assert!((first - (curve_at(1.0) - 700.0)).abs() < 0.5, "{first}");
        // the plateau: one second around K moves cwnd by less than a segment, next to W_max
        let (before, after) = (at(k - 0.5).1, at(k + 0.5).1);
        assert!((before - 1000.0).abs() < 1.0 && (after - 1000.0).abs() < 1.0, "{before} {after}");
        assert!(after - before < 1.0);
        // then accelerating: +0.4 * 3^3 = 10.8 segments three seconds past the plateau
        let late = at(k + 3.0).1;
        assert!((late - 1010.8).abs() < 0.2, "{late}");
    }

    // --- fast convergence (4.7) -----------------------------------------------------------------
    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fc, expect) in [(true, 80.0 * 1.7 / 2.0), (false, 80.0)] {
            let (mut c, mut w) = after_loss(CubicParams { fast_convergence: fc, ..Default::default() }, 100);
            assert_eq!(c.w_max_segs(), 100.0);
            // a second loss below the old W_max (another flow took bandwidth)
            w.cwnd = 80 * MSS;
            c.on_enter_fast_recovery(&mut w, &no_rwnd(80 * MSS), 3);
            assert!((c.w_max_segs() - expect).abs() < 1e-12, "fast_convergence = {fc}");
            assert_eq!((c.cwnd_prior_segs(), w.ssthresh), (80.0, 56 * MSS));
            // a loss above W_max remembers the window as it is
            w.cwnd = 120 * MSS;
            w.inflation = 0;
            c.on_enter_fast_recovery(&mut w, &no_rwnd(120 * MSS), 3);
            assert_eq!(c.w_max_segs(), 120.0);
        }
    }

    // --- the Reno-friendly region (4.3) ---------------------------------------------------------
    #[test]
    fn the_reno_friendly_region_dominates_at_data_center_rtts() {
        // 100 us RTT, W_max 20 segments: K = cbrt(6 / 0.4) = 2.47 s, so for the first 50 RTTs
        // (5 ms) the cubic curve barely moves and W_est rules: alpha = 0.53 segments per RTT up
        // to cwnd_prior = 20, then 1 segment per RTT, as Reno
        let rtt = SimDuration::from_us(100);
        let (mut c, mut w) = after_loss(CubicParams::default(), 20);
        c.on_ack(&mut w, &ack_at(SimTime::ZERO, MSS, rtt));
        let mut trace = Vec::new();
        ack_clock(&mut c, &mut w, SimTime::ZERO, rtt, SimDuration::from_ms(5), |t, c, w| {
            assert_eq!(c.region(), Region::RenoFriendly);
            trace.push((t, segs(w)));
        });
        let at = |t: f64| trace.iter().find(|x| x.0 >= t).unwrap().1;
        let alpha = CubicParams::default().alpha();
        assert!((at(0.001) - (14.0 + 10.0 * alpha)).abs() < 0.5, "{} after 10 RTTs", at(0.001));
        let late_rate = (at(0.005) - at(0.004)) / 10.0;
        assert!((late_rate - 1.0).abs() < 0.1, "{late_rate} segments per RTT above cwnd_prior");
        // without the Reno-friendly region, CUBIC alone stays near cwnd_epoch for those 5 ms
        let (mut c, mut w) = after_loss(CubicParams { reno_friendly: false, ..Default::default() }, 20);
        c.on_ack(&mut w, &ack_at(SimTime::ZERO, MSS, rtt));
        ack_clock(&mut c, &mut w, SimTime::ZERO, rtt, SimDuration::from_ms(5), |_, _, _| {});
        assert!(segs(&w) < 14.2, "{}", segs(&w));
    }

    #[test]
    fn at_long_rtts_the_cubic_curve_dominates() {
        // the same loss at 1000 segments, 100 ms RTT: W_est gains 0.53 segments per RTT, the
        // curve hundreds per second
        let (mut c, mut w) = after_loss(CubicParams::default(), 1000);
        let rtt = SimDuration::from_ms(100);
        c.on_ack(&mut w, &ack_at(SimTime::ZERO, MSS, rtt));
        ack_clock(&mut c, &mut w, SimTime::ZERO, rtt, SimDuration::from_secs(2), |t, c, _| {
            assert_ne!(c.region(), Region::RenoFriendly, "at {t} s");
        });
        let w_est = c.w_est_segs().unwrap();
        assert!(w_est < 712.0 && segs(&w) > 850.0, "W_est {w_est}, cwnd {}", segs(&w));
    }

    // --- slow start and timeouts (4.8, 4.10) ----------------------------------------------------
    #[test]
    fn slow_start_is_reno_below_ssthresh() {
        let mut c = Cubic::default();
        let mut w = Window::new(MSS, 2);
        let mut r = Window::new(MSS, 2);
        for i in 0..50 {
            let ev = ack_at(SimTime(i), if i % 3 == 0 { 2 * MSS } else { 700 }, SimDuration::from_us(100));
            c.on_ack(&mut w, &ev);
            super::super::Reno.on_ack(&mut r, &ev);
            assert_eq!(w, r);
        }
        assert_eq!(c.region(), Region::SlowStart);
        assert_eq!(c.k_s(), None);
    }

    #[test]
    fn a_timeout_resets_the_curve() {
        let rtt = SimDuration::from_ms(10);
        let (mut c, mut w) = after_loss(CubicParams::default(), 100);
        ack_clock(&mut c, &mut w, SimTime::ZERO, rtt, SimDuration::from_secs(1), |_, _, _| {});
        let cwnd = w.cwnd;
        c.on_timeout(&mut w, &no_rwnd(60 * MSS));
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 42 * MSS), "one segment; ssthresh = beta * FlightSize");
        assert_eq!((c.k_s(), c.w_max_segs()), (None, 0.0));
        assert_eq!(c.cwnd_prior_segs(), cwnd as f64 / MSS as f64);
        // slow start back to ssthresh, then an epoch with K = 0 and W_max = W_est = cwnd_epoch
        let t0 = SimTime::from_secs_f64(2.0);
        let mut now = t0;
        while c.k_s().is_none() {
            now = now + SimDuration::from_us(100);
            c.on_ack(&mut w, &ack_at(now, MSS, rtt));
        }
        assert_eq!(c.k_s(), Some(0.0));
        assert_eq!(c.cwnd_epoch_segs(), Some(42.0));
        assert_eq!(c.w_max_segs(), 42.0);
        // the next loss after it: cwnd has grown from W_max, so no fast convergence
        let before = segs(&w);
        assert!(before > 42.0);
        let flight = w.cwnd;
        c.on_enter_fast_recovery(&mut w, &no_rwnd(flight), 3);
        assert_eq!(c.w_max_segs(), before);
    }

    #[test]
    fn a_duplicate_ack_changes_nothing() {
        let (mut c, mut w) = after_loss(CubicParams::default(), 100);
        let before = (c.clone(), w);
        c.on_ack(&mut w, &ack_at(SimTime::from_secs_f64(1.0), 0, SimDuration::from_ms(1)));
        assert_eq!((c, w), before);
    }

    // --- end to end -------------------------------------------------------------------------------
    mod end_to_end {
        use crate::tcp::testnet::{Dir, Net};
        use crate::tcp::{CcKind, TcpConfig};
        use crate::time::{BitsPerSec, SimDuration, SimTime};

        const MSS: u64 = 1460;

        fn cubic() -> TcpConfig {
            TcpConfig { cc: CcKind::Cubic, handshake: false, ..Default::default() }
        }

        #[test]
        fn cubic_repairs_losses_and_delivers_every_byte() {
            for lost in [&[30u64][..], &[30, 33], &[4, 5, 6, 7, 8], &[0, 2, 9, 10, 30, 31]] {
                let mut net = Net::new(&cubic(), Some(300 * MSS), SimDuration::from_us(50));
                let mut pending: Vec<u64> = lost.iter().map(|k| k * MSS).collect();
                net.drop = Box::new(move |p, dir, _| {
                    if dir == Dir::Fwd && p.payload > 0 {
                        if let Some(i) = pending.iter().position(|&s| s == p.seq) {
                            pending.swap_remove(i);
                            return true;
                        }
                    }
                    false
                });
                net.start();
                net.run(SimTime::MAX, 5_000_000);
                assert!(net.snd.is_done(), "lost {lost:?}");
                assert_eq!(net.rcv.delivered_bytes(), 300 * MSS);
                assert_eq!(net.snd.cc_name(), "cubic");
            }
        }

        #[test]
        fn cubic_fills_a_bottleneck_and_backs_off_by_beta() {
            // 100 Mbps, 20-packet drop-tail buffer, 100 us base RTT, 1 MB receive window
            let cfg = TcpConfig { rcv_buf_bytes: 1 << 20, ..cubic() };
            let mut net = Net::new(&cfg, None, SimDuration::from_us(50));
            net.rate = Some(BitsPerSec(100_000_000));
            net.queue_limit = Some(20);
            net.start();
            net.run(SimTime::from_secs_f64(2.0), 50_000_000);
            let got = net.rcv.delivered_bytes();
            // 100 Mbps for 2 s = 16.7 k full segments (1500 B on the wire); allow the start
            assert!(got as f64 > 0.95 * 2.0 * 100e6 / 8.0 * 1460.0 / 1500.0, "{got}");
            let st = net.snd.stats();
            assert!(st.fast_retransmits > 5 && st.timeouts == 0, "{st:?}");
            // after the losses: ssthresh is beta times a window of about BDP + buffer (28 segs)
            let ss = net.snd.ssthresh_bytes() as f64 / MSS as f64;
            assert!(ss > 0.7 * 20.0 && ss < 0.7 * 40.0, "ssthresh {ss} segments");
        }
    }
}
