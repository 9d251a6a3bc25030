//! The families this binary runs, in one table: each is its own crate's, and adding
//! one is its line here. The lifecycle asks them in order; the first that takes a plan
//! runs it (another build of an engine first, so a plan for `rocksdb@8.5.3` goes to
//! that build whatever its family).

use plumb_runner::family::{Extras, Families, Family};

/// Every family, in the order they are asked.
pub static TABLE: &[&dyn Family] = &[
    &super::release::ReleaseFamily,
    &plumb_sql::family::SqlFamily,
    &plumb_ibench::family::IbFamily,
    &plumb_hwprobe::family::ProbeFamily,
    &plumb_durability::DurabilityFamily,
];

/// The lifecycle's driver of every family, with the front end's extras.
pub fn driver(extras: Extras) -> Families<'static> {
    Families {
        table: TABLE,
        extras,
    }
}
