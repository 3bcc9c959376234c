#!/usr/bin/env bash
# Runs the official MCP conformance suite's input-required (SEP-2322) scenarios against
# the distributor example over streamable HTTP, protocol 2026-07-28.
#
# The suite has no option for request headers, so a loopback proxy adds the bearer token
# (the Python below). Node 22 is installed next to the suite in a scratch
# directory. Scenarios that call the suite's own fixture tools (`test_*`) cannot pass
# against an application's tool surface; the output says which ones those are.
#
# usage: scripts/conformance_input_required.sh [path/to/distributor]
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${1:-target/debug/examples/distributor}"
SCRATCH="${CONFORMANCE_DIR:-/tmp/erp-tools-conformance}"
PORT="${PORT:-18765}"
PROXY_PORT="${PROXY_PORT:-18766}"
SCENARIOS=(
  input-required-result-basic-elicitation
  input-required-result-basic-list-roots
  input-required-result-basic-sampling
  input-required-result-capability-check
  input-required-result-ignore-extra-params
  input-required-result-missing-input-response
  input-required-result-multi-round
  input-required-result-multiple-input-requests
  input-required-result-non-tool-request
  input-required-result-request-state
  input-required-result-result-type
  input-required-result-tampered-state
  input-required-result-unsupported-methods
  input-required-result-validate-input
)

[ -x "$BIN" ] || cargo build --example distributor
mkdir -p "$SCRATCH"
if [ ! -x "$SCRATCH/node_modules/.bin/conformance" ]; then
  (cd "$SCRATCH" && npm init -y >/dev/null && npm install --no-audit --no-fund \
    node@22 @modelcontextprotocol/conformance@0.2.0-alpha.12 >/dev/null)
fi
export PATH="$SCRATCH/node_modules/.bin:$PATH"

WORK="$(mktemp -d)"
RESOURCE="http://127.0.0.1:$PORT/mcp"
cleanup() { kill "${SERVER_PID:-}" "${PROXY_PID:-}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

"$BIN" --db "sqlite://$WORK/conformance.db" --resource "$RESOURCE" serve --addr "127.0.0.1:$PORT" \
  >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
TOKEN="$("$BIN" --db "sqlite://$WORK/conformance.db" --resource "$RESOURCE" token --user 7 \
  --branch SBY-01 --scopes purchasing:read,purchasing:draft,inventory:read)"
# The proxy: adds the bearer token to every request and streams the answer back.
cat >"$WORK/proxy.py" <<'PY'
import http.client
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LISTEN, UPSTREAM, TOKEN = int(sys.argv[1]), sys.argv[2], sys.argv[3]
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
       "proxy-authorization", "proxy-authenticate", "host", "content-length"}


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _forward(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        headers["Authorization"] = f"Bearer {TOKEN}"
        headers["Host"] = UPSTREAM
        upstream = http.client.HTTPConnection(UPSTREAM, timeout=120)
        upstream.request(self.command, self.path, body=body, headers=headers)
        response = upstream.getresponse()
        self.send_response(response.status, response.reason)
        for k, v in response.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        while True:
            chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
            if not chunk:
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        upstream.close()

    do_GET = do_POST = do_DELETE = _forward

    def log_message(self, fmt, *args):
        sys.stderr.write("proxy: " + (fmt % args) + "\n")


ThreadingHTTPServer(("127.0.0.1", LISTEN), Proxy).serve_forever()
PY
python3 "$WORK/proxy.py" "$PROXY_PORT" "127.0.0.1:$PORT" "$TOKEN" >"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
for _ in $(seq 1 50); do
  curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/mcp" && break
  sleep 0.2
done

for scenario in "${SCENARIOS[@]}"; do
  echo "== $scenario"
  timeout 120 conformance server --url "http://127.0.0.1:$PROXY_PORT/mcp" \
    --scenario "$scenario" --spec-version 2026-07-28 2>&1 | tail -n 25 || true
done
