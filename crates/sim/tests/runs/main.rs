//! The engine's whole-run tests, one module per subject, in one test binary (one link of the
//! engine instead of one per file: `cargo test --release -p dcfair-sim --test runs [MODULE::]`).

mod common;
mod dctcp;
mod fabric_view;
mod fabrics;
mod fairq;
mod fq_codel;
mod incast;
mod jobs;
mod measure;
mod mptcp;
mod ndp;
mod parts;
mod pfabric;
mod pfc;
mod poisson;
mod port_queues;
mod roce;
mod tcp_scenarios;
mod udp_engine;
mod xpass;
mod xpass_workloads;
