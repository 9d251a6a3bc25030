//! perf stat over one step's window, the same way for every family: a SQL step and an
//! insert-benchmark step count the server's processes, a key-value step with
//! `--perf-groups` counts plumb's own (the embedded engine runs in it). Either all of
//! [`perfstat::EVENTS`] at once, multiplexed by perf over the window, or one group at a
//! time on the sampler's 1-second marks ([`crate::perfgroups`], seed 002's method), each
//! event exact over its own slices.
//!
//! The gauge that owns a window calls [`PerfWindow::open`] when the step's window opens,
//! [`PerfWindow::mark`] at each of the sampler's marks, [`PerfWindow::close`] when it
//! closes, and [`PerfWindow::figures`] once the window's per-second ops are known.

use crate::perfgroups::{self, Rotation, Slice};
use crate::perfstat::{self, Counting, Counts};
use std::collections::BTreeMap;

/// What one window's counting gave: each event per op, what perf could not count (event,
/// why), and, counted in turn, the seconds each event was counted (empty when all were
/// counted at once over the whole window).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerfFigures {
    /// Each event's count per op (`task-clock-us` for task-clock).
    pub per_op: BTreeMap<String, f64>,
    /// Events perf refused, with its reason.
    pub missing: Vec<(String, String)>,
    /// Seconds each event was counted, when counted in turn.
    pub counted_secs: BTreeMap<String, f64>,
}

impl PerfFigures {
    /// What perf could not count, one line each (`cycles: <not supported>`), as stored.
    pub fn unavailable(&self) -> Vec<String> {
        self.missing
            .iter()
            .map(|(e, why)| format!("{e}: {why}"))
            .collect()
    }
}

/// perf stat over one window.
pub struct PerfWindow {
    /// Seconds per group when counted in turn; 0 counts every event at once.
    group_secs: u32,
    counting: Option<Result<Counting, String>>,
    rotation: Option<Rotation>,
    slices: Option<Vec<Slice>>,
    counted: Option<Result<Counts, String>>,
}

impl PerfWindow {
    /// A window that counts its groups `group_secs` seconds each in turn, or all at once
    /// with 0.
    pub fn new(group_secs: u32) -> PerfWindow {
        PerfWindow {
            group_secs,
            counting: None,
            rotation: None,
            slices: None,
            counted: None,
        }
    }

    /// Starts counting `pids` (and what they fork); perf's output files are named after
    /// `name` in the temporary directory.
    pub fn open(&mut self, pids: &[u32], name: &str) {
        let dir = std::env::temp_dir();
        match self.group_secs {
            0 => self.counting = Some(perfstat::start(pids, &dir, name)),
            secs => self.rotation = Some(Rotation::start(pids, &dir, name, secs as usize)),
        }
    }

    /// One of the sampler's marks: a group that has run its seconds hands over.
    pub fn mark(&mut self) {
        if let Some(r) = &mut self.rotation {
            r.mark();
        }
    }

    /// The window closed: perf stops and its counts are read.
    pub fn close(&mut self) {
        self.counted = self.counting.take().map(|c| c.and_then(Counting::stop));
        self.slices = self.rotation.take().map(Rotation::stop);
    }

    /// The figures per op: counted in turn, each event over its slices' seconds divided by
    /// those seconds' ops (`ops[i]`, `secs[i]`: the window's interval `i`); counted at
    /// once, over the whole window's `total` ops. `None` when nothing was started (the
    /// processes were not visible), `Err` when perf could not count at all.
    pub fn figures(
        &self,
        ops: &[u64],
        secs: &[f64],
        total: u64,
    ) -> Option<Result<PerfFigures, String>> {
        match (&self.slices, &self.counted) {
            (Some(slices), _) => {
                let (per_op, missing) = perfgroups::per_op(slices, ops);
                Some(Ok(PerfFigures {
                    per_op,
                    missing,
                    counted_secs: perfgroups::counted_secs(slices, secs),
                }))
            }
            (None, Some(Ok(c))) => Some(Ok(PerfFigures {
                per_op: c.per_op(total),
                missing: c.missing.clone(),
                counted_secs: BTreeMap::new(),
            })),
            (None, Some(Err(why))) => Some(Err(why.clone())),
            (None, None) => None,
        }
    }
}
