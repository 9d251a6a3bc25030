//! Servers plumb starts and stops itself: a fresh data directory, a config written from
//! a template kept in `crates/servers/config/`, start, wait until it answers, record its
//! version and config, stop at the end, on error and on Ctrl-C (the server runs in its
//! own session, so the terminal's Ctrl-C reaches plumb only, and [`Managed`]'s drop
//! stops it), and remove the data directory unless asked to keep it.

mod mariadb;
mod postgres;

use crate::client::Endpoint;
use crate::error::SqlError;
use std::io::{BufRead, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which server, as `--server` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// PostgreSQL.
    Postgres,
    /// MariaDB (InnoDB or MyRocks).
    MariaDb,
    /// MySQL, from the user's own binaries (`--basedir`).
    MySql,
}

impl Flavor {
    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Postgres => "postgres",
            Flavor::MariaDb => "mariadb",
            Flavor::MySql => "mysql",
        }
    }
}

/// A MySQL-protocol server's storage engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageEngine {
    /// InnoDB (a B-tree).
    InnoDb,
    /// MyRocks (RocksDB, an LSM).
    RocksDb,
}

impl StorageEngine {
    /// The name in `ENGINE = …`.
    pub fn sql_name(self) -> &'static str {
        match self {
            StorageEngine::InnoDb => "InnoDB",
            StorageEngine::RocksDb => "ROCKSDB",
        }
    }
}

/// What to start: `--server postgres@17 --basedir DIR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerChoice {
    /// The server.
    pub flavor: Flavor,
    /// The major version asked for (`@17`), if any.
    pub version: Option<String>,
    /// Its storage engine (MySQL protocol only).
    pub engine: StorageEngine,
    /// An install to use instead of the system's (`--basedir`).
    pub basedir: Option<PathBuf>,
}

impl ServerChoice {
    /// Reads `--server NAME[@VERSION]` and `--engine`.
    pub fn parse(
        server: &str,
        engine: Option<&str>,
        basedir: Option<PathBuf>,
    ) -> Result<ServerChoice, SqlError> {
        let (name, version) = match server.split_once('@') {
            Some((n, v)) if !v.is_empty() => (n, Some(v.to_string())),
            Some(_) => {
                return Err(SqlError::Input(format!(
                    "--server {server}: a version after @ is empty; write e.g. postgres@17"
                )))
            }
            None => (server, None),
        };
        let flavor = match name {
            "postgres" | "postgresql" | "pg" => Flavor::Postgres,
            "mariadb" => Flavor::MariaDb,
            "mysql" => Flavor::MySql,
            other => {
                return Err(SqlError::Input(format!(
                    "--server {other}: unknown server; use postgres[@VERSION], \
                     mariadb[@VERSION] or mysql (with --basedir), or --url for a running one"
                )))
            }
        };
        let engine = match (flavor, engine) {
            (_, None | Some("innodb")) => StorageEngine::InnoDb,
            (Flavor::MariaDb | Flavor::MySql, Some("rocksdb" | "myrocks")) => {
                StorageEngine::RocksDb
            }
            (Flavor::Postgres, Some(e)) => {
                return Err(SqlError::Input(format!(
                    "--engine {e}: PostgreSQL has one storage engine (heap); drop --engine"
                )))
            }
            (_, Some(e)) => {
                return Err(SqlError::Input(format!(
                    "--engine {e}: unknown storage engine; use innodb or rocksdb"
                )))
            }
        };
        if flavor == Flavor::MySql && basedir.is_none() {
            return Err(SqlError::Input(
                "--server mysql: no Debian package ships MySQL here; point --basedir at a \
                 MySQL install (its bin/mysqld), or use --server mariadb"
                    .into(),
            ));
        }
        Ok(ServerChoice {
            flavor,
            version,
            engine,
            basedir,
        })
    }

    /// The name runs are stored under as their engine: `postgres`, `innodb`, `myrocks`
    /// (what the seeds' tables call them), `mysql-…` for MySQL.
    pub fn engine_label(&self) -> String {
        match (self.flavor, self.engine) {
            (Flavor::Postgres, _) => "postgres".into(),
            (Flavor::MariaDb, StorageEngine::InnoDb) => "innodb".into(),
            (Flavor::MariaDb, StorageEngine::RocksDb) => "myrocks".into(),
            (Flavor::MySql, StorageEngine::InnoDb) => "mysql-innodb".into(),
            (Flavor::MySql, StorageEngine::RocksDb) => "mysql-myrocks".into(),
        }
    }
}

/// How to start a managed server.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// Where its files go (a fresh directory is made inside); default under /var/tmp.
    pub dir: Option<PathBuf>,
    /// Keep the data directory after stopping.
    pub keep: bool,
    /// TCP port; default: a free one.
    pub port: Option<u16>,
    /// Buffer pool / shared_buffers / block cache, MiB.
    pub cache_mb: u64,
    /// A config template of the user's instead of plumb's.
    pub config: Option<PathBuf>,
    /// PostgreSQL's WAL directory (`initdb --waldir`); a fresh directory is made inside.
    pub waldir: Option<PathBuf>,
    /// Size PostgreSQL's memory from this much RAM, MiB ([`postgres::ram_sized`]),
    /// instead of from `cache_mb`; `None` leaves the template's sizes.
    pub ram_mb: Option<u64>,
}

/// A running server that plumb started: stopped when dropped.
pub struct Managed {
    pub(crate) flavor: Flavor,
    /// The endpoint clients connect to.
    pub endpoint: Endpoint,
    /// The server's root process (postmaster, mariadbd).
    pub pid: u32,
    /// The version it reports, e.g. `15.18`, `10.11.11-MariaDB`.
    pub version: String,
    /// The config file as written.
    pub config_text: String,
    /// Where its files are.
    pub root: PathBuf,
    /// The data directory (for disk counters and size).
    pub data_dir: PathBuf,
    /// The server's log.
    pub log: PathBuf,
    pub(crate) keep: bool,
    pub(crate) stop_cmd: Vec<Command>,
    pub(crate) child: Option<std::process::Child>,
    pub(crate) stopped: bool,
    /// Builds the command that starts the server on its existing data again (after a
    /// crash): `pg_ctl start`, which waits, or the server itself, which is spawned.
    pub(crate) relaunch: Option<Relaunch>,
    /// Directories of the server's outside its root (PostgreSQL's WAL under `--waldir`),
    /// removed with it.
    pub wal_dir: Option<PathBuf>,
    /// Directories a killed plumb left where this one was made, removed (their servers
    /// stopped) before it started: the caller tells the user.
    pub swept: Vec<PathBuf>,
}

/// How a server is started again on its own data.
pub(crate) enum Relaunch {
    /// A command that returns once the server runs (pg_ctl -w start); the pid is then
    /// read from the first file, and the other lock files are stale after a crash.
    Waits(Box<dyn Fn() -> Command + Send>, Vec<PathBuf>),
    /// The server process itself, spawned and kept as the child.
    Spawns(Box<dyn Fn() -> Command + Send>),
}

impl Managed {
    /// Starts `choice` as `opts` say.
    pub fn start(choice: &ServerChoice, opts: &StartOptions) -> Result<Managed, SqlError> {
        match choice.flavor {
            Flavor::Postgres => postgres::start(choice, opts),
            Flavor::MariaDb | Flavor::MySql => mariadb::start(choice, opts),
        }
    }

    /// A server about to be initialised in `root` (data in `root/data`, its log in
    /// `root/server.log`): from here on a failure stops what runs and removes the
    /// files, unless kept.
    pub(crate) fn new_in(
        flavor: Flavor,
        root: PathBuf,
        endpoint: Endpoint,
        config_text: String,
        keep: bool,
    ) -> Managed {
        Managed {
            flavor,
            endpoint,
            pid: 0,
            version: String::new(),
            config_text,
            data_dir: root.join("data"),
            log: root.join("server.log"),
            root,
            keep,
            stop_cmd: Vec::new(),
            child: None,
            stopped: false,
            relaunch: None,
            wal_dir: None,
            swept: Vec::new(),
        }
    }

    /// The last `n` lines of the server's log.
    pub fn log_tail(&self, n: usize) -> Vec<String> {
        log_tail(&self.log, n)
    }

    /// Whether the server process still runs.
    pub fn alive(&mut self) -> bool {
        if let Some(c) = &mut self.child {
            return matches!(c.try_wait(), Ok(None));
        }
        running(self.pid)
    }

    /// Kills the server and every process of its tree with SIGKILL, as a crash does,
    /// and waits until they are gone (a durability check then restarts it).
    pub fn crash(&mut self) {
        let pids = kill_tree(self.pid);
        if let Some(c) = &mut self.child {
            let _ = c.wait();
        }
        wait_gone(&pids, std::time::Duration::from_secs(30));
    }

    /// Starts a crashed server again on its data (it recovers from its log) and waits
    /// until it answers.
    pub fn restart(&mut self) -> Result<(), SqlError> {
        let start = std::time::Instant::now();
        match &self.relaunch {
            Some(Relaunch::Waits(cmd, locks)) => {
                let pidfile = &locks[0];
                // A crashed server's lock files name a process that is gone, or a zombie
                // nobody has reaped yet, which the server would take for itself running.
                let stale = std::fs::read_to_string(pidfile)
                    .ok()
                    .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
                    .is_some_and(|pid: u32| !running(pid));
                if stale {
                    for f in locks {
                        let _ = std::fs::remove_file(f);
                    }
                }
                let out = cmd().output().map_err(|e| self.error(e.to_string()))?;
                if !out.status.success() {
                    return Err(self.error(format!("restarting failed ({})", out.status)));
                }
                self.pid = std::fs::read_to_string(pidfile)
                    .ok()
                    .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
                    .ok_or_else(|| self.error("no pid in the pid file after restarting"))?;
            }
            Some(Relaunch::Spawns(cmd)) => {
                let child = cmd().spawn().map_err(|e| self.error(e.to_string()))?;
                self.pid = child.id();
                self.child = Some(child);
            }
            None => return Err(self.error("this server cannot be restarted by plumb")),
        }
        loop {
            if !self.alive() {
                return Err(self.error("the server exited while recovering"));
            }
            match self.endpoint.connect() {
                Ok(_) => return Ok(()),
                Err(e) if start.elapsed() > std::time::Duration::from_secs(300) => {
                    return Err(self.error(format!("no answer 300 s after restarting: {e}")))
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
            }
        }
    }

    /// Shuts the server down cleanly (PostgreSQL's fast shutdown, MariaDB's shutdown)
    /// and keeps its files, for [`Managed::restart`] to start it again: a planned
    /// restart inside a step.
    pub fn shutdown(&mut self) -> Result<(), SqlError> {
        for cmd in &mut self.stop_cmd {
            let out = cmd.output().map_err(|e| SqlError::Server {
                what: format!("shutting the {} server down: {e}", self.flavor.name()),
                log: Vec::new(),
            })?;
            if !out.status.success() {
                return Err(SqlError::Server {
                    what: format!(
                        "shutting the {} server down: {}",
                        self.flavor.name(),
                        String::from_utf8_lossy(&out.stderr).trim()
                    ),
                    log: log_tail(&self.log, 10),
                });
            }
        }
        if let Some(c) = &mut self.child {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if matches!(c.try_wait(), Ok(None)) {
                return Err(self.error("the server did not exit within 120 s of its shutdown"));
            }
        } else {
            wait_gone(&[self.pid], std::time::Duration::from_secs(120));
        }
        Ok(())
    }

    /// Sends `signal` (SIGSTOP, SIGCONT) to every process of the server's tree: a hung
    /// server that keeps its connections.
    pub fn signal_tree(&self, signal: i32) {
        let mut pids = vec![self.pid];
        if let Some(t) = plumb_probes::proctree::tree_snapshot(self.pid) {
            pids.extend(t.procs.keys().copied().filter(|p| *p != self.pid));
        }
        for p in pids {
            // SAFETY: kill has no memory preconditions; these pids are one server's.
            unsafe { libc::kill(p as i32, signal) };
        }
    }

    /// The server's flavour: which log lines its recovery writes.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// An error about the server, with the end of its log.
    pub fn error(&self, what: impl Into<String>) -> SqlError {
        SqlError::Server {
            what: what.into(),
            // Enough to reach an engine plugin's own error, which a server prints
            // before the lines of its other engines' start.
            log: self.log_tail(40),
        }
    }

    /// Stops the server (fast shutdown) and removes its files unless `keep`.
    pub fn stop(&mut self) -> Result<(), SqlError> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let mut result = Ok(());
        // A server that already died has nothing to stop (its files still go).
        if !self.alive() {
            self.stop_cmd.clear();
        }
        for cmd in &mut self.stop_cmd {
            match cmd.output() {
                Ok(o) if o.status.success() => {}
                Ok(o) => {
                    result = Err(SqlError::Server {
                        what: format!(
                            "stopping the {} server: {}",
                            self.flavor.name(),
                            String::from_utf8_lossy(&o.stderr).trim()
                        ),
                        log: log_tail(&self.log, 10),
                    })
                }
                Err(e) => {
                    result = Err(SqlError::Server {
                        what: format!("stopping the {} server: {e}", self.flavor.name()),
                        log: Vec::new(),
                    })
                }
            }
        }
        if let Some(c) = &mut self.child {
            // Give it the time a clean shutdown takes, then make sure.
            let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        } else {
            // pg_ctl returns once the pid file is gone; the process may still be exiting.
            let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while result.is_ok() && running(self.pid) && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if running(self.pid) {
                // SAFETY: kill has no memory preconditions; the pid is the server's.
                unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
            }
        }
        // The directory before its owner marker: a kill between the two leaves a marker
        // the next sweep clears, never an unmarked directory.
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.root);
            if let Some(w) = &self.wal_dir {
                let _ = std::fs::remove_dir_all(w);
            }
        }
        plumb_store::owner::release(&self.root);
        result
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Whether `pid` runs: it exists and is not a zombie (a server whose parent exited is
/// reaped by init, which may take its time).
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rfind(')')
            .and_then(|i| s[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The last `n` lines of a log file (read from its end).
pub fn log_tail(path: &Path, n: usize) -> Vec<String> {
    let Ok(mut f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let lines: Vec<String> = std::io::BufReader::new(f)
        .lines()
        .map_while(Result::ok)
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// A fresh directory for a server's files, traversable by the server's user, and owned
/// by it when plumb runs as root (the server writes its socket and log there); with
/// the directories of killed plumbs it removed first.
pub(crate) fn make_root(
    opts: &StartOptions,
    flavor: Flavor,
    owner: Option<(u32, u32)>,
) -> Result<(PathBuf, Vec<PathBuf>), SqlError> {
    let parent = opts
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    std::fs::create_dir_all(&parent).map_err(|e| {
        SqlError::Input(format!("--dir {}: cannot create it: {e}", parent.display()))
    })?;
    // Servers a killed plumb left running here are stopped and their files removed.
    let swept = plumb_store::owner::sweep_with(&parent, &kill_orphan_server);
    let dir = tempfile::Builder::new()
        .prefix(&format!("plumb-{}-", flavor.name()))
        .tempdir_in(&parent)
        .map_err(|e| {
            SqlError::Input(format!(
                "--dir {}: cannot make a directory in it: {e}",
                parent.display()
            ))
        })?
        .keep();
    plumb_store::owner::claim(&dir);
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
    if let Some((uid, gid)) = owner {
        chown(&dir, uid, gid)?;
    }
    Ok((dir, swept))
}

/// Stops, with SIGKILL, the server whose files are in `root` (its pid file names it),
/// with every process of its tree: its data is about to be removed.
fn kill_orphan_server(root: &Path) {
    let pid = ["data/postmaster.pid", "mysqld.pid"].iter().find_map(|f| {
        std::fs::read_to_string(root.join(f))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u32>().ok()))
    });
    if let Some(pid) = pid.filter(|p| running(*p)) {
        wait_gone(&kill_tree(pid), std::time::Duration::from_secs(10));
    }
}

/// Sends SIGKILL to `pid` and every process of its tree (a server's backends), as a
/// crash would; returns the pids signalled.
fn kill_tree(pid: u32) -> Vec<u32> {
    let mut pids = vec![pid];
    if let Some(t) = plumb_probes::proctree::tree_snapshot(pid) {
        pids.extend(t.procs.keys().copied().filter(|p| *p != pid));
    }
    for p in &pids {
        // SAFETY: kill has no memory preconditions; these pids are one server's.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    pids
}

/// Waits, up to `limit`, until none of `pids` runs.
fn wait_gone(pids: &[u32], limit: std::time::Duration) {
    let until = std::time::Instant::now() + limit;
    while pids.iter().any(|p| running(*p)) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `chown` a path, with an error that names it.
pub(crate) fn chown(path: &Path, uid: u32, gid: u32) -> Result<(), SqlError> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(|e| {
        SqlError::Input(format!(
            "{}: cannot give it to the server's user: {e}",
            path.display()
        ))
    })
}

/// The uid and gid of a system user, if it exists.
pub(crate) fn user_ids(name: &str) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&name) && f.len() > 3)
            .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
            .flatten()
    })
}

/// Whether plumb runs as root (servers refuse root: they run as their own user).
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A command that runs as `user` when plumb is root, in its own session (so Ctrl-C
/// at the terminal reaches plumb, which then stops the server cleanly).
pub(crate) fn command_as(user: &str, program: &Path) -> Command {
    let mut c = if is_root() {
        let mut c = Command::new("runuser");
        c.arg("-u").arg(user).arg("--").arg(program);
        c
    } else {
        Command::new(program)
    };
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    c
}

/// A free TCP port on 127.0.0.1, or the one asked for if it is free.
pub(crate) fn port(asked: Option<u16>) -> Result<u16, SqlError> {
    match asked {
        Some(p) => std::net::TcpListener::bind(("127.0.0.1", p))
            .map(|_| p)
            .map_err(|e| {
                SqlError::Input(format!(
                    "--port {p}: cannot use it ({e}); another server listens there, pick \
                     another port or leave --port out for a free one"
                ))
            }),
        None => std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| SqlError::Input(format!("no free TCP port on 127.0.0.1: {e}"))),
    }
}

/// A config template with `{name}` placeholders filled; an unknown placeholder is an
/// error that names the template.
pub(crate) fn fill(
    template: &str,
    from: &str,
    vars: &[(&str, String)],
) -> Result<String, SqlError> {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(j) = after.find('}') else {
            out.push_str(&rest[i..]);
            rest = "";
            break;
        };
        let key = &after[..j];
        match vars.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => out.push_str(v),
            None => {
                let line = template[..template.len() - rest.len() + i]
                    .lines()
                    .count()
                    .max(1);
                return Err(SqlError::Input(format!(
                    "{from}, line {line}: unknown placeholder {{{key}}}; known: {}",
                    vars.iter()
                        .map(|(k, _)| format!("{{{k}}}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )));
            }
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Reads the user's `--config` template, or returns plumb's.
pub(crate) fn template(
    opts: &StartOptions,
    builtin: &'static str,
    name: &str,
) -> Result<(String, String), SqlError> {
    match &opts.config {
        Some(p) => std::fs::read_to_string(p)
            .map(|t| (t, p.display().to_string()))
            .map_err(|e| SqlError::Input(format!("--config {}: {e}", p.display()))),
        None => Ok((builtin.to_string(), format!("crates/servers/config/{name}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_and_engines_parse_with_clear_errors() {
        let c = ServerChoice::parse("postgres@17", None, None).unwrap();
        assert_eq!(
            (c.flavor, c.version.as_deref()),
            (Flavor::Postgres, Some("17"))
        );
        assert_eq!(c.engine_label(), "postgres");
        let m = ServerChoice::parse("mariadb", Some("rocksdb"), None).unwrap();
        assert_eq!(m.engine_label(), "myrocks");
        for (s, e, want) in [
            ("oracle", None, "unknown server"),
            ("postgres@", None, "empty"),
            ("postgres", Some("rocksdb"), "one storage engine"),
            ("mariadb", Some("aria"), "unknown storage engine"),
            ("mysql", None, "--basedir"),
        ] {
            let msg = ServerChoice::parse(s, e, None).unwrap_err().to_string();
            assert!(msg.contains(want), "{s}: {msg}");
        }
    }

    #[test]
    fn templates_fill_and_name_unknown_placeholders() {
        let vars = [("port", "5433".to_string())];
        assert_eq!(
            fill("port = {port}\n", "t", &vars).unwrap(),
            "port = 5433\n"
        );
        let e = fill("a\nb = {nope}\n", "my.cnf", &vars)
            .unwrap_err()
            .to_string();
        assert!(e.contains("my.cnf, line 2") && e.contains("{nope}"), "{e}");
    }

    #[test]
    fn a_port_in_use_is_refused() {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let p = l.local_addr().unwrap().port();
        let e = port(Some(p)).unwrap_err().to_string();
        assert!(e.contains(&format!("--port {p}")), "{e}");
        assert!(port(None).is_ok());
    }
}
