//! Tests of FQ-CoDel: classification, the new and old lists, the quantum, overflow batches, CoDel
//! per queue, ECN, accounting, configuration.

use super::*;
use crate::packet::{hash_flow, Ecn};
use crate::qdisc::testkit::{check_accounting, ctx, pkt};
use crate::qdisc::{MarkReason, Queue};
use crate::time::SimDuration;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const T0: SimTime = SimTime::ZERO;

fn fq(c: FqCodelConfig, limit: Limit) -> FqCodel {
    FqCodel::new(&c, limit, &ctx(1))
}

fn dflt() -> FqCodelConfig {
    FqCodelConfig::default()
}

/// `n` flow ids hashed to `n` different queues.
fn distinct_flows(q: &FqCodel, n: usize) -> Vec<u32> {
    let mut seen = HashSet::new();
    (1..).filter(|&f| seen.insert(q.queue_of(&pkt(f, 0, 0)))).take(n).collect()
}

fn drain(q: &mut FqCodel, now: SimTime) -> Vec<Packet> {
    let mut ev = QdiscEvents::default();
    std::iter::from_fn(|| q.dequeue(now, &mut ev)).collect()
}

fn assert_per_flow_order(out: &[Packet]) {
    let mut last = HashMap::new();
    for p in out {
        if let Some(&s) = last.get(&p.flow) {
            assert!(p.seq > s, "flow {} reordered: {} after {}", p.flow, p.seq, s);
        }
        last.insert(p.flow, p.seq);
    }
}

#[test]
fn the_queue_index_is_the_hash_modulo_flows_also_when_masked() {
    // the salt is the first draw of the port's stream ("qdisc.fq_codel", port index)
    let salt: u64 = ctx(1).streams.stream("qdisc.fq_codel", 0).gen();
    for flows in [1024, 1000, 1, 64] {
        let q = fq(FqCodelConfig { flows, ..dflt() }, Limit::pkts(100));
        let mut hit = HashSet::new();
        for f in 0..20_000 {
            let p = pkt(f, 0, 0);
            let i = q.queue_of(&p);
            assert_eq!(i as u64, hash_flow(p.flow_key(), salt) % flows as u64);
            hit.insert(i);
        }
        assert_eq!(hit.len(), flows as usize, "20000 flows reach every one of {flows} queues");
    }
}

#[test]
fn visiting_an_empty_queue_does_what_the_law_does_with_one() {
    // `dequeue` skips the law for a queue found empty; the law itself would only end its
    // dropping state, keeping the rest (count, lastcount, drop_next, first_above_time).
    let p = CodelParams::new(5.0, 100.0, false, None, 1500);
    for dropping in [false, true] {
        let v0 = CodelVars { first_above_time: SimTime(7), drop_next: SimTime(9), count: 3, lastcount: 2, rec_inv_sqrt: 0, dropping };
        let mut v = v0;
        let mut store: Store<Packet> = Store::new(4);
        let mut ev = QdiscEvents::default();
        let Store { cells, .. } = &mut store;
        let mut fifo = EMPTY_SLOT.fifo;
        assert!(v.dequeue(&p, &mut QueueView { cells, fifo: &mut fifo }, SimTime(100), &mut ev).is_none());
        assert_eq!(v, CodelVars { dropping: false, ..v0 });
        assert!(ev.dropped.is_empty());
    }
    // and the discipline does the same when its dequeue finds a queue empty in a list: a's
    // one packet leaves while its law is dropping (sojourn above target, b's backlog above
    // one MTU, the next drop not yet due), so the law is still dropping when the next
    // dequeue finds a empty at the head of the new list
    let mut q = fq(FqCodelConfig { target_us: 5.0, interval_us: 100.0, ..dflt() }, Limit::pkts(1000));
    let f = distinct_flows(&q, 2);
    let a = q.queue_of(&pkt(f[0], 0, 0));
    let mut ev = QdiscEvents::default();
    q.enqueue(pkt(f[0], 0, 1500), T0, &mut ev);
    for s in 0..50 {
        q.enqueue(pkt(f[1], s, 1500), T0, &mut ev);
    }
    let far = SimTime::ZERO + SimDuration::from_us(1_000_000);
    q.store.slots[a as usize].vars =
        CodelVars { first_above_time: SimTime(1), drop_next: far, count: 3, lastcount: 2, rec_inv_sqrt: 0, dropping: true };
    let t = T0 + SimDuration::from_us(10);
    assert_eq!(q.dequeue(t, &mut ev).unwrap().flow, f[0]);
    let dropping = *q.codel_vars(a);
    assert!(dropping.dropping && ev.dropped.is_empty(), "{dropping:?}");
    assert_eq!(q.dequeue(t, &mut ev).unwrap().flow, f[1]);
    assert_eq!(*q.codel_vars(a), CodelVars { dropping: false, ..dropping });
    assert_eq!(q.store.slots[a as usize].list, InList::None, "the old list was empty: a left the lists");
}

// --- new flows first ----------------------------------------------------------------------
#[test]
fn a_new_sparse_flow_is_served_before_the_backlog() {
    // a and b arrive together and are both new: each sends its first quantum (two 1500-byte
    // packets) before joining the old list; from then on they are the backlog.
    for warmup in 4..16 {
        let mut q = fq(dflt(), Limit::pkts(1000));
        let f = distinct_flows(&q, 3);
        let (a, b, c) = (f[0], f[1], f[2]);
        let mut ev = QdiscEvents::default();
        for s in 0..20 {
            q.enqueue(pkt(a, s, 1500), T0, &mut ev);
            q.enqueue(pkt(b, s, 1500), T0, &mut ev);
        }
        for _ in 0..warmup {
            q.dequeue(T0, &mut ev).unwrap();
        }
        q.enqueue(pkt(c, 0, 100), T0, &mut ev);
        let p = q.dequeue(T0, &mut ev).unwrap();
        assert_eq!(p.flow, c, "after {warmup} departures the sparse packet waited");
    }
}

#[test]
fn a_new_flow_that_empties_moves_to_the_old_list() {
    let mut q = fq(dflt(), Limit::pkts(1000));
    let f = distinct_flows(&q, 3);
    let (a, b, c) = (f[0], f[1], f[2]);
    let qc = q.queue_of(&pkt(c, 0, 0));
    let mut ev = QdiscEvents::default();
    for s in 0..20 {
        q.enqueue(pkt(a, s, 1500), T0, &mut ev);
        q.enqueue(pkt(b, s, 1500), T0, &mut ev);
    }
    for _ in 0..6 {
        q.dequeue(T0, &mut ev).unwrap();
    }
    q.enqueue(pkt(c, 0, 1500), T0, &mut ev);
    assert_eq!(q.dequeue(T0, &mut ev).unwrap().flow, c);
    // the next dequeue finds c empty at the head of the new list: it goes to the old list
    assert_ne!(q.dequeue(T0, &mut ev).unwrap().flow, c);
    assert_eq!(q.store.slots[qc as usize].list, InList::Old);
    // with the old list empty, an emptied new flow leaves the lists at once
    let mut q2 = fq(dflt(), Limit::pkts(1000));
    q2.enqueue(pkt(c, 0, 100), T0, &mut ev);
    q2.dequeue(T0, &mut ev).unwrap();
    assert!(q2.dequeue(T0, &mut ev).is_none());
    assert_eq!(q2.store.slots[qc as usize].list, InList::None);
    assert_eq!((q2.new_flows.head, q2.old_flows.head), (NIL, NIL));
}

#[test]
fn a_flow_that_refills_as_soon_as_it_empties_gets_no_more_than_its_share() {
    // c sends its next 1500-byte packet one departure after the previous one left. Were
    // an emptied new flow dropped from the lists, c would come back as new each time and
    // take every other departure; in the old list it waits its turn behind a and b.
    let mut q = fq(dflt(), Limit::pkts(1000));
    let f = distinct_flows(&q, 3);
    let (a, b, c) = (f[0], f[1], f[2]);
    let mut ev = QdiscEvents::default();
    let mut seq = [0u64; 3];
    let mut refill_at = Some(0usize);
    let mut share = 0;
    for k in 0..3000 {
        for (i, &fl) in [a, b].iter().enumerate() {
            while q.store.backlog(q.queue_of(&pkt(fl, 0, 0))) < 15_000 {
                seq[i] += 1;
                q.enqueue(pkt(fl, seq[i], 1500), T0, &mut ev);
            }
        }
        if refill_at == Some(k) {
            seq[2] += 1;
            q.enqueue(pkt(c, seq[2], 1500), T0, &mut ev);
            refill_at = None;
        }
        if q.dequeue(T0, &mut ev).unwrap().flow == c {
            share += 1;
            refill_at = Some(k + 2);
        }
    }
    let share = share as f64 / 3000.0;
    assert!((0.2..0.36).contains(&share), "c took {share} of the departures");
}

#[test]
fn a_flow_sending_below_its_fair_rate_never_waits_behind_the_backlog() {
    // 4 backlogged flows and one that sends a 200-byte packet every 20 departures
    let mut q = fq(dflt(), Limit::pkts(10_000));
    let f = distinct_flows(&q, 5);
    let mut ev = QdiscEvents::default();
    let mut seq = [0u64; 5];
    let mut worst = 0;
    let mut waiting: Option<u32> = None;
    for step in 0..5000 {
        for i in 0..4 {
            if q.store.backlog(q.queue_of(&pkt(f[i], 0, 0))) < 15_000 {
                seq[i] += 1;
                q.enqueue(pkt(f[i], seq[i], 1500), T0, &mut ev);
            }
        }
        if step % 20 == 10 {
            seq[4] += 1;
            q.enqueue(pkt(f[4], seq[4], 200), T0, &mut ev);
            waiting = Some(0);
        }
        let p = q.dequeue(T0, &mut ev).unwrap();
        if let Some(w) = waiting.as_mut() {
            *w += 1;
            if p.flow == f[4] {
                worst = worst.max(*w);
                waiting = None;
            }
        }
    }
    assert!(ev.dropped.is_empty());
    assert_eq!(worst, 1, "the sparse packet always left at the next departure");
}

// --- DRR ----------------------------------------------------------------------------------
#[test]
fn backlogged_flows_get_equal_bytes_whatever_their_packet_sizes() {
    let mut q = fq(dflt(), Limit::pkts(100_000));
    let f = distinct_flows(&q, 3);
    let sizes = [1500u32, 300, 64];
    let mut ev = QdiscEvents::default();
    for (i, &fl) in f.iter().enumerate() {
        for s in 0..(600_000 / sizes[i] as u64) {
            q.enqueue(pkt(fl, s, sizes[i]), T0, &mut ev);
        }
    }
    let mut served = [0u64; 3];
    let mut total = 0;
    while total < 300_000 {
        let p = q.dequeue(T0, &mut ev).unwrap();
        let i = f.iter().position(|&x| x == p.flow).unwrap();
        served[i] += p.size as u64;
        total += p.size as u64;
    }
    assert!(ev.dropped.is_empty());
    let (lo, hi) = (served.iter().min().unwrap(), served.iter().max().unwrap());
    assert!(hi - lo <= 1514 + 1500, "{served:?}");
}

#[test]
fn the_quantum_sets_how_much_a_flow_sends_per_turn() {
    let c = FqCodelConfig { quantum_bytes: 3000, ..dflt() };
    let mut q = fq(c, Limit::pkts(1000));
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    for s in 0..10 {
        q.enqueue(pkt(f[0], s, 1000), T0, &mut ev);
        q.enqueue(pkt(f[1], s, 1000), T0, &mut ev);
    }
    let order: Vec<u32> = drain(&mut q, T0).iter().map(|p| p.flow).collect();
    let (a, b) = (f[0], f[1]);
    // 3 packets per turn (deficit 3000 > 0 until the third), then the other flow
    assert_eq!(&order[..12], &[a, a, a, b, b, b, a, a, a, b, b, b]);
}

// --- overflow -----------------------------------------------------------------------------
#[test]
fn overflow_drops_a_batch_from_the_head_of_the_fattest_queue_and_keeps_the_arrival() {
    let mut q = fq(dflt(), Limit::pkts(20));
    let f = distinct_flows(&q, 3);
    let (a, b, c) = (f[0], f[1], f[2]);
    let mut ev = QdiscEvents::default();
    for s in 0..14 {
        q.enqueue(pkt(a, s, 1500), T0, &mut ev);
    }
    for s in 0..6 {
        q.enqueue(pkt(b, s, 1500), T0, &mut ev);
    }
    assert!(ev.dropped.is_empty());
    q.enqueue(pkt(c, 0, 1500), T0, &mut ev);
    // a holds 21000 bytes: 7 packets (half its bytes) go, from its head
    let got: Vec<(u32, u64, DropReason, bool)> =
        ev.dropped.iter().map(|d| (d.pkt.flow, d.pkt.seq, d.reason, d.queued)).collect();
    let want: Vec<_> = (0..7).map(|s| (a, s, DropReason::LongestQueue, true)).collect();
    assert_eq!(got, want);
    assert_eq!(q.len_pkts(), 14);
    let qa = q.queue_of(&pkt(a, 0, 0));
    assert_eq!(q.codel_vars(qa).count, 7, "CoDel's count grows by the batch");
    let out = drain(&mut q, T0);
    assert!(out.iter().any(|p| p.flow == c), "the arrival was kept");
    assert_eq!(out.iter().filter(|p| p.flow == a).map(|p| p.seq).min(), Some(7));
}

#[test]
fn the_batch_is_capped_by_drop_batch() {
    let mut q = fq(FqCodelConfig { drop_batch: 3, ..dflt() }, Limit::pkts(20));
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    for s in 0..20 {
        q.enqueue(pkt(f[0], s, 1500), T0, &mut ev);
    }
    q.enqueue(pkt(f[1], 0, 1500), T0, &mut ev);
    assert_eq!(ev.dropped.iter().map(|d| d.pkt.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(q.len_pkts(), 18);
}

#[test]
fn the_fattest_queue_is_chosen_by_bytes_not_packets() {
    let mut q = fq(dflt(), Limit::pkts(14));
    let f = distinct_flows(&q, 3);
    let mut ev = QdiscEvents::default();
    for s in 0..10 {
        q.enqueue(pkt(f[0], s, 100), T0, &mut ev); // 10 packets, 1000 bytes
    }
    for s in 0..4 {
        q.enqueue(pkt(f[1], s, 1500), T0, &mut ev); // 4 packets, 6000 bytes
    }
    q.enqueue(pkt(f[2], 0, 64), T0, &mut ev);
    assert_eq!(ev.dropped.iter().map(|d| (d.pkt.flow, d.pkt.seq)).collect::<Vec<_>>(), vec![(f[1], 0), (f[1], 1)]);
}

#[test]
fn zero_size_packets_cannot_stall_the_overflow() {
    let mut q = fq(dflt(), Limit::pkts(2));
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    q.enqueue(pkt(f[0], 0, 0), T0, &mut ev);
    q.enqueue(pkt(f[0], 1, 0), T0, &mut ev);
    q.enqueue(pkt(f[1], 0, 0), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    assert_eq!((ev.dropped[0].pkt.flow, ev.dropped[0].queued), (f[1], false));
    assert_eq!(q.len_pkts(), 2);
}

#[test]
fn an_arrival_that_alone_makes_the_fattest_queue_is_refused() {
    let mut q = fq(dflt(), Limit::pkts(3));
    let f = distinct_flows(&q, 4);
    let mut ev = QdiscEvents::default();
    for &fl in &f[..3] {
        q.enqueue(pkt(fl, 0, 100), T0, &mut ev);
    }
    q.enqueue(pkt(f[3], 0, 1500), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    let d = &ev.dropped[0];
    assert_eq!((d.pkt.flow, d.reason, d.queued), (f[3], DropReason::LongestQueue, false));
    assert_eq!(q.len_pkts(), 3);
    // its queue stays in the new list, empty, and is skipped by the next dequeues
    let out = drain(&mut q, T0);
    assert_eq!(out.len(), 3);
}

#[test]
fn the_arrivals_own_queue_loses_its_oldest_packets() {
    let mut q = fq(dflt(), Limit::pkts(10));
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    for s in 0..8 {
        q.enqueue(pkt(f[0], s, 1500), T0, &mut ev);
    }
    for s in 0..2 {
        q.enqueue(pkt(f[1], s, 1500), T0, &mut ev);
    }
    q.enqueue(pkt(f[0], 8, 1500), T0, &mut ev);
    assert_eq!(ev.dropped.iter().map(|d| (d.pkt.seq, d.queued)).collect::<Vec<_>>(), (0..5).map(|s| (s, true)).collect::<Vec<_>>());
    let out = drain(&mut q, T0);
    assert!(out.iter().any(|p| p.flow == f[0] && p.seq == 8));
}

#[test]
fn a_byte_limit_drops_batches_until_the_buffer_fits() {
    let mut q = fq(FqCodelConfig { drop_batch: 1, ..dflt() }, Limit { pkts: None, bytes: Some(6000) });
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    for s in 0..4 {
        q.enqueue(pkt(f[0], s, 1500), T0, &mut ev);
    }
    q.enqueue(pkt(f[1], 0, 4000), T0, &mut ev);
    // 10000 bytes: f0 (6000) loses one packet, then f1 (4000) is fattest: the arrival goes
    let got: Vec<(u32, bool)> = ev.dropped.iter().map(|d| (d.pkt.flow, d.queued)).collect();
    assert_eq!(got, vec![(f[0], true), (f[0], true), (f[1], false)]);
    assert_eq!(q.len_bytes(), 3000);
    // a packet larger than the whole buffer is refused at once
    ev.clear();
    q.enqueue(pkt(f[1], 1, 6001), T0, &mut ev);
    assert_eq!((ev.dropped.len(), ev.dropped[0].reason), (1, DropReason::Overflow));
}

// --- hashing ------------------------------------------------------------------------------
#[test]
fn colliding_flows_share_one_fifo() {
    let mut q = fq(FqCodelConfig { flows: 1, ..dflt() }, Limit::pkts(100));
    let mut ev = QdiscEvents::default();
    let arrivals: Vec<(u32, u64)> = (0..30).map(|i| (1 + i % 3, i as u64)).collect();
    for &(fl, s) in &arrivals {
        q.enqueue(pkt(fl, s, 700 + 100 * fl), T0, &mut ev);
    }
    let out: Vec<(u32, u64)> = drain(&mut q, T0).iter().map(|p| (p.flow, p.seq)).collect();
    assert_eq!(out, arrivals, "one queue: arrival order");
    // two flows that collide among 8 queues also share: their packets leave in arrival order
    let mut q = fq(FqCodelConfig { flows: 8, ..dflt() }, Limit::pkts(100));
    let x = 1;
    let y = (2..).find(|&y| q.queue_of(&pkt(y, 0, 0)) == q.queue_of(&pkt(x, 0, 0))).unwrap();
    let z = (2..).find(|&z| q.queue_of(&pkt(z, 0, 0)) != q.queue_of(&pkt(x, 0, 0))).unwrap();
    for s in 0..6 {
        q.enqueue(pkt(x, s, 1500), T0, &mut ev);
        q.enqueue(pkt(y, s, 1500), T0, &mut ev);
    }
    for s in 0..6 {
        q.enqueue(pkt(z, s, 1500), T0, &mut ev);
    }
    let out = drain(&mut q, T0);
    let shared: Vec<u32> = out.iter().filter(|p| p.flow != z).map(|p| p.flow).collect();
    assert_eq!(shared, [x, y].repeat(6));
    // and together they get the share of one queue: z sends half of the bytes in the first 12
    assert_eq!(out[..12].iter().filter(|p| p.flow == z).count(), 6);
}

fn run(seed: u64) -> Vec<u64> {
    let c = FqCodelConfig { flows: 16, target_us: 2.0, interval_us: 20.0, ..dflt() };
    let mut q = Queue::new(FqCodel::new(&c, Limit::pkts(30), &ctx(seed)));
    let mut ev = QdiscEvents::default();
    let mut log = Vec::new();
    let mut now = SimTime::ZERO;
    for i in 0..5000u64 {
        now += SimDuration::from_us(1);
        q.enqueue(pkt((i * 7 % 40) as u32, i, 200 + (i * 53 % 1300) as u32), now, &mut ev);
        log.extend(ev.dropped.drain(..).map(|d| d.pkt.uid | 1 << 63));
        if i % 2 == 0 {
            if let Some(p) = q.dequeue(now, &mut ev) {
                log.push(p.uid);
            }
            log.extend(ev.dropped.drain(..).map(|d| d.pkt.uid | 1 << 63));
        }
    }
    log
}

#[test]
fn same_seed_same_run_other_seed_other_hash() {
    let a = run(7);
    assert_eq!(a, run(7));
    assert_ne!(a, run(8));
}

// --- CoDel per queue ----------------------------------------------------------------------
#[test]
fn codel_acts_on_the_backlogged_queue_only() {
    // data-center scaling: 5 us / 100 us. One departure per 1.2 us (1500 B at 10 Gbps);
    // flow a offers twice the link rate, flow b one 200-byte packet every 24 us.
    let c = FqCodelConfig { target_us: 5.0, interval_us: 100.0, ..dflt() };
    let mut q = Queue::new(FqCodel::new(&c, Limit::pkts(1000), &ctx(1)));
    let mut ev = QdiscEvents::default();
    let f = distinct_flows(&q.qdisc, 2);
    let (a, b) = (f[0], f[1]);
    let mut now = SimTime::ZERO;
    let (mut sa, mut sb) = (0, 0);
    let mut enq_b = HashMap::new();
    let mut worst_b = SimDuration::ZERO;
    let mut drops = HashMap::new();
    for step in 0..20_000u64 {
        now += SimDuration::from_ps(1_200_000);
        for _ in 0..2 {
            sa += 1;
            q.enqueue(pkt(a, sa, 1500), now, &mut ev);
        }
        if step % 20 == 10 {
            sb += 1;
            q.enqueue(pkt(b, sb, 200), now, &mut ev);
            enq_b.insert(sb, now);
        }
        for d in ev.dropped.drain(..) {
            *drops.entry((d.pkt.flow, d.reason)).or_insert(0) += 1;
        }
        if let Some(p) = q.dequeue(now, &mut ev) {
            if p.flow == b {
                worst_b = worst_b.max(now - enq_b[&p.seq]);
            }
        }
        for d in ev.dropped.drain(..) {
            *drops.entry((d.pkt.flow, d.reason)).or_insert(0) += 1;
        }
    }
    assert!(drops.keys().all(|&(fl, _)| fl == a), "{drops:?}");
    assert!(drops[&(a, DropReason::Codel)] > 100, "{drops:?}");
    assert_eq!(worst_b, SimDuration::ZERO, "b's packets leave at the departure they arrive at");
}

#[test]
fn ecn_mode_marks_instead_of_dropping() {
    let c = FqCodelConfig { target_us: 5.0, interval_us: 100.0, ecn: true, ..dflt() };
    for (e, marks_expected) in [(Ecn::Ect0, true), (Ecn::NotEct, false)] {
        let mut q = Queue::new(FqCodel::new(&c, Limit::pkts(100_000), &ctx(1)));
        let mut ev = QdiscEvents::default();
        let mut now = SimTime::ZERO;
        for step in 0..20_000u64 {
            now += SimDuration::from_ps(1_200_000);
            for k in 0..2 {
                q.enqueue(Packet { ecn: e, ..pkt(1, 2 * step + k, 1500) }, now, &mut ev);
            }
            q.dequeue(now, &mut ev);
        }
        let marks = q.stats.by_reason.marks[MarkReason::Codel as usize];
        let drops = q.stats.drops_by_reason(DropReason::Codel);
        if marks_expected {
            assert!(marks > 100 && drops == 0, "{e:?}: marks {marks} drops {drops}");
        } else {
            assert!(marks == 0 && drops > 100, "{e:?}: marks {marks} drops {drops}");
        }
    }
}

// --- accounting and order -------------------------------------------------------------------
#[test]
fn no_reordering_within_a_flow() {
    let c = FqCodelConfig { flows: 4, quantum_bytes: 300, target_us: 3.0, interval_us: 30.0, drop_batch: 4, ..dflt() };
    let ops: Vec<(bool, u32, u32)> =
        (0..20_000u32).map(|i| (i % 5 < 3, (i * 13) % 10, 40 + (i * 97) % 1460)).collect();
    let out = check_accounting(FqCodel::new(&c, Limit::pkts(25), &ctx(2)), &ops);
    assert!(out.len() > 5000);
    assert_per_flow_order(&out);
}

proptest! {
    #[test]
    fn accounting_holds(ops in proptest::collection::vec((proptest::bool::weighted(0.65), 0u32..12, 40u32..1500), 1..400),
                        ecn in proptest::bool::ANY) {
        let c = FqCodelConfig { flows: 4, quantum_bytes: 500, target_us: 2.0, interval_us: 10.0, drop_batch: 3, ecn, ..dflt() };
        let out = check_accounting(FqCodel::new(&c, Limit::pkts(8), &ctx(1)), &ops);
        assert_per_flow_order(&out);
    }

    #[test]
    fn accounting_holds_with_a_byte_limit(ops in proptest::collection::vec((proptest::bool::weighted(0.65), 0u32..12, 40u32..1500), 1..400)) {
        let c = FqCodelConfig { flows: 4, quantum_bytes: 1, target_us: 1.0, interval_us: 4.0, drop_batch: 2, ..dflt() };
        let out = check_accounting(FqCodel::new(&c, Limit { pkts: Some(10), bytes: Some(5000) }, &ctx(1)), &ops);
        assert_per_flow_order(&out);
    }
}

// --- configuration ------------------------------------------------------------------------
#[test]
fn validate_names_the_key() {
    assert_eq!(dflt().validate(), Ok(()));
    let bad = |c: FqCodelConfig| c.validate().unwrap_err().key;
    assert_eq!(bad(FqCodelConfig { flows: 0, ..dflt() }), "flows");
    assert_eq!(bad(FqCodelConfig { flows: MAX_FLOWS + 1, ..dflt() }), "flows");
    assert_eq!(bad(FqCodelConfig { quantum_bytes: 0, ..dflt() }), "quantum_bytes");
    assert_eq!(bad(FqCodelConfig { drop_batch: 0, ..dflt() }), "drop_batch");
    assert_eq!(bad(FqCodelConfig { target_us: 0.0, ..dflt() }), "target_us");
    assert_eq!(bad(FqCodelConfig { interval_us: -1.0, ..dflt() }), "interval_us");
    assert_eq!(bad(FqCodelConfig { ce_threshold_us: Some(f64::NAN), ..dflt() }), "ce_threshold_us");
    assert_eq!(FqCodelConfig { target_us: 5.0, interval_us: 100.0, ..dflt() }.validate(), Ok(()));
}

#[test]
fn the_queue_table_validates_and_builds_both_kinds() {
    use crate::qdisc::{codel::CodelConfig, QdiscKind, QueueConfig};
    let base = QueueConfig { limit_pkts: Some(50), ..QueueConfig::default() };
    // a bad table is an error even when another discipline runs
    let e = QueueConfig { fq_codel: Some(FqCodelConfig { flows: 0, ..dflt() }), ..base.clone() };
    assert_eq!(e.validate().unwrap_err().key, "fq_codel.flows");
    let e = QueueConfig { codel: Some(CodelConfig { interval_us: 0.0, ..CodelConfig::default() }), ..base.clone() };
    assert_eq!(e.validate().unwrap_err().key, "codel.interval_us");
    for (kind, name) in [(QdiscKind::FqCodel, "fq_codel"), (QdiscKind::Codel, "codel")] {
        let c = QueueConfig { kind, ..base.clone() };
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(kind.as_str(), name);
        assert_eq!(c.build::<Packet>(&ctx(1)).name(), name);
    }
}

#[test]
fn unknown_keys_are_rejected_and_missing_keys_default() {
    use serde::de::value::{Error, MapDeserializer};
    let m = MapDeserializer::<_, Error>::new(vec![("flows", 16u32)].into_iter());
    assert_eq!(FqCodelConfig::deserialize(m).unwrap(), FqCodelConfig { flows: 16, ..dflt() });
    let m = MapDeserializer::<_, Error>::new(vec![("limit", 16u32)].into_iter());
    assert!(FqCodelConfig::deserialize(m).is_err());
}
