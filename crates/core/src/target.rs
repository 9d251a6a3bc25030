//! The boundary between the harness and an engine. A [`Target`] is shared by all
//! workers; each worker owns one [`Session`] so that an engine can keep per-thread state
//! (iterators, read options, buffers) without locks in the hot path.

use crate::Result;
use std::path::Path;

/// What a scan hands each entry to, `visit(key, value)`. Named because every engine's
/// `scan` and `next_in_order` take one: spelt out, it spread each of their signatures
/// over seven lines.
pub type Visit<'a> = &'a mut dyn FnMut(&[u8], &[u8]);

/// What a multi-get hands each key's value to, `visit(i, value)` (`None`: not found),
/// named as [`Visit`] is.
pub type VisitBatch<'a> = &'a mut dyn FnMut(usize, Option<&[u8]>);

/// An engine or server being measured.
pub trait Target: Send + Sync {
    /// Short engine name as users know it (`rocksdb`, `null`, `memory`).
    fn name(&self) -> &'static str;
    /// The engine's own version string, recorded as provenance.
    fn version(&self) -> String;
    /// Whether reads return what was written: `null` does not, so reads are not verified.
    fn stores_data(&self) -> bool {
        true
    }
    /// Opens a per-worker handle; called once per worker thread before timing starts.
    fn session(&self) -> Result<Box<dyn Session + '_>>;
    /// Runs an unmeasured maintenance step (flush, wait for compaction, compact).
    fn maintenance(&self, what: Maintenance) -> Result<()>;
    /// Cumulative engine counters; the runner takes deltas over a window.
    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
    /// Where the engine keeps its files, for disk counters and size; `None` for memory.
    fn data_dir(&self) -> Option<&Path> {
        None
    }
    /// Every effective engine option, defaults included, as provenance.
    fn options(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The LSM's own account now (stalls by cause, compaction per level, the shape,
    /// block cache by block type), read at a step's start and end, never per op;
    /// `None` for engines that keep no such account.
    fn lsm(&self) -> Option<crate::LsmAccount> {
        None
    }
    /// Runs the engine's own check of its files and returns its name with the verdict
    /// (SQLite's `PRAGMA integrity_check`, RocksDB's `VerifyChecksum` of every table
    /// file); `None` for engines without one. Why: a durability trial reads back only
    /// the keys it acknowledged, and an engine can keep those while a page or block
    /// elsewhere is broken.
    fn integrity_check(&self) -> Option<(&'static str, Result<()>)> {
        None
    }
    /// Starts the calling thread's count of the engine's own per-op breakdown from
    /// zero, at `level` (db_bench's `--perf_level`: 1 off, 2 counts, 3 waits, 4 times
    /// but mutexes', 5 with CPU times, 6 all): RocksDB's PerfContext is per thread, so
    /// each measured thread starts and reads its own. Engines without one do nothing.
    fn thread_perf_start(&self, _level: u8) {}
    /// The calling thread's counts since [`Target::thread_perf_start`], by the engine's
    /// names (`block_read_time` in ns, `block_read_count` …), zeros left out; `Err`
    /// says why the engine has none.
    fn thread_perf(&self) -> Result<Vec<(String, u64)>, String> {
        Err(format!(
            "{} keeps no per-op breakdown of its own",
            self.name()
        ))
    }
}

/// One worker's connection to a target. Methods take caller-owned buffers so that an op
/// allocates nothing the engine itself does not.
pub trait Session {
    /// Writes one key; `sync` and WAL behaviour come from the target's options.
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Writes one key with the write-ahead log disabled for this write (db_bench's
    /// fillseq runs without the WAL). Engines without a WAL just write.
    fn put_no_wal(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put(key, value)
    }
    /// Reads one key. `visit` sees the value in place if found; returns whether found.
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool>;
    /// Reads one key like `get`, but may hand the value to `visit(key, value)` on the
    /// *next* call (or on `finish_deferred`) instead of now; returns whether this key
    /// was found. Why: checking a value reads every byte of it, and for a cached read
    /// those bytes are cold in the CPU cache (the engine only compared the key): an
    /// engine that keeps the value pinned can prefetch it and check it after its next
    /// lookup, when the lines have arrived, so verification stops costing a memory
    /// round trip per op that the engine itself never pays. Every found value is still
    /// visited exactly once.
    fn get_deferred(&mut self, key: &[u8], visit: Visit) -> Result<bool> {
        self.get(key, &mut |v| visit(key, v))
    }
    /// Visits the value `get_deferred` still holds, if any; call it once the reads of a
    /// step are done, so the last value is checked too.
    fn finish_deferred(&mut self, _visit: Visit) -> Result<()> {
        Ok(())
    }
    /// Reads a batch of keys in one call; `visit(i, value)` for each key in order.
    fn multi_get(&mut self, keys: &[Vec<u8>], visit: VisitBatch) -> Result<()> {
        for (i, k) in keys.iter().enumerate() {
            let mut hit = false;
            self.get(k, &mut |val: &[u8]| {
                hit = true;
                visit(i, Some(val));
            })?;
            if !hit {
                visit(i, None);
            }
        }
        Ok(())
    }
    /// Seeks to `start` (forward: first key >= start; reverse: last key <= start) and
    /// steps `nexts` more entries, visiting each. Returns the entries visited.
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize>;
    /// Visits the next entry of one forward pass in key order and returns whether
    /// there was one. The first call positions the pass at the first key >= `start`;
    /// later calls continue it (`start` is then the key the caller expects next, which
    /// engines that keep a cursor may ignore). Why: db_bench's readseq walks one
    /// iterator over the whole database, so the engine's readahead ramps up; a new
    /// iterator per chunk would measure many small reads instead.
    fn next_in_order(&mut self, start: &[u8], visit: Visit) -> Result<bool> {
        Ok(self.scan(start, 0, false, visit)? > 0)
    }
    /// Deletes one key.
    fn delete(&mut self, key: &[u8]) -> Result<()>;
    /// Applies a batch of puts and deletes as one write: a row of a table with
    /// secondary indexes is several keys, and an engine with write batches (RocksDB)
    /// commits them together, once through its WAL, as a SQL server commits a
    /// transaction. Engines without batches apply the ops one by one (not atomically).
    fn write_batch(&mut self, batch: &WriteBatch) -> Result<()> {
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => self.put(k, v)?,
                BatchOp::Delete(k) => self.delete(k)?,
            }
        }
        Ok(())
    }
}

/// A reusable batch of writes: keys and values in one buffer, so filling one per
/// commit allocates nothing once it has grown to the commit's size.
#[derive(Debug, Default, Clone)]
pub struct WriteBatch {
    bytes: Vec<u8>,
    /// (key start, key length, value length; `u32::MAX` marks a delete).
    ops: Vec<(usize, u32, u32)>,
}

/// One op of a [`WriteBatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Write key = value.
    Put(&'a [u8], &'a [u8]),
    /// Delete key.
    Delete(&'a [u8]),
}

impl WriteBatch {
    /// Empties it, keeping its buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ops.clear();
    }
    /// Adds a put.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.ops
            .push((self.bytes.len(), key.len() as u32, value.len() as u32));
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
    }
    /// Adds a delete.
    pub fn delete(&mut self, key: &[u8]) {
        self.ops
            .push((self.bytes.len(), key.len() as u32, u32::MAX));
        self.bytes.extend_from_slice(key);
    }
    /// Ops in the batch.
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// Whether it holds no op.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    /// Its ops, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = BatchOp<'_>> {
        self.ops.iter().map(|&(at, kl, vl)| {
            let k = &self.bytes[at..at + kl as usize];
            if vl == u32::MAX {
                BatchOp::Delete(k)
            } else {
                let v0 = at + kl as usize;
                BatchOp::Put(k, &self.bytes[v0..v0 + vl as usize])
            }
        })
    }
}

/// Maintenance steps: run between measured steps, never timed as ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maintenance {
    /// Flush memtables to storage.
    Flush,
    /// Block until background compaction has no more work.
    WaitForCompaction,
    /// Compact the whole key range.
    Compact,
    /// Compact one level into the next level that holds data (db_bench's compact0 and
    /// compact1: 0 is L0, 1 the first non-empty level below it). Engines without
    /// levels have nothing to do.
    CompactLevel(u8),
}

/// Cumulative engine-reported counters. `None` means the engine does not expose it,
/// which must be shown as unavailable, never as zero.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EngineStats {
    /// Bytes the user asked the engine to write (keys + values), by the engine's count.
    pub ingest_bytes: Option<u64>,
    /// Bytes written by memtable flushes.
    pub flush_write_bytes: Option<u64>,
    /// Bytes written by compaction.
    pub compact_write_bytes: Option<u64>,
    /// Bytes read by compaction.
    pub compact_read_bytes: Option<u64>,
    /// Microseconds writers spent stalled by the engine.
    pub stall_micros: Option<u64>,
    /// Bytes of compaction the engine estimates it still owes (a gauge, not a counter).
    pub pending_compaction_bytes: Option<u64>,
    /// Bytes of the engine's own pages that hold data, by its own count (a gauge):
    /// LMDB's branch, leaf and overflow pages, SQLite's pages not on the freelist. Set
    /// beside the data dir's size, it says how much of the files is free space.
    pub used_bytes: Option<u64>,
    /// The write-stall limits past when read (a gauge), from which a step's stall
    /// time is split by cause; `None` when the engine gives none.
    pub stall_limits: Option<crate::StallLimits>,
}
