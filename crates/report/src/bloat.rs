//! The seeds' reading of a regression from the server's perf counters per query: did
//! the new version do more work (more instructions per query: code bloat), or the same
//! work with the memory system serving it worse (more cache and TLB misses per query:
//! memory-system bloat)? A person comparing two versions asks this first, and it decides
//! where to look next (a profile's new code paths, or data layout and working-set size),
//! so it is a typed verdict here rather than a reader's squint at two tables.
//!
//! Pure: it takes two maps event → count per query (`ServerCosts::perf_query`, or any
//! per-operation map) and says nothing it cannot back with both sides' counts.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

/// The miss events whose growth per query reads as memory-system bloat: L1 data and
/// instruction caches, the last-level cache (loads and stores) and both TLBs. The
/// generic `cache-misses` is left out because it is the LLC again on most x86 and would
/// count the same misses twice.
pub const MISS_EVENTS: &[&str] = &[
    "L1-dcache-load-misses",
    "L1-icache-load-misses",
    "LLC-load-misses",
    "LLC-store-misses",
    "dTLB-load-misses",
    "iTLB-load-misses",
];

/// Relative growths (0.03 = 3%) above which a change counts, so run-to-run noise and
/// multiplexing error are not read as a cause.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Growth of instructions per query that is code bloat (default 3%: repeated runs
    /// of one binary agree on instructions per query far closer than that).
    pub instructions: f64,
    /// Growth of a miss event per query that is memory-system bloat (default 10%: miss
    /// counts are noisier and, multiplexed, estimated from part of the window).
    pub misses: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            instructions: 0.03,
            misses: 0.10,
        }
    }
}

/// What the counters say about a regression.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Instructions per query grew beyond the threshold: more work is done.
    CodeBloat,
    /// Instructions per query did not grow beyond the threshold but cache or TLB misses
    /// per query did: the same work costs more memory stalls.
    MemoryBloat,
    /// Both at once.
    CodeAndMemoryBloat,
    /// Neither moved enough: the cause is elsewhere (locks, I/O, the client, the host).
    NoCounterExplanation,
    /// Instructions were not counted on one side or both (no PMU, perf refused), so no
    /// reading is possible; the reason says which side.
    Unsupported(String),
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::CodeBloat => f.write_str("code bloat"),
            Verdict::MemoryBloat => f.write_str("memory-system bloat"),
            Verdict::CodeAndMemoryBloat => f.write_str("code and memory-system bloat"),
            Verdict::NoCounterExplanation => f.write_str("no counter explanation"),
            Verdict::Unsupported(why) => write!(f, "unsupported: {why}"),
        }
    }
}

/// One event's count per query in both versions, for the evidence behind a verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// The perf event.
    pub event: String,
    /// Per query in the base version.
    pub base: f64,
    /// Per query in the new version.
    pub new: f64,
    /// `new / base`.
    pub ratio: f64,
}

/// A verdict with the line that says it and the ratios it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The typed reading, for code that acts on it.
    pub verdict: Verdict,
    /// One line for a person: the verdict and the figures behind it.
    pub explanation: String,
    /// Every event counted on both sides (base above zero), most moved first: by
    /// |ln(new/base)|, so halving ranks with doubling.
    pub ratios: Vec<Ratio>,
}

/// Reads a regression with the default [`Thresholds`].
pub fn read(base: &BTreeMap<String, f64>, new: &BTreeMap<String, f64>) -> Reading {
    read_with(base, new, Thresholds::default())
}

/// Reads a regression: `base` and `new` map each perf event to its count per query.
///
/// Memory-system bloat asks only that instructions did not *grow* beyond the threshold:
/// a version doing fewer instructions yet missing more is still slowed by its misses.
pub fn read_with(
    base: &BTreeMap<String, f64>,
    new: &BTreeMap<String, f64>,
    t: Thresholds,
) -> Reading {
    let ratios = ratios(base, new);
    let unsupported = |why: String| Reading {
        explanation: format!("unsupported: {why}"),
        verdict: Verdict::Unsupported(why),
        ratios: ratios.clone(),
    };
    let count =
        |m: &BTreeMap<String, f64>| m.get("instructions").copied().filter(|v| v.is_finite());
    let (b, n) = match (count(base), count(new)) {
        (None, None) => return unsupported("instructions not counted in either run".into()),
        (None, Some(_)) => return unsupported("instructions not counted in the base run".into()),
        (Some(_), None) => return unsupported("instructions not counted in the new run".into()),
        (Some(b), _) if b <= 0.0 => {
            return unsupported("the base run counted no instructions".into())
        }
        (Some(b), Some(n)) => (b, n),
    };
    let insn = n / b - 1.0;
    let code = insn > t.instructions;
    let compared: Vec<&Ratio> = ratios
        .iter()
        .filter(|r| MISS_EVENTS.contains(&r.event.as_str()))
        .collect();
    let mut grew: Vec<&Ratio> = compared
        .iter()
        .copied()
        .filter(|r| r.ratio - 1.0 > t.misses)
        .collect();
    grew.sort_by(|a, b| b.ratio.total_cmp(&a.ratio).then(a.event.cmp(&b.event)));
    let verdict = match (code, !grew.is_empty()) {
        (true, true) => Verdict::CodeAndMemoryBloat,
        (true, false) => Verdict::CodeBloat,
        (false, true) => Verdict::MemoryBloat,
        (false, false) => Verdict::NoCounterExplanation,
    };
    let insn_text = format!(
        "instructions/query {} ({} {})",
        pct(insn),
        if code { ">" } else { "within" },
        pct_abs(t.instructions)
    );
    let misses_text = if compared.is_empty() {
        "no cache/TLB misses counted in both runs".to_string()
    } else if grew.is_empty() {
        format!(
            "no cache/TLB miss/query grew more than {}",
            pct_abs(t.misses)
        )
    } else {
        let named: Vec<String> = grew
            .iter()
            .take(3)
            .map(|r| format!("{} {}", r.event, pct(r.ratio - 1.0)))
            .collect();
        format!("misses/query up: {}", named.join(", "))
    };
    Reading {
        explanation: format!("{verdict}: {insn_text}; {misses_text}"),
        verdict,
        ratios,
    }
}

/// Per-event ratios new/base for events on both sides with a positive base, most moved
/// first.
fn ratios(base: &BTreeMap<String, f64>, new: &BTreeMap<String, f64>) -> Vec<Ratio> {
    let mut out: Vec<Ratio> = base
        .iter()
        .filter_map(|(event, &b)| {
            let n = *new.get(event)?;
            (b > 0.0 && b.is_finite() && n >= 0.0 && n.is_finite()).then(|| Ratio {
                event: event.clone(),
                base: b,
                new: n,
                ratio: n / b,
            })
        })
        .collect();
    let moved = |r: &Ratio| r.ratio.ln().abs();
    out.sort_by(|a, b| {
        moved(b)
            .partial_cmp(&moved(a))
            .unwrap_or(Ordering::Equal)
            .then(a.event.cmp(&b.event))
    });
    out
}

/// A relative change as a signed percentage.
fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// A threshold as a percentage.
fn pct_abs(x: f64) -> String {
    format!("{}%", (x * 1000.0).round() / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-query counts of a server, base version: 10 µs of CPU per query.
    fn base() -> BTreeMap<String, f64> {
        [
            ("instructions", 100_000.0),
            ("cycles", 125_000.0),
            ("task-clock-us", 40.0),
            ("L1-dcache-load-misses", 1_500.0),
            ("L1-icache-load-misses", 2_000.0),
            ("LLC-load-misses", 80.0),
            ("dTLB-load-misses", 30.0),
            ("iTLB-load-misses", 25.0),
            ("context-switches", 0.5),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn scaled(changes: &[(&str, f64)]) -> BTreeMap<String, f64> {
        let mut m = base();
        for (e, f) in changes {
            *m.get_mut(*e).unwrap() *= f;
        }
        m
    }

    #[test]
    fn more_instructions_per_query_is_code_bloat() {
        let r = read(
            &base(),
            &scaled(&[("instructions", 1.08), ("cycles", 1.09)]),
        );
        assert_eq!(r.verdict, Verdict::CodeBloat);
        assert!(
            r.explanation
                .starts_with("code bloat: instructions/query +8.0% (> 3%)"),
            "{}",
            r.explanation
        );
        assert!(r
            .explanation
            .contains("no cache/TLB miss/query grew more than 10%"));
        assert_eq!(r.ratios[0].event, "cycles");
        assert!((r.ratios[1].ratio - 1.08).abs() < 1e-12);
    }

    #[test]
    fn equal_instructions_and_more_misses_is_memory_bloat_naming_the_largest_first() {
        let new = scaled(&[
            ("instructions", 1.01),
            ("dTLB-load-misses", 1.30),
            ("LLC-load-misses", 1.12),
            ("L1-dcache-load-misses", 1.05),
        ]);
        let r = read(&base(), &new);
        assert_eq!(r.verdict, Verdict::MemoryBloat);
        assert_eq!(
            r.explanation,
            "memory-system bloat: instructions/query +1.0% (within 3%); \
             misses/query up: dTLB-load-misses +30.0%, LLC-load-misses +12.0%"
        );
        let order: Vec<&str> = r.ratios.iter().map(|x| x.event.as_str()).collect();
        assert_eq!(
            order[..4],
            [
                "dTLB-load-misses",
                "LLC-load-misses",
                "L1-dcache-load-misses",
                "instructions"
            ]
        );
    }

    #[test]
    fn both_grew_is_both() {
        let new = scaled(&[("instructions", 1.05), ("iTLB-load-misses", 1.5)]);
        let r = read(&base(), &new);
        assert_eq!(r.verdict, Verdict::CodeAndMemoryBloat);
        assert!(r.explanation.starts_with("code and memory-system bloat: "));
        assert!(r.explanation.contains("iTLB-load-misses +50.0%"));
    }

    #[test]
    fn small_moves_explain_nothing() {
        let new = scaled(&[
            ("instructions", 1.029),
            ("dTLB-load-misses", 1.09),
            ("context-switches", 3.0),
        ]);
        let r = read(&base(), &new);
        assert_eq!(r.verdict, Verdict::NoCounterExplanation);
        assert_eq!(
            r.explanation,
            "no counter explanation: instructions/query +2.9% (within 3%); \
             no cache/TLB miss/query grew more than 10%"
        );
        // The non-miss event that moved most still leads the evidence.
        assert_eq!(r.ratios[0].event, "context-switches");
    }

    #[test]
    fn thresholds_are_the_callers() {
        let new = scaled(&[("instructions", 1.02), ("LLC-load-misses", 1.06)]);
        assert_eq!(read(&base(), &new).verdict, Verdict::NoCounterExplanation);
        let tight = Thresholds {
            instructions: 0.01,
            misses: 0.05,
        };
        assert_eq!(
            read_with(&base(), &new, tight).verdict,
            Verdict::CodeAndMemoryBloat
        );
    }

    #[test]
    fn fewer_instructions_with_more_misses_is_still_memory_bloat() {
        let new = scaled(&[("instructions", 0.9), ("L1-icache-load-misses", 1.4)]);
        let r = read(&base(), &new);
        assert_eq!(r.verdict, Verdict::MemoryBloat);
        assert!(r.explanation.contains("instructions/query -10.0%"));
    }

    #[test]
    fn halving_ranks_above_a_smaller_rise() {
        let new = scaled(&[("iTLB-load-misses", 0.5), ("dTLB-load-misses", 1.9)]);
        let r = read(&base(), &new);
        assert_eq!(r.ratios[0].event, "iTLB-load-misses");
        assert_eq!(r.ratios[1].event, "dTLB-load-misses");
    }

    /// The counted events of perf stat's -x , output as a map, as the SQL step stores
    /// them (values only; `<not supported>` lines have none).
    fn counted(csv: &str) -> BTreeMap<String, f64> {
        csv.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                Some((f.get(2)?.to_string(), f.first()?.parse().ok()?))
            })
            .collect()
    }

    #[test]
    fn no_pmu_is_unsupported_not_a_verdict() {
        let no_pmu = counted(include_str!(
            "../../probes/tests/fixtures/perf-stat-nopmu.csv"
        ));
        assert!(no_pmu.contains_key("task-clock") && !no_pmu.contains_key("cycles"));
        let r = read(&no_pmu, &no_pmu);
        assert_eq!(
            r.verdict,
            Verdict::Unsupported("instructions not counted in either run".into())
        );
        assert_eq!(
            r.explanation,
            "unsupported: instructions not counted in either run"
        );
        // What was counted is still compared.
        assert!(r.ratios.iter().any(|x| x.event == "task-clock"));
        let one_side = read(&base(), &no_pmu);
        assert_eq!(
            one_side.verdict,
            Verdict::Unsupported("instructions not counted in the new run".into())
        );
    }

    #[test]
    fn no_miss_counters_is_said() {
        let only: BTreeMap<String, f64> = [("instructions".to_string(), 100.0)].into();
        let r = read(&only, &only);
        assert_eq!(r.verdict, Verdict::NoCounterExplanation);
        assert!(r
            .explanation
            .ends_with("no cache/TLB misses counted in both runs"));
    }
}
