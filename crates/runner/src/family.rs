//! The families a planned run belongs to (db_bench's steps on an engine, the sysbench
//! microbenchmarks, the insert benchmark, the probes, the durability trials): each is a
//! [`Family`] in its own crate, listed in one table by the binary, and what it prepares
//! is a [`Subject`] the one lifecycle runs. What every family shares is here: the front
//! end's [`Extras`], memory limits, page-cache drops and the rate search.

use crate::subject::{Place, Subject};
use crate::StepOutcome;
use plumb_core::RunStatus;
use plumb_plan::RunPlan;
use plumb_store::{NewRun, Store};
use std::collections::BTreeMap;
use std::path::PathBuf;
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

/// One workload family, implemented in its own crate and registered by one line of
/// the binary's table: it says which plans it runs, checks the files they name, and
/// brings their subject up in a place; [`crate::lifecycle`] runs every family's
/// subject through the one run (data directory, memory limit, run row, steps stored,
/// stop rule, rate search, finish).
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

    /// Whether `plan`'s run gets a directory of its own from the lifecycle (an engine
    /// that keeps files): made private and owner-marked, given to
    /// [`Family::prepare`] in [`Place::dir`], removed or kept after the subject closed.
    fn own_dir(&self, _plan: &RunPlan) -> Option<OwnDir> {
        None
    }

    /// Brings `plan`'s subject up in `place` (opens the engine, starts the server,
    /// checks the probes); nothing is stored yet. An engine is opened inside the
    /// plan's memory limit, which the lifecycle entered before this.
    fn prepare<'p>(
        &self,
        plan: &'p RunPlan,
        extras: &'p Extras,
        place: &Place<'_>,
    ) -> crate::failure::FamilyResult<Box<dyn Subject + 'p>>;
}

/// How a family's run directory is named and where it goes by default.
#[derive(Debug, Clone)]
pub struct OwnDir {
    /// The start of its name (`ib-rocksdb`, the suite's name).
    pub prefix: String,
    /// Where it is made when the front end names no root.
    pub default_root: PathBuf,
}

/// Runs of a plan that another build of plumb measures (`rocksdb@8.5.3` in a plumb
/// linking another release): that plumb stores the run; the lifecycle reads it back.
pub trait HandOver: Sync {
    /// Whether `plan` runs elsewhere.
    fn takes(&self, plan: &RunPlan) -> bool;
    /// Runs `plan` elsewhere, into `to.store`; returns the stored run's id and status.
    fn run(
        &self,
        plan: &RunPlan,
        to: HandedOver<'_>,
    ) -> crate::failure::FamilyResult<(i64, RunStatus)>;
}

/// What a run handed to another plumb needs: the store it writes and what it records.
pub struct HandedOver<'a> {
    /// The store (its location reaches the other plumb).
    pub store: &'a mut Store,
    /// The run row as this plumb would begin it (command, tag, suite).
    pub run: NewRun,
    /// `Some(group to join, or None to start one named after this run)`.
    pub group: Option<Option<i64>>,
    /// Where data directories are made.
    pub root: Option<PathBuf>,
    /// Keep the data directory.
    pub keep: bool,
    /// Where it is said.
    pub notes: &'a dyn crate::Progress,
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

/// A memory limit for a run's target, when its plan asks for one; `name` makes the
/// cgroup's name unique.
pub fn memory_limit(
    plan: &RunPlan,
    name: &str,
) -> Result<Option<plumb_host::cgroup::MemoryLimit>, plumb_host::cgroup::CgroupError> {
    let Some(mb) = plan.target.memory_mb else {
        return Ok(None);
    };
    plumb_host::cgroup::MemoryLimit::create(
        &format!("plumb-{}-{name}", std::process::id()),
        mb << 20,
    )
    .map(Some)
}

/// Moves a process tree (the root and its descendants: a server's every process) into
/// `limit`, so its memory and page cache count against it; later children are born in
/// it.
pub fn limit_tree(
    limit: &plumb_host::cgroup::MemoryLimit,
    root: u32,
) -> Result<(), plumb_host::cgroup::CgroupError> {
    let pids = plumb_probes::proctree::tree_pids(root);
    for pid in pids {
        if let Err(e) = limit.add(pid) {
            // A short-lived child (a server's startup process) may be gone already.
            if std::path::Path::new(&format!("/proc/{pid}")).exists() {
                return Err(e);
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
    mut probe: impl FnMut(
        &str,
        plumb_workloads::pace::Pace,
    ) -> crate::failure::FamilyResult<StepOutcome>,
) -> crate::failure::FamilyResult<Option<crate::search::Searched>> {
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
