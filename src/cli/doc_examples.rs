//! Every command the manual shows is one plumb takes: each `plumb …` (or `cargo run
//! --release -- …`) line in a shell block of README.md and docs/*.md is parsed with
//! plumb's own flags, so a renamed flag or subcommand fails here, not on a reader.

use super::Cli;
use clap::Parser;
use std::path::Path;

/// The shell lines of `text`'s fenced blocks, `\` continuations joined, comments cut,
/// each with its line number.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let (mut out, mut open, mut shell) = (Vec::new(), false, false);
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            open = !open;
            shell = open && matches!(lang.trim(), "" | "sh" | "bash" | "shell" | "console");
            continue;
        }
        if !shell {
            continue;
        }
        let line = line.trim_start().trim_start_matches("$ ");
        let (n, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        match line.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head);
                pending = Some((n, joined));
            }
            None => {
                joined.push_str(line);
                out.push((n, joined));
            }
        }
    }
    out
}

/// The plumb arguments of each command on a shell line (after `&&`, `;`, `|`, and any
/// `VAR=value` prefix), an elided `...` left out, or none.
fn plumb_commands(line: &str) -> Vec<Vec<String>> {
    let Some(words) = shlex::split(line.split(" #").next().unwrap_or("")) else {
        return Vec::new();
    };
    words
        .split(|w| matches!(w.as_str(), "&&" | ";" | "|" | "||"))
        .filter_map(|cmd| {
            let cmd: Vec<&String> = cmd.iter().skip_while(|w| w.contains('=')).collect();
            let args = match cmd.first().map(|w| w.as_str()) {
                Some("plumb") => &cmd[1..],
                Some("cargo") if cmd.len() > 3 && cmd[1..4] == ["run", "--release", "--"] => {
                    &cmd[4..]
                }
                _ => return None,
            };
            // `...` stands for the reader's own flags.
            let kept = args.iter().filter(|w| !matches!(w.as_str(), "..." | "…"));
            Some(kept.map(|w| w.to_string()).collect())
        })
        .collect()
}

#[test]
fn the_examples_find_commands_and_skip_the_rest() {
    let text = "```sh\n# a comment\nplumb kv --threads 2 \\\n  --tag x  # why\n\
                PLUMB_STORE=s.sqlite plumb runs ... && cargo run --release -- kv\nfio --name x\n```\n\
                ```toml\nplumb = 1\n```\n";
    let cmds: Vec<Vec<String>> = shell_lines(text)
        .iter()
        .flat_map(|(_, l)| plumb_commands(l))
        .collect();
    assert_eq!(
        cmds,
        [
            vec!["kv", "--threads", "2", "--tag", "x"],
            vec!["runs"],
            vec!["kv"]
        ]
    );
}

#[test]
fn every_command_in_the_manual_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let (mut seen, mut bad) = (0, Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in shell_lines(&text) {
            for args in plumb_commands(&line) {
                seen += 1;
                let parsed = Cli::try_parse_from(std::iter::once("plumb".to_string()).chain(args));
                if let Err(e) = parsed {
                    if !matches!(
                        e.kind(),
                        clap::error::ErrorKind::DisplayHelp
                            | clap::error::ErrorKind::DisplayVersion
                    ) {
                        bad.push(format!("{}:{n}: {line}\n  {e}", file.display()));
                    }
                }
            }
        }
    }
    assert!(
        seen > 100,
        "only {seen} commands found: is the extraction broken?"
    );
    assert!(
        bad.is_empty(),
        "{} of {seen} commands do not parse:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
