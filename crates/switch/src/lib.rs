//! dcfair-switch: a real-packet software switch running `dcfair-core`'s queue disciplines and
//! FairQ on real Ethernet frames, between network namespaces (issue 9; contract in
//! `docs/testbed.md`, section "Switch").
//!
//! Rules:
//! - The mechanisms are the simulator's, unchanged: the switch builds a core `Packet` from each
//!   frame's headers, offers it to a `Queue<AnyQdisc>` built from the same `QueueConfig`, and
//!   keeps the frame bytes beside it in a slab (the packet's `tag`).
//! - Everything but the sockets is in safe, clock-free code that the unit tests drive with
//!   made-up frames and times ([`switch`]); the command line ([`cli`], run by the binary
//!   `main.rs` and by `python -m dcfair.switch`) adds the monotonic clock and the sockets
//!   ([`sock`], the only `unsafe`).
//!
//! Modules:
//!
//! - [`cli`]: the command line and the event loop.
//! - [`command`]: what the two commands share: how they fail, a switch loaded from its file,
//!   reading a socket's frames, `ready`, writing the stats file.
//! - [`parse`]: Ethernet/ARP/IPv4/TCP/UDP parsing that never panics; malformed reasons.
//! - [`csum`]: RFC 1071 checksums and RFC 1624 incremental updates.
//! - [`rewrite`]: FairQ's decisions written into frames.
//! - [`config`]: `switch.toml`.
//! - [`fabric`]: one switch of a simulated fabric, routed by the simulator's own code.
//! - [`switch`]: forwarding, output ports, counters, stats.
//! - [`wait`]: how the event loop waits (`poll`, `busy`, `hybrid`).
//! - [`multi`]: one process serving several switch namespaces (a fabric).
//! - [`latency`]: the histogram of the frames' input delay.
//! - [`fuzz`]: the fuzz harness body shared by `fuzz/` and the corpus test.

pub mod cli;
pub mod command;
pub mod config;
pub mod csum;
pub mod fabric;
pub mod fuzz;
pub mod latency;
pub mod multi;
pub mod parse;
pub mod rewrite;
pub mod sock;
pub mod switch;
pub mod wait;
