//! The key-value family: db_bench's steps (fillseq, readrandom, seekrandom, a mix of
//! ops, YCSB's workloads, mixgraph) on an embedded engine. Each step's threads run
//! through the runner's timed loop ([`plumb_runner::kernel`]); [`KvFamily`] is the
//! first row of the binary's table of families, and the runner's lifecycle runs it
//! like every other.

pub mod asked;
pub mod config;
pub mod error;
pub mod family;
pub mod payload;
mod sampler;
pub mod step;
mod worker;
pub mod workload;

pub use config::{KeySpace, StepConfig};
pub use error::{AskedError, PrepareError};
pub use family::KvFamily;
pub use step::{run_step, run_workload, RunContext};
pub use workload::{Role, Worker, Workload};
