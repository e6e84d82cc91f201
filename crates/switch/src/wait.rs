//! How the event loop waits between rounds: sleep in `ppoll`, spin, or spin for a while and
//! then sleep. Pure (time passed in, in nanoseconds since the switch started), so every rule is
//! unit-tested; `main.rs` turns the answer into the `ppoll` timeout.
//!
//! Rules:
//! - [`WaitMode::Poll`] (the default): sleep until a frame, a signal or the next deadline
//!   (capped by the caller). Costs no CPU while idle, but every wake-up is late: on the 2-vCPU
//!   test machine a sleeping thread woken by a frame from another CPU runs about 45 us later,
//!   and a `ppoll` timer fires 30 to 55 us late even with 1 us timer slack (measured,
//!   `docs/performance.md`, "Real-packet switch").
//! - [`WaitMode::Busy`]: never sleep (a zero `ppoll` timeout every round): frames are read and
//!   timers served within a round of the loop (about a microsecond), at the price of one whole
//!   CPU, always, idle or not.
//! - [`WaitMode::Hybrid`]: spin while the switch was active (a frame received or sent) less
//!   than `spin_ns` ago, or a deadline is due within `spin_ns`; otherwise sleep as `Poll` does.
//!   Busy while traffic flows, idle (and as late as `Poll`) after `spin_ns` of silence.
//! - The answer is a timeout: 0 means "look again at once" (spin), anything else the longest
//!   sleep; it never exceeds `max_ns`, and a deadline already due gives 0 in every mode.

use serde::Deserialize;

/// The `wait` key of `switch.toml`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WaitMode {
    #[default]
    Poll,
    Busy,
    Hybrid,
}

impl WaitMode {
    pub fn name(self) -> &'static str {
        match self {
            WaitMode::Poll => "poll",
            WaitMode::Busy => "busy",
            WaitMode::Hybrid => "hybrid",
        }
    }
}

/// The loop's waiting policy and the time it was last active.
#[derive(Clone, Debug)]
pub struct Waiter {
    pub mode: WaitMode,
    pub spin_ns: u64,
    pub max_ns: u64,
    /// Last time (ns) a frame was received or sent; `None` before the first.
    last_active: Option<u64>,
}

impl Waiter {
    pub fn new(mode: WaitMode, spin_ns: u64, max_ns: u64) -> Waiter {
        Waiter { mode, spin_ns, max_ns, last_active: None }
    }

    /// Notes activity (a frame received or sent) at `now_ns`.
    #[inline]
    pub fn active(&mut self, now_ns: u64) {
        self.last_active = Some(now_ns);
    }

    /// The `ppoll` timeout (ns) at `now_ns` with the next deadline at `deadline_ns`: 0 = spin.
    pub fn timeout_ns(&self, now_ns: u64, deadline_ns: u64) -> u64 {
        let until = deadline_ns.saturating_sub(now_ns).min(self.max_ns);
        match self.mode {
            WaitMode::Poll => until,
            WaitMode::Busy => 0,
            WaitMode::Hybrid => {
                let recent = self.last_active.is_some_and(|t| now_ns.saturating_sub(t) < self.spin_ns);
                if recent || until < self.spin_ns {
                    0
                } else {
                    until
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = 100_000_000;

    #[test]
    fn poll_sleeps_until_the_deadline_capped() {
        let w = Waiter::new(WaitMode::Poll, 50_000, MAX);
        assert_eq!(w.timeout_ns(1_000, 31_000), 30_000);
        assert_eq!(w.timeout_ns(1_000, 1_000), 0);
        assert_eq!(w.timeout_ns(5_000, 1_000), 0, "a deadline in the past is due now");
        assert_eq!(w.timeout_ns(0, u64::MAX), MAX);
    }

    #[test]
    fn busy_never_sleeps() {
        let mut w = Waiter::new(WaitMode::Busy, 50_000, MAX);
        assert_eq!(w.timeout_ns(0, u64::MAX), 0);
        w.active(10);
        assert_eq!(w.timeout_ns(10_000_000_000, u64::MAX), 0);
    }

    #[test]
    fn hybrid_spins_after_activity_then_sleeps() {
        let mut w = Waiter::new(WaitMode::Hybrid, 50_000, MAX);
        // never active, nothing due soon: sleep
        assert_eq!(w.timeout_ns(1_000_000, u64::MAX), MAX);
        w.active(1_000_000);
        assert_eq!(w.timeout_ns(1_000_000, u64::MAX), 0);
        assert_eq!(w.timeout_ns(1_049_999, u64::MAX), 0);
        // spin window over: sleep until the deadline
        assert_eq!(w.timeout_ns(1_050_000, 2_050_000), 1_000_000);
        // a deadline within the spin window: spin instead of a late timer
        assert_eq!(w.timeout_ns(2_000_000, 2_040_000), 0);
        assert_eq!(w.timeout_ns(2_000_000, 2_050_000), 50_000);
    }

    #[test]
    fn modes_parse_by_name() {
        #[derive(Deserialize)]
        struct T {
            wait: WaitMode,
        }
        for m in [WaitMode::Poll, WaitMode::Busy, WaitMode::Hybrid] {
            let t: T = toml::from_str(&format!("wait = \"{}\"", m.name())).unwrap();
            assert_eq!(t.wait, m);
        }
        assert!(toml::from_str::<T>("wait = \"spin\"").is_err());
    }
}
