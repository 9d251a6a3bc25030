//! fjall through its Rust API: a pure-Rust LSM (journal, memtables, leveled tables),
//! measured beside RocksDB and LevelDB without a C library in between. One database
//! with one keyspace (fjall's column family) holds every key; every put and delete is
//! fjall's own single-op write through the journal, as db_bench's batch of one on
//! RocksDB.
//!
//! Maintenance uses fjall's `#[doc(hidden)]` but public calls (`rotate_memtable`,
//! `major_compact`, `outstanding_flushes`, `active_compactions`,
//! `compactions_completed`, the keyspace's stored `config`): the root Cargo.toml pins
//! fjall with `=`, so a release that changes them is a deliberate upgrade.

use super::{FjallCompression, FjallOptions};
use crate::engine::opt_err;
use ::fjall::config::{BlockSizePolicy, CompressionPolicy};
use ::fjall::{
    CompressionType, Database, Iter, Keyspace, KeyspaceCreateOptions, OwnedWriteBatch, PersistMode,
    Readable,
};
use plumb_core::{
    BatchOp, EngineStats, Maintenance, Result, Session, Target, TargetError, Visit, WriteBatch,
};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub(crate) const ENGINE: &str = "fjall";

/// The one keyspace plumb keeps its keys in.
const KEYSPACE: &str = "plumb";

/// How often a maintenance wait looks at fjall's background work.
const POLL: Duration = Duration::from_millis(10);

/// Polls in a row with no compaction running or finishing before fjall counts as idle:
/// its worker queue is private, so a quiet spell (100 ms) stands in for "queue empty".
const QUIET_POLLS: u32 = 10;

/// The fjall release this build runs. Hard-coded because fjall exposes no version of
/// its own; the root Cargo.toml pins exactly this release with `=` and a test checks
/// Cargo.lock agrees, so the provenance cannot name another.
pub fn fjall_version() -> String {
    "3.1.13".to_string()
}

fn eng(e: impl ToString) -> TargetError {
    TargetError::engine(ENGINE, e)
}

/// fjall's data block compression for the option: its default policy for `lz4`.
fn compression_policy(c: FjallCompression) -> CompressionPolicy {
    match c {
        FjallCompression::Lz4 => CompressionPolicy::new([
            CompressionType::None,
            CompressionType::None,
            CompressionType::Lz4,
        ]),
        FjallCompression::None => CompressionPolicy::disabled(),
    }
}

/// An open fjall database with plumb's keyspace.
pub struct FjallTarget {
    db: Database,
    ks: Keyspace,
    path: PathBuf,
    settings: FjallOptions,
    workers: usize,
}

impl FjallTarget {
    /// Opens (creating if missing) the database in directory `path`; refuses a stored
    /// keyspace whose options differ from `settings`.
    pub fn open(path: &Path, settings: FjallOptions) -> Result<Self> {
        settings.validate()?;
        crate::engine::make_dir(ENGINE, path)?;
        let workers = settings.effective_worker_threads();
        let db = Database::builder(path)
            .cache_size(settings.cache_size)
            .max_journaling_size(settings.max_journaling_size)
            .worker_threads(workers)
            // fjall's default, pinned: a write batch is flushed to the OS on commit.
            .manual_journal_persist(false)
            .open()
            .map_err(eng)?;
        let ks = db
            .keyspace(KEYSPACE, || {
                KeyspaceCreateOptions::default()
                    .max_memtable_size(settings.max_memtable_size)
                    .data_block_size_policy(BlockSizePolicy::all(settings.block_size))
                    .data_block_compression_policy(compression_policy(settings.compression))
                    .compaction_strategy(Arc::new(
                        ::fjall::compaction::Leveled::default()
                            .with_l0_threshold(settings.l0_threshold)
                            .with_table_target_size(settings.table_target_size),
                    ))
                    // fjall's default, pinned: each put and delete is flushed to the OS.
                    .manual_journal_persist(false)
            })
            .map_err(eng)?;
        check_stored_options(&ks, &settings)?;
        Ok(FjallTarget {
            db,
            ks,
            path: path.to_path_buf(),
            settings,
            workers,
        })
    }

    /// The journal persist each write waits for: an fsync when syncing, otherwise
    /// fjall's flush of its journal buffer to the OS.
    fn persist_mode(&self) -> PersistMode {
        if self.settings.sync {
            PersistMode::SyncAll
        } else {
            PersistMode::Buffer
        }
    }

    /// Polls until `done`, failing if fjall poisoned itself meanwhile (a failed flush or
    /// compaction stops its worker, and the wait would never end).
    fn wait_until(&self, mut done: impl FnMut() -> bool) -> Result<()> {
        while !done() {
            // Persist refuses a poisoned database; otherwise it flushes an already
            // flushed buffer, which is nothing.
            self.db.persist(PersistMode::Buffer).map_err(eng)?;
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// Seals the active memtable and waits until every sealed memtable is a table.
    fn flush(&self) -> Result<()> {
        self.ks.rotate_memtable().map_err(eng)?;
        self.wait_until(|| self.flushed())
    }

    fn flushed(&self) -> bool {
        self.db.outstanding_flushes() == 0 && self.ks.sealed_memtable_count() == 0
    }

    /// Waits until fjall's background work is idle: no flush queued or sealed memtable
    /// left, no compaction running, and none finished for [`QUIET_POLLS`] polls. fjall
    /// starts compactions only after a flush (and at open), so it then stays idle.
    fn wait_for_compaction(&self) -> Result<()> {
        let mut last = self.db.compactions_completed();
        let mut quiet = 0;
        self.wait_until(|| {
            let done = self.db.compactions_completed();
            if self.flushed() && self.db.active_compactions() == 0 && done == last {
                quiet += 1;
            } else {
                quiet = 0;
                last = done;
            }
            quiet >= QUIET_POLLS
        })
    }
}

/// fjall stores a keyspace's options when it creates it and recovers those on reopen,
/// ignoring the ones given: refuse a difference instead of recording options that are
/// not in force. (The memtable size is stored too but not readable, so not checked.)
fn check_stored_options(ks: &Keyspace, s: &FjallOptions) -> Result<()> {
    let stored = |option: &str, value: String| {
        opt_err(
            option,
            format!(
                "this database was created with {option} = {value}, which fjall keeps; \
                 give that value or use a fresh data dir"
            ),
        )
    };
    let c = &ks.config;
    if c.data_block_size_policy[..] != [s.block_size] {
        let value = match &c.data_block_size_policy[..] {
            [one] => one.to_string(),
            per_level => format!("{per_level:?} by level"),
        };
        return Err(stored("block_size", value));
    }
    if c.data_block_compression_policy != compression_policy(s.compression) {
        let name = [FjallCompression::Lz4, FjallCompression::None]
            .into_iter()
            .find(|&k| compression_policy(k) == c.data_block_compression_policy)
            .map_or_else(
                || format!("{:?}", &c.data_block_compression_policy[..]),
                |k| format!("{k:?}").to_lowercase(),
            );
        return Err(stored("compression", name));
    }
    // plumb creates only leveled keyspaces; these are the leveled strategy's keys.
    for (k, v) in c.compaction_strategy.get_config() {
        match &*k {
            b"leveled_l0_threshold" if v[..] != [s.l0_threshold] => {
                let n = v.first().copied().unwrap_or_default();
                return Err(stored("l0_threshold", n.to_string()));
            }
            b"leveled_target_size" if v[..] != s.table_target_size.to_le_bytes() => {
                let n = <[u8; 8]>::try_from(&v[..]).map_or(0, u64::from_le_bytes);
                return Err(stored("table_target_size", n.to_string()));
            }
            _ => {}
        }
    }
    Ok(())
}

struct FjallSession<'a> {
    t: &'a FjallTarget,
    /// The iterator of a readseq pass, held from call to call so the pass is one
    /// snapshot walked by one merge iterator, as a RocksDB iterator. fjall's `Iter`
    /// owns its snapshot (it is `'static`), so no self-referential cell is needed.
    seq: Option<Iter>,
}

impl FjallSession<'_> {
    /// Makes a single-op write durable as the options say: fjall already flushed it to
    /// the OS (manual_journal_persist = false); with sync it is fsynced too.
    #[inline]
    fn persisted(&self) -> Result<()> {
        if self.t.settings.sync {
            self.t.db.persist(PersistMode::SyncAll).map_err(eng)?;
        }
        Ok(())
    }
}

impl Target for FjallTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn version(&self) -> String {
        fjall_version()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(FjallSession { t: self, seq: None }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<()> {
        match what {
            Maintenance::Flush => self.flush(),
            Maintenance::WaitForCompaction => self.wait_for_compaction(),
            // As RocksDB's CompactRange: the memtable first, then every table merged
            // into the last level (fjall's major compaction, 64 MB tables). fjall's
            // major compaction silently does nothing while a background compaction
            // holds any table, so the background work is waited for first.
            Maintenance::Compact => {
                self.flush()?;
                self.wait_for_compaction()?;
                self.ks.major_compact().map_err(eng)
            }
            // fjall compacts one level into the next only by its own strategy choice.
            Maintenance::CompactLevel(_) => Ok(()),
        }
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.path)
    }
    fn stats(&self) -> EngineStats {
        // The keyspace's tables (and blob files): bytes that hold data. The database's
        // own disk_space adds the journal's length, which fjall preallocates (64 MiB).
        EngineStats {
            used_bytes: Some(self.ks.disk_space()),
            ..EngineStats::default()
        }
    }
    fn options(&self) -> Vec<(String, String)> {
        let mut v = self.settings.describe();
        v.push(("keyspace".into(), KEYSPACE.into()));
        v.push(("worker_threads_in_force".into(), self.workers.to_string()));
        v.push((
            "cache_capacity_in_force".into(),
            self.db.cache_capacity().to_string(),
        ));
        v
    }
}

impl Session for FjallSession<'_> {
    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.t.ks.insert(key, value).map_err(eng)?;
        self.persisted()
    }
    #[inline]
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        match self.t.ks.get(key).map_err(eng)? {
            Some(v) => {
                visit(&v);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        // A new iterator per seek, as db_bench's seekrandom, so each op sees the newest
        // data; a bounded range, so fjall seeks instead of walking from the first key.
        let mut n = 0;
        let mut each = |g: ::fjall::Guard| -> Result<()> {
            let (k, v) = g.into_inner().map_err(eng)?;
            visit(&k, &v);
            n += 1;
            Ok(())
        };
        if reverse {
            let range: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Unbounded, Bound::Included(start));
            for g in self.t.ks.range::<&[u8], _>(range).rev().take(nexts + 1) {
                each(g)?;
            }
        } else {
            let range: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(start), Bound::Unbounded);
            for g in self.t.ks.range::<&[u8], _>(range).take(nexts + 1) {
                each(g)?;
            }
        }
        Ok(n)
    }
    fn next_in_order(&mut self, start: &[u8], visit: Visit) -> Result<bool> {
        let t = self.t;
        let it = self.seq.get_or_insert_with(|| {
            // Keyspace::range reads at the newest sequence number as it goes; a
            // snapshot's range reads at the instant the pass began.
            let range: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(start), Bound::Unbounded);
            t.db.snapshot().range::<&[u8], _>(&t.ks, range)
        });
        let next = match it.next() {
            Some(g) => g.into_inner().map_err(eng).map(|(k, v)| {
                visit(&k, &v);
                true
            }),
            None => Ok(false),
        };
        crate::engine::end_spent_pass(&mut self.seq, next)
    }
    #[inline]
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.t.ks.remove(key).map_err(eng)?;
        self.persisted()
    }
    fn write_batch(&mut self, batch: &WriteBatch) -> Result<()> {
        // One journal record for the batch, persisted once under the journal lock.
        let mut b = OwnedWriteBatch::with_capacity(self.t.db.clone(), batch.len())
            .durability(Some(self.t.persist_mode()));
        for op in batch.iter() {
            match op {
                BatchOp::Put(k, v) => b.insert(&self.t.ks, k, v),
                BatchOp::Delete(k) => b.remove(&self.t.ks, k),
            }
        }
        b.commit().map_err(eng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &Path, o: FjallOptions) -> FjallTarget {
        FjallTarget::open(dir, o).unwrap()
    }

    fn key(i: u32) -> Vec<u8> {
        format!("k{i:06}").into_bytes()
    }

    fn val(i: u32) -> Vec<u8> {
        format!("value-{i}").into_bytes()
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
            .scan(start, nexts, reverse, &mut |k, v| {
                assert_eq!(
                    v,
                    format!("value-{}", &String::from_utf8_lossy(k)[1..]).as_bytes()
                );
                keys.push(k.to_vec());
            })
            .unwrap();
        assert_eq!(n, keys.len());
        keys
    }

    /// Keys k000000, k000010, …, k000090 with their values.
    fn ten_keys(s: &mut dyn Session) {
        for i in (0..100).step_by(10) {
            s.put(&key(i), &format!("value-{i:06}").into_bytes())
                .unwrap();
        }
    }

    #[test]
    fn put_get_overwrite_delete() {
        let dir = tempfile::tempdir().unwrap();
        let t = open(dir.path(), FjallOptions::default());
        let mut s = t.session().unwrap();
        assert_eq!(get(&mut *s, b"a"), None);
        s.put(b"a", b"1").unwrap();
        assert_eq!(get(&mut *s, b"a").as_deref(), Some(&b"1"[..]));
        s.put(b"a", b"22").unwrap();
        assert_eq!(get(&mut *s, b"a").as_deref(), Some(&b"22"[..]));
        s.delete(b"a").unwrap();
        assert_eq!(get(&mut *s, b"a"), None);
        s.delete(b"never-written").unwrap();
        assert_eq!(t.name(), "fjall");
        assert_eq!(t.version(), fjall_version());
    }

    #[test]
    fn forward_scans_seek_to_the_first_key_at_or_after_start() {
        let dir = tempfile::tempdir().unwrap();
        let t = open(dir.path(), FjallOptions::default());
        let mut s = t.session().unwrap();
        ten_keys(&mut *s);
        // On a key, between keys, before the first, at the last, past the last.
        assert_eq!(
            scan(&mut *s, &key(20), 2, false),
            [key(20), key(30), key(40)]
        );
        assert_eq!(scan(&mut *s, &key(25), 1, false), [key(30), key(40)]);
        assert_eq!(scan(&mut *s, b"", 0, false), [key(0)]);
        assert_eq!(scan(&mut *s, &key(90), 5, false), [key(90)]);
        assert_eq!(scan(&mut *s, &key(91), 5, false), Vec::<Vec<u8>>::new());
        assert_eq!(scan(&mut *s, &key(70), 100, false).len(), 3);
    }

    #[test]
    fn reverse_scans_seek_to_the_last_key_at_or_before_start() {
        let dir = tempfile::tempdir().unwrap();
        let t = open(dir.path(), FjallOptions::default());
        let mut s = t.session().unwrap();
        ten_keys(&mut *s);
        assert_eq!(
            scan(&mut *s, &key(50), 2, true),
            [key(50), key(40), key(30)]
        );
        assert_eq!(scan(&mut *s, &key(55), 1, true), [key(50), key(40)]);
        assert_eq!(scan(&mut *s, b"z", 0, true), [key(90)]);
        assert_eq!(scan(&mut *s, &key(0), 5, true), [key(0)]);
        assert_eq!(scan(&mut *s, b"a", 5, true), Vec::<Vec<u8>>::new());
        assert_eq!(
            scan(&mut *s, &key(20), 100, true),
            [key(20), key(10), key(0)]
        );
    }

    #[test]
    fn next_in_order_walks_a_thousand_keys_in_order_with_one_iterator() {
        let dir = tempfile::tempdir().unwrap();
        let t = open(dir.path(), FjallOptions::default());
        let mut s = t.session().unwrap();
        // Written out of order, so the order comes from fjall.
        for i in (0..1000u32).rev() {
            s.put(&key(i), &val(i)).unwrap();
        }
        let mut seen = Vec::new();
        let mut next = Vec::new();
        loop {
            let mut got = None;
            let more = s
                .next_in_order(&next, &mut |k, v| got = Some((k.to_vec(), v.to_vec())))
                .unwrap();
            let Some((k, v)) = got else {
                assert!(!more);
                break;
            };
            assert!(more);
            let i: u32 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
            assert_eq!(v, val(i));
            seen.push(i);
            next = k;
            next.push(0);
            // A write during the pass is not seen by it: one snapshot for the pass.
            if seen.len() == 500 {
                s.put(b"k000999x", b"late").unwrap();
            }
        }
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        // The pass ended, so the next one starts afresh at `start`.
        let mut first = None;
        assert!(s
            .next_in_order(&key(998), &mut |k, _| first = Some(k.to_vec()))
            .unwrap());
        assert_eq!(first, Some(key(998)));
    }

    #[test]
    fn write_batch_applies_puts_and_deletes_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let t = open(dir.path(), FjallOptions::default());
        let mut s = t.session().unwrap();
        s.put(b"gone", b"x").unwrap();
        let mut b = WriteBatch::default();
        b.put(b"a", b"1");
        b.put(b"b", b"2");
        b.delete(b"gone");
        b.put(b"c", b"3");
        b.delete(b"c");
        s.write_batch(&b).unwrap();
        assert_eq!(get(&mut *s, b"a").as_deref(), Some(&b"1"[..]));
        assert_eq!(get(&mut *s, b"b").as_deref(), Some(&b"2"[..]));
        assert_eq!(get(&mut *s, b"gone"), None);
        assert_eq!(get(&mut *s, b"c"), None);
        s.write_batch(&WriteBatch::default()).unwrap();
    }

    /// OsBuffered's promise: when put returns, the write is in the OS's copy of the
    /// journal (another open of the file sees it), not only in fjall's buffer.
    #[test]
    fn each_write_reaches_the_os_before_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let t = open(dir.path(), FjallOptions::default());
        let mut s = t.session().unwrap();
        let journal = || std::fs::read(dir.path().join("0.jnl")).unwrap();
        let has = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        s.put(b"k1", b"first-value-in-the-journal").unwrap();
        assert!(has(&journal(), b"first-value-in-the-journal"));
        let mut b = WriteBatch::default();
        b.put(b"k2", b"batched-value-in-the-journal");
        s.write_batch(&b).unwrap();
        assert!(has(&journal(), b"batched-value-in-the-journal"));
    }

    #[test]
    fn reopen_keeps_the_data_in_both_sync_modes() {
        for sync in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let o = FjallOptions {
                sync,
                ..FjallOptions::default()
            };
            {
                let t = open(dir.path(), o.clone());
                let mut s = t.session().unwrap();
                for i in 0..100 {
                    s.put(&key(i), &val(i)).unwrap();
                }
                s.delete(&key(7)).unwrap();
                let mut b = WriteBatch::default();
                b.put(b"batched", b"yes");
                s.write_batch(&b).unwrap();
                assert!(t.options().contains(&(
                    "journal_persist".into(),
                    if sync { "sync_all" } else { "buffer" }.into()
                )));
            }
            assert!(dir.path().join(crate::fjall::VERSION_FILE).is_file());
            let t = open(dir.path(), o);
            let mut s = t.session().unwrap();
            assert_eq!(get(&mut *s, &key(99)), Some(val(99)), "sync={sync}");
            assert_eq!(get(&mut *s, &key(7)), None, "sync={sync}");
            assert_eq!(get(&mut *s, b"batched").as_deref(), Some(&b"yes"[..]));
        }
    }

    #[test]
    fn maintenance_runs_and_the_data_stays_readable() {
        let dir = tempfile::tempdir().unwrap();
        let t = open(dir.path(), FjallOptions::default());
        let mut s = t.session().unwrap();
        for round in 0..3u32 {
            for i in 0..300 {
                s.put(&key(i), &val(i + round)).unwrap();
            }
            t.maintenance(Maintenance::Flush).unwrap();
            assert_eq!(t.ks.sealed_memtable_count(), 0);
        }
        assert!(t.ks.table_count() >= 1, "flush wrote no table");
        let used = t.stats().used_bytes.unwrap();
        assert!(used > 0, "tables on disk, {used} bytes counted");
        t.maintenance(Maintenance::WaitForCompaction).unwrap();
        assert_eq!(t.db.active_compactions(), 0);
        s.put(&key(1000), &val(1000)).unwrap();
        t.maintenance(Maintenance::Compact).unwrap();
        // A major compaction leaves one sorted run: 300 small keys fit one table.
        assert_eq!(t.ks.table_count(), 1);
        t.maintenance(Maintenance::CompactLevel(0)).unwrap();
        for i in 0..300 {
            assert_eq!(get(&mut *s, &key(i)), Some(val(i + 2)));
        }
        assert_eq!(get(&mut *s, &key(1000)), Some(val(1000)));
        let mut keys = Vec::new();
        s.scan(&key(298), 5, false, &mut |k, _| keys.push(k.to_vec()))
            .unwrap();
        assert_eq!(keys, [key(298), key(299), key(1000)]);
    }

    #[test]
    fn options_reach_fjall_and_the_provenance_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let o = FjallOptions {
            cache_size: 48 << 20,
            worker_threads: 1,
            block_size: 8192,
            ..FjallOptions::default()
        };
        let t = open(dir.path(), o.clone());
        assert_eq!(t.db.cache_capacity(), 48 << 20);
        let opts = t.options();
        let has = |k: &str, v: &str| opts.contains(&(k.to_string(), v.to_string()));
        assert!(has("cache_size", &(48u64 << 20).to_string()), "{opts:?}");
        assert!(has("cache_capacity_in_force", &(48u64 << 20).to_string()));
        assert!(has("worker_threads_in_force", "1"));
        assert!(has("block_size", "8192"));
        assert_eq!(t.ks.config.data_block_size_policy[..], [8192]);
        drop(t);
        // The stored keyspace options win on reopen, so different ones are refused.
        for bad in [
            FjallOptions {
                block_size: 4096,
                ..o.clone()
            },
            FjallOptions {
                compression: FjallCompression::None,
                ..o.clone()
            },
            FjallOptions {
                l0_threshold: 8,
                ..o.clone()
            },
            FjallOptions {
                table_target_size: 32 << 20,
                ..o.clone()
            },
        ] {
            let e = FjallTarget::open(dir.path(), bad).err().expect("refused");
            assert!(e.to_string().contains("created with"), "{e}");
        }
        // A different cache is a run-time choice, not a stored one.
        let t = open(dir.path(), FjallOptions { cache_size: 0, ..o });
        assert_eq!(t.db.cache_capacity(), 0);
    }

    #[test]
    fn version_matches_the_pinned_crate() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("Cargo.lock at the workspace root");
        let entry = lock
            .split("[[package]]")
            .find(|p| p.contains("name = \"fjall\"") && p.contains("version = \"3."))
            .expect("fjall 3 in Cargo.lock");
        assert!(
            entry.contains(&format!("version = \"{}\"", fjall_version())),
            "fjall_version() {} does not match {entry}",
            fjall_version()
        );
    }
}
