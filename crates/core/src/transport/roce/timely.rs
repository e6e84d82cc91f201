//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
//! 2015, Algorithm 1): the rate of a RoCEv2 sender, set by the RTT and its gradient.
//!
//! Rules (parameters: `[roce.timely]`, [`TimelyConfig`], `docs/mechanisms/timely.md`):
//! - An RTT sample is the time from a data packet's departure to the ACK that answers it (the
//!   ACK echoes the packet's `ts_val` in `ts_ecr`): a completion event.
//! - The rate is updated once per round trip: on the first ACK that covers the PSN the sender
//!   was about to send at the previous update (as the HPCC authors' ns-3 fork does; the paper
//!   updates per completion of a 16 to 64 KB segment). The first sample only sets the
//!   previous RTT.
//! - An update with RTT `r`: `diff = (1 - alpha) diff + alpha (r - prev_r)`, `gradient = diff
//!   / min_rtt`; then, in this order: `r < T_low`: rate += delta; `r > T_high`: rate *= 1 -
//!   beta (1 - T_high / r); `gradient <= 0`: rate += N delta, N = `hai_after` once this is the
//!   `hai_after`-th such update in a row (hyperactive increase), else 1; otherwise rate *= 1 -
//!   beta gradient. A decrease ends a run of increases. The rate stays within [min_rate, line
//!   rate].

use super::config::TimelyConfig;
use crate::time::SimDuration;

/// TIMELY's rate computation for one flow.
#[derive(Clone, Debug)]
pub struct Timely {
    alpha: f64,
    beta: f64,
    t_low: f64,
    t_high: f64,
    delta: f64,
    hai_after: u32,
    min_rtt: f64,
    min_rate: f64,
    line: f64,
    /// The rate, bits/s.
    rate: f64,
    /// The RTT of the previous update, seconds.
    prev_rtt: Option<f64>,
    /// The smoothed RTT difference, seconds.
    rtt_diff: f64,
    /// Consecutive updates with a non-positive gradient.
    negatives: u32,
    /// The next update waits for an ACK covering this PSN.
    next_update_psn: u64,
    /// Rate decreases made.
    pub decreases: u64,
}

impl Timely {
    /// TIMELY for a sender of line rate `line_bps`, starting at line rate.
    pub fn new(cfg: &TimelyConfig, line_bps: f64) -> Timely {
        Timely {
            alpha: cfg.alpha,
            beta: cfg.beta,
            t_low: cfg.t_low_us * 1e-6,
            t_high: cfg.t_high_us * 1e-6,
            delta: cfg.delta_mbps * 1e6,
            hai_after: cfg.hai_after,
            min_rtt: cfg.min_rtt_us * 1e-6,
            min_rate: (cfg.min_rate_mbps * 1e6).min(line_bps),
            line: line_bps,
            rate: line_bps,
            prev_rtt: None,
            rtt_diff: 0.0,
            negatives: 0,
            next_update_psn: 0,
            decreases: 0,
        }
    }

    /// The rate, bits/s.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// An ACK covering PSNs below `acked` brought the RTT sample `rtt`; `snd_nxt` is the next
    /// PSN the sender would send. Returns whether the rate was updated.
    pub fn on_ack(&mut self, rtt: SimDuration, acked: u64, snd_nxt: u64) -> bool {
        if acked < self.next_update_psn {
            return false;
        }
        self.next_update_psn = snd_nxt.max(acked + 1);
        let r = rtt.as_secs_f64();
        let Some(prev) = self.prev_rtt.replace(r) else {
            return false;
        };
        self.update(r, prev);
        true
    }

    /// One update of Algorithm 1 with the new RTT `r` and the previous one, seconds.
    fn update(&mut self, r: f64, prev: f64) {
        self.rtt_diff = (1.0 - self.alpha) * self.rtt_diff + self.alpha * (r - prev);
        let gradient = self.rtt_diff / self.min_rtt;
        if r < self.t_low {
            self.rate += self.delta;
        } else if r > self.t_high {
            self.decrease(1.0 - self.beta * (1.0 - self.t_high / r));
        } else if gradient <= 0.0 {
            self.negatives += 1;
            let n = if self.negatives >= self.hai_after { self.hai_after } else { 1 };
            self.rate += n as f64 * self.delta;
        } else {
            self.decrease(1.0 - self.beta * gradient);
        }
        self.rate = self.rate.clamp(self.min_rate, self.line);
    }

    fn decrease(&mut self, factor: f64) {
        self.rate *= factor.max(0.0);
        self.negatives = 0;
        self.decreases += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> SimDuration {
        SimDuration::from_us(v)
    }

    /// TIMELY at 10 Gbit/s, already cut to 5 Gbit/s, with a first sample of `first` us taken.
    fn at_half(first: u64) -> Timely {
        let mut t = Timely::new(&TimelyConfig::default(), 10e9);
        t.rate = 5e9;
        assert!(!t.on_ack(us(first), 0, 1), "the first sample only sets the previous RTT");
        t
    }

    #[test]
    fn the_rate_falls_above_t_high_by_beta_times_the_excess() {
        let mut t = at_half(600);
        assert!(t.on_ack(us(1000), 1, 2));
        // 5G (1 - 0.8 (1 - 500/1000)) = 3G
        assert!((t.rate() - 3e9).abs() < 1.0, "{}", t.rate());
        assert_eq!(t.decreases, 1);
    }

    #[test]
    fn the_rate_rises_by_delta_below_t_low_whatever_the_gradient() {
        let mut t = at_half(10);
        assert!(t.on_ack(us(40), 1, 2), "rising RTT, but below T_low = 50 us");
        assert!((t.rate() - (5e9 + 10e6)).abs() < 1e-3);
    }

    #[test]
    fn a_positive_gradient_cuts_and_a_negative_one_adds_then_hyper_increases() {
        let mut t = at_half(100);
        // +20 us: diff = 0.875 x 20 us, gradient = 17.5 / 20 = 0.875, rate x (1 - 0.8 x 0.875)
        assert!(t.on_ack(us(120), 1, 2));
        assert!((t.rate() - 5e9 * (1.0 - 0.8 * 0.875)).abs() < 1.0, "{}", t.rate());
        let r0 = t.rate();
        // falling RTTs: diff turns negative at once (17.5 x 0.125 - 0.875 x 10 < 0)
        let mut rtt = 120;
        let mut expect = r0;
        for k in 1..=6u64 {
            rtt -= 10;
            assert!(t.on_ack(us(rtt), 1 + k, 2 + k));
            expect += if k >= 5 { 50e6 } else { 10e6 };
            assert!((t.rate() - expect).abs() < 1e-3, "update {k}: {} vs {expect}", t.rate());
        }
    }

    #[test]
    fn one_update_per_round_trip() {
        let mut t = at_half(600);
        // the first sample asked for an ACK covering PSN 1
        assert!(t.on_ack(us(1000), 1, 40));
        assert!(!t.on_ack(us(1000), 20, 40), "an ACK of the same round trip");
        assert!(t.on_ack(us(1000), 40, 80));
        assert_eq!(t.decreases, 2);
    }

    #[test]
    fn the_rate_stays_between_the_minimum_and_line_rate() {
        let mut t = at_half(600);
        for k in 1..10 {
            assert!(t.on_ack(us(100_000), k, k + 1));
        }
        assert_eq!(t.rate(), 100e6);
        let mut t = at_half(10);
        for k in 1..1000 {
            t.on_ack(us(10), k, k + 1);
        }
        assert_eq!(t.rate(), 10e9);
    }
}
