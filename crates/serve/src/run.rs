//! The Run page (`/run/ID`): the one-line answer per step first, then the HTML report's
//! tables and charts (the same `plumb_report::html` document `plumb report` writes,
//! embedded), with links to its plan (JSON at `/run/ID/plan`), its host, its plan's
//! history and its base (its group checked against that history). A running run
//! reloads every 2 s and shows the steps and intervals stored so far.

use crate::app::{json_page, Ctx, Page, PageError};
use crate::layout::Nav;
use crate::query::{encode, Params};
use maud::{html, PreEscaped};
use plumb_core::{Interval, RunStatus};
use plumb_store::{RunRecord, StepRecord};
use serde::Serialize;

#[derive(Serialize)]
struct StepJson<'a> {
    #[serde(flatten)]
    step: &'a StepRecord,
    intervals: &'a [Interval],
}

#[derive(Serialize)]
struct Data<'a> {
    run: &'a RunRecord,
    answers: Vec<String>,
    plan_identity: Option<String>,
    host: Option<String>,
    steps: Vec<StepJson<'a>>,
}

/// `GET /run/ID`.
pub fn get(cx: &Ctx<'_>, _p: &Params, id: i64, json: bool) -> Result<Page, PageError> {
    let stored = cx.store.run(id)?;
    let answers = plumb_report::explain::lines(&stored);
    let identity = plumb_report::base::plan_identity(stored.run.plan.as_ref());
    let host = stored
        .run
        .host
        .as_ref()
        .and_then(|h| h.inventory.hostname.clone());
    if json {
        return json_page(&Data {
            run: &stored.run,
            answers,
            plan_identity: identity,
            host,
            steps: stored
                .steps
                .iter()
                .map(|(s, i)| StepJson {
                    step: s,
                    intervals: i,
                })
                .collect(),
        });
    }
    let mut profiles = plumb_report::html::Profiles::new();
    let mine = cx.store.profiles(id)?;
    if !mine.is_empty() {
        profiles.insert(id, mine);
    }
    // The report escapes every string it takes from a run (plumb_report::html::esc);
    // it is embedded as the document `plumb report` writes.
    let report = plumb_report::html::report_body(std::slice::from_ref(&stored), None, &profiles);
    let r = &stored.run;
    let running = r.status == RunStatus::Running;
    let intervals: usize = stored.steps.iter().map(|(_, i)| i.len()).sum();
    let body = html! {
        nav.sub #links {
            "run " (r.id) " · " (r.status.as_str()) " · "
            @if r.plan.is_some() { a #plan href={ "/run/" (r.id) "/plan" } { "plan (JSON)" } " · " }
            @if let Some(h) = &host { "host " a #host href={ "/host/" (encode(h)) } { (h) } " · " }
            @if let Some(pl) = &identity { a #history href={ "/history?plan=" (encode(pl)) } { "its plan's history" } " · " }
            @if let Some(g) = r.group_id {
                "group g" (g) " · "
                a #base href={ "/compare?new=g" (g) } { "its group against its base" }
            } @else {
                a #base href={ "/compare?new=" (r.id) } { "against its base" }
            }
            @if let Some(s) = r.suite_id { " · " a href={ "/runs?suite=" (s) } { "suite s" (s) } }
        }
        @if running {
            p.live #progress {
                "running: " (stored.steps.len()) " step" @if stored.steps.len() != 1 { "s" }
                " stored so far, " (intervals) " intervals; a step's intervals are stored when it ends. This page reloads every 2 s."
            }
        }
        @if answers.is_empty() && !running {
            p.note { "No step has a per-op answer (maintenance steps only, or none stored)." }
        }
        (PreEscaped(report))
    };
    Ok(Page::Html {
        title: format!("Run {id}"),
        nav: Nav::Runs,
        body,
        refresh: running.then_some(2),
        script: None,
    })
}

/// `GET /run/ID/plan`: the plan that made the run, as stored (for `plumb rerun`).
pub fn plan(cx: &Ctx<'_>, id: i64) -> Result<Page, PageError> {
    let stored = cx.store.run(id)?;
    let plan = stored.run.plan.ok_or_else(|| {
        PageError::NotFound(format!(
            "run {id} kept no plan (stored before plans were kept, or made without one)"
        ))
    })?;
    Ok(Page::Raw {
        content_type: "application/json",
        body: serde_json::to_string_pretty(&plan)
            .map_err(|e| PageError::Internal(format!("run {id}'s plan: {e}")))?,
    })
}
