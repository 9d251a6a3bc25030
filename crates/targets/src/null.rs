//! A target that does nothing, so the harness can measure its own per-op overhead
//! (timing, histograms, key generation) with no engine in the way.

use crate::engine::{refuse_common, Capabilities, Durability, EngineKind};
use crate::options::EngineCommon;
use plumb_core::{Maintenance, Session, Target, TargetError};
use std::path::Path;

/// Does nothing and stores nothing; reads report "found" with an empty value, and are
/// not verified because [`Target::stores_data`] is false.
#[derive(Debug, Default)]
pub struct NullTarget;

struct NullSession;

/// The null engine's description of itself (it takes no options).
pub(crate) struct NullKind;

impl EngineKind for NullKind {
    fn name(&self) -> &'static str {
        "null"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            keeps_files: false,
            stores_data: false,
            can_sync: false,
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        Durability::Volatile
    }
    fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError> {
        refuse_common(self.name(), c)
    }
    fn built_in(&self) -> bool {
        true
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }
    fn open(&self, _dir: Option<&Path>) -> Result<Box<dyn Target>, TargetError> {
        Ok(Box::new(NullTarget))
    }
}

impl Target for NullTarget {
    fn name(&self) -> &'static str {
        "null"
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }
    fn stores_data(&self) -> bool {
        false
    }
    fn session(&self) -> Result<Box<dyn Session + '_>, TargetError> {
        Ok(Box::new(NullSession))
    }
    fn maintenance(&self, _what: Maintenance) -> Result<(), TargetError> {
        Ok(())
    }
}

impl Session for NullSession {
    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TargetError> {
        std::hint::black_box((key, value));
        Ok(())
    }
    #[inline]
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool, TargetError> {
        std::hint::black_box(key);
        visit(&[]);
        Ok(true)
    }
    fn scan(
        &mut self,
        start: &[u8],
        _nexts: usize,
        _reverse: bool,
        _visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, TargetError> {
        std::hint::black_box(start);
        Ok(0)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), TargetError> {
        std::hint::black_box(key);
        Ok(())
    }
}
