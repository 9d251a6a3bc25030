//! The device as `iostat -x` shows it (r/s, rMB/s, r_await, rareq-sz, w/s, wMB/s,
//! w_await, wareq-sz, aqu-sz, %util): over each step's measured window in the reports,
//! and over each 1-second interval in `plumb show --intervals`, so a run can be read
//! beside an `iostat -x 1` taken while it ran.

use crate::format::{esc, fixed, sig};
use crate::metrics::{metric, DEVICE};
use plumb_core::{Interval, StepSummary};
use plumb_store::StoredRun;
use std::fmt::Write;

/// Whether any step of the run has the device's figures.
pub fn has_device(r: &StoredRun) -> bool {
    r.steps.iter().any(|(s, _)| s.summary.device.is_some())
}

/// What the table's figures are, for its caption.
fn caption(r: &StoredRun, over: &str) -> String {
    format!(
        "device{} as iostat -x shows it over {over} (r_await, w_await ms; rareq-sz, \
         wareq-sz KiB; aqu-sz requests in flight)",
        r.run
            .device
            .as_deref()
            .map(|d| format!(" {d}"))
            .unwrap_or_default()
    )
}

/// The terminal table: one row per step with the device over its measured window;
/// `None` when no step has it (a data dir on tmpfs, a run stored before plumb read it).
pub fn text(r: &StoredRun) -> Option<String> {
    if !has_device(r) {
        return None;
    }
    let head: Vec<&str> = DEVICE
        .iter()
        .map(|id| metric(id).short)
        .chain(std::iter::once("test"))
        .collect();
    let mut t = crate::format::table(&head);
    for (st, _) in &r.steps {
        t.add_row(
            DEVICE
                .iter()
                .map(|id| metric(id).show(&st.summary))
                .chain(std::iter::once(st.name.clone())),
        );
    }
    Some(format!(
        "{}\n{t}\n",
        caption(r, "each step's measured window")
    ))
}

/// A Markdown table of the same, or `None`.
pub fn markdown(r: &StoredRun) -> Option<String> {
    if !has_device(r) {
        return None;
    }
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!(
        "\n{}\n\n| test |",
        caption(r, "each step's measured window")
    );
    for id in DEVICE {
        let _ = write!(out, " {} |", metric(id).short);
    }
    out.push_str("\n| --- |");
    out.push_str(&" --- |".repeat(DEVICE.len()));
    out.push('\n');
    for (st, _) in &r.steps {
        let _ = write!(out, "| {} |", cell(&st.name));
        for id in DEVICE {
            let _ = write!(out, " {} |", metric(id).show(&st.summary));
        }
        out.push('\n');
    }
    Some(out)
}

/// An HTML table of the device over one step's window for each run that has it
/// (`rows`: the run's name, already escaped, and the step's summary); empty when none
/// has it.
pub fn html(rows: &[(String, &StepSummary)]) -> String {
    if rows.iter().all(|(_, s)| s.device.is_none()) {
        return String::new();
    }
    let mut o = String::from(
        r#"<div class="scroll"><table class="summary device"><caption>device as <code>iostat -x</code> shows it over the step's window</caption><thead><tr><th>run</th>"#,
    );
    for id in DEVICE {
        let _ = write!(o, r#"<th class="num">{}</th>"#, esc(metric(id).label));
    }
    o.push_str("</tr></thead><tbody>");
    for (name, s) in rows {
        let _ = write!(o, "<tr><td>{name}</td>");
        for id in DEVICE {
            let _ = write!(o, r#"<td class="num">{}</td>"#, esc(&metric(id).show(s)));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
    o
}

/// One interval's device figure through the metric table, so it prints as the step's
/// does.
fn interval_cell(iv: &Interval, id: &str) -> String {
    let s = StepSummary {
        device: iv.device,
        ..StepSummary::default()
    };
    metric(id).show(&s)
}

/// Every measured step's 1-second intervals: throughput, latency and process CPU, then
/// the device as `iostat -x 1` shows each second (`plumb show --intervals`).
pub fn intervals_text(r: &StoredRun) -> String {
    let mut out = caption(r, "each 1-second interval");
    out.push_str(
        "; cpu% = process CPU / interval (100 = one core); steal% and outside% = the \
         hypervisor's and other processes' share of the whole machine's CPU (100 = every \
         core)\n",
    );
    let mut any = false;
    for (st, ivs) in &r.steps {
        if ivs.is_empty() {
            continue;
        }
        any = true;
        // An open-loop step's offered rate beside what it served, second by second, or
        // the clients a threads profile ran.
        let offered = ivs.iter().any(|iv| iv.target_ops_sec.is_some());
        let threads = ivs.iter().any(|iv| iv.threads.is_some());
        let mut head = vec!["t", "secs"];
        if offered {
            head.push("target/s");
        }
        if threads {
            head.push("threads");
        }
        head.extend(["ops/s", "p50", "p99", "cpu%", "steal%", "outside%"]);
        head.extend(DEVICE.iter().map(|id| metric(id).short));
        let mut t = crate::format::table_left(&head);
        for iv in ivs {
            let cpu_pct = iv
                .cpu_us
                .filter(|_| iv.secs > 0.0)
                .map(|us| us / (iv.secs * 1e6) * 100.0);
            let mut row = vec![fixed(Some(iv.t), 1), fixed(Some(iv.secs), 2)];
            if offered {
                row.push(fixed(iv.target_ops_sec, 0));
            }
            if threads {
                row.push(fixed(iv.threads, 2));
            }
            row.extend([
                fixed(Some(iv.ops_sec), 0),
                sig(iv.p50_us, 3),
                sig(iv.p99_us, 3),
                fixed(cpu_pct, 0),
                fixed(iv.steal_pct, 1),
                fixed(iv.outside_cpu_pct, 1),
            ]);
            row.extend(DEVICE.iter().map(|id| interval_cell(iv, id)));
            t.add_row(row);
        }
        let _ = write!(out, "\nstep {} ({})\n{t}\n", st.name, st.status);
        if let Some(server) = crate::server_seconds::text(&st.summary) {
            out.push_str(&server);
        }
    }
    if !any {
        out.push_str("\nno step has intervals\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::DeviceIo;
    use plumb_store::{RunRecord, StepRecord};

    fn io(r_s: f64, util: f64) -> DeviceIo {
        DeviceIo {
            r_s,
            rmb_s: r_s * 4.0 / 1024.0,
            r_await_ms: Some(0.125),
            rareq_kb: Some(4.0),
            util_pct: Some(util),
            aqu_sz: Some(0.5),
            ..DeviceIo::default()
        }
    }

    fn run(device: Option<DeviceIo>) -> StoredRun {
        let summary = StepSummary {
            ops: 3000,
            secs: 2.0,
            ops_sec: 1500.0,
            device,
            ..StepSummary::default()
        };
        let ivs = vec![
            Interval {
                t: 1.0,
                secs: 1.0,
                ops: 1000,
                ops_sec: 1000.0,
                cpu_us: Some(500_000.0),
                steal_pct: Some(2.5),
                outside_cpu_pct: Some(48.0),
                device: device.map(|_| io(1000.0, 40.0)),
                ..Interval::default()
            },
            Interval {
                t: 2.0,
                secs: 1.0,
                ops: 2000,
                ops_sec: 2000.0,
                device: device.map(|_| io(2000.0, 80.0)),
                ..Interval::default()
            },
        ];
        StoredRun {
            run: serde_json::from_value::<RunRecord>(serde_json::json!({
                "id": 1, "status": "ok", "tag": null, "command": "plumb kv",
                "workload": "readrandom", "engine": "rocksdb", "engine_version": "11.8.1",
                "plumb_version": "0.1.0", "git_hash": null, "options": {}, "seed": "1",
                "started_at": "a", "ended_at": "b", "data_dir": "/d", "device": "nvme0n1",
                "host": null
            }))
            .expect("a run record"),
            steps: vec![(
                StepRecord {
                    seq: 0,
                    name: "readrandom".into(),
                    kind: plumb_workloads::StepKind::ReadRandom.into(),
                    status: plumb_core::StepStatus::Ok,
                    error: None,
                    started_at: "a".into(),
                    ended_at: "b".into(),
                    config: serde_json::json!({}),
                    summary,
                },
                ivs,
            )],
        }
    }

    #[test]
    fn step_table_has_iostats_columns_or_is_left_out() {
        let r = run(Some(io(1500.0, 60.0)));
        let t = text(&r).unwrap();
        assert!(t.starts_with("device nvme0n1 as iostat -x shows it"), "{t}");
        for col in [
            "r/s", "rMB/s", "r_await", "rareq-sz", "w/s", "wMB/s", "w_await", "wareq-sz", "f/s",
            "aqu-sz", "%util",
        ] {
            assert!(t.contains(col), "{col} missing:\n{t}");
        }
        let row = t.lines().find(|l| l.contains("readrandom")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        // r/s, rMB/s, r_await, rareq-sz, w/s, wMB/s, w_await, wareq-sz, f/s, aqu-sz,
        // %util.
        assert_eq!(
            cells,
            [
                "1500",
                "5.86",
                "0.12",
                "4.00",
                "0",
                "0.00",
                "n/a",
                "n/a",
                "n/a",
                "0.50",
                "60.00",
                "readrandom"
            ]
        );
        assert!(markdown(&r)
            .unwrap()
            .contains("| readrandom | 1500 | 5.86 | 0.12 |"));
        assert_eq!(text(&run(None)), None);
        assert_eq!(markdown(&run(None)), None);
    }

    #[test]
    fn html_table_only_when_a_run_has_the_device() {
        let with = StepSummary {
            device: Some(io(1500.0, 60.0)),
            ..StepSummary::default()
        };
        let without = StepSummary::default();
        let h = html(&[("run 1".into(), &with), ("run 2".into(), &without)]);
        assert!(h.contains("<th class=\"num\">r_await ms</th>"), "{h}");
        assert!(h.contains("<th class=\"num\">%util</th>"), "{h}");
        assert!(h.contains("<td class=\"num\">60.00</td>"), "{h}");
        assert_eq!(h.matches("<tr><td>").count(), 2);
        assert_eq!(html(&[("run 2".into(), &without)]), "");
    }

    #[test]
    fn intervals_show_each_seconds_device() {
        let t = intervals_text(&run(Some(io(1500.0, 60.0))));
        assert!(t.contains("step readrandom (ok)"), "{t}");
        let rows: Vec<Vec<&str>> = t
            .lines()
            .filter(|l| l.trim_start().starts_with(['1', '2']))
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows.len(), 2, "{t}");
        // t, secs, ops/s, p50, p99, cpu%, steal%, outside%, then iostat's columns.
        assert_eq!(
            &rows[0][..8],
            ["1.0", "1.00", "1000", "n/a", "n/a", "50", "2.5", "48.0"]
        );
        assert_eq!(rows[0][8], "1000"); // r/s
        assert_eq!(rows[0][10], "0.12"); // r_await
        assert_eq!(rows[0][11], "4.00"); // rareq-sz
        assert_eq!(rows[0][18], "40.00"); // %util
        assert_eq!(
            (rows[1][5], rows[1][6], rows[1][18]),
            ("n/a", "n/a", "80.00")
        );
        // Without a device the columns say n/a, never 0.
        let t = intervals_text(&run(None));
        let row = t.lines().find(|l| l.trim_start().starts_with('1')).unwrap();
        assert!(row.trim_end().ends_with("n/a"), "{row}");
        assert!(!row.contains(" 0.00"), "{row}");
    }
}
