//! Every page's chrome: title, the navigation between the pages, the store it shows
//! (as `Store::shown`, password hidden), the report's stylesheet and the pages' own, all
//! inline: nothing is fetched from anywhere, so a page works on a machine without a
//! network and leaks nothing to a third party.

use maud::{html, Markup, PreEscaped, DOCTYPE};

/// Which page is open, so the navigation marks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// `/` and `/runs`.
    Runs,
    /// `/compare`.
    Compare,
    /// `/history`.
    History,
    /// `/changes`.
    Changes,
    /// `/hosts`, `/host/NAME`.
    Hosts,
    /// An error page.
    None,
}

const NAV: &[(Nav, &str, &str)] = &[
    (Nav::Runs, "/runs", "Runs"),
    (Nav::Compare, "/compare", "Compare"),
    (Nav::History, "/history", "History"),
    (Nav::Changes, "/changes", "Changes"),
    (Nav::Hosts, "/hosts", "Hosts"),
];

/// The pages' own style, after the report's (plumb_report::html::STYLE).
const PAGE_STYLE: &str = r#"
header.top { background: #24292f; color: #fff; }
header.top nav { max-width: 1320px; margin: 0 auto; padding: 8px 28px; display: flex; gap: 18px; align-items: center; flex-wrap: wrap; }
header.top a { color: #fff; text-decoration: none; }
header.top a.on { font-weight: 700; border-bottom: 2px solid #fff; }
header.top .brand { font-weight: 700; margin-right: 12px; }
header.top .store { margin-left: auto; font-size: 12px; color: #c9d1d9; }
footer { max-width: 1320px; margin: 0 auto; padding: 0 28px 24px; color: #57606a; font-size: 12px; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; margin: 8px 0 16px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: #57606a; }
form.filters input, form.filters select { font: inherit; font-size: 14px; padding: 3px 6px; }
.pager { margin: 8px 0 16px; display: flex; gap: 12px; align-items: center; }
.state { display: inline-block; padding: 0 6px; border-radius: 4px; font-size: 12px; font-weight: 600; background: #eaeef2; }
.state.untriaged { background: #ffebe9; color: #a40e26; }
.state.investigating { background: #fff1c2; color: #7d4e00; }
.state.expected { background: #ddf4ff; color: #0a3069; }
.state.fixed { background: #dafbe1; color: #116329; }
.state.not-a-change { background: #eaeef2; color: #424a53; }
.hostwide { display: inline-block; padding: 0 6px; border-radius: 4px; font-size: 12px; background: #fbefff; color: #6639ba; }
form.triage { display: flex; gap: 4px; flex-wrap: wrap; align-items: flex-start; }
form.triage textarea { width: 14em; height: 2.2em; font: inherit; font-size: 13px; }
form.triage input { width: 7em; }
.error { background: #ffebe9; border: 1px solid #cf222e; border-radius: 6px; padding: 10px 16px; margin: 16px 0; }
.side { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
.side > div { min-width: 320px; }
.stable { background: #dafbe1; }
.live { color: #1a7f37; font-weight: 600; }
"#;

/// What a page puts in its chrome.
pub struct Chrome<'a> {
    /// The page's title (also its first heading unless the body has its own).
    pub title: &'a str,
    /// The page open.
    pub nav: Nav,
    /// The store, as shown (password hidden).
    pub store: &'a str,
    /// Reload every this many seconds (a running run's progress).
    pub refresh: Option<u32>,
    /// The same page as JSON, when it has one.
    pub json: Option<String>,
}

/// A small script of the Changes page: the token typed once is kept for the tab
/// (sessionStorage, never sent anywhere but in the form) and filled into every form.
pub const TOKEN_SCRIPT: &str = r#"(function(){var k='plumb-token',t=sessionStorage.getItem(k)||'';document.querySelectorAll('input[name=token]').forEach(function(i){if(t&&!i.value)i.value=t;i.addEventListener('change',function(){sessionStorage.setItem(k,i.value);});});})();"#;

/// A whole document: chrome around `body`.
pub fn page(c: &Chrome<'_>, body: Markup, script: Option<&'static str>) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(s) = c.refresh {
                    meta http-equiv="refresh" content=(s);
                }
                title { (c.title) " · plumb" }
                // The report's and the pages' own stylesheets: constants of this build.
                style { (PreEscaped(plumb_report::html::STYLE)) (PreEscaped(PAGE_STYLE)) }
            }
            body {
                header.top {
                    nav {
                        a.brand href="/" { "plumb" }
                        @for (n, href, label) in NAV {
                            a.on[*n == c.nav] href=(href) { (label) }
                        }
                        span.store title="the store this server reads" { "store " (c.store) }
                    }
                }
                main { (body) }
                footer {
                    "plumb " (env!("CARGO_PKG_VERSION")) " · store " (c.store)
                    @if let Some(j) = &c.json {
                        " · " a href=(j) { "this page as JSON" }
                    }
                }
                @if let Some(s) = script {
                    // A constant of this build, never built from a request.
                    script { (PreEscaped(s)) }
                }
            }
        }
    }
    .into_string()
}

/// A number as the reports print it (three significant digits), or `—`.
pub fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => plumb_report::sig(Some(x), 3),
        _ => "—".into(),
    }
}

/// A ratio as a signed percentage (`+3.1%`), or `—`.
pub fn pct(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) if r.is_finite() => format!("{:+.1}%", 100.0 * (r - 1.0)),
        _ => "—".into(),
    }
}

/// A page's pager: previous and next links keeping the other parameters.
pub fn pager(base: &str, p: &crate::query::Params, page: usize, per: usize, total: i64) -> Markup {
    let pages = ((total.max(0) as usize).div_ceil(per)).max(1);
    html! {
        div.pager {
            @if page > 1 {
                a #prev href={ (base) "?" (p.with("page", &(page - 1).to_string())) } { "← newer" }
            }
            span { "page " (page) " of " (pages) " · " (total) " in all" }
            @if page < pages {
                a #next href={ (base) "?" (p.with("page", &(page + 1).to_string())) } { "older →" }
            }
        }
    }
}

/// A datalist of values to pick from.
pub fn datalist(id: &str, values: &[String]) -> Markup {
    html! {
        datalist id=(id) {
            @for v in values { option value=(v) {} }
        }
    }
}
