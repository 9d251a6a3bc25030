//! Result bundles: runs carried from one store to another. A bundle is itself a plumb
//! store (a SQLite file) holding only the chosen runs, so `plumb compare --store
//! bundle.plumb …` and `plumb rerun --store bundle.plumb ID` work on another machine with
//! no code of their own, and `plumb import` copies a bundle's runs into any store.
//!
//! A run is copied with everything plumb reads of it: the run row (options, plan, host
//! snapshot, seed, the process that ran it), each step with its 1-second intervals, its
//! HDR histograms and CPU profile, the ceilings a probe run measured, and the suite it
//! belongs to. Ids are the target's own: a group of repeats in the source is one group
//! in the target (its id the id of the first of its runs copied there), a suite one
//! suite. Triage states and queue items stay behind: they belong to a store's history,
//! not to the runs.
//!
//! Copies go through the store's own write paths (`begin_run`, `add_step`,
//! `add_histograms`, `add_profile`, `add_ceilings`, `set_group` …), so a column added to
//! one of them is carried too. The run row is written last as the source has it (owner,
//! seed, status, end), in one statement: until then the copy is owned by the importing
//! process and reads as that process's run. A copy that fails is removed; one whose
//! process is killed midway is marked interrupted by the next plumb that opens the
//! store, like any run of a killed process, and is not taken for the finished copy.
//!
//! Importing is idempotent: a run is the same run when it started at the same instant,
//! with the same command line, in the same process (host, boot, pid, start time: the
//! stored owner). A run the target already holds is not copied again, whether it was
//! imported before or written there in the first place.

use crate::db::Val;
use crate::{Ceiling, NewRun, NewSuite, Store, StoreError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A bundle that could not be written or read; each variant names the file.
#[derive(Debug, Error)]
pub enum BundleError {
    /// A store failed while runs were copied.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The bundle file is already there (and overwriting was not asked for).
    #[error("bundle {0}: already exists; pass --force to replace it, or another -o")]
    Exists(PathBuf),
    /// No such bundle file.
    #[error("bundle {0}: no such file")]
    Missing(PathBuf),
    /// The file is not a SQLite database, so not a plumb store.
    #[error("bundle {0}: not a plumb store (not a SQLite file); `plumb export --format bundle -o FILE` writes one")]
    NotSqlite(PathBuf),
    /// A SQLite file without plumb's schema.
    #[error("bundle {path}: not a plumb store ({why})")]
    NotPlumb {
        /// The file.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// The bundle to import is the store it would be imported into.
    #[error("bundle {}: is the store itself; pass --store with the store to import into", .0.display())]
    IsTheStore(PathBuf),
    /// Copying the bundle's runs failed.
    #[error("importing {} into {store}", bundle.display())]
    Import {
        /// The bundle file.
        bundle: PathBuf,
        /// The store, as shown.
        store: String,
        /// Why.
        source: Box<StoreError>,
    },
    /// The file could not be read, written or moved into place.
    #[error("bundle {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// What became of one source run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Imported {
    /// Its id in the source.
    pub source: i64,
    /// Its id in the target.
    pub target: i64,
    /// False when the target already held it (nothing was written).
    pub copied: bool,
}

/// What identifies a run across stores: its start, command line and owning process.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    started_at: String,
    command: String,
    owner: Option<String>,
}

impl Store {
    /// A run's identity and its raw columns that `RunRecord` does not carry.
    fn identity(&self, id: i64) -> Result<(Identity, Option<String>), StoreError> {
        self.rows(
            "SELECT started_at, command, owner, clients FROM runs WHERE id = ?1",
            &[id.into()],
            |r| {
                Ok((
                    Identity {
                        started_at: r.text(0)?,
                        command: r.text(1)?,
                        owner: r.opt_text(2)?,
                    },
                    r.opt_text(3)?,
                ))
            },
        )?
        .pop()
        .ok_or_else(|| StoreError::NoRun {
            store: self.shown.clone(),
            run: id,
        })
    }

    /// The run of this store with that identity (the oldest, should there be two), and
    /// its group.
    fn find_identity(&self, who: &Identity) -> Result<Option<(i64, Option<i64>)>, StoreError> {
        Ok(self
            .rows(
                "SELECT id, group_id, owner FROM runs WHERE started_at = ?1 AND command = ?2
                 ORDER BY id",
                &[(&who.started_at).into(), (&who.command).into()],
                |r| Ok((r.int(0)?, r.opt_int(1)?, r.opt_text(2)?)),
            )?
            .into_iter()
            .find(|(_, _, owner)| *owner == who.owner)
            .map(|(id, group, _)| (id, group)))
    }

    /// Copies run `id` of `src` into this store, unless this store already holds it
    /// (same start, command and owning process: then nothing is written). Its group of
    /// repeats is the group of whichever of its source group's runs this store already
    /// holds, else a new one.
    pub fn copy_run_from(&mut self, src: &Store, id: i64) -> Result<Imported, StoreError> {
        Ok(self.copy_runs_from(src, &[id])?[0])
    }

    /// Copies runs of `src` into this store, in the order given (give them in id order
    /// so each group's id is its first run's), as [`Store::copy_run_from`] does each.
    pub fn copy_runs_from(
        &mut self,
        src: &Store,
        ids: &[i64],
    ) -> Result<Vec<Imported>, StoreError> {
        let mut groups: BTreeMap<i64, i64> = BTreeMap::new();
        let mut suites: BTreeMap<i64, i64> = BTreeMap::new();
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let (who, clients) = src.identity(id)?;
            if let Some((there, _)) = self.find_identity(&who)? {
                out.push(Imported {
                    source: id,
                    target: there,
                    copied: false,
                });
                continue;
            }
            let run = src.run(id)?;
            // The group this run joins in the target: one already mapped in this import,
            // or the group of a run of its source group that an earlier import copied.
            let group = match run.run.group_id {
                None => None,
                Some(g) => match groups.get(&g) {
                    Some(&t) => Some(t),
                    None => {
                        let mut found = None;
                        for m in src.group(g)?.into_iter().filter(|m| *m != id) {
                            let (mw, _) = src.identity(m)?;
                            if let Some((_, Some(tg))) = self.find_identity(&mw)? {
                                found = Some(tg);
                                break;
                            }
                        }
                        found.inspect(|t| {
                            groups.insert(g, *t);
                        });
                        found
                    }
                },
            };
            let suite = match run.run.suite_id {
                None => None,
                Some(s) => match suites.get(&s) {
                    Some(&t) => Some(t),
                    None => {
                        let t = self.copy_suite_from(src, s)?;
                        suites.insert(s, t);
                        Some(t)
                    }
                },
            };
            let new_id = self.begin_copy(&run.run, suite)?;
            match self.fill_copy(src, &run, new_id, group, clients.as_deref(), &who) {
                Ok(()) => {}
                Err(e) => {
                    // Remove the half-written copy (its steps and what hangs off them go
                    // with it), so a second try copies it whole.
                    let _ = self.exec("DELETE FROM runs WHERE id = ?1", &[new_id.into()]);
                    return Err(e);
                }
            }
            if let Some(g) = run.run.group_id {
                groups.entry(g).or_insert(group.unwrap_or(new_id));
            }
            out.push(Imported {
                source: id,
                target: new_id,
                copied: true,
            });
        }
        Ok(out)
    }

    /// Starts the copy of `r`: its run row, owned by this process until it is whole.
    fn begin_copy(&self, r: &crate::RunRecord, suite: Option<i64>) -> Result<i64, StoreError> {
        self.begin_run(&NewRun {
            tag: r.tag.clone(),
            command: r.command.clone(),
            workload: r.workload.clone(),
            engine: r.engine.clone(),
            engine_version: r.engine_version.clone(),
            plumb_version: r.plumb_version.clone(),
            git_hash: r.git_hash.clone(),
            options: r.options.clone(),
            seed: r.seed.parse().unwrap_or(0),
            started_at: r.started_at.clone(),
            data_dir: r.data_dir.clone(),
            device: r.device.clone(),
            host: r.host.clone(),
            group_id: None,
            repeat_index: None,
            suite_id: suite,
            plan: r.plan.clone(),
            plan_hash: r.plan_hash.clone(),
        })
    }

    /// Everything of a copied run after its row: steps, histograms, profiles, ceilings,
    /// group, client group, and last the row's own end (status, end, seed, owner).
    fn fill_copy(
        &mut self,
        src: &Store,
        run: &crate::StoredRun,
        new_id: i64,
        group: Option<i64>,
        clients: Option<&str>,
        who: &Identity,
    ) -> Result<(), StoreError> {
        let id = run.run.id;
        let mut step_ids: BTreeMap<i64, i64> = BTreeMap::new();
        for (step, intervals) in &run.steps {
            step_ids.insert(step.seq, self.add_step(new_id, step, intervals)?);
        }
        let mut hists: BTreeMap<i64, Vec<(i64, String)>> = BTreeMap::new();
        for (seq, idx, hdr) in src.rows(
            "SELECT s.seq, h.idx, h.hdr FROM histograms h JOIN steps s ON s.id = h.step_id
             WHERE s.run_id = ?1 ORDER BY s.seq, h.idx",
            &[id.into()],
            |r| Ok((r.int(0)?, r.int(1)?, r.text(2)?)),
        )? {
            hists.entry(seq).or_default().push((idx, hdr));
        }
        for (seq, h) in &hists {
            if let Some(&sid) = step_ids.get(seq) {
                self.add_histograms(sid, h)?;
            }
        }
        for (seq, folded) in src.rows(
            "SELECT s.seq, p.folded FROM profiles p JOIN steps s ON s.id = p.step_id
             WHERE s.run_id = ?1 ORDER BY s.seq",
            &[id.into()],
            |r| Ok((r.int(0)?, r.text(1)?)),
        )? {
            if let Some(&sid) = step_ids.get(&seq) {
                self.add_profile(sid, &folded)?;
            }
        }
        let mut ceilings: BTreeMap<(String, String), Vec<Ceiling>> = BTreeMap::new();
        for (host, at, c) in src.rows(
            "SELECT host, measured_at, name, value, unit FROM ceilings WHERE run_id = ?1
             ORDER BY id",
            &[id.into()],
            |r| {
                Ok((
                    r.text(0)?,
                    r.text(1)?,
                    Ceiling {
                        name: r.text(2)?,
                        value: r.real(3)?,
                        unit: r.text(4)?,
                    },
                ))
            },
        )? {
            ceilings.entry((host, at)).or_default().push(c);
        }
        for ((host, at), cs) in &ceilings {
            self.add_ceilings(new_id, host, at, cs)?;
        }
        if run.run.group_id.is_some() {
            self.set_group(
                new_id,
                group.unwrap_or(new_id),
                run.run.repeat_index.unwrap_or(0),
            )?;
        } else if let Some(r) = run.run.repeat_index {
            self.exec(
                "UPDATE runs SET repeat_index = ?1 WHERE id = ?2",
                &[r.into(), new_id.into()],
            )?;
        }
        if let Some(c) = clients {
            self.set_client_group(new_id, c)?;
        }
        // The commit point: from here the copy is the source's run, found as such by the
        // next import.
        self.exec(
            "UPDATE runs SET status = ?1, ended_at = ?2, seed = ?3, owner = ?4 WHERE id = ?5",
            &[
                run.run.status.as_str().into(),
                run.run.ended_at.as_ref().into(),
                (&run.run.seed).into(),
                who.owner.as_ref().into(),
                new_id.into(),
            ],
        )?;
        Ok(())
    }

    /// The id in this store of suite `id` of `src`: the one already here (same name,
    /// definition and start), else a copy.
    fn copy_suite_from(&self, src: &Store, id: i64) -> Result<i64, StoreError> {
        let s = src.suite(id)?;
        if let Some(here) = self
            .suites_where("definition_hash = ?1", Val::from(&s.definition_hash))?
            .into_iter()
            .find(|h| h.name == s.name && h.started_at == s.started_at)
        {
            return Ok(here.id);
        }
        let new = self.begin_suite(&NewSuite {
            name: s.name.clone(),
            file: s.file.clone(),
            definition_hash: s.definition_hash.clone(),
            plan: s.plan.clone(),
            started_at: s.started_at.clone(),
        })?;
        self.finish_suite(new, s.status, s.ended_at.as_deref())?;
        Ok(new)
    }

    /// Every run id of this store, oldest first: what a bundle holds.
    pub fn all_run_ids(&self) -> Result<Vec<i64>, StoreError> {
        self.rows("SELECT id FROM runs ORDER BY id", &[], |r| r.int(0))
    }
}

/// The files SQLite keeps beside a store in WAL mode.
fn sidecars(path: &Path) -> [PathBuf; 2] {
    ["-wal", "-shm"].map(|s| {
        let mut p = path.as_os_str().to_owned();
        p.push(s);
        PathBuf::from(p)
    })
}

fn remove_with_sidecars(path: &Path) {
    let _ = std::fs::remove_file(path);
    for s in sidecars(path) {
        let _ = std::fs::remove_file(s);
    }
}

/// Writes runs `ids` of `src` as a bundle at `path`: a new plumb store (one SQLite file)
/// holding only them, built beside `path` and moved into place when whole, so a failure
/// leaves no half bundle. An existing `path` is refused unless `overwrite`.
pub fn write_bundle(
    src: &Store,
    ids: &[i64],
    path: &Path,
    overwrite: bool,
) -> Result<Vec<Imported>, BundleError> {
    if !overwrite && path.exists() {
        return Err(BundleError::Exists(path.to_path_buf()));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bundle".into());
    let tmp = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    remove_with_sidecars(&tmp);
    let built = (|| -> Result<Vec<Imported>, StoreError> {
        let mut dst = Store::open(&tmp)?;
        let out = dst.copy_runs_from(src, ids)?;
        // One self-contained file: the log folded in and left off.
        dst.db
            .borrow_mut()
            .batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;")
            .map_err(|e| dst.err(e))?;
        Ok(out)
    })();
    let out = match built {
        Ok(out) => out,
        Err(e) => {
            remove_with_sidecars(&tmp);
            return Err(e.into());
        }
    };
    let io = |source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    };
    if overwrite {
        // A log left beside an old bundle would be replayed into the new one.
        for s in sidecars(path) {
            let _ = std::fs::remove_file(s);
        }
        std::fs::rename(&tmp, path).map_err(|e| {
            remove_with_sidecars(&tmp);
            io(e)
        })?;
    } else {
        // A hard link fails if `path` appeared meanwhile: never replaced unasked.
        let linked = std::fs::hard_link(&tmp, path);
        remove_with_sidecars(&tmp);
        linked.map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => BundleError::Exists(path.to_path_buf()),
            _ => io(e),
        })?;
    }
    Ok(out)
}

/// Copies every run of the bundle at `bundle` into the store at `target` (opened, or
/// made), each run the store already holds kept once; returns what became of each and
/// the store as shown.
pub fn import(bundle: &Path, target: &Path) -> Result<(Vec<Imported>, String), BundleError> {
    Store::check_path(target)?;
    let same = matches!((bundle.canonicalize(), target.canonicalize()), (Ok(a), Ok(b)) if a == b);
    if same {
        return Err(BundleError::IsTheStore(bundle.to_path_buf()));
    }
    let src = open_bundle(bundle)?;
    let mut dst = Store::open(target)?;
    let ids = src.all_run_ids()?;
    let got = dst
        .copy_runs_from(&src, &ids)
        .map_err(|source| BundleError::Import {
            bundle: bundle.to_path_buf(),
            store: dst.shown().to_string(),
            source: Box::new(source),
        })?;
    Ok((got, dst.shown().to_string()))
}

/// Opens a bundle (or any plumb SQLite store) to read: it must exist and hold plumb's
/// schema. Checked before opening, because opening a store migrates it, and a SQLite
/// file of something else would get plumb's tables written into it.
pub fn open_bundle(path: &Path) -> Result<Store, BundleError> {
    let p = path.to_path_buf();
    let mut head = [0u8; 16];
    match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(BundleError::Missing(p)),
        Err(source) => return Err(BundleError::Io { path: p, source }),
        Ok(mut f) => {
            use std::io::Read;
            if f.read_exact(&mut head).is_err() || &head != b"SQLite format 3\0" {
                return Err(BundleError::NotSqlite(p));
            }
        }
    }
    let not_plumb = |why: String| BundleError::NotPlumb {
        path: p.clone(),
        why,
    };
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| not_plumb(e.to_string()))?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| not_plumb(e.to_string()))?;
    let has_runs: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| not_plumb(e.to_string()))?;
    if version == 0 || has_runs == 0 {
        return Err(not_plumb("no runs table, no schema version".into()));
    }
    drop(conn);
    Ok(Store::open(path)?)
}
