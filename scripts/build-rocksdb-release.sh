#!/usr/bin/env bash
# Builds plumb against another RocksDB release and prints the binary's path, so releases
# can be run and compared like any two engines (the seeds compare 7.x, 8.x, 9.x …).
# Cargo allows one librocksdb-sys in a build graph, so each release gets a copy of this
# tree whose Cargo.toml pins that librocksdb-sys, built in its own directory. Each binary
# records the release it bundles (read from the release's own version.h): `plumb
# --version` lists it, and every run it stores carries it, so `plumb compare` labels
# the runs by release. Not part of CI: each release compiles RocksDB (~20 minutes on 2
# cores, once per release; later runs reuse the build dir).
#
#   bash scripts/build-rocksdb-release.sh 9.9.3      # a RocksDB release from the table
#   bash scripts/build-rocksdb-release.sh 0.17.1+9.9.3   # or any librocksdb-sys version
#
# Env: BUILD_ROOT [/var/tmp/plumb-rocksdb-releases] (one src-R/ and target-R/ per release).
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:?usage: build-rocksdb-release.sh RELEASE (8.1.1, 8.10.0, 9.9.3, 10.4.2, 11.8.1) or a librocksdb-sys version such as 0.17.1+9.9.3}
BUILD_ROOT=${BUILD_ROOT:-/var/tmp/plumb-rocksdb-releases}

# The librocksdb-sys release that bundles each RocksDB release (crates.io).
case "$want" in
  6.28.2) crate=0.6.3+6.28.2 ;;
  7.4.4) crate=0.8.3+7.4.4 ;;
  7.9.2) crate=0.10.0+7.9.2 ;;
  8.1.1) crate=0.11.0+8.1.1 ;;
  8.5.3) crate=0.12.0+8.5.3 ;;
  8.6.7) crate=0.13.0+8.6.7 ;;
  8.8.1) crate=0.14.0+8.8.1 ;;
  8.9.1) crate=0.15.0+8.9.1 ;;
  8.10.0) crate=0.16.0+8.10.0 ;;
  9.9.3) crate=0.17.1+9.9.3 ;;
  10.4.2) crate=0.17.3+10.4.2 ;;
  11.8.1) crate=0.19.0+11.8.1 ;;
  *+*) crate=$want ;;
  *) echo "build-rocksdb-release: no librocksdb-sys known for RocksDB $want; pass the crate version (e.g. 0.17.1+9.9.3, see crates.io/crates/librocksdb-sys/versions)" >&2
     exit 2 ;;
esac
release=${crate#*+}
minor=$(echo "${crate%%+*}" | cut -d. -f2)
# Before 0.17 librocksdb-sys always links statically and has no `static` feature; 0.17
# and newer need it, and generate bindings at build time only with `bindgen-runtime`.
features='"lz4", "zstd"'
[ "$minor" -ge 17 ] && features='"static", "lz4", "zstd", "bindgen-runtime"'

bash scripts/setup.sh >&2
# shellcheck source=scripts/rocksdb-env.sh
. scripts/rocksdb-env.sh
src=$BUILD_ROOT/src-$release
target=$BUILD_ROOT/target-$release
mkdir -p "$src" "$target"
# A copy of the tree as it is now (committed or not), without build output.
tar --exclude=./target --exclude=./.git -cf - . | tar -xf - -C "$src"
line="librocksdb-sys = { version = \"=$crate\", default-features = false, features = [$features] }"
sed -i "s|^librocksdb-sys = .*|$line|" "$src/Cargo.toml"
grep -qF "$line" "$src/Cargo.toml" || { echo "build-rocksdb-release: could not pin librocksdb-sys in $src/Cargo.toml" >&2; exit 1; }

cd "$src"
cargo update -q -p librocksdb-sys --precise "$crate" >&2
# Releases before 0.17 do not publish their source directory to dependents: name it
# for crates/targets/build.rs, which compiles plumb's C++ shims against its headers.
PLUMB_ROCKSDB_SRC=$(cargo metadata --format-version 1 | python3 -c '
import json, os, sys
m = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == "librocksdb-sys"))')
export PLUMB_ROCKSDB_SRC
echo "build-rocksdb-release: RocksDB $release (librocksdb-sys $crate) in $src, building into $target" >&2
CARGO_TARGET_DIR=$target cargo build --release >&2
bin=$target/release/plumb
"$bin" --version | grep -q "rocksdb $release" || {
  echo "build-rocksdb-release: $bin does not report RocksDB $release:" >&2
  "$bin" --version >&2
  exit 1
}
"$bin" --version >&2
echo "$bin"
