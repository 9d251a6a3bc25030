//! The `perf` binary attached to running processes for a measured window, shared by
//! [`crate::profile`] (perf record) and [`crate::perfstat`] (perf stat): started with
//! the processes' pids, stopped with SIGINT as a user at a terminal would.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Runs `perf ARGS -o OUT -p PIDS` in the background.
pub(crate) fn attach(args: &[&str], out: &Path, pids: &[u32]) -> Result<Child, String> {
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
