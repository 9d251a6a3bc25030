//! The durability family: a writer of an embedded engine, or every process of a server
//! plumb starts, killed again and again while it writes, and every write it
//! acknowledged checked afterwards. Its knobs are declared once, here: `plumb
//! durability` flattens them into its flags, a suite reads them from its `[durability]`
//! table, and the stored plan holds them, so a suite, `plumb rerun` and a worker run
//! the same trials.

use crate::model::ParamError;
use plumb_targets::{EngineCommon, EngineSpec};
use serde::{Deserialize, Serialize};

/// What an acknowledged write is promised: the modes a durability run tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityMode {
    /// Flushed to the device before the write returns (a server's default commit).
    Sync,
    /// Handed to the OS before the write returns (PostgreSQL's `synchronous_commit =
    /// off`, InnoDB's and MyRocks' `flush_log_at_trx_commit = 0`).
    #[serde(rename = "nosync")]
    NoSync,
    /// Kept in the engine's memory only: RocksDB without its write-ahead log.
    Unlogged,
}

/// The modes' names, as flags and suites write them (`both` is sync and nosync).
pub const MODE_NAMES: &[&str] = &["sync", "nosync", "unlogged", "both"];

impl DurabilityMode {
    /// Its name in flags, suites, step names and tables.
    pub fn name(self) -> &'static str {
        match self {
            DurabilityMode::Sync => "sync",
            DurabilityMode::NoSync => "nosync",
            DurabilityMode::Unlogged => "unlogged",
        }
    }

    /// Modes from a comma-separated list (`both` is sync and nosync), in the order
    /// given, each once; the error names the word that is not a mode.
    pub fn parse_list(s: &str) -> Result<Vec<DurabilityMode>, String> {
        let mut out = Vec::new();
        for m in s.split(',').map(str::trim) {
            let add: &[DurabilityMode] = match m {
                "sync" => &[DurabilityMode::Sync],
                "nosync" => &[DurabilityMode::NoSync],
                "unlogged" => &[DurabilityMode::Unlogged],
                "both" => &[DurabilityMode::Sync, DurabilityMode::NoSync],
                other => return Err(format!("{other:?}: use sync, nosync, unlogged or both")),
            };
            for a in add {
                if !out.contains(a) {
                    out.push(*a);
                }
            }
        }
        Ok(out)
    }

    /// Whether losing a write in this mode breaks a promise (the run fails) rather
    /// than shows its price.
    pub fn promises(self) -> bool {
        self == DurabilityMode::Sync
    }
}

/// The calls a crash point counts (`--cut at=KIND:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointKind {
    /// fsync, fdatasync, fsyncdir, and writes on `O_SYNC`/`O_DSYNC` descriptors.
    Fsync,
    /// Renames.
    Rename,
    /// Unlinks.
    Unlink,
}

impl PointKind {
    /// Its name in `--cut at=KIND:N`, step names and tables.
    pub fn name(self) -> &'static str {
        match self {
            PointKind::Fsync => "fsync",
            PointKind::Rename => "rename",
            PointKind::Unlink => "unlink",
        }
    }
}

/// How a trial ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cut {
    /// SIGKILL: the OS keeps what the process handed it.
    Kill,
    /// SIGKILL, then everything no fsync reached is dropped (a power failure).
    Power,
    /// As power, but a random part of the unsynced writes (whole pages or single
    /// 512-byte sectors) reaches the disk first.
    Torn,
    /// A crash point: the power-cut filesystem freezes right after the N-th call of
    /// the kind (every one of them in turn when `None`, each on a fresh directory with
    /// the same writes), the writer is killed and the power cut.
    At(PointKind, Option<u64>),
    /// A real block device that stops writing (device-mapper's dm-flakey on a loop
    /// device): refused, with why, where the kernel lacks either.
    Flakey,
}

/// What `--cut` takes, for its errors.
const CUT_HELP: &str =
    "use kill, power, torn, both, flakey, or at=KIND:N / at=KIND:all with KIND fsync, rename or unlink";

impl Cut {
    /// Its name in step names and tables: `kill`, `power`, `torn`, `flakey`,
    /// `fsync-7` (one crash point), `fsync-points` (every one).
    pub fn name(self) -> String {
        match self {
            Cut::Kill => "kill".into(),
            Cut::Power => "power".into(),
            Cut::Torn => "torn".into(),
            Cut::Flakey => "flakey".into(),
            Cut::At(k, Some(n)) => format!("{}-{n}", k.name()),
            Cut::At(k, None) => format!("{}-points", k.name()),
        }
    }

    /// How `--cut` spells it (`at=fsync:all`), for messages that name the flag.
    pub fn flag(self) -> String {
        match self {
            Cut::At(k, Some(n)) => format!("at={}:{n}", k.name()),
            Cut::At(k, None) => format!("at={}:all", k.name()),
            other => other.name(),
        }
    }

    /// One `at=KIND:N` or `at=KIND:all`.
    fn parse_at(s: &str, spec: &str) -> Result<Cut, String> {
        let bad = || format!("{s:?}: {CUT_HELP} (N from 1)");
        let (kind, n) = spec.split_once(':').ok_or_else(bad)?;
        let kind = match kind {
            "fsync" => PointKind::Fsync,
            "rename" => PointKind::Rename,
            "unlink" => PointKind::Unlink,
            _ => return Err(bad()),
        };
        let n = match n {
            "all" => None,
            n => Some(n.parse::<u64>().ok().filter(|&n| n >= 1).ok_or_else(bad)?),
        };
        Ok(Cut::At(kind, n))
    }

    /// Cuts from a comma-separated list (`both` is kill and power), each once.
    pub fn parse_list(s: &str) -> Result<Vec<Cut>, String> {
        let mut out = Vec::new();
        for c in s.split(',').map(str::trim) {
            let at;
            let add: &[Cut] = match c {
                "kill" => &[Cut::Kill],
                "power" => &[Cut::Power],
                "torn" => &[Cut::Torn],
                "flakey" => &[Cut::Flakey],
                "both" => &[Cut::Kill, Cut::Power],
                other => match other.strip_prefix("at=") {
                    Some(spec) => {
                        at = [Cut::parse_at(other, spec)?];
                        &at
                    }
                    None => return Err(format!("{other:?}: {CUT_HELP}")),
                },
            };
            for a in add {
                if !out.contains(a) {
                    out.push(*a);
                }
            }
        }
        Ok(out)
    }

    /// Whether the data directory sits on a power-cut mount (root and /dev/fuse).
    pub fn powered(self) -> bool {
        !matches!(self, Cut::Kill | Cut::Flakey)
    }

    /// The crash point's kind and N (`None`: every point), for `at=` cuts.
    pub fn crash_points(self) -> Option<(PointKind, Option<u64>)> {
        match self {
            Cut::At(k, n) => Some((k, n)),
            _ => None,
        }
    }
}

/// The durability trials' knobs (`plumb durability`'s flags, a suite's `[durability]`
/// table); the modes are the workload's own list, as steps are the other families'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct DurabilityParams {
    /// How each trial ends, comma-separated: kill (the process is killed with SIGKILL;
    /// what it handed the OS survives), power (killed, then every write no fsync reached
    /// and every directory entry no directory fsync reached is dropped, as in a power
    /// failure: needs root and /dev/fuse), torn (as power, but a random part of the
    /// unsynced writes, whole pages or single 512-byte sectors, reaches the disk first),
    /// both (kill and power), at=fsync:N (as power, right after the N-th fsync,
    /// fdatasync or directory fsync; at=rename:N, at=unlink:N likewise), at=fsync:all
    /// (every such point in turn, each on a fresh directory with the same 40 writes,
    /// the engine's own integrity check after each reopen; embedded engines), or flakey
    /// (dm-flakey on a loop device; says why not where the kernel lacks them).
    #[arg(long, default_value = "kill", value_name = "LIST")]
    pub cut: String,
    /// Kills per engine, mode and kind of cut.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub kills: u32,
    /// The longest a writer runs before it is killed, ms (each kill picks a moment at
    /// random up to this, after its first acknowledged write).
    #[arg(long, alias = "max_ms", default_value_t = 400)]
    pub max_ms: u64,
    /// When a directory entry (a create, rename, unlink) survives a power cut: posix
    /// (only once its directory is fsynced, as fsync(2) promises), or ext4 (also when
    /// the file itself, or a new directory, is fsynced, as ext4, XFS and btrfs do).
    #[arg(
        long,
        alias = "dir_entries",
        default_value = "posix",
        value_name = "RULE"
    )]
    pub dir_entries: String,
}

impl Default for DurabilityParams {
    /// The defaults declared in the attributes above.
    fn default() -> Self {
        plumb_targets::options::defaults::<DurabilityParams>()
    }
}

impl DurabilityParams {
    /// Refuses values that cannot run, naming the parameter; returns the cuts.
    pub fn validate(&self) -> Result<Vec<Cut>, ParamError> {
        let cuts = Cut::parse_list(&self.cut).map_err(|message| ParamError {
            key: "cut",
            message,
        })?;
        if !(1..=10_000).contains(&self.kills) {
            return Err(ParamError {
                key: "kills",
                message: format!("{}: give 1 to 10000", self.kills),
            });
        }
        if self.max_ms == 0 {
            return Err(ParamError {
                key: "max_ms",
                message: "give at least 1 ms".into(),
            });
        }
        if !matches!(self.dir_entries.as_str(), "posix" | "ext4") {
            return Err(ParamError {
                key: "dir_entries",
                message: format!("{:?}: use posix or ext4", self.dir_entries),
            });
        }
        Ok(cuts)
    }

    /// Whether a file's own fsync makes its names durable (`dir_entries = ext4`), not
    /// only its directory's fsync (`posix`).
    pub fn file_fsync_keeps_names(&self) -> bool {
        self.dir_entries == "ext4"
    }

    /// The cuts, in order (empty when the list is bad: plans are validated first).
    pub fn cuts(&self) -> Vec<Cut> {
        Cut::parse_list(&self.cut).unwrap_or_default()
    }
}

/// One durability run's work: its modes, and the knobs every trial shares. Each mode ×
/// cut is a step of the run, named `MODE.CUT` (`sync.kill`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DurabilityWork {
    /// The modes tried, in order.
    pub modes: Vec<DurabilityMode>,
    /// Their knobs.
    pub params: DurabilityParams,
}

impl DurabilityWork {
    /// The steps' names, in the order they run: each mode with each cut.
    pub fn step_names(&self) -> Vec<String> {
        let cuts = self.params.cuts();
        self.modes
            .iter()
            .flat_map(|m| {
                cuts.iter()
                    .map(move |c| format!("{}.{}", m.name(), c.name()))
            })
            .collect()
    }
}

/// Whether an embedded engine can be killed and reopened: it keeps files and stores
/// what it is given.
pub fn engine_keeps_writes(e: &EngineSpec) -> bool {
    let c = e.capabilities();
    c.keeps_files && c.stores_data
}

/// The engine as the writer opens it in `mode`: synced or not (over the target's own
/// `sync`), and without its log for `unlogged`. The error says why the engine cannot.
pub fn engine_in_mode(e: &EngineSpec, mode: DurabilityMode) -> Result<EngineSpec, String> {
    let name = e.name();
    if !engine_keeps_writes(e) {
        return Err(format!(
            "{name} keeps no files, so there is nothing to reopen"
        ));
    }
    let mut s = e.clone();
    if mode == DurabilityMode::Unlogged {
        if !e.capabilities().wal {
            return Err(format!("{name} has no write-ahead log to turn off"));
        }
        // Every engine with a log to turn off calls the option `disable_wal`.
        let mut v = serde_json::to_value(&s).map_err(|e| e.to_string())?;
        v["options"]["disable_wal"] = true.into();
        s = serde_json::from_value(v).map_err(|e| format!("{name}: disable_wal: {e}"))?;
    }
    s.apply_common(&EngineCommon {
        sync: mode == DurabilityMode::Sync,
        cache_size: None,
    })
    .and_then(|()| s.validate())
    .map_err(|e| format!("{name} {}: {e}", mode.name()))?;
    Ok(s)
}

/// Why `subject` cannot run `work`, if it cannot (a mode the engine lacks, a server
/// asked to run without a log), so a suite is refused before anything runs.
pub fn refused(subject: &crate::Subject, work: &DurabilityWork) -> Option<String> {
    match subject {
        crate::Subject::Engine(e) => work.modes.iter().find_map(|&m| engine_in_mode(e, m).err()),
        crate::Subject::Server(_) => {
            if work.modes.contains(&DurabilityMode::Unlogged) {
                return Some(
                    "unlogged: servers always log; use sync or nosync with a server".into(),
                );
            }
            work.params.cuts().into_iter().find_map(|c| {
                c.crash_points().map(|_| {
                    format!(
                        "--cut {}: crash points run on embedded engines; give a server kill, power or torn",
                        c.flag()
                    )
                })
            })
        }
        crate::Subject::Host(_) => Some("durability runs on an engine or a server".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_in_order_each_once_and_bad_words_are_named() {
        use DurabilityMode::*;
        assert_eq!(
            DurabilityMode::parse_list("nosync, both").unwrap(),
            [NoSync, Sync]
        );
        assert!(DurabilityMode::parse_list("fast")
            .unwrap_err()
            .contains("fast"));
        assert_eq!(
            Cut::parse_list("torn,both").unwrap(),
            [Cut::Torn, Cut::Kill, Cut::Power]
        );
        assert!(Cut::parse_list("flood").unwrap_err().contains("flood"));
    }

    #[test]
    fn crash_points_parse_and_bad_ones_say_what_to_give() {
        assert_eq!(
            Cut::parse_list("at=fsync:all,at=rename:3,at=unlink:1,flakey").unwrap(),
            [
                Cut::At(PointKind::Fsync, None),
                Cut::At(PointKind::Rename, Some(3)),
                Cut::At(PointKind::Unlink, Some(1)),
                Cut::Flakey
            ]
        );
        let c = Cut::At(PointKind::Fsync, None);
        assert_eq!(
            (c.name(), c.flag()),
            ("fsync-points".into(), "at=fsync:all".into())
        );
        assert_eq!(Cut::At(PointKind::Rename, Some(3)).name(), "rename-3");
        assert!(c.powered() && !Cut::Flakey.powered());
        for bad in ["at=fsync:0", "at=fsync", "at=write:2", "at=fsync:x", "at="] {
            let e = Cut::parse_list(bad).unwrap_err();
            assert!(e.contains(bad) && e.contains("at=KIND:N"), "{bad}: {e}");
        }
    }

    #[test]
    fn defaults_validate_and_bad_knobs_name_their_key() {
        let p = DurabilityParams::default();
        assert_eq!((p.cut.as_str(), p.kills, p.max_ms), ("kill", 10, 400));
        assert_eq!(p.validate().unwrap(), [Cut::Kill]);
        for (bad, key) in [
            (
                DurabilityParams {
                    cut: "flood".into(),
                    ..p.clone()
                },
                "cut",
            ),
            (
                DurabilityParams {
                    kills: 0,
                    ..p.clone()
                },
                "kills",
            ),
            (
                DurabilityParams {
                    max_ms: 0,
                    ..p.clone()
                },
                "max_ms",
            ),
            (
                DurabilityParams {
                    dir_entries: "lazy".into(),
                    ..p.clone()
                },
                "dir_entries",
            ),
        ] {
            assert_eq!(bad.validate().unwrap_err().key, key);
        }
    }

    #[test]
    fn steps_are_each_mode_with_each_cut() {
        let w = DurabilityWork {
            modes: vec![DurabilityMode::Sync, DurabilityMode::NoSync],
            params: DurabilityParams {
                cut: "both".into(),
                ..DurabilityParams::default()
            },
        };
        assert_eq!(
            w.step_names(),
            ["sync.kill", "sync.power", "nosync.kill", "nosync.power"]
        );
    }

    #[test]
    fn engines_refuse_modes_they_lack() {
        let memory = EngineSpec::default_for("memory").unwrap();
        assert!(engine_in_mode(&memory, DurabilityMode::Sync)
            .unwrap_err()
            .contains("keeps no files"));
        let lmdb = EngineSpec::default_for("lmdb").unwrap();
        assert!(engine_in_mode(&lmdb, DurabilityMode::Sync).is_ok());
        assert!(engine_in_mode(&lmdb, DurabilityMode::Unlogged)
            .unwrap_err()
            .contains("no write-ahead log"));
    }
}
