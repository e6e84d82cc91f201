//! Blackout: a DropTail FIFO with an ON/OFF drop process, the port-blackout model of the TCP
//! Outcast paper (Prakash et al., "The TCP Outcast Problem: Exposing Unfairness in Data Center
//! Networks", NSDI 2012, section 4.3). A test device: it injects the consecutive drops a
//! taildrop port suffers in a blackout, on a schedule independent of the traffic, so that
//! their effect on TCP can be studied apart from what causes them (the paper's figure 13).
//!
//! Rules:
//! - The port alternates between two states. OFF lasts an exponential time of mean
//!   `mean_off_s`; then ON lasts exactly the time the port takes to transmit `drop_pkts` (m)
//!   back-to-back packets of `packet_bytes` at its rate, `D = m x tx_time(packet_bytes)`; then
//!   OFF again. The run starts OFF at time 0. ON is the half-open interval `[on, on + D)`.
//! - ON drops every arriving packet ([`DropReason::Blackout`]), whether or not the buffer has
//!   room; with `input` set, only the packets that arrive through that input port, the others
//!   are treated as in OFF. As in the paper, ON is a *duration*, not a count: it drops m packets
//!   only if m of them arrive back to back during it.
//! - Otherwise (OFF, or a packet from another input) the port is a DropTail FIFO: the packet is
//!   stored if it fits `queue.limit_pkts` / `limit_bytes`, else dropped with
//!   [`DropReason::Overflow`]. Dequeue is plain FIFO in both states.
//! - The schedule is a pure function of (seed, port): the exponential draws come from the
//!   stream `("qdisc.blackout", port_index)`, one per OFF period, in order, and the state is
//!   advanced lazily to `now` on every call, so the traffic never shifts the draws.
//! - `m = 0` is allowed and means no blackout at all (D = 0): the port is a DropTail FIFO with
//!   the same keys, the baseline point of the paper's figure 13. It draws nothing.
//!
//! Parameters (`[queue.blackout]`): `docs/mechanisms/blackout.md`.
//!
//! `input` names the port that *feeds* the switch (the previous hop's output port, as in
//! `drop_runs.csv`); the simulator resolves it after building the network and calls
//! [`Blackout::restrict_to_ingress`] on every blackout port (a port of another switch gets no
//! matching input and never drops by blackout). Limits: one input at most; the ON length is
//! fixed (the paper's model); the expected fraction of time ON is `D / (mean_off_s + D)`.
//! Cost: O(1) per packet, plus one draw per OFF period elapsed.
//! Tests: the bottom of this file; `docs/mechanisms/blackout.md`.

use super::droptail::DropTail;
use crate::config::{ConfigError, Limit};
use super::framework::{Discipline, DropReason, PortContext, Ports, QPacket, Qdisc, QdiscEvents, Variant};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime, PS_PER_SEC};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// `[queue.blackout]`: see the module documentation.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BlackoutConfig {
    pub mean_off_s: f64,
    /// Required; `Option` only so that its absence is reported by [`BlackoutConfig::validate`].
    pub drop_pkts: Option<u32>,
    pub packet_bytes: u32,
    pub input: Option<String>,
}

impl Default for BlackoutConfig {
    fn default() -> Self {
        BlackoutConfig { mean_off_s: 0.005, drop_pkts: None, packet_bytes: 1500, input: None }
    }
}

/// The longest ON period, in packets (a guard against typos such as `1e9`).
pub const MAX_DROP_PKTS: u32 = 1_000_000;

impl BlackoutConfig {
    /// Rejects impossible values; keys are relative to `[queue.blackout]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = self.mean_off_s;
        if !t.is_finite() || t <= 0.0 {
            return Err(ConfigError::new("mean_off_s", format!("must be a positive number of seconds, got {t}")));
        }
        if t < 1e-9 {
            return Err(ConfigError::new("mean_off_s", format!("must be at least 1 ns, got {t}")));
        }
        match self.drop_pkts {
            None => {
                return Err(ConfigError::new(
                    "drop_pkts",
                    "required with queue.kind = \"blackout\": the packets an ON period lasts (m; 0 = never ON)",
                ))
            }
            Some(m) if m > MAX_DROP_PKTS => {
                return Err(ConfigError::new("drop_pkts", format!("must be at most {MAX_DROP_PKTS}, got {m}")))
            }
            Some(_) => {}
        }
        if self.packet_bytes == 0 {
            return Err(ConfigError::new("packet_bytes", "must be at least 1 byte"));
        }
        if let Some(name) = &self.input {
            if name.is_empty() {
                return Err(ConfigError::new("input", "name a port (\"s0->sw\"), or leave the key out for every input"));
            }
        }
        Ok(())
    }
}

/// Which arrivals an ON period drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFilter {
    /// Every arrival.
    All,
    /// Only packets whose `ingress` is this local input port.
    Ingress(u16),
    /// None: the configured input does not feed this port.
    Nothing,
}

#[derive(Debug)]
pub struct Blackout<P = Packet> {
    /// The FIFO behind the drop process (OFF, or packets from other inputs).
    fifo: DropTail<P>,
    filter: InputFilter,
    /// Mean OFF time in picoseconds (as `f64`, for the exponential draw).
    mean_off_ps: f64,
    /// ON length `D`; zero means never ON.
    on_len: SimDuration,
    /// The current or next ON period is `[on_start, on_end)`.
    on_start: SimTime,
    on_end: SimTime,
    rng: Rng,
}

impl<P: QPacket> Blackout<P> {
    /// A blackout port. With `cfg.input` set, the port drops nothing by blackout until
    /// [`Blackout::restrict_to_ingress`] says which of its inputs that is.
    pub fn new(cfg: &BlackoutConfig, limit: Limit, ctx: &PortContext) -> Self {
        let m = cfg.drop_pkts.unwrap_or(0) as u64;
        let on_len = ctx.rate.tx_time(cfg.packet_bytes as u64).saturating_mul(m);
        let mut b = Blackout {
            fifo: DropTail::new(limit),
            filter: if cfg.input.is_some() { InputFilter::Nothing } else { InputFilter::All },
            mean_off_ps: cfg.mean_off_s * PS_PER_SEC as f64,
            on_len,
            on_start: SimTime::MAX,
            on_end: SimTime::MAX,
            rng: ctx.streams.stream("qdisc.blackout", ctx.port_index),
        };
        if on_len > SimDuration::ZERO {
            b.on_start = SimTime::ZERO + b.off_time();
            b.on_end = b.on_start + on_len;
        }
        b
    }

    /// Drop by blackout only the packets that arrive through local input port `ingress`
    /// (`None`: no input of this port is the configured one; nothing is dropped by blackout).
    pub fn restrict_to_ingress(&mut self, ingress: Option<u16>) {
        self.filter = match ingress {
            Some(i) => InputFilter::Ingress(i),
            None => InputFilter::Nothing,
        };
    }

    pub fn filter(&self) -> InputFilter {
        self.filter
    }

    /// One exponential OFF time, rounded to the picosecond.
    fn off_time(&mut self) -> SimDuration {
        let u: f64 = self.rng.gen(); // [0, 1)
        SimDuration((-(1.0 - u).ln() * self.mean_off_ps).round() as u64)
    }

    /// Is the port ON at `now`? Advances the schedule to `now` (times never go back).
    #[inline]
    pub fn is_on(&mut self, now: SimTime) -> bool {
        while now >= self.on_end {
            self.on_start = self.on_end + self.off_time();
            self.on_end = self.on_start + self.on_len;
        }
        now >= self.on_start
    }

    /// Does an ON period drop `pkt`?
    #[inline]
    fn blacks_out(&self, pkt: &P) -> bool {
        match self.filter {
            InputFilter::All => true,
            InputFilter::Ingress(i) => pkt.ingress() == i,
            InputFilter::Nothing => false,
        }
    }
}

impl<P: QPacket> Discipline for Blackout<P> {
    type Config = BlackoutConfig;
    fn validate(cfg: &BlackoutConfig, _limit: Limit) -> Result<(), ConfigError> {
        cfg.validate()
    }
    fn build(cfg: &BlackoutConfig, limit: Limit, ctx: &PortContext) -> Self {
        Blackout::new(cfg, limit, ctx)
    }
    /// `input`: every blackout port of the switch the named port feeds drops by blackout only
    /// what arrives through that port; blackout ports elsewhere drop nothing by blackout.
    fn wire<Q>(cfg: &BlackoutConfig, ports: &mut dyn Ports<Q>) -> Result<(), ConfigError>
    where
        Self: Variant<Q>,
    {
        let Some(name) = cfg.input.as_deref() else { return Ok(()) };
        let (fed, ingress) = ports.feeds(name).ok_or_else(|| {
            ConfigError::new("input", format!("no port named {name:?} (name the port that feeds the switch, such as \"s0->sw\")"))
        })?;
        let mut found = false;
        ports.each(&mut |node, q| {
            if let Some(b) = Self::of_mut(q) {
                let here = node == fed;
                found |= here;
                b.restrict_to_ingress(here.then_some(ingress));
            }
        });
        if !found {
            let node = ports.node_name(fed);
            return Err(ConfigError::new("input", format!("{name:?} feeds {node}, which has no port running the blackout discipline")));
        }
        Ok(())
    }
}

impl<P: QPacket> Qdisc for Blackout<P> {
    type Pkt = P;

    #[inline]
    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        if self.blacks_out(&pkt) && self.is_on(now) {
            ev.drop(pkt, DropReason::Blackout, false);
        } else {
            self.fifo.enqueue(pkt, now, ev);
        }
    }
    #[inline]
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
        "blackout"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{check_accounting, ctx, pkt};
    use crate::qdisc::Queue;
    use proptest::prelude::*;

    fn cfg(m: u32) -> BlackoutConfig {
        BlackoutConfig { drop_pkts: Some(m), ..Default::default() }
    }

    /// The ON length at the test port's 100 Mbit/s: 1500 bytes = 120 us per packet.
    const PKT_US: u64 = 120;

    // --- the schedule -------------------------------------------------------------------
    #[test]
    fn on_lasts_m_packet_times_and_starts_off() {
        let mut b: Blackout = Blackout::new(&cfg(4), Limit::pkts(100), &ctx(1));
        assert!(!b.is_on(SimTime::ZERO));
        let (on, end) = (b.on_start, b.on_end);
        assert!(on > SimTime::ZERO);
        assert_eq!(end - on, SimDuration::from_us(4 * PKT_US));
        assert!(!b.is_on(SimTime(on.0 - 1)));
        assert!(b.is_on(on));
        assert!(b.is_on(SimTime(end.0 - 1)));
        assert!(!b.is_on(end), "ON is half-open");
        assert!(b.on_start >= end, "the next ON comes after an OFF period");
    }

    #[test]
    fn the_schedule_does_not_depend_on_when_it_is_asked() {
        // One port polled every microsecond, one polled once a second: same ON periods.
        let mut fine: Blackout = Blackout::new(&cfg(3), Limit::pkts(10), &ctx(7));
        let mut coarse: Blackout = Blackout::new(&cfg(3), Limit::pkts(10), &ctx(7));
        let mut periods = Vec::new();
        for us in 0..2_000_000u64 {
            fine.is_on(SimTime(us * 1_000_000));
            if periods.last() != Some(&fine.on_start) {
                periods.push(fine.on_start);
            }
        }
        coarse.is_on(SimTime::from_secs_f64(2.0));
        assert_eq!(coarse.on_start, fine.on_start);
        assert!(periods.len() > 300, "{} periods in 2 s of mean 5 ms", periods.len());
    }

    #[test]
    fn zero_packets_never_turns_on_and_draws_nothing() {
        let mut b: Blackout = Blackout::new(&cfg(0), Limit::pkts(2), &ctx(1));
        let before = b.rng.clone();
        assert!(!b.is_on(SimTime::from_secs_f64(100.0)));
        assert_eq!(b.rng, before);
    }

    #[test]
    fn measured_on_fraction_matches_the_model() {
        // Sample the state every 10 us for 40 s (about 7,800 cycles): the fraction of samples
        // ON estimates D / (mean_off + D). Its relative standard error is about
        // 1/sqrt(cycles) ~ 1.1 % (the OFF times are exponential); allow 5 %.
        for (m, seed) in [(1u32, 3u64), (10, 4)] {
            let mut b: Blackout = Blackout::new(&cfg(m), Limit::pkts(10), &ctx(seed));
            let d = (m as u64 * PKT_US) as f64 * 1e-6;
            let expected = d / (0.005 + d);
            let n = 4_000_000u64;
            let on = (0..n).filter(|&i| b.is_on(SimTime(i * 10_000_000))).count();
            let got = on as f64 / n as f64;
            assert!((got / expected - 1.0).abs() < 0.05, "m = {m}: ON fraction {got}, expected {expected}");
        }
    }

    // --- the drop rule ------------------------------------------------------------------
    /// Offers one packet every `gap_us` for `secs`, draining the queue after each, and returns
    /// (arrivals in ON, blackout drops, arrivals in OFF, other drops).
    fn drive(b: Blackout, gap_us: u64, secs: u64, ingress_of: impl Fn(u64) -> u16) -> (u64, u64, u64, u64) {
        let mut q = Queue::new(b);
        let mut ev = QdiscEvents::default();
        let (mut in_on, mut bo, mut in_off, mut other) = (0, 0, 0, 0);
        for i in 0..secs * 1_000_000 / gap_us {
            let now = SimTime(i * gap_us * 1_000_000);
            let mut p = pkt(1, i, 1500);
            p.ingress = ingress_of(i);
            let targeted = q.qdisc.blacks_out(&p);
            let on = q.qdisc.is_on(now) && targeted;
            q.enqueue(p, now, &mut ev);
            let dropped = ev.dropped.len() as u64;
            if on {
                in_on += 1;
                bo += dropped;
                assert!(ev.dropped.iter().all(|d| d.reason == DropReason::Blackout && !d.queued));
            } else {
                in_off += 1;
                other += dropped;
            }
            assert_eq!(dropped, on as u64, "ON drops every targeted arrival, nothing else drops");
            q.dequeue(now, &mut ev);
        }
        assert_eq!(q.stats.drops_by_reason(DropReason::Blackout), bo);
        (in_on, bo, in_off, other)
    }

    #[test]
    fn on_drops_every_arrival_and_off_none() {
        let (in_on, bo, in_off, other) = drive(Blackout::new(&cfg(5), Limit::pkts(4), &ctx(2)), 20, 5, |_| 0);
        assert!(in_on > 0 && in_off > 0);
        assert_eq!((bo, other), (in_on, 0));
    }

    #[test]
    fn an_input_filter_spares_the_other_inputs() {
        let mut b: Blackout = Blackout::new(&BlackoutConfig { input: Some("x->sw".into()), ..cfg(5) }, Limit::pkts(4), &ctx(2));
        assert_eq!(b.filter(), InputFilter::Nothing, "unresolved: drops nothing by blackout");
        b.restrict_to_ingress(Some(1));
        // Odd arrivals come through input 1, even ones through input 0.
        let (in_on, bo, _, other) = drive(b, 20, 5, |i| (i % 2) as u16);
        assert!(in_on > 0);
        assert_eq!((bo, other), (in_on, 0));
        let mut none = Blackout::new(&BlackoutConfig { input: Some("x->sw".into()), ..cfg(5) }, Limit::pkts(4), &ctx(2));
        none.restrict_to_ingress(None);
        let (in_on, bo, _, _) = drive(none, 20, 1, |_| 1);
        assert_eq!((in_on, bo), (0, 0));
    }

    #[test]
    fn off_is_droptail() {
        let mut b: Blackout = Blackout::new(&cfg(0), Limit::pkts(2), &ctx(1));
        let mut ev = QdiscEvents::default();
        for s in 0..3 {
            b.enqueue(pkt(1, s, 1500), SimTime::ZERO, &mut ev);
        }
        assert_eq!(ev.dropped.len(), 1);
        assert_eq!((ev.dropped[0].pkt.seq, ev.dropped[0].reason), (2, DropReason::Overflow));
        assert_eq!(b.dequeue(SimTime::ZERO, &mut ev).unwrap().seq, 0);
        assert_eq!(b.dequeue(SimTime::ZERO, &mut ev).unwrap().seq, 1);
    }

    // --- configuration ------------------------------------------------------------------
    #[test]
    fn bad_values_name_their_key() {
        let key = |c: BlackoutConfig| c.validate().unwrap_err().key;
        assert_eq!(key(BlackoutConfig::default()), "drop_pkts");
        assert_eq!(key(BlackoutConfig { mean_off_s: 0.0, ..cfg(1) }), "mean_off_s");
        assert_eq!(key(BlackoutConfig { mean_off_s: -1.0, ..cfg(1) }), "mean_off_s");
        assert_eq!(key(BlackoutConfig { mean_off_s: f64::NAN, ..cfg(1) }), "mean_off_s");
        assert_eq!(key(BlackoutConfig { packet_bytes: 0, ..cfg(1) }), "packet_bytes");
        assert_eq!(key(cfg(MAX_DROP_PKTS + 1)), "drop_pkts");
        assert_eq!(key(BlackoutConfig { input: Some(String::new()), ..cfg(1) }), "input");
        assert!(cfg(0).validate().is_ok());
    }

    // --- accounting identities ----------------------------------------------------------
    proptest! {
        #[test]
        fn accounting_holds(ops in proptest::collection::vec((any::<bool>(), 0u32..8, 40u32..1500), 1..400)) {
            // check_accounting advances 1 us per call: mean OFF 50 us and ON 2 packets (240 us)
            // make both states frequent.
            let c = BlackoutConfig { mean_off_s: 50e-6, ..cfg(2) };
            check_accounting(Blackout::new(&c, Limit::pkts(5), &ctx(9)), &ops);
        }
    }
}
