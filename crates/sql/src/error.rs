//! What can go wrong with a planned SQL run or with the steps `plumb sql`'s flags ask
//! for, each naming what to fix. What goes wrong with a server or a query is
//! [`SqlError`], the servers' crate's, which both of these carry.

use plumb_servers::SqlError;
use thiserror::Error;

/// A planned SQL run (sysbench's microbenchmarks, TPROC-C, pgbench, YCSB, Lua scripts)
/// that could not be set up, run a step or be stored: what the SQL family hands the
/// lifecycle, each naming what to fix.
#[derive(Debug, Error)]
pub enum RunError {
    /// A parameter of the plan that cannot run, named by its suite key.
    #[error("{key}: {message}")]
    Param {
        /// The suite key.
        key: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// The server, a query or a script.
    #[error(transparent)]
    Sql(#[from] SqlError),
    /// The store refused a step, the client group's barrier or the ceilings.
    #[error(transparent)]
    Store(#[from] plumb_store::StoreError),
    /// The sysbench steps would run on tables that are not there.
    #[error(
        "no rows in sbtest1..{tables} at {url}: add `load` to the steps (it creates and fills them)"
    )]
    NoSysbenchTables {
        /// The tables the steps use.
        tables: u32,
        /// The server's URL, without its password.
        url: String,
    },
    /// pgbench's steps would run on tables that are not there; the message embeds why
    /// their scale could not be read.
    #[error(
        "{cause}: pgbench's steps need its tables; add pgbench-load to the steps or run \
         `pgbench -i` first"
    )]
    NoPgbenchTables {
        /// Why the scale could not be read.
        cause: SqlError,
    },
    /// The plan names script files it did not read (made by hand, not by plumb).
    #[error(
        "--script: {named} file(s) named but {read} read; the plan was made without reading \
         them (plan the run with `plumb sql` or a suite)"
    )]
    ScriptsUnread {
        /// Files named.
        named: usize,
        /// Files read into the plan.
        read: usize,
    },
    /// The plan has a Lua step whose script it did not read.
    #[error(
        "--lua: the script was not read when the run was planned; plan the run with \
         `plumb sql --lua FILE` or a suite's `lua = \"FILE\"`"
    )]
    LuaUnread,
}

impl From<plumb_plan::ParamError> for RunError {
    fn from(e: plumb_plan::ParamError) -> Self {
        RunError::Param {
            key: e.key,
            message: e.message,
        }
    }
}

/// Steps asked of `plumb sql` by its flags that cannot run as asked, or a script among
/// them that does not load: refused before a server starts.
#[derive(Debug, Error)]
pub enum AskedError {
    /// A flag's value cannot be used.
    #[error("--{flag}: {message}")]
    Flag {
        /// The flag, without its dashes.
        flag: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// `--lua` and `--script`/`--builtin` without the order of their steps.
    #[error(
        "--lua and --script/--builtin give two steps' scripts; say their order with \
         --steps, e.g. --steps lua-prepare,lua,script"
    )]
    UnorderedScripts,
    /// A `--lua` script with no Lua step to run it.
    #[error(
        "--lua gives the `lua` step's script, but --steps has no `lua` or \
         `lua-prepare`; add them, e.g. --steps lua-prepare,lua"
    )]
    LuaWithoutStep,
    /// A Lua step with no script.
    #[error(
        "--steps has a Lua step but no script: give --lua FILE (e.g. \
         /usr/share/sysbench/oltp_read_write.lua)"
    )]
    LuaStepWithoutScript,
    /// `--lua-opt` with no `--lua` script to set.
    #[error("--lua-opt sets the --lua script's options; give --lua FILE")]
    LuaOptWithoutLua,
    /// Scripts with no `script` step to run them.
    #[error(
        "--script/--builtin give the `script` step's scripts, but --steps has no `script`; \
         add it, e.g. --steps pgbench-load,script"
    )]
    ScriptsWithoutStep,
    /// `--steps` named nothing.
    #[error("--steps: no microbenchmarks given; e.g. --steps load,point-query")]
    NoSteps,
    /// `--memory-mb` is below what anything runs in (the value and the least).
    #[error("--memory-mb {0}")]
    Memory(String),
    /// `--memory-mb` with a `--url` server, which plumb does not start.
    #[error("--memory-mb limits a server plumb starts; a --url server is someone else's")]
    MemoryOnUrl,
    /// `--client-group` without the one server its clients share.
    #[error(
        "--client-group {group}: the clients of a group share one server; give it with \
         --url (start it once, not per client)"
    )]
    GroupWithoutUrl {
        /// The group's name.
        group: String,
    },
    /// `--client-group` with steps that load the tables every client would share.
    #[error(
        "--client-group {group}: every client would load the same tables; load them once \
         beforehand (plumb sql --url … --steps load) and give the clients --steps \
         without load, e.g. --steps point-query,read-only-10"
    )]
    GroupLoads {
        /// The group's name.
        group: String,
    },
    /// `--client-group` with `--repeat`.
    #[error(
        "--client-group {group}: --repeat runs one client group per name; start a new group instead"
    )]
    GroupRepeat {
        /// The group's name.
        group: String,
    },
    /// `--barrier-timeout` is not a number of seconds above 0.
    #[error("--barrier-timeout {0}: give a number of seconds > 0")]
    BarrierTimeout(f64),
    /// A name in `--steps` that is not a step.
    #[error(transparent)]
    UnknownStep(#[from] plumb_workloads::sql::UnknownSqlStep),
    /// A script that does not load, or an option it does not know.
    #[error(transparent)]
    Script(#[from] SqlError),
}

impl AskedError {
    /// `e` as the flag `--KEY` that set it, its underscores dashes when `dashes`.
    pub(crate) fn flag(e: plumb_plan::ParamError, dashes: bool) -> AskedError {
        AskedError::Flag {
            flag: if dashes {
                e.key.replace('_', "-")
            } else {
                e.key.to_string()
            },
            message: e.message,
        }
    }
}
