//! A work queue in the store, so a fleet of hosts runs one plan: `plumb run SUITE
//! --queue NAME` puts each planned run in as an item, and every `plumb worker` claims
//! the oldest free item, heartbeats while it runs it, and marks it done with the run it
//! stored. An item whose worker stopped heartbeating (killed, host down) for longer
//! than the lease is free again, and only the latest claim may finish it: each item
//! ends once.
//!
//! On PostgreSQL the claim is one `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP
//! LOCKED)`, so workers never wait on each other's row; on SQLite the write transaction
//! serialises them. Times are the database's clock, one for every host.

use crate::db::{Db, DbError, Val};
use crate::{Store, StoreError};
use serde::{Deserialize, Serialize};

/// Where an item is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueStatus {
    /// Waiting for a worker.
    Queued,
    /// Claimed by a worker that heartbeats.
    Running,
    /// Its run was stored and ended ok.
    Done,
    /// Its run ended failed or interrupted; not taken again.
    Failed,
}

impl QueueStatus {
    /// The name stored.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueStatus::Queued => "queued",
            QueueStatus::Running => "running",
            QueueStatus::Done => "done",
            QueueStatus::Failed => "failed",
        }
    }
}

impl std::str::FromStr for QueueStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "queued" => QueueStatus::Queued,
            "running" => QueueStatus::Running,
            "done" => QueueStatus::Done,
            "failed" => QueueStatus::Failed,
            other => return Err(format!("unknown queue status {other:?}")),
        })
    }
}

/// One item as stored.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QueueItem {
    /// Its id.
    pub id: i64,
    /// The queue it is in.
    pub queue: String,
    /// The suite it came from.
    pub suite_id: Option<i64>,
    /// Its place in the plan.
    pub seq: i64,
    /// Where it is.
    pub status: QueueStatus,
    /// How many times it was claimed (more than once: a worker died holding it).
    pub attempts: i64,
    /// The worker of its latest claim (`host:pid`).
    pub worker: Option<String>,
    /// The run that finished it.
    pub run_id: Option<i64>,
    /// Why it failed.
    pub error: Option<String>,
}

/// An item a worker holds: only this claim (its attempt number) can heartbeat or
/// finish it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The item.
    pub id: i64,
    /// Which claim of the item this is.
    pub attempt: i64,
    /// The suite it came from.
    pub suite_id: Option<i64>,
    /// The item's body (a planned run, as JSON).
    pub item: serde_json::Value,
}

impl Store {
    /// Puts items (planned runs, as JSON) at the back of `queue`; returns their ids.
    pub fn enqueue(
        &self,
        queue: &str,
        suite_id: Option<i64>,
        items: &[serde_json::Value],
        at: &str,
    ) -> Result<Vec<i64>, StoreError> {
        self.write(|db| {
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    db.insert(
                        "INSERT INTO queue_items (queue, suite_id, seq, item, status, attempts,
                           enqueued_at) VALUES (?1, ?2, ?3, ?4, 'queued', 0, ?5)",
                        &[
                            queue.into(),
                            suite_id.into(),
                            (i as i64).into(),
                            item.to_string().into(),
                            at.into(),
                        ],
                    )
                })
                .collect()
        })
    }

    /// Claims the oldest item of `queue` that is queued, or whose worker has not
    /// heartbeaten for `lease_secs`; `None` when there is none to take now.
    pub fn claim(
        &self,
        queue: &str,
        worker: &str,
        lease_secs: f64,
    ) -> Result<Option<Claim>, StoreError> {
        let raw = self.write(|db| {
            let now = db.now_expr();
            let lock = if db.is_postgres() {
                "FOR UPDATE SKIP LOCKED"
            } else {
                ""
            };
            let sql = format!(
                "UPDATE queue_items SET status = 'running', worker = ?2, heartbeat = {now},
                   attempts = attempts + 1
                 WHERE id = (SELECT id FROM queue_items
                             WHERE queue = ?1 AND (status = 'queued'
                               OR (status = 'running' AND heartbeat < {now} - ?3))
                             ORDER BY id LIMIT 1 {lock})
                 RETURNING id, attempts, suite_id, item"
            );
            db.one(&sql, &[queue.into(), worker.into(), lease_secs.into()])?
                .map(|r| Ok((r.int(0)?, r.int(1)?, r.opt_int(2)?, r.text(3)?)))
                .transpose()
        })?;
        let Some((id, attempt, suite_id, item)) = raw else {
            return Ok(None);
        };
        let item = serde_json::from_str(&item).map_err(|source| StoreError::Json {
            store: self.shown.clone(),
            run: id,
            what: "queue item",
            source,
        })?;
        Ok(Some(Claim {
            id,
            attempt,
            suite_id,
            item,
        }))
    }

    /// Tells the queue the claim's worker is alive; false when the claim was lost (the
    /// lease ran out and another worker took the item).
    pub fn heartbeat(&self, claim: &Claim) -> Result<bool, StoreError> {
        let now = self.db.borrow().now_expr();
        Ok(self.exec(
            &format!(
                "UPDATE queue_items SET heartbeat = {now}
                 WHERE id = ?1 AND attempts = ?2 AND status = 'running'"
            ),
            &[claim.id.into(), claim.attempt.into()],
        )? == 1)
    }

    /// Ends a claimed item with the run that ran it; false when the claim was lost
    /// (another worker holds or finished the item, which then keeps its own result).
    /// When this was the suite's last open item, the suite ends too.
    pub fn finish_item(
        &self,
        claim: &Claim,
        status: QueueStatus,
        run_id: Option<i64>,
        error: Option<&str>,
        at: &str,
    ) -> Result<bool, StoreError> {
        self.write(|db| {
            if let Some(suite) = claim.suite_id {
                db.lock_suite(suite)?;
            }
            let n = db.exec(
                "UPDATE queue_items SET status = ?3, run_id = ?4, error = ?5, finished_at = ?6
                 WHERE id = ?1 AND attempts = ?2 AND status = 'running'",
                &[
                    claim.id.into(),
                    claim.attempt.into(),
                    status.as_str().into(),
                    run_id.into(),
                    error.into(),
                    at.into(),
                ],
            )?;
            if n == 1 {
                if let Some(suite) = claim.suite_id {
                    end_suite_if_drained(db, suite, at)?;
                }
            }
            Ok(n == 1)
        })
    }

    /// Gives a claimed item back to the queue (its worker was stopped with Ctrl-C);
    /// false when the claim was already lost.
    pub fn release(&self, claim: &Claim) -> Result<bool, StoreError> {
        Ok(self.exec(
            "UPDATE queue_items SET status = 'queued', worker = NULL, heartbeat = NULL
             WHERE id = ?1 AND attempts = ?2 AND status = 'running'",
            &[claim.id.into(), claim.attempt.into()],
        )? == 1)
    }

    /// Every item of `queue`, in queue order.
    pub fn queue_items(&self, queue: &str) -> Result<Vec<QueueItem>, StoreError> {
        self.rows(
            "SELECT id, queue, suite_id, seq, status, attempts, worker, run_id, error
             FROM queue_items WHERE queue = ?1 ORDER BY id",
            &[queue.into()],
            |r| {
                Ok(QueueItem {
                    id: r.int(0)?,
                    queue: r.text(1)?,
                    suite_id: r.opt_int(2)?,
                    seq: r.int(3)?,
                    status: r.parsed(4)?,
                    attempts: r.int(5)?,
                    worker: r.opt_text(6)?,
                    run_id: r.opt_int(7)?,
                    error: r.opt_text(8)?,
                })
            },
        )
    }
}

/// Marks a suite whose items have all ended as ended: ok when every item is done,
/// failed otherwise.
fn end_suite_if_drained(db: &mut Db, suite: i64, at: &str) -> Result<(), DbError> {
    let Some(r) = db.one(
        "SELECT count(*), COALESCE(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0)
         FROM queue_items WHERE suite_id = ?1 AND status IN ('queued', 'running', 'failed')",
        &[Val::Int(suite)],
    )?
    else {
        return Ok(());
    };
    let (open_or_failed, failed) = (r.int(0)?, r.int(1)?);
    if open_or_failed > failed {
        return Ok(());
    }
    let status = if failed > 0 { "failed" } else { "ok" };
    db.exec(
        "UPDATE suites SET status = ?1, ended_at = ?2 WHERE id = ?3",
        &[status.into(), at.into(), suite.into()],
    )?;
    Ok(())
}
