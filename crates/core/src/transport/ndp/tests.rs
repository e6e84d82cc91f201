//! NDP's rules, end by end and at a port.

use super::*;
use super::port::NdpPort;
use crate::qdisc::droptail::DropTail;
use crate::qdisc::testkit::ctx;
use crate::qdisc::{Limit, Qdisc, QdiscEvents};
use crate::tcp::FlowIds;
use crate::time::SimDuration;

fn ids() -> FlowIds {
    FlowIds { flow: 0, src: 1, dst: 2, sport: 10, dport: 20 }
}

fn rng() -> crate::rng::Rng {
    crate::rng::Streams::new(1).stream("ndp.paths", 0)
}

fn cfg() -> NdpConfig {
    NdpConfig { mss_bytes: 1000, header_bytes: 50, initial_window_pkts: 4, ..NdpConfig::default() }
}

fn t(us: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_us(us)
}

#[test]
fn the_sender_opens_with_its_window_then_sends_one_packet_per_pull() {
    let mut s = NdpSender::new(&cfg(), ids(), Some(10_500), rng());
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(out.len(), 4, "the initial window at once");
    assert!(out.iter().enumerate().all(|(i, p)| p.seq == i as u64 * 1000 && p.size == 1050 && p.proto == crate::packet::Proto::Ndp));
    out.clear();
    // a PULL with count 3 asks for three packets (two PULLs before it were lost)
    let pull = Packet { flags: kind::PULL, ack: 3, ..ids().reverse() };
    s.on_packet(&pull, t(10), &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![4000, 5000, 6000]);
    // an old PULL asks for nothing more
    out.clear();
    s.on_packet(&Packet { ack: 2, ..pull.clone() }, t(11), &mut out);
    assert!(out.is_empty());
    // the last packet is short: 11 packets for 10,500 bytes
    s.on_packet(&Packet { ack: 10, ..pull }, t(12), &mut out);
    assert_eq!(out.last().map(|p| (p.seq, p.payload)), Some((10_000, 500)));
}

#[test]
fn a_nack_queues_the_packet_ahead_of_new_data_for_the_next_pull() {
    let mut s = NdpSender::new(&cfg(), ids(), None, rng());
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    out.clear();
    s.on_packet(&Packet { flags: kind::NACK, seq: 2000, ..ids().reverse() }, t(5), &mut out);
    assert!(out.is_empty(), "a NACK alone sends nothing");
    s.on_packet(&Packet { flags: kind::PULL, ack: 2, ..ids().reverse() }, t(6), &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![2000, 4000], "the resend first, then new data");
    assert_eq!(s.stats.retransmits, 1);
}

#[test]
fn an_unanswered_packet_is_resent_on_its_timeout_and_acks_end_the_flow() {
    let mut s = NdpSender::new(&cfg(), ids(), Some(2000), rng());
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    assert_eq!(out.len(), 2);
    out.clear();
    s.on_packet(&Packet { flags: kind::ACK, seq: 0, ..ids().reverse() }, t(10), &mut out);
    assert_eq!(s.next_deadline(), Some(t(1000)), "the oldest unanswered packet's timeout (rto 1 ms)");
    s.on_timer(t(1000), &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1000]);
    assert_eq!(s.stats.timeouts, 1);
    s.on_packet(&Packet { flags: kind::ACK, seq: 1000, ..ids().reverse() }, t(1010), &mut out);
    assert!(s.is_done());
    assert_eq!(s.next_deadline(), None);
}

#[test]
fn the_receiver_acks_or_nacks_every_packet_with_a_pull_and_delivers_in_order() {
    let mut r = NdpReceiver::new(&cfg(), ids());
    let mut out = Vec::new();
    let data = |seq: u64, payload: u32| Packet { flags: kind::DATA, seq, payload, size: payload + 50, ..ids().forward() };
    r.on_packet(&data(1000, 1000), t(1), &mut out);
    assert_eq!(r.delivered_bytes(), 0, "packet 0 is missing");
    let trimmed = Packet { flags: kind::DATA, size: 50, ..data(0, 1000) };
    r.on_packet(&trimmed, t(2), &mut out);
    r.on_packet(&data(0, 1000), t(3), &mut out);
    r.on_packet(&data(2000, 300), t(4), &mut out);
    r.on_packet(&data(2000, 300), t(5), &mut out);
    assert_eq!(r.delivered_bytes(), 2300);
    let kinds: Vec<(u8, u64, u64)> = out.iter().map(|p| (p.flags, p.seq, p.ack)).collect();
    assert_eq!(
        kinds,
        vec![
            (kind::ACK, 1000, 0),
            (kind::PULL, 0, 1),
            (kind::NACK, 0, 0),
            (kind::PULL, 0, 2),
            (kind::ACK, 0, 0),
            (kind::PULL, 0, 3),
            (kind::ACK, 2000, 0),
            (kind::PULL, 0, 4),
            (kind::ACK, 2000, 0),
            (kind::PULL, 0, 5),
        ]
    );
    assert!(out.iter().all(|p| p.size == 50 && (p.priority == PULL_PRIORITY) == (p.flags == kind::PULL)));
    assert_eq!(r.stats.duplicates, 1);
}

fn port(host: bool, weight: u32) -> NdpPort<Packet, AnyQdisc> {
    let c = NdpConfig { trim_threshold_pkts: 2, header_weight: weight, ..cfg() };
    let inner = AnyQdisc::DropTail(DropTail::new(Limit::pkts(100)));
    NdpPort::new(&c, inner, &crate::qdisc::PortContext { host, ..ctx(1) })
}

fn data(seq: u64) -> Packet {
    Packet { proto: crate::packet::Proto::Ndp, flags: kind::DATA, seq, payload: 1000, size: 1050, ..ids().forward() }
}

#[test]
fn a_switch_port_trims_above_its_threshold_and_sends_headers_first_by_weight() {
    let mut q = port(false, 2);
    let mut ev = QdiscEvents::default();
    let mut trimmed = 0;
    for i in 0..6 {
        ev.clear();
        ev.cut_bytes = 0; // what the port's queue does once it has counted a trim
        q.enqueue(data(i * 1000), t(0), &mut ev);
        assert!(ev.dropped.is_empty());
        trimmed += (ev.cut_bytes == 1000) as u32;
    }
    // 2 x 1000 payload bytes: the data queue takes one 1050-byte packet, the next would exceed
    assert_eq!((trimmed, q.data.len_pkts(), q.headers_len()), (5, 1, 5));
    assert_eq!(q.len_bytes(), 1050 + 5 * 50);
    // a TCP packet goes to the data queue untouched
    ev.clear();
    q.enqueue(Packet { size: 1500, payload: 1460, ..ids().forward() }, t(0), &mut ev);
    let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(t(1), &mut ev)).map(|p| p.size).collect();
    assert_eq!(order, vec![50, 50, 1050, 50, 50, 1500, 50], "two headers, one data packet, two headers, ...");
    assert!(order.iter().zip([true, true, false, true, true, false, true]).all(|(&s, h)| (s == 50) == h));
}

#[test]
fn trimmed_headers_keep_their_payload_field_and_a_host_port_never_trims() {
    let mut q = port(true, 0);
    let mut ev = QdiscEvents::default();
    for i in 0..6 {
        q.enqueue(data(i * 1000), t(0), &mut ev);
    }
    assert_eq!((q.data.len_pkts(), q.headers_len()), (6, 0));
    let mut s = port(false, 0);
    s.enqueue(data(0), t(0), &mut ev);
    s.enqueue(data(1000), t(0), &mut ev);
    s.enqueue(data(2000), t(0), &mut ev);
    let first = s.dequeue(t(0), &mut ev).unwrap();
    assert!(super::trimmed(&first) && first.size == 50 && first.payload == 1000);
}

#[test]
fn a_host_nic_paces_pulls_to_one_per_data_packet_time() {
    let mut q = port(true, 0);
    let mut ev = QdiscEvents::default();
    let pull = |n| Packet { proto: crate::packet::Proto::Ndp, flags: kind::PULL, ack: n, size: 50, priority: PULL_PRIORITY, ..ids().reverse() };
    for n in 1..=3 {
        q.enqueue(pull(n), t(0), &mut ev);
    }
    // 1050 bytes at 100 Mbit/s: 84 us apart
    let gap = SimDuration::from_ps(84_000_000);
    assert_eq!(q.dequeue(t(0), &mut ev).map(|p| p.ack), Some(1));
    assert!(q.dequeue(t(0), &mut ev).is_none());
    assert_eq!(q.ready_at(), Some(SimTime::ZERO + gap));
    assert_eq!(q.dequeue(SimTime::ZERO + gap, &mut ev).map(|p| p.ack), Some(2));
    // an ACK is not paced
    q.enqueue(Packet { flags: kind::ACK, priority: 0, ..pull(0) }, t(0), &mut ev);
    assert_eq!(q.dequeue(SimTime::ZERO + gap, &mut ev).map(|p| p.flags), Some(kind::ACK));
}

#[test]
fn a_sender_takes_every_path_number_once_per_cycle() {
    let mut s = NdpSender::new(&NdpConfig { initial_window_pkts: 512, ..cfg() }, ids(), None, rng());
    let mut out = Vec::new();
    s.start(t(0), &mut out);
    for cycle in out.chunks(config::PATH_NUMBERS as usize) {
        let mut ports: Vec<u16> = cycle.iter().map(|p| p.sport).collect();
        ports.sort();
        assert_eq!(ports, (0..config::PATH_NUMBERS).collect::<Vec<_>>());
    }
    assert_ne!(out[0].sport, out[256].sport, "a new order for each cycle (this seed)");
}

#[test]
fn a_host_nic_serves_the_pulls_of_its_flows_in_turn() {
    let mut q = port(true, 0);
    let mut ev = QdiscEvents::default();
    let pull = |dport: u16, n| Packet { proto: crate::packet::Proto::Ndp, flags: kind::PULL, ack: n, size: 50, priority: PULL_PRIORITY, dport, ..ids().reverse() };
    for n in 1..=3 {
        q.enqueue(pull(1, n), t(0), &mut ev);
    }
    q.enqueue(pull(2, 1), t(0), &mut ev);
    let mut now = SimTime::ZERO;
    let mut order = Vec::new();
    while let Some(p) = q.dequeue(now, &mut ev).or_else(|| q.ready_at().and_then(|at| { now = at; q.dequeue(now, &mut ev) })) {
        order.push((p.dport, p.ack));
    }
    assert_eq!(order, vec![(1, 1), (2, 1), (1, 2), (1, 3)]);
}
