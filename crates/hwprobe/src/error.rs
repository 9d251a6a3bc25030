//! Errors that stop a probe before it measures, each naming the path or option at fault.

use std::path::PathBuf;

/// Why a probe refused to start or could not set up.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The directory given with `--dir` is not one plumb will write into.
    #[error("--dir {path}: {reason}")]
    Refused {
        /// The path given.
        path: PathBuf,
        /// Why it is refused, and what to do instead.
        reason: String,
    },
    /// The path given with `--device` is not a block device plumb can read.
    #[error("--device {path}: {reason}")]
    Device {
        /// The path given.
        path: PathBuf,
        /// Why it is refused, and what to do instead.
        reason: String,
    },
    /// An option's value is out of range or does not parse.
    #[error("{option} {value:?}: {reason}")]
    BadOption {
        /// The option, e.g. `--depths`.
        option: &'static str,
        /// The value given.
        value: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// A system call on a file failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What plumb was doing, e.g. `creating`.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl ProbeError {
    /// An [`ProbeError::Io`] for `path`.
    pub(crate) fn io(what: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        ProbeError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }
}
