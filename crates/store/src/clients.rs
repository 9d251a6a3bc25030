//! Multi-client steps: N client processes, on one host or many, against one server.
//! Each process stores its own run, tagged with the client group's name. Before each
//! step they meet at a barrier kept in the store (one row per step, counting arrivals),
//! so their measured windows start together; after it each stores the step's HDR
//! histograms (per interval and whole), from which the group's percentiles are computed
//! by merging counts, never by averaging the clients' percentiles.

use crate::db::Val;
use crate::{RunRecord, Store, StoreError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The `idx` under which a step's whole-window histogram is kept (intervals are 0..).
pub const WHOLE_STEP: i64 = -1;

impl Store {
    /// Waits at barrier `name` until `parties` processes have arrived; returns this
    /// process's place in arrival order (0 first). Fails when the barrier was already
    /// full (the group name was used before), when another process named another
    /// number of parties, when `timeout` passes, or when `interrupt` is set.
    pub fn barrier(
        &self,
        name: &str,
        parties: i64,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<i64, StoreError> {
        let fail = |why: String| StoreError::Barrier {
            store: self.shown.clone(),
            name: name.to_string(),
            why,
        };
        let (theirs, arrived) = self.write(|db| {
            let now = db.now_expr();
            db.exec(
                &format!(
                    "INSERT INTO barriers (name, parties, arrived, created)
                     VALUES (?1, ?2, 0, {now}) ON CONFLICT (name) DO NOTHING"
                ),
                &[name.into(), parties.into()],
            )?;
            let r = db
                .one(
                    "UPDATE barriers SET arrived = arrived + 1 WHERE name = ?1
                     RETURNING parties, arrived",
                    &[name.into()],
                )?
                .ok_or_else(|| crate::DbError::Column("the barrier row is gone".into()))?;
            Ok((r.int(0)?, r.int(1)?))
        })?;
        if theirs != parties {
            return Err(fail(format!(
                "the other clients were started with {theirs} clients, this one with {parties}"
            )));
        }
        if arrived > parties {
            return Err(fail(format!(
                "all {parties} clients already passed it: the group name was used before; \
                 give each multi-client run a new name"
            )));
        }
        let until = Instant::now() + timeout;
        loop {
            let n = self
                .query(
                    "SELECT arrived FROM barriers WHERE name = ?1",
                    &[Val::from(name)],
                )?
                .first()
                .map(|r| r.int(0))
                .transpose()
                .map_err(|e| self.err(e))?
                .unwrap_or(0);
            if n >= parties {
                return Ok(arrived - 1);
            }
            if interrupt.load(Ordering::Relaxed) {
                return Err(fail("interrupted while waiting".into()));
            }
            if Instant::now() >= until {
                return Err(fail(format!(
                    "{n} of {parties} clients arrived within {:.0} s; start the others \
                     (same --client-group, same --clients) or raise --barrier-timeout",
                    timeout.as_secs_f64()
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Marks a run as one client of the multi-client group `group`.
    pub fn set_client_group(&self, run_id: i64, group: &str) -> Result<(), StoreError> {
        self.exec(
            "UPDATE runs SET clients = ?1 WHERE id = ?2",
            &[group.into(), run_id.into()],
        )?;
        Ok(())
    }

    /// The runs of a client group, in id order.
    pub fn client_runs(&self, group: &str) -> Result<Vec<RunRecord>, StoreError> {
        self.runs_where("r.clients = ?1", group.into())
    }

    /// Keeps a step's histograms (HdrHistogram V2 compressed, base64), by interval
    /// index, [`WHOLE_STEP`] for the whole window.
    pub fn add_histograms(&self, step_id: i64, hists: &[(i64, String)]) -> Result<(), StoreError> {
        self.write(|db| {
            for (idx, h) in hists {
                db.exec(
                    "INSERT INTO histograms (step_id, idx, hdr) VALUES (?1, ?2, ?3)",
                    &[step_id.into(), (*idx).into(), h.into()],
                )?;
            }
            Ok(())
        })
    }

    /// A run's stored histograms: (step name, interval index, encoded), in step then
    /// interval order.
    pub fn histograms(&self, run_id: i64) -> Result<Vec<(String, i64, String)>, StoreError> {
        self.rows(
            "SELECT s.name, h.idx, h.hdr FROM histograms h JOIN steps s ON s.id = h.step_id
             WHERE s.run_id = ?1 ORDER BY s.seq, h.idx",
            &[run_id.into()],
            |r| Ok((r.text(0)?, r.int(1)?, r.text(2)?)),
        )
    }
}
