//! A managed PostgreSQL: initdb, plumb's settings included from postgresql.conf,
//! pg_ctl start and stop, as the postgres user when plumb runs as root.

use super::{
    chown, command_as, fill, make_root, port, template, user_ids, Flavor, Managed, ServerChoice,
    StartOptions,
};
use crate::client::{Endpoint, Protocol};
use crate::error::SqlError;
use std::path::{Path, PathBuf};

const TEMPLATE: &str = include_str!("../../config/postgres.conf");

/// Where other PostgreSQL majors go (scripts/get-postgres.sh installs them there).
pub const EXTRA_INSTALLS: &str = "/var/tmp/plumb-postgres";

/// The bin directory of the install `choice` asks for.
fn bindir(choice: &ServerChoice) -> Result<PathBuf, SqlError> {
    if let Some(base) = &choice.basedir {
        let bin = base.join("bin");
        return if bin.join("postgres").exists() {
            Ok(bin)
        } else {
            Err(SqlError::Input(format!(
                "--basedir {}: no bin/postgres there; point it at a PostgreSQL install \
                 (the directory holding bin/, lib/ and share/)",
                base.display()
            )))
        };
    }
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for root in ["/usr/lib/postgresql", EXTRA_INSTALLS] {
        if let Ok(rd) = std::fs::read_dir(root) {
            for e in rd.flatten() {
                let bin = e.path().join("bin");
                if bin.join("postgres").exists() {
                    found.push((e.file_name().to_string_lossy().into_owned(), bin));
                }
            }
        }
    }
    let major = |v: &str| {
        v.split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(0)
    };
    found.sort_by_key(|(v, _)| major(v));
    let pick = match &choice.version {
        Some(want) => found
            .iter()
            .rev()
            .find(|(v, _)| v == want || v.starts_with(&format!("{want}.")))
            .cloned(),
        // The system's (Debian's) by default, so a run means the same on every host.
        None => found
            .iter()
            .rev()
            .find(|(_, b)| b.starts_with("/usr/lib/postgresql"))
            .or(found.last())
            .cloned(),
    };
    pick.map(|(_, b)| b).ok_or_else(|| {
        let have: Vec<&str> = found.iter().map(|(v, _)| v.as_str()).collect();
        SqlError::Input(format!(
            "--server postgres{}: no such PostgreSQL here (found: {}); Debian's comes with \
             `apt-get install postgresql` (scripts/setup.sh), other majors with \
             `bash scripts/get-postgres.sh MAJOR` (into {EXTRA_INSTALLS}), any other \
             install with --basedir",
            choice
                .version
                .as_ref()
                .map(|v| format!("@{v}"))
                .unwrap_or_default(),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            },
        ))
    })
}

/// Connections plumb's template allows (`max_connections`), which work_mem is shared by.
const MAX_CONNECTIONS: u64 = 200;

/// PostgreSQL's memory sized from `ram_mb` of RAM, as the PostgreSQL deck (seed 004:
/// "Simple PostgreSQL Configuration - 2GB or more of RAM", shared_buffers 512MB,
/// wal_buffers 16MB, "and the also important work_mem") points to pgtune for:
/// shared_buffers a quarter of RAM, effective_cache_size three quarters (what the OS
/// caches beside it), maintenance_work_mem a sixteenth up to 2 GiB, work_mem what
/// shared_buffers leaves over three sorts per connection, wal_buffers 16 MB. Appended to
/// the config, so each line wins over the template's.
pub fn ram_sized(ram_mb: u64) -> String {
    let shared = (ram_mb / 4).max(128);
    let work_kb = (ram_mb.saturating_sub(shared) * 1024 / (3 * MAX_CONNECTIONS)).max(4096);
    format!(
        "# Sized from {ram_mb} MiB of RAM (ram_sized), as pgtune and the PostgreSQL deck size it:\n\
         shared_buffers = {shared}MB\n\
         effective_cache_size = {}MB\n\
         maintenance_work_mem = {}MB\n\
         work_mem = {work_kb}kB\n\
         wal_buffers = 16MB\n",
        ram_mb * 3 / 4,
        (ram_mb / 16).clamp(64, 2048),
    )
}

/// The settings this release's server knows (`postgres --describe-config`, which runs
/// without a data directory), lowercased; empty when it cannot say.
fn known_settings(bin: &Path) -> std::collections::HashSet<String> {
    let mut cmd = command_as("postgres", &bin.join("postgres"));
    cmd.arg("--describe-config");
    match cmd.output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.split('\t').next())
            .map(|n| n.trim().to_ascii_lowercase())
            .filter(|n| !n.is_empty())
            .collect(),
        _ => Default::default(),
    }
}

/// `config` (plumb's own template) with each setting line the release does not know
/// turned into a comment that says so: the template names settings of newer releases (track_wal_io_timing is
/// 14+), and an older server refuses to start on any name it does not know. The config
/// stored with the run is this one, so the record says what was left out. With no list
/// of known settings, the config is kept whole.
pub(crate) fn for_this_release(config: &str, known: &std::collections::HashSet<String>) -> String {
    if known.is_empty() {
        return config.to_string();
    }
    config
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let name = t.split(['=', ' ', '\t']).next().unwrap_or("").trim();
            if t.starts_with('#') || name.is_empty() || known.contains(&name.to_ascii_lowercase()) {
                l.to_string()
            } else {
                format!("# left out, this release has no such setting: {t}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if config.ends_with('\n') { "\n" } else { "" }
}

fn run(mut cmd: std::process::Command, what: &str, log: &Path) -> Result<(), SqlError> {
    let out = cmd.output().map_err(|e| SqlError::Server {
        what: format!("{what}: cannot run it: {e}"),
        log: Vec::new(),
    })?;
    if out.status.success() {
        return Ok(());
    }
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .chain(String::from_utf8_lossy(&out.stdout).lines())
        .map(str::to_string)
        .collect();
    lines.extend(super::log_tail(log, 15));
    let n = lines.len();
    Err(SqlError::Server {
        what: format!("{what} failed ({})", out.status),
        log: lines[n.saturating_sub(20)..].to_vec(),
    })
}

pub(super) fn start(choice: &ServerChoice, opts: &StartOptions) -> Result<Managed, SqlError> {
    let bin = bindir(choice)?;
    let port = port(opts.port)?;
    let owner = if super::is_root() {
        Some(user_ids("postgres").ok_or_else(|| {
            SqlError::Input(
                "PostgreSQL refuses to run as root and there is no postgres user; \
                 `apt-get install postgresql` creates it (scripts/setup.sh does)"
                    .into(),
            )
        })?)
    } else {
        None
    };
    // The config first: a template that does not fill leaves no directory behind.
    let (tpl, from) = template(opts, TEMPLATE, "postgres.conf")?;
    let config_text = fill(&tpl, &from, &[("cache_mb", opts.cache_mb.to_string())])?;
    // Sized from RAM: the lines come last, so they win over the template's.
    let config_text = match opts.ram_mb {
        Some(ram) => format!("{config_text}\n{}", ram_sized(ram)),
        None => config_text,
    };
    // plumb's own template is fitted to the release; a user's --config is theirs, and a
    // name the server does not know stays an error that names it.
    let config_text = match opts.config {
        None => for_this_release(&config_text, &known_settings(&bin)),
        Some(_) => config_text,
    };
    let (root, swept) = make_root(opts, Flavor::Postgres, owner)?;
    let data = root.join("data");
    let log = root.join("server.log");
    // From here on the directory is the server's: a failure removes it (unless kept).
    let mut m = Managed::new_in(
        Flavor::Postgres,
        root.clone(),
        Endpoint {
            protocol: Protocol::Postgres,
            socket: Some(root.clone()),
            host: "127.0.0.1".into(),
            port,
            user: "postgres".into(),
            password: None,
            database: "postgres".into(),
        },
        config_text,
        opts.keep,
    );
    m.swept = swept;
    let user = "postgres";
    let mut initdb = command_as(user, &bin.join("initdb"));
    if let Some(parent) = &opts.waldir {
        // A fresh directory of its own inside the one given, as the data's: initdb
        // wants it empty, and it is removed with the server.
        let wal = tempfile::Builder::new()
            .prefix("plumb-postgres-wal-")
            .tempdir_in(parent)
            .map_err(|e| {
                SqlError::Input(format!(
                    "--waldir {}: cannot make a directory in it: {e}",
                    parent.display()
                ))
            })?
            .keep();
        m.wal_dir = Some(wal.clone());
        if let Some((uid, gid)) = owner {
            chown(&wal, uid, gid)?;
        }
        initdb.arg("--waldir").arg(&wal);
    }
    initdb.arg("-D").arg(&data).args([
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--locale=C.UTF-8",
        "-N",
    ]);
    run(initdb, "initdb", &log)?;
    let conf = root.join("plumb.conf");
    std::fs::write(&conf, &m.config_text)
        .map_err(|e| SqlError::Input(format!("{}: {e}", conf.display())))?;
    let main_conf = data.join("postgresql.conf");
    let mut text = std::fs::read_to_string(&main_conf)
        .map_err(|e| SqlError::Input(format!("{}: {e}", main_conf.display())))?;
    text.push_str(&format!("\n# plumb\ninclude '{}'\n", conf.display()));
    std::fs::write(&main_conf, text)
        .map_err(|e| SqlError::Input(format!("{}: {e}", main_conf.display())))?;

    let mut stop = command_as(user, &bin.join("pg_ctl"));
    stop.arg("-D")
        .arg(&data)
        .args(["-m", "fast", "-w", "-t", "120", "stop"]);
    m.stop_cmd.push(stop);
    let launch = {
        let (ctl, data, log, root) = (bin.join("pg_ctl"), data.clone(), log.clone(), root.clone());
        move || {
            let mut pg_ctl = command_as(user, &ctl);
            pg_ctl
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-w", "-t", "300"]);
            pg_ctl.arg("-o").arg(format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1",
                root.display()
            ));
            pg_ctl.arg("start");
            pg_ctl
        }
    };
    let pg_ctl = launch();
    m.relaunch = Some(super::Relaunch::Waits(
        Box::new(launch),
        vec![
            data.join("postmaster.pid"),
            root.join(format!(".s.PGSQL.{port}.lock")),
        ],
    ));
    if let Err(e) = run(pg_ctl, "pg_ctl start", &log) {
        m.stop_cmd.clear(); // nothing runs
        return Err(e);
    }
    let pidfile = data.join("postmaster.pid");
    m.pid = std::fs::read_to_string(&pidfile)
        .ok()
        .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
        .ok_or_else(|| m.error(format!("{}: no pid in it after start", pidfile.display())))?;
    let mut c = m.endpoint.connect().map_err(|e| m.error(e.to_string()))?;
    let v = c.rows("SHOW server_version")?;
    m.version = v
        .first()
        .and_then(|r| r.first())
        .and_then(|(_, v)| v.clone())
        .unwrap_or_default();
    c.batch("CREATE DATABASE plumb")?;
    m.endpoint.database = "plumb".into();
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_sizing_follows_pgtune_and_the_template_keeps_max_connections() {
        // 24 GiB, this machine's: 6 GiB of buffers, 18 GiB the OS caches, 1.5 GiB for
        // maintenance, (24576 - 6144) MiB over 600 sorts.
        let c = ram_sized(24576);
        for line in [
            "shared_buffers = 6144MB",
            "effective_cache_size = 18432MB",
            "maintenance_work_mem = 1536MB",
            "work_mem = 31457kB",
            "wal_buffers = 16MB",
        ] {
            assert!(c.lines().any(|l| l == line), "{line} not in\n{c}");
        }
        // A small limit keeps the floors; a large host caps maintenance at 2 GiB.
        assert!(ram_sized(256).contains("shared_buffers = 128MB\nef"));
        assert!(ram_sized(256).contains("work_mem = 4096kB"));
        assert!(ram_sized(262_144).contains("maintenance_work_mem = 2048MB"));
        // work_mem is shared by the connections the template allows.
        assert!(TEMPLATE.contains(&format!("max_connections = {MAX_CONNECTIONS}\n")));
    }

    #[test]
    fn settings_an_older_release_lacks_become_comments_and_the_rest_stay() {
        let known = ["shared_buffers", "track_io_timing"]
            .into_iter()
            .map(String::from)
            .collect();
        let conf = "# a comment\nshared_buffers = 256MB\n\ntrack_wal_io_timing = on\nTrack_IO_Timing = on\n";
        assert_eq!(
            for_this_release(conf, &known),
            "# a comment\nshared_buffers = 256MB\n\n\
             # left out, this release has no such setting: track_wal_io_timing = on\n\
             Track_IO_Timing = on\n"
        );
        // Without a list (describe-config failed), nothing is dropped.
        assert_eq!(for_this_release(conf, &Default::default()), conf);
    }
}
