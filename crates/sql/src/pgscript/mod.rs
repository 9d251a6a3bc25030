//! pgbench's script language, run unchanged by plumb's one timed loop: script files as
//! `pgbench -f FILE@WEIGHT` reads them (SQL commands ended by `;`, `\set` with the
//! expression language of [`expr`], `\sleep`, `\if`/`\elif`/`\else`/`\endif`, `\gset`
//! and `\aset`, `:variable` substitution), pgbench's built-in scripts as such files
//! ([`builtin`], `-b NAME@WEIGHT`), `-D NAME=VALUE`, and the three query modes
//! (`-M simple|extended|prepared`). Facts from PostgreSQL's src/bin/pgbench (pgbench.c,
//! exprparse.y, exprscan.l) and its documentation; the code is plumb's.
//!
//! [`parse`] turns files into a [`ScriptSet`] (errors name the file and line);
//! [`ScriptThread`] is one client running it, one script (chosen by weight) per event.

pub mod builtin;
pub mod expr;
pub mod parse;
mod thread;

pub use parse::{parse_set, Command, CommandKind, QueryMode, Script, ScriptSet, ScriptSource};
pub use thread::{ScriptThread, ScriptThreadPlan};

use plumb_servers::SqlError;
use std::sync::Arc;

/// What a script step runs: the parsed scripts, the query mode and the defines,
/// made once per run and shared by every client.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptStep {
    /// The scripts.
    pub set: Arc<ScriptSet>,
    /// pgbench's `-M`.
    pub mode: QueryMode,
    /// pgbench's `-D`, in order.
    pub defines: Vec<(String, String)>,
}

impl ScriptStep {
    /// The step from the run's files (already read), built-in names (`NAME[@WEIGHT]`),
    /// defines (`NAME=VALUE`) and mode; every error names what to fix.
    pub fn new(
        files: &[ScriptSource],
        builtins: &[String],
        defines: &[String],
        mode: &str,
    ) -> Result<ScriptStep, SqlError> {
        let mut sources = files.to_vec();
        for b in builtins {
            let (name, weight) = parse::split_weight(b)?;
            sources.push(builtin::source(name, weight)?);
        }
        let defines = defines
            .iter()
            .map(|d| parse::split_define(d).map(|(n, v)| (n.to_string(), v.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ScriptStep {
            set: Arc::new(parse_set(&sources)?),
            mode: mode.parse()?,
            defines,
        })
    }

    /// Whether a built-in is in the mix (its `:scale` comes from the tables, as
    /// pgbench reads it for built-ins).
    pub fn has_builtin(&self) -> bool {
        self.set
            .scripts
            .iter()
            .any(|s| s.name.starts_with("builtin:"))
    }
}
