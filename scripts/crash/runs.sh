#!/usr/bin/env bash
# Crash injection for durable agent runs on SQLite and PostgreSQL: for each backend, KILLS
# rounds of "a child process starts RUNS scripted runs (order, pay, answer) with a run log,
# kill -9 at a random moment; the next child takes over what the dead one left", then a
# last child that finishes every run; then the invariants (every run done, no draft twice,
# tokens counted once, a turn asked again only in a run that was cut off).
#
#   scripts/crash/runs.sh                  # 100 kills per backend, 20 runs a round
#   KILLS=10 scripts/crash/runs.sh         # CI's smaller count
#   BACKENDS=sqlite SEED=7 scripts/crash/runs.sh
#   KILL_MS=300-1500 scripts/crash/runs.sh  # kills 0.3 to 1.5 s after a child started
#                                          # (default 30-400; later on a slow machine,
#                                          # where a child needs longer to start runs)
#
# PostgreSQL is used when ERP_TOOLS_PG_URL is set (a fresh schema per run, dropped after).
# Bounded: each round takes at most about a second; the harness stops by itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
KILLS="${KILLS:-100}"
RUNS="${RUNS:-20}"
SEED="${SEED:-1}"
KILL_MS="${KILL_MS:-30-400}"
BACKENDS="${BACKENDS:-sqlite postgres}"
cargo build -q -p erp-tools-tests --bin run_crash_harness
for backend in $BACKENDS; do
    if [ "$backend" = postgres ] && [ -z "${ERP_TOOLS_PG_URL:-}" ]; then
        echo "run crash harness postgres: skipped (ERP_TOOLS_PG_URL not set)"
        continue
    fi
    timeout 900 target/debug/run_crash_harness --backend "$backend" --kills "$KILLS" \
        --runs "$RUNS" --seed "$SEED" --kill-ms "$KILL_MS"
done
