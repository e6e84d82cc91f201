//! Tests of SFQ: classification and perturbation, the round robin, push-out, the early drop rule,
//! accounting, configuration.

use super::*;
use crate::packet::hash_flow;
use crate::qdisc::testkit::{check_accounting, ctx, pkt};
use crate::qdisc::Queue;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const T0: SimTime = SimTime::ZERO;

fn sfq(c: SfqConfig, limit: Limit) -> Sfq {
    Sfq::new(&c, limit, &ctx(1))
}

#[test]
fn the_bucket_is_the_salted_flow_hash_and_each_perturbation_draws_the_next_salt() {
    // salts are the successive draws of the port's stream ("qdisc.sfq", port index)
    let mut stream = ctx(1).streams.stream("qdisc.sfq", 0);
    let (first, second): (u64, u64) = (stream.gen(), stream.gen());
    let c = SfqConfig { buckets: 16, perturb_s: 0.001, ..SfqConfig::default() };
    let mut q = sfq(c, Limit::pkts(100));
    let bucket = |f, salt| (hash_flow(pkt(f, 0, 0).flow_key(), salt) % 16) as u32;
    assert!((0..2_000).all(|f| q.bucket_of(&pkt(f, 0, 0)) == bucket(f, first)));
    let mut ev = QdiscEvents::default();
    q.maybe_perturb(T0 + SimDuration::from_secs_f64(0.001), &mut ev);
    assert!((0..2_000).all(|f| q.bucket_of(&pkt(f, 0, 0)) == bucket(f, second)));
}

fn cfg(quantum: u32) -> SfqConfig {
    SfqConfig { quantum_bytes: quantum, ..SfqConfig::default() }
}

/// `n` flow ids whose packets land in pairwise different buckets of `q`.
fn distinct_flows(q: &Sfq, n: usize) -> Vec<u32> {
    let mut used = HashSet::new();
    (1..).filter(|&f| used.insert(q.bucket_of(&pkt(f, 0, 100)))).take(n).collect()
}

fn drain(q: &mut Sfq) -> Vec<Packet> {
    let mut ev = QdiscEvents::default();
    std::iter::from_fn(|| q.dequeue(T0, &mut ev)).collect()
}

fn assert_per_flow_order(out: &[Packet]) {
    let mut last = HashMap::new();
    for p in out {
        if let Some(prev) = last.insert(p.flow, p.seq) {
            assert!(p.seq > prev, "flow {} reordered: {} after {}", p.flow, p.seq, prev);
        }
    }
}

// --- round robin ------------------------------------------------------------------------
#[test]
fn serves_flows_in_round_robin() {
    let mut q = sfq(cfg(1500), Limit::pkts(100));
    let f = distinct_flows(&q, 3);
    let mut ev = QdiscEvents::default();
    for &fl in &f {
        for s in 0..3 {
            q.enqueue(pkt(fl, s, 1500), T0, &mut ev);
        }
    }
    let order: Vec<(u32, u64)> = drain(&mut q).iter().map(|p| (p.flow, p.seq)).collect();
    let expect: Vec<(u32, u64)> = (0..3).flat_map(|s| f.iter().map(move |&fl| (fl, s))).collect();
    assert_eq!(order, expect);
    assert!(ev.dropped.is_empty());
}

#[test]
fn a_new_bucket_joins_the_round_robin_at_the_tail() {
    let mut q = sfq(cfg(1500), Limit::pkts(100));
    let f = distinct_flows(&q, 3);
    let (a, b, c) = (f[0], f[1], f[2]);
    let mut ev = QdiscEvents::default();
    for s in 0..3 {
        q.enqueue(pkt(a, s, 1500), T0, &mut ev);
    }
    for s in 0..3 {
        q.enqueue(pkt(c, s, 1500), T0, &mut ev);
    }
    let mut order = vec![];
    for _ in 0..2 {
        let p = q.dequeue(T0, &mut ev).unwrap();
        order.push((p.flow, p.seq));
    }
    q.enqueue(pkt(b, 0, 1500), T0, &mut ev);
    order.extend(drain(&mut q).iter().map(|p| (p.flow, p.seq)));
    // B waits until A (whose round had ended) and C have had their turn.
    assert_eq!(order, vec![(a, 0), (c, 0), (a, 1), (b, 0), (c, 1), (a, 2), (c, 2)]);
}

#[test]
fn unequal_packet_sizes_share_bytes_fairly() {
    let mut q = sfq(SfqConfig::default(), Limit::pkts(1000));
    let f = distinct_flows(&q, 2);
    let (big, small) = (f[0], f[1]);
    let mut ev = QdiscEvents::default();
    let mut seq = [0u64; 2];
    let mut served = [0u64; 2];
    for _ in 0..5000 {
        // keep both flows backlogged
        while q.fifos.len(q.bucket_of(&pkt(big, 0, 0))) < 20 {
            q.enqueue(pkt(big, seq[0], 1500), T0, &mut ev);
            seq[0] += 1;
        }
        while q.fifos.len(q.bucket_of(&pkt(small, 0, 0))) < 20 {
            q.enqueue(pkt(small, seq[1], 64), T0, &mut ev);
            seq[1] += 1;
        }
        let p = q.dequeue(T0, &mut ev).unwrap();
        served[(p.flow == small) as usize] += p.size as u64;
    }
    assert!(ev.dropped.is_empty());
    let diff = served[0].abs_diff(served[1]);
    assert!(diff <= 1514 + 1500, "big {} small {}", served[0], served[1]);
    assert!(served[1] > 200_000);
}

#[test]
fn a_heavy_flow_is_isolated_from_a_light_one() {
    let mut q = sfq(SfqConfig { depth_pkts: 20, ..SfqConfig::default() }, Limit::pkts(100));
    let f = distinct_flows(&q, 2);
    let (heavy, light) = (f[0], f[1]);
    let mut ev = QdiscEvents::default();
    let (mut hs, mut ls) = (0, 0);
    let mut light_wait = None;
    let mut worst = 0;
    let mut drops = HashMap::new();
    for i in 0..3000 {
        for _ in 0..3 {
            q.enqueue(pkt(heavy, hs, 1500), T0, &mut ev);
            hs += 1;
        }
        if i % 10 == 0 {
            q.enqueue(pkt(light, ls, 1500), T0, &mut ev);
            ls += 1;
            light_wait = Some(0);
        }
        for d in ev.dropped.drain(..) {
            *drops.entry((d.pkt.flow, d.reason)).or_insert(0) += 1;
        }
        let p = q.dequeue(T0, &mut ev).unwrap();
        if let Some(w) = light_wait.as_mut() {
            *w += 1;
            if p.flow == light {
                worst = worst.max(*w);
                light_wait = None;
            }
        }
    }
    assert_eq!(drops.len(), 1, "{drops:?}");
    assert!(drops[&(heavy, DropReason::FlowLimit)] > 5000);
    // the light flow's packet leaves within 3 departures although 20 heavy packets wait
    assert!(worst <= 3, "light packet waited {worst} departures");
}

// --- limits -------------------------------------------------------------------------------
#[test]
fn a_full_bucket_refuses_arrivals() {
    let mut q = sfq(SfqConfig { depth_pkts: 3, ..SfqConfig::default() }, Limit::pkts(100));
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    for s in 0..4 {
        q.enqueue(pkt(f[0], s, 1500), T0, &mut ev);
    }
    q.enqueue(pkt(f[1], 0, 1500), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    let d = &ev.dropped[0];
    assert_eq!((d.pkt.flow, d.pkt.seq, d.reason, d.queued), (f[0], 3, DropReason::FlowLimit, false));
    assert_eq!(q.len_pkts(), 4);
}

#[test]
fn a_full_buffer_drops_from_the_tail_of_the_longest_bucket() {
    let mut q = sfq(SfqConfig::default(), Limit::pkts(5));
    let f = distinct_flows(&q, 2);
    let (a, b) = (f[0], f[1]);
    let mut ev = QdiscEvents::default();
    for s in 0..4 {
        q.enqueue(pkt(a, s, 1500), T0, &mut ev);
    }
    q.enqueue(pkt(b, 0, 1500), T0, &mut ev);
    assert!(ev.dropped.is_empty());
    q.enqueue(pkt(b, 1, 1500), T0, &mut ev);
    let d = ev.dropped.pop().unwrap();
    assert_eq!((d.pkt.flow, d.pkt.seq, d.reason, d.queued), (a, 3, DropReason::LongestQueue, true));
    // now A = 3, B = 2: an arrival of A makes A the longest: the arrival itself is dropped
    q.enqueue(pkt(a, 4, 1500), T0, &mut ev);
    let d = ev.dropped.pop().unwrap();
    assert_eq!((d.pkt.flow, d.pkt.seq, d.reason, d.queued), (a, 4, DropReason::LongestQueue, false));
    // a tie with the arriving packet's bucket goes against the arrival (Linux)
    q.enqueue(pkt(b, 2, 1500), T0, &mut ev);
    let d = ev.dropped.pop().unwrap();
    assert_eq!((d.pkt.flow, d.pkt.seq, d.queued), (b, 2, false));
    assert_eq!(q.len_pkts(), 5);
}

#[test]
fn when_all_buckets_hold_one_packet_the_next_in_line_loses_it() {
    let mut q = sfq(SfqConfig::default(), Limit::pkts(3));
    let f = distinct_flows(&q, 4);
    let mut ev = QdiscEvents::default();
    for &fl in &f {
        q.enqueue(pkt(fl, 0, 1500), T0, &mut ev);
    }
    let d = ev.dropped.pop().unwrap();
    assert_eq!((d.pkt.flow, d.reason, d.queued), (f[0], DropReason::LongestQueue, true));
    let order: Vec<u32> = drain(&mut q).iter().map(|p| p.flow).collect();
    assert_eq!(order, &f[1..]);
}

#[test]
fn a_byte_limit_pushes_out_as_many_packets_as_needed() {
    let mut q = sfq(SfqConfig::default(), Limit { pkts: None, bytes: Some(3000) });
    let f = distinct_flows(&q, 2);
    let mut ev = QdiscEvents::default();
    for s in 0..10 {
        q.enqueue(pkt(f[0], s, 300), T0, &mut ev);
    }
    q.enqueue(pkt(f[1], 0, 1500), T0, &mut ev);
    let seqs: Vec<u64> = ev.dropped.iter().map(|d| d.pkt.seq).collect();
    assert_eq!(seqs, vec![9, 8, 7, 6, 5]);
    assert!(ev.dropped.iter().all(|d| d.queued && d.reason == DropReason::LongestQueue));
    assert_eq!(q.len_bytes(), 3000);
    // a packet that can never fit is refused outright
    ev.clear();
    let mut q = sfq(SfqConfig::default(), Limit { pkts: None, bytes: Some(1000) });
    q.enqueue(pkt(f[0], 0, 500), T0, &mut ev);
    q.enqueue(pkt(f[1], 0, 1500), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    assert_eq!((ev.dropped[0].pkt.flow, ev.dropped[0].reason), (f[1], DropReason::Overflow));
}

// --- perturbation -------------------------------------------------------------------------
#[test]
fn perturbation_changes_the_hash_on_schedule() {
    let mut q = sfq(SfqConfig { perturb_s: 1e-3, ..SfqConfig::default() }, Limit::pkts(100));
    let mut ev = QdiscEvents::default();
    let before: Vec<u32> = (0..50).map(|f| q.bucket_of(&pkt(f, 0, 0))).collect();
    q.dequeue(SimTime::from_secs_f64(0.0009), &mut ev);
    assert_eq!(before, (0..50).map(|f| q.bucket_of(&pkt(f, 0, 0))).collect::<Vec<_>>());
    q.dequeue(SimTime::from_secs_f64(0.001), &mut ev);
    assert_ne!(before, (0..50).map(|f| q.bucket_of(&pkt(f, 0, 0))).collect::<Vec<_>>());
    // 5.5 periods later: one new salt, next one due at 7 ms
    q.dequeue(SimTime::from_secs_f64(0.0065), &mut ev);
    assert_eq!(q.next_perturb, SimTime::from_secs_f64(0.007));
}

#[test]
fn rehash_keeps_order_and_drops_what_overfills_a_bucket() {
    let mut q = sfq(SfqConfig { buckets: 2, depth_pkts: 3, ..SfqConfig::default() }, Limit::pkts(100));
    let mut ev = QdiscEvents::default();
    // flows f, g apart under the first salt
    let f = 1;
    let g = (2..).find(|&g| q.bucket_of(&pkt(g, 0, 0)) != q.bucket_of(&pkt(f, 0, 0))).unwrap();
    for s in 0..3 {
        q.enqueue(pkt(f, s, 1000), T0, &mut ev);
        q.enqueue(pkt(g, s, 1000), T0, &mut ev);
    }
    // a salt that puts them together
    let salt = (0..).find(|&s| hash_flow(pkt(f, 0, 0).flow_key(), s) % 2 == hash_flow(pkt(g, 0, 0).flow_key(), s) % 2).unwrap();
    q.hasher = FlowHasher::new(salt);
    q.rehash(&mut ev);
    // f's bucket was first in line: f keeps its 3 packets, g's 3 no longer fit
    assert_eq!(ev.dropped.len(), 3);
    assert!(ev.dropped.iter().all(|d| d.pkt.flow == g && d.queued && d.reason == DropReason::FlowLimit));
    let out = drain(&mut q);
    assert_eq!(out.iter().map(|p| (p.flow, p.seq)).collect::<Vec<_>>(), vec![(f, 0), (f, 1), (f, 2)]);
    assert_eq!(q.len_pkts(), 0);
    assert_eq!(q.cur_depth, 0);
}

#[test]
fn perturbation_never_reorders_a_flow() {
    // 8 buckets, 24 flows, a new hash every 3 operations (the testkit advances 1 us each)
    let c = SfqConfig { buckets: 8, depth_pkts: 10, quantum_bytes: 700, perturb_s: 3e-6, ..SfqConfig::default() };
    let ops: Vec<(bool, u32, u32)> =
        (0..20_000u32).map(|i| (i % 3 != 2 || i % 11 == 0, (i * 7) % 24, 64 + (i * 131) % 1437)).collect();
    let out = check_accounting(Sfq::new(&c, Limit::pkts(40), &ctx(5)), &ops);
    assert!(out.len() > 5000);
    assert_per_flow_order(&out);
}

// --- order, determinism, accounting -------------------------------------------------------
#[test]
fn no_reordering_within_a_flow() {
    let c = SfqConfig { buckets: 4, depth_pkts: 6, quantum_bytes: 300, perturb_s: 0.0, ..SfqConfig::default() };
    let ops: Vec<(bool, u32, u32)> =
        (0..20_000u32).map(|i| (i % 5 < 3, (i * 13) % 10, 40 + (i * 97) % 1460)).collect();
    let out = check_accounting(Sfq::new(&c, Limit::pkts(15), &ctx(2)), &ops);
    assert!(out.len() > 5000);
    assert_per_flow_order(&out);
}

fn run(seed: u64) -> (Vec<u64>, Vec<(u64, DropReason)>) {
    let c = SfqConfig { buckets: 16, depth_pkts: 5, perturb_s: 50e-6, ..SfqConfig::default() };
    let mut q = Queue::new(Sfq::new(&c, Limit::pkts(30), &ctx(seed)));
    let mut ev = QdiscEvents::default();
    let (mut out, mut drops) = (Vec::new(), Vec::new());
    let mut now = SimTime::ZERO;
    for i in 0..5000u64 {
        now += SimDuration::from_us(3);
        q.enqueue(pkt((i * 7 % 40) as u32, i, 200 + (i * 53 % 1300) as u32), now, &mut ev);
        drops.extend(ev.dropped.drain(..).map(|d| (d.pkt.uid, d.reason)));
        if i % 2 == 0 {
            if let Some(p) = q.dequeue(now, &mut ev) {
                out.push(p.uid);
            }
            drops.extend(ev.dropped.drain(..).map(|d| (d.pkt.uid, d.reason)));
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
        let c = SfqConfig { buckets: 4, depth_pkts: 3, quantum_bytes: 500, perturb_s: 0.0, ..SfqConfig::default() };
        let out = check_accounting(Sfq::new(&c, Limit::pkts(6), &ctx(1)), &ops);
        assert_per_flow_order(&out);
    }

    #[test]
    fn accounting_holds_with_bytes_and_perturbation(ops in proptest::collection::vec((proptest::bool::weighted(0.65), 0u32..12, 40u32..1500), 1..400)) {
        let c = SfqConfig { buckets: 4, depth_pkts: 4, quantum_bytes: 1, perturb_s: 5e-6, ..SfqConfig::default() };
        let out = check_accounting(Sfq::new(&c, Limit { pkts: Some(8), bytes: Some(5000) }, &ctx(1)), &ops);
        assert_per_flow_order(&out);
    }
}

// --- configuration ----------------------------------------------------------------------
#[test]
fn validate_names_the_key() {
    assert_eq!(SfqConfig::default().validate(), Ok(()));
    let bad = |c: SfqConfig| c.validate().unwrap_err().key;
    let d = SfqConfig::default;
    assert_eq!(bad(SfqConfig { buckets: 0, ..d() }), "buckets");
    assert_eq!(bad(SfqConfig { buckets: MAX_BUCKETS + 1, ..d() }), "buckets");
    assert_eq!(bad(SfqConfig { depth_pkts: 0, ..d() }), "depth_pkts");
    assert_eq!(bad(SfqConfig { quantum_bytes: 0, ..d() }), "quantum_bytes");
    assert_eq!(bad(SfqConfig { perturb_s: -1.0, ..d() }), "perturb_s");
    assert_eq!(bad(SfqConfig { perturb_s: f64::NAN, ..d() }), "perturb_s");
    assert_eq!(bad(SfqConfig { perturb_s: 1e-12, ..d() }), "perturb_s");
    assert_eq!(SfqConfig { perturb_s: 10.0, ..d() }.validate(), Ok(()));
}

#[test]
fn unknown_keys_are_rejected_and_missing_keys_default() {
    use serde::de::value::{Error, MapDeserializer};
    let m = MapDeserializer::<_, Error>::new(vec![("depth_pkts", 10u32)].into_iter());
    assert_eq!(SfqConfig::deserialize(m).unwrap(), SfqConfig { depth_pkts: 10, ..SfqConfig::default() });
    let m = MapDeserializer::<_, Error>::new(vec![("quantum", 10u32)].into_iter());
    assert!(SfqConfig::deserialize(m).is_err());
}

// --- ns-2 variant: early drop rule, address hash ------------------------------------------
fn ns2(buckets: u32) -> SfqConfig {
    SfqConfig { buckets, drop_rule: SfqDropRule::Early, hash: SfqHash::Addresses, ..SfqConfig::default() }
}

fn from(src: u32, flow: u32, seq: u64) -> Packet {
    Packet { src, dst: 0, ..pkt(flow, seq, 1500) }
}

#[test]
fn address_hash_puts_host_pairs_in_fixed_buckets() {
    let q = sfq(ns2(4), Limit::pkts(30));
    let other = Sfq::new(&ns2(4), Limit::pkts(30), &ctx(7));
    for src in 0..12 {
        assert_eq!(q.bucket_of(&from(src, 1, 0)), src % 4);
        assert_eq!(q.bucket_of(&from(src, 1, 0)), q.bucket_of(&from(src, 99, 0)), "flows of one host pair share");
        assert_eq!(q.bucket_of(&from(src, 1, 0)), other.bucket_of(&from(src, 1, 0)), "no salt");
    }
}

#[test]
fn early_rule_caps_a_bucket_at_half_the_free_space() {
    // cap 30, one bucket alone: it may hold n while n < (30 - n) / 2, i.e. up to 10 packets.
    let mut q = sfq(ns2(4), Limit::pkts(30));
    let mut ev = QdiscEvents::default();
    for s in 0..20 {
        q.enqueue(from(1, 1, s), T0, &mut ev);
    }
    assert_eq!(q.fifos.len(1), 10);
    assert_eq!(ev.dropped.len(), 10);
    assert!(ev.dropped.iter().all(|d| d.reason == DropReason::FlowLimit));
    // Another bucket still gets in, and itself stops at half of what is then free.
    ev = QdiscEvents::default();
    for s in 0..20 {
        q.enqueue(from(2, 2, s), T0, &mut ev);
    }
    assert_eq!(q.fifos.len(2), 7, "7 >= (20 - 7) / 2 = 6 stops the 8th");
    assert_eq!(q.fifos.total_pkts(), 17);
}

#[test]
fn early_rule_when_little_is_free_admits_only_short_buckets() {
    // cap 8, 4 buckets. Buckets 0 and 1 take 2 each, bucket 2 one: free = 3.
    let mut q = sfq(ns2(4), Limit::pkts(8));
    let mut ev = QdiscEvents::default();
    for (src, n) in [(0u32, 2u64), (1, 2), (2, 1)] {
        for s in 0..n {
            q.enqueue(from(src, src, s), T0, &mut ev);
        }
    }
    assert!(ev.dropped.is_empty(), "{:?}", ev.dropped);
    // A bucket holding one packet: 1 >= 3 / 2 refuses; an empty one gets in (0 < 1).
    q.enqueue(from(2, 2, 1), T0, &mut ev);
    assert_eq!(ev.dropped.len(), 1);
    q.enqueue(from(3, 3, 0), T0, &mut ev);
    assert_eq!((q.fifos.len(3), ev.dropped.len()), (1, 1));
    // free = 2 now: nothing but an empty bucket could enter, and there is none.
    for src in 0..4 {
        q.enqueue(from(src, src, 5), T0, &mut ev);
    }
    assert_eq!((q.fifos.total_pkts(), ev.dropped.len()), (6, 5));
}

#[test]
fn early_rule_keeps_the_accounting_identities() {
    let ops: Vec<(bool, u32, u32)> = (0..3000u32).map(|i| (i % 3 != 0, i * 7 % 5, 500 + i % 1000)).collect();
    let out = check_accounting(Sfq::new(&ns2(4), Limit::pkts(20), &ctx(3)), &ops);
    assert_per_flow_order(&out);
}

#[test]
fn address_hash_rejects_perturbation() {
    let c = SfqConfig { perturb_s: 1.0, ..ns2(4) };
    assert_eq!(c.validate().unwrap_err().key, "perturb_s");
}
