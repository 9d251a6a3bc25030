# Sourced by the setup scripts: installs the Debian packages a script needs.
#
#   ensure_packages WHO PKG...   (WHO names the script in messages)
#
# Idempotent: packages already present are not reinstalled; without root, it names
# what is missing and fails.
ensure_packages() {
  local who=$1
  shift
  local missing=() p
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$who: need root to install: ${missing[*]} (run it with sudo)" >&2
    exit 1
  fi
  echo "$who: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
