//! One plan run by a fleet. The plan's runs go into a queue in the store (PostgreSQL,
//! shared by every host); each worker claims one run at a time, heartbeats while
//! running it, stores it, and takes the next. A worker that dies (kill -9, host down)
//! stops heartbeating, and once its lease runs out its run goes to another worker;
//! only the latest claim can finish an item, so each ends once.

use crate::lifecycle::now;
use plumb_core::RunStatus;
use plumb_plan::{Plan, RunPlan};
use plumb_store::{Claim, QueueStatus, Store, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use thiserror::Error;

/// Why a fleet's queue could not be filled or worked.
#[derive(Debug, Error)]
pub enum FleetError {
    /// A flag that cannot work; the text says what to give.
    #[error("{0}")]
    Refused(String),
    /// A queued item that does not read back as a planned run (written by another
    /// plumb release?).
    #[error("queue item {id}: unreadable planned run: {source}")]
    Item {
        /// The item.
        id: i64,
        /// Why.
        source: serde_json::Error,
    },
    /// A planned run that does not serialise.
    #[error("queueing a planned run: {0}")]
    Encode(#[from] serde_json::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One queued run: the planned run and what the suite says about running it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Item {
    /// The run.
    pub plan: RunPlan,
    /// The suite's `dir` (where data dirs are made), on whichever host runs it.
    pub dir: Option<PathBuf>,
    /// Whether the suite repeats variants (repeats are grouped).
    pub grouped: bool,
}

/// Puts every run of `plan` (already stored as suite `suite_id`) into `queue`, and
/// returns how many.
pub fn enqueue(
    store: &Store,
    queue: &str,
    suite_id: i64,
    plan: &Plan,
) -> Result<usize, FleetError> {
    if queue.trim().is_empty() {
        return Err(FleetError::Refused(
            "--queue: give the queue a name (e.g. --queue nightly)".into(),
        ));
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
    Ok(items.len())
}

/// This worker as the queue names it: host and pid, so an item's holder can be found.
pub fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{host}:{}", std::process::id())
}

/// Heartbeats a claim from its own connection until dropped. Dropping wakes the thread
/// at once (the channel closes), so a finished run does not wait out a sleep.
struct Heart {
    stop: Option<mpsc::Sender<()>>,
    /// Set when the store said the claim is no longer this worker's.
    lost: Arc<AtomicBool>,
    /// The last heartbeat the store did not answer (the lease says how long it may).
    failed: Arc<Mutex<Option<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heart {
    fn start(path: &std::path::Path, claim: Claim, every: Duration) -> Result<Heart, FleetError> {
        let store = Store::open(path)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let lost = Arc::new(AtomicBool::new(false));
        let failed = Arc::new(Mutex::new(None));
        let (l, f) = (lost.clone(), failed.clone());
        let thread = std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                match store.heartbeat(&claim) {
                    Ok(true) => {}
                    Ok(false) => {
                        l.store(true, Ordering::Relaxed);
                        return;
                    }
                    Err(e) => *f.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string()),
                }
            }
        });
        Ok(Heart {
            stop: Some(stop),
            lost,
            failed,
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

/// What running one item ended in, as the queue records it.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The batch's status.
    pub status: RunStatus,
    /// The run it stored, if any.
    pub run_id: Option<i64>,
    /// Why it failed before storing a result.
    pub error: Option<String>,
}

impl Ran {
    /// What the worker reports for an item: the batch's outcome (`out`, or why it did
    /// not run), and whether its printing failed (`printed`), which fails the item
    /// though its run is stored.
    pub fn of(out: Result<&crate::BatchOutcome, String>, printed: Result<(), String>) -> Ran {
        match (out, printed) {
            (Ok(o), Ok(())) => Ran {
                status: o.status,
                run_id: o.run_ids.last().copied(),
                error: None,
            },
            (Ok(o), Err(e)) => Ran {
                status: RunStatus::Failed,
                run_id: o.run_ids.last().copied(),
                error: Some(e),
            },
            (Err(e), _) => Ran {
                status: RunStatus::Failed,
                run_id: None,
                error: Some(e),
            },
        }
    }
}

/// What a worker tells the person watching it.
#[derive(Debug)]
pub enum Event<'a> {
    /// An item was claimed and starts.
    Claimed(&'a Claim, &'a Item),
    /// A heartbeat the store did not answer while the item ran.
    Heartbeat(String),
    /// Ctrl-C: the item went back to the queue.
    Released(i64),
    /// The item's lease ran out while it ran and another worker has it: its result is
    /// theirs, this run stays stored.
    Lost(i64, Option<i64>),
}

/// A worker of one queue.
pub struct Worker<'a> {
    /// Where the heartbeats' own connection opens.
    pub path: PathBuf,
    /// This worker's name in the queue.
    pub name: String,
    /// The queue.
    pub queue: String,
    /// Seconds without a heartbeat after which an item goes to another worker.
    pub lease: f64,
    /// Wait for more items when the queue is empty, instead of returning.
    pub wait: bool,
    /// Stop after this many runs.
    pub max_runs: Option<usize>,
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
}

/// Runs one claimed item: the item, its suite's groups (variant → group id) when it
/// belongs to a suite, and the store.
pub type RunItem<'r> =
    dyn FnMut(&mut Store, &Item, Option<(i64, HashMap<String, i64>)>) -> Ran + 'r;

impl Worker<'_> {
    /// Refuses a lease too short to heartbeat in, before the store is opened.
    pub fn check(&self) -> Result<(), FleetError> {
        if !(self.lease.is_finite() && self.lease >= 1.0) {
            return Err(FleetError::Refused(format!(
                "--lease {}: give at least 1 second",
                self.lease
            )));
        }
        Ok(())
    }

    /// Claims and runs items until the queue has none left (or, with `wait`, until
    /// Ctrl-C or `max_runs`), and returns the runs done and the worst status. Ctrl-C
    /// gives the running item back to the queue.
    pub fn work(
        &self,
        store: &mut Store,
        run: &mut RunItem<'_>,
        say: &mut dyn FnMut(Event<'_>),
    ) -> Result<(usize, RunStatus), FleetError> {
        self.check()?;
        let (mut done, mut worst) = (0usize, RunStatus::Ok);
        loop {
            if self.interrupt.load(Ordering::Relaxed) || self.max_runs.is_some_and(|m| done >= m) {
                return Ok((done, worst));
            }
            let Some(claim) = store.claim(&self.queue, &self.name, self.lease)? else {
                let open = store
                    .queue_items(&self.queue)?
                    .iter()
                    .any(|i| matches!(i.status, QueueStatus::Queued | QueueStatus::Running));
                if !open && !self.wait {
                    return Ok((done, worst));
                }
                // Items held by other workers may still come back (a dead worker's lease).
                std::thread::sleep(Duration::from_secs(1));
                continue;
            };
            let item: Item =
                serde_json::from_value(claim.item.clone()).map_err(|source| FleetError::Item {
                    id: claim.id,
                    source,
                })?;
            say(Event::Claimed(&claim, &item));
            let heart = Heart::start(
                &self.path,
                claim.clone(),
                Duration::from_secs_f64(self.lease / 4.0),
            )?;
            let groups = match claim.suite_id {
                Some(s) => Some((
                    s,
                    store
                        .suite_runs(s)?
                        .iter()
                        .filter_map(|r| Some((r.options.get("variant")?.clone(), r.group_id?)))
                        .collect(),
                )),
                None => None,
            };
            let ran = run(store, &item, groups);
            let lost = heart.lost.load(Ordering::Relaxed);
            if let Some(e) = heart
                .failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
            {
                say(Event::Heartbeat(e));
            }
            drop(heart);
            if ran.status == RunStatus::Interrupted || self.interrupt.load(Ordering::Relaxed) {
                // Ctrl-C: the item goes back for another worker (or this one, later).
                store.release(&claim)?;
                say(Event::Released(claim.id));
                return Ok((done, RunStatus::Interrupted));
            }
            if let (true, Some(suite), Some(r)) = (item.grouped, claim.suite_id, ran.run_id) {
                // Another worker may have started this variant's group at the same moment.
                store.join_repeats(suite, r)?;
            }
            let q = if ran.status == RunStatus::Ok {
                QueueStatus::Done
            } else {
                QueueStatus::Failed
            };
            let ended = store.finish_item(&claim, q, ran.run_id, ran.error.as_deref(), &now())?;
            if !ended || lost {
                say(Event::Lost(claim.id, ran.run_id));
            }
            worst = worst.worst(ran.status);
            done += 1;
        }
    }
}
