//! `plumb run SUITE --queue NAME` and `plumb worker --queue NAME`: one plan run by a
//! fleet. The plan's runs go into a queue in the store (PostgreSQL, shared by every
//! host); each worker claims one run at a time, heartbeats while running it, stores it
//! with its host's inventory and hygiene, and takes the next. A worker that dies
//! (kill -9, host down) stops heartbeating, and once its lease runs out its run goes to
//! another worker; only the latest claim can finish an item, so each ends once.

use super::execute::{self, Printer, Style, INTERRUPTED};
use super::provenance::now;
use super::StoreArg;
use anyhow::Context;
use plumb_core::RunStatus;
use plumb_plan::{Plan, RunPlan};
use plumb_runner::{DirPolicy, Grouping};
use plumb_store::{Claim, QueueStatus, Store};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// One queued run: the planned run and what the suite says about running it.
#[derive(Debug, Serialize, Deserialize)]
struct Item {
    plan: RunPlan,
    /// The suite's `dir` (where data dirs are made), on whichever host runs it.
    dir: Option<PathBuf>,
    /// Whether the suite repeats variants (repeats are grouped).
    grouped: bool,
}

/// Puts every run of `plan` (already stored as suite `suite_id`) into `queue`.
pub fn enqueue(store: &Store, queue: &str, suite_id: i64, plan: &Plan) -> anyhow::Result<()> {
    if queue.trim().is_empty() {
        anyhow::bail!("--queue: give the queue a name (e.g. --queue nightly)");
    }
    let grouped = plan.runs.iter().any(|r| r.repeat > 0);
    let items = plan
        .runs
        .iter()
        .map(|r| {
            serde_json::to_value(Item {
                plan: r.clone(),
                dir: plan.dir.clone(),
                grouped,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    store.enqueue(queue, Some(suite_id), &items, &now())?;
    if !store.is_shared() {
        eprintln!(
            "plumb: note: the store {} is a SQLite file, so only workers on this host can \
             reach it; give --store postgres://… for a fleet",
            store.shown()
        );
    }
    eprintln!(
        "plumb: suite s{suite_id} ({}): {} runs queued on {queue:?}. On each host run\n  \
         plumb worker --queue {queue} --store {}\n(with the password in PGPASSWORD, or in \
         the URL)",
        plan.name,
        items.len(),
        store.shown()
    );
    Ok(())
}

/// `plumb worker`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb run examples/quick.toml --queue nightly --store postgres://bench@db1/plumb\n  \
plumb worker --queue nightly --store postgres://bench@db1/plumb     (on each host)\n  \
plumb report s1 --store postgres://bench@db1/plumb\n\
docs/fleet.md shows the same worker as a Kubernetes Indexed Job and over ssh.")]
pub struct WorkerArgs {
    /// The queue to take runs from (as given to `plumb run --queue`).
    #[arg(long, value_name = "NAME")]
    queue: String,
    /// Seconds without a heartbeat after which a run held by a worker is given to
    /// another (the worker heartbeats every quarter of it).
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    lease: f64,
    /// When the queue is empty, wait for more instead of exiting.
    #[arg(long)]
    wait: bool,
    /// Stop after this many runs.
    #[arg(long, value_name = "N")]
    max_runs: Option<usize>,
    /// A label stored with every run.
    #[arg(long)]
    tag: Option<String>,
    /// Keep every run's data dir.
    #[arg(long)]
    keep: bool,
    #[command(flatten)]
    store: StoreArg,
}

/// This worker as the queue names it: host and pid.
fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{host}:{}", std::process::id())
}

/// Heartbeats a claim from its own connection until dropped. Dropping wakes the thread
/// at once (the channel closes), so a finished run does not wait out a sleep.
struct Heart {
    stop: Option<mpsc::Sender<()>>,
    lost: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heart {
    fn start(path: PathBuf, claim: Claim, every: Duration) -> anyhow::Result<Heart> {
        let store = Store::open(&path)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let lost = Arc::new(AtomicBool::new(false));
        let l = lost.clone();
        let thread = std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                match store.heartbeat(&claim) {
                    Ok(true) => {}
                    Ok(false) => {
                        l.store(true, Ordering::Relaxed);
                        return;
                    }
                    // A store that does not answer for a while: the lease says how long.
                    Err(e) => eprintln!("plumb worker: heartbeat: {e}"),
                }
            }
        });
        Ok(Heart {
            stop: Some(stop),
            lost,
            thread: Some(thread),
        })
    }
}

impl Drop for Heart {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn run(a: WorkerArgs) -> anyhow::Result<ExitCode> {
    if !(a.lease.is_finite() && a.lease >= 1.0) {
        anyhow::bail!("--lease {}: give at least 1 second", a.lease);
    }
    let path = a.store.path();
    let mut store = a.store.open_existing()?;
    let me = worker_name();
    eprintln!(
        "plumb worker {me}: taking runs from {:?} in {}",
        a.queue,
        store.shown()
    );
    let mut done = 0usize;
    let mut worst = RunStatus::Ok;
    loop {
        if INTERRUPTED.load(Ordering::Relaxed) || a.max_runs.is_some_and(|m| done >= m) {
            break;
        }
        let Some(claim) = store.claim(&a.queue, &me, a.lease)? else {
            let open = store
                .queue_items(&a.queue)?
                .iter()
                .any(|i| matches!(i.status, QueueStatus::Queued | QueueStatus::Running));
            if !open && !a.wait {
                break;
            }
            // Items held by other workers may still come back (a dead worker's lease).
            std::thread::sleep(Duration::from_secs(1));
            continue;
        };
        let item: Item = serde_json::from_value(claim.item.clone())
            .with_context(|| format!("queue item {}: unreadable planned run", claim.id))?;
        eprintln!(
            "plumb worker {me}: item {} (attempt {}): {} repeat {}",
            claim.id, claim.attempt, item.plan.variant, item.plan.repeat
        );
        let heart = Heart::start(
            path.clone(),
            claim.clone(),
            Duration::from_secs_f64(a.lease / 4.0),
        )?;
        let groups: HashMap<String, i64> = match claim.suite_id {
            Some(s) => store
                .suite_runs(s)?
                .iter()
                .filter_map(|r| Some((r.options.get("variant")?.clone(), r.group_id?)))
                .collect(),
            None => HashMap::new(),
        };
        let mut printer = Printer::new(Style::Line);
        let out = execute::run_batch(
            &mut store,
            a.tag.clone(),
            std::slice::from_ref(&item.plan),
            claim.suite_id.map(|s| (s, HashSet::new(), groups)),
            DirPolicy::Fresh {
                root: item.dir.clone(),
                keep: a.keep,
            },
            if item.grouped {
                Grouping::PerVariant
            } else {
                Grouping::None
            },
            &mut printer,
            None,
            plumb_runner::family::Extras::default(),
        );
        printer.finish()?;
        let lost = heart.lost.load(Ordering::Relaxed);
        drop(heart);
        let (status, run_id, error) = match &out {
            Ok(o) => (o.status, o.run_ids.last().copied(), None),
            Err(e) => (RunStatus::Failed, None, Some(format!("{e:#}"))),
        };
        if status == RunStatus::Interrupted || INTERRUPTED.load(Ordering::Relaxed) {
            // Ctrl-C: the item goes back for another worker (or this one, later).
            store.release(&claim)?;
            eprintln!(
                "plumb worker {me}: interrupted; item {} is queued again",
                claim.id
            );
            return Ok(execute::exit_code(RunStatus::Interrupted));
        }
        if let (true, Some(suite), Some(run)) = (item.grouped, claim.suite_id, run_id) {
            // Another worker may have started this variant's group at the same moment.
            store.join_repeats(suite, run)?;
        }
        let q = if status == RunStatus::Ok {
            QueueStatus::Done
        } else {
            QueueStatus::Failed
        };
        let ended = store.finish_item(&claim, q, run_id, error.as_deref(), &now())?;
        if !ended || lost {
            eprintln!(
                "plumb worker {me}: item {} was given to another worker (no heartbeat for \
                 {}s); its result is theirs, run {} stays stored",
                claim.id,
                a.lease,
                run_id.map_or("-".into(), |r| r.to_string())
            );
        }
        worst = worst.worst(status);
        done += 1;
    }
    eprintln!(
        "plumb worker {me}: {done} runs, queue {:?} has no more for now",
        a.queue
    );
    Ok(execute::exit_code(worst))
}
