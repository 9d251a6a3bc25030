//! The targets and modes `plumb durability` tries, from what it was asked: every
//! engine of this build that keeps files (in the modes each offers) or those named,
//! and the servers named, each as a planned run the one lifecycle runs.

use plumb_plan::durability::engine_in_mode;
use plumb_plan::{
    DurabilityMode, DurabilityParams, DurabilityWork, Family, RunPlan, ServerSpec, TargetPlan,
    WorkloadPlan,
};
use plumb_targets::EngineSpec;

/// A request that cannot run; the text names the flag and what to give.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// The engines `--kv` names, each with the modes it runs: with `all`, every engine of
/// this build that keeps files, in the modes it offers (SplinterDB cannot sync; only
/// RocksDB has a log to turn off); named engines are held to the modes asked.
fn engines(
    kv: &str,
    modes: &[DurabilityMode],
) -> Result<Vec<(TargetPlan, Vec<DurabilityMode>)>, Refused> {
    let all = kv == "all";
    let names: Vec<String> = match kv {
        "none" => Vec::new(),
        "all" => plumb_targets::engines()
            .into_iter()
            .filter(|n| {
                EngineSpec::default_for(n)
                    .is_ok_and(|s| plumb_plan::durability::engine_keeps_writes(&s))
            })
            .map(str::to_string)
            .collect(),
        list => list.split(',').map(|s| s.trim().to_string()).collect(),
    };
    let mut out = Vec::new();
    for name in names {
        let spec = EngineSpec::default_for(&name).map_err(|e| {
            Refused(format!(
                "--kv {name:?}: {e}; this build runs {}",
                plumb_targets::engines().join(", ")
            ))
        })?;
        spec.check_built_in()
            .map_err(|e| Refused(format!("--kv {name}: {e}")))?;
        let caps = spec.capabilities();
        let offered = |m: DurabilityMode| match m {
            DurabilityMode::Sync => caps.can_sync,
            DurabilityMode::Unlogged => caps.wal,
            DurabilityMode::NoSync => true,
        };
        let mine: Vec<DurabilityMode> = modes
            .iter()
            .copied()
            .filter(|&m| !all || offered(m))
            .collect();
        for &m in &mine {
            engine_in_mode(&spec, m).map_err(|why| Refused(format!("--kv {name}: {why}")))?;
        }
        if mine.is_empty() {
            continue;
        }
        out.push((TargetPlan::engine(name, spec), mine));
    }
    Ok(out)
}

/// The servers `--server` names, as the plan holds them: postgres[@MAJOR], or MariaDB
/// with InnoDB or MyRocks, started with a 256 MiB cache.
fn servers(labels: &[String], modes: &[DurabilityMode]) -> Result<Vec<TargetPlan>, Refused> {
    let mut out = Vec::new();
    for label in labels.iter().flat_map(|s| s.split(',')).map(str::trim) {
        let (server, engine) = match label {
            "innodb" => ("mariadb", Some("innodb")),
            "myrocks" => ("mariadb", Some("rocksdb")),
            other => (other, None),
        };
        let bad = |e: String| {
            Refused(format!(
                "--server {label}: {e}; use postgres[@MAJOR], innodb or myrocks"
            ))
        };
        if engine.is_none() {
            plumb_servers::ServerChoice::parse(server, None, None)
                .map_err(|e| bad(e.to_string()))?;
        }
        let spec = ServerSpec {
            server: server.to_string(),
            engine: engine.map(str::to_string),
            basedir: None,
            config: None,
            waldir: None,
            ram_sized: false,
            cache_mb: 256,
            url: None,
        };
        spec.validate()
            .map_err(|e| bad(format!("{}: {}", e.key, e.message)))?;
        if modes.contains(&DurabilityMode::Unlogged) {
            return Err(Refused(
                "--modes unlogged: servers always log; use sync or nosync with --server".into(),
            ));
        }
        out.push(TargetPlan::server(label, spec));
    }
    Ok(out)
}

/// What `plumb durability` is asked to try: the engines (`all`, `none` or a list),
/// the servers, the modes and the trial's parameters.
#[derive(Debug, Clone)]
pub struct Asked<'a> {
    /// `--kv`.
    pub kv: &'a str,
    /// `--server`, each a comma-separated list.
    pub servers: &'a [String],
    /// `--modes`.
    pub modes: &'a str,
    /// The trials' parameters.
    pub params: &'a DurabilityParams,
    /// The seed of every run.
    pub seed: u64,
}

/// The planned runs of the flags, every one checked: nothing runs on bad input.
pub fn plans(a: &Asked<'_>) -> Result<Vec<RunPlan>, Refused> {
    let modes =
        DurabilityMode::parse_list(a.modes).map_err(|e| Refused(format!("--modes: {e}")))?;
    let cuts = a
        .params
        .validate()
        .map_err(|e| Refused(format!("--{}: {}", e.key.replace('_', "-"), e.message)))?;
    if cuts.contains(&plumb_plan::Cut::Flakey) {
        crate::flakey::available().map_err(Refused)?;
    }
    let servers_named = a.servers.iter().any(|s| !s.trim().is_empty());
    if let Some(c) = cuts.iter().find(|c| c.crash_points().is_some()) {
        if servers_named {
            return Err(Refused(format!(
                "--cut {}: crash points run on embedded engines; give --server kill, power or torn",
                c.flag()
            )));
        }
    }
    let engines = engines(a.kv, &modes)?;
    let servers = servers(a.servers, &modes)?;
    if engines.is_empty() && servers.is_empty() {
        return Err(Refused(format!(
            "--kv {}: name at least one --server",
            a.kv
        )));
    }
    let seed = a.seed;
    let plan = |target: TargetPlan, modes: Vec<DurabilityMode>| {
        let work = WorkloadPlan {
            name: "durability".into(),
            family: Family::Durability(DurabilityWork {
                modes,
                params: a.params.clone(),
            }),
        };
        RunPlan::single("durability", target, work, seed)
    };
    Ok(engines
        .into_iter()
        .chain(servers.into_iter().map(|t| (t, modes.clone())))
        .map(|(t, modes)| plan(t, modes))
        .collect())
}
