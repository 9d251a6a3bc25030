//! Every sentence plumb prints reads as one line of prose: wrapped text never carries a
//! column layout's padding into the middle of a sentence. Checked on what the quick
//! command, a suite run and its text and Markdown reports print, and on every string
//! literal of the product's sources (where such padding came from: a literal broken
//! across lines without a `\`, or rejoined with its indentation).

mod common;

use common::plumb;
use std::path::Path;

/// Whether a piece of a line holds prose: three or more tokens in a row, one space
/// apart, of which at least two are words (letters only, punctuation around them
/// aside). A table's header (`usr_us_op  sys_us_op`) and its figures are not.
fn is_prose(piece: &str) -> bool {
    piece.split("  ").any(|run| {
        let tokens: Vec<&str> = run.split(' ').filter(|t| !t.is_empty()).collect();
        let words = tokens
            .iter()
            .filter(|t| {
                let w = t.trim_matches(|c: char| !c.is_alphanumeric());
                w.chars().count() >= 2 && w.chars().all(char::is_alphabetic)
            })
            .count();
        tokens.len() >= 3 && words >= 2
    })
}

/// Lines where a run of three or more spaces sits between two pieces of prose: a
/// sentence split by padding. A table's columns are a word or a figure each, or end
/// their line, so they pass.
fn padded_sentences(text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for line in text.lines() {
        let pieces: Vec<&str> = line
            .split("   ")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if pieces.windows(2).any(|w| is_prose(w[0]) && is_prose(w[1])) {
            bad.push(line.to_string());
        }
    }
    bad
}

#[test]
fn the_check_finds_padding_inside_a_sentence_and_passes_tables() {
    let broken = "stops scaling at 2 threads (1.73× the ops/s of 1): no more                              threads add 10% (best beyond it: +2% at 8)";
    assert_eq!(padded_sentences(broken).len(), 1);
    let table = " engine    mode   cut  kills  acknowledged  lost  wrong                                verdict \n \
                 lmdb      sync  kill      3           488     0      0  ok: every acknowledged write survived \n \
                 readrandom                   545094       565165    1.037 (0.972-1.073)   0.3016  no difference beyond the noise";
    assert!(padded_sentences(table).is_empty(), "{table}");
    assert!(padded_sentences("one sentence with  two spaces in it, which is fine").is_empty());
    let header = " usr_us_op  sys_us_op  plumb_us_op     csw_op  majflt_op  rd_op  wr_op  test ";
    assert!(padded_sentences(header).is_empty());
}

/// Everything a command printed, both streams.
fn printed(store: &Path, args: &[&str]) -> String {
    let o = plumb(store, args);
    assert!(
        o.status.success(),
        "plumb {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// An example suite at a size a test can run: fewer keys, short steps, one repeat, two
/// thread counts.
fn scaled(example: &str, dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(example),
    )
    .expect("the example exists");
    let text = text
        .lines()
        .map(|l| {
            let key = l.split('=').next().unwrap_or("").trim();
            match key {
                "num" => "num = 20000".to_string(),
                "duration" => "duration = 0.5".to_string(),
                "warmup" => "warmup = 0".to_string(),
                "repeat" => "repeat = 1".to_string(),
                "threads" => "threads = [1, 2]".to_string(),
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = dir.join(example);
    std::fs::write(&path, text).expect("write the suite");
    path
}

#[test]
fn no_printed_sentence_carries_padding() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plumb.sqlite");
    let mut out = Vec::new();
    out.push(printed(
        &store,
        &["kv", "--num", "20000", "--duration", "0.5"],
    ));
    // The example suites of the key-value family, scaled down, each with its text and
    // Markdown report (suites s1…s4, in this order).
    let examples = [
        "threads-sweep.toml",
        "size-sweep.toml",
        "quick.toml",
        "leveled-vs-universal.toml",
    ];
    for (i, example) in examples.iter().enumerate() {
        let suite = scaled(example, dir.path());
        out.push(printed(&store, &["run", suite.to_str().unwrap()]));
        let s = format!("s{}", i + 1);
        for format in ["text", "md"] {
            out.push(printed(&store, &["report", &s, "--format", format]));
        }
    }
    out.push(printed(&store, &["show", "2"]));
    out.push(printed(&store, &["compare", "2", "3"]));
    let all = out.join("\n");
    // The reports hold the sweeps' verdicts, the sentences this check was made for.
    assert!(
        all.contains("stops scaling") || all.contains("still scaling"),
        "{all}"
    );
    // A maintenance step measures nothing a neighbour could bend: never warned about.
    for step in ["flush", "waitforcompaction", "compact"] {
        assert!(
            !all.contains(&format!("{step}: another process used")),
            "{step} was judged for outside load:\n{all}"
        );
    }
    let bad = padded_sentences(&all);
    assert!(
        bad.is_empty(),
        "sentences with padding:\n{}",
        bad.join("\n")
    );
}

/// Each string literal on a line of Rust source (escapes kept as written).
fn literals(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        }
        if b[i] == b'\'' {
            // A char literal ('"' included) or a lifetime: skip the quote and its char.
            i += if b.get(i + 2) == Some(&b'\'') { 3 } else { 1 };
            continue;
        }
        if b[i] == b'"' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push(&line[start..j.min(b.len())]);
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_string_literal_in_the_product_carries_padding() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for c in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let src = c.path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    assert!(files.len() > 100, "the sources were found: {}", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            // A literal holding line breaks is a layout on purpose (a help text's
            // examples beside their comments, a fixture of a kernel log).
            for lit in literals(line).into_iter().filter(|l| !l.contains("\\n")) {
                if !padded_sentences(lit).is_empty() {
                    bad.push(format!("{}:{}: {lit}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "literals with padding:\n{}", bad.join("\n"));
}
