//! Open-loop pacing for rate-limited writers: each op has an intended start time and
//! its latency counts from then, so a stalled engine cannot hide its stall by making
//! the client send less (no coordinated omission).

use std::time::{Duration, Instant};

/// Hands out intended start times at a fixed rate.
pub struct Pacer {
    start: Instant,
    interval_ns: f64,
    issued: u64,
}

impl Pacer {
    /// `ops_per_sec` must be > 0. Call it on the thread that will wait: it narrows
    /// that thread's timer slack from the default 50 µs to 1 µs, so sleeping to an
    /// intended start does not itself add tens of µs to every op's latency.
    pub fn new(ops_per_sec: f64, start: Instant) -> Self {
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only this thread.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        }
        Pacer {
            start,
            interval_ns: 1e9 / ops_per_sec,
            issued: 0,
        }
    }

    /// Waits for the next op's intended start and returns the instant its latency
    /// counts from, or `None` if stopped. When the previous op ran past this op's
    /// intended start, the engine caused the wait: latency counts from the intended
    /// start (no coordinated omission). When the pacer was idle and had to sleep, any
    /// lateness of the wake-up is the harness's, not the engine's: latency counts from
    /// the actual start.
    pub fn wait_next(&mut self, stop: &dyn Fn() -> bool) -> Option<Instant> {
        let due = self.start + Duration::from_nanos((self.issued as f64 * self.interval_ns) as u64);
        self.issued += 1;
        if stop() {
            return None;
        }
        if Instant::now() >= due {
            return Some(due);
        }
        loop {
            let now = Instant::now();
            if now >= due {
                return Some(now);
            }
            // Sleep in short slices so a stop is noticed promptly.
            std::thread::sleep((due - now).min(Duration::from_millis(50)));
            if stop() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_schedule_counts_from_intended_start_idle_counts_from_wake() {
        let t0 = Instant::now() - Duration::from_millis(10);
        let mut p = Pacer::new(1000.0, t0);
        // 10 ms behind: the first ops are due in the past, so they count from `due`.
        assert_eq!(p.wait_next(&|| false).unwrap(), t0);
        assert_eq!(
            p.wait_next(&|| false).unwrap(),
            t0 + Duration::from_millis(1)
        );
        // Ahead of schedule: the pacer sleeps and the op counts from its real start,
        // which is never before its due time.
        let mut q = Pacer::new(1000.0, Instant::now() + Duration::from_millis(5));
        let due = Instant::now() + Duration::from_millis(5);
        let s = q.wait_next(&|| false).unwrap();
        assert!(s + Duration::from_micros(100) >= due);
        assert!(q.wait_next(&|| true).is_none());
    }
}
