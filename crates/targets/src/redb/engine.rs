//! redb: a pure-Rust copy-on-write B-tree in one file, read through its own page cache
//! (pread, no memory map). Driven as LMDB is: every put and delete its own write
//! transaction (redb serialises writers), every point read its own read transaction, so
//! the two B-trees are compared op for op.

use super::{RedbOptions, DATA_FILE};
use plumb_core::{BatchOp, Maintenance, Result, Session, Target, TargetError, Visit, WriteBatch};
use redb::{
    Database, Durability, Range, ReadableDatabase, ReadableTableMetadata, Table, TableDefinition,
    WriteTransaction,
};
use std::ops::Bound;
use std::path::{Path, PathBuf};

pub(crate) const ENGINE: &str = "redb";

/// The redb release compiled in. The workspace Cargo.toml pins redb with `=` to this
/// version, since a dependency's version is not visible to `env!` and redb reports none
/// at run time; a test checks the two agree.
const REDB_VERSION: &str = "4.6.0";

/// The one table plumb's keys live in: byte keys in byte order, as every other engine.
const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");

/// A forward range over [`TABLE`]; it holds its read transaction alive itself.
type KvRange = Range<'static, &'static [u8], &'static [u8]>;

/// The redb version this binary runs, recorded as provenance.
pub fn redb_version() -> String {
    REDB_VERSION.to_string()
}

fn eng(e: impl Into<redb::Error>) -> TargetError {
    TargetError::engine(ENGINE, e.into())
}

/// An open redb database with its one table.
pub struct RedbTarget {
    db: Database,
    path: PathBuf,
    settings: RedbOptions,
}

impl RedbTarget {
    /// Opens (creating if missing) the database file in directory `path`.
    pub fn open(path: &Path, settings: RedbOptions) -> Result<Self> {
        settings.validate()?;
        crate::engine::make_dir(ENGINE, path)?;
        let cache = usize::try_from(settings.cache_size).expect("validate checked it fits");
        let db = redb::Builder::new()
            .set_cache_size(cache)
            .create(path.join(DATA_FILE))
            .map_err(eng)?;
        let t = RedbTarget {
            db,
            path: path.to_path_buf(),
            settings,
        };
        // Created durably whatever `sync` says, so a read before the first put finds the
        // table rather than TableDoesNotExist.
        let w = t.db.begin_write().map_err(eng)?;
        w.open_table(TABLE).map_err(eng)?;
        w.commit().map_err(eng)?;
        Ok(t)
    }

    /// A write transaction with the commit settings of these options.
    fn begin_write(&self, durability: Durability) -> Result<WriteTransaction> {
        let mut w = self.db.begin_write().map_err(eng)?;
        w.set_durability(durability).map_err(eng)?;
        w.set_two_phase_commit(self.settings.two_phase_commit);
        w.set_quick_repair(self.settings.quick_repair);
        Ok(w)
    }

    /// The durability each op's commit is given.
    fn op_durability(&self) -> Durability {
        if self.settings.sync {
            Durability::Immediate
        } else {
            Durability::None
        }
    }

    /// Runs `f` on the table in one write transaction and commits it.
    fn write(
        &self,
        f: impl FnOnce(&mut Table<'_, &'static [u8], &'static [u8]>) -> Result<(), redb::Error>,
    ) -> Result<()> {
        let w = self.begin_write(self.op_durability())?;
        {
            let mut t = w.open_table(TABLE).map_err(eng)?;
            f(&mut t).map_err(eng)?;
        }
        w.commit().map_err(eng)
    }

    /// Entries in the table, from the length redb keeps in the tree's root (no walk).
    fn entries(&self) -> Result<u64> {
        let r = self.db.begin_read().map_err(eng)?;
        r.open_table(TABLE).map_err(eng)?.len().map_err(eng)
    }
}

struct RedbSession<'a> {
    target: &'a RedbTarget,
    /// The range of a readseq pass, held from call to call so the pass is one snapshot
    /// walked by one cursor, as a RocksDB iterator. redb's range owns a reference to
    /// its read transaction, so no self-referential cell is needed (LMDB's is).
    seq: Option<KvRange>,
}

impl Target for RedbTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        redb_version()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(RedbSession {
            target: self,
            seq: None,
        }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<()> {
        match what {
            // No memtable to flush: an empty durable commit makes every non-durable
            // commit before it durable (redb's Durability::None contract), the closest
            // redb has to a flush.
            Maintenance::Flush => self
                .begin_write(Durability::Immediate)?
                .commit()
                .map_err(eng),
            // A B-tree updated in place has no compaction to run or wait for. redb's
            // Database::compact() is another thing: it moves pages to shrink the file,
            // needs `&mut Database` and no live transaction, which here would mean a
            // lock taken by every op of every session; it is not run.
            Maintenance::WaitForCompaction
            | Maintenance::Compact
            | Maintenance::CompactLevel(_) => Ok(()),
        }
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.path)
    }
    // No `stats`: redb's byte figures (DatabaseStats, TableStats) walk every page of the
    // tree, a full read of the database that would disturb the step it measures.
    fn options(&self) -> Vec<(String, String)> {
        let mut v = self.settings.describe();
        if let Ok(n) = self.entries() {
            v.push(("entries_at_open".into(), n.to_string()));
        }
        v
    }
}

impl RedbSession<'_> {
    /// A range over the table in a new read transaction (a snapshot of the last commit,
    /// durable or not).
    fn range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Result<KvRange> {
        let r = self.target.db.begin_read().map_err(eng)?;
        let t = r.open_table(TABLE).map_err(eng)?;
        t.range::<&[u8]>((lo, hi)).map_err(eng)
    }
}

impl Session for RedbSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.target.write(|t| {
            t.insert(key, value)?;
            Ok(())
        })
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let r = self.target.db.begin_read().map_err(eng)?;
        let t = r.open_table(TABLE).map_err(eng)?;
        match t.get(key).map_err(eng)? {
            Some(v) => {
                visit(v.value());
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        let mut n = 0;
        let mut each = |item: Result<_, redb::StorageError>| {
            let (k, v): (redb::AccessGuard<&[u8]>, redb::AccessGuard<&[u8]>) = item.map_err(eng)?;
            visit(k.value(), v.value());
            n += 1;
            Ok::<_, TargetError>(())
        };
        if reverse {
            let range = self.range(Bound::Unbounded, Bound::Included(start))?;
            for item in range.rev().take(nexts + 1) {
                each(item)?;
            }
        } else {
            let range = self.range(Bound::Included(start), Bound::Unbounded)?;
            for item in range.take(nexts + 1) {
                each(item)?;
            }
        }
        Ok(n)
    }
    fn next_in_order(&mut self, start: &[u8], visit: Visit) -> Result<bool> {
        if self.seq.is_none() {
            self.seq = Some(self.range(Bound::Included(start), Bound::Unbounded)?);
        }
        let range = self.seq.as_mut().expect("set above");
        let next = match range.next() {
            Some(Ok((k, v))) => {
                visit(k.value(), v.value());
                Ok(true)
            }
            Some(Err(e)) => Err(eng(e)),
            None => Ok(false),
        };
        // Once over, the pass releases its read transaction, so redb may reuse the pages
        // it pinned.
        crate::engine::end_spent_pass(&mut self.seq, next)
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.target.write(|t| {
            t.remove(key)?;
            Ok(())
        })
    }
    /// One write transaction for the whole batch, so it commits atomically and pays one
    /// commit (one fsync with `sync`), as a RocksDB write batch does.
    fn write_batch(&mut self, batch: &WriteBatch) -> Result<()> {
        self.target.write(|t| {
            for op in batch.iter() {
                match op {
                    BatchOp::Put(k, v) => {
                        t.insert(k, v)?;
                    }
                    BatchOp::Delete(k) => {
                        t.remove(k)?;
                    }
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineKind;
    use crate::options::EngineCommon;

    fn opts(sync: bool) -> RedbOptions {
        RedbOptions {
            sync,
            cache_size: 16 << 20,
            ..RedbOptions::default()
        }
    }

    fn key(i: u32) -> Vec<u8> {
        format!("k{i:06}").into_bytes()
    }

    fn get(s: &mut dyn Session, k: &[u8]) -> Option<Vec<u8>> {
        let mut out = None;
        let found = s.get(k, &mut |v| out = Some(v.to_vec())).unwrap();
        assert_eq!(found, out.is_some());
        out
    }

    fn scan(s: &mut dyn Session, start: &[u8], nexts: usize, reverse: bool) -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        let n = s
            .scan(start, nexts, reverse, &mut |k, _| keys.push(k.to_vec()))
            .unwrap();
        assert_eq!(n, keys.len());
        keys
    }

    /// A target holding keys 10, 20, ..., 100 (as `key(i)`), value = key.
    fn tens(dir: &Path) -> RedbTarget {
        let t = RedbTarget::open(dir, opts(false)).unwrap();
        {
            let mut s = t.session().unwrap();
            for i in (10..=100).step_by(10) {
                s.put(&key(i), &key(i)).unwrap();
            }
        }
        t
    }

    #[test]
    fn put_get_overwrite_delete() {
        let dir = tempfile::tempdir().unwrap();
        let t = RedbTarget::open(dir.path(), opts(false)).unwrap();
        let mut s = t.session().unwrap();
        assert_eq!(get(&mut *s, b"a"), None);
        s.put(b"a", b"1").unwrap();
        assert_eq!(get(&mut *s, b"a").as_deref(), Some(&b"1"[..]));
        s.put(b"a", b"22").unwrap();
        assert_eq!(get(&mut *s, b"a").as_deref(), Some(&b"22"[..]));
        s.delete(b"a").unwrap();
        assert_eq!(get(&mut *s, b"a"), None);
        // Deleting a missing key is no error, as in every other engine.
        s.delete(b"never").unwrap();
        assert!(dir.path().join(DATA_FILE).exists());
    }

    #[test]
    fn forward_scan_starts_at_first_key_not_below_start() {
        let dir = tempfile::tempdir().unwrap();
        let t = tens(dir.path());
        let mut s = t.session().unwrap();
        // Exact start: it and 2 more.
        assert_eq!(
            scan(&mut *s, &key(20), 2, false),
            [key(20), key(30), key(40)]
        );
        // Between keys: the next one up.
        assert_eq!(scan(&mut *s, &key(25), 1, false), [key(30), key(40)]);
        // Before the first key.
        assert_eq!(scan(&mut *s, b"", 0, false), [key(10)]);
        // Runs out at the end.
        assert_eq!(scan(&mut *s, &key(90), 5, false), [key(90), key(100)]);
        // Past the last key: nothing.
        assert!(scan(&mut *s, &key(101), 3, false).is_empty());
    }

    #[test]
    fn reverse_scan_starts_at_last_key_not_above_start() {
        let dir = tempfile::tempdir().unwrap();
        let t = tens(dir.path());
        let mut s = t.session().unwrap();
        assert_eq!(
            scan(&mut *s, &key(50), 2, true),
            [key(50), key(40), key(30)]
        );
        assert_eq!(scan(&mut *s, &key(55), 1, true), [key(50), key(40)]);
        // Past the last key: the last one.
        assert_eq!(scan(&mut *s, b"z", 0, true), [key(100)]);
        // Runs out at the start.
        assert_eq!(scan(&mut *s, &key(20), 5, true), [key(20), key(10)]);
        // Before the first key: nothing.
        assert!(scan(&mut *s, &key(5), 3, true).is_empty());
    }

    #[test]
    fn next_in_order_visits_1000_keys_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let t = RedbTarget::open(dir.path(), opts(false)).unwrap();
        let mut s = t.session().unwrap();
        let mut b = WriteBatch::default();
        // Inserted out of order, so order comes from redb.
        for i in (0..1000u32).rev() {
            b.put(&key(i), &i.to_le_bytes());
        }
        s.write_batch(&b).unwrap();
        let mut seen = Vec::new();
        let mut expect = key(0);
        while s
            .next_in_order(&expect, &mut |k, v| {
                seen.push((k.to_vec(), u32::from_le_bytes(v.try_into().unwrap())))
            })
            .unwrap()
        {
            expect = key(seen.len() as u32);
        }
        assert_eq!(seen.len(), 1000);
        for (i, (k, v)) in seen.iter().enumerate() {
            assert_eq!((k, *v), (&key(i as u32), i as u32));
        }
        // The pass ended and was released: a new one starts from its own start.
        let mut first = Vec::new();
        assert!(s
            .next_in_order(&key(500), &mut |k, _| first = k.to_vec())
            .unwrap());
        assert_eq!(first, key(500));
    }

    #[test]
    fn write_batch_applies_puts_and_deletes_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let t = RedbTarget::open(dir.path(), opts(true)).unwrap();
        let mut s = t.session().unwrap();
        s.put(b"gone", b"x").unwrap();
        let mut b = WriteBatch::default();
        b.put(b"a", b"1");
        b.put(b"b", b"2");
        b.delete(b"gone");
        b.put(b"a", b"3");
        b.delete(b"b");
        s.write_batch(&b).unwrap();
        assert_eq!(get(&mut *s, b"a").as_deref(), Some(&b"3"[..]));
        assert_eq!(get(&mut *s, b"b"), None);
        assert_eq!(get(&mut *s, b"gone"), None);
    }

    /// Writes 200 keys with `sync`, drops the target, reopens and checks them all.
    fn reopen_keeps_data(sync: bool) {
        let dir = tempfile::tempdir().unwrap();
        {
            let t = RedbTarget::open(dir.path(), opts(sync)).unwrap();
            let mut s = t.session().unwrap();
            for i in 0..200 {
                s.put(&key(i), &key(i + 1)).unwrap();
            }
            s.delete(&key(7)).unwrap();
        }
        let t = RedbTarget::open(dir.path(), opts(sync)).unwrap();
        let mut s = t.session().unwrap();
        for i in 0..200 {
            let want = (i != 7).then(|| key(i + 1));
            assert_eq!(get(&mut *s, &key(i)), want, "key {i}");
        }
        assert!(t
            .options()
            .contains(&("entries_at_open".into(), "199".into())));
    }

    #[test]
    fn reopen_after_drop_keeps_data_with_sync() {
        reopen_keeps_data(true);
    }

    #[test]
    fn reopen_after_drop_keeps_data_without_sync() {
        reopen_keeps_data(false);
    }

    #[test]
    fn flush_makes_non_durable_commits_durable() {
        let dir = tempfile::tempdir().unwrap();
        let t = RedbTarget::open(dir.path(), opts(false)).unwrap();
        let mut s = t.session().unwrap();
        s.put(b"k", b"v").unwrap();
        drop(s);
        t.maintenance(Maintenance::Flush).unwrap();
        // Once flushed, the file itself holds the commit: a copy taken now, which never
        // sees the close's commit, opens with the key (a crash after the flush keeps it).
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(dir.path().join(DATA_FILE), copy.path().join(DATA_FILE)).unwrap();
        {
            let c = RedbTarget::open(copy.path(), opts(false)).unwrap();
            let mut cs = c.session().unwrap();
            assert_eq!(get(&mut *cs, b"k").as_deref(), Some(&b"v"[..]));
        }
        for m in [
            Maintenance::Compact,
            Maintenance::CompactLevel(0),
            Maintenance::WaitForCompaction,
        ] {
            t.maintenance(m).unwrap();
        }
    }

    #[test]
    fn non_durable_commit_is_not_in_the_file_until_flushed() {
        // The evidence for Durability::Unlogged without sync: a copy of the file taken
        // after a non-durable commit (what a crashed process leaves) lacks it.
        let dir = tempfile::tempdir().unwrap();
        let t = RedbTarget::open(dir.path(), opts(false)).unwrap();
        let mut s = t.session().unwrap();
        s.put(b"k", b"v").unwrap();
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(dir.path().join(DATA_FILE), copy.path().join(DATA_FILE)).unwrap();
        let c = RedbTarget::open(copy.path(), opts(false)).unwrap();
        let mut cs = c.session().unwrap();
        assert_eq!(get(&mut *cs, b"k"), None);
        assert_eq!(get(&mut *s, b"k").as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn cache_size_comes_from_the_common_option_and_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = RedbOptions::default();
        o.apply_common(&EngineCommon {
            sync: false,
            cache_size: Some(3 << 20),
        })
        .unwrap();
        assert!(o.capabilities().cache);
        let t = RedbTarget::open(dir.path(), o).unwrap();
        let got = t.options();
        assert!(got.contains(&("cache_size".into(), (3u64 << 20).to_string())));
        assert!(got.contains(&("commit_durability".into(), "None".into())));
    }

    #[test]
    fn opened_through_the_engine_kind() {
        let dir = tempfile::tempdir().unwrap();
        let o = opts(true);
        assert!(o.built_in());
        let t = o.open(Some(dir.path())).unwrap();
        assert_eq!(t.name(), "redb");
        assert_eq!(t.data_dir(), Some(dir.path()));
        assert!(dir.path().join(o.marker_file().unwrap()).exists());
    }

    #[test]
    fn version_matches_the_cargo_pin() {
        let manifest = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"));
        let pin = format!("redb = \"={}\"", redb_version());
        assert!(manifest.contains(&pin), "Cargo.toml lacks {pin}");
    }
}
