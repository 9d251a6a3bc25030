//! `plumb durability`: does an engine keep every write it acknowledged when the process
//! holding it is killed? A writer process (plumb itself, `durability-writer`) opens the
//! engine and writes keys one by one; after each write returns it tells the recorder
//! (this process), which makes the acknowledgement durable (append + fdatasync to its own
//! file, outside the engine's directory) before it lets the writer go on. The writer is
//! killed with SIGKILL at a random moment, the engine is reopened here, and every
//! acknowledged key must be there with its value. Repeated `--kills` times per engine
//! and sync mode.
//!
//! With `--cut power` the engine's (or server's) directory sits on a power-cut
//! filesystem (plumb-powercut, a FUSE mount this process serves): after the kill,
//! everything written but never fsynced is dropped, as a power failure would, and the
//! engine is reopened on what is left.

use anyhow::{bail, Context};
use plumb_targets::{EngineCommon, EngineSpec};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

/// `plumb durability`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "What a process kill cannot show: the OS page cache survives it, so \
this finds writes an engine kept in its own memory after acknowledging them, not writes \
the OS loses when power fails. `--cut power` shows those: the engine's directory is on a \
FUSE filesystem plumb serves (root and /dev/fuse needed) that keeps file data written \
since the last fsync in memory and drops it after the kill. A device that acknowledges \
flushes it has not done (a volatile write cache) needs a real power cut; `plumb host \
--dir DIR` reports the write cache of the device under DIR (check disk.write_cache).

Examples:
  plumb durability                          # RocksDB, synced and not, 10 kills each
  plumb durability --kv all --kills 20      # every engine in this build
  plumb durability --kv lmdb,sqlite --modes sync --dir /data/plumb
  plumb durability --kv lmdb,sqlite --server postgres --cut power
  plumb durability --kv lmdb,sqlite --modes sync --cut torn --kills 50"
)]
pub struct DurabilityArgs {
    /// Engines, comma-separated, or `all` (every engine in this build that keeps files).
    #[arg(long, default_value = "rocksdb", value_name = "LIST")]
    kv: String,
    /// Modes, comma-separated: sync (each write flushed before it returns), nosync
    /// (written to the OS, not flushed), unlogged (RocksDB's write-ahead log off), or
    /// both (sync and nosync).
    #[arg(long, default_value = "sync,nosync", value_name = "LIST")]
    modes: String,
    /// Servers too, comma-separated: postgres[@MAJOR], innodb, myrocks (MariaDB). Each
    /// is started by plumb, crashed with SIGKILL (every process of it) while a client
    /// commits rows one by one, restarted, and checked. `--kv none` runs only these.
    #[arg(long, value_name = "LIST")]
    server: Option<String>,
    /// How each trial ends, comma-separated: kill (the process is killed with SIGKILL;
    /// what it handed the OS survives), power (killed, then every write no fsync reached
    /// is dropped, as in a power failure: needs root and /dev/fuse), torn (as power, but
    /// a random part of the unsynced writes, whole pages or single 512-byte sectors,
    /// reaches the disk first), or both (kill and power).
    #[arg(long, default_value = "kill", value_name = "LIST")]
    cut: String,
    /// Kills per engine, mode and kind of cut.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    kills: u32,
    /// The longest a writer runs before it is killed, ms (each kill picks a moment at
    /// random up to this, after its first acknowledged write).
    #[arg(long, default_value_t = 400)]
    max_ms: u64,
    /// Where the engines' directories are made [default: /var/tmp]; removed at the end.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Random seed for the kill moments and the values [default: from the clock].
    #[arg(long)]
    seed: Option<u64>,
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
}

/// The hidden writer: opens the engine and writes keys from `--from`, one per
/// acknowledgement the recorder returns.
#[derive(Debug, clap::Args)]
pub struct WriterArgs {
    #[arg(long)]
    kv: String,
    #[arg(long)]
    mode: String,
    #[arg(long)]
    dir: PathBuf,
    #[arg(long)]
    from: u64,
    #[arg(long)]
    seed: u64,
}

fn key(i: u64) -> [u8; 16] {
    let mut k = *b"dur-000000000000";
    let digits = format!("{i:012}");
    k[4..].copy_from_slice(digits.as_bytes());
    k
}

/// The value written under key `i`: 100 bytes that depend on the seed and `i`, so a
/// stale or torn value is told from the right one.
fn value(seed: u64, i: u64) -> [u8; 100] {
    let mut v = [0u8; 100];
    for (n, chunk) in v.chunks_mut(8).enumerate() {
        let h = xxhash_rust::xxh3::xxh3_64_with_seed(&(i * 16 + n as u64).to_le_bytes(), seed);
        chunk.copy_from_slice(&h.to_le_bytes()[..chunk.len()]);
    }
    v
}

/// What an acknowledged write is promised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Flushed to the device before the write returns.
    Sync,
    /// Handed to the OS before the write returns.
    NoSync,
    /// Kept in the engine's memory only (no write-ahead log).
    Unlogged,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::NoSync => "nosync",
            Mode::Unlogged => "unlogged",
        }
    }
    fn parse(s: &str) -> anyhow::Result<Mode> {
        Ok(match s {
            "sync" => Mode::Sync,
            "nosync" => Mode::NoSync,
            "unlogged" => Mode::Unlogged,
            other => bail!("--modes: {other:?}: use sync, nosync, unlogged or both"),
        })
    }
}

/// How a trial ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// SIGKILL: the OS keeps what the process wrote.
    Kill,
    /// SIGKILL, then everything no fsync reached is dropped.
    Power,
    /// SIGKILL, then a random part of what no fsync reached is written (whole pages or
    /// single sectors) and the rest dropped.
    Torn,
}

impl Cut {
    fn name(self) -> &'static str {
        match self {
            Cut::Kill => "kill",
            Cut::Power => "power",
            Cut::Torn => "torn",
        }
    }
    fn parse_list(s: &str) -> anyhow::Result<Vec<Cut>> {
        let mut cuts = Vec::new();
        for c in s.split(',').map(str::trim) {
            match c {
                "kill" => cuts.push(Cut::Kill),
                "power" => cuts.push(Cut::Power),
                "torn" => cuts.push(Cut::Torn),
                "both" => cuts.extend([Cut::Kill, Cut::Power]),
                other => bail!("--cut: {other:?}: use kill, power, torn or both"),
            }
        }
        cuts.dedup();
        Ok(cuts)
    }
    /// Whether the directory sits on a power-cut mount.
    fn powered(self) -> bool {
        self != Cut::Kill
    }
    /// Cuts the power as this kind says (`seed` picks what a torn cut writes).
    fn apply(
        self,
        pc: plumb_powercut::PowerCut,
        seed: u64,
    ) -> anyhow::Result<plumb_powercut::CutReport> {
        let r = match self {
            Cut::Torn => pc.cut_torn(seed),
            _ => pc.cut(),
        };
        r.with_context(|| format!("--cut {}", self.name()))
    }
}

/// The backing directory and mount point of a power-cut trial, made in `work`; both
/// 0755, so a server's own user can reach its files below them.
fn power_dirs(work: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    let (backing, mnt) = (work.join("backing"), work.join("mnt"));
    for d in [&backing, &mnt] {
        std::fs::create_dir(d).with_context(|| format!("making {}", d.display()))?;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok((backing, mnt))
}

fn mount(backing: &Path, mnt: &Path) -> anyhow::Result<plumb_powercut::PowerCut> {
    plumb_powercut::PowerCut::mount(backing, mnt).context("--cut power")
}

fn spec(name: &str, mode: Mode) -> anyhow::Result<EngineSpec> {
    if mode == Mode::Unlogged && EngineSpec::default_for(name).is_ok_and(|s| !s.capabilities().wal)
    {
        bail!("--modes unlogged: {name} has no write-ahead log to turn off");
    }
    let options = (mode == Mode::Unlogged).then(|| serde_json::json!({ "disable_wal": true }));
    let mut s = EngineSpec::with_options(name, options).map_err(|e| {
        anyhow::anyhow!(
            "--kv {name:?} {}: {e}; this build runs {}",
            mode.name(),
            plumb_targets::engines().join(", ")
        )
    })?;
    s.check_built_in()
        .map_err(|e| anyhow::anyhow!("--kv {name}: {e}"))?;
    let caps = s.capabilities();
    if !caps.keeps_files || !caps.stores_data {
        bail!("--kv {name}: it keeps no files, so there is nothing to reopen");
    }
    s.apply_common(&EngineCommon {
        sync: mode == Mode::Sync,
        cache_size: None,
    })
    .and_then(|()| s.validate())
    .map_err(|e| anyhow::anyhow!("--kv {name} {}: {e}", mode.name()))?;
    Ok(s)
}

/// `plumb durability-writer`: never returns while the recorder answers.
pub fn writer(a: WriterArgs) -> anyhow::Result<ExitCode> {
    let target = spec(&a.kv, Mode::parse(&a.mode)?)?.open(Some(&a.dir))?;
    let mut s = target.session()?;
    let (mut out, mut input) = (std::io::stdout().lock(), std::io::stdin().lock());
    let mut byte = [0u8; 1];
    for i in a.from.. {
        s.put(&key(i), &value(a.seed, i))?;
        writeln!(out, "{i}")?;
        out.flush()?;
        // The recorder has made the acknowledgement durable when it answers.
        if input.read(&mut byte)? == 0 {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One engine and mode's result.
#[derive(Debug, serde::Serialize)]
struct Row {
    engine: String,
    mode: &'static str,
    /// kill or power.
    cut: &'static str,
    kills: u32,
    acknowledged: u64,
    lost: u64,
    wrong: u64,
    verdict: String,
}

/// The recorder's durable log of acknowledged keys: 8 bytes each, fdatasync'd.
struct AckLog {
    file: std::fs::File,
    path: PathBuf,
}

impl AckLog {
    fn create(path: PathBuf) -> anyhow::Result<AckLog> {
        let file = std::fs::OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        Ok(AckLog { file, path })
    }
    fn record(&mut self, i: u64) -> anyhow::Result<()> {
        self.file.write_all(&i.to_le_bytes())?;
        self.file.sync_data()?;
        Ok(())
    }
    /// Every key acknowledged so far, read back from the file.
    fn read(&self) -> anyhow::Result<Vec<u64>> {
        let bytes = std::fs::read(&self.path)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect())
    }
}

/// Runs the writer until it is killed; returns whether the kill landed while it wrote.
fn one_kill(
    name: &str,
    mode: Mode,
    dir: &Path,
    from: u64,
    seed: u64,
    kill_after: Duration,
    log: &mut AckLog,
) -> anyhow::Result<bool> {
    let mut child = std::process::Command::new(std::env::current_exe()?)
        .args(["durability-writer", "--kv", name, "--dir"])
        .arg(dir)
        .args(["--from", &from.to_string(), "--seed", &seed.to_string()])
        .args(["--mode", mode.name()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting the writer")?;
    let mut to_child = child.stdin.take().expect("piped");
    let lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let mut deadline: Option<Instant> = None;
    let mut killed = false;
    for line in lines {
        let Ok(line) = line else { break };
        let Ok(i) = line.trim().parse::<u64>() else {
            break;
        };
        log.record(i)?;
        let now = Instant::now();
        let d = *deadline.get_or_insert(now + kill_after);
        if now >= d {
            child.kill()?; // SIGKILL
            killed = true;
            break;
        }
        if to_child.write_all(b"k").is_err() {
            break;
        }
    }
    if !killed {
        let _ = child.kill();
    }
    let out = child.wait_with_output()?;
    if deadline.is_none() {
        bail!(
            "the {name} writer wrote nothing: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(killed)
}

/// Checks every acknowledged key; returns (lost, wrong).
fn verify(
    name: &str,
    mode: Mode,
    dir: &Path,
    seed: u64,
    acked: &[u64],
) -> anyhow::Result<(u64, u64)> {
    let target = spec(name, mode)?
        .open(Some(dir))
        .with_context(|| format!("reopening {name} after the kill"))?;
    let mut s = target.session()?;
    let (mut lost, mut wrong) = (0u64, 0u64);
    for &i in acked {
        let want = value(seed, i);
        let mut same = None;
        s.get(&key(i), &mut |v| same = Some(v == want))?;
        match same {
            None => lost += 1,
            Some(false) => wrong += 1,
            Some(true) => {}
        }
    }
    Ok((lost, wrong))
}

/// A server's table: every commit one row.
const TABLE: &str = "plumb_durability";

fn hex(seed: u64, i: u64) -> String {
    value(seed, i)[..32]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Sets the mode on a fresh connection (and, for MySQL, the server): PostgreSQL's
/// synchronous_commit is per session, MariaDB's flush settings are global and return to
/// the config's value when the server restarts.
fn server_mode(
    c: &mut dyn plumb_sql::client::SqlClient,
    storage: Option<plumb_sql::StorageEngine>,
    mode: Mode,
) -> anyhow::Result<()> {
    if mode == Mode::Sync {
        return Ok(());
    }
    let sql = match storage {
        None => "SET synchronous_commit = off",
        Some(plumb_sql::StorageEngine::InnoDb) => "SET GLOBAL innodb_flush_log_at_trx_commit = 0",
        Some(plumb_sql::StorageEngine::RocksDb) => "SET GLOBAL rocksdb_flush_log_at_trx_commit = 0",
    };
    c.batch(sql)?;
    Ok(())
}

/// One server and mode: commits acknowledged to the client, the server crashed and
/// restarted `kills` times, every acknowledged row checked after each restart. Under a
/// power cut the server's directory is on the mount, the power goes after each crash,
/// and the server restarts on a fresh mount over what survived.
fn run_server(
    label: &str,
    mode: Mode,
    cut: Cut,
    a: &DurabilityArgs,
    seed: u64,
    next_ms: &mut dyn FnMut(u64) -> u64,
    root: &Path,
) -> anyhow::Result<Row> {
    let (server, engine) = match label {
        "innodb" => ("mariadb", Some("innodb")),
        "myrocks" => ("mariadb", Some("rocksdb")),
        other => (other, None),
    };
    let choice = plumb_sql::ServerChoice::parse(server, engine, None)?;
    let storage = (choice.flavor != plumb_sql::Flavor::Postgres).then_some(choice.engine);
    // Traversable: the server runs as its own user, with its files below this.
    let work = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .prefix("plumb-durability-server-")
        .tempdir_in(root)?;
    let power = if cut.powered() {
        Some(power_dirs(work.path())?)
    } else {
        None
    };
    // Declared before the server, so an error path stops the server (dropped first)
    // before the mount goes.
    let mut pc = match &power {
        Some((backing, mnt)) => Some(mount(backing, mnt)?),
        None => None,
    };
    let server_dir = power.as_ref().map_or(work.path(), |(_, mnt)| mnt.as_path());
    let mut m = plumb_sql::Managed::start(
        &choice,
        &plumb_sql::StartOptions {
            dir: Some(server_dir.to_path_buf()),
            keep: false,
            port: None,
            cache_mb: 256,
            config: None,
        },
    )?;
    {
        let mut c = m.endpoint.connect()?;
        let clause = storage
            .map(|e| format!(" ENGINE = {}", e.sql_name()))
            .unwrap_or_default();
        c.batch(&format!(
            "CREATE TABLE {TABLE} (id BIGINT PRIMARY KEY, v VARCHAR(200)){clause}"
        ))?;
    }
    if let Some(p) = &pc {
        // Setup is not under test (initdb runs without fsync): what it wrote is made
        // durable, as a sync(1) before the first trial would.
        p.sync_all().context("--cut power")?;
    }
    let mut log = AckLog::create(work.path().join("acknowledged"))?;
    let (mut lost, mut wrong, mut landed) = (0u64, 0u64, 0u32);
    let mut from = 0u64;
    for _ in 0..a.kills {
        if interrupted() {
            break;
        }
        let mut c = m.endpoint.connect()?;
        server_mode(&mut *c, storage, mode)?;
        let insert = c.prepare(&format!("INSERT INTO {TABLE} (id, v) VALUES (?, ?)"))?;
        let wait = Duration::from_millis(50 + next_ms(a.max_ms));
        let acked_before = log.read()?.len();
        std::thread::scope(|scope| -> anyhow::Result<()> {
            let crasher = scope.spawn(|| {
                std::thread::sleep(wait);
                m.crash();
            });
            for i in from.. {
                let v = hex(seed, i);
                let p = [
                    plumb_sql::client::Param::Int(i as i32),
                    plumb_sql::client::Param::Str(&v),
                ];
                if c.execute(insert, &p).is_err() {
                    break; // the server is gone
                }
                log.record(i)?;
            }
            let _ = crasher.join();
            Ok(())
        })?;
        drop(c);
        if let (Some(p), Some((backing, mnt))) = (pc.take(), &power) {
            cut.apply(p, next_ms(u64::MAX - 1))?;
            pc = Some(mount(backing, mnt)?);
        }
        if let Err(e) = m.restart() {
            // A server that dies while recovering is tried once more: under a loaded CI
            // MyRocks' plugin once failed to start after a crash and started the next
            // time. Said on stderr, with its log, so a server that never recovers still
            // fails the check, and one that needed two tries is not hidden.
            eprintln!("plumb: {label}: restart after the crash failed, trying once more: {e}");
            std::thread::sleep(Duration::from_secs(1));
            m.restart()?;
        }
        let acked = log.read()?;
        landed += u32::from(acked.len() > acked_before);
        let mut c = m.endpoint.connect()?;
        let rows = c.rows(&format!("SELECT id, v FROM {TABLE}"))?;
        let mut have = std::collections::HashMap::new();
        for r in rows {
            let id = r
                .first()
                .and_then(|(_, v)| v.as_deref()?.parse::<u64>().ok());
            let v = r.get(1).and_then(|(_, v)| v.clone());
            if let (Some(id), Some(v)) = (id, v) {
                have.insert(id, v);
            }
        }
        lost = acked.iter().filter(|i| !have.contains_key(i)).count() as u64;
        wrong = acked
            .iter()
            .filter(|i| have.get(i).is_some_and(|v| *v != hex(seed, **i)))
            .count() as u64;
        from = acked
            .last()
            .map_or(from, |x| x + 2)
            .max(have.keys().max().map_or(0, |x| x + 1));
    }
    let acknowledged = log.read()?.len() as u64;
    m.stop()?;
    if let Some(p) = pc.take() {
        p.cut().context("--cut power: unmounting")?;
    }
    Ok(Row {
        engine: format!(
            "{label} {}",
            m.version.split(['-', ' ']).next().unwrap_or("")
        ),
        mode: mode.name(),
        cut: cut.name(),
        kills: landed,
        acknowledged,
        lost,
        wrong,
        verdict: verdict(lost + wrong, mode, false),
    })
}

/// What `n` lost or wrong writes mean in `mode`; `unlogged`: the engine keeps unsynced
/// writes in its own memory (redb's non-durable commits, SplinterDB), so even a kill
/// loses them: the price of its design, not a failure.
fn verdict(n: u64, mode: Mode, unlogged: bool) -> String {
    match (n, mode) {
        (0, _) => "ok: every acknowledged write survived".to_string(),
        (n, Mode::Sync) => format!("FAIL: {n} acknowledged synced writes lost or wrong"),
        (n, Mode::NoSync) if unlogged => {
            format!("{n} lost: unsynced writes live in the engine's memory, without a log")
        }
        (n, Mode::NoSync) => format!("{n} lost: the price of writing without sync"),
        (n, Mode::Unlogged) => format!("{n} lost: the price of writing without a log"),
    }
}

/// One engine, mode and kind of cut: `--kills` trials on one directory, every
/// acknowledged key checked after each.
fn run_engine(
    name: &str,
    mode: Mode,
    cut: Cut,
    a: &DurabilityArgs,
    seed: u64,
    next_ms: &mut dyn FnMut(u64) -> u64,
    root: &Path,
) -> anyhow::Result<Row> {
    let work = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .prefix(&format!("plumb-durability-{name}-"))
        .tempdir_in(root)
        .with_context(|| format!("--dir: making a directory in {}", root.display()))?;
    // Under a power cut the writer works in the mount and the engine is reopened on
    // the backing directory: what survived.
    let (engine_dir, power) = if cut.powered() {
        let (backing, mnt) = power_dirs(work.path())?;
        (backing.join("db"), Some((backing, mnt)))
    } else {
        (work.path().join("db"), None)
    };
    std::fs::create_dir(&engine_dir)?;
    // The recorder's log lives beside the engine's directory, not in it.
    let mut log = AckLog::create(work.path().join("acknowledged"))?;
    let (mut lost, mut wrong, mut landed) = (0u64, 0u64, 0u32);
    let (mut dropped_bytes, mut syncs) = (0u64, 0u64);
    let mut from = 0u64;
    let mut unopenable = None;
    for _ in 0..a.kills {
        if interrupted() {
            break;
        }
        let kill = Duration::from_millis(next_ms(a.max_ms));
        let killed = match &power {
            None => one_kill(name, mode, &engine_dir, from, seed, kill, &mut log)?,
            Some((backing, mnt)) => {
                let pc = mount(backing, mnt)?;
                let killed = one_kill(name, mode, &mnt.join("db"), from, seed, kill, &mut log);
                // The writer is gone: the power goes (also when the trial failed).
                let report = cut.apply(pc, next_ms(u64::MAX - 1))?;
                dropped_bytes += report.bytes;
                syncs += report.syncs;
                killed?
            }
        };
        landed += u32::from(killed);
        let acked = log.read()?;
        match verify(name, mode, &engine_dir, seed, &acked) {
            Ok((l, w)) => (lost, wrong) = (l, w),
            Err(e) => {
                // An engine that does not open after a kill has lost everything.
                lost = acked.len() as u64;
                unopenable = Some(format!("{e:#}"));
                break;
            }
        }
        // The next writer starts past every key written, acknowledged or not.
        from = acked.last().map_or(from, |x| x + 2);
    }
    let acknowledged = log.read()?.len() as u64;
    let verdict = match &unopenable {
        Some(e) => {
            eprintln!("plumb: {name} {}: {e}", mode.name());
            format!(
                "{}: does not open after a {}, so all {lost} are lost",
                if mode == Mode::Sync { "FAIL" } else { "lost" },
                if cut.powered() { "power cut" } else { "kill" }
            )
        }
        None => verdict(
            lost + wrong,
            mode,
            spec(name, mode)?.durability() == plumb_targets::Durability::Unlogged,
        ),
    };
    let power_note = if cut.powered() {
        format!(
            ", {} KiB unsynced dropped at the cuts, {syncs} fsyncs served",
            dropped_bytes / 1024
        )
    } else {
        String::new()
    };
    eprintln!(
        "plumb: {name} {} ({}): {landed} kills, {acknowledged} writes acknowledged, {lost} lost, {wrong} wrong{power_note}",
        mode.name(),
        cut.name()
    );
    Ok(Row {
        engine: name.to_string(),
        mode: mode.name(),
        cut: cut.name(),
        kills: landed,
        acknowledged,
        lost,
        wrong,
        verdict,
    })
}

/// Whether Ctrl-C (or SIGTERM) asked to stop: the trial under way ends as usual (its
/// mount cut and removed, its server stopped) and no other starts.
fn interrupted() -> bool {
    super::execute::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs `plumb durability`.
pub fn run(a: DurabilityArgs) -> anyhow::Result<ExitCode> {
    let engines: Vec<String> = if a.kv == "none" {
        Vec::new()
    } else if a.kv == "all" {
        plumb_targets::engines()
            .into_iter()
            .filter(|n| {
                EngineSpec::default_for(n).is_ok_and(|s| {
                    let c = s.capabilities();
                    c.keeps_files && c.stores_data
                })
            })
            .map(str::to_string)
            .collect()
    } else {
        a.kv.split(',').map(|s| s.trim().to_string()).collect()
    };
    let mut modes = Vec::new();
    for m in a.modes.split(',').map(str::trim) {
        match m {
            "both" => modes.extend([Mode::Sync, Mode::NoSync]),
            m => modes.push(Mode::parse(m)?),
        }
    }
    if a.max_ms == 0 {
        bail!("--max-ms: give at least 1 ms");
    }
    let cuts = Cut::parse_list(&a.cut)?;
    // Check every engine and mode first: nothing runs on bad input.
    let mut plan = Vec::new();
    let all = a.kv == "all";
    for e in &engines {
        for &mode in &modes {
            // With `all`, an engine is run in the modes it offers (SplinterDB cannot
            // sync; only RocksDB has a log to turn off); named engines are held to the
            // modes asked.
            let caps = EngineSpec::default_for(e).map(|s| s.capabilities());
            if all
                && caps.is_ok_and(|c| {
                    (mode == Mode::Sync && !c.can_sync) || (mode == Mode::Unlogged && !c.wal)
                })
            {
                continue;
            }
            spec(e, mode)?;
            plan.push((e.clone(), mode));
        }
    }
    let servers: Vec<&str> = a
        .server
        .iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .collect();
    for label in &servers {
        if !matches!(*label, "innodb" | "myrocks") {
            plumb_sql::ServerChoice::parse(label, None, None).map_err(|e| {
                anyhow::anyhow!("--server {label}: {e}; use postgres[@MAJOR], innodb or myrocks")
            })?;
        }
        if modes.contains(&Mode::Unlogged) {
            bail!("--modes unlogged: servers always log; use sync or nosync with --server");
        }
    }
    if plan.is_empty() && servers.is_empty() {
        bail!("--kv none: name at least one --server");
    }
    let seed = a.seed.unwrap_or_else(super::execute::clock_seed);
    let root = a.dir.clone().unwrap_or_else(|| PathBuf::from("/var/tmp"));
    if cuts.iter().any(|c| c.powered()) {
        for gone in plumb_powercut::sweep_stale(&root) {
            eprintln!(
                "plumb: unmounted {}, a power-cut mount left by a plumb that was killed",
                gone.display()
            );
        }
    }
    let mut rng = seed | 1;
    let mut next_ms = |max: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        1 + rng % max
    };
    let _ = ctrlc::set_handler(|| {
        super::execute::INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed)
    });
    let mut rows = Vec::new();
    for (name, mode) in plan {
        for &cut in &cuts {
            if interrupted() {
                break;
            }
            rows.push(run_engine(&name, mode, cut, &a, seed, &mut next_ms, &root)?);
        }
    }
    for label in servers {
        for &mode in &modes {
            for &cut in &cuts {
                if interrupted() {
                    break;
                }
                let r = run_server(label, mode, cut, &a, seed, &mut next_ms, &root).with_context(
                    || format!("--server {label} {} --cut {}", mode.name(), cut.name()),
                )?;
                eprintln!(
                    "plumb: {} {} ({}): {} kills, {} commits acknowledged, {} lost, {} wrong",
                    r.engine, r.mode, r.cut, r.kills, r.acknowledged, r.lost, r.wrong
                );
                rows.push(r);
            }
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        let mut t = plumb_report::table_left(&[
            "engine",
            "mode",
            "cut",
            "kills",
            "acknowledged",
            "lost",
            "wrong",
            "verdict",
        ]);
        for r in &rows {
            t.add_row(vec![
                r.engine.clone(),
                r.mode.to_string(),
                r.cut.to_string(),
                r.kills.to_string(),
                r.acknowledged.to_string(),
                r.lost.to_string(),
                r.wrong.to_string(),
                r.verdict.clone(),
            ]);
        }
        println!("{t}");
        println!(
            "\nThe embedded engines' writer, and each server with all its processes, were \
             killed with SIGKILL. cut kill: the OS page cache survived, so this finds writes \
             held in the process's own memory after they were acknowledged. cut power: then \
             every write no fsync reached was dropped (plumb's FUSE filesystem under the \
             data directory), as the OS loses them when power fails; metadata counts as \
             written at once. cut torn: as power, but a random part of the unsynced \
             writes (whole pages or single 512-byte sectors) reached the disk first. A device that loses flushed writes \
             needs a real power cut to show (`plumb host --dir DIR`: check \
             disk.write_cache). Server nosync: PostgreSQL synchronous_commit = off, InnoDB \
             and MyRocks flush_log_at_trx_commit = 0."
        );
    }
    let failed = rows
        .iter()
        .any(|r| r.mode == "sync" && r.lost + r.wrong > 0);
    Ok(if interrupted() {
        eprintln!("plumb: interrupted: the table holds the trials that ran");
        ExitCode::from(130)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
