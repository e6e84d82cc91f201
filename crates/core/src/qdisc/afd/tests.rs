use super::*;
use crate::qdisc::testkit::{check_accounting, ctx, pkt};
use crate::qdisc::{Queue, QueueConfig};
use rand::SeedableRng;

fn afd(c: &AfdConfig, limit: u32) -> Afd {
    Afd::new(c, Limit::pkts(limit), &ctx(7))
}

const US: SimDuration = SimDuration(1_000_000);

#[test]
fn accounting_identities_hold_under_random_load() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
    let ops: Vec<(bool, u32, u32)> =
        (0..20_000).map(|_| (rng.gen_bool(0.6), rng.gen_range(0..12), rng.gen_range(64..1500))).collect();
    for c in [AfdConfig::default(), AfdConfig { elephant_bytes: 20_000, shadow_pkts: 50, ..AfdConfig::default() }] {
        check_accounting(afd(&c, 40), &ops);
    }
}

#[test]
fn service_is_fifo_and_never_reorders_a_flow() {
    let mut q = afd(&AfdConfig::default(), 1000);
    let mut ev = QdiscEvents::default();
    let mut now = SimTime::ZERO;
    let mut order = Vec::new();
    for i in 0..300u64 {
        now += US;
        let p = pkt((i % 5) as u32, i, 1000);
        order.push(p.uid);
        q.enqueue(p, now, &mut ev);
    }
    let stored: Vec<u64> = std::iter::from_fn(|| q.dequeue(now, &mut ev)).map(|p| p.uid).collect();
    let kept: Vec<u64> = order.into_iter().filter(|u| stored.contains(u)).collect();
    assert_eq!(stored, kept);
}

#[test]
fn shadow_counts_sum_to_the_shadow_buffer_and_stay_within_it() {
    let c = AfdConfig { shadow_pkts: 64, ..AfdConfig::default() };
    let mut q = afd(&c, 1000);
    let mut ev = QdiscEvents::default();
    for i in 0..1000u64 {
        q.enqueue(pkt((i % 9) as u32, i, 500), SimTime::ZERO + SimDuration(US.0 * i), &mut ev);
        let total: u64 = q.count.iter().map(|&x| x as u64).sum();
        assert_eq!(total, q.shadow.len() as u64);
        assert!(q.shadow.len() <= 64);
        q.dequeue(SimTime::ZERO + SimDuration(US.0 * i), &mut ev);
    }
}

#[test]
fn the_share_estimate_follows_arrival_rates() {
    // flow 1 arrives three times as often as flow 2: its shadow count is about three times theirs
    let c = AfdConfig { shadow_pkts: 400, bins: 1 << 16, ..AfdConfig::default() };
    let mut q = afd(&c, 10_000);
    let mut ev = QdiscEvents::default();
    for i in 0..8000u64 {
        let flow = if i % 4 == 3 { 2 } else { 1 };
        q.enqueue(pkt(flow, i, 100), SimTime::ZERO, &mut ev);
        q.dequeue(SimTime::ZERO, &mut ev);
    }
    let (m1, m2) = (q.m_of(&pkt(1, 0, 100)) as f64, q.m_of(&pkt(2, 0, 100)) as f64);
    assert_eq!(m1 + m2, 400.0);
    assert!((m1 / m2 - 3.0).abs() < 0.6, "m1 {m1}, m2 {m2}");
}

#[test]
fn controller_lowers_the_share_while_the_queue_is_above_target_and_raises_it_below() {
    let c = AfdConfig { target_pkts: Some(10), shadow_pkts: 1000, ..AfdConfig::default() };
    let mut q = afd(&c, 100);
    let mut ev = QdiscEvents::default();
    let ms = SimDuration(1_000_000_000);
    // 50 packets queued: every update lowers m_fair by (beta - alpha) * 40 after the first
    for i in 0..50u64 {
        q.enqueue(pkt(i as u32, 0, 100), SimTime::ZERO, &mut ev);
    }
    q.enqueue(pkt(99, 0, 100), SimTime::ZERO + ms, &mut ev); // first update: q_old 0 -> q 50
    let first = 1000.0 + 1.7 * (0.0 - 10.0) - 1.8 * (50.0 - 10.0);
    assert!((q.m_fair() - first).abs() < 1e-9, "{}", q.m_fair());
    q.enqueue(pkt(98, 0, 100), SimTime::ZERO + SimDuration(ms.0 * 11), &mut ev); // ten more updates, q = 51 throughout
    let q_now = 51.0;
    let second = first + 1.7 * (50.0 - 10.0) - 1.8 * (q_now - 10.0);
    let want = second + 9.0 * (1.7 - 1.8) * (q_now - 10.0);
    assert!((q.m_fair() - want).abs() < 1e-6, "{} vs {want}", q.m_fair());
    // the queue drains: the share grows again, up to the shadow size
    while q.dequeue(SimTime::ZERO + SimDuration(ms.0 * 11), &mut ev).is_some() {}
    q.enqueue(pkt(97, 0, 100), SimTime::ZERO + SimDuration(ms.0 * 100_000), &mut ev);
    assert_eq!(q.m_fair(), 1000.0);
}

#[test]
fn a_flow_above_the_fair_share_is_cut_to_it_and_a_flow_below_loses_nothing() {
    // One aggressive flow (4 arrivals out of 5) and one mild one; a saturated 1-packet-per-step link.
    let c = AfdConfig { target_pkts: Some(20), shadow_pkts: 500, interval_us: 10.0, ..AfdConfig::default() };
    let mut q = Queue::new(afd(&c, 100));
    let mut ev = QdiscEvents::default();
    let mut now = SimTime::ZERO;
    let (mut sent, mut dropped) = ([0u64; 2], [0u64; 2]);
    for i in 0..200_000u64 {
        now += US;
        let flow = if i % 5 == 4 { 1 } else { 0 };
        q.enqueue(pkt(flow, i, 1000), now, &mut ev);
        for d in ev.dropped.drain(..) {
            dropped[d.pkt.flow as usize] += 1;
        }
        if i % 2 == 0 {
            if let Some(p) = q.dequeue(now, &mut ev) {
                sent[p.flow as usize] += 1;
            }
        }
    }
    // capacity is half the arrivals: fair shares are 50 % each, the mild flow only wants 20 %
    let share = sent[1] as f64 / (sent[0] + sent[1]) as f64;
    assert!(share > 0.3, "mild flow got {share:.3} of the link, wants 0.4");
    assert!(dropped[1] as f64 <= 0.05 * (dropped[0] + dropped[1]) as f64, "drops {dropped:?}");
}

#[test]
fn elephant_trap_spares_mice() {
    // a mouse (one packet now and then) beside an elephant: with the trap on, the mouse is never
    // fair-dropped even when its bin's shadow count exceeds the (tiny) fair share
    let c = AfdConfig { elephant_bytes: 100_000, elephant_age_us: 1000.0, shadow_pkts: 100, ..AfdConfig::default() };
    let mut q = Queue::new(afd(&c, 50));
    let mut ev = QdiscEvents::default();
    let mut now = SimTime::ZERO;
    let mut mouse_fair_drops = 0;
    for i in 0..100_000u64 {
        now += US;
        let mouse = i % 50 == 0;
        q.enqueue(pkt(if mouse { 1 } else { 0 }, i, 1000), now, &mut ev);
        for d in ev.dropped.drain(..) {
            if d.pkt.flow == 1 && d.reason == DropReason::FlowLimit {
                mouse_fair_drops += 1;
            }
        }
        if i % 3 == 0 {
            q.dequeue(now, &mut ev);
        }
    }
    assert_eq!(mouse_fair_drops, 0);
    assert!(q.stats.drops_by_reason(DropReason::FlowLimit) > 0, "the elephant was never fair-dropped");
}

#[test]
fn same_seed_same_decisions() {
    let run = || {
        let mut q = Queue::new(afd(&AfdConfig { shadow_pkts: 50, ..AfdConfig::default() }, 30));
        let mut ev = QdiscEvents::default();
        let mut out = Vec::new();
        for i in 0..5000u64 {
            q.enqueue(pkt((i % 7) as u32, i, 1000), SimTime::ZERO + SimDuration(US.0 * i), &mut ev);
            out.extend(ev.dropped.drain(..).map(|d| d.pkt.uid));
            if i % 2 == 0 {
                q.dequeue(SimTime::ZERO + SimDuration(US.0 * i), &mut ev);
            }
        }
        out
    };
    assert_eq!(run(), run());
}

#[test]
fn invalid_tables_name_their_key() {
    let bad = |c: AfdConfig| {
        let q = QueueConfig { kind: crate::qdisc::QdiscKind::Afd, limit_pkts: Some(100), afd: Some(c), ..QueueConfig::default() };
        q.validate().unwrap_err().key
    };
    let d = AfdConfig::default;
    assert_eq!(bad(AfdConfig { shadow_pkts: 0, ..d() }), "afd.shadow_pkts");
    assert_eq!(bad(AfdConfig { alpha: -1.0, ..d() }), "afd.alpha");
    assert_eq!(bad(AfdConfig { beta: f64::NAN, ..d() }), "afd.beta");
    assert_eq!(bad(AfdConfig { interval_us: 0.0, ..d() }), "afd.interval_us");
    assert_eq!(bad(AfdConfig { target_pkts: Some(100), ..d() }), "afd.target_pkts");
    assert_eq!(bad(AfdConfig { bins: 0, ..d() }), "afd.bins");
    assert_eq!(bad(AfdConfig { elephant_age_us: -5.0, ..d() }), "afd.elephant_age_us");
}
