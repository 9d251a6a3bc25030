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

/// Which server `--server` and `--url` choose, for `plumb sql` and `plumb ib`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The server as named (`postgres[@MAJOR]`, …), else the protocol of the URL
    /// (`mariadb` for mysql:// and mariadb://), else `postgres`.
    pub server: String,
    /// The URL with its password taken out (the plan keeps no password).
    pub url: Option<String>,
    /// The URL's password, decoded (the client wants it plain), kept apart from the plan.
    pub password: Option<String>,
}

/// The server `server` (`--server`) and `url` (`--url`) choose.
pub fn choose(server: Option<&str>, url: Option<&str>) -> Chosen {
    let (stripped, password) = match url {
        Some(u) => {
            let (u, p) = plumb_plan::strip_password(u);
            (Some(u), p)
        }
        None => (None, None),
    };
    let server = match (server, &stripped) {
        (Some(s), _) => s.to_string(),
        (None, Some(u)) if u.starts_with("mysql") || u.starts_with("mariadb") => "mariadb".into(),
        _ => "postgres".into(),
    };
    let password = password.map(|p| {
        // The URL's password is percent-encoded; the client wants it plain.
        plumb_servers::Endpoint::parse_url(url.unwrap_or(""))
            .ok()
            .and_then(|e| e.password)
            .unwrap_or(p)
    });
    Chosen {
        server,
        url: stripped,
        password,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server spec as `plumb sql` makes it from `--url` (or none).
    fn server(url: Option<&str>) -> ServerSpec {
        let c = choose(None, url);
        ServerSpec {
            server: c.server,
            engine: None,
            basedir: None,
            config: None,
            waldir: None,
            cache_mb: plumb_plan::family::DEFAULT_CACHE_MB,
            ram_sized: false,
            url: c.url,
        }
    }

    fn asked<'a>(url: Option<&str>, steps: Option<&'a str>, group: Option<&'a str>) -> Asked<'a> {
        Asked {
            params: SqlParams::default(),
            steps,
            server: server(url),
            memory_mb: None,
            client_group: group,
            barrier_timeout: 600.0,
            repeat: 1,
            seed: 1,
        }
    }

    #[test]
    fn a_url_names_its_server_and_keeps_its_decoded_password_out_of_the_plan() {
        let c = choose(None, Some("mysql://sb:p%40ss@db1/sbtest"));
        assert_eq!(c.server, "mariadb");
        assert_eq!(c.password.as_deref(), Some("p@ss"));
        assert!(!c.url.as_deref().unwrap().contains("p%40ss"));
        assert_eq!(choose(None, None).server, "postgres");
        assert_eq!(choose(Some("postgres@16"), None).server, "postgres@16");
    }

    #[test]
    fn repeats_plan_one_run_each_with_the_next_seed() {
        let runs = plan(Asked {
            repeat: 3,
            ..asked(None, Some("load,point-query"), None)
        })
        .unwrap();
        assert_eq!(runs.len(), 3);
        assert_eq!(
            runs.iter().map(|r| (r.repeat, r.seed)).collect::<Vec<_>>(),
            [(0, 1), (1, 2), (2, 3)]
        );
        assert_eq!(runs[0].workload.name, "load,point-query");
    }

    #[test]
    fn a_client_group_needs_a_url_and_steps_without_load() {
        let url = Some("postgres://bench@db1/sb");
        let err = |a| plan(a).unwrap_err().to_string();
        assert!(err(asked(None, Some("point-query"), Some("g1"))).contains("give it with --url"));
        assert!(err(asked(url, Some("load,point-query"), Some("g1"))).contains("load them once"));
        assert!(err(asked(url, None, Some("g1"))).contains("load them once"));
        assert!(plan(asked(url, Some("point-query"), Some("g1"))).is_ok());
        assert!(err(Asked {
            memory_mb: Some(1024),
            ..asked(url, Some("point-query"), None)
        })
        .contains("someone else's"));
    }
}
