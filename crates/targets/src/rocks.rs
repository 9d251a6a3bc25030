//! RocksDB (or Speedb, which keeps RocksDB's C API and symbols) through the C API of the
//! library librocksdb-sys (libspeedb-sys) compiles: the default engine, configured with
//! db_bench's option names. Only the C API and two small C++ shims (cpp/rocks_reader.cc
//! for reads, cpp/rocks_admin.cc for statistics and waiting on compactions) are used,
//! because those stay the same from release to release while the `rocksdb` crate's Rust
//! API does not: one source builds against RocksDB 8.x to 11.x and Speedb
//! (scripts/build-rocksdb-release.sh, scripts/build-speedb.sh).

use crate::engine::opt_err;
use crate::rocks_options::{CacheType, CompactionStyle, Compression, RocksOptions};
use crate::rocks_reader::{prefetch, RocksReader, Slot};
use plumb_core::{
    EngineStats, Maintenance, Result, Session, Target, TargetError, Visit, VisitBatch,
};
use std::ffi::c_void;
use std::os::raw::{c_char, c_int};
use std::path::{Path, PathBuf};
use std::ptr::{null_mut, NonNull};

/// The release compiled in, read from its `version.h` at build time (for Speedb, its
/// own version with the RocksDB release beneath it; a test checks the RocksDB one
/// against the `+11.8.1` part of Cargo.lock's version).
pub const ROCKSDB_VERSION: &str = env!("PLUMB_ROCKSDB_VERSION");

/// The RocksDB source tree this binary was built from (scripts/build-rocksdb-release.sh
/// tree:PATH), or "" for a release from the crate registry.
pub const ROCKSDB_TREE: &str = env!("PLUMB_ROCKSDB_TREE");

/// The engine this build links: RocksDB, or Speedb in its place.
pub(crate) const ENGINE: &str = if cfg!(feature = "speedb") {
    "speedb"
} else {
    "rocksdb"
};

/// The tickers cpp/rocks_admin.cc reads, in its struct's order.
#[repr(C)]
#[derive(Default)]
struct Tickers {
    bytes_written: u64,
    flush_write_bytes: u64,
    compact_write_bytes: u64,
    compact_read_bytes: u64,
    stall_micros: u64,
}

extern "C" {
    fn plumb_rocks_stats_tickers_only(opts: *mut c_void) -> c_int;
    #[cfg(test)]
    fn plumb_rocks_stats_level(db: *mut c_void) -> c_int;
    fn plumb_rocks_tickers(db: *mut c_void, out: *mut Tickers) -> c_int;
    fn plumb_rocks_wait_for_compact(db: *mut c_void, err: *mut *mut c_char) -> c_int;
    fn plumb_rocks_apply_options(
        opts: *mut c_void,
        file: *const c_char,
        text: *const c_char,
        err: *mut *mut c_char,
    ) -> c_int;
    fn plumb_rocks_lsm(db: *mut c_void, out: *mut *mut c_char, err: *mut *mut c_char) -> c_int;
    fn plumb_rocks_compact_level(
        db: *mut c_void,
        from_level: c_int,
        err: *mut *mut c_char,
    ) -> c_int;
}

/// RocksDB's `StatsLevel::kExceptHistogramOrTimers`, which the shim sets.
#[cfg(test)]
const STATS_EXCEPT_HISTOGRAM_OR_TIMERS: c_int = 1;

/// Options built through the C API, destroyed once.
pub(crate) struct RawOptions(NonNull<librocksdb_sys::rocksdb_options_t>);

impl Drop for RawOptions {
    fn drop(&mut self) {
        // SAFETY: created by rocksdb_options_create, destroyed once, after the DB closed.
        unsafe { librocksdb_sys::rocksdb_options_destroy(self.0.as_ptr()) }
    }
}

impl RocksOptions {
    /// The C API options for these settings: what the `rocksdb` crate's setters would
    /// give, set directly, with statistics at the level the shim sets.
    pub(crate) fn to_raw(&self) -> Result<RawOptions> {
        use librocksdb_sys as f;
        // SAFETY: plain constructors and setters on objects created here. The block-based
        // options are copied into the table factory and the cache handle's shared
        // pointer into them, so both are destroyed after; the filter policy is owned by
        // the block-based options once set.
        unsafe {
            let raw = RawOptions(
                NonNull::new(f::rocksdb_options_create()).expect("rocksdb_options_create"),
            );
            let o = raw.0.as_ptr();
            f::rocksdb_options_set_create_if_missing(o, 1);
            f::rocksdb_options_set_compaction_style(
                o,
                match self.compaction_style {
                    CompactionStyle::Leveled => f::rocksdb_level_compaction,
                    CompactionStyle::Universal => f::rocksdb_universal_compaction,
                } as c_int,
            );
            f::rocksdb_options_set_compression(
                o,
                match self.compression {
                    Compression::None => f::rocksdb_no_compression,
                    Compression::Lz4 => f::rocksdb_lz4_compression,
                    Compression::Zstd => f::rocksdb_zstd_compression,
                } as c_int,
            );
            f::rocksdb_options_set_use_direct_reads(o, u8::from(self.use_direct_reads));
            f::rocksdb_options_set_use_direct_io_for_flush_and_compaction(
                o,
                u8::from(self.use_direct_io_for_flush_and_compaction),
            );
            f::rocksdb_options_set_write_buffer_size(o, self.write_buffer_size as usize);
            f::rocksdb_options_set_max_background_jobs(o, self.max_background_jobs);
            f::rocksdb_options_enable_statistics(o);
            // Tickers only: the cheapest level that still counts compaction and stall
            // bytes.
            if plumb_rocks_stats_tickers_only(o as *mut c_void) != 0 {
                return Err(TargetError::engine(ENGINE, "statistics are not enabled"));
            }

            let t = f::rocksdb_block_based_options_create();
            f::rocksdb_block_based_options_set_block_size(t, self.block_size as usize);
            if self.cache_size == 0 {
                f::rocksdb_block_based_options_set_no_block_cache(t, 1);
            } else {
                let cache = match self.block_cache() {
                    Ok(cache) => cache,
                    Err(e) => {
                        f::rocksdb_block_based_options_destroy(t);
                        return Err(e);
                    }
                };
                f::rocksdb_block_based_options_set_block_cache(t, cache);
                f::rocksdb_cache_destroy(cache);
            }
            if self.bloom_bits > 0.0 {
                let bloom = f::rocksdb_filterpolicy_create_bloom_full(self.bloom_bits as _);
                f::rocksdb_block_based_options_set_filter_policy(t, bloom);
            }
            f::rocksdb_options_set_block_based_table_factory(o, t);
            f::rocksdb_block_based_options_destroy(t);
            self.apply_own_options(o)?;
            Ok(raw)
        }
    }

    /// The block cache asked for, made as db_bench makes it: the hyper clock cache with
    /// its estimated entry charge (the block size unless given: the fixed-size table
    /// db_bench's `fixed_hyper_clock_cache` builds, and its `hyper_clock_cache` in the
    /// 8.x releases the seeds ran; 0 is RocksDB's auto-sized variant), and either cache
    /// with `cache_numshardbits` shards when given. The caller owns the handle.
    ///
    /// # Safety
    /// Calls the C API's cache constructors; the returned pointer must be destroyed
    /// with `rocksdb_cache_destroy` once set on the table options.
    unsafe fn block_cache(&self) -> Result<*mut librocksdb_sys::rocksdb_cache_t> {
        use librocksdb_sys as f;
        let capacity = self.cache_size as usize;
        let bits = self.cache_numshardbits;
        let cache = match self.cache_type {
            CacheType::Lru if bits < 0 => f::rocksdb_cache_create_lru(capacity),
            #[cfg(plumb_rocks_lru_opts)]
            CacheType::Lru => {
                let lo = f::rocksdb_lru_cache_options_create();
                f::rocksdb_lru_cache_options_set_capacity(lo, capacity);
                f::rocksdb_lru_cache_options_set_num_shard_bits(lo, bits);
                let c = f::rocksdb_cache_create_lru_opts(lo);
                f::rocksdb_lru_cache_options_destroy(lo);
                c
            }
            #[cfg(not(plumb_rocks_lru_opts))]
            CacheType::Lru => return Err(no_shard_bits()),
            #[cfg(plumb_rocks_hyper_clock)]
            CacheType::HyperClock => {
                let charge = self.hyper_clock_charge() as usize;
                if bits < 0 {
                    f::rocksdb_cache_create_hyper_clock(capacity, charge)
                } else {
                    hyper_clock_sharded(capacity, charge, bits)?
                }
            }
            #[cfg(not(plumb_rocks_hyper_clock))]
            CacheType::HyperClock => {
                return Err(opt_err(
                    "cache_type",
                    format!(
                        "RocksDB {ROCKSDB_VERSION} has no hyper clock cache in its C API; use lru"
                    ),
                ))
            }
        };
        if cache.is_null() {
            return Err(opt_err(
                "cache_numshardbits",
                format!("RocksDB {ROCKSDB_VERSION} refused a block cache of {capacity} bytes in 2^{bits} shards"),
            ));
        }
        Ok(cache)
    }

    /// The OPTIONS file, then the option string, through the release's own parser
    /// (cpp/rocks_admin.cc). A failure names the option that carried it.
    ///
    /// # Safety
    /// `o` must be live options created by `rocksdb_options_create`.
    unsafe fn apply_own_options(&self, o: *mut librocksdb_sys::rocksdb_options_t) -> Result<()> {
        let c = |what: &str, s: &str| {
            std::ffi::CString::new(s).map_err(|_| opt_err(what, "contains a NUL byte"))
        };
        let file = match &self.options_file {
            Some(f) => Some(c("options_file", &f.to_string_lossy())?),
            None => None,
        };
        let text = match &self.option_string {
            Some(s) => Some(c("option_string", s)?),
            None => None,
        };
        for (what, file, text) in [
            ("options_file", file.as_ref(), None),
            ("option_string", None, text.as_ref()),
        ] {
            if file.is_none() && text.is_none() {
                continue;
            }
            let mut err: *mut c_char = null_mut();
            let ptr = |s: Option<&std::ffi::CString>| s.map_or(std::ptr::null(), |s| s.as_ptr());
            // SAFETY: live options (the caller's contract) and NUL-terminated strings
            // alive for the call; the shim sets err with malloc on failure.
            let rc = unsafe {
                plumb_rocks_apply_options(o as *mut c_void, ptr(file), ptr(text), &mut err)
            };
            if rc != 0 {
                // SAFETY: set by the shim with malloc.
                let msg = unsafe { take_error(err) };
                let msg = match msg {
                    TargetError::Engine { message, .. } => message,
                    other => other.to_string(),
                };
                return Err(opt_err(
                    what,
                    format!("RocksDB {ROCKSDB_VERSION} refused it: {msg}"),
                ));
            }
        }
        Ok(())
    }
}

/// An open RocksDB (or Speedb) database.
pub struct RocksTarget {
    db: NonNull<librocksdb_sys::rocksdb_t>,
    /// The default column family, opened by name with the same options.
    cf: NonNull<librocksdb_sys::rocksdb_column_family_handle_t>,
    _opts: RawOptions,
    path: PathBuf,
    settings: RocksOptions,
    /// The write-stall limits in force, read once from the OPTIONS file the open wrote.
    stall_thresholds: Option<crate::rocks_account::StallThresholds>,
}

// SAFETY: a RocksDB database is safe to use from many threads at once (its C++ DB is);
// the handles are only closed in Drop, when nothing borrows the target.
unsafe impl Send for RocksTarget {}
// SAFETY: as above.
unsafe impl Sync for RocksTarget {}

/// The hyper clock cache in 2^`bits` shards, where the release's C API can say so.
///
/// # Safety
/// As [`RocksOptions::block_cache`].
#[cfg(plumb_rocks_hyper_clock)]
unsafe fn hyper_clock_sharded(
    capacity: usize,
    charge: usize,
    bits: c_int,
) -> Result<*mut librocksdb_sys::rocksdb_cache_t> {
    #[cfg(plumb_rocks_hyper_clock_opts)]
    {
        use librocksdb_sys as f;
        let ho = f::rocksdb_hyper_clock_cache_options_create(capacity, charge);
        f::rocksdb_hyper_clock_cache_options_set_num_shard_bits(ho, bits);
        let c = f::rocksdb_cache_create_hyper_clock_opts(ho);
        f::rocksdb_hyper_clock_cache_options_destroy(ho);
        Ok(c)
    }
    #[cfg(not(plumb_rocks_hyper_clock_opts))]
    {
        let _ = (capacity, charge, bits);
        Err(no_shard_bits())
    }
}

/// Why `cache_numshardbits` cannot be set in this release.
#[allow(dead_code)] // Only releases whose C API lacks the cache options reach it.
fn no_shard_bits() -> TargetError {
    opt_err(
        "cache_numshardbits",
        format!(
            "RocksDB {ROCKSDB_VERSION}'s C API cannot set a cache's shard count; leave \
             cache_numshardbits at -1 (RocksDB's own choice)"
        ),
    )
}

impl RocksTarget {
    /// Opens (creating if missing) the database at `path` with `settings`.
    pub fn open(path: &Path, settings: impl Into<RocksOptions>) -> Result<Self> {
        let settings = settings.into();
        settings.validate()?;
        let opts = settings.to_raw()?;
        crate::engine::make_dir(ENGINE, path)?;
        let cpath = crate::ffi::c_path(ENGINE, path)?;
        // The default column family is opened by name with the same options: left
        // implicit it would get default column-family options (LZ4, 4 KiB blocks, 32 MiB
        // cache, no filter) whatever was asked. Its handle serves batched MultiGet.
        let name = c"default";
        let names = [name.as_ptr()];
        let cf_opts = [opts.0.as_ptr() as *const librocksdb_sys::rocksdb_options_t];
        let mut handles = [null_mut()];
        let mut err: *mut c_char = null_mut();
        // SAFETY: every pointer is alive for the call; one name, options and handle slot.
        let db = unsafe {
            librocksdb_sys::rocksdb_open_column_families(
                opts.0.as_ptr(),
                cpath.as_ptr(),
                1,
                names.as_ptr(),
                cf_opts.as_ptr(),
                handles.as_mut_ptr(),
                &mut err,
            )
        };
        if !err.is_null() {
            // SAFETY: set by the C API.
            return Err(unsafe { take_error(err) });
        }
        let (Some(db), Some(cf)) = (NonNull::new(db), NonNull::new(handles[0])) else {
            return Err(TargetError::engine(ENGINE, "open returned no database"));
        };
        Ok(RocksTarget {
            db,
            cf,
            _opts: opts,
            path: path.to_path_buf(),
            settings,
            stall_thresholds: crate::rocks_account::StallThresholds::from_options(
                &crate::rocks_account::effective_options(path),
            ),
        })
    }

    fn raw(&self) -> *mut c_void {
        self.db.as_ptr() as *mut c_void
    }

    /// The release's statistics level in force (RocksDB's StatsLevel number).
    #[cfg(test)]
    fn stats_level(&self) -> c_int {
        // SAFETY: a live database handle.
        unsafe { plumb_rocks_stats_level(self.raw()) }
    }

    fn tickers(&self) -> Option<Tickers> {
        let mut t = Tickers::default();
        // SAFETY: a live database handle and a struct of the shim's layout.
        (unsafe { plumb_rocks_tickers(self.raw(), &mut t) } == 0).then_some(t)
    }

    /// A string property read as a number ("rocksdb.num-files-at-level0" is one:
    /// RocksDB's integer getter refuses it).
    fn property_num(&self, name: &std::ffi::CStr) -> Option<u64> {
        // SAFETY: a live database handle and a NUL-terminated property name; the value
        // is a malloc'd string or null, freed once read.
        unsafe {
            let v = librocksdb_sys::rocksdb_property_value(self.db.as_ptr(), name.as_ptr());
            if v.is_null() {
                return None;
            }
            let n = std::ffi::CStr::from_ptr(v)
                .to_str()
                .ok()
                .and_then(|t| t.trim().parse().ok());
            librocksdb_sys::rocksdb_free(v as *mut c_void);
            n
        }
    }

    fn property_int(&self, name: &std::ffi::CStr) -> Option<u64> {
        let mut v = 0u64;
        // SAFETY: a live database handle and a NUL-terminated property name.
        let rc = unsafe {
            librocksdb_sys::rocksdb_property_int(self.db.as_ptr(), name.as_ptr(), &mut v)
        };
        (rc == 0).then_some(v)
    }

    /// Turns a C API error out-parameter into a result.
    fn check(err: *mut c_char) -> Result<()> {
        if err.is_null() {
            Ok(())
        } else {
            // SAFETY: set by the C API (or the shim, with malloc).
            Err(unsafe { take_error(err) })
        }
    }
}

impl Drop for RocksTarget {
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed once; no session outlives the target.
        unsafe {
            librocksdb_sys::rocksdb_column_family_handle_destroy(self.cf.as_ptr());
            librocksdb_sys::rocksdb_close(self.db.as_ptr());
        }
    }
}

/// A worker's handle. Writes go through one reused WriteBatch and WriteOptions via the
/// C API, as db_bench reuses its batch: a new batch per write (as the `rocksdb` crate's
/// `put_opt` builds) is an allocation and a free, harness cost, not engine cost.
struct RocksSession<'a> {
    target: &'a RocksTarget,
    sync: bool,
    batch: *mut librocksdb_sys::rocksdb_writebatch_t,
    write: *mut librocksdb_sys::rocksdb_writeoptions_t,
    write_no_wal: *mut librocksdb_sys::rocksdb_writeoptions_t,
    /// Point reads pin values in the reader's two slots, as db_bench pins into one
    /// reused PinnableSlice (the C API allocates a wrapper per read); multi-gets pin a
    /// reused batch the same way.
    reader: RocksReader,
    /// The slot `get_deferred` reads into next; the other one holds the value still
    /// to be checked when `pending` is set, with its key in `pending_key`.
    next_slot: Slot,
    pending: bool,
    pending_key: Vec<u8>,
    /// The read options and iterator of a readseq pass, kept from call to call.
    seq_options: *mut librocksdb_sys::rocksdb_readoptions_t,
    seq: Option<NonNull<librocksdb_sys::rocksdb_iterator_t>>,
}

impl Drop for RocksSession<'_> {
    fn drop(&mut self) {
        // SAFETY: created in `session()`, owned only by this session, destroyed once
        // (the iterator before its read options).
        unsafe {
            if let Some(it) = self.seq.take() {
                librocksdb_sys::rocksdb_iter_destroy(it.as_ptr());
            }
            librocksdb_sys::rocksdb_readoptions_destroy(self.seq_options);
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
    ) -> Result<()> {
        let mut err: *mut c_char = null_mut();
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
            librocksdb_sys::rocksdb_write(self.target.db.as_ptr(), wo, self.batch, &mut err);
            if !err.is_null() {
                return Err(take_error(err));
            }
        }
        Ok(())
    }
}

/// Takes a C string error RocksDB (or a shim, with malloc) allocated, frees it and
/// returns it as an engine error.
///
/// # Safety
/// `err` must be non-null and allocated by RocksDB's C API or with malloc.
pub(crate) unsafe fn take_error(err: *mut c_char) -> TargetError {
    // SAFETY: per the contract above; rocksdb_free is free().
    let msg = unsafe {
        let m = std::ffi::CStr::from_ptr(err).to_string_lossy().into_owned();
        librocksdb_sys::rocksdb_free(err as *mut c_void);
        m
    };
    TargetError::engine(ENGINE, msg)
}

impl Target for RocksTarget {
    /// RocksDB's VerifyChecksum where the release's C API has it; releases without it
    /// (8.x and Speedb) have no check here, which a durability trial says.
    fn integrity_check(&self) -> Option<(&'static str, Result<()>)> {
        #[cfg(plumb_rocks_verify_checksum)]
        {
            let mut err = std::ptr::null_mut();
            // SAFETY: the open database; the C API sets `err` on failure.
            unsafe { librocksdb_sys::rocksdb_verify_checksum(self.db.as_ptr(), &mut err) };
            Some(("verify_checksum", Self::check(err)))
        }
        #[cfg(not(plumb_rocks_verify_checksum))]
        None
    }
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        ROCKSDB_VERSION.to_string()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        // SAFETY: plain constructors and setters of the C API on objects this session
        // owns.
        let (batch, write, write_no_wal, seq_options) = unsafe {
            let write = librocksdb_sys::rocksdb_writeoptions_create();
            librocksdb_sys::rocksdb_writeoptions_set_sync(write, u8::from(self.settings.sync));
            librocksdb_sys::rocksdb_writeoptions_disable_WAL(
                write,
                c_int::from(self.settings.disable_wal),
            );
            let write_no_wal = librocksdb_sys::rocksdb_writeoptions_create();
            librocksdb_sys::rocksdb_writeoptions_disable_WAL(write_no_wal, 1);
            (
                librocksdb_sys::rocksdb_writebatch_create(),
                write,
                write_no_wal,
                librocksdb_sys::rocksdb_readoptions_create(),
            )
        };
        // SAFETY: the DB and its default CF handle live as long as `self`, which the
        // session (and so the reader) borrows.
        let reader = unsafe { RocksReader::new(self.db.as_ptr(), self.cf.as_ptr())? };
        Ok(Box::new(RocksSession {
            target: self,
            sync: self.settings.sync,
            batch,
            write,
            write_no_wal,
            reader,
            next_slot: Slot::A,
            pending: false,
            pending_key: Vec::with_capacity(64),
            seq_options,
            seq: None,
        }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<()> {
        let mut err: *mut c_char = null_mut();
        // SAFETY: a live database handle; the flush options are created and destroyed
        // here; a null range compacts everything.
        unsafe {
            match what {
                Maintenance::Flush => {
                    let fo = librocksdb_sys::rocksdb_flushoptions_create();
                    librocksdb_sys::rocksdb_flushoptions_set_wait(fo, 1);
                    librocksdb_sys::rocksdb_flush(self.db.as_ptr(), fo, &mut err);
                    librocksdb_sys::rocksdb_flushoptions_destroy(fo);
                }
                Maintenance::WaitForCompaction => {
                    plumb_rocks_wait_for_compact(self.raw(), &mut err);
                }
                Maintenance::Compact => librocksdb_sys::rocksdb_compact_range(
                    self.db.as_ptr(),
                    std::ptr::null(),
                    0,
                    std::ptr::null(),
                    0,
                ),
                Maintenance::CompactLevel(from) => {
                    plumb_rocks_compact_level(self.raw(), c_int::from(from), &mut err);
                }
            }
        }
        Self::check(err)
    }
    fn thread_perf_start(&self, level: u8) {
        // SAFETY: both act on the calling thread's own PerfContext and level.
        unsafe {
            librocksdb_sys::rocksdb_set_perf_level(c_int::from(level));
            let ctx = librocksdb_sys::rocksdb_perfcontext_create();
            librocksdb_sys::rocksdb_perfcontext_reset(ctx);
            librocksdb_sys::rocksdb_perfcontext_destroy(ctx);
        }
    }

    fn thread_perf(&self) -> Result<Vec<(String, u64)>, String> {
        // SAFETY: the context is the calling thread's; the report is a string RocksDB
        // allocated, freed once read. Its names are PerfContext's own (the C API's
        // metric numbers differ between releases; the names do not).
        let text = unsafe {
            let ctx = librocksdb_sys::rocksdb_perfcontext_create();
            let report = librocksdb_sys::rocksdb_perfcontext_report(ctx, 1);
            librocksdb_sys::rocksdb_perfcontext_destroy(ctx);
            if report.is_null() {
                return Err("RocksDB gave no PerfContext report".into());
            }
            let t = std::ffi::CStr::from_ptr(report)
                .to_string_lossy()
                .into_owned();
            librocksdb_sys::rocksdb_free(report.cast());
            t
        };
        Ok(crate::rocks_account::perf_report(&text))
    }

    fn stats(&self) -> EngineStats {
        let t = self.tickers();
        let pending = self.property_int(c"rocksdb.estimate-pending-compaction-bytes");
        EngineStats {
            ingest_bytes: t.as_ref().map(|t| t.bytes_written),
            flush_write_bytes: t.as_ref().map(|t| t.flush_write_bytes),
            compact_write_bytes: t.as_ref().map(|t| t.compact_write_bytes),
            compact_read_bytes: t.as_ref().map(|t| t.compact_read_bytes),
            stall_micros: t.as_ref().map(|t| t.stall_micros),
            pending_compaction_bytes: pending,
            used_bytes: None,
            stall_limits: self.stall_thresholds.and_then(|t| {
                Some(t.past(
                    self.property_num(c"rocksdb.num-files-at-level0")?,
                    self.property_int(c"rocksdb.num-immutable-mem-table")?,
                    pending?,
                ))
            }),
        }
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.path)
    }
    fn options(&self) -> Vec<(String, String)> {
        let mut o = self.settings.describe();
        // What RocksDB itself says is in force: the OPTIONS file it wrote on open.
        o.extend(crate::rocks_account::effective_options(&self.path));
        o
    }
    fn lsm(&self) -> Option<plumb_core::LsmAccount> {
        let (mut out, mut err): (*mut c_char, *mut c_char) = (null_mut(), null_mut());
        // SAFETY: a live database handle; the shim mallocs exactly one of out and err.
        if unsafe { plumb_rocks_lsm(self.raw(), &mut out, &mut err) } != 0 {
            // SAFETY: set by the shim with malloc.
            drop(unsafe { take_error(err) });
            return None;
        }
        // SAFETY: a NUL-terminated string the shim malloc'd, freed once here.
        let text = unsafe {
            let t = std::ffi::CStr::from_ptr(out).to_string_lossy().into_owned();
            librocksdb_sys::rocksdb_free(out as *mut c_void);
            t
        };
        let mut account = crate::rocks_account::parse_lsm(&text);
        // The memtables' entries, the part of the shape the level metadata lacks: the
        // active memtable and the immutable ones waiting to flush.
        account.memtable_entries = self
            .property_int(c"rocksdb.num-entries-active-mem-table")
            .zip(self.property_int(c"rocksdb.num-entries-imm-mem-tables"))
            .map(|(active, immutable)| active + immutable);
        Some(account)
    }
}

impl Session for RocksSession<'_> {
    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write_one(self.write, key, value, false)
    }
    #[inline]
    fn put_no_wal(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if self.sync {
            // A synced run keeps its durability promise even for the load step.
            return self.put(key, value);
        }
        self.write_one(self.write_no_wal, key, value, false)
    }
    #[inline]
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
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
    fn get_deferred(&mut self, key: &[u8], visit: Visit) -> Result<bool> {
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
    fn finish_deferred(&mut self, visit: Visit) -> Result<()> {
        if !self.pending {
            return Ok(());
        }
        self.pending = false;
        let slot = self.next_slot.other();
        visit(&self.pending_key, self.reader.value(slot));
        self.reader.release(slot);
        Ok(())
    }
    fn multi_get(&mut self, keys: &[Vec<u8>], visit: VisitBatch) -> Result<()> {
        self.reader.multi_get(keys, visit)
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        // A new iterator per seek, as db_bench's seekrandom does, so each op sees
        // the newest data; through the C++ reader, without the C API's allocations.
        self.reader.scan(start, nexts, reverse, visit)
    }
    fn next_in_order(&mut self, start: &[u8], visit: Visit) -> Result<bool> {
        // SAFETY: the iterator is created on the live DB and CF with this session's
        // read options, and destroyed (in Drop) before them; key and value slices are
        // read before the iterator moves again.
        unsafe {
            let it = match self.seq {
                Some(it) => {
                    librocksdb_sys::rocksdb_iter_next(it.as_ptr());
                    it
                }
                None => {
                    let it = librocksdb_sys::rocksdb_create_iterator_cf(
                        self.target.db.as_ptr(),
                        self.seq_options,
                        self.target.cf.as_ptr(),
                    );
                    let it = NonNull::new(it)
                        .ok_or_else(|| TargetError::engine(ENGINE, "no iterator"))?;
                    librocksdb_sys::rocksdb_iter_seek(
                        it.as_ptr(),
                        start.as_ptr() as *const c_char,
                        start.len(),
                    );
                    *self.seq.insert(it)
                }
            };
            let it = it.as_ptr();
            if librocksdb_sys::rocksdb_iter_valid(it) == 0 {
                let mut err: *mut c_char = null_mut();
                librocksdb_sys::rocksdb_iter_get_error(it, &mut err);
                RocksTarget::check(err)?;
                return Ok(false);
            }
            let (mut klen, mut vlen) = (0usize, 0usize);
            let k = librocksdb_sys::rocksdb_iter_key(it, &mut klen);
            let v = librocksdb_sys::rocksdb_iter_value(it, &mut vlen);
            visit(crate::ffi::bytes(k, klen), crate::ffi::bytes(v, vlen));
        }
        Ok(true)
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.write_one(self.write, key, &[], true)
    }
    fn write_batch(&mut self, batch: &plumb_core::WriteBatch) -> Result<()> {
        let mut err: *mut c_char = null_mut();
        // SAFETY: as in `write_one`: the reused batch, options and DB are alive for the
        // session; every key and value outlives the calls that copy them.
        unsafe {
            librocksdb_sys::rocksdb_writebatch_clear(self.batch);
            for op in batch.iter() {
                match op {
                    plumb_core::BatchOp::Put(k, v) => librocksdb_sys::rocksdb_writebatch_put(
                        self.batch,
                        k.as_ptr() as *const c_char,
                        k.len(),
                        v.as_ptr() as *const c_char,
                        v.len(),
                    ),
                    plumb_core::BatchOp::Delete(k) => librocksdb_sys::rocksdb_writebatch_delete(
                        self.batch,
                        k.as_ptr() as *const c_char,
                        k.len(),
                    ),
                }
            }
            librocksdb_sys::rocksdb_write(
                self.target.db.as_ptr(),
                self.write,
                self.batch,
                &mut err,
            );
            if !err.is_null() {
                return Err(take_error(err));
            }
        }
        Ok(())
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
    #[cfg(feature = "rocksdb")]
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

    /// The library linked is the one the build names: Speedb writes its own name and
    /// version at the head of its LOG, RocksDB its release.
    #[test]
    fn the_linked_library_is_the_one_named() {
        let dir = tempfile::tempdir().unwrap();
        let t = RocksTarget::open(dir.path(), RocksOptions::default()).unwrap();
        let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
        let head: String = log.lines().take(20).collect::<Vec<_>>().join("\n");
        let release = ROCKSDB_VERSION.split(' ').next().unwrap();
        if cfg!(feature = "speedb") {
            assert!(head.contains("Speedb") && head.contains(release), "{head}");
        } else {
            assert!(
                head.contains(&format!("RocksDB version: {release}")),
                "{head}"
            );
        }
        assert_eq!(t.name(), ENGINE);
    }

    /// Every sample says which write-stall limits are past, from the limits RocksDB
    /// wrote in its OPTIONS file and the L0 files it counts: none on an empty database,
    /// and none with 2 L0 files at a slowdown trigger of 2 while auto compactions are
    /// off (RocksDB does not stall on L0 then; with them on, a compaction would race
    /// the count).
    #[test]
    fn each_sample_says_which_stall_limits_are_past() {
        let dir = tempfile::tempdir().unwrap();
        let o = RocksOptions {
            option_string: Some(
                "level0_slowdown_writes_trigger=2;level0_file_num_compaction_trigger=2;\
                 disable_auto_compactions=true"
                    .into(),
            ),
            ..RocksOptions::default()
        };
        let t = RocksTarget::open(dir.path(), o).unwrap();
        assert_eq!(
            t.stats().stall_limits,
            Some(plumb_core::StallLimits::default())
        );
        let mut s = t.session().unwrap();
        for i in 0..2u8 {
            s.put(&[i; 16], b"v").unwrap();
            t.maintenance(Maintenance::Flush).unwrap();
        }
        assert_eq!(t.property_num(c"rocksdb.num-files-at-level0"), Some(2));
        assert_eq!(
            t.stats().stall_limits,
            Some(plumb_core::StallLimits::default())
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
        assert_eq!(t.stats_level(), STATS_EXCEPT_HISTOGRAM_OR_TIMERS);
        // Set before open, so the LOG says so too (bench/compare-dbbench.sh reads it),
        // in the releases whose LOG prints the level (8.x does not).
        let logged = log.lines().find(|l| l.contains("statistics stats level:"));
        if let Some(line) = logged {
            assert!(line.trim_end().ends_with(": 1"), "{line}");
        } else {
            assert!(
                !ROCKSDB_VERSION.starts_with("11."),
                "this release logs the stats level; the LOG lacks it"
            );
        }
    }

    /// The hyper clock cache is the fixed-size one db_bench ran unless a charge of 0
    /// asks for the auto-sized one, and a shard count given is the one RocksDB uses:
    /// RocksDB's LOG names the cache it built and prints its shards.
    #[cfg(plumb_rocks_hyper_clock)]
    #[test]
    fn the_block_cache_is_built_as_db_bench_builds_it() {
        let log_of = |o: RocksOptions| {
            let dir = tempfile::tempdir().unwrap();
            drop(RocksTarget::open(dir.path(), o).unwrap());
            std::fs::read_to_string(dir.path().join("LOG")).unwrap()
        };
        let hcc = RocksOptions {
            cache_type: CacheType::HyperClock,
            cache_size: 64 << 20,
            ..RocksOptions::default()
        };
        let fixed = log_of(hcc.clone());
        assert!(
            fixed.contains("block_cache_name: FixedHyperClockCache"),
            "{fixed}"
        );
        let auto = log_of(RocksOptions {
            estimated_entry_charge: Some(0),
            ..hcc.clone()
        });
        assert!(auto.contains("block_cache_name: AutoHyperClockCache"));
        #[cfg(plumb_rocks_hyper_clock_opts)]
        {
            let sharded = log_of(RocksOptions {
                cache_numshardbits: 3,
                ..hcc.clone()
            });
            assert!(sharded.contains("num_shard_bits : 3"));
        }
        #[cfg(plumb_rocks_lru_opts)]
        {
            let lru = log_of(RocksOptions {
                cache_numshardbits: 2,
                ..RocksOptions::default()
            });
            assert!(lru.contains("block_cache_name: LRUCache"));
            assert!(lru.contains("num_shard_bits : 2"));
        }
        // The charge run is recorded even when not given.
        let described = hcc.describe();
        assert!(described.contains(&("estimated_entry_charge".into(), "8192".into())));
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
