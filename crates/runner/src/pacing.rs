//! Open-loop pacing for rate-limited writers: each op has an intended start time and
//! its latency counts from then, so a stalled engine cannot hide its stall by making
//! the client send less (no coordinated omission).

use std::time::{Duration, Instant};

/// Hands out intended start times at a fixed rate.
pub(crate) struct Pacer {
    start: Instant,
    interval_ns: f64,
    issued: u64,
}

impl Pacer {
    /// `ops_per_sec` must be > 0.
    pub(crate) fn new(ops_per_sec: f64, start: Instant) -> Self {
        Pacer {
            start,
            interval_ns: 1e9 / ops_per_sec,
            issued: 0,
        }
    }

    /// Sleeps until the next op's intended start (if it is in the future), stopping
    /// early when `stop` says so; returns the intended start, or `None` if stopped.
    pub(crate) fn wait_next(&mut self, stop: &dyn Fn() -> bool) -> Option<Instant> {
        let due = self.start + Duration::from_nanos((self.issued as f64 * self.interval_ns) as u64);
        self.issued += 1;
        loop {
            if stop() {
                return None;
            }
            let now = Instant::now();
            if now >= due {
                return Some(due);
            }
            // Sleep in short slices so a stop is noticed promptly.
            std::thread::sleep((due - now).min(Duration::from_millis(50)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intended_starts_are_evenly_spaced_from_the_start() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1000.0, t0);
        let a = p.wait_next(&|| false).unwrap();
        let b = p.wait_next(&|| false).unwrap();
        let c = p.wait_next(&|| false).unwrap();
        assert_eq!(a, t0);
        assert_eq!(b - a, Duration::from_millis(1));
        assert_eq!(c - a, Duration::from_millis(2));
        assert!(p.wait_next(&|| true).is_none());
    }
}
