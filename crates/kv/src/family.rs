//! The key-value family: db_bench's steps (fillseq, readrandom, a mix, …) on an
//! embedded engine opened in the run's own directory, each step driven by the timed
//! loop of [`crate::step`]. The first row of the binary's table of families.

use crate::config::{KeySpace, StepConfig};
use crate::error::PrepareError;
use crate::step::{run_step, RunContext};
use plumb_plan::{KvWork, RunPlan};
use plumb_runner::family::{Extras, Family, OwnDir};
use plumb_runner::subject::{Header, Place, Steps, Subject};
use plumb_runner::StepOutcome;
use plumb_targets::EngineSpec;
use plumb_workloads::pace::{LatencyBound, Pace};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// db_bench's steps on an embedded engine this plumb links.
pub struct KvFamily;

impl Family for KvFamily {
    fn takes(&self, plan: &RunPlan) -> bool {
        plan.workload.kv().is_some() && plan.target.engine_spec().is_some()
    }

    fn own_dir(&self, plan: &RunPlan) -> Option<OwnDir> {
        plan.target
            .engine_spec()
            .is_some_and(|e| e.capabilities().keeps_files)
            .then(|| OwnDir {
                prefix: plan.suite.clone(),
                default_root: std::env::temp_dir(),
            })
    }

    fn prepare<'p>(
        &self,
        plan: &'p RunPlan,
        _extras: &'p Extras,
        place: &Place<'_>,
    ) -> plumb_runner::FamilyResult<Box<dyn Subject + 'p>> {
        let (Some(engine), Some(work)) = (plan.target.engine_spec(), plan.workload.kv()) else {
            return Err(plumb_runner::failure::NotMine::of(plan, "db_bench").into());
        };
        let params = &work.params;
        let distribution = params.validate().map_err(|e| PrepareError::Param {
            key: e.key,
            message: e.message,
        })?;
        let bound = params
            .rate_search
            .as_deref()
            .and_then(|b| b.parse::<LatencyBound>().ok());
        let target = engine
            .open(place.dir.as_deref())
            .map_err(|source| PrepareError::Open {
                engine: engine.name().to_string(),
                dir: place.dir.clone(),
                source,
            })?;
        let keys = if plan.use_existing_db {
            KeySpace::unknown(params.num)
        } else {
            KeySpace::empty()
        };
        Ok(Box::new(KvSubject {
            plan,
            engine,
            work,
            target,
            distribution,
            bound,
            keys,
            dir: place.dir.clone(),
        }))
    }
}

/// An engine opened for one run, with the keys its steps have written so far.
struct KvSubject<'p> {
    plan: &'p RunPlan,
    engine: &'p EngineSpec,
    work: &'p KvWork,
    target: Box<dyn plumb_core::Target>,
    distribution: plumb_workloads::Distribution,
    bound: Option<LatencyBound>,
    keys: KeySpace,
    dir: Option<PathBuf>,
}

impl KvSubject<'_> {
    /// Step `i` as it runs under `name`, at `pace` when one is given.
    fn config(&self, i: usize, name: &str, pace: Option<Pace>) -> StepConfig {
        let (sp, params) = (&self.work.steps[i], &self.work.params);
        let mut plan = sp.clone();
        plan.name = name.to_string();
        StepConfig {
            index: i,
            plan,
            num: params.num,
            key_size: params.key_size,
            value_size: params.value_size,
            threads: params.step_threads(sp.kind),
            duration: params.step_duration(sp),
            ops: params.ops,
            warmup: std::time::Duration::from_secs_f64(params.warmup),
            seed: self.plan.seed,
            seek_nexts: params.seek_nexts,
            batch_size: params.batch_size,
            write_rate_mb: params.write_rate_mb,
            distribution: self.distribution,
            verify: params.verify,
            pace: pace.or_else(|| params.step_pace(sp.kind)),
            ycsb: params.ycsb_props().unwrap_or_default(),
            mix: params.mix_file.clone(),
            mixgraph: params.mixgraph_params().unwrap_or_default(),
            perf_groups: params.perf_groups,
            perf_level: params.perf_level,
            clients: params.step_clients(sp.kind),
        }
    }
}

impl Subject for KvSubject<'_> {
    fn header(&mut self) -> plumb_runner::FamilyResult<Header> {
        Ok(Header {
            engine: self.target.name().to_string(),
            version: self.target.version(),
            options: recorded_options(self.plan, self.engine, self.work, self.target.as_ref()),
            place: plumb_runner::begin::DataPlace {
                dir: self.dir.clone(),
                bytes: Some(self.work.params.data_bytes()),
                ..Default::default()
            },
            ..Header::default()
        })
    }

    fn steps(&self) -> Vec<String> {
        self.work.steps.iter().map(|s| s.name.clone()).collect()
    }

    fn drops_caches_before(&self, i: usize) -> bool {
        i > 0 && !self.work.steps[i].kind.is_maintenance()
    }

    fn run_at(
        &mut self,
        i: usize,
        name: &str,
        pace: Option<Pace>,
        steps: &mut Steps<'_, '_>,
    ) -> plumb_runner::FamilyResult<StepOutcome> {
        let cfg = self.config(i, name, pace);
        let ctx = RunContext {
            target: self.target.as_ref(),
            disk: steps.disk,
            hw: steps.hw.clone(),
            interrupt: steps.interrupt,
            progress: steps.notes,
            profile: steps.profile,
        };
        let out = run_step(&ctx, &cfg, &mut self.keys);
        let config = serde_json::to_value(&cfg).unwrap_or_default();
        steps.store(name, cfg.plan.kind.into(), &out, config)?;
        Ok(out)
    }

    fn search_bound(&self, i: usize) -> Option<LatencyBound> {
        let kind = self.work.steps[i].kind;
        self.bound
            .filter(|_| !kind.is_fill() && !kind.is_maintenance())
    }

    fn recorded(
        &self,
        i: usize,
        name: &str,
        pace: Option<Pace>,
    ) -> Option<(plumb_workloads::Kind, serde_json::Value)> {
        let mut cfg = self.config(i, name, None);
        cfg.pace = pace;
        Some((
            cfg.plan.kind.into(),
            serde_json::to_value(&cfg).unwrap_or_default(),
        ))
    }
}

/// The flat option map stored with a run (selectors such as `opt.threads=2` and the
/// fairness warnings read it): the workload's knobs, the engine's options under its
/// name (where the run sits in its suite, its memory limit and cache drops are added
/// by the lifecycle).
fn recorded_options(
    plan: &RunPlan,
    engine: &EngineSpec,
    work: &KvWork,
    target: &dyn plumb_core::Target,
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
