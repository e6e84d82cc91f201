//! FairQ: a switch that rewrites the receive window of ACKs to a per-port fair share.
//!
//! From Abdelmoniem and Bensaou, "FairQ: Fair and Fast Rate Allocation in Data Centers"
//! (`../shared/papers/001_a684bdbf5d79e582.txt`, section III and the FairSwitch design of
//! section IV), with the defaults of the authors' public switch code (RWNDQ, Open vSwitch
//! datapath patch: `M = 8`, a 1 ms timer, a target of a quarter of the buffer, windows between
//! a minimum segment and 65535 bytes per flow). FairQ is **not** a queue discipline: it sits
//! beside whatever discipline an output port runs, watches the packets the switch forwards, and
//! rewrites the window field of ACKs travelling the other way. Nothing here reads a clock.
//!
//! Rules, per output port `P` of a FairQ switch ([`FairqPort`]):
//! - **Flows** (`N`): no per-flow state. A SYN-ACK crossing the switch adds one flow to the port
//!   it enters through *and* to the port it leaves through (a TCP connection carries data both
//!   ways, as the public code counts it); a FIN or an RST removes one from both, never below 0.
//!   If no data segment has left through `P` for `idle_reset_s` while `N > 0`, `N` is reset to
//!   0 (lost FINs, retransmitted SYN-ACKs and connections that never close would otherwise
//!   leave the count wrong forever).
//! - **Queue average**: the port's queue in bytes is sampled every `sample_interval_us`
//!   ([`FairqPort::sample`]); the average is that of the last `avg_samples` samples (the
//!   NetFPGA `AVG_32` module: 32 samples, 48 us apart at 1 Gbps).
//! - **Port window** `W` (bytes): when the first flow arrives (`N: 0 -> 1`), `W = target` and,
//!   with `slow_start`, the port is in slow start. Every `T = interval_us` ([`FairqPort::tick`]):
//!   slow start ends for good once the average reaches the target; outside slow start
//!   `incr += gain * mss * (target - avg) / target`. Every `M = update_ticks` ticks, `W` grows
//!   by `2 * mss` in slow start, else by `incr`, `incr` is reset, and `W` is clamped to
//!   `[N * min_window_bytes, N * max_window_bytes]`. The per-flow window is
//!   `w = clamp(W / N, min_window_bytes, max_window_bytes)`, recomputed at once whenever `N`
//!   changes (the paper: "for each new flow, the current window is divided equally").
//!   `target = target_fraction * buffer_bytes`.
//! - **Rewrite** ([`Fairq::on_packet`]): every TCP segment with the ACK flag (the paper: "all
//!   incoming ACKs") that *enters* the switch through a FairQ port `P` with `N > 0` gets its
//!   window field overwritten by `w` if the window it carries is larger; a smaller window (the
//!   receiver's own) is left alone, so FairQ never raises a window. A SYN-ACK's field is never
//!   scaled (RFC 7323 2.2), so it is compared and written unscaled, capped at 65535: the first
//!   flight of a connection opened towards a receiver behind the switch is held to the fair
//!   share too, as the ACK of the third handshake segment holds it when the receiver opens.
//!
//! **Which port governs an ACK.** An ACK that enters the switch through port `P` belongs to a
//! flow whose data leaves the switch through `P`, provided the ACK retraces its data's path
//! (the paper's requirement (i)). That is the public code's rule (the window of the ACK's input
//! device) and it needs no routing look-up and no per-flow state. It holds on single-path
//! topologies (the 4-rack testbed, a dumbbell) and, on multi-path fabrics, with
//! `routing.mode = "symmetric"` (both directions hash the unordered 5-tuple, so the ACK takes
//! the mirror of its data's path). With plain `ecmp` an ACK may cross other switches and enter
//! through another port: then it is governed by that port's window, and `docs/mechanisms/fairq.md`
//! says so.
//!
//! **Window scaling** ([`WscaleMode`], the paper's three ways): the header field of an ACK is
//! the window shifted right by its sender's scale factor `s`, so the switch must know `s`.
//! - `reserved_bits` (the paper's prototype): an end-host helper writes the receiver's `s` into
//!   the 4 reserved header bits of every ACK ([`tag_reserved_bits`]); the switch reads it,
//!   compares `field << s` with `w` and writes `max(w >> s, 1)`. An ACK without the bits is
//!   left alone (its scale is unknown). The bits are cleared where the ACK leaves the network:
//!   by the FairQ switch that forwards it to a host (a port with `to_host`), so that every FairQ
//!   switch on a multi-switch path can rescale (section III: "as the ACKs traverse the switches
//!   in the reverse path [...] each switch [...] modifies the value after adjusting it using the
//!   window scaling value"), and the end point never sees them (section IV-C's reason).
//! - `unify`: the switch rewrites the window-scale option of every SYN and SYN-ACK to
//!   `unify_wscale` and writes `max(w >> unify_wscale, 1)`; the sender decodes it exactly with
//!   the factor it was told. (A receiver whose own factor differs keeps using its own for its
//!   own advertisements: see the docs.)
//! - `off`: the switch strips the option from SYN and SYN-ACK, so by RFC 7323 neither side
//!   scales, and writes `min(w, 65535)`.
//!
//! Parameters (`[fairq]`): `docs/mechanisms/fairq.md`.
//!
//! Limits: one switch-wide set of parameters; the controller state is a few words per port and
//! each packet costs O(1). Validation: [`FairqConfig::validate`]; tests at the bottom of this
//! file and in `crates/sim/tests/runs/fairq.rs`.

use crate::packet::{flags, Packet, Proto, NO_WSCALE};
use crate::config::ConfigError;
use crate::tcp::{decode_window, MAX_WINDOW_FIELD, MAX_WSCALE};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// How the switch learns the scale factor of the windows it rewrites (`fairq.wscale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WscaleMode {
    /// An end-host helper writes the receiver's factor into 4 reserved header bits.
    #[default]
    ReservedBits,
    /// The switch rewrites the option of every SYN / SYN-ACK to `unify_wscale`.
    Unify,
    /// The switch removes the option from SYN / SYN-ACK: nobody scales.
    Off,
}

/// The `[fairq]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FairqConfig {
    /// Switches (by name) whose ports run FairQ; empty: every switch.
    pub switches: Vec<String>,
    pub target_fraction: f64,
    /// The buffer the target is a fraction of; default: the `[queue]` limit (bytes, or
    /// packets times the MTU).
    pub buffer_bytes: Option<u64>,
    pub interval_us: f64,
    pub update_ticks: u32,
    pub sample_interval_us: f64,
    pub avg_samples: u32,
    pub gain: f64,
    pub mss_bytes: u32,
    pub min_window_bytes: u64,
    pub max_window_bytes: u64,
    pub slow_start: bool,
    pub idle_reset_s: f64,
    pub wscale: WscaleMode,
    pub unify_wscale: u8,
}

impl Default for FairqConfig {
    fn default() -> Self {
        FairqConfig {
            switches: Vec::new(),
            target_fraction: 0.25,
            buffer_bytes: None,
            interval_us: 1000.0,
            update_ticks: 8,
            sample_interval_us: 48.0,
            avg_samples: 32,
            gain: 1.0,
            mss_bytes: 1460,
            min_window_bytes: 1460,
            max_window_bytes: 65535,
            slow_start: true,
            idle_reset_s: 1.0,
            wscale: WscaleMode::ReservedBits,
            unify_wscale: 0,
        }
    }
}

impl FairqConfig {
    /// Checks every parameter; the error key is relative to the `fairq` table.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = self.target_fraction;
        if !(t > 0.0 && t <= 1.0) {
            return Err(ConfigError::new("target_fraction", format!("must be in (0, 1], got {t}")));
        }
        if self.buffer_bytes == Some(0) {
            return Err(ConfigError::new("buffer_bytes", "must be at least 1 byte"));
        }
        for (key, v) in [("interval_us", self.interval_us), ("sample_interval_us", self.sample_interval_us)] {
            if !(v.is_finite() && v > 0.0 && v <= 1e12) {
                return Err(ConfigError::new(key, format!("must be a positive number of microseconds, got {v}")));
            }
        }
        if self.update_ticks == 0 {
            return Err(ConfigError::new("update_ticks", "must be at least 1 tick"));
        }
        if self.avg_samples == 0 {
            return Err(ConfigError::new("avg_samples", "must be at least 1 sample"));
        }
        if !(self.gain.is_finite() && self.gain > 0.0) {
            return Err(ConfigError::new("gain", format!("must be a positive number, got {}", self.gain)));
        }
        if self.mss_bytes == 0 {
            return Err(ConfigError::new("mss_bytes", "must be at least 1 byte"));
        }
        if self.min_window_bytes == 0 {
            return Err(ConfigError::new("min_window_bytes", "must be at least 1 byte"));
        }
        if self.max_window_bytes < self.min_window_bytes {
            return Err(ConfigError::new(
                "max_window_bytes",
                format!("must be at least min_window_bytes ({}), got {}", self.min_window_bytes, self.max_window_bytes),
            ));
        }
        if !(self.idle_reset_s.is_finite() && self.idle_reset_s > 0.0 && self.idle_reset_s <= 1e6) {
            return Err(ConfigError::new("idle_reset_s", format!("must be a positive number of seconds, got {}", self.idle_reset_s)));
        }
        if self.unify_wscale > MAX_WSCALE {
            return Err(ConfigError::new("unify_wscale", format!("must be 0 to {MAX_WSCALE} (RFC 7323), got {}", self.unify_wscale)));
        }
        Ok(())
    }
    /// `T` as a duration.
    pub fn interval(&self) -> SimDuration {
        SimDuration::from_secs_f64(self.interval_us / 1e6)
    }
    /// The queue sampling period as a duration.
    pub fn sample_interval(&self) -> SimDuration {
        SimDuration::from_secs_f64(self.sample_interval_us / 1e6)
    }
}

/// The FairQ state of one output port: flow count, queue average, window controller.
#[derive(Clone, Debug)]
pub struct FairqPort {
    /// The port leads to a host: an ACK leaving through it has its reserved bits cleared.
    pub to_host: bool,
    // parameters (copied, so a port is self-contained)
    target: f64,
    mss: f64,
    gain: f64,
    update_ticks: u32,
    min_w: u64,
    max_w: u64,
    slow_start_on: bool,
    idle_reset: SimDuration,
    // state
    flows: u32,
    /// Port window `W`, bytes.
    window: f64,
    incr: f64,
    ticks: u32,
    slow_start: bool,
    per_flow: u64,
    last_data: SimTime,
    samples: Vec<u64>,
    pos: usize,
    filled: usize,
    sum: u64,
}

impl FairqPort {
    /// A port whose buffer holds `buffer_bytes`. `cfg` must be valid.
    pub fn new(cfg: &FairqConfig, buffer_bytes: u64) -> FairqPort {
        debug_assert!(cfg.validate().is_ok());
        let target = cfg.target_fraction * buffer_bytes as f64;
        FairqPort {
            to_host: false,
            target,
            mss: cfg.mss_bytes as f64,
            gain: cfg.gain,
            update_ticks: cfg.update_ticks,
            min_w: cfg.min_window_bytes,
            max_w: cfg.max_window_bytes,
            slow_start_on: cfg.slow_start,
            idle_reset: SimDuration::from_secs_f64(cfg.idle_reset_s),
            flows: 0,
            window: target,
            incr: 0.0,
            ticks: 0,
            slow_start: cfg.slow_start,
            per_flow: 0,
            last_data: SimTime::ZERO,
            samples: vec![0; cfg.avg_samples as usize],
            pos: 0,
            filled: 0,
            sum: 0,
        }
    }

    /// Active flows counted at this port.
    pub fn flows(&self) -> u32 {
        self.flows
    }
    /// The port window `W`, bytes.
    pub fn port_window(&self) -> f64 {
        self.window
    }
    /// The per-flow window written into ACKs, or `None` while no flow is counted.
    pub fn window(&self) -> Option<u64> {
        (self.flows > 0).then_some(self.per_flow)
    }
    /// Still in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }
    /// Target queue, bytes.
    pub fn target_bytes(&self) -> f64 {
        self.target
    }
    /// Average of the last samples (bytes; 0 before the first).
    pub fn avg_queue(&self) -> f64 {
        if self.filled == 0 {
            0.0
        } else {
            self.sum as f64 / self.filled as f64
        }
    }

    /// Records one sample of the port's queue (bytes).
    pub fn sample(&mut self, queue_bytes: u64) {
        let n = self.samples.len();
        if self.filled == n {
            self.sum -= self.samples[self.pos];
        } else {
            self.filled += 1;
        }
        self.samples[self.pos] = queue_bytes;
        self.sum += queue_bytes;
        self.pos = (self.pos + 1) % n;
    }

    /// A data segment left through this port at `now`.
    #[inline]
    pub fn note_data(&mut self, now: SimTime) {
        self.last_data = now;
    }

    /// A connection opened (a SYN-ACK crossed this port).
    pub fn open(&mut self, now: SimTime) {
        if self.flows == 0 {
            self.restart(now);
        }
        self.flows += 1;
        self.divide();
    }

    /// A connection closed (a FIN or an RST crossed this port).
    pub fn close(&mut self) {
        self.flows = self.flows.saturating_sub(1);
        self.divide();
    }

    /// The controller's timer `T`.
    pub fn tick(&mut self, now: SimTime) {
        if self.flows == 0 {
            return;
        }
        if now.saturating_since(self.last_data) >= self.idle_reset {
            self.flows = 0;
            return;
        }
        let avg = self.avg_queue();
        if self.slow_start && avg >= self.target {
            self.slow_start = false;
        }
        if !self.slow_start {
            self.incr += self.gain * self.mss * (self.target - avg) / self.target;
        }
        self.ticks += 1;
        if self.ticks >= self.update_ticks {
            self.ticks = 0;
            self.window += if self.slow_start { 2.0 * self.mss } else { self.incr };
            self.incr = 0.0;
            let n = self.flows as f64;
            self.window = self.window.clamp(n * self.min_w as f64, n * self.max_w as f64);
            self.divide();
        }
    }

    /// The first flow after an idle period: start over from the target.
    fn restart(&mut self, now: SimTime) {
        self.window = self.target;
        self.incr = 0.0;
        self.ticks = 0;
        self.slow_start = self.slow_start_on;
        self.last_data = now;
    }

    fn divide(&mut self) {
        if self.flows > 0 {
            let w = (self.window / self.flows as f64).floor() as u64;
            self.per_flow = w.clamp(self.min_w, self.max_w);
        }
    }
}

/// Index of "no FairQ port" in [`Fairq::on_packet`].
pub const NO_PORT: u32 = u32::MAX;

/// The FairQ ports of a network (one [`FairqPort`] each) and the per-packet rules.
#[derive(Clone, Debug)]
pub struct Fairq {
    pub ports: Vec<FairqPort>,
    pub mode: WscaleMode,
    pub unify_wscale: u8,
    /// ACK windows rewritten (a counter for reports and tests).
    pub rewrites: u64,
}

impl Fairq {
    pub fn new(cfg: &FairqConfig) -> Fairq {
        Fairq { ports: Vec::new(), mode: cfg.wscale, unify_wscale: cfg.unify_wscale, rewrites: 0 }
    }

    /// A packet crosses a switch, entering through FairQ port `input` and leaving through FairQ
    /// port `output` (either may be [`NO_PORT`]). Counts flows, notes data, rewrites the
    /// window-scale option (modes `unify`, `off`) and the window of ACKs entering through a
    /// FairQ port. Returns `true` if the window field was rewritten.
    pub fn on_packet(&mut self, now: SimTime, input: u32, output: u32, pkt: &mut Packet) -> bool {
        if pkt.proto != Proto::Tcp {
            return false;
        }
        let syn = pkt.has(flags::SYN);
        if syn {
            if pkt.has(flags::ACK) {
                self.each(input, output, |p| p.open(now));
            }
            if pkt.wscale != NO_WSCALE {
                match self.mode {
                    WscaleMode::Unify => pkt.wscale = self.unify_wscale,
                    WscaleMode::Off => pkt.wscale = NO_WSCALE,
                    WscaleMode::ReservedBits => {}
                }
            }
        }
        if pkt.has(flags::FIN | flags::RST) {
            self.each(input, output, |p| p.close());
        }
        if pkt.payload > 0 && output != NO_PORT {
            self.ports[output as usize].note_data(now);
        }
        // Read the helper's bits; clear them only where the ACK leaves the network, so that
        // the FairQ switches further along its path can rescale too.
        let tagged = pkt.reserved_wscale;
        if tagged != NO_WSCALE && output != NO_PORT && self.ports[output as usize].to_host {
            pkt.reserved_wscale = NO_WSCALE;
        }
        if !pkt.has(flags::ACK) || input == NO_PORT {
            return false;
        }
        // RFC 7323 2.2: the window field of a SYN-ACK is never scaled
        let shift = if syn { 0 } else { match self.mode {
            WscaleMode::ReservedBits => {
                if tagged == NO_WSCALE {
                    return false;
                }
                tagged.min(MAX_WSCALE)
            }
            WscaleMode::Unify => self.unify_wscale,
            WscaleMode::Off => 0,
        } };
        let Some(w) = self.ports[input as usize].window() else { return false };
        if rewrite_window(pkt, w, shift) {
            self.rewrites += 1;
            true
        } else {
            false
        }
    }

    fn each(&mut self, a: u32, b: u32, mut f: impl FnMut(&mut FairqPort)) {
        if a != NO_PORT {
            f(&mut self.ports[a as usize]);
        }
        if b != NO_PORT && b != a {
            f(&mut self.ports[b as usize]);
        }
    }
}

/// Lowers the window of `pkt` (field scaled by `shift`) to `w` bytes if it advertises more.
/// The new field is `w >> shift`, at least 1 (never 0: a zero window would stall the sender,
/// and 1 is still below the old field), at most 65535. Returns `true` if the field changed.
#[inline]
pub fn rewrite_window(pkt: &mut Packet, w: u64, shift: u8) -> bool {
    if decode_window(pkt.rwnd, shift) <= w {
        return false;
    }
    let field = (w >> shift).clamp(1, MAX_WINDOW_FIELD) as u16;
    if field >= pkt.rwnd {
        return false;
    }
    pkt.rwnd = field;
    true
}

/// The end-host helper of FairQ's `reserved_bits` mode: writes the scale factor of the
/// receiver that sends `pkt` into the 4 reserved header bits.
#[inline]
pub fn tag_reserved_bits(pkt: &mut Packet, shift: u8) {
    if pkt.proto == Proto::Tcp && pkt.has(flags::ACK) && !pkt.has(flags::SYN) {
        pkt.reserved_wscale = shift.min(MAX_WSCALE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::encode_window;

    const MSS: u64 = 1460;
    const BUF: u64 = 100 * 1500;

    fn us(n: u64) -> SimTime {
        SimTime(n * 1_000_000)
    }

    /// A fluid model of `n` window-limited flows sharing a port of `rate_bps` with base RTT
    /// `rtt_us`: the queue is what the windows put in flight beyond the pipe.
    fn fluid_queue(w_per_flow: u64, n: u32, bdp: u64) -> u64 {
        (w_per_flow * n as u64).saturating_sub(bdp).min(BUF)
    }

    /// Drives a port for `ticks` controller ticks with `n` flows and the fluid queue;
    /// samples once per tick. Returns the queue of the last tick.
    fn drive(p: &mut FairqPort, n: u32, bdp: u64, t0: &mut u64, ticks: u32) -> u64 {
        let mut q = 0;
        for _ in 0..ticks {
            *t0 += 1000;
            p.note_data(us(*t0));
            q = fluid_queue(p.window().unwrap(), n, bdp);
            p.sample(q);
            p.tick(us(*t0));
        }
        q
    }

    fn cfg() -> FairqConfig {
        FairqConfig { avg_samples: 4, ..FairqConfig::default() }
    }

    // ----- configuration ---------------------------------------------------------------------

    #[test]
    fn validate_names_the_key() {
        assert_eq!(FairqConfig::default().validate(), Ok(()));
        let d = FairqConfig::default;
        let bad = |c: FairqConfig| c.validate().unwrap_err().key;
        assert_eq!(bad(FairqConfig { target_fraction: 0.0, ..d() }), "target_fraction");
        assert_eq!(bad(FairqConfig { target_fraction: 1.01, ..d() }), "target_fraction");
        assert_eq!(bad(FairqConfig { target_fraction: f64::NAN, ..d() }), "target_fraction");
        assert_eq!(bad(FairqConfig { update_ticks: 0, ..d() }), "update_ticks");
        assert_eq!(bad(FairqConfig { interval_us: 0.0, ..d() }), "interval_us");
        assert_eq!(bad(FairqConfig { sample_interval_us: -1.0, ..d() }), "sample_interval_us");
        assert_eq!(bad(FairqConfig { avg_samples: 0, ..d() }), "avg_samples");
        assert_eq!(bad(FairqConfig { min_window_bytes: 0, ..d() }), "min_window_bytes");
        assert_eq!(bad(FairqConfig { max_window_bytes: 100, ..d() }), "max_window_bytes");
        assert_eq!(bad(FairqConfig { idle_reset_s: 0.0, ..d() }), "idle_reset_s");
        assert_eq!(bad(FairqConfig { unify_wscale: 15, ..d() }), "unify_wscale");
        assert_eq!(bad(FairqConfig { buffer_bytes: Some(0), ..d() }), "buffer_bytes");
        assert_eq!(FairqConfig { target_fraction: 1.0, update_ticks: 1, ..d() }.validate(), Ok(()));
    }

    // ----- window controller -----------------------------------------------------------------

    #[test]
    fn converges_to_the_target_for_a_fixed_flow_count() {
        // 10 flows, a pipe of 40 KB: the windows must settle where the queue is the target
        // (37.5 KB), i.e. the port window near pipe + target = 77.5 KB.
        let c = FairqConfig { max_window_bytes: 1 << 20, ..cfg() };
        let mut p = FairqPort::new(&c, BUF);
        let mut t = 0;
        for _ in 0..10 {
            p.open(us(t));
        }
        let bdp = 40_000;
        drive(&mut p, 10, bdp, &mut t, 4000);
        assert!(!p.in_slow_start());
        let mut qs = Vec::new();
        for _ in 0..400 {
            qs.push(drive(&mut p, 10, bdp, &mut t, 1) as f64);
        }
        let mean = qs.iter().sum::<f64>() / qs.len() as f64;
        let target = p.target_bytes();
        assert!((mean - target).abs() < 0.1 * target, "mean queue {mean} vs target {target}");
        assert!(qs.iter().all(|&q| (q - target).abs() < 0.25 * target), "queue strays from target");
    }

    #[test]
    fn slow_start_adds_two_mss_per_update_until_the_target() {
        let mut p = FairqPort::new(&cfg(), BUF);
        p.open(us(0));
        let w0 = p.port_window();
        assert_eq!(w0, 0.25 * BUF as f64);
        // an empty queue: +2 MSS every M = 8 ticks
        for k in 1..=3u64 {
            for i in 0..8 {
                p.note_data(us(k * 100 + i));
                p.sample(0);
                p.tick(us(k * 100 + i));
            }
            assert_eq!(p.port_window(), w0 + (2 * MSS * k) as f64);
        }
        assert!(p.in_slow_start());
        // the average reaches the target: slow start ends and does not come back
        for _ in 0..4 {
            p.sample(BUF);
        }
        p.tick(us(400));
        assert!(!p.in_slow_start());
        for _ in 0..4 {
            p.sample(0);
        }
        p.tick(us(401));
        assert!(!p.in_slow_start());
    }

    #[test]
    fn decrease_is_proportional_to_the_excess() {
        let c = FairqConfig { slow_start: false, max_window_bytes: 1 << 20, ..cfg() };
        let mut p = FairqPort::new(&c, BUF);
        p.open(us(0));
        let w0 = p.port_window();
        for i in 0..8 {
            p.note_data(us(i));
            p.sample(2 * BUF / 4); // twice the target: -1 MSS per tick
            p.tick(us(i));
        }
        assert!((p.port_window() - (w0 - 8.0 * MSS as f64)).abs() < 1e-6, "{}", p.port_window());
    }

    #[test]
    fn divides_fairly_when_flows_arrive_and_leave() {
        let mut p = FairqPort::new(&FairqConfig { max_window_bytes: 1 << 20, ..cfg() }, BUF);
        p.open(us(0));
        let w = p.port_window();
        assert_eq!(p.window(), Some(w as u64));
        for n in 2..=5u32 {
            p.open(us(0));
            assert_eq!(p.window(), Some((w / n as f64) as u64), "{n} flows");
        }
        p.close();
        p.close();
        assert_eq!(p.window(), Some((w / 3.0) as u64));
        p.close();
        p.close();
        p.close();
        assert_eq!(p.window(), None);
        p.close(); // a stray FIN never goes below zero
        assert_eq!(p.flows(), 0);
        // many flows: the floor of one segment each
        for _ in 0..200 {
            p.open(us(0));
        }
        assert_eq!(p.window(), Some(MSS));
    }

    #[test]
    fn window_is_clamped_per_flow() {
        let c = FairqConfig { slow_start: false, ..cfg() };
        let mut p = FairqPort::new(&c, BUF);
        p.open(us(0));
        p.open(us(0));
        // empty queue for long: the port window stops at 2 x 65535
        drive_empty(&mut p, 10_000);
        assert_eq!(p.port_window(), 2.0 * 65535.0);
        assert_eq!(p.window(), Some(65535));
    }

    fn drive_empty(p: &mut FairqPort, ticks: u64) {
        for i in 0..ticks {
            p.note_data(us(i));
            p.sample(0);
            p.tick(us(i));
        }
    }

    // ----- flow counting ---------------------------------------------------------------------

    fn seg(fl: u8) -> Packet {
        Packet { flags: fl, proto: Proto::Tcp, rwnd: 65535, ..Default::default() }
    }

    #[test]
    fn counts_flows_by_syn_ack_fin_rst_on_both_ports() {
        let mut f = Fairq::new(&cfg());
        f.ports = vec![FairqPort::new(&cfg(), BUF), FairqPort::new(&cfg(), BUF)];
        // a SYN does not count; a SYN-ACK entering through port 0 and leaving through 1 counts on both
        f.on_packet(us(0), 1, 0, &mut seg(flags::SYN));
        assert_eq!((f.ports[0].flows(), f.ports[1].flows()), (0, 0));
        for _ in 0..3 {
            f.on_packet(us(0), 0, 1, &mut seg(flags::SYN | flags::ACK));
        }
        assert_eq!((f.ports[0].flows(), f.ports[1].flows()), (3, 3));
        f.on_packet(us(1), 1, 0, &mut seg(flags::FIN | flags::ACK));
        f.on_packet(us(1), 0, 1, &mut seg(flags::RST));
        assert_eq!((f.ports[0].flows(), f.ports[1].flows()), (1, 1));
        // a port that is not FairQ is skipped
        f.on_packet(us(1), NO_PORT, 1, &mut seg(flags::SYN | flags::ACK));
        assert_eq!((f.ports[0].flows(), f.ports[1].flows()), (1, 2));
        // UDP is ignored
        let mut u = seg(flags::SYN | flags::ACK);
        u.proto = Proto::Udp;
        f.on_packet(us(1), 0, 1, &mut u);
        assert_eq!(f.ports[0].flows(), 1);
    }

    #[test]
    fn idle_port_forgets_its_flows_and_restarts() {
        let c = FairqConfig { idle_reset_s: 0.01, ..cfg() };
        let mut f = Fairq::new(&c);
        f.ports = vec![FairqPort::new(&c, BUF)];
        f.on_packet(us(0), 0, NO_PORT, &mut seg(flags::SYN | flags::ACK));
        f.on_packet(us(0), 0, NO_PORT, &mut seg(flags::SYN | flags::ACK));
        // data keeps it alive
        let mut data = seg(flags::ACK);
        data.payload = 1000;
        for t in (1000..20_000).step_by(1000) {
            f.on_packet(us(t), NO_PORT, 0, &mut data);
            f.ports[0].tick(us(t));
        }
        assert_eq!(f.ports[0].flows(), 2);
        // 10 ms without data: reset at the next tick
        f.ports[0].tick(us(28_000));
        assert_eq!(f.ports[0].flows(), 2);
        f.ports[0].tick(us(29_000));
        assert_eq!(f.ports[0].flows(), 0);
        assert_eq!(f.ports[0].window(), None);
        // the next flow starts over from the target in slow start
        f.on_packet(us(30_000), 0, NO_PORT, &mut seg(flags::SYN | flags::ACK));
        assert_eq!(f.ports[0].port_window(), f.ports[0].target_bytes());
        assert!(f.ports[0].in_slow_start());
    }

    // ----- rewriting and window scaling ------------------------------------------------------

    fn fairq_with_window(mode: WscaleMode, u: u8, flows: u32) -> Fairq {
        let c = FairqConfig { wscale: mode, unify_wscale: u, max_window_bytes: 1 << 24, ..cfg() };
        let mut f = Fairq::new(&c);
        f.ports = vec![FairqPort::new(&c, BUF)];
        for _ in 0..flows {
            f.ports[0].open(us(0));
        }
        f
    }

    #[test]
    fn never_raises_a_window() {
        // the port window is 37500 bytes; a receiver advertising less keeps its own
        for mode in [WscaleMode::Off, WscaleMode::Unify, WscaleMode::ReservedBits] {
            let mut f = fairq_with_window(mode, 0, 1);
            let w = f.ports[0].window().unwrap();
            for adv in [0u16, 1, 1460, (w - 1) as u16, w as u16] {
                let mut a = seg(flags::ACK);
                a.rwnd = adv;
                a.reserved_wscale = 0;
                assert!(!f.on_packet(us(0), 0, NO_PORT, &mut a), "{mode:?} {adv}");
                assert_eq!(a.rwnd, adv);
            }
            let mut a = seg(flags::ACK);
            a.rwnd = (w + 1) as u16;
            a.reserved_wscale = 0;
            assert!(f.on_packet(us(0), 0, NO_PORT, &mut a));
            assert_eq!(a.rwnd as u64, w);
        }
    }

    #[test]
    fn acks_entering_elsewhere_or_without_flows_are_untouched() {
        let mut f = fairq_with_window(WscaleMode::Off, 0, 0);
        let mut a = seg(flags::ACK);
        assert!(!f.on_packet(us(0), 0, NO_PORT, &mut a)); // no flows counted
        f.ports[0].open(us(0));
        assert!(!f.on_packet(us(0), NO_PORT, 0, &mut a)); // leaving through the port, not entering
        assert_eq!(a.rwnd, 65535);
        assert!(f.on_packet(us(0), 0, NO_PORT, &mut a));
    }

    #[test]
    fn a_syn_ack_carries_the_fair_window_unscaled() {
        // its field is never scaled: compared and written as bytes, whatever the mode's shift
        for (mode, u) in [(WscaleMode::Off, 0), (WscaleMode::Unify, 7), (WscaleMode::ReservedBits, 0)] {
            let mut f = fairq_with_window(mode, u, 0);
            let mut sa = seg(flags::SYN | flags::ACK);
            sa.reserved_wscale = 5; // ignored on a SYN-ACK
            assert!(f.on_packet(us(0), 0, NO_PORT, &mut sa), "{mode:?}");
            assert_eq!((f.ports[0].flows(), sa.rwnd as u64), (1, f.ports[0].window().unwrap()), "{mode:?}");
            // a SYN-ACK leaving through the port, not entering, keeps its window
            let mut out = seg(flags::SYN | flags::ACK);
            f.on_packet(us(0), NO_PORT, 0, &mut out);
            assert_eq!(out.rwnd, 65535);
        }
    }

    #[test]
    fn reserved_bits_mode_rescales_exactly() {
        for flows in [1u32, 3, 7, 50] {
            for s in 0..=MAX_WSCALE {
                let mut f = fairq_with_window(WscaleMode::ReservedBits, 0, flows);
                let w = f.ports[0].window().unwrap();
                let rcv_buf = 64u64 << 20;
                let mut a = seg(flags::ACK);
                a.rwnd = encode_window(rcv_buf, s);
                tag_reserved_bits(&mut a, s);
                assert_eq!(a.reserved_wscale, s);
                let before = decode_window(a.rwnd, s);
                let changed = f.on_packet(us(0), 0, NO_PORT, &mut a);
                assert_eq!(a.reserved_wscale, s, "bits kept for the next switch");
                let seen = decode_window(a.rwnd, s);
                assert!(seen <= before, "never above the receiver's");
                if before > w {
                    assert!(changed);
                    // exact up to the granularity of the scaled field
                    let expect = ((w >> s).max(1)) << s;
                    assert_eq!(seen, expect.min(before), "flows {flows} shift {s}");
                    assert!(seen <= w.max(1 << s));
                }
            }
        }
        // an ACK without the bits: its scale is unknown, it is left alone
        let mut f = fairq_with_window(WscaleMode::ReservedBits, 0, 1);
        let mut a = seg(flags::ACK);
        assert!(!f.on_packet(us(0), 0, NO_PORT, &mut a));
        assert_eq!(a.rwnd, 65535);
    }

    #[test]
    fn reserved_bits_serve_every_fairq_switch_on_the_path_and_are_cleared_at_the_host() {
        // An ACK crosses switch A (enters through A's port 0, leaves through port 1 towards
        // switch B), then switch B (enters through B's port 0, leaves through port 1 to the
        // sender's host). Each switch lowers the window to its own share, exactly, at every
        // scale factor: the tighter of the two wins, whichever switch it is at.
        for s in 0..=MAX_WSCALE {
            for (wa, wb) in [(30_000u64, 90_000u64), (90_000, 30_000), (50_000, 50_000)] {
                let c = FairqConfig { wscale: WscaleMode::ReservedBits, max_window_bytes: 1 << 24, min_window_bytes: 1, ..cfg() };
                let port = |w: u64| {
                    let mut p = FairqPort::new(&FairqConfig { target_fraction: 1.0, ..c.clone() }, w);
                    p.open(us(0));
                    p
                };
                let mut a = Fairq::new(&c);
                a.ports = vec![port(wa), port(1 << 20)];
                let mut b = Fairq::new(&c);
                b.ports = vec![port(wb), port(1 << 20)];
                b.ports[1].to_host = true;
                assert_eq!((a.ports[0].window(), b.ports[0].window()), (Some(wa), Some(wb)));
                let mut ack = seg(flags::ACK);
                ack.rwnd = encode_window(64 << 20, s);
                tag_reserved_bits(&mut ack, s);
                a.on_packet(us(0), 0, 1, &mut ack);
                assert_eq!(ack.reserved_wscale, s, "kept: A does not lead to a host");
                b.on_packet(us(0), 0, 1, &mut ack);
                assert_eq!(ack.reserved_wscale, NO_WSCALE, "cleared where the ACK leaves for its host");
                let w = wa.min(wb);
                assert_eq!(decode_window(ack.rwnd, s), ((w >> s).max(1)) << s, "shift {s}, A {wa}, B {wb}");
            }
        }
        // Cleared on the way to a host even when the ACK did not enter through a FairQ port.
        let c = FairqConfig { wscale: WscaleMode::ReservedBits, ..cfg() };
        let mut f = Fairq::new(&c);
        f.ports = vec![FairqPort::new(&c, BUF)];
        f.ports[0].to_host = true;
        let mut ack = seg(flags::ACK);
        tag_reserved_bits(&mut ack, 3);
        assert!(!f.on_packet(us(0), NO_PORT, 0, &mut ack));
        assert_eq!((ack.reserved_wscale, ack.rwnd), (NO_WSCALE, 65535));
    }

    #[test]
    fn unify_mode_rewrites_the_option_and_the_sender_decodes_exactly() {
        for u in [0u8, 3, 7, 14] {
            let mut f = fairq_with_window(WscaleMode::Unify, u, 2);
            let mut syn = seg(flags::SYN);
            syn.wscale = 9;
            f.on_packet(us(0), NO_PORT, 0, &mut syn);
            assert_eq!(syn.wscale, u);
            let mut sa = seg(flags::SYN | flags::ACK);
            sa.wscale = 5;
            f.on_packet(us(0), 0, NO_PORT, &mut sa);
            assert_eq!(sa.wscale, u);
            // a SYN without the option stays without (scaling needs both sides)
            let mut bare = seg(flags::SYN);
            f.on_packet(us(0), NO_PORT, 0, &mut bare);
            assert_eq!(bare.wscale, NO_WSCALE);
            let w = f.ports[0].window().unwrap();
            let mut a = seg(flags::ACK);
            a.rwnd = 65535;
            f.on_packet(us(0), 0, NO_PORT, &mut a);
            let seen = decode_window(a.rwnd, u);
            assert_eq!(seen, ((w >> u).max(1) << u).min(65535 << u), "shift {u}");
        }
    }

    #[test]
    fn off_mode_strips_the_option_and_writes_bytes() {
        let mut f = fairq_with_window(WscaleMode::Off, 0, 4);
        let mut syn = seg(flags::SYN);
        syn.wscale = 7;
        f.on_packet(us(0), NO_PORT, 0, &mut syn);
        assert_eq!(syn.wscale, NO_WSCALE);
        let mut sa = seg(flags::SYN | flags::ACK);
        sa.wscale = 7;
        f.on_packet(us(0), 0, NO_PORT, &mut sa);
        assert_eq!(sa.wscale, NO_WSCALE);
        let w = f.ports[0].window().unwrap();
        let mut a = seg(flags::ACK);
        f.on_packet(us(0), 0, NO_PORT, &mut a);
        assert_eq!(a.rwnd as u64, w);
        // a window above 65535 saturates the unscaled field
        let mut big = fairq_with_window(WscaleMode::Off, 0, 1);
        big.ports[0] = FairqPort::new(&FairqConfig { target_fraction: 1.0, max_window_bytes: 1 << 24, ..cfg() }, 1 << 20);
        big.ports[0].open(us(0));
        let mut a = seg(flags::ACK);
        assert!(!big.on_packet(us(0), 0, NO_PORT, &mut a));
        assert_eq!(a.rwnd, 65535);
    }

    // ----- through real TCP endpoints --------------------------------------------------------

    /// A sender and a receiver (window 1 MB: scale factor 5) across one FairQ port whose
    /// per-flow window is 37,500 bytes: what window does the sender end up honouring?
    fn through_tcp(mode: WscaleMode, u: u8) -> (u64, u8, u64) {
        use crate::tcp::testnet::Net;
        use crate::tcp::TcpConfig;
        use std::cell::RefCell;
        use std::rc::Rc;
        let c = FairqConfig { wscale: mode, unify_wscale: u, ..cfg() };
        let mut f = Fairq::new(&c);
        f.ports = vec![FairqPort::new(&c, BUF)];
        let f = Rc::new(RefCell::new(f));
        let tcp = TcpConfig { rcv_buf_bytes: 1 << 20, ..Default::default() };
        let mut net = Net::new(&tcp, None, SimDuration::from_us(10)); // a long flow: no FIN
        let (fa, fb) = (f.clone(), f.clone());
        // data leaves the switch through FairQ port 0; ACKs enter through it
        net.rewrite_fwd = Some(Box::new(move |p, now| {
            fa.borrow_mut().on_packet(now, NO_PORT, 0, p);
        }));
        net.rewrite_ack = Some(Box::new(move |p, now| {
            tag_reserved_bits(p, 5); // the end-host helper at the receiver
            fb.borrow_mut().on_packet(now, 0, NO_PORT, p);
        }));
        net.start();
        net.run(SimTime::from_secs_f64(0.01), 1_000_000);
        assert_eq!(f.borrow().ports[0].flows(), 1, "the SYN-ACK was counted");
        assert_eq!(f.borrow().ports[0].window(), Some(37_500));
        assert!(net.rcv.delivered_bytes() > 300 * MSS);
        (net.snd.peer_rwnd(), net.snd.peer_wscale(), net.max_flight)
    }

    #[test]
    fn the_three_scaling_modes_are_exact_through_tcp() {
        // reserved bits: the receiver's own factor 5; 37500 >> 5 << 5 = 37472
        assert_eq!(through_tcp(WscaleMode::ReservedBits, 0), (37_472, 5, 25 * MSS));
        // unify to the hosts' factor: the same
        assert_eq!(through_tcp(WscaleMode::Unify, 5), (37_472, 5, 25 * MSS));
        // off: nobody scales, the window is exact to the byte
        assert_eq!(through_tcp(WscaleMode::Off, 0), (37_500, 0, 25 * MSS));
    }
}
