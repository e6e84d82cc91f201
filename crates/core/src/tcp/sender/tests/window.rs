//! Window scaling and the peer's receive window (rewritten, small, zero).

use super::*;

#[test]
fn window_scale_is_negotiated_and_exact() {
    let cfg = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
    let mut net = Net::new(&cfg, None, us(10));
    net.start();
    net.run(SimTime::from_secs_f64(0.01), 1_000_000);
    assert_eq!(net.log[0].pkt.wscale, 5);
    assert_eq!(net.log[1].pkt.wscale, 5);
    assert_eq!(net.log[1].pkt.rwnd, 65535);
    assert_eq!(net.snd.peer_wscale(), 5);
    assert_eq!(net.snd.peer_rwnd(), 1_048_576);
    assert!(net.acks().skip(1).all(|a| a.pkt.rwnd == 32768));
    // slow start outgrows the receive window, which then binds: 718 full segments fit
    assert!(net.snd.cwnd_bytes() > 1 << 20);
    assert_eq!(net.max_flight, (1 << 20) / MSS * MSS);
}

#[test]
fn no_scaling_when_the_receiver_does_not_offer_it() {
    let cfg = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
    let mut net = Net::new(&cfg, None, us(10));
    net.rcv = TcpReceiver::new(&TcpConfig { window_scaling: false, ..cfg.clone() }, IDS);
    net.start();
    net.run(SimTime::from_secs_f64(0.01), 1_000_000);
    assert_eq!(net.log[1].pkt.wscale, NO_WSCALE);
    assert_eq!((net.snd.peer_wscale(), net.snd.peer_rwnd()), (0, 65535));
    assert!(net.max_flight <= 65535 && net.max_flight > 65535 - MSS);
}

#[test]
fn a_rewritten_smaller_rwnd_is_honoured() {
    // unscaled: the rewritten window binds exactly
    let mut net = Net::new(&nohs(), Some(300 * MSS), us(10));
    net.rewrite_ack = Some(Box::new(|p, _| p.rwnd = p.rwnd.min(4 * MSS as u16)));
    run_to_end(&mut net);
    assert_eq!(net.max_flight, 4 * MSS);
    assert!(net.snd.cwnd_bytes() > 4 * MSS);
    // scaled by 2^5: 5840 >> 5 = 182 -> 5824 bytes, three full segments fit
    let cfg = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
    let mut net = Net::new(&cfg, Some(300 * MSS), us(10));
    net.rewrite_ack = Some(Box::new(|p, _| {
        if !p.has(flags::SYN) {
            // the SYN-ACK's window is unscaled: a switch must leave it (or not shift it)
            p.rwnd = p.rwnd.min(((4 * MSS) >> 5) as u16)
        }
    }));
    run_to_end(&mut net);
    assert_eq!(net.snd.peer_rwnd(), 5824);
    assert_eq!(net.max_flight, 3 * MSS);
    // a window that shrinks mid-flow (as FairQ does) binds from the next ACK on
    let mut net = Net::new(&nohs(), Some(2000 * MSS), us(10));
    net.rewrite_ack = Some(Box::new(|p, now| {
        if now > SimTime::from_secs_f64(0.0005) {
            p.rwnd = p.rwnd.min(2 * MSS as u16)
        }
    }));
    run_to_end(&mut net);
    let late = net.data_sent().filter(|s| s.t > SimTime::from_secs_f64(0.001));
    let mut sent_late = 0;
    for s in late {
        // every late segment ends within two segments of the ACK edge at its time
        let acked_before = net.acks().filter(|a| a.t + us(10) <= s.t).map(|a| a.pkt.ack).max().unwrap();
        assert!(s.pkt.seq + s.pkt.payload as u64 <= acked_before + 2 * MSS, "segment {} beyond rwnd", s.pkt.seq);
        sent_late += 1;
    }
    assert!(sent_late > 100);
}

#[test]
fn a_window_below_one_segment_sends_small_segments() {
    let mut net = Net::new(&nohs(), Some(20_000), us(10));
    net.rewrite_ack = Some(Box::new(|p, _| p.rwnd = 1000));
    run_to_end(&mut net);
    let sizes: Vec<u32> = net.data_sent().skip(2).map(|s| s.pkt.payload).collect();
    assert!(sizes.iter().all(|&n| n <= 1000), "{sizes:?}");
    assert_eq!(net.rcv.delivered_bytes(), 20_000);
    assert_eq!(net.snd.stats().timeouts, 0);
}

#[test]
fn a_zero_window_is_probed_until_it_opens() {
    let mut net = Net::new(&nohs(), Some(30 * MSS), us(10));
    net.rewrite_ack = Some(Box::new(|p, now| {
        if now < SimTime::from_secs_f64(0.05) {
            p.rwnd = 0
        }
    }));
    run_to_end(&mut net);
    let probes: Vec<_> = net.data_sent().filter(|s| s.pkt.payload == 1).collect();
    assert_eq!(probes.len(), 1, "one probe, one RTO (200 ms) after the window closed");
    assert!(probes[0].t >= SimTime::from_secs_f64(0.2));
    assert_eq!(net.snd.stats().timeouts, 0);
    assert_eq!(net.rcv.delivered_bytes(), 30 * MSS);
}
