//! The durability trials of an embedded engine: a writer process (plumb itself, as
//! `durability-writer`) opens the engine and writes keys one by one; after each write
//! returns it tells the recorder (this process), which makes the acknowledgement
//! durable before it lets the writer go on. The writer is killed with SIGKILL at a
//! random moment, the engine is reopened here, and every acknowledged key must be
//! there with its value. Under a power cut the writer works on the mount and the
//! engine is reopened on the backing directory: what survived.

use super::trial::{self, AckLog, Moments};
use crate::TrialError;
use plumb_core::DurabilitySummary;
use plumb_plan::{Cut, DurabilityMode};
use plumb_targets::EngineSpec;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The writer's loop (`plumb durability-writer`): opens `spec` in `dir` and writes
/// keys from `from`, one per answer of the recorder; returns when the recorder stops
/// answering (it kills the writer first, as a rule).
pub fn write_until_killed(
    spec: &EngineSpec,
    dir: &Path,
    from: u64,
    seed: u64,
) -> Result<(), TrialError> {
    let target = spec.open(Some(dir))?;
    let mut s = target.session()?;
    let (mut out, mut input) = (std::io::stdout().lock(), std::io::stdin().lock());
    let mut byte = [0u8; 1];
    for i in from.. {
        s.put(&trial::key(i), &trial::value(seed, i))?;
        writeln!(out, "{i}").map_err(TrialError::Pipe)?;
        out.flush().map_err(TrialError::Pipe)?;
        // The recorder has made the acknowledgement durable when it answers.
        if input.read(&mut byte).map_err(TrialError::Pipe)? == 0 {
            break;
        }
    }
    Ok(())
}

/// Starts the writer process (plumb itself) on `spec` in `dir`, writing keys from
/// `from`, its stdin, stdout and stderr piped.
pub(crate) fn spawn_writer(
    spec: &EngineSpec,
    dir: &Path,
    from: u64,
    seed: u64,
) -> Result<std::process::Child, TrialError> {
    let exe = std::env::current_exe().map_err(TrialError::CurrentExe)?;
    let spec_json = serde_json::to_string(spec).map_err(TrialError::Spec)?;
    std::process::Command::new(exe)
        .args(["durability-writer", "--spec", &spec_json])
        .arg("--dir")
        .arg(dir)
        .args(["--from", &from.to_string(), "--seed", &seed.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| TrialError::StartWriter { source })
}

/// One trial in the engine's own process: runs the writer until it is killed; returns
/// whether the kill landed while it wrote.
fn one_kill(
    spec: &EngineSpec,
    dir: &Path,
    (from, seed): (u64, u64),
    kill_after: Duration,
    log: &mut AckLog,
) -> Result<bool, TrialError> {
    let mut child = spawn_writer(spec, dir, from, seed)?;
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
            child.kill().map_err(TrialError::Pipe)?; // SIGKILL
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
    let out = child.wait_with_output().map_err(TrialError::Pipe)?;
    if deadline.is_none() {
        return Err(TrialError::WroteNothing {
            engine: spec.name(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(killed)
}

/// Checks every acknowledged key; returns (lost, wrong).
fn verify(
    spec: &EngineSpec,
    dir: &Path,
    seed: u64,
    acked: &[u64],
) -> Result<(u64, u64), TrialError> {
    let target = spec.open(Some(dir)).map_err(|source| TrialError::Reopen {
        engine: spec.name(),
        source,
    })?;
    let mut s = target.session()?;
    let (mut lost, mut wrong) = (0u64, 0u64);
    for &i in acked {
        let want = trial::value(seed, i);
        let mut same = None;
        s.get(&trial::key(i), &mut |v| same = Some(v == want))?;
        match same {
            None => lost += 1,
            Some(false) => wrong += 1,
            Some(true) => {}
        }
    }
    Ok((lost, wrong))
}

/// What one engine step runs: the engine as the writer opens it in its mode, the
/// kind of cut, and the knobs.
pub struct Step<'a> {
    /// The target's name, as the table says it.
    pub label: &'a str,
    /// The engine with the mode applied.
    pub spec: &'a EngineSpec,
    /// The mode.
    pub mode: DurabilityMode,
    /// The kind of cut.
    pub cut: Cut,
    /// Trials.
    pub kills: u32,
    /// The longest a writer runs, ms.
    pub max_ms: u64,
    /// A file's fsync makes its names durable too (`--dir-entries ext4`).
    pub ext4: bool,
    /// The run's seed (the values).
    pub seed: u64,
}

/// One engine, mode and kind of cut: `kills` trials on one directory made in `root`,
/// every acknowledged key checked after each; stops before a trial once `interrupt`
/// is set. The directory goes at the end.
pub fn trials(
    s: &Step<'_>,
    moments: &mut Moments,
    root: &Path,
    interrupt: &AtomicBool,
    notes: &dyn plumb_runner::Progress,
) -> Result<DurabilitySummary, TrialError> {
    let name = s.spec.name();
    let work = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .prefix(&format!("plumb-durability-{name}-"))
        .tempdir_in(root)
        .map_err(|source| TrialError::WorkDir {
            root: root.to_path_buf(),
            source,
        })?;
    let (engine_dir, power) = if s.cut.powered() {
        let (backing, mnt) = trial::power_dirs(work.path())?;
        (backing.join("db"), Some((backing, mnt)))
    } else {
        (work.path().join("db"), None)
    };
    std::fs::create_dir(&engine_dir).map_err(TrialError::DirSetup)?;
    // The recorder's log lives beside the engine's directory, not in it.
    let mut log = AckLog::create(work.path().join("acknowledged"))?;
    let (mut lost, mut wrong, mut landed) = (0u64, 0u64, 0u32);
    let (mut dropped_bytes, mut syncs) = (0u64, 0u64);
    let mut from = 0u64;
    let mut unopenable = None;
    let mut trials = 0u32;
    for _ in 0..s.kills {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        trials += 1;
        let kill = Duration::from_millis(moments.next(s.max_ms));
        let killed = match &power {
            None => one_kill(s.spec, &engine_dir, (from, s.seed), kill, &mut log)?,
            Some((backing, mnt)) => {
                let pc = trial::mount(backing, mnt, s.ext4)?;
                let killed = one_kill(s.spec, &mnt.join("db"), (from, s.seed), kill, &mut log);
                // The writer is gone: the power goes (also when the trial failed).
                let report = trial::apply(s.cut, pc, moments.seed())?;
                dropped_bytes += report.bytes;
                syncs += report.syncs;
                killed?
            }
        };
        landed += u32::from(killed);
        let acked = log.read()?;
        match verify(s.spec, &engine_dir, s.seed, &acked) {
            Ok((l, w)) => (lost, wrong) = (l, w),
            Err(e) => {
                // An engine that does not open after a kill has lost everything.
                lost = acked.len() as u64;
                unopenable = Some(plumb_runner::failure::chain(&e));
                break;
            }
        }
        // The next writer starts past every key written, acknowledged or not.
        from = acked.last().map_or(from, |x| x + 2);
    }
    let acknowledged = log.read()?.len() as u64;
    let verdict = match &unopenable {
        Some(e) => {
            notes.note(&format!("{name} {}: {e}", s.mode.name()));
            format!(
                "{}: does not open after a {}, so all {lost} are lost",
                if s.mode.promises() { "FAIL" } else { "lost" },
                if s.cut.powered() { "power cut" } else { "kill" }
            )
        }
        None => trial::verdict(
            lost + wrong,
            s.mode,
            s.spec.durability() == plumb_targets::Durability::Unlogged,
        ),
    };
    let power_note = if s.cut.powered() {
        format!(
            ", {} KiB unsynced dropped at the cuts, {syncs} fsyncs served",
            dropped_bytes / 1024
        )
    } else {
        String::new()
    };
    notes.note(&format!(
        "{name} {} ({}): {landed} kills, {acknowledged} writes acknowledged, {lost} lost, {wrong} wrong{power_note}",
        s.mode.name(),
        s.cut.name()
    ));
    Ok(DurabilitySummary {
        target: s.label.to_string(),
        mode: s.mode.name().into(),
        cut: s.cut.name(),
        kills_planned: s.kills,
        trials,
        kills: landed,
        acknowledged,
        lost,
        wrong,
        verdict,
        unopenable,
        dropped_bytes: s.cut.powered().then_some(dropped_bytes),
        syncs: s.cut.powered().then_some(syncs),
        points: None,
    })
}
