//! Block-device I/O counters from `/proc/diskstats` for the device that holds a path.
//!
//! plumb's `rd_op`, `rkb_op`, `wr_op`, `wkb_op` and `w_amp` metrics are deltas of these
//! counters over a measured window. The device is the filesystem's own device: for a
//! partition that is e.g. `sda1`, for LVM/dm-crypt `dm-0`, for software RAID `md0` — each of
//! these has its own line in `/proc/diskstats`, so the counters match what the filesystem
//! issued, not what other partitions of the same disk did.
//!
//! All lookups go through a `root` directory (normally `/`) so tests can use fixture trees
//! containing `proc/diskstats`, `proc/self/mountinfo` and `sys/dev/block/MAJ:MIN/uevent`.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::ProbeError;

/// Bytes per `/proc/diskstats` sector: the kernel always counts 512-byte units here,
/// whatever the device's logical block size.
const SECTOR_BYTES: u64 = 512;

/// The four `/proc/diskstats` counters plumb reports, cumulative since boot (or, after
/// [`DiskCounters::delta`], over a window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Read requests completed.
    pub reads: u64,
    /// 512-byte sectors read.
    pub sectors_read: u64,
    /// Write requests completed.
    pub writes: u64,
    /// 512-byte sectors written.
    pub sectors_written: u64,
}

impl DiskCounters {
    /// Counters accumulated since `earlier`; saturates at zero per field so a counter reset
    /// (device re-attached) yields zeros rather than a wrapped huge number.
    pub fn delta(&self, earlier: &DiskCounters) -> DiskCounters {
        DiskCounters {
            reads: self.reads.saturating_sub(earlier.reads),
            sectors_read: self.sectors_read.saturating_sub(earlier.sectors_read),
            writes: self.writes.saturating_sub(earlier.writes),
            sectors_written: self.sectors_written.saturating_sub(earlier.sectors_written),
        }
    }

    /// KiB read, the unit of the `rkb_op` metric.
    pub fn read_kb(&self) -> f64 {
        (self.sectors_read * SECTOR_BYTES) as f64 / 1024.0
    }

    /// KiB written, the unit of the `wkb_op` metric.
    pub fn written_kb(&self) -> f64 {
        (self.sectors_written * SECTOR_BYTES) as f64 / 1024.0
    }

    /// Bytes written, the numerator of device write amplification (`w_amp`).
    pub fn written_bytes(&self) -> u64 {
        self.sectors_written * SECTOR_BYTES
    }
}

/// One parsed line of `/proc/diskstats`: device identity plus the counters plumb uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskStatLine {
    /// Device major number.
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Kernel device name, e.g. `sda1`, `nvme0n1p1`, `dm-0`.
    pub name: String,
    /// The counters of this device.
    pub counters: DiskCounters,
}

/// Parses the text of `/proc/diskstats`.
///
/// Accepts every format the kernel has used: 14 fields (2.6.25–4.17), 18 (4.18+, discard
/// stats), 20 (5.5+, flush stats), any longer future format, and the 7-field short format
/// old kernels used for partitions. Blank lines are skipped. `file` is only used to name the
/// source in errors, which also carry the 1-based line number.
pub fn parse_diskstats(text: &str, file: &Path) -> Result<Vec<DiskStatLine>, ProbeError> {
    let mut out = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |reason: String| ProbeError::Parse {
            file: file.to_path_buf(),
            line: idx + 1,
            reason,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let n = fields.len();
        if n != 7 && n < 14 {
            return Err(err(format!(
                "expected 7, 14, 18 or 20 fields, found {n}: {line:?}"
            )));
        }
        let num = |i: usize| -> Result<u64, ProbeError> {
            fields[i].parse::<u64>().map_err(|_| {
                err(format!(
                    "field {} is not an unsigned integer: {:?}",
                    i + 1,
                    fields[i]
                ))
            })
        };
        let major = u32::try_from(num(0)?).map_err(|_| err("major out of range".into()))?;
        let minor = u32::try_from(num(1)?).map_err(|_| err("minor out of range".into()))?;
        let counters = if n == 7 {
            // Old partition format: reads, sectors read, writes, sectors written.
            DiskCounters {
                reads: num(3)?,
                sectors_read: num(4)?,
                writes: num(5)?,
                sectors_written: num(6)?,
            }
        } else {
            // Validate every numeric field so a corrupt line is reported, not half-used.
            for i in 3..n {
                num(i)?;
            }
            DiskCounters {
                reads: num(3)?,
                sectors_read: num(5)?,
                writes: num(7)?,
                sectors_written: num(9)?,
            }
        };
        out.push(DiskStatLine {
            major,
            minor,
            name: fields[2].to_string(),
            counters,
        });
    }
    Ok(out)
}

/// The `/proc/diskstats` entry for the device that holds a path, resolved once and re-read
/// on every [`DeviceStats::read`], so the runner can take cheap before/after snapshots.
///
/// All files are read below `root` (normally `/`), which lets tests use fixture trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceStats {
    root: PathBuf,
    name: String,
    major: u32,
    minor: u32,
}

/// How many overlayfs upper dirs may be followed before giving up (guards against loops).
const MAX_OVERLAY_DEPTH: usize = 4;

impl DeviceStats {
    /// Resolves the device holding `path` on this machine (root `/`).
    ///
    /// Uses the path's `st_dev`; for filesystems without a real device number (btrfs,
    /// overlayfs, tmpfs, NFS…) falls back to the mount's source in `/proc/self/mountinfo`.
    /// For multi-device filesystems (btrfs RAID) only the device named as the mount source is
    /// counted. Returns [`ProbeError::NoDevice`] saying why when nothing resolves.
    pub fn for_path(path: &Path) -> Result<DeviceStats, ProbeError> {
        let root = Path::new("/");
        let dev = stat_dev(path)?;
        let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        resolve(root, &canonical, dev, &real_fs_dev, 0)
    }

    /// The diskstats entry for device `major:minor`, reading files below `root`.
    ///
    /// Looks the pair up in `root/proc/diskstats`; if it is not listed there, uses
    /// `root/sys/dev/block/MAJ:MIN/uevent`'s `DEVNAME=` to find the entry by name.
    pub fn for_dev_in(root: &Path, major: u32, minor: u32) -> Result<DeviceStats, ProbeError> {
        let dev_label = PathBuf::from(format!("device {major}:{minor}"));
        if major == 0 {
            return Err(ProbeError::NoDevice {
                path: dev_label,
                reason: "major 0 is an anonymous device (tmpfs, overlayfs, btrfs subvolume…), \
                         not a block device"
                    .into(),
            });
        }
        let file = root.join("proc/diskstats");
        let lines = read_diskstats(&file)?;
        let uevent_name = uevent_devname(root, major, minor);
        let entry = lines
            .iter()
            .find(|l| l.major == major && l.minor == minor)
            .or_else(|| {
                let name = uevent_name.as_deref()?;
                lines.iter().find(|l| l.name == name)
            });
        match entry {
            Some(l) => Ok(DeviceStats {
                root: root.to_path_buf(),
                name: l.name.clone(),
                major: l.major,
                minor: l.minor,
            }),
            None => Err(ProbeError::NoDevice {
                path: dev_label,
                reason: format!(
                    "not listed in {}{}",
                    file.display(),
                    uevent_name
                        .map(|n| format!(" (uevent DEVNAME={n})"))
                        .unwrap_or_default()
                ),
            }),
        }
    }

    /// The kernel name of the device, e.g. `vda`, `sda1`, `dm-0`, `md0`; shown in reports
    /// so readers know which device the I/O figures describe.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Device major number of the resolved entry.
    pub fn major(&self) -> u32 {
        self.major
    }

    /// Device minor number of the resolved entry.
    pub fn minor(&self) -> u32 {
        self.minor
    }

    /// Current cumulative counters; re-reads `root/proc/diskstats` on each call.
    pub fn read(&self) -> Result<DiskCounters, ProbeError> {
        let file = self.root.join("proc/diskstats");
        let lines = read_diskstats(&file)?;
        lines
            .iter()
            .find(|l| l.major == self.major && l.minor == self.minor)
            .map(|l| l.counters)
            .ok_or_else(|| ProbeError::NoDevice {
                path: PathBuf::from(format!("/dev/{}", self.name)),
                reason: format!(
                    "device {}:{} is no longer listed in {}",
                    self.major,
                    self.minor,
                    file.display()
                ),
            })
    }
}

/// Reads and parses one diskstats file.
fn read_diskstats(file: &Path) -> Result<Vec<DiskStatLine>, ProbeError> {
    let text = fs::read_to_string(file).map_err(|e| ProbeError::io("reading", file, e))?;
    parse_diskstats(&text, file)
}

/// `DEVNAME=` from `root/sys/dev/block/MAJ:MIN/uevent`, if present.
fn uevent_devname(root: &Path, major: u32, minor: u32) -> Option<String> {
    let text =
        fs::read_to_string(root.join(format!("sys/dev/block/{major}:{minor}/uevent"))).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// What the resolver needs to know about a file: the device it lives on, and (for block
/// special files such as `/dev/sda1`) the device it *is*.
#[derive(Debug, Clone, Copy)]
struct FsDev {
    dev: (u32, u32),
    rdev: Option<(u32, u32)>,
}

/// Splits a `dev_t` into (major, minor).
fn split_dev(dev: u64) -> (u32, u32) {
    let dev = dev as libc::dev_t;
    (libc::major(dev), libc::minor(dev))
}

/// stat(2) of a path as an [`FsDev`].
fn real_fs_dev(path: &Path) -> std::io::Result<FsDev> {
    let md = fs::metadata(path)?;
    let rdev = md
        .file_type()
        .is_block_device()
        .then(|| split_dev(md.rdev()));
    Ok(FsDev {
        dev: split_dev(md.dev()),
        rdev,
    })
}

fn stat_dev(path: &Path) -> Result<(u32, u32), ProbeError> {
    real_fs_dev(path)
        .map(|d| d.dev)
        .map_err(|e| ProbeError::io("stat of", path, e))
}

/// Resolves `path` (which lives on device `dev`) to a diskstats entry below `root`.
/// `stat` is injected so tests can resolve fixture paths without real devices.
fn resolve(
    root: &Path,
    path: &Path,
    dev: (u32, u32),
    stat: &dyn Fn(&Path) -> std::io::Result<FsDev>,
    depth: usize,
) -> Result<DeviceStats, ProbeError> {
    let no_device = |reason: String| ProbeError::NoDevice {
        path: path.to_path_buf(),
        reason,
    };
    if dev.0 != 0 {
        return DeviceStats::for_dev_in(root, dev.0, dev.1).map_err(|e| match e {
            ProbeError::NoDevice { reason, .. } => {
                no_device(format!("device {}:{} {reason}", dev.0, dev.1))
            }
            other => other,
        });
    }
    let mountinfo = root.join("proc/self/mountinfo");
    let text =
        fs::read_to_string(&mountinfo).map_err(|e| ProbeError::io("reading", &mountinfo, e))?;
    let mounts = parse_mountinfo(&text, &mountinfo)?;
    let mount = mount_containing(&mounts, path).ok_or_else(|| {
        no_device(format!(
            "st_dev is {}:{} and no mount in {} contains it",
            dev.0,
            dev.1,
            mountinfo.display()
        ))
    })?;
    let fstype = mount.fstype.as_str();
    match fstype {
        "tmpfs" | "ramfs" | "devtmpfs" | "hugetlbfs" | "proc" | "sysfs" => {
            return Err(no_device(format!(
                "{fstype} has no block device: disk counters unavailable"
            )));
        }
        "overlay" => {
            let upper = mount
                .super_options
                .split(',')
                .find_map(|o| o.strip_prefix("upperdir="));
            let Some(upper) = upper else {
                return Err(no_device(
                    "read-only overlay (no upperdir) has no block device: disk counters unavailable"
                        .into(),
                ));
            };
            if depth >= MAX_OVERLAY_DEPTH {
                return Err(no_device("too many nested overlay mounts".into()));
            }
            let upper = PathBuf::from(unescape_mount_field(upper));
            let udev = stat(&upper)
                .map_err(|e| no_device(format!("overlay upperdir {}: {e}", upper.display())))?;
            return resolve(root, &upper, udev.dev, stat, depth + 1).map_err(|e| match e {
                ProbeError::NoDevice { reason, .. } => {
                    no_device(format!("overlay upperdir {}: {reason}", upper.display()))
                }
                other => other,
            });
        }
        _ => {}
    }
    let source = mount.source.as_str();
    if !source.starts_with("/dev/") {
        return Err(no_device(format!(
            "{fstype} filesystem mounted from {source:?} has no local block device: \
             disk counters unavailable"
        )));
    }
    // Real mode: the source is a block special file whose st_rdev is the device.
    if let Ok(FsDev {
        rdev: Some((maj, min)),
        ..
    }) = stat(Path::new(source))
    {
        if maj != 0 {
            if let Ok(ds) = DeviceStats::for_dev_in(root, maj, min) {
                return Ok(ds);
            }
        }
    }
    // Fixture mode (or a source without a device node): find it by name in diskstats,
    // following e.g. /dev/mapper/vg-lv -> ../dm-0 when the link exists.
    let file = root.join("proc/diskstats");
    let lines = read_diskstats(&file)?;
    let in_root = root.join(source.trim_start_matches('/'));
    let mut candidates = vec![Path::new(source)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())];
    if let Ok(target) = fs::read_link(&in_root) {
        candidates.insert(
            0,
            target.file_name().map(|n| n.to_string_lossy().into_owned()),
        );
    }
    for name in candidates.into_iter().flatten() {
        if let Some(l) = lines.iter().find(|l| l.name == name) {
            return Ok(DeviceStats {
                root: root.to_path_buf(),
                name: l.name.clone(),
                major: l.major,
                minor: l.minor,
            });
        }
    }
    Err(no_device(format!(
        "{fstype} mount source {source} is not listed in {}",
        file.display()
    )))
}

/// The fields of a `/proc/self/mountinfo` line the resolver uses.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MountEntry {
    mount_point: PathBuf,
    fstype: String,
    source: String,
    super_options: String,
}

/// Parses `/proc/self/mountinfo` (see proc(5)): fields 5 (mount point), and after the
/// `-` separator, the filesystem type, source and super options.
fn parse_mountinfo(text: &str, file: &Path) -> Result<Vec<MountEntry>, ProbeError> {
    let mut out = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let sep = fields.iter().position(|f| *f == "-");
        let (Some(sep), true) = (sep, fields.len() >= 5) else {
            return Err(ProbeError::Parse {
                file: file.to_path_buf(),
                line: idx + 1,
                reason: format!("not a mountinfo line: {line:?}"),
            });
        };
        let after = &fields[sep + 1..];
        if sep < 6 || after.len() < 2 {
            return Err(ProbeError::Parse {
                file: file.to_path_buf(),
                line: idx + 1,
                reason: format!("mountinfo line is missing fields: {line:?}"),
            });
        }
        out.push(MountEntry {
            mount_point: PathBuf::from(unescape_mount_field(fields[4])),
            fstype: after[0].to_string(),
            source: unescape_mount_field(after[1]),
            super_options: after.get(2).copied().unwrap_or("").to_string(),
        });
    }
    Ok(out)
}

/// Undoes the kernel's octal escaping of space, tab, newline and backslash (`\040` etc.).
fn unescape_mount_field(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount whose mount point is the longest prefix of `path`; among equal mount points
/// the last one listed wins, since later mounts shadow earlier ones.
fn mount_containing<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point)
            && best.is_none_or(|b| {
                m.mount_point.components().count() >= b.mount_point.components().count()
            })
        {
            best = Some(m);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const DISKSTATS: &str = include_str!("../tests/fixtures/diskstats");
    const DISKSTATS_OLD: &str = include_str!("../tests/fixtures/diskstats-14field");
    const MOUNTINFO: &str = include_str!("../tests/fixtures/mountinfo");

    /// A fixture root with proc/diskstats, proc/self/mountinfo and a few uevent files.
    fn fixture_root() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        fs::create_dir_all(r.join("proc/self")).unwrap();
        fs::write(r.join("proc/diskstats"), DISKSTATS).unwrap();
        fs::write(r.join("proc/self/mountinfo"), MOUNTINFO).unwrap();
        for (dev, name) in [
            ("8:0", "sda"),
            ("8:1", "sda1"),
            ("253:0", "dm-0"),
            ("9:0", "md0"),
            ("254:0", "vda"),
            // A device that diskstats lists under another minor: exercises the fallback.
            ("8:99", "sda2"),
        ] {
            let d = r.join("sys/dev/block").join(dev);
            fs::create_dir_all(&d).unwrap();
            let (maj, min) = dev.split_once(':').unwrap();
            fs::write(
                d.join("uevent"),
                format!("MAJOR={maj}\nMINOR={min}\nDEVNAME={name}\nDEVTYPE=disk\n"),
            )
            .unwrap();
        }
        fs::create_dir_all(r.join("dev/mapper")).unwrap();
        std::os::unix::fs::symlink("../dm-0", r.join("dev/mapper/vg0-data")).unwrap();
        dir
    }

    fn fake_stat(path: &Path) -> std::io::Result<FsDev> {
        // Overlay upper dirs in the mountinfo fixture live on /srv (ext4 on sda1 => 8:1).
        if path.starts_with("/srv") {
            Ok(FsDev {
                dev: (8, 1),
                rdev: None,
            })
        } else {
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        }
    }

    #[test]
    fn parses_20_field_format() {
        let lines = parse_diskstats(DISKSTATS, Path::new("diskstats")).unwrap();
        let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
        for want in [
            "sda",
            "sda1",
            "sda2",
            "nvme0n1",
            "nvme0n1p1",
            "dm-0",
            "md0",
            "vda",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        let vda = lines.iter().find(|l| l.name == "vda").unwrap();
        assert_eq!((vda.major, vda.minor), (254, 0));
        assert_eq!(
            vda.counters,
            DiskCounters {
                reads: 29595,
                sectors_read: 3190210,
                writes: 7462,
                sectors_written: 3483520
            }
        );
    }

    #[test]
    fn parses_14_field_and_short_partition_format() {
        let lines = parse_diskstats(DISKSTATS_OLD, Path::new("old")).unwrap();
        let sda1 = lines.iter().find(|l| l.name == "sda1").unwrap();
        assert_eq!(
            sda1.counters,
            DiskCounters {
                reads: 10412,
                sectors_read: 863354,
                writes: 6205,
                sectors_written: 1218248
            }
        );
        // 7-field partition line of pre-2.6.25 kernels.
        let hda2 = lines.iter().find(|l| l.name == "hda2").unwrap();
        assert_eq!(
            hda2.counters,
            DiskCounters {
                reads: 1570,
                sectors_read: 12560,
                writes: 340,
                sectors_written: 2720
            }
        );
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let text = format!("{}   8  3 sdz 1 2 three 4 5 6 7 8 9 10 11\n", DISKSTATS_OLD);
        let line_no = DISKSTATS_OLD.lines().count() + 1;
        let err = parse_diskstats(&text, Path::new("/proc/diskstats")).unwrap_err();
        match &err {
            ProbeError::Parse { file, line, .. } => {
                assert_eq!(file, Path::new("/proc/diskstats"));
                assert_eq!(*line, line_no);
            }
            other => panic!("unexpected {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("/proc/diskstats:{line_no}: ")),
            "{msg}"
        );
        assert!(msg.contains("three"), "{msg}");

        let short = parse_diskstats("8 0 sda 1 2 3\n", Path::new("f")).unwrap_err();
        assert!(short.to_string().starts_with("f:1: "), "{short}");
    }

    #[test]
    fn for_dev_in_picks_the_filesystems_own_device() {
        let root = fixture_root();
        for ((maj, min), want) in [
            ((8, 0), "sda"),
            ((8, 1), "sda1"),
            ((8, 2), "sda2"),
            ((259, 0), "nvme0n1"),
            ((259, 1), "nvme0n1p1"),
            ((253, 0), "dm-0"),
            ((9, 0), "md0"),
            ((254, 0), "vda"),
        ] {
            let ds = DeviceStats::for_dev_in(root.path(), maj, min).unwrap();
            assert_eq!(ds.name(), want, "{maj}:{min}");
            assert_eq!((ds.major(), ds.minor()), (maj, min));
        }
        let md0 = DeviceStats::for_dev_in(root.path(), 9, 0)
            .unwrap()
            .read()
            .unwrap();
        assert_eq!(md0.sectors_written, 2_100_000);
    }

    #[test]
    fn for_dev_in_falls_back_to_uevent_name() {
        let root = fixture_root();
        let ds = DeviceStats::for_dev_in(root.path(), 8, 99).unwrap();
        assert_eq!(ds.name(), "sda2");
        assert_eq!((ds.major(), ds.minor()), (8, 2));
    }

    #[test]
    fn unknown_and_anonymous_devices_are_errors() {
        let root = fixture_root();
        let err = DeviceStats::for_dev_in(root.path(), 65, 7).unwrap_err();
        assert!(matches!(err, ProbeError::NoDevice { .. }), "{err:?}");
        assert!(err.to_string().contains("65:7"), "{err}");
        let err = DeviceStats::for_dev_in(root.path(), 0, 33).unwrap_err();
        assert!(err.to_string().contains("anonymous"), "{err}");
    }

    #[test]
    fn read_rereads_the_file() {
        let root = fixture_root();
        let ds = DeviceStats::for_dev_in(root.path(), 254, 0).unwrap();
        let before = ds.read().unwrap();
        let bumped = DISKSTATS.replace(
            " 254       0 vda 29595 8264 3190210 14289 7462 14540 3483520 ",
            " 254       0 vda 29600 8264 3190310 14289 7470 14540 3483600 ",
        );
        assert_ne!(bumped, DISKSTATS, "fixture line for vda changed");
        fs::write(root.path().join("proc/diskstats"), bumped).unwrap();
        let d = ds.read().unwrap().delta(&before);
        assert_eq!(
            d,
            DiskCounters {
                reads: 5,
                sectors_read: 100,
                writes: 8,
                sectors_written: 80
            }
        );
    }

    #[test]
    fn delta_arithmetic() {
        let a = DiskCounters {
            reads: 10,
            sectors_read: 2048,
            writes: 7,
            sectors_written: 4096,
        };
        let b = DiskCounters {
            reads: 4,
            sectors_read: 48,
            writes: 9,
            sectors_written: 96,
        };
        let d = a.delta(&b);
        assert_eq!(
            d,
            DiskCounters {
                reads: 6,
                sectors_read: 2000,
                writes: 0, // saturates instead of wrapping
                sectors_written: 4000
            }
        );
        assert_eq!(d.read_kb(), 1000.0);
        assert_eq!(d.written_kb(), 2000.0);
        assert_eq!(d.written_bytes(), 4000 * 512);
        assert_eq!(a.delta(&a), DiskCounters::default());
    }

    #[test]
    fn major_zero_resolves_through_mountinfo() {
        let root = fixture_root();
        let r = root.path();
        // btrfs subvolume: st_dev 0:45, source /dev/nvme0n1p1.
        let ds = resolve(r, Path::new("/data/db/x"), (0, 45), &fake_stat, 0).unwrap();
        assert_eq!(ds.name(), "nvme0n1p1");
        // LVM source given as /dev/mapper symlink -> dm-0.
        let ds = resolve(r, Path::new("/mnt/lv/x"), (0, 46), &fake_stat, 0).unwrap();
        assert_eq!(ds.name(), "dm-0");
        // Mount point with an escaped space, md RAID source.
        let ds = resolve(r, Path::new("/mnt/my raid/db"), (0, 47), &fake_stat, 0).unwrap();
        assert_eq!(ds.name(), "md0");
        // overlayfs: follows upperdir (/srv/overlay/upper => 8:1 => sda1).
        let ds = resolve(r, Path::new("/var/lib/ovl/db"), (0, 48), &fake_stat, 0).unwrap();
        assert_eq!(ds.name(), "sda1");
    }

    #[test]
    fn tmpfs_and_network_filesystems_have_no_device() {
        let root = fixture_root();
        let r = root.path();
        let err = resolve(r, Path::new("/dev/shm/db"), (0, 23), &fake_stat, 0).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ProbeError::NoDevice { .. }));
        assert!(msg.contains("/dev/shm/db"), "{msg}");
        assert!(
            msg.contains("tmpfs has no block device: disk counters unavailable"),
            "{msg}"
        );
        let err = resolve(r, Path::new("/net/home/db"), (0, 50), &fake_stat, 0).unwrap_err();
        assert!(err.to_string().contains("nfs4"), "{err}");
    }

    #[test]
    fn mountinfo_longest_prefix_and_shadowing() {
        let mounts = parse_mountinfo(MOUNTINFO, Path::new("mi")).unwrap();
        let m = mount_containing(&mounts, Path::new("/data/db")).unwrap();
        assert_eq!(m.fstype, "btrfs");
        let m = mount_containing(&mounts, Path::new("/datadir")).unwrap();
        assert_eq!(m.mount_point, Path::new("/"));
        // /dev/shm is mounted twice; the later mount wins.
        let m = mount_containing(&mounts, Path::new("/dev/shm/x")).unwrap();
        assert_eq!(m.super_options, "rw,size=2048k");
        let err = parse_mountinfo("22 27 0:21 / /proc rw\n", Path::new("mi")).unwrap_err();
        assert!(err.to_string().starts_with("mi:1: "), "{err}");
    }

    /// On the real machine: a tempdir under /var/tmp resolves to a device listed in
    /// /proc/diskstats, and an fsync'd 8 MiB write shows up in its sectors_written.
    #[test]
    fn real_device_sees_fsynced_writes() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let ds = match DeviceStats::for_path(dir.path()) {
            Ok(ds) => ds,
            Err(ProbeError::NoDevice { reason, .. }) if reason.contains("tmpfs") => {
                eprintln!("/var/tmp is tmpfs here; skipping");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let listed = parse_diskstats(
            &fs::read_to_string("/proc/diskstats").unwrap(),
            Path::new("/proc/diskstats"),
        )
        .unwrap();
        assert!(
            listed.iter().any(|l| l.name == ds.name()),
            "{} not in /proc/diskstats",
            ds.name()
        );
        eprintln!("{} resolves to {}", dir.path().display(), ds.name());
        let before = ds.read().unwrap();
        let mut f = fs::File::create(dir.path().join("blob")).unwrap();
        let chunk: Vec<u8> = (0..1 << 20)
            .map(|i: u32| i.wrapping_mul(2_654_435_761) as u8)
            .collect();
        for _ in 0..8 {
            f.write_all(&chunk).unwrap();
        }
        f.sync_all().unwrap();
        let d = ds.read().unwrap().delta(&before);
        assert!(
            d.written_bytes() >= 8 << 20,
            "{}: only {} bytes written after fsync of 8 MiB",
            ds.name(),
            d.written_bytes()
        );
        assert!(d.writes > 0);
    }

    /// On the real machine: a path on tmpfs (major 0) goes through mountinfo and is refused
    /// with a reason, not mapped to some unrelated disk.
    #[test]
    fn real_tmpfs_has_no_device() {
        let dir = match tempfile::tempdir_in("/dev/shm") {
            Ok(d) => d,
            Err(_) => return, // no /dev/shm here
        };
        let mounts = parse_mountinfo(
            &fs::read_to_string("/proc/self/mountinfo").unwrap(),
            Path::new("/proc/self/mountinfo"),
        )
        .unwrap();
        let canonical = fs::canonicalize(dir.path()).unwrap();
        if mount_containing(&mounts, &canonical).map(|m| m.fstype.as_str()) != Some("tmpfs") {
            return;
        }
        let err = DeviceStats::for_path(dir.path()).unwrap_err();
        assert!(
            err.to_string()
                .contains("tmpfs has no block device: disk counters unavailable"),
            "{err}"
        );
    }
}

/// Fuzzing by property: any text, and kernel-shaped lines with their fields mangled,
/// give lines or an error naming the line, never a panic; well-formed lines read back.
/// `PROPTEST_CASES=1000000 cargo test -p plumb-probes fuzz` runs a million of each.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// Kernel-like text: fields of digits, names, escapes, parentheses and dashes.
    fn procish() -> impl Strategy<Value = String> {
        let field = prop_oneof![
            "[0-9]{1,20}",
            "-?[0-9]{1,25}",
            "[a-z]{1,8}[0-9]{0,3}",
            r"[\\/()\-a-z0-9 ]{0,12}",
            Just("-".to_string()),
            Just(r"\040".to_string()),
        ];
        proptest::collection::vec(
            proptest::collection::vec(field, 0..24).prop_map(|f| f.join(" ")),
            0..6,
        )
        .prop_map(|l| l.join("\n"))
    }

    proptest! {
        #[test]
        fn diskstats_never_panics(t in any::<String>(), k in procish()) {
            for text in [&t, &k] {
                if let Err(ProbeError::Parse { line, .. }) = parse_diskstats(text, Path::new("x")) {
                    prop_assert!(line >= 1 && line <= text.lines().count());
                }
            }
        }

        #[test]
        fn mountinfo_never_panics(t in any::<String>(), k in procish()) {
            for text in [&t, &k] {
                if let Ok(m) = parse_mountinfo(text, Path::new("x")) {
                    prop_assert!(m.len() <= text.lines().count());
                }
            }
        }

        #[test]
        fn well_formed_diskstats_lines_read_back(
            major in 0u32..4096, minor in 0u32..1_000_000, name in "[a-z]{2,6}[0-9]{0,2}",
            f in proptest::collection::vec(0u64..u64::MAX / 2, 17),
        ) {
            let fields: Vec<String> = f.iter().map(u64::to_string).collect();
            let text = format!("{major} {minor} {name} {}\n", fields.join(" "));
            let got = parse_diskstats(&text, Path::new("x")).unwrap();
            prop_assert_eq!(got.len(), 1);
            prop_assert_eq!((got[0].major, got[0].minor, &got[0].name), (major, minor, &name));
            prop_assert_eq!(got[0].counters.reads, f[0]);
            prop_assert_eq!(got[0].counters.sectors_read, f[2]);
            prop_assert_eq!(got[0].counters.writes, f[4]);
            prop_assert_eq!(got[0].counters.sectors_written, f[6]);
        }
    }
}
