//! Reporters turn a stored run into something a person reads. The terminal report
//! follows tools/benchmark.sh's columns so RocksDB users find their figures where they
//! expect them; later reporters (Markdown, HTML, CSV) implement the same trait.

mod format;
mod text;

pub use format::{fixed, sig};
pub use text::TextReporter;

use plumb_store::StoredRun;

/// Renders a run. Pure: no IO, so every reporter can be snapshot-tested.
pub trait Reporter {
    /// The rendered document.
    fn render(&self, run: &StoredRun) -> String;
}
