"""Drives the guide's remote-draft server (built by scripts/fresh_crate_check.sh from the
guide alone, guide/src/drafts.md) against the REST ERP fixture (tests/src/rest_erp.rs, which names documents
with strings) with the official Python MCP client over streamable HTTP: the read tool, a
draft and its replay, a 502 after the ERP committed and its resend (one order), the ERP's
refusals quoted, a held answer and a kill -9 of the server with the key pending, then the
restart (listening at once, /readyz reporting the reconcile) and the resend, and the ERP
down for a read. Every server listens on 127.0.0.1.

Usage: fresh_remote_check.py <server binary> <rest_erp fixture binary>
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, failures, free_port  # noqa: E402

server_bin, fixture_bin = (os.path.abspath(p) for p in sys.argv[1:3])
work = tempfile.mkdtemp()


fixture = subprocess.Popen([fixture_bin], stdout=subprocess.PIPE, text=True)
erp_url = fixture.stdout.readline().strip()
port = free_port()
env = dict(os.environ, MY_ERP_URL=erp_url, MY_ERP_KEYS="buyer=key-buyer,clerk=key-clerk",
           MY_ADDR=f"127.0.0.1:{port}", ERP_TOOLS_REMOTE_TIMEOUT_MS="1000")
url = f"http://127.0.0.1:{port}/mcp"


def token(person):
    return subprocess.run([server_bin, "token", person], env=env, check=True, capture_output=True,
                          text=True, cwd=work).stdout.strip()


def serve():
    """Starts the server; returns it and the seconds it took to accept connections."""
    started = time.monotonic()
    proc = subprocess.Popen([server_bin], env=env, cwd=work, stderr=subprocess.DEVNULL)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, time.monotonic() - started
        except OSError:
            if proc.poll() is not None or time.monotonic() - started > 60:
                sys.exit(f"the server did not start (exit {proc.poll()})")
            time.sleep(0.02)


def erp(path, method="GET"):
    request = urllib.request.Request(erp_url + path, method=method)
    with urllib.request.urlopen(request, timeout=10) as r:
        body = r.read()
        return json.loads(body) if body else None


def readyz():
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as r:
        return r.status, json.loads(r.read())


async def calls(person, steps):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token(person)}"},
                                  timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                await steps(session)


def draft(ref, supplier="SUP-0001"):
    return {"supplier": supplier, "client_ref": ref,
            "lines": [{"item_code": "BRG-0042", "qty": "2"}]}


async def buyer(session):
    names = sorted(t.name for t in (await session.list_tools()).tools)
    check(names == ["purchasing_draft_purchase_order", "purchasing_list_suppliers"],
          f"both tools listed: {names}")
    listed = await session.call_tool("purchasing_list_suppliers", {})
    ids = [s["id"] for s in listed.structured_content["suppliers"]]
    check(not listed.is_error and ids == ["SUP-0001", "SUP-0002"], f"the read: {ids}")
    first = await session.call_tool("purchasing_draft_purchase_order", draft("po-1"))
    check(not first.is_error and first.structured_content["name"] == "PUR-ORD-2026-00001",
          f"a draft is named by the ERP: {first.content[0].text}")
    again = await session.call_tool("purchasing_draft_purchase_order", draft("po-1"))
    check(again.structured_content.get("replayed") is True
          and again.structured_content["name"] == "PUR-ORD-2026-00001", "the retry is replayed")
    erp("/_fixture/arm?fault=no-result", "POST")
    lost = await session.call_tool("purchasing_draft_purchase_order", draft("po-2"))
    text = lost.content[0].text
    print(f"    a 502 after the commit: {text}")
    check(lost.is_error and text.startswith("MyERP answered the draft with status 502 and no result")
          and "Nothing is confirmed" in text, "a 502 is an answer without a result")
    resent = await session.call_tool("purchasing_draft_purchase_order", draft("po-2"))
    check(not resent.is_error and resent.structured_content["name"] == "PUR-ORD-2026-00002",
          "the resend finds the order by its marker")
    invalid = await session.call_tool("purchasing_draft_purchase_order", draft("po-3", "SUP-9"))
    text = invalid.content[0].text
    print(f"    refused: {text}")
    check(invalid.is_error and "refused the draft as invalid (status 417)" in text
          and '"Could not find Supplier: SUP-9"' in text, "a refusal quotes the ERP")
    erp("/_fixture/arm?fault=hold", "POST")
    held = await session.call_tool("purchasing_draft_purchase_order", draft("po-4"))
    text = held.content[0].text
    print(f"    held past the timeout: {text}")
    check(held.is_error and text.startswith("MyERP did not answer the draft in time"),
          "a held answer is a timeout")


async def clerk(session):
    denied = await session.call_tool("purchasing_draft_purchase_order", draft("c-1"))
    text = denied.content[0].text
    check(denied.is_error and "permission" in text and "Insufficient Permission" in text,
          f"the ERP's access refusal: {text}")


async def after_restart(session):
    resent = await session.call_tool("purchasing_draft_purchase_order", draft("po-4"))
    for _ in range(20):
        if not resent.is_error:
            break
        await asyncio.sleep(0.5)
        resent = await session.call_tool("purchasing_draft_purchase_order", draft("po-4"))
    check(not resent.is_error and resent.structured_content["name"] == "PUR-ORD-2026-00003",
          "after the kill, the resend gets the held order, once")


async def erp_down(session):
    read = await session.call_tool("purchasing_list_suppliers", {})
    text = read.content[0].text
    print(f"    the ERP down: {text}")
    check(read.is_error and text.startswith("MyERP could not be reached: the read was not sent."),
          "a read with the ERP down says it was not sent")


try:
    server, _ = serve()
    asyncio.run(calls("buyer", buyer))
    asyncio.run(calls("clerk", clerk))
    time.sleep(3)  # the held answer arrives; the key stays pending
    server.kill()
    server.wait()
    server, listening = serve()
    status, body = readyz()
    print(f"    restarted after the kill: listening after {listening * 1000:.0f} ms; /readyz {status} {body}")
    check(status == 200 and "remote_drafts" in body, "/readyz reports the start-up reconcile")
    asyncio.run(calls("buyer", after_restart))
    orders = erp("/_fixture/orders")["data"]
    names = [o["name"] for o in orders]
    check(len(orders) == 3 and len(set(o["erp_tools_marker"] for o in orders)) == 3,
          f"one order per client_ref: {names}")
    fixture.kill()
    fixture.wait()
    asyncio.run(calls("buyer", erp_down))
    server.kill()
    server.wait()
finally:
    fixture.kill()

print(f"\n{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
