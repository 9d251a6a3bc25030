//! What `plumb kv`'s flags ask for, checked before anything is written: the steps
//! (`--benchmarks`, `--workload` or the default, settled before reads on an LSM
//! engine), the op-mix steps' inputs, the engine and the other flags, the plan they
//! make, and the data dir.

use crate::error::AskedError;
use plumb_core::TargetError;
use plumb_plan::{KvParams, RunPlan, TargetPlan, WorkloadPlan};
use plumb_runner::DirPolicy;
use plumb_targets::{EngineCommon, EngineFlags, EngineSpec};
use plumb_workloads::steps::{self, StepPlan};
use plumb_workloads::StepKind;
use std::path::Path;

/// The steps and the workload's name: `--benchmarks` (db_bench's list), else a named
/// workload, else the default sequence; refused when the engine cannot run them, and
/// with `settle`, an LSM engine's memtable flushed and compactions waited for before
/// each read step, so each read starts from the same tree in every run.
pub fn steps(
    benchmarks: Option<&str>,
    workload: Option<&str>,
    engine: &EngineSpec,
    params: &KvParams,
    settle: bool,
) -> Result<(Vec<StepPlan>, String), AskedError> {
    let (steps, name) = match (benchmarks, workload) {
        (Some(b), _) => (steps::parse_benchmarks(b)?, b.to_string()),
        (None, Some(w)) => (steps::workload(w)?, w.to_string()),
        (None, None) => (
            steps::workload("default")?,
            steps::DEFAULT_BENCHMARKS.to_string(),
        ),
    };
    if let Some(why) = plumb_plan::refused(engine, &steps, params) {
        return Err(AskedError::EngineRefuses {
            engine: engine.name().to_string(),
            why,
        });
    }
    let steps = if settle && engine.capabilities().lsm {
        steps::settle_before_reads(&steps)
    } else {
        steps
    };
    Ok((steps, name))
}

/// The op-mix steps' inputs, checked before anything runs: `mix` needs `--mix FILE`
/// (read into the plan, so the run keeps its text; a bad file names its line and
/// field), `mixgraph` takes db_bench's parameter names; either given without its step
/// is a mistake said as such.
pub fn check_mix(steps: &[StepPlan], p: &mut KvParams) -> Result<(), AskedError> {
    let has = |k| steps.iter().any(|s| s.kind == k);
    match (has(StepKind::Mix), &p.mix) {
        (true, None) => return Err(AskedError::MixWithoutFile),
        (false, Some(m)) => return Err(AskedError::MixWithoutStep { file: m.clone() }),
        _ => {}
    }
    if !p.mixgraph.is_empty() && !has(StepKind::MixGraph) {
        return Err(AskedError::MixgraphWithoutStep);
    }
    p.read_mix(None).map_err(flag)?;
    if has(StepKind::MixGraph) {
        let pairs = p.mixgraph_params().map_err(flag)?;
        plumb_workloads::mix::mixgraph(&pairs)?;
    }
    Ok(())
}

/// The data dir of `--db` (created when absent, refused when it holds something else
/// than the engine's database to reuse), else a fresh temp dir.
pub fn data_dir(
    db: Option<&Path>,
    existing: bool,
    force: bool,
    keep: bool,
    engine: &EngineSpec,
) -> Result<DirPolicy, AskedError> {
    let Some(dir) = db else {
        return Ok(DirPolicy::Fresh { root: None, keep });
    };
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(AskedError::DbNotADirectory {
                dir: dir.to_path_buf(),
            })
        }
        Ok(_) => {
            let empty = std::fs::read_dir(dir)
                .map_err(|error| AskedError::DbUnreadable {
                    dir: dir.to_path_buf(),
                    error,
                })?
                .next()
                .is_none();
            if existing {
                if !engine.holds_database(dir) {
                    return Err(AskedError::NoDatabase {
                        dir: dir.to_path_buf(),
                        engine: engine.name().to_string(),
                    });
                }
            } else if !empty && !force {
                return Err(AskedError::DbNotEmpty {
                    dir: dir.to_path_buf(),
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if existing {
                return Err(AskedError::DbMissing {
                    dir: dir.to_path_buf(),
                });
            }
            std::fs::create_dir_all(dir).map_err(|error| AskedError::DbUncreatable {
                dir: dir.to_path_buf(),
                error,
            })?;
        }
        Err(error) => {
            return Err(AskedError::DbUnreachable {
                dir: dir.to_path_buf(),
                error,
            })
        }
    }
    Ok(DirPolicy::Given {
        dir: dir.to_path_buf(),
        existing,
    })
}

/// A flag's value refused by the plan's checks, said under the flag's name.
fn flag(e: plumb_plan::ParamError) -> AskedError {
    AskedError::Flag {
        key: e.key,
        message: e.message,
    }
}

/// What `plumb kv`'s flags ask for, gathered for [`plan`]: the binary keeps the flags'
/// definitions and help, this crate turns them into the plan it runs.
#[derive(Debug)]
pub struct Asked<'a> {
    /// `--engine`: the engine's name.
    pub engine: &'a str,
    /// Every engine's own flags (those of `engine` apply).
    pub engines: &'a EngineFlags,
    /// The engine-neutral flags each engine maps onto its own settings.
    pub common: &'a EngineCommon,
    /// The workload's parameters (`--num`, `--threads`, …).
    pub params: &'a KvParams,
    /// `--benchmarks`: the steps, comma-separated.
    pub benchmarks: Option<&'a str>,
    /// `--workload`: a named sequence.
    pub workload: Option<&'a str>,
    /// `--settle`: settle an LSM engine before each read step.
    pub settle: bool,
    /// `--db`: the data directory given.
    pub db: Option<&'a Path>,
    /// `--use-existing-db`.
    pub use_existing_db: bool,
    /// `--keep`: keep the temp data dir.
    pub keep: bool,
    /// `--memory-mb`: the cgroup limit of the process holding the engine.
    pub memory_mb: Option<u64>,
    /// `--drop-caches`.
    pub drop_caches: bool,
    /// The seed (`--seed`, or the clock's).
    pub seed: u64,
    /// `--repeat`: how many times the sequence runs.
    pub repeat: u32,
    /// With `--until`: the repeats after which the stopping rule first looks, which
    /// `--repeat` (the most it may take) must exceed.
    pub first_look: Option<usize>,
}

/// `--flag` for a parameter key (`key_size` → `--key-size`), so a refusal names the
/// flag the user typed.
pub fn flag_of(key: &str) -> String {
    // An engine's own option may be spelled otherwise on the command line
    // (`option_string` is `--rocksdb-options`): the option reference knows.
    plumb_targets::spec::option_sections()
        .iter()
        .flat_map(|s| s.rows.iter())
        .find(|r| r.key == key)
        .map(|r| r.flag.clone())
        .unwrap_or_else(|| format!("--{}", key.replace('_', "-")))
}

/// The engine named by `--engine`, with its own flags and the engine-neutral ones
/// applied and checked.
pub fn engine(a: &Asked<'_>) -> Result<EngineSpec, AskedError> {
    let mut spec = match a.engines.spec(a.engine) {
        Some(s) => s,
        None => EngineSpec::default_for(a.engine).map_err(|_| AskedError::UnknownEngine {
            engine: a.engine.to_string(),
        })?,
    };
    spec.check_built_in()
        .map_err(|error| AskedError::NotBuiltIn {
            engine: a.engine.to_string(),
            error,
        })?;
    spec.apply_common(a.common)
        .and_then(|()| spec.validate())
        .map_err(|e| match e {
            TargetError::Option { option, message } => AskedError::Option {
                flag: flag_of(&option),
                message,
            },
            e => AskedError::Engine(e),
        })?;
    Ok(spec)
}

/// Checks every flag and builds the plan, one run per repeat; nothing is written
/// before this succeeds.
pub fn plan(a: &Asked<'_>) -> Result<Vec<RunPlan>, AskedError> {
    let engine = engine(a)?;
    a.params.validate().map_err(|e| AskedError::Option {
        flag: flag_of(e.key),
        message: e.message,
    })?;
    if a.repeat == 0 || a.repeat > 1000 {
        return Err(AskedError::Repeat);
    }
    if let Some(first_look) = a.first_look.filter(|&f| (a.repeat as usize) < f + 1) {
        return Err(AskedError::UntilRepeat {
            repeat: a.repeat,
            first_look,
        });
    }
    plumb_plan::check_memory_mb(a.memory_mb).map_err(|e| AskedError::Memory(e.message))?;
    if a.use_existing_db && a.db.is_none() {
        return Err(AskedError::ExistingWithoutDb);
    }
    if a.keep && a.db.is_some() {
        return Err(AskedError::KeepWithDb);
    }
    if a.db.is_some() && !engine.capabilities().keeps_files {
        return Err(AskedError::NoFiles {
            engine: engine.name().to_string(),
        });
    }
    let (steps, name) = steps(a.benchmarks, a.workload, &engine, a.params, a.settle)?;
    let mut params = a.params.clone();
    check_mix(&steps, &mut params)?;
    let one = RunPlan {
        use_existing_db: a.use_existing_db,
        // Under `plumb icount` the run's times are callgrind's: a history of its own.
        under: plumb_runner::kernel::callgrind::active().then(|| "callgrind".to_string()),
        ..RunPlan::single(
            "kv",
            TargetPlan {
                memory_mb: a.memory_mb,
                drop_caches: a.drop_caches,
                ..TargetPlan::engine(engine.name(), engine)
            },
            WorkloadPlan::kv_with(name, steps, params),
            a.seed,
        )
    };
    Ok(plumb_plan::order::rounds(&[one], a.repeat, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The engine flags as `plumb kv` parses them, at their defaults.
    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        engines: EngineFlags,
        #[command(flatten)]
        common: EngineCommon,
    }

    /// The step names of the plan of `--engine ENGINE --benchmarks fillseq,readrandom
    /// --seed 7`, with or without `--settle`.
    fn planned(engine: &str, settle: bool) -> Vec<String> {
        let f = Flags::try_parse_from(["kv"]).unwrap();
        let params = KvParams::default();
        let runs = plan(&Asked {
            engine,
            engines: &f.engines,
            common: &f.common,
            params: &params,
            benchmarks: Some("fillseq,readrandom"),
            workload: None,
            settle,
            db: None,
            use_existing_db: false,
            keep: false,
            memory_mb: None,
            drop_caches: false,
            seed: 7,
            repeat: 1,
            first_look: None,
        })
        .unwrap();
        let steps = runs[0].workload.kv_steps().unwrap();
        steps.iter().map(|s| s.name.clone()).collect()
    }

    #[test]
    fn settle_inserts_a_flush_and_a_compaction_wait_before_an_lsm_engines_read_step() {
        for lsm in plumb_targets::engines()
            .into_iter()
            .filter(|e| ["rocksdb", "speedb", "leveldb", "fjall"].contains(e))
        {
            assert_eq!(
                planned(lsm, true),
                [
                    "fillseq",
                    "settle.flush",
                    "settle.waitforcompaction",
                    "readrandom"
                ],
                "{lsm}"
            );
            assert_eq!(planned(lsm, false), ["fillseq", "readrandom"], "{lsm}");
        }
        // An engine with no background flushes or compactions has nothing to settle.
        assert_eq!(planned("memory", true), ["fillseq", "readrandom"]);
    }
}
