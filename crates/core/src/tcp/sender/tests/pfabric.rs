//! pFabric: priority, the window cap, the rate control's fixed timeout and probes.

use super::*;

#[test]
fn priority_is_the_unacknowledged_payload_only_when_asked() {
    let mut s = TcpSender::new(&nohs(), IDS, Some(100_000));
    let mut out = Vec::new();
    s.start(SimTime::ZERO, &mut out);
    assert!(out.iter().all(|p| p.priority == 0));
    // "remaining": the flow's unacknowledged bytes, falling as ACKs arrive
    let cfg = TcpConfig { priority: PriorityMode::Remaining, init_cwnd_pkts: 1, ..nohs() };
    let mut net = Net::new(&cfg, Some(5 * MSS), us(10));
    run_to_end(&mut net);
    let prios: Vec<u64> = net.data_sent().map(|s| s.pkt.priority).collect();
    // slow start from one segment: each ACK releases two segments stamped with the same remainder
    assert_eq!(prios, [5 * MSS, 4 * MSS, 4 * MSS, 3 * MSS, 3 * MSS]);
    assert!(net.acks().all(|a| a.pkt.priority == 0));
}

#[test]
fn max_cwnd_caps_the_window() {
    let cfg = TcpConfig { max_cwnd_pkts: 5, ..nohs() };
    let mut net = Net::new(&cfg, Some(200 * MSS), us(10));
    run_to_end(&mut net);
    assert_eq!(net.snd.cwnd_bytes(), 5 * MSS);
    assert!(net.max_flight <= 5 * MSS, "{}", net.max_flight);
}

fn pfabric() -> TcpConfig {
    TcpConfig { cc: CcKind::Pfabric, min_rto_ms: 0.045, init_cwnd_pkts: 12, pfabric_probe_after: 3, ..nohs() }
}

#[test]
fn pfabric_never_fast_retransmits_and_repairs_by_a_fixed_timeout() {
    let mut net = Net::new(&pfabric(), Some(40 * MSS), us(2));
    drop_first_copies(&mut net, false, &[2]);
    run_to_end(&mut net);
    let st = net.snd.stats();
    assert_eq!((st.fast_retransmits, st.timeouts), (0, 1), "{st:?}");
    assert!(net.snd.dupacks() == 0 && !net.snd.in_recovery());
    // the same loss with NewReno is a fast retransmit
    let mut nr = Net::new(&TcpConfig { cc: CcKind::Newreno, ..pfabric() }, Some(40 * MSS), us(2));
    drop_first_copies(&mut nr, false, &[2]);
    run_to_end(&mut nr);
    assert_eq!(nr.snd.stats().fast_retransmits, 1);
    // SACK information does not start a recovery either
    let mut sk = Net::new(&TcpConfig { sack: true, ..pfabric() }, Some(40 * MSS), us(2));
    drop_first_copies(&mut sk, false, &[2]);
    run_to_end(&mut sk);
    assert_eq!((sk.snd.stats().fast_retransmits, sk.snd.stats().timeouts), (0, 1));
}

#[test]
fn pfabric_probes_after_n_timeouts_and_resumes_on_an_ack() {
    // everything forward is lost until 2 ms, then the path heals
    let heal = SimTime::ZERO + ms(2);
    let mut net = Net::new(&pfabric(), Some(30 * MSS), us(2));
    net.drop = Box::new(move |_, dir, t| dir == Dir::Fwd && t < heal);
    net.start();
    net.run(heal, 1_000_000);
    // timeouts every 45 us exactly (fixed RTO, no backoff)
    let rto = us(45);
    assert!(net.rto_log.len() >= 40, "{}", net.rto_log.len());
    assert!(net.rto_log.iter().all(|&(_, r)| r == rto));
    assert!(net.rto_log.windows(2).all(|w| w[1].0 - w[0].0 == rto));
    let fwd: Vec<&crate::tcp::testnet::Sent> = net.log.iter().filter(|s| s.dir == Dir::Fwd).collect();
    // 12 segments, then timeouts 1 and 2 each resend one full segment (window of 1), and
    // from the 3rd timeout on, only one-byte probes of snd_una leave
    let sizes: Vec<u32> = fwd.iter().map(|s| s.pkt.payload).collect();
    assert_eq!(sizes[..12], [MSS as u32; 12]);
    assert_eq!(sizes[12..14], [MSS as u32; 2]);
    assert!(sizes[14..].iter().all(|&n| n == 1), "{:?}", &sizes[..20]);
    assert!(fwd[14..].iter().all(|s| s.pkt.seq == 0 && s.pkt.size == 41));
    assert_eq!(sizes.len() - 14, net.rto_log.len() - 2, "one probe per timeout in probe mode");
    assert_eq!(net.snd.cwnd_bytes(), MSS);
    // the path heals: the next probe is acknowledged, slow start resumes, the flow ends
    net.run(SimTime::MAX, 1_000_000);
    assert!(net.snd.is_done());
    let after: Vec<u32> = net.log.iter().filter(|s| s.dir == Dir::Fwd && s.t >= heal).map(|s| s.pkt.payload).collect();
    assert_eq!(after[0], 1, "first a probe");
    // then slow start from one segment (plus the probe's byte): full segments from byte 1,
    // the last one a byte short
    let (last, full) = after[1..].split_last().unwrap();
    assert!(full.iter().all(|&n| n == MSS as u32), "{after:?}");
    assert_eq!((full.len(), *last), (29, (MSS - 1) as u32));
    assert_eq!(net.rcv.delivered_bytes(), 30 * MSS);
}
