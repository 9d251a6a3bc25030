#!/usr/bin/env bash
# Sets up a Debian 12 machine and runs every check CI runs: format, lints, all tests.
# The first build compiles RocksDB from source (~15-18 min on 2 cores); later ones
# reuse it. Tests run in the release profile so RocksDB is compiled once, not twice.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
cargo test --release --workspace
