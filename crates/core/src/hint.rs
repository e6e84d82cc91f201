//! Cache hints: asking for a line before it is read.
//!
//! Rules:
//! - A prefetch is a hint to the processor and nothing else: it reads no value, changes no
//!   state and cannot fault (any address may be given, even one past an allocation), so no
//!   result of a run depends on whether or where one is issued.
//! - Use it where the next access to a line is known one step ahead and the line is likely
//!   cold: the engine's next event (`dcfair-sim`'s run loop) or a queue's next packet.
//!   A simulated port is visited about once a microsecond of simulated time, hundreds of
//!   events apart, so its lines have usually left the first-level cache by then
//!   (docs/performance.md, "Where the engine's time goes").
//! - On targets other than x86-64 it does nothing.

/// Asks for the cache line holding `p`.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints; it does not dereference `p` and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::prefetch;

    #[test]
    fn any_address_may_be_hinted() {
        let v = vec![1u64; 4];
        prefetch(v.as_ptr());
        prefetch(v.as_ptr().wrapping_add(u32::MAX as usize)); // far past the end: no fault
        prefetch(std::ptr::null::<u8>());
        assert_eq!(v, [1; 4]);
    }
}
