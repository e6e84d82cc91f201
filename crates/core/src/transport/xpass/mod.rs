//! ExpressPass (Cho, Jang, Han, SIGCOMM 2017): credit-scheduled, delay-bounded transport.
//!
//! The receiver sends small *credit* packets towards the sender; every credit that reaches the
//! sender releases at most one full-size data packet. Switches rate-limit credits per port to
//! the share of the link that leaves room for the matching data in the other direction
//! ([`shaper`]), so data never exceeds what a link can carry: credits are dropped, data
//! is not. The receiver's feedback control (Algorithm 1, [`feedback`]) adapts its credit rate to
//! the measured credit loss.
//!
//! Rules:
//! - A flow of `transport = "xpass"` is an [`XpassEnds`]: the transport's registry line
//!   (`transport/mod.rs`) makes this folder, the `[xpass]` table, its validation, the credit
//!   shaper on every port of a run with such flows and the `xpass_credits_*` figures of
//!   `summary.json`; the engine names none of them.
//! - [`XpassConfig`] ([`config`]) is the scenario's `[xpass]` table: both the endpoints' keys
//!   and the switches' credit-shaper keys (one table, since a credit network needs both). Units
//!   are in the key names; [`XpassConfig::validate`] names the key on bad input.
//! - Layers: [`config`] imports no other file of the folder; [`feedback`], [`endpoint`] and
//!   [`shaper`] import it; this file, the transport as the registry sees it ([`XpassEnds`]),
//!   imports them.
//! - Endpoints ([`endpoint`]) are pure state machines: time is passed in, randomness (credit
//!   jitter and credit sizes) comes from a stream given at construction, packets go out
//!   through a `Vec<Packet>` the caller drains, and each endpoint reports one deadline.
//! - Where the paper and the authors' ns-2 code (kaist-ina/ns2-xpass) differ, the paper is the
//!   default and the code's choice is an option (`feedback_law = "code"`, `credit_tokens =
//!   "bytes"`); `docs/mechanisms/expresspass.md` lists every difference.

pub mod config;
pub mod endpoint;
pub mod feedback;
pub mod shaper;

pub use config::{CreditTokens, FeedbackLaw, RateFloor, StaleEchoes, XpassConfig};

use super::framework::{Data, FlowSpec, Selectable, Side, Transport};
use crate::config::ConfigError;
use crate::packet::Packet;
use crate::qdisc::{AnyQdisc, PortContext, QPacket};
use crate::time::SimTime;
use endpoint::{XpassReceiver, XpassSender};

/// The two ends of an ExpressPass flow: the data sender at the source, the credit-sending
/// receiver at the destination.
#[derive(Clone, Debug)]
pub struct XpassEnds {
    pub sender: XpassSender,
    pub receiver: XpassReceiver,
}

impl Transport for XpassEnds {
    const TITLE: &'static str = "ExpressPass";

    two_ends!(sender, receiver);
    #[inline]
    fn delivered_bytes(&self) -> u64 {
        self.receiver.delivered_bytes()
    }
    #[inline]
    fn data_pkts_sent(&self) -> u64 {
        self.sender.stats.data_pkts
    }
    /// Credits over the run's ExpressPass flows: sent and lost (the receivers' counts),
    /// received and wasted (the senders').
    fn summary(ends: &[&XpassEnds]) -> Vec<(&'static str, u64)> {
        let sum = |f: fn(&XpassEnds) -> u64| ends.iter().map(|x| f(x)).sum::<u64>();
        vec![
            ("xpass_credits_sent", sum(|x| x.receiver.stats.credits_sent)),
            ("xpass_credits_lost", sum(|x| x.receiver.stats.credits_lost)),
            ("xpass_credits_received", sum(|x| x.sender.stats.credits_received)),
            ("xpass_credits_wasted", sum(|x| x.sender.stats.credits_wasted)),
        ]
    }
}

impl Selectable for XpassEnds {
    type Table = XpassConfig;

    fn validate(table: &XpassConfig, mtu: u32) -> Result<(), ConfigError> {
        table.validate(mtu)
    }

    /// Segments of the flow's `tcp.mss_bytes` and `tcp.header_bytes`; a sender written to
    /// (an incast server) has nothing to send until the first write, and asks for credits on
    /// each; the receiver paces credits for its own NIC's rate from the stream
    /// `("xpass.credit", flow)`.
    fn build(table: &XpassConfig, spec: &FlowSpec) -> XpassEnds {
        let size = match spec.data {
            Data::Bulk(size) => size,
            Data::Written => Some(0),
        };
        let ids = spec.ids;
        XpassEnds {
            sender: XpassSender::new(table, ids, spec.tcp.mss_bytes, spec.tcp.header_bytes, size),
            receiver: XpassReceiver::new(
                table,
                ids,
                spec.receiver_rate.0 as f64,
                spec.mtu,
                spec.streams.stream("xpass.credit", ids.flow as u64),
            ),
        }
    }

    /// Every port gets a credit shaper ([`shaper`]).
    fn wrap_port<P: QPacket + 'static>(table: &XpassConfig, q: AnyQdisc<P>, ctx: &PortContext) -> AnyQdisc<P> {
        shaper::wrap_port(table, q, ctx)
    }
}
