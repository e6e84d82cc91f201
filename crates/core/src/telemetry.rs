//! In-band network telemetry (INT), as HPCC uses it: every switch port a packet leaves through
//! appends one record of itself, and the receiver echoes the records back to the sender.
//!
//! Rules:
//! - A packet asks for telemetry with `Packet::int`: [`COLLECT`] (a data packet: every switch
//!   port it leaves through appends an [`IntHop`]) or [`ECHO`] (an acknowledgement: it carries
//!   back, unchanged, the records of the packet its receiver was answering when it emitted it).
//!   [`NONE`] (0) by default: no run pays for telemetry that no transport asked for.
//! - A hop is what the HPCC paper's INT carries: the time the packet left the port, the bytes the
//!   port had sent by then, its queue then (both classes), and its rate. At most [`MAX_HOPS`]
//!   hops are kept; a longer path's further hops are counted in `Telemetry::lost`, not kept.
//! - The records are the engine's, beside its packets (one per packet slot); a transport reads
//!   them in `Transport::on_packet_int`.

use crate::time::{BitsPerSec, SimTime};

/// `Packet::int`: no telemetry.
pub const NONE: u8 = 0;
/// `Packet::int`: every switch port on the way appends its [`IntHop`].
pub const COLLECT: u8 = 1;
/// `Packet::int`: carries back the records of the packet its receiver was answering.
pub const ECHO: u8 = 2;

/// The most hops a record keeps: a fat-tree path crosses five switches.
pub const MAX_HOPS: usize = 8;

/// One switch port's record in a packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet started leaving the port.
    pub ts: SimTime,
    /// Bytes the port had sent before this packet.
    pub tx_bytes: u64,
    /// Bytes queued at the port when the packet left (every class).
    pub qlen_bytes: u64,
    pub rate: BitsPerSec,
}

/// The records a packet carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Telemetry {
    hops: [IntHop; MAX_HOPS],
    n: u8,
    /// Hops past [`MAX_HOPS`], not kept.
    pub lost: u8,
}

impl Telemetry {
    /// Appends a hop (or counts it lost past [`MAX_HOPS`]).
    #[inline]
    pub fn push(&mut self, hop: IntHop) {
        if (self.n as usize) < MAX_HOPS {
            self.hops[self.n as usize] = hop;
            self.n += 1;
        } else {
            self.lost = self.lost.saturating_add(1);
        }
    }

    /// The hops, first switch first.
    #[inline]
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }

    /// Forgets every hop.
    #[inline]
    pub fn clear(&mut self) {
        self.n = 0;
        self.lost = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hops_are_kept_in_order_up_to_the_limit_and_the_rest_counted() {
        let mut t = Telemetry::default();
        for i in 0..MAX_HOPS as u64 + 2 {
            t.push(IntHop { tx_bytes: i, ..IntHop::default() });
        }
        assert_eq!(t.hops().iter().map(|h| h.tx_bytes).collect::<Vec<_>>(), (0..MAX_HOPS as u64).collect::<Vec<_>>());
        assert_eq!(t.lost, 2);
        t.clear();
        assert!(t.hops().is_empty() && t.lost == 0);
    }
}
