//! TPROC-C: the TPC-C workload (TPC-C 5.11) as HammerDB runs it, without keying and
//! think time unless asked ([`TpccConfig::spec_timing`]). Why it is here: sysbench's
//! microbenchmarks each stress one path, while TPC-C's five transactions mix reads,
//! updates, inserts, deletes, hot rows and row locks the way an order-entry system
//! does, and its consistency conditions tell whether the server kept its promises.
//!
//! The parts, in the order a run uses them: [`create_schema`] once, [`TpccLoader`] per
//! loading thread (the spec's population, clause 4.3), [`after_load`] once, then
//! [`TpccThread`] per client thread (one transaction per event), and [`check`] (the
//! consistency conditions of clause 3.3.2) whenever the data should be whole.

mod check;
mod gen;
mod load;
mod schema;
mod txn;

pub use check::{check, CheckFailure, CheckResult};
pub use gen::{nurand, NuRandC, SYLLABLES};
pub use load::TpccLoader;
pub use schema::{after_load, create_schema, TABLES};
pub use txn::{TpccStats, TpccThread};

/// The transaction types, as [`crate::bench::Outcome::class`] numbers them, so a runner
/// can keep latency per type. NOPM counts class-0 outcomes: committed New-Orders and
/// the 1% rolled back on purpose, which the spec counts as executed New-Orders
/// ([`TpccThread::event`] says more; [`TpccStats::rolled_back`] tells them apart).
pub const TPCC_CLASSES: [&str; 5] = [
    "new-order",
    "payment",
    "order-status",
    "delivery",
    "stock-level",
];
/// [`TPCC_CLASSES`] index of New-Order.
pub const NEW_ORDER: u8 = 0;
/// [`TPCC_CLASSES`] index of Payment.
pub const PAYMENT: u8 = 1;
/// [`TPCC_CLASSES`] index of Order-Status.
pub const ORDER_STATUS: u8 = 2;
/// [`TPCC_CLASSES`] index of Delivery.
pub const DELIVERY: u8 = 3;
/// [`TPCC_CLASSES`] index of Stock-Level.
pub const STOCK_LEVEL: u8 = 4;

/// Rows in ITEM (and STOCK rows per warehouse); the spec fixes it.
pub const ITEMS: i32 = 100_000;
/// Districts per warehouse.
pub const DISTRICTS: i32 = 10;
/// Customers per district.
pub const CUSTOMERS: i32 = 3_000;
/// Orders per district after the load.
pub const ORDERS: i32 = 3_000;
/// The first order id the load leaves undelivered (in NEW_ORDER, no carrier): the last
/// 900 of each district.
pub const FIRST_NEW_ORDER: i32 = 2_101;

/// What a TPC-C database is: plain data, the same for every thread of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TpccConfig {
    /// Warehouses (the scale: W × ~100 MB of rows, and W × 10 districts to contend on).
    pub warehouses: u32,
    /// `ENGINE = …` appended to each CREATE TABLE on MySQL-protocol servers (InnoDB,
    /// MyRocks); empty for PostgreSQL.
    pub engine_clause: String,
    /// The server speaks PostgreSQL (its timestamp type, VACUUM ANALYZE after the load).
    pub postgres: bool,
    /// Keying and think time as the spec sets them: [`TpccThread::pause`] then returns
    /// what to sleep between transactions. Off by default, as HammerDB runs TPROC-C:
    /// without it each connection runs transactions back to back.
    pub spec_timing: bool,
}

/// What a loading or client thread is given: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TpccThreadPlan {
    /// The database.
    pub cfg: TpccConfig,
    /// This thread, 0-based.
    pub thread: usize,
    /// Threads of the step.
    pub threads: usize,
    /// The run's seed, the same for every thread: each thread mixes in its number for
    /// its own random stream, and NURand's constants come from it ([`NuRandC::for_seed`]),
    /// so a load and a run given one seed keep the spec's C_LAST distance.
    pub seed: u64,
}

/// A thread's own random stream from the run's seed.
pub(crate) fn thread_rng(seed: u64, thread: usize, salt: u64) -> rand::rngs::SmallRng {
    use rand::SeedableRng;
    let mix = (thread as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
    rand::rngs::SmallRng::seed_from_u64(seed ^ mix)
}
