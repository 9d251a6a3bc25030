//! The database server a run measures, for the sysbench microbenchmarks and the
//! insert benchmark alike: starting a managed one from a plan's [`ServerSpec`] (or
//! reaching one by URL), what it is called in the store, and how it is set.

use crate::{CounterReader, Endpoint, Managed, Protocol, ServerChoice, SqlError, StartOptions};
use plumb_plan::{RunPlan, ServerSpec};
use std::path::PathBuf;

/// The server a run measures: started by plumb, or someone else's.
pub enum Server {
    /// Started (and stopped) by plumb.
    Managed(Box<Managed>),
    /// Given by `--url`.
    External(Endpoint),
}

impl Server {
    /// Where clients connect.
    pub fn endpoint(&self) -> &Endpoint {
        match self {
            Server::Managed(m) => &m.endpoint,
            Server::External(e) => e,
        }
    }

    /// The root pid and data directory, when plumb started it.
    pub fn local(&self) -> (Option<u32>, Option<PathBuf>) {
        match self {
            Server::Managed(m) => (Some(m.pid), Some(m.data_dir.clone())),
            Server::External(_) => (None, None),
        }
    }

    /// Stops a managed server; returns where its files stay with `keep`, for the
    /// caller to say.
    pub fn stop(&mut self, keep: bool) -> Result<Option<PathBuf>, crate::SqlError> {
        match self {
            Server::Managed(m) => {
                m.stop()?;
                Ok(keep.then(|| m.root.clone()))
            }
            Server::External(_) => Ok(None),
        }
    }

    /// After a failed step: whether a managed server died, as the error to report.
    pub fn died(&mut self, step: &str) -> Option<crate::SqlError> {
        match self {
            Server::Managed(m) => {
                std::thread::sleep(std::time::Duration::from_millis(300));
                (!m.alive()).then(|| m.error(format!("the server died during step {step}")))
            }
            Server::External(_) => None,
        }
    }
}

/// The release a server reports, as compare labels it: `15.20 (Debian 15.20-0+deb12u1)`
/// is 15.20, `10.11.19-MariaDB-0+deb12u1` is 10.11.19.
pub fn version_label(v: &str) -> String {
    v.split(|c: char| c.is_whitespace() || c == '-')
        .next()
        .unwrap_or("")
        .to_string()
}

/// Where and how a managed server is started, beside its spec.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// Where its directory is made [default: /var/tmp].
    pub dir: Option<PathBuf>,
    /// Keep its data directory after the run.
    pub keep: bool,
    /// Its TCP port [default: a free one].
    pub port: Option<u16>,
    /// The RAM it has, MiB (the plan's memory limit, else the host's), when its memory is
    /// sized from RAM (`ram_sized`).
    pub ram_mb: Option<u64>,
}

/// The password of a URL server: the one given on the command line, else the
/// environment's (PLUMB_URL_PASSWORD, then PGPASSWORD or MYSQL_PWD by protocol). Never
/// part of a plan.
fn url_password(ep: &Endpoint, given: Option<&str>) -> Option<String> {
    if let Some(p) = given {
        return Some(p.to_string());
    }
    let by_protocol = match ep.protocol {
        Protocol::Postgres => "PGPASSWORD",
        Protocol::MySql => "MYSQL_PWD",
    };
    ["PLUMB_URL_PASSWORD", by_protocol]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

/// Starts the managed server `spec` asks for, or reaches its URL, telling `notes` what
/// it started and what a killed plumb left that it cleared first.
pub fn start(
    spec: &ServerSpec,
    password: Option<&str>,
    at: &Placement,
    notes: &dyn plumb_runner::Progress,
) -> Result<(Server, Option<ServerChoice>), SqlError> {
    if let Some(url) = &spec.url {
        let mut ep = Endpoint::parse_url(url)?;
        if ep.password.is_none() {
            ep.password = url_password(&ep, password);
        }
        return Ok((Server::External(ep), None));
    }
    let c = ServerChoice::parse(&spec.server, spec.engine.as_deref(), spec.basedir.clone())?;
    notes.note(&format!("starting {} …", c.engine_label()));
    let m = Managed::start(
        &c,
        &StartOptions {
            dir: at.dir.clone(),
            keep: at.keep,
            port: at.port,
            cache_mb: spec.cache_mb,
            config: spec.config.clone(),
            waldir: spec.waldir.clone(),
            ram_mb: at.ram_mb,
        },
    )?;
    for gone in &m.swept {
        notes.note(&format!(
            "removed {} and stopped its server, left by a plumb that was killed",
            gone.display()
        ));
    }
    notes.note(&format!(
        "{} {} pid {} in {}{}",
        c.flavor.name(),
        m.version,
        m.pid,
        m.root.display(),
        if at.keep { " (kept after the run)" } else { "" }
    ));
    Ok((Server::Managed(Box::new(m)), Some(c)))
}

/// What a server is called in the store: its engine label (`postgres`,
/// `mariadb-innodb` …), its release, and the storage engine it puts tables in.
pub struct Identity {
    /// The engine label.
    pub engine: String,
    /// The release, as compare labels it.
    pub version: String,
    /// The storage engine of a MySQL-protocol server.
    pub storage: Option<crate::StorageEngine>,
}

/// Names the server: from plumb's own choice when it started it, from the server's
/// settings (and `--engine`) when it was given by URL.
pub fn identify(
    spec: &ServerSpec,
    server: &Server,
    choice: Option<&ServerChoice>,
    counters: &mut CounterReader,
) -> Result<Identity, SqlError> {
    let ep = server.endpoint();
    if let (Some(c), Server::Managed(m)) = (choice, server) {
        return Ok(Identity {
            engine: c.engine_label(),
            version: version_label(&m.version),
            storage: (ep.protocol == Protocol::MySql).then_some(c.engine),
        });
    }
    let settings = counters.settings();
    let get = |k: &str| {
        settings
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // --engine is checked as for a managed server of the same protocol.
    let flavor = match ep.protocol {
        Protocol::Postgres => "postgres",
        Protocol::MySql => "mariadb",
    };
    let c = ServerChoice::parse(flavor, spec.engine.as_deref(), None)?;
    let version = match ep.protocol {
        Protocol::Postgres => get("server_version"),
        Protocol::MySql => get("version"),
    };
    Ok(Identity {
        engine: c.engine_label(),
        version: version_label(&version),
        storage: (ep.protocol == Protocol::MySql).then_some(c.engine),
    })
}

/// What an acknowledged commit survives on this server, from its settings as stored
/// (`server.setting.*`), in the names compare's durability warning uses: `synced` when
/// every commit flushes its log (PostgreSQL fsync with synchronous_commit not off;
/// InnoDB or MyRocks flush_log_at_trx_commit = 1), else `os-buffered`.
pub fn durability(
    options: &std::collections::BTreeMap<String, String>,
    storage: Option<crate::StorageEngine>,
) -> &'static str {
    let get = |k: &str| {
        options
            .get(&format!("server.setting.{k}"))
            .map(|v| v.to_ascii_lowercase())
    };
    let synced = match storage {
        None => {
            get("fsync").as_deref() == Some("on")
                && get("synchronous_commit").is_some_and(|v| v != "off")
        }
        Some(crate::StorageEngine::InnoDb) => {
            get("innodb_flush_log_at_trx_commit").as_deref() == Some("1")
        }
        Some(crate::StorageEngine::RocksDb) => {
            get("rocksdb_flush_log_at_trx_commit").as_deref() == Some("1")
        }
    };
    if synced {
        "synced"
    } else {
        "os-buffered"
    }
}

/// Records what the server is and how it is set: its URL (without password), plumb's
/// config for a managed one, every setting, and the durability they give.
pub fn record_settings(
    server: &Server,
    counters: &mut CounterReader,
    storage: Option<crate::StorageEngine>,
    options: &mut std::collections::BTreeMap<String, String>,
) {
    options.insert("server.url".into(), server.endpoint().redacted_url());
    if let Server::Managed(m) = server {
        options.insert("server.config".into(), m.config_text.clone());
        // Which build ran (seed 002 names each of its builds): the binary and its GNU
        // build id, so two packages of one release are told apart.
        let exe = std::path::PathBuf::from(format!("/proc/{}/exe", m.pid));
        if let Ok(path) = std::fs::read_link(&exe) {
            options.insert("server.binary".into(), path.display().to_string());
        }
        if let Some(id) = plumb_probes::build_id::gnu_build_id(&exe) {
            options.insert("server.build_id".into(), id);
        }
        // Where the write-ahead log went, and on which device: the step's device figures
        // are the data directory's, so a log on its own device is named beside them.
        if let Some(w) = &m.wal_dir {
            options.insert("server.waldir".into(), w.display().to_string());
            if let Ok(d) = plumb_probes::diskstats::DeviceStats::for_path(w) {
                options.insert("server.waldir_device".into(), d.name().to_string());
            }
        }
    }
    for (k, v) in counters.settings() {
        options.insert(format!("server.setting.{k}"), v);
    }
    for (k, v) in counters.build() {
        options.insert(format!("server.build.{k}"), v);
    }
    let d = durability(options, storage);
    options.insert("durability".into(), d.into());
}

/// The host's RAM, MiB (`MemTotal`).
fn host_ram_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb / 1024)
}

/// Starts the server `spec` names for `plan` in `place` (its root and whether its
/// files are kept; a URL is reached, not started); `place.notes` hears what it started
/// and cleared. The lifecycle moves it into the plan's memory limit and stops it
/// through the subject's close; dropped, it stops.
pub fn start_for(
    plan: &RunPlan,
    spec: &plumb_plan::ServerSpec,
    extras: &plumb_runner::family::Extras,
    place: &plumb_runner::Place<'_>,
) -> Result<(Server, Option<ServerChoice>), SqlError> {
    let at = Placement {
        dir: place.root.clone(),
        keep: place.keep,
        port: extras.port,
        ram_mb: spec
            .ram_sized
            .then(|| plan.target.memory_mb.or_else(host_ram_mb))
            .flatten(),
    };
    start(spec, extras.password.as_deref(), &at, place.notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StorageEngine;

    #[test]
    fn durability_follows_the_settings_of_the_engine_that_holds_the_tables() {
        let o = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (format!("server.setting.{k}"), v.to_string()))
                .collect()
        };
        let pg = o(&[("fsync", "on"), ("synchronous_commit", "on")]);
        assert_eq!(durability(&pg, None), "synced");
        let pg_async = o(&[("fsync", "on"), ("synchronous_commit", "off")]);
        assert_eq!(durability(&pg_async, None), "os-buffered");
        let my = o(&[
            ("innodb_flush_log_at_trx_commit", "2"),
            ("rocksdb_flush_log_at_trx_commit", "1"),
        ]);
        assert_eq!(durability(&my, Some(StorageEngine::RocksDb)), "synced");
        assert_eq!(durability(&my, Some(StorageEngine::InnoDb)), "os-buffered");
    }
}
