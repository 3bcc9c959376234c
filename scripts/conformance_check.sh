#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) against the
# distributor example over streamable HTTP on loopback. The suite sends no token, so a
# loopback proxy (scripts/conformance/proxy.mjs) adds a development bearer token and
# passes everything else through unchanged, Host and Origin included.
#
# Usage: scripts/conformance_check.sh <node_modules dir> [distributor binary] [scenario...]
#   node_modules: holds `node` (Node 22) and the suite, as scripts/oidc/package.json
#   installs them. Scenarios default to dns-rebinding-protection (which must pass) and
#   the scenarios that need no test fixtures on the server (reported).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=$(cd "$1" && pwd)
bin=${2:-target/debug/examples/distributor}
shift $(( $# >= 2 ? 2 : $# ))
required=dns-rebinding-protection
reported=(server-initialize server-session-lifecycle ping tools-list server-stateless
  http-header-validation caching)
if [ $# -gt 0 ]; then reported=("$@"); fi
node=$modules/.bin/node
suite=$modules/@modelcontextprotocol/conformance/dist/index.js

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
server_port=$(free_port)
proxy_port=$(free_port)
resource=http://127.0.0.1:$proxy_port/mcp  # the URL clients use: the server's resource
export ERP_TOOLS_RESOURCE=$resource RUST_LOG=warn
unset ERP_TOOLS_ISSUER ERP_TOOLS_SIGNING_KEY
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

"$bin" --db "sqlite://$work/d.db" token --user 7 --branch SBY-01 \
  --scopes purchasing:read,purchasing:draft,inventory:read >"$work/token"
"$bin" --db "sqlite://$work/d.db" serve --addr "127.0.0.1:$server_port" 2>"$work/server.log" &
pids+=($!)
"$node" scripts/conformance/proxy.mjs --listen "$proxy_port" --upstream "127.0.0.1:$server_port" \
  --token-file "$work/token" >/dev/null &
pids+=($!)
for port in "$server_port" "$proxy_port"; do
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
done

# One scenario: prints the suite's verdict lines; returns the suite's exit code.
run() {
  local scenario=$1 rc=0
  echo "-- $scenario"
  (cd "$work" && NO_COLOR=1 "$node" "$suite" server --url "$resource" --scenario "$scenario") \
    >"$work/$scenario.log" 2>&1 || rc=$?
  # The verdict, and for each failed check its id and the suite's reason.
  sed 's/\x1b\[[0-9;]*m//g' "$work/$scenario.log" \
    | grep -E "^Passed:|FAILURE|^ *Error:" | sed -E 's/^[0-9TZ:.-]+ //' || true
  return $rc
}

status=0
summary=()
if run "$required"; then summary+=("$required: passed"); else summary+=("$required: FAILED"); status=1; fi
for scenario in "${reported[@]}"; do
  if run "$scenario"; then summary+=("$scenario: passed"); else summary+=("$scenario: failed (reported)"); fi
done
echo "== conformance results (server at $resource, bearer token added by the proxy)"
printf '  %s\n' "${summary[@]}"
exit $status
