//! One worker thread: owns its session, key chooser, value buffer and histogram, and
//! runs ops until its quota or the stop flag. Per op it touches only its own memory,
//! one relaxed load of the shared epoch and one relaxed store of its progress counter;
//! once per second (when the sampler bumps the epoch) it hands its interval to the
//! sampler over a channel.

use crate::config::StepConfig;
use crate::histogram::LatencyHistogram;
use crate::pacing::Pacer;
use plumb_core::value::{self, Verdict};
use plumb_core::{Session, Target, TargetError, Verification};
use plumb_workloads::distribution::worker_seed;
use plumb_workloads::{KeyChooser, KeyFormat, Permutation, StepKind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::Sender;
use std::sync::Barrier;
use std::time::Instant;

/// A counter on its own cache line, so workers never share a line.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Padded(pub(crate) AtomicU64);

/// State every worker reads and the sampler writes.
pub(crate) struct Shared {
    /// 0 during warm-up, then 1, 2, … one per second of the measured window.
    pub(crate) epoch: AtomicU64,
    /// Set by the sampler at the deadline, on Ctrl-C, on error, or when readers finish.
    pub(crate) stop: AtomicBool,
    /// Measured ops done per worker, for the progress bar.
    pub(crate) progress: Vec<Padded>,
    /// When the measured window opened (set before epoch becomes 1).
    pub(crate) writer_start: std::sync::OnceLock<Instant>,
}

/// What a worker sends the sampler.
pub(crate) enum Msg {
    /// One worker's ops that completed during one epoch.
    Interval(Report),
    /// The worker stopped; its verification counts and error, if any.
    Done {
        writer: bool,
        verify: Verification,
        error: Option<String>,
    },
}

/// One worker's contribution to one interval.
pub(crate) struct Report {
    pub(crate) writer: bool,
    pub(crate) epoch: u64,
    pub(crate) ops: u64,
    pub(crate) bytes: u64,
    pub(crate) hist: LatencyHistogram,
}

/// Which part a worker plays in its step.
#[derive(Clone, Copy)]
pub(crate) enum Role {
    /// A measured worker with index `t` among `cfg.threads`.
    Measured(usize),
    /// The rate-limited writer beside the readers of a *whilewriting step.
    Writer,
}

/// Read-only inputs shared by a step's workers.
pub(crate) struct WorkerEnv<'a> {
    pub(crate) cfg: &'a StepConfig,
    pub(crate) target: &'a dyn Target,
    pub(crate) shared: &'a Shared,
    pub(crate) payload: &'a [u8],
    pub(crate) perm: &'a Permutation,
    pub(crate) all_present: bool,
    pub(crate) barrier: &'a Barrier,
}

/// Per-worker mutable op state: buffers reused for every op.
struct OpState {
    fmt: KeyFormat,
    key: Vec<u8>,
    value: Vec<u8>,
    batch: Vec<Vec<u8>>,
    payload_pos: usize,
    verify: Verification,
    check: bool,
    all_present: bool,
}

impl OpState {
    #[inline]
    fn fill_value(&mut self, payload: &[u8]) {
        let n = self.value.len() - value::CHECKSUM_LEN;
        if self.payload_pos + n > payload.len() {
            self.payload_pos = 0;
        }
        value::encode(&self.key, &payload[self.payload_pos..], &mut self.value);
        self.payload_pos += n;
    }

    #[inline]
    fn check_value(verify: &mut Verification, check: bool, key: &[u8], v: &[u8]) {
        if check {
            verify.verified += 1;
            if value::verify(key, v) == Verdict::Mismatch {
                verify.mismatches += 1;
            }
        }
    }

    #[inline]
    fn absent(&mut self) {
        if self.check && self.all_present {
            self.verify.missing += 1;
        } else {
            self.verify.not_found += 1;
        }
    }
}

/// Runs one worker to completion and reports to `tx`.
pub(crate) fn run_worker(env: &WorkerEnv<'_>, role: Role, tx: Sender<Msg>) {
    let writer = matches!(role, Role::Writer);
    let mut state = OpState {
        fmt: KeyFormat {
            size: env.cfg.key_size,
        },
        key: vec![0u8; env.cfg.key_size],
        value: vec![0u8; env.cfg.value_size],
        batch: vec![vec![0u8; env.cfg.key_size]; env.cfg.batch_size.max(1)],
        payload_pos: 0,
        verify: Verification::default(),
        check: env.target.stores_data(),
        all_present: env.all_present,
    };
    let session = env.target.session();
    // Everyone waits here, even on error, so the sampler's barrier cannot hang.
    env.barrier.wait();
    let result = match session {
        Ok(mut s) => drive_role(env, role, &mut state, s.as_mut(), &tx),
        Err(e) => Err(e),
    };
    if result.is_err() {
        env.shared.stop.store(true, Relaxed);
    }
    let _ = tx.send(Msg::Done {
        writer,
        verify: state.verify,
        error: result.err().map(|e| e.to_string()),
    });
}

fn drive_role(
    env: &WorkerEnv<'_>,
    role: Role,
    st: &mut OpState,
    s: &mut dyn Session,
    tx: &Sender<Msg>,
) -> Result<(), TargetError> {
    let cfg = env.cfg;
    let num = cfg.num.max(1);
    let payload = env.payload;
    let (t, writer) = match role {
        Role::Measured(t) => (t, false),
        Role::Writer => (cfg.threads, true),
    };
    let seed = worker_seed(cfg.seed, cfg.index, t);
    let mut keys = KeyChooser::new(cfg.distribution, num, seed)
        .map_err(|e| TargetError::engine("plumb", e))?;
    let kv = (cfg.key_size + cfg.value_size) as u64;

    if writer {
        let ops_per_sec = cfg.write_rate_mb * 1024.0 * 1024.0 / kv as f64;
        let start = *env.shared.writer_start.get_or_init(Instant::now);
        let mut pacer = Pacer::new(ops_per_sec, start);
        let mut uniform = KeyChooser::new(plumb_workloads::Distribution::Uniform, num, seed)
            .map_err(|e| TargetError::engine("plumb", e))?;
        return drive(
            env,
            t,
            true,
            u64::MAX,
            Some(&mut pacer),
            || {
                st.fmt.encode(uniform.next_key(), &mut st.key);
                st.fill_value(payload);
                s.put(&st.key, &st.value)?;
                Ok((1, kv))
            },
            tx,
        );
    }

    let quota = match cfg.total_ops() {
        Some(total) => {
            let (lo, hi) = StepConfig::share(total, cfg.threads, t);
            hi - lo
        }
        None => u64::MAX,
    };
    // Fills walk their own slice of 0..num.
    let (lo, _) = StepConfig::share(num, cfg.threads, t);
    let mut i = 0u64;
    let nexts = cfg.seek_nexts;
    match cfg.plan.kind {
        StepKind::FillSeq => drive(
            env,
            t,
            false,
            quota,
            None,
            || {
                st.fmt.encode(lo + i, &mut st.key);
                i += 1;
                st.fill_value(payload);
                s.put_no_wal(&st.key, &st.value)?;
                Ok((1, kv))
            },
            tx,
        ),
        StepKind::FillUniqueRandom => drive(
            env,
            t,
            false,
            quota,
            None,
            || {
                st.fmt.encode(env.perm.apply(lo + i), &mut st.key);
                i += 1;
                st.fill_value(payload);
                s.put(&st.key, &st.value)?;
                Ok((1, kv))
            },
            tx,
        ),
        StepKind::FillRandom | StepKind::Overwrite => {
            let mut uniform = KeyChooser::new(plumb_workloads::Distribution::Uniform, num, seed)
                .map_err(|e| TargetError::engine("plumb", e))?;
            let fill = cfg.plan.kind == StepKind::FillRandom;
            drive(
                env,
                t,
                false,
                quota,
                None,
                || {
                    let k = if fill {
                        uniform.next_key()
                    } else {
                        keys.next_key()
                    };
                    st.fmt.encode(k, &mut st.key);
                    st.fill_value(payload);
                    s.put(&st.key, &st.value)?;
                    Ok((1, kv))
                },
                tx,
            )
        }
        StepKind::DeleteRandom => drive(
            env,
            t,
            false,
            quota,
            None,
            || {
                st.fmt.encode(keys.next_key(), &mut st.key);
                s.delete(&st.key)?;
                Ok((1, cfg.key_size as u64))
            },
            tx,
        ),
        StepKind::ReadRandom | StepKind::ReadWhileWriting => {
            // A found value is checked one op later (see Session::get_deferred), so its
            // bytes count in that op; every value is checked, the last one below.
            let r = drive(
                env,
                t,
                false,
                quota,
                None,
                || {
                    st.fmt.encode(keys.next_key(), &mut st.key);
                    let (verify, check) = (&mut st.verify, st.check);
                    let mut bytes = 0u64;
                    let found = s.get_deferred(&st.key, &mut |k, v| {
                        bytes = (k.len() + v.len()) as u64;
                        OpState::check_value(verify, check, k, v);
                    })?;
                    if !found {
                        st.absent();
                    }
                    Ok((1, bytes))
                },
                tx,
            );
            let (verify, check) = (&mut st.verify, st.check);
            s.finish_deferred(&mut |k, v| OpState::check_value(verify, check, k, v))?;
            r
        }
        StepKind::MultiReadRandom => drive(
            env,
            t,
            false,
            quota,
            None,
            || {
                for k in st.batch.iter_mut() {
                    st.fmt.encode(keys.next_key(), k);
                }
                let (verify, check, batch) = (&mut st.verify, st.check, &st.batch);
                let mut bytes = 0u64;
                let mut absent = 0u64;
                s.multi_get(batch, &mut |i, v| match v {
                    Some(v) => {
                        bytes += (batch[i].len() + v.len()) as u64;
                        OpState::check_value(verify, check, &batch[i], v);
                    }
                    None => absent += 1,
                })?;
                let n = batch.len() as u64;
                for _ in 0..absent {
                    st.absent();
                }
                // db_bench counts every key of a batch as an op; latency is per batch.
                Ok((n, bytes))
            },
            tx,
        ),
        StepKind::ReadSeq => {
            // One forward pass over this thread's slice of the key space on one cursor,
            // every entry an op (timed one by one), as db_bench's readseq.
            let fmt = st.fmt;
            let mut next = lo;
            let mut left = quota;
            drive(
                env,
                t,
                false,
                quota,
                None,
                || {
                    if left == 0 {
                        return Ok((0, 0));
                    }
                    fmt.encode(next, &mut st.key);
                    let (verify, check) = (&mut st.verify, st.check);
                    let mut bytes = 0u64;
                    let mut last = None;
                    let more = s.next_in_order(&st.key, &mut |k, v| {
                        bytes = (k.len() + v.len()) as u64;
                        last = fmt.decode(k);
                        OpState::check_value(verify, check, k, v);
                    })?;
                    if !more {
                        return Ok((0, 0));
                    }
                    if let Some(k) = last {
                        next = k + 1;
                    }
                    left -= 1;
                    Ok((1, bytes))
                },
                tx,
            )
        }
        StepKind::FwdRange
        | StepKind::RevRange
        | StepKind::FwdRangeWhileWriting
        | StepKind::RevRangeWhileWriting => {
            let reverse = matches!(
                cfg.plan.kind,
                StepKind::RevRange | StepKind::RevRangeWhileWriting
            );
            drive(
                env,
                t,
                false,
                quota,
                None,
                || {
                    st.fmt.encode(keys.next_key(), &mut st.key);
                    let (verify, check) = (&mut st.verify, st.check);
                    let mut bytes = 0u64;
                    s.scan(&st.key, nexts, reverse, &mut |k, v| {
                        bytes += (k.len() + v.len()) as u64;
                        OpState::check_value(verify, check, k, v);
                    })?;
                    Ok((1, bytes))
                },
                tx,
            )
        }
        StepKind::Flush | StepKind::WaitForCompaction | StepKind::Compact => Ok(()),
    }
}

/// The timed loop shared by every op kind. `op` returns (ops counted, user bytes);
/// zero ops means the worker has nothing left to do.
#[inline(always)]
fn drive<F>(
    env: &WorkerEnv<'_>,
    t: usize,
    writer: bool,
    quota: u64,
    mut pacer: Option<&mut Pacer>,
    mut op: F,
    tx: &Sender<Msg>,
) -> Result<(), TargetError>
where
    F: FnMut() -> Result<(u64, u64), TargetError>,
{
    let shared = env.shared;
    let mut epoch = shared.epoch.load(Relaxed);
    let mut hist = LatencyHistogram::new();
    let (mut ops, mut bytes) = (0u64, 0u64);
    let mut done = 0u64;
    let stop = || shared.stop.load(Relaxed);
    let flush = |epoch: u64, ops: u64, bytes: u64, hist: &mut LatencyHistogram| {
        if ops > 0 {
            let h = std::mem::take(hist);
            let _ = tx.send(Msg::Interval(Report {
                writer,
                epoch,
                ops,
                bytes,
                hist: h,
            }));
        }
    };
    let mut last_end = Instant::now();
    let result = loop {
        if done >= quota || stop() {
            break Ok(());
        }
        // Closed loop: an op starts when the previous one ended (one clock read per op,
        // as db_bench's FinishedOps does; the few ns of key choice in between count as
        // the op's). Open loop: from the intended start.
        let start = match pacer.as_deref_mut() {
            Some(p) => match p.wait_next(&stop) {
                Some(due) => due,
                None => break Ok(()),
            },
            None => last_end,
        };
        let (n, b) = match op() {
            Ok((0, _)) => break Ok(()), // nothing left to do (a scan past the last key)
            Ok(x) => x,
            Err(e) => break Err(e),
        };
        let end = Instant::now();
        let ns = end.saturating_duration_since(start).as_nanos() as u64;
        last_end = end;
        let now_epoch = shared.epoch.load(Relaxed);
        if now_epoch != epoch {
            flush(epoch, ops, bytes, &mut hist);
            (ops, bytes) = (0, 0);
            epoch = now_epoch;
        }
        hist.record_ns(ns);
        ops += n;
        bytes += b;
        if epoch > 0 {
            done += n;
            if !writer {
                shared.progress[t].0.store(done, Relaxed);
            }
        }
    };
    flush(epoch, ops, bytes, &mut hist);
    result
}
