//! The switch without its sockets: forwarding, output ports (discipline, serializer, delay line),
//! FairQ, counters and the stats file. Driven by `main.rs` (real sockets, monotonic clock) and by
//! the unit tests (frames and times made up), so every rule here is tested without root.
//!
//! Rules:
//! - **Frames** live in one slab of fixed 2048-byte slots ([`Slab`]), addressed by `u32`; a
//!   core [`Packet`] refers to its frame by `Packet::tag`. A frame is received straight into a
//!   free slot, is never copied on the forwarding path (ARP floods copy one per extra port) and
//!   is sent from its slot unchanged except for FairQ's header edits. The slab grows on demand
//!   and never shrinks: after warm-up the packet path allocates nothing.
//! - **Forwarding**: IPv4 to the port of the longest matching destination prefix (a frame whose
//!   route is its own input port is dropped as `hairpin`; one without a route as `no_route`);
//!   ARP to every other port; anything the parser refuses is counted under its reason and
//!   dropped. Layer 2 is never touched: hosts hold static ARP entries with each other's real MACs.
//! - **Output port**: a `dcfair-core` [`Queue`] (the simulator's disciplines and accounting),
//!   then a serializer at `rate_bps` that starts a packet when the link is free, with a token
//!   bucket of depth `burst_us` so that a late wake-up of the event loop does not lose capacity:
//!   a packet starts at `max(busy_until, now - burst)` and ends `size * 8 / rate` later. The
//!   packet is dequeued when it *starts*, as in the simulator, and handed to a FIFO delay line
//!   that releases its frame at `end + delay_us`. The serializer counts IPv4 total length (the
//!   simulator's packet size), not Ethernet framing.
//! - **Input line** (a port with `input_rate_bps`): no link delivers faster than its rate, so a
//!   frame received sooner than its own transmission time (IPv4 bytes at that rate) after the
//!   previous frame of the same port has *arrived* only then, or `input_max_wait_us` after it
//!   was received, whichever is sooner: it is routed at once but waits in the port's input line
//!   until that time before it meets its output queue. Frames that arrive together because the
//!   sending switch woke late (its token bucket lets it catch up back to back) thus reach the
//!   queue spaced as on the wire. The bound keeps the line from becoming a hidden queue: while
//!   the link stays busy, a lag once taken is never made up, so without it each late wake-up of
//!   the sender would add to every later frame's wait. [`Switch::service`] offers held frames
//!   in time order, each after every port was served up to its time; ties go to the lower input
//!   port. `input_wait` records how long each held frame waited.
//! - **FairQ** (optional): every port is a FairQ port; every forwarded TCP segment goes through
//!   `rewrite::fairq_frame` after routing and before its output queue (before its input line,
//!   if it waits in one), as in the simulator's switch. Queue samples every
//!   `sample_interval_us` and controller ticks every `interval_us`, driven by
//!   [`Switch::timers`].
//! - **Conservation** per output port: `queue.received = tx_frames + tx_errors + drops +
//!   queued + in_delay_line`, and per input port `rx_frames = forwarded + flooded + malformed +
//!   no_route + hairpin`; both are in the stats file and checked by the tests. Frames still in
//!   an input line (`in_input_line`) are counted `forwarded` but not yet `queue.received`.
//! - **Lateness**: every frame that had to wait for its release (`end + delay_us` later than
//!   the moment it was dequeued) records `now - release` in `tx_late` when it leaves, so the
//!   stats say how late the event loop served its timers (frames released at once, e.g. with no
//!   delay line and an idle link, are not timers and not counted).
//! - Time (`now`) is passed in by the caller; randomness comes from `Streams::new(seed)`, stream
//!   names as in the simulator (`PortContext::port_index` is the port's position in the file).

use crate::config::{Prefix, SwitchConfig};
use crate::latency::Histogram;
use crate::parse::{parse, to_packet, to_packet_l2, Frame, Malformed};
use crate::rewrite::fairq_frame;
use dcfair_core::fairq::{Fairq, FairqPort};
use dcfair_core::packet::{flags, Packet, Proto};
use dcfair_core::qdisc::{AnyQdisc, DropReason, PortContext, Qdisc, QdiscEvents, Queue};
use dcfair_core::rng::Streams;
use dcfair_core::time::{BitsPerSec, SimDuration, SimTime};
use serde_json::{json, Value};
use std::collections::VecDeque;

/// Bytes per frame slot: an MTU-1500 Ethernet frame with tags fits with room to spare.
pub const SLOT: usize = 2048;
/// The MTU the disciplines are told (IPv4 bytes).
pub const MTU: u32 = 1500;

/// Frame offsets of the IPv4 TTL and header checksum (untagged Ethernet).
const IP_TTL: usize = 14 + 8;
const IP_CSUM: usize = 14 + 10;

/// Decrements the IPv4 TTL (not below 0) and updates the header checksum (RFC 1624 eqn. 3).
pub fn decrement_ttl(f: &mut [u8]) {
    if f.len() < IP_CSUM + 2 || f[IP_TTL] == 0 {
        return;
    }
    let old = u16::from_be_bytes([f[IP_TTL], f[IP_TTL + 1]]);
    f[IP_TTL] -= 1;
    let new = u16::from_be_bytes([f[IP_TTL], f[IP_TTL + 1]]);
    let hc = u16::from_be_bytes([f[IP_CSUM], f[IP_CSUM + 1]]);
    f[IP_CSUM..IP_CSUM + 2].copy_from_slice(&crate::csum::update16(hc, old, new).to_be_bytes());
}

/// Fixed-size frame buffers addressed by `u32`.
#[derive(Debug, Default)]
pub struct Slab {
    buf: Vec<u8>,
    len: Vec<u16>,
    free: Vec<u32>,
}

impl Slab {
    /// A free slot (the slab grows by one slot when none is free).
    pub fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        let i = self.len.len() as u32;
        self.buf.resize(self.buf.len() + SLOT, 0);
        self.len.push(0);
        i
    }
    pub fn release(&mut self, i: u32) {
        debug_assert!(!self.free.contains(&i), "slot {i} released twice");
        self.free.push(i);
    }
    /// The whole slot, to receive into.
    pub fn slot_mut(&mut self, i: u32) -> &mut [u8] {
        let o = i as usize * SLOT;
        &mut self.buf[o..o + SLOT]
    }
    pub fn set_len(&mut self, i: u32, n: usize) {
        self.len[i as usize] = n.min(SLOT) as u16;
    }
    /// The frame in slot `i`.
    pub fn frame(&self, i: u32) -> &[u8] {
        let o = i as usize * SLOT;
        &self.buf[o..o + self.len[i as usize] as usize]
    }
    pub fn frame_mut(&mut self, i: u32) -> &mut [u8] {
        let o = i as usize * SLOT;
        let n = self.len[i as usize] as usize;
        &mut self.buf[o..o + n]
    }
    /// Slots in use.
    pub fn in_use(&self) -> usize {
        self.len.len() - self.free.len()
    }
    /// Slots ever allocated.
    pub fn capacity(&self) -> usize {
        self.len.len()
    }
}

/// Counters of one port (as input and as output).
#[derive(Clone, Debug, Default)]
pub struct PortCounters {
    pub rx_frames: u64,
    pub rx_bytes: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub tx_errors: u64,
    /// IPv4 frames received here and routed to another port.
    pub forwarded: u64,
    /// ARP frames received here and flooded.
    pub flooded: u64,
    pub no_route: u64,
    pub hairpin: u64,
    /// IPv4 fragments received here (forwarded, not parsed further).
    pub fragments: u64,
    pub malformed: [u64; Malformed::COUNT],
    /// FairQ edits on ACKs / SYNs that *entered* through this port.
    pub fairq_window_rewrites: u64,
    pub fairq_wscale_rewrites: u64,
    pub fairq_reserved_cleared: u64,
    /// Frames received here that waited in the input line (they came too soon after the previous one).
    pub input_paced: u64,
}

/// Time series of one port, sampled every `series_interval_ms`.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub t_s: Vec<f64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub fairq_flows: Vec<u32>,
    /// Per-flow window FairQ writes (bytes; 0 while no flow is counted).
    pub fairq_window_bytes: Vec<u64>,
}

/// One output port.
#[derive(Debug)]
pub struct Port {
    pub iface: String,
    pub queue: Queue<AnyQdisc>,
    rate: BitsPerSec,
    burst: SimDuration,
    delay: SimDuration,
    busy_until: SimTime,
    /// (release time, frame slot, whether the release was in the future when queued: a timer)
    delay_line: VecDeque<(SimTime, u32, bool)>,
    /// `input_rate_bps`: the rate frames arrive at, at most.
    input_rate: Option<BitsPerSec>,
    /// `input_max_wait_us`: the longest a frame waits in the input line.
    input_max_wait: SimDuration,
    /// When the last frame received here has fully arrived (with `input_rate`).
    in_busy_until: SimTime,
    /// Frames received here, routed, waiting for their arrival time: (time, output port, packet).
    input_line: VecDeque<(SimTime, u16, Packet)>,
    pub c: PortCounters,
    pub series: Series,
    /// Queue length samples (every serializer call with a packet, and every series tick).
    len_samples: u64,
    len_sum_pkts: u64,
    len_sum_bytes: u64,
}

/// The switch.
#[derive(Debug)]
pub struct Switch {
    pub ports: Vec<Port>,
    routes: Vec<(Prefix, u16)>,
    pub slab: Slab,
    /// What the last call into a port's queue reported (one scratch for every port).
    qev: QdiscEvents<Packet>,
    pub fairq: Option<Fairq>,
    fq_sample_dt: SimDuration,
    fq_tick_dt: SimDuration,
    next_sample: SimTime,
    next_tick: SimTime,
    series_dt: SimDuration,
    next_series: SimTime,
    uid: u64,
    pub seed: u64,
    /// How late frames left the delay line: send time minus due time (`end + delay`), i.e. the
    /// event loop's wake-up lateness as the frames see it.
    pub tx_late: Histogram,
    /// How long frames waited in input lines (their arrival time minus when they were received).
    pub input_wait: Histogram,
    /// Whether any port has an input line (else [`Switch::service`] looks for none).
    input_lines: bool,
    /// Fabric mode: the simulator's routing replaces the prefixes, ARP is not flooded (hosts
    /// hold static neighbours, and a fabric has loops), and IPv4 TTL is decremented.
    pub fabric: Option<crate::fabric::Router>,
}

/// Where a dequeued frame goes: the port and the slot (the caller sends `slab.frame(slot)`).
pub type Send<'a> = &'a mut dyn FnMut(usize, &[u8]) -> bool;

impl Switch {
    /// Builds the switch from a validated configuration.
    pub fn new(cfg: &SwitchConfig, seed: u64) -> Switch {
        let streams = Streams::new(seed);
        let mut routes = Vec::new();
        let mut ports = Vec::new();
        for (i, p) in cfg.port.iter().enumerate() {
            for s in &p.prefixes {
                routes.push((Prefix::parse(s).expect("validated"), i as u16));
            }
            let rate = BitsPerSec(p.rate_bps.round() as u64);
            let ctx = PortContext { rate, mtu: MTU, port_index: i as u64, streams, host: false };
            ports.push(Port {
                iface: p.iface.clone(),
                queue: Queue::new(p.queue.build(&ctx)),
                rate,
                burst: SimDuration::from_secs_f64(p.burst_us / 1e6),
                delay: SimDuration::from_secs_f64(p.delay_us / 1e6),
                busy_until: SimTime::ZERO,
                delay_line: VecDeque::new(),
                input_rate: p.input_rate_bps.map(|r| BitsPerSec(r.round() as u64)),
                input_max_wait: SimDuration::from_secs_f64(p.input_max_wait_us / 1e6),
                in_busy_until: SimTime::ZERO,
                input_line: VecDeque::new(),
                c: PortCounters::default(),
                series: Series::default(),
                len_samples: 0,
                len_sum_pkts: 0,
                len_sum_bytes: 0,
            });
        }
        // longest prefix first: the first match is the longest
        routes.sort_by_key(|r| std::cmp::Reverse(r.0.len));
        let (mut fairq, mut fq_sample_dt, mut fq_tick_dt) = (None, SimDuration::ZERO, SimDuration::ZERO);
        if let Some(fc) = &cfg.fairq {
            let mut f = Fairq::new(fc);
            for p in &cfg.port {
                let buffer =
                    fc.buffer_bytes.or(p.queue.limit_bytes).unwrap_or_else(|| p.queue.limit_pkts.unwrap_or(100) as u64 * MTU as u64);
                f.ports.push(FairqPort::new(fc, buffer));
            }
            fairq = Some(f);
            fq_sample_dt = SimDuration(fc.sample_interval().0.max(1));
            fq_tick_dt = SimDuration(fc.interval().0.max(1));
        }
        let series_dt = SimDuration(SimDuration::from_secs_f64(cfg.series_interval_ms / 1e3).0.max(1));
        Switch {
            ports,
            routes,
            slab: Slab::default(),
            fairq,
            fq_sample_dt,
            fq_tick_dt,
            next_sample: SimTime::ZERO + fq_sample_dt,
            next_tick: SimTime::ZERO + fq_tick_dt,
            series_dt,
            next_series: SimTime::ZERO,
            uid: 0,
            qev: QdiscEvents::default(),
            seed,
            tx_late: Histogram::default(),
            input_wait: Histogram::default(),
            input_lines: cfg.port.iter().any(|p| p.input_rate_bps.is_some()),
            fabric: None,
        }
    }

    /// The output port of IPv4 destination `dst`.
    #[inline]
    pub fn route(&self, dst: u32) -> Option<usize> {
        self.routes.iter().find(|(p, _)| p.contains(dst)).map(|&(_, i)| i as usize)
    }

    /// A frame of `len` bytes (its real length; more than [`SLOT`] means it was cut) was
    /// received into `slot` on port `input` at `now`. The switch owns the slot from here on.
    pub fn on_frame(&mut self, now: SimTime, input: usize, slot: u32, len: usize) {
        let c = &mut self.ports[input].c;
        c.rx_frames += 1;
        c.rx_bytes += len as u64;
        if len > SLOT {
            c.malformed[Malformed::Oversize as usize] += 1;
            self.slab.release(slot);
            return;
        }
        self.slab.set_len(slot, len);
        match parse(self.slab.frame(slot)) {
            Err(why) => {
                self.ports[input].c.malformed[why as usize] += 1;
                self.slab.release(slot);
            }
            Ok(Frame::Arp) if self.fabric.is_some() => {
                self.ports[input].c.no_route += 1;
                self.slab.release(slot);
            }
            Ok(Frame::Arp) => {
                self.ports[input].c.flooded += 1;
                let at = self.arrival(now, input, len.saturating_sub(14) as u32);
                let n = self.ports.len();
                for out in (0..n).filter(|&o| o != input) {
                    let copy = self.slab.alloc();
                    let (src, dst) = (slot as usize * SLOT, copy as usize * SLOT);
                    self.slab.buf.copy_within(src..src + len, dst);
                    self.slab.set_len(copy, len);
                    self.uid += 1;
                    let pkt = to_packet_l2(len, self.uid, copy, input as u16);
                    self.admit(now, at, input, out, pkt);
                }
                self.slab.release(slot);
            }
            Ok(Frame::Ipv4(v)) => {
                let routed = match self.fabric.as_mut() {
                    Some(f) => {
                        let ttl = self.slab.frame(slot).get(IP_TTL).copied().unwrap_or(0);
                        f.route(v.src, v.dst, v.proto, v.sport, v.dport, ttl).ok()
                    }
                    None => self.route(v.dst),
                };
                let Some(out) = routed else {
                    self.ports[input].c.no_route += 1;
                    self.slab.release(slot);
                    return;
                };
                if out == input {
                    self.ports[input].c.hairpin += 1;
                    self.slab.release(slot);
                    return;
                }
                if self.fabric.is_some() {
                    decrement_ttl(self.slab.frame_mut(slot));
                }
                let c = &mut self.ports[input].c;
                c.forwarded += 1;
                c.fragments += v.fragment as u64;
                self.uid += 1;
                let mut pkt = to_packet(&v, self.uid, slot, input as u16);
                if let (Some(fq), Some(t)) = (self.fairq.as_mut(), v.tcp.as_ref()) {
                    let e = fairq_frame(fq, now, input as u32, out as u32, self.slab.frame_mut(slot), t, &mut pkt);
                    let c = &mut self.ports[input].c;
                    c.fairq_window_rewrites += e.window as u64;
                    c.fairq_wscale_rewrites += e.wscale as u64;
                    c.fairq_reserved_cleared += e.reserved as u64;
                }
                let at = self.arrival(now, input, pkt.size);
                self.admit(now, at, input, out, pkt);
            }
        }
    }

    /// When a frame of `size` IPv4 bytes, received on `input` at `now`, has arrived: `now`, or
    /// with `input_rate_bps` no sooner than its transmission time after the port's previous frame,
    /// and no later than `input_max_wait_us` after `now`.
    fn arrival(&mut self, now: SimTime, input: usize, size: u32) -> SimTime {
        let p = &mut self.ports[input];
        let Some(rate) = p.input_rate else { return now };
        let at = now.max((p.in_busy_until + rate.tx_time(size as u64)).min(now + p.input_max_wait));
        p.in_busy_until = at;
        at
    }

    /// Offers `pkt` to port `out` now if it has arrived by `now` (`at`), else holds it in the
    /// input line of port `input` until `at`.
    fn admit(&mut self, now: SimTime, at: SimTime, input: usize, out: usize, pkt: Packet) {
        if at <= now {
            self.offer(now, out, pkt);
        } else {
            self.input_wait.record(((at.0 - now.0) / 1000) as i64);
            let p = &mut self.ports[input];
            p.c.input_paced += 1;
            p.input_line.push_back((at, out as u16, pkt));
        }
    }

    /// Offers a packet to output port `out`'s discipline; frees the frames of dropped packets.
    fn offer(&mut self, now: SimTime, out: usize, pkt: Packet) {
        let p = &mut self.ports[out];
        p.queue.enqueue(pkt, now, &mut self.qev);
        for d in self.qev.dropped.drain(..) {
            self.slab.release(d.pkt.tag);
        }
    }

    /// Runs the input lines, every port's serializer and delay line up to `now`; frames due are
    /// passed to `send` (port index, bytes), which returns `false` if the socket refused the frame.
    pub fn service(&mut self, now: SimTime, send: Send<'_>) {
        // held frames in time order (ties: lower input port), each after the ports caught up
        while self.input_lines {
            let head = self.ports.iter().enumerate().filter_map(|(i, p)| p.input_line.front().map(|e| (e.0, i))).min();
            let Some((t, input)) = head.filter(|h| h.0 <= now) else { break };
            self.serve_ports(t, send);
            let (t, out, pkt) = self.ports[input].input_line.pop_front().expect("a head was found");
            self.offer(t, out as usize, pkt);
        }
        self.serve_ports(now, send);
    }

    fn serve_ports(&mut self, now: SimTime, send: Send<'_>) {
        for i in 0..self.ports.len() {
            self.service_port(now, i, send);
        }
    }

    fn service_port(&mut self, now: SimTime, i: usize, send: Send<'_>) {
        let p = &mut self.ports[i];
        // serializer: start every packet whose start time has come
        loop {
            if p.queue.is_empty() {
                break;
            }
            let earliest = SimTime(now.0.saturating_sub(p.burst.0));
            let start = p.busy_until.max(earliest);
            if start > now {
                break;
            }
            let Some(pkt) = p.queue.dequeue(now, &mut self.qev) else { break };
            for d in self.qev.dropped.drain(..) {
                self.slab.release(d.pkt.tag);
            }
            p.len_samples += 1;
            p.len_sum_pkts += p.queue.len_pkts() as u64;
            p.len_sum_bytes += p.queue.len_bytes();
            let end = start + p.rate.tx_time(pkt.size as u64);
            p.busy_until = end;
            if let Some(fq) = self.fairq.as_mut() {
                if pkt.proto == Proto::Tcp && pkt.payload > 0 && !pkt.has(flags::SYN) {
                    fq.ports[i].note_data(now);
                }
            }
            let release = end + p.delay;
            p.delay_line.push_back((release, pkt.tag, release > now));
        }
        // delay line: release every frame whose time has come
        while let Some(&(t, slot, timed)) = p.delay_line.front() {
            if t > now {
                break;
            }
            p.delay_line.pop_front();
            if timed {
                self.tx_late.record(((now.0 - t.0) / 1000) as i64);
            }
            let f = self.slab.frame(slot);
            if send(i, f) {
                p.c.tx_frames += 1;
                p.c.tx_bytes += f.len() as u64;
            } else {
                p.c.tx_errors += 1;
            }
            self.slab.release(slot);
        }
    }

    /// FairQ's sampling and controller timers and the time series, up to `now`.
    pub fn timers(&mut self, now: SimTime) {
        if let Some(fq) = self.fairq.as_mut() {
            // after a long stall, skip missed periods instead of replaying them
            if now.saturating_since(self.next_sample).0 > 16 * self.fq_sample_dt.0 {
                self.next_sample = now;
            }
            while self.next_sample <= now {
                for (f, p) in fq.ports.iter_mut().zip(&self.ports) {
                    f.sample(p.queue.len_bytes());
                }
                self.next_sample += self.fq_sample_dt;
            }
            if now.saturating_since(self.next_tick).0 > 16 * self.fq_tick_dt.0 {
                self.next_tick = now;
            }
            while self.next_tick <= now {
                for f in fq.ports.iter_mut() {
                    f.tick(self.next_tick);
                }
                self.next_tick += self.fq_tick_dt;
            }
        }
        if self.next_series <= now {
            for (i, p) in self.ports.iter_mut().enumerate() {
                let s = &mut p.series;
                s.t_s.push(now.as_secs_f64());
                s.queue_pkts.push(p.queue.len_pkts() as u32);
                s.queue_bytes.push(p.queue.len_bytes());
                let (flows, w) = match &self.fairq {
                    Some(fq) => (fq.ports[i].flows(), fq.ports[i].window().unwrap_or(0)),
                    None => (0, 0),
                };
                s.fairq_flows.push(flows);
                s.fairq_window_bytes.push(w);
                p.len_samples += 1;
                p.len_sum_pkts += p.queue.len_pkts() as u64;
                p.len_sum_bytes += p.queue.len_bytes();
            }
            self.next_series += self.series_dt;
            if self.next_series <= now {
                self.next_series = now + self.series_dt;
            }
        }
    }

    /// The earliest time anything is due (serializer start, delay-line release, timer).
    pub fn next_deadline(&self) -> SimTime {
        let mut t = self.next_series;
        if self.fairq.is_some() {
            t = t.min(self.next_sample).min(self.next_tick);
        }
        for p in &self.ports {
            // the head may start once the link is free (the bucket only helps after a late wake-up)
            if !p.queue.is_empty() {
                t = t.min(p.busy_until);
            }
            if let Some(&(r, _, _)) = p.delay_line.front() {
                t = t.min(r);
            }
            if let Some(&(a, _, _)) = p.input_line.front() {
                t = t.min(a);
            }
        }
        t
    }

    /// The stats document (see `docs/testbed.md`, section "Switch").
    pub fn stats(&self, now: SimTime, extra: Value) -> Value {
        let ports: Vec<Value> = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let st = &p.queue.stats;
                let drops: serde_json::Map<String, Value> =
                    DropReason::ALL.iter().map(|&r| (r.as_str().to_string(), json!(st.drops_by_reason(r)))).collect();
                let malformed: serde_json::Map<String, Value> =
                    Malformed::ALL.iter().map(|&m| (m.as_str().to_string(), json!(p.c.malformed[m as usize]))).collect();
                let n = p.len_samples.max(1) as f64;
                let fairq = self.fairq.as_ref().map(|fq| {
                    let f = &fq.ports[i];
                    json!({
                        "window_rewrites": p.c.fairq_window_rewrites,
                        "wscale_rewrites": p.c.fairq_wscale_rewrites,
                        "reserved_cleared": p.c.fairq_reserved_cleared,
                        "flows": f.flows(),
                        "window_bytes": f.window().unwrap_or(0),
                        "port_window_bytes": f.port_window(),
                        "avg_queue_bytes": f.avg_queue(),
                        "target_bytes": f.target_bytes(),
                    })
                });
                json!({
                    "iface": p.iface,
                    "rx_frames": p.c.rx_frames,
                    "rx_bytes": p.c.rx_bytes,
                    "tx_frames": p.c.tx_frames,
                    "tx_bytes": p.c.tx_bytes,
                    "tx_errors": p.c.tx_errors,
                    "forwarded": p.c.forwarded,
                    "flooded": p.c.flooded,
                    "no_route": p.c.no_route,
                    "hairpin": p.c.hairpin,
                    "fragments": p.c.fragments,
                    "malformed": malformed,
                    "malformed_total": p.c.malformed.iter().sum::<u64>(),
                    "input_rate_bps": p.input_rate.map(|r| r.0),
                    "input_max_wait_us": p.input_rate.map(|_| p.input_max_wait.0 as f64 / 1e6),
                    "input_paced": p.c.input_paced,
                    "in_input_line": p.input_line.len(),
                    "queue": {
                        "kind": p.queue.qdisc.name(),
                        "received_pkts": st.received_pkts(),
                        "received_bytes": st.received_bytes(),
                        "enqueued_pkts": st.enqueued_pkts,
                        "dequeued_pkts": st.dequeued_pkts,
                        "dequeued_bytes": st.dequeued_bytes,
                        "drops_pkts": st.drops_pkts(),
                        "drops": drops,
                        "marks": st.marks_total(),
                        "queued_pkts": p.queue.len_pkts(),
                        "queued_bytes": p.queue.len_bytes(),
                        "in_delay_line": p.delay_line.len(),
                        "max_len_pkts": st.max_len_pkts,
                        "max_len_bytes": st.max_len_bytes,
                        "mean_len_pkts": p.len_sum_pkts as f64 / n,
                        "mean_len_bytes": p.len_sum_bytes as f64 / n,
                    },
                    "fairq": fairq,
                    "series": {
                        "t_s": p.series.t_s,
                        "queue_pkts": p.series.queue_pkts,
                        "queue_bytes": p.series.queue_bytes,
                        "fairq_flows": p.series.fairq_flows,
                        "fairq_window_bytes": p.series.fairq_window_bytes,
                    },
                })
            })
            .collect();
        let mut doc = json!({
            "switch": "dcfair-switch",
            "version": env!("CARGO_PKG_VERSION"),
            "seed": self.seed,
            "duration_s": now.as_secs_f64(),
            "fairq_rewrites": self.fairq.as_ref().map_or(0, |f| f.rewrites),
            "frame_slots": self.slab.capacity(),
            "input_wait": self.input_wait.to_json(),
            "ports": ports,
        });
        if let (Value::Object(d), Value::Object(e)) = (&mut doc, extra) {
            d.extend(e);
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::tests::{tcp_frame, SYN_OPTS};

    fn cfg(kind: &str, rate: f64, delay_us: f64, fairq: bool) -> SwitchConfig {
        let fq = if fairq { "[fairq]\nwscale = \"off\"\n" } else { "" };
        // ports a and b with the discipline under test; port c with the defaults
        let port = |iface: &str, prefix: &str| {
            format!(
                "[[port]]\niface = \"{iface}\"\nprefixes = [\"{prefix}\"]\nrate_bps = {rate}\ndelay_us = {delay_us}\n\
                 burst_us = 0\n[port.queue]\nkind = \"{kind}\"\nlimit_pkts = 20\n"
            )
        };
        let text = format!(
            "{fq}{}{}[[port]]\niface = \"c\"\nprefixes = [\"10.9.0.0/16\"]\nrate_bps = {rate}\n",
            port("a", "10.0.0.1/32"),
            port("b", "10.0.0.0/24")
        );
        SwitchConfig::from_toml(&text).unwrap()
    }

    fn rx(sw: &mut Switch, now: SimTime, port: usize, f: &[u8]) {
        let s = sw.slab.alloc();
        sw.slab.slot_mut(s)[..f.len()].copy_from_slice(f);
        sw.on_frame(now, port, s, f.len());
    }

    /// Runs the switch as the event loop does (service, timers, next deadline) from `t` to `end`.
    fn run_until(sw: &mut Switch, mut t: SimTime, end: SimTime) -> Vec<(usize, Vec<u8>)> {
        let mut sent = Vec::new();
        while t <= end {
            sw.service(t, &mut |i, f| {
                sent.push((i, f.to_vec()));
                true
            });
            sw.timers(t);
            t = sw.next_deadline().max(t + SimDuration(1));
        }
        sent
    }

    /// Runs the loop from `t0` until `n` frames were sent; the times they were sent at.
    fn send_times(sw: &mut Switch, t0: SimTime, n: usize) -> Vec<SimTime> {
        let mut times = Vec::new();
        let mut now = t0;
        while times.len() < n {
            sw.service(now, &mut |_, _| {
                times.push(now);
                true
            });
            sw.timers(now);
            now = sw.next_deadline().max(now + SimDuration(1));
        }
        times
    }

    fn arp() -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[0..6].copy_from_slice(&[0xFF; 6]);
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        f
    }

    /// Checks both conservation identities of the module rules on every port.
    fn check_conservation(sw: &Switch) {
        for p in &sw.ports {
            let st = &p.queue.stats;
            let c = &p.c;
            assert_eq!(
                st.received_pkts(),
                c.tx_frames + c.tx_errors + st.drops_pkts() + p.queue.len_pkts() as u64 + p.delay_line.len() as u64,
                "output conservation at {}",
                p.iface
            );
            assert_eq!(
                c.rx_frames,
                c.forwarded + c.flooded + c.malformed.iter().sum::<u64>() + c.no_route + c.hairpin,
                "input conservation at {}",
                p.iface
            );
        }
        let queued: usize = sw.ports.iter().map(|p| p.queue.len_pkts() + p.delay_line.len() + p.input_line.len()).sum();
        assert_eq!(sw.slab.in_use(), queued, "frame slots leaked");
    }

    // --- forwarding -------------------------------------------------------------------
    #[test]
    fn routes_by_longest_prefix_and_floods_arp() {
        let mut sw = Switch::new(&cfg("droptail", 1e9, 0.0, false), 1);
        assert_eq!(sw.route(0x0A00_0001), Some(0));
        assert_eq!(sw.route(0x0A00_0002), Some(1));
        assert_eq!(sw.route(0x0A09_0102), Some(2));
        assert_eq!(sw.route(0x0B00_0001), None);
        let t = SimTime(1_000_000);
        rx(&mut sw, t, 0, &tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 100));
        rx(&mut sw, t, 0, &arp());
        rx(&mut sw, t, 0, &tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 100, &[], 100)); // hairpin
        rx(&mut sw, t, 0, &tcp_frame([10, 0, 0, 2], [11, 0, 0, 1], flags::ACK, 100, &[], 100)); // no route
        rx(&mut sw, t, 0, &[1, 2, 3]);
        let mut sent = run_until(&mut sw, t, SimTime(5_000_000_000));
        sent.sort_by_key(|s| s.0);
        let to: Vec<usize> = sent.iter().map(|s| s.0).collect();
        assert_eq!(to, vec![1, 1, 2]);
        assert_eq!(sent[0].1, tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 100), "frame changed");
        let c = &sw.ports[0].c;
        assert_eq!((c.forwarded, c.flooded, c.hairpin, c.no_route), (1, 1, 1, 1));
        assert_eq!(c.malformed[Malformed::RuntEthernet as usize], 1);
        check_conservation(&sw);
    }

    #[test]
    fn corpus_of_bad_frames_is_counted_and_dropped_without_harm() {
        let mut sw = Switch::new(&cfg("hcf", 1e9, 0.0, true), 1);
        let corpus = crate::parse::tests::bad_corpus();
        for (_, f, _) in &corpus {
            rx(&mut sw, SimTime(1), 0, f);
        }
        // an oversize frame (as the socket reports it: real length beyond the slot)
        let s = sw.slab.alloc();
        sw.on_frame(SimTime(1), 0, s, SLOT + 100);
        let c = &sw.ports[0].c;
        assert_eq!(c.malformed.iter().sum::<u64>(), corpus.len() as u64 + 1);
        for (name, _, why) in &corpus {
            assert!(c.malformed[*why as usize] >= 1, "{name}");
        }
        assert_eq!(sw.ports.iter().map(|p| p.queue.stats.received_pkts()).sum::<u64>(), 0);
        check_conservation(&sw);
    }

    // --- serializer and delay line -------------------------------------------------------
    #[test]
    fn serializer_holds_the_rate_and_the_delay_line_adds_its_delay() {
        // 100 Mbps, 200 us delay: 1500-byte IPv4 packets leave 120 us apart, 320 us after the first starts
        let mut sw = Switch::new(&cfg("droptail", 1e8, 200.0, false), 1);
        let f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 1460);
        let t0 = SimTime(1_000_000_000);
        for _ in 0..10 {
            rx(&mut sw, t0, 0, &f);
        }
        let times = send_times(&mut sw, t0, 10);
        assert_eq!(times[0], t0 + SimDuration::from_us(320));
        for w in times.windows(2) {
            assert_eq!(w[1] - w[0], SimDuration::from_us(120));
        }
        // served exactly at their deadlines: no lateness
        assert_eq!((sw.tx_late.count(), sw.tx_late.quantile_us(1.0)), (10, 1));
        // served 30 us late: every frame counts 30 us
        let mut late = Switch::new(&cfg("droptail", 1e8, 200.0, false), 1);
        rx(&mut late, t0, 0, &f);
        late.service(t0, &mut |_, _| true);
        late.service(t0 + SimDuration::from_us(350), &mut |_, _| true);
        assert_eq!((late.tx_late.count(), late.tx_late.quantile_us(0.5)), (1, 31));
        check_conservation(&sw);
    }

    #[test]
    fn overflow_drops_are_counted_and_frames_freed() {
        let mut sw = Switch::new(&cfg("droptail", 1e6, 0.0, false), 1);
        let f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 1000);
        for _ in 0..50 {
            rx(&mut sw, SimTime(5), 0, &f);
        }
        let st = &sw.ports[1].queue.stats;
        assert_eq!(st.drops_by_reason(DropReason::Overflow), 30);
        check_conservation(&sw);
        let doc = sw.stats(SimTime(10), json!({}));
        assert_eq!(doc["ports"][1]["queue"]["drops"]["overflow"], 30);
        assert_eq!(doc["ports"][1]["queue"]["queued_pkts"], 20);
    }

    #[test]
    fn every_discipline_forwards_and_conserves() {
        for kind in ["droptail", "red", "sfq", "drr", "hcf", "codel", "fq_codel"] {
            let mut sw = Switch::new(&cfg(kind, 1e7, 10.0, false), 3);
            let mut now = SimTime(1);
            let mut sent = 0;
            for k in 0..400u32 {
                let f = tcp_frame([10, 1, (k % 7) as u8, 1], [10, 0, 0, 2], flags::ACK, 100, &[], (k % 1400) as usize);
                rx(&mut sw, now, 0, &f);
                now += SimDuration::from_us(200);
                sw.service(now, &mut |_, _| {
                    sent += 1;
                    true
                });
                sw.timers(now);
                check_conservation(&sw);
            }
            assert!(sent > 100, "{kind} sent only {sent}");
        }
    }

    // --- input line ----------------------------------------------------------------------
    /// Ports a (10.0.0.1), b (10.0.0.0/24) and c (10.9.0.0/16) at 1 Gbit/s out, no delay and no
    /// bucket, each receiving at most 100 Mbit/s.
    fn paced() -> Switch {
        let port = |iface: &str, prefix: &str| {
            format!("[[port]]\niface = \"{iface}\"\nprefixes = [\"{prefix}\"]\nrate_bps = 1e9\nburst_us = 0\ninput_rate_bps = 1e8\n")
        };
        let text = format!("{}{}{}", port("a", "10.0.0.1/32"), port("b", "10.0.0.0/24"), port("c", "10.9.0.0/16"));
        Switch::new(&SwitchConfig::from_toml(&text).unwrap(), 1)
    }

    #[test]
    fn input_line_spaces_a_clump_at_the_link_rate() {
        let mut sw = paced();
        let f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 1460); // 1500 IPv4 bytes: 120 us at 100 Mbit/s
        let t0 = SimTime(1_000_000_000);
        for _ in 0..5 {
            rx(&mut sw, t0, 0, &f);
        }
        assert_eq!((sw.ports[0].c.input_paced, sw.ports[0].input_line.len()), (4, 4));
        assert_eq!((sw.input_wait.count(), sw.input_wait.quantile_us(1.0)), (4, 481)); // 120, 240, 360, 480 us (upper bucket edge)
        assert_eq!(sw.ports[1].queue.stats.received_pkts(), 1, "only the first frame has arrived");
        check_conservation(&sw);
        let times = send_times(&mut sw, t0, 5);
        // each leaves 12 us (1 Gbit/s) after it arrived, arrivals 120 us apart
        for (k, t) in times.iter().enumerate() {
            assert_eq!(*t, t0 + SimDuration::from_us(12 + 120 * k as u64));
        }
        check_conservation(&sw);
        // a frame received after the line emptied and the link fell idle is not held
        rx(&mut sw, t0 + SimDuration::from_us(2000), 0, &f);
        assert_eq!(sw.ports[0].c.input_paced, 4);
        let doc = sw.stats(t0 + SimDuration::from_us(3000), json!({}));
        assert_eq!((doc["ports"][0]["input_paced"].as_u64(), doc["ports"][0]["input_rate_bps"].as_u64()), (Some(4), Some(100_000_000)));
    }

    #[test]
    fn no_frame_waits_in_the_input_line_longer_than_its_bound() {
        // twelve frames at once: 120 us apart up to the 1000 us bound (the default), then at it
        let mut sw = paced();
        let f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], flags::ACK, 100, &[], 1460);
        let t0 = SimTime(1_000_000_000);
        for _ in 0..12 {
            rx(&mut sw, t0, 0, &f);
        }
        let times = send_times(&mut sw, t0, 12);
        let us: Vec<u64> = times.iter().map(|t| (t.0 - t0.0) / 1_000_000).collect();
        assert_eq!(us, vec![12, 132, 252, 372, 492, 612, 732, 852, 972, 1012, 1024, 1036]);
        assert_eq!(sw.input_wait.to_json()["max_us"], 1000.0);
        // a busy link keeps the lag it took but never more than the bound: the next frame, one
        // frame time later, waits until 120 us after the last arrival (t0 + 1120 us), i.e. 1000 us
        rx(&mut sw, t0 + SimDuration::from_us(120), 0, &f);
        assert_eq!(sw.ports[0].input_line.back().unwrap().0, t0 + SimDuration::from_us(1120));
        check_conservation(&sw);
    }

    #[test]
    fn held_frames_meet_the_queue_in_arrival_order_across_ports() {
        // a clump of three on port a (arrivals t0, t0+120, t0+240 us) and one frame on port c
        // received at t0+130 us: the queue of port b sees a, a, c, a
        let mut sw = paced();
        let from = |src: [u8; 4]| tcp_frame(src, [10, 0, 0, 2], flags::ACK, 100, &[], 1460);
        let t0 = SimTime(1_000_000_000);
        for _ in 0..3 {
            rx(&mut sw, t0, 0, &from([10, 0, 0, 1]));
        }
        let t1 = t0 + SimDuration::from_us(130);
        let mut sent = Vec::new();
        sw.service(t1, &mut |_, f| {
            sent.push(f[14 + 12..14 + 16].to_vec());
            true
        });
        rx(&mut sw, t1, 2, &from([10, 9, 0, 7]));
        let mut now = t1;
        while sent.len() < 4 {
            sw.service(now, &mut |_, f| {
                sent.push(f[14 + 12..14 + 16].to_vec());
                true
            });
            now = sw.next_deadline().max(now + SimDuration(1));
        }
        let srcs: Vec<u8> = sent.iter().map(|a| a[1]).collect();
        assert_eq!(srcs, vec![0, 0, 9, 0]);
        check_conservation(&sw);
    }

    // --- FairQ ---------------------------------------------------------------------------
    #[test]
    fn fairq_counts_flows_and_rewrites_acks_towards_the_sender() {
        let mut sw = Switch::new(&cfg("droptail", 1e9, 0.0, true), 1);
        // the receiver 10.0.0.2 (port 1) answers the sender 10.0.0.1 (port 0)
        rx(&mut sw, SimTime(1), 1, &tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::SYN | flags::ACK, 65160, &SYN_OPTS, 0));
        rx(&mut sw, SimTime(2), 1, &tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], flags::ACK, 65535, &[], 0));
        let out: Vec<Vec<u8>> = run_until(&mut sw, SimTime(2), SimTime(1_000_000_000)).into_iter().map(|s| s.1).collect();
        let fq = sw.fairq.as_ref().unwrap();
        assert_eq!(fq.ports[1].flows(), 1);
        // both the SYN-ACK (its window unscaled) and the ACK carry the fair window
        let w = fq.ports[1].window().unwrap();
        assert!(w < 65160);
        assert_eq!(fq.rewrites, 2);
        assert_eq!(sw.ports[1].c.fairq_window_rewrites, 2);
        assert_eq!(sw.ports[1].c.fairq_wscale_rewrites, 1);
        for f in &out {
            assert!(crate::csum::tcp_checksum_ok(&f[14..]));
        }
        for f in &out[..2] {
            let Ok(Frame::Ipv4(v)) = parse(f) else { panic!() };
            assert_eq!(v.tcp.unwrap().window as u64, w);
        }
        sw.timers(SimTime(2_000_000_000));
        let doc = sw.stats(SimTime(2_000_000_000), json!({}));
        assert_eq!(doc["ports"][1]["fairq"]["window_rewrites"], 2);
        assert!(!doc["ports"][1]["series"]["fairq_window_bytes"].as_array().unwrap().is_empty());
    }
}
