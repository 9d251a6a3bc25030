//! What every stored run records about how it was made: the command line as typed and
//! timestamps in one format (RFC 3339, UTC, milliseconds).

/// The command line, shell-quoted where an argument needs it, so it can be re-run.
pub fn command_line() -> String {
    std::env::args()
        .map(|s| {
            if s.is_empty() || s.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", s.replace('\'', "'\\''"))
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub use plumb_runner::lifecycle::{now, rfc3339};
