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

/// Buffers of at least this many bytes are placed in transparent huge pages.
pub const HUGE_MIN: usize = 1 << 20;
/// The x86-64 / arm64 transparent huge page size, the alignment huge buffers get.
const HUGE_PAGE: usize = 2 << 20;

/// A heap buffer aligned to [`ALIGN`], allocated once per worker (never per IO).
///
/// Buffers of [`HUGE_MIN`] or more (the 1 MiB sequential requests) are 2 MiB-aligned and
/// advised into a transparent huge page, so the request reaches the device as one
/// physically contiguous segment. In 4 KiB pages the same 1 MiB request is 256 segments
/// (more than a virtio disk's 254, so it is split in two); on the reference VM that costs
/// 2.5× the CPU per IO and a third of the throughput, and whether a plain heap buffer
/// happens to be contiguous varies run to run (bench/README.md, "plumb probe disk vs fio").
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is uniquely owned memory; moving it between threads is sound.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// `len` bytes (rounded up to [`ALIGN`], or to 2 MiB for huge buffers) filled with
    /// pseudo-random bytes, so a device that compresses or deduplicates cannot flatter
    /// the write figures.
    pub fn new(len: usize, seed: u64) -> Result<AlignedBuf, String> {
        let huge = len >= HUGE_MIN;
        let align = if huge { HUGE_PAGE } else { ALIGN };
        let len = len.max(1).div_ceil(align) * align;
        let layout = Layout::from_size_align(len, align).map_err(|e| e.to_string())?;
        // SAFETY: layout has non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        let ptr = NonNull::new(p).ok_or_else(|| format!("cannot allocate {len} bytes"))?;
        if huge {
            // Before the first touch, so the fault allocates a huge page. A kernel without
            // THP refuses; the buffer then stays in small pages ([`Self::huge_pages`]).
            // SAFETY: the range is this allocation.
            unsafe { libc::madvise(p.cast(), len, libc::MADV_HUGEPAGE) };
        }
        let mut b = AlignedBuf { ptr, layout };
        let mut rng = crate::rng::Rng::new(seed);
        for chunk in b.as_mut_slice().chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Ok(b)
    }

    /// Whether the buffer sits in transparent huge pages, from `/proc/self/smaps`; `None`
    /// when that is unreadable. Stored with each step: it explains a sequential figure.
    pub fn huge_pages(&self) -> Option<bool> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        anon_huge_kb(&smaps, self.ptr.as_ptr() as usize).map(|kb| kb > 0)
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

/// The `AnonHugePages` figure (kB) of the mapping in `smaps` that holds `addr`.
fn anon_huge_kb(smaps: &str, addr: usize) -> Option<u64> {
    let mut inside = false;
    for line in smaps.lines() {
        // A mapping's header starts with its range, "start-end perms ..." in hex.
        let range = line.split_once(' ').and_then(|(r, _)| r.split_once('-'));
        if let Some((Ok(a), Ok(b))) =
            range.map(|(a, b)| (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)))
        {
            inside = (a..b).contains(&addr);
        } else if let Some(v) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
            return v.trim().trim_end_matches("kB").trim().parse().ok();
        }
    }
    None
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
    fn huge_buffers_are_2mib_aligned_and_say_whether_they_got_huge_pages() {
        let mut b = AlignedBuf::new(HUGE_MIN, 1).unwrap();
        assert_eq!(b.len(), 2 << 20);
        assert_eq!(b.ptr_at(0) as usize % (2 << 20), 0);
        // Linux always has /proc/self/smaps, and it lists this mapping.
        assert!(b.huge_pages().is_some());
        assert_eq!(AlignedBuf::new(HUGE_MIN - 1, 1).unwrap().len(), HUGE_MIN);
    }

    #[test]
    fn smaps_lookup_reads_the_mapping_that_holds_the_address() {
        let smaps = "\
55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]
Size:                132 kB
AnonHugePages:         0 kB
7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
AnonHugePages:      2048 kB
VmFlags: rd wr mr mw me ac sd hg
7f0000400000-7f0000401000 r--p 00000000 fd:00 123                        /usr/lib/x.so
AnonHugePages:         0 kB
";
        assert_eq!(anon_huge_kb(smaps, 0x7f00_0020_0000), Some(2048));
        assert_eq!(anon_huge_kb(smaps, 0x55d0_c000_0010), Some(0));
        assert_eq!(anon_huge_kb(smaps, 0x7f00_0040_0000), Some(0));
        assert_eq!(anon_huge_kb(smaps, 0x1000), None);
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
