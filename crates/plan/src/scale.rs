//! `plumb run --scale F`: a suite written at its study's scale (a seed's billions of rows
//! and 30-minute steps) run at a machine's. Every size (keys, rows, records, inserts) and
//! every timed step's duration is multiplied by F, and each change is said in one line, so
//! a reader of the results knows what ran and what the study ran.
//!
//! What does not scale is left as written and said: a cache size, a memory limit, thread
//! counts, the probes' and the durability family's work. A cache or memory limit that made
//! a size IO-bound at the study's scale is the user's to lower with it, since the ratio of
//! data to memory is the study's point and plumb cannot guess which side of it was meant.

use crate::family::Family;
use crate::model::Plan;

/// The smallest size a scaled run keeps: fewer keys or rows measure nothing.
pub const MIN_ROWS: u64 = 1000;
/// The shortest timed step a scaled run keeps, seconds.
pub const MIN_SECS: f64 = 0.5;

/// A factor `--scale` accepts: above 0, finite.
pub fn check(f: f64) -> Result<f64, String> {
    if f.is_finite() && f > 0.0 {
        Ok(f)
    } else {
        Err(format!(
            "{f} is not a scale: give a factor above 0, e.g. 0.01 for a hundredth of the suite's sizes and durations"
        ))
    }
}

fn rows(n: u64, f: f64) -> u64 {
    ((n as f64 * f).round() as u64).max(MIN_ROWS.min(n))
}

fn secs(s: f64, f: f64) -> f64 {
    // Milliseconds are enough precision, and keep the stored plan readable.
    ((s * f * 1000.0).round() / 1000.0).max(MIN_SECS.min(s))
}

/// Multiplies every run's sizes and durations by `f`; returns one line per distinct
/// change (`kv num 8000000 → 80000`) and the families left as they were.
pub fn apply(plan: &mut Plan, f: f64) -> Vec<String> {
    let mut said: Vec<String> = Vec::new();
    let mut say = |family: &str, what: &str, from: String, to: String| {
        let line = format!("{family} {what} {from} → {to}");
        if from != to && !said.contains(&line) {
            said.push(line);
        }
    };
    let mut unscaled: Vec<&str> = Vec::new();
    for r in &mut plan.runs {
        match &mut r.workload.family {
            Family::Kv(w) => {
                let p = &mut w.params;
                let n = rows(p.num, f);
                say("kv", "num", p.num.to_string(), n.to_string());
                p.num = n;
                if let Some(o) = p.ops {
                    let n = rows(o, f);
                    say("kv", "ops", o.to_string(), n.to_string());
                    p.ops = Some(n);
                }
                if let Some(d) = p.duration {
                    let n = secs(d, f);
                    say("kv", "duration", format!("{d} s"), format!("{n} s"));
                    p.duration = Some(n);
                }
            }
            Family::Sql(w) => {
                let p = &mut w.params;
                let n = rows(p.table_size, f);
                say("sql", "table_size", p.table_size.to_string(), n.to_string());
                p.table_size = n;
                let n = rows(p.recordcount, f);
                say(
                    "sql",
                    "recordcount",
                    p.recordcount.to_string(),
                    n.to_string(),
                );
                p.recordcount = n;
                let n = secs(p.duration, f);
                say(
                    "sql",
                    "duration",
                    format!("{} s", p.duration),
                    format!("{n} s"),
                );
                p.duration = n;
                if let Some(d) = p.read_duration {
                    let n = secs(d, f);
                    say("sql", "read_duration", format!("{d} s"), format!("{n} s"));
                    p.read_duration = Some(n);
                }
            }
            Family::Ib(w) => {
                let p = &mut w.params;
                let n = rows(p.rows, f);
                say("ib", "rows", p.rows.to_string(), n.to_string());
                p.rows = n;
                let n = rows(p.inserts, f);
                say("ib", "inserts", p.inserts.to_string(), n.to_string());
                p.inserts = n;
                let n = secs(p.duration, f);
                say(
                    "ib",
                    "duration",
                    format!("{} s", p.duration),
                    format!("{n} s"),
                );
                p.duration = n;
            }
            Family::Probe(_) if !unscaled.contains(&"probe") => unscaled.push("probe"),
            Family::Durability(_) if !unscaled.contains(&"durability") => {
                unscaled.push("durability")
            }
            _ => {}
        }
    }
    if !unscaled.is_empty() {
        said.push(format!(
            "kept as written: the {} workloads (their work is a count of trials or a probe's own size)",
            unscaled.join(" and ")
        ));
    }
    said.push(
        "kept as written: cache sizes, memory limits and threads (lower a limit with the sizes to keep a size IO-bound)"
            .into(),
    );
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_scale_with_floors() {
        assert_eq!(rows(8_000_000, 0.01), 80_000);
        assert_eq!(rows(50_000, 0.001), MIN_ROWS, "never below the floor");
        assert_eq!(rows(10, 0.5), 10, "a size already below the floor is kept");
        assert_eq!(secs(1800.0, 0.01), 18.0);
        assert_eq!(secs(30.0, 0.001), MIN_SECS);
        assert_eq!(secs(0.2, 0.5), 0.2);
        assert!(check(0.0).is_err() && check(f64::NAN).is_err() && check(-1.0).is_err());
        assert_eq!(check(0.25), Ok(0.25));
    }
}
