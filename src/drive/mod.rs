//! The runs of the families the runner hands over (the sysbench microbenchmarks, the
//! insert benchmark, the probes and the durability trials, on servers, engines and the
//! host): one [`Driver`] that the lifecycle calls
//! for each such planned run, whoever planned it (`plumb sql`, `plumb ib`, a suite,
//! `plumb rerun`, a worker of a queue).

pub mod durability;
pub mod ib;
pub mod probe;
pub mod rated;
pub mod release;
pub mod server;
pub mod sql;

use anyhow::Context;
use plumb_core::RunStatus;
use plumb_plan::{Family, RunPlan, Subject};
use plumb_runner::{FamilyDriver, LifecycleError, Slot};

/// What a front end knows about its runs that no plan holds: a password, a fixed
/// port, a client group of `plumb sql`.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// The password of a URL server (never stored).
    pub password: Option<String>,
    /// A managed server's TCP port.
    pub port: Option<u16>,
    /// `plumb sql --client-group NAME --clients N`: meet the group's other clients at a
    /// barrier before each step and keep histograms.
    pub client_group: Option<(String, u32)>,
    /// Seconds a client waits at a barrier.
    pub barrier_timeout: f64,
}

/// The [`FamilyDriver`] of this binary.
pub struct Driver {
    /// The front end's extras.
    pub extras: Extras,
}

impl FamilyDriver for Driver {
    fn run(&mut self, plan: &RunPlan, slot: Slot<'_>) -> Result<(i64, RunStatus), LifecycleError> {
        let result = match (&plan.target.subject, &plan.workload.family) {
            // Another release of the engine: the plumb built against it runs the plan.
            _ if !plan.target.runs_in_this_build() => release::run(plan, slot),
            (Subject::Server(spec), Family::Sql(work)) => {
                sql::run(plan, spec, work, &self.extras, slot)
            }
            (_, Family::Ib(work)) => ib::run(plan, work, &self.extras, slot),
            (Subject::Host(h), Family::Probe(work)) => probe::run(plan, work, h.dir.clone(), slot),
            (_, Family::Durability(work)) => durability::run(plan, work, slot),
            (_, f) => Err(anyhow::anyhow!(
                "the {} workload does not run on target {:?}",
                f.name(),
                plan.target.name
            )),
        };
        result.map_err(|e| LifecycleError::Family {
            variant: plan.variant.clone(),
            message: format!("{e:#}"),
        })
    }
}

/// A memory limit for a run's target, when its plan asks for one; `name` makes the
/// cgroup's name unique.
pub fn memory_limit(
    plan: &RunPlan,
    name: &str,
) -> anyhow::Result<Option<plumb_host::cgroup::MemoryLimit>> {
    let Some(mb) = plan.target.memory_mb else {
        return Ok(None);
    };
    Ok(Some(plumb_host::cgroup::MemoryLimit::create(
        &format!("plumb-{}-{name}", std::process::id()),
        mb << 20,
    )?))
}

/// Moves a server's every process (the root and its descendants) into `limit`, so its
/// memory and page cache count against it; later children are born in it.
pub fn limit_tree(limit: &plumb_host::cgroup::MemoryLimit, root: u32) -> anyhow::Result<()> {
    let mut pids = vec![root];
    let mut i = 0;
    while i < pids.len() {
        let parent = pids[i];
        for e in std::fs::read_dir("/proc")?.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let ppid = std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|s| {
                    let after = s.rsplit_once(')')?.1.to_string();
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                });
            if ppid == Some(parent) && !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        i += 1;
    }
    for pid in pids {
        if let Err(e) = limit.add(pid) {
            // A short-lived child (a server's startup process) may be gone already.
            if std::path::Path::new(&format!("/proc/{pid}")).exists() {
                return Err(e.into());
            }
        }
    }
    Ok(())
}

/// A server started for one planned run: the server, plumb's choice of it (`None` for
/// a URL) and the plan's memory limit holding its processes.
pub struct Started<'a> {
    /// The running server.
    pub server: &'a mut server::Server,
    /// What plumb started (`None` for a URL).
    pub choice: Option<&'a plumb_sql::ServerChoice>,
    /// The cgroup its processes are in, when the plan limits memory.
    pub limit: Option<&'a plumb_host::cgroup::MemoryLimit>,
}

/// Starts the server `spec` names for `plan` (under `root`), moves it into the plan's
/// memory limit, runs `f` on it, and stops it whatever happened (keeping its data
/// directory with `keep`).
pub fn with_server<T>(
    plan: &RunPlan,
    spec: &plumb_plan::ServerSpec,
    extras: &Extras,
    (root, keep): (Option<std::path::PathBuf>, bool),
    f: impl FnOnce(Started<'_>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let place = server::Placement {
        dir: root,
        keep,
        port: extras.port,
    };
    let (mut server, choice) = server::start(spec, extras.password.as_deref(), &place)?;
    let limit = match memory_limit(plan, "server") {
        Ok(l) => l,
        Err(e) => {
            let _ = server.stop(false);
            return Err(e);
        }
    };
    if let (Some(l), (Some(pid), _)) = (&limit, server.local()) {
        if let Err(e) = limit_tree(l, pid) {
            let _ = server.stop(false);
            return Err(e.context("moving the server into its memory limit"));
        }
    }
    let result = f(Started {
        server: &mut server,
        choice: choice.as_ref(),
        limit: limit.as_ref(),
    });
    let stopped = server.stop(keep);
    drop(limit);
    let out = result?;
    stopped.context("the run is stored, but the server did not stop cleanly")?;
    Ok(out)
}

/// Begins a planned run in the store through [`plumb_runner::begin::begin_run`] (a
/// host snapshot, the device under its data, its place in the suite), joins its group
/// of repeats, and tells the observer it starts.
pub fn begin<'s>(
    store: &'s mut plumb_store::Store,
    header: RunHeader,
    plan: &RunPlan,
    group: Option<Option<i64>>,
    observer: &mut dyn plumb_runner::Observer,
    at: (usize, usize, f64),
) -> anyhow::Result<(
    plumb_runner::Recording<'s>,
    Option<plumb_probes::diskstats::DeviceStats>,
)> {
    let begun = plumb_runner::begin::begin_run(
        store,
        plumb_store::NewRun {
            engine: header.engine,
            engine_version: header.version,
            options: header.options,
            ..header.run
        },
        plan,
        plumb_runner::begin::DataPlace {
            dir: header.data_dir,
            ..Default::default()
        },
        Some(plumb_runner::begin::Announce {
            observer,
            at,
            group,
        }),
    )?;
    Ok((begun.rec, begun.disk))
}

/// The rate search of one step (`--rate-search`), its verdicts printed as it goes:
/// `probe` runs and stores one probe at a pace under its name; the families differ only
/// in that.
pub fn rate_search(
    name: &str,
    bound: &plumb_workloads::pace::LatencyBound,
    closed: &plumb_runner::StepOutcome,
    interrupt: &std::sync::atomic::AtomicBool,
    mut probe: impl FnMut(
        &str,
        plumb_workloads::pace::Pace,
    ) -> anyhow::Result<plumb_runner::StepOutcome>,
) -> anyhow::Result<Option<plumb_runner::search::Searched>> {
    use plumb_runner::search::{self, Ask};
    let stopped = || interrupt.load(std::sync::atomic::Ordering::Relaxed);
    search::run(name, bound, closed, &stopped, |ask| match ask {
        Ask::Note(line) => {
            eprintln!("plumb: {line}");
            Ok(None)
        }
        Ask::Probe(name, pace) => probe(name, pace).map(Some),
    })
}

/// Drops the page cache before a measured step when the plan's target asks for it
/// (`drop_caches`); a failure is said, and the step still runs.
pub fn maybe_drop_caches(plan: &RunPlan) {
    if plan.target.drop_caches {
        if let Err(e) = plumb_host::cgroup::drop_page_cache() {
            eprintln!("plumb: page cache not dropped: {e}");
        }
    }
}

/// Records the memory limit and the page-cache drops with the run's options, as the
/// lifecycle does for engine runs (compare warns when they differ).
pub fn record_limit(
    plan: &RunPlan,
    limit: Option<&plumb_host::cgroup::MemoryLimit>,
    options: &mut std::collections::BTreeMap<String, String>,
) {
    if let Some(l) = limit {
        options.insert("memory_limit_mb".into(), (l.bytes() >> 20).to_string());
    }
    if plan.target.drop_caches {
        options.insert("drop_caches".into(), "true".into());
    }
}

/// What the store is told when a driver of a family (sql, ib) begins a run, beside
/// the run row the lifecycle filled in.
pub struct RunHeader {
    /// The run row: provenance, suite, plan and its hash.
    pub run: plumb_store::NewRun,
    /// The engine label and its release.
    pub engine: String,
    /// The release.
    pub version: String,
    /// Every option and setting recorded with the run.
    pub options: std::collections::BTreeMap<String, String>,
    /// Where the data is, when plumb can see it.
    pub data_dir: Option<std::path::PathBuf>,
}
