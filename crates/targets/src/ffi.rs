//! What the engines behind a C or C++ layer share: the scan callback that hands each
//! entry to a Rust visitor, a scan through a C shim, and C pointer-and-length pairs as
//! slices.

use plumb_core::{TargetError, Visit};
use std::ffi::CString;
#[cfg(any(feature = "splinterdb", feature = "wiredtiger"))]
use std::os::raw::c_int;
use std::os::raw::{c_char, c_void};
use std::path::Path;

/// A path as the NUL-terminated string a C API takes, for `engine`'s errors.
pub(crate) fn c_path(engine: &'static str, path: &Path) -> Result<CString, TargetError> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| TargetError::engine(engine, "the data dir path holds a NUL byte"))
}

/// The C signature of a scan's per-entry callback: context, key, key length, value,
/// value length.
pub(crate) type VisitFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize);

/// Hands one scanned entry to the Rust visitor behind `ctx` (made by [`visit_ctx`]).
///
/// # Safety
/// `ctx` points at a live [`Visit`]; both slices are valid for the call. (A panic in the
/// visitor aborts here rather than unwinding into C.)
pub(crate) unsafe extern "C" fn visit_entry(
    ctx: *mut c_void,
    k: *const c_char,
    klen: usize,
    v: *const c_char,
    vlen: usize,
) {
    // SAFETY: per the contract above.
    unsafe {
        let visit = &mut *(ctx as *mut Visit);
        visit(bytes(k, klen), bytes(v, vlen));
    }
}

/// The context pointer [`visit_entry`] expects, for a visitor that outlives the call
/// it is passed to.
#[inline(always)]
pub(crate) fn visit_ctx(visit: &mut Visit) -> *mut c_void {
    visit as *mut Visit as *mut c_void
}

/// The C signature of a shim's scan (SplinterDB's, WiredTiger's): the handle, the start
/// key and its length, the steps after the seek, reverse, the per-entry callback and its
/// context, and the count of entries visited (out); it returns the shim's status.
#[cfg(any(feature = "splinterdb", feature = "wiredtiger"))]
pub(crate) type ScanFn<H> = unsafe extern "C" fn(
    *mut H,
    *const c_char,
    usize,
    usize,
    c_int,
    VisitFn,
    *mut c_void,
    *mut usize,
) -> c_int;

/// One seek plus up to `nexts` steps through a shim's `scan`, each entry handed to
/// `visit` through [`visit_entry`]; returns the shim's status and the entries visited.
/// Written once, so each engine's `scan` is only its own status check.
///
/// # Safety
/// `handle` must be a live handle of the shim `scan` belongs to.
#[cfg(any(feature = "splinterdb", feature = "wiredtiger"))]
#[inline]
pub(crate) unsafe fn scan_through<H>(
    scan: ScanFn<H>,
    handle: *mut H,
    start: &[u8],
    nexts: usize,
    reverse: bool,
    mut visit: Visit,
) -> (c_int, usize) {
    let mut visited = 0usize;
    // SAFETY: per the contract above; `start` and `visit` outlive the call and
    // `visit_entry` is the only user of the context pointer.
    let rc = unsafe {
        scan(
            handle,
            start.as_ptr() as *const c_char,
            start.len(),
            nexts,
            c_int::from(reverse),
            visit_entry,
            visit_ctx(&mut visit),
            &mut visited,
        )
    };
    (rc, visited)
}

/// A C pointer and length as a slice (empty for a null or zero-length one).
///
/// # Safety
/// A non-null `p` must point at `len` readable bytes that outlive the slice's use.
#[inline(always)]
pub(crate) unsafe fn bytes<'a>(p: *const c_char, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: per the contract above.
        unsafe { std::slice::from_raw_parts(p as *const u8, len) }
    }
}
