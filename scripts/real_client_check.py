#!/usr/bin/env python3
"""Drive the distributor example with the official Python MCP client (PyPI `mcp`).

Usage: python3 scripts/real_client_check.py [path/to/distributor-binary]

Starts the example on a fresh SQLite file, then, as a buyer and as a warehouse user,
over streamable HTTP and over stdio: lists tools, calls the draft tool, repeats it, and
sends a unit the item is not stocked in, walks every page of the vendor list (seeded
with `distributor seed`) and sends an altered cursor. Then the retries that must replay across
reconnects (issue 15): a draft resent in a new session, after the server process was
killed (`kill -9`) and restarted on the same SQLite file, and from a new stdio process,
must come back with the same number and `replayed: true`, with exactly one document; and
another user's request on the buyer's MCP session must get 404. The buyer prints a
purchase order: the PDF comes with the result and again from `resources/read`; another
user reading it is told no such resource exists. Prints what the client saw and exits
non-zero when the server does not behave as documented.
"""
import asyncio
import base64
import json
import logging
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, failures, free_port  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/examples/distributor"
BUYER = "purchasing:read,purchasing:draft,inventory:read"
WAREHOUSE = "inventory:read"


class Warnings(logging.Handler):
    """Collects what the client logs at WARNING and above (e.g. a failed session DELETE)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


client_warnings = Warnings()
logging.getLogger().addHandler(client_warnings)


def token(env, scopes, user="7", branch="SBY-01"):
    out = subprocess.run(
        [BIN, "token", "--user", user, "--branch", branch, "--scopes", scopes],
        env=env, check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


DRAFT = {
    "vendor_code": "V-00231",
    "needed_by": "2030-01-15",
    "client_ref": "py-1",
    "note": "Below reorder point",
    "lines": [{"item_code": "BRG-0042", "qty": "20", "uom": "BOX"},
              {"item_code": "BRG-0315", "qty": "2", "uom": "BOX"}],
}


def readable(text):
    """A result the model reads as text: not a JSON dump, no internal ids."""
    return not text.lstrip().startswith("{") and "po_id" not in text and '"' not in text[:1]


async def texts(session, label):
    """Every read tool of the example answers in sentences (ModelText), not JSON."""
    expect = {
        "purchasing_search_vendors": ({"query": "plastik", "item_code": None},
                                      ["items 1 to 1; the last page",
                                       "V-00231 PT Sinar Plastik (Surabaya, NET 30)"]),
        "purchasing_get_item_summary": ({"item_code": "BRG-0042"},
                                        ["BRG-0042 Plastic container 500 ml",
                                         "SBY-WH1 180 PCS (reorder at 480, below reorder point)",
                                         "V-00231 42 000.00 IDR/BOX on PO-2026-0038"]),
        "purchasing_get_vendor_summary": ({"vendor_code": "V-00231"},
                                          ["Vendor V-00231 PT Sinar Plastik", "BRG-0042 per BOX 42 000.00 IDR",
                                           "not an instruction"]),
        "purchasing_search_pos": ({"status": None, "vendor_code": None, "needed_before": None},
                                  ["PO-2026-0040 with V-00458, submitted, needed by 2026-12-05, total 1 224 000.00 IDR"]),
        "purchasing_get_po": ({"number": "PO-2026-0040"},
                              ["Purchase order PO-2026-0040 (submitted) in branch SBY-01 for V-00458 CV Maju Kemasan",
                               "1 line, total 1 224 000.00 IDR", "1. BRG-0107 6 BOX at 204 000.00 = 1 224 000.00 IDR"]),
        "inventory_get_stock": ({"item_code": "BRG-0042", "warehouse_code": None},
                                ["BRG-0042 Plastic container 500 ml, ordered in BOX, PCS (1 BOX = 24 PCS)",
                                 "SBY-WH1: 180 PCS on hand, reorder point 480, below the reorder point"]),
        "inventory_list_below_reorder": ({}, ["inventory_list_below_reorder: items 1 to 2; the last page.",
                                              "BRG-0042 Plastic container 500 ml in SBY-WH1: 180 of 480 PCS, short 300 PCS"]),
    }
    for tool, (args, parts) in expect.items():
        res = await session.call_tool(tool, args)
        text = res.content[0].text
        print(f"[{label}] {tool}: {text}")
        check(not res.is_error and readable(text) and all(p in text for p in parts),
              f"{label} {tool} answers in text with business numbers")
        check(res.structured_content is not None, f"{label} {tool} keeps structuredContent")


PRINTED = "erp://purchasing/purchase-orders/PO-2026-0040.pdf"


def pdf_of(blob):
    """The PDF bytes of a base64 blob, checked as a PDF holding the order's line."""
    pdf = base64.b64decode(blob)
    check(pdf.startswith(b"%PDF-1.") and pdf.rstrip().endswith(b"%%EOF") and b"startxref" in pdf,
          "the document is a PDF")
    check(b"(PO-2026-0040)" in pdf and b"(BRG-0107)" in pdf and b"(1 224 000.00)" in pdf,
          "the PDF holds the order's number, its line and its total")
    return pdf


async def printing(session, label):
    """The order as a printable PDF: a short text, the PDF embedded, the same bytes again
    from resources/read."""
    res = await session.call_tool("purchasing_print_po", {"number": "PO-2026-0040"})
    text = res.content[0].text
    print(f"[{label}] purchasing_print_po: {text}")
    check(not res.is_error and readable(text) and text.startswith("Purchase order PO-2026-0040 (submitted)")
          and "printable PDF" in text, f"{label} the print tool answers with a short text")
    embedded = res.content[1]
    check(embedded.type == "resource" and embedded.resource.mime_type == "application/pdf"
          and str(embedded.resource.uri) == PRINTED, f"{label} the PDF is embedded in the result")
    pdf = pdf_of(embedded.resource.blob)
    read = await session.read_resource(PRINTED)
    print(f"[{label}] resources/read {PRINTED}: {read.contents[0].mime_type}, "
          f"{len(base64.b64decode(read.contents[0].blob))} bytes")
    check(base64.b64decode(read.contents[0].blob) == pdf, f"{label} resources/read gives the same PDF")


async def document_only_for_its_caller(url, env):
    """Another user, and the buyer's user id in another branch, cannot read the PDF."""
    for user, branch in (("8", "SBY-01"), ("7", "JKT-01")):
        tok = token(env, BUYER, user=user, branch=branch)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tok}"}, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    try:
                        await session.read_resource(PRINTED)
                        refused = None
                    except MCPError as exc:
                        refused = exc
                    print(f"[http] user {user} of {branch} reads the buyer's PDF: {refused!r}")
                    check(refused is not None and "no resource" in str(refused),
                          f"user {user} of {branch} is told no such resource exists")


SEEDED_VENDORS = 250


async def pages(session, tools, label):
    """Walks every page of the vendor list (the example's 3 vendors plus the seeded ones):
    each vendor once, in code order; a changed cursor is refused with what to do."""
    listed = next(t for t in tools if t.name == "purchasing_search_vendors")
    props = listed.input_schema["properties"]
    check("cursor" in props and "page_size" in props and "next_cursor" in listed.output_schema["properties"],
          f"{label} the page tool declares cursor, page_size and next_cursor")
    codes, cursor, n = [], None, 0
    while True:
        res = await session.call_tool("purchasing_search_vendors",
                                      {"query": None, "item_code": None, "page_size": 100, "cursor": cursor})
        s = res.structured_content
        n += 1
        if n == 1 or s["next_cursor"] is None:
            print(f"[{label}] page {n} as the model reads it:\n{res.content[0].text[:400]}\n...\n"
                  f"{res.content[0].text[-300:]}")
        check(not res.is_error and s["has_more"] == (s["next_cursor"] is not None), f"{label} page {n} answered")
        codes += [v["code"] for v in s["items"]]
        if n == 1:
            first_cursor = s["next_cursor"]
            check(f'cursor "{first_cursor}"' in res.content[0].text, f"{label} the text says how to continue")
        cursor = s["next_cursor"]
        if cursor is None:
            check("the last page" in res.content[0].text, f"{label} the last page says so")
            break
    check(len(codes) == SEEDED_VENDORS + 3 and len(set(codes)) == len(codes) and codes == sorted(codes),
          f"{label} walking every page returns each vendor once, in order ({len(codes)} in {n} pages)")
    altered = first_cursor[:-3] + ("AAA" if not first_cursor.endswith("AAA") else "BBB")
    res = await session.call_tool("purchasing_search_vendors",
                                  {"query": None, "item_code": None, "page_size": 100, "cursor": altered})
    text = res.content[0].text
    print(f"[{label}] altered cursor: isError={res.is_error} text={text!r}")
    check(res.is_error and "The cursor was not accepted" in text and "cursor null" in text,
          f"{label} an altered cursor is refused with what to do")
    res = await session.call_tool("purchasing_search_vendors",
                                  {"query": "vendor", "item_code": None, "cursor": first_cursor})
    check(res.is_error and "other argument values" in res.content[0].text,
          f"{label} a cursor sent with other filters is refused")


async def exercise(session, role, label):
    listed = await session.list_tools()
    names = [t.name for t in listed.tools]
    print(f"[{label}] {role} tools/list: {names}")
    again = [t.name for t in (await session.list_tools()).tools]
    check(names == again, f"{label} {role}: list stable across calls")
    if role == "buyer":
        check("purchasing_create_po_draft" in names, f"{label} buyer sees the draft tool")
        draft = next(t for t in listed.tools if t.name == "purchasing_create_po_draft")
        check(draft.annotations.read_only_hint is False and draft.annotations.idempotent_hint is True
              and draft.annotations.destructive_hint is False and draft.annotations.open_world_hint is False,
              f"{label} draft annotations")
        await texts(session, label)
        await printing(session, label)
        await pages(session, listed.tools, label)
        first = await session.call_tool("purchasing_create_po_draft", DRAFT)
        second = await session.call_tool("purchasing_create_po_draft", DRAFT)
        s1, s2 = first.structured_content, second.structured_content
        t1, t2 = first.content[0].text, second.content[0].text
        print(f"[{label}] draft text: {t1}")
        print(f"[{label}] retry text: {t2}")
        check(t1.startswith(f"Draft {s1['number']} for V-00231 (PT Sinar Plastik), 2 lines, total 1 140 000.00 IDR")
              and "not sent to the vendor" in t1 and readable(t1), f"{label} draft text reads as a sentence")
        check(isinstance(s1.get("po_id"), int), f"{label} the internal id stays in structuredContent")
        check(t2.startswith(f"Returned the existing draft purchase order {s1['number']}")
              and t2.endswith(t1), f"{label} the replay says so, then reads as the original")
        print(f"[{label}] first call: number={s1.get('number')} replayed={s1.get('replayed')}")
        print(f"[{label}] retry:      number={s2.get('number')} replayed={s2.get('replayed')}")
        check(not first.is_error and s1["replayed"] is False, f"{label} draft created")
        check(s2["replayed"] is True and s2["number"] == s1["number"], f"{label} retry replayed")
        bad = dict(DRAFT, client_ref="py-2", lines=[{"item_code": "BRG-0042", "qty": "10", "uom": "KG"}])
        res = await session.call_tool("purchasing_create_po_draft", bad)
        text = res.content[0].text
        print(f"[{label}] KG line: isError={res.is_error} text={text!r}")
        check(res.is_error and "No draft was created." in text and "1 BOX = 24 PCS" in text,
              f"{label} unit error is actionable")
        check(res.structured_content is None,
              f"{label} error result carries no structuredContent (clients check it against outputSchema)")
    else:
        check(names == ["inventory_get_stock", "inventory_list_below_reorder"],
              f"{label} warehouse sees only inventory tools")
        res = await session.call_tool("purchasing_create_po_draft", DRAFT)
        text = res.content[0].text
        print(f"[{label}] warehouse draft call: isError={res.is_error} text={text!r}")
        check(res.is_error and "purchasing:draft" in text, f"{label} warehouse call refused naming the scope")


async def over_http(env, url):
    for role, scopes in (("buyer", BUYER), ("warehouse", WAREHOUSE)):
        tok = token(env, scopes)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tok}"}, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    init = await session.initialize()
                    print(f"[http] negotiated protocol {init.protocol_version}")
                    await exercise(session, role, "http")
    await document_only_for_its_caller(url, env)
    check(not any("Session termination failed" in m for m in client_warnings.messages),
          f"http: clean disconnects log no error (client warnings: {client_warnings.messages})")


RESTART_NOTE = "issue 15: resent after a reconnect and a restart"
RESENT = dict(DRAFT, client_ref="py-restart-1", note=RESTART_NOTE)


def documents_with_note(db_path, note):
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT number FROM purchase_orders WHERE note = ?", (note,)).fetchall()


async def draft_in_new_session(url, tok, args, label):
    """Opens a new MCP session, sends the draft once, closes the session."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tok}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                res = await session.call_tool("purchasing_create_po_draft", args)
                s = res.structured_content or {}
                print(f"[{label}] number={s.get('number')} replayed={s.get('replayed')} "
                      f"isError={res.is_error}")
                return s.get("number"), s.get("replayed")


def start_server(env, port):
    server = subprocess.Popen([BIN, "serve", "--addr", f"127.0.0.1:{port}"], env=env)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


async def session_belongs_to_its_opener(url, env):
    """Another user's request on the buyer's session is answered as for an unknown one."""
    sessions = []
    hooks = {"response": [lambda r: _remember(r, sessions)]}
    buyer, other = token(env, BUYER), token(env, BUYER, user="8")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {buyer}"}, timeout=30,
                                  event_hooks=hooks) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                sid = sessions[0]
                body = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
                headers = {"Authorization": f"Bearer {other}", "Mcp-Session-Id": sid,
                           "Mcp-Protocol-Version": "2025-11-25",
                           "Content-Type": "application/json",
                           "Accept": "application/json, text/event-stream"}
                async with httpx2.AsyncClient(timeout=30) as raw:
                    stolen = await raw.post(url, json=body, headers=headers)
                    ended = await raw.delete(url, headers=headers)
                print(f"[session] other user on the buyer's session: POST {stolen.status_code}, "
                      f"DELETE {ended.status_code}")
                check(stolen.status_code == 404 and ended.status_code == 404,
                      "another user's POST and DELETE on a session get 404")
                try:
                    alive = len((await session.list_tools()).tools) > 0
                except Exception as exc:  # the session was ended by the other user
                    print(f"[session] the buyer's session after that: {exc}")
                    alive = False
                check(alive, "the buyer's session still works after that")


async def _remember(response, sessions):
    sid = response.headers.get("mcp-session-id")
    if sid:
        sessions.append(sid)


async def reconnect_and_restart(env, port, db_path):
    """The same draft from a new session, then after kill -9 and a restart: one document."""
    url = f"http://127.0.0.1:{port}/mcp"
    server = start_server(env, port)
    try:
        tok = token(env, BUYER)
        n1, r1 = await draft_in_new_session(url, tok, RESENT, "restart: first session")
        check(n1 is not None and r1 is False, "restart: first draft created")
        n2, r2 = await draft_in_new_session(url, tok, RESENT, "restart: new session")
        check(n2 == n1 and r2 is True, "restart: resent in a new session replays")
        try:
            await session_belongs_to_its_opener(url, env)
        except Exception as exc:
            check(False, f"session check ran to the end ({exc!r})")
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
    print("[restart] server killed with SIGKILL; starting it again on the same file")
    server = start_server(env, port)
    try:
        tok = token(env, BUYER)  # a new token, as after a refresh
        n3, r3 = await draft_in_new_session(url, tok, RESENT, "restart: after restart")
        check(n3 == n1 and r3 is True, "restart: resent after kill -9 and restart replays")
    finally:
        server.terminate()
        server.wait(timeout=10)
    docs = documents_with_note(db_path, RESTART_NOTE)
    print(f"[restart] documents with the note: {[d[0] for d in docs]}")
    check(len(docs) == 1, "restart: exactly one document")


async def stdio_restart(env, db_path):
    """Two stdio processes (a client restarting its server), one token: one document."""
    e = dict(env, ERP_TOOLS_TOKEN=token(env, BUYER))
    args = dict(DRAFT, client_ref="py-stdio-restart", note="issue 15: stdio restart")
    seen = []
    for attempt in (1, 2):
        params = StdioServerParameters(command=BIN, args=["serve", "--stdio"], env=e)
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                res = await session.call_tool("purchasing_create_po_draft", args)
                s = res.structured_content or {}
                print(f"[stdio restart] process {attempt}: number={s.get('number')} "
                      f"replayed={s.get('replayed')}")
                seen.append((s.get("number"), s.get("replayed")))
    check(seen[0][1] is False and seen[1] == (seen[0][0], True),
          "stdio: resent from a new server process replays")
    check(len(documents_with_note(db_path, "issue 15: stdio restart")) == 1,
          "stdio: exactly one document")


async def over_stdio(env):
    for role, scopes in (("buyer", BUYER), ("warehouse", WAREHOUSE)):
        e = dict(env, ERP_TOOLS_TOKEN=token(env, scopes))
        params = StdioServerParameters(command=BIN, args=["serve", "--stdio"], env=e)
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as session:
                init = await session.initialize()
                print(f"[stdio] negotiated protocol {init.protocol_version}")
                await exercise(session, role, "stdio")


async def main():
    tmp = tempfile.mkdtemp()
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    env = dict(os.environ, ERP_TOOLS_DB=f"sqlite://{tmp}/distributor.db",
               ERP_TOOLS_RESOURCE=resource, RUST_LOG="warn")
    # A longer vendor list to page through (both databases the checks below serve).
    for db in ("distributor.db", "stdio.db"):
        subprocess.run([BIN, "seed", "--vendors", str(SEEDED_VENDORS), "--items", "0", "--orders", "0",
                        "--order-lines", "0"], env=dict(env, ERP_TOOLS_DB=f"sqlite://{tmp}/{db}"), check=True)
    server = subprocess.Popen([BIN, "serve", "--addr", f"127.0.0.1:{port}"], env=env)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        await over_http(env, resource)
        await over_stdio(dict(env, ERP_TOOLS_DB=f"sqlite://{tmp}/stdio.db"))
    finally:
        server.terminate()
        server.wait(timeout=10)
    port = free_port()
    restart_env = dict(env, ERP_TOOLS_DB=f"sqlite://{tmp}/restart.db",
                       ERP_TOOLS_RESOURCE=f"http://127.0.0.1:{port}/mcp")
    await reconnect_and_restart(restart_env, port, f"{tmp}/restart.db")
    await stdio_restart(dict(env, ERP_TOOLS_DB=f"sqlite://{tmp}/stdio.db"), f"{tmp}/stdio.db")
    print(f"\n{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


asyncio.run(main())
