//! What the engines behind a C or C++ layer share: the scan callback that hands each
//! entry to a Rust visitor, and C pointer-and-length pairs as slices.

use plumb_core::TargetError;
use std::ffi::CString;
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
/// `ctx` points at a live `&mut dyn FnMut(&[u8], &[u8])`; both slices are valid for
/// the call. (A panic in the visitor aborts here rather than unwinding into C.)
pub(crate) unsafe extern "C" fn visit_entry(
    ctx: *mut c_void,
    k: *const c_char,
    klen: usize,
    v: *const c_char,
    vlen: usize,
) {
    // SAFETY: per the contract above.
    unsafe {
        let visit = &mut *(ctx as *mut &mut dyn FnMut(&[u8], &[u8]));
        visit(bytes(k, klen), bytes(v, vlen));
    }
}

/// The context pointer [`visit_entry`] expects, for a visitor that outlives the call
/// it is passed to.
#[inline(always)]
pub(crate) fn visit_ctx(visit: &mut &mut dyn FnMut(&[u8], &[u8])) -> *mut c_void {
    visit as *mut &mut dyn FnMut(&[u8], &[u8]) as *mut c_void
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
