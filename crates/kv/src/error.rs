//! What can go wrong in the key-value family outside its steps (a step's failure is
//! stored with it, as its outcome's error): the flags of `plumb kv` checked before
//! anything is written, and a planned run's engine brought up. Each says what plumb
//! was doing, with what, and what to change.

use plumb_core::TargetError;
use plumb_workloads::mix::MixError;
use plumb_workloads::steps::WorkloadError;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A `plumb kv` flag asks for something plumb cannot run or write into; found by
/// [`crate::asked`] before anything is written, so the user fixes the command line.
#[derive(Debug, Error)]
pub enum AskedError {
    /// `--benchmarks` or `--workload` names a step or workload plumb does not know.
    #[error(transparent)]
    Steps(#[from] WorkloadError),
    /// The engine cannot run the steps asked (its reason from plumb_plan::refused).
    #[error("--engine {engine}: {why}")]
    EngineRefuses {
        /// The engine's name.
        engine: String,
        /// What it cannot do, and what to ask instead.
        why: String,
    },
    /// The mix step is asked without the file it runs.
    #[error(
        "--benchmarks mix: the mix step runs an op-mix file; give it with --mix FILE \
         (examples/mixes/ has YCSB's A-F and mixgraph as such files)"
    )]
    MixWithoutFile,
    /// A mix file is given without the step that runs it.
    #[error("--mix {file}: add `mix` to --benchmarks to run it")]
    MixWithoutStep {
        /// The file given.
        file: String,
    },
    /// mixgraph's parameters are given without the step that takes them.
    #[error("--mixgraph: add `mixgraph` to --benchmarks to run it")]
    MixgraphWithoutStep,
    /// A flag's value cannot be used (the mix file unreadable, a mixgraph parameter
    /// malformed).
    #[error("--{key}: {message}")]
    Flag {
        /// The suite key of the flag (`mix`, `mixgraph`).
        key: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// mixgraph's parameters make no mix (the parameter and its fix in the message).
    #[error(transparent)]
    Mixgraph(#[from] MixError),
    /// `--db` names something that is not a directory.
    #[error(
        "--db: {} is not a directory; plumb only writes into directories",
        .dir.display()
    )]
    DbNotADirectory {
        /// The path given.
        dir: PathBuf,
    },
    /// `--db`'s directory could not be listed (the system's reason in the message).
    #[error("--db: reading {}: {error}", .dir.display())]
    DbUnreadable {
        /// The directory.
        dir: PathBuf,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// `--use-existing-db`'s directory holds no database of the engine.
    #[error("--use-existing-db: {} holds no {engine} database", .dir.display())]
    NoDatabase {
        /// The directory.
        dir: PathBuf,
        /// The engine's name.
        engine: String,
    },
    /// `--db`'s directory holds files plumb would write among.
    #[error(
        "--db: {} is not empty; plumb never writes into a non-empty directory. \
         Use --use-existing-db to run on the database in it, --force to write anyway, \
         or an empty directory",
        .dir.display()
    )]
    DbNotEmpty {
        /// The directory.
        dir: PathBuf,
    },
    /// `--use-existing-db`'s directory is not there.
    #[error("--use-existing-db: {} does not exist", .dir.display())]
    DbMissing {
        /// The directory.
        dir: PathBuf,
    },
    /// `--db`'s directory could not be created (the system's reason in the message).
    #[error("--db: creating {}: {error}", .dir.display())]
    DbUncreatable {
        /// The directory.
        dir: PathBuf,
        /// Why it could not be created.
        error: std::io::Error,
    },
    /// `--db` could not be looked at (the system's reason in the message).
    #[error("--db: {}: {error}", .dir.display())]
    DbUnreachable {
        /// The path given.
        dir: PathBuf,
        /// Why it could not be read.
        error: std::io::Error,
    },
}

/// A planned key-value run could not be brought up ([`crate::KvFamily`]'s prepare):
/// nothing ran, and the message says which parameter or engine to fix.
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
}

/// ` in DIR`, or nothing for an engine without a directory.
fn in_dir(dir: Option<&Path>) -> String {
    dir.map(|d| format!(" in {}", d.display()))
        .unwrap_or_default()
}
