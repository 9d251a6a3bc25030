//! The probe file and its buffers: a file plumb creates (never an existing one) that is
//! removed when the guard drops, on success, error or Ctrl-C; and 4096-aligned buffers,
//! which O_DIRECT requires.

use crate::ProbeError;
use std::alloc::Layout;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// O_DIRECT alignment: the logical block size of every device plumb expects (4 KiB also
/// satisfies 512-byte devices).
pub const ALIGN: usize = 4096;

/// A heap buffer aligned to [`ALIGN`], allocated once per worker (never per IO).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is uniquely owned memory; moving it between threads is sound.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// `len` bytes (rounded up to [`ALIGN`]) filled with pseudo-random bytes, so a device
    /// that compresses or deduplicates cannot flatter the write figures.
    pub fn new(len: usize, seed: u64) -> Result<AlignedBuf, String> {
        let len = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(len, ALIGN).map_err(|e| e.to_string())?;
        // SAFETY: layout has non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        let ptr = NonNull::new(p).ok_or_else(|| format!("cannot allocate {len} bytes"))?;
        let mut b = AlignedBuf { ptr, layout };
        let mut rng = crate::timed::Rng::new(seed);
        for chunk in b.as_mut_slice().chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Ok(b)
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Always false: buffers hold at least one aligned block.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Pointer to byte `off`, for syscalls and io_uring.
    pub fn ptr_at(&mut self, off: usize) -> *mut u8 {
        debug_assert!(off < self.len());
        // SAFETY: off is within the allocation (callers index by slot × block size).
        unsafe { self.ptr.as_ptr().add(off) }
    }

    /// The bytes.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes, uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// The probe file: created new under the probe directory and deleted on drop.
pub struct ProbeFile {
    path: PathBuf,
    /// Opened with O_DIRECT, or `None` when the filesystem refuses O_DIRECT (tmpfs).
    pub direct: Option<File>,
    /// Opened without O_DIRECT: through the page cache.
    pub buffered: File,
    /// Its size in bytes.
    pub size: u64,
}

impl ProbeFile {
    /// Creates `plumb-probe-<pid>-<n>.dat` in `dir`, never reusing an existing file, and
    /// reserves `size` bytes with `posix_fallocate` so a full filesystem fails here rather
    /// than mid-measurement.
    pub fn create(dir: &Path, size: u64) -> Result<ProbeFile, ProbeError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = dir.join(format!("plumb-probe-{}-{nanos}.dat", std::process::id()));
        let buffered = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| ProbeError::io("creating", &path, e))?;
        // From here on the guard owns the path, so every early return removes it.
        let mut f = ProbeFile {
            path,
            direct: None,
            buffered,
            size,
        };
        // SAFETY: a valid fd; offsets within i64 (size is checked against free space).
        let rc = unsafe { libc::posix_fallocate(f.buffered.as_raw_fd(), 0, size as libc::off_t) };
        if rc != 0 && rc != libc::EOPNOTSUPP && rc != libc::EINVAL {
            return Err(ProbeError::io(
                "reserving space for",
                &f.path,
                std::io::Error::from_raw_os_error(rc),
            ));
        }
        f.direct = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&f.path)
            .ok();
        Ok(f)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ProbeFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Flushes everything written to the file so far to stable storage, through the device's
/// write cache (`fdatasync`). Run untimed before every step: on a disk with a write-back
/// cache (a VM's virtio disk over the host's page cache, an SSD's DRAM) the previous
/// step's writes are otherwise still draining, and the next step (a commit-rate step
/// above all) would measure that debt instead of the device. Returns how long it took.
pub fn settle(f: &File) -> std::io::Result<std::time::Duration> {
    let t = std::time::Instant::now();
    loop {
        // SAFETY: a valid fd.
        if unsafe { libc::fdatasync(f.as_raw_fd()) } == 0 {
            return Ok(t.elapsed());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Drops this file's clean pages from the page cache (no root needed) and sets the
/// readahead hint fio sets for the pattern, so buffered steps start cold. Dirty pages
/// stay: [`settle`] first.
pub fn drop_cache(f: &File, random: bool) {
    let fd = f.as_raw_fd();
    // SAFETY: plain syscalls on a valid fd; failures only make the cache warmer.
    unsafe {
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
        libc::posix_fadvise(
            fd,
            0,
            0,
            if random {
                libc::POSIX_FADV_RANDOM
            } else {
                libc::POSIX_FADV_SEQUENTIAL
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_random() {
        let mut b = AlignedBuf::new(5000, 1).unwrap();
        assert_eq!(b.len(), 8192);
        assert_eq!(b.ptr_at(0) as usize % ALIGN, 0);
        let s = b.as_mut_slice();
        assert!(s.iter().filter(|&&x| x == 0).count() < 200);
    }

    #[test]
    fn file_is_new_and_removed_on_drop() {
        let t = tempfile::tempdir().unwrap();
        let f = ProbeFile::create(t.path(), 1 << 20).unwrap();
        let p = f.path().to_path_buf();
        assert!(p.exists());
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
        drop(f);
        assert!(!p.exists());
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    }
}
