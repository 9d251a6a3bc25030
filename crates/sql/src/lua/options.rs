//! `sysbench.opt`: sysbench's global options and a script's own (its
//! `sysbench.cmdline.options` table), each with its default and type, set from
//! `--lua-opt NAME=VALUE` as sysbench sets them from `--NAME=VALUE`.

use plumb_servers::SqlError;

/// An option's value, typed as sysbench types it.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// on/off.
    Bool(bool),
    /// A number (sysbench's int, size and double options are all Lua numbers).
    Num(f64),
    /// Text.
    Str(String),
    /// A comma-separated list, a Lua array of strings.
    List(Vec<String>),
}

/// How an option's text is read (sysbench's `ARG_*` types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    /// on/off, true/false, yes/no, 1/0.
    Bool,
    /// An integer.
    Int,
    /// A size with an optional K/M/G/T suffix.
    Size,
    /// A number.
    Double,
    /// Text.
    Str,
    /// Comma-separated.
    List,
}

impl OptKind {
    /// The kind of sysbench's `sysbench.cmdline.ARG_*` number, as prelude.lua numbers
    /// them.
    pub fn from_arg(n: i64) -> Option<OptKind> {
        Some(match n {
            1 => OptKind::Bool,
            2 => OptKind::Int,
            3 => OptKind::Size,
            4 => OptKind::Double,
            5 | 7 => OptKind::Str,
            6 => OptKind::List,
            _ => return None,
        })
    }
}

/// One option a script declares.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOption {
    /// Its name (underscores).
    pub name: String,
    /// Its default.
    pub default: OptValue,
    /// How a given value is read.
    pub kind: OptKind,
}

/// sysbench 1.0's global options a script may read, with sysbench's defaults; `threads`
/// and `time` come from the step.
pub const GLOBAL_OPTIONS: &[(&str, OptKind, &str)] = &[
    ("threads", OptKind::Int, "1"),
    ("events", OptKind::Int, "0"),
    ("time", OptKind::Int, "10"),
    ("warmup_time", OptKind::Int, "0"),
    ("rate", OptKind::Int, "0"),
    ("report_interval", OptKind::Int, "0"),
    ("percentile", OptKind::Int, "95"),
    ("histogram", OptKind::Bool, "off"),
    ("debug", OptKind::Bool, "off"),
    ("validate", OptKind::Bool, "off"),
    ("rand_type", OptKind::Str, "special"),
    ("rand_spec_iter", OptKind::Int, "12"),
    ("rand_spec_pct", OptKind::Int, "1"),
    ("rand_spec_res", OptKind::Int, "75"),
    ("rand_seed", OptKind::Int, "0"),
    ("rand_pareto_h", OptKind::Double, "0.2"),
    ("rand_zipfian_exp", OptKind::Double, "0.8"),
    ("db_ps_mode", OptKind::Str, "auto"),
    ("db_debug", OptKind::Bool, "off"),
    ("mysql_ignore_errors", OptKind::List, "1213,1020,1205"),
    ("pgsql_ignore_errors", OptKind::List, "40P01,23505,40001"),
];

/// Global options plumb sets from its own flags, and which flag.
const FROM_PLUMB: &[(&str, &str)] = &[
    ("threads", "--threads"),
    ("time", "--duration"),
    ("events", "--duration (plumb runs a step for a time)"),
    ("rate", "--rate or --rate-profile"),
    ("warmup_time", "--warmup"),
];

/// Reads `text` as an option of `kind`; the error says what was expected.
pub fn parse(kind: OptKind, text: &str) -> Result<OptValue, String> {
    let t = text.trim();
    match kind {
        OptKind::Bool => match t.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" => Ok(OptValue::Bool(true)),
            "off" | "false" | "no" | "0" => Ok(OptValue::Bool(false)),
            _ => Err("give on or off".into()),
        },
        OptKind::Int => t
            .parse::<i64>()
            .map(|v| OptValue::Num(v as f64))
            .map_err(|_| "give an integer".into()),
        OptKind::Size => {
            let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
                Some('K') => (&t[..t.len() - 1], 1u64 << 10),
                Some('M') => (&t[..t.len() - 1], 1 << 20),
                Some('G') => (&t[..t.len() - 1], 1 << 30),
                Some('T') => (&t[..t.len() - 1], 1 << 40),
                _ => (t, 1),
            };
            num.parse::<u64>()
                .map(|v| OptValue::Num((v * mult) as f64))
                .map_err(|_| "give a size, e.g. 4096 or 16M".into())
        }
        OptKind::Double => t
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(OptValue::Num)
            .ok_or_else(|| "give a number".into()),
        OptKind::Str => Ok(OptValue::Str(text.to_string())),
        OptKind::List => Ok(OptValue::List(
            t.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
        )),
    }
}

/// Options by name, in order.
pub type Options = Vec<(String, OptValue)>;

/// Every option's value: sysbench's globals (`threads` and `time` from the step), the
/// script's options at their defaults, then `given` (`NAME=VALUE`, dashes or
/// underscores) in order. Returns the values and the names given.
pub fn resolve(
    script: &[ScriptOption],
    given: &[String],
    threads: usize,
    seconds: f64,
) -> Result<(Options, Vec<String>), SqlError> {
    let mut kinds: Vec<(String, OptKind)> = Vec::new();
    let mut values: Vec<(String, OptValue)> = Vec::new();
    for (name, kind, default) in GLOBAL_OPTIONS {
        let v = match *name {
            "threads" => OptValue::Num(threads as f64),
            "time" => OptValue::Num(seconds.round()),
            _ => parse(*kind, default).expect("sysbench's defaults parse"),
        };
        kinds.push((name.to_string(), *kind));
        values.push((name.to_string(), v));
    }
    for o in script {
        match values.iter().position(|(n, _)| *n == o.name) {
            Some(i) => {
                values[i].1 = o.default.clone();
                kinds[i].1 = o.kind;
            }
            None => {
                values.push((o.name.clone(), o.default.clone()));
                kinds.push((o.name.clone(), o.kind));
            }
        }
    }
    let mut names = Vec::new();
    for g in given {
        let Some((name, text)) = g.split_once('=') else {
            return Err(SqlError::Input(format!(
                "--lua-opt {g:?}: give NAME=VALUE, e.g. --lua-opt table_size=100000"
            )));
        };
        let name = name.trim().trim_start_matches("--").replace('-', "_");
        if let Some((_, flag)) = FROM_PLUMB.iter().find(|(n, _)| *n == name) {
            if !script.iter().any(|o| o.name == name) {
                return Err(SqlError::Input(format!(
                    "--lua-opt {g:?}: plumb sets sysbench's {name} from its own {flag}; give \
                     that instead"
                )));
            }
        }
        if script.is_empty() && !kinds.iter().any(|(n, _)| *n == name) {
            // A script without an option table takes any option, as sysbench 1.0 lets
            // legacy scripts do, as text.
            kinds.push((name.clone(), OptKind::Str));
            values.push((name.clone(), OptValue::Str(String::new())));
        }
        let Some(i) = kinds.iter().position(|(n, _)| *n == name) else {
            let mut own: Vec<&str> = script.iter().map(|o| o.name.as_str()).collect();
            own.sort_unstable();
            return Err(SqlError::Input(format!(
                "--lua-opt {g:?}: the script has no option {name:?} and sysbench has no \
                 global option of that name; the script's options: {}",
                if own.is_empty() {
                    "none".to_string()
                } else {
                    own.join(", ")
                }
            )));
        };
        let v = parse(kinds[i].1, text)
            .map_err(|why| SqlError::Input(format!("--lua-opt {g:?}: {why}")))?;
        values[i].1 = v;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if let Some(OptValue::Str(t)) = values
        .iter()
        .find(|(n, _)| n == "rand_type")
        .map(|(_, v)| v)
    {
        if !matches!(
            t.as_str(),
            "uniform" | "gaussian" | "special" | "pareto" | "zipfian"
        ) {
            return Err(SqlError::Input(format!(
                "--lua-opt rand_type={t}: sysbench's distributions are uniform, gaussian, \
                 special, pareto and zipfian"
            )));
        }
    }
    if let Some(OptValue::Str(t)) = values
        .iter()
        .find(|(n, _)| n == "db_ps_mode")
        .map(|(_, v)| v)
    {
        if !matches!(t.as_str(), "auto" | "disable") {
            return Err(SqlError::Input(format!(
                "--lua-opt db_ps_mode={t}: give auto (server-side prepared statements) or \
                 disable (statements sent as text)"
            )));
        }
    }
    Ok((values, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_size() -> ScriptOption {
        ScriptOption {
            name: "table_size".into(),
            default: OptValue::Num(10000.0),
            kind: OptKind::Double,
        }
    }

    #[test]
    fn defaults_then_given_values_typed_by_the_option() {
        let (v, given) = resolve(
            &[table_size()],
            &["table-size=500".into(), "rand_type=uniform".into()],
            4,
            30.0,
        )
        .unwrap();
        let get = |n: &str| v.iter().find(|(k, _)| k == n).unwrap().1.clone();
        assert_eq!(get("table_size"), OptValue::Num(500.0));
        assert_eq!(get("threads"), OptValue::Num(4.0));
        assert_eq!(get("time"), OptValue::Num(30.0));
        assert_eq!(get("rand_type"), OptValue::Str("uniform".into()));
        assert_eq!(
            get("mysql_ignore_errors"),
            OptValue::List(vec!["1213".into(), "1020".into(), "1205".into()])
        );
        assert_eq!(
            given,
            vec!["table_size".to_string(), "rand_type".to_string()]
        );
    }

    #[test]
    fn unknown_names_wrong_types_and_plumbs_own_flags_are_refused() {
        // A script without an option table takes any option, as text.
        let (v, _) = resolve(&[], &["oltp_tables_count=4".into()], 1, 5.0).unwrap();
        assert!(v.contains(&("oltp_tables_count".into(), OptValue::Str("4".into()))));
        let e = resolve(&[table_size()], &["tabel_size=5".into()], 1, 5.0).unwrap_err();
        assert!(e.to_string().contains("no option \"tabel_size\""), "{e}");
        assert!(e.to_string().contains("table_size"), "{e}");
        let e = resolve(&[table_size()], &["table_size=many".into()], 1, 5.0).unwrap_err();
        assert!(e.to_string().contains("give a number"), "{e}");
        let e = resolve(&[], &["threads=8".into()], 1, 5.0).unwrap_err();
        assert!(e.to_string().contains("--threads"), "{e}");
        let e = resolve(&[], &["rand_type=normal".into()], 1, 5.0).unwrap_err();
        assert!(e.to_string().contains("uniform, gaussian"), "{e}");
        let e = resolve(&[], &["skip".into()], 1, 5.0).unwrap_err();
        assert!(e.to_string().contains("NAME=VALUE"), "{e}");
    }

    #[test]
    fn bools_and_sizes_read_as_sysbench_reads_them() {
        assert_eq!(parse(OptKind::Bool, "on"), Ok(OptValue::Bool(true)));
        assert_eq!(parse(OptKind::Bool, "OFF"), Ok(OptValue::Bool(false)));
        assert!(parse(OptKind::Bool, "maybe").is_err());
        assert_eq!(parse(OptKind::Size, "16M"), Ok(OptValue::Num(16777216.0)));
        assert_eq!(parse(OptKind::Int, "7"), Ok(OptValue::Num(7.0)));
        assert!(parse(OptKind::Int, "7.5").is_err());
    }
}
