//! What a plan will cost before it runs: time and disk space, from the plan alone.
//! Timed steps cost their duration; load and scan steps are estimated from assumed
//! rates that `plumb plan` states, since nothing has been measured yet.

use crate::model::RunPlan;
use plumb_workloads::StepKind;
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

/// Estimates one run from its plan.
pub fn estimate(r: &RunPlan) -> Estimate {
    let p = &r.params;
    let mut secs = 1.0;
    for s in &r.workload.steps {
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
    let bytes = if r.target.engine.capabilities().keeps_files {
        (p.data_bytes() as f64 * SPACE_ALLOWANCE) as u64
    } else {
        0
    };
    Estimate { secs, bytes }
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
