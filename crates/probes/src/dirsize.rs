//! On-disk size of a data directory, for the `db_gb` and `space_amp` metrics.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use crate::ProbeError;

/// Sum of the lengths of all regular files below `path` (or of `path` itself if it is a
/// file). Symlinks are not followed, so a link to elsewhere is not double-counted.
///
/// Engines delete files while compacting, so an entry that vanishes during the walk is
/// skipped rather than reported; any other failure (including `path` itself missing) is an
/// error naming the offending path.
pub fn dir_bytes(path: &Path) -> Result<u64, ProbeError> {
    let md = fs::symlink_metadata(path).map_err(|e| ProbeError::io("stat of", path, e))?;
    if md.is_file() {
        return Ok(md.len());
    }
    if !md.is_dir() {
        return Ok(0);
    }
    walk(path)
}

/// Recursive part of [`dir_bytes`]; tolerates entries deleted concurrently.
fn walk(dir: &Path) -> Result<u64, ProbeError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(ProbeError::io("listing", dir, e)),
    };
    let mut total = 0u64;
    for entry in entries {
        let entry = entry.map_err(|e| ProbeError::io("listing", dir, e))?;
        let p = entry.path();
        let md = match fs::symlink_metadata(&p) {
            Ok(md) => md,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(ProbeError::io("stat of", &p, e)),
        };
        if md.is_file() {
            total += md.len();
        } else if md.is_dir() {
            total += walk(&p)?;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_regular_files_recursively_without_following_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a"), vec![0u8; 1000]).unwrap();
        fs::create_dir_all(d.join("sub/deeper")).unwrap();
        fs::write(d.join("sub/b"), vec![0u8; 234]).unwrap();
        fs::write(d.join("sub/deeper/c"), vec![0u8; 4096]).unwrap();
        fs::write(d.join("sub/empty"), b"").unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("big"), vec![0u8; 1 << 20]).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.join("link-dir")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("big"), d.join("link-file")).unwrap();
        assert_eq!(dir_bytes(d).unwrap(), 1000 + 234 + 4096);
        assert_eq!(dir_bytes(&d.join("a")).unwrap(), 1000);
    }

    #[test]
    fn missing_path_error_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let err = dir_bytes(&missing).unwrap_err();
        assert!(
            err.to_string().contains(&*missing.to_string_lossy()),
            "{err}"
        );
        assert!(matches!(err, ProbeError::Io { .. }));
    }
}
