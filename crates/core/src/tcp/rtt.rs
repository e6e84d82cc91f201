//! The retransmission timeout: RFC 6298 smoothed RTT, RTT variation and exponential backoff.
//!
//! Rules:
//! - Arithmetic is in integer picoseconds, so results are exact and platform independent.
//!   With `alpha = 1/8`, `beta = 1/4`, `K = 4` (RFC 6298 section 2):
//!   the first sample `R` sets `SRTT = R`, `RTTVAR = R / 2`; later samples set
//!   `RTTVAR = (3 RTTVAR + |SRTT - R|) / 4` first, then `SRTT = (7 SRTT + R) / 8`
//!   (each division rounds down, to the picosecond).
//! - The base timeout is `clamp(SRTT + max(G, 4 RTTVAR), min_rto, max_rto)`; before the first
//!   sample it is `clamp(initial_rto, min_rto, max_rto)`. `G` is the clock granularity (0 by
//!   default: the simulator's clock is exact).
//! - The timeout in force is `min(max_rto, base * backoff)`. `back_off()` doubles `backoff` on
//!   every expiry until it reaches `max_backoff` (64, as ns-2's `t_backoff_`), RFC 6298 (5.5).
//!   A valid sample (`sample()`) resets it to 1: with Karn's rule the caller only samples
//!   segments that were never retransmitted, so the backed-off timeout is kept until then.
//! - The smallest sample of the connection is kept as well (`min_rtt`, never expired: routes
//!   do not change during a run); CUBIC reads it (`congestion/cubic.rs`).
//! - Cost: O(1), no allocation. The estimator knows nothing about segments; the sender decides
//!   what is a valid sample (one timed segment per RTT, or the timestamp echo).

use crate::time::SimDuration;

/// RFC 6298 estimator with a bounded exponential backoff.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT and RTT variation, picoseconds; `None` before the first sample.
    srtt: Option<u64>,
    rttvar: u64,
    /// Timeout before backoff, already clamped to `[min_rto, max_rto]`.
    base: SimDuration,
    backoff: u32,
    min_rto: SimDuration,
    max_rto: SimDuration,
    granularity: SimDuration,
    max_backoff: u32,
    samples: u64,
    /// Smallest sample so far, picoseconds; `None` before the first sample.
    min: Option<u64>,
}

impl RttEstimator {
    /// An estimator with no sample yet. `max_backoff` is at least 1.
    pub fn new(
        initial_rto: SimDuration,
        min_rto: SimDuration,
        max_rto: SimDuration,
        granularity: SimDuration,
        max_backoff: u32,
    ) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            base: initial_rto.max(min_rto).min(max_rto),
            backoff: 1,
            min_rto,
            max_rto,
            granularity,
            max_backoff: max_backoff.max(1),
            samples: 0,
            min: None,
        }
    }

    /// Feeds one RTT measurement `r` (RFC 6298 (2.2), (2.3)) and resets the backoff.
    pub fn sample(&mut self, r: SimDuration) {
        let r = r.0;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let err = s.abs_diff(r);
                self.rttvar = ((3 * self.rttvar as u128 + err as u128) / 4) as u64;
                self.srtt = Some(((7 * s as u128 + r as u128) / 8) as u64);
            }
        }
        let s = self.srtt.unwrap_or(0);
        let var_term = self.granularity.0.max(self.rttvar.saturating_mul(4));
        self.base = SimDuration(s.saturating_add(var_term)).max(self.min_rto).min(self.max_rto);
        self.backoff = 1;
        self.samples += 1;
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
    }

    /// Doubles the backoff multiplier, up to `max_backoff` (RFC 6298 (5.5)).
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_mul(2).min(self.max_backoff);
    }

    /// The retransmission timeout in force: `min(max_rto, base * backoff)`.
    pub fn rto(&self) -> SimDuration {
        self.base.saturating_mul(self.backoff as u64).min(self.max_rto)
    }

    /// The timeout before backoff.
    pub fn base_rto(&self) -> SimDuration {
        self.base
    }
    /// Current backoff multiplier (1, 2, 4, ... up to `max_backoff`).
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// Smoothed RTT, `None` before the first sample.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt.map(SimDuration)
    }
    /// Smallest RTT sample so far, `None` before the first sample.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min.map(SimDuration)
    }
    /// RTT variation (0 before the first sample).
    pub fn rttvar(&self) -> SimDuration {
        SimDuration(self.rttvar)
    }
    /// Number of samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_ms(x)
    }
    fn us(x: u64) -> SimDuration {
        SimDuration::from_us(x)
    }
    fn est(min: SimDuration, max: SimDuration) -> RttEstimator {
        RttEstimator::new(SimDuration::from_secs(1), min, max, SimDuration::ZERO, 64)
    }

    // --- RFC 6298 arithmetic against hand-computed values -------------------------------
    #[test]
    fn first_sample_sets_srtt_and_half_variation() {
        let mut e = est(SimDuration::ZERO, SimDuration::from_secs(60));
        assert_eq!(e.rto(), SimDuration::from_secs(1), "initial RTO before any sample");
        e.sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300)); // 100 + 4 * 50
    }

    #[test]
    fn later_samples_follow_the_rfc_by_hand() {
        let mut e = est(SimDuration::ZERO, SimDuration::from_secs(60));
        e.sample(ms(100));
        // R = 200: RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5; SRTT = 7/8 * 100 + 200/8 = 112.5
        e.sample(ms(200));
        assert_eq!(e.rttvar(), us(62_500));
        assert_eq!(e.srtt(), Some(us(112_500)));
        assert_eq!(e.rto(), us(362_500)); // 112.5 + 250
        // R = 50: RTTVAR = 3/4 * 62.5 + 1/4 * 62.5 = 62.5; SRTT = 7/8 * 112.5 + 50/8 = 104.6875
        e.sample(ms(50));
        assert_eq!(e.rttvar(), us(62_500));
        assert_eq!(e.srtt(), Some(SimDuration(104_687_500_000)));
        assert_eq!(e.rto(), SimDuration(354_687_500_000));
        // R = 104.6875 (equal to SRTT): RTTVAR shrinks by a quarter, SRTT unchanged
        e.sample(SimDuration(104_687_500_000));
        assert_eq!(e.rttvar(), SimDuration(46_875_000_000));
        assert_eq!(e.srtt(), Some(SimDuration(104_687_500_000)));
        assert_eq!(e.samples(), 4);
    }

    #[test]
    fn constant_rtt_converges_to_srtt() {
        let mut e = est(SimDuration::ZERO, SimDuration::from_secs(60));
        for _ in 0..200 {
            e.sample(us(100));
        }
        assert_eq!(e.srtt(), Some(us(100)));
        // RTTVAR decays by 3/4 per sample down to (integer) zero
        assert_eq!(e.rttvar(), SimDuration::ZERO);
        assert_eq!(e.rto(), us(100));
    }

    #[test]
    fn min_rtt_is_the_smallest_sample() {
        let mut e = est(SimDuration::ZERO, SimDuration::from_secs(60));
        assert_eq!(e.min_rtt(), None);
        for (r, min) in [(300, 300), (100, 100), (250, 100), (99, 99)] {
            e.sample(us(r));
            assert_eq!(e.min_rtt(), Some(us(min)));
        }
    }

    // --- bounds: min_rto, max_rto, granularity --------------------------------------------
    #[test]
    fn min_rto_is_a_floor_and_max_rto_a_ceiling() {
        let mut e = est(ms(200), SimDuration::from_secs(2));
        e.sample(us(100)); // 100us + 200us = 300us -> floored
        assert_eq!(e.rto(), ms(200));
        let mut e = est(ms(200), SimDuration::from_secs(2));
        e.sample(SimDuration::from_secs(1)); // 1 s + 2 s = 3 s -> capped
        assert_eq!(e.rto(), SimDuration::from_secs(2));
        // the initial RTO is clamped too
        let e = RttEstimator::new(ms(50), ms(200), SimDuration::from_secs(60), SimDuration::ZERO, 64);
        assert_eq!(e.rto(), ms(200));
    }

    #[test]
    fn granularity_replaces_a_smaller_variance_term() {
        let mut e = RttEstimator::new(ms(1000), SimDuration::ZERO, SimDuration::from_secs(60), ms(10), 64);
        e.sample(ms(1)); // 4 * RTTVAR = 2 ms < G = 10 ms
        assert_eq!(e.rto(), ms(11));
    }

    // --- backoff ----------------------------------------------------------------------------
    #[test]
    fn backoff_doubles_up_to_max_backoff_and_max_rto() {
        let mut e = est(ms(200), SimDuration::from_secs(60));
        e.sample(us(100)); // base = 200 ms
        let mut seen = vec![e.rto()];
        for _ in 0..9 {
            e.back_off();
            seen.push(e.rto());
        }
        let ms_seen: Vec<u64> = seen.iter().map(|d| d.0 / 1_000_000_000).collect();
        // 200 ms * 64 = 12.8 s, the multiplier stops at 64
        assert_eq!(ms_seen, [200, 400, 800, 1600, 3200, 6400, 12800, 12800, 12800, 12800]);
        assert_eq!(e.backoff(), 64);
        // max_rto caps the backed-off value
        let mut e = est(ms(200), SimDuration::from_secs(1));
        e.sample(us(100));
        for _ in 0..4 {
            e.back_off();
        }
        assert_eq!(e.rto(), SimDuration::from_secs(1));
    }

    #[test]
    fn a_valid_sample_resets_the_backoff() {
        let mut e = est(ms(200), SimDuration::from_secs(60));
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), SimDuration::from_secs(4));
        e.sample(ms(10));
        assert_eq!(e.backoff(), 1);
        assert_eq!(e.rto(), ms(200));
    }

    #[test]
    fn max_backoff_of_one_disables_backoff() {
        let mut e = RttEstimator::new(SimDuration::from_secs(1), ms(200), SimDuration::from_secs(60), SimDuration::ZERO, 1);
        e.back_off();
        assert_eq!(e.rto(), SimDuration::from_secs(1));
    }
}
