//! Build the network of a scenario, run it, and render the CONTRACT.md result files.
//!
//! Rules:
//! - The run is a pure function of (scenario, seed). Rendering uses sorted JSON keys and Rust's
//!   shortest round-trip float formatting, so the files are byte-identical for the same inputs.
//!   The single exception is `wall_time_s` in `summary.json`, the run's own wall-clock time.
//! - Every metric is computed here from the engine's raw counters; `docs/metrics.md` defines
//!   each one and is kept in step with this file.

use crate::columns::{CatBuilder, Column, Table};
use crate::engine::{Sim, VIA_PER_PACKET};
use crate::metrics::{jain, mean, percentile, std_dev, variance, FlowObs};
use crate::net::NodeKind;
use crate::routing::Routes;
use crate::scenario::{CoreChoice, HashSeed, Scenario};
use crate::topo::Built;
use crate::workload::{TcpFlow, UdpSource};
use dcfair_core::packet::NO_VIA;
use rand::Rng as _;
use crate::engine::ProgressFn;
use crate::error::Error;
use crate::results::{Results, ENGINE_BUILD, ENGINE_VERSION};
use crate::{topo, workload};
use dcfair_core::qdisc::{DropReason, Qdisc, QdiscStats};
use dcfair_core::rng::Streams;
use dcfair_core::time::SimTime;
use serde_json::{json, Map, Value};

/// Runs `sc` with `seed` (or the scenario's own).
pub fn run(sc: &Scenario, seed: Option<u64>, progress: Option<ProgressFn<'_>>) -> Result<Results, Error> {
    let seed = seed.unwrap_or(sc.seed);
    let wall = std::time::Instant::now();
    let mut sim = simulate(sc, seed, progress)?;
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(finish(sc, seed, &mut sim, wall_s))
}

/// The result files of a finished run, with the optional tables it asked for.
fn finish(sc: &Scenario, seed: u64, sim: &mut Sim, wall_s: f64) -> Results {
    let series = sim.series.take().map(crate::series::Series::into_tables);
    let drop_runs = crate::probe::drop_runs_table(&mut sim.probes, &sim.flow_group, &sim.group_names);
    let trace = crate::probe::trace_table(&mut sim.probes, &sim.group_names);
    let trace_info = trace.as_ref().map(|(_, rows, cut)| {
        let t = sc.measure.trace.as_ref().expect("a trace table comes from [measure.trace]");
        json!({
            "port": t.port,
            "start_s": t.start_s,
            "end_s": t.end_s.unwrap_or(sc.sim.duration_s).min(sc.sim.duration_s),
            "rows": rows,
            "max_rows": t.max_rows,
            "truncated_at_s": cut.map(|c| c.as_secs_f64()),
        })
    });
    let mut results = render(sc, seed, sim, wall_s, trace_info);
    if let Some((ts, groups, windows)) = series {
        results.timeseries = Some(ts);
        results.groups = Some(groups);
        results.group_windows = windows;
    }
    results.drop_runs = drop_runs;
    results.trace = trace.map(|(t, _, _)| t);
    results
}

/// Runs `sc` like [`run`] and also returns the engine's event log (feature `trace`; the line
/// formats are in [`crate::engine::trace`]).
#[cfg(feature = "trace")]
pub fn run_traced(sc: &Scenario, seed: Option<u64>) -> Result<(Results, String), Error> {
    let seed = seed.unwrap_or(sc.seed);
    let wall = std::time::Instant::now();
    let mut sim = simulate(sc, seed, None)?;
    let wall_s = wall.elapsed().as_secs_f64();
    let r = finish(sc, seed, &mut sim, wall_s);
    Ok((r, std::mem::take(&mut sim.trace)))
}

/// Builds the network and the workloads of `sc` and runs the event loop to the end.
fn simulate(sc: &Scenario, seed: u64, progress: Option<ProgressFn<'_>>) -> Result<Sim, Error> {
    let mut sim = build(sc, seed)?;
    if sim.run(progress).is_break() {
        return Err(Error::Interrupted);
    }
    Ok(sim)
}

/// Builds `sc` as a run would and drops it without running: the checks that need the network
/// (hosts that cannot reach each other, port names of `[measure]`, waypoints, probes) fail here
/// exactly as they would at the start of [`run`].
pub fn check(sc: &Scenario, seed: Option<u64>) -> Result<Checked, Error> {
    let sim = build(sc, seed.unwrap_or(sc.seed))?;
    Ok(Checked { flows: sim.tcp.len() + sim.udp.len(), measured_ports: sim.net.ports.iter().filter(|p| p.measured).count() })
}

/// What [`check`] built, for the size of the results to come (one row per flow in flows.csv,
/// one per measured port in ports.csv).
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    pub flows: usize,
    pub measured_ports: usize,
}

/// The network, the workloads and the first events of `sc`, ready to run.
fn build(sc: &Scenario, seed: u64) -> Result<Sim, Error> {
    let streams = Streams::new(seed);

    let mut built = topo::build(sc, streams).map_err(|e| Error::invalid(e.key, e.reason))?;
    sc.queue.wire(&mut built.net).map_err(|e| Error::invalid(format!("queue.{}", e.key), e.reason))?;
    let mut tcp = workload::tcp_flows(sc, streams, &built);
    let (servers, incast) = workload::incast(sc, streams, tcp.len() as u32, sc.flow_groups().len() as u16, &built);
    tcp.extend(servers);
    let poisson = crate::poisson::flows(sc, streams, &built, tcp.len() as u32, poisson_group(sc))?;
    tcp.extend(poisson);
    let udp_flow = tcp.len() as u32;
    // UDP's rate is a fraction of the first measured port's rate (the dumbbell: one bottleneck).
    let first_measured = built.net.ports.iter().find(|p| p.measured).map_or(built.measured_rate, |p| p.rate);
    let udp: Vec<_> = workload::udp_source(sc, streams, udp_flow, &built, first_measured).into_iter().collect();

    let end = SimTime::from_secs_f64(sc.sim.duration_s);
    let window_start = SimTime::from_secs_f64(sc.window_start_s());
    let hash_seed = match sc.routing.hash_seed {
        HashSeed::Fixed(s) => s,
        HashSeed::Run => streams.stream("routing.hash", 0).gen::<u64>() & HashSeed::MAX,
    };
    let routes = Routes::build(&built.net, sc.routing.mode).with_hash_seed(hash_seed);
    let pairs = tcp.iter().flat_map(|f| [(f.ids.src, f.ids.dst), (f.ids.dst, f.ids.src)]).chain(udp.iter().map(|u| (u.src, u.dst)));
    let name = |x: u32| &built.net.nodes[x as usize].name;
    if let Some((a, b)) = routes.first_unreachable(&built.net, pairs) {
        return Err(Error::invalid("topology", format!("host {} cannot reach host {}: the topology is not connected", name(a), name(b))));
    }
    if let Some((sw, dst)) = routes.first_loop(&built.net) {
        return Err(Error::invalid("routing", format!("the routes towards {} loop through switch {}", name(dst), name(sw))));
    }
    let via = waypoints(sc, streams, &built, &routes, &tcp, &udp)?;
    let measured_rate = built.measured_rate;
    let built_cores = built.cores.clone();
    let mut sim = Sim::new(built.net, routes, streams.stream("routing.spray", 0), tcp, udp, incast, window_start, end);
    sim.via = via;
    if sc.routing.equal_length && sc.routing.core == CoreChoice::RandomPacket {
        sim.packet_cores = built_cores;
        sim.core_rng = Some(streams.stream("routing.core_packet", 0));
    }
    sim.group_names = group_names(sc).into_iter().map(String::from).collect();
    sim.flow_group = sim.tcp.iter().map(|f| f.group).collect();
    if !sim.udp.is_empty() {
        sim.flow_group.extend(std::iter::repeat_n(sim.group_names.len() as u16, sim.udp.len()));
        sim.group_names.push("udp".into());
    }
    sim.probes = crate::probe::attach(sc, &mut sim.net, sim.flow_group.len(), sim.group_names.len())?;
    if let Some(fq) = crate::fairq::FairqNet::new(sc, &sim.net)? {
        sim.attach_fairq(fq);
    }
    sim.measured_rate_bps = measured_rate.as_f64();
    match sc.sim.tie_break {
        crate::scenario::TieBreak::Fifo => {}
        crate::scenario::TieBreak::RandomTimers => sim.timer_coin = Some(streams.stream("engine.timer_ties", 0)),
        crate::scenario::TieBreak::FloatClock => sim.float_clock = true,
    }
    sim.schedule_starts();
    if let Some(series) = crate::series::Series::new(sc, &sim.net, &sim.group_names, &sim.flow_group)? {
        sim.attach_series(series);
    }
    Ok(sim)
}

/// The waypoint each flow's packets (both directions) pass through, by flow id: the group's
/// `via` switch if it names one, else with equal-length routing the core the flow climbs to,
/// else none.
fn waypoints(sc: &Scenario, streams: Streams, built: &Built, routes: &Routes, tcp: &[TcpFlow], udp: &[UdpSource]) -> Result<Vec<u32>, Error> {
    let n = tcp.len() + udp.len();
    let mut via = vec![NO_VIA; n];
    if sc.routing.equal_length {
        if built.cores.is_empty() {
            return Err(Error::invalid("routing.equal_length", "this topology has no core tier to climb to (use fat_tree or leaf_spine)"));
        }
        let host_no = |h: u32| built.net.nodes[..h as usize].iter().filter(|x| x.kind == NodeKind::Host).count() as u64;
        let ends = tcp.iter().map(|f| (f.ids.flow, f.ids.dst)).chain(udp.iter().map(|u| (u.flow, u.dst)));
        let cores = built.cores.len() as u64;
        for (flow, dst) in ends {
            via[flow as usize] = match sc.routing.core {
                CoreChoice::Random => built.cores[streams.stream("routing.core", flow as u64).gen_range(0..cores) as usize],
                CoreChoice::DstBits => built.cores[(host_no(dst) % cores) as usize],
                CoreChoice::RandomPacket => VIA_PER_PACKET,
            };
        }
    }
    let groups = sc.flow_groups();
    for f in tcp {
        let Some((gname, g)) = groups.get(f.group as usize) else { continue };
        let Some(name) = &g.via else { continue };
        let key = if *gname == "flows" { "flows.via".to_string() } else { format!("groups.{gname}.via") };
        let node = built.net.nodes.iter().position(|x| &x.name == name);
        let sw = match node {
            Some(i) if built.net.nodes[i].kind == NodeKind::Switch => i as u32,
            Some(_) => return Err(Error::invalid(&key, format!("{name} is a host; a waypoint must be a switch"))),
            None => return Err(Error::invalid(&key, format!("no switch named {name}"))),
        };
        let nm = |x: u32| built.net.nodes[x as usize].name.clone();
        for (a, b) in [(f.ids.src, f.ids.dst), (f.ids.dst, f.ids.src)] {
            if !routes.reachable(&built.net, a, sw) || routes.choices(sw, b).is_empty() {
                return Err(Error::invalid(&key, format!("no path from {} through {name} to {}", nm(a), nm(b))));
            }
        }
        via[f.ids.flow as usize] = sw;
    }
    Ok(via)
}

/// A finite number, or null (JSON has no NaN or infinity).
fn num(x: Option<f64>) -> Value {
    match x {
        Some(v) if v.is_finite() => json!(v),
        _ => Value::Null,
    }
}

fn render(sc: &Scenario, seed: u64, sim: &Sim, wall_s: f64, trace: Option<Value>) -> Results {
    let end = sim.end;
    // The run may have ended early (an incast's last round): the window ends with it.
    let window = end.saturating_since(sim.window_start).as_secs_f64();
    let n_tcp = sim.tcp.len();

    // --- per-flow figures of the TCP flows -------------------------------------------------
    let pkts: Vec<f64> = sim.obs[..n_tcp].iter().map(|o| o.pkts_in_window as f64).collect();
    let sent: Vec<f64> = sim.tcp.iter().map(|f| sent_in_window(f) as f64).collect();
    let gaps: Vec<f64> = sim.tcp.iter().zip(&sim.obs).map(|(f, o)| o.max_gap_until(f.start, end).as_secs_f64()).collect();
    let goodput: Vec<f64> = sim
        .tcp
        .iter()
        .map(|f| (f.delivered_bytes() - f.delivered_at_window.min(f.delivered_bytes())) as f64 * 8.0 / window)
        .collect();
    let fcts: Vec<f64> = sim.tcp.iter().zip(&sim.obs).filter_map(|(f, o)| fct_of(f, o)).collect();

    // --- measured ports --------------------------------------------------------------------
    let measured: Vec<_> = sim.net.ports.iter().filter(|p| p.measured).collect();
    let mut total = QdiscStats::default();
    let mut window_bytes = 0u64;
    let window_drops: u64 = sim.measured_window_drops().sum();
    for p in &measured {
        let s = &p.queue.stats;
        for r in 0..DropReason::COUNT {
            total.dropped_before[r].0 += s.dropped_before[r].0;
            total.dropped_after[r].0 += s.dropped_after[r].0;
        }
        for m in 0..s.marks.len() {
            total.marks[m] += s.marks[m];
        }
        window_bytes += p.window_bytes_out;
    }
    let mut by_reason = Map::new();
    for r in DropReason::ALL {
        let n = total.drops_by_reason(r);
        if n > 0 {
            by_reason.insert(r.as_str().to_string(), json!(n));
        }
    }

    let mut m = Map::new();
    m.insert("utilization".into(), num(Some(window_bytes as f64 * 8.0 / (sim.measured_rate_bps * window))));
    m.insert("jain_index".into(), num(jain(&pkts)));
    m.insert("throughput_variance_pkts".into(), num(variance(&pkts)));
    m.insert(
        "starved_fraction".into(),
        num((n_tcp > 0).then(|| pkts.iter().filter(|&&x| x == 0.0).count() as f64 / n_tcp as f64)),
    );
    m.insert("max_starvation_s".into(), num(gaps.iter().cloned().reduce(f64::max)));
    m.insert("mean_pkts_in_window".into(), num(mean(&pkts)));
    // The same three measures over the packets each flow *sent* in the window (the HCF paper's
    // words), retransmissions included: a flow backing off still sends its retransmissions.
    m.insert("sent_jain_index".into(), num(jain(&sent)));
    m.insert("sent_variance_pkts".into(), num(variance(&sent)));
    m.insert(
        "sent_starved_fraction".into(),
        num((n_tcp > 0).then(|| sent.iter().filter(|&&x| x == 0.0).count() as f64 / n_tcp as f64)),
    );
    m.insert("mean_pkts_sent_in_window".into(), num(mean(&sent)));
    m.insert("drops".into(), json!(total.drops_pkts()));
    m.insert("window_drops".into(), json!(window_drops));
    m.insert("marks".into(), json!(total.marks_total()));
    m.insert("drops_by_reason".into(), Value::Object(by_reason));
    m.insert("flows".into(), json!(n_tcp));
    if let Some(fq) = sim.fairq.as_deref() {
        m.insert("fairq_rewrites".into(), json!(fq.core.rewrites));
    }
    m.insert("flows_completed".into(), json!(fcts.len()));
    m.insert("timeouts".into(), json!(sim.tcp.iter().map(|f| f.sender_stats().timeouts).sum::<u64>()));
    m.insert("retransmits".into(), json!(sim.tcp.iter().map(|f| f.sender_stats().retransmits).sum::<u64>()));
    m.insert("throughput_bps_tcp".into(), num(mean(&goodput)));
    if sim.tcp.iter().any(|f| f.xpass.is_some()) {
        // ExpressPass credit counters, summed over its flows (whole run)
        let (mut sent, mut lost, mut received, mut wasted) = (0u64, 0u64, 0u64, 0u64);
        for x in sim.tcp.iter().filter_map(|f| f.xpass.as_deref()) {
            sent += x.receiver.stats.credits_sent;
            lost += x.receiver.stats.credits_lost;
            received += x.sender.stats.credits_received;
            wasted += x.sender.stats.credits_wasted;
        }
        m.insert("xpass_credits_sent".into(), json!(sent));
        m.insert("xpass_credits_lost".into(), json!(lost));
        m.insert("xpass_credits_received".into(), json!(received));
        m.insert("xpass_credits_wasted".into(), json!(wasted));
    }
    if let Some(u) = sim.udp.first() {
        let got = u.bytes_received - u.bytes_received_at_window;
        m.insert("throughput_bps_udp".into(), num(Some(got as f64 * 8.0 / window)));
    }
    insert_fct(&mut m, "", &fcts);
    if let Some(ic) = &sim.incast {
        let rt: Vec<f64> = ic.round_times.iter().map(|d| d.as_secs_f64()).collect();
        let total: f64 = rt.iter().sum();
        m.insert("rounds_completed".into(), json!(rt.len()));
        m.insert("block_bytes".into(), json!(ic.per_server * ic.servers as u64));
        m.insert(
            "block_goodput_bps".into(),
            num((total > 0.0).then(|| (ic.per_server * ic.servers as u64) as f64 * 8.0 * rt.len() as f64 / total)),
        );
        m.insert("round_time_mean_s".into(), num(mean(&rt)));
        m.insert("round_time_p99_s".into(), num(percentile(&rt, 99.0)));
        m.insert("round_time_max_s".into(), num(rt.iter().cloned().reduce(f64::max)));
        // Per answer (one server's share of one request): the request's completion time as
        // that server's client sees it.
        let at: Vec<f64> = ic.answer_times.iter().map(|d| d.as_secs_f64()).collect();
        m.insert("answers_completed".into(), json!(at.len()));
        m.insert("answer_time_mean_s".into(), num(mean(&at)));
        m.insert("answer_time_std_s".into(), num(std_dev(&at)));
        m.insert("answer_time_p99_s".into(), num(percentile(&at, 99.0)));
        m.insert("answer_time_max_s".into(), num(at.iter().cloned().reduce(f64::max)));
    }
    if let Some(p) = &sc.poisson {
        let (done, bytes_1pkt) = crate::poisson::done_flows(&sim.tcp, &sim.obs, &sim.via, &sim.net, &sim.routes, poisson_group(sc));
        crate::poisson::insert_metrics(&mut m, sc, &crate::poisson::plan(sc, p, &sim.net), &done, bytes_1pkt);
    }
    // Per-group figures, suffixed with the group's name, when there is more than one group.
    let groups = group_names(sc);
    if groups.len() > 1 {
        for (g, name) in groups.iter().enumerate() {
            let idx: Vec<usize> = (0..n_tcp).filter(|&i| sim.tcp[i].group as usize == g).collect();
            let gp: Vec<f64> = idx.iter().map(|&i| pkts[i]).collect();
            let gf: Vec<f64> = idx.iter().filter_map(|&i| fct_of(&sim.tcp[i], &sim.obs[i])).collect();
            let gg: Vec<f64> = idx.iter().map(|&i| goodput[i]).collect();
            m.insert(format!("throughput_bps_{name}"), num(mean(&gg)));
            m.insert(format!("aggregate_throughput_bps_{name}"), num(Some(gg.iter().sum())));
            m.insert(
                format!("starved_fraction_{name}"),
                num((!gp.is_empty()).then(|| gp.iter().filter(|&&x| x == 0.0).count() as f64 / gp.len() as f64)),
            );
            m.insert(format!("jain_index_{name}"), num(jain(&gp)));
            m.insert(format!("max_starvation_s_{name}"), num(idx.iter().map(|&i| gaps[i]).reduce(f64::max)));
            insert_fct(&mut m, &format!("_{name}"), &gf);
        }
    }

    let mut summary = json!({
        "scenario": sc.name,
        "seed": seed,
        "engine_version": ENGINE_VERSION,
        "engine_build": ENGINE_BUILD,
        "queue_kind": sc.queue.kind.as_str(),
        "sim_time_s": end.as_secs_f64(),
        "window_s": window,
        "wall_time_s": wall_s,
        "events": sim.q.events(),
        "metrics": Value::Object(m),
    });
    if let Some(t) = trace {
        summary["trace"] = t;
    }
    let mut summary_json = serde_json::to_string_pretty(&summary).expect("JSON of plain values");
    summary_json.push('\n');

    let (flows, ports) = (flows_table(sc, sim), ports_table(sim, window));
    Results {
        summary_json,
        flows_csv: flows.to_csv(),
        ports_csv: ports.to_csv(),
        flows,
        ports,
        timeseries: None,
        groups: None,
        group_windows: None,
        drop_runs: None,
        trace: None,
    }
}

fn fct_of(f: &crate::workload::TcpFlow, o: &FlowObs) -> Option<f64> {
    o.completed.map(|c| (c - f.start).as_secs_f64())
}

/// The FCT statistics of `fcts` under keys `fct_<stat>_s<suffix>`, if any flow finished.
fn insert_fct(m: &mut Map<String, Value>, suffix: &str, fcts: &[f64]) {
    if fcts.is_empty() {
        return;
    }
    m.insert(format!("fct_mean_s{suffix}"), num(mean(fcts)));
    m.insert(format!("fct_p50_s{suffix}"), num(percentile(fcts, 50.0)));
    m.insert(format!("fct_p99_s{suffix}"), num(percentile(fcts, 99.0)));
    m.insert(format!("fct_max_s{suffix}"), num(fcts.iter().cloned().reduce(f64::max)));
    m.insert(format!("fct_std_s{suffix}"), num(std_dev(fcts)));
}

/// Names of the flow groups by index: `Scenario::flow_groups()`, then `incast` if any, then
/// the `[poisson]` groups.
fn group_names(sc: &Scenario) -> Vec<&str> {
    let mut v: Vec<&str> = sc.flow_groups().into_iter().map(|(n, _)| n).collect();
    if sc.incast.is_some() {
        v.push("incast");
    }
    v.extend(crate::poisson::group_names(sc));
    v
}

/// Index of the first `[poisson]` group (see [`group_names`]).
fn poisson_group(sc: &Scenario) -> u16 {
    (sc.flow_groups().len() + sc.incast.is_some() as usize) as u16
}

/// `flows.csv` as columns: one row per flow, TCP flows first, then UDP sources.
fn flows_table(sc: &Scenario, sim: &Sim) -> Table {
    let groups = group_names(sc);
    let n = sim.tcp.len() + sim.udp.len();
    let name = |a: u32| sim.net.nodes[a as usize].name.as_str();
    let (mut flow_id, mut src, mut dst, mut kind) = (Vec::with_capacity(n), CatBuilder::new(), CatBuilder::new(), CatBuilder::new());
    let (mut start_s, mut end_s, mut fct_s, mut max_gap_s) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut bytes_sent, mut bytes_delivered, mut pkts_in_window, mut retransmits, mut timeouts) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut pkts_sent_in_window = Vec::with_capacity(n);
    let mut group = CatBuilder::new();
    let mut size_bytes = Vec::with_capacity(n);
    for (f, o) in sim.tcp.iter().zip(&sim.obs) {
        let st = f.sender_stats();
        flow_id.push(f.ids.flow as u64);
        src.push(name(f.ids.src));
        dst.push(name(f.ids.dst));
        kind.push("tcp");
        start_s.push(f.start.as_secs_f64());
        end_s.push(o.completed.map_or(f64::NAN, |c| c.as_secs_f64()));
        bytes_sent.push(st.bytes_sent);
        bytes_delivered.push(f.delivered_bytes());
        pkts_in_window.push(o.pkts_in_window);
        pkts_sent_in_window.push(sent_in_window(f));
        fct_s.push(o.completed.map_or(f64::NAN, |c| (c - f.start).as_secs_f64()));
        max_gap_s.push(o.max_gap_until(f.start, sim.end).as_secs_f64());
        retransmits.push(st.retransmits);
        timeouts.push(st.timeouts);
        group.push(groups[f.group as usize]);
        size_bytes.push(f.size.map_or(f64::NAN, |b| b as f64));
    }
    for u in &sim.udp {
        let o: &FlowObs = &sim.obs[u.flow as usize];
        flow_id.push(u.flow as u64);
        src.push(name(u.src));
        dst.push(name(u.dst));
        kind.push("udp");
        start_s.push(u.start.as_secs_f64());
        end_s.push(f64::NAN);
        bytes_sent.push(u.bytes_sent);
        bytes_delivered.push(u.bytes_received);
        pkts_in_window.push(o.pkts_in_window);
        pkts_sent_in_window.push(u.pkts_sent - u.pkts_sent_at_window);
        fct_s.push(f64::NAN);
        max_gap_s.push(o.max_gap_until(u.start, sim.end).as_secs_f64());
        retransmits.push(0);
        timeouts.push(0);
        group.push("udp");
        size_bytes.push(f64::NAN);
    }
    let mut t = Table::new();
    t.push("flow_id", Column::U64(flow_id));
    t.push("src", src.finish());
    t.push("dst", dst.finish());
    t.push("kind", kind.finish());
    t.push("start_s", Column::F64(start_s));
    t.push("end_s", Column::OptF64(end_s));
    t.push("bytes_sent", Column::U64(bytes_sent));
    t.push("bytes_delivered", Column::U64(bytes_delivered));
    t.push("pkts_in_window", Column::U64(pkts_in_window));
    t.push("fct_s", Column::OptF64(fct_s));
    t.push("max_gap_s", Column::F64(max_gap_s));
    t.push("retransmits", Column::U64(retransmits));
    t.push("timeouts", Column::U64(timeouts));
    t.push("group", group.finish());
    t.push("size_bytes", Column::OptF64(size_bytes));
    t.push("pkts_sent_in_window", Column::U64(pkts_sent_in_window));
    t
}

/// Data packets flow `f` sent inside the measurement window, retransmissions included.
fn sent_in_window(f: &workload::TcpFlow) -> u64 {
    f.data_pkts_sent().saturating_sub(f.sent_at_window)
}

/// `ports.csv` as columns: one row per measured port. CONTRACT.md's columns first, in its
/// order; then dcfair's additions.
fn ports_table(sim: &Sim, window: f64) -> Table {
    let measured: Vec<_> = sim.net.ports.iter().filter(|p| p.measured).collect();
    let mut port = CatBuilder::new();
    let mut kind = CatBuilder::new();
    for p in &measured {
        port.push(&p.name);
        kind.push(p.queue.qdisc.name());
    }
    let u64s = |f: &dyn Fn(&crate::net::Port) -> u64| Column::U64(measured.iter().map(|p| f(p)).collect());
    let mut t = Table::new();
    t.push("port", port.finish());
    t.push("packets_out", u64s(&|p| p.pkts_out));
    t.push("bytes_out", u64s(&|p| p.bytes_out));
    t.push(
        "utilization",
        Column::F64(
            measured
                .iter()
                .map(|p| if window > 0.0 { p.window_bytes_out as f64 * 8.0 / (p.rate.as_f64() * window) } else { f64::NAN })
                .collect(),
        ),
    );
    t.push("drops", u64s(&|p| p.queue.stats.drops_pkts()));
    t.push("marks", u64s(&|p| p.queue.stats.marks_total()));
    t.push("max_queue_pkts", u64s(&|p| p.queue.stats.max_len_pkts));
    for r in DropReason::ALL {
        t.push(format!("drops_{}", r.as_str()), u64s(&|p| p.queue.stats.drops_by_reason(r)));
    }
    t.push("queue_kind", kind.finish());
    t.push("rate_bps", u64s(&|p| p.rate.0));
    t.push("max_queue_bytes", u64s(&|p| p.queue.stats.max_len_bytes));
    t.push("window_drops", Column::U64(sim.measured_window_drops().collect()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every packet leaves the slab exactly when it is delivered or dropped: once every flow of
    /// a lossy run has completed and the network is idle, no slot is left in use (a drop that
    /// did not free its slot, by any discipline's path, would leave one).
    #[test]
    fn an_idle_network_holds_no_packet_after_drops() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/papers/fqcodel/leafspine.toml");
        let text = std::fs::read_to_string(path).unwrap();
        for kind in ["droptail", "fq_codel", "sfq", "pfabric"] {
            let ov: Vec<(String, String)> = [
                ("queue.kind", kind),
                ("queue.limit_pkts", "12"),
                ("poisson.stop_s", "0.004"),
                ("sim.duration_s", "0.3"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let sc = crate::scenario::load(&text, path, &ov).unwrap();
            let sim = simulate(&sc, 1, None).unwrap();
            let drops: u64 = sim.net.ports.iter().map(|p| p.queue.stats.drops_pkts()).sum();
            let queued: usize = sim.net.ports.iter().map(|p| p.queue.len_pkts()).sum();
            let flows = sim.tcp.iter().filter(|f| f.size.is_some()).count();
            let done = sim.tcp.iter().zip(&sim.obs).filter(|(f, o)| f.size.is_some() && o.completed.is_some()).count();
            assert!(drops > 0, "{kind}: the run must drop packets");
            assert!(flows > 10 && done == flows, "{kind}: {done} of {flows} flows completed");
            assert_eq!((queued, sim.packets_in_slab()), (0, 0), "{kind}");
        }
    }
}
