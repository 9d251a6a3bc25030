//! A Lua script's client threads as the kernel drives them: [`LuaThread`] runs one
//! `event()` per op (its thread_init before the window, its thread_done after), and
//! [`LuaPrepare`] runs the script's prepare command once as a load step.

use super::api::{lua_message, Role, State};
use super::LuaStep;
use crate::bench::Outcome;
use plumb_servers::client::Endpoint;
use plumb_servers::SqlError;

/// What a step hands each Lua client.
#[derive(Debug, Clone)]
pub struct LuaThreadPlan {
    /// The script and its options.
    pub step: LuaStep,
    /// This thread's number from 0 (`sysbench.tid`).
    pub tid: usize,
    /// Its seed (its random draws).
    pub seed: u64,
}

impl LuaThreadPlan {
    /// This thread's state for sysbench's `command`, the script loaded.
    fn state(&self, ep: &Endpoint, command: &'static str) -> Result<State, SqlError> {
        State::new(
            &self.step.sources,
            &self.step.options,
            Role::Thread {
                endpoint: ep,
                tid: self.tid,
                seed: self.seed,
                command,
            },
            self.step.unique.clone(),
        )
    }
}

fn failed(step: &LuaStep, what: &str, e: &mlua::Error) -> SqlError {
    SqlError::Query {
        context: format!("{} {what}", step.name()),
        message: lua_message(e),
        code: None,
    }
}

/// One client running a script's events.
pub struct LuaThread {
    state: State,
    step: LuaStep,
    tid: f64,
    done: bool,
    /// The last event's statements: kind and latency.
    parts: Vec<(u8, u64)>,
}

impl LuaThread {
    /// The thread's state with the script loaded and its `thread_init` run (its
    /// connection and prepared statements made), outside the measured window.
    pub fn new(ep: &Endpoint, plan: &LuaThreadPlan) -> Result<LuaThread, SqlError> {
        let step = plan.step.clone();
        let state = plan.state(ep, "run")?;
        let tid = plan.tid as f64;
        if let Some(init) = state.function("thread_init") {
            init.call::<()>(tid)
                .map_err(|e| failed(&step, "thread_init()", &e))?;
        }
        // thread_init's statements are setup, not the first event's.
        let mut parts = Vec::with_capacity(64);
        state.take(&mut parts);
        Ok(LuaThread {
            state,
            step,
            tid,
            done: false,
            parts,
        })
    }

    /// One `event()`, again after each error the driver ignores (a deadlock), as
    /// sysbench's thread loop does; an event that returns a value other than nil or
    /// false ends the thread, uncounted.
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        let (stop, restarts): (bool, u32) = self
            .state
            .run_event
            .call(self.tid)
            .map_err(|e| failed(&self.step, "event()", &e))?;
        let (queries, rows) = self.state.take(&mut self.parts);
        Ok(Outcome {
            queries,
            rows,
            ops: 1,
            retried: restarts > 0,
            done: stop,
            class: 0,
        })
    }

    /// Hands each statement of the last event to `f`: its kind and latency.
    pub fn parts(&mut self, f: &mut dyn FnMut(u8, u64)) {
        for (c, ns) in self.parts.drain(..) {
            f(c, ns);
        }
    }

    /// The script's `thread_done` (a bulk insert's last rows, closing statements).
    pub fn finish(&mut self) -> Result<(), SqlError> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        match self.state.function("thread_done") {
            Some(f) => f
                .call::<()>(self.tid)
                .map_err(|e| failed(&self.step, "thread_done()", &e)),
            None => Ok(()),
        }
    }
}

/// One thread of the script's prepare command: the command once (on every thread when
/// the script marks it parallel, else on the first), then done.
pub struct LuaPrepare {
    state: Option<State>,
    step: LuaStep,
}

impl LuaPrepare {
    /// The thread's state with the script loaded for sysbench's `prepare` command.
    pub fn new(ep: &Endpoint, plan: &LuaThreadPlan) -> Result<LuaPrepare, SqlError> {
        let step = plan.step.clone();
        if !step.has_prepare {
            return Err(SqlError::Input(format!(
                "{}: the script has no prepare command (sysbench.cmdline.commands.prepare) \
                 and no prepare() function; run the lua step alone on tables made before",
                step.name()
            )));
        }
        let runs = plan.tid == 0 || step.parallel_prepare;
        let state = if runs {
            Some(plan.state(ep, "prepare")?)
        } else {
            None
        };
        Ok(LuaPrepare { state, step })
    }

    /// The whole command as one event; the next call says the thread is done.
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        let Some(state) = self.state.take() else {
            return Ok(Outcome {
                done: true,
                ..Outcome::default()
            });
        };
        let ok: bool = state
            .run_prepare
            .call(())
            .map_err(|e| failed(&self.step, "prepare", &e))?;
        if !ok {
            return Err(SqlError::Query {
                context: format!("{} prepare", self.step.name()),
                message: "the prepare command returned false".into(),
                code: None,
            });
        }
        let (queries, rows) = state.counts();
        Ok(Outcome {
            queries,
            rows,
            ops: rows.max(1),
            ..Outcome::default()
        })
    }
}
