//! The config layer: a scenario's tables, how a scenario is loaded, and how it is validated.
//!
//! Rules:
//! - This folder holds every table a scenario file may have and everything that reads only
//!   them: the types (`schema.rs` for the whole and `[sim]`; one file per table family:
//!   `measure.rs`, `routing.rs`, `flows.rs` (flow groups, UDP, incast), `poisson.rs` (with its
//!   CDF file), `topology.rs` (with `[ports]`)), loading (`load.rs`: TOML, `--set` overrides,
//!   per-group TCP, TCP profiles), validation (`validate.rs`, with the value checks of
//!   `check.rs`) and memory admission (`admission.rs`).
//! - The config layer imports nothing from the runtime (engine, network, topology builders,
//!   workloads, probes, series, routing tables, the run): the runtime reads the config, the
//!   config never calls the runtime. Of this crate it uses only `error.rs`. A check that needs
//!   the built network is made by the build step, not here (`validate.rs`).
//! - Inside the folder a file imports its siblings by their own paths, never this file, which
//!   only names the modules and hands their main names on.

pub mod admission;
pub mod check;
pub mod flows;
pub mod load;
pub mod measure;
pub mod poisson;
pub mod routing;
pub mod schema;
pub mod topology;
pub mod validate;

pub use flows::{FlowsConfig, Hosts, IncastConfig, IncastConnection, Pattern, Placement, UdpConfig};
pub use load::{apply_override, load};
pub use measure::{MeasureConfig, MeasuredPorts, TraceConfig};
pub use poisson::{Cdf, CdfUnit, PoissonConfig};
pub use routing::{CoreChoice, HashSeed, RoutingConfig, RoutingMode};
pub use schema::{Scenario, SimConfig, Threads, TieBreak};
pub use topology::{PortQueue, TopologyConfig};
