//! A memory limit for what a run measures, page cache included. On a machine with more
//! memory than data, every engine and server reads from the page cache and nothing is
//! IO-bound; a cgroup that holds the engine's process (or the server's processes) and
//! charges their page cache against a limit makes a size truly IO-bound, for every
//! engine alike. cgroup v2 (`memory.max`) where the host has its memory controller,
//! else v1 (`memory.limit_in_bytes`); the group is a child of the caller's own.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why no limit could be set: one error that says where and what to do. A run asked to
/// be limited never goes on unlimited.
#[derive(Debug, Error)]
pub enum CgroupError {
    /// No memory controller is mounted where plumb looks.
    #[error(
        "memory limit: no cgroup memory controller found (looked for v2 memory.max under \
         /sys/fs/cgroup and the v1 memory hierarchy); run on a host with cgroups, or drop \
         memory_mb"
    )]
    NoController,
    /// The kernel refused a step of making or using the group.
    #[error(
        "memory limit: {what} {path}: {source}; run plumb as root, or in a cgroup delegated \
         to it (systemd-run --scope -p Delegate=yes …), or drop memory_mb"
    )]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

/// Which cgroup interface holds the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// Legacy hierarchies (memory.limit_in_bytes).
    V1,
    /// The unified hierarchy (memory.max).
    V2,
}

/// A child memory cgroup with a limit, removed on drop (its processes go back to the
/// parent first).
#[derive(Debug)]
pub struct MemoryLimit {
    dir: PathBuf,
    parent: PathBuf,
    version: Version,
    bytes: u64,
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> CgroupError + 'a {
    move |source| CgroupError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Where this process's memory cgroup is: (its directory, the interface).
fn own_group(root: &Path) -> Result<(PathBuf, Version), CgroupError> {
    let text = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut v2 = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        if ctrls.split(',').any(|c| c == "memory") {
            let dir = root.join("memory").join(rel);
            if dir.join("memory.limit_in_bytes").exists() {
                return Ok((dir, Version::V1));
            }
        }
        if id == "0" && ctrls.is_empty() {
            v2 = Some(rel.to_string());
        }
    }
    if let Some(rel) = v2 {
        // The unified hierarchy at the root, or beside v1 under unified/.
        for base in [root.to_path_buf(), root.join("unified")] {
            let dir = base.join(&rel);
            let has_memory = fs::read_to_string(dir.join("cgroup.controllers"))
                .map(|c| c.split_whitespace().any(|c| c == "memory"))
                .unwrap_or(false);
            if has_memory {
                return Ok((dir, Version::V2));
            }
        }
    }
    Err(CgroupError::NoController)
}

impl MemoryLimit {
    /// Makes a child group of this process's own memory cgroup, named `name`, limited to
    /// `bytes` (memory and page cache; swap is not given more).
    pub fn create(name: &str, bytes: u64) -> Result<MemoryLimit, CgroupError> {
        let (parent, version) = own_group(Path::new("/sys/fs/cgroup"))?;
        sweep_gone(&parent);
        let dir = parent.join(name);
        if version == Version::V2 {
            // A child gets the memory controller only if its parent hands it down.
            let ctl = parent.join("cgroup.subtree_control");
            let on = fs::read_to_string(&ctl)
                .map(|c| c.split_whitespace().any(|c| c == "memory"))
                .unwrap_or(false);
            if !on {
                fs::write(&ctl, "+memory").map_err(io_err("enabling memory in", &ctl))?;
            }
        }
        if dir.exists() {
            // Left by a plumb that was killed: empty it into the parent, then reuse.
            let _ = fs::remove_dir(&dir);
        }
        if !dir.exists() {
            fs::create_dir(&dir).map_err(io_err("creating", &dir))?;
        }
        let limit = MemoryLimit {
            dir,
            parent,
            version,
            bytes,
        };
        match version {
            Version::V1 => {
                let f = limit.dir.join("memory.limit_in_bytes");
                fs::write(&f, bytes.to_string()).map_err(io_err("writing", &f))?;
                // Without swap headroom a v1 group cannot trade memory for swap.
                let sw = limit.dir.join("memory.memsw.limit_in_bytes");
                if sw.exists() {
                    let _ = fs::write(&sw, bytes.to_string());
                }
            }
            Version::V2 => {
                let f = limit.dir.join("memory.max");
                fs::write(&f, bytes.to_string()).map_err(io_err("writing", &f))?;
                let sw = limit.dir.join("memory.swap.max");
                if sw.exists() {
                    let _ = fs::write(&sw, "0");
                }
            }
        }
        Ok(limit)
    }

    /// The limit in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The group's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The interface in use.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Moves a process (all its threads) into the group; its children forked later are
    /// born in it.
    pub fn add(&self, pid: u32) -> Result<(), CgroupError> {
        let f = self.dir.join("cgroup.procs");
        fs::write(&f, pid.to_string()).map_err(io_err("moving a process into", &f))
    }

    /// Moves this process into the group (an embedded engine's memory and page cache
    /// are then its own).
    pub fn enter(&self) -> Result<(), CgroupError> {
        self.add(std::process::id())
    }

    /// Processes still in the group.
    fn procs(&self) -> Vec<u32> {
        fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

impl Drop for MemoryLimit {
    /// Every process left in it goes back to the parent, then the group goes (its page
    /// cache is handed to the parent by the kernel).
    fn drop(&mut self) {
        let back = self.parent.join("cgroup.procs");
        for pid in self.procs() {
            let _ = fs::write(&back, pid.to_string());
        }
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Removes the empty groups that plumbs killed before they could remove their own left
/// here (named `plumb-PID-…`, their PID gone; a group still holding a process, such as
/// a server a killed plumb left running, stays until that process is stopped).
fn sweep_gone(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix("plumb-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = fs::remove_dir(e.path());
            }
        }
    }
}

/// Drops the OS page cache (clean pages), after a sync: a step then starts cold.
pub fn drop_page_cache() -> Result<(), CgroupError> {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    let f = Path::new("/proc/sys/vm/drop_caches");
    fs::write(f, "1").map_err(io_err("writing", f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_hierarchy_is_one_error_not_an_unlimited_run() {
        let root = tempfile::tempdir().unwrap();
        let e = own_group(root.path()).unwrap_err();
        assert!(matches!(e, CgroupError::NoController), "{e}");
        assert!(e.to_string().contains("memory_mb"), "{e}");
    }

    #[test]
    fn a_limited_child_holds_a_process_and_goes_away() {
        // Needs root and a memory controller (this VM has v1; CI runs as root).
        let l = MemoryLimit::create(&format!("plumb-test-{}", std::process::id()), 64 << 20)
            .expect("a child memory cgroup (run the tests as root on a host with cgroups)");
        let dir = l.path().to_path_buf();
        let limit_file = match l.version() {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        };
        let set: u64 = fs::read_to_string(dir.join(limit_file))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(set, 64 << 20);
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        l.add(child.id()).unwrap();
        assert!(l.procs().contains(&child.id()));
        drop(l);
        assert!(!dir.exists(), "the group is removed, its process moved out");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
