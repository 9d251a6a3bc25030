//! The single error type of this crate.

use std::path::PathBuf;

/// Why a probe could not produce a reading.
///
/// Each variant names the file (and, for parse failures, the 1-based line) that failed, so a
/// report can say exactly which counter source is missing or malformed instead of silently
/// printing zeros.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Reading or stat-ing a file or directory failed.
    #[error("{action} {}: {err}", path.display())]
    Io {
        /// What was being done, e.g. "reading" or "stat of".
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying OS error.
        err: std::io::Error,
    },
    /// A line of a kernel text file did not have the expected format.
    #[error("{}:{line}: {reason}", file.display())]
    Parse {
        /// The file being parsed (e.g. `/proc/diskstats`).
        file: PathBuf,
        /// 1-based line number of the offending line.
        line: usize,
        /// What was wrong with the line.
        reason: String,
    },
    /// No block device (with `/proc/diskstats` counters) could be found for a path.
    #[error("{}: no block device: {reason}", path.display())]
    NoDevice {
        /// The path (or device) whose disk counters were requested.
        path: PathBuf,
        /// Why no device was found, e.g. "tmpfs has no block device: disk counters unavailable".
        reason: String,
    },
}

impl ProbeError {
    /// Shorthand for [`ProbeError::Io`].
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, err: std::io::Error) -> Self {
        ProbeError::Io {
            action,
            path: path.into(),
            err,
        }
    }
}
