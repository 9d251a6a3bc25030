//! Reading kernel files below a root path, so tests can point every read at a fixture tree.

use std::fs;
use std::path::{Path, PathBuf};

/// Why a kernel file could not be used.
///
/// Each variant names the file, so the snapshot's notes can say exactly what was missing
/// instead of silently showing nothing.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Reading a file or directory failed.
    #[error("reading {}: {err}", path.display())]
    Read {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying OS error.
        err: std::io::Error,
    },
    /// A file was read but its contents were not in the expected format.
    #[error("parsing {}: {reason}", path.display())]
    Parse {
        /// The file being parsed.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

/// A view of the machine's `/proc`, `/sys`, `/etc` and `/dev` rooted at `root`.
#[derive(Debug, Clone)]
pub(crate) struct Fs {
    root: PathBuf,
}

impl Fs {
    pub(crate) fn new(root: &Path) -> Fs {
        Fs {
            root: root.to_path_buf(),
        }
    }

    /// Whether this is the live machine (root `/`), where syscalls such as `statvfs`,
    /// `stat` and `geteuid` describe the same system as the files.
    pub(crate) fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    /// `p` (an absolute machine path) below the root.
    pub(crate) fn path(&self, p: impl AsRef<Path>) -> PathBuf {
        let p = p.as_ref();
        self.root.join(p.strip_prefix("/").unwrap_or(p))
    }

    pub(crate) fn read(&self, p: impl AsRef<Path>) -> Result<String, HostError> {
        let path = self.path(p);
        fs::read_to_string(&path).map_err(|err| HostError::Read { path, err })
    }

    /// The trimmed contents, or `None` if missing, unreadable or empty.
    pub(crate) fn string(&self, p: impl AsRef<Path>) -> Option<String> {
        let s = self.read(p).ok()?;
        let s = s.trim();
        (!s.is_empty()).then(|| s.to_string())
    }

    pub(crate) fn u64(&self, p: impl AsRef<Path>) -> Option<u64> {
        self.string(p)?.parse().ok()
    }

    pub(crate) fn i64(&self, p: impl AsRef<Path>) -> Option<i64> {
        self.string(p)?.parse().ok()
    }

    pub(crate) fn exists(&self, p: impl AsRef<Path>) -> bool {
        self.path(p).exists()
    }

    /// Sorted entry names of a directory; empty when it is missing.
    pub(crate) fn names(&self, p: impl AsRef<Path>) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.path(p))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Parses a file with one of procfs-core's reader-based parsers.
    pub(crate) fn parse<T: procfs_core::FromRead>(
        &self,
        p: impl AsRef<Path>,
    ) -> Result<T, HostError> {
        let path = self.path(p);
        let f = fs::File::open(&path).map_err(|err| HostError::Read {
            path: path.clone(),
            err,
        })?;
        T::from_read(f).map_err(|e| HostError::Parse {
            path,
            reason: e.to_string(),
        })
    }
}

/// Parses a kernel CPU list such as `0-3,8,10-11` into its members.
pub(crate) fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
                    if b >= a && b - a < 65_536 {
                        out.extend(a..=b);
                    }
                }
            }
            None => {
                if let Ok(a) = part.trim().parse() {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// The bracketed choice in a sysfs selector such as `always [madvise] never`.
pub(crate) fn bracketed(s: &str) -> Option<String> {
    let start = s.find('[')?;
    let end = s[start..].find(']')? + start;
    Some(s[start + 1..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("5"), vec![5]);
    }

    #[test]
    fn bracketed_choice() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("none"), None);
    }

    #[test]
    fn read_error_names_file() {
        let fs = Fs::new(Path::new("/nonexistent-root"));
        let e = fs.read("/proc/meminfo").unwrap_err().to_string();
        assert!(e.contains("/nonexistent-root/proc/meminfo"), "{e}");
    }
}
