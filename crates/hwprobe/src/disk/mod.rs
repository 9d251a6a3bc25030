//! Disk probe: sequential write and read with 1 MiB requests, 4 KiB random read and write
//! over a jobs × depth grid, and the commit rate (4 KiB write + fdatasync) at 1 and N
//! threads, each through O_DIRECT and through the page cache, on a file plumb creates and
//! removes.

pub mod file;
pub mod io;

use crate::plan::{self, Grid};
use crate::timed::run_timed;
use crate::{ceiling, ProbeError, ProbeReport};
use file::{drop_cache, settle, ProbeFile};
use io::{regions, uring_available, Pattern, Region, Worker};
use io_uring::IoUring;
use plumb_probes::diskstats::DeviceStats;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// Sequential request size.
pub const SEQ_BS: usize = 1 << 20;
/// Random and commit request size.
pub const RAND_BS: usize = 4096;

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
    /// Directory to create the probe file in.
    pub dir: PathBuf,
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
}

impl DiskOptions {
    /// Every pattern in both modes on the default grid (or the quick one).
    pub fn new(dir: PathBuf, quick: bool) -> DiskOptions {
        DiskOptions {
            dir,
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
        }
    }
}

/// Parses `--tests seqwrite,seqread,randread,randwrite,commit`.
pub fn parse_patterns(s: &str) -> Result<Vec<Pattern>, ProbeError> {
    let mut v = Vec::new();
    for p in s.split(',').map(str::trim) {
        let pat = match p {
            "seqwrite" => Pattern::SeqWrite,
            "seqread" => Pattern::SeqRead,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "commit" | "fsync" => Pattern::Commit,
            _ => {
                return Err(ProbeError::BadOption {
                    option: "--tests",
                    value: s.to_string(),
                    reason: format!(
                        "{p:?} is not one of seqwrite, seqread, randread, randwrite, commit"
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
    /// The file size.
    pub size: u64,
    /// Why that size.
    pub size_why: String,
    /// Seconds per step.
    pub secs: f64,
    /// Thread counts of the commit step: 1 and N.
    pub commit_threads: Vec<usize>,
}

/// Checks the directory, the size and free space, and the options; refuses with a clear
/// message before anything is created.
pub fn prepare(o: DiskOptions) -> Result<DiskPlan, ProbeError> {
    let space = plan::check_dir(&o.dir)?;
    let (size, size_why) = match (o.size, o.quick) {
        (Some(s), _) => (
            plan::round_down_mib(s),
            format!("{} from --size", plan::human(s)),
        ),
        (None, true) => (
            plan::QUICK_SIZE,
            format!(
                "{} (--quick): this file's pages are dropped before buffered steps, but \
                 quick figures are indicative only",
                plan::human(plan::QUICK_SIZE)
            ),
        ),
        (None, false) => plan::default_size(plan::mem_total()),
    };
    plan::check_size(&o.dir, size, space.total, space.avail)?;
    let secs = o.secs.unwrap_or(if o.quick { 1.0 } else { 5.0 });
    if !(secs > 0.0 && secs.is_finite() && secs <= 86_400.0) {
        return Err(ProbeError::BadOption {
            option: "--secs",
            value: secs.to_string(),
            reason: "must be a number of seconds in (0, 86400]".into(),
        });
    }
    if o.grid.jobs.is_empty() || o.grid.depths.is_empty() || o.modes.is_empty() {
        return Err(ProbeError::BadOption {
            option: "--jobs/--depths/--io",
            value: String::new(),
            reason: "nothing to run".into(),
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

/// Writes the whole file once with 1 MiB direct (else buffered) writes and syncs it, so
/// reads hit allocated, written blocks, not holes the filesystem answers with zeros.
fn layout(f: &ProbeFile) -> Result<(), ProbeError> {
    let file = f.direct.as_ref().unwrap_or(&f.buffered);
    let fd = file.as_raw_fd();
    let mut buf = file::AlignedBuf::new(SEQ_BS, 42).map_err(|e| ProbeError::Io {
        what: "allocating a buffer for",
        path: f.path().to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    let mut off = 0u64;
    while off < f.size {
        if crate::interrupted() {
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

/// One step to run.
#[derive(Debug, Clone, Copy)]
struct StepSpec {
    pattern: Pattern,
    mode: Mode,
    jobs: usize,
    depth: usize,
}

impl StepSpec {
    fn bs(&self) -> usize {
        match self.pattern {
            Pattern::SeqRead | Pattern::SeqWrite => SEQ_BS,
            _ => RAND_BS,
        }
    }
    fn name(&self) -> String {
        let m = self.mode.name();
        match self.pattern {
            Pattern::SeqRead | Pattern::SeqWrite => format!("{}.{m}", self.pattern.name()),
            Pattern::Commit => format!("commit.{m}.t{}", self.jobs),
            _ => format!(
                "{}.{m}.j{}.qd{}",
                self.pattern.name(),
                self.jobs,
                self.depth
            ),
        }
    }
    fn ceiling_name(&self) -> (String, &'static str) {
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
        match self.pattern {
            Pattern::SeqRead => (format!("disk.seqread_1m_mbs{m}"), "MB/s"),
            Pattern::SeqWrite => (format!("disk.seqwrite_1m_mbs{m}"), "MB/s"),
            Pattern::RandRead => (
                format!("disk.randread_4k_iops{m}{j}.qd{}", self.depth),
                "IOPS",
            ),
            Pattern::RandWrite => (
                format!("disk.randwrite_4k_iops{m}{j}.qd{}", self.depth),
                "IOPS",
            ),
            Pattern::Commit => (
                format!("disk.commit_per_sec{m}.t{}", self.jobs),
                "commits/s",
            ),
        }
    }
}

/// The steps of a plan, in run order: per mode, sequential write, sequential read, the
/// random read grid, the random write grid, then commits.
fn steps(p: &DiskPlan, direct_ok: bool) -> Vec<StepSpec> {
    let mut v = Vec::new();
    for &mode in &p.opts.modes {
        if mode == Mode::Direct && !direct_ok {
            continue;
        }
        for &pattern in &p.opts.patterns {
            let mut push = |jobs, depth| {
                v.push(StepSpec {
                    pattern,
                    mode,
                    jobs,
                    depth,
                })
            };
            match pattern {
                Pattern::SeqRead | Pattern::SeqWrite => push(1, 1),
                Pattern::RandRead | Pattern::RandWrite => {
                    for c in p.opts.grid.cells() {
                        push(c.jobs, c.depth)
                    }
                }
                Pattern::Commit => {
                    for &t in &p.commit_threads {
                        push(t, 1)
                    }
                }
            }
        }
    }
    v
}

/// Runs the disk probe on a new file under the plan's directory; the file is removed
/// when this returns, whatever happened. Before each step the file is synced, untimed
/// ([`settle`]), so no step pays for the previous one's write-back; the time that took is
/// kept in the step's config as `settle_fdatasync_ms`.
pub fn run(p: &DiskPlan) -> Result<ProbeReport, ProbeError> {
    let mut rep = ProbeReport::default();
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
    let uring = uring_available();
    if let Err(e) = &uring {
        rep.notes.push(format!(
            "disk: io_uring unavailable ({e}); depth > 1 runs jobs × depth threads with pread/pwrite"
        ));
    }
    let dev = DeviceStats::for_path(&p.opts.dir).ok();
    if dev.is_none() {
        rep.notes
            .push("disk: no block device found for the directory; device counters absent".into());
    }
    layout(&f)?;
    for s in steps(p, f.direct.is_some()) {
        if crate::interrupted() {
            break;
        }
        let file = match s.mode {
            Mode::Direct => f.direct.as_ref().unwrap_or(&f.buffered),
            Mode::Buffered => &f.buffered,
        };
        let settled = settle(file).map_err(|e| ProbeError::io("syncing", f.path(), e))?;
        if s.mode == Mode::Buffered {
            drop_cache(file, s.pattern.random());
        }
        let fd = file.as_raw_fd();
        let bs = s.bs();
        let use_uring = s.depth > 1 && uring.is_ok();
        let threads = if s.depth > 1 && !use_uring {
            s.jobs * s.depth
        } else {
            s.jobs
        };
        let regs: Vec<Region> = if s.pattern == Pattern::Commit {
            regions(p.size, bs as u64, threads)
        } else {
            vec![
                Region {
                    start: 0,
                    blocks: (p.size / bs as u64).max(1)
                };
                threads
            ]
        };
        let sync_at_end = s.mode == Mode::Buffered;
        let depth = s.depth;
        // Whether worker 0's buffer got the huge page it asked for: 0 = not asked or
        // unknown, 1 = no, 2 = yes.
        let huge = AtomicU8::new(0);
        let setup = |i: usize| -> Result<(Worker, Option<IoUring>), String> {
            let slots = if use_uring { depth } else { 1 };
            let w = Worker::new(fd, s.pattern, bs, regs[i], slots, i as u64 + 1, sync_at_end)?;
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
        let m = run_timed(
            threads,
            Duration::from_secs_f64(p.secs),
            dev.as_ref(),
            setup,
            |(w, ring), c, stop| match ring {
                Some(r) => w.run_uring(r, depth, c, stop),
                None => w.run_sync(c, stop),
            },
        );
        let engine = if use_uring { "io_uring" } else { "psync" };
        let config = serde_json::json!({
            "probe": "disk", "pattern": s.pattern, "mode": s.mode, "bs": bs,
            "jobs": s.jobs, "depth": s.depth, "threads": threads, "engine": engine,
            "file_size": p.size, "secs": p.secs,
            "end_fdatasync": sync_at_end && !s.pattern.reads(),
            "fdatasync_per_op": s.pattern == Pattern::Commit,
            "settle_fdatasync_ms": settled.as_secs_f64() * 1e3,
            "buffer_huge_pages": match huge.load(Ordering::Relaxed) {
                0 => serde_json::Value::Null,
                h => (h == 2).into(),
            },
        });
        let step = m.into_step(s.name(), s.pattern.kind(), config);
        if step.status == plumb_core::StepStatus::Ok {
            let (name, unit) = s.ceiling_name();
            let v = if unit == "MB/s" {
                step.summary.mb_sec.unwrap_or(0.0)
            } else {
                step.summary.ops_sec
            };
            rep.ceilings.push(ceiling(name, v, unit));
        }
        let failed = step.status == plumb_core::StepStatus::Failed;
        rep.steps.push(step);
        if failed {
            break;
        }
    }
    drop(f);
    Ok(rep)
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
    fn step_list_follows_the_grid() {
        let t = tempfile::tempdir().unwrap();
        let mut p = plan_for(t.path());
        p.opts.grid = Grid::full();
        p.commit_threads = vec![1, 4];
        let s = steps(&p, true);
        // per mode: 2 seq + 12 randread + 12 randwrite + 2 commit
        assert_eq!(s.len(), 2 * 28);
        assert_eq!(s[0].name(), "seqwrite.direct");
        assert_eq!(s[2].name(), "randread.direct.j1.qd1");
        assert_eq!(s[2].ceiling_name().0, "disk.randread_4k_iops.qd1");
        assert_eq!(s[13].ceiling_name().0, "disk.randread_4k_iops.j4.qd32");
        assert_eq!(s[27].name(), "commit.direct.t4");
        assert_eq!(s[28].name(), "seqwrite.buffered");
        // No O_DIRECT: buffered only.
        assert_eq!(steps(&p, false).len(), 28);
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
        let r = run(&p).unwrap();
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
