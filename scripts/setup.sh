#!/usr/bin/env bash
# Installs what building and testing plumb needs on Debian 12 (run as root).
# Idempotent: packages already present are not reinstalled.
set -euo pipefail

# libclang-dev: bindgen (librocksdb-sys); clang: its headers; pkg-config, make, g++: the
# C++ build of RocksDB inside librocksdb-sys. libleveldb-dev, libwiredtiger-dev: the
# leveldb and wiredtiger engines link Debian's builds (LMDB and SQLite are compiled in by
# their crates).
PKGS=(libclang-dev clang pkg-config make g++ git libleveldb-dev libwiredtiger-dev)

# shellcheck source=scripts/packages.sh
. "$(dirname "$0")/packages.sh"
ensure_packages setup "${PKGS[@]}"

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust >= 1.88 (rustup) and re-run" >&2
  exit 1
fi
echo "setup: ok ($(cargo --version))"
