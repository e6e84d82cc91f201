//! Memory admission: a scenario too large for the machine is refused before it is built.
//!
//! Rules:
//! - [`estimate`] sizes a scenario from its configuration alone (nothing is built): hosts and
//!   ports of its topology, and its flows (flow groups, the flows a group's `pattern` makes over
//!   its hosts, incast servers, and the Poisson flows its load, arrival window and mean flow
//!   size imply). Each costs what the engine keeps for it,
//!   measured on a dumbbell (about 7 KiB per sender host and flow): [`FLOW_BYTES`] per flow,
//!   [`HOST_BYTES`] per host, [`PORT_BYTES`] per port, plus [`BASE_BYTES`]. It is rough by
//!   design: it catches the scenario that needs gigabytes more than there are, not a few percent.
//! - [`admit`] compares the estimate with the bound: `DCFAIR_MAX_MEMORY_MB` when set (`--max-memory`
//!   of the command line sets it), else the smallest of what this process can still get: the
//!   memory the kernel says is available (`MemAvailable` of `/proc/meminfo`), what is left under
//!   its address-space limit (`ulimit -v`: the soft limit of `/proc/self/limits` less its
//!   `VmSize`), and what is left under its cgroup's `memory.max` (cgroup v2); no bound where none
//!   of these can be read. A value of `DCFAIR_MAX_MEMORY_MB` that is not a positive number is
//!   invalid input naming it. Over the bound, the scenario is invalid input naming the key that
//!   drives the size (the largest flow count or pattern, the topology's size key, or the Poisson load), with
//!   both figures and which bound it is: exit status 2, before any allocation of its size.
//! - What the estimate misses and the machine cannot give is caught by the allocator
//!   ([`crate::Allocator`]): a clear message and exit status 1, never a panic.
//! - Part of the config layer: [`admit`] is the last step of loading a scenario (`load.rs`).
//!   Imports nothing of this crate but the error type and the config layer's tables.

use super::poisson::PoissonConfig;
use super::schema::Scenario;
use super::topology::TopologyConfig;
use crate::error::Error;

/// What the engine keeps per flow (sender, receiver, observation, events), bytes.
pub const FLOW_BYTES: u64 = 4 << 10;
/// Per host (node, NIC, routes to it), bytes.
pub const HOST_BYTES: u64 = 3 << 10;
/// Per port (discipline, serializer, counters), bytes.
pub const PORT_BYTES: u64 = 1 << 10;
/// The engine and its tables before any of the above, bytes.
pub const BASE_BYTES: u64 = 32 << 20;

/// A scenario's rough memory need and the key that drives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub bytes: u64,
    pub flows: u64,
    pub hosts: u64,
    pub ports: u64,
    /// The scenario key whose value makes most of `bytes`.
    pub key: String,
}

/// Sizes `sc` (module rules).
pub fn estimate(sc: &Scenario) -> Estimate {
    let (hosts, ports, topo_key) = topology_size(&sc.topology);
    // the largest contributor among the flow sources, and all flows together
    let mut sources: Vec<(u64, String)> = sc
        .flow_groups()
        .into_iter()
        .map(|(name, f)| {
            let table = if name == "flows" { "flows".to_string() } else { format!("groups.{name}") };
            // an MPTCP flow is one flow per subflow
            (sc.group_flows(f).saturating_mul(sc.tcp_of(f).mptcp.subflows as u64), format!("{table}.{}", if f.pattern.is_some() { "pattern" } else { "count" }))
        })
        .collect();
    if let Some(ic) = &sc.incast {
        sources.push((ic.servers as u64, "incast.servers".into()));
    }
    if let Some(p) = &sc.poisson {
        sources.push((poisson_flows(sc, p, hosts), "poisson.load".into()));
    }
    let flows: u64 = sources.iter().map(|(n, _)| *n).sum();
    let flow_bytes = flows.saturating_mul(FLOW_BYTES);
    let topo_bytes = hosts.saturating_mul(HOST_BYTES).saturating_add(ports.saturating_mul(PORT_BYTES));
    let key = if flow_bytes >= topo_bytes {
        sources.into_iter().max_by_key(|(n, _)| *n).map_or(topo_key, |(_, k)| k)
    } else {
        topo_key
    };
    Estimate { bytes: BASE_BYTES.saturating_add(flow_bytes).saturating_add(topo_bytes), flows, hosts, ports, key }
}

/// Poisson flows a run will draw: the offered bytes over the arrival window, over the mean size.
fn poisson_flows(sc: &Scenario, p: &PoissonConfig, hosts: u64) -> u64 {
    let Some(cdf) = &p.cdf else { return 0 };
    let mean = cdf.mean_size_bytes(p.unit_bytes(sc.tcp.mss_bytes), p.max_size_bytes);
    let host_bps = match &sc.topology {
        TopologyConfig::FatTree(c) => c.host_rate_mbps,
        TopologyConfig::LeafSpine(c) => c.host_rate_mbps,
        TopologyConfig::ParkingLot(c) => c.host_rate_mbps,
        TopologyConfig::Dumbbell(c) => c.access_rate_mbps,
        TopologyConfig::Custom(_) => 10_000.0, // no single host rate: a 10 Gbit/s bound
    } * 1e6;
    let window = (p.stop_s(sc.sim.duration_s) - p.start_s).max(0.0);
    if !(mean > 0.0) {
        return 0;
    }
    (p.load * host_bps / 8.0 * hosts as f64 * window / mean).ceil().min(u64::MAX as f64) as u64
}

/// (hosts, ports, the key that sizes them) of a topology: two ports per link (one each way).
fn topology_size(t: &TopologyConfig) -> (u64, u64, String) {
    match t {
        TopologyConfig::Dumbbell(c) => {
            // the senders, the receivers and a UDP host, each on one link to the one switch
            let hosts = c.senders as u64 + c.receivers as u64 + 1;
            (hosts, 2 * hosts, "topology.senders".into())
        }
        TopologyConfig::FatTree(c) => {
            let k = c.k as u64;
            // k^3 / 4 host links, k^3 / 4 edge-aggregation and k^3 / 4 aggregation-core links
            (k * k * k / 4, 2 * (3 * k * k * k / 4), "topology.k".into())
        }
        TopologyConfig::LeafSpine(c) => {
            let key = if c.hosts_per_leaf >= c.leaves { "topology.hosts_per_leaf" } else { "topology.leaves" };
            let hosts = c.leaves as u64 * c.hosts_per_leaf as u64;
            (hosts, 2 * (hosts + c.leaves as u64 * c.spines as u64), key.into())
        }
        TopologyConfig::ParkingLot(c) => {
            let hosts = 2 * c.bottlenecks as u64 + 2;
            (hosts, 2 * (hosts + c.bottlenecks as u64), "topology.bottlenecks".into())
        }
        TopologyConfig::Custom(c) => (c.hosts.len() as u64, 2 * c.links.len() as u64, "topology.hosts".into()),
    }
}

/// The memory bound of this process, bytes (module rules), and where it comes from: a phrase
/// that completes "more than the <size> ...".
pub fn bound() -> Result<Option<(u64, &'static str)>, Error> {
    if let Ok(v) = std::env::var("DCFAIR_MAX_MEMORY_MB") {
        return match v.trim().parse::<f64>() {
            Ok(mb) if mb > 0.0 && mb.is_finite() => Ok(Some(((mb * 1048576.0) as u64, "allowed by --max-memory (DCFAIR_MAX_MEMORY_MB)"))),
            _ => Err(Error::invalid("DCFAIR_MAX_MEMORY_MB", format!("must be a positive number of MB, got {v:?}"))),
        };
    }
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let mut limits: Vec<(u64, &'static str)> = Vec::new();
    if let Some(kb) = read("/proc/meminfo").as_deref().and_then(|t| proc_field(t, "MemAvailable:")) {
        limits.push((kb * 1024, "this machine has available"));
    }
    // ulimit -v: what is left of the address space, after what this process maps already
    let cap = read("/proc/self/limits").as_deref().and_then(address_space_limit);
    if let (Some(cap), Some(kb)) = (cap, read("/proc/self/status").as_deref().and_then(|t| proc_field(t, "VmSize:"))) {
        limits.push((cap.saturating_sub(kb * 1024), "left under this process's address-space limit (ulimit -v)"));
    }
    // a cgroup v2 memory.max: what is left of it
    if let Some(dir) = read("/proc/self/cgroup").as_deref().and_then(|t| t.lines().find_map(|l| l.strip_prefix("0::"))) {
        let dir = format!("/sys/fs/cgroup{}", dir.trim());
        let num = |f: &str| read(&format!("{dir}/{f}")).and_then(|v| v.trim().parse::<u64>().ok());
        if let (Some(max), Some(cur)) = (num("memory.max"), num("memory.current")) {
            limits.push((max.saturating_sub(cur), "left under this cgroup's memory.max"));
        }
    }
    Ok(limits.into_iter().min_by_key(|(b, _)| *b))
}

/// A `Name:   1234 kB` field of a /proc file, in kB.
fn proc_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(name)).and_then(|l| l.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The soft address-space limit of /proc/self/limits, bytes (`None`: unlimited).
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..].split_whitespace().next()?.parse().ok()
}

/// Refuses `sc` when its estimate exceeds the bound (module rules).
pub fn admit(sc: &Scenario) -> Result<Estimate, Error> {
    admit_within(sc, bound()?)
}

/// [`admit`] against the bound `bound` (bytes, and where it comes from).
pub fn admit_within(sc: &Scenario, bound: Option<(u64, &str)>) -> Result<Estimate, Error> {
    let e = estimate(sc);
    if let Some((limit, what)) = bound {
        if e.bytes > limit {
            return Err(Error::invalid(
                &e.key,
                format!(
                    "the scenario needs about {} of memory ({} flows, {} hosts, {} ports), more than the {} {what}",
                    size(e.bytes),
                    e.flows,
                    e.hosts,
                    e.ports,
                    size(limit),
                ),
            ));
        }
    }
    Ok(e)
}

/// `1.5 GiB`, `300 MiB`.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMBBELL: &str = r#"
        [sim]
        duration_s = 1.0
        [topology]
        kind = "dumbbell"
        senders = 4
        access_rate_mbps = 1000.0
        access_delay_us = 1.0
        bottleneck_rate_mbps = 100.0
        bottleneck_delay_us = 1.0
        [flows]
        count = 4
    "#;

    fn load(over: &[(&str, &str)]) -> Result<Scenario, Error> {
        let ov: Vec<(String, String)> = over.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        crate::scenario::load::load(DUMBBELL, "t.toml", &ov)
    }

    #[test]
    fn the_estimate_grows_with_flows_and_hosts_and_names_the_driver() {
        let small = estimate(&load(&[]).unwrap());
        assert_eq!((small.flows, small.hosts), (4, 6));
        let many_flows = estimate(&load(&[("flows.count", "1000000")]).unwrap());
        assert_eq!(many_flows.key, "flows.count");
        assert_eq!(many_flows.bytes - small.bytes, (1_000_000 - 4) * FLOW_BYTES);
        let many_hosts = estimate(&load(&[("topology.senders", "1000000")]).unwrap());
        assert_eq!(many_hosts.key, "topology.senders");
    }

    #[test]
    fn the_estimate_counts_the_flows_a_pattern_makes() {
        // 8,192 senders, 1 receiver: all_to_all over 8,193 hosts is 67 M flows, about 256 GiB
        let sc = load(&[("topology.senders", "8192"), ("groups.x.pattern", "all_to_all")]);
        // without a bound (the load itself may refuse it already, naming the same key)
        let e = match sc {
            Ok(sc) => estimate(&sc),
            Err(Error::Invalid { key, .. }) => return assert_eq!(key, "groups.x.pattern"),
            Err(other) => panic!("{other:?}"),
        };
        assert_eq!((e.flows, e.key.as_str()), (4 + 8193 * 8192, "groups.x.pattern"));
        assert!(admit_within(&load(&[("groups.x.pattern", "all_to_all")]).unwrap(), Some((64 << 20, "--max-memory"))).is_ok());
        let perm = estimate(&load(&[("groups.x.pattern", "permutation")]).unwrap());
        assert_eq!(perm.flows, 4 + 5, "[flows] and one flow per host");
    }

    #[test]
    fn a_scenario_over_the_bound_is_invalid_input_naming_its_key() {
        let bound = Some((64 << 20, "allowed by --max-memory"));
        let err = admit_within(&load(&[("flows.count", "100000")]).unwrap(), bound).unwrap_err();
        assert!(admit_within(&load(&[]).unwrap(), bound).is_ok());
        match err {
            Error::Invalid { key, reason } => {
                assert_eq!(key, "flows.count");
                assert!(reason.contains("MiB") && reason.contains("--max-memory"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_address_space_limit_is_read_from_proc_limits() {
        let capped = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max cpu time              unlimited            unlimited            seconds\n\
                      Max address space         1024000000           unlimited            bytes\n";
        assert_eq!(address_space_limit(capped), Some(1_024_000_000));
        assert_eq!(address_space_limit(&capped.replace("1024000000", "unlimited")), None);
        assert_eq!(proc_field("MemTotal:  100 kB\nMemAvailable:   2048 kB\n", "MemAvailable:"), Some(2048));
    }
}
