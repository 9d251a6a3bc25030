//! `plumb run SUITE --queue NAME` and `plumb worker --queue NAME`: one plan run by a
//! fleet (plumb_runner::fleet: the queue, the claims, heartbeats and leases); each run
//! goes through the same batch as `plumb run`, stored with its host's inventory.

use super::execute::{self, Job, Printer, Style, INTERRUPTED};
use super::StoreArg;
use plumb_core::RunStatus;
use plumb_plan::Plan;
use plumb_runner::fleet::{self, Event, Item, Ran, Worker};
use plumb_store::Store;
use std::collections::{HashMap, HashSet};
use std::process::ExitCode;

/// Puts every run of `plan` (already stored as suite `suite_id`) into `queue`, and
/// says how each host takes them.
pub fn enqueue(store: &Store, queue: &str, suite_id: i64, plan: &Plan) -> anyhow::Result<()> {
    let n = fleet::enqueue(store, queue, suite_id, plan)?;
    if !store.is_shared() {
        eprintln!(
            "plumb: note: the store {} is a SQLite file, so only workers on this host can \
             reach it; give --store postgres://… for a fleet",
            store.shown()
        );
    }
    eprintln!(
        "plumb: suite s{suite_id} ({}): {n} runs queued on {queue:?}. On each host run\n  \
         plumb worker --queue {queue} --store {}\n(with the password in PGPASSWORD, or in \
         the URL)",
        plan.name,
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

pub fn run(a: WorkerArgs) -> anyhow::Result<ExitCode> {
    let w = Worker {
        path: a.store.path(),
        name: fleet::worker_name(),
        queue: a.queue.clone(),
        lease: a.lease,
        wait: a.wait,
        max_runs: a.max_runs,
        interrupt: &INTERRUPTED,
    };
    w.check()?;
    let mut store = a.store.open_existing()?;
    let me = &w.name;
    eprintln!(
        "plumb worker {me}: taking runs from {:?} in {}",
        a.queue,
        store.shown()
    );
    let mut run = |store: &mut Store, item: &Item, groups: Option<(i64, HashMap<String, i64>)>| {
        let mut printer = Printer::new(Style::Line);
        let job = Job {
            tag: a.tag.clone(),
            suite: groups.map(|(s, g)| (s, HashSet::new(), g)),
            grouped: item.grouped,
            ..Job::new(std::slice::from_ref(&item.plan), item.dir.clone(), a.keep)
        };
        let out = execute::run_batch(store, &mut printer, job);
        let printed = printer.finish();
        Ran::of(
            out.as_ref().map_err(|e| format!("{e:#}")),
            printed.map_err(|e| format!("{e:#}")),
        )
    };
    let (done, worst) = w.work(&mut store, &mut run, &mut |e| match e {
        Event::Claimed(claim, item) => eprintln!(
            "plumb worker {me}: item {} (attempt {}): {} repeat {}",
            claim.id, claim.attempt, item.plan.variant, item.plan.repeat
        ),
        Event::Heartbeat(e) => eprintln!("plumb worker {me}: heartbeat: {e}"),
        Event::Released(id) => {
            eprintln!("plumb worker {me}: interrupted; item {id} is queued again")
        }
        Event::Lost(id, run) => eprintln!(
            "plumb worker {me}: item {id} was given to another worker (no heartbeat for \
             {}s); its result is theirs, run {} stays stored",
            a.lease,
            run.map_or("-".into(), |r| r.to_string())
        ),
    })?;
    if worst != RunStatus::Interrupted {
        eprintln!(
            "plumb worker {me}: {done} runs, queue {:?} has no more for now",
            a.queue
        );
    }
    Ok(execute::exit_code(worst))
}
