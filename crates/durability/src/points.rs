//! Crash points (`--cut at=fsync:N`, `at=fsync:all`): instead of a kill at a random
//! moment, the power goes right after the N-th fsync-family call (or rename, or
//! unlink) the writer's engine makes. The power-cut filesystem counts the calls and,
//! at the N-th, lets it complete and then freezes (every later request fails with
//! EIO); the writer is killed, the power cut (unsynced data and unsynced directory
//! entries dropped), the engine reopened on what survived, every acknowledged write
//! checked, and the engine's own integrity check run where it has one. A sweep first
//! runs the same writes with no crash point to count the points, then tries each one,
//! every point on a fresh directory, so each trial sees the same writes up to its
//! point: the moments a random kill would almost never hit (between a file's fsync and
//! its directory's, inside a rename) are each tried once.

use crate::engine::{spawn_writer, Step};
use crate::trial::{self, AckLog};
use crate::TrialError;
use plumb_core::{CrashPointsSummary, DurabilitySummary};
use plumb_plan::PointKind;
use plumb_powercut::{CrashPoint, CutReport, PowerCut};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Writes per point: enough for an engine to open, write through its log and close
/// (a few dozen points each), few enough that a sweep of every point stays short.
pub const WRITES: u64 = 40;

/// How long one point's writer may run before it is killed all the same: a writer
/// that neither reaches its point nor finishes is stuck, not slow.
const STUCK: Duration = Duration::from_secs(120);

/// The failures a step lists by name; the counts hold them all.
const LISTED: usize = 10;

fn kind(k: PointKind) -> plumb_powercut::PointKind {
    match k {
        PointKind::Fsync => plumb_powercut::PointKind::Fsync,
        PointKind::Rename => plumb_powercut::PointKind::Rename,
        PointKind::Unlink => plumb_powercut::PointKind::Unlink,
    }
}

/// What one point's trial found.
struct Tried {
    acked: u64,
    /// What the writer said on its way out.
    stderr: String,
    report: CutReport,
    /// (lost, wrong), or why the engine did not open.
    check: Result<(u64, u64), String>,
    /// The engine's own check: its name and why it failed.
    integrity: Option<(&'static str, Option<String>)>,
}

/// Runs the writer on the mount until it has written [`WRITES`] keys (then it closes
/// the engine and exits) or the filesystem froze at its crash point (then it is
/// killed), recording each acknowledgement; returns what the writer said on stderr.
fn write_until_point(
    s: &Step<'_>,
    dir: &Path,
    pc: &PowerCut,
    log: &mut AckLog,
) -> Result<String, TrialError> {
    let mut child = spawn_writer(s.spec, dir, 0, s.seed)?;
    let pid = child.id() as libc::pid_t;
    let mut to_child = child.stdin.take();
    let lines = BufReader::new(child.stdout.take().ok_or_else(|| {
        TrialError::Pipe(std::io::Error::other("the writer's stdout was not piped"))
    })?)
    .lines();
    let done = AtomicBool::new(false);
    let recorded = std::thread::scope(|scope| {
        scope.spawn(|| {
            let until = Instant::now() + STUCK;
            while !done.load(Ordering::Relaxed) {
                if pc.frozen() || Instant::now() >= until {
                    // SAFETY: the child is not reaped before this thread ends, so the
                    // pid is still its own.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let mut n = 0u64;
        let r = (|| -> Result<(), TrialError> {
            for line in lines {
                let Ok(line) = line else { break };
                let Ok(i) = line.trim().parse::<u64>() else {
                    break;
                };
                log.record(i)?;
                n += 1;
                if n >= WRITES {
                    // End of input: the writer closes the engine and exits.
                    to_child = None;
                } else if let Some(w) = to_child.as_mut() {
                    if w.write_all(b"k").is_err() {
                        break;
                    }
                }
            }
            Ok(())
        })();
        done.store(true, Ordering::Relaxed);
        r
    });
    drop(to_child);
    let out = child.wait_with_output().map_err(TrialError::Pipe)?;
    recorded?;
    Ok(String::from_utf8_lossy(&out.stderr).trim().to_string())
}

/// One trial: a fresh directory in `root`, the writer run to `point` (or to its end),
/// the cut, the reopen and the checks.
fn try_point(s: &Step<'_>, root: &Path, point: Option<CrashPoint>) -> Result<Tried, TrialError> {
    let work = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .prefix(&format!("plumb-durability-{}-", s.spec.name()))
        .tempdir_in(root)
        .map_err(|source| TrialError::WorkDir {
            root: root.to_path_buf(),
            source,
        })?;
    let (backing, mnt) = trial::power_dirs(work.path())?;
    // Made before the mount: the engine's directory itself is durable.
    std::fs::create_dir(backing.join("db")).map_err(TrialError::DirSetup)?;
    let mut log = AckLog::create(work.path().join("acknowledged"))?;
    let pc = trial::mount(&backing, &mnt, s.ext4)?;
    if let Some(p) = point {
        pc.arm(p);
    }
    let wrote = write_until_point(s, &mnt.join("db"), &pc, &mut log);
    let report = trial::apply(s.cut, pc, 0)?;
    let stderr = wrote?;
    let acked = log.read()?;
    let dir = backing.join("db");
    let opened = s
        .spec
        .open(Some(&dir))
        .map_err(|source| TrialError::Reopen {
            engine: s.spec.name(),
            source,
        });
    let (check, integrity) = match opened {
        Err(e) => (Err(plumb_runner::failure::chain(&e)), None),
        Ok(target) => {
            let mut sess = target.session()?;
            let (mut lost, mut wrong) = (0u64, 0u64);
            for &i in &acked {
                let want = trial::value(s.seed, i);
                let mut same = None;
                sess.get(&trial::key(i), &mut |v| same = Some(v == want))?;
                match same {
                    None => lost += 1,
                    Some(false) => wrong += 1,
                    Some(true) => {}
                }
            }
            drop(sess);
            let integrity = target
                .integrity_check()
                .map(|(name, r)| (name, r.err().map(|e| e.to_string())));
            (Ok((lost, wrong)), integrity)
        }
    };
    Ok(Tried {
        acked: acked.len() as u64,
        stderr,
        report,
        check,
        integrity,
    })
}

/// A crash-point step: every point of `which` (`None`: count them first, then try
/// each), stopping before a point once `interrupt` is set.
pub fn sweep(
    s: &Step<'_>,
    (k, which): (PointKind, Option<u64>),
    root: &Path,
    interrupt: &AtomicBool,
    notes: &dyn plumb_runner::Progress,
) -> Result<DurabilitySummary, TrialError> {
    let name = s.spec.name();
    let (counted, list): (u64, Vec<u64>) = match which {
        Some(n) => (0, vec![n]),
        None => {
            let first = try_point(s, root, None)?;
            if first.acked == 0 {
                // The run that counts the points has no crash point: it must write.
                return Err(TrialError::WroteNothing {
                    engine: name,
                    stderr: first.stderr,
                });
            }
            let c = first.report.points.get(kind(k));
            notes.note(&format!(
                "{name} {}: {c} {} points in {WRITES} writes (open and close included)",
                s.mode.name(),
                k.name()
            ));
            (c, (1..=c).collect())
        }
    };
    let planned = list.len() as u32;
    let mut p = CrashPointsSummary {
        kind: k.name().into(),
        counted,
        check: "reading every acknowledged key".into(),
        ..CrashPointsSummary::default()
    };
    let (mut acknowledged, mut lost, mut wrong, mut syncs) = (0u64, 0u64, 0u64, 0u64);
    let mut dropped_bytes = 0u64;
    let mut first_unopenable = None;
    for n in list {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        let point = CrashPoint { kind: kind(k), n };
        let t = try_point(s, root, Some(point))?;
        p.tried += 1;
        p.not_reached += u32::from(!t.report.frozen);
        acknowledged += t.acked;
        dropped_bytes += t.report.bytes;
        syncs += t.report.syncs;
        let mut broken = Vec::new();
        match &t.check {
            Ok((l, w)) => {
                lost += l;
                wrong += w;
                if l + w > 0 {
                    p.lost += 1;
                    broken.push(format!(
                        "{l} lost and {w} wrong of {} acknowledged",
                        t.acked
                    ));
                }
            }
            Err(e) => {
                lost += t.acked;
                p.unopened += 1;
                if t.acked > 0 {
                    p.lost += 1;
                }
                broken.push(format!("does not reopen: {e}"));
                first_unopenable.get_or_insert_with(|| format!("{} {n}: {e}", k.name()));
            }
        }
        if let Some((check, failed)) = &t.integrity {
            p.check = format!("{check} and reading every acknowledged key");
            if let Some(e) = failed {
                p.integrity_failed += 1;
                broken.push(format!("{check} failed: {e}"));
            }
        }
        if !broken.is_empty() {
            let what = format!("{} {n}: {}", k.name(), broken.join("; "));
            notes.note(&format!("{name} {} at {what}", s.mode.name()));
            if p.failures.len() < LISTED {
                p.failures.push(what);
            }
        }
    }
    let bad = p.lost + p.unopened + p.integrity_failed;
    let verdict = if p.tried == 0 {
        format!(
            "no crash points: the engine made no {} call in {WRITES} writes",
            k.name()
        )
    } else if bad == 0 {
        format!(
            "ok: {} crash points, every one reopened and kept every acknowledged write",
            p.tried
        )
    } else {
        format!(
            "{}: of {} crash points {} lost acknowledged writes, {} did not reopen, {} failed {}",
            if s.mode.promises() { "FAIL" } else { "price" },
            p.tried,
            p.lost,
            p.unopened,
            p.integrity_failed,
            p.check
        )
    };
    notes.note(&format!(
        "{name} {} ({}): {} points tried ({} not reached), {acknowledged} writes acknowledged in all, \
         {} points lost writes, {} did not reopen, {} failed {}",
        s.mode.name(),
        s.cut.name(),
        p.tried,
        p.not_reached,
        p.lost,
        p.unopened,
        p.integrity_failed,
        p.check
    ));
    Ok(DurabilitySummary {
        target: s.label.to_string(),
        mode: s.mode.name().into(),
        cut: s.cut.name(),
        kills_planned: planned,
        trials: p.tried,
        kills: p.tried,
        acknowledged,
        lost,
        wrong,
        verdict,
        unopenable: first_unopenable,
        dropped_bytes: Some(dropped_bytes),
        syncs: Some(syncs),
        points: Some(p),
    })
}
