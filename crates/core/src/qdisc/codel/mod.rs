//! CoDel: the Controlled Delay control law (RFC 8289), as Linux `include/net/codel_impl.h`
//! applies it, and a single-FIFO discipline built on it (Linux `sch_codel`).
//!
//! CoDel (Nichols & Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012; RFC 8289) looks
//! at the *sojourn time* of each packet as it leaves the queue. When that time has stayed at or
//! above `target` for at least one `interval`, it enters a dropping state and drops (or, with
//! `ecn`, CE-marks) one packet, then the next ones at `interval / sqrt(count)` apart, until the
//! sojourn time falls below `target` again. The law is kept apart from the container
//! ([`CodelVars`] + [`CodelParams`] over any [`CodelQueue`]) so FQ-CoDel (`fq_codel/mod.rs`) runs one
//! instance per flow queue.
//!
//! Rules of the law ([`CodelVars::dequeue`], called once per dequeue of the container):
//! - `should_drop(p)`, for the packet `p` just taken from the head: its sojourn `now - enqueued`
//!   is below `target`, or the backlog left behind it is at most one MTU (`PortContext::mtu`):
//!   no, and `first_above_time` is cleared (set to zero). Otherwise, if `first_above_time` is unset it becomes
//!   `now + interval` (no); if set, yes once `now` is strictly after it. An empty queue clears
//!   `first_above_time` (and the dequeue leaves the dropping state).
//! - In the dropping state: if `should_drop` says no, leave it. Else, while still dropping and
//!   `now >= drop_next`: `count += 1`; with `ecn` and an ECN-capable packet (ECT(0), ECT(1) or
//!   already CE), set CE ([`MarkReason::Codel`]), schedule `drop_next += interval/sqrt(count)`
//!   and send it; otherwise drop it ([`DropReason::Codel`]), take the next packet, and either
//!   leave the dropping state (`should_drop` no) or schedule `drop_next += interval/sqrt(count)`.
//! - Not dropping and `should_drop` says yes: mark (ECN) or drop that packet (then take the next
//!   and evaluate `should_drop` on it for its side effects), enter the dropping state, and set
//!   `count`: if `delta = count - lastcount > 1` and `now - drop_next < 16 * interval` (the
//!   previous dropping episode ended recently), `count = delta` (resume near the old drop
//!   rate), else `count = 1`; `lastcount = count`; `drop_next = now + interval/sqrt(count)`.
//!   This is RFC 8289's and Linux's re-entry rule.
//! - `ce_threshold_us` (optional, Linux `ce_threshold`): independently of all the above, a
//!   packet about to be sent whose sojourn exceeds the threshold and that is ECN-capable gets
//!   CE, reported as [`MarkReason::Threshold`] (a DCTCP-style step marking on sojourn time). It
//!   applies with or without `ecn`.
//! - Non-ECN-capable packets (`Ecn::NotEct`) are always dropped, never marked.
//!
//! The `codel` discipline: one FIFO, each packet stamped with its enqueue time. An arrival that
//! does not fit `queue.limit_pkts` / `limit_bytes` is refused ([`DropReason::Overflow`]), as
//! Linux `sch_codel` does (tail drop at the limit); the law runs at dequeue, the backlog it
//! compares with one MTU being the whole FIFO's.
//!
//! Parameters (`[queue.codel]`): `docs/mechanisms/fq_codel.md`.
//!
//! `target_us >= interval_us` is accepted (Linux accepts it too): CoDel then only acts on a
//! queue that stays above target for a whole interval and is of little use, but it is a legal
//! setting, not an impossible one. Both must be positive, finite and at most [`MAX_US`].
//!
//! `1/sqrt(count)`: with `invsqrt = "exact"` (the default) `interval / sqrt(count)` is computed
//! exactly (in floating point, rounded down to the picosecond). With `invsqrt = "newton"` it is
//! Linux's (and ns-3's) estimate ([`newton_step`]): a 16-bit fixed-point reciprocal, set to
//! 0xFFFF when `count` restarts at 1 and refreshed by one Newton step, `x' = x/2 (3 - count
//! x^2)`, at every other change of `count` (each `count += 1`, and the re-entry's `count =
//! delta`, stepping from the previous episode's estimate); the gap is `interval x
//! rec_inv_sqrt / 2^16` in the same fixed point. One step from `count - 1`'s value lags the
//! true root (0.5 instead of 0.707 at `count = 2`), so early drops come sooner than exact.
//!
//! Other differences from Linux: times are picoseconds, not Linux's 1024-ns units. Linux's
//! `ce_threshold_selector` / `mask` are not modelled.
//! Cost: O(1) per dequeue plus O(1) per packet dropped on the way.
//! Validation of the configuration: [`CodelConfig::validate`]; of the rules: the tests below
//! and `docs/mechanisms/fq_codel.md`.

use crate::config::{ConfigError, Limit};
use super::framework::{Discipline, DropReason, MarkReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::packet::{Ecn, Packet};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Largest `target_us`, `interval_us` or `ce_threshold_us` accepted (1000 s).
pub const MAX_US: f64 = 1e9;

/// `[queue.codel]`: see the module documentation for the meaning of every key.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CodelConfig {
    pub target_us: f64,
    pub interval_us: f64,
    pub ecn: bool,
    pub ce_threshold_us: Option<f64>,
    pub invsqrt: InvSqrt,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig { target_us: 5000.0, interval_us: 100_000.0, ecn: false, ce_threshold_us: None, invsqrt: InvSqrt::Exact }
    }
}

/// How the law computes `1/sqrt(count)` (`invsqrt`; see the module documentation).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InvSqrt {
    /// Floating point, exact to the picosecond.
    #[default]
    Exact,
    /// Linux's and ns-3's 16-bit fixed-point estimate, one Newton step per change of `count`.
    Newton,
}

impl CodelConfig {
    /// Rejects impossible values; the key is relative to `[queue.codel]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_law(self.target_us, self.interval_us, self.ce_threshold_us)
    }
}

/// Checks the control-law keys shared by `[queue.codel]` and `[queue.fq_codel]`.
pub(crate) fn validate_law(target_us: f64, interval_us: f64, ce_threshold_us: Option<f64>) -> Result<(), ConfigError> {
    // 1e-6 us = 1 ps, the clock's resolution.
    let positive = |key: &str, v: f64| {
        if v.is_finite() && (1e-6..=MAX_US).contains(&v) {
            Ok(())
        } else {
            Err(ConfigError::new(key, format!("must be a duration in [1e-6, {MAX_US}] us, got {v}")))
        }
    };
    positive("target_us", target_us)?;
    positive("interval_us", interval_us)?;
    if let Some(c) = ce_threshold_us {
        if !(c.is_finite() && (0.0..=MAX_US).contains(&c)) {
            return Err(ConfigError::new("ce_threshold_us", format!("must be in [0, {MAX_US}] us, got {c}")));
        }
    }
    Ok(())
}

/// Microseconds (validated) to a duration, rounded to the picosecond.
#[inline]
pub(crate) fn us(v: f64) -> SimDuration {
    SimDuration((v * 1e6).round() as u64)
}

/// The constants of one control law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    pub target: SimDuration,
    pub interval: SimDuration,
    /// A backlog of at most this many bytes is never judged to be a standing queue.
    pub mtu: u64,
    pub ecn: bool,
    pub ce_threshold: Option<SimDuration>,
    /// `invsqrt = "newton"`: Linux's fixed-point estimate of `1/sqrt(count)`.
    pub newton: bool,
}

impl CodelParams {
    pub fn new(target_us: f64, interval_us: f64, ecn: bool, ce_threshold_us: Option<f64>, mtu: u32) -> CodelParams {
        CodelParams {
            target: us(target_us),
            interval: us(interval_us).max(SimDuration(1)),
            mtu: mtu as u64,
            ecn,
            ce_threshold: ce_threshold_us.map(us),
            newton: false,
        }
    }

    /// The same constants computing `1/sqrt(count)` as `invsqrt` says.
    pub fn with_invsqrt(mut self, invsqrt: InvSqrt) -> CodelParams {
        self.newton = invsqrt == InvSqrt::Newton;
        self
    }
}

/// What the law needs from the queue it controls.
pub trait CodelQueue {
    type Pkt: QPacket;
    /// Removes the head packet, with the time it was enqueued.
    fn pop(&mut self) -> Option<(Self::Pkt, SimTime)>;
    /// Backlog in bytes compared with one MTU (read just after a `pop`).
    fn backlog_bytes(&self) -> u64;
}

/// The state of one control law (RFC 8289 section 5; Linux `struct codel_vars`), in 32 bytes
/// so that FQ-CoDel keeps it on the same cache line as its queue's FIFO ends (`fq_codel/mod.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CodelVars {
    /// When the sojourn will have been above target for an interval; [`SimTime::ZERO`] while
    /// below (it is always at least one interval after time zero when set).
    pub first_above_time: SimTime,
    /// When the next drop is due (in the dropping state).
    pub drop_next: SimTime,
    /// Drops (and marks) in the current dropping episode, plus the re-entry carry-over.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// `invsqrt = "newton"`: Linux's estimate of `1/sqrt(count)` in units of 2^-16 (fits the
    /// struct's padding: still 32 bytes).
    pub rec_inv_sqrt: u16,
    pub dropping: bool,
}

/// Linux's `rec_inv_sqrt` for `count = 1` (`~0U >> 16`).
pub const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// One Newton step of Linux's (and ns-3's) reciprocal square root, `x' = x/2 (3 - count x^2)`,
/// in its fixed point (`x` = `rec_inv_sqrt / 2^16`, computed on 32 bits). Wrapping arithmetic
/// as in C: a stale `x` far above `1/sqrt(count)` gives what Linux gives, not a panic.
#[inline]
pub fn newton_step(count: u32, rec_inv_sqrt: u16) -> u16 {
    let invsqrt = (rec_inv_sqrt as u64) << 16;
    let invsqrt2 = (invsqrt * invsqrt) >> 32;
    let val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2) >> 2;
    let val = val.wrapping_mul(invsqrt) >> (32 - 2 + 1);
    (val >> 16) as u16
}

/// `t + interval / sqrt(count)`, rounded down to the picosecond.
#[inline]
pub fn control_law(t: SimTime, interval: SimDuration, count: u32) -> SimTime {
    let gap = interval.0 as f64 / (count.max(1) as f64).sqrt();
    t + SimDuration(gap as u64)
}

#[inline]
fn ecn_capable<P: QPacket>(pkt: &P) -> bool {
    pkt.ecn() != Ecn::NotEct
}

impl CodelVars {
    /// When the drop after one at `t` is due: `t + interval / sqrt(count)`, exactly or by
    /// Linux's estimate (`reciprocal_scale(interval, rec_inv_sqrt << 16)`).
    #[inline]
    fn next_drop(&self, t: SimTime, p: &CodelParams) -> SimTime {
        if p.newton {
            t + SimDuration(((p.interval.0 as u128 * ((self.rec_inv_sqrt as u128) << 16)) >> 32) as u64)
        } else {
            control_law(t, p.interval, self.count)
        }
    }

    /// RFC 8289 `dodequeue`'s test on the packet just dequeued (enqueued at `enq`, `None` if the
    /// queue was empty) leaving `backlog` bytes behind it; `ldelay` becomes that packet's sojourn.
    #[inline]
    fn should_drop(&mut self, enq: Option<SimTime>, backlog: u64, p: &CodelParams, now: SimTime, ldelay: &mut SimDuration) -> bool {
        let Some(enq) = enq else {
            self.first_above_time = SimTime::ZERO;
            return false;
        };
        *ldelay = now.saturating_since(enq);
        if *ldelay < p.target || backlog <= p.mtu {
            self.first_above_time = SimTime::ZERO;
            return false;
        }
        if self.first_above_time == SimTime::ZERO {
            self.first_above_time = now + p.interval;
            false
        } else {
            now > self.first_above_time
        }
    }

    /// Takes the next packet to send from `q`, dropping or marking on the way as the law says
    /// (see the module rules). Drops are reported in `ev` as `queued` [`DropReason::Codel`].
    pub fn dequeue<Q: CodelQueue>(
        &mut self,
        p: &CodelParams,
        q: &mut Q,
        now: SimTime,
        ev: &mut QdiscEvents<Q::Pkt>,
    ) -> Option<Q::Pkt> {
        let Some((first, enq)) = q.pop() else {
            self.dropping = false;
            return None;
        };
        // Sojourn of the last packet examined (the one sent, if any).
        let mut ldelay = SimDuration::ZERO;
        let drop = self.should_drop(Some(enq), q.backlog_bytes(), p, now, &mut ldelay);
        if !drop && !self.dropping && p.ce_threshold.is_none() {
            return Some(first); // the common case: nothing to drop, end or mark
        }
        let mut pkt = Some(first);
        if self.dropping {
            if !drop {
                self.dropping = false;
            } else {
                while self.dropping && now >= self.drop_next {
                    let cur = pkt.as_mut().expect("dropping state with no packet");
                    self.count = self.count.saturating_add(1);
                    if p.newton {
                        self.rec_inv_sqrt = newton_step(self.count, self.rec_inv_sqrt);
                    }
                    if p.ecn && ecn_capable(cur) {
                        cur.set_ecn(Ecn::Ce);
                        ev.mark(MarkReason::Codel);
                        self.drop_next = self.next_drop(self.drop_next, p);
                        break;
                    }
                    ev.drop(pkt.take().unwrap(), DropReason::Codel, true);
                    let next = q.pop();
                    let enq = next.as_ref().map(|n| n.1);
                    pkt = next.map(|n| n.0);
                    if !self.should_drop(enq, q.backlog_bytes(), p, now, &mut ldelay) {
                        self.dropping = false;
                    } else {
                        self.drop_next = self.next_drop(self.drop_next, p);
                    }
                }
            }
        } else if drop {
            let cur = pkt.as_mut().unwrap();
            if p.ecn && ecn_capable(cur) {
                cur.set_ecn(Ecn::Ce);
                ev.mark(MarkReason::Codel);
            } else {
                ev.drop(pkt.take().unwrap(), DropReason::Codel, true);
                let next = q.pop();
                let enq = next.as_ref().map(|n| n.1);
                pkt = next.map(|n| n.0);
                // Evaluated for its effect on first_above_time, as RFC 8289 and Linux do.
                self.should_drop(enq, q.backlog_bytes(), p, now, &mut ldelay);
            }
            self.dropping = true;
            let delta = self.count.wrapping_sub(self.lastcount);
            let since = now.0 as i128 - self.drop_next.0 as i128;
            self.count = if delta > 1 && since < 16 * p.interval.0 as i128 { delta } else { 1 };
            if p.newton {
                self.rec_inv_sqrt = if self.count == 1 { REC_INV_SQRT_ONE } else { newton_step(self.count, self.rec_inv_sqrt) };
            }
            self.lastcount = self.count;
            self.drop_next = self.next_drop(now, p);
        }
        if let (Some(cur), Some(ce)) = (pkt.as_mut(), p.ce_threshold) {
            if ldelay > ce && ecn_capable(cur) {
                cur.set_ecn(Ecn::Ce);
                ev.mark(MarkReason::Threshold);
            }
        }
        pkt
    }
}

// ---------------------------------------------------------------------------------------------
// The single-FIFO `codel` discipline
// ---------------------------------------------------------------------------------------------

/// One FIFO under one CoDel law (Linux `sch_codel`); see the module documentation.
#[derive(Debug)]
pub struct Codel<P = Packet> {
    fifo: Fifo<P>,
    limit: Limit,
    params: CodelParams,
    vars: CodelVars,
}

#[derive(Debug, Default)]
struct Fifo<P = Packet> {
    q: VecDeque<(P, SimTime)>,
    bytes: u64,
}

impl<P: QPacket> CodelQueue for Fifo<P> {
    type Pkt = P;

    #[inline]
    fn pop(&mut self) -> Option<(P, SimTime)> {
        let e = self.q.pop_front()?;
        self.bytes -= e.0.size() as u64;
        Some(e)
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
}

impl<P: QPacket> Codel<P> {
    pub fn new(c: &CodelConfig, limit: Limit, ctx: &PortContext) -> Self {
        Codel {
            fifo: Fifo { q: VecDeque::new(), bytes: 0 },
            limit,
            params: CodelParams::new(c.target_us, c.interval_us, c.ecn, c.ce_threshold_us, ctx.mtu).with_invsqrt(c.invsqrt),
            vars: CodelVars::default(),
        }
    }
    /// The law's state (for tests and traces).
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl<P: QPacket> Discipline for Codel<P> {
    type Config = CodelConfig;
    fn validate(cfg: &CodelConfig, _limit: Limit) -> Result<(), ConfigError> {
        cfg.validate()
    }
    fn build(cfg: &CodelConfig, limit: Limit, ctx: &PortContext) -> Self {
        Codel::new(cfg, limit, ctx)
    }
}

impl<P: QPacket> Qdisc for Codel<P> {
    type Pkt = P;

    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        if !self.limit.fits(self.fifo.q.len(), self.fifo.bytes, pkt.size()) {
            ev.drop(pkt, DropReason::Overflow, false);
            return;
        }
        self.fifo.bytes += pkt.size() as u64;
        self.fifo.q.push_back((pkt, now));
    }

    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        self.vars.dequeue(&self.params, &mut self.fifo, now, ev)
    }

    fn len_pkts(&self) -> usize {
        self.fifo.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes
    }
    fn name(&self) -> &'static str {
        "codel"
    }
}

#[cfg(test)]
mod tests;
