//! Database servers as plumb targets. A server is managed (plumb starts PostgreSQL or
//! MariaDB from their real binaries with a config from `config/`, and stops it) or
//! external (a URL); the sysbench microbenchmarks, pgbench's built-in scripts
//! ([`pgbench`]), pgbench script files ([`pgscript`]), sysbench's Lua scripts ([`lua`]), TPROC-C and YCSB's core workloads ([`ycsb`], with the statements
//! YCSB's JDBC binding sends) run against it through the real wire protocols, one
//! connection per client thread ([`drivers`] picks each step's), and every step is
//! explained by what each query cost on the client and on the server.

pub mod asked;
pub mod bench;
pub mod ceiling;
pub mod client;
pub mod counters;
pub mod drivers;
pub mod error;
pub mod family;
pub mod lua;
pub mod managed;
pub mod mywire;
pub mod pgbench;
pub mod pgscript;
pub mod pgwire;
pub mod run;
pub mod script_output;
pub mod server;
pub mod tpcc;
pub mod waits;
mod wire;
pub mod ycsb;

pub use bench::Shape;
pub use client::{Endpoint, Protocol};
pub use counters::CounterReader;
pub use error::SqlError;
pub use run::{run_sql_step, SqlContext, SqlStepConfig};
pub use server::{running, Flavor, Managed, ServerChoice, StartOptions, StorageEngine};
