//! Profiles of the measured processes during a step, folded into one `stack;frames ns`
//! line per stack (what is stored and drawn as a flame graph):
//! - `cpu`: `perf record` sampling on the software clock (`cpu-clock`, which works where
//!   the VM has no PMU, as here) with call graphs, attached to the given processes for
//!   the measured window only, folded by inferno's collapser;
//! - `offcpu`: every context switch on the machine (`sched:sched_switch` with call
//!   graphs), each switch-out of one of the processes' threads weighed by the time until
//!   that thread ran again, its stack ending in the state it left in (`[off-cpu D]`:
//!   uninterruptible, mostly IO; `S` sleeping on a lock, a socket, a condition; `R`
//!   preempted, waiting for a CPU);
//! - `wall`: both together, so a thread's time on and off a CPU is one graph (what
//!   ClickHouse calls its real-time profile).

use inferno::collapse::Collapse;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Samples per second per CPU.
pub const FREQUENCY: u32 = 999;

/// What a profile counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    /// Time on a CPU, sampled.
    Cpu,
    /// Time off a CPU, from the scheduler's switches.
    OffCpu,
    /// Both, in one graph.
    Wall,
}

impl std::str::FromStr for ProfileKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cpu" => Ok(ProfileKind::Cpu),
            "offcpu" | "off-cpu" => Ok(ProfileKind::OffCpu),
            "wall" => Ok(ProfileKind::Wall),
            _ => Err(format!(
                "unknown profile {s:?}: cpu (time on a CPU, sampled), offcpu (time off a \
                 CPU, from the scheduler's switches) or wall (both in one graph)"
            )),
        }
    }
}

impl ProfileKind {
    /// Its name, as `--profile` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileKind::Cpu => "cpu",
            ProfileKind::OffCpu => "offcpu",
            ProfileKind::Wall => "wall",
        }
    }
}

/// What to profile with and where perf's data files go.
#[derive(Debug, Clone, Copy)]
pub struct Profiling<'a> {
    /// A directory of plumb's own for perf's data files.
    pub dir: &'a Path,
    /// What is counted.
    pub kind: ProfileKind,
}

/// A recording in progress: one perf per kind of event.
pub struct Recording {
    cpu: Option<(Child, PathBuf)>,
    off: Option<(Child, PathBuf, HashSet<u32>)>,
}

/// Starts recording `pids` (their threads and, on the CPU, the children they fork) into
/// files in `p.dir`. Err says why there is no profile (no perf binary, not permitted).
pub fn start(p: Profiling<'_>, pids: &[u32], name: &str) -> Result<Recording, String> {
    let cpu = match p.kind {
        ProfileKind::Cpu | ProfileKind::Wall => {
            let data = p.dir.join(format!("{name}.perf.data"));
            let freq = FREQUENCY.to_string();
            let args = ["record", "-e", "cpu-clock", "-F", &freq, "-g", "--quiet"];
            Some((crate::perftool::attach(&args, &data, pids)?, data))
        }
        ProfileKind::OffCpu => None,
    };
    let off = match p.kind {
        ProfileKind::OffCpu | ProfileKind::Wall => {
            let data = p.dir.join(format!("{name}.sched.data"));
            // Every CPU: a thread's return to a CPU is recorded in the context of the
            // task it replaces, which may be anyone's.
            let child = Command::new("perf")
                .args(["record", "-a", "-e", "sched:sched_switch", "-g", "--quiet", "-o"])
                .arg(&data)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| {
                    format!(
                        "cannot run perf ({e}); `apt-get install linux-perf` (scripts/setup.sh does)"
                    )
                })?;
            Some((
                child,
                data,
                crate::perftool::settled(pids).into_iter().collect(),
            ))
        }
        ProfileKind::Cpu => None,
    };
    Ok(Recording { cpu, off })
}

impl Recording {
    /// Stops perf and returns the folded stacks, in ns.
    pub fn stop(self) -> Result<String, String> {
        let mut out = String::new();
        if let Some((mut child, data)) = self.cpu {
            out.push_str(&stop_cpu(&mut child, &data)?);
        }
        if let Some((mut child, data, pids)) = self.off {
            out.push_str(&stop_off(&mut child, &data, &pids)?);
        }
        Ok(out)
    }
}

/// Stops a recording and gives what `perf script ARGS` prints of it (its data file is
/// removed); `refused` says why, when perf left nothing to read.
fn stop_script(
    child: &mut Child,
    data: &Path,
    args: &[&str],
    refused: &str,
) -> Result<Vec<u8>, String> {
    let status = crate::perftool::detach(child).map_err(|e| format!("perf record: {e}"))?;
    let out = Command::new("perf")
        .arg("script")
        .args(args)
        .arg("-i")
        .arg(data)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("perf script: {e}"));
    let _ = std::fs::remove_file(data);
    let out = out?;
    if !out.status.success() {
        return Err(format!("perf record ended with {status}; {refused}"));
    }
    Ok(out.stdout)
}

/// Stops a CPU recording and folds it.
fn stop_cpu(child: &mut Child, data: &Path) -> Result<String, String> {
    let script = stop_script(child, data, &[], "perf script found no samples")?;
    let folded = fold(&script)?;
    if folded.trim().is_empty() {
        return Err("no samples (the window ended before perf was attached)".into());
    }
    Ok(folded)
}

/// Stops a scheduler recording and folds the switches of `pids`' threads.
fn stop_off(child: &mut Child, data: &Path, pids: &HashSet<u32>) -> Result<String, String> {
    let script = stop_script(
        child,
        data,
        &["-F", "comm,pid,tid,time,trace,ip,sym"],
        "sched:sched_switch left nothing to read (the kernel's tracepoints may be closed \
         to plumb: perf_event_paranoid, tracefs)",
    )?;
    let folded = fold_switches(&String::from_utf8_lossy(&script), pids);
    if folded.trim().is_empty() {
        return Err("no switch of the measured processes was recorded".into());
    }
    Ok(folded)
}

/// plumb's own threads that wait by design (the sampler's tick, the wait sampler's
/// pause, perf's reader): their time off a CPU is the harness resting, not the system
/// waiting, and would fill an off-CPU graph.
const HARNESS_THREADS: &[&str] = &["plumb", "plumb-waits"];

/// One switch-out as `perf script -F comm,pid,tid,time,trace,ip,sym` prints it.
struct Switch {
    /// The process of the thread that left the CPU.
    tgid: u32,
    /// The thread that left, and the one that came on.
    prev: u32,
    next: u32,
    /// When, ns.
    at: u64,
    /// What it left in (`D`, `S`, `R` …).
    state: String,
    /// Its stack, root first, its command name at the root.
    stack: Vec<String>,
}

/// Parses one event's header line and stack lines.
fn switch_of(header: &str, frames: &[&str]) -> Option<Switch> {
    // "comm 123/456 [cpu] 24649.945176: prev_comm=... prev_pid=456 prev_prio=120
    //  prev_state=S ==> next_comm=... next_pid=789 next_prio=120"
    let (head, trace) = header.split_once("prev_comm=")?;
    let mut words = head.split_whitespace().rev();
    let time = words.find_map(|w| w.strip_suffix(':').and_then(|t| t.parse::<f64>().ok()))?;
    let ids = head.split_whitespace().find(|w| {
        w.split_once('/')
            .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
    })?;
    let comm = head[..head.find(ids)?].trim().to_string();
    let (tgid, _) = ids.split_once('/')?;
    let field = |name: &str| {
        trace
            .split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .map(str::to_string)
    };
    let mut stack: Vec<String> = frames
        .iter()
        .rev()
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect();
    stack.insert(0, comm);
    Some(Switch {
        tgid: tgid.parse().ok()?,
        prev: field("prev_pid=")?.parse().ok()?,
        next: field("next_pid=")?.parse().ok()?,
        at: (time * 1e9).round() as u64,
        state: field("prev_state=").unwrap_or_default(),
        stack,
    })
}

/// Folds the switches: each time a thread of `pids` left a CPU, the time until it came
/// back is added to the stack it left from, with its state as the leaf frame. A thread
/// still off a CPU when the recording ended is not counted (its time is not known).
pub fn fold_switches(script: &str, pids: &HashSet<u32>) -> String {
    let mut away: HashMap<u32, (u64, String)> = HashMap::new();
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    let lines: Vec<&str> = script.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let header = lines[i];
        i += 1;
        let start = i;
        while i < lines.len() && !lines[i].trim().is_empty() {
            i += 1;
        }
        let frames = &lines[start..i];
        while i < lines.len() && lines[i].trim().is_empty() {
            i += 1;
        }
        let Some(sw) = switch_of(header, frames) else {
            continue;
        };
        if let Some((from, stack)) = away.remove(&sw.next) {
            *folded.entry(stack).or_default() += sw.at.saturating_sub(from);
        }
        let harness =
            sw.tgid == std::process::id() && HARNESS_THREADS.contains(&sw.stack[0].as_str());
        if pids.contains(&sw.tgid) && sw.prev != 0 && !harness {
            let mut stack = sw.stack.join(";");
            stack.push_str(&format!(";[off-cpu {}]", sw.state));
            away.insert(sw.prev, (sw.at, stack));
        }
    }
    folded
        .into_iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|(stack, ns)| format!("{stack} {ns}\n"))
        .collect()
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

    /// A thread of process 10 sleeps at t=1.0 s, is back on at t=1.5 s, then is
    /// preempted at 2.0 s and back at 2.1 s; process 99's switches are not counted.
    #[test]
    fn switches_fold_into_the_time_each_stack_was_off_a_cpu() {
        let script = "db 10/11 [000] 1.000000: sched:sched_switch: prev_comm=db prev_pid=11 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
\t ffff schedule\n\
\t ffff do_fsync\n\
\t 55aa main\n\
\n\
other 99/99 [001] 1.200000: sched:sched_switch: prev_comm=other prev_pid=99 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n\
\t ffff schedule\n\
\n\
swapper 0/0 [000] 1.500000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=db next_pid=11 next_prio=120\n\
\n\
db 10/11 [000] 2.000000: sched:sched_switch: prev_comm=db prev_pid=11 prev_prio=120 prev_state=R ==> next_comm=other next_pid=99 next_prio=120\n\
\t ffff schedule\n\
\t 55aa main\n\
\n\
other 99/99 [000] 2.100000: sched:sched_switch: prev_comm=other prev_pid=99 prev_prio=120 prev_state=S ==> next_comm=db next_pid=11 next_prio=120\n";
        let f = fold_switches(script, &HashSet::from([10]));
        assert_eq!(
            f,
            "db;main;do_fsync;schedule;[off-cpu D] 500000000\ndb;main;schedule;[off-cpu R] 100000000\n"
        );
    }

    #[test]
    fn profile_kinds_parse_by_name() {
        assert_eq!("offcpu".parse::<ProfileKind>(), Ok(ProfileKind::OffCpu));
        assert_eq!("wall".parse::<ProfileKind>(), Ok(ProfileKind::Wall));
        assert!("heap".parse::<ProfileKind>().unwrap_err().contains("cpu"));
    }

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
