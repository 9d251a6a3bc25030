//! A step's faults as the reports show them: one row per fault (outage, first success,
//! recovery to 90% of the rate, p99 and max in its window beside steady state, errors
//! and timeouts), the recovery's logged phases under them, and the windows the HTML
//! charts shade. Every figure is read from the step's stored [`FaultReport`].

use crate::format::{esc, sig, table};
use plumb_core::{FaultFigures, FaultReport};
use plumb_store::StoredRun;
use std::fmt::Write as _;

/// Seconds, to the millisecond, or `-` when it never happened.
fn secs(v: Option<f64>) -> String {
    v.map_or("-".into(), |s| format!("{s:.3}"))
}

/// Microseconds as milliseconds, 3 significant digits.
fn ms(v: Option<f64>) -> String {
    sig(v.map(|u| u / 1e3), 3)
}

/// What the columns mean, said once under every faults table.
fn legend(r: &FaultReport) -> String {
    format!(
        "outage = from the fault until an op started after it succeeded at its first try within \
         {} s; first_ok = until one started after it succeeded at all; 90% = until the first \
         second that served 90% of the rate before it began; window = the fault to the end of \
         that second; steady = the seconds outside every window",
        r.timeout_s
    )
}

/// The phases of one fault's recovery on one line: `name +0.123s (0.05 s)`.
fn phases_line(f: &FaultFigures) -> String {
    f.phases
        .iter()
        .map(|p| {
            let at = p.at_s.map_or(String::new(), |t| format!(" {t:+.3}s"));
            let took = p.secs.map_or(String::new(), |s| format!(" ({s} s)"));
            format!("{}{at}{took}", p.name)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One fault's figures, as both tables show them: outage, first success, 90%, window
/// p99 and max, steady p99, errors, timeouts.
fn cells(f: &FaultFigures, r: &FaultReport) -> [String; 8] {
    [
        secs(f.outage_s),
        secs(f.first_success_s),
        secs(f.recovered_90_s),
        ms(f.p99_us),
        ms(f.pmax_us),
        ms(r.steady.p99_us),
        f.errors.to_string(),
        f.timeouts.to_string(),
    ]
}

/// The faults of a run's steps as a terminal table; `None` when no step had faults.
pub(crate) fn text(stored: &StoredRun) -> Option<String> {
    let mut t = table(&[
        "fault",
        "at_s",
        "back_s",
        "outage_s",
        "first_ok_s",
        "90%_s",
        "p99_ms",
        "max_ms",
        "steady_p99",
        "errors",
        "timeouts",
        "test",
    ]);
    let mut phases = String::new();
    let mut legend_of = None;
    for (st, _) in &stored.steps {
        let Some(r) = &st.summary.faults else {
            continue;
        };
        legend_of.get_or_insert_with(|| legend(r));
        for f in &r.faults {
            let mut row = vec![f.kind.clone(), format!("{:.2}", f.at_s), secs(f.back_s)];
            row.extend(cells(f, r));
            row.push(st.name.clone());
            t.add_row(row);
            if !f.phases.is_empty() || f.error.is_some() {
                let _ = write!(phases, "{} {} at {:.2}s: ", st.name, f.kind, f.at_s);
                phases.push_str(&phases_line(f));
                if let Some(e) = &f.error {
                    let _ = write!(phases, " (failed: {e})");
                }
                phases.push('\n');
            }
        }
    }
    let legend = legend_of?;
    let phases = if phases.is_empty() {
        String::new()
    } else {
        format!("recovery, from the server's log (seconds after the fault):\n{phases}")
    };
    Some(format!("faults: {legend}\n{t}\n{phases}"))
}

/// The windows of a step's faults, for a chart to shade: (from, to, label), seconds
/// into the measured window.
pub(crate) fn bands(r: &FaultReport) -> Vec<(f64, f64, String)> {
    r.faults
        .iter()
        .map(|f| (f.window.0, f.window.1, f.kind.clone()))
        .collect()
}

/// The faults of a step's runs as an HTML table, one row per fault of each run, with
/// its recovery's phases; nothing when none of them had faults.
pub(crate) fn html_table(o: &mut String, runs: &[(String, &FaultReport)]) {
    if runs.is_empty() {
        return;
    }
    let _ = write!(
        o,
        r#"<div class="scroll"><table class="summary" data-table="faults"><caption>faults: {}</caption><thead><tr><th>run</th><th>fault</th><th class="num">at s</th><th class="num">outage s</th><th class="num">first success s</th><th class="num">90% s</th><th class="num">p99 ms</th><th class="num">max ms</th><th class="num">steady p99 ms</th><th class="num">errors</th><th class="num">timeouts</th><th>recovery (s after the fault)</th></tr></thead><tbody>"#,
        esc(&legend(runs[0].1))
    );
    for (name, r) in runs {
        for f in &r.faults {
            let kind = esc(&f.kind);
            let _ = write!(
                o,
                r#"<tr data-fault="{kind}"><td>{name}</td><td>{kind}</td><td class="num">{:.2}</td>"#,
                f.at_s
            );
            for c in cells(f, r) {
                let _ = write!(o, r#"<td class="num">{c}</td>"#);
            }
            let _ = write!(o, "<td>{}</td></tr>", esc(&phases_line(f)));
        }
    }
    o.push_str("</tbody></table></div>");
}
