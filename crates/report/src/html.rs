//! One self-contained HTML page: inline CSS and hand-written SVG, no scripts and nothing
//! fetched. Throughput over time and latency percentiles per step with every run
//! overlaid, relative ops/s and per-op cost bars when versions are compared, and each
//! run's provenance with what differs between runs highlighted.
//!
//! Every string from a run (tags, commands, options, host reasons) goes through [`esc`].

use crate::compare::{ratio_text, Comparison, Table};
use crate::format::{fixed, sig};
use crate::svg::{self, BarRow, Look, Series};
use plumb_store::StoredRun;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Kept at its old path for callers outside the crate (the integration tests escape
/// with `plumb_report::html::esc`); it lives in the crate's leaf formatting module.
pub use crate::format::esc;

/// The report's stylesheet, public so a page that embeds [`report_body`] (`plumb
/// serve`) draws the same tables and charts the same way.
pub const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: #1f2328;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 40px 0 10px; padding-bottom: 6px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 17px; margin: 28px 0 8px; }
h3 code { font-size: 17px; }
p.sub, .note { color: #57606a; margin: 0 0 12px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; }
.warnings { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 10px 16px 10px 36px; margin: 16px 0; }
.warnings li { margin: 3px 0; }
.warnings-title { font-weight: 600; margin: 16px 0 0; }
.ok-note { color: #1a7f37; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 14px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e4e8ec; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
tbody tr:hover td { background: #f6f8fa; }
tr.section th { background: #eaeef2; text-transform: uppercase; font-size: 12px; letter-spacing: .04em; color: #424a53; }
tr.differs td, tr.differs th { background: #fff1c2; }
tr.differs th { border-left: 4px solid #d4a72c; }
td.wrap { min-width: 11em; max-width: 360px; overflow-wrap: break-word; }
td.nowrap { white-space: nowrap; }
.runname { white-space: nowrap; font-weight: 600; }
th .ratio { font-weight: 400; max-width: 260px; white-space: normal; }
table.provenance tbody th, table.options tbody th { position: sticky; left: 0; z-index: 1; }
table.provenance tbody tr:not(.differs) th, table.options tbody tr:not(.differs) th { background: #f6f8fa; }
.unset { color: #8c959f; font-style: italic; }
.ratio { display: block; font-size: 12px; color: #57606a; }
td.hi { background: #fff1c2; font-weight: 600; }
svg.swatch { display: inline-block; vertical-align: middle; margin-right: 6px; }
.verdict { display: inline-block; padding: 0 6px; border-radius: 4px; font-size: 12px; font-weight: 600; }
.verdict.ok { background: #dafbe1; color: #116329; }
.verdict.info { background: #ddf4ff; color: #0a3069; }
.verdict.warn { background: #fff1c2; color: #7d4e00; }
tr.bad td { color: #cf222e; }
.verdict.fail { background: #ffebe9; color: #a40e26; }
.reason { display: block; font-size: 12px; color: #57606a; max-width: 360px; }
.waitrow { display: flex; align-items: center; gap: 8px; margin: 2px 0; }
.waitrun { min-width: 120px; font-size: 12px; }
.waitbar { display: flex; flex: 1; max-width: 740px; height: 18px; border: 1px solid #d0d7de; }
.waitbar span { display: block; height: 100%; overflow: hidden; white-space: nowrap; font-size: 11px; color: #fff; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 24px; align-items: flex-start; }
.chart { max-width: 100%; height: auto; display: block; }
figure { margin: 0; }
figcaption { font-weight: 600; font-size: 14px; margin: 0 0 2px; }
table.device caption { text-align: left; font-weight: 600; font-size: 14px; margin: 10px 0 2px; }
.chart text { font-size: 12px; fill: #24292f; }
.chart text.tick { fill: #57606a; }
.chart text.label { fill: #424a53; }
.chart text.empty { fill: #8c959f; font-style: italic; }
.chart text.group { font-weight: 600; }
.chart .grid line { stroke: #eaeef2; }
.chart .grid line.minor { stroke: #f3f5f7; }
.chart .axis line { stroke: #8c959f; }
.chart .one { stroke: #24292f; stroke-width: 1.5; }
.chart .ci { stroke: #24292f; stroke-width: 1.2; }
.chart .bar.better { fill: #0072B2; }
.chart .bar.worse { fill: #D55E00; }
.chart .bar.insignificant { fill: #c4c9cf; }
.chart text.value.better { fill: #005a8c; font-weight: 600; }
.chart text.value.worse { fill: #a94700; font-weight: 600; }
.chart text.value.insignificant, .chart text.value.missing { fill: #6e7781; }
.key { font-size: 13px; color: #424a53; margin: 4px 0 8px; }
.key span.box { display: inline-block; width: 12px; height: 12px; vertical-align: -1px; margin: 0 4px 0 12px; }
.key .better { background: #0072B2; } .key .worse { background: #D55E00; } .key .insignificant { background: #c4c9cf; }
.costs { display: grid; grid-template-columns: repeat(auto-fill, minmax(620px, 1fr)); gap: 8px 24px; }
details summary { cursor: pointer; font-weight: 600; margin: 12px 0 4px; }
.answers { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 16px; margin: 12px 0 16px; }
.answers h2 { margin: 4px 0 6px; border: 0; padding: 0; font-size: 17px; }
.answers ul { margin: 0 0 6px; padding-left: 20px; }
.answers li { margin: 2px 0; font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; }
"#;

/// Latency percentiles drawn per step.
const PERCENTILES: &[&str] = &["p50", "p99", "p99.9", "p99.99", "pmax"];

/// Who a run is in the comparison and how it is drawn.
struct RunView<'a> {
    r: &'a StoredRun,
    version: Option<&'a str>,
    look: Look,
}

fn views<'a>(runs: &'a [StoredRun], c: Option<&'a Comparison>) -> Vec<RunView<'a>> {
    // Repeats of a version share a colour and differ by dash; runs outside a comparison
    // get their own colour each.
    let mut place: BTreeMap<i64, (usize, usize, &str)> = BTreeMap::new();
    if let Some(c) = c {
        for (vi, ids) in c.run_ids.iter().enumerate() {
            for (ri, id) in ids.iter().enumerate() {
                place.entry(*id).or_insert((
                    vi,
                    ri,
                    c.versions.get(vi).map(String::as_str).unwrap_or(""),
                ));
            }
        }
    }
    let n_versions = c.map_or(0, |c| c.versions.len());
    let mut extra = 0;
    runs.iter()
        .map(|r| {
            let (colour_i, dash_i, version) = match place.get(&r.run.id) {
                Some((vi, ri, label)) => (*vi, *ri, Some(*label)),
                None => {
                    extra += 1;
                    (n_versions + extra - 1, 0, None)
                }
            };
            let mut label = format!("run {}", r.run.id);
            if let Some(v) = version.filter(|v| *v != r.run.id.to_string()) {
                let _ = write!(label, " · {v}");
            }
            if let Some(t) = r.run.tag.as_deref() {
                if version.is_none_or(|v| v != t && v != format!("tag={t}")) {
                    let _ = write!(label, " · {t}");
                }
            }
            RunView {
                r,
                version,
                look: Look {
                    label,
                    colour: svg::PALETTE[colour_i % svg::PALETTE.len()],
                    dash: svg::DASHES[(dash_i + colour_i / svg::PALETTE.len()) % svg::DASHES.len()],
                },
            }
        })
        .collect()
}

/// The steps shown: the comparison's, else every measured step in run order.
fn step_names(runs: &[StoredRun], c: Option<&Comparison>) -> Vec<String> {
    if let Some(c) = c {
        return c.steps.clone();
    }
    crate::version::measured_steps(runs.iter())
}

fn swatch(look: &Look) -> String {
    // A short stretch of the run's line, dash included, as drawn in the charts.
    let dash = if look.dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{}""#, esc(look.dash))
    };
    format!(
        r#"<svg class="swatch" width="26" height="8" viewBox="0 0 26 8" aria-hidden="true"><line x1="0" y1="4" x2="26" y2="4" stroke="{}" stroke-width="3"{dash}/></svg>"#,
        esc(look.colour)
    )
}

/// A run's name for a table cell: its line, `run N`, and below it the version and tag.
fn run_name(v: &RunView<'_>) -> String {
    let id = format!("run {}", v.r.run.id);
    let rest = v
        .look
        .label
        .strip_prefix(&id)
        .unwrap_or("")
        .trim_start_matches(" · ");
    let mut s = format!(
        r#"<span class="runname">{}{}</span>"#,
        swatch(&v.look),
        esc(&id)
    );
    if !rest.is_empty() {
        let _ = write!(s, r#"<span class="ratio">{}</span>"#, esc(rest));
    }
    s
}

/// Renders the page. `comparison`, when given, adds the warnings, the relative ops/s and
/// the per-op cost bars; runs are drawn in their comparison version's colour.
pub fn report(runs: &[StoredRun], comparison: Option<&Comparison>) -> String {
    render(runs, comparison, &[], None, &Profiles::new())
}

/// CPU profiles by run id: (step name, folded stacks) in step order.
pub type Profiles = BTreeMap<i64, Vec<(String, String)>>;

/// [`report`] with the runs' CPU profiles: a flame graph per profiled step and, in a
/// comparison, a differential one per query of each version's first run against the
/// base's.
pub fn report_with_profiles(
    runs: &[StoredRun],
    comparison: Option<&Comparison>,
    profiles: &Profiles,
) -> String {
    render(runs, comparison, &[], None, profiles)
}

/// Renders a suite's page: the sweep curves (throughput against threads or size, with
/// per-op costs and where scaling stops), and durable commit curves against the host's
/// fsync ceiling (`fsync`: its value and probe run), before the runs and their steps.
pub fn suite_report(
    runs: &[StoredRun],
    curves: &[crate::sweep::Curve],
    fsync: Option<(f64, i64)>,
) -> String {
    render(runs, None, curves, fsync, &Profiles::new())
}

/// The report's title: the run, or the runs, it shows.
fn title_of(runs: &[StoredRun]) -> String {
    match runs {
        [one] => format!("plumb report: run {}", one.run.id),
        _ => format!(
            "plumb report: runs {}",
            runs.iter()
                .map(|r| r.run.id.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn render(
    runs: &[StoredRun],
    comparison: Option<&Comparison>,
    curves: &[crate::sweep::Curve],
    fsync: Option<(f64, i64)>,
    profiles: &Profiles,
) -> String {
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(
        o,
        "<title>{}</title><style>{STYLE}</style></head><body><main>",
        esc(&title_of(runs))
    );
    o.push_str(&body(runs, comparison, curves, fsync, profiles));
    o.push_str("</main></body></html>\n");
    o
}

/// The report's content without the document around it (no `<html>`, `<head>` or
/// style): for a page that has its own chrome and embeds the report, as `plumb serve`'s
/// Run page does. Style it with [`STYLE`]. Every string from a run is escaped, as in
/// [`report`].
pub fn report_body(
    runs: &[StoredRun],
    comparison: Option<&Comparison>,
    profiles: &Profiles,
) -> String {
    body(runs, comparison, &[], None, profiles)
}

/// A comparison's tables and charts alone (relative ops/s, per-op costs, hardware and
/// server counters), for a page that shows them beside its own verdicts (`plumb
/// serve`'s Compare page) without every run's step charts.
pub fn comparison_body(c: &Comparison) -> String {
    let mut o = String::new();
    compare_section(&mut o, c);
    perf_section(&mut o, c);
    server_counters_section(&mut o, c);
    o
}

/// The one-line answer per step ("readrandom: 6.64 µs/op = 6.65 CPU + 0 off a CPU;
/// cached"), each run's under its name when there are several: the report opens with
/// them, as the terminal and Markdown reports do; the tables after are the evidence.
fn answers(o: &mut String, runs: &[StoredRun]) {
    let said: Vec<(i64, Vec<String>)> = runs
        .iter()
        .map(|r| (r.run.id, crate::explain::lines(r)))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    if said.is_empty() {
        return;
    }
    o.push_str(r#"<section class="answers" id="answers"><h2>Where an op's time went</h2>"#);
    for (id, lines) in &said {
        if runs.len() > 1 {
            let _ = write!(o, r#"<p class="runname">run {id}</p>"#);
        }
        o.push_str("<ul>");
        for l in lines {
            let _ = write!(o, "<li>{}</li>", esc(l));
        }
        o.push_str("</ul>");
    }
    o.push_str("</section>");
}

fn body(
    runs: &[StoredRun],
    comparison: Option<&Comparison>,
    curves: &[crate::sweep::Curve],
    fsync: Option<(f64, i64)>,
    profiles: &Profiles,
) -> String {
    let views = views(runs, comparison);
    let steps = step_names(runs, comparison);
    let mut o = String::new();
    let title = title_of(runs);
    let _ = write!(o, "<h1>{}</h1>", esc(&title));
    let engines: BTreeSet<String> = runs
        .iter()
        .map(|r| format!("{} {}", r.run.engine, r.run.engine_version))
        .collect();
    let _ = write!(
        o,
        r#"<p class="sub">{} run{} · {} · {} step{} · latency in µs, throughput in operations per second</p>"#,
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        esc(&engines.into_iter().collect::<Vec<_>>().join(", ")),
        steps.len(),
        if steps.len() == 1 { "" } else { "s" },
    );

    answers(&mut o, runs);
    warnings(&mut o, runs, comparison);
    runs_table(&mut o, &views);
    crate::ibench::html_section(&mut o, runs);
    crate::durability::html_section(&mut o, runs);
    if let Some(c) = comparison {
        compare_section(&mut o, c);
        perf_section(&mut o, c);
        server_counters_section(&mut o, c);
    }
    if !curves.is_empty() {
        sweep_section(&mut o, curves);
        commits_section(&mut o, curves, fsync);
    }
    zcav_section(&mut o, &views);
    o.push_str("<h2 id=\"steps\">Steps</h2>");
    o.push_str(r#"<p class="note">Throughput is each 1-second interval's ops/s; latency is the step's percentiles from its merged histogram, on a log scale. Hover a line or point for its run and value.</p>"#);
    for step in &steps {
        step_section(&mut o, step, &views);
    }
    if profiles.values().any(|p| !p.is_empty()) {
        profile_section(&mut o, runs, comparison, profiles);
    }
    provenance(&mut o, &views);
    o
}

/// A flame graph in its own frame: each keeps its script and element ids to itself,
/// so zoom and search work in every one on the page.
fn flame_frame(svg: &str) -> String {
    let height = svg
        .split_once("height=\"")
        .and_then(|(_, r)| r.split_once('"'))
        .and_then(|(h, _)| h.parse::<f64>().ok())
        .unwrap_or(600.0);
    format!(
        r#"<iframe class="flame" style="width:100%;height:{:.0}px;border:0" srcdoc="{}"></iframe>"#,
        height + 8.0,
        esc(svg)
    )
}

/// Queries (ops) of a run's step, for per-query scaling.
fn step_ops(r: &StoredRun, step: &str) -> u64 {
    r.steps
        .iter()
        .find(|(s, _)| s.name == step)
        .map(|(s, _)| s.summary.ops)
        .unwrap_or(0)
}

/// Flame graphs: each profiled step of each run, then (in a comparison) each version's
/// first run against the base's first run, per query.
fn profile_section(
    o: &mut String,
    runs: &[StoredRun],
    comparison: Option<&Comparison>,
    profiles: &Profiles,
) {
    o.push_str(r#"<h2 id="profiles">Profiles</h2><p class="note">perf during each measured window, plumb's threads and the server's processes together; widths are time: on a CPU (sampled on the software clock, <code>--profile cpu</code>), or off a CPU where a stack ends in <code>[off-cpu D]</code> (uninterruptible: IO), <code>[off-cpu S]</code> (sleeping: a lock, a socket, a condition) or <code>[off-cpu R]</code> (preempted, waiting for a CPU) (<code>--profile offcpu</code>; <code>wall</code> draws both in one graph). Click a frame to zoom.</p>"#);
    let first_of = |label: &str| -> Option<&StoredRun> {
        let c = comparison?;
        let i = c.versions.iter().position(|v| v == label)?;
        let id = *c.run_ids.get(i)?.first()?;
        runs.iter().find(|r| r.run.id == id)
    };
    if let Some(c) = comparison {
        if let Some(base) = c.versions.first().and_then(|v| first_of(v)) {
            for v in c.versions.iter().skip(1) {
                let Some(other) = first_of(v) else { continue };
                let (Some(pa), Some(pb)) =
                    (profiles.get(&base.run.id), profiles.get(&other.run.id))
                else {
                    continue;
                };
                for (step, fb) in pb {
                    let Some((_, fa)) = pa.iter().find(|(s, _)| s == step) else {
                        continue;
                    };
                    let title = format!(
                        "{step}: run {} against run {} (per query)",
                        other.run.id, base.run.id
                    );
                    if let Some(svg) = crate::flame::differential(
                        fa,
                        step_ops(base, step),
                        fb,
                        step_ops(other, step),
                        &title,
                    ) {
                        let _ = write!(o, "<h3>{}</h3>{}", esc(&title), flame_frame(&svg));
                    }
                }
            }
        }
    }
    for r in runs {
        for (step, folded) in profiles.get(&r.run.id).into_iter().flatten() {
            let title = format!(
                "run {} {} {} · {step}",
                r.run.id, r.run.engine, r.run.engine_version
            );
            if let Some(svg) = crate::flame::svg(folded, &title) {
                let _ = write!(o, "<h3>{}</h3>{}", esc(&title), flame_frame(&svg));
            }
        }
    }
}

/// The disk probe's position scan (bonnie++'s zcav): MB/s against the offset each slice
/// starts at, one line per run that scanned, so two disks' zones sit side by side.
fn zcav_section(o: &mut String, views: &[RunView<'_>]) {
    let series: Vec<Series<'_>> = views
        .iter()
        .map(|v| Series {
            look: &v.look,
            points: v
                .r
                .steps
                .iter()
                .filter(|(s, _)| s.name.starts_with("zcav."))
                .map(|(s, _)| {
                    let off = s.config["offset"].as_u64().unwrap_or(0) as f64 / (1u64 << 30) as f64;
                    (off, s.summary.mb_sec)
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return;
    }
    o.push_str(r#"<h2 id="zcav">Read speed by position</h2><p class="note">One pass of sequential 1 MiB O_DIRECT reads over each slice of the device or probe file (bonnie++'s zcav). A rotating disk is fastest at its outer tracks, the start; flash and virtual disks are flat.</p><figure>"#);
    o.push_str(&svg::line_chart(
        &[("data-chart", "zcav")],
        "MB/s by offset",
        &series,
        "offset (GiB)",
        "MB/s",
        740.0,
    ));
    o.push_str("</figure>");
}

/// One chart per step and axis (a line per series), each with its table and verdicts.
/// A table of figures (every column numeric, right-aligned), as the sweep and commit
/// sections show a curve's points.
fn number_table(o: &mut String, head: &[&str], rows: &[Vec<String>]) {
    o.push_str(r#"<div class="scroll"><table class="summary"><thead><tr>"#);
    for h in head {
        let _ = write!(o, r#"<th class="num">{}</th>"#, esc(h));
    }
    o.push_str("</tr></thead><tbody>");
    for r in rows {
        o.push_str("<tr>");
        for x in r {
            let _ = write!(o, r#"<td class="num">{}</td>"#, esc(x));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
}

/// Durable commits against committers, each curve drawn beside the host's fsync ceiling
/// (a dashed level line): where commits/s climbs above it, commits share flushes.
fn commits_section(o: &mut String, curves: &[crate::sweep::Curve], fsync: Option<(f64, i64)>) {
    use crate::commits::{ceiling_line, commit_curves, rows, verdict};
    let cs = commit_curves(curves);
    if cs.is_empty() {
        return;
    }
    let _ = write!(
        o,
        r#"<h2 id="commits">Durable commits vs committers</h2><p class="note">{}</p>"#,
        esc(&ceiling_line(fsync))
    );
    let ceiling_look = Look {
        label: "fsync ceiling (1 committer, 4 KiB write + fdatasync)".into(),
        colour: "#555555",
        dash: "7 4",
    };
    for c in cs {
        let look = Look {
            label: c.series.clone(),
            colour: svg::PALETTE[0],
            dash: "",
        };
        let commits = |p: &crate::sweep::Point| p.tps.unwrap_or(p.ops_sec);
        let mut series = vec![Series {
            look: &look,
            points: c.points.iter().map(|p| (p.x, Some(commits(p)))).collect(),
        }];
        if let Some((v, _)) = fsync {
            let (lo, hi) = (c.points[0].x, c.points[c.points.len() - 1].x);
            series.push(Series {
                look: &ceiling_look,
                points: vec![(lo, Some(v)), (hi, Some(v))],
            });
        }
        let _ = write!(
            o,
            r#"<section class="commits" data-step="{s}"><h3>step <code>{s}</code>: {series}</h3><figure>"#,
            s = esc(&c.step),
            series = esc(&c.series)
        );
        o.push_str(&svg::line_chart(
            &[("data-chart", "commits"), ("data-step", &c.step)],
            &format!("{}: commits/s vs committers", c.step),
            &series,
            "committers",
            "commits/s",
            740.0,
        ));
        o.push_str("</figure>");
        let _ = write!(o, "<p>{}</p>", esc(&verdict(c, fsync)));
        let (head, rows) = rows(c, fsync);
        number_table(o, &head, &rows);
        o.push_str("</section>");
    }
}

fn sweep_section(o: &mut String, curves: &[crate::sweep::Curve]) {
    use crate::sweep::rows;
    o.push_str(r#"<h2 id="sweeps">Sweeps</h2><p class="note">Each point is the median of its repeats. Cached or IO-bound is read from the device reads per op that were measured.</p>"#);
    let mut groups: Vec<(&str, crate::sweep::Axis, Vec<&crate::sweep::Curve>)> = Vec::new();
    for c in curves {
        match groups
            .iter_mut()
            .find(|(s, a, _)| *s == c.step.as_str() && *a == c.axis)
        {
            Some(g) => g.2.push(c),
            None => groups.push((&c.step, c.axis, vec![c])),
        }
    }
    for (step, axis, cs) in groups {
        let looks: Vec<Look> = cs
            .iter()
            .enumerate()
            .map(|(i, c)| Look {
                label: c.series.clone(),
                colour: svg::PALETTE[i % svg::PALETTE.len()],
                dash: "",
            })
            .collect();
        let series: Vec<Series<'_>> = cs
            .iter()
            .zip(&looks)
            .map(|(c, look)| Series {
                look,
                points: c.points.iter().map(|p| (p.x, Some(p.ops_sec))).collect(),
            })
            .collect();
        let _ = write!(
            o,
            r#"<section class="sweep" data-step="{s}" data-axis="{k}"><h3>step <code>{s}</code>: ops/s vs {a}</h3><figure>"#,
            s = esc(step),
            k = axis.key(),
            a = esc(axis.label())
        );
        o.push_str(&svg::line_chart(
            &[
                ("data-chart", "sweep"),
                ("data-step", step),
                ("data-axis", axis.key()),
            ],
            &format!("{step}: ops/s vs {}", axis.label()),
            &series,
            axis.label(),
            "ops/s",
            740.0,
        ));
        o.push_str("</figure>");
        for c in cs {
            let (head, rows) = rows(c);
            let _ = write!(o, "<p><b>{}</b>: {}</p>", esc(&c.series), esc(&c.verdict()));
            number_table(o, &head, &rows);
        }
        o.push_str("</section>");
    }
}

fn warnings(o: &mut String, runs: &[StoredRun], c: Option<&Comparison>) {
    let mut w: Vec<String> = c.map(|c| c.warnings.clone()).unwrap_or_default();
    if let Some(c) = c {
        w.extend(c.noise.iter().map(|n| n.note.clone()));
        w.extend(c.floors.iter().map(|f| format!("noise floor: {}", f.note)));
        w.extend(c.reach.iter().map(|r| format!("reach: {}", r.note)));
    }
    for r in runs {
        if c.is_none() {
            // A comparison already warns of each noisy step in its fairness warnings.
            w.extend(
                crate::warnings::run_noise(r)
                    .into_iter()
                    .map(|n| format!("run {} step {n}", r.run.id)),
            );
        }
        w.extend(crate::warnings::readahead_over_max_sectors(r));
        if r.run.status != plumb_core::RunStatus::Ok {
            w.push(format!("run {} ended {}", r.run.id, r.run.status));
        }
        for (s, _) in &r.steps {
            if s.status != plumb_core::StepStatus::Ok {
                w.push(format!(
                    "run {} step {} {}{}",
                    r.run.id,
                    s.name,
                    s.status,
                    s.error
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    if w.is_empty() {
        if c.is_some() {
            o.push_str(r#"<p class="ok-note">No fairness warnings.</p>"#);
        }
        return;
    }
    let _ = write!(
        o,
        r#"<p class="warnings-title">Warnings ({})</p><ul class="warnings">"#,
        w.len()
    );
    for x in &w {
        let _ = write!(o, "<li>{}</li>", esc(x));
    }
    o.push_str("</ul>");
}

fn runs_table(o: &mut String, views: &[RunView<'_>]) {
    o.push_str(r#"<h2 id="runs">Runs</h2><div class="scroll"><table class="runs"><thead><tr><th>run</th><th>version</th><th>tag</th><th>status</th><th>engine</th><th>workload</th><th>started</th></tr></thead><tbody>"#);
    for v in views {
        let r = &v.r.run;
        let _ = write!(
            o,
            r#"<tr data-run="{}"><td>{}run {}</td><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td></tr>"#,
            r.id,
            swatch(&v.look),
            r.id,
            opt(v.version),
            opt(r.tag.as_deref()),
            esc(r.status.as_str()),
            esc(&r.engine),
            esc(&r.engine_version),
            esc(&r.workload),
            esc(&r.started_at)
        );
    }
    o.push_str("</tbody></table></div>");
}

/// A possibly missing string as a cell.
fn opt(s: Option<&str>) -> String {
    match s {
        Some(s) => esc(s),
        None => r#"<span class="unset">none</span>"#.into(),
    }
}

fn bar_rows<'a>(c: &'a Comparison, t: &'a Table) -> Vec<BarRow<'a>> {
    c.steps
        .iter()
        .enumerate()
        .flat_map(|(si, step)| {
            c.versions
                .iter()
                .enumerate()
                .skip(1)
                .filter_map(move |(vi, label)| {
                    Some(BarRow {
                        group: step,
                        label,
                        cell: t.rows.get(si)?.get(vi)?,
                    })
                })
        })
        .collect()
}

fn compare_section(o: &mut String, c: &Comparison) {
    o.push_str(r#"<h2 id="comparison">Comparison</h2>"#);
    let _ = write!(
        o,
        r#"<p class="note">Base: <b>{}</b>. Medians over repeats (n = runs with the figure); ratios are other / base with their 95% interval; <b>~</b> marks a difference that is not significant.</p>"#,
        esc(&c.versions[0])
    );
    // Absolute ops/s.
    o.push_str(r#"<div class="scroll"><table class="ops"><thead><tr><th>step</th>"#);
    for (v, ids) in c.versions.iter().zip(&c.run_ids) {
        let _ = write!(
            o,
            r#"<th class="num">{}<span class="ratio">runs {}</span></th>"#,
            esc(v),
            esc(&ids
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", "))
        );
    }
    o.push_str("</tr></thead><tbody>");
    for (si, step) in c.steps.iter().enumerate() {
        let _ = write!(o, "<tr><th>{}</th>", esc(step));
        for (vi, cell) in c.ops_sec.rows.get(si).into_iter().flatten().enumerate() {
            let _ = write!(
                o,
                r#"<td class="num">{} ops/s <span class="unset">(n={})</span>"#,
                fixed(cell.median, 0),
                cell.n
            );
            if vi > 0 {
                let _ = write!(
                    o,
                    r#"<span class="ratio">× {}</span>"#,
                    esc(&ratio_text(cell))
                );
            }
            o.push_str("</td>");
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
    if c.versions.len() < 2 {
        return;
    }
    let key = |higher: bool| {
        format!(
            r#"<p class="key"><span class="box better"></span>better ({}) <span class="box worse"></span>worse <span class="box insignificant"></span>~ not significant (its 95% interval includes 1) · whiskers: 95% interval · line at 1.0 = same as {}</p>"#,
            if higher { "higher" } else { "lower" },
            esc(&c.versions[0])
        )
    };
    let _ = write!(o, "<h3>ops/s relative to {}</h3>", esc(&c.versions[0]));
    o.push_str(&key(true));
    let rows = bar_rows(c, &c.ops_sec);
    o.push_str(&svg::ratio_bars(
        &[("data-chart", "relative"), ("data-metric", "ops_sec")],
        &format!("ops/s relative to {}", c.versions[0]),
        &rows,
        true,
        960.0,
    ));
    if !c.groups.is_empty() {
        let _ = write!(
            o,
            r#"<h3>Relative QPS by group</h3><p class="note">Median, min and max of the relative QPS over each group's microbenchmarks, as the seeds' tables summarise them.</p><table class="groups"><thead><tr><th>group</th><th>version</th><th class="num">n</th><th class="num">median</th><th class="num">min</th><th class="num">max</th></tr></thead><tbody>"#
        );
        for g in &c.groups {
            let _ = write!(
                o,
                r#"<tr><th>{}</th><td>{}</td><td class="num">{}</td><td class="num">{:.2}</td><td class="num">{:.2}</td><td class="num">{:.2}</td></tr>"#,
                esc(&g.group),
                esc(&g.version),
                g.n,
                g.median,
                g.min,
                g.max
            );
        }
        o.push_str("</tbody></table>");
    }
    if c.costs.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<h3>Per-op costs relative to {}</h3>",
        esc(&c.versions[0])
    );
    o.push_str(&key(false));
    let mut none = Vec::new();
    o.push_str(r#"<div class="costs">"#);
    for t in &c.costs {
        let rows = bar_rows(c, t);
        if rows.iter().all(|r| r.cell.ratio.is_none()) {
            none.push(t.metric.as_str());
            continue;
        }
        let _ = write!(o, "<figure><figcaption>{}</figcaption>", esc(&t.metric));
        o.push_str(&svg::ratio_bars(
            &[("data-chart", "cost"), ("data-metric", &t.metric)],
            &format!(
                "{} relative to {} (lower is better)",
                t.metric, c.versions[0]
            ),
            &rows,
            false,
            620.0,
        ));
        o.push_str("</figure>");
    }
    o.push_str("</div>");
    if !none.is_empty() {
        let _ = write!(
            o,
            r#"<p class="note">No ratio for: {} (missing on one side).</p>"#,
            esc(&none.join(", "))
        );
    }
}

/// Seed 002's perf stat table per step: counters per query relative to the base, the
/// ones past the seed's 1.15 on yellow as the seed marks them where their extra events
/// could cost at least 1% of the base's query ([`crate::perf_table::rule`]), the rows the
/// ratio alone would have judged otherwise noted, and each version's bloat reading
/// beneath.
fn perf_section(o: &mut String, c: &Comparison) {
    if c.perf.is_empty() {
        return;
    }
    let _ = write!(
        o,
        r#"<h3 id="perf-stat">perf stat per query</h3><p class="note">Seed 002's table: each counter per query relative to <b>{}</b>, with GHz, ipc, cpu/o and QPS relative as they are; {}.</p>"#,
        esc(&c.versions[0]),
        esc(&crate::perf_table::rule("yellow"))
    );
    for p in &c.perf {
        let _ = write!(
            o,
            r#"<div class="scroll"><table class="perf" data-step="{s}"><caption>step <code>{s}</code>, {w}'s counters</caption><thead><tr><th>counter</th><th class="num">{b} figure</th>"#,
            s = esc(&p.step),
            w = esc(&p.whose),
            b = esc(&c.versions[0])
        );
        for v in &c.versions {
            let _ = write!(o, r#"<th class="num">{}</th>"#, esc(v));
        }
        o.push_str("</tr></thead><tbody>");
        for r in &p.rows {
            let _ = write!(
                o,
                r#"<tr><th><code>{}</code></th><td class="num">{}</td>"#,
                esc(&r.name),
                crate::format::sig(r.base, 3)
            );
            for (x, m) in r.rel.iter().zip(&r.marked) {
                let _ = write!(
                    o,
                    r#"<td class="num{}">{}</td>"#,
                    if *m { " hi" } else { "" },
                    esc(&crate::perf_table::cell(*x, false))
                );
            }
            o.push_str("</tr>");
        }
        o.push_str("</tbody></table></div>");
        let notes = crate::perf_table::notes(p, &c.versions);
        if !notes.is_empty() {
            o.push_str(r#"<ul class="note perf-notes">"#);
            for n in &notes {
                let _ = write!(o, "<li>{}</li>", esc(n));
            }
            o.push_str("</ul>");
        }
        if p.no_pmu {
            let _ = write!(
                o,
                r#"<p class="note">{}</p>"#,
                esc(crate::perf_table::NO_PMU)
            );
        } else {
            o.push_str(r#"<ul class="bloat">"#);
            for rd in &p.readings {
                let _ = write!(
                    o,
                    "<li><b>{}</b>: {}</li>",
                    esc(&rd.version),
                    esc(&rd.explanation)
                );
            }
            o.push_str("</ul>");
        }
    }
}

/// Every server counter, each version's figure per query with its ratio beneath:
/// those every version has first, most moved first as the terminal prints them, then,
/// folded and marked with the versions that lack them, the ones only some versions
/// have. The terminal leaves those out; the page is where they can still be looked up.
fn server_counters_section(o: &mut String, c: &Comparison) {
    if c.server_counters.is_empty() || c.versions.len() < 2 {
        return;
    }
    let _ = write!(
        o,
        r#"<h3 id="server-counters">Server counters per query</h3><p class="note">The server's own counters (deltas over each step divided by its queries), each version's median with its ratio to <b>{}</b> beneath; counters every version has, most moved first (the largest change of any test and version, either way).</p>"#,
        esc(&c.versions[0])
    );
    let head = |o: &mut String| {
        o.push_str(r#"<div class="scroll"><table class="counters"><thead><tr><th>counter</th><th>test</th>"#);
        for v in &c.versions {
            let _ = write!(o, r#"<th class="num">{}</th>"#, esc(v));
        }
        o.push_str("</tr></thead>");
    };
    let body = |o: &mut String, t: &Table, missing: &[String]| {
        let name = t.metric.strip_suffix("/query").unwrap_or(&t.metric);
        // Tests where no version has the counter would be rows of n/a.
        let rows: Vec<(&String, &Vec<crate::compare::Cell>)> = c
            .steps
            .iter()
            .zip(&t.rows)
            .filter(|(_, r)| r.iter().any(|cl| cl.median.is_some()))
            .collect();
        let _ = write!(
            o,
            r#"<tbody data-counter="{}"{}>"#,
            esc(name),
            if missing.is_empty() {
                String::new()
            } else {
                format!(
                    r#" class="left-out" data-missing="{}""#,
                    esc(&missing.join(", "))
                )
            }
        );
        for (ri, (step, cells)) in rows.iter().enumerate() {
            o.push_str("<tr>");
            if ri == 0 {
                let _ = write!(
                    o,
                    r#"<th rowspan="{}"><code>{}</code>{}</th>"#,
                    rows.len(),
                    esc(name),
                    if missing.is_empty() {
                        String::new()
                    } else {
                        format!(
                            r#"<span class="ratio">not in {}</span>"#,
                            esc(&missing.join(", "))
                        )
                    }
                );
            }
            let _ = write!(o, "<td>{}</td>", esc(step));
            for (vi, cl) in cells.iter().enumerate() {
                let _ = write!(o, r#"<td class="num">{}"#, crate::format::sig(cl.median, 3));
                if vi > 0 && cl.ratio.is_some() {
                    let _ = write!(
                        o,
                        r#"<span class="ratio">× {}</span>"#,
                        esc(&ratio_text(cl))
                    );
                }
                o.push_str("</td>");
            }
            o.push_str("</tr>");
        }
        o.push_str("</tbody>");
    };
    if !c.server_counters_shown.is_empty() {
        head(o);
        for &i in &c.server_counters_shown {
            if let Some(t) = c.server_counters.get(i) {
                body(o, t, &[]);
            }
        }
        o.push_str("</table></div>");
    }
    if !c.server_counters_left_out.is_empty() {
        let _ = write!(
            o,
            r#"<details class="left-out"><summary>{} counters only some versions have (left out of the terminal and Markdown: no ratio to read)</summary>"#,
            c.server_counters_left_out.len()
        );
        head(o);
        for l in &c.server_counters_left_out {
            if let Some(t) = c.server_counters.get(l.index) {
                body(o, t, &l.missing_from);
            }
        }
        o.push_str("</table></div></details>");
    }
}

fn step_section(o: &mut String, step: &str, views: &[RunView<'_>]) {
    let _ = write!(
        o,
        r#"<section class="step" data-step="{s}"><h3>step <code>{s}</code></h3>"#,
        s = esc(step)
    );
    let found: Vec<(
        &RunView<'_>,
        &plumb_store::StepRecord,
        &[plumb_core::Interval],
    )> = views
        .iter()
        .filter_map(|v| {
            v.r.steps
                .iter()
                .find(|(s, _)| s.name == step)
                .map(|(s, iv)| (v, s, iv.as_slice()))
        })
        .collect();
    // What each open-loop run was offered, dashed in its colour beside what it served:
    // a rate profile's phases, and a second that fell behind them.
    let offered: Vec<Look> = found
        .iter()
        .map(|(v, _, _)| Look {
            label: format!("{} offered", v.look.label),
            colour: v.look.colour,
            dash: "6 3",
        })
        .collect();
    let mut through: Vec<Series<'_>> = found
        .iter()
        .map(|(v, _, iv)| Series {
            look: &v.look,
            points: iv.iter().map(|i| (i.t, Some(i.ops_sec))).collect(),
        })
        .collect();
    for ((_, _, iv), look) in found.iter().zip(&offered) {
        if iv.iter().any(|i| i.target_ops_sec.is_some()) {
            through.push(Series {
                look,
                points: iv.iter().map(|i| (i.t, i.target_ops_sec)).collect(),
            });
        }
    }
    let lat: Vec<Series<'_>> = found
        .iter()
        .map(|(v, s, _)| {
            let m = &s.summary;
            Series {
                look: &v.look,
                points: [m.p50_us, m.p99_us, m.p999_us, m.p9999_us, m.pmax_us]
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| (i as f64, x))
                    .collect(),
            }
        })
        .collect();
    // A rate or threads profile's phases, marked where each began (the first run's).
    let marks: Vec<(f64, String)> = found
        .iter()
        .find_map(|(_, s, _)| crate::phases::profile_of(&s.summary))
        .and_then(|p| p.parse::<plumb_workloads::RateProfile>().ok())
        .map(|p| {
            p.spans()
                .into_iter()
                .map(|(ph, start, _)| (start, ph.to_string()))
                .collect()
        })
        .unwrap_or_default();
    // The faults' windows, shaded (the first run's with faults).
    let bands: Vec<(f64, f64, String)> = found
        .iter()
        .find_map(|(_, s, _)| s.summary.faults.as_ref())
        .map(crate::faults::bands)
        .unwrap_or_default();
    o.push_str(r#"<div class="charts"><figure><figcaption>Throughput over time</figcaption>"#);
    o.push_str(&svg::marked_line_chart(
        &[("data-chart", "throughput"), ("data-step", step)],
        &format!("{step}: ops/s per 1-second interval"),
        &through,
        "seconds into the measured window",
        "ops/s",
        740.0,
        svg::Overlay {
            marks: &marks,
            bands: &bands,
        },
    ));
    o.push_str(r#"</figure><figure><figcaption>Latency percentiles</figcaption>"#);
    o.push_str(&svg::category_log_chart(
        &[("data-chart", "latency"), ("data-step", step)],
        &format!("{step}: latency percentiles"),
        PERCENTILES,
        &lat,
        "latency",
        svg::human_us,
        480.0,
    ));
    o.push_str("</figure></div>");
    server_seconds_charts(o, step, &found);
    waits_bars(o, &found);

    o.push_str(
        r#"<div class="scroll"><table class="summary"><thead><tr><th>run</th><th>status</th>"#,
    );
    use crate::metrics::{metric, HTML_STEP};
    for id in HTML_STEP {
        let _ = write!(o, r#"<th class="num">{}</th>"#, esc(metric(id).label));
    }
    o.push_str("</tr></thead><tbody>");
    for (v, s, _) in &found {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td>",
            run_name(v),
            esc(s.status.as_str())
        );
        for id in HTML_STEP {
            let _ = write!(
                o,
                r#"<td class="num">{}</td>"#,
                esc(&metric(id).show(&s.summary))
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
    open_loop_table(o, &found);
    let faulted: Vec<(String, &plumb_core::FaultReport)> = found
        .iter()
        .filter_map(|(v, s, _)| s.summary.faults.as_ref().map(|f| (run_name(v), f)))
        .collect();
    crate::faults::html_table(o, &faulted);
    by_op_table(o, &found);
    let device: Vec<(String, &plumb_core::StepSummary)> = found
        .iter()
        .map(|(v, s, _)| (run_name(v), &s.summary))
        .collect();
    o.push_str(&crate::device::html(&device));
    o.push_str("</section>");
}

/// The server's counters second by second, a small chart per counter (the first four
/// that moved), each run a line in its colour; nothing for steps without them.
fn server_seconds_charts(o: &mut String, step: &str, found: &Found<'_>) {
    use crate::server_seconds::{label, moved, value};
    let all: Vec<plumb_core::ServerSecond> = found
        .iter()
        .flat_map(|(_, s, _)| s.summary.server_seconds.iter().cloned())
        .collect();
    let names = moved(&all);
    if names.is_empty() {
        return;
    }
    o.push_str(r#"<div class="charts" data-chart="server-seconds">"#);
    for name in names.iter().take(4) {
        let series: Vec<Series<'_>> = found
            .iter()
            .map(|(v, s, _)| Series {
                look: &v.look,
                points: s
                    .summary
                    .server_seconds
                    .iter()
                    .map(|sec| {
                        (
                            sec.t,
                            Some(sec.rates.get(*name).map_or(0.0, |r| value(name, *r))),
                        )
                    })
                    .collect(),
            })
            .collect();
        let _ = write!(
            o,
            r#"<figure><figcaption>Server: {}</figcaption>"#,
            esc(&label(name))
        );
        o.push_str(&svg::marked_line_chart(
            &[("data-counter", name), ("data-step", step)],
            &format!("{step}: {} each second", label(name)),
            &series,
            "seconds into the measured window",
            &label(name),
            360.0,
            svg::Overlay::default(),
        ));
        o.push_str("</figure>");
    }
    o.push_str("</div>");
}

/// A colour per wait class, the same in every bar.
fn wait_colour(class: &str) -> &'static str {
    match class {
        "CPU" => "#54aeff",
        "Lock" => "#cf222e",
        "LWLock" | "Mutex" | "RWLock" => "#fb8f44",
        "IO" => "#8250df",
        "IPC" | "Cond" => "#bf8700",
        "Client" => "#8c959f",
        "Timeout" | "Activity" => "#d0d7de",
        _ => "#57606a",
    }
}

/// Each run's wait profile as one bar of its sessions' time by class and event;
/// nothing for steps no sampler watched.
fn waits_bars(o: &mut String, found: &Found<'_>) {
    let sampled: Vec<_> = found
        .iter()
        .filter_map(|(v, s, _)| Some((v, s.summary.waits.as_ref().filter(|w| w.sessions > 0)?)))
        .collect();
    if sampled.is_empty() {
        return;
    }
    let _ = write!(
        o,
        r#"<figure class="waits"><figcaption>Where the sessions waited</figcaption><p class="note">Share of the step's active session time by wait event, sampled from {} at {}/s.</p>"#,
        esc(&sampled[0].1.source),
        crate::format::sig(Some(sampled[0].1.hz), 3)
    );
    for (v, w) in sampled {
        let _ = write!(
            o,
            r#"<div class="waitrow"><span class="waitrun">{}</span><div class="waitbar">"#,
            run_name(v)
        );
        for e in &w.events {
            let pct = 100.0 * e.samples as f64 / w.sessions as f64;
            let name = e.name();
            let _ = write!(
                o,
                r#"<span data-wait="{n}" style="width:{pct:.2}%;background:{c}" title="{n} {pct:.1}%">{shown}</span>"#,
                n = esc(&name),
                c = wait_colour(&e.class),
                shown = if pct >= 8.0 {
                    esc(&name)
                } else {
                    String::new()
                },
            );
        }
        o.push_str("</div></div>");
    }
    o.push_str("</figure>");
}

/// A step's runs as the step section finds them.
type Found<'a> = [(
    &'a RunView<'a>,
    &'a plumb_store::StepRecord,
    &'a [plumb_core::Interval],
)];

/// The open-loop figures of a step's runs that ran open-loop: the rate offered and
/// served, response p99 beside service p50/p99, the longest wait, late ops, backlog.
fn open_loop_table(o: &mut String, found: &Found<'_>) {
    let rows: Vec<_> = found
        .iter()
        .filter_map(|(v, s, _)| s.summary.open_loop.as_ref().map(|l| (v, &s.summary, l)))
        .collect();
    if rows.is_empty() {
        return;
    }
    o.push_str(
        r#"<div class="scroll"><table class="summary" data-table="open-loop"><caption>open loop: response time from each op's intended start, service time from its actual start</caption><thead><tr><th>run</th><th class="num">offered/s</th><th class="num">served/s</th><th class="num">response p99 µs</th><th class="num">service p50 µs</th><th class="num">service p99 µs</th><th class="num">longest wait ms</th><th class="num">late %</th><th class="num">backlog</th></tr></thead><tbody>"#,
    );
    for (v, s, l) in rows {
        let served = s.server.as_ref().map_or(s.ops_sec, |x| x.tps);
        let _ = write!(o, "<tr><td>{}</td>", run_name(v));
        for cell in [
            sig(Some(l.target_ops_sec), 4),
            sig(Some(served), 4),
            sig(s.p99_us, 3),
            sig(l.service.p50_us, 3),
            sig(l.service.p99_us, 3),
            sig(Some(l.lag_max_ms), 3),
            sig(Some(l.late_pct), 2),
            l.backlog_ops.to_string(),
        ] {
            let _ = write!(o, r#"<td class="num">{}</td>"#, esc(&cell));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
}

/// Latency per kind of operation of a step's runs that mix kinds (YCSB's, TPC-C's).
fn by_op_table(o: &mut String, found: &Found<'_>) {
    if found.iter().all(|(_, s, _)| s.summary.by_op.is_empty()) {
        return;
    }
    o.push_str(
        r#"<div class="scroll"><table class="summary" data-table="by-op"><caption>by kind of operation (TPC-C: new-order per minute is NOPM)</caption><thead><tr><th>run</th><th>op</th><th class="num">ops</th><th class="num">per minute</th><th class="num">p50 µs</th><th class="num">p99 µs</th><th class="num">p99.9 µs</th><th class="num">max µs</th></tr></thead><tbody>"#,
    );
    for (v, s, _) in found {
        let secs = s.summary.secs;
        for (op, l) in &s.summary.by_op {
            let _ = write!(o, "<tr><td>{}</td><td>{}</td>", run_name(v), esc(op));
            for cell in [
                l.ops.to_string(),
                sig((secs > 0.0).then(|| l.ops as f64 * 60.0 / secs), 4),
                sig(l.p50_us, 3),
                sig(l.p99_us, 3),
                sig(l.p999_us, 3),
                sig(l.max_us, 3),
            ] {
                let _ = write!(o, r#"<td class="num">{}</td>"#, esc(&cell));
            }
            o.push_str("</tr>");
        }
    }
    o.push_str("</tbody></table></div>");
}

/// Host checks as `id → (verdict, reason, fix)`.
fn checks(r: &StoredRun) -> BTreeMap<String, (String, String, String)> {
    r.run
        .host
        .as_ref()
        .into_iter()
        .flat_map(|h| &h.checks)
        .map(|c| {
            let fix = c.fix.clone().unwrap_or_default();
            let verdict = c.verdict.as_str().to_string();
            (c.id.clone(), (verdict, c.reason.clone(), fix))
        })
        .collect()
}

fn row(o: &mut String, name: &str, cells: &[Option<String>], highlight: bool, attr: &str) {
    let differs = highlight && {
        let set: BTreeSet<&Option<String>> = cells.iter().collect();
        set.len() > 1
    };
    let _ = write!(
        o,
        r#"<tr{}{attr}><th>{}</th>"#,
        if differs { r#" class="differs""# } else { "" },
        esc(name)
    );
    for c in cells {
        match c {
            Some(s) => {
                // Short single words (timestamps, versions, sizes) stay on one line;
                // commands and long paths wrap.
                let class = if s.contains(' ') || s.chars().count() > 40 {
                    "wrap"
                } else {
                    "nowrap"
                };
                let _ = write!(o, r#"<td class="{class}">{}</td>"#, esc(s));
            }
            None => o.push_str(r#"<td><span class="unset">unset</span></td>"#),
        }
    }
    o.push_str("</tr>");
}

/// The provenance table's run rows: status, tag, command, what ran, on which build,
/// when, where, and its group of repeats.
fn run_rows(o: &mut String, views: &[RunView<'_>], section: &dyn Fn(&mut String, &str)) {
    let field = |f: &dyn Fn(&plumb_store::RunRecord) -> Option<String>| -> Vec<Option<String>> {
        views.iter().map(|v| f(&v.r.run)).collect()
    };
    section(o, "run");
    row(
        o,
        "status",
        &field(&|r| Some(r.status.to_string())),
        false,
        "",
    );
    row(o, "tag", &field(&|r| r.tag.clone()), false, "");
    row(
        o,
        "command",
        &field(&|r| Some(r.command.clone())),
        false,
        "",
    );
    row(
        o,
        "workload",
        &field(&|r| Some(r.workload.clone())),
        true,
        "",
    );
    row(
        o,
        "engine",
        &field(&|r| Some(format!("{} {}", r.engine, r.engine_version))),
        true,
        "",
    );
    row(
        o,
        "plumb",
        &field(&|r| {
            Some(format!(
                "{}{}",
                r.plumb_version,
                r.git_hash
                    .as_deref()
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default()
            ))
        }),
        true,
        "",
    );
    row(o, "seed", &field(&|r| Some(r.seed.clone())), false, "");
    row(
        o,
        "started",
        &field(&|r| Some(r.started_at.clone())),
        false,
        "",
    );
    row(o, "ended", &field(&|r| r.ended_at.clone()), false, "");
    row(o, "data dir", &field(&|r| r.data_dir.clone()), false, "");
    row(o, "device", &field(&|r| r.device.clone()), true, "");
    row(
        o,
        "host",
        &field(&|r| r.host.as_ref().and_then(|h| h.inventory.hostname.clone())),
        true,
        "",
    );
    row(
        o,
        "repeat",
        &field(&|r| {
            r.group_id
                .map(|g| format!("group {g}, #{}", r.repeat_index.unwrap_or(0) + 1))
        }),
        false,
        "",
    );
}

/// The provenance table's host checks: each check's verdict per run, its reason shown
/// where the runs differ or it warns.
fn host_check_rows(o: &mut String, views: &[RunView<'_>], section: &dyn Fn(&mut String, &str)) {
    let all_checks: Vec<BTreeMap<String, (String, String, String)>> =
        views.iter().map(|v| checks(v.r)).collect();
    let ids: BTreeSet<&String> = all_checks.iter().flat_map(|c| c.keys()).collect();
    if !ids.is_empty() {
        section(o, "host checks");
        for id in ids {
            let verdicts: BTreeSet<Option<&String>> =
                all_checks.iter().map(|c| c.get(id).map(|x| &x.0)).collect();
            let differs = verdicts.len() > 1;
            let _ = write!(
                o,
                r#"<tr data-check="{}"{}><th>{}</th>"#,
                esc(id),
                if differs { r#" class="differs""# } else { "" },
                esc(id)
            );
            for c in &all_checks {
                match c.get(id) {
                    None => o.push_str(r#"<td><span class="unset">not checked</span></td>"#),
                    Some((verdict, reason, fix)) => {
                        let class = match verdict.as_str() {
                            "ok" | "info" | "warn" | "fail" => verdict.as_str(),
                            _ => "info",
                        };
                        let tip = if fix.is_empty() {
                            reason.clone()
                        } else {
                            format!("{reason} — fix: {fix}")
                        };
                        let _ = write!(
                            o,
                            r#"<td title="{}"><span class="verdict {class}">{}</span>"#,
                            esc(&tip),
                            esc(verdict)
                        );
                        if (differs || matches!(class, "warn" | "fail")) && !reason.is_empty() {
                            let _ = write!(o, r#"<span class="reason">{}</span>"#, esc(reason));
                        }
                        o.push_str("</td>");
                    }
                }
            }
            o.push_str("</tr>");
        }
    }
}

fn provenance(o: &mut String, views: &[RunView<'_>]) {
    o.push_str(r#"<h2 id="provenance">Provenance</h2>"#);
    o.push_str(r#"<p class="note">Where each run came from. Highlighted rows differ between runs: options, engine, plumb build, device, host and host-check verdicts.</p>"#);
    let head = |o: &mut String, class: &str| {
        let _ = write!(
            o,
            r#"<div class="scroll"><table class="{class}"><thead><tr><th></th>"#
        );
        for v in views {
            let _ = write!(o, "<th>{}</th>", run_name(v));
        }
        o.push_str("</tr></thead><tbody>");
    };
    let section = |o: &mut String, title: &str| {
        let _ = write!(
            o,
            r#"<tr class="section"><th colspan="{}">{}</th></tr>"#,
            views.len() + 1,
            esc(title)
        );
    };
    head(o, "provenance");
    run_rows(o, views, &section);

    let keys: BTreeSet<&String> = views.iter().flat_map(|v| v.r.run.options.keys()).collect();
    let option_cells = |k: &str| -> Vec<Option<String>> {
        views
            .iter()
            .map(|v| v.r.run.options.get(k).cloned())
            .collect()
    };
    let differing: Vec<&String> = keys
        .iter()
        .copied()
        .filter(|k| option_cells(k).iter().collect::<BTreeSet<_>>().len() > 1)
        .collect();
    if views.len() > 1 {
        section(
            o,
            &format!(
                "options that differ ({} of {})",
                differing.len(),
                keys.len()
            ),
        );
        if differing.is_empty() {
            let _ = write!(
                o,
                r#"<tr><td colspan="{}" class="unset">every option is the same</td></tr>"#,
                views.len() + 1
            );
        }
        for k in &differing {
            row(
                o,
                k,
                &option_cells(k),
                true,
                &format!(r#" data-option="{}""#, esc(k)),
            );
        }
    }

    host_check_rows(o, views, &section);
    o.push_str("</tbody></table></div>");

    if !keys.is_empty() {
        let _ = write!(
            o,
            "<details><summary>All {} effective options{}</summary>",
            keys.len(),
            if differing.is_empty() {
                String::new()
            } else {
                format!(" ({} differ, highlighted)", differing.len())
            }
        );
        head(o, "options");
        for k in &keys {
            row(
                o,
                k,
                &option_cells(k),
                true,
                &format!(r#" data-option="{}""#, esc(k)),
            );
        }
        o.push_str("</tbody></table></div></details>");
    }
}
