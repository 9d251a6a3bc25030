//! The Changes page (`/changes`): every change `plumb check` kept, newest first, once
//! however many nights it persists, with its triage state, note, who set it and when,
//! how often and when it was seen, its ratio and cost, the run it starts at, its host
//! and whether a reference run on that host changed with it (the host's change). A
//! state is set per row or for the rows ticked (`POST /changes`, the server's token
//! required), written with `Store::set_triage`, where `plumb check` and `history` read it.
//!
//! A change that a `plumb bisect --change N` searches for links to each of its bisects
//! (`a#bisect-N-B` to `/bisect/B`, with where it stands), under the runs it rests on.
//!
//! Names a browser test drives: each row is `tr#change-N`; its form holds
//! `select[name=state]` (`#state-N`), `textarea[name=note]` (`#note-N`),
//! `input[name=by]` (`#by-N`), `input[name=token]` (`#token-N`) and
//! `button[type=submit]` (`#set-N`); the bulk form is `form#bulk` with `#bulk-state`,
//! `#bulk-note`, `#bulk-by`, `#bulk-token`, `#bulk-set` and a `#pick-N` checkbox per row.

use crate::app::{json_page, now, Ctx, Page, PageError};
use crate::layout::{datalist, pager, pct, Nav, TOKEN_SCRIPT};
use crate::query::{encode, Bad, Params};
use maud::{html, Markup};
use plumb_store::bisects::BisectLink;
use plumb_store::{ChangeFilter, ChangeRecord, TriageState};
use serde::Serialize;

/// Changes a page.
pub const PER_PAGE: usize = 50;

/// Who set a state when the form leaves `by` empty.
pub const DEFAULT_BY: &str = "web";

#[derive(Serialize)]
struct Data<'a> {
    page: usize,
    per_page: usize,
    total: i64,
    writable: bool,
    changes: &'a [ChangeRecord],
    bisects: &'a [BisectLink],
}

fn state_select(id: &str, current: Option<TriageState>) -> Markup {
    html! {
        select name="state" id=(id) {
            @for s in TriageState::ALL {
                option value=(s.as_str()) selected[current == Some(s)] { (s.as_str()) }
            }
        }
    }
}

/// `GET /changes`.
pub fn get(cx: &Ctx<'_>, p: &Params, json: bool) -> Result<Page, PageError> {
    let page = p.page()?;
    let filter = ChangeFilter {
        state: p.state("state")?,
        plan: p.text("plan"),
        step: p.text("step"),
        host: p.text("host"),
        limit: PER_PAGE,
        offset: (page - 1) * PER_PAGE,
    };
    let changes = cx.store.changes(&filter)?;
    let total = cx.store.count_changes(&filter)?;
    let ids: Vec<i64> = changes.iter().map(|c| c.id).collect();
    let bisects = cx.store.bisect_links(&ids)?;
    let data = Data {
        page,
        per_page: PER_PAGE,
        total,
        writable: cx.token.is_some(),
        changes: &changes,
        bisects: &bisects,
    };
    if json {
        return json_page(&data);
    }
    let back = p.with("page", &page.to_string());
    let hosts: Vec<String> = cx.index.hosts().into_keys().collect();
    let body = html! {
        h1 { "Changes" }
        p.sub { (total) " change" @if total != 1 { "s" } " kept by plumb check, newest first; one row per change however many nights it persists." }
        @if !data.writable {
            p.warnings #readonly { "This server is read-only (started without --token): states are shown, not set. Restart it with --token T, or use plumb changes set." }
        }
        form.filters #filters method="get" action="/changes" {
            label { "state"
                select name="state" {
                    option value="" { "any" }
                    @for s in TriageState::ALL {
                        option value=(s.as_str()) selected[filter.state == Some(s)] { (s.as_str()) }
                    }
                }
            }
            label { "step" input name="step" value=(p.get("step").unwrap_or("")); }
            label { "host" input name="host" list="hosts" value=(p.get("host").unwrap_or("")); }
            @if let Some(pl) = p.get("plan") { input type="hidden" name="plan" value=(pl); }
            button type="submit" { "filter" }
            a href="/changes" { "clear" }
        }
        (datalist("hosts", &hosts))
        (pager("/changes", p, page, PER_PAGE, total))
        div.scroll {
            table #changes {
                thead { tr {
                    th { "" } th.num { "#" } th { "state" } th { "what" } th.num { "change" } th { "cost that moved" }
                    th { "runs, bisects" } th { "host" } th.num { "seen" } th { "first / last seen" } th { "set state" }
                } }
                tbody {
                    @for c in &changes {
                        tr id={ "change-" (c.id) } class=[c.state.is_open().then_some("open")] {
                            td { input type="checkbox" name="id" value=(c.id) form="bulk" id={ "pick-" (c.id) } aria-label={ "pick change " (c.id) }; }
                            td.num { (c.id) }
                            td {
                                span class={ "state " (c.state.as_str()) } data-state=(c.state.as_str()) { (c.state.as_str()) }
                                @if let Some(n) = &c.note { span.reason.note-text { (n) } }
                                @if let (Some(by), Some(at)) = (&c.set_by, &c.set_at) { span.reason { "by " (by) " at " (at) } }
                            }
                            td.wrap {
                                (c.label) br;
                                code { (c.step) } " " (c.metric) " · "
                                a href={ "/history?plan=" (encode(&c.plan)) "&step=" (encode(&c.step)) } { "history" }
                            }
                            td.num { (c.direction) br; (pct(Some(c.ratio))) }
                            td.wrap { (c.cause.as_deref().unwrap_or("—")) }
                            td.nowrap {
                                "at " a href={ "/run/" (c.at_run) } { (c.at_run) }
                                @if let Some(b) = c.before_run { br; "before " a href={ "/run/" (b) } { (b) } }
                                br; "last " a href={ "/run/" (c.last_run) } { (c.last_run) }
                                @for b in bisects.iter().filter(|b| b.change == c.id) {
                                    br; a.bisect href={ "/bisect/" (b.id) } id={ "bisect-" (c.id) "-" (b.id) } { "bisect " (b.id) } " " (b.status)
                                }
                            }
                            td {
                                @if let Some(h) = &c.host { a href={ "/host/" (encode(h)) } { (h) } }
                                @if c.host_wide { br; span.hostwide title="a reference run on this host changed the same way within a day" { "host's change" } }
                                @if c.reference { br; span.note { "reference run" } }
                            }
                            td.num { (c.seen) }
                            td.nowrap { (c.first_seen) br; (c.last_seen) }
                            td {
                                form.triage method="post" action="/changes" id={ "form-" (c.id) } {
                                    input type="hidden" name="id" value=(c.id);
                                    input type="hidden" name="back" value=(back);
                                    (state_select(&format!("state-{}", c.id), Some(c.state)))
                                    textarea name="note" id={ "note-" (c.id) } placeholder="note" { (c.note.as_deref().unwrap_or("")) }
                                    input name="by" id={ "by-" (c.id) } placeholder="who";
                                    input type="password" name="token" id={ "token-" (c.id) } placeholder="token" autocomplete="off";
                                    button type="submit" id={ "set-" (c.id) } { "set" }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if changes.is_empty() { p.note { "No change matches." } }
        h2 { "Set the ticked rows" }
        form.triage #bulk method="post" action="/changes" {
            input type="hidden" name="back" value=(back);
            (state_select("bulk-state", None))
            textarea name="note" id="bulk-note" placeholder="note" {}
            input name="by" id="bulk-by" placeholder="who";
            input type="password" name="token" id="bulk-token" placeholder="token" autocomplete="off";
            button type="submit" id="bulk-set" { "set ticked" }
        }
        p.note { "expected: the new level becomes the base; fixed: later runs are judged against the level before it; not-a-change: the gate stops failing on it; untriaged and investigating: it keeps failing." }
        (pager("/changes", p, page, PER_PAGE, total))
    };
    Ok(Page::Html {
        title: "Changes".into(),
        nav: Nav::Changes,
        body,
        refresh: None,
        script: Some(TOKEN_SCRIPT),
    })
}

/// `POST /changes` (the token already checked): sets `state` (and `note`, `by`) on
/// every `id`, then sends the browser back to the list (303), or answers the changed
/// rows as JSON. Every id is checked before any is set, so a bad id sets nothing.
pub fn post(cx: &Ctx<'_>, form: &Params, json: bool) -> Result<Page, PageError> {
    let ids = form.ints("id", "a change id")?;
    if ids.is_empty() {
        return Err(Bad {
            param: "id".into(),
            why: "no change picked; tick a row (or give id=N, repeatable)".into(),
        }
        .into());
    }
    let state = form.state("state")?.ok_or_else(|| Bad {
        param: "state".into(),
        why: format!(
            "missing; give one of {}",
            TriageState::ALL.map(|s| s.as_str()).join(", ")
        ),
    })?;
    let note = form.get("note");
    let by = form.get("by").unwrap_or(DEFAULT_BY);
    for id in &ids {
        cx.store.change(*id).map_err(|e| match e {
            plumb_store::StoreError::NoChange { .. } => PageError::Bad(Bad {
                param: "id".into(),
                why: format!("{id}: no such change; /changes lists them"),
            }),
            e => e.into(),
        })?;
    }
    let at = now();
    let mut set = Vec::with_capacity(ids.len());
    for id in &ids {
        set.push(cx.store.set_triage(*id, state, note, by, &at)?);
    }
    if json || form.json()? {
        return json_page(&set);
    }
    let back = form
        .get("back")
        .and_then(|b| Params::parse(b).ok())
        .map(|b| b.with("format", ""))
        .unwrap_or_default();
    let anchor = match ids.as_slice() {
        [one] => format!("#change-{one}"),
        _ => String::new(),
    };
    Ok(Page::Redirect(if back.is_empty() {
        format!("/changes{anchor}")
    } else {
        format!("/changes?{back}{anchor}")
    }))
}
