//! The database server a command measures, shared by `plumb sql` and `plumb ib`: the
//! flags that choose it, starting a managed one (or reading `--url`), and what it is
//! called in the store.

use super::execute::INTERRUPTED;
use plumb_sql::{CounterReader, Endpoint, Managed, Protocol, ServerChoice, StartOptions};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// How a command chooses its server.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// The server plumb starts: postgres[@MAJOR], mariadb[@VERSION], or mysql (with
    /// --basedir) [default: postgres].
    #[arg(long, value_name = "NAME[@VERSION]")]
    pub server: Option<String>,
    /// Storage engine of a MySQL-protocol server: innodb or rocksdb (MyRocks).
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// A running server instead: postgres://USER[:PASSWORD]@HOST[:PORT]/DB or mysql://…
    /// (plumb creates and drops only its own tables; the password is never stored).
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "basedir", "keep", "dir", "port", "config"])]
    pub url: Option<String>,
    /// An install to start instead of the system's (its bin/ holds postgres or mysqld).
    #[arg(long, value_name = "DIR")]
    pub basedir: Option<PathBuf>,
    /// Where the data directory is made: the managed server's (with `plumb ib --kv`,
    /// the engine's) [default: /var/tmp].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Keep the data directory after the run.
    #[arg(long)]
    pub keep: bool,
    /// TCP port for the managed server [default: a free one].
    #[arg(long)]
    pub port: Option<u16>,
    /// Buffer pool / shared_buffers / block cache, MiB.
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub cache_mb: u64,
    /// A config template to use instead of plumb's (crates/sql/config/*): the same
    /// {placeholders} are filled.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

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

    /// Stops a managed server (saying where its kept directory is).
    pub fn stop(&mut self, keep: bool) -> Result<(), plumb_sql::SqlError> {
        match self {
            Server::Managed(m) => {
                let kept = m.root.clone();
                let r = m.stop();
                if keep {
                    eprintln!("plumb: kept {}", kept.display());
                }
                r
            }
            Server::External(_) => Ok(()),
        }
    }

    /// After a failed step: whether a managed server died, as the error to report.
    pub fn died(&mut self, step: &str) -> Option<plumb_sql::SqlError> {
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

/// Starts the managed server `a` asks for, or reads `--url`.
pub fn start(a: &ServerArgs) -> anyhow::Result<(Server, Option<ServerChoice>)> {
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    if let Some(url) = &a.url {
        return Ok((Server::External(Endpoint::parse_url(url)?), None));
    }
    let c = ServerChoice::parse(
        a.server.as_deref().unwrap_or("postgres"),
        a.engine.as_deref(),
        a.basedir.clone(),
    )?;
    eprintln!("plumb: starting {} …", c.engine_label());
    let m = Managed::start(
        &c,
        &StartOptions {
            dir: a.dir.clone(),
            keep: a.keep,
            port: a.port,
            cache_mb: a.cache_mb,
            config: a.config.clone(),
        },
    )?;
    eprintln!(
        "plumb: {} {} pid {} in {}{}",
        c.flavor.name(),
        m.version,
        m.pid,
        m.root.display(),
        if a.keep { " (kept after the run)" } else { "" }
    );
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
    pub storage: Option<plumb_sql::StorageEngine>,
}

/// Names the server: from plumb's own choice when it started it, from the server's
/// settings (and `--engine`) when it was given by URL.
pub fn identify(
    a: &ServerArgs,
    server: &Server,
    choice: Option<&ServerChoice>,
    counters: &mut CounterReader,
) -> anyhow::Result<Identity> {
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
    let c = ServerChoice::parse(flavor, a.engine.as_deref(), None)?;
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
    storage: Option<plumb_sql::StorageEngine>,
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
        Some(plumb_sql::StorageEngine::InnoDb) => {
            get("innodb_flush_log_at_trx_commit").as_deref() == Some("1")
        }
        Some(plumb_sql::StorageEngine::RocksDb) => {
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
    storage: Option<plumb_sql::StorageEngine>,
    options: &mut std::collections::BTreeMap<String, String>,
) {
    options.insert("server.url".into(), server.endpoint().redacted_url());
    if let Server::Managed(m) = server {
        options.insert("server.config".into(), m.config_text.clone());
    }
    for (k, v) in counters.settings() {
        options.insert(format!("server.setting.{k}"), v);
    }
    let d = durability(options, storage);
    options.insert("durability".into(), d.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_sql::StorageEngine;

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
