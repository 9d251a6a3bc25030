//! The server's perf events counted one group at a time, as seed 002 counts them: after
//! a warm-up, each group of events for a slice of seconds in turn, so each event is
//! counted exactly over its slices instead of being multiplexed with all the others.
//!
//! [`perfstat::EVENTS`] ask for twenty hardware events, more than any core has
//! counters (4 to 8 general-purpose), so `perf stat` over a whole window rotates them
//! itself every few milliseconds and scales each up from the share it was counted: an
//! estimate whose error grows with the events' number and with how bursty the load is.
//! Rotating groups that fit the counters, on the sampler's 1-second marks, counts every
//! event exactly within its slices, and the queries in those slices are known exactly
//! from the step's 1-second series, so each event's count per query is a ratio of two
//! exact figures over the same seconds. What it costs: each event is counted for only
//! its share of the window (a fifth, with five groups), and the few milliseconds perf
//! takes to stop and start at a slice's end go uncounted while that second's queries
//! are counted (about 0.1% of a 10 s slice).

use crate::perfstat::{self, Counting, Counts, EVENTS};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Hardware events per group: the general-purpose counters of the cores plumb meets
/// (Intel's 4 per hyper-thread with SMT on, AMD's 6), so no group is multiplexed.
pub const PER_GROUP: usize = 4;

/// [`EVENTS`] in groups that fit [`PER_GROUP`] counters, in their order: an event and
/// its user-mode twin (`cycles`, `cycles:u`) and each event and its miss count stay in
/// one group, so the ratios the seeds read (IPC, miss rates) come from the same seconds.
/// The software events (task-clock, context switches …) use no counter and are in every
/// group, counted over the whole window.
pub fn groups() -> Vec<Vec<&'static str>> {
    let software = [
        "task-clock",
        "context-switches",
        "cpu-migrations",
        "page-faults",
    ];
    let hardware: Vec<&str> = EVENTS
        .iter()
        .copied()
        .filter(|e| !software.contains(e))
        .collect();
    hardware
        .chunks(PER_GROUP)
        .map(|g| g.iter().copied().chain(software).collect())
        .collect()
}

/// A slice shorter than this is not read: perf needs some milliseconds to attach and
/// count, and one stopped sooner writes nothing. Only the window's last, partial
/// interval can be this short.
pub const MIN_SLICE: std::time::Duration = std::time::Duration::from_millis(50);

/// One group's count over one slice: marks `first..end` of the window (mark 0 opens
/// it), so the slice covers the window's 1-second intervals `first..end`.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// Index into [`groups`].
    pub group: usize,
    /// The mark the slice began at.
    pub first: usize,
    /// The mark it ended at.
    pub end: usize,
    /// What perf counted, or why it could not.
    pub counts: Result<Counts, String>,
}

/// Groups being counted in turn.
pub struct Rotation {
    pids: Vec<u32>,
    dir: PathBuf,
    name: String,
    groups: Vec<Vec<&'static str>>,
    /// Marks per slice.
    slice: usize,
    /// Marks taken since the window opened.
    marks: usize,
    current: Option<(usize, usize, std::time::Instant, Result<Counting, String>)>,
    slices: Vec<Slice>,
}

impl Rotation {
    /// Starts the first group on `pids` at the window's opening mark; each group then
    /// runs `slice` marks (seconds).
    pub fn start(pids: &[u32], dir: &Path, name: &str, slice: usize) -> Rotation {
        let mut r = Rotation {
            pids: pids.to_vec(),
            dir: dir.to_path_buf(),
            name: name.to_string(),
            groups: groups(),
            slice: slice.max(1),
            marks: 0,
            current: None,
            slices: Vec::new(),
        };
        r.begin(0);
        r
    }

    fn begin(&mut self, group: usize) {
        let counting = perfstat::start_events(
            &self.pids,
            &self.groups[group],
            &self.dir,
            &format!("{}-g{group}-m{}", self.name, self.marks),
        );
        self.current = Some((group, self.marks, std::time::Instant::now(), counting));
    }

    fn end(&mut self) -> Option<usize> {
        let (group, first, began, counting) = self.current.take()?;
        if first == self.marks || began.elapsed() < MIN_SLICE {
            // Begun at or just before the window's last mark (the window closed on or
            // just after a slice boundary): a perf stopped as it starts may have written
            // nothing, and the interval's queries are left out of every group alike.
            if let Ok(c) = counting {
                let _ = c.stop();
            }
            return Some(group);
        }
        self.slices.push(Slice {
            group,
            first,
            end: self.marks,
            counts: counting.and_then(Counting::stop),
        });
        Some(group)
    }

    /// A mark of the window (each second): a slice that has run its length hands over
    /// to the next group.
    pub fn mark(&mut self) {
        self.marks += 1;
        let due =
            matches!(&self.current, Some((_, first, _, _)) if self.marks - first >= self.slice);
        if due {
            if let Some(g) = self.end() {
                self.begin((g + 1) % self.groups.len());
            }
        }
    }

    /// The window closed at the last mark: the running slice ends there.
    pub fn stop(mut self) -> Vec<Slice> {
        self.end();
        self.slices
    }
}

/// Each event's count per op over the slices that counted it: its counts summed over
/// them, divided by the ops of their intervals (`ops[i]` the ops of the window's
/// interval `i`), task-clock as `task-clock-us` as [`Counts::per_op`] names it; and
/// each event perf could not count with its reason, or why no slice counted at all.
/// An event whose slices held no ops has no figure.
pub fn per_op(slices: &[Slice], ops: &[u64]) -> (BTreeMap<String, f64>, Vec<(String, String)>) {
    let mut sums: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    let mut missing: Vec<(String, String)> = Vec::new();
    if slices.is_empty() {
        missing.push((
            "every event".into(),
            format!(
                "the window was shorter than a group can be counted in ({} ms)",
                MIN_SLICE.as_millis()
            ),
        ));
    }
    for s in slices {
        let slice_ops: u64 = ops.iter().skip(s.first).take(s.end - s.first).sum();
        match &s.counts {
            Ok(c) => {
                for (event, value) in &c.values {
                    let e = sums.entry(event.clone()).or_default();
                    e.0 += value;
                    e.1 += slice_ops;
                }
                for (event, why) in &c.missing {
                    if !missing.iter().any(|(m, _)| m == event) {
                        missing.push((event.clone(), why.clone()));
                    }
                }
            }
            Err(why) => {
                if !missing.iter().any(|(_, w)| w == why) {
                    missing.push((format!("group {}", s.group), why.clone()));
                }
            }
        }
    }
    // An event perf refused in one slice but counted in another is not missing.
    missing.retain(|(e, _)| !sums.contains_key(e));
    // A group whose turn never came (a window shorter than the groups' rotation).
    let all = groups();
    let turned: Vec<usize> = slices.iter().map(|s| s.group).collect();
    if !slices.is_empty() {
        for (g, events) in all.iter().enumerate().filter(|(g, _)| !turned.contains(g)) {
            // Events also in a group that had its turn (the software ones) were asked.
            let asked = |e: &str| turned.iter().any(|t| all[*t].contains(&e));
            for e in events.iter().filter(|e| !asked(e)) {
                missing.push((
                    e.to_string(),
                    format!(
                        "not counted: the window ended before group {g}'s turn (give each step \
                         at least {} slices)",
                        all.len()
                    ),
                ));
            }
        }
    }
    let per = sums
        .into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(event, (v, n))| perfstat::per_op_figure(&event, v, n))
        .collect();
    (per, missing)
}

/// Seconds each event was counted, summed over its slices: what a report states beside
/// a rotated figure (it is exact over those seconds, not the whole window).
pub fn counted_secs(slices: &[Slice], secs: &[f64]) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for s in slices {
        let t: f64 = secs.iter().skip(s.first).take(s.end - s.first).sum();
        if let Ok(c) = &s.counts {
            for (event, _) in &c.values {
                *out.entry(event.clone()).or_default() += t;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perfstat::SPLIT;

    /// Whether every event of [`SPLIT`] and its user twin share a group (so a kernel
    /// half is a difference of counts over the same seconds).
    fn split_twins_share_groups() -> bool {
        SPLIT.iter().all(|e| {
            groups()
                .iter()
                .any(|g| g.contains(e) && g.contains(&format!("{e}:u").as_str()))
        })
    }

    fn counts(csv: &str) -> Result<Counts, String> {
        perfstat::counts_from(csv)
    }

    #[test]
    fn groups_fit_the_counters_keep_twins_together_and_cover_every_event() {
        let g = groups();
        // Twenty hardware events in five full groups, and L1-dcache-stores alone last.
        assert_eq!(g.len(), 6);
        for group in &g {
            assert!(group.contains(&"task-clock"));
        }
        for group in &g[..5] {
            assert_eq!(group.len(), PER_GROUP + 4, "{group:?}");
        }
        assert_eq!(g[5][0], "L1-dcache-stores");
        assert_eq!(g[5].len(), 1 + 4);
        assert!(split_twins_share_groups());
        for pair in [
            ("branches", "branch-misses"),
            ("LLC-loads", "LLC-load-misses"),
            ("dTLB-loads", "dTLB-load-misses"),
        ] {
            assert!(
                g.iter().any(|x| x.contains(&pair.0) && x.contains(&pair.1)),
                "{pair:?}"
            );
        }
        for e in EVENTS {
            assert!(g.iter().any(|x| x.contains(e)), "{e}");
        }
    }

    /// Two slices of group 0 (cycles, instructions) over 3 and 2 seconds, one of group 1
    /// (branches) over 2: each event per query is its counts over the queries of its own
    /// seconds, whatever the rate did in the others.
    #[test]
    fn each_event_is_divided_by_the_queries_of_its_own_slices() {
        let g0 = "1000,,cycles,1,100.00,,\n600,,cycles:u,1,100.00,,\n500,,instructions,1,100.00,,\n300,,instructions:u,1,100.00,,\n30,msec,task-clock,1,100.00,,\n";
        let g1 = "80,,branches,1,100.00,,\n<not supported>,,branch-misses,0,100.00,,\n20,msec,task-clock,1,100.00,,\n";
        let slices = vec![
            Slice {
                group: 0,
                first: 0,
                end: 3,
                counts: counts(g0),
            },
            Slice {
                group: 1,
                first: 3,
                end: 5,
                counts: counts(g1),
            },
            Slice {
                group: 0,
                first: 5,
                end: 7,
                counts: counts(g0),
            },
        ];
        // 10 queries a second, then 40 in the last two seconds.
        let ops = [10, 10, 10, 10, 10, 40, 40];
        let (per, missing) = per_op(&slices, &ops);
        // cycles: 2000 over 30 + 80 queries; branches: 80 over 20.
        assert!((per["cycles"] - 2000.0 / 110.0).abs() < 1e-9, "{per:?}");
        assert!((per["cycles:k"] - 800.0 / 110.0).abs() < 1e-9, "{per:?}");
        assert!((per["branches"] - 4.0).abs() < 1e-9);
        // task-clock in every slice: 80 ms over all 130 queries, as µs.
        assert!((per["task-clock-us"] - 80_000.0 / 130.0).abs() < 1e-9);
        assert_eq!(
            missing[0],
            ("branch-misses".to_string(), "<not supported>".to_string())
        );
        // Groups 2 to 5 never had their turn: their events are said to be uncounted.
        let late: Vec<&str> = missing[1..].iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(late.len(), 13, "{late:?}");
        assert!(late.contains(&"L1-icache-loads") && late.contains(&"iTLB-load-misses"));
        assert!(
            missing[1].1.contains("before group 2's turn"),
            "{missing:?}"
        );
        // IPC from the rotated figures is the slices' own.
        let d = perfstat::derived(&per);
        assert!((d.ipc.unwrap() - 0.5).abs() < 1e-9);
        let secs = counted_secs(&slices, &[1.0; 7]);
        assert_eq!(
            (secs["cycles"], secs["branches"], secs["task-clock"]),
            (5.0, 2.0, 7.0)
        );
    }

    #[test]
    fn a_slice_perf_could_not_count_is_said_once_and_others_still_count() {
        let ok = "50,msec,task-clock,1,100.00,,\n";
        let slices = vec![
            Slice {
                group: 0,
                first: 0,
                end: 1,
                counts: Err("perf: not found".into()),
            },
            Slice {
                group: 1,
                first: 1,
                end: 2,
                counts: counts(ok),
            },
            Slice {
                group: 2,
                first: 2,
                end: 3,
                counts: Err("perf: not found".into()),
            },
        ];
        let (per, missing) = per_op(&slices, &[5, 5, 5]);
        assert!((per["task-clock-us"] - 10_000.0).abs() < 1e-9);
        assert_eq!(
            missing[0],
            ("group 0".to_string(), "perf: not found".to_string())
        );
        // Slices without queries give no figure rather than a division by zero.
        let (per, _) = per_op(&slices, &[0, 0, 0]);
        assert!(per.is_empty());
        // A window too short for any slice says so.
        let (per, missing) = per_op(&[], &[5]);
        assert!(per.is_empty());
        assert!(missing[0].1.contains("shorter than a group"), "{missing:?}");
    }
}
