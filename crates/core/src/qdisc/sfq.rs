//! Sfq (stub: being implemented).
use super::{ConfigError, Limit, PortContext, Qdisc, QdiscEvents};
use crate::packet::Packet;
use crate::time::SimTime;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SfqConfig {}
impl SfqConfig {
    pub fn validate(&self) -> Result<(), ConfigError> { Ok(()) }
}
#[derive(Debug)]
pub struct Sfq {}
impl Sfq {
    pub fn new(_c: &SfqConfig, _limit: Limit, _ctx: &PortContext) -> Sfq { todo!() }
}
impl Qdisc for Sfq {
    fn enqueue(&mut self, _pkt: Packet, _now: SimTime, _ev: &mut QdiscEvents) { todo!() }
    fn dequeue(&mut self, _now: SimTime, _ev: &mut QdiscEvents) -> Option<Packet> { todo!() }
    fn len_pkts(&self) -> usize { todo!() }
    fn len_bytes(&self) -> u64 { todo!() }
    fn name(&self) -> &'static str { "sfq" }
}
