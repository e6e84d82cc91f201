//! The sender's SACK scoreboard (RFC 6675 section 3): which octets above `HighACK` the receiver
//! has selectively acknowledged, and the queries loss recovery asks of it.
//!
//! Rules:
//! - The scoreboard holds sorted, disjoint, non-adjacent half-open ranges `[start, end)` of
//!   payload octets, all at or above the cumulative ACK. It is a `Vec` allocated once with room
//!   for `capacity + 1` ranges, so updating it never allocates. When a new block would make more
//!   than `capacity` ranges the highest range is forgotten: its octets then count as not
//!   SACKed (they may be retransmitted needlessly and counted in `pipe`, never skipped by
//!   mistake). The sender picks a capacity that covers its largest window.
//! - [`Scoreboard::advance`] moves the cumulative edge. A SACKed range that the new
//!   cumulative ACK reaches into without covering (`start <= ack < end`) means the receiver
//!   has discarded data it had SACKed (reneging, RFC 2018 section 8): it returns `true`, and the
//!   sender clears the scoreboard.
//! - `IsLost(seq)` (RFC 6675 section 4): an unSACKed octet is lost when `DupThresh` SACKed
//!   ranges ("discontiguous SACKed sequences") lie above it, or more than `(DupThresh - 1) *
//!   SMSS` SACKed octets do. Both counts only shrink as `seq` grows, so the lost octets are
//!   exactly the unSACKed octets below one edge, [`Scoreboard::lost_edge`] (the start of a
//!   range, or `None` when nothing is lost); one pass over the ranges from the top finds it.
//! - `pipe` (RFC 6675 `SetPipe()`, octet form): over the unSACKed octets in
//!   `[HighACK, HighData)`, one for each octet not lost, plus one for each octet below `HighRxt`
//!   (retransmitted). [`Scoreboard::pipe`] computes it from the lost edge in one pass.
//! - Cost: every query is one pass over the ranges, O(ranges); nothing allocates.
//!
//! The recovery algorithm that uses these queries (`NextSeg()`, entering and leaving recovery)
//! is in `sender/sack_recovery.rs`; `docs/tcp.md` has the whole model.

/// SACKed ranges above the cumulative ACK.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    ranges: Vec<(u64, u64)>,
    capacity: usize,
    /// Sum of the ranges' lengths.
    sacked: u64,
}

impl Scoreboard {
    /// A scoreboard of at most `capacity` ranges (at least 1); allocates once.
    pub fn with_capacity(capacity: usize) -> Scoreboard {
        let capacity = capacity.max(1);
        Scoreboard { ranges: Vec::with_capacity(capacity + 1), capacity, sacked: 0 }
    }

    /// Forgets everything (after a retransmission timeout, or reneging).
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.sacked = 0;
    }
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    /// The ranges, lowest first.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }
    /// Most ranges kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// SACKed octets in total.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }
    /// One past the highest SACKed octet (RFC 6675's "highest octet covered by any SACK").
    pub fn high_sacked(&self) -> Option<u64> {
        self.ranges.last().map(|&(_, e)| e)
    }

    /// The cumulative ACK moved to `ack`: drops what it covers. Returns `true` if the receiver
    /// reneged (`ack` falls inside a SACKed range, or at its start); the caller then clears.
    pub fn advance(&mut self, ack: u64) -> bool {
        let reneged = self.ranges.iter().any(|&(s, e)| s <= ack && ack < e);
        let k = self.ranges.partition_point(|&(_, e)| e <= ack);
        for &(s, e) in &self.ranges[..k] {
            self.sacked -= e - s;
        }
        self.ranges.drain(..k);
        reneged
    }

    /// Records the SACKed range `[s, e)` (already clipped by the caller to outstanding data).
    /// Returns the octets it SACKed that were not SACKed before.
    pub fn insert(&mut self, s: u64, e: u64) -> u64 {
        if s >= e {
            return 0;
        }
        let before = self.sacked;
        // ranges i..j overlap or touch [s, e)
        let i = self.ranges.partition_point(|&(_, end)| end < s);
        let j = i + self.ranges[i..].partition_point(|&(start, _)| start <= e);
        if i == j {
            self.ranges.insert(i, (s, e));
            self.sacked += e - s;
        } else {
            let (ns, ne) = (s.min(self.ranges[i].0), e.max(self.ranges[j - 1].1));
            for &(a, b) in &self.ranges[i..j] {
                self.sacked -= b - a;
            }
            self.ranges[i] = (ns, ne);
            self.ranges.drain(i + 1..j);
            self.sacked += ne - ns;
        }
        let new = self.sacked - before;
        if self.ranges.len() > self.capacity {
            let (a, b) = self.ranges.pop().expect("over capacity means not empty");
            self.sacked -= b - a;
        }
        new
    }

    /// Whether octet `seq` is SACKed.
    pub fn is_sacked(&self, seq: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        self.ranges.get(i).is_some_and(|&(s, _)| s <= seq)
    }

    /// The first unSACKed octet at or after `from`, and where its unSACKed run ends: the start
    /// of the next SACKed range, or `None` if no range lies above (the run is open-ended).
    pub fn unsacked_run(&self, from: u64) -> (u64, Option<u64>) {
        let i = self.ranges.partition_point(|&(_, e)| e <= from);
        match self.ranges.get(i) {
            Some(&(s, e)) if s <= from => (e, self.ranges.get(i + 1).map(|r| r.0)),
            Some(&(s, _)) => (from, Some(s)),
            None => (from, None),
        }
    }

    /// UnSACKed octets in `[a, b)`.
    pub fn unsacked_between(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let mut covered = 0;
        let i = self.ranges.partition_point(|&(_, e)| e <= a);
        for &(s, e) in &self.ranges[i..] {
            if s >= b {
                break;
            }
            covered += e.min(b) - s.max(a);
        }
        (b - a) - covered
    }

    /// RFC 6675 `IsLost(seq)` for an unSACKed octet `seq`, straight from the definition.
    pub fn is_lost(&self, seq: u64, dupthresh: u32, mss: u64) -> bool {
        let (mut n, mut bytes) = (0u64, 0u64);
        for &(s, e) in self.ranges.iter().rev() {
            if s <= seq {
                break;
            }
            n += 1;
            bytes += e - s;
        }
        n >= dupthresh as u64 || bytes > (dupthresh as u64 - 1) * mss
    }

    /// The edge below which every unSACKed octet is lost (`IsLost` true) and above which none
    /// is; `None` when nothing is lost.
    pub fn lost_edge(&self, dupthresh: u32, mss: u64) -> Option<u64> {
        let (mut n, mut bytes) = (0u64, 0u64);
        for &(s, e) in self.ranges.iter().rev() {
            n += 1;
            bytes += e - s;
            if n >= dupthresh as u64 || bytes > (dupthresh as u64 - 1) * mss {
                return Some(s);
            }
        }
        None
    }

    /// RFC 6675 `SetPipe()`: octets in `[una, high_data)` presumed in the network, given
    /// `high_rxt` (one past the highest retransmitted octet) and the loss edge.
    pub fn pipe(&self, una: u64, high_data: u64, high_rxt: u64, dupthresh: u32, mss: u64) -> u64 {
        let lost_edge = self.lost_edge(dupthresh, mss).unwrap_or(una).clamp(una, high_data.max(una));
        self.unsacked_between(lost_edge, high_data) + self.unsacked_between(una, high_rxt.min(high_data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MSS: u64 = 100;

    fn board(ranges: &[(u64, u64)]) -> Scoreboard {
        let mut b = Scoreboard::with_capacity(64);
        for &(s, e) in ranges {
            b.insert(s * MSS, e * MSS);
        }
        b
    }

    // --- ranges -------------------------------------------------------------------------------
    #[test]
    fn insert_merges_and_counts_only_new_octets() {
        let mut b = Scoreboard::with_capacity(8);
        assert_eq!(b.insert(10, 20), 10);
        assert_eq!(b.insert(30, 40), 10);
        assert_eq!(b.insert(15, 20), 0, "already SACKed");
        assert_eq!(b.insert(20, 30), 10, "joins both neighbours");
        assert_eq!(b.ranges(), [(10, 40)]);
        assert_eq!(b.insert(5, 45), 10);
        assert_eq!(b.insert(7, 7), 0);
        assert_eq!((b.ranges(), b.sacked_bytes(), b.high_sacked()), (&[(5, 45)][..], 40, Some(45)));
        assert!(b.is_sacked(5) && b.is_sacked(44) && !b.is_sacked(45) && !b.is_sacked(4));
    }

    #[test]
    fn advance_drops_covered_ranges_and_detects_reneging() {
        let mut b = board(&[(2, 3), (5, 7)]);
        assert!(!b.advance(MSS), "below every range");
        assert!(!b.advance(3 * MSS), "covers the first range exactly");
        assert_eq!(b.ranges(), [(500, 700)]);
        assert_eq!(b.sacked_bytes(), 200);
        // the cumulative ACK stops at (or inside) a SACKed range: the receiver reneged
        assert!(b.clone().advance(5 * MSS));
        assert!(b.clone().advance(6 * MSS));
        assert!(!b.advance(7 * MSS));
        assert!(b.is_empty());
        assert_eq!(b.sacked_bytes(), 0);
    }

    #[test]
    fn a_full_scoreboard_forgets_its_highest_range_and_never_grows() {
        let mut b = Scoreboard::with_capacity(3);
        let cap = b.ranges.capacity();
        for k in 0..6 {
            b.insert((2 * k + 1) * MSS, (2 * k + 2) * MSS);
        }
        assert_eq!(b.ranges(), [(100, 200), (300, 400), (500, 600)]);
        assert_eq!(b.sacked_bytes(), 300);
        // a block below the others still goes in, and the highest goes out
        b.insert(0, 50);
        assert_eq!(b.ranges(), [(0, 50), (100, 200), (300, 400)]);
        assert_eq!(b.ranges.capacity(), cap, "no reallocation");
    }

    #[test]
    fn unsacked_runs_and_counts() {
        let b = board(&[(2, 3), (5, 7)]);
        assert_eq!(b.unsacked_run(0), (0, Some(200)));
        assert_eq!(b.unsacked_run(250), (300, Some(500)));
        assert_eq!(b.unsacked_run(300), (300, Some(500)));
        assert_eq!(b.unsacked_run(600), (700, None));
        assert_eq!(b.unsacked_run(900), (900, None));
        assert_eq!(b.unsacked_between(0, 1000), 700);
        assert_eq!(b.unsacked_between(250, 550), 200);
        assert_eq!(b.unsacked_between(550, 250), 0);
    }

    // --- IsLost and pipe (RFC 6675 section 4) ------------------------------------------------------
    #[test]
    fn is_lost_needs_dupthresh_ranges_or_more_than_dupthresh_minus_one_segments() {
        // three separate SACKed segments above 0: lost by the count
        let b = board(&[(1, 2), (3, 4), (5, 6)]);
        assert!(b.is_lost(0, 3, MSS));
        assert!(!b.is_lost(2 * MSS, 3, MSS), "two ranges, two segments above");
        assert_eq!(b.lost_edge(3, MSS), Some(100));
        // one range of three segments: lost by the bytes (300 > 2 * 100)
        let b = board(&[(1, 4)]);
        assert!(b.is_lost(0, 3, MSS));
        assert_eq!(b.lost_edge(3, MSS), Some(100));
        // exactly two segments SACKed above: not lost
        let b = board(&[(1, 3)]);
        assert!(!b.is_lost(0, 3, MSS));
        assert_eq!(b.lost_edge(3, MSS), None);
        // small SACKed pieces: three ranges of 10 bytes still make a loss (the count rule)
        let mut b = Scoreboard::with_capacity(8);
        for s in [100, 200, 300] {
            b.insert(s, s + 10);
        }
        assert!(b.is_lost(50, 3, MSS));
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_plus_retransmitted() {
        // 10 segments out, 0..10; SACKed 4, 6 and 7: above 3 lie two ranges of 300 octets
        // (> 2 SMSS), so 0..4 are lost; 5 lies below only 200 SACKed octets in one range
        let b = board(&[(4, 5), (6, 8)]);
        assert_eq!(b.lost_edge(3, MSS), Some(400));
        let (una, high) = (0, 10 * MSS);
        // not lost, unSACKed: 5, 8 and 9
        assert_eq!(b.pipe(una, high, una, 3, MSS), 300);
        // after retransmitting 0 and 1, they count again
        assert_eq!(b.pipe(una, high, 2 * MSS, 3, MSS), 500);
        // a retransmission of a not-lost octet counts twice (RFC 6675 SetPipe rule (b)): 5
        assert_eq!(b.pipe(una, high, 6 * MSS, 3, MSS), 300 + 500);
        // nothing SACKed: pipe is the whole flight (the identity with FlightSize)
        let e = Scoreboard::with_capacity(4);
        assert_eq!(e.pipe(una, high, una, 3, MSS), high - una);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        /// The one-pass queries agree with RFC 6675's octet-by-octet definitions.
        #[test]
        fn queries_agree_with_the_octet_definitions(
            blocks in proptest::collection::vec((0u64..60, 1u64..8), 0..12),
            dupthresh in 1u32..5,
            rxt in 0u64..70,
        ) {
            let mut b = Scoreboard::with_capacity(64);
            let mut octets = [false; 70];
            for &(s, len) in &blocks {
                let e = (s + len).min(70);
                b.insert(s, e);
                for o in &mut octets[s as usize..e as usize] {
                    *o = true;
                }
            }
            let mss = 3;
            prop_assert_eq!(b.sacked_bytes(), octets.iter().filter(|&&x| x).count() as u64);
            let edge = b.lost_edge(dupthresh, mss);
            let mut pipe = 0;
            for o in 0..70u64 {
                prop_assert_eq!(b.is_sacked(o), octets[o as usize]);
                if octets[o as usize] {
                    continue;
                }
                let lost = b.is_lost(o, dupthresh, mss);
                prop_assert_eq!(lost, edge.is_some_and(|l| o < l), "octet {}", o);
                pipe += !lost as u64 + (o < rxt) as u64;
            }
            prop_assert_eq!(b.pipe(0, 70, rxt, dupthresh, mss), pipe);
            // RFC 6675 (C.4): sending a segment adds its length to pipe. A retransmission of
            // the unSACKed run at HighRxt (rules 1 and 3) moves HighRxt over it; new data
            // (rule 2) moves HighData, with nothing SACKed above it
            let (s, next) = b.unsacked_run(rxt);
            let e = (s + mss).min(next.unwrap_or(70)).min(70);
            if s < e {
                prop_assert_eq!(b.pipe(0, 70, e, dupthresh, mss), pipe + (e - s));
            }
            prop_assert_eq!(b.pipe(0, 75, rxt, dupthresh, mss), pipe + 5);
            // runs: the first unSACKed octet at or after k and the next SACKed start
            for k in 0..70u64 {
                let (u, next) = b.unsacked_run(k);
                let want = (k..).find(|&o| o >= 70 || !octets[o as usize]).unwrap();
                prop_assert_eq!(u, want);
                let want_next = (u..70).find(|&o| octets[o as usize]);
                prop_assert_eq!(next, want_next);
            }
        }
    }
}
