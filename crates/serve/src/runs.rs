//! The Runs page (`/`, `/runs`): every run, newest first, filtered by engine, workload,
//! tag, suite, host, status and date, 50 a page, filtered and paged in SQL
//! (`Store::runs_page`). A running run shows how far it has come, and the page reloads
//! every 2 s while one is shown.

use crate::app::{json_page, Ctx, Page, PageError};
use crate::layout::{datalist, pager, Nav};
use crate::query::{encode, Params};
use maud::html;
use plumb_core::RunStatus;
use plumb_store::pages::{Progress, RunFacets, RunFilter};
use serde::Serialize;

/// Runs a page.
pub const PER_PAGE: usize = 50;

/// Reloads the page every 2 s unless someone is typing in its filter form.
pub const RELOAD_SCRIPT: &str = r#"setInterval(function(){var a=document.activeElement;if(!a||!/INPUT|SELECT|TEXTAREA/.test(a.tagName))location.reload();},2000);"#;

/// One run as the page lists it.
#[derive(Debug, Serialize)]
struct Row {
    id: i64,
    status: RunStatus,
    started_at: String,
    ended_at: Option<String>,
    engine: String,
    engine_version: String,
    workload: String,
    tag: Option<String>,
    host: Option<String>,
    suite_id: Option<i64>,
    group_id: Option<i64>,
    plan: Option<String>,
}

/// The filter as asked, echoed in the JSON.
#[derive(Debug, Serialize)]
struct Asked {
    engine: Option<String>,
    workload: Option<String>,
    tag: Option<String>,
    suite: Option<i64>,
    host: Option<String>,
    status: Option<String>,
    since: Option<String>,
    until: Option<String>,
}

/// The page's content.
#[derive(Debug, Serialize)]
struct Data {
    page: usize,
    per_page: usize,
    total: i64,
    filter: Asked,
    runs: Vec<Row>,
    progress: Vec<Progress>,
    facets: RunFacets,
    hosts: Vec<String>,
}

/// The filter the query asks for; a malformed value is a 400 naming it.
pub fn filter(p: &Params) -> Result<RunFilter, PageError> {
    let page = p.page()?;
    let suite = match p.get("suite") {
        None => None,
        Some(s) => {
            Some(
                s.trim_start_matches('s')
                    .parse::<i64>()
                    .map_err(|_| crate::query::Bad {
                        param: "suite".into(),
                        why: format!(
                            "{s:?} is not a suite id; give a number (or s3), as `plumb runs` shows"
                        ),
                    })?,
            )
        }
    };
    Ok(RunFilter {
        engine: p.text("engine"),
        workload: p.text("workload"),
        tag: p.text("tag"),
        suite,
        host: p.text("host"),
        status: p.status("status")?,
        since: p.date("since")?,
        until: p.date("until")?,
        limit: PER_PAGE,
        offset: (page - 1) * PER_PAGE,
    })
}

/// `GET /runs`.
pub fn get(cx: &Ctx<'_>, p: &Params, json: bool) -> Result<Page, PageError> {
    let page = p.page()?;
    let f = filter(p)?;
    let (runs, total) = cx.store.runs_page(&f)?;
    let running: Vec<i64> = runs
        .iter()
        .filter(|r| r.status == RunStatus::Running)
        .map(|r| r.id)
        .collect();
    let progress = cx.store.progress(&running)?;
    let rows: Vec<Row> = runs
        .into_iter()
        .map(|r| {
            let e = cx.index.get(r.id);
            Row {
                host: r.host.as_ref().and_then(|h| h.inventory.hostname.clone()),
                plan: e.and_then(|e| e.plan),
                id: r.id,
                status: r.status,
                started_at: r.started_at,
                ended_at: r.ended_at,
                engine: r.engine,
                engine_version: r.engine_version,
                workload: r.workload,
                tag: r.tag,
                suite_id: r.suite_id,
                group_id: r.group_id,
            }
        })
        .collect();
    let data = Data {
        page,
        per_page: PER_PAGE,
        total,
        filter: Asked {
            engine: f.engine.clone(),
            workload: f.workload.clone(),
            tag: f.tag.clone(),
            suite: f.suite,
            host: f.host.clone(),
            status: f.status.map(|s| s.as_str().to_string()),
            since: f.since.clone(),
            until: f.until.clone(),
        },
        runs: rows,
        progress,
        facets: cx.store.run_facets()?,
        hosts: cx.index.hosts().into_keys().collect(),
    };
    if json {
        return json_page(&data);
    }
    let live =
        !data.progress.is_empty() || data.runs.iter().any(|r| r.status == RunStatus::Running);
    let statuses = ["running", "ok", "failed", "interrupted"];
    let asked = |k: &str| p.get(k).unwrap_or("").to_string();
    let body = html! {
        h1 { "Runs" }
        p.sub { (data.total) " run" @if data.total != 1 { "s" } " match; newest first" }
        form.filters #filters method="get" action="/runs" {
            label { "engine" input name="engine" list="engines" value=(asked("engine")); }
            label { "workload" input name="workload" list="workloads" value=(asked("workload")); }
            label { "tag" input name="tag" list="tags" value=(asked("tag")); }
            label { "suite" input name="suite" list="suites" size="6" value=(asked("suite")); }
            label { "host" input name="host" list="hosts" value=(asked("host")); }
            label { "status"
                select name="status" {
                    option value="" { "any" }
                    @for s in statuses {
                        option value=(s) selected[p.get("status") == Some(s)] { (s) }
                    }
                }
            }
            label { "since" input type="date" name="since" value=(asked("since")); }
            label { "until" input type="date" name="until" value=(asked("until")); }
            button type="submit" { "filter" }
            a href="/runs" { "clear" }
        }
        (datalist("engines", &data.facets.engines))
        (datalist("workloads", &data.facets.workloads))
        (datalist("tags", &data.facets.tags))
        (datalist("suites", &data.facets.suites.iter().map(|(id, _)| id.to_string()).collect::<Vec<_>>()))
        (datalist("hosts", &data.hosts))
        (pager("/runs", p, page, PER_PAGE, data.total))
        div.scroll {
            table #runs {
                thead { tr {
                    th.num { "run" } th { "started" } th { "status" } th { "engine" }
                    th { "workload" } th { "tag" } th { "host" } th { "suite" } th { "group" }
                    th { "plan" }
                } }
                tbody {
                    @for r in &data.runs {
                        tr id={ "run-" (r.id) } {
                            td.num { a href={ "/run/" (r.id) } { (r.id) } }
                            td.nowrap { (r.started_at) }
                            td {
                                @if r.status == RunStatus::Running {
                                    span.live { "running" }
                                    @if let Some(pr) = data.progress.iter().find(|x| x.run_id == r.id) {
                                        span.reason {
                                            (pr.steps) " step" @if pr.steps != 1 { "s" } " done, "
                                            (pr.intervals) " intervals"
                                            @if let Some(s) = &pr.last_step { ", last " (s) }
                                        }
                                    } @else {
                                        span.reason { "no step done yet" }
                                    }
                                } @else {
                                    (r.status.as_str())
                                }
                            }
                            td.nowrap { (r.engine) " " (r.engine_version) }
                            td.wrap { (r.workload) }
                            td { (r.tag.as_deref().unwrap_or("")) }
                            td { @if let Some(h) = &r.host { a href={ "/host/" (encode(h)) } { (h) } } }
                            td { @if let Some(s) = r.suite_id { a href={ "/runs?suite=" (s) } { "s" (s) } } }
                            td { @if let Some(g) = r.group_id { a href={ "/compare?new=g" (g) } title="check this group against its plan's history" { "g" (g) } } }
                            td { @if let Some(pl) = &r.plan { a href={ "/history?plan=" (encode(pl)) } title="this plan's history" { "history" } } }
                        }
                    }
                }
            }
        }
        @if data.runs.is_empty() {
            p.note { "No run matches. " a href="/runs" { "Show every run." } }
        }
        (pager("/runs", p, page, PER_PAGE, data.total))
    };
    Ok(Page::Html {
        title: "Runs".into(),
        nav: Nav::Runs,
        body,
        refresh: None,
        script: live.then_some(RELOAD_SCRIPT),
    })
}
