//! Frame parser: Ethernet II -> ARP or IPv4 -> TCP/UDP, into offsets and a core `Packet`.
//!
//! Rules:
//! - [`parse`] never panics and never reads out of bounds, whatever the bytes: every offset is
//!   checked against the slice before use (the fuzz target and the corpus test hold it to that).
//! - It copies nothing: the result is a few header fields and the offsets of the fields the
//!   switch may edit (TCP window, window-scale option, reserved bits, checksum).
//! - Accepted: Ethernet II frames carrying ARP (flooded by the switch) or IPv4. Refused, each
//!   with its own [`Malformed`] reason: empty or runt frames, 802.1Q/802.1ad tags, IPv6, other
//!   EtherTypes, truncated ARP, IPv4 with a wrong version, a header length below 20 bytes or
//!   beyond the frame, a total length below the header or beyond the frame, and TCP/UDP
//!   segments whose header does not fit. The caller adds `oversize` for frames larger than its
//!   buffers.
//! - IPv4 fragments are valid IPv4: they are forwarded by address, with no transport fields
//!   (ports 0), and FairQ never touches them. Linux TCP sets DF, so they do not occur in TCP runs.
//! - The IPv4 total length bounds the segment (Ethernet pads short frames to 60 bytes; the
//!   padding is not payload). The header checksums are not verified (the receiving host does).
//! - TCP options: the window-scale option (kind 3) is located; a malformed option list (a
//!   length below 2 or past the header) ends the scan without error, as a host would ignore it.
//! - Mapping to [`Packet`]: `src`/`dst` are the IPv4 addresses as `u32`, `size` is the IPv4
//!   total length (the bytes the simulator counts, so rates and byte limits mean the same), `seq`
//!   and `ack` are the raw 32-bit header values, `rwnd` the raw window field. Protocols other
//!   than TCP and UDP (ICMP, ...) are queued as `Proto::Udp` with ports 0: `dcfair-core` knows
//!   only TCP, UDP and ExpressPass credits, and no discipline treats UDP specially beyond
//!   hashing the 5-tuple. An ARP frame becomes a `Proto::Udp` packet with addresses 0.

use dcfair_core::packet::{flags, Packet, Proto, NO_WSCALE};

/// Length of the Ethernet II header.
pub const ETH_HLEN: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_QINQ: u16 = 0x88A8;

/// Why a frame was refused. The names are the keys of `malformed` in the stats file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Malformed {
    ZeroLength = 0,
    RuntEthernet,
    Vlan,
    Ipv6,
    OtherEthertype,
    TruncatedArp,
    TruncatedIp,
    BadVersion,
    BadIhl,
    BadTotalLength,
    TruncatedTcp,
    BadTcpOffset,
    TruncatedUdp,
    /// Larger than the switch's frame buffers (set by the caller, not by [`parse`]).
    Oversize,
}

impl Malformed {
    pub const ALL: [Malformed; 14] = [
        Malformed::ZeroLength,
        Malformed::RuntEthernet,
        Malformed::Vlan,
        Malformed::Ipv6,
        Malformed::OtherEthertype,
        Malformed::TruncatedArp,
        Malformed::TruncatedIp,
        Malformed::BadVersion,
        Malformed::BadIhl,
        Malformed::BadTotalLength,
        Malformed::TruncatedTcp,
        Malformed::BadTcpOffset,
        Malformed::TruncatedUdp,
        Malformed::Oversize,
    ];
    pub const COUNT: usize = Self::ALL.len();
    pub fn as_str(self) -> &'static str {
        match self {
            Malformed::ZeroLength => "zero_length",
            Malformed::RuntEthernet => "runt_ethernet",
            Malformed::Vlan => "vlan",
            Malformed::Ipv6 => "ipv6",
            Malformed::OtherEthertype => "other_ethertype",
            Malformed::TruncatedArp => "truncated_arp",
            Malformed::TruncatedIp => "truncated_ip",
            Malformed::BadVersion => "bad_version",
            Malformed::BadIhl => "bad_ihl",
            Malformed::BadTotalLength => "bad_total_length",
            Malformed::TruncatedTcp => "truncated_tcp",
            Malformed::BadTcpOffset => "bad_tcp_offset",
            Malformed::TruncatedUdp => "truncated_udp",
            Malformed::Oversize => "oversize",
        }
    }
}

/// The TCP header fields the switch reads, and where the editable ones are (frame offsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcp {
    /// Offset of the TCP header in the frame.
    pub off: usize,
    /// TCP header length (data offset * 4).
    pub hlen: usize,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// The 4 bits after the data offset (reserved; FairQ's `reserved_bits` helper uses them).
    pub reserved: u8,
    /// Offset in the frame of the window-scale option's shift byte, if the option is present.
    pub wscale_at: Option<usize>,
    pub wscale: u8,
    pub payload: u32,
}

/// An IPv4 packet's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    pub src: u32,
    pub dst: u32,
    pub proto: u8,
    /// IPv4 total length.
    pub total_len: u16,
    pub ihl: usize,
    pub ecn: u8,
    /// More-fragments set or a non-zero fragment offset.
    pub fragment: bool,
    pub sport: u16,
    pub dport: u16,
    pub tcp: Option<Tcp>,
}

/// What a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Arp,
    Ipv4(Ipv4),
}

#[inline]
fn be16(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]))
}
#[inline]
fn be32(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_be_bytes([*b.get(i)?, *b.get(i + 1)?, *b.get(i + 2)?, *b.get(i + 3)?]))
}

/// Parses one Ethernet frame (without FCS).
pub fn parse(f: &[u8]) -> Result<Frame, Malformed> {
    if f.is_empty() {
        return Err(Malformed::ZeroLength);
    }
    let Some(ethertype) = be16(f, 12) else { return Err(Malformed::RuntEthernet) };
    match ethertype {
        ETHERTYPE_IPV4 => parse_ipv4(f).map(Frame::Ipv4),
        ETHERTYPE_ARP => {
            // Ethernet/IPv4 ARP body is 28 bytes
            if f.len() < ETH_HLEN + 28 {
                Err(Malformed::TruncatedArp)
            } else {
                Ok(Frame::Arp)
            }
        }
        ETHERTYPE_IPV6 => Err(Malformed::Ipv6),
        ETHERTYPE_VLAN | ETHERTYPE_QINQ => Err(Malformed::Vlan),
        _ => Err(Malformed::OtherEthertype),
    }
}

fn parse_ipv4(f: &[u8]) -> Result<Ipv4, Malformed> {
    let ip = &f[ETH_HLEN..];
    if ip.len() < 20 {
        return Err(Malformed::TruncatedIp);
    }
    if ip[0] >> 4 != 4 {
        return Err(Malformed::BadVersion);
    }
    let ihl = (ip[0] & 0x0F) as usize * 4;
    if ihl < 20 || ihl > ip.len() {
        return Err(Malformed::BadIhl);
    }
    let total_len = u16::from_be_bytes([ip[2], ip[3]]);
    let total = total_len as usize;
    if total < ihl || total > ip.len() {
        return Err(Malformed::BadTotalLength);
    }
    let frag = u16::from_be_bytes([ip[6], ip[7]]);
    let fragment = frag & 0x3FFF != 0; // MF bit or offset
    let proto = ip[9];
    let mut v = Ipv4 {
        src: u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]]),
        dst: u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]),
        proto,
        total_len,
        ihl,
        ecn: ip[1] & 0x03,
        fragment,
        sport: 0,
        dport: 0,
        tcp: None,
    };
    if fragment {
        return Ok(v);
    }
    let seg = &ip[ihl..total];
    match proto {
        6 => {
            if seg.len() < 20 {
                return Err(Malformed::TruncatedTcp);
            }
            let hlen = (seg[12] >> 4) as usize * 4;
            if hlen < 20 {
                return Err(Malformed::BadTcpOffset);
            }
            if hlen > seg.len() {
                return Err(Malformed::TruncatedTcp);
            }
            let off = ETH_HLEN + ihl;
            let (wscale_at, wscale) = find_wscale(&seg[20..hlen]).map_or((None, NO_WSCALE), |(i, s)| (Some(off + 20 + i), s));
            v.sport = u16::from_be_bytes([seg[0], seg[1]]);
            v.dport = u16::from_be_bytes([seg[2], seg[3]]);
            v.tcp = Some(Tcp {
                off,
                hlen,
                seq: be32(seg, 4).unwrap_or(0),
                ack: be32(seg, 8).unwrap_or(0),
                flags: seg[13],
                window: u16::from_be_bytes([seg[14], seg[15]]),
                reserved: seg[12] & 0x0F,
                wscale_at,
                wscale,
                payload: (seg.len() - hlen) as u32,
            });
        }
        17 => {
            if seg.len() < 8 {
                return Err(Malformed::TruncatedUdp);
            }
            v.sport = u16::from_be_bytes([seg[0], seg[1]]);
            v.dport = u16::from_be_bytes([seg[2], seg[3]]);
        }
        _ => {}
    }
    Ok(v)
}

/// The window-scale option in a TCP option list: (offset of its shift byte, shift).
fn find_wscale(opts: &[u8]) -> Option<(usize, u8)> {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => return None, // end of option list
            1 => i += 1,      // no-operation
            kind => {
                let len = *opts.get(i + 1)? as usize;
                if len < 2 || i + len > opts.len() {
                    return None;
                }
                if kind == 3 && len == 3 {
                    return Some((i + 2, opts[i + 2]));
                }
                i += len;
            }
        }
    }
    None
}

/// The core packet for an IPv4 frame (see the module rules for the mapping).
pub fn to_packet(v: &Ipv4, uid: u64, tag: u32, ingress: u16) -> Packet {
    let mut p = Packet {
        uid,
        src: v.src,
        dst: v.dst,
        sport: v.sport,
        dport: v.dport,
        proto: if v.proto == 6 && v.tcp.is_some() { Proto::Tcp } else { Proto::Udp },
        size: v.total_len as u32,
        tag,
        ingress,
        ecn: dcfair_core::packet::Ecn::from_bits(v.ecn),
        ..Default::default()
    };
    if let Some(t) = &v.tcp {
        p.seq = t.seq as u64;
        p.ack = t.ack as u64;
        p.flags = t.flags;
        p.rwnd = t.window;
        p.wscale = if t.flags & flags::SYN != 0 { t.wscale } else { NO_WSCALE };
        p.payload = t.payload;
    } else {
        p.payload = (v.total_len as usize).saturating_sub(v.ihl + 8) as u32;
    }
    p.flow = (p.flow_key() & 0xFFFF_FFFF) as u32;
    p
}

/// The core packet for a frame that is not IPv4 (ARP): size is the frame minus its header.
pub fn to_packet_l2(len: usize, uid: u64, tag: u32, ingress: u16) -> Packet {
    Packet { uid, proto: Proto::Udp, size: len.saturating_sub(ETH_HLEN) as u32, tag, ingress, ..Default::default() }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet/IPv4/TCP frame with a correct TCP checksum (for tests across the crate).
    pub fn tcp_frame(src: [u8; 4], dst: [u8; 4], flags: u8, window: u16, options: &[u8], payload: usize) -> Vec<u8> {
        assert!(options.len() % 4 == 0);
        let tcp_len = 20 + options.len() + payload;
        let total = 20 + tcp_len;
        let mut f = vec![0u8; ETH_HLEN + total];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut f[ETH_HLEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let ipc = !crate::csum::fold(crate::csum::add_words(&ip[..20], 0));
        ip[10..12].copy_from_slice(&ipc.to_be_bytes());
        let t = &mut ip[20..];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&5201u16.to_be_bytes());
        t[4..8].copy_from_slice(&0x1234_5678u32.to_be_bytes());
        t[8..12].copy_from_slice(&0x9ABC_DEF0u32.to_be_bytes());
        t[12] = (((20 + options.len()) / 4) as u8) << 4;
        t[13] = flags;
        t[14..16].copy_from_slice(&window.to_be_bytes());
        t[20..20 + options.len()].copy_from_slice(options);
        for (i, b) in t[20 + options.len()..].iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        let c = crate::csum::tcp_checksum(&f[ETH_HLEN..]).unwrap();
        f[ETH_HLEN + 36..ETH_HLEN + 38].copy_from_slice(&c.to_be_bytes());
        f
    }

    /// SYN options as Linux sends them: MSS, SACK-permitted, timestamps, NOP, window scale 7.
    pub const SYN_OPTS: [u8; 20] = [2, 4, 5, 0xB4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];

    // --- good frames ------------------------------------------------------------------
    #[test]
    fn parses_a_syn_with_window_scale() {
        let f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::SYN, 64240, &SYN_OPTS, 0);
        let Ok(Frame::Ipv4(v)) = parse(&f) else { panic!() };
        let t = v.tcp.unwrap();
        assert_eq!((v.src, v.dst), (0x0A00_0001, 0x0A00_0002));
        assert_eq!((t.window, t.wscale, t.payload, t.hlen), (64240, 7, 0, 40));
        assert_eq!(f[t.wscale_at.unwrap()], 7);
        let p = to_packet(&v, 9, 3, 1);
        assert_eq!((p.proto, p.size, p.wscale, p.rwnd, p.sport, p.dport), (Proto::Tcp, 60, 7, 64240, 40000, 5201));
    }
    #[test]
    fn padding_is_not_payload() {
        let mut f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 0);
        f.resize(60, 0); // Ethernet minimum
        let Ok(Frame::Ipv4(v)) = parse(&f) else { panic!() };
        assert_eq!(v.tcp.unwrap().payload, 0);
        assert_eq!(to_packet(&v, 0, 0, 0).size, 40);
    }
    #[test]
    fn bad_option_list_is_not_an_error() {
        let f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::SYN, 1, &[3, 9, 7, 0], 0);
        let Ok(Frame::Ipv4(v)) = parse(&f) else { panic!() };
        assert_eq!(v.tcp.unwrap().wscale_at, None);
    }

    // --- the corpus of bad frames -----------------------------------------------------
    /// Bad frames and the reason each must be refused with.
    pub fn bad_corpus() -> Vec<(&'static str, Vec<u8>, Malformed)> {
        let good = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &SYN_OPTS, 100);
        let mut v = vec![
            ("empty", vec![], Malformed::ZeroLength),
            ("one byte", vec![0x45], Malformed::RuntEthernet),
            ("13 bytes", good[..13].to_vec(), Malformed::RuntEthernet),
            ("ethernet only", good[..14].to_vec(), Malformed::TruncatedIp),
            ("ip header cut", good[..14 + 19].to_vec(), Malformed::TruncatedIp),
            ("tcp header cut", { let mut f = good[..14 + 30].to_vec(); f[16..18].copy_from_slice(&30u16.to_be_bytes()); f }, Malformed::TruncatedTcp),
            ("frame shorter than total length", good[..good.len() - 1].to_vec(), Malformed::BadTotalLength),
        ];
        let mut f = good.clone();
        f[14] = 0x44; // IHL 16 bytes
        v.push(("ihl 4", f, Malformed::BadIhl));
        let mut f = good.clone();
        f[14] = 0x4F; // IHL 60 bytes, more than the ... well, fits; make total smaller
        f[16..18].copy_from_slice(&40u16.to_be_bytes());
        v.push(("ihl beyond total", f, Malformed::BadTotalLength));
        let mut f = good[..14 + 24].to_vec();
        f[14] = 0x4F;
        v.push(("ihl beyond frame", f, Malformed::BadIhl));
        let mut f = good.clone();
        f[14] = 0x65;
        v.push(("version 6 in an ipv4 ethertype", f, Malformed::BadVersion));
        let mut f = good.clone();
        f[16..18].copy_from_slice(&10u16.to_be_bytes());
        v.push(("total length below header", f, Malformed::BadTotalLength));
        let mut f = good.clone();
        f[14 + 20 + 12] = 0x40; // data offset 16 bytes
        v.push(("tcp data offset 4", f, Malformed::BadTcpOffset));
        let mut f = good[..14 + 20 + 24].to_vec();
        f[16..18].copy_from_slice(&44u16.to_be_bytes());
        f[14 + 20 + 12] = 0xF0; // 60-byte header in a 24-byte segment
        v.push(("tcp options beyond segment", f, Malformed::TruncatedTcp));
        let mut f = good[..14 + 20 + 4].to_vec();
        f[16..18].copy_from_slice(&24u16.to_be_bytes());
        f[14 + 9] = 17;
        v.push(("udp header cut", f, Malformed::TruncatedUdp));
        let mut f = good.clone();
        f[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        v.push(("ipv6", f, Malformed::Ipv6));
        let mut f = good.clone();
        f[12..14].copy_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
        v.push(("802.1Q", f, Malformed::Vlan));
        let mut f = good.clone();
        f[12..14].copy_from_slice(&ETHERTYPE_QINQ.to_be_bytes());
        v.push(("802.1ad", f, Malformed::Vlan));
        let mut f = good.clone();
        f[12..14].copy_from_slice(&0x88CCu16.to_be_bytes()); // LLDP
        v.push(("lldp", f, Malformed::OtherEthertype));
        let mut f = good[..14 + 20].to_vec();
        f[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
        v.push(("arp cut", f, Malformed::TruncatedArp));
        v
    }

    #[test]
    fn corpus_of_bad_frames_is_refused_with_its_reason() {
        for (name, f, want) in bad_corpus() {
            assert_eq!(parse(&f), Err(want), "{name}");
            // every prefix of a bad frame is refused or parsed, never a panic
            for n in 0..f.len() {
                let _ = parse(&f[..n]);
            }
        }
    }
    #[test]
    fn fragments_are_forwarded_without_transport_fields() {
        let mut f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 100);
        f[14 + 6] = 0x20; // MF
        let Ok(Frame::Ipv4(v)) = parse(&f) else { panic!() };
        assert!(v.fragment && v.tcp.is_none() && v.sport == 0);
        f[14 + 6] = 0x00;
        f[14 + 7] = 0x10; // offset 16*8
        let Ok(Frame::Ipv4(v)) = parse(&f) else { panic!() };
        assert!(v.fragment && v.tcp.is_none());
        assert_eq!(to_packet(&v, 0, 0, 0).proto, Proto::Udp);
    }
    #[test]
    fn every_truncation_of_a_good_frame_is_refused_not_misread() {
        let good = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::SYN, 100, &SYN_OPTS, 10);
        for n in 0..good.len() {
            assert!(parse(&good[..n]).is_err(), "truncated to {n} bytes was accepted");
        }
        assert!(parse(&good).is_ok());
    }
    #[test]
    fn random_bytes_never_panic() {
        use rand::{Rng, SeedableRng};
        let mut rng = dcfair_core::rng::Rng::seed_from_u64(7);
        let mut buf = vec![0u8; 200];
        for i in 0..20_000 {
            let n = rng.gen_range(0..buf.len());
            rng.fill(&mut buf[..n]);
            if i % 2 == 0 && n >= 14 {
                buf[12] = 0x08; // mostly IPv4, to get deep into the parser
                buf[13] = 0x00;
                if n > 14 {
                    buf[14] = 0x40 | (buf[14] & 0x0F);
                }
            }
            let _ = parse(&buf[..n]);
        }
    }
}
