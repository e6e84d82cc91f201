//! SACK loss recovery (RFC 6675): `NextSeg()` ACK by ACK, reneging, losses end to end.

use super::*;

fn sack_nohs() -> TcpConfig {
    TcpConfig { sack: true, ..nohs() }
}
/// A pure ACK for segment `ack` (in MSS) carrying SACK blocks (in MSS), window `rwnd_segs`.
fn sack_ack(ack: u64, blocks: &[(u64, u64)], rwnd_segs: u64) -> Packet {
    let mut p = ack_pkt(ack * MSS, rwnd_segs);
    for (slot, &(a, b)) in p.sack.iter_mut().zip(blocks) {
        *slot = crate::packet::SackBlock { start: a * MSS, end: b * MSS };
    }
    p
}
/// A SACK sender with segments 0..12 out (initial window 10, segment 0 acknowledged, so
/// cwnd is 11 segments) and the peer's window `rwnd` segments.
fn sack_sender_with_12_out(rwnd: u64) -> (TcpSender, Vec<Packet>) {
    let cfg = TcpConfig { init_cwnd_pkts: 10, window_scaling: false, ..sack_nohs() };
    let mut s = TcpSender::new(&cfg, IDS, None);
    let mut out = Vec::new();
    s.start(SimTime(1), &mut out);
    s.on_packet(&sack_ack(1, &[], rwnd), SimTime(2), &mut out);
    assert_eq!((s.snd_nxt(), s.cwnd_bytes()), (12 * MSS, 11 * MSS));
    out.clear();
    (s, out)
}

#[test]
fn nextseg_resends_lost_holes_before_new_data() {
    let (mut s, mut out) = sack_sender_with_12_out(40);
    let t = SimTime(3);
    // segments 1, 3 and 5 lost; three ACKs with new SACK information: fast retransmit
    s.on_packet(&sack_ack(1, &[(2, 3)], 40), t, &mut out);
    s.on_packet(&sack_ack(1, &[(4, 5), (2, 3)], 40), t, &mut out);
    assert!(segs(&mut out).is_empty() && !s.in_recovery());
    s.on_packet(&sack_ack(1, &[(6, 7), (4, 5), (2, 3)], 40), t, &mut out);
    assert_eq!(segs(&mut out), [1]);
    assert!(s.in_recovery());
    // RFC 6675 (4.2): cwnd = ssthresh = FlightSize / 2, no inflation
    assert_eq!((s.ssthresh_bytes(), s.cwnd_bytes()), (11 * MSS / 2, 11 * MSS / 2));
    assert_eq!((s.high_rxt(), s.stats().fast_retransmits), (2 * MSS, 1));
    // pipe: 3, 5, 7..12 not lost (7 segments) + the retransmission of 1
    assert_eq!(s.pipe(), 8 * MSS);
    // two more SACKed: 3 and 5 are now lost (3 segments SACKed above them); pipe 4 leaves
    // room for one segment, rule 1 picks the first lost hole
    s.on_packet(&sack_ack(1, &[(6, 9), (4, 5), (2, 3)], 40), t, &mut out);
    assert_eq!(segs(&mut out), [3]);
    assert_eq!(s.pipe(), 5 * MSS);
    // rule 1 again although new data could go (rule 2 comes after)
    s.on_packet(&sack_ack(1, &[(6, 10), (4, 5), (2, 3)], 40), t, &mut out);
    assert_eq!(segs(&mut out), [5]);
    // no lost hole above HighRxt left: new data
    s.on_packet(&sack_ack(1, &[(6, 11), (4, 5), (2, 3)], 40), t, &mut out);
    assert_eq!(segs(&mut out), [12]);
    assert_eq!(s.cwnd_bytes(), 11 * MSS / 2, "cwnd stays at ssthresh through recovery");
    // a partial cumulative ACK keeps recovery and the window
    s.on_packet(&sack_ack(3, &[(4, 5), (6, 11)], 40), t, &mut out);
    assert!(s.in_recovery());
    assert_eq!(s.cwnd_bytes(), 11 * MSS / 2);
    // the ACK that covers RecoveryPoint (12) ends it; cwnd = ssthresh
    out.clear();
    s.on_packet(&sack_ack(14, &[], 40), t, &mut out);
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd_bytes(), 11 * MSS / 2);
}

#[test]
fn nextseg_rescue_then_unlost_holes_when_new_data_is_blocked() {
    // the peer's window (11 segments) allows no new data
    let (mut s, mut out) = sack_sender_with_12_out(11);
    let t = SimTime(3);
    for k in [3, 4] {
        s.on_packet(&sack_ack(1, &[(2, k)], 11), t, &mut out);
    }
    s.on_packet(&sack_ack(1, &[(2, 5)], 11), t, &mut out);
    assert_eq!(segs(&mut out), [1]);
    for k in [6, 7, 8] {
        s.on_packet(&sack_ack(1, &[(2, k)], 11), t, &mut out);
        assert!(segs(&mut out).is_empty(), "pipe still at or above cwnd - 1 SMSS");
    }
    // room for one: no lost hole, no new data, nothing unSACKed below the highest SACK:
    // rule 4, the rescue retransmission of the highest unSACKed segment (11)
    s.on_packet(&sack_ack(1, &[(2, 9)], 11), t, &mut out);
    assert_eq!(segs(&mut out), [11]);
    assert_eq!(s.high_rxt(), 2 * MSS, "the rescue leaves HighRxt alone");
    // only one rescue per recovery
    s.on_packet(&sack_ack(1, &[(2, 10)], 11), t, &mut out);
    assert!(segs(&mut out).is_empty());
    // 11 SACKed, 10 not: 10 is not lost (one segment SACKed above it) but lies below the
    // highest SACK: rule 3
    s.on_packet(&sack_ack(1, &[(11, 12), (2, 10)], 11), t, &mut out);
    assert_eq!(segs(&mut out), [10]);
    assert_eq!(s.high_rxt(), 11 * MSS);
    // the window opens (an ACK without new SACK information): rule 2 before anything else
    s.on_packet(&sack_ack(1, &[(11, 12), (2, 10)], 40), t, &mut out);
    assert_eq!(segs(&mut out), [12, 13]);
    assert_eq!(s.dupacks(), 3, "duplicate ACKs are counted only outside recovery");
}

#[test]
fn sack_recovery_starts_when_the_head_is_lost_before_three_duplicates() {
    // one ACK SACKs three segments at once (the ACKs between were lost): IsLost(HighACK+1)
    let (mut s, mut out) = sack_sender_with_12_out(40);
    s.on_packet(&sack_ack(1, &[(2, 5)], 40), SimTime(3), &mut out);
    assert!(s.in_recovery());
    assert_eq!((s.dupacks(), segs(&mut out)[0]), (1, 1));
    // an ACK that brings no new SACK information is no duplicate (RFC 6675 section 2)
    let (mut s, mut out) = sack_sender_with_12_out(40);
    for _ in 0..5 {
        s.on_packet(&sack_ack(1, &[(2, 3)], 40), SimTime(3), &mut out);
    }
    assert_eq!((s.dupacks(), s.in_recovery()), (1, false));
    // without any SACK block, ACKs for snd_una are not duplicates either
    for _ in 0..5 {
        s.on_packet(&sack_ack(1, &[], 40), SimTime(3), &mut out);
    }
    assert_eq!((s.dupacks(), s.in_recovery()), (1, false));
}

#[test]
fn sack_reneging_clears_the_scoreboard() {
    let (mut s, mut out) = sack_sender_with_12_out(40);
    s.on_packet(&sack_ack(1, &[(3, 5)], 40), SimTime(3), &mut out);
    assert_eq!(s.scoreboard().ranges(), [(3 * MSS, 5 * MSS)]);
    // the cumulative ACK stops where the receiver had SACKed: it dropped that data
    s.on_packet(&sack_ack(3, &[], 40), SimTime(4), &mut out);
    assert!(s.scoreboard().is_empty());
    // an ACK that covers a SACKed range is not reneging
    s.on_packet(&sack_ack(3, &[(6, 8)], 40), SimTime(5), &mut out);
    s.on_packet(&sack_ack(8, &[(9, 10)], 40), SimTime(6), &mut out);
    assert_eq!(s.scoreboard().ranges(), [(9 * MSS, 10 * MSS)]);
}

/// Runs 200 segments over a 100 us RTT, losing the first copy of each listed segment (a
/// segment listed twice loses its first retransmission too); returns the sender's
/// counters, the completion time and the times of the retransmissions.
fn lose(cfg: &TcpConfig, lost: &[u64]) -> (SenderStats, SimTime, Vec<SimTime>) {
    let mut net = Net::new(cfg, Some(200 * MSS), us(50));
    drop_first_copies(&mut net, false, lost);
    run_to_end(&mut net);
    assert_eq!(net.rcv.delivered_bytes(), 200 * MSS);
    let mut high = 0;
    let mut rxt = Vec::new();
    for d in net.data_sent() {
        if d.pkt.seq < high {
            rxt.push(d.t);
        }
        high = high.max(d.pkt.seq + 1);
    }
    (net.snd.stats().clone(), net.now, rxt)
}

#[test]
fn sack_repairs_four_losses_of_one_window_in_one_round_trip() {
    // Observed (deterministic): four holes three segments apart in one window. SACK: one
    // fast retransmit, the other three holes resent within 30 us (well inside the first
    // 100 us round trip of recovery), done at 1.3 ms. NewReno: one hole per round trip,
    // each on the partial ACK of the one before, done at 1.6 ms. Neither times out, and
    // both resend exactly the four lost segments.
    let lost = [30, 33, 36, 39];
    let (sack, sack_end, sack_rxt) = lose(&sack_nohs(), &lost);
    assert_eq!((sack.fast_retransmits, sack.retransmits, sack.timeouts), (1, 4, 0));
    let (nr, nr_end, nr_rxt) = lose(&nohs(), &lost);
    assert_eq!((nr.fast_retransmits, nr.retransmits, nr.timeouts), (1, 4, 0));
    let spread = |r: &[SimTime]| r[3].saturating_since(r[0]);
    assert!(spread(&sack_rxt) < us(100), "SACK: all holes within one RTT, {}", spread(&sack_rxt));
    for w in nr_rxt.windows(2) {
        assert!(w[1].saturating_since(w[0]) >= us(100), "NewReno: one hole per round trip");
    }
    assert_eq!((sack_end, nr_end), (SimTime::from_secs_f64(0.0013), SimTime::from_secs_f64(0.0016)));
}

#[test]
fn sack_recovery_keeps_cwnd_at_ssthresh_and_the_books_balance() {
    // forward losses (3 %) on a 2000-segment transfer: after every event the scoreboard
    // and the unSACKed octets add up to the outstanding data, pipe never exceeds the
    // outstanding data plus what was retransmitted, it equals the flight while nothing is
    // SACKed, and cwnd = ssthresh throughout every recovery
    let size = 2000 * MSS;
    let mut net = Net::new(&sack_nohs(), Some(size), us(20));
    let mut rng = Streams::new(9).stream("tcp.test.loss", 0);
    net.drop = Box::new(move |p, dir, _| dir == Dir::Fwd && p.payload > 0 && rng.gen::<f64>() < 0.03);
    net.start();
    let (mut recoveries, mut steps_in_recovery) = (0, 0);
    let mut was = false;
    while !net.snd.is_done() && net.step() {
        let s = &net.snd;
        let (una, hi) = (s.snd_una(), s.snd_max().min(size));
        let sb = s.scoreboard();
        assert_eq!(sb.sacked_bytes() + sb.unsacked_between(una, hi), hi.saturating_sub(una));
        assert!(s.pipe() <= hi.saturating_sub(una) + s.high_rxt().saturating_sub(una));
        if sb.is_empty() && !s.in_recovery() {
            assert_eq!(s.pipe(), s.flight_bytes());
        }
        if s.in_recovery() {
            assert_eq!(s.cwnd_bytes(), s.ssthresh_bytes());
            steps_in_recovery += 1;
            recoveries += !was as u32;
        }
        was = s.in_recovery();
    }
    assert!(net.snd.is_done());
    assert_eq!(net.rcv.delivered_bytes(), size);
    assert!(recoveries > 10 && steps_in_recovery > 100, "{recoveries} recoveries");
}

#[test]
fn a_lost_retransmission_is_repaired_by_the_timeout() {
    // segment 30 and its fast retransmission are both lost: RFC 6675 cannot see it, the
    // RTO resends it; the rescue retransmission (NextSeg rule 4) was the only other copy
    let (st, end, _) = lose(&sack_nohs(), &[30, 30]);
    assert_eq!((st.fast_retransmits, st.timeouts, st.retransmits), (1, 1, 3));
    // one 200 ms RTO after the fast retransmit (at 1.5 ms), then one round trip
    assert_eq!(end, SimTime::from_secs_f64(0.2015));
    // NewReno has no rescue segment: 30 twice, the rest acknowledged by the RTO's copy
    let (nr, nr_end, _) = lose(&nohs(), &[30, 30]);
    assert_eq!((nr.fast_retransmits, nr.timeouts, nr.retransmits, nr_end), (1, 1, 2, end));
}

#[test]
fn after_a_timeout_sack_blocks_spare_what_arrived() {
    // 30..35 and 40..45 lost twice (first copies and their retransmissions in recovery):
    // the RTO clears the scoreboard, go-back-N resends from 30, and the SACK blocks that
    // come back with those ACKs make it skip 35..40, which had arrived: one timeout. NewReno
    // (observed) resends one hole per round trip, so its go-back-N copies are the second
    // copies of 31..35 and 40..45, lost too: six timeouts, and 35 sent twice.
    let lost: Vec<u64> = (30..35).chain(40..45).flat_map(|k| [k, k]).collect();
    let copies = |cfg: &TcpConfig| {
        let mut net = Net::new(cfg, Some(200 * MSS), us(50));
        drop_first_copies(&mut net, false, &lost);
        run_to_end(&mut net);
        let sent = |k: u64| net.data_sent().filter(|d| d.pkt.seq == k * MSS).count();
        ((35..40).map(sent).collect::<Vec<_>>(), net.snd.stats().timeouts)
    };
    assert_eq!(copies(&sack_nohs()), (vec![1; 5], 1));
    assert_eq!(copies(&nohs()), (vec![2, 1, 1, 1, 1], 6));
}

#[test]
fn sack_repairs_every_loss_pattern_with_the_ns2_rules_too() {
    let cfg = TcpConfig {
        sack: true,
        limited_transmit: true,
        max_backoff: 1024,
        ssthresh_from: crate::tcp::SsthreshFrom::Cwnd,
        recovery_cwnd: crate::tcp::RecoveryCwnd::HalfWindow,
        recovery_exit: crate::tcp::RecoveryExit::Deflated,
        recovery_max_burst: 2,
        ..nohs()
    };
    for lost in [&[0u64][..], &[1], &[3, 5], &[4, 5, 6, 7, 8], &[2, 9, 10, 30, 31], &[30, 30, 30]] {
        let mut net = Net::new(&cfg, Some(200 * MSS), us(50));
        drop_first_copies(&mut net, false, lost);
        run_to_end(&mut net);
        assert_eq!(net.rcv.delivered_bytes(), 200 * MSS, "lost {lost:?}");
    }
}
