//! RED (stub: being implemented).
use super::{ConfigError, Limit, PortContext, Qdisc, QdiscEvents};
use crate::packet::Packet;
use crate::time::SimTime;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {}
impl RedConfig {
    pub fn validate(&self, _limit: Limit) -> Result<(), ConfigError> { Ok(()) }
}
#[derive(Debug)]
pub struct Red {}
impl Red {
    pub fn new(_c: &RedConfig, _limit: Limit, _ctx: &PortContext) -> Red { todo!() }
}
impl Qdisc for Red {
    fn enqueue(&mut self, _pkt: Packet, _now: SimTime, _ev: &mut QdiscEvents) { todo!() }
    fn dequeue(&mut self, _now: SimTime, _ev: &mut QdiscEvents) -> Option<Packet> { todo!() }
    fn len_pkts(&self) -> usize { todo!() }
    fn len_bytes(&self) -> u64 { todo!() }
    fn name(&self) -> &'static str { "red" }
}
