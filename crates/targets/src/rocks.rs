//! RocksDB through the `rocksdb` crate (which compiles RocksDB itself): the default
//! engine, configured with db_bench's option names.

use crate::rocks_options::{CacheType, CompactionStyle, Compression, RocksOptions};
use crate::rocks_reader::{prefetch, RocksReader, Slot};
use plumb_core::{EngineStats, Maintenance, Session, Target, TargetError};
use rocksdb::statistics::Ticker;
use rocksdb::{
    AsColumnFamilyRef, AsRawPtr, BlockBasedOptions, Cache, ColumnFamilyDescriptor,
    DBCompactionStyle, DBCompressionType, Options, ReadOptions, WaitForCompactOptions, DB,
};
use std::path::{Path, PathBuf};

/// The RocksDB release compiled in by librocksdb-sys, read from its `version.h` at
/// build time (a test checks it against the `+11.8.1` part of Cargo.lock's version).
pub const ROCKSDB_VERSION: &str = env!("PLUMB_ROCKSDB_VERSION");

pub(crate) const ENGINE: &str = "rocksdb";

/// `rocksdb_statistics_level_except_histogram_or_timers` in RocksDB's c.h.
const STATS_EXCEPT_HISTOGRAM_OR_TIMERS: i32 = 1;

impl RocksOptions {
    fn to_rocksdb(&self) -> Options {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_compaction_style(match self.compaction_style {
            CompactionStyle::Leveled => DBCompactionStyle::Level,
            CompactionStyle::Universal => DBCompactionStyle::Universal,
        });
        o.set_compression_type(match self.compression {
            Compression::None => DBCompressionType::None,
            Compression::Lz4 => DBCompressionType::Lz4,
            Compression::Zstd => DBCompressionType::Zstd,
        });
        o.set_use_direct_reads(self.use_direct_reads);
        o.set_use_direct_io_for_flush_and_compaction(self.use_direct_io_for_flush_and_compaction);
        o.set_write_buffer_size(self.write_buffer_size as usize);
        o.set_max_background_jobs(self.max_background_jobs);
        // Tickers only: the cheapest level that still gives compaction and stall bytes.
        // The crate's StatsLevel numbering is off by one against the C API (its
        // ExceptHistogramOrTimers is the C API's except_timers), so set it directly.
        o.enable_statistics();
        // SAFETY: `o` is alive for the call; the C API takes the options and an int.
        unsafe {
            librocksdb_sys::rocksdb_options_set_statistics_level(
                o.as_raw_ptr(),
                STATS_EXCEPT_HISTOGRAM_OR_TIMERS,
            );
        }

        let mut t = BlockBasedOptions::default();
        t.set_block_size(self.block_size as usize);
        if self.cache_size == 0 {
            t.disable_cache();
        } else {
            let cache = match self.cache_type {
                CacheType::Lru => Cache::new_lru_cache(self.cache_size as usize),
                CacheType::HyperClock => Cache::new_hyper_clock_cache(self.cache_size as usize, 0),
            };
            t.set_block_cache(&cache);
        }
        if self.bloom_bits > 0.0 {
            t.set_bloom_filter(self.bloom_bits, false);
        }
        o.set_block_based_table_factory(&t);
        o
    }
}

/// An open RocksDB database.
pub struct RocksTarget {
    db: DB,
    opts: Options,
    path: PathBuf,
    settings: RocksOptions,
}

impl RocksTarget {
    /// Opens (creating if missing) the database at `path` with `settings`.
    pub fn open(path: &Path, settings: RocksOptions) -> Result<Self, TargetError> {
        settings.validate()?;
        let opts = settings.to_rocksdb();
        // The default column family is named with the same options: `open_cf` by name
        // would give it default column-family options (LZ4, 4 KiB blocks, 32 MiB cache,
        // no filter) whatever was asked. Naming it lets sessions hold its handle for
        // batched MultiGet.
        let cf = ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
        let db = DB::open_cf_descriptors(&opts, path, [cf])
            .map_err(|e| TargetError::engine(ENGINE, e))?;
        Ok(RocksTarget {
            db,
            opts,
            path: path.to_path_buf(),
            settings,
        })
    }

    /// The underlying database, for tests that need to reach past plumb.
    pub fn db(&self) -> &DB {
        &self.db
    }

    fn ticker(&self, t: Ticker) -> Option<u64> {
        Some(self.opts.get_ticker_count(t))
    }
}

/// A worker's handle. Writes go through one reused WriteBatch and WriteOptions via the
/// C API, as db_bench reuses its batch: the crate's `put_opt` builds a new batch (an
/// allocation and a free) for every write, which is harness cost, not engine cost.
struct RocksSession<'a> {
    db: &'a DB,
    sync: bool,
    raw: *mut librocksdb_sys::rocksdb_t,
    batch: *mut librocksdb_sys::rocksdb_writebatch_t,
    write: *mut librocksdb_sys::rocksdb_writeoptions_t,
    write_no_wal: *mut librocksdb_sys::rocksdb_writeoptions_t,
    /// Point reads pin values in the reader's two slots, as db_bench pins into one
    /// reused PinnableSlice (the crate and the C API allocate a wrapper per read);
    /// multi-gets pin a reused batch the same way.
    reader: RocksReader,
    /// The slot `get_deferred` reads into next; the other one holds the value still
    /// to be checked when `pending` is set, with its key in `pending_key`.
    next_slot: Slot,
    pending: bool,
    pending_key: Vec<u8>,
    /// The iterator of a readseq pass, kept from call to call.
    seq: Option<rocksdb::DBRawIteratorWithThreadMode<'a, DB>>,
}

impl Drop for RocksSession<'_> {
    fn drop(&mut self) {
        // SAFETY: created in `session()`, owned only by this session, destroyed once.
        unsafe {
            librocksdb_sys::rocksdb_writebatch_destroy(self.batch);
            librocksdb_sys::rocksdb_writeoptions_destroy(self.write);
            librocksdb_sys::rocksdb_writeoptions_destroy(self.write_no_wal);
        }
    }
}

impl RocksSession<'_> {
    /// Writes one key through the reused batch with the given write options.
    #[inline]
    fn write_one(
        &mut self,
        wo: *mut librocksdb_sys::rocksdb_writeoptions_t,
        key: &[u8],
        value: &[u8],
        delete: bool,
    ) -> Result<(), TargetError> {
        use std::os::raw::c_char;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: the batch, options and DB pointers are alive for the session's
        // lifetime; key and value outlive the call, which copies them into the batch.
        unsafe {
            librocksdb_sys::rocksdb_writebatch_clear(self.batch);
            if delete {
                librocksdb_sys::rocksdb_writebatch_delete(
                    self.batch,
                    key.as_ptr() as *const c_char,
                    key.len(),
                );
            } else {
                librocksdb_sys::rocksdb_writebatch_put(
                    self.batch,
                    key.as_ptr() as *const c_char,
                    key.len(),
                    value.as_ptr() as *const c_char,
                    value.len(),
                );
            }
            librocksdb_sys::rocksdb_write(self.raw, wo, self.batch, &mut err);
            if !err.is_null() {
                return Err(take_error(err));
            }
        }
        Ok(())
    }
}

/// Takes a C string error RocksDB allocated, frees it and returns it as an engine error.
///
/// # Safety
/// `err` must be non-null and allocated by RocksDB's C API.
pub(crate) unsafe fn take_error(err: *mut std::os::raw::c_char) -> TargetError {
    // SAFETY: per the contract above.
    let msg = unsafe {
        let m = std::ffi::CStr::from_ptr(err).to_string_lossy().into_owned();
        librocksdb_sys::rocksdb_free(err as *mut std::ffi::c_void);
        m
    };
    TargetError::engine(ENGINE, msg)
}

fn eng(e: rocksdb::Error) -> TargetError {
    TargetError::engine(ENGINE, e)
}

impl Target for RocksTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        ROCKSDB_VERSION.to_string()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>, TargetError> {
        let cf = self
            .db
            .cf_handle(rocksdb::DEFAULT_COLUMN_FAMILY_NAME)
            .ok_or_else(|| TargetError::engine(ENGINE, "default column family missing"))?;
        // SAFETY: plain constructors and setters of the C API on objects this session
        // owns; the DB pointer stays valid while `self` (which the session borrows) lives.
        let (raw, batch, write, write_no_wal) = unsafe {
            let write = librocksdb_sys::rocksdb_writeoptions_create();
            librocksdb_sys::rocksdb_writeoptions_set_sync(write, u8::from(self.settings.sync));
            librocksdb_sys::rocksdb_writeoptions_disable_WAL(
                write,
                i32::from(self.settings.disable_wal),
            );
            let write_no_wal = librocksdb_sys::rocksdb_writeoptions_create();
            librocksdb_sys::rocksdb_writeoptions_disable_WAL(write_no_wal, 1);
            (
                self.db.as_raw_ptr(),
                librocksdb_sys::rocksdb_writebatch_create(),
                write,
                write_no_wal,
            )
        };
        // SAFETY: the DB and its default CF handle live as long as `self`, which the
        // session (and so the reader) borrows.
        let reader = unsafe { RocksReader::new(self.db.as_raw_ptr(), cf.inner())? };
        Ok(Box::new(RocksSession {
            db: &self.db,
            sync: self.settings.sync,
            raw,
            batch,
            write,
            write_no_wal,
            reader,
            next_slot: Slot::A,
            pending: false,
            pending_key: Vec::with_capacity(64),
            seq: None,
        }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<(), TargetError> {
        match what {
            Maintenance::Flush => self.db.flush().map_err(eng),
            Maintenance::WaitForCompaction => {
                let mut w = WaitForCompactOptions::default();
                w.set_flush(true);
                self.db.wait_for_compact(&w).map_err(eng)
            }
            Maintenance::Compact => {
                self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
                Ok(())
            }
        }
    }
    fn stats(&self) -> EngineStats {
        EngineStats {
            ingest_bytes: self.ticker(Ticker::BytesWritten),
            flush_write_bytes: self.ticker(Ticker::FlushWriteBytes),
            compact_write_bytes: self.ticker(Ticker::CompactWriteBytes),
            compact_read_bytes: self.ticker(Ticker::CompactReadBytes),
            stall_micros: self.ticker(Ticker::StallMicros),
            pending_compaction_bytes: self
                .db
                .property_int_value("rocksdb.estimate-pending-compaction-bytes")
                .ok()
                .flatten(),
            used_bytes: None,
        }
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.path)
    }
    fn options(&self) -> Vec<(String, String)> {
        self.settings.describe()
    }
}

impl Session for RocksSession<'_> {
    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TargetError> {
        self.write_one(self.write, key, value, false)
    }
    #[inline]
    fn put_no_wal(&mut self, key: &[u8], value: &[u8]) -> Result<(), TargetError> {
        if self.sync {
            // A synced run keeps its durability promise even for the load step.
            return self.put(key, value);
        }
        self.write_one(self.write_no_wal, key, value, false)
    }
    #[inline]
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool, TargetError> {
        // Slot `next_slot` is free: a pending value sits in the other one.
        let slot = self.next_slot;
        if !self.reader.get(slot, key)? {
            return Ok(false);
        }
        visit(self.reader.value(slot));
        self.reader.release(slot);
        Ok(true)
    }
    #[inline]
    fn get_deferred(
        &mut self,
        key: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<bool, TargetError> {
        let slot = self.next_slot;
        let found = self.reader.get(slot, key)?;
        // The previous value's lines were prefetched before this lookup: check it now.
        self.finish_deferred(visit)?;
        if !found {
            return Ok(false);
        }
        let v = self.reader.value(slot);
        prefetch(v.as_ptr(), v.len());
        self.pending = true;
        self.pending_key.clear();
        self.pending_key.extend_from_slice(key);
        self.next_slot = slot.other();
        Ok(true)
    }
    fn finish_deferred(&mut self, visit: &mut dyn FnMut(&[u8], &[u8])) -> Result<(), TargetError> {
        if !self.pending {
            return Ok(());
        }
        self.pending = false;
        let slot = self.next_slot.other();
        visit(&self.pending_key, self.reader.value(slot));
        self.reader.release(slot);
        Ok(())
    }
    fn multi_get(
        &mut self,
        keys: &[Vec<u8>],
        visit: &mut dyn FnMut(usize, Option<&[u8]>),
    ) -> Result<(), TargetError> {
        self.reader.multi_get(keys, visit)
    }
    fn scan(
        &mut self,
        start: &[u8],
        nexts: usize,
        reverse: bool,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, TargetError> {
        // A new iterator per seek, as db_bench's seekrandom does, so each op sees
        // the newest data; through the C++ reader, without the C API's allocations.
        self.reader.scan(start, nexts, reverse, visit)
    }
    fn next_in_order(
        &mut self,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<bool, TargetError> {
        let it = match &mut self.seq {
            Some(it) => {
                it.next();
                it
            }
            None => {
                let mut it = self.db.raw_iterator_opt(ReadOptions::default());
                it.seek(start);
                self.seq.insert(it)
            }
        };
        if !it.valid() {
            it.status().map_err(eng)?;
            return Ok(false);
        }
        if let (Some(k), Some(v)) = (it.key(), it.value()) {
            visit(k, v);
        }
        Ok(true)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), TargetError> {
        self.write_one(self.write, key, &[], true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contradictory_options_are_refused_by_name() {
        let o = RocksOptions {
            sync: true,
            disable_wal: true,
            ..RocksOptions::default()
        };
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("--sync") && e.contains("--disable-wal"), "{e}");
        let o = RocksOptions {
            block_size: 10,
            ..RocksOptions::default()
        };
        assert!(o.validate().unwrap_err().to_string().contains("block_size"));
        assert!(<Compression as clap::ValueEnum>::from_str("snappy", false)
            .unwrap_err()
            .contains("snappy"));
        RocksOptions::default().validate().unwrap();
    }

    #[test]
    fn version_matches_the_compiled_crate() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("Cargo.lock at the workspace root");
        let entry = lock
            .split("[[package]]")
            .find(|p| p.contains("name = \"librocksdb-sys\""))
            .expect("librocksdb-sys in Cargo.lock");
        assert!(
            entry.contains(&format!("+{ROCKSDB_VERSION}\"")),
            "ROCKSDB_VERSION {ROCKSDB_VERSION} does not match {entry}"
        );
    }

    /// What RocksDB itself recorded in its OPTIONS file is what plumb was asked for.
    #[test]
    fn the_engine_runs_with_the_options_given() {
        let dir = tempfile::tempdir().unwrap();
        let o = RocksOptions {
            block_size: 16384,
            compression: Compression::Zstd,
            bloom_bits: 10.0,
            cache_size: 123 << 20,
            write_buffer_size: 5 << 20,
            ..RocksOptions::default()
        };
        let t = RocksTarget::open(dir.path(), o).unwrap();
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("OPTIONS-")
            })
            .expect("RocksDB writes an OPTIONS file");
        let text = std::fs::read_to_string(file).unwrap();
        for want in [
            "block_size=16384",
            "compression=kZSTD",
            "write_buffer_size=5242880",
            "filter_policy=bloomfilter",
        ] {
            assert!(text.contains(want), "OPTIONS lacks {want}");
        }
        let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
        assert!(
            log.contains("capacity : 128974848"),
            "block cache size not applied"
        );
        let level =
            unsafe { librocksdb_sys::rocksdb_options_get_statistics_level(t.opts.as_raw_ptr()) };
        assert_eq!(level, STATS_EXCEPT_HISTOGRAM_OR_TIMERS);
    }

    #[test]
    fn round_trip_stats_and_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let t = RocksTarget::open(dir.path(), RocksOptions::default()).unwrap();
        let mut s = t.session().unwrap();
        for i in 0u8..20 {
            s.put(&[i], &[i; 8]).unwrap();
        }
        t.maintenance(Maintenance::Flush).unwrap();
        t.maintenance(Maintenance::WaitForCompaction).unwrap();
        let mut got = Vec::new();
        assert_eq!(
            s.scan(&[5], 3, true, &mut |k, _| got.push(k[0])).unwrap(),
            4
        );
        assert_eq!(got, vec![5, 4, 3, 2]);
        // Forward, cut short by the end of the data; each seek sees the newest writes.
        s.put(&[18], &[7; 3]).unwrap();
        let mut fwd = Vec::new();
        assert_eq!(
            s.scan(&[16], 10, false, &mut |k, v| fwd.push((k[0], v.len())))
                .unwrap(),
            4
        );
        assert_eq!(fwd, vec![(16, 8), (17, 8), (18, 3), (19, 8)]);
        assert_eq!(
            s.scan(&[200], 10, false, &mut |_, _| panic!("past the end"))
                .unwrap(),
            0
        );
        s.put(&[18], &[18; 8]).unwrap();
        // One pass in order from 17 to the end, on one kept iterator.
        let mut pass = Vec::new();
        while s
            .next_in_order(&[17], &mut |k, v| pass.push((k[0], v.len())))
            .unwrap()
        {}
        assert_eq!(pass, vec![(17, 8), (18, 8), (19, 8)]);
        let mut seen = Vec::new();
        s.multi_get(&[vec![1], vec![99]], &mut |i, v| {
            seen.push((i, v.map(|v| v.len())))
        })
        .unwrap();
        assert_eq!(seen, vec![(0, Some(8)), (1, None)]);
        let st = t.stats();
        assert!(st.ingest_bytes.unwrap() >= 20 * 9, "{st:?}");
        assert!(st.flush_write_bytes.unwrap() > 0, "{st:?}");
    }

    /// Deferred reads visit every found value exactly once, with its own key, the
    /// last one on finish; absent keys say so at once; `get` sees the same values.
    #[test]
    fn deferred_reads_visit_every_value_once() {
        let dir = tempfile::tempdir().unwrap();
        let t = RocksTarget::open(dir.path(), RocksOptions::default()).unwrap();
        let mut s = t.session().unwrap();
        for i in 0u8..10 {
            s.put(&[i], &vec![i; 100 + i as usize * 500]).unwrap();
        }
        t.maintenance(Maintenance::Flush).unwrap();
        let mut seen: Vec<(u8, usize, bool)> = Vec::new();
        let mut found = Vec::new();
        for k in [3u8, 42, 7, 0, 9, 77, 5] {
            let f = s
                .get_deferred(&[k], &mut |key, v| {
                    seen.push((key[0], v.len(), v.iter().all(|&b| b == key[0])))
                })
                .unwrap();
            found.push(f);
        }
        assert_eq!(found, [true, false, true, true, true, false, true]);
        assert_eq!(seen.len(), 4, "the last value waits for finish");
        s.finish_deferred(&mut |key, v| {
            seen.push((key[0], v.len(), v.iter().all(|&b| b == key[0])))
        })
        .unwrap();
        s.finish_deferred(&mut |_, _| panic!("nothing left to visit"))
            .unwrap();
        let want: Vec<(u8, usize, bool)> = [3u8, 7, 0, 9, 5]
            .iter()
            .map(|&k| (k, 100 + k as usize * 500, true))
            .collect();
        assert_eq!(seen, want);
        // A plain get between deferred ones leaves the pinned value alone.
        let mut len = 0;
        assert!(s
            .get_deferred(&[3], &mut |_, _| panic!("nothing pending"))
            .unwrap());
        assert!(s.get(&[9], &mut |v| len = v.len()).unwrap());
        assert_eq!(len, 4600);
        assert!(!s.get(&[42], &mut |_| panic!("absent")).unwrap());
        let mut last = None;
        s.finish_deferred(&mut |key, v| last = Some((key[0], v.len(), v.iter().all(|&b| b == 3))))
            .unwrap();
        assert_eq!(last, Some((3, 1600, true)));
    }

    #[test]
    fn multi_get_pins_each_batch_and_grows_for_a_larger_one() {
        let dir = tempfile::tempdir().unwrap();
        let t = RocksTarget::open(dir.path(), RocksOptions::default()).unwrap();
        let mut s = t.session().unwrap();
        for i in 0u8..20 {
            s.put(&[i], &vec![i; 50 + i as usize]).unwrap();
        }
        t.maintenance(Maintenance::Flush).unwrap();
        let mut batch = |keys: &[u8]| {
            let keys: Vec<Vec<u8>> = keys.iter().map(|&k| vec![k]).collect();
            let mut got = Vec::new();
            s.multi_get(&keys, &mut |i, v| {
                got.push((i, v.map(|v| (v.len(), v.iter().all(|&b| b == keys[i][0])))))
            })
            .unwrap();
            got
        };
        assert_eq!(
            batch(&[4, 200, 7]),
            [(0, Some((54, true))), (1, None), (2, Some((57, true)))]
        );
        let big: Vec<u8> = (0u8..40).rev().collect();
        let got = batch(&big);
        assert_eq!(got.len(), 40);
        for (i, v) in got {
            let k = big[i];
            assert_eq!(v, (k < 20).then_some((50 + k as usize, true)), "key {k}");
        }
        assert_eq!(batch(&[19]), [(0, Some((69, true)))]);
    }
}
