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

/// The lines [`apply`] says, one per distinct change, and the factor they scale by.
struct Said {
    f: f64,
    lines: Vec<String>,
}

impl Said {
    fn note(&mut self, family: &str, what: &str, from: String, to: String) {
        let line = format!("{family} {what} {from} → {to}");
        if from != to && !self.lines.contains(&line) {
            self.lines.push(line);
        }
    }

    /// Scales a size (keys, rows, records) in place and says so.
    fn rows(&mut self, family: &str, what: &str, v: &mut u64) {
        let n = rows(*v, self.f);
        self.note(family, what, v.to_string(), n.to_string());
        *v = n;
    }

    /// Scales the seconds per group of perf events (`perf_groups`) in place and says so:
    /// whole seconds, at least 1, since the groups turn on the sampler's 1-second marks;
    /// 0 (all at once) stays 0.
    fn groups(&mut self, family: &str, v: &mut u32) {
        if *v > 0 {
            let n = ((f64::from(*v) * self.f).round() as u32).max(1);
            self.note(family, "perf_groups", format!("{v} s"), format!("{n} s"));
            *v = n;
        }
    }

    /// Scales a rate or threads profile's durations in place (its values stay) and says so; one
    /// that does not parse is left for validation to name.
    fn profile(&mut self, family: &str, what: &str, v: &mut Option<String>) {
        let Some(text) = v.as_mut() else { return };
        if let Ok(p) = text.parse::<plumb_workloads::RateProfile>() {
            let n = p.scaled(self.f).to_string();
            self.note(family, what, text.clone(), n.clone());
            *text = n;
        }
    }

    /// Scales a duration in seconds in place and says so.
    fn secs(&mut self, family: &str, what: &str, v: &mut f64) {
        let n = secs(*v, self.f);
        self.note(family, what, format!("{v} s"), format!("{n} s"));
        *v = n;
    }
}

/// Multiplies every run's sizes and durations by `f`; returns one line per distinct
/// change (`kv num 8000000 → 80000`) and the families left as they were.
pub fn apply(plan: &mut Plan, f: f64) -> Vec<String> {
    let mut said = Said {
        f,
        lines: Vec::new(),
    };
    let mut unscaled: Vec<&str> = Vec::new();
    for r in &mut plan.runs {
        match &mut r.workload.family {
            Family::Kv(w) => {
                let p = &mut w.params;
                said.rows("kv", "num", &mut p.num);
                if let Some(o) = p.ops.as_mut() {
                    said.rows("kv", "ops", o);
                }
                if let Some(d) = p.duration.as_mut() {
                    said.secs("kv", "duration", d);
                }
                said.groups("kv", &mut p.perf_groups);
                said.profile("kv", "rate_profile", &mut p.rate_profile);
                said.profile("kv", "threads_profile", &mut p.threads_profile);
            }
            Family::Sql(w) => {
                let p = &mut w.params;
                said.rows("sql", "table_size", &mut p.table_size);
                said.rows("sql", "recordcount", &mut p.recordcount);
                said.secs("sql", "duration", &mut p.duration);
                if let Some(d) = p.read_duration.as_mut() {
                    said.secs("sql", "read_duration", d);
                }
                if let Some(d) = p.write_duration.as_mut() {
                    said.secs("sql", "write_duration", d);
                }
                said.secs("sql", "warmup", &mut p.warmup);
                for (step, d) in p.step_duration.iter_mut() {
                    said.secs("sql", &format!("step_duration.{step}"), d);
                }
                for (step, d) in p.step_warmup.iter_mut() {
                    said.secs("sql", &format!("step_warmup.{step}"), d);
                }
                said.groups("sql", &mut p.perf_groups);
                said.profile("sql", "rate_profile", &mut p.rate_profile);
                said.profile("sql", "threads_profile", &mut p.threads_profile);
            }
            Family::Ib(w) => {
                let p = &mut w.params;
                said.rows("ib", "rows", &mut p.rows);
                said.rows("ib", "inserts", &mut p.inserts);
                said.secs("ib", "duration", &mut p.duration);
                said.groups("ib", &mut p.perf_groups);
                said.profile("ib", "query_rate_profile", &mut p.query_rate_profile);
            }
            Family::Probe(_) if !unscaled.contains(&"probe") => unscaled.push("probe"),
            Family::Durability(_) if !unscaled.contains(&"durability") => {
                unscaled.push("durability")
            }
            _ => {}
        }
    }
    let mut said = said.lines;
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

    #[test]
    fn the_sql_warm_up_and_the_perf_groups_scale_with_the_durations() {
        let suite = r#"
name = "s"
[sql]
table_size = 500000
warmup = 10
duration = 40
perf_groups = 4
[sql.step_warmup]
scan = 20
[[target]]
name = "pg"
server = "postgres"
[[workload]]
name = "w"
sql = ["load", "scan"]
"#;
        let o = |scale| crate::suite::PlanOptions {
            shuffle: None,
            clock_seed: 1,
            scale,
        };
        let plan = crate::suite::parse(suite, "s.toml", "s", o(Some(0.1))).unwrap();
        let Family::Sql(w) = &plan.runs[0].workload.family else {
            panic!("not sql")
        };
        let p = &w.params;
        assert_eq!((p.table_size, p.duration, p.warmup), (50_000, 4.0, 1.0));
        assert_eq!(p.step_warmup["scan"], 2.0);
        // 0.4 s groups would be shorter than a mark: one second, said.
        assert_eq!(p.perf_groups, 1);
        assert!(
            plan.scaled
                .contains(&"sql perf_groups 4 s → 1 s".to_string()),
            "{:?}",
            plan.scaled
        );
        assert!(
            plan.scaled.contains(&"sql warmup 10 s → 1 s".to_string()),
            "{:?}",
            plan.scaled
        );
        // At the suite's own scale nothing changes.
        let same = crate::suite::parse(suite, "s.toml", "s", o(None)).unwrap();
        let Family::Sql(w) = &same.runs[0].workload.family else {
            panic!("not sql")
        };
        assert_eq!((w.params.warmup, w.params.perf_groups), (10.0, 4));
    }
}
