//! The one run lifecycle every front end shares (`plumb kv`, `plumb run`, `plumb
//! rerun`): for each planned run, a fresh data dir, a host snapshot, the engine opened
//! from its spec, the run row, each step stored as it ends, the run's status, and the
//! data dir removed. Repeats, order, interrupts, status and store writes live here and
//! nowhere else.

use crate::config::{KeySpace, StepConfig};
use crate::owned_dir::{DirError, OwnedDir};
use crate::recording::Recording;
use crate::step::{run_step, Progress, RunContext, StepOutcome};
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
    /// The engine refused to open.
    #[error("run {variant}: opening {engine}{}: {source}", dir.as_ref().map(|d| format!(" in {}", d.display())).unwrap_or_default())]
    Open {
        /// The run's variant label.
        variant: String,
        /// The engine.
        engine: &'static str,
        /// Its data dir.
        dir: Option<PathBuf>,
        /// The engine's words.
        source: plumb_core::TargetError,
    },
    /// No memory limit could be set for a run that asked for one.
    #[error("run {variant}: {source}")]
    MemoryLimit {
        /// The run's variant label.
        variant: String,
        /// Why.
        source: plumb_host::cgroup::CgroupError,
    },
    /// A run of a family the runner hands to a [`FamilyDriver`] could not be made
    /// (a server that would not start, a bad URL): the driver's words.
    #[error("run {variant}: {message}")]
    Family {
        /// The run's variant label.
        variant: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// A plan's parameters cannot run (a plan read back from the store by `rerun`).
    #[error("run {variant}: {key}: {message}")]
    Params {
        /// The run's variant label.
        variant: String,
        /// The parameter.
        key: &'static str,
        /// Why.
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

/// Runs the plans whose family the runner does not drive itself (the sysbench
/// microbenchmarks, the insert benchmark, the probes, the durability trials): their
/// clients and servers live in crates the runner cannot depend on, so the binary
/// supplies this, as [`crate::family::Families`] over its table of families.
/// Everything around the run (order, skipping what is done, groups, estimates, Ctrl-C
/// between runs) stays in the lifecycle.
pub trait FamilyDriver {
    /// Runs one planned run, storing it with `slot.run` (provenance, suite and plan
    /// already filled in), and returns its id and status.
    fn run(&mut self, plan: &RunPlan, slot: Slot<'_>) -> Result<(i64, RunStatus), LifecycleError>;
}

/// What a [`FamilyDriver`] gets for one run.
pub struct Slot<'a> {
    /// Where the run goes.
    pub store: &'a mut Store,
    /// The run row, with provenance, suite, plan and its hash filled in; the driver
    /// adds what it measures (engine, release, options, host).
    pub run: NewRun,
    /// `Some(group to join, or None to start one named after this run)`.
    pub group: Option<Option<i64>>,
    /// Where data directories are made (`None`: the default of the family).
    pub root: Option<PathBuf>,
    /// Keep the data directory after the run.
    pub keep: bool,
    /// Set by Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Step progress.
    pub progress: &'a dyn Progress,
    /// Run-level events: the driver calls `run_starting` and `run_finished`.
    pub observer: &'a mut dyn Observer,
    /// Profile every measured step (perf's data files go here).
    pub profile: Option<plumb_probes::profile::Profiling<'a>>,
    /// Its place in the batch: (1-based index, total, estimated seconds left).
    pub at: (usize, usize, f64),
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
    /// Runs the families the runner does not drive itself.
    pub driver: Option<&'a mut dyn FamilyDriver>,
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
            let (id, status) =
                if plan.workload.kv_steps().is_some() && plan.target.runs_in_this_build() {
                    // The other families make their own directories (a server's, an engine
                    // under the insert benchmark).
                    let dir = self.prepare_dir(&b.dirs, plan, *i, b.runs.len())?;
                    self.run_one(plan, dir, b.suite_id, group, &b.dirs, at)?
                } else {
                    self.hand_over(plan, b, group, at)?
                };
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

    /// A run of a family the driver runs, or of an engine release another plumb runs.
    fn hand_over(
        &mut self,
        plan: &RunPlan,
        b: &Batch<'_>,
        group: Option<Option<i64>>,
        at: (usize, usize, f64),
    ) -> Result<(i64, RunStatus), LifecycleError> {
        let Some(driver) = self.driver.as_deref_mut() else {
            return Err(LifecycleError::Family {
                variant: plan.variant.clone(),
                message: format!(
                    "this front end runs key-value plans only; run the {} workload with \
                     plumb run",
                    plan.workload.family.name()
                ),
            });
        };
        let (root, keep) = match &b.dirs {
            DirPolicy::Fresh { root, keep } => (root.clone(), *keep),
            DirPolicy::Given { dir, .. } => (Some(dir.clone()), true),
        };
        let run = self.provenance.run_of(plan, b.suite_id);
        driver.run(
            plan,
            Slot {
                store: self.store,
                run,
                group,
                root,
                keep,
                interrupt: self.interrupt,
                progress: self.progress,
                observer: self.observer,
                profile: self.profile,
                at,
            },
        )
    }

    fn prepare_dir(
        &mut self,
        policy: &DirPolicy,
        plan: &RunPlan,
        index: usize,
        total: usize,
    ) -> Result<DataDir, LifecycleError> {
        let keeps_files = plan
            .target
            .engine_spec()
            .is_some_and(|e| e.capabilities().keeps_files);
        if !keeps_files {
            return Ok(DataDir::None);
        }
        match policy {
            DirPolicy::Fresh { root, .. } => {
                let root = root.clone().unwrap_or_else(std::env::temp_dir);
                Ok(DataDir::Temp(OwnedDir::make(
                    &root,
                    &sanitize(&plan.suite),
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

    /// One run: open, record, run each step, store, close. Returns its id and status.
    fn run_one(
        &mut self,
        plan: &RunPlan,
        dir: DataDir,
        suite_id: Option<i64>,
        // Some(group to join, or None to start one named after this run).
        group: Option<Option<i64>>,
        policy: &DirPolicy,
        (index, total, secs_left): (usize, usize, f64),
    ) -> Result<(i64, RunStatus), LifecycleError> {
        let (Some(engine), Some(work)) = (plan.target.engine_spec(), plan.workload.kv()) else {
            return Err(LifecycleError::Family {
                variant: plan.variant.clone(),
                message: "db_bench steps run on an embedded engine".into(),
            });
        };
        let (steps, params) = (&work.steps, &work.params);
        let distribution = params.validate().map_err(|e| LifecycleError::Params {
            variant: plan.variant.clone(),
            key: e.key,
            message: e.message,
        })?;
        let rate_search = params
            .rate_search
            .as_deref()
            .and_then(|b| b.parse::<plumb_workloads::LatencyBound>().ok());
        // The limit holds this process from before the engine opens (its caches and
        // page cache are charged from the first byte) until after it closes.
        let limit = match plan.target.memory_mb {
            Some(mb) => {
                let l = plumb_host::cgroup::MemoryLimit::create(
                    &format!("plumb-{}-{}", std::process::id(), index),
                    mb << 20,
                )
                .and_then(|l| l.enter().map(|()| l))
                .map_err(|source| LifecycleError::MemoryLimit {
                    variant: plan.variant.clone(),
                    source,
                })?;
                Some(l)
            }
            None => None,
        };
        let target = engine
            .open(dir.path())
            .map_err(|source| LifecycleError::Open {
                variant: plan.variant.clone(),
                engine: engine.name(),
                dir: dir.path().map(Path::to_path_buf),
                source,
            })?;
        let crate::begin::Begun { mut rec, disk, .. } = crate::begin::begin_run(
            self.store,
            NewRun {
                engine: target.name().to_string(),
                engine_version: target.version(),
                options: recorded_options(plan, engine, work, target.as_ref(), limit.as_ref()),
                ..self.provenance.run_of(plan, suite_id)
            },
            plan,
            crate::begin::DataPlace {
                dir: dir.path().map(Path::to_path_buf),
                bytes: Some(params.data_bytes()),
                ..Default::default()
            },
            Some(crate::begin::Announce {
                observer: &mut *self.observer,
                at: (index, total, secs_left),
                group,
            }),
        )?;
        let run_id = rec.id();
        let ctx = RunContext {
            target: target.as_ref(),
            disk: disk.as_ref(),
            hw: self.hw.as_ref().map_err(|e| e.clone()),
            interrupt: self.interrupt,
            progress: self.progress,
            profile: self.profile,
        };
        let mut keys = if plan.use_existing_db {
            KeySpace::unknown(params.num)
        } else {
            KeySpace::empty()
        };
        for (i, sp) in steps.iter().enumerate() {
            if i > 0 && !sp.kind.is_maintenance() {
                crate::family::maybe_drop_caches(plan, self.progress);
            }
            let cfg = StepConfig {
                index: i,
                plan: sp.clone(),
                num: params.num,
                key_size: params.key_size,
                value_size: params.value_size,
                threads: params.step_threads(sp.kind),
                duration: params.step_duration(sp),
                ops: params.ops,
                warmup: std::time::Duration::from_secs_f64(params.warmup),
                seed: plan.seed,
                seek_nexts: params.seek_nexts,
                batch_size: params.batch_size,
                write_rate_mb: params.write_rate_mb,
                distribution,
                verify: params.verify,
                pace: params.step_pace(sp.kind),
                ycsb: params.ycsb_props().unwrap_or_default(),
                mix: params.mix_file.clone(),
                mixgraph: params.mixgraph_params().unwrap_or_default(),
                perf_groups: params.perf_groups,
                perf_level: params.perf_level,
                clients: params.step_clients(sp.kind),
            };
            let out = run_step(&ctx, &cfg, &mut keys);
            store_step(&mut rec, self.progress, &cfg, &out, None)?;
            let searched = !sp.kind.is_fill() && !sp.kind.is_maintenance();
            let out = match rate_search {
                Some(bound) if searched && out.status == StepStatus::Ok => {
                    search(&ctx, &mut rec, &cfg, &mut keys, &bound, &out)?
                }
                _ => out,
            };
            if out.ends_run(self.interrupt) {
                break;
            }
        }
        let status = rec.finish(self.interrupt.load(Ordering::Relaxed))?;
        drop(target);
        drop(limit);
        if let DataDir::Temp(t) = dir {
            let keep = matches!(policy, DirPolicy::Fresh { keep: true, .. });
            t.finish(keep, self.progress);
        }
        let stored = self.store.run(run_id)?;
        self.observer.run_finished(&stored, self.store);
        Ok((run_id, status))
    }
}

/// Stores one step's record, its intervals and its profile; `extra` is added to the
/// stored config (a rate search's account).
fn store_step(
    rec: &mut Recording<'_>,
    notes: &dyn Progress,
    cfg: &StepConfig,
    out: &StepOutcome,
    extra: Option<(&str, serde_json::Value)>,
) -> Result<i64, LifecycleError> {
    let mut config = serde_json::to_value(cfg).unwrap_or_default();
    if let (Some((k, v)), Some(m)) = (extra, config.as_object_mut()) {
        m.insert(k.to_string(), v);
    }
    let step_id = rec.outcome(&cfg.plan.name, cfg.plan.kind.into(), out, config)?;
    match &out.profile {
        Some(Ok(folded)) => rec.store().add_profile(step_id, folded)?,
        Some(Err(why)) => notes.note(&format!("no profile of step {}: {why}", cfg.plan.name)),
        None => {}
    }
    Ok(step_id)
}

/// The rate search of a step that ran closed-loop as `closed` (see [`crate::search`]):
/// each probe stored as `STEP@RATE/s`, then `STEP@max`, the best probe's figures with
/// the search's account in its config (failed when no rate kept the bound). Returns
/// the last probe's outcome, which decides whether the run goes on.
fn search(
    ctx: &RunContext<'_>,
    rec: &mut Recording<'_>,
    cfg: &StepConfig,
    keys: &mut KeySpace,
    bound: &plumb_workloads::LatencyBound,
    closed: &StepOutcome,
) -> Result<StepOutcome, LifecycleError> {
    use crate::search::{self, Ask};
    let stopped = || ctx.interrupt.load(Ordering::Relaxed);
    let found =
        search::run::<LifecycleError>(&cfg.plan.name, bound, closed, &stopped, |ask| match ask {
            Ask::Note(line) => {
                ctx.progress.note(line);
                Ok(None)
            }
            Ask::Probe(name, pace) => {
                let mut c = cfg.clone();
                c.plan.name = name.to_string();
                c.pace = Some(pace);
                let out = run_step(ctx, &c, keys);
                store_step(rec, ctx.progress, &c, &out, None)?;
                Ok(Some(out))
            }
        })?;
    let Some(found) = found else {
        return Ok(closed.clone());
    };
    let mut c = cfg.clone();
    c.plan.name = format!("{}@max", cfg.plan.name);
    c.pace = found.max_pace;
    store_step(
        rec,
        ctx.progress,
        &c,
        &found.max,
        Some(("rate_search", found.account)),
    )?;
    Ok(found.last)
}

/// The flat option map stored with a run (selectors such as `opt.threads=2` and the
/// fairness warnings read it): the workload's knobs, the engine's options under its
/// name (where the run sits in its suite is added by [`crate::begin::begin_run`]).
fn recorded_options(
    plan: &RunPlan,
    engine: &plumb_targets::EngineSpec,
    work: &plumb_plan::KvWork,
    target: &dyn plumb_core::Target,
    limit: Option<&plumb_host::cgroup::MemoryLimit>,
) -> BTreeMap<String, String> {
    let (steps, params) = (&work.steps, &work.params);
    let mut o: BTreeMap<String, String> = plumb_targets::options::as_strings(params)
        .into_iter()
        .collect();
    if params.duration.is_none() {
        o.insert(
            "duration".into(),
            format!("{} (non-fill steps without --ops)", plumb_plan::QUICK_SECS),
        );
    }
    o.insert("engine".into(), target.name().to_string());
    o.insert("durability".into(), engine.durability().name().to_string());
    if let Some(l) = limit {
        o.insert("memory_limit_mb".into(), (l.bytes() >> 20).to_string());
    }
    if plan.target.drop_caches {
        o.insert("drop_caches".into(), "true".into());
    }
    o.insert("seed".into(), plan.seed.to_string());
    o.insert(
        "benchmarks".into(),
        steps
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(","),
    );
    o.insert("use_existing_db".into(), plan.use_existing_db.to_string());
    for (k, v) in target.options() {
        o.insert(format!("{}.{k}", target.name()), v);
    }
    o
}

fn sanitize(s: &str) -> String {
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
