//! Runs one step of any family: spawns its threads, each with its body (setup, then
//! the timed loop through its [`Lane`]), meets them at a barrier, and samples once a
//! second on the calling thread until the deadline, Ctrl-C, an error or every thread
//! is done. What it gathered comes back as a [`Run`], whose figures
//! ([`super::figures`]) every family turns into its summary.

use super::callgrind;
use super::clock::{clock_read_ns, HarnessTime};
use super::faults::{self, FaultLane, FaultShared};
use super::figures::Tally;
use super::lane::{Lane, Msg, Padded, Report, Shared};
use super::mark::{Gauge, Mark};
use plumb_probes::diskstats::DeviceStats;
use plumb_workloads::ThreadsProfile;
use std::cell::Cell;
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Barrier, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// Live progress for a terminal; the kernel calls it from the sampler thread only.
pub trait Progress: Sync {
    /// A step starts: its name, its op quota and/or its duration.
    fn start(&self, name: &str, total_ops: Option<u64>, duration: Option<Duration>);
    /// Once a second: measured ops so far and time since the window opened.
    fn tick(&self, ops: u64, elapsed: Duration);
    /// The step ended.
    fn finish(&self);
    /// A line the user should read now (a step failed, a data dir kept, a rate search's
    /// verdict), from any thread: the front end shows it without tearing its bar.
    /// Libraries say things here, so only the binary writes to the terminal.
    fn note(&self, line: &str);
}

/// Progress that shows nothing, notes included: for tests and for measurements made
/// inside another (a probe's own lanes); a front end that shows no bar still shows
/// notes with a progress of its own.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: Option<u64>, _: Option<Duration>) {}
    fn tick(&self, _: u64, _: Duration) {}
    fn finish(&self) {}
    fn note(&self, _: &str) {}
}

/// The shape of a step, as the kernel runs it: nothing of what its ops do.
pub struct Spec<'a> {
    /// Measured threads.
    pub threads: usize,
    /// Unmeasured threads beside them (a *whilewriting step's paced writer, the insert
    /// benchmark's paced inserters beside its queries): their ops are tallied apart
    /// and they do not end the step.
    pub writers: usize,
    /// What the measured threads are called, before their index (`plumb-w` makes
    /// `plumb-w0`, …): the name a CPU profile shows their stacks under. Writers are
    /// `plumb-writer`, `plumb-writer1`, ….
    pub thread_name: &'a str,
    /// Kinds of operation timed apart ([`super::OpClock::set_class`]); 0 for one kind.
    pub classes: usize,
    /// Time before the window opens; ops in it are discarded.
    pub warmup: Duration,
    /// The window's length; `None` runs until every measured thread is done.
    pub duration: Option<Duration>,
    /// The device whose counters each mark reads.
    pub disk: Option<&'a DeviceStats>,
    /// Set by Ctrl-C: stop now, keep what was measured.
    pub interrupt: &'a AtomicBool,
    /// Where the once-a-second tick goes.
    pub progress: &'a dyn Progress,
    /// A closed-loop step whose active threads change over time: `threads` is its
    /// peak, and measured thread `i` runs ops only while the profile counts more than
    /// `i` (from the window's start; warm-up runs its first count).
    pub clients: Option<&'a ThreadsProfile>,
    /// Called on each measured thread as the window opens for it (after warm-up,
    /// before its first measured op is counted): what counts per thread from there,
    /// as RocksDB's thread-local PerfContext, starts there.
    pub on_open: Option<&'a (dyn Fn() + Sync)>,
    /// Faults injected while the step runs, each on time, with the measured threads'
    /// timelines kept to read what each cost ([`super::faults`]).
    pub faults: Option<&'a super::Faults<'a>>,
}

/// What a step's threads and sampler gathered.
pub struct Run<T, X> {
    /// When the measured window opened.
    pub opened: SystemTime,
    /// The marks: the window's start, one per second, its end (at least two).
    pub marks: Vec<Mark<X>>,
    /// The ops, bytes and latencies, per interval and in all.
    pub tally: Tally,
    /// What each thread's body left in its output, measured threads in index order,
    /// then the writers'.
    pub outputs: Vec<T>,
    /// The measured threads' harness time ([`super::OpClock`]'s split).
    pub harness: HarnessTime,
    /// Open-loop ops the measured threads left due and never started.
    pub backlog: u64,
    /// The threads' errors, in the order they ended.
    pub errors: Vec<String>,
    /// Ctrl-C ended it.
    pub interrupted: bool,
    /// Instructions the measured threads executed in the window, counted by callgrind
    /// under `plumb icount` ([`super::callgrind`]); `None` otherwise.
    pub instructions: Option<u64>,
    /// The threads profile the step ran under ([`Spec::clients`]).
    pub clients: Option<ThreadsProfile>,
    /// What the step's faults left, when it had any ([`super::faults::report`] reads it).
    pub faults: Option<super::FaultsRun>,
}

/// Runs one step: `spec.threads` measured threads (and `spec.writers` writers), each
/// running `body` with its [`Lane`] and an output of its own, and the sampler on this
/// thread reading `spec`'s counters and `gauge` at each mark.
///
/// The body's time before its first [`Lane::drive`] is setup, outside the window. A
/// body that fails (or panics) stops every thread; its error is in [`Run::errors`].
/// The outputs outlive the closing mark (a client's connection kept in one is still
/// open when the window's last counters are read).
pub fn run<T, E, G, B>(spec: &Spec<'_>, gauge: &mut G, body: B) -> Run<T, G::Reading>
where
    T: Default + Send,
    E: Display,
    G: Gauge,
    B: for<'l> Fn(&Lane<'l>, &mut T) -> Result<(), E> + Sync,
{
    let shared = Shared {
        epoch: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        progress: (0..spec.threads).map(|_| Padded::default()).collect(),
        window_start: OnceLock::new(),
        opened: OnceLock::new(),
        faults: spec.faults.map(|f| FaultShared::new(f, spec.duration)),
    };
    let lanes = spec.threads + spec.writers;
    let barrier = Barrier::new(lanes + 1);
    let (tx, rx) = mpsc::channel::<Msg>();
    let (shared, barrier, body, classes) = (&shared, &barrier, &body, spec.classes);
    let (c, outputs, injected) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..lanes)
            .map(|t| {
                let writer = t >= spec.threads;
                let tx = tx.clone();
                let name = if !writer {
                    format!("{}{t}", spec.thread_name)
                } else if t == spec.threads {
                    "plumb-writer".to_string()
                } else {
                    format!("plumb-writer{}", t - spec.threads)
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn_scoped(scope, move || {
                        let lane = Lane {
                            shared,
                            barrier,
                            tx: &tx,
                            index: t,
                            writer,
                            classes,
                            gate: spec.clients.filter(|_| !writer),
                            released: Cell::new(false),
                            on_open: spec.on_open,
                            hooked: Cell::new(false),
                            harness: Cell::new(HarnessTime::default()),
                            backlog: Cell::new(0),
                            faults: shared
                                .faults
                                .as_ref()
                                .filter(|_| !writer)
                                .map(|f| std::cell::RefCell::new(FaultLane::new(f))),
                        };
                        run_lane(&lane, body)
                    })
                    .expect("spawn a step thread")
            })
            .collect();
        drop(tx);
        // The faults' own thread: it waits for the window, then injects each on time.
        let injector = spec.faults.map(|f| {
            std::thread::Builder::new()
                .name("plumb-fault".into())
                .spawn_scoped(scope, move || {
                    let stop = || shared.stop.load(Ordering::Relaxed);
                    faults::inject_all(f, &shared.opened, &stop)
                })
                .expect("spawn the fault thread")
        });
        // A step asked to stop before it started runs no op.
        if spec.interrupt.load(Ordering::Relaxed) {
            shared.stop.store(true, Ordering::Relaxed);
        }
        // Every thread has set up. Without warm-up the window opens now, as the threads
        // are released, so no op can fall outside it and no setup inside it.
        barrier.wait();
        let opened = spec
            .warmup
            .is_zero()
            .then(|| open_window(spec.disk, gauge, shared));
        barrier.wait();
        let c = sample(spec, gauge, shared, &rx, opened);
        // Every thread has sent its last message: joining does not wait for long.
        let outputs: Vec<T> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        let injected = injector.map(|h| h.join().unwrap_or_default());
        (c, outputs, injected)
    });
    let instructions = callgrind::step_end();
    let epochs = c.marks.len() - 1;
    let faults = match (injected, &shared.faults, shared.opened.get()) {
        (Some(injected), Some(fs), Some(_)) => {
            Some(faults::FaultsRun::gather(injected, c.fault_lanes, fs))
        }
        _ => None,
    };
    Run {
        opened: c.opened,
        tally: Tally::of(c.reports, epochs, spec.classes, spec.writers > 0),
        marks: c.marks,
        outputs,
        harness: c.harness,
        backlog: c.backlog,
        errors: c.errors,
        interrupted: c.interrupted,
        instructions,
        clients: spec.clients.cloned(),
        faults,
    }
}

/// One thread: its body, then its last message. A failure stops every thread; a
/// panic is an error like any other, so the step ends and says why.
fn run_lane<T, E, B>(lane: &Lane<'_>, body: &B) -> T
where
    T: Default,
    E: Display,
    B: for<'l> Fn(&Lane<'l>, &mut T) -> Result<(), E>,
{
    let mut out = T::default();
    clock_read_ns(); // measured once, before any step's window opens
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(lane, &mut out)));
    let error = match caught {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(p) => Some(format!(
            "a step thread panicked: {}",
            p.downcast_ref::<&str>()
                .copied()
                .or(p.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)")
        )),
    };
    // Everyone meets at the start, even a thread that failed before its first op, so
    // the sampler cannot hang.
    lane.release();
    if error.is_some() {
        lane.shared.stop.store(true, Ordering::Relaxed);
    }
    let _ = lane.tx.send(Msg::Done {
        writer: lane.writer,
        harness: lane.harness.get(),
        backlog: lane.backlog.get(),
        error,
        faults: lane.faults.as_ref().map(|f| f.replace(FaultLane::empty())),
    });
    out
}

/// What the sampler gathered while the threads ran.
struct Collected<X> {
    opened: SystemTime,
    marks: Vec<Mark<X>>,
    reports: Vec<Report>,
    harness: HarnessTime,
    backlog: u64,
    errors: Vec<String>,
    interrupted: bool,
    reader_done: usize,
    writers_done: usize,
    fault_lanes: Vec<FaultLane>,
}

impl<X> Collected<X> {
    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Interval(r) => self.reports.push(r),
            Msg::Done {
                writer,
                harness,
                backlog,
                error,
                faults,
            } => {
                self.fault_lanes.extend(faults);
                if !writer {
                    self.harness.merge(&harness);
                    self.backlog += backlog;
                }
                self.errors.extend(error);
                if writer {
                    self.writers_done += 1;
                } else {
                    self.reader_done += 1;
                }
            }
        }
    }
}

/// The sampler: warm-up (epoch 0), then a mark and an epoch per second until the
/// deadline, Ctrl-C, or every thread is done; then the closing mark.
fn sample<G: Gauge>(
    spec: &Spec<'_>,
    gauge: &mut G,
    shared: &Shared,
    rx: &mpsc::Receiver<Msg>,
    opened: Option<(Mark<G::Reading>, SystemTime)>,
) -> Collected<G::Reading> {
    let mut c = Collected {
        opened: SystemTime::now(),
        marks: Vec::new(),
        reports: Vec::new(),
        harness: HarnessTime::default(),
        backlog: 0,
        errors: Vec::new(),
        interrupted: false,
        reader_done: 0,
        writers_done: 0,
        fault_lanes: Vec::new(),
    };
    let interrupted = || spec.interrupt.load(Ordering::Relaxed);
    // Warm-up: epoch 0; its reports are discarded. A thread's error ends it.
    let warm_end = Instant::now() + spec.warmup;
    let failed = || shared.stop.load(Ordering::Relaxed);
    while Instant::now() < warm_end && !interrupted() && !failed() {
        let wait = warm_end
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(200));
        if let Ok(m) = rx.recv_timeout(wait) {
            c.handle(m);
        }
    }
    let (t0, wall) = opened.unwrap_or_else(|| open_window(spec.disk, gauge, shared));
    c.opened = wall;
    c.marks.push(t0);
    let deadline = spec.duration.map(|d| t0.at + d);
    let mut next_tick = t0.at + Duration::from_secs(1);
    loop {
        if c.reader_done == spec.threads && c.writers_done == spec.writers {
            break;
        }
        let now = Instant::now();
        let stop_now =
            interrupted() || deadline.is_some_and(|d| now >= d) || c.reader_done == spec.threads;
        if stop_now {
            if interrupted() {
                c.interrupted = true;
            }
            shared.stop.store(true, Ordering::Relaxed);
        }
        if now >= next_tick {
            c.marks.push(Mark::read(spec.disk, gauge));
            shared.epoch.fetch_add(1, Ordering::Release);
            next_tick += Duration::from_secs(1);
            let done: u64 = shared
                .progress
                .iter()
                .map(|p| p.0.load(Ordering::Relaxed))
                .sum();
            spec.progress.tick(done, now - t0.at);
            continue;
        }
        let mut wait = next_tick - now;
        if let Some(d) = deadline {
            wait = wait.min(d.saturating_duration_since(now));
        }
        match rx.recv_timeout(wait.min(Duration::from_millis(200))) {
            Ok(m) => c.handle(m),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // Everyone is done; drain what is left and take the closing mark.
    while let Ok(m) = rx.try_recv() {
        c.handle(m);
    }
    c.marks.push(Mark::read(spec.disk, gauge));
    gauge.closed();
    c
}

/// Opens the measured window: the first mark, the gauge told (what spans the window
/// starts before any op of it), then epoch 1.
fn open_window<G: Gauge>(
    disk: Option<&DeviceStats>,
    gauge: &mut G,
    shared: &Shared,
) -> (Mark<G::Reading>, SystemTime) {
    let t0 = Mark::read(disk, gauge);
    let wall = SystemTime::now();
    gauge.opened();
    let _ = shared.window_start.set(t0.at);
    let _ = shared.opened.set(t0.at);
    shared.epoch.store(1, Ordering::Release);
    (t0, wall)
}
