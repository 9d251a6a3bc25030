//! Which process, on which boot of which host, owns a run or a temp directory: enough
//! to tell later, without asking it, that it is gone. A run left `running` by a process
//! killed with SIGKILL is then marked interrupted by the next plumb that opens the
//! store, and a temp directory it left behind is removed by the next one that makes
//! temp directories in the same place.

use std::path::{Path, PathBuf};

/// A process's identity: host name, kernel boot id, pid and the pid's start time (in
/// clock ticks since boot), so a recycled pid is not taken for the old process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    host: String,
    boot: String,
    pid: u32,
    start: u64,
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && !s.contains(' '))
}

/// The start time of `pid` (field 22 of /proc/PID/stat), `None` when there is no such
/// process.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

impl Owner {
    /// This process, or `None` where /proc cannot say.
    pub fn current() -> Option<Owner> {
        let pid = std::process::id();
        Some(Owner {
            host: read_trim("/proc/sys/kernel/hostname")?,
            boot: read_trim("/proc/sys/kernel/random/boot_id")?,
            pid,
            start: start_time(pid)?,
        })
    }

    /// As stored: `host boot pid start`.
    pub fn encode(&self) -> String {
        format!("{} {} {} {}", self.host, self.boot, self.pid, self.start)
    }

    /// Reads [`Owner::encode`]'s text back.
    pub fn decode(text: &str) -> Option<Owner> {
        let mut f = text.split_whitespace();
        let o = Owner {
            host: f.next()?.to_string(),
            boot: f.next()?.to_string(),
            pid: f.next()?.parse().ok()?,
            start: f.next()?.parse().ok()?,
        };
        f.next().is_none().then_some(o)
    }

    /// Whether this owner is certainly gone, judged from `here` (this process): on this
    /// host, either the machine has rebooted since, or no process has its pid and start
    /// time. An owner on another host is never judged gone.
    pub fn gone(&self, here: &Owner) -> bool {
        if self.host != here.host {
            return false;
        }
        self.boot != here.boot || start_time(self.pid) != Some(self.start)
    }
}

/// The file that names the owner of a temp directory: beside it, so the directory
/// itself holds only what the engine wrote.
pub fn marker_of(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".owner");
    dir.with_file_name(name)
}

/// Records this process as the owner of `dir` (best effort: without /proc the
/// directory is simply never swept).
pub fn claim(dir: &Path) {
    if let Some(o) = Owner::current() {
        let _ = std::fs::write(marker_of(dir), o.encode());
    }
}

/// Removes the marker of a directory its owner removed itself.
pub fn release(dir: &Path) {
    let _ = std::fs::remove_file(marker_of(dir));
}

/// Removes the `plumb-*` directories under `root` whose owner is gone, with their
/// markers, and returns them. Only directories with a marker plumb wrote are touched.
pub fn sweep(root: &Path) -> Vec<PathBuf> {
    sweep_with(root, &|_| {})
}

/// [`sweep`], calling `before` on each directory before it is removed (a managed
/// server's directory: its server, left running by a killed plumb, is stopped first).
pub fn sweep_with(root: &Path, before: &dyn Fn(&Path)) -> Vec<PathBuf> {
    let Some(here) = Owner::current() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(dir_name) = name
            .strip_suffix(".owner")
            .filter(|n| n.starts_with("plumb-"))
        else {
            continue;
        };
        let owner = std::fs::read_to_string(e.path())
            .ok()
            .and_then(|t| Owner::decode(&t));
        if !owner.is_some_and(|o| o.gone(&here)) {
            continue;
        }
        let dir = root.join(dir_name);
        if dir.is_dir() {
            before(&dir);
        }
        if dir.is_dir() && std::fs::remove_dir_all(&dir).is_err() {
            continue;
        }
        let _ = std::fs::remove_file(e.path());
        removed.push(dir);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_dead_or_rebooted_one_is_gone() {
        let me = Owner::current().expect("procfs");
        assert_eq!(Owner::decode(&me.encode()), Some(me.clone()));
        assert!(!me.gone(&me));
        let recycled = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        assert!(recycled.gone(&me), "a pid reused by another process");
        let rebooted = Owner {
            boot: "x".into(),
            ..me.clone()
        };
        assert!(rebooted.gone(&me));
        let elsewhere = Owner {
            host: "other".into(),
            pid: 1,
            start: 0,
            ..me.clone()
        };
        assert!(
            !elsewhere.gone(&me),
            "another host's processes cannot be seen"
        );
        assert_eq!(Owner::decode("a b c d"), None);
        assert_eq!(Owner::decode("a b 1 2 3"), None);
    }

    #[test]
    fn the_sweep_removes_only_dirs_of_gone_owners_with_a_marker() {
        let root = tempfile::tempdir().unwrap();
        let me = Owner::current().unwrap();
        let dead = Owner {
            start: me.start + 7,
            ..me.clone()
        };
        let mk = |name: &str, owner: Option<&Owner>| {
            let d = root.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("data"), b"x").unwrap();
            if let Some(o) = owner {
                std::fs::write(marker_of(&d), o.encode()).unwrap();
            }
            d
        };
        let orphan = mk("plumb-kv-aaaa", Some(&dead));
        let mine = mk("plumb-kv-bbbb", Some(&me));
        let unmarked = mk("plumb-kv-cccc", None);
        let foreign = mk("other-dddd", Some(&dead));
        let removed = sweep(root.path());
        assert_eq!(removed, vec![orphan.clone()]);
        assert!(!orphan.exists() && !marker_of(&orphan).exists());
        assert!(mine.exists() && unmarked.exists() && foreign.exists());
    }
}
