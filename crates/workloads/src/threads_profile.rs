//! Load that changes by how many clients there are, not by their rate: a closed-loop
//! step whose active threads (a KV step's workers, a SQL step's connections) follow
//! phases over time, as sysbench users script by hand with runs at 1, 2, 4, … threads,
//! k6's ramping-vus and BenchBase's phases do. Where a rate profile asks "what latency
//! at this offered rate", a threads profile asks "what throughput and latency with this
//! many clients", second by second, without restarting the step (so the engine's
//! state, its caches and compaction debt, carry from one phase to the next).
//!
//! Written as a [`RateProfile`] whose value is a number of threads:
//! `hold:1/30s,ramp:1..8/80s,hold:4` — the active count at a time is the profile's
//! value rounded to the nearest whole thread (a ramp from 1 to 8 steps through every
//! count between). The step starts its peak of threads, each with its session set up
//! before the window opens; thread `i` runs ops while more than `i` are active and
//! sleeps otherwise, so an idle client costs nothing and adds no op.

use crate::rate_profile::RateProfile;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The most threads a profile may ask for (as `--threads`' own bound).
pub const MAX_THREADS: usize = 1024;

/// A profile to show in errors.
const EXAMPLE: &str = "hold:1/30s,ramp:1..8/80s,hold:4/30s";

/// How many threads run ops at each moment of a closed-loop step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ThreadsProfile {
    profile: RateProfile,
}

impl ThreadsProfile {
    /// The phases as a rate profile whose value is threads: what a report reads phase
    /// by phase.
    pub fn phases(&self) -> &RateProfile {
        &self.profile
    }

    /// Threads running ops `t` seconds after the window opened.
    pub fn active_at(&self, t: f64) -> usize {
        (self.profile.rate_at(t.max(0.0)) + 0.5).floor() as usize
    }

    /// Whether thread `index` runs ops `t` seconds after the window opened.
    pub fn runs(&self, index: usize, t: f64) -> bool {
        index < self.active_at(t)
    }

    /// The most threads it ever runs: how many the step starts.
    pub fn peak(&self) -> usize {
        (self.profile.peak() + 0.5).floor() as usize
    }

    /// The profile's length up to its last timed phase, seconds (infinite when the last
    /// phase has no duration, which then lasts to the step's end).
    pub fn secs(&self) -> f64 {
        self.profile.secs()
    }

    /// The mean of the active count between `t0` and `t1` seconds: what an interval
    /// ran with (a count that changed inside it shows as a fraction).
    pub fn mean_between(&self, t0: f64, t1: f64) -> f64 {
        if t1 <= t0 {
            return self.active_at(t0) as f64;
        }
        // The count is a step function of time; 1,000 points per interval place each
        // change within a thousandth of it.
        const N: usize = 1000;
        let dt = (t1 - t0) / N as f64;
        let sum: usize = (0..N)
            .map(|i| self.active_at(t0 + (i as f64 + 0.5) * dt))
            .sum();
        sum as f64 / N as f64
    }

    /// The same profile with every duration multiplied by `k` (a suite's `--scale`).
    pub fn scaled(&self, k: f64) -> ThreadsProfile {
        ThreadsProfile {
            profile: self.profile.scaled(k),
        }
    }
}

impl FromStr for ThreadsProfile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let profile = RateProfile::parse_phases(s, "threads profile", EXAMPLE)?;
        let t = ThreadsProfile { profile };
        let peak = t.peak();
        if peak == 0 {
            return Err(format!(
                "threads profile {s:?} never runs a thread (every phase rounds to 0); \
                 write e.g. {EXAMPLE}"
            ));
        }
        if peak > MAX_THREADS {
            return Err(format!(
                "threads profile {s:?} asks for {peak} threads, more than {MAX_THREADS}"
            ));
        }
        Ok(t)
    }
}

impl fmt::Display for ThreadsProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.profile, f)
    }
}

impl TryFrom<String> for ThreadsProfile {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<ThreadsProfile> for String {
    fn from(p: ThreadsProfile) -> String {
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_count_follows_the_phases_rounded_to_whole_threads() {
        let p: ThreadsProfile = "hold:1/10s,ramp:1..4/30s,hold:0/5s,hold:2".parse().unwrap();
        assert_eq!(p.peak(), 4);
        assert!(p.secs().is_infinite());
        assert_eq!(p.active_at(0.0), 1);
        assert_eq!(p.active_at(9.9), 1);
        // The ramp's value is 1 + t/10: rounded, 1 until 5 s into it, 2 until 15 s, …
        assert_eq!(p.active_at(14.9), 1);
        assert_eq!(p.active_at(15.1), 2);
        assert_eq!(p.active_at(25.1), 3);
        assert_eq!(p.active_at(35.1), 4);
        // A pause runs nothing; the untimed last phase holds to the end.
        assert_eq!(p.active_at(41.0), 0);
        assert_eq!(p.active_at(1e6), 2);
        assert!(p.runs(0, 0.0) && !p.runs(1, 0.0));
        assert!(p.runs(3, 39.0) && !p.runs(3, 34.0));
        // An interval across a change runs with a fraction.
        assert_eq!(p.mean_between(0.0, 1.0), 1.0);
        assert!((p.mean_between(14.5, 15.5) - 1.5).abs() < 0.01);
        // Written back as given, and through serde as text.
        let again: ThreadsProfile = p.to_string().parse().unwrap();
        assert_eq!(again, p);
    }

    #[test]
    fn a_profile_that_runs_no_thread_or_too_many_is_refused_with_the_reason() {
        let e = "hold:0/10s".parse::<ThreadsProfile>().unwrap_err();
        assert!(e.contains("never runs a thread"), "{e}");
        let e = "hold:1/10s,jump:3".parse::<ThreadsProfile>().unwrap_err();
        assert!(e.starts_with("threads profile phase 2 (\"jump:3\")"), "{e}");
        let e = "ramp:1..2k/10s".parse::<ThreadsProfile>().unwrap_err();
        assert!(e.contains("2000 threads, more than 1024"), "{e}");
        assert!("hold:x/1s".parse::<ThreadsProfile>().is_err());
    }
}
