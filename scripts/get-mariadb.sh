#!/usr/bin/env bash
# Installs another MariaDB point release for `plumb sql --server mariadb@VERSION` (and a
# suite's `versions = ["10.11.18", "10.11.19"]`), from Debian's own packages: the
# release's mariadb-server-core (mariadbd, mariadb-install-db, share/mysql),
# mariadb-plugin-rocksdb (MyRocks), mariadb-client-core and mariadb-client
# (my_print_defaults, which mariadb-install-db runs, and mariadb-admin), unpacked with
# dpkg -x into /var/tmp/plumb-mariadb/VERSION, where plumb looks. Seed 002 reads perf counters across point releases: these are
# the releases Debian's archive serves here (`apt-cache madison mariadb-server-core`).
#
#   bash scripts/get-mariadb.sh 10.11.18
#
# Prints the install's directory. Idempotent: an install already there is kept.
set -euo pipefail
want=${1:?usage: get-mariadb.sh VERSION (e.g. 10.11.18; apt-cache madison mariadb-server-core lists them)}
root=/var/tmp/plumb-mariadb
dest=$root/$want
if [ -x "$dest/sbin/mariadbd" ]; then
  echo "$dest"
  exit 0
fi
. "$(dirname "$0")/packages.sh"
# The system's install brings the mysql user and mariadb-admin.
ensure_packages get-mariadb mariadb-server mariadb-plugin-rocksdb
# Debian's version string of that release (1:10.11.18-0+deb12u1).
pick() {
  # awk reads to the end: leaving early would break apt-cache's pipe (pipefail).
  apt-cache madison "$1" 2>/dev/null | awk -v w="$want" -F' *\\| *' \
    '{ v = $2; u = v; sub(/^[0-9]+:/, "", u); if (!found && (u == w || index(u, w "-") == 1)) { print v; found = 1 } }'
}
deb=$(pick mariadb-server-core)
if [ -z "$deb" ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  deb=$(pick mariadb-server-core)
fi
if [ -z "$deb" ]; then
  echo "get-mariadb: no mariadb-server-core $want in the package lists; these are: $(apt-cache madison mariadb-server-core | awk -F' *\\| *' '{print $2}' | tr '\n' ' ')" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt's download user writes here
pkgs=(mariadb-server-core mariadb-plugin-rocksdb mariadb-client-core mariadb-client)
echo "get-mariadb: fetching ${pkgs[*]} $deb" >&2
(cd "$tmp" && apt-get download -qq "${pkgs[@]/%/=$deb}" 2>/dev/null)
mkdir -p "$tmp/x"
for f in "$tmp"/*.deb; do dpkg -x "$f" "$tmp/x"; done
mkdir -p "$root"
rm -rf "$dest.partial"
# A basedir as mariadbd reads one: bin/, sbin/, lib/mysql/plugin, share/mysql.
mv "$tmp/x/usr" "$dest.partial"
chmod -R a+rX "$dest.partial"
mv "$dest.partial" "$dest"
echo "get-mariadb: installed MariaDB $("$dest/sbin/mariadbd" --version | awk '{print $3}') in $dest" >&2
echo "$dest"
