//! The transports family: the figures each transport adds over its own flows (the registry's
//! `dcfair_core::transport::summary`: ExpressPass's credit counters, ...), whole run, present
//! only when the run has flows of that transport.

use crate::engine::Sim;
use serde_json::{json, Map, Value};

pub(super) fn summary(sim: &Sim, m: &mut Map<String, Value>) {
    for (key, value) in dcfair_core::transport::summary(sim.world().flows.iter().map(|f| &f.ends)) {
        m.insert(key.into(), json!(value));
    }
}
