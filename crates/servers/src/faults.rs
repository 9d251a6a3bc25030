//! Faults done to a managed server while a step's clients run ([`ServerFaults`], the
//! kernel's [`Injector`] for a server plumb started), and the recovery's phases read
//! back from the lines the server logged meanwhile ([`phases`]): PostgreSQL's crash
//! recovery (redo, the end-of-recovery checkpoint, its data directory's fsync scan when
//! it is long enough to report) and InnoDB's (crash recovery from the checkpoint, the
//! final batch of redo), and the shutdown before a planned restart.

use crate::{Flavor, Managed};
use plumb_core::RecoveryPhase;
use plumb_runner::kernel::{Injection, Injector};
use plumb_workloads::FaultKind;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// A managed server as the kernel's fault thread sees it: the one thing that touches it
/// while the step's clients run.
pub struct ServerFaults<'m> {
    server: Mutex<&'m mut Managed>,
}

impl<'m> ServerFaults<'m> {
    /// Faults on `server` (started by plumb: an external one cannot be killed).
    pub fn new(server: &'m mut Managed) -> ServerFaults<'m> {
        ServerFaults {
            server: Mutex::new(server),
        }
    }
}

/// Whether `kind` can be done to a managed server here; why not, otherwise.
pub fn refuse(kind: &FaultKind) -> Option<String> {
    match kind {
        FaultKind::DiskStall { .. } => Some(
            "kind=disk-stall is not measured yet: it needs the server's data on a device plumb \
             can stall (dm-delay or dm-flakey over a loop device) and this kernel has no \
             device-mapper (no device-mapper line in /proc/misc); use kind=sigstop:DUR for a \
             hung server"
                .into(),
        ),
        _ => None,
    }
}

impl Injector for ServerFaults<'_> {
    fn inject(&self, kind: &FaultKind) -> Injection {
        let mut m = match self.server.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let wall = SystemTime::now();
        let offset = std::fs::metadata(&m.log).map(|md| md.len()).unwrap_or(0);
        let done: Result<(), String> = match *kind {
            FaultKind::Kill => {
                m.crash();
                m.restart().map_err(|e| e.to_string())
            }
            FaultKind::Restart => m
                .shutdown()
                .and_then(|()| m.restart())
                .map_err(|e| e.to_string()),
            FaultKind::Sigstop { secs } => {
                m.signal_tree(libc::SIGSTOP);
                std::thread::sleep(Duration::from_secs_f64(secs));
                m.signal_tree(libc::SIGCONT);
                Ok(())
            }
            FaultKind::DiskStall { .. } => Err(refuse(kind).unwrap_or_default()),
        };
        let back = done.is_ok().then(Instant::now);
        let lines = log_since(&m.log, offset);
        Injection {
            back,
            error: done.err(),
            phases: phases(m.flavor(), &lines, wall),
        }
    }
}

/// The lines `path` gained after byte `offset` (at most 1 MiB of them).
fn log_since(path: &Path, offset: u64) -> Vec<String> {
    let Ok(mut f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    if f.seek(SeekFrom::Start(offset)).is_err() {
        return Vec::new();
    }
    let mut text = String::new();
    let _ = f.take(1 << 20).read_to_string(&mut text);
    text.lines().map(str::to_string).collect()
}

/// Which lines mark which phase, by flavour: a line's first match names it.
fn markers(flavor: Flavor) -> &'static [(&'static str, &'static str)] {
    match flavor {
        Flavor::Postgres => &[
            ("received fast shutdown request", "shutdown requested"),
            ("checkpoint starting: shutdown", "shutdown checkpoint"),
            ("database system is shut down", "shut down"),
            ("database system was shut down at", "started (clean)"),
            ("database system was interrupted", "started (after a crash)"),
            ("automatic recovery in progress", "crash recovery"),
            ("syncing data directory", "fsync scan"),
            ("redo starts at", "redo starts"),
            ("redo done at", "redo done"),
            (
                "checkpoint starting: end-of-recovery",
                "end-of-recovery checkpoint",
            ),
            ("checkpoint complete", "checkpoint complete"),
            ("database system is ready to accept connections", "ready"),
        ],
        Flavor::MariaDb | Flavor::MySql => &[
            ("Normal shutdown", "shutdown requested"),
            ("InnoDB: Starting shutdown", "InnoDB shutdown"),
            ("Shutdown complete", "shut down"),
            ("InnoDB: Starting crash recovery", "crash recovery"),
            ("InnoDB: Starting final batch to recover", "redo apply"),
            ("InnoDB: Rolled back recovered transaction", "rollback"),
            (
                "InnoDB: Buffer pool(s) load completed",
                "buffer pool loaded",
            ),
            ("ready for connections", "ready"),
        ],
    }
}

/// The recovery's phases in `lines` (what the log gained since the fault at `wall`),
/// each timed from the fault by the line's own timestamp where it has one.
pub fn phases(flavor: Flavor, lines: &[String], wall: SystemTime) -> Vec<RecoveryPhase> {
    let fault = chrono::DateTime::<chrono::Utc>::from(wall);
    lines
        .iter()
        .filter_map(|line| {
            let (_, name) = markers(flavor).iter().find(|(m, _)| line.contains(m))?;
            // A line of the fault's own second, logged to the second (MariaDB), would
            // read as before it: none is, so it reads as at it.
            let at_s = logged_at(flavor, line)
                .map(|t| ((t - fault).num_microseconds().unwrap_or(0) as f64 / 1e6).max(0.0));
            Some(RecoveryPhase {
                name: (*name).to_string(),
                at_s,
                secs: elapsed_of(line),
                line: line.trim().to_string(),
            })
        })
        .collect()
}

/// A log line's timestamp: PostgreSQL's `%m` (`2026-12-07 17:01:02.345 UTC`) or
/// MariaDB's (`2026-12-07 17:01:02 0 [Note]`, local time).
fn logged_at(flavor: Flavor, line: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    use chrono::{NaiveDateTime, TimeZone};
    let mut words = line.split_whitespace();
    let (date, time) = (words.next()?, words.next()?);
    let stamp = format!("{date} {time}");
    let fmt = if time.contains('.') {
        "%Y-%m-%d %H:%M:%S%.f"
    } else {
        "%Y-%m-%d %H:%M:%S"
    };
    let naive = NaiveDateTime::parse_from_str(&stamp, fmt).ok()?;
    let utc = match (flavor, words.next()) {
        (Flavor::Postgres, Some("UTC" | "GMT")) => true,
        (Flavor::Postgres, _) => false,
        _ => false,
    };
    if utc {
        Some(chrono::Utc.from_utc_datetime(&naive))
    } else {
        chrono::Local
            .from_local_datetime(&naive)
            .single()
            .map(|t| t.with_timezone(&chrono::Utc))
    }
}

/// The `elapsed: 0.05 s` PostgreSQL writes on its redo-done and progress lines.
fn elapsed_of(line: &str) -> Option<f64> {
    let rest = line.split("elapsed").nth(1)?;
    let rest = rest
        .trim_start_matches([':', ' '])
        .trim_start_matches("time: ");
    let num: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SystemTime {
        let t = chrono::DateTime::parse_from_rfc3339(s).unwrap();
        SystemTime::from(t)
    }

    #[test]
    fn postgres_crash_recovery_lines_become_phases() {
        let lines: Vec<String> = [
            "2026-12-07 17:01:02.500 UTC [812] LOG:  database system was interrupted; last known up at 2026-12-07 17:00:40 UTC",
            "2026-12-07 17:01:02.510 UTC [812] LOG:  database system was not properly shut down; automatic recovery in progress",
            "2026-12-07 17:01:02.520 UTC [812] LOG:  redo starts at 0/1A2B3C4",
            "2026-12-07 17:01:03.020 UTC [812] LOG:  redo done at 0/1F00000 system usage: CPU: user: 0.31 s, system: 0.12 s, elapsed: 0.50 s",
            "2026-12-07 17:01:03.030 UTC [810] LOG:  checkpoint starting: end-of-recovery immediate wait",
            "2026-12-07 17:01:03.300 UTC [810] LOG:  checkpoint complete: wrote 812 buffers (5.0%)",
            "2026-12-07 17:01:03.310 UTC [806] LOG:  database system is ready to accept connections",
            "2026-12-07 17:01:03.320 UTC [806] LOG:  something else",
        ]
        .map(String::from)
        .to_vec();
        let p = phases(Flavor::Postgres, &lines, at("2026-12-07T17:01:02Z"));
        let names: Vec<&str> = p.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "started (after a crash)",
                "crash recovery",
                "redo starts",
                "redo done",
                "end-of-recovery checkpoint",
                "checkpoint complete",
                "ready"
            ]
        );
        assert!((p[0].at_s.unwrap() - 0.5).abs() < 1e-6);
        assert!((p[6].at_s.unwrap() - 1.31).abs() < 1e-6);
        assert_eq!(p[3].secs, Some(0.5));
        assert!(p[3].line.contains("redo done"));
    }

    #[test]
    fn postgres_fsync_progress_and_innodb_recovery() {
        let l = "2026-12-07 17:01:12.000 UTC [812] LOG:  syncing data directory (fsync), elapsed time: 10.01 s, current path: ./base/5/16384";
        let p = phases(
            Flavor::Postgres,
            &[l.to_string()],
            at("2026-12-07T17:01:02Z"),
        );
        assert_eq!(p[0].name, "fsync scan");
        assert_eq!(p[0].secs, Some(10.01));
        let lines: Vec<String> = [
            "2026-12-07 17:01:02 0 [Note] InnoDB: Starting crash recovery from checkpoint LSN=46824",
            "2026-12-07 17:01:03 0 [Note] InnoDB: Starting final batch to recover 12 pages from redo log.",
            "2026-12-07 17:01:04 0 [Note] /usr/sbin/mariadbd: ready for connections.",
        ]
        .map(String::from)
        .to_vec();
        // MariaDB logs local time to the second; the fault came at 17:01:02.5 local.
        use chrono::TimeZone;
        let fault = chrono::Local
            .with_ymd_and_hms(2026, 12, 7, 17, 1, 2)
            .single()
            .unwrap()
            + chrono::Duration::milliseconds(500);
        let p = phases(Flavor::MariaDb, &lines, SystemTime::from(fault));
        let names: Vec<&str> = p.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["crash recovery", "redo apply", "ready"]);
        // The line of the fault's own second reads as at it, never before.
        let at: Vec<f64> = p.iter().map(|x| x.at_s.unwrap()).collect();
        assert_eq!(at, [0.0, 0.5, 1.5]);
        assert_eq!(p[1].secs, None);
    }

    #[test]
    fn disk_stall_is_refused_with_why() {
        let why = refuse(&FaultKind::DiskStall { secs: 5.0 }).unwrap();
        assert!(why.contains("device-mapper"));
        assert!(refuse(&FaultKind::Kill).is_none());
    }
}
