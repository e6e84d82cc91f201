//! Parking lot: `bottlenecks` links in series, switches `p0 .. p<bottlenecks>` in a chain.
//!
//! Each switch `p<i>` has two hosts, `src<i>` and `dst<i>`, on host links (`host_rate_mbps`,
//! `link_delay_us`). The chain links `p<i> -> p<i+1>` run at `bottleneck_rate_mbps` with
//! `link_delay_us` each way and are measured by default. The classic workload: one long flow
//! `src0 -> dst<bottlenecks>` crossing every bottleneck, and one cross flow `src<i> -> dst<i+1>`
//! per bottleneck (ExpressPass's figure 10).

use super::{at_least_one, default_host_buffer, link, non_negative, positive, Kit};
use crate::net::{Network, NodeKind};
use dcfair_core::qdisc::ConfigError;
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotConfig {
    pub bottlenecks: u32,
    pub host_rate_mbps: f64,
    pub bottleneck_rate_mbps: f64,
    pub link_delay_us: f64,
    #[serde(default = "default_host_buffer")]
    pub host_buffer_pkts: u32,
}

impl ParkingLotConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least_one("bottlenecks", self.bottlenecks)?;
        if self.bottlenecks > 10_000 {
            return Err(ConfigError::new("bottlenecks", "at most 10,000"));
        }
        positive("host_rate_mbps", self.host_rate_mbps)?;
        positive("bottleneck_rate_mbps", self.bottleneck_rate_mbps)?;
        non_negative("link_delay_us", self.link_delay_us)?;
        at_least_one("host_buffer_pkts", self.host_buffer_pkts)
    }

    pub fn host_names(&self) -> Vec<String> {
        (0..=self.bottlenecks).flat_map(|i| [format!("src{i}"), format!("dst{i}")]).collect()
    }

    pub(crate) fn build(&self, kit: &Kit) -> (Network, Vec<u32>, Vec<u32>) {
        let mut net = Network::default();
        let host_link = link(self.host_rate_mbps, self.link_delay_us);
        let chain = link(self.bottleneck_rate_mbps, self.link_delay_us);
        let hosts: Vec<(u32, u32)> = (0..=self.bottlenecks)
            .map(|i| (net.add_node(NodeKind::Host, format!("src{i}")), net.add_node(NodeKind::Host, format!("dst{i}"))))
            .collect();
        let sw: Vec<u32> = (0..=self.bottlenecks).map(|i| net.add_node(NodeKind::Switch, format!("p{i}"))).collect();
        for (i, &(s, d)) in hosts.iter().enumerate() {
            kit.link(&mut net, sw[i], s, host_link);
            kit.link(&mut net, sw[i], d, host_link);
        }
        let mut measured = Vec::new();
        for i in 0..self.bottlenecks as usize {
            let (forward, _) = kit.link(&mut net, sw[i], sw[i + 1], chain);
            measured.push(forward);
        }
        (net, Vec::new(), measured)
    }
}
