//! Runs whose target names another build of its engine (`rocksdb@8.5.3` in a plumb
//! that links 11.8.1): the plumb built against that release (found by
//! plumb_targets::builds) runs the plan with `plumb exec-plan`, into the same store and
//! suite, and this plumb reads the stored run back for its report. The same store
//! reaches the child through PLUMB_STORE (a URL may hold a password) and the command
//! the user typed through PLUMB_RECORDED_COMMAND, so the run records that, not the
//! hand-over.

use anyhow::{bail, Context};
use plumb_core::RunStatus;
use plumb_plan::RunPlan;
use plumb_runner::family::HandedOver;

/// Runs `plan` in the plumb of its release; returns the stored run's id and status.
pub fn run(plan: &RunPlan, slot: HandedOver<'_>) -> anyhow::Result<(i64, RunStatus)> {
    let (Some(release), Some(engine)) = (&plan.target.release, plan.target.engine_spec()) else {
        bail!("target {:?} names no engine release", plan.target.name);
    };
    let bin = plumb_targets::builds::find(engine.name(), release)
        .map_err(|why| anyhow::anyhow!("target {:?}: {why}", plan.target.name))?;
    let tmp = tempfile::Builder::new()
        .prefix("plumb-exec-plan-")
        .tempdir()
        .context("creating a directory for the hand-over")?;
    let (plan_file, id_file) = (tmp.path().join("plan.json"), tmp.path().join("run-id"));
    std::fs::write(&plan_file, serde_json::to_string(plan)?)
        .with_context(|| format!("writing {}", plan_file.display()))?;
    slot.notes.note(&format!(
        "{} runs in {} (built against {} {release})",
        plan.variant,
        bin.display(),
        engine.name()
    ));
    let mut cmd = std::process::Command::new(&bin);
    cmd.arg("exec-plan")
        .arg("--plan")
        .arg(&plan_file)
        .arg("--id-file")
        .arg(&id_file)
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
    let status = cmd
        .status()
        .with_context(|| format!("starting {}", bin.display()))?;
    let id: i64 = match std::fs::read_to_string(&id_file) {
        Ok(text) => text
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .with_context(|| format!("{}: no run id in {text:?}", id_file.display()))?,
        Err(_) => bail!(
            "{} ended ({status}) without a run: its message above says why",
            bin.display()
        ),
    };
    let stored = slot
        .store
        .run(id)
        .with_context(|| format!("reading run {id}, stored by {}", bin.display()))?;
    Ok((id, stored.run.status))
}

/// Plans whose target names another build of its engine, run by that build: asked
/// before the families, so a plan for `rocksdb@8.5.3` goes to that build whatever its
/// family.
pub struct ReleaseBuild;

impl plumb_runner::family::HandOver for ReleaseBuild {
    fn takes(&self, plan: &RunPlan) -> bool {
        !plan.target.runs_in_this_build()
    }

    fn run(&self, plan: &RunPlan, to: HandedOver<'_>) -> anyhow::Result<(i64, RunStatus)> {
        run(plan, to)
    }
}
