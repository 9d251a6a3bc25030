//! A managed MariaDB (InnoDB or MyRocks) or MySQL: a private my.cnf from plumb's
//! template, mariadb-install-db (mysqld --initialize-insecure for MySQL), mariadbd
//! in its own session, ping until it answers, mariadb-admin shutdown.

use super::{
    fill, make_root, port, template, user_ids, Flavor, Managed, ServerChoice, StartOptions,
    StorageEngine,
};
use crate::client::{Endpoint, Protocol};
use crate::error::SqlError;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INNODB: &str = include_str!("../../config/innodb.cnf");
const MYROCKS: &str = include_str!("../../config/myrocks.cnf");

/// Where other MariaDB point releases go (scripts/get-mariadb.sh unpacks Debian's
/// packages of a release there, one directory per version).
pub const EXTRA_INSTALLS: &str = "/var/tmp/plumb-mariadb";

/// The version `server --version` prints (`10.11.18-MariaDB-0+deb12u1` → `10.11.18`
/// and what follows it).
fn server_version(server: &Path) -> Result<String, SqlError> {
    let out = Command::new(server)
        .arg("--version")
        .output()
        .map_err(|e| SqlError::Input(format!("{}: cannot run it: {e}", server.display())))?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    Ok(text
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or("?")
        .to_string())
}

/// Whether a server of version `has` is the `want` asked for: the same release, or one
/// of the series `want` names (`10.11` takes `10.11.19-MariaDB`).
fn version_matches(has: &str, want: &str) -> bool {
    has == want || has.starts_with(&format!("{want}.")) || has.starts_with(&format!("{want}-"))
}

/// The install to run: `--basedir`; else, when a version is asked for that the system's
/// server is not, the newest matching release under [`EXTRA_INSTALLS`] (a suite's
/// `versions = ["10.11.18", "10.11.19"]` then runs each from its own install); else the
/// system's (`None`), whose version is checked by the caller.
fn install(choice: &ServerChoice) -> Result<Option<PathBuf>, SqlError> {
    if choice.basedir.is_some() || choice.flavor == Flavor::MySql {
        return Ok(choice.basedir.clone());
    }
    let Some(want) = &choice.version else {
        return Ok(None);
    };
    let system = find(None, &["mariadbd", "mysqld"]);
    if let Some(s) = &system {
        if version_matches(&server_version(s)?, want) {
            return Ok(None);
        }
    }
    let mut found: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(EXTRA_INSTALLS)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("sbin/mariadbd").exists())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            version_matches(&name, want).then(|| {
                let key = name.split('.').map(|p| p.parse().unwrap_or(0)).collect();
                (key, e.path())
            })
        })
        .collect();
    found.sort();
    // None found: the system's, whose version the caller refuses with the way out.
    Ok(found.pop().map(|(_, p)| p))
}

/// The first of `names` under the install's bin dirs, or on the system.
fn find(base: Option<&Path>, names: &[&str]) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = match base {
        Some(b) => ["bin", "sbin", "scripts", "libexec"]
            .iter()
            .map(|d| b.join(d))
            .collect(),
        None => ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"]
            .iter()
            .map(PathBuf::from)
            .collect(),
    };
    names
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.exists())
}

fn missing(choice: &ServerChoice, what: &str) -> SqlError {
    SqlError::Input(match &choice.basedir {
        Some(b) => format!(
            "--basedir {}: no {what} under bin/, sbin/ or scripts/",
            b.display()
        ),
        None => format!(
            "{what} not found; `apt-get install mariadb-server mariadb-plugin-rocksdb` \
             (scripts/setup.sh does), or --basedir for another install"
        ),
    })
}

/// The programs of the install a `--server` asks for, checked to be the version it names.
struct Programs {
    /// The install's base directory (`None`: the system's programs).
    base: Option<PathBuf>,
    /// mariadbd or mysqld.
    server: PathBuf,
    /// mariadb-admin, which stops it.
    admin: PathBuf,
}

/// The install `choice` names, its server and admin programs found and its version
/// checked: a release the user asked for and did not get is refused with the way to get it.
fn programs(choice: &ServerChoice) -> Result<Programs, SqlError> {
    let base = install(choice)?;
    let mysql = choice.flavor == Flavor::MySql;
    let server_names: &[&str] = if mysql {
        &["mysqld"]
    } else {
        &["mariadbd", "mysqld"]
    };
    let server =
        find(base.as_deref(), server_names).ok_or_else(|| missing(choice, server_names[0]))?;
    let admin = find(base.as_deref(), &["mariadb-admin", "mysqladmin"])
        .ok_or_else(|| missing(choice, "mariadb-admin"))?;
    if let Some(want) = &choice.version {
        let has = server_version(&server)?;
        if !version_matches(&has, want) {
            return Err(SqlError::Input(format!(
                "--server {}@{want}: {} is version {has}; {}",
                choice.flavor.name(),
                server.display(),
                if mysql {
                    "install that release and point --basedir at it".to_string()
                } else {
                    format!(
                        "`bash scripts/get-mariadb.sh {want}` installs a Debian point release \
                         into {EXTRA_INSTALLS}, or point --basedir at another install"
                    )
                }
            )));
        }
    }
    Ok(Programs {
        base,
        server,
        admin,
    })
}

/// The mysql user's ids when plumb runs as root (the server refuses root), else `None`.
fn owner() -> Result<Option<(u32, u32)>, SqlError> {
    if !super::is_root() {
        return Ok(None);
    }
    user_ids("mysql").map(Some).ok_or_else(|| {
        SqlError::Input(
            "the server refuses to run as root and there is no mysql user; \
             `apt-get install mariadb-server` creates it (scripts/setup.sh does)"
                .into(),
        )
    })
}

/// The server's my.cnf filled from the template for `root` and written there as
/// `my.cnf`; its text is what the run stores. A template that does not fill leaves no
/// directory behind.
fn write_config(
    choice: &ServerChoice,
    opts: &StartOptions,
    root: &Path,
    port: u16,
    owner: Option<(u32, u32)>,
) -> Result<String, SqlError> {
    let (builtin, name) = match choice.engine {
        StorageEngine::InnoDb => (INNODB, "innodb.cnf"),
        StorageEngine::RocksDb => (MYROCKS, "myrocks.cnf"),
    };
    let filled = template(opts, builtin, name).and_then(|(tpl, from)| {
        fill(
            &tpl,
            &from,
            &[
                ("cache_mb", opts.cache_mb.to_string()),
                ("datadir", root.join("data").display().to_string()),
                ("socket", root.join("mysqld.sock").display().to_string()),
                ("pidfile", root.join("mysqld.pid").display().to_string()),
                ("port", port.to_string()),
                ("log", root.join("server.log").display().to_string()),
                (
                    "user_line",
                    if owner.is_some() {
                        "user = mysql".into()
                    } else {
                        String::new()
                    },
                ),
            ],
        )
    });
    let config_text = match filled {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_dir_all(root);
            plumb_store::owner::release(root);
            return Err(e);
        }
    };
    let cnf = root.join("my.cnf");
    std::fs::write(&cnf, &config_text)
        .map_err(|e| SqlError::Input(format!("{}: {e}", cnf.display())))?;
    Ok(config_text)
}

/// A temporary directory of the server's own under `root`, as its `--tmpdir=` argument:
/// a server starting removes every `#sql*` file in its tmpdir as its own leftovers, so
/// two servers sharing /tmp (tests run in parallel, two sides of a comparison) deleted
/// each other's temporary tables and the other's mariadb-install-db failed ("Unknown
/// table 'mysql.tmp_user_sys'").
fn own_tmpdir(root: &Path, owner: Option<(u32, u32)>) -> Result<String, SqlError> {
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp)
        .map_err(|e| SqlError::Input(format!("{}: {e}", tmp.display())))?;
    if let Some((uid, gid)) = owner {
        super::chown(&tmp, uid, gid)?;
    }
    Ok(format!("--tmpdir={}", tmp.display()))
}

/// The arguments every program of one server is given: its my.cnf and its tmpdir.
struct Args {
    /// `--defaults-file=…/my.cnf`.
    defaults: String,
    /// `--tmpdir=…/tmp`.
    tmpdir: String,
}

/// Initialises the data directory: mariadb-install-db, or mysqld --initialize-insecure
/// for MySQL; a failure says what the tool printed and the end of the server's log.
fn initialise(
    choice: &ServerChoice,
    programs: &Programs,
    args: &Args,
    m: &Managed,
) -> Result<(), SqlError> {
    let mut init = if choice.flavor == Flavor::MySql {
        let mut c = Command::new(&programs.server);
        c.arg(&args.defaults)
            .arg("--initialize-insecure")
            .arg(&args.tmpdir);
        c
    } else {
        let tool = find(
            programs.base.as_deref(),
            &["mariadb-install-db", "mysql_install_db"],
        )
        .ok_or_else(|| missing(choice, "mariadb-install-db"))?;
        let mut c = Command::new(tool);
        c.arg(&args.defaults)
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .arg(&args.tmpdir);
        if let Some(b) = &programs.base {
            c.arg(format!("--basedir={}", b.display()));
        }
        c
    };
    let out = init.output().map_err(|e| SqlError::Server {
        what: format!("initialising the data directory: {e}"),
        log: Vec::new(),
    })?;
    if !out.status.success() {
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .chain(String::from_utf8_lossy(&out.stderr).lines())
            .map(str::to_string)
            .collect();
        lines.extend(m.log_tail(10));
        let n = lines.len();
        return Err(SqlError::Server {
            what: format!("initialising the data directory failed ({})", out.status),
            log: lines[n.saturating_sub(20)..].to_vec(),
        });
    }
    Ok(())
}

/// The server's log, created for the server's user to append to.
fn create_log(log: &Path, owner: Option<(u32, u32)>) -> Result<(), SqlError> {
    let logf = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| SqlError::Input(format!("{}: {e}", log.display())))?;
    if let Some((uid, gid)) = owner {
        super::chown(log, uid, gid)?;
    }
    drop(logf);
    Ok(())
}

/// What builds the command that runs the server in its own session, its output
/// appended to its log: for the first start and for every restart after a crash.
fn launcher(programs: &Programs, args: &Args, log: &Path) -> impl Fn() -> Command + Send + 'static {
    let (server, defaults, log) = (
        programs.server.clone(),
        args.defaults.clone(),
        log.to_path_buf(),
    );
    let tmpdir = args.tmpdir.clone();
    // Its plugins (ha_rocksdb.so), messages and character sets from its own install.
    let basedir = programs
        .base
        .as_ref()
        .map(|b| format!("--basedir={}", b.display()));
    move || {
        let mut cmd = Command::new(&server);
        cmd.arg(&defaults)
            .arg(&tmpdir)
            .args(basedir.iter())
            .stdin(Stdio::null());
        // Its output goes to its log (appended: a restart keeps what came before).
        match std::fs::OpenOptions::new().append(true).open(&log) {
            Ok(f) => {
                if let Ok(g) = f.try_clone() {
                    cmd.stdout(g);
                }
                cmd.stderr(f);
            }
            Err(_) => {
                cmd.stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        // SAFETY: setsid is async-signal-safe and touches no memory.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        cmd
    }
}

/// Spawns the server, keeps how to start it again, and how to stop it.
fn launch(m: &mut Managed, programs: &Programs, args: &Args) -> Result<(), SqlError> {
    let launch = launcher(programs, args, &m.log);
    let mut cmd = launch();
    m.relaunch = Some(super::Relaunch::Spawns(Box::new(launch)));
    let child = cmd.spawn().map_err(|e| SqlError::Server {
        what: format!("starting {}: {e}", programs.server.display()),
        log: Vec::new(),
    })?;
    m.pid = child.id();
    m.child = Some(child);
    let mut stop = Command::new(&programs.admin);
    stop.arg(&args.defaults).args(["-u", "root", "shutdown"]);
    m.stop_cmd.push(stop);
    Ok(())
}

/// A connection once the server answers (up to 120 s), or why it never did.
fn wait_until_it_answers(
    m: &mut Managed,
    server: &Path,
) -> Result<Box<dyn crate::client::SqlClient>, SqlError> {
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        if !m.alive() {
            m.stop_cmd.clear();
            return Err(m.error(format!("{} exited while starting", server.display())));
        }
        match m.endpoint.connect() {
            Ok(c) => return Ok(c),
            Err(e) if Instant::now() > until => {
                return Err(m.error(format!("the server did not answer within 120 s: {e}")))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// The running server's version read, MyRocks checked to be loaded when asked for, and
/// the `plumb` database made for the steps.
fn ready(
    m: &mut Managed,
    c: &mut dyn crate::client::SqlClient,
    engine: StorageEngine,
) -> Result<(), SqlError> {
    let v = c.rows("SELECT VERSION() AS v")?;
    m.version = v
        .first()
        .and_then(|r| r.first())
        .and_then(|(_, v)| v.clone())
        .unwrap_or_default();
    if engine == StorageEngine::RocksDb {
        let e =
            c.rows("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")?;
        let ok = e
            .first()
            .and_then(|r| r.first())
            .and_then(|(_, v)| v.as_deref())
            .is_some_and(|s| s == "YES" || s == "DEFAULT");
        if !ok {
            return Err(m.error(
                "MyRocks is not loaded (no ROCKSDB in information_schema.ENGINES); \
                 `apt-get install mariadb-plugin-rocksdb` (scripts/setup.sh does)",
            ));
        }
    }
    c.batch("CREATE DATABASE plumb")?;
    m.endpoint.database = "plumb".into();
    Ok(())
}

pub(super) fn start(choice: &ServerChoice, opts: &StartOptions) -> Result<Managed, SqlError> {
    if opts.waldir.is_some() {
        return Err(SqlError::Input(
            "--waldir is PostgreSQL's (initdb --waldir); MariaDB's redo log goes where \
             innodb_log_group_home_dir says: set it in a --config template"
                .into(),
        ));
    }
    let programs = programs(choice)?;
    let port = port(opts.port)?;
    let owner = owner()?;
    let (root, swept) = make_root(opts, choice.flavor, owner)?;
    let config_text = write_config(choice, opts, &root, port, owner)?;
    let mut m = Managed::new_in(
        choice.flavor,
        root.clone(),
        Endpoint {
            protocol: Protocol::MySql,
            socket: Some(root.join("mysqld.sock")),
            host: "127.0.0.1".into(),
            port,
            user: "root".into(),
            password: None,
            database: "mysql".into(),
        },
        config_text,
        opts.keep,
    );
    m.swept = swept;
    let args = Args {
        defaults: format!("--defaults-file={}", root.join("my.cnf").display()),
        tmpdir: own_tmpdir(&root, owner)?,
    };
    initialise(choice, &programs, &args, &m)?;
    create_log(&m.log, owner)?;
    launch(&mut m, &programs, &args)?;
    let mut c = wait_until_it_answers(&mut m, &programs.server)?;
    ready(&mut m, c.as_mut(), choice.engine)?;
    Ok(m)
}
