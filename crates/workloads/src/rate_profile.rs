//! Load that changes over time: an open-loop step's offered rate as a sequence of phases
//! (a ramp, a hold, a sine), the way LSM engines are judged on bursts and compaction debt
//! (YCSB issues 926 and 1667, k6's ramping-arrival-rate, vegeta's sine pacer, BenchBase's
//! phases). The pacer needs the rate's integral and its inverse: op k of a thread is due
//! when the ops offered so far reach k, so intended start times follow the profile, and a
//! slow op shows as lateness, never as a lower rate (no coordinated omission).
//!
//! Written `ramp:1k..20k/60s,hold:20k/120s,sine:mean=10k,amp=5k,period=300s`: phases
//! apart by commas, rates with an optional k or m (thousands, millions), durations in ms,
//! s, m or h. The last phase may go without a duration (`hold:5k`, a sine without
//! `for=`): it lasts to the step's end; otherwise the last phase's final rate holds after
//! the profile.

use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;
use std::fmt;
use std::str::FromStr;

/// One phase of a [`RateProfile`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Phase {
    /// From one rate to another, linearly, over `secs`.
    Ramp {
        /// Ops/s at the phase's start.
        from: f64,
        /// Ops/s at its end.
        to: f64,
        /// How long it lasts, seconds.
        secs: f64,
    },
    /// One rate for `secs` (infinite for the last phase when no duration is written).
    Hold {
        /// Ops/s.
        rate: f64,
        /// How long it lasts, seconds.
        secs: f64,
    },
    /// `mean + amp·sin(2π·t/period)`, t from the phase's start.
    Sine {
        /// The mean rate, ops/s.
        mean: f64,
        /// The amplitude, ops/s (at most the mean: a rate is never negative).
        amp: f64,
        /// The period, seconds.
        period: f64,
        /// How long it lasts, seconds.
        secs: f64,
    },
}

impl Phase {
    fn secs(&self) -> f64 {
        match *self {
            Phase::Ramp { secs, .. } | Phase::Hold { secs, .. } | Phase::Sine { secs, .. } => secs,
        }
    }

    /// The rate `t` seconds into the phase.
    fn rate(&self, t: f64) -> f64 {
        match *self {
            Phase::Ramp { from, to, secs } => from + (to - from) * (t / secs).clamp(0.0, 1.0),
            Phase::Hold { rate, .. } => rate,
            Phase::Sine {
                mean, amp, period, ..
            } => mean + amp * (TAU * t / period).sin(),
        }
    }

    /// Ops offered in the first `t` seconds of the phase.
    fn ops(&self, t: f64) -> f64 {
        match *self {
            Phase::Ramp { from, to, secs } => {
                let t = t.min(secs);
                from * t + (to - from) * t * t / (2.0 * secs)
            }
            Phase::Hold { rate, .. } => rate * t,
            Phase::Sine {
                mean, amp, period, ..
            } => mean * t + amp * period / TAU * (1.0 - (TAU * t / period).cos()),
        }
    }

    /// The seconds into the phase at which `ops` (at most [`Phase::ops`] of its length)
    /// have been offered.
    fn time_of(&self, ops: f64) -> f64 {
        match *self {
            Phase::Hold { rate, .. } => ops / rate,
            Phase::Ramp { from, to, secs } => {
                let a = (to - from) / (2.0 * secs);
                if a.abs() < 1e-12 {
                    return ops / from;
                }
                // a·t² + from·t − ops = 0, the root in [0, secs]; written so that it
                // does not cancel when `a` is small.
                2.0 * ops / (from + (from * from + 4.0 * a * ops).max(0.0).sqrt())
            }
            Phase::Sine { mean, .. } => {
                // Ops grow monotonically: Newton from the mean rate's estimate, kept in
                // a bracket so a rate near zero (amp = mean) cannot throw it off.
                let (mut lo, mut hi) = (0.0, self.secs().min(ops / mean * 2.0 + 1.0));
                while self.ops(hi) < ops {
                    hi *= 2.0;
                }
                let mut t = ops / mean;
                for _ in 0..60 {
                    let f = self.ops(t) - ops;
                    if f.abs() < 1e-9 * ops.max(1.0) {
                        break;
                    }
                    if f > 0.0 {
                        hi = t;
                    } else {
                        lo = t;
                    }
                    let r = self.rate(t);
                    let next = t - f / r;
                    t = if r > 0.0 && next > lo && next < hi {
                        next
                    } else {
                        (lo + hi) / 2.0
                    };
                }
                t
            }
        }
    }
}

/// An offered rate that changes over time: phases one after another from the step's
/// start (its measured window's start, after any warm-up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RateProfile {
    phases: Vec<Phase>,
}

impl RateProfile {
    /// The phases, in order.
    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }

    /// Each phase with the seconds it starts and ends at from the step's start (the
    /// last may end at infinity): what a report needs to read a step phase by phase.
    pub fn spans(&self) -> Vec<(Phase, f64, f64)> {
        let mut at = 0.0;
        self.phases
            .iter()
            .map(|p| {
                let start = at;
                at += p.secs();
                (*p, start, at)
            })
            .collect()
    }

    /// The rate `t` seconds after the start, ops/s.
    pub fn rate_at(&self, t: f64) -> f64 {
        let mut start = 0.0;
        for p in &self.phases {
            if t < start + p.secs() {
                return p.rate(t - start);
            }
            start += p.secs();
        }
        self.tail_rate()
    }

    /// The rate that holds after the last phase: its final rate.
    fn tail_rate(&self) -> f64 {
        let last = self.phases.last().expect("a profile has a phase");
        last.rate(last.secs())
    }

    /// Ops offered in the first `t` seconds (the integral of the rate).
    pub fn ops_by(&self, t: f64) -> f64 {
        let (mut start, mut sum) = (0.0, 0.0);
        for p in &self.phases {
            if t < start + p.secs() {
                return sum + p.ops(t - start);
            }
            start += p.secs();
            sum += p.ops(p.secs());
        }
        sum + self.tail_rate() * (t - start)
    }

    /// When the ops offered reach `ops`, seconds from the start; infinite when they
    /// never do (the rate ends at zero).
    pub fn time_of(&self, ops: f64) -> f64 {
        let (mut start, mut sum) = (0.0, 0.0);
        for p in &self.phases {
            let in_phase = p.ops(p.secs());
            // An untimed last phase holds every op left.
            if p.secs().is_infinite() || ops <= sum + in_phase {
                if ops <= sum {
                    return start;
                }
                return start + p.time_of(ops - sum);
            }
            start += p.secs();
            sum += in_phase;
        }
        let tail = self.tail_rate();
        if tail > 0.0 {
            start + (ops - sum) / tail
        } else {
            f64::INFINITY
        }
    }

    /// The mean rate between `t0` and `t1` seconds: what an interval was offered.
    pub fn mean_between(&self, t0: f64, t1: f64) -> f64 {
        if t1 > t0 {
            (self.ops_by(t1) - self.ops_by(t0)) / (t1 - t0)
        } else {
            self.rate_at(t0)
        }
    }

    /// The profile's length up to its last timed phase, seconds (infinite when the last
    /// phase has no duration).
    pub fn secs(&self) -> f64 {
        self.phases.iter().map(Phase::secs).sum()
    }

    /// The highest rate anywhere in it.
    pub fn peak(&self) -> f64 {
        self.phases
            .iter()
            .map(|p| match *p {
                Phase::Ramp { from, to, .. } => from.max(to),
                Phase::Hold { rate, .. } => rate,
                Phase::Sine { mean, amp, .. } => mean + amp,
            })
            .fold(0.0, f64::max)
    }

    /// The same profile with every duration multiplied by `k` (a suite's `--scale`).
    pub fn scaled(&self, k: f64) -> RateProfile {
        let phases = self
            .phases
            .iter()
            .map(|p| match *p {
                Phase::Ramp { from, to, secs } => Phase::Ramp {
                    from,
                    to,
                    secs: secs * k,
                },
                Phase::Hold { rate, secs } => Phase::Hold {
                    rate,
                    secs: secs * k,
                },
                Phase::Sine {
                    mean,
                    amp,
                    period,
                    secs,
                } => Phase::Sine {
                    mean,
                    amp,
                    period: period * k,
                    secs: secs * k,
                },
            })
            .collect();
        RateProfile { phases }
    }
}

fn fmt_rate(r: f64) -> String {
    if r >= 1e6 && (r / 1e6).fract() == 0.0 {
        format!("{}m", r / 1e6)
    } else if r >= 1e3 && (r / 1e3).fract() == 0.0 {
        format!("{}k", r / 1e3)
    } else {
        format!("{r}")
    }
}

fn fmt_secs(s: f64) -> String {
    if s < 1.0 {
        format!("{}ms", s * 1e3)
    } else {
        format!("{s}s")
    }
}

impl fmt::Display for Phase {
    /// The phase as `--rate-profile` writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dur = |s: f64| {
            if s.is_finite() {
                format!("/{}", fmt_secs(s))
            } else {
                String::new()
            }
        };
        match *self {
            Phase::Ramp { from, to, secs } => write!(
                f,
                "ramp:{}..{}/{}",
                fmt_rate(from),
                fmt_rate(to),
                fmt_secs(secs)
            ),
            Phase::Hold { rate, secs } => write!(f, "hold:{}{}", fmt_rate(rate), dur(secs)),
            Phase::Sine {
                mean,
                amp,
                period,
                secs,
            } => {
                write!(
                    f,
                    "sine:mean={},amp={},period={}",
                    fmt_rate(mean),
                    fmt_rate(amp),
                    fmt_secs(period)
                )?;
                if secs.is_finite() {
                    write!(f, ",for={}", fmt_secs(secs))?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for RateProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.phases.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl From<RateProfile> for String {
    fn from(p: RateProfile) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for RateProfile {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

const EXAMPLE: &str = "ramp:1k..20k/60s,hold:20k/120s,sine:mean=10k,amp=5k,period=300s";

fn parse_rate(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let (num, k) = match s.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1e3),
        None => match s.strip_suffix(['m', 'M']) {
            Some(n) => (n, 1e6),
            None => (s, 1.0),
        },
    };
    match num.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v * k),
        _ => Err(format!(
            "{s:?} is not a rate (ops/s, e.g. 500, 20k or 1.5m)"
        )),
    }
}

pub(crate) fn parse_secs(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{s:?} has no unit: write e.g. 500ms, 60s, 5m or 1h"))?;
    let (num, unit) = s.split_at(split);
    let k = match unit {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("{s:?}: the unit must be ms, s, m or h")),
    };
    match num.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v * k),
        _ => Err(format!("{s:?} is not a duration > 0 (e.g. 60s)")),
    }
}

/// `RATE/DUR` or, for the last phase, `RATE`.
fn split_dur(s: &str, last: bool) -> Result<(&str, f64), String> {
    match s.split_once('/') {
        Some((v, d)) => Ok((v, parse_secs(d)?)),
        None if last => Ok((s, f64::INFINITY)),
        None => Err(format!(
            "{s:?} has no duration (/60s): only the last phase may go without one"
        )),
    }
}

impl FromStr for RateProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let p = RateProfile::parse_phases(s, "rate profile", EXAMPLE)?;
        if p.peak() <= 0.0 {
            return Err(format!(
                "rate profile {s:?} offers no ops (every rate is 0); write e.g. {EXAMPLE}"
            ));
        }
        Ok(p)
    }
}

impl RateProfile {
    /// The phases written in `s`, whatever their value means (`noun` and `example` name
    /// it in errors: a rate profile's ops/s, a threads profile's threads).
    pub(crate) fn parse_phases(s: &str, noun: &str, example: &str) -> Result<Self, String> {
        // Phases are apart by commas, and so are a sine's fields: a piece without a
        // `kind:` belongs to the phase before it.
        let mut pieces: Vec<String> = Vec::new();
        for piece in s.split(',').map(str::trim) {
            let starts = ["ramp:", "hold:", "sine:"]
                .iter()
                .any(|k| piece.starts_with(k));
            match pieces.last_mut() {
                Some(p) if !starts && p.starts_with("sine:") => {
                    p.push(',');
                    p.push_str(piece);
                }
                _ => pieces.push(piece.to_string()),
            }
        }
        let n = pieces.len();
        let mut phases = Vec::with_capacity(n);
        for (i, piece) in pieces.iter().enumerate() {
            let last = i + 1 == n;
            let bad = |why: String| {
                format!(
                    "{noun} phase {} ({piece:?}): {why}; write e.g. {example}",
                    i + 1
                )
            };
            let (kind, rest) = piece
                .split_once(':')
                .ok_or_else(|| bad("no kind: start it with ramp:, hold: or sine:".into()))?;
            let phase = match kind {
                "hold" => {
                    let (r, secs) = split_dur(rest, last).map_err(bad)?;
                    Phase::Hold {
                        rate: parse_rate(r).map_err(bad)?,
                        secs,
                    }
                }
                "ramp" => {
                    let (r, secs) = rest
                        .split_once('/')
                        .ok_or_else(|| bad("a ramp needs its duration (/60s)".into()))?;
                    let secs = parse_secs(secs).map_err(bad)?;
                    let (a, b) = r
                        .split_once("..")
                        .ok_or_else(|| bad("write a ramp as FROM..TO/DURATION".into()))?;
                    let (from, to) = (parse_rate(a).map_err(bad)?, parse_rate(b).map_err(bad)?);
                    Phase::Ramp { from, to, secs }
                }
                "sine" => {
                    let (mut mean, mut amp, mut period, mut secs) = (None, None, None, None);
                    for field in rest.split(',') {
                        let (k, v) = field.split_once('=').ok_or_else(|| {
                            bad(format!(
                                "{field:?}: write NAME=VALUE (mean, amp, period, for)"
                            ))
                        })?;
                        match k.trim() {
                            "mean" => mean = Some(parse_rate(v).map_err(bad)?),
                            "amp" => amp = Some(parse_rate(v).map_err(bad)?),
                            "period" => period = Some(parse_secs(v).map_err(bad)?),
                            "for" => secs = Some(parse_secs(v).map_err(bad)?),
                            other => {
                                return Err(bad(format!(
                                    "a sine has mean, amp, period and for, not {other:?}"
                                )))
                            }
                        }
                    }
                    let (Some(mean), Some(amp), Some(period)) = (mean, amp, period) else {
                        return Err(bad("a sine needs mean=, amp= and period=".into()));
                    };
                    if amp > mean {
                        return Err(bad(format!(
                            "amp {amp} is above mean {mean}: the rate would go below zero"
                        )));
                    }
                    if mean == 0.0 {
                        return Err(bad("a sine's mean must be > 0".into()));
                    }
                    let secs = match secs {
                        Some(s) => s,
                        None if last => f64::INFINITY,
                        None => {
                            return Err(bad(
                                "only the last phase may go without a duration: add for=DUR".into(),
                            ))
                        }
                    };
                    Phase::Sine {
                        mean,
                        amp,
                        period,
                        secs,
                    }
                }
                other => {
                    return Err(bad(format!(
                        "{other:?} is not a phase: use ramp, hold or sine"
                    )))
                }
            };
            if let Phase::Ramp {
                from: 0.0, to: 0.0, ..
            } = phase
            {
                return Err(bad(
                    "a ramp from 0 to 0 offers nothing: use hold:0/DUR".into()
                ));
            }
            phases.push(phase);
        }
        Ok(RateProfile { phases })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> RateProfile {
        s.parse().unwrap()
    }

    #[test]
    fn parses_prints_and_refuses_with_the_phase_named() {
        let x = p("ramp:1k..20k/60s,hold:20k/2m,sine:mean=10k,amp=5k,period=300s");
        assert_eq!(x.phases().len(), 3);
        assert_eq!(
            x.to_string(),
            "ramp:1k..20k/60s,hold:20k/120s,sine:mean=10k,amp=5k,period=300s"
        );
        assert_eq!(p(&x.to_string()), x);
        assert_eq!(x.secs(), f64::INFINITY);
        assert_eq!(x.peak(), 20e3);
        let y = p("sine:mean=100,amp=50,period=10s,for=20s,hold:0/500ms,hold:2.5k");
        assert_eq!(y.phases().len(), 3);
        assert_eq!(p(&y.to_string()), y);
        for (bad, says) in [
            ("ramp:1k..2k", "duration"),
            ("hold:1k,hold:2k/10s", "only the last phase"),
            ("sine:mean=1k,amp=2k,period=10s", "below zero"),
            ("sine:mean=1k,period=10s", "amp="),
            ("sine:mean=1k,amp=1,period=1s,hold:1/1s", "for=DUR"),
            ("burst:1k/10s", "not a phase"),
            ("hold:fast/10s", "not a rate"),
            ("hold:1k/10", "no unit"),
            ("hold:0/10s", "offers no ops"),
            ("1k", "no kind"),
        ] {
            let e = bad.parse::<RateProfile>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        // The phase is named by its position.
        let e = "hold:1k/1s,ramp:1..x/1s"
            .parse::<RateProfile>()
            .unwrap_err();
        assert!(e.starts_with("rate profile phase 2"), "{e}");
    }

    #[test]
    fn the_integral_and_its_inverse_agree_everywhere() {
        for prof in [
            "ramp:1k..20k/60s,hold:20k/120s,sine:mean=10k,amp=5k,period=300s",
            "sine:mean=100,amp=100,period=10s,for=25s,hold:0/5s,ramp:0..1k/10s",
            "ramp:5k..1k/10s",
        ] {
            let x = p(prof);
            let mut last = 0.0;
            for i in 0..400 {
                let t = i as f64 * 0.9;
                let ops = x.ops_by(t);
                assert!(ops >= last - 1e-6, "{prof}: not monotone at {t}");
                last = ops;
                // Numerical integral of the rate over one step (a step across a phase
                // boundary where the rate jumps is off by at most the jump times h).
                let h = 0.9 / 1000.0;
                let num: f64 = (0..1000)
                    .map(|j| x.rate_at(t + (j as f64 + 0.5) * h) * h)
                    .sum();
                let exact = x.ops_by(t + 0.9) - ops;
                assert!(
                    (num - exact).abs() <= 1e-4 * exact.max(1.0) + x.peak() * h,
                    "{prof} at {t}: {num} vs {exact}"
                );
                if x.rate_at(t) > 0.0 {
                    let back = x.time_of(ops);
                    assert!(
                        (back - t).abs() < 1e-6,
                        "{prof}: time_of(ops_by({t})) = {back}"
                    );
                }
            }
        }
        // A profile whose rate ends at zero never reaches more than it offered.
        let x = p("ramp:10..0/10s");
        assert_eq!(x.ops_by(100.0), 50.0);
        assert!(x.time_of(51.0).is_infinite());
        assert!((x.time_of(50.0) - 10.0).abs() < 1e-6);
    }

    #[test]
    fn intervals_are_offered_their_mean_rate() {
        let x = p("hold:100/10s,ramp:100..300/10s");
        assert_eq!(x.mean_between(0.0, 10.0), 100.0);
        assert!((x.mean_between(10.0, 20.0) - 200.0).abs() < 1e-9);
        assert!((x.mean_between(5.0, 15.0) - 125.0).abs() < 1e-9);
        assert_eq!(x.rate_at(50.0), 300.0);
        let s = x.scaled(0.5);
        assert_eq!(s.to_string(), "hold:100/5s,ramp:100..300/5s");
    }
}
