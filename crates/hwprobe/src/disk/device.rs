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
    fn sysfs_facts_read_the_queue_and_the_driver() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("sdb");
        std::fs::create_dir_all(d.join("queue")).unwrap();
        std::fs::create_dir_all(t.path().join("drivers/sd")).unwrap();
        std::fs::create_dir_all(d.join("device")).unwrap();
        std::os::unix::fs::symlink(t.path().join("drivers/sd"), d.join("device/driver")).unwrap();
        std::fs::write(d.join("queue/rotational"), "1\n").unwrap();
        std::fs::write(d.join("queue/write_cache"), "write back\n").unwrap();
        let f = sysfs_facts_in(t.path(), "sdb");
        assert_eq!(f.rotational, Some(true));
        assert_eq!(f.write_cache.as_deref(), Some("write back"));
        assert_eq!(f.driver.as_deref(), Some("sd"));
        let f = sysfs_facts_in(t.path(), "loop3");
        assert_eq!(f.driver.as_deref(), Some("loop"));
        assert_eq!(f.rotational, None);
    }
}
