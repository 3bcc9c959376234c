#!/usr/bin/env bash
# kill -9 of the Tryton example mid-draft, repeatedly, against a real Tryton (started by
# scripts/tryton/start.sh inside the harness): after every restart and resend, exactly one
# purchase per client_ref, and no pending key left. Prints one line of figures.
#
#   scripts/tryton/kill_run.sh                  # 20 kills, 3 clients
#   KILLS=8 CLIENTS=3 SEED=4 scripts/tryton/kill_run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
KILLS="${KILLS:-20}"
CLIENTS="${CLIENTS:-3}"
SEED="${SEED:-1}"
cargo build -q --example tryton
cargo build -q -p erp-tools-tests --bin tryton_kill
timeout 900 target/debug/tryton_kill --binary target/debug/examples/tryton \
  --kills "$KILLS" --clients "$CLIENTS" --seed "$SEED"
