//! The power-cut filesystem mounted for real (as root, on /dev/fuse): what was fsynced
//! is in the backing directory after the cut, what was not is gone, and reads through
//! the mount saw everything before it.

use plumb_powercut::PowerCut;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

fn mounted(p: &Path) -> bool {
    let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines()
        .any(|l| l.split(' ').nth(4) == Some(p.to_str().unwrap()))
}

/// fsync(2) on a directory: what makes its entries durable.
fn sync_dir(p: &Path) {
    File::open(p).unwrap().sync_all().unwrap();
}

struct Dirs {
    _root: tempfile::TempDir,
    backing: std::path::PathBuf,
    mnt: std::path::PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let (backing, mnt) = (root.path().join("backing"), root.path().join("mnt"));
    fs::create_dir(&backing).unwrap();
    fs::create_dir(&mnt).unwrap();
    Dirs {
        _root: root,
        backing,
        mnt,
    }
}

#[test]
fn the_cut_keeps_what_was_synced_and_drops_the_rest() {
    let d = dirs();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    assert!(mounted(&d.mnt));
    let m = pc.mountpoint().to_path_buf();

    let mut a = File::create(m.join("a")).unwrap();
    a.write_all(b"synced part of a").unwrap();
    a.sync_all().unwrap();
    let mut b = File::create(m.join("b")).unwrap();
    b.write_all(&vec![b'b'; 10_000]).unwrap();
    a.write_all(b", appended and never synced").unwrap();
    drop((a, b));
    fs::create_dir(m.join("dir")).unwrap();
    File::create(m.join("c")).unwrap();
    fs::rename(m.join("c"), m.join("dir/c")).unwrap();
    // A file truncated and rewritten, never synced: its synced bytes come back.
    fs::write(m.join("t"), b"old synced content").unwrap();
    File::open(m.join("t")).unwrap().sync_all().unwrap();
    fs::write(m.join("t"), b"new").unwrap();
    // The names are made durable: what follows is about data.
    sync_dir(&m);
    sync_dir(&m.join("dir"));

    // Through the mount everything is there.
    assert_eq!(
        fs::read(m.join("a")).unwrap(),
        b"synced part of a, appended and never synced"
    );
    assert_eq!(fs::read(m.join("b")).unwrap(), vec![b'b'; 10_000]);
    assert_eq!(fs::metadata(m.join("b")).unwrap().len(), 10_000);
    assert!(m.join("dir/c").exists() && !m.join("c").exists());
    assert_eq!(fs::read(m.join("t")).unwrap(), b"new");
    // The backing directory has the synced data only, and the metadata already.
    assert_eq!(fs::read(d.backing.join("a")).unwrap(), b"synced part of a");
    assert_eq!(fs::metadata(d.backing.join("b")).unwrap().len(), 0);
    assert_eq!(pc.pending().0, 3, "a, b and t have unsynced data");

    let report = pc.cut().unwrap();
    assert!(!mounted(&d.mnt), "the mount is gone");
    assert_eq!(report.files, 3);
    assert!(report.bytes >= 10_000, "{report:?}");
    assert_eq!(report.syncs, 2);
    assert_eq!(fs::read(d.backing.join("a")).unwrap(), b"synced part of a");
    assert_eq!(fs::read(d.backing.join("b")).unwrap(), b"");
    assert!(d.backing.join("dir/c").exists() && !d.backing.join("c").exists());
    assert_eq!(
        fs::read(d.backing.join("t")).unwrap(),
        b"old synced content"
    );
    // Nothing is in the mount point itself.
    assert_eq!(fs::read_dir(&d.mnt).unwrap().count(), 0);
}

#[test]
fn a_child_process_writing_through_the_mount_keeps_only_what_it_synced() {
    let d = dirs();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let out = Command::new("sh")
        .current_dir(pc.mountpoint())
        .arg("-c")
        .arg(
            "printf synced | dd of=a conv=fsync status=none && \
             printf 'written, not synced' > b && sync b && \
             printf lost > c && printf ' tail' >> a && sync . && cat a b c",
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"synced tailwritten, not syncedlost");
    pc.cut().unwrap();
    assert_eq!(fs::read(d.backing.join("a")).unwrap(), b"synced");
    assert_eq!(
        fs::read(d.backing.join("b")).unwrap(),
        b"written, not synced"
    );
    assert_eq!(fs::read(d.backing.join("c")).unwrap(), b"");
}

#[test]
fn shared_writable_mmap_works_and_msync_makes_it_durable() {
    let d = dirs();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let path = pc.mountpoint().join("lock");
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.set_len(8192).unwrap();
    use std::os::fd::AsRawFd;
    // SAFETY: a fresh shared mapping of 8 KiB of a file this test owns, unmapped below.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            8192,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED, "{}", std::io::Error::last_os_error());
        std::ptr::copy_nonoverlapping(b"mapped".as_ptr(), p as *mut u8, 6);
        assert_eq!(libc::msync(p, 8192, libc::MS_SYNC), 0);
        assert_eq!(libc::munmap(p, 8192), 0);
    }
    f.sync_all().unwrap();
    sync_dir(pc.mountpoint());
    assert_eq!(&fs::read(&path).unwrap()[..6], b"mapped");
    drop(f);
    pc.cut().unwrap();
    let b = fs::read(d.backing.join("lock")).unwrap();
    assert_eq!((b.len(), &b[..6]), (8192, &b"mapped"[..]));
}

#[test]
fn other_users_work_in_the_mount_and_own_what_they_make() {
    let d = dirs();
    fs::create_dir(d.backing.join("open")).unwrap();
    std::os::unix::fs::chown(d.backing.join("open"), Some(65534), Some(65534)).unwrap();
    let tmp_root = d.backing.parent().unwrap();
    fs::set_permissions(
        tmp_root,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    fs::set_permissions(
        &d.backing,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c"])
        .arg("cd open && printf x > mine && sync mine && mkdir sub && sync . && cat mine")
        .current_dir(pc.mountpoint())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"x");
    // The kernel checks permissions: nobody cannot write where root owns the directory.
    let denied = Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c", "printf x > not-mine"])
        .current_dir(pc.mountpoint())
        .output()
        .unwrap();
    assert!(!denied.status.success());
    pc.cut().unwrap();
    for p in ["open/mine", "open/sub"] {
        let m = fs::metadata(d.backing.join(p)).unwrap();
        assert_eq!((m.uid(), m.gid()), (65534, 65534), "{p}");
    }
    assert!(!d.backing.join("not-mine").exists());
}

#[test]
fn dropping_the_mount_cuts_too_and_leaves_no_mount_even_with_a_file_held_open() {
    let d = dirs();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    fs::write(pc.mountpoint().join("f"), b"never synced").unwrap();
    // A process that holds a file in the mount open: a plain unmount is refused.
    let mut holder = Command::new("sh")
        .arg("-c")
        .arg("exec 3< f; sleep 60")
        .current_dir(pc.mountpoint())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(pc);
    assert!(!mounted(&d.mnt), "no stale mount");
    let _ = holder.kill();
    let _ = holder.wait();
    // Its name was never made durable either: it is gone.
    assert!(!d.backing.join("f").exists());
    assert_eq!(fs::read_dir(&d.mnt).unwrap().count(), 0);
}

#[test]
fn o_dsync_writes_are_durable_at_once_and_hard_links_share_pending_data() {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let d = dirs();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let m = pc.mountpoint().to_path_buf();
    let f = File::create(m.join("x")).unwrap();
    f.write_all_at(&[b'x'; 10_000], 0).unwrap();
    f.sync_data().unwrap();
    let dsync = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DSYNC)
        .open(m.join("x"))
        .unwrap();
    dsync.write_all_at(b"D", 0).unwrap();
    assert_eq!(fs::read(d.backing.join("x")).unwrap()[0], b'D', "O_DSYNC");
    // Shrunk and written through a second name, never synced.
    f.set_len(100).unwrap();
    fs::hard_link(m.join("x"), m.join("y")).unwrap();
    OpenOptions::new()
        .write(true)
        .open(m.join("y"))
        .unwrap()
        .write_all_at(b"Y", 50)
        .unwrap();
    let through = fs::read(m.join("x")).unwrap();
    assert_eq!((through.len(), through[0], through[50]), (100, b'D', b'Y'));
    assert_eq!(fs::read(d.backing.join("x")).unwrap().len(), 10_000);
    drop((f, dsync));
    sync_dir(&m);
    pc.cut().unwrap();
    for name in ["x", "y"] {
        let b = fs::read(d.backing.join(name)).unwrap();
        assert_eq!((b.len(), b[0], b[50]), (10_000, b'D', b'x'), "{name}");
    }
}

#[test]
fn a_torn_cut_writes_some_unsynced_sectors_and_never_touches_synced_data() {
    let d = dirs();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let m = pc.mountpoint().to_path_buf();
    let size = 64 * 4096;
    fs::write(m.join("synced"), vec![b's'; size]).unwrap();
    File::open(m.join("synced")).unwrap().sync_all().unwrap();
    fs::write(m.join("torn"), vec![b'o'; size]).unwrap();
    File::open(m.join("torn")).unwrap().sync_all().unwrap();
    sync_dir(&m);
    // Rewritten, and grown by 8 pages, never synced.
    fs::write(m.join("torn"), vec![b'n'; size + 8 * 4096]).unwrap();
    let report = pc.cut_torn(7).unwrap();
    assert_eq!(report.files, 1);
    assert_eq!(
        fs::read(d.backing.join("synced")).unwrap(),
        vec![b's'; size]
    );
    let torn = fs::read(d.backing.join("torn")).unwrap();
    assert!(torn.len() >= size, "{}", torn.len());
    let mut kinds = std::collections::BTreeSet::new();
    for (i, c) in torn.chunks(512).enumerate() {
        assert!(c.iter().all(|&b| b == c[0]), "sector {i} split");
        // Past the old end a sector not written reads as zeros (a hole).
        assert!(
            c[0] == b'n' || (c[0] == b'o' && i < size / 512) || c[0] == 0,
            "sector {i}: {}",
            c[0]
        );
        kinds.insert(c[0]);
    }
    assert!(kinds.contains(&b'o') && kinds.contains(&b'n'), "{kinds:?}");
}

/// A tiny program run through the mount: writes a new version of `target` to `tmp`,
/// fsyncs it (dd conv=fsync), renames it over `target` (mv), and fsyncs the directory
/// only when `sync_dir` (sync . opens the directory and fsyncs it).
fn replace_by_rename(m: &Path, sync_dir: bool) {
    let script = format!(
        "printf new | dd of=tmp conv=fsync status=none && mv tmp target{}",
        if sync_dir { " && sync ." } else { "" }
    );
    let out = Command::new("sh")
        .current_dir(m)
        .arg("-c")
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Through the mount the rename is done either way.
    assert_eq!(fs::read(m.join("target")).unwrap(), b"new");
    assert!(!m.join("tmp").exists());
}

#[test]
fn a_rename_over_a_file_is_lost_at_the_cut_unless_its_directory_was_fsynced() {
    for sync in [false, true] {
        let d = dirs();
        // The old version, synced with its directory before the mount.
        fs::write(d.backing.join("target"), b"old").unwrap();
        let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
        replace_by_rename(pc.mountpoint(), sync);
        let report = pc.cut().unwrap();
        let target = fs::read(d.backing.join("target")).unwrap();
        let tmp = d.backing.join("tmp");
        let stash = d.backing.join(".plumb-powercut-stash");
        assert!(!stash.exists(), "the stash goes at the cut");
        if sync {
            assert_eq!(target, b"new", "the directory's fsync kept the rename");
            assert!(!tmp.exists());
            assert_eq!(report.dirs, 0);
        } else {
            // The rename is lost: the old file is back under its name, the new one
            // (its data synced, its name never) is gone.
            assert_eq!(target, b"old");
            assert!(!tmp.exists(), "tmp's own entry was never made durable");
            assert_eq!(report.dirs, 1);
        }
        assert_eq!(report.points.renames, 1);
        assert_eq!(report.points.fsyncs, 1 + u64::from(sync));
    }
}

#[test]
fn a_rename_of_a_durable_file_reverts_to_its_old_name() {
    let d = dirs();
    fs::write(d.backing.join("a"), b"synced").unwrap();
    fs::create_dir(d.backing.join("sub")).unwrap();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let m = pc.mountpoint().to_path_buf();
    fs::rename(m.join("a"), m.join("b")).unwrap();
    fs::rename(m.join("sub"), m.join("sub2")).unwrap();
    File::open(m.join("b")).unwrap().sync_all().unwrap();
    pc.cut().unwrap();
    assert_eq!(fs::read(d.backing.join("a")).unwrap(), b"synced");
    assert!(!d.backing.join("b").exists());
    assert!(d.backing.join("sub").is_dir() && !d.backing.join("sub2").exists());
}

#[test]
fn a_created_file_is_gone_unless_its_directory_was_fsynced_and_its_fsync_is_not_enough() {
    let d = dirs();
    fs::create_dir(d.backing.join("dir")).unwrap();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let m = pc.mountpoint().to_path_buf();
    for name in ["dir/kept", "dir/lost"] {
        let mut f = File::create(m.join(name)).unwrap();
        f.write_all(name.as_bytes()).unwrap();
        f.sync_all().unwrap();
        if name == "dir/kept" {
            sync_dir(&m.join("dir"));
        }
    }
    // A new directory and a file in it, both fsynced, but not the root: all gone.
    fs::create_dir(m.join("new")).unwrap();
    let mut f = File::create(m.join("new/f")).unwrap();
    f.write_all(b"x").unwrap();
    f.sync_all().unwrap();
    sync_dir(&m.join("new"));
    assert!(
        d.backing.join("new/f").exists(),
        "changed in the backing at once"
    );
    let report = pc.cut().unwrap();
    assert_eq!(fs::read(d.backing.join("dir/kept")).unwrap(), b"dir/kept");
    assert!(!d.backing.join("dir/lost").exists());
    assert!(!d.backing.join("new").exists());
    assert_eq!(report.dirs, 2, "dir after kept was synced, and the root");
}

#[test]
fn an_unsynced_unlink_brings_a_durable_file_back_with_its_synced_data() {
    let d = dirs();
    fs::write(d.backing.join("old"), b"synced").unwrap();
    fs::create_dir(d.backing.join("d")).unwrap();
    fs::write(d.backing.join("d/inner"), b"inner").unwrap();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    let m = pc.mountpoint().to_path_buf();
    let mut f = OpenOptions::new().append(true).open(m.join("old")).unwrap();
    f.write_all(b", never synced").unwrap();
    drop(f);
    fs::remove_file(m.join("old")).unwrap();
    // A directory emptied and removed: both come back, the file inside too.
    fs::remove_file(m.join("d/inner")).unwrap();
    fs::remove_dir(m.join("d")).unwrap();
    // Through the mount the stash never shows.
    assert_eq!(fs::read_dir(&m).unwrap().count(), 0);
    assert!(fs::metadata(m.join(".plumb-powercut-stash")).is_err());
    let report = pc.cut().unwrap();
    assert_eq!(fs::read(d.backing.join("old")).unwrap(), b"synced");
    assert_eq!(fs::read(d.backing.join("d/inner")).unwrap(), b"inner");
    assert_eq!(report.points.unlinks, 2);
    // A synced unlink stays done.
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    fs::remove_file(pc.mountpoint().join("old")).unwrap();
    sync_dir(pc.mountpoint());
    pc.cut().unwrap();
    assert!(!d.backing.join("old").exists());
    assert!(!d.backing.join(".plumb-powercut-stash").exists());
}

#[test]
fn with_the_ext4_rule_a_file_fsync_keeps_its_new_name() {
    let d = dirs();
    let opts = plumb_powercut::Options {
        file_fsync_keeps_names: true,
    };
    let pc = PowerCut::mount_with(&d.backing, &d.mnt, opts).unwrap();
    let m = pc.mountpoint().to_path_buf();
    fs::create_dir(m.join("new")).unwrap();
    let mut f = File::create(m.join("new/f")).unwrap();
    f.write_all(b"x").unwrap();
    f.sync_all().unwrap();
    File::create(m.join("not-synced")).unwrap();
    // A new directory's own fsync keeps its name, and the new directories above it.
    fs::create_dir_all(m.join("a/b")).unwrap();
    File::create(m.join("a/b/g")).unwrap();
    sync_dir(&m.join("a/b"));
    pc.cut().unwrap();
    assert_eq!(fs::read(d.backing.join("new/f")).unwrap(), b"x");
    assert!(!d.backing.join("not-synced").exists());
    assert!(d.backing.join("a/b/g").exists());
}

#[test]
fn a_crash_point_completes_its_call_then_freezes_the_filesystem() {
    use plumb_powercut::{CrashPoint, PointKind};
    let d = dirs();
    let pc = PowerCut::mount(&d.backing, &d.mnt).unwrap();
    pc.arm(CrashPoint {
        kind: PointKind::Fsync,
        n: 2,
    });
    let m = pc.mountpoint().to_path_buf();
    let mut f = File::create(m.join("f")).unwrap();
    f.write_all(b"one").unwrap();
    sync_dir(&m); // the first fsync-family call
    f.sync_all().unwrap(); // the second: it completes, then the freeze
    assert!(pc.frozen());
    let e = f.write_all(b"two").and_then(|()| f.sync_all()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
    assert!(File::create(m.join("g")).is_err());
    drop(f);
    let report = pc.cut().unwrap();
    assert!(report.frozen);
    assert_eq!(report.points.fsyncs, 2);
    assert_eq!(fs::read(d.backing.join("f")).unwrap(), b"one");
    assert!(!d.backing.join("g").exists());
}
