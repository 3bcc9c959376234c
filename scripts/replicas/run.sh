#!/usr/bin/env bash
# Several replicas of the distributor example on one PostgreSQL database behind a
# round-robin proxy on loopback: the rate limit across replicas, a storm of drafts whose
# resends land on other replicas, a reviewer and an approval across replicas, kill -9 of
# a replica mid-storm, a rolling SIGTERM restart under load (tests/src/bin/replica_harness).
#
#   ERP_TOOLS_PG_URL=postgres://root@127.0.0.1:5432/test scripts/replicas/run.sh
#   REPLICAS=5 CLIENTS=10 CALLS=50 scripts/replicas/run.sh
#   PROXY=127.0.0.1:19090 scripts/replicas/run.sh   # behind your own load balancer
#     (e.g. haproxy with `balance roundrobin`, `option httpchk GET /readyz`, servers
#     127.0.0.1:19100, :19101, :19102)
#
# Uses the debug build of the README's test command (`cargo test --workspace` builds the
# harness and the example; a no-op when it has run, as in CI). Bounded: about a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${ERP_TOOLS_PG_URL:-}" ]; then
    echo "replica harness: skipped (ERP_TOOLS_PG_URL not set): replicas share PostgreSQL"
    exit 0
fi
cargo test -q --workspace --no-run
timeout 600 target/debug/replica_harness --binary target/debug/examples/distributor \
    --replicas "${REPLICAS:-3}" --clients "${CLIENTS:-6}" --calls "${CALLS:-20}" \
    --base-port "${BASE_PORT:-19100}" ${PROXY:+--proxy "$PROXY"} \
    ${KILL_AFTER_MS:+--kill-after-ms "$KILL_AFTER_MS"}
