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
    /// A file of the build cache could not be read or written (the cause follows in
    /// the error's chain, as `{:#}` prints it).
    #[error("{what}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Measuring a build failed (the count or the duet; the cause follows in the chain).
    #[error("measuring {commit}")]
    Measure {
        /// The commit measured.
        commit: String,
        /// Why (boxed: a child's error is large beside the others).
        source: Box<ChildError>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The stored state of a bisect did not read back (the parse error follows in the
    /// chain).
    #[error("bisect {id}: its stored state is unreadable")]
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

/// Signals that stop a build or a child because the user stopped plumb: SIGHUP, SIGINT
/// and SIGTERM (Linux's numbers). A terminal's Ctrl-C reaches every process of the
/// foreground job at once, so the child's end can be seen before plumb's own handler
/// has set its flag.
const STOP_SIGNALS: [i32; 3] = [1, 2, 15];

/// The exit code a plumb child gives when it was interrupted (128 + SIGINT).
const INTERRUPTED_EXIT: i32 = 130;

impl BisectError {
    /// Whether this is what an interrupt leaves: a build or a measured child that
    /// ended by the user's signal (or a plumb child that exited as interrupted). Taken
    /// as the interrupt even before plumb's flag is set, so what was judged is saved
    /// and nothing is kept as failed.
    pub fn is_interrupt(&self) -> bool {
        use std::os::unix::process::ExitStatusExt;
        match self {
            BisectError::Interrupted(_) => true,
            BisectError::BuildStopped { signal, .. } => STOP_SIGNALS.contains(signal),
            BisectError::Measure { source, .. } => match source.as_ref() {
                ChildError::Failed { status, .. } => {
                    status.code() == Some(INTERRUPTED_EXIT)
                        || status.signal().is_some_and(|s| STOP_SIGNALS.contains(&s))
                }
                _ => false,
            },
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    #[test]
    fn the_users_signal_is_an_interrupt_and_a_failure_is_not() {
        let stopped = |signal| BisectError::BuildStopped {
            commit: "c".into(),
            signal,
        };
        assert!(stopped(2).is_interrupt());
        assert!(stopped(15).is_interrupt());
        // The OOM killer's SIGKILL is not the user's: the bisect stops with the error.
        assert!(!stopped(9).is_interrupt());
        // wait(2)'s status: exit code in the high byte, a signal in the low bits.
        let child = |raw| BisectError::Measure {
            commit: "c".into(),
            source: Box::new(ChildError::Failed {
                who: "A".into(),
                bin: "plumb".into(),
                command: "kv".into(),
                status: ExitStatus::from_raw(raw),
                kept: "",
            }),
        };
        assert!(child(130 << 8).is_interrupt());
        assert!(child(2).is_interrupt());
        assert!(!child(1 << 8).is_interrupt());
        assert!(!BisectError::Refused("x".into()).is_interrupt());
    }
}
