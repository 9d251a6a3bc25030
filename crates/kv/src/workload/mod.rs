//! What a step does, apart from how it is timed. The runner spawns the step's threads,
//! hands each a [`Worker`], and a workload decides what its ops are: it sets up per
//! thread (a session, buffers, a key chooser), then calls [`Worker::drive`] with one op
//! as a closure, which the kernel's timed loop ([`plumb_runner::kernel`]) inlines. The
//! key-value family's steps (db_bench's, YCSB's, the op mixes) implement [`Workload`]; the hardware
//! probes, the sysbench microbenchmarks (crates/sql/src/run.rs) and the insert benchmark
//! (crates/ibench/src/run.rs) drive the same kernel directly.

pub mod kv;
pub mod mix;
pub mod ycsb;

pub use crate::worker::{Role, Worker};
use plumb_core::{TargetError, Verification};
pub use plumb_runner::kernel::OpClock;

/// One kind of step, as the runner drives it.
pub trait Workload: Sync {
    /// Runs one thread of the step: set up, [`Worker::drive`] (or
    /// [`Worker::drive_paced`] for the paced writer) exactly once, then anything left
    /// to check. Counts what reads verified in `verify`, including on error.
    fn run(&self, w: &mut Worker<'_>, verify: &mut Verification) -> Result<(), TargetError>;

    /// A rate-limited writer runs beside the measured threads (`Role::Writer`).
    fn has_writer(&self) -> bool {
        false
    }

    /// The names of the kinds of operation it times apart (YCSB's read, update …), as
    /// [`OpClock::set_class`] indexes them; empty when it has one kind.
    fn classes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The step measures after the configured warm-up (fills start measuring at once:
    /// their first ops are part of the work).
    fn warms_up(&self) -> bool {
        true
    }
}
