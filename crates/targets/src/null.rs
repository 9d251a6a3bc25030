//! A target that does nothing, so the harness can measure its own per-op overhead
//! (timing, histograms, key generation) with no engine in the way.

use crate::engine::{Capabilities, VolatileKind};
use plumb_core::{Maintenance, Result, Session, Target, Visit};

/// Does nothing and stores nothing; reads report "found" with an empty value, and are
/// not verified because [`Target::stores_data`] is false.
#[derive(Debug, Default)]
pub struct NullTarget;

struct NullSession;

/// The null engine's description of itself (it takes no options).
pub(crate) static NULL_KIND: VolatileKind = VolatileKind {
    name: "null",
    capabilities: Capabilities {
        keeps_files: false,
        stores_data: false,
        can_sync: false,
        ..Capabilities::FILE_ENGINE
    },
    version: null_version,
    open: || Ok(Box::new(NullTarget)),
};

fn null_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

impl Target for NullTarget {
    fn name(&self) -> &'static str {
        "null"
    }
    fn version(&self) -> String {
        null_version()
    }
    fn stores_data(&self) -> bool {
        false
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(NullSession))
    }
    fn maintenance(&self, _what: Maintenance) -> Result<()> {
        Ok(())
    }
}

impl Session for NullSession {
    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        std::hint::black_box((key, value));
        Ok(())
    }
    #[inline]
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        std::hint::black_box(key);
        visit(&[]);
        Ok(true)
    }
    fn scan(
        &mut self,
        start: &[u8],
        _nexts: usize,
        _reverse: bool,
        _visit: Visit,
    ) -> Result<usize> {
        std::hint::black_box(start);
        Ok(0)
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        std::hint::black_box(key);
        Ok(())
    }
}
