//! WiredTiger (Debian's libwiredtiger) through a small C layer, `cpp/wt_shim.c`: its
//! handles are structs of method pointers with variadic cursor keys, so the calls are
//! made in C against the installed header. One table `table:plumb` with raw byte keys
//! and values (`key_format=u,value_format=u`); each op is its own transaction, written
//! through WiredTiger's log.

use crate::ffi::{bytes, scan_through, visit_ctx, visit_entry, VisitFn};
use crate::wiredtiger_options::WiredtigerOptions;
use plumb_core::{EngineStats, Maintenance, Result, Session, Target, TargetError, Visit};
use std::ffi::{c_void, CStr, CString};
use std::os::raw::{c_char, c_int};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

pub(crate) const ENGINE: &str = "wiredtiger";

#[repr(C)]
struct RawConn {
    _p: [u8; 0],
}
#[repr(C)]
struct RawSession {
    _p: [u8; 0],
}

#[link(name = "wiredtiger")]
extern "C" {}

extern "C" {
    fn plumb_wt_version() -> *const c_char;
    fn plumb_wt_strerror(rc: c_int) -> *const c_char;
    fn plumb_wt_open(home: *const c_char, config: *const c_char, conn: *mut *mut RawConn) -> c_int;
    fn plumb_wt_close(conn: *mut RawConn) -> c_int;
    fn plumb_wt_maintain(conn: *mut RawConn, compact: c_int) -> c_int;
    fn plumb_wt_stats(conn: *mut RawConn, insert_bytes: *mut i64, block_written: *mut i64)
        -> c_int;
    fn plumb_wt_session_open(conn: *mut RawConn, out: *mut *mut RawSession) -> c_int;
    fn plumb_wt_session_close(s: *mut RawSession);
    fn plumb_wt_put(
        s: *mut RawSession,
        k: *const c_void,
        kl: usize,
        v: *const c_void,
        vl: usize,
    ) -> c_int;
    fn plumb_wt_delete(s: *mut RawSession, k: *const c_void, kl: usize) -> c_int;
    fn plumb_wt_get(
        s: *mut RawSession,
        k: *const c_void,
        kl: usize,
        found: *mut c_int,
        v: *mut *const c_void,
        vl: *mut usize,
    ) -> c_int;
    fn plumb_wt_release(s: *mut RawSession);
    fn plumb_wt_scan(
        s: *mut RawSession,
        start: *const c_char,
        sl: usize,
        nexts: usize,
        reverse: c_int,
        visit: VisitFn,
        ctx: *mut c_void,
        visited: *mut usize,
    ) -> c_int;
    fn plumb_wt_seq_next(
        s: *mut RawSession,
        start: *const c_void,
        sl: usize,
        visit: VisitFn,
        ctx: *mut c_void,
        more: *mut c_int,
    ) -> c_int;
}

/// The WiredTiger release this binary links, as it names itself.
pub fn wiredtiger_version() -> String {
    // SAFETY: returns a static string.
    unsafe {
        CStr::from_ptr(plumb_wt_version())
            .to_string_lossy()
            .into_owned()
    }
}

fn status(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    // SAFETY: WiredTiger returns a static message for any code.
    let msg = unsafe {
        CStr::from_ptr(plumb_wt_strerror(rc))
            .to_string_lossy()
            .into_owned()
    };
    Err(TargetError::engine(
        ENGINE,
        format!("{what}: {msg} (code {rc})"),
    ))
}

/// An open WiredTiger connection with plumb's table.
pub struct WiredtigerTarget {
    conn: NonNull<RawConn>,
    dir: PathBuf,
    settings: WiredtigerOptions,
}

// SAFETY: a WT_CONNECTION is made for many threads (WiredTiger's documented contract);
// each worker opens its own WT_SESSION from it.
unsafe impl Send for WiredtigerTarget {}
// SAFETY: as above.
unsafe impl Sync for WiredtigerTarget {}

impl WiredtigerTarget {
    /// Opens (creating if missing) the database whose home is `dir`.
    pub fn open(dir: &Path, settings: WiredtigerOptions) -> Result<Self> {
        settings.validate()?;
        crate::engine::make_dir(ENGINE, dir)?;
        let home = crate::ffi::c_path(ENGINE, dir)?;
        let config = CString::new(settings.config()).expect("no NUL in a built config");
        let mut conn = std::ptr::null_mut();
        // SAFETY: both strings outlive the call; WiredTiger copies what it keeps.
        let rc = unsafe { plumb_wt_open(home.as_ptr(), config.as_ptr(), &mut conn) };
        status(rc, "open")?;
        let conn = NonNull::new(conn)
            .ok_or_else(|| TargetError::engine(ENGINE, "open returned no connection"))?;
        Ok(WiredtigerTarget {
            conn,
            dir: dir.to_path_buf(),
            settings,
        })
    }
}

impl Drop for WiredtigerTarget {
    fn drop(&mut self) {
        // SAFETY: sessions borrow the target, so none is open; closed once.
        unsafe { plumb_wt_close(self.conn.as_ptr()) };
    }
}

struct WiredtigerSession<'a> {
    raw: NonNull<RawSession>,
    _target: &'a WiredtigerTarget,
}

impl Drop for WiredtigerSession<'_> {
    fn drop(&mut self) {
        // SAFETY: owned by this session, closed once, before the connection.
        unsafe { plumb_wt_session_close(self.raw.as_ptr()) }
    }
}

impl Target for WiredtigerTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        wiredtiger_version()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a live connection.
        let rc = unsafe { plumb_wt_session_open(self.conn.as_ptr(), &mut raw) };
        status(rc, "open_session")?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| TargetError::engine(ENGINE, "open_session returned nothing"))?;
        Ok(Box::new(WiredtigerSession { raw, _target: self }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<()> {
        let compact = match what {
            // A checkpoint writes the tree's dirty pages, as a flush writes a memtable.
            Maintenance::Flush => 0,
            Maintenance::Compact => 1,
            Maintenance::WaitForCompaction | Maintenance::CompactLevel(_) => return Ok(()),
        };
        // SAFETY: a live connection; the shim uses a session of its own.
        let rc = unsafe { plumb_wt_maintain(self.conn.as_ptr(), compact) };
        status(
            rc,
            if compact == 1 {
                "compact"
            } else {
                "checkpoint"
            },
        )
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.dir)
    }
    fn stats(&self) -> EngineStats {
        let (mut ins, mut wr) = (-1i64, -1i64);
        // SAFETY: a live connection; the shim uses a session of its own.
        let rc = unsafe { plumb_wt_stats(self.conn.as_ptr(), &mut ins, &mut wr) };
        let known = |v: i64| (rc == 0 && v >= 0).then_some(v as u64);
        EngineStats {
            ingest_bytes: known(ins),
            // All of the B-tree's file writes (checkpoints and eviction; the log not).
            flush_write_bytes: known(wr),
            ..EngineStats::default()
        }
    }
    fn options(&self) -> Vec<(String, String)> {
        self.settings.describe()
    }
}

impl Session for WiredtigerSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        // SAFETY: a live session; WiredTiger copies key and value.
        let rc = unsafe {
            plumb_wt_put(
                self.raw.as_ptr(),
                key.as_ptr() as *const c_void,
                key.len(),
                value.as_ptr() as *const c_void,
                value.len(),
            )
        };
        status(rc, "insert")
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let (mut found, mut v, mut vl) = (0, std::ptr::null(), 0usize);
        // SAFETY: a live session; the value stays valid until plumb_wt_release.
        let rc = unsafe {
            plumb_wt_get(
                self.raw.as_ptr(),
                key.as_ptr() as *const c_void,
                key.len(),
                &mut found,
                &mut v,
                &mut vl,
            )
        };
        status(rc, "search")?;
        if found == 0 {
            return Ok(false);
        }
        // SAFETY: WiredTiger's value, valid until the release below.
        visit(unsafe { bytes(v as *const c_char, vl) });
        // SAFETY: a live session.
        unsafe { plumb_wt_release(self.raw.as_ptr()) };
        Ok(true)
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        let raw = self.raw.as_ptr();
        // SAFETY: a live session.
        let (rc, visited) =
            unsafe { scan_through(plumb_wt_scan, raw, start, nexts, reverse, visit) };
        status(rc, "scan")?;
        Ok(visited)
    }
    fn next_in_order(&mut self, start: &[u8], mut visit: Visit) -> Result<bool> {
        let mut more = 0;
        // SAFETY: as in `scan`; the pass's cursor lives in the shim's session.
        let rc = unsafe {
            plumb_wt_seq_next(
                self.raw.as_ptr(),
                start.as_ptr() as *const c_void,
                start.len(),
                visit_entry,
                visit_ctx(&mut visit),
                &mut more,
            )
        };
        status(rc, "readseq")?;
        Ok(more != 0)
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        // SAFETY: a live session.
        let rc =
            unsafe { plumb_wt_delete(self.raw.as_ptr(), key.as_ptr() as *const c_void, key.len()) };
        status(rc, "remove")
    }
}
