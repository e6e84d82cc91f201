//! Tests of CoDel: the control law alone (exact and Newton), the discipline's drops, marks and tail
//! drop, accounting, configuration.

use super::*;
use crate::qdisc::testkit::{check_accounting, ctx, pkt};
use proptest::prelude::*;

const MS: u64 = 1_000_000_000;

fn t_ms(ms: f64) -> SimTime {
    SimTime((ms * MS as f64).round() as u64)
}

/// A CoDel discipline with Linux's defaults (5 ms, 100 ms), a 1500-byte MTU, and `ecn`.
fn codel(ecn: bool, ce_threshold_us: Option<f64>) -> Codel {
    let c = CodelConfig { ecn, ce_threshold_us, ..CodelConfig::default() };
    Codel::new(&c, Limit::pkts(100_000), &ctx(1))
}

fn ect(flow: u32, seq: u64, e: Ecn) -> Packet {
    Packet { ecn: e, ..pkt(flow, seq, 1500) }
}

/// The law alone over a synthetic queue: every packet taken from it has waited exactly
/// `sojourn_ms` and leaves `backlog` bytes behind, until `left` packets have been taken.
struct Synthetic {
    now: SimTime,
    sojourn: SimDuration,
    backlog: u64,
    left: usize,
    seq: u64,
    ecn: Ecn,
}

impl CodelQueue for Synthetic {
    type Pkt = Packet;
    fn pop(&mut self) -> Option<(Packet, SimTime)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.seq += 1;
        Some((ect(1, self.seq, self.ecn), SimTime(self.now.0 - self.sojourn.0)))
    }
    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }
}

/// Drives one law: (time ms, seq) of every drop, (time ms, packet) of every departure.
struct Standing {
    vars: CodelVars,
    params: CodelParams,
    q: Synthetic,
    ev: QdiscEvents,
    drops: Vec<(f64, u64)>,
    sent: Vec<(f64, Packet)>,
}

impl Standing {
    fn new(ecn: bool, ce_threshold_us: Option<f64>) -> Standing {
        Standing {
            vars: CodelVars::default(),
            params: CodelParams::new(5000.0, 100_000.0, ecn, ce_threshold_us, 1500),
            q: Synthetic { now: SimTime::ZERO, sojourn: SimDuration::ZERO, backlog: 30_000, left: usize::MAX, seq: 0, ecn: Ecn::NotEct },
            ev: QdiscEvents::default(),
            drops: Vec::new(),
            sent: Vec::new(),
        }
    }
    /// Test time `ms` on the clock: 1 s is added so that every packet's enqueue time is
    /// after time zero.
    fn at(ms: f64) -> SimTime {
        t_ms(ms + 1000.0)
    }
    fn depart(&mut self, at_ms: f64) {
        self.q.now = Self::at(at_ms);
        let p = self.vars.dequeue(&self.params, &mut self.q, Self::at(at_ms), &mut self.ev);
        for d in self.ev.dropped.drain(..) {
            assert_eq!((d.reason, d.queued), (DropReason::Codel, true));
            self.drops.push((at_ms, d.pkt.seq));
        }
        if let Some(p) = p {
            self.sent.push((at_ms, p));
        }
    }
    /// One departure every `gap_ms` from `from_ms` to `to_ms`, each packet having waited
    /// `sojourn_ms`, ECN field `e`.
    fn run(&mut self, from_ms: f64, to_ms: f64, gap_ms: f64, sojourn_ms: f64, e: Ecn) {
        self.q.sojourn = SimDuration((sojourn_ms * MS as f64).round() as u64);
        self.q.ecn = e;
        let n = ((to_ms - from_ms) / gap_ms + 1e-9).floor() as u64;
        for k in 0..=n {
            self.depart(from_ms + k as f64 * gap_ms);
        }
    }
    fn drop_times(&self) -> Vec<f64> {
        self.drops.iter().map(|d| d.0).collect()
    }
}

// --- when CoDel must not act ----------------------------------------------------------------
#[test]
fn no_drop_while_the_sojourn_stays_below_target() {
    let mut s = Standing::new(false, None);
    s.run(0.0, 2000.0, 1.0, 4.9, Ecn::NotEct);
    assert!(s.drops.is_empty());
    assert!(!s.vars.dropping);
    assert_eq!(s.sent.len(), 2001);
}

#[test]
fn no_drop_until_the_sojourn_has_been_above_target_for_an_interval() {
    let mut s = Standing::new(false, None);
    // above target from t = 10 ms: first_above_time = 110 ms; the first drop comes at the
    // first departure strictly after it.
    s.run(10.0, 110.0, 1.0, 6.0, Ecn::NotEct);
    assert!(s.drops.is_empty(), "{:?}", s.drops);
    assert_eq!(s.vars.first_above_time, Standing::at(110.0));
    s.run(111.0, 111.0, 1.0, 6.0, Ecn::NotEct);
    assert_eq!(s.drop_times(), vec![111.0]);
    assert!(s.vars.dropping);
    assert_eq!(s.vars.count, 1);
}

#[test]
fn a_dip_below_target_restarts_the_interval() {
    let mut s = Standing::new(false, None);
    s.run(0.0, 90.0, 1.0, 6.0, Ecn::NotEct);
    s.run(91.0, 91.0, 1.0, 4.0, Ecn::NotEct); // one packet below target
    s.run(92.0, 192.0, 1.0, 6.0, Ecn::NotEct); // first_above_time = 192 ms
    assert!(s.drops.is_empty(), "{:?}", s.drops);
    s.run(193.0, 193.0, 1.0, 6.0, Ecn::NotEct);
    assert_eq!(s.drop_times(), vec![193.0]);
}

#[test]
fn a_backlog_of_at_most_one_mtu_is_never_a_standing_queue() {
    let mut s = Standing::new(false, None);
    s.q.backlog = 1500;
    s.run(0.0, 1000.0, 1.0, 50.0, Ecn::NotEct);
    assert!(s.drops.is_empty());
    s.q.backlog = 1501;
    s.run(1001.0, 1200.0, 1.0, 50.0, Ecn::NotEct);
    assert_eq!(s.drop_times(), vec![1102.0]);
}

// --- drop spacing -------------------------------------------------------------------------
#[test]
fn drops_are_spaced_by_interval_over_sqrt_count() {
    let mut s = Standing::new(false, None);
    // departures every 0.1 ms, each packet 20 ms old: the law, not the departures, sets the times
    s.run(0.0, 1000.0, 0.1, 20.0, Ecn::NotEct);
    let times = s.drop_times();
    assert!(times.len() >= 15, "{times:?}");
    // first drop at the first departure after first_above_time = 100 ms
    assert!((times[0] - 100.1).abs() < 1e-6, "{times:?}");
    // the k-th gap is interval / sqrt(k) (count = k when it is scheduled), within one departure
    for k in 1..times.len() {
        let want = 100.0 / (k as f64).sqrt();
        let got = times[k] - times[k - 1];
        assert!((got - want).abs() <= 0.1 + 1e-6, "gap {k}: {got} ms, want {want} ms ({times:?})");
    }
    assert_eq!(s.vars.count as usize, times.len());
    // one packet per drop: every other departure was sent
    assert_eq!(s.sent.len(), 10_001);
}

// --- Linux's fixed-point 1/sqrt(count) (invsqrt = "newton") ------------------------------
#[test]
fn a_newton_step_is_x_over_2_times_3_minus_count_x_squared_in_16_bit_fixed_point() {
    // against the same step in floating point, within the fixed point's rounding
    let mut x = REC_INV_SQRT_ONE;
    for count in 2..=500u32 {
        let f = x as f64 / 65536.0;
        let want = f / 2.0 * (3.0 - count as f64 * f * f) * 65536.0;
        let got = newton_step(count, x);
        assert!((got as f64 - want).abs() <= 2.0, "count {count}: {got} against {want}");
        x = got;
    }
    // one step per increment lags the root at first (0.5 at count 2, not 0.707) ...
    assert_eq!(newton_step(2, REC_INV_SQRT_ONE), 0x8001);
    // ... and tracks it later: at count 500 within 1 %
    assert!((x as f64 / 65536.0 * 500f64.sqrt() - 1.0).abs() < 0.01, "{x}");
}

#[test]
fn with_newton_the_drops_are_spaced_by_linux_estimate() {
    let mut s = Standing::new(false, None);
    s.params = s.params.with_invsqrt(InvSqrt::Newton);
    s.run(0.0, 1000.0, 0.1, 20.0, Ecn::NotEct);
    let times = s.drop_times();
    assert!(times.len() >= 15, "{times:?}");
    assert!((times[0] - 100.1).abs() < 1e-6, "{times:?}");
    // gap k: interval x rec_inv_sqrt / 2^16, rec_inv_sqrt from 0xFFFF by one step per count
    let mut x = REC_INV_SQRT_ONE;
    for k in 1..times.len() {
        if k > 1 {
            x = newton_step(k as u32, x);
        }
        let want = 100.0 * x as f64 / 65536.0;
        let got = times[k] - times[k - 1];
        assert!((got - want).abs() <= 0.1 + 1e-6, "gap {k}: {got} ms, want {want} ms ({times:?})");
    }
    assert_eq!(s.vars.rec_inv_sqrt, newton_step(times.len() as u32, x), "after the last drop, count = drops");
    // the second gap is half the interval, where the exact law waits 70.7 ms
    assert!((times[2] - times[1] - 50.0).abs() < 0.2, "{times:?}");
}

#[test]
fn control_law_is_exact() {
    let i = SimDuration::from_ms(100);
    assert_eq!(control_law(SimTime::ZERO, i, 1), SimTime(100 * MS));
    assert_eq!(control_law(SimTime::ZERO, i, 4), SimTime(50 * MS));
    assert_eq!(control_law(SimTime(7), i, 100), SimTime(7 + 10 * MS));
    assert_eq!(control_law(SimTime::ZERO, i, 0), SimTime(100 * MS), "count 0 acts as 1");
}

#[test]
fn leaving_the_dropping_state_when_the_sojourn_falls_below_target() {
    let mut s = Standing::new(false, None);
    s.run(0.0, 300.0, 0.1, 20.0, Ecn::NotEct);
    assert!(s.vars.dropping);
    let n = s.drops.len();
    s.run(300.1, 400.0, 0.1, 1.0, Ecn::NotEct);
    assert!(!s.vars.dropping);
    assert_eq!(s.drops.len(), n);
}

#[test]
fn re_entry_soon_after_resumes_the_old_drop_rate() {
    let mut s = Standing::new(false, None);
    s.run(0.0, 600.0, 0.1, 20.0, Ecn::NotEct);
    let v = s.vars;
    assert!(v.count >= 8 && v.lastcount == 1, "{v:?}");
    // a short dip, then above target again: re-entry within 16 intervals of drop_next
    s.run(600.1, 610.0, 0.1, 1.0, Ecn::NotEct);
    let before = s.drops.len();
    s.run(610.1, 800.0, 0.1, 20.0, Ecn::NotEct);
    let first = s.drops[before].0;
    // entered one interval after going above again, with count = count - lastcount
    assert!((first - 710.2).abs() < 1e-6, "re-entry at {first}");
    let delta = v.count - v.lastcount;
    assert_eq!(s.vars.lastcount, delta);
    // the next drop comes interval / sqrt(delta) later, not a whole interval
    let gap = s.drops[before + 1].0 - first;
    let want = 100.0 / (delta as f64).sqrt();
    assert!((gap - want).abs() <= 0.1 + 1e-6, "gap {gap} want {want}");
}

#[test]
fn with_newton_a_re_entry_steps_from_the_last_episode_estimate_and_a_fresh_start_resets_it() {
    let mut s = Standing::new(false, None);
    s.params = s.params.with_invsqrt(InvSqrt::Newton);
    s.run(0.0, 600.0, 0.1, 20.0, Ecn::NotEct);
    let v = s.vars;
    s.run(600.1, 610.0, 0.1, 1.0, Ecn::NotEct);
    let before = s.drops.len();
    s.run(610.1, 800.0, 0.1, 20.0, Ecn::NotEct);
    let delta = v.count - v.lastcount;
    // Linux: count = delta and one Newton step from the estimate the episode ended with
    let x = newton_step(delta, v.rec_inv_sqrt);
    let gap = s.drops[before + 1].0 - s.drops[before].0;
    let want = 100.0 * x as f64 / 65536.0;
    assert!((gap - want).abs() <= 0.1 + 1e-6, "gap {gap} want {want}");
    // long after: count 1 and the estimate 0xFFFF again (a whole interval)
    s.run(800.1, 2800.0, 1.0, 1.0, Ecn::NotEct);
    let before = s.drops.len();
    s.run(2800.1, 3100.0, 0.1, 20.0, Ecn::NotEct);
    let gap = s.drops[before + 1].0 - s.drops[before].0;
    assert!((gap - 100.0).abs() <= 0.1 + 1e-6, "gap {gap}");
}

#[test]
fn re_entry_long_after_starts_again_at_count_one() {
    let mut s = Standing::new(false, None);
    s.run(0.0, 600.0, 0.1, 20.0, Ecn::NotEct);
    // below target for 2 s (> 16 intervals after drop_next), then above again
    s.run(600.1, 2600.0, 1.0, 1.0, Ecn::NotEct);
    let before = s.drops.len();
    s.run(2600.1, 2900.0, 0.1, 20.0, Ecn::NotEct);
    assert!((s.drops[before].0 - 2700.2).abs() < 1e-6);
    let gap = s.drops[before + 1].0 - s.drops[before].0;
    assert!((gap - 100.0).abs() <= 0.1 + 1e-6, "gap {gap}");
}

#[test]
fn an_empty_queue_ends_the_dropping_state() {
    let mut s = Standing::new(false, None);
    s.run(0.0, 300.0, 0.1, 20.0, Ecn::NotEct);
    assert!(s.vars.dropping);
    s.q.left = 0;
    s.depart(300.05);
    assert!(!s.vars.dropping);
    // a drop that empties the queue also forgets how long the sojourn was above target
    let mut s = Standing::new(false, None);
    s.run(0.0, 300.0, 0.1, 20.0, Ecn::NotEct);
    let due = s.vars.drop_next;
    s.q.left = 1;
    s.q.now = due;
    let mut ev = QdiscEvents::default();
    assert!(s.vars.dequeue(&s.params, &mut s.q, due, &mut ev).is_none());
    assert_eq!(ev.dropped.len(), 1);
    assert_eq!((s.vars.dropping, s.vars.first_above_time), (false, SimTime::ZERO));
}

// --- ECN ----------------------------------------------------------------------------------
#[test]
fn ecn_mode_marks_capable_packets_and_drops_the_others() {
    for e in [Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
        let mut s = Standing::new(true, None);
        s.run(0.0, 1000.0, 0.1, 20.0, e);
        assert!(s.drops.is_empty(), "{e:?} dropped");
        assert_eq!(s.sent.len(), 10_001);
        if e == Ecn::Ce {
            continue;
        }
        let marked: Vec<f64> = s.sent.iter().filter(|(_, p)| p.ecn == Ecn::Ce).map(|(t, _)| *t).collect();
        assert!(marked.len() >= 15, "{marked:?}");
        // the marks follow the same law: first after 100 ms, then interval / sqrt(count)
        assert!((marked[0] - 100.1).abs() < 1e-6);
        let gap = marked[3] - marked[2];
        assert!((gap - 100.0 / 3f64.sqrt()).abs() <= 0.1 + 1e-6, "{gap}");
        assert_eq!(s.ev.marks[MarkReason::Codel as usize] as usize, marked.len(), "one mark event per CE");
    }
    let mut s = Standing::new(true, None);
    s.run(0.0, 1000.0, 0.1, 20.0, Ecn::NotEct);
    assert!(s.drops.len() >= 15);
    assert!(s.sent.iter().all(|(_, p)| p.ecn == Ecn::NotEct));
}

#[test]
fn without_ecn_capable_packets_are_dropped_too() {
    let mut s = Standing::new(false, None);
    s.run(0.0, 1000.0, 0.1, 20.0, Ecn::Ect0);
    assert!(s.drops.len() >= 15);
    assert!(s.sent.iter().all(|(_, p)| p.ecn == Ecn::Ect0));
}

#[test]
fn ce_threshold_marks_every_capable_packet_above_it() {
    let mut s = Standing::new(false, Some(1000.0));
    s.run(0.0, 50.0, 1.0, 2.0, Ecn::Ect0); // 2 ms > 1 ms: all marked, none dropped
    s.run(51.0, 60.0, 1.0, 0.5, Ecn::Ect0); // below: none
    s.run(61.0, 70.0, 1.0, 2.0, Ecn::NotEct); // not capable: untouched
    let ce: Vec<bool> = s.sent.iter().map(|(_, p)| p.ecn == Ecn::Ce).collect();
    assert_eq!(ce.len(), 71);
    assert!(ce[..51].iter().all(|&c| c));
    assert!(ce[51..].iter().all(|&c| !c));
    assert!(s.drops.is_empty());
}

use crate::qdisc::Queue;

// --- the discipline -------------------------------------------------------------------------
#[test]
fn tail_drop_at_the_limit() {
    let mut q = Codel::new(&CodelConfig::default(), Limit::pkts(3), &ctx(1));
    let mut ev = QdiscEvents::default();
    for i in 0..4 {
        q.enqueue(pkt(1, i, 1000), SimTime::ZERO, &mut ev);
    }
    assert_eq!(ev.dropped.len(), 1);
    assert_eq!((ev.dropped[0].pkt.seq, ev.dropped[0].reason, ev.dropped[0].queued), (3, DropReason::Overflow, false));
    let mut q = Codel::new(&CodelConfig::default(), Limit { pkts: None, bytes: Some(2500) }, &ctx(1));
    ev.clear();
    for i in 0..3 {
        q.enqueue(pkt(1, i, 1000), SimTime::ZERO, &mut ev);
    }
    assert_eq!((ev.dropped.len(), q.len_bytes()), (1, 2000));
}

#[test]
fn marks_are_reported_with_the_codel_reason() {
    let mut q = Queue::new(codel(true, None));
    let mut ev = QdiscEvents::default();
    for i in 0..30 {
        q.enqueue(ect(1, i, Ecn::Ect0), SimTime::ZERO, &mut ev);
    }
    let mut marks = 0u64;
    for k in 1..=30u64 {
        let p = q.dequeue(t_ms(10.0 * k as f64), &mut ev).unwrap();
        assert!(ev.dropped.is_empty());
        let m = ev.marks[MarkReason::Codel as usize] as u64;
        assert_eq!(m == 1, p.ecn == Ecn::Ce);
        marks += m;
    }
    // first above target at 10 ms: marks at 120 and 220 ms; from 290 ms on at most one
    // MTU is left behind and CoDel stands down
    assert_eq!(marks, 2);
    assert_eq!(q.stats.by_reason.marks[MarkReason::Codel as usize], marks);
}

#[test]
fn a_fifo_fed_faster_than_it_drains_drops_at_the_head() {
    // 3 arrivals for every 2 departures, one event every 0.5 ms
    let mut q = Queue::new(codel(false, None));
    let mut ev = QdiscEvents::default();
    let mut now = SimTime::ZERO;
    let (mut seq, mut codel_drops, mut first_drop) = (0, 0, None);
    for step in 0..3000u64 {
        now += SimDuration::from_us(500);
        seq += 1;
        q.enqueue(pkt(1, seq, 1500), now, &mut ev);
        if step % 3 != 2 {
            q.dequeue(now, &mut ev);
            for d in ev.dropped.drain(..) {
                assert_eq!(d.reason, DropReason::Codel);
                first_drop.get_or_insert(now);
                codel_drops += 1;
            }
        }
    }
    // the sojourn grows as t / 3: above 5 ms from t = 15 ms, first drop one interval later
    let t = first_drop.unwrap().as_secs_f64();
    assert!((0.115..0.117).contains(&t), "first drop at {t}");
    assert!(codel_drops > 5);
    assert_eq!(q.stats.dropped_before_pkts(), 0);
}

#[test]
fn codel_keeps_the_accounting_identities() {
    // target 2 us, interval 20 us: the testkit's 1 us steps make CoDel act
    let c = CodelConfig { target_us: 2.0, interval_us: 20.0, ..CodelConfig::default() };
    let ops: Vec<(bool, u32, u32)> = (0..20_000u32).map(|i| (i % 7 < 4, i % 3, 200 + (i * 97) % 1300)).collect();
    let out = check_accounting(Codel::new(&c, Limit::pkts(60), &ctx(1)), &ops);
    assert!(out.len() > 5000);
    assert!(out.len() < 20_000 * 4 / 7, "CoDel dropped nothing");
}

proptest! {
    #[test]
    fn accounting_holds(ops in proptest::collection::vec((proptest::bool::weighted(0.6), 0u32..4, 40u32..1500), 1..500),
                        ecn in proptest::bool::ANY) {
        let c = CodelConfig { target_us: 1.0, interval_us: 5.0, ecn, ce_threshold_us: Some(3.0), invsqrt: InvSqrt::Exact };
        check_accounting(Codel::new(&c, Limit { pkts: Some(30), bytes: Some(20_000) }, &ctx(1)), &ops);
    }
}

// --- configuration ------------------------------------------------------------------------
#[test]
fn validate_names_the_key() {
    assert_eq!(CodelConfig::default().validate(), Ok(()));
    let bad = |c: CodelConfig| c.validate().unwrap_err().key;
    let d = CodelConfig::default;
    assert_eq!(bad(CodelConfig { target_us: 0.0, ..d() }), "target_us");
    assert_eq!(bad(CodelConfig { target_us: -5.0, ..d() }), "target_us");
    assert_eq!(bad(CodelConfig { target_us: f64::NAN, ..d() }), "target_us");
    assert_eq!(bad(CodelConfig { interval_us: 0.0, ..d() }), "interval_us");
    assert_eq!(bad(CodelConfig { interval_us: f64::INFINITY, ..d() }), "interval_us");
    assert_eq!(bad(CodelConfig { ce_threshold_us: Some(-1.0), ..d() }), "ce_threshold_us");
    // target above interval is legal (documented)
    assert_eq!(CodelConfig { target_us: 200.0, interval_us: 100.0, ..d() }.validate(), Ok(()));
}

#[test]
fn unknown_keys_are_rejected_and_missing_keys_default() {
    use serde::de::value::{Error, MapDeserializer};
    let m = MapDeserializer::<_, Error>::new(vec![("target_us", 5.0f64)].into_iter());
    assert_eq!(CodelConfig::deserialize(m).unwrap(), CodelConfig { target_us: 5.0, ..CodelConfig::default() });
    let m = MapDeserializer::<_, Error>::new(vec![("target", 5.0f64)].into_iter());
    assert!(CodelConfig::deserialize(m).is_err());
}
