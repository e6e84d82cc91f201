//! Validation: every check of a scenario that needs only the scenario, with the key it names.
//!
//! Rules:
//! - [`Scenario::validate`] runs once, in `load.rs`, after deserialization and before anything
//!   is built or run; the first failing check is the error, its key the full dotted path
//!   (`groups.mice.size_pkts`, `measure.trace.max_rows`). The order of the checks is the order
//!   of the errors a scenario with several faults gets, and is kept.
//! - Checks that need the built network (a port name that exists only once the topology is
//!   built, hosts that cannot reach each other, a FairQ switch name) are not here: the build
//!   step makes them (`assemble.rs`, `topo/`, `probe.rs`, `fairq.rs`). A check that the build step
//!   repeats with what it learned ([`check_series_rows`] with the real number of measured
//!   ports) is defined here and called from there.
//! - Imports nothing of this crate but the config layer.

use super::check::{non_negative, positive};
use super::flows::{FlowsConfig, IncastConnection, Pattern, Placement};
use dcfair_core::transport::TransportKind;
use super::measure::{MeasuredPorts, MAX_SERIES_ROWS, MAX_TRACE_ROWS};
use super::poisson::{GROUP, GROUP_1PKT, MAX_FLOWS};
use super::schema::Scenario;
use super::topology::TopologyConfig;
use std::collections::HashSet;
use dcfair_core::qdisc::ConfigError;

impl Scenario {
    /// Checks every value of the scenario against the rest; the first error names its key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("sim.duration_s", self.sim.duration_s)?;
        if self.sim.threads != super::Threads::Count(1) && self.sim.tie_break != super::TieBreak::Origin {
            return Err(ConfigError::new("sim.threads", "more than one thread needs sim.tie_break = \"origin\", the order of events every split of the network runs alike"));
        }
        if self.sim.duration_s > 1.0e6 {
            return Err(ConfigError::new("sim.duration_s", "must be at most 1e6 seconds"));
        }
        if let Some(w) = self.measure.window_s {
            positive("measure.window_s", w)?;
            if w > self.sim.duration_s {
                return Err(ConfigError::new(
                    "measure.window_s",
                    format!("{w} s is longer than the run (sim.duration_s = {} s)", self.sim.duration_s),
                ));
            }
        }
        self.topology.validate().map_err(|e| e.within("topology"))?;
        positive("routing.flowlet_gap_us", self.routing.flowlet_gap_us)?;
        validate_series(self).map_err(|e| e.within("measure"))?;
        validate_group_windows(self).map_err(|e| e.within("measure"))?;
        validate_probes(self).map_err(|e| e.within("measure"))?;
        self.queue.validate().map_err(|e| e.within("queue"))?;
        if let Some(hq) = self.host_queue() {
            hq.validate().map_err(|e| e.within("host_queue"))?;
        }
        for (name, pq) in &self.ports {
            pq.validate().map_err(|e| e.within(&format!("ports.{name}")))?;
        }
        self.tcp.validate().map_err(|e| e.within("tcp"))?;
        if self.tcp.mptcp.subflows > 1 && (self.incast.is_some() || self.poisson.is_some()) {
            return Err(ConfigError::new(
                "tcp.mptcp.subflows",
                "incast servers and [poisson] flows are single-path TCP: give MPTCP to the flow groups in their own tcp tables ([flows.tcp], [groups.<name>.tcp])",
            ));
        }
        if let Some(pfc) = &self.pfc {
            pfc.validate().map_err(|e| e.within("pfc"))?;
        }
        if self.transports_used().contains(&TransportKind::Ndp) {
            let ndp = self.ndp.clone().unwrap_or_default();
            // the data queue NDP trims above must fit in the switch ports' buffer
            let buffer = match (self.queue.limit_bytes, self.queue.limit_pkts) {
                (Some(b), _) => Some(b),
                (None, Some(p)) => Some(p as u64 * ndp.packet_bytes() as u64),
                (None, None) => None,
            };
            if let Some(b) = buffer.filter(|&b| ndp.trim && ndp.trim_bytes() > b) {
                return Err(ConfigError::new(
                    "ndp.trim_threshold_pkts",
                    format!(
                        "{} packets of {} bytes ({} bytes) is above the switch ports' buffer of {b} bytes (queue.limit_pkts / queue.limit_bytes): the data queue would drop before it trims",
                        ndp.trim_threshold_pkts,
                        ndp.mss_bytes,
                        ndp.trim_bytes()
                    ),
                ));
            }
        }
        if self.transports_used().contains(&TransportKind::Roce) {
            let roce = self.roce.clone().unwrap_or_default();
            match &self.pfc {
                _ if !roce.lossless => {}
                None => {
                    return Err(ConfigError::new(
                        "pfc",
                        "RoCE flows need a lossless class: add a [pfc] table (or set roce.lossless = false to run RoCE over a lossy fabric)",
                    ))
                }
                Some(pfc) if pfc.priority != roce.priority => {
                    return Err(ConfigError::new(
                        "roce.priority",
                        format!("RoCE packets travel in class {}, but pfc.priority makes class {} lossless", roce.priority, pfc.priority),
                    ))
                }
                Some(_) => {}
            }
        }
        if let Some(b) = &self.buffer {
            b.validate().map_err(|e| e.within("buffer"))?;
            if let Some(pfc) = &self.pfc {
                let top = pfc.xoff_bytes + pfc.headroom_bytes.unwrap_or(0);
                if top > b.bytes {
                    return Err(ConfigError::new(
                        "pfc.xoff_bytes",
                        format!("xoff_bytes plus headroom_bytes ({top}) is above the switch buffer (buffer.bytes = {}): no gate could ever pause", b.bytes),
                    ));
                }
            }
        }
        if let Some(fq) = &self.fairq {
            fq.validate().map_err(|e| e.within("fairq"))?;
        }
        self.transport_tables().validate(self.mtu())?;
        if let (Some(_), Some(k)) = (&self.fairq, self.transports_used().into_iter().find(|k| !k.tcp_window())) {
            return Err(ConfigError::new("fairq", format!("FairQ rewrites TCP windows; it cannot run with {} flows", k.title())));
        }
        for (name, f) in self.flow_groups() {
            let key = if name == "flows" { "flows".to_string() } else { format!("groups.{name}") };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(ConfigError::new(key, "a group name may hold only letters, digits and '_'"));
            }
            if name == "flows" && self.flows.is_some() && self.groups.contains_key("flows") {
                return Err(ConfigError::new("groups.flows", "the name 'flows' is taken by the [flows] table"));
            }
            f.validate(self.sim.duration_s).map_err(|e| e.within(&key))?;
            if let Some(t) = &f.tcp {
                t.validate().map_err(|e| e.within(&format!("{key}.tcp")))?;
            }
            if !f.transport.multipath() && self.tcp_of(f).mptcp.subflows > 1 {
                return Err(ConfigError::new(
                    format!("{key}.transport"),
                    format!("{} flows are single-path: tcp.mptcp.subflows must be 1", f.transport.title()),
                ));
            }
            let host_names = self.topology.host_names(self.udp.is_some());
            let hosts: HashSet<&str> = host_names.iter().map(String::as_str).collect(); // 65,536 in a k = 64 fat-tree
            if f.pattern.is_some() {
                validate_pattern(self, f, &hosts).map_err(|e| e.within(&key))?;
                continue;
            }
            for (end, list) in [("src", &f.src), ("dst", &f.dst)] {
                match list {
                    Some(h) => {
                        let names = h.names();
                        if names.is_empty() {
                            return Err(ConfigError::new(format!("{key}.{end}"), "name at least one host"));
                        }
                        if let Some(bad) = names.iter().find(|n| !hosts.contains(n.as_str())) {
                            return Err(ConfigError::new(format!("{key}.{end}"), format!("no host named {bad:?} in this topology")));
                        }
                    }
                    None if self.topology.default_endpoints().is_none() => {
                        return Err(ConfigError::new(format!("{key}.{end}"), "required: this topology has no default senders and receivers"));
                    }
                    None => {}
                }
            }
            if let (Some(s), Some(d)) = (&f.src, &f.dst) {
                let (s, d) = (s.names(), d.names());
                let n = s.len().max(d.len());
                if (0..n).any(|j| s[j % s.len()] == d[j % d.len()]) {
                    return Err(ConfigError::new(format!("{key}.dst"), "a flow would go from a host to itself"));
                }
            }
        }
        validate_placement(self)?;
        if let Some(MeasuredPorts::Named(names)) = &self.measure.ports {
            if names.is_empty() {
                return Err(ConfigError::new("measure.ports", "name at least one port, or leave the key out"));
            }
        }
        if let Some(ic) = &self.incast {
            if ic.servers == 0 {
                return Err(ConfigError::new("incast.servers", "must be at least 1"));
            }
            let host_names = self.topology.host_names(self.udp.is_some());
            let hosts: HashSet<&str> = host_names.iter().map(String::as_str).collect();
            for (end, list) in [("src", &ic.src), ("dst", &ic.dst)] {
                match list {
                    Some(h) => {
                        let names = h.names();
                        if names.is_empty() {
                            return Err(ConfigError::new(format!("incast.{end}"), "name at least one host"));
                        }
                        if let Some(bad) = names.iter().find(|n| !hosts.contains(n.as_str())) {
                            return Err(ConfigError::new(format!("incast.{end}"), format!("no host named {bad:?} in this topology")));
                        }
                    }
                    None if !matches!(self.topology, TopologyConfig::Dumbbell(_)) => {
                        return Err(ConfigError::new(format!("incast.{end}"), "required on a topology other than the dumbbell"));
                    }
                    None => {}
                }
            }
            if let (None, TopologyConfig::Dumbbell(d)) = (&ic.src, &self.topology) {
                if ic.servers > d.senders {
                    return Err(ConfigError::new(
                        "incast.servers",
                        format!("{} servers but the topology has only {} senders (topology.senders)", ic.servers, d.senders),
                    ));
                }
            }
            let (src, dst) = ic.endpoints();
            if (0..ic.servers as usize).any(|i| src[i % src.len()] == dst[(i / src.len()) % dst.len()]) {
                return Err(ConfigError::new("incast.dst", "a server would answer a client on its own host"));
            }
            if ic.epochs == 0 {
                return Err(ConfigError::new("incast.epochs", "must be at least 1"));
            }
            non_negative("incast.epoch_interval_s", ic.epoch_interval_s)?;
            match (ic.block_bytes, ic.server_bytes) {
                (Some(_), Some(_)) => return Err(ConfigError::new("incast.server_bytes", "give block_bytes or server_bytes, not both")),
                (None, None) => return Err(ConfigError::new("incast.block_bytes", "give block_bytes or server_bytes")),
                (Some(0), _) => return Err(ConfigError::new("incast.block_bytes", "must be at least 1 byte")),
                (_, Some(0)) => return Err(ConfigError::new("incast.server_bytes", "must be at least 1 byte")),
                _ => {}
            }
            if ic.rounds == 0 {
                return Err(ConfigError::new("incast.rounds", "must be at least 1"));
            }
            non_negative("incast.start_s", ic.start_s)?;
            non_negative("incast.gap_s", ic.gap_s)?;
            if ic.start_s >= self.sim.duration_s {
                return Err(ConfigError::new("incast.start_s", "the first request would leave after the run ends"));
            }
            if ic.connection == IncastConnection::PerRequest {
                if !ic.transport.reconnects() {
                    let able: Vec<String> = TransportKind::ALL.iter().filter(|k| k.reconnects()).map(|k| format!("\"{}\"", k.as_str())).collect();
                    return Err(ConfigError::new("incast.connection", format!("per_request needs incast.transport = {}", able.join(" or "))));
                }
                if !self.tcp.handshake {
                    return Err(ConfigError::new("incast.connection", "per_request opens a connection per request: set tcp.handshake = true"));
                }
            }
        }
        validate_poisson(self)?;
        if let Some(u) = &self.udp {
            if !(0.0..=1.0).contains(&u.rate_fraction) || !u.rate_fraction.is_finite() {
                return Err(ConfigError::new("udp.rate_fraction", format!("must be in [0, 1], got {}", u.rate_fraction)));
            }
            if u.packet_bytes < 28 || u.packet_bytes > self.mtu() {
                return Err(ConfigError::new(
                    "udp.packet_bytes",
                    format!("must be between 28 and the MTU ({} bytes), got {}", self.mtu(), u.packet_bytes),
                ));
            }
            non_negative("udp.start_s", u.start_s)?;
            if u.priority > 7 {
                return Err(ConfigError::new("udp.priority", format!("{} is not an 802.1p priority (0 to 7)", u.priority)));
            }
            let hosts = self.topology.host_names(true);
            for (end, name) in [("src", &u.src), ("dst", &u.dst)] {
                match name {
                    Some(n) if !hosts.contains(n) => {
                        return Err(ConfigError::new(format!("udp.{end}"), format!("no host named {n:?} in this topology")))
                    }
                    None if self.topology.default_udp_endpoints().is_none() => {
                        return Err(ConfigError::new(format!("udp.{end}"), "required: this topology has no default UDP hosts"))
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Traffic patterns (`flows.pattern`, built in `workload.rs`)
// ---------------------------------------------------------------------------------------------

/// Checks the hosts, the fixed end and the size of the pattern of group `f` (keys relative to
/// the group; `FlowsConfig::validate` has checked the keys it excludes and needs). `known`: the
/// topology's host names.
fn validate_pattern(sc: &Scenario, f: &FlowsConfig, known: &HashSet<&str>) -> Result<(), ConfigError> {
    let Some(p) = f.pattern else { return Ok(()) };
    if let Some(h) = &f.hosts {
        let names = h.names();
        if names.is_empty() {
            return Err(ConfigError::new("hosts", "name at least one host"));
        }
        let mut seen = HashSet::new();
        for n in &names {
            if !known.contains(n.as_str()) {
                return Err(ConfigError::new("hosts", format!("no host named {n:?} in this topology")));
            }
            if !seen.insert(n) {
                return Err(ConfigError::new("hosts", format!("{n:?} is named twice")));
            }
        }
    }
    if p.is_collective() {
        if sc.tcp_of(f).mptcp.subflows > 1 {
            return Err(ConfigError::new("tcp.mptcp.subflows", "a job's transfers are single-path flows: must be 1"));
        }
        let flows = sc.group_flows(f);
        if flows > u32::MAX as u64 {
            return Err(ConfigError::new("iterations", format!("{} x {} iterations makes {flows} flows, more than the {} a run can number", p.name(), f.job_iterations(), u32::MAX)));
        }
        return Ok(()); // its hosts against the other jobs': validate_placement
    }
    let end_key = if p == Pattern::Outcast { "src" } else { "dst" };
    if let Some(e) = f.pattern_end() {
        if !known.contains(e.as_str()) {
            return Err(ConfigError::new(end_key, format!("no host named {e:?} in this topology")));
        }
    }
    let hosts = sc.pattern_hosts(f);
    let n = hosts.len() as u64;
    let flows = sc.group_flows(f);
    let what = if f.hosts.is_some() { "hosts" } else { "pattern" };
    match p {
        Pattern::Incast | Pattern::Outcast if flows == 0 => {
            let role = if p == Pattern::Incast { "receiver" } else { "sender" };
            return Err(ConfigError::new(what, format!("{} needs at least one host besides its {role}, got {n} host(s)", p.name())));
        }
        _ if n < 2 => return Err(ConfigError::new(what, format!("{} needs at least 2 hosts, got {n}", p.name()))),
        _ => {}
    }
    if let (Pattern::Stride, Some(s)) = (p, f.stride) {
        if s % n == 0 {
            return Err(ConfigError::new("stride", format!("{s} is a multiple of the {n} hosts: every host would send to itself")));
        }
    }
    if flows > u32::MAX as u64 {
        return Err(ConfigError::new("pattern", format!("{} over {n} hosts makes {flows} flows, more than the {} a run can number", p.name(), u32::MAX)));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Jobs' hosts (`placement`, placed in `jobs.rs`)
// ---------------------------------------------------------------------------------------------

/// Checks that the jobs' hosts fit the topology together: no host in two jobs' lists, and
/// enough hosts left for the contiguous and the random jobs (full keys). Each job's own keys
/// were checked with its group.
fn validate_placement(sc: &Scenario) -> Result<(), ConfigError> {
    let jobs = sc.jobs();
    let key = |name: &str, k: &str| if name == "flows" { format!("flows.{k}") } else { format!("groups.{name}.{k}") };
    let mut owner: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for (_, name, f) in jobs.iter().filter(|(_, _, f)| f.job_placement() == Placement::List) {
        for h in f.hosts.as_ref().map(|h| h.names()).unwrap_or_default() {
            if let Some(other) = owner.insert(h.clone(), name) {
                return Err(ConfigError::new(key(name, "hosts"), format!("{h:?} is a host of job {other:?} too: jobs do not share hosts")));
            }
        }
    }
    let all = sc.topology.host_names(false).len() as u64;
    let listed = owner.keys().filter(|h| sc.topology.host_names(false).contains(h)).count() as u64;
    let mut free = all - listed;
    for placement in [Placement::Contiguous, Placement::Random] {
        for (_, name, f) in jobs.iter().filter(|(_, _, f)| f.job_placement() == placement) {
            let n = f.job_host_count();
            if n > free {
                return Err(ConfigError::new(
                    key(name, "job_hosts"),
                    format!("the job needs {n} hosts, but only {free} of the topology's {all} are not taken by other jobs"),
                ));
            }
            free -= n;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The time series (`[measure] sample_interval_s`, `series.rs`)
// ---------------------------------------------------------------------------------------------

/// Rows one sample adds, and the number of samples, for a scenario with `ports` measured ports.
pub fn series_size(sc: &Scenario, interval_s: f64, ports: f64) -> (f64, f64) {
    let tcp: f64 = sc.flow_groups().iter().map(|(_, f)| (sc.group_flows(f) * sc.tcp_of(f).mptcp.subflows as u64) as f64).sum::<f64>()
        + sc.incast.as_ref().map_or(0.0, |i| i.servers as f64);
    let udp = if sc.udp.is_some() { 1.0 } else { 0.0 };
    let flows = if sc.measure.sample_flows { tcp + udp } else { 0.0 };
    let groups = (sc.flow_groups().len() + sc.incast.is_some() as usize + sc.udp.is_some() as usize) as f64;
    let per_sample = 2.0 * ports + flows + if sc.measure.cwnd { tcp } else { 0.0 } + groups;
    let samples = (sc.sim.duration_s / interval_s).floor() + 1.0;
    (per_sample, samples)
}

/// Checks `measure.sample_interval_s` and `measure.cwnd` (keys relative to `[measure]`).
fn validate_series(sc: &Scenario) -> Result<(), ConfigError> {
    let Some(t) = sc.measure.sample_interval_s else {
        if sc.measure.cwnd {
            return Err(ConfigError::new("cwnd", "needs sample_interval_s (the time series are off without it)"));
        }
        if !sc.measure.sample_flows {
            return Err(ConfigError::new("sample_flows", "needs sample_interval_s (the time series are off without it)"));
        }
        return Ok(());
    };
    if !t.is_finite() || t <= 0.0 {
        return Err(ConfigError::new("sample_interval_s", format!("must be a positive number of seconds, got {t}")));
    }
    if t < 1e-9 {
        return Err(ConfigError::new("sample_interval_s", format!("must be at least 1 ns, got {t}")));
    }
    // The measured ports are known only once the topology is built: count the named ones, every
    // switch port for "all" (or one) here; the sampler (`series.rs`) checks again with the real
    // number.
    let ports = match &sc.measure.ports {
        None => 1,
        Some(MeasuredPorts::Named(names)) => names.len() as u64,
        Some(MeasuredPorts::All) => sc.topology.switch_ports(sc.udp.is_some()),
    };
    check_series_rows(sc, t, ports as f64)
}

/// Checks that the time series of `sc`, sampled every `t` seconds over `ports` measured
/// ports, stay within [`MAX_SERIES_ROWS`] (key relative to `[measure]`). Run at load time with
/// the ports `measure.ports` names (every switch port for `"all"`, or one), and by the sampler
/// (`series.rs`) with the real number once the network is built.
pub fn check_series_rows(sc: &Scenario, t: f64, ports: f64) -> Result<(), ConfigError> {
    let (per_sample, samples) = series_size(sc, t, ports);
    if per_sample * samples > MAX_SERIES_ROWS {
        let fewer_ports = if ports > 1.0 { format!(", measure fewer ports (ports: {ports:.0} measured, 2 series each)") } else { String::new() };
        return Err(ConfigError::new(
            "sample_interval_s",
            format!(
                "{t} s gives {samples:.0} samples x {per_sample:.0} series = {:.3e} rows, more than {MAX_SERIES_ROWS:.0e}; \
                 sample less often{fewer_ports}, set sample_flows = false, or shorten the run",
                per_sample * samples
            ),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The groups' windows (`[measure] group_window_s`, `groups.rs`)
// ---------------------------------------------------------------------------------------------

/// Checks `measure.group_window_s` (key relative to `[measure]`).
fn validate_group_windows(sc: &Scenario) -> Result<(), ConfigError> {
    let Some(w) = sc.measure.group_window_s else { return Ok(()) };
    let Some(t) = sc.measure.sample_interval_s else {
        return Err(ConfigError::new("group_window_s", "needs sample_interval_s (windows are made of samples)"));
    };
    if !w.is_finite() || w <= 0.0 {
        return Err(ConfigError::new("group_window_s", format!("must be a positive number of seconds, got {w}")));
    }
    window_ticks(w, t).map(|_| ())
}

/// `W / T` as a whole number of sample intervals (`measure.group_window_s` over
/// `measure.sample_interval_s`); invalid when it is not one.
pub fn window_ticks(w: f64, t: f64) -> Result<u64, ConfigError> {
    let r = w / t;
    let k = r.round();
    if k < 1.0 || (r - k).abs() > 1e-6 * k {
        return Err(ConfigError::new(
            "group_window_s",
            format!("must be a whole multiple of sample_interval_s ({t} s), got {w} s ({r} intervals)"),
        ));
    }
    Ok(k as u64)
}

// ---------------------------------------------------------------------------------------------
// Port probes (`[measure] drop_runs_ports`, `[measure.trace]`, `probe.rs`)
// ---------------------------------------------------------------------------------------------

/// Checks `measure.drop_runs_ports` and `measure.trace` (keys relative to `[measure]`). Port
/// names are resolved when the network is built (`probe.rs`).
fn validate_probes(sc: &Scenario) -> Result<(), ConfigError> {
    if let Some(ports) = &sc.measure.drop_runs_ports {
        if ports.is_empty() {
            return Err(ConfigError::new("drop_runs_ports", "name at least one port, or leave the key out"));
        }
        for (i, p) in ports.iter().enumerate() {
            if ports[..i].contains(p) {
                return Err(ConfigError::new("drop_runs_ports", format!("{p:?} is listed twice")));
            }
        }
    }
    if let Some(t) = &sc.measure.trace {
        let d = sc.sim.duration_s;
        if !t.start_s.is_finite() || t.start_s < 0.0 {
            return Err(ConfigError::new("trace.start_s", format!("must be zero or positive, got {}", t.start_s)));
        }
        if t.start_s > d {
            return Err(ConfigError::new("trace.start_s", format!("{} s is after the end of the run ({d} s)", t.start_s)));
        }
        if let Some(e) = t.end_s {
            if !e.is_finite() || e < t.start_s {
                return Err(ConfigError::new("trace.end_s", format!("must be a time at or after start_s ({} s), got {e}", t.start_s)));
            }
        }
        if t.max_rows == 0 || t.max_rows > MAX_TRACE_ROWS {
            return Err(ConfigError::new(
                "trace.max_rows",
                format!("must be between 1 and {MAX_TRACE_ROWS} (about 44 bytes of memory a row), got {}", t.max_rows),
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Poisson arrivals (`[poisson]`, `poisson.rs`)
// ---------------------------------------------------------------------------------------------

/// Checks `[poisson]` against the rest of the scenario; keys are relative to `poisson`
/// except for group names (`groups.NAME`).
fn validate_poisson(sc: &Scenario) -> Result<(), ConfigError> {
    let Some(p) = &sc.poisson else { return Ok(()) };
    let within = |e: ConfigError| e.within("poisson");
    if !(p.load > 0.0 && p.load <= 1.0) {
        return Err(within(ConfigError::new("load", format!("must be in (0, 1], got {}", p.load))));
    }
    if p.cdf_file.trim().is_empty() {
        return Err(within(ConfigError::new("cdf_file", "name a CDF file")));
    }
    if !(p.one_packet_fraction >= 0.0 && p.one_packet_fraction < 1.0) {
        return Err(within(ConfigError::new("one_packet_fraction", format!("must be in [0, 1), got {}", p.one_packet_fraction))));
    }
    if p.max_size_bytes == Some(0) {
        return Err(within(ConfigError::new("max_size_bytes", "must be at least 1 byte")));
    }
    match p.max_flows {
        Some(0) => return Err(within(ConfigError::new("max_flows", "must be at least 1"))),
        Some(n) if n > MAX_FLOWS => return Err(within(ConfigError::new("max_flows", format!("at most {MAX_FLOWS}, got {n}")))),
        _ => {}
    }
    non_negative("start_s", p.start_s).map_err(within)?;
    let d = sc.sim.duration_s;
    if p.start_s >= d {
        return Err(within(ConfigError::new("start_s", format!("{} s is not before the end of the run ({d} s)", p.start_s))));
    }
    if let Some(stop) = p.stop_s {
        if !stop.is_finite() || stop <= p.start_s || stop > d {
            return Err(within(ConfigError::new("stop_s", format!("must be after start_s ({} s) and at most sim.duration_s ({d} s), got {stop}", p.start_s))));
        }
    }
    let known: std::collections::HashSet<String> = sc.topology.host_names(sc.udp.is_some()).into_iter().collect();
    for (key, list) in [("hosts", &p.hosts), ("src", &p.src), ("dst", &p.dst)] {
        let Some(h) = list else { continue };
        let names = h.names();
        if names.is_empty() {
            return Err(within(ConfigError::new(key, "name at least one host")));
        }
        let mut seen = HashSet::new();
        for n in &names {
            if !known.contains(n) {
                return Err(within(ConfigError::new(key, format!("no host named {n:?} in this topology"))));
            }
            if !seen.insert(n) {
                return Err(within(ConfigError::new(key, format!("{n:?} is named twice"))));
            }
        }
    }
    let (src, dst) = p.ends(&sc.topology);
    if src.is_empty() {
        return Err(within(ConfigError::new("hosts", "no hosts take part")));
    }
    if let Some(s) = src.iter().find(|s| !dst.iter().any(|d| d != *s)) {
        return Err(within(ConfigError::new("dst", format!("source {s:?} has no destination other than itself"))));
    }
    for g in [GROUP, GROUP_1PKT] {
        if sc.groups.contains_key(g) {
            return Err(ConfigError::new(format!("groups.{g}"), "this group name is taken by the [poisson] workload"));
        }
    }
    if let Some(g) = sc.groups.keys().find(|g| g.starts_with("size_")) {
        return Err(ConfigError::new(format!("groups.{g}"), "names starting with size_ are taken by [poisson]'s size classes"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_whole_multiples_of_the_interval() {
        assert_eq!(window_ticks(0.1, 0.001).unwrap(), 100);
        assert_eq!(window_ticks(0.3, 0.1).unwrap(), 3, "0.3 / 0.1 is not exactly 3 in floats");
        assert_eq!(window_ticks(0.001, 0.001).unwrap(), 1);
        assert_eq!(window_ticks(0.15, 0.1).unwrap_err().key, "group_window_s");
        assert_eq!(window_ticks(0.0005, 0.001).unwrap_err().key, "group_window_s");
    }
}
