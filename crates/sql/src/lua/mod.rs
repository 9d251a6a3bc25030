//! sysbench's Lua scripts, run unchanged by plumb's one timed loop: the scripts
//! Debian's sysbench package installs (oltp_read_write.lua, oltp_point_select.lua,
//! bulk_insert.lua, select_random_ranges.lua, …) and scripts written for sysbench 1.0,
//! on an embedded LuaJIT (the Lua sysbench itself embeds). A script sees sysbench's
//! API: `sysbench.opt` (its option table's defaults, set by `--lua-opt NAME=VALUE`),
//! `sysbench.rand.*` (sysbench's generators and distributions), `sysbench.sql` (driver,
//! connection, prepared statements with bound parameters, result sets, bulk inserts,
//! the error protocol that restarts an event after a deadlock), `sysbench.cmdline`,
//! `sysbench.hooks`, `thread_init`/`event`/`thread_done`, the prepare command, and
//! sysbench 1.0's legacy globals (`sb_rand`, `thread_id`, …).
//!
//! [`LuaStep`] is the script as planned (its text and modules, its options resolved,
//! read once when the run is planned); [`LuaThread`] runs one `event()` per op of the
//! kernel's loop; [`LuaPrepare`] runs the prepare command as a load step. What the
//! API does in Rust is [`api`]; what it does in Lua is prelude.lua.

mod api;
mod options;
mod thread;

pub use options::{OptValue, GLOBAL_OPTIONS};
pub use thread::{LuaPrepare, LuaThread, LuaThreadPlan};

use plumb_plan::ScriptSource;
use plumb_servers::SqlError;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

/// The kinds of operation a Lua step times apart: its transactions (each `event()`),
/// then its statements by their first keyword (sysbench counts reads, writes and
/// others; plumb keeps each kind's latency).
pub const LUA_CLASSES: [&str; 8] = [
    "transaction",
    "select",
    "insert",
    "update",
    "delete",
    "begin",
    "commit",
    "other",
];

/// A Lua step as planned: the script and its modules, and every option's value.
#[derive(Debug, Clone)]
pub struct LuaStep {
    /// The script first, then the modules it requires, by module name.
    pub sources: Arc<Vec<ScriptSource>>,
    /// `sysbench.opt`: sysbench's global options and the script's, resolved.
    pub options: Arc<Vec<(String, OptValue)>>,
    /// The options given with `--lua-opt`, by name.
    pub given: Vec<String>,
    /// The script's own options' names (from `sysbench.cmdline.options`): without any,
    /// sysbench 1.0 also sets every option as a global.
    pub declared: Vec<String>,
    /// The prepare command may run on every thread at once (`PARALLEL_COMMAND`).
    pub parallel_prepare: bool,
    /// The script has a prepare command or a `prepare()` function.
    pub has_prepare: bool,
    /// sysbench's unique-number sequence, shared by every thread of a run.
    pub unique: Arc<AtomicU32>,
}

impl PartialEq for LuaStep {
    fn eq(&self, other: &LuaStep) -> bool {
        self.sources == other.sources && self.options == other.options
    }
}

impl LuaStep {
    /// The step from the sources read when the run was planned (the script first) and
    /// the `--lua-opt NAME=VALUE` options: the script is loaded once to read its option
    /// table and commands, so a script that does not load, an unknown option or a
    /// value of the wrong type fails here, naming the file and line or the option.
    pub fn new(
        sources: &[ScriptSource],
        opts: &[String],
        threads: usize,
        seconds: f64,
    ) -> Result<LuaStep, SqlError> {
        if sources.is_empty() {
            return Err(SqlError::Input(
                "the lua step has no script: give --lua FILE (e.g. \
                 /usr/share/sysbench/oltp_read_write.lua)"
                    .into(),
            ));
        }
        let shape = api::read_script(sources)?;
        let mut step = LuaStep {
            sources: Arc::new(sources.to_vec()),
            options: Arc::new(Vec::new()),
            given: Vec::new(),
            declared: shape.options.iter().map(|o| o.name.clone()).collect(),
            parallel_prepare: shape.parallel_prepare,
            has_prepare: shape.has_prepare,
            unique: Arc::new(AtomicU32::new(0)),
        };
        let (values, given) = options::resolve(&shape.options, opts, threads, seconds)?;
        step.options = Arc::new(values);
        step.given = given;
        Ok(step)
    }

    /// The script's file name as given.
    pub fn name(&self) -> &str {
        &self.sources[0].name
    }

    /// Sets a script option the user left alone, when the script declares it (the
    /// storage engine of a managed MariaDB for `mysql_storage_engine`).
    pub fn default_option(&mut self, name: &str, value: OptValue) {
        if self.given.iter().any(|g| g == name) || !self.declared.iter().any(|d| d == name) {
            return;
        }
        let mut v = (*self.options).clone();
        if let Some(slot) = v.iter_mut().find(|(n, _)| n == name) {
            slot.1 = value;
        }
        self.options = Arc::new(v);
    }

    /// An option's value.
    pub fn option(&self, name: &str) -> Option<&OptValue> {
        self.options.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}
