//! A suite taken up again after Ctrl-C or a crash: its stored plan, the runs that
//! finished (skipped), the groups of repeats already begun (joined), and the runs a
//! stopped plumb left "running" (marked interrupted, so they run again).

use crate::lifecycle::now;
use plumb_core::RunStatus;
use plumb_plan::Plan;
use plumb_store::{Store, StoreError};
use std::collections::{HashMap, HashSet};
use thiserror::Error;

/// Why a suite could not be taken up again.
#[derive(Debug, Error)]
pub enum ResumeError {
    /// The stored plan does not read back (stored by another plumb release?).
    #[error("suite {id}: the stored plan is unreadable: {source}")]
    Plan {
        /// The suite.
        id: i64,
        /// Why.
        source: serde_json::Error,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An unfinished suite, ready to run what remains.
#[derive(Debug)]
pub struct Resumed {
    /// The suite.
    pub suite_id: i64,
    /// Its plan as stored when it began (not as the file reads now).
    pub plan: Plan,
    /// The plan hashes of its finished runs.
    pub done: HashSet<String>,
    /// Each variant's group of repeats, to join rather than begin again.
    pub groups: HashMap<String, i64>,
    /// Runs of the plan already finished.
    pub finished: usize,
    /// Runs a stopped plumb left running, now marked interrupted.
    pub stale: usize,
}

/// The unfinished suite with `fresh`'s definition (the same file, unchanged), marked
/// running again; `None` when the store holds none.
pub fn resume(store: &Store, fresh: &Plan) -> Result<Option<Resumed>, ResumeError> {
    let Some(s) = store.unfinished_suite(&fresh.definition_hash)? else {
        return Ok(None);
    };
    let plan: Plan = serde_json::from_value(s.plan.clone())
        .map_err(|source| ResumeError::Plan { id: s.id, source })?;
    let stale = store.interrupt_stale_runs(s.id, &now())?;
    let runs = store.suite_runs(s.id)?;
    let done: HashSet<String> = runs
        .iter()
        .filter(|r| r.status.finished())
        .filter_map(|r| r.plan_hash.clone())
        .collect();
    let mut groups = HashMap::new();
    for r in &runs {
        if let (Some(g), Some(v)) = (r.group_id, r.options.get("variant")) {
            groups.entry(v.clone()).or_insert(g);
        }
    }
    let finished = plan
        .runs
        .iter()
        .filter(|r| done.contains(&r.hash()))
        .count();
    store.finish_suite(s.id, RunStatus::Running, None)?;
    Ok(Some(Resumed {
        suite_id: s.id,
        plan,
        done,
        groups,
        finished,
        stale,
    }))
}
