//! One planned durability run: a target (an embedded engine that keeps files, or a
//! server plumb starts) × the trials of its modes and cuts. Each mode × cut is a step
//! stored as it ends (`sync.kill`, `nosync.power`), its acknowledged, lost and wrong
//! writes and its verdict in the step's summary; a step fails when a mode that
//! promises durability lost a write. `plumb durability`, a suite's `durability`
//! workload, `plumb rerun` and a worker of a queue all run through here.

pub mod engine;
mod error;
pub mod flakey;
pub mod points;
pub mod server;
pub mod targets;
pub mod trial;

pub use error::{DurabilityError, TrialError};

use plumb_core::{StepStatus, StepSummary};
use plumb_plan::{Cut, DurabilityMode, DurabilityWork, RunPlan, Subject};
use plumb_runner::{Header, Place, StepOutcome, Steps};
use plumb_store::Kind;
use plumb_targets::EngineSpec;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

/// The options recorded with the run: the knobs, so `plumb compare` and selectors
/// (`opt.kills=20`) read them.
fn options(work: &DurabilityWork) -> BTreeMap<String, String> {
    let mut o = BTreeMap::new();
    let modes: Vec<&str> = work.modes.iter().map(|m| m.name()).collect();
    o.insert("durability.modes".into(), modes.join(","));
    o.insert("durability.cut".into(), work.params.cut.clone());
    o.insert("durability.kills".into(), work.params.kills.to_string());
    o.insert("durability.max_ms".into(), work.params.max_ms.to_string());
    o.insert(
        "durability.dir_entries".into(),
        work.params.dir_entries.clone(),
    );
    o
}

/// One step's outcome from what its trials found: failed when a mode that promises
/// durability lost or changed a write (a verification failure: the target still works,
/// so the next mode is tried too).
fn outcome(
    d: plumb_core::DurabilitySummary,
    (started, start, ended): (SystemTime, Instant, SystemTime),
    interrupted: bool,
) -> StepOutcome {
    let promised = plumb_plan::DurabilityMode::parse_list(&d.mode)
        .map(|m| m.iter().any(|m| m.promises()))
        .unwrap_or(false);
    let broken_points = d
        .points
        .as_ref()
        .is_some_and(|p| p.lost + p.unopened + p.integrity_failed > 0);
    let broken = promised && (d.lost + d.wrong > 0 || broken_points);
    let status = if broken {
        StepStatus::Failed
    } else if interrupted && d.trials < d.kills_planned {
        StepStatus::Interrupted
    } else {
        StepStatus::Ok
    };
    let secs = start.elapsed().as_secs_f64();
    StepOutcome {
        status,
        error: broken.then(|| d.verdict.clone()),
        verification_failed: broken,
        started,
        ended,
        summary: StepSummary {
            ops: d.acknowledged,
            secs,
            ops_sec: if secs > 0.0 {
                d.acknowledged as f64 / secs
            } else {
                0.0
            },
            durability: Some(d),
            ..StepSummary::default()
        },
        intervals: Vec::new(),
        profile: None,
        histograms: None,
    }
}

/// A durability run's target and its trials' order: each mode × cut is a step.
struct Trials<'p> {
    plan: &'p RunPlan,
    work: &'p DurabilityWork,
    steps: Vec<(DurabilityMode, Option<EngineSpec>, Cut)>,
    root: PathBuf,
    moments: trial::Moments,
    /// A server's release is known once it runs: the first step's server starts
    /// before the run is begun, so the run records it.
    first_server: Option<server::Started>,
    engine: String,
    version: String,
}

/// Checks `plan` and brings its first target up: the engine as the writer opens it in
/// each mode, a server's first instance (for its release).
fn prepare<'p>(
    plan: &'p RunPlan,
    work: &'p DurabilityWork,
    place: &Place<'_>,
) -> Result<Trials<'p>, DurabilityError> {
    let target = || plan.target.name.clone();
    let cuts = work
        .params
        .validate()
        .map_err(|e| DurabilityError::Params {
            key: e.key,
            message: e.message,
        })?;
    if cuts.contains(&Cut::Flakey) {
        flakey::available().map_err(|why| DurabilityError::Refused {
            target: target(),
            why,
        })?;
    }
    if let Some(why) = plumb_plan::durability::refused(&plan.target.subject, work) {
        return Err(DurabilityError::Refused {
            target: target(),
            why,
        });
    }
    let specs = match &plan.target.subject {
        Subject::Engine(e) => {
            e.check_built_in()?;
            work.modes
                .iter()
                .map(|&m| plumb_plan::durability::engine_in_mode(e, m).map(Some))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| DurabilityError::Refused {
                    target: target(),
                    why,
                })?
        }
        Subject::Server(s) if s.url.is_none() => vec![None; work.modes.len()],
        _ => return Err(DurabilityError::NotDurable { target: target() }),
    };
    let root = place
        .root
        .clone()
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    if let Err(source) = std::fs::create_dir_all(&root) {
        return Err(DurabilityError::Root { root, source });
    }
    if cuts.iter().any(|c| c.powered()) {
        for gone in plumb_powercut::sweep_stale(&root) {
            place.notes.note(&format!(
                "unmounted {}, a power-cut mount left by a plumb that was killed",
                gone.display()
            ));
        }
    }
    let steps: Vec<_> = work
        .modes
        .iter()
        .zip(specs)
        .flat_map(|(&mode, spec)| cuts.iter().map(move |&cut| (mode, spec.clone(), cut)))
        .collect();
    if steps.is_empty() {
        return Err(DurabilityError::NoModes { target: target() });
    }
    let mut t = Trials {
        plan,
        work,
        steps,
        root,
        moments: trial::Moments::new(plan.seed),
        first_server: None,
        engine: String::new(),
        version: String::new(),
    };
    (t.engine, t.version) = match &plan.target.subject {
        Subject::Server(s) => {
            let (mode, _, cut) = t.steps[0];
            let up = server::start(s, cut, &t.root, work.params.file_fsync_keeps_names())
                .map_err(|e| t.failed(mode, cut, e))?;
            let v = up.version();
            t.first_server = Some(up);
            (engine_label(s), v)
        }
        Subject::Engine(e) => (e.name().to_string(), e.version()),
        Subject::Host(_) => unreachable!("refused above"),
    };
    Ok(t)
}

impl Trials<'_> {
    /// A step's failure, named by its target, mode and cut.
    fn failed(&self, mode: DurabilityMode, cut: Cut, source: TrialError) -> DurabilityError {
        DurabilityError::Step {
            step: format!(
                "{} {} --cut {}",
                self.plan.target.name,
                mode.name(),
                cut.flag()
            ),
            source,
        }
    }
}

impl plumb_runner::Subject for Trials<'_> {
    fn header(&mut self) -> plumb_runner::FamilyResult<Header> {
        Ok(Header {
            engine: self.engine.clone(),
            version: self.version.clone(),
            options: options(self.work),
            place: plumb_runner::begin::DataPlace {
                dir: Some(self.root.clone()),
                ..Default::default()
            },
            ..Header::default()
        })
    }

    fn begun(&mut self, steps: &mut Steps<'_, '_>) -> plumb_runner::FamilyResult<()> {
        steps.notes.note(&format!(
            "run {}: durability of {} ({}), {}, seed {}",
            steps.run_id,
            self.plan.target.name,
            self.work.step_names().join(", "),
            if self.steps.iter().all(|s| s.2.crash_points().is_some()) {
                format!("{} writes per crash point", points::WRITES)
            } else {
                format!("{} kills per step", self.work.params.kills)
            },
            self.plan.seed
        ));
        Ok(())
    }

    fn steps(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|(mode, _, cut)| format!("{}.{}", mode.name(), cut.name()))
            .collect()
    }

    fn drops_caches_before(&self, _i: usize) -> bool {
        false
    }

    fn run_at(
        &mut self,
        i: usize,
        name: &str,
        _pace: Option<plumb_runner::subject::Pace>,
        steps: &mut Steps<'_, '_>,
    ) -> plumb_runner::FamilyResult<StepOutcome> {
        let (mode, cut) = (self.steps[i].0, self.steps[i].2);
        let (plan, p) = (self.plan, &self.work.params);
        let (started, start) = (SystemTime::now(), Instant::now());
        let d = match (&plan.target.subject, &self.steps[i].1) {
            (Subject::Server(s), _) => {
                let up = match self.first_server.take() {
                    Some(up) => up,
                    None => server::start(s, cut, &self.root, p.file_fsync_keeps_names())
                        .map_err(|e| self.failed(mode, cut, e))?,
                };
                server::trials(
                    up,
                    (&plan.target.name, mode),
                    (p.kills, p.max_ms, plan.seed),
                    &mut self.moments,
                    steps.interrupt,
                    steps.notes,
                )
                .map_err(|e| self.failed(mode, cut, e))?
            }
            (_, Some(spec)) => {
                let step = engine::Step {
                    label: &plan.target.name,
                    spec,
                    mode,
                    cut,
                    kills: p.kills,
                    max_ms: p.max_ms,
                    seed: plan.seed,
                    ext4: p.file_fsync_keeps_names(),
                };
                match cut.crash_points() {
                    Some(at) => points::sweep(&step, at, &self.root, steps.interrupt, steps.notes),
                    None => engine::trials(
                        &step,
                        &mut self.moments,
                        &self.root,
                        steps.interrupt,
                        steps.notes,
                    ),
                }
                .map_err(|e| self.failed(mode, cut, e))?
            }
            (_, None) => unreachable!("an engine has its spec for each mode"),
        };
        let config = serde_json::json!({
            "mode": mode.name(),
            "cut": cut.name(),
            "kills": p.kills,
            "max_ms": p.max_ms,
            "seed": plan.seed.to_string(),
        });
        let interrupted = steps.interrupt.load(Ordering::Relaxed);
        let out = outcome(d, (started, start, SystemTime::now()), interrupted);
        steps.store(name, Kind::Durability, &out, config)?;
        Ok(out)
    }

    fn close(&mut self, _keep: bool) -> plumb_runner::FamilyResult<Option<PathBuf>> {
        // Interrupted while the first server started: it stops here, its files go.
        self.first_server = None;
        Ok(None)
    }
}

/// A managed server's name in the store, as the other families store it: postgres,
/// innodb, myrocks.
fn engine_label(s: &plumb_plan::ServerSpec) -> String {
    plumb_servers::ServerChoice::parse(&s.server, s.engine.as_deref(), s.basedir.clone())
        .map(|c| c.engine_label())
        .unwrap_or_else(|_| s.label())
}

/// The durability trials on an engine that keeps files or a server plumb starts, as
/// the binary's table of families registers it: the run is begun before the first
/// trial (for a server, once its first server runs and its release is known), each
/// step stored as it ends; Ctrl-C lets the trial under way end and stores the run as
/// interrupted.
pub struct DurabilityFamily;

impl plumb_runner::family::Family for DurabilityFamily {
    fn takes(&self, plan: &RunPlan) -> bool {
        matches!(plan.workload.family, plumb_plan::Family::Durability(_))
    }

    fn prepare<'p>(
        &self,
        plan: &'p RunPlan,
        _extras: &'p plumb_runner::family::Extras,
        place: &Place<'_>,
    ) -> plumb_runner::FamilyResult<Box<dyn plumb_runner::Subject + 'p>> {
        let plumb_plan::Family::Durability(work) = &plan.workload.family else {
            return Err(plumb_runner::failure::NotMine::of(plan, "durability").into());
        };
        Ok(Box::new(prepare(plan, work, place)?))
    }
}
