//! Shared-buffer switches in the engine: which buffer each port stores into, and the hooks on
//! the packet path. The rules are `dcfair_core::buffer`'s.
//!
//! Rules:
//! - Off unless the scenario has a `[buffer]` table; then `World::buffers` is set. A run without
//!   it pays one `Option` test where a port is offered a packet, drops one or sends one.
//! - Every switch port stores into its switch's buffer; host ports into none ([`NO_BUFFER`]).
//! - A lossy packet is admitted by the buffer before its port's discipline sees it (`Sim::offer`);
//!   a lossless one after its gate admitted it (`Sim::admit_lossless`). Every packet a switch
//!   port drops after storing it, or sends, is released.

use crate::net::{Network, NodeKind};
use crate::pfc::PfcNet;
use crate::scenario::Scenario;
use dcfair_core::buffer::SharedBuffer;

/// `Buffers::of_port` of a host's port.
pub const NO_BUFFER: u32 = u32::MAX;

/// The shared buffers of a network's switches.
#[derive(Clone, Debug)]
pub struct Buffers {
    /// One per switch, in node order.
    pub sw: Vec<SharedBuffer>,
    /// The buffer each port stores into, by global port id, or [`NO_BUFFER`].
    pub of_port: Vec<u32>,
    /// The switch of each buffer (node id).
    pub node: Vec<u32>,
}

impl Buffers {
    /// The buffers of `net` for `sc.buffer`, or `None` without the table. With PFC, each
    /// switch reserves its gates' headroom.
    pub fn new(sc: &Scenario, net: &Network, pfc: Option<&PfcNet>) -> Option<Buffers> {
        let cfg = sc.buffer.as_ref()?;
        let mut of_port = vec![NO_BUFFER; net.ports.len()];
        let (mut sw, mut node) = (Vec::new(), Vec::new());
        for (n, nd) in net.nodes.iter().enumerate().filter(|(_, nd)| nd.kind == NodeKind::Switch) {
            let reserved = pfc.map_or(0, |pfc| nd.ports.iter().map(|&p| pfc.ports[p as usize].gate.headroom).sum());
            for &p in &nd.ports {
                of_port[p as usize] = sw.len() as u32;
            }
            sw.push(SharedBuffer::new(cfg, reserved));
            node.push(n as u32);
        }
        Some(Buffers { sw, of_port, node })
    }

    /// The buffer port `pid` stores into, if any.
    #[inline]
    pub fn of(&mut self, pid: u32) -> Option<&mut SharedBuffer> {
        let b = self.of_port[pid as usize];
        if b == NO_BUFFER { None } else { Some(&mut self.sw[b as usize]) }
    }
}

#[cfg(test)]
mod tests {
    use crate::run::simulate;

    /// Whatever drops a packet (the buffer, a discipline at enqueue or at dequeue, a gate), a
    /// switch's `used` is what its ports hold at the end of a run.
    #[test]
    fn a_switch_s_used_bytes_are_what_its_ports_hold() {
        let text = r#"
            [sim]
            duration_s = 0.005
            [topology]
            kind = "custom"
            hosts = ["a", "b"]
            switches = ["s"]
            links = [
              { a = "a", b = "s", rate_mbps = 10000.0, delay_us = 10.0, measured = true },
              { a = "s", b = "b", rate_mbps = 1000.0, delay_us = 10.0, buffer_pkts = 1000, measured = true },
            ]
            [udp]
            rate_fraction = 0.5
            pattern = "poisson"
            src = "a"
            dst = "b"
            [queue]
            limit_pkts = 1000
            [buffer]
            bytes = 200000
        "#;
        for (kind, prio, pfc) in [("droptail", 0, false), ("fq_codel", 0, false), ("red", 0, true), ("droptail", 3, true)] {
            let mut t = text.to_string();
            if pfc {
                t.push_str("[pfc]\nxoff_bytes = 60000\nxon_bytes = 50000\n");
            }
            let ov: Vec<(String, String)> = [("queue.kind", kind.to_string()), ("udp.priority", prio.to_string())]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let sc = crate::scenario::load(&t, "t.toml", &ov).unwrap();
            let sim = simulate(&sc, 1, None).unwrap();
            let w = sim.world();
            let b = w.buffers.as_deref().unwrap();
            let s = &w.net.nodes[b.node[0] as usize];
            let held: u64 = s
                .ports
                .iter()
                .map(|&p| w.net.ports[p as usize].queue.len_bytes() + w.pfc.as_deref().map_or(0, |pfc| pfc.ports[p as usize].q.bytes))
                .sum();
            assert_eq!(b.sw[0].used, held, "{kind}, priority {prio}");
            assert!(held > 0 && b.sw[0].max_used <= 200_000, "{kind}: the run ends with a queue ({held})");
        }
    }
}
