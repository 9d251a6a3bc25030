//! A run being written to the store, shared by every front end that stores runs (the
//! engine lifecycle and `plumb probe`): steps get their place in order as they end, the
//! run's status follows its steps, and a run left behind by an early return is closed
//! rather than left `running`.

use crate::lifecycle::now;
use plumb_core::{Interval, RunStatus, StepStatus};
use plumb_store::{NewRun, StepRecord, Store, StoreError};

/// One open run in the store.
pub struct Recording<'s> {
    store: &'s mut Store,
    id: i64,
    next_seq: i64,
    status: RunStatus,
    open: bool,
}

impl<'s> Recording<'s> {
    /// Writes the run's row (status `running`).
    pub fn begin(store: &'s mut Store, run: &NewRun) -> Result<Self, StoreError> {
        let id = store.begin_run(run)?;
        Ok(Recording {
            store,
            id,
            next_seq: 0,
            status: RunStatus::Ok,
            open: true,
        })
    }

    /// The run's id.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The store, for what is written beside the run (groups, ceilings).
    pub fn store(&mut self) -> &mut Store {
        self.store
    }

    /// Stores a finished step as the run's next one (its `seq` is set here), folds
    /// its status into the run's, and returns the step's id.
    pub fn step(
        &mut self,
        mut step: StepRecord,
        intervals: &[Interval],
    ) -> Result<i64, StoreError> {
        step.seq = self.next_seq;
        let id = self.store.add_step(self.id, &step, intervals)?;
        self.next_seq += 1;
        self.fold(step.status);
        Ok(id)
    }

    /// Stores a step as it ran (its record made from `out`, its intervals) under
    /// `name` and `kind` with its knobs in `config`; returns the step's id. Every
    /// family stores its measured steps through here.
    pub fn outcome(
        &mut self,
        name: &str,
        kind: plumb_store::Kind,
        out: &crate::StepOutcome,
        config: serde_json::Value,
    ) -> Result<i64, StoreError> {
        self.step(
            StepRecord {
                seq: 0, // given by `step`
                name: name.to_string(),
                kind,
                status: out.status,
                error: out.error.clone(),
                started_at: crate::lifecycle::rfc3339(out.started),
                ended_at: crate::lifecycle::rfc3339(out.ended),
                config,
                summary: out.summary.clone(),
            },
            &out.intervals,
        )
    }

    /// Something outside a step failed (a probe that could not set up): the run fails.
    pub fn fail(&mut self) {
        self.fold(StepStatus::Failed);
    }

    /// The status the run would end with now.
    pub fn status(&self) -> RunStatus {
        self.status
    }

    /// Ends the run: interrupted if `interrupted` (Ctrl-C) and nothing worse happened.
    pub fn finish(mut self, interrupted: bool) -> Result<RunStatus, StoreError> {
        if interrupted {
            self.fold(StepStatus::Interrupted);
        }
        self.open = false;
        self.store.finish_run(self.id, self.status, &now())?;
        Ok(self.status)
    }

    fn fold(&mut self, s: StepStatus) {
        self.status = self.status.worst(RunStatus::from(s));
    }
}

impl Drop for Recording<'_> {
    /// An early return (a store error mid-run) still closes the run: failed, with the
    /// steps stored so far. Best effort: the store may be what failed.
    fn drop(&mut self) {
        if self.open {
            let _ = self
                .store
                .finish_run(self.id, RunStatus::Failed.worst(self.status), &now());
        }
    }
}
