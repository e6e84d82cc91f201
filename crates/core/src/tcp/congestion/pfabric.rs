//! pFabric's minimal rate control (`tcp.cc = "pfabric"`).
//!
//! Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013,
//! section 4.2. The switches do the scheduling; the end hosts only have to avoid a congestion
//! collapse when many high-priority flows meet at one port. The rules, as the paper lists them
//! and as dcfair applies them:
//! 1. **Start at line rate:** the first window is `init_cwnd_pkts` (the paper's BDP, 12 packets
//!    with `tcp.profile = "pfabric"`).
//! 2. **Additive increase as in TCP** on every ACK of new data ([`Window::slow_start_or_avoid`]:
//!    slow start below `ssthresh`, one SMSS per window above it), never above
//!    `max_cwnd_pkts` when that is set (the sender's clamp, ns-2's `maxcwnd_`).
//! 3. **No fast retransmit:** duplicate ACKs (or SACK information) never start a recovery
//!    ([`CongestionControl::fast_retransmit`] is false; the pFabric scripts set
//!    `dynamic_dupack_` to 10^6 "to disable dupack"). Losses are repaired by the timer.
//! 4. **On a timeout:** `ssthresh` = half the window before the timeout (at least 2 SMSS) and
//!    the window falls to one segment, so the flow slow-starts again.
//! 5. **Probe mode:** after `pfabric_probe_after` consecutive timeouts (5 in the paper) with no
//!    ACK of new data in between, the flow stops sending data: on each further timeout it sends
//!    one probe, a segment of one payload byte at `snd_una` (header + 1 byte on the wire), and
//!    the first ACK of new data (the probe's) ends probe mode; the window is then one segment
//!    (rule 4), so the flow re-enters slow start. ([`CongestionControl::probe_mode`]; the
//!    sender does the sending.)
//! 6. **A fixed, small RTO:** the sender's retransmission timeout is `min_rto_ms` (45 us with
//!    the profile, about 3 fabric RTTs) for every segment, without RTT estimation and without
//!    backoff, so probes leave at a fixed period (the sender builds its RTO estimator with
//!    `min = max = initial = min_rto`).
//!
//! Rule 6 and the exit on "an ACK of new data" are dcfair's reading of the paper's "small
//! fixed RTO" and "re-enters slow start once it receives an acknowledgment"; see
//! `docs/mechanisms/pfabric.md`.

use super::{AckEvent, CongestionControl, Loss, Window};

/// pFabric's rate control: the consecutive-timeout count and its threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PFabricCc {
    probe_after: u32,
    timeouts: u32,
}

impl PFabricCc {
    /// Probe mode after `probe_after` (at least 1) consecutive timeouts.
    pub fn new(probe_after: u32) -> PFabricCc {
        PFabricCc { probe_after: probe_after.max(1), timeouts: 0 }
    }
    /// Timeouts since the last ACK of new data.
    pub fn consecutive_timeouts(&self) -> u32 {
        self.timeouts
    }
}

impl CongestionControl for PFabricCc {
    fn name(&self) -> &'static str {
        "pfabric"
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        self.timeouts = 0;
        w.slow_start_or_avoid(ev.acked_bytes);
    }
    fn on_timeout(&mut self, w: &mut Window, _loss: &Loss) {
        self.timeouts = self.timeouts.saturating_add(1);
        let before = w.base_cwnd();
        w.inflation = 0;
        w.ssthresh = (before / 2).max(2 * w.mss);
        w.ca_credit = 0;
        w.cwnd = w.mss;
    }
    #[inline]
    fn fast_retransmit(&self) -> bool {
        false
    }
    #[inline]
    fn probe_mode(&self) -> bool {
        self.timeouts >= self.probe_after
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    const MSS: u64 = 1000;

    fn ack(bytes: u64) -> AckEvent {
        AckEvent { now: SimTime::ZERO, acked_bytes: bytes, flight_bytes: 0, rtt_sample: None, srtt: None, min_rtt: None, ece: false, ack: 0, snd_nxt: 0 }
    }

    #[test]
    fn a_timeout_halves_ssthresh_and_resets_the_window_to_one_segment() {
        let mut w = Window::new(MSS, 12);
        let mut c = PFabricCc::new(5);
        c.on_timeout(&mut w, &Loss { flight: 3 * MSS, rwnd: u64::MAX });
        // half the window before the timeout (12), not of the flight (3)
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 6 * MSS));
        // then slow start: one SMSS per ACK up to ssthresh, additive above
        for _ in 0..5 {
            c.on_ack(&mut w, &ack(MSS));
        }
        assert_eq!(w.cwnd, 6 * MSS);
        c.on_ack(&mut w, &ack(MSS));
        assert_eq!(w.cwnd, 6 * MSS + MSS / 6);
        // a second timeout right away: ssthresh floors at 2 segments
        let mut w = Window::new(MSS, 1);
        c.on_timeout(&mut w, &Loss { flight: MSS, rwnd: u64::MAX });
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 2 * MSS));
    }

    #[test]
    fn probe_mode_after_n_consecutive_timeouts_and_out_on_an_ack() {
        let mut w = Window::new(MSS, 12);
        let mut c = PFabricCc::new(3);
        let loss = Loss { flight: MSS, rwnd: u64::MAX };
        assert!(!c.fast_retransmit());
        c.on_timeout(&mut w, &loss);
        c.on_timeout(&mut w, &loss);
        assert!(!c.probe_mode());
        // an ACK in between starts the count again
        c.on_ack(&mut w, &ack(MSS));
        c.on_timeout(&mut w, &loss);
        c.on_timeout(&mut w, &loss);
        assert!(!c.probe_mode());
        c.on_timeout(&mut w, &loss);
        assert!(c.probe_mode());
        assert_eq!(c.consecutive_timeouts(), 3);
        c.on_timeout(&mut w, &loss);
        assert!(c.probe_mode());
        c.on_ack(&mut w, &ack(1));
        assert!(!c.probe_mode());
        assert_eq!(w.cwnd, MSS + 1); // slow start from one segment (one byte acknowledged)
    }
}
