//! The insert benchmark's rows, with the published value ranges: cashregisterid of
//! 1000 values, customerid of 100k, productid of 10k, price below 500, and 10-20 bytes
//! of data of which half are random (so compression has something to do, but not
//! everything).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Distinct cash registers.
pub const CASHREGISTERS: i32 = 1000;
/// Distinct customers.
pub const CUSTOMERS: i32 = 100_000;
/// Distinct products.
pub const PRODUCTS: i32 = 10_000;
/// Prices are below this.
pub const MAX_PRICE: i32 = 500;
/// Shortest and longest data column, bytes.
pub const DATA_LEN: (usize, usize) = (10, 20);

/// One row. The data column lives inline, so a commit's rows allocate nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The primary key: assigned by plumb on an embedded engine; a SQL server assigns
    /// its own (auto-increment) and this is ignored there.
    pub id: u64,
    /// Seconds since the Unix epoch (all rows of a commit share it, as published).
    pub dateandtime: i64,
    /// 0..1000.
    pub cashregisterid: i32,
    /// 0..100k.
    pub customerid: i32,
    /// 0..10k.
    pub productid: i32,
    /// 0..500.
    pub price: i32,
    data: [u8; DATA_LEN.1],
    data_len: u8,
}

impl Row {
    /// The data column.
    pub fn data(&self) -> &[u8] {
        &self.data[..self.data_len as usize]
    }

    /// The data column as text (it is ASCII by construction).
    pub fn data_str(&self) -> &str {
        std::str::from_utf8(self.data()).unwrap_or("")
    }

    /// A row from its stored parts (an embedded engine's primary-key value).
    pub fn from_parts(id: u64, cols: [i32; 4], dateandtime: i64, data: &[u8]) -> Row {
        let mut d = [0u8; DATA_LEN.1];
        let n = data.len().min(DATA_LEN.1);
        d[..n].copy_from_slice(&data[..n]);
        Row {
            id,
            dateandtime,
            cashregisterid: cols[0],
            customerid: cols[1],
            productid: cols[2],
            price: cols[3],
            data: d,
            data_len: n as u8,
        }
    }
}

/// Printable bytes the random half of `data` is drawn from.
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Makes rows for one client, reproducibly from its seed.
pub struct RowGen {
    rng: SmallRng,
}

impl RowGen {
    /// A generator for one client of one step.
    pub fn new(seed: u64) -> RowGen {
        RowGen {
            rng: SmallRng::seed_from_u64(seed ^ 0x1b5e_7c00),
        }
    }

    /// The next row.
    pub fn row(&mut self, id: u64, dateandtime: i64) -> Row {
        let r = &mut self.rng;
        let len = r.random_range(DATA_LEN.0..=DATA_LEN.1);
        let random = len / 2;
        let mut data = [0u8; DATA_LEN.1];
        data[..len - random].fill(b'a');
        for b in &mut data[len - random..len] {
            *b = ALPHABET[r.random_range(0..ALPHABET.len())];
        }
        Row {
            id,
            dateandtime,
            cashregisterid: r.random_range(0..CASHREGISTERS),
            customerid: r.random_range(0..CUSTOMERS),
            productid: r.random_range(0..PRODUCTS),
            price: r.random_range(0..MAX_PRICE),
            data,
            data_len: len as u8,
        }
    }

    /// A uniform draw in `0..n` (query start values, primary keys).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.rng.random_range(0..n)
        }
    }
}

/// `dateandtime` as SQL text (`2026-11-23 23:06:02`), written into `out`.
pub fn sql_datetime(secs: i64, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    let t = chrono::DateTime::from_timestamp(secs, 0).unwrap_or_default();
    let _ = write!(out, "{}", t.format("%Y-%m-%d %H:%M:%S"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_the_published_ranges_and_repeat_from_a_seed() {
        let (mut a, mut b) = (RowGen::new(7), RowGen::new(7));
        for i in 0..10_000 {
            let r = a.row(i, 1_700_000_000);
            assert_eq!(r, b.row(i, 1_700_000_000));
            assert!((0..CASHREGISTERS).contains(&r.cashregisterid));
            assert!((0..CUSTOMERS).contains(&r.customerid));
            assert!((0..PRODUCTS).contains(&r.productid));
            assert!((0..MAX_PRICE).contains(&r.price));
            let d = r.data();
            assert!((DATA_LEN.0..=DATA_LEN.1).contains(&d.len()));
            // The first half is constant, the rest drawn from the alphabet.
            assert!(d[..d.len() - d.len() / 2].iter().all(|&c| c == b'a'));
            assert!(d.iter().all(|c| ALPHABET.contains(c)));
            let back = Row::from_parts(
                i,
                [r.cashregisterid, r.customerid, r.productid, r.price],
                r.dateandtime,
                d,
            );
            assert_eq!(back, r);
        }
        let mut s = String::new();
        sql_datetime(0, &mut s);
        assert_eq!(s, "1970-01-01 00:00:00");
    }
}
