//! ExpressPass credit shaper: a small credit queue released by a token bucket, beside the
//! port's data discipline (Cho et al., SIGCOMM 2017, section 3.2).
//!
//! Rules:
//! - Every port of a run with ExpressPass flows gets one, around the discipline its
//!   `queue.kind` (or `[ports]`, `[host_queue]`) gives it ([`wrap_port`]); the port holds it as
//!   the disciplines' generic wrapper (`AnyQdisc::Wrapped`), so the disciplines know nothing of
//!   credits.
//! - Packets with `Proto::Credit` go to the credit queue (FIFO, `xpass.credit_queue_pkts`
//!   credits, default 8); a credit that finds it full is refused with
//!   [`DropReason::CreditOverflow`]. Everything else goes to the inner data discipline (the
//!   port's `queue.kind`), whose drops and marks pass through unchanged.
//! - Credits leave at most at the rate that leaves room for one data frame per credit in the
//!   other direction: the paper's `link rate x 84 / (84 + 1538)` bytes/s of 84-byte credits.
//!   The bucket is a virtual clock (GCRA): a credit may leave at `now` if `now >= tat -
//!   (bucket - 1) T`, and leaving moves `tat = max(tat, now) + cost`. With `credit_tokens =
//!   "bytes"` (default; the paper's and the ns-2 code's byte bucket) a credit of `s` bytes
//!   costs `8 s (m + data_frame) / (m rate)`, `m` the mean credit size, and `T` is the cost of
//!   a mean credit: a backlog leaves at a period that varies with each credit's size (the
//!   jitter the paper's random 84-92 B sizes put into every switch). With `"count"` every
//!   credit costs `T = 8 (credit_min + data_frame) / rate`: a fixed period. Over any window
//!   of length `d` the cost of the credits that leave is at most `d + bucket T` plus one
//!   credit (tested).
//! - A credit whose turn has come is served before data (as in the ns-2 `XPassDropTail`);
//!   otherwise the data discipline is served. When only held-back credits remain,
//!   [`Qdisc::ready_at`] tells the port when to try again.
//! - Intervals are integer picoseconds, rounded up (the shaper never runs fast).

use super::config::{CreditTokens, XpassConfig};
use crate::packet::Proto;
use crate::qdisc::{AnyQdisc, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::time::SimTime;
use std::collections::VecDeque;

/// The port discipline `q` of a run with ExpressPass flows: inside a credit shaper for the
/// port's rate (`ctx.rate`).
pub fn wrap_port<P: QPacket + 'static>(cfg: &XpassConfig, q: AnyQdisc<P>, ctx: &PortContext) -> AnyQdisc<P> {
    AnyQdisc::wrap(CreditShaper::new(cfg, q, ctx))
}

#[derive(Debug)]
pub struct CreditShaper<P, Q> {
    credits: VecDeque<P>,
    credit_bytes: u64,
    limit: usize,
    /// Picoseconds per credit of the reference size (`XpassConfig::reference_credit`).
    interval_ps: u64,
    /// Tolerance `(bucket - 1) x interval`, picoseconds.
    tolerance_ps: u64,
    /// Bytes mode: a credit of `s` bytes costs `s x num / den` ps, `num = 8e12 (min + max +
    /// 2 data)`, `den = (min + max) rate` (exact integers; 0: count mode).
    num: u128,
    den: u128,
    /// Theoretical arrival time of the next credit (GCRA), picoseconds.
    tat: u64,
    /// The data discipline.
    pub data: Q,
}

impl<P: QPacket, Q: Qdisc<Pkt = P>> CreditShaper<P, Q> {
    /// A shaper for a port of `ctx.rate` around the data discipline `data`.
    pub fn new(cfg: &XpassConfig, data: Q, ctx: &PortContext) -> Self {
        let rate = ctx.rate.0.max(1) as u128;
        let frame = cfg.data_frame(ctx.mtu) as u128;
        let (interval_ps, num, den) = match cfg.credit_tokens {
            CreditTokens::Count => {
                let bits = 8 * (cfg.credit_min_bytes as u128 + frame);
                ((bits * 1_000_000_000_000).div_ceil(rate) as u64, 0, 0)
            }
            CreditTokens::Bytes => {
                let two_m = (cfg.credit_min_bytes + cfg.credit_max_bytes) as u128;
                let num = 8_000_000_000_000 * (two_m + 2 * frame);
                let den = two_m * rate;
                // the cost of a mean-size credit: 8 (m + data) / rate
                ((num * two_m).div_ceil(2 * den) as u64, num, den)
            }
        };
        CreditShaper {
            credits: VecDeque::new(),
            credit_bytes: 0,
            limit: cfg.credit_queue_pkts as usize,
            interval_ps,
            tolerance_ps: interval_ps * (cfg.credit_bucket_pkts as u64 - 1),
            num,
            den,
            tat: 0,
            data,
        }
    }

    /// The interval a credit of `size` bytes costs, picoseconds.
    #[inline]
    fn cost(&self, size: u32) -> u64 {
        if self.den > 0 {
            (self.num * size as u128).div_ceil(self.den) as u64
        } else {
            self.interval_ps
        }
    }

    /// Earliest time the head credit may leave (`None`: no credit queued).
    #[inline]
    fn head_ready(&self) -> Option<u64> {
        self.credits.front().map(|_| self.tat.saturating_sub(self.tolerance_ps))
    }

    pub fn credits_queued(&self) -> usize {
        self.credits.len()
    }
}

impl<P: QPacket, Q: Qdisc<Pkt = P>> Qdisc for CreditShaper<P, Q> {
    type Pkt = P;

    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        if pkt.proto() == Proto::Credit {
            if self.credits.len() >= self.limit {
                ev.drop(pkt, DropReason::CreditOverflow, false);
            } else {
                self.credit_bytes += pkt.size() as u64;
                self.credits.push_back(pkt);
            }
        } else {
            self.data.enqueue(pkt, now, ev);
        }
    }

    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        if let Some(ready) = self.head_ready() {
            if now.0 >= ready {
                let p = self.credits.pop_front().expect("head exists");
                self.credit_bytes -= p.size() as u64;
                self.tat = self.tat.max(now.0) + self.cost(p.size());
                return Some(p);
            }
        }
        self.data.dequeue(now, ev)
    }

    fn len_pkts(&self) -> usize {
        self.credits.len() + self.data.len_pkts()
    }
    fn len_bytes(&self) -> u64 {
        self.credit_bytes + self.data.len_bytes()
    }
    fn name(&self) -> &'static str {
        "xpass"
    }
    fn ready_at(&self) -> Option<SimTime> {
        self.head_ready().map(SimTime)
    }
}

#[cfg(test)]
mod tests {
    use crate::qdisc::droptail::DropTail;
    use crate::qdisc::testkit::{check_accounting, ctx, pkt};
    use crate::qdisc::{Limit, Queue};
    use crate::packet::Packet;
    use super::*;
    use crate::time::{BitsPerSec, SimDuration};
    use rand::{Rng as _, SeedableRng};

    fn shaper(cfg: &XpassConfig, bps: u64) -> CreditShaper<Packet, AnyQdisc> {
        let mut c = ctx(1);
        c.rate = BitsPerSec(bps);
        CreditShaper::new(cfg, AnyQdisc::DropTail(DropTail::new(Limit::pkts(50))), &c)
    }

    fn credit(seq: u64, size: u32) -> Packet {
        Packet { proto: Proto::Credit, seq, size, ..pkt(7, seq, size) }
    }

    // ---- rate ----

    /// Offers credits in random bursts and polls the shaper at random times; checks that
    /// every window between two departures holds at most `window / T + bucket` credits.
    fn never_exceeds(cfg: &XpassConfig, seed: u64) {
        let bps = 10_000_000_000u64;
        let mut q = Queue::new(shaper(cfg, bps));
        let mut ev = QdiscEvents::default();
        // expected prices, picoseconds (f64, independent of the shaper's integer arithmetic)
        let m = match cfg.credit_tokens {
            CreditTokens::Count => cfg.credit_min_bytes as f64,
            CreditTokens::Bytes => (cfg.credit_min_bytes + cfg.credit_max_bytes) as f64 / 2.0,
        };
        let t_ps = (8.0 * (m + 1500.0) * 1e12 / bps as f64).ceil() as u64;
        let price = |size: u32| -> f64 {
            match cfg.credit_tokens {
                CreditTokens::Count => t_ps as f64,
                CreditTokens::Bytes => 8.0 * size as f64 * (m + 1500.0) * 1e12 / (m * bps as f64),
            }
        };
        let mut rng = crate::rng::Rng::seed_from_u64(seed);
        let mut now = SimTime::ZERO;
        let mut out: Vec<(u64, u32)> = Vec::new();
        let mut seq = 0;
        for _ in 0..20_000 {
            now += SimDuration::from_ps(rng.gen_range(0..3 * t_ps));
            for _ in 0..rng.gen_range(0..4) {
                seq += 1;
                let size = rng.gen_range(cfg.credit_min_bytes..=cfg.credit_max_bytes);
                q.enqueue(credit(seq, size), now, &mut ev);
                ev.dropped.clear();
            }
            while let Some(p) = q.dequeue(now, &mut ev) {
                out.push((now.0, p.size));
            }
            if let Some(r) = q.qdisc.ready_at() {
                assert!(r.0 > now.0, "ready_at must be in the future when dequeue held credits back");
            }
            assert!(q.qdisc.credits_queued() <= cfg.credit_queue_pkts as usize);
        }
        assert!(out.len() > 5_000, "the shaper must pass credits: {}", out.len());
        // every window [out[i], out[j]]: spent cost <= window + bucket credits + the last credit
        // (1 ps of rounding per credit allowed)
        let bucket = cfg.credit_bucket_pkts as u64;
        for i in 0..out.len() {
            let mut cost = 0.0;
            for j in i..out.len().min(i + 200) {
                cost += price(out[j].1);
                let window = (out[j].0 - out[i].0) as f64;
                let n = (j - i + 1) as f64;
                assert!(cost <= window + (bucket * t_ps) as f64 + price(out[j].1) + n, "window {window} ps carried cost {cost} ps");
                if cfg.credit_tokens == CreditTokens::Count {
                    let n = (j - i + 1) as u64;
                    assert!(n <= (window as u64) / t_ps + bucket, "{n} credits in {window} ps (T = {t_ps} ps, bucket {bucket})");
                }
            }
        }
    }

    #[test]
    fn never_exceeds_its_rate_over_any_window() {
        let count = XpassConfig { credit_tokens: CreditTokens::Count, ..Default::default() };
        never_exceeds(&count, 1);
        never_exceeds(&XpassConfig { credit_bucket_pkts: 4, credit_queue_pkts: 3, ..count.clone() }, 2);
        never_exceeds(&XpassConfig::default(), 3);
        never_exceeds(&XpassConfig { credit_bucket_pkts: 10, ..Default::default() }, 4);
    }

    #[test]
    fn a_backlog_leaves_at_exactly_the_credit_rate() {
        // count tokens, 10 Gbit/s, 84 + 1500: one credit every 1267.2 ns
        let cfg = XpassConfig { credit_tokens: CreditTokens::Count, ..Default::default() };
        let mut s = shaper(&cfg, 10_000_000_000);
        let mut ev = QdiscEvents::default();
        for i in 0..8 {
            s.enqueue(credit(i, 84), SimTime::ZERO, &mut ev);
        }
        let mut t = SimTime::ZERO;
        let mut times = Vec::new();
        while s.len_pkts() > 0 {
            match s.dequeue(t, &mut ev) {
                Some(_) => times.push(t.0),
                None => t = s.ready_at().unwrap(),
            }
        }
        assert_eq!(times.len(), 8);
        for w in times.windows(2) {
            assert_eq!(w[1] - w[0], 1_267_200);
        }
    }

    /// Departure times of a backlog of credits of `sizes` (all offered at 0).
    fn backlog_gaps(cfg: &XpassConfig, sizes: &[u32]) -> Vec<u64> {
        let mut s = shaper(cfg, 10_000_000_000);
        let mut ev = QdiscEvents::default();
        for (i, &size) in sizes.iter().enumerate() {
            s.enqueue(credit(i as u64, size), SimTime::ZERO, &mut ev);
        }
        let (mut t, mut times) = (SimTime::ZERO, Vec::new());
        while s.len_pkts() > 0 {
            match s.dequeue(t, &mut ev) {
                Some(_) => times.push(t.0),
                None => t = s.ready_at().unwrap(),
            }
        }
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }

    #[test]
    fn bytes_tokens_space_credits_by_their_size() {
        // 84-92 B credits priced at the mean 88 B: a credit of s bytes holds the next one back
        // 8 s (88 + 1500) / (88 x 10 Gbit/s) = s x 14.4364 ns; the mean credit buys 1270.4 ns
        // (one 1500 B frame at 10 Gbit/s plus 88 B). Count tokens: a fixed 1267.2 ns.
        let sizes = [84, 92, 88, 84, 92, 92, 84, 88];
        let gaps = backlog_gaps(&XpassConfig::default(), &sizes);
        for (g, &s) in gaps.iter().zip(&sizes) {
            let want = 8.0 * s as f64 * 1588.0 * 1e12 / (88.0 * 1e10);
            assert!((*g as f64 - want).abs() <= 1.0, "credit of {s} B: gap {g} ps, want {want}");
        }
        assert_eq!(gaps[0], 1_212_655); // 84 B: ceil(8 x 84 x 1588 x 1e12 / 8.8e11)
        assert_eq!(gaps[1], 1_328_146); // 92 B
        assert_eq!(gaps[2], 1_270_400); // 88 B, the mean
        let count = backlog_gaps(&XpassConfig { credit_tokens: CreditTokens::Count, ..Default::default() }, &sizes);
        assert!(count.iter().all(|&g| g == 1_267_200), "{count:?}");
    }

    // ---- queue bound and separation ----

    #[test]
    fn credit_queue_bound_holds_and_data_is_untouched() {
        let cfg = XpassConfig { credit_queue_pkts: 8, ..Default::default() };
        let mut q = Queue::new(shaper(&cfg, 10_000_000_000));
        let mut ev = QdiscEvents::default();
        for i in 0..20 {
            q.enqueue(credit(i, 84), SimTime::ZERO, &mut ev);
        }
        assert_eq!(q.qdisc.credits_queued(), 8);
        assert_eq!(q.stats.drops_by_reason(DropReason::CreditOverflow), 12);
        for i in 0..30 {
            q.enqueue(pkt(1, i, 1500), SimTime::ZERO, &mut ev);
        }
        assert_eq!(q.stats.drops_by_reason(DropReason::CreditOverflow), 12);
        assert_eq!(q.len_pkts(), 38);
        // first credit now, then data while the next credit waits
        assert_eq!(q.dequeue(SimTime::ZERO, &mut ev).unwrap().proto, Proto::Credit);
        assert_eq!(q.dequeue(SimTime::ZERO, &mut ev).unwrap().proto, Proto::Tcp);
        // the data queue's own limit still applies
        for i in 0..100 {
            q.enqueue(pkt(1, 100 + i, 1500), SimTime::ZERO, &mut ev);
        }
        assert!(q.stats.drops_by_reason(DropReason::Overflow) > 0);
    }

    #[test]
    fn accounting_identities_hold() {
        let mut rng = crate::rng::Rng::seed_from_u64(9);
        let ops: Vec<(bool, u32, u32)> = (0..5000).map(|_| (rng.gen_bool(0.6), rng.gen_range(0..5), rng.gen_range(84..1500))).collect();
        check_accounting(shaper(&XpassConfig::default(), 1_000_000_000), &ops);
        // and with credits: the testkit's packets are TCP; drive credits by hand
        let mut q = Queue::new(shaper(&XpassConfig { credit_queue_pkts: 2, ..Default::default() }, 1_000_000_000));
        let mut ev = QdiscEvents::default();
        let mut now = SimTime::ZERO;
        for i in 0..3000u64 {
            now += SimDuration::from_ns(rng.gen_range(0..2000));
            if rng.gen_bool(0.5) {
                q.enqueue(credit(i, rng.gen_range(84..=92)), now, &mut ev);
            } else if rng.gen_bool(0.3) {
                q.enqueue(pkt(2, i, 1500), now, &mut ev);
            } else {
                q.dequeue(now, &mut ev);
            }
            ev.dropped.clear();
            let st = &q.stats;
            assert_eq!(st.len_pkts, q.qdisc.len_pkts() as u64);
            assert_eq!(st.len_bytes, q.qdisc.len_bytes());
            assert_eq!(st.queued_pkts(), q.qdisc.len_pkts() as u64);
            assert_eq!(st.queued_bytes(), q.qdisc.len_bytes());
        }
        assert!(q.stats.drops_by_reason(DropReason::CreditOverflow) > 0);
    }
}
