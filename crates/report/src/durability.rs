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
them when power fails, and every directory entry (create, rename, unlink) whose directory \
was not fsynced since is undone (dir entries posix; with ext4 a file's own fsync keeps its \
name too). cut at=fsync:N (step fsync-N, fsync-points for all): as power, right after the \
N-th fsync-family call, each point on a fresh directory, kills counting points. cut torn: as power, but a \
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
    let mut t = crate::format::table_left(&HEADER);
    let mut any = false;
    for (d, status) in steps(runs) {
        any = true;
        t.add_row(row(d, status));
    }
    any.then(|| t.to_string())
}

/// Every durability step of `runs` as `plumb durability --json` prints them: a JSON
/// array of rows (engine, mode, cut, kills, acknowledged, lost, wrong, verdict, and for
/// a crash-point step its `points`: counted, tried, not_reached, lost, unopened,
/// integrity_failed, check, failures).
pub fn json(runs: &[StoredRun]) -> serde_json::Value {
    steps(runs)
        .map(|(d, _)| {
            let mut row = serde_json::json!({
                "engine": d.target,
                "mode": d.mode,
                "cut": d.cut,
                "kills": d.kills,
                "acknowledged": d.acknowledged,
                "lost": d.lost,
                "wrong": d.wrong,
                "verdict": d.verdict,
            });
            // A crash-point step counts its points too (`--cut at=fsync:all`).
            if let (Some(p), Some(o)) = (&d.points, row.as_object_mut()) {
                o.insert("points".into(), serde_json::to_value(p).unwrap_or_default());
            }
            row
        })
        .collect()
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
            .map(|c| crate::format::cell(c))
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

/// The durability table in an HTML report: one row per stored durability step, with
/// the run it belongs to, and the note on what each cut means.
pub fn html_section(o: &mut String, runs: &[StoredRun]) {
    use crate::format::esc;
    use std::fmt::Write as _;
    if !runs.iter().any(has) {
        return;
    }
    o.push_str("<h2 id=\"durability\">Durability</h2><table><thead><tr><th>run</th>");
    for h in HEADER {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr></thead><tbody>");
    for r in runs {
        for (s, _) in &r.steps {
            let Some(d) = &s.summary.durability else {
                continue;
            };
            let lost = d.lost + d.wrong > 0;
            let _ = write!(
                o,
                "<tr{}><td>{}</td>",
                if lost { r#" class="bad""# } else { "" },
                r.run.id
            );
            for c in row(d, s.status) {
                let _ = write!(o, "<td>{}</td>", esc(&c));
            }
            o.push_str("</tr>");
        }
    }
    let _ = write!(o, "</tbody></table><p class=\"note\">{}</p>", esc(NOTE));
}

/// A durability comparison: for each engine or server, mode and cut, what each version
/// lost of what it acknowledged. Writes per second mean nothing here (a trial's writer
/// runs until a random kill), so this, not a throughput ratio, is what `plumb compare`
/// shows when every compared run is a durability run. `None` otherwise.
pub fn compare_text(versions: &[crate::version::Version]) -> Option<String> {
    let all: Vec<&StoredRun> = versions.iter().flat_map(|v| &v.runs).collect();
    if all.is_empty() || !all.iter().all(|r| has(r)) {
        return None;
    }
    // Rows in the order first seen; a version's repeats add up.
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for (d, _) in steps(
        &versions
            .iter()
            .flat_map(|v| v.runs.clone())
            .collect::<Vec<_>>(),
    ) {
        let k = (d.target.clone(), d.mode.clone(), d.cut.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut header: Vec<String> = vec!["engine".into(), "mode".into(), "cut".into()];
    header.extend(
        versions
            .iter()
            .map(|v| format!("{}: lost of acknowledged", v.label)),
    );
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = crate::format::table_left(&refs);
    for (target, mode, cut) in &keys {
        let mut cells = vec![target.clone(), mode.clone(), cut.clone()];
        for v in versions {
            let (mut ack, mut lost, mut kills, mut interrupted) = (0u64, 0u64, 0u64, false);
            for (d, status) in steps(&v.runs) {
                if (&d.target, &d.mode, &d.cut) == (target, mode, cut) {
                    ack += d.acknowledged;
                    lost += d.lost + d.wrong;
                    kills += u64::from(d.kills);
                    interrupted |= status == StepStatus::Interrupted;
                }
            }
            cells.push(if kills == 0 && ack == 0 {
                "-".into()
            } else {
                format!(
                    "{lost} of {ack} ({kills} kills){}",
                    if interrupted { ", interrupted" } else { "" }
                )
            });
        }
        t.add_row(cells);
    }
    Some(format!(
        "{t}\n\nA version loses nothing only if every acknowledged write survived every \
         kill; a difference in the number acknowledged is the writer's speed and the \
         kill moments, not durability.\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;
    use plumb_core::StepSummary;
    use plumb_store::{RunRecord, StepRecord};

    fn run(id: i64, steps: &[(&str, u64, u64, StepStatus)]) -> StoredRun {
        StoredRun {
            run: serde_json::from_value::<RunRecord>(serde_json::json!({
                "id": id, "status": "ok", "tag": null, "command": "plumb durability",
                "workload": "durability", "engine": "lmdb", "engine_version": "0.9.70",
                "plumb_version": "0.1.0", "git_hash": null, "options": {}, "seed": "1",
                "started_at": "a", "ended_at": "b", "data_dir": null, "device": null,
                "host": null
            }))
            .expect("a run record"),
            steps: steps
                .iter()
                .map(|&(mode, acknowledged, lost, status)| {
                    let d = DurabilitySummary {
                        target: "lmdb".into(),
                        mode: mode.into(),
                        cut: "kill".into(),
                        kills: 3,
                        acknowledged,
                        lost,
                        verdict: "v".into(),
                        ..DurabilitySummary::default()
                    };
                    let step = StepRecord {
                        seq: 0,
                        name: format!("{mode}.kill"),
                        kind: plumb_store::Kind::Durability,
                        status,
                        error: None,
                        started_at: "a".into(),
                        ended_at: "b".into(),
                        config: serde_json::json!({}),
                        summary: StepSummary {
                            // A writes-per-second figure the comparison must not use.
                            ops_sec: acknowledged as f64,
                            durability: Some(d),
                            ..StepSummary::default()
                        },
                    };
                    (step, Vec::new())
                })
                .collect(),
        }
    }

    #[test]
    fn a_durability_comparison_sets_losses_side_by_side_and_adds_repeats() {
        let ok = StepStatus::Ok;
        let versions = [
            Version {
                label: "g1".into(),
                runs: vec![
                    run(1, &[("sync", 100, 0, ok), ("nosync", 50, 5, ok)]),
                    run(2, &[("sync", 80, 0, ok), ("nosync", 40, 0, ok)]),
                ],
            },
            Version {
                label: "3".into(),
                runs: vec![run(3, &[("sync", 70, 2, StepStatus::Interrupted)])],
            },
        ];
        let t = compare_text(&versions).expect("all durability runs");
        let line = |mode: &str| {
            t.lines()
                .find(|l| l.split_whitespace().nth(1) == Some(mode))
                .unwrap_or_else(|| panic!("no {mode} row in\n{t}"))
                .to_string()
        };
        assert!(line("sync").contains("0 of 180 (6 kills)"), "{t}");
        assert!(
            line("sync").contains("2 of 70 (3 kills), interrupted"),
            "{t}"
        );
        assert!(line("nosync").contains("5 of 90 (6 kills)"), "{t}");
        assert!(line("nosync").trim_end().ends_with('-'), "{t}");
        assert!(t.contains("g1: lost of acknowledged"), "{t}");
        // A run that is not a durability run: the ordinary comparison.
        let mut mixed = versions.clone();
        mixed[1].runs[0].steps[0].0.summary.durability = None;
        assert_eq!(compare_text(&mixed), None);
    }

    #[test]
    fn the_html_section_marks_losses_and_says_nothing_without_durability_steps() {
        let runs = [run(
            7,
            &[
                ("sync", 10, 0, StepStatus::Ok),
                ("nosync", 10, 4, StepStatus::Ok),
            ],
        )];
        let mut o = String::new();
        html_section(&mut o, &runs);
        assert_eq!(o.matches("<tr class=\"bad\">").count(), 1, "{o}");
        assert_eq!(o.matches("<td>7</td>").count(), 2, "{o}");
        let mut none = runs.clone();
        for (s, _) in &mut none[0].steps {
            s.summary.durability = None;
        }
        let mut o = String::new();
        html_section(&mut o, &none);
        assert!(o.is_empty());
    }
}
