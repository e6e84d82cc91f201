//! Drr (stub: being implemented).
use super::{ConfigError, Limit, PortContext, Qdisc, QdiscEvents};
use crate::packet::Packet;
use crate::time::SimTime;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DrrConfig {}
impl DrrConfig {
    pub fn validate(&self) -> Result<(), ConfigError> { Ok(()) }
}
#[derive(Debug)]
pub struct Drr {}
impl Drr {
    pub fn new(_c: &DrrConfig, _limit: Limit, _ctx: &PortContext) -> Drr { todo!() }
}
impl Qdisc for Drr {
    fn enqueue(&mut self, _pkt: Packet, _now: SimTime, _ev: &mut QdiscEvents) { todo!() }
    fn dequeue(&mut self, _now: SimTime, _ev: &mut QdiscEvents) -> Option<Packet> { todo!() }
    fn len_pkts(&self) -> usize { todo!() }
    fn len_bytes(&self) -> u64 { todo!() }
    fn name(&self) -> &'static str { "drr" }
}
