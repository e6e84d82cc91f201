//! Named TCP profiles: sets of `[tcp]` keys applied before a table is read (`tcp.profile`).
//!
//! Rules:
//! - A profile is a list of (category, key, value) settings. `tcp.profile_categories` selects
//!   the categories that apply (all by default). A setting fills its key only where the table
//!   being read does not set it: keys written in the scenario (or by `--set`) always win.
//! - The scenario loader applies profiles to the TOML tree before deserialization
//!   (`crates/sim/src/scenario/load.rs`), to `[tcp]` and to every group's merged `tcp` table.
//! - A value may depend on the scenario: [`ProfileValue::QueueMinusOne`] is the buffer of
//!   `[queue]` in packets minus one, but never below the initial window in force (the pFabric
//!   scripts: `maxcwnd_ = queueSize - 1` if `queueSize > initWindow`, else `initWindow`).
//!
//! **`pfabric`**: the pFabric TCP settings of the FQ-CoDel paper's Table II (ns-2 names, the
//! pFabric value, ns-2's default in brackets), as dcfair keys. The full mapping, and the
//! values the text extraction garbled, are in `docs/mechanisms/pfabric.md`.
//!
//! | category | ns-2 parameter | pFabric | dcfair key = value |
//! |---|---|---|---|
//! | rtx | `minrto_` | 45 us (200 ms) | `min_rto_ms = 0.045` |
//! | rtx | `maxrto_` | 2 s (60 s) | `max_rto_s = 2.0` |
//! | rtx | `rtxcur_init_` | 45 us (3 s) | `initial_rto_s = 0.000045` |
//! | rtx | `tcpTick_` | 1 us (10 ms) | `clock_granularity_us = 1.0` |
//! | rx | `interval_` | 6 us (100 ms) | `delack_timeout_ms = 0.006` |
//! | rx | `window_` | 10^6 pkts (20) | `rcv_buf_bytes = 1073725440` (the largest scaled window) |
//! | cc | `windowInit_` | 12 (2) | `init_cwnd_pkts = 12` |
//! | cc | `maxcwnd_` | queue - 1 (0: none) | `max_cwnd_pkts` = queue - 1 |
//! | cc | `windowOption_` | 0: basic (1) | not modelled (see the doc) |

use serde::{Deserialize, Serialize};

/// A named profile (`tcp.profile`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TcpProfile {
    /// The pFabric settings (FQ-CoDel paper, Table II).
    Pfabric,
}

impl TcpProfile {
    pub const NAMES: [&'static str; 1] = ["pfabric"];
    pub fn from_name(s: &str) -> Option<TcpProfile> {
        match s {
            "pfabric" => Some(TcpProfile::Pfabric),
            _ => None,
        }
    }
}

/// A category of Table II (`tcp.profile_categories`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileCategory {
    /// Retransmission timer.
    Rtx,
    /// Receiver (delayed ACK, receive window).
    Rx,
    /// Congestion control (windows).
    Cc,
}

impl ProfileCategory {
    pub const ALL: [ProfileCategory; 3] = [ProfileCategory::Rtx, ProfileCategory::Rx, ProfileCategory::Cc];
    pub const NAMES: [&'static str; 3] = ["rtx", "rx", "cc"];
    pub fn from_name(s: &str) -> Option<ProfileCategory> {
        match s {
            "rtx" => Some(ProfileCategory::Rtx),
            "rx" => Some(ProfileCategory::Rx),
            "cc" => Some(ProfileCategory::Cc),
            _ => None,
        }
    }
}

/// The value a profile gives a key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProfileValue {
    Float(f64),
    Int(u64),
    /// `[queue] limit_pkts - 1`, at least the initial window in force.
    QueueMinusOne,
}

/// One setting of a profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    pub category: ProfileCategory,
    /// Key in the `tcp` table.
    pub key: &'static str,
    pub value: ProfileValue,
}

const fn set(category: ProfileCategory, key: &'static str, value: ProfileValue) -> Setting {
    Setting { category, key, value }
}

use ProfileCategory::{Cc, Rtx, Rx};
use ProfileValue::{Float, Int, QueueMinusOne};

/// pFabric's Table II (see the module table).
const PFABRIC: [Setting; 8] = [
    set(Rtx, "min_rto_ms", Float(0.045)),
    set(Rtx, "max_rto_s", Float(2.0)),
    set(Rtx, "initial_rto_s", Float(0.000045)),
    set(Rtx, "clock_granularity_us", Float(1.0)),
    set(Rx, "delack_timeout_ms", Float(0.006)),
    set(Rx, "rcv_buf_bytes", Int(super::MAX_SCALED_WINDOW)),
    set(Cc, "init_cwnd_pkts", Int(12)),
    set(Cc, "max_cwnd_pkts", QueueMinusOne),
];

/// Every setting of `profile`, in table order.
pub fn settings(profile: TcpProfile) -> &'static [Setting] {
    match profile {
        TcpProfile::Pfabric => &PFABRIC,
    }
}

/// `max_cwnd_pkts` for [`ProfileValue::QueueMinusOne`]: `queue_pkts - 1`, at least `init_cwnd_pkts`.
pub fn queue_minus_one(queue_pkts: u64, init_cwnd_pkts: u64) -> u64 {
    queue_pkts.saturating_sub(1).max(init_cwnd_pkts).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::TcpConfig;

    #[test]
    fn names_round_trip_and_every_category_has_settings() {
        for (n, c) in ProfileCategory::NAMES.iter().zip(ProfileCategory::ALL) {
            assert_eq!(ProfileCategory::from_name(n), Some(c));
            assert!(settings(TcpProfile::Pfabric).iter().any(|s| s.category == c));
        }
        assert_eq!(TcpProfile::from_name("pfabric"), Some(TcpProfile::Pfabric));
        assert_eq!(TcpProfile::from_name("pFabric"), None);
        assert_eq!(ProfileCategory::from_name("rto"), None);
    }

    #[test]
    fn the_pfabric_values_are_valid_tcp_settings() {
        // every key exists with the documented value and the whole profile validates
        let mut c = TcpConfig::default();
        for s in settings(TcpProfile::Pfabric) {
            match (s.key, s.value) {
                ("min_rto_ms", Float(v)) => c.min_rto_ms = v,
                ("max_rto_s", Float(v)) => c.max_rto_s = v,
                ("initial_rto_s", Float(v)) => c.initial_rto_s = v,
                ("clock_granularity_us", Float(v)) => c.clock_granularity_us = v,
                ("delack_timeout_ms", Float(v)) => c.delack_timeout_ms = v,
                ("rcv_buf_bytes", Int(v)) => c.rcv_buf_bytes = v,
                ("init_cwnd_pkts", Int(v)) => c.init_cwnd_pkts = v as u32,
                ("max_cwnd_pkts", QueueMinusOne) => c.max_cwnd_pkts = queue_minus_one(36, 12) as u32,
                other => panic!("unexpected setting {other:?}"),
            }
        }
        c.validate().unwrap();
        assert_eq!((c.min_rto(), c.initial_rto()), (crate::time::SimDuration::from_us(45), crate::time::SimDuration::from_us(45)));
        assert_eq!(c.rcv_wscale(), 14);
        assert_eq!(c.max_cwnd_pkts, 35);
        assert_eq!((queue_minus_one(8, 12), queue_minus_one(0, 0)), (12, 1));
    }
}
