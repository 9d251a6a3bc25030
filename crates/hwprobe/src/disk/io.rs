//! The IO loops: synchronous pread/pwrite (depth 1, and the fallback for deeper queues)
//! and io_uring (depth > 1). Each worker owns its buffer, random stream and histogram;
//! an IO costs the syscall, two clock reads and one histogram record, nothing more.

use super::file::AlignedBuf;
use crate::timed::{Counter, Rng, WorkerOut};
use io_uring::{opcode, types, IoUring};
use plumb_runner::LatencyHistogram;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What an IO does and where it goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// 1 MiB reads front to back, wrapping.
    SeqRead,
    /// 1 MiB writes front to back, wrapping.
    SeqWrite,
    /// 4 KiB reads at uniformly random aligned offsets.
    RandRead,
    /// 4 KiB writes at uniformly random aligned offsets.
    RandWrite,
    /// 4 KiB write then fdatasync, appending within the worker's region: a commit.
    Commit,
}

impl Pattern {
    /// Stored name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::SeqRead => "seqread",
            Pattern::SeqWrite => "seqwrite",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::Commit => "commit",
        }
    }
    /// Whether IOs read.
    pub fn reads(self) -> bool {
        matches!(self, Pattern::SeqRead | Pattern::RandRead)
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
        })
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

    /// One IO at a time with pread/pwrite (+ fdatasync for commits) until `stop`.
    pub(crate) fn run_sync(&mut self, c: &Counter, stop: &AtomicBool) -> Result<WorkerOut, String> {
        let mut hist = LatencyHistogram::new();
        let (mut ops, mut seq) = (0u64, 0u64);
        let ptr = self.buf.ptr_at(0);
        while !stop.load(Ordering::Relaxed) {
            let off = self.offset(&mut seq);
            let t = Instant::now();
            loop {
                // SAFETY: ptr is valid for bs bytes; fd is open for the step.
                let r = unsafe {
                    if self.pattern.reads() {
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
            // SAFETY: valid fd.
            if self.pattern == Pattern::Commit && unsafe { libc::fdatasync(self.fd) } != 0 {
                return Err(format!("fdatasync: {}", std::io::Error::last_os_error()));
            }
            hist.record_ns(t.elapsed().as_nanos() as u64);
            ops += 1;
            c.set(ops);
        }
        self.end_sync()?;
        Ok(WorkerOut {
            ops,
            bytes: ops * self.bs as u64,
            hist,
        })
    }

    /// Keeps `ring`'s `depth` requests in flight until `stop`, then drains them.
    pub(crate) fn run_uring(
        &mut self,
        ring: &mut IoUring,
        depth: usize,
        c: &Counter,
        stop: &AtomicBool,
    ) -> Result<WorkerOut, String> {
        let mut hist = LatencyHistogram::new();
        let mut starts = vec![Instant::now(); depth];
        let mut done: Vec<(u64, i32)> = Vec::with_capacity(depth);
        let (mut ops, mut seq, mut inflight) = (0u64, 0u64, 0usize);
        let mut err: Option<String> = None;
        for slot in 0..depth {
            self.push(ring, slot, &mut seq, &mut starts)?;
            inflight += 1;
        }
        while inflight > 0 {
            match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("io_uring submit: {e}")),
            }
            done.clear();
            done.extend(ring.completion().map(|q| (q.user_data(), q.result())));
            let now = Instant::now();
            for &(slot, res) in &done {
                inflight -= 1;
                let slot = slot as usize;
                if res != self.bs as i32 {
                    err.get_or_insert_with(|| {
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
                    });
                } else {
                    hist.record_ns(now.duration_since(starts[slot]).as_nanos() as u64);
                    ops += 1;
                }
                if err.is_none() && !stop.load(Ordering::Relaxed) {
                    self.push(ring, slot, &mut seq, &mut starts)?;
                    inflight += 1;
                }
            }
            c.set(ops);
        }
        if let Some(e) = err {
            return Err(e);
        }
        self.end_sync()?;
        Ok(WorkerOut {
            ops,
            bytes: ops * self.bs as u64,
            hist,
        })
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
                ring.submit().map_err(|e| format!("io_uring submit: {e}"))?;
                ring.submission()
                    .push(&e)
                    .map_err(|_| "io_uring submission queue full".to_string())?;
            }
        }
        Ok(())
    }
}

/// Whether this kernel lets plumb set up an io_uring (it may be disabled by sysctl,
/// seccomp or an old kernel); the error says why not.
pub fn uring_available() -> Result<(), String> {
    IoUring::new(2).map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
