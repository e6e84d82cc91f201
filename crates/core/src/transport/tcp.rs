//! TCP as a transport: one flow's [`TcpSender`] and [`TcpReceiver`] (the state machines of
//! `crate::tcp`, `docs/tcp.md`), built from the flow's group's `tcp` table.
//!
//! Rules:
//! - A flow given bytes from the start (`Data::Bulk`) has a bulk sender of that size (or
//!   without end); a flow written to (`Data::Written`: an incast server, an MPTCP subflow) has
//!   a persistent sender that sends only what is written.
//! - An incast server that answers each request on a new connection ([`TcpEnds::reconnect`])
//!   gets fresh endpoints per request; the counters of its finished connections are carried
//!   ([`Carried`]) and add to the current one's in every figure.
//! - The receiver's window-scale shift is what FairQ's end-host helper tags its ACKs with.

use super::framework::{Data, FlowSpec, NoTable, Selectable, Side, Transport};
use crate::packet::Packet;
use crate::tcp::{FlowIds, SenderStats, TcpConfig, TcpReceiver, TcpSender};
use crate::time::SimTime;

/// The two ends of a TCP flow.
#[derive(Clone, Debug)]
pub struct TcpEnds {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    /// What the flow's earlier connections did, when it opens one per request: their counts
    /// add to the current connection's.
    pub carried: Option<Box<Carried>>,
}

/// The counters of a flow's finished connections ([`TcpEnds::reconnect`]).
#[derive(Clone, Debug, Default)]
pub struct Carried {
    pub delivered: u64,
    pub stats: SenderStats,
    /// Connections opened so far.
    pub connections: u64,
}

impl TcpEnds {
    /// The ends of flow `ids` with the settings `tcp`, its sender given `data`.
    pub fn new(tcp: &TcpConfig, ids: FlowIds, data: Data) -> TcpEnds {
        let sender = match data {
            Data::Bulk(size) => TcpSender::new(tcp, ids, size),
            Data::Written => TcpSender::new_persistent(tcp, ids),
        };
        TcpEnds { sender, receiver: TcpReceiver::new(tcp, ids), carried: None }
    }
}

impl Transport for TcpEnds {
    const TITLE: &'static str = "TCP";
    const TCP_WINDOW: bool = true;
    const MULTIPATH: bool = true;
    const RECONNECTS: bool = true;

    two_ends!(sender, receiver);
    /// Fresh endpoints from `tcp` that send `bytes` and a FIN, a new source port, sequence
    /// numbers far from the last connection's (its late segments are ignored as old), the last
    /// one's counters carried over; opened at once (a SYN).
    fn reconnect(&mut self, ids: &mut FlowIds, tcp: &TcpConfig, bytes: u64, now: SimTime, out: &mut Vec<Packet>) {
        let mut c: Box<Carried> = self.carried.take().unwrap_or_default();
        if c.connections > 0 {
            c.delivered += self.receiver.delivered_bytes();
            c.stats.add(self.sender.stats());
        }
        c.connections += 1;
        let iss = c.connections << 40;
        // a new ephemeral port per connection, as a client's operating system picks one
        ids.sport = (20_000 + c.connections % 40_000) as u16;
        self.sender = TcpSender::with_iss(tcp, *ids, Some(bytes), iss);
        self.receiver = TcpReceiver::with_iss(tcp, *ids, iss);
        self.carried = Some(c);
        self.sender.start(now, out);
    }
    #[inline]
    fn delivered_bytes(&self) -> u64 {
        self.receiver.delivered_bytes() + self.carried.as_ref().map_or(0, |c| c.delivered)
    }
    #[inline]
    fn data_pkts_sent(&self) -> u64 {
        self.sender.stats().data_segments_sent + self.carried.as_ref().map_or(0, |c| c.stats.data_segments_sent)
    }
    fn sender_stats(&self) -> SenderStats {
        let mut s = self.sender.stats().clone();
        if let Some(c) = &self.carried {
            s.add(&c.stats);
        }
        s
    }
    #[inline]
    fn window_shift(&self) -> Option<u8> {
        Some(self.receiver.wscale_shift())
    }
    fn cwnd_bytes(&self) -> Option<u64> {
        Some(self.sender.cwnd_bytes())
    }
    /// `cwnd ssthresh una nxt max dupacks recovery rto_s backoff timeouts` (bytes; ssthresh
    /// `u64::MAX` before the first loss; recovery 0 or 1).
    fn trace_state(&self) -> Option<String> {
        let s = &self.sender;
        Some(format!(
            "{} {} {} {} {} {} {} {:.6} {} {}",
            s.cwnd_bytes(),
            s.ssthresh_bytes(),
            s.snd_una(),
            s.snd_nxt(),
            s.snd_max(),
            s.dupacks(),
            s.in_recovery() as u8,
            s.rto().as_secs_f64(),
            s.rtt_estimator().backoff(),
            s.stats().timeouts
        ))
    }
}

impl Selectable for TcpEnds {
    type Table = NoTable;

    fn build(_: &NoTable, spec: &FlowSpec) -> TcpEnds {
        TcpEnds::new(spec.tcp, spec.ids, spec.data)
    }
}
