//! The op mixes as one [`Workload`]: the user's own mix file (`mix`, `--mix FILE`) and
//! db_bench's mixgraph (`mixgraph`, `--mixgraph NAME=VALUE`), both a
//! [`plumb_workloads::mix::Mix`] whose sampler picks each op, its key, value size and
//! scan length. Every op goes through the same session calls db_bench's steps use
//! (get, put, delete, seek + nexts, multi-get; a read-modify-write is a get then a put),
//! so a mix runs on every engine, and each kind of op is timed apart.

use super::{Worker, Workload};
use crate::config::StepConfig;
use plumb_core::value;
use plumb_core::{Session, TargetError, Verification};
use plumb_workloads::distribution::worker_seed;
use plumb_workloads::mix::{self, Mix, MixOpKind};
use plumb_workloads::{KeyFormat, StepKind};

/// One op-mix step.
pub struct MixStep {
    mix: Mix,
}

fn refused(option: &str, e: impl std::fmt::Display) -> TargetError {
    TargetError::Option {
        option: option.into(),
        message: e.to_string(),
    }
}

impl MixStep {
    /// The step's mix: the file the run keeps (`mix`), or mixgraph with the run's
    /// parameters over db_bench's defaults.
    pub fn new(cfg: &StepConfig) -> Result<MixStep, TargetError> {
        let mix = match cfg.plan.kind {
            StepKind::MixGraph => {
                mix::mixgraph(&cfg.mixgraph).map_err(|e| refused("--mixgraph", e))?
            }
            _ => {
                let src = cfg.mix.as_ref().ok_or_else(|| {
                    refused("--mix", "the mix step needs a mix file: give --mix FILE")
                })?;
                mix::parse_mix(&src.text, &src.name).map_err(|e| refused("--mix", e))?
            }
        };
        mix.refuse_unrunnable().map_err(|e| refused("--mix", e))?;
        Ok(MixStep { mix })
    }

    /// A read of a loaded key that finds nothing is an error, unless the mix makes misses
    /// expected: it deletes or inserts (a read may ask for a key deleted, or for one
    /// another thread has yet to insert), or it is mixgraph's plain power model, which
    /// reads db_bench's wrapped keys, never loaded (see plumb_workloads::mix): misses are
    /// its nature, not an error.
    fn reads_must_hit(&self) -> bool {
        let deletes = self
            .mix
            .ops
            .iter()
            .any(|o| matches!(o.kind, MixOpKind::Delete | MixOpKind::Insert));
        let wraps = matches!(self.mix.keys, mix::KeySpec::PowerKeyrange(_));
        !deletes && !wraps
    }

    /// The most keys one op of the mix asks for at once (a multi-get's batch), at least 1.
    fn largest_batch(&self) -> usize {
        self.mix
            .ops
            .iter()
            .map(|o| o.keys as usize)
            .max()
            .unwrap_or(1)
            .max(1)
    }
}

impl Workload for MixStep {
    fn run(&self, w: &mut Worker<'_>, verify: &mut Verification) -> Result<(), TargetError> {
        let cfg = w.cfg();
        let t = w.index();
        let num = cfg.num.max(1);
        let fmt = KeyFormat { size: cfg.key_size };
        let payload = w.payload();
        let stores = w.target().stores_data();
        let must_exist = stores && w.all_present() && self.reads_must_hit();
        let mut sampler = self
            .mix
            .thread_sampler(
                num,
                cfg.value_size,
                worker_seed(cfg.seed, cfg.index, t) ^ 0x6d69,
                t,
                cfg.threads,
            )
            .map_err(|e| refused("--mix", e))?;
        // The largest value any op may write, its header included.
        let largest = payload.len().saturating_sub(1).max(value::HEADER_LEN + 1);
        let mut key = fmt.buffer();
        let mut val = vec![0u8; largest];
        let mut batch = vec![fmt.buffer(); self.largest_batch()];
        let mut pos = 0usize;
        let mut v = Verification::default();
        let ops = &self.mix.ops;
        let quota = cfg.thread_quota(t);
        let mut session = w.target().session()?;
        let s: &mut dyn Session = session.as_mut();
        let mut write = |s: &mut dyn Session,
                         c: &super::OpClock,
                         key: &[u8],
                         size: usize|
         -> Result<u64, TargetError> {
            let n = size.clamp(value::HEADER_LEN + 1, largest);
            let body = n - value::HEADER_LEN;
            if pos + body > payload.len() {
                pos = 0;
            }
            value::encode(key, &payload[pos..], &mut val[..n]);
            pos += body;
            c.engine(|| s.put(key, &val[..n]))?;
            Ok((key.len() + n) as u64)
        };
        // A mix with phases draws by the weights of the phase in force when each op
        // starts (one clock read per op, for phased mixes only).
        let (lane, phased) = (w.lane(), !self.mix.phases.is_empty());
        let r = w.drive(quota, |c| {
            if phased {
                sampler.set_phase(self.mix.phase_at(lane.since_open()));
            }
            let i = sampler.next_op();
            c.set_class(i as u8);
            let op = &ops[i];
            let bytes = match op.kind {
                MixOpKind::Get | MixOpKind::Rmw => {
                    fmt.encode(sampler.key(), &mut key);
                    let mut got = 0u64;
                    let hit = c.engine(|| s.get(&key, &mut |val| got = val.len() as u64))?;
                    if stores {
                        v.verified += 1;
                        if !hit {
                            if must_exist {
                                v.missing += 1;
                            } else {
                                v.not_found += 1;
                            }
                        }
                    }
                    if op.kind == MixOpKind::Rmw {
                        let size = sampler.value_size(i);
                        got + write(s, c, &key, size)?
                    } else {
                        key.len() as u64 + got
                    }
                }
                MixOpKind::Put | MixOpKind::Merge => {
                    // (Merge is refused in MixStep::new.)
                    let k = sampler.key();
                    fmt.encode(k, &mut key);
                    let size = sampler.value_size(i);
                    let b = write(s, c, &key, size)?;
                    sampler.inserted(k);
                    b
                }
                MixOpKind::Insert => {
                    // A new key past --num (thread t of T takes num+t, num+t+T, …).
                    let k = sampler.insert_key();
                    fmt.encode(k, &mut key);
                    let size = sampler.value_size(i);
                    let b = write(s, c, &key, size)?;
                    sampler.inserted(k);
                    b
                }
                MixOpKind::Delete => {
                    fmt.encode(sampler.key(), &mut key);
                    c.engine(|| s.delete(&key))?;
                    key.len() as u64
                }
                MixOpKind::Seek => {
                    fmt.encode(sampler.key(), &mut key);
                    let len = sampler.scan_length(i).max(1);
                    let mut bytes = 0u64;
                    c.engine(|| {
                        s.scan(&key, len - 1, false, &mut |k, val| {
                            bytes += (k.len() + val.len()) as u64
                        })
                    })?;
                    bytes
                }
                MixOpKind::MultiGet => {
                    let n = (op.keys as usize).clamp(1, batch.len());
                    for k in batch[..n].iter_mut() {
                        fmt.encode(sampler.key(), k);
                    }
                    let mut bytes = 0u64;
                    let mut absent = 0u64;
                    let keys = &batch[..n];
                    c.engine(|| {
                        s.multi_get(keys, &mut |j, val| match val {
                            Some(val) => bytes += (keys[j].len() + val.len()) as u64,
                            None => absent += 1,
                        })
                    })?;
                    if stores {
                        v.verified += n as u64;
                        if must_exist {
                            v.missing += absent;
                        } else {
                            v.not_found += absent;
                        }
                    }
                    bytes
                }
            };
            Ok((1, bytes))
        });
        *verify = v;
        r
    }

    fn classes(&self) -> Vec<String> {
        self.mix.op_names()
    }
}
