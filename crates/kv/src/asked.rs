//! What `plumb kv`'s flags ask for, checked before anything is written: the steps
//! (`--benchmarks`, `--workload` or the default, settled before reads on an LSM
//! engine), the op-mix steps' inputs, and the data dir.

use crate::error::AskedError;
use plumb_plan::KvParams;
use plumb_runner::DirPolicy;
use plumb_targets::EngineSpec;
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
