//! Tests of the receiver: immediate and delayed ACKs, the out-of-order buffer, FIN, window scaling,
//! SACK blocks, timestamps and the ECN echo (RFC 3168, DCTCP).

use super::*;
use crate::tcp::testnet::IDS;

const MSS: u32 = 1460;

fn nohs() -> TcpConfig {
    TcpConfig { handshake: false, ..Default::default() }
}
fn t(us: u64) -> SimTime {
    SimTime(us * 1_000_000)
}
/// A data segment as the sender would emit it.
fn seg(seq: u64, len: u32) -> Packet {
    Packet {
        flow: IDS.flow,
        src: IDS.src,
        dst: IDS.dst,
        sport: IDS.sport,
        dport: IDS.dport,
        seq,
        payload: len,
        size: len + 40,
        flags: flags::ACK,
        ..Packet::default()
    }
}
fn fin(mut p: Packet) -> Packet {
    p.flags |= flags::FIN;
    p
}
/// Feeds `p` at `now`; returns the ACK numbers emitted.
fn feed(r: &mut TcpReceiver, p: &Packet, now: SimTime) -> Vec<u64> {
    let mut out = Vec::new();
    r.on_packet(p, now, &mut out);
    out.iter().map(|a| a.ack).collect()
}

// --- cumulative ACKs ------------------------------------------------------------------------
#[test]
fn each_in_order_segment_is_acked_with_the_whole_buffer() {
    let mut r = TcpReceiver::new(&nohs(), IDS);
    let mut out = Vec::new();
    r.on_packet(&seg(0, MSS), t(5), &mut out);
    assert_eq!(out.len(), 1);
    let a = &out[0];
    assert_eq!((a.ack, a.seq, a.flags), (1460, 0, flags::ACK));
    assert_eq!((a.src, a.dst, a.sport, a.dport, a.flow), (IDS.dst, IDS.src, IDS.dport, IDS.sport, IDS.flow));
    assert_eq!((a.size, a.payload, a.rwnd), (40, 0, 65535));
    assert_eq!((a.uid, a.created, a.ts_val), (0, t(5), t(5)));
    assert_eq!(r.delivered_bytes(), 1460);
}

#[test]
fn out_of_order_segments_get_dupacks_and_the_fill_jumps_the_ack() {
    let mut r = TcpReceiver::new(&nohs(), IDS);
    assert_eq!(feed(&mut r, &seg(0, MSS), t(0)), [1460]);
    assert_eq!(feed(&mut r, &seg(2920, MSS), t(1)), [1460]);
    assert_eq!(feed(&mut r, &seg(5840, MSS), t(2)), [1460]);
    assert_eq!(r.ooo_bytes(), 2920);
    assert_eq!(r.delivered_bytes(), 1460);
    // filling the first hole pulls in the next buffered segment only
    assert_eq!(feed(&mut r, &seg(1460, MSS), t(3)), [4380]);
    assert_eq!(feed(&mut r, &seg(4380, MSS), t(4)), [7300]);
    assert_eq!(r.delivered_bytes(), 7300);
    assert_eq!(r.ooo_bytes(), 0);
    assert_eq!(r.stats().ooo_segments, 2);
}

#[test]
fn duplicates_are_acked_but_delivered_once() {
    let mut r = TcpReceiver::new(&nohs(), IDS);
    feed(&mut r, &seg(0, MSS), t(0));
    assert_eq!(feed(&mut r, &seg(0, MSS), t(1)), [1460]);
    // a buffered segment arriving twice is not counted twice either
    feed(&mut r, &seg(2920, MSS), t(2));
    feed(&mut r, &seg(2920, MSS), t(3));
    assert_eq!(feed(&mut r, &seg(1460, MSS), t(4)), [4380]);
    assert_eq!(r.delivered_bytes(), 4380);
    assert_eq!(r.stats().dup_segments, 1);
    // partly old, partly new (a resend with other boundaries)
    assert_eq!(feed(&mut r, &seg(4000, 1000), t(5)), [5000]);
    assert_eq!(r.delivered_bytes(), 5000);
}

#[test]
fn payload_beyond_the_window_is_trimmed() {
    let c = TcpConfig { rcv_buf_bytes: 4000, window_scaling: false, ..nohs() };
    let mut r = TcpReceiver::new(&c, IDS);
    feed(&mut r, &seg(3000, MSS), t(0)); // only [3000, 4000) fits
    assert_eq!(r.ooo_bytes(), 1000);
    assert_eq!(feed(&mut r, &seg(0, 3000), t(1)), [4000]);
    assert_eq!(feed(&mut r, &seg(4000, MSS), t(2)), [5460]);
}

#[test]
fn interval_set_merges_overlaps_and_neighbours() {
    let mut s = IntervalSet::default();
    s.insert(10, 20);
    s.insert(30, 40);
    s.insert(50, 60);
    s.insert(20, 30); // touches both sides
    assert_eq!(s.v, [(10, 40), (50, 60)]);
    s.insert(35, 55);
    assert_eq!(s.v, [(10, 60)]);
    s.insert(0, 5);
    s.insert(70, 80);
    s.insert(5, 5); // empty: ignored
    assert_eq!(s.v, [(0, 5), (10, 60), (70, 80)]);
    assert_eq!(s.take_prefix(3), 5);
    assert_eq!(s.v, [(10, 60), (70, 80)]);
    assert_eq!(s.take_prefix(8), 8);
    assert_eq!(s.take_prefix(10), 60);
    assert_eq!(s.bytes(), 10);
}

// --- delayed ACKs ---------------------------------------------------------------------------
#[test]
fn delayed_acks_cover_two_segments_or_wait_for_the_timer() {
    let c = TcpConfig { delayed_ack: true, ..nohs() };
    let mut r = TcpReceiver::new(&c, IDS);
    assert!(feed(&mut r, &seg(0, MSS), t(0)).is_empty());
    assert_eq!(r.next_deadline(), Some(t(40_000)));
    assert_eq!(feed(&mut r, &seg(1460, MSS), t(10)), [2920]);
    assert_eq!(r.next_deadline(), None);
    assert!(feed(&mut r, &seg(2920, MSS), t(20)).is_empty());
    let mut out = Vec::new();
    r.on_timer(t(40_019), &mut out); // early: nothing
    assert!(out.is_empty());
    r.on_timer(t(40_020), &mut out);
    assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), [4380]);
    assert_eq!(r.next_deadline(), None);
    r.on_timer(t(50_000), &mut out); // spurious: nothing
    assert_eq!(out.len(), 1);
}

#[test]
fn quick_acks_answer_the_first_segments_at_once_then_delay() {
    let c = TcpConfig { delayed_ack: true, quickack_segments: 2, ..nohs() };
    let mut r = TcpReceiver::new(&c, IDS);
    assert_eq!(feed(&mut r, &seg(0, MSS), t(0)), [1460]);
    assert_eq!(feed(&mut r, &seg(1460, MSS), t(10)), [2920]);
    // the third is delayed as usual: one ACK per two segments or the timer
    assert!(feed(&mut r, &seg(2920, MSS), t(20)).is_empty());
    assert_eq!(r.next_deadline(), Some(t(40_020)));
    assert_eq!(feed(&mut r, &seg(4380, MSS), t(30)), [5840]);
    // out-of-order segments are not counted: they are acknowledged at once anyway
    let mut r = TcpReceiver::new(&c, IDS);
    assert_eq!(feed(&mut r, &seg(1460, MSS), t(0)), [0]);
    assert_eq!(feed(&mut r, &seg(0, MSS), t(1)), [2920]);
    assert_eq!(feed(&mut r, &seg(2920, MSS), t(2)), [4380]);
    assert!(feed(&mut r, &seg(4380, MSS), t(3)).is_empty());
}

#[test]
fn delayed_acks_are_immediate_for_gaps_fills_duplicates_and_fin() {
    let c = TcpConfig { delayed_ack: true, ..nohs() };
    let mut r = TcpReceiver::new(&c, IDS);
    assert!(feed(&mut r, &seg(0, MSS), t(0)).is_empty());
    assert_eq!(feed(&mut r, &seg(2920, MSS), t(1)), [1460]); // out of order
    assert_eq!(feed(&mut r, &seg(1460, MSS), t(2)), [4380]); // fills the gap
    assert_eq!(feed(&mut r, &seg(0, MSS), t(3)), [4380]); // duplicate
    assert_eq!(feed(&mut r, &fin(seg(4380, 100)), t(4)), [4481]); // FIN
    assert_eq!(r.next_deadline(), None);
}

#[test]
fn small_segments_count_by_bytes() {
    let c = TcpConfig { delayed_ack: true, ..nohs() };
    let mut r = TcpReceiver::new(&c, IDS);
    for i in 0..5 {
        assert!(feed(&mut r, &seg(i * 500, 500), t(i)).is_empty());
    }
    assert_eq!(feed(&mut r, &seg(2500, 500), t(9)), [3000]); // 3000 >= 2 * 1460
}

// --- FIN --------------------------------------------------------------------------------------
#[test]
fn fin_in_order_is_consumed_and_acked() {
    let mut r = TcpReceiver::new(&nohs(), IDS);
    assert_eq!(feed(&mut r, &fin(seg(0, 1000)), t(0)), [1001]);
    assert!(r.fin_received());
    assert_eq!(r.state(), ReceiverState::CloseWait);
    assert_eq!(r.delivered_bytes(), 1000);
    // a retransmitted FIN is acknowledged again, nothing else changes
    assert_eq!(feed(&mut r, &fin(seg(0, 1000)), t(1)), [1001]);
    assert_eq!(r.delivered_bytes(), 1000);
}

#[test]
fn fin_beyond_a_hole_waits_for_the_hole() {
    let mut r = TcpReceiver::new(&nohs(), IDS);
    assert_eq!(feed(&mut r, &fin(seg(1000, 500)), t(0)), [0]);
    assert!(!r.fin_received());
    assert_eq!(feed(&mut r, &seg(0, 1000), t(1)), [1501]);
    assert!(r.fin_received());
    assert_eq!(r.delivered_bytes(), 1500);
    // an empty flow: a pure FIN
    let mut r = TcpReceiver::new(&nohs(), IDS);
    assert_eq!(feed(&mut r, &fin(seg(0, 0)), t(0)), [1]);
    assert!(r.fin_received());
    assert_eq!(r.delivered_bytes(), 0);
}

// --- handshake and window scaling -------------------------------------------------------------
fn syn(wscale: u8) -> Packet {
    Packet { flags: flags::SYN, size: 40, wscale, ack: 0, ..seg(0, 0) }
}

#[test]
fn syn_ack_offers_the_scale_and_later_windows_are_scaled_exactly() {
    let c = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
    let mut r = TcpReceiver::new(&c, IDS);
    assert_eq!(r.state(), ReceiverState::Listen);
    assert!(feed(&mut r, &seg(1, MSS), t(0)).is_empty(), "data before the SYN is ignored");
    let mut out = Vec::new();
    r.on_packet(&syn(5), t(1), &mut out);
    let sa = &out[0];
    assert_eq!((sa.flags, sa.seq, sa.ack, sa.size), (flags::SYN | flags::ACK, 0, 1, 40));
    assert_eq!((sa.rwnd, sa.wscale), (65535, 5), "SYN-ACK window unscaled, shift offered");
    assert_eq!(r.state(), ReceiverState::SynReceived);
    // the first data segment carries the handshake's ACK
    out.clear();
    r.on_packet(&Packet { ack: 1, ..seg(1, MSS) }, t(2), &mut out);
    assert_eq!(r.state(), ReceiverState::Established);
    let a = &out[0];
    assert_eq!((a.ack, a.seq, a.rwnd), (1461, 1, 32768));
    assert_eq!(decode_window(a.rwnd, r.wscale_shift()), 1_048_576);
    assert_eq!(r.adv_window(), 1 << 20);
    assert_eq!(r.delivered_bytes(), 1460);
}

#[test]
fn no_scaling_unless_the_sender_offers_it() {
    let c = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
    let mut r = TcpReceiver::new(&c, IDS);
    let mut out = Vec::new();
    r.on_packet(&syn(NO_WSCALE), t(0), &mut out);
    assert_eq!(out[0].wscale, NO_WSCALE);
    assert_eq!(r.wscale_shift(), 0);
    assert_eq!(r.adv_window(), 65535, "the unscaled field caps the window");
    // and not if we do not: the option is never sent
    let c = TcpConfig { rcv_buf_bytes: 1 << 20, window_scaling: false, ..Default::default() };
    let mut r = TcpReceiver::new(&c, IDS);
    out.clear();
    r.on_packet(&syn(7), t(0), &mut out);
    assert_eq!((out[0].wscale, r.wscale_shift()), (NO_WSCALE, 0));
}

#[test]
fn a_retransmitted_syn_repeats_the_syn_ack() {
    let mut r = TcpReceiver::new(&TcpConfig::default(), IDS);
    let mut out = Vec::new();
    r.on_packet(&syn(0), t(0), &mut out);
    r.on_packet(&syn(0), t(1), &mut out);
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|p| p.has(flags::SYN) && p.ack == 1));
    // the pure third ACK establishes without an ACK in return
    out.clear();
    r.on_packet(&Packet { ack: 1, ..seg(1, 0) }, t(2), &mut out);
    assert_eq!(r.state(), ReceiverState::Established);
    assert!(out.is_empty());
    // a late SYN copy now gets a plain ACK
    r.on_packet(&syn(0), t(3), &mut out);
    assert_eq!((out[0].flags, out[0].ack), (flags::ACK, 1));
}

// --- timestamps echo (RFC 7323 4.3) -------------------------------------------------------------
#[test]
fn echo_follows_ts_recent() {
    let c = TcpConfig { delayed_ack: true, ..nohs() };
    let mut r = TcpReceiver::new(&c, IDS);
    let mut out = Vec::new();
    let stamp = |mut p: Packet, ts: u64| {
        p.ts_val = t(ts);
        p
    };
    r.on_packet(&stamp(seg(0, MSS), 100), t(150), &mut out);
    r.on_packet(&stamp(seg(1460, MSS), 110), t(160), &mut out);
    assert_eq!(out[0].ts_ecr, t(100), "a delayed ACK echoes the earlier segment");
    r.on_packet(&stamp(seg(4380, MSS), 130), t(180), &mut out); // out of order
    // TS.Recent only follows segments that start at or before the last ACK's edge: the
    // second segment (seq 1460 > 0) never did, so the duplicate ACK still echoes 100
    assert_eq!(out[1].ts_ecr, t(100), "a duplicate ACK echoes TS.Recent");
    r.on_packet(&stamp(seg(2920, MSS), 300), t(350), &mut out); // the retransmission fills it
    assert_eq!((out[2].ack, out[2].ts_ecr), (5840, t(300)));
}

// --- SACK blocks (RFC 2018 section 4) -------------------------------------------------------------
fn sack_cfg() -> TcpConfig {
    TcpConfig { sack: true, rcv_buf_bytes: 1 << 20, ..nohs() }
}
/// The blocks of the one ACK `p` provokes, in segments of MSS bytes.
fn blocks(r: &mut TcpReceiver, p: &Packet) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    r.on_packet(p, t(0), &mut out);
    assert_eq!(out.len(), 1);
    let m = MSS as u64;
    let used: Vec<_> = out[0].sack.iter().take_while(|b| b.start < b.end).collect();
    assert!(out[0].sack[used.len()..].iter().all(|b| *b == SackBlock::default()), "unused slots are empty");
    used.iter().map(|b| (b.start / m, b.end / m)).collect()
}
fn s(k: u64) -> Packet {
    seg(k * MSS as u64, MSS)
}

#[test]
fn sack_blocks_most_recent_first_merged_and_dropped_when_acked() {
    let mut r = TcpReceiver::new(&sack_cfg(), IDS);
    assert_eq!(blocks(&mut r, &s(0)), []);
    // holes at 1, 3, 5, 7: each ACK names the newest block first
    assert_eq!(blocks(&mut r, &s(2)), [(2, 3)]);
    assert_eq!(blocks(&mut r, &s(4)), [(4, 5), (2, 3)]);
    assert_eq!(blocks(&mut r, &s(6)), [(6, 7), (4, 5), (2, 3)]);
    // a fourth block pushes the oldest off the three slots
    assert_eq!(blocks(&mut r, &s(8)), [(8, 9), (6, 7), (4, 5)]);
    // segment 3 joins blocks 2 and 4: the merged block comes first and covers block 4
    assert_eq!(blocks(&mut r, &s(3)), [(2, 5), (8, 9), (6, 7)]);
    // a duplicate of held data moves its block to the front
    assert_eq!(blocks(&mut r, &s(8)), [(8, 9), (2, 5), (6, 7)]);
    // a segment next to a block grows it (first block = the whole contiguous block)
    assert_eq!(blocks(&mut r, &s(9)), [(8, 10), (2, 5), (6, 7)]);
    // segment 1 advances the cumulative ACK to 5: the passed block goes, order stays
    let mut out = Vec::new();
    r.on_packet(&s(1), t(1), &mut out);
    assert_eq!(out[0].ack, 5 * MSS as u64);
    assert_eq!(r.sack_blocks().len(), 2);
    assert_eq!(blocks(&mut r, &s(0)), [(8, 10), (6, 7)], "a duplicate below rcv_nxt changes nothing");
    // filling everything empties the list
    r.on_packet(&s(5), t(2), &mut out);
    assert_eq!(blocks(&mut r, &s(7)), []);
    assert_eq!(r.delivered_bytes(), 10 * MSS as u64);
    assert!(r.sack_blocks().is_empty());
}

#[test]
fn sack_block_of_a_trimmed_segment_ends_at_the_window() {
    let c = TcpConfig { sack: true, rcv_buf_bytes: 4000, window_scaling: false, ..nohs() };
    let mut r = TcpReceiver::new(&c, IDS);
    let mut out = Vec::new();
    r.on_packet(&seg(3000, MSS), t(0), &mut out);
    assert_eq!(out[0].sack[0], SackBlock { start: 3000, end: 4000 });
    // entirely beyond the window: nothing held, nothing reported
    out.clear();
    r.on_packet(&seg(5000, MSS), t(1), &mut out);
    assert_eq!((out[0].sack[0], out[0].sack[1]), (SackBlock { start: 3000, end: 4000 }, SackBlock::default()));
}

#[test]
fn without_sack_acks_carry_no_blocks() {
    let mut r = TcpReceiver::new(&nohs(), IDS);
    let mut out = Vec::new();
    for k in [0u64, 2, 4, 6] {
        r.on_packet(&s(k), t(k), &mut out);
    }
    assert!(out.iter().all(|a| a.sack == [SackBlock::default(); 3]));
    assert!(r.sack_blocks().is_empty());
}

// --- ECN echo (RFC 3168 6.1.3, RFC 8257 3.2) ---------------------------------------------------
fn ce(mut p: Packet) -> Packet {
    p.ecn = Ecn::Ce;
    p
}
fn with(mut p: Packet, f: u8) -> Packet {
    p.flags |= f;
    p
}
/// Feeds full segments `0..pattern.len()` (CE where `pattern` says), 1 us apart, then fires
/// the delayed-ACK timer; returns every ACK as (ACK number in segments, ECE).
fn echo(cfg: &TcpConfig, pattern: &[u8]) -> (Vec<(u64, bool)>, TcpReceiver) {
    let mut r = TcpReceiver::new(cfg, IDS);
    let mut out = Vec::new();
    for (i, &c) in pattern.iter().enumerate() {
        let p = seg(i as u64 * MSS as u64, MSS);
        r.on_packet(&if c == 1 { ce(p) } else { p }, t(i as u64), &mut out);
    }
    r.on_timer(t(1_000_000), &mut out);
    let acks = out.iter().map(|a| (a.ack / MSS as u64, a.has(flags::ECE))).collect();
    (acks, r)
}
fn dctcp_cfg(delayed_ack: bool) -> TcpConfig {
    TcpConfig { cc: crate::tcp::CcKind::Dctcp, delayed_ack, ..nohs() }
}

#[test]
fn dctcp_delayed_acks_flush_the_old_state_at_each_ce_change() {
    let (acks, r) = echo(&dctcp_cfg(true), &[0, 0, 1, 1, 1, 0, 0, 0]);
    // 0-1 unmarked (one delayed ACK); 2-3 marked (one ACK, ECE); at segment 5 the state
    // changes with segment 4 unacknowledged: an immediate ACK of 5 segments with the old
    // state (ECE), then 5-6 together and 7 by the timer, unmarked
    assert_eq!(acks, [(2, false), (4, true), (5, true), (7, false), (8, false)]);
    assert_eq!((r.stats().ce_segments, r.stats().ece_acks), (3, 2));
    // alternating marks: every segment ends up acknowledged alone with its own CE bit
    let (acks, _) = echo(&dctcp_cfg(true), &[1, 0, 1, 0]);
    assert_eq!(acks, [(1, true), (2, false), (3, true), (4, false)]);
    // a change right after an ACK (nothing pending) sends nothing extra
    let (acks, _) = echo(&dctcp_cfg(true), &[0, 0, 1, 1, 0, 0]);
    assert_eq!(acks, [(2, false), (4, true), (6, false)]);
}

#[test]
fn dctcp_echo_counts_the_marked_bytes_exactly() {
    // whatever the pattern, the bytes acknowledged by ECE ACKs are exactly the marked ones
    let pattern: Vec<u8> = (0..200u64).map(|i| ((i * 7919) % 13 < 4) as u8).collect();
    for delayed in [false, true] {
        let (acks, _) = echo(&dctcp_cfg(delayed), &pattern);
        let mut prev = 0;
        let mut marked = 0;
        for &(a, e) in &acks {
            if e {
                marked += a - prev;
            }
            prev = a;
        }
        assert_eq!(prev, 200);
        assert_eq!(marked, pattern.iter().map(|&c| c as u64).sum::<u64>(), "delayed {delayed}");
    }
    // without delayed ACKs: one ACK per segment, ECE = CE
    let (acks, _) = echo(&dctcp_cfg(false), &[0, 1, 1, 0, 1]);
    assert_eq!(acks, [(1, false), (2, true), (3, true), (4, false), (5, true)]);
}

#[test]
fn classic_ecn_latches_ece_until_cwr() {
    let cfg = TcpConfig { ecn: true, ..nohs() };
    let mut r = TcpReceiver::new(&cfg, IDS);
    let mut out = Vec::new();
    let m = MSS as u64;
    r.on_packet(&seg(0, MSS), t(0), &mut out);
    r.on_packet(&ce(seg(m, MSS)), t(1), &mut out);
    r.on_packet(&seg(2 * m, MSS), t(2), &mut out); // still latched
    r.on_packet(&with(seg(3 * m, MSS), flags::CWR), t(3), &mut out); // CWR clears
    r.on_packet(&seg(4 * m, MSS), t(4), &mut out);
    r.on_packet(&ce(with(seg(5 * m, MSS), flags::CWR)), t(5), &mut out); // CWR then CE: set
    r.on_packet(&seg(6 * m, MSS), t(6), &mut out);
    let ece: Vec<bool> = out.iter().map(|a| a.has(flags::ECE)).collect();
    assert_eq!(ece, [false, true, true, false, false, true, true]);
    assert_eq!(r.stats().ece_acks, 4);
    // a DCTCP receiver ignores CWR and follows CE
    let mut r = TcpReceiver::new(&dctcp_cfg(false), IDS);
    out.clear();
    r.on_packet(&ce(seg(0, MSS)), t(0), &mut out);
    r.on_packet(&with(seg(m, MSS), flags::CWR), t(1), &mut out);
    r.on_packet(&ce(with(seg(2 * m, MSS), flags::CWR)), t(2), &mut out);
    assert_eq!(out.iter().map(|a| a.has(flags::ECE)).collect::<Vec<_>>(), [true, false, true]);
}

#[test]
fn ecn_is_echoed_only_when_negotiated() {
    let m = MSS as u64;
    let ecn_syn = Packet { flags: flags::SYN | flags::ECE | flags::CWR, ..syn(0) };
    for (cfg, syn_pkt, in_use) in [
        (TcpConfig { ecn: true, ..Default::default() }, ecn_syn.clone(), true),
        (TcpConfig { ecn: true, ..Default::default() }, syn(0), false),
        (TcpConfig::default(), ecn_syn.clone(), false),
    ] {
        let mut r = TcpReceiver::new(&cfg, IDS);
        let mut out = Vec::new();
        r.on_packet(&syn_pkt, t(0), &mut out);
        assert_eq!(out[0].has(flags::ECE), in_use);
        assert!(!out[0].has(flags::CWR));
        r.on_packet(&ce(Packet { ack: 1, ..seg(1, MSS) }), t(1), &mut out);
        r.on_packet(&Packet { ack: 1, ..seg(1 + m, MSS) }, t(2), &mut out);
        assert_eq!(out[1].has(flags::ECE) && out[2].has(flags::ECE), in_use);
        assert_eq!(r.stats().ce_segments, 1, "CE is counted in any case");
    }
    // ECN off: CE is counted and never echoed
    let (acks, r) = echo(&nohs(), &[1, 1, 0]);
    assert!(acks.iter().all(|&(_, e)| !e));
    assert_eq!((r.stats().ce_segments, r.stats().ece_acks), (2, 0));
}

// --- steady state ----------------------------------------------------------------------------------
#[test]
fn the_out_of_order_buffer_reuses_its_storage() {
    let mut r = TcpReceiver::new(&TcpConfig { rcv_buf_bytes: 1 << 20, ..nohs() }, IDS);
    let mut out = Vec::with_capacity(16);
    let mut cap = 0;
    for round in 0..200u64 {
        let base = round * 20 * MSS as u64;
        // every other segment of a 20-segment window lost, then repaired
        for k in (1..20).step_by(2) {
            r.on_packet(&seg(base + k * MSS as u64, MSS), t(round), &mut out);
        }
        for k in (0..20).step_by(2) {
            r.on_packet(&seg(base + k * MSS as u64, MSS), t(round), &mut out);
        }
        out.clear();
        if round == 0 {
            cap = r.ooo.v.capacity();
        }
        assert_eq!(r.ooo.v.capacity(), cap);
    }
    assert_eq!(r.delivered_bytes(), 200 * 20 * MSS as u64);
}
