//! The Compare page (`/compare?base=SEL&new=SEL`): pick a base and a new side by
//! selector (runs, ranges, groups, suites, `tag=…,host=…` filters; base empty: the new
//! runs' plan history) and get the CI gate's verdicts (`plumb_report::gate::gate`,
//! called with `record: false` so looking never writes): change, interval, floor, A/A
//! delta, the per-op costs that moved, each step's history plot beside its verdict;
//! then the comparison's tables and charts (`plumb_report::compare`), the figures of
//! `plumb compare`.

use crate::app::{json_page, now, Ctx, Page, PageError};
use crate::layout::{datalist, pct, Nav};
use crate::query::{encode, Bad, Params};
use maud::{html, Markup, PreEscaped};
use plumb_report::check::{status_line, CheckReport, Verdict};
use plumb_report::gate::{gate, GateRequest};
use plumb_report::history::{self, Cause, History};
use plumb_report::select;
use plumb_report::Version;
use serde::Serialize;
use std::collections::BTreeMap;

/// Points of the plan's history drawn beside each verdict.
const TREND_GROUPS: usize = 20;

#[derive(Serialize)]
struct Data<'a> {
    base: String,
    new: String,
    status: String,
    report: &'a CheckReport,
    causes: BTreeMap<String, Vec<Cause>>,
    comparison: &'a plumb_report::Comparison,
}

fn form(cx: &Ctx<'_>, p: &Params) -> Result<Markup, PageError> {
    let f = cx.store.run_facets()?;
    let mut picks: Vec<String> = Vec::new();
    picks.extend(f.tags.iter().map(|t| format!("tag={t}")));
    picks.extend(f.groups.iter().take(30).map(|(g, _)| format!("g{g}")));
    picks.extend(f.suites.iter().map(|(s, _)| format!("s{s}")));
    picks.extend(cx.index.hosts().into_keys().map(|h| format!("host={h}")));
    picks.extend(f.engines.iter().map(|e| format!("engine={e}")));
    Ok(html! {
        form.filters #pick method="get" action="/compare" {
            label { "base (empty: the new runs' plan history)"
                input #base name="base" list="selectors" size="28" value=(p.get("base").unwrap_or("")) placeholder="g12, tag=release, 10-14 …"; }
            label { "new"
                input #new name="new" list="selectors" size="28" value=(p.get("new").unwrap_or("")) placeholder="g20, s3,host=db7 …"; }
            label { "threshold %" input name="threshold" size="4" value=(p.get("threshold").unwrap_or("5")); }
            label { "history groups" input name="history" size="3" value=(p.get("history").unwrap_or("5")); }
            button #compare type="submit" { "compare" }
        }
        (datalist("selectors", &picks))
        p.note { "A side is a run (12), a range (12-16), a group of repeats (g12), a suite (s3) or filters (tag=x,engine=y,host=z), after a suite if you like (s3,host=db7)." }
    })
}

/// `history=N`: how many earlier groups of the plan make the base [default 5, 1 to 100].
fn history_groups(p: &Params) -> Result<usize, PageError> {
    match p.int("history", "a number of groups")? {
        None => Ok(5),
        Some(n) if (1..=100).contains(&n) => Ok(n as usize),
        Some(n) => Err(Bad {
            param: "history".into(),
            why: format!("{n}: give from 1 to 100 earlier groups"),
        }
        .into()),
    }
}

/// Each step's trend beside its verdict: the new runs' plan and its history of groups
/// up to the newest new run, when it has two points or more.
fn trend_of(cx: &Ctx<'_>, new: &Version) -> Result<Option<(String, History)>, PageError> {
    Ok(new
        .runs
        .first()
        .and_then(|r| plumb_report::base::plan_identity(r.run.plan.as_ref()))
        .map(|plan| {
            let upto = new.runs.iter().map(|r| r.run.id).max();
            crate::history::plan_points(cx, &plan, upto, TREND_GROUPS).map(|pts| (plan, pts))
        })
        .transpose()?
        .filter(|(_, pts)| pts.len() >= 2)
        .map(|(plan, pts)| {
            (
                plan,
                history::history(&pts, &plumb_report::changepoint::Options::default()),
            )
        }))
}

/// `GET /compare`.
pub fn get(cx: &Ctx<'_>, p: &Params, json: bool) -> Result<Page, PageError> {
    let picker = form(cx, p)?;
    let Some(new_sel) = p.text("new") else {
        if json {
            return Err(Bad {
                param: "new".into(),
                why: "give the runs to judge, e.g. new=g12".into(),
            }
            .into());
        }
        return Ok(Page::Html {
            title: "Compare".into(),
            nav: Nav::Compare,
            body: html! { h1 { "Compare" } (picker) },
            refresh: None,
            script: None,
        });
    };
    let threshold = p.percent("threshold", 5.0)? / 100.0;
    let groups = history_groups(p)?;
    let base_sel = p.text("base");
    let new = select::versions(cx.store, std::slice::from_ref(&new_sel))
        .map_err(|e| PageError::select("new", e))?
        .remove(0);
    let named = match &base_sel {
        Some(b) => Some(
            select::versions(cx.store, std::slice::from_ref(b))
                .map_err(|e| PageError::select("base", e))?
                .remove(0),
        ),
        None => None,
    };
    let metrics = vec![plumb_report::metrics::metric("ops_sec")];
    let gated = gate(
        cx.store,
        GateRequest {
            new: new.clone(),
            base: named,
            history: groups,
            threshold,
            unstable: threshold,
            metrics,
            steps: Vec::new(),
            record: false,
            now: now(),
        },
    )
    .map_err(|e| PageError::select(if base_sel.is_some() { "base" } else { "new" }, e))?;
    let (report, base) = (gated.report, gated.base);
    let comparison = plumb_report::compare(&[base.clone(), new.clone()]);
    let mut causes: BTreeMap<String, Vec<Cause>> = BTreeMap::new();
    for j in &report.results {
        causes
            .entry(j.step.clone())
            .or_insert_with(|| history::causes_between(&base, &new, &j.step));
    }
    let status = status_line(&report);
    if json {
        return json_page(&Data {
            base: base.label.clone(),
            new: new.label.clone(),
            status,
            report: &report,
            causes,
            comparison: &comparison,
        });
    }
    let trend = trend_of(cx, &new)?;
    let body = html! {
        h1 { "Compare" }
        (picker)
        p.status #status { strong { (status) } " · " (new.label) " against " (base.label) }
        @if !comparison.warnings.is_empty() {
            ul.warnings { @for w in &comparison.warnings { li { (w) } } }
        }
        table #verdicts {
            thead { tr {
                th { "step" } th { "verdict" } th.num { "change" } th.num { "95% interval" }
                th.num { "floor" } th.num { "A/A" } th.num { "repeats" } th { "why" } th { "costs that moved" } th { "history" }
            } }
            tbody {
                @for j in &report.results {
                    tr id={ "verdict-" (j.step) } class=[(j.verdict == Verdict::Regression).then_some("bad")] {
                        td { code { (j.step) } " " span.note { (j.metric) } }
                        td {
                            span class={ "verdict " (match j.verdict { Verdict::Pass => "ok", Verdict::Improved => "info", Verdict::Unstable => "warn", Verdict::Regression => "fail" }) } { (j.verdict.word()) }
                            @if let Some((id, state)) = j.change {
                                br; a href={ "/changes#change-" (id) } { "change #" (id) } " " span class={ "state " (state.as_str()) } { (state.as_str()) }
                            }
                        }
                        td.num { (pct(j.ratio)) }
                        td.num { @if let Some((lo, hi)) = j.ci { (pct(Some(lo))) " to " (pct(Some(hi))) } @else { "—" } }
                        td.num { @if let Some(f) = &j.floor { (format!("{:.1}%", 100.0 * f.floor)) } @else { "—" } }
                        td.num { @if let Some(f) = &j.floor { (format!("{:+.1}%", 100.0 * f.aa)) } @else { "—" } }
                        td.num { (j.n.0) " / " (j.n.1) }
                        td.wrap { (j.reason) }
                        td.wrap {
                            @for c in causes.get(&j.step).map(|v| &v[..]).unwrap_or(&[]).iter().take(4) {
                                div { code { (history::cause_text(c)) } }
                            }
                        }
                        td {
                            @if let Some((plan, h)) = &trend {
                                // The report's chart: its strings escaped by plumb_report.
                                @if let Some(svg) = history::step_trend_svg(h, &j.step) {
                                    div.trend { (PreEscaped(svg)) }
                                    a href={ "/history?plan=" (encode(plan)) "&step=" (encode(&j.step)) } { "history" }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "The comparison" }
        // The report's tables and charts; every string in them escaped by plumb_report.
        (PreEscaped(plumb_report::html::comparison_body(&comparison)))
    };
    Ok(Page::Html {
        title: format!("Compare {} against {}", new.label, base.label),
        nav: Nav::Compare,
        body,
        refresh: None,
        script: None,
    })
}
