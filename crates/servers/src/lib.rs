//! The SQL servers plumb measures, and how it talks to them, apart from the workloads
//! that run on them (those are plumb-sql's): a server is managed (plumb starts
//! PostgreSQL or MariaDB from their real binaries with a config from `config/`, and
//! stops it; [`server`], and [`managed`] for the server a planned run measures) or
//! external (a URL). Clients reach it through the real wire protocols ([`pgwire`],
//! [`mywire`], one connection per client thread behind [`client`]), and what a step
//! cost on the server is read from the server itself: its counters before and after
//! ([`counters`]) and its sessions' waits sampled beside the clients ([`waits`]).

#![warn(missing_docs)]

pub mod client;
pub mod counters;
pub mod error;
pub mod faults;
pub mod managed;
pub mod mywire;
pub mod pgwire;
pub mod server;
pub mod waits;
mod wire;

pub use client::{Endpoint, Protocol};
pub use counters::CounterReader;
pub use error::SqlError;
pub use server::{running, Flavor, Managed, ServerChoice, StartOptions, StorageEngine};
