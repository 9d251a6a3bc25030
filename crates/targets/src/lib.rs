//! The engines plumb measures. Each sits behind the [`plumb_core::Target`] trait; the
//! `null` and `memory` targets always compile so the harness can measure its own cost
//! and tests stay fast; RocksDB sits behind the `rocksdb` feature (on by default).

pub mod memory;
pub mod null;
pub mod options;
#[cfg(feature = "rocksdb")]
pub mod rocks;
pub mod rocks_options;
#[cfg(feature = "rocksdb")]
mod rocks_reader;
pub mod spec;

pub use memory::MemoryTarget;
pub use null::NullTarget;
pub use plumb_core::TargetError;
#[cfg(feature = "rocksdb")]
pub use rocks::RocksTarget;
pub use rocks_options::RocksOptions;
pub use spec::{Capabilities, EngineSpec, ENGINE_NAMES};

/// Engine names this build can open (the others are named by [`ENGINE_NAMES`] but need
/// their cargo feature).
pub fn engines() -> Vec<&'static str> {
    ENGINE_NAMES
        .iter()
        .copied()
        .filter(|n| EngineSpec::default_for(n).is_ok_and(|s| s.built_in()))
        .collect()
}
