//! RocksDB reads through the C++ API db_bench uses (cpp/rocks_reader.cc): point reads
//! into reused pinned slots, batched multi-gets, and seeks.
//!
//! The C API pins a value only through a handle it allocates per read; db_bench keeps
//! one `PinnableSlice` and resets it. A cached readrandom does ~250K reads a second per
//! thread, so that malloc/free pair was ~1.5% of plumb's worker. Two slots let the
//! session keep the previous value pinned (and its lines prefetched) while the next
//! lookup runs, then check it. multireadrandom's batches reuse pinned slices too: the
//! crate's `batched_multi_get_cf_opt` built a result vector and a wrapper per value.
//! A seek gets a fresh iterator, as in db_bench, but not the crate's per-seek
//! `ReadOptions` and wrapper, nor an FFI call per key and value.

use std::os::raw::{c_char, c_int, c_void};
use std::ptr::NonNull;

use crate::ffi::{bytes, visit_ctx, visit_entry, VisitFn};
use plumb_core::{Result, TargetError, Visit, VisitBatch};

#[repr(C)]
struct RawReader {
    _private: [u8; 0],
}

extern "C" {
    fn plumb_rocks_reader_new(db: *mut c_void, cf: *mut c_void) -> *mut RawReader;
    fn plumb_rocks_reader_free(r: *mut RawReader);
    fn plumb_rocks_reader_get(
        r: *mut RawReader,
        slot: c_int,
        key: *const c_char,
        klen: usize,
        err: *mut *mut c_char,
    ) -> c_int;
    fn plumb_rocks_reader_value(r: *const RawReader, slot: c_int, len: *mut usize)
        -> *const c_char;
    fn plumb_rocks_reader_release(r: *mut RawReader, slot: c_int);
    fn plumb_rocks_reader_multi_get(
        r: *mut RawReader,
        n: usize,
        keys: *const *const c_char,
        klens: *const usize,
        vals: *mut *const c_char,
        vlens: *mut usize,
        err: *mut *mut c_char,
    ) -> c_int;
    fn plumb_rocks_reader_scan(
        r: *mut RawReader,
        start: *const c_char,
        slen: usize,
        nexts: usize,
        reverse: c_int,
        visit: VisitFn,
        ctx: *mut c_void,
        visited: *mut usize,
        err: *mut *mut c_char,
    ) -> c_int;
}

/// Asks the CPU to start loading `len` bytes at `p` into its cache, without waiting.
#[inline(always)]
pub(crate) fn prefetch(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        if len == 0 {
            return;
        }
        let mut off = 0;
        while off < len {
            // SAFETY: a prefetch never faults and has no architectural effect.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off) as *const i8) };
            off += 64;
        }
        // SAFETY: as above (the last line when `p` is not line-aligned).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(len - 1) as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// Which of the reader's two pinned values: one can be checked while the other is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    A = 0,
    B = 1,
}

impl Slot {
    /// The other slot.
    pub(crate) fn other(self) -> Slot {
        match self {
            Slot::A => Slot::B,
            Slot::B => Slot::A,
        }
    }
}

/// A per-session reader (gets, multi-gets, seeks) with default `ReadOptions`, as db_bench.
pub(crate) struct RocksReader {
    raw: NonNull<RawReader>,
    /// A multi-get batch's key pointers and lengths, and the values' (reused).
    key_ptrs: Vec<*const c_char>,
    key_lens: Vec<usize>,
    vals: Vec<*const c_char>,
    vlens: Vec<usize>,
}

impl RocksReader {
    /// A reader on `db`'s column family `cf`.
    ///
    /// # Safety
    /// `db` and `cf` must be live C API handles that outlive the reader.
    pub(crate) unsafe fn new(
        db: *mut librocksdb_sys::rocksdb_t,
        cf: *mut librocksdb_sys::rocksdb_column_family_handle_t,
    ) -> Result<Self> {
        // SAFETY: per the contract above; the shim only reads each handle's pointer.
        let raw = unsafe { plumb_rocks_reader_new(db as *mut c_void, cf as *mut c_void) };
        NonNull::new(raw)
            .map(|raw| RocksReader {
                raw,
                key_ptrs: Vec::new(),
                key_lens: Vec::new(),
                vals: Vec::new(),
                vlens: Vec::new(),
            })
            .ok_or_else(|| TargetError::engine(super::rocks::ENGINE, "out of memory"))
    }

    /// Looks `key` up into `slot`, unpinning what the slot held; `Ok(false)` when absent.
    #[inline]
    pub(crate) fn get(&mut self, slot: Slot, key: &[u8]) -> Result<bool> {
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: a live reader; the key outlives the call.
        let rc = unsafe {
            plumb_rocks_reader_get(
                self.raw.as_ptr(),
                slot as c_int,
                key.as_ptr() as *const c_char,
                key.len(),
                &mut err,
            )
        };
        match rc {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(engine_error(err, "Get failed")),
        }
    }

    /// The value `slot` holds (empty when released); borrowing the reader keeps it pinned.
    #[inline]
    pub(crate) fn value(&self, slot: Slot) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: a live reader; the slice stays valid until the slot is reused or
        // released, both of which need `&mut self`.
        unsafe {
            bytes(
                plumb_rocks_reader_value(self.raw.as_ptr(), slot as c_int, &mut len),
                len,
            )
        }
    }

    /// Looks up a batch with the batched `DB::MultiGet`, as db_bench's
    /// `--multiread_batched`, and visits each key's value (`None` when absent) while the
    /// batch is pinned. No allocation once the largest batch has been seen.
    pub(crate) fn multi_get(&mut self, keys: &[Vec<u8>], visit: VisitBatch) -> Result<()> {
        let n = keys.len();
        self.key_ptrs.clear();
        self.key_lens.clear();
        for k in keys {
            self.key_ptrs.push(k.as_ptr() as *const c_char);
            self.key_lens.push(k.len());
        }
        self.vals.clear();
        self.vals.resize(n, std::ptr::null());
        self.vlens.clear();
        self.vlens.resize(n, 0);
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: a live reader; every array holds `n` entries, and the keys outlive
        // the call.
        let rc = unsafe {
            plumb_rocks_reader_multi_get(
                self.raw.as_ptr(),
                n,
                self.key_ptrs.as_ptr(),
                self.key_lens.as_ptr(),
                self.vals.as_mut_ptr(),
                self.vlens.as_mut_ptr(),
                &mut err,
            )
        };
        if rc != 0 {
            return Err(engine_error(err, "MultiGet failed"));
        }
        // RocksDB compared keys only; the values' lines are still cold. Ask for all of
        // them before checking the first, so their misses overlap.
        for (&p, &len) in self.vals.iter().zip(&self.vlens) {
            prefetch(p as *const u8, if p.is_null() { 0 } else { len });
        }
        for (i, (&p, &len)) in self.vals.iter().zip(&self.vlens).enumerate() {
            if p.is_null() {
                visit(i, None);
            } else {
                // SAFETY: the shim pinned this value until the next batch, which needs
                // `&mut self`.
                visit(
                    i,
                    Some(unsafe { std::slice::from_raw_parts(p as *const u8, len) }),
                );
            }
        }
        Ok(())
    }

    /// One seek (`SeekForPrev` when `reverse`) on a fresh iterator plus up to `nexts`
    /// steps, as db_bench's seekrandom; returns the entries visited.
    pub(crate) fn scan(
        &mut self,
        start: &[u8],
        nexts: usize,
        reverse: bool,
        mut visit: Visit,
    ) -> Result<usize> {
        let mut visited = 0usize;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: a live reader; `visit` outlives the call and `visit_entry` is the
        // only user of the context pointer.
        let rc = unsafe {
            plumb_rocks_reader_scan(
                self.raw.as_ptr(),
                start.as_ptr() as *const c_char,
                start.len(),
                nexts,
                c_int::from(reverse),
                visit_entry,
                visit_ctx(&mut visit),
                &mut visited,
                &mut err,
            )
        };
        if rc != 0 {
            return Err(engine_error(err, "scan failed"));
        }
        Ok(visited)
    }

    /// Unpins `slot`'s value so its block can be evicted.
    #[inline]
    pub(crate) fn release(&mut self, slot: Slot) {
        // SAFETY: a live reader.
        unsafe { plumb_rocks_reader_release(self.raw.as_ptr(), slot as c_int) }
    }
}

/// The shim's error message as an engine error (`fallback` if it could not allocate one).
fn engine_error(err: *mut c_char, fallback: &str) -> TargetError {
    if err.is_null() {
        return TargetError::engine(super::rocks::ENGINE, fallback);
    }
    // SAFETY: the shim set a message it malloc'd; taken once.
    unsafe { super::rocks::take_error(err) }
}

impl Drop for RocksReader {
    fn drop(&mut self) {
        // SAFETY: created by plumb_rocks_reader_new, freed once.
        unsafe { plumb_rocks_reader_free(self.raw.as_ptr()) }
    }
}
