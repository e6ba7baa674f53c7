#!/usr/bin/env bash
# Makes sure e2e/node_modules matches e2e/package-lock.json (npm ci when missing or stale). The stamp
# holds the lock file's hash, not a time: a fresh clone or a checkout touches every file, and a copy of
# the same lock must not reinstall (nor empty a node_modules another checkout shares).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/e2e"
stamp="$dir/node_modules/.e2e-deps.stamp"
say() { echo "e2e-deps: $*" >&2; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "node/npm missing; installing nodejs and npm with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; } >&2 \
      || { say "apt-get install nodejs npm failed"; exit 1; }
  else
    say "node and npm (Node.js >= 20) are required for the e2e tests but were not found on PATH"
    exit 1
  fi
fi

major="$(node -p 'process.versions.node.split(".")[0]')"
if (( major < 20 )); then
  say "Node.js >= 20 required, found $(node --version)"
  exit 1
fi

wanted=$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -d' ' -f1)
up_to_date() {
  [[ -f "$stamp" && $(<"$stamp") == "$wanted" ]]
}

if up_to_date; then
  exit 0
fi

exec 9<"$dir"
command -v flock >/dev/null 2>&1 && flock 9
if ! up_to_date; then
  say "installing e2e dependencies (npm ci in $dir)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
  echo "$wanted" >"$stamp"
fi
say "e2e dependencies up to date"
