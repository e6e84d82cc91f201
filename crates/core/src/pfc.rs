//! PFC (IEEE 802.1Qbb, priority-based flow control): the lossless class of a link, its pause
//! frames, and the queue the class waits in at a port.
//!
//! Rules:
//! - Two classes share every link: the lossless class (packets whose `Packet::class` is
//!   `pfc.priority`, RoCE's) and the lossy class (every other packet: TCP, UDP, ExpressPass).
//!   The lossy class keeps the port's discipline (`[queue]`, `[host_queue]`, `[ports]`); the
//!   lossless class waits in a FIFO of its own at every port ([`ClassFifo`]), which never drops.
//! - Ingress accounting ([`IngressGate`], one per switch port, for the packets that came in
//!   through it): a lossless packet adds its bytes when the switch stores it and takes them off
//!   when it leaves the switch. When the bytes reach `xoff_bytes`, the switch sends a PAUSE up
//!   the link; when they fall to `xon_bytes`, a RESUME (a pause of zero quanta). While the gate
//!   stays above XON the switch sends the PAUSE again every half pause time, so the upstream port
//!   never resumes by itself while congestion lasts. Once paused, a gate takes up to
//!   `headroom_bytes` above the level it paused at; a packet beyond that is dropped: the headroom
//!   was too small for what was in flight when the PAUSE left (a lossless drop, counted, never
//!   silent).
//! - A pause frame carries `pause_quanta` quanta of 512 bit times at the link's rate
//!   ([`quanta_time`]); it leaves when the packet on the wire (if any) is out, takes 64 bytes'
//!   serialization and the link's delay, and stops the lossless class of the upstream port from
//!   that instant for its pause time ([`PauseState`]). A RESUME ends the pause at once. A paused
//!   port finishes the packet it is sending.
//! - The default headroom is what can still arrive after the gate crosses XOFF: the bytes on the
//!   link both ways (2 x delay x rate) plus one MTU each way (the frame waits for the packet our
//!   port is sending; the upstream port finishes the packet it started) ([`headroom_bytes`]).
//! - At a switch port the lossless FIFO marks ECN-capable packets CE as they leave, RED-style on
//!   the instantaneous queue ([`EcnMarker`]: 0 below `kmin_bytes`, rising linearly to `pmax` at
//!   `kmax_bytes`, 1 above): DCQCN's congestion point, marking at dequeue as the HPCC authors'
//!   ns-3 switch does. A host NIC does not mark.
//! - Between the two classes a port serves by packet round robin (`scheduler = "round_robin"`)
//!   or the lossless class first (`"strict"`); a paused lossless class is skipped.
//! - Pure state: time comes in, randomness from the stream a queue was built with; the engine's
//!   glue (`crates/sim/src/pfc.rs`) sends the frames and schedules the events.

use crate::config::ConfigError;
use crate::packet::Ecn;
use crate::qdisc::QPacket;
use crate::rng::Rng;
use crate::time::{BitsPerSec, SimDuration, SimTime};
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How a port serves its two classes (`pfc.scheduler`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ClassScheduler {
    /// One packet of each class in turn when both have one ready.
    #[default]
    RoundRobin,
    /// The lossless class first, whenever it has a packet and is not paused.
    Strict,
}

/// `[pfc.ecn]`: the congestion point's marking of the lossless class at switch ports.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    /// No mark at or below this queue, bytes (DCQCN's Kmin; sources: `docs/mechanisms/dcqcn.md`).
    pub kmin_bytes: u64,
    /// Marking probability `pmax` at this queue and 1 above it, bytes (DCQCN's Kmax).
    pub kmax_bytes: u64,
    /// Marking probability at `kmax_bytes` (DCQCN's Pmax). 0 turns marking off.
    pub pmax: f64,
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig { kmin_bytes: 5_000, kmax_bytes: 200_000, pmax: 0.01 }
    }
}

/// `[pfc]`: a lossless class on every link of the run (module rules).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// The lossless class: packets whose 802.1p priority is this (RoCE's `roce.priority`), 0 to 7.
    pub priority: u8,
    /// A switch pauses an upstream port when the lossless bytes that came in through it reach this.
    pub xoff_bytes: u64,
    /// ... and resumes it when they fall to this (at most `xoff_bytes`).
    pub xon_bytes: u64,
    /// Bytes a gate takes above `xoff_bytes` before it drops; absent: [`headroom_bytes`] of the
    /// link (2 x delay x rate + 2 MTU).
    pub headroom_bytes: Option<u64>,
    /// Pause time a PAUSE frame carries, in quanta of 512 bit times (1 to 65535): 65535 at
    /// 100 Gbit/s is 335.5 us.
    pub pause_quanta: u32,
    pub scheduler: ClassScheduler,
    pub ecn: EcnConfig,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            priority: 3,
            xoff_bytes: 100_000,
            xon_bytes: 95_000,
            headroom_bytes: None,
            pause_quanta: 65_535,
            scheduler: ClassScheduler::RoundRobin,
            ecn: EcnConfig::default(),
        }
    }
}

impl PfcConfig {
    /// Checks every key; errors name the key relative to `[pfc]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.priority > 7 {
            return Err(ConfigError::new("priority", format!("{} is not an 802.1p priority (0 to 7)", self.priority)));
        }
        if self.xoff_bytes == 0 {
            return Err(ConfigError::new("xoff_bytes", "must be positive"));
        }
        if self.xon_bytes > self.xoff_bytes {
            return Err(ConfigError::new(
                "xon_bytes",
                format!("{} is above xoff_bytes ({}): a gate would resume above the level that pauses it", self.xon_bytes, self.xoff_bytes),
            ));
        }
        if self.headroom_bytes == Some(0) {
            return Err(ConfigError::new("headroom_bytes", "must be positive (omit it for the link's own: 2 x delay x rate + 2 MTU)"));
        }
        if self.pause_quanta == 0 || self.pause_quanta > 65_535 {
            return Err(ConfigError::new("pause_quanta", format!("{} is not a pause time (1 to 65535 quanta)", self.pause_quanta)));
        }
        let e = &self.ecn;
        if e.kmin_bytes > e.kmax_bytes {
            return Err(ConfigError::new("ecn.kmin_bytes", format!("{} is above ecn.kmax_bytes ({})", e.kmin_bytes, e.kmax_bytes)));
        }
        if !(0.0..=1.0).contains(&e.pmax) {
            return Err(ConfigError::new("ecn.pmax", format!("{} is not a probability", e.pmax)));
        }
        Ok(())
    }
}

/// The pause time of `quanta` quanta (512 bit times each) at `rate`.
pub fn quanta_time(quanta: u32, rate: BitsPerSec) -> SimDuration {
    rate.tx_time(quanta as u64 * 512 / 8)
}

/// The default headroom of a link (module rules): 2 x delay x rate + 2 MTU, bytes.
pub fn headroom_bytes(rate: BitsPerSec, delay: SimDuration, mtu: u32) -> u64 {
    let in_flight = rate.as_f64() * delay.as_secs_f64() / 8.0;
    2 * in_flight.ceil() as u64 + 2 * mtu as u64
}

/// What a gate says of a lossless packet the switch is about to store ([`IngressGate::admit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Stored.
    Stored,
    /// Stored, and the gate just crossed XOFF: send a PAUSE up the link.
    Pause,
    /// Not stored: the headroom is full (a lossless drop).
    Drop,
}

/// The ingress accounting of one switch port's lossless class (module rules).
#[derive(Clone, Debug, Default)]
pub struct IngressGate {
    /// Lossless bytes that came in through the port and are still in the switch.
    pub bytes: u64,
    pub xoff: u64,
    pub xon: u64,
    pub headroom: u64,
    /// Above XOFF since the last PAUSE, not yet back to XON.
    pub paused: bool,
    /// The level the gate paused at (XOFF then): the headroom counts from it, so that a
    /// shared buffer lowering XOFF afterwards does not take the headroom away.
    level: u64,
    /// The most bytes it held.
    pub max_bytes: u64,
    /// Packets dropped for want of headroom.
    pub drops: u64,
}

impl IngressGate {
    pub fn new(xoff: u64, xon: u64, headroom: u64) -> IngressGate {
        IngressGate { xoff, xon, headroom, ..IngressGate::default() }
    }

    /// A lossless packet of `size` bytes came in through the port: below XOFF it is stored, the
    /// one that reaches XOFF is stored and pauses the link, and after that the headroom takes
    /// what was in flight, up to `headroom` bytes above the level the gate paused at.
    pub fn admit(&mut self, size: u32) -> Admit {
        if self.paused && self.bytes + size as u64 > self.level + self.headroom {
            self.drops += 1;
            return Admit::Drop;
        }
        let before = self.bytes;
        self.bytes += size as u64;
        self.max_bytes = self.max_bytes.max(self.bytes);
        if !self.paused && self.bytes >= self.xoff {
            self.paused = true;
            self.level = self.xoff.max(before);
            return Admit::Pause;
        }
        Admit::Stored
    }

    /// A packet of `size` bytes that came in through the port left the switch: whether to send
    /// a RESUME.
    pub fn release(&mut self, size: u32) -> bool {
        debug_assert!(self.bytes >= size as u64, "a gate released more than it admitted");
        self.bytes -= size as u64;
        if self.paused && self.bytes <= self.xon {
            self.paused = false;
            return true;
        }
        false
    }
}

/// The lossless class of one port as its peer pauses it (module rules), and the time it spent
/// paused.
#[derive(Clone, Debug, Default)]
pub struct PauseState {
    /// Paused until then (in the past: not paused).
    pub until: SimTime,
    /// Start of the pause episode under way or last ended, when `open`.
    since: SimTime,
    open: bool,
    /// Paused time of the episodes already over.
    closed: SimDuration,
    /// PAUSE frames (with a pause time) received.
    pub pauses: u64,
    /// RESUME frames (zero quanta) received.
    pub resumes: u64,
}

impl PauseState {
    /// Whether the class is paused at `now`.
    #[inline]
    pub fn paused(&self, now: SimTime) -> bool {
        now < self.until
    }

    /// A frame arrives at `now` with pause time `time` (zero: RESUME).
    pub fn frame(&mut self, now: SimTime, time: SimDuration) {
        if time == SimDuration::ZERO {
            self.resumes += 1;
        } else {
            self.pauses += 1;
        }
        if self.open && now >= self.until {
            // the last episode ran out by itself
            self.closed = self.closed + self.until.saturating_since(self.since);
            self.open = false;
        }
        if time == SimDuration::ZERO {
            if self.open {
                self.closed = self.closed + now.saturating_since(self.since);
                self.open = false;
            }
            self.until = now;
        } else {
            if !self.open {
                self.since = now;
                self.open = true;
            }
            self.until = now + time;
        }
    }

    /// Time spent paused up to `end`.
    pub fn paused_time(&self, end: SimTime) -> SimDuration {
        let open = if self.open { self.until.min(end).saturating_since(self.since) } else { SimDuration::ZERO };
        self.closed + open
    }
}

/// DCQCN's congestion point on a FIFO (module rules).
#[derive(Clone, Debug)]
pub struct EcnMarker {
    kmin: u64,
    kmax: u64,
    pmax: f64,
    rng: Rng,
}

impl EcnMarker {
    pub fn new(cfg: &EcnConfig, rng: Rng) -> EcnMarker {
        EcnMarker { kmin: cfg.kmin_bytes, kmax: cfg.kmax_bytes, pmax: cfg.pmax, rng }
    }

    /// Whether a packet leaving a queue of `queued` bytes is marked; draws only between the two
    /// thresholds.
    pub fn mark(&mut self, queued: u64) -> bool {
        if self.pmax == 0.0 || queued <= self.kmin {
            return false;
        }
        if queued > self.kmax {
            return true;
        }
        let p = self.pmax * (queued - self.kmin) as f64 / (self.kmax - self.kmin).max(1) as f64;
        self.rng.gen::<f64>() < p
    }
}

/// The lossless class's queue at one port: a FIFO that never drops, each packet with the gate it
/// came in through (to release it when it leaves), marking at dequeue at a switch port.
#[derive(Clone, Debug)]
pub struct ClassFifo<P> {
    q: VecDeque<(P, u32)>,
    pub bytes: u64,
    pub max_bytes: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    pub marks: u64,
    marker: Option<EcnMarker>,
}

impl<P: QPacket> ClassFifo<P> {
    pub fn new(marker: Option<EcnMarker>) -> ClassFifo<P> {
        ClassFifo { q: VecDeque::new(), bytes: 0, max_bytes: 0, packets_out: 0, bytes_out: 0, marks: 0, marker }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Stores `p`, which came in through gate `gate` (an opaque id the caller gives back).
    pub fn push(&mut self, p: P, gate: u32) {
        self.bytes += p.size() as u64;
        self.max_bytes = self.max_bytes.max(self.bytes);
        self.q.push_back((p, gate));
    }

    /// The oldest packet and its gate, CE-marked if the marker says so (ECN-capable packets only).
    pub fn pop(&mut self) -> Option<(P, u32)> {
        let queued = self.bytes;
        let (mut p, gate) = self.q.pop_front()?;
        self.bytes -= p.size() as u64;
        self.packets_out += 1;
        self.bytes_out += p.size() as u64;
        if let Some(m) = &mut self.marker {
            if matches!(p.ecn(), Ecn::Ect0 | Ecn::Ect1) && m.mark(queued) {
                p.set_ecn(Ecn::Ce);
                self.marks += 1;
            }
        }
        Some((p, gate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::rng::Streams;

    fn us(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_us(n)
    }

    #[test]
    fn a_gate_pauses_at_xoff_resumes_at_xon_and_drops_beyond_the_headroom() {
        let mut g = IngressGate::new(3000, 1000, 2000);
        assert_eq!(g.admit(1000), Admit::Stored);
        assert_eq!(g.admit(1000), Admit::Stored);
        assert_eq!(g.admit(1000), Admit::Pause, "3000 bytes reach XOFF");
        assert_eq!(g.admit(1000), Admit::Stored, "one PAUSE per crossing");
        assert_eq!(g.admit(1000), Admit::Stored, "the headroom takes what was in flight");
        assert_eq!(g.admit(1), Admit::Drop, "5001 bytes would pass xoff + headroom");
        assert_eq!((g.bytes, g.drops, g.max_bytes), (5000, 1, 5000));
        for _ in 0..3 {
            assert!(!g.release(1000), "above XON: no RESUME");
        }
        assert!(g.release(1000), "down to XON: RESUME");
        assert!(!g.release(1000), "one RESUME per crossing");
        assert_eq!(g.bytes, 0);
        assert_eq!(g.admit(3000), Admit::Pause, "a new crossing pauses again");
    }

    #[test]
    fn a_lowered_xoff_does_not_take_the_headroom_of_a_paused_gate() {
        let mut g = IngressGate::new(3000, 1000, 2000);
        for _ in 0..3 {
            g.admit(1000);
        }
        assert!(g.paused);
        g.xoff = 500; // a shared buffer filling up lowers the level
        assert_eq!(g.admit(1000), Admit::Stored);
        assert_eq!(g.admit(1000), Admit::Stored, "still within 2000 above the level it paused at (3000)");
        assert_eq!(g.admit(1), Admit::Drop);
    }

    #[test]
    fn pause_time_counts_each_episode_once_whatever_ends_it() {
        let mut s = PauseState::default();
        let q = SimDuration::from_us(10);
        s.frame(us(0), q);
        assert!(s.paused(us(5)) && !s.paused(us(10)));
        s.frame(us(5), q); // refreshed: paused until 15
        assert!(s.paused(us(12)));
        s.frame(us(12), SimDuration::ZERO); // resumed at 12
        assert!(!s.paused(us(12)));
        assert_eq!(s.paused_time(us(100)), SimDuration::from_us(12));
        s.frame(us(20), q); // runs out by itself at 30
        assert_eq!(s.paused_time(us(25)), SimDuration::from_us(17), "an open episode counts up to the end asked");
        assert_eq!(s.paused_time(us(100)), SimDuration::from_us(22));
        s.frame(us(40), q); // a new episode after the last one ran out
        assert_eq!(s.paused_time(us(100)), SimDuration::from_us(32));
        assert_eq!((s.pauses, s.resumes), (4, 1));
    }

    #[test]
    fn quanta_and_headroom_follow_the_link() {
        assert_eq!(quanta_time(65_535, BitsPerSec(100_000_000_000)), SimDuration::from_secs_f64(65_535.0 * 512.0 / 100e9));
        // 100 Gbit/s, 1 us: 12,500 bytes on the wire each way, plus two MTUs
        assert_eq!(headroom_bytes(BitsPerSec(100_000_000_000), SimDuration::from_us(1), 1000), 2 * 12_500 + 2 * 1000);
    }

    #[test]
    fn the_marker_never_marks_below_kmin_always_above_kmax_and_pmax_in_between() {
        let cfg = EcnConfig { kmin_bytes: 5_000, kmax_bytes: 200_000, pmax: 0.5 };
        let mut m = EcnMarker::new(&cfg, Streams::new(1).stream("pfc.ecn", 0));
        assert!((0..1000).all(|_| !m.mark(5_000)));
        assert!((0..1000).all(|_| m.mark(200_001)));
        let at_kmax = (0..20_000).filter(|_| m.mark(200_000)).count() as f64 / 20_000.0;
        assert!((at_kmax - 0.5).abs() < 0.02, "{at_kmax}");
        let halfway = (0..20_000).filter(|_| m.mark(102_500)).count() as f64 / 20_000.0;
        assert!((halfway - 0.25).abs() < 0.02, "{halfway}");
        let off = EcnConfig { pmax: 0.0, ..cfg };
        let mut m = EcnMarker::new(&off, Streams::new(1).stream("pfc.ecn", 0));
        assert!(!m.mark(1 << 30), "pmax 0: no marking at all");
    }

    #[test]
    fn the_fifo_keeps_order_counts_bytes_and_marks_only_ecn_capable_packets() {
        let all = EcnConfig { kmin_bytes: 0, kmax_bytes: 0, pmax: 1.0 };
        let mut f: ClassFifo<Packet> = ClassFifo::new(Some(EcnMarker::new(&all, Streams::new(1).stream("pfc.ecn", 0))));
        for (i, ecn) in [Ecn::Ect0, Ecn::NotEct, Ecn::Ect1].into_iter().enumerate() {
            f.push(Packet { uid: i as u64, size: 1000, ecn, ..Default::default() }, i as u32 + 7);
        }
        assert_eq!((f.len(), f.bytes), (3, 3000));
        let out: Vec<_> = std::iter::from_fn(|| f.pop()).collect();
        assert_eq!(out.iter().map(|(p, g)| (p.uid, *g)).collect::<Vec<_>>(), vec![(0, 7), (1, 8), (2, 9)]);
        assert_eq!(out.iter().map(|(p, _)| p.ecn).collect::<Vec<_>>(), vec![Ecn::Ce, Ecn::NotEct, Ecn::Ce]);
        assert_eq!((f.bytes, f.max_bytes, f.packets_out, f.bytes_out, f.marks), (0, 3000, 3, 3000, 2));
    }

    #[test]
    fn validation_names_the_key() {
        let bad = |f: fn(&mut PfcConfig)| {
            let mut c = PfcConfig::default();
            f(&mut c);
            c.validate().unwrap_err().key
        };
        assert_eq!(bad(|c| c.xon_bytes = c.xoff_bytes + 1), "xon_bytes");
        assert_eq!(bad(|c| c.xoff_bytes = 0), "xoff_bytes");
        assert_eq!(bad(|c| c.priority = 8), "priority");
        assert_eq!(bad(|c| c.pause_quanta = 0), "pause_quanta");
        assert_eq!(bad(|c| c.headroom_bytes = Some(0)), "headroom_bytes");
        assert_eq!(bad(|c| c.ecn.kmin_bytes = c.ecn.kmax_bytes + 1), "ecn.kmin_bytes");
        assert_eq!(bad(|c| c.ecn.pmax = 1.5), "ecn.pmax");
        assert!(PfcConfig::default().validate().is_ok());
    }
}
