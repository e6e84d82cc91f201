//! Internet checksums: full computation (RFC 1071) and incremental update (RFC 1624).
//!
//! Rules:
//! - Words are 16-bit big-endian; an odd trailing byte is padded with a zero byte (RFC 1071).
//! - The switch never recomputes a checksum on the packet path: every header edit goes through
//!   [`patch`], which writes the new bytes and updates the checksum word by word with RFC 1624
//!   equation 3, `HC' = ~(~HC + ~m + m')`. Equation 3 (not 2) is used because it never turns a
//!   valid checksum into the forbidden `-0` form the older RFC 1141 rule produced.
//! - Word alignment is relative to the start of the checksummed region (the TCP header, which
//!   starts at an even offset of the IPv4 packet): an edit at an odd offset updates the two
//!   words it straddles.
//! - Full computation ([`tcp_checksum`]) exists for tests and the fuzz harness only.

/// Folds a 32-bit one's-complement accumulator into 16 bits.
#[inline]
pub fn fold(mut s: u32) -> u16 {
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    s as u16
}

/// Adds the 16-bit big-endian words of `data` to `acc` (odd tail padded with zero).
pub fn add_words(data: &[u8], mut acc: u32) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc = acc.wrapping_add(u16::from_be_bytes([c[0], c[1]]) as u32);
        // keep the accumulator from overflowing on long inputs
        if acc > 0xFFFF_0000 {
            acc = fold(acc) as u32;
        }
    }
    if let [b] = chunks.remainder() {
        acc = acc.wrapping_add((*b as u32) << 8);
    }
    acc
}

/// RFC 1624 equation 3: the checksum `hc` after one 16-bit word changed from `old` to `new`.
#[inline]
pub fn update16(hc: u16, old: u16, new: u16) -> u16 {
    let s = (!hc) as u32 + (!old) as u32 + new as u32;
    !fold(s)
}

/// The TCP checksum (pseudo-header + segment) of the segment `ip[ihl..total]` in an IPv4
/// packet `ip`, with the checksum field taken as zero. `None` if the packet is too short.
pub fn tcp_checksum(ip: &[u8]) -> Option<u16> {
    if ip.len() < 20 {
        return None;
    }
    let ihl = ((ip[0] & 0x0F) as usize) * 4;
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if ihl < 20 || total < ihl + 20 || total > ip.len() {
        return None;
    }
    let seg = &ip[ihl..total];
    let mut acc = add_words(&ip[12..20], 0); // source and destination addresses
    acc += 6; // zero byte + protocol
    acc += seg.len() as u32;
    acc = add_words(&seg[..16], acc);
    acc = add_words(&seg[18..], acc); // skip the checksum field itself
    Some(!fold(acc))
}

/// Is the TCP checksum of IPv4 packet `ip` correct? (`false` if too short to tell.)
pub fn tcp_checksum_ok(ip: &[u8]) -> bool {
    match tcp_checksum(ip) {
        Some(c) => {
            let ihl = ((ip[0] & 0x0F) as usize) * 4;
            let have = u16::from_be_bytes([ip[ihl + 16], ip[ihl + 17]]);
            // 0x0000 and 0xFFFF are the same one's-complement number
            have == c || (have == 0xFFFF && c == 0) || (have == 0 && c == 0xFFFF)
        }
        None => false,
    }
}

/// Writes `new` at `buf[pos..]` and updates the checksum stored big-endian at `buf[csum_at..]`,
/// whose region starts at `base` (word alignment is relative to `base`). The checksum field
/// itself must not overlap the edited bytes. Out-of-range edits are ignored (returns `false`).
pub fn patch(buf: &mut [u8], csum_at: usize, base: usize, pos: usize, new: &[u8]) -> bool {
    let end = pos + new.len();
    if end > buf.len() || csum_at + 2 > buf.len() || pos < base || new.is_empty() {
        return false;
    }
    if csum_at < end && pos < csum_at + 2 {
        return false;
    }
    let mut hc = u16::from_be_bytes([buf[csum_at], buf[csum_at + 1]]);
    // first aligned word touching the edit
    let mut w = pos - ((pos - base) & 1);
    while w < end {
        let hi = |b: &[u8], i: usize| if i < b.len() { b[i] } else { 0 };
        let old = u16::from_be_bytes([hi(buf, w), hi(buf, w + 1)]);
        for i in w..(w + 2).min(end) {
            if i >= pos && i < buf.len() {
                buf[i] = new[i - pos];
            }
        }
        let nw = u16::from_be_bytes([hi(buf, w), hi(buf, w + 1)]);
        if nw != old {
            hc = update16(hc, old, nw);
        }
        w += 2;
    }
    buf[csum_at..csum_at + 2].copy_from_slice(&hc.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// An IPv4/TCP packet with random header fields, options and payload, and a correct checksum.
    fn random_segment(rng: &mut dcfair_core::rng::Rng) -> Vec<u8> {
        let opt_words = rng.gen_range(0..=10usize);
        let payload = rng.gen_range(0..=1460usize);
        let tcp_len = 20 + 4 * opt_words + payload;
        let total = 20 + tcp_len;
        let mut ip = vec![0u8; total];
        rng.fill(&mut ip[..]);
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[9] = 6;
        ip[20 + 12] = (((5 + opt_words) as u8) << 4) | (ip[20 + 12] & 0x0F);
        let c = tcp_checksum(&ip).unwrap();
        ip[20 + 16..20 + 18].copy_from_slice(&c.to_be_bytes());
        assert!(tcp_checksum_ok(&ip));
        ip
    }

    // --- RFC 1624 against a full recomputation -------------------------------------------
    #[test]
    fn incremental_update_matches_full_recomputation_on_random_packets() {
        let mut rng = dcfair_core::rng::Rng::seed_from_u64(1624);
        for _ in 0..5000 {
            let mut ip = random_segment(&mut rng);
            let tcp_len = ip.len() - 20;
            // edit 1..=4 random bytes anywhere in the segment except the checksum field
            let n = rng.gen_range(1..=4usize);
            let mut pos = rng.gen_range(0..tcp_len - n + 1);
            if pos < 18 && pos + n > 16 {
                pos = 18.min(tcp_len - n);
                if pos < 18 && pos + n > 16 {
                    continue;
                }
            }
            let new: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            assert!(patch(&mut ip, 36, 20, 20 + pos, &new));
            assert_eq!(&ip[20 + pos..20 + pos + n], &new[..]);
            assert!(tcp_checksum_ok(&ip), "checksum wrong after editing {n} bytes at {pos}");
        }
    }
    #[test]
    fn update16_is_equation_3() {
        // RFC 1624 section 4 example: HC = 0xDD2F, m = 0x5555 -> m' = 0x3285, HC' = 0x0000
        assert_eq!(update16(0xDD2F, 0x5555, 0x3285), 0x0000);
        // unchanged word: unchanged checksum
        assert_eq!(update16(0x1234, 0xBEEF, 0xBEEF), 0x1234);
    }
    #[test]
    fn patch_refuses_out_of_range_and_overlapping_edits() {
        let mut b = vec![0u8; 40];
        assert!(!patch(&mut b, 16, 0, 39, &[1, 2]));
        assert!(!patch(&mut b, 16, 0, 15, &[1, 2]));
        assert!(!patch(&mut b, 16, 4, 2, &[1]));
        assert_eq!(b, vec![0u8; 40]);
    }
    #[test]
    fn odd_length_tail_is_padded() {
        assert_eq!(add_words(&[0x01], 0), 0x0100);
        assert_eq!(fold(add_words(&[0xFF, 0xFF, 0x00, 0x02], 0)), 0x0002);
    }
}
