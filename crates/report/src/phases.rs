//! A step under a rate or threads profile, phase by phase: each phase of the profile
//! (a ramp, a hold, a sine) with what it offered (a rate, or a number of clients) and
//! what the step served in its seconds, so a reader sees where a ramp passed the
//! engine's capacity or a burst left latency behind, and two runs under the same
//! profile compare phase against phase rather than as one mean over phases that asked
//! for different things.

use plumb_core::{Interval, StepSummary};
use plumb_workloads::RateProfile;

/// The profile a step ran under, as written: an open-loop step's rate profile or a
/// closed-loop step's threads profile (both in the one phase syntax).
pub fn profile_of(s: &StepSummary) -> Option<&str> {
    s.open_loop
        .as_ref()
        .and_then(|o| o.profile.as_deref())
        .or(s.threads_profile.as_deref())
}

/// One phase of a step's profile and the step's seconds in it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseRow {
    /// The phase as written (`ramp:1k..20k/60s`).
    pub phase: String,
    /// Seconds from the step's start at which it began.
    pub start: f64,
    /// Measured seconds that fell in it.
    pub secs: f64,
    /// Mean rate offered over those seconds, ops/s (under a rate profile).
    pub offered: Option<f64>,
    /// Mean threads running over those seconds (under a threads profile).
    pub threads: Option<f64>,
    /// Mean rate served, ops/s.
    pub served: f64,
    /// The worst second's p99 response time, µs.
    pub p99_worst_us: Option<f64>,
}

/// The phases of `profile` (as stored) with the intervals that fall in each (by their
/// midpoint); phases the step never reached are left out. `None` when the profile does
/// not parse (a run stored by a plumb with another syntax).
pub fn phase_rows(profile: &str, intervals: &[Interval]) -> Option<Vec<PhaseRow>> {
    let p: RateProfile = profile.parse().ok()?;
    let mut rows = Vec::new();
    for (phase, start, end) in p.spans() {
        let inside: Vec<&Interval> = intervals
            .iter()
            .filter(|iv| {
                let mid = iv.t - iv.secs / 2.0;
                mid >= start && mid < end
            })
            .collect();
        if inside.is_empty() {
            continue;
        }
        let secs: f64 = inside.iter().map(|iv| iv.secs).sum();
        let ops: u64 = inside.iter().map(|iv| iv.ops).sum();
        let mean = |f: &dyn Fn(&Interval) -> Option<f64>| {
            let parts: Vec<f64> = inside
                .iter()
                .filter_map(|iv| f(iv).map(|x| x * iv.secs))
                .collect();
            (!parts.is_empty() && secs > 0.0).then(|| parts.iter().sum::<f64>() / secs)
        };
        rows.push(PhaseRow {
            phase: phase.to_string(),
            start,
            secs,
            offered: mean(&|iv| iv.target_ops_sec),
            threads: mean(&|iv| iv.threads),
            served: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
            p99_worst_us: inside
                .iter()
                .filter_map(|iv| iv.p99_us)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v)))),
        });
    }
    Some(rows)
}

/// Per version, per run: the phase rows of `step` (only its ok runs when `ok_only`),
/// with the profile (rate or threads) they ran under; `None` when a run of the step had no profile or
/// another one than the rest, or none had one, as `plumb compare` and `history` set
/// phase against phase only under one profile.
pub fn rows_by_version(
    versions: &[crate::version::Version],
    step: &str,
    ok_only: bool,
) -> Option<(String, Vec<Vec<Vec<PhaseRow>>>)> {
    let mut profile: Option<String> = None;
    let mut per_version = Vec::new();
    for v in versions {
        let mut runs = Vec::new();
        for r in &v.runs {
            let Some((st, ivs)) = r.steps.iter().find(|(s, _)| {
                s.name == step && (!ok_only || s.status == plumb_core::StepStatus::Ok)
            }) else {
                continue;
            };
            let p = profile_of(&st.summary)?.to_string();
            if profile.get_or_insert_with(|| p.clone()) != &p {
                return None;
            }
            if let Some(rows) = phase_rows(&p, ivs) {
                runs.push(rows);
            }
        }
        per_version.push(runs);
    }
    Some((profile?, per_version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(t: f64, ops: u64, target: f64, p99: f64) -> Interval {
        Interval {
            t,
            secs: 1.0,
            ops,
            ops_sec: ops as f64,
            p99_us: Some(p99),
            target_ops_sec: Some(target),
            ..Interval::default()
        }
    }

    #[test]
    fn seconds_fall_in_their_phase_and_unreached_phases_are_left_out() {
        let ivs = vec![
            iv(1.0, 100, 100.0, 5.0),
            iv(2.0, 100, 100.0, 7.0),
            iv(3.0, 250, 300.0, 90.0),
            iv(4.0, 260, 300.0, 40.0),
        ];
        let rows = phase_rows("hold:100/2s,hold:300/2s,hold:1k/10s", &ivs).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0].phase, "hold:100/2s");
        assert_eq!((rows[0].secs, rows[0].served), (2.0, 100.0));
        assert_eq!(rows[1].start, 2.0);
        assert_eq!(rows[1].served, 255.0);
        assert_eq!(rows[1].offered, Some(300.0));
        assert_eq!(rows[1].p99_worst_us, Some(90.0));
        assert!(phase_rows("nonsense", &ivs).is_none());
        assert_eq!(rows[1].threads, None, "no threads profile");
    }

    #[test]
    fn a_threads_profiles_phases_carry_the_clients_that_ran_in_them() {
        let ivs: Vec<Interval> = [(1.0, 1.0), (2.0, 1.5), (3.0, 2.0), (4.0, 2.0)]
            .into_iter()
            .map(|(t, threads)| Interval {
                t,
                secs: 1.0,
                ops: 100 * threads as u64,
                threads: Some(threads),
                ..Interval::default()
            })
            .collect();
        let rows = phase_rows("hold:1/1s,ramp:1..2/1s,hold:2", &ivs).unwrap();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[0].threads, Some(1.0));
        assert_eq!(rows[1].threads, Some(1.5));
        assert_eq!(rows[2].threads, Some(2.0));
        assert_eq!(rows[2].served, 200.0);
        assert_eq!(rows[2].offered, None);
        let s = StepSummary {
            threads_profile: Some("hold:2".into()),
            ..StepSummary::default()
        };
        assert_eq!(profile_of(&s), Some("hold:2"));
        assert_eq!(profile_of(&StepSummary::default()), None);
    }
}
