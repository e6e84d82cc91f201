//! Per-packet cost of the queue disciplines: one enqueue plus one dequeue at a steady queue.
//!
//! The workload is the HCF paper's long-flow count: 400 flows offering 1500-byte packets in a
//! random order fixed by a seed. The queue is first filled to 20 packets; every iteration then
//! offers one packet and, when the queue holds more than 20, transmits one, so the occupancy
//! stays at 20. The buffer is 64 packets, so no discipline but RED drops here: their numbers are
//! the cost of classifying, storing and serving. RED's early drops (its average queue sits above
//! the 5-packet minimum threshold) refuse a share of the offers, and an iteration whose packet
//! is refused transmits none, so RED's time per iteration is not per packet served. After each
//! case the bench prints the share of offered packets dropped. Time advances 1 us per iteration
//! (fixed periods roll).
//!
//! Every discipline is built through `QueueConfig::build`, as the simulator builds a port, so
//! the enum dispatch is included. Adding a discipline is one line in `CASES`.
//!
//! Run: `cargo bench -p dcfair-core --bench qdisc` (add `-- --warm-up-time 1
//! --measurement-time 3` for a quick look).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dcfair_core::packet::Packet;
use dcfair_core::qdisc::hcf::{HcfConfig, PeriodKind};
use dcfair_core::qdisc::{AnyQdisc, PortContext, Qdisc, QdiscEvents, QdiscKind, QueueConfig};
use dcfair_core::rng::Streams;
use dcfair_core::time::{BitsPerSec, SimDuration, SimTime};
use rand::Rng;
use std::hint::black_box;

const FLOWS: u32 = 400;
const STEADY_PKTS: usize = 20;
const BUFFER_PKTS: u32 = 64;
const SIZE: u32 = 1500;

/// A discipline under test: its name and how it changes the default `[queue]` table.
type Case = (&'static str, fn(&mut QueueConfig));

/// One line per discipline.
const CASES: &[Case] = &[
    ("droptail", |q| q.kind = QdiscKind::Droptail),
    ("hcf", |q| q.kind = QdiscKind::Hcf),
    ("hcf_bloom3", |q| {
        q.kind = QdiscKind::Hcf;
        q.hcf = Some(HcfConfig { hashes: 3, ..HcfConfig::default() });
    }),
    ("hcf_fixed_100us", |q| {
        q.kind = QdiscKind::Hcf;
        q.hcf = Some(HcfConfig { period: PeriodKind::Fixed, period_us: Some(100.0), ..HcfConfig::default() });
    }),
    ("red", |q| q.kind = QdiscKind::Red),
    ("sfq", |q| q.kind = QdiscKind::Sfq),
    ("drr", |q| q.kind = QdiscKind::Drr),
    ("codel", |q| q.kind = QdiscKind::Codel),
    ("fq_codel", |q| q.kind = QdiscKind::FqCodel),
];

fn packet(uid: u64, flow: u32) -> Packet {
    Packet {
        uid,
        flow,
        src: flow,
        dst: 1_000_000,
        sport: (flow % 60_000) as u16,
        dport: 80,
        size: SIZE,
        payload: SIZE - 40,
        seq: uid,
        ..Default::default()
    }
}

fn per_packet(c: &mut Criterion) {
    let streams = Streams::new(1);
    let mut r = streams.stream("bench.flows", 0);
    let order: Vec<u32> = (0..4096).map(|_| r.gen_range(0..FLOWS)).collect();
    let ctx = PortContext { rate: BitsPerSec::from_gbps(10), mtu: SIZE, port_index: 0, streams, host: false };

    let mut g = c.benchmark_group("enqueue_dequeue_400flows_q20");
    g.throughput(Throughput::Elements(1));
    for (name, set) in CASES {
        let mut cfg = QueueConfig { limit_pkts: Some(BUFFER_PKTS), ..Default::default() };
        set(&mut cfg);
        cfg.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut q: AnyQdisc = cfg.build(&ctx);
        let mut ev = QdiscEvents::default();
        let mut now = SimTime::ZERO;
        let mut i = 0u64;
        while q.len_pkts() < STEADY_PKTS {
            q.enqueue(packet(i, order[i as usize % order.len()]), now, &mut ev);
            i += 1;
        }
        assert!(ev.dropped.is_empty(), "{name} dropped while filling");
        let (mut offered, mut dropped) = (0u64, 0u64);
        g.bench_function(*name, |b| {
            b.iter(|| {
                now += SimDuration::from_us(1);
                q.enqueue(packet(i, order[i as usize % order.len()]), now, &mut ev);
                i += 1;
                offered += 1;
                let p = if q.len_pkts() > STEADY_PKTS { q.dequeue(now, &mut ev) } else { None };
                dropped += ev.dropped.len() as u64;
                ev.dropped.clear();
                black_box(p)
            })
        });
        assert!(q.len_pkts() <= STEADY_PKTS, "{name} grew past the steady state");
        println!("{name}: {:.2} % of {offered} offered packets dropped", 100.0 * dropped as f64 / offered.max(1) as f64);
    }
    g.finish();
}

criterion_group!(benches, per_packet);
criterion_main!(benches);
