#!/usr/bin/env bash
# Installs what building and testing plumb needs on Debian 12 (run as root).
# Idempotent: packages already present are not reinstalled.
set -euo pipefail

# libclang-dev: bindgen (rocksdb crate); clang: its headers; pkg-config, make, g++: the
# C++ build of RocksDB inside librocksdb-sys. libleveldb-dev, libwiredtiger-dev: the
# leveldb and wiredtiger engines link Debian's builds (LMDB and SQLite are compiled in by
# their crates).
PKGS=(libclang-dev clang pkg-config make g++ git libleveldb-dev libwiredtiger-dev)

missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install: ${missing[*]} (run: sudo bash scripts/setup.sh)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust >= 1.88 (rustup) and re-run" >&2
  exit 1
fi
echo "setup: ok ($(cargo --version))"
