//! The value checks every table of a scenario uses: a number that must be positive, zero or
//! positive, or at least one.
//!
//! Rules:
//! - Each names the key it was given and says what it wanted and what it got; the caller
//!   places the key in its table (`ConfigError::within`).
//! - Imports nothing of this crate.

use dcfair_core::qdisc::ConfigError;

pub(crate) fn positive(key: &str, v: f64) -> Result<(), ConfigError> {
    if !v.is_finite() || v <= 0.0 {
        return Err(ConfigError::new(key, format!("must be a positive number, got {v}")));
    }
    Ok(())
}

pub(crate) fn non_negative(key: &str, v: f64) -> Result<(), ConfigError> {
    if !v.is_finite() || v < 0.0 {
        return Err(ConfigError::new(key, format!("must be zero or positive, got {v}")));
    }
    Ok(())
}

pub(crate) fn at_least_one(key: &str, v: u32) -> Result<(), ConfigError> {
    if v == 0 {
        return Err(ConfigError::new(key, "must be at least 1"));
    }
    Ok(())
}
