//! YCSB's core workload (`site.ycsb.workloads.CoreWorkload`), rebuilt in Rust so plumb
//! can run workloads A–F against any target with the same keys, the same operation mix
//! and the same key distributions YCSB itself would use. Results are then comparable
//! with published YCSB numbers, and plumb's per-operation explanations apply to them.
//!
//! What is YCSB's here, taken from its source and checked against vectors that YCSB's
//! own classes print (`tests/fixtures/ycsb-vectors.txt`, `scripts/ycsb-vectors.sh`):
//! FNV-1 64 hashing of key numbers, key names, the property names and defaults, the six
//! workload files, Gray et al.'s zipfian generator with YCSB's constants (including its
//! incremental zeta and the quirks of both), the scrambled zipfian, the skewed-latest
//! generator, hotspot, the operation chooser and the acknowledged insert counter.
//!
//! What is plumb's: every thread owns its generators and a seedable RNG
//! ([`rand::rngs::SmallRng`]) where YCSB shares one generator object between threads and
//! draws from `ThreadLocalRandom`, so a run is reproducible from its seed and nothing is
//! shared per operation but the insert counter.

mod counter;
mod generator;
mod hash;
mod params;
mod thread;

pub use counter::{load_keynums, split_count, AcknowledgedCounter, ACK_WINDOW_SIZE};
pub use generator::{
    zeta, zeta_from, zeta_large, Hotspot, OpChooser, ScrambledZipfian, SkewedLatest, UniformLong,
    Zipfian, SCRAMBLED_ITEM_COUNT, SCRAMBLED_ZETAN, ZIPFIAN_CONSTANT,
};
pub use hash::{
    build_key_name, fnvhash64, push_key_name, push_key_name_bytes, FNV_OFFSET_BASIS_64,
    FNV_PRIME_64,
};
pub use params::{
    CoreParams, FieldLengthDistribution, InsertOrder, RequestDistribution, ScanLengthDistribution,
    PROPERTIES,
};
pub use thread::{fill_value, FieldSet, YcsbOp, YcsbShared, YcsbThread};

use thiserror::Error;

/// What can be wrong with a YCSB workload's parameters or its run, each message naming
/// the property (as `-p name=value` writes it) and what would be accepted, so a user
/// porting a YCSB command line sees at once what to change.
#[derive(Debug, Error, PartialEq)]
pub enum YcsbError {
    /// A property plumb does not know (a typo, or a YCSB property plumb does not model).
    #[error("-p {name}: unknown YCSB property; known properties: {known}")]
    UnknownProperty {
        /// The name as written.
        name: String,
        /// Every property plumb accepts, comma-separated.
        known: String,
    },
    /// A known property with a value it cannot take.
    #[error("-p {name}={value}: {allowed}")]
    BadValue {
        /// The property.
        name: String,
        /// The value as written.
        value: String,
        /// What the property accepts.
        allowed: String,
    },
    /// A workload letter that is not one of YCSB's core workloads.
    #[error("YCSB workload {given:?}: the core workloads are a, b, c, d, e and f")]
    UnknownWorkload {
        /// What was asked for.
        given: String,
    },
    /// Properties that are each valid but cannot go together (YCSB exits on most of
    /// these, or fails later in a generator).
    #[error("YCSB properties: {0}")]
    Invalid(String),
    /// More inserts in flight than the acknowledged counter's window holds: YCSB throws
    /// here too, because the read limit could no longer advance past the gap.
    #[error(
        "YCSB insert key {keynum}: more than {window} inserts are unacknowledged; \
         an insert thread is stuck or failed without acknowledging its key"
    )]
    AckWindowFull {
        /// The key being acknowledged.
        keynum: i64,
        /// The window's size.
        window: usize,
    },
}
