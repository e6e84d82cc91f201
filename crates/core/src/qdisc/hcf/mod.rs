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
//! Parameters (`[queue.hcf]`; the buffer B is `queue.limit_pkts` and/or `queue.limit_bytes`):
//! `docs/mechanisms/hcf.md`.
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

use crate::config::{ConfigError, Limit};
use super::framework::{Discipline, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::packet::Packet;
use crate::rng::{mix64, Rng};
use crate::time::{SimDuration, SimTime};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Largest accepted `bins` (16 MiB of bins per port).
pub const MAX_BINS: u32 = 1 << 20;
/// HP share of the buffer when neither `hp_fraction` nor `hp_limit_pkts` is set.
pub const DEFAULT_HP_FRACTION: f64 = 0.5;

/// How a priority period ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PeriodKind {
    /// When the HP queue runs dry after serving an HP packet (Algorithm 1).
    #[default]
    Dynamic,
    /// Every `period_us` of simulated time (section IV-C).
    Fixed,
}

/// What one credit is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
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
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
        let mut h = Hcf {
            q: [VecDeque::new(), VecDeque::new()],
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

impl<P: QPacket> Discipline for Hcf<P> {
    type Config = HcfConfig;
    fn validate(cfg: &HcfConfig, limit: Limit) -> Result<(), ConfigError> {
        cfg.validate(limit)
    }
    fn build(cfg: &HcfConfig, limit: Limit, ctx: &PortContext) -> Self {
        Hcf::new(cfg, limit, ctx)
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
mod tests;
