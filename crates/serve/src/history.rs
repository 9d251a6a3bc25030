//! The History page (`/history?plan=HASH&step=S&metric=ops_sec`): a plan's runs as
//! points, one per group of repeats, oldest first; the change points and the per-op
//! costs that moved at each (`plumb_report::history::history`, the figures of `plumb
//! history`); the stable region the newest point is judged against (the points since the
//! last change point); each change point linked to the change `plumb check` kept for
//! it, with its triage state. Without `plan`: the plans in the store with their runs.

use crate::app::{json_page, Ctx, Page, PageError};
use crate::index::groups_of;
use crate::layout::{num, pct, Nav};
use crate::query::{encode, Bad, Params};
use maud::{html, PreEscaped};
use plumb_report::history::{self, History};
use plumb_report::Version;
use plumb_store::pages::RunHead;
use plumb_store::{ChangeFilter, ChangeRecord};
use serde::Serialize;
use std::collections::BTreeMap;

/// Points a history shows unless `groups=` says otherwise.
pub const DEFAULT_GROUPS: usize = 30;

/// Every run's head (status, group), by id.
pub fn heads(cx: &Ctx<'_>) -> Result<BTreeMap<i64, RunHead>, PageError> {
    Ok(cx
        .store
        .run_heads()?
        .into_iter()
        .map(|h| (h.id, h))
        .collect())
}

/// A plan's finished runs as points (one per group of repeats, labelled `gN`), oldest
/// first, the newest `max` of them, up to run `upto` when given.
pub fn plan_points(
    cx: &Ctx<'_>,
    plan: &str,
    upto: Option<i64>,
    max: usize,
) -> Result<Vec<Version>, PageError> {
    let heads = heads(cx)?;
    let groups = groups_of(&cx.index.plan_runs(plan), &heads, upto, max);
    // Every point's runs in one read of summaries (the plot needs no intervals).
    let all: Vec<i64> = groups
        .iter()
        .flat_map(|(_, ids)| ids.iter().copied())
        .collect();
    let mut runs = summaries_by_id(cx, &all)?;
    Ok(groups
        .into_iter()
        .map(|(g, ids)| Version {
            label: format!("g{g}"),
            runs: ids.iter().filter_map(|id| runs.remove(id)).collect(),
        })
        .collect())
}

/// The step summaries of `ids` (no interval rows), by run id, for a caller that hands
/// them out to its points or blocks.
pub fn summaries_by_id(
    cx: &Ctx<'_>,
    ids: &[i64],
) -> Result<BTreeMap<i64, plumb_store::StoredRun>, PageError> {
    Ok(cx
        .store
        .runs_summaries(ids)?
        .into_iter()
        .map(|r| (r.run.id, r))
        .collect())
}

/// One plan in the list.
#[derive(Debug, Serialize)]
struct PlanRow {
    plan: String,
    label: String,
    runs: usize,
    groups: usize,
    newest_run: i64,
    host: Option<String>,
}

/// The stable region of one step: the points since its last change point.
#[derive(Debug, Serialize)]
struct Stable {
    step: String,
    from_point: usize,
    points: Vec<String>,
    runs: usize,
    median: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Data<'a> {
    plan: &'a str,
    label: String,
    metric: &'a str,
    history: &'a History,
    stable: Vec<Stable>,
    /// (step, change point index) → the kept change.
    kept: Vec<(String, usize, &'a ChangeRecord)>,
}

/// The kept change of a change point: same step and direction, first run within the
/// point the change starts at (after the point before it).
pub fn kept_for<'a>(
    kept: &'a [ChangeRecord],
    points: &[Version],
    step: &str,
    index: usize,
    regression: bool,
) -> Option<&'a ChangeRecord> {
    let after = points.get(index)?;
    let lo = points[..index]
        .iter()
        .flat_map(|v| v.runs.iter().map(|r| r.run.id))
        .max()
        .unwrap_or(i64::MIN);
    let hi = after.runs.iter().map(|r| r.run.id).max()?;
    let dir = if regression {
        "regression"
    } else {
        "improvement"
    };
    kept.iter().find(|c| {
        c.step == step
            && c.metric == "ops_sec"
            && c.direction == dir
            && c.at_run > lo
            && c.at_run <= hi
    })
}

fn list(cx: &Ctx<'_>, json: bool) -> Result<Page, PageError> {
    let heads = heads(cx)?;
    let mut rows: Vec<PlanRow> = Vec::new();
    for (plan, ids) in cx.index.plans() {
        let groups = groups_of(&ids, &heads, None, usize::MAX);
        let Some(&newest) = ids.last() else { continue };
        rows.push(PlanRow {
            label: String::new(),
            runs: groups.iter().map(|(_, v)| v.len()).sum(),
            groups: groups.len(),
            newest_run: newest,
            host: cx.index.get(newest).and_then(|e| e.host),
            plan,
        });
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.newest_run));
    // Each plan's label from its newest run's record, read in one query.
    let ids: Vec<i64> = rows.iter().map(|r| r.newest_run).collect();
    let recs: BTreeMap<i64, plumb_store::RunRecord> = cx
        .store
        .run_records(&ids)?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    for r in &mut rows {
        if let Some(rec) = recs.get(&r.newest_run) {
            r.label = label_of(rec);
        }
    }
    if json {
        return json_page(&rows);
    }
    let body = html! {
        h1 { "History" }
        p.sub { "Pick a plan: its runs as points over time, one per group of repeats, with its change points." }
        table #plans {
            thead { tr { th { "plan" } th { "what it runs" } th { "host" } th.num { "groups" } th.num { "finished runs" } th.num { "newest run" } } }
            tbody {
                @for r in &rows {
                    tr {
                        td { a href={ "/history?plan=" (encode(&r.plan)) } { code { (r.plan) } } }
                        td { (r.label) }
                        td { (r.host.as_deref().unwrap_or("")) }
                        td.num { (r.groups) }
                        td.num { (r.runs) }
                        td.num { a href={ "/run/" (r.newest_run) } { (r.newest_run) } }
                    }
                }
            }
        }
        @if rows.is_empty() { p.note { "No run in the store kept its plan." } }
    };
    Ok(Page::Html {
        title: "History".into(),
        nav: Nav::History,
        body,
        refresh: None,
        script: None,
    })
}

/// What a run runs, as a person reads it (`readrandom on rocksdb 10.4.2`).
pub fn label_of(r: &plumb_store::RunRecord) -> String {
    format!(
        "{} on {} {}{}",
        r.workload,
        r.engine,
        r.engine_version,
        r.tag
            .as_ref()
            .map(|t| format!(" (tag {t})"))
            .unwrap_or_default()
    )
}

/// `groups=N`: the points of a history [default DEFAULT_GROUPS, 2 to 500].
fn groups_param(p: &Params) -> Result<usize, PageError> {
    match p.int("groups", "a number of points")? {
        None => Ok(DEFAULT_GROUPS),
        Some(n) if (2..=500).contains(&n) => Ok(n as usize),
        Some(n) => Err(Bad {
            param: "groups".into(),
            why: format!("{n}: give from 2 to 500 points"),
        }
        .into()),
    }
}

/// Keeps `step` alone in the history, or says which steps the plan has.
fn only_step(h: &mut History, step: &str) -> Result<(), PageError> {
    if !h.steps.iter().any(|s| s.step == step) {
        return Err(Bad {
            param: "step".into(),
            why: format!(
                "{step:?}: the plan has no such measured step; it has {}",
                h.steps
                    .iter()
                    .map(|s| s.step.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
        .into());
    }
    h.steps.retain(|s| s.step == step);
    Ok(())
}

/// Each step's stable region: the points since its last change point, which the
/// newest point is judged against, and their median.
fn stable_regions(h: &History) -> Vec<Stable> {
    h.steps
        .iter()
        .map(|s| {
            let from = s.changes.last().map_or(0, |c| c.point.index);
            let vals: Vec<f64> = s.values[from..].iter().flatten().copied().collect();
            Stable {
                step: s.step.clone(),
                from_point: from,
                points: h.points[from..].iter().map(|p| p.label.clone()).collect(),
                runs: h.points[from..].iter().map(|p| p.run_ids.len()).sum(),
                median: plumb_report::stats::median(&vals),
            }
        })
        .collect()
}

/// `GET /history`.
pub fn get(cx: &Ctx<'_>, p: &Params, json: bool) -> Result<Page, PageError> {
    let Some(plan) = p.get("plan") else {
        return list(cx, json);
    };
    let metric = p.get("metric").unwrap_or("ops_sec");
    if metric != "ops_sec" {
        return Err(Bad {
            param: "metric".into(),
            why: format!(
                "{metric:?}: a history follows ops_sec (each change point then names the per-op \
                 costs that moved); compare other metrics with /compare"
            ),
        }
        .into());
    }
    let max = groups_param(p)?;
    let points = plan_points(cx, plan, None, max)?;
    if points.is_empty() {
        return Err(PageError::NotFound(format!(
            "no finished run of plan {plan}; /history lists the plans the store holds"
        )));
    }
    let mut h = history::history(&points, &plumb_report::changepoint::Options::default());
    if let Some(step) = p.get("step") {
        only_step(&mut h, step)?;
    }
    let kept = cx.store.changes(&ChangeFilter {
        plan: Some(plan.to_string()),
        ..Default::default()
    })?;
    let stable = stable_regions(&h);
    let mut links: Vec<(String, usize, &ChangeRecord)> = Vec::new();
    for s in &h.steps {
        for c in &s.changes {
            if let Some(k) = kept_for(&kept, &points, &s.step, c.point.index, c.regression) {
                links.push((s.step.clone(), c.point.index, k));
            }
        }
    }
    let label = points
        .last()
        .and_then(|v| v.runs.last())
        .map(|r| label_of(&r.run))
        .unwrap_or_default();
    let data = Data {
        plan,
        label: label.clone(),
        metric,
        history: &h,
        stable,
        kept: links,
    };
    if json {
        return json_page(&data);
    }
    let body = html! {
        h1 { "History of " (label) }
        p.sub { "plan " code { (plan) } " · " (h.points.len()) " points (groups of repeats), oldest first · ops/s" }
        @for (s, st) in h.steps.iter().zip(&data.stable) {
            section.step id={ "step-" (s.step) } {
                h2 { (s.step) }
                div.side {
                    div {
                        // The report's chart: every string in it escaped by plumb_report.
                        @if let Some(svg) = history::step_trend_svg(&h, &s.step) { (PreEscaped(svg)) }
                    }
                    div {
                        p.stable id={ "stable-" (s.step) } {
                            "The newest point is judged against the stable region since the last change point: "
                            (st.points.first().map(String::as_str).unwrap_or("")) " … " (st.points.last().map(String::as_str).unwrap_or(""))
                            " (" (st.points.len()) " points, " (st.runs) " runs, median " (num(st.median)) " ops/s)."
                        }
                        @if s.changes.is_empty() { p.note { "No change point." } }
                    }
                }
                @for c in &s.changes {
                    div.change id={ "cp-" (s.step) "-" (c.point.index) } {
                        h3 { (history::change_text(c, s.floor.as_ref())) }
                        p {
                            "at point " (c.point.index) " (" (h.points[c.point.index].label) ", runs "
                            @for (i, id) in h.points[c.point.index].run_ids.iter().enumerate() {
                                @if i > 0 { ", " } a href={ "/run/" (id) } { (id) }
                            }
                            "): " (pct(Some(c.point.ratio)))
                            @if let Some((_, _, k)) = data.kept.iter().find(|(st, i, _)| st == &s.step && *i == c.point.index) {
                                " · kept as " a.kept href={ "/changes?step=" (encode(&k.step)) "#change-" (k.id) } { "change #" (k.id) }
                                " " span class={ "state " (k.state.as_str()) } { (k.state.as_str()) }
                            } @else {
                                " · not kept as a change (plumb check keeps the changes it fails on)"
                            }
                        }
                        @if c.causes.is_empty() {
                            p.note { "No per-op cost moved significantly with it." }
                        } @else {
                            table.causes {
                                thead { tr { th { "cost" } th.num { "before" } th.num { "after" } th.num { "ratio" } th.num { "share of Δtime/op" } } }
                                tbody {
                                    @for cause in &c.causes {
                                        tr {
                                            td { code { (cause.cost) } }
                                            td.num { (num(Some(cause.before))) }
                                            td.num { (num(Some(cause.after))) }
                                            td.num { (format!("×{:.2}", cause.ratio)) }
                                            td.num { (cause.share.map(|x| format!("{:.0}%", x * 100.0)).unwrap_or_else(|| "—".into())) }
                                        }
                                    }
                                }
                            }
                        }
                        p.note { "Counters: " (c.counters) }
                    }
                }
            }
        }
        p.note { (h.method) }
    };
    Ok(Page::Html {
        title: format!("History of {label}"),
        nav: Nav::History,
        body,
        refresh: None,
        script: None,
    })
}
