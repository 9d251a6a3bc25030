//! What goes wrong when plumb runs itself: a plan that cannot run (with what to do), a
//! child that would not start or failed, output that is not what a plumb child prints,
//! or the store the runs are read back from.

use plumb_report::select::SelectError;
use plumb_store::StoreError;
use thiserror::Error;

/// Why an A/B or a set of noise blocks stopped; every message says what to give instead
/// or what was kept.
#[derive(Debug, Error)]
pub enum ChildError {
    /// The plan cannot run as given; the text names the flag and what to give.
    #[error("{0}")]
    Refused(String),
    /// A child could not be started.
    #[error("{who}: cannot start {bin}: {source}")]
    Start {
        /// The side or block.
        who: String,
        /// The binary.
        bin: String,
        /// Why.
        source: std::io::Error,
    },
    /// A child ran and failed; what ran before it is kept in the store.
    #[error("{who}: `{bin} {command}` failed ({status}); {kept}")]
    Failed {
        /// The side or block.
        who: String,
        /// The binary.
        bin: String,
        /// Its command.
        command: String,
        /// How it ended.
        status: std::process::ExitStatus,
        /// What was kept, or that nothing more ran.
        kept: &'static str,
    },
    /// A child's `--json` output is not the runs a plumb benchmark prints.
    #[error("{who}: {what}")]
    Output {
        /// The side or block.
        who: String,
        /// What was wrong with it.
        what: String,
    },
    /// The data a duet's side B needs could not be made.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The store the runs are read back from.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The runs' noise history could not be read.
    #[error(transparent)]
    Select(#[from] SelectError),
}
