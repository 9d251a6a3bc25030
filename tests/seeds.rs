//! The seeds' studies, each run by its one command at a tiny scale: the command runs end
//! to end on the real engines and prints the seed's tables in the seed's shape, with the
//! seed's published ratios beside ours. The figures themselves are this machine's and
//! are not judged; the shape, the engines and the seed's columns are.

use std::path::Path;
use std::process::Command;

/// Runs `bench/seeds/NNN.sh` with `env`: its standard output and whether it succeeded.
fn run_seed(script: &str, store: &Path, env: &[(&str, &str)]) -> (String, bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("bash")
        .arg(root.join("bench/seeds").join(script))
        .env("PLUMB", env!("CARGO_BIN_EXE_plumb"))
        .env("STORE", store)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs `bench/seeds/NNN.sh` with `env`, returns its standard output; fails the test with
/// its standard error when it fails.
fn seed_command(script: &str, store: &Path, env: &[(&str, &str)]) -> String {
    let (out, ok, err) = run_seed(script, store, env);
    assert!(ok, "{script} failed:\n{out}\n{err}");
    out
}

/// The cells of the Markdown row that starts with `| NAME |` in the table after `title`.
fn row<'a>(out: &'a str, title: &str, name: &str) -> Vec<&'a str> {
    let table = out
        .split(title)
        .nth(1)
        .unwrap_or_else(|| panic!("no table {title:?} in\n{out}"));
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| {name} |")))
        .unwrap_or_else(|| panic!("no row {name} under {title:?} in\n{out}"));
    line.trim_matches('|').split('|').map(str::trim).collect()
}

/// The list every seed's output ends with: what still differs from the seed, and why.
fn differences(out: &str) -> &str {
    out.split("### What still differs from the seed, and why")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of differences in\n{out}"))
}

#[test]
fn seed_000_runs_the_seeds_sequence_and_prints_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seed000.sqlite");
    // 4k and 80k rows at 100-byte values, half that at 200, half-second query steps.
    let out = seed_command("000.sh", &store, &[("SCALE", "0.005")]);
    for (size, value) in [
        ("cached", 100),
        ("iobound", 100),
        ("cached", 200),
        ("iobound", 200),
    ] {
        let title = format!("### {size}, {value}-byte values: ops/second");
        for engine in ["splinterdb", "rocksdb-leveled", "rocksdb-universal"] {
            let cells = row(&out, &title, engine);
            assert_eq!(cells.len(), 9, "{cells:?}");
            // insert, point and range ops/s; write-amp may be n/a at this size (a
            // memtable never flushed during the insert phase writes nothing).
            for c in &cells[1..4] {
                let v: f64 = c
                    .replace(',', "")
                    .parse()
                    .unwrap_or_else(|_| panic!("{engine} {size}: {c:?} is not a figure in\n{out}"));
                assert!(v > 0.0, "{engine} {size}: {c}");
            }
            // Ours beside the seed's: "0.97 / 1.10".
            for (i, c) in cells[5..].iter().enumerate() {
                let (ours, seed) = c.split_once(" / ").expect("ours / seed's");
                assert!(seed.parse::<f64>().is_ok(), "{c}");
                assert!(
                    ours.parse::<f64>().is_ok() || (i == 3 && ours == "n/a"),
                    "{c}"
                );
            }
        }
        // The base is 1 against itself, ours and the seed's alike.
        assert_eq!(row(&out, &title, "rocksdb-leveled")[5], "1.00 / 1.00");
        let io = format!("IO reads per query, {size}, {value}-byte values");
        assert_eq!(row(&out, &io, "splinterdb").len(), 5);
        // The CPU per query that explains a cached difference: the base is 1.00.
        let cpu = format!("CPU µs per query, {size}, {value}-byte values");
        assert_eq!(row(&out, &cpu, "rocksdb-leveled")[2], "1.00");
    }
    // The seed's own ratios, from its published figures: SplinterDB inserted 1.10× and
    // ranged 0.41× RocksDB leveled's rate when cached; 1.29 IO reads per point query.
    let cached = row(
        &out,
        "### cached, 100-byte values: ops/second",
        "splinterdb",
    );
    assert!(
        cached[5].ends_with("/ 1.10") && cached[7].ends_with("/ 0.41"),
        "{cached:?}"
    );
    assert_eq!(
        row(&out, "IO reads per query, iobound, 100-byte", "splinterdb")[2],
        "1.29"
    );
    // SplinterDB at 2B rows against leveled at 2B (308,740 / 181,556 inserts/s), and
    // universal at 1.5B against leveled at 1.5B (393,873 / 205,736).
    let io = "### iobound, 100-byte values: ops/second";
    assert!(row(&out, io, "splinterdb")[5].ends_with("/ 1.70"));
    assert!(row(&out, io, "rocksdb-universal")[5].ends_with("/ 1.91"));
    let diff = differences(&out);
    assert!(
        diff.contains("- scale: cached 4,000 rows, iobound 80,000 rows"),
        "{diff}"
    );
    assert!(diff.contains("- universal's rows: "), "{diff}");
    // 80k rows fit under the memory limit: the list says the IO-bound size was not.
    assert!(
        diff.contains("- iobound at 100-byte values: not IO-bound"),
        "{diff}"
    );
}

#[test]
fn seed_001_runs_iobuf_beside_iodir_and_prints_the_seeds_iostat_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seed001.sqlite");
    // The release plumb links only (RELEASES: the others are built outside CI, and the
    // script drops them and the LRU targets of 8.1.1), 25k keys, 0.6 s steps, the disk's
    // own max_sectors_kb and read_ahead_kb (a test does not retune a shared device).
    let out = seed_command(
        "001.sh",
        &store,
        &[
            ("PARTS", "iostat"),
            ("SCALE", "0.01"),
            ("RELEASES", "11.8.1"),
            ("MAX_SECTORS_KB", ""),
            ("READ_AHEAD_KB", "own"),
        ],
    );
    // The suite's heading names the disk's queue settings as the runs recorded them.
    let ra = std::fs::read_to_string(format!(
        "/sys/class/block/{}/queue/read_ahead_kb",
        data_disk("/var/tmp")
    ))
    .unwrap();
    assert!(
        out.contains(&format!(
            "the data disk's read_ahead_kb {}, max_sectors_kb ",
            ra.trim()
        )),
        "{out}"
    );
    for (case, seed_rareq, seed_rel) in [("iobuf", "34.2", "0.65"), ("iodir", "113.8", "1.00")] {
        let title = format!("### {case}: iostat during overwrite");
        let cells = row(&out, &title, "11.8.1");
        assert_eq!(cells.len(), 13, "{cells:?}");
        // 11.8.1 stands for the seed's 9.9.3, whose figures sit beside ours.
        assert_eq!(cells[1], "9.9");
        assert_eq!(cells[10], seed_rareq);
        // Relative to the release before 8.6, which this run lacks: ours n/a, the seed's
        // from its table.
        assert_eq!(cells[11], format!("n/a / {seed_rel}"));
        // The device was read: its write columns are figures, not n/a.
        assert!(
            cells[6].replace(',', "").parse::<f64>().is_ok(),
            "{cells:?}"
        );
    }
    let title = "### overwrite: ops/s over the whole step and its last";
    let cells = row(&out, title, "iobuf");
    assert_eq!(cells[1], "11.8.1");
    // The readahead the seed set is the one RocksDB put in force, with the cache it named.
    assert_eq!((cells[2], cells[4]), ("2048 KiB", "hyperclock"));
    for c in [cells[5], cells[6]] {
        assert!(
            c.replace(',', "").parse::<f64>().unwrap() > 0.0,
            "{cells:?}"
        );
    }
}

/// The whole disk under `dir` (a partition's parent), as bench/seeds/001.sh finds it.
fn data_disk(dir: &str) -> String {
    let o = Command::new("df")
        .args(["--output=source", dir])
        .output()
        .unwrap();
    let source = String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string();
    let dev = std::fs::canonicalize(&source).unwrap();
    let name = dev.file_name().unwrap().to_string_lossy().into_owned();
    let class = Path::new("/sys/class/block").join(&name);
    if class.join("queue").is_dir() {
        return name;
    }
    let real = std::fs::canonicalize(&class).unwrap();
    real.parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn seed_001_study_prints_the_seeds_relative_qps_by_test_for_each_case() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seed001.sqlite");
    // Speedb and the other releases are built outside CI: the study's RocksDB targets
    // on the release plumb links, each ratio over its own figures (BASE), 25k keys.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("examples/seeds/001-study.toml")).unwrap();
    let (head, rest) = text.split_once("[[target]]").unwrap();
    let (targets, workload) = rest.split_once("[[workload]]").unwrap();
    let kept: Vec<&str> = targets
        .split("[[target]]")
        .filter(|block| !block.contains(r#"engine = "speedb""#))
        .collect();
    // byrx, iobuf and iodir, each with its Speedb pair left out.
    assert_eq!(kept.len(), 3, "{targets}");
    let suite = format!(
        "{head}[[target]]{}[[workload]]{workload}",
        kept.join("[[target]]")
    );
    let file = dir.path().join("001-study.toml");
    std::fs::write(&file, suite).unwrap();
    let out = seed_command(
        "001.sh",
        &store,
        &[
            ("PARTS", "study"),
            ("SCALE", "0.01"),
            ("STUDY_SUITE", file.to_str().unwrap()),
            ("STUDY_RELEASES", "11.8.1"),
            ("BASE", "rocksdb"),
        ],
    );
    for case in ["byrx", "iobuf", "iodir"] {
        let title =
            format!("### {case}: relative QPS by test (each version's ops/s / rocksdb.11.8.1's)");
        let cells = row(&out, &title, "rocksdb.11.8.1");
        // The seed's five tests, the base's own ops/s in each.
        assert_eq!(cells.len(), 6, "{cells:?}");
        for c in &cells[1..] {
            let n = c
                .strip_suffix(" ops/s")
                .unwrap_or_else(|| panic!("{cells:?}"));
            assert!(
                n.replace(',', "").parse::<f64>().unwrap() > 0.0,
                "{cells:?}"
            );
        }
        let title = "### Throughput over time";
        let table = out.split(title).nth(1).unwrap();
        for test in ["fillseq", "overwrite"] {
            let prefix = format!("| {case} | rocksdb.11.8.1 | {test} |");
            assert!(
                table.lines().any(|l| l.starts_with(&prefix)),
                "{prefix}\n{out}"
            );
        }
    }
    for case in ["iobuf", "iodir"] {
        let title = format!("### {case}: sources of write stalls during overwrite");
        for cause in [
            "pending-compaction-bytes-delays",
            "total-delays",
            "stall%",
            "Comp(sec)",
        ] {
            let cells = row(&out, &title, cause);
            assert!(
                cells[1].replace(',', "").parse::<f64>().is_ok(),
                "{cells:?}"
            );
        }
        // plumb's split of the stall time: RocksDB's limits were read every second, so
        // each cause has a figure (0.00 when nothing stalled), never n/a.
        for cause in [
            "l0-file-count-limit",
            "pending-compaction-bytes",
            "unattributed",
        ] {
            let cells = row(&out, &title, &format!("stall s: {cause}"));
            assert!(cells[1].parse::<f64>().is_ok(), "{cells:?}");
        }
    }
    let diff = differences(&out);
    for item in [
        "- Speedb: ",
        "- RocksDB releases: 11.8.1 ran here",
        "- threads: 2 ",
        "- stall time by cause: ",
    ] {
        assert!(diff.contains(item), "{item}\n{diff}");
    }
}

#[test]
fn seed_004_sets_this_disk_under_the_decks_sample_disk_results() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seed004.sqlite");
    let data = dir.path().join("data");
    let out = seed_command(
        "004.sh",
        &store,
        &[
            ("QUICK", "1"),
            ("SIZE", "64M"),
            ("DIR", data.to_str().unwrap()),
            ("RATED_RPM", "7200"),
        ],
    );
    let title = "### Sample disk results";
    // The deck's own rows, as published (it tabulated no rewrite), then ours.
    assert_eq!(
        row(&out, title, "3"),
        [
            "3",
            "125",
            "119",
            "–",
            "371 @ 16GB",
            "60 @ 100GB",
            "10855/s",
            "RAID0"
        ]
    );
    let table = out.split(title).nth(1).unwrap();
    let cells = |marker: &str| -> Vec<String> {
        table
            .lines()
            .find(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("no row {marker:?} in\n{out}"))
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let figure = |c: &str| -> f64 {
        let f = c.split([' ', '/']).next().unwrap().replace(',', "");
        f.parse().unwrap_or_else(|_| panic!("{c:?}"))
    };
    // 8 KiB sequential (the deck's dd bs=8k), rewrite, seeks and commits: all measured.
    let ours = cells("this machine:");
    assert_eq!(ours.len(), 8, "{ours:?}");
    for (i, c) in ours[1..7].iter().enumerate() {
        assert!(figure(c) > 0.0, "column {i}: {c:?}");
    }
    assert!(
        ours[4].ends_with("@ 64MB") && ours[5].ends_with("@ 64MB"),
        "{ours:?}"
    );
    // The same at 1 MiB requests: sequential and rewrite only.
    let mib = cells("this machine, 1 MiB requests:");
    assert_eq!(mib.len(), 8, "{mib:?}");
    for c in &mib[1..4] {
        assert!(figure(c) > 0.0, "{mib:?}");
    }
    assert_eq!(&mib[4..7], ["–", "–", "–"], "{mib:?}");
    // The probe's own seek model at the rated RPM: 1 / (4.17 ms + 8.5 ms) = 79 IOPS,
    // the 8.5 ms said to be assumed.
    assert!(
        out.contains("Seek model: the deck's model of a 7200 rpm disk with 8.5 ms seeks (assumed")
            && out.contains("= 79; measured read-only seeks are"),
        "{out}"
    );
    assert!(
        out.contains("Commit rate judged against the device"),
        "{out}"
    );
    // The deck's read-ahead reading, from the probe, one way or the other, naming the
    // device's setting, at both sizes.
    for size in ["8k", "1m"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("Read-ahead, {size} buffered:")))
            .unwrap_or_else(|| panic!("no read-ahead line at {size} in\n{out}"));
        assert!(
            (line.contains("writes faster than reads") || line.contains("reads at least as fast"))
                && line.contains("read_ahead_kb"),
            "{line}"
        );
    }
    // What still differs, with the figures of this run: the file is 64 MiB, not 2 × RAM.
    let diffs = out
        .split("Differences from the deck:")
        .nth(1)
        .unwrap_or_else(|| panic!("no differences list in\n{out}"));
    let items: Vec<&str> = diffs.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(items.len() >= 6, "{items:?}");
    for want in [
        "2008-2012",
        "O_DIRECT",
        "lseek",
        "fdatasync",
        "The file is 64MB, not 2 × RAM",
    ] {
        assert!(items.iter().any(|l| l.contains(want)), "{want}: {items:?}");
    }
    assert!(items.iter().any(|l| l.contains("--quick")), "{items:?}");
}

#[test]
fn seed_003_runs_the_insert_benchmark_over_releases_each_step_relative_to_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seed003.sqlite");
    // 1000 and 12000 rows, 400 inserts, fractions of a second per query step, on
    // PostgreSQL 12, 13, 14, 15 (Debian's) and 18, and on MariaDB 10.11.18 and 10.11.19
    // with InnoDB and MyRocks (scripts/test.sh fetches them).
    let (out, ok, err) = run_seed("003.sh", &store, &[("SCALE", "0.002")]);
    // A query step whose inserts fell below 95% of their rate fails the run (the
    // insert benchmark's rule, which a busy machine can trip): said in its cell.
    assert!(
        ok || out.contains("| failed"),
        "003.sh failed:\n{out}\n{err}"
    );
    let families = [
        (
            "PostgreSQL",
            "12",
            "| 12 | 13 | 14 | 15 | 18 |",
            5,
            "~1 (no CPU regression 12 → 15)",
        ),
        (
            "InnoDB (MariaDB)",
            "10.11.18",
            "| 10.11.18 | 10.11.19 |",
            2,
            "~0.64",
        ),
        (
            "MyRocks (MariaDB)",
            "10.11.18",
            "| 10.11.18 | 10.11.19 |",
            2,
            "~0.64 (as InnoDB)",
        ),
    ];
    for (family, base, heads, n, seed_l_i0) in families {
        for size in ["cached", "iobound"] {
            let title = format!(
                "### {size}: {family} rate (inserts/s for l.*, queries/s for q*), relative to \
                 {base}"
            );
            let table = out
                .split(&title)
                .nth(1)
                .unwrap_or_else(|| panic!("no table {title:?} in\n{out}"));
            assert!(
                table.contains(&format!(
                    "| step | phase {heads} the seed: newest / oldest |"
                )),
                "{out}"
            );
            // The seed's phases, in its order and words, and nothing of the later
            // sequence (no l.i2, no point queries).
            let steps: Vec<&str> = table
                .split("\n\n")
                .nth(1)
                .unwrap()
                .lines()
                .skip(2)
                .map(|l| l.split('|').nth(1).unwrap().trim())
                .collect();
            assert_eq!(steps, ["l.i0", "l.x", "l.i1", "qr100", "qr500", "qr1000"]);
            let cells = row(&out, &title, "l.i1");
            assert_eq!(cells[1], "insert-only, 3 secondary indexes");
            for step in ["l.i0", "l.x", "l.i1"] {
                let cells = row(&out, &title, step);
                assert_eq!(cells.len(), 3 + n, "{cells:?}");
                let first: f64 = cells[2].replace(',', "").parse().unwrap_or_else(|_| {
                    panic!(
                        "{size} {step}: {base}'s rate {:?} is not a figure",
                        cells[2]
                    )
                });
                assert!(first > 0.0);
                for c in &cells[3..2 + n] {
                    assert!(
                        c.parse::<f64>().is_ok_and(|r| r > 0.0),
                        "{family} {size} {step}: {c}"
                    );
                }
            }
            if size == "cached" {
                assert_eq!(row(&out, &title, "l.i0")[2 + n], seed_l_i0, "{family}");
            }
            for t in [
                "server CPU µs per operation",
                "device reads per operation (rpq)",
            ] {
                assert_eq!(
                    row(&out, &format!("### {size}: {family} {t}"), "l.i1").len(),
                    2 + n,
                    "{t}"
                );
            }
        }
    }
    let diff = differences(&out);
    for what in [
        "- MySQL: ",
        "MariaDB 10.11.18 → 10.11.19",
        "- PostgreSQL: releases 12, 13, 14, 15, 18",
        "- scale: cached 1,000 rows, iobound 12,000 rows, l.i1 400 inserts",
        "- l.i1's commits: ",
    ] {
        assert!(diff.contains(what), "{what:?} in {diff}");
    }
}

#[test]
fn seed_002_reads_perf_stat_per_query_across_releases_of_each_server() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seed002.sqlite");
    // 5000 rows, half-second steps after a half-second warm-up, 1-second perf groups,
    // on PostgreSQL 12, 15 and 18 and on MariaDB 10.11.18 and 10.11.19 with InnoDB and
    // MyRocks (scripts/test.sh fetches them).
    let out = seed_command("002.sh", &store, &[("SCALE", "0.01")]);
    let title = "### QPS: each release relative to its family's oldest";
    let table = out
        .split(title)
        .nth(1)
        .unwrap_or_else(|| panic!("no table {title:?} in\n{out}"));
    assert!(
        table.contains(
            "| step | pg 15 / 12 | pg 18 / 12 | innodb 10.11.19 / 10.11.18 | myrocks 10.11.19 / 10.11.18 \
             | seed: InnoDB 8.0.39 / 5.6.51 | seed: MyRocks 8.0.32 / 5.6.35 |"
        ),
        "{out}"
    );
    for (step, seed) in [
        ("scan", ["0.69", "0.70"]),
        ("insert", ["1.11", "0.79"]),
        ("point-query", ["0.83", "0.89"]),
        ("update-index", ["3.61", "0.91"]),
    ] {
        let cells = row(&out, title, step);
        assert_eq!(cells.len(), 7, "{cells:?}");
        // Every release of ours has a relative QPS (its runs were counted by perf) and
        // its 95% interval from the suite's three repeats around it: "0.97 (0.91–1.03)".
        for c in &cells[1..5] {
            let (rel, ci) = c.split_once(' ').unwrap_or((c, ""));
            let rel: f64 = rel
                .parse()
                .unwrap_or_else(|_| panic!("{step}: {c} in\n{out}"));
            let (lo, hi) = ci
                .trim_matches(['(', ')'])
                .split_once('–')
                .unwrap_or_else(|| panic!("{step}: no interval in {c:?}"));
            let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
            assert!(rel > 0.0 && lo <= rel && rel <= hi, "{step}: {c}");
        }
        assert_eq!(cells[5..], seed, "{step}: the seed's published ratios");
        // CPU per query relative, from the same tables.
        let cpu = row(&out, "### server CPU per query (cpu/o)", step);
        assert!(
            cpu[1..5]
                .iter()
                .all(|c| c.split(' ').next().unwrap().parse::<f64>().is_ok()),
            "{cpu:?}"
        );
    }
    // One perf stat table per step and family, counted in turn, with the seed's figures
    // beside where the family is the seed's.
    let t = "### point-query: perf stat per query, innodb (server), relative to 10.11.18 \
             (each counted in turn, exact over its own seconds)";
    let qps = row(&out, t, "QPS");
    assert_eq!(qps.len(), 4, "{qps:?}");
    assert_eq!(
        qps[3], "0.83",
        "the seed's InnoDB point-query QPS beside ours"
    );
    let tc = row(&out, t, "task-clock-us");
    assert!(tc[1].parse::<f64>().is_ok(), "the base per query: {tc:?}");
    assert!(
        tc[2].contains(" (") && tc[2].contains('–'),
        "an interval: {tc:?}"
    );
    let pg = "### scan: perf stat per query, pg (server), relative to 12";
    assert_eq!(row(&out, pg, "cpu/o").len(), 4, "12 (per query), 15, 18");
    // What still differs from the seed is listed with its reason, the scale as run.
    let diff = differences(&out);
    for what in [
        "- servers: ",
        "- scale: 2 clients on 1 table of 5,000 rows",
        "- the CPU: ",
    ] {
        assert!(diff.contains(what), "{what:?} in {diff}");
    }
    assert!(diff.contains("3 runs a release") && diff.contains("direction only"));
    // Each release reads its counters: a verdict, or the PMU's absence, said.
    assert!(
        out.contains("pg 18: ") && out.contains("myrocks 10.11.19: "),
        "{out}"
    );
}
