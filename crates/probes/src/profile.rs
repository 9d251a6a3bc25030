//! CPU profiles of the measured processes during a step: `perf record` sampling on the
//! software clock (`cpu-clock`, which works where the VM has no PMU, as here) with call
//! graphs, attached to the given processes for the measured window only, then folded
//! into one `stack;frames count` line per stack (inferno's collapser), which is what
//! is stored and drawn as a flame graph.

use inferno::collapse::Collapse;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Samples per second per CPU.
pub const FREQUENCY: u32 = 999;

/// A recording in progress.
pub struct Recording {
    child: Child,
    data: PathBuf,
}

/// Starts sampling `pids` (their threads and the children they fork) into a file in
/// `dir`. Err says why there is no profile (no perf binary, not permitted).
pub fn start(pids: &[u32], dir: &Path, name: &str) -> Result<Recording, String> {
    let data = dir.join(format!("{name}.perf.data"));
    let freq = FREQUENCY.to_string();
    let args = ["record", "-e", "cpu-clock", "-F", &freq, "-g", "--quiet"];
    let child = crate::perftool::attach(&args, &data, pids)?;
    Ok(Recording { child, data })
}

impl Recording {
    /// Stops sampling and returns the folded stacks: one `comm;frame;… ns` line per
    /// distinct stack, root first, weighted by CPU nanoseconds (the sample period).
    pub fn stop(mut self) -> Result<String, String> {
        let status =
            crate::perftool::detach(&mut self.child).map_err(|e| format!("perf record: {e}"))?;
        let out = Command::new("perf")
            .args(["script", "-i"])
            .arg(&self.data)
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("perf script: {e}"));
        let _ = std::fs::remove_file(&self.data);
        let out = out?;
        if !out.status.success() {
            return Err(format!(
                "perf record ended with {status}; perf script found no samples"
            ));
        }
        let folded = fold(&out.stdout)?;
        if folded.trim().is_empty() {
            return Err("no samples (the window ended before perf was attached)".into());
        }
        Ok(folded)
    }
}

/// Folds `perf script` output.
pub fn fold(script: &[u8]) -> Result<String, String> {
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::default()
        .collapse(script, &mut folded)
        .map_err(|e| format!("folding the profile: {e}"))?;
    String::from_utf8(folded).map_err(|e| format!("folding the profile: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_script_output_folds_root_first_by_process() {
        let script = b"postgres 4242 [001] 100.000001:    1001001 cpu-clock: \n\
\t    55d0 hash_search+0x10 (/usr/lib/postgresql/15/bin/postgres)\n\
\t    55c0 ExecScan+0x20 (/usr/lib/postgresql/15/bin/postgres)\n\
\t    55b0 main+0x30 (/usr/lib/postgresql/15/bin/postgres)\n\
\n\
postgres 4242 [001] 100.001002:    1001001 cpu-clock: \n\
\t    55d0 hash_search+0x10 (/usr/lib/postgresql/15/bin/postgres)\n\
\t    55c0 ExecScan+0x20 (/usr/lib/postgresql/15/bin/postgres)\n\
\t    55b0 main+0x30 (/usr/lib/postgresql/15/bin/postgres)\n\
\n";
        let f = fold(script).unwrap();
        // Weighted by the sample period: two samples of 1,001,001 ns of CPU.
        assert_eq!(f.trim(), "postgres;main;ExecScan;hash_search 2002002");
    }
}
