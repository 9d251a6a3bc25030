//! The families the lifecycle hands a planned run to (the sysbench microbenchmarks, the
//! insert benchmark, the probes, the durability trials, another build of an engine):
//! each is a [`Family`] in its own crate, and the binary lists them in one table that
//! [`Families`] drives. What every family's run shares is here: the front end's
//! [`Extras`], beginning a run, memory limits, page-cache drops and the rate search.

use crate::lifecycle::{FamilyDriver, LifecycleError, Slot};
use crate::StepOutcome;
use plumb_core::RunStatus;
use plumb_plan::RunPlan;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a front end knows about its runs that no plan holds: a password, a fixed
/// port, a client group of `plumb sql`.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// The password of a URL server (never stored).
    pub password: Option<String>,
    /// A managed server's TCP port.
    pub port: Option<u16>,
    /// `plumb sql --client-group NAME --clients N`: meet the group's other clients at a
    /// barrier before each step and keep histograms.
    pub client_group: Option<(String, u32)>,
    /// Seconds a client waits at a barrier.
    pub barrier_timeout: f64,
}

/// One workload family's planned run, implemented in the family's crate: it starts
/// what the run needs (a server, an engine, the host's probes), begins the run with
/// [`Slot::begin`], runs and stores each step, and tells the slot's observer. The lifecycle
/// owns everything around it (order, groups, resume, estimates, Ctrl-C between runs).
/// A run's error is a message for the user, so it is an `anyhow::Error` with its
/// context, turned into [`LifecycleError::Family`] at this boundary.
pub trait Family: Sync {
    /// Whether this family runs `plan` (its workload on its target).
    fn takes(&self, plan: &RunPlan) -> bool;

    /// Checks what only this family reads of `plan` (its script files and the
    /// modules they require) as its steps will read them, so `plumb plan` and the
    /// start of `plumb run` refuse a bad file before any run of a suite starts; the
    /// message names the file and line. Nothing is started or written.
    fn check(&self, _plan: &RunPlan) -> Result<(), String> {
        Ok(())
    }

    /// Runs `plan`, storing it under `slot.run` (provenance, suite, plan and hash
    /// already filled in); returns the run's id and status.
    fn run(
        &self,
        plan: &RunPlan,
        extras: &Extras,
        slot: Slot<'_>,
    ) -> anyhow::Result<(i64, RunStatus)>;
}

/// The [`FamilyDriver`] over a table of families: the first that takes a plan runs it.
pub struct Families<'t> {
    /// The families, in the order they are asked.
    pub table: &'t [&'t dyn Family],
    /// The front end's extras, for every run.
    pub extras: Extras,
}

/// Checks every run of a plan with the family of `table` that takes it (see
/// [`Family::check`]); the first bad one names its run's variant.
pub fn check_runs(table: &[&dyn Family], runs: &[RunPlan]) -> Result<(), String> {
    for plan in runs {
        if let Some(f) = table.iter().find(|f| f.takes(plan)) {
            f.check(plan)
                .map_err(|e| format!("run {}: {e}", plan.variant))?;
        }
    }
    Ok(())
}

impl FamilyDriver for Families<'_> {
    fn run(&mut self, plan: &RunPlan, slot: Slot<'_>) -> Result<(i64, RunStatus), LifecycleError> {
        let result = match self.table.iter().find(|f| f.takes(plan)) {
            Some(f) => f.run(plan, &self.extras, slot),
            None => Err(anyhow::anyhow!(
                "the {} workload does not run on target {:?}",
                plan.workload.family.name(),
                plan.target.name
            )),
        };
        result.map_err(|e| LifecycleError::Family {
            variant: plan.variant.clone(),
            message: format!("{e:#}"),
        })
    }
}

/// A memory limit for a run's target, when its plan asks for one; `name` makes the
/// cgroup's name unique.
pub fn memory_limit(
    plan: &RunPlan,
    name: &str,
) -> anyhow::Result<Option<plumb_host::cgroup::MemoryLimit>> {
    let Some(mb) = plan.target.memory_mb else {
        return Ok(None);
    };
    Ok(Some(plumb_host::cgroup::MemoryLimit::create(
        &format!("plumb-{}-{name}", std::process::id()),
        mb << 20,
    )?))
}

/// Moves a process tree (the root and its descendants: a server's every process) into
/// `limit`, so its memory and page cache count against it; later children are born in
/// it.
pub fn limit_tree(limit: &plumb_host::cgroup::MemoryLimit, root: u32) -> anyhow::Result<()> {
    let pids = plumb_probes::proctree::tree_pids(root);
    for pid in pids {
        if let Err(e) = limit.add(pid) {
            // A short-lived child (a server's startup process) may be gone already.
            if std::path::Path::new(&format!("/proc/{pid}")).exists() {
                return Err(e.into());
            }
        }
    }
    Ok(())
}

/// The rate search of one step (`--rate-search`), its verdicts told as it goes:
/// `probe` runs and stores one probe at a pace under its name; the families differ only
/// in that.
pub fn rate_search(
    name: &str,
    bound: &plumb_workloads::pace::LatencyBound,
    closed: &StepOutcome,
    interrupt: &AtomicBool,
    notes: &dyn crate::Progress,
    mut probe: impl FnMut(&str, plumb_workloads::pace::Pace) -> anyhow::Result<StepOutcome>,
) -> anyhow::Result<Option<crate::search::Searched>> {
    use crate::search::{self, Ask};
    let stopped = || interrupt.load(Ordering::Relaxed);
    search::run(name, bound, closed, &stopped, |ask| match ask {
        Ask::Note(line) => {
            notes.note(line);
            Ok(None)
        }
        Ask::Probe(name, pace) => probe(name, pace).map(Some),
    })
}

/// Drops the page cache before a measured step when the plan's target asks for it
/// (`drop_caches`); a failure is said, and the step still runs.
pub fn maybe_drop_caches(plan: &RunPlan, notes: &dyn crate::Progress) {
    if plan.target.drop_caches {
        if let Err(e) = plumb_host::cgroup::drop_page_cache() {
            notes.note(&format!("page cache not dropped: {e}"));
        }
    }
}

/// Records the memory limit and the page-cache drops with the run's options, as the
/// lifecycle does for engine runs (compare warns when they differ).
pub fn record_limit(
    plan: &RunPlan,
    limit: Option<&plumb_host::cgroup::MemoryLimit>,
    options: &mut BTreeMap<String, String>,
) {
    if let Some(l) = limit {
        options.insert("memory_limit_mb".into(), (l.bytes() >> 20).to_string());
    }
    if plan.target.drop_caches {
        options.insert("drop_caches".into(), "true".into());
    }
}

/// What a family measured of its subject when it begins a run, beside the run row
/// the lifecycle filled in.
pub struct RunHeader {
    /// The engine label and its release.
    pub engine: String,
    /// The release.
    pub version: String,
    /// Every option and setting recorded with the run.
    pub options: BTreeMap<String, String>,
    /// Where the data is, when plumb can see it.
    pub data_dir: Option<std::path::PathBuf>,
}

impl Slot<'_> {
    /// Begins the planned run in the slot's store through [`crate::begin::begin_run`]
    /// (the row the lifecycle filled in with `header`, a host snapshot, the device under
    /// its data, its place in the suite), joins its group of repeats and tells the
    /// observer it starts. The recording borrows the slot: take `interrupt`,
    /// `progress` and `profile` out of it first.
    pub fn begin(
        &mut self,
        plan: &RunPlan,
        header: RunHeader,
    ) -> anyhow::Result<(
        crate::Recording<'_>,
        Option<plumb_probes::diskstats::DeviceStats>,
    )> {
        let begun = crate::begin::begin_run(
            self.store,
            plumb_store::NewRun {
                engine: header.engine,
                engine_version: header.version,
                options: header.options,
                ..std::mem::take(&mut self.run)
            },
            plan,
            crate::begin::DataPlace {
                dir: header.data_dir,
                ..Default::default()
            },
            Some(crate::begin::Announce {
                observer: &mut *self.observer,
                at: self.at,
                group: self.group,
            }),
        )?;
        Ok((begun.rec, begun.disk))
    }

    /// Reads the finished run `run_id` back and tells the observer it ended.
    pub fn finished(&mut self, run_id: i64) -> anyhow::Result<()> {
        let stored = self.store.run(run_id)?;
        self.observer.run_finished(&stored, self.store);
        Ok(())
    }
}
