//! What can go wrong in an insert-benchmark step, said so the user can act on it.

use thiserror::Error;

/// An insert-benchmark failure.
#[derive(Debug, Error)]
pub enum IbError {
    /// The server refused or lost a statement.
    #[error(transparent)]
    Sql(#[from] plumb_sql::SqlError),
    /// The embedded engine failed.
    #[error(transparent)]
    Engine(#[from] plumb_core::TargetError),
    /// What the engine holds is not what plumb wrote.
    #[error("verification: {0}")]
    Verify(String),
}
