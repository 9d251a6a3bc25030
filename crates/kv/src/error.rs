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
    /// `--engine` names no engine plumb knows.
    #[error(
        "--engine {engine:?}: plumb knows {}; this build runs: {}",
        plumb_targets::ENGINE_NAMES.join(", "),
        plumb_targets::engines().join(", ")
    )]
    UnknownEngine {
        /// The name given.
        engine: String,
    },
    /// `--engine` names an engine this build does not hold.
    #[error("--engine {engine:?}: {error}")]
    NotBuiltIn {
        /// The name given.
        engine: String,
        /// The registry's refusal (which build holds it).
        error: TargetError,
    },
    /// A flag's value is refused by the engine's or the workload's checks.
    #[error("{flag}: {message}")]
    Option {
        /// The flag as typed (`--key-size`, `--rocksdb-options`).
        flag: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The engine refused its options otherwise (its own error).
    #[error(transparent)]
    Engine(TargetError),
    /// `--repeat` is out of range.
    #[error("--repeat: must be between 1 and 1000")]
    Repeat,
    /// `--until` cannot look before `--repeat` runs out.
    #[error(
        "--until with --repeat {repeat}: the first look is after {first_look} repeats, so \
         --repeat (the most it may take) must be more; give e.g. --repeat 10"
    )]
    UntilRepeat {
        /// `--repeat` as given.
        repeat: u32,
        /// The repeats before the first look.
        first_look: usize,
    },
    /// `--memory-mb` is below what anything runs in (the value and the least).
    #[error("--memory-mb {0}")]
    Memory(String),
    /// `--use-existing-db` without the database's directory.
    #[error("--use-existing-db: needs --db DIR naming the database to reuse")]
    ExistingWithoutDb,
    /// `--keep` with `--db`, which is always kept.
    #[error("--keep: only applies to the temp dir; --db is always kept")]
    KeepWithDb,
    /// `--db` for an engine without files.
    #[error("--db: the {engine} engine keeps no files")]
    NoFiles {
        /// The engine's name.
        engine: String,
    },
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
