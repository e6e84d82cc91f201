//! Fabric mode: one switch of a simulated topology (fat-tree, leaf-spine, parking lot, custom),
//! routing real frames with the simulator's own routing code (issue 25; docs/testbed.md,
//! "Fabrics").
//!
//! Rules:
//! - The switch builds the scenario exactly as a simulation does (`dcfair_sim::assemble::build`
//!   with the run's seed): the same network, the same [`Routes`] (mode, `routing.hash_seed`,
//!   `dst_bits`, `spray`), the same flow numbering and the same waypoints of equal-length
//!   routing. Nothing about routing is computed anywhere else.
//! - A frame becomes the simulator's packet before it is routed: its IPv4 addresses name hosts
//!   (`[fabric.hosts]`, address -> host name); a TCP segment of a planned flow (`[[fabric.flow]]`:
//!   the flow's listening end `ip:port` and the other end's address) takes that flow's
//!   simulated 5-tuple, in the direction it travels (data: `FlowIds::forward`, ACKs:
//!   `FlowIds::reverse`), and its waypoint; any other segment keeps its real ports.
//! - `hops` (the simulator counts the switches a packet has entered, this one included) comes
//!   from the IPv4 TTL: hosts send [`HOST_TTL`], every fabric switch decrements it (RFC 1624
//!   checksum update), so `hops = HOST_TTL - ttl + 1`. A waypoint is the simulator's: set until
//!   the packet has entered it, which happens at hop `dist(first switch, waypoint) + 1`.
//! - `routing.core = "random_packet"` (a core drawn per packet at the sender) cannot be
//!   reproduced by switches that do not see the sender's draw: invalid input.
//! - [`plan`] is the same build seen from outside: nodes, ports, flows and, on request, the
//!   simulated packets per port, as JSON for the testbed's orchestration (`dcfair-switch plan`).

use crate::config::FabricConfig;
use dcfair_core::packet::{Packet, Proto, NO_VIA};
use dcfair_core::rng::{Rng, Streams};
use dcfair_core::tcp::FlowIds;
use dcfair_core::transport::{udp::UdpEnds, Variant};
use dcfair_sim::engine::{World, VIA_PER_PACKET};
use dcfair_sim::net::NodeKind;
use dcfair_sim::routing::Routes;
use dcfair_sim::Error;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};

/// The TTL Linux hosts send with (`net.ipv4.ip_default_ttl`, which the testbed leaves at 64).
pub const HOST_TTL: u8 = 64;

/// Loads and builds the scenario as a run of it with `seed` would: the run's world.
pub fn build(path: &str, overrides: &[String], seed: Option<u64>) -> Result<World, Error> {
    let sc = load(path, overrides)?;
    let sim = dcfair_sim::assemble::build(&sc, seed.unwrap_or(sc.seed))?;
    Ok(sim.into_world())
}

/// Reads and validates the scenario at `path` with `--set`-style `KEY=VALUE` overrides, for
/// switches: a scenario whose routing they cannot reproduce is invalid input.
fn load(path: &str, overrides: &[String]) -> Result<dcfair_sim::Scenario, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::invalid("--scenario", format!("cannot read {path}: {e}")))?;
    let mut ov = Vec::new();
    for s in overrides {
        let (k, v) = s.split_once('=').ok_or_else(|| Error::invalid("--set", format!("{s:?} is not KEY=VALUE")))?;
        ov.push((k.trim().to_string(), v.trim().to_string()));
    }
    let sc = dcfair_sim::load_scenario(&text, path, &ov)?;
    if sc.routing.equal_length && sc.routing.core == dcfair_sim::scenario::CoreChoice::RandomPacket {
        return Err(Error::invalid("routing.core", "random_packet draws a core per packet at the sender; switches cannot see that draw"));
    }
    if sc.pfc.is_some() {
        return Err(Error::invalid("pfc", "the real-packet switch has no lossless class: PFC runs in the simulator only"));
    }
    if sc.buffer.is_some() {
        return Err(Error::invalid("buffer", "the real-packet switch gives each port its own buffer: shared buffers run in the simulator only"));
    }
    if sc.routing.mode.stateful() {
        return Err(Error::invalid(
            "routing.mode",
            format!("\"{}\" keeps per-switch state the real-packet switch does not model: it runs in the simulator only (ecmp, symmetric, spray and dst_bits run here)", sc.routing.mode.as_str()),
        ));
    }
    Ok(sc)
}

/// Hop distances between switches over switch-to-switch links (`u32::MAX`: unreachable).
fn switch_dist(w: &World, from: u32) -> Vec<u32> {
    let net = &w.net;
    let mut d = vec![u32::MAX; net.nodes.len()];
    let mut q = VecDeque::from([from]);
    d[from as usize] = 0;
    while let Some(u) = q.pop_front() {
        for &p in &net.nodes[u as usize].ports {
            let v = net.ports[p as usize].peer_node;
            if net.nodes[v as usize].kind == NodeKind::Switch && d[v as usize] == u32::MAX {
                d[v as usize] = d[u as usize] + 1;
                q.push_back(v);
            }
        }
    }
    d
}

/// The switch a host hangs off (its one link's peer), or `u32::MAX`.
fn attachment(w: &World, host: u32) -> u32 {
    match w.net.nodes[host as usize].ports[..] {
        [p] => w.net.ports[p as usize].peer_node,
        _ => u32::MAX,
    }
}

/// Why a frame was not routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// An address that is no host of the plan, or no next hop.
    NoRoute,
    /// The next hop is a port this switch was not given.
    NoPort,
}

/// The routing of one switch of the fabric.
pub struct Router {
    node: u32,
    routes: std::sync::Arc<Routes>,
    flows: Vec<FlowIds>,
    via: Vec<u32>,
    /// Per flow: the hop number at which its packets enter their waypoint, per direction
    /// (forward, reverse); 0 without waypoint.
    via_hop: Vec<[u8; 2]>,
    hosts: HashMap<u32, u32>,
    /// (listening address, port, other address) -> flow id.
    table: HashMap<(u32, u16, u32), u32>,
    /// The simulator's local port index -> this switch's port.
    local: HashMap<u16, usize>,
    rng: Rng,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Router(node {})", self.node)
    }
}

fn ip(s: &str, key: &str) -> Result<u32, Error> {
    s.parse::<std::net::Ipv4Addr>().map(u32::from).map_err(|_| Error::invalid(key, format!("{s:?} is not an IPv4 address")))
}

impl Router {
    /// The router of switch `cfg.node`; `links` are the configured ports' simulator port
    /// indices (`port[i].link`), in port order.
    pub fn new(cfg: &FabricConfig, links: &[Option<u16>], seed: u64) -> Result<Router, Error> {
        let w = build(&cfg.scenario, &cfg.set, Some(cfg.seed.unwrap_or(seed)))?;
        let net = &w.net;
        let by_name = |n: &str, key: &str| {
            net.nodes.iter().position(|x| x.name == n).map(|i| i as u32).ok_or_else(|| Error::invalid(key, format!("no node named {n:?}")))
        };
        let node = by_name(&cfg.node, "fabric.node")?;
        if net.nodes[node as usize].kind != NodeKind::Switch {
            return Err(Error::invalid("fabric.node", format!("{} is a host, not a switch", cfg.node)));
        }
        let mut hosts = HashMap::new();
        for (a, h) in &cfg.hosts {
            let key = format!("fabric.hosts.{a}");
            let id = by_name(h, &key)?;
            hosts.insert(ip(a, &key)?, id);
        }
        let flows: Vec<FlowIds> = w.flows[..w.background].iter().map(|f| f.ids).collect();
        let mut table = HashMap::new();
        for (i, f) in cfg.flow.iter().enumerate() {
            let key = format!("fabric.flow[{i}]");
            if f.flow as usize >= flows.len() {
                return Err(Error::invalid(format!("{key}.flow"), format!("the scenario has {} TCP flows", flows.len())));
            }
            let (a, p) = f.listen.split_once(':').ok_or_else(|| Error::invalid(format!("{key}.listen"), "expected a.b.c.d:port"))?;
            let port: u16 = p.parse().map_err(|_| Error::invalid(format!("{key}.listen"), format!("{p:?} is not a port")))?;
            table.insert((ip(a, &format!("{key}.listen"))?, port, ip(&f.peer, &format!("{key}.peer"))?), f.flow);
        }
        let mut local = HashMap::new();
        let nports = net.nodes[node as usize].ports.len();
        for (i, l) in links.iter().enumerate() {
            let l = l.ok_or_else(|| Error::invalid(format!("port[{i}].link"), "required with [fabric]"))?;
            if l as usize >= nports {
                return Err(Error::invalid(format!("port[{i}].link"), format!("{} has {nports} ports", cfg.node)));
            }
            local.insert(l, i);
        }
        let via = w.via.clone();
        let mut via_hop = vec![[0u8; 2]; flows.len()];
        let mut dists: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, f) in flows.iter().enumerate() {
            let v = via.get(i).copied().unwrap_or(NO_VIA);
            if v == NO_VIA || v == VIA_PER_PACKET {
                continue;
            }
            let d = dists.entry(v).or_insert_with(|| switch_dist(&w, v));
            for (k, from) in [f.src, f.dst].into_iter().enumerate() {
                let at = attachment(&w, from);
                let h = if at == u32::MAX { u32::MAX } else { d[at as usize] };
                via_hop[i][k] = if h == u32::MAX { 0 } else { (h + 1).min(255) as u8 };
            }
        }
        let rng = Streams::new(seed).stream("routing.spray", node as u64);
        Ok(Router { node, routes: w.routes, flows, via, via_hop, hosts, table, local, rng })
    }

    /// The output port of an IPv4 packet (addresses, protocol, ports as in the frame) that
    /// arrived with `ttl` (before this switch decrements it).
    pub fn route(&mut self, src: u32, dst: u32, proto: u8, sport: u16, dport: u16, ttl: u8) -> Result<usize, Miss> {
        let (Some(&s), Some(&d)) = (self.hosts.get(&src), self.hosts.get(&dst)) else { return Err(Miss::NoRoute) };
        let hops = HOST_TTL.saturating_sub(ttl).saturating_add(1);
        let flow = if proto == 6 {
            self.table.get(&(dst, dport, src)).or_else(|| self.table.get(&(src, sport, dst))).copied()
        } else {
            None
        };
        let mut pkt = match flow {
            Some(fl) => {
                let ids = self.flows[fl as usize];
                let fwd = ids.src == s;
                let mut p = if fwd { ids.forward() } else { ids.reverse() };
                let v = self.via[fl as usize];
                let at = self.via_hop[fl as usize][(!fwd) as usize];
                // the waypoint is set until the packet has entered it (the simulator clears it there)
                p.via = if v != NO_VIA && at != 0 && hops <= at { v } else { NO_VIA };
                p
            }
            None => Packet {
                src: s,
                dst: d,
                sport,
                dport,
                proto: if proto == 6 { Proto::Tcp } else { Proto::Udp },
                ..Packet::default()
            },
        };
        pkt.hops = hops;
        let l = self.routes.next_port(self.node, &mut pkt, &mut self.rng).ok_or(Miss::NoRoute)?;
        self.local.get(&l).copied().ok_or(Miss::NoPort)
    }
}

/// The ports (by name) a packet crosses from its source host to its destination, as the
/// engine routes it (`engine.rs`, `arrive`: hops counted on entering a switch); a spraying
/// fabric draws from `rng`.
fn walk(w: &World, mut pkt: Packet, rng: &mut Rng) -> Vec<String> {
    let net = &w.net;
    let mut out = Vec::new();
    let [p] = net.nodes[pkt.src as usize].ports[..] else { return out };
    out.push(net.ports[p as usize].name.clone());
    let mut node = net.ports[p as usize].peer_node;
    while net.nodes[node as usize].kind == NodeKind::Switch && out.len() <= net.nodes.len() {
        pkt.hops = pkt.hops.saturating_add(1);
        let Some(l) = w.routes.next_port(node, &mut pkt, rng) else { break };
        let g = net.nodes[node as usize].ports[l as usize];
        out.push(net.ports[g as usize].name.clone());
        node = net.ports[g as usize].peer_node;
    }
    out
}

/// The scenario as the testbed needs it (`dcfair-switch plan`): nodes, ports (with the
/// simulator's names, rates, delays, whether measured and the discipline they run), the flows
/// (ids, groups, ends, start times, sizes, 5-tuples, waypoints), the background sources
/// (`sources`: ends, start, transport; a UDP source's pattern, packet size and mean rate) and
/// their count (`udp_sources`), the incast's share of a request per server (`incast`, or null),
/// and the scenario as it runs (`scenario`, [`resolved`]). With `simulate`, the simulation is
/// run and every port's packets out are added (`sim_pkts_out`), for the link-usage check.
pub fn plan(path: &str, overrides: &[String], seed: Option<u64>, simulate: bool) -> Result<Value, Error> {
    let sc = load(path, overrides)?;
    plan_of(&sc, seed.unwrap_or(sc.seed), simulate)
}

/// The scenario as it runs, every default filled in: the document of `sc` with the active
/// discipline's table of `[queue]`, `[host_queue]` (or the host FIFO it stands for) and the
/// table of every transport the flows use that has one (`[xpass]` when a flow uses
/// ExpressPass). A peer simulator or the testbed reads this instead of the TOML, so that no
/// default is copied out of the engine.
pub fn resolved(sc: &dcfair_sim::Scenario) -> Value {
    let mut r = sc.clone();
    r.queue = sc.queue.with_defaults();
    r.host_queue = sc.host_queue().map(|q| q.with_defaults());
    r.resolve_transport_tables(&sc.transports_used());
    serde_json::to_value(&r).expect("a scenario serializes")
}

/// [`plan`] of a loaded scenario run with `seed`, plus `"scenario"`, its [`resolved`] form. A
/// scenario with jobs (collective patterns) is invalid input: their flows start when other
/// flows end, which a plan of start times cannot say.
pub fn plan_of(sc: &dcfair_sim::Scenario, seed: u64, simulate: bool) -> Result<Value, Error> {
    if let Some((_, name, f)) = sc.jobs().into_iter().next() {
        let key = if name == "flows" { "flows.pattern".to_string() } else { format!("groups.{name}.pattern") };
        let what = f.pattern.map_or("", |p| p.name());
        return Err(Error::invalid(key, format!("{what} is a job, whose transfers start as their data arrives: jobs run in the simulator only")));
    }
    let mut sim = dcfair_sim::assemble::build(sc, seed)?;
    let w = sim.world();
    let nodes: Vec<Value> =
        w.net.nodes.iter().map(|n| json!({"name": n.name, "kind": if n.kind == NodeKind::Switch { "switch" } else { "host" }})).collect();
    let mut rng = Streams::new(0).stream("routing.spray", 0);
    let flows: Vec<Value> = w.flows[..w.background]
        .iter()
        .map(|f| {
            let via = w.via.get(f.ids.flow as usize).copied().unwrap_or(NO_VIA);
            let path = |mut pkt: Packet, rng: &mut Rng| {
                pkt.via = if via == VIA_PER_PACKET { NO_VIA } else { via };
                walk(w, pkt, rng)
            };
            let (fwd, rev) = (path(f.ids.forward(), &mut rng), path(f.ids.reverse(), &mut rng));
            json!({
                "path": fwd, "ack_path": rev,
                "id": f.ids.flow, "group": w.group_names.get(f.group as usize), "src": w.net.nodes[f.ids.src as usize].name,
                "dst": w.net.nodes[f.ids.dst as usize].name, "start_s": f.start.as_secs_f64(), "size_bytes": f.size,
                "sport": f.ids.sport, "dport": f.ids.dport,
                "via": if via == NO_VIA || via == VIA_PER_PACKET { Value::Null } else { json!(w.net.nodes[via as usize].name) },
            })
        })
        .collect();
    let udp = w.flows.len() - w.background;
    // what the testbed's incast generator needs beside the scenario: each server's share of a
    // request, as the engine splits the block
    let incast = w.incast.as_ref().map(|ic| json!({"per_server_bytes": ic.per_server, "block_bytes": ic.per_server * ic.servers as u64}));
    let sources: Vec<Value> = w.flows[w.background..]
        .iter()
        .map(|f| {
            let mut v = json!({
                "id": f.ids.flow, "group": w.group_names.get(f.group as usize), "src": w.net.nodes[f.ids.src as usize].name,
                "dst": w.net.nodes[f.ids.dst as usize].name, "start_s": f.start.as_secs_f64(), "transport": f.ends.name(),
            });
            if let Some(u) = UdpEnds::of(&f.ends) {
                v["pattern"] = json!(u.pattern());
                v["packet_bytes"] = json!(u.packet_bytes());
                v["rate_bps"] = json!(u.rate_bps());
            }
            v
        })
        .collect();
    if simulate && sim.run(None).is_break() {
        return Err(Error::Interrupted);
    }
    let w = sim.world();
    let ports: Vec<Value> = w
        .net
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let n = &w.net.nodes[p.node as usize];
            let local = n.ports.iter().position(|&q| q as usize == i).unwrap_or(0);
            let mut v = json!({
                "id": i, "name": p.name, "node": n.name, "local": local, "peer": w.net.nodes[p.peer_node as usize].name,
                "peer_local": p.peer_port, "rate_bps": p.rate.0, "delay_us": p.delay.0 as f64 / 1e6, "measured": p.measured,
                "qdisc": dcfair_core::qdisc::Qdisc::name(&p.queue.qdisc),
            });
            if simulate {
                v["sim_pkts_out"] = json!(p.queue.stats.dequeued_pkts);
            }
            v
        })
        .collect();
    Ok(json!({
        "nodes": nodes, "ports": ports, "flows": flows, "udp_sources": udp, "sources": sources, "incast": incast,
        "cores": w.packet_cores.len(), "simulated": simulate, "seed": seed, "scenario": resolved(sc),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FabricFlow;

    const OUTCAST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/testbed/outcast_case1.toml");

    fn host_ip(i: u32) -> String {
        format!("10.77.{}.{}", i / 250, i % 250 + 1)
    }

    /// The router of `node` with every port given (`link` = position), the 16 hosts at the
    /// testbed's addresses and flow `flow` listening at its sender, port 20000 + id.
    fn router(node: &str, ports: usize, flow: u32, src: u32, dst: u32) -> Router {
        let cfg = FabricConfig {
            scenario: OUTCAST.into(),
            set: vec![],
            seed: Some(1),
            node: node.into(),
            hosts: (0..16).map(|i| (host_ip(i), format!("h{i}"))).collect(),
            flow: vec![FabricFlow { listen: format!("{}:{}", host_ip(src), 20000 + flow), peer: host_ip(dst), flow }],
        };
        let links: Vec<Option<u16>> = (0..ports as u16).map(Some).collect();
        Router::new(&cfg, &links, 1).unwrap()
    }

    #[test]
    fn a_lossless_shared_buffer_or_stateful_routing_scenario_is_refused_by_name() {
        for (set, key) in [("pfc.priority=3", "pfc"), ("buffer.bytes=1000000", "buffer"), ("routing.mode=flowlet", "routing.mode")] {
            match load(OUTCAST, &[set.to_string()]) {
                Err(Error::Invalid { key: k, .. }) => assert_eq!(k, key),
                other => panic!("{set}: {:?}", other.map(|_| ())),
            }
        }
    }

    fn ip(s: &str) -> u32 {
        u32::from(s.parse::<std::net::Ipv4Addr>().unwrap())
    }

    #[test]
    fn a_planned_flow_takes_the_simulated_path_both_ways() {
        let plan = plan(OUTCAST, &[], None, false).unwrap();
        let f = &plan["flows"][8];
        assert_eq!((f["src"].as_str(), f["dst"].as_str()), (Some("h12"), Some("h0")));
        let path: Vec<&str> = f["path"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let acks: Vec<&str> = f["ack_path"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let port_of = |name: &str| -> (String, usize) {
            let p = plan["ports"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap();
            (p["node"].as_str().unwrap().to_string(), p["local"].as_u64().unwrap() as usize)
        };
        let (h12, h0) = (ip(&host_ip(12)), ip(&host_ip(0)));
        // data: h12 (listening at 20008) -> h0 (an ephemeral port): hop k enters switch k
        for (k, name) in path[1..].iter().enumerate() {
            let (node, local) = port_of(name);
            let mut r = router(&node, 4, 8, 12, 0);
            assert_eq!(r.route(h12, h0, 6, 20008, 41234, HOST_TTL - k as u8), Ok(local), "data at {node}");
        }
        for (k, name) in acks[1..].iter().enumerate() {
            let (node, local) = port_of(name);
            let mut r = router(&node, 4, 8, 12, 0);
            assert_eq!(r.route(h0, h12, 6, 41234, 20008, HOST_TTL - k as u8), Ok(local), "ACK at {node}");
        }
        // an address that is no host has no route
        let mut r = router("e0_0", 4, 8, 12, 0);
        assert_eq!(r.route(ip("10.99.0.1"), h0, 6, 1, 2, 64), Err(Miss::NoRoute));
    }

    #[test]
    fn random_packet_cores_are_refused_naming_the_key() {
        let set = vec!["routing.equal_length=true".to_string(), "routing.core=\"random_packet\"".to_string()];
        match plan(OUTCAST, &set, None, false) {
            Err(Error::Invalid { key, .. }) => assert_eq!(key, "routing.core"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_plan_carries_the_scenario_with_every_default_filled_in() {
        let ov = ["queue.kind=hcf".to_string(), "queue.limit_pkts=33".to_string()];
        let p = plan(OUTCAST, &ov, Some(7), false).unwrap();
        let sc = &p["scenario"];
        assert_eq!(p["seed"], 7);
        assert_eq!(sc["queue"]["kind"], "hcf");
        assert_eq!(sc["queue"]["limit_pkts"], 33);
        let hcf = dcfair_core::qdisc::hcf::HcfConfig::default();
        assert_eq!(sc["queue"]["hcf"]["bins"], json!(hcf.bins), "the active discipline's table, with its defaults");
        assert!(sc["queue"]["afd"].is_null(), "an inactive discipline's absent table stays absent");
        let tcp = dcfair_core::tcp::TcpConfig::default();
        assert_eq!(sc["tcp"]["mss_bytes"], json!(tcp.mss_bytes));
        assert!(p["ports"].as_array().unwrap().iter().any(|q| q["qdisc"] == "hcf"), "ports name their discipline");
        // the document reads back as the same scenario
        let back: dcfair_sim::Scenario = serde_json::from_value(sc.clone()).unwrap();
        assert_eq!(back.queue.limit_pkts, Some(33));
    }

    #[test]
    fn ttl_decrement_keeps_the_ip_checksum_valid() {
        let mut f = vec![0u8; 34];
        f[14] = 0x45;
        f[14 + 8] = 64;
        f[14 + 9] = 6;
        let ck = !crate::csum::fold(crate::csum::add_words(&f[14..34], 0));
        f[24..26].copy_from_slice(&ck.to_be_bytes());
        crate::switch::decrement_ttl(&mut f);
        assert_eq!(f[22], 63);
        assert_eq!(crate::csum::fold(crate::csum::add_words(&f[14..34], 0)), 0xFFFF);
    }
}
