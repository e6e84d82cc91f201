//! dcfair-core: the mechanisms, pure and clock-free.
//!
//! Everything here is deterministic given its inputs: no I/O, no clock, no globals. The engine
//! (`dcfair-sim`) or a real-packet switch drives these types and passes the time in.
//!
//! - [`time`]: picosecond time, rates, serialization delay.
//! - [`rng`]: one master seed, named independent streams.
//! - [`packet`]: the plain packet struct and flow hashing.
//! - [`qdisc`]: queue disciplines behind one trait, accounting outside the discipline.
//! - [`tcp`]: TCP sender and receiver state machines, congestion controls.
//! - [`transport`]: the transports above the disciplines; ExpressPass (credit pacing, feedback
//!   control, the switches' credit shaper) in [`transport::xpass`].
//! - [`config`]: the configuration error that names a key, and buffer limits.
//! - [`hint`]: cache prefetch hints (never change a result).
//! - [`fairq`]: FairQ, the switch that rewrites the receive window of ACKs (beside any discipline).

#[macro_use]
mod registry;

pub mod buffer;
pub mod config;
pub mod fairq;
pub mod hint;
pub mod packet;
pub mod pfc;
pub mod qdisc;
pub mod rng;
pub mod time;
pub mod tcp;
pub mod telemetry;
pub mod transport;
