//! The IO loops: synchronous pread/pwrite (depth 1, and the fallback for deeper queues)
//! and io_uring (depth > 1), each issuing IO the way fio's psync and io_uring engines do,
//! so the figures compare with fio's. Each worker owns its buffer and random stream; its
//! IOs go through the runner's kernel ([`Lane`]), which times and counts them: a
//! synchronous IO costs its syscall(s), one clock read and one histogram record.

use super::file::AlignedBuf;
use crate::rng::Rng;
use io_uring::{opcode, types, IoUring};
use plumb_runner::kernel::{Lane, Timing};
use std::os::unix::io::RawFd;
use std::time::Instant;

/// What an IO does and where it goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// 1 MiB reads front to back, wrapping.
    SeqRead,
    /// 1 MiB writes front to back, wrapping.
    SeqWrite,
    /// bonnie++'s "Rewrite": front to back, each chunk read, dirtied (one byte changed)
    /// and written back in place; bonnie++ does read(2), lseek(2), write(2), here the
    /// seek back is pwrite's offset. No space is allocated, so it measures the cache and
    /// the transfer in both directions; MB/s counts each chunk once, as bonnie++ does.
    Rewrite,
    /// 4 KiB reads at uniformly random aligned offsets.
    RandRead,
    /// 4 KiB writes at uniformly random aligned offsets.
    RandWrite,
    /// 4 KiB write then fdatasync, appending within the worker's region: a commit.
    Commit,
    /// The position scan (bonnie++'s zcav): one pass of sequential reads over each of N
    /// equal slices of the file or device, one step per slice.
    Zcav,
}

impl Pattern {
    /// Stored name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::SeqRead => "seqread",
            Pattern::SeqWrite => "seqwrite",
            Pattern::Rewrite => "rewrite",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::Commit => "commit",
            Pattern::Zcav => "zcav",
        }
    }
    /// The stored step kind.
    pub fn kind(self) -> plumb_workloads::ProbeKind {
        use plumb_workloads::ProbeKind as K;
        match self {
            Pattern::SeqRead | Pattern::Zcav => K::SeqRead,
            Pattern::SeqWrite | Pattern::Rewrite => K::SeqWrite,
            Pattern::RandRead => K::RandRead,
            Pattern::RandWrite => K::RandWrite,
            Pattern::Commit => K::Commit,
        }
    }
    /// Whether IOs read.
    pub fn reads(self) -> bool {
        matches!(self, Pattern::SeqRead | Pattern::RandRead | Pattern::Zcav)
    }
    /// Whether it writes to the file or device (refused on a raw block device).
    pub fn writes(self) -> bool {
        !self.reads()
    }
    /// Whether it runs at the sequential request sizes (`--seq-bs`), one job at depth 1.
    pub fn sequential(self) -> bool {
        matches!(
            self,
            Pattern::SeqRead | Pattern::SeqWrite | Pattern::Rewrite | Pattern::Zcav
        )
    }
    /// Whether offsets are random.
    pub fn random(self) -> bool {
        matches!(self, Pattern::RandRead | Pattern::RandWrite)
    }
}

/// A worker's slice of the file: `blocks` blocks of `bs` bytes from `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First byte.
    pub start: u64,
    /// Blocks in it (≥ 1).
    pub blocks: u64,
}

/// Splits a file of `size` bytes into `n` equal regions of whole `bs` blocks (the commit
/// step's writers each append in their own region, as separate logs would).
pub fn regions(size: u64, bs: u64, n: usize) -> Vec<Region> {
    let total = (size / bs).max(1);
    let per = (total / n.max(1) as u64).max(1);
    (0..n as u64)
        .map(|i| Region {
            start: (i * per).min(total - 1) * bs,
            blocks: per,
        })
        .collect()
}

/// Everything one worker needs, built before the clock starts.
pub(crate) struct Worker {
    fd: RawFd,
    pattern: Pattern,
    bs: usize,
    region: Region,
    buf: AlignedBuf,
    rng: Rng,
    sync_at_end: bool,
    limit: Option<u64>,
}

impl Worker {
    /// A worker over `region` of `fd`; `slots` buffers of `bs` bytes; `sync_at_end` adds
    /// an fdatasync inside the window after buffered writes (fio's end_fsync), so buffered
    /// MB/s is what reached the device.
    pub(crate) fn new(
        fd: RawFd,
        pattern: Pattern,
        bs: usize,
        region: Region,
        slots: usize,
        seed: u64,
        sync_at_end: bool,
    ) -> Result<Worker, String> {
        Ok(Worker {
            fd,
            pattern,
            bs,
            region,
            buf: AlignedBuf::new(bs * slots.max(1), seed)?,
            rng: Rng::new(seed),
            sync_at_end,
            limit: None,
        })
    }

    /// Stops after `ops` IOs (one pass over a zcav slice), which ends a one-thread
    /// step, so a slice is read once rather than re-read from the device's cache.
    pub(crate) fn with_limit(mut self, ops: u64) -> Worker {
        self.limit = Some(ops.max(1));
        self
    }

    /// Whether its buffer sits in transparent huge pages (see [`AlignedBuf`]).
    pub(crate) fn huge_pages(&self) -> Option<bool> {
        self.buf.huge_pages()
    }

    #[inline]
    fn offset(&mut self, seq: &mut u64) -> u64 {
        let b = if self.pattern.random() {
            self.rng.below(self.region.blocks)
        } else {
            let b = *seq % self.region.blocks;
            *seq += 1;
            b
        };
        self.region.start + b * self.bs as u64
    }

    fn end_sync(&self) -> Result<(), String> {
        // SAFETY: valid fd.
        if self.sync_at_end && !self.pattern.reads() && unsafe { libc::fdatasync(self.fd) } != 0 {
            return Err(format!("fdatasync: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// One IO at a time with pread/pwrite (+ fdatasync for commits), each timed by the
    /// kernel, until the step stops or the limit is reached.
    pub(crate) fn run_sync(&mut self, lane: &Lane<'_>) -> Result<(), String> {
        let mut seq = 0u64;
        let ptr = self.buf.ptr_at(0);
        let bytes = self.bs as u64;
        lane.drive(self.limit.unwrap_or(u64::MAX), None, |_| {
            let off = self.offset(&mut seq);
            self.sync_io(ptr, off)?;
            Ok::<_, String>((1, bytes))
        })?;
        self.end_sync()
    }

    /// One op of the pattern at `off` from `ptr`: a read or a write of a block, the
    /// rewrite's read, dirty and write back, then the commit's fdatasync.
    #[inline]
    fn sync_io(&self, ptr: *mut u8, off: u64) -> Result<(), String> {
        if self.pattern == Pattern::Rewrite {
            self.whole_io(ptr, off, true)?;
            // Dirty it, as bonnie++ does, so the write carries changed data.
            // SAFETY: ptr is valid for bs ≥ 1 bytes, owned by this worker.
            unsafe { *ptr = (*ptr).wrapping_add(1) };
            return self.whole_io(ptr, off, false);
        }
        self.whole_io(ptr, off, self.pattern.reads())?;
        // SAFETY: valid fd.
        if self.pattern == Pattern::Commit && unsafe { libc::fdatasync(self.fd) } != 0 {
            return Err(format!("fdatasync: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// One pread (`read`) or pwrite of a whole block at `off`, retried when interrupted.
    #[inline]
    fn whole_io(&self, ptr: *mut u8, off: u64, read: bool) -> Result<(), String> {
        loop {
            // SAFETY: ptr is valid for bs bytes; fd is open for the step.
            let r = unsafe {
                if read {
                    libc::pread(self.fd, ptr.cast(), self.bs, off as libc::off_t)
                } else {
                    libc::pwrite(self.fd, ptr.cast(), self.bs, off as libc::off_t)
                }
            };
            if r == self.bs as isize {
                break;
            }
            let e = std::io::Error::last_os_error();
            if r < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(if r < 0 {
                format!("{} at offset {off}: {e}", self.pattern.name())
            } else {
                format!(
                    "{} at offset {off}: short IO of {r} bytes",
                    self.pattern.name()
                )
            });
        }
        Ok(())
    }

    /// Keeps `ring`'s `depth` requests in flight until the step stops, then lets them
    /// complete: one kernel op per completion, its latency from its submission.
    ///
    /// Each completion is replaced at once by a new request, submitted in its own
    /// `io_uring_enter`: what fio's io_uring engine does with its defaults (reap one,
    /// queue one, commit). Reaping every ready completion and resubmitting them as a batch
    /// costs fewer syscalls but measured ~20% fewer IOPS at depth 32 on a virtio disk: the
    /// device idles while the batch is refilled (bench/README.md, "plumb probe disk vs fio").
    pub(crate) fn run_uring(
        &mut self,
        lane: &Lane<'_>,
        ring: &mut IoUring,
        depth: usize,
    ) -> Result<(), String> {
        let mut starts = vec![Instant::now(); depth];
        let (mut seq, mut inflight) = (0u64, 0usize);
        let bytes = self.bs as u64;
        for slot in 0..depth {
            self.push(ring, slot, &mut seq, &mut starts)?;
            inflight += 1;
        }
        enter(ring, 0)?;
        let steady = lane.drive_timed(Timing::ByOp, u64::MAX, None, |c| {
            let (slot, res) = reap(ring)?;
            inflight -= 1;
            self.completed(res)?;
            c.set_latency_ns(starts[slot].elapsed().as_nanos() as u64);
            self.push(ring, slot, &mut seq, &mut starts)?;
            inflight += 1;
            enter(ring, 0)?;
            Ok::<_, String>((1, bytes))
        });
        // Stopped: what is in flight was submitted inside the window and completes in
        // it, so it counts, and nothing replaces it.
        let tail = steady.and_then(|()| {
            lane.finish(Timing::ByOp, |c| {
                if inflight == 0 {
                    return Ok((0, 0));
                }
                let (slot, res) = reap(ring)?;
                inflight -= 1;
                self.completed(res)?;
                c.set_latency_ns(starts[slot].elapsed().as_nanos() as u64);
                Ok((1, bytes))
            })
        });
        if let Err(e) = tail {
            // Failed: the buffers must outlive every request still in flight.
            while inflight > 0 && reap(ring).is_ok() {
                inflight -= 1;
            }
            return Err(e);
        }
        self.end_sync()
    }

    /// A completion's result as an IO of a whole block, or why not.
    #[inline]
    fn completed(&self, res: i32) -> Result<(), String> {
        if res == self.bs as i32 {
            Ok(())
        } else {
            Err(self.io_error(res))
        }
    }

    fn io_error(&self, res: i32) -> String {
        if res < 0 {
            format!(
                "{} via io_uring: {}",
                self.pattern.name(),
                std::io::Error::from_raw_os_error(-res)
            )
        } else {
            format!(
                "{} via io_uring: short IO of {res} bytes",
                self.pattern.name()
            )
        }
    }

    #[inline]
    fn push(
        &mut self,
        ring: &mut IoUring,
        slot: usize,
        seq: &mut u64,
        starts: &mut [Instant],
    ) -> Result<(), String> {
        let off = self.offset(seq);
        let ptr = self.buf.ptr_at(slot * self.bs);
        let fd = types::Fd(self.fd);
        let e = if self.pattern.reads() {
            opcode::Read::new(fd, ptr, self.bs as u32)
                .offset(off)
                .build()
        } else {
            opcode::Write::new(fd, ptr, self.bs as u32)
                .offset(off)
                .build()
        }
        .user_data(slot as u64);
        starts[slot] = Instant::now();
        // SAFETY: the buffer slot stays alive and untouched until its completion is reaped
        // (the worker owns it and drains every request before returning).
        unsafe {
            if ring.submission().push(&e).is_err() {
                // Full queue: submit what is there and retry once.
                enter(ring, 0)?;
                ring.submission()
                    .push(&e)
                    .map_err(|_| "io_uring submission queue full".to_string())?;
            }
        }
        Ok(())
    }
}

/// The next completion (its slot and result), waiting in the kernel for one when none
/// is ready.
#[inline]
fn reap(ring: &mut IoUring) -> Result<(usize, i32), String> {
    loop {
        if let Some(q) = ring.completion().next() {
            return Ok((q.user_data() as usize, q.result()));
        }
        enter(ring, 1)?;
    }
}

/// `IORING_ENTER_GETEVENTS`: with `DEFER_TASKRUN` completions are posted only when the
/// issuer enters with this flag.
const ENTER_GETEVENTS: u32 = 1;

/// Submits every queued request and posts finished ones to the completion queue, waiting
/// for at least `min_complete` of them (fio's io_uring commit and getevents in one call).
fn enter(ring: &mut IoUring, min_complete: u32) -> Result<(), String> {
    loop {
        let n = ring.submission().len() as u32;
        // SAFETY: no argument pointer; the queued entries point at buffers the worker
        // keeps alive until their completions are reaped.
        match unsafe {
            ring.submitter()
                .enter::<libc::sigset_t>(n, min_complete, ENTER_GETEVENTS, None)
        } {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("io_uring submit: {e}")),
        }
    }
}

/// A ring for one worker, set up as fio's io_uring engine sets its own: a completion queue
/// of `depth`, one issuing thread, and completions posted only when the worker asks for
/// them (no inter-processor interrupt per IO); older kernels fall back to a plain ring.
pub(crate) fn worker_ring(depth: u32) -> Result<IoUring, String> {
    if let Ok(r) = IoUring::builder()
        .setup_cqsize(depth)
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(depth)
    {
        return Ok(r);
    }
    IoUring::new(depth).map_err(|e| format!("io_uring setup: {e}"))
}

/// Whether this kernel lets plumb set up an io_uring (it may be disabled by sysctl,
/// seccomp or an old kernel); the error says why not.
pub fn uring_available() -> Result<(), String> {
    IoUring::new(2).map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_runner::kernel;

    #[test]
    fn regions_split_whole_blocks_without_overlap() {
        let r = regions(100 * 4096, 4096, 3);
        assert_eq!(r.len(), 3);
        assert_eq!(
            r[0],
            Region {
                start: 0,
                blocks: 33
            }
        );
        assert_eq!(r[1].start, 33 * 4096);
        assert_eq!(r[2].start + r[2].blocks * 4096, 99 * 4096);
        // More workers than blocks: each still gets one valid block.
        let r = regions(2 * 4096, 4096, 4);
        assert!(r.iter().all(|x| x.blocks == 1 && x.start <= 4096));
    }

    #[test]
    fn offsets_stay_aligned_and_inside_the_region() {
        let mut w = Worker::new(
            -1,
            Pattern::RandRead,
            4096,
            Region {
                start: 8192,
                blocks: 10,
            },
            1,
            1,
            false,
        )
        .unwrap();
        let mut seq = 0;
        for _ in 0..10_000 {
            let o = w.offset(&mut seq);
            assert!(
                (8192..8192 + 10 * 4096).contains(&o) && o.is_multiple_of(4096),
                "{o}"
            );
        }
        let mut w = Worker::new(
            -1,
            Pattern::SeqWrite,
            4096,
            Region {
                start: 0,
                blocks: 3,
            },
            1,
            1,
            false,
        )
        .unwrap();
        let offs: Vec<u64> = (0..4).map(|_| w.offset(&mut seq)).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 0]);
    }

    /// One worker of `w` through the kernel, on its own Ctrl-C flag: set beforehand, the
    /// step is stopped before its first op.
    fn one_uring_worker(
        make: impl Fn() -> Worker + Sync,
        depth: usize,
        stopped: bool,
    ) -> kernel::Run<(), ()> {
        let interrupt = std::sync::atomic::AtomicBool::new(stopped);
        let spec = kernel::Spec {
            threads: 1,
            writers: 0,
            thread_name: "plumb-w",
            classes: 0,
            warmup: std::time::Duration::ZERO,
            duration: Some(std::time::Duration::from_secs(30)),
            disk: None,
            interrupt: &interrupt,
            progress: &kernel::NoProgress,
            clients: None,
            on_open: None,
            faults: None,
        };
        kernel::run(&spec, &mut (), |lane: &Lane<'_>, _: &mut ()| {
            let mut ring = worker_ring(depth as u32)?;
            make().run_uring(lane, &mut ring, depth)
        })
    }

    #[test]
    fn uring_worker_drains_exactly_what_it_submitted_once_stopped() {
        use std::io::Write;
        use std::os::unix::io::AsRawFd;
        if uring_available().is_err() {
            eprintln!("io_uring unavailable: skipped");
            return;
        }
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 64 * 4096]).unwrap();
        let region = Region {
            start: 0,
            blocks: 64,
        };
        let fd = f.as_raw_fd();
        let w = || Worker::new(fd, Pattern::RandRead, 4096, region, 8, 3, false).unwrap();
        // Stopped before it starts: the first 8 requests go out and are all reaped, and
        // none is replaced.
        let out = one_uring_worker(w, 8, true);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.tally.ops(), 8);
        assert_eq!(out.tally.bytes(), 8 * 4096);
        assert_eq!(out.tally.total.count(), 8);
        // Reads past the end come back short and fail the step with the reason.
        let past_end = Region {
            start: 64 * 4096,
            blocks: 4,
        };
        let w = || Worker::new(fd, Pattern::RandRead, 4096, past_end, 2, 3, false).unwrap();
        let e = one_uring_worker(w, 2, false).errors.join("; ");
        assert!(e.contains("short IO of 0 bytes"), "{e}");
    }
}
