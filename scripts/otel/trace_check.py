"""Traces against a real receiver: the example built with `--features otel` exports to a
loopback OTLP/HTTP receiver (receiver.py, decoding with PyPI opentelemetry-proto), and
this checks that one MCP draft is one trace continuing the caller's `traceparent`
(edge -> call -> admission, draft transaction -> idempotency claim, handler, audit), with
the OpenTelemetry MCP attributes, each of the protobuf value type its convention defines
(`http.response.status_code` an int, ...), without the token or argument values; that
every outcome (ok, replayed, denied, invalid, failed, needs input asked or not, unknown
tool, rate limited) ends its span with the status and `error.type` of the guide's table (guide/src/telemetry.md);
that a `_meta.traceparent` (SEP-414) is continued too; that the agent loop's GenAI spans
carry integer token counts; that the metrics arrive over OTLP; and that with the
collector slow or down no call waits for it.

    python3 scripts/otel/trace_check.py target/debug/examples/distributor [out.json]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import receiver  # noqa: E402
from mcp_http import Server, Session, free_port, traceparent  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/examples/distributor"
OUT = sys.argv[2] if len(sys.argv) > 2 else "target/otel/draft-trace.json"
BUYER = "purchasing:read,purchasing:draft,inventory:read"
DRAFT = {
    "vendor_code": "V-00231", "needed_by": "2030-01-15", "client_ref": "otel-secret-ref-1",
    "note": "Argument value that must not be exported",
    "lines": [{"item_code": "BRG-0042", "qty": "20", "uom": "BOX"}],
}
STRING, INT = "string_value", "int_value"
LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "distributor", "tools.lock")
failures = []


def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        failures.append(what)


def otel_env(endpoint, rate_limit="off"):
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "erp-tools-check",
            "OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_METRIC_EXPORT_INTERVAL": "500",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "2000", "ERP_TOOLS_RATE_LIMIT": rate_limit}


def typed(span, key, kind, value=None):
    """Checks that `span` has attribute `key` of protobuf type `kind` (and `value`)."""
    got, got_kind = span["attributes"].get(key), span["types"].get(key)
    ok = got_kind == kind and (value is None or got == value)
    want = f"{kind} {value!r}" if value is not None else kind
    check(ok, f"{span['name']}: {key} is {want} (got {got_kind} {got!r})")


def wait_for(pred, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def tree(spans, root_parent):
    """The spans as indented lines, children under their parent, by start time."""
    lines = []

    def walk(parent, depth):
        for s in sorted((s for s in spans if s["parent_id"] == parent), key=lambda s: s["start"]):
            took = (s["end"] - s["start"]) / 1e6
            lines.append(f"{'  ' * depth}{s['name']}  ({took:.2f} ms)")
            walk(s["span_id"], depth + 1)

    walk(root_parent, 0)
    return lines


# Every outcome of the guide's table (guide/src/telemetry.md): how the call is made, and
# the span it must end: erp_tools.outcome, error.type (None: no error), the status and
# erp_tools.error.kind.
BIG_ORDER = dict(DRAFT, client_ref="otel-big", lines=[{"item_code": "BRG-0042", "qty": "200", "uom": "BOX"}])
OUTCOMES = [
    ("replayed", "buyer", "purchasing_create_po_draft", DRAFT, None, "replayed", None, "unset", None),
    ("denied", "clerk", "purchasing_create_po_draft", dict(DRAFT, client_ref="otel-2"), None,
     "denied", "tool_error", "error", "denied"),
    ("invalid", "buyer", "inventory_get_stock", {"item_code": "BRG-0042", "warehouse_code": 7}, None,
     "invalid", "tool_error", "error", "invalid_arguments"),
    ("failed", "buyer", "purchasing_create_po_draft", dict(DRAFT, client_ref="otel-3", needed_by="2020-01-01"),
     None, "failed", "tool_error", "error", "rejected"),
    ("needs input, cannot be asked", "buyer", "purchasing_create_po_draft", BIG_ORDER, None,
     "needs_input", "tool_error", "error", "needs_input"),
    ("needs input, asked (input_required)", "stateless", "purchasing_create_po_draft", BIG_ORDER,
     {"elicitation": {"form": {}}}, "needs_input", None, "unset", None),
    ("needs input, elicitation not declared", "stateless", "purchasing_create_po_draft", BIG_ORDER, {},
     "needs_input", "-32021", "error", "needs_input"),
    ("a requestState refused", "forged", "purchasing_create_po_draft", BIG_ORDER, {"elicitation": {"form": {}}},
     "denied", "-32602", "error", "denied"),
    ("unknown tool", "buyer", "purchasing_no_such_tool", {}, None, "denied", "-32602", "error", "unknown_tool"),
]
# An answer with a state the server never sealed.
FORGED = {"requestState": "forged-state", "inputResponses": {"overstock_line_1": {"action": "accept",
          "content": {"answer": "order anyway"}}}}


def outcomes(server, sessions, got):
    """Each outcome's call with a traceparent of its own: its span as the table says."""
    for label, who, tool, arguments, capabilities, outcome, error_type, status, kind in OUTCOMES:
        header, trace_id, _ = traceparent()
        if who in ("stateless", "forged"):
            answer = sessions["stateless"].call_stateless(tool, arguments, capabilities, {"traceparent": header},
                                                          FORGED if who == "forged" else None)
        else:
            answer = sessions[who].call(tool, arguments, {"traceparent": header})
        shape = "error " + str(answer["error"]["code"]) if answer and "error" in answer else (
            "isError" if answer and answer.get("result", {}).get("isError") else "result")
        # An unknown tool's span is named as the metrics label it: the client's name
        # never names a span.
        named = "_unknown" if kind == "unknown_tool" else tool
        prefix = f"tools/call {named}"
        wait_for(lambda: any(s["name"] == prefix for s in got.spans if s["trace_id"] == trace_id))
        with got.lock:
            call = next((s for s in got.spans if s["trace_id"] == trace_id and s["name"] == prefix), None)
        check(call is not None, f"{label}: the call's span arrives ({shape})")
        if call is None:
            continue
        a = call["attributes"]
        typed(call, "gen_ai.tool.name", STRING, named)
        typed(call, "erp_tools.outcome", STRING, outcome)
        check(call["status"] == status, f"{label}: status {status} (got {call['status']}, answered {shape})")
        if error_type is None:
            check("error.type" not in a, f"{label}: no error.type (got {a.get('error.type')!r})")
        else:
            typed(call, "error.type", STRING, error_type)
            typed(call, "erp_tools.error.kind", STRING, kind)
            check(call["status_message"] == kind, f"{label}: status message {kind!r} (got {call['status_message']!r})")
            if error_type.startswith("-"):
                typed(call, "rpc.response.status_code", STRING, error_type)
                check(shape == "error " + error_type, f"{label}: answered with JSON-RPC error {error_type} ({shape})")
            else:
                check(shape == "isError", f"{label}: answered with isError: true ({shape})")


def rate_limited(server, got):
    """A caller over its burst: the refused request's `POST /mcp` span says 429 (an int)
    and `rate_limited`, status unset (a 4xx is the client's, per the HTTP conventions)."""
    hasty = Session(server.url, server.token("inventory:read", user="9")).open()
    traces = []
    for _ in range(40):
        header, trace_id, _ = traceparent()
        status, _ = hasty.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "inventory_get_stock", "arguments": {"item_code": "BRG-0042", "warehouse_code": None}}},
            {"traceparent": header})
        if status == 429:
            traces.append(trace_id)
    check(bool(traces), f"a burst over the limit is refused 429 ({len(traces)} of 40)")
    if not traces:
        return
    wait_for(lambda: any(s["trace_id"] == traces[0] for s in got.spans))
    with got.lock:
        spans = [s for s in got.spans if s["trace_id"] == traces[0]]
    edge = next((s for s in spans if s["name"] == "POST /mcp"), None)
    check(edge is not None, "rate limited: the request's span arrives")
    if edge is None:
        return
    typed(edge, "http.response.status_code", INT, 429)
    typed(edge, "erp_tools.outcome", STRING, "rate_limited")
    check(edge["status"] == "unset" and "error.type" not in edge["attributes"],
          f"rate limited: status unset, no error.type (got {edge['status']})")
    check(not any(s["name"].startswith("tools/call") for s in spans), "rate limited: no call span (it never ran)")


def agent_loop(server, got):
    """The example's agent (a scripted model) run once: its `invoke_agent` span and GenAI
    `chat` spans, token counts as ints."""
    subprocess.run([BIN, "agent"], env=server.env, check=True, capture_output=True, timeout=120)
    wait_for(lambda: any(s["name"] == "invoke_agent erp-tools" for s in got.spans), 15)
    with got.lock:
        runs = [s for s in got.spans if s["name"] == "invoke_agent erp-tools"]
        turns = [s for s in got.spans if s["name"].startswith("chat ")]
    check(bool(runs), "the agent run's invoke_agent span arrives")
    check(bool(turns), f"its chat spans arrive ({len(turns)})")
    if not runs or not turns:
        return
    run = runs[-1]
    typed(run, "gen_ai.operation.name", STRING, "invoke_agent")
    typed(run, "erp_tools.run.status", STRING, "awaiting_approval")
    check(run["status"] == "unset", f"a run waiting for approval is not an error (got {run['status']})")
    turn = next((t for t in turns if t["trace_id"] == run["trace_id"]), turns[-1])
    typed(turn, "gen_ai.operation.name", STRING, "chat")
    typed(turn, "gen_ai.request.model", STRING)
    typed(turn, "gen_ai.usage.input_tokens", INT)
    typed(turn, "gen_ai.usage.output_tokens", INT)
    check(turn["status"] == "unset", f"a model call that answered is not an error (got {turn['status']})")


def traced(tmp):
    server_http, got = receiver.serve()
    endpoint = f"http://127.0.0.1:{server_http.server_address[1]}"
    # Bursts of 20 per caller (10 a second after): the buyer fits, a burst of 40 does not.
    server = Server(BIN, tmp, otel_env(endpoint, "600,20"), "traced")
    try:
        token = server.token(BUYER)
        session = Session(server.url, token).open()
        header, trace_id, caller_span = traceparent()
        answer = session.call("purchasing_create_po_draft", DRAFT, {"traceparent": header})
        check(answer and answer["result"].get("isError") is False, "the draft succeeds")
        meta_tp, meta_trace, meta_span = traceparent()
        read = session.call("inventory_get_stock", {"item_code": "BRG-0042", "warehouse_code": None},
                            meta={"traceparent": meta_tp})
        check(read and read["result"].get("isError") is False, "the read succeeds")

        def spans_of(trace):
            with got.lock:
                return [s for s in got.spans if s["trace_id"] == trace]

        names = {"POST /mcp", "tools/call purchasing_create_po_draft", "erp_tools.admission",
                 "erp_tools.draft_transaction", "erp_tools.idempotency_claim",
                 "erp_tools.handler", "erp_tools.audit_durable"}
        wait_for(lambda: names <= {s["name"] for s in spans_of(trace_id)})
        wait_for(lambda: any(s["name"].startswith("tools/call inventory") for s in spans_of(meta_trace)))
        wait_for(lambda: "mcp.server.operation.duration" in got.metric_names, 10)
        spans = spans_of(trace_id)
        by_name = {}
        for s in spans:
            by_name.setdefault(s["name"], s)
        check(names <= set(by_name), f"one trace holds the draft's spans: {sorted(by_name)}")
        if not names <= set(by_name):
            return None
        edge, call = by_name["POST /mcp"], by_name["tools/call purchasing_create_po_draft"]
        tx = by_name["erp_tools.draft_transaction"]
        check(edge["parent_id"] == caller_span, "the edge span's parent is the caller's traceparent")
        check(call["parent_id"] == edge["span_id"], "the call span is the edge span's child")
        check(by_name["erp_tools.admission"]["parent_id"] == call["span_id"], "admission is the call's child")
        check(tx["parent_id"] == call["span_id"], "the draft transaction is the call's child")
        for child in ("erp_tools.idempotency_claim", "erp_tools.handler"):
            check(by_name[child]["parent_id"] == tx["span_id"], f"{child} is inside the transaction")
        check(any(s["name"] == "erp_tools.audit_durable" and s["parent_id"] in (tx["span_id"], call["span_id"])
                  for s in spans), "the wait for the audit row is in the call")
        check(call["service"] == "erp-tools-check", "service.name comes from OTEL_SERVICE_NAME")
        # Every attribute read, with the protobuf value type its convention defines.
        typed(edge, "http.request.method", STRING, "POST")
        typed(edge, "url.path", STRING, "/mcp")
        typed(edge, "http.response.status_code", INT, 200)
        check(edge["status"] == "unset", f"a 200 answer leaves the request's status unset (got {edge['status']})")
        expected = {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "purchasing_create_po_draft", "mcp.protocol.version": "2025-11-25",
                    "erp_tools.tier": "draft", "erp_tools.outcome": "ok", "enduser.id": "7",
                    "mcp.session.id": session.session}
        for key, value in expected.items():
            typed(call, key, STRING, value)
        for key in ("jsonrpc.request.id", "gen_ai.tool.call.id", "erp_tools.run_id", "erp_tools.branch"):
            typed(call, key, STRING)
        check(call["attributes"].get("jsonrpc.request.id") not in (None, ""), "jsonrpc.request.id is set")
        check(str(call["attributes"].get("erp_tools.run_id", "")).startswith("user-"),
              "erp_tools.run_id is the caller's scope")
        check("error.type" not in call["attributes"] and call["status"] == "unset",
              f"a successful call: no error.type, status unset (got {call['status']})")
        meta_spans = spans_of(meta_trace)
        read_call = next((s for s in meta_spans if s["name"] == "tools/call inventory_get_stock"), None)
        check(read_call is not None and read_call["parent_id"] == meta_span,
              "a _meta traceparent (SEP-414) is the read call's parent")

        print("  outcomes: span status and error.type")
        sessions = {"buyer": session, "clerk": Session(server.url, server.token("inventory:read")).open(),
                    "stateless": Session(server.url, token)}
        outcomes(server, sessions, got)
        rate_limited(server, got)
        print("  the agent loop's GenAI spans")
        agent_loop(server, got)

        with got.lock:
            raw = b"".join(got.raw_bodies)
        check(token.encode() not in raw and token.split(".")[2].encode() not in raw,
              "no token (nor its signature) in any exported span")
        for secret in (b"otel-secret-ref-1", b"must not be exported", b"V-00231", b"BRG-0042", b"2020-01-01"):
            check(secret not in raw, f"argument value {secret.decode()!r} is not exported")
        check("mcp.server.operation.duration" in got.metric_names and "erp_tools.calls" in got.metric_names,
              f"metrics arrive over OTLP: {sorted(got.metric_names)}")
        with open(LOCK) as lock_file:
            pinned = next(line.split()[1] for line in lock_file if line.startswith("fingerprint "))
        with got.lock:
            surfaces = got.gauge_points.get("erp_tools.surface", [])
        check(surfaces == [{"erp_tools.surface.fingerprint": (pinned, STRING)}],
              f"the erp_tools.surface gauge names the lock's fingerprint as a string: {surfaces}")
        print("\n  the draft's trace as the receiver decoded it:")
        for line in tree(spans, caller_span):
            print("    " + line)
        return {"caller_span": caller_span, "spans": sorted(spans, key=lambda s: s["start"])}
    finally:
        server.stop()
        server_http.shutdown()


def read_latencies(session, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        session.call("inventory_get_stock", {"item_code": "BRG-0042", "warehouse_code": None})
        times.append(time.perf_counter() - t)
    return times


def collector_down(tmp):
    """Calls with the collector down (nothing listens) and slow (5 s per export) take as
    long as with a live one: the export never sits on a call."""
    live_http, _ = receiver.serve()
    slow_http, _ = receiver.serve(delay=5.0)
    results = {}
    for label, endpoint in (("live", f"http://127.0.0.1:{live_http.server_address[1]}"),
                            ("down", f"http://127.0.0.1:{free_port()}"),
                            ("slow", f"http://127.0.0.1:{slow_http.server_address[1]}")):
        server = Server(BIN, tmp, otel_env(endpoint), f"fault-{label}")
        try:
            session = Session(server.url, server.token(BUYER)).open()
            read_latencies(session, 5)
            times = read_latencies(session, 60)  # 6 s of export rounds at 100 ms
            results[label] = (statistics.median(times), max(times))
        finally:
            server.stop()
    live_http.shutdown()
    slow_http.shutdown()
    for label, (median, worst) in results.items():
        print(f"  {label:5} collector: median {median * 1e3:.2f} ms, worst {worst * 1e3:.2f} ms")
    live = results["live"][0]
    for label in ("down", "slow"):
        median, worst = results[label]
        check(worst < 1.0, f"collector {label}: no call waited for it (worst {worst * 1e3:.1f} ms < 1 s)")
        check(median < max(3 * live, live + 0.02), f"collector {label}: median within reach of the live one")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        print("traces: one MCP draft, one trace")
        trace = traced(tmp)
        print("collector down or slow")
        collector_down(tmp)
    if trace:
        os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
        with open(OUT, "w") as f:
            json.dump(trace, f, indent=1)
    print(f"{len(failures)} failed" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
