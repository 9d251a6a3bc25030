//! The families this binary runs, in one table: each is its own crate's, and adding
//! one is its line here. The lifecycle asks them in order; the first that takes a plan
//! runs it. A plan for another build of an engine (`rocksdb@8.5.3`) is handed to that
//! build before any family is asked.

use plumb_runner::family::{Family, HandOver};

/// Every family, in the order they are asked.
pub static TABLE: &[&dyn Family] = &[
    &plumb_kv::KvFamily,
    &plumb_sql::family::SqlFamily,
    &plumb_ibench::family::IbFamily,
    &plumb_hwprobe::family::ProbeFamily,
    &plumb_durability::DurabilityFamily,
];

/// Plans another build of plumb runs.
pub static ELSEWHERE: &dyn HandOver = &plumb_runner::release::ReleaseBuild;
