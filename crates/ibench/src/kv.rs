//! The insert benchmark on an embedded engine. The table is four key spaces in one
//! keyspace, told apart by a prefix byte, with every number big-endian so key order is
//! index order:
//!
//! - `p` transactionid → dateandtime, cashregisterid, customerid, productid, price, data
//! - `m` productid, customerid, price, transactionid (marketsegment)
//! - `r` cashregisterid, customerid, price, transactionid (registersegment)
//! - `d` price, dateandtime, customerid, transactionid (pdc)
//!
//! A commit writes each row's primary entry and, once l.x has run, its three index
//! entries in one write batch; a delete reads the row to find its index entries, as a
//! server does. So each engine is asked for the same work a SQL server does.

use crate::error::IbError;
use crate::row::Row;
use crate::target::{IbConn, IbTarget, SecIndex};
use plumb_core::{Maintenance, Session, Target, TargetError, WriteBatch};
use std::sync::atomic::{AtomicBool, Ordering};

const PK: u8 = b'p';

fn prefix(ix: SecIndex) -> u8 {
    match ix {
        SecIndex::MarketSegment => b'm',
        SecIndex::RegisterSegment => b'r',
        SecIndex::Pdc => b'd',
    }
}

/// Signed values keep their order as big-endian bytes with the sign bit flipped.
fn be32(v: i32) -> [u8; 4] {
    ((v as u32) ^ 0x8000_0000).to_be_bytes()
}

fn be64(v: i64) -> [u8; 8] {
    ((v as u64) ^ 0x8000_0000_0000_0000).to_be_bytes()
}

fn pk_key(id: u64) -> [u8; 9] {
    let mut k = [PK; 9];
    k[1..].copy_from_slice(&id.to_be_bytes());
    k
}

/// The index entry of `row` in `ix` (at most 1 + 4 + 8 + 4 + 8 bytes).
fn index_key(ix: SecIndex, row: &Row, out: &mut Vec<u8>) {
    out.clear();
    out.push(prefix(ix));
    match ix {
        SecIndex::MarketSegment => {
            out.extend_from_slice(&be32(row.productid));
            out.extend_from_slice(&be32(row.customerid));
            out.extend_from_slice(&be32(row.price));
        }
        SecIndex::RegisterSegment => {
            out.extend_from_slice(&be32(row.cashregisterid));
            out.extend_from_slice(&be32(row.customerid));
            out.extend_from_slice(&be32(row.price));
        }
        SecIndex::Pdc => {
            out.extend_from_slice(&be32(row.price));
            out.extend_from_slice(&be64(row.dateandtime));
            out.extend_from_slice(&be32(row.customerid));
        }
    }
    out.extend_from_slice(&row.id.to_be_bytes());
}

fn encode_value(row: &Row, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&row.dateandtime.to_be_bytes());
    for v in [row.cashregisterid, row.customerid, row.productid, row.price] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(row.data());
}

fn decode_value(id: u64, v: &[u8]) -> Option<Row> {
    if v.len() < 24 {
        return None;
    }
    let i = |at: usize| i32::from_be_bytes(v[at..at + 4].try_into().unwrap_or_default());
    let when = i64::from_be_bytes(v[0..8].try_into().ok()?);
    Some(Row::from_parts(
        id,
        [i(8), i(12), i(16), i(20)],
        when,
        &v[24..],
    ))
}

/// A table on an embedded engine.
pub struct KvTable {
    target: Box<dyn Target>,
    indexed: AtomicBool,
}

impl KvTable {
    /// The table in a freshly opened engine.
    pub fn new(target: Box<dyn Target>) -> KvTable {
        KvTable {
            target,
            indexed: AtomicBool::new(false),
        }
    }

    /// The engine, for its counters and options.
    pub fn target(&self) -> &dyn Target {
        &*self.target
    }

    /// Entries under one prefix, by a walk in key order.
    pub fn count_prefix(&self, p: u8) -> Result<u64, IbError> {
        let mut s = self.target.session()?;
        let mut n = 0u64;
        let (mut last, mut seen) = (vec![p], Vec::new());
        loop {
            let mut inside = false;
            let found = s.next_in_order(&last, &mut |k, _| {
                if k.first() == Some(&p) {
                    inside = true;
                    seen.clear();
                    seen.extend_from_slice(k);
                    seen.push(0);
                }
            })?;
            std::mem::swap(&mut last, &mut seen);
            if !found || !inside {
                return Ok(n);
            }
            n += 1;
        }
    }

    /// Entries of each secondary index (equal to the rows once l.x has run).
    pub fn count_index(&self, ix: SecIndex) -> Result<u64, IbError> {
        self.count_prefix(prefix(ix))
    }
}

impl IbTarget for KvTable {
    fn describe(&self) -> String {
        format!("{} {}", self.target.name(), self.target.version())
    }

    fn connect(&self) -> Result<Box<dyn IbConn + '_>, IbError> {
        Ok(Box::new(KvConn {
            table: self,
            session: self.target.session()?,
            batch: WriteBatch::default(),
            key: Vec::with_capacity(32),
            value: Vec::with_capacity(64),
            keys: Vec::new(),
            found: Vec::new(),
        }))
    }

    fn create_table(&self) -> Result<(), IbError> {
        if self.count_prefix(PK)? > 0 {
            return Err(IbError::Verify(format!(
                "{} already holds insert-benchmark rows: l.i0 needs an empty engine \
                 (a new --dir)",
                self.target.name()
            )));
        }
        self.indexed.store(false, Ordering::Relaxed);
        Ok(())
    }

    fn create_indexes(&self) -> Result<u64, IbError> {
        // Walk the primary entries in key order and write the three index entries of
        // a thousand rows per batch, as a server builds an index from a table scan.
        let mut reader = self.target.session()?;
        let mut writer = self.target.session()?;
        let (mut batch, mut key) = (WriteBatch::default(), Vec::new());
        let (mut next, mut seen) = (vec![PK], Vec::new());
        let mut rows = 0u64;
        loop {
            let mut row = None;
            let found = reader.next_in_order(&next, &mut |k, v| {
                if k.len() == 9 && k[0] == PK {
                    let id = u64::from_be_bytes(k[1..9].try_into().unwrap_or_default());
                    row = decode_value(id, v);
                    seen.clear();
                    seen.extend_from_slice(k);
                    seen.push(0);
                }
            })?;
            std::mem::swap(&mut next, &mut seen);
            let Some(r) = row.filter(|_| found) else {
                break;
            };
            for ix in SecIndex::ALL {
                index_key(ix, &r, &mut key);
                batch.put(&key, &[]);
            }
            rows += 1;
            if batch.len() >= 3000 {
                writer.write_batch(&batch)?;
                batch.clear();
            }
        }
        if !batch.is_empty() {
            writer.write_batch(&batch)?;
        }
        self.indexed.store(true, Ordering::Relaxed);
        Ok(rows)
    }

    fn reduce_debt(&self) -> Result<String, IbError> {
        let mut done = Vec::new();
        for (m, what) in [
            (Maintenance::Flush, "flush"),
            (Maintenance::WaitForCompaction, "wait for compaction"),
        ] {
            match self.target.maintenance(m) {
                Ok(()) => done.push(what),
                Err(TargetError::Unsupported { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(if done.is_empty() {
            format!("nothing: {} keeps no write debt", self.target.name())
        } else {
            done.join(", ")
        })
    }

    fn count_rows(&self) -> Result<u64, IbError> {
        self.count_prefix(PK)
    }

    fn data_dir(&self) -> Option<&std::path::Path> {
        self.target.data_dir()
    }
}

struct KvConn<'a> {
    table: &'a KvTable,
    session: Box<dyn Session + 'a>,
    batch: WriteBatch,
    key: Vec<u8>,
    value: Vec<u8>,
    keys: Vec<Vec<u8>>,
    found: Vec<Row>,
}

impl IbConn for KvConn<'_> {
    fn insert(&mut self, rows: &[Row]) -> Result<(), IbError> {
        let indexed = self.table.indexed.load(Ordering::Relaxed);
        self.batch.clear();
        for r in rows {
            encode_value(r, &mut self.value);
            self.batch.put(&pk_key(r.id), &self.value);
            if indexed {
                for ix in SecIndex::ALL {
                    index_key(ix, r, &mut self.key);
                    self.batch.put(&self.key, &[]);
                }
            }
        }
        self.session.write_batch(&self.batch)?;
        Ok(())
    }

    fn delete_range(&mut self, lo: u64, hi: u64) -> Result<u64, IbError> {
        let indexed = self.table.indexed.load(Ordering::Relaxed);
        self.found.clear();
        for id in lo..hi {
            let mut row = None;
            self.session
                .get(&pk_key(id), &mut |v| row = decode_value(id, v))?;
            if let Some(r) = row {
                self.found.push(r);
            }
        }
        self.batch.clear();
        for r in &self.found {
            self.batch.delete(&pk_key(r.id));
            if indexed {
                for ix in SecIndex::ALL {
                    index_key(ix, r, &mut self.key);
                    self.batch.delete(&self.key);
                }
            }
        }
        if !self.batch.is_empty() {
            self.session.write_batch(&self.batch)?;
        }
        Ok(self.found.len() as u64)
    }

    fn point(&mut self, ids: &[u64]) -> Result<u64, IbError> {
        self.keys.resize_with(ids.len(), Vec::new);
        for (k, id) in self.keys.iter_mut().zip(ids) {
            k.clear();
            k.extend_from_slice(&pk_key(*id));
        }
        let mut n = 0u64;
        self.session
            .multi_get(&self.keys[..ids.len()], &mut |_, v| {
                n += u64::from(v.is_some())
            })?;
        Ok(n)
    }

    fn range(&mut self, ix: SecIndex, from: i32, limit: u32) -> Result<u64, IbError> {
        if limit == 0 {
            return Ok(0);
        }
        let p = prefix(ix);
        self.key.clear();
        self.key.push(p);
        // registersegment's query is `cashregisterid > from`; the others are `>=`.
        let first = if ix == SecIndex::RegisterSegment {
            from.saturating_add(1)
        } else {
            from
        };
        self.key.extend_from_slice(&be32(first));
        let mut n = 0u64;
        self.session
            .scan(&self.key, limit as usize - 1, false, &mut |k, _| {
                n += u64::from(k.first() == Some(&p));
            })?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::RowGen;

    #[test]
    fn keys_sort_as_the_index_columns_and_values_decode() {
        let mut g = RowGen::new(1);
        let mut rows: Vec<Row> = (0..2000)
            .map(|i| g.row(i, 1_700_000_000 + i as i64))
            .collect();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for ix in SecIndex::ALL {
            rows.sort_by_key(|r| match ix {
                SecIndex::MarketSegment => (
                    r.productid as i64,
                    r.customerid as i64,
                    r.price as i64,
                    r.id,
                ),
                SecIndex::RegisterSegment => (
                    r.cashregisterid as i64,
                    r.customerid as i64,
                    r.price as i64,
                    r.id,
                ),
                SecIndex::Pdc => (r.price as i64, r.dateandtime, r.customerid as i64, r.id),
            });
            for w in rows.windows(2) {
                index_key(ix, &w[0], &mut a);
                index_key(ix, &w[1], &mut b);
                assert!(a < b, "{ix:?}");
            }
        }
        assert!(be32(-1) < be32(0) && be64(-5) < be64(3));
        let mut v = Vec::new();
        encode_value(&rows[0], &mut v);
        assert_eq!(decode_value(rows[0].id, &v), Some(rows[0]));
    }
}
