//! The two ends together, through a small loop that stands for the network: a fixed one-way
//! delay, chosen first copies of data packets lost, chosen data packets marked CE.

use super::*;
use crate::packet::{Ecn, Proto};
use crate::tcp::FlowIds;
use crate::time::{BitsPerSec, SimDuration};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

const LINE: BitsPerSec = BitsPerSec(10_000_000_000);

fn ids() -> FlowIds {
    FlowIds { flow: 4, src: 1, dst: 2, sport: 1030, dport: 80 }
}

fn ends(cfg: &RoceConfig, size: Option<u64>) -> RoceEnds {
    RoceEnds { sender: RoceSender::new(cfg, ids(), LINE, size), receiver: RoceReceiver::new(cfg, ids()) }
}

fn at_ns(ns: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_ns(ns)
}

fn cfg(cc: CcKind, recovery: Recovery) -> RoceConfig {
    RoceConfig { cc, recovery, ..RoceConfig::default() }
}

/// What the loop saw.
#[derive(Default, Debug)]
struct Seen {
    /// Data packets the sender emitted, in order: (time, PSN).
    data: Vec<(SimTime, u64)>,
    /// Control packets the receiver emitted: (flags, ack, seq).
    control: Vec<(u8, u64, u64)>,
    /// Arrivals at the receiver (`is_arrival`).
    arrivals: u64,
}

/// The network of the loop.
struct Net {
    delay: SimDuration,
    /// PSNs whose first copy is lost.
    lose_first: Vec<u64>,
    /// PSNs marked CE (every copy).
    mark: fn(u64) -> bool,
}

impl Net {
    fn plain(delay_us: u64) -> Net {
        Net { delay: SimDuration::from_us(delay_us), lose_first: Vec::new(), mark: |_| false }
    }
}

/// Runs the flow until `until` or until nothing is left to do; checks after every call that
/// the receiver has delivered exactly the payload of the PSNs below its `expected` (in order,
/// nothing else).
fn run(e: &mut RoceEnds, net: &Net, mtu: u64, size: u64, until: SimTime) -> Seen {
    let mut seen = Seen::default();
    let mut q: BinaryHeap<Reverse<(SimTime, u64, u8)>> = BinaryHeap::new();
    let mut pkts: BTreeMap<u64, Packet> = BTreeMap::new();
    let mut copies: BTreeMap<u64, u32> = BTreeMap::new();
    let mut n = 0u64;
    let mut out = Vec::new();
    e.start(SimTime::ZERO, &mut out);
    let mut now = SimTime::ZERO;
    loop {
        // what the last call emitted goes on the wire
        for mut p in out.drain(..) {
            let to_receiver = p.src == ids().src;
            if to_receiver {
                seen.data.push((now, p.seq));
                let c = copies.entry(p.seq).or_insert(0);
                *c += 1;
                if *c == 1 && net.lose_first.contains(&p.seq) {
                    continue;
                }
                if (net.mark)(p.seq) {
                    p.ecn = Ecn::Ce;
                }
            } else {
                seen.control.push((p.flags, p.ack, p.seq));
            }
            q.push(Reverse((now + net.delay, n, to_receiver as u8)));
            pkts.insert(n, p);
            n += 1;
        }
        let next_pkt = q.peek().map(|Reverse((t, _, _))| *t);
        let timer = e.deadline(Side::Sender);
        let t = match (next_pkt, timer) {
            (None, None) => break,
            (a, b) => a.into_iter().chain(b).min().unwrap(),
        };
        if t > until {
            break;
        }
        now = t;
        if next_pkt == Some(t) {
            let Reverse((_, id, to_receiver)) = q.pop().unwrap();
            let p = pkts.remove(&id).unwrap();
            if to_receiver == 1 {
                seen.arrivals += RoceEnds::is_arrival(&p) as u64;
                e.on_packet(Side::Receiver, &p, now, &mut out);
                let expected = e.receiver.expected();
                assert_eq!(e.delivered_bytes(), (expected * mtu).min(size), "in order, nothing else");
            } else {
                e.on_packet(Side::Sender, &p, now, &mut out);
            }
        } else {
            e.on_timer(Side::Sender, now, &mut out);
        }
    }
    seen
}

// --- the wire -------------------------------------------------------------------------------
#[test]
fn every_packet_is_roce_udp_in_its_class_and_data_is_ect() {
    let mut e = ends(&RoceConfig { priority: 5, ..cfg(CcKind::Dcqcn, Recovery::GoBackN) }, Some(2500));
    let mut out = Vec::new();
    e.start(SimTime::ZERO, &mut out);
    let p = out.pop().unwrap();
    assert_eq!((p.proto, p.dport, p.sport, p.class, p.ecn), (Proto::Udp, ROCE_PORT, 1030, 5, Ecn::Ect0));
    assert_eq!((p.flags, p.seq, p.payload, p.size), (kind::DATA, 0, 1000, 1058));
    let mut back = Vec::new();
    let ce = Packet { ecn: Ecn::Ce, ..p };
    e.on_packet(Side::Receiver, &ce, at_ns(5000), &mut back);
    assert_eq!(back.len(), 2, "a CNP and an ACK");
    for c in &back {
        assert_eq!((c.proto, c.sport, c.dport, c.class, c.ecn), (Proto::Udp, ROCE_PORT, 1030, 5, Ecn::NotEct));
        assert_eq!((c.src, c.dst, c.payload), (2, 1, 0));
        assert!(!RoceEnds::is_arrival(c));
    }
    assert_eq!((back[0].flags, back[0].size), (kind::CNP, 58 + CNP_EXTRA_BYTES));
    assert_eq!((back[1].flags, back[1].ack, back[1].size), (kind::ACK, 1, 58 + ACK_EXTRA_BYTES));
}

#[test]
fn a_message_is_cut_into_mtu_packets_and_its_last_asks_for_an_ack() {
    let c = RoceConfig { ack_every_pkts: 100, ..cfg(CcKind::None, Recovery::GoBackN) };
    let mut e = ends(&c, Some(0));
    let mut out = Vec::new();
    e.start(SimTime::ZERO, &mut out);
    assert!(out.is_empty() && e.deadline(Side::Sender).is_none(), "nothing until written");
    e.write(2500, at_ns(10), &mut out);
    for k in 1..3 {
        let t = e.deadline(Side::Sender).unwrap();
        e.on_timer(Side::Sender, t, &mut out);
        assert_eq!(out.len(), k + 1);
    }
    let shape: Vec<(u64, u32, u8)> = out.iter().map(|p| (p.seq, p.payload, p.flags)).collect();
    assert_eq!(shape, [(0, 1000, kind::DATA), (1, 1000, kind::DATA), (2, 500, kind::DATA | kind::ACK_REQ)]);
    // with ack_every_pkts = 100, only the last packet is acknowledged
    let mut back = Vec::new();
    for p in &out {
        e.on_packet(Side::Receiver, p, at_ns(10_000), &mut back);
    }
    assert_eq!(back.iter().map(|p| (p.flags, p.ack)).collect::<Vec<_>>(), [(kind::ACK, 3)]);
    assert_eq!(e.delivered_bytes(), 2500);
}

// --- pacing ---------------------------------------------------------------------------------
#[test]
fn pacing_spaces_packets_by_size_over_rate_and_a_rate_change_moves_the_next() {
    let mut e = ends(&cfg(CcKind::Dcqcn, Recovery::GoBackN), None);
    let mut out = Vec::new();
    e.start(SimTime::ZERO, &mut out);
    let gap = LINE.tx_time(1058);
    assert_eq!(gap, SimDuration::from_ps(846_400));
    assert_eq!(e.deadline(Side::Sender), Some(SimTime::ZERO + gap));
    e.on_timer(Side::Sender, SimTime::ZERO + gap, &mut out);
    assert_eq!(out.len(), 2);
    // early: nothing leaves
    e.on_timer(Side::Sender, SimTime::ZERO + gap + SimDuration::from_ps(10), &mut out);
    assert_eq!(out.len(), 2);
    // a CNP halves the rate (alpha 1): the next packet leaves 2 x gap after the last
    let cnp = Packet { flags: kind::CNP, ..Packet::default() };
    e.on_packet(Side::Sender, &cnp, SimTime::ZERO + gap + SimDuration::from_ps(20), &mut out);
    assert_eq!(e.rate_bps(), 5e9);
    assert_eq!(e.deadline(Side::Sender), Some(SimTime::ZERO + gap + BitsPerSec(5_000_000_000).tx_time(1058)));
}

#[test]
fn without_congestion_control_a_flow_runs_at_line_rate() {
    let mut e = ends(&cfg(CcKind::None, Recovery::GoBackN), Some(100_000));
    let seen = run(&mut e, &Net::plain(2), 1000, 100_000, SimTime::MAX);
    assert_eq!(seen.data.len(), 100);
    let gap = LINE.tx_time(1058);
    for w in seen.data.windows(2) {
        assert_eq!(w[1].0.saturating_since(w[0].0), gap);
    }
    assert_eq!(e.delivered_bytes(), 100_000);
    assert!(e.sender.done() && e.deadline(Side::Sender).is_none(), "done: no timer left");
}

// --- the notification point -----------------------------------------------------------------
#[test]
fn the_receiver_sends_at_most_one_cnp_per_interval_and_only_for_dcqcn() {
    for (cc, want) in [(CcKind::Dcqcn, 3), (CcKind::None, 0), (CcKind::Timely, 0)] {
        let mut r = RoceReceiver::new(&cfg(cc, Recovery::GoBackN), ids());
        let mut out = Vec::new();
        for (psn, t_us) in [(0, 0), (1, 10), (2, 49), (3, 50), (4, 99), (5, 120)] {
            let p = Packet { flags: kind::DATA, seq: psn, payload: 1000, ecn: Ecn::Ce, ..Packet::default() };
            r.on_packet(&p, SimTime::ZERO + SimDuration::from_us(t_us), &mut out);
        }
        let cnps = out.iter().filter(|p| p.has(kind::CNP)).count();
        assert_eq!((cnps as u64, r.stats.cnps_sent, r.stats.ce_pkts), (want, want, 6), "{cc:?}: CNPs at 0, 50 and 120 us");
    }
}

#[test]
fn ce_marks_reach_the_dcqcn_sender_as_cnps_and_cut_its_rate() {
    let mut e = ends(&cfg(CcKind::Dcqcn, Recovery::GoBackN), Some(200_000));
    let net = Net { mark: |psn| psn < 20, ..Net::plain(2) };
    let seen = run(&mut e, &net, 1000, 200_000, SimTime::MAX);
    assert_eq!(e.delivered_bytes(), 200_000);
    let cnps = seen.control.iter().filter(|c| c.0 == kind::CNP).count() as u64;
    assert!(cnps >= 1);
    assert_eq!(e.sender.stats.cnps_received, cnps);
    assert_eq!(e.sender.rate_decreases(), cnps);
    assert!(e.rate_bps() < LINE.0 as f64);
}

// --- go-back-N ------------------------------------------------------------------------------
#[test]
fn go_back_n_nacks_a_gap_once_and_the_sender_rewinds_to_it() {
    let mut e = ends(&cfg(CcKind::None, Recovery::GoBackN), Some(50_000));
    let net = Net { lose_first: vec![3], ..Net::plain(5) };
    let seen = run(&mut e, &net, 1000, 50_000, SimTime::MAX);
    let nacks: Vec<_> = seen.control.iter().filter(|c| c.0 == kind::NACK).collect();
    assert_eq!(nacks, [&(kind::NACK, 3, 0)], "one NACK for the gap, carrying PSN 3");
    assert_eq!(e.receiver.stats.nacks_sent, 1);
    // the sender sent on until the NACK came back, then went back to PSN 3 and on from there
    let rewind = seen.data.iter().enumerate().filter(|d| d.1 .1 == 3).nth(1).unwrap().0;
    let after: Vec<u64> = seen.data[rewind..rewind + 4].iter().map(|d| d.1).collect();
    assert_eq!(after, [3, 4, 5, 6]);
    assert!(rewind > 4, "packets after the gap left before the NACK came back");
    assert_eq!(e.sender.stats.retransmits, seen.data.len() as u64 - 50);
    assert_eq!(e.delivered_bytes(), 50_000);
    assert_eq!(e.receiver.stats.dropped, e.sender.stats.retransmits - 1, "every packet resent but PSN 3 had arrived and was dropped");
    assert_eq!(e.sender.stats.timeouts, 0);
}

// --- selective ------------------------------------------------------------------------------
#[test]
fn selective_retransmits_only_the_missing_psn() {
    let c = cfg(CcKind::None, Recovery::Selective);
    let mut e = ends(&c, Some(50_000));
    let net = Net { lose_first: vec![3, 7], ..Net::plain(5) };
    let seen = run(&mut e, &net, 1000, 50_000, SimTime::MAX);
    assert_eq!(e.delivered_bytes(), 50_000);
    assert_eq!(e.sender.stats.retransmits, 2);
    let twice: Vec<u64> = (0..50).filter(|&p| seen.data.iter().filter(|d| d.1 == p).count() > 1).collect();
    assert_eq!(twice, [3, 7]);
    // every out-of-order arrival was NACKed with the cumulative PSN and its own PSN
    let nacks: Vec<_> = seen.control.iter().filter(|c| c.0 == kind::NACK).collect();
    assert!(nacks.len() as u64 == e.receiver.stats.nacks_sent && nacks.len() >= 2);
    assert_eq!(nacks[0], &(kind::NACK, 3, 4));
    assert_eq!((e.receiver.stats.dropped, e.sender.stats.timeouts), (0, 0));
}

#[test]
fn a_bdp_cap_bounds_the_packets_in_flight() {
    let c = RoceConfig { bdp_cap_bytes: 3000, ..cfg(CcKind::None, Recovery::Selective) };
    let mut e = ends(&c, Some(20_000));
    let mut out = Vec::new();
    e.start(SimTime::ZERO, &mut out);
    while let Some(t) = e.deadline(Side::Sender).filter(|&t| t < SimTime::ZERO + SimDuration::from_us(100)) {
        e.on_timer(Side::Sender, t, &mut out);
    }
    assert_eq!(out.len(), 3, "3000 bytes of 1000-byte packets");
    assert!(e.deadline(Side::Sender).is_some_and(|t| t >= SimTime::ZERO + SimDuration::from_us(320)), "only the timer");
    let ack = Packet { flags: kind::ACK, ack: 1, ..Packet::default() };
    e.on_packet(Side::Sender, &ack, at_ns(10_000), &mut out);
    assert_eq!(out.last().map(|p| p.seq), Some(3), "one acknowledged, one more may leave");
    let run_all = |c: &RoceConfig| {
        let mut e = ends(c, Some(20_000));
        run(&mut e, &Net { lose_first: vec![5], ..Net::plain(5) }, 1000, 20_000, SimTime::MAX);
        e.delivered_bytes()
    };
    assert_eq!(run_all(&c), 20_000);
    assert_eq!(run_all(&RoceConfig { recovery: Recovery::GoBackN, ..c.clone() }), 20_000);
}

// --- the timeout ----------------------------------------------------------------------------
#[test]
fn a_lost_tail_is_recovered_by_the_timeout() {
    for recovery in [Recovery::GoBackN, Recovery::Selective] {
        let mut e = ends(&cfg(CcKind::None, recovery), Some(10_000));
        let net = Net { lose_first: vec![9], ..Net::plain(5) };
        let seen = run(&mut e, &net, 1000, 10_000, SimTime::MAX);
        assert_eq!(e.delivered_bytes(), 10_000, "{recovery:?}");
        assert_eq!((e.sender.stats.timeouts, e.sender.stats.retransmits), (1, 1), "{recovery:?}");
        let (t_last, _) = seen.data[9];
        let (t_again, psn) = seen.data[10];
        assert_eq!(psn, 9);
        // the timer runs from the last progress: the ACK of PSN 8, 10 us after it left
        assert_eq!(t_again, seen.data[8].0 + SimDuration::from_us(10) + SimDuration::from_us(320), "{recovery:?}");
        assert!(t_again > t_last);
    }
}

// --- accounting -----------------------------------------------------------------------------
#[test]
fn delivered_and_sent_bytes_add_up() {
    for recovery in [Recovery::GoBackN, Recovery::Selective] {
        let c = RoceConfig { mtu_bytes: 700, ..cfg(CcKind::Dcqcn, recovery) };
        let size = 33_333u64;
        let mut e = ends(&c, Some(size));
        let net = Net { lose_first: vec![2, 10, 47], mark: |psn| psn % 5 == 0, delay: SimDuration::from_us(3) };
        let seen = run(&mut e, &net, 700, size, SimTime::MAX);
        let s = e.sender_stats();
        let pkts = size.div_ceil(700);
        assert_eq!(e.delivered_bytes(), size, "{recovery:?}");
        assert_eq!(s.bytes_acked, size);
        assert_eq!(s.data_segments_sent, pkts + s.retransmits);
        assert_eq!(e.data_pkts_sent(), seen.data.len() as u64);
        // payload sent = every packet's payload once + the retransmitted copies' payloads
        let resent: u64 = seen.data.iter().enumerate().filter(|(i, d)| seen.data[..*i].iter().any(|e| e.1 == d.1)).map(|(_, d)| if d.1 == pkts - 1 { size - 700 * (pkts - 1) } else { 700 }).sum();
        assert_eq!(s.bytes_sent, size + resent);
        assert_eq!(seen.arrivals, seen.data.len() as u64 - 3, "every copy that was not lost arrived");
        let sum = RoceEnds::summary(&[&e]);
        assert_eq!(sum[0], ("roce_cnps_sent", e.receiver.stats.cnps_sent));
        assert!(sum.iter().all(|(k, _)| k.starts_with("roce_")));
    }
}

// --- TIMELY through the ends -----------------------------------------------------------------
#[test]
fn timely_slows_down_on_a_long_rtt_and_keeps_line_rate_on_a_short_one() {
    let mut e = ends(&cfg(CcKind::Timely, Recovery::GoBackN), None);
    run(&mut e, &Net::plain(300), 1000, u64::MAX, SimTime::ZERO + SimDuration::from_ms(5));
    assert!(e.rate_bps() < 1e9, "RTT 600 us > T_high: {}", e.rate_bps());
    let mut e = ends(&cfg(CcKind::Timely, Recovery::GoBackN), None);
    run(&mut e, &Net::plain(5), 1000, u64::MAX, SimTime::ZERO + SimDuration::from_ms(1));
    assert_eq!(e.rate_bps(), 10e9, "RTT 10 us < T_low");
}
