#!/usr/bin/env bash
# Builds SplinterDB and installs its shared library and headers, so plumb can be built
# with `--features splinterdb`. Idempotent: a matching install is left alone.
#
#   bash scripts/build-splinterdb.sh
#
# Env: SPLINTERDB_SRC [third_party/splinterdb/splinterdb-d2173e0e3b.tar.gz] (a source
# tree or a tarball of one), PREFIX [/usr/local] (where include/ and lib/ go; needs
# root for /usr/local), BUILD [/var/tmp/plumb-deps/splinterdb-build].
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${SPLINTERDB_SRC:-third_party/splinterdb/splinterdb-d2173e0e3b.tar.gz}
PREFIX=${PREFIX:-/usr/local}
BUILD=${BUILD:-/var/tmp/plumb-deps/splinterdb-build}

# SplinterDB's build needs clang, libaio, libconfig and xxhash.
# shellcheck source=scripts/packages.sh
. scripts/packages.sh
ensure_packages build-splinterdb clang make libaio-dev libconfig-dev libxxhash-dev

[ -e "$SRC" ] || { echo "build-splinterdb: $SRC does not exist (set SPLINTERDB_SRC to a SplinterDB source tree or tarball)" >&2; exit 1; }
# The stamp names the source and how it was built (v2: the version string set below).
id=$(if [ -d "$SRC" ]; then echo "tree:$(cd "$SRC" && pwd)"; else echo "tarball:$(sha256sum "$SRC" | cut -c1-16):v2"; fi)
stamp="$PREFIX/lib/libsplinterdb.plumb-source"
# Without its DWARF (clang writes version 5, whose forms valgrind 3.19 cannot read: it
# gives up on any process that loads the library, `plumb icount` included); the symbol
# table stays, so profiles still name SplinterDB's functions. Checked on every call, so
# an install made before this is mended without a rebuild.
strip_debug() {
  local so="$PREFIX/lib/libsplinterdb.so"
  if [ -f "$so" ] && readelf -S "$so" 2>/dev/null | grep -q '\.debug_info'; then
    strip --strip-debug "$so"
  fi
}
strip_debug
if [ -f "$PREFIX/lib/libsplinterdb.so" ] && [ -f "$PREFIX/include/splinterdb/splinterdb.h" ] &&
   [ "$(cat "$stamp" 2>/dev/null)" = "$id" ] && [ ! -d "$SRC" ]; then
  echo "build-splinterdb: $PREFIX already has SplinterDB from $id"
  exit 0
fi

mkdir -p "$(dirname "$BUILD")"
if [ -d "$SRC" ]; then
  tree=$(cd "$SRC" && pwd)
else
  rm -rf "$BUILD"
  mkdir -p "$BUILD"
  tar xzf "$SRC" -C "$BUILD"
  tree=$(find "$BUILD" -mindepth 1 -maxdepth 1 -type d | head -1)
fi
echo "build-splinterdb: building $tree (log: $BUILD.log)"
log="$BUILD.log"
: >"$log"
run_make() {
  make -C "$tree" "$@" CC=clang >>"$log" 2>&1 ||
    { tail -20 "$log" >&2; echo "build-splinterdb: make $1 failed; full log in $log" >&2; exit 1; }
}
# A tarball has no git history for the Makefile's `git describe`: the version string
# SplinterDB reports (and plumb records) is the commit in the tarball's name instead.
version=()
if [ ! -d "$tree/.git" ]; then
  commit=$(basename "$SRC" | sed -n 's/^splinterdb-\([0-9a-f]*\)\.tar\.gz$/\1/p')
  version=("GIT_VERSION=\"${commit:-unknown}\"")
fi
# CC=clang and the version on both: SplinterDB's Makefile refuses a second make whose
# flags differ.
run_make -j"$(nproc)" libs "${version[@]}"
run_make install INSTALL_PATH="$PREFIX" "${version[@]}"
strip_debug
echo "$id" >"$stamp"
command -v ldconfig >/dev/null && [ "$(id -u)" -eq 0 ] && ldconfig
echo "build-splinterdb: installed $PREFIX/lib/libsplinterdb.so and $PREFIX/include/splinterdb"
