//! Instructions per op where no PMU exists: under Valgrind's callgrind (started by
//! `plumb icount`), each measured thread turns callgrind's collection on when its
//! measured window opens and off when it leaves the timed loop, and the step runner asks
//! callgrind to dump what was collected when the step ends, then reads the count back.
//! The count is deterministic (no clock, no other process's work in it), so a 1-2%
//! CPU regression shows in one run a side.
//!
//! What it counts: every instruction the measured threads execute while their window is
//! open: the op (engine and plumb's own key choice, timing and histogram) and whatever
//! the op calls. Not counted: the engine's background threads (flush, compaction), the
//! sampler, setup, and anything off-CPU (IO, waits, cache misses cost no instruction).
//!
//! Valgrind's client requests are a fixed no-op instruction sequence that Valgrind
//! recognises; natively they cost a handful of instructions, and plumb issues them per
//! step and thread, never per op. Written here (the request ABI of `valgrind.h`) rather
//! than through a crate: the crates that wrap them compile valgrind's headers at build
//! time, which would make valgrind a build dependency of every plumb.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable `plumb icount` sets to callgrind's `--callgrind-out-file`:
/// its presence (with Valgrind really running us) turns the counting on, and the step
/// runner reads each dump back from `<file>.<n>`.
pub const OUT_ENV: &str = "PLUMB_CALLGRIND_OUT";

const RUNNING_ON_VALGRIND: u64 = 0x1001;
const CALLGRIND_BASE: u64 = ((b'C' as u64) << 24) | ((b'T' as u64) << 16);
const TOGGLE_COLLECT: u64 = CALLGRIND_BASE + 2;
const DUMP_STATS_AT: u64 = CALLGRIND_BASE + 3;

/// Valgrind's client request: `default` when not running under Valgrind.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn request(default: u64, code: u64, arg: u64) -> u64 {
    let args: [u64; 6] = [code, arg, 0, 0, 0, 0];
    let result: u64;
    // SAFETY: the rotations of rdi add up to 128 bits (rdi is unchanged) and exchanging
    // rbx with itself changes nothing; Valgrind reads `args` through rax and writes the
    // answer to rdx. Natively the sequence leaves rdx at `default`.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") default => result,
            options(nostack),
        );
    }
    result
}

/// Other architectures: no request (counting is x86-64 only; `plumb icount` says so).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn request(default: u64, _code: u64, _arg: u64) -> u64 {
    default
}

/// Where callgrind writes its dumps, when this process runs under it for `plumb
/// icount`; `None` otherwise (natively, under another tool, or started by hand).
fn out_file() -> Option<&'static PathBuf> {
    static OUT: OnceLock<Option<PathBuf>> = OnceLock::new();
    OUT.get_or_init(|| {
        let file = std::env::var_os(OUT_ENV)?;
        (request(0, RUNNING_ON_VALGRIND, 0) > 0).then(|| PathBuf::from(file))
    })
    .as_ref()
}

/// Whether this process counts instructions per op (runs under `plumb icount`).
pub fn active() -> bool {
    out_file().is_some()
}

/// Flips the calling thread's collection (callgrind keeps it per thread): called when a
/// measured thread's window opens and again when it leaves the loop.
#[inline]
pub(super) fn toggle() {
    if active() {
        request(0, TOGGLE_COLLECT, 0);
    }
}

/// The instructions the measured threads executed since the last step ended, when
/// counting: callgrind dumps them (and starts again from zero), and the count is read
/// from the dump's `totals:` line. `None` natively, or when the dump cannot be read.
pub(super) fn step_end() -> Option<u64> {
    static DUMPS: AtomicU64 = AtomicU64::new(0);
    let out = out_file()?;
    let n = DUMPS.fetch_add(1, Ordering::Relaxed) + 1;
    request(0, DUMP_STATS_AT, c"plumb step".as_ptr() as u64);
    let mut name = out.clone().into_os_string();
    name.push(format!(".{n}"));
    let text = std::fs::read_to_string(&name).ok()?;
    totals(&text)
}

/// The instruction count of a callgrind dump (its `totals:` line, else `summary:`).
fn totals(dump: &str) -> Option<u64> {
    let line = |key: &str| {
        dump.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    line("totals:").or_else(|| line("summary:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_count_is_read_from_totals_then_summary() {
        let dump = "version: 1\ndesc: Trigger: Client Request: plumb step\nevents: Ir\n\
                    fn=(1) main\n5 10\nsummary: 6000022\ntotals: 6000023\n";
        assert_eq!(totals(dump), Some(6_000_023));
        assert_eq!(totals("events: Ir\nsummary: 42\n"), Some(42));
        assert_eq!(totals("events: Ir\n"), None);
    }

    #[test]
    fn natively_no_request_is_answered_and_nothing_counts() {
        // Not under Valgrind (cargo test is not), a request returns its default, so a
        // stray PLUMB_CALLGRIND_OUT in the environment cannot turn counting on.
        assert_eq!(request(7, RUNNING_ON_VALGRIND, 0), 7);
        assert!(!active());
        assert_eq!(step_end(), None);
    }
}
