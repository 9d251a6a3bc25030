//! Reporters turn a stored run into something a person reads. The terminal report
//! follows tools/benchmark.sh's columns so RocksDB users find their figures where they
//! expect them; later reporters (Markdown, HTML, CSV) implement the same trait.

pub mod ab;
pub mod attribution;
pub mod base;
pub mod bloat;
pub mod changepoint;
pub mod check;
pub mod clients;
pub mod commits;
pub mod compare;
pub mod csv;
pub mod device;
pub mod document;
pub mod durability;
pub mod explain;
pub mod export;
mod faults;
pub mod flame;
mod format;
pub mod gate;
pub mod history;
pub mod html;
pub mod ibench;
pub mod json;
mod lsm;
pub mod markdown;
pub mod metrics;
pub mod noise;
pub mod perf_table;
pub mod permtest;
pub mod phases;
pub mod power;
mod reporter;
pub mod select;
pub mod sequential;
pub mod server_seconds;
pub mod stats;
mod svg;
pub mod sweep;
mod text;
pub mod triage;
pub mod version;
pub mod warmup;
pub mod warnings;
pub mod window;

pub use compare::{compare, Comparison, Version};
// The formatting other crates print with (the binary's and hwprobe's tables, serve's
// figures); it lives in `format`, the crate's leaf, which imports nothing of the crate.
pub use format::{fixed, sig, table_left};
pub use reporter::Reporter;
pub use text::{comparison_text, TextReporter};

use plumb_store::{RunRecord, StoredRun};

/// A finished run in one line: id, status, variant and each measured step's ops/s,
/// for a suite's progress output.
pub fn one_line(r: &StoredRun) -> String {
    let variant = r
        .run
        .options
        .get("variant")
        .cloned()
        .unwrap_or_else(|| r.run.engine.clone());
    let steps: Vec<String> = if durability::has(r) {
        vec![durability::one_line(r)]
    } else {
        r.steps
            .iter()
            .filter(|(s, _)| !s.kind.is_maintenance())
            .map(|(s, _)| format!("{} {} ops/s", s.name, sig(Some(s.summary.ops_sec), 3)))
            .collect()
    };
    format!(
        "run {} {} {} rep {}: {}",
        r.run.id,
        r.run.status,
        variant,
        r.run
            .plan
            .as_ref()
            .and_then(|p| p["repeat"].as_u64())
            .unwrap_or(0),
        steps.join(", ")
    )
}

/// The stored runs as `plumb runs` lists them, newest first: id, start, status,
/// engine and its version, workload, tag.
pub fn runs_table(runs: &[RunRecord]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(vec![
        "run", "started", "status", "engine", "workload", "tag",
    ]);
    for r in runs {
        t.add_row(vec![
            r.id.to_string(),
            r.started_at.clone(),
            r.status.to_string(),
            format!("{} {}", r.engine, r.engine_version),
            r.workload.clone(),
            r.tag.clone().unwrap_or_default(),
        ]);
    }
    t.to_string()
}
