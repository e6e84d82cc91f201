//! Where the simulator's packets live: one slab, from the sending host to delivery or drop;
//! port queues hold [`PktRef`]s, small stand-ins for the packets in it.
//!
//! Rules:
//! - A packet enters the [`Slab`] when its host emits it and leaves it when it is delivered to a
//!   host or dropped (by a discipline, or for want of a route). Its handle (`u32`) does not
//!   change in between: routing, FairQ's rewrites and ECN marks change the packet in place.
//! - A port's discipline stores a [`PktRef`]: the handle plus a copy of the header fields a
//!   discipline reads ([`QPacket`]), 32 bytes instead of the packet's 152. The copy is taken
//!   when the packet is offered to the port (after routing and FairQ have changed it) and no
//!   field of the copy except `ecn` and `size` changes while it is queued. A CE mark set on the
//!   copy is written back to the packet when the port dequeues it ([`Slab::launch`]);
//!   disciplines only ever set CE, so writing CE when the copy says CE is exact. A smaller
//!   `size` is a trim (`QPacket::trim`), written back the same way.
//! - Every [`PktRef`] a discipline reports in `QdiscEvents::dropped` frees its slot at once; a
//!   slot's packet is stale after it is freed and is overwritten when the slot is reused.
//! - Handles are not part of any ordering (events tie by time, tie key and insertion), so the
//!   reuse order of free slots cannot change results.

use dcfair_core::packet::{flow_key_of, Addr, Ecn, Packet, Proto};
use dcfair_core::qdisc::{AnyQdisc, QPacket, QdiscEvents, Queue};

/// The queue type of every simulated port.
pub type SimQueue = Queue<AnyQdisc<PktRef>>;

/// A queued packet: its slab handle and the header fields a discipline reads.
///
/// Every field is a whole aligned word: the ports, ingress, protocol and ECN codepoint are
/// packed into one `u64` (`ports`, read through [`QPacket`]). With byte-sized fields at the
/// end, the compiler would split the copies a queue's dequeue makes into a lone byte and a
/// 15-byte rest moved as two overlapping 8-byte halves, which the processor cannot forward
/// from a store to the next load (docs/performance.md, "Where the engine's time goes").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PktRef {
    pub priority: u64,
    /// Slot in the engine's [`Slab`].
    pub handle: u32,
    pub size: u32,
    pub src: Addr,
    pub dst: Addr,
    /// `sport | dport << 16 | ingress << 32 | proto << 48 | ecn << 56`.
    ports: u64,
}

const ECN_SHIFT: u32 = 56;

impl PktRef {
    /// The stand-in for `pkt`, stored in slot `handle`.
    #[inline(always)]
    pub fn of(handle: u32, pkt: &Packet) -> PktRef {
        PktRef {
            priority: pkt.priority,
            handle,
            size: pkt.size,
            src: pkt.src,
            dst: pkt.dst,
            ports: pkt.sport as u64
                | (pkt.dport as u64) << 16
                | (pkt.ingress as u64) << 32
                | (pkt.proto as u64) << 48
                | (pkt.ecn as u64) << ECN_SHIFT,
        }
    }
    #[inline(always)]
    fn sport(&self) -> u16 {
        self.ports as u16
    }
    #[inline(always)]
    fn dport(&self) -> u16 {
        (self.ports >> 16) as u16
    }
}

impl QPacket for PktRef {
    #[inline(always)]
    fn size(&self) -> u32 {
        self.size
    }
    #[inline(always)]
    fn flow_key(&self) -> u64 {
        flow_key_of(self.src, self.dst, self.sport(), self.dport(), self.proto())
    }
    #[inline(always)]
    fn ecn(&self) -> Ecn {
        Ecn::from_bits((self.ports >> ECN_SHIFT) as u8)
    }
    #[inline(always)]
    fn set_ecn(&mut self, ecn: Ecn) {
        self.ports = self.ports & !(0xff << ECN_SHIFT) | (ecn as u64) << ECN_SHIFT;
    }
    #[inline(always)]
    fn priority(&self) -> u64 {
        self.priority
    }
    #[inline(always)]
    fn ingress(&self) -> u16 {
        (self.ports >> 32) as u16
    }
    #[inline(always)]
    fn proto(&self) -> Proto {
        match (self.ports >> 48) as u8 {
            6 => Proto::Tcp,
            17 => Proto::Udp,
            200 => Proto::Ndp,
            _ => Proto::Credit,
        }
    }
    #[inline(always)]
    fn src(&self) -> Addr {
        self.src
    }
    #[inline(always)]
    fn dst(&self) -> Addr {
        self.dst
    }
    /// Only `size` changes here; [`Slab::launch`] writes the trim to the packet.
    fn trim(&mut self, size: u32) {
        self.size = size;
    }
}

/// A packet in the slab, with the node and local port it arrives at next (set when a port puts
/// it on the wire, so that an arrival needs no look-up in the node arena) and the routing
/// column of its destination (set when it is emitted, so that a switch reads its next hop in
/// one load: `Routes::column`).
///
/// Aligned to a cache line, with these three fields first (8 bytes, the packet's alignment): together with the packet's hop
/// fields (the first 40 bytes of [`Packet`]) they make everything a hop through a switch
/// touches (arrival, routing, the [`PktRef`] taken for the discipline, [`Slab::launch`]) one
/// line. Unaligned, one record in two would split that line.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct InFlight {
    pub node: u32,
    pub port: u16,
    pub col: u16,
    pub pkt: Packet,
}

/// Every packet between its emission and its delivery or drop.
#[derive(Debug, Default)]
pub(crate) struct Slab {
    pub items: Vec<InFlight>,
    free: Vec<u32>,
}

impl Slab {
    /// Stores a packet just emitted by a host, with the routing column of its destination;
    /// returns its stand-in.
    #[inline]
    pub fn insert(&mut self, pkt: Packet, col: u16) -> PktRef {
        match self.free.pop() {
            Some(h) => {
                let f = &mut self.items[h as usize];
                f.pkt = pkt;
                f.col = col;
                PktRef::of(h, &f.pkt)
            }
            None => {
                let h = self.items.len() as u32;
                let r = PktRef::of(h, &pkt);
                self.items.push(InFlight { pkt, node: 0, port: 0, col });
                r
            }
        }
    }
    /// The packet in slot `h`.
    #[inline(always)]
    pub fn pkt(&self, h: u32) -> &Packet {
        &self.items[h as usize].pkt
    }
    /// A port dequeued `r`: write back its CE mark and where it arrives (a trim is written back
    /// by the engine, in runs that trim: [`Slab::write_trim`]).
    #[inline]
    pub fn launch(&mut self, r: &PktRef, node: u32, port: u16) {
        let f = &mut self.items[r.handle as usize];
        if r.ecn() == Ecn::Ce {
            f.pkt.ecn = Ecn::Ce;
        }
        f.node = node;
        f.port = port;
    }
    /// A port dequeued `r` in a run whose ports trim: its size, smaller if it was trimmed.
    #[inline]
    pub fn write_trim(&mut self, r: &PktRef) {
        self.items[r.handle as usize].pkt.size = r.size;
    }
    /// Frees slot `h` (the packet was dropped or delivered).
    #[inline]
    pub fn free(&mut self, h: u32) {
        self.free.push(h);
    }
    /// Frees the slot of every packet a queue call reported dropped, emptying the list.
    #[inline]
    pub fn free_dropped(&mut self, ev: &mut QdiscEvents<PktRef>) {
        for d in ev.dropped.drain(..) {
            self.free.push(d.pkt.handle);
        }
    }
    /// Takes the packet of slot `h` out (to another part's slab: `engine/windows.rs`), freeing
    /// the slot.
    pub fn take(&mut self, h: u32) -> InFlight {
        self.free.push(h);
        self.items[h as usize].clone()
    }
    /// Stores a packet taken out of another slab, with where it arrives; returns its slot.
    pub fn put(&mut self, f: InFlight) -> u32 {
        match self.free.pop() {
            Some(h) => {
                self.items[h as usize] = f;
                h
            }
            None => {
                self.items.push(f);
                self.items.len() as u32 - 1
            }
        }
    }
    /// Slots in use.
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcfair_core::packet::Packet;

    fn pkt(src: u32, sport: u16) -> Packet {
        Packet { src, dst: 9, sport, dport: 80, size: 1500, priority: 77, ingress: 3, ecn: Ecn::Ect0, ..Default::default() }
    }

    #[test]
    fn the_ref_answers_as_its_packet() {
        let mut s = Slab::default();
        for (src, sport, proto) in [(1, 10, Proto::Tcp), (2, 10, Proto::Udp), (1, 11, Proto::Credit), (u32::MAX, u16::MAX, Proto::Tcp)] {
            let p = Packet { proto, dport: u16::MAX - sport, ..pkt(src, sport) };
            let r = s.insert(p.clone(), 0);
            assert_eq!(QPacket::flow_key(&r), QPacket::flow_key(&p));
            assert_eq!((r.size(), r.priority(), r.ingress(), r.src(), r.dst()), (1500, 77, 3, src, 9));
            assert_eq!((r.proto(), r.ecn()), (p.proto, Ecn::Ect0));
            for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
                let mut m = r;
                m.set_ecn(e);
                assert_eq!((m.ecn(), m.proto(), m.ingress(), QPacket::flow_key(&m)), (e, p.proto, 3, QPacket::flow_key(&p)));
            }
            assert_eq!(s.pkt(r.handle), &p);
        }
        assert!(std::mem::size_of::<PktRef>() <= 32);
    }

    #[test]
    fn a_hop_touches_one_cache_line_of_the_slab() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<InFlight>(), 64);
        assert_eq!(size_of::<InFlight>() % 64, 0);
        let pkt = offset_of!(InFlight, pkt);
        // the record's own fields fit the packet's alignment: its other lines start where a
        // bare packet's would (a transport reads the first two of its three)
        assert_eq!(pkt, 8);
        // every packet field a switch hop reads or writes, and the record's own
        let ends = [
            offset_of!(InFlight, node) + 4,
            offset_of!(InFlight, port) + 2,
            offset_of!(InFlight, col) + 2,
            pkt + offset_of!(Packet, dst) + 4,
            pkt + offset_of!(Packet, src) + 4,
            pkt + offset_of!(Packet, sport) + 2,
            pkt + offset_of!(Packet, dport) + 2,
            pkt + offset_of!(Packet, size) + 4,
            pkt + offset_of!(Packet, ingress) + 2,
            pkt + offset_of!(Packet, proto) + 1,
            pkt + offset_of!(Packet, ecn) + 1,
            pkt + offset_of!(Packet, hops) + 1,
            pkt + offset_of!(Packet, via) + 4,
            pkt + offset_of!(Packet, priority) + 8,
        ];
        assert!(ends.iter().all(|&e| e <= 64), "hop fields end at {ends:?}");
        assert_eq!(size_of::<Packet>(), 152, "the size the module documentation states");
    }

    #[test]
    fn a_mark_on_the_ref_reaches_the_packet_at_launch_and_slots_are_reused() {
        let mut s = Slab::default();
        let mut a = s.insert(pkt(1, 1), 0);
        let b = s.insert(pkt(2, 2), 0);
        a.set_ecn(Ecn::Ce);
        s.launch(&a, 5, 6);
        s.launch(&b, 7, 8);
        assert_eq!(s.pkt(a.handle).ecn, Ecn::Ce);
        assert_eq!(s.pkt(b.handle).ecn, Ecn::Ect0);
        assert_eq!((s.items[a.handle as usize].node, s.items[a.handle as usize].port), (5, 6));
        assert_eq!(s.live(), 2);
        s.free(a.handle);
        assert_eq!(s.pkt(b.handle).src, 2);
        s.free(b.handle);
        assert_eq!(s.live(), 0);
        let c = s.insert(pkt(3, 3), 0);
        assert!(c.handle == a.handle || c.handle == b.handle);
        assert_eq!(s.items.len(), 2);
    }
}
