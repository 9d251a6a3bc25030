//! Flame graphs of the CPU profiles `plumb sql --profile` stores (folded stacks weighted
//! by CPU nanoseconds), drawn by inferno: one per step, and a differential one against
//! the base with both sides scaled per query, so a function that grew per query shows
//! red and one that shrank blue, whatever the two rates were.

use inferno::flamegraph::{self, Options};

/// The folded stacks scaled to picoseconds per query (integers, as the format wants).
fn per_query(folded: &str, queries: u64) -> String {
    let q = queries.max(1) as u128;
    folded
        .lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            let ps = n.trim().parse::<u128>().ok()? * 1000 / q;
            (ps > 0).then(|| format!("{stack} {ps}\n"))
        })
        .collect()
}

fn draw(lines: &str, title: &str, count_name: &str) -> Option<String> {
    let mut o = Options::default();
    o.title = title.to_string();
    o.count_name = count_name.to_string();
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut o, lines.lines(), &mut svg).ok()?;
    let text = String::from_utf8(svg).ok()?;
    // Inline in a page: from the <svg> element on (no XML prolog or doctype).
    text.find("<svg").map(|i| text[i..].to_string())
}

/// A step's flame graph, or `None` when the profile holds no samples.
pub fn svg(folded: &str, title: &str) -> Option<String> {
    draw(folded, title, "ns")
}

/// The differential flame graph of `other` against `base`, each per query: the frames
/// are `other`'s, coloured by how much each grew (red) or shrank (blue) per query.
pub fn differential(
    base: &str,
    base_queries: u64,
    other: &str,
    other_queries: u64,
    title: &str,
) -> Option<String> {
    let (a, b) = (
        per_query(base, base_queries),
        per_query(other, other_queries),
    );
    let mut diff = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        a.as_bytes(),
        b.as_bytes(),
        &mut diff,
    )
    .ok()?;
    draw(&String::from_utf8(diff).ok()?, title, "ps/query")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_draw_and_differences_are_per_query() {
        let base = "postgres;main;ExecScan 3000\npostgres;main;hash 1000\n";
        let other = "postgres;main;ExecScan 3000\npostgres;main;hash 4000\n";
        let s = svg(base, "base").unwrap();
        assert!(s.starts_with("<svg") && s.contains("ExecScan"));
        // Per query: ExecScan is the same (3000/1000 vs 6000/2000 would be too), hash grew.
        assert_eq!(
            per_query(other, 2),
            "postgres;main;ExecScan 1500000\npostgres;main;hash 2000000\n"
        );
        let d = differential(base, 1, other, 2, "diff").unwrap();
        assert!(d.contains("hash"));
        assert!(svg("", "empty").is_none());
    }
}
