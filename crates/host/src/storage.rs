//! The storage under a directory: its mount, and the chain of block devices down to the
//! physical ones, each with the queue settings that shape its I/O.

use crate::geometry::FsGeometry;
use crate::smart::DiskHealth;
use crate::sysfs::{bracketed, Fs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The filesystem holding the data directory and every block device beneath it, because
/// a database's I/O figures mean little without the device, its queue and its fullness.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Storage {
    /// The directory that was described.
    pub dir: PathBuf,
    /// Mount point of the filesystem holding `dir`.
    pub mount_point: PathBuf,
    /// Filesystem type, e.g. `ext4`, `xfs`.
    pub fs_type: String,
    /// Mount source, e.g. `/dev/vda`.
    pub source: Option<String>,
    /// Per-mount options (`rw`, `noatime`, …).
    pub mount_options: Vec<String>,
    /// Filesystem (super block) options (`discard`, `data=ordered`, …).
    pub super_options: Vec<String>,
    /// `major:minor` of the filesystem's device.
    pub majmin: String,
    /// Size of the filesystem in bytes (statvfs; live machine only).
    pub fs_total_bytes: Option<u64>,
    /// Bytes in use.
    pub fs_used_bytes: Option<u64>,
    /// Bytes available to unprivileged users.
    pub fs_free_bytes: Option<u64>,
    /// The device chain, top (the filesystem's device) first, depth-first.
    pub devices: Vec<BlockDevice>,
    /// SMART health of each physical device in the chain (or why it is unavailable).
    pub health: Vec<DiskHealth>,
    /// Block size and stripe geometry of the filesystem.
    pub geometry: Option<FsGeometry>,
    /// Physical devices under `/`, to tell whether the data shares them with the OS.
    pub os_devices: Vec<String>,
    /// Whether a physical device under the data directory also holds `/`; `None` when
    /// either side has no block device (tmpfs, unresolved).
    pub shares_os_device: Option<bool>,
}

impl Storage {
    /// Names of the physical devices in the chain.
    pub fn physical_devices(&self) -> Vec<String> {
        self.devices
            .iter()
            .filter(|d| d.physical)
            .map(|d| d.name.clone())
            .collect()
    }
}

/// One block device in the chain under a filesystem.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct BlockDevice {
    /// Kernel name, e.g. `vda`, `nvme0n1p2`, `dm-0`, `md127`.
    pub name: String,
    /// `partition`, `dm`, `md`, `nvme`, `virtio`, `scsi`, `xen`, `mmc`, `loop`, `zram`, `disk`.
    pub kind: String,
    /// 0 for the filesystem's device, increasing towards the hardware.
    pub depth: u32,
    /// Names of the devices directly below (partition parent, dm/md slaves).
    pub lower: Vec<String>,
    /// True when nothing is below it: the device that really stores the bytes.
    pub physical: bool,
    /// Device model (`device/model`), device-mapper name, or md level.
    pub model: Option<String>,
    /// Size in bytes (`size` × 512).
    pub size_bytes: Option<u64>,
    /// Queue settings; for a partition, those of the whole disk it belongs to.
    pub queue: Queue,
}

/// `/sys/block/<dev>/queue` values — the `lsblk -t` columns and a few more.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Queue {
    /// lsblk MIN-IO: `minimum_io_size` (bytes).
    pub min_io: Option<u64>,
    /// lsblk OPT-IO: `optimal_io_size` (bytes).
    pub opt_io: Option<u64>,
    /// lsblk PHY-SEC: `physical_block_size` (bytes).
    pub phy_sec: Option<u64>,
    /// lsblk LOG-SEC: `logical_block_size` (bytes).
    pub log_sec: Option<u64>,
    /// lsblk ROTA: `rotational` (virtio disks report 1 whatever backs them).
    pub rotational: Option<bool>,
    /// lsblk SCHED: the active I/O scheduler.
    pub scheduler: Option<String>,
    /// lsblk RQ-SIZE: `nr_requests`.
    pub nr_requests: Option<u64>,
    /// lsblk RA: `read_ahead_kb`.
    pub read_ahead_kb: Option<u64>,
    /// Largest request the kernel will issue, KiB; bigger reads are split.
    pub max_sectors_kb: Option<u64>,
    /// Largest request the hardware accepts, KiB.
    pub max_hw_sectors_kb: Option<u64>,
    /// `write back` (volatile cache, flushes needed) or `write through`.
    pub write_cache: Option<String>,
    /// `discard_granularity` (bytes); 0 means no discard support.
    pub discard_granularity: Option<u64>,
}

/// Describes the storage under `dir`; `Err` says why it could not be resolved.
pub(crate) fn describe(fs: &Fs, dir: &Path) -> Result<Storage, String> {
    let dir = if fs.is_live() {
        std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?
    } else if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        Path::new("/").join(dir)
    };
    let mi_path = "/proc/self/mountinfo";
    let mounts: procfs_core::process::MountInfos = fs.parse(mi_path).map_err(|e| e.to_string())?;
    let mount = mounts
        .iter()
        .filter(|m| dir.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.components().count())
        // max_by_key keeps the last of equals: the mount stacked on top.
        .ok_or_else(|| format!("no mount in {} holds {}", mi_path, dir.display()))?;
    let opts = |h: &std::collections::HashMap<String, Option<String>>| {
        let mut v: Vec<String> = h
            .iter()
            .map(|(k, v)| match v {
                Some(v) => format!("{k}={v}"),
                None => k.clone(),
            })
            .collect();
        v.sort();
        v
    };
    let mut majmin = mount.majmin.clone();
    if fs.is_live() {
        if let Ok((ma, mi)) = stat_dev(&dir) {
            majmin = format!("{ma}:{mi}");
        }
    }
    let mut st = Storage {
        dir: dir.clone(),
        mount_point: mount.mount_point.clone(),
        fs_type: mount.fs_type.clone(),
        source: mount.mount_source.clone(),
        mount_options: opts(&mount.mount_options),
        super_options: opts(&mount.super_options),
        majmin: majmin.clone(),
        ..Default::default()
    };
    if fs.is_live() {
        if let Some((total, used, free, bsize)) = statvfs(&dir) {
            st.fs_total_bytes = Some(total);
            st.fs_used_bytes = Some(used);
            st.fs_free_bytes = Some(free);
            st.geometry = Some(FsGeometry {
                statvfs_bsize: Some(bsize),
                ..Default::default()
            });
        }
    }
    let top = device_name(fs, &majmin, st.source.as_deref());
    if let Some(top) = top {
        let mut seen = BTreeSet::new();
        visit(fs, &top, 0, &mut st.devices, &mut seen);
    }
    Ok(st)
}

fn stat_dev(p: &Path) -> std::io::Result<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(p)?.dev();
    Ok((libc::major(dev), libc::minor(dev)))
}

/// (total, used, available bytes, `f_bsize`) of the filesystem holding `p`.
fn statvfs(p: &Path) -> Option<(u64, u64, u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path and s a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let f = s.f_frsize as u64;
    let total = s.f_blocks as u64 * f;
    let used = (s.f_blocks as u64).saturating_sub(s.f_bfree as u64) * f;
    Some((total, used, s.f_bavail as u64 * f, s.f_bsize as u64))
}

/// Kernel name of device `majmin`: sysfs uevent, then /proc/diskstats (via plumb-probes),
/// then the mount source when the device number is anonymous (btrfs, …).
fn device_name(fs: &Fs, majmin: &str, source: Option<&str>) -> Option<String> {
    let (ma, mi) = majmin.split_once(':')?;
    let (ma, mi): (u32, u32) = (ma.parse().ok()?, mi.parse().ok()?);
    if ma != 0 {
        if let Some(n) = fs
            .read(format!("/sys/dev/block/{majmin}/uevent"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("DEVNAME=").map(str::to_string))
            })
        {
            return Some(n);
        }
        if let Ok(d) = plumb_probes::diskstats::DeviceStats::for_dev_in(&fs.path("/"), ma, mi) {
            return Some(d.name().to_string());
        }
    }
    let src = source?.strip_prefix("/dev/")?;
    if let Some(mapper) = src.strip_prefix("mapper/") {
        return fs
            .names("/sys/block")
            .into_iter()
            .find(|n| fs.string(format!("/sys/block/{n}/dm/name")).as_deref() == Some(mapper));
    }
    let name = src.rsplit('/').next()?.to_string();
    (fs.exists(format!("/sys/class/block/{name}")) || fs.exists(format!("/sys/block/{name}")))
        .then_some(name)
}

fn visit(fs: &Fs, name: &str, depth: u32, out: &mut Vec<BlockDevice>, seen: &mut BTreeSet<String>) {
    if !seen.insert(name.to_string()) || depth > 16 {
        return;
    }
    let whole = format!("/sys/block/{name}");
    let (dir, disk, lower) = if fs.exists(&whole) {
        let lower = fs.names(format!("{whole}/slaves"));
        (whole.clone(), name.to_string(), lower)
    } else if let Some(parent) = fs
        .names("/sys/block")
        .into_iter()
        .find(|p| fs.exists(format!("/sys/block/{p}/{name}")))
    {
        (
            format!("/sys/block/{parent}/{name}"),
            parent.clone(),
            vec![parent],
        )
    } else {
        out.push(BlockDevice {
            name: name.to_string(),
            kind: "unknown".into(),
            depth,
            physical: true,
            ..Default::default()
        });
        return;
    };
    let is_partition = fs.exists(format!("{dir}/partition")) || disk != name;
    let kind = if is_partition {
        "partition"
    } else {
        kind_of(fs, name, &dir)
    };
    let model = if kind == "dm" {
        fs.string(format!("{dir}/dm/name"))
            .map(|n| format!("device-mapper {n}"))
    } else if kind == "md" {
        fs.string(format!("{dir}/md/level"))
            .map(|l| format!("md {l}"))
    } else if kind == "partition" {
        None
    } else {
        fs.string(format!("{dir}/device/model"))
            .or_else(|| (kind == "virtio").then(|| "virtio-blk".to_string()))
    };
    let q = format!("/sys/block/{disk}/queue");
    let qn = |f: &str| fs.u64(format!("{q}/{f}"));
    let queue = Queue {
        min_io: qn("minimum_io_size"),
        opt_io: qn("optimal_io_size"),
        phy_sec: qn("physical_block_size"),
        log_sec: qn("logical_block_size"),
        rotational: qn("rotational").map(|v| v != 0),
        scheduler: fs
            .string(format!("{q}/scheduler"))
            .map(|s| bracketed(&s).unwrap_or(s)),
        nr_requests: qn("nr_requests"),
        read_ahead_kb: qn("read_ahead_kb"),
        max_sectors_kb: qn("max_sectors_kb"),
        max_hw_sectors_kb: qn("max_hw_sectors_kb"),
        write_cache: fs.string(format!("{q}/write_cache")),
        discard_granularity: qn("discard_granularity"),
    };
    let physical = lower.is_empty() && !matches!(kind, "dm" | "md" | "loop" | "zram");
    out.push(BlockDevice {
        name: name.to_string(),
        kind: kind.to_string(),
        depth,
        lower: lower.clone(),
        physical,
        model,
        size_bytes: fs.u64(format!("{dir}/size")).map(|s| s * 512),
        queue,
    });
    for l in &lower {
        visit(fs, l, depth + 1, out, seen);
    }
}

fn kind_of(fs: &Fs, name: &str, dir: &str) -> &'static str {
    if fs.exists(format!("{dir}/dm")) || name.starts_with("dm-") {
        "dm"
    } else if fs.exists(format!("{dir}/md")) || name.starts_with("md") {
        "md"
    } else if name.starts_with("nvme") {
        "nvme"
    } else if name.starts_with("vd")
        || fs
            .string(format!("{dir}/device/modalias"))
            .is_some_and(|m| m.starts_with("virtio"))
    {
        "virtio"
    } else if name.starts_with("sd") {
        "scsi"
    } else if name.starts_with("xvd") {
        "xen"
    } else if name.starts_with("mmcblk") {
        "mmc"
    } else if name.starts_with("loop") {
        "loop"
    } else if name.starts_with("zram") {
        "zram"
    } else {
        "disk"
    }
}
