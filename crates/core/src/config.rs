//! Configuration values every mechanism shares: the error that names a key, and a buffer limit.
//!
//! Rules:
//! - A configuration error carries the dotted key, relative to the table being validated, and
//!   the reason; an enclosing table prefixes its path with [`ConfigError::within`].
//! - This module imports nothing from the rest of the crate, so every module may use it.

/// A configuration error: the key (dotted, relative to the table being validated) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
        ConfigError { key: key.into(), reason: reason.into() }
    }
    /// Prefixes the key with the path of the enclosing table.
    pub fn within(mut self, prefix: &str) -> ConfigError {
        self.key = if self.key.is_empty() { prefix.to_string() } else { format!("{prefix}.{}", self.key) };
        self
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.reason)
    }
}
impl std::error::Error for ConfigError {}

/// A buffer limit in packets and/or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub pkts: Option<u32>,
    pub bytes: Option<u64>,
}

impl Limit {
    pub fn pkts(n: u32) -> Limit {
        Limit { pkts: Some(n), bytes: None }
    }
    /// Would a queue holding (`len_pkts`, `len_bytes`) still fit one more packet of `size` bytes?
    #[inline]
    pub fn fits(&self, len_pkts: usize, len_bytes: u64, size: u32) -> bool {
        self.pkts.is_none_or(|p| (len_pkts as u64) < p as u64)
            && self.bytes.is_none_or(|b| len_bytes + size as u64 <= b)
    }
}
