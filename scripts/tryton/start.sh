#!/usr/bin/env bash
# Starts a real Tryton 8.2 (trytond + purchase, SQLite) on 127.0.0.1 for erp-tools' Tryton
# example and tests, seeded with two companies (SBY-01, JKT-01), suppliers, products with
# supplier prices, a buyer per company and a user without purchase rights.
#
#   scripts/tryton/start.sh <run-dir>     # prints ERP_TOOLS_TRYTON_URL=... and ..._KEYS=...
#   scripts/tryton/stop.sh <run-dir>
#
# The pinned packages go into a virtualenv and the initialised, seeded database into a
# template, both under $TRYTON_CACHE (default target/tryton/, so CI reuses them): the
# first run takes about a minute (trytond-admin), later runs copy the template (< 1 s).
# Each run gets its own copy of the database in <run-dir>, a free port, and:
#   <run-dir>/url        the REST base URL including the database (ERP_TOOLS_TRYTON_URL)
#   <run-dir>/keys.json  subject -> REST key (ERP_TOOLS_TRYTON_KEYS)
#   <run-dir>/facts.json ids of the seeded companies, suppliers, products, users
#   <run-dir>/pid, <run-dir>/server.log, <run-dir>/trytond.conf
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
run="${1:?usage: scripts/tryton/start.sh <run-dir>}"
cache="${TRYTON_CACHE:-$root/target/tryton}"
packages="trytond==8.2.1 trytond-purchase==8.2.0 proteus==8.2.0"
mkdir -p "$cache" "$run"
run="$(cd "$run" && pwd)"

venv="$cache/venv"
if [ ! -x "$venv/bin/trytond" ] || [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$packages" ]; then
  echo "tryton: installing $packages into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install -q $packages
  echo "$packages" > "$venv/.pinned"
fi

# The template: initialised once (trytond-admin, about a minute), then seeded.
stamp="$packages $(sha256sum "$here/seed.py" | cut -c1-16)"
template="$cache/template"
if [ "$(cat "$template/.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "tryton: initialising the template database (about a minute, once)" >&2
  rm -rf "$template"
  mkdir -p "$template/db"
  : > "$template/db/erp.sqlite"
  printf '[database]\nuri = sqlite://\npath = %s/db\n' "$template" > "$template/trytond.conf"
  echo admin > "$template/admin-password"
  started=$SECONDS
  TRYTONPASSFILE="$template/admin-password" "$venv/bin/trytond-admin" -c "$template/trytond.conf" \
    -d erp --all -u purchase --activate-dependencies --email admin@example.invalid \
    > "$template/admin.log" 2>&1
  TRYTOND_CONFIG="$template/trytond.conf" "$venv/bin/python" -W ignore "$here/seed.py" erp \
    "$template/keys.json" "$template/facts.json" > /dev/null
  echo "tryton: template ready in $((SECONDS - started)) s" >&2
  echo "$stamp" > "$template/.stamp"
fi

mkdir -p "$run/db"
cp "$template/db/erp.sqlite" "$run/db/erp.sqlite"
cp "$template/keys.json" "$template/facts.json" "$run/"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '[database]\nuri = sqlite://\npath = %s/db\n[web]\nlisten = 127.0.0.1:%s\n' "$run" "$port" > "$run/trytond.conf"
"$venv/bin/trytond" -c "$run/trytond.conf" > "$run/server.log" 2>&1 &
echo $! > "$run/pid"
url="http://127.0.0.1:$port/erp"
# Ready when it answers HTTP at all: the probe sends no key, so no user's request reaches
# Tryton before erp-tools' own (Tryton caches each user's companies per process from their
# first request; a probe as a user would hide what the first real request does).
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url/rest/model/company.company" || true)
  if [ "$code" = 401 ] || [ "$code" = 403 ]; then
    echo "$url" > "$run/url"
    echo "ERP_TOOLS_TRYTON_URL=$url"
    echo "ERP_TOOLS_TRYTON_KEYS=$run/keys.json"
    exit 0
  fi
  if ! kill -0 "$(cat "$run/pid")" 2>/dev/null; then break; fi
  sleep 0.1
done
echo "tryton: trytond did not answer on $url; its log:" >&2
tail -20 "$run/server.log" >&2
exit 1
