//! The data level of an MPTCP connection: one data sequence space over all subflows, the
//! per-subflow mapping of subflow bytes to data sequence numbers, reassembly at the receiver,
//! the shared receive window and the data ACK (RFC 8684's model, not its wire format).
//!
//! Rules:
//! - **Data sequence numbers** (RFC 8684 section 3.3.1): absolute `u64` byte offsets from 0,
//!   no wrap-around, no initial data sequence number (nothing here needs the 64-bit IDSN a
//!   key hash gives). [`DataSender::take`] hands out the next chunk; each chunk goes to one
//!   subflow, which sends it as ordinary bytes of its own sequence space.
//! - **Mappings** (RFC 8684 section 3.3.1, the DSS option's "data sequence mapping"): a
//!   [`Mapping`] per subflow records which data sequence numbers its bytes carry, as
//!   `(subflow offset, data seq, len)` runs in a deque, subflow offsets counted from the
//!   subflow's first payload byte (`TcpSender::bytes_written` when the chunk is written, and
//!   `TcpReceiver::delivered_bytes` when it arrives). A chunk that continues the last run in
//!   both spaces extends it. [`Mapping::consume`] hands over the data ranges of the subflow
//!   bytes delivered in order since the last call and drops the runs they finish. The
//!   simulator keeps both ends' view of a mapping in one object: the DSS option that carries
//!   it on the wire is not modelled, nor its checksum.
//! - **Reassembly** ([`DataReceiver`], RFC 8684 section 3.3.1 and 3.3.2): data arriving from
//!   any subflow at the data ACK advances it (the application reads in-order data at once);
//!   data beyond it is kept as sorted, disjoint, merged ranges in one reused `Vec`; data below
//!   it (a duplicate) is ignored. `data_ack` is the DATA_ACK: the next data sequence number
//!   expected, cumulative over all subflows.
//! - **Shared receive window** (RFC 8684 section 3.3.4): one receive buffer of `buf` bytes for
//!   the connection, the window relative to the data ACK. [`DataReceiver::window`] is the
//!   buffer less the out-of-order bytes it holds (data that waits for a slower subflow takes
//!   buffer space: the head-of-line blocking of Raiciu et al., NSDI 2012). The sender's right
//!   edge is `data_ack + window` from the latest data ACK, but never moves left (a receiver
//!   should not shrink its window, RFC 9293 section 3.8.6; Linux's `tcp_select_window` keeps
//!   the offered right edge likewise), and [`DataSender::take`] never hands out data beyond it. Since the right
//!   edge never passes `data_ack + buf`, every byte handed out fits the receiver's buffer.
//! - **Data ACK path**: the simulator hands [`DataReceiver::data_ack`] and
//!   [`DataReceiver::window`] to [`DataSender::on_data_ack`] (when a subflow ACK reaches the
//!   sender, say); no wire format.
//! - **Not modelled**: reinjection (data of a failed or stalled subflow resent on another;
//!   every data byte is sent on exactly one subflow, whose own retransmissions repair it),
//!   DATA_FIN (the connection ends when `data_ack` reaches the size), the DSS checksum, and
//!   the fallback to plain TCP.
//! - **No allocation per packet in steady state**: the deques and the range `Vec` keep their
//!   storage; contiguous chunks merge into one run.

use std::collections::VecDeque;

/// The data sequence space of the sending side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSender {
    /// Bytes the application sends; `None`: unlimited.
    size: Option<u64>,
    /// The next data sequence number to hand out.
    next: u64,
    /// The latest data ACK.
    data_ack: u64,
    /// Handing out stops here: the highest `data_ack + window` advertised.
    right_edge: u64,
}

impl DataSender {
    /// A connection of `size` bytes (`None`: forever) and an initial shared receive window of
    /// `rcv_window` bytes (the receiver's buffer, as the SYN would advertise it).
    pub fn new(size: Option<u64>, rcv_window: u64) -> DataSender {
        DataSender { size, next: 0, data_ack: 0, right_edge: rcv_window }
    }

    /// The next chunk, of at most `max_bytes`: `(data_seq, len)`, or `None` if nothing may be
    /// handed out (all of `size` handed out, the window full, or `max_bytes` 0).
    pub fn take(&mut self, max_bytes: u64) -> Option<(u64, u64)> {
        let len = self.available().min(max_bytes);
        if len == 0 {
            return None;
        }
        let seq = self.next;
        self.next += len;
        Some((seq, len))
    }

    /// Bytes [`DataSender::take`] could hand out now.
    pub fn available(&self) -> u64 {
        let end = self.size.map_or(self.right_edge, |s| s.min(self.right_edge));
        end.saturating_sub(self.next)
    }

    /// A data ACK: everything below `data_ack` is delivered, and the receiver has `window`
    /// bytes of buffer beyond it. An older ACK changes nothing; the right edge never moves left.
    pub fn on_data_ack(&mut self, data_ack: u64, window: u64) {
        debug_assert!(data_ack <= self.next, "data ACK {data_ack} beyond what was handed out ({})", self.next);
        self.data_ack = self.data_ack.max(data_ack);
        self.right_edge = self.right_edge.max(data_ack.saturating_add(window));
    }

    /// The latest data ACK.
    pub fn data_ack(&self) -> u64 {
        self.data_ack
    }
    /// The next data sequence number to hand out (= bytes handed out so far).
    pub fn next_seq(&self) -> u64 {
        self.next
    }
    /// The highest `data_ack + window` advertised.
    pub fn right_edge(&self) -> u64 {
        self.right_edge
    }
    /// Bytes handed out and not yet data-acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.next - self.data_ack
    }
    /// Every byte of a sized connection acknowledged at the data level (never, when unlimited).
    pub fn is_done(&self) -> bool {
        self.size == Some(self.data_ack)
    }
}

/// One run of a mapping: subflow bytes `[subflow_offset, subflow_offset + len)` carry data
/// `[data_seq, data_seq + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapRun {
    pub subflow_offset: u64,
    pub data_seq: u64,
    pub len: u64,
}

/// The data sequence mapping of one subflow (module rules).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    runs: VecDeque<MapRun>,
    /// Subflow bytes mapped so far: where the next run starts.
    mapped_to: u64,
    /// Subflow bytes consumed (delivered in order) so far.
    consumed_to: u64,
}

impl Mapping {
    pub fn new() -> Mapping {
        Mapping::default()
    }

    /// Subflow bytes from `subflow_offset` (which must be where the last run ended: a subflow's
    /// bytes are all mapped, in order) carry data `[data_seq, data_seq + len)`.
    pub fn push(&mut self, subflow_offset: u64, data_seq: u64, len: u64) {
        debug_assert_eq!(subflow_offset, self.mapped_to, "mapping does not continue the subflow's bytes");
        if len == 0 {
            return;
        }
        self.mapped_to = subflow_offset + len;
        if let Some(last) = self.runs.back_mut() {
            if last.subflow_offset + last.len == subflow_offset && last.data_seq + last.len == data_seq {
                last.len += len;
                return;
            }
        }
        self.runs.push_back(MapRun { subflow_offset, data_seq, len });
    }

    /// The subflow has delivered its bytes in order up to `delivered_to` (its
    /// `delivered_bytes`): calls `f(data_seq, len)` for each data range of the bytes delivered
    /// since the last call, in subflow order, and drops the runs they finish.
    pub fn consume(&mut self, delivered_to: u64, mut f: impl FnMut(u64, u64)) {
        debug_assert!(delivered_to <= self.mapped_to, "subflow delivered {delivered_to} bytes, {} mapped", self.mapped_to);
        while self.consumed_to < delivered_to {
            let Some(run) = self.runs.front_mut() else { break };
            let n = run.len.min(delivered_to - self.consumed_to);
            f(run.data_seq, n);
            self.consumed_to += n;
            if n == run.len {
                self.runs.pop_front();
            } else {
                run.subflow_offset += n;
                run.data_seq += n;
                run.len -= n;
            }
        }
    }

    /// Where the next run starts (subflow bytes mapped so far).
    pub fn mapped_to(&self) -> u64 {
        self.mapped_to
    }
    /// Subflow bytes consumed so far.
    pub fn consumed_to(&self) -> u64 {
        self.consumed_to
    }
    /// The runs not yet consumed, oldest first.
    pub fn runs(&self) -> impl Iterator<Item = &MapRun> {
        self.runs.iter()
    }
}

/// Reassembly and the shared receive buffer of the receiving side (module rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataReceiver {
    /// The shared receive buffer, bytes.
    buf: u64,
    /// The next data sequence number expected (DATA_ACK).
    data_ack: u64,
    /// Data held beyond `data_ack`: sorted, disjoint, non-adjacent `[start, end)` ranges.
    ooo: Vec<(u64, u64)>,
    /// Bytes in `ooo`.
    ooo_bytes: u64,
}

impl DataReceiver {
    /// A receiver with a shared buffer of `buf` bytes.
    pub fn new(buf: u64) -> DataReceiver {
        DataReceiver { buf, data_ack: 0, ooo: Vec::new(), ooo_bytes: 0 }
    }

    /// Data `[data_seq, data_seq + len)` arrived from a subflow; returns how far `data_ack`
    /// advanced. Parts below `data_ack` or already held are ignored.
    pub fn deliver(&mut self, data_seq: u64, len: u64) -> u64 {
        let end = data_seq + len;
        debug_assert!(end <= self.data_ack.saturating_add(self.buf), "data beyond the shared buffer");
        if end <= self.data_ack {
            return 0;
        }
        let start = data_seq.max(self.data_ack);
        // the ranges that overlap or touch [start, end)
        let i = self.ooo.partition_point(|r| r.1 < start);
        let j = self.ooo.partition_point(|r| r.0 <= end);
        let (mut lo, mut hi) = (start, end);
        if i < j {
            lo = lo.min(self.ooo[i].0);
            hi = hi.max(self.ooo[j - 1].1);
            self.ooo_bytes -= self.ooo[i..j].iter().map(|r| r.1 - r.0).sum::<u64>();
        }
        if lo == self.data_ack {
            // in order: everything merged is delivered (i == 0 here)
            self.ooo.drain(..j);
            let before = self.data_ack;
            self.data_ack = hi;
            return hi - before;
        }
        self.ooo_bytes += hi - lo;
        if i < j {
            self.ooo[i] = (lo, hi);
            self.ooo.drain(i + 1..j);
        } else {
            self.ooo.insert(i, (lo, hi));
        }
        0
    }

    /// The DATA_ACK: every data byte below it has arrived.
    pub fn data_ack(&self) -> u64 {
        self.data_ack
    }
    /// The shared receive window: the buffer less the out-of-order bytes it holds.
    pub fn window(&self) -> u64 {
        self.buf.saturating_sub(self.ooo_bytes)
    }
    /// Out-of-order bytes held.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }
    /// The out-of-order ranges held, `[start, end)`, sorted.
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }
}

#[cfg(test)]
mod tests;
