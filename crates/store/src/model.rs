//! Rows as the rest of plumb sees them, with the JSON shape `--json` prints.

use crate::db::{DbError, Row};
use crate::StoreError;
use plumb_core::{Interval, RunStatus, StepStatus, StepSummary};
pub use plumb_host::HostSnapshot;
pub use plumb_workloads::Kind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A run as it starts: its provenance.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    /// `--tag`.
    pub tag: Option<String>,
    /// The command line, as typed.
    pub command: String,
    /// The steps, comma-separated, or the workload name.
    pub workload: String,
    /// Engine name.
    pub engine: String,
    /// Engine version.
    pub engine_version: String,
    /// plumb's version.
    pub plumb_version: String,
    /// plumb's git commit, if built from a checkout.
    pub git_hash: Option<String>,
    /// Every effective option, defaults included.
    pub options: BTreeMap<String, String>,
    /// The run's seed.
    pub seed: u64,
    /// RFC 3339 start time.
    pub started_at: String,
    /// The data dir.
    pub data_dir: Option<String>,
    /// The block device holding it.
    pub device: Option<String>,
    /// Host snapshot, when taken.
    pub host: Option<HostSnapshot>,
    /// The group of repeats this run belongs to (the id of the group's first run).
    pub group_id: Option<i64>,
    /// Position within its group, from 0.
    pub repeat_index: Option<i64>,
    /// The suite this run belongs to.
    pub suite_id: Option<i64>,
    /// The plan that made it (plumb_plan::RunPlan's JSON form), for `plumb rerun`.
    pub plan: Option<serde_json::Value>,
    /// That plan's hash, for `--resume`.
    pub plan_hash: Option<String>,
}

/// A stored run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    /// Run id.
    pub id: i64,
    /// How it ended ("running" after a kill -9).
    pub status: RunStatus,
    /// `--tag`.
    pub tag: Option<String>,
    /// The command line.
    pub command: String,
    /// Steps or workload.
    pub workload: String,
    /// Engine name.
    pub engine: String,
    /// Engine version.
    pub engine_version: String,
    /// plumb's version.
    pub plumb_version: String,
    /// plumb's git commit.
    pub git_hash: Option<String>,
    /// Every effective option.
    pub options: BTreeMap<String, String>,
    /// The run's seed (a string: JSON numbers lose u64 precision).
    pub seed: String,
    /// RFC 3339 start.
    pub started_at: String,
    /// RFC 3339 end.
    pub ended_at: Option<String>,
    /// The data dir.
    pub data_dir: Option<String>,
    /// Its device.
    pub device: Option<String>,
    /// Host snapshot, read back typed (fields added since a run was stored take their
    /// defaults).
    pub host: Option<HostSnapshot>,
    /// The group of repeats (the id of its first run).
    #[serde(default)]
    pub group_id: Option<i64>,
    /// Position within its group, from 0.
    #[serde(default)]
    pub repeat_index: Option<i64>,
    /// The suite it belongs to (`plumb run`).
    #[serde(default)]
    pub suite_id: Option<i64>,
    /// The plan that made it; absent for runs stored before plans were kept.
    #[serde(default)]
    pub plan: Option<serde_json::Value>,
    /// The plan's hash.
    #[serde(default)]
    pub plan_hash: Option<String>,
}

/// A step as stored.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepRecord {
    /// Position in the run, from 0.
    pub seq: i64,
    /// Stored name (e.g. `overwritesome`).
    pub name: String,
    /// What the step did (db_bench's `overwrite`, a probe's `randread`).
    pub kind: Kind,
    /// How it ended.
    pub status: StepStatus,
    /// What failed.
    pub error: Option<String>,
    /// RFC 3339 start.
    pub started_at: String,
    /// RFC 3339 end.
    pub ended_at: String,
    /// The step's effective configuration.
    pub config: serde_json::Value,
    /// The summary.
    pub summary: StepSummary,
}

/// A run with its steps and their intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// The run.
    pub run: RunRecord,
    /// Each step with its 1-second intervals.
    pub steps: Vec<(StepRecord, Vec<Interval>)>,
}

pub(crate) const RUN_SELECT: &str = "SELECT r.id, r.status, r.tag, r.command, r.workload,
    r.engine, r.engine_version, r.plumb_version, r.git_hash, r.options, r.seed, r.started_at,
    r.ended_at, r.data_dir, r.device, r.host, r.group_id, r.repeat_index, r.suite_id, r.plan,
    r.plan_hash FROM runs r";

/// A row before its JSON columns are parsed.
pub(crate) struct RawRun {
    rec: RunRecord,
    options: String,
    host: Option<String>,
    plan: Option<String>,
}

pub(crate) fn run_from_row(r: &Row) -> Result<RawRun, DbError> {
    Ok(RawRun {
        rec: RunRecord {
            id: r.int(0)?,
            status: r.parsed(1)?,
            tag: r.opt_text(2)?,
            command: r.text(3)?,
            workload: r.text(4)?,
            engine: r.text(5)?,
            engine_version: r.text(6)?,
            plumb_version: r.text(7)?,
            git_hash: r.opt_text(8)?,
            options: BTreeMap::new(),
            seed: r.text(10)?,
            started_at: r.text(11)?,
            ended_at: r.opt_text(12)?,
            data_dir: r.opt_text(13)?,
            device: r.opt_text(14)?,
            host: None,
            group_id: r.opt_int(16)?,
            repeat_index: r.opt_int(17)?,
            suite_id: r.opt_int(18)?,
            plan: None,
            plan_hash: r.opt_text(20)?,
        },
        options: r.text(9)?,
        host: r.opt_text(15)?,
        plan: r.opt_text(19)?,
    })
}

impl RawRun {
    pub(crate) fn finish(self, store: &str) -> Result<RunRecord, StoreError> {
        let id = self.rec.id;
        let bad = |what, source| StoreError::Json {
            store: store.to_string(),
            run: id,
            what,
            source,
        };
        let mut rec = self.rec;
        rec.options = serde_json::from_str(&self.options).map_err(|e| bad("options", e))?;
        rec.host = match self.host {
            Some(h) => Some(serde_json::from_str(&h).map_err(|e| bad("host", e))?),
            None => None,
        };
        rec.plan = match self.plan {
            Some(p) => Some(serde_json::from_str(&p).map_err(|e| bad("plan", e))?),
            None => None,
        };
        Ok(rec)
    }
}

/// A suite as it starts.
#[derive(Debug, Clone)]
pub struct NewSuite {
    /// Its name.
    pub name: String,
    /// The file it was read from.
    pub file: Option<String>,
    /// The hash of its definition (the file, not the clock), to find it on `--resume`.
    pub definition_hash: String,
    /// The whole expanded plan (plumb_plan::Plan's JSON form).
    pub plan: serde_json::Value,
    /// RFC 3339 start.
    pub started_at: String,
}

/// A stored suite.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SuiteRecord {
    /// Suite id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The file it was read from.
    pub file: Option<String>,
    /// The hash of its definition.
    pub definition_hash: String,
    /// The expanded plan.
    pub plan: serde_json::Value,
    /// Running until every run is done (or the suite is interrupted).
    pub status: RunStatus,
    /// RFC 3339 start.
    pub started_at: String,
    /// RFC 3339 end.
    pub ended_at: Option<String>,
}

/// A hardware limit measured by a probe, kept per host so later steps can be read
/// against it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ceiling {
    /// Stable name, e.g. `disk.randread_4k_iops.qd32` or `mem.triad_gbs.t2`.
    pub name: String,
    /// The figure.
    pub value: f64,
    /// Its unit, e.g. `IOPS`, `GB/s`, `ops/s`.
    pub unit: String,
}

/// A stored ceiling with where it came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CeilingRecord {
    /// The ceiling.
    #[serde(flatten)]
    pub ceiling: Ceiling,
    /// The host it was measured on.
    pub host: String,
    /// The probe run that measured it.
    pub run_id: i64,
    /// RFC 3339.
    pub measured_at: String,
}
