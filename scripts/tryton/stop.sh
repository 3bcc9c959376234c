#!/usr/bin/env bash
# Stops the trytond that scripts/tryton/start.sh started in <run-dir>.
set -euo pipefail
run="${1:?usage: scripts/tryton/stop.sh <run-dir>}"
if [ -f "$run/pid" ]; then
  kill "$(cat "$run/pid")" 2>/dev/null || true
  rm -f "$run/pid"
fi
