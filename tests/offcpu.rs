//! `--profile offcpu`: where the measured threads spent their time off a CPU, from the
//! scheduler's switches. A step whose every write waits for the device (synced writes
//! at one thread) must put most of its thread's off-CPU time under the sync call.

mod common;

use common::{plumb, stderr};

/// Whether perf may record the scheduler's switches here; the reason when not.
fn sched_switch_allowed() -> Result<(), String> {
    let d = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = std::process::Command::new("perf")
        .args(["record", "-a", "-e", "sched:sched_switch", "-o"])
        .arg(d.path().join("probe.data"))
        .args(["--", "true"])
        .output()
        .map_err(|e| format!("perf does not run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

#[test]
fn synced_writes_wait_under_the_sync_call() {
    if let Err(why) = sched_switch_allowed() {
        eprintln!("SKIPPED: perf may not record sched:sched_switch on this machine: {why}");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "kv",
            "--sync",
            "--num",
            "3000",
            "--benchmarks",
            "fillrandom",
            "--duration",
            "2",
            "--profile",
            "offcpu",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = plumb_store::Store::open(&store).unwrap();
    let profiles = s.profiles(1).unwrap();
    let (_, folded) = profiles
        .iter()
        .find(|(step, _)| step == "fillrandom")
        .unwrap_or_else(|| panic!("no profile stored: {}", stderr(&o)));
    // The measured thread's time off a CPU, and the part of it under the sync call.
    let (mut all, mut synced) = (0u64, 0u64);
    for line in folded.lines() {
        let (stack, ns) = line.rsplit_once(' ').unwrap();
        let ns: u64 = ns.parse().unwrap();
        assert!(
            stack.contains(";[off-cpu "),
            "an off-CPU stack ends in its state: {line}"
        );
        if !stack.starts_with("plumb-w0;") {
            continue;
        }
        all += ns;
        if stack.contains("fsync") || stack.contains("fdatasync") {
            synced += ns;
        }
    }
    assert!(all > 0, "no off-CPU time of the measured thread: {folded}");
    let share = synced as f64 / all as f64;
    assert!(
        share >= 0.5,
        "{share:.2} of the thread's off-CPU time under sync: {folded}"
    );
}
