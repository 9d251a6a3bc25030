//! What stops a bisect; each message says what to give instead or what was kept.

use plumb_ab::ChildError;
use plumb_store::StoreError;
use thiserror::Error;

/// Why a bisect could not start or go on. The state saved before it stays in the
/// store, so `plumb bisect --resume ID` continues after the cause is fixed.
#[derive(Debug, Error)]
pub enum BisectError {
    /// The bisect cannot run as asked; the text names the flag or revision.
    #[error("{0}")]
    Refused(String),
    /// git failed on the repository.
    #[error("git {args} in {repo}: {why}")]
    Git {
        /// The repository.
        repo: String,
        /// The git arguments.
        args: String,
        /// Its error output, or why it could not start.
        why: String,
    },
    /// An end of the range did not build: there is nothing to search between.
    #[error("the {end} end {commit} did not build ({log}); fix the build or pick another --{end}")]
    EndBuild {
        /// "good" or "bad".
        end: &'static str,
        /// The commit.
        commit: String,
        /// Where the build's log is, and its last lines.
        log: String,
    },
    /// A build ended by a signal (Ctrl-C reaches the build too, or the OOM killer): the
    /// machine's doing, not the commit's, so nothing of it is kept as built or failed.
    #[error("the build of {commit} was stopped by signal {signal}; nothing of it is kept, and the next run builds it again")]
    BuildStopped {
        /// The commit.
        commit: String,
        /// The signal.
        signal: i32,
    },
    /// A file of the build cache could not be read or written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Measuring a build failed (the count or the duet).
    #[error("measuring {commit}: {source}")]
    Measure {
        /// The commit measured.
        commit: String,
        /// Why (boxed: a child's error is large beside the others).
        source: Box<ChildError>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The stored state of a bisect did not read back.
    #[error("bisect {id}: its stored state is unreadable: {source}")]
    State {
        /// The bisect.
        id: i64,
        /// The parse error.
        source: serde_json::Error,
    },
    /// Ctrl-C: the steps before it are saved.
    #[error("interrupted; the steps judged are saved: continue with `plumb bisect --resume {0}`")]
    Interrupted(i64),
}
