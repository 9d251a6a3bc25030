//! The steps `plumb sql` runs, from its flags: the order asked (or the default for the
//! scripts given), each script read and checked now, so the plan keeps their text and
//! a script that does not load fails before a server starts; and the plan of one run
//! per repeat that the steps, the server and the other flags make.

use crate::error::AskedError;
use plumb_plan::{Family, RunPlan, ServerSpec, SqlParams, SqlWork, TargetPlan, WorkloadPlan};
use plumb_workloads::{sql as sqlsteps, SqlKind, SqlStepPlan, SqlTables};

/// The steps of `--steps` (or the default for the scripts in `p`), `p`'s scripts read
/// into it and checked; `on_url`: the server is someone else's, so a Lua script's
/// tables are the ones there.
pub fn planned_steps(
    p: &mut SqlParams,
    steps_flag: Option<&str>,
    on_url: bool,
) -> Result<Vec<SqlStepPlan>, AskedError> {
    p.validate().map_err(|e| AskedError::flag(e, true))?;
    let scripted = !p.script.is_empty() || !p.builtin.is_empty();
    let lua = p.lua.is_some();
    if scripted && lua && steps_flag.is_none() {
        return Err(AskedError::UnorderedScripts);
    }
    let steps = match steps_flag {
        Some(s) => sqlsteps::parse_steps(s)?,
        // Scripts alone run as pgbench -f runs them: on the tables there are.
        None if scripted => sqlsteps::parse_steps("script")?,
        // A Lua script on a server plumb starts needs its tables first (sysbench's
        // prepare); on a --url server, the tables there are (run lua-prepare to make
        // them).
        None if lua && !on_url => sqlsteps::parse_steps("lua-prepare,lua")?,
        None if lua => sqlsteps::parse_steps("lua")?,
        None => sqlsteps::default_order(),
    };
    let lua_step = steps.iter().any(|s| s.kind.tables() == SqlTables::Lua);
    if lua != lua_step {
        return Err(if lua {
            AskedError::LuaWithoutStep
        } else {
            AskedError::LuaStepWithoutScript
        });
    }
    if lua_step {
        // Read the script and the modules it requires now: the plan keeps their text,
        // and a script that does not load, or an unknown option, fails here.
        p.read_lua(None).map_err(|e| AskedError::flag(e, false))?;
        crate::lua::LuaStep::new(&p.lua_sources, &p.lua_opt, p.threads, p.duration)?;
    } else if !p.lua_opt.is_empty() {
        return Err(AskedError::LuaOptWithoutLua);
    }
    let script_step = steps.iter().any(|s| s.kind == SqlKind::Script);
    if scripted && !script_step {
        return Err(AskedError::ScriptsWithoutStep);
    }
    if script_step {
        // Read the files now: the plan keeps their text, and a bad script fails here,
        // naming its file and line, before a server starts.
        p.scripts = p
            .script
            .iter()
            .map(|s| plumb_plan::ScriptSource::read(s, None))
            .collect::<Result<_, _>>()
            .map_err(|e| AskedError::flag(e, false))?;
        crate::pgscript::ScriptStep::new(&p.scripts, &p.builtin, &p.define, &p.query_mode)?;
    }
    if steps.is_empty() {
        return Err(AskedError::NoSteps);
    }
    Ok(steps)
}

/// What `plumb sql`'s flags ask for, gathered for [`plan`]: the binary keeps the flags'
/// definitions and help, this crate turns them into the runs.
#[derive(Debug)]
pub struct Asked<'a> {
    /// The microbenchmarks' parameters; the scripts they name are read into the plan.
    pub params: SqlParams,
    /// `--steps`, as given.
    pub steps: Option<&'a str>,
    /// The server, as `--server`, `--url` and the rest give it (password apart).
    pub server: ServerSpec,
    /// `--memory-mb`: the cgroup limit of a server plumb starts.
    pub memory_mb: Option<u64>,
    /// `--client-group`: this process is one client of a multi-client run.
    pub client_group: Option<&'a str>,
    /// `--barrier-timeout`: seconds a client waits at a step's barrier.
    pub barrier_timeout: f64,
    /// `--repeat`: how many runs, each on a fresh server with a fresh load.
    pub repeat: u32,
    /// The first run's seed (`--seed`, or the clock's); repeat N gets seed + N.
    pub seed: u64,
}

/// Checks every flag and builds one planned run per repeat; nothing starts before this
/// succeeds.
pub fn plan(mut a: Asked<'_>) -> Result<Vec<RunPlan>, AskedError> {
    plumb_plan::check_memory_mb(a.memory_mb).map_err(|e| AskedError::Memory(e.message))?;
    let on_url = a.server.url.is_some();
    let steps = planned_steps(&mut a.params, a.steps, on_url)?;
    if let Some(g) = a.client_group {
        let group = g.to_string();
        if !on_url {
            return Err(AskedError::GroupWithoutUrl { group });
        }
        if a.steps.is_none() || steps.iter().any(|s| s.kind == SqlKind::Load) {
            return Err(AskedError::GroupLoads { group });
        }
        if a.repeat > 1 {
            return Err(AskedError::GroupRepeat { group });
        }
        if !(a.barrier_timeout > 0.0 && a.barrier_timeout.is_finite()) {
            return Err(AskedError::BarrierTimeout(a.barrier_timeout));
        }
    }
    if a.memory_mb.is_some() && on_url {
        return Err(AskedError::MemoryOnUrl);
    }
    a.server.validate().map_err(|e| AskedError::flag(e, true))?;
    let target = TargetPlan {
        memory_mb: a.memory_mb,
        ..TargetPlan::server(a.server.label(), a.server)
    };
    let workload = WorkloadPlan {
        name: a.steps.map_or_else(|| "sql-default".into(), str::to_string),
        family: Family::Sql(SqlWork {
            steps,
            params: a.params,
        }),
    };
    Ok((0..a.repeat)
        .map(|rep| RunPlan {
            repeat: rep,
            ..RunPlan::single(
                "sql",
                target.clone(),
                workload.clone(),
                a.seed.wrapping_add(u64::from(rep)),
            )
        })
        .collect())
}
