//! The insert benchmark: a table that keeps growing with three secondary indexes, then
//! range and point queries while inserts run at a fixed rate. One runner drives every
//! target through [`IbTarget`]: a SQL server through its wire protocol (`sql.rs`) or an
//! embedded engine whose primary and secondary indexes are key spaces written in one
//! batch per commit (`kv.rs`), so the same work is asked of each. Inserts in the query
//! steps are paced open-loop and timed from each commit's intended start, so an engine
//! that stalls shows its stall in the latency instead of hiding it (no coordinated
//! omission), and a step that cannot keep 95% of its insert rate is failed.

pub mod asked;
pub mod error;
pub mod family;
pub mod kv;
pub mod row;
pub mod run;
pub mod sql;
pub mod target;

pub use error::{AskedError, IbError, PrepareError};
pub use run::{run_ib_step, IbContext, IbStepConfig, IbTally};
pub use target::{IbConn, IbTarget, SecIndex};

#[cfg(test)]
mod tests;
