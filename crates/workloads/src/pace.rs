//! Open-loop load: the rate a step is offered, how its arrivals are spaced, and the
//! latency bound a rate search keeps. Closed-loop clients send less when the database
//! slows down, so a stall hides itself (coordinated omission); users of db_bench (RocksDB
//! issue 9478), YCSB (731, 425) and sysbench (216, 408) ask for a fixed arrival rate
//! instead, with each op timed from when it was due.

use crate::rate_profile::RateProfile;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the arrivals of an open-loop step are spaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Evenly, one every 1/rate: the schedule of YCSB's `-target` and db_bench's rate
    /// limiter, the one that shows queueing only once the rate passes capacity.
    #[default]
    Constant,
    /// A Poisson process (exponential gaps with mean 1/rate): independent users, whose
    /// bursts queue even below capacity.
    Poisson,
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arrivals::Constant => "constant",
            Arrivals::Poisson => "poisson",
        })
    }
}

impl FromStr for Arrivals {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "constant" => Ok(Arrivals::Constant),
            "poisson" => Ok(Arrivals::Poisson),
            _ => Err(format!("{s:?}: use constant or poisson")),
        }
    }
}

/// The load a step is offered: `ops_per_sec` in total across its threads, or a rate
/// that changes over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pace {
    /// Ops per second offered, in total; each thread gets an equal share. With a
    /// profile: its peak (what a step must be able to serve).
    pub ops_per_sec: f64,
    /// How they are spaced.
    pub arrivals: Arrivals,
    /// The rate over time from the measured window's start, when it changes; each
    /// thread gets an equal share of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<RateProfile>,
}

impl Pace {
    /// A constant rate.
    pub fn constant(ops_per_sec: f64, arrivals: Arrivals) -> Pace {
        Pace {
            ops_per_sec,
            arrivals,
            profile: None,
        }
    }

    /// A rate that follows `profile`.
    pub fn profiled(profile: RateProfile, arrivals: Arrivals) -> Pace {
        Pace {
            ops_per_sec: profile.peak(),
            arrivals,
            profile: Some(profile),
        }
    }

    /// The mean rate offered between `t0` and `t1` seconds into the window.
    pub fn offered_between(&self, t0: f64, t1: f64) -> f64 {
        match &self.profile {
            Some(p) => p.mean_between(t0, t1),
            None => self.ops_per_sec,
        }
    }
}

/// A latency bound a rate search must keep: quantile `q` of the response time (from
/// each op's intended start) at most `max_us`. Written `p99:2ms`, `p99.9:500us`,
/// `p50:1s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyBound {
    /// The quantile, in (0, 1): 0.99 for p99.
    pub quantile: f64,
    /// The most it may be, µs.
    pub max_us: f64,
}

impl fmt::Display for LatencyBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.quantile * 100.0;
        let us = self.max_us;
        if us >= 1e6 && (us / 1e6).fract() == 0.0 {
            write!(f, "p{p}:{}s", us / 1e6)
        } else if us >= 1e3 && (us / 1e3).fract() == 0.0 {
            write!(f, "p{p}:{}ms", us / 1e3)
        } else {
            write!(f, "p{p}:{us}us")
        }
    }
}

impl FromStr for LatencyBound {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| format!("{s:?}: {why}; write e.g. p99:2ms, p99.9:500us or p50:1s");
        let (q, limit) = s
            .split_once(':')
            .ok_or_else(|| bad("no ':' between the quantile and the bound"))?;
        let p: f64 = q
            .strip_prefix('p')
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| bad("the quantile is not pNN"))?;
        if !(p > 0.0 && p < 100.0) {
            return Err(bad("the quantile must be between p0 and p100, exclusive"));
        }
        let split = limit
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| bad("the bound has no unit (us, ms or s)"))?;
        let (num, unit) = limit.split_at(split);
        let v: f64 = num.parse().map_err(|_| bad("the bound is not a number"))?;
        let scale = match unit {
            "us" | "µs" => 1.0,
            "ms" => 1e3,
            "s" => 1e6,
            _ => return Err(bad("the bound's unit must be us, ms or s")),
        };
        if !(v > 0.0 && v.is_finite()) {
            return Err(bad("the bound must be > 0"));
        }
        Ok(LatencyBound {
            quantile: p / 100.0,
            max_us: v * scale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_print_and_refuse_clearly() {
        let b: LatencyBound = "p99:2ms".parse().unwrap();
        assert_eq!((b.quantile, b.max_us), (0.99, 2000.0));
        assert_eq!(b.to_string(), "p99:2ms");
        let b: LatencyBound = "p99.9:500us".parse().unwrap();
        assert!((b.quantile - 0.999).abs() < 1e-12 && b.max_us == 500.0);
        assert_eq!("p50:1s".parse::<LatencyBound>().unwrap().max_us, 1e6);
        for bad in [
            "99:2ms", "p99", "p100:1ms", "p99:2", "p99:2h", "p99:-1ms", "p99:0ms",
        ] {
            let e = bad.parse::<LatencyBound>().unwrap_err();
            assert!(e.contains("p99:2ms"), "{bad}: {e}");
        }
        assert_eq!("poisson".parse::<Arrivals>(), Ok(Arrivals::Poisson));
        assert!("bursty".parse::<Arrivals>().is_err());
    }
}
