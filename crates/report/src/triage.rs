//! The changes `plumb check` kept, as text: one line per change with its triage, as
//! `plumb changes` lists and sets them.

use plumb_store::ChangeRecord;

/// One change as a line: id, state, what moved where, and since when.
pub fn line(c: &ChangeRecord) -> String {
    let host = match (&c.host, c.host_wide) {
        (Some(h), true) => format!(" on {h} (the host's: a reference run changed too)"),
        (Some(h), false) => format!(" on {h}"),
        _ => String::new(),
    };
    let note = c
        .note
        .as_deref()
        .map(|n| format!(" — {n}"))
        .unwrap_or_default();
    let by = c
        .set_by
        .as_deref()
        .map(|b| format!(" by {b}"))
        .unwrap_or_default();
    format!(
        "#{} {:<13} {} {} {} ×{:.3} at run {} (seen {}×, last run {}){host}: {}{}{by}{note}",
        c.id,
        c.state.as_str(),
        c.label,
        c.step,
        c.metric,
        c.ratio,
        c.at_run,
        c.seen,
        c.last_run,
        c.direction,
        c.cause
            .as_deref()
            .map(|x| format!("; {x}"))
            .unwrap_or_default()
    )
}
