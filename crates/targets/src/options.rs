//! Helpers every engine's typed options share: defaults read from the one clap
//! definition, the provenance form, and the rows of the option reference.

use serde::Serialize;

/// The cache every engine with one gets unless told otherwise: 1 GiB.
pub const DEFAULT_CACHE_SIZE: u64 = 1 << 30;

/// The options every engine understands in its own terms, given once on the command
/// line whatever the engine. Why: `--sync` must mean "each acknowledged write is on the
/// device" on RocksDB, LMDB and SQLite alike, or a comparison of engines compares
/// durabilities. In a suite they are keys of each target's `[target.options]`.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct EngineCommon {
    /// Flush every write to the device before it is acknowledged: RocksDB and LevelDB
    /// fsync their log, LMDB syncs each commit, SQLite runs synchronous=FULL; SplinterDB
    /// cannot and refuses it. Without it, writes reach the OS (a process crash loses
    /// none, a power cut may lose the last ones).
    #[arg(long)]
    pub sync: bool,
    /// Bytes of the engine's own cache: RocksDB's and LevelDB's block cache, SQLite's
    /// page cache per connection, SplinterDB's page cache (LMDB has no cache of its own
    /// and refuses this) [default: 1073741824].
    #[arg(long, alias = "cache_size", value_name = "BYTES")]
    pub cache_size: Option<u64>,
}

/// The defaults declared in `T`'s clap attributes: an empty command line parsed
/// through them. Why: a default written in clap and again in `Default` drifts.
pub fn defaults<T: clap::Args>() -> T {
    let cmd = T::augment_args(clap::Command::new("defaults").no_binary_name(true));
    let matches = cmd
        .try_get_matches_from(std::iter::empty::<String>())
        .expect("every option has a default");
    T::from_arg_matches(&matches).expect("defaults convert")
}

/// `(name, value)` pairs of the serde form, scalars as their plain text, for the
/// store's option column and `opt.NAME` selectors.
pub fn as_strings<T: Serialize>(opts: &T) -> Vec<(String, String)> {
    let v = serde_json::to_value(opts).expect("options serialise");
    let Some(map) = v.as_object() else {
        return Vec::new();
    };
    map.iter()
        .map(|(k, v)| {
            let s = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => "none".into(),
                other => other.to_string(),
            };
            (k.clone(), s)
        })
        .collect()
}

/// One row of the option reference: what a user types, its default and its help.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionDoc {
    /// The suite-file key (snake_case, db_bench's spelling).
    pub key: String,
    /// The command-line flag.
    pub flag: String,
    /// The default, as clap prints it ("" when the option is off unless given).
    pub default: String,
    /// Allowed values, for choices.
    pub choices: Vec<String>,
    /// The one line of help.
    pub help: String,
}

/// The reference rows of `T`'s options, in declaration order.
pub fn reference<T: clap::Args>() -> Vec<OptionDoc> {
    let cmd = T::augment_args(clap::Command::new("reference"));
    cmd.get_arguments()
        .filter(|a| a.get_long().is_some())
        .map(|a| {
            let long = a.get_long().unwrap_or_default();
            let flag_only = matches!(
                a.get_action(),
                clap::ArgAction::SetTrue | clap::ArgAction::SetFalse
            );
            // An engine's own flag whose name another engine also uses is spelled
            // `--ENGINE-name` with id `ENGINE_name` (clap ids are unique per command);
            // its suite key is the plain name.
            let id = a.get_id().as_str();
            let engine = long.split('-').next().unwrap_or_default();
            let key = match id.strip_prefix(engine).and_then(|r| r.strip_prefix('_')) {
                Some(plain) if crate::ENGINE_NAMES.contains(&engine) => plain,
                _ => id,
            };
            OptionDoc {
                key: key.to_string(),
                flag: format!("--{long}"),
                default: if flag_only {
                    "false".into()
                } else {
                    a.get_default_values()
                        .iter()
                        .map(|v| v.to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join(",")
                },
                choices: a
                    .get_possible_values()
                    .iter()
                    .filter(|_| !flag_only)
                    .map(|p| p.get_name().to_string())
                    .collect(),
                help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
            }
        })
        .collect()
}
