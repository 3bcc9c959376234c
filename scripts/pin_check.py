"""Pinning a tool surface with the official Python MCP client (PyPI `mcp`): the guide's
example ("Pinning the tool surface"), run against the example server. A client pinned to
the fingerprint of the committed lock (examples/distributor/tools.lock) connects and
lists the tools; pinned to another fingerprint it refuses the server before any call.

    python3 scripts/pin_check.py target/debug/examples/distributor
"""

import asyncio
import os
import sys
import tempfile

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "otel"))
from mcp_http import Server  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/examples/distributor"
LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "distributor", "tools.lock")

# --- the guide's example (guide/src/surface-lock.md) -------------------------------------------------------------
SURFACE_KEY = "erp-tools/surface"


class SurfaceChanged(Exception):
    pass


async def connect_pinned(url, token, pinned):
    """The server's tools, refusing a server whose tool surface is not `pinned` before
    listing or calling anything."""
    tools = None
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                served = (init.meta or {}).get(SURFACE_KEY)
                if served == pinned:
                    tools = await session.list_tools()
    if served != pinned or (tools.meta or {}).get(SURFACE_KEY) != pinned:
        raise SurfaceChanged(f"tool surface {served}, reviewed {pinned}")
    return [t.name for t in tools.tools]
# --------------------------------------------------------------------------------------


def main():
    with open(LOCK) as f:
        pinned = next(line.split()[1] for line in f if line.startswith("fingerprint "))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(BIN, tmp, {"ERP_TOOLS_RATE_LIMIT": "off"}, "pin")
        try:
            token = server.token("purchasing:read,purchasing:draft,inventory:read")
            names = asyncio.run(connect_pinned(server.url, token, pinned))
            print(f"  pinned to {pinned}: {len(names)} tools listed")
            if "purchasing_create_po_draft" not in names:
                failures.append("the pinned client lists the tools")
            other = "sha256:" + "0" * 64
            try:
                asyncio.run(connect_pinned(server.url, token, other))
                failures.append("a client pinned to another surface refuses the server")
            except SurfaceChanged as refused:
                print(f"  pinned to {other[:19]}...: refused ({refused})")
        finally:
            server.stop()
    print(f"{len(failures)} failed: {failures}" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
