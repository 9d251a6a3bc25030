//! Compiles the engines' small C/C++ layers: the RocksDB reader (cpp/rocks_reader.cc)
//! against the headers librocksdb-sys (or libspeedb-sys) builds from, so reads can reuse
//! pinned slices and options as db_bench does instead of the C API's allocation per
//! read, with the cold-path calls whose C API differs by release (cpp/rocks_admin.cc);
//! the SplinterDB shim (cpp/splinter_shim.c) against the installed SplinterDB's headers,
//! so its config structs are laid out by the build that is linked; and the WiredTiger
//! shim (cpp/wt_shim.c), whose handles are structs of method pointers.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=cpp/rocks_reader.cc");
    println!("cargo:rerun-if-changed=cpp/rocks_admin.cc");
    println!("cargo:rerun-if-changed=cpp/splinter_shim.c");
    println!("cargo:rerun-if-changed=cpp/wt_shim.c");
    println!("cargo:rerun-if-env-changed=SPLINTERDB_DIR");
    if std::env::var_os("CARGO_FEATURE_ROCKSDB").is_some()
        || std::env::var_os("CARGO_FEATURE_SPEEDB").is_some()
    {
        rocks_shims();
    }
    if std::env::var_os("CARGO_FEATURE_SPLINTERDB").is_some() {
        splinter_shim();
    }
    if std::env::var_os("CARGO_FEATURE_WIREDTIGER").is_some() {
        wt_shim();
    }
}

/// Where the RocksDB (or Speedb) being linked keeps its headers, and the version to
/// record: librocksdb-sys (links = "rocksdb", 0.17 and newer) and libspeedb-sys (links =
/// "speedb") publish their source directories; PLUMB_ROCKSDB_SRC names it for older
/// librocksdb-sys releases (scripts/build-rocksdb-release.sh sets it).
fn rocks_source() -> (PathBuf, String) {
    println!("cargo:rerun-if-env-changed=PLUMB_ROCKSDB_SRC");
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let Some(src) = var("DEP_SPEEDB_CARGO_MANIFEST_DIR") {
        let src = Path::new(&src).join("speedb");
        let include = src.join("include");
        let speedb = version_of(&src.join("speedb").join("version.h"), "SPEEDB");
        let base = version_of(&include.join("rocksdb").join("version.h"), "ROCKSDB");
        return (include, format!("{speedb} (RocksDB {base})"));
    }
    let src = var("DEP_ROCKSDB_CARGO_MANIFEST_DIR")
        .or_else(|| var("PLUMB_ROCKSDB_SRC"))
        .unwrap_or_else(|| {
            panic!(
                "librocksdb-sys did not publish DEP_ROCKSDB_CARGO_MANIFEST_DIR (releases \
                 before 0.17 do not): set PLUMB_ROCKSDB_SRC to its source directory, as \
                 scripts/build-rocksdb-release.sh does"
            )
        });
    let include = Path::new(&src).join("rocksdb").join("include");
    // The release this build bundles, from its own header: a plumb built against
    // another librocksdb-sys release records that release, not a constant.
    let version = version_of(&include.join("rocksdb").join("version.h"), "ROCKSDB");
    (include, version)
}

/// MAJOR.MINOR.PATCH from a version header's `#define {prefix}_MAJOR …` lines.
fn version_of(header: &Path, prefix: &str) -> String {
    let text = std::fs::read_to_string(header)
        .unwrap_or_else(|e| panic!("reading {}: {e}", header.display()));
    let part = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("#define {prefix}_{name} ")))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("{} has no {prefix}_{name}", header.display()))
    };
    format!("{}.{}.{}", part("MAJOR"), part("MINOR"), part("PATCH"))
}

fn rocks_shims() {
    let (include, mut version) = rocks_source();
    // A build from a RocksDB source tree (scripts/build-rocksdb-release.sh tree:PATH)
    // records the tree, its commit and whether it was modified.
    for v in [
        "PLUMB_ROCKSDB_TREE",
        "PLUMB_ROCKSDB_TREE_COMMIT",
        "PLUMB_ROCKSDB_TREE_MODIFIED",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let tree = std::env::var("PLUMB_ROCKSDB_TREE").unwrap_or_default();
    if !tree.is_empty() {
        let commit = std::env::var("PLUMB_ROCKSDB_TREE_COMMIT").unwrap_or_default();
        let modified = std::env::var("PLUMB_ROCKSDB_TREE_MODIFIED").is_ok_and(|m| m == "yes");
        version = format!(
            "{version} (tree {tree} at {}{})",
            if commit.is_empty() {
                "no commit"
            } else {
                &commit
            },
            if modified { ", modified" } else { "" }
        );
    }
    println!("cargo:rustc-env=PLUMB_ROCKSDB_TREE={tree}");
    println!("cargo:rustc-env=PLUMB_ROCKSDB_VERSION={version}");
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++20")
        .define("NDEBUG", Some("1"))
        .include(&include)
        .file("cpp/rocks_reader.cc")
        .file("cpp/rocks_admin.cc")
        .warnings(true);
    // The hyper clock cache reached the C API in RocksDB 8.x; 7.x has only LRU there.
    println!("cargo:rustc-check-cfg=cfg(plumb_rocks_hyper_clock)");
    let c_api = std::fs::read_to_string(include.join("rocksdb").join("c.h")).unwrap_or_default();
    if c_api.contains("rocksdb_cache_create_hyper_clock") {
        println!("cargo:rustc-cfg=plumb_rocks_hyper_clock");
    }
    // The caches' option structs (which set a shard count) came to the C API later than
    // the caches themselves.
    println!("cargo:rustc-check-cfg=cfg(plumb_rocks_lru_opts)");
    println!("cargo:rustc-check-cfg=cfg(plumb_rocks_hyper_clock_opts)");
    if c_api.contains("rocksdb_lru_cache_options_set_num_shard_bits") {
        println!("cargo:rustc-cfg=plumb_rocks_lru_opts");
    }
    if c_api.contains("rocksdb_hyper_clock_cache_options_set_num_shard_bits") {
        println!("cargo:rustc-cfg=plumb_rocks_hyper_clock_opts");
    }
    // VerifyChecksum reached the C API after 8.x (Speedb 2.6.0's has none).
    println!("cargo:rustc-check-cfg=cfg(plumb_rocks_verify_checksum)");
    if c_api.contains("rocksdb_verify_checksum(") {
        println!("cargo:rustc-cfg=plumb_rocks_verify_checksum");
    }
    // WaitForCompact (with its flush option) arrived in RocksDB 8.x; older releases and
    // Speedb wait by polling instead (cpp/rocks_admin.cc).
    let options =
        std::fs::read_to_string(include.join("rocksdb").join("options.h")).unwrap_or_default();
    if options
        .split("struct WaitForCompactOptions")
        .nth(1)
        .is_some_and(|s| s.contains("bool flush"))
    {
        b.define("PLUMB_HAS_WAIT_FOR_COMPACT", Some("1"));
    }
    b.compile("plumb_rocks_shims");
}

/// Where SplinterDB is: `SPLINTERDB_DIR` (an install prefix, or a source tree after
/// `make libs`), else /usr/local where scripts/build-splinterdb.sh installs it.
fn splinter_dirs() -> (PathBuf, PathBuf) {
    let root =
        PathBuf::from(std::env::var("SPLINTERDB_DIR").unwrap_or_else(|_| "/usr/local".into()));
    let include = root.join("include");
    let lib = [root.join("lib"), root.join("build/release/lib")]
        .into_iter()
        .find(|d| d.join("libsplinterdb.so").exists());
    match lib {
        Some(lib) if include.join("splinterdb/splinterdb.h").exists() => (include, lib),
        _ => panic!(
            "the splinterdb feature needs SplinterDB's headers and libsplinterdb.so under {}: \
             run `bash scripts/build-splinterdb.sh`, or set SPLINTERDB_DIR to an install \
             prefix or a source tree built with `make libs`",
            root.display()
        ),
    }
}

fn splinter_shim() {
    let (include, lib) = splinter_dirs();
    cc::Build::new()
        .define("_GNU_SOURCE", None)
        .define("SPLINTERDB_PLATFORM_DIR", Some("platform_linux"))
        .include(&include)
        .file("cpp/splinter_shim.c")
        .warnings(true)
        .compile("plumb_splinter_shim");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib=splinterdb");
    // This package's own test binaries find the library without LD_LIBRARY_PATH even
    // when it is not where the dynamic linker looks.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
}

/// The WiredTiger shim, against Debian's /usr/include/wiredtiger.h (libwiredtiger-dev).
fn wt_shim() {
    if !Path::new("/usr/include/wiredtiger.h").exists() {
        panic!(
            "the wiredtiger feature needs /usr/include/wiredtiger.h: apt-get install \
             libwiredtiger-dev (scripts/setup.sh does), or build without it"
        );
    }
    cc::Build::new()
        .file("cpp/wt_shim.c")
        .warnings(true)
        .compile("plumb_wt_shim");
    println!("cargo:rustc-link-lib=dylib=wiredtiger");
}
