//! One planned run of the SQL family (sysbench's microbenchmarks, TPROC-C, pgbench,
//! YCSB, Lua scripts): a fresh server of the plan's release and config (or the plan's
//! URL), its identity and settings recorded, each step run through the lifecycle and
//! stored as it ends, the server stopped.

use crate::error::RunError;
use crate::{run_sql_step, Shape, SqlContext, SqlStepConfig};
use plumb_core::StepStatus;
use plumb_plan::{RunPlan, ServerSpec, SqlWork};
use plumb_runner::failure::chain;
use plumb_runner::family::{Extras, Family};
use plumb_runner::{Header, Place, Steps, Subject};
use plumb_servers::managed::{self as server, Server};
use plumb_servers::{CounterReader, Endpoint, Protocol};
use plumb_store::{Store, StoreError};
use plumb_workloads::pace::{LatencyBound, Pace};
use plumb_workloads::{Distribution, Kind, SqlKind};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A server started (or reached) for one run, with what its steps carry.
struct SqlSubject<'p> {
    plan: &'p RunPlan,
    work: &'p SqlWork,
    extras: &'p Extras,
    server: Server,
    ep: Endpoint,
    counters: CounterReader,
    engine: String,
    version: String,
    pid: Option<u32>,
    data_dir: Option<PathBuf>,
    options: BTreeMap<String, String>,
    shape: Shape,
    distribution: Distribution,
    pace: Option<Pace>,
    bound: Option<LatencyBound>,
    /// Every loaded id exists: a database plumb did not just load may have lost rows.
    all_present: bool,
    ycsb: crate::run::YcsbState,
    died: Option<String>,
    ceilings: Vec<plumb_store::Ceiling>,
    /// The faults of each measured step.
    faults: Option<plumb_workloads::FaultPlan>,
}

/// Starts (or reaches) the plan's server and reads what it is: nothing is stored yet.
fn prepare<'p>(
    plan: &'p RunPlan,
    spec: &'p ServerSpec,
    work: &'p SqlWork,
    extras: &'p Extras,
    place: &Place<'_>,
) -> Result<SqlSubject<'p>, RunError> {
    let p = &work.params;
    let distribution = p.validate()?;
    let (pace, bound) = plumb_plan::pace_of(
        p.rate,
        p.rate_profile.as_deref(),
        p.arrivals,
        p.rate_search.as_deref(),
    )?;
    let faults = p.faults().map_err(|message| RunError::Param {
        key: "fault",
        message,
    })?;
    if let Some(f) = &faults {
        if let Some(why) = f
            .specs
            .iter()
            .find_map(|s| plumb_servers::faults::refuse(&s.kind))
        {
            return Err(RunError::Param {
                key: "fault",
                message: why,
            });
        }
    }
    let (server, choice) = server::start_for(plan, spec, extras, place)?;
    if faults.is_some() && matches!(server, Server::External(_)) {
        return Err(RunError::Param {
            key: "fault",
            message: "faults need a server plumb starts (it kills and restarts it): drop --url"
                .into(),
        });
    }
    let ep = server.endpoint().clone();
    let mut counters = CounterReader::connect(&ep)?;
    let id = server::identify(spec, &server, choice.as_ref(), &mut counters)?;
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
        return Err(RunError::NoSysbenchTables {
            tables: p.tables,
            url: ep.redacted_url(),
        });
    }
    let (pid, data_dir) = server.local();
    let mut options: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in [
        ("server", id.engine.clone()),
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
    server::record_settings(&server, &mut counters, id.storage, &mut options);
    let mut shape = Shape {
        tables: p.tables,
        table_size: p.table_size,
        range_size: p.range_size,
        engine_clause,
        postgres: ep.protocol == Protocol::Postgres,
        scale: p.scale,
        warehouses: p.warehouses,
        spec_timing: p.spec_timing,
        ycsb_records: p.recordcount,
        ycsb_props: p.ycsb_props()?,
        scripts: script_step(p, steps)?,
        lua: lua_step(p, steps, id.storage.map(|e| e.sql_name()))?,
    };
    // pgbench's steps without pgbench-load run on tables made before (by `pgbench -i`
    // or an earlier run): their scale is read from them, as pgbench reads it.
    let pgbench_steps = steps
        .iter()
        .any(|s| s.kind.tables() == plumb_workloads::SqlTables::Pgbench)
        || shape.scripts.as_ref().is_some_and(|s| s.has_builtin());
    if pgbench_steps && !steps.iter().any(|s| s.kind == SqlKind::PgbenchLoad) {
        shape.scale = crate::pgbench::scale_of(ep.connect()?.as_mut())
            .map_err(|cause| RunError::NoPgbenchTables { cause })?;
    }
    Ok(SqlSubject {
        plan,
        work,
        extras,
        server,
        ep,
        counters,
        engine: id.engine,
        version: id.version,
        pid,
        data_dir,
        options,
        shape,
        distribution,
        pace,
        bound,
        all_present: false,
        ycsb: crate::run::YcsbState::default(),
        died: None,
        ceilings: Vec::new(),
        faults,
    })
}

impl SqlSubject<'_> {
    /// Step `i` as it runs under `name` at `pace`.
    fn config(&self, i: usize, name: &str, pace: Option<Pace>) -> SqlStepConfig {
        let (p, step) = (&self.work.params, &self.work.steps[i]);
        let mut plan = step.clone();
        plan.name = name.to_string();
        SqlStepConfig {
            index: i,
            plan,
            threads: p.threads_of(step),
            clients: p.clients_of(step),
            duration: Duration::from_secs_f64(p.duration_of(step)),
            warmup: Duration::from_secs_f64(p.warmup_of(step)),
            seed: self.plan.seed,
            shape: self.shape.clone(),
            distribution: self.distribution,
            pace,
            perf_groups: p.perf_groups,
            wait_hz: p.wait_hz,
            faults: self.faults.clone(),
        }
    }

    /// What is stored of step `cfg` as its config: its knobs, what ran (a script's
    /// name, weight and hash; the texts are in the run's plan), its pace.
    fn stored_config(&self, cfg: &SqlStepConfig) -> serde_json::Value {
        let (p, step) = (&self.work.params, &self.work.steps[cfg.index]);
        let mut config = serde_json::json!({
            "microbenchmark": step.kind.name(),
            "threads": cfg.threads,
            "duration_s": p.duration_of(step),
            "warmup_s": p.warmup_of(step),
            "tables": p.tables,
            "table_size": p.table_size,
            "range_size": p.range_size,
            "distribution": self.distribution.to_string(),
            "seed": self.plan.seed.to_string(),
        });
        if let (SqlKind::Script, Some(s)) = (step.kind, &self.shape.scripts) {
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
            config["scale"] = self.shape.scale.into();
        }
        if let (plumb_workloads::SqlTables::Lua, Some(l)) = (step.kind.tables(), &self.shape.lua) {
            config["lua"] = l
                .sources
                .iter()
                .map(|s| serde_json::json!({"name": s.name, "sha256": s.sha256}))
                .collect();
            if !p.lua_opt.is_empty() {
                config["lua_opt"] = p.lua_opt.clone().into();
            }
        }
        if let Some(f) = cfg.faults.as_ref().filter(|_| !step.kind.is_load()) {
            config["faults"] = f.specs.iter().map(ToString::to_string).collect();
            config["fault_timeout_s"] = f.timeout.into();
        }
        if let Some(pace) = &cfg.pace {
            config["rate"] = pace.ops_per_sec.into();
            config["arrivals"] = pace.arrivals.to_string().into();
            if let Some(profile) = &pace.profile {
                config["rate_profile"] = profile.to_string().into();
            }
        }
        config
    }

    /// Runs one step's configuration and stores it; a failed step may be the first
    /// sign of a dying server.
    fn run_and_store(
        &mut self,
        cfg: &SqlStepConfig,
        steps: &mut Steps<'_, '_>,
    ) -> Result<plumb_runner::StepOutcome, StoreError> {
        let injector = match &mut self.server {
            Server::Managed(m) if cfg.faults.is_some() && !cfg.plan.kind.is_load() => {
                Some(plumb_servers::faults::ServerFaults::new(m))
            }
            _ => None,
        };
        let faulted = injector.is_some();
        let mut ctx = SqlContext {
            faults: injector
                .as_ref()
                .map(|i| i as &dyn plumb_runner::kernel::Injector),
            endpoint: &self.ep,
            server_pid: self.pid,
            data_dir: self.data_dir.as_deref(),
            disk: steps.disk,
            counters: &mut self.counters,
            interrupt: steps.interrupt,
            progress: steps.notes,
            all_present: &mut self.all_present,
            profile: steps.profile,
            ycsb: &mut self.ycsb,
        };
        let mut out = run_sql_step(&mut ctx, cfg);
        if faulted {
            // The server restarted under new processes, and the counters' connection
            // went with the old ones.
            if let Server::Managed(m) = &self.server {
                self.pid = Some(m.pid);
            }
            match CounterReader::connect(&self.ep) {
                Ok(c) => self.counters = c,
                Err(e) if out.error.is_none() => {
                    out.status = StepStatus::Failed;
                    out.error = Some(format!(
                        "reconnecting the server's counters after its faults: {e}"
                    ));
                }
                Err(_) => {}
            }
        }
        if out.status == StepStatus::Failed {
            if let Some(e) = self.server.died(&cfg.plan.name) {
                out.error = Some(e.to_string());
                self.died = Some(e.to_string());
            }
        }
        let config = self.stored_config(cfg);
        steps.store(&cfg.plan.name, Kind::Sql(cfg.plan.kind), &out, config)?;
        Ok(out)
    }
}

impl Subject for SqlSubject<'_> {
    fn header(&mut self) -> plumb_runner::FamilyResult<Header> {
        Ok(Header {
            engine: self.engine.clone(),
            version: self.version.clone(),
            options: std::mem::take(&mut self.options),
            place: plumb_runner::begin::DataPlace {
                dir: self.data_dir.clone(),
                ..Default::default()
            },
            pid: self.pid,
            keep_histograms: self.extras.client_group.is_some(),
        })
    }

    fn begun(&mut self, steps: &mut Steps<'_, '_>) -> plumb_runner::FamilyResult<()> {
        if let Some((g, _)) = &self.extras.client_group {
            let run_id = steps.run_id;
            steps.store_mut().set_client_group(run_id, g)?;
        }
        let p = &self.work.params;
        steps.notes.note(&format!(
            "run {}: {} {}, {} × {} rows, {} threads, seed {}",
            steps.run_id,
            self.engine,
            self.version,
            p.tables,
            p.table_size,
            p.threads,
            self.plan.seed
        ));
        Ok(())
    }

    fn steps(&self) -> Vec<String> {
        self.work.steps.iter().map(|s| s.name.clone()).collect()
    }

    fn drops_caches_before(&self, i: usize) -> bool {
        i > 0 && !self.work.steps[i].kind.is_load()
    }

    fn run_at(
        &mut self,
        i: usize,
        name: &str,
        pace: Option<Pace>,
        steps: &mut Steps<'_, '_>,
    ) -> plumb_runner::FamilyResult<plumb_runner::StepOutcome> {
        let step = &self.work.steps[i];
        let planned = pace.is_none();
        let cfg = self.config(i, name, pace.or_else(|| self.pace.clone()));
        if let (true, Some((g, n))) = (planned, &self.extras.client_group) {
            let interrupt = steps.interrupt;
            let place = barrier(
                steps.store_mut(),
                g,
                i,
                *n,
                self.extras.barrier_timeout,
                interrupt,
            )?;
            steps.notes.note(&format!(
                "client group {g}: step {}: all {n} clients here (arrived {})",
                step.name,
                place + 1
            ));
        }
        if step.kind != SqlKind::CachedSelect {
            return Ok(self.run_and_store(&cfg, steps)?);
        }
        // The cached-SELECT ceiling: the step at each client count up to the threads.
        let hw = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut last = None;
        for c in crate::ceiling::clients(self.work.params.threads, hw) {
            let mut at = cfg.clone();
            at.threads = c;
            at.plan.name = format!("{name}.c{c}");
            let out = self.run_and_store(&at, steps)?;
            if out.status == StepStatus::Ok {
                self.ceilings
                    .extend(cached_select_ceilings(&self.engine, c, &out.summary));
            }
            let stop = out.status != StepStatus::Ok || steps.interrupt.load(Ordering::Relaxed);
            last = Some(out);
            if stop {
                break;
            }
        }
        Ok(last.expect("clients() is never empty"))
    }

    fn search_bound(&self, i: usize) -> Option<LatencyBound> {
        let kind = self.work.steps[i].kind;
        self.bound
            .filter(|_| !kind.is_load() && kind != SqlKind::CachedSelect)
    }

    fn recorded(
        &self,
        i: usize,
        name: &str,
        pace: Option<Pace>,
    ) -> Option<(Kind, serde_json::Value)> {
        let cfg = self.config(i, name, pace);
        Some((Kind::Sql(cfg.plan.kind), self.stored_config(&cfg)))
    }

    fn died(&self) -> Option<String> {
        self.died.clone()
    }

    fn finish(
        &mut self,
        steps: &mut Steps<'_, '_>,
        host: &plumb_host::HostSnapshot,
    ) -> plumb_runner::FamilyResult<()> {
        if self.ceilings.is_empty() {
            return Ok(());
        }
        let host = host
            .inventory
            .hostname
            .clone()
            .unwrap_or_else(|| "unknown".into());
        add_max(&mut self.ceilings);
        let run_id = steps.run_id;
        steps.store_mut().add_ceilings(
            run_id,
            &host,
            &plumb_runner::lifecycle::now(),
            &self.ceilings,
        )?;
        steps.notes.note(&format!(
            "run {run_id}: cached-SELECT ceiling of {} on {host}: {}",
            self.engine,
            self.ceilings
                .iter()
                .map(|c| format!("{} {:.0} {}", c.name, c.value, c.unit))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        Ok(())
    }

    fn close(&mut self, keep: bool) -> plumb_runner::FamilyResult<Option<PathBuf>> {
        Ok(self.server.stop(keep)?)
    }
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

/// Waits for the other clients of the group before step `index`.
fn barrier(
    store: &Store,
    group: &str,
    index: usize,
    n: u32,
    timeout: f64,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<i64, StoreError> {
    store.barrier(
        &format!("{group}/{index}"),
        i64::from(n),
        Duration::from_secs_f64(timeout),
        interrupt,
    )
}

/// The SQL family (sysbench's microbenchmarks, TPROC-C, pgbench, YCSB) on a server,
/// as the binary's table of families registers it.
pub struct SqlFamily;

impl Family for SqlFamily {
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
        script_step(&w.params, &w.steps).map_err(|e| chain(&e))?;
        lua_step(&w.params, &w.steps, None).map_err(|e| chain(&e))?;
        Ok(())
    }

    fn prepare<'p>(
        &self,
        plan: &'p RunPlan,
        extras: &'p Extras,
        place: &Place<'_>,
    ) -> plumb_runner::FamilyResult<Box<dyn Subject + 'p>> {
        let (plumb_plan::Subject::Server(spec), plumb_plan::Family::Sql(work)) =
            (&plan.target.subject, &plan.workload.family)
        else {
            return Err(plumb_runner::failure::NotMine::of(plan, "sql").into());
        };
        Ok(Box::new(prepare(plan, spec, work, extras, place)?))
    }
}

/// The script step's scripts, when the run has one: the files read when the run was
/// planned (kept in its plan), then the built-ins.
fn script_step(
    p: &plumb_plan::SqlParams,
    steps: &[plumb_workloads::SqlStepPlan],
) -> Result<Option<crate::pgscript::ScriptStep>, RunError> {
    if !steps.iter().any(|s| s.kind == SqlKind::Script) {
        return Ok(None);
    }
    if p.scripts.len() != p.script.len() {
        return Err(RunError::ScriptsUnread {
            named: p.script.len(),
            read: p.scripts.len(),
        });
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
) -> Result<Option<crate::lua::LuaStep>, RunError> {
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
        return Err(RunError::LuaUnread);
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
