//! NDP's switch and NIC port: a header queue beside the data queue, trimming, and the PULL
//! pacer of a receiving host (Handley et al., SIGCOMM 2017, sections 3.1-3.2).
//!
//! Rules:
//! - Every port of a run with NDP flows gets one, around the discipline its `queue.kind` (or
//!   `[ports]`, `[host_queue]`) gives it ([`wrap_port`]); the port holds it as the disciplines'
//!   generic wrapper, so the disciplines know nothing of NDP. Packets of other protocols go to
//!   that data discipline untouched.
//! - An NDP packet of at most `ndp.header_bytes` (an ACK, a NACK, a PULL or a trimmed header)
//!   joins the header queue (`ndp.header_queue_pkts`); one that finds it full is refused
//!   (`Overflow`). At a host's NIC a PULL joins the pull queue instead (below).
//! - At a switch port, with `ndp.trim`, an NDP data packet that would bring the data queue above
//!   `trim_threshold_pkts x mss_bytes` bytes is trimmed: cut to its header
//!   ([`QPacket::trim`], counted by the port's queue as a trim) and queued as a header. The
//!   arriving packet is the one trimmed (the paper trims it or the queue's tail, at random),
//!   and only if its payload is larger than a header.
//!   Otherwise it joins the data queue, whose own limit still applies.
//! - The port sends headers ahead of data by weighted round robin: at most `header_weight`
//!   headers in a row while data waits, then one data packet (0: headers always first).
//! - The pull pacer (host NICs only): PULLs wait in one FIFO per flow, served in turn (the
//!   paper's pull queue, fair-queued by sender), and leave at most one per time a
//!   full data packet (`mss_bytes + header_bytes`) takes on the port's link (divided by
//!   `ndp.pull_rate`): what the receiver
//!   asks for arrives no faster than its link delivers it. A PULL whose turn has not come lets
//!   data go; when only such PULLs wait, [`Qdisc::ready_at`] says when to try again.
//! - Accounting: lengths count the three queues; a trimmed packet is stored at its header size.

use super::config::NdpConfig;
use super::PULL_PRIORITY;
use crate::packet::Proto;
use crate::qdisc::{AnyQdisc, DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::time::SimTime;
use std::collections::{HashMap, VecDeque};

/// The port discipline `q` of a run with NDP flows, inside NDP's port.
pub fn wrap_port<P: QPacket + 'static>(cfg: &NdpConfig, q: AnyQdisc<P>, ctx: &PortContext) -> AnyQdisc<P> {
    AnyQdisc::wrap(NdpPort::new(cfg, q, ctx))
}

#[derive(Debug)]
pub struct NdpPort<P, Q> {
    headers: VecDeque<P>,
    header_limit: usize,
    /// PULLs waiting for their turn (host NICs): per flow (by flow key), and the flows with
    /// PULLs waiting in the order they are served.
    pulls: HashMap<u64, VecDeque<P>>,
    turns: VecDeque<u64>,
    pulls_len: usize,
    /// Bytes in `headers` and `pulls`.
    control_bytes: u64,
    /// Picoseconds between two PULLs, and when the next may leave (0: no pacer, a switch).
    pull_ps: u64,
    next_pull: u64,
    /// Data bytes above which an arriving NDP data packet is trimmed (`u64::MAX`: never).
    trim_at: u64,
    header_size: u32,
    weight: u32,
    /// Headers sent in a row while data waited.
    run: u32,
    pub data: Q,
}

impl<P: QPacket, Q: Qdisc<Pkt = P>> NdpPort<P, Q> {
    pub fn new(cfg: &NdpConfig, data: Q, ctx: &PortContext) -> NdpPort<P, Q> {
        let pull_ps = if ctx.host { ((ctx.rate.tx_time(cfg.packet_bytes() as u64).0 as f64 / cfg.pull_rate).round() as u64).max(1) } else { 0 };
        NdpPort {
            headers: VecDeque::new(),
            header_limit: cfg.header_queue(),
            pulls: HashMap::new(),
            turns: VecDeque::new(),
            pulls_len: 0,
            control_bytes: 0,
            pull_ps,
            next_pull: 0,
            trim_at: if cfg.trim && !ctx.host { cfg.trim_bytes() } else { u64::MAX },
            header_size: cfg.header_bytes,
            weight: cfg.header_weight,
            run: 0,
            data,
        }
    }

    /// Packets the port has trimmed are counted by its queue; this is what it holds as headers.
    pub fn headers_len(&self) -> usize {
        self.headers.len()
    }

    fn push_header(&mut self, pkt: P, ev: &mut QdiscEvents<P>) -> bool {
        if self.headers.len() >= self.header_limit {
            ev.drop(pkt, DropReason::Overflow, false);
            return false;
        }
        self.control_bytes += pkt.size() as u64;
        self.headers.push_back(pkt);
        true
    }

    /// The PULL at the head may leave at `now` (ps).
    fn pull_ready(&self, now: u64) -> bool {
        self.pulls_len > 0 && now >= self.next_pull
    }

    /// The next flow's PULL, its flow going to the back of the turns if it has more.
    fn pop_pull(&mut self) -> Option<P> {
        let key = self.turns.pop_front()?;
        let q = self.pulls.get_mut(&key).expect("a flow in turn has PULLs");
        let pkt = q.pop_front();
        if q.is_empty() {
            self.pulls.remove(&key);
        } else {
            self.turns.push_back(key);
        }
        self.pulls_len -= 1;
        pkt
    }
}

impl<P: QPacket, Q: Qdisc<Pkt = P>> Qdisc for NdpPort<P, Q> {
    type Pkt = P;

    fn enqueue(&mut self, mut pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        if pkt.proto() != Proto::Ndp {
            return self.data.enqueue(pkt, now, ev);
        }
        let size = pkt.size();
        if size <= self.header_size {
            if self.pull_ps != 0 && pkt.priority() == PULL_PRIORITY {
                self.control_bytes += size as u64;
                let q = self.pulls.entry(pkt.flow_key()).or_default();
                if q.is_empty() {
                    self.turns.push_back(pkt.flow_key());
                }
                q.push_back(pkt);
                self.pulls_len += 1;
            } else {
                self.push_header(pkt, ev);
            }
            return;
        }
        // a packet whose payload is no larger than a header is not worth cutting (and its size
        // would not tell the receiver it was cut): the data queue takes it, or drops it
        if self.data.len_bytes() + size as u64 > self.trim_at && size > 2 * self.header_size {
            pkt.trim(self.header_size);
            if self.push_header(pkt, ev) {
                ev.cut_bytes = size - self.header_size;
            }
            return;
        }
        self.data.enqueue(pkt, now, ev);
    }

    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        let t = now.0;
        let control = !self.headers.is_empty() || self.pull_ready(t);
        if control && (self.weight == 0 || self.run < self.weight || self.data.len_pkts() == 0) {
            self.run += 1;
            let pkt = match self.headers.pop_front() {
                Some(p) => p,
                None => {
                    self.next_pull = self.next_pull.max(t) + self.pull_ps;
                    self.pop_pull().expect("a PULL is ready")
                }
            };
            self.control_bytes -= pkt.size() as u64;
            return Some(pkt);
        }
        let pkt = self.data.dequeue(now, ev);
        if pkt.is_some() {
            self.run = 0;
        }
        pkt
    }

    fn len_pkts(&self) -> usize {
        self.headers.len() + self.pulls_len + self.data.len_pkts()
    }

    fn len_bytes(&self) -> u64 {
        self.control_bytes + self.data.len_bytes()
    }

    fn name(&self) -> &'static str {
        self.data.name()
    }

    fn ready_at(&self) -> Option<SimTime> {
        let pull = (self.pulls_len > 0).then_some(SimTime(self.next_pull));
        match (pull, self.data.ready_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
