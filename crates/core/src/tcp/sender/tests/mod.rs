//! Tests of the sender, end to end on the test channel ([`crate::tcp::testnet`]) or driven
//! ACK by ACK; one file per topic, the shared helpers here.

use super::*;
use crate::rng::Streams;
use crate::tcp::testnet::{Dir, Net, IDS};
use crate::tcp::{CcKind, TcpReceiver};
use crate::time::BitsPerSec;
use proptest::prelude::*;
use rand::Rng as _;

mod opening;
mod window;
mod recovery;
mod ecn;
mod ns2;
mod sack;
mod pacing;
mod pfabric;
mod timers;
mod delivery;

const MSS: u64 = 1460;

fn us(x: u64) -> SimDuration {
    SimDuration::from_us(x)
}
fn ms(x: u64) -> SimDuration {
    SimDuration::from_ms(x)
}
fn secs(x: u64) -> SimTime {
    SimTime(x * crate::time::PS_PER_SEC)
}
fn nohs() -> TcpConfig {
    TcpConfig { handshake: false, ..Default::default() }
}
/// Drops the first copy of each listed data segment (indices counted from the first byte).
fn drop_first_copies(net: &mut Net, hs: bool, idx: &[u64]) {
    let mut pending: Vec<u64> = idx.iter().map(|k| hs as u64 + k * MSS).collect();
    net.drop = Box::new(move |p, dir, _| {
        if dir == Dir::Fwd && p.payload > 0 {
            if let Some(i) = pending.iter().position(|&s| s == p.seq) {
                pending.swap_remove(i);
                return true;
            }
        }
        false
    });
}
fn run_to_end(net: &mut Net) {
    net.start();
    net.run(SimTime::MAX, 5_000_000);
    assert!(net.snd.is_done(), "sender not done at {}: {:?}", net.now, net.snd.stats());
}

/// A pure ACK from the receiver, as the sender sees it (no window scaling).
fn ack_pkt(ack: u64, rwnd_segs: u64) -> Packet {
    Packet {
        flow: IDS.flow,
        src: IDS.dst,
        dst: IDS.src,
        sport: IDS.dport,
        dport: IDS.sport,
        proto: crate::packet::Proto::Tcp,
        size: 40,
        ack,
        flags: flags::ACK,
        rwnd: (rwnd_segs * MSS) as u16,
        ..Packet::default()
    }
}
fn new_data(out: &[Packet], above: u64) -> usize {
    out.iter().filter(|p| p.payload > 0 && p.seq >= above).count()
}

/// Segment numbers (in MSS) of the data segments in `out`, then clears it.
fn segs(out: &mut Vec<Packet>) -> Vec<u64> {
    let v = out.iter().filter(|p| p.payload > 0).map(|p| p.seq / MSS).collect();
    out.clear();
    v
}

fn lossy(seed: u64, loss: f64, cfg: &TcpConfig, size: u64) -> Net {
    let mut net = Net::new(cfg, Some(size), us(20));
    let mut rng = Streams::new(seed).stream("tcp.test.loss", 0);
    net.drop = Box::new(move |_, _, _| rng.gen::<f64>() < loss);
    net
}
