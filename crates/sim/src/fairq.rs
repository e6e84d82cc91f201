//! FairQ in the engine: which ports run it, its two timers, and the hooks on the packet path.
//!
//! Rules:
//! - Off unless the scenario has a `[fairq]` table; then `Sim::fairq` is set and nothing else
//!   changes: a run without FairQ schedules no FairQ event and pays one `Option` test per packet
//!   a switch forwards (and one per ACK batch a receiver emits).
//! - FairQ ports: every port of the switches named in `fairq.switches` (every switch when the
//!   list is empty). A name that is not a switch is invalid input (`fairq.switches`).
//! - The hook at a switch ([`FairqNet::on_switch`]) runs after routing, before the packet is
//!   offered to its output port, with the port it came in through and the port it leaves
//!   through (each `NO_PORT` unless a FairQ port): flow counting, option rewriting and the
//!   window rewrite of `dcfair_core::fairq`. An ACK is governed by the FairQ port it *enters*
//!   through: the port its flow's data leaves through when the ACK retraces the data's path.
//! - The end-host helper of `wscale = "reserved_bits"` runs where a receiver's segments leave
//!   its host ([`FairqNet::tag`]): the receiver's scale factor goes into `reserved_wscale`.
//!   Every FairQ switch on the ACK's path reads it; a FairQ port whose peer is a host
//!   (`FairqPort::to_host`) clears it as the ACK leaves the network.
//! - Two periodic events: `FairqSample` every `sample_interval_us` samples the queue (bytes) of
//!   every FairQ port ([`FairqNet::sample`]); `FairqTick` every `interval_us` runs every
//!   controller ([`FairqNet::tick`]). Both stop at the end of the run.
//! - The engine owns the FairQ state (`Sim::fairq`), calls its hooks and schedules its two
//!   events; this file imports no engine.

use crate::error::Error;
use crate::net::{Network, NodeKind};
use crate::scenario::Scenario;
use dcfair_core::fairq::{tag_reserved_bits, Fairq, FairqPort, WscaleMode, NO_PORT};
use dcfair_core::packet::Packet;
use dcfair_core::time::{SimDuration, SimTime};

/// The FairQ state of a network.
#[derive(Clone, Debug)]
pub struct FairqNet {
    pub core: Fairq,
    /// Global port id -> index in `core.ports`, or `NO_PORT`.
    pub slot: Vec<u32>,
    /// Index in `core.ports` -> global port id.
    pub gids: Vec<u32>,
    /// Tag receivers' ACKs with their scale factor (`wscale = "reserved_bits"`).
    pub helper: bool,
    sample_dt: SimDuration,
    tick_dt: SimDuration,
}

impl FairqNet {
    /// The FairQ state of `net` for `sc.fairq`, or `None` without the table; invalid input if a
    /// switch it names does not exist or an interval rounds to zero.
    pub fn new(sc: &Scenario, net: &Network) -> Result<Option<FairqNet>, Error> {
        let Some(cfg) = &sc.fairq else { return Ok(None) };
        let names: Vec<u32> = if cfg.switches.is_empty() {
            (0..net.nodes.len() as u32).filter(|&n| net.nodes[n as usize].kind == NodeKind::Switch).collect()
        } else {
            let mut v = Vec::new();
            for name in &cfg.switches {
                let n = net.nodes.iter().position(|n| &n.name == name && n.kind == NodeKind::Switch);
                match n {
                    Some(n) => v.push(n as u32),
                    None => return Err(Error::invalid("fairq.switches", format!("no switch named {name:?} in this topology"))),
                }
            }
            v
        };
        let buffer = cfg
            .buffer_bytes
            .or(sc.queue.limit_bytes)
            .unwrap_or_else(|| sc.queue.limit_pkts.unwrap_or(100) as u64 * sc.mtu() as u64);
        let mut core = Fairq::new(cfg);
        let mut slot = vec![NO_PORT; net.ports.len()];
        let mut gids = Vec::new();
        for n in names {
            for &g in &net.nodes[n as usize].ports {
                if slot[g as usize] == NO_PORT {
                    slot[g as usize] = gids.len() as u32;
                    gids.push(g);
                    let mut port = FairqPort::new(cfg, buffer);
                    port.to_host = net.nodes[net.ports[g as usize].peer_node as usize].kind == NodeKind::Host;
                    core.ports.push(port);
                }
            }
        }
        let (sample_dt, tick_dt) = (cfg.sample_interval(), cfg.interval());
        if sample_dt == SimDuration::ZERO || tick_dt == SimDuration::ZERO {
            return Err(Error::invalid("fairq.sample_interval_us", "rounds to zero picoseconds"));
        }
        let helper = cfg.wscale == WscaleMode::ReservedBits;
        Ok(Some(FairqNet { core, slot, gids, helper, sample_dt, tick_dt }))
    }

    /// Time between two `FairqSample` events.
    pub fn sample_interval(&self) -> SimDuration {
        self.sample_dt
    }

    /// Time between two `FairqTick` events.
    pub fn tick_interval(&self) -> SimDuration {
        self.tick_dt
    }

    /// A packet routed by a switch from local input `in_gid` to output `out_gid` (global ids).
    #[inline]
    pub fn on_switch(&mut self, now: SimTime, in_gid: u32, out_gid: u32, pkt: &mut Packet) {
        let (i, o) = (self.slot[in_gid as usize], self.slot[out_gid as usize]);
        if i != NO_PORT || o != NO_PORT {
            self.core.on_packet(now, i, o, pkt);
        }
    }

    /// The end-host helper: segments a receiver with scale factor `shift` sends.
    #[inline]
    pub fn tag(&self, out: &mut [Packet], shift: u8) {
        if self.helper {
            for p in out {
                tag_reserved_bits(p, shift);
            }
        }
    }

    /// A `FairqSample`: every FairQ port samples its queue (bytes) in `net`; in a part of a
    /// run on several threads, every port of its own (`arena.rs`: the join takes the others
    /// from their parts).
    pub fn sample(&mut self, net: &Network) {
        for (p, &g) in self.core.ports.iter_mut().zip(&self.gids) {
            if net.ports.owns(g as usize) {
                p.sample(net.ports[g as usize].queue.len_bytes());
            }
        }
    }

    /// A `FairqTick`: every controller runs.
    pub fn tick(&mut self, now: SimTime) {
        for p in self.core.ports.iter_mut() {
            p.tick(now);
        }
    }
}
