//! What an engine says about itself, in one place: each engine's options type implements
//! [`EngineKind`], so [`crate::EngineSpec`] only delegates, and adding an engine adds
//! its own impl instead of an arm to every method.

use crate::options::EngineCommon;
use plumb_core::{Target, TargetError};
use std::fmt;
use std::path::Path;

/// What an acknowledged write survives, as the engine is configured. Why: the seeds'
/// first complaint about published engine comparisons is an engine that syncs beside one
/// that does not; compare warns when the engines side by side differ in this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Durability {
    /// Nothing survives the process: the engine keeps no files.
    Volatile,
    /// A crash of the process can lose acknowledged writes still in the engine's memory
    /// (RocksDB without its WAL; SplinterDB, which never fsyncs).
    Unlogged,
    /// Each write reaches the OS before it is acknowledged: a process crash loses none,
    /// a power cut can lose the last ones.
    OsBuffered,
    /// Each write is on the device before it is acknowledged.
    Synced,
}

impl Durability {
    /// The stored name (the `durability` option of a run).
    pub fn name(self) -> &'static str {
        match self {
            Durability::Volatile => "volatile",
            Durability::Unlogged => "unlogged",
            Durability::OsBuffered => "os-buffered",
            Durability::Synced => "synced",
        }
    }

    /// A file engine's durability: each write synced, or left to the OS.
    pub fn of_sync(sync: bool) -> Durability {
        if sync {
            Durability::Synced
        } else {
            Durability::OsBuffered
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an engine can do, as data, so a plan that asks for more is refused before it
/// runs, with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Keeps its data in a directory (disk counters, size, `use_existing_db`).
    pub keeps_files: bool,
    /// Reads return what was written, so they are verified.
    pub stores_data: bool,
    /// Can flush every write to the device before acknowledging it (`sync`).
    pub can_sync: bool,
    /// Has a write-ahead log that a load may skip (db_bench's fillseq without WAL).
    pub wal: bool,
    /// Reverse range scans (revrange).
    pub reverse_scan: bool,
    /// A batched multi-key read of its own (otherwise multireadrandom is one get per key).
    pub native_multi_get: bool,
    /// Deletes (deleterandom).
    pub delete: bool,
    /// O_DIRECT reads, so the OS page cache does not hide IO.
    pub direct_io: bool,
    /// A cache of its own sized by `cache_size`.
    pub cache: bool,
    /// Reports its flush and compaction bytes (w_amp_eng, stall%).
    pub compaction_stats: bool,
    /// An LSM tree: memtables flushed and levels compacted by background threads, so
    /// the tree a step starts from depends on when that work finished, and `plumb kv
    /// --settle` (which `plumb icount` turns on) flushes and waits before each read step.
    pub lsm: bool,
    /// The largest key plus value it can store, when it has a limit.
    pub max_entry_bytes: Option<u64>,
}

impl Capabilities {
    /// An engine that keeps files and does everything but the optional extras: the
    /// base each engine's declaration starts from.
    pub const FILE_ENGINE: Capabilities = Capabilities {
        keeps_files: true,
        stores_data: true,
        can_sync: true,
        wal: false,
        reverse_scan: true,
        native_multi_get: false,
        delete: true,
        direct_io: false,
        cache: false,
        compaction_stats: false,
        lsm: false,
        max_entry_bytes: None,
    };
}

/// One engine's description of itself, implemented by its options type (or a unit type
/// for engines without options).
pub trait EngineKind {
    /// The engine as users name it (`--engine`, suite files, the store).
    fn name(&self) -> &'static str;
    /// What it can do.
    fn capabilities(&self) -> Capabilities;
    /// What an acknowledged write survives with these options.
    fn durability(&self) -> Durability;
    /// Takes the engine-neutral options (`--sync`, `--cache-size`) in its own terms, and
    /// refuses one it has no such thing for, naming it.
    fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError>;
    /// Checks the options before anything is written; the error names the option.
    fn validate(&self) -> Result<(), TargetError> {
        Ok(())
    }
    /// Disk bytes at a run's peak per byte of live user data (keys and values), so a
    /// plan that would fill the disk is refused before it starts: room for space
    /// amplification, the log and a compaction's transient copy.
    fn peak_space_factor(&self) -> f64 {
        DEFAULT_PEAK_SPACE_FACTOR
    }
    /// A file whose presence says a data dir holds this engine's database.
    fn marker_file(&self) -> Option<&'static str> {
        None
    }
    /// Whether this binary was built with the engine (its cargo feature).
    fn built_in(&self) -> bool;
    /// How to get a plumb that has it, for the error when it is missing.
    fn how_to_build(&self) -> String {
        format!("build with --features {}", self.name())
    }
    /// The engine version this binary runs (asked only when built in).
    fn version(&self) -> String;
    /// Opens the engine (called only when built in and valid); `dir` is its data
    /// directory when it keeps files.
    fn open(&self, dir: Option<&Path>) -> Result<Box<dyn Target>, TargetError>;
}

/// [`EngineKind::peak_space_factor`] of an engine that says nothing else: the live data,
/// and as much again for amplification and temporaries (a leveled LSM's ~1.1 space
/// amplification, a B-tree's free pages, a log).
pub const DEFAULT_PEAK_SPACE_FACTOR: f64 = 2.0;

/// The [`EngineKind::apply_common`] of the engines whose options keep a `sync` and a
/// `cache_size` of their own (six of them): `--sync` as given, `--cache-size` or
/// plumb's 1 GiB. Written once here, as `feature_gated!` is, instead of in each.
macro_rules! takes_sync_and_cache {
    () => {
        fn apply_common(
            &mut self,
            c: &crate::options::EngineCommon,
        ) -> Result<(), plumb_core::TargetError> {
            self.sync = c.sync;
            self.cache_size = c.cache_size.unwrap_or(crate::options::DEFAULT_CACHE_SIZE);
            Ok(())
        }
    };
}
pub(crate) use takes_sync_and_cache;

/// The data dir an engine that keeps files needs.
pub(crate) fn need_dir<'a>(
    engine: &'static str,
    dir: Option<&'a Path>,
) -> Result<&'a Path, TargetError> {
    dir.ok_or_else(|| TargetError::engine(engine, "needs a data dir"))
}

/// The counters of a B-tree engine that counts its own pages in use (LMDB, SQLite):
/// the bytes those pages hold, so the data dir's size shows how much of it is free.
#[cfg(any(feature = "lmdb", feature = "sqlite"))]
pub(crate) fn used_pages(pages: Result<(u64, u32), TargetError>) -> plumb_core::EngineStats {
    plumb_core::EngineStats {
        used_bytes: pages.ok().map(|(n, size)| n * u64::from(size)),
        ..plumb_core::EngineStats::default()
    }
}

/// Passes on what a step of a readseq pass found (`next`), ending the pass once it is
/// spent (run out or failed): dropping it releases its snapshot (a read transaction,
/// pinned pages), and the next call starts a new pass. The LMDB, redb and fjall sessions
/// keep their pass in an `Option` between calls.
#[cfg(any(feature = "lmdb", feature = "redb", feature = "fjall"))]
pub(crate) fn end_spent_pass<P>(
    pass: &mut Option<P>,
    next: Result<bool, TargetError>,
) -> Result<bool, TargetError> {
    if !matches!(next, Ok(true)) {
        *pass = None;
    }
    next
}

/// Creates an engine's data dir (and its parents) if missing, the error naming it.
#[allow(dead_code)]
pub(crate) fn make_dir(engine: &'static str, dir: &Path) -> Result<(), TargetError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| TargetError::engine(engine, format!("{}: {e}", dir.display())))
}

/// The error for an engine whose feature this binary lacks.
#[allow(dead_code)]
pub(crate) fn not_built(engine: &'static str) -> TargetError {
    TargetError::engine(engine, "not built into this plumb")
}

/// An option error naming the option.
pub(crate) fn opt_err(option: &str, message: impl Into<String>) -> TargetError {
    TargetError::Option {
        option: option.into(),
        message: message.into(),
    }
}

/// The description of an engine that keeps nothing and takes no options (memory, null):
/// everything it says about itself is data, so the two are one type, each a constant.
pub(crate) struct VolatileKind {
    /// The engine as users name it.
    pub name: &'static str,
    /// What it can do.
    pub capabilities: Capabilities,
    /// Its version, asked when a run records it.
    pub version: fn() -> String,
    /// Opens it (it needs no data dir).
    pub open: fn() -> Result<Box<dyn Target>, TargetError>,
}

impl EngineKind for VolatileKind {
    fn name(&self) -> &'static str {
        self.name
    }
    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }
    fn durability(&self) -> Durability {
        Durability::Volatile
    }
    fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError> {
        refuse_common(self.name, c)
    }
    fn built_in(&self) -> bool {
        true
    }
    fn version(&self) -> String {
        (self.version)()
    }
    fn open(&self, _dir: Option<&Path>) -> Result<Box<dyn Target>, TargetError> {
        (self.open)()
    }
}

/// What engines that keep nothing say to `--sync` or `--cache-size`.
pub(crate) fn refuse_common(engine: &str, c: &EngineCommon) -> Result<(), TargetError> {
    if c.sync {
        return Err(opt_err(
            "sync",
            format!("the {engine} engine keeps nothing to sync"),
        ));
    }
    if c.cache_size.is_some() {
        return Err(opt_err(
            "cache_size",
            format!("the {engine} engine has no cache"),
        ));
    }
    Ok(())
}

/// The three [`EngineKind`] methods that follow the engine's cargo feature: whether it is
/// built in, its version (`$version`, evaluated only when built in), and opening it with
/// `$target::open(dir, options)`. Written once here instead of in every engine.
macro_rules! feature_gated {
    ($feature:literal, $version:expr, $target:path) => {
        fn built_in(&self) -> bool {
            cfg!(feature = $feature)
        }
        fn version(&self) -> String {
            #[cfg(feature = $feature)]
            return $version;
            #[cfg(not(feature = $feature))]
            return "not built in".to_string();
        }
        fn open(
            &self,
            dir: Option<&std::path::Path>,
        ) -> Result<Box<dyn plumb_core::Target>, plumb_core::TargetError> {
            let dir = crate::engine::need_dir(self.name(), dir)?;
            #[cfg(feature = $feature)]
            return Ok(Box::new(<$target>::open(dir, self.clone())?));
            #[cfg(not(feature = $feature))]
            {
                let _ = dir;
                Err(crate::engine::not_built(self.name()))
            }
        }
    };
}
pub(crate) use feature_gated;

/// An engine's place in the registry ([`crate::spec`]): what its one registry line
/// needs of its options type, so the enum, the name list, the option reference and the
/// `plumb kv` flags are all made from that line and the engine's own folder. Why: adding
/// an engine used to mean an arm in six places; now it is one line.
pub trait Registered:
    EngineKind + Default + Clone + serde::Serialize + serde::de::DeserializeOwned
{
    /// `--engine NAME`, `engine = "NAME"` in a suite, the stored tag (the registry's
    /// variant name, lowercased).
    const NAME: &'static str;
    /// The engine as a heading: docs/options.md and `plumb kv --help`.
    const TITLE: &'static str;
    /// What its section of the option reference says beyond where the options go.
    const NOTE: &'static str = "";
    /// The heading of its flags in `plumb kv --help`.
    const HEADING: &'static str = Self::TITLE;
    /// The flags `plumb kv` shows for it: usually the options type itself.
    type Flags: clap::Args + clap::FromArgMatches + Clone + std::fmt::Debug + Into<Self>;
    /// The options as `plumb kv`'s flags give them: `own` (this engine's flags) and
    /// `all` (every engine's, for an engine that takes another's, as Speedb RocksDB's).
    fn from_flags(own: &Self::Flags, all: &crate::spec::EngineFlags) -> Self {
        let _ = all;
        own.clone().into()
    }
    /// Its section of the option reference.
    fn section() -> crate::spec::OptionSection {
        crate::spec::OptionSection {
            title: Self::TITLE,
            intro: format!(
                "`plumb kv` flags with `--engine {n}`, and the `[target.options]` table of \
                 a suite target with `engine = \"{n}\"` (a flag spelled `--{n}-NAME` has the \
                 key NAME).{note}",
                n = Self::NAME,
                note = if Self::NOTE.is_empty() {
                    String::new()
                } else {
                    format!(" {}", Self::NOTE)
                },
            ),
            rows: crate::options::reference::<Self::Flags>(),
        }
    }
}

/// Flags for an engine that has none of its own (Speedb takes RocksDB's).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct NoFlags {}
