//! What one call of a lane's op did, as the timed loop counts it. Most ops are (ops,
//! bytes); a family that counts more per interval (the SQL family's transactions,
//! queries, rows and retries, the insert benchmark's deletes) returns an outcome of its
//! own, and the loop, generic over it, adds what the family counts beside ops and
//! bytes. Whatever an outcome does not use compiles away: (ops, bytes) costs the loop
//! nothing more than it did before outcomes existed.

use std::time::Duration;

/// How many counters of its own a family may keep per interval beside ops and bytes.
pub const COUNTS: usize = 4;

/// A family's own counters over one stretch of a step, indexed as the family says
/// (the SQL family: transactions, queries, rows, retries).
pub type Counts = [u64; COUNTS];

/// What one call of an op did: the loop counts its ops and bytes, asks whether the
/// thread has anything left to do, adds the family's counts to the interval's, and
/// rests the thread if the op asks for it.
pub trait Outcome {
    /// Ops counted for the step's rate.
    fn ops(&self) -> u64;

    /// Bytes the ops moved.
    fn bytes(&self) -> u64;

    /// The thread has nothing left to do: this call did nothing and is not counted.
    #[inline(always)]
    fn finished(&self) -> bool {
        self.ops() == 0
    }

    /// Adds the family's own counts of this call to its interval's.
    #[inline(always)]
    fn count(&self, _counts: &mut Counts) {}

    /// Failed attempts this call met and retried before it succeeded (a client that
    /// reconnected through a fault): counted against the fault's window.
    #[inline(always)]
    fn errors(&self) -> u64 {
        0
    }

    /// Whether the call succeeded at its first try: only such an op ends an outage.
    #[inline(always)]
    fn clean(&self) -> bool {
        self.errors() == 0
    }

    /// How long the thread waits after this call, outside every op's time (TPC-C's
    /// keying and think times): the call is recorded first, in the interval it ended
    /// in, and a closed loop's next op starts when the rest is over.
    #[inline(always)]
    fn rest(&self) -> Duration {
        Duration::ZERO
    }
}

/// (ops, bytes): what every key-value op and probe returns; zero ops means the thread
/// has nothing left to do.
impl Outcome for (u64, u64) {
    #[inline(always)]
    fn ops(&self) -> u64 {
        self.0
    }

    #[inline(always)]
    fn bytes(&self) -> u64 {
        self.1
    }
}
