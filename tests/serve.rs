//! `plumb serve` in a real browser (headless Chromium from Debian's package, driven
//! over the DevTools protocol by `headless_chrome`), over a generated history holding
//! one known change (plumb_serve::generate): `plumb check` fails on it and keeps it, the
//! Changes page shows it at the right run with its cost, setting it to `expected`
//! through the page's form is kept, and `plumb check` on the next night then passes.
//! The same pages over a PostgreSQL store (a throwaway server) answer without ever
//! showing the store's password; writes need the token; hostile text renders as text.
//!
//! Screenshots of each page go to `$CARGO_TARGET_TMPDIR/serve-screenshots/`. Nothing
//! here is timed: each wait polls for a state with a generous deadline, which only
//! bounds how long a broken page takes to fail.

use headless_chrome::protocol::cdp::Page as Cdp;
use headless_chrome::{Browser, LaunchOptions, Tab};
use plumb_serve::generate::{self, Change, Generated, Spec};
use plumb_store::Store;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// The browser and the servers are heavy on this 2-CPU machine: one test at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Debian's Chromium, installed by scripts/setup.sh.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The token the servers here are started with.
const TOKEN: &str = "t0ken-for-the-serve-test";

/// Hostile text, as a tag and as a note: it must render as these characters.
const HOSTILE: &str = "<script>alert(1)</script>";

/// Defines `alert` before any page script runs, so a script injected by a page would
/// leave a trace instead of a dialog that blocks the browser.
const ALERT_TRAP: &str = "window.__alerts = []; \
     window.alert = function (m) { window.__alerts.push(String(m)); };";

/// The history every test here serves: plan 0 steady, plan 1 falling to 0.8× on its
/// newest night (7 nights × 3 repeats of readrandom each). Plans are written night by
/// night, plan 1 after plan 0, so the store's newest group is the changed night: the
/// one `plumb check` judges by default.
fn spec() -> Spec {
    Spec {
        plans: 2,
        groups: 7,
        repeats: 3,
        steps: vec!["readrandom".into()],
        intervals: 20,
        change: Some(Change {
            plan: 1,
            at_group: 6,
            step: "readrandom".into(),
            factor: 0.8,
        }),
        host: "nightly-7".into(),
        seed: 60,
        ..Spec::default()
    }
}

fn shots_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `plumb ARGS --store STORE`, as the store is given (a path or a URL).
fn plumb(store: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .arg("--store")
        .arg(store)
        .env_remove("PLUMB_SERVE_TOKEN")
        .output()
        .expect("run plumb")
}

fn out(o: &std::process::Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        common::stderr(o)
    )
}

/// A running `plumb serve`, killed when dropped.
struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT` (no trailing slash).
    base: String,
    /// Its first line on stdout.
    banner: String,
    /// Its stderr (one line per request).
    log: PathBuf,
}

impl Served {
    /// Starts `plumb serve --store STORE --listen 127.0.0.1:0 --token T` (port 0: the
    /// OS picks a free one, so no other process can take it between pick and bind) and
    /// reads the URL it prints.
    fn start(store: &str, dir: &Path) -> Served {
        let log = dir.join(format!("serve-{}.log", std::process::id()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--token",
                TOKEN,
                "--store",
            ])
            .arg(store)
            .env_remove("PLUMB_SERVE_TOKEN")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start plumb serve");
        let mut banner = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut banner)
            .unwrap();
        let Some(url) = banner
            .strip_prefix("plumb serve: ")
            .and_then(|r| r.split_whitespace().next())
        else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "plumb serve printed no URL ({banner:?}); stderr:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        };
        Served {
            base: url.trim_end_matches('/').to_string(),
            banner: banner.clone(),
            child,
            log,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn get(&self, path: &str) -> Http {
        http(&self.base, "GET", path, None)
    }

    fn post(&self, path: &str, form: &str) -> Http {
        http(&self.base, "POST", path, Some(form))
    }

    fn json(&self, path: &str) -> Value {
        let sep = if path.contains('?') { '&' } else { '?' };
        let r = self.get(&format!("{path}{sep}format=json"));
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{path}: {e}: {}", r.body))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
struct Http {
    status: u16,
    head: String,
    body: String,
}

/// One HTTP/1.0 request (the answer is then never chunked, and the server closes the
/// connection after it).
fn http(base: &str, method: &str, path: &str, form: Option<&str>) -> Http {
    let host = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.0\r\nHost: {host}\r\n");
    if let Some(f) = form {
        req.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            f.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(form.unwrap_or(""));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{method} {path}: no status line in {head:?}"));
    Http {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// Percent-encodes a form value.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn browser() -> Browser {
    Browser::new(
        LaunchOptions::default_builder()
            .path(Some(PathBuf::from(CHROMIUM)))
            // Root in a container: Chromium's sandbox needs user namespaces it lacks.
            .sandbox(false)
            .headless(true)
            .window_size(Some((1366, 1500)))
            // The test runs plumb check and writes nights between pages.
            .idle_browser_timeout(Duration::from_secs(900))
            .build()
            .unwrap(),
    )
    .unwrap_or_else(|e| panic!("start {CHROMIUM} (apt-get install chromium): {e}"))
}

fn tab(b: &Browser) -> std::sync::Arc<Tab> {
    let t = b.new_tab().unwrap();
    t.set_default_timeout(Duration::from_secs(60));
    t.call_method(Cdp::AddScriptToEvaluateOnNewDocument {
        source: ALERT_TRAP.into(),
        world_name: None,
        include_command_line_api: None,
        run_immediately: None,
    })
    .unwrap();
    t
}

/// Opens `url` and waits for its document.
fn open(t: &Tab, url: &str) {
    t.navigate_to(url).unwrap().wait_until_navigated().unwrap();
    t.wait_for_element("body").unwrap();
}

/// The value of a script in the page (through JSON: the protocol hands arrays and
/// objects back as references, not values).
fn eval(t: &Tab, js: &str) -> Value {
    let r = t
        .evaluate(&format!("JSON.stringify(({js}))"), false)
        .unwrap_or_else(|e| panic!("{js}: {e}"));
    match r.value {
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// Polls `js` until it is true; fails with what the page holds after `secs`.
fn wait_true(t: &Tab, js: &str, secs: u64) {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if eval(t, js) == Value::Bool(true) {
            return;
        }
        if Instant::now() > until {
            panic!(
                "never true: {js}\nat {}:\n{}",
                t.get_url(),
                eval(t, "document.body ? document.body.innerText : ''")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn text(t: &Tab, selector: &str) -> String {
    t.wait_for_element(selector)
        .unwrap_or_else(|e| panic!("{selector} on {}: {e}", t.get_url()))
        .get_inner_text()
        .unwrap()
}

/// A PNG of the page as shown, under the test's output.
fn shot(t: &Tab, name: &str) -> PathBuf {
    let png = t
        .capture_screenshot(Cdp::CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    let p = shots_dir().join(format!("{name}.png"));
    std::fs::write(&p, png).unwrap();
    println!("screenshot: {}", p.display());
    p
}

/// No script of a page's data ran: no alert, the title is the page's own, and no
/// script element holds the hostile text.
fn no_script_ran(t: &Tab, title: &str) {
    assert_eq!(eval(t, "window.__alerts.length"), 0, "{}", t.get_url());
    assert_eq!(eval(t, "document.title"), Value::from(title));
    assert_eq!(
        eval(
            t,
            "[...document.scripts].some(s => s.textContent.includes('alert(1)'))"
        ),
        Value::Bool(false),
        "a script element holds the hostile text on {}",
        t.get_url()
    );
}

/// The percentages a text shows (`-19.9%`, `−20%`).
fn percents(text: &str) -> Vec<f64> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|w| w.strip_suffix('%'))
        .filter_map(|w| w.replace('−', "-").replace('+', "").parse().ok())
        .collect()
}

fn write_history(store: &str) -> (Spec, Generated) {
    let mut s = Store::open(Path::new(store)).unwrap();
    let spec = spec();
    let g = generate::history(&mut s, &spec).unwrap();
    (spec, g)
}

/// The one change kept, from the Changes page's JSON.
fn the_change(served: &Served) -> Value {
    let page = served.json("/changes");
    let changes = page["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "one change kept: {page:#}");
    changes[0].clone()
}

/// The kept change is the one generated: plan 1's readrandom, starting at its newest
/// night's first run, at 0.8× with user CPU per op named as its cost.
fn assert_is_the_generated_change(c: &Value, g: &Generated) {
    let night = &g.plans[1].groups[6];
    assert_eq!(c["plan"], g.plans[1].identity.as_str(), "{c:#}");
    assert_eq!(c["step"], "readrandom", "{c:#}");
    assert_eq!(c["metric"], "ops_sec", "{c:#}");
    assert_eq!(c["direction"], "regression", "{c:#}");
    assert_eq!(c["at_run"], night[0], "{c:#}");
    assert_eq!(c["last_run"], *night.last().unwrap(), "{c:#}");
    let ratio = c["ratio"].as_f64().unwrap();
    assert!((ratio - 0.8).abs() < 0.03, "ratio {ratio}: {c:#}");
    let cause = c["cause"].as_str().unwrap_or("");
    assert!(cause.contains("usr_us_op"), "cost: {cause:?}");
    assert_eq!(c["host"], "nightly-7", "{c:#}");
}

#[test]
fn a_change_is_found_triaged_in_the_browser_and_moves_the_base() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let store_path = dir.path().join("serve.sqlite");
    let store = store_path.to_str().unwrap().to_string();
    let (spec, g) = write_history(&store);
    let night = g.plans[1].groups[6].clone();

    // 2. The gate fails on the change and keeps it.
    let o = plumb(&store, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));

    // 3. The pages, in a browser.
    let served = Served::start(&store, dir.path());
    assert!(served.banner.contains("serve.sqlite"), "{}", served.banner);
    let change = the_change(&served);
    assert_is_the_generated_change(&change, &g);
    let id = change["id"].as_i64().unwrap();

    let b = browser();
    let t = tab(&b);

    // Runs: every run, newest first, the newest the changed night's last.
    open(&t, &served.url("/runs"));
    wait_true(&t, "!!document.querySelector('#runs tbody tr')", 60);
    let rows = eval(
        &t,
        "[...document.querySelectorAll('#runs tbody tr')].map(r => r.id)",
    );
    let rows: Vec<String> = serde_json::from_value(rows).unwrap();
    assert_eq!(rows.len(), 42, "{rows:?}");
    assert_eq!(rows[0], format!("run-{}", night.last().unwrap()));
    assert!(text(&t, &format!("#run-{}", night[0])).contains("nightly"));
    no_script_ran(&t, "Runs · plumb");
    shot(&t, "sqlite-runs");

    // Run: the changed night's first run, its one-line answer and its links.
    open(&t, &served.url(&format!("/run/{}", night[0])));
    let body = text(&t, "body");
    assert!(body.contains("readrandom"), "{body}");
    assert!(body.contains("rocksdb"), "{body}");
    let hist = t.wait_for_element("#history").unwrap();
    let href = hist.get_attribute_value("href").unwrap().unwrap();
    assert!(href.contains(&g.plans[1].identity), "{href}");
    assert!(t.find_element("#base").is_ok(), "no link to its base");
    shot(&t, "sqlite-run");

    // Compare: the changed night against its plan's history is a regression, linked
    // to the kept change.
    open(&t, &served.url(&format!("/compare?new=g{}", night[0])));
    let row = text(&t, "#verdict-readrandom");
    assert!(
        eval(
            &t,
            "document.querySelector('#verdict-readrandom').classList.contains('bad')"
        ) == Value::Bool(true),
        "not marked a regression: {row}"
    );
    assert!(row.contains(&format!("change #{id}")), "{row}");
    assert!(row.contains("usr_us_op"), "the cost that moved: {row}");
    shot(&t, "sqlite-compare");

    // History: the plan's seven points of readrandom, charted.
    open(
        &t,
        &served.url(&format!(
            "/history?plan={}&step=readrandom&metric=ops_sec",
            g.plans[1].identity
        )),
    );
    let section = text(&t, "#step-readrandom");
    assert!(section.contains("readrandom"), "{section}");
    assert!(
        eval(&t, "!!document.querySelector('#step-readrandom svg')") == Value::Bool(true),
        "no chart"
    );
    let h = served.json(&format!(
        "/history?plan={}&step=readrandom&metric=ops_sec",
        g.plans[1].identity
    ));
    assert_eq!(h["history"]["points"].as_array().unwrap().len(), 7, "{h:#}");
    shot(&t, "sqlite-history");

    // Changes: the change at the right run, its ratio and its cost; set it expected
    // through the row's form, with a hostile note.
    open(&t, &served.url("/changes"));
    let sel = format!("#change-{id}");
    let row = text(&t, &sel);
    assert_eq!(
        eval(&t, "document.querySelectorAll('#changes tbody tr').length"),
        1
    );
    assert!(row.contains("untriaged"), "{row}");
    assert!(row.contains("regression"), "{row}");
    assert!(row.contains("usr_us_op"), "cost named: {row}");
    assert!(
        percents(&row).iter().any(|p| (p + 20.0).abs() < 3.0),
        "ratio ≈ -20%: {row}"
    );
    let at = eval(
        &t,
        &format!(
            "document.querySelector('{sel} a[href=\"/run/{}\"]') !== null",
            night[0]
        ),
    );
    assert_eq!(
        at,
        Value::Bool(true),
        "no link to run {} in {row}",
        night[0]
    );
    shot(&t, "sqlite-changes");

    eval(
        &t,
        &format!("document.querySelector('{sel} select[name=state]').value = 'expected'"),
    );
    t.find_element(&format!("{sel} textarea[name=note]"))
        .unwrap()
        .click()
        .unwrap();
    t.type_str(HOSTILE).unwrap();
    t.find_element(&format!("{sel} input[name=token]"))
        .unwrap()
        .click()
        .unwrap();
    t.type_str(TOKEN).unwrap();
    t.find_element(&format!("{sel} button[type=submit]"))
        .unwrap()
        .click()
        .unwrap();
    let state_is = |s: &str| {
        format!(
            "(() => {{ const e = document.querySelector('{sel} [data-state]'); \
             return !!e && e.dataset.state === '{s}'; }})()"
        )
    };
    wait_true(&t, &state_is("expected"), 60);
    // Reload: the state is the store's.
    open(&t, &served.url("/changes"));
    wait_true(&t, &state_is("expected"), 60);
    let row = text(&t, &sel);
    assert!(row.contains(HOSTILE), "the note as text: {row}");
    no_script_ran(&t, "Changes · plumb");
    shot(&t, "sqlite-changes-expected");
    let kept = the_change(&served);
    assert_eq!(kept["state"], "expected", "{kept:#}");
    assert_eq!(kept["note"], HOSTILE, "{kept:#}");

    // 6. A write without the token (or with a wrong one) is refused and changes nothing.
    for form in [
        format!("id={id}&state=fixed&note=sneaky"),
        format!("id={id}&state=fixed&note=sneaky&token=wrong"),
        format!("id={id}&state=fixed&note=sneaky&token="),
    ] {
        let r = served.post("/changes", &form);
        assert_eq!(r.status, 403, "{form}: {}", r.body);
    }
    let still = the_change(&served);
    assert_eq!(still["state"], "expected", "{still:#}");
    assert_eq!(still["note"], HOSTILE, "{still:#}");

    // 4. The next night at the new level: the expected change moved the base.
    {
        let mut s = Store::open(&store_path).unwrap();
        let next = generate::append_group(&mut s, &spec, 1, 0.8).unwrap();
        assert_eq!(next.len(), 3);
    }
    let o = plumb(&store, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));

    // 6. A run tagged with hostile text renders it as text.
    let hostile_id = {
        let mut s = Store::open(&store_path).unwrap();
        let hostile = Spec {
            plans: 3,
            tag: HOSTILE.into(),
            change: None,
            ..spec.clone()
        };
        generate::night(&mut s, &hostile, 2, 0, 1.0).unwrap()[0]
    };
    open(&t, &served.url("/runs"));
    let row = text(&t, &format!("#run-{hostile_id}"));
    assert!(row.contains(HOSTILE), "the tag as text: {row}");
    no_script_ran(&t, "Runs · plumb");
    shot(&t, "sqlite-runs-hostile");
    open(&t, &served.url(&format!("/run/{hostile_id}")));
    assert!(text(&t, "body").contains(HOSTILE));
    assert_eq!(eval(&t, "window.__alerts.length"), 0);

    // 7. A bisect for the change (`plumb bisect --change`, over a repository whose one
    // commit after the good one is the regression): the change's row links to the
    // bisect's page, which shows its table and links back to the change.
    let (repo, c) = common::bisect_repo(dir.path(), 1, |i| ["100", "2000"][i].into());
    let o = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["bisect", "--json", "--store", &store, "--repo"])
        .arg(&repo)
        .args(["--good", &c[0], "--bad", &c[1], "--metric", "instructions"])
        .args(["--build", &common::bisect_build(), "--builds"])
        .arg(dir.path().join("builds"))
        .args([
            "--change",
            &id.to_string(),
            "--",
            "kv",
            "--engine",
            "memory",
        ])
        .args(["--benchmarks", "fillseq", "--num", "2000", "--seed", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let bisect: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(bisect["status"], "found", "{bisect}");
    let bid = served.json("/changes")["bisects"][0]["id"]
        .as_i64()
        .unwrap();
    open(&t, &served.url("/changes"));
    let link = format!("#bisect-{id}-{bid}");
    wait_true(&t, &format!("!!document.querySelector('{link}')"), 60);
    assert!(text(&t, &sel).contains("found"), "{}", text(&t, &sel));
    t.find_element(&link).unwrap().click().unwrap();
    wait_true(&t, "!!document.querySelector('#bisect tbody tr')", 60);
    let status = text(&t, "#bisect-status");
    assert!(
        status.contains("first bad commit") && status.contains(&c[1]),
        "{status}"
    );
    assert_eq!(
        eval(
            &t,
            "[...document.querySelectorAll('#bisect tbody tr')].map(r => r.dataset.verdict)"
        ),
        serde_json::json!(["good end", "bad end"])
    );
    shot(&t, "sqlite-bisect");
    t.find_element("#bisect-change").unwrap().click().unwrap();
    wait_true(&t, &format!("!!document.querySelector('{sel}')"), 60);
    assert!(!served.log().contains("panicked"), "{}", served.log());
}

#[test]
fn a_public_listen_without_a_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    {
        let mut s = Store::open(&store).unwrap();
        generate::history(
            &mut s,
            &Spec {
                groups: 1,
                intervals: 2,
                ..Spec::default()
            },
        )
        .unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["serve", "--listen", "0.0.0.0:0", "--store"])
        .arg(&store)
        .env_remove("PLUMB_SERVE_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("plumb serve --listen 0.0.0.0:0 without a token kept serving");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!status.success(), "{err}");
    assert!(err.contains("0.0.0.0") && err.contains("--token"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_pages_work_on_postgres_and_never_show_its_password() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let server = plumb_servers::Managed::start(
        &plumb_servers::ServerChoice::parse("postgres", None, None).unwrap(),
        &plumb_servers::StartOptions {
            dir: Some(dir.path().to_path_buf()),
            keep: false,
            port: None,
            cache_mb: 64,
            config: None,
            waldir: None,
            ram_mb: None,
        },
    )
    .expect("PostgreSQL starts (scripts/setup.sh installs it)");
    // A role of its own with a password, and a database it owns.
    let password = "pw-Zq8-never-shown";
    let mut admin = server.endpoint.connect().unwrap();
    admin
        .batch(&format!(
            "CREATE ROLE plumb_web LOGIN PASSWORD '{password}'"
        ))
        .unwrap();
    admin
        .batch("CREATE DATABASE serve_pages OWNER plumb_web")
        .unwrap();
    let store = format!(
        "postgres://plumb_web:{password}@127.0.0.1:{}/serve_pages",
        server.endpoint.port
    );
    let (_, g) = write_history(&store);
    let night = g.plans[1].groups[6].clone();
    let o = plumb(&store, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(!out(&o).contains(password), "{}", out(&o));

    let served = Served::start(&store, dir.path());
    assert!(!served.banner.contains(password), "{}", served.banner);
    assert!(served.banner.contains("postgres://"), "{}", served.banner);
    let change = the_change(&served);
    assert_is_the_generated_change(&change, &g);
    let id = change["id"].as_i64().unwrap();
    let host = "nightly-7";
    let history = format!(
        "/history?plan={}&step=readrandom&metric=ops_sec",
        g.plans[1].identity
    );
    let pages = [
        "/".to_string(),
        "/runs".into(),
        "/runs?page=2".into(),
        "/runs?tag=nightly&engine=rocksdb".into(),
        format!("/run/{}", night[0]),
        format!("/run/{}/plan", night[0]),
        format!("/compare?new=g{}", night[0]),
        format!(
            "/compare?base=g{}&new=g{}",
            g.plans[1].groups[5][0], night[0]
        ),
        history.clone(),
        "/history".into(),
        "/changes".into(),
        "/changes?state=untriaged".into(),
        "/hosts".into(),
        format!("/host/{host}"),
    ];
    let leaks = |what: &str, body: &str| {
        assert!(
            !body.contains(password) && !body.contains(&enc(password)),
            "{what} shows the password:\n{body}"
        );
    };
    for p in &pages {
        let r = served.get(p);
        assert_eq!(r.status, 200, "{p}: {}", r.body);
        leaks(p, &r.head);
        leaks(p, &r.body);
        if !p.ends_with("/plan") {
            let sep = if p.contains('?') { '&' } else { '?' };
            let j = served.get(&format!("{p}{sep}format=json"));
            assert_eq!(j.status, 200, "{p} as JSON: {}", j.body);
            serde_json::from_str::<Value>(&j.body)
                .unwrap_or_else(|e| panic!("{p} as JSON: {e}: {}", j.body));
            leaks(p, &j.body);
        }
    }
    // Error pages name the store too: still without its password.
    for (p, status) in [
        ("/run/999999", 404),
        ("/compare?new=nosuchthing", 400),
        ("/runs?page=zero", 400),
        ("/nowhere", 404),
    ] {
        let r = served.get(p);
        assert_eq!(r.status, status, "{p}: {}", r.body);
        leaks(p, &r.body);
    }

    // Set through a POST with the token; refused without it.
    let r = served.post(
        "/changes",
        &format!("id={id}&state=investigating&note=looking"),
    );
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(the_change(&served)["state"], "untriaged");
    let r = served.post(
        "/changes",
        &format!(
            "id={id}&state=investigating&note={}&by=ci&token={}",
            enc("on it"),
            enc(TOKEN)
        ),
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let c = the_change(&served);
    assert_eq!(c["state"], "investigating", "{c:#}");
    assert_eq!(c["note"], "on it", "{c:#}");
    assert_eq!(c["set_by"], "ci", "{c:#}");

    // The same pages in the browser.
    let b = browser();
    let t = tab(&b);
    for (name, p) in [
        ("runs", "/runs".to_string()),
        ("run", format!("/run/{}", night[0])),
        ("compare", format!("/compare?new=g{}", night[0])),
        ("history", history.clone()),
        ("changes", "/changes".into()),
        ("hosts", "/hosts".into()),
    ] {
        open(&t, &served.url(&p));
        let body = text(&t, "body");
        leaks(&p, &body);
        leaks(&p, &t.get_content().unwrap());
        assert_eq!(eval(&t, "window.__alerts.length"), 0);
        shot(&t, &format!("postgres-{name}"));
    }
    open(&t, &served.url("/changes"));
    let row = text(&t, &format!("#change-{id}"));
    assert!(
        row.contains("investigating") && row.contains("on it"),
        "{row}"
    );
    leaks("the server's log", &served.log());
}
