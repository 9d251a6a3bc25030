//! What plumb's steps do, in the names users already know from db_bench: the step
//! kinds, the sequences RocksDB's own scripts run, and the key generators that decide
//! which key each op touches; and YCSB's core workload ([`ycsb`]), so YCSB's A–F run
//! with YCSB's own keys, mixes and distributions.

pub mod distribution;
pub mod fault;
pub mod ibench;
pub mod keys;
pub mod kind;
pub mod mix;
pub mod pace;
pub mod permutation;
pub mod rate_profile;
pub mod sql;
pub mod steps;
pub mod threads_profile;
pub mod ycsb;

pub use distribution::{Distribution, KeyChooser};
pub use fault::{Due, FaultKind, FaultPlan, FaultSpec};
pub use ibench::{IbKind, IbStepPlan};
pub use keys::KeyFormat;
pub use kind::{Kind, ProbeKind, UnknownKind};
pub use mix::{parse_mix, Mix, MixError, MixOp, MixOpKind, MixSampler};
pub use pace::{Arrivals, LatencyBound, Pace};
pub use permutation::Permutation;
pub use rate_profile::RateProfile;
pub use sql::{SqlGroup, SqlKind, SqlStepPlan, SqlTables};
pub use steps::{StepKind, WorkloadError};
pub use threads_profile::ThreadsProfile;
