//! Compiles the small C++ reader (cpp/rocks_reader.cc) against the RocksDB
//! headers librocksdb-sys builds from, so reads can reuse pinned slices and options
//! as db_bench does instead of the C API's allocation per read.

fn main() {
    println!("cargo:rerun-if-changed=cpp/rocks_reader.cc");
    if std::env::var_os("CARGO_FEATURE_ROCKSDB").is_none() {
        return;
    }
    // librocksdb-sys (links = "rocksdb") publishes its source directory.
    let src = std::env::var("DEP_ROCKSDB_CARGO_MANIFEST_DIR").expect(
        "librocksdb-sys did not publish DEP_ROCKSDB_CARGO_MANIFEST_DIR; \
         the rocksdb feature needs librocksdb-sys 0.17 or newer",
    );
    let include = std::path::Path::new(&src).join("rocksdb").join("include");
    cc::Build::new()
        .cpp(true)
        .std("c++20")
        .define("NDEBUG", Some("1"))
        .include(&include)
        .file("cpp/rocks_reader.cc")
        .warnings(true)
        .compile("plumb_rocks_reader");
}
