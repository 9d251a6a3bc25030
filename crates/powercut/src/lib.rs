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
//! - directory entries (create, mknod, mkdir, symlink, link, unlink, rmdir, rename) are
//!   volatile until their directory is fsynced. The rule: **after the cut, each
//!   directory holds the entries it had at its last fsync (or at the mount) if any entry
//!   of it changed since, and its entries as they are otherwise**; a file's own fsync
//!   makes its data durable, not its name. So a file created and fsynced whose
//!   directory was not fsynced is gone, an unsynced rename reverts (the old name is
//!   back, and the file it replaced with its synced data), an unsynced unlink is undone
//!   (the file is back with what was synced of it), an unsynced mkdir goes with
//!   everything below it. A rename touches two directories: each keeps or loses its
//!   side by its own fsync (a file renamed to another directory whose old directory
//!   alone was fsynced is in neither, as on a disk that wrote one of the two blocks).
//!   The source of the rule is POSIX fsync(2) and the Linux man page, which says it
//!   plainly: "Calling fsync() does not necessarily ensure that the entry in the
//!   directory containing the file has also reached disk. For that an explicit fsync()
//!   on a file descriptor for the directory is also needed." RocksDB's
//!   FaultInjectionTestFS models the same (at a simulated crash it deletes the files
//!   created since their directory's last sync), and the bug class is the one
//!   CrashMonkey (Mohan et al., OSDI '18) found in real filesystems and applications.
//!   ext4, XFS and btrfs in practice do more: an fsync of a newly created file commits
//!   its entry too (ext4's `ext4_sync_parent`, the log force of XFS and btrfs);
//!   [`Options::file_fsync_keeps_names`] models that instead, the default is the POSIX
//!   rule, the weaker promise an application can rely on;
//! - the entries change in the backing directory at once; the first change to a
//!   directory after its fsync records its entries (in memory), a removed file that a
//!   record names keeps a hard link in a hidden directory of the backing root
//!   (`.plumb-powercut-stash`, never shown through the mount), and the cut rebuilds the
//!   tree from the records (files hard-linked back by inode, directories made again
//!   with their mode and owner) and removes the stash;
//! - other metadata (chmod, chown, times) reaches the backing files at once;
//! - [`PowerCut::arm`] sets a crash point: at the N-th fsync-family call (fsync,
//!   fdatasync, fsyncdir, a write on an `O_SYNC`/`O_DSYNC` descriptor), rename or
//!   unlink, the call completes and then the filesystem freezes: every later request
//!   fails with EIO until the cut, so nothing after that point reaches the disk;
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

/// The calls a crash point counts: `--cut at=fsync:N` stops after the N-th of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointKind {
    /// fsync, fdatasync, fsyncdir, and each write on an `O_SYNC`/`O_DSYNC` descriptor:
    /// the moments an engine makes something durable.
    Fsync,
    /// rename (renameat2, any flags): how engines install a new file whole.
    Rename,
    /// unlink of a non-directory: how engines drop obsolete files.
    Unlink,
}

/// A crash point: the `n`-th call (from 1) of `kind` since the mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CrashPoint {
    /// Which calls are counted.
    pub kind: PointKind,
    /// The call after which the filesystem freezes (1 is the first).
    pub n: u64,
}

/// The calls of each kind served since the mount: a run without a crash point counts
/// the points a sweep then tries one by one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Points {
    /// fsync-family calls.
    pub fsyncs: u64,
    /// Renames.
    pub renames: u64,
    /// Unlinks.
    pub unlinks: u64,
}

impl Points {
    /// The count of `kind`.
    pub fn get(&self, kind: PointKind) -> u64 {
        match kind {
            PointKind::Fsync => self.fsyncs,
            PointKind::Rename => self.renames,
            PointKind::Unlink => self.unlinks,
        }
    }

    /// Counts one more call of `kind`; returns the new count.
    pub(crate) fn bump(&mut self, kind: PointKind) -> u64 {
        let c = match kind {
            PointKind::Fsync => &mut self.fsyncs,
            PointKind::Rename => &mut self.renames,
            PointKind::Unlink => &mut self.unlinks,
        };
        *c += 1;
        *c
    }
}

/// How a mount behaves, beyond the POSIX rule it defaults to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// A file's fsync (or fdatasync) also makes durable each of its names and each new
    /// directory on the way to it, as ext4, XFS and btrfs do in practice; off, only an
    /// fsync of the directory does (POSIX).
    pub file_fsync_keeps_names: bool,
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
    /// Directories whose entries changed since their last fsync, rebuilt as they were.
    pub dirs: u64,
    /// The calls of each kind served while mounted (the crash point's included).
    pub points: Points,
    /// Whether the armed crash point was reached (the filesystem was frozen).
    pub frozen: bool,
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
        PowerCut::mount_with(backing, mountpoint, Options::default())
    }

    /// Mounts as [`mount`](Self::mount) does, with `options`.
    pub fn mount_with(
        backing: &Path,
        mountpoint: &Path,
        options: Options,
    ) -> Result<PowerCut, PowerCutError> {
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
        let mut st = fs::State::new(backing.clone());
        st.file_fsync_keeps_names = options.file_fsync_keeps_names;
        let state = Arc::new(Mutex::new(st));
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

    /// Arms a crash point: after the `point.n`-th call of its kind completes, every
    /// request fails with EIO until the cut. Counts start at the mount, so arm before
    /// the process under test starts.
    pub fn arm(&self, point: CrashPoint) {
        self.lock().crash_at = Some(point);
    }

    /// Whether the armed crash point has been reached: the process under test can be
    /// killed and the power cut.
    pub fn frozen(&self) -> bool {
        self.lock().frozen
    }

    /// The calls of each kind served so far.
    pub fn points(&self) -> Points {
        self.lock().points
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, fs::State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Unsynced data now: (files, bytes in whole pages).
    pub fn pending(&self) -> (u64, u64) {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pending()
    }

    /// Writes every file's pending data to the backing directory and flushes it, and
    /// makes every directory entry durable, as `sync(1)` would: a setup step (a server's initdb run without fsync) made durable
    /// before the part under test begins.
    pub fn sync_all(&self) -> Result<(), PowerCutError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.sync_all().map_err(|err| PowerCutError::Sync {
            backing: self.backing.clone(),
            err,
        })
    }

    /// Cuts the power: every page and size no fsync reached is forgotten, every later
    /// request through the mount fails with EIO, every directory changed since its last
    /// fsync gets its entries back as they were then, and the mount goes. The backing
    /// directory then holds exactly what was synced.
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
            cut.map(|(files, bytes, dirs)| CutReport {
                files,
                bytes,
                syncs: st.syncs,
                dirs,
                points: st.points,
                frozen: st.frozen,
            })
        };
        let torn_error = cut.as_ref().err().map(|e| e.to_string());
        let report = cut.unwrap_or_default();
        let Some(session) = self.session.take() else {
            return Ok(report);
        };
        let unmounted = unmount(&self.mountpoint);
        if let Some(e) = torn_error {
            // Unmounted all the same; the tearing was not done in full.
            return Err(PowerCutError::Sync {
                backing: self.backing.clone(),
                err: std::io::Error::other(format!(
                    "tearing pages or restoring directory entries at the cut: {e}"
                )),
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
