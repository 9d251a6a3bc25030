//! What a user's script prints itself (Lua's `print` as sysbench has it, pgbench's
//! `debug()`): the script's own words, which the front end shows where it shows the
//! run's notes (the binary lifts its progress bar for them). A library never writes to
//! the terminal; until a front end names a sink, the lines are dropped.

use std::sync::OnceLock;

/// Where the scripts' lines go.
type Sink = Box<dyn Fn(&str) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Names where scripts' lines go, once per process (the binary, before any run); a
/// second call is refused and returns false, the first sink staying.
pub fn set_sink(sink: impl Fn(&str) + Send + Sync + 'static) -> bool {
    SINK.set(Box::new(sink)).is_ok()
}

/// Says one line a script printed.
pub fn say(line: &str) {
    if let Some(sink) = SINK.get() {
        sink(line);
    }
}
