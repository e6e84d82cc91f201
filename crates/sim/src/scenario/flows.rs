//! The workload tables of a scenario: the TCP flow groups (`[flows]`, `[groups.NAME]`), UDP
//! background (`[udp]`) and TCP incast (`[incast]`), with the host lists they share.
//!
//! Rules:
//! - Holds the tables' types, what follows from one table alone (sizes, end points by name)
//!   and the checks that need nothing but the table (`FlowsConfig::validate`); the checks
//!   against the rest of the scenario (host names, the run's length) are in `validate.rs`.
//!   The flows themselves are built in `workload.rs` (at the crate root), which reads these.
//! - A flow group gives its flows either by `count` with `src`/`dst` lists, or by a `pattern`
//!   (a standard traffic matrix, [`Pattern`]) over `hosts` (default: every host of the
//!   topology, [`Scenario::pattern_hosts`](super::schema::Scenario::pattern_hosts)); the pattern
//!   then fixes the number of flows ([`FlowsConfig::pattern_flows`]), so it excludes `count`, and
//!   it chooses the end points, so it excludes `src` and `dst` (but for the one receiver of
//!   `incast` and the one sender of `outcast`). The pairs themselves, drawn from the run's
//!   seed where the pattern is random, are made by `workload.rs`.
//! - A group whose `pattern` is a collective ([`Pattern::is_collective`]: `allreduce_ring`,
//!   `allreduce_tree`, `allgather`, `alltoall_collective`) is a job: `size_bytes` is the buffer
//!   each of its hosts holds, `iterations` and `compute_gap_s` repeat the collective, and its
//!   hosts are placed by `placement` (`job_hosts` of them, or the list `hosts`). Its transfers
//!   and their dependencies are `jobs.rs`'s (at the crate root); the keys only a job takes are
//!   invalid input on any other group, and the keys a job does not take (`count`, `src`,
//!   `dst`, `stride`) on a job.
//! - Imports nothing of this crate but the config layer's value checks.

use super::check::non_negative;
use dcfair_core::qdisc::ConfigError;
use dcfair_core::tcp::TcpConfig;
use dcfair_core::transport::udp::UdpPattern;
use dcfair_core::transport::TransportKind;
use serde::{Deserialize, Serialize};

/// One host name or a list of them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Hosts {
    One(String),
    Many(Vec<String>),
}

impl Hosts {
    pub fn names(&self) -> Vec<String> {
        match self {
            Hosts::One(s) => vec![s.clone()],
            Hosts::Many(v) => v.clone(),
        }
    }
}

/// A group of TCP flows. Without `src`/`dst` (dumbbell only), global flow i runs from sender
/// `i % senders` to receiver `i % receivers`; with them, the group's j-th flow runs from
/// `src[j % len]` to `dst[j % len]`; with `pattern`, the pattern places them (module rules).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowsConfig {
    /// Number of flows; required without `pattern`, not allowed with it.
    pub count: Option<u32>,
    /// A standard traffic matrix over `hosts` instead of `count`, `src` and `dst`.
    pub pattern: Option<Pattern>,
    /// The hosts `pattern` ranges over, in this order (default: every host of the topology).
    pub hosts: Option<Hosts>,
    /// `pattern = "stride"`: host i sends to host `(i + stride) mod N`.
    pub stride: Option<u64>,
    /// Payload bytes per flow; absent (and no `size_pkts`) = long-lived (never ends).
    pub size_bytes: Option<u64>,
    /// Payload size in full segments (the group's `tcp.mss_bytes` each); exclusive with
    /// `size_bytes`.
    pub size_pkts: Option<u64>,
    /// Sending hosts by name (one or a list).
    pub src: Option<Hosts>,
    /// Receiving hosts by name (one or a list).
    pub dst: Option<Hosts>,
    /// A switch that every packet of these flows, data and ACKs, passes through (a waypoint;
    /// the route to it and from it on are shortest paths). Overrides `routing.equal_length`'s
    /// core for these flows.
    pub via: Option<String>,
    /// Start times are uniform in `[start_min_s, start_max_s]`.
    #[serde(default)]
    pub start_min_s: f64,
    #[serde(default)]
    pub start_max_s: f64,
    /// The group's TCP, both ends of each flow. After [`load`](super::load::load), the whole
    /// configuration: the group's `tcp` table merged over the scenario's `[tcp]`. `None`: the
    /// scenario's `[tcp]`.
    pub tcp: Option<TcpConfig>,
    /// The flows' transport (`dcfair_core::transport`'s registry): `"tcp"` (the default, the
    /// group's `tcp` table) or another chosen transport, with its own table; segments of the
    /// group's `tcp.mss_bytes` + `tcp.header_bytes` whichever the transport.
    #[serde(default)]
    pub transport: TransportKind,
    /// A job (a collective `pattern`): how many hosts it runs on, placed by `placement`
    /// (`"contiguous"` or `"random"`); with `hosts` (placement `"list"`) the list gives them.
    pub job_hosts: Option<u32>,
    /// A job: where its hosts come from (default `"list"` with `hosts`, else `"contiguous"`).
    pub placement: Option<Placement>,
    /// A job: how many times the collective runs, one after another (default 1).
    pub iterations: Option<u32>,
    /// A job: compute time between the end of one iteration and the start of the next,
    /// seconds (default 0).
    pub compute_gap_s: Option<f64>,
}

/// `placement` of a job: which hosts it runs on (`jobs.rs` places them).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The next `job_hosts` hosts of the topology's order no other job holds (jobs with a list
    /// first, then the contiguous ones in group order).
    Contiguous,
    /// `job_hosts` hosts drawn from the run's seed among those no other job holds (after the
    /// lists and the contiguous jobs), in the topology's order.
    Random,
    /// The hosts named in `hosts`, in that order.
    List,
}

/// `flows.pattern`: which host of the pattern's N hosts (`hosts`, in order) sends to which.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// A random derangement: each host sends to one other host and receives from one (N flows).
    Permutation,
    /// Each host sends to a uniformly random other host; receivers may repeat (N flows).
    Random,
    /// Every ordered pair of distinct hosts (N (N - 1) flows).
    AllToAll,
    /// Host i sends to host `(i + stride) mod N` (N flows).
    Stride,
    /// Every host but the receiver (`dst`, or the first host) sends to it.
    Incast,
    /// The sender (`src`, or the first host) sends to every other host.
    Outcast,
    /// A job: ring all-reduce, 2 (N - 1) steps of N transfers of `size / N` bytes.
    AllreduceRing,
    /// A job: all-reduce by recursive halving (reduce-scatter) then doubling (all-gather),
    /// 2 log2 N steps of N transfers, N a power of two.
    AllreduceTree,
    /// A job: ring all-gather, N - 1 steps of N transfers of `size / N` bytes.
    Allgather,
    /// A job: all-to-all exchange, N (N - 1) transfers of `size / N` bytes at once (the
    /// collective; the traffic matrix of long flows is `all_to_all`).
    AlltoallCollective,
}

impl Pattern {
    pub const NAMES: [&'static str; 10] = [
        "permutation",
        "random",
        "all_to_all",
        "stride",
        "incast",
        "outcast",
        "allreduce_ring",
        "allreduce_tree",
        "allgather",
        "alltoall_collective",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// A collective: the group is a job (module rules).
    pub fn is_collective(self) -> bool {
        matches!(self, Pattern::AllreduceRing | Pattern::AllreduceTree | Pattern::Allgather | Pattern::AlltoallCollective)
    }

    /// The transfers one iteration of collective `self` makes over `n` hosts (0 for a traffic
    /// matrix).
    pub fn transfers_per_iteration(self, n: u64) -> u64 {
        let m = n.saturating_sub(1);
        match self {
            Pattern::AllreduceRing => 2 * m * n,
            Pattern::AllreduceTree => 2 * n.max(1).ilog2() as u64 * n,
            Pattern::Allgather => m * n,
            Pattern::AlltoallCollective => n * m,
            _ => 0,
        }
    }
}

impl FlowsConfig {
    /// Payload bytes per flow (`None`: long-lived).
    pub fn size(&self, mss: u32) -> Option<u64> {
        self.size_bytes.or(self.size_pkts.map(|p| p * mss as u64))
    }

    /// The flows `pattern` makes over `n` hosts, `end_in_hosts` telling whether the one
    /// receiver of `incast` (sender of `outcast`) is among them; `None` without a pattern.
    /// A job makes its transfers of every iteration.
    pub fn pattern_flows(&self, n: u64, end_in_hosts: bool) -> Option<u64> {
        Some(match self.pattern? {
            Pattern::Permutation | Pattern::Random | Pattern::Stride => n,
            Pattern::AllToAll => n.saturating_mul(n.saturating_sub(1)),
            Pattern::Incast | Pattern::Outcast => n - end_in_hosts as u64,
            p => p.transfers_per_iteration(n).saturating_mul(self.job_iterations() as u64),
        })
    }

    /// The job's collective, if the group is a job.
    pub fn collective(&self) -> Option<Pattern> {
        self.pattern.filter(|p| p.is_collective())
    }

    /// A job's placement: `placement`, else `list` with `hosts` and `contiguous` without.
    pub fn job_placement(&self) -> Placement {
        self.placement.unwrap_or(if self.hosts.is_some() { Placement::List } else { Placement::Contiguous })
    }

    /// How many hosts a job runs on: its list's length, or `job_hosts`.
    pub fn job_host_count(&self) -> u64 {
        match self.job_placement() {
            Placement::List => self.hosts.as_ref().map_or(0, |h| h.names().len() as u64),
            _ => self.job_hosts.unwrap_or(0) as u64,
        }
    }

    /// A job's iterations (default 1).
    pub fn job_iterations(&self) -> u32 {
        self.iterations.unwrap_or(1)
    }

    /// Checks the keys of a job (a collective `pattern`) that need only the table; keys
    /// relative to the group. Those a job does not take were refused before.
    fn validate_job(&self, p: Pattern) -> Result<(), ConfigError> {
        let name = p.name();
        let placement = self.job_placement();
        match (placement, &self.hosts, self.job_hosts) {
            (Placement::List, None, _) => return Err(ConfigError::new("hosts", "placement = \"list\" names the job's hosts here: give hosts")),
            (Placement::List, Some(_), Some(_)) => {
                return Err(ConfigError::new("job_hosts", "hosts lists the job's hosts, which sets their number: leave out job_hosts"))
            }
            (Placement::Contiguous | Placement::Random, Some(_), _) => {
                return Err(ConfigError::new("hosts", "a job's hosts are listed only with placement = \"list\""))
            }
            (Placement::Contiguous | Placement::Random, None, None) => {
                return Err(ConfigError::new("job_hosts", format!("a job ({name}) needs its number of hosts (job_hosts), or their list (hosts)")))
            }
            _ => {}
        }
        let key = if placement == Placement::List { "hosts" } else { "job_hosts" };
        let n = self.job_host_count();
        if n < 2 {
            return Err(ConfigError::new(key, format!("a job ({name}) needs at least 2 hosts, got {n}")));
        }
        if p == Pattern::AllreduceTree && !n.is_power_of_two() {
            return Err(ConfigError::new(
                key,
                format!("allreduce_tree (recursive halving-doubling) needs a power of two of hosts, got {n} (use allreduce_ring)"),
            ));
        }
        match self.size_bytes.or(self.size_pkts) {
            None => return Err(ConfigError::new("size_bytes", format!("a job ({name}) needs the bytes each host holds (size_bytes)"))),
            Some(_) if self.size_bytes.is_some_and(|s| s < n) => {
                return Err(ConfigError::new("size_bytes", format!("must be at least one byte per host ({n}), got {}", self.size_bytes.unwrap_or(0))))
            }
            Some(_) => {}
        }
        if self.iterations == Some(0) {
            return Err(ConfigError::new("iterations", "must be at least 1"));
        }
        if let Some(g) = self.compute_gap_s {
            if !g.is_finite() || g < 0.0 {
                return Err(ConfigError::new("compute_gap_s", format!("must be zero or a positive number of seconds, got {g}")));
            }
        }
        Ok(())
    }

    /// The one host named as the pattern's fixed end: `dst` of `incast`, `src` of `outcast`.
    pub fn pattern_end(&self) -> Option<String> {
        let list = match self.pattern? {
            Pattern::Incast => &self.dst,
            Pattern::Outcast => &self.src,
            _ => return None,
        };
        list.as_ref().and_then(|h| h.names().into_iter().next())
    }

    pub(crate) fn validate(&self, duration_s: f64) -> Result<(), ConfigError> {
        if self.collective().is_none() {
            let only_jobs = [
                ("job_hosts", self.job_hosts.is_some()),
                ("placement", self.placement.is_some()),
                ("iterations", self.iterations.is_some()),
                ("compute_gap_s", self.compute_gap_s.is_some()),
            ];
            if let Some((key, _)) = only_jobs.iter().find(|(_, set)| *set) {
                return Err(ConfigError::new(
                    *key,
                    "only for a job: set pattern to a collective (allreduce_ring, allreduce_tree, allgather, alltoall_collective)",
                ));
            }
        }
        match self.pattern {
            None => {
                if self.count.is_none() {
                    return Err(ConfigError::new("count", "required, and missing (or give a pattern)"));
                }
                if self.hosts.is_some() {
                    return Err(ConfigError::new("hosts", "names the hosts of a pattern: set pattern too, or use src and dst"));
                }
                if self.stride.is_some() {
                    return Err(ConfigError::new("stride", "only with pattern = \"stride\""));
                }
            }
            Some(p) => {
                let name = p.name();
                if self.count.is_some() {
                    return Err(ConfigError::new("pattern", format!("{name} sets the number of flows: leave out count")));
                }
                for (end, list, allowed) in [("src", &self.src, p == Pattern::Outcast), ("dst", &self.dst, p == Pattern::Incast)] {
                    match list {
                        Some(_) if !allowed => {
                            return Err(ConfigError::new(
                                "pattern",
                                format!("{name} chooses the end points: leave out {end} (give the hosts it ranges over in hosts)"),
                            ))
                        }
                        Some(h) if h.names().len() != 1 => {
                            return Err(ConfigError::new(end, format!("the {name} pattern has one {}: name one host", if end == "src" { "sender" } else { "receiver" })))
                        }
                        _ => {}
                    }
                }
                match (p, self.stride) {
                    (Pattern::Stride, None) => return Err(ConfigError::new("stride", "required with pattern = \"stride\"")),
                    (Pattern::Stride, Some(0)) => return Err(ConfigError::new("stride", "must be at least 1")),
                    (Pattern::Stride, Some(_)) | (_, None) => {}
                    (_, Some(_)) => return Err(ConfigError::new("stride", "only with pattern = \"stride\"")),
                }
                if p.is_collective() {
                    self.validate_job(p)?;
                }
            }
        }
        non_negative("start_min_s", self.start_min_s)?;
        non_negative("start_max_s", self.start_max_s)?;
        if self.start_max_s < self.start_min_s {
            return Err(ConfigError::new("start_max_s", "must not be before start_min_s"));
        }
        if self.start_min_s >= duration_s {
            return Err(ConfigError::new("start_min_s", "flows would start after the run ends"));
        }
        if self.size_bytes.is_some() && self.size_pkts.is_some() {
            return Err(ConfigError::new("size_pkts", "give size_bytes or size_pkts, not both"));
        }
        if self.size_bytes == Some(0) || self.size_pkts == Some(0) {
            return Err(ConfigError::new(
                if self.size_bytes.is_some() { "size_bytes" } else { "size_pkts" },
                "must be at least 1 (omit it for long-lived flows)",
            ));
        }
        Ok(())
    }
}

/// UDP background from its own sender host to receiver 0.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UdpConfig {
    /// Mean rate as a fraction of the bottleneck rate.
    pub rate_fraction: f64,
    #[serde(default)]
    pub pattern: UdpPattern,
    /// Bytes per packet on the wire.
    #[serde(default = "default_udp_size")]
    pub packet_bytes: u32,
    #[serde(default)]
    pub start_s: f64,
    /// Sending host (default: the dumbbell's `udp` host).
    pub src: Option<String>,
    /// Receiving host (default: the dumbbell's `r0`).
    pub dst: Option<String>,
    /// The 802.1p priority of its packets, 0 to 7: with `[pfc]`, `pfc.priority` makes the source
    /// lossless (PFC alone, no congestion control).
    #[serde(default)]
    pub priority: u8,
}

/// TCP incast: the clients request a block from `servers` servers at once; each answers on its
/// own persistent connection; the next request leaves `gap_s` after the last answer is complete.
/// Server i runs on `src[i % len(src)]` and answers `dst[(i / len(src)) % len(dst)]` (every
/// source for the first client, then every source for the next, ...); on a dumbbell the
/// defaults are senders `s0 .. s<servers-1>` and the client `r0`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    /// Number of server connections.
    pub servers: u32,
    /// Hosts the servers run on (default, dumbbell only: `s0 .. s<servers-1>`).
    pub src: Option<Hosts>,
    /// The requesting clients (default, dumbbell only: `r0`).
    pub dst: Option<Hosts>,
    /// Bytes per request, split evenly over the servers (each sends `ceil(block / servers)`).
    pub block_bytes: Option<u64>,
    /// Or: a fixed number of bytes per server per request (the block grows with the servers).
    pub server_bytes: Option<u64>,
    /// Requests in the run (the run may end first: `sim.duration_s` bounds it).
    pub rounds: u32,
    /// Time of the first request, seconds; the servers open their connections one after
    /// another before it, over `[0, start_s)`.
    #[serde(default = "default_incast_start")]
    pub start_s: f64,
    /// Think time between the end of one request and the next, seconds.
    #[serde(default)]
    pub gap_s: f64,
    /// Epochs of `rounds` requests each (default 1).
    #[serde(default = "default_epochs")]
    pub epochs: u32,
    /// Epoch k's first request leaves at `start_s + k x epoch_interval_s`, or `gap_s` after the
    /// previous epoch's last answer if that is later, seconds.
    #[serde(default)]
    pub epoch_interval_s: f64,
    /// The servers' transport: `"tcp"` (the default, `[tcp]`) or another chosen transport
    /// (each request is a write to the server's sender).
    #[serde(default)]
    pub transport: TransportKind,
    /// How a server answers (TCP only): over one connection held for the whole run
    /// (`"persistent"`, the default: opened before the first request, cwnd and RTO estimate
    /// carried over), or over a new connection per request (`"per_request"`: a handshake, the
    /// answer, a FIN, as a web client without keep-alive does; needs `tcp.handshake`).
    #[serde(default)]
    pub connection: IncastConnection,
}

/// `incast.connection`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum IncastConnection {
    #[default]
    Persistent,
    PerRequest,
}

fn default_epochs() -> u32 {
    1
}

fn default_incast_start() -> f64 {
    0.01
}

impl IncastConfig {
    /// Bytes each server sends per request.
    pub fn per_server(&self) -> u64 {
        match (self.block_bytes, self.server_bytes) {
            (Some(b), _) => b.div_ceil(self.servers.max(1) as u64),
            (None, Some(s)) => s,
            (None, None) => 0,
        }
    }
    /// The server hosts and the client hosts by name (the dumbbell's defaults filled in).
    pub fn endpoints(&self) -> (Vec<String>, Vec<String>) {
        let src = self.src.as_ref().map_or_else(|| (0..self.servers).map(|i| format!("s{i}")).collect(), Hosts::names);
        let dst = self.dst.as_ref().map_or_else(|| vec!["r0".to_string()], Hosts::names);
        (src, dst)
    }

    /// Bytes per request over all servers.
    pub fn block(&self) -> u64 {
        self.per_server() * self.servers as u64
    }
}

fn default_udp_size() -> u32 {
    1500
}
