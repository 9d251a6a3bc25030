//! Suite files: targets × workloads × sizes × thread counts × repeats in TOML, parsed
//! into a [`Plan`]. Every error names the file, line and column, the key, and the valid
//! choices; nothing is run or written until the whole file is good.

use crate::model::{hash_of, KvParams, Plan, RunPlan, TargetPlan, WorkloadPlan};
use crate::order;
use plumb_targets::{EngineSpec, ENGINE_NAMES};
use plumb_workloads::steps::{self, StepPlan};
use plumb_workloads::StepKind;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use thiserror::Error;
use toml::Spanned;

/// A suite file that cannot be used.
#[derive(Debug, Error, PartialEq)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("{file}: cannot read: {why}")]
    Read {
        /// The suite file.
        file: String,
        /// The OS error.
        why: String,
    },
    /// Something in the file is wrong, at a place in it.
    #[error("{file}:{line}:{column}: {message}")]
    At {
        /// The suite file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column (characters).
        column: usize,
        /// What is wrong, the key, and what would be right.
        message: String,
    },
}

/// How the matrix is written in a file; see examples/ and docs/suite.md.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: Option<String>,
    repeat: Option<Spanned<u32>>,
    seed: Option<u64>,
    dir: Option<PathBuf>,
    #[serde(default)]
    params: KvParams,
    #[serde(default, rename = "target")]
    targets: Vec<TargetDef>,
    #[serde(default, rename = "workload")]
    workloads: Vec<WorkloadDef>,
    #[serde(default, rename = "size")]
    sizes: Vec<SizeDef>,
    #[serde(default)]
    sweep: SweepDef,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepDef {
    threads: Option<Spanned<Vec<usize>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadDef {
    name: Spanned<String>,
    steps: Option<Vec<Spanned<String>>>,
    sequence: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SizeDef {
    name: Spanned<String>,
    num: Spanned<u64>,
}

/// `[[target]]`: a name, an engine, and that engine's own typed options.
#[derive(Debug)]
struct TargetDef {
    name: Spanned<String>,
    /// The engine with its options, or the unknown engine name as written.
    engine: Result<Spanned<EngineSpec>, Spanned<String>>,
}

const TARGET_KEYS: &[&str] = &["name", "engine", "options"];

impl<'de> Deserialize<'de> for TargetDef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TargetVisitor)
    }
}

struct TargetVisitor;

/// Reads `options` with the engine's own options type, so an unknown key or a wrong
/// type inside it is reported at its own line.
struct OptionsSeed<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for OptionsSeed<'_> {
    type Value = EngineSpec;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EngineSpec, D::Error> {
        EngineSpec::with_options(self.0, Some(d))
    }
}

impl<'de> Visitor<'de> for TargetVisitor {
    type Value = TargetDef;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a target table with name, engine and optional options")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<TargetDef, A::Error> {
        let mut name: Option<Spanned<String>> = None;
        let mut engine: Option<Spanned<String>> = None;
        let mut spec: Option<EngineSpec> = None;
        // Keys arrive in sorted order (engine < name < options), so the engine is
        // known before its options are read.
        while let Some(k) = m.next_key::<String>()? {
            match k.as_str() {
                "name" => name = Some(m.next_value()?),
                "engine" => engine = Some(m.next_value()?),
                "options" => {
                    let Some(e) = &engine else {
                        return Err(de::Error::custom("give `engine` before `options`"));
                    };
                    if !ENGINE_NAMES.contains(&e.get_ref().as_str()) {
                        // Reported after parsing, at the engine's own line.
                        m.next_value::<de::IgnoredAny>()?;
                        continue;
                    }
                    spec = Some(m.next_value_seed(OptionsSeed(e.get_ref()))?);
                }
                other => return Err(de::Error::unknown_field(other, TARGET_KEYS)),
            }
        }
        let name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        let engine = engine.ok_or_else(|| {
            de::Error::custom(format!(
                "missing field `engine` (one of: {})",
                ENGINE_NAMES.join(", ")
            ))
        })?;
        if !ENGINE_NAMES.contains(&engine.get_ref().as_str()) {
            return Ok(TargetDef {
                name,
                engine: Err(engine),
            });
        }
        let spec = match spec {
            Some(s) => s,
            None => EngineSpec::with_options(engine.get_ref(), None::<serde_json::Value>)
                .map_err(de::Error::custom)?,
        };
        Ok(TargetDef {
            name,
            engine: Ok(Spanned::new(engine.span(), spec)),
        })
    }
}

/// What identifies a suite across attempts: everything in the file, not the clock.
#[derive(Serialize)]
struct Definition<'a> {
    name: &'a str,
    repeat: u32,
    seed: Option<u64>,
    dir: &'a Option<PathBuf>,
    params: &'a KvParams,
    targets: Vec<(&'a str, &'a EngineSpec)>,
    workloads: &'a [WorkloadPlan],
    sizes: &'a [(String, u64)],
    threads: &'a [usize],
    shuffle: Option<u64>,
}

/// Options of `plumb run` / `plumb plan` that shape the plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    /// Shuffle each round of the matrix with this seed.
    pub shuffle: Option<u64>,
    /// The seed when the file gives none (the caller's clock).
    pub clock_seed: u64,
}

/// Reads and expands a suite file.
pub fn load(path: &Path, o: PlanOptions) -> Result<Plan, SuiteError> {
    let file = path.display().to_string();
    let raw = std::fs::read_to_string(path).map_err(|e| SuiteError::Read {
        file: file.clone(),
        why: e.to_string(),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "suite".into());
    parse(&raw, &file, &stem, o)
}

/// Parses suite text; `file` names it in errors, `stem` is its default name.
pub fn parse(raw: &str, file: &str, stem: &str, o: PlanOptions) -> Result<Plan, SuiteError> {
    let at = |span: Option<Range<usize>>, message: String| {
        let (line, column) = line_col(raw, span.map(|s| s.start).unwrap_or(0));
        SuiteError::At {
            file: file.to_string(),
            line,
            column,
            message,
        }
    };
    let f: SuiteFile = toml::from_str(raw).map_err(|e| at(e.span(), tidy(e.message())))?;
    // A parameter that parsed but cannot be used: point at its key in [params].
    f.params.validate().map_err(|e| {
        at(
            locate(raw, &["params", e.key]),
            format!("params.{}: {}", e.key, e.message),
        )
    })?;

    if f.targets.is_empty() {
        return Err(at(
            None,
            format!(
                "the suite names no target; add a [[target]] table with a name and an engine \
                 (one of: {})",
                ENGINE_NAMES.join(", ")
            ),
        ));
    }
    let mut targets = Vec::new();
    for (i, t) in f.targets.iter().enumerate() {
        let name = t.name.get_ref();
        if name.is_empty() {
            return Err(at(Some(t.name.span()), "target name is empty".into()));
        }
        if let Some(j) = f.targets[..i].iter().position(|u| u.name.get_ref() == name) {
            let (line, _) = line_col(raw, f.targets[j].name.span().start);
            return Err(at(
                Some(t.name.span()),
                format!("target name {name:?} is used twice (first on line {line}); names must be unique"),
            ));
        }
        let engine = t.engine.as_ref().map_err(|e| {
            at(
                Some(e.span()),
                format!(
                    "target {name:?}: engine {:?} is unknown; plumb knows: {}",
                    e.get_ref(),
                    ENGINE_NAMES.join(", ")
                ),
            )
        })?;
        if let Err(e) = engine.get_ref().validate() {
            let span = match &e {
                plumb_targets::TargetError::Option { option, .. } => {
                    locate(raw, &["target", &i.to_string(), "options", option])
                }
                _ => None,
            }
            .or(Some(engine.span()));
            return Err(at(span, format!("target {name:?}: {e}")));
        }
        targets.push(TargetPlan {
            name: name.clone(),
            engine: engine.get_ref().clone(),
        });
    }

    if f.workloads.is_empty() {
        return Err(at(
            None,
            "the suite names no workload; add a [[workload]] table with a name and \
             `steps = [\"fillseq\", \"readrandom\"]` or `sequence = \"x3\"`"
                .into(),
        ));
    }
    let mut workloads = Vec::new();
    for (i, w) in f.workloads.iter().enumerate() {
        let name = w.name.get_ref();
        if let Some(j) = f.workloads[..i]
            .iter()
            .position(|u| u.name.get_ref() == name)
        {
            let (line, _) = line_col(raw, f.workloads[j].name.span().start);
            return Err(at(
                Some(w.name.span()),
                format!("workload name {name:?} is used twice (first on line {line})"),
            ));
        }
        let steps: Vec<StepPlan> = match (&w.steps, &w.sequence) {
            (Some(list), None) => {
                if list.is_empty() {
                    return Err(at(
                        Some(w.name.span()),
                        format!("workload {name:?}: `steps` is empty; name at least one step"),
                    ));
                }
                let mut v = Vec::new();
                for s in list {
                    let kind: StepKind = s.get_ref().parse().map_err(|_| {
                        at(
                            Some(s.span()),
                            format!(
                                "workload {name:?}: unknown step {:?}; known steps: {}",
                                s.get_ref(),
                                steps::known_steps()
                            ),
                        )
                    })?;
                    v.push(StepPlan::of(kind));
                }
                v
            }
            (None, Some(seq)) => steps::workload(seq.get_ref()).map_err(|_| {
                at(
                    Some(seq.span()),
                    format!(
                        "workload {name:?}: unknown sequence {:?}; known sequences: {}",
                        seq.get_ref(),
                        steps::SEQUENCES.join(", ")
                    ),
                )
            })?,
            _ => {
                return Err(at(
                    Some(w.name.span()),
                    format!("workload {name:?}: give exactly one of `steps` or `sequence`"),
                ))
            }
        };
        workloads.push(WorkloadPlan {
            name: name.clone(),
            steps,
        });
    }

    let mut sizes: Vec<(String, u64)> = Vec::new();
    for s in &f.sizes {
        let name = s.name.get_ref();
        if sizes.iter().any(|(n, _)| n == name) {
            return Err(at(
                Some(s.name.span()),
                format!("size name {name:?} is used twice"),
            ));
        }
        let p = KvParams {
            num: *s.num.get_ref(),
            ..f.params.clone()
        };
        p.validate().map_err(|e| {
            at(
                Some(s.num.span()),
                format!("size {name:?}: {}: {}", e.key, e.message),
            )
        })?;
        sizes.push((name.clone(), *s.num.get_ref()));
    }
    let threads: Vec<usize> = match &f.sweep.threads {
        Some(t) => {
            if t.get_ref().is_empty() {
                return Err(at(
                    Some(t.span()),
                    "sweep.threads is empty: the matrix would have no runs; list at least one \
                     thread count, e.g. [1, 2, 4]"
                        .into(),
                ));
            }
            if let Some(bad) = t.get_ref().iter().find(|&&n| n == 0 || n > 1024) {
                return Err(at(
                    Some(t.span()),
                    format!("sweep.threads: {bad} is not between 1 and 1024"),
                ));
            }
            t.get_ref().clone()
        }
        None => vec![f.params.threads],
    };
    let repeat = f.repeat.as_ref().map(|r| *r.get_ref()).unwrap_or(1);
    if !(1..=1000).contains(&repeat) {
        return Err(at(
            f.repeat.as_ref().map(|r| r.span()),
            "repeat must be between 1 and 1000".into(),
        ));
    }
    let name = f.name.clone().unwrap_or_else(|| stem.to_string());
    let definition_hash = hash_of(&Definition {
        name: &name,
        repeat,
        seed: f.seed,
        dir: &f.dir,
        params: &f.params,
        targets: targets
            .iter()
            .map(|t| (t.name.as_str(), &t.engine))
            .collect(),
        workloads: &workloads,
        sizes: &sizes,
        threads: &threads,
        shuffle: o.shuffle,
    });

    let seed = f.seed.unwrap_or(o.clock_seed);
    let size_axis: Vec<Option<&(String, u64)>> = if sizes.is_empty() {
        vec![None]
    } else {
        sizes.iter().map(Some).collect()
    };
    for t in &targets {
        for (w, def) in workloads.iter().zip(&f.workloads) {
            if let Some(why) = crate::refused(&t.engine, &w.steps, &f.params) {
                return Err(at(
                    Some(def.name.span()),
                    format!("target {:?} with workload {:?}: {why}", t.name, w.name),
                ));
            }
        }
    }
    let mut cells = Vec::new();
    for t in &targets {
        for w in &workloads {
            for s in &size_axis {
                for &th in &threads {
                    let mut label = vec![t.name.clone()];
                    if workloads.len() > 1 {
                        label.push(w.name.clone());
                    }
                    if let Some((n, _)) = s {
                        label.push(n.clone());
                    }
                    if f.sweep.threads.is_some() {
                        label.push(format!("t{th}"));
                    }
                    let mut params = f.params.clone();
                    params.threads = th;
                    if let Some((_, num)) = s {
                        params.num = *num;
                    }
                    cells.push(RunPlan {
                        suite: name.clone(),
                        variant: label.join("/"),
                        target: t.clone(),
                        workload: w.clone(),
                        size: s.map(|(n, _)| n.clone()),
                        params,
                        seed,
                        repeat: 0,
                        use_existing_db: false,
                    });
                }
            }
        }
    }
    let runs = order::rounds(&cells, repeat, o.shuffle);
    Ok(Plan {
        name,
        definition_hash,
        dir: f.dir,
        shuffle_seed: o.shuffle,
        runs,
    })
}

/// toml's messages end with a newline and sometimes repeat themselves; keep one line.
fn tidy(m: &str) -> String {
    m.trim().replace('\n', "; ")
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(raw: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(raw.len());
    let before = &raw[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// The span of the value at `path` (table keys, or array indexes as numbers), for
/// errors found after parsing.
pub fn locate(raw: &str, path: &[&str]) -> Option<Range<usize>> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(raw).ok()?;
    let mut span = root.span();
    let mut cur: DeValue<'_> = DeValue::Table(root.into_inner());
    for seg in path {
        let next = match cur {
            DeValue::Table(t) => t
                .into_iter()
                .find(|(k, _)| k.get_ref().as_ref() == *seg)
                .map(|(k, v)| (k.span(), v)),
            DeValue::Array(a) => {
                let i: usize = seg.parse().ok()?;
                a.into_iter().nth(i).map(|v| (v.span(), v))
            }
            _ => None,
        }?;
        span = next.0;
        cur = next.1.into_inner();
    }
    Some(span)
}

#[cfg(test)]
mod tests;
