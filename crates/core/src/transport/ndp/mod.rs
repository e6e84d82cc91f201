//! NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency and
//! high performance", SIGCOMM 2017): a receiver-driven transport over switches that trim
//! payloads instead of dropping packets.
//!
//! The sender ([`sender`]) starts a flow with a full window of packets, then sends one packet
//! per PULL; the receiver ([`receiver`]) ACKs every packet and NACKs every header whose payload
//! a switch cut, and sends a PULL for each; the receiving host's NIC paces the PULLs to its
//! link's packet rate, and every switch port trims and puts headers first ([`port`]).
//!
//! Rules:
//! - A flow of `transport = "ndp"` is an [`NdpEnds`]: the registry line (`transport/mod.rs`)
//!   makes this folder, the `[ndp]` table, its validation, the port wrapper of every port of a
//!   run with NDP flows, and the `ndp_*` figures of `summary.json`.
//! - The wire: every packet is `Proto::Ndp` with the flow's ports. Its type is in `flags`
//!   ([`kind`]). A data packet carries its byte offset in `seq` (packet `i` at `i x
//!   ndp.mss_bytes`), its payload in `payload` and `payload + ndp.header_bytes` in `size`. A
//!   trimmed one arrives with `size = ndp.header_bytes` and `payload` unchanged: `size` below
//!   `payload` (a switch trims only packets whose payload is larger than a header). An ACK or NACK names the data packet in `seq`; a PULL carries the
//!   receiver's cumulative count of PULLs in `ack` and `priority = `[`PULL_PRIORITY`], which
//!   is how the NIC's pacer tells it from the other headers. Control packets are
//!   `ndp.header_bytes` long.
//! - Routing: under a per-flow `routing.mode`, NDP's packets are spread per packet
//!   (`ndp.paths`, `crates/sim/src/routing.rs`): by the path number a data packet carries in
//!   its source port (`"permutation"`, the default: the paper's senders send one packet per
//!   path, in a random order), or at random at every switch (`"random"`, and for control
//!   packets under `"permutation"`). The receiver finds a packet's flow by `Packet::flow`, not
//!   by its ports.
//! - Pure state machines: time is passed in, nothing is random, packets go out through a
//!   `Vec<Packet>` the caller drains; the sender's one deadline is its oldest packet's timeout,
//!   the receiver has none.
//! - Layers: [`config`] imports no other file of the folder; [`sender`], [`receiver`] and
//!   [`port`] import it and this file's wire constants; this file imports them all.
//! - Parameters, defaults and their sources: `docs/mechanisms/ndp.md`.

pub mod config;
pub mod port;
pub mod receiver;
pub mod sender;

pub use config::NdpConfig;

use super::framework::{Data, FlowSpec, Selectable, Side, Transport};
use crate::config::ConfigError;
use crate::packet::Packet;
use crate::qdisc::{AnyQdisc, PortContext, QPacket};
use crate::tcp::SenderStats;
use crate::time::SimTime;
use receiver::NdpReceiver;
use sender::NdpSender;

/// Whether a data packet arrives trimmed: cut to its header, below the payload it was sent
/// with.
#[inline(always)]
pub fn trimmed(pkt: &Packet) -> bool {
    pkt.size < pkt.payload
}

/// `Packet::priority` of a PULL.
pub const PULL_PRIORITY: u64 = 1;

/// The packet types, in `Packet::flags` (NDP is not TCP: TCP's flag bits do not apply).
pub mod kind {
    pub const DATA: u8 = 0x01;
    pub const ACK: u8 = 0x02;
    pub const NACK: u8 = 0x04;
    pub const PULL: u8 = 0x08;
}

/// The two ends of an NDP flow.
#[derive(Clone, Debug)]
pub struct NdpEnds {
    pub sender: NdpSender,
    pub receiver: NdpReceiver,
}

impl Transport for NdpEnds {
    const TITLE: &'static str = "NDP";
    const PROTO: crate::packet::Proto = crate::packet::Proto::Ndp;

    two_ends!(sender, receiver);
    /// A whole data packet; a trimmed header is not an arrival.
    #[inline(always)]
    fn is_arrival(pkt: &Packet) -> bool {
        pkt.has(kind::DATA) && !trimmed(pkt)
    }
    fn delivered_bytes(&self) -> u64 {
        self.receiver.delivered_bytes()
    }
    #[inline]
    fn data_pkts_sent(&self) -> u64 {
        self.sender.stats.data_pkts
    }
    fn sender_stats(&self) -> SenderStats {
        let s = &self.sender.stats;
        SenderStats::of_data_sender(s.data_pkts, s.bytes_sent, s.retransmits, s.timeouts, s.bytes_acked)
    }
    /// Over the run's NDP flows: headers the receivers got trimmed (each one NACKed), PULLs
    /// sent, packets resent, and the packets resent on a timeout.
    fn summary(ends: &[&NdpEnds]) -> Vec<(&'static str, u64)> {
        let sum = |f: fn(&NdpEnds) -> u64| ends.iter().map(|x| f(x)).sum::<u64>();
        vec![
            ("ndp_nacks", sum(|x| x.receiver.stats.trimmed)),
            ("ndp_pulls", sum(|x| x.receiver.stats.pulls_sent)),
            ("ndp_retransmits", sum(|x| x.sender.stats.retransmits)),
            ("ndp_timeouts", sum(|x| x.sender.stats.timeouts)),
        ]
    }
}

impl Selectable for NdpEnds {
    type Table = NdpConfig;

    fn validate(table: &NdpConfig, _mtu: u32) -> Result<(), ConfigError> {
        table.validate()
    }

    /// Packets of `ndp.mss_bytes` and `ndp.header_bytes` (the flow's `tcp` table is not read).
    fn build(table: &NdpConfig, spec: &FlowSpec) -> NdpEnds {
        let size = match spec.data {
            Data::Bulk(size) => size,
            Data::Written => Some(0),
        };
        let rng = spec.streams.stream("ndp.paths", spec.ids.flow as u64);
        NdpEnds { sender: NdpSender::new(table, spec.ids, size, rng), receiver: NdpReceiver::new(table, spec.ids) }
    }

    fn wrap_port<P: QPacket + 'static>(table: &NdpConfig, q: AnyQdisc<P>, ctx: &PortContext) -> AnyQdisc<P> {
        port::wrap_port(table, q, ctx)
    }
}

#[cfg(test)]
mod tests;
