//! The scenario as a whole: [`Scenario`], the `[sim]` table, and what follows from several
//! tables together (the flow groups in order, a group's TCP, the MTU, the measurement window).
//!
//! Rules:
//! - [`Scenario`] is the deserialized TOML document after the overrides and the TCP merges of
//!   `load.rs`; [`Scenario::validate`] (`validate.rs`) has checked it before anyone reads it.
//! - Every table has its own file in this folder (`measure.rs`, `routing.rs`, `flows.rs`,
//!   `poisson.rs`, `topology.rs`); the tables of the mechanisms (`[queue]`, `[tcp]`, `[fairq]`)
//!   are `dcfair_core`'s, and so are the transports' (one top-level table per transport that
//!   has one, added to [`Scenario`] by `dcfair_core::transport_tables!` from the transports'
//!   registry: this file names no transport).
//! - Imports nothing of this crate but the config layer's tables.

use super::flows::{FlowsConfig, IncastConfig, UdpConfig};
use super::measure::MeasureConfig;
use super::poisson::PoissonConfig;
use super::routing::RoutingConfig;
use super::topology::{PortQueue, TopologyConfig};
use dcfair_core::qdisc::QueueConfig;
use dcfair_core::tcp::TcpConfig;
use dcfair_core::transport::TransportKind;
use serde::{Deserialize, Serialize};

dcfair_core::transport_tables! {
    /// A whole scenario file.
    #[derive(Clone, Debug, Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct Scenario {
        /// Name used in outputs and as the default output directory.
        #[serde(default = "default_name")]
        pub name: String,
        #[serde(default)]
        pub description: String,
        /// Master seed of every random stream of the run.
        #[serde(default = "default_seed")]
        pub seed: u64,
        pub sim: SimConfig,
        #[serde(default)]
        pub measure: MeasureConfig,
        #[serde(default)]
        pub routing: RoutingConfig,
        pub topology: TopologyConfig,
        /// Discipline of the measured (bottleneck) ports.
        #[serde(default)]
        pub queue: QueueConfig,
        /// Discipline of every host NIC (`[host_queue]`, same keys as `[queue]`). Absent: a DropTail
        /// FIFO of `topology.host_buffer_pkts`; without a limit it takes `host_buffer_pkts`.
        /// pFabric and the FQ-CoDel paper schedule at the hosts too.
        pub host_queue: Option<QueueConfig>,
        /// Buffer and/or discipline of named ports (`[ports."sw->r0"]`), over the topology's.
        #[serde(default)]
        pub ports: std::collections::BTreeMap<String, PortQueue>,
        #[serde(default)]
        pub tcp: TcpConfig,
        /// Long-lived (or fixed-size) TCP flows: the group named `flows`.
        pub flows: Option<FlowsConfig>,
        /// More named groups of TCP flows (`[groups.mice]`, ...), same keys as `[flows]`.
        #[serde(default)]
        pub groups: std::collections::BTreeMap<String, FlowsConfig>,
        /// UDP background traffic.
        pub udp: Option<UdpConfig>,
        /// Synchronized requests answered by many servers (TCP incast).
        pub incast: Option<IncastConfig>,
        /// Poisson flow arrivals with an empirical size distribution (`poisson.rs`, the table in
        /// `scenario/poisson.rs`).
        pub poisson: Option<PoissonConfig>,
        /// FairQ at the ports of some switches (`fairq.rs`): ACK windows rewritten to a fair share.
        pub fairq: Option<dcfair_core::fairq::FairqConfig>,
        /// PFC: a lossless class on every link (`pfc.rs`; the rules in `dcfair_core::pfc`).
        pub pfc: Option<dcfair_core::pfc::PfcConfig>,
        /// One buffer per switch, shared by its ports (`buffer.rs`; the rules in
        /// `dcfair_core::buffer`).
        pub buffer: Option<dcfair_core::buffer::BufferConfig>,
        // then one field per transport table, from the transports' registry
    }
}

/// The name of a scenario that gives none; [`load`](super::load::load) replaces it with the
/// scenario file's stem.
pub(crate) fn default_name() -> String {
    "scenario".into()
}
fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Simulated time, seconds.
    pub duration_s: f64,
    /// How events at the very same picosecond are ordered (see [`TieBreak`]).
    #[serde(default)]
    pub tie_break: TieBreak,
    /// Threads one run uses (see [`Threads`]).
    #[serde(default)]
    pub threads: Threads,
}

/// Threads one run uses (`sim.threads`): a number, or `"auto"`, as many as the machine has
/// cores. Above one, the network is split into as many parts, one per thread, in windows of
/// the least delay of a link between parts (`engine/threads.rs`); the outputs are the same
/// as on one thread, byte for byte, which is why it needs `sim.tie_break = "origin"`. A run
/// that cannot be split, or whose split would not pay, runs on one thread, and
/// `summary.json` says why (`threads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    Count(u32),
    Auto,
}

impl Default for Threads {
    fn default() -> Threads {
        Threads::Count(1)
    }
}

impl Threads {
    /// The threads asked for on a machine of `cores` cores.
    pub fn resolve(self, cores: usize) -> usize {
        match self {
            Threads::Count(n) => n as usize,
            Threads::Auto => cores.max(1),
        }
    }

    /// The most threads a run uses on a machine of `cores` cores: those asked for, at most the
    /// cores (more would spin at every window's barrier for a core to run on).
    pub fn at_most(self, cores: usize) -> usize {
        self.resolve(cores).min(cores)
    }

    /// This machine's cores, as [`Threads::resolve`] and [`Threads::at_most`] take them.
    pub fn cores() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

impl Serialize for Threads {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threads::Count(n) => s.serialize_u32(*n),
            Threads::Auto => s.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Threads, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Threads;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of threads from 1 to 256, or \"auto\"")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Threads, E> {
                if (1..=256).contains(&n) {
                    Ok(Threads::Count(n as u32))
                } else {
                    Err(E::custom(format!("{n} threads: must be from 1 to 256, or \"auto\"")))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Threads, E> {
                self.visit_i64(n.min(i64::MAX as u64) as i64)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Threads, E> {
                match v {
                    "auto" => Ok(Threads::Auto),
                    _ => v.parse::<i64>().map_err(|_| E::custom(format!("{v:?}: expected a number of threads or \"auto\""))).and_then(|n| self.visit_i64(n)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Order of events at the same instant (`sim.tie_break`).
///
/// Times are exact integers here, and in a dumbbell with one packet size and fixed delays every
/// event falls on a fine lattice: a retransmission timer (RTO 0.2 s x backoff, armed at an ACK
/// arrival or at the previous expiry) often expires at exactly the instant another flow's ACK
/// arrives, and the two senders' packets then reach the switch at the same picosecond, where
/// the first one takes the last free buffer slot. Which one goes first changes starvation a
/// lot (in the HCF long-flow scenario, "timer first" always: 19 % of the flows starved,
/// "ACK first" always: 32 %).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// Scheduling order. A timer, armed long before, runs before a packet event of its instant.
    #[default]
    Fifo,
    /// A seeded coin (stream `"engine.timer_ties"`) per armed timer: before or after the other
    /// events of its instant; everything else in scheduling order.
    RandomTimers,
    /// ns-2's clock: every event also carries the `f64` time a floating-point simulator would
    /// give it (the `f64` time of the event that scheduled it plus the delay in `f64` seconds:
    /// serialization `8 * bytes / rate_bps`, link delay `delay_us * 1e-6`, rate
    /// `rate_mbps * 1e6`, timer `now + RTO`), and exact ties go to the smaller `f64` time, then
    /// scheduling order. ns-2.35 computes its times this way (`Scheduler::schedule`,
    /// `LinkDelay::recv`), and its rounding errors decide such ties: in the long-flow scenario
    /// the timer loses every tie in some binades of simulated time ([1, 8) s, [16, 32) s,
    /// [64, 128) s) and wins in the others, which makes ns-2's starvation rise and fall over a
    /// run. This mode reproduces that; `validation/ns2/differences.md` has the evidence.
    FloatClock,
    /// By origin: ties go to the event scheduled by the node of smaller id, then, between two
    /// events one node scheduled, in the order it scheduled them (its own count). Each node's
    /// count depends on the events it ran alone, so the order is the same however the network
    /// is split into parts run apart (`engine.rs`, "Windows"): what a partitioned run needs.
    /// The random draws made per packet are then each node's own: a switch's spraying
    /// (`routing.spray`, one stream per switch) and a host's core per packet
    /// (`routing.core_packet`, one stream per host).
    Origin,
}

impl Scenario {
    /// The `[host_queue]` discipline with its limit filled in (`topology.host_buffer_pkts` when
    /// the table sets none); `None` without the table.
    pub fn host_queue(&self) -> Option<QueueConfig> {
        let mut hq = self.host_queue.clone()?;
        if hq.limit_pkts.is_none() && hq.limit_bytes.is_none() {
            hq.limit_pkts = Some(self.topology.host_buffer_pkts());
        }
        Some(hq)
    }

    /// Seconds at which the measurement window opens.
    pub fn window_start_s(&self) -> f64 {
        self.sim.duration_s - self.window_s()
    }
    pub fn window_s(&self) -> f64 {
        self.measure.window_s.unwrap_or(self.sim.duration_s)
    }

    /// The TCP flow groups in order: `[flows]` (named "flows") first, then `[groups.*]` by name.
    pub fn flow_groups(&self) -> Vec<(&str, &FlowsConfig)> {
        let mut v: Vec<(&str, &FlowsConfig)> = self.flows.iter().map(|f| ("flows", f)).collect();
        v.extend(self.groups.iter().map(|(k, f)| (k.as_str(), f)));
        v
    }

    /// The hosts the pattern of group `f` ranges over, in order: its `hosts`, or every host of
    /// the topology in the topology's order (`h0`, `h1`, ... on a fat-tree or leaf-spine; the
    /// dumbbell's senders, then its receivers, never its UDP host).
    pub fn pattern_hosts(&self, f: &FlowsConfig) -> Vec<String> {
        f.hosts.as_ref().map_or_else(|| self.topology.host_names(false), |h| h.names())
    }

    /// The number of flows of group `f`: its `count`, or what its pattern makes over its hosts
    /// (a job: the transfers of all its iterations over its hosts).
    pub fn group_flows(&self, f: &FlowsConfig) -> u64 {
        if f.pattern.is_none() {
            return f.count.unwrap_or(0) as u64;
        }
        if f.collective().is_some() {
            return f.pattern_flows(f.job_host_count(), false).unwrap_or(0);
        }
        let hosts = self.pattern_hosts(f);
        let end = f.pattern_end().or_else(|| hosts.first().cloned());
        let end_in_hosts = end.is_some_and(|e| hosts.contains(&e));
        f.pattern_flows(hosts.len() as u64, end_in_hosts).unwrap_or(0)
    }

    /// The jobs (the flow groups whose `pattern` is a collective) in flow-group order, each with
    /// its index among [`Scenario::flow_groups`].
    pub fn jobs(&self) -> Vec<(usize, &str, &FlowsConfig)> {
        self.flow_groups().into_iter().enumerate().filter(|(_, (_, f))| f.collective().is_some()).map(|(g, (n, f))| (g, n, f)).collect()
    }

    /// The TCP of the flows of group `f`: its own (merged) table, or the scenario's `[tcp]`.
    pub fn tcp_of<'a>(&'a self, f: &'a FlowsConfig) -> &'a TcpConfig {
        f.tcp.as_ref().unwrap_or(&self.tcp)
    }

    /// Wire size of the largest full TCP segment of any group, which is the MTU of the run.
    pub fn mtu(&self) -> u32 {
        let seg = |t: &TcpConfig| t.mss_bytes.saturating_add(t.header_bytes);
        self.flow_groups().into_iter().map(|(_, f)| seg(self.tcp_of(f))).fold(seg(&self.tcp), u32::max)
    }

    /// The files a run of this scenario reads besides the scenario itself (today the Poisson
    /// CDF), as resolved when it was loaded. A cached run is valid only for the same contents.
    pub fn input_files(&self) -> Vec<std::path::PathBuf> {
        self.poisson.iter().filter_map(|p| p.cdf_path.clone()).collect()
    }

    /// The chosen transports the flows use (flow groups, incast servers, Poisson flows), each
    /// once, in registry order: their tables apply, and so do their wrappers around every
    /// port's discipline (ExpressPass's credit shaper).
    pub fn transports_used(&self) -> Vec<TransportKind> {
        let mut used: Vec<TransportKind> = self.flow_groups().into_iter().map(|(_, f)| f.transport).collect();
        used.extend(self.incast.as_ref().map(|i| i.transport));
        used.extend(self.poisson.as_ref().map(|p| p.transport));
        TransportKind::ALL.iter().copied().filter(|k| used.contains(k)).collect()
    }
}
