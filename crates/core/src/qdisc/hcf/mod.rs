//! HCF (Hashed Credits Fair): two FIFOs, hashed per-bin credits, priority periods with queue swap.
//!
//! HCF is the switch discipline of Shpiner, Keslassy, Bracha, Dagan, Iny and Soha, "A switch-based
//! approach to throughput collapse and starvation in data centers" (IWQoS 2010; Computer Networks
//! 56(14), 2012; paper 000 in `shared/papers/`, Algorithm 1, sections III and IV). The buffer is
//! split into a high-priority (HP) and a low-priority (LP) FIFO; HP is always served first. Flows
//! are hashed into K bins of `c0` credits each. An arrival whose bin still has credit joins HP and spends one credit; any
//! other arrival joins LP and empties its bin. A *priority period* ends when HP runs dry after
//! serving an HP packet: every bin gets its `c0` credits back, a new hash function is drawn, and
//! the two queues swap roles (III-D), so the old LP queue, which holds the flows that ran out of
//! credit, is served next. Theorem 1 of the paper: with swapping no flow is ever reordered.
//!
//! # Parameters (`[queue.hcf]`; the buffer B is `queue.limit_pkts` and/or `queue.limit_bytes`)
//! | key | unit | default | meaning |
//! |---|---|---|---|
//! | `bins` | bins | 20 | K, number of credit bins (1 ..= 2^20) |
//! | `credits` | credits | 1 | c0, credits per bin at the start of a period (>= 1) |
//! | `hashes` | functions | 1 | s; s > 1 is the Bloom counter of IV-A (1 ..= K) |
//! | `hp_fraction` | fraction of B | 0.5 | HP share of the buffer, in (0, 1) |
//! | `hp_limit_pkts` | packets | none | HP share given in packets instead (needs `limit_pkts`) |
//! | `period` | `dynamic`/`fixed` | `dynamic` | how priority periods end (III-B / IV-C) |
//! | `period_us` | microseconds | none | fixed period length (needed when `period = "fixed"`) |
//! | `swap` | bool | true | swap HP and LP at each period start (III-D) |
//! | `credit_unit` | `packets`/`bytes` | `packets` | a credit is a packet, or `c0 * mtu` bytes per bin |
//! | `zero_on_lp` | bool | true | an LP arrival empties its bin (Algorithm 1, step 4) |
//!
//! # Rules chosen here (the paper leaves them open; `docs/mechanisms/hcf.md` says why)
//! - **Buffer split.** HP gets `round(hp_fraction * limit_pkts)` packets (or exactly
//!   `hp_limit_pkts`), LP the rest; a byte limit is split by the same fraction. Both queues must
//!   get at least one packet (byte). Limits belong to the *role*, not to the physical queue: after
//!   a swap the queue that becomes HP takes the HP limit. A queue holding more than its new limit
//!   keeps its packets and just accepts nothing until it drains below the limit. On top of the
//!   role limits, the two queues together never hold more than B: with an unequal split the
//!   inherited queue could otherwise push the total above the buffer.
//! - **Period end (dynamic).** A period ends on a dequeue from the HP queue that leaves it empty.
//!   After a swap the new HP queue starts with the old LP packets; serving them counts as serving
//!   HP packets, so the period ends as soon as they and any newcomers have left. A period that
//!   starts with HP empty (the whole buffer was empty) lasts until its first HP packet leaves.
//!   Serving LP never ends a period. (With swapping and packet limits the LP queue is never
//!   served at all: it only fills while HP is busy, and HP's last departure swaps it into HP. It
//!   is served directly only when a packet larger than HP's byte limit went to LP.)
//! - **Period end (fixed).** Periods are `[n T, (n+1) T)` of simulated time. The boundary is
//!   evaluated lazily at the next `enqueue`/`dequeue`; if several boundaries passed, credits are
//!   reset and the hash is redrawn once, and the queues are swapped once per boundary passed
//!   (that is, iff an odd number passed), which is what an eager switch would have done.
//!   Draining HP does not end a fixed period.
//! - **Hash.** Each period draws a salt = (next number of the port's stream `qdisc.hcf`) XOR (the
//!   period's start time in ps), as in IV-D. The j-th hash of a packet is
//!   `hash_flow(flow_key, salt + j)` mapped to a bin by a multiply-shift.
//! - **Bloom counter (s > 1).** The s bins of a packet (duplicates counted once) are looked up;
//!   the packet joins HP if at least one has credit and HP fits, and then *every* positive bin of
//!   the packet is decremented (the paper's "all of its corresponding positive hashed credits";
//!   bins already at 0 stay at 0). On LP all its bins are set to 0. s = 1 is plain HCF.
//! - **Byte credits.** A bin starts with `c0 * mtu` bytes; an HP packet spends its size; a bin
//!   with any positive credit admits a packet to HP (the credit then saturates at 0).
//! - **Drops.** An arrival that fits neither queue (or not the total) is dropped with
//!   [`DropReason::Overflow`] and leaves the credits untouched. HCF never drops a stored packet.
//!
//! # Limits
//! - Two FIFOs and nothing else: no ECN marking, no push-out; a stored packet always leaves by
//!   `dequeue`. Classification uses the 5-tuple (`Packet::flow_key`), so the two directions of a
//!   connection are different flows, as in the paper.
//! - `period_us` is ignored with the dynamic period (so one scenario file can switch between the
//!   two); `hp_fraction` and `hp_limit_pkts` are exclusive.
//! - Byte credits take the MTU from the port (`PortContext::mtu`).
//! - The fixed period counts from simulated time 0, not from the first packet.
//!
//! # Cost
//! O(1) per packet for s = 1 (one hash, one bin, one push or pop), O(s^2) for the Bloom variant
//! (s hashes and de-duplication; s is tiny). A period reset is O(s), independent of K: each bin
//! carries the number of the period it was last written in, and a bin from an older period reads
//! as `c0` (lazy reset), so a new period only bumps the period number (a u64: it never wraps) and
//! draws a salt. The paper's hardware state is K * ceil(log2(c0 + 1)) bits (20 bits for K = 20,
//! c0 = 1) plus the two queues and a period time stamp; this model spends 16 bytes per bin
//! instead (a u64 credit, wide enough for byte credits, and the u64 period tag).
//!
//! # Validation
//! [`HcfConfig::validate`] checks every key against the buffer (errors name the key, relative to
//! `queue.hcf`). The rules, Theorem 1 (millions of random operations) and the reordering of the
//! no-swap and fixed-period variants are tested at the bottom of this file; the reproductions
//! of the paper's figures are listed in `docs/mechanisms/hcf.md`.

use super::{ConfigError, DropReason, Limit, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::packet::Packet;
use crate::rng::{mix64, Rng};
use crate::time::{SimDuration, SimTime};
use rand::RngCore;
use serde::Deserialize;
use std::collections::VecDeque;

/// Largest accepted `bins` (16 MiB of bins per port).
pub const MAX_BINS: u32 = 1 << 20;
/// HP share of the buffer when neither `hp_fraction` nor `hp_limit_pkts` is set.
pub const DEFAULT_HP_FRACTION: f64 = 0.5;

/// How a priority period ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PeriodKind {
    /// When the HP queue runs dry after serving an HP packet (Algorithm 1).
    #[default]
    Dynamic,
    /// Every `period_us` of simulated time (section IV-C).
    Fixed,
}

/// What one credit is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CreditUnit {
    /// One credit admits one packet to HP.
    #[default]
    Packets,
    /// A bin holds `credits * mtu` bytes; a packet spends its size.
    Bytes,
}

/// The `[queue.hcf]` table. Defaults are the paper's baseline (K = 20, c0 = 1, B/2 per queue,
/// dynamic period, swapping).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HcfConfig {
    /// K: number of credit bins.
    pub bins: u32,
    /// c0: credits per bin at the start of each period.
    pub credits: u32,
    /// s: hash functions per packet (Bloom counter when > 1).
    pub hashes: u32,
    /// HP share of the buffer in (0, 1); default 0.5. Exclusive with `hp_limit_pkts`.
    pub hp_fraction: Option<f64>,
    /// HP share of the buffer in packets. Exclusive with `hp_fraction`.
    pub hp_limit_pkts: Option<u32>,
    pub period: PeriodKind,
    /// Fixed period length, microseconds. Used only with `period = "fixed"`.
    pub period_us: Option<f64>,
    /// Swap the HP and LP roles at every period start.
    pub swap: bool,
    pub credit_unit: CreditUnit,
    /// An LP arrival sets its bin(s) to 0. `false` gives the conference version's rule.
    pub zero_on_lp: bool,
}

impl Default for HcfConfig {
    fn default() -> Self {
        HcfConfig {
            bins: 20,
            credits: 1,
            hashes: 1,
            hp_fraction: None,
            hp_limit_pkts: None,
            period: PeriodKind::Dynamic,
            period_us: None,
            swap: true,
            credit_unit: CreditUnit::Packets,
            zero_on_lp: true,
        }
    }
}

/// The buffer split: the limit of each role and of the whole buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub hp: Limit,
    pub lp: Limit,
    pub total: Limit,
}

impl HcfConfig {
    /// Checks every key; `limit` is the `[queue]` buffer. Error keys are relative to `queue.hcf`.
    pub fn validate(&self, limit: Limit) -> Result<(), ConfigError> {
        if self.bins == 0 || self.bins > MAX_BINS {
            return Err(ConfigError::new("bins", format!("must be between 1 and {MAX_BINS}, got {}", self.bins)));
        }
        if self.credits == 0 {
            return Err(ConfigError::new("credits", "must be at least 1 credit per bin"));
        }
        if self.hashes == 0 || self.hashes > self.bins {
            return Err(ConfigError::new(
                "hashes",
                format!("must be between 1 and bins = {}, got {}", self.bins, self.hashes),
            ));
        }
        if self.period == PeriodKind::Fixed {
            self.fixed_period_ps()?;
        }
        self.split(limit).map(|_| ())
    }

    /// The fixed period in picoseconds (validated).
    fn fixed_period_ps(&self) -> Result<u64, ConfigError> {
        let us = self.period_us.ok_or_else(|| ConfigError::new("period_us", "required when period = \"fixed\""))?;
        if !us.is_finite() || us <= 0.0 {
            return Err(ConfigError::new("period_us", format!("must be a positive number of microseconds, got {us}")));
        }
        if us * 1e6 >= u64::MAX as f64 / 2.0 {
            return Err(ConfigError::new("period_us", format!("{us} us is longer than any run")));
        }
        let ps = SimDuration::from_secs_f64(us * 1e-6).0;
        if ps == 0 {
            return Err(ConfigError::new("period_us", format!("{us} us is shorter than a picosecond")));
        }
        Ok(ps)
    }

    /// Splits the buffer `limit` into the HP and LP role limits (see the module rules).
    pub fn split(&self, limit: Limit) -> Result<Split, ConfigError> {
        if self.hp_fraction.is_some() && self.hp_limit_pkts.is_some() {
            return Err(ConfigError::new("hp_limit_pkts", "set either hp_fraction or hp_limit_pkts, not both"));
        }
        let frac = self.hp_fraction.unwrap_or(DEFAULT_HP_FRACTION);
        if !(frac.is_finite() && frac > 0.0 && frac < 1.0) {
            return Err(ConfigError::new("hp_fraction", format!("must be strictly between 0 and 1, got {frac}")));
        }
        let key = if self.hp_limit_pkts.is_some() { "hp_limit_pkts" } else { "hp_fraction" };
        let (hp_pkts, lp_pkts) = match (limit.pkts, self.hp_limit_pkts) {
            (None, Some(_)) => {
                return Err(ConfigError::new("hp_limit_pkts", "needs queue.limit_pkts (a buffer in packets) to split"))
            }
            (None, None) => (None, None),
            (Some(b), explicit) => {
                let hp = match explicit {
                    Some(h) => h as u64,
                    None => (frac * b as f64).round() as u64,
                };
                if hp == 0 || hp >= b as u64 {
                    return Err(ConfigError::new(
                        key,
                        format!(
                            "queue.limit_pkts = {b} split this way leaves {hp} packet(s) to HP and {} to LP; \
                             each queue needs at least 1",
                            (b as u64).saturating_sub(hp)
                        ),
                    ));
                }
                (Some(hp as u32), Some(b - hp as u32))
            }
        };
        let byte_frac = match (self.hp_limit_pkts, limit.pkts) {
            (Some(h), Some(b)) => h as f64 / b as f64,
            _ => frac,
        };
        let (hp_bytes, lp_bytes) = match limit.bytes {
            None => (None, None),
            Some(b) => {
                let hp = (byte_frac * b as f64).round() as u64;
                if hp == 0 || hp >= b {
                    return Err(ConfigError::new(
                        key,
                        format!(
                            "queue.limit_bytes = {b} split this way leaves {hp} byte(s) to HP and {} to LP; \
                             each queue needs at least 1",
                            b.saturating_sub(hp)
                        ),
                    ));
                }
                (Some(hp), Some(b - hp))
            }
        };
        Ok(Split {
            hp: Limit { pkts: hp_pkts, bytes: hp_bytes },
            lp: Limit { pkts: lp_pkts, bytes: lp_bytes },
            total: limit,
        })
    }
}

/// One credit bin: its credit, valid only if `period` is the current period number.
#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    credit: u64,
    period: u64,
}

/// Role indices into `role_limit`.
const HP: usize = 0;
const LP: usize = 1;

/// The HCF discipline of one port.
#[derive(Debug)]
pub struct Hcf<P = Packet> {
    /// The two physical FIFOs; `hp` says which one currently plays HP.
    q: [VecDeque<P>; 2],
    bytes: [u64; 2],
    hp: usize,
    /// Limits by role: `[HP, LP]`.
    role_limit: [Limit; 2],
    total: Limit,

    bins: Box<[Bin]>,
    nbins: u64,
    /// Number of the current period (bins tagged with an older number hold `full`).
    period: u64,
    /// Credit of a fresh bin: c0 packets or c0 * mtu bytes.
    full: u64,
    bytes_credit: bool,
    zero_on_lp: bool,
    hashes: usize,
    /// Salt of the current hash function, and `mix64(salt + j)` for each hash j.
    salt: u64,
    salt_keys: Box<[u64]>,
    /// Reused by the Bloom path: the distinct bins of the packet being classified.
    scratch: Vec<usize>,

    swap: bool,
    /// Fixed period length in ps, 0 for the dynamic period.
    fixed_ps: u64,
    /// Fixed period: index n of the current period [n T, (n+1) T), and the next boundary.
    fixed_index: u64,
    next_boundary: u64,
    /// Periods started since construction (the first one included).
    periods: u64,
    rng: Rng,

    /// Tests: replaces the hash (`packet`, hash number, salt) -> bin.
    #[cfg(test)]
    hash_override: Option<fn(&P, u32, u64) -> usize>,
    /// Tests: classify through the Bloom path even when s = 1.
    #[cfg(test)]
    force_bloom_path: bool,
}

impl<P: QPacket> Hcf<P> {
    /// Builds HCF for one port. Call [`HcfConfig::validate`] first; an invalid configuration is
    /// clamped to the nearest valid one here rather than panicking.
    pub fn new(c: &HcfConfig, limit: Limit, ctx: &PortContext) -> Self {
        let split = c.split(limit).unwrap_or(Split {
            hp: Limit { pkts: limit.pkts.map(|b| (b / 2).max(1)), bytes: limit.bytes.map(|b| (b / 2).max(1)) },
            lp: Limit { pkts: limit.pkts.map(|b| (b - b / 2).max(1)), bytes: limit.bytes.map(|b| (b - b / 2).max(1)) },
            total: limit,
        });
        let nbins = c.bins.clamp(1, MAX_BINS) as u64;
        let hashes = (c.hashes.max(1) as u64).min(nbins) as usize;
        let credits = c.credits.max(1) as u64;
        let full = match c.credit_unit {
            CreditUnit::Packets => credits,
            CreditUnit::Bytes => credits * ctx.mtu.max(1) as u64,
        };
        let fixed_ps = match c.period {
            PeriodKind::Dynamic => 0,
            PeriodKind::Fixed => c.fixed_period_ps().unwrap_or(1_000_000),
        };
        // Either queue may hold up to the larger role limit after a swap.
        let cap = limit.pkts.unwrap_or(64).min(4096) as usize;
        let mut h = Hcf {
            q: [VecDeque::with_capacity(cap), VecDeque::with_capacity(cap)],
            bytes: [0, 0],
            hp: 0,
            role_limit: [split.hp, split.lp],
            total: split.total,
            bins: vec![Bin { credit: full, period: 0 }; nbins as usize].into_boxed_slice(),
            nbins,
            period: 0,
            full,
            bytes_credit: c.credit_unit == CreditUnit::Bytes,
            zero_on_lp: c.zero_on_lp,
            hashes,
            salt: 0,
            salt_keys: vec![0; hashes].into_boxed_slice(),
            scratch: Vec::with_capacity(hashes),
            swap: c.swap,
            fixed_ps,
            fixed_index: 0,
            next_boundary: if fixed_ps == 0 { u64::MAX } else { fixed_ps },
            periods: 1,
            rng: ctx.streams.stream("qdisc.hcf", ctx.port_index),
            #[cfg(test)]
            hash_override: None,
            #[cfg(test)]
            force_bloom_path: false,
        };
        h.draw_hash(SimTime::ZERO);
        h
    }

    // --- inspection (traces, tests) ---------------------------------------------------------

    /// Packets in the queue currently playing HP.
    pub fn hp_len_pkts(&self) -> usize {
        self.q[self.hp].len()
    }
    /// Packets in the queue currently playing LP.
    pub fn lp_len_pkts(&self) -> usize {
        self.q[self.hp ^ 1].len()
    }
    /// Priority periods started so far (1 at construction).
    pub fn periods(&self) -> u64 {
        self.periods
    }
    /// Remaining credit of bin `k` in the current period (packets or bytes).
    pub fn bin_credit(&self, k: usize) -> u64 {
        self.credit(k)
    }
    /// The limits of the HP and LP roles and of the whole buffer.
    pub fn split(&self) -> Split {
        Split { hp: self.role_limit[HP], lp: self.role_limit[LP], total: self.total }
    }
    /// Salt of the current hash function.
    pub fn salt(&self) -> u64 {
        self.salt
    }

    // --- credits ----------------------------------------------------------------------------

    #[inline]
    fn credit(&self, k: usize) -> u64 {
        let b = self.bins[k];
        if b.period == self.period {
            b.credit
        } else {
            self.full
        }
    }

    #[inline]
    fn set_credit(&mut self, k: usize, credit: u64) {
        self.bins[k] = Bin { credit, period: self.period };
    }

    /// The bin of hash `j` of a packet whose flow key is `key`.
    #[inline]
    fn bin_of(&self, key: u64, j: usize, _pkt: &P) -> usize {
        #[cfg(test)]
        if let Some(f) = self.hash_override {
            return f(_pkt, j as u32, self.salt) % self.nbins as usize;
        }
        let h = mix64(key ^ self.salt_keys[j]);
        ((h as u128 * self.nbins as u128) >> 64) as usize
    }

    // --- periods ----------------------------------------------------------------------------

    /// Draws the hash function of a period starting at `start`.
    fn draw_hash(&mut self, start: SimTime) {
        self.salt = self.rng.next_u64() ^ start.0;
        for (j, k) in self.salt_keys.iter_mut().enumerate() {
            *k = mix64(self.salt.wrapping_add(j as u64));
        }
    }

    /// Algorithm 1's `init()`: all credits back to c0 (lazily), a new hash, and the role swap.
    fn new_period(&mut self, start: SimTime, swap: bool) {
        self.periods += 1;
        self.period += 1;
        self.draw_hash(start);
        if swap {
            self.hp ^= 1;
        }
    }

    /// Fixed period: applies every boundary up to `now` (called when `now >= next_boundary`).
    #[cold]
    fn roll_fixed(&mut self, now: SimTime) {
        let n = now.0 / self.fixed_ps;
        let passed = n.saturating_sub(self.fixed_index);
        if passed == 0 {
            // Only at the very end of time, where the next boundary saturated.
            self.next_boundary = u64::MAX;
            return;
        }
        self.fixed_index = n;
        self.next_boundary = (n + 1).saturating_mul(self.fixed_ps);
        self.periods += passed - 1;
        self.new_period(SimTime(n * self.fixed_ps), self.swap && passed % 2 == 1);
    }

    #[inline]
    fn push(&mut self, phys: usize, pkt: P) {
        self.bytes[phys] += pkt.size() as u64;
        self.q[phys].push_back(pkt);
    }

    #[inline]
    fn pop(&mut self, phys: usize) -> Option<P> {
        let p = self.q[phys].pop_front()?;
        self.bytes[phys] -= p.size() as u64;
        Some(p)
    }

    /// Bloom-counter classification (s hashes, conservative update). Returns the queue role.
    fn classify_bloom(&mut self, key: u64, pkt: &P, hp_ok: bool, lp_ok: bool) -> Option<usize> {
        let mut ks = std::mem::take(&mut self.scratch);
        ks.clear();
        for j in 0..self.hashes {
            let k = self.bin_of(key, j, pkt);
            if !ks.contains(&k) {
                ks.push(k);
            }
        }
        let cost = if self.bytes_credit { pkt.size() as u64 } else { 1 };
        let any = ks.iter().any(|&k| self.credit(k) > 0);
        let role = if any && hp_ok {
            for &k in &ks {
                let c = self.credit(k);
                if c > 0 {
                    self.set_credit(k, c.saturating_sub(cost));
                }
            }
            Some(HP)
        } else if lp_ok {
            if self.zero_on_lp {
                for &k in &ks {
                    self.set_credit(k, 0);
                }
            }
            Some(LP)
        } else {
            None
        };
        self.scratch = ks;
        role
    }
}

impl<P: QPacket> Qdisc for Hcf<P> {
    type Pkt = P;

    /// Algorithm 1's `arrive(p)`.
    #[inline]
    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        if now.0 >= self.next_boundary && self.fixed_ps != 0 {
            self.roll_fixed(now);
        }
        let (hp, lp) = (self.hp, self.hp ^ 1);
        let size = pkt.size();
        let total_ok = self.total.fits(self.q[0].len() + self.q[1].len(), self.bytes[0] + self.bytes[1], size);
        let hp_ok = total_ok && self.role_limit[HP].fits(self.q[hp].len(), self.bytes[hp], size);
        let lp_ok = total_ok && self.role_limit[LP].fits(self.q[lp].len(), self.bytes[lp], size);
        if !hp_ok && !lp_ok {
            // Both full: dropped before it is hashed; credits are left as they are.
            ev.drop(pkt, DropReason::Overflow, false);
            return;
        }
        let key = pkt.flow_key();
        #[cfg(test)]
        let bloom = self.hashes > 1 || self.force_bloom_path;
        #[cfg(not(test))]
        let bloom = self.hashes > 1;
        let role = if bloom {
            self.classify_bloom(key, &pkt, hp_ok, lp_ok)
        } else {
            let k = self.bin_of(key, 0, &pkt);
            let c = self.credit(k);
            if c > 0 && hp_ok {
                let cost = if self.bytes_credit { size as u64 } else { 1 };
                self.set_credit(k, c.saturating_sub(cost));
                Some(HP)
            } else if lp_ok {
                if self.zero_on_lp {
                    self.set_credit(k, 0);
                }
                Some(LP)
            } else {
                None
            }
        };
        match role {
            Some(HP) => self.push(hp, pkt),
            Some(_) => self.push(lp, pkt),
            None => ev.drop(pkt, DropReason::Overflow, false),
        }
    }

    /// Algorithm 1's `transmit()`.
    #[inline]
    fn dequeue(&mut self, now: SimTime, _ev: &mut QdiscEvents<P>) -> Option<P> {
        if now.0 >= self.next_boundary && self.fixed_ps != 0 {
            self.roll_fixed(now);
        }
        let hp = self.hp;
        if let Some(p) = self.pop(hp) {
            if self.q[hp].is_empty() && self.fixed_ps == 0 {
                self.new_period(now, self.swap);
            }
            Some(p)
        } else {
            self.pop(hp ^ 1)
        }
    }

    #[inline]
    fn len_pkts(&self) -> usize {
        self.q[0].len() + self.q[1].len()
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.bytes[0] + self.bytes[1]
    }
    fn name(&self) -> &'static str {
        "hcf"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{check_accounting, ctx, pkt};
    use crate::qdisc::Dropped;
    use crate::rng::Rng;
    use proptest::prelude::*;
    use rand::{Rng as _, RngCore, SeedableRng};

    const T0: SimTime = SimTime::ZERO;

    fn at_us(us: u64) -> SimTime {
        SimTime(SimDuration::from_us(us).0)
    }

    fn build(c: &HcfConfig, limit: Limit, seed: u64) -> Hcf {
        c.validate(limit).unwrap();
        Hcf::new(c, limit, &ctx(seed))
    }

    /// The hand-picked hash of the rule tests: bin = flow id.
    fn by_flow(p: &Packet, _j: u32, _salt: u64) -> usize {
        p.flow as usize
    }

    /// HCF over `limit_pkts` packets, `hp` of them for HP, with the hash `bin = flow`.
    fn rule_hcf(c: HcfConfig, limit_pkts: u32, hp: u32) -> Hcf {
        let c = HcfConfig { hp_limit_pkts: Some(hp), ..c };
        let mut h = build(&c, Limit::pkts(limit_pkts), 1);
        h.hash_override = Some(by_flow);
        h
    }

    fn cfg(bins: u32, credits: u32) -> HcfConfig {
        HcfConfig { bins, credits, ..Default::default() }
    }

    fn enq_at(h: &mut Hcf, flow: u32, seq: u64, size: u32, now: SimTime) -> Option<Dropped> {
        let mut ev = QdiscEvents::default();
        h.enqueue(pkt(flow, seq, size), now, &mut ev);
        assert!(ev.dropped.len() <= 1);
        ev.dropped.pop()
    }

    fn enq(h: &mut Hcf, flow: u32, seq: u64) -> Option<Dropped> {
        enq_at(h, flow, seq, 1500, T0)
    }

    fn deq_at(h: &mut Hcf, now: SimTime) -> Option<(u32, u64)> {
        let mut ev = QdiscEvents::default();
        let p = h.dequeue(now, &mut ev);
        assert!(ev.dropped.is_empty(), "HCF never drops a stored packet");
        p.map(|p| (p.flow, p.seq))
    }

    fn deq(h: &mut Hcf) -> Option<(u32, u64)> {
        deq_at(h, T0)
    }

    // --- Algorithm 1: arrivals ----------------------------------------------------------

    #[test]
    fn hp_is_always_served_first() {
        let mut h = rule_hcf(cfg(2, 1), 4, 2);
        assert!(enq(&mut h, 0, 1).is_none()); // credit -> HP
        assert!(enq(&mut h, 0, 2).is_none()); // bin 0 spent -> LP
        assert!(enq(&mut h, 1, 1).is_none()); // bin 1 has credit -> HP, behind (0,1)
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (2, 1));
        // (1,1) arrived after (0,2) but leaves before it.
        assert_eq!(deq(&mut h), Some((0, 1)));
        assert_eq!(deq(&mut h), Some((1, 1)));
        assert_eq!(deq(&mut h), Some((0, 2)));
        assert_eq!(deq(&mut h), None);
    }

    #[test]
    fn an_hp_arrival_spends_one_credit() {
        let mut h = rule_hcf(cfg(1, 3), 10, 5);
        for (s, left) in [(1, 2), (2, 1), (3, 0)] {
            enq(&mut h, 0, s);
            assert_eq!(h.bin_credit(0), left);
            assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (s as usize, 0));
        }
        enq(&mut h, 0, 4);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (3, 1));
    }

    #[test]
    fn an_lp_arrival_empties_its_bin() {
        let mut h = rule_hcf(cfg(2, 5), 4, 1);
        enq(&mut h, 0, 1); // HP, bin 0: 4 left
        assert_eq!(h.bin_credit(0), 4);
        enq(&mut h, 0, 2); // HP full -> LP, bin 0 emptied although it had credit
        assert_eq!(h.bin_credit(0), 0);
        enq(&mut h, 1, 1); // HP full -> LP, bin 1 emptied from 5
        assert_eq!(h.bin_credit(1), 0);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (1, 2));

        // The conference version's rule keeps the credit.
        let mut h = rule_hcf(HcfConfig { zero_on_lp: false, ..cfg(2, 5) }, 4, 1);
        enq(&mut h, 0, 1);
        enq(&mut h, 0, 2);
        assert_eq!(h.bin_credit(0), 4);
    }

    #[test]
    fn drops_only_when_both_queues_are_full_and_leaves_credits_alone() {
        let mut h = rule_hcf(cfg(2, 5), 2, 1);
        assert!(enq(&mut h, 0, 1).is_none()); // HP
        assert!(enq(&mut h, 0, 2).is_none()); // LP
        let d = enq(&mut h, 1, 1).expect("both full");
        assert_eq!((d.pkt.flow, d.pkt.seq, d.reason, d.queued), (1, 1, DropReason::Overflow, false));
        assert_eq!(h.bin_credit(1), 5);
        assert_eq!(h.len_pkts(), 2);
        assert_eq!(h.len_bytes(), 3000);
    }

    // --- Algorithm 1: priority periods and swapping (III-D) --------------------------------

    #[test]
    fn a_period_ends_when_hp_drains_then_credits_reset_hash_changes_and_queues_swap() {
        let mut h = rule_hcf(cfg(1, 1), 6, 3);
        enq(&mut h, 0, 1); // HP
        enq(&mut h, 0, 2); // LP
        enq(&mut h, 0, 3); // LP
        let salt0 = h.salt();
        assert_eq!((h.periods(), h.bin_credit(0)), (1, 0));
        assert_eq!(deq(&mut h), Some((0, 1))); // HP drained: period 2
        assert_eq!(h.periods(), 2);
        assert_eq!(h.bin_credit(0), 1);
        assert_ne!(h.salt(), salt0);
        // Swapped: the old LP queue is now HP, and the new LP is the drained queue.
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (2, 0));
        enq(&mut h, 0, 4); // fresh credit: HP, behind the inherited packets
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (3, 0));
        assert_eq!(deq(&mut h), Some((0, 2)));
        assert_eq!(h.periods(), 2, "HP not empty yet");
        assert_eq!(deq(&mut h), Some((0, 3)));
        assert_eq!(deq(&mut h), Some((0, 4))); // inherited and new HP packets served: period 3
        assert_eq!(h.periods(), 3);
    }

    #[test]
    fn serving_lp_never_ends_a_period() {
        let mut h = rule_hcf(HcfConfig { swap: false, ..cfg(1, 1) }, 4, 2);
        enq(&mut h, 0, 1);
        enq(&mut h, 0, 2);
        assert_eq!(deq(&mut h), Some((0, 1)));
        assert_eq!(h.periods(), 2);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (0, 1), "no swap: the packet stays in LP");
        assert_eq!(deq(&mut h), Some((0, 2)));
        assert_eq!(h.periods(), 2);
    }

    #[test]
    fn a_period_that_starts_empty_lasts_until_its_first_hp_departure() {
        let mut h = rule_hcf(cfg(1, 1), 4, 2);
        assert_eq!(deq(&mut h), None);
        assert_eq!(h.periods(), 1);
        enq(&mut h, 0, 1);
        assert_eq!(h.periods(), 1);
        deq(&mut h);
        assert_eq!(h.periods(), 2);
    }

    #[test]
    fn a_credit_reset_touches_no_bin() {
        let mut h = rule_hcf(cfg(8, 1), 40, 20);
        for f in 0..8 {
            enq(&mut h, f, 1);
        }
        assert!((0..8).all(|k| h.bin_credit(k) == 0));
        for _ in 0..8 {
            deq(&mut h);
        }
        assert_eq!(h.periods(), 2);
        assert!(h.bins.iter().all(|b| b.period < h.period), "no bin was written by the reset");
        assert!((0..8).all(|k| h.bin_credit(k) == 1));
    }

    #[test]
    fn after_a_swap_limits_follow_the_role_and_the_total_stays_within_the_buffer() {
        // B = 4: HP 1, LP 3.
        let mut h = rule_hcf(cfg(8, 1), 4, 1);
        enq(&mut h, 0, 1); // HP
        for f in 1..4 {
            enq(&mut h, f, 1); // HP full -> LP
        }
        assert_eq!(deq(&mut h), Some((0, 1))); // swap: 3 packets in HP, over its limit of 1
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (3, 0));
        assert!(enq(&mut h, 4, 1).is_none()); // has credit but HP is over its limit -> LP
        assert_eq!(h.bin_credit(4), 0);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (3, 1));
        // LP holds 1 of its 3, but the buffer holds B = 4: drop.
        assert_eq!(enq(&mut h, 5, 1).map(|d| d.reason), Some(DropReason::Overflow));
        assert_eq!(deq(&mut h), Some((1, 1)));
        assert!(enq(&mut h, 6, 1).is_none()); // HP still over its limit -> LP
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (2, 2));
        let out: Vec<_> = std::iter::from_fn(|| deq(&mut h)).collect();
        assert_eq!(out, vec![(2, 1), (3, 1), (4, 1), (6, 1)]);
    }

    // --- fixed period (IV-C) ---------------------------------------------------------------

    #[test]
    fn fixed_period_resets_at_boundaries_lazily_and_ignores_hp_draining() {
        let c = HcfConfig { period: PeriodKind::Fixed, period_us: Some(10.0), swap: false, ..cfg(1, 1) };
        let mut h = rule_hcf(c, 4, 2);
        enq_at(&mut h, 0, 1, 1500, at_us(1)); // HP
        enq_at(&mut h, 0, 2, 1500, at_us(1)); // LP
        assert_eq!(deq_at(&mut h, at_us(2)), Some((0, 1)));
        assert_eq!(h.periods(), 1, "draining HP does not end a fixed period");
        enq_at(&mut h, 0, 3, 1500, at_us(5)); // still no credit -> LP
        assert_eq!(h.lp_len_pkts(), 2);
        enq_at(&mut h, 0, 4, 1500, at_us(12)); // boundary at 10 us passed: credit back -> HP
        assert_eq!(h.periods(), 2);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (1, 2));
        // Without swapping, (0,4) overtakes (0,2) and (0,3): the fixed period reorders.
        assert_eq!(deq_at(&mut h, at_us(13)), Some((0, 4)));
        assert_eq!(deq_at(&mut h, at_us(13)), Some((0, 2)));
    }

    #[test]
    fn fixed_period_swaps_once_per_boundary_passed_and_reorders() {
        let c = HcfConfig { period: PeriodKind::Fixed, period_us: Some(10.0), ..cfg(1, 1) };
        let mut h = rule_hcf(c, 8, 4);
        enq_at(&mut h, 0, 1, 1500, at_us(1)); // HP
        let salt1 = h.salt();
        enq_at(&mut h, 0, 2, 1500, at_us(25)); // boundaries 10 and 20: two swaps = none
        assert_eq!(h.periods(), 3);
        assert_ne!(h.salt(), salt1);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (2, 0));
        enq_at(&mut h, 0, 3, 1500, at_us(26)); // no credit -> LP
                                               // Boundary 30: swap while HP still holds (0,1) and (0,2); (0,4) has credit again and
                                               // joins the new HP behind (0,3).
        enq_at(&mut h, 0, 4, 1500, at_us(31));
        assert_eq!(h.periods(), 4);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (2, 2));
        let out: Vec<_> = std::iter::from_fn(|| deq_at(&mut h, at_us(32))).collect();
        assert_eq!(out, vec![(0, 3), (0, 4), (0, 1), (0, 2)], "a fixed period swaps a busy HP away");
    }

    // --- hash functions (IV-D) -------------------------------------------------------------

    #[test]
    fn each_period_draws_its_salt_from_the_port_stream_and_start_time() {
        let c = HcfConfig::default();
        let mut h = build(&c, Limit::pkts(20), 9);
        let mut r = ctx(9).streams.stream("qdisc.hcf", 0);
        assert_eq!(h.salt(), r.next_u64());
        enq_at(&mut h, 3, 1, 1500, at_us(7));
        deq_at(&mut h, at_us(7));
        assert_eq!(h.salt(), r.next_u64() ^ at_us(7).0);
        let other: Hcf = Hcf::new(&c, Limit::pkts(20), &PortContext { port_index: 1, ..ctx(9) });
        assert_ne!(other.salt(), build(&c, Limit::pkts(20), 9).salt(), "ports hash independently");
    }

    #[test]
    fn bins_spread_flows_over_all_of_k() {
        let h = build(&HcfConfig { bins: 20, ..Default::default() }, Limit::pkts(20), 3);
        let mut seen = [0u32; 20];
        for f in 0..2000 {
            let p = pkt(f, 1, 1500);
            seen[h.bin_of(p.flow_key(), 0, &p)] += 1;
        }
        assert!(seen.iter().all(|&n| (50..=150).contains(&n)), "{seen:?}");
    }

    // --- Bloom counter (IV-A) ---------------------------------------------------------------

    /// Flow 0 -> bins {0, 1}, flow 1 -> {1, 2}, flow 2 -> {3, 3}.
    fn two_bins(p: &Packet, j: u32, _salt: u64) -> usize {
        [[0, 1], [1, 2], [3, 3]][p.flow as usize][j as usize]
    }

    #[test]
    fn bloom_goes_hp_on_any_positive_bin_and_decrements_only_positive_bins() {
        let mut h = rule_hcf(HcfConfig { hashes: 2, ..cfg(4, 2) }, 20, 10);
        h.hash_override = Some(two_bins);
        let credits = |h: &Hcf| (0..4).map(|k| h.bin_credit(k)).collect::<Vec<_>>();
        enq(&mut h, 0, 1); // bins 0,1 = 2,2 -> HP
        assert_eq!(credits(&h), [1, 1, 2, 2]);
        enq(&mut h, 1, 1); // bins 1,2 = 1,2 -> HP
        assert_eq!(credits(&h), [1, 0, 1, 2]);
        enq(&mut h, 1, 2); // bins 1,2 = 0,1 -> HP; bin 1 stays at 0
        assert_eq!(credits(&h), [1, 0, 0, 2]);
        assert_eq!(h.lp_len_pkts(), 0);
        enq(&mut h, 1, 3); // no positive bin -> LP
        assert_eq!(h.lp_len_pkts(), 1);
        enq(&mut h, 2, 1); // bin 3 twice: decremented once
        assert_eq!(credits(&h), [1, 0, 0, 1]);
        assert_eq!(h.hp_len_pkts(), 4);
    }

    #[test]
    fn bloom_lp_arrival_empties_all_its_bins() {
        let mut h = rule_hcf(HcfConfig { hashes: 2, ..cfg(4, 2) }, 2, 1);
        h.hash_override = Some(two_bins);
        enq(&mut h, 0, 1); // HP: bins 0,1 -> 1,1
        enq(&mut h, 1, 1); // HP full -> LP: bins 1,2 -> 0,0
        assert_eq!((0..4).map(|k| h.bin_credit(k)).collect::<Vec<_>>(), [1, 0, 0, 2]);
    }

    // --- byte credits -----------------------------------------------------------------------

    #[test]
    fn byte_credits_spend_packet_sizes_and_admit_on_any_positive_credit() {
        let c = HcfConfig { credit_unit: CreditUnit::Bytes, ..cfg(1, 1) };
        let mut h = rule_hcf(c.clone(), 20, 10);
        assert_eq!(h.bin_credit(0), 1500, "c0 * mtu");
        for (s, left) in [(1, 1000), (2, 500), (3, 0)] {
            enq_at(&mut h, 0, s, 500, T0);
            assert_eq!(h.bin_credit(0), left);
        }
        enq_at(&mut h, 0, 4, 500, T0);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (3, 1));

        let mut h = rule_hcf(c, 20, 10);
        enq_at(&mut h, 0, 1, 1000, T0); // 500 left
        enq_at(&mut h, 0, 2, 1500, T0); // still positive: HP, credit saturates at 0
        assert_eq!(h.bin_credit(0), 0);
        enq_at(&mut h, 0, 3, 64, T0);
        assert_eq!((h.hp_len_pkts(), h.lp_len_pkts()), (2, 1));
    }

    // --- reordering: the hand-built cases of III-D -----------------------------------------

    #[test]
    fn without_swapping_a_new_period_lets_a_flow_overtake_itself() {
        let run = |swap: bool| {
            let mut h = rule_hcf(HcfConfig { swap, ..cfg(1, 1) }, 4, 2);
            enq(&mut h, 0, 1); // HP
            enq(&mut h, 0, 2); // LP, no credit left
            assert_eq!(deq(&mut h), Some((0, 1))); // period ends, credits reset
            enq(&mut h, 0, 3); // has credit again: HP
            std::iter::from_fn(|| deq(&mut h)).map(|(_, s)| s).collect::<Vec<_>>()
        };
        assert_eq!(run(false), vec![3, 2], "the paper's III-D example: reordered");
        assert_eq!(run(true), vec![2, 3], "swapping keeps the order");
    }

    #[test]
    fn without_zeroing_on_lp_a_flow_overtakes_itself_within_a_period() {
        let run = |zero_on_lp: bool| {
            let mut h = rule_hcf(HcfConfig { zero_on_lp, ..cfg(1, 3) }, 4, 2);
            enq(&mut h, 0, 1); // HP, 2 left
            enq(&mut h, 0, 2); // HP, 1 left
            enq(&mut h, 0, 3); // HP full -> LP
            assert_eq!(deq(&mut h), Some((0, 1))); // HP not empty: same period
            enq(&mut h, 0, 4); // with its credit kept, (0,4) may join HP
            std::iter::from_fn(|| deq(&mut h)).map(|(_, s)| s).collect::<Vec<_>>()
        };
        assert_eq!(run(false), vec![2, 4, 3]);
        assert_eq!(run(true), vec![2, 3, 4]);
    }

    // --- random workloads -------------------------------------------------------------------

    /// A random mix of arrivals and departures: `flows` flows of which the first `hot` take half
    /// of the arrivals; the arrival probability is redrawn every 1000 operations between
    /// `load.0` and `load.1` per mille, so the buffer alternately fills (drops, LP use) and drains
    /// (period ends); sizes are uniform in `sizes`; time advances 0..=2 us per operation.
    #[derive(Clone, Copy, Debug)]
    struct Mix {
        flows: u32,
        hot: u32,
        load: (u32, u32),
        sizes: (u32, u32),
    }

    impl Mix {
        fn paper() -> Mix {
            Mix { flows: 400, hot: 8, load: (350, 800), sizes: (1500, 1500) }
        }
    }

    /// What a run produced: departures and drops, in order.
    #[derive(Debug, Default, PartialEq)]
    struct Trace {
        out: Vec<u64>,
        dropped: Vec<u64>,
    }

    /// Drives `h` with `ops` random operations from `seed`; calls `seen` after every operation
    /// with the departed packet, if any.
    fn drive(h: &mut Hcf, seed: u64, ops: usize, mix: Mix, mut seen: impl FnMut(&Hcf, Option<&Packet>)) -> Trace {
        let mut r = Rng::seed_from_u64(seed);
        let mut seqs = vec![0u64; mix.flows as usize];
        let mut ev = QdiscEvents::default();
        let mut now = SimTime::ZERO;
        let mut p_arrive = mix.load.0;
        let mut trace = Trace::default();
        for i in 0..ops {
            if i % 1000 == 0 {
                p_arrive = r.gen_range(mix.load.0..=mix.load.1);
            }
            now += SimDuration::from_ns(r.gen_range(0..=2000));
            if r.gen_range(0..1000) < p_arrive {
                let flow =
                    if mix.hot > 0 && r.gen_bool(0.5) { r.gen_range(0..mix.hot) } else { r.gen_range(0..mix.flows) };
                seqs[flow as usize] += 1;
                let size = r.gen_range(mix.sizes.0..=mix.sizes.1);
                h.enqueue(pkt(flow, seqs[flow as usize], size), now, &mut ev);
                trace.dropped.extend(ev.dropped.drain(..).map(|d| d.pkt.uid));
                seen(h, None);
            } else {
                let p = h.dequeue(now, &mut ev);
                assert!(ev.dropped.is_empty());
                if let Some(p) = &p {
                    trace.out.push(p.uid);
                }
                seen(h, p.as_ref());
            }
        }
        trace
    }

    /// Departures that left behind a later packet of their own flow.
    fn reorders(h: &mut Hcf, seed: u64, ops: usize, mix: Mix) -> (u64, usize) {
        let mut last = vec![0u64; mix.flows as usize];
        let mut n = 0;
        let t = drive(h, seed, ops, mix, |_, p| {
            if let Some(p) = p {
                let l = &mut last[p.flow as usize];
                if p.seq < *l {
                    n += 1;
                } else {
                    *l = p.seq;
                }
            }
        });
        (n, t.out.len())
    }

    // --- Theorem 1: swapping prevents reordering --------------------------------------------

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
        /// 96 cases x 80 000 operations: about 7.7 million arrivals and departures over random
        /// K, c0, s, buffers, splits (some above the packet size in bytes, some below), flow
        /// counts, packet sizes and credit units.
        #[test]
        fn theorem1_dynamic_period_with_swapping_never_reorders(
            seed in any::<u64>(),
            bins in 1u32..64,
            credits in 1u32..5,
            hashes in 1u32..4,
            b in 2u32..48,
            hp_pct in 1u32..100,
            flows in 1u32..600,
            hot in 0u32..10,
            var_sizes in any::<bool>(),
            byte_limit in any::<bool>(),
            byte_credits in any::<bool>(),
        ) {
            let hp = (b * hp_pct / 100).clamp(1, b - 1);
            let c = HcfConfig {
                bins,
                credits,
                hashes: hashes.min(bins),
                hp_limit_pkts: Some(hp),
                credit_unit: if byte_credits { CreditUnit::Bytes } else { CreditUnit::Packets },
                ..Default::default()
            };
            let limit = Limit { pkts: Some(b), bytes: byte_limit.then_some(b as u64 * 1000) };
            let mut h = build(&c, limit, seed);
            let mix = Mix {
                flows,
                hot: hot.min(flows),
                load: (300, 900),
                sizes: if var_sizes { (64, 1500) } else { (1500, 1500) },
            };
            let mut last = vec![0u64; flows as usize];
            let mut bad = None;
            let total = b as usize;
            let trace = drive(&mut h, seed, 80_000, mix, |h, p| {
                assert!(h.len_pkts() <= total, "buffer above B");
                if !byte_limit {
                    // With packet limits, LP only fills while HP is busy (module doc).
                    assert!(h.lp_len_pkts() == 0 || h.hp_len_pkts() > 0);
                }
                if let Some(p) = p {
                    let l = &mut last[p.flow as usize];
                    if p.seq <= *l && bad.is_none() {
                        bad = Some((p.flow, *l, p.seq));
                    }
                    *l = p.seq;
                }
            });
            prop_assert!(bad.is_none(), "flow {:?}: seq {} left after seq {}", bad.map(|b| b.0), bad.map_or(0, |b| b.2), bad.map_or(0, |b| b.1));
            // Liveness needs HP to fit the largest packet (here: hp x 1000 bytes >= 1500). If it
            // does not, the first oversized arrival goes to LP and zeroes its bin; with K = 1
            // no packet can reach HP again, so no period ever ends (the paper's rules, not a bug).
            let hp_takes_packets = !byte_limit || hp >= 2;
            prop_assert!(h.periods() > 1 || trace.out.is_empty() || !hp_takes_packets, "no period ever ended");
        }
    }

    // --- reordering without swapping / with a fixed period -----------------------------------

    #[test]
    fn random_search_finds_reordering_without_swapping_or_with_a_fixed_period() {
        let limit = Limit::pkts(20);
        // Seed 1, 200 000 operations, about 75 000 departures each; at the time of writing the
        // counts were 0 (swap), 4047 (no swap), 33 and 3290 (fixed 100 us with and without
        // swap) and 2537 (no zeroing on LP). docs/mechanisms/hcf.md quotes them.
        let run = |c: HcfConfig| reorders(&mut build(&c, limit, 1), 1, 200_000, Mix::paper());
        let base = HcfConfig::default();
        let (swap, n) = run(base.clone());
        assert_eq!(swap, 0, "Theorem 1");
        assert!(n > 50_000);
        let (no_swap, _) = run(HcfConfig { swap: false, ..base.clone() });
        assert!(no_swap > 0, "dynamic period without swapping reorders");
        for swap in [true, false] {
            let (fixed, _) = run(HcfConfig { period: PeriodKind::Fixed, period_us: Some(100.0), swap, ..base.clone() });
            assert!(fixed > 0, "fixed period (swap = {swap}) reorders");
        }
        let (no_zero, _) = run(HcfConfig { zero_on_lp: false, ..base });
        assert!(no_zero > 0, "without zeroing on LP, reorders within a period");
    }

    // --- equivalences and determinism --------------------------------------------------------

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn bloom_path_with_one_hash_is_plain_hcf(
            seed in any::<u64>(), bins in 1u32..40, credits in 1u32..4, b in 2u32..40,
            fixed in any::<bool>(), swap in any::<bool>(),
        ) {
            let c = HcfConfig {
                bins, credits, swap,
                period: if fixed { PeriodKind::Fixed } else { PeriodKind::Dynamic },
                period_us: Some(50.0),
                ..Default::default()
            };
            let limit = Limit::pkts(b);
            let mix = Mix { sizes: (64, 1500), ..Mix::paper() };
            let plain = drive(&mut build(&c, limit, seed), seed, 20_000, mix, |_, _| {});
            let mut bloom = build(&c, limit, seed);
            bloom.force_bloom_path = true;
            prop_assert_eq!(plain, drive(&mut bloom, seed, 20_000, mix, |_, _| {}));
        }

        #[test]
        fn byte_credits_with_mtu_packets_are_packet_credits(
            seed in any::<u64>(), bins in 1u32..40, credits in 1u32..4, hashes in 1u32..3, b in 2u32..40,
        ) {
            let c = HcfConfig { bins, credits, hashes: hashes.min(bins), ..Default::default() };
            let bytes = HcfConfig { credit_unit: CreditUnit::Bytes, ..c.clone() };
            let limit = Limit::pkts(b);
            let mix = Mix::paper(); // every packet is 1500 bytes = ctx().mtu
            prop_assert_eq!(
                drive(&mut build(&c, limit, seed), seed, 20_000, mix, |_, _| {}),
                drive(&mut build(&bytes, limit, seed), seed, 20_000, mix, |_, _| {})
            );
        }
    }

    #[test]
    fn a_seed_fixes_every_departure() {
        let c = HcfConfig::default();
        let limit = Limit::pkts(20);
        let run = |seed: u64| drive(&mut build(&c, limit, seed), 5, 50_000, Mix::paper(), |_, _| {});
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2), "the port stream draws the hash functions");
    }

    // --- accounting identities --------------------------------------------------------------

    proptest! {
        #[test]
        fn accounting_holds(
            ops in proptest::collection::vec((any::<bool>(), 0u32..8, 40u32..1500), 1..400),
            bins in 1u32..8, hashes in 1u32..3, b in 2u32..12, fixed in any::<bool>(),
            swap in any::<bool>(), byte_limit in any::<bool>(), byte_credits in any::<bool>(),
        ) {
            let c = HcfConfig {
                bins,
                hashes: hashes.min(bins),
                swap,
                period: if fixed { PeriodKind::Fixed } else { PeriodKind::Dynamic },
                period_us: Some(7.0),
                credit_unit: if byte_credits { CreditUnit::Bytes } else { CreditUnit::Packets },
                ..Default::default()
            };
            let limit = Limit { pkts: Some(b), bytes: byte_limit.then_some(b as u64 * 800) };
            check_accounting(build(&c, limit, 3), &ops);
        }
    }

    // --- configuration ----------------------------------------------------------------------

    fn from_pairs<V>(pairs: Vec<(&'static str, V)>) -> Result<HcfConfig, serde::de::value::Error>
    where
        V: serde::de::IntoDeserializer<'static, serde::de::value::Error>,
    {
        HcfConfig::deserialize(serde::de::value::MapDeserializer::new(pairs.into_iter()))
    }

    #[test]
    fn defaults_are_the_papers_baseline_and_unknown_keys_are_rejected() {
        let d = from_pairs::<u32>(vec![]).unwrap();
        assert_eq!(d, HcfConfig::default());
        assert_eq!((d.bins, d.credits, d.hashes, d.swap, d.zero_on_lp), (20, 1, 1, true, true));
        assert_eq!((d.period, d.credit_unit), (PeriodKind::Dynamic, CreditUnit::Packets));
        assert_eq!(d.split(Limit::pkts(20)).unwrap().hp, Limit::pkts(10));
        let c = from_pairs(vec![("bins", 16u32), ("credits", 2)]).unwrap();
        assert_eq!((c.bins, c.credits), (16, 2));
        let c = from_pairs(vec![("period", "fixed"), ("credit_unit", "bytes")]).unwrap();
        assert_eq!((c.period, c.credit_unit), (PeriodKind::Fixed, CreditUnit::Bytes));
        assert!(from_pairs(vec![("binz", 16u32)]).unwrap_err().to_string().contains("binz"));
        assert!(from_pairs(vec![("period", "sometimes")]).is_err());
    }

    #[test]
    fn validation_names_the_key() {
        let b20 = Limit::pkts(20);
        let key = |c: HcfConfig, l: Limit| c.validate(l).unwrap_err().key;
        let d = HcfConfig::default;
        assert_eq!(key(HcfConfig { bins: 0, ..d() }, b20), "bins");
        assert_eq!(key(HcfConfig { bins: MAX_BINS + 1, ..d() }, b20), "bins");
        assert_eq!(key(HcfConfig { credits: 0, ..d() }, b20), "credits");
        assert_eq!(key(HcfConfig { hashes: 0, ..d() }, b20), "hashes");
        assert_eq!(key(HcfConfig { bins: 4, hashes: 5, ..d() }, b20), "hashes");
        for f in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            assert_eq!(key(HcfConfig { hp_fraction: Some(f), ..d() }, b20), "hp_fraction");
        }
        assert_eq!(key(HcfConfig { hp_fraction: Some(0.01), ..d() }, b20), "hp_fraction", "0 packets to HP");
        assert_eq!(key(HcfConfig { hp_fraction: Some(0.99), ..d() }, b20), "hp_fraction", "0 packets to LP");
        assert_eq!(key(d(), Limit::pkts(1)), "hp_fraction", "one packet cannot be split");
        assert_eq!(key(HcfConfig { hp_fraction: Some(0.5), hp_limit_pkts: Some(5), ..d() }, b20), "hp_limit_pkts");
        assert_eq!(key(HcfConfig { hp_limit_pkts: Some(0), ..d() }, b20), "hp_limit_pkts");
        assert_eq!(key(HcfConfig { hp_limit_pkts: Some(20), ..d() }, b20), "hp_limit_pkts");
        let bytes_only = Limit { pkts: None, bytes: Some(30_000) };
        assert_eq!(key(HcfConfig { hp_limit_pkts: Some(5), ..d() }, bytes_only), "hp_limit_pkts");
        assert_eq!(key(d(), Limit { pkts: None, bytes: Some(1) }), "hp_fraction");
        let fixed = |us: Option<f64>| HcfConfig { period: PeriodKind::Fixed, period_us: us, ..d() };
        for us in [None, Some(0.0), Some(-1.0), Some(f64::INFINITY), Some(1e-9), Some(1e300)] {
            assert_eq!(key(fixed(us), b20), "period_us", "{us:?}");
        }
        assert_eq!(fixed(Some(100.0)).validate(b20), Ok(()));
        assert_eq!(HcfConfig { period_us: Some(-1.0), ..d() }.validate(b20), Ok(()), "ignored when dynamic");
        let e = crate::qdisc::QueueConfig {
            kind: crate::qdisc::QdiscKind::Hcf,
            hcf: Some(HcfConfig { bins: 0, ..d() }),
            ..Default::default()
        };
        assert_eq!(e.validate().unwrap_err().key, "hcf.bins");
    }

    #[test]
    fn the_buffer_split() {
        let d = HcfConfig::default();
        let s = d.split(Limit::pkts(21)).unwrap();
        assert_eq!((s.hp.pkts, s.lp.pkts, s.total.pkts), (Some(11), Some(10), Some(21)));
        let c = HcfConfig { hp_limit_pkts: Some(5), ..d.clone() };
        let s = c.split(Limit { pkts: Some(20), bytes: Some(30_000) }).unwrap();
        assert_eq!(
            (s.hp, s.lp),
            (Limit { pkts: Some(5), bytes: Some(7_500) }, Limit { pkts: Some(15), bytes: Some(22_500) })
        );
        let s = HcfConfig { hp_fraction: Some(0.25), ..d }.split(Limit { pkts: None, bytes: Some(6_000) }).unwrap();
        assert_eq!((s.hp.bytes, s.lp.bytes), (Some(1_500), Some(4_500)));
    }
}
