//! Faults injected inside a measured step (`--fault`): when, and what. A fault is
//! measured by what the step's clients see through it, so its plan is part of the
//! workload: the same faults at the same moments make two runs (two versions of a
//! server) comparable. What a fault does to a server or an engine is its family's;
//! this is only the schedule, parsed and checked.

use crate::rate_profile::parse_secs;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a fault does to the system under test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum FaultKind {
    /// Every process of the server (or the engine) killed with SIGKILL, then started
    /// again on its data: crash recovery.
    Kill,
    /// A clean shutdown (PostgreSQL's fast shutdown, MariaDB's shutdown), then a start:
    /// what a planned restart (an upgrade, a config change) costs.
    Restart,
    /// Every process of the server stopped with SIGSTOP for `secs`, then continued: a
    /// hung server (a long GC pause, a VM frozen by its host) that drops no connection.
    Sigstop {
        /// How long it is stopped.
        secs: f64,
    },
    /// The server's device stops completing writes for `secs`.
    DiskStall {
        /// How long the device stalls.
        secs: f64,
    },
}

impl FaultKind {
    /// Its name as `kind=` writes it, without the duration.
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Kill => "kill",
            FaultKind::Restart => "restart",
            FaultKind::Sigstop { .. } => "sigstop",
            FaultKind::DiskStall { .. } => "disk-stall",
        }
    }

    fn parse(s: &str) -> Result<FaultKind, String> {
        let (name, dur) = match s.split_once(':') {
            Some((n, d)) => (n, Some(d)),
            None => (s, None),
        };
        let secs = |d: Option<&str>| -> Result<f64, String> {
            let d = d.ok_or_else(|| format!("kind={name} needs its duration: kind={name}:5s"))?;
            parse_secs(d).map_err(|e| format!("kind={s}: {e}"))
        };
        let no_dur = |k: FaultKind| match dur {
            Some(_) => Err(format!("kind={s}: {name} takes no duration")),
            None => Ok(k),
        };
        match name {
            "kill" => no_dur(FaultKind::Kill),
            "restart" => no_dur(FaultKind::Restart),
            "sigstop" => Ok(FaultKind::Sigstop { secs: secs(dur)? }),
            "disk-stall" => Ok(FaultKind::DiskStall { secs: secs(dur)? }),
            _ => Err(format!(
                "kind={s:?}: use kill, restart, sigstop:DUR or disk-stall:DUR"
            )),
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::Sigstop { secs } | FaultKind::DiskStall { secs } => {
                write!(f, "{}:{}", self.name(), fmt_secs(*secs))
            }
            _ => f.write_str(self.name()),
        }
    }
}

/// One `--fault`: a kind at one moment, or every so often.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    /// What it does.
    pub kind: FaultKind,
    /// When, seconds into the measured window (with `every`: the first one; default
    /// one period in).
    pub at: f64,
    /// Again this many seconds after each one.
    pub every: Option<f64>,
    /// At most this many times (with `every`; default: until the window ends).
    pub count: Option<u32>,
}

const EXAMPLE: &str = "at=30s,kind=kill or every=20s,kind=restart,count=3";

impl std::str::FromStr for FaultSpec {
    type Err = String;

    /// `at=30s,kind=kill`, `every=20s,kind=sigstop:5s[,at=10s][,count=3]`.
    fn from_str(s: &str) -> Result<FaultSpec, String> {
        let (mut kind, mut at, mut every, mut count) = (None, None, None, None);
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!("fault {s:?}: {part:?} is not key=value; write e.g. {EXAMPLE}")
            })?;
            match k.trim() {
                "kind" => kind = Some(FaultKind::parse(v.trim())?),
                "at" => at = Some(parse_at(v)?),
                "every" => every = Some(parse_secs(v).map_err(|e| format!("every={v}: {e}"))?),
                "count" => {
                    count = Some(
                        v.trim()
                            .parse::<u32>()
                            .ok()
                            .filter(|&n| n > 0)
                            .ok_or_else(|| format!("count={v}: give a whole number > 0"))?,
                    )
                }
                other => {
                    return Err(format!(
                        "fault {s:?}: unknown key {other:?} (at, every, count, kind); write e.g. {EXAMPLE}"
                    ))
                }
            }
        }
        let kind = kind.ok_or_else(|| format!("fault {s:?} has no kind=; write e.g. {EXAMPLE}"))?;
        if count.is_some() && every.is_none() {
            return Err(format!("fault {s:?}: count= needs every="));
        }
        let at = match (at, every) {
            (Some(a), _) => a,
            (None, Some(e)) => e,
            (None, None) => {
                return Err(format!(
                    "fault {s:?} has neither at= nor every=; write e.g. {EXAMPLE}"
                ))
            }
        };
        Ok(FaultSpec {
            kind,
            at,
            every,
            count,
        })
    }
}

/// `at=` may be 0 (a fault as the window opens), unlike a duration.
fn parse_at(v: &str) -> Result<f64, String> {
    if v.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" {
        return Ok(0.0);
    }
    parse_secs(v).map_err(|e| format!("at={v}: {e}"))
}

impl fmt::Display for FaultSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.every {
            Some(e) => {
                write!(f, "every={},at={}", fmt_secs(e), fmt_secs(self.at))?;
                if let Some(n) = self.count {
                    write!(f, ",count={n}")?;
                }
            }
            None => write!(f, "at={}", fmt_secs(self.at))?,
        }
        write!(f, ",kind={}", self.kind)
    }
}

fn fmt_secs(s: f64) -> String {
    if s > 0.0 && s < 1.0 {
        format!("{}ms", s * 1e3)
    } else {
        format!("{s}s")
    }
}

/// One fault as it is due: its kind, seconds into the measured window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Due {
    /// Seconds into the measured window.
    pub at: f64,
    /// What it does.
    pub kind: FaultKind,
}

/// A step's faults (every `--fault` of it) and how the clients judge an op during them.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// As written.
    pub specs: Vec<FaultSpec>,
    /// An op whose service time exceeds this counts as failed (`--fault-timeout`): a
    /// hung server fails no op, it only makes them slow.
    pub timeout: f64,
}

/// The timeout an op may take before it counts as part of an outage, when none is given.
pub const DEFAULT_TIMEOUT_S: f64 = 1.0;

impl FaultPlan {
    /// The plan of `--fault` texts and `--fault-timeout`; `None` without faults.
    pub fn parse(texts: &[String], timeout: Option<&str>) -> Result<Option<FaultPlan>, String> {
        let timeout = match timeout {
            Some(t) => parse_secs(t).map_err(|e| format!("fault timeout {t:?}: {e}"))?,
            None => DEFAULT_TIMEOUT_S,
        };
        if texts.is_empty() {
            return Ok(None);
        }
        let specs = texts
            .iter()
            .map(|t| t.parse::<FaultSpec>())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(FaultPlan { specs, timeout }))
    }

    /// Every fault due within a window of `secs`, in time order. Two faults closer
    /// than a second are refused: the second would land inside the first one's
    /// recovery and neither could be measured.
    pub fn schedule(&self, secs: f64) -> Result<Vec<Due>, String> {
        let mut due = Vec::new();
        for s in &self.specs {
            let mut t = s.at;
            let mut n = 0u32;
            while t < secs && s.count.is_none_or(|c| n < c) {
                due.push(Due {
                    at: t,
                    kind: s.kind,
                });
                n += 1;
                match s.every {
                    Some(e) => t += e,
                    None => break,
                }
            }
        }
        due.sort_by(|a, b| a.at.total_cmp(&b.at));
        if due.is_empty() {
            return Err(format!(
                "no fault falls inside the {secs} s window ({}): give at= below the step's duration",
                self.specs.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
            ));
        }
        if let Some(w) = due.windows(2).find(|w| w[1].at - w[0].at < 1.0) {
            return Err(format!(
                "faults at {} s and {} s are less than a second apart: space them so each recovers",
                w[0].at, w[1].at
            ));
        }
        Ok(due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_at_every_and_kinds() {
        let f: FaultSpec = "at=30s,kind=kill".parse().unwrap();
        assert_eq!(f.kind, FaultKind::Kill);
        assert_eq!(f.at, 30.0);
        let g: FaultSpec = "every=20s,kind=sigstop:5s,count=2".parse().unwrap();
        assert_eq!(g.kind, FaultKind::Sigstop { secs: 5.0 });
        assert_eq!((g.at, g.every, g.count), (20.0, Some(20.0), Some(2)));
        let h: FaultSpec = "kind=disk-stall:500ms,at=0".parse().unwrap();
        assert_eq!(h.kind, FaultKind::DiskStall { secs: 0.5 });
        assert_eq!(h.at, 0.0);
        // Written back as it parses.
        for s in [f, g, h] {
            assert_eq!(s.to_string().parse::<FaultSpec>().unwrap(), s);
        }
    }

    #[test]
    fn bad_faults_say_what_to_write() {
        for (bad, says) in [
            ("at=30s", "no kind"),
            ("kind=kill", "neither at= nor every="),
            ("at=30s,kind=explode", "use kill, restart"),
            ("at=30s,kind=sigstop", "needs its duration"),
            ("at=30s,kind=kill:5s", "takes no duration"),
            ("at=30,kind=kill", "no unit"),
            ("at=30s,kind=kill,count=2", "count= needs every="),
            ("at=30s,kind=kill,when=now", "unknown key"),
            ("every=10s,kind=kill,count=0", "whole number > 0"),
        ] {
            let e = bad.parse::<FaultSpec>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn schedules_in_order_within_the_window() {
        let plan = FaultPlan::parse(
            &["every=20s,kind=restart".into(), "at=30s,kind=kill".into()],
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(plan.timeout, DEFAULT_TIMEOUT_S);
        let due = plan.schedule(65.0).unwrap();
        let at: Vec<f64> = due.iter().map(|d| d.at).collect();
        assert_eq!(at, [20.0, 30.0, 40.0, 60.0]);
        assert_eq!(due[1].kind, FaultKind::Kill);
        assert!(plan
            .schedule(10.0)
            .unwrap_err()
            .contains("inside the 10 s window"));
        let close = FaultPlan::parse(
            &["at=5s,kind=kill".into(), "at=5.5s,kind=restart".into()],
            Some("2s"),
        )
        .unwrap()
        .unwrap();
        assert_eq!(close.timeout, 2.0);
        assert!(close
            .schedule(60.0)
            .unwrap_err()
            .contains("less than a second apart"));
        assert_eq!(FaultPlan::parse(&[], None).unwrap(), None);
    }
}
