//! Per-flow measurements taken at the receiver, and the statistics over them.
//!
//! Rules:
//! - A flow's packets are observed when they *arrive at the destination host* (data segments with
//!   payload for TCP, every packet for UDP), retransmissions included: this is what the
//!   receiver sees and what the ns-2 validation counts ('r' events at the receiver).
//! - `pkts_in_window`: such arrivals inside the measurement window `[end - window_s, end]`.
//! - The starvation gap of a flow is the longest time without an arrival, counting the gap from
//!   the flow's start to its first arrival and from its last arrival to the end of the run (a
//!   flow starved until the end is starved for that whole stretch).
//! - Statistics over a set of flows: population variance, Jain's index
//!   `(sum x)^2 / (n sum x^2)` (undefined, reported as null, when every x is 0), percentiles by
//!   the nearest-rank method.

use dcfair_core::time::{SimDuration, SimTime};

/// What the receiver side observed of one flow.
#[derive(Clone, Debug, Default)]
pub struct FlowObs {
    pub arrivals: u64,
    pub arrived_bytes: u64,
    pub pkts_in_window: u64,
    pub first_arrival: Option<SimTime>,
    pub last_arrival: Option<SimTime>,
    pub max_gap: SimDuration,
    /// When the last byte of a finite flow was delivered in order.
    pub completed: Option<SimTime>,
}

impl FlowObs {
    /// Records an arrival at `now`; `in_window` says whether `now` is inside the window.
    #[inline]
    pub fn arrival(&mut self, now: SimTime, start: SimTime, bytes: u32, in_window: bool) {
        let prev = self.last_arrival.unwrap_or(start);
        let gap = now.saturating_since(prev);
        if gap > self.max_gap {
            self.max_gap = gap;
        }
        if self.first_arrival.is_none() {
            self.first_arrival = Some(now);
        }
        self.last_arrival = Some(now);
        self.arrivals += 1;
        self.arrived_bytes += bytes as u64;
        if in_window {
            self.pkts_in_window += 1;
        }
    }

    /// The longest gap including the open stretch from the last arrival (or the start) to `end`.
    pub fn max_gap_until(&self, start: SimTime, end: SimTime) -> SimDuration {
        let tail = end.saturating_since(self.last_arrival.unwrap_or(start));
        self.max_gap.max(tail)
    }
}

/// The order of a flow's data arrivals at its receiver: a packet arrives out of order when data
/// beyond its first byte has already arrived (a later packet overtook it, or it is a
/// retransmission filling a hole).
#[derive(Clone, Copy, Debug, Default)]
pub struct Order {
    /// One past the highest byte arrived so far.
    pub high: u64,
    /// Data packets that arrived out of order.
    pub reordered: u64,
}

impl Order {
    /// A data packet carrying bytes `[seq, end)` arrived.
    #[inline]
    pub fn arrival(&mut self, seq: u64, end: u64) {
        if seq < self.high {
            self.reordered += 1;
        }
        self.high = self.high.max(end);
    }
}

pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Population variance.
pub fn variance(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    Some(xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64)
}

pub fn std_dev(xs: &[f64]) -> Option<f64> {
    variance(xs).map(f64::sqrt)
}

/// Jain's fairness index; `None` for an empty set or when every value is zero.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    (s2 > 0.0).then(|| s * s / (xs.len() as f64 * s2))
}

/// Nearest-rank percentile (`p` in [0, 100]) of an unsorted slice.
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- statistics -----------------------------------------------------------------------
    #[test]
    fn jain_of_equal_shares_is_one() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
    #[test]
    fn population_variance() {
        assert_eq!(variance(&[1.0, 3.0]), Some(1.0));
        assert_eq!(variance(&[]), None);
    }
    #[test]
    fn nearest_rank_percentiles() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&xs, 50.0), Some(50.0));
        assert_eq!(percentile(&xs, 99.0), Some(99.0));
        assert_eq!(percentile(&xs, 100.0), Some(100.0));
        assert_eq!(percentile(&xs, 0.0), Some(1.0));
    }

    // --- starvation gaps ------------------------------------------------------------------
    #[test]
    fn gaps_include_start_and_open_tail() {
        let s = SimTime::from_secs_f64(1.0);
        let mut o = FlowObs::default();
        o.arrival(SimTime::from_secs_f64(3.0), s, 1500, false); // 2 s from start
        o.arrival(SimTime::from_secs_f64(3.5), s, 1500, true);
        assert_eq!(o.max_gap, SimDuration::from_secs(2));
        assert_eq!(o.max_gap_until(s, SimTime::from_secs_f64(10.0)), SimDuration::from_secs_f64(6.5));
        let never = FlowObs::default();
        assert_eq!(never.max_gap_until(s, SimTime::from_secs_f64(10.0)), SimDuration::from_secs(9));
    }
}
