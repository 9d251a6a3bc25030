//! plumb's benchmarks run as child processes of plumb itself, so that each unit of a
//! comparison is an ordinary stored run made by an ordinary command:
//! - [`ab`]: two sides (two binaries, option sets or environments) run one command
//!   slice by slice, alternately or as a duet (both at once, each on its own half of
//!   the CPUs), until a fixed count or a sequential rule settles every judged step;
//! - [`blocks`]: one command run as separate blocks of repeats, whose drift is the
//!   plan's noise floor on this host;
//! - [`icount`]: a `kv` command under callgrind, its instructions per op counted;
//! - [`until`]: when a plan's repeats of a variant stop (`--repeat N --until PCT`).
//!
//! The statistics are plumb-report's; this crate owns the processes, the CPUs, the
//! order and the stopping. `plumb bisect` judges each midpoint with the same duet.

pub mod ab;
pub mod blocks;
pub mod child;
mod error;
pub mod icount;
pub mod until;

pub use error::ChildError;
