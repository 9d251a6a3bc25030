//! The error a family hands the lifecycle. Each family crate has its own typed errors
//! (thiserror); at the [`crate::Subject`] and [`crate::family::Family`] boundary they
//! are boxed, so the lifecycle carries any family's failure without knowing its type,
//! and [`chain`] prints it with every cause, as the user needs it.

use plumb_plan::RunPlan;
use thiserror::Error;

/// A family's failure at the lifecycle's boundary: its own typed error, boxed so one
/// trait serves every family and the causes stay reachable through `source()`.
pub type FamilyError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a family's subject returns.
pub type FamilyResult<T> = Result<T, FamilyError>;

/// An error's message followed by each of its causes (`a: b: c`), the way the user
/// reads a failure: the outermost says what plumb was doing, the innermost why.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let s = c.to_string();
        // A wrapper that prints its source as its own message adds nothing.
        if !out.ends_with(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        cause = c.source();
    }
    out
}

/// A plan handed to a family that does not run its workload: a front end's bug, told
/// with the run it was.
#[derive(Debug, Error)]
#[error("run {variant}: the {workload} workload on target {target:?} is not a {family} run")]
pub struct NotMine {
    /// The run's variant label.
    pub variant: String,
    /// The plan's workload family.
    pub workload: String,
    /// The plan's target.
    pub target: String,
    /// The family it was handed to.
    pub family: String,
}

impl NotMine {
    /// The error of `plan` handed to `family`.
    pub fn of(plan: &RunPlan, family: &str) -> NotMine {
        NotMine {
            variant: plan.variant.clone(),
            workload: plan.workload.family.name().to_string(),
            target: plan.target.name.clone(),
            family: family.to_string(),
        }
    }
}

/// A failure a family tells in its own words, with nothing beneath it (the lifecycle's
/// own refusals, a test's stand-in subject).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct Said(pub String);

/// A family's failure with what the lifecycle was doing when it came (a subject that
/// did not close after its run was stored): the lifecycle's words, then the family's.
#[derive(Debug, Error)]
#[error("{what}")]
pub struct Within {
    /// What the lifecycle was doing.
    pub what: String,
    /// The family's failure.
    #[source]
    pub source: FamilyError,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Error)]
    #[error("opening the store")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_chain_names_every_cause_once() {
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(chain(&e), "opening the store: disk full");
        let boxed: FamilyError = Box::new(Said("x: disk full".into()));
        assert_eq!(chain(boxed.as_ref()), "x: disk full");
    }

    #[derive(Debug, Error)]
    #[error("step 2: {0}")]
    struct Repeats(#[source] std::io::Error);

    #[test]
    fn the_lifecycles_words_come_before_the_familys() {
        let e = Within {
            what: "run 3 is stored, but its subject did not close cleanly".into(),
            source: Box::new(Outer(std::io::Error::other("server still up"))),
        };
        assert_eq!(
            chain(&e),
            "run 3 is stored, but its subject did not close cleanly: opening the store: server still up"
        );
    }

    #[test]
    fn a_wrapper_that_prints_its_cause_is_not_repeated() {
        let e = Repeats(std::io::Error::other("gone"));
        assert_eq!(chain(&e), "step 2: gone");
    }
}
