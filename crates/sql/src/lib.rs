//! Database servers as plumb targets. A server is managed (plumb starts PostgreSQL or
//! MariaDB from their real binaries with a config from `config/`, and stops it) or
//! external (a URL); the sysbench microbenchmarks run against it through the real
//! drivers, one connection per client thread, and every step is explained by what each
//! query cost on the client and on the server.

pub mod bench;
pub mod client;
pub mod counters;
pub mod error;
pub mod mywire;
pub mod pgwire;
pub mod run;
pub mod server;
pub mod tpcc;
mod wire;

pub use bench::Shape;
pub use client::{Endpoint, Protocol};
pub use counters::CounterReader;
pub use error::SqlError;
pub use run::{run_sql_step, SqlContext, SqlStepConfig};
pub use server::{running, Flavor, Managed, ServerChoice, StartOptions, StorageEngine};
