//! The engines plumb measures. Each sits behind the [`plumb_core::Target`] trait; the
//! `null` and `memory` targets always compile so the harness can measure its own cost
//! and tests stay fast; RocksDB, LMDB, SQLite, LevelDB, WiredTiger, redb and fjall sit
//! behind features of their names (all on by default), SplinterDB behind `splinterdb` (off: it
//! needs scripts/build-splinterdb.sh first), Speedb behind `speedb` (in place of
//! `rocksdb`: scripts/build-speedb.sh). Their option structs always compile, so a plan
//! can name an engine a build lacks and be told so. `spec.rs` is the registry: one line
//! there per engine.

#[cfg(all(feature = "rocksdb", feature = "speedb"))]
compile_error!(
    "the rocksdb and speedb features cannot be built together: Speedb exports RocksDB's \
     symbols. Build Speedb with scripts/build-speedb.sh (no default features)."
);
// Speedb keeps RocksDB's C API: crate::rocks serves both under one name.
#[cfg(all(feature = "speedb", not(feature = "rocksdb")))]
extern crate libspeedb_sys as librocksdb_sys;

pub mod builds;
pub mod engine;
#[cfg(any(
    feature = "rocksdb",
    feature = "speedb",
    feature = "leveldb",
    feature = "splinterdb",
    feature = "wiredtiger"
))]
mod ffi;
pub mod fjall;
#[cfg(feature = "leveldb")]
pub mod leveldb;
pub mod leveldb_options;
#[cfg(feature = "lmdb")]
pub mod lmdb;
pub mod lmdb_options;
pub mod memory;
pub mod null;
pub mod options;
pub mod redb;
#[cfg(any(feature = "rocksdb", feature = "speedb"))]
pub mod rocks;
pub mod rocks_account;
pub mod rocks_options;
#[cfg(any(feature = "rocksdb", feature = "speedb"))]
mod rocks_reader;
pub mod spec;
pub mod speedb_options;
#[cfg(feature = "splinterdb")]
pub mod splinterdb;
pub mod splinterdb_options;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod sqlite_options;
#[cfg(feature = "wiredtiger")]
pub mod wiredtiger;
pub mod wiredtiger_options;

pub use engine::EngineKind;
pub use engine::Registered;
pub use fjall::FjallOptions;
pub use leveldb_options::LeveldbOptions;
pub use lmdb_options::LmdbOptions;
pub use memory::MemoryTarget;
pub use null::NullTarget;
pub use options::EngineCommon;
pub use plumb_core::TargetError;
pub use redb::RedbOptions;
#[cfg(any(feature = "rocksdb", feature = "speedb"))]
pub use rocks::RocksTarget;
pub use rocks_options::RocksOptions;
pub use spec::{Capabilities, Durability, EngineFlags, EngineSpec, ENGINE_NAMES};
pub use speedb_options::SpeedbOptions;
pub use splinterdb_options::SplinterdbOptions;
pub use sqlite_options::SqliteOptions;
pub use wiredtiger_options::WiredtigerOptions;

/// Each engine built into this plumb that keeps files, with the release it runs
/// (`rocksdb 11.8.1`), so `plumb --version` says what a build links.
pub fn built_in_versions() -> Vec<String> {
    engines()
        .into_iter()
        .filter_map(|n| EngineSpec::default_for(n).ok())
        .filter(|s| s.capabilities().keeps_files)
        .map(|s| format!("{} {}", s.name(), s.version()))
        .collect()
}

/// Engine names this build can open (the others are named by [`ENGINE_NAMES`] but need
/// their cargo feature).
pub fn engines() -> Vec<&'static str> {
    ENGINE_NAMES
        .iter()
        .copied()
        .filter(|n| EngineSpec::default_for(n).is_ok_and(|s| s.built_in()))
        .collect()
}
