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

/// The `/proc/diskstats` counters plumb reports, cumulative since boot (or, after
/// [`DiskCounters::delta`], over a window).
///
/// The field numbers below are those of the kernel's
/// `Documentation/admin-guide/iostats.rst` (field 1 is the first after the device name;
/// `/proc/diskstats` columns 4–14). The four times are what `iostat -x` needs for
/// `r_await`, `w_await`, `aqu-sz` and `%util`; the old 7-field partition lines of
/// pre-2.6.25 kernels have none, so they stay 0 with `times_known` false, and every
/// figure made from them is unknown rather than 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Read requests completed (field 1).
    pub reads: u64,
    /// 512-byte sectors read (field 3).
    pub sectors_read: u64,
    /// Write requests completed (field 5).
    pub writes: u64,
    /// 512-byte sectors written (field 7).
    pub sectors_written: u64,
    /// Milliseconds spent by all reads, from queueing to completion (field 4).
    pub read_ms: u64,
    /// Milliseconds spent by all writes (field 8).
    pub write_ms: u64,
    /// Milliseconds the device had at least one request in flight, `io_ticks`
    /// (field 10): `%util`'s numerator.
    pub io_ms: u64,
    /// Weighted milliseconds doing IO, `time_in_queue` (field 11): each request's time
    /// in flight, summed, so its rate is the mean queue length (`aqu-sz`). It also
    /// counts discards and flushes, as iostat's does.
    pub queue_ms: u64,
    /// Whether the four times above were read: false for the 7-field partition format,
    /// and for a delta over which a time went backwards (the kernel prints them as 32-bit
    /// milliseconds, which wrap after 49.7 days of summed time, or the device was
    /// re-attached), whose times would be wrong.
    pub times_known: bool,
    /// Flush requests completed (field 15, kernels 5.5+): cache flushes the device was
    /// asked for, one per fsync that reached it (or fewer, when the block layer merged
    /// them), so durable commits per flush shows group commit. `None` in older formats.
    pub flushes: Option<u64>,
}

impl DiskCounters {
    /// Counters accumulated since `earlier`; saturates at zero per field so a counter reset
    /// (device re-attached) yields zeros rather than a wrapped huge number. The times of
    /// the delta are known only when both readings had them and none went backwards.
    pub fn delta(&self, earlier: &DiskCounters) -> DiskCounters {
        let times_known = self.times_known
            && earlier.times_known
            && self.read_ms >= earlier.read_ms
            && self.write_ms >= earlier.write_ms
            && self.io_ms >= earlier.io_ms
            && self.queue_ms >= earlier.queue_ms;
        DiskCounters {
            reads: self.reads.saturating_sub(earlier.reads),
            sectors_read: self.sectors_read.saturating_sub(earlier.sectors_read),
            writes: self.writes.saturating_sub(earlier.writes),
            sectors_written: self.sectors_written.saturating_sub(earlier.sectors_written),
            read_ms: self.read_ms.saturating_sub(earlier.read_ms),
            write_ms: self.write_ms.saturating_sub(earlier.write_ms),
            io_ms: self.io_ms.saturating_sub(earlier.io_ms),
            queue_ms: self.queue_ms.saturating_sub(earlier.queue_ms),
            times_known,
            flushes: match (self.flushes, earlier.flushes) {
                (Some(a), Some(b)) => Some(a.saturating_sub(b)),
                _ => None,
            },
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

    /// The device as `iostat -x` shows it, from this delta over a window of `secs`
    /// seconds; `None` when the window is empty (`secs` not above 0).
    ///
    /// The formulas are sysstat's (iostat.c `write_ext_stat`, rd_stats.c
    /// `compute_ext_disk_stats`), with the window in ms as `secs × 1000`:
    ///
    /// | figure | formula |
    /// |---|---|
    /// | r/s, w/s | reads / secs, writes / secs |
    /// | rMB/s, wMB/s | sectors × 512 / 2^20 / secs |
    /// | r_await, w_await | read_ms / reads, write_ms / writes (ms) |
    /// | rareq-sz, wareq-sz | sectors × 512 / 1024 / requests (KiB) |
    /// | aqu-sz | queue_ms / window ms |
    /// | %util | io_ms / window ms × 100 |
    /// | f/s | flushes / secs (kernels 5.5+) |
    ///
    /// Where iostat prints 0.00 for an await or request size with no requests, this
    /// gives `None`; the times' figures are `None` too when the counters had no times
    /// ([`DiskCounters::times_known`]). iostat's window is the difference of two
    /// readings of `/proc/uptime` in centiseconds (since boot for its first report);
    /// plumb's is its own monotonic clock between the two readings of the counters.
    pub fn device_io(&self, secs: f64) -> Option<plumb_core::DeviceIo> {
        if !secs.is_finite() || secs <= 0.0 {
            return None;
        }
        let window_ms = secs * 1000.0;
        let mib = |sectors: u64| (sectors * SECTOR_BYTES) as f64 / (1024.0 * 1024.0);
        let per_request = |x: f64, n: u64| (n > 0).then(|| x / n as f64);
        let times = self.times_known;
        Some(plumb_core::DeviceIo {
            r_s: self.reads as f64 / secs,
            rmb_s: mib(self.sectors_read) / secs,
            r_await_ms: per_request(self.read_ms as f64, self.reads).filter(|_| times),
            rareq_kb: per_request(self.read_kb(), self.reads),
            w_s: self.writes as f64 / secs,
            wmb_s: mib(self.sectors_written) / secs,
            w_await_ms: per_request(self.write_ms as f64, self.writes).filter(|_| times),
            wareq_kb: per_request(self.written_kb(), self.writes),
            aqu_sz: times.then(|| self.queue_ms as f64 / window_ms),
            util_pct: times.then(|| self.io_ms as f64 / window_ms * 100.0),
            f_s: self.flushes.map(|f| f as f64 / secs),
        })
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
            // Old partition format: reads, sectors read, writes, sectors written; no
            // times (`times_known` stays false).
            DiskCounters {
                reads: num(3)?,
                sectors_read: num(4)?,
                writes: num(5)?,
                sectors_written: num(6)?,
                ..DiskCounters::default()
            }
        } else {
            // Validate every numeric field so a corrupt line is reported, not half-used.
            for i in 3..n {
                num(i)?;
            }
            // Columns 4..: reads, merged, sectors, ms reading, writes, merged, sectors,
            // ms writing, in flight, ms doing IO, weighted ms doing IO, then (4.18+)
            // discards (unused) and (5.5+) flushes and ms flushing.
            DiskCounters {
                reads: num(3)?,
                sectors_read: num(5)?,
                read_ms: num(6)?,
                writes: num(7)?,
                sectors_written: num(9)?,
                write_ms: num(10)?,
                io_ms: num(12)?,
                queue_ms: num(13)?,
                times_known: true,
                flushes: if n >= 20 { Some(num(18)?) } else { None },
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
                sectors_written: 3483520,
                read_ms: 14289,
                write_ms: 7954,
                io_ms: 6216,
                queue_ms: 22699,
                times_known: true,
                flushes: Some(864),
            }
        );
        // f/s from the flush count (field 15), as iostat's f/s.
        assert_eq!(vda.counters.device_io(8.0).unwrap().f_s, Some(108.0));
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
                sectors_written: 1218248,
                read_ms: 95560,
                write_ms: 388700,
                io_ms: 82072,
                queue_ms: 484264,
                times_known: true,
                flushes: None,
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
                sectors_written: 2720,
                ..DiskCounters::default()
            }
        );
        assert!(!hda2.counters.times_known);
        // No times: the figures made of them are unknown, never 0; the rest are there.
        let io = hda2.counters.device_io(10.0).unwrap();
        assert_eq!((io.r_s, io.w_s), (157.0, 34.0));
        assert_eq!(io.rareq_kb, Some(4.0));
        assert_eq!(
            (io.r_await_ms, io.w_await_ms, io.aqu_sz, io.util_pct),
            (None, None, None, None)
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
                sectors_written: 80,
                times_known: true,
                flushes: Some(0),
                ..DiskCounters::default()
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
            read_ms: 50,
            write_ms: 70,
            io_ms: 90,
            queue_ms: 200,
            times_known: true,
            flushes: Some(12),
        };
        let b = DiskCounters {
            reads: 4,
            sectors_read: 48,
            writes: 9,
            sectors_written: 96,
            read_ms: 20,
            write_ms: 10,
            io_ms: 30,
            queue_ms: 40,
            times_known: true,
            flushes: Some(5),
        };
        let d = a.delta(&b);
        assert_eq!(
            d,
            DiskCounters {
                reads: 6,
                sectors_read: 2000,
                writes: 0, // saturates instead of wrapping
                sectors_written: 4000,
                read_ms: 30,
                write_ms: 60,
                io_ms: 60,
                queue_ms: 160,
                times_known: true,
                flushes: Some(7),
            }
        );
        assert_eq!(d.read_kb(), 1000.0);
        assert_eq!(d.written_kb(), 2000.0);
        assert_eq!(d.written_bytes(), 4000 * 512);
        assert_eq!(
            a.delta(&a),
            DiskCounters {
                times_known: true,
                flushes: Some(0),
                ..DiskCounters::default()
            }
        );
        // A reading without the flush count (an older kernel's format) gives none.
        let no_flush = DiskCounters { flushes: None, ..b };
        assert_eq!(a.delta(&no_flush).flushes, None);
        // A time that went backwards (32-bit ms wrap, device re-attached) saturates
        // like the rest, and the delta's times are unknown rather than a wrong 0.
        let wrapped = DiskCounters { io_ms: 5, ..a };
        let d = wrapped.delta(&b);
        assert_eq!(d.io_ms, 0);
        assert!(!d.times_known);
        // Times are known only if both readings had them.
        let old = DiskCounters {
            times_known: false,
            ..b
        };
        assert!(!a.delta(&old).times_known && !old.delta(&old).times_known);
    }

    /// iostat's figures from a hand-computed delta over 2 s: 400 reads of 4 KiB taking
    /// 300 ms in all, 50 writes of 128 KiB taking 1 s, the device busy 1.5 s with 1.3 s
    /// of request time summed.
    #[test]
    fn device_io_formulas() {
        let d = DiskCounters {
            reads: 400,
            sectors_read: 400 * 8,
            writes: 50,
            sectors_written: 50 * 256,
            read_ms: 300,
            write_ms: 1000,
            io_ms: 1500,
            queue_ms: 1300,
            times_known: true,
            flushes: None,
        };
        let io = d.device_io(2.0).unwrap();
        assert_eq!(io.r_s, 200.0);
        assert_eq!(io.rmb_s, 0.78125); // 1.5625 MiB / 2 s
        assert_eq!(io.r_await_ms, Some(0.75));
        assert_eq!(io.rareq_kb, Some(4.0));
        assert_eq!(io.w_s, 25.0);
        assert_eq!(io.wmb_s, 3.125); // 6.25 MiB / 2 s
        assert_eq!(io.w_await_ms, Some(20.0));
        assert_eq!(io.wareq_kb, Some(128.0));
        assert_eq!(io.aqu_sz, Some(0.65));
        assert_eq!(io.util_pct, Some(75.0));

        // No writes: their await and size are unknown, not 0; rates are 0.
        let reads_only = DiskCounters {
            writes: 0,
            sectors_written: 0,
            write_ms: 0,
            ..d
        };
        let io = reads_only.device_io(0.5).unwrap();
        assert_eq!((io.w_s, io.wmb_s), (0.0, 0.0));
        assert_eq!((io.w_await_ms, io.wareq_kb), (None, None));
        assert_eq!(io.r_s, 800.0);
        assert_eq!(io.util_pct, Some(300.0)); // 1.5 s busy in 0.5 s: iostat prints it too
                                              // An idle device: %util and aqu-sz are a measured 0.
        let idle = DiskCounters {
            times_known: true,
            ..DiskCounters::default()
        }
        .device_io(1.0)
        .unwrap();
        assert_eq!((idle.util_pct, idle.aqu_sz), (Some(0.0), Some(0.0)));
        assert_eq!((idle.r_await_ms, idle.rareq_kb), (None, None));
        // An empty or broken window has no figures.
        for secs in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(d.device_io(secs), None, "{secs}");
        }
    }

    /// The same formulas on the fixture's since-boot counters, checked against what
    /// iostat's first report prints for them over a given uptime.
    #[test]
    fn device_io_of_fixture_lines() {
        let lines = parse_diskstats(DISKSTATS, Path::new("diskstats")).unwrap();
        let nvme = lines.iter().find(|l| l.name == "nvme0n1").unwrap();
        // 1532774 reads in 312441 ms; 98144218 sectors; busy 1846420 ms; weighted
        // 3566321 ms; over 10000 s of uptime.
        let io = nvme.counters.device_io(10_000.0).unwrap();
        assert!((io.r_s - 153.2774).abs() < 1e-9);
        assert!((io.rmb_s - 98144218.0 * 512.0 / 1048576.0 / 10_000.0).abs() < 1e-9);
        assert!((io.r_await_ms.unwrap() - 312441.0 / 1532774.0).abs() < 1e-12);
        assert!((io.rareq_kb.unwrap() - 98144218.0 / 2.0 / 1532774.0).abs() < 1e-9);
        assert!((io.w_await_ms.unwrap() - 3120775.0 / 2815539.0).abs() < 1e-12);
        assert!((io.aqu_sz.unwrap() - 0.3566321).abs() < 1e-12);
        assert!((io.util_pct.unwrap() - 18.4642).abs() < 1e-9);
        // md devices keep no times: the kernel prints zeros, which are a measured 0.
        let md0 = lines.iter().find(|l| l.name == "md0").unwrap();
        let io = md0.counters.device_io(100.0).unwrap();
        assert_eq!(io.r_await_ms, Some(0.0));
        assert_eq!(io.util_pct, Some(0.0));
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
            prop_assert_eq!(got[0].counters.read_ms, f[3]);
            prop_assert_eq!(got[0].counters.write_ms, f[7]);
            prop_assert_eq!(got[0].counters.io_ms, f[9]);
            prop_assert_eq!(got[0].counters.queue_ms, f[10]);
            prop_assert!(got[0].counters.times_known);
        }
    }
}
