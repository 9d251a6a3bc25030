//! Helpers every engine's typed options share: defaults read from the one clap
//! definition, the provenance form, and the rows of the option reference.

use serde::Serialize;

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
            OptionDoc {
                key: a.get_id().as_str().to_string(),
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
