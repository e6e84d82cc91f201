//! Fast retransmit and fast recovery without SACK (Reno, NewReno, limited transmit).

use super::*;

#[test]
fn a_single_loss_is_repaired_by_fast_retransmit_without_timeout() {
    for cc in [CcKind::Reno, CcKind::Newreno] {
        for hs in [false, true] {
            let cfg = TcpConfig { cc, handshake: hs, ..Default::default() };
            let mut net = Net::new(&cfg, Some(200 * MSS), us(50));
            drop_first_copies(&mut net, hs, &[30]);
            run_to_end(&mut net);
            let st = net.snd.stats();
            assert_eq!((st.fast_retransmits, st.timeouts, st.retransmits), (1, 0, 1), "{cc:?} hs={hs}");
            assert_eq!(net.rcv.delivered_bytes(), 200 * MSS);
            // ssthresh = half of the flight at the third duplicate ACK
            assert!(net.snd.ssthresh_bytes() >= 2 * MSS && net.snd.ssthresh_bytes() < 45 * MSS / 2 + MSS);
        }
    }
}

#[test]
fn newreno_repairs_two_losses_in_a_window_reno_times_out() {
    // Observed (deterministic): NewReno: one fast retransmit, the partial ACK retransmits
    // the second hole, no timeout. Reno: one fast retransmit; the partial ACK ends recovery,
    // the next three duplicate ACKs do not pass `recover`, so the second hole waits for the
    // RTO (200 ms); its retransmission is acknowledged up to snd_max, so go-back-N resends
    // nothing else. 200 segments finish in 1.4 ms with NewReno, 201.6 ms with Reno.
    let run = |cc| {
        let cfg = TcpConfig { cc, ..nohs() };
        let mut net = Net::new(&cfg, Some(200 * MSS), us(50));
        drop_first_copies(&mut net, false, &[30, 33]);
        run_to_end(&mut net);
        assert_eq!(net.rcv.delivered_bytes(), 200 * MSS);
        (net.snd.stats().clone(), net.now)
    };
    let (nr, nr_end) = run(CcKind::Newreno);
    assert_eq!((nr.fast_retransmits, nr.retransmits, nr.timeouts), (1, 2, 0));
    let (r, r_end) = run(CcKind::Reno);
    assert_eq!((r.fast_retransmits, r.retransmits, r.timeouts), (1, 2, 1));
    assert_eq!((nr_end, r_end), (SimTime::from_secs_f64(0.0014), SimTime::from_secs_f64(0.2016)));
}

#[test]
fn slow_start_overshoot_at_a_drop_tail_queue() {
    // 100 Mbps bottleneck, 20-packet drop-tail buffer, 100 us base RTT, 64 KB window: slow
    // start overflows the buffer and loses several segments of one window. Observed
    // (deterministic): NewReno repairs them all in one recovery per loss episode, no
    // timeout, and resends only what was lost; Reno leaves recovery on the first partial
    // ACK and needs the RTO, after which go-back-N resends some segments that had arrived.
    let run = |cc| {
        let cfg = TcpConfig { cc, ..Default::default() };
        let mut net = Net::new(&cfg, Some(2_000_000), us(50));
        net.rate = Some(BitsPerSec(100_000_000));
        net.queue_limit = Some(20);
        run_to_end(&mut net);
        assert_eq!(net.rcv.delivered_bytes(), 2_000_000);
        (net.snd.stats().clone(), net.queue_drops)
    };
    let (nr, nr_drops) = run(CcKind::Newreno);
    assert_eq!((nr_drops, nr.retransmits, nr.fast_retransmits, nr.timeouts), (27, 27, 7, 0));
    let (r, r_drops) = run(CcKind::Reno);
    assert_eq!((r_drops, r.retransmits, r.fast_retransmits, r.timeouts), (28, 46, 8, 1));
}

#[test]
fn limited_transmit_rescues_a_small_window() {
    // three segments in flight, the first lost: two duplicate ACKs only (after the
    // handshake, so that the ACK of the SYN passes `recover`)
    for (lt, fr, to) in [(false, 0, 1), (true, 1, 0)] {
        let cfg = TcpConfig { init_cwnd_pkts: 3, limited_transmit: lt, ..Default::default() };
        let mut net = Net::new(&cfg, Some(10 * MSS), us(50));
        drop_first_copies(&mut net, true, &[0]);
        run_to_end(&mut net);
        let st = net.snd.stats();
        assert_eq!((st.fast_retransmits, st.timeouts), (fr, to), "limited_transmit = {lt}");
    }
}

#[test]
fn no_fast_retransmit_before_an_ack_passes_the_iss() {
    // RFC 6582 3.2 step 1: recover = ISS. Without a handshake the first data byte is the
    // ISS, so losing segment 0 is left to the RTO even with enough duplicate ACKs (ns-2
    // does the same); losing segment 1 is a fast retransmit.
    for (lost, fr, to) in [(0, 0, 1), (1, 1, 0)] {
        let cfg = TcpConfig { init_cwnd_pkts: 4, limited_transmit: true, ..nohs() };
        let mut net = Net::new(&cfg, Some(10 * MSS), us(50));
        drop_first_copies(&mut net, false, &[lost]);
        run_to_end(&mut net);
        let st = net.snd.stats();
        assert_eq!((st.fast_retransmits, st.timeouts), (fr, to), "segment {lost} lost");
    }
}
