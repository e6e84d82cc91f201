//! Simulated time, rates and sizes as integer newtypes.
//!
//! Rules:
//! - Time is an absolute instant [`SimTime`] or a span [`SimDuration`], both `u64` picoseconds.
//!   `u64` picoseconds cover 213 days of simulated time, far more than any run here.
//! - No floating point ever enters a time value on the packet path. Conversions from seconds
//!   (`from_secs_f64`) exist for configuration only and round to the nearest picosecond.
//! - A rate is [`BitsPerSec`]; the time to serialize `n` bytes at rate `r` is
//!   `ceil(8 n 10^12 / r)` picoseconds, computed in `u128` so it never overflows. At 1 Gbps one
//!   bit takes exactly 1000 ps; at 100 Gbps exactly 10 ps.
//! - Mechanisms never read a clock: every method takes `now: SimTime` from its caller, so the same
//!   code runs in the simulator and behind a monotonic clock in a real switch.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitsPerSec(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime(SimDuration::from_secs_f64(s).0)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub const fn from_ps(ps: u64) -> SimDuration {
        SimDuration(ps)
    }
    pub const fn from_ns(ns: u64) -> SimDuration {
        SimDuration(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> SimDuration {
        SimDuration(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> SimDuration {
        SimDuration(ms * 1_000_000_000)
    }
    pub const fn from_secs(s: u64) -> SimDuration {
        SimDuration(s * PS_PER_SEC)
    }
    /// From (non-negative, finite) seconds, rounded to the nearest picosecond. Configuration only.
    pub fn from_secs_f64(s: f64) -> SimDuration {
        debug_assert!(s.is_finite() && s >= 0.0, "negative or non-finite duration {s}");
        SimDuration((s * PS_PER_SEC as f64).round() as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    pub fn saturating_mul(self, k: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(k))
    }
}

impl BitsPerSec {
    pub fn from_mbps_f64(mbps: f64) -> BitsPerSec {
        BitsPerSec((mbps * 1e6).round() as u64)
    }
    pub fn from_gbps(g: u64) -> BitsPerSec {
        BitsPerSec(g * 1_000_000_000)
    }
    /// Serialization delay of `bytes` at this rate, rounded up to the next picosecond.
    /// Panics on a zero rate (configuration validation rejects it first).
    #[inline]
    pub fn tx_time(self, bytes: u64) -> SimDuration {
        assert!(self.0 > 0, "zero rate");
        let bits = bytes as u128 * 8 * PS_PER_SEC as u128;
        SimDuration(bits.div_ceil(self.0 as u128) as u64)
    }
    /// Bytes this rate carries in `d` (floor).
    pub fn bytes_in(self, d: SimDuration) -> u64 {
        (self.0 as u128 * d.0 as u128 / (8 * PS_PER_SEC as u128)) as u64
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Panics in debug builds if `rhs` is later than `self`; use `saturating_since` when unsure.
    #[inline]
    fn sub(self, rhs: SimTime) -> SimDuration {
        debug_assert!(self.0 >= rhs.0, "time went backwards");
        SimDuration(self.0.wrapping_sub(rhs.0))
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    #[inline]
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    #[inline]
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(d.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- serialization delay -------------------------------------------------------------
    #[test]
    fn one_bit_at_1gbps_is_1000ps() {
        // 1 byte = 8 bits = 8000 ps at 1 Gbps
        assert_eq!(BitsPerSec::from_gbps(1).tx_time(1), SimDuration(8_000));
        assert_eq!(BitsPerSec::from_gbps(100).tx_time(1), SimDuration(80));
    }
    #[test]
    fn full_packet_at_100mbps() {
        // 1500 B at 100 Mbps = 120 us exactly
        assert_eq!(BitsPerSec(100_000_000).tx_time(1500), SimDuration::from_us(120));
    }
    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bps = 8/3 s -> rounded up
        let d = BitsPerSec(3).tx_time(1);
        assert_eq!(d.0, (8 * PS_PER_SEC).div_ceil(3));
    }
    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = BitsPerSec(100_000_000);
        assert_eq!(r.bytes_in(SimDuration::from_secs(1)), 12_500_000);
    }
    // --- conversions ------------------------------------------------------------------
    #[test]
    fn seconds_round_trip() {
        assert_eq!(SimDuration::from_secs_f64(0.0001), SimDuration::from_us(100));
        assert_eq!(SimTime::from_secs_f64(180.0).as_secs_f64(), 180.0);
    }
}
