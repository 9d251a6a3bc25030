//! An ordered in-memory map: a real engine with real data, cheap enough for fast tests
//! of everything that needs values back (verification, ranges, deletes).

use crate::engine::{Capabilities, VolatileKind};
use plumb_core::{Maintenance, Result, Session, Target, TargetError, Visit};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::RwLock;

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// A `BTreeMap` behind one `RwLock`; the lock is the engine's cost, not the harness's.
#[derive(Debug, Default)]
pub struct MemoryTarget {
    map: RwLock<Map>,
    /// The injected cost per op (see [`COST_ENV`]), 0 when none.
    cost: Cost,
    /// One injected stall, for tests of what open-loop steps report.
    stall: Option<Stall>,
}

/// One stall of known length: the first op to begin after `at` waits `len`, as an
/// engine's write stall would hold one op and, open-loop, every op queued behind it.
#[derive(Debug)]
struct Stall {
    at: std::time::Instant,
    len: std::time::Duration,
    taken: std::sync::atomic::AtomicBool,
}

impl Stall {
    #[inline]
    fn maybe(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        if !self.taken.load(Relaxed)
            && std::time::Instant::now() >= self.at
            && !self.taken.swap(true, Relaxed)
        {
            std::thread::sleep(self.len);
        }
    }
}

/// The environment variable that adds a fixed CPU cost to every memory-engine op, in
/// nanoseconds: a regression of known size, so tests and bench/error-rates.sh can ask
/// whether `plumb compare`, `history` and `check` find it. It is a build-like change
/// (code that does more work), not an option: it shows in the engine's version
/// (`0.1.0+cost=20ns`), as a different build would, and in no option.
pub const COST_ENV: &str = "PLUMB_TEST_MEMORY_OP_NS";

/// The same injected cost as an exact number of rounds of work per op rather than
/// nanoseconds: the rounds do not depend on a calibration against the clock, so the
/// instructions an op executes are the same in every run and under callgrind (whose
/// clock runs ~50× slow), which is what `plumb icount`'s tests and bench need. Shown in
/// the version as `+rounds=N`.
pub const ROUNDS_ENV: &str = "PLUMB_TEST_MEMORY_OP_ROUNDS";

/// A fixed amount of CPU work per op: `iters` rounds of a dependent multiply-add chain,
/// calibrated once per process so that it takes about `ns` nanoseconds. Work rather
/// than a clock wait, so the cost is user CPU per op, as a code regression's would be.
#[derive(Debug, Default, Clone, Copy)]
struct Cost {
    ns: u64,
    iters: u64,
    /// `iters` was given exactly ([`ROUNDS_ENV`]), not calibrated from `ns`.
    exact: bool,
}

impl Cost {
    fn from_env() -> Result<Cost> {
        match (std::env::var(COST_ENV), std::env::var(ROUNDS_ENV)) {
            (Ok(_), Ok(_)) => Err(TargetError::Option {
                option: ROUNDS_ENV.into(),
                message: format!("set {COST_ENV} or {ROUNDS_ENV}, not both"),
            }),
            (Ok(text), _) => Cost::parse(&text),
            (_, Ok(text)) => Cost::rounds(&text),
            _ => Ok(Cost::default()),
        }
    }

    fn rounds(text: &str) -> Result<Cost> {
        let iters: u64 = text.trim().parse().map_err(|_| TargetError::Option {
            option: ROUNDS_ENV.into(),
            message: format!("{text:?} is not a whole number of rounds; unset it or give e.g. 50"),
        })?;
        Ok(Cost {
            ns: 0,
            iters,
            exact: true,
        })
    }

    fn parse(text: &str) -> Result<Cost> {
        let ns: u64 = text.trim().parse().map_err(|_| TargetError::Option {
            option: COST_ENV.into(),
            message: format!(
                "{text:?} is not a whole number of nanoseconds; unset it or give e.g. 20"
            ),
        })?;
        let iters = (ns as f64 * iters_per_ns()).round() as u64;
        Ok(Cost {
            ns,
            iters,
            exact: false,
        })
    }

    #[inline]
    fn pay(self) {
        if self.iters > 0 {
            spin(self.iters);
        }
    }
}

#[inline(never)]
fn spin(iters: u64) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..iters {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    x
}

/// Rounds of [`spin`] per nanosecond on this CPU: the fastest of five timed batches
/// (the least disturbed), measured once per process.
fn iters_per_ns() -> f64 {
    static RATE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *RATE.get_or_init(|| {
        const BATCH: u64 = 1 << 21;
        let best = (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                std::hint::black_box(spin(BATCH));
                t.elapsed().as_nanos().max(1) as f64
            })
            .fold(f64::INFINITY, f64::min);
        BATCH as f64 / best
    })
}

fn version_with(cost: Cost) -> String {
    let v = env!("CARGO_PKG_VERSION");
    match cost {
        Cost {
            exact: true,
            iters: 1..,
            ..
        } => format!("{v}+rounds={}", cost.iters),
        Cost { ns: 1.., .. } => format!("{v}+cost={}ns", cost.ns),
        _ => v.to_string(),
    }
}

impl MemoryTarget {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty map whose first op to begin `after` from now stalls for `len`: a stall
    /// of known size and place, so tests can show what response and service time make
    /// of it.
    pub fn with_stall(after: std::time::Duration, len: std::time::Duration) -> Self {
        MemoryTarget {
            stall: Some(Stall {
                at: std::time::Instant::now() + after,
                len,
                taken: Default::default(),
            }),
            ..Self::default()
        }
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
pub(crate) static MEMORY_KIND: VolatileKind = VolatileKind {
    name: "memory",
    capabilities: Capabilities {
        keeps_files: false,
        can_sync: false,
        ..Capabilities::FILE_ENGINE
    },
    version: || Cost::from_env().map_or_else(|_| version_with(Cost::default()), version_with),
    open: || {
        Ok(Box::new(MemoryTarget {
            map: RwLock::default(),
            cost: Cost::from_env()?,
            stall: None,
        }))
    },
};

struct MemorySession<'a> {
    map: &'a RwLock<Map>,
    cost: Cost,
    stall: Option<&'a Stall>,
}

impl Target for MemoryTarget {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn version(&self) -> String {
        version_with(self.cost)
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(MemorySession {
            map: &self.map,
            cost: self.cost,
            stall: self.stall.as_ref(),
        }))
    }
    fn maintenance(&self, _what: Maintenance) -> Result<()> {
        Ok(())
    }
}

impl MemorySession<'_> {
    /// What every op pays before its work: the injected cost and stall, if any.
    #[inline]
    fn pay(&self) {
        self.cost.pay();
        if let Some(s) = self.stall {
            s.maybe();
        }
    }
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Map> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Map> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Session for MemorySession<'_> {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.pay();
        self.write().insert(key.to_vec(), value.to_vec());
        Ok(())
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        self.pay();
        match self.read().get(key) {
            Some(v) => {
                visit(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        self.pay();
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
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.pay();
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

    #[test]
    fn injected_cost_is_calibrated_work_named_in_the_version() {
        let c = Cost::parse("2000").unwrap();
        assert_eq!(c.ns, 2000);
        // Calibrated, not fixed: a 2 µs cost is many rounds, and twice the ns is
        // twice the rounds (within rounding).
        assert!(c.iters > 100, "{c:?}");
        let d = Cost::parse(" 4000 ").unwrap();
        assert!(
            (d.iters as f64 / c.iters as f64 - 2.0).abs() < 0.01,
            "{c:?} {d:?}"
        );
        assert_eq!(
            version_with(c),
            format!("{}+cost=2000ns", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(version_with(Cost::default()), env!("CARGO_PKG_VERSION"));
        let e = Cost::parse("20ns").unwrap_err().to_string();
        assert!(e.contains(COST_ENV) && e.contains("20ns"), "{e}");
    }

    #[test]
    fn exact_rounds_are_taken_as_given_and_named_in_the_version() {
        let c = Cost::rounds("50").unwrap();
        assert_eq!((c.iters, c.exact), (50, true));
        assert_eq!(
            version_with(c),
            format!("{}+rounds=50", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(
            version_with(Cost::rounds("0").unwrap()),
            env!("CARGO_PKG_VERSION")
        );
        let e = Cost::rounds("5x").unwrap_err().to_string();
        assert!(e.contains(ROUNDS_ENV) && e.contains("5x"), "{e}");
    }
}
