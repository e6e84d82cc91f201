//! ECN (RFC 3168, RFC 8257): negotiation, ECT on data, the reaction once per window, CWR.

use super::*;

fn ece(mut p: Packet) -> Packet {
    p.flags |= flags::ECE;
    p
}
fn alpha(s: &TcpSender) -> f64 {
    match s.cc() {
        AnyCc::Dctcp(d) => d.alpha(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ecn_is_negotiated_and_only_data_is_ect() {
    let cfg = TcpConfig { ecn: true, ..Default::default() };
    let mut net = Net::new(&cfg, Some(20 * MSS), us(50));
    run_to_end(&mut net);
    let syn = &net.log[0].pkt;
    assert!(syn.has(flags::SYN) && syn.has(flags::ECE) && syn.has(flags::CWR) && syn.ecn == Ecn::NotEct);
    let syn_ack = &net.log.iter().find(|s| s.dir == Dir::Rev && s.pkt.has(flags::SYN)).unwrap().pkt;
    assert!(syn_ack.has(flags::ECE) && !syn_ack.has(flags::CWR) && syn_ack.ecn == Ecn::NotEct);
    assert!(net.snd.ecn_in_use());
    assert_eq!(net.data_sent().count(), 20);
    assert!(net.data_sent().all(|s| s.pkt.ecn == Ecn::Ect0));
    assert!(net.log.iter().filter(|s| s.pkt.payload == 0).all(|s| s.pkt.ecn == Ecn::NotEct));
    // a receiver without ECN answers without ECE: not in use, nothing is ECT
    let mut net = Net::new(&cfg, Some(20 * MSS), us(50));
    net.rcv = TcpReceiver::new(&TcpConfig::default(), IDS);
    run_to_end(&mut net);
    assert!(!net.snd.ecn_in_use());
    assert!(net.log.iter().all(|s| s.pkt.ecn == Ecn::NotEct));
    // off by default: the SYN asks for nothing and nothing is ECT or ECE
    let mut net = Net::new(&TcpConfig::default(), Some(20 * MSS), us(50));
    run_to_end(&mut net);
    assert!(!net.snd.ecn_in_use());
    assert!(net.log.iter().all(|s| s.pkt.ecn == Ecn::NotEct && !s.pkt.has(flags::ECE | flags::CWR)));
}

#[test]
fn retransmissions_are_not_ect_except_with_dctcp() {
    for (cc, ect) in [(CcKind::Newreno, false), (CcKind::Dctcp, true)] {
        let cfg = TcpConfig { cc, ecn: true, init_cwnd_pkts: 10, ..nohs() };
        let mut net = Net::new(&cfg, Some(30 * MSS), us(50));
        drop_first_copies(&mut net, false, &[3]);
        run_to_end(&mut net);
        let copies: Vec<_> = net.data_sent().filter(|s| s.pkt.seq == 3 * MSS).collect();
        assert_eq!(copies.len(), 2, "{cc:?}");
        assert_eq!(copies[0].pkt.ecn, Ecn::Ect0);
        assert_eq!(copies[1].pkt.ecn == Ecn::Ect0, ect, "{cc:?}");
    }
}

#[test]
fn rfc3168_reacts_to_ece_once_per_window_and_sends_cwr() {
    let cfg = TcpConfig { ecn: true, init_cwnd_pkts: 10, ..nohs() };
    let mut s = TcpSender::new(&cfg, IDS, None);
    let mut out = Vec::new();
    s.start(SimTime::ZERO, &mut out);
    assert_eq!(new_data(&out, 0), 10);
    out.clear();
    let t = SimTime::ZERO + us(100);
    // the first ECE: ssthresh = cwnd = FlightSize / 2, 9 segments outstanding after the ACK
    s.on_packet(&ece(ack_pkt(MSS, 40)), t, &mut out);
    assert_eq!(s.stats().ecn_reductions, 1);
    assert_eq!((s.cwnd_bytes(), s.ssthresh_bytes()), (9 * MSS / 2, 9 * MSS / 2));
    // ECE on every further ACK of the window that was out (up to 10 segments): no second
    // reduction, no increase; the first new segment carries CWR, the next ones do not
    for k in 2..10 {
        s.on_packet(&ece(ack_pkt(k * MSS, 40)), t, &mut out);
        assert_eq!((s.stats().ecn_reductions, s.cwnd_bytes()), (1, 9 * MSS / 2), "ack {k}");
    }
    let sent: Vec<_> = out.iter().filter(|p| p.payload > 0).collect();
    assert_eq!(sent.iter().map(|p| p.seq / MSS).collect::<Vec<_>>(), [10, 11, 12]);
    assert_eq!(sent.iter().map(|p| p.has(flags::CWR)).collect::<Vec<_>>(), [true, false, false]);
    // without ECE the window opens again only once an ACK goes past the reduced window
    s.on_packet(&ack_pkt(10 * MSS - 1, 40), t, &mut out);
    assert_eq!(s.cwnd_bytes(), 9 * MSS / 2);
    // the ACK that exactly covers the window is still in CWR (Linux, ns-3, ns-2): an ECE
    // on it is ignored, and without ECE it would not open the window either
    s.on_packet(&ece(ack_pkt(10 * MSS, 40)), t, &mut out);
    assert_eq!((s.stats().ecn_reductions, s.cwnd_bytes()), (1, 9 * MSS / 2));
    // the first ACK past it: a new reduction (2 segments outstanding: floor 2 SMSS)
    s.on_packet(&ece(ack_pkt(11 * MSS, 40)), t, &mut out);
    assert_eq!((s.stats().ecn_reductions, s.cwnd_bytes()), (2, 2 * MSS));
}

#[test]
fn no_ecn_reaction_during_loss_recovery() {
    let cfg = TcpConfig { ecn: true, init_cwnd_pkts: 10, ..nohs() };
    let mut s = TcpSender::new(&cfg, IDS, None);
    let mut out = Vec::new();
    s.start(SimTime::ZERO, &mut out);
    let t = SimTime::ZERO + us(100);
    s.on_packet(&ack_pkt(MSS, 40), t, &mut out); // recover = ISS passed
    for _ in 0..3 {
        s.on_packet(&ack_pkt(MSS, 40), t, &mut out);
    }
    assert!(s.in_recovery());
    let w = s.cwnd_bytes();
    s.on_packet(&ece(ack_pkt(MSS, 40)), t, &mut out);
    assert_eq!(s.stats().ecn_reductions, 0);
    assert_eq!(s.cwnd_bytes(), w + MSS, "only the inflation of the duplicate");
}

#[test]
fn dctcp_cuts_by_alpha_over_two_once_per_window() {
    let cfg = TcpConfig { cc: CcKind::Dctcp, dctcp_alpha_init: 0.5, init_cwnd_pkts: 20, ..nohs() };
    let mut s = TcpSender::new(&cfg, IDS, None);
    assert!(s.ecn_in_use(), "DCTCP implies ECN");
    let mut out = Vec::new();
    s.start(SimTime::ZERO, &mut out);
    let t = SimTime::ZERO + us(100);
    // the first ACK closes DCTCP's first window unmarked: alpha = 15/16 * 0.5; slow start
    s.on_packet(&ack_pkt(MSS, 40), t, &mut out);
    assert_eq!((alpha(&s), s.cwnd_bytes()), (0.46875, 21 * MSS));
    // ECE: cut by alpha / 2 from the window before the ACK (no increase on ECE)
    s.on_packet(&ece(ack_pkt(2 * MSS, 40)), t, &mut out);
    let cut = |w: u64, a: f64| w - (w as f64 * a / 2.0).floor() as u64;
    let w1 = cut(21 * MSS, 0.46875);
    assert_eq!((s.cwnd_bytes(), s.ssthresh_bytes(), s.stats().ecn_reductions), (w1, w1, 1));
    // the rest of the window (snd_max was 22 segments): ECE everywhere, no second cut; the
    // ACK past DCTCP's window end (20 segments) updates alpha with F = 20 / 20
    for k in 3..22 {
        s.on_packet(&ece(ack_pkt(k * MSS, 40)), t, &mut out);
        assert_eq!((s.cwnd_bytes(), s.stats().ecn_reductions), (w1, 1), "ack {k}");
    }
    let a = 0.46875 * 15.0 / 16.0 + 1.0 / 16.0;
    assert_eq!(alpha(&s), a);
    // the ACK that covers the cut window (snd_max 22 segments) is still in CWR ...
    s.on_packet(&ece(ack_pkt(22 * MSS, 40)), t, &mut out);
    assert_eq!((s.cwnd_bytes(), s.stats().ecn_reductions), (w1, 1));
    // ... the next one reacts, with alpha as it stands
    s.on_packet(&ece(ack_pkt(23 * MSS, 40)), t, &mut out);
    assert_eq!((s.cwnd_bytes(), s.stats().ecn_reductions), (cut(w1, alpha(&s)), 2));
}

#[test]
fn marking_at_k_keeps_dctcp_and_ecn_flows_out_of_the_drop_tail() {
    // 100 Mbps, 100 us base RTT, a 100-packet buffer, 1 MB receive window: NewReno without
    // ECN fills the buffer and loses; marked at K = 20, DCTCP and RFC 3168 NewReno lose nothing
    let run = |cc, ecn, k| {
        let cfg = TcpConfig { cc, ecn, rcv_buf_bytes: 1 << 20, ..Default::default() };
        let mut net = Net::new(&cfg, Some(1_000_000), us(50));
        net.rate = Some(BitsPerSec(100_000_000));
        net.queue_limit = Some(100);
        net.mark_at = k;
        run_to_end(&mut net);
        assert_eq!(net.rcv.delivered_bytes(), 1_000_000);
        (net.queue_drops, net.queue_marks, net.snd.stats().ecn_reductions, net.now)
    };
    let (drops, marks, _, reno_end) = run(CcKind::Newreno, false, Some(20));
    assert!(drops > 0 && marks == 0, "{drops} {marks}");
    for (cc, ecn) in [(CcKind::Dctcp, false), (CcKind::Newreno, true)] {
        let (drops, marks, red, end) = run(cc, ecn, Some(20));
        assert_eq!(drops, 0, "{cc:?}");
        assert!(marks > 0 && red > 0, "{cc:?}: {marks} marks, {red} reductions");
        // and the link stays busy: 1 MB at 100 Mbps is 80 ms (+ headers), as fast as NewReno
        assert!(end.as_secs_f64() < reno_end.as_secs_f64() * 1.02, "{cc:?}: {end} vs {reno_end}");
    }
}
