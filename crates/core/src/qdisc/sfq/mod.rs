//! SFQ: Stochastic Fairness Queueing, as Linux `sch_sfq` behaves.
//!
//! Flows are hashed into `buckets` FIFOs which are served in byte-deficit round robin
//! (McKenney, "Stochastic Fairness Queuing", IEEE INFOCOM 1990; the deficit round robin of
//! Shreedhar & Varghese, SIGCOMM 1995, as Linux applies it). Flows that collide in a bucket share
//! its service; a perturbation of the hash every `perturb_s` bounds how long a collision lasts.
//!
//! Rules:
//! - Classification (`hash = "flow"`, the default): bucket = `hash_flow(pkt.flow_key(), salt) %
//!   buckets`. The salt is drawn from the port's stream at construction and again at each
//!   perturbation. With `hash = "addresses"` the bucket is `(src + dst) % buckets` over the host
//!   addresses only, with no salt and no perturbation: every flow between the same two hosts
//!   shares a bucket and the assignment is the same in every run, as in ns-2's `Queue/SFQ`
//!   (the TCP Outcast paper's section 5.2 simulations use it). ns-2 folds the sum through its
//!   own formula before the modulo: for addresses below 16 the groupings are the same as here,
//!   for larger ones they may differ (`validation/ns2/differences.md`).
//! - Arrival to a bucket holding `depth_pkts` packets: refused, [`DropReason::FlowLimit`].
//! - With `drop_rule = "early"` (ns-2's `Queue/SFQ`, by Villamizar) the two rules below
//!   replace push-out: with `cap` the buffer in packets (`limit_pkts`, else `limit_bytes / mtu`),
//!   `free = cap - stored` and `used` the arriving packet's bucket length, the arrival is
//!   refused ([`DropReason::FlowLimit`]) when `used >= free / 2` (integer halving), or when
//!   `free < buckets` and `used > cap / buckets`, or when `free <= 0`. A bucket may thus hold at
//!   most half of what is still free, so drops fall on the buckets that hog the buffer before it
//!   is full. `depth_pkts` and the byte limit still apply.
//! - Arrival that does not fit the shared buffer (`queue.limit_pkts` / `limit_bytes`): as if
//!   it were stored first, packets are pushed out of the tail of the longest bucket (in packets)
//!   until it fits, [`DropReason::LongestQueue`]. If the longest bucket is the arriving packet's
//!   own (ties go to it, as in Linux where it was the last to reach that depth), the arriving
//!   packet itself is the one dropped and is reported refused (`queued == false`). Among other
//!   equally long buckets the one that reached that length most recently loses; when every
//!   bucket holds one packet, the bucket next in line for service loses (both as Linux). A
//!   packet larger than the whole byte limit is refused at once ([`DropReason::Overflow`]).
//! - Service: a bucket that becomes non-empty joins the round robin at the tail with an
//!   allotment of `quantum_bytes`. The bucket at the head sends its head packet while its
//!   allotment is positive, the size being subtracted (it may go negative); when it is not
//!   positive, the bucket gets `quantum_bytes` more and moves to the tail. A bucket that empties
//!   leaves the round robin and forgets its allotment.
//! - Perturbation (`perturb_s > 0`): at the first call at or after each multiple of the period,
//!   a new salt is drawn and every stored packet is moved to its new bucket, walking the old
//!   buckets in service order and keeping each bucket's order, so no flow is reordered (a flow's
//!   packets all sit in one bucket). The new buckets join the round robin in the order they
//!   receive their first packet, with a fresh allotment. A packet that would overfill its new
//!   bucket (`depth_pkts`) is dropped ([`DropReason::FlowLimit`], `queued == true`), as Linux's
//!   `sfq_rehash` does.
//!
//! Parameters (`[queue.sfq]`): `docs/mechanisms/sfq.md`.
//!
//! Limits: every bucket is its own queue (Linux caps active flows at `flows`, 128 by default,
//! and drops arrivals of a 129th flow; not modelled). Linux's optional RED per flow, head drop
//! and flow-classifier filters are not modelled. Perturbation is evaluated lazily at the next
//! enqueue or dequeue rather than by a timer; several periods without any call draw one salt.
//! Cost: O(1) per enqueue, dequeue and push-out (the longest bucket is found through per-depth
//! lists, as in Linux); O(stored packets) per perturbation. Packets live in one slab that grows
//! to the peak occupancy and is reused; nothing is allocated per packet afterwards.
//! Randomness: stream `("qdisc.sfq", port_index)`.
//! Validation of the configuration: [`SfqConfig::validate`]. Validation of the model:
//! `docs/validation.md`.

use super::bucket_fifos::{BucketFifos, NIL};
use super::framework::{Discipline, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::config::{ConfigError, Limit};
use crate::packet::{FlowHasher, Packet};
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// Largest `buckets` accepted (per-bucket state is preallocated for every port).
pub const MAX_BUCKETS: u32 = 1 << 20;
/// Largest `depth_pkts` accepted.
pub const MAX_DEPTH_PKTS: u32 = 1 << 20;

/// `[queue.sfq]`: see the module documentation for the meaning of every key.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SfqConfig {
    pub buckets: u32,
    pub depth_pkts: u32,
    pub quantum_bytes: u32,
    pub perturb_s: f64,
    pub drop_rule: SfqDropRule,
    pub hash: SfqHash,
}

/// What SFQ does when the shared buffer runs short (`queue.sfq.drop_rule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SfqDropRule {
    /// Linux: store the arrival, push packets out of the longest bucket's tail.
    #[default]
    PushOut,
    /// ns-2: refuse an arrival whose bucket holds half of the free space or more.
    Early,
}

/// How packets are classified into buckets (`queue.sfq.hash`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SfqHash {
    /// A salted hash of the directed 5-tuple.
    #[default]
    Flow,
    /// `(src + dst) % buckets`, unsalted (ns-2).
    Addresses,
}

impl Default for SfqConfig {
    fn default() -> Self {
        SfqConfig {
            buckets: 1024,
            depth_pkts: 127,
            quantum_bytes: 1514,
            perturb_s: 0.0,
            drop_rule: SfqDropRule::PushOut,
            hash: SfqHash::Flow,
        }
    }
}

impl SfqConfig {
    /// Rejects impossible values; the key is relative to `[queue.sfq]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.buckets == 0 || self.buckets > MAX_BUCKETS {
            return Err(ConfigError::new("buckets", format!("must be in 1..={MAX_BUCKETS}, got {}", self.buckets)));
        }
        if self.depth_pkts == 0 || self.depth_pkts > MAX_DEPTH_PKTS {
            return Err(ConfigError::new(
                "depth_pkts",
                format!("must be in 1..={MAX_DEPTH_PKTS}, got {}", self.depth_pkts),
            ));
        }
        if self.quantum_bytes == 0 {
            return Err(ConfigError::new("quantum_bytes", "must be at least 1 byte (0 would never serve a bucket)"));
        }
        let p = self.perturb_s;
        if !(p.is_finite() && (p == 0.0 || p >= 1e-9)) {
            return Err(ConfigError::new("perturb_s", format!("must be 0 (never) or at least 1e-9 s, got {p}")));
        }
        if p > 0.0 && self.hash == SfqHash::Addresses {
            return Err(ConfigError::new("perturb_s", "hash = \"addresses\" has no salt to perturb: set perturb_s = 0"));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// SFQ
// ---------------------------------------------------------------------------------------------

/// The SFQ discipline; see the module documentation.
#[derive(Debug)]
pub struct Sfq<P = Packet> {
    fifos: BucketFifos<P>,
    limit: Limit,
    buckets: u32,
    depth: u32,
    quantum: i64,
    /// Round robin: a circular list through `rr_next` with its tail, as in Linux; the bucket
    /// served next is `rr_next[rr_tail]`. Only non-empty buckets are in it.
    rr_next: Vec<u32>,
    rr_tail: u32,
    allot: Vec<i64>,
    /// Buckets by length: circular doubly linked lists. Nodes `0..buckets` are buckets, node
    /// `buckets + d` is the head of the list of buckets holding `d >= 1` packets. A bucket is
    /// inserted at the head of its list whenever its length changes.
    dep_next: Vec<u32>,
    dep_prev: Vec<u32>,
    /// Longest bucket length (0 when empty).
    cur_depth: u32,
    /// The current salt, mixed once ([`FlowHasher`]): redrawn at each perturbation.
    hasher: FlowHasher,
    perturb: Option<SimDuration>,
    next_perturb: SimTime,
    rng: Rng,
    /// Cells in service order during a perturbation (kept to reuse its allocation).
    scratch: Vec<u32>,
    hash: SfqHash,
    /// `Some(buffer in packets)` under the early drop rule.
    early_cap: Option<u32>,
}

impl<P: QPacket> Sfq<P> {
    pub fn new(c: &SfqConfig, limit: Limit, ctx: &PortContext) -> Self {
        let buckets = c.buckets.clamp(1, MAX_BUCKETS);
        let depth = c.depth_pkts.clamp(1, MAX_DEPTH_PKTS);
        // A bucket never holds more than `depth` packets, nor more than the shared packet limit.
        let max_len = limit.pkts.map_or(depth, |p| p.min(depth));
        let nodes = buckets as usize + max_len as usize + 1;
        let mut rng = ctx.streams.stream("qdisc.sfq", ctx.port_index);
        let hasher = FlowHasher::new(rng.gen());
        let perturb = (c.perturb_s > 0.0).then(|| SimDuration::from_secs_f64(c.perturb_s)).filter(|d| d.0 > 0);
        Sfq {
            fifos: BucketFifos::new(buckets),
            limit,
            buckets,
            depth,
            quantum: c.quantum_bytes.max(1) as i64,
            rr_next: vec![NIL; buckets as usize],
            rr_tail: NIL,
            allot: vec![0; buckets as usize],
            dep_next: (0..nodes as u32).collect(),
            dep_prev: (0..nodes as u32).collect(),
            cur_depth: 0,
            hasher,
            perturb,
            next_perturb: SimTime::ZERO + perturb.unwrap_or(SimDuration::ZERO),
            rng,
            scratch: Vec::new(),
            hash: c.hash,
            early_cap: (c.drop_rule == SfqDropRule::Early).then(|| {
                limit.pkts.unwrap_or_else(|| {
                    let b = limit.bytes.unwrap_or(u64::MAX) / ctx.mtu.max(1) as u64;
                    b.clamp(1, u32::MAX as u64) as u32
                })
            }),
        }
    }

    /// ns-2's early refusal (see the module rules).
    #[inline]
    fn early_refuses(&self, cap: u32, used: u32) -> bool {
        let free = cap as i64 - self.fifos.total_pkts() as i64;
        let used = used as i64;
        free <= 0 || used >= free / 2 || (free < self.buckets as i64 && used > (cap / self.buckets) as i64)
    }

    /// The bucket `pkt` belongs to under the current salt.
    #[inline]
    pub fn bucket_of(&self, pkt: &P) -> u32 {
        match self.hash {
            SfqHash::Flow => (self.hasher.hash(pkt.flow_key()) % self.buckets as u64) as u32,
            SfqHash::Addresses => ((pkt.src() as u64 + pkt.dst() as u64) % self.buckets as u64) as u32,
        }
    }

    // --- buckets by length (Linux's `dep` lists) ----------------------------------------------
    #[inline]
    fn dep_head(&self, d: u32) -> u32 {
        self.buckets + d
    }
    fn dep_unlink(&mut self, x: u32) {
        let (p, n) = (self.dep_prev[x as usize], self.dep_next[x as usize]);
        self.dep_next[p as usize] = n;
        self.dep_prev[n as usize] = p;
    }
    fn dep_link(&mut self, x: u32, d: u32) {
        let h = self.dep_head(d);
        let n = self.dep_next[h as usize];
        self.dep_next[x as usize] = n;
        self.dep_prev[x as usize] = h;
        self.dep_prev[n as usize] = x;
        self.dep_next[h as usize] = x;
    }
    /// Bucket `b` just grew to `d` packets.
    fn grew(&mut self, b: u32, d: u32) {
        if d > 1 {
            self.dep_unlink(b);
        }
        self.dep_link(b, d);
        self.cur_depth = self.cur_depth.max(d);
    }
    /// Bucket `b` just shrank to `d` packets.
    fn shrank(&mut self, b: u32, d: u32) {
        self.dep_unlink(b);
        let h = self.dep_head(d + 1);
        if self.dep_next[h as usize] == h && self.cur_depth == d + 1 {
            self.cur_depth = d;
        }
        if d > 0 {
            self.dep_link(b, d);
        }
    }

    // --- round robin ------------------------------------------------------------------------
    /// Appends `b` (just become non-empty) at the tail of the round robin.
    fn rr_append(&mut self, b: u32) {
        if self.rr_tail == NIL {
            self.rr_next[b as usize] = b;
        } else {
            self.rr_next[b as usize] = self.rr_next[self.rr_tail as usize];
            self.rr_next[self.rr_tail as usize] = b;
        }
        self.rr_tail = b;
        self.allot[b as usize] = self.quantum;
    }
    /// Removes the head of the round robin (which just became empty).
    fn rr_remove_head(&mut self) {
        let h = self.rr_next[self.rr_tail as usize];
        if h == self.rr_tail {
            self.rr_tail = NIL;
        } else {
            self.rr_next[self.rr_tail as usize] = self.rr_next[h as usize];
        }
        self.rr_next[h as usize] = NIL;
    }

    // --- perturbation -----------------------------------------------------------------------
    fn maybe_perturb(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) {
        let Some(period) = self.perturb else { return };
        if now < self.next_perturb {
            return;
        }
        let missed = (now - self.next_perturb).0 / period.0;
        self.next_perturb += period.saturating_mul(missed + 1);
        self.hasher = FlowHasher::new(self.rng.gen());
        if self.rr_tail != NIL {
            self.rehash(ev);
        }
    }

    /// Moves every stored packet to its bucket under the new salt, keeping per-bucket order.
    fn rehash(&mut self, ev: &mut QdiscEvents<P>) {
        let mut cells = std::mem::take(&mut self.scratch);
        cells.clear();
        // Detach every bucket, walking the round robin from the head.
        let head = self.rr_next[self.rr_tail as usize];
        let mut b = head;
        loop {
            let next = self.rr_next[b as usize];
            self.fifos.detach_all(b, &mut cells);
            self.dep_unlink(b);
            self.rr_next[b as usize] = NIL;
            if b == self.rr_tail {
                break;
            }
            b = next;
        }
        self.rr_tail = NIL;
        self.cur_depth = 0;
        // Relink in that order.
        for &c in &cells {
            let nb = self.bucket_of(self.fifos.cell_pkt(c));
            let len = self.fifos.len(nb);
            if len >= self.depth {
                let pkt = self.fifos.free_cell(c);
                ev.drop(pkt, DropReason::FlowLimit, true);
                continue;
            }
            self.fifos.link_back(nb, c);
            self.grew(nb, len + 1);
            if len == 0 {
                self.rr_append(nb);
            }
        }
        self.scratch = cells;
    }

    /// Pushes one packet out to make room (Linux `sfq_drop`), knowing that the arriving
    /// packet's bucket `b` would hold `nd` packets. Returns false if the arriving packet is
    /// the one to drop.
    fn push_out(&mut self, b: u32, nd: u32, ev: &mut QdiscEvents<P>) -> bool {
        let d = self.cur_depth;
        if d == 0 || (nd >= d && nd > 1) {
            return false;
        }
        let victim = if d > 1 {
            self.dep_next[self.dep_head(d) as usize]
        } else {
            // Every bucket holds one packet: the bucket next in line loses it.
            let h = self.rr_next[self.rr_tail as usize];
            self.rr_remove_head();
            h
        };
        debug_assert_ne!(victim, b);
        let pkt = self.fifos.pop_back(victim).expect("longest bucket is empty");
        self.shrank(victim, self.fifos.len(victim));
        ev.drop(pkt, DropReason::LongestQueue, true);
        true
    }
}

impl<P: QPacket> Discipline for Sfq<P> {
    type Config = SfqConfig;
    fn validate(cfg: &SfqConfig, _limit: Limit) -> Result<(), ConfigError> {
        cfg.validate()
    }
    fn build(cfg: &SfqConfig, limit: Limit, ctx: &PortContext) -> Self {
        Sfq::new(cfg, limit, ctx)
    }
}

impl<P: QPacket> Qdisc for Sfq<P> {
    type Pkt = P;

    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        self.maybe_perturb(now, ev);
        if !self.limit.fits(0, 0, pkt.size()) {
            ev.drop(pkt, DropReason::Overflow, false);
            return;
        }
        let b = self.bucket_of(&pkt);
        let len = self.fifos.len(b);
        if len >= self.depth || self.early_cap.is_some_and(|cap| self.early_refuses(cap, len)) {
            ev.drop(pkt, DropReason::FlowLimit, false);
            return;
        }
        while !self.limit.fits(self.fifos.total_pkts(), self.fifos.total_bytes(), pkt.size()) {
            if !self.push_out(b, len + 1, ev) {
                ev.drop(pkt, DropReason::LongestQueue, false);
                return;
            }
        }
        self.fifos.push_back(b, pkt);
        self.grew(b, len + 1);
        if len == 0 {
            self.rr_append(b);
        }
    }

    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        self.maybe_perturb(now, ev);
        if self.rr_tail == NIL {
            return None;
        }
        loop {
            let a = self.rr_next[self.rr_tail as usize];
            if self.allot[a as usize] <= 0 {
                self.rr_tail = a;
                self.allot[a as usize] += self.quantum;
                continue;
            }
            let pkt = self.fifos.pop_front(a).expect("active bucket is empty");
            let len = self.fifos.len(a);
            self.shrank(a, len);
            if len == 0 {
                self.rr_remove_head();
            } else {
                self.allot[a as usize] -= pkt.size() as i64;
            }
            return Some(pkt);
        }
    }

    fn len_pkts(&self) -> usize {
        self.fifos.total_pkts()
    }
    fn len_bytes(&self) -> u64 {
        self.fifos.total_bytes()
    }
    fn name(&self) -> &'static str {
        "sfq"
    }
}

#[cfg(test)]
mod tests;
