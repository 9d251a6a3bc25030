//! `plumb serve`: a web application over the store a team already has. Each page is
//! one module and is also served as JSON for scripts; every figure comes from the
//! report crate (the same verdicts as `plumb compare` and `plumb check`), and every
//! triage state is written to the store, where `check` and `history` read it.
//!
//! HTTP is tiny_http (synchronous: the store is one connection used by one thread) and
//! pages are maud templates (every interpolated value escaped at compile time).

pub mod generate;

mod app;
mod bisect;
mod changes;
mod compare;
mod history;
mod hosts;
mod index;
mod layout;
mod query;
mod run;
mod runs;
#[cfg(test)]
mod tests;

pub use app::{
    check_options, open_store, App, Event, Reply, Request, ServeError, ServeOptions, Server,
    Stopper, DEFAULT_LISTEN,
};
