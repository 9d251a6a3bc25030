//! Markdown: tables ready to paste into a blog post, in the seeds' layout.

use crate::compare::{ratio_text, Comparison};
use crate::format::cell;
use plumb_store::StoredRun;

fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

fn header(cells: &[String]) -> String {
    let mut s = row(cells);
    s.push_str(&row(&cells
        .iter()
        .map(|_| "---".to_string())
        .collect::<Vec<_>>()));
    s
}

/// The comparison: warnings, absolute ops/s, then every figure relative to the base.
/// Server counters come most moved first, and those only some versions have get one
/// line: a post is read top down, and a table with one side empty says nothing.
pub fn comparison(c: &Comparison) -> String {
    let mut out = String::new();
    if !c.warnings.is_empty() {
        out.push_str("**Warnings**\n\n");
        for w in &c.warnings {
            out.push_str(&format!("- {}\n", cell(w)));
        }
        out.push('\n');
    }
    let labels: Vec<String> = c.versions.iter().map(|v| cell(v)).collect();
    out.push_str("**ops/s** (median over repeats; n in parentheses)\n\n");
    let mut h = vec!["test".to_string()];
    h.extend(labels.iter().cloned());
    out.push_str(&header(&h));
    for (i, step) in c.steps.iter().enumerate() {
        let mark = if crate::compare::noisy(c, step) {
            " \\*"
        } else {
            ""
        };
        let mut r = vec![format!("{}{mark}", cell(step))];
        for cl in &c.ops_sec.rows[i] {
            r.push(match cl.median {
                Some(m) => format!("{m:.0} ({})", cl.n),
                None => "n/a".into(),
            });
        }
        out.push_str(&row(&r));
    }
    if !c.noise.is_empty() {
        out.push('\n');
        for n in &c.noise {
            out.push_str(&format!("\\* {}\n", cell(&n.note)));
        }
    }
    if !c.floors.is_empty() {
        out.push_str("\nNoise floors on this host (blocks of the base's plan in the store):\n\n");
        for f in &c.floors {
            out.push_str(&format!("- {}\n", cell(&f.note)));
        }
    }
    if !c.reach.is_empty() {
        out.push_str("\nWhat each \"no significant change\" could have seen:\n\n");
        for r in &c.reach {
            out.push_str(&format!("- {}\n", cell(&r.note)));
        }
    }
    if c.versions.len() > 1 {
        let rel = |out: &mut String, title: &str, t: &crate::compare::Table| {
            out.push_str(&format!(
                "\n**{}** relative to: {} (other / base; ~ = not significant; 95% interval in parentheses)\n\n",
                cell(title),
                labels[0]
            ));
            let mut h = vec!["test".to_string()];
            h.extend(labels[1..].iter().cloned());
            out.push_str(&header(&h));
            for (i, step) in c.steps.iter().enumerate() {
                let mut r = vec![cell(step)];
                r.extend(t.rows[i][1..].iter().map(ratio_text));
                out.push_str(&row(&r));
            }
        };
        rel(&mut out, "ops_sec", &c.ops_sec);
        for t in &c.costs {
            rel(&mut out, &t.metric, t);
        }
        for p in &c.perf {
            out.push_str(&format!(
                "\n**{}**\n\n",
                cell(&crate::perf_table::title(p, &labels[0]))
            ));
            let mut h = vec!["counter".to_string(), format!("{} figure", labels[0])];
            h.extend(labels.iter().cloned());
            out.push_str(&header(&h));
            for r in &p.rows {
                let mut cells = vec![cell(&r.name), crate::format::sig(r.base, 3)];
                cells.extend(r.rel.iter().zip(&r.marked).map(|(x, m)| {
                    let text = crate::perf_table::cell(*x, *m);
                    if *m {
                        format!("**{}**", cell(&text))
                    } else {
                        cell(&text)
                    }
                }));
                out.push_str(&row(&cells));
            }
            out.push('\n');
            out.push_str(&format!(
                "{}.\n\n",
                cell(&crate::perf_table::rule(crate::perf_table::MARK))
            ));
            for n in crate::perf_table::notes(p, &c.versions) {
                out.push_str(&format!("- {}\n", cell(&n)));
            }
            if p.no_pmu {
                out.push_str(&format!("{}\n", cell(crate::perf_table::NO_PMU)));
            } else {
                for rd in &p.readings {
                    out.push_str(&format!(
                        "- {}: {}\n",
                        cell(&rd.version),
                        cell(&rd.explanation)
                    ));
                }
            }
        }
        if let Some(line) = crate::compare::left_out_line(c) {
            out.push_str(&format!("\n{}\n", cell(&line)));
        }
        for t in c
            .server_counters_shown
            .iter()
            .filter_map(|&i| c.server_counters.get(i))
        {
            out.push_str(&format!(
                "\n**server {}** relative to: {} (beside the base's figure per query; ~ = not significant)\n\n",
                cell(&t.metric),
                labels[0]
            ));
            let mut h = vec!["test".to_string(), format!("{} /query", labels[0])];
            h.extend(labels[1..].iter().cloned());
            out.push_str(&header(&h));
            for (i, step) in c.steps.iter().enumerate() {
                let mut r = vec![cell(step), crate::format::sig(t.rows[i][0].median, 3)];
                r.extend(t.rows[i][1..].iter().map(ratio_text));
                out.push_str(&row(&r));
            }
        }
    }
    out
}

/// One run's summary in benchmark.sh's columns.
pub fn run(r: &StoredRun) -> String {
    let mut out = format!(
        "**run {}** {} {} · {} · {}{}\n\n",
        r.run.id,
        cell(&r.run.engine),
        cell(&r.run.engine_version),
        cell(r.run.status.as_str()),
        cell(&r.run.started_at),
        r.run
            .tag
            .as_deref()
            .map(|t| format!(" · tag {}", cell(t)))
            .unwrap_or_default()
    );
    if let Some(t) = crate::durability::markdown(std::slice::from_ref(r)) {
        out.push_str(&t);
        return out;
    }
    use crate::metrics::{metric, MARKDOWN_RUN};
    let h: Vec<String> = std::iter::once("test")
        .chain(MARKDOWN_RUN.iter().map(|id| metric(id).short))
        .map(str::to_string)
        .collect();
    if let Some(n) = crate::window::note(&[r]) {
        out.push_str(&format!("{}\n\n", cell(&n)));
    }
    // Where each step's time went, before the table that is its evidence.
    let said = crate::explain::lines(r);
    if !said.is_empty() {
        for l in said {
            out.push_str(&format!("- {}\n", cell(&l)));
        }
        out.push('\n');
    }
    out.push_str(&header(&h));
    for (s, _) in &r.steps {
        let cells: Vec<String> = std::iter::once(cell(&s.name))
            .chain(MARKDOWN_RUN.iter().map(|id| metric(id).show(&s.summary)))
            .collect();
        out.push_str(&row(&cells));
    }
    let lines: Vec<String> = r
        .steps
        .iter()
        .filter_map(|(s, _)| crate::window::step_line(&s.name, &s.summary))
        .collect();
    if !lines.is_empty() {
        out.push('\n');
        for l in lines {
            out.push_str(&format!("- {}\n", cell(&l)));
        }
    }
    if let Some(waits) = crate::explain::waits_text(r) {
        let mut lines = waits.lines();
        if let Some(head) = lines.next() {
            out.push_str(&format!("\n{}\n\n", cell(head)));
        }
        for l in lines {
            out.push_str(&format!("- {}\n", cell(l.trim())));
        }
    }
    if let Some(device) = crate::device::markdown(r) {
        out.push_str(&device);
    }
    out
}
