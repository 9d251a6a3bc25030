//! One planned run of the insert benchmark, on a server started for it (or reached by
//! URL) or on an embedded engine opened in a fresh directory: each step run and stored
//! as it ends, the row count checked after each, the server stopped or the directory
//! removed.

use crate::kv::KvTable;
use crate::sql::{SqlEngine, SqlTable};
use crate::{run_ib_step, IbContext, IbStepConfig, IbTally, IbTarget};
use anyhow::Context;
use plumb_core::{RunStatus, StepStatus};
use plumb_plan::{IbWork, RunPlan, ServerSpec, Subject};
use plumb_runner::family::Extras;
use plumb_runner::Slot;
use plumb_sql::managed::{self as server, Server};
use plumb_sql::{CounterReader, Protocol, StorageEngine};
use plumb_targets::EngineSpec;
use plumb_workloads::IbKind;
use plumb_workloads::Kind;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs `plan` on its target.
pub fn run(
    plan: &RunPlan,
    work: &IbWork,
    extras: &Extras,
    slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    match &plan.target.subject {
        Subject::Engine(spec) => run_embedded(plan, spec, work, slot),
        Subject::Server(spec) => run_server(plan, spec, work, extras, slot),
        Subject::Host(_) => anyhow::bail!("the insert benchmark runs on an engine or a server"),
    }
}

fn run_embedded(
    plan: &RunPlan,
    spec: &EngineSpec,
    work: &IbWork,
    slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let notes = slot.progress;
    spec.check_built_in()?;
    let caps = spec.capabilities();
    if !caps.delete || !caps.stores_data {
        anyhow::bail!(
            "{}: the insert benchmark needs an engine that stores data and deletes",
            spec.name()
        );
    }
    let root = slot
        .root
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("/var/tmp"));
    let dir =
        plumb_runner::owned_dir::OwnedDir::make(&root, &format!("ib-{}", spec.name()), notes)?;
    // This process holds the engine: it goes into the limit before the engine opens.
    let limit = plumb_runner::family::memory_limit(plan, "engine")?;
    if let Some(l) = &limit {
        l.enter()?;
    }
    let target = spec
        .open(caps.keeps_files.then(|| dir.path()))
        .with_context(|| format!("opening {} in {}", spec.name(), dir.path().display()))?;
    let mut options: BTreeMap<String, String> = target
        .options()
        .iter()
        .map(|(k, v)| (format!("engine.{k}"), v.clone()))
        .collect();
    options.insert("durability".into(), spec.durability().name().into());
    plumb_runner::family::record_limit(plan, limit.as_ref(), &mut options);
    let table = KvTable::new(target);
    let keep = slot.keep;
    notes.note(&format!(
        "{} {} in {}{}",
        spec.name(),
        spec.version(),
        dir.path().display(),
        if keep { " (kept after the run)" } else { "" }
    ));
    let out = measure(
        plan,
        work,
        Measured {
            target: &table,
            engine: spec.name(),
            version: &spec.version(),
            options,
            data_dir: Some(dir.path().to_path_buf()),
        },
        slot,
        &mut None,
    );
    drop(table);
    drop(limit);
    dir.finish(keep, notes);
    out
}

fn run_server(
    plan: &RunPlan,
    spec: &ServerSpec,
    work: &IbWork,
    extras: &Extras,
    slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let at = (slot.root.clone(), slot.keep);
    plumb_sql::managed::with_server(plan, spec, extras, at, slot.progress, |started| {
        measure_server(plan, spec, work, started, slot)
    })
}

fn measure_server(
    plan: &RunPlan,
    spec: &ServerSpec,
    work: &IbWork,
    started: plumb_sql::managed::Started<'_>,
    slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let notes = slot.progress;
    let plumb_sql::managed::Started {
        server,
        choice,
        limit,
    } = started;
    let ep = server.endpoint().clone();
    let mut counters = CounterReader::connect(&ep)?;
    let id = server::identify(spec, server, choice, &mut counters)?;
    let engine = match (ep.protocol, id.storage) {
        (Protocol::Postgres, _) => SqlEngine::Postgres,
        (_, Some(StorageEngine::RocksDb)) => SqlEngine::MyRocks,
        _ => SqlEngine::InnoDb,
    };
    let (pid, data_dir) = server.local();
    let mut options: BTreeMap<String, String> = BTreeMap::new();
    options.insert("cache_mb".into(), spec.cache_mb.to_string());
    plumb_runner::family::record_limit(plan, limit, &mut options);
    server::record_settings(server, &mut counters, id.storage, &mut options);
    drop(counters);
    let table = SqlTable {
        endpoint: ep,
        engine,
        pid,
        data_dir: data_dir.clone(),
    };
    let mut died = None;
    let out = measure(
        plan,
        work,
        Measured {
            target: &table,
            engine: &id.engine,
            version: &id.version,
            options,
            data_dir,
        },
        slot,
        &mut Some((server, &mut died)),
    )?;
    if let Some(e) = died {
        notes.note(&format!("error: {e}; the steps it finished are stored"));
        return Ok((out.0, out.1.worst(RunStatus::Failed)));
    }
    Ok(out)
}

/// A managed server to watch for death after a failed step, and where to say it died.
type Watch<'a, 'b> = Option<(&'a mut Server, &'b mut Option<plumb_sql::SqlError>)>;

/// What a run measures, and what the store calls it.
struct Measured<'a> {
    target: &'a dyn IbTarget,
    engine: &'a str,
    version: &'a str,
    /// Options recorded with the run (the plan's knobs are added).
    options: BTreeMap<String, String>,
    data_dir: Option<std::path::PathBuf>,
}

fn measure(
    plan: &RunPlan,
    work: &IbWork,
    m: Measured<'_>,
    mut slot: Slot<'_>,
    watch: &mut Watch<'_, '_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let p = &work.params;
    p.validate()
        .map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
    let Measured {
        target,
        engine,
        version,
        mut options,
        data_dir,
    } = m;
    for (k, v) in [
        ("rows", p.rows.to_string()),
        ("inserts", p.inserts.to_string()),
        ("clients", p.clients.to_string()),
        ("duration", p.duration.to_string()),
        ("delete_per_insert", p.delete_per_insert.to_string()),
        ("rows_per_query", p.rows_per_query.to_string()),
    ] {
        options.insert(k.to_string(), v);
    }
    let (interrupt, progress) = (slot.interrupt, slot.progress);
    let (mut rec, disk) = slot.begin(
        plan,
        plumb_runner::family::RunHeader {
            engine: engine.to_string(),
            version: version.to_string(),
            options,
            data_dir: data_dir.clone(),
        },
    )?;
    let run_id = rec.id();
    progress.note(&format!(
        "run {run_id}: insert benchmark on {engine} {version}, {} rows, {} client{}, seed {}",
        p.rows,
        p.clients,
        if p.clients == 1 { "" } else { "s" },
        plan.seed
    ));
    let bound = p
        .rate_search
        .as_deref()
        .map(str::parse::<plumb_workloads::LatencyBound>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("rate_search: {e}"))?;
    let mut tally = IbTally::default();
    for (i, step) in work.steps.iter().enumerate() {
        if i > 0 {
            plumb_runner::family::maybe_drop_caches(plan, progress);
        }
        let rows = p.rows_of(step);
        let cfg = IbStepConfig {
            index: i,
            plan: step.clone(),
            clients: p.clients,
            rows,
            duration: Duration::from_secs_f64(p.duration),
            delete_per_insert: p.delete_per_insert,
            rows_per_query: p.rows_per_query,
            seed: plan.seed,
            query_pace: p.query_pace(),
            perf_groups: p.perf_groups,
            wait_hz: p.wait_hz,
        };
        let mut ctx = IbContext {
            target,
            disk: disk.as_ref(),
            interrupt,
            progress,
            tally: &mut tally,
        };
        let mut config = serde_json::json!({
            "step": step.name,
            "rows_per_commit": step.rows_per_commit,
            "rate_per_client": step.rate,
            "clients": p.clients,
            "duration_s": p.duration,
            "delete_per_insert": p.delete_per_insert,
            "rows_per_query": p.rows_per_query,
            "seed": plan.seed.to_string(),
        });
        config["rows"] = rows.into();
        let mut server_died = false;
        let mut run_and_store = |ctx: &mut IbContext<'_>,
                                 cfg: &IbStepConfig|
         -> anyhow::Result<plumb_runner::StepOutcome> {
            let result = run_ib_step(ctx, cfg);
            let mut out = result.outcome;
            if out.status == StepStatus::Failed && !out.verification_failed {
                if let Some((server, died)) = watch.as_mut() {
                    if let Some(e) = server.died(&cfg.plan.name) {
                        out.error = Some(e.to_string());
                        **died = Some(e);
                        server_died = true;
                    }
                }
            }
            store_step(&mut rec, cfg, &out, &config, result.note.as_deref(), None)?;
            Ok(out)
        };
        let mut out = run_and_store(&mut ctx, &cfg)?;
        let queries = matches!(step.kind, IbKind::RangeQueries | IbKind::PointQueries);
        if let (Some(bound), true, StepStatus::Ok) = (&bound, queries, out.status) {
            let found = plumb_runner::family::rate_search(
                &step.name,
                bound,
                &out,
                interrupt,
                progress,
                |name, pace| {
                    let mut c = cfg.clone();
                    c.plan.name = name.to_string();
                    c.query_pace = Some(pace);
                    run_and_store(&mut ctx, &c)
                },
            )?;
            if let Some(found) = found {
                let mut c = cfg.clone();
                c.plan.name = format!("{}@max", step.name);
                c.query_pace = found.max_pace;
                store_step(&mut rec, &c, &found.max, &config, None, Some(found.account))?;
                out = found.last;
            }
        }
        if let Some(e) = &out.error {
            progress.note(&format!("step {} failed: {e}", step.name));
        }
        if out.ends_run(interrupt) || server_died {
            break;
        }
    }
    let status = rec.finish(interrupt.load(Ordering::Relaxed))?;
    slot.finished(run_id)?;
    Ok((run_id, status))
}

/// Stores one step as it ran: its record (the step's knobs in `config`, with what an
/// unmeasured step did, its open-loop query rate and a rate search's account added).
fn store_step(
    rec: &mut plumb_runner::Recording<'_>,
    cfg: &IbStepConfig,
    out: &plumb_runner::StepOutcome,
    config: &serde_json::Value,
    did: Option<&str>,
    search: Option<serde_json::Value>,
) -> anyhow::Result<()> {
    let mut config = config.clone();
    if let Some(did) = did {
        config["did"] = did.into();
    }
    if let Some(q) = &cfg.query_pace {
        config["query_rate"] = q.ops_per_sec.into();
        config["arrivals"] = q.arrivals.to_string().into();
        if let Some(profile) = &q.profile {
            config["query_rate_profile"] = profile.to_string().into();
        }
    }
    if let Some(x) = search {
        config["rate_search"] = x;
    }
    rec.outcome(&cfg.plan.name, Kind::Ib(cfg.plan.kind), out, config)?;
    Ok(())
}

/// The insert benchmark on a server or an embedded engine, as the binary's table of
/// families registers it.
pub struct IbFamily;

impl plumb_runner::family::Family for IbFamily {
    fn takes(&self, plan: &RunPlan) -> bool {
        matches!(plan.workload.family, plumb_plan::Family::Ib(_))
    }

    fn run(
        &self,
        plan: &RunPlan,
        extras: &Extras,
        slot: Slot<'_>,
    ) -> anyhow::Result<(i64, RunStatus)> {
        let plumb_plan::Family::Ib(work) = &plan.workload.family else {
            anyhow::bail!("not an insert benchmark plan");
        };
        run(plan, work, extras, slot)
    }
}
