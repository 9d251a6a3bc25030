//! `plumb bisect`: from a change plumb found between two commits to the commit that
//! made it. Both ends are built and measured first, and the search refuses to start
//! when they do not differ; each midpoint is then built (kept by commit, so a repeated
//! bisect reuses its builds), judged against both ends three ways (like good, like bad,
//! unknown), by instruction counts where the change shows in them (exact: one count a
//! build) or by a duet that runs until it is settled or reaches its cap, and saved in
//! the store after every step, so Ctrl-C and `--resume ID` lose at most the step under
//! way. A commit that does not build is skipped, as git bisect skips it; an unknown
//! verdict stops the search with what was measured rather than guess.
//!
//! - [`search`]: which commit next, and when the answer is known (no I/O);
//! - [`judge`]: the three-way verdicts from counts or duets (no I/O);
//! - [`build`]: the worktree, the user's build command and the cache by commit;
//! - [`measure`]: the counts and duets, run as plumb's own children;
//! - [`state`]: what is saved; [`run`]: the whole bisect.

pub mod build;
mod error;
pub mod judge;
pub mod measure;
pub mod run;
pub mod search;
pub mod state;

pub use error::BisectError;
