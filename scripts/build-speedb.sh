#!/usr/bin/env bash
# Builds the plumb that runs Speedb (`plumb kv --engine speedb`) and prints its path.
# Speedb keeps RocksDB's C API and exports the same symbols, so it cannot share a binary
# with RocksDB: this build swaps the `rocksdb` feature for `speedb` (the libspeedb-sys
# crate, Speedb on RocksDB 8.1.1) and keeps the other engines. Its runs go to the same
# store as any plumb's, under the engine name speedb with Speedb's version, for
# `plumb compare` beside RocksDB's. Not part of CI: compiling Speedb takes ~25 minutes on
# 2 cores (once; later runs reuse the build dir).
#
#   bash scripts/build-speedb.sh          # prints the binary's path last
#   bash scripts/build-speedb.sh --test   # and runs the engine conformance suite, the
#                                         # engine unit tests and tests/engines.rs on it
#
# Env: TARGET_DIR [/var/tmp/plumb-speedb-target] (cargo's build dir for this binary);
# BUILDS_DIR [/var/tmp/plumb-rocksdb-releases/bin] where it is linked as
# plumb-speedb-VERSION for suites that name Speedb's release.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR=${TARGET_DIR:-/var/tmp/plumb-speedb-target}

bash scripts/setup.sh >&2
# SplinterDB joins when it is installed (scripts/build-splinterdb.sh), as in CI's build.
features=speedb,lmdb,sqlite,leveldb,wiredtiger
if [ -f /usr/local/include/splinterdb/splinterdb.h ] || [ -n "${SPLINTERDB_DIR:-}" ]; then
  features=$features,splinterdb
fi
# shellcheck source=scripts/rocksdb-env.sh
. scripts/rocksdb-env.sh
echo "build-speedb: cargo build --release --no-default-features --features $features (into $TARGET_DIR)" >&2
CARGO_TARGET_DIR=$TARGET_DIR cargo build --release --no-default-features --features "$features" >&2
bin=$TARGET_DIR/release/plumb
"$bin" --version | grep -q '^engines: speedb ' || {
  echo "build-speedb: $bin does not list speedb in --version" >&2
  exit 1
}
"$bin" --version >&2
if [ "${1:-}" = --test ]; then
  CARGO_TARGET_DIR=$TARGET_DIR cargo test --release -p plumb-targets --no-default-features --features "$features" >&2
  CARGO_TARGET_DIR=$TARGET_DIR cargo test --release --no-default-features --features "$features" --test engines >&2
fi
# Where a suite's `engine = "speedb"`, `versions = ["2.6.0"]` finds it
# (plumb_targets::builds), beside the RocksDB releases.
version=$("$bin" --version | sed -n 's/^engines: speedb \([0-9.]*\).*/\1/p')
bins=${BUILDS_DIR:-/var/tmp/plumb-rocksdb-releases/bin}
mkdir -p "$bins"
ln -sf "$bin" "$bins/plumb-speedb-$version"
echo "build-speedb: linked as $bins/plumb-speedb-$version" >&2
echo "$bin"
