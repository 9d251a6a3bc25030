//! The Bisect page (`/bisect/ID`): one `plumb bisect`'s table as the terminal prints it
//! (each end and judged commit with its build time, verdict, figure and what decided it,
//! the runs it rests on linked), where it stands and what was asked, and the change it
//! searches for. The Changes page links each change to its bisects here; a bisect under
//! way reloads every 10 s, since its state is saved after every step.

use crate::app::{json_page, Ctx, Page, PageError};
use crate::layout::Nav;
use crate::query::Params;
use maud::html;
use plumb_bisect::state::State;

/// `GET /bisect/ID`.
pub fn get(cx: &Ctx<'_>, _p: &Params, id: i64, json: bool) -> Result<Page, PageError> {
    let rec = cx.store.bisect(id)?;
    let state: State = serde_json::from_str(&rec.state).map_err(|e| {
        PageError::Internal(format!(
            "bisect {id}'s state in the store does not parse ({e}); a newer plumb wrote it?"
        ))
    })?;
    if json {
        return json_page(&state);
    }
    let rows = state.rows();
    let a = &state.asked;
    let running = state.status == "running";
    let n = state.commits.len().saturating_sub(1);
    let body = html! {
        h1 { "Bisect " (id) }
        p.sub #bisect-status {
            span class={ "state " (state.status) } data-status=(state.status) { (state.status) }
            " " (state.result.as_deref().unwrap_or("under way: its state is saved after every step"))
        }
        @if let Some(c) = rec.change {
            p { "Searches for change " a #bisect-change href={ "/changes#change-" (c) } { (c) } "." }
        }
        @if let Some(e) = &state.ends {
            p.note { "judged by " (e.metric.as_str()) " on " code { (e.step) } ": " (e.why) }
        }
        div.scroll {
            table #bisect {
                thead { tr {
                    th { "commit" } th.num { "build s" } th { "verdict" } th { "figure" }
                    th { "subject" } th { "what decided it" } th { "runs" }
                } }
                tbody {
                    @for r in &rows {
                        tr data-verdict=(r.verdict) {
                            td { code title=(r.hash) { (r.hash.chars().take(10).collect::<String>()) } }
                            td.num { (r.build) }
                            td { (r.verdict) }
                            td.nowrap { (r.figure) }
                            td.wrap { (r.subject) }
                            td.wrap { (r.note) }
                            td.nowrap {
                                @for (k, run) in r.runs.iter().enumerate() {
                                    @if k > 0 { " " }
                                    a href={ "/run/" (run) } { (run) }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !state.moved.is_empty() {
            h2 { "Per-op costs that moved between the ends" }
            ul #moved { @for m in &state.moved { li { code { (m) } } } }
        }
        h2 { "What was asked" }
        table.kv {
            tr { th { "repository" } td { code { (a.repo) } } }
            tr { th { "good, bad" } td { code { (a.good) } ", " code { (a.bad) } " (" (n) " commit" @if n != 1 { "s" } ")" } }
            tr { th { "measured" } td { code { "plumb " (a.command.join(" ")) } } }
            tr { th { "build" } td { code { (a.build) } } }
            tr { th { "started, saved" } td { (rec.started_at) ", " (rec.updated_at) } }
        }
        @if matches!(state.status.as_str(), "running" | "stopped") {
            p.note { "Continue it with " code { "plumb bisect --resume " (id) } "." }
        }
    };
    Ok(Page::Html {
        title: format!("Bisect {id}"),
        nav: Nav::Changes,
        body,
        refresh: running.then_some(10),
        script: None,
    })
}
