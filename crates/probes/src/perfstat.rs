//! Counters of other processes (a database server's) during a step: `perf stat`
//! attached to them for the measured window. Hardware events (cycles, instructions,
//! cache and branch misses) where the kernel has a PMU, software events (task-clock,
//! context switches, migrations, page faults) always; an event the kernel refuses is
//! reported with perf's reason rather than as zero.

use std::path::{Path, PathBuf};
use std::process::Child;

/// The events asked for, hardware first.
pub const EVENTS: &[&str] = &[
    "cycles",
    "instructions",
    "cache-misses",
    "branch-misses",
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
];

/// Counting in progress.
pub struct Counting {
    child: Child,
    out: PathBuf,
}

/// What perf counted: each event's value, or why it has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// Counted events (task-clock in ms, as perf reports it).
    pub values: Vec<(String, f64)>,
    /// Events perf could not count, with its word for why (`<not supported>`).
    pub missing: Vec<(String, String)>,
}

/// Starts counting [`EVENTS`] on `pids` (and what they fork); the output goes to a file
/// in `dir`.
pub fn start(pids: &[u32], dir: &Path, name: &str) -> Result<Counting, String> {
    let out = dir.join(format!("{name}.perfstat"));
    let events = EVENTS.join(",");
    let child = crate::perftool::attach(&["stat", "-x", ",", "-e", &events], &out, pids)?;
    Ok(Counting { child, out })
}

impl Counting {
    /// Stops counting and reads the counts.
    pub fn stop(mut self) -> Result<Counts, String> {
        let _ = crate::perftool::detach(&mut self.child);
        let text = std::fs::read_to_string(&self.out).map_err(|e| format!("perf stat: {e}"));
        let _ = std::fs::remove_file(&self.out);
        Ok(parse(&text?))
    }
}

/// Parses `perf stat -x ,` output: `value,unit,event,…`, where value may be
/// `<not supported>` or `<not counted>`.
pub fn parse(text: &str) -> Counts {
    let mut c = Counts::default();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split(',').collect();
        let (Some(v), Some(ev)) = (f.first(), f.get(2)) else {
            continue;
        };
        // perf may suffix the event with a modifier (cycles:u); keep the name asked for.
        let ev = ev.split(':').next().unwrap_or(ev).to_string();
        match v.trim().parse::<f64>() {
            Ok(x) => c.values.push((ev, x)),
            Err(_) => c.missing.push((ev, v.trim().to_string())),
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_and_refused_events_are_told_apart() {
        let text = "# started on Mon\n\n<not supported>,,cycles,0,100.00,,\n\
                    2001.52,msec,task-clock,2001520000,100.00,1.990,CPUs utilized\n\
                    5123,,context-switches,2001520000,100.00,2.559,K/sec\n";
        let c = parse(text);
        assert_eq!(
            c.values,
            vec![
                ("task-clock".to_string(), 2001.52),
                ("context-switches".to_string(), 5123.0)
            ]
        );
        assert_eq!(
            c.missing,
            vec![("cycles".to_string(), "<not supported>".to_string())]
        );
    }
}
