//! The Hosts pages (`/hosts`, `/host/NAME`): each host's inventory and health as its
//! newest run's snapshot recorded them, the ceilings its probes measured
//! (`Store::ceilings`), and the noise floor learned per plan and step from the blocks of
//! repeats it ran (the blocks `plumb_report::base::noise_blocks` takes: same plan, engine
//! build and host; floors by `plumb_report::noise::floors`).

use crate::app::{json_page, Ctx, Page, PageError};
use crate::history::heads;
use crate::index::groups_of;
use crate::layout::Nav;
use crate::query::{encode, Params};
use maud::html;
use plumb_host::{HostSnapshot, Verdict};
use plumb_report::noise::{self, Floor};
use plumb_report::Version;
use plumb_store::CeilingRecord;
use serde::Serialize;
use std::collections::BTreeMap;

/// Plans whose floors a host page learns (the most recently run first): each costs its
/// blocks' step summaries.
const FLOOR_PLANS: usize = 12;

#[derive(Serialize)]
struct HostRow {
    host: String,
    runs: usize,
    newest_run: i64,
    cpu: Option<String>,
    warnings: usize,
}

#[derive(Serialize)]
struct PlanFloors {
    plan: String,
    label: String,
    engine_version: String,
    blocks: usize,
    floors: BTreeMap<String, Floor>,
}

#[derive(Serialize)]
struct Data<'a> {
    host: &'a str,
    runs: usize,
    newest_run: i64,
    snapshot: Option<&'a HostSnapshot>,
    ceilings: &'a [CeilingRecord],
    floors: &'a [PlanFloors],
}

fn warned(s: &HostSnapshot) -> usize {
    s.checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Warn | Verdict::Fail))
        .count()
}

/// `GET /hosts`.
pub fn list(cx: &Ctx<'_>, _p: &Params, json: bool) -> Result<Page, PageError> {
    let hosts = cx.index.hosts();
    let newest: Vec<i64> = hosts.values().filter_map(|v| v.last().copied()).collect();
    let recs: BTreeMap<i64, plumb_store::RunRecord> = cx
        .store
        .run_records(&newest)?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    let rows: Vec<HostRow> = hosts
        .iter()
        .filter_map(|(h, ids)| {
            let id = *ids.last()?;
            let snap = recs.get(&id).and_then(|r| r.host.as_ref());
            Some(HostRow {
                host: h.clone(),
                runs: ids.len(),
                newest_run: id,
                cpu: snap.and_then(|s| s.inventory.cpu.model.clone()),
                warnings: snap.map_or(0, warned),
            })
        })
        .collect();
    if json {
        return json_page(&rows);
    }
    let body = html! {
        h1 { "Hosts" }
        p.sub { "Each host its runs ran on, as its newest run's snapshot recorded it." }
        table #hosts {
            thead { tr { th { "host" } th { "CPU" } th.num { "runs" } th.num { "newest run" } th.num { "warnings" } } }
            tbody {
                @for r in &rows {
                    tr {
                        td { a href={ "/host/" (encode(&r.host)) } { (r.host) } }
                        td { (r.cpu.as_deref().unwrap_or("—")) }
                        td.num { a href={ "/runs?host=" (encode(&r.host)) } { (r.runs) } }
                        td.num { a href={ "/run/" (r.newest_run) } { (r.newest_run) } }
                        td.num { (r.warnings) }
                    }
                }
            }
        }
        @if rows.is_empty() { p.note { "No run recorded a host snapshot." } }
    };
    Ok(Page::Html {
        title: "Hosts".into(),
        nav: Nav::Hosts,
        body,
        refresh: None,
        script: None,
    })
}

/// Every leaf of a JSON value as `path = value`, for an inventory shown whole.
fn leaves(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&p, x, out);
            }
        }
        serde_json::Value::Null => {}
        serde_json::Value::String(s) => out.push((prefix.to_string(), s.clone())),
        serde_json::Value::Array(a) if a.iter().all(|x| !x.is_object()) => out.push((
            prefix.to_string(),
            a.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", "),
        )),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(&format!("{prefix}[{i}]"), x, out);
            }
        }
        x => out.push((prefix.to_string(), x.to_string())),
    }
}

/// The floors of the plans this host ran, the most recently run first.
fn floors(cx: &Ctx<'_>, ids: &[i64]) -> Result<Vec<PlanFloors>, PageError> {
    let heads = heads(cx)?;
    let mut by_plan: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for id in ids {
        if let Some(p) = cx.index.get(*id).and_then(|e| e.plan) {
            by_plan.entry(p).or_default().push(*id);
        }
    }
    let mut plans: Vec<(String, Vec<i64>)> = by_plan.into_iter().collect();
    plans.sort_by_key(|(_, v)| std::cmp::Reverse(v.last().copied().unwrap_or(0)));
    let mut out = Vec::new();
    for (plan, runs) in plans.into_iter().take(FLOOR_PLANS) {
        let groups = groups_of(&runs, &heads, None, usize::MAX);
        if groups.len() < noise::MIN_GROUPS {
            continue;
        }
        // The newest blocks of one engine build (the newest run's, as noise_blocks keys
        // blocks), read as summaries a chunk of blocks at a time from the newest back
        // until MAX_GROUPS are found: a plan run every night for years reads 12 blocks.
        let mut build: Option<plumb_store::RunRecord> = None;
        let mut blocks: Vec<Version> = Vec::new();
        for chunk in groups.rchunks(noise::MAX_GROUPS) {
            let ids: Vec<i64> = chunk.iter().flat_map(|(_, v)| v.iter().copied()).collect();
            let mut runs = crate::history::summaries_by_id(cx, &ids)?;
            if build.is_none() {
                build = runs.values().next_back().map(|r| r.run.clone());
            }
            let Some(b) = &build else { break };
            for (g, v) in chunk.iter().rev() {
                let same: Vec<plumb_store::StoredRun> = v
                    .iter()
                    .filter_map(|id| runs.remove(id))
                    .filter(|r| r.run.engine_version == b.engine_version)
                    .collect();
                if !same.is_empty() && blocks.len() < noise::MAX_GROUPS {
                    blocks.push(Version {
                        label: format!("g{g}"),
                        runs: same,
                    });
                }
            }
            if blocks.len() >= noise::MAX_GROUPS {
                break;
            }
        }
        let Some(newest) = build else { continue };
        blocks.reverse();
        let label = crate::history::label_of(&newest);
        let build = newest.engine_version.clone();
        let steps =
            plumb_report::compare::measured_steps(blocks.iter().flat_map(|b| b.runs.iter()));
        let found = noise::floors(&blocks, &steps, &[plumb_report::metrics::metric("ops_sec")]);
        out.push(PlanFloors {
            plan,
            label,
            engine_version: build,
            blocks: blocks.len(),
            floors: found.into_iter().map(|((s, _), f)| (s, f)).collect(),
        });
    }
    Ok(out)
}

/// `GET /host/NAME`.
pub fn one(cx: &Ctx<'_>, _p: &Params, name: &str, json: bool) -> Result<Page, PageError> {
    let ids = cx.index.hosts().remove(name).unwrap_or_default();
    let Some(&newest) = ids.last() else {
        return Err(PageError::NotFound(format!(
            "no run recorded host {name:?}; /hosts lists the hosts the store knows"
        )));
    };
    let rec = cx.store.run_records(&[newest])?.pop();
    let snapshot = rec.as_ref().and_then(|r| r.host.as_ref());
    let ceilings = cx.store.ceilings(name)?;
    let floors = floors(cx, &ids)?;
    if json {
        return json_page(&Data {
            host: name,
            runs: ids.len(),
            newest_run: newest,
            snapshot,
            ceilings: &ceilings,
            floors: &floors,
        });
    }
    let mut inventory = Vec::new();
    if let Some(s) = snapshot {
        if let Ok(v) = serde_json::to_value(&s.inventory) {
            leaves("", &v, &mut inventory);
        }
    }
    let body = html! {
        h1 { "Host " (name) }
        p.sub { (ids.len()) " runs · snapshot of run " a href={ "/run/" (newest) } { (newest) } " · " a href={ "/runs?host=" (encode(name)) } { "its runs" } }
        h2 { "Health" }
        @if let Some(s) = snapshot {
            @let bad: Vec<_> = s.checks.iter().filter(|c| matches!(c.verdict, Verdict::Warn | Verdict::Fail)).collect();
            @if bad.is_empty() { p.ok-note { "Every check passed." } }
            @else {
                table #health {
                    thead { tr { th { "check" } th { "verdict" } th { "why" } th { "fix" } } }
                    tbody {
                        @for c in bad {
                            tr {
                                td { code { (c.id) } }
                                td { span class={ "verdict " (c.verdict.as_str()) } { (c.verdict.as_str()) } }
                                td.wrap { (c.reason) }
                                td.wrap { (c.fix.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
        } @else { p.note { "Its newest run kept no snapshot." } }
        h2 { "Ceilings" }
        @if ceilings.is_empty() { p.note { "No probe has measured this host (plumb probe)." } }
        @else {
            table #ceilings {
                thead { tr { th { "ceiling" } th.num { "value" } th { "unit" } th { "measured" } th.num { "probe run" } } }
                tbody {
                    @for c in &ceilings {
                        tr {
                            td { code { (c.ceiling.name) } }
                            td.num { (crate::layout::num(Some(c.ceiling.value))) }
                            td { (c.ceiling.unit) }
                            td { (c.measured_at) }
                            td.num { a href={ "/run/" (c.run_id) } { (c.run_id) } }
                        }
                    }
                }
            }
        }
        h2 { "Noise floors" }
        p.note { "Per plan and step: the change two blocks of repeats reach 95% of the time when nothing changed, learned from this host's blocks of the same plan and engine build (at least " (noise::MIN_GROUPS) "; the newest " (noise::MAX_GROUPS) ")." }
        @if floors.is_empty() { p.note { "No plan has run here in enough blocks to learn a floor." } }
        @else {
            table #floors {
                thead { tr { th { "plan" } th { "step" } th.num { "floor" } th.num { "last A/A" } th.num { "blocks" } } }
                tbody {
                    @for pf in &floors {
                        @for (step, f) in &pf.floors {
                            tr {
                                td { a href={ "/history?plan=" (encode(&pf.plan)) } { (pf.label) } }
                                td { code { (step) } }
                                td.num { (format!("{:.1}%", 100.0 * f.floor)) }
                                td.num { (format!("{:+.1}%", 100.0 * f.aa)) }
                                td.num { (f.groups) }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Inventory" }
        @if inventory.is_empty() { p.note { "No inventory recorded." } }
        @else {
            table.provenance #inventory {
                tbody { @for (k, v) in &inventory { tr { th { (k) } td.wrap { (v) } } } }
            }
        }
    };
    Ok(Page::Html {
        title: format!("Host {name}"),
        nav: Nav::Hosts,
        body,
        refresh: None,
        script: None,
    })
}
