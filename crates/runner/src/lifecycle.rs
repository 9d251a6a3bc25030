//! The one run lifecycle every front end shares (`plumb kv`, `plumb run`, `plumb
//! rerun`): for each planned run, a fresh data dir, a host snapshot, the engine opened
//! from its spec, the run row, each step stored as it ends, the run's status, and the
//! data dir removed. Repeats, order, interrupts, status and store writes live here and
//! nowhere else.

use crate::family::{Extras, Family, HandOver, HandedOver, OwnDir};
use crate::owned_dir::{DirError, OwnedDir};
use crate::step::Progress;
use crate::subject::{Place, Steps, Subject};
use plumb_core::{RunStatus, StepStatus};
use plumb_plan::RunPlan;
use plumb_probes::perf::HwCounterGroup;
use plumb_store::{NewRun, Store, StoreError, StoredRun};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};
use thiserror::Error;

/// What stopped a plan before its runs could be measured.
#[derive(Debug, Error)]
pub enum LifecycleError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A data directory could not be made or used.
    #[error(transparent)]
    Dir(#[from] crate::owned_dir::DirError),
    /// No memory limit could be set for a run that asked for one.
    #[error("run {variant}: {source}")]
    MemoryLimit {
        /// The run's variant label.
        variant: String,
        /// Why.
        source: plumb_host::cgroup::CgroupError,
    },
    /// A run's family could not bring its subject up or run it (a server that would
    /// not start, a bad URL, a plan no family runs): the family's words.
    #[error("run {variant}: {message}")]
    Family {
        /// The run's variant label.
        variant: String,
        /// What went wrong and what to do.
        message: String,
    },
}
/// Where each run's data lives.
#[derive(Debug, Clone)]
pub enum DirPolicy {
    /// A fresh temp dir per run under `root` (the temp dir when `None`), removed after
    /// the run unless `keep`.
    Fresh {
        /// Where the per-run dirs are made.
        root: Option<PathBuf>,
        /// Keep each run's dir (its path is reported).
        keep: bool,
    },
    /// A directory the user gave: one run uses it, repeats use `DIR/rep-N`; with
    /// `existing`, every run reuses the database already in it.
    Given {
        /// The directory (already checked by the front end).
        dir: PathBuf,
        /// Run on the database in it.
        existing: bool,
    },
}

/// How the runs of one invocation are grouped for `plumb compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// No groups (a single run).
    None,
    /// Runs of one variant form a group (repeats); the group is named after its first run.
    PerVariant,
}

/// Who made the runs, recorded with each.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// The command line as typed.
    pub command: String,
    /// plumb's version.
    pub plumb_version: String,
    /// plumb's git commit.
    pub git_hash: Option<String>,
    /// `--tag`.
    pub tag: Option<String>,
}

impl Provenance {
    /// The row every planned run starts from, whichever family runs it: who ran it and
    /// with which plumb, the plan with its hash and seed, its suite. The family adds what
    /// it measures (engine, release, options); nothing else writes these fields.
    pub fn run_of(&self, plan: &RunPlan, suite_id: Option<i64>) -> NewRun {
        NewRun {
            tag: self.tag.clone(),
            command: self.command.clone(),
            workload: plan.workload.name.clone(),
            plumb_version: self.plumb_version.clone(),
            git_hash: self.git_hash.clone(),
            seed: plan.seed,
            started_at: now(),
            suite_id,
            plan: serde_json::to_value(plan).ok(),
            plan_hash: Some(plan.hash()),
            ..NewRun::default()
        }
    }
}

/// Told as runs start and end, for progress and printing.
pub trait Observer {
    /// A run is about to run its first step: its place in the plan, its id, where its
    /// data lives and the estimated seconds left for the whole plan (this run included).
    fn run_starting(&mut self, _at: RunAt<'_>) {}
    /// A run ended and is stored; the store is there to read what reports need
    /// beside it (this host's ceilings).
    fn run_finished(&mut self, _run: &StoredRun, _store: &Store) {}
}

/// Where a starting run sits in its plan.
#[derive(Debug, Clone, Copy)]
pub struct RunAt<'a> {
    /// 1-based position among the runs this invocation will run.
    pub index: usize,
    /// How many runs this invocation will run.
    pub total: usize,
    /// The run's plan.
    pub plan: &'a RunPlan,
    /// Its id in the store.
    pub run_id: i64,
    /// Its data dir.
    pub dir: Option<&'a Path>,
    /// Estimated seconds left for the whole plan, this run included.
    pub secs_left: f64,
}

/// Everything the lifecycle needs from outside.
pub struct Lifecycle<'a> {
    /// Where runs go.
    pub store: &'a mut Store,
    /// Hardware counters opened before any engine (so its threads inherit them).
    pub hw: &'a Result<HwCounterGroup, String>,
    /// Set by Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Step progress (a bar on a terminal).
    pub progress: &'a dyn Progress,
    /// Run-level events.
    pub observer: &'a mut dyn Observer,
    /// Recorded with every run.
    pub provenance: Provenance,
    /// Profile every measured step (perf's data files go in this directory).
    pub profile: Option<plumb_probes::profile::Profiling<'a>>,
    /// Every family, asked in order: the first that takes a plan runs it.
    pub families: &'a [&'a dyn Family],
    /// What the front end knows that no plan holds (a password, a port, a client group).
    pub extras: Extras,
    /// Plans another build of plumb measures, asked before the families.
    pub elsewhere: Option<&'a dyn HandOver>,
}

/// When a variant's repeats have said enough (`--until`): asked after each of its runs
/// that ended well, so a plan of N repeats stops adding them once its figures are as
/// precise as asked, and spends the rest only on the variants that need them.
pub trait StopRule {
    /// A line saying the variant is settled (its remaining repeats are skipped), or
    /// `None` to go on; `run_ids` are the variant's finished runs in this batch.
    fn settled(&self, store: &Store, variant: &str, run_ids: &[i64]) -> Option<String>;
    /// A line for a variant that ran every repeat without settling.
    fn unsettled(&self, store: &Store, variant: &str, run_ids: &[i64]) -> String;
}

/// A sequence of planned runs to carry out.
pub struct Batch<'a> {
    /// The runs, in order.
    pub runs: &'a [RunPlan],
    /// The suite they belong to, if any.
    pub suite_id: Option<i64>,
    /// Where data lives.
    pub dirs: DirPolicy,
    /// How runs are grouped.
    pub grouping: Grouping,
    /// Hashes of runs already finished (by an earlier attempt of the suite): skipped.
    pub done: HashSet<String>,
    /// Groups already started by an earlier attempt, by variant.
    pub groups: HashMap<String, i64>,
    /// Stop a variant's repeats once they are precise enough (`--until`).
    pub until: Option<&'a dyn StopRule>,
}

/// How a batch ended.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOutcome {
    /// The worst run status (Ok when every run was ok or skipped).
    pub status: RunStatus,
    /// Ids of the runs this batch stored, in order.
    pub run_ids: Vec<i64>,
    /// Groups by variant.
    pub groups: HashMap<String, i64>,
}

/// A run's data dir; a temp one is removed on drop unless kept.
enum DataDir {
    None,
    Given(PathBuf),
    Temp(OwnedDir),
}

impl DataDir {
    fn path(&self) -> Option<&Path> {
        match self {
            DataDir::None => None,
            DataDir::Given(p) => Some(p),
            DataDir::Temp(t) => Some(t.path()),
        }
    }
}

/// Where a run sits in the batch that announces it.
#[derive(Debug, Clone, Copy)]
pub struct InBatch {
    /// (1-based index, total, estimated seconds left).
    pub at: (usize, usize, f64),
    /// `Some(group to join, or None to start one named after this run)`.
    pub group: Option<Option<i64>>,
}

/// Now, as stored (RFC 3339, UTC, milliseconds).
pub fn now() -> String {
    rfc3339(SystemTime::now())
}

/// A wall-clock instant, as stored.
pub fn rfc3339(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Lifecycle<'_> {
    /// Runs every planned run not already done, in order, storing each as it goes.
    /// Stops at Ctrl-C (the run in progress is stored as interrupted). A run that fails
    /// is stored as failed and the batch goes on: the other variants still measure.
    pub fn run_batch(&mut self, b: &Batch<'_>) -> Result<BatchOutcome, LifecycleError> {
        let todo: Vec<(usize, &RunPlan)> = b
            .runs
            .iter()
            .enumerate()
            .filter(|(_, r)| !b.done.contains(&r.hash()))
            .collect();
        let mut out = BatchOutcome {
            status: RunStatus::Ok,
            run_ids: Vec::new(),
            groups: b.groups.clone(),
        };
        let estimates: Vec<f64> = todo
            .iter()
            .map(|(_, r)| plumb_plan::estimate(r).secs)
            .collect();
        let (mut spent, mut planned_so_far) = (0.0f64, 0.0f64);
        // --until: each variant's finished runs, and the variants that have said enough.
        let mut finished: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        let mut settled: HashSet<String> = HashSet::new();
        for (n, (i, plan)) in todo.iter().enumerate() {
            if self.interrupt.load(Ordering::Relaxed) {
                out.status = out.status.worst(RunStatus::Interrupted);
                break;
            }
            if settled.contains(&plan.variant) {
                planned_so_far += estimates[n];
                spent += estimates[n];
                continue;
            }
            // Scale what is left by how the estimates have fared so far.
            let left: f64 = estimates[n..].iter().sum();
            let scale = if planned_so_far > 0.0 {
                (spent / planned_so_far).clamp(0.2, 20.0)
            } else {
                1.0
            };
            let started = Instant::now();
            let group = match b.grouping {
                Grouping::None => None,
                Grouping::PerVariant => Some(out.groups.get(&plan.variant).copied()),
            };
            let at = (n + 1, todo.len(), left * scale);
            let (id, status) = self.run_one(plan, b, (*i, b.runs.len()), group, at)?;
            if let Some(g) = group {
                out.groups
                    .entry(plan.variant.clone())
                    .or_insert(g.unwrap_or(id));
            }
            spent += started.elapsed().as_secs_f64();
            planned_so_far += estimates[n];
            out.run_ids.push(id);
            out.status = out.status.worst(status);
            if status == RunStatus::Interrupted {
                break;
            }
            if let (Some(rule), RunStatus::Ok) = (b.until, status) {
                let ids = finished.entry(plan.variant.clone()).or_default();
                ids.push(id);
                if let Some(line) = rule.settled(self.store, &plan.variant, ids) {
                    settled.insert(plan.variant.clone());
                    self.progress.note(&line);
                }
            }
        }
        if let Some(rule) = b.until {
            if out.status != RunStatus::Interrupted {
                for (variant, ids) in finished.iter().filter(|(v, _)| !settled.contains(*v)) {
                    self.progress
                        .note(&rule.unsettled(self.store, variant, ids));
                }
            }
        }
        Ok(out)
    }

    /// One planned run, whatever its family: handed to another build of plumb, or
    /// its family's subject brought up inside the plan's memory limit and its own
    /// directory, run, closed, the directory removed or kept, the run told finished.
    fn run_one(
        &mut self,
        plan: &RunPlan,
        b: &Batch<'_>,
        (index, total): (usize, usize),
        group: Option<Option<i64>>,
        at: (usize, usize, f64),
    ) -> Result<(i64, RunStatus), LifecycleError> {
        let family_error = |e: crate::FamilyError| LifecycleError::Family {
            variant: plan.variant.clone(),
            message: crate::failure::chain(e.as_ref()),
        };
        let (root, keep) = match &b.dirs {
            DirPolicy::Fresh { root, keep } => (root.clone(), *keep),
            DirPolicy::Given { dir, .. } => (Some(dir.clone()), true),
        };
        if let Some(h) = self.elsewhere.filter(|h| h.takes(plan)) {
            let to = HandedOver {
                store: self.store,
                run: self.provenance.run_of(plan, b.suite_id),
                group,
                root,
                keep,
                notes: self.progress,
            };
            let (id, status) = h.run(plan, to).map_err(family_error)?;
            let stored = self.store.run(id)?;
            self.observer.run_finished(&stored, self.store);
            return Ok((id, status));
        }
        let Some(family) = self.families.iter().find(|f| f.takes(plan)) else {
            return Err(LifecycleError::Family {
                variant: plan.variant.clone(),
                message: format!(
                    "the {} workload does not run on target {:?}",
                    plan.workload.family.name(),
                    plan.target.name
                ),
            });
        };
        // The limit holds an engine's process from before it opens (its caches and page
        // cache are charged from the first byte) until after it closes; a server's
        // processes join it once it runs.
        let limit = crate::family::memory_limit(plan, &index.to_string())
            .and_then(|l| {
                if let (Some(l), plumb_plan::Subject::Engine(_)) = (&l, &plan.target.subject) {
                    l.enter()?;
                }
                Ok(l)
            })
            .map_err(|source| LifecycleError::MemoryLimit {
                variant: plan.variant.clone(),
                source,
            })?;
        let dir = match family.own_dir(plan) {
            Some(own) => self.prepare_dir(&b.dirs, &own, index, total)?,
            None => DataDir::None,
        };
        let place = Place {
            dir: dir.path().map(Path::to_path_buf),
            root,
            keep,
            notes: self.progress,
        };
        let extras = self.extras.clone();
        let mut subject = family
            .prepare(plan, &extras, &place)
            .map_err(family_error)?;
        let run = self.provenance.run_of(plan, b.suite_id);
        let result = self.run_subject(
            plan,
            &mut *subject,
            limit.as_ref(),
            run,
            Some(InBatch { at, group }),
        );
        let closed = subject.close(keep);
        drop(subject);
        drop(limit);
        if let DataDir::Temp(t) = dir {
            t.finish(keep, self.progress);
        }
        if let Ok(Some(kept)) = &closed {
            self.progress.note(&format!("kept {}", kept.display()));
        }
        let (id, status) = result?;
        closed.map_err(|e| {
            family_error(Box::new(crate::failure::Within {
                what: format!("run {id} is stored, but its subject did not close cleanly"),
                source: e,
            }))
        })?;
        let stored = self.store.run(id)?;
        self.observer.run_finished(&stored, self.store);
        Ok((id, status))
    }

    /// Runs a prepared subject as one stored run: its row begun from `run` with the
    /// subject's header (announced to the observer with `announce`: its place in the
    /// batch and its group), the server moved into `limit`, each step run through the
    /// subject, stored, its rate searched, until the stop rule or the subject's death
    /// ends it; then the family's finish and the run's status. Every family's run, and
    /// `plumb probe`'s, is this one; the caller closes the subject.
    pub fn run_subject(
        &mut self,
        plan: &RunPlan,
        subject: &mut dyn Subject,
        limit: Option<&plumb_host::cgroup::MemoryLimit>,
        run: NewRun,
        announce: Option<InBatch>,
    ) -> Result<(i64, RunStatus), LifecycleError> {
        let family_error = |e: crate::FamilyError| LifecycleError::Family {
            variant: plan.variant.clone(),
            message: crate::failure::chain(e.as_ref()),
        };
        let header = subject.header().map_err(family_error)?;
        if let (Some(l), Some(pid)) = (limit, header.pid) {
            crate::family::limit_tree(l, pid).map_err(|source| LifecycleError::MemoryLimit {
                variant: plan.variant.clone(),
                source,
            })?;
        }
        let mut options = header.options;
        crate::family::record_limit(plan, limit, &mut options);
        let crate::begin::Begun {
            mut rec,
            disk,
            host,
        } = crate::begin::begin_run(
            self.store,
            NewRun {
                engine: header.engine,
                engine_version: header.version,
                options,
                ..run
            },
            plan,
            header.place,
            announce.map(|b| crate::begin::Announce {
                observer: &mut *self.observer,
                at: b.at,
                group: b.group,
            }),
        )?;
        let (interrupt, notes) = (self.interrupt, self.progress);
        let run_id = rec.id();
        let mut steps = Steps {
            rec: &mut rec,
            run_id,
            disk: disk.as_ref(),
            hw: self.hw.as_ref().map_err(|e| e.clone()),
            interrupt,
            notes,
            profile: self.profile,
            keep_histograms: header.keep_histograms,
        };
        subject.begun(&mut steps).map_err(family_error)?;
        for (i, name) in subject.steps().iter().enumerate() {
            if interrupt.load(Ordering::Relaxed) {
                break;
            }
            if subject.drops_caches_before(i) {
                crate::family::maybe_drop_caches(plan, notes);
            }
            let mut out = subject
                .run_at(i, name, None, &mut steps)
                .map_err(family_error)?;
            if let (Some(bound), StepStatus::Ok) = (subject.search_bound(i), out.status) {
                let found =
                    crate::family::rate_search(name, &bound, &out, interrupt, notes, |n, pace| {
                        subject.run_at(i, n, Some(pace), &mut steps)
                    })
                    .map_err(family_error)?;
                if let Some(found) = found {
                    let max = format!("{name}@max");
                    let (kind, mut config) =
                        subject.recorded(i, &max, found.max_pace).ok_or_else(|| {
                            family_error(
                                crate::failure::Said(format!(
                                    "{max}: this family does not search rates"
                                ))
                                .into(),
                            )
                        })?;
                    config["rate_search"] = found.account;
                    steps.store(&max, kind, &found.max, config)?;
                    out = found.last;
                }
            }
            if let Some(e) = &out.error {
                notes.note(&format!("step {name} failed: {e}"));
            }
            if out.ends_run(interrupt) || subject.died().is_some() {
                break;
            }
        }
        subject.finish(&mut steps, &host).map_err(family_error)?;
        let mut status = rec.finish(interrupt.load(Ordering::Relaxed))?;
        if let Some(e) = subject.died() {
            notes.note(&format!(
                "error: run {run_id}: {e}; the steps it finished are stored"
            ));
            status = status.worst(RunStatus::Failed);
        }
        Ok((run_id, status))
    }

    fn prepare_dir(
        &mut self,
        policy: &DirPolicy,
        own: &OwnDir,
        index: usize,
        total: usize,
    ) -> Result<DataDir, LifecycleError> {
        match policy {
            DirPolicy::Fresh { root, .. } => {
                let root = root.clone().unwrap_or_else(|| own.default_root.clone());
                Ok(DataDir::Temp(OwnedDir::make(
                    &root,
                    &sanitize(&own.prefix),
                    self.progress,
                )?))
            }
            DirPolicy::Given { dir, existing } => {
                if *existing || total == 1 {
                    return Ok(DataDir::Given(dir.clone()));
                }
                let sub = dir.join(format!("rep-{index}"));
                std::fs::create_dir(&sub).map_err(|source| DirError {
                    what: "creating",
                    path: sub.clone(),
                    source,
                })?;
                Ok(DataDir::Given(sub))
            }
        }
    }
}

/// The directory name's start made safe for a path.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The hardware counters a batch's runs read, opened before its first engine so the
/// engine's threads (started at open) inherit them; not beside perf stat's groups
/// (`--perf-groups` on a kv run), which count exactly only when no other event holds a
/// counter. `Err` says why there are none.
pub fn hw_counters(runs: &[RunPlan]) -> Result<HwCounterGroup, String> {
    let grouped = runs.iter().any(|r| match &r.workload.family {
        plumb_plan::Family::Kv(w) => w.params.perf_groups > 0,
        _ => false,
    });
    if grouped {
        Err(
            "not read: perf stat counts plumb's own events in turn (--perf-groups, summary.perf)"
                .to_string(),
        )
    } else {
        HwCounterGroup::open()
    }
}

/// Where perf's data files go while `--profile` records (each is removed once folded;
/// the directory goes with the returned guard): a private directory under /var/tmp;
/// `None` without `--profile`.
pub fn perf_dir(profile: bool) -> std::io::Result<Option<tempfile::TempDir>> {
    if !profile {
        return Ok(None);
    }
    Ok(Some(
        tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .prefix("plumb-perf-")
            .tempdir_in("/var/tmp")?,
    ))
}
