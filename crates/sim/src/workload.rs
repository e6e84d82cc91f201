//! Workloads: the traffic sources attached to hosts.
//!
//! Rules:
//! - A TCP flow is a [`TcpFlow`]: a sender endpoint at its source host and a receiver endpoint at
//!   its destination, with the lazy-timer bookkeeping the engine needs (`timer_at`: the time of the
//!   one pending timer event of each endpoint, if any).
//! - A UDP source emits packets at a constant or Poisson rate from its own random stream; its
//!   packets are counted at the receiver like any flow's.
//! - Flow ids are dense: TCP flows first (`0..n_tcp`), then UDP sources.
//! - Random start times come from the stream `("flow.start", flow_id)`, so changing one group's
//!   size never shifts another group's draws.

use crate::scenario::{Scenario, UdpPattern};
use dcfair_core::packet::{Packet, Proto};
use dcfair_core::rng::{Rng, Streams};
use dcfair_core::tcp::{FlowIds, TcpReceiver, TcpSender};
use dcfair_core::time::{BitsPerSec, SimDuration, SimTime};
use rand::Rng as _;

#[derive(Debug)]
pub struct TcpFlow {
    pub ids: FlowIds,
    /// Index into `Scenario::flow_groups()`.
    pub group: u16,
    pub size: Option<u64>,
    pub start: SimTime,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    /// Time of the pending timer event of [sender, receiver].
    pub timer_at: [Option<SimTime>; 2],
    /// Float-clock mode (`sim.tie_break = "float_clock"`): the last deadline seen of
    /// [sender, receiver] and its shadow-clock time.
    pub deadline_seen: [Option<SimTime>; 2],
    pub timer_f: [f64; 2],
    /// In-order bytes delivered when the measurement window opened.
    pub delivered_at_window: u64,
}

#[derive(Debug)]
pub struct UdpSource {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub pattern: UdpPattern,
    pub size: u32,
    /// Mean time between packets.
    pub gap: SimDuration,
    pub start: SimTime,
    pub rng: Rng,
    pub pkts_sent: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_received_at_window: u64,
}

impl UdpSource {
    /// The gap to the next packet.
    pub fn next_gap(&mut self) -> SimDuration {
        match self.pattern {
            UdpPattern::Cbr => self.gap,
            UdpPattern::Poisson => {
                // Inverse-transform exponential; 1 - u is in (0, 1], so ln is finite.
                let u: f64 = self.rng.gen();
                SimDuration::from_secs_f64(-(1.0 - u).ln() * self.gap.as_secs_f64())
            }
        }
    }

    pub fn packet(&self) -> Packet {
        Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            sport: 5000,
            dport: 5001,
            proto: Proto::Udp,
            size: self.size,
            payload: self.size.saturating_sub(28),
            ..Default::default()
        }
    }
}

/// Creates the TCP flows of every group, numbered across groups in `Scenario::flow_groups()`
/// order: global flow i goes from `senders[i % S]` to `receivers[i % R]`.
pub fn tcp_flows(sc: &Scenario, streams: Streams, senders: &[u32], receivers: &[u32]) -> Vec<TcpFlow> {
    let mut flows = Vec::new();
    for (g, (_, f)) in sc.flow_groups().into_iter().enumerate() {
        let size = f.size(sc.tcp.mss_bytes);
        for _ in 0..f.count {
            let i = flows.len() as u32;
            let mut rng = streams.stream("flow.start", i as u64);
            let start_s = if f.start_max_s > f.start_min_s { rng.gen_range(f.start_min_s..f.start_max_s) } else { f.start_min_s };
            let ids = FlowIds {
                flow: i,
                src: senders[i as usize % senders.len()],
                dst: receivers[i as usize % receivers.len()],
                sport: 1024 + (i % 60_000) as u16,
                dport: 80 + (i / 60_000) as u16,
            };
            flows.push(TcpFlow {
                ids,
                group: g as u16,
                size,
                start: SimTime::from_secs_f64(start_s),
                sender: TcpSender::new(&sc.tcp, ids, size),
                receiver: TcpReceiver::new(&sc.tcp, ids),
                timer_at: [None, None],
                deadline_seen: [None, None],
                timer_f: [0.0, 0.0],
                delivered_at_window: 0,
            });
        }
    }
    flows
}

/// The UDP background source of `[udp]`, if any, with flow id `flow`.
pub fn udp_source(sc: &Scenario, streams: Streams, flow: u32, host: Option<u32>, dst: u32, bottleneck: BitsPerSec) -> Option<UdpSource> {
    let u = sc.udp.as_ref()?;
    let host = host?;
    if u.rate_fraction <= 0.0 {
        return None;
    }
    let rate = bottleneck.as_f64() * u.rate_fraction;
    let gap = SimDuration::from_secs_f64(u.packet_bytes as f64 * 8.0 / rate);
    Some(UdpSource {
        flow,
        src: host,
        dst,
        pattern: u.pattern,
        size: u.packet_bytes,
        gap,
        start: SimTime::from_secs_f64(u.start_s),
        rng: streams.stream("udp", flow as u64),
        pkts_sent: 0,
        bytes_sent: 0,
        bytes_received: 0,
        bytes_received_at_window: 0,
    })
}
