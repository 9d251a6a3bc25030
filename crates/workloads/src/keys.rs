//! Key encoding as db_bench does it: the key number big-endian in the first 8 bytes, so
//! byte order is numeric order and fillseq writes in key order, padded to the key size
//! with ASCII '0' as db_bench's `GenerateKeyFromInt` pads. Byte for byte db_bench's keys,
//! so the two tools can read one database and a difference between them is code, not data.

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
        // Padding stays as the buffer was made: '0's, written once by `buffer`.
    }

    /// db_bench's padding byte after the key number.
    pub const PAD: u8 = b'0';

    /// A key buffer of the right size, padded as db_bench pads (every key buffer is made
    /// here, so `encode` writes only the number on the hot path).
    pub fn buffer(&self) -> Vec<u8> {
        let mut b = vec![Self::PAD; self.size];
        b[..Self::MIN_SIZE.min(self.size)].fill(0);
        b
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

    #[test]
    fn keys_are_db_benchs_bytes() {
        // db_bench --key_size=20, key 258: 8 bytes big-endian, then twelve '0's.
        let f = KeyFormat { size: 20 };
        let mut k = f.buffer();
        f.encode(258, &mut k);
        let mut want = vec![0u8, 0, 0, 0, 0, 0, 1, 2];
        want.extend_from_slice(b"000000000000");
        assert_eq!(k, want);
    }
}
