//! DRR: Deficit Round Robin over hashed flow buckets, as ns-2's `Queue/DRR` behaves.
//!
//! Flows are hashed into `buckets` FIFOs served in round robin; each visit adds `quantum_bytes`
//! to the bucket's deficit counter, and the bucket sends head packets while the head fits in the
//! deficit (Shreedhar & Varghese, "Efficient Fair Queuing using Deficit Round Robin", SIGCOMM
//! 1995). When the shared buffer is full, packets are pushed out of the head of the bucket with
//! the largest backlog in bytes, as ns-2.35 `queue/drr.cc` does; the differences from ns-2 are
//! listed below and in `docs/mechanisms/drr.md`.
//!
//! Rules:
//! - Classification: bucket = `hash_flow(pkt.flow_key(), salt) % buckets`, the salt drawn once
//!   from the port's stream (it never changes).
//! - Arrival that does not fit the shared buffer (`queue.limit_pkts` / `limit_bytes`): as if it
//!   were stored first, the bucket with the most bytes (the arrival counted in its own bucket)
//!   loses its head packet, [`DropReason::LongestQueue`], until the arrival fits. Ties go to the
//!   first bucket in service order from the bucket being served, a bucket that is not yet active
//!   counting as the last (ns-2's order). If the loser is the arrival's own bucket and that
//!   bucket is otherwise empty, the arrival itself is refused (`queued == false`); if it holds
//!   older packets, its head (older) packet is dropped and the arrival is stored. A packet larger
//!   than the whole byte limit is refused at once ([`DropReason::Overflow`]).
//! - Service: a bucket that becomes non-empty joins the round robin at the tail with a deficit
//!   of 0. On its turn a bucket gets `quantum_bytes` once, then sends head packets while the head
//!   is no larger than the deficit, subtracting their sizes; when the head does not fit, the
//!   deficit is kept and the turn passes to the next bucket. A bucket that empties (by service or
//!   by push-out) leaves the round robin and its deficit is reset to 0.
//!
//! Parameters (`[queue.drr]`): `docs/mechanisms/drr.md`.
//!
//! Differences from ns-2 `Queue/DRR`: ns-2 hashes the source address only (one bucket per
//! sending node, `mask_` to group them), with no salt; dcfair hashes the 5-tuple (one bucket per
//! transport flow, collisions aside). ns-2 bounds only bytes (`blimit_`, its packet `limit_` is
//! ignored); dcfair enforces both `queue.limit_pkts` and `queue.limit_bytes` (set only
//! `limit_bytes = blimit_` to compare). ns-2 defaults: `buckets_ 10`, `quantum_ 250`,
//! `blimit_ 25000`. In ns-2 a bucket emptied by a push-out keeps its "turn" flag and so loses
//! its next quantum; here it starts fresh. A packet larger than the byte limit: ns-2 would first
//! empty other buckets; here it is refused at once.
//!
//! Limits: one quantum for all buckets (no weights). A quantum smaller than a packet costs extra
//! rounds per dequeue (`size / quantum_bytes` visits at most per bucket).
//! Cost: O(1) per enqueue and dequeue in the common case; a push-out scans the active buckets to
//! find the largest (O(active buckets)), as ns-2 does. Packets live in one slab that grows to the
//! peak occupancy and is reused; nothing is allocated per packet afterwards.
//! Randomness: stream `("qdisc.drr", port_index)`, one draw (the salt).
//! Validation of the configuration: [`DrrConfig::validate`]. Validation of the model against
//! ns-2: `docs/validation.md`.

use super::bucket_fifos::{BucketFifos, NIL};
use super::framework::{Discipline, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use super::sfq::MAX_BUCKETS;
use crate::config::{ConfigError, Limit};
use crate::packet::{FlowHasher, Packet};
use crate::time::SimTime;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// `[queue.drr]`: see the module documentation for the meaning of every key.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DrrConfig {
    pub buckets: u32,
    pub quantum_bytes: u32,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig { buckets: 1024, quantum_bytes: 1500 }
    }
}

impl DrrConfig {
    /// Rejects impossible values; the key is relative to `[queue.drr]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.buckets == 0 || self.buckets > MAX_BUCKETS {
            return Err(ConfigError::new("buckets", format!("must be in 1..={MAX_BUCKETS}, got {}", self.buckets)));
        }
        if self.quantum_bytes == 0 {
            return Err(ConfigError::new("quantum_bytes", "must be at least 1 byte (0 would never serve a bucket)"));
        }
        Ok(())
    }
}

/// The DRR discipline; see the module documentation.
#[derive(Debug)]
pub struct Drr<P = Packet> {
    fifos: BucketFifos<P>,
    limit: Limit,
    buckets: u32,
    quantum: u64,
    /// The salt, mixed once ([`FlowHasher`]).
    hasher: FlowHasher,
    /// Round robin of the non-empty buckets: a circular doubly linked list; `curr` is being
    /// served, `rr_prev[curr]` is the tail.
    rr_next: Vec<u32>,
    rr_prev: Vec<u32>,
    curr: u32,
    deficit: Vec<u64>,
    /// The bucket has received its quantum for the current turn.
    turn: Vec<bool>,
}

impl<P: QPacket> Drr<P> {
    pub fn new(c: &DrrConfig, limit: Limit, ctx: &PortContext) -> Self {
        let buckets = c.buckets.clamp(1, MAX_BUCKETS);
        let n = buckets as usize;
        let hasher = FlowHasher::new(ctx.streams.stream("qdisc.drr", ctx.port_index).gen());
        Drr {
            fifos: BucketFifos::new(buckets),
            limit,
            buckets,
            quantum: c.quantum_bytes.max(1) as u64,
            hasher,
            rr_next: vec![NIL; n],
            rr_prev: vec![NIL; n],
            curr: NIL,
            deficit: vec![0; n],
            turn: vec![false; n],
        }
    }

    /// The bucket `pkt` belongs to.
    #[inline]
    pub fn bucket_of(&self, pkt: &P) -> u32 {
        (self.hasher.hash(pkt.flow_key()) % self.buckets as u64) as u32
    }

    /// Inserts `b` at the tail of the round robin (just before `curr`), with a fresh deficit.
    fn activate(&mut self, b: u32) {
        self.deficit[b as usize] = 0;
        self.turn[b as usize] = false;
        if self.curr == NIL {
            self.rr_next[b as usize] = b;
            self.rr_prev[b as usize] = b;
            self.curr = b;
        } else {
            let tail = self.rr_prev[self.curr as usize];
            self.rr_next[b as usize] = self.curr;
            self.rr_prev[b as usize] = tail;
            self.rr_next[tail as usize] = b;
            self.rr_prev[self.curr as usize] = b;
        }
    }

    /// Removes the (now empty) bucket `b` from the round robin; `curr` moves on if it was `b`.
    fn deactivate(&mut self, b: u32) {
        let (p, n) = (self.rr_prev[b as usize], self.rr_next[b as usize]);
        if n == b {
            self.curr = NIL;
        } else {
            self.rr_next[p as usize] = n;
            self.rr_prev[n as usize] = p;
            if self.curr == b {
                self.curr = n;
            }
        }
        self.rr_next[b as usize] = NIL;
        self.rr_prev[b as usize] = NIL;
        self.deficit[b as usize] = 0;
        self.turn[b as usize] = false;
    }

    #[inline]
    fn is_active(&self, b: u32) -> bool {
        self.rr_next[b as usize] != NIL
    }

    /// The bucket with the most bytes, `extra` bytes counted in bucket `b` (ns-2's order for
    /// ties: the first from `curr`, an inactive `b` last).
    fn largest(&self, b: u32, extra: u64) -> u32 {
        let weight = |x: u32| self.fifos.bytes(x) + if x == b { extra } else { 0 };
        let mut best = NIL;
        let mut best_bytes = 0;
        if self.curr != NIL {
            let mut x = self.curr;
            loop {
                let w = weight(x);
                if best == NIL || w > best_bytes {
                    best = x;
                    best_bytes = w;
                }
                x = self.rr_next[x as usize];
                if x == self.curr {
                    break;
                }
            }
        }
        if !self.is_active(b) && (best == NIL || weight(b) > best_bytes) {
            best = b;
        }
        best
    }
}

impl<P: QPacket> Discipline for Drr<P> {
    type Config = DrrConfig;
    fn validate(cfg: &DrrConfig, _limit: Limit) -> Result<(), ConfigError> {
        cfg.validate()
    }
    fn build(cfg: &DrrConfig, limit: Limit, ctx: &PortContext) -> Self {
        Drr::new(cfg, limit, ctx)
    }
}

impl<P: QPacket> Qdisc for Drr<P> {
    type Pkt = P;

    fn enqueue(&mut self, pkt: P, _now: SimTime, ev: &mut QdiscEvents<P>) {
        let size = pkt.size();
        if !self.limit.fits(0, 0, size) {
            ev.drop(pkt, DropReason::Overflow, false);
            return;
        }
        let b = self.bucket_of(&pkt);
        while !self.limit.fits(self.fifos.total_pkts(), self.fifos.total_bytes(), size) {
            let victim = self.largest(b, size as u64);
            let Some(old) = self.fifos.pop_front(victim) else {
                // The arrival is the head of the largest bucket: refuse it.
                debug_assert_eq!(victim, b);
                if self.is_active(b) {
                    self.deactivate(b);
                }
                ev.drop(pkt, DropReason::LongestQueue, false);
                return;
            };
            ev.drop(old, DropReason::LongestQueue, true);
            // The arrival's own bucket stays in place: the arrival is about to refill it.
            if victim != b && self.fifos.len(victim) == 0 {
                self.deactivate(victim);
            }
        }
        self.fifos.push_back(b, pkt);
        if !self.is_active(b) {
            self.activate(b);
        }
    }

    fn dequeue(&mut self, _now: SimTime, _ev: &mut QdiscEvents<P>) -> Option<P> {
        if self.curr == NIL {
            return None;
        }
        loop {
            let c = self.curr;
            let ci = c as usize;
            if !self.turn[ci] {
                self.deficit[ci] += self.quantum;
                self.turn[ci] = true;
            }
            let head = self.fifos.front(c).expect("active bucket is empty").size() as u64;
            if head <= self.deficit[ci] {
                self.deficit[ci] -= head;
                let pkt = self.fifos.pop_front(c);
                if self.fifos.len(c) == 0 {
                    self.deactivate(c);
                }
                return pkt;
            }
            self.turn[ci] = false;
            self.curr = self.rr_next[ci];
        }
    }

    fn len_pkts(&self) -> usize {
        self.fifos.total_pkts()
    }
    fn len_bytes(&self) -> u64 {
        self.fifos.total_bytes()
    }
    fn name(&self) -> &'static str {
        "drr"
    }
}

#[cfg(test)]
mod tests;
