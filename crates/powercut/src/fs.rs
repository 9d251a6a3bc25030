//! The FUSE side: a passthrough over the backing directory in which file data waits in
//! an [`Overlay`] per file until an fsync, and directory entries change in the backing
//! directory at once but are undone at the cut unless their directory was fsynced: the
//! first change to a directory after its last fsync records its entries as they were
//! (what a disk would still hold), a removed node such a record names is kept alive by a
//! hard link in a hidden stash, and the cut rebuilds every recorded directory from its
//! record.
//!
//! Inode numbers are the backing files' own (the root is 1), so hard links share one
//! overlay; each inode remembers the backing paths it was reached by, kept current
//! through renames and unlinks (every change goes through this filesystem while it is
//! mounted).

use crate::overlay::Overlay;
use crate::{CrashPoint, PointKind, Points};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{CString, OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirEntryExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the kernel may keep names and attributes: everything changes through this
/// filesystem, so the kernel's copy stays right.
const TTL: Duration = Duration::from_secs(1);

/// A file with a backing descriptor and (maybe) pending data.
#[derive(Debug)]
struct OpenFile {
    file: File,
    overlay: Overlay,
    /// Open handles on it.
    handles: u32,
    /// Its last name is gone: the data goes with the last handle.
    unlinked: bool,
}

/// An open handle: the inode and whether each write must be synced (O_SYNC, O_DSYNC).
#[derive(Debug)]
struct Handle {
    ino: u64,
    sync: bool,
}

/// The hidden directory in the backing root that keeps alive the files a durable
/// directory record still names after their last name went (a hard link each, named by
/// inode); it never shows through the mount and is gone after the cut.
pub(crate) const STASH: &str = ".plumb-powercut-stash";

/// A directory's entries: name → (inode, is a directory).
type Listing = BTreeMap<OsString, (u64, bool)>;

/// A node of the tree the cut rebuilds: a file (any node but a directory) by inode, or a
/// directory with its entries.
enum Node {
    Leaf(u64),
    Dir(u64, Vec<(OsString, Node)>),
}

/// Everything the filesystem and its owner share.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// The backing directory (absolute).
    pub(crate) backing: PathBuf,
    /// The entries each directory changed since its last fsync had at that fsync (or at
    /// the mount), by the directory's inode (the root is 1): what survives the cut.
    /// A directory not here has had no change since, so its entries are durable.
    durable: HashMap<u64, Listing>,
    /// Inodes kept in the stash (files a record names whose last name went).
    stashed: HashSet<u64>,
    /// Directories a record names that were removed: their mode, uid and gid, to make
    /// them again at the cut.
    gone_dirs: HashMap<u64, (u32, u32, u32)>,
    /// A file's fsync also makes its names durable (ext4's and XFS's practice), not
    /// only a directory fsync (POSIX's rule).
    pub(crate) file_fsync_keeps_names: bool,
    /// Calls of each kind served, for crash points.
    pub(crate) points: Points,
    /// Where to freeze: after this call completes, every later one fails.
    pub(crate) crash_at: Option<CrashPoint>,
    /// The crash point was reached: every request fails with EIO until the cut.
    pub(crate) frozen: bool,
    /// Backing paths (relative to the backing directory) by inode.
    paths: HashMap<u64, Vec<PathBuf>>,
    files: HashMap<u64, OpenFile>,
    handles: HashMap<u64, Handle>,
    dirs: HashMap<u64, Vec<(u64, FileType, OsString)>>,
    next_fh: u64,
    /// The power is off: every request fails, nothing reaches the backing directory.
    cut: bool,
    /// fsync and fdatasync calls that wrote to the backing directory.
    pub(crate) syncs: u64,
}

/// The entries of the backing directory at `path` (the stash left out at the root).
fn read_listing(path: &Path, root: bool) -> io::Result<Listing> {
    let mut l = Listing::new();
    for e in std::fs::read_dir(path)? {
        let e = e?;
        if root && e.file_name() == STASH {
            continue;
        }
        l.insert(e.file_name(), (e.ino(), e.file_type()?.is_dir()));
    }
    Ok(l)
}

/// Every node under `dir` by inode (the first path found for each), the stash included.
fn index(dir: &Path, out: &mut HashMap<u64, PathBuf>) -> io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let path = e.path();
        if e.file_type()?.is_dir() {
            index(&path, out)?;
        }
        out.entry(e.ino()).or_insert(path);
    }
    Ok(())
}

/// Makes `nodes` under `into`: files as hard links to their inodes wherever they are now
/// (`index`), directories anew with the mode and owner they had.
fn materialize(
    nodes: &[(OsString, Node)],
    into: &Path,
    index: &HashMap<u64, PathBuf>,
    gone_dirs: &HashMap<u64, (u32, u32, u32)>,
) -> io::Result<()> {
    for (name, node) in nodes {
        let dst = into.join(name);
        match node {
            Node::Leaf(ino) => {
                // A node no record keeps alive has nothing left to link (never happens:
                // every removal a record names is stashed).
                if let Some(src) = index.get(ino) {
                    std::fs::hard_link(src, &dst)?;
                }
            }
            Node::Dir(ino, kids) => {
                std::fs::create_dir(&dst)?;
                let attrs = match index.get(ino) {
                    Some(p) => {
                        let m = std::fs::symlink_metadata(p)?;
                        Some((m.mode(), m.uid(), m.gid()))
                    }
                    None => gone_dirs.get(ino).copied(),
                };
                if let Some((mode, uid, gid)) = attrs {
                    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode & 0o7777))?;
                    std::os::unix::fs::lchown(&dst, Some(uid), Some(gid))?;
                }
                materialize(kids, &dst, index, gone_dirs)?;
            }
        }
    }
    Ok(())
}

impl State {
    /// The state of a mount over `backing`.
    pub(crate) fn new(backing: PathBuf) -> State {
        State {
            backing,
            ..State::default()
        }
    }

    /// Counts a call of `kind`; at the armed crash point the power-cut filesystem
    /// freezes (the call itself has completed).
    pub(crate) fn passed(&mut self, kind: PointKind) {
        let n = self.points.bump(kind);
        if self.crash_at == Some(CrashPoint { kind, n }) {
            self.frozen = true;
        }
    }

    /// The backing path of the directory `key` (1: the root), while mounted.
    fn dir_path(&self, key: u64) -> Option<PathBuf> {
        if key == INodeNo::ROOT.0 {
            return Some(self.backing.clone());
        }
        self.paths
            .get(&key)
            .and_then(|v| v.first())
            .map(|r| self.backing.join(r))
    }

    /// Directory `key` is about to change: its entries now are what a disk holds until
    /// its next fsync, recorded unless a change since its last fsync recorded them.
    pub(crate) fn touch_dir(&mut self, key: u64) -> io::Result<()> {
        if self.durable.contains_key(&key) {
            return Ok(());
        }
        let Some(path) = self.dir_path(key) else {
            return Ok(());
        };
        let l = read_listing(&path, key == INodeNo::ROOT.0)?;
        self.durable.insert(key, l);
        Ok(())
    }

    /// Whether a record names inode `ino`.
    fn recorded(&self, ino: u64) -> bool {
        self.durable
            .values()
            .any(|l| l.values().any(|&(i, _)| i == ino))
    }

    /// The node at `path` (`m`) is about to lose a name: if a record names it, it is
    /// kept (a file by a hard link in the stash, a directory by its attributes) so the
    /// cut can bring it back.
    pub(crate) fn keep_removed(&mut self, path: &Path, m: &Metadata) -> io::Result<()> {
        let ino = m.ino();
        if !self.recorded(ino) {
            return Ok(());
        }
        if m.is_dir() {
            self.gone_dirs.insert(ino, (m.mode(), m.uid(), m.gid()));
        } else if !self.stashed.contains(&ino) {
            let stash = self.backing.join(STASH);
            match std::fs::create_dir(&stash) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
            std::fs::hard_link(path, stash.join(ino.to_string()))?;
            self.stashed.insert(ino);
        }
        Ok(())
    }

    /// Directory `key` was fsynced: its entries now are durable; what the stash kept for
    /// its record alone goes.
    pub(crate) fn dir_synced(&mut self, key: u64) {
        if self.durable.remove(&key).is_none() {
            return;
        }
        let referenced: HashSet<u64> = self
            .durable
            .values()
            .flat_map(|l| l.values().map(|&(i, _)| i))
            .collect();
        let stash = self.backing.join(STASH);
        self.stashed.retain(|ino| {
            let keep = referenced.contains(ino);
            if !keep {
                let _ = std::fs::remove_file(stash.join(ino.to_string()));
            }
            keep
        });
        self.gone_dirs.retain(|ino, _| referenced.contains(ino));
    }

    /// A file (or a directory, `dir`) was fsynced and the filesystem keeps names with
    /// their node's fsync (ext4's practice): each of its names, and each new directory
    /// on the way to it, is made durable in the record of its directory.
    pub(crate) fn file_synced(&mut self, ino: u64, dir: bool) {
        if !self.file_fsync_keeps_names || ino == INodeNo::ROOT.0 {
            return;
        }
        let rels = self.paths.get(&ino).cloned().unwrap_or_default();
        for rel in rels {
            let mut child = (ino, dir, rel.clone());
            while let Some(name) = child.2.file_name().map(|n| n.to_os_string()) {
                let parent_rel = child.2.parent().map(Path::to_path_buf).unwrap_or_default();
                let parent = if parent_rel.as_os_str().is_empty() {
                    INodeNo::ROOT.0
                } else {
                    match std::fs::symlink_metadata(self.backing.join(&parent_rel)) {
                        Ok(m) => m.ino(),
                        Err(_) => break,
                    }
                };
                let Some(l) = self.durable.get_mut(&parent) else {
                    break; // unchanged since its last fsync: durable, and so its path
                };
                let new = l.get(&name) != Some(&(child.0, child.1));
                l.insert(name, (child.0, child.1));
                if !new || parent == INodeNo::ROOT.0 {
                    break;
                }
                child = (parent, true, parent_rel);
            }
        }
    }

    /// At the cut: every directory changed since its last fsync gets back the entries its
    /// record holds (files by their inodes, wherever they are now), everything else is as
    /// it is; the stash goes. Returns the directories whose changes were undone.
    fn restore_names(&mut self) -> io::Result<u64> {
        let stash = self.backing.join(STASH);
        let undone = self.durable.len() as u64;
        if !self.durable.is_empty() {
            let mut idx = HashMap::new();
            index(&self.backing, &mut idx)?;
            let mut seen = HashSet::new();
            let tree = self.tree(INodeNo::ROOT.0, Some(&self.backing), &idx, &mut seen)?;
            match std::fs::create_dir(&stash) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
            let (rebuild, old) = (stash.join("rebuild"), stash.join("old"));
            std::fs::create_dir(&rebuild)?;
            std::fs::create_dir(&old)?;
            materialize(&tree, &rebuild, &idx, &self.gone_dirs)?;
            for e in std::fs::read_dir(&self.backing)? {
                let e = e?;
                if e.file_name() != STASH {
                    std::fs::rename(e.path(), old.join(e.file_name()))?;
                }
            }
            for e in std::fs::read_dir(&rebuild)? {
                let e = e?;
                std::fs::rename(e.path(), self.backing.join(e.file_name()))?;
            }
        }
        match std::fs::remove_dir_all(&stash) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.durable.clear();
        self.stashed.clear();
        self.gone_dirs.clear();
        Ok(undone)
    }

    /// The durable entries of directory `key` (now at `path`, if it still is anywhere),
    /// each directory below once (`seen`: a directory two records name is made where
    /// the first names it).
    fn tree(
        &self,
        key: u64,
        path: Option<&Path>,
        idx: &HashMap<u64, PathBuf>,
        seen: &mut HashSet<u64>,
    ) -> io::Result<Vec<(OsString, Node)>> {
        let listing = match (self.durable.get(&key), path) {
            (Some(l), _) => l.clone(),
            (None, Some(p)) => read_listing(p, key == INodeNo::ROOT.0)?,
            (None, None) => Listing::new(),
        };
        let mut out = Vec::with_capacity(listing.len());
        for (name, (ino, dir)) in listing {
            if !dir {
                out.push((name, Node::Leaf(ino)));
            } else if seen.insert(ino) {
                let kids = self.tree(ino, idx.get(&ino).map(PathBuf::as_path), idx, seen)?;
                out.push((name, Node::Dir(ino, kids)));
            }
        }
        Ok(out)
    }

    /// Bytes and files with data no fsync has reached.
    pub(crate) fn pending(&self) -> (u64, u64) {
        let dirty = self.files.values().filter(|f| !f.overlay.is_clean());
        dirty.fold((0, 0), |(files, bytes), f| {
            (files + 1, bytes + f.overlay.pending_bytes())
        })
    }

    /// The cut: forgets every pending page and size (after writing a random part of
    /// them, torn at sector boundaries, with `torn`'s seed); from now on every request
    /// fails.
    pub(crate) fn cut(&mut self, torn: Option<u64>) -> io::Result<(u64, u64, u64)> {
        let (files, bytes) = self.pending();
        self.cut = true;
        if let Some(seed) = torn {
            let mut x = seed | 1;
            let mut rand = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            for f in self.files.values() {
                f.overlay.tear(&f.file, &mut rand)?;
            }
        }
        self.files.clear();
        self.handles.clear();
        self.dirs.clear();
        let dirs = self.restore_names()?;
        Ok((files, bytes, dirs))
    }

    /// Writes every pending page and size to the backing files and flushes them, as
    /// `sync(1)` would.
    pub(crate) fn sync_all(&mut self) -> io::Result<()> {
        for f in self.files.values_mut() {
            if !f.overlay.is_clean() {
                f.overlay.sync(&f.file, false)?;
            }
        }
        // A clean file nobody has open needs no descriptor.
        self.files.retain(|_, f| f.handles > 0);
        // Every directory entry is durable too; the stash has nothing left to keep.
        self.durable.clear();
        self.stashed.clear();
        self.gone_dirs.clear();
        match std::fs::remove_dir_all(self.backing.join(STASH)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// What a setattr asks to change: each field given is set, the others are left alone.
struct AttrChange {
    mode: Option<u32>,
    uid: Option<u32>,
    gid: Option<u32>,
    size: Option<u64>,
    atime: Option<TimeOrNow>,
    mtime: Option<TimeOrNow>,
}

/// The filesystem the FUSE session serves.
pub(crate) struct PowerFs {
    backing: PathBuf,
    state: Arc<Mutex<State>>,
}

fn errno(e: io::Error) -> Errno {
    Errno::from(e)
}

fn cstr(p: &Path) -> Result<CString, Errno> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Errno::EINVAL)
}

fn time(secs: i64, nsecs: i64) -> SystemTime {
    if secs < 0 {
        return UNIX_EPOCH;
    }
    UNIX_EPOCH + Duration::new(secs as u64, nsecs.clamp(0, 999_999_999) as u32)
}

fn kind(mode: u32) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFBLK => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

fn attr(ino: u64, m: &Metadata, size: Option<u64>) -> FileAttr {
    FileAttr {
        ino: INodeNo(ino),
        size: size.unwrap_or(m.size()),
        blocks: m.blocks(),
        atime: time(m.atime(), m.atime_nsec()),
        mtime: time(m.mtime(), m.mtime_nsec()),
        ctime: time(m.ctime(), m.ctime_nsec()),
        crtime: UNIX_EPOCH,
        kind: kind(m.mode()),
        perm: (m.mode() & 0o7777) as u16,
        nlink: m.nlink() as u32,
        uid: m.uid(),
        gid: m.gid(),
        rdev: m.rdev() as u32,
        blksize: 4096,
        flags: 0,
    }
}

/// Gives a new node to the user who asked for it (the daemon runs as root).
fn own(path: &Path, req: &Request) -> Result<(), Errno> {
    std::os::unix::fs::lchown(path, Some(req.uid()), Some(req.gid())).map_err(errno)
}

/// Sets exact permission bits (the daemon's own umask must not apply).
fn chmod(path: &Path, mode: u32) -> Result<(), Errno> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o7777)).map_err(errno)
}

/// Replaces a path's prefix `from` with `to`, if it has it.
fn moved(p: &Path, from: &Path, to: &Path) -> Option<PathBuf> {
    p.strip_prefix(from).ok().map(|rest| {
        if rest.as_os_str().is_empty() {
            to.to_path_buf()
        } else {
            to.join(rest)
        }
    })
}

impl PowerFs {
    pub(crate) fn new(backing: PathBuf, state: Arc<Mutex<State>>) -> PowerFs {
        PowerFs { backing, state }
    }

    /// The state, or EIO once the power is cut or the crash point passed.
    fn lock(&self) -> Result<MutexGuard<'_, State>, Errno> {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.cut || st.frozen {
            return Err(Errno::EIO);
        }
        Ok(st)
    }

    fn full(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.backing.clone()
        } else {
            self.backing.join(rel)
        }
    }

    fn rel(st: &State, ino: u64) -> Result<PathBuf, Errno> {
        if ino == INodeNo::ROOT.0 {
            return Ok(PathBuf::new());
        }
        st.paths
            .get(&ino)
            .and_then(|v| v.first())
            .cloned()
            .ok_or(Errno::ENOENT)
    }

    fn child(st: &State, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        if name.as_bytes().contains(&b'/') || name == ".." || name == "." {
            return Err(Errno::EINVAL);
        }
        if parent == INodeNo::ROOT && name == STASH {
            return Err(Errno::ENOENT);
        }
        Ok(Self::rel(st, parent.0)?.join(name))
    }

    /// The inode of the backing node at `rel`, remembered under that path.
    fn remember(st: &mut State, rel: &Path, m: &Metadata) -> u64 {
        if rel.as_os_str().is_empty() {
            return INodeNo::ROOT.0;
        }
        let ino = m.ino();
        let v = st.paths.entry(ino).or_default();
        if !v.iter().any(|p| p == rel) {
            v.push(rel.to_path_buf());
        }
        ino
    }

    fn entry_at(&self, st: &mut State, rel: &Path) -> Result<FileAttr, Errno> {
        let m = std::fs::symlink_metadata(self.full(rel)).map_err(errno)?;
        let ino = Self::remember(st, rel, &m);
        let size = st.files.get(&ino).map(|f| f.overlay.size());
        Ok(attr(ino, &m, size))
    }

    fn attr_of(&self, st: &State, ino: u64) -> Result<FileAttr, Errno> {
        if let Some(f) = st.files.get(&ino) {
            let m = f.file.metadata().map_err(errno)?;
            return Ok(attr(ino, &m, Some(f.overlay.size())));
        }
        let m = std::fs::symlink_metadata(self.full(&Self::rel(st, ino)?)).map_err(errno)?;
        Ok(attr(ino, &m, None))
    }

    /// The inode's open file, opened on its backing path if it has none yet.
    fn file<'a>(&self, st: &'a mut State, ino: u64) -> Result<&'a mut OpenFile, Errno> {
        if !st.files.contains_key(&ino) {
            let path = self.full(&Self::rel(st, ino)?);
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
                .map_err(errno)?;
            let len = file.metadata().map_err(errno)?.len();
            st.files.insert(
                ino,
                OpenFile {
                    file,
                    overlay: Overlay::new(len),
                    handles: 0,
                    unlinked: false,
                },
            );
        }
        st.files.get_mut(&ino).ok_or(Errno::EBADF)
    }

    fn new_handle(st: &mut State, ino: u64, flags: i32) -> u64 {
        st.next_fh += 1;
        let fh = st.next_fh;
        let sync = flags & (libc::O_SYNC | libc::O_DSYNC) != 0;
        st.handles.insert(fh, Handle { ino, sync });
        if let Some(f) = st.files.get_mut(&ino) {
            f.handles += 1;
        }
        fh
    }

    /// A name of `ino` is gone; with its last link (`last`) its pending data goes too,
    /// now or with its last handle.
    fn forget_path(st: &mut State, ino: u64, rel: &Path, last: bool) {
        if let Some(v) = st.paths.get_mut(&ino) {
            v.retain(|p| p != rel);
            if v.is_empty() {
                st.paths.remove(&ino);
            }
        }
        if last {
            match st.files.get_mut(&ino) {
                Some(f) if f.handles > 0 => f.unlinked = true,
                Some(_) => {
                    st.files.remove(&ino);
                }
                None => {}
            }
        }
    }

    fn do_setattr(&self, ino: u64, change: AttrChange) -> Result<FileAttr, Errno> {
        let AttrChange {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
        } = change;
        let mut st = self.lock()?;
        if let Some(s) = size {
            self.file(&mut st, ino)?.overlay.set_size(s);
        }
        // On the open descriptor where there is one (an unlinked file has no path).
        let fd = st.files.get(&ino).map(|f| f.file.as_raw_fd());
        let path = match fd {
            Some(_) => PathBuf::new(),
            None => self.full(&Self::rel(&st, ino)?),
        };
        let c = cstr(&path)?;
        let check = |r: libc::c_int| {
            if r == 0 {
                Ok(())
            } else {
                Err(errno(io::Error::last_os_error()))
            }
        };
        if let Some(m) = mode {
            let m = (m & 0o7777) as libc::mode_t;
            // SAFETY: a descriptor this filesystem holds, or a valid C string.
            check(unsafe {
                match fd {
                    Some(fd) => libc::fchmod(fd, m),
                    None => libc::chmod(c.as_ptr(), m),
                }
            })?;
        }
        if uid.is_some() || gid.is_some() {
            let (u, g) = (uid.unwrap_or(u32::MAX), gid.unwrap_or(u32::MAX));
            // SAFETY: as above; -1 leaves an id as it is.
            check(unsafe {
                match fd {
                    Some(fd) => libc::fchown(fd, u, g),
                    None => libc::lchown(c.as_ptr(), u, g),
                }
            })?;
        }
        if atime.is_some() || mtime.is_some() {
            let ts = |t: Option<TimeOrNow>| match t {
                None => libc::timespec {
                    tv_sec: 0,
                    tv_nsec: libc::UTIME_OMIT,
                },
                Some(TimeOrNow::Now) => libc::timespec {
                    tv_sec: 0,
                    tv_nsec: libc::UTIME_NOW,
                },
                Some(TimeOrNow::SpecificTime(t)) => {
                    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
                    libc::timespec {
                        tv_sec: d.as_secs() as libc::time_t,
                        tv_nsec: i64::from(d.subsec_nanos()),
                    }
                }
            };
            let times = [ts(atime), ts(mtime)];
            // SAFETY: as above, with two timespecs as utimensat(2) wants.
            check(unsafe {
                match fd {
                    Some(fd) => libc::futimens(fd, times.as_ptr()),
                    None => libc::utimensat(
                        libc::AT_FDCWD,
                        c.as_ptr(),
                        times.as_ptr(),
                        libc::AT_SYMLINK_NOFOLLOW,
                    ),
                }
            })?;
        }
        self.attr_of(&st, ino)
    }

    /// Makes a node named `name` in `parent` with `make` (given its backing path), sets
    /// its exact permission bits (`perm`, for the nodes that have their own), gives it to
    /// the user who asked, and returns its attributes: mknod, mkdir and symlink.
    fn make_node(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        perm: Option<u32>,
        make: impl FnOnce(&Path) -> Result<(), Errno>,
    ) -> Result<FileAttr, Errno> {
        let mut st = self.lock()?;
        let rel = Self::child(&st, parent, name)?;
        let path = self.full(&rel);
        st.touch_dir(parent.0).map_err(errno)?;
        make(&path)?;
        if let Some(perm) = perm {
            chmod(&path, perm)?;
        }
        own(&path, req)?;
        self.entry_at(&mut st, &rel)
    }

    /// Removes the node named `name` in `parent` and forgets that name: a directory, or
    /// a file whose last link takes its pending data with it (unlink, rmdir).
    fn remove_node(&self, parent: INodeNo, name: &OsStr, dir: bool) -> Result<(), Errno> {
        let mut st = self.lock()?;
        let rel = Self::child(&st, parent, name)?;
        let path = self.full(&rel);
        let m = std::fs::symlink_metadata(&path).map_err(errno)?;
        st.touch_dir(parent.0).map_err(errno)?;
        st.keep_removed(&path, &m).map_err(errno)?;
        if dir {
            std::fs::remove_dir(&path).map_err(errno)?;
        } else {
            std::fs::remove_file(&path).map_err(errno)?;
            st.passed(PointKind::Unlink);
        }
        Self::forget_path(&mut st, m.ino(), &rel, !dir && m.nlink() <= 1);
        Ok(())
    }

    fn do_rename(
        &self,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
    ) -> Result<(), Errno> {
        let mut st = self.lock()?;
        let from = Self::child(&st, parent, name)?;
        let to = Self::child(&st, newparent, newname)?;
        let (src, dst) = (self.full(&from), self.full(&to));
        let replaced = std::fs::symlink_metadata(&dst).ok();
        st.touch_dir(parent.0).map_err(errno)?;
        st.touch_dir(newparent.0).map_err(errno)?;
        let exchange = flags.contains(RenameFlags::RENAME_EXCHANGE);
        if let (Some(m), false) = (&replaced, exchange) {
            // A directory replaced must be empty, so only its attributes matter.
            st.keep_removed(&dst, m).map_err(errno)?;
        }
        let (a, b) = (cstr(&src)?, cstr(&dst)?);
        // SAFETY: two valid C strings; renameat2(2) with the flags the kernel passed.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                flags.bits(),
            )
        };
        if r != 0 {
            return Err(errno(io::Error::last_os_error()));
        }
        st.passed(PointKind::Rename);
        if let (Some(m), false) = (&replaced, exchange) {
            let last = m.is_file() && m.nlink() <= 1;
            Self::forget_path(&mut st, m.ino(), &to, last);
        }
        for v in st.paths.values_mut() {
            for p in v.iter_mut() {
                if let Some(n) = moved(p, &from, &to) {
                    *p = n;
                } else if exchange {
                    if let Some(n) = moved(p, &to, &from) {
                        *p = n;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Replies with a result or its error.
macro_rules! answer {
    ($reply:expr, $r:expr, |$v:ident| $ok:expr) => {
        match $r {
            Ok($v) => $ok,
            Err(e) => $reply.error(e),
        }
    };
}

/// Replies to an open or opendir with its new handle, or the error.
fn reply_opened(reply: ReplyOpen, r: Result<u64, Errno>) {
    // Not direct_io: shared writable mmap (LMDB's lock file) needs the page cache.
    answer!(reply, r, |fh| reply
        .opened(FileHandle(fh), FopenFlags::empty()));
}

impl Filesystem for PowerFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let r = self.lock().and_then(|mut st| {
            let rel = Self::child(&st, parent, name)?;
            self.entry_at(&mut st, &rel)
        });
        answer!(reply, r, |a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let r = self.lock().and_then(|st| self.attr_of(&st, ino.0));
        answer!(reply, r, |a| reply.attr(&TTL, &a));
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let change = AttrChange {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
        };
        let r = self.do_setattr(ino.0, change);
        answer!(reply, r, |a| reply.attr(&TTL, &a));
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let r = self
            .lock()
            .and_then(|st| std::fs::read_link(self.full(&Self::rel(&st, ino.0)?)).map_err(errno));
        answer!(reply, r, |t| reply.data(t.as_os_str().as_bytes()));
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let r = self.make_node(req, parent, name, Some(mode & !umask), |path| {
            let c = cstr(path)?;
            // SAFETY: a valid C string; mknod(2) takes plain integers otherwise.
            if unsafe { libc::mknod(c.as_ptr(), mode & !umask, libc::dev_t::from(rdev)) } != 0 {
                return Err(errno(io::Error::last_os_error()));
            }
            Ok(())
        });
        answer!(reply, r, |a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let r = self.make_node(req, parent, name, Some(mode & !umask), |path| {
            std::fs::create_dir(path).map_err(errno)
        });
        answer!(reply, r, |a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        answer!(reply, self.remove_node(parent, name, false), |_v| reply
            .ok());
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        answer!(reply, self.remove_node(parent, name, true), |_v| reply.ok());
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let r = self.make_node(req, parent, link_name, None, |path| {
            std::os::unix::fs::symlink(target, path).map_err(errno)
        });
        answer!(reply, r, |a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let r = self.do_rename(parent, name, newparent, newname, flags);
        answer!(reply, r, |_v| reply.ok());
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let r = self.lock().and_then(|mut st| {
            let from = Self::rel(&st, ino.0)?;
            let to = Self::child(&st, newparent, newname)?;
            st.touch_dir(newparent.0).map_err(errno)?;
            std::fs::hard_link(self.full(&from), self.full(&to)).map_err(errno)?;
            let mut a = self.entry_at(&mut st, &to)?;
            a.ino = ino;
            Ok(a)
        });
        answer!(reply, r, |a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let r = self.lock().and_then(|mut st| {
            self.file(&mut st, ino.0)?;
            Ok(Self::new_handle(&mut st, ino.0, flags.0))
        });
        reply_opened(reply, r);
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let r = self.lock().and_then(|mut st| {
            let f = self.file(&mut st, ino.0)?;
            f.overlay.read(&f.file, offset, size).map_err(errno)
        });
        answer!(reply, r, |d| reply.data(&d));
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let r = self.lock().and_then(|mut st| {
            let sync = flags.0 & (libc::O_SYNC | libc::O_DSYNC) != 0
                || st.handles.get(&fh.0).is_some_and(|h| h.sync);
            let f = self.file(&mut st, ino.0)?;
            f.overlay.write(&f.file, offset, data).map_err(errno)?;
            if sync {
                f.overlay.sync(&f.file, true).map_err(errno)?;
                st.syncs += 1;
                st.file_synced(ino.0, false);
                st.passed(PointKind::Fsync);
            }
            Ok(data.len() as u32)
        });
        answer!(reply, r, |n| reply.written(n));
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(2) flushes nothing to stable storage.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        if let Ok(mut st) = self.lock() {
            if let Some(h) = st.handles.remove(&fh.0) {
                let gone = st.files.get_mut(&h.ino).is_some_and(|f| {
                    f.handles = f.handles.saturating_sub(1);
                    // Pending data outlives close(2); a clean file needs no descriptor.
                    f.handles == 0 && (f.unlinked || f.overlay.is_clean())
                });
                if gone {
                    st.files.remove(&h.ino);
                }
            }
        }
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let r = self.lock().and_then(|mut st| {
            if let Some(f) = st.files.get_mut(&ino.0) {
                f.overlay.sync(&f.file, datasync).map_err(errno)?;
                st.syncs += 1;
            }
            st.file_synced(ino.0, false);
            st.passed(PointKind::Fsync);
            Ok(())
        });
        answer!(reply, r, |_v| reply.ok());
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let r = self.lock().and_then(|mut st| {
            let rel = Self::rel(&st, ino.0)?;
            let mut list = vec![
                (ino.0, FileType::Directory, OsString::from(".")),
                (ino.0, FileType::Directory, OsString::from("..")),
            ];
            for e in std::fs::read_dir(self.full(&rel)).map_err(errno)? {
                let e = e.map_err(errno)?;
                if ino == INodeNo::ROOT && e.file_name() == STASH {
                    continue;
                }
                let t = e.file_type().map_err(errno)?;
                let k = FileType::from_std(t).unwrap_or(FileType::RegularFile);
                list.push((e.ino(), k, e.file_name()));
            }
            st.next_fh += 1;
            let fh = st.next_fh;
            st.dirs.insert(fh, list);
            Ok(fh)
        });
        reply_opened(reply, r);
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let st = match self.lock() {
            Ok(st) => st,
            Err(e) => return reply.error(e),
        };
        let Some(list) = st.dirs.get(&fh.0) else {
            return reply.error(Errno::EBADF);
        };
        for (i, (ino, k, name)) in list.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), i as u64 + 1, *k, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        if let Ok(mut st) = self.lock() {
            st.dirs.remove(&fh.0);
        }
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // Its entries reached the backing directory when they changed; from now on
        // they are what the disk holds too.
        let r = self.lock().and_then(|mut st| {
            if let Some(p) = st.dir_path(ino.0) {
                File::open(p).and_then(|d| d.sync_all()).map_err(errno)?;
            }
            st.dir_synced(ino.0);
            st.file_synced(ino.0, true);
            st.passed(PointKind::Fsync);
            Ok(())
        });
        answer!(reply, r, |_v| reply.ok());
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let r = cstr(&self.backing).and_then(|c| {
            // SAFETY: statvfs fills the zeroed struct it is given.
            let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
            // SAFETY: a valid C string and a valid out pointer.
            if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
                return Err(errno(io::Error::last_os_error()));
            }
            Ok(s)
        });
        answer!(reply, r, |s| reply.statfs(
            s.f_blocks,
            s.f_bfree,
            s.f_bavail,
            s.f_files,
            s.f_ffree,
            s.f_bsize as u32,
            s.f_namemax as u32,
            s.f_frsize as u32,
        ));
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let r = self.lock().and_then(|mut st| {
            let rel = Self::child(&st, parent, name)?;
            let path = self.full(&rel);
            let existed = path.symlink_metadata().is_ok();
            if !existed {
                st.touch_dir(parent.0).map_err(errno)?;
            }
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .create_new(flags & libc::O_EXCL != 0)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(mode & !umask & 0o7777)
                .open(&path)
                .map_err(errno)?;
            if !existed {
                chmod(&path, mode & !umask)?;
                own(&path, req)?;
            }
            drop(file);
            let a = self.entry_at(&mut st, &rel)?;
            let f = self.file(&mut st, a.ino.0)?;
            if flags & libc::O_TRUNC != 0 {
                f.overlay.set_size(0);
            }
            let fh = Self::new_handle(&mut st, a.ino.0, flags);
            let a = self.attr_of(&st, a.ino.0)?;
            Ok((a, fh))
        });
        answer!(reply, r, |v| reply.created(
            &TTL,
            &v.0,
            Generation(0),
            FileHandle(v.1),
            FopenFlags::empty()
        ));
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let r = self.lock().and_then(|mut st| {
            let f = self.file(&mut st, ino.0)?;
            let end = offset.saturating_add(length);
            let keep_size = mode & libc::FALLOC_FL_KEEP_SIZE != 0;
            match mode & !libc::FALLOC_FL_KEEP_SIZE {
                0 => {}
                libc::FALLOC_FL_PUNCH_HOLE if keep_size => {
                    f.overlay.zero(&f.file, offset, length).map_err(errno)?
                }
                libc::FALLOC_FL_ZERO_RANGE => {
                    f.overlay.zero(&f.file, offset, length).map_err(errno)?
                }
                _ => return Err(Errno::EOPNOTSUPP),
            }
            // Space is not reserved: only the size, pending like any other.
            if !keep_size && end > f.overlay.size() {
                f.overlay.set_size(end);
            }
            Ok(())
        });
        answer!(reply, r, |_v| reply.ok());
    }
}
