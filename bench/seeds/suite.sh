# Sourced by the seeds' scripts that run one suite (bench/seeds/000.sh, 002.sh, 003.sh),
# from the repository's root: `seed_suite NNN` sets PLUMB, STORE (a new file under
# /var/tmp unless given), SCALE and SUITE (examples/seeds/NNN.toml unless given), says
# the CPU and the store, runs the suite at SCALE unless REPORT_ONLY is set (then the
# tables are those of the newest suite already in STORE), exports PLUMB, STORE, SCALE
# and SUITE for the script's tables and its list of what differs from the seed, and
# leaves plumb run's exit status in `status`, so a script prints every table it can
# before it exits with it.
seed_suite() {
  PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
  STORE=${STORE:-$(mktemp -u "/var/tmp/plumb-seed$1.XXXXXX.sqlite")}
  SCALE=${SCALE:-1}
  SUITE=${SUITE:-examples/seeds/$1.toml}
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "store: $STORE"
  status=0
  [ -n "${REPORT_ONLY:-}" ] || "$PLUMB" run "$SUITE" --scale "$SCALE" --store "$STORE" >&2 || status=$?
  export PLUMB STORE SCALE SUITE
}
