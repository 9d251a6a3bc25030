//! What the runner asks of a target: one shared handle for the table's life (create,
//! index, pay the write debt, count), and one connection per client thread for the
//! timed ops, so nothing is shared per op.

use crate::error::IbError;
use crate::row::Row;

/// The three secondary indexes, with the published names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecIndex {
    /// (productid, customerid, price).
    MarketSegment,
    /// (cashregisterid, customerid, price).
    RegisterSegment,
    /// (price, dateandtime, customerid).
    Pdc,
}

impl SecIndex {
    /// All three, in the order a query picks from.
    pub const ALL: [SecIndex; 3] = [
        SecIndex::MarketSegment,
        SecIndex::RegisterSegment,
        SecIndex::Pdc,
    ];

    /// The index's name (with the table's prefix).
    pub fn name(self) -> &'static str {
        match self {
            SecIndex::MarketSegment => "ibench_marketsegment",
            SecIndex::RegisterSegment => "ibench_registersegment",
            SecIndex::Pdc => "ibench_pdc",
        }
    }

    /// How many values the index's first column takes (a query starts at a uniform
    /// draw of it).
    pub fn first_column_values(self) -> u64 {
        match self {
            SecIndex::MarketSegment => crate::row::PRODUCTS as u64,
            SecIndex::RegisterSegment => crate::row::CASHREGISTERS as u64,
            SecIndex::Pdc => crate::row::MAX_PRICE as u64,
        }
    }
}

/// A table on a server or an engine, for the whole run.
pub trait IbTarget: Sync {
    /// What it is, for messages (`postgres 17.2`, `rocksdb`).
    fn describe(&self) -> String;
    /// Opens one client's connection.
    fn connect(&self) -> Result<Box<dyn IbConn + '_>, IbError>;
    /// Drops and creates the table, without secondary indexes (before l.i0).
    fn create_table(&self) -> Result<(), IbError>;
    /// Creates the three secondary indexes (l.x); returns the rows indexed.
    fn create_indexes(&self) -> Result<u64, IbError>;
    /// Pays the write debt before the query steps (vacuum and checkpoint, flush,
    /// compaction); returns what was done, for the record.
    fn reduce_debt(&self) -> Result<String, IbError>;
    /// Rows in the table by the engine's own count.
    fn count_rows(&self) -> Result<u64, IbError>;
    /// The process whose tree is the system under test, when it is not plumb itself.
    fn server_pid(&self) -> Option<u32> {
        None
    }
    /// Where a server's sessions are sampled for their waits and its counters read
    /// every second; `None` for an embedded engine.
    fn endpoint(&self) -> Option<&plumb_servers::Endpoint> {
        None
    }
    /// Where its files are, for their size and the device's counters.
    fn data_dir(&self) -> Option<&std::path::Path> {
        None
    }
}

/// One client's connection: every call is one commit or one query.
pub trait IbConn {
    /// Inserts `rows` in one commit; `rows[i].id` is used only where the engine has no
    /// auto-increment (an embedded engine).
    fn insert(&mut self, rows: &[Row]) -> Result<(), IbError>;
    /// Deletes the rows with `lo <= transactionid < hi` in one commit; returns how many
    /// there were.
    fn delete_range(&mut self, lo: u64, hi: u64) -> Result<u64, IbError>;
    /// Fetches the rows with these primary keys; returns how many were found.
    fn point(&mut self, ids: &[u64]) -> Result<u64, IbError>;
    /// Reads up to `limit` entries of `index` from `from` on, in index order; returns
    /// how many came back.
    fn range(&mut self, index: SecIndex, from: i32, limit: u32) -> Result<u64, IbError>;
}
