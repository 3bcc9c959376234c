"""A minimal streamable-HTTP MCP client (standard library only) for the telemetry checks:
opens a 2025-11-25 session and sends calls with or without a `traceparent`."""

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import free_port  # noqa: E402,F401  (re-exported for the otel checks)


def traceparent():
    """A fresh caller span: (header value, trace id, span id)."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


class Session:
    def __init__(self, url, token):
        self.url, self.token, self.session, self.next_id = url, token, None, 1

    def post(self, message, headers=None):
        h = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
             "Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": "2025-11-25"}
        if self.session:
            h["Mcp-Session-Id"] = self.session
        h.update(headers or {})
        req = urllib.request.Request(self.url, data=json.dumps(message).encode(), headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                self.session = resp.headers.get("Mcp-Session-Id") or self.session
                body = resp.read().decode()
                status = resp.status
        except urllib.error.HTTPError as refused:  # 401, 403, 429: the status is the answer
            body = refused.read().decode(errors="replace")
            # A JSON-RPC error sent with an HTTP error status (2026-07-28) is the answer too.
            return refused.code, json.loads(body) if body.lstrip().startswith("{") else None
        if not body.strip():
            return status, None
        if body.lstrip().startswith("{"):
            return status, json.loads(body)
        for line in body.splitlines():  # SSE: the JSON-RPC answer is a `data:` line
            if line.startswith("data:") and line[5:].strip():
                data = json.loads(line[5:])
                if "id" in data:
                    return status, data
        return status, None

    def request(self, method, params, headers=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return self.post(msg, headers)[1]

    def open(self):
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "otel-check", "version": "1"}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def call_stateless(self, tool, arguments, capabilities, headers=None, params=None):
        """A 2026-07-28 stateless `tools/call` declaring `capabilities` in its `_meta`,
        with more `params` (a `requestState`): the JSON-RPC answer (a result or an error)."""
        self.next_id += 1
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities}
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments, "_meta": meta, **(params or {})}}
        h = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
        h.update(headers or {})
        return self.post(msg, h)[1]

    def call(self, tool, arguments, headers=None, meta=None):
        params = {"name": tool, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params, headers)


class Server:
    """The example server on a free loopback port, with its own SQLite file."""

    def __init__(self, binary, tmp, env_extra, name="srv"):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.env = dict(os.environ, ERP_TOOLS_DB=f"sqlite://{tmp}/{name}.db",
                        ERP_TOOLS_RESOURCE=self.url, RUST_LOG="warn", **env_extra)
        self.binary = binary
        self.proc = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{self.port}"],
                                     env=self.env)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1)
                return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        raise SystemExit("the example server did not start")

    def token(self, scopes, user="7", branch="SBY-01"):
        out = subprocess.run([self.binary, "token", "--user", user, "--branch", branch,
                              "--scopes", scopes], env=self.env, check=True,
                             capture_output=True, text=True)
        return out.stdout.strip()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
