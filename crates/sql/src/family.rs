//! One planned run of the sysbench microbenchmarks: a fresh server of the plan's
//! release and config (or the plan's URL), its identity and settings recorded, each
//! step run and stored as it ends, the server stopped.

use crate::managed as server;
use crate::{run_sql_step, CounterReader, Protocol, Shape, SqlContext, SqlStepConfig};
use anyhow::bail;
use plumb_core::{RunStatus, StepStatus};
use plumb_plan::{RunPlan, ServerSpec, SqlWork};
use plumb_runner::family::Extras;
use plumb_runner::Slot;
use plumb_store::Store;
use plumb_workloads::{Kind, SqlKind};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs `plan` on a server started for it (stopped after, whatever happened).
pub fn run(
    plan: &RunPlan,
    spec: &ServerSpec,
    work: &SqlWork,
    extras: &Extras,
    slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let at = (slot.root.clone(), slot.keep);
    crate::managed::with_server(plan, spec, extras, at, slot.progress, |started| {
        measure(plan, spec, work, extras, started, slot)
    })
}

fn measure(
    plan: &RunPlan,
    spec: &ServerSpec,
    work: &SqlWork,
    extras: &Extras,
    started: crate::managed::Started<'_>,
    mut slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let crate::managed::Started {
        server,
        choice,
        limit,
    } = started;
    let p = &work.params;
    let distribution = p
        .validate()
        .map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
    let (pace, bound) = plumb_plan::pace_of(
        p.rate,
        p.rate_profile.as_deref(),
        p.arrivals,
        p.rate_search.as_deref(),
    )
    .map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
    let ep = server.endpoint().clone();
    let mut counters = CounterReader::connect(&ep)?;
    let id = server::identify(spec, server, choice, &mut counters)?;
    let (engine, version) = (id.engine, id.version);
    let engine_clause = id
        .storage
        .map(|e| format!(" ENGINE = {}", e.sql_name()))
        .unwrap_or_default();
    let steps = &work.steps;
    let sysbench = steps
        .iter()
        .any(|s| s.kind.tables() == plumb_workloads::SqlTables::Sysbench);
    if sysbench && !steps.iter().any(|s| s.kind == SqlKind::Load) && counters.max_id(p.tables) == 0
    {
        bail!(
            "no rows in sbtest1..{} at {}: add `load` to the steps (it creates and fills them)",
            p.tables,
            ep.redacted_url()
        );
    }
    let (pid, data_dir) = server.local();
    let mut options: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in [
        ("server", engine.clone()),
        ("tables", p.tables.to_string()),
        ("table_size", p.table_size.to_string()),
        ("range_size", p.range_size.to_string()),
        ("threads", p.threads.to_string()),
        ("duration", p.duration.to_string()),
        ("warmup", p.warmup.to_string()),
        ("distribution", distribution.to_string()),
        ("cache_mb", spec.cache_mb.to_string()),
    ] {
        options.insert(k.to_string(), v);
    }
    plumb_runner::family::record_limit(plan, limit, &mut options);
    server::record_settings(server, &mut counters, id.storage, &mut options);
    let (interrupt, progress, profile) = (slot.interrupt, slot.progress, slot.profile);
    let (mut rec, disk) = slot.begin(
        plan,
        plumb_runner::family::RunHeader {
            engine: engine.clone(),
            version: version.clone(),
            options,
            data_dir: data_dir.clone(),
        },
    )?;
    let run_id = rec.id();
    let group_of = extras.client_group.as_ref();
    if let Some((g, _)) = group_of {
        rec.store().set_client_group(run_id, g)?;
    }
    progress.note(&format!(
        "run {run_id}: {engine} {version}, {} × {} rows, {} threads, seed {}",
        p.tables, p.table_size, p.threads, plan.seed
    ));
    let shape = Shape {
        tables: p.tables,
        table_size: p.table_size,
        range_size: p.range_size,
        engine_clause,
        postgres: ep.protocol == Protocol::Postgres,
        scale: p.scale,
        warehouses: p.warehouses,
        spec_timing: p.spec_timing,
        ycsb_records: p.recordcount,
        ycsb_props: p
            .ycsb_props()
            .map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?,
        scripts: script_step(p, steps)?,
        lua: lua_step(p, steps, id.storage.map(|e| e.sql_name()))?,
    };
    // pgbench's steps without pgbench-load run on tables made before (by `pgbench -i`
    // or an earlier run): their scale is read from them, as pgbench reads it.
    let mut shape = shape;
    let pgbench_steps = steps
        .iter()
        .any(|s| s.kind.tables() == plumb_workloads::SqlTables::Pgbench)
        || shape.scripts.as_ref().is_some_and(|s| s.has_builtin());
    if pgbench_steps && !steps.iter().any(|s| s.kind == SqlKind::PgbenchLoad) {
        shape.scale = crate::pgbench::scale_of(ep.connect()?.as_mut()).map_err(|e| {
            anyhow::anyhow!(
                "{e}: pgbench's steps need its tables; add pgbench-load to the steps or run \
                 `pgbench -i` first"
            )
        })?;
    }
    // A database plumb did not just load may have lost rows to earlier deletes.
    let mut all_present = false;
    let mut ycsb = crate::run::YcsbState::default();
    let mut server_died = None;
    let mut ceilings: Vec<plumb_store::Ceiling> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if i > 0 && !step.kind.is_load() {
            plumb_runner::family::maybe_drop_caches(plan, progress);
        }
        let (duration, warmup) = (p.duration_of(step), p.warmup_of(step));
        let cfg = SqlStepConfig {
            index: i,
            plan: step.clone(),
            threads: p.threads_of(step),
            clients: p.clients_of(step),
            duration: Duration::from_secs_f64(duration),
            warmup: Duration::from_secs_f64(warmup),
            seed: plan.seed,
            shape: shape.clone(),
            distribution,
            pace: pace.clone(),
            perf_groups: p.perf_groups,
            wait_hz: p.wait_hz,
        };
        let mut ctx = SqlContext {
            endpoint: &ep,
            server_pid: pid,
            data_dir: data_dir.as_deref(),
            disk: disk.as_ref(),
            counters: &mut counters,
            interrupt,
            progress,
            all_present: &mut all_present,
            profile,
            ycsb: &mut ycsb,
        };
        if let Some((g, n)) = group_of {
            let place = barrier(rec.store(), g, i, *n, extras.barrier_timeout, interrupt)?;
            progress.note(&format!(
                "client group {g}: step {}: all {n} clients here (arrived {})",
                step.name,
                place + 1
            ));
        }
        let mut config = serde_json::json!({
            "microbenchmark": step.kind.name(),
            "threads": p.threads,
            "duration_s": duration,
            "warmup_s": warmup,
            "tables": p.tables,
            "table_size": p.table_size,
            "range_size": p.range_size,
            "distribution": distribution.to_string(),
            "seed": plan.seed.to_string(),
        });
        if let (SqlKind::Script, Some(s)) = (step.kind, &shape.scripts) {
            // What ran, by name, weight and hash (the texts are in the run's plan).
            config["query_mode"] = s.mode.name().into();
            config["scripts"] = s
                .set
                .scripts
                .iter()
                .zip(script_hashes(p))
                .map(|(s, h)| serde_json::json!({"name": s.name, "weight": s.weight, "sha256": h}))
                .collect();
            if !s.defines.is_empty() {
                config["define"] = p.define.clone().into();
            }
            config["scale"] = shape.scale.into();
        }
        if let (plumb_workloads::SqlTables::Lua, Some(l)) = (step.kind.tables(), &shape.lua) {
            // What ran: the script and its modules by name and hash (the texts are in
            // the run's plan), and the options given.
            config["lua"] = l
                .sources
                .iter()
                .map(|s| serde_json::json!({"name": s.name, "sha256": s.sha256}))
                .collect();
            if !p.lua_opt.is_empty() {
                config["lua_opt"] = p.lua_opt.clone().into();
            }
        }
        let mut run_and_store = |ctx: &mut SqlContext<'_>,
                                 cfg: &SqlStepConfig|
         -> anyhow::Result<plumb_runner::StepOutcome> {
            let mut out = run_sql_step(ctx, cfg);
            // A failed step may be the first sign of a dying server.
            if out.status == StepStatus::Failed {
                if let Some(e) = server.died(&cfg.plan.name) {
                    out.error = Some(e.to_string());
                    server_died = Some(e);
                }
            }
            let mut config = config.clone();
            config["threads"] = cfg.threads.into();
            store_step(&mut rec, progress, cfg, &out, &config, None, group_of)?;
            Ok(out)
        };
        if step.kind == SqlKind::CachedSelect {
            let hw = std::thread::available_parallelism().map_or(1, |n| n.get());
            let mut last = None;
            for c in crate::ceiling::clients(p.threads, hw) {
                let mut at = cfg.clone();
                at.threads = c;
                at.plan.name = format!("{}.c{c}", step.name);
                let out = run_and_store(&mut ctx, &at)?;
                if out.status == StepStatus::Ok {
                    ceilings.extend(cached_select_ceilings(&engine, c, &out.summary));
                }
                let stop = out.status != StepStatus::Ok || interrupt.load(Ordering::Relaxed);
                last = Some(out);
                if stop {
                    break;
                }
            }
            let out = last.expect("clients() is never empty");
            if let Some(e) = &out.error {
                progress.note(&format!("step {} failed: {e}", step.name));
            }
            if out.status != StepStatus::Ok || interrupt.load(Ordering::Relaxed) {
                break;
            }
            continue;
        }
        let mut out = run_and_store(&mut ctx, &cfg)?;
        if let (Some(bound), true, StepStatus::Ok) = (&bound, !step.kind.is_load(), out.status) {
            let found = plumb_runner::family::rate_search(
                &step.name,
                bound,
                &out,
                interrupt,
                progress,
                |name, pace| {
                    let mut c = cfg.clone();
                    c.plan.name = name.to_string();
                    c.pace = Some(pace);
                    run_and_store(&mut ctx, &c)
                },
            )?;
            if let Some(found) = found {
                let mut c = cfg.clone();
                c.plan.name = format!("{}@max", step.name);
                c.pace = found.max_pace;
                let account = Some(found.account);
                store_step(
                    &mut rec, progress, &c, &found.max, &config, account, group_of,
                )?;
                out = found.last;
            }
        }
        if let Some(e) = &out.error {
            progress.note(&format!("step {} failed: {e}", step.name));
        }
        if out.ends_run(interrupt) || server_died.is_some() {
            break;
        }
    }
    let mut status = rec.finish(interrupt.load(Ordering::Relaxed))?;
    if let Some(e) = server_died {
        progress.note(&format!(
            "error: run {run_id}: {e}; the steps it finished are stored"
        ));
        status = status.worst(RunStatus::Failed);
    }
    let stored = slot.store.run(run_id)?;
    if !ceilings.is_empty() {
        let host = stored
            .run
            .host
            .as_ref()
            .and_then(|h| h.inventory.hostname.clone())
            .unwrap_or_else(|| "unknown".into());
        add_max(&mut ceilings);
        slot.store
            .add_ceilings(run_id, &host, &plumb_runner::lifecycle::now(), &ceilings)?;
        progress.note(&format!(
            "run {run_id}: cached-SELECT ceiling of {engine} on {host}: {}",
            ceilings
                .iter()
                .map(|c| format!("{} {:.0} {}", c.name, c.value, c.unit))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    slot.observer.run_finished(&stored, slot.store);
    Ok((run_id, status))
}

/// The ceilings one client count of `cached-select` measured: its queries/s, and the
/// CPU a trivial query costs there (plumb's side plus the server's).
fn cached_select_ceilings(
    engine: &str,
    clients: usize,
    s: &plumb_core::StepSummary,
) -> Vec<plumb_store::Ceiling> {
    let mut v = vec![plumb_store::Ceiling {
        name: crate::ceiling::ceiling_name(engine, clients),
        value: s.ops_sec,
        unit: "queries/s".into(),
    }];
    let server = s.server.as_ref().and_then(|v| v.cpu_us_query);
    if let (Some(c), Some(srv)) = (s.cpu_us_op, server) {
        v.push(plumb_store::Ceiling {
            name: crate::ceiling::cpu_ceiling_name(engine, clients),
            value: c + srv,
            unit: "µs/query".into(),
        });
    }
    v
}

/// Adds the best rate over the client counts as the server's one cached-SELECT ceiling.
fn add_max(ceilings: &mut Vec<plumb_store::Ceiling>) {
    let best = ceilings
        .iter()
        .filter(|c| c.unit == "queries/s")
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .cloned();
    if let Some(b) = best {
        let name = b
            .name
            .rsplit_once('.')
            .map_or(b.name.clone(), |(n, _)| n.to_string());
        ceilings.push(plumb_store::Ceiling { name, ..b });
    }
}

/// Stores one step as it ran: its record (the step's knobs in `config`, its open-loop
/// rate and a rate search's account added), its histograms for a client group, its
/// profile.
fn store_step(
    rec: &mut plumb_runner::Recording<'_>,
    progress: &dyn plumb_runner::Progress,
    cfg: &SqlStepConfig,
    out: &plumb_runner::StepOutcome,
    config: &serde_json::Value,
    search: Option<serde_json::Value>,
    group_of: Option<&(String, u32)>,
) -> anyhow::Result<()> {
    let mut config = config.clone();
    if let Some(p) = &cfg.pace {
        config["rate"] = p.ops_per_sec.into();
        config["arrivals"] = p.arrivals.to_string().into();
        if let Some(profile) = &p.profile {
            config["rate_profile"] = profile.to_string().into();
        }
    }
    if let Some(x) = search {
        config["rate_search"] = x;
    }
    let step_id = rec.outcome(&cfg.plan.name, Kind::Sql(cfg.plan.kind), out, config)?;
    if let (Some(_), Some(h)) = (group_of, &out.histograms) {
        let mut hists = vec![(plumb_store::clients::WHOLE_STEP, h.total.to_v2_base64())];
        hists.extend(
            h.intervals
                .iter()
                .enumerate()
                .map(|(i, h)| (i as i64, h.to_v2_base64())),
        );
        rec.store().add_histograms(step_id, &hists)?;
    }
    match &out.profile {
        Some(Ok(folded)) => rec.store().add_profile(step_id, folded)?,
        Some(Err(why)) => progress.note(&format!("no profile of step {}: {why}", cfg.plan.name)),
        None => {}
    }
    Ok(())
}

/// Waits for the other clients of the group before step `index`.
fn barrier(
    store: &Store,
    group: &str,
    index: usize,
    n: u32,
    timeout: f64,
    interrupt: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<i64> {
    Ok(store.barrier(
        &format!("{group}/{index}"),
        i64::from(n),
        Duration::from_secs_f64(timeout),
        interrupt,
    )?)
}

/// The SQL family (sysbench's microbenchmarks, TPROC-C, pgbench, YCSB) on a server,
/// as the binary's table of families registers it.
pub struct SqlFamily;

impl plumb_runner::family::Family for SqlFamily {
    fn takes(&self, plan: &RunPlan) -> bool {
        matches!(
            (&plan.target.subject, &plan.workload.family),
            (plumb_plan::Subject::Server(_), plumb_plan::Family::Sql(_))
        )
    }

    fn check(&self, plan: &RunPlan) -> Result<(), String> {
        let plumb_plan::Family::Sql(w) = &plan.workload.family else {
            return Ok(());
        };
        script_step(&w.params, &w.steps).map_err(|e| format!("{e:#}"))?;
        lua_step(&w.params, &w.steps, None).map_err(|e| format!("{e:#}"))?;
        Ok(())
    }

    fn run(
        &self,
        plan: &RunPlan,
        extras: &Extras,
        slot: Slot<'_>,
    ) -> anyhow::Result<(i64, RunStatus)> {
        let (plumb_plan::Subject::Server(spec), plumb_plan::Family::Sql(work)) =
            (&plan.target.subject, &plan.workload.family)
        else {
            anyhow::bail!("the sql workload runs on a server");
        };
        run(plan, spec, work, extras, slot)
    }
}

/// The script step's scripts, when the run has one: the files read when the run was
/// planned (kept in its plan), then the built-ins.
fn script_step(
    p: &plumb_plan::SqlParams,
    steps: &[plumb_workloads::SqlStepPlan],
) -> anyhow::Result<Option<crate::pgscript::ScriptStep>> {
    if !steps.iter().any(|s| s.kind == SqlKind::Script) {
        return Ok(None);
    }
    if p.scripts.len() != p.script.len() {
        bail!(
            "--script: {} file(s) named but {} read; the plan was made without reading them \
             (plan the run with `plumb sql` or a suite)",
            p.script.len(),
            p.scripts.len()
        );
    }
    Ok(Some(crate::pgscript::ScriptStep::new(
        &p.scripts,
        &p.builtin,
        &p.define,
        &p.query_mode,
    )?))
}

/// The Lua step's script, when the run has one: the sources read when the run was
/// planned, its options resolved; a managed MariaDB's storage engine is the script's
/// `mysql_storage_engine` unless `--lua-opt` sets it.
fn lua_step(
    p: &plumb_plan::SqlParams,
    steps: &[plumb_workloads::SqlStepPlan],
    storage: Option<&str>,
) -> anyhow::Result<Option<crate::lua::LuaStep>> {
    let Some(step) = steps
        .iter()
        .find(|s| s.kind.tables() == plumb_workloads::SqlTables::Lua && !s.kind.is_load())
        .or_else(|| {
            steps
                .iter()
                .find(|s| s.kind.tables() == plumb_workloads::SqlTables::Lua)
        })
    else {
        return Ok(None);
    };
    if p.lua_sources.is_empty() {
        bail!(
            "--lua: the script was not read when the run was planned; plan the run with \
             `plumb sql --lua FILE` or a suite's `lua = \"FILE\"`"
        );
    }
    let mut l =
        crate::lua::LuaStep::new(&p.lua_sources, &p.lua_opt, p.threads, p.duration_of(step))?;
    if let Some(e) = storage {
        l.default_option(
            "mysql_storage_engine",
            crate::lua::OptValue::Str(e.to_ascii_lowercase()),
        );
    }
    Ok(Some(l))
}

/// Each script's hash, files then built-ins, in the order of the step's scripts.
fn script_hashes(p: &plumb_plan::SqlParams) -> Vec<String> {
    let mut v: Vec<String> = p.scripts.iter().map(|s| s.sha256.clone()).collect();
    for b in &p.builtin {
        let name = crate::pgscript::parse::split_weight(b)
            .map(|(n, _)| n)
            .unwrap_or(b);
        v.push(
            crate::pgscript::builtin::source(name, 1)
                .map(|s| s.sha256)
                .unwrap_or_default(),
        );
    }
    v
}
