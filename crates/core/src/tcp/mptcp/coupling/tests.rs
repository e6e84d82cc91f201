use super::*;
use serde::de::IntoDeserializer;
use std::cmp::Ordering;

const MSS: u64 = 1000;

fn view(cwnd_pkts: u64, rtt_ms: u64, l_pkts: u64) -> SubflowView {
    SubflowView { cwnd_bytes: cwnd_pkts * MSS, srtt: Some(SimDuration::from_ms(rtt_ms)), mss: MSS as u32, loss_interval_bytes: l_pkts * MSS }
}
/// `x` equals `want` to 12 significant digits.
fn close(x: f64, want: f64) {
    assert!((x - want).abs() <= 1e-12 * want.abs().max(1.0), "{x} vs {want}");
}
/// The increase per SMSS acknowledged, in SMSS.
fn per_mss(c: Coupling, views: &[SubflowView], r: usize) -> f64 {
    increase(c, views, r, MSS) / MSS as f64
}

// --- the uncoupled rule, and one subflow ----------------------------------------------------
#[test]
fn one_subflow_is_newreno_under_every_coupling() {
    // NewReno: acked * MSS / cwnd; at 10 segments, 1/10 segment per segment acknowledged
    for (cwnd, rtt) in [(10 * MSS, 10), (7 * MSS + 123, 1), (2 * MSS, 250)] {
        let v = [SubflowView { cwnd_bytes: cwnd, srtt: Some(SimDuration::from_ms(rtt)), mss: MSS as u32, loss_interval_bytes: 5 * MSS }];
        let newreno = (MSS * MSS) as f64 / cwnd as f64;
        // LIA: alpha = w * (w / r^2) / (w / r)^2 = 1, so min(MSS / w, MSS / w)
        close(lia_alpha(&v).unwrap(), 1.0);
        // OLIA: (w / r^2) / (w / r)^2 = 1 / w packets, and M = B = {the path}: alpha = 0
        close(olia_alpha(&v, 0), 0.0);
        for c in [Coupling::Lia, Coupling::Olia, Coupling::Uncoupled] {
            close(increase(c, &v, 0, MSS), newreno);
            close(increase(c, &v, 0, 3 * MSS), 3.0 * newreno);
        }
    }
    close(uncoupled_increase(&view(10, 1, 0), 500), 50.0); // 500 * 1000 / 10 000
}

// --- LIA (RFC 6356 section 4) ----------------------------------------------------------------
#[test]
fn lia_two_equal_subflows_share_one_newreno_increase() {
    // w1 = w2 = 10, rtt r: alpha = 20 * (10 / r^2) / (20 / r)^2 = 200 / 400 = 0.5;
    // per segment: min(0.5 * 1 / 20, 1 / 10) = 1/40 segment (25 bytes)
    let v = [view(10, 10, 0), view(10, 10, 0)];
    close(lia_alpha(&v).unwrap(), 0.5);
    close(per_mss(Coupling::Lia, &v, 0), 1.0 / 40.0);
    close(per_mss(Coupling::Lia, &v, 1), 1.0 / 40.0);
    close(increase(Coupling::Lia, &v, 0, MSS), 25.0);
    // together 1/20 segment per segment acknowledged: what one NewReno flow with their total
    // window of 20 segments gets on one path (RFC 6356 section 3, goals 1 and 2)
    close(2.0 * per_mss(Coupling::Lia, &v, 0), 1.0 / 20.0);
}

#[test]
fn lia_cap_binds_on_the_slow_large_subflow_only() {
    // w1 = 10 at 10 ms, w2 = 100 at 100 ms (segments, ms):
    // max(w / r^2) = max(10 / 100, 100 / 10 000) = 0.1; sum w / r = 1 + 1 = 2;
    // alpha = 110 * 0.1 / 2^2 = 2.75
    let v = [view(10, 10, 0), view(100, 100, 0)];
    close(lia_alpha(&v).unwrap(), 2.75);
    // subflow 1: min(2.75 / 110, 1 / 10) = min(0.025, 0.1) = 0.025: the coupled term
    close(per_mss(Coupling::Lia, &v, 0), 0.025);
    // subflow 2: min(0.025, 1 / 100) = 0.01: the NewReno cap
    close(per_mss(Coupling::Lia, &v, 1), 0.01);
}

#[test]
fn lia_leaves_out_a_subflow_without_rtt_sample() {
    let two = [view(10, 10, 0), view(10, 10, 0)];
    let mut three = [view(10, 10, 0), view(10, 10, 0), view(40, 10, 0)];
    three[2].srtt = None;
    close(lia_alpha(&three).unwrap(), 0.5);
    close(per_mss(Coupling::Lia, &three, 0), per_mss(Coupling::Lia, &two, 0));
    // the unsampled one grows as NewReno: 1/40 segment at 40 segments
    close(per_mss(Coupling::Lia, &three, 2), 1.0 / 40.0);
    // no sample anywhere: NewReno
    three.iter_mut().for_each(|v| v.srtt = None);
    assert_eq!(lia_alpha(&three), None);
    close(per_mss(Coupling::Lia, &three, 0), 0.1);
    // an RTT of zero counts as 1 ps: finite
    let zero = [SubflowView { srtt: Some(SimDuration::ZERO), ..view(10, 1, 0) }, view(10, 1, 0)];
    assert!(increase(Coupling::Lia, &zero, 0, MSS).is_finite() && increase(Coupling::Olia, &zero, 1, MSS).is_finite());
}

// --- OLIA (Khalili et al. 2012, section 5) --------------------------------------------------
#[test]
fn olia_moves_window_from_the_largest_to_the_best_path() {
    // w1 = 10 (M: the largest), w2 = 5, equal RTT, path 2 with the larger l (B = {2}):
    // |R| = 2, |M| = 1, |B\M| = 1: alpha_1 = -1 / (2 * 1), alpha_2 = +1 / (2 * 1)
    let v = [view(10, 10, 30), view(5, 10, 40)];
    close(olia_alpha(&v, 0), -0.5);
    close(olia_alpha(&v, 1), 0.5);
    // equal RTT: w_r / r^2 / (sum w / r)^2 = w_r / (sum w)^2 = w_r / 225
    // path 1: 10/225 - 0.5/10 = 10/225 - 0.05 (negative: -1/180)
    close(per_mss(Coupling::Olia, &v, 0), 10.0 / 225.0 - 0.05);
    close(per_mss(Coupling::Olia, &v, 0), -1.0 / 180.0);
    // path 2: 5/225 + 0.5/5 = 5/225 + 0.1
    close(per_mss(Coupling::Olia, &v, 1), 5.0 / 225.0 + 0.1);
}

#[test]
fn olia_without_a_best_path_outside_m_is_the_coupled_term_alone() {
    // the largest window is also the best path: B \ M is empty, every alpha is 0
    let v = [view(10, 10, 40), view(5, 10, 30)];
    close(olia_alpha(&v, 0), 0.0);
    close(olia_alpha(&v, 1), 0.0);
    close(per_mss(Coupling::Olia, &v, 0), 10.0 / 225.0);
    close(per_mss(Coupling::Olia, &v, 1), 5.0 / 225.0);
    // equal windows: M is every path, so B \ M is empty whatever l says
    let v = [view(8, 10, 1), view(8, 10, 100)];
    close(olia_alpha(&v, 0), 0.0);
    close(olia_alpha(&v, 1), 0.0);
    // 8 / 16^2 = 1/32 each: together 1/16, one NewReno flow at the total window
    close(per_mss(Coupling::Olia, &v, 0), 1.0 / 32.0);
}

#[test]
fn olia_sets_count_every_path_and_ties_exactly() {
    // three paths, equal RTT: w = 10, 5, 5; l = 10, 20, 20 segments: M = {1}, B = {2, 3}.
    // alpha_1 = -1 / (3 * 1), alpha_2 = alpha_3 = 1 / (3 * 2); they sum to 0
    let v = [view(10, 10, 10), view(5, 10, 20), view(5, 10, 20)];
    close(olia_alpha(&v, 0), -1.0 / 3.0);
    close(olia_alpha(&v, 1), 1.0 / 6.0);
    close(olia_alpha(&v, 2), 1.0 / 6.0);
    // path 2: 5 / 20^2 + (1/6) / 5 = 1/80 + 1/30
    close(per_mss(Coupling::Olia, &v, 1), 1.0 / 80.0 + 1.0 / 30.0);
    // B compares l / rtt^2: l = 80 at 20 ms ties with l = 20 at 10 ms (80/400 = 20/100), and
    // l = 79 at 20 ms is not best
    let v = [view(10, 10, 10), view(5, 20, 80), view(5, 10, 20)];
    close(olia_alpha(&v, 1), 1.0 / 6.0);
    close(olia_alpha(&v, 2), 1.0 / 6.0);
    let v = [view(10, 10, 10), view(5, 20, 79), view(5, 10, 20)];
    close(olia_alpha(&v, 0), -1.0 / 3.0);
    close(olia_alpha(&v, 1), 0.0);
    close(olia_alpha(&v, 2), 1.0 / 3.0);
    // a path without a sample counts in |R| but in no set, and grows as NewReno
    let mut v = [view(10, 10, 30), view(5, 10, 40), view(50, 10, 90)];
    v[2].srtt = None;
    close(olia_alpha(&v, 0), -1.0 / 3.0);
    close(olia_alpha(&v, 1), 1.0 / 3.0);
    close(olia_alpha(&v, 2), 0.0);
    close(per_mss(Coupling::Olia, &v, 2), 1.0 / 50.0);
}

#[test]
fn rate_comparison_is_exact_where_floats_are_not() {
    assert_eq!(cmp_rate(4, 2, 1, 1), Ordering::Equal);
    // 2^60 + 1 and 2^60 are the same double
    assert_eq!(cmp_rate((1 << 60) + 1, 1 << 40, 1 << 60, 1 << 40), Ordering::Greater);
    assert_eq!(cmp_rate(u64::MAX, u64::MAX, u64::MAX, u64::MAX), Ordering::Equal);
    assert_eq!(cmp_rate(u64::MAX, u64::MAX, u64::MAX - 1, u64::MAX), Ordering::Greater);
    assert_eq!(cmp_rate(u64::MAX, u64::MAX, u64::MAX, u64::MAX - 1), Ordering::Less);
    // (2^64 - 1)^3 = 2^192 - 3 * 2^128 + 3 * 2^64 - 1: high word 2^64 - 3, low 3 * 2^64 - 1
    assert_eq!(mul_sq(u64::MAX, u64::MAX), (u64::MAX - 2, (3u128 << 64) - 1));
    assert_eq!(mul_sq(3, 5), (0, 75));
}

// --- loss intervals -------------------------------------------------------------------------
#[test]
fn loss_intervals_keep_the_last_two_and_the_current() {
    let mut l = LossIntervals::new(1);
    assert_eq!(l.interval(), 0);
    l.on_ack(1001);
    l.on_ack(501); // an old ACK changes nothing
    assert_eq!(l.interval(), 1000); // before any loss: all acknowledged so far
    l.on_congestion_event(); // intervals [1, 1001) and [1001, 1001)
    assert_eq!(l.interval(), 1000);
    l.on_ack(1301);
    assert_eq!(l.interval(), 1000); // max(300, 1000)
    l.on_ack(3001);
    assert_eq!(l.interval(), 2000); // max(2000, 1000)
    l.on_congestion_event(); // [1001, 3001) closed, the older one dropped
    assert_eq!(l.interval(), 2000);
    l.on_congestion_event(); // nothing acknowledged since: no empty interval
    assert_eq!(l.interval(), 2000);
    l.on_ack(3101);
    l.on_congestion_event(); // [3001, 3101): l = max(0, 100)
    assert_eq!(l.interval(), 100);
}

#[test]
fn coupling_reads_its_snake_case_names() {
    let read = |s: &str| Coupling::deserialize(s.into_deserializer()).map_err(|e: serde::de::value::Error| e.to_string());
    assert_eq!(read("lia"), Ok(Coupling::Lia));
    assert_eq!(read("olia"), Ok(Coupling::Olia));
    assert_eq!(read("uncoupled"), Ok(Coupling::Uncoupled));
    assert!(read("LIA").is_err() && read("balia").is_err());
    assert_eq!(Coupling::default(), Coupling::Lia);
    for c in [Coupling::Lia, Coupling::Olia, Coupling::Uncoupled] {
        assert_eq!(read(c.name()), Ok(c));
    }
}
