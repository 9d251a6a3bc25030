#!/usr/bin/env bash
# Page times of `plumb serve` over a team-sized store (issue 60: every page under 300 ms
# server-side on SQLite and on PostgreSQL, 10,000 runs and a million interval rows).
#
#   bench/serve-pages.sh                      # SQLite and PostgreSQL
#   STORES=sqlite bench/serve-pages.sh        # one of them
#
# For each store it writes a generated nightly history (crates/serve/examples/gen_store:
# PLANS × NIGHTS × REPEATS runs of one readrandom step with INTERVALS 1-s rows each; the
# newest night of the last plan at 0.8×), runs `plumb check` once so the Changes page
# holds the change it keeps, starts `plumb serve`, and requests every page (runs, runs
# page 100, the newest run, its group compared with its plan's history, that plan's
# history, changes, hosts, the host; HTML and
# ?format=json) REQUESTS times, one after another. It prints a Markdown table of the
# median server-side time per page (the ms of the server's own log line per request) and
# curl's median time to first byte.
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb], GEN [built here into the helper
# target dir if missing], PLANS [20], NIGHTS [100], REPEATS [5], INTERVALS [100],
# REQUESTS [5], STORES ["sqlite postgres"], WORK [a new dir under /var/tmp], KEEP=1 keeps
# WORK (the stores) afterwards, CACHE_MB [1024] (PostgreSQL's shared_buffers).
# SERVE [$PLUMB serve] is the server command: the example serve_store (the same server
# without the RocksDB build) times the pages while the binary builds; CHECK=0 then
# skips `plumb check` (the Changes page is timed without a kept change).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
HELPER_TARGET=${HELPER_TARGET:-/var/tmp/plumb-helper-target}
GEN=${GEN:-$HELPER_TARGET/release/examples/gen_store}
PLANS=${PLANS:-20}
NIGHTS=${NIGHTS:-100}
REPEATS=${REPEATS:-5}
INTERVALS=${INTERVALS:-100}
REQUESTS=${REQUESTS:-5}
STORES=${STORES:-"sqlite postgres"}
CACHE_MB=${CACHE_MB:-1024}

CHECK=${CHECK:-1}
SERVE=${SERVE:-"$PLUMB serve"}
if [ "$CHECK" = 1 ] || [ "$SERVE" = "$PLUMB serve" ]; then
  [ -x "$PLUMB" ] || { echo "$PLUMB: not built (CARGO_TARGET_DIR=/var/tmp/plumb-target cargo build --release), or set PLUMB" >&2; exit 2; }
fi
command -v curl >/dev/null || { echo "curl: apt-get install curl" >&2; exit 2; }
if [ ! -x "$GEN" ]; then
  echo "== building gen_store (no RocksDB)" >&2
  (cd "$REPO" && CARGO_TARGET_DIR=$HELPER_TARGET cargo build --release -p plumb-serve --example gen_store >&2)
fi

WORK=${WORK:-$(mktemp -d /var/tmp/plumb-serve-bench.XXXXXX)}
mkdir -p "$WORK"
chmod 755 "$WORK"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
AS=()
PG_STARTED=""
SERVE_PID=""
cleanup() {
  if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
  if [ -n "$PG_STARTED" ]; then "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m fast -w stop >/dev/null 2>&1 || true; fi
  if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi
}
trap cleanup EXIT

start_postgres() {
  [ -x "$PGBIN/postgres" ] || { echo "no PostgreSQL under /usr/lib/postgresql: apt-get install postgresql (scripts/setup.sh)" >&2; exit 2; }
  mkdir -p "$WORK/pg"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$WORK/pg"
    AS=(runuser -u postgres --)
  fi
  PG_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${AS[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 -N >"$WORK/pg/initdb.log" 2>&1 \
    || { cat "$WORK/pg/initdb.log" >&2; exit 1; }
  sed "s/{cache_mb}/$CACHE_MB/g" "$REPO/crates/servers/config/postgres.conf" >"$WORK/pg/plumb.conf"
  printf "\n# serve-pages.sh\ninclude '%s'\n" "$WORK/pg/plumb.conf" >>"$WORK/pg/data/postgresql.conf"
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/server.log" -w -t 300 \
    -o "-p $PG_PORT -k $WORK/pg -c listen_addresses=127.0.0.1" start >/dev/null \
    || { tail -20 "$WORK/pg/server.log" >&2; exit 1; }
  PG_STARTED=1
  "$PGBIN/createdb" -h "$WORK/pg" -p "$PG_PORT" -U postgres plumb
  PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/plumb"
}

# json_field URL EXPR: a field of a page's JSON (EXPR in Python over `d`).
json_field() {
  curl -sf "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"
}

# bench_store NAME STORE: generates, checks, serves and times every page of one store.
bench_store() {
  local name=$1 store=$2
  echo "== $name: generating $PLANS plans × $NIGHTS nights × $REPEATS repeats, $INTERVALS intervals a step" >&2
  "$GEN" --store "$store" --plans "$PLANS" --nights "$NIGHTS" --repeats "$REPEATS" --intervals "$INTERVALS" \
    | tee "$WORK/$name-gen.txt" >&2
  if [ "$CHECK" = 1 ]; then
    echo "== $name: plumb check (keeps the change)" >&2
    local rc=0
    "$PLUMB" check --store "$store" >"$WORK/$name-check.md" 2>&1 || rc=$?
    echo "plumb check exited $rc (1: the generated regression)" >&2
  fi
  # shellcheck disable=SC2086 # SERVE is a command line
  $SERVE --store "$store" --listen 127.0.0.1:0 --token bench \
    >"$WORK/$name-serve.out" 2>"$WORK/$name-serve.log" &
  SERVE_PID=$!
  local url="" i
  for i in $(seq 1 600); do
    url=$(sed -n 's/^plumb serve: \(http:[^ ]*\).*/\1/p' "$WORK/$name-serve.out" | head -1)
    [ -n "$url" ] && break
    kill -0 "$SERVE_PID" 2>/dev/null || { cat "$WORK/$name-serve.log" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { echo "plumb serve printed no URL" >&2; exit 1; }
  url=${url%/}
  local newest group plan
  newest=$(json_field "$url/runs?format=json" 'd["runs"][0]["id"]')
  group=$(json_field "$url/run/$newest?format=json" 'd["run"]["group_id"]')
  plan=$(json_field "$url/run/$newest?format=json" 'd["plan_identity"]')
  local pages=(
    "runs|/runs"
    "runs page 100|/runs?page=100"
    "run|/run/$newest"
    "compare|/compare?new=g$group"
    "history|/history?plan=$plan&step=readrandom&metric=ops_sec"
    "changes|/changes"
    "hosts|/hosts"
    "host|/host/bench-1"
  )
  : >"$WORK/$name-times.tsv"
  local p label path fmt full r code ttfb
  for p in "${pages[@]}"; do
    label=${p%%|*}
    path=${p#*|}
    for fmt in html json; do
      full=$path
      if [ "$fmt" = json ]; then
        case "$path" in *\?*) full="$path&format=json" ;; *) full="$path?format=json" ;; esac
      fi
      for r in $(seq 1 "$REQUESTS"); do
        read -r code ttfb < <(curl -s -o /dev/null -w '%{http_code} %{time_starttransfer}\n' "$url$full")
        [ "$code" = 200 ] || { echo "$name $full: HTTP $code" >&2; tail -5 "$WORK/$name-serve.log" >&2; exit 1; }
        printf '%s\t%s\t%s\t%s\n' "$label" "$fmt" "$full" "$ttfb" >>"$WORK/$name-times.tsv"
      done
    done
  done
  kill "$SERVE_PID"
  wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=""
}

for s in $STORES; do
  case "$s" in
    sqlite) bench_store sqlite "$WORK/serve-bench.sqlite" ;;
    postgres) start_postgres && bench_store postgres "$PG_URL" ;;
    *) echo "STORES: sqlite and/or postgres, not $s" >&2; exit 2 ;;
  esac
done

# The table: per page and format, the median of the server's own time (its log line
# "GET URL STATUS BYTES B MS ms", matched by URL) and of curl's time to first byte.
python3 - "$WORK" $STORES <<'EOF'
import collections, statistics, sys
work, stores = sys.argv[1], sys.argv[2:]
rows = collections.OrderedDict()
for s in stores:
    server = collections.defaultdict(list)
    for line in open(f"{work}/{s}-serve.log"):
        f = line.split()
        if len(f) >= 7 and f[0] in ("GET", "POST") and f[-1] == "ms":
            server[f[1]].append(float(f[-2]))
    seen = collections.Counter()
    for line in open(f"{work}/{s}-times.tsv"):
        label, fmt, url, ttfb = line.rstrip("\n").split("\t")
        key = (label, fmt)
        r = rows.setdefault(key, {})
        r.setdefault(s, {"url": url, "ttfb": []})["ttfb"].append(float(ttfb) * 1e3)
    for key, r in rows.items():
        if s in r:
            # The bench's requests of this URL are the last REQUESTS logged (the script
            # read a few pages' JSON first to find ids).
            n = len(r[s]["ttfb"])
            r[s]["server"] = server[r[s]["url"]][-n:]
head = "| page | format | " + " | ".join(f"{s} server ms | {s} curl ttfb ms" for s in stores) + " |"
print(head)
print("|" + "---|" * (2 + 2 * len(stores)))
over = []
for (label, fmt), r in rows.items():
    cells = []
    for s in stores:
        if s not in r:
            cells += ["", ""]
            continue
        srv = statistics.median(r[s]["server"]) if r[s]["server"] else float("nan")
        ttfb = statistics.median(r[s]["ttfb"])
        if srv > 300:
            over.append(f"{s} {label} {fmt}: {srv:.0f} ms")
        cells += [f"{srv:.1f}", f"{ttfb:.1f}"]
    print(f"| {label} | {fmt} | " + " | ".join(cells) + " |")
print()
print("over 300 ms: " + ("; ".join(over) if over else "none"))
EOF
