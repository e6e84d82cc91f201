//! DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, §3): the rate of a RoCEv2 sender, cut on each CNP and
//! recovered by a timer and a byte counter. The notification point (CNPs from CE marks) is the
//! receiver's (`receiver.rs`); the congestion point is any ECN-marking discipline of the ports.
//!
//! Rules (parameters: `[roce.dcqcn]`, [`DcqcnConfig`], `docs/mechanisms/dcqcn.md`):
//! - The current rate Rc and the target rate Rt start at line rate; alpha at `alpha_init`.
//! - A CNP cuts: Rt = Rc, Rc = max(min_rate, Rc (1 - alpha/2)), then alpha = (1 - g) alpha + g
//!   (at most one cut per `rate_decrease_interval_us` when it is not 0; alpha rises on every
//!   CNP). A cut resets both increase counters and restarts the increase timer.
//! - Alpha decays: alpha = (1 - g) alpha after every `alpha_timer_us` (K) without a CNP,
//!   counted from the last CNP. It is kept lazily (the decays due are applied when alpha is
//!   read), so it needs no event.
//! - Rate increase events: the timer fires every `increase_timer_us` (T) after a cut, the byte
//!   counter after every `byte_counter_bytes` (B) sent; each adds one to its own counter (t,
//!   bc). Then, with F = `fast_recovery_steps`: while max(t, bc) <= F, fast recovery, Rc =
//!   (Rt + Rc) / 2; once both exceed F, hyper increase, Rt += i R_HAI with i = min(t, bc) - F,
//!   Rc = (Rt + Rc) / 2; otherwise additive increase, Rt += R_AI, Rc = (Rt + Rc) / 2. Rt and
//!   Rc never exceed line rate.
//! - Before the first CNP nothing runs (the rate is line rate); the increase timer stops when
//!   Rc is back at line rate. The sender asks for [`Dcqcn::next_event`] only while it has
//!   data, and restarts the timer from `now` when it gets data again ([`Dcqcn::resume`]).
//! - Two options follow Mellanox's DCQCN (the HPCC authors' fork): `clamp_target_rate = false`
//!   sets Rt = Rc only on a cut after an increase event; `timer_only = true` counts the stages
//!   by the timer alone (no byte counter): fast recovery while t <= F, an additive step at
//!   t = F + 1, then R_HAI once per step.
//! - Rates are `f64` bits per second (the control law's arithmetic); pacing converts them to
//!   an integer [`BitsPerSec`](crate::time::BitsPerSec) once per packet.

use super::config::DcqcnConfig;
use crate::time::{SimDuration, SimTime};

/// The reaction point of one flow.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    g: f64,
    k: SimDuration,
    t: SimDuration,
    b: u64,
    f: u32,
    rai: f64,
    rhai: f64,
    min_rate: f64,
    dec_interval: SimDuration,
    clamp: bool,
    timer_only: bool,
    line: f64,
    /// Current rate Rc, bits/s.
    rc: f64,
    /// Target rate Rt, bits/s.
    rt: f64,
    /// Alpha as of `alpha_anchor` (decays due after it not yet applied).
    alpha: f64,
    alpha_anchor: Option<SimTime>,
    next_increase: Option<SimTime>,
    /// Timer and byte-counter events since the last cut.
    t_stage: u32,
    bc_stage: u32,
    /// Bytes sent since the byte counter last fired.
    bytes: u64,
    last_cut: Option<SimTime>,
    /// Rate cuts made.
    pub cuts: u64,
    /// CNPs received.
    pub cnps: u64,
}

impl Dcqcn {
    /// A reaction point for a sender of line rate `line_bps`.
    pub fn new(cfg: &DcqcnConfig, line_bps: f64) -> Dcqcn {
        let us = |v: f64| SimDuration::from_secs_f64(v * 1e-6);
        Dcqcn {
            g: cfg.g,
            k: us(cfg.alpha_timer_us),
            t: us(cfg.increase_timer_us),
            b: cfg.byte_counter_bytes,
            f: cfg.fast_recovery_steps,
            rai: cfg.rai_mbps * 1e6,
            rhai: cfg.rhai_mbps * 1e6,
            min_rate: (cfg.min_rate_mbps * 1e6).min(line_bps),
            dec_interval: us(cfg.rate_decrease_interval_us),
            clamp: cfg.clamp_target_rate,
            timer_only: cfg.timer_only,
            line: line_bps,
            rc: line_bps,
            rt: line_bps,
            alpha: cfg.alpha_init,
            alpha_anchor: None,
            next_increase: None,
            t_stage: 0,
            bc_stage: 0,
            bytes: 0,
            last_cut: None,
            cuts: 0,
            cnps: 0,
        }
    }

    /// The current rate Rc, bits/s.
    pub fn rate(&self) -> f64 {
        self.rc
    }

    /// The target rate Rt, bits/s.
    pub fn target(&self) -> f64 {
        self.rt
    }

    /// Alpha at `now`, with the decays due by then.
    pub fn alpha(&self, now: SimTime) -> f64 {
        let (a, _) = self.decayed(now);
        a
    }

    /// Alpha and its anchor at `now`: one factor (1 - g) per whole K since the anchor.
    fn decayed(&self, now: SimTime) -> (f64, Option<SimTime>) {
        match self.alpha_anchor {
            Some(at) if self.k.0 > 0 => {
                let n = now.saturating_since(at).0 / self.k.0;
                let a = self.alpha * (1.0 - self.g).powi(n.min(i32::MAX as u64) as i32);
                (a, Some(at + SimDuration(n * self.k.0)))
            }
            other => (self.alpha, other),
        }
    }

    /// A CNP reached the sender at `now`; returns whether the rate was cut.
    pub fn on_cnp(&mut self, now: SimTime) -> bool {
        self.cnps += 1;
        let (alpha, _) = self.decayed(now);
        let cut = self.dec_interval.0 == 0 || self.last_cut.is_none_or(|t| now >= t + self.dec_interval);
        if cut {
            if self.clamp || self.t_stage + self.bc_stage > 0 {
                self.rt = self.rc;
            }
            self.rc = (self.rc * (1.0 - alpha / 2.0)).max(self.min_rate);
            self.t_stage = 0;
            self.bc_stage = 0;
            self.bytes = 0;
            self.next_increase = Some(now + self.t);
            self.last_cut = Some(now);
            self.cuts += 1;
        }
        self.alpha = (1.0 - self.g) * alpha + self.g;
        self.alpha_anchor = Some(now);
        cut
    }

    /// `bytes` left the sender at `now`: the byte counter.
    pub fn on_sent(&mut self, bytes: u64, now: SimTime) {
        if self.timer_only || self.last_cut.is_none() || self.rc >= self.line {
            return;
        }
        let _ = now;
        self.bytes += bytes;
        while self.bytes >= self.b {
            self.bytes -= self.b;
            self.bc_stage = self.bc_stage.saturating_add(1);
            self.increase();
        }
    }

    /// When the increase timer fires next, if it runs.
    pub fn next_event(&self) -> Option<SimTime> {
        self.next_increase
    }

    /// Applies the increase-timer events due by `now`.
    pub fn on_timer(&mut self, now: SimTime) {
        while let Some(at) = self.next_increase {
            if at > now {
                break;
            }
            self.t_stage = self.t_stage.saturating_add(1);
            self.increase();
            self.next_increase = if self.rc >= self.line { None } else { Some(at + self.t) };
        }
    }

    /// The sender has data again at `now` after an idle time: a timer left behind restarts
    /// from `now` (no increases for the idle time).
    pub fn resume(&mut self, now: SimTime) {
        if let Some(at) = self.next_increase {
            if at < now {
                self.next_increase = Some(now + self.t);
            }
        }
    }

    /// One rate-increase event (module rules).
    fn increase(&mut self) {
        let (t, bc, f) = (self.t_stage, self.bc_stage, self.f);
        if self.timer_only {
            // the timer's stages alone: fast recovery up to F, one additive step, then hyper
            if t == f + 1 {
                self.rt = (self.rt + self.rai).min(self.line);
            } else if t > f + 1 {
                self.rt = (self.rt + self.rhai).min(self.line);
            }
        } else if t.max(bc) <= f {
            // fast recovery: towards the rate before the cut
        } else if t.min(bc) > f {
            let i = (t.min(bc) - f) as f64;
            self.rt = (self.rt + i * self.rhai).min(self.line);
        } else {
            self.rt = (self.rt + self.rai).min(self.line);
        }
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
        if self.rc >= self.line {
            self.next_increase = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: f64 = 100e9;

    fn us(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_us(v)
    }

    fn rp() -> Dcqcn {
        Dcqcn::new(&DcqcnConfig::default(), LINE)
    }

    // --- the cut --------------------------------------------------------------------------
    #[test]
    fn a_cnp_cuts_by_half_alpha_and_raises_alpha() {
        let mut d = rp();
        assert_eq!((d.rate(), d.target(), d.alpha(us(0))), (LINE, LINE, 1.0));
        assert!(d.on_cnp(us(10)));
        // alpha 1: Rc halves, Rt keeps the old rate; alpha = (1 - g) 1 + g = 1
        assert_eq!((d.rate(), d.target()), (LINE / 2.0, LINE));
        assert_eq!(d.alpha(us(10)), 1.0);
        // a second CNP at once: Rt = Rc = 50G, Rc = 25G
        assert!(d.on_cnp(us(11)));
        assert_eq!((d.rate(), d.target(), d.cuts), (LINE / 4.0, LINE / 2.0, 2));
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_k_without_cnp_and_the_cut_uses_it() {
        let cfg = DcqcnConfig { alpha_init: 0.5, ..Default::default() };
        let mut d = Dcqcn::new(&cfg, LINE);
        let g = cfg.g;
        d.on_cnp(us(0));
        let a0 = (1.0 - g) * 0.5 + g;
        assert!((d.alpha(us(0)) - a0).abs() < 1e-15);
        assert!((d.alpha(us(54)) - a0).abs() < 1e-15, "no decay before K = 55 us");
        assert!((d.alpha(us(55)) - a0 * (1.0 - g)).abs() < 1e-15);
        assert!((d.alpha(us(550)) - a0 * (1.0 - g).powi(10)).abs() < 1e-15);
        // a CNP at 120 us cuts with alpha decayed twice
        let rc = d.rate();
        let a = a0 * (1.0 - g).powi(2);
        d.on_cnp(us(120));
        assert!((d.rate() - rc * (1.0 - a / 2.0)).abs() < 1.0);
        assert!((d.alpha(us(120)) - ((1.0 - g) * a + g)).abs() < 1e-15);
        assert!((d.alpha(us(174)) - d.alpha(us(120))).abs() < 1e-15, "K counts from the last CNP");
    }

    #[test]
    fn the_rate_never_falls_below_the_minimum() {
        let mut d = rp();
        for i in 0..100 {
            d.on_cnp(us(i));
        }
        assert_eq!(d.rate(), 100e6);
    }

    #[test]
    fn a_decrease_interval_allows_one_cut_per_interval() {
        let cfg = DcqcnConfig { rate_decrease_interval_us: 50.0, ..Default::default() };
        let mut d = Dcqcn::new(&cfg, LINE);
        assert!(d.on_cnp(us(0)));
        assert!(!d.on_cnp(us(20)), "within 50 us of the last cut");
        assert_eq!(d.rate(), LINE / 2.0);
        assert!(d.on_cnp(us(50)));
        assert_eq!((d.cuts, d.cnps), (2, 3));
    }

    // --- the increase -----------------------------------------------------------------------
    #[test]
    fn fast_recovery_halves_the_distance_to_rt_f_times_then_additive_increase() {
        let mut d = rp();
        d.on_cnp(us(0));
        d.on_cnp(us(0));
        let (rt, mut rc) = (d.target(), d.rate());
        assert_eq!((rt, rc), (LINE / 2.0, LINE / 4.0));
        assert_eq!(d.next_event(), Some(us(55)));
        for k in 1..=5 {
            d.on_timer(us(55 * k));
            rc = (rt + rc) / 2.0;
            assert_eq!((d.target(), d.rate()), (rt, rc), "fast recovery step {k}");
        }
        // the 6th event: additive increase of Rt by R_AI = 40 Mbps
        d.on_timer(us(330));
        let rt2 = rt + 40e6;
        assert_eq!((d.target(), d.rate()), (rt2, (rt2 + rc) / 2.0));
        assert_eq!(d.next_event(), Some(us(385)));
    }

    #[test]
    fn timer_events_alone_never_reach_hyper_increase_and_both_counters_do() {
        // a 10 Gbit/s sender, cut twice: Rt = 5 G, Rc = 2.5 G
        let cfg = DcqcnConfig { byte_counter_bytes: 1000, ..Default::default() };
        let mut d = Dcqcn::new(&cfg, 10e9);
        d.on_cnp(us(0));
        d.on_cnp(us(0));
        assert_eq!((d.target(), d.rate()), (5e9, 2.5e9));
        // 7 timer events: 5 fast recovery, then additive (bc = 0 <= F)
        d.on_timer(us(7 * 55));
        let mut rc = 2.5e9;
        for _ in 0..5 {
            rc = (5e9 + rc) / 2.0;
        }
        let mut rt = 5e9;
        for _ in 0..2 {
            rt += 40e6;
            rc = (rt + rc) / 2.0;
        }
        assert!((d.target() - rt).abs() < 1e-3 && (d.rate() - rc).abs() < 1e-3, "{} {}", d.target(), d.rate());
        // 6 byte-counter events: bc 1..5 keep max(t, bc) = t = 7 > F: additive; bc = 6 > F
        // with t = 7 > F: hyper, i = min(7, 6) - 5 = 1
        for _ in 0..5 {
            d.on_sent(1000, us(400));
            rt += 40e6;
            rc = (rt + rc) / 2.0;
        }
        d.on_sent(1000, us(400));
        rt += 100e6;
        rc = (rt + rc) / 2.0;
        assert!((d.target() - rt).abs() < 1e-3 && (d.rate() - rc).abs() < 1e-3, "{} {}", d.target(), d.rate());
    }

    #[test]
    fn the_timer_stops_at_line_rate_and_restarts_after_idle() {
        let mut d = Dcqcn::new(&DcqcnConfig { rai_mbps: 1000.0, ..Default::default() }, 1e9);
        d.on_cnp(us(0));
        d.on_timer(us(100_000));
        assert_eq!((d.rate(), d.next_event()), (1e9, None));
        // alpha has decayed for 100 ms: this cut is small
        d.on_cnp(us(200_000));
        let rc = d.rate();
        assert!(rc < 1e9 && rc > 0.99e9, "{rc}");
        d.resume(us(300_000));
        assert_eq!(d.next_event(), Some(us(300_055)), "idle time gives no increases");
        assert_eq!(d.rate(), rc);
    }

    // --- Mellanox's options (the HPCC fork) -------------------------------------------------
    #[test]
    fn without_clamping_cuts_in_a_row_keep_the_old_target() {
        let mut d = Dcqcn::new(&DcqcnConfig { clamp_target_rate: false, ..DcqcnConfig::default() }, LINE);
        d.on_cnp(us(10));
        d.on_cnp(us(11));
        assert_eq!((d.rate(), d.target()), (LINE / 4.0, LINE), "no increase between the cuts: Rt stays");
        d.on_timer(us(11 + 55));
        let rc = d.rate();
        d.on_cnp(us(70));
        assert_eq!(d.target(), rc, "a cut after an increase event sets Rt = Rc");
    }

    #[test]
    fn timer_only_stages_recover_then_add_then_hyper_add_once_per_step() {
        let cfg = DcqcnConfig { timer_only: true, fast_recovery_steps: 1, rai_mbps: 20.0, rhai_mbps: 200.0, ..DcqcnConfig::default() };
        let mut d = Dcqcn::new(&cfg, LINE);
        d.on_cnp(us(0));
        d.on_sent(1 << 40, us(1));
        assert_eq!(d.target(), LINE, "no byte counter");
        let step = |d: &mut Dcqcn, k: u64| {
            d.on_timer(us(55 * k));
            (d.target(), d.rate())
        };
        let (rt0, rc0) = (d.target(), d.rate());
        // t = 1 <= F: fast recovery, Rt unchanged
        assert_eq!(step(&mut d, 1), (rt0, (rt0 + rc0) / 2.0));
        // two cuts move Rt off line rate (Rt = 50G), then: t = 1 fast, t = 2 additive, t = 3.. hyper
        let mut d = Dcqcn::new(&cfg, LINE);
        d.on_cnp(us(0));
        d.on_cnp(us(1));
        d.on_timer(us(56));
        let rt = d.target();
        assert_eq!(rt, LINE / 2.0);
        d.on_timer(us(111));
        assert!((d.target() - (rt + 20e6)).abs() < 1.0, "t = F + 1: R_AI");
        d.on_timer(us(166));
        assert!((d.target() - (rt + 20e6 + 200e6)).abs() < 1.0, "t = F + 2: R_HAI once");
        d.on_timer(us(221));
        assert!((d.target() - (rt + 20e6 + 400e6)).abs() < 1.0, "and once per step after");
    }
}
