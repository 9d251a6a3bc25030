//! Measurement probes for plumb.
//!
//! Every per-operation figure plumb reports (see the "Metrics" table in DESIGN.md) is a
//! delta of some counter over the measured window divided by the operations done in it.
//! This crate reads those counters — block-device I/O from `/proc/diskstats`, process CPU
//! and context switches from `getrusage`, the whole machine's CPU time by state (steal
//! included) from `/proc/stat`, resident memory from `/proc/self/status`, the
//! on-disk size of a data directory, and hardware counters from `perf_event_open` — and
//! does nothing else, so the runner can sample them cheaply at window boundaries.
//!
//! Linux only.

#![warn(missing_docs)]

pub mod build_id;
pub mod cpustat;
pub mod dirsize;
pub mod diskstats;
mod error;
pub mod perf;
pub mod perfgroups;
pub mod perfstat;
mod perftool;
pub mod perfwindow;
pub mod process;
pub mod proctree;
pub mod profile;

pub use error::ProbeError;
