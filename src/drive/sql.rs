//! One planned run of the sysbench microbenchmarks: a fresh server of the plan's
//! release and config (or the plan's URL), its identity and settings recorded, each
//! step run and stored as it ends, the server stopped.

use super::server;
use super::Extras;
use anyhow::bail;
use plumb_core::{RunStatus, StepStatus};
use plumb_plan::{RunPlan, ServerSpec, SqlWork};
use plumb_runner::lifecycle::rfc3339;
use plumb_runner::Slot;
use plumb_sql::{run_sql_step, CounterReader, Protocol, Shape, SqlContext, SqlStepConfig};
use plumb_store::{StepRecord, Store};
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
    super::with_server(plan, spec, extras, at, |started| {
        measure(plan, spec, work, extras, started, slot)
    })
}

fn measure(
    plan: &RunPlan,
    spec: &ServerSpec,
    work: &SqlWork,
    extras: &Extras,
    started: super::Started<'_>,
    slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    let super::Started {
        server,
        choice,
        limit,
    } = started;
    let p = &work.params;
    let distribution = p
        .validate()
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
    if !steps.iter().any(|s| s.kind == SqlKind::Load) && counters.max_id(p.tables) == 0 {
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
    super::record_limit(plan, limit, &mut options);
    server::record_settings(server, &mut counters, id.storage, &mut options);
    let Slot {
        store,
        run,
        group,
        interrupt,
        progress,
        observer,
        profile,
        at,
        ..
    } = slot;
    let (mut rec, disk) = super::begin(
        store,
        super::RunHeader {
            engine: engine.clone(),
            version: version.clone(),
            options,
            data_dir: data_dir.clone(),
            run,
        },
        plan,
        group,
        observer,
        at,
    )?;
    let run_id = rec.id();
    let group_of = extras.client_group.as_ref();
    if let Some((g, _)) = group_of {
        rec.store().set_client_group(run_id, g)?;
    }
    eprintln!(
        "plumb: run {run_id}: {engine} {version}, {} × {} rows, {} threads, seed {}",
        p.tables, p.table_size, p.threads, plan.seed
    );
    let shape = Shape {
        tables: p.tables,
        table_size: p.table_size,
        range_size: p.range_size,
        engine_clause,
        postgres: ep.protocol == Protocol::Postgres,
    };
    // A database plumb did not just load may have lost rows to earlier deletes.
    let mut all_present = false;
    let mut server_died = None;
    for (i, step) in steps.iter().enumerate() {
        if i > 0 && step.kind != SqlKind::Load {
            super::maybe_drop_caches(plan);
        }
        let (duration, warmup) = (p.duration_of(step), p.warmup_of(step));
        let cfg = SqlStepConfig {
            index: i,
            plan: step.clone(),
            threads: p.threads,
            duration: Duration::from_secs_f64(duration),
            warmup: Duration::from_secs_f64(warmup),
            seed: plan.seed,
            shape: shape.clone(),
            distribution,
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
        };
        if let Some((g, n)) = group_of {
            let place = barrier(rec.store(), g, i, *n, extras.barrier_timeout, interrupt)?;
            eprintln!(
                "plumb: client group {g}: step {}: all {n} clients here (arrived {})",
                step.name,
                place + 1
            );
        }
        let mut out = run_sql_step(&mut ctx, &cfg);
        // A failed step may be the first sign of a dying server.
        if out.status == StepStatus::Failed {
            if let Some(e) = server.died(&step.name) {
                out.error = Some(e.to_string());
                server_died = Some(e);
            }
        }
        let step_id = rec.step(
            StepRecord {
                seq: 0,
                name: step.name.clone(),
                kind: Kind::Sql(step.kind),
                status: out.status,
                error: out.error.clone(),
                started_at: rfc3339(out.started),
                ended_at: rfc3339(out.ended),
                config: serde_json::json!({
                    "microbenchmark": step.kind.name(),
                    "threads": p.threads,
                    "duration_s": duration,
                    "warmup_s": warmup,
                    "tables": p.tables,
                    "table_size": p.table_size,
                    "range_size": p.range_size,
                    "distribution": distribution.to_string(),
                    "seed": plan.seed.to_string(),
                }),
                summary: out.summary.clone(),
            },
            &out.intervals,
        )?;
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
            Some(Err(why)) => eprintln!("plumb: no profile of step {}: {why}", step.name),
            None => {}
        }
        if let Some(e) = &out.error {
            eprintln!("plumb: step {} failed: {e}", step.name);
        }
        if out.status == StepStatus::Interrupted
            || interrupt.load(Ordering::Relaxed)
            || server_died.is_some()
            || (out.status == StepStatus::Failed && !out.verification_failed)
        {
            break;
        }
    }
    let mut status = rec.finish(interrupt.load(Ordering::Relaxed))?;
    if let Some(e) = server_died {
        eprintln!("plumb: error: run {run_id}: {e}\nplumb: finished steps are stored");
        status = status.worst(RunStatus::Failed);
    }
    let stored = store.run(run_id)?;
    observer.run_finished(&stored, store);
    Ok((run_id, status))
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
