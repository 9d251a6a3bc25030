//! Key-value op mixes: a user's own workload written as a TOML file, which plumb's `mix`
//! step runs on every embedded engine through its one timed loop. This module is the
//! pure half: it reads and checks the file, and hands each client thread a
//! [`MixSampler`] that decides, without allocating, which operation comes next, its key,
//! its value size and its scan length. The engine side (what a `seek` or a `merge` is
//! on LMDB or SQLite) belongs to the driver.
//!
//! # The file
//!
//! ```toml
//! name = "my-mix"                 # optional: the file's stem otherwise
//! description = "what it models"  # optional
//!
//! [keys]                          # optional: uniform otherwise
//! distribution = "scrambled-zipfian"
//! theta = 0.99
//!
//! [[op]]
//! kind = "get"
//! weight = 50
//!
//! [[op]]
//! kind = "put"
//! weight = 45
//! value_size = { dist = "uniform", min = 100, max = 1000 }
//!
//! [[op]]
//! kind = "seek"
//! weight = 5
//! scan_length = { dist = "uniform", min = 1, max = 100 }
//! ```
//!
//! | where | key | meaning |
//! |---|---|---|
//! | top | `name`, `description` | strings |
//! | top | `one_draw` | `true`: db_bench mixgraph's one draw per op (a uniform number below num chooses the op modulo the weights' sum, is the first key's draw under `uniform` and `power-keyrange`, and its quantile is the Pareto sizes' draw), so a key always comes with the same op and sizes; default `false`, each drawn apart |
//! | `[keys]` | `distribution` | `uniform`, `zipfian`, `scrambled-zipfian`, `latest`, `hotspot`, `sequential`, `power-keyrange` |
//! | `[keys]` | `theta` | `zipfian` (> 0, plumb's `--distribution zipfian:θ`), `scrambled-zipfian` and `latest` (0 < θ < 1, YCSB's); default 0.99 |
//! | `[keys]` | `hot_fraction`, `hot_ops` | `hotspot`: YCSB's `hotspotdatafraction` (0 < f ≤ 1, default 0.2) and `hotspotopnfraction` (0 ≤ f ≤ 1, default 0.8) |
//! | `[keys]` | `key_dist_a`, `key_dist_b`, `keyrange_dist_a`…`_d`, `keyrange_num` | `power-keyrange`: db_bench mixgraph's flags of those names |
//! | `[[op]]` | `kind` | `get`, `put`, `insert`, `delete`, `seek`, `multiget`, `merge`, `rmw` |
//! | `[[op]]` | `weight` | whole number ≥ 0; shares are weight / sum; not all 0 |
//! | `[[op]]` | `value_size` | `put`, `insert`, `merge`, `rmw` only; default: the run's `--value-size` |
//! | `[[op]]` | `scan_length` | `seek` only: entries read from the key on; default fixed 100 |
//! | `[[op]]` | `keys` | `multiget` only: keys per batch, 1…2^20, default 10 |
//! | size | `dist = "fixed"` | `size` |
//! | size | `dist = "uniform"` | `min`, `max` (inclusive) |
//! | size | `dist = "zipfian"` | `min`, `max`, `theta` (YCSB's length zipfian: `min` likeliest; θ default 0.99) |
//! | size | `dist = "pareto"` | `k`, `sigma`, `theta` (default 0), `min` (default 0), `max`, `wrap` (optional): db_bench mixgraph's generalized Pareto |
//!
//!
//! # Phases
//!
//! A mix may change over the step, as BenchBase's `<phase>`s do (each with a time, a
//! rate and weights): `[[phase]]` tables, in order from the measured window's start.
//!
//! ```toml
//! [[phase]]
//! secs = 60
//! weights = [95, 5, 0]     # one per [[op]], in file order
//! rate = 20000             # ops/s (open loop), or threads = 4 (closed loop)
//!
//! [[phase]]                # the last phase may go without secs: it lasts to the end
//! weights = [50, 45, 5]
//! rate = 5000
//! ```
//!
//! | where | key | meaning |
//! |---|---|---|
//! | `[[phase]]` | `secs` | seconds > 0; every phase but the last |
//! | `[[phase]]` | `weights` | whole numbers ≥ 0, one per op, not all 0; default: the ops' own weights |
//! | `[[phase]]` | `rate` | ops/s ≥ 0 offered in the phase: in every phase or none; the phases become the step's rate profile (`hold:RATE/SECS,…`) |
//! | `[[phase]]` | `threads` | threads running in the phase, 0…1024: in every phase or none; the phases become the step's threads profile |
//!
//! A timed last phase leaves its weights (and rate or threads) in force to the step's
//! end. Warm-up runs the first phase.
//!
//! Indexes in messages count from 1: `op[2]` is the file's second `[[op]]`.
//!
//! # Operations
//!
//! `get` reads a key; `put` overwrites a key drawn from the distribution; `insert` puts
//! a key never written before ([`MixSampler::insert_key`], above the loaded `0..num`);
//! `delete` removes a key; `seek` positions an iterator at a key and reads
//! `scan_length` entries from there (the first is the one sought; 0 means the seek
//! only); `multiget` reads `keys` keys, each drawn from the distribution, in one call;
//! `merge` writes a merge operand of `value_size` bytes; `rmw` reads a key and writes
//! it back, timed as one op (YCSB's read-modify-write).
//!
//! # Where the facts come from
//!
//! YCSB's generators are plumb's own rebuild in [`crate::ycsb`] (zipfian, scrambled
//! zipfian, skewed latest, hotspot, uniform), reused here unchanged; `zipfian` is
//! plumb's `--distribution zipfian` ([`KeyChooser`]), so a mix and a `readrandom` step
//! at the same θ agree. db_bench's mixgraph is read from RocksDB's
//! `tools/db_bench_tool.cc` (`MixGraph`, `GenerateTwoTermExpKeys`, `QueryDecider`,
//! `ParetoCdfInversion`, `PowerCdfInversion`, `SineRate`, and the flag definitions with
//! their defaults, at commit 1dfa7297933d of facebook/rocksdb) and
//! `util/random.h` (`Random64` is `std::mt19937_64`). Where a mix differs from
//! mixgraph, [`mixgraph`] says so.
//!
//! # No allocation per op
//!
//! Every [`MixSampler`] method takes `&mut self` and touches only state built by
//! [`Mix::sampler`] (cumulative weights, per-op size generators, the key generator and
//! its tables); a test counts this thread's allocations over thousands of ops of every
//! example file and finds none.

use crate::distribution::{Distribution, KeyChooser};
use crate::ycsb::{
    zeta_large, Hotspot, ScrambledZipfian, SkewedLatest, UniformLong, Zipfian, ZIPFIAN_CONSTANT,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use std::f64::consts::{PI, TAU};
use std::fmt;
use std::ops::Range;
use thiserror::Error;
use toml::Spanned;

/// The largest value size or scan length a mix may ask for (4 GiB − 1): past it an
/// engine fails for reasons that have nothing to do with the workload.
pub const MAX_SIZE: u64 = u32::MAX as u64;

/// The largest `multiget` batch: beyond it a batch is a bulk load, not a request.
pub const MAX_BATCH: u32 = 1 << 20;

/// The most key ranges `power-keyrange` builds a table for (the table holds one entry
/// per range, built once per sampler).
pub const MAX_KEYRANGES: u32 = 1 << 24;

/// A `seek`'s scan length when the file gives none.
pub const DEFAULT_SCAN_LENGTH: u64 = 100;

/// A `multiget`'s batch when the file gives none.
pub const DEFAULT_MULTIGET_KEYS: u32 = 10;

/// What one op of a mix does. An enum rather than a string so a driver's `match`
/// stops compiling when an operation is added, instead of silently skipping it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MixOpKind {
    /// Read one key.
    Get,
    /// Overwrite a key drawn from the key distribution.
    Put,
    /// Write a key never written before ([`MixSampler::insert_key`]), then tell the
    /// sampler ([`MixSampler::inserted`]): YCSB's insert, what `latest` follows.
    Insert,
    /// Delete one key.
    Delete,
    /// Seek an iterator to a key, then read `scan_length` entries.
    Seek,
    /// Read a batch of `keys` keys in one call.
    MultiGet,
    /// Write a merge operand (engines without a merge operator refuse the mix).
    Merge,
    /// Read a key, then write it, timed as one op.
    Rmw,
}

impl MixOpKind {
    /// Every kind, in the order the file format lists them.
    pub const ALL: [MixOpKind; 8] = [
        MixOpKind::Get,
        MixOpKind::Put,
        MixOpKind::Insert,
        MixOpKind::Delete,
        MixOpKind::Seek,
        MixOpKind::MultiGet,
        MixOpKind::Merge,
        MixOpKind::Rmw,
    ];

    /// The name a mix file writes, and per-op latencies are reported under.
    pub fn name(self) -> &'static str {
        match self {
            MixOpKind::Get => "get",
            MixOpKind::Put => "put",
            MixOpKind::Insert => "insert",
            MixOpKind::Delete => "delete",
            MixOpKind::Seek => "seek",
            MixOpKind::MultiGet => "multiget",
            MixOpKind::Merge => "merge",
            MixOpKind::Rmw => "rmw",
        }
    }

    /// The kind a mix file's name stands for.
    pub fn from_name(name: &str) -> Option<MixOpKind> {
        MixOpKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the op writes a value, and so has a `value_size`.
    pub fn writes(self) -> bool {
        matches!(
            self,
            MixOpKind::Put | MixOpKind::Insert | MixOpKind::Merge | MixOpKind::Rmw
        )
    }
}

impl fmt::Display for MixOpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How long a value or a scan is, drawn per op. Sizes are whole numbers of bytes
/// (values) or entries (scans), at most [`MAX_SIZE`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeDist {
    /// The run's `--value-size`, given to [`Mix::sampler`]: a mix without sizes stays
    /// comparable with the steps around it.
    RunDefault,
    /// Always this many.
    Fixed(u64),
    /// Every size in `min..=max` equally likely.
    Uniform {
        /// The smallest.
        min: u64,
        /// The largest.
        max: u64,
    },
    /// YCSB's zipfian over `min..=max` (its `fieldlengthdistribution` and
    /// `scanlengthdistribution`): `min` the likeliest, then `min + 1`, …
    Zipfian {
        /// The smallest, and likeliest.
        min: u64,
        /// The largest.
        max: u64,
        /// The skew, 0 < θ < 1.
        theta: f64,
    },
    /// db_bench mixgraph's generalized Pareto (its `value_*` and `iter_*` flags): from a
    /// uniform u in [0, 1), x = θ − σ·ln u when k = 0, else θ + σ·(u^−k − 1)/k, rounded
    /// up (`ParetoCdfInversion`); then below `min` gives `min`, and above `max` gives
    /// `x % wrap` when `wrap` is set (db_bench's own rule, so the tail folds back) or
    /// `max` when not.
    Pareto {
        /// The location θ (`value_theta`, `iter_theta`).
        theta: f64,
        /// The shape k (`value_k`, `iter_k`); heavier tail as k grows.
        k: f64,
        /// The scale σ > 0 (`value_sigma`, `iter_sigma`).
        sigma: f64,
        /// Draws below it become it (mixgraph: 10 for values, 0 for scans).
        min: u64,
        /// Draws above it wrap or are clamped.
        max: u64,
        /// Draws above `max` become `draw % wrap` (1 ≤ wrap ≤ max + 1; mixgraph:
        /// `mix_max_value_size` for values, `mix_max_scan_len` for scans).
        wrap: Option<u64>,
    },
}

/// db_bench mixgraph's key model (`GenerateTwoTermExpKeys`): the key space is cut into
/// `keyrange_num` equal ranges whose hotness follows a·e^(b·x) + c·e^(d·x) for range x
/// = 1…n, shuffled over the key space; within a range a key follows the power model
/// y = a·x^b (`key_dist_a`, `key_dist_b`), or is uniform when both are 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerKeyrange {
    /// `keyrange_dist_a`.
    pub keyrange_dist_a: f64,
    /// `keyrange_dist_b`.
    pub keyrange_dist_b: f64,
    /// `keyrange_dist_c`.
    pub keyrange_dist_c: f64,
    /// `keyrange_dist_d`.
    pub keyrange_dist_d: f64,
    /// `keyrange_num`: how many ranges (1 when all four `keyrange_dist_*` are 0).
    pub keyrange_num: u32,
    /// `key_dist_a` (> 0, or 0 with `key_dist_b` for uniform keys within a range).
    pub key_dist_a: f64,
    /// `key_dist_b` (> 0, or 0 with `key_dist_a`).
    pub key_dist_b: f64,
}

impl PowerKeyrange {
    fn has_ranges(&self) -> bool {
        [
            self.keyrange_dist_a,
            self.keyrange_dist_b,
            self.keyrange_dist_c,
            self.keyrange_dist_d,
        ]
        .iter()
        .any(|x| *x != 0.0)
    }

    fn has_power(&self) -> bool {
        self.key_dist_a != 0.0 || self.key_dist_b != 0.0
    }
}

/// Which key each op touches, over the caller's `0..num` (the loaded keys).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeySpec {
    /// Every key equally likely.
    Uniform,
    /// plumb's `--distribution zipfian:θ`: zipfian ranks scattered over the key space
    /// by a fixed permutation, any θ > 0.
    Zipfian {
        /// The skew.
        theta: f64,
    },
    /// YCSB's `requestdistribution=zipfian` (`ScrambledZipfianGenerator`): ranks over
    /// 10^10 items hashed onto the keys; 0 < θ < 1.
    ScrambledZipfian {
        /// The skew.
        theta: f64,
    },
    /// YCSB's `requestdistribution=latest` (`SkewedLatestGenerator`): zipfian by age,
    /// the newest key hottest; follows [`MixSampler::inserted`]. 0 < θ < 1.
    Latest {
        /// The skew.
        theta: f64,
    },
    /// YCSB's `requestdistribution=hotspot`: `hot_ops` of the ops go uniformly to the
    /// lowest `hot_fraction` of the keys, the rest uniformly to the others.
    Hotspot {
        /// The hot set's share of the keys, 0 < f ≤ 1.
        hot_fraction: f64,
        /// The share of ops that go to it, 0 ≤ f ≤ 1.
        hot_ops: f64,
    },
    /// Each thread walks the keys in order from its own start, wrapping at `num`.
    Sequential,
    /// db_bench mixgraph's key model.
    PowerKeyrange(PowerKeyrange),
}

impl KeySpec {
    /// The name a mix file writes.
    pub fn name(&self) -> &'static str {
        match self {
            KeySpec::Uniform => "uniform",
            KeySpec::Zipfian { .. } => "zipfian",
            KeySpec::ScrambledZipfian { .. } => "scrambled-zipfian",
            KeySpec::Latest { .. } => "latest",
            KeySpec::Hotspot { .. } => "hotspot",
            KeySpec::Sequential => "sequential",
            KeySpec::PowerKeyrange(_) => "power-keyrange",
        }
    }
}

/// One operation of a mix with its share and its sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixOp {
    /// What it does.
    pub kind: MixOpKind,
    /// Its share is weight / the sum of weights; 0 keeps it listed but never drawn.
    pub weight: u32,
    /// Bytes written (ops that write; ignored by the others).
    pub value_size: SizeDist,
    /// Entries read after the seek (`seek`; ignored by the others).
    pub scan_length: SizeDist,
    /// Keys per op: the batch of a `multiget`, 1 for the others.
    pub keys: u32,
}

impl MixOp {
    /// An op with the file format's defaults, for mixes built in code.
    pub fn new(kind: MixOpKind, weight: u32) -> MixOp {
        MixOp {
            kind,
            weight,
            value_size: SizeDist::RunDefault,
            scan_length: SizeDist::Fixed(DEFAULT_SCAN_LENGTH),
            keys: if kind == MixOpKind::MultiGet {
                DEFAULT_MULTIGET_KEYS
            } else {
                1
            },
        }
    }
}

/// A checked op mix: what a mix file says, or a built-in such as [`mixgraph`].
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    /// What reports call it.
    pub name: String,
    /// What it models, for the run's record (may be empty).
    pub description: String,
    /// The operations, in file order (per-op results follow this order).
    pub ops: Vec<MixOp>,
    /// How keys are chosen.
    pub keys: KeySpec,
    /// How the mix changes over the step (empty: the ops' weights throughout).
    pub phases: Vec<MixPhase>,
    /// db_bench mixgraph's one draw per op: a uniform number below `num` chooses the
    /// op (modulo the weights' sum), is the first key's draw (uniform and
    /// power-keyrange keys) and, divided by `num`, the quantile of the op's Pareto
    /// value size or scan length, so a key always comes with the same op and sizes.
    /// False: each drawn apart.
    pub one_draw: bool,
}

/// One phase of a mix: how long, the ops' weights in it, and the load it runs at.
#[derive(Debug, Clone, PartialEq)]
pub struct MixPhase {
    /// Seconds it lasts; infinite for a last phase without `secs`.
    pub secs: f64,
    /// One weight per op, in op order.
    pub weights: Vec<u32>,
    /// Ops/s offered in it (open loop), when the phases set a rate.
    pub rate: Option<f64>,
    /// Threads running in it, when the phases set a thread count.
    pub threads: Option<u32>,
}

/// What is wrong with a mix file, a built-in's flags, or a mix for this run. Messages
/// name the place (file, line, column and field) and what to write instead, because a
/// mix file is written by hand and fixed by reading the message.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MixError {
    /// A field of a mix file.
    #[error("{file}:{line}:{column}: {field}: {message}")]
    At {
        /// The file as the caller named it.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// The field's path, e.g. `op[2].kind`.
        field: String,
        /// What is wrong and what to write.
        message: String,
    },
    /// A mix file TOML cannot read at all (a syntax error).
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// TOML's message.
        message: String,
    },
    /// A mix file with something missing that has no place to point at.
    #[error("{file}: {field}: {message}")]
    File {
        /// The file.
        file: String,
        /// The field.
        field: String,
        /// What is wrong and what to write.
        message: String,
    },
    /// A mix that cannot run as given (built in code, or at this run's key count or
    /// threads).
    #[error("mix {mix:?}: {field}: {message}")]
    Invalid {
        /// The mix's name.
        mix: String,
        /// The field's path.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A db_bench flag given to [`mixgraph`].
    #[error("mixgraph -{flag}: {message}")]
    Flag {
        /// The flag as db_bench names it.
        flag: String,
        /// What is wrong.
        message: String,
    },
    /// db_bench's sine QPS that plumb's rate profile cannot express.
    #[error("mixgraph -sine_a/-sine_b/-sine_c/-sine_d: {message}")]
    Rate {
        /// What is wrong.
        message: String,
    },
}

// ---------------------------------------------------------------------------------
// Rules shared by the file, the built-ins and mixes built in code.
// ---------------------------------------------------------------------------------

fn ycsb_theta_problem(theta: f64) -> Option<String> {
    if theta > 0.0 && theta < 1.0 {
        None
    } else {
        Some(format!(
            "theta {theta} is outside 0 < theta < 1, the range YCSB's zipfian generator \
             (Gray et al.'s) draws from; YCSB uses 0.99"
        ))
    }
}

/// The first thing wrong with a size distribution: (field, message).
fn size_problem(d: &SizeDist) -> Option<(&'static str, String)> {
    let too_big = |what: &'static str, v: u64| {
        (v > MAX_SIZE).then(|| (what, format!("{v} is above the largest size, {MAX_SIZE}")))
    };
    let order = |min: u64, max: u64| {
        (min > max).then(|| {
            (
                "min",
                format!("min {min} is above max {max}; write min <= max"),
            )
        })
    };
    match *d {
        SizeDist::RunDefault => None,
        SizeDist::Fixed(size) => too_big("size", size),
        SizeDist::Uniform { min, max } => order(min, max).or_else(|| too_big("max", max)),
        SizeDist::Zipfian { min, max, theta } => order(min, max)
            .or_else(|| too_big("max", max))
            .or_else(|| ycsb_theta_problem(theta).map(|m| ("theta", m))),
        SizeDist::Pareto {
            theta,
            k,
            sigma,
            min,
            max,
            wrap,
        } => {
            if !(sigma.is_finite() && sigma > 0.0) {
                return Some((
                    "sigma",
                    format!(
                        "sigma {sigma} must be a number above 0 (the Pareto scale, db_bench's \
                         value_sigma / iter_sigma; its defaults are 25.45 and 14.236)"
                    ),
                ));
            }
            if !k.is_finite() {
                return Some(("k", format!("k {k} must be a finite number")));
            }
            if !theta.is_finite() {
                return Some(("theta", format!("theta {theta} must be a finite number")));
            }
            if let Some(p) = order(min, max).or_else(|| too_big("max", max)) {
                return Some(p);
            }
            match wrap {
                Some(w) if w == 0 || w > max + 1 => Some((
                    "wrap",
                    format!(
                        "wrap {w} must be from 1 to max + 1 = {}: a draw above max becomes \
                         draw % wrap, which must stay within max",
                        max + 1
                    ),
                )),
                _ => None,
            }
        }
    }
}

/// The first thing wrong with a key distribution that does not depend on the run.
fn keys_problem(k: &KeySpec) -> Option<(&'static str, String)> {
    match *k {
        KeySpec::Uniform | KeySpec::Sequential => None,
        KeySpec::Zipfian { theta } => (!(theta.is_finite() && theta > 0.0)).then(|| {
            (
                "theta",
                format!(
                    "theta {theta} must be a number above 0 (plumb's --distribution \
                     zipfian:THETA); YCSB uses 0.99"
                ),
            )
        }),
        KeySpec::ScrambledZipfian { theta } | KeySpec::Latest { theta } => {
            ycsb_theta_problem(theta).map(|m| ("theta", m))
        }
        KeySpec::Hotspot {
            hot_fraction,
            hot_ops,
        } => {
            if !(hot_fraction > 0.0 && hot_fraction <= 1.0) {
                Some((
                    "hot_fraction",
                    format!(
                        "hot_fraction {hot_fraction} must be above 0 and at most 1 (the hot \
                         set's share of the keys; YCSB's hotspotdatafraction, default 0.2)"
                    ),
                ))
            } else if !(0.0..=1.0).contains(&hot_ops) {
                Some((
                    "hot_ops",
                    format!(
                        "hot_ops {hot_ops} must be from 0 to 1 (the share of ops sent to the \
                         hot set; YCSB's hotspotopnfraction, default 0.8)"
                    ),
                ))
            } else if hot_fraction == 1.0 && hot_ops < 1.0 {
                Some((
                    "hot_ops",
                    format!(
                        "with hot_fraction = 1 there are no cold keys for the other {} of the \
                         ops; lower hot_fraction or set hot_ops = 1",
                        1.0 - hot_ops
                    ),
                ))
            } else {
                None
            }
        }
        KeySpec::PowerKeyrange(p) => power_problem(&p),
    }
}

fn power_problem(p: &PowerKeyrange) -> Option<(&'static str, String)> {
    for (name, v) in [
        ("keyrange_dist_a", p.keyrange_dist_a),
        ("keyrange_dist_b", p.keyrange_dist_b),
        ("keyrange_dist_c", p.keyrange_dist_c),
        ("keyrange_dist_d", p.keyrange_dist_d),
        ("key_dist_a", p.key_dist_a),
        ("key_dist_b", p.key_dist_b),
    ] {
        if !v.is_finite() {
            return Some((name, format!("{v} must be a finite number")));
        }
    }
    let power_ok = |v: f64| v > 0.0;
    if p.has_power() && !(power_ok(p.key_dist_a) && power_ok(p.key_dist_b)) {
        let name = if power_ok(p.key_dist_a) {
            "key_dist_b"
        } else {
            "key_dist_a"
        };
        return Some((
            name,
            format!(
                "key_dist_a {} and key_dist_b {} must both be above 0 (the power model \
                 y = a*x^b; mixgraph's paper fits a = 0.002312, b = 0.3467), or both 0 for \
                 uniform keys within a range",
                p.key_dist_a, p.key_dist_b
            ),
        ));
    }
    if p.keyrange_num == 0 || p.keyrange_num > MAX_KEYRANGES {
        return Some((
            "keyrange_num",
            format!(
                "keyrange_num {} must be from 1 to {MAX_KEYRANGES}",
                p.keyrange_num
            ),
        ));
    }
    if !p.has_ranges() {
        if p.keyrange_num > 1 {
            return Some((
                "keyrange_num",
                format!(
                    "{} key ranges need their hotness, keyrange_dist_a..keyrange_dist_d; \
                     without them db_bench uses one range (write keyrange_num = 1)",
                    p.keyrange_num
                ),
            ));
        }
        if !p.has_power() {
            return Some((
                "distribution",
                "power-keyrange without key_dist_* or keyrange_dist_* is uniform: write \
                 distribution = \"uniform\", or give key_dist_a and key_dist_b"
                    .to_string(),
            ));
        }
        return None;
    }
    keyrange_units(p).err().map(|m| ("keyrange_dist_a", m))
}

// ---------------------------------------------------------------------------------
// db_bench's mixgraph math.
// ---------------------------------------------------------------------------------

/// `static_cast<int64_t>(x)` as db_bench's x86-64 build computes it (`cvttsd2si`): NaN
/// and anything out of range become `i64::MIN` (Rust's `as` would saturate instead).
fn cast_i64(x: f64) -> i64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if x.is_nan() || !(-TWO63..TWO63).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// db_bench's `ParetoCdfInversion(u, theta, k, sigma)`.
fn pareto_inversion(u: f64, theta: f64, k: f64, sigma: f64) -> i64 {
    let x = if k == 0.0 {
        theta - sigma * u.ln()
    } else {
        theta + sigma * (u.powf(-k) - 1.0) / k
    };
    cast_i64(x.ceil())
}

/// db_bench's floor and fold of a Pareto draw (see [`SizeDist::Pareto`]).
fn fold(x: i64, min: u64, max: u64, wrap: Option<u64>) -> u64 {
    if x < 0 || (x as u64) < min {
        min
    } else if x as u64 > max {
        match wrap {
            Some(w) if w > 0 => x as u64 % w,
            _ => max,
        }
    } else {
        x as u64
    }
}

/// The 64-bit Mersenne Twister (`std::mt19937_64`, RocksDB's `Random64`), from its
/// published parameters: db_bench shuffles the key ranges with it, seeded by the table
/// size, so the same flags put the same ranges in the same places as db_bench does.
struct Mt64 {
    mt: [u64; 312],
    i: usize,
}

impl Mt64 {
    fn new(seed: u64) -> Mt64 {
        let mut mt = [0u64; 312];
        let mut prev = seed;
        mt[0] = seed;
        for (i, slot) in mt.iter_mut().enumerate().skip(1) {
            prev = 6_364_136_223_846_793_005u64
                .wrapping_mul(prev ^ (prev >> 62))
                .wrapping_add(i as u64);
            *slot = prev;
        }
        Mt64 { mt, i: 312 }
    }

    fn twist(&mut self) {
        const UPPER: u64 = 0xFFFF_FFFF_8000_0000;
        const LOWER: u64 = 0x7FFF_FFFF;
        for i in 0..312 {
            let x = (self.mt[i] & UPPER) | (self.mt[(i + 1) % 312] & LOWER);
            let mut xa = x >> 1;
            if x & 1 != 0 {
                xa ^= 0xB502_6F5A_A966_19E9;
            }
            self.mt[i] = self.mt[(i + 156) % 312] ^ xa;
        }
        self.i = 0;
    }

    fn next_u64(&mut self) -> u64 {
        if self.i >= 312 {
            self.twist();
        }
        let mut y = self.mt[self.i];
        self.i += 1;
        y ^= (y >> 29) & 0x5555_5555_5555_5555;
        y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
        y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
        y ^ (y >> 43)
    }
}

/// One key range of db_bench's table (`KeyrangeUnit`): where its share of the
/// `0..total` draw starts and how wide it is.
#[derive(Debug, Clone, Copy)]
struct Unit {
    start: i64,
    access: i64,
}

/// db_bench's `InitiateExpDistribution`: each range's hotness a·e^(b·x) + c·e^(d·x)
/// (below 1e-16 counts as 0) scaled by 1/(the first non-zero hotness) + 1 and floored,
/// then the ranges shuffled by `Random64(total)`. Refuses what would make db_bench
/// divide by zero or overflow.
fn keyrange_units(p: &PowerKeyrange) -> Result<Vec<Unit>, String> {
    let n = p.keyrange_num.max(1) as usize;
    let mut units = Vec::with_capacity(n);
    let mut amplify: i64 = 0;
    let mut start: i64 = 0;
    const LIMIT: f64 = 4_611_686_018_427_387_904.0; // 2^62
    for pfx in (1..=n).rev() {
        let x = pfx as f64;
        let mut prob = p.keyrange_dist_a * (p.keyrange_dist_b * x).exp()
            + p.keyrange_dist_c * (p.keyrange_dist_d * x).exp();
        if !prob.is_finite() {
            return Err(format!(
                "keyrange_dist_a..d give key range {pfx} a hotness of {prob}; \
                 they must give finite values for x = 1..{n}"
            ));
        }
        if prob < 1e-16 {
            prob = 0.0;
        }
        if amplify == 0 && prob > 0.0 {
            amplify = (1.0 / prob).floor() as i64 + 1;
        }
        let access = if prob <= 0.0 {
            0.0
        } else {
            (amplify as f64 * prob).floor()
        };
        let next = start as f64 + access;
        if next >= LIMIT {
            return Err(format!(
                "keyrange_dist_a..d make the hottest of {n} key ranges more than 2^62 times \
                 as hot as the coldest, which db_bench's integer table cannot hold"
            ));
        }
        units.push(Unit {
            start,
            access: access as i64,
        });
        start += access as i64;
    }
    if start == 0 {
        return Err(format!(
            "keyrange_dist_a..d give every one of the {n} key ranges a hotness below 1e-16; \
             db_bench would divide by zero (mixgraph's paper fits a = 14.18, b = -2.917, \
             c = 0.0164, d = -0.08082)"
        ));
    }
    let mut mt = Mt64::new(start as u64);
    for i in 0..n {
        let pos = (mt.next_u64() % n as u64) as usize;
        units.swap(i, pos);
    }
    let mut offset = 0;
    for u in &mut units {
        u.start = offset;
        offset += u.access;
    }
    Ok(units)
}

/// A splitmix64 finaliser: where db_bench seeds a Mersenne Twister with the power
/// model's rank and takes its first output (`Random64(key_seed).Next()`), a fixed
/// hash scatters the rank instead, at a fraction of the cost; which keys are hot
/// differs from db_bench, how hot they are does not.
fn scatter(seed: u64) -> u64 {
    let mut x = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The key generator of `power-keyrange` for one run's key count.
#[derive(Debug, Clone)]
struct PowerKeys {
    starts: Vec<i64>,
    total: i64,
    size: u64,
    a: f64,
    b: f64,
    power: bool,
    /// No key ranges: db_bench's plain power model, whose key is its generator's first
    /// output cast to a signed number modulo num (see [`PowerKeys::key_of`]).
    plain: bool,
}

/// The first output of C++'s `std::mt19937_64` seeded with `seed`: what db_bench's
/// `Random64(seed).Next()` returns, computed without the generator's 2.5 KiB of state
/// (the seeding recurrence up to word 156, one twist, the tempering).
fn first_mt64(seed: u64) -> u64 {
    const F: u64 = 6_364_136_223_846_793_005;
    let (m0, mut prev, mut m1, mut m156) = (seed, seed, 0u64, 0u64);
    for i in 1..=156u64 {
        prev = F.wrapping_mul(prev ^ (prev >> 62)).wrapping_add(i);
        if i == 1 {
            m1 = prev;
        }
        if i == 156 {
            m156 = prev;
        }
    }
    let x = (m0 & 0xFFFF_FFFF_8000_0000) | (m1 & 0x7FFF_FFFF);
    let mut xa = x >> 1;
    if x & 1 == 1 {
        xa ^= 0xB502_6F5A_A966_19E9;
    }
    let mut y = m156 ^ xa;
    y ^= (y >> 29) & 0x5555_5555_5555_5555;
    y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
    y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
    y ^ (y >> 43)
}

impl PowerKeys {
    fn new(p: &PowerKeyrange, num: u64) -> Result<PowerKeys, String> {
        let units = if p.has_ranges() {
            keyrange_units(p)?
        } else {
            vec![Unit {
                start: 0,
                access: 1,
            }]
        };
        let n = units.len() as u64;
        if num < n {
            return Err(format!(
                "{n} key ranges need at least {n} keys; this run has {num}"
            ));
        }
        Ok(PowerKeys {
            total: units.iter().map(|u| u.access).sum(),
            starts: units.iter().map(|u| u.start).collect(),
            size: num / n,
            a: p.key_dist_a,
            b: p.key_dist_b,
            power: p.has_power(),
            plain: !p.has_ranges(),
        })
    }

    /// db_bench's `DistGetKeyID` from its uniform draw `ini` in `0..num`.
    #[inline]
    fn key_of(&self, ini: u64) -> u64 {
        let r = (ini % self.total as u64) as i64;
        let (mut lo, mut hi) = (0usize, self.starts.len());
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if r < self.starts[mid] {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let within = ini % self.size;
        let offset = if self.power && self.plain {
            // db_bench's plain power model (MixGraph without keyrange_dist_*):
            // `static_cast<int64_t>(Random64(seed).Next()) % FLAGS_num`, a signed
            // remainder, so about half the keys come out negative and are written as
            // 2^64 - |k|: keys after every loaded one, which its reads miss unless a put
            // wrote them. Followed as it is, so plumb's mixgraph reads what db_bench's
            // reads (its hit rate, about 52% with the paper's parameters).
            let u = within as f64 / self.size as f64;
            let seed = cast_i64((u / self.a).powf(1.0 / self.b).ceil());
            let k = (first_mt64(seed as u64) as i64) % (self.size as i64);
            return k as u64;
        } else if self.power {
            let u = within as f64 / self.size as f64;
            let seed = cast_i64((u / self.a).powf(1.0 / self.b).ceil());
            scatter(seed as u64) % self.size
        } else {
            within
        };
        self.size * lo as u64 + offset
    }
}

// ---------------------------------------------------------------------------------
// The sampler.
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum SizeGen {
    Fixed(u64),
    Uniform(UniformLong),
    Zipfian(Zipfian, u64),
    Pareto {
        theta: f64,
        k: f64,
        sigma: f64,
        min: u64,
        max: u64,
        wrap: Option<u64>,
    },
}

impl SizeGen {
    fn new(d: &SizeDist, default_value_size: u64) -> SizeGen {
        match *d {
            SizeDist::RunDefault => SizeGen::Fixed(default_value_size),
            SizeDist::Fixed(n) => SizeGen::Fixed(n),
            SizeDist::Uniform { min, max } => {
                SizeGen::Uniform(UniformLong::new(min as i64, max as i64))
            }
            SizeDist::Zipfian { min, max, theta } => {
                let items = (max - min + 1) as i64;
                SizeGen::Zipfian(
                    Zipfian::with_zetan(min as i64, max as i64, theta, zeta_large(items, theta)),
                    max,
                )
            }
            SizeDist::Pareto {
                theta,
                k,
                sigma,
                min,
                max,
                wrap,
            } => SizeGen::Pareto {
                theta,
                k,
                sigma,
                min,
                max,
                wrap,
            },
        }
    }

    #[inline]
    /// The next size; a Pareto takes `quantile` as its uniform draw when given (an op's
    /// one draw, [`Mix::one_draw`]).
    fn next(&mut self, rng: &mut SmallRng, quantile: Option<f64>) -> u64 {
        match self {
            SizeGen::Fixed(n) => *n,
            SizeGen::Uniform(u) => u.next(rng).max(0) as u64,
            SizeGen::Zipfian(z, max) => (z.next(rng).max(0) as u64).min(*max),
            SizeGen::Pareto {
                theta,
                k,
                sigma,
                min,
                max,
                wrap,
            } => {
                let u = quantile.unwrap_or_else(|| rng.random::<f64>());
                let x = pareto_inversion(u, *theta, *k, *sigma);
                fold(x, *min, *max, *wrap)
            }
        }
    }
}

enum KeyGen {
    Uniform,
    Zipfian(Box<KeyChooser>),
    Scrambled(ScrambledZipfian),
    Latest { latest: SkewedLatest, newest: i64 },
    Hotspot(Hotspot),
    Sequential { next: u64 },
    Power(PowerKeys),
}

/// One client thread's draws for a mix: which op, which key, how big, how long. Built
/// once per thread by [`Mix::sampler`]; every method then works on that state alone,
/// so drawing costs no allocation and no shared memory.
pub struct MixSampler {
    rng: SmallRng,
    num: u64,
    cumulative: Vec<u64>,
    total: u64,
    values: Vec<SizeGen>,
    scans: Vec<SizeGen>,
    keys: KeyGen,
    next_insert: u64,
    insert_stride: u64,
    /// Each phase's cumulative weights and their total, copied into `cumulative` and
    /// `total` by [`MixSampler::set_phase`] (empty without phases).
    phases: Vec<(Vec<u64>, u64)>,
    phase: usize,
    /// [`Mix::one_draw`]: this op's draw, for its first key, and its quantile, for
    /// its Pareto size; each taken once.
    one_draw: bool,
    ini: Option<u64>,
    quantile: Option<f64>,
}

impl MixSampler {
    /// Draws ops by phase `i`'s weights from now on ([`Mix::phase_at`] says which is in
    /// force); a copy into the sampler's own table, no allocation.
    pub fn set_phase(&mut self, i: usize) {
        if i != self.phase {
            if let Some((c, t)) = self.phases.get(i) {
                self.cumulative.copy_from_slice(c);
                self.total = *t;
                self.phase = i;
            }
        }
    }

    /// The next op, an index into [`Mix::ops`] (and [`Mix::op_names`]), drawn by weight.
    #[inline]
    pub fn next_op(&mut self) -> usize {
        let r = if self.one_draw {
            // db_bench's MixGraph: ini = GetRandomKey(), the op QueryDecider's
            // GetType(ini % num), u = (ini % num) / num.
            let ini = self.rng.random_range(0..self.num);
            self.ini = Some(ini);
            self.quantile = Some(ini as f64 / self.num as f64);
            ini % self.total
        } else {
            self.rng.random_range(0..self.total)
        };
        self.cumulative.partition_point(|&c| c <= r)
    }

    /// The key of a `get`, `put`, `delete`, `seek`, `merge`, `rmw` or of each key of a
    /// `multiget`: below `num`, except under `latest`, which reaches the newest key
    /// reported to [`Self::inserted`], and under `power-keyrange` without key ranges
    /// (mixgraph's plain power model), where about half are db_bench's wrapped keys
    /// above 2^64 - num (see `PowerKeys::key_of`).
    #[inline]
    pub fn key(&mut self) -> u64 {
        if let Some(ini) = self.ini.take() {
            match &self.keys {
                KeyGen::Uniform => return ini,
                KeyGen::Power(p) => return p.key_of(ini),
                _ => {}
            }
        }
        let num = self.num;
        match &mut self.keys {
            KeyGen::Uniform => self.rng.random_range(0..num),
            KeyGen::Zipfian(c) => c.next_key(),
            KeyGen::Scrambled(g) => g.next(&mut self.rng).rem_euclid(num as i64) as u64,
            KeyGen::Latest { latest, newest } => latest.next(&mut self.rng, *newest).max(0) as u64,
            KeyGen::Hotspot(h) => h.next(&mut self.rng).max(0) as u64,
            KeyGen::Sequential { next } => {
                let k = *next;
                *next = if k + 1 >= num { 0 } else { k + 1 };
                k
            }
            KeyGen::Power(p) => {
                let ini = self.rng.random_range(0..num);
                p.key_of(ini)
            }
        }
    }

    /// The key of an `insert`: one no thread has written, above the loaded `0..num`.
    /// Thread t of T (see [`Mix::thread_sampler`]) hands out num + t, num + t + T, …,
    /// so threads never collide and need not talk.
    #[inline]
    pub fn insert_key(&mut self) -> u64 {
        let k = self.next_insert;
        self.next_insert = k.saturating_add(self.insert_stride);
        k
    }

    /// Bytes to write for op `op` (an index from [`Self::next_op`]; 0 for any other).
    #[inline]
    pub fn value_size(&mut self, op: usize) -> usize {
        let u = self.quantile.take();
        match self.values.get_mut(op) {
            Some(g) => g.next(&mut self.rng, u) as usize,
            None => 0,
        }
    }

    /// Entries a `seek` reads for op `op` (0 for an index not from [`Self::next_op`]).
    #[inline]
    pub fn scan_length(&mut self, op: usize) -> usize {
        let u = self.quantile.take();
        match self.scans.get_mut(op) {
            Some(g) => g.next(&mut self.rng, u) as usize,
            None => 0,
        }
    }

    /// Tells the sampler that `key` now exists: call it after each `insert` has
    /// finished (failed or not), as YCSB acknowledges inserts. Under `latest` the newest
    /// key becomes the hottest, so reads follow this thread's inserts; each thread
    /// follows only its own, so the keys just below its newest are other threads'
    /// insert keys, which may not be written yet (a read there can miss, as a YCSB read
    /// past an unacknowledged insert would). Every other distribution keeps drawing from
    /// `0..num` and ignores it, as does a key not above the newest.
    #[inline]
    pub fn inserted(&mut self, key: u64) {
        if let KeyGen::Latest { newest, .. } = &mut self.keys {
            if let Ok(k) = i64::try_from(key) {
                if k > *newest {
                    *newest = k;
                }
            }
        }
    }

    /// The key count the sampler draws over.
    pub fn num(&self) -> u64 {
        self.num
    }
}

impl fmt::Debug for MixSampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MixSampler")
            .field("num", &self.num)
            .field("ops", &self.cumulative.len())
            .field("next_insert", &self.next_insert)
            .finish_non_exhaustive()
    }
}

impl Mix {
    /// Refuses a mix plumb can parse but not run (a merge: every engine is opened
    /// without a merge operator), in the words the plan, `plumb kv` and the step share,
    /// so a suite naming such a file is refused when it is planned.
    pub fn refuse_unrunnable(&self) -> Result<(), &'static str> {
        if self.ops.iter().any(|o| o.kind == MixOpKind::Merge) {
            return Err(
                "merge needs the engine's merge operator, and plumb opens every engine \
                 without one; write the op as rmw (a get, then a put of the new value)",
            );
        }
        Ok(())
    }

    /// Checks a mix built in code (a parsed file is checked already): the same rules
    /// as the file, named by field.
    pub fn validate(&self) -> Result<(), MixError> {
        let bad = |field: String, message: String| MixError::Invalid {
            mix: self.name.clone(),
            field,
            message,
        };
        if self.name.trim().is_empty() {
            return Err(bad("name".into(), "a mix needs a name".into()));
        }
        if self.ops.is_empty() {
            return Err(bad("op".into(), "a mix needs at least one op".into()));
        }
        if self.ops.iter().all(|o| o.weight == 0) {
            return Err(bad(
                "op".into(),
                "every op's weight is 0; give at least one a weight above 0".into(),
            ));
        }
        for (i, op) in self.ops.iter().enumerate() {
            let at = format!("op[{}]", i + 1);
            for (what, d) in [
                ("value_size", &op.value_size),
                ("scan_length", &op.scan_length),
            ] {
                if let Some((f, m)) = size_problem(d) {
                    return Err(bad(format!("{at}.{what}.{f}"), m));
                }
            }
            if op.keys == 0 || op.keys > MAX_BATCH {
                return Err(bad(
                    format!("{at}.keys"),
                    format!("{} keys per op; use 1 to {MAX_BATCH}", op.keys),
                ));
            }
        }
        if let Some((f, m)) = keys_problem(&self.keys) {
            return Err(bad(format!("keys.{f}"), m));
        }
        for (i, p) in self.phases.iter().enumerate() {
            if let Some((f, m)) = phase_problem(p, i, &self.phases, self.ops.len()) {
                return Err(bad(format!("phase[{}].{f}", i + 1), m));
            }
        }
        Ok(())
    }

    /// One thread's sampler over keys `0..num` with values of `default_value_size`
    /// where the mix gives none, seeded with `seed` (which must differ per thread, see
    /// [`crate::distribution::worker_seed`]). The same as thread 0 of 1: with more
    /// threads, a mix with `insert` or `sequential` keys needs [`Self::thread_sampler`],
    /// or every thread inserts the same keys and walks the same sequence.
    pub fn sampler(
        &self,
        num: u64,
        default_value_size: usize,
        seed: u64,
    ) -> Result<MixSampler, MixError> {
        self.thread_sampler(num, default_value_size, seed, 0, 1)
    }

    /// The sampler of thread `thread` of `threads`: inserts take disjoint keys and
    /// `sequential` walks start spread over the key space.
    pub fn thread_sampler(
        &self,
        num: u64,
        default_value_size: usize,
        seed: u64,
        thread: usize,
        threads: usize,
    ) -> Result<MixSampler, MixError> {
        self.validate()?;
        let bad = |field: &str, message: String| MixError::Invalid {
            mix: self.name.clone(),
            field: field.to_string(),
            message,
        };
        if num == 0 || num > i64::MAX as u64 {
            return Err(bad(
                "num",
                format!("{num} keys: a mix needs from 1 to {} keys", i64::MAX),
            ));
        }
        if threads == 0 || thread >= threads {
            return Err(bad(
                "threads",
                format!("thread {thread} of {threads}: threads count from 0 to threads - 1"),
            ));
        }
        let default_value_size = default_value_size as u64;
        if default_value_size > MAX_SIZE {
            return Err(bad(
                "value_size",
                format!("the run's value size {default_value_size} is above {MAX_SIZE}"),
            ));
        }
        let last = num as i64 - 1;
        let keys = match self.keys {
            KeySpec::Uniform => KeyGen::Uniform,
            KeySpec::Zipfian { theta } => {
                let c = KeyChooser::new(
                    Distribution::Zipfian { theta },
                    num,
                    scatter(seed ^ 0x6b65_7973),
                )
                .map_err(|e| bad("keys.theta", e.to_string()))?;
                KeyGen::Zipfian(Box::new(c))
            }
            KeySpec::ScrambledZipfian { theta } => {
                KeyGen::Scrambled(ScrambledZipfian::new(0, last, theta))
            }
            KeySpec::Latest { theta } => {
                if num < 2 {
                    return Err(bad(
                        "keys.distribution",
                        "latest needs at least 2 keys (YCSB never draws the oldest)".into(),
                    ));
                }
                KeyGen::Latest {
                    latest: SkewedLatest::with_zetan(last, theta, zeta_large(last, theta)),
                    newest: last,
                }
            }
            KeySpec::Hotspot {
                hot_fraction,
                hot_ops,
            } => KeyGen::Hotspot(
                Hotspot::new(0, last, hot_fraction, hot_ops)
                    .map_err(|e| bad("keys.hot_fraction", e.to_string()))?,
            ),
            KeySpec::Sequential => KeyGen::Sequential {
                next: (u128::from(num) * thread as u128 / threads as u128) as u64,
            },
            KeySpec::PowerKeyrange(p) => {
                KeyGen::Power(PowerKeys::new(&p, num).map_err(|m| bad("keys.keyrange_num", m))?)
            }
        };
        let table = |weights: &mut dyn Iterator<Item = u32>| {
            let mut total = 0u64;
            let c: Vec<u64> = weights
                .map(|w| {
                    total += u64::from(w);
                    total
                })
                .collect();
            (c, total)
        };
        let phases: Vec<(Vec<u64>, u64)> = self
            .phases
            .iter()
            .map(|p| table(&mut p.weights.iter().copied()))
            .collect();
        let (cumulative, total) = match phases.first() {
            Some(first) => first.clone(),
            None => table(&mut self.ops.iter().map(|o| o.weight)),
        };
        Ok(MixSampler {
            phases,
            phase: 0,
            one_draw: self.one_draw,
            ini: None,
            quantile: None,
            rng: SmallRng::seed_from_u64(seed),
            num,
            cumulative,
            total,
            values: self
                .ops
                .iter()
                .map(|o| SizeGen::new(&o.value_size, default_value_size))
                .collect(),
            scans: self
                .ops
                .iter()
                .map(|o| SizeGen::new(&o.scan_length, default_value_size))
                .collect(),
            keys,
            next_insert: num.saturating_add(thread as u64),
            insert_stride: threads as u64,
        })
    }

    /// The phase in force `t` seconds after the measured window opened (0 before and
    /// without phases): the last phase holds after the phases end.
    pub fn phase_at(&self, t: f64) -> usize {
        let mut end = 0.0;
        for (i, p) in self.phases.iter().enumerate() {
            end += p.secs;
            if t < end {
                return i;
            }
        }
        self.phases.len().saturating_sub(1)
    }

    /// The phases' length, seconds; `None` without phases or when the last has no
    /// `secs` (it lasts to the step's end).
    pub fn phases_secs(&self) -> Option<f64> {
        let s: f64 = self.phases.iter().map(|p| p.secs).sum();
        (!self.phases.is_empty() && s.is_finite()).then_some(s)
    }

    /// The phases' rates as a rate profile (`hold:RATE/SECS,…`), when they set one.
    pub fn rate_profile(&self) -> Option<String> {
        self.profile_of(|p| p.rate)
    }

    /// The phases' thread counts as a threads profile, when they set them.
    pub fn threads_profile(&self) -> Option<String> {
        self.profile_of(|p| p.threads.map(f64::from))
    }

    fn profile_of(&self, value: impl Fn(&MixPhase) -> Option<f64>) -> Option<String> {
        let holds: Option<Vec<String>> = self
            .phases
            .iter()
            .map(|p| {
                let v = value(p)?;
                Some(if p.secs.is_finite() {
                    format!("hold:{v}/{}s", p.secs)
                } else {
                    format!("hold:{v}")
                })
            })
            .collect();
        holds.filter(|h| !h.is_empty()).map(|h| h.join(","))
    }

    /// Names for per-op results, in op order: the kind, with `#2`, `#3`, … on the
    /// second and later ops of a kind that repeats (`get`, `put`, `get#2`).
    pub fn op_names(&self) -> Vec<String> {
        let mut seen = [0u32; MixOpKind::ALL.len()];
        self.ops
            .iter()
            .map(|op| {
                let i = MixOpKind::ALL
                    .iter()
                    .position(|k| *k == op.kind)
                    .unwrap_or(0);
                seen[i] += 1;
                if seen[i] == 1 {
                    op.kind.name().to_string()
                } else {
                    format!("{}#{}", op.kind.name(), seen[i])
                }
            })
            .collect()
    }

    /// The mix as a mix file, so a built-in (such as [`mixgraph`]) can be shown, edited
    /// and stored like any other; [`parse_mix`] reads it back to an equal mix. Fields an
    /// op's kind ignores (a `get`'s value size) are left out.
    pub fn to_toml(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("name = {}\n", toml_string(&self.name)));
        if !self.description.is_empty() {
            s.push_str(&format!(
                "description = {}\n",
                toml_string(&self.description)
            ));
        }
        if self.one_draw {
            s.push_str("one_draw = true\n");
        }
        s.push_str(&format!(
            "\n[keys]\ndistribution = \"{}\"\n",
            self.keys.name()
        ));
        match self.keys {
            KeySpec::Uniform | KeySpec::Sequential => {}
            KeySpec::Zipfian { theta }
            | KeySpec::ScrambledZipfian { theta }
            | KeySpec::Latest { theta } => s.push_str(&format!("theta = {}\n", float(theta))),
            KeySpec::Hotspot {
                hot_fraction,
                hot_ops,
            } => s.push_str(&format!(
                "hot_fraction = {}\nhot_ops = {}\n",
                float(hot_fraction),
                float(hot_ops)
            )),
            KeySpec::PowerKeyrange(p) => {
                if p.has_power() {
                    s.push_str(&format!(
                        "key_dist_a = {}\nkey_dist_b = {}\n",
                        float(p.key_dist_a),
                        float(p.key_dist_b)
                    ));
                }
                if p.has_ranges() {
                    s.push_str(&format!(
                        "keyrange_dist_a = {}\nkeyrange_dist_b = {}\nkeyrange_dist_c = {}\n\
                         keyrange_dist_d = {}\n",
                        float(p.keyrange_dist_a),
                        float(p.keyrange_dist_b),
                        float(p.keyrange_dist_c),
                        float(p.keyrange_dist_d)
                    ));
                }
                s.push_str(&format!("keyrange_num = {}\n", p.keyrange_num));
            }
        }
        for op in &self.ops {
            s.push_str(&format!(
                "\n[[op]]\nkind = \"{}\"\nweight = {}\n",
                op.kind, op.weight
            ));
            if op.kind.writes() && op.value_size != SizeDist::RunDefault {
                s.push_str(&format!("value_size = {}\n", size_toml(&op.value_size)));
            }
            if op.kind == MixOpKind::Seek {
                s.push_str(&format!("scan_length = {}\n", size_toml(&op.scan_length)));
            }
            if op.kind == MixOpKind::MultiGet {
                s.push_str(&format!("keys = {}\n", op.keys));
            }
        }
        for p in &self.phases {
            s.push_str("\n[[phase]]\n");
            if p.secs.is_finite() {
                s.push_str(&format!("secs = {}\n", float(p.secs)));
            }
            let w: Vec<String> = p.weights.iter().map(u32::to_string).collect();
            s.push_str(&format!("weights = [{}]\n", w.join(", ")));
            if let Some(r) = p.rate {
                s.push_str(&format!("rate = {}\n", float(r)));
            }
            if let Some(t) = p.threads {
                s.push_str(&format!("threads = {t}\n"));
            }
        }
        s
    }
}

/// What is wrong with phase `i` of `all` in a mix of `ops` ops: (field, message).
fn phase_problem(
    p: &MixPhase,
    i: usize,
    all: &[MixPhase],
    ops: usize,
) -> Option<(&'static str, String)> {
    let last = i + 1 == all.len();
    if !(p.secs > 0.0 && (p.secs.is_finite() || last)) {
        return Some((
            "secs",
            if p.secs.is_infinite() {
                "only the last phase may go without secs: give how long it lasts".into()
            } else {
                format!("{} seconds: a phase lasts > 0 s", p.secs)
            },
        ));
    }
    if p.weights.len() != ops {
        return Some((
            "weights",
            format!(
                "{} weights for {ops} ops: give one per [[op]], in file order",
                p.weights.len()
            ),
        ));
    }
    if p.weights.iter().all(|&w| w == 0) {
        return Some((
            "weights",
            "every weight is 0; a pause is rate = 0 or threads = 0 with the weights kept".into(),
        ));
    }
    if p.rate.is_some() != all[0].rate.is_some() {
        return Some((
            "rate",
            "give a rate in every phase or in none (the phases are one rate profile)".into(),
        ));
    }
    if p.threads.is_some() != all[0].threads.is_some() {
        return Some((
            "threads",
            "give threads in every phase or in none (the phases are one threads profile)".into(),
        ));
    }
    if p.rate.is_some() && p.threads.is_some() {
        return Some((
            "threads",
            "a phase sets a rate (open loop) or threads (closed loop), not both".into(),
        ));
    }
    if let Some(r) = p.rate.filter(|r| !(r.is_finite() && *r >= 0.0)) {
        return Some(("rate", format!("{r}: give ops per second >= 0")));
    }
    if let Some(t) = p.threads.filter(|&t| t > 1024) {
        return Some(("threads", format!("{t} threads: give 0 to 1024")));
    }
    if last
        && all
            .iter()
            .all(|p| p.rate == Some(0.0) || p.threads == Some(0))
    {
        return Some((
            if p.rate.is_some() { "rate" } else { "threads" },
            "every phase is a pause (0): give one phase some load".into(),
        ));
    }
    None
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A float as TOML reads it back bit for bit (Rust's shortest round-trip form, which
/// always has a `.` or an exponent).
fn float(x: f64) -> String {
    format!("{x:?}")
}

fn size_toml(d: &SizeDist) -> String {
    match *d {
        // Not written by to_toml; spelled out for completeness.
        SizeDist::RunDefault => "{ dist = \"fixed\", size = 0 }".to_string(),
        SizeDist::Fixed(n) => format!("{{ dist = \"fixed\", size = {n} }}"),
        SizeDist::Uniform { min, max } => {
            format!("{{ dist = \"uniform\", min = {min}, max = {max} }}")
        }
        SizeDist::Zipfian { min, max, theta } => format!(
            "{{ dist = \"zipfian\", min = {min}, max = {max}, theta = {} }}",
            float(theta)
        ),
        SizeDist::Pareto {
            theta,
            k,
            sigma,
            min,
            max,
            wrap,
        } => {
            let wrap = wrap.map(|w| format!(", wrap = {w}")).unwrap_or_default();
            format!(
                "{{ dist = \"pareto\", theta = {}, k = {}, sigma = {}, min = {min}, \
                 max = {max}{wrap} }}",
                float(theta),
                float(k),
                float(sigma)
            )
        }
    }
}

// ---------------------------------------------------------------------------------
// Reading a mix file.
// ---------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMix {
    name: Option<Spanned<String>>,
    description: Option<Spanned<String>>,
    keys: Option<Spanned<RawKeys>>,
    #[serde(default)]
    op: Vec<Spanned<RawOp>>,
    #[serde(default)]
    phase: Vec<Spanned<RawPhase>>,
    one_draw: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPhase {
    secs: Option<Spanned<f64>>,
    weights: Option<Spanned<Vec<Spanned<f64>>>>,
    rate: Option<Spanned<f64>>,
    threads: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKeys {
    distribution: Spanned<String>,
    theta: Option<Spanned<f64>>,
    hot_fraction: Option<Spanned<f64>>,
    hot_ops: Option<Spanned<f64>>,
    key_dist_a: Option<Spanned<f64>>,
    key_dist_b: Option<Spanned<f64>>,
    keyrange_dist_a: Option<Spanned<f64>>,
    keyrange_dist_b: Option<Spanned<f64>>,
    keyrange_dist_c: Option<Spanned<f64>>,
    keyrange_dist_d: Option<Spanned<f64>>,
    keyrange_num: Option<Spanned<f64>>,
}

impl RawKeys {
    fn fields(&self) -> [(&'static str, Option<&Spanned<f64>>); 10] {
        [
            ("theta", self.theta.as_ref()),
            ("hot_fraction", self.hot_fraction.as_ref()),
            ("hot_ops", self.hot_ops.as_ref()),
            ("key_dist_a", self.key_dist_a.as_ref()),
            ("key_dist_b", self.key_dist_b.as_ref()),
            ("keyrange_dist_a", self.keyrange_dist_a.as_ref()),
            ("keyrange_dist_b", self.keyrange_dist_b.as_ref()),
            ("keyrange_dist_c", self.keyrange_dist_c.as_ref()),
            ("keyrange_dist_d", self.keyrange_dist_d.as_ref()),
            ("keyrange_num", self.keyrange_num.as_ref()),
        ]
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    kind: Spanned<String>,
    weight: Spanned<f64>,
    value_size: Option<Spanned<RawSize>>,
    scan_length: Option<Spanned<RawSize>>,
    keys: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSize {
    dist: Spanned<String>,
    size: Option<Spanned<f64>>,
    min: Option<Spanned<f64>>,
    max: Option<Spanned<f64>>,
    theta: Option<Spanned<f64>>,
    k: Option<Spanned<f64>>,
    sigma: Option<Spanned<f64>>,
    wrap: Option<Spanned<f64>>,
}

impl RawSize {
    fn fields(&self) -> [(&'static str, Option<&Spanned<f64>>); 7] {
        [
            ("size", self.size.as_ref()),
            ("min", self.min.as_ref()),
            ("max", self.max.as_ref()),
            ("theta", self.theta.as_ref()),
            ("k", self.k.as_ref()),
            ("sigma", self.sigma.as_ref()),
            ("wrap", self.wrap.as_ref()),
        ]
    }
}

/// Where a mix file is being read: turns byte spans into file:line:column.
struct Ctx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn line_col(&self, pos: usize) -> (usize, usize) {
        let mut pos = pos.min(self.text.len());
        while !self.text.is_char_boundary(pos) {
            pos -= 1;
        }
        let before = &self.text[..pos];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[start..].chars().count() + 1)
    }

    fn at(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> MixError {
        let (line, column) = self.line_col(span.start);
        MixError::At {
            file: self.file.to_string(),
            line,
            column,
            field: field.into(),
            message: message.into(),
        }
    }

    /// A TOML or serde error, with the field found from where it points.
    fn toml_error(&self, e: &toml::de::Error) -> MixError {
        let message = polish(e.message());
        match e.span() {
            None => MixError::File {
                file: self.file.to_string(),
                field: "(file)".into(),
                message,
            },
            Some(span) => {
                let field = field_at(self.text, span.start);
                let message = if field == "op" && message.contains("expected a sequence") {
                    format!("{message}; write each operation as [[op]] (an array of tables)")
                } else {
                    message
                };
                if field.is_empty() {
                    let (line, column) = self.line_col(span.start);
                    MixError::Syntax {
                        file: self.file.to_string(),
                        line,
                        column,
                        message,
                    }
                } else {
                    self.at(span, field, message)
                }
            }
        }
    }

    /// A whole number in `lo..=hi` (TOML integers, or floats with no fraction).
    fn whole(&self, v: &Spanned<f64>, field: &str, lo: u64, hi: u64) -> Result<u64, MixError> {
        let x = *v.get_ref();
        if x.fract() == 0.0 && x >= lo as f64 && x <= hi as f64 {
            Ok(x as u64)
        } else {
            Err(self.at(
                v.span(),
                field,
                format!("{x} is not a whole number from {lo} to {hi}"),
            ))
        }
    }
}

/// serde's messages in the words of a mix file.
fn polish(m: &str) -> String {
    m.trim_end()
        .replace("expected f64", "expected a number")
        .replace(
            "struct RawSize",
            "a size table such as { dist = \"fixed\", size = 100 }",
        )
        .replace("struct RawKeys", "a [keys] table")
        .replace("struct RawOp", "an [[op]] table")
        .replace("struct RawMix", "a mix file")
}

/// The path (`op[2].value_size.min`) of the innermost key or value of `text` whose
/// span holds `pos`: where a serde error points, named as the file's fields.
fn field_at(text: &str, pos: usize) -> String {
    fn consider(best: &mut Option<(usize, String)>, span: Range<usize>, pos: usize, path: &str) {
        if span.start <= pos && (pos < span.end || (span.is_empty() && pos == span.start)) {
            let len = span.len();
            if best.as_ref().is_none_or(|(l, _)| len <= *l) {
                *best = Some((len, path.to_string()));
            }
        }
    }
    fn walk_value(
        v: &toml::de::DeValue<'_>,
        path: &str,
        pos: usize,
        best: &mut Option<(usize, String)>,
    ) {
        match v {
            toml::de::DeValue::Table(t) => walk_table(t, path, pos, best),
            toml::de::DeValue::Array(a) => {
                for (i, e) in a.iter().enumerate() {
                    let p = format!("{path}[{}]", i + 1);
                    consider(best, e.span(), pos, &p);
                    walk_value(e.get_ref(), &p, pos, best);
                }
            }
            _ => {}
        }
    }
    fn walk_table(
        t: &toml::de::DeTable<'_>,
        prefix: &str,
        pos: usize,
        best: &mut Option<(usize, String)>,
    ) {
        for (k, v) in t.iter() {
            let path = if prefix.is_empty() {
                k.get_ref().to_string()
            } else {
                format!("{prefix}.{}", k.get_ref())
            };
            consider(best, k.span(), pos, &path);
            consider(best, v.span(), pos, &path);
            walk_value(v.get_ref(), &path, pos, best);
        }
    }
    let Ok(doc) = toml::de::DeTable::parse(text) else {
        return String::new();
    };
    let mut best = None;
    walk_table(doc.get_ref(), "", pos, &mut best);
    best.map(|(_, p)| p).unwrap_or_default()
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

const OP_KINDS: &str = "get, put, insert, delete, seek, multiget, merge or rmw";
const KEY_DISTS: &str =
    "uniform, zipfian, scrambled-zipfian, latest, hotspot, sequential or power-keyrange";
const SIZE_DISTS: &str = "fixed, uniform, zipfian or pareto";

fn kind_hint(s: &str) -> &'static str {
    match s.to_ascii_lowercase().as_str() {
        "read" => " (YCSB's read is get)",
        "update" | "write" | "overwrite" => " (an update or overwrite is put)",
        "scan" | "iterate" | "range" | "next" => " (a scan is seek with scan_length)",
        "readmodifywrite" | "read-modify-write" | "read_modify_write" => {
            " (a read-modify-write is rmw)"
        }
        "multi_get" | "multi-get" | "mget" | "multireadrandom" => " (a batch read is multiget)",
        "del" | "remove" => " (a removal is delete)",
        _ => "",
    }
}

fn dist_hint(s: &str) -> &'static str {
    match s.to_ascii_lowercase().as_str() {
        "zipf" => " (did you mean zipfian?)",
        "ycsb-zipfian" | "scrambled" | "scrambled_zipfian" => {
            " (YCSB's zipfian is scrambled-zipfian)"
        }
        "hotset" | "hot" => " (YCSB's hot set is hotspot)",
        "random" => " (uniform)",
        "seq" | "sequence" | "ordered" => " (sequential)",
        "mixgraph" | "power" | "prefix" | "prefix_dist" | "keyrange" => {
            " (db_bench mixgraph's is power-keyrange)"
        }
        "exponential" => " (YCSB's exponential is not modelled)",
        _ => "",
    }
}

fn key_spec_from_raw(ctx: &Ctx<'_>, raw: &Spanned<RawKeys>) -> Result<KeySpec, MixError> {
    let r = raw.get_ref();
    let dist = r.distribution.get_ref().as_str();
    let allowed: &[&str] = match dist {
        "uniform" | "sequential" => &[],
        "zipfian" | "scrambled-zipfian" | "latest" => &["theta"],
        "hotspot" => &["hot_fraction", "hot_ops"],
        "power-keyrange" => &[
            "key_dist_a",
            "key_dist_b",
            "keyrange_dist_a",
            "keyrange_dist_b",
            "keyrange_dist_c",
            "keyrange_dist_d",
            "keyrange_num",
        ],
        _ => {
            return Err(ctx.at(
                r.distribution.span(),
                "keys.distribution",
                format!(
                    "{dist:?} is not a key distribution{}; use {KEY_DISTS}",
                    dist_hint(dist)
                ),
            ))
        }
    };
    for (name, v) in r.fields() {
        if let Some(v) = v {
            if !allowed.contains(&name) {
                let takes = if allowed.is_empty() {
                    "no parameters".to_string()
                } else {
                    allowed.join(", ")
                };
                return Err(ctx.at(
                    v.span(),
                    format!("keys.{name}"),
                    format!("{dist} does not take {name}; it takes {takes}"),
                ));
            }
        }
    }
    let f = |v: &Option<Spanned<f64>>, default: f64| v.as_ref().map_or(default, |s| *s.get_ref());
    let spec = match dist {
        "uniform" => KeySpec::Uniform,
        "sequential" => KeySpec::Sequential,
        "zipfian" => KeySpec::Zipfian {
            theta: f(&r.theta, ZIPFIAN_CONSTANT),
        },
        "scrambled-zipfian" => KeySpec::ScrambledZipfian {
            theta: f(&r.theta, ZIPFIAN_CONSTANT),
        },
        "latest" => KeySpec::Latest {
            theta: f(&r.theta, ZIPFIAN_CONSTANT),
        },
        "hotspot" => KeySpec::Hotspot {
            hot_fraction: f(&r.hot_fraction, 0.2),
            hot_ops: f(&r.hot_ops, 0.8),
        },
        _ => {
            let keyrange_num = match &r.keyrange_num {
                Some(v) => ctx.whole(v, "keys.keyrange_num", 1, u64::from(MAX_KEYRANGES))? as u32,
                None => 1,
            };
            KeySpec::PowerKeyrange(PowerKeyrange {
                keyrange_dist_a: f(&r.keyrange_dist_a, 0.0),
                keyrange_dist_b: f(&r.keyrange_dist_b, 0.0),
                keyrange_dist_c: f(&r.keyrange_dist_c, 0.0),
                keyrange_dist_d: f(&r.keyrange_dist_d, 0.0),
                keyrange_num,
                key_dist_a: f(&r.key_dist_a, 0.0),
                key_dist_b: f(&r.key_dist_b, 0.0),
            })
        }
    };
    if let Some((field, message)) = keys_problem(&spec) {
        let span = r
            .fields()
            .into_iter()
            .find(|(n, _)| *n == field)
            .and_then(|(_, v)| v.map(Spanned::span))
            .unwrap_or_else(|| r.distribution.span());
        return Err(ctx.at(span, format!("keys.{field}"), message));
    }
    Ok(spec)
}

fn size_from_raw(ctx: &Ctx<'_>, raw: &Spanned<RawSize>, path: &str) -> Result<SizeDist, MixError> {
    let r = raw.get_ref();
    let dist = r.dist.get_ref().as_str();
    let (required, optional): (&[&str], &[&str]) = match dist {
        "fixed" => (&["size"], &[]),
        "uniform" => (&["min", "max"], &[]),
        "zipfian" => (&["min", "max"], &["theta"]),
        "pareto" => (&["k", "sigma", "max"], &["theta", "min", "wrap"]),
        _ => {
            let hint = match dist {
                "constant" => " (YCSB's constant is fixed)",
                "exponential" => " (an exponential is pareto with k = 0)",
                _ => "",
            };
            return Err(ctx.at(
                r.dist.span(),
                format!("{path}.dist"),
                format!("{dist:?} is not a size distribution{hint}; use {SIZE_DISTS}"),
            ));
        }
    };
    for (name, v) in r.fields() {
        if let Some(v) = v {
            if !required.contains(&name) && !optional.contains(&name) {
                let takes: Vec<&str> = required.iter().chain(optional).copied().collect();
                return Err(ctx.at(
                    v.span(),
                    format!("{path}.{name}"),
                    format!("{dist} does not take {name}; it takes {}", takes.join(", ")),
                ));
            }
        }
    }
    let fields = r.fields();
    let get = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v)
    };
    if let Some(missing) = required.iter().find(|n| get(n).is_none()) {
        return Err(ctx.at(
            raw.span(),
            format!("{path}.{missing}"),
            format!(
                "{missing} is missing: {dist} needs {}{}",
                and_list(required),
                if dist == "pareto" {
                    " (mixgraph's values: k = 0.2615, sigma = 25.45, max = 1024)"
                } else {
                    ""
                }
            ),
        ));
    }
    let whole = |name: &str, default: u64| -> Result<u64, MixError> {
        match get(name) {
            Some(v) => ctx.whole(v, &format!("{path}.{name}"), 0, MAX_SIZE),
            None => Ok(default),
        }
    };
    let num = |name: &str, default: f64| get(name).map_or(default, |v| *v.get_ref());
    let d = match dist {
        "fixed" => SizeDist::Fixed(whole("size", 0)?),
        "uniform" => SizeDist::Uniform {
            min: whole("min", 0)?,
            max: whole("max", 0)?,
        },
        "zipfian" => SizeDist::Zipfian {
            min: whole("min", 0)?,
            max: whole("max", 0)?,
            theta: num("theta", ZIPFIAN_CONSTANT),
        },
        _ => SizeDist::Pareto {
            theta: num("theta", 0.0),
            k: num("k", 0.0),
            sigma: num("sigma", 0.0),
            min: whole("min", 0)?,
            max: whole("max", 0)?,
            wrap: match get("wrap") {
                Some(v) => Some(ctx.whole(v, &format!("{path}.wrap"), 1, MAX_SIZE + 1)?),
                None => None,
            },
        },
    };
    if let Some((field, message)) = size_problem(&d) {
        let span = get(field).map_or_else(|| raw.span(), Spanned::span);
        return Err(ctx.at(span, format!("{path}.{field}"), message));
    }
    Ok(d)
}

fn op_from_raw(ctx: &Ctx<'_>, i: usize, raw: &Spanned<RawOp>) -> Result<MixOp, MixError> {
    let r = raw.get_ref();
    let path = format!("op[{}]", i + 1);
    let name = r.kind.get_ref().as_str();
    let kind = MixOpKind::from_name(name).ok_or_else(|| {
        ctx.at(
            r.kind.span(),
            format!("{path}.kind"),
            format!(
                "{name:?} is not an operation{}; use {OP_KINDS}",
                kind_hint(name)
            ),
        )
    })?;
    let mut op = MixOp::new(kind, 0);
    op.weight = ctx.whole(&r.weight, &format!("{path}.weight"), 0, u64::from(u32::MAX))? as u32;
    if let Some(v) = &r.value_size {
        if !kind.writes() {
            return Err(ctx.at(
                v.span(),
                format!("{path}.value_size"),
                format!(
                    "a {kind} writes no value; only put, insert, merge and rmw take value_size"
                ),
            ));
        }
        op.value_size = size_from_raw(ctx, v, &format!("{path}.value_size"))?;
    }
    if let Some(v) = &r.scan_length {
        if kind != MixOpKind::Seek {
            return Err(ctx.at(
                v.span(),
                format!("{path}.scan_length"),
                format!("a {kind} does not scan; only seek takes scan_length"),
            ));
        }
        op.scan_length = size_from_raw(ctx, v, &format!("{path}.scan_length"))?;
    }
    if let Some(v) = &r.keys {
        if kind != MixOpKind::MultiGet {
            return Err(ctx.at(
                v.span(),
                format!("{path}.keys"),
                format!("a {kind} touches one key; only multiget takes keys (its batch)"),
            ));
        }
        op.keys = ctx.whole(v, &format!("{path}.keys"), 1, u64::from(MAX_BATCH))? as u32;
    }
    Ok(op)
}

/// Reads and checks a mix file. `file` names it in messages (and gives the mix its
/// name when the file has none): every error says file:line:column, the field, and
/// what to write instead.
pub fn parse_mix(text: &str, file: &str) -> Result<Mix, MixError> {
    let ctx = Ctx { text, file };
    let raw: RawMix = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    let name = match &raw.name {
        Some(n) if n.get_ref().trim().is_empty() || n.get_ref().contains(['\n', '\r']) => {
            return Err(ctx.at(
                n.span(),
                "name",
                "a mix's name is one line of text, not empty",
            ))
        }
        Some(n) => n.get_ref().clone(),
        None => std::path::Path::new(file)
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| !s.is_empty())
            .unwrap_or("mix")
            .to_string(),
    };
    let keys = match &raw.keys {
        Some(k) => key_spec_from_raw(&ctx, k)?,
        None => KeySpec::Uniform,
    };
    if raw.op.is_empty() {
        return Err(MixError::File {
            file: file.to_string(),
            field: "op".into(),
            message: "no operations; add at least one [[op]] with kind and weight, e.g. \
                      [[op]] kind = \"get\" weight = 1"
                .into(),
        });
    }
    let ops = raw
        .op
        .iter()
        .enumerate()
        .map(|(i, o)| op_from_raw(&ctx, i, o))
        .collect::<Result<Vec<_>, _>>()?;
    if ops.iter().all(|o| o.weight == 0) {
        return Err(ctx.at(
            raw.op[0].get_ref().weight.span(),
            "op[1].weight",
            "every op's weight is 0, so there is nothing to draw; give at least one op a \
             weight above 0",
        ));
    }
    let mut phases = Vec::with_capacity(raw.phase.len());
    for (i, rp) in raw.phase.iter().enumerate() {
        let path = format!("phase[{}]", i + 1);
        let r = rp.get_ref();
        let weights = match &r.weights {
            Some(w) => w
                .get_ref()
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    ctx.whole(
                        v,
                        &format!("{path}.weights[{}]", j + 1),
                        0,
                        u64::from(u32::MAX),
                    )
                    .map(|x| x as u32)
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => ops.iter().map(|o| o.weight).collect(),
        };
        let threads = match &r.threads {
            Some(t) => Some(ctx.whole(t, &format!("{path}.threads"), 0, 1024)? as u32),
            None => None,
        };
        let phase = MixPhase {
            secs: r.secs.as_ref().map_or(f64::INFINITY, |s| *s.get_ref()),
            weights,
            rate: r.rate.as_ref().map(|x| *x.get_ref()),
            threads,
        };
        phases.push(phase);
    }
    // Checked with each phase's place (a rule across phases points at the phase that
    // breaks it).
    for (i, rp) in raw.phase.iter().enumerate() {
        let r = rp.get_ref();
        if let Some((f, m)) = phase_problem(&phases[i], i, &phases, ops.len()) {
            let span = match f {
                "secs" => r.secs.as_ref().map(|s| s.span()),
                "weights" => r.weights.as_ref().map(|s| s.span()),
                "rate" => r.rate.as_ref().map(|s| s.span()),
                _ => r.threads.as_ref().map(|s| s.span()),
            }
            .unwrap_or(rp.span());
            return Err(ctx.at(span, format!("phase[{}].{f}", i + 1), m));
        }
    }
    let mix = Mix {
        name,
        description: raw
            .description
            .as_ref()
            .map(|d| d.get_ref().clone())
            .unwrap_or_default(),
        ops,
        keys,
        phases,
        one_draw: raw.one_draw.as_ref().is_some_and(|b| *b.get_ref()),
    };
    // Everything was checked with its place above; this cannot fail, but a rule added
    // to `validate` alone should still be enforced.
    mix.validate()?;
    Ok(mix)
}

// ---------------------------------------------------------------------------------
// db_bench's mixgraph as a mix.
// ---------------------------------------------------------------------------------

/// mixgraph's flags and db_bench's defaults for them (`DEFINE_*` in db_bench_tool.cc).
pub const MIXGRAPH_FLAGS: [(&str, &str); 18] = [
    ("mix_get_ratio", "1.0"),
    ("mix_put_ratio", "0.0"),
    ("mix_seek_ratio", "0.0"),
    ("keyrange_dist_a", "0.0"),
    ("keyrange_dist_b", "0.0"),
    ("keyrange_dist_c", "0.0"),
    ("keyrange_dist_d", "0.0"),
    ("keyrange_num", "1"),
    ("key_dist_a", "0.0"),
    ("key_dist_b", "0.0"),
    ("value_theta", "0.0"),
    ("value_k", "0.2615"),
    ("value_sigma", "25.45"),
    ("iter_theta", "0.0"),
    ("iter_k", "2.517"),
    ("iter_sigma", "14.236"),
    ("mix_max_value_size", "1024"),
    ("mix_max_scan_len", "10000"),
];

const INT_FLAGS: [&str; 3] = ["keyrange_num", "mix_max_value_size", "mix_max_scan_len"];

/// db_bench caps mixgraph's values at 1 MiB whatever `mix_max_value_size` says
/// (`default_value_max`).
const MIXGRAPH_VALUE_CAP: i64 = 1024 * 1024;

/// The description [`mixgraph`] gives, before the flags it was given.
const MIXGRAPH_DESCRIPTION: &str =
    "db_bench --benchmarks=mixgraph (RocksDB tools/db_bench_tool.cc MixGraph)";

/// db_bench's `mixgraph` benchmark as a mix, from db_bench's flag names and values
/// (`("mix_get_ratio", "0.85")`; a leading `-` or `--` is ignored; unset flags take
/// db_bench's defaults, listed in [`MIXGRAPH_FLAGS`]), so a published mixgraph command
/// line runs on every engine.
///
/// What maps, with db_bench's own arithmetic: the op shares (`QueryDecider`: each
/// weight is ⌈1000 · ratio / sum⌉, so 0.85/0.14/0.01 give 850/140/10); the keys
/// (`key_dist_a` or `key_dist_b` at 0, the default, means uniform keys and the
/// `keyrange_*` flags are ignored, as in db_bench; otherwise `power-keyrange`, with
/// db_bench's range table and its Mersenne Twister shuffle); the value sizes (Pareto
/// from `value_*`, below 10 bytes raised to 10, above min(`mix_max_value_size`, 1 MiB)
/// folded by `%`) and the scan lengths (Pareto from `iter_*` `% mix_max_scan_len`,
/// negative draws reading nothing). A σ of 0 makes a fixed size, as in db_bench.
///
/// One number per op, as db_bench draws it ([`Mix::one_draw`]): `ini` uniform below
/// num picks the op as `QueryDecider::GetType(ini)` does (`ini % 1000` against the
/// weights), is the key's draw, and `ini / num` is the Pareto quantile of the put's
/// value size and the seek's scan length, so a key always comes with the same op and
/// sizes (a key that is put is never read by a get, which is why db_bench's gets miss
/// more than independent draws would).
///
/// What does not map: the power model's rank is scattered by a hash, not a freshly
/// seeded Mersenne Twister (see `power-keyrange`): which keys are hot differs, not how
/// hot. The QPS sine (`sine_*`, `sine_mix_rate*`) is a pacing matter:
/// see [`mixgraph_rate_profile`]. `num` is the run's key count, `reads`/`duration` the
/// step's length, and a value's bytes come from the driver.
pub fn mixgraph(params: &[(String, String)]) -> Result<Mix, MixError> {
    let flags = MixgraphValues::parse(params)?;
    let [get_w, put_w, seek_w] = mixgraph_weights(&flags)?;
    let keys = mixgraph_keys(&flags)?;
    let (value_size, scan_length) = mixgraph_sizes(&flags)?;

    let get_op = MixOp::new(MixOpKind::Get, get_w);
    let mut put_op = MixOp::new(MixOpKind::Put, put_w);
    put_op.value_size = value_size;
    let mut seek_op = MixOp::new(MixOpKind::Seek, seek_w);
    seek_op.scan_length = scan_length;

    let mix = Mix {
        name: "mixgraph".into(),
        description: mixgraph_description(params),
        ops: vec![get_op, put_op, seek_op],
        keys,
        phases: Vec::new(),
        one_draw: true,
    };
    mix.validate()?;
    Ok(mix)
}

/// A refused mixgraph flag, named as db_bench names it so the user finds it on the
/// command line they copied.
fn flag_err(flag: &str, message: String) -> MixError {
    MixError::Flag {
        flag: flag.to_string(),
        message,
    }
}

/// Every mixgraph flag's value, the given ones over db_bench's defaults, so the
/// mapping below reads a flag by name without caring whether it was set.
struct MixgraphValues([f64; MIXGRAPH_FLAGS.len()]);

impl MixgraphValues {
    /// db_bench's defaults overridden by `params`, refusing a flag plumb does not map
    /// (saying where a `sine_*` flag belongs) or a value that is not a number.
    fn parse(params: &[(String, String)]) -> Result<Self, MixError> {
        let mut values = [0.0f64; MIXGRAPH_FLAGS.len()];
        for (i, (_, d)) in MIXGRAPH_FLAGS.iter().enumerate() {
            values[i] = d.parse().unwrap_or(0.0);
        }
        for (name, value) in params {
            let name = name.trim().trim_start_matches('-');
            let Some(i) = MIXGRAPH_FLAGS.iter().position(|(n, _)| *n == name) else {
                let known: Vec<&str> = MIXGRAPH_FLAGS.iter().map(|(n, _)| *n).collect();
                let why = if name.starts_with("sine_") {
                    "is db_bench's QPS sine, a pacing flag, not part of the mix: turn it into a \
                     rate profile with mixgraph_rate_profile; "
                } else {
                    "is not a mixgraph flag plumb maps; "
                };
                return Err(flag_err(name, format!("{why}known: {}", known.join(", "))));
            };
            let v = value.trim();
            let parsed = if INT_FLAGS.contains(&name) {
                v.parse::<i64>().ok().map(|x| x as f64)
            } else {
                v.parse::<f64>().ok().filter(|x| x.is_finite())
            };
            values[i] = parsed.ok_or_else(|| {
                flag_err(
                    name,
                    format!(
                        "{v:?} is not {} (db_bench's default is {})",
                        if INT_FLAGS.contains(&name) {
                            "a whole number"
                        } else {
                            "a finite number"
                        },
                        MIXGRAPH_FLAGS[i].1
                    ),
                )
            })?;
        }
        Ok(Self(values))
    }

    /// The value of the flag `name` (one of [`MIXGRAPH_FLAGS`]).
    fn get(&self, name: &str) -> f64 {
        MIXGRAPH_FLAGS
            .iter()
            .position(|(n, _)| *n == name)
            .map_or(0.0, |i| self.0[i])
    }
}

/// The get, put and seek weights, as `QueryDecider::Initiate` computes them.
fn mixgraph_weights(flags: &MixgraphValues) -> Result<[u32; 3], MixError> {
    let ratios = [
        ("mix_get_ratio", flags.get("mix_get_ratio")),
        ("mix_put_ratio", flags.get("mix_put_ratio")),
        ("mix_seek_ratio", flags.get("mix_seek_ratio")),
    ];
    if let Some((n, r)) = ratios.iter().find(|(_, r)| *r < 0.0) {
        return Err(flag_err(
            n,
            format!("{r} is a negative share; use 0 or more"),
        ));
    }
    let sum: f64 = ratios.iter().map(|(_, r)| r).sum();
    if sum <= 0.0 {
        return Err(flag_err(
            "mix_get_ratio",
            "mix_get_ratio, mix_put_ratio and mix_seek_ratio are all 0: nothing to run".into(),
        ));
    }
    let weight = |r: f64| (1000.0 * (r / sum)).ceil() as u32;
    Ok(ratios.map(|(_, r)| weight(r)))
}

/// The keys: MixGraph's use_random_modeling wins over use_prefix_modeling.
fn mixgraph_keys(flags: &MixgraphValues) -> Result<KeySpec, MixError> {
    let (ka, kb) = (flags.get("key_dist_a"), flags.get("key_dist_b"));
    if ka == 0.0 || kb == 0.0 {
        return Ok(KeySpec::Uniform);
    }
    for (n, v) in [("key_dist_a", ka), ("key_dist_b", kb)] {
        if v < 0.0 {
            return Err(flag_err(
                n,
                format!("{v}: the power model y = a*x^b needs a and b above 0 (db_bench would draw NaN)"),
            ));
        }
    }
    let mut p = PowerKeyrange {
        keyrange_dist_a: flags.get("keyrange_dist_a"),
        keyrange_dist_b: flags.get("keyrange_dist_b"),
        keyrange_dist_c: flags.get("keyrange_dist_c"),
        keyrange_dist_d: flags.get("keyrange_dist_d"),
        keyrange_num: 1,
        key_dist_a: ka,
        key_dist_b: kb,
    };
    if p.has_ranges() {
        // db_bench treats keyrange_num <= 0 as 1.
        let n = flags.get("keyrange_num").max(1.0);
        if n > f64::from(MAX_KEYRANGES) {
            return Err(flag_err(
                "keyrange_num",
                format!("{n} key ranges; plumb builds tables of up to {MAX_KEYRANGES}"),
            ));
        }
        p.keyrange_num = n as u32;
        if let Err(m) = keyrange_units(&p) {
            return Err(flag_err("keyrange_dist_a", m));
        }
    }
    Ok(KeySpec::PowerKeyrange(p))
}

/// The put's value sizes (the Put branch of MixGraph) and the seek's scan lengths (the
/// Seek branch), folded as db_bench folds them.
fn mixgraph_sizes(flags: &MixgraphValues) -> Result<(SizeDist, SizeDist), MixError> {
    let max_value = flags.get("mix_max_value_size") as i64;
    if max_value < 10 {
        return Err(flag_err(
            "mix_max_value_size",
            format!("{max_value}: db_bench raises values below 10 bytes to 10, so the most must be at least 10"),
        ));
    }
    let value_max = max_value.min(MIXGRAPH_VALUE_CAP) as u64;
    let value_size = pareto_flags(
        "value",
        flags.get("value_theta"),
        flags.get("value_k"),
        flags.get("value_sigma"),
        10,
        value_max,
        value_max,
    )?;

    let max_scan = flags.get("mix_max_scan_len") as i64;
    if max_scan < 1 || max_scan as u64 > MAX_SIZE {
        return Err(flag_err(
            "mix_max_scan_len",
            format!("{max_scan}: db_bench takes scan lengths % mix_max_scan_len, so it must be from 1 to {MAX_SIZE}"),
        ));
    }
    let scan_length = pareto_flags(
        "iter",
        flags.get("iter_theta"),
        flags.get("iter_k"),
        flags.get("iter_sigma"),
        0,
        max_scan as u64 - 1,
        max_scan as u64,
    )?;
    Ok((value_size, scan_length))
}

/// [`MIXGRAPH_DESCRIPTION`] followed by the flags as given, so a stored run says which
/// command line it reproduces.
fn mixgraph_description(params: &[(String, String)]) -> String {
    let mut description = MIXGRAPH_DESCRIPTION.to_string();
    for (n, v) in params {
        description.push_str(&format!(
            " -{}={}",
            n.trim().trim_start_matches('-'),
            v.trim()
        ));
    }
    description
}

/// A mixgraph Pareto from its `<prefix>_theta/_k/_sigma` flags, folded as db_bench
/// folds it: draws below `min` become `min`, above `max` become `% wrap`.
fn pareto_flags(
    prefix: &str,
    theta: f64,
    k: f64,
    sigma: f64,
    min: u64,
    max: u64,
    wrap: u64,
) -> Result<SizeDist, MixError> {
    if sigma < 0.0 {
        return Err(MixError::Flag {
            flag: format!("{prefix}_sigma"),
            message: format!("{sigma}: the Pareto scale must be 0 or more"),
        });
    }
    if sigma == 0.0 {
        // θ + 0·(…) = θ: every draw is ⌈θ⌉, folded.
        return Ok(SizeDist::Fixed(fold(
            cast_i64(theta.ceil()),
            min,
            max,
            Some(wrap),
        )));
    }
    Ok(SizeDist::Pareto {
        theta,
        k,
        sigma,
        min,
        max,
        wrap: Some(wrap),
    })
}

/// db_bench's mixgraph QPS, `sine_a·sin(sine_b·t + sine_c) + sine_d` ops/s at t
/// seconds (`SineRate`, applied with `-sine_mix_rate`), as plumb's rate profile text
/// (`sine:mean=M,amp=A,period=P`, see [`crate::RateProfile`]): mean = d, amp = |a|,
/// period = 2π/|b| seconds; a negative a or b is the same wave shifted, and is turned
/// into a phase.
///
/// What cannot map directly is the phase c: plumb's sine starts at phase 0. So the
/// first partial cycle, from phase c up to 2π, is written as up to 32 linear ramps
/// through db_bench's curve (off by at most 0.5 % of the amplitude), and the sine
/// starts where db_bench's wave crosses phase 0, from then on exact. b = 0 (or a = 0)
/// is a constant rate, written as a hold. A wave that dips below zero (|a| > d) is
/// refused: db_bench keeps its last positive rate there, which no profile states.
///
/// What is db_bench's alone: it samples the sine only every
/// `sine_mix_rate_interval_milliseconds` (10 s by default) and holds the rate between
/// samples (plumb's is continuous), runs the first interval at its 10^6 ops/s start
/// value, adds `sine_mix_rate_noise`, and caps a closed loop with rate limiters where
/// plumb offers an open-loop schedule (a slow op shows as lateness). Like db_bench's
/// shared limiters, the profile is the step's total over all threads.
pub fn mixgraph_rate_profile(
    sine_a: f64,
    sine_b: f64,
    sine_c: f64,
    sine_d: f64,
) -> Result<String, MixError> {
    let bad = |message: String| MixError::Rate { message };
    if ![sine_a, sine_b, sine_c, sine_d]
        .iter()
        .all(|x| x.is_finite())
    {
        return Err(bad(format!(
            "sine_a {sine_a}, sine_b {sine_b}, sine_c {sine_c} and sine_d {sine_d} must be \
             finite numbers"
        )));
    }
    let (mut a, mut b, mut c, d) = (sine_a, sine_b, sine_c, sine_d);
    if a == 0.0 || b == 0.0 {
        let r = a * c.sin() + d;
        if r <= 0.0 {
            return Err(bad(format!(
                "a constant rate of {r} ops/s offers nothing; sine_d is the mean rate"
            )));
        }
        return Ok(format!("hold:{}", r + 0.0));
    }
    if b < 0.0 {
        // a·sin(−|b|t + c) = (−a)·sin(|b|t − c)
        a = -a;
        b = -b;
        c = -c;
    }
    if a < 0.0 {
        a = -a;
        c += PI;
    }
    if a > d {
        return Err(bad(format!(
            "amplitude {a} above mean sine_d {d}: the rate would go below zero, where \
             db_bench keeps its last positive rate; plumb's sine needs sine_a <= sine_d"
        )));
    }
    let period = TAU / b;
    let sine = format!("sine:mean={},amp={},period={}s", d + 0.0, a + 0.0, period);
    let c = c.rem_euclid(TAU);
    // Seconds until db_bench's phase b·t + c reaches 2π, where plumb's sine starts.
    let lead = (TAU - c) / b;
    if c < 1e-9 || TAU - c < 1e-9 {
        return Ok(sine);
    }
    let rate = |t: f64| (a * (b * t + c).sin() + d).max(0.0) + 0.0;
    let n = ((32.0 * lead / period).ceil() as usize).clamp(1, 32);
    let dt = lead / n as f64;
    let mut out = String::new();
    for i in 0..n {
        let (t0, t1) = (i as f64 * dt, (i + 1) as f64 * dt);
        out.push_str(&format!("ramp:{}..{}/{}s,", rate(t0), rate(t1), dt));
    }
    out.push_str(&sine);
    Ok(out)
}

#[cfg(test)]
mod db_bench_keys {
    use super::*;

    #[test]
    fn the_first_mt64_output_is_cpps() {
        // std::mt19937_64's first outputs for seeds 5489 (its default: the C++
        // standard's 10000th-output check does not apply to the first) and 0, 1.
        assert_eq!(first_mt64(5489), 14_514_284_786_278_117_030);
        assert_eq!(first_mt64(0), 2_947_667_278_772_165_694);
        assert_eq!(first_mt64(1), 2_469_588_189_546_311_528);
    }

    #[test]
    fn plain_power_keys_wrap_as_db_benchs_do() {
        // Golden keys from db_bench's formula with std::mt19937_64 (C++, num = 1e6,
        // key_dist_a 0.002312, key_dist_b 0.3467, no key ranges).
        let p = PowerKeyrange {
            keyrange_dist_a: 0.0,
            keyrange_dist_b: 0.0,
            keyrange_dist_c: 0.0,
            keyrange_dist_d: 0.0,
            keyrange_num: 1,
            key_dist_a: 0.002312,
            key_dist_b: 0.3467,
        };
        let k = PowerKeys::new(&p, 1_000_000).unwrap();
        for (ini, want) in [
            (0u64, 165_694u64),
            (1, 311_528),
            (2312, 311_528),
            (2313, 18_446_744_073_709_154_828),
            (5000, 18_446_744_073_708_791_794),
            (123_456, 18_446_744_073_709_168_436),
            (500_000, 18_446_744_073_709_378_270),
            (999_999, 18_446_744_073_709_268_642),
        ] {
            assert_eq!(k.key_of(ini), want, "ini {ini}");
        }
        // Over every draw, the share of wrapped keys is db_bench's 0.50056.
        let wrapped = (0..1_000_000u64)
            .filter(|&i| k.key_of(i) >= 1_000_000)
            .count() as f64
            / 1e6;
        assert!((wrapped - 0.50056).abs() < 0.0005, "{wrapped}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::{zeta, SCRAMBLED_ZETAN};
    use crate::RateProfile;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// Counts this thread's allocations, so a test can show the sampler makes none
    /// (other test threads' allocations do not count).
    struct Counting;

    thread_local! {
        static ALLOCS: Cell<u64> = const { Cell::new(0) };
    }

    fn count() {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            count();
            // SAFETY: forwarded unchanged to the system allocator.
            unsafe { System.alloc(l) }
        }
        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            count();
            // SAFETY: as above.
            unsafe { System.alloc_zeroed(l) }
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
            count();
            // SAFETY: as above.
            unsafe { System.realloc(p, l, n) }
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            // SAFETY: as above.
            unsafe { System.dealloc(p, l) }
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;

    fn allocs() -> u64 {
        ALLOCS.with(Cell::get)
    }

    const EXAMPLES: [(&str, &str); 10] = [
        (
            "phases.toml",
            include_str!("../../../examples/mixes/phases.toml"),
        ),
        (
            "ycsb-a.toml",
            include_str!("../../../examples/mixes/ycsb-a.toml"),
        ),
        (
            "ycsb-b.toml",
            include_str!("../../../examples/mixes/ycsb-b.toml"),
        ),
        (
            "ycsb-c.toml",
            include_str!("../../../examples/mixes/ycsb-c.toml"),
        ),
        (
            "ycsb-d.toml",
            include_str!("../../../examples/mixes/ycsb-d.toml"),
        ),
        (
            "ycsb-e.toml",
            include_str!("../../../examples/mixes/ycsb-e.toml"),
        ),
        (
            "ycsb-f.toml",
            include_str!("../../../examples/mixes/ycsb-f.toml"),
        ),
        (
            "readrandomwriterandom.toml",
            include_str!("../../../examples/mixes/readrandomwriterandom.toml"),
        ),
        (
            "mixgraph.toml",
            include_str!("../../../examples/mixes/mixgraph.toml"),
        ),
        (
            "mixgraph-prefix-dist.toml",
            include_str!("../../../examples/mixes/mixgraph-prefix-dist.toml"),
        ),
    ];

    /// The flags of RocksDB PR 5953's example command (the mixgraph paper's fits).
    const PAPER_FLAGS: [(&str, &str); 15] = [
        ("key_dist_a", "0.002312"),
        ("key_dist_b", "0.3467"),
        ("keyrange_dist_a", "14.18"),
        ("keyrange_dist_b", "-2.917"),
        ("keyrange_dist_c", "0.0164"),
        ("keyrange_dist_d", "-0.08082"),
        ("keyrange_num", "30"),
        ("value_k", "0.2615"),
        ("value_sigma", "25.45"),
        ("iter_k", "2.517"),
        ("iter_sigma", "14.236"),
        ("mix_get_ratio", "0.85"),
        ("mix_put_ratio", "0.14"),
        ("mix_seek_ratio", "0.01"),
        ("mix_max_value_size", "1024"),
    ];

    fn flags(f: &[(&str, &str)]) -> Vec<(String, String)> {
        f.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn example(name: &str) -> Mix {
        let (_, text) = EXAMPLES.iter().find(|(n, _)| *n == name).unwrap();
        parse_mix(text, name).unwrap()
    }

    fn shares(mix: &Mix, draws: usize, seed: u64) -> Vec<f64> {
        let mut s = mix.sampler(10_000, 100, seed).unwrap();
        let mut n = vec![0usize; mix.ops.len()];
        for _ in 0..draws {
            n[s.next_op()] += 1;
        }
        n.iter().map(|c| *c as f64 / draws as f64).collect()
    }

    fn assert_shares(mix: &Mix, want: &[f64]) {
        let got = shares(mix, 100_000, 7);
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() < 0.01,
                "{} op {} ({}): drew {g}, want {w}",
                mix.name,
                i,
                mix.ops[i].kind
            );
        }
    }

    #[test]
    fn every_example_parses_round_trips_and_draws_its_weights() {
        for (name, text) in EXAMPLES {
            let mix = parse_mix(text, name).unwrap_or_else(|e| panic!("{e}"));
            let again = parse_mix(&mix.to_toml(), name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(again, mix, "{name}:\n{}", mix.to_toml());
            let sum: f64 = mix.ops.iter().map(|o| f64::from(o.weight)).sum();
            let want: Vec<f64> = mix.ops.iter().map(|o| f64::from(o.weight) / sum).collect();
            assert_shares(&mix, &want);
        }
    }

    #[test]
    fn ycsb_examples_carry_ycsbs_mixes() {
        let kinds = |m: &Mix| -> Vec<(MixOpKind, u32)> {
            m.ops.iter().map(|o| (o.kind, o.weight)).collect()
        };
        use MixOpKind::*;
        assert_eq!(kinds(&example("ycsb-a.toml")), [(Get, 50), (Put, 50)]);
        assert_eq!(kinds(&example("ycsb-b.toml")), [(Get, 95), (Put, 5)]);
        assert_eq!(kinds(&example("ycsb-c.toml")), [(Get, 100)]);
        assert_eq!(kinds(&example("ycsb-d.toml")), [(Get, 95), (Insert, 5)]);
        assert_eq!(kinds(&example("ycsb-e.toml")), [(Seek, 95), (Insert, 5)]);
        assert_eq!(kinds(&example("ycsb-f.toml")), [(Get, 50), (Rmw, 50)]);
        for l in ['a', 'b', 'c', 'e', 'f'] {
            let m = example(&format!("ycsb-{l}.toml"));
            assert_eq!(m.keys, KeySpec::ScrambledZipfian { theta: 0.99 }, "{l}");
        }
        assert_eq!(example("ycsb-d.toml").keys, KeySpec::Latest { theta: 0.99 });
        assert_eq!(
            example("ycsb-e.toml").ops[0].scan_length,
            SizeDist::Uniform { min: 1, max: 100 }
        );
        let rw = example("readrandomwriterandom.toml");
        assert_eq!(kinds(&rw), [(Get, 90), (Put, 10)]);
        assert_eq!(rw.keys, KeySpec::Uniform);
    }

    #[test]
    fn mixgraph_defaults_are_the_example_file() {
        let m = mixgraph(&[]).unwrap();
        assert_eq!(m, example("mixgraph.toml"));
        assert_eq!(
            m.ops.iter().map(|o| o.weight).collect::<Vec<_>>(),
            [1000, 0, 0]
        );
        assert_eq!(m.keys, KeySpec::Uniform);
        assert_shares(&m, &[1.0, 0.0, 0.0]);
        let paper = mixgraph(&flags(&PAPER_FLAGS)).unwrap();
        let file = example("mixgraph-prefix-dist.toml");
        assert_eq!((paper.ops.clone(), paper.keys), (file.ops, file.keys));
        assert_eq!(
            paper.ops.iter().map(|o| o.weight).collect::<Vec<_>>(),
            [850, 140, 10]
        );
        assert_shares(&paper, &[0.85, 0.14, 0.01]);
        assert_eq!(parse_mix(&paper.to_toml(), "x.toml").unwrap(), paper);
        // QueryDecider rounds each share up: thirds become 334 each.
        let thirds = mixgraph(&flags(&[
            ("mix_get_ratio", "1"),
            ("mix_put_ratio", "1"),
            ("--mix_seek_ratio", "1"),
        ]))
        .unwrap();
        assert_eq!(
            thirds.ops.iter().map(|o| o.weight).collect::<Vec<_>>(),
            [334, 334, 334]
        );
        // Power keys without key ranges; key ranges without power keys are ignored.
        let p = mixgraph(&flags(&[
            ("key_dist_a", "0.002312"),
            ("key_dist_b", "0.3467"),
        ]))
        .unwrap();
        assert!(
            matches!(p.keys, KeySpec::PowerKeyrange(k) if k.keyrange_num == 1 && !k.has_ranges())
        );
        let u = mixgraph(&flags(&[
            ("keyrange_dist_a", "14.18"),
            ("keyrange_num", "30"),
        ]))
        .unwrap();
        assert_eq!(u.keys, KeySpec::Uniform);
        // σ = 0 is a fixed size, folded as db_bench folds it.
        let z = mixgraph(&flags(&[("value_sigma", "0"), ("value_theta", "3")])).unwrap();
        assert_eq!(z.ops[1].value_size, SizeDist::Fixed(10));
    }

    #[test]
    fn mixgraph_refuses_unknown_and_bad_flags_by_name() {
        let e = mixgraph(&flags(&[("mix_get_ration", "1")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("-mix_get_ration") && e.contains("mix_get_ratio, mix_put_ratio"),
            "{e}"
        );
        let e = mixgraph(&flags(&[("sine_a", "1")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("mixgraph_rate_profile"), "{e}");
        for (f, v, says) in [
            ("value_k", "abc", "finite number"),
            ("keyrange_num", "1.5", "whole number"),
            ("mix_put_ratio", "-1", "negative"),
            ("mix_max_value_size", "5", "at least 10"),
            ("mix_max_scan_len", "0", "from 1"),
            ("value_sigma", "-1", "0 or more"),
        ] {
            let e = mixgraph(&flags(&[(f, v)])).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("mixgraph -{f}: ")) && e.contains(says),
                "{e}"
            );
        }
        let e = mixgraph(&flags(&[("mix_get_ratio", "0")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("all 0"), "{e}");
        let e = mixgraph(&flags(&[
            ("key_dist_a", "0.1"),
            ("key_dist_b", "0.1"),
            ("keyrange_dist_a", "1e-20"),
            ("keyrange_num", "4"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("below 1e-16"), "{e}");
    }

    /// The generalized Pareto's CDF, F(x) = 1 − (1 + k(x − θ)/σ)^(−1/k), for x ≥ θ.
    fn gpd_cdf(x: f64, theta: f64, k: f64, sigma: f64) -> f64 {
        if x < theta {
            0.0
        } else {
            1.0 - (1.0 + k * (x - theta) / sigma).powf(-1.0 / k)
        }
    }

    #[test]
    fn mixgraph_value_sizes_follow_the_folded_pareto() {
        let m = mixgraph(&[]).unwrap();
        let mut s = m.sampler(1_000_000, 100, 3).unwrap();
        let (k, sigma) = (0.2615, 25.45);
        // Analytic mean of max(10, ⌈X⌉) with draws above 1024 taken % 1024.
        let mut mean = 0.0;
        for n in 1..2_000_000u64 {
            let p = gpd_cdf(n as f64, 0.0, k, sigma) - gpd_cdf(n as f64 - 1.0, 0.0, k, sigma);
            let v = if n < 10 {
                10
            } else if n > 1024 {
                n % 1024
            } else {
                n
            };
            mean += v as f64 * p;
        }
        let draws = 200_000;
        let mut sum = 0.0;
        let mut at_most = [0usize; 4];
        let points = [10u64, 20, 35, 100];
        for _ in 0..draws {
            let v = s.value_size(1) as u64;
            assert!(v <= 1024, "{v}");
            sum += v as f64;
            for (i, p) in points.iter().enumerate() {
                at_most[i] += usize::from(v <= *p);
            }
        }
        let got = sum / draws as f64;
        assert!((got - mean).abs() / mean < 0.02, "mean {got} vs {mean}");
        assert!((mean - 35.5).abs() < 2.0, "analytic mean {mean}");
        for (i, p) in points.iter().enumerate() {
            let want = gpd_cdf(*p as f64, 0.0, k, sigma);
            let share = at_most[i] as f64 / draws as f64;
            assert!(
                (share - want).abs() < 0.005,
                "P(v <= {p}) {share} vs {want}"
            );
        }
    }

    #[test]
    fn mixgraph_scan_lengths_follow_the_pareto_mod_the_max() {
        let m = mixgraph(&[]).unwrap();
        let mut s = m.sampler(1_000_000, 100, 4).unwrap();
        let (k, sigma, max) = (2.517, 14.236, 10_000u64);
        let f = |x: f64| gpd_cdf(x, 0.0, k, sigma);
        let points = [1u64, 5, 10, 27, 100, 1000];
        let draws = 200_000;
        let mut at_most = [0usize; 6];
        for _ in 0..draws {
            let v = s.scan_length(2) as u64;
            assert!(v < max, "{v}");
            for (i, p) in points.iter().enumerate() {
                at_most[i] += usize::from(v <= *p);
            }
        }
        for (i, p) in points.iter().enumerate() {
            // ⌈X⌉ ≤ p directly, or ⌈X⌉ in [j·max, j·max + p] folded down.
            let wrapped: f64 = (1..5000u64)
                .map(|j| f((j * max + p) as f64) - f((j * max) as f64 - 1.0))
                .sum();
            let want = f(*p as f64) + wrapped;
            let share = at_most[i] as f64 / draws as f64;
            assert!(
                (share - want).abs() < 0.006,
                "P(scan <= {p}) {share} vs {want}"
            );
        }
        // The median of ⌈X⌉: σ(2^k − 1)/k ≈ 26.7.
        assert!((f(27.0) - 0.5).abs() < 0.01);
    }

    #[test]
    fn folding_is_db_benchs() {
        // Values: below 10 raised, above the most folded by %.
        for (x, want) in [
            (5, 10),
            (10, 10),
            (1024, 1024),
            (1025, 1),
            (2048, 0),
            (i64::MIN, 10),
        ] {
            assert_eq!(fold(x, 10, 1024, Some(1024)), want, "{x}");
        }
        // Scans: x % max for every x >= 0, nothing for negative draws.
        for (x, want) in [
            (0, 0),
            (9999, 9999),
            (10_000, 0),
            (12_345, 2345),
            (-5, 0),
            (i64::MIN, 0),
        ] {
            assert_eq!(fold(x, 0, 9999, Some(10_000)), want, "{x}");
        }
        assert_eq!(fold(5000, 0, 100, None), 100);
        // u = 0 is infinite, which db_bench's cast turns into i64::MIN.
        assert_eq!(pareto_inversion(0.0, 0.0, 0.2615, 25.45), i64::MIN);
        assert_eq!(
            pareto_inversion(0.5, 0.0, 0.0, 10.0),
            (10.0 * 2f64.ln()).ceil() as i64
        );
    }

    #[test]
    fn mersenne_twister_is_the_standards() {
        // [rand.predef]: the 10000th output of a default-constructed mt19937_64.
        let mut mt = Mt64::new(5489);
        let mut v = 0;
        for _ in 0..10_000 {
            v = mt.next_u64();
        }
        assert_eq!(v, 9_981_545_732_273_789_042);
    }

    fn power_paper() -> PowerKeyrange {
        PowerKeyrange {
            keyrange_dist_a: 14.18,
            keyrange_dist_b: -2.917,
            keyrange_dist_c: 0.0164,
            keyrange_dist_d: -0.08082,
            keyrange_num: 30,
            key_dist_a: 0.002312,
            key_dist_b: 0.3467,
        }
    }

    #[test]
    fn power_keyrange_hottest_range_and_key_take_their_analytic_shares() {
        let p = power_paper();
        let num = 3_000_000u64;
        let size = num / 30;
        let mix = Mix {
            name: "p".into(),
            description: String::new(),
            ops: vec![MixOp::new(MixOpKind::Get, 1)],
            keys: KeySpec::PowerKeyrange(p),
            phases: Vec::new(),
            one_draw: false,
        };
        let mut s = mix.sampler(num, 100, 11).unwrap();
        let draws = 400_000;
        let mut ranges = [0usize; 30];
        let mut keys = std::collections::HashMap::new();
        for _ in 0..draws {
            let k = s.key();
            assert!(k < num);
            ranges[(k / size) as usize] += 1;
            *keys.entry(k).or_insert(0usize) += 1;
        }
        // db_bench's probability of range x: its hotness h(x), scaled by 1/h(30) + 1 (the
        // first range it builds) and floored, over the sum of all.
        let h = |x: f64| 14.18 * (-2.917 * x).exp() + 0.0164 * (-0.08082 * x).exp();
        let amplify = (1.0 / h(30.0)).floor() + 1.0;
        let access = |x: f64| (amplify * h(x)).floor();
        let want = access(1.0) / (1..=30).map(|x| access(x as f64)).sum::<f64>();
        let hottest = *ranges.iter().max().unwrap() as f64 / draws as f64;
        assert!(
            (hottest - want).abs() < 0.005,
            "hottest range {hottest} vs {want}"
        );
        // Flooring the colder ranges' small counts makes the hottest about 2% hotter
        // than the fitted curve alone says.
        let curve = h(1.0) / (1..=30).map(|x| h(x as f64)).sum::<f64>();
        assert!(want > curve && want < curve * 1.03, "{want} vs {curve}");
        // Within a range, rank 1 of the power model takes P(u <= a) = a.
        let top = *keys.values().max().unwrap() as f64 / draws as f64;
        let want_key = want * 0.002312;
        assert!(
            (top - want_key).abs() < 0.2 * want_key,
            "hottest key {top} vs {want_key}"
        );
        // The table's layout is db_bench's: the hottest range sits where its shuffle puts it.
        let units = keyrange_units(&p).unwrap();
        let top_unit = (0..30).max_by_key(|i| units[*i].access).unwrap();
        let top_range = (0..30).max_by_key(|i| ranges[*i]).unwrap();
        assert_eq!(top_unit, top_range);
        // Too few keys for the ranges is an error, not a division by zero.
        let e = mix.sampler(20, 100, 1).unwrap_err().to_string();
        assert!(
            e.contains("keys.keyrange_num") && e.contains("30 key ranges"),
            "{e}"
        );
    }

    fn draws_of(keys: KeySpec, num: u64, draws: usize) -> (MixSampler, Vec<usize>) {
        let mix = Mix {
            name: "k".into(),
            description: String::new(),
            ops: vec![MixOp::new(MixOpKind::Get, 1)],
            keys,
            phases: Vec::new(),
            one_draw: false,
        };
        let mut s = mix.sampler(num, 100, 5).unwrap();
        let mut c = vec![0usize; num as usize];
        for _ in 0..draws {
            c[s.key() as usize] += 1;
        }
        (s, c)
    }

    /// 5 standard deviations of a binomial share, at least 0.002.
    fn tol(p: f64, n: usize) -> f64 {
        (5.0 * (p * (1.0 - p) / n as f64).sqrt()).max(0.002)
    }

    #[test]
    fn hotspot_zipfian_scrambled_and_latest_take_their_analytic_shares() {
        let n = 200_000;
        let (_, c) = draws_of(
            KeySpec::Hotspot {
                hot_fraction: 0.2,
                hot_ops: 0.8,
            },
            1000,
            n,
        );
        let hot = c[..200].iter().sum::<usize>() as f64 / n as f64;
        assert!((hot - 0.8).abs() < 0.01, "hotspot {hot}");

        let (_, c) = draws_of(KeySpec::Zipfian { theta: 0.99 }, 1000, n);
        let top = *c.iter().max().unwrap() as f64 / n as f64;
        let want = 1.0 / zeta(1000, 0.99);
        assert!((top - want).abs() < tol(want, n), "zipfian {top} vs {want}");

        let (_, c) = draws_of(KeySpec::ScrambledZipfian { theta: 0.99 }, 1000, n);
        let top = *c.iter().max().unwrap() as f64 / n as f64;
        // Rank 0's share, plus the ranks that hash onto the same key (about 1/num).
        let want = 1.0 / SCRAMBLED_ZETAN + 1.0 / 1000.0;
        assert!((top - want).abs() < 0.004, "scrambled {top} vs {want}");

        let (mut s, c) = draws_of(KeySpec::Latest { theta: 0.99 }, 1000, n);
        let want = 1.0 / zeta(999, 0.99);
        let newest = c[999] as f64 / n as f64;
        assert!(
            (newest - want).abs() < tol(want, n),
            "latest {newest} vs {want}"
        );
        assert_eq!(c[0], 0, "YCSB's latest never draws the oldest key");
        // After an insert the new key is the hottest.
        let k = s.insert_key();
        assert_eq!(k, 1000);
        s.inserted(k);
        let hits = (0..n).filter(|_| s.key() == 1000).count() as f64 / n as f64;
        let want = 1.0 / zeta(1000, 0.99);
        assert!(
            (hits - want).abs() < tol(want, n),
            "latest after insert {hits} vs {want}"
        );
    }

    #[test]
    fn sequential_and_inserts_split_by_thread() {
        let mix = parse_mix(
            "[keys]\ndistribution = \"sequential\"\n[[op]]\nkind = \"insert\"\nweight = 1\n",
            "s.toml",
        )
        .unwrap();
        let mut s = mix.thread_sampler(10, 100, 1, 1, 2).unwrap();
        let keys: Vec<u64> = (0..7).map(|_| s.key()).collect();
        assert_eq!(keys, [5, 6, 7, 8, 9, 0, 1]);
        let ins: Vec<u64> = (0..3).map(|_| s.insert_key()).collect();
        assert_eq!(ins, [11, 13, 15]);
        assert_eq!(s.value_size(0), 100);
        assert_eq!(s.value_size(5), 0);
        assert!(mix.thread_sampler(10, 100, 1, 2, 2).is_err());
        assert!(mix.sampler(0, 100, 1).is_err());
    }

    fn err(text: &str) -> String {
        parse_mix(text, "mix.toml").unwrap_err().to_string()
    }

    #[test]
    fn bad_input_names_file_line_and_field() {
        let e = err("name = \"m\"\n[[op]]\nkind = \"get\"\nweight = 1\n[[op]]\nkind = \"scan\"\nweight = 1\n");
        assert_eq!(
            e,
            "mix.toml:6:8: op[2].kind: \"scan\" is not an operation (a scan is seek with \
             scan_length); use get, put, insert, delete, seek, multiget, merge or rmw"
        );
        let e = err("[[op]]\nkind = \"get\"\nweight = 1\ncolour = 3\n");
        assert!(
            e.starts_with("mix.toml:4:1: op[1].colour: unknown field `colour`"),
            "{e}"
        );
        assert!(e.contains("`kind`, `weight`"), "{e}");
        let e = err("[[op]]\nkind = \"get\"\nweight = 0\n[[op]]\nkind = \"put\"\nweight = 0\n");
        assert!(
            e.starts_with("mix.toml:3:10: op[1].weight: every op's weight is 0"),
            "{e}"
        );
        let e = err(
            "[[op]]\nkind = \"seek\"\nweight = 1\nscan_length = { dist = \"uniform\", min = 100, max = 10 }\n",
        );
        assert!(
            e.starts_with("mix.toml:4:41: op[1].scan_length.min: min 100 is above max 10"),
            "{e}"
        );
        let e = err("[keys]\ndistribution = \"scrambled-zipfian\"\ntheta = 1.2\n[[op]]\nkind = \"get\"\nweight = 1\n");
        assert!(
            e.starts_with("mix.toml:3:9: keys.theta: theta 1.2 is outside 0 < theta < 1"),
            "{e}"
        );
        let e = err(
            "[keys]\ndistribution = \"zipfian\"\ntheta = -1\n[[op]]\nkind = \"get\"\nweight = 1\n",
        );
        assert!(e.starts_with("mix.toml:3:9: keys.theta: "), "{e}");
        for (text, starts) in [
            ("[[op]]\nkind = \"get\"\nweight = \"x\"\n", "mix.toml:3:10: op[1].weight: "),
            ("[[op]]\nkind = \"get\"\nweight = 1.5\n", "mix.toml:3:10: op[1].weight: 1.5 is not a whole number"),
            ("[[op]]\nweight = 1\n", "mix.toml:1:1: op[1]: missing field `kind`"),
            ("[op]\nkind = \"get\"\nweight = 1\n", "mix.toml:1:1: op: "),
            (
                "[[op]]\nkind = \"get\"\nweight = 1\nvalue_size = { dist = \"fixed\", size = 5 }\n",
                "mix.toml:4:14: op[1].value_size: a get writes no value",
            ),
            (
                "[[op]]\nkind = \"put\"\nweight = 1\nvalue_size = { dist = \"normal\", size = 5 }\n",
                "mix.toml:4:23: op[1].value_size.dist: \"normal\" is not a size distribution",
            ),
            (
                "[[op]]\nkind = \"put\"\nweight = 1\nvalue_size = { dist = \"pareto\", k = 0.2 }\n",
                "mix.toml:4:14: op[1].value_size.sigma: sigma is missing: pareto needs k, sigma and max",
            ),
            ("[keys]\ndistribution = \"zipf\"\n", "mix.toml:2:16: keys.distribution: \"zipf\" is not a key distribution (did you mean zipfian?)"),
            ("[keys]\ndistribution = \"uniform\"\ntheta = 0.5\n", "mix.toml:3:9: keys.theta: uniform does not take theta"),
            ("[keys]\ndistribution = \"hotspot\"\nhot_fraction = 0\n[[op]]\nkind = \"get\"\nweight = 1\n", "mix.toml:3:16: keys.hot_fraction: "),
            ("name = \"x\"\n", "mix.toml: op: no operations"),
            ("[[op]\n", "mix.toml:1:"),
        ] {
            let e = err(text);
            assert!(e.starts_with(starts), "{text}\n=> {e}\nwanted {starts}");
        }
    }

    #[test]
    fn names_repeat_with_a_number() {
        let m = parse_mix(
            "[[op]]\nkind = \"get\"\nweight = 1\n[[op]]\nkind = \"put\"\nweight = 1\n\
             [[op]]\nkind = \"get\"\nweight = 1\n[[op]]\nkind = \"multiget\"\nweight = 1\nkeys = 4\n",
            "dir/my-mix.toml",
        )
        .unwrap();
        assert_eq!(m.name, "my-mix");
        assert_eq!(m.op_names(), ["get", "put", "get#2", "multiget"]);
        assert_eq!(m.ops[3].keys, 4);
        assert_eq!(m.ops[1].value_size, SizeDist::RunDefault);
        assert_eq!(parse_mix(&m.to_toml(), "x").unwrap(), m);
    }

    #[test]
    fn built_mixes_are_validated() {
        let mut m = example("ycsb-a.toml");
        m.ops[1].value_size = SizeDist::Uniform { min: 9, max: 3 };
        let e = m.sampler(10, 10, 1).unwrap_err().to_string();
        assert!(e.contains("op[2].value_size.min"), "{e}");
        m.ops[1].value_size = SizeDist::RunDefault;
        m.keys = KeySpec::Hotspot {
            hot_fraction: 0.0001,
            hot_ops: 0.5,
        };
        let e = m.sampler(10, 10, 1).unwrap_err().to_string();
        assert!(e.contains("keys.hot_fraction"), "{e}");
    }

    #[test]
    fn sampling_allocates_nothing() {
        let mut mixes: Vec<Mix> = EXAMPLES
            .iter()
            .map(|(n, t)| parse_mix(t, n).unwrap())
            .collect();
        mixes.push(mixgraph(&flags(&PAPER_FLAGS)).unwrap());
        for keys in [
            KeySpec::Zipfian { theta: 0.99 },
            KeySpec::Hotspot {
                hot_fraction: 0.2,
                hot_ops: 0.8,
            },
            KeySpec::Sequential,
        ] {
            let mut m = example("ycsb-a.toml");
            m.keys = keys;
            m.ops[1].value_size = SizeDist::Zipfian {
                min: 1,
                max: 100,
                theta: 0.99,
            };
            mixes.push(m);
        }
        for m in &mixes {
            let mut s = m.sampler(100_000, 100, 9).unwrap();
            let before = allocs();
            let mut sink = 0usize;
            for _ in 0..20_000 {
                let op = s.next_op();
                sink = sink.wrapping_add(s.key() as usize);
                sink = sink.wrapping_add(s.value_size(op) + s.scan_length(op));
                if m.ops[op].kind == MixOpKind::Insert {
                    let k = s.insert_key();
                    s.inserted(k);
                }
            }
            assert_eq!(allocs() - before, 0, "{} allocated ({sink})", m.name);
        }
    }

    fn sine_rate(a: f64, b: f64, c: f64, d: f64, t: f64) -> f64 {
        a * (b * t + c).sin() + d
    }

    #[test]
    fn mixgraph_sine_maps_to_a_rate_profile() {
        assert_eq!(
            mixgraph_rate_profile(1.0, 1.0, 0.0, 1.0).unwrap(),
            format!("sine:mean=1,amp=1,period={}s", TAU)
        );
        for (a, b, c, d) in [
            (350.0, 0.0105, 0.0, 50_000.0),
            (1000.0, 0.000073, 0.0, 4500.0),
            (300.0, 0.5, 1.0, 1000.0),
            (-300.0, 0.5, 1.0, 1000.0),
            (300.0, -0.5, 2.5, 1000.0),
            (1000.0, 0.2, 5.0, 1000.0),
        ] {
            let text = mixgraph_rate_profile(a, b, c, d).unwrap();
            let p: RateProfile = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            let period = TAU / f64::abs(b);
            for i in 0..300 {
                let t = i as f64 * period / 100.0;
                let want = sine_rate(a, b, c, d, t);
                let got = p.rate_at(t);
                assert!(
                    (got - want).abs() <= 0.006 * f64::abs(a) + 1e-6 * d,
                    "{a},{b},{c},{d} at {t}: {got} vs {want}\n{text}"
                );
            }
        }
        assert_eq!(
            mixgraph_rate_profile(5.0, 0.0, PI / 2.0, 10.0).unwrap(),
            "hold:15"
        );
        assert!(mixgraph_rate_profile(2.0, 1.0, 0.0, 1.0)
            .unwrap_err()
            .to_string()
            .contains("below zero"));
        assert!(mixgraph_rate_profile(f64::NAN, 1.0, 0.0, 1.0).is_err());
        assert!(mixgraph_rate_profile(0.0, 1.0, 0.0, 0.0).is_err());
    }

    const PHASED: &str = r#"
[[op]]
kind = "get"
weight = 9

[[op]]
kind = "put"
weight = 1

[[phase]]
secs = 10
weights = [1, 0]
threads = 1

[[phase]]
secs = 5
threads = 0

[[phase]]
weights = [0, 1]
threads = 4
"#;

    #[test]
    fn phases_change_the_weights_drawn_and_become_the_steps_profile() {
        let m = parse_mix(PHASED, "phased.toml").unwrap();
        assert_eq!(m.phases.len(), 3);
        // A phase without weights keeps the ops' own.
        assert_eq!(m.phases[1].weights, vec![9, 1]);
        assert!(m.phases[2].secs.is_infinite());
        assert_eq!(
            (m.phase_at(0.0), m.phase_at(9.9), m.phase_at(10.0)),
            (0, 0, 1)
        );
        assert_eq!((m.phase_at(15.0), m.phase_at(1e9)), (2, 2));
        assert_eq!(m.phases_secs(), None, "the last phase lasts to the end");
        assert_eq!(m.rate_profile(), None);
        assert_eq!(
            m.threads_profile().as_deref(),
            Some("hold:1/10s,hold:0/5s,hold:4")
        );
        // Round trip through the file format.
        assert_eq!(parse_mix(&m.to_toml(), "phased.toml").unwrap(), m);
        // Each phase draws by its own weights.
        let mut s = m.sampler(1000, 100, 7).unwrap();
        let draw = |s: &mut MixSampler| {
            let mut n = [0usize; 2];
            for _ in 0..10_000 {
                n[s.next_op()] += 1;
            }
            n
        };
        assert_eq!(draw(&mut s), [10_000, 0]);
        s.set_phase(2);
        assert_eq!(draw(&mut s), [0, 10_000]);
        s.set_phase(1);
        let n = draw(&mut s);
        assert!((8_700..9_300).contains(&n[0]), "{n:?}");
        // The example: each phase its own rate, a profile of holds, 150 s long.
        let e = example("phases.toml");
        assert_eq!(
            e.rate_profile().as_deref(),
            Some("hold:20000/60s,hold:8000/30s,hold:5000/60s")
        );
        assert_eq!(e.phases_secs(), Some(150.0));
        assert_eq!(e.phases[2].weights, vec![45, 5, 50]);
        // Rates make a rate profile instead.
        let rated = PHASED
            .replace("threads = 1", "rate = 500")
            .replace("threads = 0", "rate = 0")
            .replace("threads = 4", "rate = 2000\nsecs = 1");
        let m = parse_mix(&rated, "rated.toml").unwrap();
        assert_eq!(
            m.rate_profile().as_deref(),
            Some("hold:500/10s,hold:0/5s,hold:2000/1s")
        );
        assert_eq!(m.phases_secs(), Some(16.0));
        assert_eq!(m.threads_profile(), None);
    }

    #[test]
    fn a_bad_phase_is_named_with_its_line_and_what_to_write() {
        let e = err(&PHASED.replace("weights = [1, 0]", "weights = [1]"));
        assert!(
            e.contains(":12:11:")
                && e.contains("phase[1].weights")
                && e.contains("1 weights for 2 ops"),
            "{e}"
        );
        let e = err(&PHASED.replace("weights = [1, 0]", "weights = [0, 0]"));
        assert!(e.contains("phase[1].weights: every weight is 0"), "{e}");
        let e = err(&PHASED.replace("secs = 5\n", ""));
        assert!(e.contains("phase[2].secs: only the last phase"), "{e}");
        let e = err(&PHASED.replace("threads = 0", "rate = 0"));
        assert!(
            e.contains("phase[2].rate: give a rate in every phase or in none"),
            "{e}"
        );
        let e = err(&PHASED.replace("threads = 4", "threads = 2000"));
        assert!(
            e.contains("phase[3].threads") && e.contains("0 to 1024"),
            "{e}"
        );
        let e = err(&PHASED
            .replace("threads = 1\n", "threads = 0\n")
            .replace("threads = 4", "threads = 0"));
        assert!(e.contains("every phase is a pause"), "{e}");
        let e = err(&PHASED.replace("secs = 10", "secs = 10\nspeed = 3"));
        assert!(e.contains("phase") && e.contains("speed"), "{e}");
    }

    #[test]
    fn one_draw_ties_the_op_the_key_and_the_size_to_one_number_as_db_bench() {
        let text = "one_draw = true\n[[op]]\nkind = \"get\"\nweight = 1\n[[op]]\nkind = \"put\"\n\
                    weight = 1\nvalue_size = { dist = \"pareto\", k = 0.2615, sigma = 25.45, \
                    min = 10, max = 1024, wrap = 1024 }\n";
        let m = parse_mix(text, "one.toml").unwrap();
        assert!(m.one_draw);
        assert_eq!(parse_mix(&m.to_toml(), "one.toml").unwrap(), m);
        let num = 10_000u64;
        let mut s = m.sampler(num, 100, 3).unwrap();
        let mut size_of = std::collections::HashMap::new();
        let (mut gets, mut puts) = (0, 0);
        for _ in 0..20_000 {
            let op = s.next_op();
            let k = s.key();
            // The op is the draw modulo the weights' sum (2): gets take even keys, puts
            // odd ones, so no get ever reads a key a put wrote.
            assert_eq!(k % 2, op as u64, "op {op} key {k}");
            if op == 1 {
                puts += 1;
                let size = s.value_size(op);
                // The size is the Pareto at the key's quantile: the same key, the same
                // size, every time.
                let want = fold(
                    pareto_inversion(k as f64 / num as f64, 0.0, 0.2615, 25.45),
                    10,
                    1024,
                    Some(1024),
                );
                assert_eq!(size as u64, want, "key {k}");
                assert_eq!(*size_of.entry(k).or_insert(size), size);
            } else {
                gets += 1;
            }
        }
        assert!(gets > 9_000 && puts > 9_000, "{gets} {puts}");
        // Drawn apart (the default), a key meets both ops.
        let apart = parse_mix(&text.replace("one_draw = true\n", ""), "apart.toml").unwrap();
        let mut s = apart.sampler(num, 100, 3).unwrap();
        let odd_gets = (0..2_000)
            .filter(|_| s.next_op() == 0 && s.key() % 2 == 1)
            .count();
        assert!(odd_gets > 300, "{odd_gets}");
        // mixgraph draws once, as db_bench does.
        assert!(mixgraph(&[]).unwrap().one_draw);
    }
}
