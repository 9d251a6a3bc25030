//! What every stored run records about how it was made: the command line as typed, so
//! anyone can run it again (its timestamps are `lifecycle::now`'s).

/// The command line, shell-quoted where an argument needs it, so it can be re-run; a
/// password in a URL argument (`--url postgres://u:pw@h/db`) is replaced by `***`, as
/// it never reaches the store.
pub fn command_line() -> String {
    // A plumb that hands a run to the plumb of another engine release passes the
    // command the user typed (plumb_runner::release).
    if let Some(c) = std::env::var("PLUMB_RECORDED_COMMAND")
        .ok()
        .filter(|c| !c.is_empty())
    {
        return c;
    }
    std::env::args()
        .map(|s| redact_url_arg(&s))
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

/// An argument with its URL's password replaced (`--url=…` or the URL alone).
fn redact_url_arg(arg: &str) -> String {
    let (prefix, value) = match arg.split_once('=') {
        Some((k, v)) if k.starts_with("--") => (format!("{k}="), v),
        _ => (String::new(), arg),
    };
    if value.contains("://") && value.contains('@') {
        format!("{prefix}{}", plumb_plan::redact(value))
    } else {
        arg.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url_arg;

    #[test]
    fn passwords_in_url_arguments_are_redacted() {
        assert_eq!(
            redact_url_arg("postgres://bob:hunter2@db/x"),
            "postgres://bob:***@db/x"
        );
        assert_eq!(
            redact_url_arg("--url=mysql://root:pw@h/db"),
            "--url=mysql://root:***@h/db"
        );
        assert_eq!(redact_url_arg("--tag=a=b"), "--tag=a=b");
        assert_eq!(redact_url_arg("user@host"), "user@host");
    }
}
