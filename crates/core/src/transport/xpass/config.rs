//! The `[xpass]` table: the ExpressPass endpoints' keys and the switches' credit-shaper keys
//! (one table, since a credit network needs both), with their validation and the credit ratio
//! they set. Units are in the key names; [`XpassConfig::validate`] names the key on bad input.
//! `docs/mechanisms/expresspass.md` has the parameter table.

use crate::config::ConfigError;
use serde::{Deserialize, Serialize};

/// How the receiver adapts its credit rate.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackLaw {
    /// Algorithm 1 of the paper.
    #[default]
    Paper,
    /// The ns-2 code's variant (target loss scaled by the spare rate, decrease to the received
    /// credit rate, `w += 0.05`, rate capped at the maximum, floor of one credit per RTT).
    Code,
    /// No feedback: credits at the maximum rate always (the paper's "naive" case, figure 10).
    None,
}

/// Which data echoes a feedback update period counts (see `docs/mechanisms/expresspass.md`,
/// "Feedback lag"). A credit's loss shows one RTT after it was sent, so the period that follows
/// a decrease still measures the loss of the credits sent at the old, higher rate.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum StaleEchoes {
    /// Every echo that arrives in the period counts (the ns-2 code; the paper says nothing).
    #[default]
    Count,
    /// Echoes of credits sent before the last decrease are left out, and the next period
    /// starts when the first credit sent after the decrease comes back: each decrease is
    /// judged on the loss of the rate it set (as TCP reduces once per window).
    Skip,
}

/// The lowest credit rate the feedback control keeps a flow at. The paper gives none; without
/// one a flow that lost every credit would never send again.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum RateFloor {
    /// One credit per smoothed RTT (the update period when `update_period_us` is set): the
    /// ns-2 code's `min_rate = avg_credit_size / rtt_`.
    #[default]
    Rtt,
    /// One credit per elapsed update period, measured from the last update that had feedback:
    /// after periods in which no echo returned, the floor is as low as the gap was long.
    Elapsed,
}

/// What one token of the switch credit shaper pays for.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CreditTokens {
    /// One token per credit, whatever its size: `rate / (8 (credit_min + data))` credits/s,
    /// i.e. exactly one data frame's room per credit. Every shaper then releases at one fixed
    /// period, so credit sizes add no jitter.
    Count,
    /// A credit spends its size in bytes of a bucket filled at `rate x mean / (mean + data)`
    /// bytes/s, `mean` the mean credit size: the average credit still buys one data frame,
    /// and each release waits in proportion to the size of the credit that leaves, which is
    /// how the paper's random credit sizes "create jitter at the switches" (the ns-2 code's
    /// byte bucket; its large-scale script sets the rate from the mean size the same way).
    #[default]
    Bytes,
}

/// The `[xpass]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct XpassConfig {
    // --- switch side (every port of a run with ExpressPass flows) ---
    /// Credit queue capacity per port, credits (paper: 8; code: 10).
    pub credit_queue_pkts: u32,
    /// Token bucket depth, credits (burst allowed after an idle period; code: 10 x 84 B).
    pub credit_bucket_pkts: u32,
    pub credit_tokens: CreditTokens,
    /// Largest data frame the credit ratio leaves room for, bytes (default: the run's MTU;
    /// the paper's 1538 counts Ethernet framing, which the simulator does not model).
    pub data_frame_bytes: Option<u32>,
    // --- endpoints ---
    /// Credit sizes are uniform in `[credit_min_bytes, credit_max_bytes]` (paper: 84 to 92).
    pub credit_min_bytes: u32,
    pub credit_max_bytes: u32,
    /// Size of a credit request / stop / NACK, bytes.
    pub control_bytes: u32,
    /// Credit gap jitter: each gap is `gap x (1 + u)`, `u` uniform in `[-jitter, jitter]`.
    pub jitter: f64,
    /// Initial credit rate as a fraction of the maximum (code: 0.5).
    pub initial_rate: f64,
    pub w_init: f64,
    pub w_min: f64,
    pub w_max: f64,
    /// Credit loss the feedback control aims for (paper: 0.1; code: 0.125 x spare fraction).
    pub target_loss: f64,
    pub feedback_law: FeedbackLaw,
    /// Whether the period after a decrease counts the echoes of credits sent before it.
    pub stale_echoes: StaleEchoes,
    /// The lowest credit rate ([`RateFloor`]).
    pub rate_floor: RateFloor,
    /// Update period, microseconds; default: the receiver's measured RTT (EWMA 0.8 / 0.2).
    pub update_period_us: Option<f64>,
    /// Retransmit a credit request (or NACK) after this long without an answer, microseconds
    /// (code: 100 ms).
    pub retransmit_timeout_us: f64,
    /// Resend a credit stop if credits still arrive after this long, microseconds (code: 2 ms;
    /// 2 RTT once an RTT is known).
    pub stop_timeout_us: f64,
}

impl Default for XpassConfig {
    fn default() -> Self {
        XpassConfig {
            credit_queue_pkts: 8,
            credit_bucket_pkts: 1,
            credit_tokens: CreditTokens::Bytes,
            data_frame_bytes: None,
            credit_min_bytes: 84,
            credit_max_bytes: 92,
            control_bytes: 84,
            jitter: 0.1,
            initial_rate: 0.5,
            w_init: 0.5,
            w_min: 0.01,
            w_max: 0.5,
            target_loss: 0.1,
            feedback_law: FeedbackLaw::Paper,
            stale_echoes: StaleEchoes::Count,
            rate_floor: RateFloor::Rtt,
            update_period_us: None,
            retransmit_timeout_us: 100_000.0,
            stop_timeout_us: 2_000.0,
        }
    }
}

fn fraction(key: &str, v: f64, lo: f64, hi: f64, hi_open: bool) -> Result<(), ConfigError> {
    let ok = v.is_finite() && v >= lo && if hi_open { v < hi } else { v <= hi };
    if ok {
        Ok(())
    } else {
        let close = if hi_open { ")" } else { "]" };
        Err(ConfigError::new(key, format!("must be in [{lo}, {hi}{close}, got {v}")))
    }
}

impl XpassConfig {
    /// Checks every key against the run's MTU (bytes); error keys are relative to `xpass`.
    pub fn validate(&self, mtu: u32) -> Result<(), ConfigError> {
        if self.credit_queue_pkts == 0 {
            return Err(ConfigError::new("credit_queue_pkts", "must be at least 1 credit"));
        }
        if self.credit_bucket_pkts == 0 {
            return Err(ConfigError::new("credit_bucket_pkts", "must be at least 1 credit"));
        }
        if self.credit_min_bytes == 0 {
            return Err(ConfigError::new("credit_min_bytes", "must be at least 1 byte"));
        }
        if self.credit_max_bytes < self.credit_min_bytes {
            return Err(ConfigError::new("credit_max_bytes", "must not be below credit_min_bytes"));
        }
        if self.credit_max_bytes > mtu {
            return Err(ConfigError::new("credit_max_bytes", format!("{} bytes is above the MTU ({mtu} bytes)", self.credit_max_bytes)));
        }
        if self.control_bytes == 0 || self.control_bytes > mtu {
            return Err(ConfigError::new("control_bytes", format!("must be between 1 and the MTU ({mtu} bytes)")));
        }
        if let Some(d) = self.data_frame_bytes {
            if d == 0 {
                return Err(ConfigError::new("data_frame_bytes", "must be at least 1 byte"));
            }
        }
        fraction("jitter", self.jitter, 0.0, 1.0, true)?;
        if !(self.initial_rate.is_finite() && self.initial_rate > 0.0 && self.initial_rate <= 1.0) {
            return Err(ConfigError::new("initial_rate", format!("must be in (0, 1], got {}", self.initial_rate)));
        }
        fraction("w_min", self.w_min, 0.0, 1.0, true)?;
        fraction("w_max", self.w_max, self.w_min, 1.0, false)?;
        fraction("w_init", self.w_init, self.w_min, self.w_max, false)?;
        fraction("target_loss", self.target_loss, 0.0, 1.0, true)?;
        if let Some(p) = self.update_period_us {
            if !(p.is_finite() && p > 0.0) {
                return Err(ConfigError::new("update_period_us", format!("must be a positive number of microseconds, got {p}")));
            }
        }
        for (k, v) in [("retransmit_timeout_us", self.retransmit_timeout_us), ("stop_timeout_us", self.stop_timeout_us)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ConfigError::new(k, format!("must be a positive number of microseconds, got {v}")));
            }
        }
        Ok(())
    }

    /// The data frame the credit ratio makes room for, bytes.
    pub fn data_frame(&self, mtu: u32) -> u32 {
        self.data_frame_bytes.unwrap_or(mtu)
    }

    /// Credit size the shaper's rate is set for, bytes: the minimum with `credit_tokens =
    /// "count"`, the mean `(min + max) / 2` with `"bytes"`.
    pub fn reference_credit(&self) -> f64 {
        match self.credit_tokens {
            CreditTokens::Count => self.credit_min_bytes as f64,
            CreditTokens::Bytes => (self.credit_min_bytes + self.credit_max_bytes) as f64 / 2.0,
        }
    }

    /// Credits per second that fill a link of `rate_bps` with data (on average):
    /// `rate / (8 (reference_credit + data))`, the rate a credit shaper releases a backlog at.
    pub fn max_credit_rate(&self, rate_bps: f64, mtu: u32) -> f64 {
        rate_bps / (8.0 * (self.reference_credit() + self.data_frame(mtu) as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_name_their_key() {
        assert_eq!(XpassConfig::default().validate(1500), Ok(()));
        let bad = |f: fn(&mut XpassConfig), key: &str| {
            let mut c = XpassConfig::default();
            f(&mut c);
            assert_eq!(c.validate(1500).unwrap_err().key, key);
        };
        bad(|c| c.credit_queue_pkts = 0, "credit_queue_pkts");
        bad(|c| c.credit_max_bytes = 1501, "credit_max_bytes");
        bad(|c| c.credit_max_bytes = 80, "credit_max_bytes");
        bad(|c| c.jitter = 1.0, "jitter");
        bad(|c| c.jitter = -0.1, "jitter");
        bad(|c| c.jitter = f64::NAN, "jitter");
        bad(|c| c.w_init = 0.9, "w_init");
        bad(|c| c.target_loss = 1.0, "target_loss");
        bad(|c| c.initial_rate = 0.0, "initial_rate");
        bad(|c| c.update_period_us = Some(0.0), "update_period_us");
    }

    #[test]
    fn the_credit_ratio_follows_the_sizes() {
        let c = XpassConfig { data_frame_bytes: Some(1538), credit_max_bytes: 84, ..Default::default() };
        // 10 Gbit/s, the ns-2 defaults (84 B credits): its token rate, 64,734,895 B/s
        let bytes_per_s = c.max_credit_rate(10e9, 1500) * 84.0;
        assert!((bytes_per_s - 64_734_895.0).abs() < 1.0, "{bytes_per_s}");
        let d = XpassConfig { credit_tokens: CreditTokens::Count, ..Default::default() };
        assert!((d.max_credit_rate(10e9, 1500) - 10e9 / (8.0 * 1584.0)).abs() < 1e-6);
        // bytes (the default): 84-92 B credits, priced at the mean 88 B
        let b = XpassConfig::default();
        assert!((b.max_credit_rate(10e9, 1500) - 10e9 / (8.0 * 1588.0)).abs() < 1e-6);
    }
}
