//! What every document of a run is made by, in its own module so the reporters
//! (text, Markdown, HTML, JSON) and the crate root that re-exports them do not import
//! each other.

use plumb_store::StoredRun;

/// Renders a run. Pure: no IO, so every reporter can be snapshot-tested.
pub trait Reporter {
    /// The rendered document.
    fn render(&self, run: &StoredRun) -> String;
}
