//! AFD: Approximate Fair Dropping (Pan, Breslau, Prabhakar and Shenker, "Approximate fairness
//! through differential dropping", ACM SIGCOMM CCR 33(2), 2003), with the elephant trap of
//! data-center switches as an option.
//!
//! One FIFO; fairness comes from *which* arrivals are dropped, not from scheduling. A flow that
//! arrives faster than the fair share loses the excess to early drops; a flow below it loses
//! nothing but to a full buffer.
//!
//! Rules (parameters and defaults: `docs/mechanisms/afd.md`):
//! - Flows are counted per hash bin: `bin = hash_flow(flow_key, salt) % bins`, the salt drawn
//!   from the port's stream (`"qdisc.afd"`) at construction.
//! - Shadow buffer: each arrival is sampled with probability `1 / sample_every` (every arrival
//!   when 1). A sample is appended while the shadow buffer holds fewer than `shadow_pkts`
//!   entries; after that it replaces an entry chosen uniformly at random. `m_i` is the number of
//!   entries of the arrival's bin, counted after its own sample.
//! - Fair share `m_fair` (in shadow entries), starting at `shadow_pkts`: at the first arrival at
//!   or after each multiple of `interval_us`, `m_fair += alpha * (q_old - target) - beta * (q -
//!   target)`, with `q` the FIFO length in packets now and `q_old` its length at the previous
//!   update, then clamped to `[1, shadow_pkts]`. Several intervals without an arrival count as
//!   several updates with the same `q` (closed form, no loop).
//! - An arrival with `m_i > m_fair` is dropped with probability `1 - m_fair / m_i` (one draw
//!   from the port's stream), [`DropReason::FlowLimit`]. Otherwise it is stored if it fits the
//!   `[queue]` limit, else refused, [`DropReason::Overflow`].
//! - Elephant trap (`elephant_bytes > 0`): only arrivals of bins that counted at least
//!   `elephant_bytes` bytes in the current or in the previous age period (`elephant_age_us`)
//!   are subject to the fair drop; the others are only refused by a full buffer. Periods start
//!   at time 0 and roll over at the first arrival after their end.
//! - Service is FIFO; a flow is never reordered.

use super::codel::us;
use super::droptail::DropTail;
use super::framework::{Discipline, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::config::{ConfigError, Limit};
use crate::packet::{hash_flow, Packet};
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// `[queue.afd]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AfdConfig {
    /// Queue length the controller steers to, packets (default: a quarter of the buffer).
    pub target_pkts: Option<u32>,
    pub shadow_pkts: u32,
    pub sample_every: u32,
    pub bins: u32,
    pub alpha: f64,
    pub beta: f64,
    pub interval_us: f64,
    /// 0: every flow is subject to the fair drop (the paper's AFD).
    pub elephant_bytes: u64,
    pub elephant_age_us: f64,
}

impl Default for AfdConfig {
    fn default() -> Self {
        AfdConfig {
            target_pkts: None,
            shadow_pkts: 1000,
            sample_every: 1,
            bins: 1024,
            alpha: 1.7,
            beta: 1.8,
            interval_us: 1000.0,
            elephant_bytes: 0,
            elephant_age_us: 10_000.0,
        }
    }
}

/// The largest shadow buffer and bin count (a guard against typos such as `1e9`).
pub const MAX_ENTRIES: u32 = 1 << 22;

impl AfdConfig {
    /// Rejects impossible values; keys are relative to `[queue.afd]`.
    pub fn validate(&self, limit: Limit) -> Result<(), ConfigError> {
        let count = |key: &str, v: u32| {
            if v == 0 || v > MAX_ENTRIES {
                Err(ConfigError::new(key, format!("must be between 1 and {MAX_ENTRIES}, got {v}")))
            } else {
                Ok(())
            }
        };
        count("shadow_pkts", self.shadow_pkts)?;
        count("sample_every", self.sample_every)?;
        count("bins", self.bins)?;
        for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ConfigError::new(key, format!("must be a finite number >= 0, got {v}")));
            }
        }
        for (key, v) in [("interval_us", self.interval_us), ("elephant_age_us", self.elephant_age_us)] {
            if !v.is_finite() || v < 1e-6 {
                return Err(ConfigError::new(key, format!("must be a positive number of microseconds (at least 1 ps), got {v}")));
            }
        }
        if let Some(t) = self.target_pkts {
            if t == 0 {
                return Err(ConfigError::new("target_pkts", "must be at least 1 packet"));
            }
            if let Some(l) = limit.pkts {
                if t >= l {
                    return Err(ConfigError::new("target_pkts", format!("{t} must be below the buffer limit_pkts = {l}")));
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Afd<P = Packet> {
    fifo: DropTail<P>,
    salt: u64,
    bins: u64,
    /// Shadow entries per bin.
    count: Vec<u32>,
    /// The shadow buffer: the bin of each sample.
    shadow: Vec<u32>,
    shadow_cap: usize,
    sample_every: u32,
    target: f64,
    alpha: f64,
    beta: f64,
    m_fair: f64,
    q_old: f64,
    interval: SimDuration,
    next_update: SimTime,
    /// Elephant trap: bytes per bin in the current age period, and the bins that reached
    /// `elephant_bytes` in the previous one (empty vectors when the trap is off).
    trap_bytes: Vec<u64>,
    trap_prev: Vec<bool>,
    elephant_bytes: u64,
    age: SimDuration,
    age_end: SimTime,
    rng: Rng,
}

impl<P: QPacket> Afd<P> {
    pub fn new(c: &AfdConfig, limit: Limit, ctx: &PortContext) -> Self {
        let mut rng = ctx.streams.stream("qdisc.afd", ctx.port_index);
        let cap_pkts = limit.pkts.map_or_else(|| limit.bytes.unwrap_or(0) / ctx.mtu.max(1) as u64, u64::from);
        let target = c.target_pkts.map_or((cap_pkts / 4).max(1) as f64, f64::from);
        let trap = c.elephant_bytes > 0;
        let interval = us(c.interval_us);
        let age = us(c.elephant_age_us);
        Afd {
            fifo: DropTail::new(limit),
            salt: rng.gen(),
            bins: c.bins as u64,
            count: vec![0; c.bins as usize],
            shadow: Vec::new(),
            shadow_cap: c.shadow_pkts as usize,
            sample_every: c.sample_every,
            target,
            alpha: c.alpha,
            beta: c.beta,
            m_fair: c.shadow_pkts as f64,
            q_old: 0.0,
            interval,
            next_update: SimTime::ZERO + interval,
            trap_bytes: if trap { vec![0; c.bins as usize] } else { Vec::new() },
            trap_prev: if trap { vec![false; c.bins as usize] } else { Vec::new() },
            elephant_bytes: c.elephant_bytes,
            age,
            age_end: SimTime::ZERO + age,
            rng,
        }
    }

    /// The fair share now, in shadow entries.
    pub fn m_fair(&self) -> f64 {
        self.m_fair
    }

    /// Shadow entries of `pkt`'s bin.
    pub fn m_of(&self, pkt: &P) -> u32 {
        self.count[self.bin(pkt)]
    }

    #[inline]
    fn bin(&self, pkt: &P) -> usize {
        (hash_flow(pkt.flow_key(), self.salt) % self.bins) as usize
    }

    /// Applies the controller updates due by `now`.
    #[inline]
    fn update(&mut self, now: SimTime) {
        if now < self.next_update {
            return;
        }
        let due = 1 + (now - self.next_update).0 / self.interval.0;
        let max = self.shadow_cap as f64;
        let q = self.fifo.len_pkts() as f64;
        let err = q - self.target;
        // the first update sees the change of q since the last one; the others see none
        self.m_fair = (self.m_fair + self.alpha * (self.q_old - self.target) - self.beta * err).clamp(1.0, max);
        if due > 1 {
            let step = (self.alpha - self.beta) * err;
            self.m_fair = (self.m_fair + step * (due - 1) as f64).clamp(1.0, max);
        }
        self.q_old = q;
        self.next_update = self.next_update + SimDuration(self.interval.0 * due);
    }

    /// Counts `size` bytes for `bin` in the elephant trap; is the bin an elephant?
    #[inline]
    fn elephant(&mut self, bin: usize, size: u32, now: SimTime) -> bool {
        if self.elephant_bytes == 0 {
            return true;
        }
        if now >= self.age_end {
            let periods = 1 + (now - self.age_end).0 / self.age.0;
            for (prev, bytes) in self.trap_prev.iter_mut().zip(self.trap_bytes.iter_mut()) {
                // more than one period ended: the last complete one counted nothing
                *prev = periods == 1 && *bytes >= self.elephant_bytes;
                *bytes = 0;
            }
            self.age_end = self.age_end + SimDuration(self.age.0 * periods);
        }
        self.trap_bytes[bin] += size as u64;
        self.trap_prev[bin] || self.trap_bytes[bin] >= self.elephant_bytes
    }

    #[inline]
    fn sample(&mut self, bin: usize) {
        if self.sample_every > 1 && self.rng.gen_range(0..self.sample_every) != 0 {
            return;
        }
        if self.shadow.len() < self.shadow_cap {
            self.shadow.push(bin as u32);
        } else {
            let i = self.rng.gen_range(0..self.shadow_cap);
            self.count[self.shadow[i] as usize] -= 1;
            self.shadow[i] = bin as u32;
        }
        self.count[bin] += 1;
    }
}

impl<P: QPacket> Discipline for Afd<P> {
    type Config = AfdConfig;
    fn validate(cfg: &AfdConfig, limit: Limit) -> Result<(), ConfigError> {
        cfg.validate(limit)
    }
    fn build(cfg: &AfdConfig, limit: Limit, ctx: &PortContext) -> Self {
        Afd::new(cfg, limit, ctx)
    }
}

impl<P: QPacket> Qdisc for Afd<P> {
    type Pkt = P;

    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        self.update(now);
        let bin = self.bin(&pkt);
        self.sample(bin);
        let m = self.count[bin] as f64;
        if self.elephant(bin, pkt.size(), now) && m > self.m_fair {
            let d = 1.0 - self.m_fair / m;
            if self.rng.gen::<f64>() < d {
                ev.drop(pkt, DropReason::FlowLimit, false);
                return;
            }
        }
        self.fifo.enqueue(pkt, now, ev);
    }

    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        self.fifo.dequeue(now, ev)
    }
    fn len_pkts(&self) -> usize {
        self.fifo.len_pkts()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
    fn name(&self) -> &'static str {
        "afd"
    }
}

#[cfg(test)]
mod tests;
