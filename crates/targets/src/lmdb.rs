//! LMDB through `heed`: a copy-on-write B+tree in one memory map, the seeds' read-mostly
//! baseline. Every write is its own write transaction (LMDB serialises writers), every
//! point read its own read transaction, as db_bench's batch of one on RocksDB.

use crate::lmdb_options::LmdbOptions;
use heed::types::Bytes;
use heed::{Database, Env, EnvFlags, EnvOpenOptions, RoTxn, WithoutTls};
use plumb_core::{EngineStats, Maintenance, Result, Session, Target, TargetError, Visit};
use std::ops::Bound;
use std::path::{Path, PathBuf};

pub(crate) const ENGINE: &str = "lmdb";

/// The LMDB release compiled in by lmdb-master-sys.
pub fn lmdb_version() -> String {
    let v = heed::lmdb_version();
    format!("{}.{}.{}", v.major, v.minor, v.patch)
}

fn eng(e: heed::Error) -> TargetError {
    TargetError::engine(ENGINE, e)
}

/// An open LMDB environment with its one unnamed database.
pub struct LmdbTarget {
    env: Env<WithoutTls>,
    db: Database<Bytes, Bytes>,
    path: PathBuf,
    settings: LmdbOptions,
}

impl LmdbTarget {
    /// Opens (creating if missing) the environment in directory `path`.
    pub fn open(path: &Path, settings: LmdbOptions) -> Result<Self> {
        settings.validate()?;
        crate::engine::make_dir(ENGINE, path)?;
        let mut flags = EnvFlags::empty();
        if !settings.sync {
            flags |= EnvFlags::NO_SYNC;
        }
        if settings.write_map {
            flags |= EnvFlags::WRITE_MAP;
        }
        if settings.no_readahead {
            flags |= EnvFlags::NO_READ_AHEAD;
        }
        // Read transactions are tied to their object, not the thread: a readseq pass
        // holds one while the same thread could start another.
        let mut o = EnvOpenOptions::new().read_txn_without_tls();
        o.map_size(settings.map_size as usize).max_readers(1024);
        // SAFETY: heed's contract is that the flags are valid MDB_* environment flags
        // (they are heed's own constants) and that no other mapping of this file is
        // opened in this process while it lives: plumb opens one target per directory
        // and drops it before opening the directory again.
        let env = unsafe {
            o.flags(flags);
            o.open(path)
        }
        .map_err(eng)?;
        let mut w = env.write_txn().map_err(eng)?;
        let db = env
            .create_database::<Bytes, Bytes>(&mut w, None)
            .map_err(eng)?;
        w.commit().map_err(eng)?;
        Ok(LmdbTarget {
            env,
            db,
            path: path.to_path_buf(),
            settings,
        })
    }

    /// Pages in use (branch + leaf + overflow) and the page size, LMDB's own figures.
    pub fn pages(&self) -> Result<(u64, u32)> {
        let r = self.env.read_txn().map_err(eng)?;
        let s = self.db.stat(&r).map_err(eng)?;
        Ok((
            (s.branch_pages + s.leaf_pages + s.overflow_pages) as u64,
            s.page_size,
        ))
    }
}

struct LmdbSession<'a> {
    env: &'a Env<WithoutTls>,
    db: Database<Bytes, Bytes>,
    /// The read transaction and cursor of a readseq pass, held from call to call so the
    /// pass is one consistent snapshot walked by one cursor, as a RocksDB iterator.
    seq: Option<SeqPass<'a>>,
}

/// A cursor walking a read transaction forward from a start key.
type SeqCursor<'txn> = heed::RoRange<'txn, Bytes, Bytes>;

self_cell::self_cell!(
    /// One readseq pass: the cursor borrows the transaction it reads, so the two are
    /// kept in one cell (`self_cell`) for the pass's life.
    struct SeqPass<'a> {
        owner: RoTxn<'a, WithoutTls>,
        #[not_covariant]
        dependent: SeqCursor,
    }
);

impl Target for LmdbTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        lmdb_version()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(LmdbSession {
            env: &self.env,
            db: self.db,
            seq: None,
        }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<()> {
        match what {
            // No memtable to flush: make the commits so far durable, the closest LMDB
            // has to a flush.
            Maintenance::Flush => self.env.force_sync().map_err(eng),
            // A B+tree updated in place has no compaction to run or wait for.
            Maintenance::WaitForCompaction
            | Maintenance::Compact
            | Maintenance::CompactLevel(_) => Ok(()),
        }
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.path)
    }
    fn stats(&self) -> EngineStats {
        crate::engine::used_pages(self.pages())
    }
    fn options(&self) -> Vec<(String, String)> {
        let mut v = self.settings.describe();
        if let Ok((pages, size)) = self.pages() {
            v.push(("page_size".into(), size.to_string()));
            v.push(("pages_at_open".into(), pages.to_string()));
        }
        v
    }
}

impl Session for LmdbSession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut w = self.env.write_txn().map_err(eng)?;
        self.db.put(&mut w, key, value).map_err(eng)?;
        w.commit().map_err(eng)
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let r = self.env.read_txn().map_err(eng)?;
        match self.db.get(&r, key).map_err(eng)? {
            Some(v) => {
                visit(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        let r = self.env.read_txn().map_err(eng)?;
        let mut n = 0;
        if reverse {
            let range = (Bound::Unbounded, Bound::Included(start));
            for item in self.db.rev_range(&r, &range).map_err(eng)?.take(nexts + 1) {
                let (k, v) = item.map_err(eng)?;
                visit(k, v);
                n += 1;
            }
        } else {
            let range = (Bound::Included(start), Bound::Unbounded);
            for item in self.db.range(&r, &range).map_err(eng)?.take(nexts + 1) {
                let (k, v) = item.map_err(eng)?;
                visit(k, v);
                n += 1;
            }
        }
        Ok(n)
    }
    fn next_in_order(&mut self, start: &[u8], visit: Visit) -> Result<bool> {
        if self.seq.is_none() {
            let txn = self.env.read_txn().map_err(eng)?;
            let db = self.db;
            let bounds: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(start), Bound::Unbounded);
            let pass = SeqPass::try_new(txn, |t| db.range(t, &bounds)).map_err(eng)?;
            self.seq = Some(pass);
        }
        let pass = self.seq.as_mut().expect("set above");
        // MDB_SET_RANGE on the first call, MDB_NEXT on each later one.
        let next = pass.with_dependent_mut(|_, cursor| match cursor.next() {
            Some(Ok((k, v))) => {
                visit(k, v);
                Ok(true)
            }
            Some(Err(e)) => Err(eng(e)),
            None => Ok(false),
        });
        crate::engine::end_spent_pass(&mut self.seq, next)
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        let mut w = self.env.write_txn().map_err(eng)?;
        self.db.delete(&mut w, key).map_err(eng)?;
        w.commit().map_err(eng)
    }
}
