//! SplinterDB (VMware's size-tiered B^epsilon-tree KV store) through a small C layer,
//! `cpp/splinter_shim.c`, compiled against the installed SplinterDB's own headers
//! (`scripts/build-splinterdb.sh` installs it). SplinterDB never fsyncs and has no
//! crash recovery: its durability is `unlogged`, and compare says so beside any engine
//! that syncs.

use crate::ffi::{bytes, scan_through, VisitFn};
use crate::splinterdb_options::{SplinterdbOptions, DB_FILE};
use plumb_core::{Maintenance, Result, Session, Target, TargetError, Visit};
use std::ffi::{c_void, CStr, CString};
use std::os::raw::{c_char, c_int};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

pub(crate) const ENGINE: &str = "splinterdb";

#[repr(C)]
struct Raw {
    _p: [u8; 0],
}
#[repr(C)]
struct RawResult {
    _p: [u8; 0],
}
#[repr(C)]
struct RawIter {
    _p: [u8; 0],
}

/// Mirrors `plumb_splinter_sizes` in the shim.
#[repr(C)]
struct Sizes {
    cache_size: u64,
    disk_size: u64,
    memtable_capacity: u64,
    memtable_bg_threads: u64,
    normal_bg_threads: u64,
    direct_io: c_int,
}

extern "C" {
    fn plumb_splinter_version() -> *const c_char;
    fn plumb_splinter_open(
        path: *const c_char,
        s: *const Sizes,
        create: c_int,
        rc: *mut c_int,
    ) -> *mut Raw;
    fn plumb_splinter_close(p: *mut Raw);
    fn plumb_splinter_insert(
        p: *mut Raw,
        k: *const c_char,
        kl: usize,
        v: *const c_char,
        vl: usize,
    ) -> c_int;
    fn plumb_splinter_delete(p: *mut Raw, k: *const c_char, kl: usize) -> c_int;
    fn plumb_splinter_result_new(p: *mut Raw) -> *mut RawResult;
    fn plumb_splinter_result_free(r: *mut RawResult);
    fn plumb_splinter_lookup(
        p: *mut Raw,
        r: *mut RawResult,
        k: *const c_char,
        kl: usize,
        found: *mut c_int,
        v: *mut *const c_char,
        vl: *mut usize,
    ) -> c_int;
    fn plumb_splinter_iter_open(
        p: *mut Raw,
        start: *const c_char,
        sl: usize,
        reverse: c_int,
        it: *mut *mut RawIter,
    ) -> c_int;
    fn plumb_splinter_iter_valid(it: *mut RawIter) -> c_int;
    fn plumb_splinter_iter_next(it: *mut RawIter);
    fn plumb_splinter_iter_current(
        it: *mut RawIter,
        k: *mut *const c_char,
        kl: *mut usize,
        v: *mut *const c_char,
        vl: *mut usize,
    );
    fn plumb_splinter_iter_status(it: *mut RawIter) -> c_int;
    fn plumb_splinter_iter_close(it: *mut RawIter);
    fn plumb_splinter_scan(
        p: *mut Raw,
        start: *const c_char,
        sl: usize,
        nexts: usize,
        reverse: c_int,
        visit: VisitFn,
        ctx: *mut c_void,
        visited: *mut usize,
    ) -> c_int;
}

/// SplinterDB's version: the git tag or commit its build recorded (scripts/
/// build-splinterdb.sh gives a tarball build its commit), without the library's
/// `splinterdb_build_version` prefix.
pub fn splinterdb_version() -> String {
    // SAFETY: returns a static string.
    let full = unsafe {
        let p = plumb_splinter_version();
        if p.is_null() {
            return "unknown".into();
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    let v = full.trim_start_matches("splinterdb_build_version").trim();
    if v.is_empty() {
        "unknown (built without its git history)".into()
    } else {
        v.to_string()
    }
}

/// SplinterDB returns errno-style codes.
fn status(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    Err(TargetError::engine(
        ENGINE,
        format!(
            "{what}: {} (code {rc})",
            std::io::Error::from_raw_os_error(rc)
        ),
    ))
}

/// An open SplinterDB database.
pub struct SplinterdbTarget {
    raw: NonNull<Raw>,
    /// The file name SplinterDB's config points at, alive as long as the database.
    _file: CString,
    dir: PathBuf,
    settings: SplinterdbOptions,
}

// SAFETY: SplinterDB's handle is made for many threads (it registers each on first
// use); the shim's config it points at is not changed after open.
unsafe impl Send for SplinterdbTarget {}
// SAFETY: as above.
unsafe impl Sync for SplinterdbTarget {}

impl SplinterdbTarget {
    /// Creates the database file in `dir`, or opens the one there with the same sizes.
    pub fn open(dir: &Path, settings: SplinterdbOptions) -> Result<Self> {
        settings.validate()?;
        crate::engine::make_dir(ENGINE, dir)?;
        let path = dir.join(DB_FILE);
        let create = !path.exists();
        let file = crate::ffi::c_path(ENGINE, &path)?;
        let sizes = Sizes {
            cache_size: settings.cache_size,
            disk_size: settings.disk_size,
            memtable_capacity: settings.memtable_capacity,
            memtable_bg_threads: settings.memtable_bg_threads,
            normal_bg_threads: settings.normal_bg_threads,
            direct_io: c_int::from(settings.direct_io),
        };
        let mut rc = 0;
        // SAFETY: `file` and `sizes` outlive the call; the shim copies the sizes and
        // keeps the file name pointer, which `_file` keeps alive.
        let raw =
            unsafe { plumb_splinter_open(file.as_ptr(), &sizes, c_int::from(create), &mut rc) };
        let Some(raw) = NonNull::new(raw) else {
            status(
                rc,
                if create {
                    "create"
                } else {
                    "open (same disk_size as when it was created?)"
                },
            )?;
            return Err(TargetError::engine(ENGINE, "open returned nothing"));
        };
        Ok(SplinterdbTarget {
            raw,
            _file: file,
            dir: dir.to_path_buf(),
            settings,
        })
    }
}

impl Drop for SplinterdbTarget {
    fn drop(&mut self) {
        // SAFETY: sessions borrow the target, so none is alive; closed once.
        unsafe { plumb_splinter_close(self.raw.as_ptr()) }
    }
}

struct SplinterdbSession<'a> {
    target: &'a SplinterdbTarget,
    result: NonNull<RawResult>,
    /// The iterator of a readseq pass, kept from call to call.
    seq: Option<NonNull<RawIter>>,
}

impl Drop for SplinterdbSession<'_> {
    fn drop(&mut self) {
        // SAFETY: owned by this session, freed once, before the database closes.
        unsafe {
            if let Some(it) = self.seq.take() {
                plumb_splinter_iter_close(it.as_ptr());
            }
            plumb_splinter_result_free(self.result.as_ptr());
        }
    }
}

impl Target for SplinterdbTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        splinterdb_version()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        // SAFETY: a live database.
        let r = unsafe { plumb_splinter_result_new(self.raw.as_ptr()) };
        let result = NonNull::new(r).ok_or_else(|| TargetError::engine(ENGINE, "out of memory"))?;
        Ok(Box::new(SplinterdbSession {
            target: self,
            result,
            seq: None,
        }))
    }
    fn maintenance(&self, _what: Maintenance) -> Result<()> {
        // No flush or compaction call in SplinterDB's public API that plumb's steps
        // could wait on: its background threads do that work on their own.
        Ok(())
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.dir)
    }
    fn options(&self) -> Vec<(String, String)> {
        self.settings.describe()
    }
}

impl Session for SplinterdbSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        // SAFETY: a live database; SplinterDB copies key and value.
        let rc = unsafe {
            plumb_splinter_insert(
                self.target.raw.as_ptr(),
                key.as_ptr() as *const c_char,
                key.len(),
                value.as_ptr() as *const c_char,
                value.len(),
            )
        };
        status(rc, "insert")
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let (mut found, mut v, mut vl) = (0, std::ptr::null(), 0usize);
        // SAFETY: a live database and this session's own result object.
        let rc = unsafe {
            plumb_splinter_lookup(
                self.target.raw.as_ptr(),
                self.result.as_ptr(),
                key.as_ptr() as *const c_char,
                key.len(),
                &mut found,
                &mut v,
                &mut vl,
            )
        };
        status(rc, "lookup")?;
        if found == 0 {
            return Ok(false);
        }
        // SAFETY: the value lives in the result object until its next use.
        visit(unsafe { bytes(v, vl) });
        Ok(true)
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        let raw = self.target.raw.as_ptr();
        // SAFETY: a live database.
        let (rc, visited) =
            unsafe { scan_through(plumb_splinter_scan, raw, start, nexts, reverse, visit) };
        status(rc, "scan")?;
        Ok(visited)
    }
    fn next_in_order(&mut self, start: &[u8], visit: Visit) -> Result<bool> {
        let it = match self.seq {
            // SAFETY: a live iterator, on the entry visited last.
            Some(it) => unsafe {
                plumb_splinter_iter_next(it.as_ptr());
                it
            },
            None => {
                let mut it = std::ptr::null_mut();
                // SAFETY: a live database; `start` outlives the call (SplinterDB copies
                // the start key into the iterator).
                let rc = unsafe {
                    plumb_splinter_iter_open(
                        self.target.raw.as_ptr(),
                        start.as_ptr() as *const c_char,
                        start.len(),
                        0,
                        &mut it,
                    )
                };
                status(rc, "iterator")?;
                let it = NonNull::new(it)
                    .ok_or_else(|| TargetError::engine(ENGINE, "iterator returned nothing"))?;
                self.seq = Some(it);
                it
            }
        };
        // SAFETY: a live iterator; key and value are valid until it moves.
        unsafe {
            if plumb_splinter_iter_valid(it.as_ptr()) == 0 {
                let rc = plumb_splinter_iter_status(it.as_ptr());
                plumb_splinter_iter_close(it.as_ptr());
                self.seq = None;
                status(rc, "iterator")?;
                return Ok(false);
            }
            let (mut k, mut kl, mut v, mut vl) =
                (std::ptr::null(), 0usize, std::ptr::null(), 0usize);
            plumb_splinter_iter_current(it.as_ptr(), &mut k, &mut kl, &mut v, &mut vl);
            visit(bytes(k, kl), bytes(v, vl));
        }
        Ok(true)
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        // SAFETY: a live database.
        let rc = unsafe {
            plumb_splinter_delete(
                self.target.raw.as_ptr(),
                key.as_ptr() as *const c_char,
                key.len(),
            )
        };
        status(rc, "delete")
    }
}
