//! A stored run run again (`plumb rerun RUN`): its stored plan read back and checked
//! (a plan kept, readable by this plumb, on no existing database, its engine built in),
//! and what differs between the plumb and engine that ran it then and those now.

use crate::lifecycle::Provenance;
use plumb_core::TargetError;
use plumb_plan::RunPlan;
use plumb_store::RunRecord;
use thiserror::Error;

/// Why a stored run cannot run again from its plan.
#[derive(Debug, Error)]
pub enum RerunError {
    /// The run was stored by a plumb that kept no plans.
    #[error("run {id}: stored by a plumb that did not keep plans; its command was `{command}`")]
    NoPlan {
        /// The run.
        id: i64,
        /// The command it was made with.
        command: String,
    },
    /// The stored plan does not read back in this plumb.
    #[error("run {id}: the stored plan is unreadable by this plumb")]
    Unreadable {
        /// The run.
        id: i64,
        /// Why.
        source: serde_json::Error,
    },
    /// The run ran on a database that existed before it, which a rerun cannot make.
    #[error(
        "run {id}: ran on an existing database ({dir}); rerun it with `plumb kv --use-existing-db \
         --db DIR` on that database"
    )]
    ExistingDb {
        /// The run.
        id: i64,
        /// Its data dir, or `?`.
        dir: String,
    },
    /// The plan's engine is not built into this plumb.
    #[error(transparent)]
    NotBuiltIn(#[from] TargetError),
}

/// The plan `old` was run from, checked to run again here.
pub fn stored_plan(old: &RunRecord) -> Result<RunPlan, RerunError> {
    let Some(plan) = &old.plan else {
        return Err(RerunError::NoPlan {
            id: old.id,
            command: old.command.clone(),
        });
    };
    let plan: RunPlan = serde_json::from_value(plan.clone())
        .map_err(|source| RerunError::Unreadable { id: old.id, source })?;
    if plan.use_existing_db {
        return Err(RerunError::ExistingDb {
            id: old.id,
            dir: old.data_dir.as_deref().unwrap_or("?").to_string(),
        });
    }
    if let Some(e) = plan.target.engine_spec() {
        e.check_built_in()?;
    }
    Ok(plan)
}

/// What differs between the run `old` and its rerun of `plan` by the plumb of `now`:
/// plumb's version or commit, the engine's release (a server's is known once it runs).
pub fn differences(now: &Provenance, plan: &RunPlan, old: &RunRecord) -> Vec<String> {
    let mut diffs = Vec::new();
    if now.plumb_version != old.plumb_version || now.git_hash != old.git_hash {
        diffs.push(format!(
            "plumb {} ({}) now, {} ({}) then",
            now.plumb_version,
            now.git_hash.as_deref().unwrap_or("no git hash"),
            old.plumb_version,
            old.git_hash.as_deref().unwrap_or("no git hash")
        ));
    }
    let engine_now = plan
        .target
        .engine_spec()
        .map(|e| e.version())
        .unwrap_or_else(|| old.engine_version.clone());
    if engine_now != old.engine_version {
        diffs.push(format!(
            "{} {engine_now} now, {} then",
            old.engine, old.engine_version
        ));
    }
    diffs
}
