//! Helpers shared by the engine's whole-run tests (`crate::common` in each module): a scenario
//! text plus `KEY=VALUE` overrides, loaded and run; its summary metrics read back.
#![allow(dead_code)] // each test file uses the part it needs

use dcfair_sim::{load_scenario, run, Results};

/// `[("queue.kind", "hcf")]` as the owned pairs `load_scenario` takes.
pub fn ov(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Runs `text` with `extra` overrides and the scenario's own seed; panics on invalid input.
pub fn go(text: &str, extra: &[(&str, &str)]) -> Results {
    let sc = load_scenario(text, "t.toml", &ov(extra)).unwrap();
    run(&sc, None, None).unwrap()
}

/// [`go`] with the seed `seed`.
pub fn go_seeded(text: &str, extra: &[(&str, &str)], seed: u64) -> Results {
    let sc = load_scenario(text, "t.toml", &ov(extra)).unwrap();
    run(&sc, Some(seed), None).unwrap()
}

/// The `metrics` object of `summary.json`.
pub fn metrics(r: &Results) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    v["metrics"].clone()
}

/// One numeric metric; panics naming it when it is missing or not a number.
pub fn metric(r: &Results, key: &str) -> f64 {
    metrics(r)[key].as_f64().unwrap_or_else(|| panic!("{key} missing in {}", r.summary_json))
}
