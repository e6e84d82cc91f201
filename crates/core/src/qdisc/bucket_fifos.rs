//! Packet storage shared by SFQ and DRR: `n` FIFOs of packets ([`BucketFifos`]), one per hash
//! bucket, all in one slab of cells.
//!
//! Rules:
//! - A FIFO is a doubly linked list of cells with its head, tail, length and bytes, so packets
//!   leave from either end (SFQ pushes out from the tail) and a FIFO's cells can be detached in
//!   order and linked again elsewhere (SFQ's perturbation).
//! - The totals over all FIFOs (packets, bytes) follow every link and unlink; a detached cell
//!   counts in no FIFO and in neither total until it is linked again or freed.
//! - Free cells form a list through `next`, the last freed reused first. The slab starts empty
//!   and grows only when every cell is in use (to the most packets the port ever held), so a
//!   port that never queues holds no cell, and after warm-up nothing is allocated per packet.
//! - [`NIL`] (`u32::MAX`) is "no cell"; the disciplines use it for "no bucket" too.
//!
//! FQ-CoDel keeps a store of its own (`fq_codel/mod.rs`): singly linked cells that carry the
//! enqueue time, with each queue's FIFO ends in its one-cache-line slot beside its CoDel state.

use super::framework::QPacket;
use crate::packet::Packet;

/// "No cell" / "no bucket".
pub(crate) const NIL: u32 = u32::MAX;

#[derive(Debug)]
struct Cell<P = Packet> {
    pkt: P,
    next: u32,
    prev: u32,
}

#[derive(Clone, Copy, Debug)]
struct Fifo {
    head: u32,
    tail: u32,
    len: u32,
    bytes: u64,
}

const EMPTY_FIFO: Fifo = Fifo { head: NIL, tail: NIL, len: 0, bytes: 0 };

/// `n` FIFOs of packets kept as doubly linked lists of cells in one slab. Free cells form a
/// list through `next`; the slab only grows when every cell is in use, so after warm-up no
/// operation allocates.
#[derive(Debug)]
pub(crate) struct BucketFifos<P = Packet> {
    cells: Vec<Cell<P>>,
    free: u32,
    /// The `n` FIFOs, allocated when the first packet is linked (empty until then: a port that
    /// never queues holds none); read through [`BucketFifos::fifo`].
    fifos: Vec<Fifo>,
    n: u32,
    total_pkts: usize,
    total_bytes: u64,
}

impl<P: QPacket> BucketFifos<P> {
    /// `n` empty FIFOs and an empty slab.
    pub(crate) fn new(n: u32) -> Self {
        BucketFifos {
            cells: Vec::new(),
            free: NIL,
            fifos: Vec::new(),
            n,
            total_pkts: 0,
            total_bytes: 0,
        }
    }
    /// FIFO `b` (an empty one before the first packet).
    #[inline]
    fn fifo(&self, b: u32) -> &Fifo {
        debug_assert!(b < self.n, "FIFO {b} of {}", self.n);
        self.fifos.get(b as usize).unwrap_or(&EMPTY_FIFO)
    }
    #[inline]
    pub(crate) fn len(&self, b: u32) -> u32 {
        self.fifo(b).len
    }
    #[inline]
    pub(crate) fn bytes(&self, b: u32) -> u64 {
        self.fifo(b).bytes
    }
    #[inline]
    pub(crate) fn total_pkts(&self) -> usize {
        self.total_pkts
    }
    #[inline]
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }
    #[inline]
    pub(crate) fn front(&self, b: u32) -> Option<&P> {
        let h = self.fifo(b).head;
        (h != NIL).then(|| &self.cells[h as usize].pkt)
    }
    /// The packet in cell `c` (a cell detached by [`BucketFifos::detach_all`]).
    #[inline]
    pub(crate) fn cell_pkt(&self, c: u32) -> &P {
        &self.cells[c as usize].pkt
    }

    fn alloc(&mut self, pkt: P) -> u32 {
        if self.free != NIL {
            let c = self.free;
            let cell = &mut self.cells[c as usize];
            self.free = cell.next;
            cell.pkt = pkt;
            c
        } else {
            self.cells.push(Cell { pkt, next: NIL, prev: NIL });
            (self.cells.len() - 1) as u32
        }
    }

    /// Frees cell `c` (detached from any FIFO) and returns its packet.
    pub(crate) fn free_cell(&mut self, c: u32) -> P {
        let cell = &mut self.cells[c as usize];
        let pkt = std::mem::take(&mut cell.pkt);
        cell.next = self.free;
        self.free = c;
        pkt
    }

    /// Links detached cell `c` at the tail of FIFO `b`.
    pub(crate) fn link_back(&mut self, b: u32, c: u32) {
        if self.fifos.is_empty() {
            self.allocate();
        }
        let size = self.cells[c as usize].pkt.size() as u64;
        let f = &mut self.fifos[b as usize];
        let old_tail = f.tail;
        f.tail = c;
        if old_tail == NIL {
            f.head = c;
        }
        f.len += 1;
        f.bytes += size;
        self.total_pkts += 1;
        self.total_bytes += size;
        let cell = &mut self.cells[c as usize];
        cell.prev = old_tail;
        cell.next = NIL;
        if old_tail != NIL {
            self.cells[old_tail as usize].next = c;
        }
    }

    #[cold]
    #[inline(never)]
    fn allocate(&mut self) {
        self.fifos = vec![EMPTY_FIFO; self.n as usize];
    }

    pub(crate) fn push_back(&mut self, b: u32, pkt: P) {
        let c = self.alloc(pkt);
        self.link_back(b, c);
    }

    /// Unlinks cell `c` from FIFO `b` (keeps the cell allocated).
    fn unlink(&mut self, b: u32, c: u32) {
        let (prev, next, size) = {
            let cell = &self.cells[c as usize];
            (cell.prev, cell.next, cell.pkt.size() as u64)
        };
        if prev != NIL {
            self.cells[prev as usize].next = next;
        }
        if next != NIL {
            self.cells[next as usize].prev = prev;
        }
        let f = &mut self.fifos[b as usize];
        if f.head == c {
            f.head = next;
        }
        if f.tail == c {
            f.tail = prev;
        }
        f.len -= 1;
        f.bytes -= size;
        self.total_pkts -= 1;
        self.total_bytes -= size;
    }

    pub(crate) fn pop_front(&mut self, b: u32) -> Option<P> {
        let c = self.fifo(b).head;
        if c == NIL {
            return None;
        }
        self.unlink(b, c);
        Some(self.free_cell(c))
    }

    pub(crate) fn pop_back(&mut self, b: u32) -> Option<P> {
        let c = self.fifo(b).tail;
        if c == NIL {
            return None;
        }
        self.unlink(b, c);
        Some(self.free_cell(c))
    }

    /// Detaches every cell of FIFO `b`, appending their indices in order to `out`; the FIFO is
    /// left empty and the cells stay allocated (relink them with `link_back` or free them).
    pub(crate) fn detach_all(&mut self, b: u32, out: &mut Vec<u32>) {
        if self.fifos.is_empty() {
            return;
        }
        let f = std::mem::replace(&mut self.fifos[b as usize], EMPTY_FIFO);
        let mut c = f.head;
        while c != NIL {
            out.push(c);
            c = self.cells[c as usize].next;
        }
        self.total_pkts -= f.len as usize;
        self.total_bytes -= f.bytes;
    }
}
