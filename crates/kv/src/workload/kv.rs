//! db_bench's steps (fills, point reads, multi-gets, scans, deletes, the paced writer
//! beside readers) as one [`Workload`]: each thread owns its session, key chooser, key
//! and value buffers, and checks what it reads as `--verify` asks. Every engine call
//! goes through [`super::OpClock::engine`] and every check made inside an engine
//! callback through [`super::OpClock::harness`], so plumb's own share of an op is known.

use super::{Role, Worker, Workload};
use crate::config::StepConfig;
use plumb_core::value::{self, Verdict, VerifyMode};
use plumb_core::{Session, TargetError, Verification};
use plumb_workloads::distribution::worker_seed;
use plumb_workloads::{KeyChooser, KeyFormat, StepKind};

/// One db_bench step kind, driven on a key-value target.
#[derive(Debug, Clone, Copy)]
pub struct KvStep {
    /// Which step.
    pub kind: StepKind,
    /// A paced writer runs beside the readers (a *whilewriting step with a write rate).
    pub writer: bool,
}

impl KvStep {
    /// The step of `cfg`.
    pub fn new(cfg: &StepConfig) -> Self {
        let kind = cfg.plan.kind;
        KvStep {
            kind,
            writer: kind.while_writing() && cfg.write_rate_mb > 0.0,
        }
    }
}

impl Workload for KvStep {
    fn run(&self, w: &mut Worker<'_>, verify: &mut Verification) -> Result<(), TargetError> {
        let cfg = w.cfg();
        let fmt = KeyFormat { size: cfg.key_size };
        let mut st = OpState {
            fmt,
            key: fmt.buffer(),
            value: vec![0u8; cfg.value_size],
            batch: vec![fmt.buffer(); cfg.batch_size.max(1)],
            payload_pos: 0,
            verify: Verification::default(),
            mode: if w.target().stores_data() {
                cfg.verify
            } else {
                VerifyMode::None
            },
            must_exist: w.target().stores_data() && w.all_present(),
            write_sums: cfg.verify != VerifyMode::None,
        };
        let mut session = w.target().session()?;
        let r = drive_kind(self.kind, w, &mut st, session.as_mut());
        *verify = st.verify;
        r
    }

    fn has_writer(&self) -> bool {
        self.writer
    }

    fn warms_up(&self) -> bool {
        !self.kind.is_fill()
    }
}

/// Checks a value read back for `key` as `mode` asks: its length and key tag, and the
/// full checksum on every value (`all`) or one in [`value::SAMPLE_EVERY`] (`sample`).
/// Range steps call it for the first value of each range unless the mode is `all`.
#[inline(always)]
fn check_value(verify: &mut Verification, mode: VerifyMode, key: &[u8], v: &[u8]) {
    let full = match mode {
        VerifyMode::None => return,
        VerifyMode::All => true,
        VerifyMode::Sample => verify.verified.is_multiple_of(value::SAMPLE_EVERY),
    };
    verify.verified += 1;
    let verdict = if full {
        value::verify(key, v)
    } else {
        value::verify_key(key, v)
    };
    // A value written without a checksum (--verify none) got its key checked only.
    if full && verdict != Verdict::KeyOnly {
        verify.checksummed += 1;
    }
    if verdict == Verdict::Mismatch {
        verify.mismatches += 1;
    }
}

/// Per-worker mutable op state: buffers reused for every op.
struct OpState {
    fmt: KeyFormat,
    key: Vec<u8>,
    value: Vec<u8>,
    batch: Vec<Vec<u8>>,
    payload_pos: usize,
    verify: Verification,
    /// What reads check (`None` on a target that keeps no data).
    mode: VerifyMode,
    /// A miss is an error: the target keeps data and every key was loaded.
    must_exist: bool,
    /// Written values carry a checksum (not under `--verify none`).
    write_sums: bool,
}

impl OpState {
    #[inline]
    fn fill_value(&mut self, payload: &[u8]) {
        let n = self.value.len() - value::HEADER_LEN;
        if self.payload_pos + n > payload.len() {
            self.payload_pos = 0;
        }
        let src = &payload[self.payload_pos..];
        if self.write_sums {
            value::encode(&self.key, src, &mut self.value);
        } else {
            value::encode_unsummed(&self.key, src, &mut self.value);
        }
        self.payload_pos += n;
    }

    #[inline]
    fn absent(&mut self) {
        if self.must_exist {
            self.verify.missing += 1;
        } else {
            self.verify.not_found += 1;
        }
    }
}

/// What every op of one measured thread reads and never changes: the step's key space,
/// the bytes a written pair counts, the payload values are cut from, the thread's share
/// of the step's ops and the first key of its slice of 0..num.
struct ThreadPlan<'a> {
    num: u64,
    seed: u64,
    kv: u64,
    payload: &'a [u8],
    quota: u64,
    lo: u64,
}

/// A key chooser over 0..num, its refusal (a bad distribution) an engine error of plumb's.
fn chooser(
    dist: plumb_workloads::Distribution,
    num: u64,
    seed: u64,
) -> Result<KeyChooser, TargetError> {
    KeyChooser::new(dist, num, seed).map_err(|e| TargetError::engine("plumb", e))
}

/// Runs this thread's part of a step of `kind`: the paced writer's, or the measured
/// thread's ops of the step, each kind of op in its own function.
fn drive_kind(
    kind: StepKind,
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
) -> Result<(), TargetError> {
    let cfg = w.cfg();
    let num = cfg.num.max(1);
    let t = w.index();
    let seed = worker_seed(cfg.seed, cfg.index, t);
    let keys = chooser(cfg.distribution, num, seed)?;
    let kv = (cfg.key_size + cfg.value_size) as u64;
    if w.role() == Role::Writer {
        return drive_writer(w, st, s, num, seed, kv);
    }
    let quota = cfg.thread_quota(t);
    // Fills walk their own slice of 0..num.
    let (lo, _) = StepConfig::share(num, cfg.threads, t);
    let plan = ThreadPlan {
        num,
        seed,
        kv,
        payload: w.payload(),
        quota,
        lo,
    };
    match kind {
        StepKind::FillSeq
        | StepKind::FillUniqueRandom
        | StepKind::FillRandom
        | StepKind::Overwrite => drive_writes(kind, w, st, s, &plan, keys),
        StepKind::DeleteRandom => drive_deletes(w, st, s, quota, keys),
        StepKind::ReadRandom | StepKind::ReadWhileWriting => {
            drive_point_reads(w, st, s, quota, keys)
        }
        StepKind::MultiReadRandom => drive_multi_gets(w, st, s, quota, keys),
        StepKind::ReadSeq => drive_read_seq(w, st, s, quota, lo),
        StepKind::FwdRange
        | StepKind::RevRange
        | StepKind::FwdRangeWhileWriting
        | StepKind::RevRangeWhileWriting => drive_ranges(kind, w, st, s, quota, keys),
        StepKind::Flush
        | StepKind::WaitForCompaction
        | StepKind::Compact
        | StepKind::Compact0
        | StepKind::Compact1
        | StepKind::FlushMtL0 => Ok(()),
        // YCSB's phases are their own workload (super::ycsb).
        StepKind::YcsbLoad
        | StepKind::YcsbA
        | StepKind::YcsbB
        | StepKind::YcsbC
        | StepKind::YcsbD
        | StepKind::YcsbE
        | StepKind::YcsbF
        | StepKind::Mix
        | StepKind::MixGraph => Err(TargetError::Option {
            option: "--benchmarks".into(),
            message: format!("{kind} is run by its own workload (YCSB's or the op mix's)"),
        }),
    }
}

/// The paced writer beside the readers of a *whilewriting step: uniform keys at the
/// step's write rate.
fn drive_writer(
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
    num: u64,
    seed: u64,
    kv: u64,
) -> Result<(), TargetError> {
    let payload = w.payload();
    let ops_per_sec = w.cfg().write_rate_mb * 1024.0 * 1024.0 / kv as f64;
    let mut uniform = chooser(plumb_workloads::Distribution::Uniform, num, seed)?;
    w.drive_paced(ops_per_sec, |c| {
        st.fmt.encode(uniform.next_key(), &mut st.key);
        st.fill_value(payload);
        c.engine(|| s.put(&st.key, &st.value))?;
        Ok((1, kv))
    })
}

/// The fills (fillseq, filluniquerandom, fillrandom) and overwrite: one put an op.
fn drive_writes(
    kind: StepKind,
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
    plan: &ThreadPlan<'_>,
    mut keys: KeyChooser,
) -> Result<(), TargetError> {
    let ThreadPlan {
        num,
        seed,
        kv,
        payload,
        quota,
        lo,
    } = *plan;
    let perm = w.permutation();
    let mut i = 0u64;
    match kind {
        StepKind::FillSeq => w.drive(quota, |c| {
            st.fmt.encode(lo + i, &mut st.key);
            i += 1;
            st.fill_value(payload);
            c.engine(|| s.put_no_wal(&st.key, &st.value))?;
            Ok((1, kv))
        }),
        StepKind::FillUniqueRandom => w.drive(quota, |c| {
            st.fmt.encode(perm.apply(lo + i), &mut st.key);
            i += 1;
            st.fill_value(payload);
            c.engine(|| s.put(&st.key, &st.value))?;
            Ok((1, kv))
        }),
        // fillrandom and overwrite.
        _ => {
            let mut uniform = chooser(plumb_workloads::Distribution::Uniform, num, seed)?;
            let fill = kind == StepKind::FillRandom;
            w.drive(quota, |c| {
                let k = if fill {
                    uniform.next_key()
                } else {
                    keys.next_key()
                };
                st.fmt.encode(k, &mut st.key);
                st.fill_value(payload);
                c.engine(|| s.put(&st.key, &st.value))?;
                Ok((1, kv))
            })
        }
    }
}

/// deleterandom: one delete an op, its key's bytes counted.
fn drive_deletes(
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
    quota: u64,
    mut keys: KeyChooser,
) -> Result<(), TargetError> {
    let key_size = w.cfg().key_size;
    w.drive(quota, |c| {
        st.fmt.encode(keys.next_key(), &mut st.key);
        c.engine(|| s.delete(&st.key))?;
        Ok((1, key_size as u64))
    })
}

/// readrandom and readwhilewriting: one point read an op.
fn drive_point_reads(
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
    quota: u64,
    mut keys: KeyChooser,
) -> Result<(), TargetError> {
    // A found value is checked one op later (see Session::get_deferred), so its
    // bytes count in that op; every value is checked, the last one below.
    let r = w.drive(quota, |c| {
        st.fmt.encode(keys.next_key(), &mut st.key);
        let (verify, mode) = (&mut st.verify, st.mode);
        let mut bytes = 0u64;
        let found = c.engine(|| {
            s.get_deferred(&st.key, &mut |k, v| {
                bytes = (k.len() + v.len()) as u64;
                c.harness(|| check_value(verify, mode, k, v));
            })
        })?;
        if !found {
            st.absent();
        }
        Ok((1, bytes))
    });
    let (verify, mode) = (&mut st.verify, st.mode);
    s.finish_deferred(&mut |k, v| check_value(verify, mode, k, v))?;
    r
}

/// multireadrandom: one multi-get of a batch of keys an op.
fn drive_multi_gets(
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
    quota: u64,
    mut keys: KeyChooser,
) -> Result<(), TargetError> {
    w.drive(quota, |c| {
        for k in st.batch.iter_mut() {
            st.fmt.encode(keys.next_key(), k);
        }
        let (verify, mode, batch) = (&mut st.verify, st.mode, &st.batch);
        let mut bytes = 0u64;
        let mut absent = 0u64;
        c.engine(|| {
            s.multi_get(batch, &mut |i, v| match v {
                Some(v) => {
                    bytes += (batch[i].len() + v.len()) as u64;
                    c.harness(|| check_value(verify, mode, &batch[i], v));
                }
                None => absent += 1,
            })
        })?;
        let n = batch.len() as u64;
        for _ in 0..absent {
            st.absent();
        }
        // db_bench counts every key of a batch as an op; latency is per batch.
        Ok((n, bytes))
    })
}

/// readseq: one forward pass over this thread's slice of the key space on one cursor,
/// every entry an op (timed one by one), as db_bench's readseq.
fn drive_read_seq(
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
    quota: u64,
    lo: u64,
) -> Result<(), TargetError> {
    let fmt = st.fmt;
    let mut next = lo;
    let mut left = quota;
    w.drive(quota, |c| {
        if left == 0 {
            return Ok((0, 0));
        }
        fmt.encode(next, &mut st.key);
        let (verify, mode) = (&mut st.verify, st.mode);
        let mut bytes = 0u64;
        let mut last = None;
        let more = c.engine(|| {
            s.next_in_order(&st.key, &mut |k, v| {
                bytes = (k.len() + v.len()) as u64;
                c.harness(|| {
                    last = fmt.decode(k);
                    check_value(verify, mode, k, v);
                });
            })
        })?;
        if !more {
            return Ok((0, 0));
        }
        if let Some(k) = last {
            next = k + 1;
        }
        left -= 1;
        Ok((1, bytes))
    })
}

/// The range scans (fwdrange, revrange, and each beside a writer): one seek and
/// `seek_nexts` nexts an op.
fn drive_ranges(
    kind: StepKind,
    w: &mut Worker<'_>,
    st: &mut OpState,
    s: &mut dyn Session,
    quota: u64,
    mut keys: KeyChooser,
) -> Result<(), TargetError> {
    let nexts = w.cfg().seek_nexts;
    let reverse = matches!(kind, StepKind::RevRange | StepKind::RevRangeWhileWriting);
    w.drive(quota, |c| {
        st.fmt.encode(keys.next_key(), &mut st.key);
        let (verify, mode) = (&mut st.verify, st.mode);
        let mut bytes = 0u64;
        // The default checks the first value of each range: reading a value's
        // header is a cache miss a scan otherwise never takes (about 20 ns a
        // value, 4% of a cached scan's CPU when every value pays it).
        let mut first = true;
        c.engine(|| {
            s.scan(&st.key, nexts, reverse, &mut |k, v| {
                bytes += (k.len() + v.len()) as u64;
                if first || mode == VerifyMode::All {
                    c.harness(|| check_value(verify, mode, k, v));
                    first = false;
                }
            })
        })?;
        Ok((1, bytes))
    })
}
