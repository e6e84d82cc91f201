//! `switch.toml`: the switch's typed configuration, validated before any socket is opened.
//!
//! Rules:
//! - Unknown keys and wrong types are refused with the key's dotted path
//!   (`serde_path_to_error`, as the simulator's scenario loader does): `port[1].rate_bps`.
//! - Values are validated into a [`ConfigError`] naming the key: a port's `[port.queue]` is the
//!   simulator's `QueueConfig` and is validated by it (`port[0].queue.hcf.bins`), `[fairq]` is
//!   the simulator's `FairqConfig` (`fairq.target_fraction`).
//! - Keys (units in the names):
//!
//! | key                      | unit   | default   | meaning                                        |
//! |--------------------------|--------|-----------|------------------------------------------------|
//! | `seed`                   | -      | 1         | master seed of the random streams (`--seed` wins) |
//! | `series_interval_ms`     | ms     | 10        | period of the queue / FairQ time series        |
//! | `wait`                   | -      | `"poll"`  | `poll`, `busy` or `hybrid` ([`crate::wait`])   |
//! | `spin_us`                | us     | 200       | `hybrid`: spin this long after activity, `0` to 1e6 |
//! | `cpu`                    | -      | absent    | pin the switch to this CPU (0 to 1023)         |
//! | `arrival`                | -      | `"kernel"`| a frame's arrival time: the kernel's receive time, or when read |
//! | `[fairq]`                | table  | absent    | FairQ on every port (`fairq.switches` must be empty) |
//! | `[[port]]`               | tables | required  | one per interface, 2 to [`MAX_PORTS`]          |
//! | `port.iface`             | name   | required  | the interface (a veth end in the switch's netns) |
//! | `port.prefixes`          | list   | required  | IPv4 destinations behind it, `"a.b.c.d/len"`   |
//! | `port.rate_bps`          | bit/s  | required  | serializer rate, `> 0` (counts IPv4 bytes)     |
//! | `port.delay_us`          | us     | 0         | fixed delay after serialization, `>= 0`        |
//! | `port.burst_us`          | us     | 5000      | token-bucket depth, in time at `rate_bps`      |
//! | `port.input_rate_bps`    | bit/s  | absent    | frames received here arrive at most this fast (the link's rate; [`crate::switch`], "Input line") |
//! | `port.input_max_wait_us` | us     | 1000      | the longest a frame waits in the input line, 0 to 1e6 |
//! | `[port.queue]`           | table  | DropTail 100 pkts | the discipline, as a scenario's `[queue]` |
//!
//! - Prefixes must not have host bits set; the same prefix on two ports is refused; the
//!   longest matching prefix wins.

use crate::wait::WaitMode;
use dcfair_core::fairq::FairqConfig;
use dcfair_core::qdisc::{ConfigError, QueueConfig};
use serde::Deserialize;

/// Most `[[port]]` tables: the testbed gives every sender its own host and port (the HCF
/// long-flow setting scaled to 100 flows needs 102), and a port index must fit the `u16` the
/// switch keeps as a frame's input port.
pub const MAX_PORTS: usize = 1024;

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    pub seed: Option<u64>,
    #[serde(default = "default_series_ms")]
    pub series_interval_ms: f64,
    #[serde(default)]
    pub wait: WaitMode,
    #[serde(default = "default_spin_us")]
    pub spin_us: f64,
    pub cpu: Option<usize>,
    #[serde(default)]
    pub arrival: Arrival,
    pub fairq: Option<FairqConfig>,
    /// One switch of a simulated fabric, routed by the simulator's code ([`crate::fabric`]).
    pub fabric: Option<FabricConfig>,
    #[serde(default)]
    pub port: Vec<PortConfig>,
}

/// The `[fabric]` table: which scenario, run, switch and addresses (docs/testbed.md, "Fabrics").
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricConfig {
    /// The scenario file, and its `--set` overrides (`KEY=VALUE`).
    pub scenario: String,
    #[serde(default)]
    pub set: Vec<String>,
    /// The run's seed (the simulation's; `--seed`/`seed` when absent).
    pub seed: Option<u64>,
    /// This switch's node name in the scenario (`e0_0`, `spine1`, ...).
    pub node: String,
    /// IPv4 address -> host name of the scenario.
    pub hosts: std::collections::BTreeMap<String, String>,
    /// The planned TCP flows: where each listens, and its other end.
    #[serde(default)]
    pub flow: Vec<FabricFlow>,
}

/// One `[[fabric.flow]]`: the connections between `peer` and `listen` (`a.b.c.d:port`) are
/// the scenario's TCP flow `flow`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricFlow {
    pub listen: String,
    pub peer: String,
    pub flow: u32,
}

fn default_series_ms() -> f64 {
    10.0
}
/// The `arrival` key: which time a frame arrives at its output queue.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// When the kernel received it (`SO_TIMESTAMPNS`), in that order (the default).
    #[default]
    Kernel,
    /// When the switch reads it, socket by socket in port order: after a stall of the loop the
    /// low-numbered ports' frames reach a full queue first, a bias that starved the testbed's
    /// high-numbered flows (docs/validation.md, testbed section). Kept for comparison.
    Read,
}

fn default_spin_us() -> f64 {
    // longer than the gaps between frames of a flow at 100 Mbit/s (120 us per full frame), so
    // a hybrid switch stays awake while a flow lasts
    200.0
}
fn default_burst_us() -> f64 {
    // On a loaded 2-CPU machine (load average 12) the loop is descheduled for milliseconds: with
    // 50 or 500 us the 1 Gbit/s port lost half its capacity, with 5 ms it kept line rate
    // (bench/switch.py, docs/performance.md). 5 ms is 417 full-size packets at 1 Gbit/s, 42 at
    // 100 Mbit/s; the bucket is used only after a late wake-up.
    5000.0
}

fn default_input_max_wait_us() -> f64 {
    // about 8 full frames at 100 Mbit/s: the clumps of a switch woken a millisecond late are
    // spaced, and a link that stays busy carries at most this lag (docs/testbed.md)
    1000.0
}

/// One `[[port]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    pub iface: String,
    /// Required without `[fabric]`; with it, routing is the fabric's and prefixes are unused.
    #[serde(default)]
    pub prefixes: Vec<String>,
    /// With `[fabric]`: the simulator's local index of this port at `fabric.node`.
    pub link: Option<u16>,
    pub rate_bps: f64,
    #[serde(default)]
    pub delay_us: f64,
    #[serde(default = "default_burst_us")]
    pub burst_us: f64,
    /// The rate of the link into this port: frames received faster wait in its input line.
    pub input_rate_bps: Option<f64>,
    /// The longest a frame waits in the input line.
    #[serde(default = "default_input_max_wait_us")]
    pub input_max_wait_us: f64,
    #[serde(default)]
    pub queue: QueueConfig,
}

/// A parsed IPv4 prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    pub net: u32,
    pub len: u8,
}

impl Prefix {
    pub fn mask(self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - self.len as u32)
        }
    }
    #[inline]
    pub fn contains(self, a: u32) -> bool {
        a & self.mask() == self.net
    }
    /// Parses `"a.b.c.d/len"`.
    pub fn parse(s: &str) -> Result<Prefix, String> {
        let (a, l) = s.split_once('/').ok_or_else(|| format!("{s:?} is not a.b.c.d/len"))?;
        let addr: std::net::Ipv4Addr = a.parse().map_err(|_| format!("{a:?} is not an IPv4 address"))?;
        let len: u8 = l.parse().map_err(|_| format!("{l:?} is not a prefix length"))?;
        if len > 32 {
            return Err(format!("prefix length {len} is above 32"));
        }
        let p = Prefix { net: u32::from(addr), len };
        if p.net & !p.mask() != 0 {
            return Err(format!("{s:?} has host bits set"));
        }
        Ok(p)
    }
}

impl SwitchConfig {
    /// Parses and validates TOML text.
    pub fn from_toml(text: &str) -> Result<SwitchConfig, ConfigError> {
        let de = toml::Deserializer::new(text);
        let cfg: SwitchConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let top = path == "." || path.is_empty();
            let msg = e.inner().message().trim().to_string();
            // a missing key is named by its own path, not its table's (the path of an
            // unknown key already ends with the key)
            match msg.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
                Some(f) => ConfigError::new(if top { f.to_string() } else { format!("{path}.{f}") }, msg.clone()),
                None => ConfigError::new(if top { "<file>".to_string() } else { path }, msg),
            }
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks every value; keys are named as in the file.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let s = self.series_interval_ms;
        if !(s.is_finite() && s > 0.0 && s <= 1e6) {
            return Err(ConfigError::new("series_interval_ms", format!("must be a positive number of ms, got {s}")));
        }
        if !(self.spin_us.is_finite() && self.spin_us >= 0.0 && self.spin_us <= 1e6) {
            return Err(ConfigError::new("spin_us", format!("must be 0 to 1e6 us, got {}", self.spin_us)));
        }
        if let Some(c) = self.cpu {
            if c >= 1024 {
                return Err(ConfigError::new("cpu", format!("must be a CPU number 0 to 1023, got {c}")));
            }
        }
        if let Some(fq) = &self.fairq {
            fq.validate().map_err(|e| e.within("fairq"))?;
            if !fq.switches.is_empty() {
                return Err(ConfigError::new("fairq.switches", "the switch runs FairQ on every port; leave this empty"));
            }
        }
        if self.port.len() < 2 {
            return Err(ConfigError::new("port", format!("need at least 2 [[port]] tables, got {}", self.port.len())));
        }
        if self.port.len() > MAX_PORTS {
            return Err(ConfigError::new("port", format!("at most {MAX_PORTS} ports, got {}", self.port.len())));
        }
        let mut seen: Vec<(Prefix, usize)> = Vec::new();
        for (i, p) in self.port.iter().enumerate() {
            let k = |key: &str| format!("port[{i}].{key}");
            if p.iface.is_empty() || p.iface.len() > 15 || p.iface.contains('/') {
                return Err(ConfigError::new(k("iface"), format!("{:?} is not an interface name (1 to 15 characters)", p.iface)));
            }
            if self.fabric.is_some() {
                match p.link {
                    None => return Err(ConfigError::new(k("link"), "required with [fabric]: the simulator's port index at fabric.node")),
                    Some(l) => {
                        if let Some(j) = self.port[..i].iter().position(|q| q.link == Some(l)) {
                            return Err(ConfigError::new(k("link"), format!("{l} is already port[{j}]")));
                        }
                    }
                }
            }
            if let Some(j) = self.port[..i].iter().position(|q| q.iface == p.iface) {
                return Err(ConfigError::new(k("iface"), format!("{:?} is already port[{j}]", p.iface)));
            }
            if p.prefixes.is_empty() && self.fabric.is_none() {
                return Err(ConfigError::new(k("prefixes"), "list at least one a.b.c.d/len"));
            }
            for (n, s) in p.prefixes.iter().enumerate() {
                let pf = Prefix::parse(s).map_err(|r| ConfigError::new(format!("port[{i}].prefixes[{n}]"), r))?;
                if let Some((_, j)) = seen.iter().find(|(q, _)| *q == pf) {
                    return Err(ConfigError::new(format!("port[{i}].prefixes[{n}]"), format!("{s} is already routed to port[{j}]")));
                }
                seen.push((pf, i));
            }
            if !(p.rate_bps.is_finite() && p.rate_bps >= 1.0 && p.rate_bps <= 1e12) {
                return Err(ConfigError::new(k("rate_bps"), format!("must be a rate in bit/s, 1 to 1e12, got {}", p.rate_bps)));
            }
            if !(p.delay_us.is_finite() && p.delay_us >= 0.0 && p.delay_us <= 1e7) {
                return Err(ConfigError::new(k("delay_us"), format!("must be 0 to 1e7 us, got {}", p.delay_us)));
            }
            if !(p.burst_us.is_finite() && p.burst_us >= 0.0 && p.burst_us <= 1e6) {
                return Err(ConfigError::new(k("burst_us"), format!("must be 0 to 1e6 us, got {}", p.burst_us)));
            }
            if let Some(r) = p.input_rate_bps {
                if !(r.is_finite() && (1.0..=1e12).contains(&r)) {
                    return Err(ConfigError::new(k("input_rate_bps"), format!("must be a rate in bit/s, 1 to 1e12, got {r}")));
                }
            }
            if !(p.input_max_wait_us.is_finite() && (0.0..=1e6).contains(&p.input_max_wait_us)) {
                return Err(ConfigError::new(k("input_max_wait_us"), format!("must be 0 to 1e6 us, got {}", p.input_max_wait_us)));
            }
            p.queue.validate().map_err(|e| e.within(&k("queue")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
seed = 7
[[port]]
iface = "sw-h1"
prefixes = ["10.0.0.1/32"]
rate_bps = 1e8
[[port]]
iface = "sw-h2"
prefixes = ["10.0.0.2/32", "10.1.0.0/16"]
rate_bps = 1e8
delay_us = 100
[port.queue]
kind = "hcf"
limit_pkts = 50
"#;

    fn err(text: &str) -> String {
        SwitchConfig::from_toml(text).unwrap_err().key
    }

    fn ports(n: usize) -> String {
        (0..n).map(|i| format!("[[port]]\niface = \"p{i}\"\nprefixes = [\"10.{}.{}.1/32\"]\nrate_bps = 1e8\n", i / 256, i % 256)).collect()
    }

    #[test]
    fn port_count_bounds() {
        assert_eq!(SwitchConfig::from_toml(&ports(102)).unwrap().port.len(), 102);
        assert_eq!(SwitchConfig::from_toml(&ports(MAX_PORTS)).unwrap().port.len(), MAX_PORTS);
        assert_eq!(err(&ports(MAX_PORTS + 1)), "port");
        assert_eq!(err(&ports(1)), "port");
    }

    #[test]
    fn good_file_parses() {
        let c = SwitchConfig::from_toml(GOOD).unwrap();
        assert_eq!(c.seed, Some(7));
        assert_eq!(c.port[1].queue.kind, dcfair_core::qdisc::QdiscKind::Hcf);
        assert_eq!(c.port[0].delay_us, 0.0);
        assert_eq!((c.wait, c.spin_us, c.cpu), (WaitMode::Poll, 200.0, None));
        let c = SwitchConfig::from_toml(&GOOD.replace("seed = 7", "wait = \"hybrid\"\nspin_us = 50\ncpu = 1")).unwrap();
        assert_eq!((c.wait, c.spin_us, c.cpu), (WaitMode::Hybrid, 50.0, Some(1)));
        assert_eq!(c.arrival, Arrival::Kernel);
        let c = SwitchConfig::from_toml(&GOOD.replace("seed = 7", "arrival = \"read\"")).unwrap();
        assert_eq!(c.arrival, Arrival::Read);
        assert_eq!(err(&GOOD.replace("seed = 7", "arrival = \"now\"")), "arrival");
    }
    #[test]
    fn errors_name_the_key() {
        assert_eq!(err(&GOOD.replace("seed = 7", "sed = 7")), "sed");
        assert_eq!(err(&GOOD.replace("delay_us = 100", "delay_ms = 100")), "port[1].delay_ms");
        assert_eq!(err(&GOOD.replace("rate_bps = 1e8\ndelay", "rate_bps = -1.0\ndelay")), "port[1].rate_bps");
        assert_eq!(err(&GOOD.replace("delay_us = 100", "delay_us = -1")), "port[1].delay_us");
        assert_eq!(err(&GOOD.replace("\"10.1.0.0/16\"", "\"10.1.0.1/16\"")), "port[1].prefixes[1]");
        assert_eq!(err(&GOOD.replace("\"10.1.0.0/16\"", "\"10.0.0.1/32\"")), "port[1].prefixes[1]");
        assert_eq!(err(&GOOD.replace("limit_pkts = 50", "limit_pkts = 0")), "port[1].queue.limit_pkts");
        assert_eq!(err(&GOOD.replace("kind = \"hcf\"", "kind = \"hcf\"\nbogus = 1")), "port[1].queue.bogus");
        assert_eq!(err(&GOOD.replace("iface = \"sw-h2\"", "iface = \"sw-h1\"")), "port[1].iface");
        assert_eq!(err(&format!("{GOOD}\n[fairq]\ntarget_fraction = 2.0\n")), "fairq.target_fraction");
        assert_eq!(err("seed = 1\n"), "port");
        assert_eq!(err(&GOOD.replace("seed = 7", "wait = \"spin\"")), "wait");
        assert_eq!(err(&GOOD.replace("seed = 7", "spin_us = -1")), "spin_us");
        assert_eq!(err(&GOOD.replace("seed = 7", "cpu = 5000")), "cpu");
        assert_eq!(err(&GOOD.replace("seed = 7", "cpu = -1")), "cpu");
        assert_eq!(err(&GOOD.replace("rate_bps = 1e8\ndelay", "rate_bps = \"fast\"\ndelay")), "port[1].rate_bps");
        assert_eq!(err(&GOOD.replace("delay_us = 100", "input_rate_bps = 0")), "port[1].input_rate_bps");
        assert_eq!(err(&GOOD.replace("delay_us = 100", "input_rate_bps = -1e8")), "port[1].input_rate_bps");
        assert_eq!(err(&GOOD.replace("delay_us = 100", "input_max_wait_us = -1")), "port[1].input_max_wait_us");
        assert!(SwitchConfig::from_toml(&GOOD.replace("delay_us = 100", "input_rate_bps = 1e8")).unwrap().port[1].input_rate_bps == Some(1e8));
    }
    #[test]
    fn prefixes_match_longest_first_semantics() {
        let p = Prefix::parse("10.1.0.0/16").unwrap();
        assert!(p.contains(0x0A01_0203));
        assert!(!p.contains(0x0A02_0203));
        assert!(Prefix::parse("0.0.0.0/0").unwrap().contains(12345));
        assert!(Prefix::parse("10.0.0.0/33").is_err());
        assert!(Prefix::parse("10.0.0").is_err());
    }
}
