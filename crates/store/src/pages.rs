//! The queries `plumb serve`'s pages need, filtered and paged in SQL so a page of a store
//! holding 10,000 runs and a million intervals reads 50 rows, not the store. Written
//! once in the SQL SQLite and PostgreSQL both understand (`?N` placeholders, `LIKE …
//! ESCAPE`, `count`, `LIMIT … OFFSET`).

use crate::db::Val;
use crate::{model, RunRecord, Store, StoreError};
use plumb_core::RunStatus;
use serde::{Deserialize, Serialize};

/// Which runs a Runs page lists: every field set must match; dates are `YYYY-MM-DD`
/// (UTC, as runs store their start), `until` inclusive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFilter {
    /// Only this engine (`rocksdb`, `postgres` …).
    pub engine: Option<String>,
    /// Only this workload (steps or workload name, as stored).
    pub workload: Option<String>,
    /// Only this `--tag`.
    pub tag: Option<String>,
    /// Only the runs of this suite.
    pub suite: Option<i64>,
    /// Only runs whose host snapshot names this host.
    pub host: Option<String>,
    /// Only runs in this status.
    pub status: Option<RunStatus>,
    /// Started on or after this day.
    pub since: Option<String>,
    /// Started on or before this day.
    pub until: Option<String>,
    /// At most this many (0: all).
    pub limit: usize,
    /// Skip this many first (paging).
    pub offset: usize,
}

/// The values a Runs or Compare page offers to pick from, newest first where that means
/// something: what is in the store, so nobody types a tag that is not there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFacets {
    /// Engines, by name.
    pub engines: Vec<String>,
    /// Workloads, by name.
    pub workloads: Vec<String>,
    /// Tags, the most recently used first.
    pub tags: Vec<String>,
    /// Suites (id, name), newest first.
    pub suites: Vec<(i64, String)>,
    /// Groups of repeats (group id, runs in it), newest first.
    pub groups: Vec<(i64, i64)>,
}

/// What never changes about a run once it started: its plan (JSON text) and the host
/// its snapshot names, for a reader that keeps an index of plans and hosts and only
/// reads the runs added since.
#[derive(Debug, Clone, PartialEq)]
pub struct RunKey {
    /// Run id.
    pub id: i64,
    /// The stored plan, as JSON text.
    pub plan: Option<String>,
    /// The host name in its snapshot.
    pub host: Option<String>,
}

/// What may change about a run after it started: status and group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunHead {
    /// Run id.
    pub id: i64,
    /// Its group of repeats.
    pub group_id: Option<i64>,
    /// Its status.
    pub status: RunStatus,
}

/// How far a run has come: its stored steps and intervals (a step's intervals are stored
/// when it ends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Run id.
    pub run_id: i64,
    /// Steps stored.
    pub steps: i64,
    /// Intervals stored, over those steps.
    pub intervals: i64,
    /// The newest stored step's name.
    pub last_step: Option<String>,
}

/// `text` as a LIKE pattern matching itself only (`\` escapes).
fn like_literal(text: &str) -> String {
    let mut o = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// The WHERE clause and its arguments for a filter.
fn run_where(f: &RunFilter) -> Result<(String, Vec<Val>), serde_json::Error> {
    let mut wh: Vec<String> = Vec::new();
    let mut args: Vec<Val> = Vec::new();
    let mut push = |cond: &str, v: Val, args: &mut Vec<Val>| {
        args.push(v);
        wh.push(cond.replace("?", &format!("?{}", args.len())));
    };
    if let Some(v) = &f.engine {
        push("r.engine = ?", v.into(), &mut args);
    }
    if let Some(v) = &f.workload {
        push("r.workload = ?", v.into(), &mut args);
    }
    if let Some(v) = &f.tag {
        push("r.tag = ?", v.into(), &mut args);
    }
    if let Some(v) = f.suite {
        push("r.suite_id = ?", v.into(), &mut args);
    }
    if let Some(v) = f.status {
        push("r.status = ?", v.as_str().into(), &mut args);
    }
    if let Some(v) = &f.since {
        push("r.started_at >= ?", v.into(), &mut args);
    }
    if let Some(v) = &f.until {
        // RFC 3339 times sort as text; a day's times all start `DAYT`, below `DAYU`.
        push("r.started_at < ?", format!("{v}U").into(), &mut args);
    }
    if let Some(h) = &f.host {
        // The snapshot is stored as compact JSON: its host name reads `"hostname":"NAME"`.
        let needle = format!("\"hostname\":{}", serde_json::to_string(h)?);
        push(
            "r.host LIKE ? ESCAPE '\\'",
            format!("%{}%", like_literal(&needle)).into(),
            &mut args,
        );
    }
    let clause = if wh.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", wh.join(" AND "))
    };
    Ok((clause, args))
}

impl Store {
    /// One page of runs, newest first, as filtered, and how many runs the filter matches
    /// in all (for the page count).
    pub fn runs_page(&self, f: &RunFilter) -> Result<(Vec<RunRecord>, i64), StoreError> {
        let (clause, args) = run_where(f).map_err(|source| StoreError::Json {
            store: self.shown.clone(),
            run: 0,
            what: "host filter",
            source,
        })?;
        let mut sql = format!("{}{clause} ORDER BY r.id DESC", model::RUN_SELECT);
        if f.limit > 0 {
            sql += &format!(" LIMIT {} OFFSET {}", f.limit, f.offset);
        }
        let runs = self
            .rows(&sql, &args, model::run_from_row)?
            .into_iter()
            .map(|r| r.finish(&self.shown))
            .collect::<Result<Vec<_>, _>>()?;
        let total = self
            .rows(
                &format!("SELECT count(*) FROM runs r{clause}"),
                &args,
                |r| r.int(0),
            )?
            .pop()
            .unwrap_or(0);
        Ok((runs, total))
    }

    /// The engines, workloads, tags, suites and groups the store holds, to pick from.
    pub fn run_facets(&self) -> Result<RunFacets, StoreError> {
        let texts = |sql: &str| self.rows(sql, &[], |r| r.text(0));
        Ok(RunFacets {
            engines: texts("SELECT DISTINCT engine FROM runs ORDER BY engine")?,
            workloads: texts("SELECT DISTINCT workload FROM runs ORDER BY workload LIMIT 200")?,
            tags: texts(
                "SELECT tag FROM runs WHERE tag IS NOT NULL GROUP BY tag ORDER BY max(id) DESC \
                 LIMIT 100",
            )?,
            suites: self.rows(
                "SELECT id, name FROM suites ORDER BY id DESC LIMIT 50",
                &[],
                |r| Ok((r.int(0)?, r.text(1)?)),
            )?,
            groups: self.rows(
                "SELECT group_id, count(*) FROM runs WHERE group_id IS NOT NULL \
                 GROUP BY group_id ORDER BY group_id DESC LIMIT 50",
                &[],
                |r| Ok((r.int(0)?, r.int(1)?)),
            )?,
        })
    }

    /// The plan and host of every run with an id above `after`, in id order: what an
    /// index of plans and hosts reads to catch up (both are fixed when a run starts).
    pub fn run_keys_after(&self, after: i64) -> Result<Vec<RunKey>, StoreError> {
        #[derive(Deserialize)]
        struct Snap {
            inventory: Inv,
        }
        #[derive(Deserialize)]
        struct Inv {
            hostname: Option<String>,
        }
        self.rows(
            "SELECT id, plan, host FROM runs WHERE id > ?1 ORDER BY id",
            &[after.into()],
            |r| {
                let host = r
                    .opt_text(2)?
                    .and_then(|h| serde_json::from_str::<Snap>(&h).ok())
                    .and_then(|s| s.inventory.hostname);
                Ok(RunKey {
                    id: r.int(0)?,
                    plan: r.opt_text(1)?,
                    host,
                })
            },
        )
    }

    /// Every run's id, group and status, in id order (three small columns: cheap on a
    /// store of any size).
    pub fn run_heads(&self) -> Result<Vec<RunHead>, StoreError> {
        self.rows(
            "SELECT id, group_id, status FROM runs ORDER BY id",
            &[],
            |r| {
                Ok(RunHead {
                    id: r.int(0)?,
                    group_id: r.opt_int(1)?,
                    status: r.parsed(2)?,
                })
            },
        )
    }

    /// The records of `ids` (without steps), in id order; ids not in the store are left out.
    pub fn run_records(&self, ids: &[i64]) -> Result<Vec<RunRecord>, StoreError> {
        let mut out = Vec::with_capacity(ids.len());
        // In chunks, below every database's limit on bound parameters.
        for chunk in ids.chunks(500) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
            let args: Vec<Val> = chunk.iter().map(|i| (*i).into()).collect();
            for r in self.rows(
                &format!(
                    "{} WHERE r.id IN ({}) ORDER BY r.id",
                    model::RUN_SELECT,
                    marks.join(", ")
                ),
                &args,
                model::run_from_row,
            )? {
                out.push(r.finish(&self.shown)?);
            }
        }
        out.sort_by_key(|r| r.id);
        Ok(out)
    }

    /// A run with its steps' summaries but not their intervals: what a figure read from
    /// summaries (a noise floor, a verdict) needs, at a fraction of [`Store::run`]'s rows.
    pub fn run_summaries(&self, id: i64) -> Result<crate::StoredRun, StoreError> {
        self.runs_summaries(&[id])?
            .pop()
            .ok_or_else(|| StoreError::NoRun {
                store: self.shown.clone(),
                run: id,
            })
    }

    /// [`Store::run_summaries`] of many runs in two queries (per 500 runs), in id order;
    /// ids not in the store are left out. A history plot, a host's floors and a gate's
    /// blocks read dozens of runs: one query per run was most of their pages' time.
    pub fn runs_summaries(&self, ids: &[i64]) -> Result<Vec<crate::StoredRun>, StoreError> {
        let mut steps: std::collections::BTreeMap<i64, Vec<(crate::StepRecord, Vec<_>)>> =
            Default::default();
        for (run, _, step) in self.steps_of(ids)? {
            steps.entry(run).or_default().push((step, Vec::new()));
        }
        Ok(self
            .run_records(ids)?
            .into_iter()
            .map(|run| crate::StoredRun {
                steps: steps.remove(&run.id).unwrap_or_default(),
                run,
            })
            .collect())
    }

    /// How far each of `ids` has come (runs without a stored step are left out).
    pub fn progress(&self, ids: &[i64]) -> Result<Vec<Progress>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (1..=ids.len()).map(|i| format!("?{i}")).collect();
        let args: Vec<Val> = ids.iter().map(|i| (*i).into()).collect();
        let rows = self.rows(
            &format!(
                "SELECT s.run_id, s.seq, s.name, \
                 (SELECT count(*) FROM intervals i WHERE i.step_id = s.id) \
                 FROM steps s WHERE s.run_id IN ({}) ORDER BY s.run_id, s.seq",
                marks.join(", ")
            ),
            &args,
            |r| Ok((r.int(0)?, r.text(2)?, r.int(3)?)),
        )?;
        let mut out: Vec<Progress> = Vec::new();
        for (run_id, name, n) in rows {
            match out.last_mut().filter(|p| p.run_id == run_id) {
                Some(p) => {
                    p.steps += 1;
                    p.intervals += n;
                    p.last_step = Some(name);
                }
                None => out.push(Progress {
                    run_id,
                    steps: 1,
                    intervals: n,
                    last_step: Some(name),
                }),
            }
        }
        Ok(out)
    }

    /// The newest snapshot of each host's runs: (host name, runs, newest run id), by name.
    /// Reads every run's snapshot; a page that lists hosts often keeps
    /// [`Store::run_keys_after`]'s index instead.
    pub fn host_names(&self) -> Result<Vec<(String, i64, i64)>, StoreError> {
        let mut by: std::collections::BTreeMap<String, (i64, i64)> = Default::default();
        for k in self.run_keys_after(i64::MIN)? {
            if let Some(h) = k.host {
                let e = by.entry(h).or_insert((0, k.id));
                e.0 += 1;
                e.1 = e.1.max(k.id);
            }
        }
        Ok(by.into_iter().map(|(h, (n, m))| (h, n, m)).collect())
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn a_like_pattern_matches_its_text_only() {
        assert_eq!(like_literal("a_b%c\\"), "a\\_b\\%c\\\\");
    }

    #[test]
    fn the_filter_numbers_its_placeholders_in_order() {
        let f = RunFilter {
            engine: Some("rocksdb".into()),
            until: Some("2026-01-02".into()),
            host: Some("db_7".into()),
            ..Default::default()
        };
        let (clause, args) = run_where(&f).unwrap();
        assert_eq!(
            clause,
            " WHERE r.engine = ?1 AND r.started_at < ?2 AND r.host LIKE ?3 ESCAPE '\\'"
        );
        assert_eq!(args[1], Val::Text("2026-01-02U".into()));
        assert_eq!(args[2], Val::Text("%\"hostname\":\"db\\_7\"%".into()));
    }
}
