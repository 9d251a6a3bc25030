//! The insert benchmark's steps, with the names its users know (l.i0, l.x, l.i1, l.i2,
//! qr100 … qp1000) and the default sequence. What each step sends lives with its
//! runner in `plumb-ibench`; this is the part the store and the reports need.

use serde::{Deserialize, Serialize};

/// What an insert-benchmark step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IbKind {
    /// l.i0: create the table and load it in key order, without secondary indexes.
    Load,
    /// l.x: create the three secondary indexes.
    Index,
    /// l.i1, l.i2: inserts as fast as they go, with the indexes, N rows per commit.
    Insert,
    /// Pay the write debt (vacuum, flush, compaction) before the query steps: unmeasured.
    Debt,
    /// qrN: range queries on a secondary index while each client inserts N rows/s.
    RangeQueries,
    /// qpN: point queries (10 random primary keys) while each client inserts N rows/s.
    PointQueries,
}

const IB_KINDS: &[(IbKind, &str)] = &[
    (IbKind::Load, "ib.load"),
    (IbKind::Index, "ib.index"),
    (IbKind::Insert, "ib.insert"),
    (IbKind::Debt, "ib.debt"),
    (IbKind::RangeQueries, "ib.qr"),
    (IbKind::PointQueries, "ib.qp"),
];

impl IbKind {
    /// The stored kind name (the step's own name, e.g. qr500, says the rate).
    pub fn name(self) -> &'static str {
        IB_KINDS
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// Every kind, for tests and listings.
    pub fn all() -> impl Iterator<Item = IbKind> {
        IB_KINDS.iter().map(|(k, _)| *k)
    }

    /// Reads a stored kind name back.
    pub fn from_name(s: &str) -> Option<IbKind> {
        IB_KINDS.iter().find(|(_, n)| *n == s).map(|(k, _)| *k)
    }

    /// Whether the step's inserts are held to a rate (the 95% rule applies).
    pub fn rate_limited(self) -> bool {
        matches!(self, IbKind::RangeQueries | IbKind::PointQueries)
    }
}

/// A step list the user got wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--steps: {given:?}: {why}")]
pub struct BadIbStep {
    /// What was written.
    pub given: String,
    /// What is wrong and what to write instead.
    pub why: String,
}

/// Rows per commit in the query steps' background inserts (as the published scripts).
pub const QUERY_STEP_ROWS_PER_COMMIT: u32 = 50;

/// One planned step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IbStepPlan {
    /// Its name: l.i0, l.x, l.i1, l.i2, reduce-debt, qr100, qp500, …
    pub name: String,
    /// What it does.
    pub kind: IbKind,
    /// Rows per insert commit (0 where nothing is inserted).
    pub rows_per_commit: u32,
    /// Inserted rows per second per client; 0 is as fast as it goes.
    pub rate: u32,
}

impl IbStepPlan {
    /// Reads one step name: l.i0, l.x, l.i1, l.i2, reduce-debt, qrN or qpN (N rows/s
    /// per client, at least 1).
    pub fn parse(name: &str) -> Result<IbStepPlan, BadIbStep> {
        let plan = |kind, rows_per_commit, rate| IbStepPlan {
            name: name.to_string(),
            kind,
            rows_per_commit,
            rate,
        };
        Ok(match name {
            "l.i0" => plan(IbKind::Load, 100, 0),
            "l.x" => plan(IbKind::Index, 0, 0),
            "l.i1" => plan(IbKind::Insert, 50, 0),
            "l.i2" => plan(IbKind::Insert, 5, 0),
            "reduce-debt" => plan(IbKind::Debt, 0, 0),
            _ => {
                let (kind, rest) = if let Some(r) = name.strip_prefix("qr") {
                    (IbKind::RangeQueries, r)
                } else if let Some(r) = name.strip_prefix("qp") {
                    (IbKind::PointQueries, r)
                } else {
                    return Err(BadIbStep {
                        given: name.to_string(),
                        why: "unknown step; known: l.i0, l.x, l.i1, l.i2, reduce-debt, qrN, qpN (N inserted \
                                rows/s per client, e.g. qr100)"
                            .into(),
                    });
                };
                let rate: u32 = rest
                    .parse()
                    .ok()
                    .filter(|r| *r > 0)
                    .ok_or_else(|| BadIbStep {
                        given: name.to_string(),
                        why: format!(
                            "{}N with N a whole number of rows/s ≥ 1, e.g. {}100",
                            &name[..2],
                            &name[..2]
                        ),
                    })?;
                plan(kind, QUERY_STEP_ROWS_PER_COMMIT, rate)
            }
        })
    }
}

/// The published sequence: load, index, inserts with 50 then 5 rows per commit, the
/// write-debt step, then range and point queries at 100, 500 and 1000 inserts/s.
pub fn default_order() -> Vec<IbStepPlan> {
    parse_steps("l.i0,l.x,l.i1,l.i2,reduce-debt,qr100,qp100,qr500,qp500,qr1000,qp1000")
        .expect("the default order parses")
}

/// Reads a comma-separated list of steps; a name given twice is refused (steps are
/// told apart by name in reports).
pub fn parse_steps(list: &str) -> Result<Vec<IbStepPlan>, BadIbStep> {
    let mut out: Vec<IbStepPlan> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let p = IbStepPlan::parse(name)?;
        if out.iter().any(|o| o.name == p.name) {
            return Err(BadIbStep {
                given: name.to_string(),
                why: "named twice; each step runs once per run".into(),
            });
        }
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_their_plans() {
        let d = default_order();
        assert_eq!(d.len(), 11);
        assert_eq!(d[0].kind, IbKind::Load);
        assert_eq!((d[2].rows_per_commit, d[3].rows_per_commit), (50, 5));
        assert_eq!(d[4].kind, IbKind::Debt);
        let q = IbStepPlan::parse("qp500").unwrap();
        assert_eq!((q.kind, q.rate), (IbKind::PointQueries, 500));
        assert!(q.kind.rate_limited());
        for bad in ["qr0", "qr", "qrx", "l.i3", "insert"] {
            assert!(IbStepPlan::parse(bad).is_err(), "{bad}");
        }
        assert!(parse_steps("l.i0,l.i0").is_err());
        for k in IbKind::all() {
            assert_eq!(IbKind::from_name(k.name()), Some(k));
        }
    }
}
