//! What a plan will cost before it runs: time and disk space, from the plan alone.
//! Timed steps cost their duration; load and scan steps are estimated from assumed
//! rates that `plumb plan` states, since nothing has been measured yet.

use crate::family::Family;
use crate::model::RunPlan;
use plumb_workloads::{IbKind, SqlGroup, StepKind};
use std::path::Path;

/// Keys per second assumed for load steps (fills) per thread, for estimates only.
pub const ASSUMED_LOAD_OPS_SEC: f64 = 150_000.0;
/// Entries per second assumed for a full scan (readseq).
pub const ASSUMED_SCAN_OPS_SEC: f64 = 1_000_000.0;
/// Seconds allowed for a maintenance step and for opening and closing the engine.
const MAINTENANCE_SECS: f64 = 5.0;
/// On-disk bytes per live user byte allowed for (space amplification, WAL, temporaries).
const SPACE_ALLOWANCE: f64 = 2.0;

/// Estimated cost of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    /// Wall-clock seconds.
    pub secs: f64,
    /// Peak bytes in its data dir.
    pub bytes: u64,
}

/// Rows per second assumed for loading a server's tables, for estimates only.
pub const ASSUMED_ROWS_SEC: f64 = 50_000.0;
/// Seconds allowed for starting and stopping a managed server (initdb included).
const SERVER_SECS: f64 = 5.0;
/// On-disk bytes per row of sysbench's table (and of the insert benchmark's, with its
/// three indexes), with room for the engine's overhead.
const SQL_ROW_BYTES: f64 = 300.0;

/// Estimates one run from its plan.
pub fn estimate(r: &RunPlan) -> Estimate {
    match &r.workload.family {
        Family::Kv(w) => estimate_kv(r, &w.params, &w.steps),
        Family::Sql(w) => {
            let p = &w.params;
            let rows = p.table_size as f64 * f64::from(p.tables);
            let secs: f64 = w
                .steps
                .iter()
                .map(|s| match s.kind.group() {
                    SqlGroup::Load => rows / ASSUMED_ROWS_SEC,
                    _ => p.warmup_of(s) + p.duration_of(s),
                })
                .sum();
            Estimate {
                secs: SERVER_SECS + secs,
                bytes: (rows * SQL_ROW_BYTES * SPACE_ALLOWANCE) as u64,
            }
        }
        Family::Probe(w) => {
            let p = &w.params;
            let step = p.secs.unwrap_or(if p.quick { 1.0 } else { 5.0 });
            let one = |name: &str| match name {
                "mem" => 10.0 + 4.0 * step,
                "cpu" => 8.0 * step,
                _ => 40.0 * step + if p.quick { 10.0 } else { 120.0 },
            };
            let secs = match w.which.as_str() {
                "all" => one("mem") + one("cpu") + one("disk"),
                w => one(w),
            };
            Estimate { secs, bytes: 0 }
        }
        Family::Durability(w) => estimate_durability(r, w),
        Family::Ib(w) => {
            let p = &w.params;
            let secs: f64 = w
                .steps
                .iter()
                .map(|s| match s.kind {
                    IbKind::Load | IbKind::Insert => p.rows_of(s) as f64 / ASSUMED_ROWS_SEC,
                    IbKind::Index | IbKind::Debt => {
                        MAINTENANCE_SECS + p.rows as f64 / ASSUMED_ROWS_SEC
                    }
                    _ => p.duration,
                })
                .sum();
            let rows = (p.rows + p.inserts * 6 / 5) as f64;
            let server = if r.target.server_spec().is_some() {
                SERVER_SECS
            } else {
                1.0
            };
            Estimate {
                secs: server + secs,
                bytes: (rows * SQL_ROW_BYTES * SPACE_ALLOWANCE) as u64,
            }
        }
    }
}

/// Seconds a killed writer takes beyond its time writing: starting it (the engine's
/// open) and reopening the engine to check every acknowledged key.
const WRITER_TRIAL_SECS: f64 = 0.3;
/// Seconds a crashed server takes to restart (crash recovery) and be checked.
const SERVER_TRIAL_SECS: f64 = 2.0;
/// Bytes a managed server's fresh data directory holds before its first row.
const SERVER_BASE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;
/// Bytes per acknowledged write (16-byte key, 100-byte value) with the engine's and
/// the recorder's overhead.
const DURABILITY_WRITE_BYTES: f64 = 400.0;

/// A durability run: each mode × cut is `kills` trials, each writing for half of
/// `max_ms` on average (a server's at least 50 ms), then restarted and checked; every
/// write is kept until the run ends.
fn estimate_durability(r: &RunPlan, w: &crate::DurabilityWork) -> Estimate {
    let p = &w.params;
    let steps = (w.modes.len() * p.cuts().len()) as f64;
    let trials = steps * f64::from(p.kills);
    let writing = p.max_ms as f64 / 2000.0;
    let server = r.target.server_spec().is_some();
    let (start, per_trial, writing) = if server {
        (SERVER_SECS * steps, SERVER_TRIAL_SECS, writing + 0.05)
    } else {
        (0.0, WRITER_TRIAL_SECS, writing)
    };
    // One step's directory at a time; a synced write takes about a millisecond, an
    // unsynced one is assumed as fast as a load.
    let per_sec = if w.modes.iter().all(|m| m.promises()) {
        1_000.0
    } else {
        ASSUMED_LOAD_OPS_SEC
    };
    let writes = f64::from(p.kills) * writing * per_sec;
    let base = if server { SERVER_BASE_BYTES } else { 0.0 };
    Estimate {
        secs: start + trials * (per_trial + writing),
        bytes: (base + writes * DURABILITY_WRITE_BYTES * SPACE_ALLOWANCE) as u64,
    }
}

fn estimate_kv(
    r: &RunPlan,
    p: &crate::KvParams,
    steps: &[plumb_workloads::steps::StepPlan],
) -> Estimate {
    let mut secs = 1.0;
    for s in steps {
        let k = s.kind;
        let threads = p.step_threads(k).max(1) as f64;
        let quota = if k.is_fill() || k == StepKind::ReadSeq {
            Some(p.num as f64)
        } else {
            s.ops_fraction_of_num
                .map(|f| (p.num as f64 * f).ceil())
                .or(p.ops.map(|o| o as f64))
        };
        let by_ops = quota.map(|n| {
            let rate = match k {
                StepKind::ReadSeq => ASSUMED_SCAN_OPS_SEC,
                _ => ASSUMED_LOAD_OPS_SEC * threads.min(2.0),
            };
            n / rate
        });
        let timed = p.step_duration(s).map(|d| d.as_secs_f64());
        secs += if k.is_maintenance() {
            MAINTENANCE_SECS
        } else {
            let warm = if k.is_fill() { 0.0 } else { p.warmup };
            warm + match (timed, by_ops) {
                (Some(t), Some(o)) => t.min(o),
                (Some(t), None) => t,
                (None, Some(o)) => o,
                (None, None) => crate::QUICK_SECS,
            }
        };
    }
    // The engine's own peak (universal compaction's transient copy), where it keeps files.
    let bytes = match r.target.engine_spec() {
        Some(e) if e.capabilities().keeps_files => {
            (p.data_bytes() as f64 * e.peak_space_factor()) as u64
        }
        _ => 0,
    };
    Estimate { secs, bytes }
}

/// The disk a plan needs where its data dirs go, and what is free there.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// Peak bytes: the largest run's (runs go one at a time and each data dir is
    /// removed after its run), or every run's together when they are kept.
    pub need: u64,
    /// Where the data dirs go (the suite's `dir`, else the temp dir).
    pub root: std::path::PathBuf,
    /// Free bytes there, when they can be read.
    pub free: Option<u64>,
}

impl Space {
    /// The space `plan` needs (every run's together when `keep`: no dir is removed).
    pub fn of(plan: &crate::Plan, keep: bool) -> Space {
        let each = plan.runs.iter().map(|r| estimate(r).bytes);
        let need = if keep {
            each.sum()
        } else {
            each.max().unwrap_or(0)
        };
        let root = plan.dir.clone().unwrap_or_else(std::env::temp_dir);
        let free = free_bytes(&root);
        Space { need, root, free }
    }

    /// Refuses a plan that cannot fit, with what to do; before anything is written.
    pub fn check(&self) -> Result<(), String> {
        match self.free {
            Some(free) if self.need > free => Err(format!(
                "the suite needs about {} in {} but only {} is free; lower num or sizes, set \
                 `dir` in the suite to a larger filesystem, or free space",
                gib(self.need),
                self.root.display(),
                gib(free)
            )),
            _ => Ok(()),
        }
    }
}

/// Bytes as GiB with two decimals, as plans state sizes.
pub fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

/// Free bytes for an unprivileged writer on the filesystem holding `dir` (or its
/// nearest existing parent); `None` when it cannot be read.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let mut d = dir.to_path_buf();
    while !d.exists() {
        d = d.parent()?.to_path_buf();
    }
    let c = std::ffi::CString::new(d.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid NUL-terminated path; `st` is written by the call.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        Some(st.f_bavail as u64 * st.f_frsize as u64)
    }
}

/// A duration as people read it: 42s, 3m07s, 1h05m (estimates and time left).
pub fn human_secs(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=99 => format!("{s}s"),
        100..=5999 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The rows of `plumb plan`'s table, one per run (#, variant, engine, workload, steps,
/// size, threads, repeat, seed, estimated time and disk), and the estimated seconds of
/// them all.
pub fn rows(plan: &crate::Plan) -> (Vec<Vec<String>>, f64) {
    let mut total = 0.0;
    let rows = plan
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let e = estimate(r);
            total += e.secs;
            let (size, concurrency) = r.size_and_concurrency();
            vec![
                (i + 1).to_string(),
                r.variant.clone(),
                r.target.kind_label(),
                r.workload.name.clone(),
                r.workload.family.step_names().join(","),
                size.to_string(),
                concurrency.to_string(),
                r.repeat.to_string(),
                r.seed.to_string(),
                human_secs(e.secs),
                if e.bytes > 0 {
                    gib(e.bytes)
                } else {
                    "-".into()
                },
            ]
        })
        .collect();
    (rows, total)
}

#[cfg(test)]
mod human_tests {
    use super::human_secs;

    #[test]
    fn durations_read_in_seconds_then_minutes_then_hours() {
        assert_eq!(human_secs(-3.0), "0s");
        assert_eq!(human_secs(42.4), "42s");
        assert_eq!(human_secs(187.0), "3m07s");
        assert_eq!(human_secs(3900.0), "65m00s");
        assert_eq!(human_secs(7500.0), "2h05m");
    }
}
