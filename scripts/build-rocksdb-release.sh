#!/usr/bin/env bash
# Builds plumb against another RocksDB release, or against a RocksDB source tree, and
# prints the binary's path, so releases and trees run beside each other in one suite
# (`versions = ["8.5.3", "8.6.7", "tree:/src/rocksdb"]`) and compare like any two
# engines. Cargo allows one librocksdb-sys in a build graph, so each build gets a copy
# of this tree whose Cargo.toml pins that librocksdb-sys (for a source tree: a copy of
# the crate whose rocksdb/ is the tree, its source list regenerated from the tree's
# src.mk), built in its own directory, and linked into $BUILD_ROOT/bin as
# plumb-rocksdb-RELEASE (plumb-rocksdb-tree-PATH), where plumb looks for it. Each binary
# records what it links (read from the release's own version.h; for a tree also its
# path, commit and whether it was modified): `plumb --version` lists it and every run
# it stores carries it. Not part of CI: each build compiles RocksDB (~20 minutes on 2
# cores, once per release or tree; later runs reuse the build dir).
#
#   bash scripts/build-rocksdb-release.sh 8.5.3            # a RocksDB release from the table
#   bash scripts/build-rocksdb-release.sh 0.17.1+9.9.3     # or any librocksdb-sys version
#   bash scripts/build-rocksdb-release.sh tree:/src/rocksdb  # a source tree (git checkout,
#                                                          # patched or not)
#   bash scripts/build-rocksdb-release.sh 8.5.3 --test     # then run the engine conformance
#                  # suite, the engines' unit tests, tests/engines.rs and tests/rocksdb_account.rs
#                  # on that build (the same feature set as the build: no second RocksDB compile)
#
# Env: BUILD_ROOT [/var/tmp/plumb-rocksdb-releases] (src-R/ and target-R/ per build, and
# bin/); TREE_CRATE [the workspace's librocksdb-sys] the crate whose build script and C
# API bindings a source tree is built with (pick one near the tree's release).
set -euo pipefail
cd "$(dirname "$0")/.."
test=${2:-}
[ -z "$test" ] || [ "$test" = --test ] || { echo "build-rocksdb-release: unknown argument $test (only --test)" >&2; exit 2; }
want=${1:?usage: build-rocksdb-release.sh RELEASE (6.28.2 7.4.4 7.9.2 8.1.1 8.6.7 8.8.1 8.9.1 8.10.0 9.9.3 10.4.2 11.8.1), a librocksdb-sys version such as 0.17.1+9.9.3, or tree:/path/to/rocksdb}
BUILD_ROOT=${BUILD_ROOT:-/var/tmp/plumb-rocksdb-releases}

tree=
case "$want" in
  tree:/*) tree=${want#tree:}
    [ -f "$tree/include/rocksdb/version.h" ] && [ -f "$tree/src.mk" ] || {
      echo "build-rocksdb-release: $tree is not a RocksDB source tree (no include/rocksdb/version.h and src.mk)" >&2
      exit 2; }
    crate=${TREE_CRATE:-$(awk '/^name = "librocksdb-sys"/ { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)} ;;
  tree:*) echo "build-rocksdb-release: give the tree as an absolute path: tree:/path/to/rocksdb" >&2; exit 2 ;;
  6.28.2) crate=0.6.3+6.28.2 ;;
  7.4.4) crate=0.8.3+7.4.4 ;;
  7.9.2) crate=0.10.0+7.9.2 ;;
  8.1.1) crate=0.11.0+8.1.1 ;;
  8.5.3) echo "build-rocksdb-release: no crate on the registry holds RocksDB 8.5.3: librocksdb-sys 0.12.0+8.5.3 bundles 8.6.7 (its version.h and HISTORY.md say so). Build 8.5.3 from a source tree (tree:/path at tag v8.5.3), or take 8.1.1, the newest release before 8.6 on the registry" >&2
     exit 2 ;;
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
if [ -n "$tree" ]; then
  name=tree-$(echo "$tree" | tr / _)
else
  name=$release
fi
src=$BUILD_ROOT/src-$name
target=$BUILD_ROOT/target-$name
mkdir -p "$src" "$target" "$BUILD_ROOT/bin"
# A copy of the tree as it is now (committed or not), without build output. Each file
# is stamped with the copy's time (-m): kept mtimes older than the last build here
# would leave cargo sure that build is fresh, and an edit made while it ran would never
# be compiled in.
tar --exclude=./target --exclude=./.git -cf - . | tar -xmf - -C "$src"
line="librocksdb-sys = { version = \"=$crate\", default-features = false, features = [$features] }"
sed -i "s|^librocksdb-sys = .*|$line|" "$src/Cargo.toml"
grep -qF "$line" "$src/Cargo.toml" || { echo "build-rocksdb-release: could not pin librocksdb-sys in $src/Cargo.toml" >&2; exit 1; }

cd "$src"
cargo update -q -p librocksdb-sys --precise "$crate" >&2
crate_dir() {
  cargo metadata --format-version 1 | python3 -c '
import json, os, sys
m = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == "librocksdb-sys"))'
}
if [ -n "$tree" ]; then
  # The crate's build script and bindings, with the tree in place of its bundled RocksDB.
  local_crate=$BUILD_ROOT/crate-$name
  registry=$(crate_dir)
  rm -rf "$local_crate"
  cp -r "$registry" "$local_crate"
  rm -rf "$local_crate/rocksdb" "$local_crate/rocksdb_lib_sources.txt"
  mkdir "$local_crate/rocksdb"
  (cd "$tree" && tar --exclude=./.git -cf - .) | tar -xf - -C "$local_crate/rocksdb"
  make -s -C "$local_crate" rocksdb_lib_sources.txt
  # The crate's build script adds Windows' port files on Windows only; its shipped
  # list leaves them out, and so does this one.
  sed -i '/^port\/win\//d' "$local_crate/rocksdb_lib_sources.txt"
  printf '\n[patch.crates-io]\nlibrocksdb-sys = { path = "%s" }\n' "$local_crate" >> Cargo.toml
  cargo update -q -p librocksdb-sys >&2
  PLUMB_ROCKSDB_TREE=$tree
  PLUMB_ROCKSDB_TREE_COMMIT=$(git -C "$tree" rev-parse --short=12 HEAD 2>/dev/null || true)
  PLUMB_ROCKSDB_TREE_MODIFIED=no
  [ -n "$(git -C "$tree" status --porcelain --untracked-files=no 2>/dev/null)" ] && PLUMB_ROCKSDB_TREE_MODIFIED=yes
  export PLUMB_ROCKSDB_TREE PLUMB_ROCKSDB_TREE_COMMIT PLUMB_ROCKSDB_TREE_MODIFIED
  release=$(awk '/#define ROCKSDB_(MAJOR|MINOR|PATCH) / { v = v (v ? "." : "") $3 } END { print v }' "$tree/include/rocksdb/version.h")
  want_version="rocksdb $release (tree $tree"
else
  unset PLUMB_ROCKSDB_TREE PLUMB_ROCKSDB_TREE_COMMIT PLUMB_ROCKSDB_TREE_MODIFIED
  want_version="rocksdb $release"
fi
# Releases before 0.17 do not publish their source directory to dependents: name it
# for crates/targets/build.rs, which compiles plumb's C++ shims against its headers.
PLUMB_ROCKSDB_SRC=$(crate_dir)
export PLUMB_ROCKSDB_SRC
echo "build-rocksdb-release: RocksDB $release (librocksdb-sys $crate${tree:+, tree $tree}) in $src, building into $target" >&2
CARGO_TARGET_DIR=$target cargo build --release >&2
bin=$target/release/plumb
"$bin" --version | grep -qF "$want_version" || {
  echo "build-rocksdb-release: $bin does not report $want_version:" >&2
  "$bin" --version >&2
  exit 1
}
"$bin" --version >&2
if [ -n "$test" ]; then
  # --workspace keeps the feature set of the build (and of CI), so RocksDB is not
  # compiled again for the tests.
  failed=0
  CARGO_TARGET_DIR=$target cargo test --release --no-fail-fast --workspace --lib >&2 || failed=1
  CARGO_TARGET_DIR=$target cargo test --release --no-fail-fast --workspace --test conformance --test engines \
    --test rocksdb_account >&2 || failed=1
  [ "$failed" = 0 ] || { echo "build-rocksdb-release: tests failed on RocksDB $release (above)" >&2; exit 1; }
fi
link=$BUILD_ROOT/bin/plumb-rocksdb-$name
ln -sf "$bin" "$link"
echo "build-rocksdb-release: linked as $link (plumb finds it there for a target's versions = [\"${tree:+tree:}${tree:-$release}\"])" >&2
echo "$bin"
