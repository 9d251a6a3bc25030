//! Changes plumb found (by `plumb check` or a history scan) and what a person said of
//! each: the triage states of Perfherder's alerts, cut to the five a benchmark team
//! acts on. A change is kept once however many nights it persists, and its state is read
//! back by `check` and `history` (an expected change becomes the base, a fixed one is
//! judged against the level before it).

use crate::db::{DbError, Row, Val};
use crate::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a person said of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum TriageState {
    /// Nobody has looked yet: the gate keeps failing on it.
    Untriaged,
    /// Someone is on it: the gate keeps failing on it.
    Investigating,
    /// Deliberate (an option, a release): the new level becomes the base.
    Expected,
    /// Fixed: later runs are judged against the level before it.
    Fixed,
    /// Noise, or a broken run: the gate no longer fails on it.
    NotAChange,
}

impl TriageState {
    /// Every state, in the order a page lists them.
    pub const ALL: [TriageState; 5] = [
        TriageState::Untriaged,
        TriageState::Investigating,
        TriageState::Expected,
        TriageState::Fixed,
        TriageState::NotAChange,
    ];

    /// The word stored, typed on the command line and posted by the page.
    pub fn as_str(self) -> &'static str {
        match self {
            TriageState::Untriaged => "untriaged",
            TriageState::Investigating => "investigating",
            TriageState::Expected => "expected",
            TriageState::Fixed => "fixed",
            TriageState::NotAChange => "not-a-change",
        }
    }

    /// Whether the gate still fails on a change in this state.
    pub fn is_open(self) -> bool {
        matches!(self, TriageState::Untriaged | TriageState::Investigating)
    }
}

impl fmt::Display for TriageState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TriageState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TriageState::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "{s:?} is not a triage state; use one of {}",
                    TriageState::ALL.map(|t| t.as_str()).join(", ")
                )
            })
    }
}

/// A change as found, before it is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChange {
    /// The plan's identity (its stored plan hashed without seed and repeat), so every
    /// night's runs of one plan meet in one history.
    pub plan: String,
    /// What the plan runs, as a person reads it (`readrandom on rocksdb 10.4.2`).
    pub label: String,
    /// The step.
    pub step: String,
    /// The metric id (`ops_sec`, `cpu_us_op` …).
    pub metric: String,
    /// `regression` or `improvement`.
    pub direction: String,
    /// The first run at the new level.
    pub at_run: i64,
    /// The last run at the old level, when known.
    pub before_run: Option<i64>,
    /// The newest run that shows it.
    pub last_run: i64,
    /// The first run the finder compared against: a change found against a base that
    /// starts before a kept change's first run is that change seen again.
    pub base_from: i64,
    /// New level over old (medians of the metric).
    pub ratio: f64,
    /// The per-op costs that moved with it, as one line.
    pub cause: Option<String>,
    /// The host the runs ran on.
    pub host: Option<String>,
    /// Whether the plan is a reference run (tagged `reference`): its changes are the
    /// host's, and other plans' changes beside them are flagged so.
    pub reference: bool,
    /// When the first run at the new level started (RFC 3339).
    pub at_time: String,
    /// When it was found (RFC 3339).
    pub seen_at: String,
}

/// A kept change with its triage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeRecord {
    /// Its id (`plumb changes set ID …`).
    pub id: i64,
    /// The plan's identity.
    pub plan: String,
    /// What the plan runs.
    pub label: String,
    /// The step.
    pub step: String,
    /// The metric id.
    pub metric: String,
    /// `regression` or `improvement`.
    pub direction: String,
    /// The first run at the new level.
    pub at_run: i64,
    /// The last run at the old level.
    pub before_run: Option<i64>,
    /// The newest run that showed it.
    pub last_run: i64,
    /// New level over old.
    pub ratio: f64,
    /// The per-op costs that moved.
    pub cause: Option<String>,
    /// The host.
    pub host: Option<String>,
    /// Found on a reference run.
    pub reference: bool,
    /// When its first run started.
    pub at_time: String,
    /// How many times a finder reported it.
    pub seen: i64,
    /// First found.
    pub first_seen: String,
    /// Last found.
    pub last_seen: String,
    /// Its triage state.
    pub state: TriageState,
    /// The note set with the state.
    pub note: Option<String>,
    /// Who set the state.
    pub set_by: Option<String>,
    /// When (RFC 3339).
    pub set_at: Option<String>,
    /// A reference run on the same host changed the same way within a day of it: the
    /// host's change, not the plan's (computed when read, never stored).
    #[serde(default)]
    pub host_wide: bool,
}

/// One state set on a change, as its log keeps it: who said what, when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriageEntry {
    /// The state set.
    pub state: TriageState,
    /// The note set with it.
    pub note: Option<String>,
    /// Who set it.
    pub by: String,
    /// When (RFC 3339).
    pub at: String,
}

/// Which changes to list.
#[derive(Debug, Clone, Default)]
pub struct ChangeFilter {
    /// Only this state.
    pub state: Option<TriageState>,
    /// Only this plan.
    pub plan: Option<String>,
    /// Only this step.
    pub step: Option<String>,
    /// Only this host.
    pub host: Option<String>,
    /// At most this many (0: all).
    pub limit: usize,
    /// Skip this many first (paging).
    pub offset: usize,
}

const SELECT: &str = "SELECT id, plan, label, step, metric, direction, at_run, before_run, \
     last_run, ratio, cause, host, on_reference, at_time, seen, first_seen, last_seen, state, \
     note, set_by, set_at FROM changes";

fn from_row(r: &Row) -> Result<ChangeRecord, DbError> {
    Ok(ChangeRecord {
        id: r.int(0)?,
        plan: r.text(1)?,
        label: r.text(2)?,
        step: r.text(3)?,
        metric: r.text(4)?,
        direction: r.text(5)?,
        at_run: r.int(6)?,
        before_run: r.opt_int(7)?,
        last_run: r.int(8)?,
        ratio: r.real(9)?,
        cause: r.opt_text(10)?,
        host: r.opt_text(11)?,
        reference: r.int(12)? != 0,
        at_time: r.text(13)?,
        seen: r.int(14)?,
        first_seen: r.text(15)?,
        last_seen: r.text(16)?,
        state: r
            .text(17)?
            .parse()
            .map_err(|e: String| DbError::Column(format!("changes.state: {e}")))?,
        note: r.opt_text(18)?,
        set_by: r.opt_text(19)?,
        set_at: r.opt_text(20)?,
        host_wide: false,
    })
}

/// Seconds since the epoch of an RFC 3339 time's date and clock (offsets ignored: every
/// time plumb stores is UTC), or None for text that is not one.
fn epoch_secs(t: &str) -> Option<i64> {
    let (d, rest) = t.split_once('T')?;
    let mut dp = d.split('-').map(|x| x.parse::<i64>());
    let (y, m, day) = (dp.next()?.ok()?, dp.next()?.ok()?, dp.next()?.ok()?);
    let mut tp = rest.get(..8)?.split(':').map(|x| x.parse::<i64>());
    let (h, mi, s) = (tp.next()?.ok()?, tp.next()?.ok()?, tp.next()?.ok()?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146097 + doe - 719468) * 86400 + h * 3600 + mi * 60 + s)
}

/// Flags the changes a reference run on the same host shows too (same direction,
/// first runs within a day of each other).
fn flag_host_wide(changes: &mut [ChangeRecord], refs: &[ChangeRecord]) {
    for c in changes.iter_mut().filter(|c| !c.reference) {
        let at = epoch_secs(&c.at_time);
        c.host_wide = refs.iter().any(|r| {
            r.host == c.host
                && r.host.is_some()
                && r.direction == c.direction
                && matches!((at, epoch_secs(&r.at_time)), (Some(a), Some(b)) if (a - b).abs() <= 86400)
        });
    }
}

impl Store {
    /// Keeps a change a finder reported, once: when the newest change of the same plan,
    /// step, metric and direction is still open or called noise, or was called expected
    /// but this finder's base starts before it (the same change, seen again before the
    /// base moved), it is that change seen again (its newest run and count move on, its
    /// state stays). A fixed change that comes back is a new change. Returns the change's
    /// id and whether it is new.
    pub fn record_change(&self, c: &NewChange) -> Result<(i64, bool), StoreError> {
        let same = self
            .rows(
                &format!(
                    "{SELECT} WHERE plan = ?1 AND step = ?2 AND metric = ?3 AND direction = ?4 \
                     ORDER BY id DESC LIMIT 1"
                ),
                &[
                    (&c.plan).into(),
                    (&c.step).into(),
                    (&c.metric).into(),
                    (&c.direction).into(),
                ],
                from_row,
            )?
            .pop();
        if let Some(old) = same {
            let again = match old.state {
                TriageState::Untriaged | TriageState::Investigating | TriageState::NotAChange => {
                    true
                }
                TriageState::Expected => c.base_from < old.at_run,
                TriageState::Fixed => false,
            };
            if again {
                self.exec(
                    "UPDATE changes SET last_run = ?1, last_seen = ?2, seen = seen + 1 \
                     WHERE id = ?3",
                    &[
                        c.last_run.max(old.last_run).into(),
                        (&c.seen_at).into(),
                        old.id.into(),
                    ],
                )?;
                return Ok((old.id, false));
            }
        }
        let id = self
            .db
            .borrow_mut()
            .insert(
                "INSERT INTO changes (plan, label, step, metric, direction, at_run, before_run, \
                 last_run, ratio, cause, host, on_reference, at_time, seen, first_seen, last_seen, \
                 state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 1, ?14, \
                 ?14, 'untriaged')",
                &[
                    (&c.plan).into(),
                    (&c.label).into(),
                    (&c.step).into(),
                    (&c.metric).into(),
                    (&c.direction).into(),
                    c.at_run.into(),
                    c.before_run.into(),
                    c.last_run.into(),
                    c.ratio.into(),
                    c.cause.as_ref().into(),
                    c.host.as_ref().into(),
                    (c.reference as i64).into(),
                    (&c.at_time).into(),
                    (&c.seen_at).into(),
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok((id, true))
    }

    /// The kept changes, newest first, as filtered and paged, each flagged when a
    /// reference run on its host changed beside it.
    pub fn changes(&self, f: &ChangeFilter) -> Result<Vec<ChangeRecord>, StoreError> {
        let mut wh: Vec<String> = Vec::new();
        let mut args: Vec<Val> = Vec::new();
        for (col, v) in [
            ("state", f.state.map(|s| s.as_str().to_string())),
            ("plan", f.plan.clone()),
            ("step", f.step.clone()),
            ("host", f.host.clone()),
        ] {
            if let Some(v) = v {
                args.push(v.into());
                wh.push(format!("{col} = ?{}", args.len()));
            }
        }
        let mut sql = SELECT.to_string();
        if !wh.is_empty() {
            sql += &format!(" WHERE {}", wh.join(" AND "));
        }
        sql += " ORDER BY id DESC";
        if f.limit > 0 {
            sql += &format!(" LIMIT {} OFFSET {}", f.limit, f.offset);
        }
        let mut out = self.rows(&sql, &args, from_row)?;
        let refs = self.rows(&format!("{SELECT} WHERE on_reference = 1"), &[], from_row)?;
        flag_host_wide(&mut out, &refs);
        Ok(out)
    }

    /// How many changes the filter matches (its paging ignored), for a page's count.
    pub fn count_changes(&self, f: &ChangeFilter) -> Result<i64, StoreError> {
        let all = ChangeFilter {
            limit: 0,
            offset: 0,
            ..f.clone()
        };
        Ok(self.changes(&all)?.len() as i64)
    }

    /// One change, or an error naming its id.
    pub fn change(&self, id: i64) -> Result<ChangeRecord, StoreError> {
        let mut c = self
            .rows(&format!("{SELECT} WHERE id = ?1"), &[id.into()], from_row)?
            .pop()
            .ok_or_else(|| StoreError::NoChange {
                store: self.shown.clone(),
                change: id,
            })?;
        let refs = self.rows(&format!("{SELECT} WHERE on_reference = 1"), &[], from_row)?;
        flag_host_wide(std::slice::from_mut(&mut c), &refs);
        Ok(c)
    }

    /// Sets a change's state, with a note, who and when; every setting is also kept in
    /// the change's log, so a page shows who said what before.
    pub fn set_triage(
        &self,
        id: i64,
        state: TriageState,
        note: Option<&str>,
        by: &str,
        at: &str,
    ) -> Result<ChangeRecord, StoreError> {
        self.change(id)?;
        self.write(|db| {
            db.exec(
                "UPDATE changes SET state = ?1, note = ?2, set_by = ?3, set_at = ?4 WHERE id = ?5",
                &[
                    state.as_str().into(),
                    note.into(),
                    by.into(),
                    at.into(),
                    id.into(),
                ],
            )?;
            db.exec(
                "INSERT INTO change_log (change_id, state, note, set_by, set_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                &[
                    id.into(),
                    state.as_str().into(),
                    note.into(),
                    by.into(),
                    at.into(),
                ],
            )?;
            Ok(())
        })?;
        self.change(id)
    }

    /// A change's log of states, oldest first.
    pub fn change_log(&self, id: i64) -> Result<Vec<TriageEntry>, StoreError> {
        self.rows(
            "SELECT state, note, set_by, set_at FROM change_log WHERE change_id = ?1 ORDER BY id",
            &[id.into()],
            |r| {
                Ok(TriageEntry {
                    state: r
                        .text(0)?
                        .parse()
                        .map_err(|e: String| DbError::Column(format!("change_log.state: {e}")))?,
                    note: r.opt_text(1)?,
                    by: r.text(2)?,
                    at: r.text(3)?,
                })
            },
        )
    }

    /// The triaged changes of a plan that move its base: expected and fixed ones, oldest
    /// first (`check` and `history` read them when they pick a base).
    pub fn base_changes(&self, plan: &str) -> Result<Vec<ChangeRecord>, StoreError> {
        self.rows(
            &format!("{SELECT} WHERE plan = ?1 AND state IN ('expected', 'fixed') ORDER BY id"),
            &[plan.into()],
            from_row,
        )
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn states_read_back_as_written_and_a_wrong_one_names_them_all() {
        for s in TriageState::ALL {
            assert_eq!(s.as_str().parse::<TriageState>().unwrap(), s);
        }
        let e = "done".parse::<TriageState>().unwrap_err();
        assert!(e.contains("untriaged") && e.contains("not-a-change"), "{e}");
    }

    #[test]
    fn rfc3339_times_read_as_seconds() {
        assert_eq!(epoch_secs("1970-01-02T00:00:00Z"), Some(86400));
        assert_eq!(
            epoch_secs("2026-12-02T01:00:00Z").unwrap()
                - epoch_secs("2026-12-01T01:00:00Z").unwrap(),
            86400
        );
        assert_eq!(epoch_secs("yesterday"), None);
    }
}
