//! The fuzz harness body: one input drives the parser and the FairQ rewriter.
//!
//! Rules:
//! - [`fuzz_one`] must never panic on any byte string; `crates/switch/fuzz` (cargo-fuzz,
//!   libFuzzer) calls it, and so does the corpus test below and `tests/fuzz_corpus.rs`, so the
//!   harness is compiled and exercised by `cargo test` even where cargo-fuzz cannot build.
//! - Beyond "no panic", it checks two properties: a frame the parser accepts and the rewriter
//!   edits still parses to the same addresses, ports and flags; and a segment whose TCP checksum
//!   was right before the edits is right after them (RFC 1624 done right).
//! - The first input byte picks the window-scale mode and the FairQ ports' state (flows
//!   counted or not), the rest is the frame.

use crate::csum::tcp_checksum_ok;
use crate::parse::{parse, to_packet, Frame, ETH_HLEN};
use crate::rewrite::fairq_frame;
use dcfair_core::fairq::{Fairq, FairqConfig, FairqPort, WscaleMode};
use dcfair_core::time::SimTime;

/// Runs one fuzz input. Panics only if a property of the module rules is broken.
pub fn fuzz_one(data: &[u8]) {
    let Some((&sel, frame)) = data.split_first() else { return };
    let _ = parse(frame);
    let mode = match sel % 3 {
        0 => WscaleMode::ReservedBits,
        1 => WscaleMode::Unify,
        _ => WscaleMode::Off,
    };
    let cfg = FairqConfig { wscale: mode, unify_wscale: (sel >> 2) % 15, ..FairqConfig::default() };
    let mut fq = Fairq::new(&cfg);
    fq.ports.push(FairqPort::new(&cfg, 150_000));
    fq.ports.push(FairqPort::new(&cfg, 150_000));
    if sel & 0x40 != 0 {
        fq.ports[0].open(SimTime::ZERO);
        fq.ports[1].open(SimTime::ZERO);
    }
    let mut buf = frame.to_vec();
    let Ok(Frame::Ipv4(v)) = parse(&buf) else { return };
    let Some(t) = v.tcp else { return };
    let ok_before = tcp_checksum_ok(&buf[ETH_HLEN..]);
    let mut pkt = to_packet(&v, 1, 0, 1);
    fairq_frame(&mut fq, SimTime(1), 1, 0, &mut buf, &t, &mut pkt);
    let Ok(Frame::Ipv4(w)) = parse(&buf) else { panic!("a rewritten frame no longer parses") };
    assert_eq!((w.src, w.dst, w.sport, w.dport, w.total_len), (v.src, v.dst, v.sport, v.dport, v.total_len));
    assert_eq!(w.tcp.map(|t| t.flags), Some(t.flags));
    if ok_before {
        assert!(tcp_checksum_ok(&buf[ETH_HLEN..]), "a rewrite broke a valid checksum");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::tests::{bad_corpus, tcp_frame, SYN_OPTS};
    use dcfair_core::packet::flags;
    use rand::{Rng, SeedableRng};

    /// Good frames (SYN, SYN-ACK, ACKs with and without the reserved tag) under every mode, then
    /// random mutations of them: the harness must hold on all.
    #[test]
    fn harness_holds_on_corpus_and_mutations() {
        let mut seeds: Vec<Vec<u8>> = bad_corpus().into_iter().map(|c| c.1).collect();
        seeds.push(tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::SYN, 64240, &SYN_OPTS, 0));
        seeds.push(tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::SYN | flags::ACK, 65160, &SYN_OPTS, 0));
        seeds.push(tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 65535, &[], 0));
        let mut tagged = tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 65535, &[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2], 0);
        tagged[ETH_HLEN + 32] |= 0x08;
        seeds.push(tagged);
        let mut rng = dcfair_core::rng::Rng::seed_from_u64(99);
        let mut runs = 0;
        for s in &seeds {
            for sel in 0..=255u8 {
                let mut d = vec![sel];
                d.extend_from_slice(s);
                fuzz_one(&d);
                runs += 1;
            }
            for _ in 0..2000 {
                let mut d = vec![rng.gen::<u8>()];
                d.extend_from_slice(s);
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(0..d.len());
                    d[i] = rng.gen();
                }
                if rng.gen_bool(0.2) {
                    let n = rng.gen_range(0..d.len());
                    d.truncate(n);
                }
                fuzz_one(&d);
                runs += 1;
            }
        }
        assert!(runs > 10_000);
    }
}
