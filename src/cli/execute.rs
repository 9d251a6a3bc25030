//! What every command that measures shares: the store, Ctrl-C, hardware counters, the
//! progress bar and the printing of finished runs around the runner's lifecycle.

use super::output;
use super::progress::{Bar, Quiet};
use plumb_core::RunStatus;
use plumb_plan::estimate::human_secs;
use plumb_plan::RunPlan;
use plumb_probes::profile::{ProfileKind, Profiling};
use plumb_runner::provenance::command_line;
use plumb_runner::{
    Batch, BatchOutcome, DirPolicy, Grouping, Lifecycle, Observer, Progress, Provenance, RunAt,
};
use plumb_store::{Store, StoredRun};
use std::collections::{HashMap, HashSet};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by Ctrl-C: the running step stops, finished steps and runs stay stored.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit code of a batch: 0 ok, 1 a run failed, 130 interrupted.
pub fn exit_code(s: RunStatus) -> ExitCode {
    match s {
        RunStatus::Ok => ExitCode::SUCCESS,
        RunStatus::Interrupted | RunStatus::Running => ExitCode::from(130),
        RunStatus::Failed => ExitCode::from(1),
    }
}

/// Who made a run, as recorded.
pub fn provenance(tag: Option<String>) -> Provenance {
    Provenance {
        command: command_line(),
        plumb_version: env!("CARGO_PKG_VERSION").to_string(),
        git_hash: Some(env!("PLUMB_GIT_HASH").to_string()).filter(|h| !h.is_empty()),
        tag,
    }
}

/// How finished runs are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// The full text report of each run (plumb kv).
    Full,
    /// One JSON document per run, printed together at the end.
    Json,
    /// One line per run (suites: the report comes from `plumb report s<ID>`).
    Line,
    /// The run's start only: a run handed over by another plumb (`plumb exec-plan`),
    /// whose report that plumb prints.
    StartOnly,
}

/// Prints runs as they finish and tells the user where a long plan stands.
pub struct Printer {
    style: Style,
    docs: Vec<serde_json::Value>,
    tty: bool,
    failed_print: Option<anyhow::Error>,
}

impl Printer {
    pub fn new(style: Style) -> Self {
        Printer {
            style,
            docs: Vec::new(),
            tty: std::io::stderr().is_terminal() && std::io::stdout().is_terminal(),
            failed_print: None,
        }
    }

    /// Prints what was held back (JSON) and reports a print that failed.
    pub fn finish(mut self) -> anyhow::Result<()> {
        if let Some(e) = self.failed_print.take() {
            return Err(e);
        }
        if self.style == Style::Json {
            let doc = if self.docs.len() == 1 {
                self.docs.remove(0)
            } else {
                serde_json::Value::Array(std::mem::take(&mut self.docs))
            };
            println!("{}", serde_json::to_string_pretty(&doc)?);
        }
        Ok(())
    }
}

impl Observer for Printer {
    fn run_starting(&mut self, at: RunAt<'_>) {
        let where_ = at
            .dir
            .map(|d| d.display().to_string())
            .unwrap_or_else(|| "memory".into());
        let left = if at.total > 1 {
            format!(
                ", ~{} left for {} runs",
                human_secs(at.secs_left),
                at.total - at.index + 1
            )
        } else {
            String::new()
        };
        if matches!(self.style, Style::Line | Style::StartOnly) || self.tty {
            eprintln!(
                "plumb run {}: [{}/{}] {} {} rep {} in {where_} (seed {}){left}",
                at.run_id,
                at.index,
                at.total,
                at.plan.variant,
                at.plan
                    .target
                    .engine_spec()
                    .map(|e| e.version())
                    .unwrap_or_else(|| at.plan.target.kind_label()),
                at.plan.repeat,
                at.plan.seed,
            );
        }
    }

    fn run_finished(&mut self, r: &StoredRun, store: &Store) {
        let printed = match self.style {
            Style::Full => output::print(r, false, store),
            Style::Json => {
                self.docs.push(plumb_report::json::run(r));
                Ok(())
            }
            Style::Line => {
                println!("{}", plumb_report::one_line(r));
                Ok(())
            }
            Style::StartOnly => Ok(()),
        };
        if let Err(e) = printed {
            self.failed_print.get_or_insert(e);
        }
        match r.run.status {
            RunStatus::Interrupted => eprintln!(
                "plumb: run {} interrupted; finished steps are stored",
                r.run.id
            ),
            RunStatus::Failed => {
                for (s, _) in &r.steps {
                    if let Some(e) = &s.error {
                        eprintln!("plumb: run {} step {} failed: {e}", r.run.id, s.name);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Runs a batch of planned runs through the runner's lifecycle, storing into `store`.
#[allow(clippy::too_many_arguments)]
pub fn run_batch(
    store: &mut Store,
    tag: Option<String>,
    runs: &[RunPlan],
    suite: Option<(i64, HashSet<String>, HashMap<String, i64>)>,
    dirs: DirPolicy,
    grouping: Grouping,
    printer: &mut Printer,
    profile: Option<ProfileKind>,
    extras: plumb_runner::family::Extras,
) -> anyhow::Result<BatchOutcome> {
    run_batch_until(
        store, tag, runs, suite, dirs, grouping, printer, profile, extras, None,
    )
}

/// [`run_batch`] whose variants stop adding repeats once `until` says they are
/// precise enough (`--repeat N --until PCT`).
#[allow(clippy::too_many_arguments)]
pub fn run_batch_until(
    store: &mut Store,
    tag: Option<String>,
    runs: &[RunPlan],
    suite: Option<(i64, HashSet<String>, HashMap<String, i64>)>,
    dirs: DirPolicy,
    grouping: Grouping,
    printer: &mut Printer,
    profile: Option<ProfileKind>,
    extras: plumb_runner::family::Extras,
    until: Option<&dyn plumb_runner::StopRule>,
) -> anyhow::Result<BatchOutcome> {
    let perf_dir = plumb_runner::lifecycle::perf_dir(profile.is_some())?;
    // Hardware counters first, so the engine's threads (started at open) inherit them.
    let hw = plumb_runner::lifecycle::hw_counters(runs);
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    let tty = printer.tty && printer.style != Style::Json;
    let bar = Bar::new();
    let no = Quiet;
    let progress: &dyn Progress = if tty { &bar } else { &no };
    let (suite_id, done, groups) = match suite {
        Some((id, d, g)) => (Some(id), d, g),
        None => (None, HashSet::new(), HashMap::new()),
    };
    let mut life = Lifecycle {
        store,
        hw: &hw,
        interrupt: &INTERRUPTED,
        progress,
        observer: &mut BarObserver {
            inner: printer,
            bar: &bar,
        },
        provenance: provenance(tag),
        profile: perf_dir.as_ref().zip(profile).map(|(d, kind)| Profiling {
            dir: d.path(),
            kind,
        }),
        families: super::families::TABLE,
        extras,
        elsewhere: Some(super::families::ELSEWHERE),
    };
    let out = life.run_batch(&Batch {
        runs,
        suite_id,
        dirs,
        grouping,
        done,
        groups,
        until,
    })?;
    Ok(out)
}

/// Forwards to the printer and keeps the bar's run context current.
struct BarObserver<'a> {
    inner: &'a mut Printer,
    bar: &'a Bar,
}

impl Observer for BarObserver<'_> {
    fn run_starting(&mut self, at: RunAt<'_>) {
        self.inner.run_starting(at);
        self.bar.set_context(if at.total > 1 {
            format!(
                "run {}/{} {} · suite ~{} left · ",
                at.index,
                at.total,
                at.plan.variant,
                human_secs(at.secs_left)
            )
        } else {
            String::new()
        });
    }
    fn run_finished(&mut self, run: &StoredRun, store: &Store) {
        self.inner.run_finished(run, store);
    }
}
