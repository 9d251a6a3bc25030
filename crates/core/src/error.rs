//! Errors a target can return, kept separate from the binary's `anyhow` errors so that
//! the runner can tell an engine failure from a harness failure.

use thiserror::Error;

/// What every engine method returns: a [`TargetError`] unless said otherwise (as
/// `std::io::Result` is), so that the engines' many `Session` and `Target` signatures
/// fit on a line.
pub type Result<T, E = TargetError> = std::result::Result<T, E>;

/// What went wrong inside an engine while plumb drove it.
#[derive(Debug, Error)]
pub enum TargetError {
    /// The engine refused or failed the operation; the message is the engine's own.
    #[error("{engine}: {message}")]
    Engine {
        /// Which engine said it (rocksdb, memory, …).
        engine: &'static str,
        /// The engine's own words.
        message: String,
    },
    /// The options given cannot be honoured by this engine; names the option.
    #[error("option {option}: {message}")]
    Option {
        /// The option as the user wrote it.
        option: String,
        /// Why it cannot be used and what to do instead.
        message: String,
    },
    /// The engine does not implement this operation (e.g. ranges on a hash engine).
    #[error("{engine} does not support {op}")]
    Unsupported {
        /// The engine's name.
        engine: &'static str,
        /// The operation that was asked for.
        op: &'static str,
    },
}

impl TargetError {
    /// Wraps an engine's own error text so callers keep the engine name with it.
    pub fn engine(engine: &'static str, message: impl ToString) -> Self {
        TargetError::Engine {
            engine,
            message: message.to_string(),
        }
    }
}
