//! A loss device in front of a port: random loss on a link, for studies of how transports
//! recover from losses that no queue decided.
//!
//! Rules:
//! - Each packet offered to the port is lost with probability `rate` (one uniform draw per
//!   packet from the port's stream `"link.loss"`), before the port's discipline sees it: it is
//!   reported refused with [`DropReason::LinkLoss`] and counted in `drops_link_loss`.
//! - Every other packet goes to the discipline unchanged; dequeue, lengths and `ready_at` are
//!   the discipline's.
//! - A lost packet takes no buffer space and no transmission time (the device sits at the
//!   port's entry, not on the wire).
//! - `rate` is in `[0, 1)`; a port without a rate (or with 0) gets no device and draws nothing.

use super::framework::{DropReason, PortContext, QPacket, Qdisc, QdiscEvents};
use crate::config::ConfigError;
use crate::rng::Rng;
use crate::time::SimTime;
use rand::Rng as _;
use std::marker::PhantomData;

/// Checks a loss rate; `key` names it in the error.
pub fn validate_rate(key: &str, rate: f64) -> Result<(), ConfigError> {
    if !rate.is_finite() || !(0.0..1.0).contains(&rate) {
        return Err(ConfigError::new(key, format!("must be a probability in [0, 1), got {rate}")));
    }
    Ok(())
}

#[derive(Debug)]
pub struct LossyPort<P, Q> {
    rate: f64,
    rng: Rng,
    /// The port's discipline.
    pub inner: Q,
    _pkt: PhantomData<P>,
}

impl<P: QPacket, Q: Qdisc<Pkt = P>> LossyPort<P, Q> {
    pub fn new(rate: f64, inner: Q, ctx: &PortContext) -> Self {
        LossyPort { rate, rng: ctx.streams.stream("link.loss", ctx.port_index), inner, _pkt: PhantomData }
    }
}

impl<P: QPacket, Q: Qdisc<Pkt = P>> Qdisc for LossyPort<P, Q> {
    type Pkt = P;

    #[inline]
    fn enqueue(&mut self, pkt: P, now: SimTime, ev: &mut QdiscEvents<P>) {
        if self.rng.gen::<f64>() < self.rate {
            ev.drop(pkt, DropReason::LinkLoss, false);
        } else {
            self.inner.enqueue(pkt, now, ev);
        }
    }
    #[inline]
    fn dequeue(&mut self, now: SimTime, ev: &mut QdiscEvents<P>) -> Option<P> {
        self.inner.dequeue(now, ev)
    }
    fn len_pkts(&self) -> usize {
        self.inner.len_pkts()
    }
    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn ready_at(&self) -> Option<SimTime> {
        self.inner.ready_at()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::droptail::DropTail;
    use crate::qdisc::testkit::{check_accounting, ctx, pkt};
    use crate::qdisc::{Limit, QdiscEvents, Queue};

    fn lossy(rate: f64) -> Queue<LossyPort<crate::packet::Packet, DropTail>> {
        Queue::new(LossyPort::new(rate, DropTail::new(Limit::pkts(1_000_000)), &ctx(5)))
    }

    #[test]
    fn losses_follow_the_rate_and_are_counted_as_link_loss() {
        let (mut q, mut ev) = (lossy(0.1), QdiscEvents::default());
        for i in 0..100_000u64 {
            q.enqueue(pkt((i % 3) as u32, i, 1000), SimTime::ZERO, &mut ev);
            ev.dropped.clear();
        }
        let lost = q.stats.drops_by_reason(DropReason::LinkLoss) as f64;
        assert!((lost / 100_000.0 - 0.1).abs() < 0.005, "{lost}");
        assert_eq!(q.stats.drops_pkts() as f64, lost, "nothing else dropped");
        assert_eq!(q.stats.enqueued_pkts as f64 + lost, 100_000.0);
    }

    #[test]
    fn accounting_holds_and_the_same_seed_loses_the_same_packets() {
        let ops: Vec<(bool, u32, u32)> = (0..5000).map(|i| (i % 3 != 0, i % 7, 1000)).collect();
        let a = check_accounting(LossyPort::new(0.3, DropTail::new(Limit::pkts(50)), &ctx(9)), &ops);
        let b = check_accounting(LossyPort::new(0.3, DropTail::new(Limit::pkts(50)), &ctx(9)), &ops);
        assert_eq!(a.iter().map(|p| p.uid).collect::<Vec<_>>(), b.iter().map(|p| p.uid).collect::<Vec<_>>());
    }

    #[test]
    fn rates_outside_0_1_are_refused() {
        for r in [-0.1, 1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(validate_rate("loss_rate", r).unwrap_err().key, "loss_rate");
        }
        assert!(validate_rate("loss_rate", 0.0).is_ok());
        assert!(validate_rate("loss_rate", 0.5).is_ok());
    }
}
