//! What can go wrong in an insert-benchmark step, or in bringing up its planned run,
//! said so the user can act on it.

use plumb_core::TargetError;
use plumb_runner::FamilyError;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// An insert-benchmark failure.
#[derive(Debug, Error)]
pub enum IbError {
    /// The server refused or lost a statement.
    #[error(transparent)]
    Sql(#[from] plumb_servers::SqlError),
    /// The embedded engine failed.
    #[error(transparent)]
    Engine(#[from] plumb_core::TargetError),
    /// What the engine holds is not what plumb wrote.
    #[error("verification: {0}")]
    Verify(String),
}

/// A planned insert-benchmark run could not be brought up ([`crate::family::IbFamily`]'s
/// prepare): nothing ran, and the message says which parameter, engine or server to fix.
#[derive(Debug, Error)]
pub enum PrepareError {
    /// A parameter of the plan cannot be used (a suite's key and why).
    #[error("{key}: {message}")]
    Param {
        /// The suite key.
        key: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// `rate_search` is not a latency bound (the bound's own message says how to write one).
    #[error("rate_search: {why}")]
    RateSearch {
        /// What is wrong with the bound given.
        why: String,
    },
    /// The plan's target is the host, which holds no table.
    #[error("the insert benchmark runs on an engine or a server")]
    NotATable,
    /// This plumb was built without the engine.
    #[error(transparent)]
    NotBuiltIn(TargetError),
    /// The engine cannot hold the benchmark's table.
    #[error("{engine}: the insert benchmark needs an engine that stores data and deletes")]
    EngineUnfit {
        /// The engine's name.
        engine: String,
    },
    /// The engine did not open (its own error beneath).
    #[error("opening {engine}{}", in_dir(.dir.as_deref()))]
    Open {
        /// The engine's name.
        engine: String,
        /// The run's data dir, when it has one.
        dir: Option<PathBuf>,
        /// The engine's refusal.
        #[source]
        source: TargetError,
    },
    /// The server could not be started, reached or identified (the SQL crate's error,
    /// which says which and why).
    #[error(transparent)]
    Server(FamilyError),
    /// The server refused the connection that reads its counters and settings.
    #[error(transparent)]
    Counters(#[from] plumb_servers::SqlError),
}

/// ` in DIR`, or nothing for an engine without a directory.
fn in_dir(dir: Option<&Path>) -> String {
    dir.map(|d| format!(" in {}", d.display()))
        .unwrap_or_default()
}
