//! One planned run of the insert benchmark, on a server started for it (or reached by
//! URL) or on an embedded engine opened in the run's own directory: each step run
//! through the lifecycle and stored as it ends, the row count checked after each, the
//! server stopped or the engine closed.

use crate::error::PrepareError;
use crate::kv::KvTable;
use crate::sql::{SqlEngine, SqlTable};
use crate::{run_ib_step, IbContext, IbStepConfig, IbTally, IbTarget};
use plumb_core::StepStatus;
use plumb_plan::{IbWork, RunPlan, ServerSpec, Subject as Target};
use plumb_runner::family::{Extras, Family, OwnDir};
use plumb_runner::{Header, Place, Steps, Subject};
use plumb_servers::managed::{self as server, Server};
use plumb_servers::{CounterReader, Protocol, StorageEngine};
use plumb_targets::EngineSpec;
use plumb_workloads::pace::{LatencyBound, Pace};
use plumb_workloads::{IbKind, Kind};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What the benchmark's table lives in for one run.
enum Held {
    /// An embedded engine this process opened.
    Engine(KvTable),
    /// A server's table, and the server (stopped at the end when plumb started it).
    Server(Box<(SqlTable, Server)>),
}

/// The insert benchmark's subject: its table, and what its steps carry.
struct IbSubject<'p> {
    plan: &'p RunPlan,
    work: &'p IbWork,
    held: Held,
    engine: String,
    version: String,
    options: BTreeMap<String, String>,
    data_dir: Option<PathBuf>,
    pid: Option<u32>,
    bound: Option<LatencyBound>,
    tally: IbTally,
    died: Option<String>,
}

fn open_embedded(spec: &EngineSpec, place: &Place<'_>) -> Result<(Held, Header), PrepareError> {
    spec.check_built_in().map_err(PrepareError::NotBuiltIn)?;
    let caps = spec.capabilities();
    if !caps.delete || !caps.stores_data {
        return Err(PrepareError::EngineUnfit {
            engine: spec.name().to_string(),
        });
    }
    let dir = place.dir.as_deref();
    let target = spec.open(dir).map_err(|source| PrepareError::Open {
        engine: spec.name().to_string(),
        dir: place.dir.clone(),
        source,
    })?;
    let mut options: BTreeMap<String, String> = target
        .options()
        .iter()
        .map(|(k, v)| (format!("engine.{k}"), v.clone()))
        .collect();
    options.insert("durability".into(), spec.durability().name().into());
    place.notes.note(&format!(
        "{} {}{}{}",
        spec.name(),
        spec.version(),
        dir.map(|d| format!(" in {}", d.display()))
            .unwrap_or_default(),
        if place.keep && dir.is_some() {
            " (kept after the run)"
        } else {
            ""
        }
    ));
    let header = Header {
        engine: spec.name().to_string(),
        version: spec.version(),
        options,
        place: plumb_runner::begin::DataPlace {
            dir: place.dir.clone(),
            ..Default::default()
        },
        ..Header::default()
    };
    Ok((Held::Engine(KvTable::new(target)), header))
}

fn start_server(
    plan: &RunPlan,
    spec: &ServerSpec,
    extras: &Extras,
    place: &Place<'_>,
) -> Result<(Held, Header), PrepareError> {
    let (server, choice) =
        server::start_for(plan, spec, extras, place).map_err(|e| PrepareError::Server(e.into()))?;
    let ep = server.endpoint().clone();
    let mut counters = CounterReader::connect(&ep)?;
    let id = server::identify(spec, &server, choice.as_ref(), &mut counters)
        .map_err(|e| PrepareError::Server(e.into()))?;
    let engine = match (ep.protocol, id.storage) {
        (Protocol::Postgres, _) => SqlEngine::Postgres,
        (_, Some(StorageEngine::RocksDb)) => SqlEngine::MyRocks,
        _ => SqlEngine::InnoDb,
    };
    let (pid, data_dir) = server.local();
    let mut options: BTreeMap<String, String> = BTreeMap::new();
    options.insert("cache_mb".into(), spec.cache_mb.to_string());
    server::record_settings(&server, &mut counters, id.storage, &mut options);
    drop(counters);
    let table = SqlTable {
        endpoint: ep,
        engine,
        pid,
        data_dir: data_dir.clone(),
    };
    let header = Header {
        engine: id.engine,
        version: id.version,
        options,
        place: plumb_runner::begin::DataPlace {
            dir: data_dir,
            ..Default::default()
        },
        pid,
        keep_histograms: false,
    };
    Ok((Held::Server(Box::new((table, server))), header))
}

impl IbSubject<'_> {
    fn table(&self) -> &dyn IbTarget {
        match &self.held {
            Held::Engine(t) => t,
            Held::Server(b) => &b.0,
        }
    }

    /// Step `i` as it runs under `name`, its queries at `query_pace`.
    fn config(&self, i: usize, name: &str, query_pace: Option<Pace>) -> IbStepConfig {
        let (p, step) = (&self.work.params, &self.work.steps[i]);
        let mut plan = step.clone();
        plan.name = name.to_string();
        IbStepConfig {
            index: i,
            plan,
            clients: p.clients,
            rows: p.rows_of(step),
            duration: Duration::from_secs_f64(p.duration),
            delete_per_insert: p.delete_per_insert,
            rows_per_query: p.rows_per_query,
            seed: self.plan.seed,
            query_pace,
            perf_groups: p.perf_groups,
            wait_hz: p.wait_hz,
        }
    }

    /// What is stored of step `cfg` as its config: its knobs and its open-loop query
    /// rate.
    fn stored_config(&self, cfg: &IbStepConfig) -> serde_json::Value {
        let (p, step) = (&self.work.params, &self.work.steps[cfg.index]);
        let mut config = serde_json::json!({
            "step": step.name,
            "rows_per_commit": step.rows_per_commit,
            "rate_per_client": step.rate,
            "clients": p.clients,
            "duration_s": p.duration,
            "delete_per_insert": p.delete_per_insert,
            "rows_per_query": p.rows_per_query,
            "seed": self.plan.seed.to_string(),
            "rows": cfg.rows,
        });
        if let Some(q) = &cfg.query_pace {
            config["query_rate"] = q.ops_per_sec.into();
            config["arrivals"] = q.arrivals.to_string().into();
            if let Some(profile) = &q.profile {
                config["query_rate_profile"] = profile.to_string().into();
            }
        }
        config
    }
}

impl Subject for IbSubject<'_> {
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
            keep_histograms: false,
        })
    }

    fn begun(&mut self, steps: &mut Steps<'_, '_>) -> plumb_runner::FamilyResult<()> {
        let p = &self.work.params;
        steps.notes.note(&format!(
            "run {}: insert benchmark on {} {}, {} rows, {} client{}, seed {}",
            steps.run_id,
            self.engine,
            self.version,
            p.rows,
            p.clients,
            if p.clients == 1 { "" } else { "s" },
            self.plan.seed
        ));
        Ok(())
    }

    fn steps(&self) -> Vec<String> {
        self.work.steps.iter().map(|s| s.name.clone()).collect()
    }

    fn run_at(
        &mut self,
        i: usize,
        name: &str,
        pace: Option<Pace>,
        steps: &mut Steps<'_, '_>,
    ) -> plumb_runner::FamilyResult<plumb_runner::StepOutcome> {
        let cfg = self.config(i, name, pace.or_else(|| self.work.params.query_pace()));
        let mut tally = std::mem::take(&mut self.tally);
        let result = run_ib_step(
            &mut IbContext {
                target: self.table(),
                disk: steps.disk,
                interrupt: steps.interrupt,
                progress: steps.notes,
                tally: &mut tally,
            },
            &cfg,
        );
        self.tally = tally;
        let mut out = result.outcome;
        if out.status == StepStatus::Failed && !out.verification_failed {
            if let Held::Server(b) = &mut self.held {
                if let Some(e) = b.1.died(name) {
                    out.error = Some(e.to_string());
                    self.died = Some(e.to_string());
                }
            }
        }
        let mut config = self.stored_config(&cfg);
        if let Some(did) = result.note.as_deref() {
            config["did"] = did.into();
        }
        steps.store(name, Kind::Ib(cfg.plan.kind), &out, config)?;
        Ok(out)
    }

    fn search_bound(&self, i: usize) -> Option<LatencyBound> {
        let queries = matches!(
            self.work.steps[i].kind,
            IbKind::RangeQueries | IbKind::PointQueries
        );
        self.bound.filter(|_| queries)
    }

    fn recorded(
        &self,
        i: usize,
        name: &str,
        pace: Option<Pace>,
    ) -> Option<(Kind, serde_json::Value)> {
        let cfg = self.config(i, name, pace);
        Some((Kind::Ib(cfg.plan.kind), self.stored_config(&cfg)))
    }

    fn died(&self) -> Option<String> {
        self.died.clone()
    }

    fn close(&mut self, keep: bool) -> plumb_runner::FamilyResult<Option<PathBuf>> {
        match &mut self.held {
            Held::Server(b) => Ok(b.1.stop(keep)?),
            Held::Engine(_) => Ok(None),
        }
    }
}

/// The insert benchmark on a server or an embedded engine, as the binary's table of
/// families registers it.
pub struct IbFamily;

impl Family for IbFamily {
    fn takes(&self, plan: &RunPlan) -> bool {
        matches!(plan.workload.family, plumb_plan::Family::Ib(_))
    }

    fn own_dir(&self, plan: &RunPlan) -> Option<OwnDir> {
        match &plan.target.subject {
            Target::Engine(spec) if spec.capabilities().keeps_files => Some(OwnDir {
                prefix: format!("ib-{}", spec.name()),
                default_root: PathBuf::from("/var/tmp"),
            }),
            _ => None,
        }
    }

    fn prepare<'p>(
        &self,
        plan: &'p RunPlan,
        extras: &'p Extras,
        place: &Place<'_>,
    ) -> plumb_runner::FamilyResult<Box<dyn Subject + 'p>> {
        let plumb_plan::Family::Ib(work) = &plan.workload.family else {
            return Err(plumb_runner::failure::NotMine::of(plan, "insert benchmark").into());
        };
        let p = &work.params;
        p.validate().map_err(|e| PrepareError::Param {
            key: e.key,
            message: e.message,
        })?;
        let bound = p
            .rate_search
            .as_deref()
            .map(str::parse::<LatencyBound>)
            .transpose()
            .map_err(|why| PrepareError::RateSearch { why })?;
        let (held, header) = match &plan.target.subject {
            Target::Engine(spec) => open_embedded(spec, place)?,
            Target::Server(spec) => start_server(plan, spec, extras, place)?,
            Target::Host(_) => return Err(PrepareError::NotATable.into()),
        };
        let mut options = header.options;
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
        Ok(Box::new(IbSubject {
            plan,
            work,
            held,
            engine: header.engine,
            version: header.version,
            options,
            data_dir: header.place.dir,
            pid: header.pid,
            bound,
            tally: IbTally::default(),
            died: None,
        }))
    }
}
