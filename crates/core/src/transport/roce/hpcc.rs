//! HPCC's window law (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019,
//! Algorithm 1): a sender's window from the in-band telemetry its ACKs echo.
//!
//! Rules, on every ACK that carries the telemetry of the data packet it acknowledges:
//! 1. Each hop `i` of the path gives a utilisation `u_i = min(qlen_i, qlen'_i) / (B_i T) +
//!    txRate_i / B_i`, with `txRate_i = (txBytes_i - txBytes'_i) / (ts_i - ts'_i)`, primes being
//!    the same hop's record in the previous ACK, `B_i` the hop's rate (bytes/s) and `T` the base
//!    RTT. The most utilised hop gives `u` and `tau = ts_i - ts'_i` (at most `T`).
//! 2. The estimate moves towards it by the time it covers: `U <- (1 - tau/T) U + (tau/T) u`.
//! 3. The window: if `U >= eta` or the sender has made `max_stage` additive steps in a row, `W =
//!    Wc / (U / eta) + W_AI` (multiplicative towards the target utilisation `eta`), else `W = Wc
//!    + W_AI`. The reference window `Wc` takes `W` (and the stage counter moves) once per RTT
//!    only: on the first ACK past the sequence number sent when `Wc` last changed.
//! 4. The rate is `W / T`.
//! 5. The first ACK, or one whose path has another number of hops, only records the hops.
//!
//! Starts at `W = Wc = B_nic T` (line rate), `U = 0`. Pure state: no clock, no randomness.

use crate::telemetry::{IntHop, MAX_HOPS};
use crate::time::SimDuration;

/// HPCC's parameters as the sender uses them (from `[roce.hpcc]` and the NIC).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccParams {
    /// Target utilisation. Paper: 0.95.
    pub eta: f64,
    /// Additive steps in a row before a multiplicative one. Paper: 5.
    pub max_stage: u32,
    /// Additive increase per RTT, bytes.
    pub w_ai_bytes: f64,
    /// Base RTT `T`.
    pub base_rtt: SimDuration,
    /// The sender NIC's rate, bits/s: the first window is its BDP.
    pub nic_bps: f64,
}

/// One sender's HPCC state (module rules).
#[derive(Clone, Debug)]
pub struct Hpcc {
    p: HpccParams,
    /// Reference window and current window, bytes.
    wc: f64,
    w: f64,
    /// Utilisation estimate.
    u: f64,
    inc_stage: u32,
    /// `Wc` moves again on the first ACK past this sequence number.
    last_update_seq: u64,
    prev: [IntHop; MAX_HOPS],
    prev_n: usize,
    /// Multiplicative steps taken (the window cut towards eta).
    pub decreases: u64,
}

impl Hpcc {
    pub fn new(p: HpccParams) -> Hpcc {
        let w = p.nic_bps / 8.0 * p.base_rtt.as_secs_f64();
        Hpcc { p, wc: w, w, u: 0.0, inc_stage: 0, last_update_seq: 0, prev: [IntHop::default(); MAX_HOPS], prev_n: 0, decreases: 0 }
    }

    /// The window, bytes.
    pub fn window(&self) -> f64 {
        self.w
    }

    /// The pacing rate, bits/s: `W / T`, at most the NIC's rate.
    pub fn rate_bps(&self) -> f64 {
        (self.w * 8.0 / self.p.base_rtt.as_secs_f64()).min(self.p.nic_bps)
    }

    /// The utilisation estimate `U`.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// An ACK for sequence number `ack_seq` with the echoed `hops`, when the sender has sent up to
    /// `snd_nxt` (module rules).
    pub fn on_ack(&mut self, ack_seq: u64, snd_nxt: u64, hops: &[IntHop]) {
        if hops.is_empty() {
            return;
        }
        if self.prev_n == hops.len() {
            let u = self.measure(hops);
            let update = ack_seq > self.last_update_seq;
            self.compute_window(u, update);
            if update {
                self.last_update_seq = snd_nxt;
            }
        }
        self.prev_n = hops.len().min(MAX_HOPS);
        self.prev[..self.prev_n].copy_from_slice(&hops[..self.prev_n]);
    }

    /// Rules 1 and 2: the new estimate `U`.
    fn measure(&mut self, hops: &[IntHop]) -> f64 {
        let t = self.p.base_rtt.as_secs_f64();
        let (mut u, mut tau) = (0.0f64, 0.0f64);
        for (h, p) in hops.iter().zip(&self.prev[..self.prev_n]) {
            let dt = h.ts.saturating_since(p.ts).as_secs_f64();
            if dt <= 0.0 {
                continue;
            }
            let b = h.rate.as_f64() / 8.0;
            let tx_rate = h.tx_bytes.saturating_sub(p.tx_bytes) as f64 / dt;
            let ui = h.qlen_bytes.min(p.qlen_bytes) as f64 / (b * t) + tx_rate / b;
            if ui > u {
                u = ui;
                tau = dt;
            }
        }
        let tau = tau.min(t);
        self.u = (1.0 - tau / t) * self.u + tau / t * u;
        self.u
    }

    /// Rule 3.
    fn compute_window(&mut self, u: f64, update: bool) {
        let p = &self.p;
        let w = if u >= p.eta || self.inc_stage >= p.max_stage {
            if update {
                self.inc_stage = 0;
            }
            self.decreases += (u >= p.eta) as u64;
            self.wc / (u / p.eta).max(f64::MIN_POSITIVE) + p.w_ai_bytes
        } else {
            if update {
                self.inc_stage += 1;
            }
            self.wc + p.w_ai_bytes
        };
        // never below one packet's worth of a byte, never above the line-rate BDP
        let max_w = p.nic_bps / 8.0 * p.base_rtt.as_secs_f64();
        let w = w.clamp(1.0, max_w);
        if update {
            self.wc = w;
        }
        self.w = w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{BitsPerSec, SimTime};

    const G100: u64 = 100_000_000_000;

    fn params() -> HpccParams {
        HpccParams { eta: 0.95, max_stage: 5, w_ai_bytes: 80.0, base_rtt: SimDuration::from_us(8), nic_bps: G100 as f64 }
    }

    /// A hop at `t_ns` that had sent `tx` bytes, with `q` bytes queued, at 100 Gbit/s.
    fn hop(t_ns: u64, tx: u64, q: u64) -> IntHop {
        IntHop { ts: SimTime(t_ns * 1000), tx_bytes: tx, qlen_bytes: q, rate: BitsPerSec(G100) }
    }

    #[test]
    fn it_starts_at_line_rate_and_the_first_ack_only_records() {
        let mut h = Hpcc::new(params());
        assert_eq!(h.window(), 100_000.0, "100 Gbit/s x 8 us");
        assert_eq!(h.rate_bps(), G100 as f64);
        h.on_ack(1, 10, &[hop(0, 0, 0)]);
        assert_eq!(h.window(), 100_000.0);
    }

    #[test]
    fn a_full_link_with_a_queue_shrinks_the_window_towards_eta() {
        let mut h = Hpcc::new(params());
        // the hop sends at line rate (12.5 bytes/ns) and holds a BDP of queue: u = 1 + 1 = 2
        h.on_ack(1, 100, &[hop(0, 0, 100_000)]);
        h.on_ack(101, 200, &[hop(8_000, 100_000, 100_000)]);
        assert!((h.utilisation() - 2.0).abs() < 1e-9, "tau = T: U takes u at once, {}", h.utilisation());
        let w = 100_000.0 / (2.0 / 0.95) + 80.0;
        assert!((h.window() - w).abs() < 1e-6, "{}", h.window());
    }

    #[test]
    fn a_path_below_eta_grows_the_window_additively_then_by_a_multiplicative_step() {
        let mut h = Hpcc::new(params());
        // first a congested RTT: u = 2, the window falls to about half
        h.on_ack(1, 10, &[hop(0, 0, 100_000)]);
        h.on_ack(11, 20, &[hop(8_000, 100_000, 100_000)]);
        let w0 = h.window();
        let mut seq = 20;
        // then the hop runs at half its rate with no queue: tau = T, so U = u = 0.5 < eta, and
        // five additive steps (one per RTT) ...
        for k in 1..=5u64 {
            h.on_ack(seq + 1, seq + 10, &[hop(8_000 * (k + 1), 100_000 + 50_000 * k, 0)]);
            seq += 10;
            assert!((h.window() - (w0 + 80.0 * k as f64)).abs() < 1e-6, "step {k}: {}", h.window());
        }
        // ... then a multiplicative one, towards eta: W = Wc / (0.5 / 0.95) + W_AI
        h.on_ack(seq + 1, seq + 10, &[hop(8_000 * 7, 100_000 + 50_000 * 6, 0)]);
        let want = (w0 + 400.0) / (0.5 / 0.95) + 80.0;
        assert!((h.window() - want).abs() < 1e-6, "{} vs {want}", h.window());
    }

    #[test]
    fn the_reference_window_moves_once_per_rtt() {
        let mut h = Hpcc::new(params());
        h.on_ack(1, 100, &[hop(0, 0, 100_000)]);
        h.on_ack(101, 200, &[hop(8_000, 100_000, 100_000)]); // updates Wc, next update past 200
        let wc = h.window();
        h.on_ack(150, 300, &[hop(16_000, 200_000, 100_000)]); // same RTT: W from the old Wc
        assert!((h.window() - (wc / (h.utilisation() / 0.95) + 80.0)).abs() < 1e-6);
        h.on_ack(160, 300, &[hop(24_000, 300_000, 100_000)]);
        assert!((h.window() - (wc / (h.utilisation() / 0.95) + 80.0)).abs() < 1e-6, "Wc has not moved");
    }

    #[test]
    fn the_most_utilised_hop_decides_and_a_path_change_only_records() {
        let mut h = Hpcc::new(params());
        h.on_ack(1, 100, &[hop(0, 0, 0), hop(0, 0, 0)]);
        // hop 0 idle, hop 1 at line rate with no queue: u = 1
        h.on_ack(101, 200, &[hop(8_000, 0, 0), hop(8_000, 100_000, 0)]);
        assert!((h.utilisation() - 1.0).abs() < 1e-9);
        let w = h.window();
        h.on_ack(201, 300, &[hop(16_000, 0, 0)]); // one hop now: recorded, no change
        assert_eq!(h.window(), w);
    }
}
