//! The `perf` binary attached to running processes for a measured window, shared by
//! [`crate::profile`] (perf record) and [`crate::perfstat`] (perf stat): started with
//! the processes' pids, stopped with SIGINT as a user at a terminal would.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A process younger than this when perf attaches is left out of its list: perf stops
/// counting altogether when one pid of the list has gone by the time it attaches, and a
/// young process is most likely a transient one (a PostgreSQL scan's parallel workers
/// live a tenth of a second). Its CPU is lost to the counts while it lives; processes
/// its parent forks after perf attaches are counted through the parent (perf stat counts
/// children forked later).
pub(crate) const MIN_AGE_SECS: f64 = 1.0;

/// The processes of `pids` to give perf now: those still alive and at least
/// [`MIN_AGE_SECS`] old, the first (the root of a server's tree, or plumb) kept while it
/// is alive whatever its age.
pub(crate) fn settled(pids: &[u32]) -> Vec<u32> {
    let now = uptime_secs();
    pids.iter()
        .enumerate()
        .filter(|(i, pid)| match age_secs(**pid, now) {
            None => false,
            Some(age) => *i == 0 || age >= MIN_AGE_SECS,
        })
        .map(|(_, pid)| *pid)
        .collect()
}

/// Seconds since boot (`/proc/uptime`); `None` when unreadable.
fn uptime_secs() -> Option<f64> {
    std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// How long `pid` has lived, seconds; `None` when it is gone. When the clock cannot be
/// read the process counts as old (alive is what matters most).
fn age_secs(pid: u32, now: Option<f64>) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22, starttime in clock ticks since boot, counted after the comm's ')'.
    let start: f64 = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .and_then(|t| t.parse().ok())
        .unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(now.map_or(f64::INFINITY, |n| n - start / hz))
}

/// Runs `perf ARGS -o OUT -p PIDS` in the background, on the processes of `pids` that are
/// [`settled`].
pub(crate) fn attach(args: &[&str], out: &Path, pids: &[u32]) -> Result<Child, String> {
    let pids = settled(pids);
    if pids.is_empty() {
        return Err("perf: every process to count has exited".into());
    }
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    Command::new("perf")
        .args(args)
        .arg("-o")
        .arg(out)
        .arg("-p")
        .arg(list.join(","))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            format!("cannot run perf ({e}); `apt-get install linux-perf` (scripts/setup.sh does)")
        })
}

/// Stops an attached perf (SIGINT makes it write its output) and waits for it.
pub(crate) fn detach(child: &mut Child) -> std::io::Result<std::process::ExitStatus> {
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_and_newborn_processes_are_left_to_perf_s_inheritance() {
        // This process is old enough once a second has passed since it started; a child
        // started now is not, and a pid that never was is gone.
        let me = std::process::id();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let kid = child.id();
        let settled_now = settled(&[me, kid, u32::MAX - 1]);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!settled_now.contains(&kid), "a newborn is left out");
        assert!(
            !settled_now.contains(&(u32::MAX - 1)),
            "a gone pid is left out"
        );
        // The first pid (the tree's root) stays whatever its age; gone, it goes too.
        assert_eq!(
            settled(&[kid]),
            Vec::<u32>::new(),
            "the reaped child is gone"
        );
        let mut young = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert_eq!(settled(&[young.id()]), vec![young.id()]);
        young.kill().unwrap();
        young.wait().unwrap();
    }
}
