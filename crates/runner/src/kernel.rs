//! The one measuring kernel: the timed loop every family's ops go through, and the step
//! runner around it. A family (the key-value steps, the hardware probes, the SQL
//! family's clients, the insert benchmark's) says what a thread sets up and what one op
//! is; the kernel owns everything that makes the figures
//! comparable across families: when an op starts and how it is timed (closed or open
//! loop, per-thread HDR histograms), warm-up as epoch 0, the 1-second sampler and its
//! marks (process CPU, the host's noise, the device), when a step stops (deadline,
//! Ctrl-C, an error, every thread done), and the figures computed from all of it.
//!
//! - [`run`] runs a step: its threads each get a [`Lane`] and drive their ops through
//!   [`Lane::drive`]; the sampler reads the [`Spec`]'s counters and the family's
//!   [`Gauge`] at each [`Mark`].
//! - An op returns what it did as an [`Outcome`]: (ops, bytes), or a family's own with
//!   [`Counts`] kept per interval beside them ([`Lane::drive_counted`]).
//! - [`Run`] is what comes back; [`Run::summary`] and [`Run::intervals`] are the
//!   figures every family shares.
//! - [`ServerTree`] is the gauge of a system under test in processes of its own (a
//!   database server), read at the window's ends.

pub mod callgrind;
mod clock;
pub mod faults;
mod figures;
mod lane;
mod mark;
mod outcome;
mod run;
mod server;
#[cfg(test)]
mod tests;

pub use clock::{HarnessTime, OpClock, Timing};
pub use faults::{Faults, FaultsRun, Injection, Injector};
pub use figures::{summary, Part, Tally};
pub use lane::Lane;
pub use mark::{Gauge, Mark};
pub use outcome::{Counts, Outcome, COUNTS};
pub use run::{run, NoProgress, Progress, Run, Spec};
pub use server::{perf_counted, ServerGauge, ServerTree, Sut};
