//! Chart primitives for the HTML report: hand-written SVG, no scripts. Every string that
//! reaches the markup goes through [`esc`]; every number through [`crate::format`].

use crate::compare::{ratio_text, Cell};
use crate::format::sig;
use crate::html::esc;
use std::fmt::Write as _;

/// Run colours: Okabe–Ito (readable by the colour-blind) without its yellow, then a few
/// darker extras. Repeats of one version share a colour and differ by dash.
pub(crate) const PALETTE: &[&str] = &[
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#332288", "#882255",
    "#555555",
];

/// Dash patterns for repeats of one version: solid, dashed, dotted, dash-dot.
pub(crate) const DASHES: &[&str] = &["", "7 4", "2 3", "10 3 2 3"];

/// How a run is drawn.
#[derive(Debug, Clone)]
pub(crate) struct Look {
    /// Legend text.
    pub label: String,
    /// Stroke colour.
    pub colour: &'static str,
    /// `stroke-dasharray`, empty for solid.
    pub dash: &'static str,
}

/// One run's points on a chart.
pub(crate) struct Series<'a> {
    /// How it is drawn.
    pub look: &'a Look,
    /// (x, y) pairs; for category charts x is the category index and y may be missing.
    pub points: Vec<(f64, Option<f64>)>,
}

const FONT_W: f64 = 7.0;

/// Removes trailing zeros after a decimal point: `20.0` → `20`, `1.50` → `1.5`.
fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A number for an axis: `0`, `850`, `20k`, `1.5M`.
pub(crate) fn human(v: f64) -> String {
    let a = v.abs();
    let (d, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{suffix}", trim(sig(Some(v / d), 3)))
}

/// A latency in µs for an axis: `12 µs`, `1.5 ms`, `2 s`.
pub(crate) fn human_us(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{} s", trim(sig(Some(v / 1e6), 3)))
    } else if a >= 1e3 {
        format!("{} ms", trim(sig(Some(v / 1e3), 3)))
    } else {
        format!("{} µs", trim(sig(Some(v), 3)))
    }
}

/// A plain number for an axis, all integer digits kept: `0`, `250`, `1200`, `0.25`.
fn plain(v: f64) -> String {
    trim(sig(Some(v), 4))
}

/// A 1–2–5 step giving about `target` ticks over `span`.
fn nice_step(span: f64, target: usize) -> f64 {
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// Multiples of `step` within `[lo, hi]`.
fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let a = (lo / step - 1e-9).ceil() as i64;
    let b = (hi / step + 1e-9).floor() as i64;
    (a..=b).take(60).map(|k| k as f64 * step).collect()
}

/// A number for an SVG coordinate.
fn n(v: f64) -> String {
    format!("{v:.1}")
}

fn open(out: &mut String, attrs: &[(&str, &str)], title: &str, w: f64, h: f64) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}""#,
        t = esc(title)
    );
    for (k, v) in attrs {
        let _ = write!(out, r#" {}="{}""#, esc(k), esc(v));
    }
    let _ = write!(out, "><title>{}</title>", esc(title));
}

fn text(out: &mut String, x: f64, y: f64, anchor: &str, class: &str, s: &str) {
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="{anchor}" class="{class}">{}</text>"#,
        n(x),
        n(y),
        esc(s)
    );
}

/// Cuts `s` to `max` characters with an ellipsis.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn stroke(look: &Look) -> String {
    let mut s = format!(r#"stroke="{}""#, esc(look.colour));
    if !look.dash.is_empty() {
        let _ = write!(s, r#" stroke-dasharray="{}""#, esc(look.dash));
    }
    s
}

/// Legend rows below a plot; returns its height.
fn legend(out: &mut String, looks: &[&Look], x0: f64, y0: f64, w: f64) -> f64 {
    if looks.is_empty() {
        return 0.0;
    }
    let colw = legend_col(looks, x0, w);
    let cols = (((w - x0) / colw).floor() as usize).max(1);
    let max_chars = ((colw - 40.0) / FONT_W) as usize;
    out.push_str(r#"<g class="legend">"#);
    for (i, look) in looks.iter().enumerate() {
        let (c, r) = (i % cols, i / cols);
        let x = x0 + c as f64 * colw;
        let y = y0 + r as f64 * 20.0;
        let _ = write!(
            out,
            r#"<g class="item"><title>{}</title><line x1="{}" y1="{}" x2="{}" y2="{}" {} stroke-width="3"/>"#,
            esc(&look.label),
            n(x),
            n(y - 4.0),
            n(x + 26.0),
            n(y - 4.0),
            stroke(look)
        );
        text(out, x + 32.0, y, "start", "", &cut(&look.label, max_chars));
        out.push_str("</g>");
    }
    out.push_str("</g>");
    looks.len().div_ceil(cols) as f64 * 20.0
}

/// Legend column width: the longest label if it fits, else the whole width.
fn legend_col(looks: &[&Look], x0: f64, w: f64) -> f64 {
    let longest = looks
        .iter()
        .map(|l| l.label.chars().count())
        .max()
        .unwrap_or(0);
    (longest as f64 * FONT_W + 44.0).clamp(140.0, w - x0)
}

fn legend_height(looks: &[&Look], x0: f64, w: f64) -> f64 {
    if looks.is_empty() {
        return 0.0;
    }
    let colw = legend_col(looks, x0, w);
    let cols = (((w - x0) / colw).floor() as usize).max(1);
    looks.len().div_ceil(cols) as f64 * 20.0 + 8.0
}

const LEFT: f64 = 72.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 16.0;
const PLOT_H: f64 = 240.0;
const BOTTOM: f64 = 46.0;

/// A line chart of y over x, one polyline per series, y from 0.
pub(crate) fn line_chart(
    attrs: &[(&str, &str)],
    title: &str,
    series: &[Series<'_>],
    x_label: &str,
    y_label: &str,
    w: f64,
) -> String {
    marked_line_chart(attrs, title, series, x_label, y_label, w, &[])
}

/// [`line_chart`] with vertical marks at some x, each labelled (a rate profile's
/// phases: where each began).
pub(crate) fn marked_line_chart(
    attrs: &[(&str, &str)],
    title: &str,
    series: &[Series<'_>],
    x_label: &str,
    y_label: &str,
    w: f64,
    marks: &[(f64, String)],
) -> String {
    let pts = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|(x, y)| Some((*x, (*y)?))))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    };
    let x_max = pts().map(|p| p.0).fold(0.0, f64::max);
    let y_max = pts().map(|p| p.1).fold(0.0, f64::max);
    let x_step = nice_step(if x_max > 0.0 { x_max } else { 1.0 }, 10);
    let x_hi = ((x_max / x_step - 1e-9).ceil() * x_step).max(x_step);
    let y_step = nice_step(if y_max > 0.0 { y_max * 1.05 } else { 1.0 }, 5);
    let y_hi = ((y_max * 1.05 / y_step - 1e-9).ceil() * y_step).max(y_step);
    let with_data: Vec<&Look> = series
        .iter()
        .filter(|s| s.points.iter().any(|p| p.1.is_some()))
        .map(|s| s.look)
        .collect();
    let h = TOP + PLOT_H + BOTTOM + legend_height(&with_data, LEFT, w);
    let (px0, px1, py0, py1) = (LEFT, w - RIGHT, TOP, TOP + PLOT_H);
    let sx = |x: f64| px0 + (x / x_hi) * (px1 - px0);
    let sy = |y: f64| py1 - (y / y_hi) * (py1 - py0);

    let mut out = String::new();
    open(&mut out, attrs, title, w, h);
    out.push_str(r#"<g class="grid">"#);
    for t in ticks(0.0, y_hi, y_step) {
        let _ = write!(
            out,
            r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}"/>"#,
            n(px0),
            n(px1),
            y = n(sy(t))
        );
    }
    out.push_str("</g><g class=\"axis\">");
    for t in ticks(0.0, y_hi, y_step) {
        text(&mut out, px0 - 6.0, sy(t) + 4.0, "end", "tick", &human(t));
    }
    for t in ticks(0.0, x_hi, x_step) {
        let x = sx(t);
        let _ = write!(
            out,
            r#"<line x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
            n(py1),
            n(py1 + 5.0),
            x = n(x)
        );
        text(&mut out, x, py1 + 18.0, "middle", "tick", &plain(t));
    }
    let _ = write!(
        out,
        r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}"/><line x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
        n(px0),
        n(px1),
        n(py0),
        n(py1),
        y = n(py1),
        x = n(px0)
    );
    text(
        &mut out,
        (px0 + px1) / 2.0,
        py1 + 38.0,
        "middle",
        "label",
        x_label,
    );
    let _ = write!(
        out,
        r#"<text transform="rotate(-90)" x="{}" y="16" text-anchor="middle" class="label">{}</text>"#,
        n(-(py0 + py1) / 2.0),
        esc(y_label)
    );
    out.push_str("</g>");
    if !marks.is_empty() {
        out.push_str(r#"<g class="marks">"#);
        for (x, label) in marks.iter().filter(|(x, _)| *x >= 0.0 && *x <= x_hi) {
            let _ = write!(
                out,
                r#"<line data-mark="phase" x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="currentColor" stroke-opacity="0.5" stroke-dasharray="2 3"/>"#,
                n(py0),
                n(py1),
                x = n(sx(*x))
            );
            text(&mut out, sx(*x) + 3.0, py0 + 10.0, "start", "tick", label);
        }
        out.push_str("</g>");
    }
    if with_data.is_empty() {
        text(
            &mut out,
            (px0 + px1) / 2.0,
            (py0 + py1) / 2.0,
            "middle",
            "empty",
            "no interval data",
        );
    }
    for s in series {
        let p: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|(x, y)| Some((*x, (*y)?)))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        if p.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            r#"<g class="series"><title>{}</title>"#,
            esc(&s.look.label)
        );
        if p.len() > 1 {
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke-width="2" stroke-linejoin="round" {} points=""#,
                stroke(s.look)
            );
            for (i, (x, y)) in p.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{},{}", n(sx(*x)), n(sy(*y)));
            }
            out.push_str("\"/>");
        }
        if p.len() <= 40 {
            for (x, y) in &p {
                let _ = write!(
                    out,
                    r#"<circle cx="{}" cy="{}" r="2.5" fill="{}"/>"#,
                    n(sx(*x)),
                    n(sy(*y)),
                    esc(s.look.colour)
                );
            }
        }
        out.push_str("</g>");
    }
    legend(&mut out, &with_data, px0, py1 + BOTTOM + 16.0, w);
    out.push_str("</svg>");
    out
}

/// Values per category on a log-scale y axis (latency percentiles), one line of markers
/// per series. `fmt` formats an axis value.
pub(crate) fn category_log_chart(
    attrs: &[(&str, &str)],
    title: &str,
    categories: &[&str],
    series: &[Series<'_>],
    y_label: &str,
    fmt: fn(f64) -> String,
    w: f64,
) -> String {
    let vals: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.1))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let (lo_e, hi_e) = if vals.is_empty() {
        (0, 3)
    } else {
        let lo = vals.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().cloned().fold(0.0, f64::max);
        let a = lo.log10().floor() as i32;
        let b = (hi.log10() - 1e-9).ceil() as i32;
        (a, b.max(a + 1))
    };
    let with_data: Vec<&Look> = series
        .iter()
        .filter(|s| s.points.iter().any(|p| p.1.is_some_and(|v| v > 0.0)))
        .map(|s| s.look)
        .collect();
    let h = TOP + PLOT_H + BOTTOM + legend_height(&with_data, LEFT, w);
    let (px0, px1, py0, py1) = (LEFT, w - RIGHT, TOP, TOP + PLOT_H);
    let band = (px1 - px0) / categories.len().max(1) as f64;
    let sx = |i: f64| px0 + band * (i + 0.5);
    let sy = |v: f64| py1 - (v.log10() - lo_e as f64) / (hi_e - lo_e) as f64 * (py1 - py0);

    let mut out = String::new();
    open(&mut out, attrs, title, w, h);
    let mut major = Vec::new();
    let mut minor = Vec::new();
    for e in lo_e..=hi_e {
        let d = 10f64.powi(e);
        major.push(d);
        if e < hi_e {
            for m in [2.0, 5.0] {
                minor.push(m * d);
            }
        }
    }
    let label_minor = hi_e - lo_e <= 2;
    out.push_str(r#"<g class="grid">"#);
    for v in &major {
        let _ = write!(
            out,
            r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}"/>"#,
            n(px0),
            n(px1),
            y = n(sy(*v))
        );
    }
    for v in &minor {
        let _ = write!(
            out,
            r#"<line class="minor" x1="{}" x2="{}" y1="{y}" y2="{y}"/>"#,
            n(px0),
            n(px1),
            y = n(sy(*v))
        );
    }
    out.push_str("</g><g class=\"axis\">");
    for v in major.iter().chain(minor.iter().filter(|_| label_minor)) {
        text(&mut out, px0 - 6.0, sy(*v) + 4.0, "end", "tick", &fmt(*v));
    }
    for (i, c) in categories.iter().enumerate() {
        text(&mut out, sx(i as f64), py1 + 18.0, "middle", "tick", c);
    }
    let _ = write!(
        out,
        r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}"/><line x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
        n(px0),
        n(px1),
        n(py0),
        n(py1),
        y = n(py1),
        x = n(px0)
    );
    text(
        &mut out,
        (px0 + px1) / 2.0,
        py1 + 38.0,
        "middle",
        "label",
        "percentile (log scale)",
    );
    let _ = write!(
        out,
        r#"<text transform="rotate(-90)" x="{}" y="16" text-anchor="middle" class="label">{}</text>"#,
        n(-(py0 + py1) / 2.0),
        esc(y_label)
    );
    out.push_str("</g>");
    if with_data.is_empty() {
        text(
            &mut out,
            (px0 + px1) / 2.0,
            (py0 + py1) / 2.0,
            "middle",
            "empty",
            "no latency figures",
        );
    }
    // Spread the runs a little inside each category so equal values stay visible.
    let k = series.len().max(1) as f64;
    let spread = (band * 0.5 / k).min(10.0);
    for (si, s) in series.iter().enumerate() {
        let dx = (si as f64 - (k - 1.0) / 2.0) * spread;
        let p: Vec<(f64, f64, f64, f64)> = s
            .points
            .iter()
            .filter_map(|(i, v)| Some((*i, (*v)?)))
            .filter(|(_, v)| v.is_finite() && *v > 0.0)
            .map(|(i, v)| (i, sx(i) + dx, sy(v), v))
            .collect();
        if p.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            r#"<g class="series"><title>{}</title>"#,
            esc(&s.look.label)
        );
        // A line joins neighbouring categories only: a missing percentile breaks it.
        let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut last: Option<f64> = None;
        for (i, x, y, _) in &p {
            match (last, runs.last_mut()) {
                (Some(l), Some(cur)) if (*i - l - 1.0).abs() < 1e-9 => cur.push((*x, *y)),
                _ => runs.push(vec![(*x, *y)]),
            }
            last = Some(*i);
        }
        for line in runs.iter().filter(|l| l.len() > 1) {
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke-width="1.5" {} points=""#,
                stroke(s.look)
            );
            for (k, (x, y)) in line.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{},{}", n(*x), n(*y));
            }
            out.push_str("\"/>");
        }
        for (i, x, y, v) in &p {
            let cat = categories.get(*i as usize).copied().unwrap_or("");
            let _ = write!(
                out,
                r##"<circle cx="{}" cy="{}" r="4.5" fill="{}" stroke="#fff" stroke-width="1"><title>{}</title></circle>"##,
                n(*x),
                n(*y),
                esc(s.look.colour),
                esc(&format!("{} {cat}: {}", s.look.label, fmt(*v)))
            );
        }
        out.push_str("</g>");
    }
    legend(&mut out, &with_data, px0, py1 + BOTTOM + 16.0, w);
    out.push_str("</svg>");
    out
}

/// A row of a ratio chart.
pub(crate) struct BarRow<'a> {
    /// The step.
    pub group: &'a str,
    /// The version.
    pub label: &'a str,
    /// The compared figure.
    pub cell: &'a Cell,
}

/// Whether a ratio is better, worse or not significantly different.
pub(crate) fn verdict(cell: &Cell, higher_is_better: bool) -> &'static str {
    match cell.ratio {
        None => "missing",
        Some(_) if !cell.significant => "insignificant",
        Some(r) if (r > 1.0) == higher_is_better => "better",
        Some(_) => "worse",
    }
}

/// Horizontal bars from 1.0 to each ratio, with the 95% interval as a whisker and the
/// ratio printed at the right.
pub(crate) fn ratio_bars(
    attrs: &[(&str, &str)],
    title: &str,
    rows: &[BarRow<'_>],
    higher_is_better: bool,
    w: f64,
) -> String {
    const ROW: f64 = 24.0;
    const HEAD: f64 = 20.0;
    const TOP_AXIS: f64 = 26.0;
    let single = {
        let mut groups: Vec<&str> = rows.iter().map(|r| r.group).collect();
        groups.dedup();
        groups.len() == rows.len()
    };
    let longest = rows
        .iter()
        .map(|r| {
            if single {
                r.group.chars().count()
            } else {
                r.label.chars().count() + 2
            }
        })
        .chain(rows.iter().map(|r| r.group.chars().count()))
        .max()
        .unwrap_or(4);
    let label_w = (longest as f64 * FONT_W + 16.0).clamp(110.0, w * 0.3);
    let value_w = 130.0;
    let (px0, px1) = (label_w, w - value_w);
    let ratios: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.cell.ratio)
        .filter(|r| r.is_finite())
        .chain([1.0])
        .collect();
    let lo = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.12).max(0.05);
    let step = nice_step(hi - lo + 2.0 * pad, 6);
    let d_lo = (((lo - pad) / step).floor() * step).max(0.0);
    let d_hi = ((hi + pad) / step).ceil() * step;
    let sx = |v: f64| px0 + (v.clamp(d_lo, d_hi) - d_lo) / (d_hi - d_lo) * (px1 - px0);

    // Lay the rows out: a heading per step when a step has several versions.
    let mut y = TOP_AXIS + 6.0;
    let mut placed: Vec<(f64, Option<f64>)> = Vec::new(); // (row top, heading baseline)
    let mut prev: Option<&str> = None;
    for r in rows {
        let mut head = None;
        if prev != Some(r.group) {
            if prev.is_some() {
                y += 6.0;
            }
            if !single {
                head = Some(y + 14.0);
                y += HEAD;
            }
        }
        placed.push((y, head));
        y += ROW;
        prev = Some(r.group);
    }
    let plot_bottom = y;
    let h = plot_bottom + 8.0;

    let mut out = String::new();
    open(&mut out, attrs, title, w, h);
    out.push_str(r#"<g class="grid">"#);
    for t in ticks(d_lo, d_hi, step) {
        let _ = write!(
            out,
            r#"<line x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
            n(TOP_AXIS - 4.0),
            n(plot_bottom),
            x = n(sx(t))
        );
    }
    out.push_str("</g><g class=\"axis\">");
    for t in ticks(d_lo, d_hi, step) {
        let decimals = (-step.log10().floor()).max(0.0) as usize;
        text(
            &mut out,
            sx(t),
            TOP_AXIS - 10.0,
            "middle",
            "tick",
            &format!("{t:.decimals$}"),
        );
    }
    out.push_str("</g>");
    for (r, (top, head)) in rows.iter().zip(&placed) {
        let mid = top + ROW / 2.0;
        if let Some(hy) = head {
            text(&mut out, 8.0, *hy, "start", "group", r.group);
        }
        let class = verdict(r.cell, higher_is_better);
        let _ = write!(
            out,
            r#"<g class="row {class}" data-step="{}" data-version="{}" data-ratio="{}"><title>{}</title>"#,
            esc(r.group),
            esc(r.label),
            esc(&r
                .cell
                .ratio
                .map(|v| format!("{v}"))
                .unwrap_or_else(|| "n/a".into())),
            esc(&format!(
                "{} · {}: {}",
                r.group,
                r.label,
                ratio_text(r.cell)
            ))
        );
        let name = if single { r.group } else { r.label };
        let max_chars = ((label_w - 16.0) / FONT_W) as usize;
        text(
            &mut out,
            label_w - 10.0,
            mid + 4.0,
            "end",
            "rowlabel",
            &cut(name, max_chars),
        );
        if let Some(v) = r.cell.ratio.filter(|v| v.is_finite()) {
            let (a, b) = (sx(1.0), sx(v));
            let _ = write!(
                out,
                r#"<rect class="bar {class}" x="{}" y="{}" width="{}" height="{}"/>"#,
                n(a.min(b)),
                n(top + 5.0),
                n((a - b).abs().max(1.0)),
                n(ROW - 10.0)
            );
            if let Some((clo, chi)) = r.cell.ci {
                let (xl, xh) = (sx(clo), sx(chi));
                let _ = write!(
                    out,
                    r#"<line class="ci" x1="{}" x2="{}" y1="{m}" y2="{m}"/>"#,
                    n(xl),
                    n(xh),
                    m = n(mid)
                );
                for (x, inside) in [(xl, clo >= d_lo), (xh, chi <= d_hi)] {
                    if inside {
                        let _ = write!(
                            out,
                            r#"<line class="ci" x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
                            n(mid - 5.0),
                            n(mid + 5.0),
                            x = n(x)
                        );
                    }
                }
            }
        }
        text(
            &mut out,
            px1 + 12.0,
            mid + 4.0,
            "start",
            &format!("value {class}"),
            &ratio_text(r.cell),
        );
        out.push_str("</g>");
    }
    let _ = write!(
        out,
        r#"<line class="one" x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
        n(TOP_AXIS - 4.0),
        n(plot_bottom),
        x = n(sx(1.0))
    );
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_numbers_are_human() {
        assert_eq!(human(0.0), "0");
        assert_eq!(human(20_000.0), "20k");
        assert_eq!(human(1_500_000.0), "1.5M");
        assert_eq!(human(250.0), "250");
        assert_eq!(human_us(10.0), "10 µs");
        assert_eq!(human_us(1000.0), "1 ms");
        assert_eq!(human_us(2_000_000.0), "2 s");
        assert_eq!(plain(1200.0), "1200");
    }

    #[test]
    fn ticks_are_one_two_five() {
        assert_eq!(nice_step(100.0, 5), 20.0);
        assert_eq!(nice_step(9.0, 10), 1.0);
        assert_eq!(ticks(0.0, 1.0, 0.25), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    }
}
