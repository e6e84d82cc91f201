//! Multipath TCP, the host side (issue 24): the pieces an MPTCP connection is built from, as a
//! pure library; the simulator assembles them.
//!
//! The model (RFC 8684's architecture, section 2, without its wire format):
//! - **Subflows.** A connection is `subflows` ordinary TCP connections, each a
//!   [`super::TcpSender`] (persistent: [`super::TcpSender::new_persistent`], fed by
//!   [`super::TcpSender::write`]) and a [`super::TcpReceiver`] with its own 5-tuple (so ECMP
//!   may hash them onto different paths), its own sequence space, loss recovery and RTO.
//! - **Data level** ([`data`]): one data sequence space for the connection; the
//!   [`data::DataSender`] hands out chunks, a [`data::Mapping`] per subflow records which data
//!   sequence numbers the subflow's bytes carry, the [`data::DataReceiver`] reassembles what
//!   the subflows deliver in order into the connection's in-order stream, whose end is the
//!   data ACK; the receive buffer (and so the receive window) is shared, relative to the data
//!   ACK (RFC 8684 section 3.3.4).
//! - **Scheduler** ([`scheduler`]): the next chunk goes to the subflow with the lowest smoothed
//!   RTT among those with congestion-window space.
//! - **Coupled congestion control** ([`coupling`] and `congestion/coupled.rs`): every subflow
//!   runs [`super::congestion::Coupled`], NewReno except in congestion avoidance, whose
//!   increase the connection computes across its subflows before each ACK: LIA (RFC 6356),
//!   OLIA (Khalili et al. 2012) or uncoupled NewReno (`tcp.mptcp.coupling`).
//!
//! How the MPTCP transport drives it (the calls it makes; the engine does the rest):
//! 1. Build `n` subflow sender/receiver pairs; install `AnyCc::Coupled(Coupled::new(iss, mss,
//!    init_cwnd))` on each sender (unless the coupling is `uncoupled`, when the configured
//!    `tcp.cc` may stay); one `DataSender::new(size, rcv_buf)`, one `DataReceiver::new(rcv_buf)`,
//!    a `Mapping` per subflow.
//! 2. To send: while `scheduler::pick(&paths)` names a subflow `f` and `DataSender::take(mss)`
//!    gives `(seq, len)`: `mapping[f].push(sender[f].bytes_written(), seq, len)`, then
//!    `sender[f].write(len, now, out)`.
//! 3. Before an ACK reaches `sender[r]`: `views` from every subflow (base cwnd, SRTT, MSS,
//!    `Coupled::loss_interval_bytes`), then `Coupled::set_increase_per_mss(
//!    coupling::increase(coupling, &views, r, mss))`.
//! 4. After `receiver[f]` takes a segment: `mapping[f].consume(receiver[f].delivered_bytes(),
//!    |seq, len| data_rcv.deliver(seq, len))`; the data ACK and window reach the sender as
//!    `DataSender::on_data_ack(data_rcv.data_ack(), data_rcv.window())`.
//!
//! Not modelled: the wire format (MP_CAPABLE, MP_JOIN, DSS and their keys, tokens, HMACs), DSS
//! checksums, DATA_FIN (the connection is done when its data ACK reaches its size),
//! reinjection of a stalled subflow's data on another, ADD_ADDR / REMOVE_ADDR and path
//! management (the subflows exist from the start), subflow failure handling and fallback to
//! plain TCP, MP_PRIO backup subflows.
//!
//! References: RFC 8684 (TCP Extensions for Multipath Operation with Multiple Addresses);
//! RFC 6356 (Coupled Congestion Control for Multipath Transport Protocols: LIA); R. Khalili,
//! N. Gast, M. Popovic, J.-Y. Le Boudec, "MPTCP is not Pareto-optimal: performance issues and
//! a possible solution", ACM CoNEXT 2012 (OLIA; IEEE/ACM ToN 21(5), 2013); C. Raiciu, S.
//! Barre, C. Pluntke, A. Greenhalgh, D. Wischik, M. Handley, "Improving datacenter performance
//! and robustness with multipath TCP", ACM SIGCOMM 2011 (MPTCP in data-center fabrics, the
//! use this model serves).
//!
//! Configuration: [`MptcpConfig`] is the `tcp.mptcp` table (`subflows`, `coupling`), per flow
//! group; the MPTCP transport (`crate::transport::mptcp`) makes each flow of a group with
//! `subflows > 1` a connection of that many subflows and makes the calls above, which the
//! engine drives as it drives every transport.

pub mod coupling;
pub mod data;
pub mod scheduler;

pub use coupling::{Coupling, LossIntervals, SubflowView};
pub use data::{DataReceiver, DataSender, MapRun, Mapping};
pub use scheduler::PathView;

use super::CcKind;
use crate::config::ConfigError;
use serde::{Deserialize, Serialize};

/// Most subflows a connection may have.
pub const MAX_SUBFLOWS: u32 = 32;

/// MPTCP parameters (the `tcp.mptcp` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MptcpConfig {
    /// Subflows of each connection; 1 is plain TCP.
    pub subflows: u32,
    /// The coupled increase of the subflows: `"lia"`, `"olia"` or `"uncoupled"`.
    pub coupling: Coupling,
}

impl Default for MptcpConfig {
    fn default() -> Self {
        MptcpConfig { subflows: 1, coupling: Coupling::Lia }
    }
}

impl MptcpConfig {
    /// Checks the table for senders whose congestion control is `cc`; the error key is
    /// relative to the `mptcp` table.
    pub fn validate(&self, cc: CcKind) -> Result<(), ConfigError> {
        if !(1..=MAX_SUBFLOWS).contains(&self.subflows) {
            return Err(ConfigError::new(
                "subflows",
                format!("must be from 1 (plain TCP) to {MAX_SUBFLOWS}, got {}", self.subflows),
            ));
        }
        // the coupled increase replaces NewReno's congestion avoidance (congestion/coupled.rs)
        if self.subflows > 1 && self.coupling != Coupling::Uncoupled && cc != CcKind::Newreno {
            return Err(ConfigError::new(
                "coupling",
                format!("{} couples NewReno subflows: it needs cc = \"newreno\" (or coupling = \"uncoupled\")", self.coupling.name()),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_plain_tcp_and_valid() {
        let c = MptcpConfig::default();
        assert_eq!((c.subflows, c.coupling), (1, Coupling::Lia));
        for cc in [CcKind::Reno, CcKind::Newreno, CcKind::Cubic, CcKind::Dctcp, CcKind::Pfabric] {
            c.validate(cc).unwrap();
        }
    }

    #[test]
    fn validate_names_the_key() {
        for bad in [0, MAX_SUBFLOWS + 1, u32::MAX] {
            let e = MptcpConfig { subflows: bad, ..Default::default() }.validate(CcKind::Newreno).unwrap_err();
            assert_eq!(e.key, "subflows", "{e}");
        }
        for ok in [1, 2, MAX_SUBFLOWS] {
            MptcpConfig { subflows: ok, ..Default::default() }.validate(CcKind::Newreno).unwrap();
        }
        // LIA and OLIA couple NewReno subflows; uncoupled subflows may run anything
        for coupling in [Coupling::Lia, Coupling::Olia] {
            let e = MptcpConfig { subflows: 2, coupling }.validate(CcKind::Cubic).unwrap_err();
            assert_eq!(e.key, "coupling", "{e}");
            assert!(e.reason.contains("cc = \"newreno\""), "{e}");
        }
        MptcpConfig { subflows: 2, coupling: Coupling::Uncoupled }.validate(CcKind::Dctcp).unwrap();
    }
}
