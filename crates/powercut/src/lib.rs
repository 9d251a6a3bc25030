//! A simulated power cut for durability checks.
//!
//! Killing a process (SIGKILL) cannot show what a power cut loses: the OS keeps what the
//! process wrote and writes it out later, fsync or not. [`PowerCut`] mounts a small FUSE
//! filesystem (the idea of Jepsen's LazyFS) over a backing directory: a process works
//! in the mount as on any filesystem, but the file data it writes waits in this
//! process's memory until it fsyncs the file; [`PowerCut::cut`] then forgets everything
//! not synced and unmounts, so the backing directory holds what a machine that lost
//! power would find on its disk.
//!
//! The model, and its limits:
//! - file data (write, truncate and other size changes, fallocate) is kept per inode as
//!   4 KiB pages plus a pending size, visible to reads through the mount; `fsync` and
//!   `fdatasync` of a file (and each write on an `O_SYNC`/`O_DSYNC` descriptor) write its
//!   pages and size to the backing file and fsync that;
//! - metadata (create, mkdir, unlink, rename, link, symlink, chmod, chown, times) reaches
//!   the backing directory at once, as on a journaled filesystem that orders metadata: a
//!   renamed file whose data was never synced is there after the cut, empty or short;
//!   directory fsync has nothing left to do;
//! - [`PowerCut::cut`] drops every unsynced page; [`PowerCut::cut_torn`] first writes a
//!   random part of them, whole pages or single 512-byte sectors, as an OS that had
//!   written some of them back would leave them;
//! - `O_DIRECT` is treated as buffered: its writes wait like any other;
//! - the kernel's FUSE writeback cache stays off, so every write(2) reaches the filesystem
//!   at once; shared writable mmap works (no direct_io), its pages reach the filesystem
//!   when the kernel writes them back or on msync, and are lost at the cut otherwise;
//! - a clean unmount (dropping a [`PowerCut`]) is a cut too: nothing is synced on the
//!   way out.
//!
//! Mounting needs root: the mount is made with mount(2) on /dev/fuse, no libfuse and no
//! fusermount. The session runs on a thread of this process, so this process must stay
//! alive while others use the mount (a durability check's writer, a database server).

#![warn(missing_docs)]

mod fs;
pub mod overlay;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why mounting, syncing or cutting failed.
#[derive(Debug, thiserror::Error)]
pub enum PowerCutError {
    /// The FUSE mount could not be made.
    #[error(
        "mounting the power-cut filesystem on {mountpoint} (backing {backing}): {err}; \
         it needs root and /dev/fuse (modprobe fuse)"
    )]
    Mount {
        /// Where the mount was to be.
        mountpoint: PathBuf,
        /// The directory it was to pass through to.
        backing: PathBuf,
        /// What the kernel or fuser said.
        err: std::io::Error,
    },
    /// A directory given was not usable.
    #[error("{path}: {err}")]
    Path {
        /// The directory.
        path: PathBuf,
        /// What went wrong.
        err: std::io::Error,
    },
    /// Writing pending data to the backing directory failed.
    #[error("syncing pending data to {backing}: {err}")]
    Sync {
        /// The backing directory.
        backing: PathBuf,
        /// What the backing filesystem said.
        err: std::io::Error,
    },
    /// The mount could not be removed.
    #[error("unmounting {mountpoint}: {err}")]
    Unmount {
        /// The mount point.
        mountpoint: PathBuf,
        /// What the kernel said.
        err: std::io::Error,
    },
}

/// What a cut dropped: the measure of what unsynced data there was at the moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CutReport {
    /// Files with unsynced data or size.
    pub files: u64,
    /// Unsynced bytes, in whole pages.
    pub bytes: u64,
    /// fsync calls the filesystem served while mounted (fdatasync and O_SYNC writes
    /// included).
    pub syncs: u64,
}

/// A mounted power-cut filesystem. Dropping it cuts the power (unsynced data is lost)
/// and unmounts, also on an error path, so no stale mount is left behind.
pub struct PowerCut {
    session: Option<fuser::BackgroundSession>,
    state: Arc<Mutex<fs::State>>,
    mountpoint: PathBuf,
    backing: PathBuf,
}

impl std::fmt::Debug for PowerCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PowerCut")
            .field("mountpoint", &self.mountpoint)
            .field("backing", &self.backing)
            .finish()
    }
}

impl PowerCut {
    /// Mounts the filesystem on `mountpoint` (an existing, empty directory), passing
    /// through to `backing` (an existing directory; what is in it stays and is seen
    /// through the mount). Any user may use the mount, with the permissions the
    /// backing files have (a server that runs as its own user works in it).
    pub fn mount(backing: &Path, mountpoint: &Path) -> Result<PowerCut, PowerCutError> {
        let canon = |p: &Path| {
            p.canonicalize().map_err(|err| PowerCutError::Path {
                path: p.to_path_buf(),
                err,
            })
        };
        let (backing, mountpoint) = (canon(backing)?, canon(mountpoint)?);
        if backing.starts_with(&mountpoint) {
            return Err(PowerCutError::Path {
                path: backing,
                err: std::io::Error::other("the backing directory is inside the mount point"),
            });
        }
        let state = Arc::new(Mutex::new(fs::State::default()));
        let config = {
            let mut c = fuser::Config::default();
            c.mount_options = vec![
                fuser::MountOption::FSName(FSNAME.into()),
                fuser::MountOption::DefaultPermissions,
            ];
            c.acl = fuser::SessionACL::All;
            c
        };
        let session = fuser::spawn_mount(
            fs::PowerFs::new(backing.clone(), state.clone()),
            &mountpoint,
            &config,
        )
        .map_err(|err| PowerCutError::Mount {
            mountpoint: mountpoint.clone(),
            backing: backing.clone(),
            err,
        })?;
        Ok(PowerCut {
            session: Some(session),
            state,
            mountpoint,
            backing,
        })
    }

    /// Where the filesystem is mounted: the directory to give the engine or server.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// The backing directory: after [`cut`](Self::cut), what survived the power cut.
    pub fn backing(&self) -> &Path {
        &self.backing
    }

    /// Unsynced data now: (files, bytes in whole pages).
    pub fn pending(&self) -> (u64, u64) {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pending()
    }

    /// Writes every file's pending data to the backing directory and flushes it, as
    /// `sync(1)` would: a setup step (a server's initdb run without fsync) made durable
    /// before the part under test begins.
    pub fn sync_all(&self) -> Result<(), PowerCutError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.sync_all().map_err(|err| PowerCutError::Sync {
            backing: self.backing.clone(),
            err,
        })
    }

    /// Cuts the power: every page and size no fsync reached is forgotten, every later
    /// request through the mount fails with EIO, and the mount goes. The backing
    /// directory then holds exactly what was synced (and all metadata).
    pub fn cut(mut self) -> Result<CutReport, PowerCutError> {
        self.cut_and_unmount(None)
    }

    /// Cuts the power as [`cut`](Self::cut) does, but first writes to the backing
    /// directory what the OS may have written back before the power went: each unsynced
    /// page independently lost, written whole, or written in part (some of its 512-byte
    /// sectors), and each unsynced truncate or growth done or not, chosen by `seed`.
    /// Synced data is never touched: an engine that syncs what it acknowledges must
    /// survive any such mix, and one that trusts unsynced writes to arrive whole or in
    /// order may not.
    pub fn cut_torn(mut self, seed: u64) -> Result<CutReport, PowerCutError> {
        self.cut_and_unmount(Some(seed))
    }

    fn cut_and_unmount(&mut self, torn: Option<u64>) -> Result<CutReport, PowerCutError> {
        let cut = {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let cut = st.cut(torn);
            cut.map(|(files, bytes)| (files, bytes, st.syncs))
        };
        let torn_error = cut.as_ref().err().map(|e| e.to_string());
        let (files, bytes, syncs) = cut.unwrap_or_default();
        let report = CutReport {
            files,
            bytes,
            syncs,
        };
        let Some(session) = self.session.take() else {
            return Ok(report);
        };
        let unmounted = unmount(&self.mountpoint);
        if let Some(e) = torn_error {
            // Unmounted all the same; the tearing was not done in full.
            return Err(PowerCutError::Sync {
                backing: self.backing.clone(),
                err: std::io::Error::other(format!("tearing pages at the cut: {e}")),
            });
        }
        match unmounted {
            // Gone: the session's thread sees the device close and ends.
            Ok(true) => {
                session.join().map_err(|err| PowerCutError::Unmount {
                    mountpoint: self.mountpoint.clone(),
                    err,
                })?;
                Ok(report)
            }
            // Detached while something still holds it: the thread ends when the
            // aborted connection is released; it is not waited for.
            Ok(false) => {
                drop(session);
                Ok(report)
            }
            Err(err) => {
                drop(session);
                Err(PowerCutError::Unmount {
                    mountpoint: self.mountpoint.clone(),
                    err,
                })
            }
        }
    }
}

impl Drop for PowerCut {
    fn drop(&mut self) {
        let _ = self.cut_and_unmount(None);
    }
}

/// Unmounts a FUSE mount this process serves. Returns true when it went at once; when
/// something still has files open in it (a process not yet reaped), the connection is
/// aborted (every request fails) and the mount detached, and false is returned.
fn unmount(mountpoint: &Path) -> std::io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let c = std::ffi::CString::new(mountpoint.as_os_str().as_bytes())?;
    let dev = std::fs::metadata(mountpoint).map(|m| m.dev()).ok();
    // SAFETY: a valid C string.
    if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EBUSY) {
        return Err(e);
    }
    if let Some(dev) = dev {
        // fusectl: the connection's directory is named by the mount's device number.
        let abort = format!("/sys/fs/fuse/connections/{dev}/abort");
        let _ = std::fs::write(abort, "1");
    }
    // SAFETY: a valid C string.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 {
        return Ok(false);
    }
    Err(std::io::Error::last_os_error())
}

/// The source power-cut mounts show in /proc/self/mountinfo (their type is `fuse`).
const FSNAME: &str = "plumb-powercut";

/// Unmounts the power-cut mounts under `dir` whose serving process is gone (a plumb
/// killed during a trial): such a mount answers everything with ENOTCONN and keeps its
/// directory from being removed. Live mounts (another plumb's) are left alone. Returns
/// the mount points it removed.
pub fn sweep_stale(dir: &Path) -> Vec<PathBuf> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut gone = Vec::new();
    for line in info.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut fields = right.split(' ');
        let (fstype, source) = (fields.next(), fields.next());
        if !fstype.is_some_and(|t| t.starts_with("fuse")) || source != Some(FSNAME) {
            continue;
        }
        let Some(mp) = left.split(' ').nth(4).map(unescape) else {
            continue;
        };
        let mp = PathBuf::from(mp);
        if !mp.starts_with(&dir) {
            continue;
        }
        let dead = std::fs::metadata(&mp)
            .err()
            .is_some_and(|e| e.raw_os_error() == Some(libc::ENOTCONN));
        if !dead {
            continue;
        }
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(mp.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: a valid C string.
        if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 {
            gone.push(mp);
        }
    }
    gone
}

/// A mountinfo path field with its octal escapes (`\040` for a space) undone.
fn unescape(s: &str) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).and_then(|d| {
            std::str::from_utf8(d)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        });
        match (b[i], oct) {
            (b'\\', Some(v)) => {
                out.push(v);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    std::ffi::OsString::from_vec(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(super::unescape(r"/var/tmp/a\040b\134c"), "/var/tmp/a b\\c");
        assert_eq!(super::unescape(r"/x\04"), r"/x\04");
    }
}
