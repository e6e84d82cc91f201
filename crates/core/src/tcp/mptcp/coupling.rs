//! The coupled congestion-avoidance increase of an MPTCP connection's subflows: LIA (RFC 6356),
//! OLIA (Khalili et al.), or none (each subflow NewReno on its own).
//!
//! Rules:
//! - Pure functions over a slice of [`SubflowView`]s, one per subflow of the connection; they
//!   return the congestion-avoidance change of subflow `r`'s window for `acked` acknowledged
//!   bytes, in bytes (`f64`; OLIA's may be negative). The congestion control
//!   (`congestion/coupled.rs`) turns it into window bytes and carries the fraction.
//! - A subflow without an RTT sample (`srtt: None`) is left out of every sum, maximum and set
//!   below (as Linux leaves out a subflow whose `srtt_us` is 0). If subflow `r` itself has
//!   none, or no subflow has one, the increase is NewReno's. A sample of 0 ps counts as 1 ps
//!   (no division by zero).
//! - `cwnd_bytes` should be the window without fast-recovery inflation (`Window::base_cwnd`):
//!   Linux's LIA and OLIA read `ssthresh` for a subflow in recovery, for the same reason.
//! - **Uncoupled**: `acked * MSS / cwnd` bytes: RFC 5681 section 3.1's congestion avoidance
//!   with byte counting (RFC 3465), which is also the cap of LIA's increase (RFC 6356 section
//!   4: "the increase ... that a regular TCP would get"). For ACKs of one SMSS it is exactly
//!   the NewReno of `congestion/reno.rs`, which adds `SMSS^2 / cwnd` per ACK whatever it
//!   acknowledges; they differ for stretch or delayed ACKs.
//! - **LIA**, RFC 6356 section 4 (equations 1 and 2), in bytes and any time unit:
//!   `alpha = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2`, and for `acked`
//!   bytes on subflow `i`: `min(alpha * acked * MSS_i / cwnd_total, acked * MSS_i / cwnd_i)`.
//!   `cwnd_total` is the sum over the subflows with a sample. Computed afresh on each call
//!   (the RFC allows computing alpha once per window; per ACK is the exact form).
//! - **OLIA**, Khalili, Gast, Popovic, Le Boudec, "MPTCP is not Pareto-optimal: performance
//!   issues and a possible solution", CoNEXT 2012, section 5 (algorithm 1; IEEE/ACM ToN 21(5)
//!   2013): windows `w_p` in packets (`cwnd_p / MSS_p`), for each ACK of a packet on path `r`:
//!   `w_r / rtt_r^2 / (sum_p w_p / rtt_p)^2 + alpha_r / w_r` packets, so `acked` bytes give
//!   that many times `acked` bytes. `M` is the set of paths with the largest window, `B` the
//!   set of paths with the largest `l_p / rtt_p^2` (`l_p`: [`LossIntervals::interval`]);
//!   `alpha_r = 1 / (|R| |B\M|)` for `r` in `B\M`, `-1 / (|R| |M|)` for `r` in `M` when `B\M`
//!   is not empty, 0 otherwise. `|R|` is the number of subflows of the connection (all views;
//!   Linux's `cnt_established`). Set membership is decided exactly: windows are compared as
//!   integers, `l_a / rtt_a^2` against `l_b / rtt_b^2` by cross-multiplying in 192-bit
//!   integers (ties are what makes a path both best and largest, so no rounding may decide
//!   them), as Linux compares `l_a * rtt_b^2` with `l_b * rtt_a^2` in integers.
//! - **Loss intervals** ([`LossIntervals`], OLIA section 5 and Linux `mptcp_olia.c`): three
//!   sequence numbers per subflow, the `snd_una` at the last-but-one and the last congestion
//!   event and the current `snd_una`; `l_r` is the larger of the bytes acknowledged between the
//!   last two events and since the last. A congestion event (entering fast recovery, a
//!   timeout, an ECN reaction: Linux's `TCP_CA_Recovery`, `TCP_CA_Loss`, `TCP_CA_CWR`) shifts
//!   them, unless nothing was acknowledged since the last one (so repeated timeouts of one
//!   episode count once). Before any loss, `l_r` is everything acknowledged so far. The paper
//!   smooths `l_r`; Linux (and this) uses the raw value.

use crate::time::SimDuration;
use serde::{Deserialize, Serialize};

/// The coupled increase of a connection's subflows (`tcp.mptcp.coupling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Coupling {
    /// RFC 6356 Linked Increases.
    #[default]
    Lia,
    /// Khalili et al.'s Opportunistic Linked Increases.
    Olia,
    /// Each subflow is NewReno on its own (not TCP-friendly at a shared bottleneck).
    Uncoupled,
}

impl Coupling {
    /// The name in configuration.
    pub fn name(self) -> &'static str {
        match self {
            Coupling::Lia => "lia",
            Coupling::Olia => "olia",
            Coupling::Uncoupled => "uncoupled",
        }
    }
}

/// What the coupled increase needs to know of one subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubflowView {
    /// Congestion window, bytes, without fast-recovery inflation.
    pub cwnd_bytes: u64,
    /// Smoothed RTT (RFC 6298 SRTT); `None` before the first sample.
    pub srtt: Option<SimDuration>,
    /// Sender maximum segment size, bytes.
    pub mss: u32,
    /// OLIA's `l_r`, bytes ([`LossIntervals::interval`]); ignored by LIA and Uncoupled.
    pub loss_interval_bytes: u64,
}

impl SubflowView {
    /// The RTT in picoseconds as a float (at least 1), if sampled.
    #[inline]
    fn rtt_ps(&self) -> Option<f64> {
        self.srtt.map(|d| d.0.max(1) as f64)
    }
    /// The window in bytes, at least one byte (no division by zero).
    #[inline]
    fn cwnd(&self) -> f64 {
        self.cwnd_bytes.max(1) as f64
    }
}

/// Congestion-avoidance change of subflow `r`'s window, bytes, for `acked` bytes acknowledged
/// on it, under `coupling` (module rules).
pub fn increase(coupling: Coupling, views: &[SubflowView], r: usize, acked: u64) -> f64 {
    match coupling {
        Coupling::Lia => lia_increase(views, r, acked),
        Coupling::Olia => olia_increase(views, r, acked),
        Coupling::Uncoupled => uncoupled_increase(&views[r], acked),
    }
}

/// NewReno's congestion-avoidance increase with byte counting: `acked * MSS / cwnd`.
#[inline]
pub fn uncoupled_increase(v: &SubflowView, acked: u64) -> f64 {
    acked as f64 * v.mss as f64 / v.cwnd()
}

/// RFC 6356's `alpha` over the subflows with an RTT sample; `None` if none has one.
pub fn lia_alpha(views: &[SubflowView]) -> Option<f64> {
    let (mut total, mut best, mut sum) = (0.0f64, 0.0f64, 0.0f64);
    let mut any = false;
    for v in views {
        let Some(rtt) = v.rtt_ps() else { continue };
        any = true;
        let w = v.cwnd();
        total += w;
        best = best.max(w / (rtt * rtt));
        sum += w / rtt;
    }
    any.then(|| total * best / (sum * sum))
}

/// RFC 6356 section 4: `min(alpha * acked * MSS_r / cwnd_total, acked * MSS_r / cwnd_r)`.
pub fn lia_increase(views: &[SubflowView], r: usize, acked: u64) -> f64 {
    let own = uncoupled_increase(&views[r], acked);
    if views[r].srtt.is_none() {
        return own;
    }
    let Some(alpha) = lia_alpha(views) else { return own };
    let total: f64 = views.iter().filter(|v| v.srtt.is_some()).map(SubflowView::cwnd).sum();
    (alpha * acked as f64 * views[r].mss as f64 / total).min(own)
}

/// `a * b * b` as a 192-bit number (high 64 bits, low 128 bits), for exact comparisons.
fn mul_sq(a: u64, b: u64) -> (u64, u128) {
    let ab = a as u128 * b as u128;
    let (hi, lo) = ((ab >> 64) as u64, ab as u64);
    let lo_p = lo as u128 * b as u128;
    let hi_p = hi as u128 * b as u128;
    // ab * b = hi_p * 2^64 + lo_p
    let low = lo_p.wrapping_add(hi_p << 64);
    let carry = (low < lo_p) as u128;
    let high = (hi_p >> 64) + carry;
    (high as u64, low)
}

/// `l_a / rtt_a^2` compared with `l_b / rtt_b^2`, exactly (`rtt` in picoseconds, at least 1).
fn cmp_rate(la: u64, rtt_a: u64, lb: u64, rtt_b: u64) -> std::cmp::Ordering {
    mul_sq(la, rtt_b.max(1)).cmp(&mul_sq(lb, rtt_a.max(1)))
}

/// OLIA's `alpha_r` (module rules); 0 when `r` has no RTT sample.
pub fn olia_alpha(views: &[SubflowView], r: usize) -> f64 {
    use std::cmp::Ordering;
    if views[r].srtt.is_none() {
        return 0.0;
    }
    let sampled = || views.iter().filter_map(|v| v.srtt.map(|s| (v, s.0)));
    let max_w = sampled().map(|(v, _)| v.cwnd_bytes).max().unwrap_or(0);
    // the best l / rtt^2 (any path reaching it will do as the reference)
    let mut best: Option<(u64, u64)> = None;
    for (v, rtt) in sampled() {
        if best.is_none_or(|(l, t)| cmp_rate(v.loss_interval_bytes, rtt, l, t) == Ordering::Greater) {
            best = Some((v.loss_interval_bytes, rtt));
        }
    }
    let Some((bl, bt)) = best else { return 0.0 };
    let in_b = |v: &SubflowView, rtt: u64| cmp_rate(v.loss_interval_bytes, rtt, bl, bt) == Ordering::Equal;
    let m = sampled().filter(|(v, _)| v.cwnd_bytes == max_w).count();
    let b_not_m = sampled().filter(|&(v, rtt)| v.cwnd_bytes != max_w && in_b(v, rtt)).count();
    if b_not_m == 0 {
        return 0.0;
    }
    let n = views.len() as f64;
    let v = &views[r];
    if v.cwnd_bytes == max_w {
        -1.0 / (n * m as f64)
    } else if in_b(v, v.srtt.map_or(1, |s| s.0)) {
        1.0 / (n * b_not_m as f64)
    } else {
        0.0
    }
}

/// OLIA's change for `acked` bytes on path `r`:
/// `acked * (w_r / rtt_r^2 / (sum_p w_p / rtt_p)^2 + alpha_r / w_r)`, windows in packets.
pub fn olia_increase(views: &[SubflowView], r: usize, acked: u64) -> f64 {
    let v = &views[r];
    let Some(rtt_r) = v.rtt_ps() else { return uncoupled_increase(v, acked) };
    let pkts = |v: &SubflowView| v.cwnd() / v.mss.max(1) as f64;
    let sum: f64 = views.iter().filter_map(|p| p.rtt_ps().map(|t| pkts(p) / t)).sum();
    let w_r = pkts(v);
    let per_packet = w_r / (rtt_r * rtt_r) / (sum * sum) + olia_alpha(views, r) / w_r;
    acked as f64 * per_packet
}

/// OLIA's loss-interval bookkeeping of one subflow (module rules): sequence numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossIntervals {
    /// `snd_una` at the last-but-one congestion event.
    before_last: u64,
    /// `snd_una` at the last congestion event.
    last: u64,
    /// The highest `snd_una` seen.
    acked_to: u64,
}

impl LossIntervals {
    /// A subflow whose first unacknowledged sequence number is `snd_una`.
    pub fn new(snd_una: u64) -> LossIntervals {
        LossIntervals { before_last: snd_una, last: snd_una, acked_to: snd_una }
    }
    /// An ACK moved `snd_una` (an older value is ignored).
    #[inline]
    pub fn on_ack(&mut self, snd_una: u64) {
        self.acked_to = self.acked_to.max(snd_una);
    }
    /// A congestion event: the interval since the last one is closed, unless it is empty.
    #[inline]
    pub fn on_congestion_event(&mut self) {
        if self.acked_to != self.last {
            self.before_last = self.last;
            self.last = self.acked_to;
        }
    }
    /// `l_r`: bytes acknowledged between the last two events or since the last, the larger.
    #[inline]
    pub fn interval(&self) -> u64 {
        (self.acked_to - self.last).max(self.last - self.before_last)
    }
}

#[cfg(test)]
mod tests;
