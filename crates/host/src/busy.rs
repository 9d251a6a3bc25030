//! Other processes using CPU when a run starts: two samples of `/proc/[pid]/stat`.

use crate::sysfs::Fs;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;

/// A process that used CPU between the two samples, so a report can name what competed
/// with the benchmark.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct BusyProcess {
    /// Process id.
    pub pid: i32,
    /// Command name (`comm`).
    pub comm: String,
    /// CPU used over the interval, in % of one CPU.
    pub cpu_percent: f64,
}

/// CPU ticks (utime + stime) and comm of every process.
pub(crate) fn sample(fs: &Fs) -> HashMap<i32, (String, u64)> {
    let mut out = HashMap::new();
    for n in fs.names("/proc") {
        let Ok(pid) = n.parse::<i32>() else { continue };
        let st: Result<procfs_core::process::Stat, _> = fs.parse(format!("/proc/{pid}/stat"));
        if let Ok(st) = st {
            out.insert(pid, (st.comm, st.utime + st.stime));
        }
    }
    out
}

/// Processes whose CPU use between `before` and `after` (taken `interval` apart, with
/// `ticks_per_sec` clock ticks) is above zero, busiest first; `exclude` is plumb itself.
pub fn busy_between(
    before: &HashMap<i32, (String, u64)>,
    after: &HashMap<i32, (String, u64)>,
    interval: Duration,
    ticks_per_sec: u64,
    exclude: Option<i32>,
) -> Vec<BusyProcess> {
    let secs = interval.as_secs_f64();
    if secs <= 0.0 || ticks_per_sec == 0 {
        return Vec::new();
    }
    let mut v: Vec<BusyProcess> = after
        .iter()
        .filter(|(pid, _)| Some(**pid) != exclude)
        .filter_map(|(pid, (comm, t1))| {
            let (_, t0) = before.get(pid)?;
            let d = t1.checked_sub(*t0)?;
            (d > 0).then(|| BusyProcess {
                pid: *pid,
                comm: comm.clone(),
                cpu_percent: d as f64 / ticks_per_sec as f64 / secs * 100.0,
            })
        })
        .collect();
    v.sort_by(|a, b| {
        b.cpu_percent
            .total_cmp(&a.cpu_percent)
            .then(a.pid.cmp(&b.pid))
    });
    v
}

/// Samples twice, `interval` apart; `None` when `interval` is zero (skipped).
pub(crate) fn measure(fs: &Fs, interval: Duration) -> Option<Vec<BusyProcess>> {
    if interval.is_zero() {
        return None;
    }
    let before = sample(fs);
    let start = std::time::Instant::now();
    std::thread::sleep(interval);
    let after = sample(fs);
    let elapsed = start.elapsed();
    // SAFETY: sysconf has no preconditions.
    let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let tck = if tck > 0 { tck as u64 } else { 100 };
    let me = fs.is_live().then(|| std::process::id() as i32);
    Some(busy_between(&before, &after, elapsed, tck, me))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_of_one_cpu() {
        let b = HashMap::from([(1, ("a".to_string(), 100)), (2, ("me".to_string(), 0))]);
        let a = HashMap::from([
            (1, ("a".to_string(), 150)),
            (2, ("me".to_string(), 100)),
            (3, ("new".to_string(), 5)),
        ]);
        let v = busy_between(&b, &a, Duration::from_secs(1), 100, Some(2));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].comm, "a");
        assert!((v[0].cpu_percent - 50.0).abs() < 1e-9);
        assert!(busy_between(&b, &a, Duration::ZERO, 100, None).is_empty());
    }
}
