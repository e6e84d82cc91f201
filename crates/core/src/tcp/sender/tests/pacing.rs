//! Pacing: the gaps between data segments, and none without it.

use super::*;

#[test]
fn paced_segments_leave_srtt_over_ratio_times_cwnd_apart() {
    for (ss, ca) in [(1.0, 1.0), (2.0, 1.2)] {
        let cfg = TcpConfig {
            pacing: true,
            pacing_ss_ratio: ss,
            pacing_ca_ratio: ca,
            init_cwnd_pkts: 10,
            window_scaling: false,
            ..nohs()
        };
        let mut s = TcpSender::new(&cfg, IDS, None);
        let mut out = Vec::new();
        let t0 = SimTime(1_000_000);
        // no RTT sample yet: the initial window leaves at once (ns-3's PaceInitialWindow
        // false), and nothing is held
        s.start(t0, &mut out);
        assert_eq!(segs(&mut out), (0..10).collect::<Vec<_>>());
        assert_eq!(s.next_deadline(), Some(t0 + SimDuration::from_secs(1)), "only the RTO");
        // the ACK of segment 0 after 1 ms: srtt = 1 ms, cwnd 11 segments, two may leave;
        // the first goes at once, the second one gap later (slow start: the ss ratio)
        let t1 = t0 + ms(1);
        s.on_packet(&ack_pkt(MSS, 40), t1, &mut out);
        assert_eq!(s.rtt_estimator().srtt(), Some(ms(1)));
        assert_eq!(segs(&mut out), [10]);
        let gap = |cwnd_segs: u64| SimDuration((1_000_000_000.0 / (ss * cwnd_segs as f64)) as u64);
        assert_eq!(s.next_deadline(), Some(t1 + gap(11)));
        s.on_timer(SimTime((t1 + gap(11)).0 - 1), &mut out);
        assert!(out.is_empty(), "not a picosecond early");
        s.on_timer(t1 + gap(11), &mut out);
        assert_eq!(segs(&mut out), [11]);
        assert!(s.next_deadline().unwrap() > t1 + ms(100), "the window is full: only the RTO is left");
        // four more acknowledged (cwnd 12): five segments, one gap of srtt / (ratio * 12) apart
        let t2 = t1 + ms(1);
        s.on_packet(&ack_pkt(5 * MSS, 40), t2, &mut out);
        let mut times = vec![(t2, segs(&mut out))];
        while let Some(d) = s.next_deadline().filter(|&d| d < t2 + ms(1)) {
            s.on_timer(d, &mut out);
            times.push((d, segs(&mut out)));
        }
        assert!(times.iter().all(|(_, v)| v.len() == 1), "one segment per release: {times:?}");
        assert_eq!(times.iter().map(|(_, v)| v[0]).collect::<Vec<_>>(), [12, 13, 14, 15, 16]);
        for w in times.windows(2) {
            assert_eq!(w[1].0.saturating_since(w[0].0), gap(12), "ratio {ss}");
        }
    }
}

/// Runs a paced transfer of `segs` segments over `net`, checking every data departure after
/// the first RTT sample: never two in one instant, and each at least the pacing gap of its
/// predecessor (computed from the cwnd, ssthresh and srtt it left with) after it, exactly
/// that gap when the pacer released it. Returns how many the pacer released.
fn check_paced(net: &mut Net) -> usize {
    let mut last: Option<(SimTime, SimDuration)> = None;
    let mut released = 0;
    net.start();
    let mut seen = net.log.len();
    while !net.snd.is_done() && net.step() {
        let new: Vec<(SimTime, u64)> = net.log[seen..]
            .iter()
            .filter(|x| x.dir == Dir::Fwd && x.pkt.payload > 0)
            .map(|x| (x.t, x.pkt.payload as u64))
            .collect();
        seen = net.log.len();
        let Some(srtt) = net.snd.rtt_estimator().srtt() else { continue };
        assert!(new.len() <= 1, "two data segments back to back at {}", net.now);
        let s = &net.snd;
        for (t, len) in new {
            if let Some((prev, gap)) = last {
                let d = t.saturating_since(prev);
                assert!(d >= gap, "segment at {t} only {d} after the previous one, gap {gap}");
                if net.last_was_sender_timer {
                    assert_eq!(d, gap, "released by the pacer at {t}");
                    released += 1;
                }
            }
            last = Some((t, s.pacer().gap(len, s.cwnd_bytes(), s.ssthresh_bytes(), srtt)));
        }
    }
    released
}

#[test]
fn a_paced_flow_never_sends_two_segments_back_to_back() {
    // handshake: the SYN's sample paces the initial window too; no bottleneck (the sender's
    // departures are the line-rate bursts pacing removes) and a 1 Gbps one
    for rate in [None, Some(BitsPerSec::from_gbps(1))] {
        for (ss, ca) in [(1.0, 1.0), (2.0, 1.2)] {
            let cfg = TcpConfig { pacing: true, pacing_ss_ratio: ss, pacing_ca_ratio: ca, rcv_buf_bytes: 1 << 20, ..Default::default() };
            let mut net = Net::new(&cfg, Some(2500 * MSS), us(250));
            net.rate = rate;
            let released = check_paced(&mut net);
            assert_eq!(net.rcv.delivered_bytes(), 2500 * MSS);
            assert!(released > 100, "most segments wait for the pacer: {released}");
        }
    }
}

#[test]
fn a_paced_endless_flow_still_fills_the_bottleneck() {
    // as an_endless_flow_fills_the_bottleneck_and_never_sends_a_fin, paced: cwnd / srtt
    // is the rate the window allows, so pacing at ratio 1 costs no throughput
    for (ss, ca) in [(1.0, 1.0), (2.0, 1.2)] {
        let cfg = TcpConfig { pacing: true, pacing_ss_ratio: ss, pacing_ca_ratio: ca, rcv_buf_bytes: 1 << 20, ..nohs() };
        let mut net = Net::new(&cfg, None, us(50));
        net.rate = Some(BitsPerSec(100_000_000));
        net.start();
        net.run(secs(1), 10_000_000);
        let got = net.rcv.delivered_bytes();
        assert!(got > 12_000_000 && got <= 12_166_000, "ratio {ss}: {got}");
    }
}

#[test]
fn pacing_off_ignores_the_ratios_and_sends_back_to_back() {
    let trace = |cfg: &TcpConfig| {
        let mut net = lossy(5, 0.05, cfg, 300 * MSS);
        run_to_end(&mut net);
        net.log.iter().map(|s| (s.t, s.dir == Dir::Fwd, s.pkt.seq, s.pkt.ack, s.dropped)).collect::<Vec<_>>()
    };
    let base = TcpConfig::default();
    let off = TcpConfig { pacing: false, pacing_ss_ratio: 2.0, pacing_ca_ratio: 1.2, ..Default::default() };
    assert_eq!(trace(&base), trace(&off));
    let paced = TcpConfig { pacing: true, ..Default::default() };
    assert_ne!(trace(&base), trace(&paced));
}
