//! The `[measure]` table: the measurement window, the measured ports, and the optional
//! observations (time series, group windows, drop runs, a port's trace).
//!
//! Rules:
//! - Holds the table's types and bounds; its checks are in `validate.rs`. What reads it at run
//!   time: `series.rs`, `groups.rs` and `probe.rs` (at the crate root).
//! - Imports nothing of this crate.

use serde::{Deserialize, Serialize};

/// The measurement window is `[duration_s - window_s, duration_s]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureConfig {
    /// Length of the measurement window, seconds (default: the whole run).
    pub window_s: Option<f64>,
    /// Ports to measure: a list of names (`["sw->r0"]`) or `"all"` (every switch port);
    /// default: the topology's bottlenecks.
    pub ports: Option<MeasuredPorts>,
    /// Time series (`timeseries.csv`): sample queues and flows every this many seconds.
    /// Default: off. See `series.rs`.
    pub sample_interval_s: Option<f64>,
    /// Sample every flow's delivered bytes (default true); `false` keeps only the queues,
    /// which is what long runs of many flows want.
    #[serde(default = "yes")]
    pub sample_flows: bool,
    /// Also sample every TCP sender's congestion window (needs `sample_interval_s`).
    #[serde(default)]
    pub cwnd: bool,
    /// Average the groups' goodput over consecutive windows of this many seconds, a whole
    /// multiple of `sample_interval_s` (`group_windows.csv`; `groups.rs`).
    pub group_window_s: Option<f64>,
    /// Count consecutive-drop runs at these ports (`drop_runs.csv`; `probe.rs`).
    pub drop_runs_ports: Option<Vec<String>>,
    /// Trace every packet event at one port (`trace.csv`; `probe.rs`).
    pub trace: Option<TraceConfig>,
    /// With jobs (collective patterns): run each job alone on the fabric as well, for its
    /// slowdown (`jobs.csv`; `run.rs`). Default true.
    #[serde(default = "yes")]
    pub jobs_baseline: bool,
}

fn yes() -> bool {
    true
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            window_s: None,
            ports: None,
            sample_interval_s: None,
            sample_flows: true,
            cwnd: false,
            group_window_s: None,
            drop_runs_ports: None,
            trace: None,
            jobs_baseline: true,
        }
    }
}

/// `measure.ports`: the ports a run measures, by name, or every switch port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MeasuredPorts {
    /// `"all"`: every port of every switch (not the hosts' NICs).
    All,
    /// The ports named, in the order given.
    Named(Vec<String>),
}

impl MeasuredPorts {
    /// The word that stands for every switch port.
    pub const ALL: &'static str = "all";
}

impl<'de> Deserialize<'de> for MeasuredPorts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MeasuredPorts;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a list of port names or the word \"{}\" (every switch port)", MeasuredPorts::ALL)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MeasuredPorts, E> {
                match v {
                    MeasuredPorts::ALL => Ok(MeasuredPorts::All),
                    v => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<MeasuredPorts, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = seq.next_element::<String>()? {
                    names.push(n);
                }
                Ok(MeasuredPorts::Named(names))
            }
        }
        d.deserialize_any(V)
    }
}

/// Written as it is read: the list, or the word `"all"`.
impl Serialize for MeasuredPorts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MeasuredPorts::All => s.serialize_str(MeasuredPorts::ALL),
            MeasuredPorts::Named(v) => v.serialize(s),
        }
    }
}

/// The most rows a run's time series may have (about 32 bytes each in memory): a finer
/// `sample_interval_s` is invalid input (`series.rs`).
pub const MAX_SERIES_ROWS: f64 = 50.0e6;

/// The most trace rows a run may keep (`measure.trace.max_rows` at most).
pub const MAX_TRACE_ROWS: u64 = 50_000_000;
const DEFAULT_TRACE_ROWS: u64 = 1_000_000;

/// `[measure.trace]`: the event trace of one port.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// The output port, by name (`"e0_0->h0"`).
    pub port: String,
    /// The window of simulated time traced, seconds (default: the whole run).
    #[serde(default)]
    pub start_s: f64,
    pub end_s: Option<f64>,
    /// Rows kept at most; the trace stops there (`probe.rs`).
    #[serde(default = "default_trace_rows")]
    pub max_rows: u64,
}

fn default_trace_rows() -> u64 {
    DEFAULT_TRACE_ROWS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: &str) -> Result<MeasureConfig, String> {
        toml::from_str::<MeasureConfig>(&format!("ports = {value}")).map_err(|e| e.message().to_string())
    }

    #[test]
    fn ports_are_a_list_of_names_or_the_word_all() {
        assert_eq!(parse(r#""all""#).unwrap().ports, Some(MeasuredPorts::All));
        assert_eq!(parse(r#"["sw->r0", "sw->r1"]"#).unwrap().ports, Some(MeasuredPorts::Named(vec!["sw->r0".into(), "sw->r1".into()])));
        for bad in [r#""every""#, r#""*""#, "3", "[1, 2]"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("port name") || e.contains("string"), "{bad}: {e}");
        }
        assert!(parse(r#""every""#).unwrap_err().contains(r#"the word "all""#));
    }

    #[test]
    fn ports_are_written_as_they_are_read() {
        for v in [MeasuredPorts::All, MeasuredPorts::Named(vec!["e0_0->h0".into()])] {
            let text = toml::to_string(&MeasureConfig { ports: Some(v.clone()), ..Default::default() }).unwrap();
            assert_eq!(toml::from_str::<MeasureConfig>(&text).unwrap().ports, Some(v), "{text}");
        }
    }
}
