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
use std::path::PathBuf;
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

/// One batch as a command asks for it: the plans, and how their runs are kept. Built
/// by `Job::new` (each run in a fresh dir) with what the command's flags gave set on
/// top, so a new field is one line here and in the commands that use it.
pub struct Job<'a> {
    /// The planned runs, in order.
    pub runs: &'a [RunPlan],
    /// Where each run's data lives.
    pub dirs: DirPolicy,
    /// A label stored with every run.
    pub tag: Option<String>,
    /// The suite the runs belong to: its id, the runs already done, the groups made.
    pub suite: Option<(i64, HashSet<String>, HashMap<String, i64>)>,
    /// A variant's repeats form a group (`plumb compare gN`).
    pub grouped: bool,
    /// A profile recorded beside every measured step (`--profile`).
    pub profile: Option<ProfileKind>,
    /// What a family needs from the command line beyond the plan (a password, a port).
    pub extras: plumb_runner::family::Extras,
    /// Stops a variant's repeats once they are precise enough (`--until`).
    pub until: Option<&'a dyn plumb_runner::StopRule>,
}

impl<'a> Job<'a> {
    /// `runs`, each in a fresh dir under `root` (the temp dir when `None`), kept after
    /// the run if `keep`, with nothing else asked.
    pub fn new(runs: &'a [RunPlan], root: Option<PathBuf>, keep: bool) -> Self {
        Job {
            runs,
            dirs: DirPolicy::Fresh { root, keep },
            tag: None,
            suite: None,
            grouped: false,
            profile: None,
            extras: Default::default(),
            until: None,
        }
    }
}

/// Runs a batch of planned runs through the runner's lifecycle, storing into `store`
/// and telling `printer` as each run starts and ends.
pub fn run_batch(
    store: &mut Store,
    printer: &mut Printer,
    job: Job<'_>,
) -> anyhow::Result<BatchOutcome> {
    let perf_dir = plumb_runner::lifecycle::perf_dir(job.profile.is_some())?;
    // Hardware counters first, so the engine's threads (started at open) inherit them.
    let hw = plumb_runner::lifecycle::hw_counters(job.runs);
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    let tty = printer.tty && printer.style != Style::Json;
    let bar = Bar::new();
    let no = Quiet;
    let progress: &dyn Progress = if tty { &bar } else { &no };
    let (suite_id, done, groups) = match job.suite {
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
        provenance: provenance(job.tag),
        profile: perf_dir
            .as_ref()
            .zip(job.profile)
            .map(|(d, kind)| Profiling {
                dir: d.path(),
                kind,
            }),
        families: super::families::TABLE,
        extras: job.extras,
        elsewhere: Some(super::families::ELSEWHERE),
    };
    let out = life.run_batch(&Batch {
        runs: job.runs,
        suite_id,
        dirs: job.dirs,
        grouping: if job.grouped {
            Grouping::PerVariant
        } else {
            Grouping::None
        },
        done,
        groups,
        until: job.until,
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
