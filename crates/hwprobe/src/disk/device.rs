//! A raw block device, probed read-only: opened `O_RDONLY | O_DIRECT` and never any other
//! way, so no code path of the disk probe can write to it. The device's facts the
//! durability check needs (rotational, write cache, what drives it) come from sysfs.

use crate::ProbeError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// A block device opened for direct reads only.
pub struct RawDevice {
    path: PathBuf,
    /// Read-only, O_DIRECT.
    pub file: File,
    /// Its size in bytes.
    pub size: u64,
}

impl RawDevice {
    /// Opens `path` read-only with O_DIRECT after checking it is a block device; anything
    /// else (a file, a directory, a character device) is refused with the reason.
    pub fn open(path: &Path) -> Result<RawDevice, ProbeError> {
        check_block_device(path)?;
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map_err(|e| ProbeError::Device {
                path: path.to_path_buf(),
                reason: match e.kind() {
                    std::io::ErrorKind::PermissionDenied => format!(
                        "cannot be opened read-only ({e}); reading a disk needs root or the \
                         disk group, and a container may not be allowed the device at all"
                    ),
                    _ => format!("cannot be opened read-only with O_DIRECT: {e}"),
                },
            })?;
        // SAFETY: a valid fd; SEEK_END on a block device returns its size in bytes.
        let end = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_END) };
        if end <= 0 {
            return Err(ProbeError::io(
                "reading the size of",
                path,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(RawDevice {
            path: path.to_path_buf(),
            file,
            size: end as u64,
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Refuses anything but a block device, before anything is opened.
pub fn check_block_device(path: &Path) -> Result<(), ProbeError> {
    let refuse = |reason: String| ProbeError::Device {
        path: path.to_path_buf(),
        reason,
    };
    let md = std::fs::metadata(path).map_err(|e| refuse(format!("cannot be read: {e}")))?;
    if !md.file_type().is_block_device() {
        return Err(refuse(
            "is not a block device; --device probes a disk such as /dev/nvme0n1 read-only. \
             To measure a filesystem, give --dir instead"
                .into(),
        ));
    }
    Ok(())
}

/// Blocks [`zero_blocks`] reads by default: enough to tell a device that was never
/// written from one that holds data, in a few milliseconds.
pub const ZERO_SAMPLES: u64 = 256;

/// How many of `samples` 4 KiB blocks, spread evenly over the first `size` bytes of `f`,
/// read as all zeros, and how many were read. A device whose blocks were never written
/// (or were trimmed) reads as zeros, and an SSD answers such reads from its mapping table
/// without touching flash, far faster than reads of data: the PostgreSQL deck's reason
/// to fill a drive before measuring it. Reads through an aligned buffer, so an O_DIRECT
/// handle works.
pub fn zero_blocks(f: &File, size: u64, samples: u64) -> std::io::Result<(u64, u64)> {
    const BLOCK: u64 = 4096;
    let blocks = size / BLOCK;
    let n = samples.min(blocks);
    let mut buf = super::file::AlignedBuf::new(BLOCK as usize, 0).map_err(std::io::Error::other)?;
    let mut zeros = 0;
    for i in 0..n {
        let off = (i * blocks / n.max(1)) * BLOCK;
        // SAFETY: the buffer holds BLOCK bytes, aligned for O_DIRECT.
        let got = unsafe {
            libc::pread(
                f.as_raw_fd(),
                buf.ptr_at(0).cast(),
                BLOCK as usize,
                off as libc::off_t,
            )
        };
        if got < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if buf.as_mut_slice()[..got as usize].iter().all(|b| *b == 0) {
            zeros += 1;
        }
    }
    Ok((zeros, n))
}

/// The note a raw device's sample of [`zero_blocks`] gives: `None` when it holds data.
pub fn zero_note(path: &Path, zeros: u64, n: u64) -> Option<String> {
    if n == 0 || zeros * 2 < n {
        return None;
    }
    Some(format!(
        "disk: {zeros} of {n} blocks sampled across {} read as zeros: most of its blocks were \
         never written (or were trimmed), and an SSD answers those reads from its mapping \
         table without touching flash, faster than reads of data; fill the device first \
         (e.g. fio --rw=write --bs=1m over all of it) so the reads measure the medium",
        path.display()
    ))
}

/// The kernel name of a block device node, e.g. `vda` for `/dev/vda` (following
/// symlinks such as `/dev/disk/by-id/...`).
pub fn kernel_name(path: &Path) -> Option<String> {
    let real = std::fs::canonicalize(path).ok()?;
    real.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// What sysfs says about a block device, for judging whether its commits can be durable.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SysfsFacts {
    /// The kernel name it was read for.
    pub name: String,
    /// `queue/rotational`.
    pub rotational: Option<bool>,
    /// `queue/write_cache`: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// The driver behind it: `virtio_blk`, `nvme`, `sd`, `loop`, … (`device/driver`).
    pub driver: Option<String>,
    /// `queue/logical_block_size`: the unit O_DIRECT requests must be a multiple of.
    pub logical_block_size: Option<u64>,
    /// `queue/read_ahead_kb`: how far the kernel reads ahead of buffered sequential reads.
    pub read_ahead_kb: Option<u64>,
}

/// Reads `/sys/class/block/<name>` (a partition's queue is its disk's).
pub fn sysfs_facts(name: &str) -> SysfsFacts {
    sysfs_facts_in(Path::new("/sys/class/block"), name)
}

/// [`sysfs_facts`] under another root, for tests.
pub fn sysfs_facts_in(root: &Path, name: &str) -> SysfsFacts {
    let mut dir = root.join(name);
    if dir.join("partition").exists() {
        if let Ok(real) = std::fs::canonicalize(&dir) {
            if let Some(parent) = real.parent() {
                dir = parent.to_path_buf();
            }
        }
    }
    let read = |p: &str| {
        std::fs::read_to_string(dir.join(p))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let driver = std::fs::read_link(dir.join("device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| {
            // Devices with no `device` link: loop, zram, device-mapper, md.
            ["loop", "zram", "dm-", "md", "nbd", "rbd"]
                .iter()
                .find(|p| name.starts_with(*p))
                .map(|p| p.trim_end_matches('-').to_string())
        });
    SysfsFacts {
        name: name.to_string(),
        rotational: read("queue/rotational").map(|v| v == "1"),
        write_cache: read("queue/write_cache"),
        driver,
        logical_block_size: read("queue/logical_block_size").and_then(|v| v.parse().ok()),
        read_ahead_kb: read("queue/read_ahead_kb").and_then(|v| v.parse().ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_files_directories_and_character_devices() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        for p in [f.as_path(), t.path(), Path::new("/dev/null")] {
            let e = RawDevice::open(p).err().unwrap().to_string();
            assert!(e.contains("is not a block device"), "{e}");
            assert!(e.starts_with("--device"), "{e}");
        }
        let e = RawDevice::open(&t.path().join("nope"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot be read"), "{e}");
    }

    #[test]
    fn blocks_never_written_read_as_zeros_and_are_said() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("dev");
        let f = std::fs::File::create(&p).unwrap();
        // 1 MiB sparse: 256 blocks, none written.
        f.set_len(1 << 20).unwrap();
        let (zeros, n) = zero_blocks(&std::fs::File::open(&p).unwrap(), 1 << 20, 64).unwrap();
        assert_eq!((zeros, n), (64, 64));
        assert!(zero_note(&p, zeros, n).unwrap().contains("never written"));
        // Data in the first three quarters: the sample sees it, and nothing is said.
        use std::os::unix::fs::FileExt;
        f.write_all_at(&vec![7u8; 3 << 18], 0).unwrap();
        let (zeros, n) = zero_blocks(&std::fs::File::open(&p).unwrap(), 1 << 20, 64).unwrap();
        assert_eq!((zeros, n), (16, 64));
        assert!(zero_note(&p, zeros, n).is_none());
    }

    #[test]
    fn sysfs_facts_read_the_queue_and_the_driver() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("sdb");
        std::fs::create_dir_all(d.join("queue")).unwrap();
        std::fs::create_dir_all(t.path().join("drivers/sd")).unwrap();
        std::fs::create_dir_all(d.join("device")).unwrap();
        std::os::unix::fs::symlink(t.path().join("drivers/sd"), d.join("device/driver")).unwrap();
        std::fs::write(d.join("queue/rotational"), "1\n").unwrap();
        std::fs::write(d.join("queue/write_cache"), "write back\n").unwrap();
        std::fs::write(d.join("queue/logical_block_size"), "4096\n").unwrap();
        let f = sysfs_facts_in(t.path(), "sdb");
        assert_eq!(f.logical_block_size, Some(4096));
        assert_eq!(f.rotational, Some(true));
        assert_eq!(f.write_cache.as_deref(), Some("write back"));
        assert_eq!(f.driver.as_deref(), Some("sd"));
        let f = sysfs_facts_in(t.path(), "loop3");
        assert_eq!(f.driver.as_deref(), Some("loop"));
        assert_eq!(f.rotational, None);
    }
}
