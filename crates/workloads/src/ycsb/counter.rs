//! Key numbers for inserts: how a load splits its keys among threads, and YCSB's
//! acknowledged counter for inserts during a run, which keeps reads away from keys
//! whose insert has not finished (a read of a key still being inserted would count a
//! miss that is the harness's fault, not the store's).

use super::params::CoreParams;
use super::YcsbError;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::SeqCst};

/// Slots in the acknowledged counter's window: YCSB's `WINDOW_SIZE`, 2^20 inserts that
/// may be in flight (or finished out of order) at once.
pub const ACK_WINDOW_SIZE: usize = 1 << 20;
const ACK_MASK: i64 = ACK_WINDOW_SIZE as i64 - 1;

/// `n` items split among `threads` as YCSB's client splits operations: each thread
/// `n / threads`, the first `n % threads` threads one more. Returns this thread's offset
/// and count, so the parts are contiguous, disjoint and cover `0..n`.
pub fn split_count(n: u64, thread: usize, threads: usize) -> (u64, u64) {
    let t = threads.max(1) as u64;
    let i = thread as u64;
    let (each, extra) = (n / t, n % t);
    let count = each + u64::from(i < extra);
    let offset = i * each + i.min(extra);
    (offset, count)
}

/// The key numbers thread `thread` of `threads` inserts while loading: its part of
/// `insertstart .. insertstart + insertcount`. YCSB's load threads draw from one shared
/// counter instead (interleaved); the keys loaded are the same, and contiguous parts
/// let each thread batch its inserts and make a load reproducible.
pub fn load_keynums(p: &CoreParams, thread: usize, threads: usize) -> Range<i64> {
    let (offset, count) = split_count(p.insert_count(), thread, threads);
    let start = (p.insertstart + offset) as i64;
    start..start + count as i64
}

/// One value per cache line pair: the insert counter, the read limit and the lock are
/// written by different threads, and sharing a line would make each write stall the
/// others' reads.
#[repr(align(128))]
struct Line<T>(T);

/// YCSB's `AcknowledgedCounterGenerator`, shared by every thread of a run: inserts take
/// the next key number from it, and reads go no further than [`Self::last_value`], the
/// highest key below which every insert has been acknowledged. Acknowledging is one
/// atomic store, then (as YCSB) whichever thread wins a try-lock slides the limit over
/// the contiguous acknowledged slots; nobody waits.
pub struct AcknowledgedCounter {
    next: Line<AtomicI64>,
    limit: Line<AtomicI64>,
    busy: Line<AtomicBool>,
    window: Box<[AtomicBool]>,
}

impl std::fmt::Debug for AcknowledgedCounter {
    /// The counter and the limit; not the window's million slots.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcknowledgedCounter")
            .field("next", &self.peek_next())
            .field("last_value", &self.last_value())
            .finish()
    }
}

impl AcknowledgedCounter {
    /// Counting from `start`: the first insert gets `start`, and every key below it
    /// counts as present.
    pub fn new(start: i64) -> AcknowledgedCounter {
        AcknowledgedCounter {
            next: Line(AtomicI64::new(start)),
            limit: Line(AtomicI64::new(start - 1)),
            busy: Line(AtomicBool::new(false)),
            window: (0..ACK_WINDOW_SIZE)
                .map(|_| AtomicBool::new(false))
                .collect(),
        }
    }

    /// The key number for the next insert (`nextValue`).
    #[inline]
    pub fn next_value(&self) -> i64 {
        self.next.0.fetch_add(1, SeqCst)
    }

    /// The highest key number whose insert, and every insert before it, is
    /// acknowledged: the most a read may ask for (`lastValue`).
    #[inline]
    pub fn last_value(&self) -> i64 {
        self.limit.0.load(SeqCst)
    }

    /// The next key [`Self::next_value`] would hand out (for carrying the counter into
    /// a later run phase).
    pub fn peek_next(&self) -> i64 {
        self.next.0.load(SeqCst)
    }

    /// Marks `value`'s insert as finished, whether it succeeded or not (YCSB
    /// acknowledges in a `finally`). An error when the window is full.
    pub fn acknowledge(&self, value: i64) -> Result<(), YcsbError> {
        let slot = (value & ACK_MASK) as usize;
        if self.window[slot].swap(true, SeqCst) {
            return Err(YcsbError::AckWindowFull {
                keynum: value,
                window: ACK_WINDOW_SIZE,
            });
        }
        // YCSB tries the lock once; an acknowledgement that lands while the holder is
        // past its slot would then wait for the next insert to be seen. Checking the
        // next slot again after unlocking closes that gap at the cost of one load.
        while self
            .busy
            .0
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_ok()
        {
            let limit = self.limit.0.load(SeqCst);
            let mut index = limit + 1;
            // At most one pass over the window (YCSB's intent; its bound compares a
            // key number with a slot number).
            while index - limit <= ACK_WINDOW_SIZE as i64 {
                let s = (index & ACK_MASK) as usize;
                if !self.window[s].load(SeqCst) {
                    break;
                }
                self.window[s].store(false, SeqCst);
                index += 1;
            }
            self.limit.0.store(index - 1, SeqCst);
            self.busy.0.store(false, SeqCst);
            if !self.window[(index & ACK_MASK) as usize].load(SeqCst) {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::sync::Arc;

    #[test]
    fn load_parts_cover_every_key_once() {
        for (records, start, threads) in [(1000u64, 0u64, 3usize), (7, 2, 4), (10, 0, 16)] {
            let p = CoreParams {
                recordcount: records,
                insertstart: start,
                ..CoreParams::default()
            };
            let mut seen = vec![0u8; records as usize];
            let mut sizes = Vec::new();
            for t in 0..threads {
                let r = load_keynums(&p, t, threads);
                sizes.push(r.end - r.start);
                for k in r {
                    seen[k as usize] += 1;
                }
            }
            for (k, n) in seen.iter().enumerate() {
                let want = u8::from(k as u64 >= start);
                assert_eq!(*n, want, "key {k} of {records} from {start} over {threads}");
            }
            // YCSB's split: sizes differ by at most one, larger first.
            assert!(sizes.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
        }
    }

    #[test]
    fn limit_moves_only_over_contiguous_acknowledgements() {
        let c = AcknowledgedCounter::new(100);
        assert_eq!(c.last_value(), 99);
        let keys: Vec<i64> = (0..4).map(|_| c.next_value()).collect();
        assert_eq!(keys, vec![100, 101, 102, 103]);
        c.acknowledge(101).unwrap();
        c.acknowledge(103).unwrap();
        assert_eq!(c.last_value(), 99);
        c.acknowledge(100).unwrap();
        assert_eq!(c.last_value(), 101);
        c.acknowledge(102).unwrap();
        assert_eq!(c.last_value(), 103);
        assert_eq!(
            format!("{c:?}"),
            "AcknowledgedCounter { next: 104, last_value: 103 }"
        );
    }

    #[test]
    fn a_full_window_is_an_error() {
        let c = AcknowledgedCounter::new(0);
        // Key 0 never acknowledged: key WINDOW lands on the same slot as key 0 would
        // after key 0's slot was taken by another unacknowledged key.
        c.acknowledge(1).unwrap();
        let e = c.acknowledge(1 + ACK_WINDOW_SIZE as i64).unwrap_err();
        assert!(matches!(e, YcsbError::AckWindowFull { .. }), "{e}");
    }

    /// Inserters acknowledge out of order after random delays while readers check that
    /// every key up to the limit they read has been acknowledged already.
    #[test]
    fn readers_never_see_an_unfinished_insert() {
        const N: i64 = 20_000;
        let c = Arc::new(AcknowledgedCounter::new(1000));
        let done: Arc<Vec<AtomicBool>> =
            Arc::new((0..N + 1000).map(|_| AtomicBool::new(false)).collect());
        for k in 0..1000 {
            done[k].store(true, SeqCst);
        }
        let stop = Arc::new(AtomicBool::new(false));
        // The writers start only once both readers are checking: on a busy machine a
        // reader scheduled late would otherwise see nothing but the finished counter.
        let started = Arc::new(std::sync::Barrier::new(3));
        let mut readers = Vec::new();
        for _ in 0..2 {
            let (c, done, stop) = (c.clone(), done.clone(), stop.clone());
            let started = started.clone();
            readers.push(std::thread::spawn(move || {
                let mut checks = 0u64;
                let mut rng = SmallRng::seed_from_u64(4);
                while !stop.load(SeqCst) {
                    let limit = c.last_value();
                    let k = rng.random_range(0..=limit);
                    assert!(
                        done[k as usize].load(SeqCst),
                        "key {k} <= limit {limit} unfinished"
                    );
                    assert!(
                        done[limit as usize].load(SeqCst),
                        "limit {limit} unfinished"
                    );
                    checks += 1;
                    if checks == 1 {
                        started.wait();
                    }
                }
                checks
            }));
        }
        started.wait();
        let mut writers = Vec::new();
        for t in 0..3u64 {
            let (c, done) = (c.clone(), done.clone());
            writers.push(std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(t);
                loop {
                    let k = c.next_value();
                    if k >= N + 1000 {
                        break;
                    }
                    if rng.random_range(0..8) == 0 {
                        std::thread::yield_now();
                    }
                    done[k as usize].store(true, SeqCst);
                    c.acknowledge(k).unwrap();
                }
            }));
        }
        for w in writers {
            w.join().unwrap();
        }
        stop.store(true, SeqCst);
        for r in readers {
            assert!(r.join().unwrap() > 0);
        }
        // Every insert acknowledged: the limit reaches the last key.
        assert_eq!(c.last_value(), N + 999);
    }
}
