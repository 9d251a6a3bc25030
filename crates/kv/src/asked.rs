//! What `plumb kv`'s flags ask for, checked before anything is written: the steps
//! (`--benchmarks`, `--workload` or the default, settled before reads on an LSM
//! engine), the op-mix steps' inputs, and the data dir.

use anyhow::bail;
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
) -> anyhow::Result<(Vec<StepPlan>, String)> {
    let (steps, name) = match (benchmarks, workload) {
        (Some(b), _) => (steps::parse_benchmarks(b)?, b.to_string()),
        (None, Some(w)) => (steps::workload(w)?, w.to_string()),
        (None, None) => (
            steps::workload("default")?,
            steps::DEFAULT_BENCHMARKS.to_string(),
        ),
    };
    if let Some(why) = plumb_plan::refused(engine, &steps, params) {
        bail!("--engine {}: {why}", engine.name());
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
pub fn check_mix(steps: &[StepPlan], p: &mut KvParams) -> anyhow::Result<()> {
    let has = |k| steps.iter().any(|s| s.kind == k);
    match (has(StepKind::Mix), &p.mix) {
        (true, None) => bail!(
            "--benchmarks mix: the mix step runs an op-mix file; give it with --mix FILE \
             (examples/mixes/ has YCSB's A-F and mixgraph as such files)"
        ),
        (false, Some(m)) => bail!("--mix {m}: add `mix` to --benchmarks to run it"),
        _ => {}
    }
    if !p.mixgraph.is_empty() && !has(StepKind::MixGraph) {
        bail!("--mixgraph: add `mixgraph` to --benchmarks to run it");
    }
    p.read_mix(None)
        .map_err(|e| anyhow::anyhow!("--{}: {}", e.key, e.message))?;
    if has(StepKind::MixGraph) {
        let pairs = p
            .mixgraph_params()
            .map_err(|e| anyhow::anyhow!("--{}: {}", e.key, e.message))?;
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
) -> anyhow::Result<DirPolicy> {
    let Some(dir) = db else {
        return Ok(DirPolicy::Fresh { root: None, keep });
    };
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => bail!(
            "--db: {} is not a directory; plumb only writes into directories",
            dir.display()
        ),
        Ok(_) => {
            let empty = std::fs::read_dir(dir)
                .map_err(|e| anyhow::anyhow!("--db: reading {}: {e}", dir.display()))?
                .next()
                .is_none();
            if existing {
                if !engine.holds_database(dir) {
                    bail!(
                        "--use-existing-db: {} holds no {} database",
                        dir.display(),
                        engine.name()
                    );
                }
            } else if !empty && !force {
                bail!(
                    "--db: {} is not empty; plumb never writes into a non-empty directory. \
                     Use --use-existing-db to run on the database in it, --force to write anyway, \
                     or an empty directory",
                    dir.display()
                );
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if existing {
                bail!("--use-existing-db: {} does not exist", dir.display());
            }
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("--db: creating {}: {e}", dir.display()))?;
        }
        Err(e) => bail!("--db: {}: {e}", dir.display()),
    }
    Ok(DirPolicy::Given {
        dir: dir.to_path_buf(),
        existing,
    })
}
