//! FairQ on real frames: run `dcfair_core::fairq` on a parsed segment and carry its decisions
//! back into the frame bytes.
//!
//! Rules:
//! - The decisions are the core's ([`Fairq::on_packet`]): flow counting from SYN-ACK/FIN/RST,
//!   the window-scale option of SYN / SYN-ACK, the window of ACKs. This module only translates
//!   the fields of [`Packet`] that changed into byte edits, each with its RFC 1624 checksum
//!   update ([`crate::csum::patch`]); it never recomputes a checksum, so a segment whose
//!   checksum was right stays right and one that was wrong stays wrong by the same amount.
//! - Window field (`rwnd` changed): the 2 bytes at TCP offset 14.
//! - Window-scale option, mode `unify`: the shift byte is overwritten with the unified factor.
//!   Mode `off`: the 3 option bytes become three NOPs (kind 1), which every stack skips, so by
//!   RFC 7323 neither side scales. The header length does not change.
//! - Mode `reserved_bits`: a host-side helper (not part of this switch; Linux hosts do not have
//!   one) tags ACKs in the 4 reserved bits after the data offset with `shift + 1` (0 = no tag,
//!   so untagged Linux segments are never misread as shift 0). The switch reads the tag, lets
//!   the core use and clear it, and clears the bits in the frame.
//! - Returns what changed, so the switch can count rewrites by kind.

use crate::csum::patch;
use crate::parse::{Tcp, ETH_HLEN};
use dcfair_core::fairq::Fairq;
use dcfair_core::packet::{Packet, NO_WSCALE};
use dcfair_core::time::SimTime;

/// The byte edits made on one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Edits {
    /// The ACK's window field was lowered.
    pub window: bool,
    /// The window-scale option was rewritten (`unify`) or removed (`off`).
    pub wscale: bool,
    /// The reserved-bits tag was cleared.
    pub reserved: bool,
}

/// Decodes the `reserved_bits` tag of a segment (see the module rules).
#[inline]
pub fn reserved_tag(t: &Tcp) -> u8 {
    if t.reserved == 0 {
        NO_WSCALE
    } else {
        t.reserved - 1
    }
}

/// Runs FairQ on the segment `t` of `frame` (already parsed into `pkt`), crossing the switch from
/// FairQ port `input` to FairQ port `output`, and writes its decisions into `frame` and `pkt`.
pub fn fairq_frame(fq: &mut Fairq, now: SimTime, input: u32, output: u32, frame: &mut [u8], t: &Tcp, pkt: &mut Packet) -> Edits {
    pkt.reserved_wscale = reserved_tag(t);
    let (rwnd0, wscale0) = (pkt.rwnd, pkt.wscale);
    fq.on_packet(now, input, output, pkt);
    apply(frame, t, rwnd0, wscale0, pkt)
}

/// Writes the fields of `pkt` that differ from the frame's (`rwnd0`, `wscale0`) into `frame`.
pub fn apply(frame: &mut [u8], t: &Tcp, rwnd0: u16, wscale0: u8, pkt: &Packet) -> Edits {
    let mut e = Edits::default();
    let base = t.off;
    let csum = t.off + 16;
    if pkt.rwnd != rwnd0 {
        e.window = patch(frame, csum, base, t.off + 14, &pkt.rwnd.to_be_bytes());
    }
    if pkt.wscale != wscale0 {
        if let Some(at) = t.wscale_at {
            e.wscale = if pkt.wscale == NO_WSCALE {
                patch(frame, csum, base, at - 2, &[1, 1, 1])
            } else {
                patch(frame, csum, base, at, &[pkt.wscale])
            };
        }
    }
    if t.reserved != 0 {
        let b = frame.get(t.off + 12).copied().unwrap_or(0);
        e.reserved = patch(frame, csum, base, t.off + 12, &[b & 0xF0]);
    }
    debug_assert!(t.off >= ETH_HLEN + 20);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csum::tcp_checksum_ok;
    use crate::parse::tests::{tcp_frame, SYN_OPTS};
    use crate::parse::{parse, to_packet, Frame};
    use dcfair_core::fairq::{FairqConfig, FairqPort, WscaleMode};
    use dcfair_core::packet::flags;

    fn fq(mode: WscaleMode, unify: u8) -> Fairq {
        let cfg = FairqConfig { wscale: mode, unify_wscale: unify, ..FairqConfig::default() };
        let mut f = Fairq::new(&cfg);
        f.ports.push(FairqPort::new(&cfg, 150_000));
        f.ports.push(FairqPort::new(&cfg, 150_000));
        f
    }

    /// Parses `frame`, runs FairQ (ACK entering port 1, leaving port 0), returns edits and the reparsed segment.
    fn run(f: &mut Fairq, frame: &mut [u8]) -> (Edits, crate::parse::Tcp) {
        let Ok(Frame::Ipv4(v)) = parse(frame) else { panic!() };
        let t = v.tcp.unwrap();
        let mut p = to_packet(&v, 0, 0, 1);
        let e = fairq_frame(f, SimTime(1), 1, 0, frame, &t, &mut p);
        let Ok(Frame::Ipv4(v2)) = parse(frame) else { panic!("rewritten frame no longer parses") };
        assert!(tcp_checksum_ok(&frame[ETH_HLEN..]), "checksum broken by {e:?}");
        (e, v2.tcp.unwrap())
    }

    fn syn_ack() -> Vec<u8> {
        tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::SYN | flags::ACK, 65160, &SYN_OPTS, 0)
    }

    // --- window rewriting in each scale mode ---------------------------------------------
    #[test]
    fn off_mode_strips_the_option_and_writes_unscaled_windows() {
        let mut f = fq(WscaleMode::Off, 0);
        let (e, t) = run(&mut f, &mut syn_ack());
        assert_eq!(t.wscale_at, None, "option must be gone");
        assert_eq!(f.ports[1].flows(), 1);
        let w = f.ports[1].window().unwrap();
        // the SYN-ACK's own window (never scaled) is held to the fair share too
        assert!(e.wscale && e.window == (w < 65160));
        assert_eq!(t.window as u64, w.min(65160));
        let (e, t) = run(&mut f, &mut tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 65535, &[], 0));
        assert!(e.window);
        assert_eq!(t.window as u64, w.min(65535));
        assert_eq!(f.rewrites, 1 + u64::from(w < 65160));
    }
    #[test]
    fn unify_mode_rewrites_the_factor_and_scales_the_window() {
        let mut f = fq(WscaleMode::Unify, 4);
        let (e, t) = run(&mut f, &mut syn_ack());
        assert!(e.wscale);
        assert_eq!(t.wscale, 4);
        let w = f.ports[1].window().unwrap();
        let (e, t) = run(&mut f, &mut tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 60000, &[], 0));
        assert!(e.window);
        assert_eq!(t.window as u64, (w >> 4).max(1));
    }
    #[test]
    fn reserved_bits_mode_reads_the_tag_and_clears_it() {
        let mut f = fq(WscaleMode::ReservedBits, 0);
        let (e, _) = run(&mut f, &mut syn_ack());
        assert!(!e.wscale, "reserved_bits leaves the option alone");
        let w = f.ports[1].window().unwrap();
        // untagged ACK (what Linux sends): left alone
        let (e, t) = run(&mut f, &mut tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 60000, &[], 0));
        assert_eq!(e, Edits::default());
        assert_eq!(t.window, 60000);
        // tagged with shift 7 (nibble 8): rewritten to w >> 7 and the tag cleared
        let mut a = tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 60000, &[], 0);
        a[ETH_HLEN + 20 + 12] |= 8;
        let c = crate::csum::tcp_checksum(&a[ETH_HLEN..]).unwrap();
        a[ETH_HLEN + 36..ETH_HLEN + 38].copy_from_slice(&c.to_be_bytes());
        let (e, t) = run(&mut f, &mut a);
        assert!(e.window && e.reserved);
        assert_eq!(t.reserved, 0);
        assert_eq!(t.window as u64, (w >> 7).max(1));
    }
    #[test]
    fn a_smaller_window_is_never_raised() {
        let mut f = fq(WscaleMode::Off, 0);
        run(&mut f, &mut syn_ack());
        let (e, t) = run(&mut f, &mut tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 1000, &[], 0));
        assert_eq!(e, Edits::default());
        assert_eq!(t.window, 1000);
    }
    #[test]
    fn fin_closes_the_flow_on_both_ports() {
        let mut f = fq(WscaleMode::Off, 0);
        run(&mut f, &mut syn_ack());
        assert_eq!((f.ports[0].flows(), f.ports[1].flows()), (1, 1));
        run(&mut f, &mut tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::FIN | flags::ACK, 10, &[], 0));
        assert_eq!((f.ports[0].flows(), f.ports[1].flows()), (0, 0));
    }
}
