//! The durability table: for each target, mode and kind of cut, the kills that landed,
//! the writes acknowledged, those lost or wrong after the last trial, and the verdict.
//! `plumb durability` prints it after its runs, `plumb show` and `plumb report` print
//! it from the store, one row per stored durability step.

use plumb_core::{DurabilitySummary, StepStatus};
use plumb_store::StoredRun;

/// What the cuts mean, printed under the table.
pub const NOTE: &str = "The embedded engines' writer, and each server with all its processes, \
were killed with SIGKILL. cut kill: the OS page cache survived, so this finds writes held in \
the process's own memory after they were acknowledged. cut power: then every write no fsync \
reached was dropped (plumb's FUSE filesystem under the data directory), as the OS loses \
them when power fails; metadata counts as written at once. cut torn: as power, but a \
random part of the unsynced writes (whole pages or single 512-byte sectors) reached the \
disk first. A device that loses flushed writes needs a real power cut to show (`plumb host \
--dir DIR`: check disk.write_cache). Server nosync: PostgreSQL synchronous_commit = off, \
InnoDB and MyRocks flush_log_at_trx_commit = 0.";

/// The table's columns, as `plumb durability` has always printed them.
pub const HEADER: [&str; 8] = [
    "engine",
    "mode",
    "cut",
    "kills",
    "acknowledged",
    "lost",
    "wrong",
    "verdict",
];

/// Whether a run holds durability steps.
pub fn has(r: &StoredRun) -> bool {
    r.steps.iter().any(|(s, _)| s.summary.durability.is_some())
}

/// Every durability step of `runs`, in order, with how it ended.
pub fn steps(runs: &[StoredRun]) -> impl Iterator<Item = (&DurabilitySummary, StepStatus)> {
    runs.iter()
        .flat_map(|r| &r.steps)
        .filter_map(|(s, _)| s.summary.durability.as_ref().map(|d| (d, s.status)))
}

/// One row of the table.
pub fn row(d: &DurabilitySummary, status: StepStatus) -> Vec<String> {
    let verdict = if status == StepStatus::Interrupted {
        format!("{} (interrupted)", d.verdict)
    } else {
        d.verdict.clone()
    };
    vec![
        d.target.clone(),
        d.mode.clone(),
        d.cut.clone(),
        d.kills.to_string(),
        d.acknowledged.to_string(),
        d.lost.to_string(),
        d.wrong.to_string(),
        verdict,
    ]
}

/// The table of every durability step of `runs`; `None` when they have none.
pub fn table(runs: &[StoredRun]) -> Option<String> {
    let mut t = crate::table_left(&HEADER);
    let mut any = false;
    for (d, status) in steps(runs) {
        any = true;
        t.add_row(row(d, status));
    }
    any.then(|| t.to_string())
}

/// The table with its note, and why an engine did not open, for a terminal.
pub fn text(runs: &[StoredRun]) -> Option<String> {
    let mut out = table(runs)?;
    out.push_str("\n\n");
    for (d, _) in steps(runs) {
        if let Some(e) = &d.unopenable {
            out.push_str(&format!("{} {} ({}): {e}\n", d.target, d.mode, d.cut));
        }
    }
    out.push_str(NOTE);
    out.push('\n');
    Some(out)
}

/// The table as Markdown; `None` without durability steps.
pub fn markdown(runs: &[StoredRun]) -> Option<String> {
    let mut out = format!(
        "| {} |\n|{}\n",
        HEADER.join(" | "),
        "---|".repeat(HEADER.len())
    );
    let mut any = false;
    for (d, status) in steps(runs) {
        any = true;
        let cells: Vec<String> = row(d, status)
            .iter()
            .map(|c| crate::markdown::cell(c))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    any.then_some(out)
}

/// A durability run in one line: each step's losses out of its acknowledged writes.
pub fn one_line(r: &StoredRun) -> String {
    r.steps
        .iter()
        .filter_map(|(s, _)| {
            let d = s.summary.durability.as_ref()?;
            Some(format!(
                "{} {} lost of {} acknowledged",
                s.name,
                d.lost + d.wrong,
                d.acknowledged
            ))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
