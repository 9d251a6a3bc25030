//! One planned durability run: a target (an embedded engine that keeps files, or a
//! server plumb starts) × the trials of its modes and cuts. Each mode × cut is a step
//! stored as it ends (`sync.kill`, `nosync.power`), its acknowledged, lost and wrong
//! writes and its verdict in the step's summary; a step fails when a mode that
//! promises durability lost a write. `plumb durability`, a suite's `durability`
//! workload, `plumb rerun` and a worker of a queue all run through here.

pub mod engine;
pub mod server;
pub mod trial;

use anyhow::Context;
use plumb_core::{RunStatus, StepStatus, StepSummary};
use plumb_plan::{DurabilityWork, RunPlan, Subject};
use plumb_runner::Slot;
use plumb_store::{Kind, StepRecord};
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
    o
}

/// The store's record of one step from what its trials found.
fn record(
    name: String,
    d: plumb_core::DurabilitySummary,
    config: serde_json::Value,
    (started, start, ended): (SystemTime, Instant, SystemTime),
    interrupted: bool,
) -> StepRecord {
    let promised = plumb_plan::DurabilityMode::parse_list(&d.mode)
        .map(|m| m.iter().any(|m| m.promises()))
        .unwrap_or(false);
    let broken = promised && d.lost + d.wrong > 0;
    let status = if broken {
        StepStatus::Failed
    } else if interrupted && d.trials < d.kills_planned {
        StepStatus::Interrupted
    } else {
        StepStatus::Ok
    };
    let secs = start.elapsed().as_secs_f64();
    StepRecord {
        seq: 0, // given by the recording
        name,
        kind: Kind::Durability,
        status,
        error: broken.then(|| d.verdict.clone()),
        started_at: plumb_runner::lifecycle::rfc3339(started),
        ended_at: plumb_runner::lifecycle::rfc3339(ended),
        config,
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
    }
}

/// Runs `plan` (`work` on its target) inside the lifecycle: the run is begun in the
/// store before the first trial (for a server, once its first server runs and its
/// release is known), each step stored as it ends; Ctrl-C lets the trial under way end
/// and stores the run as interrupted.
pub fn run(
    plan: &RunPlan,
    work: &DurabilityWork,
    mut slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let cuts = work
        .params
        .validate()
        .map_err(|e| anyhow::anyhow!("durability.{}: {}", e.key, e.message))?;
    if let Some(why) = plumb_plan::durability::refused(&plan.target.subject, work) {
        anyhow::bail!("target {:?}: {why}", plan.target.name);
    }
    // The engine as the writer opens it in each mode, checked before anything runs.
    let specs = match &plan.target.subject {
        Subject::Engine(e) => {
            e.check_built_in()?;
            work.modes
                .iter()
                .map(|&m| plumb_plan::durability::engine_in_mode(e, m).map(Some))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| anyhow::anyhow!("target {:?}: {why}", plan.target.name))?
        }
        Subject::Server(s) if s.url.is_none() => vec![None; work.modes.len()],
        _ => anyhow::bail!(
            "target {:?}: durability runs on an engine that keeps files or a server plumb \
             starts",
            plan.target.name
        ),
    };
    let (interrupt, notes) = (slot.interrupt, slot.progress);
    let root = slot
        .root
        .clone()
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    std::fs::create_dir_all(&root).with_context(|| format!("--dir: making {}", root.display()))?;
    if cuts.iter().any(|c| c.powered()) {
        for gone in plumb_powercut::sweep_stale(&root) {
            notes.note(&format!(
                "unmounted {}, a power-cut mount left by a plumb that was killed",
                gone.display()
            ));
        }
    }
    let mut moments = trial::Moments::new(plan.seed);
    let steps: Vec<_> = work
        .modes
        .iter()
        .zip(&specs)
        .flat_map(|(&mode, spec)| cuts.iter().map(move |&cut| (mode, spec.as_ref(), cut)))
        .collect();
    if steps.is_empty() {
        anyhow::bail!("target {:?}: no modes to try", plan.target.name);
    }
    let context = |mode: plumb_plan::DurabilityMode, cut: plumb_plan::Cut| {
        format!("{} {} --cut {}", plan.target.name, mode.name(), cut.name())
    };
    // A server's release is known once it runs: the first step's server starts before
    // the run is begun, so the run records it.
    let mut first_server = None;
    let (engine, version) = match &plan.target.subject {
        Subject::Server(s) => {
            let (mode, _, cut) = steps[0];
            let up = server::start(s, cut, &root).with_context(|| context(mode, cut))?;
            let v = up.version();
            first_server = Some(up);
            (engine_label(s), v)
        }
        Subject::Engine(e) => (e.name().to_string(), e.version()),
        Subject::Host(_) => unreachable!("refused above"),
    };
    let (mut rec, _) = slot.begin(
        plan,
        plumb_runner::family::RunHeader {
            engine,
            version,
            options: options(work),
            data_dir: Some(root.clone()),
        },
    )?;
    let run_id = rec.id();
    notes.note(&format!(
        "run {run_id}: durability of {} ({}), {} kills per step, seed {}",
        plan.target.name,
        work.step_names().join(", "),
        work.params.kills,
        plan.seed
    ));
    for (mode, spec, cut) in steps {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        let (started, start) = (SystemTime::now(), Instant::now());
        let d = match (&plan.target.subject, spec) {
            (Subject::Server(s), _) => {
                let up = match first_server.take() {
                    Some(up) => up,
                    None => server::start(s, cut, &root).with_context(|| context(mode, cut))?,
                };
                server::trials(
                    up,
                    (&plan.target.name, mode),
                    (work.params.kills, work.params.max_ms, plan.seed),
                    &mut moments,
                    interrupt,
                    notes,
                )
                .with_context(|| context(mode, cut))?
            }
            (_, Some(spec)) => engine::trials(
                &engine::Step {
                    label: &plan.target.name,
                    spec,
                    mode,
                    cut,
                    kills: work.params.kills,
                    max_ms: work.params.max_ms,
                    seed: plan.seed,
                },
                &mut moments,
                &root,
                interrupt,
                notes,
            )
            .with_context(|| context(mode, cut))?,
            (_, None) => unreachable!("an engine has its spec for each mode"),
        };
        let config = serde_json::json!({
            "mode": mode.name(),
            "cut": cut.name(),
            "kills": work.params.kills,
            "max_ms": work.params.max_ms,
            "seed": plan.seed.to_string(),
        });
        let step = record(
            format!("{}.{}", mode.name(), cut.name()),
            d,
            config,
            (started, start, SystemTime::now()),
            interrupt.load(Ordering::Relaxed),
        );
        rec.step(step, &[])?;
    }
    // Interrupted while the first server started: it stops here, its files go.
    drop(first_server);
    let status = rec.finish(interrupt.load(Ordering::Relaxed))?;
    slot.finished(run_id).context("reading the run back")?;
    Ok((run_id, status))
}

/// A managed server's name in the store, as the other families store it: postgres,
/// innodb, myrocks.
fn engine_label(s: &plumb_plan::ServerSpec) -> String {
    plumb_sql::ServerChoice::parse(&s.server, s.engine.as_deref(), s.basedir.clone())
        .map(|c| c.engine_label())
        .unwrap_or_else(|_| s.label())
}

/// The durability trials on an engine that keeps files or a server plumb starts, as
/// the binary's table of families registers it.
pub struct DurabilityFamily;

impl plumb_runner::family::Family for DurabilityFamily {
    fn takes(&self, plan: &RunPlan) -> bool {
        matches!(plan.workload.family, plumb_plan::Family::Durability(_))
    }

    fn run(
        &self,
        plan: &RunPlan,
        _extras: &plumb_runner::family::Extras,
        slot: Slot<'_>,
    ) -> anyhow::Result<(i64, RunStatus)> {
        let plumb_plan::Family::Durability(work) = &plan.workload.family else {
            anyhow::bail!("not a durability plan");
        };
        run(plan, work, slot)
    }
}
