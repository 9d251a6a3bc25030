//! YCSB's key hashing and key names. A hashed insert order spreads consecutive key
//! numbers over the key space with 64-bit FNV-1 (`Utils.fnvhash64`), so a load does not
//! append in key order; the key name is `user` and the (hashed) number in decimal, zero
//! padded (`CoreWorkload.buildKeyName`). Both must match YCSB bit for bit, or plumb's
//! tables hold other keys than YCSB's and scans cover other rows.

/// FNV-1's 64-bit offset basis, as YCSB's `Utils.FNV_OFFSET_BASIS_64` (a signed Java
/// long): the hash starts here.
pub const FNV_OFFSET_BASIS_64: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;

/// FNV-1's 64-bit prime, as YCSB's `Utils.FNV_PRIME_64`.
pub const FNV_PRIME_64: i64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1 over the 8 bytes of `v`, least significant first
/// (XOR the byte, then multiply, with Java's wrapping long arithmetic), then the
/// absolute value as Java's `Math.abs` takes it, so `i64::MIN` stays negative. Hashed
/// key names and the scrambled zipfian's key scatter both rest on it.
#[inline]
pub fn fnvhash64(v: i64) -> i64 {
    let mut h = FNV_OFFSET_BASIS_64;
    let mut rest = v;
    for _ in 0..8 {
        h ^= rest & 0xff;
        h = h.wrapping_mul(FNV_PRIME_64);
        rest >>= 8;
    }
    h.wrapping_abs()
}

/// Writes `n` in decimal into the tail of `buf` and returns where the digits start,
/// as `Long.toString` spells it (a leading '-' for negatives).
#[inline]
fn decimal(n: i64, buf: &mut [u8; 20]) -> usize {
    let mut i = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    i
}

/// The bytes of a key name for `keynum`: what `CoreWorkload.buildKeyName` returns.
/// `ordered` is `insertorder=ordered` (the number as is); otherwise it is hashed. The
/// decimal is left-padded with '0' to `zeropadding` characters (a minus sign counts
/// towards the width, as in YCSB).
#[inline]
fn key_parts(keynum: i64, zeropadding: u32, ordered: bool, buf: &mut [u8; 20]) -> (usize, usize) {
    let v = if ordered { keynum } else { fnvhash64(keynum) };
    let start = decimal(v, buf);
    let len = buf.len() - start;
    let fill = (zeropadding as usize).saturating_sub(len);
    (start, fill)
}

/// Appends the key name of `keynum` to `out` without allocating (beyond `out`'s own
/// growth): the hot path builds one key per operation into a reused buffer.
#[inline]
pub fn push_key_name(out: &mut String, keynum: i64, zeropadding: u32, ordered: bool) {
    let mut buf = [0u8; 20];
    let (start, fill) = key_parts(keynum, zeropadding, ordered, &mut buf);
    out.push_str("user");
    for _ in 0..fill {
        out.push('0');
    }
    // ASCII digits and '-' only.
    out.push_str(std::str::from_utf8(&buf[start..]).unwrap_or_default());
}

/// [`push_key_name`] for byte-keyed targets (key-value stores take `&[u8]` keys).
#[inline]
pub fn push_key_name_bytes(out: &mut Vec<u8>, keynum: i64, zeropadding: u32, ordered: bool) {
    let mut buf = [0u8; 20];
    let (start, fill) = key_parts(keynum, zeropadding, ordered, &mut buf);
    out.extend_from_slice(b"user");
    out.resize(out.len() + fill, b'0');
    out.extend_from_slice(&buf[start..]);
}

/// The key name of `keynum` as a new `String`, for loads, checks and tests where an
/// allocation per key does not matter.
pub fn build_key_name(keynum: i64, zeropadding: u32, ordered: bool) -> String {
    let mut s = String::with_capacity(24);
    push_key_name(&mut s, keynum, zeropadding, ordered);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1 64 from its definition over bytes, independently of the signed form above.
    fn fnv1_reference(v: i64) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        h
    }

    #[test]
    fn fnvhash64_is_fnv1_over_the_little_endian_bytes_then_java_abs() {
        for v in [
            0i64,
            1,
            2,
            255,
            256,
            -1,
            -2,
            i64::MAX,
            i64::MIN,
            123_456_789,
        ] {
            let r = fnv1_reference(v) as i64;
            assert_eq!(fnvhash64(v), r.wrapping_abs(), "{v}");
            assert!(fnvhash64(v) >= 0 || r == i64::MIN, "{v}");
        }
    }

    #[test]
    fn key_names_pad_and_hash_as_ycsb_does() {
        assert_eq!(build_key_name(5, 1, true), "user5");
        assert_eq!(build_key_name(5, 4, true), "user0005");
        assert_eq!(build_key_name(12345, 3, true), "user12345");
        assert_eq!(build_key_name(-5, 4, true), "user00-5");
        let h = fnvhash64(7).to_string();
        assert_eq!(build_key_name(7, 1, false), format!("user{h}"));
        assert_eq!(
            build_key_name(7, 25, false),
            format!("user{}{h}", "0".repeat(25 - h.len()))
        );
    }

    #[test]
    fn byte_and_string_forms_agree_and_append() {
        let mut s = String::from("x");
        let mut b = b"x".to_vec();
        for k in [0i64, 9, 10, 999_999, 1 << 40] {
            for (pad, ord) in [(1, true), (1, false), (12, true), (22, false)] {
                s.truncate(1);
                b.truncate(1);
                push_key_name(&mut s, k, pad, ord);
                push_key_name_bytes(&mut b, k, pad, ord);
                assert_eq!(s.as_bytes(), &b[..]);
                assert_eq!(&s[1..], build_key_name(k, pad, ord));
            }
        }
    }
}
