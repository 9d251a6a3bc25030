//! The highest rate at which a step keeps a latency bound. Throughput at saturation is
//! not what a service can offer its users: the rate it can take while its p99 stays
//! under a bound is. The procedure, the same for every family:
//!
//! 1. A closed-loop pass measures the step's capacity C (the caller runs it).
//! 2. Open-loop probes, each a full step at one rate: the first at 0.9 C; while a probe
//!    passes and no probe has failed, the next is 1.25× higher (at most twice), so a
//!    capacity the closed loop underestimated is still found; then the bracket between
//!    the highest passing and the lowest failing rate is bisected (geometrically, down
//!    to a tenth of C before giving up) until it is within 2% or the probes run out.
//! 3. A probe passes when the step ran cleanly, the bound's quantile of response time
//!    (from each op's intended start) is within the bound, and the backlog it left
//!    (ops due but never started) is under 1% of its ops: a rate above capacity fails
//!    by its backlog even when the ops that did run were fast.

use plumb_workloads::{Arrivals, LatencyBound, Pace};

/// One probe of a search: the rate offered and what it kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// Ops/s offered.
    pub rate: f64,
    /// Ops/s done.
    pub achieved: f64,
    /// The bound's quantile of response time, µs (`None`: no op finished).
    pub quantile_us: Option<f64>,
    /// Ops due and never started.
    pub backlog: u64,
    /// Ops done.
    pub ops: u64,
    /// The step itself ran cleanly (no error, not interrupted).
    pub clean: bool,
}

impl Probe {
    /// Whether this probe kept `bound` (see the module's rule 3).
    pub fn passes(&self, bound: &LatencyBound) -> bool {
        self.clean
            && self.quantile_us.is_some_and(|q| q <= bound.max_us)
            && (self.backlog as f64) <= 0.01 * self.ops as f64 + 1.0
    }
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    /// The highest rate that passed, if any did.
    pub best: Option<f64>,
    /// Every probe in the order run: the curve of rate against latency.
    pub probes: Vec<Probe>,
}

/// Probes at most this many rates.
pub const MAX_PROBES: usize = 8;
/// Stops when the bracket is this narrow, relative to its top.
pub const TOLERANCE: f64 = 0.02;

/// Runs the search of the module's procedure from a closed-loop `capacity` (ops/s),
/// calling `run` for each probe; `run` returns `None` to stop early (an interrupt).
pub fn search_rate(
    bound: &LatencyBound,
    capacity: f64,
    mut run: impl FnMut(f64) -> Option<Probe>,
) -> Search {
    let mut probes = Vec::new();
    let (mut lo, mut hi): (Option<f64>, Option<f64>) = (None, None);
    let floor = capacity * 0.1;
    let mut rate = capacity * 0.9;
    let mut raises = 0;
    while probes.len() < MAX_PROBES && rate > 0.0 && rate.is_finite() {
        let Some(p) = run(rate) else { break };
        probes.push(p);
        if p.passes(bound) {
            lo = Some(rate);
        } else {
            hi = Some(rate);
        }
        rate = match (lo, hi) {
            (Some(l), None) if raises < 2 => {
                raises += 1;
                l * 1.25
            }
            (Some(_), None) => break,
            (None, Some(h)) if h / 2.0 < floor => break,
            (None, Some(h)) => h / 2.0,
            (Some(l), Some(h)) if (h - l) <= TOLERANCE * h => break,
            (Some(l), Some(h)) => (l * h).sqrt(),
            (None, None) => break,
        };
    }
    Search { best: lo, probes }
}

/// Arrivals per second a finished step served: events timed by its histogram (an op,
/// a multiread batch, a transaction) over its window. A search's rates are in these
/// units, for every family.
fn served_per_sec(out: &crate::StepOutcome) -> f64 {
    let s = &out.summary;
    let n = out.histograms.as_ref().map_or(s.ops, |h| h.total.count());
    if s.secs > 0.0 {
        n as f64 / s.secs
    } else {
        0.0
    }
}

/// What a probe that ran as `out` at `rate` kept: the bound's quantile exactly, from
/// the step's histogram.
fn probe_of(out: &crate::StepOutcome, rate: f64, bound: &LatencyBound) -> Probe {
    let s = &out.summary;
    let (ops, quantile_us) = match &out.histograms {
        Some(h) => (h.total.count(), h.total.quantile_us(bound.quantile)),
        None => (s.ops, s.p99_us),
    };
    Probe {
        rate,
        achieved: served_per_sec(out),
        quantile_us,
        backlog: s.open_loop.as_ref().map_or(0, |o| o.backlog_ops),
        ops,
        clean: out.status == plumb_core::StepStatus::Ok,
    }
}

/// The line printed after each probe.
fn probe_line(name: &str, p: &Probe, bound: &LatencyBound) -> String {
    format!(
        "{name}: {:.0}/s served, p{} {} µs, backlog {}: {}",
        p.achieved,
        bound.quantile * 100.0,
        p.quantile_us.map_or("-".into(), |q| format!("{q:.0}")),
        p.backlog,
        if p.passes(bound) { "kept" } else { "missed" }
    )
}

/// What is stored as `STEP@max` after a search whose probes ran as `outcomes` (in
/// order): the best probe's figures, or, when no rate kept the bound, the last probe's
/// marked failed (the engine works; it is too slow for the bound, so later steps
/// still run). Its config carries [`account`].
fn best_outcome(
    found: &Search,
    outcomes: &[crate::StepOutcome],
    bound: &LatencyBound,
    closed_per_sec: f64,
) -> Option<crate::StepOutcome> {
    let i = match found.best {
        Some(b) => found.probes.iter().position(|p| p.rate == b)?,
        None => {
            let last = outcomes.last()?;
            let lowest = found
                .probes
                .iter()
                .map(|p| p.rate)
                .fold(f64::INFINITY, f64::min);
            return Some(crate::StepOutcome {
                status: plumb_core::StepStatus::Failed,
                error: Some(format!(
                    "no rate probed kept {bound}: the lowest, {lowest:.0}/s, missed it \
                     (closed loop {closed_per_sec:.0}/s)"
                )),
                verification_failed: true,
                profile: None,
                ..last.clone()
            });
        }
    };
    outcomes.get(i).map(|o| crate::StepOutcome {
        profile: None,
        ..o.clone()
    })
}

/// The search's account, stored in `STEP@max`'s config: the bound, the closed-loop
/// rate it started from, the rate found and every probe.
fn account(found: &Search, bound: &LatencyBound, closed_per_sec: f64) -> serde_json::Value {
    serde_json::json!({
        "bound": bound.to_string(),
        "closed_loop_per_sec": closed_per_sec,
        "best_per_sec": found.best,
        "probes": found.probes.iter().map(|p| serde_json::json!({
            "rate": p.rate,
            "served": p.achieved,
            "quantile_us": p.quantile_us,
            "backlog": p.backlog,
            "kept": p.passes(bound),
        })).collect::<Vec<_>>(),
    })
}

/// The line printed when a search ends.
fn result_line(name: &str, found: &Search, bound: &LatencyBound) -> String {
    match found.best {
        Some(b) => format!(
            "{name}: the highest rate keeping {bound} is {b:.0}/s ({} probes)",
            found.probes.len()
        ),
        None => format!(
            "{name}: no rate kept {bound} ({} probes)",
            found.probes.len()
        ),
    }
}

/// What a search asks of the family whose step it searches.
pub enum Ask<'a> {
    /// Run one probe at this pace and store it under this name (`STEP@RATE/s`).
    Probe(&'a str, Pace),
    /// Print this line (a probe's verdict, the result).
    Note(&'a str),
}

/// What a finished search leaves to store and to go on with.
pub struct Searched {
    /// What to store as `STEP@max`: the best probe's figures, or the last probe's
    /// marked failed when no rate kept the bound.
    pub max: crate::StepOutcome,
    /// The pace `STEP@max` ran at.
    pub max_pace: Option<Pace>,
    /// The search's account, for `STEP@max`'s config under `rate_search`.
    pub account: serde_json::Value,
    /// The last probe's outcome: it decides whether the run goes on.
    pub last: crate::StepOutcome,
}

/// The whole search of step `name`, which ran closed-loop as `closed`: the module's
/// procedure, each probe run and stored by `ask(Ask::Probe)`, its verdict told through
/// `ask(Ask::Note)`. Stops early when `stopped()` says so or a probe fails to store;
/// `Ok(None)` when no probe ran. Every family's search is this one: only running and
/// storing a probe is the family's.
pub fn run<E>(
    name: &str,
    bound: &LatencyBound,
    closed: &crate::StepOutcome,
    stopped: &dyn Fn() -> bool,
    mut ask: impl FnMut(Ask<'_>) -> Result<Option<crate::StepOutcome>, E>,
) -> Result<Option<Searched>, E> {
    let capacity = served_per_sec(closed);
    let mut failure = None;
    let mut outcomes = Vec::new();
    let found = search_rate(bound, capacity, |rate| {
        if failure.is_some() || stopped() {
            return None;
        }
        let probe_name = format!("{name}@{rate:.0}/s");
        let pace = Pace::constant(rate, Arrivals::Constant);
        let out = match ask(Ask::Probe(&probe_name, pace)) {
            Ok(Some(out)) => out,
            Ok(None) => return None,
            Err(e) => {
                failure = Some(e);
                return None;
            }
        };
        let p = probe_of(&out, rate, bound);
        if let Err(e) = ask(Ask::Note(&probe_line(&probe_name, &p, bound))) {
            failure = Some(e);
        }
        outcomes.push(out);
        Some(p)
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let Some(max) = best_outcome(&found, &outcomes, bound, capacity) else {
        return Ok(None);
    };
    ask(Ask::Note(&result_line(name, &found, bound)))?;
    let max_pace = (max.summary.open_loop.as_ref())
        .map(|o| Pace::constant(o.target_ops_sec, Arrivals::Constant));
    let account = account(&found, bound, capacity);
    let last = outcomes.pop().unwrap_or_else(|| max.clone());
    Ok(Some(Searched {
        max,
        max_pace,
        account,
        last,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step that keeps any bound up to `cap` ops/s and falls behind above it.
    fn step(cap: f64) -> impl FnMut(f64) -> Option<Probe> {
        move |rate| {
            let ok = rate <= cap;
            Some(Probe {
                rate,
                achieved: rate.min(cap),
                quantile_us: Some(if ok { 100.0 } else { 50_000.0 }),
                backlog: if ok {
                    0
                } else {
                    ((rate - cap) * 2.0) as u64 + 10
                },
                ops: (rate.min(cap) * 2.0) as u64,
                clean: true,
            })
        }
    }

    #[test]
    fn finds_the_capacity_from_above_and_below_the_closed_loop_estimate() {
        let bound: LatencyBound = "p99:2ms".parse().unwrap();
        for (estimate, cap) in [(1000.0, 800.0), (1000.0, 1000.0), (1000.0, 1400.0)] {
            let s = search_rate(&bound, estimate, step(cap));
            let best = s.best.unwrap();
            assert!(
                best <= cap && best >= cap * 0.95,
                "{estimate} {cap}: {best}"
            );
            assert!(s.probes.len() <= MAX_PROBES);
        }
        // Nothing passes: no rate found, and the search gives up near a tenth of C.
        let s = search_rate(&bound, 1000.0, step(1.0));
        assert_eq!(s.best, None);
        assert!(s.probes.iter().all(|p| p.rate >= 50.0), "{:?}", s.probes);
        // A probe with a backlog fails even if its ops were fast.
        let p = Probe {
            rate: 10.0,
            achieved: 5.0,
            quantile_us: Some(1.0),
            backlog: 100,
            ops: 50,
            clean: true,
        };
        assert!(!p.passes(&bound));
        // An interrupt stops it.
        let s = search_rate(&bound, 1000.0, |_| None);
        assert!(s.probes.is_empty() && s.best.is_none());
    }
}
