//! A suite file taken up for running: planned (`plumb_plan::load`), then checked whole
//! before anything runs (each engine built in, or its release's plumb found; each
//! family's scripts parsed), so a typo costs a message, not the night; and its attempt
//! begun in the store.

use crate::family::{check_runs, Family};
use crate::lifecycle::now;
use plumb_plan::{Plan, PlanOptions, SuiteError};
use plumb_store::{NewSuite, Store, StoreError};
use std::path::Path;
use thiserror::Error;

/// Why a suite file cannot run as written.
#[derive(Debug, Error)]
pub enum SuiteLoadError {
    /// The file does not plan (unreadable, malformed, a bad key).
    #[error(transparent)]
    Plan(#[from] SuiteError),
    /// A target's engine is not built in, or its release's plumb is not found.
    #[error("{file}: target {target:?}: {why}")]
    Target {
        /// The suite file.
        file: String,
        /// The target's name.
        target: String,
        /// Why it cannot run.
        why: String,
    },
    /// A run's family refuses it (a script that does not parse, …).
    #[error("{file}: {why}")]
    Check {
        /// The suite file.
        file: String,
        /// The family's refusal, naming the run's variant.
        why: String,
    },
}

/// Plans the suite at `path` and checks every run with the families of `families`
/// before anything runs.
pub fn load(path: &Path, o: PlanOptions, families: &[&dyn Family]) -> Result<Plan, SuiteLoadError> {
    let plan = plumb_plan::load(path, o)?;
    let file = || path.display().to_string();
    for r in &plan.runs {
        let Some(e) = r.target.engine_spec() else {
            continue;
        };
        let checked = match &r.target.release {
            // Another release runs in the plumb built against it: it must exist.
            Some(rel) if !r.target.runs_in_this_build() => {
                plumb_targets::builds::find(e.name(), rel).map(drop)
            }
            _ => e.check_built_in().map_err(|e| e.to_string()),
        };
        checked.map_err(|why| SuiteLoadError::Target {
            file: file(),
            target: r.target.name.clone(),
            why,
        })?;
    }
    check_runs(families, &plan.runs).map_err(|why| SuiteLoadError::Check { file: file(), why })?;
    Ok(plan)
}

/// Why a suite's attempt could not be begun in the store.
#[derive(Debug, Error)]
pub enum BeginError {
    /// The plan does not serialise (it always should).
    #[error(transparent)]
    Plan(#[from] serde_json::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Begins a new attempt of `plan` (read from `file`) in the store, its plan stored
/// whole so `--resume` runs what it planned; returns the suite's id.
pub fn begin(store: &Store, plan: &Plan, file: &Path) -> Result<i64, BeginError> {
    Ok(store.begin_suite(&NewSuite {
        name: plan.name.clone(),
        file: Some(file.display().to_string()),
        definition_hash: plan.definition_hash.clone(),
        plan: serde_json::to_value(plan)?,
        started_at: now(),
    })?)
}
