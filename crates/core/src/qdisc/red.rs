//! RED: Random Early Detection, as ns-2's `Queue/RED` behaves in packet mode.
//!
//! One FIFO whose arrivals are dropped (or ECN-marked) with a probability that grows with an
//! exponentially weighted moving average of the queue length (Floyd & Jacobson, "Random Early
//! Detection Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993), with the "gentle"
//! extension (Floyd, 2000) and ns-2's count-based spacing of drops (`wait_`). The model follows
//! ns-2.35 `queue/red.cc` so that dcfair runs can be checked against ns-2 runs; the differences
//! are listed below and in `docs/mechanisms/red.md`.
//!
//! Rules, on every arrival (queue lengths are in packets, before the arrival is stored):
//! 1. If the queue was idle, the average first decays as if `m` packets of `mean_pkt_bytes` had
//!    arrived to an empty queue, `m = floor(idle_time * rate / (8 * mean_pkt_bytes))`.
//! 2. `avg <- (1 - q_weight) * avg + q_weight * qlen`.
//! 3. If `avg >= min_thresh_pkts` and `qlen > 1`:
//!    - `avg >= 2 * max_thresh_pkts` (gentle) or `avg >= max_thresh_pkts` (not gentle): forced
//!      drop ([`DropReason::RedForced`]), even for ECN-capable packets;
//!    - else, on the first arrival since the average rose above `min_thresh_pkts`, nothing;
//!    - else, with probability `p_a` derived from `p_b` (below): early drop
//!      ([`DropReason::RedEarly`]), or, with `ecn = true` and an ECN-capable packet, CE mark
//!      ([`MarkReason::Red`]) and store.
//!
//!    `p_b = max_p * (avg - min) / (max - min)` below `max`; in gentle mode it rises linearly
//!    from `max_p` at `max` to 1 at `2 * max`. With `wait = true`, `p_a = 0` while
//!    `count * p_b < 1`, `p_b / (2 - count * p_b)` while `count * p_b < 2`, else 1 (drops are
//!    spaced between `1/p_b` and `2/p_b` arrivals); with `wait = false`,
//!    `p_a = p_b / (1 - count * p_b)` (the paper's uniform spacing). `count` is the number of
//!    arrivals since the last early drop or mark (in bytes / `mean_pkt_bytes` in byte mode).
//!    In byte mode `p_a` is further scaled by `size / mean_pkt_bytes`.
//! 4. A packet that does not fit the shared buffer (`queue.limit_pkts` / `limit_bytes`) is
//!    dropped with [`DropReason::Overflow`], whatever the average says (this takes precedence
//!    over an early drop, a mark, or a forced drop decided above).
//!
//! Parameters (`[queue.red]`): `docs/mechanisms/red.md`.
//!
//! Limits: the queue is always measured in packets (ns-2 `queue_in_bytes_ = false`); adaptive
//! RED, `cautious_`, `use_mark_p_`, `drop_front_` / `drop_rand_` are not modelled (the arriving
//! packet is always the victim, ns-2's default `drop_tail_`). The idle decay uses `powi`, so
//! the average can differ from ns-2's repeated multiplication in the last bits. The idle period
//! starts when a `dequeue` finds the queue empty (ns-2: the link asks for a packet and gets
//! none); if the port never makes that call, it starts when the last packet was dequeued.
//! Cost: O(1) per packet, one uniform draw per arrival that reaches the random test.
//! Randomness: stream `("qdisc.red", port_index)`.
//! Validation of the configuration: [`RedConfig::validate`]. Validation of the model against
//! ns-2: `docs/validation.md`.

use crate::config::{ConfigError, Limit};
use super::framework::{Discipline, DropReason, MarkReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::{BitsPerSec, SimTime, PS_PER_SEC};
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[queue.red]`: see the module documentation for the meaning of every key.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    pub min_thresh_pkts: f64,
    pub max_thresh_pkts: f64,
    pub q_weight: f64,
    pub max_p: f64,
    pub gentle: bool,
    pub wait: bool,
    pub ecn: bool,
    pub byte_mode: bool,
    pub mean_pkt_bytes: u32,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min_thresh_pkts: 5.0,
            max_thresh_pkts: 15.0,
            q_weight: 0.002,
            max_p: 0.1,
            gentle: true,
            wait: true,
            ecn: false,
            byte_mode: false,
            mean_pkt_bytes: 1500,
        }
    }
}

impl RedConfig {
    /// Rejects impossible values; the key is relative to `[queue.red]`. The buffer limit is
    /// not compared with the thresholds: a buffer smaller than `max_thresh_pkts` is legal (RED
    /// then degenerates towards DropTail), only unusual.
    pub fn validate(&self, _limit: Limit) -> Result<(), ConfigError> {
        let min = self.min_thresh_pkts;
        let max = self.max_thresh_pkts;
        if !(min.is_finite() && min >= 0.0) {
            return Err(ConfigError::new("min_thresh_pkts", format!("must be a finite number >= 0, got {min}")));
        }
        if !(max.is_finite() && max > min) {
            return Err(ConfigError::new(
                "max_thresh_pkts",
                format!("must be finite and greater than min_thresh_pkts ({min}), got {max}"),
            ));
        }
        if !(self.q_weight > 0.0 && self.q_weight <= 1.0) {
            return Err(ConfigError::new("q_weight", format!("must be in (0, 1], got {}", self.q_weight)));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(ConfigError::new("max_p", format!("must be in (0, 1], got {}", self.max_p)));
        }
        if self.mean_pkt_bytes == 0 {
            return Err(ConfigError::new("mean_pkt_bytes", "must be at least 1 byte"));
        }
        Ok(())
    }
}

/// What the RED rules decided for one arrival, before the buffer limit is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    Accept,
    Mark,
    Early,
    Forced,
}

/// Whether the link is busy, and since when it is idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Idle {
    /// Packets are queued or being sent.
    Busy,
    /// The last packet was dequeued at this time; the link may still be sending it.
    Drained(SimTime),
    /// A dequeue found the queue empty at this time: the link is idle since then.
    Since(SimTime),
}

/// The RED discipline; see the module documentation.
#[derive(Debug)]
pub struct Red<P = Packet> {
    q: VecDeque<P>,
    bytes: u64,
    limit: Limit,
    // parameters
    min_th: f64,
    max_th: f64,
    q_w: f64,
    max_p: f64,
    gentle: bool,
    wait: bool,
    ecn: bool,
    byte_mode: bool,
    mean_pkt_bytes: u32,
    rate: BitsPerSec,
    // the lines of p_b: below max `max_p * (v_a * avg + v_b)`, gentle above max `v_c * avg + v_d`
    v_a: f64,
    v_b: f64,
    v_c: f64,
    v_d: f64,
    // state
    avg: f64,
    /// Arrivals since the last early drop / mark (ns-2 `count`).
    count: u64,
    /// Bytes of those arrivals (ns-2 `count_bytes`), used in byte mode.
    count_bytes: u64,
    /// The previous arrival also saw `avg >= min` with a non-trivial queue (ns-2 `old`).
    old: bool,
    idle: Idle,
    rng: Rng,
}

impl<P: QPacket> Red<P> {
    pub fn new(c: &RedConfig, limit: Limit, ctx: &PortContext) -> Self {
        let diff = c.max_thresh_pkts - c.min_thresh_pkts;
        Red {
            q: VecDeque::new(),
            bytes: 0,
            limit,
            min_th: c.min_thresh_pkts,
            max_th: c.max_thresh_pkts,
            q_w: c.q_weight,
            max_p: c.max_p,
            gentle: c.gentle,
            wait: c.wait,
            ecn: c.ecn,
            byte_mode: c.byte_mode,
            mean_pkt_bytes: c.mean_pkt_bytes.max(1),
            rate: ctx.rate,
            v_a: 1.0 / diff,
            v_b: -c.min_thresh_pkts / diff,
            v_c: (1.0 - c.max_p) / c.max_thresh_pkts,
            v_d: 2.0 * c.max_p - 1.0,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle: Idle::Since(SimTime::ZERO),
            rng: ctx.streams.stream("qdisc.red", ctx.port_index),
        }
    }

    /// The current average queue length, packets (for traces and tests).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Packets of `mean_pkt_bytes` the link could have sent in `[since, now)`, rounded down.
    fn idle_packets(&self, since: SimTime, now: SimTime) -> u64 {
        let idle_ps = now.saturating_since(since).0 as u128;
        let per_pkt = 8 * self.mean_pkt_bytes as u128 * PS_PER_SEC as u128;
        let m = idle_ps * self.rate.0 as u128 / per_pkt;
        m.min(u64::MAX as u128) as u64
    }

    /// Step 1 and 2 of the rules: decay over `m` idle packets, then one EWMA step.
    fn update_avg(&mut self, qlen: usize, m: u64) {
        let keep = 1.0 - self.q_w;
        let mut avg = self.avg;
        if m > 0 {
            // Past ~2^31 packets the factor is 0 for any weight >= 1e-9 anyway.
            avg *= keep.powi(m.min(i32::MAX as u64) as i32);
        }
        self.avg = avg * keep + self.q_w * qlen as f64;
    }

    /// `p_b`, the drop probability for the current average (ns-2 `calculate_p_new`).
    fn p_b(&self) -> f64 {
        let p = if self.avg >= self.max_th {
            if self.gentle {
                self.v_c * self.avg + self.v_d
            } else {
                1.0
            }
        } else {
            (self.v_a * self.avg + self.v_b) * self.max_p
        };
        p.min(1.0)
    }

    /// The random test of rule 3 for a packet of `size` bytes.
    fn early(&mut self, pkt: &P) -> Decision {
        let p_b = self.p_b();
        let p_a = spaced_p(p_b, self.count, self.count_bytes, self.byte_mode, self.mean_pkt_bytes, self.wait, pkt.size());
        let u: f64 = self.rng.gen();
        if u < p_a {
            self.count = 0;
            self.count_bytes = 0;
            if self.ecn && pkt.ecn() != Ecn::NotEct {
                Decision::Mark
            } else {
                Decision::Early
            }
        } else {
            Decision::Accept
        }
    }
}

/// `p_a` from `p_b` and the arrivals since the last drop (ns-2 `modify_p`).
fn spaced_p(p_b: f64, count: u64, count_bytes: u64, byte_mode: bool, mean: u32, wait: bool, size: u32) -> f64 {
    let c = if byte_mode { (count_bytes / mean as u64) as f64 } else { count as f64 };
    let cp = c * p_b;
    let mut p = if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_b / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        p_b / (1.0 - cp)
    } else {
        1.0
    };
    if byte_mode && p < 1.0 {
        p = p * size as f64 / mean as f64;
    }
    p.min(1.0)
}

impl<P: QPacket> Discipline for Red<P> {
    type Config = RedConfig;
    fn validate(cfg: &RedConfig, limit: Limit) -> Result<(), ConfigError> {
        cfg.validate(limit)
    }
    fn build(cfg: &RedConfig, limit: Limit, ctx: &PortContext) -> Self {
        Red::new(cfg, limit, ctx)
    }
}

impl<P: QPacket> Qdisc for Red<P> {
    type Pkt = P;

    fn enqueue(&mut self, mut pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        let m = match self.idle {
            Idle::Busy => 0,
            Idle::Drained(t) | Idle::Since(t) => self.idle_packets(t, now),
        };
        self.idle = Idle::Busy;
        let qlen = self.q.len();
        self.update_avg(qlen, m);
        self.count += 1;
        self.count_bytes += pkt.size() as u64;

        let mut decision = Decision::Accept;
        if self.avg >= self.min_th && qlen > 1 {
            let forced_at = if self.gentle { 2.0 * self.max_th } else { self.max_th };
            if self.avg >= forced_at {
                decision = Decision::Forced;
            } else if !self.old {
                // The average just crossed min (or the queue just became non-trivial): start
                // counting from here, as ns-2 does.
                self.count = 1;
                self.count_bytes = pkt.size() as u64;
                self.old = true;
            } else {
                decision = self.early(&pkt);
            }
        } else {
            self.old = false;
        }

        if !self.limit.fits(qlen, self.bytes, pkt.size()) {
            self.count = 0;
            self.count_bytes = 0;
            ev.drop(pkt, DropReason::Overflow, false);
            return;
        }
        match decision {
            Decision::Early => ev.drop(pkt, DropReason::RedEarly, false),
            Decision::Forced => {
                self.count = 0;
                self.count_bytes = 0;
                ev.drop(pkt, DropReason::RedForced, false);
            }
            Decision::Accept | Decision::Mark => {
                if decision == Decision::Mark {
                    pkt.set_ecn(Ecn::Ce);
                    ev.mark(MarkReason::Red);
                }
                self.bytes += pkt.size() as u64;
                self.q.push_back(pkt);
            }
        }
    }

    fn dequeue(&mut self, now: SimTime, _ev: &mut QdiscEvents<P>) -> Option<P> {
        match self.q.pop_front() {
            Some(p) => {
                self.bytes -= p.size() as u64;
                if self.q.is_empty() {
                    self.idle = Idle::Drained(now);
                }
                Some(p)
            }
            None => {
                if !matches!(self.idle, Idle::Since(_)) {
                    self.idle = Idle::Since(now);
                }
                None
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn name(&self) -> &'static str {
        "red"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{check_accounting, ctx, pkt};
    use crate::qdisc::Queue;
    use crate::time::SimDuration;
    use proptest::prelude::*;

    fn red(c: &RedConfig, limit: u32) -> Red {
        Red::new(c, Limit::pkts(limit), &ctx(1))
    }

    /// `avg` follows the instantaneous length exactly: `avg = qlen` at each arrival.
    fn instant(min: f64, max: f64) -> RedConfig {
        RedConfig { min_thresh_pkts: min, max_thresh_pkts: max, q_weight: 1.0, ..RedConfig::default() }
    }

    /// Stores `n` packets of flow 99 directly, bypassing the RED rules (test setup only).
    fn prime(q: &mut Red, n: u64) {
        for s in 0..n {
            let p = pkt(99, s, 1500);
            q.bytes += p.size as u64;
            q.q.push_back(p);
        }
        q.idle = Idle::Busy;
    }

    /// Offers `n` arrivals of flow 1 (ECN field `ecn`, size `size`) while holding the queue
    /// at its current length (one departure per stored arrival). Returns, per arrival, the
    /// drop reason if it was dropped.
    fn hold(q: &mut Red, n: u64, ecn: Ecn, size: u32) -> (Vec<Option<DropReason>>, u32, Vec<Packet>) {
        let mut ev = QdiscEvents::default();
        let mut res = Vec::new();
        let mut marks = 0;
        let mut out = Vec::new();
        for s in 0..n {
            ev.clear();
            let mut p = pkt(1, s, size);
            p.ecn = ecn;
            q.enqueue(p, SimTime::ZERO, &mut ev);
            marks += ev.marks[MarkReason::Red as usize];
            match ev.dropped.first() {
                Some(d) => {
                    assert!(!d.queued);
                    res.push(Some(d.reason));
                }
                None => {
                    res.push(None);
                    out.push(q.dequeue(SimTime::ZERO, &mut ev).unwrap());
                }
            }
        }
        (res, marks, out)
    }

    fn drop_indices(res: &[Option<DropReason>], reason: DropReason) -> Vec<usize> {
        res.iter().enumerate().filter(|(_, r)| **r == Some(reason)).map(|(i, _)| i).collect()
    }

    fn assert_per_flow_order(out: &[Packet]) {
        let mut last = std::collections::HashMap::new();
        for p in out {
            if let Some(prev) = last.insert(p.flow, p.seq) {
                assert!(p.seq > prev, "flow {} reordered: {} after {}", p.flow, p.seq, prev);
            }
        }
    }

    // --- the rules: thresholds --------------------------------------------------------------
    #[test]
    fn nothing_dropped_while_the_average_is_below_min() {
        let mut q = red(&instant(5.0, 15.0), 100);
        prime(&mut q, 4);
        let (res, marks, _) = hold(&mut q, 2000, Ecn::NotEct, 1500);
        assert!(res.iter().all(|r| r.is_none()));
        assert_eq!(marks, 0);
    }

    #[test]
    fn between_thresholds_wait_spaces_drops_by_one_to_two_over_p() {
        // avg = 10: p_b = 0.1 * (10 - 5) / (15 - 5) = 0.05, so consecutive early drops are
        // between 1/p_b = 20 and 2/p_b = 40 arrivals apart.
        let mut q = red(&instant(5.0, 15.0), 100);
        prime(&mut q, 10);
        let (res, _, _) = hold(&mut q, 20_000, Ecn::NotEct, 1500);
        assert!(!res.contains(&Some(DropReason::RedForced)));
        let drops = drop_indices(&res, DropReason::RedEarly);
        assert!(drops.len() > 400, "{} early drops", drops.len());
        for w in drops.windows(2) {
            let gap = w[1] - w[0];
            assert!((20..=40).contains(&gap), "gap {gap}");
        }
    }

    #[test]
    fn without_wait_the_mean_spacing_follows_the_paper() {
        // Uniform spacing on [1, 1/p_b]: mean (1/p_b + 1) / 2 = 10.5 for p_b = 0.05.
        let mut q = red(&RedConfig { wait: false, ..instant(5.0, 15.0) }, 100);
        prime(&mut q, 10);
        let (res, _, _) = hold(&mut q, 50_000, Ecn::NotEct, 1500);
        let drops = drop_indices(&res, DropReason::RedEarly);
        let mean = (drops[drops.len() - 1] - drops[0]) as f64 / (drops.len() - 1) as f64;
        assert!((9.5..11.5).contains(&mean), "mean gap {mean}");
        assert!(drops.windows(2).all(|w| w[1] - w[0] <= 20));
    }

    #[test]
    fn gentle_ramps_between_max_and_twice_max() {
        // avg = 20 (gentle): p_b = max_p + (1 - max_p) * (20 - 15) / 15 = 0.4: early, not forced.
        let mut q = red(&instant(5.0, 15.0), 100);
        prime(&mut q, 20);
        let (res, _, _) = hold(&mut q, 5000, Ecn::NotEct, 1500);
        assert!(!res.contains(&Some(DropReason::RedForced)));
        let drops = drop_indices(&res, DropReason::RedEarly);
        assert!(drops.len() > 1000, "{} early drops", drops.len());
        for w in drops.windows(2) {
            assert!((3..=5).contains(&(w[1] - w[0])), "gap {}", w[1] - w[0]);
        }
    }

    #[test]
    fn gentle_drops_everything_above_twice_max() {
        let mut q = red(&instant(5.0, 15.0), 100);
        prime(&mut q, 31);
        let (res, marks, _) = hold(&mut q, 500, Ecn::NotEct, 1500);
        assert!(res.iter().all(|r| *r == Some(DropReason::RedForced)));
        assert_eq!(marks, 0);
    }

    #[test]
    fn without_gentle_everything_above_max_is_forced() {
        let mut q = red(&RedConfig { gentle: false, ..instant(5.0, 15.0) }, 100);
        prime(&mut q, 15);
        let (res, _, _) = hold(&mut q, 500, Ecn::NotEct, 1500);
        assert!(res.iter().all(|r| *r == Some(DropReason::RedForced)));
    }

    #[test]
    fn never_drops_early_with_at_most_one_packet_queued() {
        // ns-2: `qlen > 1` is required for any RED drop, whatever the average.
        let mut q = red(&RedConfig::default(), 100);
        q.avg = 1000.0;
        prime(&mut q, 1);
        let (res, _, _) = hold(&mut q, 100, Ecn::NotEct, 1500);
        assert!(res.iter().all(|r| r.is_none()));
        assert!(q.avg() > 30.0);
    }

    #[test]
    fn a_full_buffer_overflows_whatever_the_average() {
        let mut q = red(&RedConfig::default(), 3);
        let mut ev = QdiscEvents::default();
        for s in 0..4 {
            q.enqueue(pkt(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        assert_eq!(ev.dropped.len(), 1);
        assert_eq!(ev.dropped[0].reason, DropReason::Overflow);
        assert_eq!(ev.dropped[0].pkt.seq, 3);
        // with the average above 2*max, a full buffer is still reported as overflow
        let mut q = red(&instant(1.0, 2.0), 3);
        prime(&mut q, 3);
        ev.clear();
        q.enqueue(pkt(1, 0, 1500), SimTime::ZERO, &mut ev);
        assert_eq!(ev.dropped[0].reason, DropReason::Overflow);
    }

    // --- ECN ------------------------------------------------------------------------------
    #[test]
    fn ecn_marks_capable_packets_instead_of_early_drops() {
        let mut q = red(&RedConfig { ecn: true, ..instant(5.0, 15.0) }, 100);
        prime(&mut q, 10);
        let (res, marks, mut out) = hold(&mut q, 3000, Ecn::Ect0, 1500);
        assert!(res.iter().all(|r| r.is_none()), "an ECN-capable packet was dropped early");
        assert!(marks > 60, "{marks} marks");
        // every marked arrival leaves with CE set
        let mut ev = QdiscEvents::default();
        while let Some(p) = q.dequeue(SimTime::ZERO, &mut ev) {
            out.push(p);
        }
        let ce = out.iter().filter(|p| p.ecn == Ecn::Ce).count() as u32;
        assert_eq!(ce, marks);
    }

    #[test]
    fn ecn_still_drops_packets_that_are_not_capable() {
        let mut q = red(&RedConfig { ecn: true, ..instant(5.0, 15.0) }, 100);
        prime(&mut q, 10);
        let (res, marks, _) = hold(&mut q, 3000, Ecn::NotEct, 1500);
        assert_eq!(marks, 0);
        assert!(drop_indices(&res, DropReason::RedEarly).len() > 60);
    }

    #[test]
    fn ecn_forced_drops_still_drop() {
        let mut q = red(&RedConfig { ecn: true, ..instant(5.0, 15.0) }, 100);
        prime(&mut q, 31);
        let (res, marks, _) = hold(&mut q, 100, Ecn::Ect0, 1500);
        assert!(res.iter().all(|r| *r == Some(DropReason::RedForced)));
        assert_eq!(marks, 0);
    }

    // --- average: EWMA and idle decay -----------------------------------------------------
    #[test]
    fn average_is_an_ewma_of_the_length_at_arrival() {
        let mut q = red(&RedConfig { q_weight: 0.5, min_thresh_pkts: 50.0, max_thresh_pkts: 60.0, ..Default::default() }, 100);
        let mut ev = QdiscEvents::default();
        let mut expect = 0.0;
        for s in 0..5u64 {
            q.enqueue(pkt(1, s, 1500), SimTime::ZERO, &mut ev);
            expect = expect * 0.5 + 0.5 * s as f64;
            assert_eq!(q.avg(), expect);
        }
    }

    /// 100 Mbps (testkit) and 1500-byte mean packets: one idle packet per 120 us.
    const PKT_TIME: SimDuration = SimDuration::from_us(120);

    #[test]
    fn average_decays_while_idle_from_the_empty_dequeue() {
        let mut q = red(&RedConfig::default(), 100);
        let mut ev = QdiscEvents::default();
        prime(&mut q, 1);
        q.avg = 10.0;
        let t0 = SimTime::ZERO + SimDuration::from_ms(1);
        q.dequeue(t0, &mut ev).unwrap(); // last packet starts transmission
        let t1 = t0 + PKT_TIME;
        assert!(q.dequeue(t1, &mut ev).is_none()); // link free, nothing to send: idle since t1
        assert!(q.dequeue(t1 + PKT_TIME, &mut ev).is_none()); // a later poll does not move it
        q.enqueue(pkt(1, 0, 1500), t1 + PKT_TIME.saturating_mul(10), &mut ev);
        // m = 10 idle packets, then the arrival's own step with qlen = 0
        let expect = 10.0 * 0.998f64.powi(10) * 0.998;
        assert!((q.avg() - expect).abs() < 1e-12, "{} vs {}", q.avg(), expect);
    }

    #[test]
    fn without_an_empty_dequeue_idle_counts_from_the_last_departure() {
        let mut q = red(&RedConfig::default(), 100);
        let mut ev = QdiscEvents::default();
        prime(&mut q, 1);
        q.avg = 10.0;
        q.dequeue(SimTime::ZERO, &mut ev).unwrap();
        q.enqueue(pkt(1, 0, 1500), SimTime::ZERO + PKT_TIME.saturating_mul(11), &mut ev);
        let expect = 10.0 * 0.998f64.powi(11) * 0.998;
        assert!((q.avg() - expect).abs() < 1e-12);
        // and an arrival during the last transmission sees (almost) no decay: m = 0
        let mut q = red(&RedConfig::default(), 100);
        prime(&mut q, 1);
        q.avg = 10.0;
        q.dequeue(SimTime::ZERO, &mut ev).unwrap();
        q.enqueue(pkt(1, 0, 1500), SimTime::ZERO + SimDuration::from_us(100), &mut ev);
        assert_eq!(q.avg(), 10.0 * 0.998);
    }

    #[test]
    fn long_idle_periods_empty_the_average() {
        let mut q = red(&RedConfig::default(), 100);
        let mut ev = QdiscEvents::default();
        q.avg = 50.0;
        q.idle = Idle::Since(SimTime::ZERO);
        q.enqueue(pkt(1, 0, 1500), SimTime::from_secs_f64(3600.0), &mut ev);
        assert_eq!(q.avg(), 0.0);
    }

    // --- byte mode --------------------------------------------------------------------------
    #[test]
    fn spacing_formula_matches_ns2() {
        // wait: zero below count*p_b = 1, p_b / (2 - count*p_b) below 2, then 1
        assert_eq!(spaced_p(0.05, 10, 0, false, 1500, true, 1500), 0.0);
        assert!((spaced_p(0.05, 30, 0, false, 1500, true, 1500) - 0.1).abs() < 1e-12);
        assert_eq!(spaced_p(0.05, 40, 0, false, 1500, true, 1500), 1.0);
        // no wait: p_b / (1 - count*p_b)
        assert!((spaced_p(0.05, 10, 0, false, 1500, false, 1500) - 0.1).abs() < 1e-12);
        // byte mode: count in mean-sized packets, probability scaled by size / mean
        assert!((spaced_p(0.05, 999, 15_000, true, 1500, false, 150) - 0.01).abs() < 1e-12);
        assert!((spaced_p(0.05, 999, 15_000, true, 1500, false, 1500) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn byte_mode_drops_small_packets_less_often() {
        let c = RedConfig { byte_mode: true, wait: false, ..instant(5.0, 15.0) };
        let mut q = red(&c, 100);
        prime(&mut q, 10);
        let mut ev = QdiscEvents::default();
        let (mut small, mut big) = (0, 0);
        for s in 0..40_000u64 {
            ev.clear();
            let size = if s % 2 == 0 { 150 } else { 1500 };
            q.enqueue(pkt(1, s, size), SimTime::ZERO, &mut ev);
            if let Some(d) = ev.dropped.first() {
                assert_eq!(d.reason, DropReason::RedEarly);
                if size == 150 { small += 1 } else { big += 1 }
            } else {
                q.dequeue(SimTime::ZERO, &mut ev).unwrap();
            }
        }
        assert!(big > 4 * small && small > 0, "big {big} small {small}");
    }

    // --- order, determinism, accounting ---------------------------------------------------
    fn aggressive() -> RedConfig {
        RedConfig { min_thresh_pkts: 1.0, max_thresh_pkts: 3.0, q_weight: 0.5, max_p: 0.5, ..Default::default() }
    }

    #[test]
    fn no_reordering_within_a_flow() {
        let ops: Vec<(bool, u32, u32)> =
            (0..5000u32).map(|i| (i % 5 != 0 && i % 7 != 0, i % 6, 100 + (i * 37) % 1400)).collect();
        let out = check_accounting(Red::new(&aggressive(), Limit::pkts(8), &ctx(3)), &ops);
        assert!(out.len() > 1000);
        assert_per_flow_order(&out);
    }

    fn run(seed: u64) -> (Vec<u64>, Vec<(u64, DropReason)>) {
        let mut q = Queue::new(Red::new(&aggressive(), Limit::pkts(10), &ctx(seed)));
        let mut ev = QdiscEvents::default();
        let (mut out, mut drops) = (Vec::new(), Vec::new());
        let mut now = SimTime::ZERO;
        for i in 0..3000u64 {
            now += SimDuration::from_us(7);
            q.enqueue(pkt((i % 4) as u32, i, 1500), now, &mut ev);
            drops.extend(ev.dropped.drain(..).map(|d| (d.pkt.uid, d.reason)));
            if i % 3 == 0 {
                if let Some(p) = q.dequeue(now, &mut ev) {
                    out.push(p.uid);
                }
            }
        }
        (out, drops)
    }

    #[test]
    fn same_seed_same_run_other_seed_other_drops() {
        let a = run(42);
        assert_eq!(a, run(42));
        assert!(a.1.iter().any(|d| d.1 == DropReason::RedEarly));
        assert_ne!(a.1, run(43).1);
    }

    proptest! {
        #[test]
        fn accounting_holds(ops in proptest::collection::vec((proptest::bool::weighted(0.65), 0u32..8, 40u32..1500), 1..400)) {
            check_accounting(Red::new(&aggressive(), Limit::pkts(6), &ctx(1)), &ops);
        }

        #[test]
        fn accounting_holds_with_a_byte_limit(ops in proptest::collection::vec((proptest::bool::weighted(0.65), 0u32..8, 40u32..1500), 1..400)) {
            let c = RedConfig { byte_mode: true, wait: false, ..aggressive() };
            check_accounting(Red::new(&c, Limit { pkts: None, bytes: Some(6000) }, &ctx(1)), &ops);
        }
    }

    // --- configuration ----------------------------------------------------------------------
    #[test]
    fn validate_names_the_key() {
        let lim = Limit::pkts(100);
        assert_eq!(RedConfig::default().validate(lim), Ok(()));
        let bad = |c: RedConfig| c.validate(lim).unwrap_err().key;
        let d = RedConfig::default;
        assert_eq!(bad(RedConfig { min_thresh_pkts: -1.0, ..d() }), "min_thresh_pkts");
        assert_eq!(bad(RedConfig { min_thresh_pkts: f64::NAN, ..d() }), "min_thresh_pkts");
        assert_eq!(bad(RedConfig { max_thresh_pkts: 5.0, ..d() }), "max_thresh_pkts");
        assert_eq!(bad(RedConfig { max_thresh_pkts: f64::INFINITY, ..d() }), "max_thresh_pkts");
        assert_eq!(bad(RedConfig { q_weight: 0.0, ..d() }), "q_weight");
        assert_eq!(bad(RedConfig { q_weight: 1.5, ..d() }), "q_weight");
        assert_eq!(bad(RedConfig { max_p: 0.0, ..d() }), "max_p");
        assert_eq!(bad(RedConfig { max_p: f64::NAN, ..d() }), "max_p");
        assert_eq!(bad(RedConfig { mean_pkt_bytes: 0, ..d() }), "mean_pkt_bytes");
        assert_eq!(RedConfig { min_thresh_pkts: 0.0, q_weight: 1.0, max_p: 1.0, ..d() }.validate(lim), Ok(()));
    }

    #[test]
    fn unknown_keys_are_rejected_and_missing_keys_default() {
        use serde::de::value::{Error, MapDeserializer};
        let m = MapDeserializer::<_, Error>::new(vec![("max_thresh_pkts", 30.0f64)].into_iter());
        let c = RedConfig::deserialize(m).unwrap();
        assert_eq!(c, RedConfig { max_thresh_pkts: 30.0, ..RedConfig::default() });
        let m = MapDeserializer::<_, Error>::new(vec![("max_thresh", 30.0f64)].into_iter());
        assert!(RedConfig::deserialize(m).unwrap_err().to_string().contains("max_thresh"));
    }
}
