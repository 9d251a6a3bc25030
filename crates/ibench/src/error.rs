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

/// A `plumb ib` flag asks for something plumb cannot run; found by [`crate::asked`]
/// before anything starts, so the user fixes the command line.
#[derive(Debug, Error)]
pub enum AskedError {
    /// `--memory-mb` is below what anything runs in (the value and the least).
    #[error("--memory-mb {0}")]
    Memory(String),
    /// A flag's value cannot be used.
    #[error("--{flag}: {message}")]
    Flag {
        /// The flag, without its dashes.
        flag: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A name in `--steps` that is not a step.
    #[error(transparent)]
    UnknownStep(#[from] plumb_workloads::ibench::BadIbStep),
    /// `--steps` in an order the benchmark cannot run (why, and what to give).
    #[error("--steps {0}")]
    Steps(String),
    /// `--kv` names no engine of this build.
    #[error("--kv {kv:?}: this build runs {}", plumb_targets::engines().join(", "))]
    UnknownEngine {
        /// The name given.
        kv: String,
    },
    /// `--kv` names an engine this build does not hold.
    #[error("--kv {kv:?}: {error}")]
    NotBuiltIn {
        /// The name given.
        kv: String,
        /// The registry's refusal (which build holds it).
        error: TargetError,
    },
    /// The engine cannot hold the benchmark's table.
    #[error("--kv {kv}: the insert benchmark needs an engine that stores data and deletes")]
    EngineUnfit {
        /// The name given.
        kv: String,
    },
    /// The engine refused `--sync` or `--cache-mb`.
    #[error("--kv {kv}: {error}")]
    EngineOption {
        /// The name given.
        kv: String,
        /// The engine's refusal.
        error: TargetError,
    },
    /// `--memory-mb` with a `--url` server, which plumb does not start.
    #[error("--memory-mb limits a server plumb starts; a --url server is someone else's")]
    MemoryOnUrl,
}

impl AskedError {
    /// `e` as the flag `--KEY` that set it, its underscores dashes.
    pub(crate) fn flag(e: plumb_plan::ParamError) -> AskedError {
        AskedError::Flag {
            flag: e.key.replace('_', "-"),
            message: e.message,
        }
    }
}

/// ` in DIR`, or nothing for an engine without a directory.
fn in_dir(dir: Option<&Path>) -> String {
    dir.map(|d| format!(" in {}", d.display()))
        .unwrap_or_default()
}
