//! Key encoding as db_bench does it: the key number big-endian in the first 8 bytes, so
//! byte order is numeric order and fillseq writes in key order, padded to the key size.

/// Fixed-size key layout for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyFormat {
    /// Bytes per key (db_bench's --key_size, default 20; at least 8).
    pub size: usize,
}

impl KeyFormat {
    /// Smallest key that still holds a 64-bit key number.
    pub const MIN_SIZE: usize = 8;

    /// Writes key number `n` into `buf` (which must be `self.size` long).
    #[inline]
    pub fn encode(&self, n: u64, buf: &mut [u8]) {
        buf[..8].copy_from_slice(&n.to_be_bytes());
        // Padding stays as the buffer was made: zeros, written once by `buffer`.
    }

    /// A zeroed key buffer of the right size.
    pub fn buffer(&self) -> Vec<u8> {
        vec![0u8; self.size]
    }

    /// Reads the key number back (for checks and error messages).
    pub fn decode(&self, key: &[u8]) -> Option<u64> {
        let b: [u8; 8] = key.get(..8)?.try_into().ok()?;
        Some(u64::from_be_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_of_bytes_is_order_of_numbers() {
        let f = KeyFormat { size: 20 };
        let (mut a, mut b) = (f.buffer(), f.buffer());
        f.encode(255, &mut a);
        f.encode(256, &mut b);
        assert!(a < b);
        assert_eq!(f.decode(&b), Some(256));
        assert_eq!(a.len(), 20);
    }
}
