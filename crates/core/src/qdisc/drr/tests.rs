use super::*;
use crate::qdisc::testkit::{check_accounting, ctx, pkt};
use crate::qdisc::Queue;
use crate::time::SimDuration;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const T0: SimTime = SimTime::ZERO;

fn drr(quantum: u32, limit: Limit) -> Drr {
    Drr::new(&DrrConfig { quantum_bytes: quantum, ..DrrConfig::default() }, limit, &ctx(1))
}

#[test]
fn the_bucket_is_the_salted_flow_hash_modulo_buckets() {
    // the salt is the first draw of the port's stream ("qdisc.drr", port index)
    let salt: u64 = ctx(1).streams.stream("qdisc.drr", 0).gen();
    for buckets in [1, 16, 1000] {
        let q = Drr::new(&DrrConfig { buckets, ..DrrConfig::default() }, Limit::pkts(100), &ctx(1));
        for f in 0..5_000 {
            let p = pkt(f, 0, 0);
            assert_eq!(q.bucket_of(&p) as u64, crate::packet::hash_flow(p.flow_key(), salt) % buckets as u64);
        }
    }
}

fn bytes(n: u64) -> Limit {
    Limit { pkts: None, bytes: Some(n) }
}

/// `n` flow ids whose packets land in pairwise different buckets of `q`.
fn distinct_flows(q: &Drr, n: usize) -> Vec<u32> {
    let mut used = HashSet::new();
    (1..).filter(|&f| used.insert(q.bucket_of(&pkt(f, 0, 100)))).take(n).collect()
}

fn drain(q: &mut Drr) -> Vec<(u32, u64)> {
    let mut ev = QdiscEvents::default();
    std::iter::from_fn(|| q.dequeue(T0, &mut ev)).map(|p| (p.flow, p.seq)).collect()
}

fn assert_per_flow_order(out: &[Packet]) {
    let mut last = HashMap::new();
    for p in out {
        if let Some(prev) = last.insert(p.flow, p.seq) {
            assert!(p.seq > prev, "flow {} reordered: {} after {}", p.flow, p.seq, prev);
        }
    }
}

// --- deficit round robin ----------------------------------------------------------------
#[test]
fn equal_packets_alternate() {
    let mut q = drr(1500, Limit::pkts(100));
    let f = distinct_flows(&q, 3);
    let mut ev = QdiscEvents::default();
    for &fl in &f {
        for s in 0..3 {
            q.enqueue(pkt(fl, s, 1500), T0, &mut ev);
        }
    }
    let expect: Vec<(u32, u64)> = (0..3).flat_map(|s| f.iter().map(move |&fl| (fl, s))).collect();
    assert_eq!(drain(&mut q), expect);
}

#[test]
fn deficits_carry_over_so_bytes_follow_the_quanta() {
    // quantum 500: a 1500-byte packet needs three turns, a 500-byte one needs one.
    let mut q = drr(500, Limit::pkts(100));
    let f = distinct_flows(&q, 2);
    let (a, b) = (f[0], f[1]);
    let mut ev = QdiscEvents::default();
    for s in 0..3 {
        q.enqueue(pkt(a, s, 1500), T0, &mut ev);
    }
    for s in 0..8 {
        q.enqueue(pkt(b, s, 500), T0, &mut ev);
    }
    let got: Vec<(u32, u64)> = drain(&mut q).into_iter().take(11).collect();
    let expect = vec![(b, 0), (b, 1), (a, 0), (b, 2), (b, 3), (b, 4), (a, 1), (b, 5), (b, 6), (b, 7), (a, 2)];
    assert_eq!(got, expect);
}

#[test]
fn backlogged_buckets_get_equal_bytes_whatever_their_packet_sizes() {
    let mut q = drr(1500, Limit::pkts(1000));
    let f = distinct_flows(&q, 3);
    let sizes = [1500u32, 700, 64];
    let mut ev = QdiscEvents::default();
    let mut seq = [0u64; 3];
    let mut served = [0u64; 3];
    for _ in 0..20_000 {
        for i in 0..3 {
            while q.fifos.len(q.bucket_of(&pkt(f[i], 0, 0))) < 10 {
                q.enqueue(pkt(f[i], seq[i], sizes[i]), T0, &mut ev);
                seq[i] += 1;
            }
        }
        let p = q.dequeue(T0, &mut ev).unwrap();
        served[f.iter().position(|&x| x == p.flow).unwrap()] += p.size as u64;
    }
    assert!(ev.dropped.is_empty());
    let (lo, hi) = (*served.iter().min().unwrap(), *served.iter().max().unwrap());
    // DRR bound: a backlogged bucket is within quantum + max packet of any other
    assert!(hi - lo <= 1500 + 1500, "{served:?}");
}

// --- longest-queue drop -----------------------------------------------------------------
#[test]
fn a_full_buffer_drops_the_head_of_the_bucket_with_most_bytes() {
    let mut q = drr(1500, bytes(6000));
    let f = distinct_flows(&q, 2);
    let (a, b) = (f[0], f[1]);
    let mut ev = QdiscEvents::default();
    for s in 0..3 {
        q.enqueue(pkt(a, s, 1500), T0, &mut ev); // 4500 bytes in 3 packets
    }
    for s in 0..10 {
        q.enqueue(pkt(b, s, 100), T0, &mut ev); // 1000 bytes in 10 packets
    }
    q.enqueue(pkt(b, 10, 1000), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    let d = &ev.dropped[0];
    assert_eq!((d.pkt.flow, d.pkt.seq, d.reason, d.queued), (a, 0, DropReason::LongestQueue, true));
    assert_eq!(q.len_bytes(), 5000);
}

#[test]
fn the_arrival_is_refused_when_it_alone_makes_the_largest_bucket() {
    let mut q = drr(1500, bytes(2000));
    let f = distinct_flows(&q, 3);
    let mut ev = QdiscEvents::default();
    q.enqueue(pkt(f[0], 0, 500), T0, &mut ev);
    q.enqueue(pkt(f[0], 1, 500), T0, &mut ev);
    q.enqueue(pkt(f[1], 0, 900), T0, &mut ev);
    q.enqueue(pkt(f[2], 0, 1500), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    let d = &ev.dropped[0];
    assert_eq!((d.pkt.flow, d.reason, d.queued), (f[2], DropReason::LongestQueue, false));
    // one quantum covers both of f[0]'s 500-byte packets
    assert_eq!(drain(&mut q), vec![(f[0], 0), (f[0], 1), (f[1], 0)]);
}

#[test]
fn the_arrivals_own_bucket_loses_its_oldest_packet_and_keeps_its_place() {
    let mut q = drr(1000, bytes(3000));
    let f = distinct_flows(&q, 2);
    let (a, b) = (f[0], f[1]);
    let mut ev = QdiscEvents::default();
    q.enqueue(pkt(a, 0, 1000), T0, &mut ev);
    q.enqueue(pkt(a, 1, 1000), T0, &mut ev);
    q.enqueue(pkt(b, 0, 500), T0, &mut ev);
    q.enqueue(pkt(a, 2, 1000), T0, &mut ev);
    let d = &ev.dropped[0];
    assert_eq!((d.pkt.flow, d.pkt.seq, d.queued), (a, 0, true));
    assert_eq!(drain(&mut q), vec![(a, 1), (b, 0), (a, 2)]);
    // and when its only packet was pushed out, the arrival still takes its place
    let mut q = drr(1000, bytes(1500));
    q.enqueue(pkt(a, 0, 1000), T0, &mut ev);
    q.enqueue(pkt(b, 0, 400), T0, &mut ev);
    ev.clear();
    q.enqueue(pkt(a, 1, 1000), T0, &mut ev);
    assert_eq!((ev.dropped[0].pkt.seq, ev.dropped[0].queued), (0, true));
    assert_eq!(drain(&mut q), vec![(a, 1), (b, 0)]);
}

#[test]
fn ties_go_to_the_bucket_being_served_first() {
    let mut q = drr(1500, bytes(2000));
    let f = distinct_flows(&q, 3);
    let mut ev = QdiscEvents::default();
    q.enqueue(pkt(f[0], 0, 1000), T0, &mut ev);
    q.enqueue(pkt(f[1], 0, 1000), T0, &mut ev);
    q.enqueue(pkt(f[2], 0, 500), T0, &mut ev);
    assert_eq!(ev.dropped[0].pkt.flow, f[0]);
}

#[test]
fn a_bucket_emptied_by_a_push_out_leaves_the_round_robin() {
    let mut q = drr(1500, bytes(1500));
    let f = distinct_flows(&q, 3);
    let mut ev = QdiscEvents::default();
    q.enqueue(pkt(f[0], 0, 1000), T0, &mut ev);
    q.enqueue(pkt(f[1], 0, 400), T0, &mut ev);
    q.enqueue(pkt(f[2], 0, 300), T0, &mut ev);
    assert_eq!((ev.dropped[0].pkt.flow, ev.dropped[0].queued), (f[0], true));
    assert!(!q.is_active(q.bucket_of(&pkt(f[0], 0, 0))));
    q.enqueue(pkt(f[0], 1, 100), T0, &mut ev);
    assert_eq!(drain(&mut q), vec![(f[1], 0), (f[2], 0), (f[0], 1)]);
}

#[test]
fn a_packet_larger_than_the_byte_limit_is_refused_at_once() {
    let mut q = drr(1500, bytes(1000));
    let mut ev = QdiscEvents::default();
    q.enqueue(pkt(1, 0, 500), T0, &mut ev);
    q.enqueue(pkt(2, 0, 1500), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    assert_eq!((ev.dropped[0].pkt.flow, ev.dropped[0].reason), (2, DropReason::Overflow));
    assert_eq!(q.len_pkts(), 1);
}

#[test]
fn a_packet_limit_is_enforced_too() {
    let mut q = drr(1500, Limit::pkts(4));
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    for s in 0..4 {
        q.enqueue(pkt(f[0], s, 100), T0, &mut ev);
    }
    q.enqueue(pkt(f[1], 0, 100), T0, &mut ev);
    assert_eq!((ev.dropped[0].pkt.flow, ev.dropped[0].pkt.seq), (f[0], 0));
    assert_eq!(q.len_pkts(), 4);
}

// --- order, determinism, accounting -------------------------------------------------------
#[test]
fn no_reordering_within_a_flow() {
    let c = DrrConfig { buckets: 4, quantum_bytes: 300 };
    let ops: Vec<(bool, u32, u32)> =
        (0..20_000u32).map(|i| (i % 5 < 3, (i * 13) % 10, 40 + (i * 97) % 1460)).collect();
    let out = check_accounting(Drr::new(&c, Limit { pkts: Some(15), bytes: Some(9000) }, &ctx(2)), &ops);
    assert!(out.len() > 5000);
    assert_per_flow_order(&out);
}

fn run(seed: u64) -> (Vec<u64>, Vec<u64>) {
    let c = DrrConfig { buckets: 16, quantum_bytes: 700 };
    let mut q = Queue::new(Drr::new(&c, Limit::pkts(30), &ctx(seed)));
    let mut ev = QdiscEvents::default();
    let (mut out, mut drops) = (Vec::new(), Vec::new());
    let mut now = SimTime::ZERO;
    for i in 0..5000u64 {
        now += SimDuration::from_us(3);
        q.enqueue(pkt((i * 7 % 40) as u32, i, 200 + (i * 53 % 1300) as u32), now, &mut ev);
        drops.extend(ev.dropped.drain(..).map(|d| d.pkt.uid));
        if i % 2 == 0 {
            if let Some(p) = q.dequeue(now, &mut ev) {
                out.push(p.uid);
            }
        }
    }
    (out, drops)
}

#[test]
fn same_seed_same_run_other_seed_other_hash() {
    let a = run(7);
    assert_eq!(a, run(7));
    assert_ne!(a, run(8));
}

proptest! {
    #[test]
    fn accounting_holds(ops in proptest::collection::vec((proptest::bool::weighted(0.65), 0u32..12, 40u32..1500), 1..400)) {
        let c = DrrConfig { buckets: 4, quantum_bytes: 500 };
        let out = check_accounting(Drr::new(&c, Limit::pkts(6), &ctx(1)), &ops);
        assert_per_flow_order(&out);
    }

    #[test]
    fn accounting_holds_with_a_byte_limit(ops in proptest::collection::vec((proptest::bool::weighted(0.65), 0u32..12, 40u32..1500), 1..400)) {
        let c = DrrConfig { buckets: 4, quantum_bytes: 1 };
        let out = check_accounting(Drr::new(&c, Limit { pkts: Some(8), bytes: Some(4000) }, &ctx(1)), &ops);
        assert_per_flow_order(&out);
    }
}

// --- configuration ----------------------------------------------------------------------
#[test]
fn validate_names_the_key() {
    assert_eq!(DrrConfig::default().validate(), Ok(()));
    let bad = |c: DrrConfig| c.validate().unwrap_err().key;
    assert_eq!(bad(DrrConfig { buckets: 0, ..Default::default() }), "buckets");
    assert_eq!(bad(DrrConfig { buckets: MAX_BUCKETS + 1, ..Default::default() }), "buckets");
    assert_eq!(bad(DrrConfig { quantum_bytes: 0, ..Default::default() }), "quantum_bytes");
}

#[test]
fn unknown_keys_are_rejected_and_missing_keys_default() {
    use serde::de::value::{Error, MapDeserializer};
    let m = MapDeserializer::<_, Error>::new(vec![("quantum_bytes", 9000u32)].into_iter());
    assert_eq!(DrrConfig::deserialize(m).unwrap(), DrrConfig { buckets: 1024, quantum_bytes: 9000 });
    let m = MapDeserializer::<_, Error>::new(vec![("blimit", 10u32)].into_iter());
    assert!(DrrConfig::deserialize(m).is_err());
}
