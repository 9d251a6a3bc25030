//! Formatting shared by reporters: numbers (a figure that is missing prints as `n/a`,
//! never as 0), escaping for HTML/SVG and for Markdown cells, and the terminal tables'
//! layout. A leaf: it imports nothing else of the crate, so every reporter and section
//! can use it without the reporters importing each other for it.

use comfy_table::{presets, CellAlignment, Table};

/// `v` with `digits` significant digits (integers above that keep all their digits),
/// or `n/a`.
pub fn sig(v: Option<f64>, digits: usize) -> String {
    match v {
        None => "n/a".into(),
        Some(x) if !x.is_finite() => "n/a".into(),
        Some(0.0) => "0".into(),
        Some(x) => {
            let mag = x.abs().log10().floor() as i32;
            let decimals = (digits as i32 - 1 - mag).max(0) as usize;
            format!("{x:.decimals$}")
        }
    }
}

/// `v` with a fixed number of decimals, or `n/a`.
pub fn fixed(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "n/a".into(),
    }
}

/// Escapes text for HTML and SVG, in element content and in quoted attributes alike:
/// every string a run brings (tags, commands, options) passes here, so none can add
/// markup or break out of an attribute.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// Escapes text for a Markdown table cell (pipes, and HTML the renderer would run), so
/// a run's strings neither split a row nor add markup to a pasted report.
pub fn cell(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// A borderless table whose last column (a name or a note) is left-aligned and the
/// figures before it right-aligned: the run report's and the sections' layout.
pub(crate) fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(header.to_vec());
    for i in 0..header.len() - 1 {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// A borderless table whose first column (the test) is left-aligned, the figures
/// right-aligned: the layout of every plumb terminal table.
pub fn table_left(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(header.to_vec());
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_never_zero() {
        assert_eq!(sig(None, 3), "n/a");
        assert_eq!(sig(Some(f64::NAN), 3), "n/a");
        assert_eq!(fixed(None, 1), "n/a");
        assert_eq!(sig(Some(0.0), 3), "0");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(Some(123456.7), 3), "123457");
        assert_eq!(sig(Some(12.345), 3), "12.3");
        assert_eq!(sig(Some(0.012345), 3), "0.0123");
        assert_eq!(fixed(Some(1.25), 1), "1.2");
    }

    #[test]
    fn escapes() {
        assert_eq!(
            esc(r#"<a href="x" onclick='y'>&"#),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;"
        );
        assert_eq!(cell("a|b <i>\nc & d"), "a\\|b &lt;i&gt; c &amp; d");
    }

    #[test]
    fn table_alignments() {
        // Where a column's text starts and ends on each line.
        let span = |s: &str, cell: &str| {
            s.lines()
                .find_map(|l| {
                    l.split_whitespace().any(|w| w == cell).then(|| {
                        let at = l.find(cell).expect("found");
                        (at, at + cell.len())
                    })
                })
                .expect("row")
        };
        let mut t = table_left(&["test", "ops/s"]);
        t.add_row(vec!["a", "1"]);
        t.add_row(vec!["bbbb", "100"]);
        let s = t.to_string();
        assert_eq!(span(&s, "a").0, span(&s, "bbbb").0, "{s}");
        assert_eq!(span(&s, "1").1, span(&s, "100").1, "{s}");
        let mut t = table(&["ops/s", "step"]);
        t.add_row(vec!["1", "a"]);
        t.add_row(vec!["100", "bbbb"]);
        let s = t.to_string();
        assert_eq!(span(&s, "1").1, span(&s, "100").1, "{s}");
        assert_eq!(span(&s, "a").0, span(&s, "bbbb").0, "{s}");
    }
}
