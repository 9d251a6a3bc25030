//! Chart primitives for the HTML report: hand-written SVG, no scripts. Every string that
//! reaches the markup goes through [`esc`]; every number through [`crate::format`].

use crate::compare::{ratio_text, Cell};
use crate::format::{esc, sig};
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

/// A horizontal line from `x1` to `x2` at `y`: grid rows, axes, whiskers. `class` is
/// empty for none.
fn hline(out: &mut String, class: &str, x1: f64, x2: f64, y: f64) {
    line_open(out, class);
    let _ = write!(
        out,
        r#" x1="{}" x2="{}" y1="{y}" y2="{y}"/>"#,
        n(x1),
        n(x2),
        y = n(y)
    );
}

/// A vertical line at `x` from `y1` to `y2`: grid columns, axes, ticks, whisker caps.
/// `class` is empty for none.
fn vline(out: &mut String, class: &str, x: f64, y1: f64, y2: f64) {
    line_open(out, class);
    let _ = write!(
        out,
        r#" x1="{x}" x2="{x}" y1="{}" y2="{}"/>"#,
        n(y1),
        n(y2),
        x = n(x)
    );
}

/// `<line`, with its class if any: the start [`hline`] and [`vline`] share.
fn line_open(out: &mut String, class: &str) {
    out.push_str("<line");
    if !class.is_empty() {
        let _ = write!(out, r#" class="{class}""#);
    }
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

/// The plot area of a chart with its y axis on the left and its x axis below (the line
/// and percentile charts), so both place their frame, labels and legend alike.
#[derive(Debug, Clone, Copy)]
struct Plot {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Plot {
    /// The plot area of a chart `w` wide.
    fn new(w: f64) -> Self {
        Plot {
            x0: LEFT,
            x1: w - RIGHT,
            y0: TOP,
            y1: TOP + PLOT_H,
        }
    }
}

/// The height of a chart whose legend lists `looks`.
fn chart_height(looks: &[&Look], w: f64) -> f64 {
    TOP + PLOT_H + BOTTOM + legend_height(looks, LEFT, w)
}

/// The axes' two lines, the x label below and the y label turned along the axis; closes
/// the axis group the chart opened for its ticks.
fn axis_frame(out: &mut String, p: Plot, x_label: &str, y_label: &str) {
    hline(out, "", p.x0, p.x1, p.y1);
    vline(out, "", p.x0, p.y0, p.y1);
    text(
        out,
        (p.x0 + p.x1) / 2.0,
        p.y1 + 38.0,
        "middle",
        "label",
        x_label,
    );
    let _ = write!(
        out,
        r#"<text transform="rotate(-90)" x="{}" y="16" text-anchor="middle" class="label">{}</text>"#,
        n(-(p.y0 + p.y1) / 2.0),
        esc(y_label)
    );
    out.push_str("</g>");
}

/// Says in the middle of an empty plot why nothing is drawn.
fn empty_note(out: &mut String, p: Plot, message: &str) {
    text(
        out,
        (p.x0 + p.x1) / 2.0,
        (p.y0 + p.y1) / 2.0,
        "middle",
        "empty",
        message,
    );
}

/// The legend below the plot, then the end of the chart.
fn finish(out: &mut String, p: Plot, looks: &[&Look], w: f64) {
    legend(out, looks, p.x0, p.y1 + BOTTOM + 16.0, w);
    out.push_str("</svg>");
}

/// Opens a series' group, titled with its label so hovering names the run.
fn series_open(out: &mut String, look: &Look) {
    let _ = write!(
        out,
        r#"<g class="series"><title>{}</title>"#,
        esc(&look.label)
    );
}

/// A series' polyline through `points` (already in SVG coordinates); `style` is its
/// stroke width and join.
fn polyline(
    out: &mut String,
    style: &str,
    look: &Look,
    points: impl IntoIterator<Item = (f64, f64)>,
) {
    let _ = write!(
        out,
        r#"<polyline fill="none" {style} {} points=""#,
        stroke(look)
    );
    for (i, (x, y)) in points.into_iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{},{}", n(x), n(y));
    }
    out.push_str("\"/>");
}

/// A series' points that can be drawn: y present and both coordinates finite.
fn drawable<'s>(s: &'s Series<'_>) -> impl Iterator<Item = (f64, f64)> + 's {
    s.points
        .iter()
        .filter_map(|(x, y)| Some((*x, (*y)?)))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
}

/// A line chart of y over x, one polyline per series, y from 0.
pub(crate) fn line_chart(
    attrs: &[(&str, &str)],
    title: &str,
    series: &[Series<'_>],
    x_label: &str,
    y_label: &str,
    w: f64,
) -> String {
    marked_line_chart(
        attrs,
        title,
        series,
        x_label,
        y_label,
        w,
        Overlay::default(),
    )
}

/// Both linear axes of a line chart, from 0 to a round number above the data.
struct LinearScale {
    plot: Plot,
    x_step: f64,
    x_hi: f64,
    y_step: f64,
    y_hi: f64,
}

impl LinearScale {
    /// Axes that hold every drawable point of `series`, about 10 ticks along x and 5 up
    /// y, with 5% headroom above the highest y.
    fn fit(series: &[Series<'_>], plot: Plot) -> Self {
        let pts = || series.iter().flat_map(drawable);
        let x_max = pts().map(|p| p.0).fold(0.0, f64::max);
        let y_max = pts().map(|p| p.1).fold(0.0, f64::max);
        let x_step = nice_step(if x_max > 0.0 { x_max } else { 1.0 }, 10);
        let x_hi = ((x_max / x_step - 1e-9).ceil() * x_step).max(x_step);
        let y_step = nice_step(if y_max > 0.0 { y_max * 1.05 } else { 1.0 }, 5);
        let y_hi = ((y_max * 1.05 / y_step - 1e-9).ceil() * y_step).max(y_step);
        LinearScale {
            plot,
            x_step,
            x_hi,
            y_step,
            y_hi,
        }
    }

    fn x(&self, x: f64) -> f64 {
        let p = self.plot;
        p.x0 + (x / self.x_hi) * (p.x1 - p.x0)
    }

    fn y(&self, y: f64) -> f64 {
        let p = self.plot;
        p.y1 - (y / self.y_hi) * (p.y1 - p.y0)
    }
}

/// What a line chart draws over its grid besides its lines: the dotted marks where a
/// profile's phases begin, and the shaded spans of faults' windows.
#[derive(Default, Clone, Copy)]
pub(crate) struct Overlay<'a> {
    /// (x, label) of each mark.
    pub marks: &'a [(f64, String)],
    /// (from, to, label) of each span.
    pub bands: &'a [(f64, f64, String)],
}

/// [`line_chart`] with vertical marks at some x, each labelled (a rate profile's
/// phases: where each began), and shaded spans (faults' windows).
pub(crate) fn marked_line_chart(
    attrs: &[(&str, &str)],
    title: &str,
    series: &[Series<'_>],
    x_label: &str,
    y_label: &str,
    w: f64,
    over: Overlay<'_>,
) -> String {
    let plot = Plot::new(w);
    let scale = LinearScale::fit(series, plot);
    let with_data: Vec<&Look> = series
        .iter()
        .filter(|s| s.points.iter().any(|p| p.1.is_some()))
        .map(|s| s.look)
        .collect();

    let mut out = String::new();
    open(&mut out, attrs, title, w, chart_height(&with_data, w));
    linear_axes(&mut out, &scale, x_label, y_label);
    shaded_bands(&mut out, &scale, over.bands);
    phase_marks(&mut out, &scale, over.marks);
    if with_data.is_empty() {
        empty_note(&mut out, plot, "no interval data");
    }
    for s in series {
        line_series(&mut out, &scale, s);
    }
    finish(&mut out, plot, &with_data, w);
    out
}

/// A line chart's grid, ticks and frame.
fn linear_axes(out: &mut String, scale: &LinearScale, x_label: &str, y_label: &str) {
    let p = scale.plot;
    out.push_str(r#"<g class="grid">"#);
    for t in ticks(0.0, scale.y_hi, scale.y_step) {
        hline(out, "", p.x0, p.x1, scale.y(t));
    }
    out.push_str("</g><g class=\"axis\">");
    for t in ticks(0.0, scale.y_hi, scale.y_step) {
        text(out, p.x0 - 6.0, scale.y(t) + 4.0, "end", "tick", &human(t));
    }
    for t in ticks(0.0, scale.x_hi, scale.x_step) {
        let x = scale.x(t);
        vline(out, "", x, p.y1, p.y1 + 5.0);
        text(out, x, p.y1 + 18.0, "middle", "tick", &plain(t));
    }
    axis_frame(out, p, x_label, y_label);
}

/// The shaded spans of [`marked_line_chart`] (a fault's window, from the fault to its
/// recovery), clipped to its x axis, under the lines, each with its label.
fn shaded_bands(out: &mut String, scale: &LinearScale, bands: &[(f64, f64, String)]) {
    if bands.is_empty() {
        return;
    }
    let p = scale.plot;
    out.push_str(r#"<g class="bands">"#);
    for (a, b, label) in bands
        .iter()
        .filter(|(a, b, _)| *b > 0.0 && *a < scale.x_hi && b > a)
    {
        let (x0, x1) = (scale.x(a.max(0.0)), scale.x(b.min(scale.x_hi)));
        let _ = write!(
            out,
            r##"<rect data-mark="fault" data-from="{a}" data-to="{b}" x="{}" y="{}" width="{}" height="{}" fill="#d62728" fill-opacity="0.15"><title>{} {a:.2}-{b:.2} s</title></rect>"##,
            n(x0),
            n(p.y0),
            n((x1 - x0).max(1.0)),
            n(p.y1 - p.y0),
            esc(label),
        );
        text(out, x0 + 3.0, p.y0 + 22.0, "start", "tick", label);
    }
    out.push_str("</g>");
}

/// The dotted vertical marks of [`marked_line_chart`] that fall on its x axis.
fn phase_marks(out: &mut String, scale: &LinearScale, marks: &[(f64, String)]) {
    if marks.is_empty() {
        return;
    }
    let p = scale.plot;
    out.push_str(r#"<g class="marks">"#);
    for (x, label) in marks.iter().filter(|(x, _)| *x >= 0.0 && *x <= scale.x_hi) {
        let _ = write!(
            out,
            r#"<line data-mark="phase" x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="currentColor" stroke-opacity="0.5" stroke-dasharray="2 3"/>"#,
            n(p.y0),
            n(p.y1),
            x = n(scale.x(*x))
        );
        text(out, scale.x(*x) + 3.0, p.y0 + 10.0, "start", "tick", label);
    }
    out.push_str("</g>");
}

/// One run of a line chart: its polyline, and its points when there are few enough to
/// tell apart.
fn line_series(out: &mut String, scale: &LinearScale, s: &Series<'_>) {
    let p: Vec<(f64, f64)> = drawable(s).collect();
    if p.is_empty() {
        return;
    }
    series_open(out, s.look);
    if p.len() > 1 {
        polyline(
            out,
            r#"stroke-width="2" stroke-linejoin="round""#,
            s.look,
            p.iter().map(|(x, y)| (scale.x(*x), scale.y(*y))),
        );
    }
    if p.len() <= 40 {
        for (x, y) in &p {
            let _ = write!(
                out,
                r#"<circle cx="{}" cy="{}" r="2.5" fill="{}"/>"#,
                n(scale.x(*x)),
                n(scale.y(*y)),
                esc(s.look.colour)
            );
        }
    }
    out.push_str("</g>");
}

/// The axes of a percentile chart: a band per category along x, whole decades up y.
struct LogScale {
    plot: Plot,
    band: f64,
    lo_e: i32,
    hi_e: i32,
}

impl LogScale {
    /// Decades that hold every positive value of `series` (at least one decade; 1 to
    /// 1000 when there is none), one band per category.
    fn fit(series: &[Series<'_>], categories: usize, plot: Plot) -> Self {
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
        LogScale {
            plot,
            band: (plot.x1 - plot.x0) / categories.max(1) as f64,
            lo_e,
            hi_e,
        }
    }

    /// The middle of category `i`'s band.
    fn x(&self, i: f64) -> f64 {
        self.plot.x0 + self.band * (i + 0.5)
    }

    fn y(&self, v: f64) -> f64 {
        let p = self.plot;
        p.y1 - (v.log10() - self.lo_e as f64) / (self.hi_e - self.lo_e) as f64 * (p.y1 - p.y0)
    }
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
    let plot = Plot::new(w);
    let scale = LogScale::fit(series, categories.len(), plot);
    let with_data: Vec<&Look> = series
        .iter()
        .filter(|s| s.points.iter().any(|p| p.1.is_some_and(|v| v > 0.0)))
        .map(|s| s.look)
        .collect();

    let mut out = String::new();
    open(&mut out, attrs, title, w, chart_height(&with_data, w));
    log_axes(&mut out, &scale, categories, y_label, fmt);
    if with_data.is_empty() {
        empty_note(&mut out, plot, "no latency figures");
    }
    // Spread the runs a little inside each category so equal values stay visible.
    let k = series.len().max(1) as f64;
    let spread = (scale.band * 0.5 / k).min(10.0);
    for (si, s) in series.iter().enumerate() {
        let dx = (si as f64 - (k - 1.0) / 2.0) * spread;
        log_series(&mut out, &scale, s, dx, categories, fmt);
    }
    finish(&mut out, plot, &with_data, w);
    out
}

/// A percentile chart's grid (decades, and 2× and 5× between them), ticks (the 2× and
/// 5× labelled only when there are few decades), category names and frame.
fn log_axes(
    out: &mut String,
    scale: &LogScale,
    categories: &[&str],
    y_label: &str,
    fmt: fn(f64) -> String,
) {
    let p = scale.plot;
    let mut major = Vec::new();
    let mut minor = Vec::new();
    for e in scale.lo_e..=scale.hi_e {
        let d = 10f64.powi(e);
        major.push(d);
        if e < scale.hi_e {
            for m in [2.0, 5.0] {
                minor.push(m * d);
            }
        }
    }
    let label_minor = scale.hi_e - scale.lo_e <= 2;
    out.push_str(r#"<g class="grid">"#);
    for v in &major {
        hline(out, "", p.x0, p.x1, scale.y(*v));
    }
    for v in &minor {
        hline(out, "minor", p.x0, p.x1, scale.y(*v));
    }
    out.push_str("</g><g class=\"axis\">");
    for v in major.iter().chain(minor.iter().filter(|_| label_minor)) {
        text(out, p.x0 - 6.0, scale.y(*v) + 4.0, "end", "tick", &fmt(*v));
    }
    for (i, c) in categories.iter().enumerate() {
        text(out, scale.x(i as f64), p.y1 + 18.0, "middle", "tick", c);
    }
    axis_frame(out, p, "percentile (log scale)", y_label);
}

/// One run of a percentile chart, moved `dx` within each band: lines between
/// neighbouring categories, and a titled marker per value.
fn log_series(
    out: &mut String,
    scale: &LogScale,
    s: &Series<'_>,
    dx: f64,
    categories: &[&str],
    fmt: fn(f64) -> String,
) {
    let p: Vec<(f64, f64, f64, f64)> = s
        .points
        .iter()
        .filter_map(|(i, v)| Some((*i, (*v)?)))
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .map(|(i, v)| (i, scale.x(i) + dx, scale.y(v), v))
        .collect();
    if p.is_empty() {
        return;
    }
    series_open(out, s.look);
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
        polyline(out, r#"stroke-width="1.5""#, s.look, line.iter().copied());
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

/// A ratio chart's row height.
const BAR_ROW: f64 = 24.0;
/// A ratio chart's step heading height.
const BAR_HEAD: f64 = 20.0;
/// The y of a ratio chart's first row, below its tick labels.
const BAR_TOP_AXIS: f64 = 26.0;

/// A ratio chart's x axis: round numbers around every ratio and 1.0, never below 0.
struct RatioScale {
    x0: f64,
    x1: f64,
    step: f64,
    lo: f64,
    hi: f64,
}

impl RatioScale {
    /// An axis from `x0` to `x1` holding every finite ratio of `rows` and 1.0, with
    /// 12% of their spread (at least 0.05) as margin, about 6 ticks.
    fn fit(rows: &[BarRow<'_>], x0: f64, x1: f64) -> Self {
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
        RatioScale {
            x0,
            x1,
            step,
            lo: (((lo - pad) / step).floor() * step).max(0.0),
            hi: ((hi + pad) / step).ceil() * step,
        }
    }

    /// The x of ratio `v`, held inside the axis.
    fn x(&self, v: f64) -> f64 {
        self.x0 + (v.clamp(self.lo, self.hi) - self.lo) / (self.hi - self.lo) * (self.x1 - self.x0)
    }
}

/// What every row of a ratio chart is drawn with.
struct BarLayout {
    scale: RatioScale,
    /// One version per step: rows are named by step and there are no headings.
    single: bool,
    label_w: f64,
    higher_is_better: bool,
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
    let single = {
        let mut groups: Vec<&str> = rows.iter().map(|r| r.group).collect();
        groups.dedup();
        groups.len() == rows.len()
    };
    let label_w = bar_label_width(rows, single, w);
    let value_w = 130.0;
    let layout = BarLayout {
        scale: RatioScale::fit(rows, label_w, w - value_w),
        single,
        label_w,
        higher_is_better,
    };
    let (placed, plot_bottom) = place_bar_rows(rows, single);

    let mut out = String::new();
    open(&mut out, attrs, title, w, plot_bottom + 8.0);
    ratio_axis(&mut out, &layout.scale, plot_bottom);
    for (r, (top, head)) in rows.iter().zip(&placed) {
        bar_row(&mut out, &layout, r, *top, *head);
    }
    vline(
        &mut out,
        "one",
        layout.scale.x(1.0),
        BAR_TOP_AXIS - 4.0,
        plot_bottom,
    );
    out.push_str("</svg>");
    out
}

/// The width of the row labels' column: the longest name (a step, or an indented
/// version), within 110 and 30% of the chart.
fn bar_label_width(rows: &[BarRow<'_>], single: bool, w: f64) -> f64 {
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
    (longest as f64 * FONT_W + 16.0).clamp(110.0, w * 0.3)
}

/// Lays the rows out: a heading per step when a step has several versions. Returns each
/// row's top and its heading's baseline if it starts one, and the bottom of the last row.
fn place_bar_rows(rows: &[BarRow<'_>], single: bool) -> (Vec<(f64, Option<f64>)>, f64) {
    let mut y = BAR_TOP_AXIS + 6.0;
    let mut placed: Vec<(f64, Option<f64>)> = Vec::new();
    let mut prev: Option<&str> = None;
    for r in rows {
        let mut head = None;
        if prev != Some(r.group) {
            if prev.is_some() {
                y += 6.0;
            }
            if !single {
                head = Some(y + 14.0);
                y += BAR_HEAD;
            }
        }
        placed.push((y, head));
        y += BAR_ROW;
        prev = Some(r.group);
    }
    (placed, y)
}

/// A ratio chart's vertical grid down to `bottom` and its tick labels on top.
fn ratio_axis(out: &mut String, scale: &RatioScale, bottom: f64) {
    out.push_str(r#"<g class="grid">"#);
    for t in ticks(scale.lo, scale.hi, scale.step) {
        vline(out, "", scale.x(t), BAR_TOP_AXIS - 4.0, bottom);
    }
    out.push_str("</g><g class=\"axis\">");
    let decimals = (-scale.step.log10().floor()).max(0.0) as usize;
    for t in ticks(scale.lo, scale.hi, scale.step) {
        text(
            out,
            scale.x(t),
            BAR_TOP_AXIS - 10.0,
            "middle",
            "tick",
            &format!("{t:.decimals$}"),
        );
    }
    out.push_str("</g>");
}

/// One row of a ratio chart at `top`, after its step's heading at baseline `head` if it
/// starts one: its name, its bar and whisker, and the ratio in words.
fn bar_row(out: &mut String, layout: &BarLayout, r: &BarRow<'_>, top: f64, head: Option<f64>) {
    let mid = top + BAR_ROW / 2.0;
    if let Some(hy) = head {
        text(out, 8.0, hy, "start", "group", r.group);
    }
    let class = verdict(r.cell, layout.higher_is_better);
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
    let name = if layout.single { r.group } else { r.label };
    let max_chars = ((layout.label_w - 16.0) / FONT_W) as usize;
    text(
        out,
        layout.label_w - 10.0,
        mid + 4.0,
        "end",
        "rowlabel",
        &cut(name, max_chars),
    );
    let scale = &layout.scale;
    if let Some(v) = r.cell.ratio.filter(|v| v.is_finite()) {
        let (a, b) = (scale.x(1.0), scale.x(v));
        let _ = write!(
            out,
            r#"<rect class="bar {class}" x="{}" y="{}" width="{}" height="{}"/>"#,
            n(a.min(b)),
            n(top + 5.0),
            n((a - b).abs().max(1.0)),
            n(BAR_ROW - 10.0)
        );
        if let Some(ci) = r.cell.ci {
            ci_whisker(out, scale, ci, mid);
        }
    }
    text(
        out,
        scale.x1 + 12.0,
        mid + 4.0,
        "start",
        &format!("value {class}"),
        &ratio_text(r.cell),
    );
    out.push_str("</g>");
}

/// A ratio's 95% interval at height `mid`, capped at each end that lies on the axis (an
/// end cut off by the axis has no cap).
fn ci_whisker(out: &mut String, scale: &RatioScale, (lo, hi): (f64, f64), mid: f64) {
    let (xl, xh) = (scale.x(lo), scale.x(hi));
    hline(out, "ci", xl, xh, mid);
    for (x, inside) in [(xl, lo >= scale.lo), (xh, hi <= scale.hi)] {
        if inside {
            vline(out, "ci", x, mid - 5.0, mid + 5.0);
        }
    }
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
