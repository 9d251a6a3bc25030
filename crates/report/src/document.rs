//! `plumb report`'s documents: runs (and, with several versions, their comparison)
//! or a suite's sweeps and commit curves, in one of the formats, read from the store.

use crate::compare::compare;
use crate::reporter::Reporter as _;
use crate::select::SelectError;
use crate::text::{comparison_text, TextReporter};
use crate::version::Version;
use plumb_store::{Store, StoredRun};

/// The formats a report is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Terminal tables.
    Text,
    /// Markdown tables, ready to paste.
    Md,
    /// One self-contained HTML file with inline SVG charts.
    Html,
    /// Every stored figure, one per row.
    Csv,
    /// Runs and comparison (docs/report.schema.json).
    Json,
}

/// Whether a selector names a suite (`s3`): its runs are drawn as sweeps.
pub fn names_suite(selectors: &[String]) -> bool {
    selectors.iter().any(|s| {
        s.strip_prefix('s')
            .is_some_and(|n| n.parse::<i64>().is_ok())
    })
}

/// The comparison as text: of what each version lost when every run compared is a
/// durability run (its writes per second mean nothing), else of its figures.
pub fn comparison_or_durability(versions: &[Version], c: &crate::compare::Comparison) -> String {
    crate::durability::compare_text(versions).unwrap_or_else(|| comparison_text(c))
}

/// The stored CPU profiles of `runs`, for the HTML pages that draw flame graphs.
pub fn profiles(store: &Store, runs: &[StoredRun]) -> Result<crate::html::Profiles, SelectError> {
    let mut profiles = crate::html::Profiles::new();
    for r in runs {
        profiles.insert(r.run.id, store.profiles(r.run.id)?);
    }
    Ok(profiles)
}

/// The report of `versions` in `format`; `suite`: the runs are a suite's, drawn as its
/// sweeps (throughput against threads and size) and commit curves read against the
/// host's fsync ceiling.
pub fn report(
    store: &Store,
    versions: &[Version],
    suite: bool,
    format: Format,
) -> Result<String, SelectError> {
    let runs: Vec<_> = versions
        .iter()
        .flat_map(|v| v.runs.iter().cloned())
        .collect();
    let c = (versions.len() > 1).then(|| compare(versions));
    let curves = if suite {
        crate::sweep::curves(&runs)
    } else {
        Vec::new()
    };
    // Durable commit curves are read against the fsync ceiling of the runs' host.
    let fsync = if suite {
        let host = runs
            .iter()
            .find_map(|r| r.run.host.as_ref()?.inventory.hostname.clone());
        match host {
            Some(h) => crate::commits::fsync_ceiling(&store.ceilings(&h)?),
            None => None,
        }
    } else {
        None
    };
    let run_lines = || -> String { runs.iter().map(|r| crate::one_line(r) + "\n").collect() };
    Ok(match format {
        Format::Text if suite => {
            let mut s = crate::sweep::text(&curves);
            s.push_str(&crate::commits::text(&curves, fsync));
            if let Some(t) = crate::durability::text(&runs) {
                s.push_str(&format!("durability\n{t}\n"));
            }
            s.push_str(&run_lines());
            if let Some(c) = &c {
                s.push_str(&comparison_text(c));
            }
            s
        }
        Format::Md if suite => {
            let mut s = String::from("## Sweeps\n\n");
            s.push_str(&crate::sweep::markdown(&curves));
            s.push_str(&crate::commits::markdown(&curves, fsync));
            if let Some(t) = crate::durability::markdown(&runs) {
                s.push_str(&format!("## Durability\n\n{t}\n"));
            }
            s.push_str("## Runs\n\n");
            for l in run_lines().lines() {
                s.push_str(&format!("- {}\n", crate::format::cell(l)));
            }
            s
        }
        Format::Html if suite => crate::html::suite_report(&runs, &curves, fsync),
        Format::Text => {
            let mut s: String = runs.iter().map(|r| TextReporter.render(r) + "\n").collect();
            if let Some(c) = &c {
                s.push_str(&comparison_or_durability(versions, c));
            }
            s
        }
        Format::Md => {
            let mut s: String = runs
                .iter()
                .map(|r| crate::markdown::run(r) + "\n")
                .collect();
            if let Some(c) = &c {
                s.push_str(&crate::markdown::comparison(c));
            }
            s
        }
        Format::Html => {
            crate::html::report_with_profiles(&runs, c.as_ref(), &profiles(store, &runs)?)
        }
        Format::Csv => crate::csv::runs(&runs),
        Format::Json => {
            serde_json::to_string_pretty(&crate::json::report(&runs, c.as_ref()))
                .expect("a report serialises")
                + "\n"
        }
    })
}
