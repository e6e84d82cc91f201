//! Endless flows, determinism, and every byte delivered exactly once under any loss.

use super::*;

// --- endless flows --------------------------------------------------------------------------------
#[test]
fn an_endless_flow_fills_the_bottleneck_and_never_sends_a_fin() {
    let cfg = TcpConfig { rcv_buf_bytes: 1 << 20, ..nohs() };
    let mut net = Net::new(&cfg, None, us(50));
    net.rate = Some(BitsPerSec(100_000_000));
    net.start();
    net.run(secs(1), 10_000_000);
    assert!(!net.snd.is_done());
    assert_eq!(net.count_flag(Dir::Fwd, flags::FIN), 0);
    // 100 Mbps for 1 s is 8.33 k full segments (1500 B on the wire); allow slow start
    let got = net.rcv.delivered_bytes();
    assert!(got > 12_000_000 && got <= 12_166_000, "{got}");
}

// --- determinism ------------------------------------------------------------------------------
#[test]
fn same_inputs_same_packets() {
    let cfg = TcpConfig { delayed_ack: true, ..Default::default() };
    let trace = |seed| {
        let mut net = lossy(seed, 0.1, &cfg, 300 * MSS);
        run_to_end(&mut net);
        net.log.iter().map(|s| (s.t, s.dir == Dir::Fwd, s.pkt.seq, s.pkt.ack, s.pkt.flags, s.dropped)).collect::<Vec<_>>()
    };
    assert_eq!(trace(3), trace(3));
    assert_ne!(trace(3), trace(4));
}

// --- delivery under loss --------------------------------------------------------------------------------
#[derive(Clone, Debug)]
enum Loss {
    /// Every packet (both directions) lost with this probability.
    Bernoulli(f64),
    /// Gilbert-style bursts: a loss starts with this probability and lasts 1..=4 packets.
    Bursts(f64),
    /// The n-th packets offered (both directions counted together).
    Listed(Vec<u16>),
}

impl Loss {
    /// The channel's drop function for this loss pattern (seeded stream `tcp.test.loss`).
    fn drop_fn(self, seed: u64) -> crate::tcp::testnet::DropFn {
        let mut rng = Streams::new(seed).stream("tcp.test.loss", 0);
        let mut burst_left = 0u32;
        let mut n = 0u16;
        match self {
            Loss::Bernoulli(p) => Box::new(move |_, _, _| rng.gen::<f64>() < p),
            Loss::Bursts(p) => Box::new(move |_, _, _| {
                if burst_left == 0 && rng.gen::<f64>() < p {
                    burst_left = rng.gen_range(1..=4);
                }
                let d = burst_left > 0;
                burst_left = burst_left.saturating_sub(1);
                d
            }),
            Loss::Listed(list) => Box::new(move |_, _, _| {
                n = n.saturating_add(1);
                list.contains(&(n - 1))
            }),
        }
    }
}

fn loss_strategy() -> impl Strategy<Value = Loss> {
    prop_oneof![
        (0.0f64..0.3).prop_map(Loss::Bernoulli),
        (0.0f64..0.1).prop_map(Loss::Bursts),
        proptest::collection::vec(0u16..400, 0..30).prop_map(Loss::Listed),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn every_byte_is_delivered_exactly_once_in_order(
        seed in any::<u64>(),
        loss in loss_strategy(),
        reno in any::<bool>(),
        delayed_ack in any::<bool>(),
        handshake in any::<bool>(),
        size in 0u64..120_000,
        rate in prop_oneof![Just(None), Just(Some(BitsPerSec::from_gbps(1))), Just(Some(BitsPerSec(100_000_000)))],
        (mss_bytes, rcv_buf_bytes) in (prop_oneof![Just(536u32), Just(1460), Just(9000)], prop_oneof![Just(3000u64), Just(65535), Just(1 << 20)]),
        (init_cwnd_pkts, limited_transmit, timestamps) in (1u32..5, any::<bool>(), any::<bool>()),
    ) {
        let cfg = TcpConfig {
            cc: if reno { CcKind::Reno } else { CcKind::Newreno },
            delayed_ack,
            handshake,
            mss_bytes,
            rcv_buf_bytes,
            init_cwnd_pkts,
            limited_transmit,
            timestamps,
            ..Default::default()
        };
        let mut net = Net::new(&cfg, Some(size), us(20));
        net.rate = rate;
        net.drop = loss.drop_fn(seed);
        net.start();
        net.run(SimTime::MAX, 3_000_000);
        // (the harness checked after every event: delivered == received prefix, and new
        // data never beyond min(cwnd, rwnd))
        prop_assert!(net.snd.is_done(), "not done: {:?} at {}", net.snd.stats(), net.now);
        prop_assert_eq!(net.rcv.delivered_bytes(), size);
        prop_assert!(net.rcv.fin_received());
        prop_assert_eq!(net.snd.stats().bytes_acked, size);
        prop_assert!(net.max_flight <= cfg.rcv_buf_bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
    /// The same channel checks with SACK (pipe within cwnd when new data leaves) and/or
    /// pacing: every byte arrives exactly once, in order, whatever is lost in either direction.
    #[test]
    fn with_sack_or_pacing_every_byte_is_delivered_exactly_once_in_order(
        seed in any::<u64>(),
        loss in loss_strategy(),
        reno in any::<bool>(),
        delayed_ack in any::<bool>(),
        handshake in any::<bool>(),
        size in 0u64..120_000,
        rate in prop_oneof![Just(None), Just(Some(BitsPerSec(100_000_000)))],
        (mss_bytes, rcv_buf_bytes) in (prop_oneof![Just(536u32), Just(1460)], prop_oneof![Just(3000u64), Just(65535), Just(1 << 20)]),
        (init_cwnd_pkts, limited_transmit) in (1u32..5, any::<bool>()),
        (sack, pacing) in prop_oneof![Just((true, false)), Just((true, true)), Just((false, true))],
    ) {
        let cfg = TcpConfig {
            cc: if reno { CcKind::Reno } else { CcKind::Newreno },
            sack,
            pacing,
            delayed_ack,
            handshake,
            mss_bytes,
            rcv_buf_bytes,
            init_cwnd_pkts,
            limited_transmit,
            ..Default::default()
        };
        let mut net = Net::new(&cfg, Some(size), us(20));
        net.rate = rate;
        net.drop = loss.drop_fn(seed);
        net.start();
        net.run(SimTime::MAX, 3_000_000);
        prop_assert!(net.snd.is_done(), "not done: {:?} at {}", net.snd.stats(), net.now);
        prop_assert_eq!(net.rcv.delivered_bytes(), size);
        prop_assert!(net.rcv.fin_received());
        prop_assert_eq!(net.snd.stats().bytes_acked, size);
    }
}
