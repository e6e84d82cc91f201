//! The builder: a scenario and a seed in, a complete [`Sim`] out, ready to run.
//!
//! Rules:
//! - [`build`] is the only place a simulation is put together, in this order: the topology
//!   (`topo/`) and the discipline's post-build wiring; the workloads (flow groups, incast,
//!   Poisson, then the background UDP source), which number the flows and build their
//!   endpoints (an MPTCP flow of a group: one flow per subflow, bound by one connection); the
//!   routes, with every flow's ends checked for a path (both ways, but for a transport whose
//!   packets go one way) and the tables for loops; the waypoints; the flow groups; the probes, FairQ, PFC and the
//!   time series. They make the run's [`World`], its one list of parts; [`Sim::new`] then
//!   adds the engine's own state and schedules the first events.
//! - The flow groups that are jobs (collective patterns, `jobs.rs`) also make the run's
//!   `Jobs`. [`build_alone`] builds one job on its own, as the whole scenario places it, for
//!   its baseline (`run.rs`).
//! - Everything random comes from the run's seed through named streams (`routing.hash`,
//!   `routing.spray`, `routing.core`, `routing.core_packet`, `engine.timer_ties`, and those of
//!   the topology and workloads). Building twice from one seed gives the same `Sim`.
//! - A scenario the config layer accepted can still be refused here, as invalid input naming
//!   its key, for what only the built network shows: hosts that cannot reach each other, a
//!   waypoint that is not a switch or not on a path, equal-length routing without a core tier,
//!   an unknown port of `[measure]` or `[ports]`.

use crate::engine::{Sim, World, VIA_PER_PACKET};
use crate::error::Error;
use crate::fairq::FairqNet;
use crate::jobs::Jobs;
use crate::pfc::PfcNet;
use crate::buffer::Buffers;
use crate::net::NodeKind;
use crate::routing::{RouteState, Routes};
use crate::scenario::{CoreChoice, HashSeed, Scenario, TieBreak};
use crate::series::Series;
use crate::topo::Built;
use crate::workload::Flow;
use std::sync::Arc;
use crate::{poisson, probe, topo, workload};
use dcfair_core::packet::{Proto, NO_VIA};
use dcfair_core::transport::ndp::config::Paths as NdpPaths;
use dcfair_core::transport::TransportKind;
use dcfair_core::rng::Streams;
use dcfair_core::time::{SimDuration, SimTime};
use rand::Rng as _;

/// The network, the workloads and the first events of `sc` run with `seed`, ready to run.
pub fn build(sc: &Scenario, seed: u64) -> Result<Sim, Error> {
    build_some(sc, seed, None)
}

/// [`build`] with the flows of flow group `group` alone, a job (`jobs.rs`): the job on its
/// hosts of the whole scenario, nothing else on the fabric; the run ends when the job does. Its
/// baseline (`run.rs`).
pub fn build_alone(sc: &Scenario, seed: u64, group: usize) -> Result<Sim, Error> {
    build_some(sc, seed, Some(group))
}

/// [`build`], or with `only`, [`build_alone`].
fn build_some(sc: &Scenario, seed: u64, only: Option<usize>) -> Result<Sim, Error> {
    let streams = Streams::new(seed);

    let mut built = topo::build(sc, streams).map_err(|e| Error::invalid(e.key, e.reason))?;
    sc.queue.wire(&mut built.net).map_err(|e| Error::invalid(format!("queue.{}", e.key), e.reason))?;
    let (mut flows, bonds, jobs) = workload::flows_and_jobs(sc, streams, &built, only);
    let all = only.is_none();
    let (servers, incast) =
        if all { workload::incast(sc, streams, flows.len() as u32, sc.flow_groups().len() as u16, &built) } else { (Vec::new(), None) };
    flows.extend(servers);
    let poisson_plan = sc.poisson.as_ref().filter(|_| all).map(|p| poisson::plan(sc, p, &built.net));
    if let Some(plan) = &poisson_plan {
        flows.extend(poisson::flows(sc, streams, &built, plan, flows.len() as u32, poisson_group(sc))?);
    }
    // the last job ends the run when nothing else runs
    let only_jobs = !all || (sc.jobs().len() == sc.flow_groups().len() && sc.incast.is_none() && sc.poisson.is_none() && sc.udp.is_none());
    let jobs = (!jobs.is_empty()).then(|| Box::new(Jobs::new(jobs, only_jobs)));
    let background = flows.len();
    let mut group_names: Vec<String> = group_names(sc).into_iter().map(String::from).collect();
    // UDP's rate is a fraction of the first measured port's rate (the dumbbell: one bottleneck).
    let udp_group = group_names.len() as u16;
    if let Some(u) = workload::udp_source(sc, streams, background as u32, udp_group, &built, built.reference_rate).filter(|_| all) {
        flows.push(u);
        group_names.push("udp".into());
    }

    let routes = Arc::new(checked_routes(sc, streams, &built, &flows)?);
    let ndp_paths = sc.transports_used().contains(&TransportKind::Ndp).then(|| sc.transport_tables().resolved().ndp.paths);
    let ndp_sprays = ndp_paths.is_some_and(|p| p != NdpPaths::Routing);
    let via = waypoints(sc, streams, &built, &routes, &flows)?;
    // by origin (`TieBreak::Origin`), the draws made per packet are each node's own
    let by_origin = sc.sim.tie_break == TieBreak::Origin;
    let nodes = built.net.nodes.len();
    if by_origin && nodes >= crate::event::MAX_ORIGINS {
        return Err(Error::invalid("sim.tie_break", format!("\"origin\" tells at most {} nodes apart; this network has {nodes}", crate::event::MAX_ORIGINS - 1)));
    }
    let mut route = RouteState::new(&routes, streams.stream("routing.spray", 0), SimDuration::from_secs_f64(sc.routing.flowlet_gap_us * 1e-6));
    if by_origin {
        route = route.per_switch(nodes, |n| streams.stream("routing.spray.node", n));
    }
    let (packet_cores, core_rng) = if sc.routing.equal_length && sc.routing.core == CoreChoice::RandomPacket {
        let rngs = match by_origin {
            true => (0..nodes as u64).map(|n| streams.stream("routing.core_packet.node", n)).collect(),
            false => vec![streams.stream("routing.core_packet", 0)],
        };
        (built.cores.clone(), rngs)
    } else {
        (Vec::new(), Vec::new())
    };

    let flow_group: Vec<u16> = flows.iter().map(|f| f.group).collect();
    let mut net = built.net;
    let probes = probe::attach(sc, &mut net, flow_group.len(), group_names.len())?;
    let fairq = FairqNet::new(sc, &net)?.map(Box::new);
    let pfc = PfcNet::new(sc, &net, streams)?.map(Box::new);
    let buffers = Buffers::new(sc, &net, pfc.as_deref()).map(Box::new);
    let telemetry = flows.iter().any(|f| f.ends.wants_telemetry());
    let series = Series::new(sc, &net, &group_names, &flow_group)?;
    let (timer_coin, float_clock) = match sc.sim.tie_break {
        TieBreak::Fifo | TieBreak::Origin => (None, false),
        TieBreak::RandomTimers => (Some(streams.stream("engine.timer_ties", 0)), false),
        TieBreak::FloatClock => (None, true),
    };
    Ok(Sim::new(World {
        net,
        routes,
        route,
        flows: flows.into(),
        background,
        bonds,
        incast,
        jobs,
        via,
        packet_cores,
        core_rng,
        window_start: SimTime::from_secs_f64(sc.window_start_s()),
        end: SimTime::from_secs_f64(sc.sim.duration_s),
        measured_rate_bps: built.measured_rate.as_f64(),
        probes,
        port_drops: Default::default(),
        flow_group,
        group_names,
        fairq,
        pfc,
        buffers,
        telemetry,
        track_order: sc.routing.mode.per_packet() || ndp_sprays,
        trimming: ndp_paths.is_some() && sc.transport_tables().resolved().ndp.trim,
        series,
        poisson_plan,
        timer_coin,
        float_clock,
        by_origin,
    }))
}

/// The routes of `built` (seeded from `streams`), checked against the flows: every flow's
/// ends reach each other (both ways, but for a transport whose packets go one way), no route
/// loops, and a per-packet mode has choices to make.
fn checked_routes(sc: &Scenario, streams: Streams, built: &Built, flows: &[Flow]) -> Result<Routes, Error> {
    let hash_seed = match sc.routing.hash_seed {
        HashSeed::Fixed(s) => s,
        HashSeed::Run => streams.stream("routing.hash", 0).gen::<u64>() & HashSeed::MAX,
    };
    let mut routes = Routes::build(&built.net, sc.routing.mode).with_hash_seed(hash_seed);
    if let Some(tiers) = built.tiers {
        routes = routes.with_tiers(tiers);
    }
    let ndp_paths = sc.transports_used().contains(&TransportKind::Ndp).then(|| sc.transport_tables().resolved().ndp.paths);
    let ndp_sprays = ndp_paths.is_some_and(|p| p != NdpPaths::Routing);
    if ndp_sprays {
        routes = routes.with_sprayed(Proto::Ndp, ndp_paths == Some(NdpPaths::Permutation));
    }
    let pairs = flows.iter().flat_map(|f| {
        let (a, b) = (f.ids.src, f.ids.dst);
        std::iter::once((a, b)).chain((!f.ends.one_way()).then_some((b, a)))
    });
    let name = |x: u32| &built.net.nodes[x as usize].name;
    if let Some((a, b)) = routes.first_unreachable(&built.net, pairs) {
        return Err(Error::invalid("topology", format!("host {} cannot reach host {}: the topology is not connected", name(a), name(b))));
    }
    if let Some((sw, dst)) = routes.first_loop(&built.net) {
        return Err(Error::invalid("routing", format!("the routes towards {} loop through switch {}", name(dst), name(sw))));
    }
    if sc.routing.mode.per_packet() && !routes.has_choices() {
        return Err(Error::invalid(
            "routing.mode",
            format!("\"{}\" spreads a flow's packets over equal-cost paths, and this topology has one path between every pair of hosts (use fat_tree, leaf_spine, or a custom topology with parallel paths)", sc.routing.mode.as_str()),
        ));
    }
    Ok(routes)
}

/// The waypoint each flow's packets (both directions) pass through, by flow id: the group's
/// `via` switch if it names one, else with equal-length routing the core the flow climbs to,
/// else none.
fn waypoints(sc: &Scenario, streams: Streams, built: &Built, routes: &Routes, flows: &[Flow]) -> Result<Vec<u32>, Error> {
    let n = flows.len();
    let mut via = vec![NO_VIA; n];
    if sc.routing.equal_length {
        if built.cores.is_empty() {
            return Err(Error::invalid("routing.equal_length", "this topology has no core tier to climb to (use fat_tree or leaf_spine)"));
        }
        let host_no = |h: u32| built.net.nodes[..h as usize].iter().filter(|x| x.kind == NodeKind::Host).count() as u64;
        let ends = flows.iter().map(|f| (f.ids.flow, f.ids.dst));
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
    for f in flows {
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

/// Names of the flow groups by index: `Scenario::flow_groups()`, then `incast` if any, then
/// the `[poisson]` groups.
pub(crate) fn group_names(sc: &Scenario) -> Vec<&str> {
    let mut v: Vec<&str> = sc.flow_groups().into_iter().map(|(n, _)| n).collect();
    if sc.incast.is_some() {
        v.push("incast");
    }
    v.extend(crate::poisson::group_names(sc));
    v
}

/// Index of the first `[poisson]` group (see [`group_names`]).
pub(crate) fn poisson_group(sc: &Scenario) -> u16 {
    (sc.flow_groups().len() + sc.incast.is_some() as usize) as u16
}

