//! Why a durability run could not be planned, or a trial could not run to its
//! verdict. A trial's failure is not a lost write (that is the verdict, stored with
//! the step): it is the harness that could not write, kill, cut or check.

use plumb_core::TargetError;
use plumb_powercut::PowerCutError;
use plumb_servers::SqlError;
use std::path::PathBuf;
use thiserror::Error;

/// What stopped a trial (or a step's first server) before its verdict: the disk under
/// `--dir`, the writer process, the engine or server, or the power-cut mount.
#[derive(Debug, Error)]
pub enum TrialError {
    /// The step's directory could not be made under `--dir`.
    #[error("--dir: making a directory in {}", root.display())]
    WorkDir {
        /// The directory given with `--dir` (or /var/tmp).
        root: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// A directory of the step (the engine's, a power cut's backing or mount point)
    /// could not be made.
    #[error("making {}", path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The engine's directory, or a power cut's directory's permissions, could not be
    /// set up under the step's directory.
    #[error(transparent)]
    DirSetup(std::io::Error),
    /// The recorder's log of acknowledged writes could not be created.
    #[error("creating {}", path.display())]
    AckLogCreate {
        /// The log's file.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// An acknowledgement could not be made durable, or the log read back.
    #[error(transparent)]
    AckLog(std::io::Error),
    /// The writer process (plumb itself) could not be found to start.
    #[error(transparent)]
    CurrentExe(std::io::Error),
    /// The engine's spec could not be handed to the writer.
    #[error(transparent)]
    Spec(serde_json::Error),
    /// The writer process did not start.
    #[error("starting the writer")]
    StartWriter {
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The writer and the recorder lost each other: a pipe, the kill or the wait failed.
    #[error(transparent)]
    Pipe(std::io::Error),
    /// The writer stopped before its first write: the trial measures nothing.
    #[error("the {engine} writer wrote nothing: {stderr}")]
    WroteNothing {
        /// The engine.
        engine: &'static str,
        /// What the writer said on its way out.
        stderr: String,
    },
    /// The engine failed an operation (opening, a write, a read).
    #[error(transparent)]
    Engine(#[from] TargetError),
    /// The engine did not open after the kill: everything acknowledged is lost.
    #[error("reopening {engine} after the kill")]
    Reopen {
        /// The engine.
        engine: &'static str,
        /// What the engine said.
        #[source]
        source: TargetError,
    },
    /// The server failed: starting, a statement, a restart, its stop.
    #[error(transparent)]
    Sql(#[from] SqlError),
    /// The power-cut filesystem did not mount.
    #[error("--cut power")]
    Mount {
        /// Why not.
        #[source]
        source: PowerCutError,
    },
    /// What a server's setup wrote could not be made durable before the first trial.
    #[error("--cut power")]
    SyncSetup {
        /// Why not.
        #[source]
        source: PowerCutError,
    },
    /// The power could not be cut as the step's kind of cut says.
    #[error("--cut {cut}")]
    Cut {
        /// The kind of cut as `--cut` spells it (`power`, `torn`, `at=fsync:all`).
        cut: String,
        /// Why not.
        #[source]
        source: PowerCutError,
    },
    /// The power-cut mount did not go at the step's end.
    #[error("--cut power: unmounting")]
    Unmount {
        /// Why not.
        #[source]
        source: PowerCutError,
    },
}

/// Why a durability run was refused before its first trial, or one of its steps
/// stopped: each names the parameter or the target, and a step's failure the step.
#[derive(Debug, Error)]
pub enum DurabilityError {
    /// A durability parameter is out of range.
    #[error("durability.{key}: {message}")]
    Params {
        /// The parameter, e.g. `kills`.
        key: &'static str,
        /// What is wrong and what to give.
        message: String,
    },
    /// The target cannot be tried (in one of its modes): why, and what to do.
    #[error("target {target:?}: {why}")]
    Refused {
        /// The target's name.
        target: String,
        /// Why not.
        why: String,
    },
    /// The target is neither an engine that keeps files nor a server plumb starts.
    #[error(
        "target {target:?}: durability runs on an engine that keeps files or a server plumb \
         starts"
    )]
    NotDurable {
        /// The target's name.
        target: String,
    },
    /// The target's engine is not in this build.
    #[error(transparent)]
    Engine(#[from] TargetError),
    /// The directory given with `--dir` could not be made.
    #[error("--dir: making {}", root.display())]
    Root {
        /// The directory.
        root: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The plan has no mode × cut to try.
    #[error("target {target:?}: no modes to try")]
    NoModes {
        /// The target's name.
        target: String,
    },
    /// A step's trials (or its first server) failed.
    #[error("{step}")]
    Step {
        /// The target, mode and cut (`rocksdb sync --cut kill`).
        step: String,
        /// What failed.
        #[source]
        source: TrialError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_runner::failure::chain;

    #[test]
    fn a_step_says_the_step_then_what_failed_once() {
        let e = DurabilityError::Step {
            step: "rocksdb sync --cut kill".into(),
            source: TrialError::Reopen {
                engine: "rocksdb",
                source: TargetError::engine("rocksdb", "Corruption: bad block"),
            },
        };
        assert_eq!(
            chain(&e),
            "rocksdb sync --cut kill: reopening rocksdb after the kill: rocksdb: Corruption: bad block"
        );
        let bare = TrialError::AckLog(std::io::Error::other("disk full"));
        assert_eq!(chain(&bare), "disk full");
    }

    #[test]
    fn refusals_read_as_before() {
        let e = DurabilityError::NotDurable {
            target: "pg".into(),
        };
        assert_eq!(
            e.to_string(),
            "target \"pg\": durability runs on an engine that keeps files or a server plumb starts"
        );
    }
}
