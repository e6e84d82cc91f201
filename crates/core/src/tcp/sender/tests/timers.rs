//! Timers: the retransmission timeout and its backoff, Linux's timer wheel, lazy timer
//! calls, RTT sampling.

use super::*;

// --- retransmission timeout -----------------------------------------------------------------
#[test]
fn successive_timeouts_double_the_rto_up_to_the_caps() {
    let rtos = |cfg: TcpConfig| {
        let mut net = Net::new(&cfg, Some(10 * MSS), us(10));
        net.drop = Box::new(|_, dir, _| dir == Dir::Fwd);
        net.start();
        net.run(secs(200), 10_000);
        let gaps: Vec<f64> = net.rto_log.windows(2).map(|w| (w[1].0 - w[0].0).as_secs_f64()).collect();
        let rto: Vec<f64> = net.rto_log.iter().map(|x| x.1.as_secs_f64()).collect();
        // each timeout fires one (backed-off) RTO after the previous one
        for (g, r) in gaps.iter().zip(&rto) {
            assert_eq!(g, r);
        }
        (net.rto_log[0].0.as_secs_f64(), rto)
    };
    // initial 1 s, capped by max_rto = 10 s
    let (first, r) = rtos(TcpConfig { max_rto_s: 10.0, ..nohs() });
    assert_eq!(first, 1.0);
    assert_eq!(r[..6], [2.0, 4.0, 8.0, 10.0, 10.0, 10.0]);
    // capped by max_backoff = 4
    let (_, r) = rtos(TcpConfig { max_backoff: 4, ..nohs() });
    assert_eq!(r[..5], [2.0, 4.0, 4.0, 4.0, 4.0]);
    // default: the multiplier stops at 64 (64 s > max_rto 60 s, so the cap is 60 s)
    let (_, r) = rtos(nohs());
    assert_eq!(r[..8], [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]);
}

#[test]
fn backed_off_rto_starts_from_min_rto_after_a_short_rtt() {
    let cfg = TcpConfig { max_rto_s: 1.0, ..nohs() };
    let mut net = Net::new(&cfg, None, us(10));
    let cut = SimTime::from_secs_f64(0.001);
    net.drop = Box::new(move |_, dir, now| dir == Dir::Fwd && now > cut);
    net.start();
    net.run(secs(5), 1_000_000);
    // RTT 20 us: SRTT + 4 RTTVAR is far below min_rto, which rules
    assert_eq!(net.snd.rtt_estimator().base_rto(), ms(200));
    let rto: Vec<u64> = net.rto_log.iter().map(|x| x.1 .0 / 1_000_000_000).collect();
    assert_eq!(rto[..5], [400, 800, 1000, 1000, 1000]);
    let first = net.rto_log[0].0;
    assert!(first > cut + ms(199) && first < cut + ms(201), "first timeout at {first}");
}

#[test]
fn a_timeout_goes_back_to_snd_una_with_one_segment() {
    let cfg = TcpConfig { init_cwnd_pkts: 4, ..nohs() };
    let mut net = Net::new(&cfg, Some(20 * MSS), us(10));
    drop_first_copies(&mut net, false, &[0, 1, 2, 3]);
    run_to_end(&mut net);
    let st = net.snd.stats();
    assert_eq!((st.timeouts, st.retransmits, st.fast_retransmits), (1, 4, 0));
    // FlightSize 4 segments at the timeout -> ssthresh 2 segments, never lowered again
    assert_eq!(net.snd.ssthresh_bytes(), 2 * MSS);
    let after: Vec<(f64, u64)> =
        net.data_sent().skip(4).take(3).map(|s| (s.t.as_secs_f64(), s.pkt.seq)).collect();
    assert_eq!(after[0], (1.0, 0), "one segment from snd_una at the RTO");
    assert_eq!(after[1].1, MSS);
    assert_eq!(after[2].1, 2 * MSS);
}

#[test]
fn with_a_timer_wheel_the_rto_fires_on_the_wheels_lattice() {
    // 250 Hz: the 1 s initial RTO (250 jiffies, level 1) fires on a 32 ms boundary, the
    // backed-off 2 s and 4 s (500 and 1000 jiffies) on 32 and 256 ms boundaries.
    let cfg = TcpConfig { timer_wheel_hz: 250, ..nohs() };
    let mut s = TcpSender::new(&cfg, IDS, Some(100_000));
    let mut out = Vec::new();
    s.start(SimTime(5), &mut out);
    let mut due = s.next_deadline().unwrap();
    assert_eq!(due, SimTime::ZERO + SimDuration::from_ms(1024));
    for (rto_ms, grain_ms) in [(2000, 32), (4000, 256)] {
        s.on_timer(due, &mut out);
        let next = s.next_deadline().unwrap();
        assert!(next >= due + SimDuration::from_ms(rto_ms), "fired early: {next:?}");
        assert_eq!(next.0 % SimDuration::from_ms(grain_ms).0, 0, "{next:?} is off the {grain_ms} ms lattice");
        due = next;
    }
    assert_eq!(s.stats().timeouts, 2);
}

// --- lazy timers ------------------------------------------------------------------------------------
#[test]
fn early_or_spurious_timer_calls_do_nothing() {
    let mut s = TcpSender::new(&nohs(), IDS, Some(10 * MSS));
    let mut out = Vec::new();
    s.on_timer(SimTime(1), &mut out); // before start: nothing armed
    s.start(SimTime::ZERO, &mut out);
    let d = s.next_deadline().unwrap();
    out.clear();
    s.on_timer(SimTime(d.0 - 1), &mut out);
    assert!(out.is_empty());
    assert_eq!((s.next_deadline(), s.stats().timeouts), (Some(d), 0));
    s.on_timer(d, &mut out);
    assert_eq!((out.len(), s.stats().timeouts), (1, 1));
}

// --- RTT sampling -----------------------------------------------------------------------------------
#[test]
fn rtt_samples_measure_the_path() {
    for ts in [false, true] {
        let cfg = TcpConfig { timestamps: ts, ..nohs() };
        let mut net = Net::new(&cfg, Some(100 * MSS), ms(1));
        run_to_end(&mut net);
        let e = net.snd.rtt_estimator();
        assert_eq!(e.srtt(), Some(ms(2)), "timestamps = {ts}");
        assert_eq!(net.snd.rto(), ms(200));
        if ts {
            assert_eq!(e.samples(), net.acks().count() as u64, "one sample per ACK of new data");
        } else {
            assert!(e.samples() < 20, "one timed segment per RTT: {}", e.samples());
        }
    }
}

#[test]
fn strict_karn_takes_no_sample_from_an_ack_that_also_covers_a_retransmission() {
    // Segments 0 and 1 lost: the RTO resends 0, then 1 (a retransmission) and 2 (new, the
    // timed one) leave together; the ACK of 1 is lost, so the next ACK covers 1 and 2.
    // ns-2's rule samples it; Linux's (karn_strict) does not. Nothing else differs, so the
    // runs are the same packet by packet and differ by exactly that one sample.
    let run = |strict: bool| {
        let cfg = TcpConfig { karn_strict: strict, ..nohs() };
        let mut net = Net::new(&cfg, Some(10 * MSS), us(10));
        let (mut lost, mut ack_lost) = (vec![0, MSS], false);
        net.drop = Box::new(move |p, dir, _| match dir {
            Dir::Fwd if p.payload > 0 => lost.iter().position(|&s| s == p.seq).map(|i| lost.swap_remove(i)).is_some(),
            Dir::Rev if p.ack == 2 * MSS && !ack_lost => {
                ack_lost = true;
                true
            }
            _ => false,
        });
        run_to_end(&mut net);
        let st = net.snd.stats();
        assert_eq!((st.timeouts, st.retransmits), (1, 2), "strict = {strict}");
        (net.snd.rtt_estimator().samples(), net.snd.rtt_estimator().backoff())
    };
    let (ns2, strict) = (run(false), run(true));
    assert_eq!(ns2.0, strict.0 + 1, "ns-2 rule {ns2:?}, strict {strict:?}");
    // later ACKs of fresh data end the backoff under either rule
    assert_eq!((ns2.1, strict.1), (1, 1));
}
