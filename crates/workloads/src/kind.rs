//! The kind of any stored step, whichever family measured it: a db_bench step on an
//! engine, a hardware probe's pattern or a SQL microbenchmark on a server. The store keeps it as its name and reads it
//! back typed, so reports decide on the enum (is it maintenance? a probe?) and never
//! on a string.

use crate::ibench::IbKind;
use crate::sql::SqlKind;
use crate::steps::StepKind;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a hardware probe step measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    /// Memory bandwidth: the STREAM triad.
    Triad,
    /// Memory latency: a dependent pointer chase.
    Chase,
    /// CPU-bound op rate.
    CpuOps,
    /// Sequential reads of the probe file.
    SeqRead,
    /// Sequential writes of the probe file.
    SeqWrite,
    /// Random reads at a jobs × depth point.
    RandRead,
    /// Random writes at a jobs × depth point.
    RandWrite,
    /// Small writes each followed by fdatasync (the commit rate).
    Commit,
}

const PROBES: [(ProbeKind, &str); 8] = [
    (ProbeKind::Triad, "triad"),
    (ProbeKind::Chase, "chase"),
    (ProbeKind::CpuOps, "cpuops"),
    (ProbeKind::SeqRead, "seqread"),
    (ProbeKind::SeqWrite, "seqwrite"),
    (ProbeKind::RandRead, "randread"),
    (ProbeKind::RandWrite, "randwrite"),
    (ProbeKind::Commit, "commit"),
];

impl ProbeKind {
    /// The stored name.
    pub fn name(self) -> &'static str {
        PROBES
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }
}

/// The kind of a stored step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A db_bench step.
    Kv(StepKind),
    /// A hardware probe step.
    Probe(ProbeKind),
    /// A SQL microbenchmark on a database server.
    Sql(SqlKind),
    /// An insert-benchmark step (on a server or an embedded engine).
    Ib(IbKind),
    /// A durability step: one mode and kind of cut, its trials of writers killed and
    /// every acknowledged write checked.
    Durability,
}

/// The stored name of a durability step's kind.
const DURABILITY: &str = "durability";

impl Kind {
    /// The stored name (db_bench's name for KV steps).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Kv(k) => k.name(),
            Kind::Probe(p) => p.name(),
            Kind::Sql(q) => q.stored_kind(),
            Kind::Ib(i) => i.name(),
            Kind::Durability => DURABILITY,
        }
    }

    /// Unmeasured work between measured steps (flush, compaction): no rates to report.
    pub fn is_maintenance(self) -> bool {
        matches!(self, Kind::Kv(k) if k.is_maintenance()) || self == Kind::Ib(IbKind::Debt)
    }
}

impl From<StepKind> for Kind {
    fn from(k: StepKind) -> Self {
        Kind::Kv(k)
    }
}

impl From<SqlKind> for Kind {
    fn from(k: SqlKind) -> Self {
        Kind::Sql(k)
    }
}

impl From<ProbeKind> for Kind {
    fn from(k: ProbeKind) -> Self {
        Kind::Probe(k)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A stored kind this plumb does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown step kind `{0}`")]
pub struct UnknownKind(pub String);

impl FromStr for Kind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(k) = s.parse::<StepKind>() {
            return Ok(Kind::Kv(k));
        }
        if let Some(q) = SqlKind::all().find(|q| q.stored_kind() == s) {
            return Ok(Kind::Sql(q));
        }
        if let Some(i) = IbKind::from_name(s) {
            return Ok(Kind::Ib(i));
        }
        if s == DURABILITY {
            return Ok(Kind::Durability);
        }
        PROBES
            .iter()
            .find(|(_, n)| *n == s)
            .map(|(k, _)| Kind::Probe(*k))
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

/// Stored and exported as its name, as in the store's `kind` column.
impl Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_kind_and_no_name_is_shared() {
        let mut names = std::collections::HashSet::new();
        let kv = crate::steps::known_steps();
        let kinds = kv
            .split(',')
            .map(|n| Kind::Kv(n.parse().unwrap()))
            .chain(PROBES.iter().map(|(p, _)| Kind::Probe(*p)))
            .chain(SqlKind::all().map(Kind::Sql))
            .chain(IbKind::all().map(Kind::Ib))
            .chain([Kind::Durability]);
        for k in kinds {
            assert!(names.insert(k.name()), "{} named twice", k.name());
            assert_eq!(k.name().parse::<Kind>(), Ok(k));
        }
        assert_eq!(
            "compact".parse::<Kind>().map(Kind::is_maintenance),
            Ok(true)
        );
        assert_eq!("triad".parse::<Kind>().map(Kind::is_maintenance), Ok(false));
        assert!("readrandom2".parse::<Kind>().is_err());
    }
}
