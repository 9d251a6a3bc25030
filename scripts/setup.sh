#!/usr/bin/env bash
# Installs what building and testing plumb needs on Debian 12 (run as root).
# Idempotent: packages already present are not reinstalled.
set -euo pipefail

# libclang-dev: bindgen (librocksdb-sys); clang: its headers; pkg-config, make, g++: the
# C++ build of RocksDB inside librocksdb-sys. libleveldb-dev, libwiredtiger-dev: the
# leveldb and wiredtiger engines link Debian's builds (LMDB and SQLite are compiled in by
# their crates).
# postgresql, mariadb-server, mariadb-plugin-rocksdb: the servers `plumb sql` starts
# (PostgreSQL 15, MariaDB 10.11 with InnoDB and MyRocks; apt does not start them here);
# sysbench: the peer of bench/compare-sysbench.sh; linux-perf: `plumb sql --profile`;
# sysstat: iostat, whose -x figures crates/probes/tests/iostat.rs checks plumb's against
# (and bench/compare-iostat.sh sets beside a run's). smartmontools, nvme-cli: SMART
# health (wear, spare, media errors, temperature) in every run's host snapshot;
# xfsprogs: xfs_info for an xfs data dir's block size and stripe geometry (e2fsprogs'
# dumpe2fs, for ext4, is in every Debian install). valgrind: `plumb icount` counts
# instructions per op under its callgrind where no PMU exists (this VM). chromium: the
# headless browser tests/serve.rs drives through `plumb serve`'s pages. git: the
# repositories `plumb bisect` searches (tests/bisect.rs makes some); ccache: the
# compiler cache its --engine rocksdb midpoints share, so each recompiles only what
# differs; bison and flex: what a PostgreSQL tree needs beside a compiler for
# `plumb bisect --server postgres` (its configure and make).
PKGS=(libclang-dev clang pkg-config make g++ git libleveldb-dev libwiredtiger-dev
  postgresql mariadb-server mariadb-plugin-rocksdb sysbench linux-perf sysstat
  smartmontools nvme-cli xfsprogs valgrind chromium ccache bison flex)

# shellcheck source=scripts/packages.sh
. "$(dirname "$0")/packages.sh"
ensure_packages setup "${PKGS[@]}"

# `plumb durability --cut power` and crates/powercut's tests mount a FUSE filesystem with
# mount(2) as root (no libfuse, no fusermount): only the kernel's fuse module is needed.
if [ ! -e /dev/fuse ]; then
  modprobe fuse 2>/dev/null || echo "setup: no /dev/fuse and modprobe fuse failed: --cut power will not run" >&2
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust >= 1.88 (rustup) and re-run" >&2
  exit 1
fi
echo "setup: ok ($(cargo --version))"
