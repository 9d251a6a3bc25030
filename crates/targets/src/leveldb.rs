//! LevelDB, the LSM RocksDB forked from, through its C API (Debian's libleveldb-dev,
//! `leveldb/c.h`). No well-kept crate binds the system library, so the few calls plumb
//! needs are declared here. The C API copies each value it returns into a malloc'd
//! buffer: that copy is part of what a LevelDB read costs through it.

use crate::ffi::bytes;
use crate::leveldb_options::LeveldbOptions;
use plumb_core::{EngineStats, Maintenance, Result, Session, Target, TargetError, Visit};
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

pub(crate) const ENGINE: &str = "leveldb";

#[allow(non_camel_case_types)]
mod ffi {
    use std::os::raw::{c_char, c_int, c_void};

    macro_rules! opaque {
        ($($t:ident),+) => {$(
            #[repr(C)]
            pub struct $t {
                _p: [u8; 0],
            }
        )+};
    }
    opaque!(
        leveldb_t,
        leveldb_options_t,
        leveldb_readoptions_t,
        leveldb_writeoptions_t,
        leveldb_iterator_t,
        leveldb_cache_t,
        leveldb_filterpolicy_t
    );

    #[link(name = "leveldb")]
    extern "C" {
        pub fn leveldb_open(
            o: *const leveldb_options_t,
            name: *const c_char,
            err: *mut *mut c_char,
        ) -> *mut leveldb_t;
        pub fn leveldb_close(db: *mut leveldb_t);
        pub fn leveldb_put(
            db: *mut leveldb_t,
            o: *const leveldb_writeoptions_t,
            k: *const c_char,
            klen: usize,
            v: *const c_char,
            vlen: usize,
            err: *mut *mut c_char,
        );
        pub fn leveldb_delete(
            db: *mut leveldb_t,
            o: *const leveldb_writeoptions_t,
            k: *const c_char,
            klen: usize,
            err: *mut *mut c_char,
        );
        pub fn leveldb_get(
            db: *mut leveldb_t,
            o: *const leveldb_readoptions_t,
            k: *const c_char,
            klen: usize,
            vlen: *mut usize,
            err: *mut *mut c_char,
        ) -> *mut c_char;
        pub fn leveldb_create_iterator(
            db: *mut leveldb_t,
            o: *const leveldb_readoptions_t,
        ) -> *mut leveldb_iterator_t;
        pub fn leveldb_property_value(db: *mut leveldb_t, name: *const c_char) -> *mut c_char;
        pub fn leveldb_compact_range(
            db: *mut leveldb_t,
            start: *const c_char,
            start_len: usize,
            limit: *const c_char,
            limit_len: usize,
        );
        pub fn leveldb_iter_destroy(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_valid(it: *const leveldb_iterator_t) -> u8;
        pub fn leveldb_iter_seek_to_last(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_seek(it: *mut leveldb_iterator_t, k: *const c_char, klen: usize);
        pub fn leveldb_iter_next(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_prev(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_key(it: *const leveldb_iterator_t, len: *mut usize) -> *const c_char;
        pub fn leveldb_iter_value(it: *const leveldb_iterator_t, len: *mut usize) -> *const c_char;
        pub fn leveldb_iter_get_error(it: *const leveldb_iterator_t, err: *mut *mut c_char);
        pub fn leveldb_options_create() -> *mut leveldb_options_t;
        pub fn leveldb_options_destroy(o: *mut leveldb_options_t);
        pub fn leveldb_options_set_create_if_missing(o: *mut leveldb_options_t, v: u8);
        pub fn leveldb_options_set_write_buffer_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_max_open_files(o: *mut leveldb_options_t, v: c_int);
        pub fn leveldb_options_set_cache(o: *mut leveldb_options_t, c: *mut leveldb_cache_t);
        pub fn leveldb_options_set_block_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_max_file_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_compression(o: *mut leveldb_options_t, v: c_int);
        pub fn leveldb_options_set_filter_policy(
            o: *mut leveldb_options_t,
            p: *mut leveldb_filterpolicy_t,
        );
        pub fn leveldb_filterpolicy_create_bloom(bits: c_int) -> *mut leveldb_filterpolicy_t;
        pub fn leveldb_filterpolicy_destroy(p: *mut leveldb_filterpolicy_t);
        pub fn leveldb_cache_create_lru(capacity: usize) -> *mut leveldb_cache_t;
        pub fn leveldb_cache_destroy(c: *mut leveldb_cache_t);
        pub fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t;
        pub fn leveldb_readoptions_destroy(o: *mut leveldb_readoptions_t);
        pub fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t;
        pub fn leveldb_writeoptions_destroy(o: *mut leveldb_writeoptions_t);
        pub fn leveldb_writeoptions_set_sync(o: *mut leveldb_writeoptions_t, v: u8);
        pub fn leveldb_free(p: *mut c_void);
        pub fn leveldb_major_version() -> c_int;
        pub fn leveldb_minor_version() -> c_int;
    }
}

/// The LevelDB release this binary links.
pub fn leveldb_version() -> String {
    // SAFETY: plain getters without arguments.
    unsafe {
        format!(
            "{}.{}",
            ffi::leveldb_major_version(),
            ffi::leveldb_minor_version()
        )
    }
}

/// Takes an error string LevelDB malloc'd, frees it, and returns it as an engine error.
///
/// # Safety
/// `err` must be non-null and allocated by LevelDB.
unsafe fn take_error(err: *mut c_char) -> TargetError {
    // SAFETY: per the contract.
    let msg = unsafe {
        let m = CStr::from_ptr(err).to_string_lossy().into_owned();
        ffi::leveldb_free(err as *mut c_void);
        m
    };
    TargetError::engine(ENGINE, msg)
}

/// Turns LevelDB's error out-parameter into a result.
fn check(err: *mut c_char) -> Result<()> {
    if err.is_null() {
        Ok(())
    } else {
        // SAFETY: LevelDB set it and hands it over.
        Err(unsafe { take_error(err) })
    }
}

/// An open LevelDB database with the option objects it was opened with.
pub struct LeveldbTarget {
    db: NonNull<ffi::leveldb_t>,
    options: *mut ffi::leveldb_options_t,
    cache: *mut ffi::leveldb_cache_t,
    filter: *mut ffi::leveldb_filterpolicy_t,
    path: PathBuf,
    settings: LeveldbOptions,
}

// SAFETY: LevelDB's DB is safe for concurrent use from many threads (its documented
// contract); the option objects are only read after open and freed in Drop.
unsafe impl Send for LeveldbTarget {}
// SAFETY: as above.
unsafe impl Sync for LeveldbTarget {}

impl LeveldbTarget {
    /// Opens (creating if missing) the database in directory `path`.
    pub fn open(path: &Path, settings: LeveldbOptions) -> Result<Self> {
        settings.validate()?;
        let name = crate::ffi::c_path(ENGINE, path)?;
        // SAFETY: constructors and setters on objects created here; ownership of the
        // cache and filter stays with this target, which frees them after the DB.
        unsafe {
            let o = ffi::leveldb_options_create();
            ffi::leveldb_options_set_create_if_missing(o, 1);
            ffi::leveldb_options_set_write_buffer_size(o, settings.write_buffer_size as usize);
            ffi::leveldb_options_set_max_file_size(o, settings.max_file_size as usize);
            ffi::leveldb_options_set_block_size(o, settings.block_size as usize);
            ffi::leveldb_options_set_max_open_files(o, settings.max_open_files as c_int);
            ffi::leveldb_options_set_compression(o, c_int::from(settings.snappy));
            let cache = if settings.cache_size > 0 {
                let c = ffi::leveldb_cache_create_lru(settings.cache_size as usize);
                ffi::leveldb_options_set_cache(o, c);
                c
            } else {
                ptr::null_mut()
            };
            let filter = if settings.bloom_bits > 0 {
                let f = ffi::leveldb_filterpolicy_create_bloom(settings.bloom_bits as c_int);
                ffi::leveldb_options_set_filter_policy(o, f);
                f
            } else {
                ptr::null_mut()
            };
            let mut err = ptr::null_mut();
            let db = ffi::leveldb_open(o, name.as_ptr(), &mut err);
            let free_options = || {
                ffi::leveldb_options_destroy(o);
                if !cache.is_null() {
                    ffi::leveldb_cache_destroy(cache);
                }
                if !filter.is_null() {
                    ffi::leveldb_filterpolicy_destroy(filter);
                }
            };
            if let Err(e) = check(err) {
                free_options();
                return Err(e);
            }
            let Some(db) = NonNull::new(db) else {
                free_options();
                return Err(TargetError::engine(ENGINE, "leveldb_open returned nothing"));
            };
            Ok(LeveldbTarget {
                db,
                options: o,
                cache,
                filter,
                path: path.to_path_buf(),
                settings,
            })
        }
    }

    /// A DB property as text (`leveldb.stats`, `leveldb.sstables`, …).
    pub fn property(&self, name: &str) -> Option<String> {
        let n = CString::new(name).ok()?;
        // SAFETY: a live DB; the result is malloc'd by LevelDB and freed here.
        unsafe {
            let p = ffi::leveldb_property_value(self.db.as_ptr(), n.as_ptr());
            if p.is_null() {
                return None;
            }
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            ffi::leveldb_free(p as *mut c_void);
            Some(s)
        }
    }
}

impl Drop for LeveldbTarget {
    fn drop(&mut self) {
        // SAFETY: sessions borrow the target, so none is alive; the DB is closed before
        // the cache and filter it uses are freed.
        unsafe {
            ffi::leveldb_close(self.db.as_ptr());
            ffi::leveldb_options_destroy(self.options);
            if !self.cache.is_null() {
                ffi::leveldb_cache_destroy(self.cache);
            }
            if !self.filter.is_null() {
                ffi::leveldb_filterpolicy_destroy(self.filter);
            }
        }
    }
}

/// Compaction bytes read and written, summed over the levels of `leveldb.stats`
/// (`Level Files Size(MB) Time(sec) Read(MB) Write(MB)` rows). LevelDB counts the
/// memtable flush as level 0's compaction, so writes include flushes.
pub fn compaction_mb(stats: &str) -> Option<(f64, f64)> {
    let mut read = 0.0;
    let mut write = 0.0;
    let mut rows = 0;
    for line in stats.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 6 && f[0].parse::<u32>().is_ok() {
            read += f[4].parse::<f64>().ok()?;
            write += f[5].parse::<f64>().ok()?;
            rows += 1;
        }
    }
    (rows > 0 || stats.contains("Compactions")).then_some((read, write))
}

struct LeveldbSession<'a> {
    target: &'a LeveldbTarget,
    read: *mut ffi::leveldb_readoptions_t,
    write: *mut ffi::leveldb_writeoptions_t,
    /// The iterator of a readseq pass, kept from call to call.
    seq: Option<Iter>,
}

/// An owned LevelDB iterator.
struct Iter(*mut ffi::leveldb_iterator_t);

impl Drop for Iter {
    fn drop(&mut self) {
        // SAFETY: created by leveldb_create_iterator, destroyed once, before the DB.
        unsafe { ffi::leveldb_iter_destroy(self.0) }
    }
}

impl Iter {
    fn valid(&self) -> bool {
        // SAFETY: a live iterator.
        unsafe { ffi::leveldb_iter_valid(self.0) != 0 }
    }
    fn entry(&self) -> (&[u8], &[u8]) {
        let (mut kl, mut vl) = (0usize, 0usize);
        // SAFETY: called only while valid; the slices live until the iterator moves,
        // which needs `&mut self`.
        unsafe {
            let k = ffi::leveldb_iter_key(self.0, &mut kl);
            let v = ffi::leveldb_iter_value(self.0, &mut vl);
            (bytes(k, kl), bytes(v, vl))
        }
    }
    fn error(&self) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: a live iterator.
        unsafe { ffi::leveldb_iter_get_error(self.0, &mut err) };
        check(err)
    }
}

impl Drop for LeveldbSession<'_> {
    fn drop(&mut self) {
        self.seq = None;
        // SAFETY: created in `session()`, owned by this session only.
        unsafe {
            ffi::leveldb_readoptions_destroy(self.read);
            ffi::leveldb_writeoptions_destroy(self.write);
        }
    }
}

impl LeveldbSession<'_> {
    fn iter(&self) -> Iter {
        // SAFETY: a live DB and read options.
        Iter(unsafe { ffi::leveldb_create_iterator(self.target.db.as_ptr(), self.read) })
    }
}

impl Target for LeveldbTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        leveldb_version()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        // SAFETY: constructors and a setter on objects the session owns.
        let (read, write) = unsafe {
            let w = ffi::leveldb_writeoptions_create();
            ffi::leveldb_writeoptions_set_sync(w, u8::from(self.settings.sync));
            (ffi::leveldb_readoptions_create(), w)
        };
        Ok(Box::new(LeveldbSession {
            target: self,
            read,
            write,
            seq: None,
        }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<()> {
        match what {
            // LevelDB has no flush call: a full-range compaction flushes the memtable
            // first, so flush and compact are the same request.
            Maintenance::Flush | Maintenance::Compact => {
                // SAFETY: a live DB; null bounds mean the whole key range.
                unsafe {
                    ffi::leveldb_compact_range(self.db.as_ptr(), ptr::null(), 0, ptr::null(), 0)
                };
                Ok(())
            }
            // Background compaction cannot be waited for, nor one level compacted,
            // through the C API.
            Maintenance::WaitForCompaction | Maintenance::CompactLevel(_) => Ok(()),
        }
    }
    fn stats(&self) -> EngineStats {
        let mb = self
            .property("leveldb.stats")
            .and_then(|s| compaction_mb(&s));
        EngineStats {
            compact_read_bytes: mb.map(|(r, _)| (r * 1048576.0) as u64),
            compact_write_bytes: mb.map(|(_, w)| (w * 1048576.0) as u64),
            ..EngineStats::default()
        }
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.path)
    }
    fn options(&self) -> Vec<(String, String)> {
        self.settings.describe()
    }
}

impl Session for LeveldbSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: live DB and options; LevelDB copies key and value before returning.
        unsafe {
            ffi::leveldb_put(
                self.target.db.as_ptr(),
                self.write,
                key.as_ptr() as *const c_char,
                key.len(),
                value.as_ptr() as *const c_char,
                value.len(),
                &mut err,
            )
        };
        check(err)
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let mut err = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live DB and options; the returned buffer is malloc'd and freed below.
        let v = unsafe {
            ffi::leveldb_get(
                self.target.db.as_ptr(),
                self.read,
                key.as_ptr() as *const c_char,
                key.len(),
                &mut len,
                &mut err,
            )
        };
        check(err)?;
        if v.is_null() {
            return Ok(false);
        }
        // SAFETY: LevelDB returned `len` bytes at `v`, ours until freed.
        visit(unsafe { bytes(v, len) });
        // SAFETY: allocated by LevelDB, freed once.
        unsafe { ffi::leveldb_free(v as *mut c_void) };
        Ok(true)
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        let it = self.iter();
        // SAFETY: a live iterator; `start` outlives the call.
        unsafe { ffi::leveldb_iter_seek(it.0, start.as_ptr() as *const c_char, start.len()) };
        if reverse {
            // The last key <= start: step back from the first key >= start unless it
            // is start itself; past the end, begin at the last key.
            if !it.valid() {
                // SAFETY: a live iterator.
                unsafe { ffi::leveldb_iter_seek_to_last(it.0) };
            } else if it.entry().0 > start {
                // SAFETY: a live, valid iterator.
                unsafe { ffi::leveldb_iter_prev(it.0) };
            }
        }
        let mut n = 0;
        while it.valid() {
            let (k, v) = it.entry();
            visit(k, v);
            n += 1;
            if n > nexts {
                break;
            }
            // SAFETY: a live, valid iterator.
            unsafe {
                if reverse {
                    ffi::leveldb_iter_prev(it.0)
                } else {
                    ffi::leveldb_iter_next(it.0)
                }
            }
        }
        it.error()?;
        Ok(n)
    }
    fn next_in_order(&mut self, start: &[u8], visit: Visit) -> Result<bool> {
        match &self.seq {
            Some(it) => {
                // SAFETY: a live iterator, positioned on the entry visited last.
                unsafe { ffi::leveldb_iter_next(it.0) }
            }
            None => {
                let it = self.iter();
                // SAFETY: a live iterator; `start` outlives the call.
                unsafe {
                    ffi::leveldb_iter_seek(it.0, start.as_ptr() as *const c_char, start.len())
                };
                self.seq = Some(it);
            }
        }
        let it = self.seq.as_ref().expect("set above");
        if !it.valid() {
            it.error()?;
            self.seq = None;
            return Ok(false);
        }
        let (k, v) = it.entry();
        visit(k, v);
        Ok(true)
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: live DB and options.
        unsafe {
            ffi::leveldb_delete(
                self.target.db.as_ptr(),
                self.write,
                key.as_ptr() as *const c_char,
                key.len(),
                &mut err,
            )
        };
        check(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_bytes_sum_the_levels_of_leveldb_stats() {
        let s = "                               Compactions\n\
                 Level  Files Size(MB) Time(sec) Read(MB) Write(MB)\n\
                 --------------------------------------------------\n  \
                 0        2        4         0        0         4\n  \
                 1        5       10         1       12        11\n";
        assert_eq!(compaction_mb(s), Some((12.0, 15.0)));
        assert_eq!(compaction_mb("nonsense"), None);
    }
}
