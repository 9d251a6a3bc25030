//! A progress bar with ETA on stderr, only when stdout is a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use plumb_runner::Progress;
use std::sync::Mutex;
use std::time::Duration;

/// Shows one bar per step: by time for duration-bound steps, by ops otherwise.
pub struct Bar {
    bar: Mutex<Option<(ProgressBar, bool)>>,
    /// Where the step sits in a longer plan (run i/n, time left), shown before it.
    context: Mutex<String>,
}

impl Bar {
    pub fn new() -> Self {
        Bar {
            bar: Mutex::new(None),
            context: Mutex::new(String::new()),
        }
    }

    /// Sets the run context shown before each step's name.
    pub fn set_context(&self, ctx: String) {
        *self.context.lock().unwrap_or_else(|e| e.into_inner()) = ctx;
    }
}

impl Progress for Bar {
    fn start(&self, name: &str, total_ops: Option<u64>, duration: Option<Duration>) {
        // An op quota is the better measure of progress when there is one (fills);
        // otherwise the clock, in milliseconds so short steps still move.
        let (len, by_time) = match (total_ops, duration) {
            (Some(n), _) => (n, false),
            (None, Some(d)) => ((d.as_millis() as u64).max(1), true),
            (None, None) => (0, false),
        };
        let pb = if len == 0 {
            ProgressBar::new_spinner()
        } else {
            ProgressBar::new(len)
        };
        let tmpl = if by_time {
            "{prefix:>22} [{bar:30}] {msg}  eta {eta}"
        } else {
            "{prefix:>22} [{bar:30}] {human_pos}/{human_len} ops  {msg}  eta {eta}"
        };
        pb.set_style(
            ProgressStyle::with_template(tmpl)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        let ctx = self
            .context
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        pb.set_prefix(format!("{ctx}{name}"));
        pb.enable_steady_tick(Duration::from_millis(250));
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some((pb, by_time));
    }

    fn tick(&self, ops: u64, elapsed: Duration) {
        if let Some((pb, by_time)) = &*self.bar.lock().unwrap_or_else(|e| e.into_inner()) {
            let secs = elapsed.as_secs_f64().max(1e-9);
            let rate = format!("{:.0} ops/s", ops as f64 / secs);
            if *by_time {
                pb.set_position(elapsed.as_millis() as u64);
                let len = pb.length().unwrap_or(0) as f64 / 1000.0;
                pb.set_message(format!("{secs:.0}/{len:.0} s  {rate}"));
            } else {
                pb.set_position(ops);
                pb.set_message(rate);
            }
        }
    }

    fn finish(&self) {
        if let Some((pb, _)) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            pb.finish_and_clear();
        }
    }

    fn note(&self, line: &str) {
        match &*self.bar.lock().unwrap_or_else(|e| e.into_inner()) {
            // The bar is lifted off its line while the note is written, then redrawn.
            Some((pb, _)) => pb.suspend(|| eprintln!("plumb: {line}")),
            None => eprintln!("plumb: {line}"),
        }
    }
}

/// No bar (stdout is not a terminal, or JSON goes there), but the runs' notes still
/// reach stderr.
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: &str, _: Option<u64>, _: Option<Duration>) {}
    fn tick(&self, _: u64, _: Duration) {}
    fn finish(&self) {}
    fn note(&self, line: &str) {
        eprintln!("plumb: {line}");
    }
}
