//! Disk probe: sequential write and read (1 MiB requests by default), random read and
//! write at 4, 8 and 16 KiB over a jobs × depth grid, and the commit rate (4 KiB write +
//! fdatasync) at 1 and N threads, each through O_DIRECT and through the page cache, on a
//! file plumb creates and removes; or, with `--device`, reads only on a raw block device.
//! An optional position scan (bonnie++'s zcav) reads N equal slices one after another.

pub mod device;
pub mod file;
pub mod io;

use crate::plan::{self, Grid};
use crate::{ceiling, measured, ProbeError, ProbeReport};
use device::RawDevice;
use file::{drop_cache, settle, ProbeFile};
use io::{regions, uring_available, Pattern, Region, Worker};
use io_uring::IoUring;
use plumb_probes::diskstats::DeviceStats;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

/// Sequential request size.
pub const SEQ_BS: usize = 1 << 20;
/// Random and commit request size: the size today's step names without a size mean.
pub const RAND_BS: usize = 4096;
/// Random request sizes by default: 4 KiB (the classic IOPS figure), 8 KiB (the
/// PostgreSQL and InnoDB page) and 16 KiB (InnoDB's default page, RocksDB blocks after
/// compression often land between).
pub const RAND_BS_DEFAULT: [usize; 3] = [4096, 8192, 16384];
/// `--quick` keeps 4 and 8 KiB only, so a quick run stays within seconds per mode.
pub const RAND_BS_QUICK: [usize; 2] = [4096, 8192];
/// Requests of this size or more are sequential sizes in `--bs`; smaller ones random.
/// Smaller sequential sizes (the deck's `dd bs=8k`) are asked for with `--seq-bs`.
pub const SEQ_MIN_BS: usize = 128 << 10;
/// The smallest logical block a Linux block device has: every request size is a
/// multiple of it. Whether O_DIRECT accepts a size is the device's own logical block
/// ([`check_direct_bs`]).
pub const SECTOR: usize = 512;
/// Largest request accepted by `--bs`.
pub const MAX_BS: usize = 64 << 20;
/// Position-scan slices by default (and with `--quick`).
pub const ZCAV_SLICES: (usize, usize) = (16, 8);

/// Whether IO goes through the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// O_DIRECT: the device's figure.
    Direct,
    /// Through the page cache, with this file's pages dropped before each step.
    Buffered,
}

impl Mode {
    /// Stored name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Buffered => "buffered",
        }
    }
}

/// Which parts of the disk probe run (all by default; `--tests` narrows it for a
/// side-by-side comparison with fio).
#[derive(Debug, Clone, PartialEq)]
pub struct DiskOptions {
    /// Directory to create the probe file in (unused with `device`).
    pub dir: PathBuf,
    /// A raw block device to read instead of a file (`--device`): reads only.
    pub device: Option<PathBuf>,
    /// File size; `None` picks [`plan::default_size`] (or [`plan::QUICK_SIZE`]).
    pub size: Option<u64>,
    /// The short run.
    pub quick: bool,
    /// Random IO grid.
    pub grid: Grid,
    /// Seconds per step; `None` = 5 (1 with quick).
    pub secs: Option<f64>,
    /// IO modes, in order.
    pub modes: Vec<Mode>,
    /// Patterns, in order.
    pub patterns: Vec<Pattern>,
    /// Random read and write request sizes, ascending.
    pub rand_bs: Vec<usize>,
    /// Sequential request sizes, ascending.
    pub seq_bs: Vec<usize>,
    /// Slices of the position scan, when `patterns` holds [`Pattern::Zcav`].
    pub zcav_slices: usize,
    /// Random 4 KiB writes over the file for this long before measuring
    /// ([`precondition`]); `None`: the sequential fill only.
    pub precondition: Option<Duration>,
}

impl DiskOptions {
    /// Every pattern but the position scan, in both modes, on the default grid and
    /// request sizes (or the quick ones).
    pub fn new(dir: PathBuf, quick: bool) -> DiskOptions {
        DiskOptions {
            dir,
            device: None,
            size: None,
            quick,
            grid: if quick { Grid::quick() } else { Grid::full() },
            secs: None,
            modes: vec![Mode::Direct, Mode::Buffered],
            patterns: vec![
                Pattern::SeqWrite,
                Pattern::SeqRead,
                Pattern::RandRead,
                Pattern::RandWrite,
                Pattern::Commit,
            ],
            rand_bs: if quick {
                RAND_BS_QUICK.to_vec()
            } else {
                RAND_BS_DEFAULT.to_vec()
            },
            seq_bs: vec![SEQ_BS],
            zcav_slices: if quick { ZCAV_SLICES.1 } else { ZCAV_SLICES.0 },
            precondition: None,
        }
    }

    /// Reads only, O_DIRECT only, on the block device `dev`: sequential and random read.
    pub fn for_device(dev: PathBuf, quick: bool) -> DiskOptions {
        DiskOptions {
            device: Some(dev),
            modes: vec![Mode::Direct],
            patterns: vec![Pattern::SeqRead, Pattern::RandRead],
            ..DiskOptions::new(PathBuf::new(), quick)
        }
    }
}

/// Parses `--tests seqwrite,seqread,rewrite,randread,randwrite,commit,zcav`.
pub fn parse_patterns(s: &str) -> Result<Vec<Pattern>, ProbeError> {
    let mut v = Vec::new();
    for p in s.split(',').map(str::trim) {
        let pat = match p {
            "seqwrite" => Pattern::SeqWrite,
            "seqread" => Pattern::SeqRead,
            "rewrite" => Pattern::Rewrite,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "commit" | "fsync" => Pattern::Commit,
            "zcav" => Pattern::Zcav,
            _ => {
                return Err(ProbeError::BadOption {
                    option: "--tests",
                    value: s.to_string(),
                    reason: format!(
                    "{p:?} is not one of seqwrite, seqread, rewrite, randread, randwrite, commit, \
                         zcav"
                ),
                })
            }
        };
        if !v.contains(&pat) {
            v.push(pat);
        }
    }
    Ok(v)
}

/// One size list of `option`: each a multiple of [`SECTOR`] and at most [`MAX_BS`];
/// whether O_DIRECT takes it is checked against the device in [`prepare`].
fn parse_sizes(option: &'static str, s: &str) -> Result<Vec<usize>, ProbeError> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim) {
        let b = plan::parse_size(option, part)? as usize;
        if !b.is_multiple_of(SECTOR) || b > MAX_BS {
            return Err(ProbeError::BadOption {
                option,
                value: s.to_string(),
                reason: format!(
                    "{part:?}: each size must be a multiple of 512 bytes (a logical block) and \
                     at most 64m; give e.g. 4k,8k,16k,1m"
                ),
            });
        }
        v.push(b);
    }
    Ok(v)
}

/// Sorted, without repeats.
fn ascending(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Parses `--bs 4k,8k,16k,1m` into (random sizes, sequential sizes), each ascending:
/// sizes below [`SEQ_MIN_BS`] are random request sizes, larger ones sequential. A kind
/// the list leaves out keeps its classic size (4 KiB random, 1 MiB sequential), so every
/// pattern still has a size.
pub fn parse_bs(s: &str) -> Result<(Vec<usize>, Vec<usize>), ProbeError> {
    request_sizes(Some(s), None, &[])
}

/// Parses `--seq-bs 8k,1m`: sequential request sizes of any size (the deck's `dd bs=8k`
/// is sequential at 8 KiB), ascending.
pub fn parse_seq_bs(s: &str) -> Result<Vec<usize>, ProbeError> {
    Ok(ascending(parse_sizes("--seq-bs", s)?))
}

/// The (random, sequential) request sizes of `--bs` and `--seq-bs`: `--bs` splits at
/// [`SEQ_MIN_BS`] as it always has (its random sizes replace `default_rand`, else 4 KiB
/// when it lists only sequential ones); `--seq-bs` adds sequential sizes of any size.
/// Sequential sizes neither list gives are the classic 1 MiB.
pub fn request_sizes(
    bs: Option<&str>,
    seq_bs: Option<&str>,
    default_rand: &[usize],
) -> Result<(Vec<usize>, Vec<usize>), ProbeError> {
    let (mut rand, mut seq): (Vec<usize>, Vec<usize>) = match bs {
        Some(s) => parse_sizes("--bs", s)?
            .into_iter()
            .partition(|&b| b < SEQ_MIN_BS),
        None => (default_rand.to_vec(), Vec::new()),
    };
    if let Some(s) = seq_bs {
        seq.extend(parse_seq_bs(s)?);
    }
    if rand.is_empty() {
        rand.push(RAND_BS);
    }
    if seq.is_empty() {
        seq.push(SEQ_BS);
    }
    Ok((ascending(rand), ascending(seq)))
}

/// Refuses O_DIRECT request sizes the device's logical block does not divide: O_DIRECT
/// IO must be a whole number of logical blocks (512 bytes on most disks, 4096 on 4Kn
/// drives and some NVMe formats). `lbs` is the device's `queue/logical_block_size`;
/// unknown (no block device found), 4096 is required, which every device accepts.
pub fn check_direct_bs(sizes: &[usize], lbs: Option<u64>, device: &str) -> Result<(), ProbeError> {
    let block = lbs.unwrap_or(file::ALIGN as u64).max(SECTOR as u64) as usize;
    let Some(&bad) = sizes.iter().find(|&&b| !b.is_multiple_of(block)) else {
        return Ok(());
    };
    let why = match lbs {
        Some(l) => format!("the logical block size of {device} is {l} bytes"),
        None => format!(
            "the logical block size of the device under {device} is unknown, so 4096 is \
             required"
        ),
    };
    Err(ProbeError::BadOption {
        option: "--bs/--seq-bs",
        value: bs_label(bad),
        reason: format!(
            "{bad} bytes is not a multiple of {block}: {why}, and O_DIRECT reads and \
             writes whole logical blocks; give a multiple of {block}, or --io buffered"
        ),
    })
}

/// A request size as step and ceiling names say it: `512b`, `4k`, `16k`, `1m`, `1536k`.
pub fn bs_label(bs: usize) -> String {
    if bs >= SEQ_BS && bs.is_multiple_of(SEQ_BS) {
        format!("{}m", bs / SEQ_BS)
    } else if bs.is_multiple_of(1024) {
        format!("{}k", bs / 1024)
    } else {
        format!("{bs}b")
    }
}

/// Parses `--io direct|buffered|both`.
pub fn parse_modes(s: &str) -> Result<Vec<Mode>, ProbeError> {
    match s {
        "direct" => Ok(vec![Mode::Direct]),
        "buffered" => Ok(vec![Mode::Buffered]),
        "both" => Ok(vec![Mode::Direct, Mode::Buffered]),
        _ => Err(ProbeError::BadOption {
            option: "--io",
            value: s.to_string(),
            reason: "give direct, buffered or both".into(),
        }),
    }
}

/// A checked plan: nothing has been written yet.
#[derive(Debug, Clone)]
pub struct DiskPlan {
    /// The options it came from.
    pub opts: DiskOptions,
    /// The file size (the whole device with `--device`).
    pub size: u64,
    /// Why that size.
    pub size_why: String,
    /// Seconds per step.
    pub secs: f64,
    /// Thread counts of the commit step: 1 and N.
    pub commit_threads: Vec<usize>,
}

impl DiskPlan {
    /// What is measured: the directory the file goes in, or the device.
    pub fn place(&self) -> &Path {
        self.opts.device.as_deref().unwrap_or(&self.opts.dir)
    }
}

/// Checks the directory (or device), the size and free space, and the options; refuses
/// with a clear message before anything is created.
pub fn prepare(o: DiskOptions) -> Result<DiskPlan, ProbeError> {
    let (size, size_why) = match &o.device {
        Some(dev) => {
            if let Some(p) = o.patterns.iter().find(|p| p.writes()) {
                return Err(ProbeError::BadOption {
                    option: "--tests",
                    value: p.name().into(),
                    reason: format!(
                        "--device {} is probed read-only; give seqread, randread or zcav",
                        dev.display()
                    ),
                });
            }
            if !o.modes.contains(&Mode::Direct) {
                return Err(ProbeError::BadOption {
                    option: "--io",
                    value: "buffered".into(),
                    reason: "--device reads with O_DIRECT only; give --io direct".into(),
                });
            }
            // Opening read-only touches nothing; it also tells the size.
            let d = RawDevice::open(dev)?;
            (
                d.size,
                format!(
                    "the whole device {} ({})",
                    dev.display(),
                    plan::human(d.size)
                ),
            )
        }
        None => {
            let space = plan::check_dir(&o.dir)?;
            let (size, why) = match (o.size, o.quick) {
                (Some(s), _) => (
                    plan::round_down_mib(s),
                    format!("{} from --size", plan::human(s)),
                ),
                (None, true) => (
                    plan::QUICK_SIZE,
                    format!(
                        "{} (--quick): this file's pages are dropped before buffered steps, \
                         but quick figures are indicative only",
                        plan::human(plan::QUICK_SIZE)
                    ),
                ),
                (None, false) => {
                    plan::default_size_capped(&o.dir, plan::mem_total(), space.total, space.avail)?
                }
            };
            plan::check_size(&o.dir, size, space.total, space.avail)?;
            (size, why)
        }
    };
    if o.modes.contains(&Mode::Direct) {
        let (name, lbs) = logical_block(&o);
        let sizes: Vec<usize> = o.rand_bs.iter().chain(&o.seq_bs).copied().collect();
        check_direct_bs(&sizes, lbs, &name)?;
    }
    let secs = o.secs.unwrap_or(if o.quick { 1.0 } else { 5.0 });
    if !(secs > 0.0 && secs.is_finite() && secs <= 86_400.0) {
        return Err(ProbeError::BadOption {
            option: "--secs",
            value: secs.to_string(),
            reason: "must be a number of seconds in (0, 86400]".into(),
        });
    }
    if o.grid.jobs.is_empty()
        || o.grid.depths.is_empty()
        || o.modes.is_empty()
        || o.rand_bs.is_empty()
        || o.seq_bs.is_empty()
    {
        return Err(ProbeError::BadOption {
            option: "--jobs/--depths/--io/--bs",
            value: String::new(),
            reason: "nothing to run".into(),
        });
    }
    if !(1..=1000).contains(&o.zcav_slices) {
        return Err(ProbeError::BadOption {
            option: "--zcav",
            value: o.zcav_slices.to_string(),
            reason: "give 1 to 1000 slices".into(),
        });
    }
    let n = o.grid.max_jobs().max(2);
    Ok(DiskPlan {
        commit_threads: vec![1, n],
        size,
        size_why,
        secs,
        opts: o,
    })
}

/// The device O_DIRECT IO goes to and its `queue/logical_block_size`: the `--device`
/// given, or the block device under `--dir` (a partition's is its disk's); the name is
/// the directory's when no block device is found under it (tmpfs, overlay, NFS).
fn logical_block(o: &DiskOptions) -> (String, Option<u64>) {
    let name = match &o.device {
        Some(dev) => device::kernel_name(dev),
        None => DeviceStats::for_path(&o.dir)
            .ok()
            .map(|d| d.name().to_string()),
    };
    match name {
        Some(n) => {
            let lbs = device::sysfs_facts(&n).logical_block_size;
            (n, lbs)
        }
        None => (
            o.device.as_deref().unwrap_or(&o.dir).display().to_string(),
            None,
        ),
    }
}

/// Writes the whole file once with 1 MiB direct (else buffered) writes and syncs it, so
/// reads hit allocated, written blocks, not holes the filesystem answers with zeros.
fn layout(f: &ProbeFile, stop: &AtomicBool) -> Result<(), ProbeError> {
    let file = f.direct.as_ref().unwrap_or(&f.buffered);
    let fd = file.as_raw_fd();
    let mut buf = file::AlignedBuf::new(SEQ_BS, 42).map_err(|e| ProbeError::Io {
        what: "allocating a buffer for",
        path: f.path().to_path_buf(),
        err: std::io::Error::other(e),
    })?;
    let mut off = 0u64;
    while off < f.size {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        // Vary each block so deduplication cannot collapse the file.
        buf.as_mut_slice()[..8].copy_from_slice(&off.to_le_bytes());
        let len = (f.size - off).min(SEQ_BS as u64) as usize;
        // SAFETY: buf holds SEQ_BS ≥ len bytes; fd is open.
        let r = unsafe { libc::pwrite(fd, buf.ptr_at(0).cast(), len, off as libc::off_t) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(ProbeError::io("writing", f.path(), e));
        }
        off += r as u64;
    }
    synced_and_dropped(f, fd)
}

/// Syncs what was written to `f` through `fd` and drops it from the page cache, so the
/// first measured step neither pays for the writes nor reads them from memory.
fn synced_and_dropped(f: &ProbeFile, fd: std::os::unix::io::RawFd) -> Result<(), ProbeError> {
    // SAFETY: valid fd.
    if unsafe { libc::fdatasync(fd) } != 0 {
        return Err(ProbeError::io(
            "syncing",
            f.path(),
            std::io::Error::last_os_error(),
        ));
    }
    drop_cache(&f.buffered, false);
    Ok(())
}

/// The request size of [`precondition`]'s random writes: the page an SSD's flash
/// translation layer maps, so every write remaps one.
pub const PRECONDITION_BS: usize = 4096;

/// Overwrites `f` with [`PRECONDITION_BS`] writes at random aligned offsets for `d`, one
/// at a time (O_DIRECT where the file has it), then syncs: what the measured steps meet
/// is a drive whose blocks have all been rewritten out of order at least in part, not a
/// fresh one. Returns the writes made. Stops early on Ctrl-C.
pub fn precondition(f: &ProbeFile, d: Duration, stop: &AtomicBool) -> Result<u64, ProbeError> {
    let file = f.direct.as_ref().unwrap_or(&f.buffered);
    let fd = file.as_raw_fd();
    let mut buf = file::AlignedBuf::new(PRECONDITION_BS, 7).map_err(|e| ProbeError::Io {
        what: "allocating a buffer for",
        path: f.path().to_path_buf(),
        err: std::io::Error::other(e),
    })?;
    let blocks = (f.size / PRECONDITION_BS as u64).max(1);
    let mut rng = crate::rng::Rng::new(0x9c0d);
    let until = std::time::Instant::now() + d;
    let mut n = 0u64;
    while std::time::Instant::now() < until && !stop.load(Ordering::Relaxed) {
        let off = rng.below(blocks) * PRECONDITION_BS as u64;
        buf.as_mut_slice()[..8].copy_from_slice(&n.to_le_bytes());
        // SAFETY: buf holds PRECONDITION_BS bytes, aligned for O_DIRECT; fd is open.
        let r = unsafe {
            libc::pwrite(
                fd,
                buf.ptr_at(0).cast(),
                PRECONDITION_BS,
                off as libc::off_t,
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(ProbeError::io("preconditioning", f.path(), e));
        }
        n += 1;
    }
    synced_and_dropped(f, fd)?;
    Ok(n)
}

/// One step to run.
#[derive(Debug, Clone, Copy)]
struct StepSpec {
    pattern: Pattern,
    mode: Mode,
    jobs: usize,
    depth: usize,
    bs: usize,
    /// The position scan's slice: its index and where it lies.
    slice: Option<(usize, Region)>,
}

impl StepSpec {
    /// The size as a name suffix: none for the classic sizes (4 KiB random, 1 MiB
    /// sequential), so runs stored before `--bs` existed compare step by step.
    fn size_tag(&self) -> String {
        let classic = match self.pattern {
            Pattern::SeqRead | Pattern::SeqWrite | Pattern::Rewrite | Pattern::Zcav => SEQ_BS,
            _ => RAND_BS,
        };
        if self.bs == classic {
            String::new()
        } else {
            bs_label(self.bs)
        }
    }
    fn name(&self) -> String {
        let m = self.mode.name();
        let (p, b) = (self.pattern.name(), self.size_tag());
        match self.pattern {
            Pattern::SeqRead | Pattern::SeqWrite | Pattern::Rewrite => format!("{p}{b}.{m}"),
            Pattern::Commit => format!("commit.{m}.t{}", self.jobs),
            Pattern::Zcav => format!("zcav.{:03}", self.slice.map_or(0, |s| s.0)),
            _ => format!("{p}{b}.{m}.j{}.qd{}", self.jobs, self.depth),
        }
    }
    /// The ceiling's name and unit; `None` for the position scan's slices. `prefix` is
    /// `disk` for a file, `blockdev` for a raw device (so a read-only device probe does
    /// not replace a filesystem's write ceilings).
    fn ceiling_name(&self, prefix: &str) -> Option<(String, &'static str)> {
        let m = if self.mode == Mode::Buffered {
            ".buffered"
        } else {
            ""
        };
        let j = if self.jobs > 1 {
            format!(".j{}", self.jobs)
        } else {
            String::new()
        };
        let b = bs_label(self.bs);
        let (p, d) = (self.pattern.name(), self.depth);
        Some(match self.pattern {
            Pattern::SeqRead | Pattern::SeqWrite | Pattern::Rewrite => {
                (format!("{prefix}.{p}_{b}_mbs{m}"), "MB/s")
            }
            Pattern::RandRead | Pattern::RandWrite => {
                (format!("{prefix}.{p}_{b}_iops{m}{j}.qd{d}"), "IOPS")
            }
            Pattern::Commit => (
                format!("{prefix}.commit_per_sec{m}.t{}", self.jobs),
                "commits/s",
            ),
            Pattern::Zcav => return None,
        })
    }
}

/// The steps of a plan, in run order: per mode, sequential write and read at each size,
/// the random read grid at each size, the random write grid, then commits; the position
/// scan last, once, O_DIRECT when the filesystem allows it.
fn steps(p: &DiskPlan, direct_ok: bool) -> Vec<StepSpec> {
    let mut v = Vec::new();
    let o = &p.opts;
    for &mode in &o.modes {
        if mode == Mode::Direct && !direct_ok {
            continue;
        }
        for &pattern in &o.patterns {
            let mut push = |jobs, depth, bs| {
                v.push(StepSpec {
                    pattern,
                    mode,
                    jobs,
                    depth,
                    bs,
                    slice: None,
                })
            };
            match pattern {
                Pattern::SeqRead | Pattern::SeqWrite | Pattern::Rewrite => {
                    for &bs in &o.seq_bs {
                        push(1, 1, bs)
                    }
                }
                Pattern::RandRead | Pattern::RandWrite => {
                    for &bs in &o.rand_bs {
                        for c in o.grid.cells() {
                            push(c.jobs, c.depth, bs)
                        }
                    }
                }
                Pattern::Commit => {
                    for &t in &p.commit_threads {
                        push(t, 1, RAND_BS)
                    }
                }
                Pattern::Zcav => {}
            }
        }
    }
    if o.patterns.contains(&Pattern::Zcav) {
        let mode = if direct_ok && o.modes.contains(&Mode::Direct) {
            Mode::Direct
        } else {
            Mode::Buffered
        };
        for (i, r) in regions(p.size, SEQ_BS as u64, o.zcav_slices)
            .into_iter()
            .enumerate()
        {
            v.push(StepSpec {
                pattern: Pattern::Zcav,
                mode,
                jobs: 1,
                depth: 1,
                bs: SEQ_BS,
                slice: Some((i, r)),
            });
        }
    }
    v
}

/// What the steps read and write: the probe file's two handles, or a device's one.
struct Subject<'a> {
    direct: Option<&'a File>,
    buffered: &'a File,
    path: &'a Path,
    /// Whether anything may be written (false for a raw device).
    writable: bool,
}

/// Runs the disk probe: on a new file under the plan's directory (removed when this
/// returns, whatever happened), or read-only on the plan's block device. Before each step
/// the file is synced, untimed ([`settle`]), so no step pays for the previous one's
/// write-back; the time that took is kept in the step's config as `settle_fdatasync_ms`.
pub fn run(p: &DiskPlan, stop: &AtomicBool) -> Result<ProbeReport, ProbeError> {
    let mut rep = ProbeReport::default();
    if let Some(dev) = &p.opts.device {
        let d = RawDevice::open(dev)?;
        rep.notes.push(format!(
            "disk: block device {} ({}), read-only, O_DIRECT",
            d.path().display(),
            plan::human(d.size)
        ));
        // Blocks never written read as zeros, and an SSD serves those without its flash.
        match device::zero_blocks(&d.file, d.size, device::ZERO_SAMPLES) {
            Ok((zeros, n)) => rep.notes.extend(device::zero_note(d.path(), zeros, n)),
            Err(e) => rep.notes.push(format!(
                "disk: could not sample {} for never-written blocks: {e}",
                d.path().display()
            )),
        }
        let stats = device_stats(dev);
        let s = Subject {
            direct: Some(&d.file),
            buffered: &d.file,
            path: d.path(),
            writable: false,
        };
        measure(p, &s, stats.as_ref(), "blockdev", &mut rep, stop)?;
        return Ok(rep);
    }
    let f = ProbeFile::create(&p.opts.dir, p.size)?;
    rep.notes.push(format!(
        "disk: file {} of {}",
        f.path().display(),
        p.size_why
    ));
    if f.direct.is_none() {
        rep.notes.push(format!(
            "disk: the filesystem under {} refuses O_DIRECT; direct steps skipped",
            p.opts.dir.display()
        ));
    }
    let stats = DeviceStats::for_path(&p.opts.dir).ok();
    layout(&f, stop)?;
    if let Some(d) = p.opts.precondition {
        let n = precondition(&f, d, stop)?;
        rep.notes.push(format!(
            "disk: preconditioned: after the sequential fill, {n} random 4 KiB writes in {:.0} s \
             ({:.2}× the file{}), unmeasured",
            d.as_secs_f64(),
            (n * PRECONDITION_BS as u64) as f64 / p.size as f64,
            if f.direct.is_some() {
                ", O_DIRECT"
            } else {
                ", buffered then synced"
            }
        ));
    }
    let s = Subject {
        direct: f.direct.as_ref(),
        buffered: &f.buffered,
        path: f.path(),
        writable: true,
    };
    measure(p, &s, stats.as_ref(), "disk", &mut rep, stop)?;
    drop(f);
    Ok(rep)
}

/// The diskstats entry of a block device node (its `st_rdev`).
fn device_stats(dev: &Path) -> Option<DeviceStats> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(dev).ok()?.rdev();
    DeviceStats::for_dev_in(Path::new("/"), libc::major(rdev), libc::minor(rdev)).ok()
}

/// Runs every step of the plan on `s`, adding steps, ceilings and notes to `rep`.
fn measure(
    p: &DiskPlan,
    s: &Subject,
    dev: Option<&DeviceStats>,
    prefix: &str,
    rep: &mut ProbeReport,
    stop: &AtomicBool,
) -> Result<(), ProbeError> {
    let uring = uring_available();
    if let Err(e) = &uring {
        rep.notes.push(format!(
            "disk: io_uring unavailable ({e}); depth > 1 runs jobs × depth threads with pread/pwrite"
        ));
    }
    if dev.is_none() {
        rep.notes
            .push("disk: no block device found for the directory; device counters absent".into());
    }
    for st in steps(p, s.direct.is_some()) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let file = match st.mode {
            Mode::Direct => s.direct.unwrap_or(s.buffered),
            Mode::Buffered => s.buffered,
        };
        let settled = if s.writable {
            Some(settle(file).map_err(|e| ProbeError::io("syncing", s.path, e))?)
        } else {
            None
        };
        if st.mode == Mode::Buffered {
            drop_cache(file, st.pattern.random());
        }
        let fd = file.as_raw_fd();
        let bs = st.bs;
        let use_uring = st.depth > 1 && uring.is_ok();
        let threads = if st.depth > 1 && !use_uring {
            st.jobs * st.depth
        } else {
            st.jobs
        };
        let regs: Vec<Region> = match (st.pattern, st.slice) {
            (Pattern::Commit, _) => regions(p.size, bs as u64, threads),
            (_, Some((_, r))) => vec![r],
            _ => vec![
                Region {
                    start: 0,
                    blocks: (p.size / bs as u64).max(1)
                };
                threads
            ],
        };
        let sync_at_end = st.mode == Mode::Buffered && s.writable;
        let depth = st.depth;
        // Whether worker 0's buffer got the huge page it asked for: 0 = not asked or
        // unknown, 1 = no, 2 = yes.
        let huge = AtomicU8::new(0);
        let setup = |i: usize| -> Result<(Worker, Option<IoUring>), String> {
            let slots = if use_uring { depth } else { 1 };
            let mut w = Worker::new(
                fd,
                st.pattern,
                bs,
                regs[i],
                slots,
                i as u64 + 1,
                sync_at_end,
            )?;
            if st.pattern == Pattern::Zcav {
                w = w.with_limit(regs[i].blocks);
            }
            if i == 0 && bs * slots >= file::HUGE_MIN {
                huge.store(w.huge_pages().map_or(0, |h| 1 + h as u8), Ordering::Relaxed);
            }
            let ring = if use_uring {
                Some(io::worker_ring(depth as u32)?)
            } else {
                None
            };
            Ok((w, ring))
        };
        let m = measured::run(
            threads,
            Duration::from_secs_f64(p.secs),
            dev,
            stop,
            |lane| {
                let (mut w, ring) = setup(lane.index())?;
                match ring {
                    Some(mut r) => w.run_uring(lane, &mut r, depth),
                    None => w.run_sync(lane),
                }
            },
        );
        let engine = if use_uring { "io_uring" } else { "psync" };
        let mut config = serde_json::json!({
            "probe": "disk", "pattern": st.pattern, "mode": st.mode, "bs": bs,
            "jobs": st.jobs, "depth": st.depth, "threads": threads, "engine": engine,
            "file_size": p.size, "secs": p.secs,
            "end_fdatasync": sync_at_end && !st.pattern.reads(),
            "fdatasync_per_op": st.pattern == Pattern::Commit,
            "settle_fdatasync_ms": settled.map(|d| d.as_secs_f64() * 1e3),
            "buffer_huge_pages": match huge.load(Ordering::Relaxed) {
                0 => serde_json::Value::Null,
                h => (h == 2).into(),
            },
        });
        if let Some(d) = &p.opts.device {
            config["device"] = d.display().to_string().into();
        }
        if let Some((i, r)) = st.slice {
            config["slice"] = i.into();
            config["offset"] = r.start.into();
            config["slice_bytes"] = (r.blocks * bs as u64).into();
            config["position"] = (r.start as f64 / p.size as f64).into();
        }
        let step = m.into_step(st.name(), st.pattern.kind(), config);
        if step.status == plumb_core::StepStatus::Ok {
            if let Some((name, unit)) = st.ceiling_name(prefix) {
                let v = if unit == "MB/s" {
                    step.summary.mb_sec.unwrap_or(0.0)
                } else {
                    step.summary.ops_sec
                };
                rep.ceilings.push(ceiling(name, v, unit));
            }
        }
        let failed = step.status == plumb_core::StepStatus::Failed;
        rep.steps.push(step);
        if failed {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_for(dir: &std::path::Path) -> DiskPlan {
        let mut o = DiskOptions::new(dir.to_path_buf(), true);
        o.size = Some(32 << 20);
        o.secs = Some(0.2);
        prepare(o).unwrap()
    }

    #[test]
    fn precondition_rewrites_the_file_at_random_and_says_how_much() {
        let t = tempfile::tempdir().unwrap();
        let mut p = plan_for(t.path());
        p.opts.patterns = vec![Pattern::SeqRead];
        p.opts.modes = vec![Mode::Buffered];
        p.opts.precondition = Some(Duration::from_millis(200));
        let rep = run(&p, &AtomicBool::new(false)).unwrap();
        let note = rep
            .notes
            .iter()
            .find(|n| n.starts_with("disk: preconditioned:"))
            .unwrap_or_else(|| panic!("no precondition note in {:?}", rep.notes));
        // "… N random 4 KiB writes in 0 s (X× the file …": at least one write was made.
        let n: u64 = note
            .split(", ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{note}"));
        assert!(n > 0, "{note}");
        assert_eq!(rep.steps.len(), 1, "preconditioning is not a measured step");
    }

    #[test]
    fn step_list_follows_the_grid() {
        let t = tempfile::tempdir().unwrap();
        let mut p = plan_for(t.path());
        p.opts.grid = Grid::full();
        p.opts.rand_bs = vec![4096];
        p.commit_threads = vec![1, 4];
        let s = steps(&p, true);
        // per mode: 2 seq + 12 randread + 12 randwrite + 2 commit
        assert_eq!(s.len(), 2 * 28);
        assert_eq!(s[0].name(), "seqwrite.direct");
        assert_eq!(s[2].name(), "randread.direct.j1.qd1");
        assert_eq!(
            s[2].ceiling_name("disk").unwrap().0,
            "disk.randread_4k_iops.qd1"
        );
        assert_eq!(
            s[13].ceiling_name("disk").unwrap().0,
            "disk.randread_4k_iops.j4.qd32"
        );
        assert_eq!(s[27].name(), "commit.direct.t4");
        assert_eq!(s[28].name(), "seqwrite.buffered");
        // No O_DIRECT: buffered only.
        assert_eq!(steps(&p, false).len(), 28);
    }

    #[test]
    fn request_sizes_multiply_the_random_grid_and_keep_classic_names() {
        let t = tempfile::tempdir().unwrap();
        let mut p = plan_for(t.path());
        p.opts.modes = vec![Mode::Direct];
        p.opts.grid = Grid::quick();
        (p.opts.rand_bs, p.opts.seq_bs) = parse_bs("16k,4k,8k,1m,128k").unwrap();
        let s = steps(&p, true);
        let names: Vec<String> = s.iter().map(|x| x.name()).collect();
        // 2 seq sizes × 2 patterns + 3 sizes × 2 cells × 2 patterns + 2 commits.
        assert_eq!(names.len(), 4 + 12 + 2, "{names:?}");
        for want in [
            "seqwrite128k.direct",
            "seqwrite.direct",
            "seqread.direct",
            "randread.direct.j1.qd32",
            "randread8k.direct.j1.qd32",
            "randwrite16k.direct.j1.qd1",
            "commit.direct.t1",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
        }
        let c: Vec<String> = s
            .iter()
            .filter_map(|x| x.ceiling_name("disk").map(|c| c.0))
            .collect();
        assert!(
            c.contains(&"disk.randread_8k_iops.qd32".to_string()),
            "{c:?}"
        );
        assert!(c.contains(&"disk.seqread_128k_mbs".to_string()), "{c:?}");
        assert!(c.contains(&"disk.seqread_1m_mbs".to_string()), "{c:?}");
        assert_eq!(s[0].bs, 128 << 10);
    }

    #[test]
    fn bs_lists_parse_and_refuse_unaligned_sizes() {
        assert_eq!(parse_bs("8k").unwrap(), (vec![8192], vec![SEQ_BS]));
        assert_eq!(parse_bs("2m").unwrap(), (vec![4096], vec![2 << 20]));
        for bad in ["1000", "x", "", "128m", "4k,,8k"] {
            let e = parse_bs(bad).unwrap_err().to_string();
            assert!(e.starts_with("--bs"), "{bad}: {e}");
        }
        // 512 bytes is a size: whether O_DIRECT takes it is the device's to say.
        assert_eq!(parse_bs("512,3k").unwrap(), (vec![512, 3072], vec![SEQ_BS]));
        assert_eq!(bs_label(512), "512b");
        assert_eq!(bs_label(16384), "16k");
        assert_eq!(bs_label(SEQ_BS), "1m");
        assert_eq!(bs_label(1536 << 10), "1536k");
    }

    #[test]
    fn seq_bs_asks_for_sequential_sizes_below_128k_and_keeps_bs_as_it_was() {
        let d = &RAND_BS_QUICK[..];
        // --seq-bs alone: the random defaults stay, the sequential sizes are its own.
        assert_eq!(
            request_sizes(None, Some("1m,8k"), d).unwrap(),
            (d.to_vec(), vec![8192, SEQ_BS])
        );
        // --bs alone is what it always was.
        assert_eq!(
            request_sizes(Some("8k,2m"), None, d).unwrap(),
            (vec![8192], vec![2 << 20])
        );
        assert_eq!(request_sizes(Some("8k"), None, d).unwrap().1, vec![SEQ_BS]);
        // Both: --bs's random sizes, the sequential ones of both lists.
        assert_eq!(
            request_sizes(Some("4k,128k"), Some("8k"), d).unwrap(),
            (vec![4096], vec![8192, 128 << 10])
        );
        let e = request_sizes(None, Some("8k,100"), d)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--seq-bs"), "{e}");
        // The classic names stay: 1 MiB sequential has no size in its name, 8 KiB does.
        let t = tempfile::tempdir().unwrap();
        let mut p = plan_for(t.path());
        p.opts.modes = vec![Mode::Buffered];
        p.opts.patterns = vec![Pattern::SeqRead, Pattern::Rewrite];
        p.opts.seq_bs = vec![8192, SEQ_BS];
        let names: Vec<String> = steps(&p, true).iter().map(|x| x.name()).collect();
        assert_eq!(
            names,
            [
                "seqread8k.buffered",
                "seqread.buffered",
                "rewrite8k.buffered",
                "rewrite.buffered"
            ]
        );
    }

    #[test]
    fn o_direct_sizes_are_refused_only_where_the_logical_block_is_larger() {
        assert!(check_direct_bs(&[512, 8192], Some(512), "vda").is_ok());
        let e = check_direct_bs(&[4096, 512], Some(4096), "nvme0n1")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("nvme0n1") && e.contains("4096 bytes") && e.contains("512 bytes"),
            "{e}"
        );
        assert!(check_direct_bs(&[8192], Some(4096), "nvme0n1").is_ok());
        // No block device known: the old 4 KiB rule.
        let e = check_direct_bs(&[512], None, "/mnt/x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown") && e.contains("/mnt/x"), "{e}");
    }

    #[test]
    fn rewrite_reads_dirties_and_writes_back_each_chunk_then_syncs() {
        let t = tempfile::tempdir().unwrap();
        let mut p = plan_for(t.path());
        p.opts.patterns = vec![Pattern::Rewrite];
        p.opts.modes = vec![Mode::Buffered];
        p.opts.seq_bs = vec![8192];
        let r = run(&p, &AtomicBool::new(false)).unwrap();
        assert_eq!(r.steps.len(), 1);
        let s = &r.steps[0];
        assert_eq!(s.name, "rewrite8k.buffered");
        assert_eq!(s.status, plumb_core::StepStatus::Ok, "{:?}", s.error);
        assert_eq!(s.config["end_fdatasync"], serde_json::json!(true));
        assert!(s.summary.ops > 0 && s.summary.mb_sec.is_some());
        assert!(r
            .ceilings
            .iter()
            .any(|c| c.name == "disk.rewrite_8k_mbs.buffered"));
    }

    #[test]
    fn position_scan_reads_each_slice_once_in_order() {
        let t = tempfile::tempdir().unwrap();
        let mut p = plan_for(t.path());
        p.opts.patterns = vec![Pattern::Zcav];
        p.opts.zcav_slices = 4;
        let s = steps(&p, true);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].name(), "zcav.000");
        assert_eq!(s[3].name(), "zcav.003");
        assert!(s
            .iter()
            .all(|x| x.mode == Mode::Direct && x.ceiling_name("disk").is_none()));
        let r = run(&p, &AtomicBool::new(false)).unwrap();
        assert_eq!(r.steps.len(), 4);
        let slice = p.size / 4;
        for (i, st) in r.steps.iter().enumerate() {
            assert_eq!(st.status, plumb_core::StepStatus::Ok, "{:?}", st.error);
            assert_eq!(st.config["offset"].as_u64(), Some(i as u64 * slice));
            assert_eq!(st.config["slice_bytes"].as_u64(), Some(slice));
            // One pass over the slice, no more: 8 MiB in 1 MiB reads.
            assert_eq!(st.summary.ops, slice / SEQ_BS as u64, "{}", st.name);
        }
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_device_path_only_reads_through_a_read_only_descriptor() {
        use std::os::unix::fs::OpenOptionsExt;
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("disk.img");
        std::fs::write(&path, vec![7u8; 32 << 20]).unwrap();
        let mut p = plan_for(t.path());
        p.opts.patterns = vec![Pattern::SeqRead, Pattern::RandRead, Pattern::Zcav];
        p.opts.modes = vec![Mode::Direct];
        p.opts.zcav_slices = 2;
        let ro = std::fs::File::open(&path).unwrap();
        let direct = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .ok();
        let s = Subject {
            direct: direct.as_ref(),
            buffered: &ro,
            path: &path,
            writable: false,
        };
        let mut rep = ProbeReport::default();
        measure(&p, &s, None, "blockdev", &mut rep, &AtomicBool::new(false)).unwrap();
        // seqread + 2 randread cells × 2 sizes + 2 slices; any write through these
        // descriptors would have failed its step with EBADF.
        assert_eq!(rep.steps.len(), 1 + 4 + 2);
        for st in &rep.steps {
            assert_eq!(
                st.status,
                plumb_core::StepStatus::Ok,
                "{}: {:?}",
                st.name,
                st.error
            );
            assert!(st.config["settle_fdatasync_ms"].is_null(), "{}", st.name);
        }
        assert!(rep.ceilings.iter().all(|c| c.name.starts_with("blockdev.")));
        assert!(rep
            .ceilings
            .iter()
            .any(|c| c.name == "blockdev.randread_4k_iops.qd32"));
    }

    #[test]
    fn a_device_plan_refuses_writes_and_non_devices() {
        let t = tempfile::tempdir().unwrap();
        let mut o = DiskOptions::for_device(t.path().to_path_buf(), true);
        let e = prepare(o.clone()).unwrap_err().to_string();
        assert!(e.contains("is not a block device"), "{e}");
        o.patterns = vec![Pattern::SeqRead, Pattern::RandWrite];
        let e = prepare(o.clone()).unwrap_err().to_string();
        assert!(e.starts_with("--tests") && e.contains("read-only"), "{e}");
        o.patterns = vec![Pattern::SeqRead];
        o.modes = vec![Mode::Buffered];
        let e = prepare(o).unwrap_err().to_string();
        assert!(e.starts_with("--io"), "{e}");
    }

    #[test]
    fn prepare_refuses_before_creating_anything() {
        let t = tempfile::tempdir().unwrap();
        let mut o = DiskOptions::new(t.path().to_path_buf(), true);
        o.size = Some(1 << 60);
        let e = prepare(o).unwrap_err().to_string();
        assert!(e.contains("would leave less than"), "{e}");
        let mut o = DiskOptions::new(t.path().to_path_buf(), true);
        o.secs = Some(-1.0);
        assert!(prepare(o).unwrap_err().to_string().starts_with("--secs"));
        assert!(prepare(DiskOptions::new("/dev/null".into(), true)).is_err());
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    }

    #[test]
    fn options_parse() {
        assert_eq!(
            parse_patterns("randread,fsync,randread").unwrap(),
            vec![Pattern::RandRead, Pattern::Commit]
        );
        assert_eq!(parse_patterns("rewrite").unwrap(), vec![Pattern::Rewrite]);
        assert!(parse_patterns("randred")
            .unwrap_err()
            .to_string()
            .starts_with("--tests"));
        assert_eq!(parse_modes("both").unwrap().len(), 2);
        assert!(parse_modes("dirct").is_err());
    }

    #[test]
    fn tiny_probe_measures_every_step_and_removes_its_file() {
        let t = tempfile::tempdir().unwrap();
        let p = plan_for(t.path());
        let r = run(&p, &AtomicBool::new(false)).unwrap();
        let expected = steps(&p, std::fs::metadata(t.path()).is_ok()).len();
        assert!(
            r.steps.len() == expected || r.steps.len() == expected / 2,
            "{}",
            r.steps.len()
        );
        for s in &r.steps {
            assert_eq!(
                s.status,
                plumb_core::StepStatus::Ok,
                "{}: {:?}",
                s.name,
                s.error
            );
            assert!(s.summary.ops > 0, "{}", s.name);
            assert!(
                s.summary.p99_us.is_some() && s.summary.mb_sec.is_some(),
                "{}",
                s.name
            );
            assert!(!s.intervals.is_empty(), "{}", s.name);
            assert!(
                s.config["settle_fdatasync_ms"].as_f64().is_some(),
                "{}: {}",
                s.name,
                s.config
            );
            // 1 MiB buffers ask for a huge page and say whether they got one.
            assert_eq!(
                s.config["buffer_huge_pages"].is_boolean(),
                s.name.starts_with("seq"),
                "{}: {}",
                s.name,
                s.config
            );
        }
        assert!(r
            .ceilings
            .iter()
            .any(|c| c.name == "disk.commit_per_sec.t1"
                || c.name == "disk.commit_per_sec.buffered.t1"));
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    }
}
