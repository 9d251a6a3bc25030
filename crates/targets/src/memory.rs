//! An ordered in-memory map: a real engine with real data, cheap enough for fast tests
//! of everything that needs values back (verification, ranges, deletes).

use crate::engine::{refuse_common, Capabilities, Durability, EngineKind};
use crate::options::EngineCommon;
use plumb_core::{Maintenance, Session, Target, TargetError};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::RwLock;

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// A `BTreeMap` behind one `RwLock`; the lock is the engine's cost, not the harness's.
#[derive(Debug, Default)]
pub struct MemoryTarget {
    map: RwLock<Map>,
}

impl MemoryTarget {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Overwrites a stored value in place without a checksum, so tests can prove that
    /// reads detect corruption. Returns whether the key existed.
    pub fn corrupt(&self, key: &[u8]) -> bool {
        let mut m = self.map.write().unwrap_or_else(|e| e.into_inner());
        match m.get_mut(key) {
            Some(v) => {
                if let Some(b) = v.last_mut() {
                    *b ^= 0xff;
                }
                true
            }
            None => false,
        }
    }

    /// Swaps the values of two keys, as an engine returning another key's value would;
    /// false when either is absent. For tests.
    pub fn swap(&self, a: &[u8], b: &[u8]) -> bool {
        let mut m = self.map.write().unwrap_or_else(|e| e.into_inner());
        let (Some(va), Some(vb)) = (m.get(a).cloned(), m.get(b).cloned()) else {
            return false;
        };
        m.insert(a.to_vec(), vb);
        m.insert(b.to_vec(), va);
        true
    }

    /// Keys stored, for tests.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The memory engine's description of itself (it takes no options).
pub(crate) struct MemoryKind;

impl EngineKind for MemoryKind {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            keeps_files: false,
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
        Ok(Box::new(MemoryTarget::new()))
    }
}

struct MemorySession<'a> {
    map: &'a RwLock<Map>,
}

impl Target for MemoryTarget {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>, TargetError> {
        Ok(Box::new(MemorySession { map: &self.map }))
    }
    fn maintenance(&self, _what: Maintenance) -> Result<(), TargetError> {
        Ok(())
    }
}

impl MemorySession<'_> {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Map> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Map> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Session for MemorySession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TargetError> {
        self.write().insert(key.to_vec(), value.to_vec());
        Ok(())
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool, TargetError> {
        match self.read().get(key) {
            Some(v) => {
                visit(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn scan(
        &mut self,
        start: &[u8],
        nexts: usize,
        reverse: bool,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, TargetError> {
        let m = self.read();
        let mut n = 0;
        // Seek lands on one entry, then `nexts` more steps: nexts + 1 entries at most.
        if reverse {
            for (k, v) in m
                .range::<[u8], _>((Bound::Unbounded, Bound::Included(start)))
                .rev()
                .take(nexts + 1)
            {
                visit(k, v);
                n += 1;
            }
        } else {
            for (k, v) in m
                .range::<[u8], _>((Bound::Included(start), Bound::Unbounded))
                .take(nexts + 1)
            {
                visit(k, v);
                n += 1;
            }
        }
        Ok(n)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), TargetError> {
        self.write().remove(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_forward_and_reverse_visit_seek_plus_nexts() {
        let t = MemoryTarget::new();
        let mut s = t.session().unwrap();
        for i in 0u8..10 {
            s.put(&[i], &[i]).unwrap();
        }
        let mut got = Vec::new();
        let n = s.scan(&[3], 2, false, &mut |k, _| got.push(k[0])).unwrap();
        assert_eq!((n, got.clone()), (3, vec![3, 4, 5]));
        got.clear();
        s.scan(&[3], 2, true, &mut |k, _| got.push(k[0])).unwrap();
        assert_eq!(got, vec![3, 2, 1]);
        s.delete(&[3]).unwrap();
        assert!(!s.get(&[3], &mut |_| {}).unwrap());
        assert!(t.corrupt(&[4]) && !t.corrupt(&[3]));
    }
}
