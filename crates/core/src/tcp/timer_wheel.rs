//! When a TCP timer fires on Linux: the kernel's timer wheel (`kernel/time/timer.c`, the
//! non-cascading wheel of Linux 4.8 and later), for `tcp.timer_wheel_hz`.
//!
//! Rules:
//! - Time runs in jiffies of `1 / hz` s; jiffy `n` starts at `n / hz` s of simulated time, and
//!   the wheel's clock is the current jiffy.
//! - A timer armed at `now` for `delay` expires at jiffy `e = jiffy(now) + ceil(delay)`: Linux
//!   keeps the RTO in whole jiffies, rounded up (`usecs_to_jiffies`).
//! - The wheel files it by `d = e - jiffy(now)`: level 0 if `d < 63`, level `L >= 1` if
//!   `63 * 8^(L-1) <= d < 63 * 8^L`. A level-`L` timer fires at the first multiple of `8^L`
//!   jiffies after `e`: `((e >> 3L) + 1) << 3L`, never early and up to `8^L` jiffies late
//!   (`calc_index`). Level 0 fires one jiffy after `e`.
//! - So timers longer than 63 jiffies fire on a lattice shared by every timer of their level:
//!   at 250 Hz, RTOs of 2 to 16 s all fire on the same 256 ms boundaries, whatever flow armed
//!   them. The testbed's senders do (docs/validation.md, testbed section).
//! - `hz = 0`: exact timers, `now + delay` (the simulator's default).
//! - Levels beyond the ninth (more than 63 * 8^8 jiffies) are treated as the ninth.

use crate::time::{SimDuration, SimTime};

/// Picoseconds per second.
const PS: u128 = crate::time::PS_PER_SEC as u128;
/// Slots per level below which a timer stays at level 0 (Linux `LVL_START(1)`).
const LVL0_SLOTS: u64 = 63;
/// Each level is `2^LVL_CLK_SHIFT` times coarser than the one below it.
const LVL_CLK_SHIFT: u32 = 3;
/// Levels of the wheel (Linux `LVL_DEPTH` for HZ above 100).
const LVL_DEPTH: u32 = 9;

/// When a timer armed at `now` for `delay` fires on a `hz` wheel (`hz = 0`: exactly at
/// `now + delay`). See the module rules.
pub fn expiry(now: SimTime, delay: SimDuration, hz: u32) -> SimTime {
    if hz == 0 {
        return now + delay;
    }
    let hz = hz as u128;
    let clk = (now.0 as u128 * hz / PS) as u64;
    let d = (delay.0 as u128 * hz).div_ceil(PS) as u64;
    let e = clk + d;
    let shift = LVL_CLK_SHIFT * level(d);
    let fire = ((e >> shift) + 1) << shift;
    SimTime((fire as u128 * PS).div_ceil(hz) as u64)
}

/// The wheel level of a timer `d` jiffies away.
fn level(d: u64) -> u32 {
    let mut l = 0;
    let mut start = LVL0_SLOTS;
    while d >= start && l + 1 < LVL_DEPTH {
        l += 1;
        start <<= LVL_CLK_SHIFT;
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    const HZ: u32 = 250;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_ms(v)
    }
    fn at_ms(v: u64) -> SimTime {
        SimTime::ZERO + ms(v)
    }

    #[test]
    fn zero_hz_is_exact() {
        assert_eq!(expiry(at_ms(7), SimDuration(123), 0), at_ms(7) + SimDuration(123));
    }

    #[test]
    fn levels_start_at_63_jiffies_and_grow_eightfold() {
        assert_eq!((level(0), level(62), level(63)), (0, 0, 1));
        assert_eq!((level(503), level(504), level(4031), level(4032)), (1, 2, 2, 3));
        assert_eq!(level(u64::MAX), LVL_DEPTH - 1);
    }

    #[test]
    fn level_zero_fires_one_jiffy_after_the_expiry() {
        // 1 ms after jiffy 10 (40 ms), 200 ms = 50 jiffies: expires at jiffy 60, fires at 61.
        assert_eq!(expiry(at_ms(41), ms(200), HZ), at_ms(244));
        // a delay between jiffies is rounded up: 201 ms is 51 jiffies.
        assert_eq!(expiry(at_ms(41), ms(201), HZ), at_ms(248));
    }

    #[test]
    fn longer_timers_fire_on_their_levels_lattice_never_early() {
        for (delay_ms, grain_ms) in [(408, 32), (1632, 32), (3264, 256), (13056, 256), (26112, 2048)] {
            for now_ms in [0, 1, 37, 1000, 123_457] {
                let now = at_ms(now_ms);
                let t = expiry(now, ms(delay_ms), HZ);
                assert!(t >= now + ms(delay_ms), "{delay_ms} ms armed at {now_ms} ms fired early at {t:?}");
                assert!(t <= now + ms(delay_ms + grain_ms + 4), "{delay_ms} ms armed at {now_ms} ms fired late at {t:?}");
                assert_eq!(t.0 % ms(grain_ms).0, 0, "{delay_ms} ms armed at {now_ms} ms: {t:?} is off the {grain_ms} ms lattice");
            }
        }
    }

    #[test]
    fn timers_armed_apart_fire_together() {
        // Two 3.264 s RTOs armed 50 ms apart land on the same 256 ms boundary.
        let a = expiry(at_ms(1000), ms(3264), HZ);
        let b = expiry(at_ms(1050), ms(3264), HZ);
        assert_eq!(a, b);
        assert_eq!(a, at_ms(4352));
    }

    #[test]
    fn other_rates_use_their_own_jiffy() {
        // 1000 Hz: 3.264 s is 3264 jiffies, level 2 (64 ms): armed at 0, fires at 3.328 s.
        assert_eq!(expiry(SimTime::ZERO, ms(3264), 1000), at_ms(3328));
        // 300 Hz: jiffies of 3.33 ms; the result is rounded up to the picosecond.
        let t = expiry(SimTime::ZERO, ms(10), 300);
        assert_eq!(t, SimTime((4 * PS).div_ceil(300) as u64));
    }
}
