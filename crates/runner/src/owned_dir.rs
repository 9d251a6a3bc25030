//! A run's own data directory: made private under a root and marked with its owner, so
//! a plumb killed mid-run leaves a directory the next one's sweep clears; removed (or
//! kept) before its marker goes, so a kill between the two never leaves an unmarked
//! directory no sweep would touch. Every family that makes a directory for an engine's
//! files makes it here.

use crate::Progress;
use std::path::{Path, PathBuf};

/// A directory could not be made where a run's data goes.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path}: {source}")]
pub struct DirError {
    /// What was being done.
    pub what: &'static str,
    /// The directory.
    pub path: PathBuf,
    /// The OS error.
    pub source: std::io::Error,
}

/// A fresh directory that one run owns until [`OwnedDir::finish`].
#[derive(Debug)]
pub struct OwnedDir {
    dir: tempfile::TempDir,
}

impl OwnedDir {
    /// Makes `plumb-{prefix}-…` (mode 0700) in `root`, creating `root` if need be, after
    /// removing what killed plumbs left there (each said to `notes`).
    pub fn make(root: &Path, prefix: &str, notes: &dyn Progress) -> Result<Self, DirError> {
        std::fs::create_dir_all(root).map_err(|source| DirError {
            what: "data root",
            path: root.to_path_buf(),
            source,
        })?;
        for gone in plumb_store::owner::sweep(root) {
            notes.note(&format!(
                "removed {}, left by a plumb that was killed",
                gone.display()
            ));
        }
        let dir = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .prefix(&format!("plumb-{prefix}-"))
            .tempdir_in(root)
            .map_err(|source| DirError {
                what: "creating a data dir in",
                path: root.to_path_buf(),
                source,
            })?;
        plumb_store::owner::claim(dir.path());
        Ok(OwnedDir { dir })
    }

    /// Where the data goes.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Removes the directory, or with `keep` leaves it (said to `notes`), and then its
    /// owner marker.
    pub fn finish(self, keep: bool, notes: &dyn Progress) {
        let path = self.dir.path().to_path_buf();
        if keep {
            let kept = self.dir.keep();
            notes.note(&format!("kept data dir {}", kept.display()));
        } else {
            let _ = self.dir.close();
        }
        plumb_store::owner::release(&path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Keeps the notes it is told.
    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl Progress for Heard {
        fn start(&self, _: &str, _: Option<u64>, _: Option<std::time::Duration>) {}
        fn tick(&self, _: u64, _: std::time::Duration) {}
        fn finish(&self) {}
        fn note(&self, line: &str) {
            self.0.lock().unwrap().push(line.to_string());
        }
    }

    #[test]
    fn a_run_dir_is_private_owned_and_gone_or_kept_after() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let heard = Heard::default();
        let d = OwnedDir::make(&root.path().join("new root"), "t", &heard).unwrap();
        let path = d.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("plumb-t-"));
        d.finish(false, &heard);
        assert!(!path.exists());
        assert!(heard.0.lock().unwrap().is_empty());

        let d = OwnedDir::make(root.path(), "k", &heard).unwrap();
        let path = d.path().to_path_buf();
        d.finish(true, &heard);
        assert!(path.is_dir());
        assert_eq!(
            *heard.0.lock().unwrap(),
            [format!("kept data dir {}", path.display())]
        );
        // Kept means released: the next plumb's sweep leaves it alone.
        let _again = OwnedDir::make(root.path(), "k", &heard).unwrap();
        assert!(path.is_dir());
    }

    #[test]
    fn what_a_killed_plumb_left_is_removed_and_said() {
        let root = tempfile::tempdir().unwrap();
        let left = root.path().join("plumb-old-1");
        std::fs::create_dir(&left).unwrap();
        // This process with another start time: a plumb that is gone.
        let me = plumb_store::owner::Owner::current().expect("/proc says who we are");
        let mut f: Vec<String> = me.encode().split(' ').map(String::from).collect();
        let start: u64 = f[3].parse().unwrap();
        f[3] = (start + 1).to_string();
        std::fs::write(plumb_store::owner::marker_of(&left), f.join(" ")).unwrap();
        let heard = Heard::default();
        let d = OwnedDir::make(root.path(), "new", &heard).unwrap();
        assert!(!left.exists());
        assert_eq!(
            *heard.0.lock().unwrap(),
            [format!(
                "removed {}, left by a plumb that was killed",
                left.display()
            )]
        );
        d.finish(false, &heard);
    }

    #[test]
    fn a_root_that_cannot_be_made_names_it() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let under = file.path().join("sub");
        let e = OwnedDir::make(&under, "t", &Heard::default()).unwrap_err();
        assert_eq!(e.path, under);
        assert!(e.to_string().contains("data root"), "{e}");
    }
}
