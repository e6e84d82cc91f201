//! The packet: a small plain struct of header fields, no payload bytes.
//!
//! Rules:
//! - A [`Packet`] is `Copy`-free but cheap to move (152 bytes). Queue disciplines hold packets
//!   by value, or small stand-ins for them (`qdisc::QPacket`: the simulator queues references to
//!   the packets in its slab); the real-packet switch keeps anything bulky (the frame bytes)
//!   outside and refers to it through the opaque [`Packet::tag`].
//! - `size` is the number of bytes the packet occupies on the wire (headers + payload) and is
//!   what serializers, byte limits and byte credits count. `payload` is the TCP/UDP payload.
//! - TCP sequence and acknowledgement numbers are absolute 64-bit byte offsets (no wrap-around in
//!   the simulator; the real-packet switch maps them to 32-bit header values). The receive window
//!   `rwnd` is the 16-bit header field *as sent*, i.e. already shifted right by the sender's
//!   window-scale factor; `wscale` carries the option on SYN / SYN-ACK only.
//! - Flow identity for hashing is the 5-tuple (`src`, `dst`, `sport`, `dport`, `proto`);
//!   [`Packet::flow_key`] packs it into one `u64` and [`hash_flow`] mixes it with a salt, so a
//!   discipline changes its hash function by changing the salt.

use crate::rng::mix64;
use crate::time::SimTime;

/// Index of a flow in a run (dense, from 0).
pub type FlowId = u32;
/// Address of a host or switch (a node id in the simulator, an IPv4 address in the switch).
pub type Addr = u32;

/// Transport protocol of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Proto {
    #[default]
    Tcp = 6,
    Udp = 17,
    /// ExpressPass credit packets.
    Credit = 253,
    /// NDP's packets (`crate::transport::ndp`): a trimming switch cuts their payload.
    Ndp = 200,
}

/// TCP flag bits, as in the header.
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// The two ECN bits of the IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    /// The codepoint of the two ECN bits of an IP header (the low two bits of `bits`).
    #[inline(always)]
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

/// One SACK block `[start, end)` in absolute byte offsets; `start == end` means unused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// Value of `Packet::via` when the packet takes the plain shortest path.
pub const NO_VIA: u32 = u32::MAX;

/// Value of `Packet::wscale` when the option is absent.
pub const NO_WSCALE: u8 = 0xFF;

/// A simulated packet: header fields only.
///
/// Laid out by hand (`repr(C)`): the fields a packet's hop through a switch reads or writes
/// (addresses, ports, size, ingress, hops, ECN, waypoint, priority) come first, in 40 bytes, so
/// that the simulator's in-flight record (`crates/sim/src/pktref.rs`) keeps them on one cache
/// line with its own; the transport's fields follow.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct Packet {
    pub dst: Addr,
    pub src: Addr,
    pub sport: u16,
    pub dport: u16,
    /// Bytes on the wire: headers + payload.
    pub size: u32,
    /// Input port at the switch currently holding the packet (set by the switch on arrival).
    pub ingress: u16,
    pub proto: Proto,
    pub ecn: Ecn,
    /// Hops taken so far.
    pub hops: u8,
    pub flags: u8,
    /// Window-scale option on SYN / SYN-ACK, `NO_WSCALE` otherwise.
    pub wscale: u8,
    /// FairQ end-host helper: the scale shift written into the 4 reserved header bits, `NO_WSCALE` if unused.
    pub reserved_wscale: u8,
    /// Equal-length routing: the switch the packet must climb to before heading to `dst`
    /// ([`NO_VIA`]: none). Cleared by that switch.
    pub via: u32,
    pub flow: FlowId,
    /// Scheduling priority for priority queues (pFabric: remaining flow bytes; lower is served first).
    pub priority: u64,
    /// Unique id within a run (for traces and tests).
    pub uid: u64,
    /// TCP: first payload byte (absolute offset; SYN and FIN consume one sequence number each).
    pub seq: u64,
    /// TCP: next byte expected by the sender of this packet (valid with `flags::ACK`).
    pub ack: u64,
    /// Transport payload bytes.
    pub payload: u32,
    /// TCP window field as in the header (scaled down by the sender's window-scale shift).
    pub rwnd: u16,
    /// The 802.1p priority (traffic class) the packet travels in, 0 to 7: PFC pauses a class
    /// of a link, not the link (`crates/sim/src/pfc.rs`). 0 by default; a RoCE transport sets
    /// its lossless class. Sits in what was padding after `rwnd`: the packet's size is the same.
    pub class: u8,
    /// In-band telemetry this packet asks for or carries (`crate::telemetry`: `NONE`, `COLLECT`,
    /// `ECHO`). In the last byte of padding after `rwnd`.
    pub int: u8,
    /// Opaque to every mechanism: the environment's handle (e.g. a frame buffer index).
    pub tag: u32,
    /// Time the packet was created by its transport (for delay measurement).
    pub created: SimTime,
    /// TCP timestamp option: value and echo (RFC 7323), in the sender's clock (here: sim time).
    pub ts_val: SimTime,
    pub ts_ecr: SimTime,
    /// SACK blocks (RFC 2018), most recent first.
    pub sack: [SackBlock; 3],
}

impl Default for Packet {
    fn default() -> Packet {
        Packet {
            uid: 0,
            flow: 0,
            src: 0,
            dst: 0,
            sport: 0,
            dport: 0,
            proto: Proto::Tcp,
            size: 0,
            payload: 0,
            seq: 0,
            ack: 0,
            flags: 0,
            rwnd: 0,
            class: 0,
            int: 0,
            wscale: NO_WSCALE,
            reserved_wscale: NO_WSCALE,
            ecn: Ecn::NotEct,
            sack: [SackBlock::default(); 3],
            priority: 0,
            ingress: 0,
            hops: 0,
            created: SimTime::ZERO,
            ts_val: SimTime::ZERO,
            ts_ecr: SimTime::ZERO,
            tag: 0,
            via: NO_VIA,
        }
    }
}

impl Packet {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// A TCP segment that carries payload (or is a pure SYN/FIN, which are not data).
    #[inline]
    pub fn is_data(&self) -> bool {
        self.payload > 0
    }
    /// A pure TCP acknowledgement: ACK flag, no payload, no SYN/FIN.
    #[inline]
    pub fn is_pure_ack(&self) -> bool {
        self.proto == Proto::Tcp
            && self.payload == 0
            && self.has(flags::ACK)
            && !self.has(flags::SYN | flags::FIN | flags::RST)
    }
    /// The 5-tuple packed into 64 bits (addresses folded, ports and protocol kept).
    #[inline]
    pub fn flow_key(&self) -> u64 {
        flow_key_of(self.src, self.dst, self.sport, self.dport, self.proto)
    }
    /// Sequence number just past this segment (SYN and FIN count one).
    #[inline]
    pub fn seq_end(&self) -> u64 {
        self.seq + self.payload as u64 + self.has(flags::SYN) as u64 + self.has(flags::FIN) as u64
    }
}

/// [`Packet::flow_key`] from the 5-tuple's fields (for stand-ins that carry them, not the packet).
#[inline]
pub fn flow_key_of(src: Addr, dst: Addr, sport: u16, dport: u16, proto: Proto) -> u64 {
    let a = (src as u64) << 32 | dst as u64;
    let p = (sport as u64) << 24 | (dport as u64) << 8 | proto as u64;
    mix64(a) ^ p
}

/// A keyed hash of a flow key: changing `salt` draws a new, independent hash function.
#[inline]
pub fn hash_flow(flow_key: u64, salt: u64) -> u64 {
    FlowHasher::new(salt).hash(flow_key)
}

/// [`hash_flow`] with its salt mixed once: the same values, one `mix64` per packet instead of
/// two, for a discipline that hashes every packet with one salt.
#[derive(Clone, Copy, Debug)]
pub struct FlowHasher {
    mixed_salt: u64,
}

impl FlowHasher {
    pub fn new(salt: u64) -> FlowHasher {
        FlowHasher { mixed_salt: mix64(salt) }
    }
    #[inline]
    pub fn hash(&self, flow_key: u64) -> u64 {
        mix64(flow_key ^ self.mixed_salt)
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() == 152, "a packet is 152 bytes (pktref.rs, engine.rs)");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_key_separates_directions_and_ports() {
        let a = Packet { src: 1, dst: 2, sport: 10, dport: 20, ..Default::default() };
        let b = Packet { src: 2, dst: 1, sport: 20, dport: 10, ..Default::default() };
        let c = Packet { src: 1, dst: 2, sport: 11, dport: 20, ..Default::default() };
        assert_ne!(a.flow_key(), b.flow_key());
        assert_ne!(a.flow_key(), c.flow_key());
    }
    #[test]
    fn ecn_from_bits_inverts_the_codepoint() {
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(e as u8), e);
            assert_eq!(Ecn::from_bits(e as u8 | 0xfc), e, "only the low two bits count");
        }
    }
    #[test]
    fn a_flow_hasher_gives_hash_flow_values() {
        for salt in [0, 1, 7, u64::MAX] {
            let h = FlowHasher::new(salt);
            for key in [0, 42, 1 << 40, u64::MAX] {
                assert_eq!(h.hash(key), mix64(key ^ mix64(salt)));
                assert_eq!(h.hash(key), hash_flow(key, salt));
            }
        }
    }
    #[test]
    fn salt_changes_the_hash() {
        assert_ne!(hash_flow(42, 1), hash_flow(42, 2));
        assert_eq!(hash_flow(42, 1), hash_flow(42, 1));
    }
    #[test]
    fn syn_and_fin_consume_sequence_space() {
        let p = Packet { seq: 100, payload: 10, flags: flags::FIN | flags::ACK, ..Default::default() };
        assert_eq!(p.seq_end(), 111);
    }
}
