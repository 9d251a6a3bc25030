//! Reporters turn a stored run into something a person reads. The terminal report
//! follows tools/benchmark.sh's columns so RocksDB users find their figures where they
//! expect them; later reporters (Markdown, HTML, CSV) implement the same trait.

pub mod attribution;
pub mod compare;
pub mod csv;
mod format;
pub mod html;
pub mod json;
pub mod markdown;
pub mod stats;
mod svg;
mod text;
pub mod warnings;

pub use compare::{compare, Comparison, Version};
pub use format::{fixed, sig};
pub use text::{comparison_text, table_left, TextReporter};

use plumb_store::StoredRun;

/// Whether a stored step kind is unmeasured maintenance (flush, compact, …), which
/// every reporter leaves out of throughput figures.
pub(crate) fn is_maintenance(kind: &str) -> bool {
    kind.parse::<plumb_workloads::StepKind>()
        .is_ok_and(|k| k.is_maintenance())
}

/// Renders a run. Pure: no IO, so every reporter can be snapshot-tested.
pub trait Reporter {
    /// The rendered document.
    fn render(&self, run: &StoredRun) -> String;
}
