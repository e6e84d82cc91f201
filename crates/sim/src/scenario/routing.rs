//! The `[routing]` table: how switches choose among equal-cost next hops.
//!
//! Rules:
//! - Holds the table's types only; the next-hop tables and the choice itself are in
//!   `routing.rs` (at the crate root), which reads these.
//! - Imports nothing of this crate.

use serde::{Deserialize, Serialize};

/// The `[routing]` table: how switches choose among equal-cost next hops (`routing.rs`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    #[serde(default)]
    pub mode: RoutingMode,
    /// Every packet climbs to a core switch (fat-tree core, leaf-spine spine) before descending.
    #[serde(default)]
    pub equal_length: bool,
    /// How the core is chosen with `equal_length`: per flow (`random`, `dst_bits`) or per
    /// packet (`random_packet`).
    #[serde(default)]
    pub core: CoreChoice,
    /// The seed of the `ecmp` and `symmetric` flow hash: a number (0, the default, is the hash
    /// of every earlier release), or `"run"` to draw it from the run's seed, so that runs with
    /// different seeds put the same flows on different paths.
    #[serde(default)]
    pub hash_seed: HashSeed,
    /// `mode = "flowlet"`: the idle time, microseconds, after which a flow's next packet may
    /// take another next hop (a new flowlet).
    #[serde(default = "default_flowlet_gap_us")]
    pub flowlet_gap_us: f64,
}

fn default_flowlet_gap_us() -> f64 {
    100.0
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            mode: RoutingMode::default(),
            equal_length: false,
            core: CoreChoice::default(),
            hash_seed: HashSeed::default(),
            flowlet_gap_us: default_flowlet_gap_us(),
        }
    }
}

/// How a switch picks among equal-cost next hops (`routing.mode`; the modes are described in
/// `routing.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RoutingMode {
    #[default]
    Ecmp,
    Symmetric,
    Spray,
    SprayRoundRobin,
    Flowlet,
    Adaptive,
    DstBits,
}

impl RoutingMode {
    /// A flow's packets may take different paths: no single path per flow.
    pub fn per_packet(self) -> bool {
        matches!(self, RoutingMode::Spray | RoutingMode::SprayRoundRobin | RoutingMode::Flowlet | RoutingMode::Adaptive)
    }
    /// Its name, as `routing.mode` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingMode::Ecmp => "ecmp",
            RoutingMode::Symmetric => "symmetric",
            RoutingMode::Spray => "spray",
            RoutingMode::SprayRoundRobin => "spray_round_robin",
            RoutingMode::Flowlet => "flowlet",
            RoutingMode::Adaptive => "adaptive",
            RoutingMode::DstBits => "dst_bits",
        }
    }
    /// The choice needs state the engine keeps (a counter, a flowlet table, the ports' queues).
    pub fn stateful(self) -> bool {
        matches!(self, RoutingMode::SprayRoundRobin | RoutingMode::Flowlet | RoutingMode::Adaptive)
    }
}

/// `routing.hash_seed`: a fixed seed of the flow hash, or one drawn from the run's seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashSeed {
    Fixed(u64),
    Run,
}

impl Default for HashSeed {
    fn default() -> Self {
        HashSeed::Fixed(0)
    }
}

impl HashSeed {
    /// The largest fixed seed: the hash is salted by `seed << 8 | hop count`.
    pub const MAX: u64 = (1 << 56) - 1;
}

impl<'de> Deserialize<'de> for HashSeed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = HashSeed;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "an integer from 0 to {} or the word \"run\"", HashSeed::MAX)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<HashSeed, E> {
                u64::try_from(v).map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self)).and_then(|v| self.visit_u64(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<HashSeed, E> {
                match v {
                    v if v <= HashSeed::MAX => Ok(HashSeed::Fixed(v)),
                    v => Err(E::invalid_value(serde::de::Unexpected::Unsigned(v), &self)),
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<HashSeed, E> {
                match v {
                    "run" => Ok(HashSeed::Run),
                    v => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Written as it is read: the number, or the word `"run"`.
impl Serialize for HashSeed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HashSeed::Fixed(v) => s.serialize_u64(*v),
            HashSeed::Run => s.serialize_str("run"),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CoreChoice {
    /// Uniformly at random per flow (stream `routing.core`).
    #[default]
    Random,
    /// Uniformly at random per packet (stream `routing.core_packet`): the TCP Outcast paper's
    /// words, "routing each packet to a core switch randomly".
    RandomPacket,
    /// By the destination host's number modulo the cores.
    DstBits,
}
