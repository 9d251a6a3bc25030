//! What `plumb ib`'s flags ask for, checked before anything starts: the steps (the
//! published sequence, or `--steps`), the embedded engine of `--kv` or the server, and
//! the plan of the one run they make.

use crate::error::AskedError;
use plumb_plan::family::ib_steps_ok;
use plumb_plan::{Family, IbParams, IbWork, RunPlan, ServerSpec, TargetPlan, WorkloadPlan};
use plumb_targets::{EngineCommon, EngineSpec};
use plumb_workloads::ibench::{self as ibsteps, IbStepPlan};

/// What `plumb ib`'s flags ask for, gathered for [`plan`]: the binary keeps the flags'
/// definitions and help, this crate turns them into the run.
#[derive(Debug)]
pub struct Asked<'a> {
    /// The benchmark's parameters (`--rows`, `--clients`, …).
    pub params: &'a IbParams,
    /// `--steps`, as given.
    pub steps: Option<&'a str>,
    /// `--kv`: an embedded engine instead of a server.
    pub kv: Option<&'a str>,
    /// `--sync` (with `--kv`): flush every commit before it is acknowledged.
    pub sync: bool,
    /// `--cache-mb`: the buffer pool, shared_buffers or block cache.
    pub cache_mb: u64,
    /// The server, as `--server`, `--url` and the rest give it (unused with `--kv`).
    pub server: ServerSpec,
    /// `--memory-mb`: the cgroup limit of what holds the data.
    pub memory_mb: Option<u64>,
    /// The seed (`--seed`, or the clock's).
    pub seed: u64,
}

/// The steps of `--steps` (or the published sequence), with the parameters checked.
fn steps(a: &Asked<'_>) -> Result<Vec<IbStepPlan>, AskedError> {
    plumb_plan::check_memory_mb(a.memory_mb).map_err(|e| AskedError::Memory(e.message))?;
    a.params.validate().map_err(AskedError::flag)?;
    let steps = match a.steps {
        Some(s) => ibsteps::parse_steps(s)?,
        None => ibsteps::default_order(),
    };
    ib_steps_ok(&steps).map_err(AskedError::Steps)?;
    Ok(steps)
}

/// The embedded engine of `--kv`, with `--sync` and `--cache-mb` applied.
fn engine_spec(a: &Asked<'_>, name: &str) -> Result<EngineSpec, AskedError> {
    let kv = || name.to_string();
    let mut spec =
        EngineSpec::default_for(name).map_err(|_| AskedError::UnknownEngine { kv: kv() })?;
    spec.check_built_in()
        .map_err(|error| AskedError::NotBuiltIn { kv: kv(), error })?;
    let caps = spec.capabilities();
    if !caps.delete || !caps.stores_data {
        return Err(AskedError::EngineUnfit { kv: kv() });
    }
    let common = EngineCommon {
        sync: a.sync,
        cache_size: caps.cache.then_some(a.cache_mb << 20),
    };
    spec.apply_common(&common)
        .and_then(|()| spec.validate())
        .map_err(|error| AskedError::EngineOption { kv: kv(), error })?;
    Ok(spec)
}

/// Checks every flag and builds the one planned run; nothing starts before this
/// succeeds.
pub fn plan(a: Asked<'_>) -> Result<RunPlan, AskedError> {
    let steps = steps(&a)?;
    let target = match a.kv {
        Some(name) => TargetPlan::engine(name, engine_spec(&a, name)?),
        None => {
            a.server.validate().map_err(AskedError::flag)?;
            if a.memory_mb.is_some() && a.server.url.is_some() {
                return Err(AskedError::MemoryOnUrl);
            }
            TargetPlan::server(a.server.label(), a.server)
        }
    };
    Ok(RunPlan::single(
        "ib",
        TargetPlan {
            memory_mb: a.memory_mb,
            ..target
        },
        WorkloadPlan {
            name: match a.steps {
                Some(s) => format!("ibench:{s}"),
                None => "ibench".into(),
            },
            family: Family::Ib(IbWork {
                steps,
                params: a.params.clone(),
            }),
        },
        a.seed,
    ))
}
