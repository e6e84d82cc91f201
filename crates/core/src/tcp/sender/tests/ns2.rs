//! ns-2's rules (`TcpConfig` options): the burst cap in recovery, the start-up quirks, and every
//! loss pattern repaired under them.

use super::*;

#[test]
fn recovery_max_burst_caps_new_segments_per_ack_in_recovery() {
    // 11 segments out, segment 1 lost; the ACKs hold the window at 11 segments while the
    // duplicate ACKs inflate cwnd to 15.5 segments, then one more opens it (16.5): without
    // a limit the sender bursts 5 new segments, with ns-2's limit 2 (the rest follows on
    // the next ACKs)
    for (limit, burst) in [(0u32, 5usize), (2, 2)] {
        let cfg = TcpConfig { init_cwnd_pkts: 10, window_scaling: false, recovery_max_burst: limit, ..nohs() };
        let mut s = TcpSender::new(&cfg, IDS, None);
        let mut out = Vec::new();
        let t = SimTime(1);
        s.start(t, &mut out);
        s.on_packet(&ack_pkt(MSS, 11), t, &mut out); // cwnd 11: segments 10 and 11 leave
        assert_eq!(s.snd_nxt(), 12 * MSS);
        for _ in 0..10 {
            s.on_packet(&ack_pkt(MSS, 11), t, &mut out);
        }
        assert!(s.in_recovery());
        assert_eq!(s.cwnd_bytes(), 11 * MSS / 2 + 10 * MSS);
        let max_before = s.snd_max();
        out.clear();
        s.on_packet(&ack_pkt(MSS, 40), t, &mut out);
        assert_eq!(new_data(&out, max_before), burst, "recovery_max_burst = {limit}");
        out.clear();
        s.on_packet(&ack_pkt(MSS, 40), t, &mut out); // one more duplicate: more may follow
        assert_eq!(new_data(&out, max_before), if limit == 0 { 1 } else { 2 });
    }
}

#[test]
fn headerless_first_segment_puts_segment_zero_on_the_wire_without_header() {
    let cfg = TcpConfig { headerless_first_segment: true, ..nohs() };
    let mut s = TcpSender::new(&cfg, IDS, None);
    let mut out = Vec::new();
    s.start(SimTime(1), &mut out);
    assert_eq!(out.iter().map(|p| (p.seq, p.size)).collect::<Vec<_>>(), [(0, 1460), (MSS, 1500)]);
    // its retransmission too (here after the 1 s initial RTO)
    out.clear();
    s.on_timer(secs(2), &mut out);
    assert_eq!(out.iter().map(|p| (p.seq, p.payload, p.size)).collect::<Vec<_>>(), [(0, 1460, 1460)]);
    // a whole transfer: only segment 0 is short (the channel checks every size)
    let mut net = Net::new(&cfg, Some(5 * MSS), us(10));
    run_to_end(&mut net);
    assert_eq!(net.data_sent().filter(|p| p.pkt.size == p.pkt.payload).count(), 1);
}

#[test]
fn first_ack_resets_cwnd_to_the_initial_window() {
    let cfg = TcpConfig { init_cwnd_pkts: 2, first_ack_resets_cwnd: true, window_scaling: false, ..nohs() };
    // the ACK of exactly segment 0 leaves cwnd at 2 segments (ns-2 delay_growth_): one new
    // segment instead of two; the next ACK grows it as usual
    let mut s = TcpSender::new(&cfg, IDS, None);
    let mut out = Vec::new();
    s.start(SimTime(1), &mut out);
    out.clear();
    s.on_packet(&ack_pkt(MSS, 44), SimTime(2), &mut out);
    assert_eq!((s.cwnd_bytes(), new_data(&out, 0)), (2 * MSS, 1));
    s.on_packet(&ack_pkt(2 * MSS, 44), SimTime(3), &mut out);
    assert_eq!(s.cwnd_bytes(), 3 * MSS);
    // an ACK covering more than segment 0 is not "the ACK of segment 0"
    let mut s = TcpSender::new(&cfg, IDS, None);
    s.start(SimTime(1), &mut out);
    s.on_packet(&ack_pkt(2 * MSS, 44), SimTime(2), &mut out);
    assert_eq!(s.cwnd_bytes(), 3 * MSS);
    // after a timeout before any ACK, the initial window is one segment (ns-2 bugfix_ss_)
    let mut s = TcpSender::new(&cfg, IDS, None);
    s.start(SimTime(1), &mut out);
    s.on_timer(secs(2), &mut out);
    out.clear();
    s.on_packet(&ack_pkt(MSS, 44), secs(3), &mut out);
    assert_eq!((s.cwnd_bytes(), new_data(&out, 0)), (MSS, 1));
    // off (the default): slow start from the first ACK
    let mut s = TcpSender::new(&TcpConfig { first_ack_resets_cwnd: false, ..cfg }, IDS, None);
    s.start(SimTime(1), &mut out);
    s.on_packet(&ack_pkt(MSS, 44), SimTime(2), &mut out);
    assert_eq!(s.cwnd_bytes(), 3 * MSS);
}

#[test]
fn ns2_rules_end_to_end_repair_every_loss_pattern() {
    // the ns-2 options together still deliver every byte (same channel checks as the
    // property test), with losses in and out of recovery
    let cfg = TcpConfig {
        limited_transmit: true,
        max_backoff: 1024,
        ssthresh_from: crate::tcp::SsthreshFrom::Cwnd,
        recovery_cwnd: crate::tcp::RecoveryCwnd::HalfWindow,
        recovery_exit: crate::tcp::RecoveryExit::Deflated,
        recovery_max_burst: 2,
        headerless_first_segment: true,
        first_ack_resets_cwnd: true,
        init_cwnd_pkts: 2,
        ..nohs()
    };
    for lost in [&[0u64][..], &[1], &[3, 5], &[4, 5, 6, 7, 8], &[2, 9, 10, 30, 31]] {
        let mut net = Net::new(&cfg, Some(200 * MSS), us(50));
        drop_first_copies(&mut net, false, lost);
        run_to_end(&mut net);
        assert_eq!(net.rcv.delivered_bytes(), 200 * MSS, "lost {lost:?}");
    }
}
