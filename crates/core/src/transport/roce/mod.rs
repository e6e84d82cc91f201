//! RoCEv2 (RDMA over Converged Ethernet, version 2): a reliable, rate-paced transport over
//! UDP, with the congestion controls DCQCN ([`dcqcn`]), TIMELY ([`timely`]) and HPCC
//! ([`hpcc`]: its data packets collect in-band telemetry, `crate::telemetry`, and its ACKs echo
//! it), or none.
//!
//! The sender ([`sender`], the requester) cuts messages into packets numbered by PSN and paces
//! them at its current rate; the receiver ([`receiver`], the responder) delivers them in order,
//! acknowledges them, NACKs gaps and, for DCQCN, turns CE marks into CNPs. Loss recovery is
//! go-back-N (what RoCE NICs do) or selective (IRN, Mittal et al., "Revisiting Network Support
//! for RDMA", SIGCOMM 2018). PFC, which makes a RoCE class lossless, is the switches' (the
//! engine's per-class pauses); this transport only puts its packets in the class.
//!
//! Rules:
//! - A flow of `transport = "roce"` is a [`RoceEnds`]: the transport's registry line
//!   (`transport/mod.rs`) makes this folder, the `[roce]` table, its validation and the
//!   `roce_*` figures of `summary.json`; the engine names none of them. No port wrapper.
//! - The wire: every packet is `Proto::Udp` to or from port [`ROCE_PORT`] (4791; the sender's
//!   side keeps the flow's source port), in 802.1p class `roce.priority` (`Packet::class`),
//!   data, ACK, NACK and CNP alike. Its type is in `flags` ([`kind`]). A data packet carries
//!   its PSN in `seq` (PSNs count packets, from 0), `roce.mtu_bytes` of payload (less for the
//!   last of a message) in `payload`, `payload + roce.header_bytes` in `size` (Ethernet, IPv4,
//!   UDP, BTH and ICRC headers: 58 bytes by default), is ECN-capable (`Ecn::Ect0`) and stamps
//!   its departure in `ts_val`. An ACK or NACK carries the cumulative PSN in `ack` (every PSN
//!   below it arrived) and the data packet's `ts_val` in `ts_ecr`, and is
//!   `header_bytes + `[`ACK_EXTRA_BYTES`] (the AETH); a selective NACK names the PSN that
//!   arrived out of order in `seq`. A CNP is `header_bytes + `[`CNP_EXTRA_BYTES`]. Control
//!   packets are not ECN-capable.
//! - How a CE mark reaches the sender: a switch marks a data packet CE; the receiver, with
//!   `cc = "dcqcn"`, answers with a CNP (at most one per `dcqcn.cnp_interval_us`); the CNP
//!   reaches the sender's [`dcqcn::Dcqcn::on_cnp`]. With `cc = "none"` or `"timely"` marks are
//!   ignored.
//! - Pure state machines: time is passed in, nothing is random, packets go out through a
//!   `Vec<Packet>` the caller drains, each end reports one deadline (the receiver none). The
//!   sender is not a clock (`CLOCKED = false`): its deadline moves with its rate.
//! - Layers: [`config`] imports no other file of the folder; [`dcqcn`] and [`timely`] import
//!   it; [`sender`] and [`receiver`] import them and this file's wire constants; this file,
//!   the transport as the registry sees it, imports them all.
//! - Parameters, defaults and their sources: `docs/mechanisms/roce.md` (the transport and its
//!   recovery), `docs/mechanisms/dcqcn.md`, `docs/mechanisms/timely.md`.

pub mod config;
pub mod dcqcn;
pub mod hpcc;
pub mod receiver;
pub mod sender;
pub mod timely;

pub use config::{CcKind, DcqcnConfig, HpccConfig, Recovery, RoceConfig, TimelyConfig};

use super::framework::{Data, FlowSpec, Selectable, Side, Transport};
use crate::config::ConfigError;
use crate::packet::Packet;
use crate::tcp::SenderStats;
use crate::telemetry::IntHop;
use crate::time::SimTime;
use receiver::RoceReceiver;
use sender::RoceSender;

/// The RoCEv2 UDP destination port (IANA).
pub const ROCE_PORT: u16 = 4791;
/// Bytes an ACK or NACK adds to the headers: the AETH.
pub const ACK_EXTRA_BYTES: u32 = 4;
/// Bytes a CNP adds to the headers: its 16 reserved bytes.
pub const CNP_EXTRA_BYTES: u32 = 16;

/// The packet types, in `Packet::flags` (a RoCE packet is UDP: TCP's flag bits do not apply).
pub mod kind {
    /// A data packet (RDMA write / send payload).
    pub const DATA: u8 = 0x01;
    /// An acknowledgement: `ack` is the cumulative PSN.
    pub const ACK: u8 = 0x02;
    /// A negative acknowledgement: `ack` is the PSN expected (the cumulative PSN).
    pub const NACK: u8 = 0x04;
    /// A congestion notification packet (DCQCN).
    pub const CNP: u8 = 0x08;
    /// On a data packet: the last of its message, acknowledge it at once (BTH's AckReq).
    pub const ACK_REQ: u8 = 0x10;
}

/// The two ends of a RoCEv2 flow.
#[derive(Clone, Debug)]
pub struct RoceEnds {
    pub sender: RoceSender,
    pub receiver: RoceReceiver,
}

impl RoceEnds {
    /// The current rate of the sender, bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.sender.rate_bps()
    }
}

impl Transport for RoceEnds {
    const TITLE: &'static str = "RoCEv2";
    const PROTO: crate::packet::Proto = crate::packet::Proto::Udp;

    two_ends!(sender, receiver);
    /// A data packet (ACKs, NACKs and CNPs carry no payload).
    #[inline(always)]
    fn is_arrival(pkt: &Packet) -> bool {
        pkt.has(kind::DATA) && pkt.payload > 0
    }
    #[inline]
    fn class(&self) -> u8 {
        self.sender.class()
    }
    fn wants_telemetry(&self) -> bool {
        self.sender.wants_telemetry()
    }
    fn on_packet_int(&mut self, side: Side, pkt: &Packet, hops: &[IntHop], now: SimTime, out: &mut Vec<Packet>) {
        match side {
            Side::Sender => self.sender.on_packet_int(pkt, hops, now, out),
            Side::Receiver => self.receiver.on_packet(pkt, now, out),
        }
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
    /// Over the run's RoCE flows: CNPs and NACKs the receivers sent, the senders' timeouts,
    /// rate decreases (DCQCN cuts, TIMELY decreases) and retransmitted packets.
    fn summary(ends: &[&RoceEnds]) -> Vec<(&'static str, u64)> {
        let sum = |f: fn(&RoceEnds) -> u64| ends.iter().map(|x| f(x)).sum::<u64>();
        vec![
            ("roce_cnps_sent", sum(|x| x.receiver.stats.cnps_sent)),
            ("roce_nacks_sent", sum(|x| x.receiver.stats.nacks_sent)),
            ("roce_timeouts", sum(|x| x.sender.stats.timeouts)),
            ("roce_rate_decreases", sum(|x| x.sender.rate_decreases())),
            ("roce_retransmits", sum(|x| x.sender.stats.retransmits)),
        ]
    }
}

impl Selectable for RoceEnds {
    type Table = RoceConfig;

    fn validate(table: &RoceConfig, mtu: u32) -> Result<(), ConfigError> {
        table.validate(mtu)
    }

    /// Packets of `roce.mtu_bytes` (the flow's `tcp` table is not read); the sender starts at
    /// the rate of its own NIC (`spec.sender_rate`).
    fn build(table: &RoceConfig, spec: &FlowSpec) -> RoceEnds {
        let size = match spec.data {
            Data::Bulk(size) => size,
            Data::Written => Some(0),
        };
        RoceEnds { sender: RoceSender::new(table, spec.ids, spec.sender_rate, size), receiver: RoceReceiver::new(table, spec.ids) }
    }
}

#[cfg(test)]
mod tests;
