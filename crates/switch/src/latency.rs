//! A fixed-size histogram of delays in nanoseconds, for the switch's own latency figures: the
//! input delay of every frame (the kernel's receive timestamp to the switch reading it: the
//! wake-up of the loop plus the frames read before it) goes into one, so `stats.json` says how
//! much of a round trip is the switch waiting to be scheduled.
//!
//! Rules:
//! - Buckets of 1 us below 1 ms, of 100 us from 1 ms to 100 ms; longer delays count in the last
//!   bucket (and in `max_us`, which is exact). Recording never allocates.
//! - Quantiles are the upper edge of the bucket holding the q-th sample (so at most 1 us high
//!   below 1 ms, 100 us above): `q = 0.5` of `[3.2, 3.7, 9.9]` us is 4 us.
//! - Negative delays (a timestamp after the read, from clock steps) are counted in
//!   `negative` and not in the buckets.

use serde_json::{json, Value};

const FINE: usize = 1000; // 1 us buckets: 0..1 ms
const COARSE: usize = 990; // 100 us buckets: 1..100 ms
const N: usize = FINE + COARSE;

/// Delays in ns, bucketed.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64; N]>,
    total: u64,
    negative: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Box::new([0; N]), total: 0, negative: 0, sum_ns: 0, max_ns: 0 }
    }
}

fn bucket(ns: u64) -> usize {
    let us = ns / 1000;
    if us < FINE as u64 {
        us as usize
    } else {
        (FINE + ((us - FINE as u64) / 100) as usize).min(N - 1)
    }
}

/// Upper edge (us) of bucket `b`.
fn edge_us(b: usize) -> u64 {
    if b < FINE {
        b as u64 + 1
    } else {
        FINE as u64 + (b - FINE + 1) as u64 * 100
    }
}

impl Histogram {
    /// Records one delay, `later - earlier` in ns (signed: see the rules).
    #[inline]
    pub fn record(&mut self, delay_ns: i64) {
        if delay_ns < 0 {
            self.negative += 1;
            return;
        }
        let d = delay_ns as u64;
        self.counts[bucket(d)] += 1;
        self.total += 1;
        self.sum_ns += d as u128;
        self.max_ns = self.max_ns.max(d);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The q-quantile in us (upper bucket edge), 0 when empty.
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return edge_us(b);
            }
        }
        edge_us(N - 1)
    }

    /// The summary written into `stats.json`.
    pub fn to_json(&self) -> Value {
        let mean = if self.total == 0 { 0.0 } else { self.sum_ns as f64 / self.total as f64 / 1000.0 };
        json!({
            "count": self.total,
            "negative": self.negative,
            "mean_us": mean,
            "p50_us": self.quantile_us(0.5),
            "p90_us": self.quantile_us(0.9),
            "p99_us": self.quantile_us(0.99),
            "p999_us": self.quantile_us(0.999),
            "max_us": self.max_ns as f64 / 1000.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_bucket_upper_edges() {
        let mut h = Histogram::default();
        for ns in [3_200, 3_700, 9_900] {
            h.record(ns);
        }
        assert_eq!(h.quantile_us(0.5), 4);
        assert_eq!(h.quantile_us(0.0), 4);
        assert_eq!(h.quantile_us(1.0), 10);
        assert_eq!(h.count(), 3);
        let j = h.to_json();
        assert_eq!(j["max_us"], 9.9);
        assert!((j["mean_us"].as_f64().unwrap() - 5.6).abs() < 1e-9);
    }

    #[test]
    fn coarse_buckets_and_overflow() {
        let mut h = Histogram::default();
        h.record(1_000_000); // 1 ms: first coarse bucket, edge 1.1 ms
        assert_eq!(h.quantile_us(1.0), 1100);
        h.record(5_000_000_000); // 5 s: last bucket
        assert_eq!(h.quantile_us(1.0), 100_000);
        assert_eq!(h.to_json()["max_us"], 5_000_000.0);
    }

    #[test]
    fn p99_of_a_uniform_spread() {
        let mut h = Histogram::default();
        for us in 0..1000u64 {
            h.record((us * 1000 + 500) as i64);
        }
        assert_eq!(h.quantile_us(0.99), 990);
        assert_eq!(h.quantile_us(0.5), 500);
    }

    #[test]
    fn negative_delays_are_counted_apart() {
        let mut h = Histogram::default();
        h.record(-5);
        assert_eq!((h.count(), h.quantile_us(0.5)), (0, 0));
        assert_eq!(h.to_json()["negative"], 1);
    }
}
