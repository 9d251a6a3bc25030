//! Where the plumb built against another build of an engine lives. One binary links one
//! RocksDB (cargo allows one librocksdb-sys in a build graph, and releases export the
//! same symbols), so a suite that names `rocksdb@8.5.3` beside `rocksdb@11.8.1` runs
//! each from its own plumb: scripts/build-rocksdb-release.sh builds them and links each
//! into a directory as `plumb-rocksdb-<release>` (`plumb-rocksdb-tree-<path>` for a
//! source tree), and this module finds them.

use std::path::{Path, PathBuf};

/// Where scripts/build-rocksdb-release.sh links the binaries it builds by default.
pub const DEFAULT_BUILDS_DIR: &str = "/var/tmp/plumb-rocksdb-releases/bin";

/// The file name of the plumb that runs `engine` at `release` (`8.5.3`, or
/// `tree:/src/rocksdb` for a source tree): `plumb-rocksdb-8.5.3`,
/// `plumb-rocksdb-tree-_src_rocksdb`.
pub fn binary_name(engine: &str, release: &str) -> String {
    match release.strip_prefix("tree:") {
        Some(path) => format!("plumb-{engine}-tree-{}", path.replace('/', "_")),
        None => format!("plumb-{engine}-{release}"),
    }
}

/// Where to look, in order: each directory of `$PLUMB_BUILDS` (colon-separated), the
/// directory of the running plumb, then [`DEFAULT_BUILDS_DIR`].
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PLUMB_BUILDS")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    if let Some(d) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(d);
    }
    dirs.push(PathBuf::from(DEFAULT_BUILDS_DIR));
    dirs
}

/// The plumb that runs `engine` at `release`, or what to do to get one: the command
/// that builds it and how long that takes.
pub fn find(engine: &str, release: &str) -> Result<PathBuf, String> {
    let name = binary_name(engine, release);
    let dirs = search_dirs();
    if let Some(p) = dirs.iter().map(|d| d.join(&name)).find(|p| p.is_file()) {
        return Ok(p);
    }
    let build = match engine {
        "speedb" => "bash scripts/build-speedb.sh (Speedb's one release on the crate \
                     registry; about 25 minutes on 2 cores, once)"
            .to_string(),
        _ => format!(
            "bash scripts/build-rocksdb-release.sh {release} (compiles RocksDB: about 20 \
             minutes on 2 cores, once; it links the binary into {DEFAULT_BUILDS_DIR})"
        ),
    };
    Err(format!(
        "no plumb built against {engine} {release}: looked for {name} in {}; build it with \
         `{build}`, or set PLUMB_BUILDS to the directory that holds it",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_engine_and_release() {
        assert_eq!(binary_name("rocksdb", "8.5.3"), "plumb-rocksdb-8.5.3");
        assert_eq!(
            binary_name("rocksdb", "tree:/src/rocksdb"),
            "plumb-rocksdb-tree-_src_rocksdb"
        );
    }

    #[test]
    fn a_missing_build_says_how_to_make_it() {
        let e = find("rocksdb", "0.0.1").unwrap_err();
        assert!(
            e.contains("build-rocksdb-release.sh 0.0.1") && e.contains("20 minutes"),
            "{e}"
        );
        assert!(e.contains("plumb-rocksdb-0.0.1"), "{e}");
    }

    #[test]
    fn a_build_in_plumb_builds_is_found() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("plumb-rocksdb-1.2.3");
        std::fs::write(&bin, "").unwrap();
        // The variable is read when looking; set for this process only.
        std::env::set_var("PLUMB_BUILDS", d.path());
        let found = find("rocksdb", "1.2.3");
        std::env::remove_var("PLUMB_BUILDS");
        assert_eq!(found.unwrap(), bin);
    }
}
