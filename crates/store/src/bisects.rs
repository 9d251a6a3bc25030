//! Bisects kept in the store: each is one row whose state (the range, the builds, each
//! midpoint's verdict and the runs it rests on) is a JSON document plumb-bisect writes
//! after every step. The store does not read the document; it keeps it whole, so a
//! bisect stopped by Ctrl-C, a reboot or `--max-steps` continues from its last saved
//! step on any host that reaches the store.

use crate::db::{DbError, Row};
use crate::{Store, StoreError};

/// A kept bisect, as `plumb bisect --resume` and `--list` read it (`--list --json`
/// prints it without its state document).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BisectRecord {
    /// Its id (`plumb bisect --resume ID`).
    pub id: i64,
    /// The repository searched.
    pub repo: String,
    /// The good and bad revisions as resolved when it began.
    pub good: String,
    /// See `good`.
    pub bad: String,
    /// Where it stands: running, found, unknown, stopped …
    pub status: String,
    /// The search's whole state (plumb-bisect's document).
    #[serde(skip)]
    pub state: String,
    /// When it began and when its state was last saved (UTC, RFC 3339).
    pub started_at: String,
    /// See `started_at`.
    pub updated_at: String,
    /// The change it searches for (`--change`), if one was named.
    pub change: Option<i64>,
}

/// A bisect as a change's row links to it: without its state document, which a list of
/// changes has no use for.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BisectLink {
    /// The bisect's id.
    pub id: i64,
    /// The change it searches for.
    pub change: i64,
    /// Where it stands.
    pub status: String,
}

fn from_row(r: &Row) -> Result<BisectRecord, DbError> {
    Ok(BisectRecord {
        id: r.int(0)?,
        repo: r.text(1)?,
        good: r.text(2)?,
        bad: r.text(3)?,
        status: r.text(4)?,
        state: r.text(5)?,
        started_at: r.text(6)?,
        updated_at: r.text(7)?,
        change: r.opt_int(8)?,
    })
}

const SELECT: &str =
    "SELECT id, repo, good, bad, status, state, started_at, updated_at, change_id FROM bisects";

impl Store {
    /// Keeps a new bisect with its first state, and the change it searches for (which
    /// must be kept here: an unknown id is refused before anything is written);
    /// returns its id.
    pub fn begin_bisect(
        &self,
        repo: &str,
        good: &str,
        bad: &str,
        change: Option<i64>,
        state: &str,
        now: &str,
    ) -> Result<i64, StoreError> {
        if let Some(c) = change {
            self.change(c)?;
        }
        self.db
            .borrow_mut()
            .insert(
                "INSERT INTO bisects (repo, good, bad, status, state, started_at, updated_at, \
                 change_id) VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?5, ?6)",
                &[
                    repo.into(),
                    good.into(),
                    bad.into(),
                    state.into(),
                    now.into(),
                    change.into(),
                ],
            )
            .map_err(|e| self.err(e))
    }

    /// The bisects of these changes, oldest first.
    pub fn bisect_links(&self, changes: &[i64]) -> Result<Vec<BisectLink>, StoreError> {
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = changes.iter().map(i64::to_string).collect();
        self.rows(
            &format!(
                "SELECT id, change_id, status FROM bisects WHERE change_id IN ({}) ORDER BY id",
                ids.join(", ")
            ),
            &[],
            |r| {
                Ok(BisectLink {
                    id: r.int(0)?,
                    change: r.int(1)?,
                    status: r.text(2)?,
                })
            },
        )
    }

    /// Replaces a bisect's state and status after a step.
    pub fn save_bisect(
        &self,
        id: i64,
        status: &str,
        state: &str,
        now: &str,
    ) -> Result<(), StoreError> {
        let n = self.exec(
            "UPDATE bisects SET status = ?1, state = ?2, updated_at = ?3 WHERE id = ?4",
            &[status.into(), state.into(), now.into(), id.into()],
        )?;
        if n == 0 {
            return Err(StoreError::NoBisect {
                store: self.shown.clone(),
                bisect: id,
            });
        }
        Ok(())
    }

    /// One kept bisect.
    pub fn bisect(&self, id: i64) -> Result<BisectRecord, StoreError> {
        self.rows(&format!("{SELECT} WHERE id = ?1"), &[id.into()], from_row)?
            .pop()
            .ok_or_else(|| StoreError::NoBisect {
                store: self.shown.clone(),
                bisect: id,
            })
    }

    /// Every kept bisect, newest first.
    pub fn bisects(&self) -> Result<Vec<BisectRecord>, StoreError> {
        self.rows(&format!("{SELECT} ORDER BY id DESC"), &[], from_row)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Store, StoreError};

    #[test]
    fn a_bisect_is_kept_saved_and_read_back_whole() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("s.sqlite")).unwrap();
        let id = s
            .begin_bisect(
                "/src/r",
                "aaa",
                "bbb",
                None,
                "{\"steps\":[]}",
                "2026-12-07T10:00:00Z",
            )
            .unwrap();
        s.save_bisect(id, "found", "{\"steps\":[1]}", "2026-12-07T11:00:00Z")
            .unwrap();
        let b = s.bisect(id).unwrap();
        assert_eq!(
            (b.repo.as_str(), b.good.as_str(), b.bad.as_str()),
            ("/src/r", "aaa", "bbb")
        );
        assert_eq!(
            (b.status.as_str(), b.state.as_str()),
            ("found", "{\"steps\":[1]}")
        );
        assert_eq!(b.started_at, "2026-12-07T10:00:00Z");
        assert_eq!(b.updated_at, "2026-12-07T11:00:00Z");
        assert_eq!(s.bisects().unwrap().len(), 1);
        let e = s.bisect(id + 1).unwrap_err();
        assert!(matches!(e, StoreError::NoBisect { .. }), "{e}");
        assert!(e.to_string().contains("plumb bisect --list"), "{e}");
        assert!(s.save_bisect(id + 1, "x", "{}", "t").is_err());
        assert_eq!(b.change, None);
        assert!(s.bisect_links(&[1, 2]).unwrap().is_empty());
        // A bisect for a change that is not kept is refused, and nothing is written.
        let e = s
            .begin_bisect("/src/r", "a", "b", Some(7), "{}", "t")
            .unwrap_err();
        assert!(e.to_string().contains('7'), "{e}");
        assert_eq!(s.bisects().unwrap().len(), 1);
    }
}
