//! Counters of other processes (a database server's) during a step: `perf stat`
//! attached to them for the measured window. Hardware events (cycles, instructions,
//! branch, cache and TLB misses) where the kernel has a PMU, software events
//! (task-clock, context switches, migrations, page faults) always; an event the kernel
//! refuses is reported with perf's reason rather than as zero.
//!
//! The hardware events are the seeds' (the MySQL and Postgres regression studies): the
//! reading of a regression as code bloat (more instructions per query) or memory-system
//! bloat (the same instructions, more cache and TLB misses) needs all of them, and
//! [`derived`] turns them into the GHz, IPC and miss rates those studies quote. They are
//! more events than any PMU has counters, so perf multiplexes: each value is perf's
//! scaled estimate, and [`EventCount::running_pct`] keeps how much of the window the
//! event was really counted, so a figure from a 30% sample is not read as exact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;

/// The events asked for, in the order perf prints them: hardware first, then software.
///
/// `cycles` and `instructions` are each asked twice, for all modes and for user mode
/// (`:u`), so that their kernel-mode half (`:k`) is the difference; [`SPLIT`] says why
/// only these two and why not `:u` beside `:k`. The order matters to [`parse`]: each
/// `:u` event follows its all-modes twin.
pub const EVENTS: &[&str] = &[
    "cycles",
    "cycles:u",
    "instructions",
    "instructions:u",
    "branches",
    "branch-misses",
    "cache-references",
    "cache-misses",
    "L1-icache-loads",
    "L1-icache-load-misses",
    "L1-dcache-loads",
    "L1-dcache-load-misses",
    "LLC-loads",
    "LLC-load-misses",
    "LLC-stores",
    "LLC-store-misses",
    "dTLB-loads",
    "dTLB-load-misses",
    "iTLB-loads",
    "iTLB-load-misses",
    // Seed 002's table has it; AMD's cores have no such event (perf says <not
    // supported>, kept as missing), Intel's do. Last, in a group of its own, so every
    // event keeps its miss count in its group.
    "L1-dcache-stores",
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
];

/// Events whose user and kernel halves are told apart (`cycles:u`, `cycles:k`).
///
/// Only these two because they answer the question the split is for — is a query's
/// extra work in the database's own code or in the kernel it calls (I/O, futexes, the
/// network stack) — while every split event takes another hardware counter: the cache,
/// branch and TLB events already outnumber a core's general-purpose counters (4 to 8),
/// so splitting them all would halve the time each is counted and double the error of
/// its scaled estimate for a ratio nobody reads.
///
/// Each is asked as all-modes and `:u`, the kernel half being the difference, not as
/// `:u` and `:k`: where the kernel forbids kernel-mode counting (perf_event_paranoid
/// above 1 without root or CAP_PERFMON, root in a container without the capability)
/// perf narrows an all-modes event to user mode and goes on, whereas an explicit `:k`
/// event makes perf stat exit and every count of the step would be lost.
pub const SPLIT: &[&str] = &["cycles", "instructions"];

/// Perf's reason, in [`Counts::missing`], for a kernel half that could not be counted.
pub const USER_MODE_ONLY: &str =
    "<user mode only>: the kernel refused kernel-mode counting (perf_event_paranoid)";

/// Counting in progress.
pub struct Counting {
    child: Child,
    out: PathBuf,
}

/// One event perf counted, with what says how far to trust it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventCount {
    /// The event as asked for (perf's own `:u` fallback suffix removed, see `user_only`).
    pub event: String,
    /// Perf's value, already scaled up by it when the event was multiplexed.
    pub value: f64,
    /// Perf's unit for the value (`msec` for task-clock, empty for plain counts), so a
    /// reader converts rather than guesses.
    pub unit: String,
    /// Nanoseconds the event was really on a counter (summed over the processes).
    pub run_ns: u64,
    /// Share of the window the event was counted, percent: below 100 perf multiplexed
    /// it and the value is an extrapolation from that share.
    pub running_pct: f64,
    /// Perf counted user mode only though all modes were asked: the kernel refused
    /// kernel-mode counting, so kernel work is missing from the value.
    pub user_only: bool,
}

/// What perf counted: each event's value, or why it has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// Counted events (task-clock in ms, as perf reports it), plus the kernel halves of
    /// [`SPLIT`] (`cycles:k` = `cycles` − `cycles:u`). The short form every caller
    /// reads; [`Counts::events`] has the details.
    pub values: Vec<(String, f64)>,
    /// Events perf could not count, with its word for why (`<not supported>`,
    /// `<not counted>`), and kernel halves that could not be had ([`USER_MODE_ONLY`]).
    pub missing: Vec<(String, String)>,
    /// Each counted event as perf printed it: unit, time counted and share of the window,
    /// so multiplexed estimates can be told from exact counts.
    pub events: Vec<EventCount>,
}

impl Counts {
    /// An event's value, counted or derived, for callers that want one figure.
    pub fn get(&self, event: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|(e, _)| e == event)
            .map(|(_, v)| *v)
    }

    /// Share of the window an event was counted, percent; for a derived kernel half the
    /// smaller share of its two terms, since its error is at least theirs.
    pub fn running_pct(&self, event: &str) -> Option<f64> {
        let pct = |e: &str| {
            self.events
                .iter()
                .find(|c| c.event == e)
                .map(|c| c.running_pct)
        };
        match (pct(event), event.strip_suffix(":k")) {
            (Some(p), _) => Some(p),
            (None, Some(base)) if self.get(event).is_some() => {
                Some(pct(base)?.min(pct(&format!("{base}:u"))?))
            }
            _ => None,
        }
    }

    /// Events counted for less than the whole window (perf multiplexed them), with their
    /// share: the figures a report should mark as estimates.
    pub fn multiplexed(&self) -> Vec<(&str, f64)> {
        self.events
            .iter()
            .filter(|c| c.running_pct < 100.0)
            .map(|c| (c.event.as_str(), c.running_pct))
            .collect()
    }

    /// Events perf narrowed to user mode, whose values leave out kernel work.
    pub fn user_only(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter(|c| c.user_only)
            .map(|c| c.event.as_str())
            .collect()
    }

    /// Each value divided by `ops`, task-clock converted from ms to µs and named
    /// `task-clock-us` so it reads beside a CPU-per-op figure: what a SQL step stores as
    /// `ServerCosts::perf_query`. Empty when `ops` is 0 (nothing to divide by).
    pub fn per_op(&self, ops: u64) -> BTreeMap<String, f64> {
        if ops == 0 {
            return BTreeMap::new();
        }
        self.values
            .iter()
            .map(|(ev, v)| per_op_figure(ev, *v, ops))
            .collect()
    }

    /// The values by event name, the shape [`derived`] and the per-query maps take.
    pub fn map(&self) -> BTreeMap<String, f64> {
        self.values.iter().cloned().collect()
    }
}

/// An event's count over `ops` ops as stored per op: task-clock converted from ms to µs
/// and named `task-clock-us`, to read beside a CPU-per-op figure.
pub fn per_op_figure(event: &str, value: f64, ops: u64) -> (String, f64) {
    match event {
        "task-clock" => ("task-clock-us".to_string(), value * 1000.0 / ops as f64),
        _ => (event.to_string(), value / ops as f64),
    }
}

/// Starts counting [`EVENTS`] on `pids` (and what they fork); the output goes to a file
/// in `dir`.
pub fn start(pids: &[u32], dir: &Path, name: &str) -> Result<Counting, String> {
    start_events(pids, EVENTS, dir, name)
}

/// Starts counting `events` (in [`EVENTS`]' order, each `:u` twin after its event) on
/// `pids`: one group of [`crate::perfgroups`].
pub fn start_events(
    pids: &[u32],
    events: &[&str],
    dir: &Path,
    name: &str,
) -> Result<Counting, String> {
    let out = dir.join(format!("{name}.perfstat"));
    let events = events.join(",");
    let child = crate::perftool::attach(&["stat", "-x", ",", "-e", &events], &out, pids)?;
    Ok(Counting { child, out })
}

impl Counting {
    /// Stops counting and reads the counts.
    pub fn stop(mut self) -> Result<Counts, String> {
        let _ = crate::perftool::detach(&mut self.child);
        let text = std::fs::read_to_string(&self.out).map_err(|e| format!("perf stat: {e}"));
        let _ = std::fs::remove_file(&self.out);
        counts_from(&text?)
    }
}

/// Parses perf's output, refusing an output without a single event line: perf stat
/// writes its header before opening the counters, so a perf that failed to count (an
/// event it could not open, a signal before it was ready) leaves a file that would
/// otherwise read as "nothing counted, nothing refused".
pub fn counts_from(text: &str) -> Result<Counts, String> {
    let c = parse(text);
    if c.events.is_empty() && c.missing.is_empty() {
        return Err("perf stat wrote no counts: it stopped before counting".into());
    }
    Ok(c)
}

/// Parses `perf stat -x ,` output. Each line is `value,unit,event,run time (ns),
/// percent of time running,metric value,metric unit` (perf-stat(1), "CSV FORMAT"),
/// where value may be `<not supported>` or `<not counted>`; lines with an empty event
/// are extra metrics perf computed, skipped here ([`derived`] recomputes them).
///
/// Where the kernel refuses kernel-mode counting perf narrows an event to user mode and
/// prints it as `event:u`. Such a line is given back the name asked for and marked
/// [`EventCount::user_only`]: a `:u` line is a narrowed event when its all-modes twin is
/// in [`EVENTS`] and has not been seen yet (perf prints in the order asked, and
/// [`EVENTS`] puts each twin first).
pub fn parse(text: &str) -> Counts {
    let mut c = Counts::default();
    let mut seen: Vec<String> = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let (Some(&v), Some(&printed)) = (f.first(), f.get(2)) else {
            continue;
        };
        if printed.is_empty() {
            continue;
        }
        let (event, user_only) = match printed.strip_suffix(":u") {
            Some(base) if EVENTS.contains(&base) && !seen.iter().any(|s| s == base) => {
                (base.to_string(), true)
            }
            _ => (printed.to_string(), false),
        };
        seen.push(event.clone());
        match v.parse::<f64>() {
            Ok(value) => {
                c.values.push((event.clone(), value));
                c.events.push(EventCount {
                    event,
                    value,
                    unit: f.get(1).unwrap_or(&"").to_string(),
                    run_ns: f.get(3).and_then(|s| s.parse().ok()).unwrap_or(0),
                    running_pct: f.get(4).and_then(|s| s.parse().ok()).unwrap_or(100.0),
                    user_only,
                });
            }
            Err(_) => c.missing.push((event, v.to_string())),
        }
    }
    for base in SPLIT {
        let total = c.events.iter().find(|e| e.event == *base);
        let user = c.get(&format!("{base}:u"));
        let kernel = format!("{base}:k");
        match (total, user) {
            (Some(t), _) if t.user_only => c.missing.push((kernel, USER_MODE_ONLY.into())),
            // Two scaled estimates may cross when multiplexed: a kernel half below zero
            // is noise around none.
            (Some(t), Some(u)) => {
                let k = (t.value - u).max(0.0);
                c.values.push((kernel, k));
            }
            _ => {}
        }
    }
    c
}

/// Figures the seeds quote beside the raw counts, each `None` where an event it needs
/// was not counted (or its denominator is zero) rather than a made-up 0.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Derived {
    /// Cycles per nanosecond of task-clock: the clock the server really ran at, which
    /// tells a frequency drop (thermal, power capping, turbo off) from more work.
    pub ghz: Option<f64>,
    /// Instructions per cycle, all modes.
    pub ipc: Option<f64>,
    /// Instructions per cycle in user mode: the database's own code.
    pub ipc_user: Option<f64>,
    /// Instructions per cycle in kernel mode: syscalls, I/O, scheduling.
    pub ipc_kernel: Option<f64>,
    /// Percent of cycles spent in the kernel.
    pub kernel_cycles_pct: Option<f64>,
    /// Mispredicted branches, percent of branches.
    pub branch_miss_pct: Option<f64>,
    /// `cache-misses` percent of `cache-references` (perf's generic, LLC on most x86).
    pub cache_miss_pct: Option<f64>,
    /// L1 data-cache load misses, percent of loads.
    pub l1d_miss_pct: Option<f64>,
    /// L1 instruction-cache misses, percent of its loads (Intel cores seldom count the
    /// loads, so usually `None` there).
    pub l1i_miss_pct: Option<f64>,
    /// Last-level-cache load misses, percent of LLC loads.
    pub llc_miss_pct: Option<f64>,
    /// Data-TLB load misses, percent of dTLB loads.
    pub dtlb_miss_pct: Option<f64>,
    /// Instruction-TLB misses, percent of iTLB loads.
    pub itlb_miss_pct: Option<f64>,
}

/// GHz, IPC and miss rates from event values. Pure, and indifferent to the scale of the
/// map: whole-window counts ([`Counts::map`], task-clock in ms as `task-clock`) and
/// per-query ones (`ServerCosts::perf_query`, task-clock as `task-clock-us`) give the
/// same ratios, so reports can derive them from what is stored.
pub fn derived(m: &BTreeMap<String, f64>) -> Derived {
    let get = |e: &str| m.get(e).copied().filter(|v| v.is_finite());
    let ratio = |num: &str, den: &str| {
        let (n, d) = (get(num)?, get(den)?);
        (d > 0.0).then(|| n / d)
    };
    let pct = |num: &str, den: &str| ratio(num, den).map(|r| r * 100.0);
    let task_ns = get("task-clock")
        .map(|ms| ms * 1e6)
        .or_else(|| get("task-clock-us").map(|us| us * 1e3));
    Derived {
        ghz: get("cycles")
            .zip(task_ns)
            .and_then(|(c, ns)| (ns > 0.0).then(|| c / ns)),
        ipc: ratio("instructions", "cycles"),
        ipc_user: ratio("instructions:u", "cycles:u"),
        ipc_kernel: ratio("instructions:k", "cycles:k"),
        kernel_cycles_pct: pct("cycles:k", "cycles"),
        branch_miss_pct: pct("branch-misses", "branches"),
        cache_miss_pct: pct("cache-misses", "cache-references"),
        l1d_miss_pct: pct("L1-dcache-load-misses", "L1-dcache-loads"),
        l1i_miss_pct: pct("L1-icache-load-misses", "L1-icache-loads"),
        llc_miss_pct: pct("LLC-load-misses", "LLC-loads"),
        dtlb_miss_pct: pct("dTLB-load-misses", "dTLB-loads"),
        itlb_miss_pct: pct("iTLB-load-misses", "iTLB-loads"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded on this project's VM (no PMU), root, attached to a busy shell loop.
    const NO_PMU: &str = include_str!("../tests/fixtures/perf-stat-nopmu.csv");
    /// Recorded on the same VM as an unprivileged user at perf_event_paranoid=2: perf
    /// narrows every event to user mode and prints it as `event:u`.
    const PARANOID: &str = include_str!("../tests/fixtures/perf-stat-paranoid.csv");
    /// Recorded attached to a process that slept through the window.
    const IDLE: &str = include_str!("../tests/fixtures/perf-stat-idle.csv");
    /// A bare-metal x86 server in perf's -x , format: 22 hardware events on a PMU with
    /// fewer counters, so most ran a third of the window.
    const MULTIPLEXED: &str = include_str!("../tests/fixtures/perf-stat-multiplexed.csv");

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-6 * b.abs().max(1.0))
    }

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

    #[test]
    fn every_seed_event_is_asked_once_with_user_twins_after_their_totals() {
        let mut sorted = EVENTS.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), EVENTS.len(), "an event asked twice");
        for e in [
            "cycles",
            "instructions",
            "branches",
            "branch-misses",
            "cache-references",
            "cache-misses",
            "L1-icache-loads",
            "L1-icache-load-misses",
            "L1-dcache-loads",
            "L1-dcache-load-misses",
            "LLC-loads",
            "LLC-load-misses",
            "LLC-stores",
            "LLC-store-misses",
            "dTLB-loads",
            "dTLB-load-misses",
            "iTLB-loads",
            "iTLB-load-misses",
            "task-clock",
            "context-switches",
            "cpu-migrations",
            "page-faults",
        ] {
            assert!(EVENTS.contains(&e), "{e} not asked");
        }
        for base in SPLIT {
            let at = |e: &str| EVENTS.iter().position(|x| *x == e);
            assert_eq!(at(&format!("{base}:u")), at(base).map(|i| i + 1), "{base}");
        }
        // No explicit kernel-mode event: perf stat exits on one the kernel refuses.
        assert!(EVENTS.iter().all(|e| !e.ends_with(":k")));
    }

    #[test]
    fn multiplexed_values_keep_unit_run_time_and_share() {
        let c = parse(MULTIPLEXED);
        let ev = |name: &str| c.events.iter().find(|e| e.event == name).unwrap();
        let tc = ev("task-clock");
        assert_eq!(tc.value, 39842.17);
        assert_eq!(tc.unit, "msec");
        assert_eq!(tc.run_ns, 39842170214);
        assert_eq!(tc.running_pct, 100.0);
        let cu = ev("cycles:u");
        assert_eq!(cu.value, 79046865280.0);
        assert_eq!(cu.unit, "");
        assert_eq!(cu.run_ns, 19869290286);
        assert_eq!(cu.running_pct, 49.87);
        assert!(!cu.user_only);
        assert_eq!(c.running_pct("LLC-stores"), Some(16.67));
        // Everything but the software events was multiplexed.
        let mux: Vec<&str> = c.multiplexed().into_iter().map(|(e, _)| e).collect();
        assert_eq!(mux.len(), 18, "{mux:?}");
        assert!(!mux.contains(&"task-clock") && mux.contains(&"dTLB-load-misses"));
        assert!(c.user_only().is_empty());
    }

    #[test]
    fn multiplexed_fixture_lists_refused_and_unscheduled_events_as_missing() {
        let c = parse(MULTIPLEXED);
        assert_eq!(
            c.missing,
            vec![
                ("L1-icache-loads".to_string(), "<not supported>".to_string()),
                ("LLC-store-misses".to_string(), "<not counted>".to_string()),
            ]
        );
        assert_eq!(c.get("LLC-store-misses"), None);
        assert_eq!(c.events.len(), 22);
    }

    #[test]
    fn kernel_half_is_total_less_user_with_the_smaller_share() {
        let c = parse(MULTIPLEXED);
        assert_eq!(c.get("cycles:k"), Some(123510727000.0 - 79046865280.0));
        assert_eq!(c.get("instructions:k"), Some(98808581600.0 - 71142178752.0));
        assert_eq!(c.running_pct("cycles:k"), Some(49.87));
        assert_eq!(c.running_pct("cycles"), Some(83.34));
    }

    #[test]
    fn kernel_half_never_goes_below_zero() {
        let text = "100,,cycles,500,40.00,,\n120,,cycles:u,500,40.00,,\n";
        assert_eq!(parse(text).get("cycles:k"), Some(0.0));
    }

    #[test]
    fn no_pmu_lists_every_hardware_event_as_not_supported() {
        let c = parse(NO_PMU);
        assert_eq!(c.missing.len(), 20);
        assert!(c.missing.iter().all(|(_, why)| why == "<not supported>"));
        let missing: Vec<&str> = c.missing.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(missing, EVENTS[..20].to_vec());
        let names: Vec<&str> = c.values.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(
            names,
            [
                "task-clock",
                "context-switches",
                "cpu-migrations",
                "page-faults"
            ]
        );
        assert_eq!(c.get("task-clock"), Some(608.93));
        assert_eq!(c.get("context-switches"), Some(108.0));
        assert!(c.multiplexed().is_empty());
        assert_eq!(c.get("cycles:k"), None);
    }

    #[test]
    fn narrowed_events_get_their_names_back_and_are_marked_user_only() {
        let c = parse(PARANOID);
        // The same names as the privileged run's, so stored keys do not change.
        let missing: Vec<&str> = c.missing.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(missing, EVENTS[..20].to_vec());
        assert_eq!(c.get("task-clock"), Some(681.17));
        assert_eq!(c.get("page-faults"), Some(162.0));
        assert_eq!(c.get("task-clock:u"), None);
        assert_eq!(
            c.user_only(),
            [
                "task-clock",
                "context-switches",
                "cpu-migrations",
                "page-faults"
            ]
        );
    }

    #[test]
    fn narrowed_total_leaves_the_kernel_half_missing_not_zero() {
        // perf's order for EVENTS when narrowed: the all-modes event first.
        let text = "900,,cycles:u,500,100.00,,\n905,,cycles:u,500,100.00,,\n\
                    700,,instructions:u,500,100.00,,\n702,,instructions:u,500,100.00,,\n";
        let c = parse(text);
        assert_eq!(c.get("cycles"), Some(900.0));
        assert_eq!(c.get("cycles:u"), Some(905.0));
        assert_eq!(c.get("cycles:k"), None);
        assert_eq!(c.user_only(), ["cycles", "instructions"]);
        assert_eq!(
            c.missing,
            vec![
                ("cycles:k".to_string(), USER_MODE_ONLY.to_string()),
                ("instructions:k".to_string(), USER_MODE_ONLY.to_string()),
            ]
        );
    }

    #[test]
    fn not_counted_is_missing_not_zero() {
        let c = parse(IDLE);
        assert!(c.values.is_empty());
        assert_eq!(
            c.missing
                .iter()
                .filter(|(_, w)| w == "<not counted>")
                .count(),
            4
        );
        assert!(c
            .missing
            .contains(&("task-clock".to_string(), "<not counted>".to_string())));
        // A file with lines is not an empty one.
        assert!(counts_from(IDLE).is_ok());
    }

    #[test]
    fn metric_only_lines_are_not_events() {
        // perf-stat(1): "Additional metrics may be printed with all earlier fields
        // being empty."
        let text = "1000,,instructions,500,100.00,0.50,insn per cycle\n\
                    ,,,,,0.25,stalled cycles per insn\n";
        let c = parse(text);
        assert_eq!(c.values, vec![("instructions".to_string(), 1000.0)]);
        assert!(c.missing.is_empty());
    }

    #[test]
    fn output_without_counts_is_an_error() {
        let err = counts_from("# started on Wed Nov 25 14:56:39 2026\n\n").unwrap_err();
        assert!(err.contains("no counts"), "{err}");
        assert!(counts_from(NO_PMU).is_ok());
    }

    #[test]
    fn ghz_ipc_and_miss_rates_from_the_multiplexed_fixture() {
        let d = derived(&parse(MULTIPLEXED).map());
        assert!(close(d.ghz, 3.1), "{:?}", d.ghz);
        assert!(close(d.ipc, 0.8), "{:?}", d.ipc);
        assert!(close(d.ipc_user, 71142178752.0 / 79046865280.0));
        assert!(close(d.ipc_kernel, 27666402848.0 / 44463861720.0));
        assert!(
            close(d.kernel_cycles_pct, 36.0),
            "{:?}",
            d.kernel_cycles_pct
        );
        assert!(close(d.branch_miss_pct, 2.0), "{:?}", d.branch_miss_pct);
        assert!(close(d.cache_miss_pct, 30.0), "{:?}", d.cache_miss_pct);
        assert!(close(d.l1d_miss_pct, 5.0), "{:?}", d.l1d_miss_pct);
        assert!((d.llc_miss_pct.unwrap() - 30.0).abs() < 1e-5);
        assert!(close(d.dtlb_miss_pct, 0.1), "{:?}", d.dtlb_miss_pct);
        assert!(close(d.itlb_miss_pct, 20.0), "{:?}", d.itlb_miss_pct);
        // L1-icache-loads was <not supported>: no rate rather than a rate over zero.
        assert_eq!(d.l1i_miss_pct, None);
    }

    #[test]
    fn per_query_maps_give_the_same_ghz_through_task_clock_us() {
        // What ServerCosts::perf_query holds: per query, task-clock in µs.
        let queries = 250_000.0;
        let m: BTreeMap<String, f64> = [
            ("cycles".to_string(), 123510727000.0 / queries),
            ("task-clock-us".to_string(), 39842.17e3 / queries),
        ]
        .into();
        assert!(close(derived(&m).ghz, 3.1), "{:?}", derived(&m).ghz);
    }

    #[test]
    fn nothing_is_derived_without_a_pmu() {
        let d = derived(&parse(NO_PMU).map());
        assert_eq!(d, Derived::default());
        let zero: BTreeMap<String, f64> = [
            ("cycles".to_string(), 0.0),
            ("instructions".to_string(), 5.0),
        ]
        .into();
        assert_eq!(derived(&zero).ipc, None);
    }
}
