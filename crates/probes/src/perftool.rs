//! The `perf` binary attached to running processes for a measured window, shared by
//! [`crate::profile`] (perf record) and [`crate::perfstat`] (perf stat): started with
//! the processes' pids, stopped with SIGINT as a user at a terminal would.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Process titles of helpers a server forks per query or per job and ends within a
/// moment (PostgreSQL's parallel and autovacuum workers): left out of perf's list, since
/// perf stops counting altogether when one pid of the list has gone by the time it
/// attaches; those forked after perf attaches are counted through their parent (perf stat
/// and record follow what a counted process forks), those alive at attach are not.
pub(crate) const TRANSIENT: &[&str] = &["postgres: parallel worker", "postgres: autovacuum worker"];

/// The processes of `pids` to give perf now: those still alive and not [`TRANSIENT`].
pub(crate) fn settled(pids: &[u32]) -> Vec<u32> {
    pids.iter()
        .copied()
        .filter(|pid| match std::fs::read(format!("/proc/{pid}/cmdline")) {
            Ok(cmd) => {
                let title = String::from_utf8_lossy(&cmd);
                !TRANSIENT.iter().any(|t| title.starts_with(t))
            }
            Err(_) => false,
        })
        .collect()
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
    fn gone_and_transient_processes_are_left_to_perf_s_inheritance() {
        let me = std::process::id();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let kid = child.id();
        assert_eq!(
            settled(&[me, kid, u32::MAX - 1]),
            vec![me, kid],
            "a gone pid goes"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(settled(&[kid]).is_empty(), "the reaped child is gone");
        // A process whose title is a transient helper's (exec -a sets argv[0]).
        let mut worker = std::process::Command::new("bash")
            .args([
                "-c",
                "exec -a 'postgres: parallel worker for PID 1' sleep 5",
            ])
            .spawn()
            .unwrap();
        let w = worker.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::fs::read_to_string(format!("/proc/{w}/cmdline"))
            .map(|c| !c.starts_with("postgres:"))
            .unwrap_or(true)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(settled(&[me, w]), vec![me], "a parallel worker is left out");
        worker.kill().unwrap();
        worker.wait().unwrap();
    }
}
