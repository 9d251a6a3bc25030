//! Step kinds with db_bench's names, and the named sequences plumb can run.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// A workload definition the user got wrong; every message names the option.
#[derive(Debug, Error, PartialEq)]
pub enum WorkloadError {
    /// `--benchmarks` named a step plumb does not know.
    #[error("--benchmarks: unknown step {given:?}; known steps: {known}")]
    UnknownStep {
        /// What was written.
        given: String,
        /// Every valid name, comma-separated.
        known: String,
    },
    /// `--workload` named a sequence plumb does not know.
    #[error("--workload: unknown workload {given:?}; known workloads: default, x3")]
    UnknownWorkload {
        /// What was written.
        given: String,
    },
    /// `--benchmarks` was empty.
    #[error("--benchmarks: no steps given; name at least one, e.g. fillseq,readrandom")]
    NoSteps,
    /// `--distribution` could not be used.
    #[error("--distribution {given:?}: {why}")]
    Distribution {
        /// What was written.
        given: String,
        /// Why it cannot be used.
        why: String,
    },
}

/// One kind of step, named as db_bench names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Keys 0..num in order, WAL off (db_bench's fillseq as benchmark.sh runs it).
    FillSeq,
    /// num writes of uniformly random keys (some keys twice, some never).
    FillRandom,
    /// Every key exactly once in random order (a bijective permutation of 0..num).
    FillUniqueRandom,
    /// Random writes to keys that exist.
    Overwrite,
    /// Point reads.
    ReadRandom,
    /// Batched point reads (db_bench's --batch_size, 16 here), one op per batch.
    MultiReadRandom,
    /// A full forward scan in key order (db_bench's readseq): warms the block cache
    /// and measures sequential iteration; every entry is an op.
    ReadSeq,
    /// Seek then `seek_nexts` next() calls.
    FwdRange,
    /// Seek then `seek_nexts` prev() calls.
    RevRange,
    /// Point reads beside one rate-limited writer.
    ReadWhileWriting,
    /// Forward ranges beside one rate-limited writer.
    FwdRangeWhileWriting,
    /// Reverse ranges beside one rate-limited writer.
    RevRangeWhileWriting,
    /// Random deletes.
    DeleteRandom,
    /// Maintenance: flush memtables (unmeasured).
    Flush,
    /// Maintenance: wait until compaction is done (unmeasured).
    WaitForCompaction,
    /// Maintenance: compact everything (unmeasured).
    Compact,
    /// Maintenance: compact L0 into the next level with data (db_bench's compact0).
    Compact0,
    /// Maintenance: compact the first level below L0 into the next (db_bench's compact1).
    Compact1,
    /// Maintenance: flush the memtable, wait, compact L0, wait (benchmark.sh's
    /// flush_mt_l0), so the next step measures the LSM with memtable and L0 empty.
    #[serde(rename = "flush_mt_l0")]
    FlushMtL0,
    /// YCSB's load phase: --num records, keys `user` + FNV hash of 0..num as YCSB
    /// orders them, each record YCSB's fields serialized as its RocksDB binding does.
    #[serde(rename = "ycsb-load")]
    YcsbLoad,
    /// YCSB workload A: 50% reads, 50% updates, zipfian.
    #[serde(rename = "ycsb-a")]
    YcsbA,
    /// YCSB workload B: 95% reads, 5% updates, zipfian.
    #[serde(rename = "ycsb-b")]
    YcsbB,
    /// YCSB workload C: reads only, zipfian.
    #[serde(rename = "ycsb-c")]
    YcsbC,
    /// YCSB workload D: 95% reads of the latest records, 5% inserts.
    #[serde(rename = "ycsb-d")]
    YcsbD,
    /// YCSB workload E: 95% short scans, 5% inserts.
    #[serde(rename = "ycsb-e")]
    YcsbE,
    /// YCSB workload F: 50% reads, 50% read-modify-writes, zipfian.
    #[serde(rename = "ycsb-f")]
    YcsbF,
    /// The user's own op mix, from a mix file (`--mix FILE`, see [`crate::mix`]).
    Mix,
    /// db_bench's mixgraph: its op mix and key, value-size and scan-length
    /// distributions, with db_bench's parameter names and defaults (`--mixgraph`).
    MixGraph,
}

const ALL: [(StepKind, &str); 28] = [
    (StepKind::FillSeq, "fillseq"),
    (StepKind::FillRandom, "fillrandom"),
    (StepKind::FillUniqueRandom, "filluniquerandom"),
    (StepKind::Overwrite, "overwrite"),
    (StepKind::ReadRandom, "readrandom"),
    (StepKind::MultiReadRandom, "multireadrandom"),
    (StepKind::ReadSeq, "readseq"),
    (StepKind::FwdRange, "fwdrange"),
    (StepKind::RevRange, "revrange"),
    (StepKind::ReadWhileWriting, "readwhilewriting"),
    (StepKind::FwdRangeWhileWriting, "fwdrangewhilewriting"),
    (StepKind::RevRangeWhileWriting, "revrangewhilewriting"),
    (StepKind::DeleteRandom, "deleterandom"),
    (StepKind::Flush, "flush"),
    (StepKind::WaitForCompaction, "waitforcompaction"),
    (StepKind::Compact, "compact"),
    (StepKind::Compact0, "compact0"),
    (StepKind::Compact1, "compact1"),
    (StepKind::FlushMtL0, "flush_mt_l0"),
    (StepKind::YcsbLoad, "ycsb-load"),
    (StepKind::YcsbA, "ycsb-a"),
    (StepKind::YcsbB, "ycsb-b"),
    (StepKind::YcsbC, "ycsb-c"),
    (StepKind::YcsbD, "ycsb-d"),
    (StepKind::YcsbE, "ycsb-e"),
    (StepKind::YcsbF, "ycsb-f"),
    (StepKind::Mix, "mix"),
    (StepKind::MixGraph, "mixgraph"),
];

impl StepKind {
    /// The db_bench name.
    pub fn name(self) -> &'static str {
        ALL.iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }
    /// Loads keys: its op quota is --num, split among threads.
    pub fn is_fill(self) -> bool {
        matches!(
            self,
            StepKind::FillSeq
                | StepKind::FillRandom
                | StepKind::FillUniqueRandom
                | StepKind::YcsbLoad
        )
    }

    /// One of YCSB's phases (`ycsb-load`, `ycsb-a` … `ycsb-f`): its own keys and
    /// records, YCSB's generators.
    pub fn is_ycsb(self) -> bool {
        self == StepKind::YcsbLoad || self.ycsb_letter().is_some()
    }

    /// The core workload letter of a YCSB run phase.
    pub fn ycsb_letter(self) -> Option<char> {
        Some(match self {
            StepKind::YcsbA => 'a',
            StepKind::YcsbB => 'b',
            StepKind::YcsbC => 'c',
            StepKind::YcsbD => 'd',
            StepKind::YcsbE => 'e',
            StepKind::YcsbF => 'f',
            _ => return None,
        })
    }
    /// Always covers its whole key space, whatever --duration says, as db_bench does
    /// (its DoWrite applies --duration only to random writes, and readseq ignores it):
    /// a load that stops early leaves a smaller database than --num says, and a
    /// readseq that stops early leaves part of the block cache cold for the reads after.
    pub fn full_pass(self) -> bool {
        matches!(
            self,
            StepKind::FillSeq | StepKind::FillUniqueRandom | StepKind::ReadSeq | StepKind::YcsbLoad
        )
    }
    /// Unmeasured maintenance.
    pub fn is_maintenance(self) -> bool {
        matches!(
            self,
            StepKind::Flush
                | StepKind::WaitForCompaction
                | StepKind::Compact
                | StepKind::Compact0
                | StepKind::Compact1
                | StepKind::FlushMtL0
        )
    }
    /// Readers beside one rate-limited writer.
    pub fn while_writing(self) -> bool {
        matches!(
            self,
            StepKind::ReadWhileWriting
                | StepKind::FwdRangeWhileWriting
                | StepKind::RevRangeWhileWriting
        )
    }
    /// Its measured ops write user bytes (key + value) or delete keys (a mix may).
    pub fn writes(self) -> bool {
        self.is_fill()
            || matches!(
                self,
                StepKind::Overwrite | StepKind::DeleteRandom | StepKind::Mix | StepKind::MixGraph
            )
    }

    /// An op mix ([`crate::mix`]): `mix` from a file, `mixgraph` db_bench's.
    pub fn is_mix(self) -> bool {
        matches!(self, StepKind::Mix | StepKind::MixGraph)
    }
    /// Its measured ops read back values that can be verified.
    pub fn reads(self) -> bool {
        !self.writes() && !self.is_maintenance()
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StepKind {
    type Err = WorkloadError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL.iter()
            .find(|(_, n)| *n == s)
            .map(|(k, _)| *k)
            .ok_or_else(|| WorkloadError::UnknownStep {
                given: s.to_string(),
                known: known_steps(),
            })
    }
}

/// One step of a sequence: its kind, the name it is stored under, and an op quota
/// that overrides the run's when the sequence says so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepPlan {
    /// What the step does.
    pub kind: StepKind,
    /// The name shown and stored (the kind's name unless the sequence labels it).
    pub name: String,
    /// Ops as a fraction of --num (e.g. overwrite of 10% of the keys), if fixed.
    pub ops_fraction_of_num: Option<f64>,
}

impl StepPlan {
    /// A step of `kind` under its own name.
    pub fn of(kind: StepKind) -> Self {
        StepPlan {
            kind,
            name: kind.name().to_string(),
            ops_fraction_of_num: None,
        }
    }
    fn labelled(kind: StepKind, name: &str) -> Self {
        StepPlan {
            name: name.to_string(),
            ..StepPlan::of(kind)
        }
    }
}

/// The names of the steps [`settle_before_reads`] inserts.
pub const SETTLE_STEPS: [&str; 2] = ["settle.flush", "settle.waitforcompaction"];

/// Whether a step of `kind` only reads: it leaves the tree as it found it (no writes
/// of its own, no writer beside it).
fn only_reads(kind: StepKind) -> bool {
    (kind.reads() && !kind.while_writing() && !kind.is_ycsb()) || kind == StepKind::YcsbC
}

/// `steps` with the engine settled before each read step: a flush of the memtable and
/// a wait for compaction (unmeasured maintenance steps named [`SETTLE_STEPS`]), so the
/// step starts from the same tree in every run of the plan. An LSM's background
/// flushes and compactions otherwise finish at different moments from run to run, and
/// a step's point reads pass through whatever shape they left; and reads from
/// RocksDB's memtable walk a skiplist whose node heights come from a random seeded by
/// the thread's id, another skiplist in every run (`plumb icount`'s instructions per
/// op moved 0.5% between identical runs, all in the memtable). Inserted before a read
/// step unless the engine is already settled there: after the plan's own flush then
/// waitforcompaction, after flush_mt_l0, or after a settled read step with only reads
/// since (reads leave the tree as it was). The steps after an inserted pair sit at
/// later positions, which seed their keys.
pub fn settle_before_reads(steps: &[StepPlan]) -> Vec<StepPlan> {
    let mut out: Vec<StepPlan> = Vec::with_capacity(steps.len() + 2);
    let mut settled = false;
    for s in steps {
        if s.kind.reads() && !settled {
            out.push(StepPlan::labelled(StepKind::Flush, SETTLE_STEPS[0]));
            out.push(StepPlan::labelled(
                StepKind::WaitForCompaction,
                SETTLE_STEPS[1],
            ));
            settled = true;
        }
        let after_flush = out.last().is_some_and(|p| p.kind == StepKind::Flush);
        settled = match s.kind {
            k if only_reads(k) => settled,
            StepKind::WaitForCompaction => after_flush,
            StepKind::FlushMtL0 => true,
            _ => false,
        };
        out.push(s.clone());
    }
    out
}

/// Every step name, comma-separated, for error messages.
pub fn known_steps() -> String {
    ALL.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(",")
}

/// The named sequences [`workload`] knows.
pub const SEQUENCES: &[&str] = &["default", "x3"];

/// Parses `--benchmarks a,b,c` (db_bench's comma list; blanks ignored).
pub fn parse_benchmarks(list: &str) -> Result<Vec<StepPlan>, WorkloadError> {
    let steps = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<StepKind>().map(StepPlan::of))
        .collect::<Result<Vec<_>, _>>()?;
    if steps.is_empty() {
        return Err(WorkloadError::NoSteps);
    }
    Ok(steps)
}

/// The default quick sequence: load in key order, then reads, ranges and writes.
pub const DEFAULT_BENCHMARKS: &str =
    "fillseq,readrandom,multireadrandom,fwdrange,revrange,overwrite,readwhilewriting";

/// A named sequence (`--workload`): `default`, or `x3`, RocksDB's
/// tools/benchmark_compare.sh order.
pub fn workload(name: &str) -> Result<Vec<StepPlan>, WorkloadError> {
    use StepKind::*;
    match name {
        "default" => parse_benchmarks(DEFAULT_BENCHMARKS),
        "x3" => Ok(vec![
            StepPlan::of(FillSeq),
            StepPlan::labelled(RevRange, "revrange.warmup"),
            StepPlan::of(ReadRandom),
            StepPlan::of(FwdRange),
            StepPlan::of(MultiReadRandom),
            StepPlan {
                ops_fraction_of_num: Some(0.1),
                ..StepPlan::labelled(Overwrite, "overwritesome")
            },
            StepPlan::of(Flush),
            StepPlan::of(WaitForCompaction),
            StepPlan::of(RevRangeWhileWriting),
            StepPlan::of(FwdRangeWhileWriting),
            StepPlan::of(ReadWhileWriting),
            StepPlan::labelled(Overwrite, "overwriteandwait"),
            StepPlan::of(WaitForCompaction),
        ]),
        _ => Err(WorkloadError::UnknownWorkload {
            given: name.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for (k, n) in ALL {
            assert_eq!(n.parse::<StepKind>().unwrap(), k);
            assert_eq!(k.name(), n);
        }
    }

    #[test]
    fn unknown_step_names_the_option_and_lists_known() {
        let e = parse_benchmarks("fillseq,readrandmo")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--benchmarks") && e.contains("readrandmo") && e.contains("readrandom"));
        assert_eq!(parse_benchmarks(" , ").unwrap_err(), WorkloadError::NoSteps);
    }

    #[test]
    fn x3_follows_benchmark_compare_order() {
        let names: Vec<_> = workload("x3")
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names[0], "fillseq");
        assert_eq!(names[1], "revrange.warmup");
        assert_eq!(names[5], "overwritesome");
        assert_eq!(names.last().unwrap(), "waitforcompaction");
        assert!(workload("x4").is_err());
    }

    fn names(steps: &[StepPlan]) -> Vec<&str> {
        steps.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn the_engine_is_settled_before_each_read_step_that_follows_writes() {
        let settled = |list: &str| {
            let s = settle_before_reads(&parse_benchmarks(list).unwrap());
            names(&s).join(",")
        };
        assert_eq!(
            settled("fillseq,readrandom"),
            "fillseq,settle.flush,settle.waitforcompaction,readrandom"
        );
        // Reads after a settled read leave the tree as it was: no second settle; a write
        // step (or a writer beside the readers) unsettles it again.
        assert_eq!(
            settled("fillseq,readrandom,fwdrange,overwrite,readwhilewriting,readseq"),
            "fillseq,settle.flush,settle.waitforcompaction,readrandom,fwdrange,overwrite,\
             settle.flush,settle.waitforcompaction,readwhilewriting,\
             settle.flush,settle.waitforcompaction,readseq"
        );
        // The plan's own settle is kept, and is enough; a flush alone is not (its
        // compactions may still run), nor a compaction wait with the memtable unflushed.
        assert_eq!(
            settled("fillseq,flush,waitforcompaction,readrandom"),
            "fillseq,flush,waitforcompaction,readrandom"
        );
        assert_eq!(
            settled("fillseq,flush_mt_l0,readrandom"),
            "fillseq,flush_mt_l0,readrandom"
        );
        assert_eq!(
            settled("fillseq,flush,readrandom"),
            "fillseq,flush,settle.flush,settle.waitforcompaction,readrandom"
        );
        // A read step first (a database given with --use-existing-db) is settled too;
        // a sequence without reads is left alone.
        assert_eq!(
            settled("readrandom"),
            "settle.flush,settle.waitforcompaction,readrandom"
        );
        assert_eq!(settled("fillseq,overwrite"), "fillseq,overwrite");
        // The inserted steps are unmeasured maintenance; the plan's steps keep their
        // names, labels and op quotas.
        let x3 = settle_before_reads(&workload("x3").unwrap());
        assert!(x3
            .iter()
            .filter(|s| SETTLE_STEPS.contains(&s.name.as_str()))
            .all(|s| s.kind.is_maintenance()));
        let kept: Vec<_> = x3
            .iter()
            .filter(|s| !SETTLE_STEPS.contains(&s.name.as_str()))
            .cloned()
            .collect();
        assert_eq!(kept, workload("x3").unwrap());
    }

    #[test]
    fn classes_are_consistent() {
        for (k, _) in ALL {
            assert!(!(k.reads() && k.writes()), "{k}");
            if k.is_maintenance() {
                assert!(!k.reads() && !k.writes());
            }
        }
        assert!(StepKind::ReadWhileWriting.reads());
    }
}
