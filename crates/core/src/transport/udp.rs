//! UDP as a transport: a source that emits packets of one size at a constant or Poisson rate,
//! and a sink that counts them (the `[udp]` background of a scenario).
//!
//! Rules:
//! - The source is a clock (`Transport::CLOCKED`): it sends its first packet at its start, and
//!   each next one a gap later, the gap `gap` itself (`cbr`) or drawn exponential with mean `gap`
//!   (`poisson`, inverse transform, from the stream the source was built with). Its deadline is
//!   the time of its next packet; nothing moves it.
//! - Packets are `Proto::Udp`, `size` bytes on the wire, `size - 28` of payload (IP and UDP
//!   headers), ports 5000 -> 5001. Every packet that reaches the sink counts as an arrival of
//!   the flow, and its bytes as delivered; the sink sends nothing back. They travel in 802.1p
//!   priority `udp.priority` (0 by default; PFC's lossless class when it is `pfc.priority`: a
//!   lossless source without congestion control).

use super::framework::{Side, Transport};
use crate::packet::{Packet, Proto};
use crate::rng::Rng;
use crate::tcp::{FlowIds, SenderStats};
use crate::time::{SimDuration, SimTime};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// How a source spaces its packets (`udp.pattern`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UdpPattern {
    /// Exponential inter-arrival times.
    #[default]
    Poisson,
    /// Constant bit rate.
    Cbr,
}

/// A UDP source and its sink.
#[derive(Clone, Debug)]
pub struct UdpEnds {
    ids: FlowIds,
    pattern: UdpPattern,
    /// Bytes per packet on the wire.
    size: u32,
    /// Mean rate, bits/s on the wire, and the mean time between packets it makes.
    rate_bps: f64,
    gap: SimDuration,
    rng: Rng,
    /// The 802.1p priority of its packets (`udp.priority`; PFC's lossless class when it is
    /// `pfc.priority`).
    class: u8,
    /// When the next packet leaves (`None` before the start).
    next: Option<SimTime>,
    pub pkts_sent: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

impl UdpEnds {
    /// A source of flow `ids` sending `size`-byte packets at `rate_bps` on average (a packet
    /// every `8 size / rate` seconds, rounded to the picosecond), spaced by `pattern` with draws
    /// from `rng`.
    pub fn new(ids: FlowIds, pattern: UdpPattern, size: u32, rate_bps: f64, rng: Rng) -> UdpEnds {
        let gap = SimDuration::from_secs_f64(size as f64 * 8.0 / rate_bps);
        UdpEnds { ids, pattern, size, rate_bps, gap, rng, class: 0, next: None, pkts_sent: 0, bytes_sent: 0, bytes_received: 0 }
    }

    /// The same source, its packets in 802.1p priority `class`.
    pub fn with_class(mut self, class: u8) -> UdpEnds {
        self.class = class;
        self
    }

    /// How the source spaces its packets.
    pub fn pattern(&self) -> UdpPattern {
        self.pattern
    }

    /// Bytes per packet on the wire.
    pub fn packet_bytes(&self) -> u32 {
        self.size
    }

    /// The mean rate, bits/s on the wire.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// The gap to the next packet.
    fn next_gap(&mut self) -> SimDuration {
        match self.pattern {
            UdpPattern::Cbr => self.gap,
            UdpPattern::Poisson => {
                // Inverse-transform exponential; 1 - u is in (0, 1], so ln is finite.
                let u: f64 = self.rng.gen();
                SimDuration::from_secs_f64(-(1.0 - u).ln() * self.gap.as_secs_f64())
            }
        }
    }

    /// Sends one packet and sets the time of the next.
    fn send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let ids = self.ids;
        let p = Packet {
            flow: ids.flow,
            src: ids.src,
            dst: ids.dst,
            sport: ids.sport,
            dport: ids.dport,
            proto: Proto::Udp,
            size: self.size,
            payload: self.size.saturating_sub(28),
            class: self.class,
            ..Default::default()
        };
        self.pkts_sent += 1;
        self.bytes_sent += p.size as u64;
        let gap = self.next_gap();
        self.next = Some(now + gap);
        out.push(p);
    }
}

impl Transport for UdpEnds {
    const TITLE: &'static str = "UDP";
    const ROW_KIND: &'static str = "udp";
    const PROTO: Proto = Proto::Udp;
    const CLOCKED: bool = true;
    const ONE_WAY: bool = true;

    fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.send(now, out);
    }
    fn class(&self) -> u8 {
        self.class
    }
    fn on_packet(&mut self, side: Side, pkt: &Packet, _now: SimTime, _out: &mut Vec<Packet>) {
        if side == Side::Receiver {
            self.bytes_received += pkt.size as u64;
        }
    }
    fn on_timer(&mut self, side: Side, now: SimTime, out: &mut Vec<Packet>) {
        if side == Side::Sender && self.next.is_some_and(|t| now >= t) {
            self.send(now, out);
        }
    }
    #[inline]
    fn deadline(&self, side: Side) -> Option<SimTime> {
        match side {
            Side::Sender => self.next,
            Side::Receiver => None,
        }
    }
    /// The sink is its count of bytes received; the source is everything else.
    fn adopt(&mut self, other: &mut Self, side: Side) {
        match side {
            Side::Sender => {
                let received = self.bytes_received;
                std::mem::swap(self, other);
                (self.bytes_received, other.bytes_received) = (received, self.bytes_received);
            }
            Side::Receiver => std::mem::swap(&mut self.bytes_received, &mut other.bytes_received),
        }
    }
    /// Every packet that reaches the sink.
    #[inline(always)]
    fn is_arrival(_: &Packet) -> bool {
        true
    }
    fn delivered_bytes(&self) -> u64 {
        self.bytes_received
    }
    fn data_pkts_sent(&self) -> u64 {
        self.pkts_sent
    }
    fn sender_stats(&self) -> SenderStats {
        SenderStats { bytes_sent: self.bytes_sent, ..SenderStats::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Streams;

    fn source(pattern: UdpPattern) -> UdpEnds {
        let ids = FlowIds { flow: 3, src: 1, dst: 2, sport: 5000, dport: 5001 };
        UdpEnds::new(ids, pattern, 1500, 1e9, Streams::new(1).stream("udp", 3))
    }

    #[test]
    fn a_cbr_source_sends_one_packet_per_gap_and_the_sink_counts_it() {
        let mut u = source(UdpPattern::Cbr);
        let mut out = Vec::new();
        assert_eq!(u.deadline(Side::Sender), None, "nothing before the start");
        u.start(SimTime::ZERO, &mut out);
        let t1 = SimTime::ZERO + SimDuration::from_us(12);
        assert_eq!(u.deadline(Side::Sender), Some(t1));
        u.on_timer(Side::Sender, SimTime::ZERO + SimDuration::from_us(11), &mut out);
        assert_eq!(out.len(), 1, "not due yet");
        u.on_timer(Side::Sender, t1, &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|p| p.proto == Proto::Udp && p.size == 1500 && p.payload == 1472 && (p.src, p.dst) == (1, 2)));
        for p in &out {
            assert!(UdpEnds::is_arrival(p));
            u.on_packet(Side::Receiver, p, t1, &mut Vec::new());
        }
        assert_eq!((u.data_pkts_sent(), u.sender_stats().bytes_sent, u.delivered_bytes()), (2, 3000, 3000));
        assert_eq!(u.deadline(Side::Receiver), None);
    }

    #[test]
    fn a_poisson_source_draws_its_gaps_from_its_stream() {
        let gaps = |mut u: UdpEnds| {
            let mut out = Vec::new();
            u.start(SimTime::ZERO, &mut out);
            let mut t = SimTime::ZERO;
            let mut v = Vec::new();
            for _ in 0..1000 {
                let next = u.deadline(Side::Sender).unwrap();
                v.push(next.saturating_since(t).as_secs_f64());
                t = next;
                u.on_timer(Side::Sender, t, &mut out);
            }
            v
        };
        let (a, b) = (gaps(source(UdpPattern::Poisson)), gaps(source(UdpPattern::Poisson)));
        assert_eq!(a, b, "the same stream, the same gaps");
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!((mean - 12e-6).abs() < 1.5e-6, "mean gap {mean}");
    }
}
