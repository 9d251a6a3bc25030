//! The SQL family: the workload languages plumb runs on database servers, and the steps
//! that run them. The servers themselves (managed or external), their wire protocols and
//! clients, and their counters and waits are plumb-servers'; here the sysbench
//! microbenchmarks, pgbench's built-in scripts ([`pgbench`]), pgbench script files
//! ([`pgscript`]), sysbench's Lua scripts ([`lua`]), TPROC-C ([`tpcc`]) and YCSB's core
//! workloads ([`ycsb`], with the statements YCSB's JDBC binding sends) run against a
//! server, one connection per client thread ([`drivers`] picks each step's), and every
//! step is explained by what each query cost on the client and on the server.

#![warn(missing_docs)]

pub mod asked;
pub mod bench;
pub mod ceiling;
pub mod drivers;
pub mod error;
pub mod family;
pub mod lua;
pub mod pgbench;
pub mod pgscript;
pub mod run;
pub mod script_output;
pub mod tpcc;
pub mod ycsb;

pub use bench::Shape;
pub use run::{run_sql_step, SqlContext, SqlStepConfig};
