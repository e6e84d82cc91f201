use super::*;
use crate::rng::Streams;
use rand::Rng as _;

// --- DataSender ------------------------------------------------------------------------------
#[test]
fn sender_hands_out_consecutive_chunks_up_to_size() {
    let mut s = DataSender::new(Some(2500), 1 << 20);
    assert_eq!(s.take(1000), Some((0, 1000)));
    assert_eq!(s.take(1000), Some((1000, 1000)));
    assert_eq!(s.take(0), None);
    assert_eq!(s.take(1000), Some((2000, 500)));
    assert_eq!((s.take(1000), s.next_seq(), s.outstanding()), (None, 2500, 2500));
    assert!(!s.is_done());
    s.on_data_ack(2500, 1 << 20);
    assert!(s.is_done());
    // unlimited: never done, never short of data
    let mut u = DataSender::new(None, 3000);
    assert_eq!(u.take(u64::MAX), Some((0, 3000)));
    assert!(!u.is_done());
}

#[test]
fn the_shared_window_blocks_the_sender() {
    let mut s = DataSender::new(None, 4000);
    for k in 0..4 {
        assert_eq!(s.take(1000), Some((k * 1000, 1000)));
    }
    assert_eq!((s.take(1000), s.available()), (None, 0));
    // 1000 delivered, 1000 held out of order: the window is 4000 - 1000, right edge 4000
    s.on_data_ack(1000, 3000);
    assert_eq!(s.take(1000), None);
    // the rest delivered: the edge moves to 4000 + 4000
    s.on_data_ack(4000, 4000);
    assert_eq!(s.take(10_000), Some((4000, 4000)));
    // a smaller window or an older ACK never moves the edge left
    s.on_data_ack(5000, 1000);
    s.on_data_ack(3000, 0);
    assert_eq!((s.data_ack(), s.right_edge(), s.take(1)), (5000, 8000, None));
}

// --- Mapping ---------------------------------------------------------------------------------
#[test]
fn mappings_are_consumed_as_subflow_bytes_are_delivered() {
    let mut m = Mapping::new();
    m.push(0, 0, 1000);
    m.push(1000, 1000, 500); // continues the run in both spaces: merged
    m.push(1500, 4000, 1000); // a jump in data sequence: a new run
    m.push(2500, 6000, 200);
    let runs: Vec<MapRun> = m.runs().copied().collect();
    assert_eq!(
        runs,
        [
            MapRun { subflow_offset: 0, data_seq: 0, len: 1500 },
            MapRun { subflow_offset: 1500, data_seq: 4000, len: 1000 },
            MapRun { subflow_offset: 2500, data_seq: 6000, len: 200 },
        ]
    );
    let mut got = Vec::new();
    // 1200 subflow bytes delivered: data [0, 1200), the first run shortened
    m.consume(1200, |s, l| got.push((s, l)));
    assert_eq!(got, [(0, 1200)]);
    assert_eq!(m.runs().next(), Some(&MapRun { subflow_offset: 1200, data_seq: 1200, len: 300 }));
    // up to 2600: the end of run 1, all of run 2, 100 bytes of run 3
    got.clear();
    m.consume(2600, |s, l| got.push((s, l)));
    assert_eq!(got, [(1200, 300), (4000, 1000), (6000, 100)]);
    // nothing new delivered: nothing
    got.clear();
    m.consume(2600, |s, l| got.push((s, l)));
    assert!(got.is_empty());
    m.consume(2700, |s, l| got.push((s, l)));
    assert_eq!(got, [(6100, 100)]);
    assert_eq!((m.runs().count(), m.mapped_to(), m.consumed_to()), (0, 2700, 2700));
}

// --- DataReceiver ----------------------------------------------------------------------------
#[test]
fn in_order_and_out_of_order_data_from_two_subflows_reassemble() {
    let mut r = DataReceiver::new(10_000);
    // subflow A carries [0, 1000) and [2000, 3000), subflow B [1000, 2000) and [3000, 4000)
    assert_eq!(r.deliver(0, 1000), 1000);
    // B is faster from here: [3000, 4000) then [1000, 2000)
    assert_eq!(r.deliver(3000, 1000), 0);
    assert_eq!((r.data_ack(), r.ooo_bytes(), r.window()), (1000, 1000, 9000));
    assert_eq!(r.deliver(1000, 1000), 1000);
    assert_eq!((r.data_ack(), r.ooo_ranges()), (2000, &[(3000, 4000)][..]));
    // A's [2000, 3000) fills the hole: data ACK jumps to 4000, nothing held
    assert_eq!(r.deliver(2000, 1000), 2000);
    assert_eq!((r.data_ack(), r.ooo_bytes(), r.window()), (4000, 0, 10_000));
}

#[test]
fn out_of_order_ranges_merge_and_duplicates_are_ignored() {
    let mut r = DataReceiver::new(100_000);
    r.deliver(5000, 1000);
    r.deliver(8000, 1000);
    r.deliver(2000, 1000);
    assert_eq!(r.ooo_ranges(), &[(2000, 3000), (5000, 6000), (8000, 9000)]);
    // adjacent on both sides: [3000, 5000) joins the first two
    r.deliver(3000, 2000);
    assert_eq!(r.ooo_ranges(), &[(2000, 6000), (8000, 9000)]);
    // overlapping both: [5500, 8500) joins everything; bytes counted once
    r.deliver(5500, 3000);
    assert_eq!((r.ooo_ranges(), r.ooo_bytes()), (&[(2000, 9000)][..], 7000));
    // a duplicate inside a held range changes nothing
    r.deliver(4000, 100);
    assert_eq!((r.ooo_ranges(), r.ooo_bytes(), r.window()), (&[(2000, 9000)][..], 7000, 93_000));
    // in-order data overlapping the held range: all delivered once
    assert_eq!(r.deliver(0, 2500), 9000);
    assert_eq!((r.data_ack(), r.ooo_bytes()), (9000, 0));
    // old data below the data ACK is ignored, partly old data only counts its new part
    assert_eq!(r.deliver(100, 500), 0);
    assert_eq!(r.deliver(8500, 1000), 500);
    assert_eq!(r.data_ack(), 9500);
}

/// A connection of two subflows whose byte streams arrive in random interleavings and random
/// amounts: every data byte is handed out once, delivered once, in the right place, and the
/// shared window is never exceeded.
#[test]
fn seeded_interleavings_lose_and_duplicate_nothing() {
    const SIZE: u64 = 300_000;
    const BUF: u64 = 20_000;
    for seed in 0..20 {
        let mut rng = Streams::new(seed).stream("mptcp.data.test", 0);
        let mut snd = DataSender::new(Some(SIZE), BUF);
        let mut rcv = DataReceiver::new(BUF);
        let mut maps = [Mapping::new(), Mapping::new()];
        // bytes each subflow has been given (written) and has delivered in order
        let mut written = [0u64; 2];
        let mut delivered = [0u64; 2];
        let mut seen = vec![0u8; SIZE as usize];
        let mut steps = 0;
        while !snd.is_done() {
            steps += 1;
            assert!(steps < 1_000_000, "seed {seed} stuck at data ACK {}", rcv.data_ack());
            if rng.gen_bool(0.5) {
                // the application side: a chunk to a random subflow
                let f = rng.gen_range(0..2);
                if let Some((seq, len)) = snd.take(rng.gen_range(1..=1460)) {
                    assert!(seq + len <= rcv.data_ack() + BUF, "handed out beyond the shared buffer");
                    maps[f].push(written[f], seq, len);
                    written[f] += len;
                }
            } else {
                // the network: one subflow delivers some of its bytes in order
                let f = rng.gen_range(0..2);
                let d = (delivered[f] + rng.gen_range(0..=3000)).min(written[f]);
                delivered[f] = d;
                maps[f].consume(d, |seq, len| {
                    for b in &mut seen[seq as usize..(seq + len) as usize] {
                        *b += 1;
                    }
                    rcv.deliver(seq, len);
                });
                assert!(rcv.window() <= BUF);
                snd.on_data_ack(rcv.data_ack(), rcv.window());
            }
        }
        assert_eq!((rcv.data_ack(), rcv.ooo_bytes()), (SIZE, 0));
        assert!(seen.iter().all(|&n| n == 1), "seed {seed}: a byte delivered other than once");
        assert_eq!(written[0] + written[1], SIZE);
        for (f, m) in maps.iter().enumerate() {
            assert_eq!((m.runs().count(), m.consumed_to()), (0, written[f]));
        }
    }
}
