//! The ExpressPass family: credit counters summed over the run's ExpressPass flows (whole run),
//! present only when the run has such flows.

use crate::engine::Sim;
use serde_json::{json, Map, Value};

pub(super) fn summary(sim: &Sim, m: &mut Map<String, Value>) {
    let mut flows = sim.tcp.iter().filter_map(|f| f.xpass.as_deref()).peekable();
    if flows.peek().is_none() {
        return;
    }
    let (mut sent, mut lost, mut received, mut wasted) = (0u64, 0u64, 0u64, 0u64);
    for x in flows {
        sent += x.receiver.stats.credits_sent;
        lost += x.receiver.stats.credits_lost;
        received += x.sender.stats.credits_received;
        wasted += x.sender.stats.credits_wasted;
    }
    m.insert("xpass_credits_sent".into(), json!(sent));
    m.insert("xpass_credits_lost".into(), json!(lost));
    m.insert("xpass_credits_received".into(), json!(received));
    m.insert("xpass_credits_wasted".into(), json!(wasted));
}
