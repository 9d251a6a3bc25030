//! The flags that choose a server, shared by `plumb sql` and `plumb ib`, turned into
//! the plan's [`ServerSpec`] (the password of a `--url` stays out of it).

use plumb_plan::ServerSpec;
use std::path::PathBuf;

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
    #[arg(long, default_value_t = plumb_plan::family::DEFAULT_CACHE_MB, value_name = "MIB")]
    pub cache_mb: u64,
    /// Size PostgreSQL's memory from the RAM it has (the host's, or --memory-mb), as the
    /// PostgreSQL deck and pgtune do, instead of from --cache-mb: shared_buffers a
    /// quarter, effective_cache_size three quarters, maintenance_work_mem a sixteenth
    /// (at most 2 GiB), work_mem the rest over 3 × max_connections, wal_buffers 16 MB.
    #[arg(long, conflicts_with = "url")]
    pub ram_sized: bool,
    /// A config template to use instead of plumb's (crates/servers/config/*): the same
    /// {placeholders} are filled.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// PostgreSQL's write-ahead log in this directory (`initdb --waldir`), e.g. on a
    /// device of its own; the run records where it was and on which device.
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub waldir: Option<PathBuf>,
}

impl ServerArgs {
    /// The server as a plan holds it, and the password of `--url` (kept apart).
    pub fn spec(&self) -> (ServerSpec, Option<String>) {
        let c = plumb_sql::asked::choose(self.server.as_deref(), self.url.as_deref());
        (
            ServerSpec {
                server: c.server,
                engine: self.engine.clone(),
                basedir: self.basedir.clone(),
                config: self.config.clone(),
                waldir: self.waldir.clone(),
                cache_mb: self.cache_mb,
                ram_sized: self.ram_sized,
                url: c.url,
            },
            c.password,
        )
    }
}
