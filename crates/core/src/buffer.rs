//! Shared-buffer switches: one buffer per switch, shared by its ports, each queue limited
//! dynamically to a multiple of what is free (Choudhury and Hahne, "Dynamic Queue Length
//! Thresholds for Shared-Memory Packet Switches", IEEE/ACM ToN 6(2), 1998).
//!
//! Rules (`[buffer]`, at every switch; hosts keep their NIC queues):
//! - `used` counts the bytes of every packet the switch holds, of both classes, from the moment
//!   a port stores it until it leaves on the wire or a discipline drops it.
//! - Egress accounting drives drops: a lossy packet is refused at its output port (counted as an
//!   overflow drop of that port) unless it fits what the lossy class may use (`bytes` less the
//!   headroom PFC reserves) and its queue would stay within `alpha x free`, `free` being the
//!   shared part not used. The port's discipline then sees it as usual, with its own limit and
//!   marking: every discipline works on an egress queue of a shared buffer.
//! - Ingress accounting drives PFC: with `[pfc]`, a gate pauses its link at `min(pfc.xoff_bytes,
//!   pfc_alpha x free)` and resumes `xoff_bytes - xon_bytes` below that (the HPCC authors' switch
//!   pauses at a fraction of the free shared buffer too); the headroom of every gate is reserved
//!   for the lossless class, which only the whole buffer being full can drop.

use crate::config::ConfigError;
use serde::{Deserialize, Serialize};

/// `[buffer]` (module rules).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    /// Bytes of buffer per switch. 12 MB: a Broadcom Trident II, the switch of the DCQCN paper's
    /// testbed.
    pub bytes: u64,
    /// A lossy queue may hold up to `alpha` times the free shared buffer. 1: Choudhury and Hahne's
    /// example.
    pub alpha: f64,
    /// With `[pfc]`, a gate pauses at `pfc_alpha` times the free shared buffer (at most
    /// `pfc.xoff_bytes`). 1/8: the HPCC authors' ns-3 switch (`pfc_a_shift` 3).
    pub pfc_alpha: f64,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig { bytes: 12_000_000, alpha: 1.0, pfc_alpha: 0.125 }
    }
}

impl BufferConfig {
    /// Checks every key; errors name the key relative to `[buffer]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.bytes == 0 {
            return Err(ConfigError::new("bytes", "must be positive"));
        }
        for (k, v) in [("alpha", self.alpha), ("pfc_alpha", self.pfc_alpha)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ConfigError::new(k, format!("{v} is not a positive multiple of the free buffer")));
            }
        }
        Ok(())
    }
}

/// One switch's shared buffer (module rules).
#[derive(Clone, Debug)]
pub struct SharedBuffer {
    pub size: u64,
    /// Bytes held now, and the most held.
    pub used: u64,
    pub max_used: u64,
    /// Headroom reserved for the lossless class (the sum of the switch's gates').
    pub reserved: u64,
    alpha: f64,
    pfc_alpha: f64,
    /// Lossy packets refused.
    pub drops: u64,
}

impl SharedBuffer {
    pub fn new(cfg: &BufferConfig, reserved: u64) -> SharedBuffer {
        SharedBuffer { size: cfg.bytes, used: 0, max_used: 0, reserved, alpha: cfg.alpha, pfc_alpha: cfg.pfc_alpha, drops: 0 }
    }

    /// The shared part not used.
    #[inline]
    fn free(&self) -> u64 {
        self.size.saturating_sub(self.reserved).saturating_sub(self.used)
    }

    /// A lossy packet of `size` bytes joins a queue holding `queued` bytes: stored (and counted)
    /// or refused.
    pub fn admit_lossy(&mut self, queued: u64, size: u32) -> bool {
        let free = self.free();
        if size as u64 > free || (queued + size as u64) as f64 > self.alpha * free as f64 {
            self.drops += 1;
            return false;
        }
        self.hold(size);
        true
    }

    /// A lossless packet the gates admitted: stored unless the whole buffer is full.
    pub fn admit_lossless(&mut self, size: u32) -> bool {
        if self.used + size as u64 > self.size {
            return false;
        }
        self.hold(size);
        true
    }

    fn hold(&mut self, size: u32) {
        self.used += size as u64;
        self.max_used = self.max_used.max(self.used);
    }

    /// A packet of `size` bytes left the switch or was dropped after it was stored.
    #[inline]
    pub fn release(&mut self, size: u32) {
        debug_assert!(self.used >= size as u64, "a shared buffer released more than it held");
        self.used -= size as u64;
    }

    /// The XOFF level of a gate now: `min(xoff, pfc_alpha x free)`.
    pub fn xoff(&self, xoff: u64) -> u64 {
        xoff.min((self.pfc_alpha * self.free() as f64) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(bytes: u64, alpha: f64, reserved: u64) -> SharedBuffer {
        SharedBuffer::new(&BufferConfig { bytes, alpha, pfc_alpha: 0.5 }, reserved)
    }

    #[test]
    fn a_queue_is_held_to_alpha_times_the_free_buffer() {
        // alpha 1: one busy queue settles where its length equals what is free, half the buffer
        let mut b = buf(10_000, 1.0, 0);
        let mut q = 0;
        while b.admit_lossy(q, 100) {
            q += 100;
        }
        assert_eq!((q, b.used, b.drops), (5_000, 5_000, 1));
        // a second queue gets less: alpha x (10,000 - 5,000 - its own) -> 2,500
        let mut q2 = 0;
        while b.admit_lossy(q2, 100) {
            q2 += 100;
        }
        assert_eq!(q2, 2_500);
        b.release(100);
        assert_eq!(b.used, 7_400);
        assert_eq!(b.max_used, 7_500);
    }

    #[test]
    fn the_headroom_is_the_lossless_class_s_alone() {
        let mut b = buf(10_000, 100.0, 4_000);
        let mut q = 0;
        while b.admit_lossy(q, 1_000) {
            q += 1_000;
        }
        assert_eq!(q, 6_000, "the lossy class never takes the reserved 4,000");
        for _ in 0..4 {
            assert!(b.admit_lossless(1_000));
        }
        assert!(!b.admit_lossless(1), "the whole buffer is full");
    }

    #[test]
    fn the_gates_pause_at_a_fraction_of_what_is_free() {
        let mut b = buf(10_000, 1.0, 2_000);
        assert_eq!(b.xoff(100_000), 4_000, "0.5 x (10,000 - 2,000)");
        assert_eq!(b.xoff(1_000), 1_000, "never above the static level");
        assert!(b.admit_lossless(6_000));
        assert_eq!(b.xoff(100_000), 1_000);
    }

    #[test]
    fn validation_names_the_key() {
        let bad = |c: BufferConfig| c.validate().unwrap_err().key;
        assert_eq!(bad(BufferConfig { alpha: -1.0, ..BufferConfig::default() }), "alpha");
        assert_eq!(bad(BufferConfig { pfc_alpha: 0.0, ..BufferConfig::default() }), "pfc_alpha");
        assert_eq!(bad(BufferConfig { bytes: 0, ..BufferConfig::default() }), "bytes");
        assert!(BufferConfig::default().validate().is_ok());
    }
}
