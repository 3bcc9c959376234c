#!/usr/bin/env bash
# Crash injection on SQLite and PostgreSQL: builds the release distributor example and the
# harness, then for each backend runs KILLS rounds of "start the server, send drafts from
# CLIENTS clients, kill -9 at a random moment, restart, check the invariants".
#
#   scripts/crash/run.sh                 # 100 kills per backend
#   KILLS=20 scripts/crash/run.sh        # CI's smaller count
#   BACKENDS=sqlite scripts/crash/run.sh
#   PROFILE=debug scripts/crash/run.sh   # the debug build of the example (CI: no release build)
#
# PostgreSQL is used when ERP_TOOLS_PG_URL is set (a fresh schema per run, dropped after).
# Bounded: each round takes at most a few seconds; the harness stops by itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
KILLS="${KILLS:-100}"
CLIENTS="${CLIENTS:-4}"
SEED="${SEED:-1}"
BACKENDS="${BACKENDS:-sqlite postgres}"
PROFILE="${PROFILE:-release}"
# The harness (a binary of erp-tools-tests) and the debug example come from the README's
# test build (`cargo test --workspace` builds both; a no-op when it has run, as in CI).
cargo test -q --workspace --no-run
if [ "$PROFILE" = release ]; then
    cargo build -q --release -p erp-tools-core --example distributor --features postgres
fi
port=18765
for backend in $BACKENDS; do
    if [ "$backend" = postgres ] && [ -z "${ERP_TOOLS_PG_URL:-}" ]; then
        echo "crash harness postgres: skipped (ERP_TOOLS_PG_URL not set)"
        continue
    fi
    timeout 1800 target/debug/crash_harness --binary "target/$PROFILE/examples/distributor" \
        --backend "$backend" --kills "$KILLS" --clients "$CLIENTS" --seed "$SEED" --port "$port"
    port=$((port + 1))
done
