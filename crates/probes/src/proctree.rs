//! CPU and context switches of another process and its children, from /proc: a
//! database server's cost is spent in its own processes (PostgreSQL's postmaster and one
//! backend per connection, MariaDB's one mariadbd with many threads), never in plumb's.

use crate::process::ProcessCounters;
use std::path::Path;

/// One reading of a process tree: each live process's own counters, and the CPU of the
/// children the root has reaped. Deltas go process by process, because a process that
/// exits takes its context switches with it (only its CPU reaches its parent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeSnapshot {
    /// CPU µs of the root's reaped children (its cutime + cstime).
    pub reaped_cpu_us: u64,
    /// Each live process of the tree, by pid: its own CPU (user, system) and the
    /// context switches of all its threads.
    pub procs: std::collections::BTreeMap<u32, ProcessCounters>,
}

impl TreeSnapshot {
    /// What the tree spent between `earlier` and `self`: processes alive at both count
    /// their growth, processes born since count whole, and processes gone since count
    /// what their parent reaped less what they had spent before `earlier` (their
    /// context switches after `earlier` are lost with them).
    pub fn delta(&self, earlier: &TreeSnapshot) -> ProcessCounters {
        let mut d = ProcessCounters::default();
        for (pid, b) in &self.procs {
            let x = match earlier.procs.get(pid) {
                Some(a) => b.delta(a),
                None => *b,
            };
            d.user_us += x.user_us;
            d.system_us += x.system_us;
            d.voluntary_csw += x.voluntary_csw;
            d.involuntary_csw += x.involuntary_csw;
            d.major_faults += x.major_faults;
        }
        let gone_before: u64 = earlier
            .procs
            .iter()
            .filter(|(pid, _)| !self.procs.contains_key(pid))
            .map(|(_, a)| a.cpu_us())
            .sum();
        // Reaped CPU is user + system together: it is counted as user time.
        d.user_us += self
            .reaped_cpu_us
            .saturating_sub(earlier.reaped_cpu_us)
            .saturating_sub(gone_before);
        d
    }
}

impl TreeSnapshot {
    /// Resident memory of the tree now, bytes: each process's private memory
    /// (`RssAnon`) plus the largest shared and file-backed parts once, because every
    /// PostgreSQL backend maps the same shared buffers and would count them again.
    pub fn rss_bytes(&self) -> Option<u64> {
        let (mut anon, mut shmem, mut file, mut seen) = (0u64, 0u64, 0u64, false);
        for pid in self.procs.keys() {
            let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                continue;
            };
            let kb = |k| crate::process::parse_status_kb(&text, k).unwrap_or(0);
            anon += kb("RssAnon");
            shmem = shmem.max(kb("RssShmem"));
            file = file.max(kb("RssFile"));
            seen = true;
        }
        seen.then_some(anon + shmem + file)
    }
}

/// Reads `root` and every live descendant; `None` when `root` is gone.
pub fn tree_snapshot(root: u32) -> Option<TreeSnapshot> {
    tree_snapshot_in(Path::new("/proc"), root)
}

/// [`tree_snapshot`] over another procfs root, for tests with a fixture tree.
pub fn tree_snapshot_in(proc_root: &Path, root: u32) -> Option<TreeSnapshot> {
    let tick_us = 1_000_000 / clock_ticks_per_sec();
    let root_stat = read_stat(proc_root, root)?;
    let mut snap = TreeSnapshot {
        reaped_cpu_us: (root_stat.cutime + root_stat.cstime) * tick_us,
        procs: Default::default(),
    };
    let own = |pid: u32, st: &Stat| {
        let (v, i) = thread_csw(proc_root, pid);
        ProcessCounters {
            user_us: st.utime * tick_us,
            system_us: st.stime * tick_us,
            voluntary_csw: v,
            involuntary_csw: i,
            major_faults: st.majflt,
        }
    };
    snap.procs.insert(root, own(root, &root_stat));
    descend(proc_root, root, |pid, st| {
        // A grandchild's reaped children count through its parent's cutime.
        let mut c = own(pid, st);
        c.user_us += (st.cutime + st.cstime) * tick_us;
        snap.procs.insert(pid, c);
    });
    Some(snap)
}

/// `root` and its live descendants, each parent before its children: the processes a
/// server's memory limit has to hold (its later children are born in it).
pub fn tree_pids(root: u32) -> Vec<u32> {
    tree_pids_in(Path::new("/proc"), root)
}

/// [`tree_pids`] over another procfs root, for tests with a fixture tree.
pub fn tree_pids_in(proc_root: &Path, root: u32) -> Vec<u32> {
    let mut pids = vec![root];
    descend(proc_root, root, |pid, _| pids.push(pid));
    pids
}

/// Calls `visit` with every live descendant of `root` (not `root`), parents first,
/// from one read of the process table.
fn descend(proc_root: &Path, root: u32, mut visit: impl FnMut(u32, &Stat)) {
    let mut all: Vec<(u32, Stat)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(proc_root) {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == root {
                continue;
            }
            if let Some(st) = read_stat(proc_root, pid) {
                all.push((pid, st));
            }
        }
    }
    let mut inside = std::collections::HashSet::from([root]);
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, st) in &all {
            if inside.contains(&st.ppid) && inside.insert(*pid) {
                visit(*pid, st);
                grew = true;
            }
        }
    }
}

/// The fields of /proc/PID/stat this module needs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    ppid: u32,
    /// Major faults of the process's threads (field 12; its reaped children's are not
    /// counted, like its context switches).
    majflt: u64,
    utime: u64,
    stime: u64,
    cutime: u64,
    cstime: u64,
}

fn read_stat(proc_root: &Path, pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?)
}

/// Parses /proc/PID/stat; the command name (field 2) may hold spaces and parentheses,
/// so fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): ppid is field 4, majflt 12, utime 14 … cstime 17.
    let n = |i: usize| f.get(i - 3)?.parse::<i64>().ok();
    Some(Stat {
        ppid: n(4)? as u32,
        majflt: n(12)?.max(0) as u64,
        utime: n(14)?.max(0) as u64,
        stime: n(15)?.max(0) as u64,
        cutime: n(16)?.max(0) as u64,
        cstime: n(17)?.max(0) as u64,
    })
}

/// Voluntary and involuntary context switches summed over a process's threads.
fn thread_csw(proc_root: &Path, pid: u32) -> (u64, u64) {
    let (mut v, mut i) = (0, 0);
    let Ok(rd) = std::fs::read_dir(proc_root.join(pid.to_string()).join("task")) else {
        return (0, 0);
    };
    for e in rd.flatten() {
        if let Ok(text) = std::fs::read_to_string(e.path().join("status")) {
            v += status_field(&text, "voluntary_ctxt_switches").unwrap_or(0);
            i += status_field(&text, "nonvoluntary_ctxt_switches").unwrap_or(0);
        }
    }
    (v, i)
}

fn status_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let s = "42 (post (gres) x) S 7 42 42 0 -1 4194560 100 0 6 0 30 12 5 3 20 0 1 0";
        assert_eq!(
            parse_stat(s),
            Some(Stat {
                ppid: 7,
                majflt: 6,
                utime: 30,
                stime: 12,
                cutime: 5,
                cstime: 3
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_tree_counts_each_process_and_what_the_root_reaped() {
        let d = tempfile::tempdir().unwrap();
        let mk = |pid: u32, ppid: u32, ut: u64, st: u64, cut: u64, vol: u64| {
            let p = d.path().join(pid.to_string());
            std::fs::create_dir_all(p.join("task").join(pid.to_string())).unwrap();
            std::fs::write(
                p.join("stat"),
                format!("{pid} (x) S {ppid} 1 1 0 -1 0 0 0 0 0 {ut} {st} {cut} 0 20 0 1 0"),
            )
            .unwrap();
            std::fs::write(
                p.join("task").join(pid.to_string()).join("status"),
                format!(
                    "Name:\tx\nvoluntary_ctxt_switches:\t{vol}\nnonvoluntary_ctxt_switches:\t1\n"
                ),
            )
            .unwrap();
        };
        mk(10, 1, 100, 50, 7, 3); // root, with reaped children worth 7 ticks
        mk(11, 10, 20, 0, 0, 4); // a backend that will exit
        mk(12, 11, 1, 1, 0, 5); // its child
        mk(13, 1, 999, 999, 0, 100); // unrelated
        let tick = 1_000_000 / clock_ticks_per_sec();
        let a = tree_snapshot_in(d.path(), 10).unwrap();
        assert_eq!(a.procs.len(), 3);
        // The same walk gives a memory limit its processes, a parent before its child
        // (13 is not of the tree; a grandchild listed before its parent still is).
        assert_eq!(tree_pids_in(d.path(), 10), vec![10, 11, 12]);
        assert_eq!(tree_pids_in(d.path(), 11), vec![11, 12]);
        assert_eq!(a.reaped_cpu_us, 7 * tick);
        // Later: the backend (and its child) exited after 30 ticks in all and were
        // reaped; a new backend started and spent 5; the root spent 2 more.
        std::fs::remove_dir_all(d.path().join("11")).unwrap();
        std::fs::remove_dir_all(d.path().join("12")).unwrap();
        mk(10, 1, 102, 50, 7 + 30 + 2, 9);
        mk(14, 10, 5, 0, 0, 2);
        let b = tree_snapshot_in(d.path(), 10).unwrap();
        let delta = b.delta(&a);
        // 2 (root) + 5 (new) + 32 reaped - 22 spent before = 17 ticks.
        assert_eq!(delta.cpu_us(), 17 * tick);
        assert_eq!(delta.voluntary_csw, (9 - 3) + 2);
        assert!(tree_snapshot_in(d.path(), 99).is_none());
    }
}

/// Fuzzing by property: /proc/PID/stat with any command name (spaces, parentheses,
/// newlines) and any text never panics, and the fields after the name read back.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn stat_never_panics(t in any::<String>()) {
            let _ = parse_stat(&t);
            let _ = status_field(&t, "voluntary_ctxt_switches");
            let _ = crate::process::parse_status_kb(&t, "VmRSS");
        }

        #[test]
        fn stat_fields_read_back_whatever_the_command_name(
            comm in r"[ -~\n]{0,32}", ppid in 0u32..4_000_000,
            times in proptest::collection::vec(0u64..1 << 40, 4),
        ) {
            let mut f: Vec<String> = vec!["S".into(), ppid.to_string()];
            f.extend((5..14).map(|i| i.to_string()));
            f.extend(times.iter().map(u64::to_string));
            f.extend((18..52).map(|i| i.to_string()));
            let text = format!("1234 ({comm}) {}\n", f.join(" "));
            let s = parse_stat(&text).unwrap();
            prop_assert_eq!(s.ppid, ppid);
            prop_assert_eq!([s.utime, s.stime, s.cutime, s.cstime], [times[0], times[1], times[2], times[3]]);
        }
    }
}
