//! What the switch's two commands (`cli.rs`: one switch; `multi.rs`: several) share: how they
//! end on an error and how a switch is built from its `switch.toml`.
//!
//! Rules (`docs/testbed.md`, "Switch"): an error is one line on stderr and the exit status, 2
//! for bad input (naming the key), 1 for a system failure; a file that cannot be read or does
//! not validate, and a `[fabric]` the simulator refuses, are bad input, found before any
//! socket is opened.

use crate::config::SwitchConfig;
use crate::switch::Switch;
use std::process::exit;

/// Ends the process with `code` after one line on stderr.
pub fn fail(code: i32, msg: &str) -> ! {
    eprintln!("dcfair-switch: {msg}");
    exit(code)
}

/// The configuration in file `path` and the switch it describes, seeded by `seed`, else the
/// file's `seed`, else 1; with `[fabric]`, routed by the simulator's code. `label` goes before
/// the key of an error (`""`, or the file's name when one process loads several).
pub fn load(path: &str, seed: Option<u64>, label: &str) -> (SwitchConfig, Switch) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(2, &format!("--config: cannot read {path}: {e}")));
    let cfg = SwitchConfig::from_toml(&text).unwrap_or_else(|e| fail(2, &format!("invalid input: {label}{}: {}", e.key, e.reason)));
    let seed = seed.or(cfg.seed).unwrap_or(1);
    let mut sw = Switch::new(&cfg, seed);
    if let Some(fc) = &cfg.fabric {
        let links: Vec<Option<u16>> = cfg.port.iter().map(|p| p.link).collect();
        match crate::fabric::Router::new(fc, &links, seed) {
            Ok(r) => sw.fabric = Some(r),
            Err(dcfair_sim::Error::Invalid { key, reason }) => fail(2, &format!("invalid input: {label}{key}: {reason}")),
            Err(e) => fail(1, &format!("{label}fabric: {e}")),
        }
    }
    (cfg, sw)
}
