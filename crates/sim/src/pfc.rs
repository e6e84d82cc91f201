//! PFC in the engine: the lossless class's state at every port, the pause frames in flight, and
//! the deadlock check. The rules of the mechanism are `dcfair_core::pfc`'s.
//!
//! Rules:
//! - Off unless the scenario has a `[pfc]` table; then `World::pfc` is set and every port of the
//!   run has a [`PfcPort`]. A run without PFC pays one `Option` test where a host emits a packet,
//!   where a port starts or ends a transmission, and where a switch forwards.
//! - A lossless packet (its `class` is `pfc.priority`) waits in its port's lossless FIFO, never
//!   in the port's discipline; at a switch it is admitted by the gate of the port it came in
//!   through before it is stored, and released from that gate when it goes on the wire.
//! - A frame a node sends through port `p` pauses the lossless class of the port at the other
//!   end of `p`'s link ([`PfcNet::upstream`]). Frames on a link arrive in the order they left, so
//!   the frames in flight towards a port are a FIFO of pause times, and the `PfcFrame` event of
//!   that port carries no data.
//! - Every PAUSE schedules the gate's refresh half a pause time later (`PfcRefresh`, lazy: a
//!   refresh whose time is not the gate's `refresh_at` does nothing).
//! - Deadlock: at most once per half pause time, at a refresh, the ports whose lossless class is
//!   paused with packets waiting are searched for a cycle (port `p`, from node A to B, waits on
//!   every such port of B). A cycle found at two checks in a row, with none of its ports having
//!   sent a lossless byte in between, is a PFC deadlock: the engine ends the run there, and
//!   `summary.json` reports it (`pfc.deadlock`: time and ports).

use crate::error::Error;
use crate::net::{Network, NodeKind};
use crate::pktref::PktRef;
use crate::scenario::Scenario;
use dcfair_core::pfc::{headroom_bytes, quanta_time, ClassFifo, ClassScheduler, EcnMarker, IngressGate, PauseState};
use dcfair_core::rng::Streams;
use dcfair_core::time::{SimDuration, SimTime};
use std::collections::VecDeque;

/// The `gate` of a packet a host emitted: it came in through no switch port.
pub const NO_GATE: u32 = u32::MAX;

/// The lossless class at one port (both ways of its link as seen from its node).
#[derive(Debug)]
pub struct PfcPort {
    /// The lossless packets waiting to leave through this port.
    pub q: ClassFifo<PktRef>,
    /// This port's lossless class as the peer pauses it.
    pub pause: PauseState,
    /// The ingress accounting of the packets that come in through this port's link (a switch's
    /// port; unused at a host).
    pub gate: IngressGate,
    /// PAUSE (and refresh) and RESUME frames this port's node sent through it.
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    /// Pause times of the frames on their way to this port, oldest first.
    in_flight: VecDeque<SimDuration>,
    /// The gate's next refresh.
    refresh_at: SimTime,
    /// The time of the `Wake` scheduled for the end of the pause, to schedule it once.
    pub wake_at: SimTime,
    /// Round robin: the lossy class goes next if it has a packet.
    pub lossy_turn: bool,
    /// At a host's NIC: the lossless senders (flow ids) held until its lossless FIFO drains, in
    /// the order they came (`Sim::held_by_nic`).
    waiters: Vec<u32>,
    /// A pause frame's pause time at this link's rate, and the frame's serialization.
    quanta: SimDuration,
    frame_tx: SimDuration,
}

/// A PFC deadlock found in a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Deadlock {
    pub at: SimTime,
    /// The ports of the cycle, by global id, in cycle order.
    pub ports: Vec<u32>,
}

/// The PFC state of a network.
#[derive(Debug)]
pub struct PfcNet {
    pub lossless: u8,
    /// The gates' XOFF and XON levels as configured (a shared buffer lowers them as it fills).
    pub xoff: u64,
    pub xon: u64,
    pub scheduler: ClassScheduler,
    /// By global port id.
    pub ports: Vec<PfcPort>,
    /// The next deadlock check, and the cycle the last one found with its ports' lossless bytes
    /// sent then.
    next_check: SimTime,
    suspect: Option<(Vec<u32>, Vec<u64>)>,
    pub deadlock: Option<Deadlock>,
}

/// What the engine must do after a frame was sent: schedule its arrival and maybe the gate's
/// refresh.
pub struct Sent {
    /// The port the frame pauses, and when it arrives there.
    pub to: u32,
    pub at: SimTime,
    /// The refresh of the sending gate (a PAUSE), at this time.
    pub refresh: Option<SimTime>,
}

impl PfcPort {
    /// Whether senders are held at this port (a host's NIC).
    #[inline]
    pub fn has_waiters(&self) -> bool {
        !self.waiters.is_empty()
    }
}

impl PfcNet {
    /// The PFC state of `net` for `sc.pfc`, or `None` without the table; invalid input for a
    /// network whose port ids do not fit its events.
    pub fn new(sc: &Scenario, net: &Network, streams: Streams) -> Result<Option<PfcNet>, Error> {
        let Some(cfg) = &sc.pfc else { return Ok(None) };
        if net.ports.len() > crate::event::MAX_EXT_ID as usize + 1 {
            return Err(Error::invalid("pfc", format!("{} ports: PFC runs take at most {}", net.ports.len(), crate::event::MAX_EXT_ID as u64 + 1)));
        }
        let mtu = sc.mtu();
        let ports = net
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let at_switch = net.nodes[p.node as usize].kind == NodeKind::Switch;
                let marker = (at_switch && cfg.ecn.pmax > 0.0).then(|| EcnMarker::new(&cfg.ecn, streams.stream("pfc.ecn", i as u64)));
                let headroom = cfg.headroom_bytes.unwrap_or_else(|| headroom_bytes(p.rate, p.delay, mtu));
                PfcPort {
                    q: ClassFifo::new(marker),
                    pause: PauseState::default(),
                    gate: IngressGate::new(cfg.xoff_bytes, cfg.xon_bytes, headroom),
                    pauses_sent: 0,
                    resumes_sent: 0,
                    in_flight: VecDeque::new(),
                    refresh_at: SimTime::ZERO,
                    wake_at: SimTime::ZERO,
                    lossy_turn: false,
                    waiters: Vec::new(),
                    quanta: quanta_time(cfg.pause_quanta, p.rate),
                    frame_tx: p.rate.tx_time(64),
                }
            })
            .collect();
        Ok(Some(PfcNet { lossless: cfg.priority, xoff: cfg.xoff_bytes, xon: cfg.xon_bytes, scheduler: cfg.scheduler, ports, next_check: SimTime::ZERO, suspect: None, deadlock: None }))
    }

    /// The port whose lossless class a frame sent through port `p` pauses: the other end of its link.
    #[inline]
    pub fn upstream(net: &Network, p: u32) -> u32 {
        let port = &net.ports[p as usize];
        net.nodes[port.peer_node as usize].ports[port.peer_port as usize]
    }

    /// Port `p`'s node sends a frame through it at `now`: a PAUSE of the link's pause time, or a
    /// RESUME. It leaves when the packet on the wire is out.
    pub fn send(&mut self, net: &Network, p: u32, pause: bool, now: SimTime) -> Sent {
        let port = &net.ports[p as usize];
        let to = Self::upstream(net, p);
        let pp = &mut self.ports[p as usize];
        let at = now.max(port.busy_until) + pp.frame_tx + port.delay;
        let time = if pause { pp.quanta } else { SimDuration::ZERO };
        let refresh = if pause {
            pp.pauses_sent += 1;
            pp.refresh_at = now + SimDuration(pp.quanta.0 / 2).max(SimDuration(1));
            Some(pp.refresh_at)
        } else {
            pp.resumes_sent += 1;
            None
        };
        self.ports[to as usize].in_flight.push_back(time);
        Sent { to, at, refresh }
    }

    /// Holds the sender of flow `f` at its NIC `nic` if the NIC's lossless FIFO holds packets
    /// (once: a held sender is not added again); whether it is held.
    pub fn hold(&mut self, nic: u32, f: u32) -> bool {
        let pp = &mut self.ports[nic as usize];
        if pp.q.is_empty() {
            return false;
        }
        if !pp.waiters.contains(&f) {
            pp.waiters.push(f);
        }
        true
    }

    /// The senders held at port `p`, in the order they came; the list is empty after (give the
    /// vector back with [`PfcNet::give_back`] to keep its allocation).
    pub fn take_waiters(&mut self, p: u32) -> Vec<u32> {
        std::mem::take(&mut self.ports[p as usize].waiters)
    }

    /// Returns the list [`PfcNet::take_waiters`] took, emptied.
    pub fn give_back(&mut self, p: u32, mut v: Vec<u32>) {
        v.clear();
        let w = &mut self.ports[p as usize].waiters;
        if w.is_empty() {
            *w = v;
        }
    }

    /// A frame reaches port `p` at `now`: whether its lossless class may send now.
    pub fn receive(&mut self, p: u32, now: SimTime) -> bool {
        let pp = &mut self.ports[p as usize];
        let time = pp.in_flight.pop_front().expect("a PfcFrame event without a frame in flight");
        pp.pause.frame(now, time);
        !pp.pause.paused(now)
    }

    /// Whether gate `p`'s refresh is due at `now` and its gate is still above XON.
    pub fn refresh_due(&self, p: u32, now: SimTime) -> bool {
        let pp = &self.ports[p as usize];
        pp.refresh_at == now && pp.gate.paused
    }

    /// The deadlock check at `now` (module rules): at most once per half pause time; returns
    /// the deadlock when it finds one.
    pub fn check_deadlock(&mut self, net: &Network, now: SimTime) -> Option<&Deadlock> {
        if now < self.next_check || self.deadlock.is_some() {
            return self.deadlock.as_ref();
        }
        let longest = self.ports.iter().map(|p| p.quanta).max().unwrap_or_default();
        self.next_check = now + SimDuration(longest.0 / 2);
        let cycle = self.paused_cycle(net, now);
        let sent = |c: &[u32]| c.iter().map(|&p| self.ports[p as usize].q.bytes_out).collect::<Vec<_>>();
        match (cycle, self.suspect.take()) {
            (Some(c), Some((prev, bytes))) if c == prev && sent(&c) == bytes => {
                self.deadlock = Some(Deadlock { at: now, ports: c });
            }
            (Some(c), _) => {
                let b = sent(&c);
                self.suspect = Some((c, b));
            }
            (None, _) => {}
        }
        self.deadlock.as_ref()
    }

    /// A cycle of ports whose lossless class is paused with packets waiting, each waiting on the
    /// next (a port to node B waits on B's such ports), smallest port id first; `None` without.
    fn paused_cycle(&self, net: &Network, now: SimTime) -> Option<Vec<u32>> {
        let stuck = |p: usize| self.ports[p].pause.paused(now) && !self.ports[p].q.is_empty();
        let n = self.ports.len();
        // colour: 0 unseen, 1 on the stack, 2 done
        let mut colour = vec![0u8; n];
        for start in (0..n).filter(|&p| stuck(p)) {
            if colour[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            colour[start] = 1;
            while let Some(&mut (p, ref mut next)) = stack.last_mut() {
                let peer = &net.nodes[net.ports[p].peer_node as usize].ports;
                let mut pushed = false;
                while *next < peer.len() {
                    let q = peer[*next] as usize;
                    *next += 1;
                    if !stuck(q) {
                        continue;
                    }
                    if colour[q] == 1 {
                        let from = stack.iter().position(|&(x, _)| x == q).expect("on the stack");
                        let mut c: Vec<u32> = stack[from..].iter().map(|&(x, _)| x as u32).collect();
                        let m = c.iter().enumerate().min_by_key(|(_, &x)| x).map(|(i, _)| i).unwrap_or(0);
                        c.rotate_left(m);
                        return Some(c);
                    }
                    if colour[q] == 0 {
                        colour[q] = 1;
                        stack.push((q, 0));
                        pushed = true;
                        break;
                    }
                }
                if !pushed {
                    colour[p] = 2;
                    stack.pop();
                }
            }
        }
        None
    }
}
