//! pgbench's built-in scripts as script files (`-b NAME`), as `pgbench --show-script
//! NAME` prints them (PostgreSQL 15.18's pgbench; the text has not changed since 9.6 but
//! for the header comment): a built-in is then one more file to the script runner, and
//! a reader can check the text against their own pgbench.

use super::parse::ScriptSource;
use plumb_servers::SqlError;

/// The built-ins: name, text.
pub const BUILTINS: [(&str, &str); 3] = [
    ("tpcb-like", include_str!("builtin/tpcb-like.sql")),
    ("simple-update", include_str!("builtin/simple-update.sql")),
    ("select-only", include_str!("builtin/select-only.sql")),
];

/// The built-in of that name (pgbench also takes any unique prefix: `-b si` is
/// ambiguous, `-b se` is select-only) with `weight`, as a source named `builtin:NAME`.
pub fn source(name: &str, weight: u32) -> Result<ScriptSource, SqlError> {
    let hits: Vec<&(&str, &str)> = BUILTINS
        .iter()
        .filter(|(n, _)| n.starts_with(name))
        .collect();
    let (n, text) =
        match (hits.as_slice(), name.is_empty()) {
            ([one], false) => **one,
            _ => {
                let exact = BUILTINS.iter().find(|(n, _)| *n == name);
                match exact {
                    Some(e) => *e,
                    None => {
                        return Err(SqlError::Input(format!(
                        "--builtin {name:?}: {} built-in script; use tpcb-like, simple-update or \
                         select-only (a unique prefix will do)",
                        if hits.len() > 1 { "ambiguous" } else { "no such" }
                    )))
                    }
                }
            }
        };
    Ok(ScriptSource::new(
        format!("builtin:{n}"),
        weight,
        text.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_found_by_name_or_unique_prefix() {
        assert_eq!(
            source("select-only", 2).unwrap().name,
            "builtin:select-only"
        );
        assert_eq!(source("t", 1).unwrap().name, "builtin:tpcb-like");
        assert_eq!(source("se", 1).unwrap().weight, 1);
        let e = source("s", 1).unwrap_err().to_string();
        assert!(e.contains("ambiguous"), "{e}");
        assert!(source("tpcc", 1)
            .unwrap_err()
            .to_string()
            .contains("no such"));
        // Every built-in parses and has pgbench's statement count.
        for (n, want) in [("tpcb-like", 7), ("simple-update", 5), ("select-only", 1)] {
            let set = super::super::parse_set(&[source(n, 1).unwrap()]).unwrap();
            assert_eq!(set.scripts[0].sql_commands(), want, "{n}");
        }
    }
}
