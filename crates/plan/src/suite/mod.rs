//! Suite files: targets × workloads × sizes × thread counts × repeats in TOML, parsed
//! into a [`Plan`]. Every error names the file, line and column, the key, and the valid
//! choices; nothing is run or written until the whole file is good.

use crate::durability::{DurabilityMode, DurabilityParams, DurabilityWork};
use crate::family::{
    ib_steps_ok, Family, HostSpec, IbParams, IbWork, ProbeParams, ProbeWork, ServerSpec, SqlParams,
    SqlWork, Subject, DEFAULT_CACHE_MB, PROBE_NAMES,
};
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
    #[serde(default)]
    sql: SqlParams,
    #[serde(default)]
    ib: IbParams,
    #[serde(default)]
    probe: ProbeParams,
    #[serde(default)]
    durability: DurabilityParams,
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
    /// Measured threads (kv), client threads (sql), clients (ib).
    #[serde(alias = "clients")]
    threads: Option<Spanned<Vec<usize>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadDef {
    name: Spanned<String>,
    steps: Option<Vec<Spanned<String>>>,
    sequence: Option<Spanned<String>>,
    /// The sysbench microbenchmarks, in order.
    sql: Option<Vec<Spanned<String>>>,
    /// The insert benchmark's steps, in order.
    ib: Option<Vec<Spanned<String>>>,
    /// The hardware probes: mem, cpu, disk or all.
    probe: Option<Spanned<String>>,
    /// The durability trials' modes: sync, nosync, unlogged (or both).
    durability: Option<Vec<Spanned<String>>>,
}

/// Sequences that name another family's default order.
const FAMILY_SEQUENCES: &[&str] = &["sysbench", "ibench"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SizeDef {
    name: Spanned<String>,
    num: Spanned<u64>,
}

/// `[[target]]`: a name and either an engine with its own typed options, or a server
/// (one per version of `versions`), with an optional memory limit.
#[derive(Debug)]
struct TargetDef {
    name: Spanned<String>,
    /// The engine with its options, or the unknown engine name as written; `None` for
    /// a server.
    engine: Option<Result<Spanned<EngineSpec>, Spanned<String>>>,
    server: Option<Spanned<String>>,
    versions: Option<Spanned<Vec<String>>>,
    storage: Option<String>,
    url: Option<String>,
    basedir: Option<PathBuf>,
    config: Option<PathBuf>,
    waldir: Option<PathBuf>,
    cache_mb: Option<u64>,
    ram_sized: Option<bool>,
    memory_mb: Option<Spanned<u64>>,
    drop_caches: bool,
    /// The host itself (the probes' target).
    host: bool,
}

/// Engines that can run from another build than the one linked (`versions`).
const RELEASED_ENGINES: &[&str] = &["rocksdb", "speedb"];

const TARGET_KEYS: &[&str] = &[
    "name",
    "engine",
    "options",
    "server",
    "versions",
    "url",
    "basedir",
    "config",
    "waldir",
    "cache_mb",
    "ram_sized",
    "memory_mb",
    "drop_caches",
    "host",
];

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
        f.write_str("a target table with a name and an engine (with options) or a server")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<TargetDef, A::Error> {
        let mut name: Option<Spanned<String>> = None;
        let mut engine: Option<Spanned<String>> = None;
        let mut spec: Option<EngineSpec> = None;
        let mut t = TargetDef {
            name: Spanned::new(0..0, String::new()),
            engine: None,
            server: None,
            versions: None,
            storage: None,
            url: None,
            basedir: None,
            config: None,
            waldir: None,
            cache_mb: None,
            ram_sized: None,
            memory_mb: None,
            drop_caches: false,
            host: false,
        };
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
                "server" => t.server = Some(m.next_value()?),
                "versions" => t.versions = Some(m.next_value()?),
                "url" => t.url = Some(m.next_value()?),
                "basedir" => t.basedir = Some(m.next_value()?),
                "config" => t.config = Some(m.next_value()?),
                "waldir" => t.waldir = Some(m.next_value()?),
                "cache_mb" => t.cache_mb = Some(m.next_value()?),
                "ram_sized" => t.ram_sized = Some(m.next_value()?),
                "memory_mb" => t.memory_mb = Some(m.next_value()?),
                "drop_caches" => t.drop_caches = m.next_value()?,
                "host" => t.host = m.next_value()?,
                other => return Err(de::Error::unknown_field(other, TARGET_KEYS)),
            }
        }
        t.name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        if t.host {
            if engine.is_some() || t.server.is_some() || t.url.is_some() || t.memory_mb.is_some() {
                return Err(de::Error::custom(
                    "`host = true` is the probes' target: give it no engine, server, url or \
                     memory_mb",
                ));
            }
            return Ok(t);
        }
        if t.server.is_some() || t.url.is_some() {
            // A server: `engine` is its storage engine (innodb, rocksdb).
            if spec.is_some() {
                return Err(de::Error::custom(
                    "`options` are an embedded engine's; a server takes `config` (a template) \
                     and `cache_mb`",
                ));
            }
            t.storage = engine.map(Spanned::into_inner);
            return Ok(t);
        }
        let releases = engine
            .as_ref()
            .is_some_and(|e| RELEASED_ENGINES.contains(&e.get_ref().as_str()));
        for (key, set) in [
            ("versions", t.versions.is_some() && !releases),
            ("basedir", t.basedir.is_some()),
            ("config", t.config.is_some()),
            ("waldir", t.waldir.is_some()),
            ("cache_mb", t.cache_mb.is_some()),
            ("ram_sized", t.ram_sized.is_some()),
        ] {
            if set {
                return Err(de::Error::custom(format!(
                    "`{key}` is for a server target; give `server = \"postgres\"` (or \
                     mariadb, mysql) or drop `{key}`"
                )));
            }
        }
        let engine = engine.ok_or_else(|| {
            de::Error::custom(format!(
                "missing field `engine` (one of: {}) or `server` (postgres, mariadb, mysql)",
                ENGINE_NAMES.join(", ")
            ))
        })?;
        if !ENGINE_NAMES.contains(&engine.get_ref().as_str()) {
            t.engine = Some(Err(engine));
            return Ok(t);
        }
        let spec = match spec {
            Some(s) => s,
            None => EngineSpec::with_options(engine.get_ref(), None::<serde_json::Value>)
                .map_err(de::Error::custom)?,
        };
        t.engine = Some(Ok(Spanned::new(engine.span(), spec)));
        Ok(t)
    }
}

/// A target as the suite's definition hash sees it: an engine target without a memory
/// limit in the form suites were hashed in before servers joined, so their unfinished
/// attempts still resume.
#[derive(Serialize)]
#[serde(untagged)]
enum DefTarget<'a> {
    Engine(&'a str, &'a EngineSpec),
    Other(&'a TargetPlan),
}

/// What identifies a suite across attempts: everything in the file, not the clock.
#[derive(Serialize)]
struct Definition<'a> {
    name: &'a str,
    repeat: u32,
    seed: Option<u64>,
    dir: &'a Option<PathBuf>,
    params: &'a KvParams,
    targets: Vec<DefTarget<'a>>,
    workloads: &'a [WorkloadPlan],
    #[serde(skip_serializing_if = "Option::is_none")]
    sql: Option<&'a SqlParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ib: Option<&'a IbParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probe: Option<&'a ProbeParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    durability: Option<&'a DurabilityParams>,
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
    /// Multiply every size and timed step's duration by this (`--scale`, see
    /// [`crate::scale`]); part of the definition, so `--resume` finds the same scale.
    pub scale: Option<f64>,
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
    let mut f: SuiteFile = toml::from_str(raw).map_err(|e| at(e.span(), tidy(e.message())))?;
    // A parameter that parsed but cannot be used: point at its key in [params].
    f.params.validate().map_err(|e| {
        at(
            locate(raw, &["params", e.key]),
            format!("params.{}: {}", e.key, e.message),
        )
    })?;

    let targets = targets_of(raw, &f, &at)?;
    read_family_inputs(raw, file, &mut f, &at)?;
    let workloads = workloads_of(raw, &f, &at)?;
    let sizes = sizes_of(&f, &at)?;
    let threads = threads_of(&f, &at)?;
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
            .map(
                |t| match (&t.subject, t.memory_mb, t.drop_caches, &t.release) {
                    (Subject::Engine(e), None, false, None) => DefTarget::Engine(&t.name, e),
                    _ => DefTarget::Other(t),
                },
            )
            .collect(),
        workloads: &workloads,
        sql: workloads
            .iter()
            .any(|w| matches!(w.family, Family::Sql(_)))
            .then_some(&f.sql),
        ib: workloads
            .iter()
            .any(|w| matches!(w.family, Family::Ib(_)))
            .then_some(&f.ib),
        probe: workloads
            .iter()
            .any(|w| matches!(w.family, Family::Probe(_)))
            .then_some(&f.probe),
        durability: workloads
            .iter()
            .any(|w| matches!(w.family, Family::Durability(_)))
            .then_some(&f.durability),
        sizes: &sizes,
        threads: &threads,
        shuffle: o.shuffle,
    });

    let seed = f.seed.unwrap_or(o.clock_seed);
    check_pairs(&targets, &workloads, &f, &at)?;
    let cells = cells(&name, seed, &targets, &workloads, &sizes, &threads, &f);
    let runs = order::rounds(&cells, repeat, o.shuffle);
    let mut plan = Plan {
        name,
        definition_hash,
        dir: f.dir,
        shuffle_seed: o.shuffle,
        runs,
        scaled: Vec::new(),
    };
    if let Some(k) = o.scale.filter(|k| *k != 1.0) {
        plan.scaled = crate::scale::apply(&mut plan, k);
        plan.definition_hash = hash_of(&(&plan.definition_hash, k));
    }
    Ok(plan)
}

/// The suite's targets, each checked (names unique, memory limits, engines and their
/// options, servers, releases), with an error pointing at the key at fault.
fn targets_of(
    raw: &str,
    f: &SuiteFile,
    at: &dyn Fn(Option<Range<usize>>, String) -> SuiteError,
) -> Result<Vec<TargetPlan>, SuiteError> {
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
    let mut targets: Vec<TargetPlan> = Vec::new();
    let mut target_spans: Vec<Range<usize>> = Vec::new();
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
        if let Some(m) = &t.memory_mb {
            crate::check_memory_mb(Some(*m.get_ref())).map_err(|e| {
                at(
                    Some(m.span()),
                    format!("target {name:?}: {}: {}", e.key, e.message),
                )
            })?;
        }
        let limited = |subject| TargetPlan {
            name: name.clone(),
            subject,
            memory_mb: t.memory_mb.as_ref().map(|m| *m.get_ref()),
            drop_caches: t.drop_caches,
            release: None,
        };
        if t.host {
            targets.push(limited(Subject::Host(HostSpec::default())));
            target_spans.push(t.name.span());
            continue;
        }
        let Some(engine) = &t.engine else {
            for tp in server_targets(t).map_err(|(key, message)| {
                at(
                    locate(raw, &["target", &i.to_string(), key]).or(Some(t.name.span())),
                    format!("target {name:?}: {key}: {message}"),
                )
            })? {
                targets.push(TargetPlan {
                    memory_mb: t.memory_mb.as_ref().map(|m| *m.get_ref()),
                    drop_caches: t.drop_caches,
                    ..tp
                });
                target_spans.push(t.name.span());
            }
            continue;
        };
        let engine = engine.as_ref().map_err(|e| {
            at(
                Some(e.span()),
                format!(
                    "target {name:?}: engine {:?} is unknown; plumb knows: {}",
                    e.get_ref(),
                    ENGINE_NAMES.join(", ")
                ),
            )
        })?;
        // Another build parses its own RocksDB options when it runs; this one checks
        // the rest.
        let checked = match &t.versions {
            Some(_) => engine.get_ref().without_engine_parsed_options(),
            None => engine.get_ref().clone(),
        };
        if let Err(e) = checked.validate() {
            let span = match &e {
                plumb_targets::TargetError::Option { option, .. } => {
                    locate(raw, &["target", &i.to_string(), "options", option])
                }
                _ => None,
            }
            .or(Some(engine.span()));
            return Err(at(span, format!("target {name:?}: {e}")));
        }
        let releases = match &t.versions {
            None => vec![None],
            Some(vs) => engine_releases(vs.get_ref()).map_err(|m| {
                at(
                    locate(raw, &["target", &i.to_string(), "versions"]).or(Some(vs.span())),
                    format!("target {name:?}: versions: {m}"),
                )
            })?,
        };
        for r in releases {
            targets.push(TargetPlan {
                name: match &r {
                    Some(r) => format!("{name}@{r}"),
                    None => name.clone(),
                },
                release: r,
                ..limited(Subject::Engine(engine.get_ref().clone()))
            });
            target_spans.push(t.name.span());
        }
    }
    for (i, t) in targets.iter().enumerate() {
        if let Some(j) = targets[..i].iter().position(|u| u.name == t.name) {
            return Err(at(
                Some(target_spans[i].clone()),
                format!(
                    "target name {:?} is made twice (by the targets at {:?} and {:?}); \
                     names must be unique",
                    t.name, targets[j].name, t.name
                ),
            ));
        }
    }
    Ok(targets)
}

/// The families' tables checked, and the files they name (SQL and Lua scripts, mix
/// files, relative to the suite) read now: the plan keeps their text, so a run (and
/// its rerun) runs what the suite named when it was read.
fn read_family_inputs(
    raw: &str,
    file: &str,
    f: &mut SuiteFile,
    at: &dyn Fn(Option<Range<usize>>, String) -> SuiteError,
) -> Result<(), SuiteError> {
    // A family's knobs that parsed but cannot be used: point at the key in its table.
    let family_param = |table: &str, e: crate::ParamError| {
        at(
            locate(raw, &[table, e.key]),
            format!("{table}.{}: {}", e.key, e.message),
        )
    };
    f.sql.validate().map_err(|e| family_param("sql", e))?;
    // The [sql] table's script files, relative to the suite, read now: the plan keeps
    // their text, so a run (and its rerun) runs what the suite named when it was read.
    let base = Path::new(file).parent();
    f.sql.scripts = f
        .sql
        .script
        .iter()
        .map(|s| crate::ScriptSource::read(s, base))
        .collect::<Result<_, _>>()
        .map_err(|e| family_param("sql", e))?;
    f.sql.read_lua(base).map_err(|e| family_param("sql", e))?;
    f.params
        .read_mix(base)
        .map_err(|e| family_param("params", e))?;
    f.ib.validate().map_err(|e| family_param("ib", e))?;
    f.durability
        .validate()
        .map_err(|e| family_param("durability", e))?;

    Ok(())
}

/// The suite's workloads, each a family's, with unique names.
fn workloads_of(
    raw: &str,
    f: &SuiteFile,
    at: &dyn Fn(Option<Range<usize>>, String) -> SuiteError,
) -> Result<Vec<WorkloadPlan>, SuiteError> {
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
        let family = workload_family(w, f, at)?;
        workloads.push(WorkloadPlan {
            name: name.clone(),
            family,
        });
    }

    Ok(workloads)
}

/// The size axis: unique names, each size valid for every family's parameters.
fn sizes_of(
    f: &SuiteFile,
    at: &dyn Fn(Option<Range<usize>>, String) -> SuiteError,
) -> Result<Vec<(String, u64)>, SuiteError> {
    let mut sizes: Vec<(String, u64)> = Vec::new();
    for s in &f.sizes {
        let name = s.name.get_ref();
        if sizes.iter().any(|(n, _)| n == name) {
            return Err(at(
                Some(s.name.span()),
                format!("size name {name:?} is used twice"),
            ));
        }
        let n = *s.num.get_ref();
        let p = KvParams {
            num: n,
            ..f.params.clone()
        };
        let sql = SqlParams {
            table_size: n,
            ..f.sql.clone()
        };
        let ib = IbParams {
            rows: n,
            ..f.ib.clone()
        };
        let checked = p
            .validate()
            .map(|_| ())
            .and_then(|()| sql.validate().map(|_| ()))
            .and_then(|()| ib.validate());
        checked.map_err(|e| {
            at(
                Some(s.num.span()),
                format!("size {name:?}: {}: {}", e.key, e.message),
            )
        })?;
        sizes.push((name.clone(), *s.num.get_ref()));
    }
    Ok(sizes)
}

/// The thread axis: `sweep.threads`, else the parameters' one count.
fn threads_of(
    f: &SuiteFile,
    at: &dyn Fn(Option<Range<usize>>, String) -> SuiteError,
) -> Result<Vec<usize>, SuiteError> {
    Ok(match &f.sweep.threads {
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
    })
}

/// Refuses a workload that runs on no target, and a target-workload pair the engine
/// cannot run, naming both.
fn check_pairs(
    targets: &[TargetPlan],
    workloads: &[WorkloadPlan],
    f: &SuiteFile,
    at: &dyn Fn(Option<Range<usize>>, String) -> SuiteError,
) -> Result<(), SuiteError> {
    for (w, def) in workloads.iter().zip(&f.workloads) {
        if !targets.iter().any(|t| w.family.runs_on(&t.subject)) {
            return Err(at(
                Some(def.name.span()),
                format!(
                    "workload {:?} ({}) runs on no target of the suite: {}",
                    w.name,
                    w.family.name(),
                    match w.family {
                        Family::Kv(_) => "db_bench steps need an embedded engine (engine = …)",
                        Family::Sql(_) => "microbenchmarks need a server (server = \"postgres\" …)",
                        Family::Ib(_) => "the insert benchmark needs an engine or a server",
                        Family::Probe(_) => "the probes need the host (a target with host = true)",
                        Family::Durability(_) => {
                            "the durability trials need an embedded engine that keeps files \
                             (engine = \"lmdb\" …) or a server plumb starts (server = \
                             \"postgres\" …, not a url)"
                        }
                    }
                ),
            ));
        }
        for t in targets {
            if !w.family.runs_on(&t.subject) {
                continue;
            }
            if let Some(why) = refused_pair(t, w, &f.params) {
                return Err(at(
                    Some(def.name.span()),
                    format!("target {:?} with workload {:?}: {why}", t.name, w.name),
                ));
            }
        }
    }
    Ok(())
}

/// The matrix's cells: every target with every workload it runs, at every size and
/// thread count of the sweeps (once for a family the sweeps do not vary), labelled by
/// the axes that vary.
fn cells(
    name: &str,
    seed: u64,
    targets: &[TargetPlan],
    workloads: &[WorkloadPlan],
    sizes: &[(String, u64)],
    threads: &[usize],
    f: &SuiteFile,
) -> Vec<RunPlan> {
    let size_axis: Vec<Option<&(String, u64)>> = if sizes.is_empty() {
        vec![None]
    } else {
        sizes.iter().map(Some).collect()
    };
    let mut cells = Vec::new();
    for t in targets {
        let pairs = workloads.iter().filter(|w| w.family.runs_on(&t.subject));
        for w in pairs {
            // The probes measure the host and the durability trials count kills: the
            // data sizes and client counts of the suite's sweeps are not theirs, so
            // they run once per repeat.
            let once = !w.family.swept();
            let sizes_here = if once { &[None][..] } else { &size_axis[..] };
            let threads_here = if once { &threads[..1] } else { threads };
            for s in sizes_here {
                for &th in threads_here {
                    let mut label = vec![t.name.clone()];
                    if workloads.len() > 1 {
                        label.push(w.name.clone());
                    }
                    if let Some((n, _)) = s {
                        label.push(n.clone());
                    }
                    if f.sweep.threads.is_some() && !once {
                        label.push(format!("t{th}"));
                    }
                    let mut workload = w.clone();
                    if let Family::Kv(kv) = &mut workload.family {
                        kv.params.threads = th;
                        if let Some((_, num)) = s {
                            kv.params.num = *num;
                        }
                    } else {
                        if f.sweep.threads.is_some() {
                            workload.family.set_concurrency(th);
                        }
                        if let Some((_, num)) = s {
                            workload.family.set_size(*num);
                        }
                    }
                    cells.push(RunPlan {
                        suite: name.to_string(),
                        variant: label.join("/"),
                        target: t.clone(),
                        workload,
                        size: s.map(|(n, _)| n.clone()),
                        seed,
                        repeat: 0,
                        use_existing_db: false,
                        under: None,
                    });
                }
            }
        }
    }
    cells
}

/// The targets a `[[target]]` with `server` (or `url`) makes: one, or one per version
/// of `versions`, named `NAME@VERSION`. Errors name the key.
fn server_targets(t: &TargetDef) -> Result<Vec<TargetPlan>, (&'static str, String)> {
    let base = ServerSpec {
        server: t
            .server
            .as_ref()
            .map(|s| s.get_ref().clone())
            .unwrap_or_else(|| url_flavor(t.url.as_deref().unwrap_or("")).into()),
        engine: t.storage.clone(),
        basedir: t.basedir.clone(),
        config: t.config.clone(),
        waldir: t.waldir.clone(),
        cache_mb: t.cache_mb.unwrap_or(DEFAULT_CACHE_MB),
        ram_sized: t.ram_sized.unwrap_or(false),
        url: t.url.clone(),
    };
    let name = t.name.get_ref();
    let specs: Vec<(String, ServerSpec)> = match &t.versions {
        None => vec![(name.clone(), base)],
        Some(vs) => {
            if vs.get_ref().is_empty() {
                return Err((
                    "versions",
                    "is empty; list at least one, e.g. [\"15\", \"16\"]".into(),
                ));
            }
            if base.server.contains('@') || base.url.is_some() || base.basedir.is_some() {
                return Err((
                    "versions",
                    "a release series starts each version plumb has installed; give \
                     `server` without @VERSION, and no url or basedir"
                        .into(),
                ));
            }
            let mut out = Vec::new();
            for v in vs.get_ref() {
                if v.is_empty() || v.contains(['@', '/', ' ']) {
                    return Err(("versions", format!("{v:?} is not a version")));
                }
                if out
                    .iter()
                    .any(|(n, _): &(String, ServerSpec)| n == &format!("{name}@{v}"))
                {
                    return Err(("versions", format!("{v:?} is listed twice")));
                }
                out.push((
                    format!("{name}@{v}"),
                    ServerSpec {
                        server: format!("{}@{v}", base.server),
                        ..base.clone()
                    },
                ));
            }
            out
        }
    };
    specs
        .into_iter()
        .map(|(n, spec)| {
            spec.validate().map_err(|e| (e.key, e.message))?;
            Ok(TargetPlan::server(n, spec))
        })
        .collect()
}

/// The builds of an engine a `versions` list names: releases (`8.5.3`) and RocksDB
/// source trees (`tree:/path`), each once.
fn engine_releases(vs: &[String]) -> Result<Vec<Option<String>>, String> {
    if vs.is_empty() {
        return Err("is empty; list at least one, e.g. [\"8.5.3\", \"8.6.7\"]".into());
    }
    let mut out: Vec<Option<String>> = Vec::new();
    for v in vs {
        let ok = match v.strip_prefix("tree:") {
            Some(path) => path.starts_with('/'),
            None => !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'),
        };
        if !ok {
            return Err(format!(
                "{v:?} is neither a release (8.5.3) nor a source tree (tree:/absolute/path)"
            ));
        }
        if out.iter().any(|o| o.as_deref() == Some(v)) {
            return Err(format!("{v:?} is listed twice"));
        }
        out.push(Some(v.clone()));
    }
    Ok(out)
}

/// The server name a URL's scheme means.
fn url_flavor(url: &str) -> &'static str {
    if url.starts_with("mysql://") || url.starts_with("mariadb://") {
        "mariadb"
    } else {
        "postgres"
    }
}

/// Why target `t` cannot run workload `w`, if it cannot (checked before anything runs).
fn refused_pair(t: &TargetPlan, w: &WorkloadPlan, params: &KvParams) -> Option<String> {
    match (&t.subject, &w.family) {
        (Subject::Engine(e), Family::Kv(kv)) => crate::refused(e, &kv.steps, params),
        (Subject::Engine(e), Family::Ib(_)) => {
            let caps = e.capabilities();
            (!caps.delete || !caps.stores_data).then(|| {
                format!(
                    "the insert benchmark needs an engine that stores data and deletes; {} \
                     does not",
                    e.name()
                )
            })
        }
        (_, Family::Durability(d)) => {
            if t.memory_mb.is_some() || t.drop_caches {
                return Some(
                    "the durability trials take no memory_mb or drop_caches (they kill \
                     writers, they measure no speed); give them a target of their own"
                        .into(),
                );
            }
            crate::durability::refused(&t.subject, d)
        }
        _ => None,
    }
}

/// The family and steps a `[[workload]]` names, with its family's knobs.
fn workload_family(
    w: &WorkloadDef,
    f: &SuiteFile,
    at: &dyn Fn(Option<Range<usize>>, String) -> SuiteError,
) -> Result<Family, SuiteError> {
    let name = w.name.get_ref();
    let given = [
        w.steps.is_some(),
        w.sequence.is_some(),
        w.sql.is_some(),
        w.ib.is_some(),
        w.probe.is_some(),
        w.durability.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(at(
            Some(w.name.span()),
            format!(
                "workload {name:?}: give exactly one of `steps` (db_bench's), `sql` (the \
                 sysbench microbenchmarks), `ib` (the insert benchmark), `probe` (mem, cpu, \
                 disk or all), `durability` (sync, nosync, unlogged) or `sequence`"
            ),
        ));
    }
    let nonempty = |list: &Vec<Spanned<String>>, key: &str| {
        if list.is_empty() {
            Err(at(
                Some(w.name.span()),
                format!("workload {name:?}: `{key}` is empty; name at least one step"),
            ))
        } else {
            Ok(())
        }
    };
    let kv = |steps| {
        Family::Kv(crate::model::KvWork {
            steps,
            params: f.params.clone(),
        })
    };
    let sql = |steps| {
        Family::Sql(SqlWork {
            steps,
            params: f.sql.clone(),
        })
    };
    let ib = |steps: Vec<plumb_workloads::IbStepPlan>, span| {
        ib_steps_ok(&steps).map_err(|why| at(Some(span), format!("workload {name:?}: {why}")))?;
        Ok(Family::Ib(IbWork {
            steps,
            params: f.ib.clone(),
        }))
    };
    if let Some(list) = &w.steps {
        nonempty(list, "steps")?;
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
        return Ok(kv(v));
    }
    if let Some(list) = &w.sql {
        nonempty(list, "sql")?;
        let mut v = Vec::new();
        for s in list {
            v.extend(
                plumb_workloads::sql::parse_steps(s.get_ref())
                    .map_err(|e| at(Some(s.span()), format!("workload {name:?}: {e}")))?,
            );
        }
        return Ok(sql(v));
    }
    if let Some(list) = &w.ib {
        nonempty(list, "ib")?;
        let mut v = Vec::new();
        for s in list {
            v.extend(
                plumb_workloads::ibench::parse_steps(s.get_ref())
                    .map_err(|e| at(Some(s.span()), format!("workload {name:?}: {e}")))?,
            );
        }
        return ib(v, w.name.span());
    }
    if let Some(p) = &w.probe {
        if !PROBE_NAMES.contains(&p.get_ref().as_str()) {
            return Err(at(
                Some(p.span()),
                format!(
                    "workload {name:?}: probe {:?} is unknown; use one of: {}",
                    p.get_ref(),
                    PROBE_NAMES.join(", ")
                ),
            ));
        }
        return Ok(Family::Probe(ProbeWork {
            which: p.get_ref().clone(),
            params: f.probe.clone(),
        }));
    }
    if let Some(list) = &w.durability {
        nonempty(list, "durability")?;
        let mut modes = Vec::new();
        for m in list {
            for mode in DurabilityMode::parse_list(m.get_ref()).map_err(|e| {
                at(
                    Some(m.span()),
                    format!("workload {name:?}: durability: {e}"),
                )
            })? {
                if !modes.contains(&mode) {
                    modes.push(mode);
                }
            }
        }
        return Ok(Family::Durability(DurabilityWork {
            modes,
            params: f.durability.clone(),
        }));
    }
    let seq = w.sequence.as_ref().expect("one of the six was given");
    match seq.get_ref().as_str() {
        "sysbench" => Ok(sql(plumb_workloads::sql::default_order())),
        "ibench" => ib(plumb_workloads::ibench::default_order(), seq.span()),
        other => steps::workload(other).map(kv).map_err(|_| {
            at(
                Some(seq.span()),
                format!(
                    "workload {name:?}: unknown sequence {other:?}; known sequences: {}, {}",
                    steps::SEQUENCES.join(", "),
                    FAMILY_SEQUENCES.join(", ")
                ),
            )
        }),
    }
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
