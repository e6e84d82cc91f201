//! The `[ndp]` table: NDP's endpoint and switch keys, and their validation. Units are in the
//! key names; [`NdpConfig::validate`] names the key (relative to `ndp`) on bad input. Every
//! default and its source is on `docs/mechanisms/ndp.md`.
//!
//! Imports no other file of the folder.

use crate::config::ConfigError;
use serde::{Deserialize, Serialize};

/// `ndp.paths`: how NDP's packets spread over the paths.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Paths {
    #[default]
    Permutation,
    Random,
    Routing,
}

/// Path numbers a sender cycles through under `paths = "permutation"`: a switch with `n`
/// choices reads the path's digit in base `n` for its hop, so every path of up to two tiers of
/// up to 16 choices is taken equally often (`crates/sim/src/routing.rs`).
pub const PATH_NUMBERS: u16 = 256;

/// The `[ndp]` table.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NdpConfig {
    /// Payload bytes of a full data packet (the paper's 9 KB jumbograms).
    pub mss_bytes: u32,
    /// Header bytes of every packet: what a data packet keeps when trimmed, and the size of
    /// ACKs, NACKs and PULLs (the paper's 64-byte headers).
    pub header_bytes: u32,
    /// Packets the sender sends at once when the flow starts, before any PULL (the paper's IW
    /// of 30).
    pub initial_window_pkts: u32,
    /// A switch port trims an arriving data packet when its data queue would then hold more
    /// than this many full packets' payload (`trim_threshold_pkts x mss_bytes` bytes: 8 in the
    /// paper).
    pub trim_threshold_pkts: u32,
    /// Headers a switch port's header queue holds; 0 (the default): as many as fit in the data
    /// queue's bytes (`trim_threshold_pkts x mss_bytes / header_bytes`, the paper's 1125).
    pub header_queue_pkts: u32,
    /// Headers (and ACKs, NACKs, PULLs) a switch port sends for each data packet while both
    /// queues hold packets: weighted round robin, 10 in the paper; 0 is strict priority.
    pub header_weight: u32,
    /// Without an ACK or NACK for this long, a data packet is sent again, microseconds (the
    /// paper: "could safely be as low as 1ms").
    pub rto_us: f64,
    /// How NDP's packets spread over the equal-cost paths under a per-flow `routing.mode`:
    /// `"permutation"` (the paper's: each sender sends one packet per path in a random order of
    /// the paths, then reshuffles), `"random"` (a random next hop at every switch), or
    /// `"routing"` (as `routing.mode` says, like every other packet).
    pub paths: Paths,
    /// PULLs per data-packet time of the receiver's link (1: the paper's one PULL per packet
    /// time; htsim paces 1 % faster, 1/0.99).
    pub pull_rate: f64,
    /// Switch ports trim NDP data packets (false: a full data queue drops them, as DropTail).
    pub trim: bool,
}

impl Default for NdpConfig {
    fn default() -> Self {
        NdpConfig {
            mss_bytes: 9000,
            header_bytes: 64,
            initial_window_pkts: 30,
            trim_threshold_pkts: 8,
            header_queue_pkts: 0,
            header_weight: 10,
            rto_us: 1000.0,
            paths: Paths::Permutation,
            pull_rate: 1.0,
            trim: true,
        }
    }
}

impl NdpConfig {
    /// Bytes of a full data packet on the wire.
    pub fn packet_bytes(&self) -> u32 {
        self.mss_bytes + self.header_bytes
    }

    /// The data queue's payload bytes at which an arriving data packet is trimmed.
    pub fn trim_bytes(&self) -> u64 {
        self.trim_threshold_pkts as u64 * self.mss_bytes as u64
    }

    /// Headers a switch port's header queue holds.
    pub fn header_queue(&self) -> usize {
        match self.header_queue_pkts {
            0 => (self.trim_bytes() / self.header_bytes as u64).max(1) as usize,
            n => n as usize,
        }
    }

    /// Keys relative to `ndp`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mss_bytes == 0 {
            return Err(ConfigError::new("mss_bytes", "must be at least 1 byte"));
        }
        if self.header_bytes == 0 {
            return Err(ConfigError::new("header_bytes", "must be at least 1 byte: a trimmed packet keeps its header"));
        }
        if self.initial_window_pkts == 0 {
            return Err(ConfigError::new("initial_window_pkts", "must be at least 1 packet: NDP sends before any PULL"));
        }
        if self.trim_threshold_pkts == 0 {
            return Err(ConfigError::new("trim_threshold_pkts", "must be at least 1 packet"));
        }
        if !self.pull_rate.is_finite() || self.pull_rate <= 0.0 || self.pull_rate > 100.0 {
            return Err(ConfigError::new("pull_rate", format!("must be a positive number (PULLs per packet time) of at most 100, got {}", self.pull_rate)));
        }
        if !self.rto_us.is_finite() || self.rto_us <= 0.0 || self.rto_us > 1e12 {
            return Err(ConfigError::new("rto_us", format!("must be a positive number of microseconds, got {}", self.rto_us)));
        }
        Ok(())
    }
}
