//! Pacing: data segments released no faster than `ratio * cwnd / srtt` (Aggarwal, Savage and
//! Anderson, "Understanding the performance of TCP pacing", INFOCOM 2000: the window is spread
//! over the smoothed RTT instead of leaving back to back).
//!
//! Rules:
//! - The pacer keeps one release time. A data segment of `len` payload octets sent at `now`
//!   moves it to `max(release, now) + len * srtt / (ratio * cwnd)`, with `cwnd` and `srtt` as they
//!   are when it leaves; the sender holds the next data segment until then. Payload octets, not
//!   wire bytes, because cwnd counts payload: a full window then takes exactly one `srtt / ratio`.
//! - `ratio` is `pacing_ss_ratio` while `cwnd < ssthresh / 2` and `pacing_ca_ratio` otherwise
//!   (the test Linux's `tcp_update_pacing_rate` and ns-3's `UpdatePacingRate` make: an early
//!   slow start gets the faster rate, since cwnd doubles within the RTT the rate is spread over).
//!   Both default to 1.0, the rate of the "cwnd / srtt"; ns-3's defaults are 2.0 and 1.2
//!   (`PacingSsRatio` 200, `PacingCaRatio` 120) and Linux's 200 % and 120 %
//!   (`net.ipv4.tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio`).
//! - Ratios are held in parts per million and the gap is integer arithmetic in picoseconds
//!   (`u128`, rounded down): deterministic, no floating point on the packet path.
//! - Before the first RTT sample there is no rate and nothing is paced (ns-3's
//!   `PaceInitialWindow false`; Linux has no rate before its first sample either). With the
//!   handshake the SYN's sample comes first, so the initial window is paced.
//! - Which segments wait is the sender's decision (`sender/mod.rs`): every data segment, first
//!   copies and retransmissions alike, except the fast retransmit and the first segment after
//!   a retransmission timeout, which leave at once but still advance the release time.
//!   Pure ACKs, SYNs and a pure FIN are never paced.

use super::TcpConfig;
use crate::time::{SimDuration, SimTime};

const PPM: u128 = 1_000_000;

/// The pacing state of one sender.
#[derive(Clone, Debug)]
pub struct Pacer {
    enabled: bool,
    ss_ratio_ppm: u64,
    ca_ratio_ppm: u64,
    /// Earliest time the next paced segment may leave.
    release: SimTime,
}

impl Pacer {
    /// From `pacing`, `pacing_ss_ratio`, `pacing_ca_ratio` of a validated configuration.
    pub fn new(cfg: &TcpConfig) -> Pacer {
        let ppm = |r: f64| ((r * PPM as f64).round() as u64).max(1);
        Pacer {
            enabled: cfg.pacing,
            ss_ratio_ppm: ppm(cfg.pacing_ss_ratio),
            ca_ratio_ppm: ppm(cfg.pacing_ca_ratio),
            release: SimTime::ZERO,
        }
    }

    /// Pacing is configured.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The ratio in force for this window, parts per million.
    pub fn ratio_ppm(&self, cwnd: u64, ssthresh: u64) -> u64 {
        if cwnd < ssthresh / 2 {
            self.ss_ratio_ppm
        } else {
            self.ca_ratio_ppm
        }
    }

    /// Time `len` payload octets take at `ratio * cwnd / srtt`.
    pub fn gap(&self, len: u64, cwnd: u64, ssthresh: u64, srtt: SimDuration) -> SimDuration {
        let den = self.ratio_ppm(cwnd, ssthresh) as u128 * cwnd.max(1) as u128;
        SimDuration((len as u128 * srtt.0 as u128 * PPM / den).min(u64::MAX as u128) as u64)
    }

    /// When the next paced segment may leave, if pacing is in force (enabled and an RTT
    /// sample exists) and that time is after `now`.
    #[inline]
    pub fn hold_until(&self, now: SimTime, srtt: Option<SimDuration>) -> Option<SimTime> {
        (self.enabled && srtt.is_some() && now < self.release).then_some(self.release)
    }

    /// A data segment of `len` payload octets left at `now` (paced or not).
    #[inline]
    pub fn on_send(&mut self, now: SimTime, len: u64, cwnd: u64, ssthresh: u64, srtt: Option<SimDuration>) {
        if let (true, Some(srtt)) = (self.enabled, srtt) {
            self.release = self.release.max(now) + self.gap(len, cwnd, ssthresh, srtt);
        }
    }

    /// The current release time (tests and traces).
    pub fn release(&self) -> SimTime {
        self.release
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacer(ss: f64, ca: f64) -> Pacer {
        Pacer::new(&TcpConfig { pacing: true, pacing_ss_ratio: ss, pacing_ca_ratio: ca, ..Default::default() })
    }
    const MSS: u64 = 1460;

    #[test]
    fn gap_spreads_the_window_over_srtt_over_ratio() {
        let srtt = SimDuration::from_us(100);
        // 10 segments over 100 us: 10 us each, in congestion avoidance at ratio 1
        let p = pacer(1.0, 1.0);
        assert_eq!(p.gap(MSS, 10 * MSS, 0, srtt), SimDuration::from_us(10));
        // ns-3 / Linux ratios: 2.0 while cwnd < ssthresh / 2, 1.2 from there on
        let p = pacer(2.0, 1.2);
        assert_eq!(p.gap(MSS, 10 * MSS, u64::MAX, srtt), SimDuration::from_us(5));
        assert_eq!(p.gap(MSS, 10 * MSS, 21 * MSS, srtt), SimDuration::from_us(5));
        assert_eq!(p.gap(MSS, 10 * MSS, 20 * MSS, srtt), SimDuration(8_333_333), "1.2: rounded down to the ps");
        // a short segment takes its share
        assert_eq!(pacer(1.0, 1.0).gap(MSS / 2, 10 * MSS, 0, srtt), SimDuration::from_us(5));
    }

    #[test]
    fn release_time_advances_from_the_later_of_now_and_the_last_release() {
        let srtt = Some(SimDuration::from_us(100));
        let mut p = pacer(1.0, 1.0);
        let t0 = SimTime(1_000_000);
        assert_eq!(p.hold_until(t0, srtt), None);
        p.on_send(t0, MSS, 10 * MSS, 0, srtt);
        let r = t0 + SimDuration::from_us(10);
        assert_eq!(p.hold_until(t0, srtt), Some(r));
        assert_eq!(p.hold_until(r, srtt), None);
        // an unpaced segment sent before the release time pushes it one gap further
        p.on_send(t0, MSS, 10 * MSS, 0, srtt);
        assert_eq!(p.release(), r + SimDuration::from_us(10));
        // idle: the next gap counts from the send time
        let later = SimTime(50_000_000);
        p.on_send(later, MSS, 10 * MSS, 0, srtt);
        assert_eq!(p.release(), later + SimDuration::from_us(10));
    }

    #[test]
    fn nothing_is_held_without_a_sample_or_when_disabled() {
        let mut p = pacer(1.0, 1.0);
        p.on_send(SimTime(5), MSS, MSS, 0, None);
        assert_eq!((p.release(), p.hold_until(SimTime(5), None)), (SimTime::ZERO, None));
        let mut off = Pacer::new(&TcpConfig::default());
        off.on_send(SimTime(5), MSS, MSS, 0, Some(SimDuration::from_us(100)));
        assert_eq!(off.hold_until(SimTime(5), Some(SimDuration::from_us(100))), None);
        assert!(!off.enabled());
    }
}
