//! Opening and closing: the first window, the handshake, the FIN, persistent senders.

use super::*;

#[test]
fn without_handshake_the_initial_window_leaves_at_start() {
    let cfg = TcpConfig { priority: PriorityMode::Remaining, ..nohs() };
    let mut s = TcpSender::new(&cfg, IDS, Some(100_000));
    let mut out = Vec::new();
    let t0 = SimTime(5);
    s.start(t0, &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 1460]);
    for p in &out {
        assert_eq!((p.size, p.payload, p.flags, p.uid), (1500, 1460, flags::ACK, 0));
        assert_eq!((p.created, p.ts_val, p.priority), (t0, t0, 100_000));
        assert_eq!((p.src, p.dst, p.sport, p.dport, p.flow), (1, 2, 1000, 80, 7));
    }
    assert_eq!(s.next_deadline(), Some(t0 + SimDuration::from_secs(1)));
    assert_eq!(s.state(), SenderState::Established);
    s.start(t0, &mut out); // a second start does nothing
    assert_eq!(out.len(), 2);
}

#[test]
fn a_persistent_sender_sends_each_write_and_never_a_fin() {
    for handshake in [false, true] {
        let cfg = TcpConfig { handshake, ..nohs() };
        let ids = FlowIds { flow: 0, src: 1, dst: 2, sport: 10, dport: 20 };
        let mut snd = TcpSender::new_persistent(&cfg, ids);
        let mut out = Vec::new();
        snd.start(SimTime::ZERO, &mut out);
        assert!(out.iter().all(|p| p.payload == 0), "nothing to send before the first write");
        out.clear();
        snd.write(3000, SimTime::ZERO, &mut out);
        let sent: u64 = out.iter().map(|p| p.payload as u64).sum();
        assert!(out.iter().all(|p| !p.has(flags::FIN)));
        if !handshake {
            assert_eq!(sent, 2920, "two segments in the initial window");
        }
        assert_eq!(snd.bytes_written(), 3000);
        // written and unacknowledged: what was sent and what waits for the window alike
        assert_eq!(snd.unacked_bytes(), 3000);
        assert!(!snd.is_done());
    }
}

#[test]
fn handshake_then_data_then_fin() {
    let mut net = Net::new(&TcpConfig::default(), Some(10 * MSS), us(10));
    run_to_end(&mut net);
    let l = &net.log;
    assert_eq!((l[0].dir, l[0].pkt.flags, l[0].pkt.seq, l[0].pkt.wscale), (Dir::Fwd, flags::SYN, 0, 0));
    assert_eq!((l[1].dir, l[1].pkt.flags, l[1].pkt.ack), (Dir::Rev, flags::SYN | flags::ACK, 1));
    assert_eq!((l[2].pkt.flags, l[2].pkt.payload, l[2].pkt.seq, l[2].pkt.ack), (flags::ACK, 0, 1, 1));
    assert_eq!((l[3].pkt.seq, l[3].pkt.payload), (1, 1460));
    let data: Vec<_> = net.data_sent().collect();
    assert_eq!(data.len(), 10);
    assert!(data[..9].iter().all(|s| !s.pkt.has(flags::FIN)));
    assert!(data[9].pkt.has(flags::FIN), "the FIN rides on the last segment");
    assert_eq!(net.rcv.delivered_bytes(), 10 * MSS);
    assert!(net.rcv.fin_received());
    assert_eq!(
        net.snd.stats(),
        &SenderStats {
            pkts_sent: 12,
            bytes_sent: 10 * MSS,
            data_segments_sent: 10,
            bytes_acked: 10 * MSS,
            ..Default::default()
        }
    );
    // the SYN was timed: RTT = two one-way delays
    assert_eq!(net.snd.rtt_estimator().srtt(), Some(us(20)));
    assert_eq!(net.snd.next_deadline(), None);
}

#[test]
fn an_empty_flow_sends_a_pure_fin() {
    for hs in [false, true] {
        let mut net = Net::new(&TcpConfig { handshake: hs, ..Default::default() }, Some(0), us(10));
        run_to_end(&mut net);
        assert_eq!(net.count_flag(Dir::Fwd, flags::FIN), 1);
        assert_eq!(net.data_sent().count(), 0);
        assert!(net.rcv.fin_received());
    }
}

#[test]
fn the_syn_is_retransmitted_with_backoff() {
    let mut net = Net::new(&TcpConfig::default(), Some(10 * MSS), us(10));
    net.drop = Box::new(|_, dir, _| dir == Dir::Fwd);
    net.start();
    net.run(secs(100), 10_000);
    let syn_times: Vec<f64> = net.log.iter().filter(|s| s.pkt.has(flags::SYN)).map(|s| s.t.as_secs_f64()).collect();
    // initial RTO 1 s, doubling: 1, 2, 4, 8, 16, 32, then capped by max_rto 60 s
    assert_eq!(syn_times, [0.0, 1.0, 3.0, 7.0, 15.0, 31.0, 63.0]);
    assert_eq!(net.snd.stats().timeouts, 6);
    assert_eq!(net.snd.stats().retransmits, 6);
    assert_eq!(net.snd.state(), SenderState::SynSent);
    assert_eq!(net.snd.next_deadline(), Some(secs(123)));
}

#[test]
fn a_lost_syn_ack_costs_one_rto_and_no_rtt_sample() {
    let mut net = Net::new(&TcpConfig::default(), Some(20 * MSS), us(10));
    let mut first = true;
    net.drop = Box::new(move |p, dir, _| {
        let d = dir == Dir::Rev && p.has(flags::SYN) && first;
        first &= !d;
        d
    });
    run_to_end(&mut net);
    assert_eq!(net.count_flag(Dir::Fwd, flags::SYN), 2);
    assert_eq!(net.count_flag(Dir::Rev, flags::SYN), 2);
    // Karn: the retransmitted SYN was not timed; the data samples ended the backoff
    assert_eq!(net.snd.rtt_estimator().srtt(), Some(us(20)));
    assert_eq!(net.snd.rtt_estimator().backoff(), 1);
    assert_eq!(net.rcv.delivered_bytes(), 20 * MSS);
}
