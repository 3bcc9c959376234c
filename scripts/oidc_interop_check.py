#!/usr/bin/env python3
"""The distributor example against a real OpenID provider (npm `oidc-provider`), driven
by the official Python MCP client (PyPI `mcp`).

Usage: python3 scripts/oidc_interop_check.py <node_modules dir> [path/to/distributor]

The node_modules directory holds `oidc-provider` and `node` (Node 22), as
`scripts/oidc/package.json` installs them. Once with an RS256 and once with an ES256 key,
the provider (scripts/oidc/provider.mjs) runs on loopback and the example is started with
`ERP_TOOLS_ISSUER` pointing at it. Then:

- a client-credentials token for the MCP resource (RFC 8707 `resource`) is printed
  (header and claims), and the Python MCP client connects with it and sees the tools its
  ERP user may use: sub "7" (buyer) all of them, sub "8" (warehouse) the inventory tools
  only, although its token carries `purchasing:draft`;
- the provider rotates its signing key; a token signed with the new key is accepted
  without restarting the server;
- a token issued for another resource, and a development token, are refused (401);
- the protected-resource metadata names the provider.

Prints what it saw and exits non-zero when the server does not behave as documented.
"""
import asyncio
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, failures, free_port  # noqa: E402

NODE_MODULES = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "node_modules"
BIN = sys.argv[2] if len(sys.argv) > 2 else "target/debug/examples/distributor"
PROVIDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oidc", "provider.mjs")
NODE = os.path.join(NODE_MODULES, ".bin", "node")
OTHER_RESOURCE = "http://127.0.0.1:1/other-mcp"
SCOPES = "purchasing:read purchasing:draft inventory:read"
ALL_TOOLS = ["inventory_get_stock", "inventory_list_below_reorder", "purchasing_create_po_draft",
             "purchasing_get_item_summary", "purchasing_get_po", "purchasing_get_vendor_summary",
             "purchasing_print_po", "purchasing_search_pos", "purchasing_search_vendors"]


def wait_port(port, proc, what):
    for _ in range(200):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


def decode(token):
    def part(p):
        return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
    header, claims, _ = token.split(".")
    return part(header), part(claims)


def get_token(issuer, client, resource, scope=SCOPES):
    response = httpx2.post(f"{issuer}/token", auth=(client, f"secret-{client}"),
                           data={"grant_type": "client_credentials", "resource": resource,
                                 "scope": scope}, timeout=10)
    response.raise_for_status()
    return response.json()["access_token"]


async def tools_seen(url, token):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                names = sorted(t.name for t in (await session.list_tools()).tools)
                draft = None
                if "purchasing_create_po_draft" not in names:
                    res = await session.call_tool("purchasing_create_po_draft", {
                        "vendor_code": "V-00231", "needed_by": "2030-01-15", "client_ref": "oidc-1",
                        "note": None, "lines": [{"item_code": "BRG-0042", "qty": "1", "uom": "BOX"}]})
                    draft = (res.is_error, res.content[0].text)
                return names, draft


def initialize_status(url, token):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "oidc-check", "version": "1"}}}
    response = httpx2.post(url, json=body, timeout=10, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"})
    return response.status_code, response.headers.get("www-authenticate", "")


async def run(alg, work):
    print(f"\n== {alg}")
    pport, sport = free_port(), free_port()
    issuer, url = f"http://127.0.0.1:{pport}", f"http://127.0.0.1:{sport}/mcp"
    # ES modules resolve packages next to the importing file: run a copy beside node_modules.
    script = os.path.join(os.path.dirname(NODE_MODULES), "provider.mjs")
    shutil.copy(PROVIDER, script)
    provider = subprocess.Popen([NODE, script, "--port", str(pport), "--alg", alg,
                                 "--resource", url], cwd=NODE_MODULES, stdout=subprocess.DEVNULL)
    server = None
    try:
        wait_port(pport, provider, "the identity provider")
        env = dict(os.environ, ERP_TOOLS_ISSUER=issuer, ERP_TOOLS_RESOURCE=url,
                   ERP_TOOLS_KEY_REFRESH_SECS="1", RUST_LOG="warn")
        env.pop("ERP_TOOLS_SIGNING_KEY", None)
        db = f"sqlite://{work}/{alg}.db"
        server = subprocess.Popen([BIN, "--db", db, "serve", "--addr", f"127.0.0.1:{sport}"], env=env)
        wait_port(sport, server, "the distributor")

        token = get_token(issuer, "7", url)
        header, claims = decode(token)
        print(f"[{alg}] token header: {json.dumps(header)}")
        print(f"[{alg}] token claims: {json.dumps(claims)}")
        check(header["alg"] == alg and header.get("kid"), f"{alg}: the provider signs {alg} with a kid")
        check(claims["aud"] == url and claims["iss"] == issuer and claims["sub"] == "7",
              f"{alg}: aud is the MCP resource, sub the ERP user")

        names, _ = await tools_seen(url, token)
        print(f"[{alg}] sub 7 (buyer, SBY-01) tools/list: {names}")
        check(names == ALL_TOOLS, f"{alg}: the buyer sees every tool")
        names, draft = await tools_seen(url, get_token(issuer, "8", url))
        print(f"[{alg}] sub 8 (warehouse, SBY-01) tools/list: {names}; draft call: {draft}")
        check(names == ["inventory_get_stock", "inventory_list_below_reorder"],
              f"{alg}: the warehouse user sees only inventory tools, though the token has purchasing:draft")
        check(draft is not None and draft[0] and "purchasing:draft" in draft[1],
              f"{alg}: the warehouse user's draft call is refused naming the scope")

        meta = httpx2.get(f"http://127.0.0.1:{sport}/.well-known/oauth-protected-resource").json()
        print(f"[{alg}] protected-resource metadata: {json.dumps(meta)}")
        check(meta["authorization_servers"] == [issuer], f"{alg}: the metadata names the provider")

        rotated = httpx2.post(f"{issuer}/__rotate").json()
        print(f"[{alg}] the provider rotated its key: {rotated}")
        time.sleep(1.2)  # the server's key refresh interval (ERP_TOOLS_KEY_REFRESH_SECS=1)
        fresh = get_token(issuer, "9", url)
        check(decode(fresh)[0]["kid"] == rotated["kid"], f"{alg}: the new token names the new kid")
        names, _ = await tools_seen(url, fresh)
        print(f"[{alg}] sub 9 (buyer, JKT-01) with the rotated key: {names}")
        check(names == ALL_TOOLS, f"{alg}: a token signed with the rotated key is accepted without a restart")

        status, challenge = initialize_status(url, get_token(issuer, "7", OTHER_RESOURCE))
        print(f"[{alg}] token for another resource: {status} {challenge}")
        check(status == 401 and f"expected {url}, the token names {OTHER_RESOURCE}" in challenge,
              f"{alg}: a token for another resource is refused naming both")

        dev_env = dict(os.environ, RUST_LOG="off")
        for name in ("ERP_TOOLS_ISSUER", "ERP_TOOLS_SIGNING_KEY"):
            dev_env.pop(name, None)
        dev = subprocess.run([BIN, "--db", db, "--resource", url, "token", "--user", "7",
                              "--branch", "SBY-01", "--scopes", "purchasing:read"],
                             env=dev_env, check=True, capture_output=True, text=True).stdout.strip()
        status, challenge = initialize_status(url, dev)
        print(f"[{alg}] development token: {status} {challenge}")
        check(status == 401 and "HS256" in challenge, f"{alg}: a development token is refused")
        refused = subprocess.run([BIN, "--db", db, "token", "--user", "7", "--branch", "SBY-01",
                                  "--scopes", "purchasing:read"], env=env, capture_output=True, text=True)
        check(refused.returncode != 0 and "ERP_TOOLS_ISSUER is set" in refused.stderr,
              f"{alg}: the token command refuses to mint while a provider is configured")
    finally:
        for proc in (server, provider):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()


async def main():
    work = tempfile.mkdtemp()
    for alg in ("RS256", "ES256"):
        await run(alg, work)


asyncio.run(main())
print(f"\n{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
