//! Runs whose target names another build of its engine (`rocksdb@8.5.3` in a plumb
//! that links 11.8.1): the plumb built against that release (found by
//! `plumb_targets::builds`) runs the plan with `plumb exec-plan`, into the same store
//! and suite, and this plumb reads the stored run back for its report. The same store
//! reaches the child through PLUMB_STORE (a URL may hold a password) and the command
//! the user typed through PLUMB_RECORDED_COMMAND, so the run records that, not the
//! hand-over.

use crate::family::{HandOver, HandedOver};
use crate::FamilyResult;
use plumb_core::RunStatus;
use plumb_plan::RunPlan;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a run could not be handed to its release's plumb, or read back.
#[derive(Debug, Error)]
pub enum ReleaseError {
    /// The plan names no release (a front end's bug).
    #[error("target {0:?} names no engine release")]
    NoRelease(String),
    /// No plumb is built against that release: the message says which script builds it.
    #[error("target {target:?}: {why}")]
    NotBuilt {
        /// The plan's target.
        target: String,
        /// What `plumb_targets::builds::find` said.
        why: String,
    },
    /// The plan or its directory could not be written for the child.
    #[error("{what}")]
    Write {
        /// What was being written.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The child plumb did not start.
    #[error("starting {}", bin.display())]
    Start {
        /// The release's plumb.
        bin: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The child ended without storing a run; it said why on its own stderr.
    #[error("{} ended ({status}) without a run: its message above says why", bin.display())]
    NoRun {
        /// The release's plumb.
        bin: PathBuf,
        /// How it ended.
        status: std::process::ExitStatus,
    },
    /// The child's run-id file held no id.
    #[error("{}: no run id in {text:?}", file.display())]
    BadId {
        /// The file.
        file: PathBuf,
        /// What it held.
        text: String,
    },
    /// The handed plan's file could not be read.
    #[error("reading the plan {}", path.display())]
    ReadPlan {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The handed plan's file is not a plan this plumb reads.
    #[error("{}: not a plan this plumb reads", path.display())]
    BadPlan {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The handed plan is for another release than this plumb links.
    #[error(
        "target {target:?} asks for {kind} {release}, and this plumb links {links}: it cannot \
         hand the run on"
    )]
    NotThisBuild {
        /// The plan's target.
        target: String,
        /// The engine's name.
        kind: String,
        /// The release asked for.
        release: String,
        /// The release this plumb links.
        links: String,
    },
    /// The stored run could not be read back.
    #[error("reading run {id}, stored by {}", bin.display())]
    ReadBack {
        /// The run.
        id: i64,
        /// The release's plumb.
        bin: PathBuf,
        /// Why.
        #[source]
        source: Box<plumb_store::StoreError>,
    },
}

/// The plan a plumb of another release handed to this one (`plumb exec-plan --plan
/// FILE`), which must be for this build: a plan for yet another release is refused
/// rather than handed on again.
pub fn read_plan(path: &Path) -> Result<RunPlan, ReleaseError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReleaseError::ReadPlan {
        path: path.to_path_buf(),
        source,
    })?;
    let plan: RunPlan = serde_json::from_str(&text).map_err(|source| ReleaseError::BadPlan {
        path: path.to_path_buf(),
        source,
    })?;
    if !plan.target.runs_in_this_build() {
        return Err(ReleaseError::NotThisBuild {
            target: plan.target.name.clone(),
            kind: plan.target.kind_label(),
            release: plan.target.release.as_deref().unwrap_or("?").to_string(),
            links: plan
                .target
                .engine_spec()
                .map(|e| e.version())
                .unwrap_or_default(),
        });
    }
    Ok(plan)
}

/// Runs `plan` in the plumb of its release; returns the stored run's id and status.
pub fn run(plan: &RunPlan, slot: HandedOver<'_>) -> Result<(i64, RunStatus), ReleaseError> {
    let (Some(release), Some(engine)) = (&plan.target.release, plan.target.engine_spec()) else {
        return Err(ReleaseError::NoRelease(plan.target.name.clone()));
    };
    let bin = plumb_targets::builds::find(engine.name(), release).map_err(|why| {
        ReleaseError::NotBuilt {
            target: plan.target.name.clone(),
            why,
        }
    })?;
    let write = |what: String| move |source| ReleaseError::Write { what, source };
    let tmp = tempfile::Builder::new()
        .prefix("plumb-exec-plan-")
        .tempdir()
        .map_err(write("creating a directory for the hand-over".into()))?;
    let (plan_file, id_file) = (tmp.path().join("plan.json"), tmp.path().join("run-id"));
    let json = serde_json::to_string(plan).expect("a plan serializes");
    std::fs::write(&plan_file, json).map_err(write(format!("writing {}", plan_file.display())))?;
    slot.notes.note(&format!(
        "{} runs in {} (built against {} {release})",
        plan.variant,
        bin.display(),
        engine.name()
    ));
    let status = command(&bin, &plan_file, &id_file, &slot)
        .status()
        .map_err(|source| ReleaseError::Start {
            bin: bin.clone(),
            source,
        })?;
    let id: i64 = match std::fs::read_to_string(&id_file) {
        Ok(text) => text
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| ReleaseError::BadId {
                file: id_file.clone(),
                text: text.clone(),
            })?,
        Err(_) => return Err(ReleaseError::NoRun { bin, status }),
    };
    let stored = slot
        .store
        .run(id)
        .map_err(|source| ReleaseError::ReadBack {
            id,
            bin: bin.clone(),
            source: Box::new(source),
        })?;
    Ok((id, stored.run.status))
}

/// The child's `plumb exec-plan` command line: the plan, where its run id goes, and
/// what the batch asked (suite, group, data root, keep, tag).
fn command(
    bin: &std::path::Path,
    plan_file: &std::path::Path,
    id_file: &std::path::Path,
    slot: &HandedOver<'_>,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(bin);
    cmd.arg("exec-plan")
        .arg("--plan")
        .arg(plan_file)
        .arg("--id-file")
        .arg(id_file)
        .env("PLUMB_STORE", slot.store.location())
        .env("PLUMB_RECORDED_COMMAND", &slot.run.command);
    if let Some(id) = slot.run.suite_id {
        cmd.arg("--suite-id").arg(id.to_string());
    }
    if let Some(g) = slot.group {
        cmd.arg("--grouped");
        if let Some(g) = g {
            cmd.arg("--group").arg(g.to_string());
        }
    }
    if let Some(root) = &slot.root {
        cmd.arg("--dir-root").arg(root);
    }
    if slot.keep {
        cmd.arg("--keep");
    }
    if let Some(t) = &slot.run.tag {
        cmd.arg("--tag").arg(t);
    }
    cmd
}

/// Plans whose target names another build of its engine, run by that build: asked
/// before the families, so a plan for `rocksdb@8.5.3` goes to that build whatever its
/// family.
pub struct ReleaseBuild;

impl HandOver for ReleaseBuild {
    fn takes(&self, plan: &RunPlan) -> bool {
        !plan.target.runs_in_this_build()
    }

    fn run(&self, plan: &RunPlan, to: HandedOver<'_>) -> FamilyResult<(i64, RunStatus)> {
        run(plan, to).map_err(Into::into)
    }
}
