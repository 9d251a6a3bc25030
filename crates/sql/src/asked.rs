//! The steps `plumb sql` runs, from its flags: the order asked (or the default for the
//! scripts given), each script read and checked now, so the plan keeps their text and
//! a script that does not load fails before a server starts.

use crate::error::AskedError;
use plumb_plan::SqlParams;
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
